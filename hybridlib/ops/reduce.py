"""Broadcasting and reductions: broadcast_to/like/axis, sum/mean/prod/nansum/nanprod/max/min,
norm, argmax/argmin/argmax_channel, moments, and all_finite/multi_all_finite (amp's check).

As in MXNet (``broadcast_reduce_op``), broadcasting and reducing are each other's gradients: a
broadcast sums its gradient back with ``_broadcast_backward`` and a reduction broadcasts its
gradient out with ``_backward_sum`` (``_backward_mean`` also divides by the count), whose own
gradients are ``sum`` and ``mean`` again, so derivatives of any order stay in this family.

MXNet's legacy conventions reproduced here:

* ``axis=None`` and ``axis=()`` both reduce every axis (also with ``exclude=True``);
  ``exclude=True`` reduces every axis *not* listed; duplicate or out-of-range axes are errors.
* A result with no axes left has shape ``(1,)``.
* The result keeps the input dtype. Integers accumulate in their own type (wrapping) and
  ``mean`` divides with C's truncation; float16 accumulates in float32. ``norm`` computes in
  floating point and then casts (wrapping for integers).
* ``argmax``/``argmin`` return indices in the input's dtype (saturating for small integers).
"""
import contextlib

import numpy as np

from ..base import ShapeError
from .attrs import Bool, DType, Int, Shape
from .registry import (BackwardNode, OpDef, ZEROS, merge_shape, normalize_axis, output,
                       register, register_op, zero_gradient)

__all__ = []


# -------------------------------------------------------------------------------------------------
# Broadcasting
# -------------------------------------------------------------------------------------------------

def _broadcast_gradient(F, attrs, inputs, outputs, ograds):
    grads = [F._broadcast_backward(ograds[0], inputs[0])]
    return grads + [None] * (len(inputs) - 1)


def _check_broadcastable(src, dst):
    """ShapeError unless ``src`` (right-aligned) broadcasts to ``dst``."""
    if src is None or dst is None:
        return
    if len(src) > len(dst):
        raise ShapeError(f'cannot broadcast {src} to the lower rank of {dst}')
    for a, b in zip(src[::-1], dst[::-1]):
        if a and b and a != 1 and a != b:
            raise ShapeError(f'cannot broadcast {src} to {dst}: only size-1 axes broadcast')


@register('broadcast_to')
class broadcast_to:
    """Broadcast ``data`` to ``shape``; a 0 in ``shape`` keeps that axis of the input.

    ``data`` (d0, ..., dn) -> ``shape`` with the same rank; each ``di`` is 1 or the target size.
    """
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(shape=Shape(()))

    def compute(xp, attrs, data):
        target = tuple(t or d for t, d in zip(attrs.shape, data.shape))
        return xp.broadcast_to(data, target).copy()

    def infer_shape(attrs, data):
        if data is None:
            # the target sizes are known even when the input is not (0 stays unknown)
            return [None], [tuple(attrs.shape) if attrs.shape else None]
        if len(attrs.shape) != len(data):
            raise ShapeError(f'broadcast_to: shape {attrs.shape} and the input {data} differ '
                             'in rank')
        out = tuple(t or d for t, d in zip(attrs.shape, data))
        _check_broadcastable(data, out)
        return [data], [out]

    gradient = _broadcast_gradient


def _like_target(attrs, lhs, rhs):
    # MXNet uses the axes only when both are given; one alone is ignored
    if attrs.lhs_axes is None or attrs.rhs_axes is None:
        if lhs is None:
            return tuple(rhs)
        # an unknown (0) size of rhs is lhs's where lhs does not broadcast there
        lead = len(rhs) - len(lhs)
        return tuple(r or (lhs[i - lead] if i >= lead and lhs[i - lead] != 1 else 0)
                     for i, r in enumerate(rhs))
    out = list(lhs)
    for la, ra in zip(attrs.lhs_axes, attrs.rhs_axes):
        la = normalize_axis(la, len(lhs), 'lhs_axes')
        ra = normalize_axis(ra, len(rhs), 'rhs_axes')
        if lhs[la] not in (0, 1):
            raise ShapeError(f'broadcast_like: lhs axis {la} has size {lhs[la]}, not 1, and '
                             f'cannot be broadcast to {rhs[ra]}')
        out[la] = rhs[ra]
    return tuple(out)


def _like_check(attrs):
    if attrs.lhs_axes is not None and attrs.rhs_axes is not None:
        if len(attrs.lhs_axes) != len(attrs.rhs_axes):
            raise ValueError(f'lhs_axes {attrs.lhs_axes} and rhs_axes {attrs.rhs_axes} '
                             'differ in length')
        if not attrs.lhs_axes:
            raise ValueError('empty lhs_axes/rhs_axes are not allowed')


@register('broadcast_like')
class broadcast_like:
    """Broadcast ``lhs`` to the shape of ``rhs`` (or along ``lhs_axes`` to ``rhs_axes`` sizes).

    ``lhs`` (l0, ..., ln), ``rhs`` (r0, ..., rn) -> (r0, ..., rn); with axes: ``lhs``'s shape
    with ``lhs_axes[i]`` (of size 1) set to ``rhs.shape[rhs_axes[i]]``.
    Unlike MXNet, ``lhs`` may have fewer axes than ``rhs`` (numpy's rule: leading axes added).
    """
    inputs = ('lhs', 'rhs')
    attrs = dict(lhs_axes=Shape(None), rhs_axes=Shape(None))
    check = _like_check

    def compute(xp, attrs, lhs, rhs):
        return xp.broadcast_to(lhs, _like_target(attrs, lhs.shape, rhs.shape)).copy()

    def infer_shape(attrs, lhs, rhs):
        if rhs is None or (lhs is None and attrs.lhs_axes is not None
                           and attrs.rhs_axes is not None):
            return [lhs, rhs], [None]
        out = _like_target(attrs, lhs, rhs)
        _check_broadcastable(lhs, out)
        return [lhs, rhs], [out]

    def infer_type(attrs, lhs, rhs):
        return [lhs, rhs], [lhs]

    gradient = _broadcast_gradient


def _axis_target(attrs, shape):
    if len(attrs.axis) != len(attrs.size):
        raise ShapeError(f'broadcast_axis: axis {attrs.axis} and size {attrs.size} differ '
                         'in length')
    out = list(shape)
    for a, size in zip(attrs.axis, attrs.size):
        a = normalize_axis(a, len(shape))
        # checked against the result so far: a repeated axis is an error, as in MXNet
        if out[a] not in (0, 1):
            raise ShapeError(f'broadcast_axis: axis {a} has size {out[a]}, not 1')
        out[a] = size
    return tuple(out)


@register('broadcast_axis', aliases=('broadcast_axes',))
class broadcast_axis:
    """Broadcast the size-1 axes ``axis`` to the sizes ``size`` (negative axes allowed).

    ``data`` (d0, ..., dn) -> the same shape with ``d[axis[i]] = size[i]``.
    """
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(axis=Shape(()), size=Shape(()))

    def compute(xp, attrs, data):
        return xp.broadcast_to(data, _axis_target(attrs, data.shape)).copy()

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        return [data], [_axis_target(attrs, data)]

    gradient = _broadcast_gradient


# -------------------------------------------------------------------------------------------------
# Shared by the reductions: axes, shapes, accumulation
# -------------------------------------------------------------------------------------------------

def reduce_axes(axis, exclude, ndim):
    """The sorted axes that ``axis``/``exclude`` reduce on an ``ndim``-d input (MXNet's rules).

    ``axis`` None or () reduces everything, even with ``exclude``.
    """
    if not axis:
        return tuple(range(ndim))
    axes = []
    for a in axis:
        if not -ndim <= a < ndim:
            raise ShapeError(f'reduction axis {a} exceeds the input dimensions ({ndim}-d)')
        axes.append(a % ndim)
    axes.sort()
    if len(set(axes)) != len(axes):
        raise ShapeError(f'reduction axes have duplicates {tuple(axis)}')
    if exclude:
        return tuple(i for i in range(ndim) if i not in axes)
    return tuple(axes)


def reduced_shape(shape, axes, keepdims):
    """The shape after reducing ``axes``: 1 there with ``keepdims``, else removed; never ()."""
    if keepdims:
        out = tuple(1 if i in axes else d for i, d in enumerate(shape))
    else:
        out = tuple(d for i, d in enumerate(shape) if i not in axes)
    return out or (1,)


def _acc_dtype(dtype):
    # float16 sums lose everything past 2048; MXNet's kernels accumulate it in float32
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _int_divide(xp, total, count):
    """``total / count`` truncated toward zero, as C integer division (MXNet's int mean)."""
    if total.dtype.kind == 'u':
        return total // count
    quotient = xp.abs(total) // count
    return xp.where(total < 0, -quotient, quotient).astype(total.dtype, copy=False)


def _count(shape, axes):
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _sum(xp, data, axes):
    return data.sum(axis=axes, dtype=_acc_dtype(data.dtype), keepdims=True)


def _mean(xp, data, axes):
    if data.dtype.kind in 'iu':
        return _int_divide(xp, data.sum(axis=axes, dtype=data.dtype, keepdims=True),
                           _count(data.shape, axes))
    if xp is not np or data.dtype.kind != 'f':
        return data.mean(axis=axes, dtype=_acc_dtype(data.dtype), keepdims=True)
    # numpy's mean, without its Python checks: the sum divided by the count
    total = data.sum(axis=axes, dtype=_acc_dtype(data.dtype), keepdims=True)
    return np.true_divide(total, _count(data.shape, axes), out=total)


def _prod(xp, data, axes):
    return data.prod(axis=axes, dtype=_acc_dtype(data.dtype), keepdims=True)


def _nansum(xp, data, axes):
    if data.dtype.kind == 'f':
        data = xp.where(xp.isnan(data), data.dtype.type(0), data)
    return _sum(xp, data, axes)


def _nanprod(xp, data, axes):
    if data.dtype.kind == 'f':
        data = xp.where(xp.isnan(data), data.dtype.type(1), data)
    return _prod(xp, data, axes)


# numpy reduces a short contiguous axis row by row, slowly: the maxima of (512, 10) rows take
# 37 us. The rows turned into columns reduce as whole rows of the transpose, in vector
# instructions (4 us with the copy). max and min are exact in any order, so both forms give the
# same bits; sums are not, and keep numpy's row-wise (pairwise) order.
_SHORT_ROW = 32


def row_extremum(xp, ufunc, rows):
    """``ufunc.reduce`` (maximum or minimum) of each row of ``rows`` (R, n), as (R, 1)."""
    r, n = rows.shape
    if xp is np and n <= _SHORT_ROW <= r:
        return ufunc.reduce(np.ascontiguousarray(rows.T), axis=0).reshape(r, 1)
    return ufunc.reduce(rows, axis=1, keepdims=True)


def _trailing_rows(shape, axes):
    """(R, n) when ``axes`` are the last axes of ``shape``: the data as R rows of the n entries
    each result reduces; else None."""
    kept = len(shape) - len(axes)
    if axes != tuple(range(kept, len(shape))):
        return None
    return int(np.prod(shape[:kept], dtype=np.int64)), _count(shape, axes)


class _Extremum:
    """The reducer of max (``ufunc`` maximum) or min, made for the shapes at hand
    (``for_shape``): ``row_extremum`` over trailing axes."""

    def __init__(self, ufunc):
        self.ufunc = ufunc

    def for_shape(self, shape, axes):
        ufunc, rows = self.ufunc, _trailing_rows(shape, axes)
        if rows is None:
            return lambda xp, data, axes: ufunc.reduce(data, axis=axes, keepdims=True)
        kept = reduced_shape(shape, axes, True)
        return lambda xp, data, axes: row_extremum(xp, ufunc, data.reshape(rows)).reshape(kept)


def _reduce_attrs(attrs):
    return dict(axis=attrs.axis, keepdims=attrs.keepdims, exclude=attrs.exclude)


def _spread(F, value, like, attrs):
    """``value`` (a reduced result) broadcast back to the shape of ``like``."""
    return F._backward_sum(value, like, **_reduce_attrs(attrs))


# gradients: (F, attrs, x, y, g) -> the gradient of x (y the output, g its gradient)

def _sum_grad(F, attrs, x, y, g):
    return _spread(F, g, x, attrs)


def _mean_grad(F, attrs, x, y, g):
    return F._backward_mean(g, x, **_reduce_attrs(attrs))


def _prod_grad(F, attrs, x, y, g):
    # MXNet's rule, literally y / x: NaN where x == 0 (not the product of the others)
    return _spread(F, g, x, attrs) * (_spread(F, y, x, attrs) / x)


def _nansum_grad(F, attrs, x, y, g):
    return _spread(F, g, x, attrs) * (x == x)


def _nanprod_grad(F, attrs, x, y, g):
    return _spread(F, g, x, attrs) * F._backward_nanprod(x, _spread(F, y, x, attrs))


def _extremum_grad(F, attrs, x, y, g):
    # every position equal to the extremum gets the full gradient (ties all do), as MXNet
    return _spread(F, g, x, attrs) * (x == _spread(F, y, x, attrs))


_REDUCE_ATTRS = dict(axis=Shape(None), keepdims=Bool(False), exclude=Bool(False))

# name, aliases, reducer(xp, data, axes) -> keepdims result (or an object whose
# for_shape(shape, axes) makes one for those shapes), gradient, what it computes
REDUCTIONS = [
    ('sum', ('sum_axis',), _sum, _sum_grad, 'The sum'),
    ('mean', (), _mean, _mean_grad, 'The mean'),
    ('prod', (), _prod, _prod_grad, 'The product'),
    ('nansum', (), _nansum, _nansum_grad, 'The sum, NaNs counted as 0,'),
    ('nanprod', (), _nanprod, _nanprod_grad, 'The product, NaNs counted as 1,'),
    ('max', ('max_axis',), _Extremum(np.maximum), _extremum_grad, 'The maximum'),
    ('min', ('min_axis',), _Extremum(np.minimum), _extremum_grad, 'The minimum'),
]
# reductions whose result is the element itself when it reduces one element
_ITSELF_WHEN_ONE = ('sum', 'mean', 'prod', 'max', 'min')


def _reduce_infer_shape(attrs, data):
    if data is None:
        return [None], [None]
    axes = reduce_axes(attrs.axis, attrs.exclude, len(data))
    return [data], [reduced_shape(data, axes, attrs.keepdims)]


def _reduction_op(name, aliases, reducer, grad, what):
    def specialise(xp, attrs, shapes, dtypes, is_train):
        shape, dtype = tuple(shapes[0]), np.dtype(dtypes[0])
        axes = reduce_axes(attrs.axis, attrs.exclude, len(shape))
        out_shape = reduced_shape(shape, axes, attrs.keepdims)
        half = dtype == np.float16
        reduce = reducer.for_shape(shape, axes) if hasattr(reducer, 'for_shape') else reducer
        if name in _ITSELF_WHEN_ONE and _count(shape, axes) == 1:
            def itself(data, out=None):
                if out is None:
                    return data.reshape(out_shape).copy()
                out.reshape(shape)[...] = data
                return out
            return itself

        def reduction(data, out=None):
            # float16 overflows to inf, as in MXNet (a context per call: bodies run in threads)
            with np.errstate(over='ignore') if half else contextlib.nullcontext():
                result = reduce(xp, data, axes).astype(dtype, copy=False)
            return output(result, out, out_shape)
        return reduction

    def gradient(F, attrs, inputs, outputs, ograds):
        return [grad(F, attrs, inputs[0], outputs[0], ograds[0])]

    doc = (f'{what} over ``axis`` (all axes when None or (); with ``exclude=True`` over every '
           'axis not listed).\n\n``data`` (d0, ..., dn) -> the reduced axes removed (kept as 1 '
           'with ``keepdims``); shape (1,) when none are left. The dtype is kept.')
    # MXNet's backward of sum and mean reads the gradient alone, of the others also the input
    # and the output
    reads = ('ograd0',) if name in ('sum', 'mean') else ('ograd0', 'in0', 'out0')
    return OpDef(name, inputs=('data',), attrs=_REDUCE_ATTRS, specialise=specialise,
                 gradient=gradient, infer_shape=_reduce_infer_shape, aliases=aliases,
                 named_inputs=False, backward_node=BackwardNode(reads), doc=doc)


for _row in REDUCTIONS:
    register_op(_reduction_op(*_row))


def _keepdims_form(xp, ograd, shape, attrs):
    axes = reduce_axes(attrs.axis, attrs.exclude, len(shape))
    return ograd.reshape(reduced_shape(shape, axes, True)), axes


def _backward_reduce_shape(attrs, ograd, data):
    if data is None:
        return [ograd, None], [None]
    axes = reduce_axes(attrs.axis, attrs.exclude, len(data))
    ograd = merge_shape(ograd, reduced_shape(data, axes, attrs.keepdims), 'ograd')
    return [ograd, data], [data]


def _backward_reduce_type(attrs, ograd, data):
    return [ograd, data], [ograd]


@register('_backward_sum')
class _backward_sum:
    """The gradient of ``sum``: ``ograd`` (sum's output shape) broadcast back to ``data``'s shape.

    ``ograd`` (the reduced shape), ``data`` (d0, ..., dn; only its shape is used)
    -> (d0, ..., dn), in ``ograd``'s dtype. Attributes as for ``sum``.
    """
    inputs = ('ograd', 'data')
    attrs = _REDUCE_ATTRS
    infer_shape = _backward_reduce_shape
    infer_type = _backward_reduce_type

    def compute(xp, attrs, ograd, data):
        g, _ = _keepdims_form(xp, ograd, data.shape, attrs)
        return xp.broadcast_to(g, data.shape).copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.sum(ograds[0], **_reduce_attrs(attrs)), None]


@register('_backward_mean')
class _backward_mean:
    """The gradient of ``mean``: ``ograd`` broadcast back to ``data``'s shape, divided by the
    number of elements averaged.

    ``ograd`` (the reduced shape), ``data`` (d0, ..., dn; only its shape is used)
    -> (d0, ..., dn), in ``ograd``'s dtype. Attributes as for ``mean``.
    """
    inputs = ('ograd', 'data')
    attrs = _REDUCE_ATTRS
    infer_shape = _backward_reduce_shape
    infer_type = _backward_reduce_type

    def specialise(xp, attrs, shapes, dtypes, is_train):
        shape, dtype = tuple(shapes[1]), np.dtype(dtypes[0])
        axes = reduce_axes(attrs.axis, attrs.exclude, len(shape))
        kept = reduced_shape(shape, axes, True)
        count = dtype.type(_count(shape, axes))

        def backward_mean(ograd, data, out=None):
            if out is None:
                out = xp.empty(shape, dtype=dtype)
            # each element ograd / count, as dividing first and broadcasting after
            xp.divide(ograd.reshape(kept), count, out=out, casting='unsafe')
            return out
        return backward_mean

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.mean(ograds[0], **_reduce_attrs(attrs)), None]


@register('_backward_nanprod')
class _backward_nanprod:
    """The elementwise factor of nanprod's gradient: ``prod / data``, 0 where ``data`` is NaN.

    ``data``, ``prod`` (the same shape: nanprod's result broadcast back) -> that shape.
    """
    inputs = ('data', 'prod')

    def compute(xp, attrs, data, prod):
        with np.errstate(all='ignore'):
            ratio = prod / data
        return xp.where(xp.isnan(data), data.dtype.type(0), ratio).astype(data.dtype,
                                                                          copy=False)

    def gradient(F, attrs, inputs, outputs, ograds):
        x, prod = inputs
        g = ograds[0]
        # d/dx (prod / x) = -prod / x^2 and d/dprod = 1 / x, both 0 where x is NaN; dividing
        # by x only inside this op keeps NaNs out of higher derivatives (0 * NaN is NaN)
        return [F._backward_nanprod(x, F._backward_nanprod(x, -(g * prod))),
                F._backward_nanprod(x, g)]


# -------------------------------------------------------------------------------------------------
# norm
# -------------------------------------------------------------------------------------------------

_NORM_DTYPES = ('float16', 'float32', 'float64', 'int32', 'int64', 'int8')


def _norm_check(attrs):
    if attrs.ord not in (1, 2):
        raise ValueError(f'norm only supports ord=1 and ord=2, got ord={attrs.ord}')
    if attrs.out_dtype is not None and attrs.out_dtype.name not in _NORM_DTYPES:
        raise ValueError(f'out_dtype must be None or one of {", ".join(_NORM_DTYPES)}, '
                         f'got {attrs.out_dtype.name}')


def _cast_result(value, dtype):
    """A floating result cast to ``dtype``; integers truncate and then wrap, as MXNet's casts."""
    if dtype.kind in 'iu':
        return value.astype(np.int64).astype(dtype)
    return value.astype(dtype, copy=False)


def _integer_l2(xp, data, axes):
    """MXNet's L2 norm of integers: ``max|x| * sqrt(count of |x| == max|x|)``.

    MXNet accumulates ``scale * sqrt(sum((x / scale)^2))`` (BLAS nrm2, for overflow safety) in
    the input dtype, so every ``|x| / scale`` truncates to 0 or 1.
    """
    magnitude = xp.abs(data.astype(np.int64))
    scale = magnitude.max(axis=axes, keepdims=True)
    count = (magnitude == scale).sum(axis=axes, keepdims=True)
    return scale * xp.sqrt(count.astype(np.float64))


@register('norm')
class norm:
    """The L1 (``ord=1``: sum of ``|x|``) or L2 (``ord=2``: root of the sum of squares) norm of
    the vectors along ``axis`` (all axes when None or ()).

    ``data`` (d0, ..., dn) -> the reduced axes removed (kept as 1 with ``keepdims``); shape (1,)
    when none are left. The dtype is ``out_dtype`` if given, else the input's.
    """
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0', 'in0', 'out0'))
    attrs = dict(ord=Int(2), axis=Shape(None), out_dtype=DType(None), keepdims=Bool(False))
    check = _norm_check

    def compute(xp, attrs, data):
        axes = reduce_axes(attrs.axis, False, data.ndim)
        if attrs.ord == 2 and data.dtype.kind in 'iu':
            out = _integer_l2(xp, data, axes)
        else:
            # squares of float16 overflow past 256: work in float32 (float64 for integers)
            work = data.astype(_acc_dtype(data.dtype) if data.dtype.kind == 'f'
                               else np.float64, copy=False)
            if attrs.ord == 1:
                out = xp.abs(work).sum(axis=axes, keepdims=True)
            else:
                out = xp.sqrt((work * work).sum(axis=axes, keepdims=True))
        out = _cast_result(out, attrs.out_dtype or data.dtype)
        return out.reshape(reduced_shape(data.shape, axes, attrs.keepdims))

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        axes = reduce_axes(attrs.axis, False, len(data))
        return [data], [reduced_shape(data, axes, attrs.keepdims)]

    def infer_type(attrs, data):
        return [data], [attrs.out_dtype or data]

    def gradient(F, attrs, inputs, outputs, ograds):
        x, y, g = inputs[0], outputs[0], ograds[0]
        spread = dict(axis=attrs.axis, keepdims=attrs.keepdims)
        if attrs.out_dtype is not None and np.dtype(x.dtype) != attrs.out_dtype:
            y = F.Cast(y, dtype=x.dtype)
            g = F.Cast(g, dtype=x.dtype)
        g = F._backward_sum(g, x, **spread)
        if attrs.ord == 1:
            # sign(x), 0 at NaN as MXNet's sign (numpy's sign(NaN) is NaN)
            return [g * ((x > 0) - (x < 0))]
        # x / norm: NaN for an all-zero vector, as in MXNet
        return [g * (x / F._backward_sum(y, x, **spread))]


# -------------------------------------------------------------------------------------------------
# argmax, argmin, argmax_channel
# -------------------------------------------------------------------------------------------------

def _index_result(xp, index, dtype):
    """Indices in ``dtype``, saturating at its maximum for small integer types as MXNet."""
    if dtype.kind in 'iu':
        index = xp.minimum(index, np.iinfo(dtype).max)
    return index.astype(dtype)


def _arg_shape(shape, axis, keepdims):
    if axis is None:
        return (1,) * len(shape) if keepdims and shape else (1,)
    axis = normalize_axis(axis, len(shape))
    return reduced_shape(shape, (axis,), keepdims)


def _arg_compute(name):
    def compute(xp, attrs, data):
        find = getattr(xp, name)
        if attrs.axis is None:
            index = find(data.reshape(-1))
        else:
            index = find(data, axis=normalize_axis(attrs.axis, data.ndim))
        index = _index_result(xp, xp.asarray(index), data.dtype)
        return index.reshape(_arg_shape(data.shape, attrs.axis, attrs.keepdims))
    return compute


def _arg_infer_shape(attrs, data):
    if data is None:
        return [None], [(1,) if attrs.axis is None and not attrs.keepdims else None]
    return [data], [_arg_shape(data, attrs.axis, attrs.keepdims)]


_ARG_DOC = ('The index of the {0} along ``axis`` (of the flattened array when None), the first '
            'one on ties; a NaN counts as the {0}.\n\n``data`` (d0, ..., dn) -> ``axis`` '
            'removed (kept as 1 with ``keepdims``); shape (1,) when no axis is left. The indices '
            'have the dtype of ``data`` (MXNet\'s rule); the gradient is zero.')

for _name, _what in (('argmax', 'maximum'), ('argmin', 'minimum')):
    register_op(OpDef(_name, inputs=('data',), attrs=dict(axis=Int(None), keepdims=Bool(False)),
                      compute=_arg_compute(_name), gradient=zero_gradient,
                      infer_shape=_arg_infer_shape, named_inputs=False, backward_node=ZEROS,
                      doc=_ARG_DOC.format(_what)))


@register('argmax_channel')
class argmax_channel:
    """The index of the maximum along axis 1 (the channels), in the dtype of ``data``.

    ``data`` (d0, d1, ..., dn) with at least 2 axes -> (d0, d2, ..., dn). The gradient is
    zero (MXNet registers none at all and refuses to differentiate it).
    """
    inputs = ('data',)
    named_inputs = False
    gradient = zero_gradient

    def compute(xp, attrs, data):
        index = _index_result(xp, xp.argmax(data, axis=1), data.dtype)
        return index.reshape(reduced_shape(data.shape, (1,), False))

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        if len(data) < 2:
            raise ShapeError(f'argmax_channel: axis 1 exceeds the input dimension of {len(data)}')
        return [data], [reduced_shape(data, (1,), False)]


# -------------------------------------------------------------------------------------------------
# moments
# -------------------------------------------------------------------------------------------------

def _moments_check(attrs):
    if not attrs.axes:
        raise ValueError('empty axes is not supported; for global moments pass all the axes '
                         'to the axes argument')


def _moments_attrs(attrs):
    return dict(axis=attrs.axes, keepdims=attrs.keepdims)


@register('moments')
class moments:
    """The mean and the (population, divided by n) variance of ``data`` over ``axes``.

    ``data`` (d0, ..., dn) -> two arrays with the reduced axes removed (kept as 1 with
    ``keepdims``; shape (1,) when none are left), in the dtype of ``data``. The variance is taken
    around the mean as rounded to that dtype (integer means truncate, as in MXNet).
    """
    inputs = ('data',)
    attrs = dict(axes=Shape(None), keepdims=Bool(False))
    num_outputs = 2
    check = _moments_check

    def compute(xp, attrs, data):
        axes = reduce_axes(attrs.axes, False, data.ndim)
        mean = _mean(xp, data, axes).astype(data.dtype, copy=False)
        acc = _acc_dtype(data.dtype)
        dev = data.astype(acc, copy=False) - mean.astype(acc, copy=False)
        var = _mean(xp, dev * dev, axes).astype(data.dtype, copy=False)
        shape = reduced_shape(data.shape, axes, attrs.keepdims)
        return mean.reshape(shape), var.reshape(shape)

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None, None]
        out = reduced_shape(data, reduce_axes(attrs.axes, False, len(data)), attrs.keepdims)
        return [data], [out, out]

    def infer_type(attrs, data):
        return [data], [data, data]

    def gradient(F, attrs, inputs, outputs, ograds):
        x = inputs[0]
        spread = _moments_attrs(attrs)
        grad = None
        if ograds[0] is not None:
            grad = F._backward_mean(ograds[0], x, **spread)
        if ograds[1] is not None:
            # d var / dx = 2 (x - mean) / n; the mean's own dependence on x cancels out
            centred = x - F._backward_sum(outputs[0], x, **spread)
            gvar = F._backward_mean(ograds[1], x, **spread) * (centred * 2)
            grad = gvar if grad is None else grad + gvar
        return [grad]


# -------------------------------------------------------------------------------------------------
# Finiteness checks: AMP's loss scaler skips a step whose gradients overflowed
# -------------------------------------------------------------------------------------------------

def _finite(xp, attrs, *data, out=None):
    """``[1.]`` when every element of ``data`` is finite, else ``[0.]``; with
    ``init_output=False`` ANDed into ``out``: how MXNet chains chunks of arrays."""
    flag = xp.ones((1,), np.float32)
    for d in data:
        flag *= xp.isfinite(d).all()      # stays on the device: no sync per array
    if out is None:
        return flag
    if attrs.init_output:
        out[...] = flag
    else:
        out *= flag
    return out


def _finite_reads_out(attrs):
    # what out holds is part of the result: a compiled graph must not plan a buffer for it
    return not attrs.init_output


def _finite_shapes(attrs, *shapes):
    return list(shapes), [(1,)]


def _finite_types(attrs, *dtypes):
    return list(dtypes), [np.dtype(np.float32)]


@register('all_finite')
class all_finite:
    """``[1.]`` when every element of ``data`` is finite, else ``[0.]`` (float32).

    With ``init_output=False`` and ``out=``, the result is ANDed into ``out``.
    """
    inputs = ('data',)
    attrs = dict(init_output=Bool(True))
    infer_shape = _finite_shapes
    infer_type = _finite_types
    gradient = zero_gradient
    compute = _finite
    reads_out = _finite_reads_out


@register('multi_all_finite')
class multi_all_finite:
    """``[1.]`` when every element of all ``num_arrays`` inputs is finite, else ``[0.]``.

    With ``init_output=False`` and ``out=``, the result is ANDed into ``out``.
    """
    variadic = 'num_arrays'
    attrs = dict(num_arrays=Int(1), init_output=Bool(True))
    infer_shape = _finite_shapes
    infer_type = _finite_types
    gradient = zero_gradient
    compute = _finite
    reads_out = _finite_reads_out


del _row, _name, _what
