"""Numeric helpers that fit no other family: ``khatri_rao``, ``cumsum`` (``_np_cumsum``),
``_histogram`` (with the Python function ``histogram`` around it), ``ravel_multi_index``,
``unravel_index`` and ``fill_element_0index``.

Index arithmetic follows MXNet's kernels: indices given as floats are truncated towards zero,
``unravel_index`` divides with C's truncating division (so -1 unravels to (0, -1) in a (7, 6)
shape), and ``fill_element_0index`` leaves rows alone whose index is out of range.

Where MXNet has no gradient (``khatri_rao``, ``fill_element_0index``), the gradient here is the
derivative of the forward; integer-valued outputs (histogram, indices) have none.
"""
import numpy as np

from ..base import DTypeError, ShapeError
from .attrs import DType, FloatTuple, Int, Shape
from .frontend import PYTHON_FUNCTIONS
from .registry import merge_shape, normalize_axis, register, same_dtype, zero_gradient

__all__ = []


def _as_index(xp, x):
    """Indices from any dtype, floats truncated towards zero (C's conversion)."""
    return x.astype(np.int64) if x.dtype.kind != 'f' else xp.trunc(x).astype(np.int64)


# -------------------------------------------------------------------------------------------------
# khatri_rao
# -------------------------------------------------------------------------------------------------

@register('khatri_rao')
class khatri_rao:
    """Column-wise Khatri-Rao product of matrices A_i (M_i, N) -> (M_1 * ... * M_n, N): column
    k is the outer product of the k-th columns, the first matrix's index varying slowest."""
    variadic = 'num_args'
    attrs = dict(num_args=Int())

    def compute(xp, attrs, *args):
        out = args[0]
        for a in args[1:]:
            out = (out[:, None, :] * a[None, :, :]).reshape(-1, a.shape[1])
        return out.copy() if len(args) == 1 else out

    def infer_shape(attrs, *shapes):
        if len(shapes) != attrs.num_args:
            raise ShapeError(f'num_args={attrs.num_args} but {len(shapes)} inputs are given')
        cols = 0
        for i, s in enumerate(shapes):
            if s is not None:
                if len(s) != 2:
                    raise ShapeError(f'khatri_rao takes matrices, input {i} has shape {s}')
                if cols and s[1] and s[1] != cols:
                    raise ShapeError('the inputs of khatri_rao must have the same number of '
                                     f'columns, got {", ".join(str(t) for t in shapes)}')
                cols = cols or s[1]
        rows = 1
        for s in shapes:
            rows = 0 if s is None or not s[0] else rows * s[0]
        ins = [None if s is None else (s[0], cols) for s in shapes]
        return ins, [(rows, cols)]

    infer_type = same_dtype

    def gradient(F, attrs, inputs, outputs, ograds):
        # with the output's rows unfolded to (M_1, ..., M_n), input j's gradient is the sum of
        # ograd times the other factors over every axis but j and the columns
        n = len(inputs)
        if n == 1:
            return [ograds[0]]
        rows = [x.shape[0] for x in inputs]
        g = F.reshape(ograds[0], shape=tuple(rows) + (-1,))
        factors = [F.reshape(x, shape=(1,) * j + (rows[j],) + (1,) * (n - 1 - j) + (-1,))
                   for j, x in enumerate(inputs)]
        grads = []
        for j in range(n):
            prod = g
            for i, f in enumerate(factors):
                if i != j:
                    prod = F.broadcast_mul(prod, f)
            grads.append(F.sum(prod, axis=tuple(i for i in range(n) if i != j)))
        return grads


# -------------------------------------------------------------------------------------------------
# cumsum
# -------------------------------------------------------------------------------------------------

_CUMSUM_DTYPES = ('float16', 'float32', 'float64', 'int32', 'int64', 'int8')


def _check_cumsum(attrs):
    if attrs.dtype is not None and attrs.dtype.name not in _CUMSUM_DTYPES:
        raise ValueError(f'dtype={attrs.dtype.name!r} is not one of '
                         f'{", ".join(_CUMSUM_DTYPES)}')


@register('_np_cumsum', aliases=('cumsum',))
class _np_cumsum:
    """Cumulative sum along ``axis`` (of the flattened array when ``axis`` is None), in
    ``dtype`` (default: the input's dtype, integers included)."""
    inputs = ('a',)
    attrs = dict(axis=Int(None, 'axis of the sum; None flattens'),
                 dtype=DType(None, 'dtype of the result (default: the input\'s)'))
    check = _check_cumsum

    def compute(xp, attrs, a):
        dtype = attrs.dtype or a.dtype
        if attrs.axis is None:
            return xp.cumsum(a.reshape(-1), dtype=dtype)
        return xp.cumsum(a, axis=normalize_axis(attrs.axis, a.ndim), dtype=dtype)

    def infer_shape(attrs, a):
        if a is None:
            return [None], [None]
        if attrs.axis is None:
            return [a], [(0 if 0 in a else int(np.prod(a, dtype=np.int64)),)]
        normalize_axis(attrs.axis, len(a))
        return [a], [a]

    def infer_type(attrs, a):
        return [a], [attrs.dtype or a]

    def gradient(F, attrs, inputs, outputs, ograds):
        # each input adds to every later output: the reversed cumulative sum of the ograd
        a, g = inputs[0], ograds[0]
        axis = 0 if attrs.axis is None else normalize_axis(attrs.axis, a.ndim)
        grad = F.reverse(F._np_cumsum(F.reverse(g, axis=axis), axis=axis), axis=axis)
        if attrs.axis is None:
            grad = F.reshape_like(grad, a)
        if attrs.dtype is not None:
            grad = F.Cast(grad, dtype=a.dtype)
        return [grad]


# -------------------------------------------------------------------------------------------------
# histogram
# -------------------------------------------------------------------------------------------------

def _histogram_inputs(attrs):
    return ('data',) if attrs.bin_cnt is not None else ('data', 'bins')


def _check_histogram(attrs):
    if (attrs.bin_cnt is None) != (attrs.range is None):
        raise ValueError('bin_cnt and range must be given both or neither')
    if attrs.range is not None:
        if len(attrs.range) != 2:
            raise ValueError(f'range must have 2 elements, got {attrs.range}')
        if not attrs.range[0] <= attrs.range[1]:
            raise ValueError(f'the left side of range ({attrs.range[0]}) must not exceed the '
                             f'right side ({attrs.range[1]})')
    if attrs.bin_cnt is not None and attrs.bin_cnt < 1:
        raise ValueError(f'bin_cnt must be positive, got {attrs.bin_cnt}')


def _uniform_bins(xp, data, bin_cnt, low, high):
    """Edges and the bin of each value (-1 outside [low, high]) for ``bin_cnt`` equal bins:
    the index from the scaled value, corrected against the edges as MXNet (and numpy) do."""
    if low == high:
        low, high = low - 0.5, high + 0.5
    i = np.arange(bin_cnt + 1, dtype=np.float64)
    edges = xp.asarray(((high * i + (bin_cnt - i) * low) / bin_cnt).astype(data.dtype))
    x = data.astype(np.float64)
    inside = (x >= low) & (x <= high)
    scaled = xp.where(inside, (x - low) * bin_cnt / (high - low), 0.0)
    target = xp.minimum(scaled.astype(np.int64), bin_cnt - 1)
    target = target - (data < edges[target])
    target = target + ((data >= edges[target + 1]) & (target != bin_cnt - 1))
    return edges, xp.where(inside, target, -1)


def _given_bins(xp, data, bins):
    """The bin of each value (-1 outside) for explicit edges: the last edge closes its bin."""
    n = bins.shape[0] - 1
    target = xp.minimum(xp.searchsorted(bins, data, side='right') - 1, n - 1)
    inside = (data >= bins[0]) & (data <= bins[n])
    return xp.where(inside, target, -1)


@register('_histogram', aliases=('_npi_histogram',))
class _histogram:
    """Counts of the values of ``data`` (flattened) in bins: ``bin_cnt`` equal bins over
    ``range``, or the bins between consecutive edges of the 1-d input ``bins`` (the last one
    closed). Outputs the counts (int64) and the edges (in ``data``'s dtype); values outside
    the bins are not counted."""
    inputs = ('data', 'bins')
    list_inputs = _histogram_inputs
    attrs = dict(bin_cnt=Int(None, 'number of equal bins'),
                 range=FloatTuple(None, '(low, high) of the equal bins'))
    num_outputs = 2
    check = _check_histogram
    gradient = zero_gradient

    def compute(xp, attrs, data, bins=None):
        data = data.reshape(-1)
        if attrs.bin_cnt is not None:
            edges, target = _uniform_bins(xp, data, attrs.bin_cnt, *attrs.range)
        else:
            edges = bins.astype(data.dtype)         # a copy: the output owns its edges
            target = _given_bins(xp, data, edges)
        counts = xp.bincount(target[target >= 0], minlength=edges.shape[0] - 1)
        return counts.astype(np.int64), edges

    def infer_shape(attrs, data, bins=None):
        if attrs.bin_cnt is not None:
            return [data], [(attrs.bin_cnt,), (attrs.bin_cnt + 1,)]
        if bins is None:
            return [data, bins], [None, None]
        if len(bins) != 1:
            raise ShapeError(f'bins must be a 1-d array of edges, got shape {tuple(bins)}')
        if bins[0] and bins[0] < 2:
            raise ShapeError(f'bins must hold at least 2 edges, got {bins[0]}')
        return [data, bins], [(bins[0] - 1 if bins[0] else 0,), tuple(bins)]

    def infer_type(attrs, data, bins=None):
        ins = [data] if attrs.bin_cnt is not None else [data, bins]
        return ins, [np.dtype(np.int64), data]


def _histogram_function(ops):
    def histogram(a, bins=10, range=None, **kwargs):     # noqa: A002 (MXNet's name)
        """Histogram of the values of ``a`` (flattened).

        Parameters
        ----------
        a : NDArray or Symbol
            The values.
        bins : int or NDArray or Symbol
            The number of equal bins over ``range``, or the edges of the bins (1-d, the last
            bin closed).
        range : (float, float), optional
            Low and high end of the equal bins. Required for Symbols; for NDArrays it defaults
            to the smallest and largest value, and the result is then two float32 NDArrays, as
            numpy's histogram converted by MXNet.

        Returns
        -------
        (counts, edges)
            Counts per bin (int64) and the ``bins + 1`` edges.
        """
        if hasattr(bins, '_is_hybrid_value'):
            return ops._histogram(a, bins, **kwargs)
        if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
            if range is None:
                if hasattr(a, 'list_arguments'):        # a Symbol
                    raise ValueError('null range is not supported in symbol mode')
                if not np.issubdtype(a.dtype, np.floating):
                    a = a.astype(np.float64)
                low, high = a.min().asscalar(), a.max().asscalar()
                counts, edges = ops._histogram(a, bin_cnt=bins, range=(low, high), **kwargs)
                return counts.astype(np.float32), edges.astype(np.float32)
            return ops._histogram(a, bin_cnt=bins, range=range, **kwargs)
        raise ValueError('bins argument should be either an integer or an NDArray')
    return histogram


PYTHON_FUNCTIONS[('', 'histogram')] = _histogram_function


# -------------------------------------------------------------------------------------------------
# ravel_multi_index, unravel_index
# -------------------------------------------------------------------------------------------------

def _check_ravel_shape(attrs):
    if not attrs.shape:
        raise ValueError('the shape attribute must not be empty')


@register('_ravel_multi_index', aliases=('ravel_multi_index',))
class _ravel_multi_index:
    """Flat indices into ``shape`` of the multi-indices in the columns of ``data``
    (len(shape), N) -> (N,), in ``data``'s dtype (not checked against the bounds)."""
    inputs = ('data',)
    attrs = dict(shape=Shape(None, 'shape of the array the indices point into'))
    check = _check_ravel_shape
    gradient = zero_gradient

    def compute(xp, attrs, data):
        flat = xp.zeros(data.shape[1:], dtype=np.int64)
        for row, size in zip(_as_index(xp, data), attrs.shape):
            flat = flat * size + row
        return flat.astype(data.dtype)

    def infer_shape(attrs, data):
        ndim = len(attrs.shape)
        if data is None:
            return [(ndim, 0)], [None]
        if len(data) != 2:
            raise ShapeError(f'ravel_multi_index takes a 2-d input, got shape {tuple(data)}')
        data = merge_shape(data, (ndim, 0), f'the first axis of the input must be len(shape) '
                           f'= {ndim}')
        return [data], [(data[1],)]


def _trunc_divmod(xp, a, b):
    """C's integer division: the quotient truncated towards zero, the remainder a - q b."""
    q = xp.where(a < 0, -((-a) // b), a // b)
    return q, a - q * b


@register('_unravel_index', aliases=('unravel_index',))
class _unravel_index:
    """Multi-indices into ``shape`` of the flat indices in ``data``: (...) ->
    (len(shape), ...), in ``data``'s dtype (not checked against the bounds)."""
    inputs = ('data',)
    attrs = dict(shape=Shape(None, 'shape of the array the indices point into'))
    check = _check_ravel_shape
    gradient = zero_gradient

    def compute(xp, attrs, data):
        idx = _as_index(xp, data)
        rows = []
        for size in attrs.shape[:0:-1]:
            idx, rest = _trunc_divmod(xp, idx, size)
            rows.append(rest)
        rows.append(idx)
        return xp.stack(rows[::-1]).astype(data.dtype)

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        return [data], [(len(attrs.shape),) + tuple(data)]


# -------------------------------------------------------------------------------------------------
# fill_element_0index
# -------------------------------------------------------------------------------------------------

@register('fill_element_0index')
class fill_element_0index:
    """``lhs`` (n, m) with row i's element ``rhs[i]`` set to ``mhs[i]``: the counterpart of
    ``choose_element_0index``. Rows whose index is outside [0, m) are left unchanged."""
    inputs = ('lhs', 'mhs', 'rhs')

    def compute(xp, attrs, lhs, mhs, rhs):
        out = lhs.copy()
        idx = _as_index(xp, rhs)
        rows = xp.nonzero((idx >= 0) & (idx < lhs.shape[1]))[0]
        out[rows, idx[rows]] = mhs[rows]
        return out

    def infer_shape(attrs, lhs, mhs, rhs):
        for name, s, rank in (('lhs', lhs, 2), ('mhs', mhs, 1), ('rhs', rhs, 1)):
            if s is not None and len(s) != rank:
                raise ShapeError(f'fill_element_0index: {name} must be {rank}-d, got {s}')
        n = 0
        for s in (lhs, mhs, rhs):
            if s is not None and s[0]:
                if n and s[0] != n:
                    raise ShapeError('fill_element_0index: lhs, mhs and rhs must have the same '
                                     f'number of rows, got {lhs}, {mhs}, {rhs}')
                n = s[0]
        lhs = (n, 0) if lhs is None else (n, lhs[1])
        return [lhs, (n,), (n,)], [lhs]

    def infer_type(attrs, lhs, mhs, rhs):
        (lhs, mhs), (out,) = same_dtype(attrs, lhs, mhs)
        if rhs is not None and rhs.kind not in 'fiu':
            raise DTypeError(f'fill_element_0index: the indices must be numbers, got {rhs.name}')
        return [lhs, mhs, rhs], [out]

    def gradient(F, attrs, inputs, outputs, ograds):
        lhs, mhs, rhs = inputs
        g = ograds[0]
        filled = F.fill_element_0index(F.zeros_like(lhs), F.ones_like(mhs), rhs)
        return [F.fill_element_0index(g, F.zeros_like(mhs), rhs),
                F.sum(F.elemwise_mul(g, filled), axis=1), None]
