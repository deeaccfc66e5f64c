"""Image transforms (``gluon.data.vision.transforms``): Blocks that take images as MXNet stores
them, ``(H, W, C)`` (or ``(N, H, W, C)``) NDArrays, usually uint8, and tensors ``(C, H, W)``.

As in MXNet, the HybridBlocks call the image operators (``F.image.to_tensor``,
``F.image.resize``, ``F.image.random_brightness``, ...; ``ops/image.py``), so ``Compose``
hybridizes a run of them into one compiled graph and an exported graph names MXNet's
operators; the crops and rotations are Blocks built on ``mx.image``. ``Resize`` follows
OpenCV's ``cv::resize`` (which MXNet uses), for uint8 images bit for bit.

Random transforms draw from hybridlib's generator, so ``mx.random.seed`` makes them repeat
(MXNet's Block transforms use Python's ``random`` and numpy's global generator, which seed
otherwise).
"""
import numpy as np

from ...base import numeric_types
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential
from ... import image
from ... import ndarray as nd
from ... import random as _random

__all__ = ['Compose', 'Cast', 'ToTensor', 'Normalize', 'RandomResizedCrop', 'CropResize',
           'CenterCrop', 'Resize', 'RandomFlipLeftRight', 'RandomFlipTopBottom',
           'RandomBrightness', 'RandomContrast', 'RandomSaturation', 'RandomHue',
           'RandomColorJitter', 'RandomLighting', 'Rotate', 'RandomRotation', 'RandomApply']


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


class ToTensor(HybridBlock):
    """Converts an image ``(H, W, C)`` (or a batch ``(N, H, W, C)``) with values in
    ``[0, 255]`` to a float32 tensor ``(C, H, W)`` (``(N, C, H, W)``) with values divided by
    255.

    Inputs: ``data`` of shape (H, W, C) or (N, H, W, C), usually uint8.
    Outputs: float32 of shape (C, H, W) or (N, C, H, W).
    """

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


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
        return F.image.normalize(x, self._mean, self._std)


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
        OpenCV's: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos.

    Inputs: ``data`` of shape (H, W, C) or (N, H, W, C).
    Outputs: shape (H', W', C) or (N, H', W', C), the dtype of ``data``.
    """

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, self._size, self._keep, self._interpolation)


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
        The interpolation of the resize (see ``Resize``); bilinear when None (MXNet fails).

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
        out = F.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            interp = 1 if self._interpolation is None else self._interpolation
            out = F.image.resize(out, self._size, False, interp)
        return out


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
        The interpolation of the resize (see ``Resize``).

    Inputs: ``data`` of shape (H, W, C). Outputs: shape (size[1], size[0], C).
    """

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._args = (_pair(size), interpolation)

    def forward(self, x):
        return image.center_crop(x, *self._args)[0]


class RandomResizedCrop(Block):
    """Crops a random rectangle of random area and aspect ratio, resized to ``size``.

    Up to 10 tries draw an area fraction uniformly from ``scale`` and an aspect ratio
    log-uniformly from ``ratio``; the first crop that fits is taken at a uniformly random
    position. If none fits, the center crop of ``size`` is taken (``mx.image.random_size_crop``,
    drawing from hybridlib's generator).

    Parameters
    ----------
    size : int or tuple of (W, H)
        The output size.
    scale : tuple of two floats, default (0.08, 1.0)
        Range of the crop's area as a fraction of the image's.
    ratio : tuple of two floats, default (3/4, 4/3)
        Range of the crop's aspect ratio (width / height).
    interpolation : int, default 1
        The interpolation of the resize (see ``Resize``).

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
                return image.fixed_crop(x, x0, y0, new_w, new_h, size, interp)
        return image.center_crop(x, size, interp)[0]


class RandomFlipLeftRight(HybridBlock):
    """Flips an image (H, W, C) left to right with probability 0.5.

    Inputs: ``data`` of shape (H, W, C). Outputs: the same shape and dtype.
    """

    def hybrid_forward(self, F, x):
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(HybridBlock):
    """Flips an image (H, W, C) top to bottom with probability 0.5.

    Inputs: ``data`` of shape (H, W, C). Outputs: the same shape and dtype.
    """

    def hybrid_forward(self, F, x):
        return F.image.random_flip_top_bottom(x)


class _RandomEnhance(HybridBlock):
    """A colour jitter by a factor drawn from [max(0, 1 - amount), 1 + amount]."""
    _op = None

    def __init__(self, amount):
        super().__init__()
        self._args = (max(0, 1 - amount), 1 + amount)

    def hybrid_forward(self, F, x):
        return getattr(F.image, self._op)(x, *self._args)


class RandomBrightness(_RandomEnhance):
    """Scales the brightness of an image (H, W, C) by a factor drawn uniformly from
    [max(0, 1 - brightness), 1 + brightness].

    Inputs: ``data`` of shape (H, W, C), C 1 or 3. Outputs: the same shape and dtype (uint8
    values clipped to [0, 255]).
    """
    _op = 'random_brightness'

    def __init__(self, brightness):
        super().__init__(brightness)


class RandomContrast(_RandomEnhance):
    """Scales the contrast of an image (H, W, C) (mixes it with its mean grey) by a factor
    drawn uniformly from [max(0, 1 - contrast), 1 + contrast].

    Inputs: ``data`` of shape (H, W, C), C 1 or 3. Outputs: the same shape and dtype.
    """
    _op = 'random_contrast'

    def __init__(self, contrast):
        super().__init__(contrast)


class RandomSaturation(_RandomEnhance):
    """Scales the saturation of an image (H, W, C) (mixes each pixel with its grey) by a
    factor drawn uniformly from [max(0, 1 - saturation), 1 + saturation].

    Inputs: ``data`` of shape (H, W, C), C 1 or 3. Outputs: the same shape and dtype.
    """
    _op = 'random_saturation'

    def __init__(self, saturation):
        super().__init__(saturation)


class RandomHue(_RandomEnhance):
    """Rotates the hue of an image (H, W, C) by ``alpha * 360`` degrees, alpha drawn
    uniformly from [max(0, 1 - hue), 1 + hue] (as MXNet: a turn of about +-hue * 360).

    Inputs: ``data`` of shape (H, W, C), C 3 (one channel is returned unchanged).
    Outputs: the same shape and dtype.
    """
    _op = 'random_hue'

    def __init__(self, hue):
        super().__init__(hue)


class RandomColorJitter(HybridBlock):
    """Jitters brightness, contrast, saturation (factors 1 + U(-x, x)) and hue (a turn of
    U(-hue, hue) * 360 degrees) of an image (H, W, C), in a random order; an amount of 0
    skips its step.

    Parameters
    ----------
    brightness, contrast, saturation, hue : float, default 0
        How much to jitter each.

    Inputs: ``data`` of shape (H, W, C), C 1 or 3. Outputs: the same shape and dtype.
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return F.image.random_color_jitter(x, *self._args)


class RandomLighting(HybridBlock):
    """AlexNet's PCA lighting noise: adds ``eigvec @ (alpha * eigval)`` (ImageNet's RGB
    eigen decomposition) with alpha drawn from N(0, alpha^2) per channel.

    Parameters
    ----------
    alpha : float
        The standard deviation of the noise.

    Inputs: ``data`` of shape (H, W, C), C 3. Outputs: the same shape and dtype.
    """

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, self._alpha)


def _check_float32(x, what):
    if x.dtype != np.float32:
        raise TypeError(f'{what}: This transformation only supports float32. Consider calling '
                        f'it after ToTensor (got {np.dtype(x.dtype).name})')


class Rotate(Block):
    """Rotates a float32 tensor (C, H, W) or batch (N, C, H, W) by ``rotation_degrees`` about
    its centre (``mx.image.imrotate``); the corners outside the image read zeros.

    Parameters
    ----------
    rotation_degrees : float
        The angle in degrees.
    zoom_in : bool, default False
        Zoom so that no padding shows.
    zoom_out : bool, default False
        Zoom so that the whole image shows.

    Inputs: float32 ``data`` (C, H, W) or (N, C, H, W). Outputs: the same shape.
    """

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        _check_float32(x, 'Rotate')
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """Rotates a float32 tensor (C, H, W) or each image of a batch (N, C, H, W) by an angle
    drawn uniformly from ``angle_limits`` (degrees), with probability ``rotate_with_proba``.

    Parameters
    ----------
    angle_limits : tuple of two floats
        (lower, upper) angles in degrees, lower < upper.
    zoom_in, zoom_out : bool, default False
        As in ``Rotate``.
    rotate_with_proba : float, default 1.0
        The probability of rotating; the input is returned as it is otherwise.

    Inputs: float32 ``data`` (C, H, W) or (N, C, H, W). Outputs: the same shape.
    """

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError('`angle_limits` must be an ordered tuple')
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise ValueError('Probability of rotating the image should be between 0 and 1')
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        gen = _random.generator(np)
        if gen.random() > self._rotate_with_proba:
            return x
        _check_float32(x, 'RandomRotation')
        (lower, upper), zoom_in, zoom_out = self._args
        if x.ndim == 3:
            angles = float(gen.uniform(lower, upper))
        else:
            angles = nd.array(gen.uniform(lower, upper, size=x.shape[0]), ctx=x.context)
        return image.imrotate(x, angles, zoom_in=zoom_in, zoom_out=zoom_out)


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
