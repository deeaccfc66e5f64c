"""The convolution engines of GPUs: every window gathered by one index (``take``) and one
batched matrix product, where the CPU engines of conv.py copy one slice per kernel offset
(cheap on a CPU, a kernel launch each on a GPU).

They keep conv.py's engine signatures (channel-first inputs, a C-contiguous ``out``) and its
geometry: along each spatial axis, window ``o`` and kernel offset ``k`` touch the padded
input at ``o * stride + k * dilate``. The index of a geometry is made once, with numpy, and
kept on the device. Batches whose gathered windows would pass ``_COLS_LIMIT`` elements run in
chunks of images. Everything is written with array functions alone, so the engines run (and
are tested) on numpy too.
"""
import functools
import math

import numpy as np

from .registry import workspace

__all__ = []

_COLS_LIMIT = 1 << 28   # elements of gathered windows at once: 1 GiB of float32
# workspace parts, apart from those of conv.py's engines (the operator bodies use up to 5)
_PADDED, _COLS, _SHIFTED, _SHARES = 6, 7, 8, 9


@functools.lru_cache(maxsize=256)
class _Taps:
    """The windows of one geometry over images of spatial size ``image`` giving ``grid``:
    ``index`` (K, P), the flat padded position of kernel offset k (row-major over the kernel)
    at window p (row-major over the grid); ``inverse`` (K, Q), for each kernel offset and
    image position, the window that reads it there, or P where none does."""

    def __init__(self, geo, image, grid):
        self.image, self.grid = image, grid
        self._kept = {}     # the indices on each device
        self.pad = geo.pad
        self.padded = tuple(n + 2 * p for n, p in zip(image, geo.pad))
        self.k, self.p, self.q = math.prod(geo.kernel), math.prod(grid), math.prod(image)
        nd = len(image)
        index = np.zeros((1,) * (2 * nd), np.int64)
        inverse = np.zeros((1,) * (2 * nd), np.int64)
        valid = np.ones((1,) * (2 * nd), bool)
        for d, (n, m, k, s, dil, pad) in enumerate(zip(image, grid, *geo)):
            at = [1] * (2 * nd)
            at[d], at[nd + d] = k, m
            offsets = np.arange(k)[:, None] * dil
            index = index + ((offsets + np.arange(m) * s) * _row_stride(self.padded, d)) \
                .reshape(at)
            at[nd + d] = n
            # the window of image position i under offset k: (i + pad - k * dil) / stride
            source = np.arange(n) + pad - offsets
            window, rest = np.divmod(source, s)
            ok = (rest == 0) & (window >= 0) & (window < m)
            inverse = inverse + (np.where(ok, window, 0) * _row_stride(grid, d)).reshape(at)
            valid = valid & ok.reshape(at)
        self.index = index.reshape(self.k, self.p)
        self.inverse = np.where(valid, inverse, self.p).reshape(self.k, self.q)

    def on(self, xp, name, batch=None):
        """An index on ``xp``'s current device: ``index``, ``inverse`` (in a (K, P + 1) row
        per offset), or ``batched`` (K, batch, P) into images of Q' = prod(padded) laid end
        to end."""
        key = (xp.__name__, 0 if xp is np else xp.cuda.Device().id, name, batch)
        value = self._kept.get(key)
        if value is None:
            value = self._kept[key] = self._make(xp, name, batch)
        return value

    def _make(self, xp, name, batch):
        if name == 'index':
            value = self.index
        elif name == 'inverse':
            value = self.inverse + np.arange(self.k)[:, None] * (self.p + 1)
        else:
            value = self.index[:, None, :] + np.arange(batch)[:, None] * math.prod(self.padded)
        small = value.size == 0 or value.max() < 2 ** 31
        return xp.asarray(value.astype(np.int32 if small else np.int64))


def _row_stride(shape, d):
    return math.prod(shape[d + 1:])


def _chunk(n, per_image):
    return max(1, min(n, _COLS_LIMIT // max(per_image, 1)))


def _padded(xp, taps, x):
    """x (N, C, *image) as flat padded images (N, C, prod(padded)): x itself, reshaped, when
    there is no padding; else zeros around x in the workspace."""
    n, c = x.shape[:2]
    if taps.padded == taps.image:
        return x.reshape(n, c, -1)
    flat = workspace(xp, (n, c, math.prod(taps.padded)), x.dtype, part=_PADDED)
    flat[...] = 0
    inner = (slice(None), slice(None)) + tuple(slice(p, p + i)
                                               for p, i in zip(taps.pad, taps.image))
    flat.reshape((n, c) + taps.padded)[inner] = x
    return flat


def conv_engine(xp, geo, groups, shape, f, grid):
    """``run(x, w, out)``: the convolution of x (``shape``) with w (f, C / groups, *kernel)
    into out (N, f, *grid)."""
    n, c = shape[:2]
    taps = _Taps(geo, tuple(shape[2:]), tuple(grid))
    step = _chunk(n, c * taps.k * taps.p)

    def run(x, w, out):
        src = _padded(xp, taps, x)
        index = taps.on(xp, 'index')
        weights = w.reshape(groups, f // groups, -1)
        for a in range(0, n, step):
            b = min(n, a + step)
            cols = workspace(xp, (b - a, c, taps.k, taps.p), x.dtype, part=_COLS)
            xp.take(src[a:b], index, axis=2, out=cols)
            xp.matmul(weights, cols.reshape(b - a, groups, -1, taps.p),
                      out=out[a:b].reshape(b - a, groups, f // groups, taps.p))
    return run


def deconv_engine(xp, geo, groups, shape, f, image):
    """``run(x, w, out)``: the transposed convolution of x (``shape``: N, C, *grid) with w
    (C, f / groups, *kernel) into out (N, f, *image): the weight's transpose times x gives
    every window's share (a zero column appended per offset), and each image position sums
    the shares of the windows that read it."""
    n, c = shape[:2]
    taps = _Taps(geo, tuple(image), tuple(shape[2:]))
    step = _chunk(n, f * taps.k * max(taps.p + 1, taps.q))

    def run(x, w, out):
        inverse = taps.on(xp, 'inverse')
        weights = w.reshape(groups, c // groups, -1).transpose(0, 2, 1)
        for a in range(0, n, step):
            b = min(n, a + step)
            shifted = workspace(xp, (b - a, c, taps.p + 1), x.dtype, part=_SHIFTED)
            shifted[:, :, :taps.p] = x[a:b].reshape(b - a, c, taps.p)
            shifted[:, :, taps.p] = 0
            shares = workspace(xp, (b - a, groups, f // groups * taps.k, taps.p + 1), x.dtype,
                               part=_SHARES)
            xp.matmul(weights, shifted.reshape(b - a, groups, c // groups, -1), out=shares)
            cols = workspace(xp, (b - a, f, taps.k, taps.q), x.dtype, part=_COLS)
            xp.take(shares.reshape(b - a, f, -1), inverse, axis=2, out=cols)
            cols.sum(axis=2, out=out[a:b].reshape(b - a, f, taps.q))
    return run


def wgrad_engine(xp, geo, groups, g_shape, x_shape):
    """``run(g, x, out)``: the weight gradient (F, C / groups, *kernel) of a convolution of x
    (``x_shape``) whose output has the gradient g (``g_shape``): g as (F, N * P) times the
    windows of x as (C * K, N * P) transposed, per group, summed over chunks of images."""
    n, c = x_shape[:2]
    f = g_shape[1]
    taps = _Taps(geo, tuple(x_shape[2:]), tuple(g_shape[2:]))
    step = _chunk(n, c * taps.k * taps.p)

    def run(g, x, out):
        src = _padded(xp, taps, x).transpose(1, 0, 2)
        product = out.reshape(groups, f // groups, -1)
        for a in range(0, n, step):
            b = min(n, a + step)
            index = taps.on(xp, 'batched', b - a)
            cols = workspace(xp, (c, taps.k, b - a, taps.p), x.dtype, part=_COLS)
            xp.take(xp.ascontiguousarray(src[:, a:b]).reshape(c, -1), index, axis=1, out=cols)
            gm = xp.ascontiguousarray(g[a:b].reshape(b - a, f, -1).transpose(1, 0, 2))
            part = xp.matmul(gm.reshape(groups, f // groups, -1),
                             cols.reshape(groups, -1, (b - a) * taps.p).transpose(0, 2, 1),
                             out=product if a == 0 else None)
            if a:
                product += part
    return run
