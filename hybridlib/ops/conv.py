"""Convolution and deconvolution: ``Convolution``, ``Deconvolution``, ``im2col``/``col2im`` and
the internal backward operators their gradients are made of.

All window operators share one geometry (MXNet's): along each spatial axis, window ``o`` and
kernel offset ``k`` touch input position ``o * stride + k * dilate - pad``. Convolution is the
windows of the whole batch as one matrix (``_Windows``: im2col, copied once from a strided
view) and one matmul per group; its transpose (Deconvolution, col2im) is a matmul and a
scatter-add with one vectorised statement per kernel offset. On a GPU, the engines of
conv_gpu.py gather every window at once instead. On the CPU, where conv_last.py has a
channel-last path for the shapes (groups of one, depthwise), the two are timed on the first
call of each shape and the faster is kept (tuning.py): which wins depends on the image size,
the channels and the machine. Channel-last layouts (NWC/NHWC/NDHWC) are computed on
channel-first views.

Gradients are written with registered operators only, so they differentiate again:
Convolution's data gradient is a Deconvolution with the same weight (``adj`` restoring the
input size), its weight gradient is ``_backward_Convolution_weight``, whose own gradients are a
Convolution and a Deconvolution.

Pooling (pooling.py) and the resizing operators (UpSampling, AdaptiveAvgPooling2D,
BilinearResize2D; resize.py) import the geometry helpers they share with this file from here.
"""
import collections
import functools
import itertools
import math

import numpy as np

from ..base import DTypeError, ShapeError
from . import conv_gpu, conv_last, tuning
from .attrs import Bool, Count, Int, Shape, Str
from .registry import (BackwardNode, ChannelRows, merge_shape, output, register, same_dtype,
                       workspace)

__all__ = []

_CONV_LAYOUTS = ('NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC')
_POOL_LAYOUTS = _CONV_LAYOUTS + ('NWC',)
_DEFAULT_LAYOUT = {1: 'NCW', 2: 'NCHW', 3: 'NCDHW'}
_S = slice(None)

Geom = collections.namedtuple('Geom', 'kernel stride dilate pad')


# -------------------------------------------------------------------------------------------------
# Geometry, layouts and attribute checks
# -------------------------------------------------------------------------------------------------

def _expand(values, nd, default):
    return tuple(values) if values else (default,) * nd


def _geom(attrs):
    nd = len(attrs.kernel)
    return Geom(tuple(attrs.kernel), _expand(attrs.stride, nd, 1),
                _expand(attrs.get('dilate'), nd, 1), _expand(attrs.pad, nd, 0))


def _dilated(geo):
    return tuple(d * (k - 1) + 1 for k, d in zip(geo.kernel, geo.dilate))


def _is_channel_last(layout, nd):
    return (layout or _DEFAULT_LAYOUT.get(nd, 'NC'))[-1] == 'C'


def _split(shape, cl):
    """(batch, channels, spatial) of a shape in channel-first or channel-last order."""
    if cl:
        return shape[0], shape[-1], tuple(shape[1:-1])
    return shape[0], shape[1], tuple(shape[2:])


def _join(n, c, spatial, cl):
    return (n,) + tuple(spatial) + (c,) if cl else (n, c) + tuple(spatial)


def _to_cf(x, cl):
    return x if not cl else x.transpose((0, x.ndim - 1) + tuple(range(1, x.ndim - 1)))


def _from_cf(xp, x, cl):
    if not cl:
        return x
    return xp.ascontiguousarray(x.transpose((0,) + tuple(range(2, x.ndim)) + (1,)))


def _check_rank(shape, rank, what, op):
    if shape is not None and len(shape) != rank:
        raise ShapeError(f'{op}: {what} must have {rank} dimensions for a {rank - 2}-d window, '
                         f'got shape {tuple(shape)}')
    return None if shape is None else tuple(shape)


def _check_window(attrs, names):
    """Shared attribute rules of the window operators (ValueError -> AttributeParseError)."""
    kernel = attrs.kernel
    nd = len(kernel)
    if not 1 <= nd <= 3:
        raise ValueError(f'kernel must have 1 to 3 dimensions (1-D, 2-D or 3-D), got {kernel}')
    if min(kernel) < 1:
        raise ValueError(f'kernel must be positive, got {kernel}')
    for name in names:
        value = attrs.get(name) or ()
        if value and len(value) != nd:
            raise ValueError(f'{name} {value} must have as many dimensions as kernel {kernel}')
        low = 0 if name in ('pad', 'adj', 'target_shape') else 1
        if value and min(value) < low:
            raise ValueError(f'{name} must be >= {low}, got {value}')
    layout = attrs.get('layout')
    if layout and len(layout) != nd + 2:
        raise ValueError(f'layout {layout} does not fit the {nd}-d kernel {kernel}')


def _check_conv(attrs):
    _check_window(attrs, ('stride', 'dilate', 'pad', 'adj', 'target_shape'))
    if attrs.num_filter < 1 or attrs.num_group < 1:
        raise ValueError(f'num_filter ({attrs.num_filter}) and num_group ({attrs.num_group}) '
                         'must be positive')
    if attrs.num_filter % attrs.num_group:
        raise ValueError(f'num_filter {attrs.num_filter} must be divisible by num_group '
                         f'{attrs.num_group}')
    target = attrs.get('target_shape')
    if target and any(target) and not all(target):
        raise ValueError(f'target_shape {target} must give every spatial size')


def _float_types(attrs, *dtypes):
    """One dtype for every input and the output, and a floating one (MXNet's kernels)."""
    ins, outs = same_dtype(attrs, *dtypes)
    if outs[0] is not None and outs[0].kind != 'f':
        raise DTypeError(f'this operator supports floating point types only, not '
                         f'{outs[0].name}')
    return ins, outs


def _conv_size(n, k, s, d, p, op='Convolution'):
    """Output size of a convolution window along one axis (0 when ``n`` is unknown)."""
    if not n:
        return 0
    dk = d * (k - 1) + 1
    if dk > n + 2 * p:
        raise ShapeError(f'{op}: kernel size {dk} (dilated) exceeds the input size {n} padded '
                         f'to {n + 2 * p}')
    return (n + 2 * p - dk) // s + 1


def _deconv_geom(attrs, spatial):
    """(geometry with the effective pad, output sizes) of a Deconvolution on ``spatial``.

    A ``target_shape`` replaces pad and adj as MXNet's ``InferPad`` does: total = stride *
    (n - 1) + dilated kernel - target, pad = ceil(total / 2) on both sides, adj = total % 2.
    """
    geo = _geom(attrs)
    target = attrs.target_shape if any(attrs.target_shape) else None
    pads, out = [], []
    for i, (n, s, dk) in enumerate(zip(spatial, geo.stride, _dilated(geo))):
        full = s * (n - 1) + dk
        if target:
            total = full - target[i] if n else 0
            if total < 0:
                raise ShapeError(f'Deconvolution: target_shape {tuple(target)} is too big for '
                                 f'input size {tuple(spatial)} (at most {full})')
            p, a = (total + 1) // 2, total % 2
        else:
            p, a = geo.pad[i], (attrs.adj or (0,) * len(spatial))[i]
        if a >= s:
            raise ShapeError(f'Deconvolution: adj {a} must be smaller than stride {s}')
        if n and full - 2 * p + a < 1:
            raise ShapeError(f'Deconvolution: pad {geo.pad} leaves no output for input size '
                             f'{tuple(spatial)}')
        pads.append(p)
        out.append(target[i] if target else full - 2 * p + a if n else 0)
    return geo._replace(pad=tuple(pads)), tuple(out)


@functools.lru_cache(maxsize=1024)
def _taps(geo, image, grid):
    """(offset, grid slices, image slices) for every kernel offset touching the image.

    Window ``o`` at kernel offset ``k`` reads image position ``o * s + k * d - p``; the grid
    range is clipped to the windows for which that position lies inside the image.
    """
    per_dim = []
    for n, m, k, s, d, p in zip(image, grid, *geo):
        taps = []
        for kk in range(k):
            off = kk * d - p
            o0, o1 = max(0, -(off // s)), min(m, (n - 1 - off) // s + 1)
            if o1 > o0:
                taps.append((kk, slice(o0, o1), slice(o0 * s + off, (o1 - 1) * s + off + 1, s)))
        per_dim.append(taps)
    return [(tuple(t[0] for t in combo), (_S, _S) + tuple(t[1] for t in combo),
             (_S, _S) + tuple(t[2] for t in combo)) for combo in itertools.product(*per_dim)]


# -------------------------------------------------------------------------------------------------
# Numerical kernels (channel-first arrays of the array module ``xp``)
# -------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1024)
def _window_copies(geo, image, grid):
    """How to write the windows of an image into columns (N, C, *kernel, *grid):
    (copies, zeros): ``cols[dst] = x[src]`` per kernel offset, and ``cols[z] = 0`` for the
    window positions that fall into the padding (so that no padded image is made)."""
    copies, zeros = [], []
    live = {kk: gsl[2:] for kk, gsl, _ in _taps(geo, image, grid)}
    for kk, gsl, isl in _taps(geo, image, grid):
        copies.append(((_S, _S) + kk + gsl[2:], isl))
    for kk in itertools.product(*(range(k) for k in geo.kernel)):
        head = (_S, _S) + kk
        if kk not in live:
            zeros.append(head)
            continue
        inner = live[kk]
        for d, (m, sl) in enumerate(zip(grid, inner)):     # the slabs outside, axis by axis
            for out_range in (slice(0, sl.start), slice(sl.stop, m)):
                if out_range.stop > out_range.start:
                    zeros.append(head + inner[:d] + (out_range,) + (_S,) * (len(grid) - d - 1))
    return copies, zeros


def _im2col(xp, x, geo, grid, cols=None):
    """The windows of ``x`` (N, C, *spatial), zero padded, as (N, C, *kernel, *grid) columns
    (written into ``cols`` when given)."""
    if cols is None:
        cols = xp.empty(_cols_shape(x.shape, geo, grid), dtype=x.dtype)
    copies, zeros = _window_copies(geo, tuple(x.shape[2:]), tuple(grid))
    for dst, src in copies:
        cols[dst] = x[src]
    for z in zeros:
        cols[z] = 0
    return cols


def _cols_shape(x_shape, geo, grid):
    return tuple(x_shape[:2]) + tuple(geo.kernel) + tuple(grid)


def _col2im(xp, cols, geo, image):
    """Sum (N, C, *kernel, *grid) windows back into a zero (N, C, *image) array."""
    grid = cols.shape[2 + len(geo.kernel):]
    out = xp.zeros(cols.shape[:2] + tuple(image), dtype=cols.dtype)
    for kk, gsl, isl in _taps(geo, tuple(image), tuple(grid)):
        out[isl] += cols[(_S, _S) + kk + gsl[2:]]
    return out


# -------------------------------------------------------------------------------------------------
# The convolution engine: the windows of a batch as one matrix, one matmul per group
# -------------------------------------------------------------------------------------------------

# multiply-adds that cost about as much as copying one element (measured on float32 BLAS)
_WIDE_COST = 32
# the weight gradient is windows x gradient^T while the weight has at most this many elements
# per window position (measured: LeNet's small weights gain, ResNet's large ones lose up to 6x)
_SMALL_WEIGHT = 32
# a convolution by kernel rows needs products at least this deep (LeNet's first layer, 1
# channel x 5 rows, is faster as one matmul over all 25 offsets) and, its matmuls being one per
# image, at least this many times as long per image as deep (measured: CIFAR ResNets' 8x8
# stage, 64 channels, 80 positions for a depth of 192, is 10-25% slower by rows; their 16x16
# stage, 32 channels, 288 positions for 96, up to 25% faster; ImageNet ResNets' 56x56 and 28x28
# stages go by rows)
_ROWS_MIN_DEPTH = 32
_ROWS_MIN_LENGTH = 2
# a convolution with at most this many weights per filter (LeNet's first layer: 25) is one
# matmul per image (measured: 30% faster there, 50% slower at LeNet's second layer's 500)
_THIN_DEPTH = 32


class _Windows:
    """The windows of a convolution geometry over a batch of (N, C, *image) images, as one
    matrix (C * prod(kernel), N * P) with P positions per image: ``gather`` (im2col) and its
    adjoint ``scatter`` (col2im), and ``fold``/``unfold`` between (N, F, *out) arrays and the
    matching (F, N * P) matrices. Convolution, its two gradients and Deconvolution are then a
    single matmul per group, whatever the batch size.

    With stride 1 the positions may be *wide*: whole rows of the padded image (P = out[0] *
    padded[1] * ...), so that each kernel offset is one contiguous run of the flat padded image
    and the matrix one strided copy with long inner runs; the extra positions are dropped by
    ``unfold``, zero in ``fold`` (so ``scatter`` adds nothing for them). Each extra position
    costs the matmul ``other`` (its other dimension: the filters of a group) multiply-adds per
    window element against one copied element saved, so small images with many filters (ResNet's
    7x7 stage: 29% more positions, 512 filters) take the exact windows. Otherwise P = prod(out)
    and each kernel offset is a copy clipped to the image (``_taps``), with zeros where a
    window overhangs it. ``gather`` and ``scatter`` are the methods of the kind chosen.
    """

    def __init__(self, geo, n, c, image, grid, other):
        self.geo, self.n, self.c, self.image, self.grid = geo, n, c, image, grid
        nd = len(grid)
        self.padded = tuple(i + 2 * p for i, p in zip(image, geo.pad))
        wide, exact = (grid[0],) + self.padded[1:], math.prod(grid)
        extra = math.prod(wide) - exact
        self.wide = set(geo.stride) == {1} and nd > 1 and \
            extra <= 0.5 * exact and extra * other <= _WIDE_COST * exact
        self.positions = wide if self.wide else grid
        self.p = math.prod(self.positions)
        self.valid = (_S, _S) + tuple(slice(0, m) for m in grid)
        self.cols_shape = (c,) + tuple(geo.kernel) + (n, self.p)
        if self.wide:
            rows = [math.prod(self.padded[d + 1:]) for d in range(nd)]
            self.interior = (_S, _S) + tuple(slice(p, p + i) for p, i in zip(geo.pad, image))
            self.border = [(_S, _S) + (_S,) * d + (edge,) for d, (p, i) in
                           enumerate(zip(geo.pad, image)) if p
                           for edge in (slice(0, p), slice(p + i, None))]
            self.image_size = math.prod(self.padded)
            # the last window of a row reads past the image's end by the kernel's overhang
            self.flat = self.image_size + sum(
                d * (k - 1) * r for k, d, r in zip(geo.kernel[1:], geo.dilate[1:], rows[1:]))
            self.steps = tuple(d * r for d, r in zip(geo.dilate, rows))
            self.runs = [(kk, sum(k * st for k, st in zip(kk, self.steps)))
                         for kk in itertools.product(*(range(k) for k in geo.kernel))]
            # convolve_rows: the runs of the leading kernel axes, each long enough for every
            # offset of the last axis
            self.row_starts = [start for kk, start in self.runs if kk[-1] == 0]
            self.row_length = self.p + (geo.kernel[-1] - 1) * self.steps[-1]
            self.gather, self.scatter = self._gather_wide, self._scatter_wide
        else:
            copies, zeros = _window_copies(geo, image, grid)
            # (N, C, *kernel, *out) indexes of _window_copies in the (C, *kernel, N, *out) order
            self.copies = [(d[1:2 + nd] + (_S,) + d[2 + nd:], src) for d, src in copies]
            self.zeros = [z[1:2 + nd] + (_S,) + z[2 + nd:] for z in zeros]
            self.gather, self.scatter = self._gather_exact, self._scatter_exact

    def _gather_wide(self, xp, x):
        """The windows of x (N, C, *image) as a (C * prod(kernel), N * P) matrix (wide
        positions): one strided copy of the flat padded images."""
        cols = workspace(xp, self.cols_shape, x.dtype)
        flat = self._padded(xp, x)
        unit = flat.itemsize
        sn, sc = flat.strides[:2]
        cols[...] = xp.lib.stride_tricks.as_strided(
            flat, self.cols_shape, (sc,) + tuple(st * unit for st in self.steps) + (sn, unit))
        return cols.reshape(-1, self.n * self.p)

    def _gather_exact(self, xp, x):
        """The windows of x (N, C, *image) as a (C * prod(kernel), N * P) matrix (exact
        positions): a copy clipped to the image per kernel offset, zeros around it."""
        cols = workspace(xp, self.cols_shape, x.dtype)
        grid = cols.reshape(cols.shape[:-1] + self.grid)
        for dst, src in self.copies:
            grid[dst] = x[src].swapaxes(0, 1)
        for z in self.zeros:
            grid[z] = 0
        return cols.reshape(-1, self.n * self.p)

    def _scatter_wide(self, xp, cols, out):
        """Sum a (C * prod(kernel), N * P) matrix of windows back into out (N, C, *image)
        (wide positions): one add per kernel offset into the flat padded images."""
        cols = cols.reshape(self.cols_shape)
        flat, image = self._flat(xp, cols.dtype)
        flat.fill(0)
        for kk, start in self.runs:
            run = flat[:, :, start:start + self.p]
            xp.add(run, cols[(_S,) + kk].swapaxes(0, 1), out=run)
        out[...] = image[self.interior]
        return out

    def _scatter_exact(self, xp, cols, out):
        """Sum a (C * prod(kernel), N * P) matrix of windows back into out (N, C, *image)
        (exact positions): one add per kernel offset, clipped to the image."""
        grid = cols.reshape(self.cols_shape[:-1] + self.grid)
        out.fill(0)
        for dst, src in self.copies:
            view = out[src]
            xp.add(view, grid[dst].swapaxes(0, 1), out=view)
        return out

    def fold(self, xp, y):
        """y (N, F, *out) as an (F, N * P) matrix (zero at the extra wide positions)."""
        buf = workspace(xp, (y.shape[1], self.n) + self.positions, y.dtype, part=1)
        if self.wide:
            buf.fill(0)
        buf[self.valid] = y.swapaxes(0, 1)
        return buf.reshape(y.shape[1], -1)

    def unfold(self, matrix, out):
        """Write an (F, N * P) matrix into out (N, F, *out)."""
        full = matrix.reshape((out.shape[1], self.n) + self.positions)
        out[...] = full[self.valid].swapaxes(0, 1)
        return out

    def by_rows(self, f, groups):
        """Whether ``convolve_rows`` beats gather + one matmul for f filters: it copies the
        windows of the leading kernel axes only (a 3x3 kernel: 3 copies of each image instead
        of 9), at the price of one pass over the output per other offset of the last axis, of
        the weight reordered per call and of one matmul per image: it pays while the copies
        saved outnumber the weight's elements and the products are deep enough and, per image,
        long enough for their depth (measured on float32 numpy)."""
        if not self.wide:
            return False
        last = self.geo.kernel[-1]
        depth = self.c // groups * len(self.row_starts)
        return last > 1 and depth >= _ROWS_MIN_DEPTH and self.p >= _ROWS_MIN_LENGTH * depth \
            and (last - 1) * self.n * self.p * groups >= f * last

    def convolve_rows(self, xp, groups, x, w, out):
        """The convolution of x with w (F, C / groups, *kernel) written into out (N, F, *grid),
        by kernel rows (wide positions only). The windows of the leading kernel axes are copied
        once, each a run of the flat padded image long enough for every offset of the last
        axis; the windows of one offset of the last axis are then a strided view of that
        matrix, and the convolution one matmul per offset of the last axis, summed."""
        n, c, f, last = self.n, self.c, w.shape[0], self.geo.kernel[-1]
        step, starts, length = self.steps[-1], self.row_starts, self.row_length
        flat = self._padded(xp, x)
        cols = workspace(xp, (n, c, len(starts), length), x.dtype)
        for j, start in enumerate(starts):
            cols[:, :, j] = flat[:, :, start:start + length]
        cols = cols.reshape(n, groups, -1, length)
        # the weight of one offset of the last axis is a strided (F, C / groups * rows) matrix
        weights = workspace(xp, (last, groups, f // groups, cols.shape[2]), w.dtype, part=3)
        by_offset = w.reshape(groups, f // groups, -1, last)
        total = workspace(xp, (n, groups, f // groups, self.p), x.dtype, part=1)
        term = workspace(xp, total.shape, x.dtype, part=4)
        for j in range(last):
            weights[j] = by_offset[..., j]
            xp.matmul(weights[j], cols[..., j * step:j * step + self.p], out=term if j else total)
            if j:
                xp.add(total, term, out=total)
        out[...] = total.reshape((n, f) + self.positions)[self.valid]
        return out

    def _padded(self, xp, x):
        """x (N, C, *image) written into the flat padded images of the workspace, which it
        returns (N, C, flat): zeros on the border and past the end, x inside."""
        flat, image = self._flat(xp, x.dtype)
        for slab in self.border:        # zero the padding only: the rest is written next
            image[slab] = 0
        flat[:, :, self.image_size:] = 0
        image[self.interior] = x
        return flat

    def _flat(self, xp, dtype):
        """The flat padded images (N, C, flat) in the workspace, and their (N, C, *padded)
        view."""
        flat = workspace(xp, (self.n, self.c, self.flat), dtype, part=2)
        return flat, flat[:, :, :self.image_size].reshape((self.n, self.c) + self.padded)


@functools.lru_cache(maxsize=256)
def _windows(geo, n, c, image, grid, other):
    return _Windows(geo, n, c, tuple(image), tuple(grid), other)


def _is_pointwise(geo):
    return all(k == 1 for k in geo.kernel) and not any(geo.pad) and set(geo.stride) == {1}


# The paths of the engine, ``path(*plan, a, b, out)`` with the plan that ``_conv_engine``,
# ``_deconv_engine`` or ``_wgrad_engine`` made for the shapes: inputs and out channel-first and
# out C-contiguous (the engines write through reshaped views of it).

def _conv_pointwise(xp, weights, images, outputs, x, w, out):
    """A 1x1 convolution (stride 1, no padding): the pixels are the windows, so one matmul per
    image and group, without a copy."""
    xp.matmul(w.reshape(weights), x.reshape(images), out=out.reshape(outputs))


def _conv_per_image(xp, geo, grid, weights, images, outputs, x, w, out):
    """A thin product (few weights per filter): the windows of each image (im2col, in the
    workspace) times the weight, one matmul per image and group straight into out, which
    needs no reordering."""
    cols = _im2col(xp, x, geo, grid, workspace(xp, _cols_shape(x.shape, geo, grid), x.dtype))
    xp.matmul(w.reshape(weights), cols.reshape(images), out=out.reshape(outputs))


def _conv_windows(xp, win, weights, x, w, out):
    """The windows of the whole batch as one matrix times the weight, one matmul per group,
    then reordered into out."""
    product = workspace(xp, weights[:2] + (win.n * win.p,), x.dtype, part=1)
    xp.matmul(w.reshape(weights), win.gather(xp, x).reshape(weights[0], -1, win.n * win.p),
              out=product)
    win.unfold(product, out)


def _conv_windows_direct(xp, win, weights, x, w, out):
    """``_conv_windows`` for one image and exact positions: the product is laid out as out
    is, so the matmul writes it."""
    xp.matmul(w.reshape(weights), win.gather(xp, x).reshape(weights[0], -1, win.p),
              out=out.reshape(weights[:2] + (win.p,)))


def _deconv_windows(xp, win, groups, x, w, out):
    """Transposed convolution of x (N, C, *grid) with w (C, F / groups, *kernel): the weight's
    transpose times x gives the windows of the (N, F, *image) output, summed into it."""
    c = x.shape[1]
    xm = win.fold(xp, x).reshape(groups, c // groups, -1)
    wm = w.reshape(groups, c // groups, -1).transpose(0, 2, 1)
    cols = workspace(xp, (groups, wm.shape[1], win.n * win.p), x.dtype)
    xp.matmul(wm, xm, out=cols)
    win.scatter(xp, cols, out)


def _wgrad_by_gradient(xp, win, groups, g, x, out):
    """The weight gradient (F, C / groups, *kernel) for a large weight: g (N, F, *grid) times
    the windows of x transposed, straight into out."""
    cols = win.gather(xp, x).reshape(groups, -1, win.n * win.p)
    gm = win.fold(xp, g).reshape(groups, g.shape[1] // groups, -1)
    xp.matmul(gm, cols.transpose(0, 2, 1), out=out.reshape(gm.shape[:2] + (-1,)))


def _wgrad_by_windows(xp, win, groups, g, x, out):
    """The weight gradient for a small weight from many windows (LeNet's): BLAS is faster with
    the long axis the other way round, windows times g transposed, and the transposed copy of
    the product is cheap."""
    cols = win.gather(xp, x).reshape(groups, -1, win.n * win.p)
    gm = win.fold(xp, g).reshape(groups, g.shape[1] // groups, -1)
    product = workspace(xp, (groups, cols.shape[1], gm.shape[1]), x.dtype, part=3)
    xp.matmul(cols, gm.transpose(0, 2, 1), out=product)
    out.reshape(gm.shape[:2] + (-1,))[...] = product.transpose(0, 2, 1)


ENGINE_PATHS = (_conv_pointwise, _conv_per_image, _Windows.convolve_rows, _conv_windows,
                _conv_windows_direct, _deconv_windows, _wgrad_by_gradient, _wgrad_by_windows,
                _Windows._gather_wide, _Windows._gather_exact, _Windows._scatter_wide,
                _Windows._scatter_exact)


@functools.lru_cache(maxsize=256)
def _conv_engine(xp, geo, groups, shape, f):
    """``run(x, w, out)``: the convolution of x (``shape``, channel-first) with a weight
    (f, C / groups, *kernel) written into out (N, f, *grid), by the path these shapes take."""
    n, c = shape[:2]
    grid = tuple(_conv_size(*a) for a in zip(shape[2:], *geo))
    weights, outputs = (groups, f // groups, -1), (n, groups, f // groups, -1)
    if _is_pointwise(geo):
        return functools.partial(_conv_pointwise, xp, weights, (n, groups, c // groups, -1),
                                 outputs)
    if xp is not np:
        return conv_gpu.conv_engine(xp, geo, groups, shape, f, grid)
    depth = c // groups * math.prod(geo.kernel)
    win = _windows(geo, n, c, shape[2:], grid, f // groups)
    if depth <= _THIN_DEPTH:
        path = functools.partial(_conv_per_image, xp, geo, grid, weights, (n, groups, depth, -1),
                                 outputs)
    elif win.by_rows(f, groups):
        path = functools.partial(win.convolve_rows, xp, groups)
    elif n == 1 and not win.wide:
        path = functools.partial(_conv_windows_direct, xp, win, weights)
    else:
        path = functools.partial(_conv_windows, xp, win, weights)
    last = conv_last.conv if groups == 1 else \
        conv_last.depthwise if groups == c and f % c == 0 else None
    return _tuned(('Convolution', geo, groups, shape, f), path,
                  last and conv_last.path(last, geo, n, c, shape[2:], grid))


@functools.lru_cache(maxsize=256)
def _deconv_engine(xp, geo, groups, shape, f, image):
    """``run(x, w, out)``: the transposed convolution of x (``shape``, channel-first) with a
    weight (C, f / groups, *kernel) written into out (N, f, *image)."""
    if xp is not np:
        return conv_gpu.deconv_engine(xp, geo, groups, shape, f, image)
    n, c = shape[:2]
    win = _windows(geo, n, f, image, shape[2:], c // groups)
    return _tuned(('Deconvolution', geo, groups, shape, f, image),
                  functools.partial(_deconv_windows, xp, win, groups),
                  groups == 1 and conv_last.deconv_path(geo, n, c, f, image, shape[2:]))


@functools.lru_cache(maxsize=256)
def _wgrad_engine(xp, geo, groups, g_shape, x_shape):
    """``run(g, x, out)``: the convolution weight's gradient for the output gradient g
    (``g_shape``) and the data x (``x_shape``), both channel-first, written into out
    (F, C / groups, *kernel)."""
    if xp is not np:
        return conv_gpu.wgrad_engine(xp, geo, groups, g_shape, x_shape)
    n, c = x_shape[:2]
    f = g_shape[1]
    win = _windows(geo, n, c, x_shape[2:], g_shape[2:], f // groups)
    large = f // groups * (c // groups) * math.prod(geo.kernel) > _SMALL_WEIGHT * n * win.p
    path = functools.partial(_wgrad_by_gradient if large else _wgrad_by_windows, xp, win, groups)
    return _tuned(('wgrad', geo, groups, g_shape, x_shape), path, groups == 1 and conv_last.path(
        conv_last.wgrad, geo, n, c, x_shape[2:], g_shape[2:]))


def _tuned(key, path, last):
    """The rule-based ``path`` alone where the channel-last engine (conv_last.py) has no path
    ``last`` for the shapes, else the faster of the two on this machine, timed on the first
    call."""
    return tuning.Tuned(key, (path, last)) if last else path


def _deconv(xp, x, w, geo, groups, image, out=None):
    """Transposed convolution of x (N, C, *grid) with w (C, F / groups, *kernel) into a new (or
    the given C-contiguous) (N, F, *image) array."""
    f = w.shape[1] * groups
    if out is None:
        out = xp.empty((x.shape[0], f) + tuple(image), dtype=x.dtype)
    _deconv_engine(xp, geo, groups, x.shape, f, tuple(image))(x, w, out)
    return out


def _window_body(xp, run, shape, dtype, cl):
    """The body ``fn(a, b, bias=None, out=None)`` of a window operator whose engine is
    ``run(a, b, out)`` (channel-first arrays): out (``shape``, in the operator's layout, of
    ``dtype``) is written, or made when not given, and the bias (per channel) added. A
    channel-last operator runs the engine on channel-first views of its inputs, into the
    workspace, and writes the result transposed into out."""
    empty = xp.empty
    nd = len(shape) - 2
    if not cl:
        rows = ChannelRows(shape, 1)

        def channel_first(a, b, bias=None, out=None):
            if out is None:
                out = empty(shape, dtype)
            run(a, b, out)
            if bias is not None:
                biased = rows(out)
                biased += rows.spread(xp, bias)
            return out
        return channel_first

    to_cf, to_cl = (0, nd + 1) + tuple(range(1, nd + 1)), (0,) + tuple(range(2, nd + 2)) + (1,)
    result_shape = tuple(shape[i] for i in to_cf)

    def channel_last(a, b, bias=None, out=None):
        if out is None:
            out = empty(shape, dtype)
        result = workspace(xp, result_shape, dtype, part=5)
        run(a.transpose(to_cf), b.transpose(to_cf), result)
        out[...] = result.transpose(to_cl)
        if bias is not None:
            out += bias
        return out
    return channel_last


def _kw(attrs, **override):
    """The attributes as keyword arguments for another operator call (None ones dropped)."""
    merged = dict(attrs, **override)
    return {k: v for k, v in merged.items() if v is not None}


def _shares(xp, a, b):
    """Whether a result may be a view of an input (then the operator returns a copy)."""
    check = getattr(xp, 'may_share_memory', None)
    return True if check is None else bool(check(a, b))


# -------------------------------------------------------------------------------------------------
# Convolution and Deconvolution
# -------------------------------------------------------------------------------------------------

_TUNE = Str(None, choices=('fastest', 'limited_workspace', 'off'))
_CONV_ATTRS = dict(kernel=Shape(), stride=Shape(()), dilate=Shape(()), pad=Shape(()),
                   num_filter=Count(), num_group=Int(1), workspace=Int(1024), no_bias=Bool(False),
                   cudnn_tune=_TUNE, cudnn_off=Bool(False), layout=Str(None, choices=_CONV_LAYOUTS))
_DECONV_ATTRS = dict(kernel=Shape(), stride=Shape(()), dilate=Shape(()), pad=Shape(()),
                     adj=Shape(()), target_shape=Shape(()), num_filter=Count(), num_group=Int(1),
                     workspace=Int(512), no_bias=Bool(True), cudnn_tune=_TUNE,
                     cudnn_off=Bool(False), layout=Str(None, choices=_CONV_LAYOUTS))


def _with_bias(attrs):
    return ('data', 'weight') if attrs.no_bias else ('data', 'weight', 'bias')


def _layout_of(attrs):
    nd = len(attrs.kernel)
    return nd, _is_channel_last(attrs.layout, nd)


def _in_channels(data, weight, axis_of_weight, groups, cl, op):
    """Input channels from the data, else from the weight (``weight[axis] * groups``)."""
    c = _split(data, cl)[1] if data is not None else 0
    if weight is not None:
        wc = weight[axis_of_weight] if axis_of_weight == 0 else _split(weight, cl)[1] * groups
        if c and wc and c != wc:
            raise ShapeError(f'{op}: weight {tuple(weight)} fits {wc} input channels, data '
                             f'{tuple(data)} has {c}')
        c = c or wc
    if c % groups:
        raise ShapeError(f'{op}: input channels {c} must be divisible by num_group {groups}')
    return c


def _conv_infer(attrs, data, weight, bias=None, deconv=False):
    """Shapes of (De)Convolution: the weight and bias from the data and num_filter, the data's
    channels from the weight, the output (0 where unknown)."""
    op = 'Deconvolution' if deconv else 'Convolution'
    nd, cl = _layout_of(attrs)
    data = _check_rank(data, nd + 2, 'data', op)
    weight = _check_rank(weight, nd + 2, 'weight', op)
    g, f = attrs.num_group, attrs.num_filter
    c = _in_channels(data, weight, 0 if deconv else 1, g, cl, op)
    n, _, sp = _split(data, cl) if data is not None else (0, 0, (0,) * nd)
    wshape = _join(c, f // g, attrs.kernel, cl) if deconv else _join(f, c // g, attrs.kernel, cl)
    weight = merge_shape(weight, wshape, 'weight')
    data = _join(n, c, sp, cl) if data is not None or c else None
    out_sp = _deconv_geom(attrs, sp)[1] if deconv else \
        tuple(_conv_size(*a) for a in zip(sp, *_geom(attrs)))
    ins = [data, weight] + ([] if attrs.no_bias else [merge_shape(bias, (f,), 'bias')])
    return ins, [_join(n, f, out_sp, cl)]


def _conv_shapes(attrs, data, weight, bias=None, out_shapes=None):
    """``_conv_infer``, with an unknown batch size of the data taken from the output's, as
    MXNet infers it backwards (the zero state ``sym.zeros((0, C, H, W))`` of a convolutional
    RNN cell gets the batch size so)."""
    out = out_shapes[0] if out_shapes else None
    if data is not None and out is not None and len(out) == len(data) and not data[0]:
        data = (out[0],) + tuple(data[1:])
    return _conv_infer(attrs, data, weight, bias)


def _add_bias(out, bias):
    if bias is not None:
        out += bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


def _conv_data_grad(F, attrs, g, weight, data):
    """The Convolution data gradient: a Deconvolution of ``g`` with the same weight, its
    ``adj`` giving back the input rows a strided window never reached."""
    geo = _geom(attrs)
    cl = _layout_of(attrs)[1]
    _, c, sp = _split(data.shape, cl)
    adj = tuple((n + 2 * p - dk) % s
                for n, p, dk, s in zip(sp, geo.pad, _dilated(geo), geo.stride))
    return F.Deconvolution(g, weight, kernel=geo.kernel, stride=geo.stride, dilate=geo.dilate,
                           pad=geo.pad, adj=adj, num_filter=c, num_group=attrs.num_group,
                           no_bias=True, **_kw(dict(layout=attrs.layout)))


def _bias_grad(F, attrs, inputs, g):
    return [F._backward_Convolution_bias(g, **_kw(dict(layout=attrs.layout)))] \
        if len(inputs) == 3 else []


def _conv_kw(attrs, **override):
    keep = ('kernel', 'stride', 'dilate', 'pad', 'num_filter', 'num_group', 'layout')
    return _kw({k: attrs[k] for k in keep}, **override)


def _conv_backward(attrs):
    """MXNet's backward node reads the gradient, data and weight (and bias)."""
    return BackwardNode(('ograd0', 'in0', 'in1') + (() if attrs.no_bias else ('in2',)))


@register('Convolution')
class Convolution:
    """N-d convolution (1-D/2-D/3-D) with grouped filters, stride, dilation and zero padding.

    ``data`` (N, C, *spatial) (channel-last: (N, *spatial, C)), ``weight``
    (num_filter, C / num_group, *kernel) (channel-last: (num_filter, *kernel, C / num_group)),
    ``bias`` (num_filter,) unless ``no_bias``. Output (N, num_filter, *out) with
    out = (n + 2 * pad - (dilate * (kernel - 1) + 1)) // stride + 1. ``workspace``,
    ``cudnn_tune`` and ``cudnn_off`` only tune MXNet's kernels and are accepted as such.
    """
    inputs = ('data', 'weight', 'bias')
    backward_node = _conv_backward
    list_inputs = _with_bias
    attrs = _CONV_ATTRS
    check = _check_conv
    infer_shape = _conv_shapes
    infer_type = _float_types

    def specialise(xp, attrs, shapes, dtypes, is_train):
        cl = _layout_of(attrs)[1]
        n, c, sp = _split(shapes[0], cl)
        geo, f = _geom(attrs), shapes[1][0]
        run = _conv_engine(xp, geo, attrs.num_group, (n, c) + sp, f)
        grid = tuple(_conv_size(*a) for a in zip(sp, *geo))
        return _window_body(xp, run, _join(n, f, grid, cl), dtypes[0], cl)

    def gradient(F, attrs, inputs, outputs, ograds):
        data, weight, g = inputs[0], inputs[1], ograds[0]
        grads = [_conv_data_grad(F, attrs, g, weight, data),
                 F._backward_Convolution_weight(g, data, **_conv_kw(attrs))]
        return grads + _bias_grad(F, attrs, inputs, g)


@register('_backward_Convolution_weight')
class _backward_Convolution_weight:
    """The gradient of Convolution's weight: ``ograd`` (N, num_filter, *out) correlated with the
    windows of ``data`` (N, C, *spatial); output (num_filter, C / num_group, *kernel).

    Bilinear in (ograd, data): its gradients are a Convolution (of data with the head, for
    ograd) and a Deconvolution (of ograd with the head, for data).
    """
    inputs = ('ograd', 'data')
    attrs = _CONV_ATTRS
    check = _check_conv
    infer_type = _float_types

    def infer_shape(attrs, ograd, data):
        geo = _geom(attrs)
        nd, cl = _layout_of(attrs)
        op = '_backward_Convolution_weight'
        data = _check_rank(data, nd + 2, 'data', op)
        ograd = _check_rank(ograd, nd + 2, 'ograd', op)
        c = _in_channels(data, None, 1, attrs.num_group, cl, op)
        n, _, sp = _split(data, cl) if data is not None else (0, 0, (0,) * nd)
        grid = tuple(_conv_size(*a, op=op) for a in zip(sp, *geo))
        ograd = merge_shape(ograd, _join(n, attrs.num_filter, grid, cl), 'ograd')
        if data is not None:
            data = _join(ograd[0], c, sp, cl)
        return [ograd, data], [_join(attrs.num_filter, c // attrs.num_group, geo.kernel, cl)]

    def specialise(xp, attrs, shapes, dtypes, is_train):
        cl = _layout_of(attrs)[1]
        (n, f, grid), (_, c, sp) = (_split(s, cl) for s in shapes)
        geo, groups = _geom(attrs), attrs.num_group
        run = _wgrad_engine(xp, geo, groups, (n, f) + grid, (n, c) + sp)
        return _window_body(xp, run, _join(f, c // groups, geo.kernel, cl), dtypes[1], cl)

    def gradient(F, attrs, inputs, outputs, ograds):
        g, data = inputs
        head = ograds[0]
        return [F.Convolution(data, head, no_bias=True, **_conv_kw(attrs)),
                _conv_data_grad(F, attrs, g, head, data)]


def _channel_axis(attrs, ndim):
    return ndim - 1 if _is_channel_last(attrs.layout, ndim - 2) else 1


@register('_backward_Convolution_bias')
class _backward_Convolution_bias:
    """The gradient of a convolution bias: ``data`` (N, C, *spatial) summed to (C,) (the
    channel axis is the last one for a channel-last ``layout``)."""
    inputs = ('data',)
    attrs = dict(layout=Str(None, choices=_POOL_LAYOUTS))

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        return [data], [(data[_channel_axis(attrs, len(data))],)]

    def specialise(xp, attrs, shapes, dtypes, is_train):
        rows = ChannelRows(tuple(shapes[0]), _channel_axis(attrs, len(shapes[0])))

        def bias_gradient(data, out=None):
            return output(rows.sums(xp, rows(data)), out)
        return bias_gradient

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._broadcast_Convolution_bias(ograds[0], inputs[0], **_kw(attrs))]


@register('_broadcast_Convolution_bias')
class _broadcast_Convolution_bias:
    """A bias (C,) broadcast along the channel axis of ``like`` (N, C, *spatial): the adjoint
    of ``_backward_Convolution_bias``."""
    inputs = ('bias', 'like')
    attrs = dict(layout=Str(None, choices=_POOL_LAYOUTS))

    def infer_shape(attrs, bias, like):
        if like is None:
            return [bias, like], [None]
        bias = merge_shape(bias, (like[_channel_axis(attrs, len(like))],), 'bias')
        return [bias, like], [like]

    def infer_type(attrs, bias, like):
        return [bias, like], [bias]

    def compute(xp, attrs, bias, like):
        shape = [1] * like.ndim
        shape[_channel_axis(attrs, like.ndim)] = -1
        return xp.ascontiguousarray(xp.broadcast_to(bias.reshape(shape), like.shape))

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_Convolution_bias(ograds[0], **_kw(attrs)), None]


@register('Deconvolution')
class Deconvolution:
    """Transposed convolution (the data gradient of Convolution), 1-D/2-D/3-D, grouped.

    ``data`` (N, C, *spatial), ``weight`` (C, num_filter / num_group, *kernel) (channel-last:
    (C, *kernel, num_filter / num_group)), ``bias`` (num_filter,) when ``no_bias`` is False.
    Output (N, num_filter, *out), out = stride * (n - 1) + dilate * (kernel - 1) + 1
    - 2 * pad + adj; a ``target_shape`` sets out and replaces pad/adj (MXNet's InferPad:
    total = stride * (n - 1) + dilated kernel - target, pad = ceil(total / 2), adj = total % 2).
    """
    inputs = ('data', 'weight', 'bias')
    backward_node = _conv_backward
    list_inputs = _with_bias
    attrs = _DECONV_ATTRS
    check = _check_conv

    def infer_shape(attrs, data, weight, bias=None):
        return _conv_infer(attrs, data, weight, bias, deconv=True)
    infer_type = _float_types

    def specialise(xp, attrs, shapes, dtypes, is_train):
        cl = _layout_of(attrs)[1]
        n, c, sp = _split(shapes[0], cl)
        geo, image = _deconv_geom(attrs, sp)
        groups = attrs.num_group
        f = _split(shapes[1], cl)[1] * groups
        run = _deconv_engine(xp, geo, groups, (n, c) + sp, f, image)
        return _window_body(xp, run, _join(n, f, image, cl), dtypes[0], cl)

    def gradient(F, attrs, inputs, outputs, ograds):
        data, weight, g = inputs[0], inputs[1], ograds[0]
        cl = _layout_of(attrs)[1]
        _, c, sp = _split(data.shape, cl)
        kw = _conv_kw(attrs, pad=_deconv_geom(attrs, sp)[0].pad, num_filter=c)
        grads = [F.Convolution(g, weight, no_bias=True, **kw),
                 F._backward_Convolution_weight(data, g, **kw)]
        return grads + _bias_grad(F, attrs, inputs, g)


# -------------------------------------------------------------------------------------------------
# im2col / col2im
# -------------------------------------------------------------------------------------------------

_IM2COL_ATTRS = dict(kernel=Shape(), stride=Shape(()), dilate=Shape(()), pad=Shape(()))


def _check_im2col(attrs):
    _check_window(attrs, ('stride', 'dilate', 'pad'))
    size = attrs.get('output_size')
    if size is not None and (len(size) != len(attrs.kernel) or min(size) < 1):
        raise ValueError(f'output_size {size} must give a positive size per kernel dimension')


@register('im2col')
class im2col:
    """The sliding windows of ``data`` (N, C, *spatial) as columns: (N, C * prod(kernel), L),
    rows ordered (channel, kernel offsets), L the number of windows (Convolution's output
    positions). MXNet provides the 2-D form; 1-D and 3-D follow the same rule."""
    inputs = ('data',)
    attrs = _IM2COL_ATTRS
    check = _check_im2col

    def infer_shape(attrs, data):
        geo = _geom(attrs)
        data = _check_rank(data, len(geo.kernel) + 2, 'data', 'im2col')
        if data is None:
            return [None], [None]
        grid = [_conv_size(*a, op='im2col') for a in zip(data[2:], *geo)]
        return [data], [(data[0], data[1] * math.prod(geo.kernel),
                         math.prod(grid) if all(grid) else 0)]

    def compute(xp, attrs, data):
        geo = _geom(attrs)
        grid = tuple(_conv_size(*a) for a in zip(data.shape[2:], *geo))
        return _im2col(xp, data, geo, grid).reshape(data.shape[0], -1, math.prod(grid))

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.col2im(ograds[0], output_size=inputs[0].shape[2:], **_kw(attrs))]


@register('col2im')
class col2im:
    """The adjoint of im2col: columns (N, C * prod(kernel), L) summed back into an image
    (N, C, *output_size) (overlapping windows add up)."""
    inputs = ('data',)
    attrs = dict(output_size=Shape(), **_IM2COL_ATTRS)
    check = _check_im2col

    def infer_shape(attrs, data):
        geo = _geom(attrs)
        data = _check_rank(data, 3, 'data', 'col2im')
        if data is None:
            return [None], [None]
        k = math.prod(geo.kernel)
        grid = math.prod(_conv_size(*a, op='col2im') for a in zip(attrs.output_size, *geo))
        if data[1] % k or data[2] and data[2] != grid:
            raise ShapeError(f'col2im: data {tuple(data)} does not hold C * {k} rows of {grid} '
                             f'windows of output_size {attrs.output_size}')
        return [(data[0], data[1], grid)], [(data[0], data[1] // k) + tuple(attrs.output_size)]

    def compute(xp, attrs, data):
        geo = _geom(attrs)
        image = tuple(attrs.output_size)
        grid = tuple(_conv_size(*a) for a in zip(image, *geo))
        cols = data.reshape((data.shape[0], -1) + geo.kernel + grid)
        return _col2im(xp, cols, geo, image)

    def gradient(F, attrs, inputs, outputs, ograds):
        kw = _kw(attrs)
        del kw['output_size']
        return [F.im2col(ograds[0], **kw)]
