"""gluon.model_zoo.vision (hybridlib/model_zoo): MXNet 1.9.1's names, parameters (names, order,
declared and inferred shapes) of every model, forward shapes, the numbers, gradients, reprs and
exported graphs of tiny zoo networks saved by MXNet, MXNet's reference exports of three zoo
models, and the pretrained-weights store (MXNet's file names and URLs, files in place; the
downloads themselves: tests/test_download.py).

Fixtures: tests/data/make_model_zoo_files.py (model_zoo-params.json.gz, model_zoo-io.npz,
model_zoo-<net>.params) and tests/data/reference (mobilenet0_25, squeezenet1_1).
"""
import gzip
import hashlib
import json
import os
import sys
import warnings

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.gluon.model_zoo import model_store, vision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'nn'))
from hybrid_check import check_hybrid, fresh_names  # noqa: E402,F401 (a fixture)

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'data')
REF = os.path.join(DATA, 'reference')
with gzip.open(os.path.join(DATA, 'model_zoo-params.json.gz'), 'rt') as _f:
    PARAMS = json.load(_f)

# dir(mxnet.gluon.model_zoo.vision) without the private names, MXNet 1.9.1
MXNET_NAMES = [
    'AlexNet', 'BasicBlockV1', 'BasicBlockV2', 'BottleneckV1', 'BottleneckV2', 'DenseNet',
    'Inception3', 'MobileNet', 'MobileNetV2', 'ResNetV1', 'ResNetV2', 'SqueezeNet', 'VGG',
    'alexnet', 'densenet', 'densenet121', 'densenet161', 'densenet169', 'densenet201',
    'get_mobilenet', 'get_mobilenet_v2', 'get_model', 'get_resnet', 'get_vgg', 'inception',
    'inception_v3', 'mobilenet', 'mobilenet0_25', 'mobilenet0_5', 'mobilenet0_75',
    'mobilenet1_0', 'mobilenet_v2_0_25', 'mobilenet_v2_0_5', 'mobilenet_v2_0_75',
    'mobilenet_v2_1_0', 'resnet', 'resnet101_v1', 'resnet101_v2', 'resnet152_v1',
    'resnet152_v2', 'resnet18_v1', 'resnet18_v2', 'resnet34_v1', 'resnet34_v2', 'resnet50_v1',
    'resnet50_v2', 'squeezenet', 'squeezenet1_0', 'squeezenet1_1', 'vgg', 'vgg11', 'vgg11_bn',
    'vgg13', 'vgg13_bn', 'vgg16', 'vgg16_bn', 'vgg19', 'vgg19_bn']


def test_names_as_mxnet():
    assert sorted(n for n in dir(vision) if not n.startswith('_')) == MXNET_NAMES
    assert sorted(vision.__all__) == sorted(n for n in MXNET_NAMES if n not in (
        'densenet', 'inception', 'mobilenet', 'resnet', 'squeezenet', 'vgg'))
    assert model_store.__all__ == ['get_model_file', 'purge']
    assert mx.gluon.model_zoo.vision is vision


@pytest.mark.parametrize('name', sorted(PARAMS))
def test_parameters_as_mxnet(name):
    """Prefix, parameter names in order, declared shapes, and the shapes a forward infers."""
    expected = PARAMS[name]
    with mx.name.NameManager():
        net = vision.get_model(name)
    assert net.prefix == expected['prefix']
    size = 299 if name == 'inceptionv3' else 224
    out = net(sym.var('data'))
    args, out_shapes, auxs = out.infer_shape(data=(1, 3, size, size))
    assert out_shapes == [(1, 1000)]
    inferred = dict(zip(out.list_arguments(), args))
    inferred.update(zip(out.list_auxiliary_states(), auxs))
    prefix = net.prefix
    got = [[key[len(prefix):], list(p.shape), list(inferred[key])]
           for key, p in net.collect_params().items()]
    assert got == expected['params']


# the zoo's models at small sizes (the others are too slow for numpy at the sizes they need:
# their shapes come from test_parameters_as_mxnet), and small configurations of the blocks
SMALL = [
    ('resnet18_v1', 32, lambda: vision.get_model('resnet18_v1', classes=7)),
    ('resnet18_v2', 32, lambda: vision.get_model('resnet18_v2', classes=7)),
    ('bottleneck_v1', 16, lambda: vision.ResNetV1(vision.BottleneckV1, [1, 2, 1, 1],
                                                  [8, 16, 32, 64, 64], classes=7)),
    ('bottleneck_v2_thumbnail', 8,
     lambda: vision.ResNetV2(vision.BottleneckV2, [2, 1, 1, 1], [8, 16, 32, 64, 128],
                             classes=7, thumbnail=True)),
    ('vgg', 32, lambda: vision.VGG([1, 1, 1, 1, 1], [4, 4, 8, 8, 8], classes=7)),
    ('alexnet', 64, lambda: vision.get_model('alexnet', classes=7)),
    ('squeezenet1.0', 224, lambda: vision.get_model('squeezenet1.0', classes=7)),
    ('squeezenet1.1', 224, lambda: vision.get_model('squeezenet1.1', classes=7)),
    ('densenet', 56, lambda: vision.DenseNet(4, 2, [1, 2], classes=7, dropout=0.1)),
    ('mobilenet0.25', 32, lambda: vision.get_model('mobilenet0.25', classes=7)),
    ('mobilenetv2_0.25', 32, lambda: vision.get_model('mobilenetv2_0.25', classes=7)),
]


@pytest.mark.parametrize('make, size', [(m, s) for _, s, m in SMALL],
                         ids=[n for n, _, _ in SMALL])
def test_forward_shapes(make, size):
    net = make()
    net.initialize(mx.init.Xavier())
    x = nd.array(np.random.default_rng(0).uniform(-1, 1, (1, 3, size, size)))
    out = net(x)
    assert out.shape == (1, 7)
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)


def test_mobilenet_v2_hybridizes():
    net = vision.MobileNetV2(0.25, classes=4)
    net.initialize(mx.init.Xavier())
    check_hybrid(net, [nd.array(np.random.default_rng(1).uniform(-1, 1, (1, 3, 32, 32)))],
                 rtol=1e-4, atol=1e-5)


def test_get_model_rules():
    assert isinstance(vision.get_model('ResNet18_V1'), vision.ResNetV1)
    assert isinstance(vision.get_model('mobilenetv2_0.5'), vision.MobileNetV2)
    with pytest.raises(ValueError, match=r'Model foo is not supported. Available options are'
                                         r'\n\talexnet\n\tdensenet121'):
        vision.get_model('foo')
    with pytest.raises(AssertionError, match='Invalid number of layers'):
        vision.get_resnet(1, 20)
    with pytest.raises(AssertionError, match='Unsupported SqueezeNet version'):
        vision.SqueezeNet('2.0')


# -------------------------------------------------------------------------------------------------
# Tiny zoo networks saved by MXNet
# -------------------------------------------------------------------------------------------------

TINY = {
    'resnetv2_tiny': lambda: vision.ResNetV2(vision.BottleneckV2, [1, 1, 1, 1],
                                             [4, 8, 12, 16, 20], classes=5, thumbnail=True),
    'densenet_tiny': lambda: vision.DenseNet(8, 4, [2, 2], bn_size=2, classes=5),
    'resnetv1_tiny': lambda: vision.ResNetV1(vision.BottleneckV1, [1, 1, 1, 1],
                                             [4, 8, 12, 16, 20], classes=5, thumbnail=True),
}


@pytest.fixture(scope='module')
def io():
    with np.load(os.path.join(DATA, 'model_zoo-io.npz')) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize('name', sorted(TINY))
def test_tiny_networks_match_mxnet(name, io):
    # MXNet's save_parameters file into a fresh network
    net = TINY[name]()
    net.load_parameters(os.path.join(DATA, f'model_zoo-{name}.params'))
    assert repr(net) == io[f'{name}:repr'].item().decode()
    x = nd.array(io[f'{name}:input'])
    np.testing.assert_allclose(net(x).asnumpy(), io[f'{name}:output'], rtol=1e-4, atol=1e-6)
    for flags in (None, dict(), dict(static_alloc=True, static_shape=True)):
        if flags is not None:
            net.hybridize(**flags)
        x.attach_grad()
        with autograd.record():
            out = net(x)
        out.backward(nd.array(io[f'{name}:cot']))
        np.testing.assert_allclose(x.grad.asnumpy(), io[f'{name}:grad_input'], rtol=1e-3,
                                   atol=1e-5, err_msg=f'{flags}')
        for key, p in net.collect_params().items():
            if p.grad_req != 'null':
                np.testing.assert_allclose(p.grad().asnumpy(), io[f'{name}:grad:{key}'],
                                           rtol=1e-3, atol=1e-5, err_msg=f'{key} {flags}')


@pytest.mark.parametrize('name', sorted(TINY))
def test_tiny_networks_export_as_mxnet(name, io, tmp_path):
    """MXNet's procedure: initialize, hybridize, a first call, then the weights."""
    net = TINY[name]()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = nd.array(io[f'{name}:input'])
    net(x)
    net.load_parameters(os.path.join(DATA, f'model_zoo-{name}.params'))
    np.testing.assert_allclose(net(x).asnumpy(), io[f'{name}:output'], rtol=1e-4, atol=1e-6)
    net.export(str(tmp_path / name))
    with open(tmp_path / f'{name}-symbol.json') as f:
        assert f.read() == io[f'{name}:symbol'].item().decode()
    imported = mx.gluon.SymbolBlock.imports(str(tmp_path / f'{name}-symbol.json'), ['data'],
                                            str(tmp_path / f'{name}-0000.params'))
    np.testing.assert_allclose(imported(x).asnumpy(), io[f'{name}:output'], rtol=1e-4,
                               atol=1e-6)


@pytest.mark.parametrize('name', ['inceptionv3', 'mobilenetv2_0.25', 'squeezenet1.0', 'vgg11_bn',
                                  'alexnet'])
def test_traced_graphs_as_mxnet(name, io):
    """``net(sym.var('data')).tojson()`` of a fresh model, as MXNet writes it."""
    with mx.name.NameManager():
        net = vision.get_model(name)
    assert net(sym.var('data')).tojson() == io[f'graph:{name}'].item().decode()


# -------------------------------------------------------------------------------------------------
# MXNet's reference exports of zoo models: predict-mode gradients (tests/test_reference_export
# checks their outputs, exports and, for resnet18_v1_thumb, the training step)
# -------------------------------------------------------------------------------------------------

def _reference(name):
    with open(os.path.join(REF, 'manifest.json')) as f:
        case = {c['name']: c for c in json.load(f)['cases']}[name]
    scope = {'vision': vision}
    exec(case['construction'], scope)          # noqa: S102 - the manifest's own code
    net = scope['net']
    net.collect_params().load(os.path.join(REF, case['files']['params']))
    with np.load(os.path.join(REF, case['files']['io'])) as f:
        return net, case, {k: f[k] for k in f.files}


@pytest.mark.parametrize('name', ['mobilenet0_25', 'squeezenet1_1'])
def test_reference_predict_mode_gradients(name):
    net, case, io = _reference(name)
    assert case['grad_mode'] == 'predict'
    for flags in (None, dict(static_alloc=True, static_shape=True)):
        if flags is not None:
            net.hybridize(**flags)
        x = nd.array(io['input0'])
        x.attach_grad()
        with autograd.record(train_mode=False):
            out = net(x)
        np.testing.assert_allclose(out.asnumpy(), io['out0'], rtol=case['rtol'],
                                   atol=case['atol'])
        out.backward(nd.array(io['cot0']), train_mode=False)
        tol = dict(rtol=case['grad_rtol'], atol=case['grad_atol'])
        np.testing.assert_allclose(x.grad.asnumpy(), io['grad_input0'], err_msg=f'{flags}',
                                   **tol)
        params = net.collect_params()
        for key in io:
            if key.startswith('grad_param:'):
                np.testing.assert_allclose(params[key[11:]].grad().asnumpy(), io[key],
                                           err_msg=f'{key} {flags}', **tol)


# -------------------------------------------------------------------------------------------------
# Pretrained weights: MXNet's file names and URLs, files in place
# -------------------------------------------------------------------------------------------------

class _Fetched(Exception):
    pass


# MXNet 1.9.1's URLs with MXNET_GLUON_REPO=http://127.0.0.1:9/repo (from the oracle)
@pytest.mark.parametrize('make, url', [
    (lambda **kw: vision.resnet18_v1(**kw), 'resnet18_v1-a0666292.zip'),
    (lambda **kw: vision.get_resnet(2, 50, **kw), 'resnet50_v2-ecdde353.zip'),
    (lambda **kw: vision.vgg11_bn(**kw), 'vgg11_bn-ee79a809.zip'),
    (lambda **kw: vision.vgg16_bn(**kw), 'vgg16_bn-7f01cf05.zip'),
    (lambda **kw: vision.alexnet(**kw), 'alexnet-44335d1f.zip'),
    (lambda **kw: vision.densenet121(**kw), 'densenet121-f27dbf2d.zip'),
    (lambda **kw: vision.squeezenet1_1(**kw), 'squeezenet1.1-33ba0f93.zip'),
    (lambda **kw: vision.inception_v3(**kw), 'inceptionv3-ed47ec45.zip'),
    (lambda **kw: vision.mobilenet0_25(**kw), 'mobilenet0.25-9f83e440.zip'),
    (lambda **kw: vision.mobilenet0_5(**kw), 'mobilenet0.5-8e9d539c.zip'),
    (lambda **kw: vision.mobilenet0_75(**kw), 'mobilenet0.75-529b2c7f.zip'),
    (lambda **kw: vision.get_model('mobilenetv2_1.0', **kw), 'mobilenetv2_1.0-36da4ff1.zip'),
    (lambda **kw: vision.get_model('mobilenetv2_0.5', **kw), 'mobilenetv2_0.5-aabd26cd.zip'),
])
def test_pretrained_weights_urls_as_mxnet(make, url, tmp_path, monkeypatch):
    """A missing file is fetched from MXNet's URL into a temporary zip in root."""
    fetched = []

    def download(url, path=None, overwrite=False, **kwargs):
        fetched.append((url, path, overwrite))
        raise _Fetched
    monkeypatch.setattr(model_store, 'download', download)
    monkeypatch.setenv('MXNET_GLUON_REPO', 'http://127.0.0.1:9/repo')
    with pytest.raises(_Fetched):
        make(pretrained=True, root=str(tmp_path / 'models'))
    (got, path, overwrite), = fetched
    assert got == 'http://127.0.0.1:9/repo/gluon/models/' + url
    assert os.path.dirname(path) == str(tmp_path / 'models') and overwrite
    assert os.path.basename(path).startswith(url)       # and a uuid
    assert os.listdir(tmp_path / 'models') == []
    name = url.rsplit('-', 1)[0]
    assert model_store.short_hash(name) == url[-12:-4]


def test_pretrained_weights_load_from_root(tmp_path, monkeypatch):
    source = vision.mobilenet0_25()
    source.initialize(mx.init.Xavier())
    source(nd.ones((1, 3, 32, 32)))
    # a file in place with the sha1 the store expects loads without a word (or a download);
    # this one in the older format of full parameter names (less the prefix), which MXNet's zoo
    # files may have too
    monkeypatch.setattr(model_store, 'download', None)
    legacy = tmp_path / 'legacy.params'
    source.collect_params().save(str(legacy), strip_prefix=source.prefix)
    with open(legacy, 'rb') as f:
        digest = hashlib.sha1(f.read()).hexdigest()
    monkeypatch.setitem(model_store._model_sha1, 'mobilenet0.25', digest)
    os.rename(legacy, tmp_path / f'mobilenet0.25-{digest[:8]}.params')
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        net = vision.mobilenet0_25(pretrained=True, root=str(tmp_path), ctx=mx.cpu())
    for (_, a), (_, b) in zip(source.collect_params().items(), net.collect_params().items()):
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy())
    with pytest.raises(ValueError, match='Pretrained model for resnet19 is not available'):
        model_store.get_model_file('resnet19', root=str(tmp_path))
    (tmp_path / 'keep.txt').write_text('x')
    model_store.purge(str(tmp_path))
    assert os.listdir(tmp_path) == ['keep.txt']
