"""Activation layers (hybridlib/nn/activations.py): MXNet 1.9.1's names, signatures,
parameters, reprs, numbers and exported graphs; imperative vs hybridized; numpy references."""
import inspect
import math

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd
from hybridlib.block import UsageError
from hybridlib.gluon import nn
from hybrid_check import check_hybrid, data, fresh_names  # noqa: F401 (a fixture)
from mxnet_layers import case_id, cases, check_against_mxnet

# (constructor, repr, name, parameters) printed by MXNet 1.9.1 (the layers without a repr of
# their own print as an empty container, as there)
LAYERS = [
    ('nn.LeakyReLU(0.1)', 'LeakyReLU(0.1)', 'leakyrelu0', []),
    ('nn.LeakyReLU(0)', 'LeakyReLU(0)', 'leakyrelu0', []),
    ('nn.PReLU()', 'PReLU(\n\n)', 'prelu0', [('prelu0_alpha', (1,), 'float32', 'write')]),
    ('nn.PReLU(in_channels=3)', 'PReLU(\n\n)', 'prelu0',
     [('prelu0_alpha', (3,), 'float32', 'write')]),
    ('nn.ELU()', 'ELU(\n\n)', 'elu0', []),
    ('nn.ELU(0.5)', 'ELU(\n\n)', 'elu0', []),
    ('nn.SELU()', 'SELU(\n\n)', 'selu0', []),
    ('nn.GELU()', 'GELU(\n\n)', 'gelu0', []),
    ('nn.Swish()', 'Swish(\n\n)', 'swish0', []),
    ('nn.Swish(2.0)', 'Swish(\n\n)', 'swish0', []),
]


@pytest.mark.parametrize('make, text, name, params', LAYERS, ids=[c[0] for c in LAYERS])
def test_names_parameters_and_repr_as_mxnet(make, text, name, params):
    block = eval(make)
    assert (repr(block), block.name, block.prefix) == (text, name, name + '_')
    assert [(k, v.shape, np.dtype(v.dtype).name, v.grad_req)
            for k, v in block.params.items()] == params


# inspect.signature(cls.__init__) in MXNet 1.9.1 (where PReLU's default initializer prints
# as '<mxnet.initializer.Constant object at 0x...>')
SIGNATURES = {
    'LeakyReLU': '(self, alpha, **kwargs)',
    'PReLU': '(self, alpha_initializer=Constant(value=0.25), in_channels=1, **kwargs)',
    'ELU': '(self, alpha=1.0, **kwargs)',
    'SELU': '(self, **kwargs)',
    'GELU': '(self, **kwargs)',
    'Swish': '(self, beta=1.0, **kwargs)',
}


@pytest.mark.parametrize('name', SIGNATURES)
def test_signatures_as_mxnet(name):
    assert str(inspect.signature(getattr(nn, name).__init__)) == SIGNATURES[name]


def test_prelu_default_initializer_is_constant_quarter():
    layer = nn.PReLU()
    assert isinstance(layer.alpha.init, mx.init.Constant)
    layer.initialize()
    assert layer.alpha.data().asnumpy().tolist() == [0.25]
    assert nn.PReLU(alpha_initializer='zeros').alpha.init == 'zeros'


def test_leakyrelu_refuses_a_negative_slope_as_mxnet():
    with pytest.raises(AssertionError, match='Slope coefficient for LeakyReLU must be no less '
                                             'than 0.'):
        nn.LeakyReLU(-0.1)
    with pytest.raises(UsageError):
        nn.LeakyReLU(-1)


@pytest.mark.parametrize('case', [c for c in cases('nn.') if c['make'] != 'nn.SELU()'],
                         ids=case_id)
def test_layers_compute_and_export_as_mxnet(case, tmp_path):
    check_against_mxnet(case, tmp_path)


SELU_LAMBDA, SELU_ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717


def test_selu_as_mxnet_except_its_wrong_gradient_below_zero(tmp_path):
    """MXNet 1.9.1's SELU gradient for x <= 0 is lambda * (alpha + y), from the output y; the
    derivative is lambda * alpha * exp(x) = y + lambda * alpha. hybridlib has the derivative;
    everything else (output, graph, gradient above 0) is MXNet's."""
    (case,) = cases('nn.SELU()')
    x = data(3, 4).asnumpy().astype(np.float64)
    y = SELU_LAMBDA * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))
    head = np.sin(np.arange(12) * 0.7 + 1.0).reshape(3, 4)
    mxnet_grad = head * SELU_LAMBDA * np.where(x > 0, 1, SELU_ALPHA + y)
    np.testing.assert_allclose(case['input grad'], mxnet_grad, rtol=1e-5, atol=1e-6)
    true_grad = head * SELU_LAMBDA * np.where(x > 0, 1, SELU_ALPHA * np.exp(x))
    case = dict(case, **{'input grad': true_grad.tolist()})
    check_against_mxnet(case, tmp_path)


def test_activations_match_numpy_formulas():
    x64 = np.linspace(-3, 3, 13)
    x = nd.array(x64)
    phi = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x64])
    expected = {
        'nn.LeakyReLU(0.2)': np.where(x64 >= 0, x64, 0.2 * x64),
        'nn.ELU(0.5)': np.where(x64 > 0, x64, 0.5 * np.expm1(x64)),
        'nn.SELU()': SELU_LAMBDA * np.where(x64 > 0, x64, SELU_ALPHA * np.expm1(x64)),
        'nn.GELU()': x64 * phi,
        'nn.Swish(1.5)': x64 / (1 + np.exp(-1.5 * x64)),
    }
    for make, want in expected.items():
        layer = eval(make)
        np.testing.assert_allclose(layer(x).asnumpy(), want, rtol=1e-5, atol=1e-6, err_msg=make)


def test_prelu_per_channel_slopes_learn():
    layer = nn.PReLU(in_channels=2)
    layer.initialize()
    layer.alpha.set_data(nd.array([0.1, 0.5]))
    x = nd.array([[[-2.0, 1.0], [-4.0, -1.0]]])        # (N=1, C=2, W=2)
    with autograd.record():
        y = layer(x)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), [[[-0.2, 1.0], [-2.0, -0.5]]], rtol=1e-7)
    # d y / d alpha_c = the sum of the negative inputs of channel c
    assert layer.alpha.grad().asnumpy().tolist() == [-2.0, -5.0]


@pytest.mark.parametrize('train', [False, True])
@pytest.mark.parametrize('make, shape', [
    (lambda: nn.LeakyReLU(0.1), (3, 4)),
    (lambda: nn.LeakyReLU(0), (3, 4)),
    (lambda: nn.PReLU(), (2, 3, 2)),
    (lambda: nn.PReLU(in_channels=3, alpha_initializer=mx.init.Uniform(0.5)), (2, 3, 2)),
    (lambda: nn.ELU(), (3, 4)),
    (lambda: nn.ELU(0.3), (3, 4)),
    (lambda: nn.SELU(), (3, 4)),
    (lambda: nn.GELU(), (3, 4)),
    (lambda: nn.Swish(), (3, 4)),
    (lambda: nn.Swish(0.5), (3, 4)),
], ids=['leaky', 'leaky0', 'prelu', 'prelu_channels', 'elu', 'elu03', 'selu', 'gelu', 'swish',
        'swish05'])
def test_activations_imperative_and_hybridized_agree(make, shape, train):
    layer = make()
    layer.initialize()
    check_hybrid(layer, [data(*shape)], train=train)


def test_activations_in_float64_and_float16():
    for layer in (nn.LeakyReLU(0.1), nn.ELU(), nn.SELU(), nn.GELU(), nn.Swish(), nn.PReLU()):
        layer.initialize()
        layer.cast('float64')
        assert layer(data(2, 3).astype('float64')).dtype == np.float64
        layer.cast('float16')
        out = layer(data(2, 3).astype('float16'))
        assert out.dtype == np.float16 and np.isfinite(out.asnumpy()).all()
