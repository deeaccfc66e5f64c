"""gluon.utils against MXNet 1.9.1: splitting batches across contexts, clip_global_norm, the file
helpers, and download's arguments and files in place (downloads from a server:
tests/test_download.py). Expected values are MXNet's, pasted from the oracle."""
import hashlib
import os
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import nd
from hybridlib.gluon import utils

HELLO_SHA1 = '2aae6c35c94fcfb415dbe95f408b9ce91ee846ed'   # sha1(b'hello world')


def batch():
    return nd.arange(14).reshape((7, 2))


# -- split_data / split_and_load ------------------------------------------------------------------
def test_split_data_uneven():
    slices = utils.split_data(batch(), 3, even_split=False)
    assert [s.asnumpy().tolist() for s in slices] == [
        [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [[6.0, 7.0], [8.0, 9.0]],
        [[10.0, 11.0], [12.0, 13.0]]]


@pytest.mark.parametrize('shape, num_slice, batch_axis, even_split, shapes', [
    ((7, 2), 2, 1, True, [(7, 1), (7, 1)]),
    ((7, 2), 8, 0, False, [(1, 2)] * 7 + [(0, 2)]),
    ((7, 2), 7, 0, True, [(1, 2)] * 7),
    ((7, 2), 1, 0, True, [(7, 2)]),
    ((2, 5, 3), 2, 1, False, [(2, 3, 3), (2, 2, 3)]),
    ((2, 5, 3), 2, -1, False, [(2, 5, 2), (2, 5, 1)]),
])
def test_split_data_shapes(shape, num_slice, batch_axis, even_split, shapes):
    data = nd.array(np.arange(np.prod(shape)).reshape(shape))
    slices = utils.split_data(data, num_slice, batch_axis, even_split)
    assert [s.shape for s in slices] == shapes
    assert np.array_equal(np.concatenate([s.asnumpy() for s in slices], axis=batch_axis),
                          data.asnumpy())


def test_split_data_errors():
    with pytest.raises(ValueError, match=r"^data with shape \(7, 2\) cannot be evenly split "
                                         r"into 3 slices along axis 0. Use a batch size that's "
                                         r"multiple of 3 or set even_split=False to allow "
                                         r"uneven partitioning of data.$"):
        utils.split_data(batch(), 3)
    # MXNet raises ZeroDivisionError
    with pytest.raises(ValueError, match='num_slice must be at least 1, got 0'):
        utils.split_data(batch(), 0, even_split=False)
    with pytest.raises(IndexError):
        utils.split_data(nd.zeros((2, 5, 3)), 3, batch_axis=3)


def test_split_and_load_contexts():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    parts = utils.split_and_load(batch(), ctxs, even_split=False)
    assert [(p.shape, p.context) for p in parts] == [((4, 2), mx.cpu(0)), ((3, 2), mx.cpu(1))]
    assert parts[1].asnumpy().tolist() == [[8, 9], [10, 11], [12, 13]]
    with pytest.raises(ValueError, match='cannot be evenly split into 2 slices'):
        utils.split_and_load(batch(), ctxs)
    parts = utils.split_and_load(batch(), ctxs, batch_axis=1)
    assert [(p.shape, p.context) for p in parts] == [((7, 1), mx.cpu(0)), ((7, 1), mx.cpu(1))]


def test_split_and_load_array_like_and_one_context():
    parts = utils.split_and_load(np.arange(6).reshape(3, 2), [mx.cpu(1)])
    assert [(p.shape, p.context, p.dtype) for p in parts] == [((3, 2), mx.cpu(1), np.float32)]
    parts = utils.split_and_load([[1, 2], [3, 4]], [mx.cpu(1), mx.cpu(2)])
    assert [(p.shape, p.context, p.dtype) for p in parts] == [
        ((1, 2), mx.cpu(1), np.float32), ((1, 2), mx.cpu(2), np.float32)]
    x = batch()
    assert utils.split_and_load(x, [mx.cpu(0)])[0] is x      # already there: no copy
    assert utils.split_and_load(x, [mx.cpu(1)])[0].context == mx.cpu(1)
    with pytest.raises(ValueError, match='at least one context'):
        utils.split_and_load(x, [])


def test_split_and_load_keeps_the_graph():
    x = nd.array(np.arange(8.).reshape(4, 2))
    x.attach_grad()
    with mx.autograd.record():
        parts = utils.split_and_load(x, [mx.cpu(0), mx.cpu(1)])
        loss = parts[0].sum() + 2 * parts[1].sum().as_in_context(mx.cpu(0))
    loss.backward()
    assert x.grad.asnumpy().tolist() == [[1, 1], [1, 1], [2, 2], [2, 2]]


# -- clip_global_norm -----------------------------------------------------------------------------
def test_clip_global_norm_scales_in_place():
    a, b = nd.array([3., 4.]), nd.array([[12.]], ctx=mx.cpu(1))
    norm = utils.clip_global_norm([a, b], 1.0)
    assert norm == 13.0 and isinstance(norm, np.float32)
    np.testing.assert_allclose(a.asnumpy(), [0.23076925, 0.30769232], rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), [[0.923077]], rtol=1e-6)
    assert b.context == mx.cpu(1)


def test_clip_global_norm_below_the_limit_and_without_check():
    a, b = nd.array([3., 4.]), nd.array([[12.]])
    norm = utils.clip_global_norm([a, b], 100.0, check_isfinite=False)
    assert isinstance(norm, nd.NDArray) and norm.shape == (1,) and norm.context == mx.cpu(0)
    assert norm.asnumpy().tolist() == [13.0]
    assert a.asnumpy().tolist() == [3, 4] and b.asnumpy().tolist() == [[12]]
    # exactly at the limit: the scale 13 / (13 + 1e-8) rounds to 1 in float32
    assert utils.clip_global_norm([a, b], 13.0) == 13.0
    assert a.asnumpy().tolist() == [3, 4]


def test_clip_global_norm_random_against_numpy():
    r = np.random.RandomState(0)
    arrays = [r.randn(3, 4), r.randn(5), r.randn(2, 2, 2)]
    total = np.sqrt(sum((x.astype('float64') ** 2).sum() for x in arrays))
    nds = [nd.array(x) for x in arrays]
    assert utils.clip_global_norm(nds, 0.5) == pytest.approx(total, rel=1e-6)
    for x, y in zip(arrays, nds):
        np.testing.assert_allclose(y.asnumpy(), x * 0.5 / total, rtol=1e-5)


@pytest.mark.parametrize('value, result, scaled', [
    (np.nan, 'nan', [np.nan, np.nan]),
    (np.inf, 'inf', [0., np.nan]),
])
def test_clip_global_norm_not_finite(value, result, scaled):
    a = nd.array([3., value])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        norm = utils.clip_global_norm([a], 1.0)
    assert str(norm) == result
    np.testing.assert_array_equal(a.asnumpy(), scaled)
    assert [(str(w.message), w.category) for w in caught] == [
        ('nan or inf is detected. Clipping results will be undefined.', UserWarning)]
    assert caught[0].filename == __file__


def test_clip_global_norm_dtypes():
    # MXNet fails on float16 (CPU dot) and on float64 (its ones() is float32)
    a = nd.array([3., 4.], dtype='float16')
    norm = utils.clip_global_norm([a], 1.0)
    assert norm == 5.0 and a.dtype == np.float16
    np.testing.assert_allclose(a.asnumpy(), [0.6, 0.8], rtol=1e-3)
    a = nd.array([3., 4.], dtype='float64')
    norm = utils.clip_global_norm([a], 1.0)
    assert isinstance(norm, np.float64) and norm == 5.0
    np.testing.assert_allclose(a.asnumpy(), np.array([3., 4.]) / (5 + 1e-8), rtol=1e-15)
    with pytest.raises(TypeError, match='array 0 has dtype int32'):
        utils.clip_global_norm([nd.array([3, 4], dtype='int32')], 1.0)
    with pytest.raises(AssertionError, match='at least one array'):
        utils.clip_global_norm([], 1.0)


# -- files ----------------------------------------------------------------------------------------
def test_check_sha1(tmp_path):
    f = tmp_path / 'f.bin'
    f.write_bytes(b'hello world')
    assert utils.check_sha1(str(f), HELLO_SHA1)
    assert not utils.check_sha1(str(f), 'abc')
    big = tmp_path / 'big.bin'
    data = os.urandom(1048576 + 17)        # more than one read
    big.write_bytes(data)
    assert utils.check_sha1(str(big), hashlib.sha1(data).hexdigest())
    with pytest.raises(FileNotFoundError):
        utils.check_sha1(str(tmp_path / 'missing'), 'abc')


def test_download_finds_files_in_place(tmp_path):
    f = tmp_path / 'f.bin'
    f.write_bytes(b'hello world')
    assert utils.download('http://x.invalid/f.bin', path=str(f)) == str(f)
    assert utils.download('http://x.invalid/f.bin', path=str(tmp_path),
                          sha1_hash=HELLO_SHA1) == os.path.join(str(tmp_path), 'f.bin')
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert utils.download('http://x.invalid/dir/f.bin') == 'f.bin'
    finally:
        os.chdir(cwd)


def test_download_argument_errors(tmp_path):
    with pytest.raises(AssertionError, match="^Can't construct file-name from this URL. Please "
                                             "set the `path` option manually.$"):
        utils.download('http://x.invalid/')
    with pytest.raises(AssertionError, match="^Number of retries should be at least 0, "
                                             "currently it's -1$"):
        utils.download('http://x.invalid/f.bin', path=str(tmp_path / 'f'), retries=-1)


def test_replace_file(tmp_path):
    src, dst = tmp_path / 'src', tmp_path / 'dst'
    src.write_bytes(b'new')
    dst.write_bytes(b'old')
    utils.replace_file(str(src), str(dst))
    assert dst.read_bytes() == b'new' and not src.exists()
    src.write_bytes(b'x')
    with pytest.raises(OSError, match='Moving downloaded temp file'):
        utils.replace_file(str(src), str(tmp_path / 'no_dir' / 'dst'))
    assert not src.exists()


def test_repo_urls(monkeypatch):
    monkeypatch.delenv('MXNET_GLUON_REPO', raising=False)
    assert utils._get_repo_url() == 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/'
    assert utils._get_repo_file_url('gluon/models', 'resnet.zip') == (
        'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/gluon/models/resnet.zip')
    monkeypatch.setenv('MXNET_GLUON_REPO', 'http://mirror/repo')
    assert utils._get_repo_file_url('ns', 'f') == 'http://mirror/repo/ns/f'


def test_other_public_helpers():
    assert utils.__all__ == ['split_data', 'split_and_load', 'clip_global_norm', 'check_sha1',
                             'download', 'replace_file']
    assert not utils.shape_is_known((2, 0)) and not utils.shape_is_known(())
    assert not utils.shape_is_known(None) and utils.shape_is_known((2, 3))
    assert utils._brief_print_list(range(10)) == "'0', '1', '2', ..., '6', '7', '8', '9'"
    assert utils._indent('a\nb', 2) == 'a\n  b'
    handles = OrderedDict()   # a dict that takes weak references, as Block's
    with utils.HookHandle() as handle:
        handle.attach(handles, print)
        assert list(handles.values()) == [print]
    assert handles == {}


@pytest.mark.skipif(mx.num_gpus() == 0, reason='needs a GPU and cupy')
def test_gpu_split_and_clip():
    parts = utils.split_and_load(batch(), [mx.gpu(0), mx.cpu(1)], even_split=False)
    assert [(p.shape, p.context) for p in parts] == [((4, 2), mx.gpu(0)), ((3, 2), mx.cpu(1))]
    a, b = nd.array([3., 4.], ctx=mx.gpu(0)), nd.array([[12.]])
    assert utils.clip_global_norm([a, b], 1.0) == 13.0
    np.testing.assert_allclose(a.asnumpy(), [3 / 13, 4 / 13], rtol=1e-6)
    assert a.context == mx.gpu(0)
