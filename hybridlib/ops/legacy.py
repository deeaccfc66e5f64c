"""Legacy operators of MXNet 1.x: ``Convolution_v1``, ``Pooling_v1`` and ``BatchNorm_v1`` (the
older attribute sets of Convolution, Pooling and BatchNorm, computed by those operators), and
the loss-like ``SVMOutput`` and ``IdentityAttachKLSparseReg`` (with the internal backward
operators of the last two).

What MXNet 1.9.1 does, and this file reproduces (checked against it):

* ``Convolution_v1`` has Convolution's attributes and computes the same: it is Convolution under
  its old name (MXNet's own runs 2-d kernels only; 1-d and 3-d ones work here too).
* ``Pooling_v1`` pads with zeros *before* pooling, so a max over a window reaching into the
  padding sees zeros, and 'avg' divides by the whole kernel size, also where a 'full' window
  runs past the padded input: it is Pad, then Pooling ('sum' divided by the kernel size for
  'avg'). 4-d or 5-d data (MXNet runs 2-d kernels only).
* ``BatchNorm_v1`` is BatchNorm on axis 1, except its third output ``var``: the variance itself
  (the batch's in training mode, the moving one otherwise), where BatchNorm gives the inverse
  standard deviation.
* ``SVMOutput`` passes ``data`` (..., K) through; its gradient, like a loss layer's, ignores the
  head gradient and is the hinge loss's for the class ``int(label)`` along the last axis:
  ``-c [margin > x_label]`` and ``c [margin > -x_other]`` with ``use_linear`` (L1-SVM),
  ``-2c max(margin - x_label, 0)`` and ``2c max(margin + x_other, 0)`` without (L2-SVM),
  ``c = regularization_coefficient``. A label outside [0, K) marks no class.
* ``IdentityAttachKLSparseReg`` passes ``data`` through; its backward first moves the
  auxiliary ``moving_avg`` (C,) towards the mean activation of each channel (axis 1),
  ``moving_avg = momentum * moving_avg + (1 - momentum) * mean``, then adds the gradient of the
  KL sparsity penalty to the head gradient:
  ``penalty * (-target / moving_avg + (1 - target) / (1 - moving_avg))``. (MXNet flattens N-d
  data to (rows, last axis) in the backward while sizing ``moving_avg`` by axis 1; here axis 1
  is the channel axis throughout, which agrees for 2-d data.)

MXNet's Python functions of these legacy operators leave the auxiliary states out of the
signature (``nd.BatchNorm_v1(data, gamma, beta, ...)``), so they cannot run imperatively; here
they are inputs after the arguments, as in BatchNorm.
"""
import functools
import math

from ..base import ShapeError
from .attrs import Bool, Float, Shape, Str
from .conv import _float_types
from .elemwise import not_differentiable_twice
from .registry import OpDef, get, merge_shape, register, register_op, same_dtype

__all__ = []

_CONV = get('Convolution')
_POOL = get('Pooling')
_PAD = get('Pad')
_BN = get('BatchNorm')


# -------------------------------------------------------------------------------------------------
# Convolution_v1
# -------------------------------------------------------------------------------------------------

register_op(OpDef(
    'Convolution_v1', inputs=_CONV.inputs, list_inputs=_CONV.list_inputs, attrs=_CONV.attrs,
    check=_CONV.check, compute=_CONV.compute, infer_shape=_CONV.infer_shape,
    infer_type=_CONV.infer_type, gradient=_CONV.gradient, doc="""\
The legacy Convolution: the same attributes and the same result as ``Convolution``.

``data`` (N, C, *spatial), ``weight`` (num_filter, C / num_group, *kernel), ``bias``
(num_filter,) unless ``no_bias`` -> (N, num_filter, *out)."""))


# -------------------------------------------------------------------------------------------------
# Pooling_v1
# -------------------------------------------------------------------------------------------------

_POOL_V1_ATTRS = dict(kernel=Shape(()), pool_type=Str('max', choices=('avg', 'max', 'sum')),
                      global_pool=Bool(False),
                      pooling_convention=Str('valid', choices=('full', 'valid')),
                      stride=Shape(()), pad=Shape(()))


def _check_pool_v1(attrs):
    if not attrs.global_pool and len(attrs.kernel) not in (2, 3):
        raise ValueError(f'Pooling_v1 takes a 2-d or 3-d kernel, got {attrs.kernel}')
    if attrs.pad and len(attrs.pad) != len(attrs.kernel):
        raise ValueError(f'pad {attrs.pad} must have as many dimensions as kernel '
                         f'{attrs.kernel}')
    _pool_v1_parts(attrs)       # Pooling's own rules on the rest


@functools.lru_cache(maxsize=256)
def _pool_v1_plan(kernel, pool_type, global_pool, convention, stride, pad):
    pads = None
    if not global_pool and any(pad):
        pads = _PAD.parse_attrs(dict(mode='constant', pad_width=(0, 0, 0, 0) + tuple(
            p for q in pad for p in (q, q))))
    # a global average is a plain one; a windowed average divides the sum by the kernel size
    windowed_avg = pool_type == 'avg' and not global_pool
    pool = _POOL.parse_attrs(dict(kernel=kernel, pool_type='sum' if windowed_avg else pool_type,
                                  global_pool=global_pool, pooling_convention=convention,
                                  stride=stride))
    return pads, pool, math.prod(kernel) if windowed_avg else 1


def _pool_v1_parts(attrs):
    """(Pad's attributes or None, Pooling's attributes, divisor) computing a Pooling_v1."""
    return _pool_v1_plan(tuple(attrs.kernel), attrs.pool_type, attrs.global_pool,
                         attrs.pooling_convention, tuple(attrs.stride), tuple(attrs.pad))


def _padded(shape, pad, sign=1):
    if shape is None or not pad:
        return shape
    return tuple(shape[:2]) + tuple(d + sign * 2 * p if d else 0
                                    for d, p in zip(shape[2:], pad))


@register('Pooling_v1')
class Pooling_v1:
    """The legacy Pooling (max, avg or sum over 2-d or 3-d windows, or global): zero padding
    first, then pooling; 'avg' divides by the kernel size (see the module docstring).

    ``data`` (N, C, *spatial) -> (N, C, *out), out per axis (n + 2 * pad - kernel) // stride +
    1 ('valid') or the same rounded up ('full').
    """
    inputs = ('data',)
    attrs = _POOL_V1_ATTRS
    check = _check_pool_v1
    infer_type = _float_types

    def infer_shape(attrs, data):
        if data is not None and len(data) not in (4, 5):
            raise ShapeError(f'Pooling_v1: data must be 4-d or 5-d (N, C, *spatial), got '
                             f'{tuple(data)}')
        pads, pool, _ = _pool_v1_parts(attrs)
        pad = pads and pads.pad_width[4::2]
        ins, outs = _POOL.infer_shape(pool, _padded(data, pad))
        return [merge_shape(data, _padded(ins[0], pad, -1), 'data')], [outs[0]]

    def compute(xp, attrs, data):
        pads, pool, divisor = _pool_v1_parts(attrs)
        x = data if pads is None else _PAD.compute(xp, pads, data)
        out = _POOL.compute(xp, pool, x)
        out = out[0] if isinstance(out, tuple) else out
        return out if divisor == 1 else (out / divisor).astype(data.dtype, copy=False)

    def gradient(F, attrs, inputs, outputs, ograds):
        pads, pool, divisor = _pool_v1_parts(attrs)
        x, head = inputs[0], ograds[0]
        if divisor != 1:
            head = head * (1.0 / divisor)
        padded = x if pads is None else F.Pad(x, **pads)
        hidden = _POOL.num_outputs(pool) - 1
        grad = _POOL.gradient(F, pool, [padded], [outputs[0]] * (1 + hidden),
                              [head] + [None] * hidden)[0]
        if pads is not None:
            grad = _PAD.gradient(F, pads, [x], [padded], [grad])[0]
        return [grad]


# -------------------------------------------------------------------------------------------------
# BatchNorm_v1
# -------------------------------------------------------------------------------------------------

_BN_V1_ATTRS = dict(eps=Float(1e-3), momentum=Float(0.9), fix_gamma=Bool(True),
                    use_global_stats=Bool(False), output_mean_var=Bool(False))


@functools.lru_cache(maxsize=256)
def _bn_plan(items):
    return _BN.parse_attrs(dict(items))


def _bn(attrs):
    """BatchNorm's attributes of a BatchNorm_v1 (channel axis 1)."""
    return _bn_plan(tuple(sorted(attrs.items())))


@register('BatchNorm_v1')
class BatchNorm_v1:
    """The legacy BatchNorm over channel axis 1: ``out = (data - mean) / sqrt(var + eps) *
    gamma + beta``.

    ``data`` (N, C, ...), ``gamma``, ``beta``, ``moving_mean``, ``moving_var`` (C,) ->
    ``output`` like data, hidden ``mean`` and ``var`` (C,): the statistics used, the variance
    itself (BatchNorm's third output is the inverse standard deviation). Training mode (unless
    ``use_global_stats``) uses the batch's statistics and updates the moving ones in place.
    """
    var_inits = {'moving_mean': '["zero", {}]', 'moving_var': '["one", {}]'}
    inputs = ('data', 'gamma', 'beta', 'moving_mean', 'moving_var')
    aux = ('moving_mean', 'moving_var')
    attrs = _BN_V1_ATTRS
    num_outputs = 3
    train_aware = True

    def num_visible_outputs(attrs):
        return 3 if attrs.output_mean_var else 1

    output_names = ('output', 'mean', 'var')

    def infer_shape(attrs, *shapes):
        return _BN.infer_shape(_bn(attrs), *shapes)

    def infer_type(attrs, *dtypes):
        return _BN.infer_type(_bn(attrs), *dtypes)

    def compute(xp, attrs, data, gamma, beta, moving_mean, moving_var, is_train=False):
        batch = is_train and not attrs.use_global_stats
        used = None if batch else moving_var.copy()
        out, mean, invstd = _BN.compute(xp, _bn(attrs), data, gamma, beta, moving_mean,
                                        moving_var, is_train=is_train)
        var = used if used is not None else 1 / (invstd * invstd) - attrs.eps
        return out, mean, var.astype(mean.dtype, copy=False)

    def gradient(F, attrs, inputs, outputs, ograds, is_train=False):
        return _BN.gradient(F, _bn(attrs), inputs, outputs, ograds, is_train=is_train)


# -------------------------------------------------------------------------------------------------
# SVMOutput
# -------------------------------------------------------------------------------------------------

_SVM_ATTRS = dict(margin=Float(1.0), regularization_coefficient=Float(1.0),
                  use_linear=Bool(False))


def _svm_shapes(data, label, op='SVMOutput'):
    if data is not None and len(data) < 2:
        raise ShapeError(f'{op}: data must be (..., num_classes), at least 2-d, got '
                         f'{tuple(data)}')
    expected = None if data is None else tuple(data[:-1])
    label = merge_shape(expected, label, f'{op}: the label must have the shape of data '
                                         f'without its last (class) axis')
    if data is None and label is not None:
        data = label + (0,)
    return data, label


def _svm_types(attrs, data, label):
    ins, outs = _float_types(attrs, data)
    return [ins[0], label if label is not None else ins[0]], outs


@register('SVMOutput')
class SVMOutput:
    """A support vector machine's loss layer: ``data`` (..., K) scores passed through, with the
    hinge loss's gradient for ``label`` (...) class indices in the backward pass (the head
    gradient is ignored; see the module docstring). The label gets no gradient."""
    inputs = ('data', 'label')
    attrs = _SVM_ATTRS
    infer_type = _svm_types

    def infer_shape(attrs, data, label):
        data, label = _svm_shapes(data, label)
        return [data, label], [data]

    def compute(xp, attrs, data, label):
        return data.copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_SVMOutput(*inputs, **attrs), None]


@register('_backward_SVMOutput')
class _backward_SVMOutput:
    """SVMOutput's gradient from ``data`` (..., K) and ``label`` (...) -> data's shape: the
    hinge loss's (L1 with ``use_linear``, else L2) times ``regularization_coefficient``."""
    inputs = ('data', 'label')
    attrs = _SVM_ATTRS
    infer_type = _svm_types
    # the second derivative of a loss layer's conventional gradient is not defined
    gradient = not_differentiable_twice('_backward_SVMOutput')

    def infer_shape(attrs, data, label):
        data, label = _svm_shapes(data, label, '_backward_SVMOutput')
        return [data, label], [data]

    def compute(xp, attrs, data, label):
        k = data.shape[-1]
        x = data.reshape(-1, k)
        x = x.astype('float32') if x.dtype == 'float16' else x
        # MXNet truncates the float label to an int; one outside [0, K) marks no class
        target = xp.arange(k) == label.reshape(-1, 1).astype('int64')
        m, c = attrs.margin, attrs.regularization_coefficient
        if attrs.use_linear:
            grad = xp.where(target, -c * (m > x), c * (m > -x))
        else:
            grad = xp.where(target, -2 * c * xp.maximum(m - x, 0), 2 * c * xp.maximum(m + x, 0))
        return grad.reshape(data.shape).astype(data.dtype, copy=False)


# -------------------------------------------------------------------------------------------------
# IdentityAttachKLSparseReg
# -------------------------------------------------------------------------------------------------

_KL_ATTRS = dict(sparseness_target=Float(0.1), penalty=Float(0.001), momentum=Float(0.9))


def _kl_shapes(data, moving_avg, op):
    if data is not None and len(data) < 2:
        raise ShapeError(f'{op}: data must be at least 2-d (N, C, ...), got {tuple(data)}')
    moving_avg = merge_shape(None if data is None else (data[1],), moving_avg,
                             f'{op}: moving_avg has one value per channel (axis 1 of data)')
    if data is not None and moving_avg is not None and not data[1]:
        data = data[:1] + moving_avg + data[2:]
    return data, moving_avg


def _check_kl(attrs):
    for key in ('sparseness_target', 'momentum'):
        if not 0 <= attrs[key] <= 1:
            raise ValueError(f'{key} must be in [0, 1], got {attrs[key]}')


@register('IdentityAttachKLSparseReg')
class IdentityAttachKLSparseReg:
    """``data`` (N, C, ...) passed through; the backward pass adds the gradient of a KL
    sparsity penalty on the mean activation of each channel, tracked in the auxiliary
    ``moving_avg`` (C,) (see the module docstring). Meant for the output of a sigmoid."""
    var_inits = {'moving_avg': '["zero", {}]'}
    inputs = ('data', 'moving_avg')
    aux = ('moving_avg',)
    attrs = _KL_ATTRS
    check = _check_kl
    infer_type = same_dtype

    def infer_shape(attrs, data, moving_avg):
        data, moving_avg = _kl_shapes(data, moving_avg, 'IdentityAttachKLSparseReg')
        return [data, moving_avg], [data]

    def compute(xp, attrs, data, moving_avg):
        return data.copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        data, moving_avg = inputs
        head = F.zeros_like(data) if ograds[0] is None else ograds[0]
        return [F._backward_IdentityAttachKLSparseReg(head, data, moving_avg, **attrs), None]


@register('_backward_IdentityAttachKLSparseReg')
class _backward_IdentityAttachKLSparseReg:
    """IdentityAttachKLSparseReg's gradient: ``ograd`` plus the sparsity penalty's gradient,
    after moving ``moving_avg`` (C,) (updated in place) towards the channel means of ``data``
    (N, C, ...). -> data's shape."""
    inputs = ('ograd', 'data', 'moving_avg')
    aux = ('moving_avg',)
    attrs = _KL_ATTRS
    check = _check_kl
    infer_type = same_dtype
    gradient = not_differentiable_twice('_backward_IdentityAttachKLSparseReg')

    def infer_shape(attrs, ograd, data, moving_avg):
        data = merge_shape(ograd, data, 'ograd and data')
        data, moving_avg = _kl_shapes(data, moving_avg, '_backward_IdentityAttachKLSparseReg')
        return [data, data, moving_avg], [data]

    def compute(xp, attrs, ograd, data, moving_avg):
        axes = tuple(i for i in range(data.ndim) if i != 1)
        m, rho = attrs.momentum, attrs.sparseness_target
        moving_avg[...] = m * moving_avg + (1 - m) * data.mean(axis=axes)
        avg = moving_avg.reshape((1, -1) + (1,) * (data.ndim - 2))
        grad = ograd + attrs.penalty * (-rho / avg + (1 - rho) / (1 - avg))
        return grad.astype(data.dtype, copy=False)
