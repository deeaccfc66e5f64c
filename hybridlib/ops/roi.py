"""ROIAlign (Mask R-CNN): ``_contrib_ROIAlign`` and its backward operator ``_backward_ROIAlign``.

Region features pooled by bilinear sampling, without rounding any coordinate: each of a roi's
PH x PW bins averages a regular grid of bilinear samples. It follows MXNet 1.9.1's CPU kernel
(Detectron's, from Caffe2), and shares the bilinear taps and the gradient scatter of the other
ROI poolings (``detection.py``):

* a roi ``[image, x1, y1, x2, y2]`` is scaled by ``spatial_scale`` and, with ``aligned``,
  shifted by -0.5 (Detectron2's half-pixel alignment; the roi must then have a positive
  size); without it, a roi is at least 1 x 1;
* each bin holds ``sample_ratio``^2 samples, or ``ceil(bin size)`` per axis when
  ``sample_ratio`` <= 0, at the centres of a regular grid;
* a sample more than one pixel outside the image counts as 0; one less than that reads the
  nearest border pixels (coordinates below 0 read as 0, past the last pixel as the last);
* a roi whose image index is negative gives zeros (MXNet documents this; its kernel zeroes a
  single element and leaves the others unset).

Float32 data computes in float32 in MXNet's order of operations, float64 in float64, float16
in float32.
"""
import numpy as np

from ..base import MXNetError, ShapeError
from .attrs import Bool, Float, Int, Shape
from .contrib import _check_rank, _dim, _work_dtype
from .detection import _as, _pooled_size_check, _roi_shapes, _scatter_add, _taps
from .registry import merge_shape, register

__all__ = []

_ATTRS = dict(pooled_size=Shape(), spatial_scale=Float(), sample_ratio=Int(-1),
              position_sensitive=Bool(False), aligned=Bool(False))


def _cells(attrs):
    """Input channels per output channel: one per bin when position-sensitive (R-FCN)."""
    out_h, out_w = attrs.pooled_size
    return out_h * out_w if attrs.position_sensitive else 1


class _Grid:
    """The sampling grid of every roi.

    ``samples()`` yields, per point of the largest grid, the four bilinear taps of every bin:
    flat pixel indices and weights, each (4, R, PH, PW); a point beyond a roi's own grid, or
    more than a pixel outside the image, has weights 0. ``image`` (R,) is each roi's image
    (0 for skipped rois), ``count`` (R,) its number of samples per bin (0 for skipped rois).
    """

    def __init__(self, xp, attrs, data_shape, rois, work, name):
        n, _, self.height, self.width = data_shape
        self.xp, self.work = xp, work
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
        self.bin_h, self.bin_w = roi_h / work.type(out_h), roi_w / work.type(out_w)
        if attrs.sample_ratio > 0:
            grid_h = grid_w = xp.full(image.shape, attrs.sample_ratio, dtype=np.int64)
        else:
            grid_h = xp.ceil(self.bin_h).astype(np.int64)
            grid_w = xp.ceil(self.bin_w).astype(np.int64)
        self.grid_h, self.grid_w = xp.where(skip, 0, grid_h), xp.where(skip, 0, grid_w)
        self.count = (self.grid_h * self.grid_w).astype(work)
        # the bins' first corners: start + bin index * bin size
        self.top = start_h[:, None] + xp.arange(out_h, dtype=work)[None, :] * self.bin_h[:, None]
        self.left = start_w[:, None] + xp.arange(out_w, dtype=work)[None, :] * self.bin_w[:, None]

    def samples(self):
        xp, work = self.xp, self.work
        if not self.image.size:
            return
        grid_h = xp.maximum(self.grid_h, 1).astype(work)
        grid_w = xp.maximum(self.grid_w, 1).astype(work)
        for iy in range(int(self.grid_h.max())):
            # bin start + (iy + .5) * bin size / grid, in MXNet's order of operations
            y = self.top + (work.type(iy + 0.5) * self.bin_h / grid_h)[:, None]
            y_ok = (y >= -1) & (y <= self.height) & (iy < self.grid_h)[:, None]
            for ix in range(int(self.grid_w.max())):
                x = self.left + (work.type(ix + 0.5) * self.bin_w / grid_w)[:, None]
                x_ok = (x >= -1) & (x <= self.width) & (ix < self.grid_w)[:, None]
                valid = y_ok[:, :, None] & x_ok[:, None, :]
                index, weight, _, _ = _taps(xp, y[:, :, None], x[:, None, :], self.height,
                                            self.width, 'rroi', valid)
                yield index, weight

    def bins(self, attrs):
        """Per (roi, bin) the image and the channel block it reads: (R, 1, 1), (PH, PW)."""
        xp = self.xp
        out_h, out_w = attrs.pooled_size
        if attrs.position_sensitive:
            cell = xp.arange(out_h * out_w).reshape(out_h, out_w)
        else:
            cell = xp.zeros((out_h, out_w), dtype=np.int64)
        return self.image[:, None, None], cell


def _table(data, cells):
    """Data as (N, cells, H * W, C / cells): channel ``c * cells + cell`` of a pixel at
    [n, cell, pixel, c], so that one gather reads every output channel of a bin."""
    n, c, height, width = data.shape
    return data.reshape(n, c // cells, cells, height * width).transpose(0, 2, 3, 1)


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
        cells = _cells(attrs)
        table = _table(data.astype(work, copy=False), cells)
        grid = _Grid(xp, attrs, data.shape, rois, work, '_contrib_ROIAlign')
        image, cell = grid.bins(attrs)
        total = xp.zeros((rois.shape[0],) + tuple(attrs.pooled_size) + (table.shape[-1],),
                         dtype=work)
        for index, weight in grid.samples():
            sample = 0
            for i, w in zip(index, weight):
                sample = sample + w[..., None] * table[image, cell, i]
            total += sample
        count = grid.count[:, None, None, None]
        out = xp.where(count > 0, total / xp.maximum(count, work.type(1)), work.type(0))
        return out.transpose(0, 3, 1, 2).astype(data.dtype)

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
        cells = _cells(attrs)
        n, c, height, width = data.shape
        grid = _Grid(xp, attrs, data.shape, rois, work, '_backward_ROIAlign')
        image, cell = grid.bins(attrs)
        channels = c // cells
        count = grid.count[:, None, None, None]
        share = xp.where(count > 0, ograd.astype(work).transpose(0, 2, 3, 1) /
                         xp.maximum(count, work.type(1)), work.type(0))
        # the flat position in _table's layout of (roi, bin, channel) at pixel 0
        base = ((image * cells + cell) * (height * width))[..., None] * channels + \
            xp.arange(channels)
        size = n * c * height * width
        grad = xp.zeros(size, dtype=np.float64)
        for index, weight in grid.samples():
            where = base[None] + index[..., None] * channels
            grad += _scatter_add(xp, where, weight[..., None] * share[None], size)
        grad = grad.reshape(n, cells, height * width, channels).transpose(0, 3, 1, 2)
        return grad.reshape(data.shape).astype(data.dtype)

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
