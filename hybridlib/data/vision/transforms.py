"""Image transforms (``gluon.data.vision.transforms``): Blocks that take images as MXNet stores
them, ``(H, W, C)`` (or ``(N, H, W, C)``) uint8 NDArrays, and tensors ``(C, H, W)``.

The HybridBlocks here are built from registered operators, so ``Compose`` can hybridize a run
of them into one compiled graph. MXNet calls its ``_image_*`` operators instead, so an exported
transform graph names other operators than MXNet's. ``Resize`` reproduces OpenCV's
``cv::resize`` (which MXNet uses) bit for bit for nearest and bilinear interpolation, including
OpenCV's fixed-point arithmetic on uint8 images. Random transforms draw from hybridlib's
generator, so ``mx.random.seed`` makes them repeat (MXNet's Block transforms use Python's
``random``).
"""
import numpy as np

from ...base import DTypeError, NotSupportedError, ShapeError, numeric_types
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential
from ... import random as _random

__all__ = ['Compose', 'Cast', 'ToTensor', 'Normalize', 'RandomResizedCrop', 'CropResize',
           'CenterCrop', 'Resize', 'RandomFlipLeftRight', 'RandomFlipTopBottom', 'RandomApply']

# OpenCV's fixed-point bilinear resize of 8-bit images: weights in 11 bits
_COEF_SCALE = 2048.0


class Compose(Sequential):
    """Applies transforms in sequence; each run of HybridBlocks among them is put in a
    hybridized HybridSequential.

    Parameters
    ----------
    transforms : list of Blocks
        The transforms, in order.

    Examples
    --------
    >>> transformer = transforms.Compose([transforms.Resize(300),
    ...                                   transforms.CenterCrop(256),
    ...                                   transforms.ToTensor()])
    >>> transformer(nd.random.uniform(0, 255, (224, 224, 3)).astype('uint8')).shape
    (3, 256, 256)
    """

    def __init__(self, transforms):
        super().__init__()
        hybrid = []
        # unlike MXNet, the caller's list is not changed (MXNet appends None to it)
        for block in list(transforms) + [None]:
            if isinstance(block, HybridBlock):
                hybrid.append(block)
                continue
            if len(hybrid) == 1:
                self.add(hybrid[0])
            elif len(hybrid) > 1:
                hblock = HybridSequential()
                for h in hybrid:
                    hblock.add(h)
                hblock.hybridize()
                self.add(hblock)
            hybrid = []
            if block is not None:
                self.add(block)


class Cast(HybridBlock):
    """Casts the input to ``dtype``.

    Parameters
    ----------
    dtype : str or numpy dtype, default 'float32'
        The target data type.

    Inputs: ``data`` of any shape and dtype. Outputs: the same shape, of ``dtype``.
    """

    def __init__(self, dtype='float32'):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


def _image_ndim(x, what, layout='(height, width, channels)', batch=True):
    ndim = len(x.shape)
    if ndim != 3 and not (batch and ndim == 4):
        batched = f', or (N, {layout[1:]}' if batch else ''
        raise ShapeError(f'{what}: Input image must have shape {layout}{batched} but got '
                         f'{tuple(x.shape)}')
    return ndim


class ToTensor(HybridBlock):
    """Converts an image ``(H, W, C)`` (or a batch ``(N, H, W, C)``) with values in
    ``[0, 255]`` to a float32 tensor ``(C, H, W)`` (``(N, C, H, W)``) with values divided by
    255.

    Inputs: ``data`` of shape (H, W, C) or (N, H, W, C), usually uint8.
    Outputs: float32 of shape (C, H, W) or (N, C, H, W).
    """

    def hybrid_forward(self, F, x):
        ndim = _image_ndim(x, 'ToTensor')
        axes = (2, 0, 1) if ndim == 3 else (0, 3, 1, 2)
        return F.transpose(F.cast(x, 'float32') / 255.0, axes=axes)


def _as_tuple(value):
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


class Normalize(HybridBlock):
    """Normalizes a tensor ``(C, H, W)`` or ``(N, C, H, W)`` channel by channel:
    ``out[c] = (data[c] - mean[c]) / std[c]``.

    Parameters
    ----------
    mean : float or tuple of floats
        The mean of each channel (one value for all channels).
    std : float or tuple of floats
        The standard deviation of each channel (one value for all channels).

    Inputs: ``data`` of shape (C, H, W) or (N, C, H, W) with C 1 or 3.
    Outputs: the same shape and dtype.
    """

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        ndim = _image_ndim(x, 'Normalize', '(channels, height, width)')
        axis = ndim - 3
        channels = x.shape[axis]
        if channels not in (1, 3):
            raise ShapeError(f'Normalize: The first dimension of input tensor must be the '
                             f'channel dimension with either 1 or 3 elements, but got input '
                             f'with shape {tuple(x.shape)}')
        mean, std = _as_tuple(self._mean), _as_tuple(self._std)
        for name, value in (('mean', mean), ('std', std)):
            if len(value) not in (1, channels):
                raise ShapeError(f'Normalize: Invalid {name} for input with shape '
                                 f'{tuple(x.shape)}. {name} must have either 1 or {channels} '
                                 f'elements, but got {value}')
        if len(set(mean)) == 1 and len(set(std)) == 1:
            return (x - float(mean[0])) / float(std[0])
        mean, std = mean * (channels // len(mean)), std * (channels // len(std))
        planes = F.split(x, num_outputs=channels, axis=axis)
        return F.concat(*[(p - float(m)) / float(s) for p, m, s in zip(planes, mean, std)],
                        dim=axis)


# -- resizing (OpenCV's cv::resize, INTER_NEAREST and INTER_LINEAR) -----------------------------

def _positions(F, n_in, n_out):
    """Destination positions 0..n_out-1 and OpenCV's scale (1 / (n_out / n_in), in double)."""
    return F.arange(0, n_out, dtype='float64'), 1.0 / (n_out / n_in)


def _nearest_taps(F, n_in, n_out):
    pos, scale = _positions(F, n_in, n_out)
    return F.clip(F.floor(pos * scale), 0, n_in - 1)


def _linear_taps(F, n_in, n_out, zero_border_weight):
    """Source indices i0, i1 and the float32 weight of i1 along one axis.

    OpenCV sets the weight to 0 outside the image along x only; along y it clamps the rows and
    keeps the weights (the fixed-point sum of one row twice can differ from the row by 1).
    """
    pos, scale = _positions(F, n_in, n_out)
    src = F.cast((pos + 0.5) * scale - 0.5, dtype='float32')
    base = F.floor(src)
    frac = src - base
    if zero_border_weight:
        frac = frac * ((base >= 0) * (base < n_in - 1))
    return F.clip(base, 0, n_in - 1), F.clip(base + 1, 0, n_in - 1), frac


def _along(F, weight, axis, ndim):
    """``weight`` (a vector) shaped to broadcast along ``axis`` of an ndim array."""
    shape = [1] * ndim
    shape[axis] = -1
    return F.reshape(weight, shape=tuple(shape))


def _interpolate(F, data, i0, i1, w0, w1, axis, ndim):
    return F.broadcast_add(
        F.broadcast_mul(F.take(data, i0, axis=axis), _along(F, w0, axis, ndim)),
        F.broadcast_mul(F.take(data, i1, axis=axis), _along(F, w1, axis, ndim)))


def _resize_linear_uint8(F, x, taps_x, taps_y, axes, ndim):
    """OpenCV's fixed-point path: 11-bit weights, rows as ints, then
    ``((b0 * (S0 >> 4)) >> 16) + ((b1 * (S1 >> 4)) >> 16) + 2) >> 2`` (exact in float64)."""
    def fixed(frac):
        w1 = F.floor(frac * _COEF_SCALE + 0.5)
        w0 = F.floor((1 - frac) * _COEF_SCALE + 0.5)
        return F.cast(w0, dtype='float64'), F.cast(w1, dtype='float64')
    axis_y, axis_x = axes
    (x0, x1, fx), (y0, y1, fy) = taps_x, taps_y
    rows = _interpolate(F, F.cast(x, dtype='float64'), x0, x1, *fixed(fx), axis_x, ndim)
    b0, b1 = fixed(fy)
    top = F.floor(F.broadcast_mul(F.floor(F.take(rows, y0, axis=axis_y) / 16),
                                  _along(F, b0, axis_y, ndim)) / 65536)
    bottom = F.floor(F.broadcast_mul(F.floor(F.take(rows, y1, axis=axis_y) / 16),
                                     _along(F, b1, axis_y, ndim)) / 65536)
    return F.cast(F.floor((top + bottom + 2) / 4), dtype='uint8')


def _resize(F, x, out_w, out_h, interp, dtype):
    """``x`` (H, W, C) or (N, H, W, C) resized to (out_h, out_w) as cv::resize does it."""
    ndim = len(x.shape)
    axes = (ndim - 3, ndim - 2)
    in_h, in_w = x.shape[axes[0]], x.shape[axes[1]]
    if interp not in (0, 1):
        raise NotSupportedError(f'resize: interpolation {interp} is not supported; hybridlib '
                                'implements 0 (nearest) and 1 (bilinear)')
    if interp == 0:
        rows = F.take(x, _nearest_taps(F, in_h, out_h), axis=axes[0])
        return F.take(rows, _nearest_taps(F, in_w, out_w), axis=axes[1])
    taps_y = _linear_taps(F, in_h, out_h, False)
    taps_x = _linear_taps(F, in_w, out_w, True)
    dtype = np.dtype(dtype)
    if dtype == np.uint8:
        return _resize_linear_uint8(F, x, taps_x, taps_y, axes, ndim)
    if dtype.kind not in 'fiu':
        raise DTypeError(f'resize: images of dtype {dtype} cannot be resized')
    # float images in their own precision (float16 in float32); integer ones in float64
    work = dtype if dtype.kind == 'f' and dtype.itemsize >= 4 else \
        np.dtype('float32' if dtype.kind == 'f' else 'float64')
    (x0, x1, fx), (y0, y1, fy) = taps_x, taps_y
    fx, fy = F.cast(fx, dtype=work.name), F.cast(fy, dtype=work.name)
    rows = _interpolate(F, F.cast(x, dtype=work.name), x0, x1, 1 - fx, fx, axes[1], ndim)
    out = _interpolate(F, rows, y0, y1, 1 - fy, fy, axes[0], ndim)
    if dtype.kind != 'f':
        out = F.rint(out)
    return F.cast(out, dtype=dtype.name)


def _resize_size(size, keep_ratio, in_h, in_w):
    """(width, height) of MXNet's image resize for ``size`` (int or (w, h))."""
    if isinstance(size, (list, tuple)):
        if len(size) == 2:
            return int(size[0]), int(size[1])
        size = size[0]
    size = int(size)
    if not keep_ratio:
        return size, size
    if in_h > in_w:
        return size, in_h * size // in_w
    return in_w * size // in_h, size


class Resize(HybridBlock):
    """Resizes an image or a batch of images.

    Parameters
    ----------
    size : int or tuple of (W, H)
        The output size. An int gives a square, or with ``keep_ratio`` the length of the
        shorter edge (the longer one is scaled and rounded down).
    keep_ratio : bool, default False
        Keep the aspect ratio when ``size`` is an int.
    interpolation : int, default 1
        0 nearest neighbour, 1 bilinear (OpenCV's rules, as MXNet). OpenCV's other methods
        (2 bicubic, 3 area, 4 Lanczos) raise NotSupportedError.

    Inputs: ``data`` of shape (H, W, C) or (N, H, W, C).
    Outputs: shape (H', W', C) or (N, H', W', C), the dtype of ``data``.
    """

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        ndim = _image_ndim(x, 'Resize')
        w, h = _resize_size(self._size, self._keep, x.shape[ndim - 3], x.shape[ndim - 2])
        return _resize(F, x, w, h, self._interpolation, x.dtype)


class CropResize(HybridBlock):
    """Crops a rectangle of an image (or a batch), then optionally resizes it.

    Parameters
    ----------
    x, y : int
        Left and top boundaries of the crop.
    width, height : int
        Size of the crop.
    size : int or tuple of (W, H), optional
        Resize the crop to this size.
    interpolation : int, optional
        0 nearest or 1 bilinear (the default; MXNet fails on None).

    Inputs: ``data`` of shape (H, W, C) or (N, H, W, C).
    Outputs: (height, width, C) or (N, height, width, C), or the resized size.
    """

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._x = x
        self._y = y
        self._width = width
        self._height = height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        ndim = _image_ndim(x, 'CropResize')
        in_h, in_w = x.shape[ndim - 3], x.shape[ndim - 2]
        if self._x + self._width > in_w:
            raise ShapeError(f'CropResize: x + width should not be greater than input width '
                             f'({self._x} + {self._width} > {in_w})')
        if self._y + self._height > in_h:
            raise ShapeError(f'CropResize: y + height should not be greater than input height '
                             f'({self._y} + {self._height} > {in_h})')
        lead = (None,) * (ndim - 3)
        out = F.slice(x, begin=lead + (self._y, self._x, None),
                      end=lead + (self._y + self._height, self._x + self._width, None))
        if self._size:
            w, h = _resize_size(self._size, False, self._height, self._width)
            interp = 1 if self._interpolation is None else self._interpolation
            out = _resize(F, out, w, h, interp, x.dtype)
        return out


def _interp_method(interp, sizes):
    """MXNet's ``image._get_interp_method``: 9 picks by the sizes, 10 at random."""
    if interp == 9:
        old_h, old_w, new_h, new_w = sizes
        if new_h > old_h and new_w > old_w:
            return 2
        if new_h < old_h and new_w < old_w:
            return 3
        return 1
    if interp == 10:
        return int(_random.generator(np).integers(0, 5))
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError('Unknown interp method %d' % interp)
    return interp


def _fixed_crop(src, x0, y0, w, h, size, interp):
    """``src[y0:y0+h, x0:x0+w]``, resized to ``size`` (w, h) when that differs."""
    from ... import ndarray as nd
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        out = _resize(nd, out, size[0], size[1], _interp_method(interp, (h, w, size[1], size[0])),
                      out.dtype)
    return out


def _scale_down(src_size, size):
    """A crop size (w, h) shrunk, keeping its aspect ratio, to fit in the image size."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def _center_crop(src, size, interp):
    h, w = src.shape[0], src.shape[1]
    new_w, new_h = _scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    return _fixed_crop(src, x0, y0, new_w, new_h, size, interp)


def _pair(size):
    return (size, size) if isinstance(size, numeric_types) else tuple(size)


class CenterCrop(Block):
    """Crops the center of an image to ``size``; a crop larger than the image is scaled down
    to fit (keeping its aspect ratio) and the result resized up to ``size``.

    Parameters
    ----------
    size : int or tuple of (W, H)
        The output size.
    interpolation : int, default 1
        0 nearest or 1 bilinear.

    Inputs: ``data`` of shape (H, W, C). Outputs: shape (size[1], size[0], C).
    """

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._args = (_pair(size), interpolation)

    def forward(self, x):
        return _center_crop(x, *self._args)


class RandomResizedCrop(Block):
    """Crops a random rectangle of random area and aspect ratio, resized to ``size``.

    Up to 10 tries draw an area fraction uniformly from ``scale`` and an aspect ratio
    log-uniformly from ``ratio``; the first crop that fits is taken at a uniformly random
    position. If none fits, the center crop of ``size`` is taken.

    Parameters
    ----------
    size : int or tuple of (W, H)
        The output size.
    scale : tuple of two floats, default (0.08, 1.0)
        Range of the crop's area as a fraction of the image's.
    ratio : tuple of two floats, default (3/4, 4/3)
        Range of the crop's aspect ratio (width / height).
    interpolation : int, default 1
        0 nearest or 1 bilinear.

    Inputs: ``data`` of shape (H, W, C). Outputs: shape (size[1], size[0], C).
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=1):
        super().__init__()
        self._args = (_pair(size), scale, ratio, interpolation)

    def forward(self, x):
        size, area, ratio, interp = self._args
        h, w = x.shape[0], x.shape[1]
        if isinstance(area, numeric_types):
            area = (area, 1.0)
        gen = _random.generator(np)
        for _ in range(10):
            target_area = gen.uniform(area[0], area[1]) * h * w
            new_ratio = np.exp(gen.uniform(np.log(ratio[0]), np.log(ratio[1])))
            new_w = int(round(np.sqrt(target_area * new_ratio)))
            new_h = int(round(np.sqrt(target_area / new_ratio)))
            if new_w <= w and new_h <= h:
                x0 = int(gen.integers(0, w - new_w, endpoint=True))
                y0 = int(gen.integers(0, h - new_h, endpoint=True))
                return _fixed_crop(x, x0, y0, new_w, new_h, size, interp)
        return _center_crop(x, size, interp)


def _random_flip(F, x, axis):
    """``x`` reversed along ``axis`` with probability 0.5 (one draw per call)."""
    _image_ndim(x, 'RandomFlip', batch=False)
    coin = F.random.uniform(0, 1, shape=(1,)) < 0.5
    flip = F.broadcast_like(F.reshape(coin, shape=(1, 1, 1)), x)
    return F.where(flip, F.reverse(x, axis=axis), x)


class RandomFlipLeftRight(HybridBlock):
    """Flips an image (H, W, C) left to right with probability 0.5.

    Inputs: ``data`` of shape (H, W, C). Outputs: the same shape and dtype.
    """

    def hybrid_forward(self, F, x):
        return _random_flip(F, x, 1)


class RandomFlipTopBottom(HybridBlock):
    """Flips an image (H, W, C) top to bottom with probability 0.5.

    Inputs: ``data`` of shape (H, W, C). Outputs: the same shape and dtype.
    """

    def hybrid_forward(self, F, x):
        return _random_flip(F, x, 0)


class RandomApply(Sequential):
    """Applies ``transforms`` with probability ``p`` (else returns the input).

    Parameters
    ----------
    transforms : Block
        The transformation(s), e.g. a Compose.
    p : float, default 0.5
        The probability of applying them.
    """

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < _random.generator(np).random():
            return x
        return self.transforms(x)
