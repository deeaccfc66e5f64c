"""gluon.contrib.cnn (hybridlib/contrib/cnn): MXNet 1.9.1's names, signatures, parameters,
reprs, numbers and exported graphs (tests/data/detection-*, written by
tests/data/make_detection_files.py); imperative vs hybridized; numpy references."""
import inspect
import json
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd
from hybridlib.base import AttributeParseError, MXNetAssertionError
from hybridlib.gluon import nn
from hybrid_check import check_hybrid, data, fresh_names  # noqa: F401 (a fixture)

cnn = gluon.contrib.cnn
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data')
with open(os.path.join(DATA, 'detection-cases.json')) as _f:
    FACTS = json.load(_f)
NUMBERS = np.load(os.path.join(DATA, 'detection-numbers.npz'))
LAYERS = sorted(FACTS['layers'])


def build(make):
    """The layer of a fixture's constructor, named as in a fresh MXNet process."""
    with mx.name.NameManager():
        return eval(make, {'cnn': cnn})


def test_exports_and_signatures_as_mxnet():
    assert cnn.__all__ == FACTS['all']
    assert gluon.contrib.cnn.conv_layers.__all__ == FACTS['all']
    for name, text in FACTS['signatures'].items():
        assert str(inspect.signature(getattr(cnn, name).__init__)) == text, name


@pytest.mark.parametrize('name', LAYERS)
def test_names_parameters_and_reprs_as_mxnet(name):
    facts = FACTS['layers'][name]
    block = build(facts['make'])
    assert (block.name, block.prefix) == (facts['name'], facts['prefix'])
    assert repr(block) == facts['repr_before']
    assert [[k, list(p.shape), np.dtype(p.dtype).name, p.grad_req, str(p.init)]
            for k, p in block.params.items()] == facts['params']
    block.initialize()
    block(nd.array(NUMBERS[f'{name}:in0']))
    assert repr(block) == facts['repr_after']


def _with_mxnet_parameters(name):
    block = build(FACTS['layers'][name]['make'])
    block.initialize()
    x = nd.array(NUMBERS[f'{name}:in0'])
    block(x)
    for key, p in block.collect_params().items():
        p.set_data(nd.array(NUMBERS[f'{name}:param:{key[len(block.prefix):]}']))
    return block, x


@pytest.mark.parametrize('hybrid', [False, True])
@pytest.mark.parametrize('name', LAYERS)
def test_numbers_as_mxnet(name, hybrid):
    block, x = _with_mxnet_parameters(name)
    if hybrid:
        block.hybridize()
    x.attach_grad()
    with autograd.record():
        out = block(x)
    np.testing.assert_allclose(out.asnumpy(), NUMBERS[f'{name}:out0'], rtol=1e-5, atol=1e-6)
    if not FACTS['layers'][name]['with_grads']:
        return          # MXNet's CPU has no backward for the modulated convolution
    out.backward(nd.array(NUMBERS[f'{name}:cot0']))
    np.testing.assert_allclose(x.grad.asnumpy(), NUMBERS[f'{name}:grad0'], rtol=1e-5,
                               atol=1e-6)
    grads = {k[len(block.prefix):]: p.grad().asnumpy()
             for k, p in block.collect_params().items()}
    assert sorted(grads) == sorted(k.split(':pgrad:')[1] for k in NUMBERS.files
                                   if k.startswith(f'{name}:pgrad:'))
    for key, grad in grads.items():
        np.testing.assert_allclose(grad, NUMBERS[f'{name}:pgrad:{key}'], rtol=1e-5, atol=1e-5,
                                   err_msg=key)


@pytest.mark.parametrize('name', LAYERS)
def test_exported_graph_as_mxnet(name, tmp_path):
    block, x = _with_mxnet_parameters(name)
    block.hybridize()
    block(x)
    block.export(str(tmp_path / 'net'))
    ours = json.loads((tmp_path / 'net-symbol.json').read_text())
    theirs = json.loads(FACTS['layers'][name]['symbol'])
    # MXNet keeps the deformable weight's shape as the list it was declared with and writes
    # '[4, 0, 3, 3]'; hybridlib's parameter shapes are tuples: '(4, 0, 3, 3)'
    for node in theirs['nodes']:
        shape = node.get('attrs', {}).get('__shape__', '')
        if shape.startswith('['):
            node['attrs']['__shape__'] = '(' + shape[1:-1] + ')'
    assert ours == theirs


def _layers(activation=None):
    kw = dict(activation=activation) if activation else {}
    return [
        cnn.DeformableConvolution(4, kernel_size=3, padding=1, **kw),
        cnn.DeformableConvolution(4, kernel_size=(2, 3), strides=(2, 1), dilation=(1, 2),
                                  groups=2, num_deformable_group=2, use_bias=False, **kw),
        cnn.ModulatedDeformableConvolution(4, kernel_size=3, padding=1, **kw),
        cnn.ModulatedDeformableConvolution(2, kernel_size=2, num_deformable_group=2,
                                           offset_use_bias=False, **kw),
    ]


@pytest.mark.parametrize('index', range(4))
@pytest.mark.parametrize('activation', [None, 'tanh'])
def test_imperative_and_hybridized_agree(index, activation):
    block = _layers(activation)[index]
    block.initialize(mx.init.Xavier())
    block(data(2, 4, 6, 5))
    # offsets of a few pixels, masks away from 1: the deformable paths, not a plain convolution
    for i, p in enumerate(block.collect_params().values()):
        size = int(np.prod(p.shape))
        p.set_data(nd.array(0.3 * np.sin(np.arange(size) * 0.9 + i).reshape(p.shape)))
    check_hybrid(block, [data(2, 4, 6, 5)])


@pytest.mark.parametrize('modulated', [False, True])
def test_new_layer_is_a_convolution(modulated):
    """The offset convolution starts at zero: the taps sit on the regular grid (and the masks
    are 2 * sigmoid(0) = 1), so the layer computes Conv2D's output and gradients."""
    cls = cnn.ModulatedDeformableConvolution if modulated else cnn.DeformableConvolution
    layer = cls(3, kernel_size=(3, 2), strides=(1, 2), padding=(1, 1), dilation=(2, 1),
                in_channels=2)
    conv = nn.Conv2D(3, kernel_size=(3, 2), strides=(1, 2), padding=(1, 1), dilation=(2, 1),
                     in_channels=2)
    x = data(2, 2, 7, 6)
    for block in (layer, conv):
        block.initialize(mx.init.Xavier())
        block(x)             # the deformable weight's input channels are always deferred
    conv.weight.set_data(layer.deformable_conv_weight.data())
    conv.bias.set_data(nd.array([0.1, -0.2, 0.3]))
    layer.deformable_conv_bias.set_data(conv.bias.data())
    results = []
    for block in (layer, conv):
        xs = x.copy()
        xs.attach_grad()
        with autograd.record():
            out = block(xs)
        out.backward(nd.array(np.cos(np.arange(out.size)).reshape(out.shape)))
        results.append((out.asnumpy(), xs.grad.asnumpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-6)
    # the offset convolution learns: its weight has a gradient
    assert layer.offset_weight.grad().abs().sum().asscalar() > 0


def test_layout_and_offsets_checks():
    with pytest.raises(MXNetAssertionError, match="Only supports 'NCHW' and 'NHWC'"):
        cnn.DeformableConvolution(2, layout='NCW')
    # MXNet's layers accept NHWC, its operators do not: the first call fails, naming it
    layer = cnn.DeformableConvolution(2, kernel_size=3, layout='NHWC', in_channels=2)
    layer.initialize()
    with pytest.raises(AttributeParseError, match='layout'):
        layer(nd.ones((1, 5, 5, 2)))


def test_offset_channels_and_parameter_shapes():
    layer = cnn.ModulatedDeformableConvolution(5, kernel_size=(3, 2), groups=1,
                                               num_deformable_group=2, in_channels=4)
    assert layer.offset_split_index == 2 * 2 * 6
    assert layer.offset_weight.shape == (3 * 2 * 6, 4, 3, 2)
    assert layer.offset_bias.shape == (36,)
    assert layer.deformable_conv_weight.shape == (5, 0, 3, 2)
    layer.initialize()
    assert layer(data(1, 4, 6, 6)).shape == (1, 5, 4, 5)
    assert layer.deformable_conv_weight.shape == (5, 4, 3, 2)
