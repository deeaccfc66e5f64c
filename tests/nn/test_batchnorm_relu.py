"""gluon.nn.BatchNormReLU (hybridlib/nn/basic_layers.py): MXNet 1.9.1's signature, repr,
parameters, numbers (a training step: output, gradients, running statistics; then predict
mode) and exported graph, and imperative against hybridized. MXNet's numbers come from
tests/data/make_contrib_misc_files.py."""
import inspect
import json
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd
from hybridlib.gluon import nn
from hybrid_check import check_hybrid, data, fresh_names  # noqa: F401 (a fixture)

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data')
NUMBERS = np.load(os.path.join(DATA, 'contrib_misc-numbers.npz'))
with open(os.path.join(DATA, 'contrib_misc-facts.json')) as _f:
    FACTS = json.load(_f)['bn_relu_block']


def test_signature_and_class_as_mxnet():
    assert str(inspect.signature(nn.BatchNormReLU)) == (
        "(axis=1, momentum=0.9, epsilon=1e-05, center=True, scale=True, "
        "use_global_stats=False, beta_initializer='zeros', gamma_initializer='ones', "
        "running_mean_initializer='zeros', running_variance_initializer='ones', in_channels=0, "
        "**kwargs)")
    assert 'BatchNormReLU' in nn.__all__ and gluon.nn.BatchNormReLU is nn.BatchNormReLU


@pytest.mark.parametrize('case', sorted(FACTS))
def test_matches_mxnet(case):
    facts = FACTS[case]
    prefix = f'bn_relu_block_{case}/'
    net = nn.BatchNormReLU(**facts['kwargs'])
    net.initialize()
    x = NUMBERS[prefix + 'x']
    net(nd.array(x))
    assert repr(net) == facts['repr']
    params = net.collect_params()
    assert list(params) == facts['params']
    assert [p.grad_req for p in params.values()] == facts['grad_req']
    for i, p in enumerate(params.values()):
        p.set_data(nd.array(NUMBERS[f'{prefix}param{i}']))
    xa = nd.array(x)
    xa.attach_grad()
    with autograd.record():
        y = net(xa)
    y.backward(nd.array(NUMBERS[prefix + 'cot']))
    np.testing.assert_allclose(y.asnumpy(), NUMBERS[prefix + 'out'], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xa.grad.asnumpy(), NUMBERS[prefix + 'x_grad'], rtol=1e-4,
                               atol=1e-5)
    for i, p in enumerate(params.values()):
        if p.name.endswith('gamma') and net._kwargs['fix_gamma']:
            # with scale=False MXNet's kernel writes 1 into gamma; hybridlib's BatchNorm
            # leaves the array alone (it uses 1 all the same)
            assert p.data().asnumpy().tolist() == NUMBERS[f'{prefix}param{i}'].tolist()
            assert NUMBERS[f'{prefix}param{i}_after'].tolist() == [1, 1, 1]
            continue
        np.testing.assert_allclose(p.data().asnumpy(), NUMBERS[f'{prefix}param{i}_after'],
                                   rtol=1e-5, atol=1e-6, err_msg=p.name)
        if p.grad_req != 'null':
            np.testing.assert_allclose(p.grad().asnumpy(), NUMBERS[f'{prefix}param{i}_grad'],
                                       rtol=1e-4, atol=1e-5, err_msg=p.name)
    np.testing.assert_allclose(net(nd.array(x)).asnumpy(), NUMBERS[prefix + 'predict'],
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('case', sorted(FACTS))
def test_export_as_mxnet(case, tmp_path):
    facts = FACTS[case]
    net = nn.BatchNormReLU(**facts['kwargs'])
    net.initialize()
    net.hybridize()
    net(nd.array(NUMBERS[f'bn_relu_block_{case}/x']))
    net.export(str(tmp_path / 'net'))
    graph = json.loads((tmp_path / 'net-symbol.json').read_text())
    # the fused node with four outputs (one visible), its aux inputs, the variables' attributes
    assert graph == facts['graph']


@pytest.mark.parametrize('train', [False, True])
@pytest.mark.parametrize('kwargs, shape', [
    ({}, (4, 3)),
    ({'axis': 3, 'momentum': 0.5}, (2, 2, 2, 3)),
    ({'center': False, 'scale': False, 'epsilon': 1e-3}, (3, 2, 2)),
    ({'use_global_stats': True}, (4, 3)),
], ids=['default', 'axis3', 'no_center_scale', 'global_stats'])
def test_imperative_and_hybridized_agree(kwargs, shape, train):
    layer = nn.BatchNormReLU(**kwargs)
    layer.initialize()
    layer(data(*shape))
    for p, v in ((layer.running_mean, 0.3), (layer.running_var, 1.7)):
        p.set_data(nd.array(np.linspace(v - 0.2, v + 0.2, p.shape[0])))
    result = check_hybrid(layer, [data(*shape)], train=train)
    out = result['outputs'][0]
    assert (out >= 0).all() and (out == 0).any() and (out > 0).any()


def test_is_batchnorm_then_relu():
    x = data(2, 3, 4)
    fused, plain = nn.BatchNormReLU(in_channels=3), nn.BatchNorm(in_channels=3)
    for net in (fused, plain):
        net.initialize(mx.init.Normal(0.5))
    for a, b in zip(fused.collect_params().values(), plain.collect_params().values()):
        b.set_data(a.data())
    grads = []
    for net, post in ((fused, lambda y: y), (plain, nd.relu)):
        xa = x.copy()
        xa.attach_grad()
        with autograd.record():
            y = post(net(xa))
        y.backward(nd.array(np.cos(np.arange(24)).reshape(2, 3, 4)))
        grads.append((y.asnumpy(), xa.grad.asnumpy(), net.gamma.grad().asnumpy(),
                      net.running_mean.data().asnumpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
