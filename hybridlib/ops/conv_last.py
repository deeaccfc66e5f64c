"""Channel-last convolution engines of the CPU: the windows of a batch as an
(N * positions, kernel * C) matrix with the channels innermost.

conv.py's engines copy windows from channel-first images, one run of an image row per kernel
offset and channel: short runs when images are small. Here the images are first made
channel-last (one transpose), so that a window row (the kernel's last axis times the channels)
is one contiguous run and the whole window matrix one strided copy; the products then have the
long axis (batch times positions) first. That is faster for small images with a few dozen
channels (8x8 to 16x16 with 16 to 64), slower for large images, where conv.py's rows are long;
where it pays depends on the machine, so conv.py times both (tuning.py).

The paths keep conv.py's engine signatures: ``path(a, b, out)`` on channel-first arrays and a
C-contiguous out. Groups of one, and depthwise convolutions (``depthwise``: as many groups as
channels).
"""
import functools
import itertools
import math

import numpy as np

from .registry import workspace

__all__ = []

_S = slice(None)
# workspace parts: those of conv.py's engines (0 to 4), which never run at the same time as
# these, so that timing both grows the workspace to the larger of the two, not their sum (the
# operator bodies keep part 5)
_IMAGES, _COLS, _LEFT, _RIGHT, _PRODUCT = 0, 1, 2, 3, 4


class LastWindows:
    """The windows of a convolution geometry over (N, C, *image) images giving ``grid``: as an
    (N * prod(grid), prod(kernel) * C) matrix (``gather``), its adjoint (``scatter``), and the
    permutations between channel-first and channel-last arrays."""

    def __init__(self, geo, n, c, image, grid):
        nd = len(image)
        self.geo, self.n, self.c, self.image, self.grid = geo, n, c, image, grid
        self.padded = tuple(i + 2 * p for i, p in zip(image, geo.pad))
        self.rows = n * math.prod(grid)
        self.to_last = (0,) + tuple(range(2, nd + 2)) + (1,)
        self.to_first = (0, nd + 1) + tuple(range(1, nd + 1))
        self.interior = (_S,) + tuple(slice(p, p + i) for p, i in zip(geo.pad, image)) + (_S,)
        self.border = [(_S,) * (d + 1) + (edge,) for d, (p, i) in enumerate(zip(geo.pad, image))
                       if p for edge in (slice(0, p), slice(p + i, None))]
        self.cols_shape = (n,) + tuple(grid) + tuple(geo.kernel) + (c,)
        # the positions of kernel offset kk over the grid, in the padded image
        self.offsets = [(kk, (_S,) + tuple(slice(k * d, k * d + (m - 1) * s + 1, s) for k, d, m, s
                                           in zip(kk, geo.dilate, grid, geo.stride)))
                        for kk in itertools.product(*(range(k) for k in geo.kernel))]

    def _images(self, xp, dtype):
        return workspace(xp, (self.n,) + self.padded + (self.c,), dtype, part=_IMAGES)

    def windows(self, xp, x):
        """The windows of x (N, C, *image): a strided (N, *grid, *kernel, C) view of its
        channel-last padded images in the workspace."""
        images = self._images(xp, x.dtype)
        for slab in self.border:        # zero the padding only: the rest is written next
            images[slab] = 0
        images[self.interior] = x.transpose(self.to_last)
        s, geo = images.strides, self.geo
        return np.lib.stride_tricks.as_strided(
            images, self.cols_shape,
            (s[0],) + tuple(st * k for st, k in zip(s[1:-1], geo.stride))
            + tuple(st * d for st, d in zip(s[1:-1], geo.dilate)) + (s[-1],))

    def gather(self, xp, x):
        """The windows of x (N, C, *image) as an (N * P, K * C) matrix in the workspace."""
        cols = workspace(xp, self.cols_shape, x.dtype, part=_COLS)
        cols[...] = self.windows(xp, x)
        return cols.reshape(self.rows, -1)

    def scatter(self, xp, cols, out):
        """Sum an (N * P, K * C) matrix of windows into out (N, C, *image)."""
        images = self._images(xp, cols.dtype)
        images.fill(0)
        windows = cols.reshape(self.cols_shape)
        lead = (_S,) * (1 + len(self.grid))
        for kk, at in self.offsets:
            target = images[at]
            xp.add(target, windows[lead + kk], out=target)
        out[...] = images[self.interior].transpose(self.to_first)
        return out

    def last(self, xp, y, part):
        """y (N, F, *grid) as an (N * P, F) matrix in the workspace."""
        matrix = workspace(xp, (self.n,) + tuple(self.grid) + (y.shape[1],), y.dtype, part=part)
        matrix[...] = y.transpose(self.to_last)
        return matrix.reshape(self.rows, -1)

    def first(self, matrix, out):
        """Write an (N * P, F) matrix into out (N, F, *grid)."""
        out[...] = matrix.reshape((self.n,) + tuple(self.grid) + (-1,)).transpose(self.to_first)
        return out


@functools.lru_cache(maxsize=256)
def _last_windows(geo, n, c, image, grid):
    return LastWindows(geo, n, c, image, grid)


def path(fn, geo, n, c, image, grid):
    """``fn(a, b, out)`` (one of the paths below) on numpy, for (n, c, *image) images giving
    ``grid``."""
    return functools.partial(fn, np, _last_windows(geo, n, c, tuple(image), tuple(grid)))


def _weight_last(xp, w, part):
    """w (A, B, *kernel) as an (A, K * B) matrix, kernel before B, in the workspace."""
    matrix = workspace(xp, (w.shape[0],) + w.shape[2:] + (w.shape[1],), w.dtype, part=part)
    matrix[...] = w.transpose((0,) + tuple(range(2, w.ndim)) + (1,))
    return matrix.reshape(w.shape[0], -1)


def conv(xp, win, x, w, out):
    """Convolution of x (N, C, *image) with w (F, C, *kernel) into out (N, F, *grid)."""
    cols = win.gather(xp, x)
    product = workspace(xp, (win.rows, w.shape[0]), x.dtype, part=_PRODUCT)
    xp.matmul(cols, _weight_last(xp, w, _RIGHT).T, out=product)
    win.first(product, out)


def wgrad(xp, win, g, x, out):
    """The weight gradient (F, C, *kernel) for the output gradient g (N, F, *grid) and the
    data x (N, C, *image)."""
    cols = win.gather(xp, x)
    product = workspace(xp, (g.shape[1], cols.shape[1]), x.dtype, part=_PRODUCT)
    xp.matmul(win.last(xp, g, _LEFT).T, cols, out=product)
    # (F, *kernel, C) -> (F, C, *kernel): the permutation of (N, *grid, F) -> (N, F, *grid)
    out[...] = product.reshape((g.shape[1],) + tuple(win.geo.kernel) + (win.c,)).transpose(
        win.to_first)


def depthwise(xp, win, x, w, out):
    """A depthwise convolution of x (N, C, *image) with w (C * M, 1, *kernel) (C groups, M
    filters each) into out (N, C * M, *grid): the windows' products with the weight summed
    over the kernel (one einsum over the strided windows, which are not copied)."""
    nd = len(win.grid)
    kernel = tuple(win.geo.kernel)
    weight = workspace(xp, kernel + (win.c, w.shape[0] // win.c), w.dtype, part=_RIGHT)
    weight[...] = w.reshape((win.c, -1) + kernel).transpose(
        tuple(range(2, nd + 2)) + (0, 1))
    product = workspace(xp, (win.n,) + tuple(win.grid) + weight.shape[-2:], x.dtype,
                        part=_PRODUCT)
    xp.einsum(_DEPTHWISE[nd], win.windows(xp, x), weight, out=product)
    win.first(product.reshape(win.rows, -1), out)


# n, grid, kernel, channel, multiplier
_DEPTHWISE = {1: 'nxkc,kcm->nxcm', 2: 'nxykjc,kjcm->nxycm', 3: 'nxyzkjic,kjicm->nxyzcm'}


def deconv(xp, win, x, w, out):
    """Transposed convolution of x (N, C, *grid) with w (C, F, *kernel) into out
    (N, F, *image): the windows x times w gives, summed into their images."""
    cols = workspace(xp, (win.rows, math.prod(w.shape[1:])), x.dtype, part=_COLS)
    xp.matmul(win.last(xp, x, _LEFT), _weight_last(xp, w, _RIGHT), out=cols)
    win.scatter(xp, cols, out)


def deconv_by_conv(xp, win, x, w, out):
    """Transposed convolution with stride 1 as the convolution of x with the weight flipped
    and transposed, its windows over the padding ``dilate * (kernel - 1) - pad`` (``win``):
    a gather instead of a scatter."""
    flipped = workspace(xp, (w.shape[1], w.shape[0]) + w.shape[2:], w.dtype, part=_LEFT)
    flipped[...] = w[(_S, _S) + (slice(None, None, -1),) * (w.ndim - 2)].swapaxes(0, 1)
    conv(xp, win, x, flipped, out)


def deconv_path(geo, n, c, f, image, grid):
    """The channel-last path of a transposed convolution of (N, c, *grid) into (N, f, *image):
    by a flipped convolution where its padding is not negative (stride 1), else by scatter."""
    pads = tuple(d * (k - 1) - p for k, d, p in zip(geo.kernel, geo.dilate, geo.pad))
    if set(geo.stride) == {1} and min(pads) >= 0:
        return path(deconv_by_conv, geo._replace(pad=pads), n, c, grid, image)
    return path(deconv, geo, n, f, image, grid)


ENGINE_PATHS = (conv, depthwise, wgrad, deconv, deconv_by_conv, LastWindows.gather,
                LastWindows.scatter)
