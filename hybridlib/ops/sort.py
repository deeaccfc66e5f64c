"""Sorting: topk, sort, argsort, with their gradient ``_backward_topk`` (a scatter-add along
the axis) and ``_take_along_axis`` (no MXNet counterpart), the gather that differentiates
``_backward_topk``.

MXNet's conventions reproduced here (checked against MXNet 1.9.1):

* ``topk``/``argsort`` return indices as float32 unless ``dtype`` says otherwise; ``topk``'s
  ``mask`` has the data's dtype.
* ``sort`` and ``topk(ret_typ='value')`` compute the indices as a hidden second output.
* The order is that of MXNet's CPU kernel (TopKSort): each row goes through libstdc++'s
  std::sort, or std::partial_sort when k * 8 <= n, comparing with ``<`` (``>`` descending).
  NaN compares false both ways, so rows holding NaN come out in whatever order those
  algorithms leave, and so do equal values in rows longer than 16 or partially sorted (a
  saturated detection heatmap has many 1.0s): such rows replay the algorithms step by step
  (``_std_sort_order``). Other rows sort stably, which is MXNet's order there (std::sort ends
  with an insertion sort, stable in rows of at most 16).
"""
import numpy as np

from ..base import ShapeError, DEFAULT_DTYPE
from .attrs import INT32_MAX, Bool, DType, Int, Str
from .gather import (_IntOrNone, _axis_grid, _check_dtype, _data_type, _gradient_type,
                     _int_index, _prod, _scatter_add)
from .registry import merge_shape, normalize_axis, register, zero_gradient

__all__ = []


_INDEX_DTYPES = ('float16', 'float32', 'float64', 'int32', 'int64', 'uint8')


def _sort_order(xp, x, axis, ascend, k=None):
    """The indices that sort ``x`` along ``axis`` as MXNet's CPU does (for ``k`` given, only
    the first k are MXNet's: the top k)."""
    n = x.shape[axis]
    if ascend:
        order = xp.argsort(x, axis=axis, kind='stable')
    else:
        # sort the reversed array ascending and reverse back: descending, ties in index order
        order = (n - 1) - xp.flip(xp.argsort(xp.flip(x, axis), axis=axis, kind='stable'), axis)
    if x.dtype.kind != 'f' or x.size == 0:
        return order
    rows = xp.moveaxis(x, axis, -1).reshape(-1, n)
    moved = xp.moveaxis(order, axis, -1)
    replay = xp.isnan(rows).any(axis=1)
    if n > _INSERTION_THRESHOLD or (k is not None and k * 8 <= n):
        # equal keys among those returned (or at the cut) come out in the algorithm's order
        cut = n if k is None else min(k + 1, n)
        ranked = xp.take_along_axis(rows, moved.reshape(-1, n)[:, :cut], axis=1)
        replay |= (ranked[:, 1:] == ranked[:, :-1]).any(axis=1)
    replay = xp.nonzero(replay)[0].tolist()
    if not replay:
        return order
    fixed = moved.reshape(-1, n).copy()
    for row in replay:
        fixed[row] = xp.asarray(_std_sort_order(rows[row].tolist(), ascend, k))
    return xp.moveaxis(fixed.reshape(moved.shape), -1, axis)


_INSERTION_THRESHOLD = 16                 # libstdc++'s _S_threshold


def _std_sort_order(keys, ascend, k=None):
    """The permutation of ``range(len(keys))`` that libstdc++ leaves sorting it by ``keys``
    with std::sort, or std::partial_sort of the first k when k * 8 <= n (MXNet's TopKSort),
    comparing keys with < (> descending): introsort (median-of-three quicksort down to
    16-entry runs, heapsort past 2 log2(n) levels) then an insertion sort, or a heap of the
    first k that the others pass through. Replayed step by step, NaN (false both ways) goes
    where those algorithms leave it. Their unguarded scans count on a strict weak order; here
    they stop at the ends of the row, where MXNet would read past it.
    """
    n = len(keys)
    a = list(range(n))
    if ascend:
        def less(i, j):
            return keys[i] < keys[j]
    else:
        def less(i, j):
            return keys[i] > keys[j]

    def push_heap(first, hole, top, value):
        parent = (hole - 1) // 2
        while hole > top and less(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def adjust_heap(first, hole, length, value):
        top, child = hole, hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if less(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        push_heap(first, hole, top, value)

    def pop_heap(first, last, result):
        value = a[result]
        a[result] = a[first]
        adjust_heap(first, 0, last - first, value)

    def partial_sort(first, middle, last):
        if middle - first > 1:                          # make_heap
            for parent in range((middle - first - 2) // 2, -1, -1):
                adjust_heap(first, parent, middle - first, a[first + parent])
        for i in range(middle, last):                   # heap_select
            if less(a[i], a[first]):
                pop_heap(first, middle, i)
        while middle - first > 1:                       # sort_heap
            middle -= 1
            pop_heap(first, middle, middle)

    def move_median_to_first(result, i, j, m):
        if less(a[i], a[j]):
            pick = j if less(a[j], a[m]) else m if less(a[i], a[m]) else i
        else:
            pick = i if less(a[i], a[m]) else m if less(a[j], a[m]) else j
        a[result], a[pick] = a[pick], a[result]

    def partition(first, last, pivot):
        lo, hi = first, last
        while True:
            while first < hi and less(a[first], a[pivot]):
                first += 1
            last -= 1
            while last > lo and less(a[pivot], a[last]):
                last -= 1
            if first >= last:
                return first
            a[first], a[last] = a[last], a[first]
            first += 1

    def introsort(first, last, depth):
        while last - first > _INSERTION_THRESHOLD:
            if depth == 0:
                partial_sort(first, last, last)
                return
            depth -= 1
            move_median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
            cut = partition(first + 1, last, first)
            introsort(cut, last, depth)
            last = cut

    def linear_insert(i):
        value = a[i]
        while i > 0 and less(value, a[i - 1]):
            a[i] = a[i - 1]
            i -= 1
        a[i] = value

    if k is not None and k * 8 <= n:
        partial_sort(0, k, n)
        return a
    if n > 1:
        introsort(0, n, 2 * (n.bit_length() - 1))
        for i in range(1, min(n, _INSERTION_THRESHOLD)):   # __insertion_sort
            if less(a[i], a[0]):
                a.insert(0, a.pop(i))
            else:
                linear_insert(i)
        for i in range(_INSERTION_THRESHOLD, n):           # __unguarded_insertion_sort
            linear_insert(i)
    return a


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


_TOPK_ATTRS = dict(axis=_IntOrNone(-1), k=Int(1, high=INT32_MAX),
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
    named_inputs = False
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
        order = _sort_order(xp, x, ax, attrs.is_ascend, k)
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
    named_inputs = False
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
    named_inputs = False
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
