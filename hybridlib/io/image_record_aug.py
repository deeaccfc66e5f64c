"""The image augmenters of MXNet's C++ record iterators (``aug_default`` and
``det_aug_default``) and the C++ random numbers they draw.

MXNet's iterators draw from ``std::mt19937`` through libstdc++'s distributions; ``CppRandom``
gives the same numbers, so a pipeline that MXNet runs on one preprocessing thread (or with
``seed_aug``) makes the same random choices here: crops, mirrors, scales, angles. Images are
OpenCV's (H, W, C) uint8 arrays in BGR order, as the C++ code holds them. Resizing and borders
are ``hybridlib.ops.image``'s OpenCV reproductions (``cv_resize``, ``copy_make_border``);
``warp_affine`` follows cv::warpAffine's fixed-point coordinates and weights. The colour
augmenters follow OpenCV's 8-bit conversions in float32.
"""
import functools
import math

import numpy as np

from ..base import MXNetError
# OpenCV's 1-D cubic and Lanczos kernels, which cv_resize computes from too
from ..ops.image import _cubic_weights, _lanczos_weights, copy_make_border, cv_resize

__all__ = ['CppRandom', 'DefaultAugmenter', 'DetAugmenter', 'warp_affine']

_F32 = np.float32
_U32 = 0xFFFFFFFF


class CppRandom:
    """``std::mt19937`` with the libstdc++ distributions of MXNet 1.9.1's build (its
    ``std::shuffle`` draws once per element).

    Parameters
    ----------
    seed : int
        The seed (taken modulo 2**32, as ``mt19937::seed`` does).
    """

    def __init__(self, seed):
        self.seed(seed)

    def seed(self, value):
        """Restart the generator from ``value`` (std::mt19937::seed)."""
        # RandomState seeds an int as init_genrand does, which is what std::mt19937 does
        state = np.random.RandomState(int(value) & _U32).get_state()
        self._bits = np.random.MT19937()
        self._bits.state = {'bit_generator': 'MT19937',
                            'state': {'key': state[1], 'pos': state[2]}}

    def raw(self):
        """The next 32-bit output."""
        return int(self._bits.random_raw())

    def uniform_int(self, low, high):
        """std::uniform_int_distribution(low, high): downscaling with rejection."""
        span = high - low
        if span < 0 or span > _U32:
            raise MXNetError(f'uniform_int_distribution({low}, {high}): empty or too wide range')
        if span == _U32:
            return self.raw() + low
        scaling = _U32 // (span + 1)
        past = (span + 1) * scaling
        value = self.raw()
        while value >= past:
            value = self.raw()
        return value // scaling + low

    def canonical(self):
        """std::generate_canonical<float, 24>: one draw, in float32."""
        value = _F32(self.raw()) / _F32(4294967296.0)
        return value if value < 1 else np.nextafter(_F32(1), _F32(0))

    def uniform(self, low=0.0, high=1.0):
        """std::uniform_real_distribution<float>(low, high)."""
        low, high = _F32(low), _F32(high)
        return _F32(self.canonical() * (high - low) + low)

    def bernoulli(self, p=0.5):
        """std::bernoulli_distribution(p): generate_canonical<double, 53>, two draws."""
        total = float(self.raw()) + float(self.raw()) * 4294967296.0
        value = total / 18446744073709551616.0
        return min(value, np.nextafter(1.0, 0.0)) < p

    def normals(self, count, mean, stddev):
        """``count`` draws of one std::normal_distribution<float>(mean, stddev): Marsaglia's
        polar method, which makes two values at a time and keeps the second for the next
        call."""
        out = []
        while len(out) < count:
            while True:
                x = _F32(2) * self.canonical() - _F32(1)
                y = _F32(2) * self.canonical() - _F32(1)
                r2 = x * x + y * y
                if r2 <= 1 and r2 != 0:
                    break
            mult = np.sqrt(_F32(-2) * np.log(r2) / r2, dtype=_F32)
            out += [y * mult, x * mult]
        return [_F32(v * _F32(stddev) + _F32(mean)) for v in out[:count]]

    def shuffle(self, items):
        """std::shuffle of the list ``items`` in place (one draw per element)."""
        for i in range(1, len(items)):
            j = self.uniform_int(0, i)
            items[i], items[j] = items[j], items[i]


# -------------------------------------------------------------------------------------------------
# OpenCV pieces
# -------------------------------------------------------------------------------------------------

def check_inter_method(method, low=0):
    """MXNet's check of ``inter_method`` before it resizes (``low`` 0) or warps (``low`` 1:
    MXNet refuses nearest there)."""
    if not (low <= method <= 4 or 9 <= method <= 10):
        raise MXNetError(f'Check failed: (param_.inter_method >= {low} && param_.inter_method '
                         f'<= 4) || (param_.inter_method >= 9 && param_.inter_method <= 10): '
                         f'invalid inter_method: valid value 0,1,2,3,9,10 (got {method})')


def inter_method(method, old_w, old_h, new_w, new_h, rng):
    """GetInterMethod: 9 picks by the sizes (cubic to enlarge, area to shrink, else bilinear),
    10 draws one of 0-4."""
    if method == 9:
        if new_w > old_w and new_h > old_h:
            return 2
        if new_w < old_w and new_h < old_h:
            return 3
        return 1
    if method == 10:
        return rng.uniform_int(0, 4)
    return method


def resize(img, width, height, interp):
    """cv::resize of an (H, W, C) uint8 image to ``width`` x ``height``."""
    if width < 1 or height < 1:
        raise MXNetError(f'OpenCV resize: the size ({width}, {height}) of an image of shape '
                         f'{img.shape[:2]} must be positive (check resize and data_shape)')
    return cv_resize(np, img, int(width), int(height), interp)


def resize_shorter(img, size, method, rng):
    """``img`` with its shorter edge scaled to ``size`` and the other in proportion (rounded
    down), as both augmenters' ``resize`` parameter does."""
    rows, cols = img.shape[:2]
    if rows > cols:
        new_h, new_w = size * rows // cols, size
    else:
        new_h, new_w = size, size * cols // rows
    return resize(img, new_w, new_h, inter_method(method, cols, rows, new_w, new_h, rng))


def border(img, top, bot, left, right, fill):
    """cv::copyMakeBorder with BORDER_CONSTANT and Scalar(fill, fill, fill): a fourth (alpha)
    channel is padded with 0, as OpenCV's 3-value Scalar has."""
    return copy_make_border(np, img, top, bot, left, right, 0, 0.0, (fill, fill, fill, 0))


def _fill_pixel(channels, fill):
    return np.array(([fill] * 3 + [0])[:channels] if channels > 1 else [fill], np.float64)


@functools.lru_cache(maxsize=None)
def _remap_weights(interp):
    """OpenCV's fixed-point remap weights (initInterTab2D): (32, 32, K, K) int64 for the
    fractions (fy, fx) in 1/32, products of the 1-D kernels rounded to 15 bits, the rounding
    error put on the smallest (or largest) of the taps right of the centre."""
    frac = np.arange(32, dtype=_F32) * _F32(1 / 32)
    if interp == 1:
        tab = np.stack([_F32(1) - frac, frac], axis=1)
    else:
        tab = _cubic_weights(frac) if interp == 2 else _lanczos_weights(frac)
    k = tab.shape[1]
    out = np.rint(tab[:, None, :, None] * tab[None, :, None, :] * _F32(32768)).astype(np.int64)
    half = k // 2
    for fy in range(32):
        for fx in range(32):
            w = out[fy, fx]
            diff = int(w.sum()) - 32768
            if diff:
                low = high = (half, half)
                for k1 in range(half, half + 2):
                    for k2 in range(half, half + 2):
                        if w[k1, k2] < w[low]:
                            low = (k1, k2)
                        elif w[k1, k2] > w[high]:
                            high = (k1, k2)
                w[high if diff < 0 else low] -= diff
    return out


def warp_affine(img, matrix, width, height, interp, fill):
    """cv::warpAffine of an (H, W, C) uint8 image with the forward 2x3 float32 ``matrix`` to
    ``width`` x ``height``, border constant ``fill`` (OpenCV's 3-value Scalar).

    The inverse map, the sample coordinates (1/1024 steps, rounded to 1/32) and the 15-bit
    weights of the bilinear, bicubic and Lanczos samples are OpenCV's.
    """
    m = np.asarray(matrix, np.float64).ravel()
    det = m[0] * m[4] - m[1] * m[3]
    det = 1.0 / det if det != 0 else 0.0
    a11, a22 = m[4] * det, m[0] * det
    m01, m10 = -m[1] * det, -m[3] * det
    m = [a11, m01, -a11 * m[2] - m01 * m[5], m10, a22, -m10 * m[2] - a22 * m[5]]
    interp = 1 if interp == 3 else interp
    channels = img.shape[2]
    ys, xs = np.arange(height, dtype=np.float64), np.arange(width, dtype=np.float64)
    delta = 512 if interp == 0 else 16
    x0 = np.rint((m[1] * ys + m[2]) * 1024).astype(np.int64)[:, None] + delta
    y0 = np.rint((m[4] * ys + m[5]) * 1024).astype(np.int64)[:, None] + delta
    gx = x0 + np.rint(m[0] * xs * 1024).astype(np.int64)[None, :]
    gy = y0 + np.rint(m[3] * xs * 1024).astype(np.int64)[None, :]
    fill_px = _fill_pixel(channels, fill)
    if interp == 0:
        return _gather(img, gy >> 10, gx >> 10, fill_px).astype(np.uint8)
    gx, gy = gx >> 5, gy >> 5
    sx, sy, fx, fy = gx >> 5, gy >> 5, gx & 31, gy & 31
    weights = _remap_weights(interp)[fy, fx]            # (height, width, K, K)
    k = weights.shape[-1]
    start = -(k // 2 - 1)
    total = np.zeros((height, width, channels), np.int64)
    for i in range(k):
        for j in range(k):
            px = _gather(img, sy + start + i, sx + start + j, fill_px).astype(np.int64)
            total += px * weights[..., i, j, None]
    return np.clip((total + (1 << 14)) >> 15, 0, 255).astype(np.uint8)


def _gather(img, rows, cols, fill_px):
    """``img[rows, cols]`` with ``fill_px`` where the index is outside the image."""
    h, w = img.shape[:2]
    inside = (rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)
    out = img[np.clip(rows, 0, h - 1), np.clip(cols, 0, w - 1)].astype(np.float64)
    out[~inside] = fill_px
    return out


def _gray(bgr):
    """cvtColor(COLOR_RGB2GRAY) of BGR data, as MXNet calls it (the red weight on blue)."""
    c = bgr.astype(np.int64)
    return (c[..., 0] * 4899 + c[..., 1] * 9617 + c[..., 2] * 1868 + (1 << 13)) >> 14


def _saturate(values):
    return np.clip(np.rint(values), 0, 255).astype(np.uint8)


def _bgr_to_hls(bgr):
    """cvtColor BGR2HLS for uint8: float32 H in [0, 180), L and S in [0, 255], rounded."""
    f = bgr.astype(_F32) * _F32(1 / 255.0)
    b, g, r = f[..., 0], f[..., 1], f[..., 2]
    vmax, vmin = np.maximum(np.maximum(r, g), b), np.minimum(np.minimum(r, g), b)
    diff = vmax - vmin
    light = (vmax + vmin) * _F32(0.5)
    with np.errstate(divide='ignore', invalid='ignore'):
        sat = np.where(light < 0.5, diff / (vmax + vmin), diff / (_F32(2) - vmax - vmin))
        scale = _F32(60) / diff
        hue = np.where(vmax == r, (g - b) * scale,
                       np.where(vmax == g, (b - r) * scale + _F32(120),
                                (r - g) * scale + _F32(240)))
    hue = np.where(hue < 0, hue + _F32(360), hue)
    flat = diff <= np.finfo(_F32).eps
    hue, sat = np.where(flat, 0, hue), np.where(flat, 0, sat)
    return np.stack([_saturate(hue * _F32(0.5)), _saturate(light * _F32(255)),
                     _saturate(sat * _F32(255))], axis=-1).astype(np.int64)


_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def _hls_to_bgr(hls):
    """cvtColor HLS2BGR for uint8."""
    h = hls[..., 0].astype(_F32) * _F32(6 / 180.0)
    light = hls[..., 1].astype(_F32) * _F32(1 / 255.0)
    sat = hls[..., 2].astype(_F32) * _F32(1 / 255.0)
    p2 = np.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    p1 = 2 * light - p2
    h = np.mod(h, _F32(6))
    sector = np.floor(h).astype(np.int64)
    h = h - sector
    tab = np.stack([p2, p1, p1 + (p2 - p1) * (1 - h), p1 + (p2 - p1) * h], axis=-1)
    picks = _SECTORS[sector]
    out = np.take_along_axis(tab, picks, axis=-1)
    out = np.where((sat == 0)[..., None], light[..., None], out)
    return _saturate(out * _F32(255))


def hls_shift(img, shifts):
    """Add (h, l, s) to an image in OpenCV's 8-bit HLS space, clipped to (180, 255, 255)."""
    if img.shape[2] != 3:
        raise MXNetError(f'HLS augmentation needs a 3-channel image, got {img.shape[2]} '
                         'channels (set data_shape[0] to 3)')
    hls = _bgr_to_hls(img) + np.asarray(shifts, np.int64)
    return _hls_to_bgr(np.clip(hls, 0, [180, 255, 255]))


def _need_color(img, what):
    if img.shape[2] != 3:
        raise MXNetError(f'{what} needs a 3-channel image, got {img.shape[2]} channels')


# eigenvalue * eigenvector of ImageNet's RGB covariance, MXNet's PCA noise
_EIGVEC = (np.array([55.46, 4.794, 1.148], _F32) *
           np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                     [-0.5836, -0.6948, 0.4203]], _F32))


class DefaultAugmenter:
    """MXNet's ``aug_default``: resize, affine (rotate, shear, scale, aspect), pad, crop
    (center, random, random-size, random-resized), colour jitter, HLS shifts and PCA noise.

    Parameters
    ----------
    params : dict
        The parsed parameters of the iterator (data_shape, resize, rand_crop, ...).
    rotate_list : list of int
        Angles to draw from (MXNet's hidden ``rotate_list`` argument).
    """

    def __init__(self, params, rotate_list=()):
        self.p = params
        self.rotate_list = list(rotate_list)

    def _aspect_range(self):
        p = self.p
        if p['min_aspect_ratio'] is not None:
            return _F32(p['min_aspect_ratio']), _F32(p['max_aspect_ratio'])
        return _F32(1) - _F32(p['max_aspect_ratio']), _F32(1) + _F32(p['max_aspect_ratio'])

    def process(self, img, rng):
        """Augment ``img`` (BGR uint8, (H, W, C)) drawing from ``rng`` (a CppRandom)."""
        p = self.p
        height, width = p['data_shape'][1], p['data_shape'][2]
        ar_min, ar_max = self._aspect_range()
        if p['resize'] != -1:
            check_inter_method(p['inter_method'])
            img = resize_shorter(img, p['resize'], p['inter_method'], rng)
        rrc = p['random_resized_crop']
        if (p['max_rotate_angle'] > 0 or p['max_shear_ratio'] > 0 or p['rotate'] > 0
                or self.rotate_list or p['max_random_scale'] != 1 or p['min_random_scale'] != 1
                or (not rrc and (ar_min != 1 or ar_max != 1))
                or p['max_img_size'] != _F32(1e10) or p['min_img_size'] != 0):
            img = self._affine(img, rng, ar_min, ar_max)
        if p['pad'] > 0:
            img = border(img, p['pad'], p['pad'], p['pad'], p['pad'], p['fill_value'])
        cropped = False
        if rrc:
            img, cropped = self._random_resized_crop(img, rng, ar_min, ar_max)
        elif p['max_crop_size'] != -1 or p['min_crop_size'] != -1:
            img, cropped = self._random_size_crop(img, rng), True
        if not cropped:
            img = self._crop(img, rng, width, height)
        if p['brightness'] > 0 or p['contrast'] > 0 or p['saturation'] > 0:
            img = self._color_jitter(img, rng)
        if p['random_h'] != 0 or p['random_s'] != 0 or p['random_l'] != 0:
            img = self._hls(img, rng)
        if p['pca_noise'] > 0:
            _need_color(img, 'pca_noise')
            alpha = np.array(rng.normals(3, 0, p['pca_noise']), _F32)
            noise = (_EIGVEC * alpha).sum(axis=1, dtype=_F32)[::-1]      # (b, g, r)
            img = np.clip((img.astype(_F32) + noise).astype(np.int64), 0, 255).astype(np.uint8)
        return img

    def _affine(self, img, rng, ar_min, ar_max):
        p = self.p
        rows, cols = img.shape[:2]
        shear = _F32(p['max_shear_ratio'])
        s = rng.canonical() * shear * _F32(2) - shear
        angle = rng.uniform_int(-p['max_rotate_angle'], p['max_rotate_angle'])
        if p['rotate'] > 0:
            angle = p['rotate']
        if self.rotate_list:
            angle = self.rotate_list[rng.uniform_int(0, len(self.rotate_list) - 1)]
        a = _F32(math.cos(angle / 180.0 * math.pi))
        b = _F32(math.sin(angle / 180.0 * math.pi))
        scale, ratio = _F32(1), _F32(1)
        if not p['random_resized_crop']:
            low, high = _F32(p['min_random_scale']), _F32(p['max_random_scale'])
            scale = rng.canonical() * (high - low) + low
            ratio = rng.canonical() * (ar_max - ar_min) + ar_min
        hs = _F32(2) * scale / (_F32(1) + ratio)
        ws = ratio * hs
        lo, hi = _F32(p['min_img_size']), _F32(p['max_img_size'])
        new_w = max(lo, min(hi, scale * _F32(cols)))
        new_h = max(lo, min(hi, scale * _F32(rows)))
        m = np.zeros((2, 3), _F32)
        m[0, 0], m[1, 0] = hs * a - s * b * ws, -b * ws
        m[0, 1], m[1, 1] = hs * b + s * a * ws, a * ws
        m[0, 2] = (new_w - (m[0, 0] * _F32(cols) + m[0, 1] * _F32(rows))) / _F32(2)
        m[1, 2] = (new_h - (m[1, 0] * _F32(cols) + m[1, 1] * _F32(rows))) / _F32(2)
        check_inter_method(p['inter_method'], low=1)
        interp = inter_method(p['inter_method'], cols, rows, int(new_w), int(new_h), rng)
        return warp_affine(img, m, int(new_w), int(new_h), interp, p['fill_value'])

    def _random_resized_crop(self, img, rng, ar_min, ar_max):
        p = self.p
        if (p['min_random_scale'] != 1 or p['max_random_scale'] != 1 or p['rand_crop']
                or p['min_crop_size'] != -1 or p['max_crop_size'] != -1):
            raise MXNetError('Setting random_resized_crop to true conflicts with '
                             'min_random_scale, max_random_scale, min_crop_size, '
                             'max_crop_size, and rand_crop.')
        area_lo, area_hi = _F32(p['min_random_area']), _F32(p['max_random_area'])
        if area_lo == 1 and area_hi == 1 and ar_min == 1 and ar_max == 1:
            return img, False
        if not (ar_min > 0 and area_lo <= area_hi and ar_min <= ar_max):
            raise MXNetError(f'random_resized_crop needs 0 < min aspect ratio ({ar_min}) <= max '
                             f'({ar_max}) and min_random_area ({area_lo}) <= max_random_area '
                             f'({area_hi})')
        rows, cols = img.shape[:2]
        area = _F32(rows * cols)
        for _ in range(10):
            target = area * rng.uniform(area_lo, area_hi)
            ratio = rng.uniform(ar_min, ar_max)
            # std::round: halves away from zero
            y_area = int(np.floor(np.sqrt(target / ratio, dtype=_F32) + 0.5))
            x_area = int(np.floor(np.sqrt(target * ratio, dtype=_F32) + 0.5))
            if rng.canonical() > 0.5:
                y_area, x_area = x_area, y_area
            if y_area <= rows and x_area <= cols:
                y = rng.uniform_int(0, rows - y_area)
                x = rng.uniform_int(0, cols - x_area)
                shape = self.p['data_shape']
                interp = inter_method(p['inter_method'], x_area, y_area, shape[2], shape[1],
                                      rng)
                return resize(img[y:y + y_area, x:x + x_area], shape[2], shape[1], interp), True
        return img, False

    def _random_size_crop(self, img, rng):
        p = self.p
        rows, cols = img.shape[:2]
        low, high = p['min_crop_size'], p['max_crop_size']
        if not (cols >= high and rows >= high and high >= low):
            raise MXNetError(f'input image size ({rows}, {cols}) smaller than max_crop_size '
                             f'({high}), or max_crop_size < min_crop_size ({low})')
        size = rng.uniform_int(low, high)
        y, x = rows - size, cols - size
        if p['rand_crop']:
            y, x = rng.uniform_int(0, y), rng.uniform_int(0, x)
        else:
            y, x = y // 2, x // 2
        shape = p['data_shape']
        interp = inter_method(p['inter_method'], size, size, shape[2], shape[1], rng)
        return resize(img[y:y + size, x:x + size], shape[2], shape[1], interp)

    def _crop(self, img, rng, width, height):
        """Center (or random) crop to data_shape, enlarging an image that is too small."""
        rows, cols = img.shape[:2]
        interp = inter_method(self.p['inter_method'], cols, rows, width, height, rng)
        if rows < height:
            new_cols = int(_F32(height) / _F32(rows) * _F32(cols))
            img = resize(img, new_cols, height, interp)
        rows, cols = img.shape[:2]
        if cols < width:
            new_rows = int(_F32(width) / _F32(cols) * _F32(rows))
            img = resize(img, width, new_rows, interp)
        rows, cols = img.shape[:2]
        if rows < height or cols < width:
            raise MXNetError(f'input image size ({rows}, {cols}) smaller than input shape '
                             f'({height}, {width})')
        y, x = rows - height, cols - width
        if self.p['rand_crop']:
            y, x = rng.uniform_int(0, y), rng.uniform_int(0, x)
        else:
            y, x = y // 2, x // 2
        return img[y:y + height, x:x + width]

    def _color_jitter(self, img, rng):
        p = self.p
        _need_color(img, 'brightness, contrast and saturation')
        alphas = [_F32(1) + rng.uniform(-p[k], p[k])
                  for k in ('brightness', 'contrast', 'saturation')]
        order = [0, 1, 2]
        rng.shuffle(order)          # MXNet 1.9.1 shuffles the three with the image's generator
        for i in order:
            f = img.astype(_F32)
            if i == 0:
                img = _saturate(f * alphas[0])
            elif i == 1:
                mean = _F32(_gray(img).mean())
                img = _saturate(f * alphas[1] + (_F32(1) - alphas[1]) * mean)
            else:
                gray = _gray(img).astype(_F32)[..., None]
                img = _saturate(f * alphas[2] + gray * (_F32(1) - alphas[2]))
        return img

    def _hls(self, img, rng):
        p = self.p
        draws = []
        for _ in range(3):
            r = rng.canonical()
            draws.append((r + _F32(4) * rng.canonical()) / _F32(5))
        h, s, l = (int(d * _F32(p[k]) * _F32(2) - _F32(p[k]))
                   for d, k in zip(draws, ('random_h', 'random_s', 'random_l')))
        return hls_shift(img, (h, l, s))


class DetAugmenter:
    """MXNet's ``det_aug_default``: resize, colour, mirror, pad and crop samplers that keep
    the boxes right, then the resize to data_shape (``resize_mode``).

    ``process`` takes and returns the flat label: ``[header_width, object_width, (extra
    header), (id, xmin, ymin, xmax, ymax, extra...) per object]``, coordinates in [0, 1];
    objects with xmax <= xmin or ymax <= ymin are dropped, as MXNet does.
    """

    def __init__(self, params):
        self.p = params
        n = params['num_crop_sampler']
        self.samplers = {}
        for key in ('min_crop_scales', 'max_crop_scales', 'min_crop_aspect_ratios',
                    'max_crop_aspect_ratios', 'min_crop_overlaps', 'max_crop_overlaps',
                    'min_crop_sample_coverages', 'max_crop_sample_coverages',
                    'min_crop_object_coverages', 'max_crop_object_coverages', 'max_crop_trials'):
            values = list(params[key])
            if n == 1 and len(values) != 1 or n > 1 and len(values) not in (1, n):
                raise MXNetError(f'{key} has {len(values)} values for {n} crop samplers '
                                 '(give one, or one per sampler)')
            self.samplers[key] = values * n if len(values) == 1 and n > 1 else values
        for i in range(max(n, 0)):
            s = {k: v[i] for k, v in self.samplers.items()}
            if not (s['min_crop_scales'] >= 0 and s['max_crop_scales'] <= 1
                    and s['max_crop_scales'] > s['min_crop_scales']
                    and s['min_crop_aspect_ratios'] >= 0
                    and s['max_crop_aspect_ratios'] >= s['min_crop_aspect_ratios']
                    and s['max_crop_overlaps'] >= s['min_crop_overlaps']
                    and s['max_crop_sample_coverages'] >= s['min_crop_sample_coverages']
                    and s['max_crop_object_coverages'] >= s['min_crop_object_coverages']):
                raise MXNetError(f'crop sampler {i}: the min/max crop scales, aspect ratios, '
                                 f'overlaps and coverages are out of order: {s}')
        if params['emit_overlap_thresh'] < 0:
            raise MXNetError('emit_overlap_thresh must be >= 0')
        check_inter_method(params['inter_method'])

    @staticmethod
    def _parse(raw):
        if len(raw) < 7:
            raise MXNetError(f'a detection label needs at least 7 values (2 header + 5 for one '
                             f'object), got {len(raw)}: {list(raw)}')
        header_w, object_w = int(raw[0]), int(raw[1])
        if header_w < 2 or object_w < 5 or (len(raw) - header_w) % object_w:
            raise MXNetError(f'bad detection label: header width {header_w} (>= 2), object '
                             f'width {object_w} (>= 5), {len(raw)} values')
        objs = np.asarray(raw[header_w:], _F32).reshape(-1, object_w)
        keep = (objs[:, 3] > objs[:, 1]) & (objs[:, 4] > objs[:, 2])
        return np.asarray(raw[:header_w], _F32), objs[keep]

    def process(self, img, label, rng):
        """Augment ``img`` (BGR uint8) and its flat ``label``; returns both."""
        p = self.p
        if p['resize'] != -1:
            img = resize_shorter(img, p['resize'], p['inter_method'], rng)
        header, objs = self._parse(label)
        if (p['random_hue_prob'] > 0 or p['random_saturation_prob'] > 0
                or p['random_illumination_prob'] > 0 or p['random_contrast_prob'] > 0):
            img = self._color(img, rng)
        if p['rand_mirror_prob'] > 0 and rng.canonical() < p['rand_mirror_prob']:
            objs[:, [1, 3]] = _F32(1) - objs[:, [3, 1]]
            img = img[:, ::-1]
        if p['rand_pad_prob'] > 0 and p['max_pad_scale'] > 1:
            if rng.canonical() < p['rand_pad_prob']:
                img, objs = self._pad(img, objs, rng)
        if p['rand_crop_prob'] > 0 and p['num_crop_sampler'] > 0:
            if rng.canonical() < p['rand_crop_prob']:
                img, objs = self._crop(img, objs, rng)
        img = self._fit(img, rng)
        return img, np.concatenate([header, objs.ravel()])

    def _color(self, img, rng):
        p = self.p
        h = int(rng.uniform(-1, 1) * _F32(p['max_random_hue']))
        s = int(rng.uniform(-1, 1) * _F32(p['max_random_saturation']))
        l = int(rng.uniform(-1, 1) * _F32(p['max_random_illumination']))
        c = rng.uniform(-1, 1) * _F32(p['max_random_contrast'])
        h = h if rng.canonical() < p['random_hue_prob'] else 0
        s = s if rng.canonical() < p['random_saturation_prob'] else 0
        l = l if rng.canonical() < p['random_illumination_prob'] else 0
        c = c if rng.canonical() < p['random_contrast_prob'] else 0
        if h or s or l:
            img = hls_shift(img, (h, l, s))
        if abs(c) > 1e-3:
            img = _saturate(img.astype(_F32) * (c + _F32(1)))
        return img

    def _pad(self, img, objs, rng):
        scale = rng.uniform(1, self.p['max_pad_scale'])
        if scale < _F32(1.05):
            return img, objs
        x0, y0 = rng.uniform(0, scale - 1), rng.uniform(0, scale - 1)
        box = (-x0, -y0, scale, scale)
        objs = _project(objs, box)
        rows, cols = img.shape[:2]
        left, top = int(x0 * _F32(cols)), int(y0 * _F32(rows))
        right = int((scale - x0 - _F32(1)) * _F32(cols))
        bot = int((scale - y0 - _F32(1)) * _F32(rows))
        return border(img, top, bot, left, right, self.p['fill_value']), objs

    def _crop(self, img, objs, rng):
        n = self.p['num_crop_sampler']
        order = list(range(n))
        rng.shuffle(order)
        rows, cols = img.shape[:2]
        for idx in order:
            s = {k: v[idx] for k, v in self.samplers.items()}
            for _ in range(s['max_crop_trials']):
                box = _crop_box(s, rng, _F32(cols) / _F32(rows))
                kept = self._try_crop(objs, box, s)
                if kept is not None:
                    left, top = int(box[0] * _F32(cols)), int(box[1] * _F32(rows))
                    width, height = int(box[2] * _F32(cols)), int(box[3] * _F32(rows))
                    return img[top:top + height, left:left + width], kept
        return img, objs

    def _try_crop(self, objs, box, s):
        if len(objs) == 0:
            return objs
        checks = (s['min_crop_overlaps'] > 0 or s['max_crop_overlaps'] < 1
                  or s['min_crop_sample_coverages'] > 0 or s['max_crop_sample_coverages'] < 1
                  or s['min_crop_object_coverages'] > 0 or s['max_crop_object_coverages'] < 1)
        if checks and not any(_box_fits(obj, box, s) for obj in objs):
            return None
        x, y, w, h = box
        if self.p['crop_emit_mode'] == 'center':
            cx, cy = (objs[:, 1] + objs[:, 3]) * _F32(0.5), (objs[:, 2] + objs[:, 4]) * _F32(0.5)
            keep = (cx >= x) & (cx < x + w) & (cy >= y) & (cy < y + h)
        else:
            keep = np.array([_inter(obj, box) / _area(obj[1:5]) > self.p['emit_overlap_thresh']
                             for obj in objs], bool)
        if not keep.any():
            return None
        return _project(objs[keep], box)

    def _fit(self, img, rng):
        p = self.p
        shape_h, shape_w = p['data_shape'][1], p['data_shape'][2]
        rows, cols = img.shape[:2]
        if p['resize_mode'] == 'force':
            new_h, new_w = shape_h, shape_w
        else:
            if p['resize_mode'] == 'shrink' and rows <= shape_h and cols <= shape_w:
                return img
            ratio = min(_F32(shape_h) / _F32(rows), _F32(shape_w) / _F32(cols))
            new_h, new_w = int(ratio * _F32(rows)), int(ratio * _F32(cols))
        interp = inter_method(p['inter_method'], cols, rows, new_w, new_h, rng)
        return resize(np.ascontiguousarray(img), new_w, new_h, interp)


def _area(rect):
    return max(rect[2] - rect[0], 0) * max(rect[3] - rect[1], 0)


def _inter(obj, box):
    x, y, w, h = box
    return _area((max(obj[1], x), max(obj[2], y), min(obj[3], x + w), min(obj[4], y + h)))


def _box_fits(obj, box, s):
    """Whether one ground truth meets a crop sampler's IOU and coverage bounds."""
    inter = _inter(obj, box)
    crop_area, gt_area = box[2] * box[3], _area(obj[1:5])
    if s['min_crop_overlaps'] > 0 or s['max_crop_overlaps'] < 1:
        iou = inter / (crop_area + gt_area - inter) if inter > 0 else 0
        if iou < s['min_crop_overlaps'] or iou > s['max_crop_overlaps']:
            return False
    if s['min_crop_sample_coverages'] > 0 or s['max_crop_sample_coverages'] < 1:
        c = inter / crop_area
        if c < s['min_crop_sample_coverages'] or c > s['max_crop_sample_coverages']:
            return False
    if s['min_crop_object_coverages'] > 0 or s['max_crop_object_coverages'] < 1:
        c = inter / gt_area
        if c < s['min_crop_object_coverages'] or c > s['max_crop_object_coverages']:
            return False
    return True


def _crop_box(s, rng, img_ratio):
    """GenerateCropBox: (x, y, width, height) in [0, 1] coordinates."""
    scale = rng.uniform(s['min_crop_scales'], s['max_crop_scales']) + _F32(1e-12)
    low = max(_F32(s['min_crop_aspect_ratios']) / img_ratio, scale * scale)
    high = min(_F32(s['max_crop_aspect_ratios']) / img_ratio, _F32(1) / (scale * scale))
    ratio = np.sqrt(rng.uniform(low, high), dtype=_F32)
    width, height = min(_F32(1), scale * ratio), min(_F32(1), scale / ratio)
    return rng.uniform(0, _F32(1) - width), rng.uniform(0, _F32(1) - height), width, height


def _project(objs, box):
    """Box coordinates relative to the region ``box`` (x, y, w, h), clipped to [0, 1]."""
    x, y, w, h = box
    objs = objs.copy()
    objs[:, 1] = np.maximum(_F32(0), (objs[:, 1] - x) / w)
    objs[:, 2] = np.maximum(_F32(0), (objs[:, 2] - y) / h)
    objs[:, 3] = np.minimum(_F32(1), (objs[:, 3] - x) / w)
    objs[:, 4] = np.minimum(_F32(1), (objs[:, 4] - y) / h)
    return objs
