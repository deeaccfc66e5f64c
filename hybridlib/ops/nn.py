"""Neural-network layers other than convolution, pooling and normalisation.

``FullyConnected``, ``dot`` and ``batch_dot`` (BLAS through ``xp.matmul``/``tensordot``); the
activations ``Activation`` and ``LeakyReLU``; ``Dropout``. The softmax family (with the loss
layer ``SoftmaxOutput``) is softmax.py; the other loss layers (``softmax_cross_entropy``,
``MakeLoss``, ``*RegressionOutput``) are in loss_ops.py.
"""
import functools
import math

import numpy as np

from ..base import DTypeError, ShapeError
from . import rng, special
from .attrs import Bool, BoolOrNone, Count, Float, Shape, Str
from .registry import BackwardNode, get, merge_shape, normalize_axis, register, same_dtype

__all__ = []

_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# MXNet's SELU constants (mshadow_op.h)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


def _float_dtype(attrs, *dtypes, what='inputs'):
    """``same_dtype``, restricted to the float types MXNet's BLAS-backed operators accept."""
    ins, outs = same_dtype(attrs, *dtypes)
    if outs[0] is not None and outs[0] not in _FLOATS:
        raise DTypeError(f'{what} must be float16, float32 or float64, got {outs[0].name}')
    return ins, outs


def _prod(dims):
    """The product of known dimensions, 0 when any is unknown."""
    return 0 if 0 in dims else int(np.prod(dims, dtype=np.int64))


# -------------------------------------------------------------------------------------------------
# dot, batch_dot, FullyConnected
# -------------------------------------------------------------------------------------------------

def _dot_axes(attrs, nda, ndb):
    """The contracted axes of MXNet's dot: a's first (transpose_a) or last, b's last
    (transpose_b) or first; a vector's only axis whatever the flags."""
    ax_a = 0 if attrs['transpose_a'] or nda == 1 else nda - 1
    ax_b = ndb - 1 if attrs['transpose_b'] and ndb > 1 else 0
    return ax_a, ax_b


# numpy's dot zero-fills its output before the BLAS product overwrites it (memset of the output:
# 20 us for 1 MB), matmul does not but costs about half a microsecond more per call; the two give
# the same bits (one sgemm). At 8192 elements the memset costs what matmul's call does.
_DOT_FILL_LIMIT = 8192


def _product(xp, shape, product_shape):
    """``product(a, b, out=None)``: the matrix product of (at most 2-d) ``a`` and ``b``, of
    shape ``product_shape``, as the output of ``shape`` (dot's or FullyConnected's: the same
    values on other axes), fresh or written into ``out``: numpy's ``dot`` for small outputs,
    ``matmul`` for large ones (see ``_DOT_FILL_LIMIT``)."""
    large = xp is np and len(product_shape) == 2 and math.prod(product_shape) >= _DOT_FILL_LIMIT
    matmul = xp.matmul if large else xp.dot
    if tuple(shape) == tuple(product_shape):
        return matmul

    def product(a, b, out=None):
        if out is None:
            return matmul(a, b).reshape(shape)
        matmul(a, b, out=out.reshape(product_shape))
        return out
    return product


def _matrix_grads(op, a, b, g, ta, tb):
    """Gradients of ``op(a, b, transpose_a=ta, transpose_b=tb)`` (2-D or batched)."""
    if not ta and not tb:
        return op(g, b, transpose_b=True), op(a, g, transpose_a=True)
    if ta and not tb:
        return op(b, g, transpose_b=True), op(a, g)
    if not ta and tb:
        return op(g, b), op(g, a, transpose_a=True)
    return (op(b, g, transpose_a=True, transpose_b=True),
            op(g, a, transpose_a=True, transpose_b=True))


@register('dot')
class dot:
    """MXNet's dot: contracts one axis of ``lhs`` with one axis of ``rhs``.

    ``lhs`` (..., k) and ``rhs`` (k, ...) give (lhs[:-1] + rhs[1:]); ``transpose_a`` contracts
    lhs's first axis instead (lhs (k, ...)), ``transpose_b`` rhs's last (rhs (..., k)); two
    vectors give their inner product of shape (1,). ``forward_stype`` only chooses MXNet's
    output storage; the result here is always dense, with the same values.
    """
    inputs = ('lhs', 'rhs')
    attrs = dict(transpose_a=Bool(False), transpose_b=Bool(False),
                 forward_stype=Str(None, choices=('csr', 'default', 'row_sparse')))
    backward_node = BackwardNode(('ograd0', 'in0', 'in1'))

    def specialise(xp, attrs, shapes, dtypes, is_train):
        # one matmul of lhs seen as (m, k) by rhs seen as (k, n): N-d inputs reshaped, a
        # contracted first (lhs) or last (rhs) axis by a transposed view; a vector stays one
        # (but lhs (1, k) with another vector: MXNet's result has shape (1,))
        a, b = tuple(shapes[0]), tuple(shapes[1])
        ax_a, ax_b = _dot_axes(attrs, len(a), len(b))
        k = a[ax_a]
        rest_a, rest_b = a[:ax_a] + a[ax_a + 1:], b[:ax_b] + b[ax_b + 1:]
        m, n = math.prod(rest_a), math.prod(rest_b)
        ta = len(a) > 1 and ax_a == 0
        tb = len(b) > 1 and ax_b == len(b) - 1
        if len(a) == 1:
            sa = (1, k) if len(b) == 1 else a
        else:
            sa = (k, m) if ta else (m, k)
        sb = b if len(b) == 1 else (n, k) if tb else (k, n)
        sa, sb = (None if sa == a else sa), (None if sb == b else sb)     # None: no reshape
        rows = (m,) if len(a) > 1 or len(b) == 1 else ()
        product = _product(xp, rest_a + rest_b or (1,), rows + ((n,) if len(b) > 1 else ()))

        def dot(lhs, rhs, out=None):
            x = lhs.reshape(sa) if sa else lhs
            y = rhs.reshape(sb) if sb else rhs
            return product(x.T if ta else x, y.T if tb else y, out=out)
        return dot

    def infer_shape(attrs, lhs, rhs):
        if lhs is None or rhs is None:
            return [lhs, rhs], [None]
        if len(lhs) == 1 and len(rhs) == 1:
            if attrs.transpose_a or attrs.transpose_b:
                raise ShapeError('cannot transpose vectors (dot of two 1-D arrays)')
            k = merge_shape(lhs, rhs, 'the vectors must have the same length')
            return [k, k], [(1,)]
        ax_a, ax_b = _dot_axes(attrs, len(lhs), len(rhs))
        ka, kb = lhs[ax_a], rhs[ax_b]
        if ka and kb and ka != kb:
            raise ShapeError(f'dot shape error: {tuple(lhs)} X {tuple(rhs)} contracts axes of '
                             f'sizes {ka} and {kb} (transpose_a={attrs.transpose_a}, '
                             f'transpose_b={attrs.transpose_b})')
        k = ka or kb
        lhs = tuple(k if i == ax_a else d for i, d in enumerate(lhs))
        rhs = tuple(k if i == ax_b else d for i, d in enumerate(rhs))
        rest_a = lhs[:ax_a] + lhs[ax_a + 1:]
        rest_b = rhs[:ax_b] + rhs[ax_b + 1:]
        return [lhs, rhs], [rest_a + rest_b]

    def infer_type(attrs, lhs, rhs):
        return _float_dtype(attrs, lhs, rhs, what='dot inputs')

    def gradient(F, attrs, inputs, outputs, ograds):
        a, b = inputs
        g = ograds[0]
        ta, tb = attrs.transpose_a, attrs.transpose_b
        if a.ndim == 2 and b.ndim == 2:
            return list(_matrix_grads(F.dot, a, b, g, ta, tb))
        # N-d and vectors: 2-D matrices as MXNet's kernel views them; a vector is a row (lhs)
        # or a column (rhs) whatever the flags
        ax_a, _ = _dot_axes(attrs, a.ndim, b.ndim)
        k = a.shape[ax_a]
        ta, tb = ta and a.ndim > 1, tb and b.ndim > 1
        a2 = F.Reshape(a, shape=(k, -1) if ta else (-1, k))
        b2 = F.Reshape(b, shape=(-1, k) if tb else (k, -1))
        g2 = F.Reshape(g, shape=(_prod(a.shape) // k, -1))   # (head gradients: no shapes)
        ga, gb = _matrix_grads(F.dot, a2, b2, g2, ta, tb)
        return [F.reshape_like(ga, a), F.reshape_like(gb, b)]


@register('batch_dot')
class batch_dot:
    """Batched matrix product: lhs (B..., m, k) x rhs (B..., k, n) -> (B..., m, n).

    ``transpose_a``/``transpose_b`` transpose the last two axes of each input. The batch axes
    must be equal (no broadcasting) and inputs at least 3-D, as in MXNet.
    """
    inputs = ('lhs', 'rhs')
    attrs = dict(transpose_a=Bool(False), transpose_b=Bool(False),
                 forward_stype=Str(None, choices=('csr', 'default', 'row_sparse')))

    def compute(xp, attrs, lhs, rhs):
        a = lhs.swapaxes(-1, -2) if attrs.transpose_a else lhs
        b = rhs.swapaxes(-1, -2) if attrs.transpose_b else rhs
        return xp.matmul(a, b)

    def infer_shape(attrs, lhs, rhs):
        for name, s in (('lhs', lhs), ('rhs', rhs)):
            if s is not None and len(s) < 3:
                raise ShapeError(f'batch_dot needs inputs with at least 3 axes, {name} is {s}')
        if lhs is None or rhs is None:
            return [lhs, rhs], [None]
        if len(lhs) != len(rhs):
            raise ShapeError(f'batch_dot: {tuple(lhs)} and {tuple(rhs)} differ in rank')
        batch = merge_shape(lhs[:-2], rhs[:-2], 'batch_dot: the leading batch dimensions '
                            'must be equal')
        m, ka = lhs[-2:][::-1] if attrs.transpose_a else lhs[-2:]
        kb, n = rhs[-2:][::-1] if attrs.transpose_b else rhs[-2:]
        if ka and kb and ka != kb:
            raise ShapeError(f'batch_dot shape error: {tuple(lhs)} X {tuple(rhs)} '
                             f'(transpose_a={attrs.transpose_a}, '
                             f'transpose_b={attrs.transpose_b})')
        k = ka or kb
        lhs = batch + ((k, m) if attrs.transpose_a else (m, k))
        rhs = batch + ((n, k) if attrs.transpose_b else (k, n))
        return [lhs, rhs], [batch + (m, n)]

    def infer_type(attrs, lhs, rhs):
        return _float_dtype(attrs, lhs, rhs, what='batch_dot inputs')

    def gradient(F, attrs, inputs, outputs, ograds):
        a, b = inputs
        return list(_matrix_grads(F.batch_dot, a, b, ograds[0], attrs.transpose_a,
                                  attrs.transpose_b))


def _fc_inputs(attrs):
    return ('data', 'weight') if attrs.no_bias else ('data', 'weight', 'bias')


def _fc_fill_data(attrs, data, k):
    """Data's input-feature dimension(s) from the weight's in_units ``k``."""
    data = list(data)
    if not attrs.flatten:
        data[-1] = merge_shape((k,), (data[-1],), 'data (last axis) and weight')[0]
    elif len(data) == 2:
        data[1] = merge_shape((k,), (data[1],), 'data (axis 1) and weight')[0]
    elif len(data) > 2:
        rest = data[1:]
        unknown = [i for i, d in enumerate(rest) if d == 0]
        if len(unknown) == 1:
            others = _prod([d for d in rest if d])
            if k % others == 0:
                data[1 + unknown[0]] = k // others
    return tuple(data)


def _fc_fill_batch(attrs, data, out):
    """Data's leading (batch) dimension(s) from the output's, as MXNet infers them backwards:
    a zero state of batch size 0 (``sym.zeros((0, H))``) gets the batch size of the output."""
    lead = 1 if attrs.flatten else len(data) - 1
    if len(out) != (2 if attrs.flatten else len(data)):
        return data
    merged = merge_shape(tuple(data[:lead]), tuple(out[:lead]), 'data and output (batch axes)')
    return merged + tuple(data[lead:])


@register('FullyConnected')
class FullyConnected:
    """``out = data . weight^T + bias``.

    data (N, d1, ...) is flattened to (N, d1*...) when ``flatten`` (output (N, num_hidden));
    otherwise the product applies to the last axis: (..., k) -> (..., num_hidden). weight is
    (num_hidden, in_units), bias (num_hidden,).
    """
    inputs = ('data', 'weight', 'bias')
    list_inputs = _fc_inputs
    attrs = dict(num_hidden=Count(), no_bias=Bool(False), flatten=Bool(True))
    backward_node = BackwardNode(('ograd0', 'in0', 'in1'))

    def specialise(xp, attrs, shapes, dtypes, is_train):
        # one matmul of data as rows (N, k) by weight^T; the bias broadcasts along the last axis
        data, (h, k) = tuple(shapes[0]), shapes[1]
        flatten = attrs['flatten']      # (subscripts: Params' attribute access is slower)
        rows = data[0] if flatten else math.prod(data[:-1])
        x_shape = None if data == (rows, k) else (rows, k)
        product = _product(xp, (rows, h) if flatten else data[:-1] + (h,), (rows, h))
        if attrs['no_bias']:
            def fully_connected(x, w, out=None):
                return product(x.reshape(x_shape) if x_shape else x, w.T, out=out)
            return fully_connected

        def fully_connected(x, w, b, out=None):
            y = product(x.reshape(x_shape) if x_shape else x, w.T, out=out)
            y += b
            return y
        return fully_connected

    def infer_shape(attrs, data, weight, bias=None, out_shapes=None):
        h = attrs.num_hidden
        k = 0
        if data is not None:
            if not attrs.flatten:
                k = data[-1]
            else:
                k = 1 if len(data) == 1 else _prod(data[1:])
        weight = merge_shape((h, k), weight, 'weight')
        if data is not None and weight[1]:
            data = _fc_fill_data(attrs, data, weight[1])
        if data is not None and out_shapes and out_shapes[0] is not None:
            data = _fc_fill_batch(attrs, data, out_shapes[0])
        ins = [data, weight]
        if not attrs.no_bias:
            ins.append(merge_shape((h,), bias, 'bias'))
        if data is None:
            out = (0, h) if attrs.flatten else None
        elif attrs.flatten:
            out = (data[0], h)
        else:
            out = tuple(data[:-1]) + (h,)
        return ins, [out]

    def infer_type(attrs, *dtypes):
        return _float_dtype(attrs, *dtypes, what='FullyConnected inputs')

    def gradient(F, attrs, inputs, outputs, ograds):
        x, w = inputs[0], inputs[1]
        g = ograds[0]
        if x.ndim == 2:
            dx = F.dot(g, w)
            dw = F.dot(g, x, transpose_a=True)
        elif attrs.flatten:
            # dot contracts g's batch axis with x's first axis: (h, d1, ...) before reshaping
            dx = F.reshape_like(F.dot(g, w), x)
            dw = F.reshape_like(F.dot(g, x, transpose_a=True), w)
        else:
            dx = F.dot(g, w)
            g2 = F.Reshape(g, shape=(-1, attrs.num_hidden))
            x2 = F.Reshape(x, shape=(-1, w.shape[1]))
            dw = F.dot(g2, x2, transpose_a=True)
        grads = [dx, dw]
        if not attrs.no_bias:
            # a reduction over every axis but the last: one that writes into a buffer, so a
            # compiled backward can compute it in the bias's .grad (_broadcast_backward may
            # return its input, which makes a plan keep g's buffer and allocate per call)
            lead = 1 if x.ndim == 2 or attrs.flatten else x.ndim - 1
            grads.append(F.sum(g, axis=tuple(range(lead))) if lead else
                         F._broadcast_backward(g, inputs[2]))     # a vector: g itself
        return grads


# -------------------------------------------------------------------------------------------------
# Activations
# -------------------------------------------------------------------------------------------------

# act_type: the unary operator that computes it (softrelu: a hidden one, as MXNet has none)
_ACTIVATIONS = {act: get(name) for act, name in (
    ('relu', 'relu'), ('sigmoid', 'sigmoid'), ('tanh', 'tanh'), ('softrelu', '_softrelu'),
    ('softsign', 'softsign'))}


_F32_ZERO = np.float32(0)


def _onednn_relu(dtype, ndim):
    """Whether MXNet's CPU runs Activation(relu) in oneDNN (float32, 1-d to 5-d data), whose
    max maps NaN to 0 (fmax); elsewhere, and in the ``relu`` operator, NaN stays NaN."""
    return dtype == np.float32 and 1 <= ndim <= 5


@register('Activation')
class Activation:
    """Elementwise activation: relu, sigmoid, tanh, softrelu (log(1 + e^x)) or softsign
    (x / (1 + |x|)). Any shape."""
    inputs = ('data',)
    attrs = dict(act_type=Str(choices=('relu', 'sigmoid', 'softrelu', 'softsign', 'tanh')))
    inplace = ((0, 0),)
    named_inputs = False

    def backward_node(attrs):   # relu's reads the output, the others' also the input
        return BackwardNode(('ograd0', 'out0') + (() if attrs.act_type == 'relu' else ('in0',)))

    def compute(xp, attrs, data, *, out=None):
        act = attrs['act_type']                   # (Params' attribute access is slower)
        if act == 'relu' and _onednn_relu(data.dtype, data.ndim):
            return xp.fmax(data, _F32_ZERO, out=out)
        op = _ACTIVATIONS[act]
        if out is None:
            return op.compute(xp, attrs, data)
        if op.writes_into:
            return op.compute(xp, attrs, data, out=out)
        out[...] = op.compute(xp, attrs, data)     # softrelu: no in-buffer form
        return out

    def specialise(xp, attrs, shapes, dtypes, is_train):
        act = attrs['act_type']
        if act == 'relu' and _onednn_relu(dtypes[0], len(shapes[0])):
            return lambda data, out=None: xp.fmax(data, _F32_ZERO, out=out)
        op = _ACTIVATIONS[act]
        if not op.writes_into:
            return functools.partial(Activation.compute, xp, attrs)
        return op.specialise(xp, attrs, shapes, dtypes, is_train)

    def gradient(F, attrs, inputs, outputs, ograds):
        return _ACTIVATIONS[attrs.act_type].gradient(F, attrs, inputs, outputs, ograds)


def _prelu_gamma_shape(gamma, data):
    """Where gamma's axes sit in data (MXNet's expand_shape): right to left, only on axes 0
    and 1, each equal to data's or 1; a (C,) gamma is the channel axis 1."""
    result = [1] * len(data)
    s = len(gamma) - 1
    for i in range(len(data) - 1, -1, -1):
        if s >= 0 and i <= 1 and (data[i] == gamma[s] or gamma[s] in (0, 1) or data[i] == 0):
            result[i] = gamma[s]
            s -= 1
    if s != -1:
        raise ShapeError(f'cannot broadcast gamma {tuple(gamma)} to data {tuple(data)}: '
                         'gamma runs along axis 1 (channel) or axes 0 and 1')
    return tuple(result)


def _leaky_inputs(attrs):
    return ('data', 'gamma') if attrs.act_type == 'prelu' else ('data',)


def _leaky_outputs(attrs):
    return 2 if attrs.act_type == 'rrelu' else 1


def _leaky_names(attrs):
    return ['output', 'mask'] if attrs.act_type == 'rrelu' else ['output']


def _leaky_gradient(F, attrs, inputs, outputs, ograds, is_train=False):
    g = ograds[0]
    if g is None:
        return [None] * len(inputs)
    x, y = inputs[0], outputs[0]
    act = attrs.act_type
    if act == 'gelu':
        cdf = (F.erf(x * _SQRT_HALF) + 1) * 0.5
        return [g * (cdf + x * F.exp(x * x * -0.5) * _INV_SQRT_2PI)]
    pos = x > 0
    neg = 1 - pos
    if act == 'leaky':
        return [g * (pos + neg * attrs.slope)]
    if act == 'elu':
        # slope * e^x = y + slope where x <= 0; y does not overflow as e^x would
        return [g * (pos + neg * (y + attrs.slope))]
    if act == 'selu':
        return [g * (pos * _SELU_LAMBDA + neg * (y + _SELU_LAMBDA * _SELU_ALPHA))]
    if act == 'rrelu':
        return [g * (pos + neg * outputs[1])]
    # prelu: gamma broadcast along its axes of data
    gamma = inputs[1]
    shape = _prelu_gamma_shape(gamma.shape, x.shape)
    expanded = gamma.ndim != x.ndim and shape[-gamma.ndim:] != tuple(gamma.shape)
    gb = F.Reshape(gamma, shape=shape) if expanded else gamma
    dx = g * (pos + neg * gb)
    dgamma = F._broadcast_backward(g * x * neg, gb)
    return [dx, F.reshape_like(dgamma, gamma) if expanded else dgamma]


@register('LeakyReLU')
class LeakyReLU:
    """Leaky rectifiers, by ``act_type``:

    * leaky: ``x`` if x > 0 else ``slope * x``;
    * prelu: the same with a learned ``gamma`` (shape (C,) along axis 1, or (1,), or axes 0-1);
    * elu: ``slope * (e^x - 1)`` for x <= 0; selu: ``lambda * (x or alpha (e^x - 1))``
      (MXNet's constants); gelu: ``x * Phi(x)`` with the erf form of the normal cdf;
    * rrelu: random slopes uniform in [lower_bound, upper_bound] in training, their mean
      otherwise; it has a second output, the slopes (``mask``), as in MXNet.

    data: any shape; outputs have its shape.
    """
    var_inits = {'gamma': '["Constant", {"value": 0.25}]'}
    inputs = ('data', 'gamma')
    list_inputs = _leaky_inputs
    attrs = dict(act_type=Str('leaky', choices=('elu', 'gelu', 'leaky', 'prelu', 'rrelu',
                                                'selu')),
                 slope=Float(0.25), lower_bound=Float(0.125), upper_bound=Float(0.334))
    num_outputs = _leaky_outputs
    output_names = _leaky_names
    train_aware = True
    random = True
    gradient = _leaky_gradient

    def backward_node(attrs):   # (rrelu's: MXNet's monitor crashes on reading its inputs)
        reads = {'prelu': ('in0', 'in1', 'out0'), 'rrelu': ('out0', 'out1')}
        return BackwardNode(('ograd0',) + reads.get(attrs.act_type, ('in0', 'out0')))

    def compute(xp, attrs, data, gamma=None, is_train=False):
        act = attrs.act_type
        pos = data > 0
        with np.errstate(over='ignore', invalid='ignore'):
            if act == 'leaky':
                out = xp.where(pos, data, data * attrs.slope)
            elif act == 'prelu':
                gb = gamma.reshape(_prelu_gamma_shape(gamma.shape, data.shape))
                out = xp.where(pos, data, gb * data)
            elif act == 'elu':
                out = xp.where(pos, data, xp.expm1(xp.minimum(data, 0)) * attrs.slope)
            elif act == 'selu':
                neg = xp.expm1(xp.minimum(data, 0)) * _SELU_ALPHA
                out = xp.where(pos, data, neg) * _SELU_LAMBDA
            elif act == 'gelu':
                out = data * (special.erf(xp, data * _SQRT_HALF) + 1) * 0.5
            else:
                return _rrelu(xp, attrs, data, pos, is_train)
        return out.astype(data.dtype, copy=False)

    def infer_shape(attrs, data, gamma=None):
        outs = [data] * _leaky_outputs(attrs)
        if attrs.act_type != 'prelu':
            return [data], outs
        if data is not None:
            if gamma is None:
                gamma = (data[1] if len(data) > 1 else data[0],)
            else:
                _prelu_gamma_shape(gamma, data)
        return [data, gamma], outs

    def infer_type(attrs, *dtypes):
        ins, outs = same_dtype(attrs, *dtypes)
        return ins, outs * _leaky_outputs(attrs)


def _rrelu(xp, attrs, data, pos, is_train):
    lower, upper = attrs.lower_bound, attrs.upper_bound
    if is_train:
        draw = np.float64 if data.dtype == np.float64 else np.float32
        mask = rng.generator(xp).random(data.shape, dtype=draw)
        mask = (mask * (upper - lower) + lower).astype(data.dtype, copy=False)
    else:
        mask = xp.full(data.shape, (lower + upper) / 2, dtype=data.dtype)
    return xp.where(pos, data, mask * data).astype(data.dtype, copy=False), mask



# -------------------------------------------------------------------------------------------------
# Dropout
# -------------------------------------------------------------------------------------------------

def _dropout_mask_shape(attrs, shape):
    """data's shape with the ``axes`` (dropped together) of size 1."""
    axes = {normalize_axis(a, len(shape), 'axes') for a in attrs.axes}
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _check_dropout(attrs):
    if not 0 <= attrs.p <= 1:
        raise ValueError(f'p must be in [0, 1], got {attrs.p}')


@register('Dropout')
class Dropout:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p), in training
    (or always, ``mode='always'``); the identity otherwise.

    ``axes`` share one draw along those axes (a mask of data's shape with them of size 1).
    Outputs: the result and a hidden ``mask`` (0 or 1/(1-p); ones when inactive) that the
    gradient ``g * mask`` uses, so the backward is deterministic. p=1 gives zeros (MXNet: NaN).
    """
    inputs = ('data',)
    attrs = dict(p=Float(0.5), mode=Str('training', choices=('always', 'training')),
                 axes=Shape(()), cudnn_off=BoolOrNone(False))
    check = _check_dropout
    num_outputs = 2
    num_visible_outputs = 1
    train_aware = True
    random = True
    output_names = ('output', 'mask')
    backward_node = BackwardNode(('ograd0', 'out1'))

    def specialise(xp, attrs, shapes, dtypes, is_train):
        dtype = np.dtype(dtypes[0])
        mshape = _dropout_mask_shape(attrs, tuple(shapes[0]))
        if not (is_train or attrs['mode'] == 'always') or attrs['p'] == 0:
            ones = xp.broadcast_to(xp.ones((), dtype=dtype), mshape)     # read-only

            def identity(data, out=None):
                if out is None:
                    return data.copy(), ones
                out[...] = data
                return out, ones
            return identity
        keep = 1.0 - attrs['p']
        draw = np.float64 if dtype == np.float64 else np.float32
        scale = dtype.type(1.0 / keep if keep > 0 else 0.0)

        def dropout(data, out=None):
            mask = (rng.generator(xp).random(mshape, dtype=draw) < keep).astype(dtype)
            mask *= scale
            return xp.multiply(data, mask, out=out), mask
        return dropout

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None, None]
        return [data], [data, _dropout_mask_shape(attrs, data)]

    def infer_type(attrs, data):
        return [data], [data, data]

    def gradient(F, attrs, inputs, outputs, ograds, is_train=False):
        g = ograds[0]
        if g is None:
            return [None]
        if not (is_train or attrs.mode == 'always'):
            return [g]
        return [g * outputs[1]]
