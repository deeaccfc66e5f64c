"""Cases for hybridlib/ops/resize.py: UpSampling (nearest and bilinear), adaptive average
pooling, bilinear resizing and their internal backward operators.

The references are plain loops over output positions written from MXNet's definitions; the
tests at the end pin numbers and shapes taken from MXNet 1.9.1 itself. The Deconvolution
reference (bilinear UpSampling is one), the adjoint by unit impulses and ``_np`` come from
test_conv.
"""
import numpy as np
import pytest

from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, ShapeError
from harness import Case, check_case
from test_conv import _adjoint, _np, deconv_ref


# -------------------------------------------------------------------------------------------------
# Independent references
# -------------------------------------------------------------------------------------------------

def up_nearest_ref(*xs, scale, multi_input_mode='concat', **_):
    oh = xs[0].shape[2] * scale
    ups = [np.repeat(np.repeat(x, oh // x.shape[2], 2), oh // x.shape[2], 3) for x in xs]
    return sum(ups) if multi_input_mode == 'sum' else np.concatenate(ups, axis=1)


def up_nearest_backward_ref(g, *xs, multi_input_mode='concat', **_):
    grads, start = [], 0
    for x in xs:
        s = g.shape[2] // x.shape[2]
        part = g if multi_input_mode == 'sum' else g[:, start:start + x.shape[1]]
        start += x.shape[1]
        n, c, h, w = x.shape
        grads.append(part.reshape(n, c, h, s, w, s).sum(axis=(3, 5)))
    return grads


def up_bilinear_ref(x, w, *, scale, **_):
    k, p = 2 * scale - scale % 2, int(np.ceil((scale - 1) / 2))
    c = x.shape[1]
    return deconv_ref(x, w, kernel=(k, k), stride=(scale, scale), pad=(p, p), num_filter=c,
                      num_group=c)


def adaptive_ref(x, *, output_size=(), **_):
    size = (output_size,) if isinstance(output_size, int) else tuple(output_size)
    oh, ow = (size * 2)[:2] if size else (1, 1)
    h, w = x.shape[2:]
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, r1 = int(np.floor(i * h / oh)), int(np.ceil((i + 1) * h / oh))
            c0, c1 = int(np.floor(j * w / ow)), int(np.ceil((j + 1) * w / ow))
            out[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
    return out


def _interp(n_in, n_out, align_corners):
    """Exact (float64) source coordinates of MXNet's bilinear resize."""
    if n_in == n_out:
        return [(i, i, 0.0) for i in range(n_out)]
    rows = []
    for i in range(n_out):
        if align_corners:
            src = i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            src = max((i + 0.5) * n_in / n_out - 0.5, 0.0)
        lo = int(src)
        rows.append((lo, min(lo + 1, n_in - 1), src - lo))
    return rows


def resize_ref(x, like=None, *, height=1, width=1, scale_height=None, scale_width=None,
               mode='size', align_corners=True, **_):
    h, w = x.shape[2:]
    if mode == 'like':
        oh, ow = like.shape[2:]
    elif mode == 'size':
        oh, ow = (height, width) if scale_height is None else \
            (int(scale_height * h), int(scale_width * w))
    elif mode == 'odd_scale':
        oh, ow = [int(sc * n) if n % 2 == 0 else int(sc * (n - 1)) + 1
                  for n, sc in ((h, scale_height), (w, scale_width))]
    else:
        par = 0 if 'even' in mode else 1
        oh, ow = [n if n % 2 == par else n + (1 if mode.endswith('up') else -1) for n in (h, w)]
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i, (r0, r1, a) in enumerate(_interp(h, oh, align_corners)):
        for j, (c0, c1, b) in enumerate(_interp(w, ow, align_corners)):
            out[:, :, i, j] = ((1 - a) * ((1 - b) * x[:, :, r0, c0] + b * x[:, :, r0, c1]) +
                               a * ((1 - b) * x[:, :, r1, c0] + b * x[:, :, r1, c1]))
    return out


# -------------------------------------------------------------------------------------------------
# Cases
# -------------------------------------------------------------------------------------------------

UP2 = dict(scale=2, sample_type='nearest')

RESIZE_CASES = [
    Case('UpSampling', [(1, 2, 2, 3)], UP2, ref=up_nearest_ref, name='nearest'),
    Case('UpSampling', [(1, 1, 2, 2), (1, 2, 4, 4), (1, 1, 1, 1)], UP2, ref=up_nearest_ref,
         name='nearest_concat'),
    Case('UpSampling', [(1, 2, 1, 2), (1, 2, 3, 6)], dict(scale=3, sample_type='nearest',
                                                          multi_input_mode='sum'),
         ref=up_nearest_ref, name='nearest_sum'),
    Case('UpSampling', [(1, 2, 3, 3), (2, 1, 4, 4)],
         dict(scale=2, sample_type='bilinear', num_filter=2), ref=up_bilinear_ref,
         name='bilinear'),
    Case('UpSampling', [(1, 1, 2, 3), (1, 1, 5, 5)],
         dict(scale=3, sample_type='bilinear', num_filter=1), ref=up_bilinear_ref,
         name='bilinear3'),
    Case('_backward_UpSampling', [(1, 3, 4, 4), (1, 1, 2, 2), (1, 2, 4, 4)],
         dict(scale=2, num_args=3), grad_inputs=[0], ref=up_nearest_backward_ref),
    Case('_backward_UpSampling', [(1, 2, 4, 6), (1, 2, 2, 3)],
         dict(scale=2, num_args=2, multi_input_mode='sum'), grad_inputs=[0],
         ref=up_nearest_backward_ref, name='single'),
    Case('_contrib_AdaptiveAvgPooling2D', [(1, 2, 5, 7)], dict(output_size=(3, 2)),
         ref=adaptive_ref),
    Case('_contrib_AdaptiveAvgPooling2D', [(1, 1, 3, 4)], dict(output_size=5),
         ref=adaptive_ref, name='upscale'),
    Case('_contrib_AdaptiveAvgPooling2D', [(2, 2, 3, 3)], ref=adaptive_ref, name='default'),
    Case('_backward_contrib_AdaptiveAvgPooling2D', [(1, 2, 2, 3), (1, 2, 5, 4)],
         dict(output_size=(2, 3)), grad_inputs=[0],
         ref=lambda g, x, **a: _adjoint(lambda e: adaptive_ref(e, **a), x.shape, g)),
    Case('_contrib_BilinearResize2D', [(1, 2, 3, 4)], dict(height=5, width=6), ref=resize_ref,
         atol=1e-6, name='align_corners'),
    Case('_contrib_BilinearResize2D', [(1, 2, 5, 4)], dict(height=3, width=7,
                                                           align_corners=False),
         ref=resize_ref, atol=1e-6, name='half_pixel'),
    Case('_contrib_BilinearResize2D', [(1, 1, 4, 5)], dict(scale_height=1.5, scale_width=0.7,
                                                           align_corners=False),
         ref=resize_ref, atol=1e-6, name='scale'),
    Case('_contrib_BilinearResize2D', [(1, 1, 5, 4)], dict(scale_height=2., scale_width=0.5,
                                                           mode='odd_scale'),
         ref=resize_ref, atol=1e-6, name='odd_scale'),
    Case('_contrib_BilinearResize2D', [(1, 2, 3, 4), (2, 1, 5, 3)], dict(mode='like'),
         ref=resize_ref, atol=1e-6, name='like'),
    Case('_contrib_BilinearResize2D', [(1, 1, 3, 4)], dict(mode='to_odd_up'),
         ref=resize_ref, atol=1e-6, name='to_odd_up'),
    Case('_contrib_BilinearResize2D', [(1, 1, 3, 4)], dict(mode='to_even_down'),
         ref=resize_ref, atol=1e-6, name='to_even_down'),
    Case('_backward_contrib_BilinearResize2D', [(1, 2, 4, 3), (1, 2, 3, 5)],
         dict(align_corners=False), grad_inputs=[0], atol=1e-6,
         ref=lambda g, x, **a: _adjoint(lambda e: resize_ref(e, g, mode='like', **a),
                                        x.shape, g)),
]

CASES = RESIZE_CASES


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_resize(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet 1.9.1's numbers and shapes (obtained from the oracle, pasted as literals)
# -------------------------------------------------------------------------------------------------

def test_upsampling_nearest_and_bilinear():
    a = nd.arange(1, 5).reshape((1, 1, 2, 2))
    np.testing.assert_array_equal(_np(nd.UpSampling(a, scale=2, sample_type='nearest'))[0, 0],
                                  [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]])
    b = nd.arange(1, 17).reshape((1, 1, 4, 4)) * 10
    s = _np(nd.UpSampling(a, b, scale=2, sample_type='nearest', multi_input_mode='sum'))
    np.testing.assert_array_equal(s[0, 0, 0], [11, 21, 32, 42])
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = nd.UpSampling(a, b, scale=2, sample_type='nearest')
    y.backward(nd.arange(32).reshape((1, 2, 4, 4)))
    np.testing.assert_array_equal(_np(a.grad)[0, 0], [[10, 18], [42, 50]])
    np.testing.assert_array_equal(_np(b.grad)[0, 0], np.arange(16, 32).reshape(4, 4))
    # the documented bilinear example: a grouped Deconvolution with a 4x4 kernel
    y = nd.UpSampling(nd.ones((1, 1, 3, 3)), nd.ones((1, 1, 4, 4)), scale=2,
                      sample_type='bilinear', num_filter=1)
    np.testing.assert_array_equal(_np(y)[0, 0, :2], [[1, 2, 2, 2, 2, 1], [2, 4, 4, 4, 4, 2]])
    shapes = sym.UpSampling(sym.var('a'), sym.var('w'), scale=2, sample_type='bilinear',
                            num_filter=3).infer_shape(a=(1, 3, 4, 4))
    assert shapes[0][1] == (3, 1, 4, 4) and shapes[1] == [(1, 3, 8, 8)]
    with pytest.raises(ShapeError, match='whole factor'):
        nd.UpSampling(nd.ones((1, 1, 2, 2)), nd.ones((1, 1, 3, 3)), scale=2,
                      sample_type='nearest')
    with pytest.raises(ShapeError, match='num_filter'):
        nd.UpSampling(nd.ones((1, 3, 2, 2)), nd.ones((3, 1, 4, 4)), scale=2,
                      sample_type='bilinear')
    with pytest.raises(ShapeError, match='4-d'):
        nd.UpSampling(nd.ones((1, 1, 2)), scale=2, sample_type='nearest')


def test_bilinear_resize_matches_mxnet():
    x = nd.arange(6).reshape((1, 1, 2, 3))
    y = nd.contrib.BilinearResize2D(x, height=3, width=5)
    np.testing.assert_allclose(_np(y)[0, 0], [[0, .5, 1, 1.5, 2], [1.5, 2, 2.5, 3, 3.5],
                                              [3, 3.5, 4, 4.5, 5]])
    y = nd.contrib.BilinearResize2D(x, height=3, width=5, align_corners=False)
    np.testing.assert_allclose(_np(y)[0, 0], [[0., 0.40000004, 1., 1.6000001, 2.],
                                              [1.5, 1.9000001, 2.5, 3.1000004, 3.5],
                                              [3., 3.4, 4., 4.6000004, 5.]], rtol=2e-7)
    y = nd.contrib.BilinearResize2D(nd.arange(20).reshape((1, 1, 4, 5)), height=3, width=2,
                                    align_corners=False)
    np.testing.assert_allclose(_np(y)[0, 0], [[1.5833335, 4.0833335], [8.25, 10.75],
                                              [14.916668, 17.416668]], rtol=2e-7)
    x = nd.ones((1, 1, 5, 7))
    resize = nd.contrib.BilinearResize2D
    assert resize(x, scale_height=2., scale_width=0.5).shape == (1, 1, 10, 3)
    assert resize(x, scale_width=2., height=3).shape == (1, 1, 3, 1)   # MXNet ignores it
    assert resize(x, scale_height=1.5, scale_width=1.3).shape == (1, 1, 7, 9)
    assert resize(x, scale_height=2., scale_width=2., mode='odd_scale').shape == (1, 1, 9, 13)
    assert resize(x, mode='to_even_up').shape == (1, 1, 6, 8)
    assert resize(x, mode='to_odd_down').shape == (1, 1, 5, 7)
    assert resize(x, nd.ones((2, 3, 2, 9)), mode='like').shape == (1, 1, 2, 9)
    with pytest.raises(AttributeParseError, match='scale_width'):
        resize(x, scale_height=2.)


def test_adaptive_avg_pooling_matches_mxnet():
    x = nd.arange(35).reshape((1, 1, 5, 7))
    pool = nd.contrib.AdaptiveAvgPooling2D
    np.testing.assert_allclose(_np(pool(x))[0, 0], [[17]])
    np.testing.assert_allclose(_np(pool(x, output_size=3))[0, 0],
                               [[4.5, 6.5, 8.5], [15, 17, 19], [25.5, 27.5, 29.5]])
    np.testing.assert_allclose(_np(pool(x, output_size=(2, 3)))[0, 0],
                               [[8, 10, 12], [22, 24, 26]])
