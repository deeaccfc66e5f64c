"""The softmax family: ``softmax``, ``log_softmax``, ``softmin``, ``SoftmaxActivation``, and the
loss layer ``SoftmaxOutput``.

``softmax_forward`` is their one forward (``loss_ops.py``'s CTC loss uses it too). It follows
MXNet's CPU kernels, NaN and infinities included: the plain loop of softmax.h, or oneDNN's
where MXNet hands the operator to oneDNN (float32 over the last axis, ``_runs_in_onednn``).

``SoftmaxOutput`` reproduces MXNet's convention that a loss layer's gradient is the loss
gradient itself: the head gradient is ignored, so it is tested against MXNet's gradients
rather than against finite differences.
"""
import math

import numpy as np

from ..base import DTypeError, ShapeError
from .attrs import Bool, BoolOrNone, DType, Float, Int, Str
from .elemwise import not_differentiable_twice
from .nn import _prod
from .reduce import row_extremum
from .registry import BackwardNode, merge_shape, normalize_axis, output, register

__all__ = []

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
                use_length=BoolOrNone(False))


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


def _float32_rows(attrs, dtype, ndim):
    """Whether a softmax of ``ndim``-d data of ``dtype`` runs along the last axis, float32 in
    and out."""
    return (dtype == np.float32 and (attrs.dtype is None or attrs.dtype == np.float32)
            and normalize_axis(attrs.axis, ndim) == ndim - 1)


def _runs_in_onednn(attrs, dtype, ndim):
    """Whether MXNet's CPU hands this softmax or log_softmax to oneDNN (SupportMKLDNNSoftmax):
    float32 rows (``_float32_rows``) of 1-d to 4-d data, no temperature (not even 1), no
    length."""
    return (_float32_rows(attrs, dtype, ndim) and attrs.temperature is None
            and not attrs.use_length and 1 <= ndim <= 4)


def _softmax_specialise(log):
    """``specialise`` of softmax (``log`` False) and log_softmax: float32 rows along the last
    axis by ``_finite_softmax`` straight away where their maxima are finite (there oneDNN and
    MXNet's plain loop agree: no NaN or infinity to treat apart; entries past a ``length`` are
    -inf, which gives 0), everything else by ``softmax_forward``."""
    def specialise(xp, attrs, shapes, dtypes, is_train):
        shape, dtype = tuple(shapes[0]), np.dtype(dtypes[0])
        axis = normalize_axis(attrs.axis, len(shape))
        onednn = _runs_in_onednn(attrs, dtype, len(shape))
        short = _float32_rows(attrs, dtype, len(shape)) and attrs.temperature in (None, 1) \
            and math.prod(shape) > 0
        rows = (math.prod(shape[:-1]), shape[-1]) if short else None
        steps = xp.arange(shape[-1]) if short and attrs.use_length else None

        def softmax(data, length=None, out=None):
            if rows is not None:
                x = data if length is None else \
                    xp.where(steps < length[..., None], data, -np.inf)
                result = _finite_softmax(xp, x.reshape(rows), log,
                                         None if out is None else out.reshape(rows))
                if result is not None:      # (computed in out when given)
                    return out if out is not None else result.reshape(shape)
            return output(softmax_forward(xp, data, axis, attrs.temperature, log=log,
                                          length=length, out_dtype=attrs.dtype, onednn=onednn),
                          out)
        return softmax
    return specialise


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
    finite = _finite_softmax(xp, rows, log)
    if finite is not None:
        return finite.reshape(x.shape)
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


def _finite_softmax(xp, rows, log, out=None):
    """(log-)softmax of each row of float32 ``rows`` (R, n) when every row's maximum is finite
    (no NaN, no +inf, not all -inf): what ``_onednn_softmax``'s general path gives there, in
    fewer passes (-inf entries give 0, and -inf after the log, in both). Written into ``out``
    (R, n) when given; None when a maximum is not finite."""
    top = row_extremum(xp, xp.maximum, rows)
    if not bool(xp.isfinite(top).all()):
        return None
    z = xp.subtract(rows, top, out=out)
    if log:
        z -= xp.log(xp.exp(z).sum(axis=1, keepdims=True))
    else:
        xp.exp(z, out=z)
        z /= z.sum(axis=1, keepdims=True)
    return z


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
    specialise = _softmax_specialise(log=False)


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
    specialise = _softmax_specialise(log=True)


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

