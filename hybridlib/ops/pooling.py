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
from .registry import merge_shape, register, workspace

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


def _pool_count(xp, cfg, spatial, dtype):
    """Elements each average window divides by, as MXNet counts them (pad included or not;
    a 'full' window that runs past the padding counts only up to it)."""
    count = np.ones(())
    for n, m, k, s, p in zip(spatial, cfg.grid, cfg.geo.kernel, cfg.geo.stride, cfg.geo.pad):
        start = np.arange(m) * s - p
        if cfg.include_pad:
            size = np.minimum(start + k, n + p) - start
        else:
            size = np.minimum(start + k, n) - np.maximum(start, 0)
        count = np.multiply.outer(count, size)
    # an empty window sums to 0: MXNet outputs 0 there, not 0 / 0
    return xp.asarray(np.maximum(count, 1), dtype=dtype)


def _pool(xp, x, cfg, out=None, count=None):
    """Pooling forward on a channel-first x (written into ``out`` when given; ``count``: the
    average windows' sizes, when already known)."""
    spatial = x.shape[2:]
    if out is None:
        out = xp.empty(x.shape[:2] + cfg.grid, dtype=x.dtype)
    powered = x if cfg.pool_type != 'lp' or cfg.p == 1 else x * x if cfg.p == 2 else x * x * x
    if _is_global(cfg, spatial):
        flat, maps = powered.reshape(x.shape[:2] + (-1,)), out.reshape(x.shape[:2])
        if cfg.pool_type == 'max':
            maps[...] = _nanmax(xp, flat)
            maps[xp.isnan(maps)] = _lowest(x.dtype)
            return out
        if cfg.pool_type == 'avg':
            return flat.mean(axis=-1, out=maps).reshape(out.shape)
        flat.sum(axis=-1, out=maps)
    else:
        # max: MXNet starts from the lowest value and keeps larger ones, so NaN is skipped
        # (fmax) and a window that holds no input element gives the lowest value
        if cfg.pool_type == 'max':
            _separable(xp, xp.fmax, _lowest(x.dtype), x, cfg, out)
            return out
        _separable(xp, xp.add, 0, powered, cfg, out)
        if cfg.pool_type == 'avg':
            out /= _pool_count(xp, cfg, spatial, x.dtype) if count is None else count
    if cfg.pool_type == 'lp' and cfg.p != 1:
        (xp.sqrt if cfg.p == 2 else xp.cbrt)(out, out=out)
    return out


def _separable(xp, ufunc, start, x, cfg, out):
    """Reduce the windows of x into ``out`` with ``ufunc`` (fmax, add) one spatial axis at a
    time: sum(k) passes instead of prod(k), the first ones over contiguous rows."""
    nd = len(cfg.grid)
    cur = x
    for d in range(nd):
        shape = cur.shape[:2 + d] + (cfg.grid[d],) + cur.shape[3 + d:]
        nxt = out if d == nd - 1 else \
            workspace(xp, shape, x.dtype) if d == 0 else xp.empty(shape, x.dtype)
        nxt.fill(start)
        for dst, src in _axis_taps(cfg.geo, d, nd, cur.shape[2 + d], cfg.grid[d]):
            view = nxt[dst]
            ufunc(view, cur[src], out=view)
        cur = nxt


@functools.lru_cache(maxsize=1024)
def _axis_taps(geo, d, nd, n, m):
    """The (output, input) index pairs of each kernel offset along spatial axis ``d``."""
    one = Geom(*((g[d],) for g in geo))
    lead, rest = (_S,) * (2 + d), (_S,) * (nd - d - 1)
    return [(lead + (gsl[2],) + rest, lead + (isl[2],) + rest)
            for _, gsl, isl in _taps(one, (n,), (m,))]


def _nanmax(xp, a):
    """Maximum over the last axis ignoring NaN (NaN where all are NaN), without warnings."""
    if xp is np:
        return np.fmax.reduce(a, axis=-1)
    return xp.nanmax(a, axis=-1)


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


def _pool_backward(xp, g, x, y, cfg):
    """Spread the output gradient g back onto x's positions (channel-first)."""
    spatial = x.shape[2:]
    if cfg.pool_type == 'max':
        if _is_global(cfg, spatial):
            mask = _global_argmax(xp, x, y)
            return xp.where(mask, g.reshape(g.shape[:2] + (1,)), 0).reshape(x.shape) \
                .astype(x.dtype, copy=False)
        # windows that tile the image write each position once: no zeros, no sums
        tiles = tuple(cfg.geo.kernel) == tuple(cfg.geo.stride) and not any(cfg.geo.pad) and \
            all(m * k == n for m, k, n in zip(cfg.grid, cfg.geo.kernel, spatial))
        dx = (xp.empty if tiles else xp.zeros)(x.shape, dtype=g.dtype)
        buf = xp.empty(y.shape, dtype=g.dtype)
        for gsl, isl, hit in _max_masks(xp, x, y, cfg):
            if tiles:
                xp.multiply(g[gsl], hit, out=dx[isl])
                continue
            part, tmp = dx[isl], buf[gsl]
            xp.multiply(g[gsl], hit, out=tmp)
            xp.add(part, tmp, out=part)
        return dx
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
    num_visible_outputs = 1

    def infer_shape(attrs, data):
        data, out = _pool_infer_out(attrs, data)
        return [data], [out] * _pool_outputs(attrs)

    def infer_type(attrs, data):
        ins, outs = _float_types(attrs, data)
        return ins, outs * _pool_outputs(attrs)

    def compute(xp, attrs, data):
        cl, x, cfg = _pool_setup(attrs, data)
        out = _from_cf(xp, _pool(xp, x, cfg), cl)
        return (out, out) if _pool_outputs(attrs) == 2 else out

    def kernel(xp, attrs, shapes, dtypes, is_train):
        data = shapes[0]
        if _pool_layout(attrs, len(data)):
            return None
        cfg = _pool_cfg(attrs, tuple(data[2:]))
        count = _pool_count(xp, cfg, tuple(data[2:]), dtypes[0]) \
            if cfg.pool_type == 'avg' and not _is_global(cfg, data[2:]) else None
        two = _pool_outputs(attrs) == 2

        def pooling(out, x):
            _pool(xp, x, cfg, out, count)
            return (out, out) if two else out
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
