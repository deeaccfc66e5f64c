"""The examples of Gluon's hybridize tutorial, unchanged apart from the import.

Each block is compared imperative vs hybridized (with and without static_alloc), outputs and
gradients; the printed values are what MXNet 1.9.1 printed for the same code.
"""
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd
from hybridlib.gluon import nn


class Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super(Net, self).__init__(**kwargs)
        with self.name_scope():
            self.conv1 = nn.Conv2D(6, kernel_size=5)
            self.pool1 = nn.MaxPool2D(pool_size=2)
            self.conv2 = nn.Conv2D(16, kernel_size=5)
            self.pool2 = nn.MaxPool2D(pool_size=2)
            self.fc1 = nn.Dense(120)
            self.fc2 = nn.Dense(84)
            # a Dense layer would do; the tutorial takes the product by hand
            self.fc3_weight = self.params.get('fc3_weight', shape=(10, 84))

    def hybrid_forward(self, F, x, fc3_weight):
        print(type(x).__name__)
        x = self.pool1(F.relu(self.conv1(x)))
        x = self.pool2(F.relu(self.conv2(x)))
        x = x.reshape((0, -1))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = F.dot(x, fc3_weight, transpose_b=True)
        return x


class ResidualBlock(gluon.HybridBlock):
    def __init__(self, channels, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.body = nn.HybridSequential(prefix='')
            self.body.add(nn.Conv2D(channels, 3, padding=1, use_bias=False), nn.BatchNorm(),
                          nn.Activation('relu'),
                          nn.Conv2D(channels, 3, padding=1, use_bias=False), nn.BatchNorm())

    def hybrid_forward(self, F, x):
        return F.relu(x + self.body(x))


class WithConstant(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.const = self.params.get_constant('const', [[1, 2], [3, 4]])

    def hybrid_forward(self, F, x, const):
        return x * const


class AddOnes(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.broadcast_add(x, F.ones((1, 1)))


def _residual_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, padding=1), ResidualBlock(4), ResidualBlock(4))
    return net


def _grads(net, x, train):
    x = x.copy()
    x.attach_grad()
    with autograd.record(train_mode=train):
        out = net(x)
    out.backward(nd.array(np.linspace(-1, 1, out.size).reshape(out.shape)))
    params = {k: p.grad().asnumpy() for k, p in net.collect_params().items()
              if p.grad_req != 'null'}
    return out.asnumpy(), x.grad.asnumpy(), params


def _compare(make, x, train=False, **flags):
    """Outputs and gradients of a fresh imperative net and of the same net hybridized."""
    net = make()
    net.initialize(mx.init.Xavier())
    net(x)                                  # finish deferred initialisation
    saved = {k: p.data().copy() for k, p in net.collect_params().items()}
    imperative = _grads(net, x, train)
    for k, p in net.collect_params().items():
        p.set_data(saved[k])
    net.hybridize(**flags)
    hybrid = _grads(net, x, train)
    np.testing.assert_allclose(hybrid[0], imperative[0], rtol=1e-5, atol=1e-6)
    _close_in_scale(hybrid[1], imperative[1], 'input gradient')
    for key in imperative[2]:
        _close_in_scale(hybrid[2][key], imperative[2][key], key)
    return net


def _close_in_scale(actual, expected, what):
    """float32 gradients summed in another order: an entry that cancels to nearly 0 keeps an
    error of the order of the array's largest values times the float32 epsilon."""
    atol = 1e-6 * max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=atol, err_msg=what)


FLAGS = [dict(), dict(static_alloc=True, static_shape=True)]


def test_print_runs_every_call_imperatively_and_once_hybridized(capsys):
    net = Net()
    net.initialize()
    x = nd.random.normal(shape=(16, 1, 28, 28))
    net(x)
    net(x)
    # as MXNet 1.9.1 printed: the layers finish their deferred initialisation themselves
    assert capsys.readouterr().out.split() == ['NDArray', 'NDArray']
    net.hybridize()
    net(x)
    net(x)
    assert capsys.readouterr().out.split() == ['Symbol']


@pytest.mark.parametrize('flags', FLAGS)
def test_net_imperative_and_hybridized_agree(flags):
    _compare(Net, nd.random.normal(shape=(4, 1, 28, 28)), **flags)


def test_export_then_symbolblock_imports(tmp_path):
    net = Net()
    net.initialize()
    x = nd.random.normal(shape=(2, 1, 28, 28))
    net.hybridize()
    expected = net(x)
    prefix = str(tmp_path / 'model')
    net.export(prefix, epoch=1)
    assert os.path.exists(prefix + '-symbol.json') and os.path.exists(prefix + '-0001.params')
    net2 = gluon.SymbolBlock.imports(prefix + '-symbol.json', ['data'], prefix + '-0001.params')
    np.testing.assert_allclose(net2(x).asnumpy(), expected.asnumpy(), rtol=1e-6)
    saved = nd.load(prefix + '-0001.params')
    assert set(saved) == {'arg:' + k for k in net.collect_params()}
    assert 'arg:net0_fc3_weight' in saved or any(k.endswith('fc3_weight') for k in saved)


def test_export_needs_a_hybridized_forward_first(tmp_path):
    net = Net()
    net.initialize()
    with pytest.raises(RuntimeError, match='hybridize'):
        net.export(str(tmp_path / 'x'))


@pytest.mark.parametrize('flags', FLAGS)
def test_broadcast_add_with_ones(flags):
    net = AddOnes()
    net.initialize()
    x = nd.zeros((2, 3))
    assert net(x).asnumpy().tolist() == [[1, 1, 1], [1, 1, 1]]
    net.hybridize(**flags)
    assert net(x).asnumpy().tolist() == [[1, 1, 1], [1, 1, 1]]
    _compare(AddOnes, nd.array(np.arange(6).reshape(2, 3)), **flags)


@pytest.mark.parametrize('flags', FLAGS)
def test_constant_arrives_as_a_keyword_argument(flags):
    net = WithConstant()
    net.initialize()
    x = nd.ones((2, 2))
    assert net(x).asnumpy().tolist() == [[1, 2], [3, 4]]
    const = net.const
    assert const.name.endswith('_const')
    assert const.grad_req == 'null'
    net.hybridize(**flags)
    assert net(x).asnumpy().tolist() == [[1, 2], [3, 4]]
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward()
    assert x.grad.asnumpy().tolist() == [[1, 2], [3, 4]]


def test_residual_block_names_as_mxnet():
    with mx.name.NameManager():          # names count from 0, as in a fresh MXNet process
        net = _residual_net()
    names = list(net.collect_params().keys())
    # MXNet 1.9.1: HybridSequential(prefix='') puts the body's layers in the block's scope
    assert names[:4] == ['hybridsequential0_conv0_weight', 'hybridsequential0_conv0_bias',
                         'hybridsequential0_residualblock0_conv0_weight',
                         'hybridsequential0_residualblock0_batchnorm0_gamma']
    assert 'hybridsequential0_residualblock1_batchnorm1_running_var' in names
    assert len(names) == 22


@pytest.mark.parametrize('flags', FLAGS)
@pytest.mark.parametrize('train', [False, True])
def test_residual_blocks_imperative_and_hybridized_agree(flags, train):
    _compare(_residual_net, nd.random.normal(shape=(2, 3, 6, 6)), train=train, **flags)


@pytest.mark.parametrize('flags', FLAGS)
def test_batchnorm_running_statistics_update_when_hybridized(flags):
    x = nd.random.normal(shape=(4, 3, 5, 5))
    results = []
    for hybrid in (False, True):
        net = _residual_net()
        net.initialize(mx.init.Xavier())
        net(x)
        mx.random.seed(3)
        net.initialize(mx.init.Xavier(), force_reinit=True)
        if hybrid:
            net.hybridize(**flags)
        with autograd.record():
            net(x)
        results.append([p.data().asnumpy() for k, p in net.collect_params().items()
                        if 'running' in k])
    for hybrid, imperative in zip(*results):
        np.testing.assert_allclose(hybrid, imperative, rtol=1e-5, atol=1e-7)
    assert len(results[0]) == 8
    assert any(not np.allclose(v, 0) and not np.allclose(v, 1) for v in results[0])
