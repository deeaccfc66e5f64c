"""ROIAlign (Mask R-CNN): ``_contrib_ROIAlign`` and its backward operator ``_backward_ROIAlign``.

Region features pooled by bilinear sampling, without rounding any coordinate: each of a roi's
PH x PW bins averages a regular grid of bilinear samples. It follows MXNet 1.9.1's CPU kernel
(Detectron's, from Caffe2), and shares the bilinear taps of the other ROI poolings
(``detection.py``):

* a roi ``[image, x1, y1, x2, y2]`` is scaled by ``spatial_scale`` and, with ``aligned``,
  shifted by -0.5 (Detectron2's half-pixel alignment; the roi must then have a positive
  size); without it, a roi is at least 1 x 1;
* each bin holds ``sample_ratio``^2 samples, or ``ceil(bin size)`` per axis when
  ``sample_ratio`` <= 0, at the centres of a regular grid;
* a sample more than one pixel outside the image counts as 0; one less than that reads the
  nearest border pixels (coordinates below 0 read as 0, past the last pixel as the last);
* a roi whose image index is negative gives zeros (MXNet documents this, and its GPU kernel
  does it; its CPU kernel zeroes element n of the whole output and leaves roi n unset).

Those rules hold per axis and a bin's samples are the outer product of its sample rows and
columns, so the pooling is separable: roi r's bins are ``Ay @ data[image] @ Ax^T``, Ay (PH,
H) holding each bin row's summed bilinear weights of the image rows, Ax (PW, W) the columns'.
Both are zero outside the rows and columns the roi reads, so each roi multiplies just that
window of data (a view, channels last), two matrix products; the gradient is the transpose,
added into the window. That is far less memory traffic than gathering four taps per sample,
and needs no scatter. Coordinates and weights are computed in MXNet's order of operations;
the sums run in another order than its kernel's, so float32 results agree with MXNet's to
float32 rounding. Float32 data computes in float32, float64 in float64, float16 in float32.
"""
import numpy as np

from ..base import MXNetError, ShapeError
from .attrs import Bool, Float, Int, Shape
from .contrib import _check_rank, _dim, _work_dtype
from .detection import _as, _axis_taps, _pooled_size_check, _roi_shapes
from .gather import _scatter_add as _add_at
from .registry import merge_shape, register

__all__ = []

_ATTRS = dict(pooled_size=Shape(), spatial_scale=Float(), sample_ratio=Int(-1),
              position_sensitive=Bool(False), aligned=Bool(False))


def _groups(attrs):
    """(bin rows, bin columns) that read channel blocks of their own: (PH, PW) when
    position-sensitive (R-FCN), else (1, 1)."""
    return tuple(attrs.pooled_size) if attrs.position_sensitive else (1, 1)


def _cells(attrs):
    """Input channels per output channel: one per bin when position-sensitive."""
    gi, gj = _groups(attrs)
    return gi * gj


class _Axis:
    """One axis of every roi's sampling grid: per sample line (one of the largest grid's G) of
    each of the P bins, its two neighbouring pixels ``low``, ``high`` (G, R, P) and their
    weights ``w_low``, ``w_high`` (0 for a line beyond the roi's own grid or more than a pixel
    outside the image); ``first``, ``last`` (R,): the pixels of nonzero weight lie in between
    (0, 0 for a roi that reads none)."""

    def __init__(self, xp, start, bin_size, grid, pooled, size, work):
        steps = xp.maximum(grid, 1).astype(work)
        corner = start[:, None] + xp.arange(pooled, dtype=work) * bin_size[:, None]
        low, high, w_low, w_high = [], [], [], []
        for g in range(max(int(grid.max()) if grid.size else 0, 1)):
            # bin start + (g + .5) * bin size / grid, in MXNet's order of operations
            at = corner + (work.type(g + 0.5) * bin_size / steps)[:, None]
            ok = (at >= -1) & (at <= size) & (g < grid)[:, None]
            below, above, frac, _, _, _ = _axis_taps(xp, at, size, 'rroi')
            low.append(below.astype(np.int64))
            high.append(above.astype(np.int64))
            w_low.append(xp.where(ok, 1 - frac, work.type(0)))
            w_high.append(xp.where(ok, frac, work.type(0)))
        self.low, self.high = xp.stack(low), xp.stack(high)
        self.w_low, self.w_high = xp.stack(w_low), xp.stack(w_high)
        first = xp.minimum(xp.where(self.w_low > 0, self.low, size).min(axis=(0, 2)),
                           xp.where(self.w_high > 0, self.high, size).min(axis=(0, 2)))
        last = xp.maximum(xp.where(self.w_low > 0, self.low, -1).max(axis=(0, 2)),
                          xp.where(self.w_high > 0, self.high, -1).max(axis=(0, 2)))
        self.reads = last >= 0
        self.first, self.last = xp.where(self.reads, first, 0), xp.maximum(last, 0)

    def weights(self, xp, work):
        """(R, P, K): each bin's summed weight of pixel ``first + k`` of its roi, K the widest
        span of pixels (a line's two taps are one pixel at the last one)."""
        count, pooled = self.first.shape[0], self.low.shape[2]
        length = int((self.last - self.first).max()) + 1 if count else 1
        slot = (xp.arange(count)[:, None] * pooled + xp.arange(pooled)) * length - \
            self.first[:, None]
        out = xp.zeros(count * pooled * length, dtype=work)
        for taps, weight in ((self.low, self.w_low), (self.high, self.w_high)):
            # a tap of weight 0 may lie outside the span: it adds its 0 at the span's start
            taps = xp.where(weight > 0, taps, self.first[:, None])
            _add_at(xp, out, (slot + taps).ravel(), weight.ravel())
        return out.reshape(count, pooled, length)


class _Grid:
    """The sampling grid of every roi, axis by axis: ``rows`` and ``cols`` (``_Axis``),
    ``image`` (R,) each roi's image (0 for skipped rois), ``count`` (R,) its number of samples
    per bin (0 for skipped rois).

    A bin's samples are the outer product of its sample rows and columns, and MXNet's rules
    (validity, clamping) hold per axis, so bin (i, j) of roi r is ``Ay[i] @ image @ Ax[j]``
    with Ay (PH, H) the rows' summed bilinear weights and Ax (PW, W) the columns'.
    """

    def __init__(self, xp, attrs, data_shape, rois, work, name):
        n, _, self.height, self.width = data_shape
        out_h, out_w = attrs.pooled_size
        rois = rois.astype(work, copy=False)
        image = rois[:, 0].astype(np.int64)          # C's conversion: toward zero
        skip = image < 0
        if bool((image >= n).any()):
            raise MXNetError(f'{name}: rois refer to image {int(image.max())}, but data holds '
                             f'{n} images')
        self.image = xp.maximum(image, 0)
        corners = xp.where(skip[:, None], work.type(0), rois[:, 1:5])
        scale = _as(attrs.spatial_scale, work)
        offset = work.type(0.5 if attrs.aligned else 0.0)
        start_w, start_h = corners[:, 0] * scale - offset, corners[:, 1] * scale - offset
        roi_w = (corners[:, 2] * scale - offset) - start_w
        roi_h = (corners[:, 3] * scale - offset) - start_h
        if attrs.aligned:
            bad = ~skip & ((roi_w <= 0) | (roi_h <= 0))
            if bool(bad.any()):
                r = int(xp.argmax(bad))
                raise MXNetError(f'{name} with aligned=True: roi {r} is {float(roi_w[r])} x '
                                 f'{float(roi_h[r])} after scaling; its size must be positive')
            roi_w, roi_h = xp.where(skip, work.type(1), roi_w), xp.where(skip, work.type(1), roi_h)
        else:
            roi_w, roi_h = xp.maximum(roi_w, work.type(1)), xp.maximum(roi_h, work.type(1))
        bin_h, bin_w = roi_h / work.type(out_h), roi_w / work.type(out_w)
        if attrs.sample_ratio > 0:
            grid_h = grid_w = xp.full(image.shape, attrs.sample_ratio, dtype=np.int64)
        else:
            grid_h, grid_w = xp.ceil(bin_h).astype(np.int64), xp.ceil(bin_w).astype(np.int64)
        grid_h, grid_w = xp.where(skip, 0, grid_h), xp.where(skip, 0, grid_w)
        self.count = (grid_h * grid_w).astype(work)
        self.rows = _Axis(xp, start_h, bin_h, grid_h, out_h, self.height, work)
        self.cols = _Axis(xp, start_w, bin_w, grid_w, out_w, self.width, work)

    def windows(self, xp, work):
        """Per roi that reads pixels: (roi, image, rows, cols, Ay, Ax, count), rows and cols
        the slices of data it reads, Ay (PH, rows) and Ax (PW, cols) its bins' summed
        weights of those pixels, count its samples per bin."""
        ay, ax = self.rows.weights(xp, work), self.cols.weights(xp, work)
        reads = self.rows.reads & self.cols.reads
        hosts = (a.tolist() for a in (reads, self.image, self.rows.first, self.rows.last,
                                      self.cols.first, self.cols.last, self.count))
        for r, (read, image, top, bottom, left, right, count) in enumerate(zip(*hosts)):
            if read:
                yield (r, image, slice(top, bottom + 1), slice(left, right + 1),
                       ay[r, :, :bottom + 1 - top], ax[r, :, :right + 1 - left], count)


def _table(xp, data, groups):
    """Data with channels last, (N, gi, H, W, gj * C'), for ``groups`` = (gi, gj) and C' = C /
    (gi * gj) output channels: [n, i, y, x, j * C' + c] is input channel ``(c * gi + i) * gj +
    j``, the one bin (i, j) reads for output channel c (any bin when the groups are (1, 1))."""
    n, c, height, width = data.shape
    gi, gj = groups
    table = data.reshape(n, c // (gi * gj), gi, gj, height, width).transpose(0, 2, 4, 5, 3, 1)
    return xp.ascontiguousarray(table).reshape(n, gi, height, width, c // gi)


def _untable(table, shape, groups):
    """The inverse of ``_table``: (N, C, H, W) data of ``shape`` from its table."""
    n, c, height, width = shape
    gi, gj = groups
    data = table.reshape(n, gi, height, width, gj, c // (gi * gj)).transpose(0, 5, 1, 4, 2, 3)
    return data.reshape(shape)


def _shapes(attrs, data, rois, name):
    data, rois = _roi_shapes(data, rois, name)
    channels, cells = _dim(data, 1), _cells(attrs)
    if channels % cells:
        raise ShapeError(f'{name}: data {tuple(data)} has {channels} channels, not a multiple '
                         f'of pooled_size {attrs.pooled_size[0]} x {attrs.pooled_size[1]} '
                         f'(position_sensitive=True)')
    return data, rois, (_dim(rois, 0), channels // cells) + tuple(attrs.pooled_size)


@register('_contrib_ROIAlign')
class ROIAlign:
    """ROIAlign: region features by averaging bilinear samples in each bin (Mask R-CNN).

    ``data`` (N, C, H, W), ``rois`` (R, 5) ``[image, x1, y1, x2, y2]`` in image coordinates
    (scaled by ``spatial_scale``) -> (R, C, PH, PW), ``pooled_size`` = (PH, PW). Bin (i, j)
    averages ``sample_ratio``^2 bilinear samples (``ceil(bin size)`` per axis when <= 0) at
    the centres of a regular grid over the bin. With ``position_sensitive`` (R-FCN), output
    channel c of bin (i, j) reads input channel ``(c * PH + i) * PW + j`` and the output has
    C / (PH * PW) channels. ``aligned`` shifts the scaled roi by -0.5 pixel (Detectron2). A
    roi with a negative image index gives zeros. The gradient reaches ``data`` (``rois``:
    zeros).
    """
    inputs = ('data', 'rois')
    attrs = _ATTRS
    check = _pooled_size_check

    def compute(xp, attrs, data, rois):
        work = _work_dtype(data.dtype)
        out_h, out_w = attrs.pooled_size
        gi, gj = groups = _groups(attrs)
        table = _table(xp, data.astype(work, copy=False), groups)
        channels = table.shape[-1] // gj
        grid = _Grid(xp, attrs, data.shape, rois, work, '_contrib_ROIAlign')
        out = xp.zeros((rois.shape[0], channels, out_h, out_w), dtype=work)
        for r, image, rows, cols, ay, ax, count in grid.windows(xp, work):
            window = table[image, :, rows, cols]            # (gi, h, w, gj * C'): a view
            height, width = window.shape[1:3]
            # the bins' rows, (PH, w, gj, C'), then their columns, written as (PH, gj, C', .)
            lines = ay.reshape(gi, out_h // gi, height) @ window.reshape(gi, height, -1)
            lines = lines.reshape(out_h, width, gj, channels).transpose(0, 2, 3, 1)
            bins = out[r].reshape(channels, out_h, gj, out_w // gj).transpose(1, 2, 0, 3)
            xp.matmul(lines, ax.reshape(gj, out_w // gj, width).swapaxes(1, 2), out=bins)
            out[r] /= work.type(count)
        return out.astype(data.dtype, copy=False)

    def infer_shape(attrs, data, rois):
        data, rois, out = _shapes(attrs, data, rois, '_contrib_ROIAlign')
        return [data, rois], [out]

    def gradient(F, attrs, inputs, outputs, ograds):
        data, rois = inputs
        return [F._backward_ROIAlign(ograds[0], data, rois, **attrs), None]


@register('_backward_ROIAlign')
class _backward_ROIAlign:
    """The gradient of ROIAlign's data: ``ograd`` (R, C', PH, PW) spread back through each
    bin's bilinear samples into ``data``'s shape (its values are not read), ``rois`` (R, 5)
    -> the shape of ``data``. Linear in ``ograd``: its own gradient is a ROIAlign."""
    inputs = ('ograd', 'data', 'rois')
    attrs = _ATTRS
    check = _pooled_size_check

    def compute(xp, attrs, ograd, data, rois):
        work = _work_dtype(data.dtype)
        out_h, out_w = attrs.pooled_size
        gi, gj = groups = _groups(attrs)
        n, c, height, width = data.shape
        channels = c // (gi * gj)
        grid = _Grid(xp, attrs, data.shape, rois, work, '_backward_ROIAlign')
        grad = xp.zeros((n, gi, height, width, gj * channels), dtype=work)
        for r, image, rows, cols, ay, ax, count in grid.windows(xp, work):
            share = ograd[r].astype(work, copy=False) / work.type(count)    # (C', PH, PW)
            share = share.reshape(channels, out_h, gj, out_w // gj).transpose(1, 2, 3, 0)
            # the bins' columns spread over the window's, (PH, w, gj, C'), then their rows
            lines = xp.empty((out_h, ax.shape[1], gj, channels), dtype=work)
            xp.matmul(ax.reshape(gj, out_w // gj, -1).swapaxes(1, 2), share,
                      out=lines.transpose(0, 2, 1, 3))
            window = grad[image, :, rows, cols]            # a view
            window += (ay.reshape(gi, out_h // gi, -1).swapaxes(1, 2) @
                       lines.reshape(gi, out_h // gi, -1)).reshape(window.shape)
        return _untable(grad, data.shape, groups).astype(data.dtype, copy=False)

    def infer_shape(attrs, ograd, data, rois):
        name = '_backward_ROIAlign'
        _check_rank(ograd, 4, 'ograd (num_rois, channels, pooled height, pooled width)')
        if data is not None and ograd is not None and ograd[1] and not data[1]:
            data = data[:1] + (ograd[1] * _cells(attrs),) + data[2:]
        if rois is None and ograd is not None:
            rois = (ograd[0], 5)
        data, rois, out = _shapes(attrs, data, rois, name)
        ograd = merge_shape(ograd, out, f'{name}: ograd')
        rois = merge_shape(rois, (ograd[0], 5), f'{name}: rois (num_rois, 5)')
        return [ograd, data, rois], [data]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._contrib_ROIAlign(ograds[0], inputs[2], **attrs), None, None]
