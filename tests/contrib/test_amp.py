"""contrib.amp (hybridlib/contrib/amp): MXNet 1.9.1's lists, casts, loss scaling and graph
conversion; the same casts imperatively and hybridized; float16 networks (``cast``) on the cpu.

Literal graphs and dtypes below were printed by MXNet 1.9.1 (``mxnet.contrib.amp``); MXNet
computes float16 FullyConnected/Convolution only on GPUs, so its numbers are not compared.
``convert_bucketing_module`` runs the scenario of tests/data/make_amp_files.py, which wrote
MXNet's converted buckets to tests/data/amp-bucketing.json.
"""
import importlib.util
import json
import logging
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd, sym
from hybridlib.base import MXNetError, NotSupportedError
from hybridlib.contrib import amp
from hybridlib.ops import frontend
from hybrid_check import check_hybrid, fresh_names  # noqa: F401 (a fixture)

F16, F32 = np.float16, np.float32


@pytest.fixture
def amp_off(monkeypatch):
    """AMP not initialised yet; everything ``amp.init`` sets is put back after the test."""
    for name, value in (('_amp_initialized', False), ('_amp_loss_scale_initialized', False),
                        ('_loss_scaler', None)):
        monkeypatch.setattr(amp.amp, name, value)
    monkeypatch.setattr(frontend, 'input_rule', None)
    return amp


@pytest.fixture
def amp_on(amp_off):
    """``amp.init()`` for one test."""
    amp.init()
    return amp


def small_net():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, padding=1, in_channels=2), gluon.nn.BatchNorm(in_channels=4),
            gluon.nn.Activation('relu'), gluon.nn.Dense(3, in_units=4 * 5 * 5))
    net.initialize(mx.init.Xavier())
    return net


def inputs():
    x = nd.array(np.sin(np.arange(2 * 2 * 5 * 5)).reshape(2, 2, 5, 5))
    return x, nd.array([0, 2])


# -------------------------------------------------------------------------------------------------
# The lists and the API
# -------------------------------------------------------------------------------------------------

def test_lists_and_api_as_mxnet():
    assert amp.list_lp16_ops('float16') == ['Convolution', 'Deconvolution', 'FullyConnected',
                                            'RNN']
    assert amp.list_conditional_fp32_ops('float16') == [
        ('Activation', 'act_type', ['softrelu']), ('LeakyReLU', 'act_type', ['elu', 'selu'])]
    fp32 = amp.list_fp32_ops('float16')
    assert len(fp32) == 136 and {'softmax', 'exp', 'log', 'norm', 'LayerNorm'} <= set(fp32)
    widest = amp.list_widest_type_cast('float16')
    assert len(widest) == 113 and {'_Plus', 'broadcast_add', 'Concat', 'where'} <= set(widest)
    assert len(amp.list_lp16_fp32_ops('float16')) == 318
    assert amp.list_loss_output_functions('float16') == [
        'SoftmaxOutput', 'LinearRegressionOutput', 'LogisticRegressionOutput',
        'MAERegressionOutput']
    assert amp.list_lp16_use_fp32_params('float16') is None
    assert mx.contrib.amp is amp and amp.LossScaler().loss_scale == 2 ** 16
    with pytest.raises(NotSupportedError, match='bfloat16'):
        amp.list_lp16_ops('bfloat16')


def test_init_refuses_what_it_cannot_do(amp_off):
    with pytest.raises(NotSupportedError, match='bfloat16'):
        amp.init('bfloat16')
    with pytest.raises(AssertionError, match='float16'):
        amp.init('float64')
    with pytest.raises(AssertionError, match='FullyConnected is in two lists'):
        amp.init(fp32_ops=['FullyConnected'])
    with pytest.raises(MXNetError, match='Did you mean FullyConnected'):
        amp.init(target_precision_ops=['FullyConected'])
    # in MXNet's lists, but sparse storage does not exist here
    with pytest.warns(UserWarning, match='_sparse_Embedding are not implemented'):
        amp.init(target_precision_ops=['_sparse_Embedding', 'FullyConnected'],
                 conditional_fp32_ops=[('Activation', 'act_type', ['softrelu']),
                                       ('Activation', 'act_type', ['tanh'])])
    assert frontend.input_rule is not None
    x16 = nd.ones((2,), dtype='float16')
    assert nd.Activation(x16, act_type='tanh').dtype == F32       # either condition casts
    assert nd.Activation(x16, act_type='softrelu').dtype == F32
    assert nd.Activation(x16, act_type='relu').dtype == F16


# -------------------------------------------------------------------------------------------------
# The casts
# -------------------------------------------------------------------------------------------------

def test_ndarray_calls_cast_their_inputs(amp_on):
    x16, x32 = nd.ones((2, 3), dtype='float16'), nd.ones((2, 3))
    w = nd.ones((4, 3))
    assert nd.FullyConnected(x32, w, num_hidden=4, no_bias=True).dtype == F16
    assert nd.op.FullyConnected(x32, w, num_hidden=4, no_bias=True).dtype == F16
    assert nd.exp(x16).dtype == F32 and x16.exp().dtype == F32     # MXNet on a cpu: float16
    assert nd.softmax(x16).dtype == F32 and nd.relu(x16).dtype == F16
    assert nd.Activation(x16, act_type='softrelu').dtype == F32
    assert nd.Activation(x16, act_type='relu').dtype == F16
    # the widest type: operator functions, their aliases and arithmetic alike
    for out in (x16 + x32, x32 * x16, nd.broadcast_add(x16, x32), nd.op._Plus(x16, x32),
                nd.concat(x16, x32, dim=0), nd.add(x16, x32), x16 > x32):
        assert out.dtype == F32
    assert (x16 + x16).dtype == F16
    assert nd.cast(x32, dtype='float16').dtype == F16      # neither listed: as called


def test_gradients_flow_back_through_the_casts(amp_on):
    x = nd.array([[1.0, -2.0, 3.0]])
    w = nd.array([[0.5, 0.25, -1.0]])
    for a in (x, w):
        a.attach_grad()
    with autograd.record():
        y = nd.FullyConnected(x, w, num_hidden=1, no_bias=True)
        z = nd.exp(y)
    z.backward()
    assert y.dtype == F16 and z.dtype == F32
    assert x.grad.dtype == F32 and w.grad.dtype == F32
    expected = np.exp(-3.0)
    np.testing.assert_allclose(x.grad.asnumpy(), expected * w.asnumpy(), rtol=1e-3)
    np.testing.assert_allclose(w.grad.asnumpy(), expected * x.asnumpy(), rtol=1e-3)


def test_running_statistics_are_not_cast(amp_off):
    amp.init(fp32_ops=['BatchNorm'])
    x = nd.ones((2, 3), dtype='float16')
    mean, var = nd.zeros((3,)), nd.ones((3,))
    with autograd.train_mode():
        out = nd.BatchNorm(x + 1, nd.ones((3,)), nd.zeros((3,)), mean, var, momentum=0.5)
    assert out.dtype == F32
    # updated in place: the operator got the arrays themselves, not cast copies
    assert mean.dtype == F32 and mean.asnumpy().tolist() == [1.0, 1.0, 1.0]


def test_symbols_record_the_casts_as_mxnet(amp_on):
    out = sym.FullyConnected(sym.var('x'), sym.var('w'), sym.var('b'), num_hidden=2)
    graph = json.loads(out.tojson(remove_amp_cast=False))
    assert [(n['op'], n['name']) for n in graph['nodes']] == [
        ('null', 'x'), ('amp_cast', 'amp_cast0'), ('null', 'w'), ('amp_cast', 'amp_cast1'),
        ('null', 'b'), ('amp_cast', 'amp_cast2'), ('FullyConnected', 'fullyconnected0')]
    assert graph['nodes'][1]['attrs'] == {'dtype': 'float16'}
    assert (sym.var('a') + sym.var('b')).get_internals().list_outputs() == [
        'a', 'b', 'amp_multicast0_output0', 'amp_multicast0_output1', '_plus0_output']
    assert sym.exp(sym.var('a')).get_internals().list_outputs() == [
        'a', 'amp_cast3_output', 'exp0_output']
    # a cast that is known to change nothing is left out (MXNet records it)
    same = sym.exp(sym.var('c', dtype='float32'))
    assert same.get_internals().list_outputs() == ['c', 'exp1_output']
    # MXNet's tojson() and save() leave out the casts
    assert 'amp_cast' not in out.tojson()
    assert json.loads(out.tojson())['nodes'][3]['inputs'] == [[0, 0, 0], [1, 0, 0], [2, 0, 0]]


def test_remove_amp_cast_keeps_outputs_as_mxnet():
    a, b = sym.var('a'), sym.var('b')
    cast = sym.amp_multicast(sym.amp_cast(a, dtype='float16'), b, num_outputs=2)
    add = sym.elemwise_add(cast[0], cast[1], name='add')
    group = sym.Group([add, sym.amp_cast(add, dtype='float32'), cast[1]])
    nodes = json.loads(group.tojson())['nodes']
    assert [(n['name'], n['inputs']) for n in nodes] == [
        ('a', []), ('b', []), ('add', [[0, 0, 0], [1, 0, 0]]), ('amp_cast1', [[2, 0, 0]]),
        ('amp_multicast0', [[0, 0, 0], [1, 0, 0]])]
    assert group.list_outputs() == ['add_output', 'amp_cast1_output', 'amp_multicast0_output1']
    assert len(json.loads(group.tojson(remove_amp_cast=False))['nodes']) == 6


def test_network_is_the_same_imperative_and_hybridized(amp_on):
    """Forward and gradients, in training mode (batch statistics) and in predict mode."""
    net = small_net()
    x, _ = inputs()
    out = check_hybrid(net, [x], train=True, rtol=1e-3, atol=1e-3)   # float16 rounding
    assert out['outputs'][0].dtype == F16
    assert all(g.dtype == F32 for g in out['param grads'].values())
    check_hybrid(net, [x], train=False, rtol=1e-3, atol=1e-3)


def test_loss_and_gradients_as_imperative_when_hybridized(amp_on):
    results = []
    for hybridize in (False, True):
        with mx.name.NameManager():
            mx.random.seed(1)
            net = small_net()
        if hybridize:
            net.hybridize()
        x, label = inputs()
        with autograd.record():
            loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), label)
        loss.backward()
        results.append((loss.asnumpy(), [p.grad().asnumpy() for p in
                                         net.collect_params().values() if p.grad_req != 'null']))
    (loss_a, grads_a), (loss_b, grads_b) = results
    assert loss_a.dtype == F32        # log_softmax runs in float32
    np.testing.assert_array_equal(loss_a, loss_b)
    for a, b in zip(grads_a, grads_b):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
    graph = net._cached_graph[1]
    casts = [n['name'] for n in json.loads(graph.tojson(remove_amp_cast=False))['nodes']
             if n['op'] == 'amp_cast']
    # the data and the convolution's parameters; Dense reads float16 from relu already
    assert casts == ['conv0_amp_cast0', 'conv0_amp_cast1', 'conv0_amp_cast2',
                     'dense0_amp_cast0', 'dense0_amp_cast1']
    assert 'amp_cast' not in graph.tojson()


def test_amp_results_are_close_to_float32(amp_off):
    net = small_net()
    x, _ = inputs()
    expected = net(x)
    amp.init()
    got = net(x)
    assert expected.dtype == F32 and got.dtype == F16
    np.testing.assert_allclose(got.asnumpy(), expected.asnumpy(), rtol=1e-2, atol=1e-2)


# -------------------------------------------------------------------------------------------------
# Loss scaling
# -------------------------------------------------------------------------------------------------

def _amp_trainer(net, loss_scale=2. ** 6):
    """A Trainer with loss scaling from ``loss_scale`` (MXNet's 2**16 overflows float16
    gradients of this net: its first steps would be skipped)."""
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    amp.init_trainer(trainer)
    scaler = trainer._amp_loss_scaler
    scaler._loss_scale = scaler._next_loss_scale = loss_scale
    return trainer


def _train_step(net, trainer, x, label):
    with autograd.record():
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), label).mean()
        with amp.scale_loss(loss, trainer) as scaled:
            pass
    scaled.backward()
    return loss


def test_scale_loss_scales_gradients_and_trainer_divides(amp_on):
    net = small_net()
    trainer = _amp_trainer(net)
    x, label = inputs()
    weight = net[3].weight
    before = weight.data().asnumpy()
    with autograd.record():
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), label).mean()
    loss.backward()
    unscaled = weight.grad().asnumpy().copy()
    _train_step(net, trainer, x, label)
    assert trainer._scale == 2. ** -6
    np.testing.assert_allclose(weight.grad().asnumpy(), unscaled * 2 ** 6, rtol=2e-3,
                               atol=1e-3)
    trainer.step(1)
    np.testing.assert_allclose(weight.data().asnumpy(), before - 0.1 * unscaled, rtol=1e-3,
                               atol=1e-5)
    with amp.scale_loss([loss, loss * 2], trainer) as scaled:
        assert [s.asscalar() for s in scaled] == pytest.approx(
            [loss.asscalar() * 2 ** 6, loss.asscalar() * 2 ** 7], rel=1e-6)


def test_a_loss_scale_that_overflows_backs_off(amp_on):
    net = small_net()
    trainer = _amp_trainer(net, loss_scale=2. ** 24)       # LossScaler's ceiling
    scaler = trainer._amp_loss_scaler
    x, label = inputs()
    before = net[0].weight.data().asnumpy()
    scales = []
    with np.errstate(over='ignore', invalid='ignore'):
        for _ in range(20):
            _train_step(net, trainer, x, label)
            scales.append(scaler.loss_scale)
            trainer.step(1)
            if not np.array_equal(net[0].weight.data().asnumpy(), before):
                break
    # skipped steps halve the scale (from the step after, as in MXNet) until one goes through
    assert len(scales) > 2 and scales[:3] == [2. ** 24, 2. ** 24, 2. ** 23]
    assert all(b == a / 2 for a, b in zip(scales[1:], scales[2:]))
    assert not np.array_equal(net[0].weight.data().asnumpy(), before)


def test_overflow_skips_the_step_and_halves_the_scale(amp_on):
    net = small_net()
    trainer = _amp_trainer(net)
    scaler = trainer._amp_loss_scaler
    x, label = inputs()
    _train_step(net, trainer, x, label)
    net[0].weight.grad()[0, 0, 0, 0] = np.inf
    before = {k: p.data().asnumpy() for k, p in net.collect_params().items()}
    trainer.step(1)
    for k, p in net.collect_params().items():
        np.testing.assert_array_equal(p.data().asnumpy(), before[k], err_msg=k)
    assert scaler._next_loss_scale == 2. ** 5        # in use from the next step, as in MXNet
    _train_step(net, trainer, x, label)
    trainer.step(1)
    assert scaler.loss_scale == 2. ** 5
    assert not np.array_equal(net[3].weight.data().asnumpy(), before['dense0_weight'])


def test_loss_scale_grows_after_a_window_without_overflow():
    scaler = amp.LossScaler()
    scaler._scale_seq_len = 3
    param = gluon.Parameter('w', shape=(2,))
    param.initialize()
    for _ in range(3):
        assert not scaler.has_overflow([param])
    assert scaler.loss_scale == 2. ** 16 and scaler._next_loss_scale == 2. ** 17
    scaler._loss_scale = scaler._next_loss_scale = 2. ** 24
    for _ in range(3):
        scaler.has_overflow([param])
    assert scaler._next_loss_scale == 2. ** 24       # the ceiling
    assert not scaler.has_overflow([])


def test_unscale_divides_the_gradients_now(amp_on):
    net = small_net()
    trainer = _amp_trainer(net)
    x, label = inputs()
    _train_step(net, trainer, x, label)
    scaled = net[3].weight.grad().asnumpy()
    amp.unscale(trainer)
    assert trainer._scale == 1.0
    np.testing.assert_allclose(net[3].weight.grad().asnumpy(), scaled / 2 ** 6, rtol=1e-6)


def test_trainer_setup_errors(amp_off, monkeypatch):
    net = small_net()
    trainer = gluon.Trainer(net.collect_params(), 'sgd')
    with pytest.raises(AssertionError, match='forget to call amp.init()'):
        amp.init_trainer(trainer)
    with pytest.raises(AssertionError, match='amp.init_trainer'):
        with amp.scale_loss(nd.ones((1,)), trainer):
            pass
    monkeypatch.setattr(amp.amp, '_amp_initialized', True)
    with pytest.raises(TypeError, match='only compatible with Gluon Trainer'):
        amp.init_trainer(mx.optimizer.SGD())
    with pytest.raises(TypeError, match='should be a Gluon Trainer'):
        amp.unscale(net)


def test_loss_output_operators_scale_their_gradient(amp_on, caplog):
    data = nd.array([[1.0, 2.0, 0.5]])
    data.attach_grad()
    with autograd.record():
        out = nd.SoftmaxOutput(data, nd.array([1]))
    out.backward()
    p = np.exp([1.0, 2.0, 0.5]) / np.exp([1.0, 2.0, 0.5]).sum()
    np.testing.assert_allclose(data.grad.asnumpy()[0], (p - [0, 1, 0]) * 2 ** 16, rtol=1e-3)
    with caplog.at_level(logging.WARNING):
        sym.SoftmaxOutput(sym.var('data'))
    assert 'does not support dynamic loss scaling' in caplog.text


# -------------------------------------------------------------------------------------------------
# Converting a float32 graph
# -------------------------------------------------------------------------------------------------

def _nodes(symbol):
    return [(n['op'], n['name'], [e[:2] for e in n['inputs']])
            for n in json.loads(symbol.tojson(remove_amp_cast=False))['nodes']]


def test_convert_symbol_as_mxnet():
    data = sym.var('data')
    bn = sym.BatchNorm(sym.Convolution(data, kernel=(3, 3), num_filter=4, name='conv'),
                       name='bn')
    relu = sym.Activation(bn, act_type='relu', name='relu')
    softrelu = sym.Activation(bn, act_type='softrelu', name='srelu')
    added = sym.broadcast_add(sym.elemwise_add(relu, softrelu, name='add'), data, name='add2')
    fc = sym.FullyConnected(added, num_hidden=3, name='fc')
    probs = sym.softmax(sym.exp(fc, name='exp'), name='sm')
    out = sym.Group([sym.concat(probs, fc, dim=1, name='cat'),
                     sym.FullyConnected(probs, num_hidden=2, name='fc2')])
    converted = amp.convert_symbol(out)
    expected = [   # printed by MXNet 1.9.1 (its name for add2's cast: add2_0_amp_cast_float16)
        ('null', 'data', []), ('amp_cast', 'data_amp_cast_float16', [[0, 0]]),
        ('null', 'conv_weight', []), ('amp_cast', 'conv_weight_amp_cast_float16', [[2, 0]]),
        ('null', 'conv_bias', []), ('amp_cast', 'conv_bias_amp_cast_float16', [[4, 0]]),
        ('Convolution', 'conv', [[1, 0], [3, 0], [5, 0]]),
        ('null', 'bn_gamma', []), ('null', 'bn_beta', []), ('null', 'bn_moving_mean', []),
        ('null', 'bn_moving_var', []),
        ('BatchNorm', 'bn', [[6, 0], [7, 0], [8, 0], [9, 0], [10, 0]]),
        ('Activation', 'relu', [[11, 0]]),
        ('amp_cast', 'relu_output_amp_cast_float32', [[12, 0]]),
        ('amp_cast', 'bn_output_amp_cast_float32', [[11, 0]]),
        ('Activation', 'srelu', [[14, 0]]), ('elemwise_add', 'add', [[13, 0], [15, 0]]),
        ('amp_cast', 'data_amp_cast_float32', [[0, 0]]),
        ('broadcast_add', 'add2', [[16, 0], [17, 0]]),
        ('amp_cast', 'add2_output_amp_cast_float16', [[18, 0]]),
        ('null', 'fc_weight', []), ('amp_cast', 'fc_weight_amp_cast_float16', [[20, 0]]),
        ('null', 'fc_bias', []), ('amp_cast', 'fc_bias_amp_cast_float16', [[22, 0]]),
        ('FullyConnected', 'fc', [[19, 0], [21, 0], [23, 0]]),
        ('amp_cast', 'fc_output_amp_cast_float32', [[24, 0]]),
        ('exp', 'exp', [[25, 0]]), ('softmax', 'sm', [[26, 0]]),
        ('Concat', 'cat', [[27, 0], [25, 0]]),
        ('amp_cast', 'sm_output_amp_cast_float16', [[27, 0]]),
        ('null', 'fc2_weight', []), ('amp_cast', 'fc2_weight_amp_cast_float16', [[30, 0]]),
        ('null', 'fc2_bias', []), ('amp_cast', 'fc2_bias_amp_cast_float16', [[32, 0]]),
        ('FullyConnected', 'fc2', [[29, 0], [31, 0], [33, 0]]),
        ('amp_cast', 'fc2_output_amp_cast_float32', [[34, 0]])]
    assert _nodes(converted) == expected
    assert converted.list_outputs() == ['cat_output', 'fc2_output_amp_cast_float32_output']
    assert _nodes(out)[:3] == [('null', 'data', []), ('null', 'conv_weight', []),
                               ('null', 'conv_bias', [])]           # the original is unchanged


def test_convert_symbol_widest_and_optional_params_as_mxnet():
    a, b = sym.var('a'), sym.var('b')
    fc = sym.FullyConnected(a, num_hidden=3, name='fc')
    assert _nodes(amp.convert_symbol(sym.elemwise_add(fc, b, name='add')))[6:] == [
        ('FullyConnected', 'fc', [[1, 0], [3, 0], [5, 0]]), ('null', 'b', []),
        ('amp_multicast', 'fc_output_amp_multicast', [[6, 0], [7, 0]]),
        ('elemwise_add', 'add', [[8, 0], [8, 1]]),
        ('amp_cast', 'add_output_amp_cast_float32', [[9, 0]])]
    converted = amp.convert_symbol(fc, data_names=['a'], cast_optional_params=True)
    assert _nodes(converted) == [
        ('null', 'a', []), ('amp_cast', 'a_amp_cast_float16', [[0, 0]]),
        ('null', 'fc_weight', []), ('null', 'fc_bias', []),
        ('FullyConnected', 'fc', [[1, 0], [2, 0], [3, 0]]),
        ('amp_cast', 'fc_output_amp_cast_float32', [[4, 0]])]
    # MXNet 1.9.1: an implicit variable carries its operator's attributes
    assert converted.attr_dict()['fc_weight'] == {'__dtype__': '2', 'num_hidden': '3'}
    kept = amp.convert_symbol(sym.exp(fc, name='e'), excluded_sym_names=['fc'])
    assert [n[0] for n in _nodes(kept)] == ['null', 'null', 'null', 'FullyConnected', 'exp']
    with pytest.raises(AssertionError, match='Common ops'):
        amp.convert_symbol(fc, target_dtype_ops=['exp'], fp32_ops=['exp'])
    with pytest.raises(AssertionError, match='in none of them'):
        amp.convert_symbol(fc, fp32_ops=['my_op'])


def test_convert_model_and_hybrid_block():
    net = small_net()
    net.hybridize()
    x, _ = inputs()
    expected = net(x).asnumpy()
    converted = amp.convert_hybrid_block(net, ctx=mx.cpu())
    out = converted(x)
    assert out.dtype == F32
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-2, atol=1e-2)
    optional = amp.convert_hybrid_block(net, ctx=mx.cpu(), cast_optional_params=True)
    params = {k: p.data().dtype for k, p in optional.collect_params().items()}
    assert params['dense0_weight'] == F16 and params['batchnorm0_gamma'] == F32
    np.testing.assert_allclose(optional(x).asnumpy(), expected, rtol=1e-2, atol=1e-2)
    graph = net._cached_graph[1]
    args = {k: p.data() for k, p in net.collect_params().items()}
    aux = {k: args.pop(k) for k in graph.list_auxiliary_states()}
    new_sym, new_args, new_aux = amp.convert_model(graph, args, aux, cast_optional_params=True)
    assert new_args['conv0_weight'].dtype == F16
    assert new_aux['batchnorm0_running_mean'].dtype == F32
    with pytest.raises(RuntimeError, match='hybridize'):
        amp.convert_hybrid_block(small_net(), ctx=mx.cpu())


# -------------------------------------------------------------------------------------------------
# float16 networks: net.cast('float16')
# -------------------------------------------------------------------------------------------------

def test_cast_float16_keeps_batchnorm_in_float32_as_mxnet():
    net = small_net()
    net.cast('float16')
    dtypes = {k: p.data().dtype for k, p in net.collect_params().items()}
    assert dtypes == {'conv0_weight': F16, 'conv0_bias': F16, 'batchnorm0_gamma': F32,
                      'batchnorm0_beta': F32, 'batchnorm0_running_mean': F32,
                      'batchnorm0_running_var': F32, 'dense0_weight': F16,
                      'dense0_bias': F16}


def test_float16_network_trains_with_multi_precision():
    x, label = inputs()
    results = []
    for hybridize in (False, True):
        with mx.name.NameManager():
            mx.random.seed(3)
            net = small_net()
        net.cast('float16')
        if hybridize:
            net.hybridize()
        trainer = gluon.Trainer(net.collect_params(), 'sgd',
                                {'learning_rate': 0.5, 'multi_precision': True})
        before = net[3].weight.data().asnumpy()
        with autograd.record():
            out = net(x.astype('float16'))
            loss = gluon.loss.SoftmaxCrossEntropyLoss()(out, label.astype('float16'))
        loss.backward()
        trainer.step(2)
        assert out.dtype == F16 and net[3].weight.grad().dtype == F16
        after = net[3].weight.data().asnumpy()
        assert after.dtype == F16 and not np.array_equal(after, before)
        assert net[1].running_mean.data().dtype == F32
        assert np.abs(net[1].running_mean.data().asnumpy()).sum() > 0
        results.append((out.asnumpy(), loss.asnumpy(), after))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-3)


def test_amp_init_after_hybridize_retraces(amp_off):
    net = mx.gluon.nn.Dense(3, in_units=4)
    net.initialize()
    net.hybridize(static_alloc=True)
    x = nd.ones((2, 4))
    assert net(x).dtype == F32
    amp_off.init()
    assert net(x).dtype == F16                      # the new graph casts, as imperatively
    net.hybridize(False)
    assert net(x).dtype == F16


# -------------------------------------------------------------------------------------------------
# convert_bucketing_module
# -------------------------------------------------------------------------------------------------

_DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data')
_spec = importlib.util.spec_from_file_location('make_amp_files',
                                               os.path.join(_DATA, 'make_amp_files.py'))
AMP_GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(AMP_GEN)


def test_convert_bucketing_module_as_mxnet():
    with open(AMP_GEN.FACTS) as f:
        expected = json.load(f)
    got = json.loads(json.dumps(AMP_GEN.run_convert_bucketing(mx)))
    for case in ('plain', 'optional'):
        assert sorted(got[case]['buckets']) == ['2', '3']
        for key in ('2', '3'):
            assert got[case]['buckets'][key] == expected[case]['buckets'][key], (case, key)
        assert got[case] == expected[case], case
    assert 'convert_bucketing_module' not in amp.__all__       # contrib.amp.amp's, as MXNet


def test_converted_bucket_computes_as_the_float32_one():
    mod = AMP_GEN.bucketing_module(mx, logging.getLogger('amp-bucketing'))
    x = nd.array(np.random.RandomState(1).uniform(-1, 1, (AMP_GEN.BATCH, AMP_GEN.WIDTH)))
    batch = mx.io.DataBatch([x], [nd.zeros((AMP_GEN.BATCH,))], bucket_key=3,
                            provide_data=[('data', x.shape)],
                            provide_label=[('softmax_label', (AMP_GEN.BATCH,))])
    mod.forward(batch, is_train=False)
    expected = mod.get_outputs()[0].asnumpy()
    new = amp.amp.convert_bucketing_module(mod, cast_optional_params=True)
    bucket = new._buckets[3]
    assert bucket is new._curr_module
    bucket.bind(data_shapes=batch.provide_data, label_shapes=batch.provide_label,
                for_training=False)
    bucket.forward(batch, is_train=False)
    out = bucket.get_outputs()[0]
    assert out.dtype == F32
    assert bucket.get_params()[0]['shared_weight'].dtype == F16
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-2, atol=1e-3)


def test_convert_bucketing_module_checks_its_module():
    net = AMP_GEN.sym_gen_of(mx)(2)[0]
    with pytest.raises(AssertionError, match='should be instance of bucketing module'):
        amp.amp.convert_bucketing_module(mx.mod.Module(net))
    unbound = mx.mod.BucketingModule(AMP_GEN.sym_gen_of(mx), default_bucket_key=2)
    with pytest.raises(AssertionError, match='Bucketing Module should not be empty'):
        amp.amp.convert_bucketing_module(unbound)
    unbound.bind(data_shapes=[('data', (AMP_GEN.BATCH, AMP_GEN.WIDTH))],
                 label_shapes=[('softmax_label', (AMP_GEN.BATCH,))])
    with pytest.raises(MXNetError, match='params should be initialized'):
        amp.amp.convert_bucketing_module(unbound)
