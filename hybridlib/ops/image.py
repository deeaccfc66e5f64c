"""Image operators: ``_image_*`` (``nd.image.*``), OpenCV's resize and border (``_cvimresize``,
``_cvcopyMakeBorder``). (``mx.image.imrotate`` samples with ``BilinearSampler``, in
``spatial.py``.)

Images are (H, W, C) arrays, batches (N, H, W, C); ``to_tensor`` turns them into (C, H, W)
float32 tensors in [0, 1], which ``normalize`` takes. Resizing follows OpenCV's ``cv::resize``,
which MXNet calls: nearest (0), bilinear (1), bicubic (2), area (3) and Lanczos (4), with its
source coordinates, its border rules and, for uint8 images, its fixed-point arithmetic (11-bit
weights), so that nearest and bilinear results equal MXNet's bit for bit and the others are
within 1. Float images are computed in float32 (float64 in float64) in OpenCV's order of sums.

Random operators draw from ``hybridlib.random`` (``mx.random.seed`` repeats them). As in MXNet
their gradient passes the head gradient through unchanged (MXNet's ``_copy``), and so does that
of ``adjust_lighting`` (an added constant). The deterministic geometric operators have their true
gradients: MXNet 1.9.1 copies the head gradient through flips (here it is flipped back), and its
resize gradients fail (here they are the transposed interpolation of a float image).

Where MXNet 1.9.1 computes something else than it documents, the documented result is given:
``flip_*`` writes every pixel (MXNet leaves the middle column or row of odd sizes unset),
``random_saturation`` mixes with the full luma (MXNet uses 0.114 B alone), ``random_hue`` and
``adjust_lighting`` return a single-channel image unchanged (MXNet returns an unset buffer), and
``normalize``'s default mean and std apply to any number of channels.
"""
import functools
import math

import numpy as np

from ..base import DTypeError, ShapeError
from ..context import cpu, transfer
from . import rng
from .attrs import Bool, Float, FloatTuple, Int, Shape
from .creation import _no_gradient
from .registry import merge_shape, register

__all__ = []

_COEF_SCALE = 2048          # OpenCV's INTER_RESIZE_COEF_SCALE: 11-bit fixed-point weights
_F32 = np.float32


# -------------------------------------------------------------------------------------------------
# cv::resize: source taps and weights along one axis
# -------------------------------------------------------------------------------------------------

_KSIZE = {1: 2, 2: 4, 3: 2, 4: 8}


def _cubic_weights(x):
    """OpenCV's interpolateCubic (A = -0.75), in float32 as it computes them."""
    a = _F32(-0.75)
    one = _F32(1)
    x1 = x + one
    c0 = ((a * x1 - _F32(5) * a) * x1 + _F32(8) * a) * x1 - _F32(4) * a
    c1 = ((a + _F32(2)) * x - (a + _F32(3))) * x * x + one
    r = one - x
    c2 = ((a + _F32(2)) * r - (a + _F32(3))) * r * r + one
    c3 = one - c0 - c1 - c2
    return np.stack([c0, c1, c2, c3], axis=1).astype(_F32)


_S45 = 0.70710678118654752440084436210485
_LANCZOS_CS = ((1, 0), (-_S45, -_S45), (0, 1), (_S45, -_S45), (-1, 0), (_S45, _S45), (0, -1),
               (-_S45, _S45))


def _lanczos_weights(x):
    """OpenCV's interpolateLanczos4: sin(pi y / 4) sin(pi y) / y^2 at the 8 taps, normalised
    to sum 1 (in float32), computed from one sine and cosine as OpenCV does."""
    out = np.zeros((len(x), 8), _F32)
    for row, fx in enumerate(x):
        if fx < np.finfo(_F32).eps:
            out[row, 3] = 1
            continue
        y0 = -float(fx + _F32(3)) * math.pi * 0.25
        s0, c0 = math.sin(y0), math.cos(y0)
        total = _F32(0)
        for i, (cs, cc) in enumerate(_LANCZOS_CS):
            y = -float(fx + _F32(3) - _F32(i)) * math.pi * 0.25
            out[row, i] = _F32((cs * s0 + cc * c0) / (y * y))
            total = _F32(total + out[row, i])
        out[row] *= _F32(1) / total
    return out


@functools.lru_cache(maxsize=256)
def _generic_taps(n_in, n_out, interp, along_x):
    """Source indices (n_out, K) and float32 weights of OpenCV's separable resize (linear,
    cubic, Lanczos, and area when enlarging) along one axis.

    Along x OpenCV moves taps that start outside the image onto the border with weight 0 for
    linear interpolation; along y it keeps the weights and clamps the rows. Taps of cubic and
    Lanczos are clamped on both axes (the border is replicated).
    """
    inv_scale = n_out / n_in
    scale = 1.0 / inv_scale
    d = np.arange(n_out, dtype=np.float64)
    if interp == 3:        # area mode when enlarging: linear with its own coordinates
        sx = np.floor(d * scale).astype(np.int64)
        fx = ((d + 1) - (sx + 1) * inv_scale).astype(_F32)
        fx = np.where(fx <= 0, _F32(0), fx - np.floor(fx)).astype(_F32)
    else:
        fx = ((d + 0.5) * scale - 0.5).astype(_F32)
        sx = np.floor(fx).astype(np.int64)
        fx = (fx - sx.astype(_F32)).astype(_F32)
    ksize = _KSIZE[interp]
    if along_x and interp in (1, 3):
        low = sx < 0
        fx[low], sx[low] = 0, 0
        high = sx >= n_in - 1
        fx[high], sx[high] = 0, n_in - 1
    if interp == 2:
        weights = _cubic_weights(fx)
    elif interp == 4:
        weights = _lanczos_weights(fx)
    else:
        weights = np.stack([_F32(1) - fx, fx], axis=1).astype(_F32)
    index = np.clip(sx[:, None] + np.arange(ksize) - (ksize // 2 - 1), 0, n_in - 1)
    return index, weights


@functools.lru_cache(maxsize=256)
def _area_taps(n_in, n_out):
    """OpenCV's computeResizeAreaTab as (n_out, K) indices and float32 weights (padded with
    weight 0): the fraction of each source pixel that falls in a destination pixel."""
    scale = n_in / n_out
    rows = []
    for dx in range(n_out):
        fsx1 = dx * scale
        fsx2 = fsx1 + scale
        cell = min(scale, n_in - fsx1)
        sx1, sx2 = math.ceil(fsx1), math.floor(fsx2)
        sx2 = min(sx2, n_in - 1)
        sx1 = min(sx1, sx2)
        taps = []
        if sx1 - fsx1 > 1e-3:
            taps.append((sx1 - 1, (sx1 - fsx1) / cell))
        taps.extend((sx, 1.0 / cell) for sx in range(sx1, sx2))
        if fsx2 - sx2 > 1e-3:
            taps.append((sx2, min(min(fsx2 - sx2, 1.0), cell) / cell))
        rows.append(taps)
    width = max(len(t) for t in rows)
    index = np.zeros((n_out, width), np.int64)
    weights = np.zeros((n_out, width), _F32)
    for dx, taps in enumerate(rows):
        for k, (sx, w) in enumerate(taps):
            index[dx, k], weights[dx, k] = sx, w
    return index, weights


# -------------------------------------------------------------------------------------------------
# cv::resize: applying the taps
# -------------------------------------------------------------------------------------------------

def _along(weights, axis):
    """A weight vector shaped to broadcast along ``axis`` (-2 columns, -3 rows) of an image."""
    return weights.reshape((-1,) + (1,) * (-axis - 1))


def _sum_taps(xp, x, axis, index, weights):
    """sum_k x[index[:, k]] * weights[:, k] along ``axis``, summed in tap order in the dtype
    of ``weights`` (OpenCV's order, so float32 sums round as its own)."""
    out = None
    for k in range(index.shape[1]):
        term = xp.take(x, xp.asarray(index[:, k]), axis=axis) * \
            xp.asarray(_along(weights[:, k], axis))
        out = term if out is None else out + term
    return out


def _round_to(xp, x, dtype):
    """OpenCV's saturate_cast: round half to even, clip to the range of an integer dtype."""
    if dtype.kind == 'f':
        return x.astype(dtype)
    info = np.iinfo(dtype)
    return xp.clip(xp.rint(x), info.min, info.max).astype(dtype)


def _resize_fixed_point(xp, img, taps_y, taps_x, interp):
    """uint8 linear, cubic and Lanczos: int16 weights, integer sums, OpenCV's rounding."""
    (iy, wy), (ix, wx) = taps_y, taps_x
    ay = np.rint(wy * _F32(_COEF_SCALE)).astype(np.int64)
    ax = np.rint(wx * _F32(_COEF_SCALE)).astype(np.int64)
    rows = _sum_taps(xp, img.astype(np.int64), -2, ix, ax)
    if interp in (1, 3):
        # OpenCV's VResizeLinear for 8-bit: each row product scaled down before the sum
        r0 = xp.take(rows, xp.asarray(iy[:, 0]), axis=-3) >> 4
        r1 = xp.take(rows, xp.asarray(iy[:, 1]), axis=-3) >> 4
        out = (((r0 * xp.asarray(_along(ay[:, 0], -3))) >> 16) +
               ((r1 * xp.asarray(_along(ay[:, 1], -3))) >> 16) + 2) >> 2
    else:
        out = (_sum_taps(xp, rows, -3, iy, ay) + (1 << 21)) >> 22
        if interp == 2:
            # OpenCV's vectorised vertical cubic pass (8 values of a row at a time) sums in
            # float32 with weights / 2^22 and rounds half to even; the rest of a row is integer
            width = rows.shape[-2] * rows.shape[-1]
            vec = (width // 8) * 8
            if vec:
                approx = xp.rint(_sum_taps(xp, rows.astype(_F32), -3, iy,
                                           (ay.astype(_F32) * _F32(2.0 ** -22)))).astype(np.int64)
                flat = out.reshape(out.shape[:-2] + (width,))
                flat[..., :vec] = approx.reshape(flat.shape)[..., :vec]
                out = flat.reshape(out.shape)
    return xp.clip(out, 0, 255).astype(np.uint8)


def _area_fast(xp, img, sy, sx, work):
    """Integer downscaling factors (OpenCV's resizeAreaFast): block means."""
    *lead, h, w, c = img.shape
    oh, ow = h // sy, w // sx
    blocks = img.reshape(tuple(lead) + (oh, sy, ow, sx, c))
    if img.dtype == np.uint8:
        total = blocks.astype(np.int64).sum(axis=(-4, -2))
        if sx == 2 and sy == 2 and c in (1, 3, 4):
            return ((total + 2) >> 2).astype(np.uint8)      # its vectorised 2x2 path
        return _round_to(xp, total.astype(_F32) * _F32(1.0 / (sx * sy)), img.dtype)
    values = [blocks[..., i, :, j, :].astype(work) for i in range(sy) for j in range(sx)]
    if sx == 2 and sy == 2 and c in (1, 4) and work == _F32:
        # its vectorised 2x2 path for float32 adds the two rows first
        total = (values[0] + values[2]) + (values[1] + values[3])
    else:
        # float sums in OpenCV's order: row by row within the block, four at a time
        total = xp.zeros(values[0].shape, work)
        for k in range(0, len(values), 4):
            group = values[k]
            for v in values[k + 1:k + 4]:
                group = group + v
            total = total + group
    return _round_to(xp, total * work.type(_F32(1.0 / (sx * sy))), img.dtype)


def _work_dtype(dtype):
    """The dtype OpenCV sums in: float32 for 8-bit and float32 images, float64 for float64;
    float16 images are computed in float32, other integers in float64 (OpenCV has no kernels
    for them; the result is rounded back)."""
    if dtype == np.float64 or dtype.kind in 'iu' and dtype != np.uint8:
        return np.dtype(np.float64)
    return np.dtype(_F32)


def _nearest_index(n_in, n_out):
    """OpenCV's INTER_NEAREST: the source index of each of ``n_out`` pixels along one axis."""
    return np.minimum(np.floor(np.arange(n_out) * (1.0 / (n_out / n_in))),
                      n_in - 1).astype(np.int64)


def _resize_path(h, w, out_h, out_w, interp):
    """The path cv::resize takes from (h, w) to (out_h, out_w) for ``interp`` (not nearest):
    ``(interp, area, factors)``, bilinear halving turned into area averaging as OpenCV does,
    ``area`` when it averages areas (shrinking in area mode) and ``factors`` (sy, sx) when the
    scales are integers (resizeAreaFast), else None. Scales are computed as OpenCV's."""
    scale_x, scale_y = 1.0 / (out_w / w), 1.0 / (out_h / h)
    fast = all(abs(s - round(s)) < np.finfo(np.float64).eps for s in (scale_x, scale_y))
    if interp == 1 and fast and round(scale_x) == 2 and round(scale_y) == 2:
        interp = 3                      # OpenCV: halving is the same as area averaging
    area = interp == 3 and scale_x >= 1 and scale_y >= 1
    return interp, area, ((round(scale_y), round(scale_x)) if area and fast else None)


def cv_resize(xp, img, out_w, out_h, interp):
    """``img`` (..., H, W, C) resized to (..., out_h, out_w, C) as OpenCV's cv::resize.

    ``interp``: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos (OpenCV's numbering).
    """
    dtype = img.dtype
    if dtype.kind not in 'fiu':
        raise DTypeError(f'resize: images of dtype {dtype} cannot be resized')
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError(f'resize: unknown interpolation method {interp}; OpenCV has 0 '
                         'nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos')
    h, w = img.shape[-3], img.shape[-2]
    if out_w < 1 or out_h < 1:
        raise ShapeError(f'resize: the output size ({out_w}, {out_h}) (width, height) must be '
                         'positive')
    if (h, w) == (out_h, out_w):
        return img.copy()
    if interp == 0:
        out = xp.take(img, xp.asarray(_nearest_index(h, out_h)), axis=-3)
        return xp.take(out, xp.asarray(_nearest_index(w, out_w)), axis=-2)
    interp, area, factors = _resize_path(h, w, out_h, out_w, interp)
    work = _work_dtype(dtype)
    if area:
        if factors:
            return _area_fast(xp, img, *factors, work)
        rows = _sum_taps(xp, img.astype(work), -2, *_area_taps(w, out_w))
        return _round_to(xp, _sum_taps(xp, rows, -3, *_area_taps(h, out_h)), dtype)
    taps_y = _generic_taps(h, out_h, interp, False)
    taps_x = _generic_taps(w, out_w, interp, True)
    if dtype == np.uint8:
        return _resize_fixed_point(xp, img, taps_y, taps_x, interp)
    (iy, wy), (ix, wx) = taps_y, taps_x
    rows = _sum_taps(xp, img.astype(work), -2, ix, wx.astype(work))
    return _round_to(xp, _sum_taps(xp, rows, -3, iy, wy.astype(work)), dtype)


def _taps_matrix(n_in, index, weights):
    m = np.zeros((index.shape[0], n_in))
    for k in range(index.shape[1]):
        np.add.at(m, (np.arange(index.shape[0]), index[:, k]), weights[:, k])
    return m


@functools.lru_cache(maxsize=256)
def _resize_matrices(h, w, out_h, out_w, interp):
    """(out_h, h) and (out_w, w) matrices of the linear map that ``cv_resize`` computes on
    float images (what its gradient transposes)."""
    if (h, w) == (out_h, out_w):
        return np.eye(h), np.eye(w)
    if interp == 0:
        return np.eye(h)[_nearest_index(h, out_h)], np.eye(w)[_nearest_index(w, out_w)]
    interp, area, factors = _resize_path(h, w, out_h, out_w, interp)
    if area:
        if factors:
            sy, sx = factors
            return (np.kron(np.eye(out_h), np.full((1, sy), 1.0 / sy)),
                    np.kron(np.eye(out_w), np.full((1, sx), 1.0 / sx)))
        return _taps_matrix(h, *_area_taps(h, out_h)), _taps_matrix(w, *_area_taps(w, out_w))
    return (_taps_matrix(h, *_generic_taps(h, out_h, interp, False)),
            _taps_matrix(w, *_generic_taps(w, out_w, interp, True)))


def _resize_adjoint(xp, ograd, h, w, interp):
    """The transposed resize: ograd (..., OH, OW, C) sent back to (..., h, w, C)."""
    my, mx_ = _resize_matrices(h, w, ograd.shape[-3], ograd.shape[-2], interp)
    work = ograd.dtype if ograd.dtype.kind == 'f' else np.dtype(np.float64)
    return xp.einsum('ji,...jkc,kl->...ilc', xp.asarray(my, work), ograd.astype(work),
                     xp.asarray(mx_, work))


# -------------------------------------------------------------------------------------------------
# cv::copyMakeBorder
# -------------------------------------------------------------------------------------------------

_BORDERS = {0: 'constant', 1: 'replicate', 2: 'reflect', 3: 'wrap', 4: 'reflect_101'}


def _border_index(p, n, kind):
    """OpenCV's borderInterpolate: the source index of position ``p`` (-1: constant)."""
    if 0 <= p < n:
        return p
    if kind == 'constant':
        return -1
    if kind == 'replicate':
        return 0 if p < 0 else n - 1
    if kind == 'wrap':
        return p % n
    if n == 1:
        return 0
    delta = kind == 'reflect_101'
    while not 0 <= p < n:
        p = -p - 1 + delta if p < 0 else n - 1 - (p - n) - delta
    return p


def copy_make_border(xp, img, top, bot, left, right, border_type, value, values):
    """``img`` (H, W[, C]) padded as OpenCV's cv::copyMakeBorder (``border_type`` 0 constant,
    1 replicate, 2 reflect, 3 wrap, 4 reflect_101; the isolated flag 16 changes nothing for a
    whole image). ``_cvcopyMakeBorder``'s check has validated the type and the margins."""
    kind = _BORDERS[border_type & ~16]
    h, w = img.shape[0], img.shape[1]
    if kind != 'constant':
        rows = [_border_index(p, h, kind) for p in range(-top, h + bot)]
        cols = [_border_index(p, w, kind) for p in range(-left, w + right)]
        out = xp.take(img, xp.asarray(rows), axis=0)
        return xp.take(out, xp.asarray(cols), axis=1)
    channels = img.shape[2] if img.ndim == 3 else 1
    # OpenCV's Scalar: ``values`` per channel (missing ones 0), or ``value`` for every channel
    fill = list(values)[:channels] if values else [value] * channels
    fill = fill + [0] * (channels - len(fill))
    out = xp.empty((h + top + bot, w + left + right) + img.shape[2:], img.dtype)
    fill = xp.asarray(np.asarray(fill, np.float64)).astype(img.dtype) if img.dtype.kind == 'f' \
        else xp.asarray(_round_to(np, np.asarray(fill, np.float64), img.dtype))
    out[...] = fill if img.ndim == 3 else fill[0]
    out[top:top + h, left:left + w] = img
    return out


# -------------------------------------------------------------------------------------------------
# Shapes and dtypes
# -------------------------------------------------------------------------------------------------

def _image_rank(shape, op, batch=True):
    """Check that a (partial) shape is (H, W, C), or (N, H, W, C) when ``batch``."""
    if shape is not None and not (len(shape) == 3 or batch and len(shape) == 4):
        batched = ', or (N, height, width, channels)' if batch else ''
        raise ShapeError(f'{op}: input image must have shape (height, width, channels)'
                         f'{batched}, but got {tuple(shape)}')
    return shape


def _color_image(shape, op):
    """An (H, W, C) image shape with C 1 or 3 (MXNet's colour operators)."""
    _image_rank(shape, op, batch=False)
    if shape is not None and shape[2] not in (0, 1, 3):
        raise ShapeError(f'{op}: the last dimension of the input image must be the channel '
                         f'dimension with either 1 or 3 elements, but got input with shape '
                         f'{tuple(shape)}')
    return shape


def _pass_through(F, attrs, inputs, outputs, ograds):
    # MXNet registers these with ElemwiseGradUseNone{"_copy"}: the head gradient unchanged
    return [F._copy(ograds[0])]


def _uniform(xp, low, high, size=None):
    """Draws from U[low, high) on the generator of ``xp`` (as numpy float64)."""
    u = transfer(rng.generator(xp).random(1 if size is None else size), cpu(), copy=False)
    values = low + (high - low) * u
    return float(values[0]) if size is None else values


# -------------------------------------------------------------------------------------------------
# to_tensor and normalize
# -------------------------------------------------------------------------------------------------

def _to_tensor_axes(ndim):
    return (2, 0, 1) if ndim == 3 else (0, 3, 1, 2)


@register('_image_to_tensor')
class _image_to_tensor:
    """An image (H, W, C) or batch (N, H, W, C) with values in [0, 255] as a float32 tensor
    (C, H, W) or (N, C, H, W) with values in [0, 1]: ``float32(data) / 255``."""
    inputs = ('data',)

    def infer_shape(attrs, data):
        _image_rank(data, '_image_to_tensor')
        if data is None:
            return [None], [None]
        return [data], [tuple(data[a] for a in _to_tensor_axes(len(data)))]

    def infer_type(attrs, data):
        return [data], [np.dtype(_F32)]

    def compute(xp, attrs, data):
        axes = _to_tensor_axes(data.ndim)
        return xp.ascontiguousarray((data.astype(_F32) / _F32(255)).transpose(axes))

    def gradient(F, attrs, inputs, outputs, ograds):
        axes = (1, 2, 0) if len(inputs[0].shape) == 3 else (0, 2, 3, 1)
        return [F.Cast(F.transpose(ograds[0], axes=axes) / 255.0, dtype=inputs[0].dtype)]


def _check_normalize(attrs, shape):
    if shape is None:
        return
    if len(shape) not in (3, 4):
        raise ShapeError(f'_image_normalize: input tensor must have shape (channels, height, '
                         f'width), or (N, channels, height, width), but got {tuple(shape)}')
    channels, which = (shape[0], 'first') if len(shape) == 3 else (shape[1], 'second')
    if channels not in (0, 1, 3):
        raise ShapeError(f'_image_normalize: the {which} dimension of input tensor must be the '
                         f'channel dimension with either 1 or 3 elements, but got input with '
                         f'shape {tuple(shape)}')
    for name in ('mean', 'std'):
        value = attrs[name]
        if channels and len(value) not in (1, channels):
            raise ShapeError(f'_image_normalize: invalid {name} for input with shape '
                             f'{tuple(shape)}. {name} must have either 1 or {channels} '
                             f'elements, but got {tuple(value)}')


def _per_channel(xp, values, dtype):
    """Per-channel values (one, or one per channel) as a (k, 1, 1) column that broadcasts
    over a (C, H, W)/(N, C, H, W) array."""
    column = np.asarray(values, np.float64).reshape((-1, 1, 1))
    return xp.asarray(column.astype(dtype) if np.dtype(dtype).kind == 'f' else column)


@register('_image_normalize')
class _image_normalize:
    """``(data[c] - mean[c]) / std[c]`` for each channel c of a tensor (C, H, W) or
    (N, C, H, W), C 1 or 3; one value of ``mean`` or ``std`` serves every channel.
    Integer tensors compute as MXNet's kernel does (mean and std converted to the dtype, C
    integer division). The gradient is ``ograd / std``."""
    inputs = ('data',)
    attrs = dict(mean=FloatTuple((0.0,)), std=FloatTuple((1.0,)))

    def infer_shape(attrs, data):
        _check_normalize(attrs, data)
        return [data], [data]

    def compute(xp, attrs, data):
        _check_normalize(attrs, data.shape)
        if data.dtype.kind == 'f':
            mean = _per_channel(xp, attrs.mean, data.dtype)
            std = _per_channel(xp, attrs.std, data.dtype)
            return (data - mean) / std
        # C++: DType mean = param.mean[i] (truncation), (in - mean) / std in int arithmetic
        with np.errstate(all='ignore'):
            mean = _per_channel(xp, attrs.mean, np.float64).astype(np.int64)
            std = _per_channel(xp, attrs.std, np.float64).astype(np.int64)
            diff = data.astype(np.int64) - mean
            quotient = xp.abs(diff) // xp.abs(std) * xp.sign(diff) * xp.sign(std)
        return quotient.astype(data.dtype)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._image_normalize(ograds[0], mean=(0.0,), std=attrs.std)]


# -------------------------------------------------------------------------------------------------
# Resizing, cropping, borders
# -------------------------------------------------------------------------------------------------

def _resize_hw(attrs, h, w):
    """(height, width) of ``_image_resize`` for an input of h x w (0 where unknown)."""
    size = attrs.size
    if len(size) == 2:
        return size[1], size[0]
    if not attrs.keep_ratio:
        return size[0], size[0]
    if not h or not w:
        return 0, 0
    if h > w:
        return h * size[0] // w, size[0]
    return size[0], w * size[0] // h


def _check_resize(attrs):
    if len(attrs.size) not in (1, 2):
        raise ValueError(f'size must be (width, height) or (size,), got {attrs.size}')
    if min(attrs.size) <= 0:
        raise ValueError(f'size must be positive, got {attrs.size}')
    if attrs.interp not in (0, 1, 2, 3, 4):
        raise ValueError(f'interp={attrs.interp} is not one of 0 (nearest), 1 (bilinear), '
                         '2 (bicubic), 3 (area), 4 (Lanczos)')


@register('_image_resize')
class _image_resize:
    """Resize an image (H, W, C) or batch (N, H, W, C) with OpenCV's ``cv::resize``.

    ``size``: (width, height), or one size: both sides, or with ``keep_ratio`` the shorter
    side (the longer one scaled and rounded down). ``interp``: 0 nearest, 1 bilinear, 2 bicubic,
    3 area, 4 Lanczos. On float images the resize is linear; its gradient is the transposed map
    (``_backward_image_resize``).
    """
    inputs = ('data',)
    named_inputs = False
    attrs = dict(size=Shape(()), keep_ratio=Bool(False), interp=Int(1))
    check = _check_resize

    def infer_shape(attrs, data):
        _image_rank(data, '_image_resize')
        if data is None:
            return [None], [None]
        h, w = _resize_hw(attrs, data[-3], data[-2])
        return [data], [tuple(data[:-3]) + (h, w, data[-1])]

    def compute(xp, attrs, data):
        h, w = _resize_hw(attrs, data.shape[-3], data.shape[-2])
        return cv_resize(xp, data, w, h, attrs.interp)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_image_resize(ograds[0], inputs[0], interp=attrs.interp)]


@register('_cvimresize')
class _cvimresize:
    """``cv::resize`` of an image ``src`` (H, W, C) to ``w`` x ``h`` (``mx.image.imresize``);
    ``interp`` as in ``_image_resize``, and so is the gradient."""
    inputs = ('src',)
    attrs = dict(w=Int(), h=Int(), interp=Int(1))

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_image_resize(ograds[0], inputs[0], interp=attrs.interp)]

    def check(attrs):
        if attrs.w <= 0 or attrs.h <= 0:
            raise ValueError(f'w ({attrs.w}) and h ({attrs.h}) must be positive')

    def infer_shape(attrs, src):
        _image_rank(src, '_cvimresize', batch=False)
        if src is None:
            return [None], [None]
        return [src], [(attrs.h, attrs.w, src[2])]

    def compute(xp, attrs, src):
        _image_rank(src.shape, '_cvimresize', batch=False)
        return cv_resize(xp, src, attrs.w, attrs.h, attrs.interp)


@register('_backward_image_resize')
class _backward_image_resize:
    """The gradient of the resizes: ``ograd`` (..., OH, OW, C) sent back through the
    interpolation weights onto the shape of ``data`` (..., H, W, C) (the transposed map of the
    float resize). Its gradient is the resize of the head to ograd's size."""
    inputs = ('ograd', 'data')
    attrs = dict(interp=Int(1))

    def infer_shape(attrs, ograd, data):
        _image_rank(data, '_backward_image_resize')
        _image_rank(ograd, '_backward_image_resize')
        if data is not None and ograd is not None:
            ograd = merge_shape(ograd, tuple(data[:-3]) + tuple(ograd[-3:-1]) + (data[-1],),
                                'ograd')
        return [ograd, data], [data]

    def infer_type(attrs, ograd, data):
        return [ograd, data], [data]

    def compute(xp, attrs, ograd, data):
        grad = _resize_adjoint(xp, ograd, data.shape[-3], data.shape[-2], attrs.interp)
        return grad.astype(data.dtype)

    def gradient(F, attrs, inputs, outputs, ograds):
        oh, ow = inputs[0].shape[-3], inputs[0].shape[-2]
        return [F._image_resize(ograds[0], size=(ow, oh), interp=attrs.interp), None]


@register('_cvcopyMakeBorder')
class _cvcopyMakeBorder:
    """``cv::copyMakeBorder`` of an image ``src`` (H, W, C): ``top``, ``bot``, ``left`` and
    ``right`` rows and columns added. ``type``: 0 constant (``values`` per channel, or
    ``value`` for all), 1 replicate, 2 reflect, 3 wrap, 4 reflect_101 (16 may be or-ed in:
    OpenCV's isolated flag). Not differentiable."""
    inputs = ('src',)
    attrs = dict(top=Int(), bot=Int(), left=Int(), right=Int(), type=Int(0), value=Float(0.0),
                 values=FloatTuple(()))
    gradient = _no_gradient('_cvcopyMakeBorder')

    def check(attrs):
        if min(attrs.top, attrs.bot, attrs.left, attrs.right) < 0:
            raise ValueError('the margins top, bot, left and right must not be negative')
        if attrs.type & ~16 not in _BORDERS:
            raise ValueError(f'type={attrs.type} is not a border type (0 constant, '
                             '1 replicate, 2 reflect, 3 wrap, 4 reflect_101)')

    def infer_shape(attrs, src):
        _image_rank(src, '_cvcopyMakeBorder', batch=False)
        if src is None:
            return [None], [None]
        h, w, c = src
        return [src], [(h and h + attrs.top + attrs.bot, w and w + attrs.left + attrs.right, c)]

    def compute(xp, attrs, src):
        _image_rank(src.shape, '_cvcopyMakeBorder', batch=False)
        if attrs.type & ~16 != 0 and min(src.shape[:2]) == 0:
            raise ShapeError('_cvcopyMakeBorder: an empty image has no border to extend')
        return copy_make_border(xp, src, attrs.top, attrs.bot, attrs.left, attrs.right,
                                attrs.type, attrs.value, attrs['values'])


def _crop_check(attrs):
    if min(attrs.x, attrs.y) < 0 or min(attrs.width, attrs.height) <= 0:
        raise ValueError(f'x ({attrs.x}) and y ({attrs.y}) must not be negative, width '
                         f'({attrs.width}) and height ({attrs.height}) must be positive')


def _crop_bounds(attrs, shape):
    h, w = shape[-3], shape[-2]
    if w and attrs.x + attrs.width > w:
        raise ShapeError(f'_image_crop: x + width should not be greater than input width '
                         f'({attrs.x} + {attrs.width} > {w}, input shape {tuple(shape)})')
    if h and attrs.y + attrs.height > h:
        raise ShapeError(f'_image_crop: y + height should not be greater than input height '
                         f'({attrs.y} + {attrs.height} > {h}, input shape {tuple(shape)})')


def _crop_slice(attrs, ndim):
    lead = (None,) * (ndim - 3)
    begin = lead + (attrs.y, attrs.x, None)
    end = lead + (attrs.y + attrs.height, attrs.x + attrs.width, None)
    return begin, end


@register('_image_crop')
class _image_crop:
    """The rectangle of ``width`` x ``height`` at (``x``, ``y``) (left, top) of an image
    (H, W, C) or batch (N, H, W, C). Its gradient puts the head gradient back in place."""
    inputs = ('data',)
    named_inputs = False
    attrs = dict(x=Int(), y=Int(), width=Int(), height=Int())
    check = _crop_check

    def infer_shape(attrs, data):
        _image_rank(data, '_image_crop')
        if data is None:
            return [None], [None]
        _crop_bounds(attrs, data)
        return [data], [tuple(data[:-3]) + (attrs.height, attrs.width, data[-1])]

    def compute(xp, attrs, data):
        _image_rank(data.shape, '_image_crop')
        _crop_bounds(attrs, data.shape)
        return data[..., attrs.y:attrs.y + attrs.height, attrs.x:attrs.x + attrs.width, :].copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        begin, end = _crop_slice(attrs, len(inputs[0].shape))
        return [F._slice_assign(F.zeros_like(inputs[0]), ograds[0], begin=begin, end=end)]


# -------------------------------------------------------------------------------------------------
# Flips
# -------------------------------------------------------------------------------------------------

def _flip_infer(op):
    def infer_shape(attrs, data):
        _image_rank(data, op, batch=False)
        return [data], [data]
    return infer_shape


def _flip(xp, data, axis):
    return xp.ascontiguousarray(xp.flip(data, axis=axis))


def _fixed_flip(name, axis, what):
    def compute(xp, attrs, data):
        _image_rank(data.shape, name, batch=False)
        return _flip(xp, data, axis)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [getattr(F, name)(ograds[0])]      # a flip is its own inverse
    register(name, inputs=('data',), compute=compute, gradient=gradient,
             infer_shape=_flip_infer(name), inplace=((0, 0),), named_inputs=False)(
        type(name, (), {'__doc__': f'An image (H, W, C) mirrored {what}; its gradient mirrors '
                                   'the head gradient.'}))


_fixed_flip('_image_flip_left_right', 1, 'left to right')
_fixed_flip('_image_flip_top_bottom', 0, 'top to bottom')


def _random_flip(name, axis, what):
    def compute(xp, attrs, data):
        _image_rank(data.shape, name, batch=False)
        if _uniform(xp, 0.0, 1.0) < 0.5:
            return _flip(xp, data, axis)
        return data.copy()
    register(name, inputs=('data',), compute=compute, gradient=_pass_through,
             infer_shape=_flip_infer(name), random=True, inplace=((0, 0),), named_inputs=False)(
        type(name, (), {'__doc__': f'An image (H, W, C) mirrored {what} with probability '
                                   '0.5. The gradient passes the head gradient through (as '
                                   "MXNet's)."}))


_random_flip('_image_random_flip_left_right', 1, 'left to right')
_random_flip('_image_random_flip_top_bottom', 0, 'top to bottom')


# -------------------------------------------------------------------------------------------------
# Colour: brightness, contrast, saturation, hue, lighting (MXNet's float32 arithmetic)
# -------------------------------------------------------------------------------------------------

_LUMA = np.array([0.299, 0.587, 0.114], _F32)


def _work(x):
    # MXNet's kernels compute ``float val = input * alpha ...``: a float64 input is multiplied
    # in double and the result kept as float
    return x.astype(np.float64 if x.dtype == np.float64 else _F32)


def _saturate(xp, val, dtype):
    """MXNet's saturate_cast from float: uint8 clamped to [0, 255] then truncated, other
    integers truncated, floats converted."""
    val = val.astype(_F32)
    if dtype == np.uint8:
        return xp.clip(val, 0, 255).astype(np.uint8)
    if dtype.kind in 'iu':
        with np.errstate(invalid='ignore'):
            return xp.trunc(val).astype(dtype)
    return val.astype(dtype)


def _brightness(xp, x, alpha):
    return _saturate(xp, _work(x) * _F32(alpha), x.dtype)


def _contrast(xp, x, alpha):
    h, w, c = x.shape
    work = _work(x)
    if c > 1:
        terms = (work * xp.asarray(_LUMA.astype(work.dtype))).astype(_F32)
    else:
        terms = work.astype(_F32)
    # the kernel adds pixel after pixel in float32: a running sum (cumsum) reproduces it
    total = xp.cumsum(terms.reshape(-1), dtype=_F32)[-1]
    gray_mean = total / _F32(h * w)
    beta = (_F32(1) - _F32(alpha)) * gray_mean
    return _saturate(xp, work * _F32(alpha) + beta, x.dtype)


def _saturation(xp, x, alpha):
    if x.shape[2] == 1:
        return x.copy()
    work = _work(x)
    gray = ((work[..., 0:1] * _LUMA[0]).astype(_F32) + (work[..., 1:2] * _LUMA[1]).astype(_F32) +
            (work[..., 2:3] * _LUMA[2]).astype(_F32))
    gray = gray * (_F32(1) - _F32(alpha))
    return _saturate(xp, gray + work * _F32(alpha), x.dtype)


_HLS_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def _hue(xp, x, alpha):
    """MXNet's hue rotation: RGB -> HLS (OpenCV's formulas), hue + alpha * 360 degrees, back."""
    if x.shape[2] == 1:
        return x.copy()
    f = x.astype(_F32)
    with np.errstate(all='ignore'):
        r, g, b = (f[..., i] / _F32(255) for i in range(3))
        vmax = xp.fmax(xp.fmax(r, g), b)
        vmin = xp.fmin(xp.fmin(r, g), b)
        diff = vmax - vmin
        light = (vmax + vmin) * _F32(0.5)
        colour = diff > np.finfo(_F32).eps
        sat = (light < _F32(0.5)).astype(_F32) * diff / (vmax + vmin)
        sat = sat + (light >= _F32(0.5)).astype(_F32) * diff / (_F32(2) - vmax - vmin)
        scale = _F32(60) / diff
        is_r, is_g = vmax == r, vmax == g
        hue = is_r.astype(_F32) * (g - b) * scale
        hue = hue + (~is_r & is_g).astype(_F32) * ((b - r) * scale + _F32(120))
        hue = hue + (~is_r & ~is_g).astype(_F32) * ((r - g) * scale + _F32(240))
        hue = hue + (hue < 0).astype(_F32) * _F32(360)
        hue = xp.where(colour, hue, _F32(0))
        sat = xp.where(colour, sat, _F32(0))
        hue = hue + _F32(alpha) * _F32(360)
        # back to RGB (OpenCV's HLS2RGB)
        p2 = (light <= _F32(0.5)).astype(_F32) * light * (_F32(1) + sat)
        p2 = p2 + (light > _F32(0.5)).astype(_F32) * (light + sat - light * sat)
        p1 = _F32(2) * light - p2
        hue = hue * (_F32(1) / _F32(60))
        while bool((hue < 0).any()):
            hue = xp.where(hue < 0, hue + _F32(6), hue)
        while bool((hue >= 6).any()):
            hue = xp.where(hue >= 6, hue - _F32(6), hue)
        sector = xp.clip(hue.astype(np.int64), 0, 5)
        hue = hue - sector.astype(_F32)
        tab = xp.stack([p2, p1, p1 + (p2 - p1) * (_F32(1) - hue), p1 + (p2 - p1) * hue], axis=-1)
        picks = xp.asarray(_HLS_SECTORS)[sector]               # (..., 3): b, g, r entries
        bgr = xp.take_along_axis(tab, picks, axis=-1)
        rgb = xp.where((sat != 0)[..., None], bgr[..., ::-1], light[..., None])
        out = rgb * _F32(255)
    return _saturate(xp, out, x.dtype)


# MXNet's eigen decomposition of ImageNet's RGB covariance (AlexNet), as float32 products
_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]]).astype(_F32)


def _lighting(xp, x, alpha):
    if x.shape[2] == 1:
        return x.copy()
    a = np.asarray(alpha, _F32)
    pca = (_EIG[:, 0] * a[0] + _EIG[:, 1] * a[1]) + _EIG[:, 2] * a[2]
    return _saturate(xp, x.astype(_F32) + xp.asarray(pca), x.dtype)


def _color_infer(name):
    def infer_shape(attrs, data):
        _color_image(data, name)
        return [data], [data]
    return infer_shape


def _check_factors(attrs):
    if attrs.min_factor < 0 or attrs.max_factor < 0:
        raise ValueError(f'min_factor ({attrs.min_factor}) and max_factor ({attrs.max_factor}) '
                         'must not be negative')
    if attrs.min_factor > attrs.max_factor:
        raise ValueError(f'min_factor ({attrs.min_factor}) must not exceed max_factor '
                         f'({attrs.max_factor})')


def _random_enhance(name, adjust, what):
    def compute(xp, attrs, data):
        _color_image(data.shape, name)
        alpha = _F32(_uniform(xp, attrs.min_factor, attrs.max_factor))
        return adjust(xp, data, alpha)
    doc = (f'{what} of an image (H, W, C), C 1 or 3, by a factor drawn uniformly from '
           '[min_factor, max_factor]. uint8 results are clipped to [0, 255]. The gradient '
           "passes the head gradient through (as MXNet's).")
    register(name, inputs=('data',), compute=compute, gradient=_pass_through,
             attrs=dict(min_factor=Float(), max_factor=Float()), check=_check_factors,
             infer_shape=_color_infer(name), random=True, inplace=((0, 0),),
             named_inputs=False)(type(name, (), {'__doc__': doc}))


_random_enhance('_image_random_brightness', _brightness,
                'Scale the brightness (``data * alpha``)')
_random_enhance('_image_random_contrast', _contrast,
                'Scale the contrast (``data * alpha + (1 - alpha) * mean grey``)')
_random_enhance('_image_random_saturation', _saturation,
                'Scale the saturation (``data * alpha + (1 - alpha) * grey``)')
_random_enhance('_image_random_hue', _hue,
                'Rotate the hue by ``alpha * 360`` degrees (in HLS space)')


@register('_image_random_color_jitter')
class _image_random_color_jitter:
    """Brightness, contrast, saturation and hue jitter of an image (H, W, C) in a random
    order: factors 1 + U(-brightness, brightness) etc., and a hue rotation by
    U(-hue, hue) * 360 degrees; a step whose amount is 0 is skipped. The gradient passes the
    head gradient through (as MXNet's)."""
    inputs = ('data',)
    named_inputs = False
    attrs = dict(brightness=Float(), contrast=Float(), saturation=Float(), hue=Float())
    infer_shape = _color_infer('_image_random_color_jitter')
    random = True
    inplace = ((0, 0),)
    gradient = _pass_through

    def compute(xp, attrs, data):
        _color_image(data.shape, '_image_random_color_jitter')
        steps = ((attrs.brightness, _brightness, 1), (attrs.contrast, _contrast, 1),
                 (attrs.saturation, _saturation, 1), (attrs.hue, _hue, 0))
        order = np.argsort(_uniform(xp, 0.0, 1.0, 4))
        out = data
        for k in order:
            amount, adjust, base = steps[k]
            if amount > 0:
                out = adjust(xp, out, _F32(base + _uniform(xp, -amount, amount)))
        return out.copy() if out is data else out


@register('_image_adjust_lighting')
class _image_adjust_lighting:
    """AlexNet's PCA lighting: adds ``eigvec @ (alpha * eigval)`` (ImageNet's RGB eigen
    decomposition) to every pixel of an image (H, W, C); a one-channel image is returned
    unchanged. Its gradient is the head gradient (an added constant)."""
    inputs = ('data',)
    named_inputs = False
    attrs = dict(alpha=FloatTuple())
    infer_shape = _color_infer('_image_adjust_lighting')
    inplace = ((0, 0),)
    gradient = _pass_through

    def check(attrs):
        if len(attrs.alpha) != 3:
            raise ValueError(f'alpha must hold the three lighting alphas of R, G and B, got '
                             f'{attrs.alpha}')

    def compute(xp, attrs, data):
        _color_image(data.shape, '_image_adjust_lighting')
        return _lighting(xp, data, attrs.alpha)


@register('_image_random_lighting')
class _image_random_lighting:
    """AlexNet's PCA lighting with alphas drawn from N(0, alpha_std^2) (see
    ``_image_adjust_lighting``). The gradient passes the head gradient through."""
    inputs = ('data',)
    named_inputs = False
    attrs = dict(alpha_std=Float(0.05))
    infer_shape = _color_infer('_image_random_lighting')
    random = True
    inplace = ((0, 0),)
    gradient = _pass_through

    def compute(xp, attrs, data):
        _color_image(data.shape, '_image_random_lighting')
        alpha = transfer(rng.generator(xp).standard_normal(3), cpu(), copy=False)
        alpha = alpha * attrs.alpha_std
        return _lighting(xp, data, alpha.astype(_F32))
