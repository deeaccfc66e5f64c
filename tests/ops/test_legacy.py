"""Cases for hybridlib/ops/legacy.py: Convolution_v1, Pooling_v1, BatchNorm_v1, SVMOutput,
IdentityAttachKLSparseReg and their internal backward operators.

The references are written from MXNet's definitions; test_against_mxnet replays MXNet 1.9.1's
outputs, gradients and auxiliary states after a training step (tests/data/legacy.json, from
make_spatial_files.py).
"""
import itertools
import json
import pathlib

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, ShapeError
from harness import Case, check_case, positive, uniform
from test_conv import conv_ref
from test_norm import first_output_grad
from test_spatial import check_against_mxnet

DATA = pathlib.Path(__file__).parent.parent / 'data' / 'legacy.json'


# -------------------------------------------------------------------------------------------------
# Independent references
# -------------------------------------------------------------------------------------------------

def pool_v1_ref(x, kernel=(), pool_type='max', global_pool=False, pooling_convention='valid',
                stride=(), pad=()):
    """Zero padding, then windows [o * stride, o * stride + kernel) clipped to the padded
    input; avg divides by the kernel size."""
    axes = tuple(range(2, x.ndim))
    if global_pool:
        reduce = {'max': np.max, 'sum': np.sum, 'avg': np.mean}[pool_type]
        return reduce(x, axis=axes, keepdims=True)
    nd_ = len(kernel)
    pad, stride = pad or (0,) * nd_, stride or (1,) * nd_
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    sizes = []
    for n, k, s in zip(xp.shape[2:], kernel, stride):
        steps = (n - k) / s
        sizes.append((int(np.ceil(steps)) if pooling_convention == 'full' else int(steps)) + 1)
    out = np.zeros(x.shape[:2] + tuple(sizes))
    for o in itertools.product(*(range(m) for m in sizes)):
        window = tuple(slice(i * s, min(i * s + k, n))
                       for i, s, k, n in zip(o, stride, kernel, xp.shape[2:]))
        values = xp[(slice(None), slice(None)) + window].reshape(x.shape[:2] + (-1,))
        if pool_type == 'max':
            out[(slice(None), slice(None)) + o] = values.max(axis=-1)
        else:
            total = values.sum(axis=-1)
            out[(slice(None), slice(None)) + o] = total / np.prod(kernel) \
                if pool_type == 'avg' else total
    return out


def bn_v1_ref(train):
    def ref(data, gamma, beta, mm, mv, eps=1e-3, momentum=0.9, fix_gamma=True,
            use_global_stats=False, output_mean_var=False):
        axes = (0,) + tuple(range(2, data.ndim))
        shape = (1, -1) + (1,) * (data.ndim - 2)
        if train and not use_global_stats:
            mean, var = data.mean(axis=axes), data.var(axis=axes)
        else:
            mean, var = mm, mv
        g = np.ones_like(gamma) if fix_gamma else gamma
        out = (data - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) \
            * g.reshape(shape) + beta.reshape(shape)
        return [out, mean, var] if output_mean_var else out
    return ref


def svm_grad(data, label, margin=1.0, regularization_coefficient=1.0, use_linear=False):
    k = data.shape[-1]
    x = data.reshape(-1, k)
    labels = label.reshape(-1).astype(int)
    c = regularization_coefficient
    grad = np.zeros_like(x)
    for r, col in itertools.product(range(len(x)), range(k)):
        v = x[r, col]
        if col == labels[r]:
            grad[r, col] = -c * (margin > v) if use_linear else -2 * c * max(margin - v, 0)
        else:
            grad[r, col] = c * (margin > -v) if use_linear else 2 * c * max(margin + v, 0)
    return grad.reshape(data.shape)


def svm_grad_ref(cots, data, label, **attrs):
    # a loss layer: the head gradient is ignored
    return [svm_grad(data, label, **attrs), None]


def kl_grad(ograd, data, moving_avg, sparseness_target=0.1, penalty=0.001, momentum=0.9):
    axes = (0,) + tuple(range(2, data.ndim))
    avg = momentum * moving_avg + (1 - momentum) * data.mean(axis=axes)
    avg = avg.reshape((1, -1) + (1,) * (data.ndim - 2))
    return ograd + penalty * (-sparseness_target / avg + (1 - sparseness_target) / (1 - avg))


def kl_grad_ref(cots, data, moving_avg, **attrs):
    return [kl_grad(cots[0], data, moving_avg, **attrs), None]


# -------------------------------------------------------------------------------------------------
# Cases
# -------------------------------------------------------------------------------------------------

X = uniform((2, 3, 5, 6))
CONV = dict(kernel=(3, 2), stride=(2, 1), dilate=(1, 2), pad=(1, 1), num_filter=4)
BN = [0, 1, 2]          # data, gamma, beta (the moving statistics are auxiliary states)


def bn_inputs(shape=(3, 2, 2)):
    c = (shape[1],)
    return [uniform(shape), positive(c), uniform(c), uniform(c, -0.5, 0.5), positive(c)]


LABELS = np.array([0, 3, 1, 4, 2])
SIGMOID = uniform((4, 3), 0.1, 0.9)

CASES = [
    Case('Convolution_v1', [X, uniform((4, 3, 3, 2)), uniform((4,))], CONV, conv_ref),
    Case('Convolution_v1', [X, uniform((6, 1, 2, 2))],
         dict(kernel=(2, 2), num_filter=6, num_group=3, no_bias=True), conv_ref,
         name='group_nobias'),
    Case('Pooling_v1', [X], dict(kernel=(2, 2), pad=(1, 1)), pool_v1_ref, name='max_pad'),
    Case('Pooling_v1', [X], dict(kernel=(3, 2), pool_type='avg', pooling_convention='full',
                                 stride=(2, 3), pad=(1, 1)), pool_v1_ref, name='avg_full'),
    Case('Pooling_v1', [X], dict(kernel=(2, 3), pool_type='sum', stride=(2, 2)), pool_v1_ref,
         name='sum'),
    Case('Pooling_v1', [X], dict(pool_type='avg', global_pool=True), pool_v1_ref,
         name='global_avg'),
    Case('Pooling_v1', [uniform((1, 2, 3, 4, 3))], dict(kernel=(2, 2, 2), pad=(1, 0, 1),
                                                        pooling_convention='full',
                                                        stride=(2, 2, 2)),
         pool_v1_ref, name='3d'),
    Case('BatchNorm_v1', bn_inputs(), dict(fix_gamma=False, eps=1e-2), bn_v1_ref(True),
         train=True, grad_inputs=BN, name='train'),
    Case('BatchNorm_v1', bn_inputs(), dict(fix_gamma=False), bn_v1_ref(False), grad_inputs=BN,
         name='predict'),
    Case('BatchNorm_v1', bn_inputs((2, 3, 2, 2)), {}, bn_v1_ref(True), train=True,
         grad_inputs=BN, name='train_fix_gamma'),
    Case('BatchNorm_v1', bn_inputs(), dict(fix_gamma=False, output_mean_var=True),
         bn_v1_ref(True), train=True, grad_inputs=BN,
         grad_ref=first_output_grad(bn_v1_ref(True), BN), name='train_output_mean_var'),
    Case('BatchNorm_v1', bn_inputs(), dict(use_global_stats=True, output_mean_var=True,
                                           fix_gamma=False),
         bn_v1_ref(True), train=True, grad_inputs=BN,
         grad_ref=first_output_grad(bn_v1_ref(False), BN), name='use_global_stats'),
    Case('SVMOutput', [uniform((5, 6), -2, 2), LABELS], {}, lambda d, l, **_: d,
         grad_ref=svm_grad_ref, grad_inputs=[0], name='l2'),
    Case('SVMOutput', [uniform((5, 6), -2, 2), LABELS],
         dict(margin=0.5, regularization_coefficient=2.0, use_linear=True),
         lambda d, l, **_: d, grad_ref=svm_grad_ref, grad_inputs=[0], name='l1'),
    Case('SVMOutput', [uniform((2, 3, 4), -2, 2), np.array([[0, 3, 1], [2, 2, 9]])],
         dict(margin=1.5), lambda d, l, **_: d, grad_ref=svm_grad_ref, grad_inputs=[0],
         name='nd_out_of_range'),
    Case('_backward_SVMOutput', [uniform((5, 6), -2, 2), LABELS], dict(use_linear=True),
         svm_grad, grad=False),
    Case('_backward_SVMOutput', [uniform((5, 6), -2, 2), LABELS], dict(margin=0.3),
         svm_grad, grad=False, name='l2'),
    Case('IdentityAttachKLSparseReg', [SIGMOID, uniform((3,), 0.2, 0.8)],
         dict(sparseness_target=0.2, penalty=0.01, momentum=0.7), lambda d, m, **_: d,
         grad_ref=kl_grad_ref, grad_inputs=[0]),
    Case('IdentityAttachKLSparseReg', [uniform((2, 3, 2), 0.1, 0.9), uniform((3,), 0.2, 0.8)],
         dict(penalty=0.1), lambda d, m, **_: d, grad_ref=kl_grad_ref, grad_inputs=[0],
         name='3d'),
    # it moves the auxiliary moving_avg: a second evaluation (the Symbol path) starts elsewhere
    Case('_backward_IdentityAttachKLSparseReg',
         [uniform((4, 3)), SIGMOID, uniform((3,), 0.2, 0.8)], dict(penalty=0.01), kl_grad,
         grad=False, check_symbol=False),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_legacy(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet 1.9.1's numbers
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('entry', json.loads(DATA.read_text())['cases'],
                         ids=lambda e: e['name'])
def test_against_mxnet(entry):
    check_against_mxnet(entry, rtol=1e-5, atol=2e-6)


# -------------------------------------------------------------------------------------------------
# Graphs, states and errors
# -------------------------------------------------------------------------------------------------

def test_symbols_list_mxnets_arguments_and_states():
    s = sym.BatchNorm_v1(sym.var('x'), name='bn', output_mean_var=True)
    assert s.list_arguments() == ['x', 'bn_gamma', 'bn_beta']
    assert s.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert s.list_outputs() == ['bn_output', 'bn_mean', 'bn_var']
    s = sym.IdentityAttachKLSparseReg(sym.var('x'), name='kl')
    assert s.list_auxiliary_states() == ['kl_moving_avg']
    assert s.infer_shape(x=(4, 7))[2] == [(7,)]
    s = sym.Convolution_v1(sym.var('x'), kernel=(3, 3), num_filter=4, name='c')
    assert s.list_arguments() == ['x', 'c_weight', 'c_bias']
    assert s.infer_shape(x=(2, 3, 6, 7))[1] == [(2, 4, 4, 5)]
    s = sym.SVMOutput(sym.var('x'), name='svm')
    assert s.infer_shape(x=(2, 3, 6, 7))[0] == [(2, 3, 6, 7), (2, 3, 6)]
    s = sym.Pooling_v1(sym.var('x'), kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                       pooling_convention='full')
    assert s.infer_shape(x=(1, 2, 7, 8))[1] == [(1, 2, 4, 5)]


def test_kl_moving_average_moves_in_the_backward_pass_of_a_graph():
    rng = np.random.default_rng(2)
    data = rng.uniform(0.1, 0.9, (4, 3))
    start = rng.uniform(0.2, 0.8, 3)
    s = sym.IdentityAttachKLSparseReg(sym.var('x'), name='kl', penalty=0.01, momentum=0.5)
    grad = nd.zeros((4, 3))
    exe = s.bind(mx.cpu(), {'x': nd.array(data)}, args_grad={'x': grad},
                 aux_states={'kl_moving_avg': nd.array(start)})
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.aux_dict['kl_moving_avg'].asnumpy(), start, rtol=1e-6)
    head = np.ones((4, 3))
    exe.backward(nd.array(head))
    moved = 0.5 * start + 0.5 * data.mean(axis=0)
    np.testing.assert_allclose(exe.aux_dict['kl_moving_avg'].asnumpy(), moved, rtol=1e-6)
    np.testing.assert_allclose(grad.asnumpy(), kl_grad(head, data, start, penalty=0.01,
                                                       momentum=0.5), rtol=1e-5)


def test_batchnorm_v1_updates_moving_statistics_when_training():
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (3, 2, 2))
    mm, mv = nd.zeros(2), nd.ones(2)
    with autograd.record(train_mode=True):
        out, mean, var = nd.BatchNorm_v1(nd.array(x), nd.ones(2), nd.zeros(2), mm, mv,
                                         momentum=0.8, output_mean_var=True)
    np.testing.assert_allclose(var.asnumpy(), x.var(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(mm.asnumpy(), 0.2 * x.mean(axis=(0, 2)), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(mv.asnumpy(), 0.8 + 0.2 * x.var(axis=(0, 2)), rtol=1e-5)


def test_errors():
    x = nd.zeros((1, 2, 4, 4))
    with pytest.raises(AttributeParseError, match='Pooling_v1 takes a 2-d or 3-d kernel'):
        nd.Pooling_v1(x, kernel=(2,))
    with pytest.raises(ShapeError, match='Pooling_v1: data must be 4-d or 5-d'):
        nd.Pooling_v1(nd.zeros((2, 3, 4)), kernel=(2, 2))
    with pytest.raises(AttributeParseError, match="pool_type.*'lp' is not one of"):
        nd.Pooling_v1(x, kernel=(2, 2), pool_type='lp')
    with pytest.raises(ShapeError, match='SVMOutput.*label must have the shape of data'):
        nd.SVMOutput(nd.zeros((3, 4)), nd.zeros((4,)))
    with pytest.raises(ShapeError, match='IdentityAttachKLSparseReg.*one value per channel'):
        nd.IdentityAttachKLSparseReg(nd.zeros((3, 4)), nd.zeros(3))
    with pytest.raises(AttributeParseError, match='sparseness_target must be in'):
        nd.IdentityAttachKLSparseReg(nd.zeros((3, 4)), nd.zeros(4), sparseness_target=2.0)
