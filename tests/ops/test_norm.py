"""Cases for hybridlib/ops/norm.py: BatchNorm, LayerNorm, InstanceNorm, GroupNorm,
L2Normalization, LRN (and _backward_BatchNorm).

References are written independently with plain numpy (loops where clearer). Numbers pasted as
literals were produced by MXNet 1.9.1 (the oracle), native CPU kernels.
"""
import json

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, DTypeError, ShapeError

from harness import Case, check_case, positive, uniform


# -------------------------------------------------------------------------------------------------
# numpy references
# -------------------------------------------------------------------------------------------------

def _channel_view(x, axis):
    """``x`` with the channel axis first and everything else flattened: (C, rest)."""
    return np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1)


def _along(v, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _bn_forward(data, gamma, beta, mm, mv, train, eps=1e-3, fix_gamma=True,
                use_global_stats=False, axis=1, **_):
    axis %= data.ndim
    if train and not use_global_stats:
        flat = _channel_view(data, axis)
        mean = flat.mean(axis=1)
        var = ((flat - mean[:, None]) ** 2).mean(axis=1)
    else:
        mean, var = mm, mv
    gam = np.ones_like(gamma) if fix_gamma else gamma
    invstd = 1 / np.sqrt(var + eps)
    out = ((data - _along(mean, axis, data.ndim)) * _along(invstd * gam, axis, data.ndim)
           + _along(beta, axis, data.ndim))
    return out, mean, invstd


def bn_ref(train):
    def ref(*inputs, output_mean_var=False, **attrs):
        out, mean, invstd = _bn_forward(*inputs, train, **attrs)
        return [out, mean, invstd] if output_mean_var else out
    return ref


def _numeric_grad_of_first(ref, cot, inputs, which, eps=1e-6):
    """d sum(ref(inputs)[0] * cot) / d inputs[i] by central differences, for i in which."""
    grads = [None] * len(inputs)
    for i in which:
        g = np.zeros_like(inputs[i])
        for j in range(inputs[i].size):
            plus = [v.copy() for v in inputs]
            minus = [v.copy() for v in inputs]
            plus[i].reshape(-1)[j] += eps
            minus[i].reshape(-1)[j] -= eps
            g.reshape(-1)[j] = np.sum((ref(*plus)[0] - ref(*minus)[0]) * cot) / (2 * eps)
        grads[i] = g
    return grads


def first_output_grad(ref, which):
    """grad_ref for ``output_mean_var``: MXNet ignores the gradients of the mean/var outputs,
    so only the first output's cotangent counts."""
    def grad_ref(cots, *inputs, **attrs):
        return _numeric_grad_of_first(lambda *xs: ref(*xs, **attrs), cots[0], list(inputs),
                                      which)
    return grad_ref


def ln_ref(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False):
    mean = data.mean(axis=axis, keepdims=True)
    std = np.sqrt(((data - mean) ** 2).mean(axis=axis, keepdims=True) + eps)
    axis %= data.ndim
    out = (data - mean) / std * _along(gamma, axis, data.ndim) + _along(beta, axis, data.ndim)
    return [out, mean, std] if output_mean_var else out


def in_ref(data, gamma, beta, eps=1e-3):
    out = np.empty_like(data)
    for n in range(data.shape[0]):
        for c in range(data.shape[1]):
            v = data[n, c]
            out[n, c] = (v - v.mean()) / np.sqrt(v.var() + eps) * gamma[c] + beta[c]
    return out


def gn_ref(data, gamma, beta, num_groups=1, eps=1e-5, output_mean_var=False):
    n, c = data.shape[:2]
    per = c // num_groups
    out = np.empty_like(data)
    mean = np.empty((n, num_groups))
    std = np.empty((n, num_groups))
    for i in range(n):
        for k in range(num_groups):
            v = data[i, k * per:(k + 1) * per]
            mean[i, k] = v.mean()
            std[i, k] = np.sqrt(v.var() + eps)
            out[i, k * per:(k + 1) * per] = (v - mean[i, k]) / std[i, k] * gamma[k] + beta[k]
    return [out, mean, std] if output_mean_var else out


def l2_ref(data, eps=1e-10, mode='instance'):
    axes = {'instance': tuple(range(1, data.ndim)), 'channel': (1,),
            'spatial': tuple(range(2, data.ndim))}[mode]
    return data / np.sqrt((data ** 2).sum(axis=axes, keepdims=True) + eps)


def lrn_ref(data, alpha=1e-4, beta=0.75, knorm=2, nsize=None):
    out = np.empty_like(data)
    channels = data.shape[1]
    for c in range(channels):
        lo, hi = max(0, c - nsize // 2), min(channels, c + nsize // 2 + 1)
        base = knorm + alpha / nsize * (data[:, lo:hi] ** 2).sum(axis=1)
        out[:, c] = data[:, c] * base ** -beta
    return out


def bn_backward_ref(train):
    def ref(ograd, data, gamma, mm, mv, eps=1e-3, fix_gamma=True, use_global_stats=False,
            axis=1):
        # the gradients of sum(BatchNorm(data) * ograd), by central differences of the reference
        def f(d, g):
            return [_bn_forward(d, g, np.zeros_like(g), mm, mv, train, eps, fix_gamma,
                                use_global_stats, axis)[0]]
        dx, dgamma = _numeric_grad_of_first(f, ograd, [data, gamma], [0, 1])
        return [dx, dgamma, _channel_view(ograd, axis % data.ndim).sum(axis=1)]
    return ref


# -------------------------------------------------------------------------------------------------
# cases
# -------------------------------------------------------------------------------------------------

def bn_inputs(shape, axis=1):
    c = (shape[axis],)
    return [uniform(shape), positive(c), uniform(c), uniform(c, -0.5, 0.5), positive(c)]


BN = [0, 1, 2]          # differentiate data, gamma, beta (the moving statistics are aux states)

BN_CASES = [
    Case('BatchNorm', bn_inputs((3, 2, 2)), dict(fix_gamma=False), bn_ref(True), train=True,
         grad_inputs=BN, name='train'),
    Case('BatchNorm', bn_inputs((3, 2, 2)), dict(fix_gamma=False), bn_ref(False),
         grad_inputs=BN, name='predict'),
    Case('BatchNorm', bn_inputs((3, 2, 2)), {}, bn_ref(True), train=True, grad_inputs=BN,
         name='train-fix_gamma'),
    Case('BatchNorm', bn_inputs((3, 2, 2)), {}, bn_ref(False), grad_inputs=BN,
         name='predict-fix_gamma'),
    Case('BatchNorm', bn_inputs((3, 2, 2)), dict(fix_gamma=False, use_global_stats=True),
         bn_ref(True), train=True, grad_inputs=BN, name='train-use_global_stats'),
    Case('BatchNorm', bn_inputs((2, 3, 2), -1), dict(fix_gamma=False, axis=-1, eps=0.01,
                                                     momentum=0.5),
         bn_ref(True), train=True, grad_inputs=BN, name='train-axis-1'),
    Case('BatchNorm', bn_inputs((3, 2, 2), 2), dict(fix_gamma=False, axis=2), bn_ref(False),
         grad_inputs=BN, name='predict-axis2'),
    Case('BatchNorm', bn_inputs((4, 3), 0), dict(fix_gamma=False, axis=0), bn_ref(True),
         train=True, grad_inputs=BN, name='train-2d-axis0'),
    Case('BatchNorm', bn_inputs((2, 2, 2, 2)), dict(fix_gamma=False, eps=1e-5), bn_ref(True),
         train=True, grad_inputs=BN, name='train-4d'),
    Case('BatchNorm', bn_inputs((3, 2, 2)), dict(fix_gamma=False, output_mean_var=True),
         bn_ref(True), train=True, grad_inputs=BN,
         grad_ref=first_output_grad(bn_ref(True), BN), name='train-output_mean_var'),
    Case('BatchNorm', bn_inputs((3, 2, 2)), dict(output_mean_var=True),
         bn_ref(False), grad_inputs=BN,
         grad_ref=first_output_grad(bn_ref(False), BN), name='predict-output_mean_var'),
]


def bn_backward_inputs(shape, axis=1):
    c = (shape[axis],)
    return [uniform(shape)] + bn_inputs(shape, axis)[:2] + [uniform(c, -0.5, 0.5), positive(c)]


BN_BACKWARD_CASES = [
    Case('_backward_BatchNorm', bn_backward_inputs((3, 2, 2)), dict(fix_gamma=False),
         bn_backward_ref(True), train=True, grad_inputs=[0, 1, 2], rtol=1e-6, atol=1e-8,
         name='train'),
    Case('_backward_BatchNorm', bn_backward_inputs((3, 2, 2)), dict(fix_gamma=False),
         bn_backward_ref(False), grad_inputs=[0, 1, 2], rtol=1e-6, atol=1e-8,
         name='predict'),
    Case('_backward_BatchNorm', bn_backward_inputs((2, 3), -1), dict(axis=-1),
         bn_backward_ref(True), train=True, grad_inputs=[0, 1], rtol=1e-6, atol=1e-8,
         name='train-fix_gamma-axis-1'),
    Case('_backward_BatchNorm', bn_backward_inputs((2, 3), -1),
         dict(axis=-1, use_global_stats=True, eps=0.1), bn_backward_ref(True), train=True,
         grad_inputs=[0, 1, 2], rtol=1e-6, atol=1e-8, name='use_global_stats'),
]

LN_CASES = [
    Case('LayerNorm', [uniform((2, 4)), positive((4,)), uniform((4,))], {}, ln_ref),
    Case('LayerNorm', [uniform((2, 3, 2)), positive((3,)), uniform((3,))],
         dict(axis=1, eps=0.01), ln_ref, name='axis1'),
    Case('LayerNorm', [uniform((3, 2, 2)), positive((3,)), uniform((3,))],
         dict(axis=-3), ln_ref, name='axis-3'),
    Case('LayerNorm', [uniform((2, 3)), positive((3,)), uniform((3,))],
         dict(output_mean_var=True), ln_ref,
         grad_ref=first_output_grad(ln_ref, [0, 1, 2]), name='output_mean_var'),
]

IN_CASES = [
    Case('InstanceNorm', [uniform((2, 2, 3)), positive((2,)), uniform((2,))], {}, in_ref),
    Case('InstanceNorm', [uniform((1, 2, 2, 2)), positive((2,)), uniform((2,))],
         dict(eps=0.1), in_ref, name='4d'),
]

GN_CASES = [
    Case('GroupNorm', [uniform((2, 4, 2)), positive((2,)), uniform((2,))], dict(num_groups=2),
         gn_ref),
    Case('GroupNorm', [uniform((2, 3, 2)), positive((1,)), uniform((1,))], dict(eps=0.1),
         gn_ref, name='one-group'),
    Case('GroupNorm', [uniform((1, 4, 1, 2)), positive((4,)), uniform((4,))],
         dict(num_groups=4), gn_ref, name='4d-group-per-channel'),
    Case('GroupNorm', [uniform((2, 4, 2)), positive((2,)), uniform((2,))],
         dict(num_groups=2, output_mean_var=True), gn_ref,
         grad_ref=first_output_grad(gn_ref, [0, 1, 2]), name='output_mean_var'),
]

L2_CASES = [
    Case('L2Normalization', [uniform((2, 3, 2))], {}, l2_ref),
    Case('L2Normalization', [uniform((2, 3, 2))], dict(mode='channel'), l2_ref,
         name='channel'),
    Case('L2Normalization', [uniform((2, 2, 3))], dict(mode='spatial', eps=0.5), l2_ref,
         name='spatial'),
    Case('L2Normalization', [uniform((2, 3, 1, 2))], dict(mode='spatial'), l2_ref,
         name='spatial-4d'),
    Case('L2Normalization', [uniform((4,))], dict(eps=0.1), l2_ref, name='1d'),
]

LRN_CASES = [
    Case('LRN', [uniform((1, 5, 2, 1), -2, 2)], dict(nsize=3, alpha=0.5, knorm=1.5),
         lrn_ref),
    Case('LRN', [uniform((2, 3, 1, 2), -2, 2)], dict(nsize=1, alpha=0.3, beta=0.5), lrn_ref,
         name='nsize1'),
    Case('LRN', [uniform((1, 5, 1, 1), -2, 2)], dict(nsize=5, alpha=2.0, beta=1.0, knorm=1),
         lrn_ref, name='nsize5'),
]

CASES = (BN_CASES + BN_BACKWARD_CASES + LN_CASES + IN_CASES + GN_CASES + L2_CASES
         + LRN_CASES)


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_norm(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# BatchNorm against MXNet 1.9.1's numbers (float64, native CPU kernels)
# -------------------------------------------------------------------------------------------------

BN_X = np.sin(np.arange(12.0)).reshape(3, 2, 2)
BN_OGRAD = np.cos(np.arange(12.0)).reshape(3, 2, 2)
BN_GAMMA, BN_BETA = [1.5, 0.7], [0.1, -0.2]
BN_MM, BN_MV = [0.3, -0.1], [1.2, 0.8]

# train mode, fix_gamma=False, momentum=0.7: batch statistics, biased variance
TRAIN_OUT = [-0.0774922352, 1.6222266423, 0.7769971064, -0.0311863814, -1.6061860476,
             -2.0144594285, -0.4736230424, 0.511546131, 1.9209496823, 0.7549613868,
             -0.752009105, -1.2317247085]
TRAIN_MEAN = [0.0878701578, -0.0193371303]
TRAIN_INVSTD = [1.3466250635, 1.5029702925]          # the hidden 'var' output: 1/sqrt(var+eps)
TRAIN_MOVING_MEAN = [0.2363610448, -0.0758011381]    # 0.7 * moving + 0.3 * batch
TRAIN_MOVING_VAR = [1.0051351722, 0.6925068414]
TRAIN_DX = [1.9895959386, 0.9850666139, -0.4009194066, -0.9587756392, -1.282336249,
            0.6292107025, 1.1180640669, 0.8451326824, -0.4135626945, -1.9079743114,
            -0.7590788264, 0.1555771229]
TRAIN_DGAMMA = [0.1991415953, 0.2266029545]
DBETA = [0.1136905748, -0.5267126232]
# predict mode (and use_global_stats in train mode): the moving statistics, no update
PREDICT_OUT = [-0.3106208617, 0.8411309413, 0.5894069543, -0.0114115759, -1.3464838377,
               -1.623135235, -0.3403271605, 0.3920657969, 1.0435495909, 0.2534606301,
               -0.5472845006, -0.9039139395]
PREDICT_INVSTD = [0.9124908038, 1.1173358719]
PREDICT_DX = [1.3687362057, 0.7395313281, -0.3254830519, -0.7743078905, -0.8946656895,
              0.3882587034, 0.7509828931, 0.5896534229, -0.1991511642, -1.2470969776,
              -0.656267303, 0.0034614938]
PREDICT_DGAMMA = [0.1129342666, 0.1209895199]
# fix_gamma=True, train mode, momentum=0.7
FIXED_OUT = [-0.0183281568, 1.1148177615, 1.195710152, 0.0411623122, -1.0374573651,
             -1.309639619, -0.5908900606, 0.8164944729, 1.3139664548, 0.5366409245,
             -0.9885844357, -1.6738924408]
FIXED_DX = [1.3263972924, 0.6567110759, -0.5727420095, -1.3696794845, -0.8548908326,
            0.4194738016, 1.5972343813, 1.2073324034, -0.275708463, -1.2719828743,
            -1.0843983235, 0.2222530328]
# momentum=0: the moving statistics become the batch's (biased variance)
ZERO_MOMENTUM_VAR = [0.5504505997, 0.4416894855]


def _bn_run(train, **attrs):
    arrays = [nd.array(np.asarray(v, dtype=np.float64), dtype=np.float64)
              for v in (BN_X, BN_GAMMA, BN_BETA, BN_MM, BN_MV)]
    for a in arrays[:3]:
        a.attach_grad()
    with autograd.record(train_mode=train):
        outs = nd.BatchNorm(*arrays, output_mean_var=True, **attrs)
    after_forward = [arrays[3].asnumpy().copy(), arrays[4].asnumpy().copy()]
    outs[0].backward(nd.array(BN_OGRAD, dtype=np.float64), train_mode=train)
    return outs, arrays, after_forward


def _close(actual, expected):
    np.testing.assert_allclose(np.ravel(actual), expected, rtol=1e-8, atol=1e-9)


def test_batchnorm_train_matches_mxnet():
    outs, (x, gamma, beta, mm, mv), after_forward = _bn_run(True, fix_gamma=False, momentum=0.7)
    _close(outs[0].asnumpy(), TRAIN_OUT)
    _close(outs[1].asnumpy(), TRAIN_MEAN)
    _close(outs[2].asnumpy(), TRAIN_INVSTD)
    # hybridlib updates in the forward (MXNet's CPU kernel in the backward; same values)
    _close(after_forward[0], TRAIN_MOVING_MEAN)
    _close(after_forward[1], TRAIN_MOVING_VAR)
    _close(mm.asnumpy(), TRAIN_MOVING_MEAN)
    _close(mv.asnumpy(), TRAIN_MOVING_VAR)
    _close(x.grad.asnumpy(), TRAIN_DX)
    _close(gamma.grad.asnumpy(), TRAIN_DGAMMA)
    _close(beta.grad.asnumpy(), DBETA)


@pytest.mark.parametrize('train, attrs', [(False, {}), (True, {'use_global_stats': True})])
def test_batchnorm_moving_statistics_matches_mxnet(train, attrs):
    outs, (x, gamma, beta, mm, mv), _ = _bn_run(train, fix_gamma=False, **attrs)
    _close(outs[0].asnumpy(), PREDICT_OUT)
    _close(outs[1].asnumpy(), BN_MM)
    _close(outs[2].asnumpy(), PREDICT_INVSTD)
    _close(mm.asnumpy(), BN_MM)                       # no update
    _close(mv.asnumpy(), BN_MV)
    _close(x.grad.asnumpy(), PREDICT_DX)              # no gradient through the statistics
    _close(gamma.grad.asnumpy(), PREDICT_DGAMMA)
    _close(beta.grad.asnumpy(), DBETA)


def test_batchnorm_fix_gamma_matches_mxnet():
    outs, (x, gamma, beta, mm, mv), _ = _bn_run(True, momentum=0.7)
    _close(outs[0].asnumpy(), FIXED_OUT)
    _close(x.grad.asnumpy(), FIXED_DX)
    _close(gamma.grad.asnumpy(), [0.0, 0.0])
    _close(beta.grad.asnumpy(), DBETA)
    _close(mm.asnumpy(), TRAIN_MOVING_MEAN)
    _close(mv.asnumpy(), TRAIN_MOVING_VAR)
    _close(gamma.asnumpy(), BN_GAMMA)     # treated as 1, not overwritten


def test_batchnorm_momentum_zero_and_one():
    _, (_, _, _, mm, mv), _ = _bn_run(True, fix_gamma=False, momentum=0.0)
    _close(mm.asnumpy(), TRAIN_MEAN)
    _close(mv.asnumpy(), ZERO_MOMENTUM_VAR)
    _, (_, _, _, mm, mv), _ = _bn_run(True, fix_gamma=False, momentum=1.0)
    _close(mm.asnumpy(), BN_MM)
    _close(mv.asnumpy(), BN_MV)


def test_batchnorm_train_forward_without_record_updates():
    arrays = [nd.array(np.asarray(v)) for v in (BN_X, BN_GAMMA, BN_BETA, BN_MM, BN_MV)]
    with autograd.train_mode():
        out = nd.BatchNorm(*arrays, fix_gamma=False, momentum=0.7)
    np.testing.assert_allclose(out.asnumpy().ravel(), TRAIN_OUT, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arrays[3].asnumpy(), TRAIN_MOVING_MEAN, rtol=1e-5)
    np.testing.assert_allclose(arrays[4].asnumpy(), TRAIN_MOVING_VAR, rtol=1e-5)
    out = nd.BatchNorm(*arrays, fix_gamma=False)       # predict mode: untouched
    np.testing.assert_allclose(arrays[3].asnumpy(), TRAIN_MOVING_MEAN, rtol=1e-5)


def test_batchnorm_executor_updates_aux_states():
    data = sym.var('data')
    net = sym.BatchNorm(data, fix_gamma=False, momentum=0.7, name='bn')
    assert net.list_arguments() == ['data', 'bn_gamma', 'bn_beta']
    assert net.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert net.list_outputs() == ['bn_output']
    args = {'data': nd.array(BN_X), 'bn_gamma': nd.array(BN_GAMMA), 'bn_beta': nd.array(BN_BETA)}
    aux = {'bn_moving_mean': nd.array(BN_MM), 'bn_moving_var': nd.array(BN_MV)}
    grads = {k: nd.zeros(v.shape) for k, v in args.items()}
    exe = net.bind(mx.cpu(), args, args_grad=grads, aux_states=aux)
    exe.forward(is_train=True)
    exe.backward(nd.array(BN_OGRAD))
    np.testing.assert_allclose(exe.outputs[0].asnumpy().ravel(), TRAIN_OUT, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(aux['bn_moving_mean'].asnumpy(), TRAIN_MOVING_MEAN, rtol=1e-5)
    np.testing.assert_allclose(aux['bn_moving_var'].asnumpy(), TRAIN_MOVING_VAR, rtol=1e-5)
    np.testing.assert_allclose(grads['data'].asnumpy().ravel(), TRAIN_DX, rtol=1e-4, atol=1e-6)
    exe.forward(is_train=False)
    np.testing.assert_allclose(aux['bn_moving_var'].asnumpy(), TRAIN_MOVING_VAR, rtol=1e-5)


def test_batchnorm_output_names_and_hidden_gradients():
    s = sym.BatchNorm(sym.var('data'), output_mean_var=True, name='bn')
    assert s.list_outputs() == ['bn_output', 'bn_mean', 'bn_var']
    _, out_shapes, aux_shapes = s.infer_shape(data=(3, 2, 2))
    assert out_shapes == [(3, 2, 2), (2,), (2,)] and aux_shapes == [(2,), (2,)]
    # MXNet ignores gradients that arrive at the mean/var outputs
    x = nd.array(BN_X)
    x.attach_grad()
    params = [nd.array(np.asarray(v)) for v in (BN_GAMMA, BN_BETA, BN_MM, BN_MV)]
    with autograd.record():
        outs = nd.BatchNorm(x, *params, output_mean_var=True, fix_gamma=False)
    autograd.backward([outs[1], outs[2]], [nd.ones((2,)), nd.ones((2,))])
    assert np.all(x.grad.asnumpy() == 0)


def test_batchnorm_dtypes():
    s = sym.BatchNorm(sym.var('data'), name='bn')
    args, outs, aux = s.infer_type(data=np.float16)
    assert [np.dtype(t) for t in args] == [np.float16, np.float32, np.float32]
    assert [np.dtype(t) for t in aux] == [np.float32, np.float32]
    x = nd.array(BN_X, dtype=np.float16)
    params = [nd.array(np.asarray(v), dtype=np.float32)
              for v in (BN_GAMMA, BN_BETA, BN_MM, BN_MV)]
    with autograd.train_mode():
        outs = nd.BatchNorm(x, *params, fix_gamma=False, momentum=0.7, output_mean_var=True)
    assert [o.dtype for o in outs] == [np.float16, np.float32, np.float32]
    np.testing.assert_allclose(outs[0].asnumpy().ravel(), TRAIN_OUT, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(params[3].asnumpy(), TRAIN_MOVING_VAR, rtol=1e-3)
    with pytest.raises(DTypeError, match='floating point'):
        s.infer_type(data=np.int32)
    with pytest.raises(DTypeError, match='gamma'):
        s.infer_type(data=np.float16, bn_gamma=np.float16)


@pytest.mark.parametrize('train, attrs', [(True, dict(fix_gamma=False)), (False, {}),
                                          (True, dict(use_global_stats=True, axis=-1))])
def test_batchnorm_float16_computes_in_float32(train, attrs):
    """float16 data with float32 parameters: statistics and arithmetic in float32, rounded to
    float16 once, forward (moving statistics updated alike) and backward."""
    rng = np.random.default_rng(3)
    x16 = (rng.uniform(-1, 1, (4, 3, 5)) * 4 + 2).astype(np.float16)
    g16 = rng.uniform(-1, 1, x16.shape).astype(np.float16)
    c = x16.shape[attrs.get('axis', 1)]
    params = [rng.uniform(0.5, 2, c), rng.uniform(-1, 1, c), rng.uniform(1, 3, c),
              rng.uniform(0.5, 2, c)]
    results = {}
    for dt, pdt in ((np.float16, np.float32), (np.float64, np.float64)):
        arrays = [nd.array(x16, dtype=dt)] + [nd.array(p, dtype=pdt) for p in params]
        with autograd.train_mode() if train else autograd.predict_mode():
            outs = nd.BatchNorm(*arrays, output_mean_var=True, momentum=0.8, **attrs)
            grads = nd.op._backward_BatchNorm(nd.array(g16, dtype=dt), *arrays[:2],
                                              *arrays[3:], **attrs)
        results[dt] = [o.asnumpy() for o in list(outs) + list(grads) + arrays[3:]]
    for k, (got, want) in enumerate(zip(*results.values())):
        assert got.dtype == (np.float16 if k in (0, 3) else np.float32), k
        if got.dtype == np.float16:     # one rounding of the float32 result
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=2e-3, err_msg=str(k))
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=str(k))


def test_batchnorm_gradient_follows_the_mode_of_the_backward_pass():
    # predict-mode forward; a training-mode backward differentiates through the batch
    # statistics (recomputed from the data). MXNet 1.9.1 instead applies the training formula
    # to the moving statistics here; with matching modes the two agree (tests above).
    arrays = [nd.array(np.asarray(v, dtype=np.float64), dtype=np.float64)
              for v in (BN_X, BN_GAMMA, BN_BETA, BN_MM, BN_MV)]
    arrays[0].attach_grad()
    with autograd.record(train_mode=False):
        out = nd.BatchNorm(*arrays, fix_gamma=False)
    _close(out.asnumpy(), PREDICT_OUT)
    out.backward(nd.array(BN_OGRAD, dtype=np.float64), train_mode=True)
    _close(arrays[0].grad.asnumpy(), TRAIN_DX)
    _close(arrays[3].asnumpy(), BN_MM)


# -------------------------------------------------------------------------------------------------
# hidden outputs, shapes and errors
# -------------------------------------------------------------------------------------------------

def _all_outputs(name, inputs, **attrs):
    from hybridlib.ndarray import invoke_all
    from hybridlib.ops import registry
    op = registry.get(name)
    return [o.asnumpy() for o in invoke_all(op, [nd.array(x, dtype=x.dtype) for x in inputs],
                                            op.parse_attrs(attrs))]


X4 = np.sin(np.arange(24.0) * 0.7).reshape(2, 4, 3)


def test_hidden_outputs():
    # InstanceNorm: mean and variance (no eps), (N, C)
    _, mean, var = _all_outputs('InstanceNorm', [X4, np.ones(4), np.zeros(4)], eps=0.5)
    np.testing.assert_allclose(mean, X4.mean(axis=2))
    np.testing.assert_allclose(var, X4.var(axis=2))
    # LayerNorm: mean and std = sqrt(var + eps), keepdims along axis
    _, mean, std = _all_outputs('LayerNorm', [X4, np.ones(4), np.zeros(4)], axis=1, eps=0.5)
    np.testing.assert_allclose(mean, X4.mean(axis=1, keepdims=True))
    np.testing.assert_allclose(std, np.sqrt(X4.var(axis=1, keepdims=True) + 0.5))
    # GroupNorm: per (sample, group), std with eps
    _, mean, std = _all_outputs('GroupNorm', [X4, np.ones(2), np.zeros(2)], num_groups=2,
                                eps=0.5)
    grouped = X4.reshape(2, 2, 6)
    np.testing.assert_allclose(mean, grouped.mean(axis=2))
    np.testing.assert_allclose(std, np.sqrt(grouped.var(axis=2) + 0.5))
    # L2Normalization: the norm, sqrt(sum x^2 + eps)
    for mode, axes, shape in [('instance', (1, 2), (2,)), ('channel', (1,), (2, 1, 3)),
                              ('spatial', (2,), (2, 4))]:
        _, norm = _all_outputs('L2Normalization', [X4], mode=mode, eps=0.5)
        expected = np.sqrt((X4 ** 2).sum(axis=axes) + 0.5)
        assert norm.shape == shape
        np.testing.assert_allclose(norm.ravel(), expected.ravel())
    # LRN: the base knorm + alpha / nsize * window sum of x^2
    x = X4.reshape(2, 4, 3, 1)
    out, base = _all_outputs('LRN', [x], nsize=3, alpha=0.3, knorm=1.5, beta=0.5)
    np.testing.assert_allclose(out, x / np.sqrt(base))
    np.testing.assert_allclose(base[:, 0], 1.5 + 0.1 * (x[:, 0] ** 2 + x[:, 1] ** 2))


def test_lrn_matches_mxnet():
    # MXNet 1.9.1 (native CPU), x = [-0.33, 1.21, -1.99, -0.79, -1.41, -1.63] over 6 channels
    x = np.array([-0.33, 1.21, -1.99, -0.79, -1.41, -1.63]).reshape(1, 6, 1, 1)
    out = nd.LRN(nd.array(x), nsize=3, alpha=0.5, beta=0.75, knorm=1.5).asnumpy()
    expected = lrn_ref(x, alpha=0.5, beta=0.75, knorm=1.5, nsize=3)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_groupnorm_gamma_is_per_group():
    s = sym.GroupNorm(sym.var('data'), num_groups=3, output_mean_var=True, name='gn')
    args, outs, _ = s.infer_shape(data=(2, 6, 4))
    assert args == [(2, 6, 4), (3,), (3,)]
    assert outs == [(2, 6, 4), (2, 3), (2, 3)]
    assert s.list_outputs() == ['gn_output', 'gn_mean', 'gn_std']


def test_shape_inference_fills_parameters():
    s = sym.BatchNorm(sym.var('data'), axis=-1, name='bn')
    args, outs, aux = s.infer_shape(data=(2, 3, 4))
    assert args == [(2, 3, 4), (4,), (4,)] and aux == [(4,), (4,)]
    s = sym.LayerNorm(sym.var('data'), axis=-3, output_mean_var=True, name='ln')
    args, outs, _ = s.infer_shape(data=(2, 3, 4))
    assert args == [(2, 3, 4), (2,), (2,)] and outs == [(2, 3, 4), (1, 3, 4), (1, 3, 4)]
    s = sym.InstanceNorm(sym.var('data'), name='in')
    args, outs, _ = s.infer_shape(data=(2, 3, 2, 2))
    assert args == [(2, 3, 2, 2), (3,), (3,)] and s.list_outputs() == ['in_output']
    # the channel count can come from gamma
    s = sym.BatchNorm(sym.var('data'), name='bn')
    args, _, _ = s.infer_shape_partial(data=(2, 0, 4), bn_gamma=(3,))
    assert args[0] == (2, 3, 4)


@pytest.mark.parametrize('build, shapes, match', [
    (lambda d: sym.BatchNorm(d, name='bn'), dict(data=(2, 3, 4), bn_gamma=(4,)), 'gamma'),
    (lambda d: sym.BatchNorm(d, name='bn'), dict(data=(2, 3, 4), bn_moving_var=(2,)),
     'moving_var'),
    (lambda d: sym.BatchNorm(d, axis=3), dict(data=(2, 3, 4)), 'axis'),
    (lambda d: sym.BatchNorm(d), dict(data=(2,)), 'axis'),
    (lambda d: sym.LayerNorm(d, axis=3), dict(data=(2, 3, 4)), 'axis'),
    (lambda d: sym.LayerNorm(d, name='ln'), dict(data=(2, 3, 4), ln_gamma=(3,)), 'gamma'),
    (lambda d: sym.InstanceNorm(d), dict(data=(2, 3)), 'rank'),
    (lambda d: sym.InstanceNorm(d, name='i'), dict(data=(2, 3, 4), i_beta=(4,)), 'beta'),
    (lambda d: sym.GroupNorm(d, num_groups=4), dict(data=(2, 6, 3)), 'divisible'),
    (lambda d: sym.GroupNorm(d, num_groups=2), dict(data=(2, 6)), 'rank'),
    (lambda d: sym.GroupNorm(d, num_groups=2, name='g'), dict(data=(2, 6, 1), g_gamma=(6,)),
     'gamma'),
    (lambda d: sym.L2Normalization(d, mode='channel'), dict(data=(2, 3)), 'rank'),
    (lambda d: sym.L2Normalization(d, mode='spatial'), dict(data=(2, 3)), 'rank'),
    (lambda d: sym.LRN(d, nsize=3), dict(data=(2, 3, 4)), '4-d'),
    (lambda d: sym.LRN(d, nsize=5), dict(data=(2, 3, 4, 4)), 'nsize'),
])
def test_shape_errors(build, shapes, match):
    with pytest.raises(ShapeError, match=match) as info:
        build(sym.var('data')).infer_shape(**shapes)
    assert 'Error in operator' in str(info.value)


def test_attribute_errors():
    x = nd.ones((1, 4, 2, 2))
    with pytest.raises(AttributeParseError, match='odd'):
        nd.LRN(x, nsize=2)
    with pytest.raises(AttributeParseError, match='nsize'):
        nd.LRN(x)
    with pytest.raises(AttributeParseError, match='mode'):
        nd.L2Normalization(x, mode='pixel')
    with pytest.raises(AttributeParseError, match='num_groups'):
        nd.GroupNorm(x, nd.ones((1,)), nd.zeros((1,)), num_groups=0)


def test_json_round_trip_of_mxnet_attributes():
    # a BatchNorm node as Gluon exports it (vgg_bn_small-symbol.json)
    s = sym.BatchNorm(sym.var('data'), axis=1, eps=1e-5, fix_gamma=False, momentum=0.9,
                      use_global_stats=False, name='bn')
    again = sym.fromjson(s.tojson())
    assert again.tojson() == s.tojson()
    node = [n for n in json.loads(s.tojson())['nodes'] if n['op'] == 'BatchNorm']
    assert node[0]['attrs'] == {'axis': '1', 'eps': '1e-05', 'fix_gamma': 'False',
                                'momentum': '0.9', 'use_global_stats': 'False'}
