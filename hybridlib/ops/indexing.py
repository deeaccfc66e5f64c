"""Indexing, gathering, sorting and sequences: take, batch_take, pick, one_hot, where,
gather_nd/scatter_nd/_scatter_set_nd, topk/sort/argsort, SequenceMask/Last/Reverse, Embedding.

Gathers differentiate into scatter-adds, which are operators of this family named after
MXNet's backward nodes (``_backward_take``, ``_backward_pick``, ``_backward_Embedding``,
``_backward_gather_nd``, ``_backward_topk``, ``_backward_SequenceLast``); the gradient of each
scatter is the gather again, so derivatives of any order stay here. ``_take_along_axis`` (no
MXNet counterpart) is the gather that differentiates ``_backward_topk``.

MXNet's conventions reproduced here (checked against MXNet 1.9.1):

* Index inputs may be of any dtype; float indices are truncated toward zero (``1.7 -> 1``,
  ``-0.5 -> 0``) before ``mode`` applies. ``mode='clip'`` clips to ``[0, n-1]`` (so ``-1`` is
  0), ``mode='wrap'`` takes the index modulo ``n`` (``-1`` is ``n-1``), ``mode='raise'`` fails
  on any index outside ``[0, n-1]``.
* ``one_hot`` gives a row of ``off_value`` for an index outside ``[0, depth)``.
* ``gather_nd``/``scatter_nd`` accept indices in ``[-n, n-1]`` and fail on others.
* ``topk``/``argsort`` return indices as float32 unless ``dtype`` says otherwise; ``topk``'s
  ``mask`` has the data's dtype. Sorting is stable in both directions (ties keep their order).
* ``SequenceLast``/``SequenceReverse`` clip lengths into range where MXNet reads out of bounds.
"""
import numpy as np

from ..base import MXNetError, NotSupportedError, ShapeError, DTypeError, DEFAULT_DTYPE
from .attrs import Bool, DType, Float, Int, Shape, Str
from .registry import merge_shape, normalize_axis, register, zero_gradient

__all__ = []


class _IntOrNone(Int):
    """MXNet's ``int or None`` with a non-None default (``topk(axis=-1)``, ``axis=None`` too)."""
    type_name = 'int or None'

    @property
    def optional(self):
        return True


_INDEX_DTYPES = ('float16', 'float32', 'float64', 'int32', 'int64', 'uint8')
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
    return xp.clip(idx, 0, n - 1)


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


def _sort_order(xp, x, axis, ascend):
    """Stable argsort along ``axis``; descending keeps ties in their original order too."""
    if ascend:
        return xp.argsort(x, axis=axis, kind='stable')
    # sort the reversed array ascending and reverse back: descending, ties in index order
    n = x.shape[axis]
    order = xp.argsort(xp.flip(x, axis), axis=axis, kind='stable')
    return (n - 1) - xp.flip(order, axis)


def _cast_scalar(value, dtype):
    """A Python number as MXNet casts it to ``dtype`` (integers truncate, then wrap)."""
    if dtype.kind in 'iub':
        return np.asarray(int(value)).astype(dtype)
    return np.asarray(value).astype(dtype)


def _keep(result, like):
    return result.astype(like.dtype, copy=False)


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
    attrs = _PICK_ATTRS

    def compute(xp, attrs, data, index):
        out_shape, kept, _, ax = _pick_shapes(attrs, data.shape)
        idx = _fix_index(xp, index, data.shape[ax], attrs.mode, 'pick').reshape(kept)
        return xp.take_along_axis(data, idx, axis=ax).reshape(out_shape)

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

    def compute(xp, attrs, ograd, index, data):
        _, kept, _, ax = _pick_shapes(attrs, data.shape)
        idx = _fix_index(xp, index, data.shape[ax], attrs.mode, 'pick').reshape(kept)
        out = xp.zeros(data.shape, dtype=ograd.dtype)
        out[_axis_grid(xp, idx, ax)] = ograd.reshape(kept)   # one position per row: no repeats
        return out

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
    attrs = dict(depth=Int(), on_value=Float(1.0), off_value=Float(0.0),
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


# -------------------------------------------------------------------------------------------------
# topk, sort, argsort
# -------------------------------------------------------------------------------------------------

def _sort_view(data_shape, axis):
    """(shape sorted along, axis) for ``axis`` (None sorts the flattened array)."""
    if axis is None:
        return (_prod(data_shape) if 0 not in data_shape else 0,), 0
    return tuple(data_shape), normalize_axis(axis, len(data_shape))


def _topk_k(attrs, n):
    """k, with k <= 0 meaning the whole axis, as MXNet; 0 while n is unknown."""
    if attrs.k <= 0:
        return n
    if n and attrs.k > n:
        raise ShapeError(f'topk: k must not exceed the axis size {n}, got k={attrs.k}')
    return attrs.k


def _topk_outputs(attrs):
    return 1 if attrs.ret_typ in ('indices', 'mask') else 2


_TOPK_ATTRS = dict(axis=_IntOrNone(-1), k=Int(1),
                   ret_typ=Str('indices', choices=('both', 'indices', 'mask', 'value')),
                   is_ascend=Bool(False), dtype=DType(DEFAULT_DTYPE))
_HIDDEN_INDEX = np.dtype(np.int64)       # dtype of the hidden indices of sort and topk 'value'


def _topk_check(attrs):
    _check_dtype(attrs.dtype, _INDEX_DTYPES)


@register('topk')
class topk:
    """The k largest (``is_ascend``: smallest) elements along ``axis``.

    ``data`` (d0, ..., dn) -> with ``axis``'s size k (``axis=None``: (k,) of the flattened
    array; k <= 0 means all). ``ret_typ``: 'indices' (default; in ``dtype``, float32 by
    default), 'value', 'both' (values, indices) or 'mask' (data's shape and dtype, 1 at the
    selected positions). Ties keep their order. The gradient of the values flows back to the
    selected positions; indices and mask have none. 'value' also computes the indices as a
    hidden output, as MXNet.
    """
    inputs = ('data',)
    attrs = _TOPK_ATTRS
    check = _topk_check
    num_outputs = _topk_outputs

    def num_visible_outputs(attrs):
        return 2 if attrs.ret_typ == 'both' else 1

    def output_names(attrs):
        # MXNet numbers the outputs whenever there are two, even if one is hidden
        return ['output'] if _topk_outputs(attrs) == 1 else ['output0', 'output1']

    def compute(xp, attrs, data):
        shape, ax = _sort_view(data.shape, attrs.axis)
        x = data.reshape(shape)
        k = _topk_k(attrs, shape[ax])
        order = _sort_order(xp, x, ax, attrs.is_ascend)
        idx = order[(slice(None),) * ax + (slice(0, k),)]
        if attrs.ret_typ == 'mask':
            mask = xp.zeros(shape, dtype=data.dtype)
            mask[_axis_grid(xp, idx, ax)] = 1
            return mask.reshape(data.shape)
        if attrs.ret_typ == 'indices':
            return idx.astype(attrs.dtype)
        values = xp.take_along_axis(x, idx, axis=ax)
        if attrs.ret_typ == 'both':
            return values, idx.astype(attrs.dtype)
        return values, idx.astype(_HIDDEN_INDEX, copy=False)

    def infer_shape(attrs, data):
        n_out = _topk_outputs(attrs)
        if data is None:
            return [None], [None] * n_out
        if attrs.ret_typ == 'mask':
            _sort_view(data, attrs.axis)
            return [data], [data]
        shape, ax = _sort_view(data, attrs.axis)
        out = tuple(_topk_k(attrs, d) if i == ax else d for i, d in enumerate(shape))
        return [data], [out] * n_out

    def infer_type(attrs, data):
        outputs = {'indices': [attrs.dtype], 'mask': [data], 'both': [data, attrs.dtype],
                   'value': [data, _HIDDEN_INDEX]}
        return [data], outputs[attrs.ret_typ]

    def gradient(F, attrs, inputs, outputs, ograds):
        if attrs.ret_typ not in ('value', 'both') or ograds[0] is None:
            return [None]
        return [F._backward_topk(ograds[0], outputs[1], inputs[0], axis=attrs.axis)]


@register('_backward_topk')
class _backward_topk:
    """The gradient of ``topk`` and ``sort``: ``ograd`` placed at ``indices`` along ``axis``
    in zeros of ``data``'s shape (summed where indices repeat).

    ``ograd`` and ``indices`` (d0, ..., k, ..., dn) (1-D into the flattened ``data`` when
    ``axis`` is None), ``data`` (only its shape is read) -> ``data``'s shape, ``ograd``'s dtype.
    """
    inputs = ('ograd', 'indices', 'data')
    attrs = _TOPK_ATTRS
    check = _topk_check

    def compute(xp, attrs, ograd, indices, data):
        shape, ax = _sort_view(data.shape, attrs.axis)
        out = xp.zeros(shape, dtype=ograd.dtype)
        _scatter_add(xp, out, _axis_grid(xp, _int_index(indices), ax), ograd)
        return out.reshape(data.shape)

    def infer_shape(attrs, ograd, indices, data):
        ograd = merge_shape(ograd, indices, 'ograd and indices')
        return [ograd, ograd, data], [data]

    infer_type = _gradient_type

    def gradient(F, attrs, inputs, outputs, ograds):
        _, indices, data = inputs
        return [F._take_along_axis(ograds[0], indices, axis=attrs.axis), None, None]


@register('_take_along_axis')
class _take_along_axis:
    """``data`` gathered along ``axis`` at ``indices`` (numpy's ``take_along_axis``): the
    gradient of ``_backward_topk``. No MXNet counterpart.

    ``data`` (d0, ..., dn), ``indices`` (d0, ..., k, ..., dn) (any 1-D shape into the flattened
    ``data`` when ``axis`` is None) -> ``indices.shape``, ``data``'s dtype.
    """
    inputs = ('data', 'indices')
    attrs = dict(axis=_IntOrNone(-1))

    def compute(xp, attrs, data, indices):
        shape, ax = _sort_view(data.shape, attrs.axis)
        return xp.take_along_axis(data.reshape(shape), _int_index(indices), axis=ax)

    def infer_shape(attrs, data, indices):
        if data is not None and indices is not None:
            shape, ax = _sort_view(data, attrs.axis)
            if len(indices) != len(shape):
                raise ShapeError(f'_take_along_axis: indices {tuple(indices)} must have the '
                                 f'rank of {shape}')
            for i, (d, k) in enumerate(zip(shape, indices)):
                if i != ax and d and k and d != k:
                    raise ShapeError(f'_take_along_axis: indices {tuple(indices)} and data '
                                     f'{shape} differ off axis {ax}')
        return [data, indices], [indices]

    infer_type = _data_type

    def gradient(F, attrs, inputs, outputs, ograds):
        data, indices = inputs
        return [F._backward_topk(ograds[0], indices, data, axis=attrs.axis), None]


@register('sort')
class sort:
    """``data`` sorted along ``axis`` (``axis=None``: the flattened array), ascending unless
    ``is_ascend=False``; stable. ``data`` (d0, ..., dn) -> the same shape ((size,) for None).
    The sorting indices are a hidden second output, as in MXNet; the gradient goes back
    through them.
    """
    inputs = ('data',)
    attrs = dict(axis=_IntOrNone(-1), is_ascend=Bool(True))
    num_outputs = 2
    num_visible_outputs = 1

    def output_names(attrs):
        return ['output0', 'output1']

    def compute(xp, attrs, data):
        shape, ax = _sort_view(data.shape, attrs.axis)
        x = data.reshape(shape)
        order = _sort_order(xp, x, ax, attrs.is_ascend)
        return xp.take_along_axis(x, order, axis=ax), order.astype(_HIDDEN_INDEX, copy=False)

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None, None]
        shape = _sort_view(data, attrs.axis)[0]
        return [data], [shape, shape]

    def infer_type(attrs, data):
        return [data], [data, _HIDDEN_INDEX]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_topk(ograds[0], outputs[1], inputs[0], axis=attrs.axis, k=0,
                                 ret_typ='value', is_ascend=attrs.is_ascend)]


def _argsort_check(attrs):
    _check_dtype(attrs.dtype, _INDEX_DTYPES)


@register('argsort')
class argsort:
    """The indices that sort ``data`` along ``axis`` (``axis=None``: the flattened array),
    stable, in ``dtype`` (float32 by default). ``data`` (d0, ..., dn) -> the same shape
    ((size,) for None). Not differentiable.
    """
    inputs = ('data',)
    attrs = dict(axis=_IntOrNone(-1), is_ascend=Bool(True), dtype=DType(DEFAULT_DTYPE))
    check = _argsort_check

    def compute(xp, attrs, data):
        shape, ax = _sort_view(data.shape, attrs.axis)
        return _sort_order(xp, data.reshape(shape), ax, attrs.is_ascend).astype(attrs.dtype)

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        return [data], [_sort_view(data, attrs.axis)[0]]

    def infer_type(attrs, data):
        return [data], [attrs.dtype]

    gradient = zero_gradient


# -------------------------------------------------------------------------------------------------
# SequenceMask, SequenceLast, SequenceReverse
# -------------------------------------------------------------------------------------------------

def _sequence_inputs(attrs):
    return ('data', 'sequence_length') if attrs.use_sequence_length else ('data',)


def _sequence_check(attrs):
    if attrs.axis not in (0, 1):
        raise ValueError(f'axis must be 0 (time-major) or 1 (batch-major), got {attrs.axis}')


def _sequence_shapes(attrs, data, sequence_length=None):
    """(data, sequence_length) with each other's knowledge; ShapeError for a rank < 2."""
    if data is None:
        return None, sequence_length
    if len(data) < 2:
        raise ShapeError(f'the data must have at least 2 axes (time and batch), got {data}')
    batch = data[1 - attrs.axis]
    if attrs.use_sequence_length:
        sequence_length = merge_shape(sequence_length, (batch,), 'sequence_length')
        data = tuple(sequence_length[0] if i == 1 - attrs.axis else d
                     for i, d in enumerate(data))
    return data, sequence_length


def _sequence_infer_type(attrs, data, sequence_length=None):
    # MXNet gives an unknown sequence_length the data's dtype; a known one may be any dtype
    if attrs.use_sequence_length:
        return [data, sequence_length if sequence_length is not None else data], [data]
    return [data], [data]


def _lengths(xp, sequence_length, low, high):
    """Integer lengths (truncated), clipped to ``[low, high]``."""
    return xp.clip(_int_index(sequence_length), low, high)


def _sequence_grads(attrs, gdata):
    return [gdata, None] if attrs.use_sequence_length else [gdata]


_SEQUENCE_ATTRS = dict(use_sequence_length=Bool(False), axis=Int(0))


@register('SequenceMask')
class SequenceMask:
    """Set the steps of each sequence at or past its length to ``value``.

    ``data`` (T, B, ...) for ``axis=0`` or (B, T, ...) for ``axis=1``; ``sequence_length``
    (B,) (any dtype, truncated), an input only when ``use_sequence_length`` (without it the
    data passes unchanged) -> ``data``'s shape. The gradient is masked the same way (to 0).
    """
    inputs = ('data', 'sequence_length')
    list_inputs = _sequence_inputs
    attrs = dict(use_sequence_length=Bool(False), value=Float(0.0), axis=Int(0))
    check = _sequence_check

    def compute(xp, attrs, data, sequence_length=None):
        if not attrs.use_sequence_length:
            return data.copy()
        steps = data.shape[attrs.axis]
        lengths = _int_index(sequence_length)
        t = xp.arange(steps)
        keep = t[:, None] < lengths[None, :] if attrs.axis == 0 else t[None, :] < lengths[:, None]
        keep = keep.reshape(keep.shape + (1,) * (data.ndim - 2))
        value = xp.asarray(_cast_scalar(attrs.value, data.dtype))
        return _keep(xp.where(keep, data, value), data)

    def infer_shape(attrs, data, sequence_length=None):
        data, sequence_length = _sequence_shapes(attrs, data, sequence_length)
        ins = [data, sequence_length] if attrs.use_sequence_length else [data]
        return ins, [data]

    infer_type = _sequence_infer_type

    def gradient(F, attrs, inputs, outputs, ograds):
        if not attrs.use_sequence_length:
            return [ograds[0]]
        g = F.SequenceMask(ograds[0], inputs[1], use_sequence_length=True, value=0,
                           axis=attrs.axis)
        return [g, None]


def _last_positions(xp, attrs, data, sequence_length):
    """The index tuple of the last valid step of every sequence of ``data``."""
    steps, batch = data.shape[attrs.axis], data.shape[1 - attrs.axis]
    if attrs.use_sequence_length:
        t = _lengths(xp, sequence_length, 1, steps) - 1
    else:
        t = xp.full((batch,), steps - 1, dtype=np.int64)
    b = xp.arange(batch)
    return (t, b) if attrs.axis == 0 else (b, t)


def _last_shape(attrs, data):
    return None if data is None else tuple(d for i, d in enumerate(data) if i != attrs.axis)


@register('SequenceLast')
class SequenceLast:
    """The last valid step of each sequence.

    ``data`` (T, B, ...) for ``axis=0`` or (B, T, ...) for ``axis=1``; ``sequence_length``
    (B,) (any dtype, truncated; clipped to [1, T] where MXNet reads out of bounds), an input
    only when ``use_sequence_length`` (else step T-1) -> (B, ...).
    """
    inputs = ('data', 'sequence_length')
    list_inputs = _sequence_inputs
    attrs = _SEQUENCE_ATTRS
    check = _sequence_check

    def compute(xp, attrs, data, sequence_length=None):
        return data[_last_positions(xp, attrs, data, sequence_length)]

    def infer_shape(attrs, data, sequence_length=None):
        data, sequence_length = _sequence_shapes(attrs, data, sequence_length)
        ins = [data, sequence_length] if attrs.use_sequence_length else [data]
        return ins, [_last_shape(attrs, data)]

    infer_type = _sequence_infer_type

    def gradient(F, attrs, inputs, outputs, ograds):
        g = F._backward_SequenceLast(ograds[0], *inputs, axis=attrs.axis,
                                     use_sequence_length=attrs.use_sequence_length)
        return _sequence_grads(attrs, g)


def _backward_last_inputs(attrs):
    if attrs.use_sequence_length:
        return ('ograd', 'data', 'sequence_length')
    return ('ograd', 'data')


@register('_backward_SequenceLast')
class _backward_SequenceLast:
    """The gradient of ``SequenceLast``: ``ograd`` placed at the last valid steps of zeros.

    ``ograd`` (B, ...), ``data`` (only its shape is read), ``sequence_length`` (B,) only when
    ``use_sequence_length`` -> ``data``'s shape, in ``ograd``'s dtype.
    """
    inputs = ('ograd', 'data', 'sequence_length')
    list_inputs = _backward_last_inputs
    attrs = _SEQUENCE_ATTRS
    check = _sequence_check

    def compute(xp, attrs, ograd, data, sequence_length=None):
        out = xp.zeros(data.shape, dtype=ograd.dtype)
        out[_last_positions(xp, attrs, data, sequence_length)] = ograd
        return out

    def infer_shape(attrs, ograd, data, sequence_length=None):
        data, sequence_length = _sequence_shapes(attrs, data, sequence_length)
        ograd = merge_shape(ograd, _last_shape(attrs, data), 'ograd')
        if attrs.use_sequence_length:
            return [ograd, data, sequence_length], [data]
        return [ograd, data], [data]

    def infer_type(attrs, ograd, *rest):
        return [ograd, *rest], [ograd]

    def gradient(F, attrs, inputs, outputs, ograds):
        if attrs.use_sequence_length:
            g = F.SequenceLast(ograds[0], inputs[2], use_sequence_length=True, axis=attrs.axis)
            return [g, None, None]
        return [F.SequenceLast(ograds[0], axis=attrs.axis), None]


def _reverse_check(attrs):
    if attrs.axis != 0:
        raise ValueError(f'axis must be 0 (time-major), got {attrs.axis}')


@register('SequenceReverse')
class SequenceReverse:
    """Reverse the first ``sequence_length`` steps of each sequence (all T without lengths).

    ``data`` (T, B, ...), ``sequence_length`` (B,) (any dtype, truncated; clipped to [0, T]
    where MXNet reads out of bounds), an input only when ``use_sequence_length`` ->
    ``data``'s shape; steps past a length stay in place. Only ``axis=0``, as MXNet.
    """
    inputs = ('data', 'sequence_length')
    list_inputs = _sequence_inputs
    attrs = _SEQUENCE_ATTRS
    check = _reverse_check

    def compute(xp, attrs, data, sequence_length=None):
        if not attrs.use_sequence_length:
            return xp.flip(data, 0).copy()
        steps, batch = data.shape[0], data.shape[1]
        lengths = _lengths(xp, sequence_length, 0, steps)[None, :]
        t = xp.arange(steps)[:, None]
        source = xp.where(t < lengths, lengths - 1 - t, t)
        return data[source, xp.arange(batch)[None, :]]

    def infer_shape(attrs, data, sequence_length=None):
        data, sequence_length = _sequence_shapes(attrs, data, sequence_length)
        ins = [data, sequence_length] if attrs.use_sequence_length else [data]
        return ins, [data]

    infer_type = _sequence_infer_type

    def gradient(F, attrs, inputs, outputs, ograds):
        # the permutation is its own inverse (and transpose)
        if attrs.use_sequence_length:
            return [F.SequenceReverse(ograds[0], inputs[1], use_sequence_length=True), None]
        return [F.SequenceReverse(ograds[0])]


# -------------------------------------------------------------------------------------------------
# Embedding
# -------------------------------------------------------------------------------------------------

def _embedding_check(attrs):
    if attrs.input_dim <= 0 or attrs.output_dim <= 0:
        raise ValueError(f'input_dim and output_dim must be positive, got {attrs.input_dim} '
                         f'and {attrs.output_dim}')
    _check_dtype(attrs.dtype, _VALUE_DTYPES)


_EMBEDDING_ATTRS = dict(input_dim=Int(), output_dim=Int(), dtype=DType(DEFAULT_DTYPE),
                        sparse_grad=Bool(False))


def _embedding_rows(xp, attrs, data):
    return xp.clip(_int_index(data), 0, attrs.input_dim - 1)


@register('Embedding')
class Embedding:
    """Rows of ``weight`` at the indices in ``data``.

    ``data`` (any shape and dtype, truncated and clipped to [0, input_dim-1]), ``weight``
    (input_dim, output_dim) -> ``data.shape + (output_dim,)`` in ``weight``'s dtype (``dtype``
    when unknown). The weight's gradient sums rows (``_backward_Embedding``); ``data`` gets
    none, as in MXNet. ``sparse_grad`` is accepted; the gradient is always dense.
    """
    inputs = ('data', 'weight')
    attrs = _EMBEDDING_ATTRS
    check = _embedding_check

    def compute(xp, attrs, data, weight):
        return xp.take(weight, _embedding_rows(xp, attrs, data), axis=0)

    def infer_shape(attrs, data, weight):
        weight = merge_shape(weight, (attrs.input_dim, attrs.output_dim), 'weight')
        out = None if data is None else tuple(data) + (attrs.output_dim,)
        return [data, weight], [out]

    def infer_type(attrs, data, weight):
        weight = weight if weight is not None else attrs.dtype
        return [data, weight], [weight]

    def gradient(F, attrs, inputs, outputs, ograds):
        data = inputs[0]
        return [None, F._backward_Embedding(ograds[0], data, input_dim=attrs.input_dim,
                                            output_dim=attrs.output_dim, dtype=attrs.dtype,
                                            sparse_grad=attrs.sparse_grad)]


@register('_backward_Embedding')
class _backward_Embedding:
    """The weight gradient of ``Embedding``: the rows of ``ograd`` summed by index.

    ``ograd`` (``data.shape + (output_dim,)``), ``data`` (the indices) ->
    (input_dim, output_dim) in ``ograd``'s dtype.
    """
    inputs = ('ograd', 'data')
    attrs = _EMBEDDING_ATTRS
    check = _embedding_check

    def compute(xp, attrs, ograd, data):
        out = xp.zeros((attrs.input_dim, attrs.output_dim), dtype=ograd.dtype)
        rows = _embedding_rows(xp, attrs, data).reshape(-1)
        _scatter_add(xp, out, rows, ograd.reshape(rows.size, attrs.output_dim))
        return out

    def infer_shape(attrs, ograd, data):
        if data is not None:
            ograd = merge_shape(ograd, tuple(data) + (attrs.output_dim,), 'ograd')
        return [ograd, data], [(attrs.input_dim, attrs.output_dim)]

    infer_type = _gradient_type

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.Embedding(inputs[1], ograds[0], input_dim=attrs.input_dim,
                            output_dim=attrs.output_dim, dtype=attrs.dtype,
                            sparse_grad=attrs.sparse_grad), None]
