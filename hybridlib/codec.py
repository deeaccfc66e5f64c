"""Image files to pixels and back, through Pillow, with OpenCV's results (as MXNet has them).

MXNet decodes and encodes images with OpenCV (``mx.image.imdecode``, ``mx.recordio.unpack_img``
and ``pack_img``, the vision datasets). Pillow, the optional extra ``hybridlib[image]``, does it
here: PNG pixels come out exactly as OpenCV's, including its (libpng's) grey conversion, and
JPEG through libjpeg as OpenCV asks for it (libjpeg's own luma for grey). Pillow is imported
when an image is first decoded, so everything else works without it. Arrays are numpy uint8.
"""
import io

import numpy as np

from .base import MXNetError, NotSupportedError

__all__ = ['decode', 'encode']


def _pillow(what):
    """PIL.Image, or an error that says how to install it."""
    try:
        from PIL import Image
    except ImportError:
        raise NotSupportedError(
            f'{what} decodes images with Pillow, which is not installed (MXNet uses OpenCV): '
            'pip install "hybridlib[image]"') from None
    return Image


# OpenCV's cvtColor BGR2GRAY (fixed point, 14 bits) and libpng's rgb_to_gray with OpenCV's
# coefficients 0.299 and 0.587 (15 bits, truncated; grey pixels kept as they are)
_CV_GRAY = (4899, 9617, 1868)
_PNG_GRAY = (29900 * 32768 // 100000, 58700 * 32768 // 100000)


def _cv_gray(rgb):
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    return ((r * _CV_GRAY[0] + g * _CV_GRAY[1] + b * _CV_GRAY[2] + (1 << 13)) >> 14)


def _png_gray(rgb):
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    rc, gc = _PNG_GRAY
    gray = (r * rc + g * gc + b * (32768 - rc - gc)) >> 15
    return np.where((r == g) & (g == b), r, gray)


# Pillow's modes of grey images with more than 8 bits per sample
_WIDE_GREY_MODES = ('I;16', 'I;16B', 'I;16L', 'I')


def _to_8bit(array):
    """16-bit samples keep their high byte (libpng's strip_16, which OpenCV asks for)."""
    return (array >> 8).astype(np.uint8) if array.dtype != np.uint8 else array


def decode(data, flag=1, to_rgb=True, what='imdecode'):
    """Bytes of an encoded image -> uint8 numpy (H, W, 3), or (H, W, 1) for ``flag=0``.

    ``flag=-1`` is OpenCV's "unchanged": grey images stay (H, W, 1), images with an alpha
    channel keep it (H, W, 4), others are (H, W, 3). ``to_rgb=False`` gives OpenCV's BGR(A)."""
    Image = _pillow(what)
    try:
        img = Image.open(io.BytesIO(data))
        if flag == 0 and img.format == 'JPEG' and img.mode in ('RGB', 'YCbCr'):
            img.draft('L', img.size)        # libjpeg's own grey output, as OpenCV asks for
        img.load()
    except Exception as err:                # Pillow raises many types for broken files
        raise MXNetError(f'{what}: Decoding failed. Invalid image file ({err})') from None
    mode = img.mode
    if flag < 0:
        gray = mode in ('L', '1') + _WIDE_GREY_MODES or \
            mode == 'P' and _palette_is_gray(img)
        flag = 0 if gray else 1
        if not gray and mode in ('RGBA', 'LA', 'PA', 'La', 'RGBa') or \
                mode == 'P' and 'transparency' in img.info:
            array = np.asarray(img.convert('RGBA'))
            img.close()
            return np.ascontiguousarray(array if to_rgb else array[..., [2, 1, 0, 3]])
    if mode in _WIDE_GREY_MODES:
        gray = _to_8bit(np.asarray(img).astype(np.uint16))
        array = gray[..., None] if flag == 0 else np.repeat(gray[..., None], 3, axis=2)
    elif flag == 0:
        if mode in ('L', '1', 'LA', 'La') or mode == 'P' and _palette_is_gray(img):
            array = np.asarray(img.convert('L'))[..., None]
        else:
            rgb = np.asarray(img.convert('RGB'))
            gray = _png_gray(rgb) if img.format == 'PNG' else _cv_gray(rgb)
            array = gray.astype(np.uint8)[..., None]
    else:
        array = np.asarray(img.convert('RGB'))
        if not to_rgb:
            array = array[..., ::-1]
    img.close()
    return np.ascontiguousarray(array, dtype=np.uint8)


def _palette_is_gray(img):
    palette = np.asarray(img.convert('RGB'))
    return bool(np.all(palette[..., 0] == palette[..., 1]) and
                np.all(palette[..., 1] == palette[..., 2]))


def encode(array, img_fmt='.jpg', quality=95, what='pack_img'):
    """Encode a uint8 (H, W), (H, W, 1) or (H, W, 3) array in BGR order, as OpenCV takes it, as
    JPEG (``quality`` 1-100) or PNG (``quality`` is the compression level 0-9)."""
    Image = _pillow(what)
    array = np.asarray(array)
    if array.dtype != np.uint8:
        raise MXNetError(f'{what}: images are encoded from uint8 arrays, not {array.dtype}')
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.ndim == 3 and array.shape[2] == 3:
        array = array[:, :, ::-1]           # BGR -> RGB
    elif array.ndim != 2:
        raise MXNetError(f'{what}: cannot encode an image of shape {array.shape}; expected '
                         '(H, W), (H, W, 1) or (H, W, 3)')
    fmt = img_fmt.upper()
    buf = io.BytesIO()
    image = Image.fromarray(np.ascontiguousarray(array))
    if fmt in ('.JPG', '.JPEG'):
        image.save(buf, format='JPEG', quality=int(quality))
    elif fmt == '.PNG':
        # OpenCV clamps the compression level, which pack_img's default quality (95) exceeds
        image.save(buf, format='PNG', compress_level=min(max(int(quality), 0), 9))
    else:
        raise MXNetError(f"{what}: unknown image format {img_fmt!r}; use '.jpg' or '.png'")
    return buf.getvalue()
