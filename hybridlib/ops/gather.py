"""Gathers and scatters: take, batch_take, pick, one_hot, where, gather_nd, scatter_nd,
_scatter_set_nd, and the index conventions the sort, sequence and embedding families share.

Gathers differentiate into scatter-adds, which are operators of this family named after
MXNet's backward nodes (``_backward_take``, ``_backward_pick``, ``_backward_gather_nd``); the
gradient of each scatter is the gather again, so derivatives of any order stay here.

MXNet's conventions reproduced here (checked against MXNet 1.9.1):

* Index inputs may be of any dtype; float indices are truncated toward zero (``1.7 -> 1``,
  ``-0.5 -> 0``) before ``mode`` applies. ``mode='clip'`` clips to ``[0, n-1]`` (so ``-1`` is
  0), ``mode='wrap'`` takes the index modulo ``n`` (``-1`` is ``n-1``), ``mode='raise'`` fails
  on any index outside ``[0, n-1]``.
* ``one_hot`` gives a row of ``off_value`` for an index outside ``[0, depth)``.
* ``gather_nd``/``scatter_nd`` accept indices in ``[-n, n-1]`` and fail on others.
"""
import numpy as np

from ..base import MXNetError, NotSupportedError, ShapeError, DTypeError, DEFAULT_DTYPE
from .attrs import INT32_MAX, Bool, DType, Float, Int, Shape, Str
from .registry import (BackwardNode, merge_shape, normalize_axis, output, register,
                       zero_gradient)

__all__ = []


class _IntOrNone(Int):
    """MXNet's ``int or None`` with a non-None default (``topk(axis=-1)``, ``axis=None`` too)."""
    type_name = 'int or None'

    @property
    def optional(self):
        return True


_VALUE_DTYPES = ('float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8')


def _check_dtype(dtype, allowed):
    if dtype.name not in allowed:
        raise ValueError(f'dtype {dtype.name!r} is not one of {", ".join(allowed)}')


# -------------------------------------------------------------------------------------------------
# Helpers
# -------------------------------------------------------------------------------------------------

def _scatter_add(xp, target, index, values):
    """``target[index] += values``, accumulating repeated indices (the only xp-specific code)."""
    if xp is np:
        np.add.at(target, index, values)
    else:
        import cupyx
        cupyx.scatter_add(target, index, values)


def _int_index(indices):
    """Indices as int64, floats truncated toward zero as MXNet's casts do."""
    return indices.astype(np.int64, copy=False)


def _fix_index(xp, indices, n, mode, op='take'):
    """Integer indices in ``[0, n)`` by ``mode`` ('clip', 'wrap' or 'raise')."""
    idx = _int_index(indices)
    if mode == 'wrap':
        return xp.mod(idx, n)
    if mode == 'raise':
        if idx.size and bool(((idx < 0) | (idx >= n)).any()):
            raise MXNetError(f'{op} operator contains indices out of bound (axis size {n}, '
                             "mode='raise')")
        return idx
    # (the ufuncs: np.clip checks its arguments in Python first)
    return xp.minimum(xp.maximum(idx, 0), n - 1)


def _axis_grid(xp, idx, axis):
    """An index tuple that addresses ``idx[...]`` along ``axis`` and the same position on the
    other axes (``x[_axis_grid(xp, idx, a)] == take_along_axis(x, idx, a)``)."""
    grid = []
    for d, size in enumerate(idx.shape):
        if d == axis:
            grid.append(idx)
        else:
            shape = [1] * idx.ndim
            shape[d] = size
            grid.append(xp.arange(size).reshape(shape))
    return tuple(grid)


def _cast_scalar(value, dtype):
    """A Python number as MXNet casts it to ``dtype`` (integers truncate, then wrap)."""
    if dtype.kind in 'iub':
        return np.asarray(int(value)).astype(dtype)
    return np.asarray(value).astype(dtype)


def _prod(shape):
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


def _data_type(attrs, data, *others):
    """dtype inference of a gather: the output has the data's dtype, indices any dtype."""
    return [data, *others], [data]


def _gradient_type(attrs, ograd, *others):
    """dtype inference of a scatter (backward) operator: the output has ograd's dtype."""
    return [ograd, *others], [ograd]


# -------------------------------------------------------------------------------------------------
# take, batch_take, pick
# -------------------------------------------------------------------------------------------------

def _take_shape(a, indices, axis):
    ax = normalize_axis(axis, len(a))
    return tuple(a[:ax]) + tuple(indices) + tuple(a[ax + 1:])


_TAKE_ATTRS = dict(axis=Int(0), mode=Str('clip', choices=('clip', 'raise', 'wrap')))


@register('take')
class take:
    """Elements of ``a`` at ``indices`` along ``axis``.

    ``a`` (d0, ..., dn), ``indices`` any shape (any dtype, truncated) ->
    (d0, ..., d[axis-1], *indices.shape, d[axis+1], ..., dn). Out-of-range indices follow
    ``mode``: 'clip' (default; negative indices are 0), 'wrap' (modulo), 'raise' (error).
    """
    inputs = ('a', 'indices')
    backward_node = BackwardNode(('ograd0', 'in1'))
    attrs = _TAKE_ATTRS

    def compute(xp, attrs, a, indices):
        ax = normalize_axis(attrs.axis, a.ndim)
        idx = _fix_index(xp, indices, a.shape[ax], attrs.mode)
        return xp.take(a, idx, axis=ax)

    def infer_shape(attrs, a, indices):
        if a is None or indices is None:
            if a is not None:
                normalize_axis(attrs.axis, len(a))
            return [a, indices], [None]
        return [a, indices], [_take_shape(a, indices, attrs.axis)]

    infer_type = _data_type

    def gradient(F, attrs, inputs, outputs, ograds):
        a, indices = inputs
        return [F._backward_take(ograds[0], indices, a, axis=attrs.axis, mode=attrs.mode), None]


@register('_backward_take')
class _backward_take:
    """The gradient of ``take``: ``ograd`` summed into zeros of ``data``'s shape at ``indices``.

    ``ograd`` of ``take``'s output shape, ``indices`` as given to ``take``, ``data`` (only its
    shape is read) -> ``data``'s shape, in ``ograd``'s dtype.
    """
    inputs = ('ograd', 'indices', 'data')
    attrs = _TAKE_ATTRS

    def compute(xp, attrs, ograd, indices, data):
        ax = normalize_axis(attrs.axis, data.ndim)
        n = data.shape[ax]
        idx = _fix_index(xp, indices, n, attrs.mode).reshape(-1)
        pre, post = _prod(data.shape[:ax]), _prod(data.shape[ax + 1:])
        out = xp.zeros((pre, n, post), dtype=ograd.dtype)
        _scatter_add(xp, out, (slice(None), idx), ograd.reshape(pre, idx.size, post))
        return out.reshape(data.shape)

    def infer_shape(attrs, ograd, indices, data):
        if data is not None and indices is not None:
            ograd = merge_shape(ograd, _take_shape(data, indices, attrs.axis), 'ograd')
        return [ograd, indices, data], [data]

    infer_type = _gradient_type

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.take(ograds[0], inputs[1], axis=attrs.axis, mode=attrs.mode), None, None]


def _batch_take_gradient(F, attrs, inputs, outputs, ograds):
    raise NotSupportedError('batch_take is not differentiable (as in MXNet, which has no '
                            'gradient for it); use pick(a, indices, axis=-1) instead')


@register('batch_take')
class batch_take:
    """``out[i] = a[i, indices[i]]`` for the rows of ``a`` (deprecated in MXNet for ``pick``).

    ``a`` (..., M) with at least 2 axes, ``indices`` int32 with as many elements as ``a`` has
    rows (``a.size / M``) -> ``indices.shape``. Indices are clipped to ``[0, M-1]``. For more
    than 2 axes MXNet's kernel reads the wrong rows; this reads row ``i`` of
    ``a.reshape(-1, M)``. Not differentiable, as in MXNet.
    """
    inputs = ('a', 'indices')

    def compute(xp, attrs, a, indices):
        m = a.shape[-1]
        rows = a.reshape(-1, m)
        idx = xp.clip(_int_index(indices).reshape(-1), 0, m - 1)
        return rows[xp.arange(rows.shape[0]), idx].reshape(indices.shape)

    def infer_shape(attrs, a, indices):
        if a is not None:
            if len(a) < 2:
                raise ShapeError(f'batch_take: the data must have at least 2 axes, got {a}')
            if indices is not None and 0 not in a and 0 not in indices \
                    and _prod(a[:-1]) != _prod(indices):
                raise ShapeError(f'batch_take: indices {tuple(indices)} must have one element '
                                 f'per row of the data {tuple(a)} ({_prod(a[:-1])})')
        return [a, indices], [indices]

    def infer_type(attrs, a, indices):
        if indices is not None and indices != np.int32:
            raise DTypeError(f'batch_take: indices must be int32, got {np.dtype(indices).name}')
        return [a, np.dtype(np.int32)], [a]

    gradient = _batch_take_gradient


def _pick_shapes(attrs, data):
    """(output shape, the same with the axis kept as 1, axis) for pick's data shape."""
    if attrs.axis is None:
        raise NotSupportedError('pick: axis=None is not supported (as in MXNet); give an axis')
    ax = normalize_axis(attrs.axis, len(data))
    kept = tuple(1 if i == ax else d for i, d in enumerate(data))
    removed = tuple(d for i, d in enumerate(data) if i != ax) or (1,)
    return (kept if attrs.keepdims else removed), kept, removed, ax


def _pick_index_shape(attrs, data, index):
    out, kept, removed, _ = _pick_shapes(attrs, data)
    if index is None:
        return out
    # MXNet accepts the index with or without the picked axis (as 1), whatever keepdims says
    for form in (out, kept, removed):
        if len(index) == len(form):
            return merge_shape(form, index, 'index')
    raise ShapeError(f'pick: index {tuple(index)} must have shape {out} or {kept}')


def _pick_positions(xp, attrs, data_shape):
    """(output shape, the same with the axis kept as 1, ``positions(index)``): the index tuple
    of the picked elements of data (``data_shape``) for ``index``, the other axes' ranges made
    once."""
    out_shape, kept, _, ax = _pick_shapes(attrs, tuple(data_shape))
    n, mode = data_shape[ax], attrs.mode
    grid = _axis_grid(xp, xp.zeros(kept, dtype=np.int64), ax)
    before, after = grid[:ax], grid[ax + 1:]    # (a new tuple per call: bodies run in threads)

    def positions(index):
        return before + (_fix_index(xp, index, n, mode, 'pick').reshape(kept),) + after
    return out_shape, kept, positions


_PICK_ATTRS = dict(axis=_IntOrNone(-1), keepdims=Bool(False),
                   mode=Str('clip', choices=('clip', 'wrap')))


@register('pick', aliases=('choose_element_0index',))
class pick:
    """One element per position along ``axis``: ``out[..] = data[.., index[..], ..]``.

    ``data`` (d0, ..., dn), ``index`` (any dtype, truncated) of the output shape ->
    ``data``'s shape without ``axis`` ((1,) when nothing is left), or with it as 1 when
    ``keepdims``. The index may also be given with the axis as 1. Out-of-range indices are
    clipped (``mode='clip'``) or wrapped (``mode='wrap'``). ``axis=None`` is not supported.
    """
    inputs = ('data', 'index')
    backward_node = BackwardNode(('ograd0', 'in1'), grads=(0,))
    attrs = _PICK_ATTRS

    def specialise(xp, attrs, shapes, dtypes, is_train):
        out_shape, _, positions = _pick_positions(xp, attrs, shapes[0])

        def pick(data, index, out=None):
            return output(data[positions(index)], out, out_shape)
        return pick

    def infer_shape(attrs, data, index):
        if data is None:
            if attrs.axis is None:
                _pick_shapes(attrs, ())
            return [data, index], [None]
        out = _pick_shapes(attrs, data)[0]
        return [data, _pick_index_shape(attrs, data, index)], [out]

    infer_type = _data_type

    def gradient(F, attrs, inputs, outputs, ograds):
        data, index = inputs
        return [F._backward_pick(ograds[0], index, data, axis=attrs.axis,
                                 keepdims=attrs.keepdims, mode=attrs.mode), None]


@register('_backward_pick')
class _backward_pick:
    """The gradient of ``pick``: ``ograd`` placed at the picked positions of zeros.

    ``ograd`` of ``pick``'s output shape, ``index`` as given to ``pick``, ``data`` (only its
    shape is read) -> ``data``'s shape, in ``ograd``'s dtype.
    """
    inputs = ('ograd', 'index', 'data')
    attrs = _PICK_ATTRS

    def specialise(xp, attrs, shapes, dtypes, is_train):
        data_shape = tuple(shapes[2])
        _, kept, positions = _pick_positions(xp, attrs, data_shape)

        def backward_pick(ograd, index, data, out=None):
            if out is None:
                out = xp.zeros(data_shape, dtype=ograd.dtype)
            else:
                out.fill(0)
            out[positions(index)] = ograd.reshape(kept)   # one position per row: no repeats
            return out
        return backward_pick

    def infer_shape(attrs, ograd, index, data):
        if data is not None:
            ograd = merge_shape(ograd, _pick_shapes(attrs, data)[0], 'ograd')
            index = _pick_index_shape(attrs, data, index)
        return [ograd, index, data], [data]

    infer_type = _gradient_type

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.pick(ograds[0], inputs[1], axis=attrs.axis, keepdims=attrs.keepdims,
                       mode=attrs.mode), None, None]


# -------------------------------------------------------------------------------------------------
# one_hot, where
# -------------------------------------------------------------------------------------------------

def _one_hot_check(attrs):
    if attrs.depth < 0:
        raise ValueError(f'depth must be a non-negative integer, got {attrs.depth}')
    _check_dtype(attrs.dtype, _VALUE_DTYPES)


@register('one_hot')
class one_hot:
    """``on_value`` where the last axis equals the index, ``off_value`` elsewhere.

    ``indices`` (any shape and dtype, truncated) -> ``indices.shape + (depth,)`` in ``dtype``.
    An index outside ``[0, depth)`` gives a row of ``off_value``. Not differentiable.
    """
    inputs = ('indices',)
    attrs = dict(depth=Int(high=INT32_MAX), on_value=Float(1.0), off_value=Float(0.0),
                 dtype=DType(DEFAULT_DTYPE))
    check = _one_hot_check

    def compute(xp, attrs, indices):
        dtype = attrs.dtype
        hit = _int_index(indices)[..., None] == xp.arange(attrs.depth)
        on = xp.asarray(_cast_scalar(attrs.on_value, dtype))
        off = xp.asarray(_cast_scalar(attrs.off_value, dtype))
        return xp.where(hit, on, off).astype(dtype, copy=False)

    def infer_shape(attrs, indices):
        if indices is None:
            return [None], [None]
        return [indices], [tuple(indices) + (attrs.depth,)]

    def infer_type(attrs, indices):
        return [indices], [attrs.dtype]

    gradient = zero_gradient


def _where_condition(xp, condition, x):
    """The condition as booleans broadcastable against ``x`` (a 1-D one selects rows)."""
    cond = condition != 0
    if cond.shape != x.shape:
        cond = cond.reshape(cond.shape + (1,) * (x.ndim - 1))
    return cond


@register('where')
class where:
    """``x`` where ``condition`` is non-zero, else ``y``.

    ``x``, ``y`` (d0, ..., dn) of one dtype; ``condition`` (any dtype) of the same shape, or
    (d0,) to choose whole rows -> (d0, ..., dn). The gradient goes to ``x`` where the condition
    holds and to ``y`` elsewhere; none to the condition.
    """
    inputs = ('condition', 'x', 'y')
    backward_node = BackwardNode(('ograd0', 'in0'), grads=(1, 2))

    def compute(xp, attrs, condition, x, y):
        return xp.where(_where_condition(xp, condition, x), x, y)

    def infer_shape(attrs, condition, x, y):
        shape = merge_shape(x, y, 'x and y must have the same shape')
        if condition is not None:
            if shape is None:
                if len(condition) > 1:       # only a 1-D condition may differ from x
                    shape = tuple(condition)
            elif len(condition) == len(shape):
                shape = merge_shape(shape, condition, 'condition')
                condition = shape
            elif len(condition) == 1:
                condition = merge_shape(condition, shape[:1], 'condition (one per row of x)')
                shape = tuple(condition) + tuple(shape[1:])
            else:
                raise ShapeError(f'condition {tuple(condition)} must have the shape of x '
                                 f'{tuple(shape)} or be 1-D with its first dimension')
        elif shape is not None and len(shape) == 1:
            condition = shape
        return [condition, shape, shape], [shape]

    def infer_type(attrs, condition, x, y):
        if x is not None and y is not None and x != y:
            raise DTypeError(f'x and y must have the same dtype, got {np.dtype(x).name} and '
                             f'{np.dtype(y).name}')
        dtype = x if x is not None else y
        return [condition, dtype, dtype], [dtype]

    def gradient(F, attrs, inputs, outputs, ograds):
        condition = inputs[0]
        g = ograds[0]
        zeros = F.zeros_like(g)
        return [None, F.where(condition, g, zeros), F.where(condition, zeros, g)]


# -------------------------------------------------------------------------------------------------
# gather_nd, scatter_nd, _backward_gather_nd, _scatter_set_nd
# -------------------------------------------------------------------------------------------------

def _nd_index(xp, indices, shape, op):
    """The index tuple of ``indices`` (M, ...) into ``shape``; MXNetError when out of range."""
    m = indices.shape[0]
    flat = indices.reshape(m, -1)
    if flat.size:
        low, high = flat.min(axis=1).tolist(), flat.max(axis=1).tolist()
        for axis in range(m):
            size = shape[axis]
            for value in (high[axis], low[axis]):
                if not -size <= value <= size - 1:
                    raise MXNetError(f'{op}: IndexError: index {value} is out of bounds for '
                                     f'axis {axis} with size {size}')
    idx = _int_index(indices)
    return tuple(idx[axis] for axis in range(m))


def _nd_indices_rank(indices, what):
    if indices is not None and len(indices) < 2:
        raise ShapeError(f'{what} requires the indices to have at least 2 axes (M, ...), '
                         f'got {tuple(indices)}')


def _scattered_shape(indices, shape, what):
    """The shape of the values that ``indices`` (M, Y...) put into ``shape``: Y... + shape[M:].
    None while M is unknown."""
    _nd_indices_rank(indices, what)
    if indices is None or not indices[0]:
        return None
    m = indices[0]
    if m > len(shape):
        raise ShapeError(f'{what}: {m} indices per element exceed the {len(shape)} axes of '
                         f'{tuple(shape)}')
    return tuple(indices[1:]) + tuple(shape[m:])


@register('gather_nd')
class gather_nd:
    """Elements or slices of ``data`` at the coordinates in ``indices``.

    ``data`` (X0, ..., X(n-1)), ``indices`` (M, Y0, ..., Y(k-1)) with M <= n (any dtype) ->
    (Y0, ..., Y(k-1), XM, ..., X(n-1)):
    ``out[y..., x...] = data[indices[0, y...], ..., indices[M-1, y...], x...]``.
    Indices may be negative (from the end); outside ``[-Xi, Xi-1]`` they raise. The gradient
    sums back into ``data``'s shape (``_backward_gather_nd``).
    """
    inputs = ('data', 'indices')
    backward_node = BackwardNode(('ograd0', 'in1'), ('data', 'indices'), grads=(0,))

    def compute(xp, attrs, data, indices):
        return data[_nd_index(xp, indices, data.shape, 'gather_nd')]

    def infer_shape(attrs, data, indices):
        _nd_indices_rank(indices, 'gather_nd')
        if data is None or indices is None or not indices[0]:
            return [data, indices], [None]
        return [data, indices], [_scattered_shape(indices, data, 'gather_nd')]

    infer_type = _data_type

    def gradient(F, attrs, inputs, outputs, ograds):
        data, indices = inputs
        return [F._backward_gather_nd(ograds[0], indices, shape=data.shape), None]


def _scatter_infer_shape(attrs, data, indices, what):
    data = merge_shape(data, _scattered_shape(indices, attrs.shape, what), 'data')
    return [data, indices], [tuple(attrs.shape)]


def _scatter_gradient(F, attrs, inputs, outputs, ograds):
    return [F.gather_nd(ograds[0], inputs[1]), None]


@register('scatter_nd')
class scatter_nd:
    """Zeros of ``shape`` with ``data`` written at the coordinates in ``indices``.

    ``data`` (Y0, ..., Y(k-1), XM, ..., X(n-1)), ``indices`` (M, Y0, ..., Y(k-1)) ->
    ``shape`` = (X0, ..., X(n-1)); the inverse of ``gather_nd``. Where coordinates repeat,
    one of the values is kept (MXNet leaves which undefined). The gradient is ``gather_nd``.
    """
    inputs = ('data', 'indices')
    attrs = dict(shape=Shape())

    def compute(xp, attrs, data, indices):
        out = xp.zeros(attrs.shape, dtype=data.dtype)
        out[_nd_index(xp, indices, attrs.shape, 'scatter_nd')] = data
        return out

    def infer_shape(attrs, data, indices):
        return _scatter_infer_shape(attrs, data, indices, 'scatter_nd')

    infer_type = _data_type
    gradient = _scatter_gradient


@register('_backward_gather_nd')
class _backward_gather_nd:
    """The gradient of ``gather_nd``: ``scatter_nd`` that sums the values of repeated
    coordinates.

    ``data`` (Y..., XM, ..., X(n-1)), ``indices`` (M, Y...) -> ``shape`` = (X0, ..., X(n-1)).
    """
    inputs = ('data', 'indices')
    attrs = dict(shape=Shape())

    def compute(xp, attrs, data, indices):
        out = xp.zeros(attrs.shape, dtype=data.dtype)
        _scatter_add(xp, out, _nd_index(xp, indices, attrs.shape, '_backward_gather_nd'), data)
        return out

    def infer_shape(attrs, data, indices):
        return _scatter_infer_shape(attrs, data, indices, '_backward_gather_nd')

    infer_type = _data_type
    gradient = _scatter_gradient


@register('_scatter_set_nd')
class _scatter_set_nd:
    """A copy of ``lhs`` with ``rhs`` written at the coordinates in ``indices``.

    ``lhs`` ``shape`` = (X0, ..., X(n-1)), ``rhs`` (Y..., XM, ..., X(n-1)), ``indices``
    (M, Y...) -> ``shape``. (MXNet runs it only in place, for ``x[idx] = v``, and has no
    gradient; here it is a function whose gradient is ``ograd`` with the written positions
    zeroed for ``lhs`` and ``gather_nd(ograd)`` for ``rhs``, exact for distinct coordinates.)
    """
    inputs = ('lhs', 'rhs', 'indices')
    attrs = dict(shape=Shape())

    def compute(xp, attrs, lhs, rhs, indices):
        out = lhs.copy()
        out[_nd_index(xp, indices, lhs.shape, '_scatter_set_nd')] = rhs
        return out

    def infer_shape(attrs, lhs, rhs, indices):
        out = merge_shape(lhs, tuple(attrs.shape), 'lhs (the shape attribute)')
        rhs = merge_shape(rhs, _scattered_shape(indices, out, '_scatter_set_nd'), 'rhs')
        return [out, rhs, indices], [out]

    def infer_type(attrs, lhs, rhs, indices):
        if lhs is not None and rhs is not None and lhs != rhs:
            raise DTypeError(f'lhs and rhs must have the same dtype, got {np.dtype(lhs).name} '
                             f'and {np.dtype(rhs).name}')
        dtype = lhs if lhs is not None else rhs
        return [dtype, dtype, indices], [dtype]

    def gradient(F, attrs, inputs, outputs, ograds):
        _, rhs, indices = inputs
        g = ograds[0]
        return [F._scatter_set_nd(g, F.zeros_like(rhs), indices, shape=attrs.shape),
                F.gather_nd(g, indices), None]
