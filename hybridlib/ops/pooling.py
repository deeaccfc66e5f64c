"""Pooling: ``Pooling`` and the internal backward operators its gradient is made of.

Pooling shares Convolution's window geometry (``conv.py``): along each spatial axis, window
``o`` and kernel offset ``k`` touch input position ``o * stride + k - pad``. Max and sum
pooling reduce one axis at a time (``_separable``), each axis one ufunc per kernel tap over
strided views, so no window matrix is made. Max pooling routes its gradient to the first
maximum of each window, as MXNet does, through ``_backward_Pooling``, whose gradient is the
gather ``_backward_Pooling_gather`` (and back).
"""
import collections
import functools

import numpy as np

from ..base import NotSupportedError, ShapeError
from .attrs import Bool, Int, Shape, Str
from .conv import (Geom, _POOL_LAYOUTS, _S, _check_rank, _check_window, _expand, _float_types,
                   _from_cf, _is_channel_last, _join, _kw, _split, _taps, _to_cf)
from . import tuning
from .registry import BackwardNode, merge_shape, register, workspace

__all__ = []


# -------------------------------------------------------------------------------------------------
# Numerical kernels (channel-first arrays of the array module ``xp``)
# -------------------------------------------------------------------------------------------------

def _lowest(dtype):
    dtype = np.dtype(dtype)
    return np.finfo(dtype).min if dtype.kind == 'f' else np.iinfo(dtype).min


_PoolCfg = collections.namedtuple('_PoolCfg', 'geo grid pool_type p include_pad')


def _pool_cfg(attrs, spatial):
    """Geometry and output size of Pooling on a spatial size (0 entries: unknown)."""
    nd = len(spatial)
    if attrs.global_pool:
        geo = Geom(tuple(spatial), (1,) * nd, (1,) * nd, (0,) * nd)
        grid = (1,) * nd
    else:
        pad = (0,) * nd if attrs.pooling_convention == 'same' else _expand(attrs.pad, nd, 0)
        geo = Geom(tuple(attrs.kernel), _expand(attrs.stride, nd, 1), (1,) * nd, pad)
        grid = []
        for n, k, s, p in zip(spatial, geo.kernel, geo.stride, geo.pad):
            if not n:
                grid.append(0)
            elif attrs.pooling_convention == 'same':
                grid.append((n + s - 1) // s)
            elif k > n + 2 * p:
                raise ShapeError(f'Pooling: kernel size {k} exceeds the input size {n} padded '
                                 f'to {n + 2 * p}')
            elif attrs.pooling_convention == 'full':
                grid.append((n + 2 * p - k + s - 1) // s + 1)
            else:
                grid.append((n + 2 * p - k) // s + 1)
        grid = tuple(grid)
    include = attrs.count_include_pad is None or attrs.count_include_pad
    return _PoolCfg(geo, grid, attrs.pool_type, attrs.p_value, include)


def _is_global(cfg, spatial):
    return tuple(cfg.geo.kernel) == tuple(spatial) and not any(cfg.geo.pad) and \
        set(cfg.grid) == {1}


@functools.lru_cache(maxsize=256)
def _window_sizes(cfg, spatial):
    """Elements each average window divides by, as MXNet counts them (pad included or not;
    a 'full' window that runs past the padding counts only up to it): a read-only numpy
    array of the grid's shape."""
    count = np.ones(())
    for n, m, k, s, p in zip(spatial, cfg.grid, cfg.geo.kernel, cfg.geo.stride, cfg.geo.pad):
        start = np.arange(m) * s - p
        if cfg.include_pad:
            size = np.minimum(start + k, n + p) - start
        else:
            size = np.minimum(start + k, n) - np.maximum(start, 0)
        count = np.multiply.outer(count, size)
    # an empty window sums to 0: MXNet outputs 0 there, not 0 / 0
    count = np.maximum(count, 1)
    count.flags.writeable = False
    return count


def _pool_count(xp, cfg, spatial, dtype):
    """The average windows' sizes (``_window_sizes``) as an array of ``xp``."""
    return xp.asarray(_window_sizes(cfg, tuple(spatial)), dtype=dtype)


def _power(x, p):
    """The terms x^p of lp pooling (p_value 1, 2 or 3), as products."""
    return x if p == 1 else x * x if p == 2 else x * x * x


def _root(xp, out, p):
    """out^(1/p) in place: lp pooling's last step."""
    if p != 1:
        (xp.sqrt if p == 2 else xp.cbrt)(out, out=out)


# The paths of Pooling's forward, ``path(*plan, x, out)`` with the plan ``_pool_engine`` made for
# the shapes: x (N, C, *spatial) and out (N, C, *grid) channel-first (out may be a transposed
# view of a channel-last output). ``first`` indexes the (N, C) maps of a global pooling's out.

def _max_global(xp, first, lowest, x, out):
    """Global max pooling: each map's maximum ignoring NaN, the lowest value where all are
    NaN (MXNet's running maximum starts from it)."""
    maps = out[first]
    maps[...] = _nanmax(xp, x.reshape(x.shape[:2] + (-1,)))
    maps[xp.isnan(maps)] = lowest


def _mean_global(xp, first, x, out):
    """Global average pooling: each map's mean."""
    x.reshape(x.shape[:2] + (-1,)).mean(axis=-1, out=out[first])


def _sum_global(xp, first, p, x, out):
    """Global sum and lp pooling: each map's sum (of x^p, then the p-th root)."""
    maps = out[first]
    _power(x, p).reshape(x.shape[:2] + (-1,)).sum(axis=-1, out=maps)
    _root(xp, maps, p)


def _max_windows(xp, cfg, lowest, x, out):
    """Max pooling over windows. MXNet starts from the lowest value and keeps larger ones, so
    NaN is skipped (fmax) and a window that holds no input element gives the lowest value."""
    _separable(xp, xp.fmax, lowest, x, cfg, out)


def _sum_windows(xp, cfg, p, count, x, out):
    """Sum, average (divided by the windows' ``count``) and lp pooling over windows."""
    _separable(xp, xp.add, 0, _power(x, p), cfg, out)
    if count is not None:
        out /= count
    _root(xp, out, p)


def _separable(xp, ufunc, start, x, cfg, out):
    """Reduce the windows of x into ``out`` with ``ufunc`` (fmax, add) one spatial axis at a
    time: sum(k) passes instead of prod(k), the first ones over contiguous rows.

    Each pass starts from ``start``. A pass may instead start from the ufunc of two taps that
    reach every output (none is missing at the border; ``_axis_pass``), or a copy of one:
    two passes fewer per axis. For fmax, which is associative, ``start`` then joins once at
    the end: the same values (NaN included).

    Large inputs go through in blocks of channels that stay in a core's cache between the
    passes (``_maps_per_block``): the passes then read the cache instead of memory."""
    maps = _maps_per_block(xp, x)
    if maps is None:
        _separable_block(xp, ufunc, start, x, cfg, out)
        return
    n, c = x.shape[:2]
    for i in range(n):
        for j in range(0, c, maps):
            block = (slice(i, i + 1), slice(j, j + maps))
            _separable_block(xp, ufunc, start, x[block], cfg, out[block])


def _maps_per_block(xp, x):
    """How many (H, W) maps of x one block of ``_separable`` takes: a quarter of the level-2
    cache of input, leaving room for the passes' results (on a 2 MiB cache a quarter was
    fastest: 917 us for (1, 96, 109, 109) against 997 at half and 1251 unblocked); None when
    x is that small, not a numpy array, or channel-last (its maps are not contiguous: a block
    of channels would read every cache line of x)."""
    budget = tuning.l2_cache_bytes() // 4
    if xp is not np or x.nbytes <= 2 * budget or not x[0, 0].flags.c_contiguous:
        return None
    return max(1, budget // (x[0, 0].size * x.itemsize))


def _separable_block(xp, ufunc, start, x, cfg, out):
    """``_separable`` on x as one block."""
    nd = len(cfg.grid)
    cur = x
    late = False
    for d in range(nd):
        shape = cur.shape[:2 + d] + (cfg.grid[d],) + cur.shape[3 + d:]
        nxt = out if d == nd - 1 else \
            workspace(xp, shape, x.dtype) if d == 0 else xp.empty(shape, x.dtype)
        taps, lead = _axis_pass(cfg.geo, d, nd, cur.shape[2 + d], cfg.grid[d],
                                ufunc is xp.fmax)
        if len(lead) == 2:
            ufunc(cur[taps[lead[0]][1]], cur[taps[lead[1]][1]], out=nxt)
        elif lead:
            xp.copyto(nxt, cur[taps[lead[0]][1]])
        else:
            nxt.fill(start)
        late = late or (bool(lead) and ufunc is xp.fmax)
        for i, (dst, src) in enumerate(taps):
            if i not in lead:
                view = nxt[dst]
                ufunc(view, cur[src], out=view)
        cur = nxt
    if late:
        ufunc(out, start, out=out)


@functools.lru_cache(maxsize=1024)
def _axis_pass(geo, d, nd, n, m, is_max):
    """One axis's pass: the (output, input) index pairs of each kernel offset along spatial
    axis ``d``, and the taps the pass starts from instead of ``start``: up to two that reach
    every output (their first ufunc makes the pass's result). Any two for fmax (``is_max``);
    for add only the first two in order, which keeps the order of the sum (0 + a + b adds a
    and b; only a zero's sign may differ)."""
    one = Geom(*((g[d],) for g in geo))
    head, rest = (_S,) * (2 + d), (_S,) * (nd - d - 1)
    taps = tuple((head + (gsl[2],) + rest, head + (isl[2],) + rest)
                 for _, gsl, isl in _taps(one, (n,), (m,)))
    whole = tuple(i for i, (dst, _) in enumerate(taps) if dst[2 + d] == slice(0, m))
    if is_max:
        return taps, whole[:2]
    return taps, (0, 1) if whole[:2] == (0, 1) else ()


def _nanmax(xp, a):
    """Maximum over the last axis ignoring NaN (NaN where all are NaN), without warnings."""
    if xp is np:
        return np.fmax.reduce(a, axis=-1)
    return xp.nanmax(a, axis=-1)


def _pool_engine(xp, cfg, spatial, dtype):
    """``run(x, out)``: Pooling of x (N, C, *spatial) of ``dtype`` into out, both
    channel-first, by the path for this configuration and these shapes."""
    first = (_S, _S) + (0,) * len(spatial)
    p = cfg.p if cfg.pool_type == 'lp' else 1
    if _is_global(cfg, spatial):
        if cfg.pool_type == 'max':
            return functools.partial(_max_global, xp, first, _lowest(dtype))
        if cfg.pool_type == 'avg':
            return functools.partial(_mean_global, xp, first)
        return functools.partial(_sum_global, xp, first, p)
    if cfg.pool_type == 'max':
        return functools.partial(_max_windows, xp, cfg, _lowest(dtype))
    count = _pool_count(xp, cfg, spatial, dtype) if cfg.pool_type == 'avg' else None
    return functools.partial(_sum_windows, xp, cfg, p, count)


# -------------------------------------------------------------------------------------------------
# Pooling's gradient (channel-first arrays)
# -------------------------------------------------------------------------------------------------

def _max_masks(xp, x, y, cfg):
    """Per kernel offset: (grid slices, image slices, mask of the windows whose maximum ``y``
    sits at this offset and at no earlier one); MXNet routes to the first maximum."""
    done = xp.zeros(y.shape, dtype=bool)
    buf = xp.empty(y.shape, dtype=bool)      # reused: large temporaries cost page faults
    for _, gsl, isl in _taps(cfg.geo, x.shape[2:], cfg.grid):
        hit, seen = buf[gsl], done[gsl]
        xp.equal(x[isl], y[gsl], out=hit)
        xp.greater(hit, seen, out=hit)          # hit and not seen
        xp.logical_or(seen, hit, out=seen)
        yield gsl, isl, hit


def _global_argmax(xp, x, y):
    """Mask (N, C, H * W...) of the first maximum of each map, for global max pooling."""
    flat = x.reshape(x.shape[:2] + (-1,))
    eq = flat == y.reshape(y.shape[:2] + (1,))
    first = xp.arange(flat.shape[-1]) == xp.argmax(eq.view(np.int8), axis=-1)[..., None]
    return first & eq


def _spread_max_global(xp, g, x, y, cfg):
    """Global max pooling's gradient: each map's to its first maximum."""
    mask = _global_argmax(xp, x, y)
    return xp.where(mask, g.reshape(g.shape[:2] + (1,)), 0).reshape(x.shape) \
        .astype(x.dtype, copy=False)


def _spread_max_tiles(xp, g, x, y, cfg):
    """Max pooling's gradient where the windows tile the image: each position is written
    once, no zeros, no sums."""
    dx = xp.empty(x.shape, dtype=g.dtype)
    for gsl, isl, hit in _max_masks(xp, x, y, cfg):
        xp.multiply(g[gsl], hit, out=dx[isl])
    return dx


def _spread_max(xp, g, x, y, cfg):
    """Max pooling's gradient, each window's to its first maximum, summed where windows
    overlap."""
    dx = xp.zeros(x.shape, dtype=g.dtype)
    buf = xp.empty(y.shape, dtype=g.dtype)
    for gsl, isl, hit in _max_masks(xp, x, y, cfg):
        part, tmp = dx[isl], buf[gsl]
        xp.multiply(g[gsl], hit, out=tmp)
        xp.add(part, tmp, out=part)
    return dx


ENGINE_PATHS = (_max_global, _mean_global, _sum_global, _max_windows, _sum_windows,
                _spread_max_global, _spread_max_tiles, _spread_max)


def _pool_backward(xp, g, x, y, cfg):
    """Spread the output gradient g back onto x's positions (channel-first)."""
    spatial = x.shape[2:]
    if cfg.pool_type == 'max':
        if _is_global(cfg, spatial):
            return _spread_max_global(xp, g, x, y, cfg)
        tiles = tuple(cfg.geo.kernel) == tuple(cfg.geo.stride) and not any(cfg.geo.pad) and \
            all(m * k == n for m, k, n in zip(cfg.grid, cfg.geo.kernel, spatial))
        return (_spread_max_tiles if tiles else _spread_max)(xp, g, x, y, cfg)
    if cfg.pool_type == 'avg':
        g = g / _pool_count(xp, cfg, spatial, g.dtype)
    if _is_global(cfg, spatial):
        return xp.ascontiguousarray(xp.broadcast_to(g, x.shape))
    dx = xp.zeros(x.shape, dtype=g.dtype)
    for _, gsl, isl in _taps(cfg.geo, spatial, cfg.grid):
        dx[isl] += g[gsl]
    return dx


def _pool_gather(xp, h, x, y, cfg):
    """For each max window, the value of h at the position its gradient is routed to."""
    if _is_global(cfg, x.shape[2:]):
        mask = _global_argmax(xp, x, y)
        picked = xp.where(mask, h.reshape(mask.shape), 0).sum(axis=-1)
        return picked.reshape(y.shape).astype(h.dtype, copy=False)
    out = xp.zeros(y.shape, dtype=h.dtype)
    for gsl, isl, hit in _max_masks(xp, x, y, cfg):
        out[gsl] += h[isl] * hit
    return out


# -------------------------------------------------------------------------------------------------
# The operators
# -------------------------------------------------------------------------------------------------

_POOL_ATTRS = dict(kernel=Shape(()), pool_type=Str('max', choices=('avg', 'lp', 'max', 'sum')),
                   global_pool=Bool(False), cudnn_off=Bool(False),
                   pooling_convention=Str('valid', choices=('full', 'same', 'valid')),
                   stride=Shape(()), pad=Shape(()), p_value=Int(None),
                   count_include_pad=Bool(None), layout=Str(None, choices=_POOL_LAYOUTS))


def _check_pool(attrs):
    if not attrs.global_pool:
        if not attrs.kernel:
            raise ValueError('kernel is required unless global_pool=True')
        same = attrs.pooling_convention == 'same'
        # MXNet 1.9.1 reads three pad entries for 'same' (pad=(0, 0, 0)): any length of zeros
        _check_window(attrs, ('stride',) if same else ('stride', 'pad'))
        if same and len(attrs.kernel) != 1:
            raise ValueError("pooling_convention='same' supports 1-D pooling only")
        if same and any(attrs.pad):
            raise ValueError("pooling_convention='same' does not take a pad")
    if attrs.pool_type == 'lp' and attrs.p_value not in (1, 2, 3):
        raise ValueError(f'lp pooling needs p_value 1, 2 or 3, got {attrs.p_value}')


def _pool_layout(attrs, ndim):
    if attrs.layout and len(attrs.layout) != ndim:
        raise ShapeError(f'Pooling: layout {attrs.layout} does not fit {ndim}-d data')
    return _is_channel_last(attrs.layout, ndim - 2)


def _pool_infer_out(attrs, data):
    """(data, output) shapes of Pooling; data None -> nothing known."""
    if data is None:
        return None, None
    if attrs.global_pool:
        if not 3 <= len(data) <= 5:
            raise ShapeError(f'Pooling: data must have 3 to 5 dimensions, got {tuple(data)}')
    else:
        data = _check_rank(data, len(attrs.kernel) + 2, 'data', 'Pooling')
    cl = _pool_layout(attrs, len(data))
    n, c, sp = _split(tuple(data), cl)
    return tuple(data), _join(n, c, _pool_cfg(attrs, sp).grid, cl)


def _pool_outputs(attrs):
    """MXNet 1.9.1 (oneDNN build) gives channel-first max pooling a hidden second output (its
    workspace), which -symbol.json files count in node_row_ptr; here it repeats the result."""
    nd = len(attrs.kernel) or 2
    return 2 if attrs.pool_type == 'max' and not _is_channel_last(attrs.layout, nd) else 1


def _pool_setup(attrs, data):
    cl = _pool_layout(attrs, data.ndim)
    x = _to_cf(data, cl)
    return cl, x, _pool_cfg(attrs, x.shape[2:])


@register('Pooling')
class Pooling:
    """Max, average, sum or Lp pooling over 1-D/2-D/3-D windows; ``global_pool`` pools each
    whole map to size 1.

    ``data`` (N, C, *spatial) (or channel-last). Output size per axis: 'valid'
    (n + 2 * pad - kernel) // stride + 1, 'full' the same rounded up (windows may then run
    past the padding; they count only up to it), 'same' (1-D) ceil(n / stride). Max ignores
    NaN and gives the dtype's lowest value for a window without input elements; avg divides
    by the window size including padding unless ``count_include_pad`` is False; lp is
    (sum x^p)^(1/p) for p_value 1, 2, 3 (no absolute value, as in MXNet).
    """
    inputs = ('data',)
    attrs = _POOL_ATTRS
    check = _check_pool
    num_outputs = _pool_outputs
    hidden_views = True
    num_visible_outputs = 1

    def output_names(attrs):
        return ['output', 'workspace'] if _pool_outputs(attrs) == 2 else ['output']

    def backward_node(attrs):
        # MXNet's oneDNN max pooling also reads its workspace, and the workspace's gradient
        # (zeros: none reaches it)
        if _pool_outputs(attrs) == 2:
            return BackwardNode(('ograd0', 'ograd1', 'in0', 'out0', 'out1'))
        return BackwardNode(('ograd0', 'in0', 'out0'))

    def infer_shape(attrs, data):
        data, out = _pool_infer_out(attrs, data)
        return [data], [out] * _pool_outputs(attrs)

    def infer_type(attrs, data):
        ins, outs = _float_types(attrs, data)
        return ins, outs * _pool_outputs(attrs)

    def specialise(xp, attrs, shapes, dtypes, is_train):
        data, dtype = tuple(shapes[0]), dtypes[0]
        cl = _pool_layout(attrs, len(data))
        n, c, spatial = _split(data, cl)
        cfg = _pool_cfg(attrs, spatial)
        run = _pool_engine(xp, cfg, spatial, dtype)
        shape, empty = _join(n, c, cfg.grid, cl), xp.empty
        if cl:
            nd = len(spatial)
            to_cf = (0, nd + 1) + tuple(range(1, nd + 1))

            def pooling_channel_last(x, out=None):
                if out is None:
                    out = empty(shape, dtype)
                run(x.transpose(to_cf), out.transpose(to_cf))
                return out
            return pooling_channel_last
        if _pool_outputs(attrs) == 2:
            def max_pooling(x, out=None):
                if out is None:
                    out = empty(shape, dtype)
                run(x, out)
                return out, out         # the hidden output (hidden_views: no copy)
            return max_pooling

        def pooling(x, out=None):
            if out is None:
                out = empty(shape, dtype)
            run(x, out)
            return out
        return pooling

    def gradient(F, attrs, inputs, outputs, ograds):
        x, y, g = inputs[0], outputs[0], ograds[0]
        if attrs.pool_type != 'lp':
            return [F._backward_Pooling(g, x, y, **_kw(attrs))]
        # d/dx (sum x^p)^(1/p) = (x / y)^(p - 1): a sum-spread of g / y^(p-1) times x^(p-1)
        kw = _kw(attrs, pool_type='sum', p_value=None)
        if attrs.p_value == 1:
            return [F._backward_Pooling(g, x, y, **kw)]
        if attrs.p_value == 2:
            return [F._backward_Pooling(g / y, x, y, **kw) * x]
        return [F._backward_Pooling(g / (y * y), x, y, **kw) * (x * x)]


def _check_backward_pool(attrs):
    _check_pool(attrs)
    if attrs.pool_type == 'lp':
        raise NotSupportedError('_backward_Pooling does not take pool_type lp: the gradient '
                                'of lp Pooling is a sum-type _backward_Pooling times (x/y)^(p-1)')


def _backward_pool_infer(attrs, head, data, output):
    data, out = _pool_infer_out(attrs, data)
    return [merge_shape(head, out, 'ograd'), data, merge_shape(output, out, 'output')], [data]


@register('_backward_Pooling')
class _backward_Pooling:
    """The gradient of Pooling: ``ograd`` (shape of the output) spread onto ``data``'s
    positions: to the first maximum of each window (max; ``output`` is the pooled result),
    evenly divided by the window count (avg) or copied (sum). Output: the shape of ``data``.
    """
    inputs = ('ograd', 'data', 'output')
    attrs = _POOL_ATTRS
    check = _check_backward_pool
    infer_shape = _backward_pool_infer
    infer_type = _float_types

    def compute(xp, attrs, ograd, data, output):
        cl, x, cfg = _pool_setup(attrs, data)
        return _from_cf(xp, _pool_backward(xp, _to_cf(ograd, cl), x, _to_cf(output, cl), cfg),
                        cl)

    def gradient(F, attrs, inputs, outputs, ograds):
        head = ograds[0]
        if attrs.pool_type == 'max':
            return [F._backward_Pooling_gather(head, inputs[1], inputs[2], **_kw(attrs)),
                    None, None]
        return [F.Pooling(head, **_kw(attrs)), None, None]


def _check_gather(attrs):
    _check_pool(attrs)
    if attrs.pool_type != 'max':
        raise ValueError('_backward_Pooling_gather is the routing of max pooling; '
                         f'pool_type must be max, got {attrs.pool_type}')


@register('_backward_Pooling_gather')
class _backward_Pooling_gather:
    """The gradient of max ``_backward_Pooling`` with respect to its ``ograd``: for each window
    the value of ``data_grad`` (shape of ``data``) at the window's first maximum. Output: the
    shape of ``output``. Its own gradient is ``_backward_Pooling`` again.
    """
    inputs = ('data_grad', 'data', 'output')
    attrs = _POOL_ATTRS
    check = _check_gather
    infer_type = _float_types

    def infer_shape(attrs, head, data, output):
        data, out = _pool_infer_out(attrs, data)
        data = merge_shape(head, data, 'data_grad')
        out = merge_shape(output, out, 'output')
        return [data, data, out], [out]

    def compute(xp, attrs, head, data, output):
        cl, x, cfg = _pool_setup(attrs, data)
        return _from_cf(xp, _pool_gather(xp, _to_cf(head, cl), x, _to_cf(output, cl), cfg), cl)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_Pooling(ograds[0], inputs[1], inputs[2], **_kw(attrs)), None, None]
