"""Neural-network layers other than convolution, pooling and normalisation.

``FullyConnected``, ``dot`` and ``batch_dot`` (BLAS through ``xp.matmul``/``tensordot``); the
activations ``Activation`` and ``LeakyReLU``; the softmax family (``softmax``, ``log_softmax``,
``softmin``, ``SoftmaxActivation``) and the loss layer ``SoftmaxOutput``; ``Dropout``. The
other loss layers (``softmax_cross_entropy``, ``MakeLoss``, ``*RegressionOutput``) are in
loss_ops.py.

``SoftmaxOutput`` reproduces MXNet's convention that a loss layer's gradient is the loss
gradient itself: the head gradient is ignored, so it is tested against MXNet's gradients
rather than against finite differences.
"""
import functools
import math

import numpy as np

from ..base import DTypeError, ShapeError
from . import rng, special
from .attrs import Bool, Count, DType, Float, Int, Shape, Str
from .elemwise import not_differentiable_twice
from .registry import BackwardNode, get, merge_shape, normalize_axis, register, same_dtype

__all__ = []

_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# MXNet's SELU constants (mshadow_op.h)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


class _BoolOrNone(Bool):
    """MXNet's ``boolean or None`` attributes (``use_length``, Dropout's ``cudnn_off``)."""

    @property
    def optional(self):
        return True


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


def _product(xp, shape, product_shape):
    """``product(a, b, out=None)``: ``xp.dot(a, b)`` of (at most 2-d) ``a`` and ``b``, of shape
    ``product_shape``, as the output of ``shape`` (dot's or FullyConnected's: the same values
    on other axes), fresh or written into ``out``. (``dot``: ``matmul`` costs a microsecond
    more a call on small matrices.)"""
    matmul = xp.dot
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
            grads.append(F._broadcast_backward(g, inputs[2]))
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
# The softmax family
# -------------------------------------------------------------------------------------------------

_SOFTMAX_DTYPES = ('float16', 'float32', 'float64')


def _check_softmax(attrs):
    if attrs.dtype is not None and attrs.dtype.name not in _SOFTMAX_DTYPES:
        raise ValueError(f'dtype must be one of {", ".join(_SOFTMAX_DTYPES)} or None, '
                         f'got {attrs.dtype.name}')


def _check_no_length(attrs):
    _check_softmax(attrs)
    if attrs.use_length:
        raise ValueError('use_length=True needs a length input, which only softmax takes')


def _softmax_attrs():
    return dict(axis=Int(-1), temperature=Float(None), dtype=DType(None),
                use_length=_BoolOrNone(False))


def softmax_forward(xp, data, axis, temperature=None, negate=False, log=False, length=None,
                    out_dtype=None, onednn=False):
    """(log-)softmax of ``data`` along ``axis`` of ``data / temperature`` (negated for softmin).

    ``length`` (data's shape without ``axis``, integers) keeps the first length[i] entries of
    each row; the others are 0. Computes in float32 at least, returns ``out_dtype``.

    NaN and infinities go as in MXNet's CPU loop (softmax.h): the maximum comes off before the
    division by the temperature, and a row holding NaN or +inf is NaN throughout (its sum of
    exponentials is NaN), past ``length`` excepted. ``onednn`` (float32 over the last axis, no
    temperature: see ``_runs_in_onednn``) follows oneDNN's kernel instead: ``_onednn_max``
    says what comes off each entry, exp(NaN) counts as +inf, so a row holding NaN has an
    infinite sum and its softmax is NaN where the exponential is infinite or NaN, 0 elsewhere.
    """
    out_dtype = np.dtype(out_dtype or data.dtype)
    if data.size == 0:
        return xp.zeros(data.shape, dtype=out_dtype)
    work = np.result_type(data.dtype, out_dtype, np.float32)
    x = data.astype(work, copy=False)
    if negate:
        x = -x
    mask = None
    if length is not None:
        n = data.shape[axis]
        steps = xp.arange(n).reshape((n,) + (1,) * (data.ndim - axis - 1))
        mask = steps < xp.expand_dims(length, axis)
        x = xp.where(mask, x, -np.inf)
    with np.errstate(invalid='ignore', divide='ignore', over='ignore'):
        if onednn:
            return _onednn_softmax(xp, x, log).astype(out_dtype, copy=False)
        z = x - x.max(axis=axis, keepdims=True)
        if temperature is not None and temperature != 1:
            z = z / temperature
        if log:
            z -= xp.log(xp.exp(z).sum(axis=axis, keepdims=True))
        else:
            xp.exp(z, out=z)
            z /= z.sum(axis=axis, keepdims=True)
        if mask is not None:
            z = xp.where(mask, z, 0)
    with np.errstate(over='ignore'):    # log-probabilities below float16's range are -inf
        return z.astype(out_dtype, copy=False)


def _runs_in_onednn(attrs, data):
    """Whether MXNet's CPU hands this softmax or log_softmax to oneDNN (SupportMKLDNNSoftmax):
    float32 in and out, no temperature (not even 1), the last axis of 1-d to 4-d data, no
    length."""
    return (data.dtype == np.float32 and attrs.temperature is None and not attrs.use_length
            and (attrs.dtype is None or attrs.dtype == np.float32) and 1 <= data.ndim <= 4
            and normalize_axis(attrs.axis, data.ndim) == data.ndim - 1)


_ONEDNN_LANES = 16                        # float32 lanes of the AVX-512 registers
_FLOAT32_LOWEST = np.finfo(np.float32).min


def _onednn_max(xp, x):
    """What oneDNN's AVX-512 softmax subtracts from each entry of the rows of ``x`` (R, n).

    Entry j goes to lane j % 16, whose running maximum starts at -FLT_MAX and is updated with
    vmaxps, which returns its second operand when either is NaN: a NaN entry replaces the
    lane's maximum and the lane's next entry replaces the NaN. The lanes then fold pairwise
    (lane i with i ^ 8, ^ 4, ^ 2, ^ 1), vmaxps again, so with NaN about the lanes end
    different (a NaN moves to the partner lane), and entry j takes lane j % 16's.
    """
    rows, n = x.shape
    blocks = -(-n // _ONEDNN_LANES)
    grid = xp.full((rows, blocks * _ONEDNN_LANES), np.nan, dtype=x.dtype)
    grid[:, :n] = x
    grid = grid.reshape(rows, blocks, _ONEDNN_LANES)
    present = (xp.arange(blocks * _ONEDNN_LANES) < n).reshape(blocks, _ONEDNN_LANES)
    count = present.sum(axis=0)
    block = xp.arange(blocks)[:, None]
    last_nan = xp.where(xp.isnan(grid) & present, block, -1).max(axis=1)
    # after a lane's last NaN, a plain maximum (with no -FLT_MAX when there was no NaN)
    after = (block > last_nan[:, None, :]) & present
    lane = xp.where(after, grid, -np.inf).max(axis=1)
    lane = xp.where(last_nan < 0, xp.maximum(lane, _FLOAT32_LOWEST), lane)
    lane = xp.where((last_nan == count - 1) & (count > 0), np.nan, lane)
    index = xp.arange(_ONEDNN_LANES)
    for step in (8, 4, 2, 1):
        other = lane[:, index ^ step]
        lane = xp.where(lane > other, lane, other)
    return lane[:, xp.arange(n) % _ONEDNN_LANES]


def _onednn_softmax(xp, x, log):
    """(log-)softmax over the last axis as oneDNN computes it, NaN and infinities included."""
    rows = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
    if bool(xp.isfinite(rows).all()):     # what the general path below gives, in fewer passes
        z = rows - rows.max(axis=1, keepdims=True)
        e = xp.exp(z)
        total = e.sum(axis=1, keepdims=True)
        return (z - xp.log(total) if log else e / total).reshape(x.shape)
    if bool(xp.isnan(rows).any()):
        top = _onednn_max(xp, rows)
    else:                                 # every lane holds the plain maximum
        top = xp.maximum(rows.max(axis=1, keepdims=True), _FLOAT32_LOWEST)
    z = rows - top
    # oneDNN's exp clamps its argument with vminps, which makes NaN its upper bound: +inf
    e = xp.where(xp.isnan(z), np.inf, xp.exp(z))
    total = e.sum(axis=1, keepdims=True)
    if log:
        # oneDNN's log of an infinite sum is finite (128 ln 2), which keeps +inf entries +inf;
        # the others are exact: -inf beside an infinite sum
        out = xp.where(z == np.inf, z, z - xp.log(total))
    else:
        out = e / total
    return out.reshape(x.shape)


def _softmax_grad(F, y, g, axis, temperature, kind):
    """Input gradient of softmax (kind 'softmax'), log_softmax ('log') or softmin ('min')."""
    if kind == 'log':
        grad = g - F.exp(y) * F.sum(g, axis=axis, keepdims=True)
    else:
        grad = y * (g - F.sum(g * y, axis=axis, keepdims=True))
        if kind == 'min':
            grad = -grad
    if temperature is not None and temperature != 1:
        grad = grad / temperature
    return grad


def _softmax_family_grad(kind):
    def gradient(F, attrs, inputs, outputs, ograds):
        x = inputs[0]
        grad = _softmax_grad(F, outputs[0], ograds[0], attrs.axis, attrs.temperature, kind)
        if attrs.dtype is not None and attrs.dtype != np.dtype(x.dtype):
            grad = F.Cast(grad, dtype=np.dtype(x.dtype).name)
        return [grad] + [None] * (len(inputs) - 1)
    return gradient


def _softmax_type(attrs, data, length=None):
    if length is not None and length not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise DTypeError(f'length must be int32 or int64, got {length.name}')
    out = attrs.dtype if attrs.dtype is not None else data
    return [data] + ([length] if attrs.use_length else []), [out]


def _softmax_shape(attrs, data, length=None):
    if not attrs.use_length:
        return [data], [data]
    if data is not None:
        axis = normalize_axis(attrs.axis, len(data))
        length = merge_shape(data[:axis] + data[axis + 1:], length,
                             'length (data without axis)')
    return [data, length], [data]


def _softmax_inputs(attrs):
    return ('data', 'length') if attrs.use_length else ('data',)


@register('softmax')
class softmax:
    """``exp(x / T) / sum(exp(x / T))`` along ``axis`` (T = temperature, default 1).

    With ``use_length``, the ``length`` input (data's shape without ``axis``, int32/int64)
    keeps the first length[i] entries of each row and makes the rest 0. ``dtype`` is the
    output type (default: data's).
    """
    inputs = ('data', 'length')
    list_inputs = _softmax_inputs
    attrs = _softmax_attrs()
    check = _check_softmax
    backward_node = BackwardNode(('ograd0', 'out0'), ('ograd', 'output'), grads=(0,))
    infer_shape = _softmax_shape
    infer_type = _softmax_type
    gradient = _softmax_family_grad('softmax')

    def compute(xp, attrs, data, length=None):
        axis = normalize_axis(attrs.axis, data.ndim)
        return softmax_forward(xp, data, axis, attrs.temperature, length=length,
                               out_dtype=attrs.dtype, onednn=_runs_in_onednn(attrs, data))


@register('log_softmax')
class log_softmax:
    """``log(softmax(x))`` along ``axis``, computed stably; attributes as softmax (no length
    input: ``use_length=True`` is an error, as in MXNet)."""
    inputs = ('data',)
    attrs = _softmax_attrs()
    check = _check_no_length
    infer_type = _softmax_type
    gradient = _softmax_family_grad('log')
    backward_node = BackwardNode(('ograd0', 'out0'), ('ograd', 'output'))

    def compute(xp, attrs, data):
        axis = normalize_axis(attrs.axis, data.ndim)
        return softmax_forward(xp, data, axis, attrs.temperature, log=True,
                               out_dtype=attrs.dtype, onednn=_runs_in_onednn(attrs, data))


@register('softmin')
class softmin:
    """``softmax(-x)`` along ``axis``; attributes as softmax (no length input)."""
    inputs = ('data',)
    attrs = _softmax_attrs()
    check = _check_no_length
    infer_type = _softmax_type
    gradient = _softmax_family_grad('min')
    named_inputs = False
    backward_node = BackwardNode(('ograd0', 'out0'), ('ograd', 'output'))

    def compute(xp, attrs, data):
        axis = normalize_axis(attrs.axis, data.ndim)
        return softmax_forward(xp, data, axis, attrs.temperature, negate=True,
                               out_dtype=attrs.dtype)


def _activation_axis(attrs):
    return -1 if attrs.mode == 'instance' else 1


@register('SoftmaxActivation')
class SoftmaxActivation:
    """Softmax over the last axis (``mode='instance'``) or over axis 1 of data with at least
    3 axes (``mode='channel'``, e.g. (N, C, H, W) over C). Deprecated in MXNet for softmax."""
    inputs = ('data',)
    attrs = dict(mode=Str('instance', choices=('channel', 'instance')))
    named_inputs = False
    backward_node = BackwardNode(('ograd0', 'out0'))

    def compute(xp, attrs, data):
        return softmax_forward(xp, data, _activation_axis(attrs) % data.ndim)

    def infer_shape(attrs, data):
        if attrs.mode == 'channel' and data is not None and len(data) < 3:
            raise ShapeError(f'mode=channel needs data with at least 3 axes, got {data}')
        return [data], [data]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [_softmax_grad(F, outputs[0], ograds[0], _activation_axis(attrs), None,
                              'softmax')]


# -------------------------------------------------------------------------------------------------
# Loss layers: their gradient is the loss gradient, whatever the head gradient
# -------------------------------------------------------------------------------------------------

def _softmax_output_attrs():
    return dict(grad_scale=Float(1.0), ignore_label=Float(-1.0), multi_output=Bool(False),
                use_ignore=Bool(False), preserve_shape=Bool(False),
                normalization=Str('null', choices=('batch', 'null', 'valid')),
                out_grad=Bool(False), smooth_alpha=Float(0.0))


def _softmax_output_label(attrs, data, label):
    """The label shape SoftmaxOutput expects for ``data`` (MXNet's rules), given what is known
    of it: data's own shape means probabilities; otherwise class indices."""
    if label is not None and len(label) == len(data):
        if attrs.multi_output and len(data) > 1 and label[1] == 1 and data[1] != 1:
            lshape = (data[0], 1) + tuple(data[2:])        # (N, 1, spatial...)
        else:
            lshape = data                                  # probabilities
        return merge_shape(lshape, label, 'label')
    if not attrs.multi_output:
        if len(data) == 1:
            return label
        return merge_shape(data[:-1], label, 'label')
    if len(data) < 2:
        raise ShapeError(f'multi_output needs data with at least 2 axes, got {data}')
    flat = (data[0], _prod(data[2:]))
    spatial = (data[0],) + tuple(data[2:])
    if label is None:
        return flat
    if len(label) == 2 and len(spatial) != 2:
        return merge_shape(flat, label, 'label')
    if len(label) == len(spatial):
        return merge_shape(spatial, label, 'label')
    raise ShapeError(f'label: expecting {flat} or {spatial}, got {tuple(label)}')


def _softmax_output_forward(xp, attrs, data):
    if attrs.multi_output:
        if data.ndim < 2:
            raise ShapeError('multi_output needs data with at least 2 axes')
        return softmax_forward(xp, data, 1)
    if attrs.preserve_shape:
        return softmax_forward(xp, data, data.ndim - 1)
    rows = data.reshape(data.shape[0], -1) if data.ndim != 2 else data
    return softmax_forward(xp, rows, 1).reshape(data.shape)


def _class_index(xp, label):
    """Labels as class indices, truncated toward zero as MXNet's cast to int does."""
    return xp.trunc(label).astype(np.int64)


@register('SoftmaxOutput', aliases=('Softmax',))
class SoftmaxOutput:
    """Softmax in the forward pass; the gradient of cross-entropy loss in the backward pass.

    data (N, C) with label (N,) of class indices; N-d data is flattened to (N, -1) unless
    ``preserve_shape`` (softmax over the last axis, label data.shape[:-1]) or ``multi_output``
    (softmax over axis 1, label (N, d2*...) or (N, d2, ...)). A label of data's shape holds
    probabilities. The gradient is ``(out - onehot(label)) * grad_scale / normalizer``, the
    head gradient ignored (see ``_backward_SoftmaxOutput``).
    """
    inputs = ('data', 'label')
    attrs = _softmax_output_attrs()
    backward_node = BackwardNode(('out0', 'in1'))     # not the head gradient

    def compute(xp, attrs, data, label):
        return _softmax_output_forward(xp, attrs, data)

    def infer_shape(attrs, data, label):
        if data is None:
            return [data, label], [None]
        return [data, _softmax_output_label(attrs, data, label)], [data]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_SoftmaxOutput(outputs[0], inputs[1], **attrs), None]


@register('_backward_SoftmaxOutput')
class _backward_SoftmaxOutput:
    """SoftmaxOutput's gradient from its output ``out`` and ``label`` (MXNet 1.9.1's rules).

    ``out - target`` where target is the one-hot label (smoothed by ``smooth_alpha``: 1-alpha
    for the class, alpha/(C-1) elsewhere; multi_output ignores smoothing, as MXNet does), or
    the label itself when it has out's shape. Rows whose int(label) == int(ignore_label) are 0
    when ``use_ignore``. Scaled by grad_scale / normalizer: 'null' 1 (multi_output: the
    spatial size), 'batch' the label count (multi_output: N * spatial), 'valid' the count of
    labels != ignore_label (at least 1). ``out_grad`` multiplies by ``out``: MXNet 1.9.1
    passes the output where the head gradient should be. Out-of-range labels get no -1.
    """
    inputs = ('output', 'label')
    attrs = _softmax_output_attrs()
    # the second derivative of a loss layer's conventional gradient is not defined (MXNet
    # has none either)
    gradient = not_differentiable_twice('_backward_SoftmaxOutput')

    def compute(xp, attrs, output, label):
        scale = attrs.grad_scale
        if label.shape == output.shape:
            grad = (output - label) * scale
            grad = grad * output if attrs.out_grad else grad
            return grad.astype(output.dtype, copy=False)
        ignore = int(attrs.ignore_label)
        if attrs.multi_output:
            n, c = output.shape[:2]
            o = output.reshape(n, c, -1)
            idx = _class_index(xp, label).reshape(n, 1, -1)
            grad = o - (xp.arange(c).reshape(1, c, 1) == idx)
            spatial = o.shape[2]
        else:
            o = output.reshape(-1, output.shape[-1]) if attrs.preserve_shape else \
                output.reshape(output.shape[0], -1)
            c = o.shape[1]
            # MXNet reads the first rows-many labels of the flattened label
            idx = _class_index(xp, label).reshape(-1)[:o.shape[0]].reshape(-1, 1)
            onehot = xp.arange(c).reshape(1, c) == idx
            alpha = attrs.smooth_alpha
            if alpha and c > 1:
                grad = o - xp.where(onehot, 1 - alpha, alpha / (c - 1))
            else:
                grad = o - onehot
            spatial = 1
        if attrs.use_ignore:
            grad *= idx != ignore
        if attrs.normalization == 'valid':
            valid = label.size - xp.count_nonzero(_class_index(xp, label) == ignore)
            grad *= scale / xp.maximum(valid, 1)
        elif attrs.normalization == 'batch':
            grad *= scale / (n * spatial if attrs.multi_output else label.size)
        else:
            grad *= scale / spatial
        if attrs.out_grad:
            grad *= o
        return grad.reshape(output.shape).astype(output.dtype, copy=False)

    def infer_shape(attrs, output, label):
        return [output, label], [output]


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
                 axes=Shape(()), cudnn_off=_BoolOrNone(False))
    check = _check_dropout
    num_outputs = 2
    num_visible_outputs = 1
    train_aware = True
    random = True
    output_names = ('output', 'mask')
    backward_node = BackwardNode(('ograd0', 'out1'))

    def compute(xp, attrs, data, is_train=False):
        mshape = _dropout_mask_shape(attrs, data.shape)
        if not (is_train or attrs.mode == 'always') or attrs.p == 0:
            return data.copy(), xp.broadcast_to(xp.ones((), dtype=data.dtype), mshape)
        keep = 1.0 - attrs.p
        draw = np.float64 if data.dtype == np.float64 else np.float32
        r = rng.generator(xp).random(mshape, dtype=draw)
        mask = (r < keep).astype(data.dtype)
        mask *= data.dtype.type(1.0 / keep if keep > 0 else 0.0)
        return data * mask, mask

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
