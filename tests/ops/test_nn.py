"""Cases for hybridlib/ops/nn.py (FullyConnected, dot, batch_dot, activations, Dropout) and
softmax.py (the softmax family and SoftmaxOutput), and for loss_ops.py's loss layers.

The literals in the plain tests below were read from MXNet 1.9.1.
"""
import json
import math

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, DTypeError, ShapeError
from hybridlib.cached_op import CachedOp

from harness import Case, away_from, check_case, positive, uniform

_erf = np.vectorize(math.erf)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_LAMBDA = 1.0507009873554804934193349852946


# -------------------------------------------------------------------------------------------------
# References, written independently of the implementation
# -------------------------------------------------------------------------------------------------

def _fc(x, w, b=None, num_hidden=None, no_bias=False, flatten=True):
    if flatten:
        out = x.reshape(x.shape[0], -1) @ w.T
    else:
        out = np.einsum('...k,hk->...h', x, w)
    return out if b is None else out + b


def _dot(a, b, transpose_a=False, transpose_b=False, forward_stype=None):
    """MXNet's dot by loops over the contracted index."""
    if a.ndim == 1 and b.ndim == 1:
        return np.array([np.sum(a * b)])
    a = np.moveaxis(a, 0, -1) if transpose_a and a.ndim > 1 else a
    b = np.moveaxis(b, -1, 0) if transpose_b and b.ndim > 1 else b
    out = 0
    for k in range(a.shape[-1]):
        out = out + np.multiply.outer(a[..., k], b[k])
    return out


def _batch_dot(a, b, transpose_a=False, transpose_b=False, forward_stype=None):
    a = np.swapaxes(a, -1, -2) if transpose_a else a
    b = np.swapaxes(b, -1, -2) if transpose_b else b
    return np.einsum('...mk,...kn->...mn', a, b)


def _softmax(x, axis=-1, temperature=None, length=None):
    x = x / (temperature or 1.0)
    if length is not None:
        steps = np.arange(x.shape[axis]).reshape([-1] + [1] * (x.ndim - axis % x.ndim - 1))
        keep = steps < np.expand_dims(length, axis)
        x = np.where(keep, x, -np.inf)
    with np.errstate(invalid='ignore'):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACTIVATIONS = {
    'relu': lambda x: np.maximum(x, 0),
    'sigmoid': _sigmoid,
    'tanh': np.tanh,
    'softrelu': lambda x: np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20)))),
    'softsign': lambda x: x / (1 + np.abs(x)),
}


def _leaky(x, gamma=None, act_type='leaky', slope=0.25, lower_bound=0.125, upper_bound=0.334):
    if act_type == 'leaky':
        return np.where(x > 0, x, slope * x)
    if act_type == 'prelu':
        g = gamma.reshape((1, -1) + (1,) * (x.ndim - 2)) if gamma.ndim == 1 else gamma
        return np.where(x > 0, x, g * x)
    if act_type == 'elu':
        return np.where(x > 0, x, slope * (np.exp(x) - 1))
    if act_type == 'selu':
        return SELU_LAMBDA * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1))
    if act_type == 'gelu':
        return 0.5 * x * (1 + _erf(x / np.sqrt(2)))
    mean = (lower_bound + upper_bound) / 2                     # rrelu, predict mode
    return [np.where(x > 0, x, mean * x), np.full(x.shape, mean)]


def _check_rrelu_train(outs, x, act_type, lower_bound, upper_bound):
    out, mask = outs
    assert np.all((mask >= lower_bound) & (mask <= upper_bound))
    assert len(np.unique(mask)) == mask.size                  # one draw per element
    np.testing.assert_allclose(out, np.where(x > 0, x, mask * x), rtol=1e-6)


# SoftmaxOutput's gradient rules (MXNet 1.9.1), row by row
def _softmax_output_rows(x, attrs):
    if attrs.get('multi_output'):
        return _softmax(x, axis=1)
    if attrs.get('preserve_shape'):
        return _softmax(x, axis=-1)
    return _softmax(x.reshape(x.shape[0], -1), axis=1).reshape(x.shape)


def _softmax_output_ref(x, label, **attrs):
    return _softmax_output_rows(x, attrs)


def _softmax_output_grad(out, label, grad_scale=1.0, ignore_label=-1.0, multi_output=False,
                         use_ignore=False, preserve_shape=False, normalization='null',
                         out_grad=False, smooth_alpha=0.0):
    if label.shape == out.shape:
        grad = (out - label) * grad_scale
        return grad * out if out_grad else grad
    ignore = int(ignore_label)
    labels = [int(v) for v in label.reshape(-1)]
    grad = np.zeros_like(out)
    if multi_output:
        n, c = out.shape[:2]
        o = out.reshape(n, c, -1)
        g = grad.reshape(n, c, -1)
        lab = np.array(labels).reshape(n, -1)
        for i in range(n):
            for j in range(o.shape[2]):
                for k in range(c):
                    g[i, k, j] = o[i, k, j] - (k == lab[i, j])
                if use_ignore and lab[i, j] == ignore:
                    g[i, :, j] = 0
        spatial = o.shape[2]
        divisor = {'null': spatial, 'batch': spatial * n}.get(normalization)
    else:
        o = out.reshape(-1, out.shape[-1]) if preserve_shape else out.reshape(out.shape[0], -1)
        g = grad.reshape(o.shape)
        c = o.shape[1]
        for i in range(o.shape[0]):
            for k in range(c):
                if smooth_alpha:
                    target = 1 - smooth_alpha if k == labels[i] else smooth_alpha / (c - 1)
                else:
                    target = float(k == labels[i])
                g[i, k] = o[i, k] - target
            if use_ignore and labels[i] == ignore:
                g[i] = 0
        divisor = {'null': 1, 'batch': len(labels)}.get(normalization)
    if divisor is None:                                        # 'valid'
        divisor = max(sum(v != ignore for v in labels), 1)
    grad *= grad_scale / divisor
    return grad * out if out_grad else grad


def _softmax_output_grad_ref(cots, x, label, **attrs):
    out = _softmax_output_rows(x, attrs)
    return [_softmax_output_grad(out, label, **attrs), None]


def _regression_grad(fn):
    def ref(cots, x, label, grad_scale=1.0):
        out = _sigmoid(x) if fn == 'logistic' else x
        diff = out - label.reshape(out.shape)
        diff = np.sign(diff) if fn == 'mae' else diff
        return [diff * grad_scale / (label.size // label.shape[0]), None]
    return ref


def _make_loss_grad(cots, x, grad_scale=1.0, valid_thresh=0.0, normalization='null'):
    if normalization == 'batch':
        return [np.full(x.shape, grad_scale / x.shape[0])]
    if normalization == 'valid':
        return [np.full(x.shape, grad_scale / max(np.sum(x > valid_thresh), 1))]
    return [np.full(x.shape, grad_scale)]


def _softmax_cross_entropy(x, label):
    p = _softmax(x, axis=1)
    return np.array([-sum(np.log(p[i, int(label[i])]) for i in range(x.shape[0]))])


def _check_dropout(p, axes=()):
    def check(outs, x, **attrs):
        out = outs[0]
        kept = out != 0
        np.testing.assert_allclose(out[kept], x[kept] / (1 - p), rtol=1e-12)
        assert 0 < kept.sum() < kept.size
        for axis in axes:                                      # one draw along each axis
            assert np.all(kept == kept.take([0], axis=axis))
    return check


# -------------------------------------------------------------------------------------------------
# Cases
# -------------------------------------------------------------------------------------------------

LABELS4 = np.array([0.0, 2.0, 1.0, 2.0])
X43 = uniform((4, 3), -2, 2)

CASES = [
    # FullyConnected
    Case('FullyConnected', [(3, 4), (5, 4), (5,)], dict(num_hidden=5), ref=_fc),
    Case('FullyConnected', [(2, 2, 3), (4, 6), (4,)], dict(num_hidden=4), ref=_fc,
         name='flatten-3d'),
    Case('FullyConnected', [(2, 2, 3), (4, 3)], dict(num_hidden=4, no_bias=True, flatten=False),
         ref=_fc, name='last-axis-3d'),
    Case('FullyConnected', [(2, 3, 2, 3), (4, 3), (4,)], dict(num_hidden=4, flatten=False),
         ref=_fc, name='last-axis-4d-bias'),
    Case('FullyConnected', [(3,), (4, 3), (4,)], dict(num_hidden=4, flatten=False),
         ref=lambda x, w, b, **a: w @ x + b, name='last-axis-1d'),
    Case('FullyConnected', [(3,), (2, 1)], dict(num_hidden=2, no_bias=True),
         ref=lambda x, w, **a: x[:, None] @ w.T, name='flatten-1d'),
    # dot: every transpose flag on matrices, vectors and 3-D arrays
    Case('dot', [(2, 3), (3, 4)], ref=_dot),
    Case('dot', [(3, 2), (3, 4)], dict(transpose_a=True), ref=_dot, name='ta'),
    Case('dot', [(2, 3), (4, 3)], dict(transpose_b=True), ref=_dot, name='tb'),
    Case('dot', [(3, 2), (4, 3)], dict(transpose_a=True, transpose_b=True), ref=_dot,
         name='ta-tb'),
    Case('dot', [(3,), (3,)], ref=_dot, name='vectors'),
    Case('dot', [(3,), (3, 2)], dict(transpose_a=True), ref=_dot, name='vector-ta'),
    Case('dot', [(2, 3), (3,)], dict(transpose_b=True), ref=_dot, name='matrix-vector-tb'),
    Case('dot', [(2,), (2, 2, 3)], ref=_dot, name='vector-3d'),
    Case('dot', [(2, 2, 3), (3, 2)], ref=_dot, name='3d'),
    Case('dot', [(2, 2, 3), (2, 3)], dict(transpose_a=True), ref=_dot, name='3d-ta'),
    Case('dot', [(2, 2, 3), (2, 3)], dict(transpose_b=True), ref=_dot, name='3d-tb'),
    Case('dot', [(2, 2, 3), (3, 2)], dict(transpose_a=True, transpose_b=True), ref=_dot,
         name='3d-ta-tb'),
    Case('dot', [(2, 3), (3, 2, 2)], dict(forward_stype='default'), ref=_dot, name='2d-3d'),
    # batch_dot
    Case('batch_dot', [(2, 2, 3), (2, 3, 2)], ref=_batch_dot),
    Case('batch_dot', [(2, 3, 2), (2, 3, 2)], dict(transpose_a=True), ref=_batch_dot,
         name='ta'),
    Case('batch_dot', [(2, 2, 3), (2, 2, 3)], dict(transpose_b=True), ref=_batch_dot,
         name='tb'),
    Case('batch_dot', [(2, 3, 2), (2, 2, 3)], dict(transpose_a=True, transpose_b=True),
         ref=_batch_dot, name='ta-tb'),
    Case('batch_dot', [(2, 1, 2, 2), (2, 1, 2, 3)], ref=_batch_dot, name='4d'),
    # Activation
    Case('Activation', [away_from((2, 3))], dict(act_type='relu'),
         ref=lambda x, act_type: ACTIVATIONS[act_type](x), name='relu'),
    Case('Activation', [uniform((2, 3), -3, 3)], dict(act_type='sigmoid'),
         ref=lambda x, act_type: ACTIVATIONS[act_type](x), name='sigmoid'),
    Case('Activation', [uniform((2, 3), -2, 2)], dict(act_type='tanh'),
         ref=lambda x, act_type: ACTIVATIONS[act_type](x), name='tanh'),
    Case('Activation', [uniform((2, 3), -3, 3)], dict(act_type='softrelu'),
         ref=lambda x, act_type: ACTIVATIONS[act_type](x), name='softrelu'),
    Case('Activation', [np.array([-30.0, 19.0, 21.0, 40.0])], dict(act_type='softrelu'),
         ref=lambda x, act_type: ACTIVATIONS[act_type](x), name='softrelu-large'),
    Case('Activation', [away_from((2, 3))], dict(act_type='softsign'),
         ref=lambda x, act_type: ACTIVATIONS[act_type](x), name='softsign'),
    # LeakyReLU
    Case('LeakyReLU', [away_from((2, 3))], dict(slope=0.1), ref=_leaky, name='leaky'),
    Case('LeakyReLU', [away_from((2, 3, 2)), positive((3,), 0.1, 0.5)],
         dict(act_type='prelu'), ref=_leaky, name='prelu'),
    Case('LeakyReLU', [away_from((4, 3)), positive((3,), 0.1, 0.5)], dict(act_type='prelu'),
         ref=_leaky, name='prelu-2d'),
    Case('LeakyReLU', [away_from((2, 3), low=-2, high=2)], dict(act_type='elu', slope=0.7),
         ref=_leaky, name='elu'),
    Case('LeakyReLU', [away_from((2, 3), low=-2, high=2)], dict(act_type='selu'), ref=_leaky,
         name='selu'),
    Case('LeakyReLU', [uniform((2, 3), -3, 3)], dict(act_type='gelu'), ref=_leaky,
         name='gelu'),
    Case('LeakyReLU', [away_from((2, 3))],
         dict(act_type='rrelu', lower_bound=0.2, upper_bound=0.4), ref=_leaky,
         name='rrelu-predict'),
    Case('LeakyReLU', [away_from((2, 3))],
         dict(act_type='rrelu', lower_bound=0.2, upper_bound=0.4),
         ref=_check_rrelu_train, train=True, random=True, name='rrelu-train'),
    # softmax family
    Case('softmax', [uniform((2, 3), -2, 2)], ref=lambda x: _softmax(x)),
    Case('softmax', [uniform((3, 2, 2), -2, 2)], dict(axis=0, temperature=2.5),
         ref=lambda x, axis, temperature: _softmax(x, axis, temperature), name='axis0-T'),
    Case('softmax', [uniform((3, 4), -2, 2), np.array([2, 4, 1], np.int32)],
         dict(use_length=True), ref=lambda x, n, use_length: _softmax(x, length=n),
         name='length'),
    Case('softmax', [uniform((3, 2, 2), -2, 2), np.array([[1, 2], [0, 2], [2, 1]], np.int64)],
         dict(axis=1, use_length=True), grad_inputs=[0],
         ref=lambda x, n, axis, use_length: np.nan_to_num(_softmax(x, axis, length=n)),
         name='length-axis1'),
    Case('softmax', [uniform((2, 3), -2, 2)], dict(dtype='float64'),
         ref=lambda x, dtype: _softmax(x), name='dtype'),
    Case('log_softmax', [uniform((2, 3), -2, 2)], dict(axis=0),
         ref=lambda x, axis: np.log(_softmax(x, axis))),
    Case('log_softmax', [uniform((2, 3), -2, 2)], dict(temperature=0.5),
         ref=lambda x, temperature: np.log(_softmax(x, -1, temperature)), name='T'),
    Case('softmin', [uniform((2, 3), -2, 2)], dict(temperature=2.0),
         ref=lambda x, temperature: _softmax(-x, -1, temperature)),
    Case('SoftmaxActivation', [uniform((2, 3), -2, 2)], ref=lambda x: _softmax(x)),
    Case('SoftmaxActivation', [uniform((2, 3, 2), -2, 2)], dict(mode='channel'),
         ref=lambda x, mode: _softmax(x, 1), name='channel'),
    # SoftmaxOutput: MXNet's gradient, whatever the head gradient
    Case('SoftmaxOutput', [X43, LABELS4], ref=_softmax_output_ref,
         grad_ref=_softmax_output_grad_ref, grad_inputs=[0]),
    Case('Softmax', [X43, LABELS4], dict(normalization='batch', grad_scale=2.0),
         ref=_softmax_output_ref, grad_ref=_softmax_output_grad_ref, grad_inputs=[0],
         name='alias-batch'),
    Case('SoftmaxOutput', [X43, LABELS4], dict(normalization='valid', use_ignore=True,
                                               ignore_label=2),
         ref=_softmax_output_ref, grad_ref=_softmax_output_grad_ref, grad_inputs=[0],
         name='valid-ignore'),
    Case('SoftmaxOutput', [X43, np.array([0.0, 2.7, 1.0, 5.0])], dict(smooth_alpha=0.3),
         ref=_softmax_output_ref, grad_ref=_softmax_output_grad_ref, grad_inputs=[0],
         name='smooth-truncated-out-of-range'),
    Case('SoftmaxOutput', [X43, LABELS4], dict(out_grad=True, grad_scale=1.5),
         ref=_softmax_output_ref, grad_ref=_softmax_output_grad_ref, grad_inputs=[0],
         name='out_grad'),
    Case('SoftmaxOutput', [uniform((2, 3, 2), -2, 2), np.array([[2.0, 0, 1], [1, 1, 0]])],
         dict(normalization='batch'), ref=_softmax_output_ref,
         grad_ref=_softmax_output_grad_ref, grad_inputs=[0], name='flattened-3d'),
    Case('SoftmaxOutput', [uniform((2, 3, 2), -2, 2), np.array([[0.0, 1, 1], [1, 0, 1]])],
         dict(preserve_shape=True, normalization='batch'), ref=_softmax_output_ref,
         grad_ref=_softmax_output_grad_ref, grad_inputs=[0], name='preserve_shape'),
    Case('SoftmaxOutput', [uniform((2, 3, 2), -2, 2), np.array([[0.0, 2.0], [1.0, 1.0]])],
         dict(multi_output=True, smooth_alpha=0.2), ref=_softmax_output_ref,
         grad_ref=_softmax_output_grad_ref, grad_inputs=[0], name='multi_output'),
    Case('SoftmaxOutput', [uniform((2, 3, 2), -2, 2), np.array([[0.0, 2.0], [1.0, 1.0]])],
         dict(multi_output=True, normalization='batch'), ref=_softmax_output_ref,
         grad_ref=_softmax_output_grad_ref, grad_inputs=[0], name='multi_output-batch'),
    Case('SoftmaxOutput', [uniform((2, 3, 2), -2, 2), np.array([[0.0, 2.0], [1.0, 2.0]])],
         dict(multi_output=True, normalization='valid', use_ignore=True, ignore_label=2),
         ref=_softmax_output_ref, grad_ref=_softmax_output_grad_ref, grad_inputs=[0],
         name='multi_output-valid'),
    Case('_backward_SoftmaxOutput', [positive((4, 3), 0.0, 1.0), LABELS4],
         dict(normalization='valid', ignore_label=1, use_ignore=True),
         ref=lambda o, lab, **a: _softmax_output_grad(o, lab, **a), grad=False),
    Case('softmax_cross_entropy', [X43, LABELS4], ref=_softmax_cross_entropy,
         grad_inputs=[0]),
    # regression outputs and MakeLoss
    Case('LinearRegressionOutput', [(3, 2), (3, 2)], dict(grad_scale=3.0),
         ref=lambda x, lab, grad_scale: x, grad_ref=_regression_grad('linear'),
         grad_inputs=[0]),
    Case('LinearRegressionOutput', [(3, 1), (3,)], ref=lambda x, lab: x,
         grad_ref=_regression_grad('linear'), grad_inputs=[0], name='column'),
    Case('LogisticRegressionOutput', [(3, 2), positive((3, 2), 0.0, 1.0)],
         dict(grad_scale=3.0), ref=lambda x, lab, grad_scale: _sigmoid(x),
         grad_ref=_regression_grad('logistic'), grad_inputs=[0]),
    Case('MAERegressionOutput', [uniform((3, 2)), uniform((3, 2))], dict(grad_scale=3.0),
         ref=lambda x, lab, grad_scale: x, grad_ref=_regression_grad('mae'), grad_inputs=[0]),
    Case('MakeLoss', [(3, 2)], dict(grad_scale=2.0), ref=lambda x, **a: x,
         grad_ref=_make_loss_grad),
    Case('MakeLoss', [(3, 2)], dict(normalization='batch'), ref=lambda x, **a: x,
         grad_ref=_make_loss_grad, name='batch'),
    Case('MakeLoss', [away_from((3, 2), points=(0.2,))],
         dict(normalization='valid', valid_thresh=0.2),
         ref=lambda x, **a: x, grad_ref=_make_loss_grad, name='valid'),
    # Dropout
    Case('Dropout', [(3, 4)], dict(p=0.5), ref=lambda x, p: x, name='predict'),
    Case('Dropout', [(4, 5)], dict(p=0.4), ref=_check_dropout(0.4), train=True, random=True,
         name='train'),
    Case('Dropout', [(3, 4, 2)], dict(p=0.5, axes=(1,)), ref=_check_dropout(0.5, (1,)),
         train=True, random=True, name='axes'),
    Case('Dropout', [(4, 5)], dict(p=0.3, mode='always'), ref=_check_dropout(0.3),
         random=True, name='always'),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_nn(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet's numbers and conventions
# -------------------------------------------------------------------------------------------------

def _value_and_grad(fn, x, head=None):
    x = nd.array(x, dtype='float64')
    x.attach_grad()
    with autograd.record():
        y = fn(x)
    y.backward(None if head is None else nd.array(head, dtype='float64'))
    return y.asnumpy(), x.grad.asnumpy()


def test_activation_softrelu_softsign_match_mxnet():
    x = np.array([-30.0, -2.0, -0.5, 0.5, 2.0, 25.0])
    y, g = _value_and_grad(lambda v: nd.Activation(v, act_type='softrelu'), x)
    np.testing.assert_allclose(y, [9.3576229688e-14, 1.2692801104e-01, 4.7407698418e-01,
                                   9.7407698418e-01, 2.1269280110e+00, 25.0], rtol=1e-9)
    np.testing.assert_allclose(g, [9.3576229688e-14, 1.1920292202e-01, 3.7754066880e-01,
                                   6.2245933120e-01, 8.8079707798e-01, 1.0], rtol=1e-9)
    y, g = _value_and_grad(lambda v: nd.Activation(v, act_type='softsign'), x)
    np.testing.assert_allclose(y, [-0.9677419355, -0.6666666667, -0.3333333333, 0.3333333333,
                                   0.6666666667, 0.9615384615], rtol=1e-9)
    np.testing.assert_allclose(g, [0.0010405827, 0.1111111111, 0.4444444444, 0.4444444444,
                                   0.1111111111, 0.0014792899], rtol=1e-7)


X_LEAKY = np.array([-3.0, -1.0, -0.25, 0.25, 1.0, 3.0])


def test_leaky_relu_constants_match_mxnet():
    expected = {
        'elu': ([-0.4751064658, -0.3160602794, -0.1105996085, 0.25, 1.0, 3.0],
                [0.0248935342, 0.1839397206, 0.3894003915, 1.0, 1.0, 1.0]),
        'gelu': ([-0.0040496886, -0.158655256, -0.1003234237, 0.1496765763, 0.8413447142,
                  2.995950222],
                 [-0.0119456435, -0.0833154768, 0.3046266735, 0.6953732967, 1.0833154917,
                  1.0119456053]),
        'leaky': ([-1.5, -0.5, -0.125, 0.25, 1.0, 3.0], [0.5, 0.5, 0.5, 1.0, 1.0, 1.0]),
        'selu': ([-1.670568734, -1.1113307413, -0.3888901987, 0.2626752555, 1.0507010221,
                  3.1521030664], None),
    }
    for act, (value, grad) in expected.items():
        y, g = _value_and_grad(lambda v: nd.LeakyReLU(v, act_type=act, slope=0.5), X_LEAKY)
        np.testing.assert_allclose(y, value, rtol=1e-7, atol=1e-8, err_msg=act)
        if grad is not None:      # MXNet computes gelu in float32: 1e-7
            np.testing.assert_allclose(g, grad, rtol=1e-6, atol=1e-7, err_msg=act)


def test_selu_gradient_is_the_derivative():
    # MXNet 1.9.1's selu gradient is lambda * (out + alpha) for x <= 0, which is not the
    # derivative (at x = -3 it gives 0.00283107); hybridlib gives lambda * alpha * e^x.
    y, g = _value_and_grad(lambda v: nd.LeakyReLU(v, act_type='selu'), X_LEAKY)
    expected = np.where(X_LEAKY > 0, SELU_LAMBDA, SELU_LAMBDA * SELU_ALPHA * np.exp(X_LEAKY))
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_leaky_relu_kink_conventions():
    # at x == 0 the slope side is taken (MXNet: out > 0 ? 1 : slope)
    x = np.zeros(3)
    for act, slope in (('leaky', 0.3), ('elu', 0.3)):
        _, g = _value_and_grad(lambda v: nd.LeakyReLU(v, act_type=act, slope=slope), x)
        np.testing.assert_allclose(g, [slope] * 3)


def test_prelu_gamma_layouts():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (2, 3, 4))
    head = rng.uniform(-1, 1, x.shape)
    for gamma, gb, axes in ((np.array([0.25]), np.array(0.25), (0, 1, 2)),
                            (rng.uniform(0, 1, (2, 3)), None, (2,))):
        gb = gamma[:, :, None] if gb is None else gb
        xa, ga = nd.array(x, dtype='float64'), nd.array(gamma, dtype='float64')
        xa.attach_grad()
        ga.attach_grad()
        with autograd.record():
            y = nd.LeakyReLU(xa, ga, act_type='prelu')
        y.backward(nd.array(head, dtype='float64'))
        np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, x, gb * x))
        np.testing.assert_allclose(xa.grad.asnumpy(), head * np.where(x > 0, 1, gb))
        dgamma = (head * np.where(x > 0, 0, x)).sum(axis=axes).reshape(gamma.shape)
        np.testing.assert_allclose(ga.grad.asnumpy(), dgamma)
    with pytest.raises(ShapeError, match='gamma'):
        nd.LeakyReLU(nd.ones((2, 3, 4)), nd.ones((3, 4)), act_type='prelu')
    s = sym.LeakyReLU(sym.var('d'), act_type='prelu', name='lr')
    assert s.list_arguments() == ['d', 'lr_gamma']
    assert s.infer_shape(d=(2, 3, 4))[0] == [(2, 3, 4), (3,)]


def test_rrelu_outputs_and_modes():
    s = sym.LeakyReLU(sym.var('d'), act_type='rrelu', name='rr')
    assert s.list_outputs() == ['rr_output', 'rr_mask']
    assert json.loads(s.tojson())['node_row_ptr'] == [0, 1, 3]
    x = nd.array([[-1.0, 2.0, -4.0]])
    out, mask = nd.LeakyReLU(x, act_type='rrelu', lower_bound=0.1, upper_bound=0.3)
    np.testing.assert_allclose(out.asnumpy(), [[-0.2, 2.0, -0.8]], rtol=1e-6)
    mx.random.seed(3)
    with autograd.train_mode():
        out, mask = nd.LeakyReLU(x, act_type='rrelu', lower_bound=0.1, upper_bound=0.3)
    m = mask.asnumpy()
    assert np.all((m >= 0.1) & (m <= 0.3))


SOFTMAX_OUTPUT_X = np.array([[0.1, -0.4, 0.7], [1.2, 0.3, -0.5], [-0.2, 0.0, 0.2],
                             [0.5, 0.5, -1.0]])
SOFTMAX_OUTPUT_GRADS = [
    (dict(), [[-0.7083399713, 0.1769007496, 0.5314392217],
              [0.6292263625, 0.2558243481, -0.8850507107],
              [0.2693074992, -0.6710670777, 0.4017595785],
              [0.4498162177, 0.4498162177, -0.8996324353]]),
    (dict(normalization='batch'), [[-0.1770849928, 0.0442251874, 0.1328598054],
                                   [0.1573065906, 0.063956087, -0.2212626777],
                                   [0.0673268748, -0.1677667694, 0.1004398946],
                                   [0.1124540544, 0.1124540544, -0.2249081088]]),
    (dict(normalization='valid', use_ignore=True, ignore_label=2),
     [[-0.3541699856, 0.0884503748, 0.2657196108], [0, 0, 0],
      [0.1346537496, -0.3355335389, 0.2008797893], [0, 0, 0]]),
    (dict(use_ignore=True, ignore_label=1, grad_scale=3.0),
     [[-2.1250199138, 0.5307022489, 1.594317665], [1.8876790876, 0.7674730444, -2.655152132],
      [0, 0, 0], [1.349448653, 1.349448653, -2.6988973059]]),
    # 'valid' counts labels == ignore_label even without use_ignore
    (dict(normalization='valid', ignore_label=2),
     [[-0.3541699856, 0.0884503748, 0.2657196108], [0.3146131813, 0.1279121741, -0.4425253553],
      [0.1346537496, -0.3355335389, 0.2008797893], [0.2249081088, 0.2249081088, -0.4498162177]]),
]


@pytest.mark.parametrize('attrs,expected', SOFTMAX_OUTPUT_GRADS)
def test_softmax_output_gradient_matches_mxnet(attrs, expected):
    x = nd.array(SOFTMAX_OUTPUT_X, dtype='float64')
    x.attach_grad()
    with autograd.record():
        y = nd.SoftmaxOutput(x, nd.array([0, 2, 1, 2], dtype='float64'), **attrs)
    y.backward(nd.ones_like(y) * 5)             # the head gradient is ignored
    np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-6, atol=1e-9)


def test_softmax_output_probability_label():
    # a label of data's shape holds probabilities: grad_scale * (out - label), no normalizer
    rng = np.random.default_rng(5)
    x, label = rng.uniform(-1, 1, (4, 3)), rng.uniform(0, 1, (4, 3))
    for attrs in (dict(grad_scale=2.0, normalization='batch'), dict(out_grad=True)):
        xa = nd.array(x, dtype='float64')
        xa.attach_grad()
        with autograd.record():
            y = nd.SoftmaxOutput(xa, nd.array(label, dtype='float64'), **attrs)
        y.backward()
        np.testing.assert_allclose(y.asnumpy(), _softmax(x))
        np.testing.assert_allclose(xa.grad.asnumpy(),
                                   _softmax_output_grad(_softmax(x), label, **attrs))
    assert sym.SoftmaxOutput(sym.var('d'), sym.var('l')).infer_shape(
        d=(4, 3), l=(4, 3))[0] == [(4, 3), (4, 3)]


def test_softmax_output_symbol_label_and_shapes():
    with mx.name.NameManager():
        s = sym.Softmax(sym.var('d'))
    assert s.list_arguments() == ['d', 'softmax0_label']
    assert json.loads(s.tojson())['nodes'][-1]['op'] == 'SoftmaxOutput'
    s = sym.SoftmaxOutput(sym.var('d'), sym.var('l'), multi_output=True)
    assert s.infer_shape(d=(4, 3, 5, 6))[0] == [(4, 3, 5, 6), (4, 30)]
    for label in ((4, 5, 6), (4, 1, 5, 6)):
        assert s.infer_shape(d=(4, 3, 5, 6), l=label)[0][1] == label
    with pytest.raises(ShapeError, match='label'):
        s.infer_shape(d=(4, 3, 5, 6), l=(4, 5, 3))
    # a (N, 1, spatial...) label is the same as (N, spatial...)
    x = nd.array(np.random.default_rng(4).uniform(-1, 1, (2, 3, 2)), dtype='float64')
    grads = []
    for label in ([[0, 2], [1, 2]], [[[0, 2]], [[1, 2]]]):
        x.attach_grad()
        with autograd.record():
            y = nd.SoftmaxOutput(x, nd.array(label, dtype='float64'), multi_output=True,
                                 use_ignore=True, ignore_label=2, normalization='valid')
        y.backward()
        grads.append(x.grad.asnumpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    s = sym.SoftmaxOutput(sym.var('d'), sym.var('l'), preserve_shape=True)
    assert s.infer_shape(d=(4, 3, 5, 6))[0] == [(4, 3, 5, 6), (4, 3, 5)]


def test_softmax_length_and_dtype_rules():
    x = nd.array(np.arange(12.0).reshape(3, 4) / 5)
    out = nd.softmax(x, nd.array([0, 4, 1], dtype='int32'), use_length=True).asnumpy()
    np.testing.assert_allclose(out[0], 0)                       # length 0: a row of zeros
    np.testing.assert_allclose(out[1], [0.18065718, 0.22065516, 0.26950884, 0.3291788],
                               rtol=1e-6)
    np.testing.assert_allclose(out[2], [1, 0, 0, 0])
    with pytest.raises(DTypeError, match='int32 or int64'):
        nd.softmax(x, nd.array([1, 2, 3]), use_length=True)
    with pytest.raises(AttributeParseError, match='length'):
        nd.log_softmax(x, use_length=True)
    s = sym.softmax(sym.var('d'), sym.var('l'), use_length=True, axis=1)
    assert s.infer_shape(d=(2, 3, 4))[0] == [(2, 3, 4), (2, 4)]
    # dtype is the output type; the gradient comes back in the input's type
    x32 = nd.array(np.array([[0.5, -1.0, 2.0]]), dtype='float32')
    x32.attach_grad()
    with autograd.record():
        y = nd.softmax(x32, dtype='float64')
    head = np.array([[1.0, -2.0, 0.5]])
    y.backward(nd.array(head, dtype='float64'))
    assert y.dtype == np.float64 and x32.grad.dtype == np.float32
    p = _softmax(np.array([[0.5, -1.0, 2.0]]))
    np.testing.assert_allclose(x32.grad.asnumpy(), p * (head - (head * p).sum()), rtol=1e-6)
    assert nd.log_softmax(nd.ones((2, 2), dtype='float16'), dtype='float32').dtype == np.float32


@pytest.mark.parametrize('axis', [-1, 1])
def test_softmax_length_with_nan_and_infinity(axis):
    # MXNet's loop: a row holding NaN or +inf within its length is NaN there, entries past the
    # length are 0 whatever they hold, a length of 0 gives zeros; the rows without them are
    # the plain softmax of their first length entries (the last axis has a shorter path)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 6, 6)).astype(np.float32)
    length = rng.integers(1, 8, (4, 6)).astype(np.int32)
    length[0, 0], length[1, 1], length[2, 2] = 0, 3, 2
    x[1, 1, 4] = np.nan                  # past its length
    x[2, 2, 1] = np.inf                  # within
    x[3, 3, 0] = np.nan
    length[3, 3] = 6
    xt = x if axis == -1 else x.transpose(0, 2, 1).copy()
    got = nd.softmax(nd.array(xt), nd.array(length, dtype='int32'), axis=axis,
                     use_length=True).asnumpy()
    got = got if axis == -1 else got.transpose(0, 2, 1)
    for i, j in np.ndindex(4, 6):
        k = min(length[i, j], 6)
        row = x[i, j, :k].astype(np.float64)
        want = np.zeros(6)
        if not np.isfinite(row).all():
            want[:k] = np.nan
        elif k:
            want[:k] = np.exp(row - row.max()) / np.exp(row - row.max()).sum()
        np.testing.assert_allclose(got[i, j], want, rtol=1e-5, atol=1e-7, err_msg=f'{i, j}')


@pytest.mark.parametrize('op', [nd.softmax, nd.log_softmax])
def test_softmax_rows_without_nan_or_infinity_as_beside_them(op):
    # finite rows take a shorter path than a batch with NaN or infinity (oneDNN's rules):
    # the same bits either way
    data = np.random.default_rng(3).normal(size=(6, 20)).astype(np.float32) * 30
    special = data.copy()
    special[0, 3], special[1, 5] = np.nan, np.inf
    alone = op(nd.array(data[2:])).asnumpy()
    beside = op(nd.array(special)).asnumpy()[2:]
    assert np.array_equal(alone, beside)


def test_softmax_activation_modes():
    with pytest.raises(ShapeError, match='channel'):
        nd.SoftmaxActivation(nd.ones((2, 3)), mode='channel')
    x = np.random.default_rng(1).uniform(-1, 1, (2, 3, 2))
    # 'instance' is the last axis (mshadow's FlatTo2D), not the flattened instance
    np.testing.assert_allclose(nd.SoftmaxActivation(nd.array(x, dtype='float64')).asnumpy(),
                               _softmax(x, -1))


def test_dot_transpose_flags_match_mxnet():
    a = np.arange(12.0).reshape(2, 2, 3) / 10 - 0.5
    b2 = np.arange(6.0).reshape(2, 3) / 5 - 0.4
    c2 = np.arange(6.0).reshape(3, 2) / 5 - 0.4
    v3, v2 = np.array([0.5, -1.0, 2.0]), np.array([1.5, -0.5])

    def dot(x, y, **kw):
        return nd.dot(nd.array(x, dtype='float64'), nd.array(y, dtype='float64'), **kw).asnumpy()
    np.testing.assert_allclose(dot(a, c2), [[[0.08, -0.16], [0.08, 0.02]],
                                            [[0.08, 0.2], [0.08, 0.38]]], atol=1e-12)
    np.testing.assert_allclose(dot(a, b2, transpose_a=True),
                               [[[0.22, 0.14, 0.06], [0.2, 0.16, 0.12], [0.18, 0.18, 0.18]],
                                [[0.16, 0.2, 0.24], [0.14, 0.22, 0.3], [0.12, 0.24, 0.36]]],
                               atol=1e-12)
    np.testing.assert_allclose(dot(a, b2, transpose_b=True), [[[0.28, -0.44], [0.1, -0.08]],
                                                              [[-0.08, 0.28], [-0.26, 0.64]]],
                               atol=1e-12)
    np.testing.assert_allclose(dot(a, c2, transpose_a=True, transpose_b=True),
                               [[[0.18, 0.02, -0.14], [0.12, 0.04, -0.04], [0.06, 0.06, 0.06]],
                                [[0.0, 0.08, 0.16], [-0.06, 0.1, 0.26], [-0.12, 0.12, 0.36]]],
                               atol=1e-12)
    np.testing.assert_allclose(dot(v3, c2, transpose_a=True), [0.6, 0.9], atol=1e-12)
    np.testing.assert_allclose(dot(b2, v3, transpose_b=True), [0.0, 0.9], atol=1e-12)
    np.testing.assert_allclose(dot(v3, v3), [5.25])
    np.testing.assert_allclose(dot(v2, a), [[-0.8, -0.7, -0.6], [-0.5, -0.4, -0.3]], atol=1e-12)
    with pytest.raises(ShapeError, match='transpose vectors'):
        nd.dot(nd.ones((3,)), nd.ones((3,)), transpose_a=True)
    with pytest.raises(ShapeError, match=r'dot.*\(2, 3, 4\).*\(4, 5\)'):
        nd.dot(nd.ones((2, 3, 4)), nd.ones((4, 5)), transpose_b=True)
    with pytest.raises(DTypeError):
        nd.dot(nd.ones((2, 3), dtype='int32'), nd.ones((3, 2), dtype='int32'))


@pytest.mark.parametrize('dtype', ['float32', 'float16', 'int32'])
def test_dot_with_large_outputs(dtype):
    # products of 8192 outputs or more take another numpy entry point (no zero-filling): the
    # same values, every transpose, fresh or into a compiled graph's buffer
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (96, 130)).astype(dtype)
    b = rng.integers(-3, 4, (130, 100)).astype(dtype)
    want = a.astype(np.float64) @ b.astype(np.float64)
    for ta, tb in ((False, False), (True, False), (False, True), (True, True)):
        x, y = (a.T.copy() if ta else a), (b.T.copy() if tb else b)
        if dtype == 'int32':
            with pytest.raises(DTypeError):
                nd.dot(nd.array(x, dtype=dtype), nd.array(y, dtype=dtype), transpose_a=ta)
            return
        got = nd.dot(nd.array(x, dtype=dtype), nd.array(y, dtype=dtype),
                     transpose_a=ta, transpose_b=tb).asnumpy()
        np.testing.assert_array_equal(got, want.astype(dtype))
        graph = sym.dot(sym.var('x'), sym.var('y'), transpose_a=ta, transpose_b=tb) * 1
        compiled = CachedOp(graph, {'static_alloc': True})(nd.array(x, dtype=dtype),
                                                             nd.array(y, dtype=dtype))[0]
        np.testing.assert_array_equal(compiled.asnumpy(), got)
    w = rng.standard_normal((120, 130)).astype(dtype)
    fc = nd.FullyConnected(nd.array(a), nd.array(w), nd.zeros(120), num_hidden=120)
    np.testing.assert_allclose(fc.asnumpy(), a.astype(np.float32) @ w.astype(np.float32).T,
                               rtol=1e-2 if dtype == 'float16' else 1e-5, atol=1e-4)


def test_batch_dot_errors():
    with pytest.raises(ShapeError, match='at least 3 axes'):
        nd.batch_dot(nd.ones((3, 4)), nd.ones((4, 5)))
    with pytest.raises(ShapeError, match='batch dimensions'):
        nd.batch_dot(nd.ones((1, 3, 4)), nd.ones((2, 4, 5)))
    with pytest.raises(ShapeError, match='batch_dot'):
        nd.batch_dot(nd.ones((2, 3, 4)), nd.ones((2, 5, 5)))


def test_fully_connected_shape_inference():
    s = sym.FullyConnected(sym.var('d'), num_hidden=5, name='fc')
    assert s.list_arguments() == ['d', 'fc_weight', 'fc_bias']
    assert s.infer_shape(d=(2, 3, 4))[0] == [(2, 3, 4), (5, 12), (5,)]
    # data's input features come from the weight as well
    args, outs, _ = s.infer_shape_partial(d=(2, 0), fc_weight=(5, 4))
    assert args[0] == (2, 4) and outs == [(2, 5)]
    s = sym.FullyConnected(sym.var('d'), num_hidden=5, flatten=False, no_bias=True, name='fc')
    assert s.list_arguments() == ['d', 'fc_weight']
    args, outs, _ = s.infer_shape_partial(d=(2, 3, 0), fc_weight=(5, 4))
    assert args == [(2, 3, 4), (5, 4)] and outs == [(2, 3, 5)]
    with pytest.raises(ShapeError, match=r'FullyConnected.*weight.*\(5, 3\).*\(5, 4\)'):
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((5, 4)), nd.ones((5,)), num_hidden=5)
    with pytest.raises(ShapeError, match='bias'):
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((5, 3)), nd.ones((4,)), num_hidden=5)
    with pytest.raises(AttributeParseError, match='num_hidden'):
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((5, 3)), no_bias=True)


def test_fully_connected_json_matches_mxnet():
    s = sym.FullyConnected(sym.var('d'), num_hidden=5, name='fc')
    node = json.loads(s.tojson())['nodes'][-1]
    assert node == {'op': 'FullyConnected', 'name': 'fc', 'attrs': {'num_hidden': '5'},
                    'inputs': [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}


def test_dropout_scaling_axes_and_outputs():
    x = nd.ones((40, 6, 5))
    mx.random.seed(0)
    with autograd.train_mode():
        y = nd.Dropout(x, p=0.25, axes=(0, 2)).asnumpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert np.all(y == y[:1, :, :1])                          # one draw per axis-1 slice
    with autograd.train_mode():
        y = nd.Dropout(nd.ones((200, 50)), p=0.3).asnumpy()
    assert abs((y == 0).mean() - 0.3) < 0.02
    np.testing.assert_array_equal(nd.Dropout(x, p=0.5).asnumpy(), x.asnumpy())   # predict
    np.testing.assert_array_equal(nd.Dropout(x, p=0.0, mode='always').asnumpy(), x.asnumpy())
    with mx.name.NameManager():
        s = sym.Dropout(sym.var('d'), p=0.3, axes=(1,))
    assert s.list_outputs() == ['dropout0_output']
    graph = json.loads(s.tojson())
    assert graph['node_row_ptr'] == [0, 1, 3]
    assert graph['nodes'][1]['attrs'] == {'axes': '(1,)', 'p': '0.3'}
    with pytest.raises(AttributeParseError, match='p must be'):
        nd.Dropout(x, p=1.5)
    # the gradient is the head gradient times the mask the forward drew
    xa = nd.array(np.random.default_rng(2).uniform(1, 2, (3, 4)))
    xa.attach_grad()
    with autograd.record():
        y = nd.Dropout(xa, p=0.5)
    y.backward(nd.ones_like(y) * 2)
    np.testing.assert_allclose(xa.grad.asnumpy(), 2 * y.asnumpy() / xa.asnumpy(), rtol=1e-6)


def test_regression_outputs_match_mxnet():
    x = np.array([[0.3, -0.2], [0.8, 0.1], [-0.5, 0.4]])
    lab = np.array([[0.5, 0.0], [1.0, 0.2], [0.0, -0.3]])
    expected = {
        'LinearRegressionOutput': [[-0.3, -0.3], [-0.3, -0.15], [-0.75, 1.05]],
        'LogisticRegressionOutput': [[0.1116637752, 0.675249004], [-0.4650382783, 0.4874687812],
                                     [0.5663110032, 1.3480314902]],
        'MAERegressionOutput': [[-1.5, -1.5], [-1.5, -1.5], [-1.5, 1.5]],
    }
    for op, grad in expected.items():
        xa = nd.array(x, dtype='float64')
        xa.attach_grad()
        with autograd.record():
            y = getattr(nd, op)(xa, nd.array(lab, dtype='float64'), grad_scale=3.0)
        y.backward(nd.ones_like(y) * 7)
        np.testing.assert_allclose(xa.grad.asnumpy(), grad, rtol=1e-8, err_msg=op)
    # a label of another shape with data's rows and size: read in data's shape
    xa = nd.array(x, dtype='float64')
    xa.attach_grad()
    with autograd.record():
        y = nd.LinearRegressionOutput(xa, nd.array(lab.reshape(3, 2, 1), dtype='float64'))
    y.backward()
    np.testing.assert_allclose(xa.grad.asnumpy(), (x - lab) / 2)
    with mx.name.NameManager():
        s = sym.LinearRegressionOutput(sym.var('d'))
    assert s.list_arguments() == ['d', 'linearregressionoutput0_label']
    assert s.infer_shape(d=(4, 1))[0] == [(4, 1), (4,)]
    assert s.infer_shape(d=(4, 3), linearregressionoutput0_label=(4, 3, 1))[0][1] == (4, 3, 1)
    with pytest.raises(ShapeError, match='size'):
        s.infer_shape(d=(4, 3), linearregressionoutput0_label=(4, 2))


def test_make_loss_valid_counts_strictly_greater():
    x = np.array([[0.25, -0.5], [0.75, 0.25], [1.0, -1.0]])
    _, g = _value_and_grad(lambda v: nd.MakeLoss(v, normalization='valid', valid_thresh=0.25),
                           x, head=np.full(x.shape, 9.0))
    np.testing.assert_allclose(g, np.full(x.shape, 0.5))        # 0.75 and 1.0 count


def test_softmax_cross_entropy_rules():
    with pytest.raises(ShapeError, match='2-D data'):
        nd.softmax_cross_entropy(nd.ones((2, 3, 4)), nd.ones((2,)))
    with pytest.raises(ShapeError, match='label'):
        nd.softmax_cross_entropy(nd.ones((4, 3)), nd.ones((5,)))
    with pytest.raises(DTypeError):
        nd.softmax_cross_entropy(nd.ones((4, 3)), nd.ones((4,), dtype='int32'))
    x = nd.array(SOFTMAX_OUTPUT_X, dtype='float64')
    out = nd.softmax_cross_entropy(x, nd.array([0, 2, 1, 2], dtype='float64'))
    assert out.shape == (1,)
    np.testing.assert_allclose(out.asnumpy(), _softmax_cross_entropy(SOFTMAX_OUTPUT_X,
                                                                     LABELS4))


def test_bad_attributes():
    with pytest.raises(AttributeParseError, match='act_type'):
        nd.Activation(nd.ones((2,)), act_type='log_sigmoid')
    with pytest.raises(AttributeParseError, match='dtype'):
        nd.softmax(nd.ones((2,)), dtype='int32')
    with pytest.raises(AttributeParseError, match='normalization'):
        nd.SoftmaxOutput(nd.ones((2, 3)), nd.ones((2,)), normalization='sum')
