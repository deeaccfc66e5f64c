"""Spatial operators of MXNet 1.x vision models: the spatial transformer's ``GridGenerator`` and
``SpatialTransformer``, Fast R-CNN's ``ROIPooling``, FlowNet's ``Correlation`` and the legacy
``Crop``, with the internal backward operators their gradients are made of, and the sampler
they share with ``mx.image.imrotate``, ``BilinearSampler`` (and ``_backward_BilinearSampler``),
at the end of the file.

Conventions of MXNet 1.9.1 reproduced here (checked against it):

* A sampling grid (N, 2, H', W') holds normalised source coordinates, channel 0 x and channel 1
  y, -1 and 1 being the centres of the first and last pixels: ``x_pixel = (x + 1) * (W - 1) /
  2``. Bilinear sampling mixes the four pixels around each point; a neighbour outside the
  image counts as 0.
* ``GridGenerator`` 'affine': data (N, 6) is a row-major 2x3 matrix applied to the target grid
  ``(x_t, y_t, 1)``, ``x_t``/``y_t`` evenly spaced in [-1, 1] over ``target_shape`` (H, W).
  'warp': data (N, 2, H, W) is a flow in pixels, added to each pixel's position, then
  normalised. ``SpatialTransformer`` is BilinearSampler of the affine grid.
* ``ROIPooling``: a ROI ``[batch, x1, y1, x2, y2]`` is scaled by ``spatial_scale`` and rounded
  (half away from zero), and is at least 1x1; bin (i, j) of a (h, w) region covers rows
  ``floor(i h / ph)`` to ``ceil((i + 1) h / ph)`` (and likewise columns), clipped to the map.
  An empty bin gives 0. The gradient goes to the first maximum of each bin in row-major order.
* ``Correlation`` (FlowNet): both inputs are zero-padded by ``pad_size``; output channel
  ``(p + r) * (2r + 1) + (o + r)``, r = max_displacement // stride2, compares the
  kernel_size x kernel_size window at ``(i * stride1 + max_displacement, j * stride1 +
  max_displacement)`` (its top-left corner in the padded input) of data1 with the window of
  data2 displaced by ``(p * stride2, o * stride2)``: the sum of products (``is_multiply``) or of
  absolute differences over the window and the channels, divided by ``kernel_size^2 * C``.
* ``Crop`` cuts (h, w) = ``h_w`` (one input) or the spatial size of the second input out of
  4-d data at ``offset`` (y, x), or at the centre (``center_crop``, offsets rounded down).

Gradients are registered operators: GridGenerator's is ``_backward_GridGenerator`` (the
transposed linear map; each is the other's gradient), SpatialTransformer's the sampler's
backward chained with it, ROIPooling's ``_backward_ROIPooling`` (a scatter to the maxima) whose
gradient is the gather ``_backward_ROIPooling_gather`` (and back), Correlation's
``_backward_Correlation`` (bilinear for products, so its own gradient is Correlation and
itself; none for absolute differences) and Crop's ``_backward_Crop`` (the gradient placed back
into zeros; its own gradient is a Crop).

float16 inputs are computed in float32. MXNet has hidden outputs for some of these operators
(Correlation's padded inputs); here each has its one visible output.
"""
import numpy as np

from ..base import NotSupportedError, ShapeError
from ..context import cpu, transfer
from .attrs import Bool, Float, Int, Shape, Str
from .conv import _float_types
from .elemwise import _round_half_away
from .creation import _no_gradient
from .registry import Params, merge_shape, register

__all__ = []


# -------------------------------------------------------------------------------------------------
# Shared helpers
# -------------------------------------------------------------------------------------------------

def _work(x):
    """``x`` in the dtype the arithmetic runs in: float32 for float16."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _rank(shape, ndim, what, op):
    if shape is not None and len(shape) != ndim:
        raise ShapeError(f'{op}: {what} must be {ndim}-d, got shape {tuple(shape)}')
    return None if shape is None else tuple(shape)


def _dim(shape, i):
    return 0 if shape is None else shape[i]


def _linspace(n):
    """MXNet's normalised pixel centres: -1 + i * 2 / (n - 1) (a single pixel is at -1)."""
    return -1.0 + np.arange(n) * (2.0 / (n - 1) if n > 1 else 0.0)


# -------------------------------------------------------------------------------------------------
# GridGenerator
# -------------------------------------------------------------------------------------------------

_GRID_ATTRS = dict(transform_type=Str(choices=('affine', 'warp')), target_shape=Shape((0, 0)))


def _check_grid(attrs):
    if len(attrs.target_shape) != 2:
        raise ValueError(f'target_shape must be (H, W), got {attrs.target_shape}')
    if attrs.transform_type == 'affine' and not all(d > 0 for d in attrs.target_shape):
        raise ValueError(f'an affine grid needs a positive target_shape (H, W), got '
                         f'{attrs.target_shape}')


def _grid_shapes(attrs, data, op='GridGenerator'):
    """(data shape, grid shape) of GridGenerator, either known in part."""
    if attrs.transform_type == 'affine':
        data = merge_shape(_rank(data, 2, 'the affine matrix data', op), (0, 6),
                           f'{op}: an affine transform is (N, 6)')
        return data, (data[0], 2) + tuple(attrs.target_shape)
    data = merge_shape(_rank(data, 4, 'the flow data', op), (0, 2, 0, 0),
                       f'{op}: a warp flow is (N, 2, H, W)')
    return data, data


def _affine_base(xp, height, width, dtype):
    """The target grid (3, H * W): rows x_t, y_t and 1."""
    x = np.tile(_linspace(width), height)
    y = np.repeat(_linspace(height), width)
    return xp.asarray(np.stack([x, y, np.ones_like(x)]), dtype=dtype)


def _warp_scale(xp, height, width, dtype):
    """(1, 2, 1, 1) factors from pixels to normalised coordinates, x then y (0 for a size of
    one, whose single pixel is at -1)."""
    scale = [2.0 / (n - 1) if n > 1 else 0.0 for n in (width, height)]
    return xp.asarray(np.array(scale).reshape(1, 2, 1, 1), dtype=dtype)


def _affine_grid(xp, data, height, width):
    """The affine grid (N, 2, H, W) of the (N, 6) matrices ``data``."""
    theta = _work(data).reshape(-1, 2, 3)
    base = _affine_base(xp, height, width, theta.dtype)
    return xp.matmul(theta, base).reshape(-1, 2, height, width)


def _grid(xp, attrs, data):
    if attrs.transform_type == 'affine':
        return _affine_grid(xp, data, *attrs.target_shape)
    x = _work(data)
    _, _, h, w = x.shape
    pos = xp.stack([xp.broadcast_to(xp.arange(w, dtype=x.dtype), (h, w)),
                    xp.broadcast_to(xp.arange(h, dtype=x.dtype)[:, None], (h, w))])
    return (x + pos) * _warp_scale(xp, h, w, x.dtype) - 1


@register('GridGenerator')
class GridGenerator:
    """A sampling grid for BilinearSampler (see the module docstring).

    'affine': ``data`` (N, 6) -> (N, 2, H, W), (H, W) = ``target_shape``; 'warp': ``data``
    (N, 2, H, W), a flow in pixels -> (N, 2, H, W).
    """
    inputs = ('data',)
    attrs = _GRID_ATTRS
    check = _check_grid
    infer_type = _float_types

    def infer_shape(attrs, data):
        data, grid = _grid_shapes(attrs, data)
        return [data], [grid]

    def compute(xp, attrs, data):
        return _grid(xp, attrs, data).astype(data.dtype, copy=False)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_GridGenerator(ograds[0], inputs[0], **attrs)]


@register('_backward_GridGenerator')
class _backward_GridGenerator:
    """GridGenerator's gradient: ``ograd`` (N, 2, H, W) through the transposed linear map, to
    ``data``'s shape ((N, 6) affine, (N, 2, H, W) warp). ``data`` gives only the shape."""
    inputs = ('ograd', 'data')
    attrs = _GRID_ATTRS
    check = _check_grid
    infer_type = _float_types

    def infer_shape(attrs, ograd, data):
        data, grid = _grid_shapes(attrs, data, '_backward_GridGenerator')
        ograd = merge_shape(_rank(ograd, 4, 'ograd', '_backward_GridGenerator'), grid, 'ograd')
        if attrs.transform_type == 'warp':
            data = ograd = merge_shape(data, ograd, 'ograd and data')
        else:
            data = merge_shape(data, (ograd[0], 6), 'data')
        return [ograd, data], [data]

    def compute(xp, attrs, ograd, data):
        g = _work(ograd)
        _, _, h, w = g.shape
        if attrs.transform_type == 'affine':
            base = _affine_base(xp, h, w, g.dtype)
            out = xp.matmul(g.reshape(-1, 2, h * w), base.T).reshape(-1, 6)
        else:
            out = g * _warp_scale(xp, h, w, g.dtype)
        return out.astype(data.dtype, copy=False)

    def gradient(F, attrs, inputs, outputs, ograds):
        head = ograds[0]
        # linear in ograd, so its gradient is its adjoint: the affine map itself (which has
        # no constant term), or for 'warp' the same per-channel scale again
        if attrs.transform_type == 'affine':
            return [F.GridGenerator(head, **attrs), None]
        return [F._backward_GridGenerator(head, inputs[1], **attrs), None]


# -------------------------------------------------------------------------------------------------
# SpatialTransformer
# -------------------------------------------------------------------------------------------------

def _check_transformer(attrs):
    if len(attrs.target_shape) != 2 or not all(d > 0 for d in attrs.target_shape):
        raise ValueError(f'target_shape must be a positive (H, W), got {attrs.target_shape}')


def _affine(attrs):
    return dict(transform_type='affine', target_shape=attrs.target_shape)


@register('SpatialTransformer')
class SpatialTransformer:
    """A spatial transformer: ``data`` (N, C, H, W) sampled bilinearly on the affine grid of
    ``loc`` (N, 6) over ``target_shape`` (H', W') -> (N, C, H', W'). The same as
    ``BilinearSampler(data, GridGenerator(loc, 'affine', target_shape))``."""
    inputs = ('data', 'loc')
    attrs = dict(target_shape=Shape((0, 0)), transform_type=Str(choices=('affine',)),
                 sampler_type=Str(choices=('bilinear',)), cudnn_off=Bool(None))
    check = _check_transformer
    infer_type = _float_types

    def infer_shape(attrs, data, loc):
        op = 'SpatialTransformer'
        loc, grid = _grid_shapes(Params(_affine(attrs)), loc, op)
        data, grid, out = _sampler_shapes(data, grid, op)
        return [data, (grid[0], 6)], [out]

    def compute(xp, attrs, data, loc):
        grid = _affine_grid(xp, loc, *attrs.target_shape).astype(data.dtype, copy=False)
        return _bilinear_sample(xp, data, grid)

    def gradient(F, attrs, inputs, outputs, ograds):
        data, loc = inputs
        grid = F.GridGenerator(loc, **_affine(attrs))
        ddata, dgrid = F._backward_BilinearSampler(ograds[0], data, grid)
        return [ddata, F._backward_GridGenerator(dgrid, loc, **_affine(attrs))]


# -------------------------------------------------------------------------------------------------
# ROIPooling
# -------------------------------------------------------------------------------------------------

_ROI_ATTRS = dict(pooled_size=Shape(), spatial_scale=Float())


def _check_roi(attrs):
    if len(attrs.pooled_size) != 2 or not all(d > 0 for d in attrs.pooled_size):
        raise ValueError(f'pooled_size must be a positive (h, w), got {attrs.pooled_size}')
    if not attrs.spatial_scale > 0:
        raise ValueError(f'spatial_scale must be positive, got {attrs.spatial_scale}')


def _roi_shapes(attrs, data, rois, op='ROIPooling'):
    data = _rank(data, 4, 'data', op)
    rois = merge_shape(_rank(rois, 2, 'rois', op), (0, 5),
                       f'{op}: rois are (R, 5) rows [batch, x1, y1, x2, y2]')
    return data, rois, (rois[0], _dim(data, 1)) + tuple(attrs.pooled_size)


def _roi_bins(attrs, rois, batch, height, width):
    """Per ROI, MXNet's integer bin bounds: (batch index (R,), row starts and ends (R, ph),
    column starts and ends (R, pw)), computed in the ROIs' precision (float32 at least)."""
    r = transfer(rois, cpu(), copy=False)      # the per-ROI bookkeeping runs on the host
    r = r.astype(np.float32) if r.dtype == np.float16 else r
    scale = r.dtype.type(attrs.spatial_scale)
    index = r[:, 0].astype(np.int64)
    if ((index < 0) | (index >= batch)).any():
        raise ShapeError(f'ROIPooling: ROI batch indices {index.tolist()} are not all in '
                         f'[0, {batch})')
    # C's round(): half away from zero
    x1, y1, x2, y2 = (_round_half_away(np, r[:, k] * scale).astype(np.int64)
                      for k in range(1, 5))
    ph, pw = attrs.pooled_size

    def bounds(start, end, bins, size):
        extent = np.maximum(end - start + 1, 1).astype(r.dtype)
        step = (extent / r.dtype.type(bins))[:, None]
        k = np.arange(bins, dtype=r.dtype)
        lo = np.floor(k * step).astype(np.int64) + start[:, None]
        hi = np.ceil((k + 1) * step).astype(np.int64) + start[:, None]
        return np.clip(lo, 0, size), np.clip(hi, 0, size)
    return (index,) + bounds(y1, y2, ph, height) + bounds(x1, x2, pw, width)


def _roi_pool(xp, attrs, data, rois):
    """(pooled (R, C, ph, pw) in data's dtype, flat index of each maximum into data, -1 for
    an empty bin)."""
    n, c, h, w = data.shape
    ph, pw = attrs.pooled_size
    batch, rs, re, cs, ce = _roi_bins(attrs, rois, n, h, w)
    count = len(batch)
    out = xp.zeros((count, c, ph, pw), data.dtype)
    arg = xp.full((count, c, ph, pw), -1, np.int64)
    for r in range(count):
        rows, cols = re[r] > rs[r], ce[r] > cs[r]
        if not rows.any() or not cols.any():
            continue
        h0, w0 = rs[r][rows].min(), cs[r][cols].min()
        region = data[batch[r], :, h0:re[r].max(), w0:ce[r].max()]
        # a maximum over a rectangle is a maximum over rows of the maxima along each row: the
        # first maximum of each row, then the first such row, is the first in row-major order
        along = [(region[:, :, cs[r][j] - w0:ce[r][j] - w0].max(axis=2),
                  region[:, :, cs[r][j] - w0:ce[r][j] - w0].argmax(axis=2) + cs[r][j])
                 if cols[j] else None for j in range(pw)]
        for i in np.flatnonzero(rows):
            for j in np.flatnonzero(cols):
                seg, seg_col = along[j]
                seg = seg[:, rs[r][i] - h0:re[r][i] - h0]
                best = seg.argmax(axis=1)
                row = best + rs[r][i]
                col = xp.take_along_axis(seg_col, (row - h0)[:, None], axis=1)[:, 0]
                out[r, :, i, j] = xp.take_along_axis(seg, best[:, None], axis=1)[:, 0]
                arg[r, :, i, j] = ((batch[r] * c + xp.arange(c)) * h + row) * w + col
    return out, arg


@register('ROIPooling')
class ROIPooling:
    """Max pooling of each region of interest into a fixed ``pooled_size`` (ph, pw) grid.

    ``data`` (N, C, H, W), ``rois`` (R, 5) rows ``[batch_index, x1, y1, x2, y2]`` in image
    coordinates (scaled by ``spatial_scale`` onto the map) -> (R, C, ph, pw). See the module
    docstring for the bins. ``rois`` get no gradient.
    """
    inputs = ('data', 'rois')
    attrs = _ROI_ATTRS
    check = _check_roi
    infer_type = _float_types

    def infer_shape(attrs, data, rois):
        data, rois, out = _roi_shapes(attrs, data, rois)
        return [data, rois], [out]

    def compute(xp, attrs, data, rois):
        return _roi_pool(xp, attrs, data, rois)[0]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_ROIPooling(ograds[0], *inputs, **attrs), None]


def _roi_backward_shapes(attrs, pooled, data, rois, op):
    data, rois, out = _roi_shapes(attrs, data, rois, op)
    pooled = merge_shape(_rank(pooled, 4, 'the pooled gradient', op), out, 'the pooled gradient')
    data, rois, _ = _roi_shapes(attrs, merge_shape(data, (0, pooled[1], 0, 0), 'data'),
                                (pooled[0], 5), op)
    return pooled, data, rois


@register('_backward_ROIPooling')
class _backward_ROIPooling:
    """ROIPooling's gradient: ``ograd`` (R, C, ph, pw) added onto the position of each bin's
    maximum in ``data`` (N, C, H, W) (the first in row-major order) -> data's shape."""
    inputs = ('ograd', 'data', 'rois')
    attrs = _ROI_ATTRS
    check = _check_roi
    infer_type = _float_types

    def infer_shape(attrs, ograd, data, rois):
        ograd, data, rois = _roi_backward_shapes(attrs, ograd, data, rois,
                                                 '_backward_ROIPooling')
        return [ograd, data, rois], [data]

    def compute(xp, attrs, ograd, data, rois):
        _, arg = _roi_pool(xp, attrs, data, rois)
        keep = arg >= 0
        total = xp.bincount(arg[keep], weights=ograd[keep].astype(np.float64),
                            minlength=data.size)
        return total.reshape(data.shape).astype(data.dtype, copy=False)

    def gradient(F, attrs, inputs, outputs, ograds):
        # linear in ograd; the maxima do not move under small changes of data
        return [F._backward_ROIPooling_gather(ograds[0], *inputs[1:], **attrs), None, None]


@register('_backward_ROIPooling_gather')
class _backward_ROIPooling_gather:
    """The gradient of ``_backward_ROIPooling`` with respect to its ``ograd``: the value of
    ``data_grad`` (N, C, H, W) at each bin's maximum of ``data`` -> (R, C, ph, pw) (0 for an
    empty bin). Its own gradient is ``_backward_ROIPooling`` again."""
    inputs = ('data_grad', 'data', 'rois')
    attrs = _ROI_ATTRS
    check = _check_roi
    infer_type = _float_types

    def infer_shape(attrs, data_grad, data, rois):
        data = merge_shape(data_grad, data, 'data_grad and data')
        data, rois, out = _roi_shapes(attrs, data, rois, '_backward_ROIPooling_gather')
        return [data, data, rois], [out]

    def compute(xp, attrs, data_grad, data, rois):
        _, arg = _roi_pool(xp, attrs, data, rois)
        values = data_grad.reshape(-1)[xp.maximum(arg, 0)]
        return xp.where(arg >= 0, values, 0).astype(data.dtype, copy=False)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_ROIPooling(ograds[0], *inputs[1:], **attrs), None, None]


# -------------------------------------------------------------------------------------------------
# Correlation
# -------------------------------------------------------------------------------------------------

_CORR_ATTRS = dict(kernel_size=Int(1), max_displacement=Int(1), stride1=Int(1), stride2=Int(1),
                   pad_size=Int(0), is_multiply=Bool(True))


def _check_corr(attrs):
    for key in ('kernel_size', 'stride1', 'stride2'):
        if attrs[key] < 1:
            raise ValueError(f'{key} must be positive, got {attrs[key]}')
    for key in ('max_displacement', 'pad_size'):
        if attrs[key] < 0:
            raise ValueError(f'{key} must not be negative, got {attrs[key]}')
    if attrs.kernel_size % 2 == 0:
        raise ValueError(f'kernel_size must be odd, got {attrs.kernel_size}')


def _corr_geometry(attrs, height, width):
    """(top height, top width, grid radius) of a Correlation over (height, width) inputs."""
    border = attrs.max_displacement + (attrs.kernel_size - 1) // 2
    tops = [-(-(n + 2 * attrs.pad_size - 2 * border) // attrs.stride1) if n else 0
            for n in (height, width)]
    if any(n and t < 1 for n, t in zip((height, width), tops)):
        raise ShapeError(f'Correlation: the neighbourhood (max_displacement '
                         f'{attrs.max_displacement}) and kernel ({attrs.kernel_size}) do not fit '
                         f'in {height}x{width} inputs padded by {attrs.pad_size}')
    return tops[0], tops[1], attrs.max_displacement // attrs.stride2


def _corr_shapes(attrs, data1, data2, op='Correlation'):
    data = merge_shape(_rank(data1, 4, 'data1', op), _rank(data2, 4, 'data2', op),
                       f'{op}: data1 and data2 must have one shape')
    if data is None:
        return None, None
    top_h, top_w, radius = _corr_geometry(attrs, data[2], data[3])
    return data, (data[0], (2 * radius + 1) ** 2, top_h, top_w)


def _displacements(attrs, radius):
    """(channel, dy, dx) of every displacement, in MXNet's channel order."""
    width = 2 * radius + 1
    return [(t, (t // width - radius) * attrs.stride2, (t % width - radius) * attrs.stride2)
            for t in range(width * width)]


class _CorrWindows:
    """The padded inputs of a Correlation and the regions its windows read."""

    def __init__(self, xp, attrs, data1, data2):
        self.attrs = attrs
        n, c, h, w = data1.shape
        self.top_h, self.top_w, self.radius = _corr_geometry(attrs, h, w)
        k, s1 = attrs.kernel_size, attrs.stride1
        self.span = ((self.top_h - 1) * s1 + k, (self.top_w - 1) * s1 + k)
        p = attrs.pad_size
        pads = ((0, 0), (0, 0), (p, p), (p, p))
        self.a = xp.pad(_work(data1), pads)
        self.b = xp.pad(_work(data2).astype(self.a.dtype, copy=False), pads)
        self.scale = 1.0 / (k * k * c)

    def region(self, array, dy=0, dx=0):
        """The part of a padded input that the windows (displaced by dy, dx) cover."""
        y, x = self.attrs.max_displacement + dy, self.attrs.max_displacement + dx
        return array[:, :, y:y + self.span[0], x:x + self.span[1]]

    def offsets(self):
        """Index pairs into a region for each (h, w) of the kernel, one per output position."""
        k, s1 = self.attrs.kernel_size, self.attrs.stride1
        return [(slice(h, h + (self.top_h - 1) * s1 + 1, s1),
                 slice(w, w + (self.top_w - 1) * s1 + 1, s1)) for h in range(k) for w in range(k)]


def _correlate(xp, attrs, data1, data2):
    win = _CorrWindows(xp, attrs, data1, data2)
    n = data1.shape[0]
    r1 = win.region(win.a)
    out = xp.zeros((n, (2 * win.radius + 1) ** 2, win.top_h, win.top_w), win.a.dtype)
    for t, dy, dx in _displacements(attrs, win.radius):
        r2 = win.region(win.b, dy, dx)
        per = (r1 * r2).sum(axis=1) if attrs.is_multiply else xp.abs(r1 - r2).sum(axis=1)
        for rows, cols in win.offsets():
            out[:, t] += per[:, rows, cols]
    return (out * win.scale).astype(data1.dtype, copy=False)


def _correlate_backward(xp, attrs, ograd, data1, data2):
    win = _CorrWindows(xp, attrs, data1, data2)
    g1, g2 = xp.zeros_like(win.a), xp.zeros_like(win.b)
    r1, d1 = win.region(win.a), win.region(g1)
    head = _work(ograd).astype(win.a.dtype, copy=False) * win.scale
    spread = xp.empty((head.shape[0], 1) + win.span, win.a.dtype)
    for t, dy, dx in _displacements(attrs, win.radius):
        # the output gradient of this displacement, back on the window positions it summed
        spread[...] = 0
        for rows, cols in win.offsets():
            spread[:, 0, rows, cols] += head[:, t]
        r2, d2 = win.region(win.b, dy, dx), win.region(g2, dy, dx)
        if attrs.is_multiply:
            d1 += spread * r2
            d2 += spread * r1
        else:
            signed = spread * xp.where(r1 >= r2, 1, -1).astype(spread.dtype)
            d1 += signed
            d2 -= signed
    p = attrs.pad_size
    h, w = data1.shape[2:]
    return (g1[:, :, p:p + h, p:p + w].astype(data1.dtype, copy=False),
            g2[:, :, p:p + h, p:p + w].astype(data2.dtype, copy=False))


@register('Correlation')
class Correlation:
    """FlowNet's correlation of two feature maps (see the module docstring).

    ``data1``, ``data2`` (N, C, H, W) -> (N, (2r + 1)^2, top_h, top_w) with r =
    max_displacement // stride2 and top = ceil((H + 2 pad_size - 2 border) / stride1), border
    = max_displacement + (kernel_size - 1) // 2. ``kernel_size`` must be odd.
    """
    inputs = ('data1', 'data2')
    attrs = _CORR_ATTRS
    check = _check_corr
    infer_type = _float_types

    def infer_shape(attrs, data1, data2):
        data, out = _corr_shapes(attrs, data1, data2)
        return [data, data], [out]

    def compute(xp, attrs, data1, data2):
        return _correlate(xp, attrs, data1, data2)

    def gradient(F, attrs, inputs, outputs, ograds):
        return list(F._backward_Correlation(ograds[0], *inputs, **attrs))


@register('_backward_Correlation')
class _backward_Correlation:
    """Correlation's gradients: ``ograd`` (N, D, top_h, top_w), ``data1``, ``data2`` ->
    (gradient of data1, gradient of data2). For absolute differences the sign at a tie is +1
    for data1, as MXNet. Multiplicative correlation is bilinear, so this operator's own
    gradient is made of Correlation and itself; the absolute one has none."""
    inputs = ('ograd', 'data1', 'data2')
    attrs = _CORR_ATTRS
    num_outputs = 2
    check = _check_corr

    def infer_type(attrs, *dtypes):
        ins, outs = _float_types(attrs, *dtypes)
        return ins, outs * 2

    def infer_shape(attrs, ograd, data1, data2):
        op = '_backward_Correlation'
        data, out = _corr_shapes(attrs, data1, data2, op)
        ograd = merge_shape(_rank(ograd, 4, 'ograd', op), out, 'ograd')
        if data is None and ograd is not None:
            data = (ograd[0], 0, 0, 0)
        return [ograd, data, data], [data, data]

    def compute(xp, attrs, ograd, data1, data2):
        return _correlate_backward(xp, attrs, ograd, data1, data2)

    def gradient(F, attrs, inputs, outputs, ograds):
        if not attrs.is_multiply:
            raise NotSupportedError('_backward_Correlation with is_multiply=False has no '
                                    'gradient: second derivatives of the absolute-difference '
                                    'Correlation are not implemented')
        g, d1, d2 = inputs
        h1, h2 = ograds
        # <B1(g, d2), h1> + <B2(g, d1), h2> = <g, C(h1, d2) + C(d1, h2)>
        dg = dd1 = dd2 = None
        if h1 is not None:
            dg = F.Correlation(h1, d2, **attrs)
            dd2 = list(F._backward_Correlation(g, h1, d2, **attrs))[1]
        if h2 is not None:
            term = F.Correlation(d1, h2, **attrs)
            dg = term if dg is None else dg + term
            dd1 = list(F._backward_Correlation(g, d1, h2, **attrs))[0]
        return [dg, dd1, dd2]


# -------------------------------------------------------------------------------------------------
# Crop
# -------------------------------------------------------------------------------------------------

def _check_crop(attrs):
    if attrs.num_args not in (1, 2):
        raise ValueError(f'num_args must be 1 (crop to h_w) or 2 (crop like the second input), '
                         f'got {attrs.num_args}')
    for key in ('offset', 'h_w'):
        if len(attrs[key]) != 2 or min(attrs[key]) < 0:
            raise ValueError(f'{key} must be two non-negative integers, got {attrs[key]}')
    if attrs.num_args == 1 and min(attrs.h_w) < 1:
        raise ValueError(f'Crop with one input needs h_w (height, width), got {attrs.h_w}')


def _crop_offset(attrs, data, out, op='Crop'):
    """The (y, x) at which the (h, w) ``out`` window lies in ``data`` (H, W); None when a size
    is unknown."""
    if not all(data) or not all(out):
        return None
    if out[0] > data[0] or out[1] > data[1]:
        raise ShapeError(f'{op}: the crop {tuple(out)} is larger than the input {tuple(data)}')
    if attrs.center_crop:
        return (data[0] - out[0]) // 2, (data[1] - out[1]) // 2
    y, x = attrs.offset
    if y > data[0] - out[0] or x > data[1] - out[1]:
        raise ShapeError(f'{op}: offset {tuple(attrs.offset)} puts the {tuple(out)} crop outside '
                         f'the {tuple(data)} input')
    return y, x


def _crop_size(attrs, like):
    return tuple(attrs.h_w) if attrs.num_args == 1 else (_dim(like, 2), _dim(like, 3))


@register('Crop')
class Crop:
    """The legacy crop of 4-d data: ``arg0`` (N, C, H, W) cut to (N, C, h, w), (h, w) being
    ``h_w`` (one input) or the spatial size of ``arg1`` (two inputs; only its shape is read),
    at ``offset`` (y, x) or centred (``center_crop``). The second input gets no gradient."""
    variadic = 'num_args'
    attrs = dict(num_args=Int(), offset=Shape((0, 0)), h_w=Shape((0, 0)),
                 center_crop=Bool(False))
    check = _check_crop
    infer_type = _float_types

    def infer_shape(attrs, data, *like):
        if len(like) != attrs.num_args - 1:
            raise ShapeError(f'num_args={attrs.num_args} but {len(like) + 1} inputs are given')
        data = _rank(data, 4, 'data', 'Crop')
        like = [_rank(s, 4, 'crop_like', 'Crop') for s in like]
        size = _crop_size(attrs, like[0] if like else None)
        if data is not None:
            _crop_offset(attrs, data[2:], size)
        out = (_dim(data, 0), _dim(data, 1)) + size
        return [data] + like, [out]

    def compute(xp, attrs, data, *like):
        h, w = _crop_size(attrs, like[0].shape if like else None)
        y, x = _crop_offset(attrs, data.shape[2:], (h, w))
        return data[:, :, y:y + h, x:x + w].copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        grad = F._backward_Crop(ograds[0], inputs[0], offset=attrs.offset,
                                center_crop=attrs.center_crop)
        return [grad] + [None] * (len(inputs) - 1)


@register('_backward_Crop')
class _backward_Crop:
    """Crop's gradient: ``ograd`` (N, C, h, w) placed into zeros of ``data``'s shape (N, C, H,
    W) where Crop took it from (``offset`` or the centre). Its gradient is a Crop."""
    inputs = ('ograd', 'data')
    attrs = dict(offset=Shape((0, 0)), center_crop=Bool(False))
    infer_type = _float_types

    def infer_shape(attrs, ograd, data):
        op = '_backward_Crop'
        ograd = _rank(ograd, 4, 'ograd', op)
        data = _rank(data, 4, 'data', op)
        lead = merge_shape(None if ograd is None else ograd[:2],
                           None if data is None else data[:2], 'ograd and data')
        if lead is not None:
            ograd = lead + (ograd[2:] if ograd is not None else (0, 0))
            data = lead + (data[2:] if data is not None else (0, 0))
            _crop_offset(attrs, data[2:], ograd[2:], op)
        return [ograd, data], [data]

    def compute(xp, attrs, ograd, data):
        h, w = ograd.shape[2:]
        y, x = _crop_offset(attrs, data.shape[2:], (h, w), '_backward_Crop')
        out = xp.zeros(data.shape, data.dtype)
        out[:, :, y:y + h, x:x + w] = ograd
        return out

    def gradient(F, attrs, inputs, outputs, ograds):
        # linear in ograd: cut the head back to ograd's size where the crop was
        return [F.Crop(ograds[0], inputs[0], num_args=2, offset=attrs.offset,
                       center_crop=attrs.center_crop), None]


# -------------------------------------------------------------------------------------------------
# BilinearSampler (SpatialTransformer's sampling, and mx.image.imrotate's)
# -------------------------------------------------------------------------------------------------

def _sampler_corners(xp, data, grid):
    """The four neighbours of each sampling point: a list of (flat index (N, P), validity
    (N, P), weight (N, P)) with P = OH * OW, the source coordinates and the top-left
    weights. Grid values -1 and 1 are the centres of the first and last pixels."""
    n, c, h, w = data.shape
    x = ((grid[:, 0] + 1) * (w - 1) / 2).reshape(n, -1)
    y = ((grid[:, 1] + 1) * (h - 1) / 2).reshape(n, -1)
    x0, y0 = xp.floor(x), xp.floor(y)
    tx, ty = 1 - (x - x0), 1 - (y - y0)
    x0, y0 = x0.astype(np.int64), y0.astype(np.int64)
    corners = []
    for dy, dx, weight in ((0, 0, ty * tx), (0, 1, ty * (1 - tx)), (1, 0, (1 - ty) * tx),
                           (1, 1, (1 - ty) * (1 - tx))):
        xc, yc = x0 + dx, y0 + dy
        valid = (xc >= 0) & (xc <= w - 1) & (yc >= 0) & (yc <= h - 1)
        flat = xp.clip(yc, 0, h - 1) * w + xp.clip(xc, 0, w - 1)
        corners.append((flat, valid, weight))
    return corners, tx, ty


def _bilinear_sample(xp, data, grid):
    """data (N, C, H, W) sampled at the points of grid (N, 2, OH, OW) -> (N, C, OH, OW)."""
    corners, _, _ = _sampler_corners(xp, data, grid)
    out = None
    for flat, valid, weight in corners:
        term = _gather(xp, data, flat, valid) * weight[:, None, :]
        out = term if out is None else out + term
    return out.reshape(data.shape[:2] + grid.shape[2:]).astype(data.dtype)


def _gather(xp, data, flat, valid):
    """data (N, C, H, W) at the flat positions (N, P) -> (N, C, P), 0 where not valid."""
    n, c = data.shape[:2]
    values = xp.take_along_axis(data.reshape(n, c, -1),
                                xp.broadcast_to(flat[:, None, :], (n, c, flat.shape[1])), axis=2)
    return xp.where(valid[:, None, :], values, 0)


def _sampler_shapes(data, grid, op):
    """(data, grid, output) shapes of a bilinear sampling, each known in part or None: data
    (N, C, H, W) and grid (N, 2, OH, OW) -> (N, C, OH, OW)."""
    for name, s in (('data', data), ('grid', grid)):
        if s is not None and len(s) != 4:
            raise ShapeError(f'{op}: {name} must be 4-d, (N, C, H, W) for data and '
                             f'(N, 2, OH, OW) for grid, got {tuple(s)}')
    if grid is not None and grid[1] not in (0, 2):
        raise ShapeError(f'{op}: grid must have 2 channels (x, y), got shape {tuple(grid)}')
    if data is not None and grid is not None and data[0] and grid[0] and data[0] != grid[0]:
        raise ShapeError(f'{op}: data {tuple(data)} and grid {tuple(grid)} must have the same '
                         'batch size')
    if data is None and grid is None:
        return None, None, None
    n = _dim(data, 0) or _dim(grid, 0)
    data = None if data is None else (n,) + tuple(data[1:])
    grid = None if grid is None else (n, 2) + tuple(grid[2:])
    out = (n, _dim(data, 1)) + (tuple(grid[2:]) if grid is not None else (0, 0))
    return data, grid, out


@register('BilinearSampler')
class BilinearSampler:
    """Samples ``data`` (N, C, H, W) at the points of ``grid`` (N, 2, OH, OW) by bilinear
    interpolation: grid[:, 0] is x, grid[:, 1] is y, both in [-1, 1] from the first to the last
    pixel centre; points outside the image read zeros. Output (N, C, OH, OW). Differentiable in
    both inputs."""
    inputs = ('data', 'grid')
    attrs = dict(cudnn_off=Bool(None))
    infer_type = _float_types

    def infer_shape(attrs, data, grid):
        data, grid, out = _sampler_shapes(data, grid, 'BilinearSampler')
        return [data, grid], [out]

    def compute(xp, attrs, data, grid):
        return _bilinear_sample(xp, data, grid)

    def gradient(F, attrs, inputs, outputs, ograds):
        return list(F._backward_BilinearSampler(ograds[0], *inputs))


@register('_backward_BilinearSampler')
class _backward_BilinearSampler:
    """The gradients of BilinearSampler: from ``ograd`` (N, C, OH, OW), ``data`` and ``grid``,
    the gradient of data (each sample's head gradient spread onto its four neighbours by their
    weights) and of grid (the slope of the interpolation times (W - 1) / 2 and (H - 1) / 2).
    Not differentiable again."""
    inputs = ('ograd', 'data', 'grid')
    num_outputs = 2
    gradient = _no_gradient('_backward_BilinearSampler')

    def infer_type(attrs, *dtypes):
        ins, outs = _float_types(attrs, *dtypes)
        return ins, outs * 2

    def infer_shape(attrs, ograd, data, grid):
        data, grid, out = _sampler_shapes(data, grid, '_backward_BilinearSampler')
        if data is not None and grid is not None:
            ograd = merge_shape(ograd, out, 'ograd')
        return [ograd, data, grid], [data, grid]

    def compute(xp, attrs, ograd, data, grid):
        n, c, h, w = data.shape
        g = ograd.reshape(n, c, -1)
        corners, tx, ty = _sampler_corners(xp, data, grid)
        gdata = xp.zeros((n, c, h * w), np.float64)
        offsets = (xp.arange(n * c) * (h * w)).reshape(n, c, 1)
        values = []
        for flat, valid, weight in corners:
            contrib = g * (weight * valid)[:, None, :]
            index = (offsets + flat[:, None, :]).reshape(-1)
            gdata += xp.bincount(index, weights=contrib.reshape(-1).astype(np.float64),
                                 minlength=n * c * h * w).reshape(n, c, h * w)
            values.append(_gather(xp, data, flat, valid))
        tl, tr, bl, br = values
        slope_x = ty[:, None, :] * (tr - tl) + (1 - ty)[:, None, :] * (br - bl)
        slope_y = tx[:, None, :] * (bl - tl) + (1 - tx)[:, None, :] * (br - tr)
        ggrid = xp.stack([(g * slope_x).sum(axis=1) * ((w - 1) / 2),
                          (g * slope_y).sum(axis=1) * ((h - 1) / 2)], axis=1)
        return (gdata.reshape(data.shape).astype(data.dtype),
                ggrid.reshape(grid.shape).astype(grid.dtype))
