"""Cases for hybridlib/ops/image.py: the ``_image_*`` operators and OpenCV's resize and border
(``_cvimresize``, ``_cvcopyMakeBorder``).

The references are written from the textbook definitions (Keys' cubic kernel, Lanczos' window,
area averaging, numpy's padding modes, loops over sampling points), in float64; the values of
MXNet 1.9.1 itself (OpenCV's fixed-point arithmetic on uint8 images, its colour formulas) are
compared in tests/test_image.py against the files of tests/data/make_image_files.py.
"""
import json
import math

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import MXNetError, ShapeError
from harness import Case, check_case, ints, uniform

# -------------------------------------------------------------------------------------------------
# References
# -------------------------------------------------------------------------------------------------


def to_tensor_ref(x):
    axes = (2, 0, 1) if x.ndim == 3 else (0, 3, 1, 2)
    return (x.astype(np.float32) / np.float32(255)).transpose(axes)


def _per_channel(values, x):
    c = x.shape[0] if x.ndim == 3 else x.shape[1]
    values = np.broadcast_to(np.asarray(values, np.float64), (c,))
    return values.reshape(c, 1, 1)


def normalize_ref(x, mean=(0.0,), std=(1.0,)):
    return (x - _per_channel(mean, x)) / _per_channel(std, x)


def normalize_int_ref(x, mean=(0.0,), std=(1.0,)):
    m = _per_channel(mean, x).astype(np.int64)
    s = _per_channel(std, x).astype(np.int64)
    d = x.astype(np.int64) - m
    return (np.trunc(d / s)).astype(np.int64).astype(x.dtype)


def _kernel_taps(n_in, n_out, kernel, support):
    """(n_out, n_in) weights of a separable kernel at half-pixel centres, borders replicated,
    rows normalised to 1."""
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        src = (i + 0.5) * n_in / n_out - 0.5
        base = math.floor(src)
        for k in range(base - support + 1, base + support + 1):
            m[i, min(max(k, 0), n_in - 1)] += kernel(src - k)
        m[i] /= m[i].sum()
    return m


def _keys(t, a=-0.75):
    t = abs(t)
    if t <= 1:
        return (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1
    if t < 2:
        return a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a
    return 0.0


def _lanczos(t):
    return 1.0 if abs(t) < 1e-12 else 4 * math.sin(math.pi * t) * math.sin(math.pi * t / 4) / (
        math.pi ** 2 * t * t)


def _area_matrix(n_in, n_out):
    """Exact area averaging of a shrink: the overlap of each output cell with each pixel."""
    m = np.zeros((n_out, n_in))
    scale = n_in / n_out
    for i in range(n_out):
        lo, hi = i * scale, (i + 1) * scale
        for k in range(n_in):
            m[i, k] = max(0.0, min(hi, k + 1) - max(lo, k)) / scale
    return m


def _linear_matrix(n_in, n_out):
    return _kernel_taps(n_in, n_out, lambda t: max(0.0, 1 - abs(t)), 1)


def _nearest_matrix(n_in, n_out):
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        m[i, min(int(math.floor(i * n_in / n_out)), n_in - 1)] = 1
    return m


def _matrix(n_in, n_out, interp):
    if n_in == n_out:
        return np.eye(n_in)
    if interp == 0:
        return _nearest_matrix(n_in, n_out)
    if interp == 1:
        return _linear_matrix(n_in, n_out)
    if interp == 2:
        return _kernel_taps(n_in, n_out, _keys, 2)
    if interp == 4:
        return _kernel_taps(n_in, n_out, _lanczos, 4)
    return _area_matrix(n_in, n_out)


def resize_image_ref(x, w, h, interp):
    """x (..., H, W, C) resized by separable matrices."""
    my = _matrix(x.shape[-3], h, interp)
    mx_ = _matrix(x.shape[-2], w, interp)
    return np.einsum('ij,...jkc,lk->...ilc', my, x, mx_)


def image_resize_ref(x, size=(), keep_ratio=False, interp=1):
    size = (size,) if isinstance(size, int) else tuple(size)
    h, w = x.shape[-3], x.shape[-2]
    if len(size) == 2:
        ow, oh = size
    elif not keep_ratio:
        ow = oh = size[0]
    elif h > w:
        ow, oh = size[0], h * size[0] // w
    else:
        ow, oh = w * size[0] // h, size[0]
    return resize_image_ref(x, ow, oh, interp)


def resize_adjoint_ref(g, x, interp):
    my = _matrix(x.shape[-3], g.shape[-3], interp)
    mx_ = _matrix(x.shape[-2], g.shape[-2], interp)
    return np.einsum('ji,...jkc,kl->...ilc', my, g, mx_)


def cvimresize_ref(x, w, h, interp=1):
    return resize_image_ref(x, w, h, interp)


_PAD_MODES = {1: 'edge', 2: 'symmetric', 3: 'wrap', 4: 'reflect'}


def border_ref(x, top, bot, left, right, type=0, value=0.0, values=()):
    pads = [(top, bot), (left, right), (0, 0)]
    if type & ~16:
        return np.pad(x, pads, mode=_PAD_MODES[type & ~16])
    fill = list(values) + [0] * (x.shape[2] - len(values)) if values else [value] * x.shape[2]
    out = np.empty((x.shape[0] + top + bot, x.shape[1] + left + right, x.shape[2]))
    out[...] = fill
    out[top:top + x.shape[0], left:left + x.shape[1]] = x
    return out


def crop_ref(x, x0, y0, width, height):
    return x[..., y0:y0 + height, x0:x0 + width, :]


_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]])


def lighting_ref(x, alpha):
    return x + _EIG @ np.asarray(alpha)


def _hls(x):
    """Lightness and saturation of RGB pixels in [0, 255] (what a hue rotation keeps)."""
    f = x / 255.0
    vmax, vmin = f.max(-1), f.min(-1)
    light = (vmax + vmin) / 2
    with np.errstate(all='ignore'):
        sat = np.where(vmax - vmin > 1e-6, np.where(light < 0.5, (vmax - vmin) / (vmax + vmin),
                                                    (vmax - vmin) / (2 - vmax - vmin)), 0)
    return light, sat


# -- checkers of the random operators: the output is the operator at some factor in range --------

def _factor_of(out, base, slope):
    """The alpha with out = base + alpha * slope (least squares)."""
    return float(np.sum((out - base) * slope) / np.sum(slope * slope))


def brightness_checker(outputs, x, min_factor, max_factor):
    (out,) = outputs
    alpha = _factor_of(out, 0, x)
    assert min_factor - 1e-6 <= alpha <= max_factor + 1e-6
    np.testing.assert_allclose(out, x * alpha, rtol=1e-5, atol=1e-4)


def contrast_checker(outputs, x, min_factor, max_factor):
    (out,) = outputs
    grey = np.mean(x @ np.array([0.299, 0.587, 0.114]))
    alpha = _factor_of(out, grey, x - grey)
    assert min_factor - 1e-6 <= alpha <= max_factor + 1e-6
    np.testing.assert_allclose(out, x * alpha + (1 - alpha) * grey, rtol=1e-5, atol=1e-3)


def saturation_checker(outputs, x, min_factor, max_factor):
    (out,) = outputs
    grey = x @ np.array([0.299, 0.587, 0.114])
    alpha = _factor_of(out, grey[..., None], x - grey[..., None])
    assert min_factor - 1e-6 <= alpha <= max_factor + 1e-6
    np.testing.assert_allclose(out, x * alpha + (1 - alpha) * grey[..., None], rtol=1e-5,
                               atol=1e-3)


def hue_checker(outputs, x, **attrs):
    (out,) = outputs
    assert out.shape == x.shape and out.dtype == x.dtype
    for a, b in zip(_hls(out), _hls(x)):          # hue rotation keeps lightness and saturation
        np.testing.assert_allclose(a, b, atol=1e-4)
    assert not np.allclose(out, x, atol=1e-2)


def full_turn_hue_ref(x, min_factor, max_factor):
    return x                # a rotation by 360 degrees


def flip_checker(axis):
    def check(outputs, x):
        (out,) = outputs
        assert np.array_equal(out, x) or np.array_equal(out, np.flip(x, axis))
    return check


def random_lighting_checker(outputs, x, alpha_std=0.05):
    (out,) = outputs
    shift = (out - x).reshape(-1, 3)
    np.testing.assert_allclose(shift, np.broadcast_to(shift[0], shift.shape), atol=1e-3)
    alpha = np.linalg.solve(_EIG, shift[0])
    assert np.all(np.abs(alpha) < 6 * alpha_std)


def jitter_checker(outputs, x, brightness, contrast, saturation, hue):
    (out,) = outputs
    assert out.shape == x.shape and out.dtype == x.dtype
    if brightness and not (contrast or saturation or hue):
        brightness_checker(outputs, x, 1 - brightness, 1 + brightness)
    if hue and not (brightness or contrast or saturation):
        for a, b in zip(_hls(out), _hls(x)):
            np.testing.assert_allclose(a, b, atol=1e-4)


def pass_through(cots, *inputs, **attrs):
    """MXNet's gradient of the random operators: the head gradient unchanged."""
    return [cots[0]]


# -------------------------------------------------------------------------------------------------
# Cases
# -------------------------------------------------------------------------------------------------

IMG = uniform((4, 5, 3), 0, 255)
U8 = ints((4, 5, 3), 0, 256, np.uint8)
TENSOR_TOL = dict(eps=1.0, grad_rtol=1e-3, grad_atol=1e-6)     # linear: a wide step is exact
RESIZE_TOL = dict(rtol=1e-5, atol=1e-3)

CASES = [
    Case('_image_to_tensor', [uniform((4, 5, 3), 0, 255)], ref=to_tensor_ref, **TENSOR_TOL),
    Case('_image_to_tensor', [uniform((2, 3, 4, 1), 0, 255)], ref=to_tensor_ref, name='batch',
         **TENSOR_TOL),
    Case('_image_to_tensor', [U8], ref=to_tensor_ref, name='uint8'),
    Case('_image_normalize', [(3, 4, 5)], dict(mean=(0.1, 0.2, 0.3), std=(1.0, 2.0, 4.0)),
         ref=normalize_ref),
    Case('_image_normalize', [(2, 1, 3, 2)], dict(mean=0.5, std=0.25), ref=normalize_ref,
         name='batch'),
    Case('_image_normalize', [(2, 3, 2, 2)], dict(mean=(0.2,), std=(0.5, 1.0, 2.0)),
         ref=normalize_ref, name='broadcast'),
    Case('_image_normalize', [(3, 2, 2)], ref=normalize_ref, name='defaults'),
    Case('_image_normalize', [ints((3, 2, 4), 0, 256, np.uint8)], dict(mean=(1, 2.7, 3),
                                                                       std=(2, 3, 1)),
         ref=normalize_int_ref, name='uint8'),
    Case('_image_normalize', [ints((1, 2, 4), -9, 9, np.int32)], dict(mean=1.5, std=-2),
         ref=normalize_int_ref, name='int32'),
    Case('_image_crop', [IMG], dict(x=1, y=2, width=3, height=2),
         ref=lambda img, **a: crop_ref(img, a['x'], a['y'], a['width'], a['height'])),
    Case('_image_crop', [uniform((2, 4, 5, 1), 0, 1)], dict(x=0, y=1, width=5, height=2),
         ref=lambda img, **a: crop_ref(img, a['x'], a['y'], a['width'], a['height']),
         name='batch'),
    Case('_image_flip_left_right', [IMG], ref=lambda x: np.flip(x, 1)),
    Case('_image_flip_left_right', [ints((2, 3, 2), 0, 256, np.uint8)],
         ref=lambda x: np.flip(x, 1), name='uint8'),
    Case('_image_flip_top_bottom', [uniform((3, 2, 1), 0, 1)], ref=lambda x: np.flip(x, 0)),
    Case('_image_random_flip_left_right', [IMG], random=True, ref=flip_checker(1),
         grad_ref=pass_through),
    Case('_image_random_flip_left_right', [IMG], random=True, ref=flip_checker(1),
         grad_ref=pass_through, seed=3, name='seed3'),
    Case('_image_random_flip_top_bottom', [IMG], random=True, ref=flip_checker(0),
         grad_ref=pass_through),
    Case('_image_random_brightness', [IMG], dict(min_factor=0.5, max_factor=1.5), random=True,
         ref=brightness_checker, grad_ref=pass_through),
    Case('_image_random_contrast', [IMG], dict(min_factor=0.2, max_factor=0.8), random=True,
         ref=contrast_checker, grad_ref=pass_through),
    Case('_image_random_saturation', [IMG], dict(min_factor=0.0, max_factor=2.0), random=True,
         ref=saturation_checker, grad_ref=pass_through),
    Case('_image_random_hue', [IMG], dict(min_factor=0.1, max_factor=0.4), random=True,
         ref=hue_checker, grad_ref=pass_through),
    Case('_image_random_hue', [IMG], dict(min_factor=1.0, max_factor=1.0), ref=full_turn_hue_ref,
         grad_ref=pass_through, rtol=1e-5, atol=1e-3, name='full_turn'),
    Case('_image_random_color_jitter', [IMG], dict(brightness=0.4, contrast=0, saturation=0,
                                                   hue=0), random=True, ref=jitter_checker,
         grad_ref=pass_through, name='brightness'),
    Case('_image_random_color_jitter', [IMG], dict(brightness=0, contrast=0, saturation=0,
                                                   hue=0.3), random=True, ref=jitter_checker,
         grad_ref=pass_through, name='hue'),
    Case('_image_random_color_jitter', [IMG], dict(brightness=0.3, contrast=0.3,
                                                   saturation=0.3, hue=0.3), random=True,
         ref=jitter_checker, grad_ref=pass_through, name='all'),
    Case('_image_adjust_lighting', [IMG], dict(alpha=(0.1, -0.2, 0.3)),
         ref=lambda x, alpha: lighting_ref(x, alpha), rtol=1e-6, atol=1e-4, eps=1.0,
         grad_atol=1e-4),    # MXNet adds in float32: a wide step keeps the difference exact
    Case('_image_random_lighting', [IMG], dict(alpha_std=0.1), random=True,
         ref=random_lighting_checker, grad_ref=pass_through),
]

for _interp in range(5):
    CASES += [
        Case('_image_resize', [uniform((5, 7, 2), 0, 255)], dict(size=(4, 3), interp=_interp),
             ref=image_resize_ref, name=f'down{_interp}', **RESIZE_TOL),
        Case('_cvimresize', [uniform((3, 4, 3), 0, 255)], dict(w=7, h=5, interp=_interp),
             ref=cvimresize_ref, name=f'up{_interp}', **RESIZE_TOL),
    ]
CASES += [
    Case('_image_resize', [uniform((2, 4, 6, 1), 0, 1)], dict(size=3, keep_ratio=True),
         ref=image_resize_ref, name='keep_ratio_batch', **RESIZE_TOL),
    Case('_image_resize', [uniform((6, 4, 3), 0, 1)], dict(size=(4, 3), interp=3),
         ref=image_resize_ref, name='area_fast', **RESIZE_TOL),
    Case('_image_resize', [U8], dict(size=(5, 4)), ref=image_resize_ref, name='same_size'),
    Case('_backward_image_resize', [(4, 3, 2), uniform((5, 7, 2), 0, 1)], dict(interp=2),
         ref=lambda g, x, interp: resize_adjoint_ref(g, x, interp), grad_inputs=[0]),
    Case('_backward_image_resize', [(2, 2, 2, 1), uniform((2, 6, 4, 1), 0, 1)], dict(interp=3),
         ref=lambda g, x, interp: resize_adjoint_ref(g, x, interp), grad_inputs=[0],
         name='area_batch'),
    Case('_cvcopyMakeBorder', [IMG], dict(top=1, bot=2, left=0, right=3, values=(1, 2)),
         ref=border_ref, grad=False),
    Case('_cvcopyMakeBorder', [IMG], dict(top=2, bot=0, left=1, right=1, type=0, value=7),
         ref=border_ref, grad=False, name='value'),
]
for _type in (1, 2, 3, 4, 18):
    CASES.append(Case('_cvcopyMakeBorder', [IMG], dict(top=2, bot=1, left=3, right=2, type=_type),
                      ref=border_ref, grad=False, name=f'type{_type}'))


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_image_ops(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# Errors, shapes, and what differs from MXNet on purpose
# -------------------------------------------------------------------------------------------------

def test_shape_errors_name_the_operator_and_shape():
    with pytest.raises(ShapeError, match=r'_image_to_tensor.*\(height, width, channels\).*'
                                         r'\(4, 5\)'):
        nd.image.to_tensor(nd.zeros((4, 5)))
    with pytest.raises(ShapeError, match='x \\+ width should not be greater than input width'):
        nd.image.crop(nd.zeros((3, 4, 3)), 0, 0, 5, 5)
    with pytest.raises(ShapeError, match='y \\+ height should not be greater'):
        nd.image.crop(nd.zeros((3, 4, 3)), 2, 2, 2, 2)
    with pytest.raises(ShapeError, match='mean must have either 1 or 3 elements, but got '
                                         r'\(0.1, 0.2\)'):
        nd.image.normalize(nd.zeros((3, 2, 2)), mean=(0.1, 0.2))
    with pytest.raises(ShapeError, match='either 1 or 3 elements'):
        nd.image.random_brightness(nd.zeros((2, 2, 4)), 0.5, 1.5)
    with pytest.raises(ShapeError, match=r'_image_flip_left_right.*\(2, 2, 2, 3\)'):
        nd.image.flip_left_right(nd.zeros((2, 2, 2, 3)))
    with pytest.raises(MXNetError, match='min_factor'):
        nd.image.random_contrast(nd.zeros((2, 2, 3)), 1.5, 0.5)
    s = sym.image.resize(sym.var('x'), size=5, interp=2)
    assert s.infer_shape(x=(4, 6, 3))[1] == [(5, 5, 3)]          # MXNet 1.9.1
    assert sym.image.to_tensor(sym.var('x')).infer_shape(x=(4, 6, 3))[1] == [(3, 4, 6)]
    assert sym.image.to_tensor(sym.var('x')).infer_type(x='uint8')[1] == [np.float32]


def test_exported_graph_names_mxnets_operators():
    s = sym.image.normalize(sym.image.to_tensor(sym.var('x')), mean=(0.1, 0.2, 0.3), std=0.5)
    nodes = json.loads(s.tojson())['nodes']
    # MXNet 1.9.1 writes these operator names and attribute strings
    assert [n['op'] for n in nodes] == ['null', '_image_to_tensor', '_image_normalize']
    assert nodes[2]['attrs'] == {'mean': '(0.1, 0.2, 0.3)', 'std': '0.5'}


def test_flips_write_every_pixel_and_flip_gradients():
    # MXNet 1.9.1 leaves the middle column of odd widths unset and copies the head gradient
    x = nd.array(np.arange(18).reshape(2, 3, 3))
    np.testing.assert_array_equal(nd.image.flip_left_right(x).asnumpy(),
                                  np.flip(x.asnumpy(), 1))
    x.attach_grad()
    head = nd.array(np.random.default_rng(0).random((2, 3, 3)))
    with autograd.record():
        y = nd.image.flip_top_bottom(x)
    y.backward(head)
    np.testing.assert_array_equal(x.grad.asnumpy(), np.flip(head.asnumpy(), 0))


def test_random_operators_repeat_with_the_seed_and_pass_gradients_through():
    x = nd.array(np.random.default_rng(1).uniform(0, 255, (3, 4, 3)))
    mx.random.seed(5)
    first = [nd.image.random_color_jitter(x, 0.3, 0.3, 0.3, 0.1).asnumpy() for _ in range(3)]
    mx.random.seed(5)
    again = [nd.image.random_color_jitter(x, 0.3, 0.3, 0.3, 0.1).asnumpy() for _ in range(3)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[0], first[1])
    x.attach_grad()
    with autograd.record():
        y = nd.image.random_hue(x, 0.2, 0.4)
    y.backward(nd.ones_like(y) * 2)
    np.testing.assert_array_equal(x.grad.asnumpy(), 2)


def test_resize_in_a_hybridized_network_trains():
    # MXNet 1.9.1 fails on the gradient of its resizes; here a float image gets the
    # transposed interpolation and a network with a resize inside trains hybridized
    class Net(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.dense = mx.gluon.nn.Dense(2)

        def hybrid_forward(self, F, x):
            x = F.image.to_tensor(F.image.resize(x, size=(3, 2), interp=2))
            return self.dense(F.expand_dims(x, axis=0))

    x = nd.array(np.random.default_rng(0).uniform(0, 255, (5, 4, 3)), dtype='uint8')
    grads = []
    for hybridize in (False, True):
        net = Net()
        net.initialize(mx.init.Constant(0.1))
        if hybridize:
            net.hybridize()
        with autograd.record():
            y = net(x)
        y.backward()
        grads.append(net.dense.weight.grad().asnumpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_single_channel_colour_operators_keep_the_image():
    x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3, 1) * 40)
    # MXNet 1.9.1 returns an unset buffer here
    np.testing.assert_array_equal(nd.image.random_hue(x, 0.3, 0.3).asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(nd.image.adjust_lighting(x, alpha=(1, 2, 3)).asnumpy(),
                                  x.asnumpy())
    np.testing.assert_array_equal(nd.image.random_saturation(x, 0.3, 0.3).asnumpy(), x.asnumpy())


def test_saturation_mixes_with_the_full_luma():
    # MXNet 1.9.1 mixes with 0.114 * B alone; its documentation (and mx.image's
    # SaturationJitterAug) mix with the luma 0.299 R + 0.587 G + 0.114 B
    x = np.array([[[200.0, 100.0, 50.0]]], np.float32)
    got = nd.image.random_saturation(nd.array(x), 0.0, 0.0).asnumpy()
    np.testing.assert_allclose(got, np.full((1, 1, 3), 200 * 0.299 + 100 * 0.587 + 50 * 0.114),
                               rtol=1e-6)
