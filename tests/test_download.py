"""Downloads against a local HTTP server (127.0.0.1, in a thread): gluon.utils.download (SHA-1
checks, retries, dropped connections, overwrite, concurrent processes), the model zoo's
``pretrained=True`` and the vision datasets, fetched from the server through MXNET_GLUON_REPO.
Nothing is written outside ``tmp_path``."""
import gzip
import hashlib
import io
import multiprocessing
import os
import struct
import subprocess
import sys
import tarfile
import threading
import zipfile

import numpy as np
import pytest
import requests

import hybridlib as mx
from hybridlib import nd
from hybridlib.base import data_dir, data_dir_default
from hybridlib.gluon import utils
from hybridlib.gluon.data import vision
from hybridlib.gluon.model_zoo import model_store
from hybridlib.gluon.model_zoo import vision as zoo
from local_http import serve, server  # noqa: F401  (a fixture)


def sha1(data):
    return hashlib.sha1(data).hexdigest()


# -- routes of the server (tests/local_http.py) -----------------------------------------------

def drop(body):
    """A route that announces ``body`` but closes the connection halfway through it."""
    def route(handler):
        handler.send_response(200)
        handler.send_header('Content-Length', str(len(body)))
        handler.end_headers()
        handler.wfile.write(body[:len(body) // 2])
        handler.wfile.flush()
        handler.close_connection = True
    return route


def flaky(body, failures):
    """A route that drops the first ``failures`` requests and then serves ``body``."""
    calls = []

    def route(handler):
        calls.append(None)
        (drop if len(calls) <= failures else serve)(body)(handler)
    return route


def listing(folder):
    return sorted(os.listdir(folder))


DATA = np.random.RandomState(0).bytes(200_000)      # several chunks of the stream


# -- download ---------------------------------------------------------------------------------

def test_download_good_file(server, tmp_path, monkeypatch, capsys):
    server.routes['/files/f.bin'] = serve(DATA, chunks=7)
    url = server.url('/files/f.bin')
    dest = tmp_path / 'dest'
    dest.mkdir()
    # a folder as path: the URL's last part in it, no temporary file left
    got = utils.download(url, path=str(dest), sha1_hash=sha1(DATA))
    assert got == str(dest / 'f.bin') and (dest / 'f.bin').read_bytes() == DATA
    assert listing(dest) == ['f.bin']
    assert capsys.readouterr().out == 'Downloading %s from %s...\n' % (got, url)
    # a finished valid file is not downloaded again
    assert utils.download(url, path=str(dest), sha1_hash=sha1(DATA)) == got
    assert utils.download(url, path=str(dest / 'f.bin')) == got
    assert server.hits['/files/f.bin'] == 1
    # a file name in a folder that does not exist yet; no path: the current folder
    nested = tmp_path / 'a' / 'b' / 'g.bin'
    assert utils.download(url, path=str(nested)) == str(nested) and nested.read_bytes() == DATA
    monkeypatch.chdir(tmp_path / 'a')
    assert utils.download(url) == 'f.bin' and (tmp_path / 'a' / 'f.bin').read_bytes() == DATA
    assert server.hits['/files/f.bin'] == 3


def test_download_sha1_mismatch_keeps_nothing(server, tmp_path, capsys):
    good = b'the published file'
    corrupt = b'the published fil3'
    server.routes['/f.bin'] = serve(corrupt)
    url = server.url('/f.bin')
    target = tmp_path / 'f.bin'
    with pytest.raises(UserWarning) as err:
        utils.download(url, path=str(target), sha1_hash=sha1(good), retries=2)
    message = str(err.value)
    for part in ('f.bin', url, sha1(good), sha1(corrupt), 'not saved'):
        assert part in message
    assert listing(tmp_path) == [] and server.hits['/f.bin'] == 2     # retried, as MXNet
    assert 'retrying, 1 attempt left' in capsys.readouterr().out
    # a good file in place is never replaced by a bad download, even with overwrite=True
    target.write_bytes(good)
    with pytest.raises(UserWarning, match=sha1(corrupt)):
        utils.download(url, path=str(target), sha1_hash=sha1(good), overwrite=True, retries=1)
    assert target.read_bytes() == good and listing(tmp_path) == ['f.bin']
    # nor is a file with another hash (an older copy, the user's own file)
    target.write_bytes(b'an older copy')
    with pytest.raises(UserWarning, match=sha1(corrupt)):
        utils.download(url, path=str(target), sha1_hash=sha1(good), retries=1)
    assert target.read_bytes() == b'an older copy' and listing(tmp_path) == ['f.bin']
    # once the server is fixed, the wrong copy is replaced
    server.routes['/f.bin'] = serve(good)
    utils.download(url, path=str(target), sha1_hash=sha1(good))
    assert target.read_bytes() == good and listing(tmp_path) == ['f.bin']


def test_dropped_connection_is_retried_then_raised(server, tmp_path, capsys):
    server.routes['/cut.bin'] = drop(DATA)
    url = server.url('/cut.bin')
    with pytest.raises(requests.exceptions.RequestException) as err:
        utils.download(url, path=str(tmp_path / 'cut.bin'), retries=3)
    assert server.hits['/cut.bin'] == 3 and listing(tmp_path) == []
    out = capsys.readouterr().out
    assert out.count('Downloading') == 3
    assert 'retrying, 2 attempts left' in out and 'retrying, 1 attempt left' in out
    if sys.version_info >= (3, 11):
        assert err.value.__notes__ == ['Failed downloading url %s to %s (3 attempts).' % (
            url, tmp_path / 'cut.bin')]
    # retries=0 and retries=1 both make one attempt, as in MXNet
    for retries in (0, 1):
        with pytest.raises(requests.exceptions.RequestException):
            utils.download(url, path=str(tmp_path / 'cut.bin'), retries=retries)
    assert server.hits['/cut.bin'] == 5 and listing(tmp_path) == []


def test_failure_then_success(server, tmp_path, capsys):
    server.routes['/f.bin'] = flaky(DATA, failures=1)
    path = utils.download(server.url('/f.bin'), path=str(tmp_path), sha1_hash=sha1(DATA))
    assert path == str(tmp_path / 'f.bin') and (tmp_path / 'f.bin').read_bytes() == DATA
    assert listing(tmp_path) == ['f.bin']
    assert server.hits['/f.bin'] == 2
    assert 'download failed due to' in capsys.readouterr().out


def test_http_error(server, tmp_path):
    url = server.url('/missing.bin')
    with pytest.raises(RuntimeError, match=r'^Failed downloading url %s \(HTTP status 404 '
                                           % url):
        utils.download(url, path=str(tmp_path), retries=2)
    assert server.hits['/missing.bin'] == 2 and listing(tmp_path) == []


def test_short_body_is_an_error_with_any_urllib3(tmp_path, monkeypatch):
    """urllib3 1.x accepts a body shorter than its Content-Length; download does not."""
    class ShortResponse:
        status_code, reason = 200, 'OK'
        headers = {'Content-Length': '10'}

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def iter_content(self, chunk_size):
            yield b'12345'

    monkeypatch.setattr(requests, 'get', lambda *args, **kwargs: ShortResponse())
    with pytest.raises(requests.exceptions.ConnectionError, match='5 bytes read from .*, 10 '
                                                                  'expected'):
        utils.download('http://127.0.0.1:9/f.bin', path=str(tmp_path / 'f.bin'), retries=1)
    assert listing(tmp_path) == []


def test_overwrite(server, tmp_path):
    server.routes['/f.bin'] = serve(b'new')
    target = tmp_path / 'f.bin'
    target.write_bytes(b'old')
    assert utils.download(server.url('/f.bin'), path=str(target)) == str(target)
    assert target.read_bytes() == b'old' and server.hits['/f.bin'] == 0
    # the fresh copy replaces the file (MXNet 1.9.1 deletes it instead when no sha1 is given)
    utils.download(server.url('/f.bin'), path=str(target), overwrite=True)
    assert target.read_bytes() == b'new' and listing(tmp_path) == ['f.bin']
    assert server.hits['/f.bin'] == 1


def test_verify_ssl_false_warns_and_is_passed_on(server, tmp_path, monkeypatch):
    server.routes['/f.bin'] = serve(b'data')
    seen = []
    real_get = requests.get

    def get(*args, **kwargs):
        seen.append(kwargs['verify'])
        return real_get(*args, **kwargs)
    monkeypatch.setattr(requests, 'get', get)
    with pytest.warns(UserWarning, match=r'^Unverified HTTPS request is being made '
                                         r'\(verify_ssl=False\). Adding certificate '
                                         r'verification is strongly advised.$'):
        utils.download(server.url('/f.bin'), path=str(tmp_path), verify_ssl=False)
    utils.download(server.url('/f.bin'), path=str(tmp_path), overwrite=True)
    assert seen == [False, True] and (tmp_path / 'f.bin').read_bytes() == b'data'


def test_concurrent_downloads_of_one_file(server, tmp_path):
    """Processes that download the same file at once each stream into their own temporary file;
    one complete copy stays."""
    workers = 3
    arrived = threading.Barrier(workers, timeout=60)
    together = []

    def route(handler):
        # the body is sent only once every process has asked for it: the downloads overlap
        try:
            arrived.wait()
            together.append(True)
        except threading.BrokenBarrierError:
            together.append(False)
        serve(DATA, chunks=16)(handler)
    server.routes['/big.bin'] = route
    target = str(tmp_path / 'big.bin')
    args = (server.url('/big.bin'), target, False, sha1(DATA))
    with multiprocessing.get_context('spawn').Pool(workers) as pool:
        paths = pool.starmap(utils.download, [args] * workers)
    assert paths == [target] * workers and together == [True] * workers
    assert server.hits['/big.bin'] == workers
    assert listing(tmp_path) == ['big.bin'] and utils.check_sha1(target, sha1(DATA))


def test_requests_is_imported_only_to_download():
    code = ('import sys, hybridlib, hybridlib.gluon.model_zoo.vision, hybridlib.gluon.data.vision;'
            'assert "requests" not in sys.modules')
    subprocess.run([sys.executable, '-c', code], check=True)


# -- MXNET_HOME and the repository ------------------------------------------------------------

def test_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv('MXNET_HOME', str(tmp_path / 'home'))
    assert data_dir() == str(tmp_path / 'home') and mx.base.data_dir() == data_dir()
    monkeypatch.delenv('MXNET_HOME')
    monkeypatch.setenv('HOME', str(tmp_path))
    if os.name != 'nt':
        assert data_dir_default() == str(tmp_path / '.mxnet') == data_dir()


# -- the model zoo ----------------------------------------------------------------------------

def zoo_archive(member, params):
    """A zip as MXNet publishes a zoo model's weights: ``member`` (for MXNet,
    ``<name>-<short sha1>.params``) at the top."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, 'w') as zf:
        zf.writestr(member, params)
    return buf.getvalue()


def test_pretrained_model_from_the_repository(server, tmp_path, monkeypatch, caplog):
    source = zoo.mobilenet0_25()
    source.initialize(mx.init.Xavier())
    source(nd.ones((1, 3, 32, 32)))
    source.save_parameters(str(tmp_path / 'published.params'))
    params = (tmp_path / 'published.params').read_bytes()
    os.remove(tmp_path / 'published.params')
    digest = sha1(params)
    monkeypatch.setitem(model_store._model_sha1, 'mobilenet0.25', digest)
    file_name = 'mobilenet0.25-%s' % digest[:8]
    route = '/repo/gluon/models/%s.zip' % file_name
    server.routes[route] = serve(zoo_archive(file_name + '.params', params))
    monkeypatch.setenv('MXNET_GLUON_REPO', server.url('/repo'))      # '/' is added
    root = tmp_path / 'models'

    net = zoo.get_model('mobilenet0.25', pretrained=True, root=str(root), ctx=mx.cpu())
    for (_, a), (_, b) in zip(source.collect_params().items(), net.collect_params().items()):
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy())
    # the zip and the unpacking folder are gone
    assert listing(root) == [file_name + '.params'] and server.hits[route] == 1
    # found in place the next time
    assert model_store.get_model_file('mobilenet0.25', root=str(root)) == str(
        root / (file_name + '.params'))
    assert server.hits[route] == 1
    # a file with the wrong hash is downloaded again
    (root / (file_name + '.params')).write_bytes(b'damaged')
    with caplog.at_level('WARNING'):
        zoo.mobilenet0_25(pretrained=True, root=str(root))
    assert 'Mismatch in the content of model file detected' in caplog.text
    assert server.hits[route] == 2 and (root / (file_name + '.params')).read_bytes() == params
    # a published file with another hash: a clear error, nothing left behind
    server.routes[route] = serve(zoo_archive(file_name + '.params', b'other weights'))
    (root / (file_name + '.params')).write_bytes(b'damaged')
    with pytest.raises(ValueError, match=r'Downloaded file has different hash.*has SHA-1 %s, '
                                         r'but the published weights of .mobilenet0.25. have '
                                         r'%s' % (sha1(b'other weights'), digest)):
        model_store.get_model_file('mobilenet0.25', root=str(root))
    assert listing(root) == [file_name + '.params']
    assert (root / (file_name + '.params')).read_bytes() == b'damaged'
    server.routes[route] = serve(zoo_archive('resnet18_v1-a0666292.params', params))
    with pytest.raises(ValueError, match=r'does not hold %s.params \(it holds '
                                         r'resnet18_v1-a0666292.params\)' % file_name):
        model_store.get_model_file('mobilenet0.25', root=str(root))
    assert listing(root) == [file_name + '.params']
    model_store.purge(str(root))
    assert listing(root) == []


def test_pretrained_model_missing_from_the_repository(server, tmp_path, monkeypatch):
    monkeypatch.setenv('MXNET_GLUON_REPO', server.url('/repo/'))
    url = server.url('/repo/gluon/models/squeezenet1.1-33ba0f93.zip')
    with pytest.raises(RuntimeError, match='^Failed downloading url %s' % url):
        zoo.squeezenet1_1(pretrained=True, root=str(tmp_path / 'models'))
    assert listing(tmp_path / 'models') == []


# -- the vision datasets ----------------------------------------------------------------------

def gz(data):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode='wb', mtime=0) as f:
        f.write(data)
    return buf.getvalue()


@pytest.mark.parametrize('cls, namespace', [(vision.MNIST, 'mnist'),
                                            (vision.FashionMNIST, 'fashion-mnist')])
def test_mnist_download(cls, namespace, server, tmp_path, monkeypatch):
    rng = np.random.RandomState(5)
    imgs = rng.randint(0, 256, (4, 28, 28)).astype(np.uint8)
    labels = np.array([3, 1, 4, 1], np.uint8)
    files = {'t10k-images-idx3-ubyte.gz': gz(struct.pack('>IIII', 2051, 4, 28, 28)
                                             + imgs.tobytes()),
             't10k-labels-idx1-ubyte.gz': gz(struct.pack('>II', 2049, 4) + labels.tobytes())}
    monkeypatch.setattr(cls, '_test_data', ('t10k-images-idx3-ubyte.gz',
                                            sha1(files['t10k-images-idx3-ubyte.gz'])))
    monkeypatch.setattr(cls, '_test_label', ('t10k-labels-idx1-ubyte.gz',
                                             sha1(files['t10k-labels-idx1-ubyte.gz'])))
    for name, body in files.items():
        server.routes['/repo/gluon/dataset/%s/%s' % (namespace, name)] = serve(body)
    monkeypatch.setenv('MXNET_GLUON_REPO', server.url('/repo'))
    root = tmp_path / namespace
    ds = cls(str(root), train=False)
    assert len(ds) == 4 and listing(root) == sorted(files)
    x, y = ds[2]
    assert x.shape == (28, 28, 1) and x.dtype == np.uint8 and y == 4 and type(y) is np.int32
    np.testing.assert_array_equal(x.asnumpy()[:, :, 0], imgs[2])
    # the files in place are used
    assert len(cls(str(root), train=False)) == 4 and sum(server.hits.values()) == 2
    # a file the repository serves damaged is not kept
    os.remove(root / 't10k-labels-idx1-ubyte.gz')
    server.routes['/repo/gluon/dataset/%s/t10k-labels-idx1-ubyte.gz' % namespace] = serve(b'x')
    with pytest.raises(UserWarning, match='t10k-labels-idx1-ubyte.gz .*has SHA-1'):
        cls(str(root), train=False)
    assert listing(root) == ['t10k-images-idx3-ubyte.gz']


@pytest.mark.parametrize('cls, namespace, record', [(vision.CIFAR10, 'cifar10', 3073),
                                                    (vision.CIFAR100, 'cifar100', 3074)])
def test_cifar_download(cls, namespace, record, server, tmp_path, monkeypatch):
    rng = np.random.RandomState(6)
    records = rng.randint(0, 256, (2, record)).astype(np.uint8)
    records[:, 0] = [2, 7]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w:gz') as tar:
        # as MXNet's archive: the batch files at the top
        for name, _ in cls._train_data + cls._test_data:
            info = tarfile.TarInfo(name)
            info.size = records.nbytes
            tar.addfile(info, io.BytesIO(records.tobytes()))
    archive = buf.getvalue()
    archive_name = cls._archive_file[0]
    monkeypatch.setattr(cls, '_archive_file', (archive_name, sha1(archive)))
    route = '/repo/gluon/dataset/%s/%s' % (namespace, archive_name)
    server.routes[route] = serve(archive)
    monkeypatch.setenv('MXNET_GLUON_REPO', server.url('/repo'))
    root = tmp_path / namespace
    ds = cls(str(root))
    assert len(ds) == 2 * len(cls._train_data) and ds[1][1] == 7
    np.testing.assert_array_equal(
        ds[1][0].asnumpy(), records[1, record - 3072:].reshape(3, 32, 32).transpose(1, 2, 0))
    assert archive_name in os.listdir(root)
    assert len(cls(str(root), train=False)) == 2 and server.hits[route] == 1


def test_dataset_missing_from_the_repository(server, tmp_path, monkeypatch):
    monkeypatch.setenv('MXNET_GLUON_REPO', server.url('/repo'))
    url = server.url('/repo/gluon/dataset/mnist/train-images-idx3-ubyte.gz')
    with pytest.raises(RuntimeError, match='^Failed downloading url %s' % url):
        vision.MNIST(str(tmp_path / 'mnist'))
    assert listing(tmp_path / 'mnist') == []
