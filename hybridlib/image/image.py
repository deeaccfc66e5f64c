"""Reading images, resizing and cropping them, augmenters and ``ImageIter`` (``mx.image``).

Images are (H, W, C) NDArrays, uint8 when decoded, RGB by default. MXNet decodes and resizes
with OpenCV; here decoding goes through Pillow (the optional extra ``hybridlib[image]``) and
reproduces OpenCV's results: PNG pixels exactly, including OpenCV's (libpng's) grey conversion,
and JPEG through libjpeg as OpenCV does (its own luma for ``flag=0``). Resizing and borders are
the registered operators ``_cvimresize`` and ``_cvcopyMakeBorder`` (``ops/image.py``), which
follow ``cv::resize`` and ``cv::copyMakeBorder``.

The augmenters draw from Python's ``random`` and numpy's global generator, as MXNet's do, so
``random.seed`` and ``np.random.seed`` make a pipeline repeat MXNet's choices.
"""
import json
import logging
import os
import random
import warnings
from numbers import Number

import numpy as np

from ..base import MXNetAssertionError, MXNetError, numeric_types
from .. import ndarray as nd
from .. import io
from .. import recordio
from ..codec import decode

__all__ = ['imdecode', 'imread', 'imresize', 'scale_down', 'copyMakeBorder', 'resize_short',
           'fixed_crop', 'random_crop', 'center_crop', 'color_normalize', 'random_size_crop',
           'imrotate', 'random_rotate', 'Augmenter', 'SequentialAug', 'ResizeAug',
           'ForceResizeAug', 'RandomCropAug', 'RandomSizedCropAug', 'CenterCropAug',
           'RandomOrderAug', 'BrightnessJitterAug', 'ContrastJitterAug', 'SaturationJitterAug',
           'HueJitterAug', 'ColorJitterAug', 'LightingAug', 'ColorNormalizeAug', 'RandomGrayAug',
           'HorizontalFlipAug', 'CastAug', 'CreateAugmenter', 'ImageIter']


def _write_out(array, out):
    result = nd.array(array, dtype=np.uint8)
    if out is None:
        return result
    out[:] = result
    return out


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """Decode an image (JPEG, PNG, BMP, ...) to an NDArray.

    Parameters
    ----------
    buf : bytes, bytearray, numpy.ndarray or NDArray
        The encoded image.
    flag : int, default 1
        1 for three colour channels, 0 for greyscale (OpenCV's luma).
    to_rgb : bool, default True
        RGB channel order (MXNet's default); False for BGR (OpenCV's).
    out : NDArray, optional
        Where to write the result.

    Returns
    -------
    NDArray
        uint8 of shape (H, W, 3), or (H, W, 1) for ``flag=0``.
    """
    if isinstance(buf, nd.NDArray):
        data = buf.asnumpy().astype(np.uint8).tobytes()
    elif isinstance(buf, np.ndarray):
        data = np.ascontiguousarray(buf, dtype=np.uint8).tobytes()
    elif isinstance(buf, (bytes, bytearray)):
        data = bytes(buf)
    else:
        raise ValueError('buf must be of type bytes, bytearray or numpy.ndarray,'
                         'if you would like to input type str, please convert to bytes')
    return _write_out(decode(data, flag, to_rgb), out)


def imread(filename, flag=1, to_rgb=True, out=None):
    """Read and decode an image file to an NDArray (see ``imdecode``).

    Parameters
    ----------
    filename : str
        Path of the image file.
    flag : int, default 1
        1 for three colour channels, 0 for greyscale.
    to_rgb : bool, default True
        RGB channel order; False for BGR.
    out : NDArray, optional
        Where to write the result.
    """
    try:
        with open(filename, 'rb') as f:
            data = f.read()
    except OSError as err:
        raise MXNetError(f"Imread: '{filename}' couldn't open file: {err.strerror}") from None
    return _write_out(decode(data, flag, to_rgb, 'imread'), out)


# -------------------------------------------------------------------------------------------------
# Resizing and cropping
# -------------------------------------------------------------------------------------------------

def imresize(src, w, h, interp=1, out=None):
    """Resize an image (H, W, C) to ``w`` x ``h`` with OpenCV's rules.

    ``interp``: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos (OpenCV's numbering); 9
    and 10 choose one as ``_get_interp_method`` does (MXNet passes them to OpenCV, which
    fails). Returns an NDArray (h, w, C) of the dtype of ``src``.
    """
    if interp in (9, 10):
        interp = _get_interp_method(interp, (src.shape[0], src.shape[1], h, w))
    return nd._internal._cvimresize(src, w=w, h=h, interp=interp, out=out)


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(), out=None):
    """Pad an image (H, W, C) on its four sides as OpenCV's ``copyMakeBorder``.

    ``type``: 0 constant (``values`` per channel, or ``value`` for every channel), 1 replicate
    (``aaa|abc|ccc``), 2 reflect (``cba|abc|cba``), 3 wrap (``abc|abc|abc``), 4 reflect_101
    (``cb|abc|ba``). Returns (H + top + bot, W + left + right, C).
    """
    return nd._internal._cvcopyMakeBorder(src, top=top, bot=bot, left=left, right=right,
                                          type=type, value=value, values=values, out=out)


def scale_down(src_size, size):
    """Shrink a crop size (w, h) to fit an image size (w, h), keeping its aspect ratio.

    >>> scale_down((640, 480), (720, 120))
    (640, 106)
    """
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def _get_interp_method(interp, sizes=()):
    """The OpenCV interpolation (0 to 4) of an ``interp`` argument: 0 to 4 as they are; 9 by
    the sizes (old_h, old_w, new_h, new_w): bicubic (2) to enlarge both sides, area (3) to
    shrink both, bilinear (1) otherwise, bicubic without sizes; 10 at random."""
    if interp == 9:
        if not sizes:
            return 2
        if len(sizes) != 4:
            raise MXNetAssertionError(f'sizes must be (old_h, old_w, new_h, new_w), got {sizes}')
        old_h, old_w, new_h, new_w = sizes
        if new_h > old_h and new_w > old_w:
            return 2
        if new_h < old_h and new_w < old_w:
            return 3
        return 1
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError('Unknown interp method %d' % interp)
    return interp


def resize_short(src, size, interp=2):
    """Resize an image (H, W, C) so that its shorter side is ``size`` (the longer one scaled
    and rounded down). ``interp`` as in ``_get_interp_method``."""
    h, w, _ = src.shape
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """``src[y0:y0+h, x0:x0+w]``, resized to ``size`` (w, h) when given and different."""
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        sizes = (h, w, size[1], size[0])
        out = imresize(out, *size, interp=_get_interp_method(interp, sizes))
    return out


def random_crop(src, size, interp=2):
    """A crop of ``size`` (w, h) at a random position (scaled down to fit and resized back
    up when the image is smaller). Returns (crop, (x, y, width, height))."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """The centred crop of ``size`` (w, h) (scaled down to fit and resized back up when the
    image is smaller). Returns (crop, (x, y, width, height))."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """``(src - mean) / std``, in place when ``src`` allows it; either may be None."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """A random crop of random area and aspect ratio, resized to ``size`` (w, h).

    Up to 10 tries draw an area fraction from ``area`` ((min, max), or min with max 1) and an
    aspect ratio log-uniformly from ``ratio``; the first that fits is cut at a random
    position, else the centre crop is taken. Returns (crop, (x, y, width, height)).
    """
    h, w, _ = src.shape
    src_area = h * w
    if 'min_area' in kwargs:
        warnings.warn('`min_area` is deprecated. Please use `area` instead.', DeprecationWarning)
        area = kwargs.pop('min_area')
    if kwargs:
        raise MXNetAssertionError(f'unexpected keyword arguments for `random_size_crop`: '
                                  f'{sorted(kwargs)}')
    if isinstance(area, numeric_types):
        area = (area, 1.0)
    log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * src_area
        new_ratio = np.exp(random.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


# -------------------------------------------------------------------------------------------------
# Rotation (a rotated sampling grid and BilinearSampler)
# -------------------------------------------------------------------------------------------------

def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotate float32 images (C, H, W) or (N, C, H, W) about their centres.

    Parameters
    ----------
    src : NDArray
        float32 (C, H, W), or a batch (N, C, H, W).
    rotation_degrees : float or NDArray
        The angle (counter-clockwise on screen for positive values); for a batch, one angle
        or one per image.
    zoom_in : bool
        Zoom so that no padding shows.
    zoom_out : bool
        Zoom so that the whole image shows (with zero padding around).
    """
    if zoom_in and zoom_out:
        raise ValueError('`zoom_in` and `zoom_out` cannot be both True')
    if src.dtype != np.float32:
        raise TypeError('Only `float32` images are supported by this function')
    expanded = False
    if src.ndim == 3:
        expanded = True
        src = src.expand_dims(axis=0)
        if not isinstance(rotation_degrees, Number):
            raise TypeError('When a single image is passed the rotation angle is '
                            'required to be a scalar.')
    elif src.ndim != 4:
        raise ValueError('Only 3D and 4D are supported by this function')
    if isinstance(rotation_degrees, Number):
        rotation_degrees = nd.array([rotation_degrees] * len(src), ctx=src.context)
    if len(src) != len(rotation_degrees):
        raise ValueError('The number of images must be equal to the number of rotation angles')
    rad = (np.pi * rotation_degrees.as_in_context(src.context) / 180)
    rad = rad.expand_dims(axis=1).expand_dims(axis=2)
    _, _, h, w = src.shape
    # a grid centred on the image, rotated, then normalised to [-1, 1] (after the rotation,
    # so that the aspect ratio is kept)
    hscale, wscale = float(h - 1) / 2, float(w - 1) / 2
    rows = (nd.repeat(nd.arange(h, ctx=src.context).astype('float32').reshape(h, 1), w,
                      axis=1) - hscale).expand_dims(axis=0)
    cols = (nd.repeat(nd.arange(w, ctx=src.context).astype('float32').reshape(1, w), h,
                      axis=0) - wscale).expand_dims(axis=0)
    cos, sin = nd.cos(rad), nd.sin(rad)
    cols_rot = (cols * cos - rows * sin) / wscale
    rows_rot = (cols * sin + rows * cos) / hscale
    scale = 1
    if zoom_in or zoom_out:
        h_arr, w_arr = nd.array([h], ctx=src.context), nd.array([w], ctx=src.context)
        rho = nd.sqrt(h_arr * h_arr + w_arr * w_arr)
        angle = nd.arctan(h_arr / w_arr)
        corner1_x = nd.abs(rho * nd.cos(angle + nd.abs(rad)))
        corner1_y = nd.abs(rho * nd.sin(angle + nd.abs(rad)))
        corner2_x = nd.abs(rho * nd.cos(angle - nd.abs(rad)))
        corner2_y = nd.abs(rho * nd.sin(angle - nd.abs(rad)))
        max_x = nd.maximum(corner1_x, corner2_x)
        max_y = nd.maximum(corner1_y, corner2_y)
        if zoom_out:
            scale = nd.maximum(max_x / w_arr, max_y / h_arr)
        else:
            scale = nd.minimum(w_arr / max_x, h_arr / max_y)
        scale = scale.expand_dims(axis=3)
    grid = nd.concat(cols_rot.expand_dims(axis=1), rows_rot.expand_dims(axis=1), dim=1) * scale
    rotated = nd.BilinearSampler(src, grid)
    return rotated[0] if expanded else rotated


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """Rotate float32 images (C, H, W) or (N, C, H, W) by angles drawn uniformly from
    ``angle_limits`` (degrees; numpy's global generator, as MXNet). See ``imrotate``."""
    if src.ndim == 3:
        rotation_degrees = np.random.uniform(*angle_limits)
    else:
        rotation_degrees = nd.array(np.random.uniform(*angle_limits, size=src.shape[0]))
    return imrotate(src, rotation_degrees, zoom_in=zoom_in, zoom_out=zoom_out)


# -------------------------------------------------------------------------------------------------
# Augmenters
# -------------------------------------------------------------------------------------------------

class _AugmenterBase:
    """What image and detection augmenters share: the constructor arguments, kept for
    ``dumps()`` (arrays as nested lists, so that they are JSON)."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for key, value in self._kwargs.items():
            if isinstance(value, nd.NDArray):
                value = value.asnumpy()
            if isinstance(value, np.ndarray):
                self._kwargs[key] = value.tolist()

    def dumps(self):
        """The augmenter as a JSON string: ``[class name in lower case, arguments]``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])


class Augmenter(_AugmenterBase):
    """The base class of image augmenters: ``aug(src) -> image``; ``dumps()`` is the JSON of
    ``[class name in lower case, constructor arguments]``."""

    def __call__(self, src):
        raise NotImplementedError('Must override implementation.')


class _AugmenterList(Augmenter):
    """An augmenter made of the augmenters ``ts``."""

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        """``[name, [dumps() of each augmenter]]`` (a list, not a string, as MXNet)."""
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]


class SequentialAug(_AugmenterList):
    """Applies the augmenters ``ts`` one after the other."""

    def __call__(self, src):
        for aug in self.ts:
            src = aug(src)
        return src


class RandomOrderAug(_AugmenterList):
    """Applies the augmenters ``ts`` in a random order (``ts`` is shuffled in place)."""

    def __call__(self, src):
        random.shuffle(self.ts)
        for t in self.ts:
            src = t(src)
        return src


class _SizeAug(Augmenter):
    """An augmenter that brings images to ``size`` with the interpolation ``interp`` (see
    ``_get_interp_method``)."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp


class ResizeAug(_SizeAug):
    """Resizes the shorter side to ``size`` (``resize_short``)."""

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(_SizeAug):
    """Resizes to ``size`` (w, h), whatever the aspect ratio."""

    def __call__(self, src):
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, *self.size, interp=_get_interp_method(self.interp, sizes))


class RandomCropAug(_SizeAug):
    """A crop of ``size`` (w, h) at a random position (``random_crop``)."""

    def __call__(self, src):
        return random_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """A crop of random area (fraction ``area``) and aspect ratio (``ratio``), resized to
    ``size`` (``random_size_crop``)."""

    def __init__(self, size, area, ratio, interp=2, **kwargs):
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size = size
        if 'min_area' in kwargs:
            warnings.warn('`min_area` is deprecated. Please use `area` instead.',
                          DeprecationWarning)
            self.area = kwargs.pop('min_area')
        else:
            self.area = area
        self.ratio = ratio
        self.interp = interp
        if kwargs:
            raise MXNetAssertionError(f'unexpected keyword arguments for `RandomSizedCropAug`: '
                                      f'{sorted(kwargs)}')

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(_SizeAug):
    """The centred crop of ``size`` (w, h) (``center_crop``)."""

    def __call__(self, src):
        return center_crop(src, self.size, self.interp)[0]


class BrightnessJitterAug(Augmenter):
    """Multiplies by 1 + U(-brightness, brightness) (in place)."""

    def __init__(self, brightness):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.brightness, self.brightness)
        src *= alpha
        return src


_LUMA = [[[0.299, 0.587, 0.114]]]


class ContrastJitterAug(Augmenter):
    """Mixes with the mean grey: ``alpha * src + (1 - alpha) * mean(grey)``,
    alpha = 1 + U(-contrast, contrast) (in place)."""

    def __init__(self, contrast):
        super().__init__(contrast=contrast)
        self.contrast = contrast
        self.coef = nd.array(_LUMA)

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        gray = src * self.coef
        gray = (3.0 * (1.0 - alpha) / gray.size) * nd.sum(gray)
        src *= alpha
        src += gray
        return src


class SaturationJitterAug(Augmenter):
    """Mixes with each pixel's grey: ``alpha * src + (1 - alpha) * grey``,
    alpha = 1 + U(-saturation, saturation) (in place)."""

    def __init__(self, saturation):
        super().__init__(saturation=saturation)
        self.saturation = saturation
        self.coef = nd.array(_LUMA)

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        gray = nd.sum(src * self.coef, axis=2, keepdims=True)
        gray *= (1.0 - alpha)
        src *= alpha
        src += gray
        return src


class HueJitterAug(Augmenter):
    """Rotates the hue by U(-hue, hue) * 180 degrees, as a linear map in YIQ space."""

    def __init__(self, hue):
        super().__init__(hue=hue)
        self.hue = hue
        self.tyiq = np.array([[0.299, 0.587, 0.114],
                              [0.596, -0.274, -0.321],
                              [0.211, -0.523, 0.311]])
        self.ityiq = np.array([[1.0, 0.956, 0.621],
                               [1.0, -0.272, -0.647],
                               [1.0, -1.107, 1.705]])

    def __call__(self, src):
        alpha = random.uniform(-self.hue, self.hue)
        u, w = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        rotation = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        t = np.dot(np.dot(self.ityiq, rotation), self.tyiq).T
        return nd.dot(src, nd.array(t))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter (those that are positive) in a random
    order."""

    def __init__(self, brightness, contrast, saturation):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet's PCA noise: adds ``eigvec @ (alpha * eigval)`` with
    alpha ~ N(0, alphastd^2) per channel (numpy's global generator; in place)."""

    def __init__(self, alphastd, eigval, eigvec):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval = eigval
        self.eigvec = eigvec

    def __call__(self, src):
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        rgb = np.dot(self.eigvec * alpha, self.eigval)
        src += nd.array(rgb)
        return src


class ColorNormalizeAug(Augmenter):
    """``(src - mean) / std`` (``color_normalize``); either may be None."""

    def __init__(self, mean, std):
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, nd.NDArray) else nd.array(mean)
        self.std = std if std is None or isinstance(std, nd.NDArray) else nd.array(std)

    def __call__(self, src):
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """With probability ``p``, every channel becomes 0.21 R + 0.72 G + 0.07 B."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p
        self.mat = nd.array([[0.21, 0.21, 0.21],
                             [0.72, 0.72, 0.72],
                             [0.07, 0.07, 0.07]])

    def __call__(self, src):
        if random.random() < self.p:
            src = nd.dot(src, self.mat)
        return src


class HorizontalFlipAug(Augmenter):
    """With probability ``p``, mirrors the image left to right."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
        return src


class CastAug(Augmenter):
    """Casts to ``typ`` (float32)."""

    def __init__(self, typ='float32'):
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


_PCA_EIGVAL = np.array([55.46, 4.794, 1.148])
_PCA_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                        [-0.5808, -0.0045, -0.8140],
                        [-0.5836, -0.6948, 0.4203]])
_MEAN_RGB = [123.68, 116.28, 103.53]
_STD_RGB = [58.395, 57.12, 57.375]


def _check_mean_std(name, value, types=(np.ndarray, nd.NDArray),
                    kinds='a numpy array or NDArray'):
    """MXNetAssertionError unless ``value`` (``mean`` or ``std`` of CreateAugmenter or
    CreateDetAugmenter) is True, None, or an array of ``types`` with 1 or 3 values."""
    if value is None or value is True:
        return
    if not isinstance(value, types) or value.shape[0] not in (1, 3):
        raise MXNetAssertionError(f'{name} must be True, None, or {kinds} of 1 or 3 values, '
                                  f'got {value!r}')


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False, rand_mirror=False,
                    mean=None, std=None, brightness=0, contrast=0, saturation=0, hue=0,
                    pca_noise=0, rand_gray=0, inter_method=2):
    """The standard list of augmenters for images of ``data_shape`` (C, H, W).

    In order: resize the shorter side to ``resize`` (if > 0); a crop of (W, H): random size
    and aspect ratio (``rand_resize``, needs ``rand_crop``), random position (``rand_crop``),
    or centred; a horizontal flip with probability 0.5 (``rand_mirror``); cast to float32;
    brightness/contrast/saturation jitter; hue jitter; PCA lighting noise (``pca_noise``);
    greyscale with probability ``rand_gray``; normalisation by ``mean`` and ``std`` (True for
    ImageNet's RGB values). ``inter_method`` is the interpolation of every resize (see
    ``_get_interp_method``).
    """
    auglist = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        if not rand_crop:
            raise MXNetAssertionError('CreateAugmenter: rand_resize needs rand_crop=True')
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        auglist.append(LightingAug(pca_noise, _PCA_EIGVAL, _PCA_EIGVEC))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    _check_mean_std('mean', mean)
    _check_mean_std('std', std)
    if mean is True:
        mean = nd.array(_MEAN_RGB)
    if std is True:
        std = nd.array(_STD_RGB)
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist


# -------------------------------------------------------------------------------------------------
# ImageIter
# -------------------------------------------------------------------------------------------------

_LABEL_DTYPES = ('int32', 'float32', 'int64', 'float64')
_LAST_BATCH = ('pad', 'discard', 'roll_over')


class ImageIter(io.DataIter):
    """Batches of augmented images from a RecordIO file or from image files.

    Each batch is a ``DataBatch`` of data (batch_size, C, H, W) float32 (the augmented images,
    channels first) and labels (batch_size,) or (batch_size, label_width).

    Parameters
    ----------
    batch_size : int
        Images per batch.
    data_shape : tuple of int
        (3, H, W): the shape of each image after augmentation.
    label_width : int, default 1
        Labels per image.
    path_imgrec : str, optional
        A ``.rec`` file of ``recordio.pack(header, encoded image)`` records (im2rec's format).
    path_imglist : str, optional
        An image list (``.lst``): ``index<TAB>label(s)<TAB>path`` lines, paths relative to
        ``path_root``. With ``path_imgrec``, its labels replace the records' labels.
    path_root : str, optional
        The folder of the image files.
    path_imgidx : str, optional
        The ``.idx`` file of ``path_imgrec``: needed to shuffle records or split them in
        parts.
    shuffle : bool, default False
        Shuffle the images at each reset (Python's ``random``).
    part_index, num_parts : int
        Read only part ``part_index`` of ``num_parts`` equal parts (distributed training).
    aug_list : list of Augmenter, optional
        The augmenters; by default ``CreateAugmenter(data_shape, **kwargs)``.
    imglist : list, optional
        ``[label(s), path]`` items instead of a list file.
    data_name, label_name : str
        The names in ``provide_data`` and ``provide_label``.
    dtype : str, default 'float32'
        The dtype of the labels read: int32, float32, int64 or float64.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
        The last, incomplete batch: filled with images from the beginning (``pad`` says how
        many), dropped, or completed from the next epoch.
    kwargs
        Arguments of ``CreateAugmenter``.
    """

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle=False,
                 part_index=0, num_parts=1, aug_list=None, imglist=None, data_name='data',
                 label_name='softmax_label', dtype='float32', last_batch_handle='pad',
                 **kwargs):
        super().__init__()
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise MXNetAssertionError('ImageIter: give path_imgrec, path_imglist or imglist')
        if dtype not in _LABEL_DTYPES:
            raise MXNetAssertionError(dtype + ' label not supported')
        if last_batch_handle not in _LAST_BATCH:
            raise ValueError(f'last_batch_handle must be one of {_LAST_BATCH}, got '
                             f'{last_batch_handle!r}')
        name = type(self).__name__
        if path_imgrec:
            logging.info('%s: loading recordio %s...', name, path_imgrec)
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, 'r')
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, 'r')
                self.imgidx = None
        else:
            self.imgrec = None
        imgkeys = []
        if path_imglist:
            logging.info('%s: loading image list %s...', name, path_imglist)
            self.imglist = {}
            with open(path_imglist) as fin:
                for line in iter(fin.readline, ''):
                    fields = line.strip().split('\t')
                    key = int(fields[0])
                    label = nd.array([float(v) for v in fields[1:-1]], dtype=dtype)
                    self.imglist[key] = (label, fields[-1])
                    imgkeys.append(key)
        elif isinstance(imglist, list):
            logging.info('%s: loading image list...', name)
            self.imglist = {}
            for index, img in enumerate(imglist, 1):
                key = str(index)
                if len(img) > 2:
                    label = nd.array(img[:-1], dtype=dtype)
                elif isinstance(img[0], numeric_types):
                    label = nd.array([img[0]], dtype=dtype)
                else:
                    label = nd.array(img[0], dtype=dtype)
                self.imglist[key] = (label, img[-1])
                imgkeys.append(key)
        else:
            self.imglist = None
        self.path_root = path_root

        self.check_data_shape(data_shape)
        self.provide_data = [io.DataDesc(data_name, (batch_size,) + tuple(data_shape))]
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_label = [io.DataDesc(label_name, label_shape)]
        self.batch_size = batch_size
        self.data_shape = data_shape
        self.label_width = label_width
        self.shuffle = shuffle
        if self.imgrec is None:
            self.seq = imgkeys
        elif shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise MXNetAssertionError('ImageIter: shuffling or splitting a .rec file needs '
                                          'its index (path_imgidx)')
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            if part_index >= num_parts:
                raise MXNetAssertionError(f'part_index ({part_index}) must be less than '
                                          f'num_parts ({num_parts})')
            per_part = len(self.seq) // num_parts
            self.seq = self.seq[part_index * per_part:(part_index + 1) * per_part]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = None
        self._cache_label = None
        self._cache_idx = None
        self.reset()

    def reset(self):
        """Go back to the first image (reshuffled when ``shuffle``); with 'roll_over', the
        images left over from the last epoch stay to start the next batch."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != 'roll_over' or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """Go back to the first image and drop images rolled over from the last epoch."""
        self._cache_data = self._cache_label = self._cache_idx = None
        self.reset()

    def next_sample(self):
        """(label, encoded image) of the next image; StopIteration at the end."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is not None:
            if self.cur >= self.num_image:
                if self.last_batch_handle != 'discard':
                    self.cur = 0
                raise StopIteration
            idx = self.seq[self.cur]
            self.cur += 1
            if self.imgrec is not None:
                header, img = recordio.unpack(self.imgrec.read_idx(idx))
                if self.imglist is None:
                    return header.label, img
                return self.imglist[idx][0], img
            label, fname = self.imglist[idx]
            return label, self.read_image(fname)
        record = self.imgrec.read()
        if record is None:
            if self.last_batch_handle != 'discard':
                self.imgrec.reset()
            raise StopIteration
        header, img = recordio.unpack(record)
        return header.label, img

    def _read_valid_sample(self):
        """(decoded image, label) of the next sample that ``_check_sample`` accepts; the
        others are skipped. StopIteration at the end."""
        while True:
            label, s = self.next_sample()
            data = self.imdecode(s)
            try:
                return self._check_sample(data, label)
            except RuntimeError as err:
                logging.debug('Invalid image, skipping:  %s', str(err))

    def _check_sample(self, data, label):
        """(image, label) as the augmenters take them; RuntimeError to skip the sample."""
        self.check_valid_image(data)
        return data, label

    def _augmented_sample(self):
        """(augmented image, label) of the next valid sample."""
        data, label = self._read_valid_sample()
        return self.augmentation_transform(data), label

    def _new_label_batch(self):
        """The label array of a new batch (filled in by ``_store_label``)."""
        return nd.empty(self.provide_label[0][1])

    def _store_label(self, batch_label, i, label):
        """Write the label of the ``i``-th image of the batch."""
        batch_label[i] = label

    def _batchify(self, batch_data, batch_label, start=0):
        """Fill the batch from position ``start``; the number of images in it."""
        i = start
        try:
            while i < self.batch_size:
                data, label = self._augmented_sample()
                batch_data[i] = self.postprocess_data(data)
                self._store_label(batch_label, i, label)
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self):
        """The next DataBatch; ``pad`` counts the images repeated to fill the last one."""
        c, h, w = self.data_shape
        if self._cache_data is not None:
            # the images rolled over from the last epoch start this batch
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data = nd.zeros((self.batch_size, c, h, w))
            batch_label = self._new_label_batch()
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == 'discard':
                raise StopIteration
            if self.last_batch_handle == 'roll_over' and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = \
                    batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == 'pad':
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return io.DataBatch([batch_data], [batch_label], pad=pad)

    def check_data_shape(self, data_shape):
        """ValueError unless ``data_shape`` is (3, H, W)."""
        if not len(data_shape) == 3:
            raise ValueError('data_shape should have length 3, with dimensions CxHxW')
        if not data_shape[0] == 3:
            raise ValueError('This iterator expects inputs to have 3 channels.')

    def check_valid_image(self, data):
        """RuntimeError for a decoded image without pixels (skipped by the iterator)."""
        if len(data[0].shape) == 0:
            raise RuntimeError('Data shape is wrong')

    def imdecode(self, s):
        """Decode an image (``imdecode``); a RuntimeError names the broken file or record."""
        try:
            return imdecode(s)
        except Exception as err:
            raise RuntimeError(f'{self._locate()}, {err}') from None

    def _locate(self):
        """Which image was just read (for decoding errors)."""
        if self.seq is not None:
            idx = self.seq[(self.cur % self.num_image) - 1]
        else:
            idx = self.cur - 1
        if self.imglist is not None:
            return f'Broken image filename: {self.imglist[idx][1]}'
        return f'Broken image index: {idx}'

    def read_image(self, fname):
        """The bytes of the image file ``fname`` (relative to ``path_root``)."""
        with open(os.path.join(self.path_root, fname), 'rb') as fin:
            return fin.read()

    def augmentation_transform(self, data):
        """Apply every augmenter of ``auglist`` in turn."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """The image as it goes into the batch: (H, W, C) -> (C, H, W)."""
        return nd.transpose(datum, axes=(2, 0, 1))
