"""Cases for hybridlib/ops/deformable.py: DeformableConvolution and
ModulatedDeformableConvolution, with their backward operators.

The harness cases check each operator against loop references written from MXNet's kernels
(the backward operators: central differences of those references);
``test_operators_match_mxnet`` compares with the outputs and gradients MXNet 1.9.1 computed in
float64 (tests/data/detection-*, written by tests/data/make_detection_files.py).
"""
import math

import numpy as np
import pytest

from hybridlib import nd, sym
from hybridlib.base import AttributeParseError, ShapeError
from harness import Case, check_case, numeric_vjp, uniform
from test_detection import MXNET, _bilinear, check_mxnet_numbers


# -------------------------------------------------------------------------------------------------
# References: loops over MXNet's kernels, in float64
# -------------------------------------------------------------------------------------------------

def _sample(image, y, x, modulated):
    """DeformableConvolution's CPU sampling (0 outside [0, H) x [0, W), the last row/column
    repeated) or the modulated one's (bilinear with zeros outside, taps in (-1, H) x (-1,
    W))."""
    height, width = image.shape
    if modulated:
        if not (-1 < y < height and -1 < x < width):
            return 0.0
        y0, x0 = math.floor(y), math.floor(x)
        at = [[image[a, b] if 0 <= a < height and 0 <= b < width else 0.0
               for b in (x0, x0 + 1)] for a in (y0, y0 + 1)]
        fy, fx = y - y0, x - x0
        return ((1 - fy) * (1 - fx) * at[0][0] + (1 - fy) * fx * at[0][1]
                + fy * (1 - fx) * at[1][0] + fy * fx * at[1][1])
    if not (0 <= y < height and 0 <= x < width):
        return 0.0
    return _bilinear(image, min(y, height - 1), min(x, width - 1))


def ref_deformable(data, offset, *rest, kernel, num_filter, stride=(), dilate=(), pad=(),
                   num_group=1, num_deformable_group=1, no_bias=False, modulated=False,
                   **_):
    mask = rest[0] if modulated else None
    weight = rest[1 if modulated else 0]
    bias = None if no_bias else rest[-1]
    (kh, kw), (sh, sw) = kernel, stride or (1, 1)
    (dh, dw), (ph, pw) = dilate or (1, 1), pad or (0, 0)
    n, c, height, width = data.shape
    out_h, out_w = offset.shape[2:]
    cols = np.zeros((n, c, kh, kw, out_h, out_w))
    per_group = c // num_deformable_group
    for b, ch, i, j, y, x in np.ndindex(*cols.shape):
        g, k = ch // per_group, i * kw + j
        oy, ox = offset[b, g * 2 * kh * kw + 2 * k:g * 2 * kh * kw + 2 * k + 2, y, x]
        value = _sample(data[b, ch], y * sh - ph + i * dh + oy, x * sw - pw + j * dw + ox,
                        modulated)
        cols[b, ch, i, j, y, x] = value * (1 if mask is None else mask[b, g * kh * kw + k, y, x])
    cols = cols.reshape(n, num_group, -1, out_h * out_w)
    out = np.einsum('gfk,ngkp->ngfp', weight.reshape(num_group, num_filter // num_group, -1),
                    cols).reshape(n, num_filter, out_h, out_w)
    return out if bias is None else out + bias.reshape(1, -1, 1, 1)


# -------------------------------------------------------------------------------------------------
# Cases
# -------------------------------------------------------------------------------------------------

def deformable_case(op, shapes, attrs, name, modulated=False):
    """A (modulated) deformable convolution: data, offsets in [-1.5, 1.5], [masks], weight,
    [bias]."""
    data, offset, weight = shapes
    inputs = [uniform(data), uniform(offset, -1.5, 1.5)]
    if modulated:
        inputs.append(uniform((offset[0], offset[1] // 2) + offset[2:], 0, 1))
    inputs.append(uniform(weight))
    if not attrs.get('no_bias'):
        inputs.append(uniform((attrs['num_filter'],)))
    def ref(*args, **kw):
        return ref_deformable(*args, modulated=modulated, **kw)
    # the backward operators have no gradient of their own: no second-order check
    return Case(op, inputs, attrs, ref=ref, name=name, second_order=False)


def deformable_backward_case(shapes, attrs, name, modulated=False):
    """The backward operator: the gradients of the reference by central differences."""
    data, offset, weight = shapes
    count = 3 + modulated
    out_shape = (data[0], attrs['num_filter']) + offset[2:]
    inputs = [uniform(out_shape), uniform(data), uniform(offset, -1.5, 1.5)]
    if modulated:
        inputs.append(uniform((offset[0], offset[1] // 2) + offset[2:], 0, 1))
    inputs.append(uniform(weight))

    def ref(ograd, *args, **kw):
        def fn(*a):
            return ref_deformable(*a, modulated=modulated, **dict(kw, no_bias=True))
        return numeric_vjp(fn, list(args), ograd, range(count))
    op = '_backward__contrib_' + ('Modulated' if modulated else '') + 'DeformableConvolution'
    return Case(op, inputs, attrs, ref=ref, name=name, grad=False)


CASES = [
    deformable_case('_contrib_DeformableConvolution', ((1, 4, 5, 5), (1, 2 * 2 * 4, 4, 3),
                                                       (4, 2, 2, 2)),
                    dict(kernel=(2, 2), stride=(1, 2), pad=(0, 1), num_filter=4, num_group=2,
                         num_deformable_group=2), 'groups'),
    deformable_case('_contrib_DeformableConvolution', ((2, 2, 4, 4), (2, 18, 2, 4),
                                                       (3, 2, 3, 3)),
                    dict(kernel=(3, 3), dilate=(1, 2), pad=(0, 2), num_filter=3, no_bias=True),
                    'dilate'),
    deformable_case('_contrib_ModulatedDeformableConvolution',
                    ((1, 4, 5, 5), (1, 2 * 2 * 4, 4, 3), (4, 2, 2, 2)),
                    dict(kernel=(2, 2), stride=(1, 2), pad=(0, 1), num_filter=4, num_group=2,
                         num_deformable_group=2), 'groups', modulated=True),
    deformable_case('_contrib_ModulatedDeformableConvolution',
                    ((2, 2, 4, 4), (2, 18, 2, 4), (3, 2, 3, 3)),
                    dict(kernel=(3, 3), dilate=(1, 2), pad=(0, 2), num_filter=3, no_bias=True),
                    'dilate', modulated=True),
    deformable_backward_case(((1, 2, 4, 4), (1, 2 * 4, 3, 3), (2, 2, 2, 2)),
                             dict(kernel=(2, 2), num_filter=2), 'plain'),
    deformable_backward_case(((1, 4, 4, 4), (1, 2 * 2 * 4, 3, 2), (2, 2, 2, 2)),
                             dict(kernel=(2, 2), stride=(1, 2), num_filter=2, num_group=2,
                                  num_deformable_group=2), 'groups', modulated=True),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_deformable(case):
    check_case(case)


@pytest.mark.parametrize('name', sorted(n for n, c in MXNET.items()
                                        if c['op'].endswith('DeformableConvolution')))
def test_operators_match_mxnet(name):
    """Outputs and gradients of MXNet 1.9.1 (float64)."""
    check_mxnet_numbers(name)


# -------------------------------------------------------------------------------------------------
# Symbols, errors
# -------------------------------------------------------------------------------------------------

def test_symbols_as_mxnet():
    v = sym.var
    c = sym.contrib.DeformableConvolution(data=v('a'), offset=v('b'), kernel=(3, 3),
                                          num_filter=4, num_group=2, num_deformable_group=2,
                                          pad=(1, 1), name='dc')
    assert c.list_arguments() == ['a', 'b', 'dc_weight', 'dc_bias']
    assert c.infer_shape(a=(2, 6, 5, 7), b=(2, 36, 5, 7))[:2] == (
        [(2, 6, 5, 7), (2, 36, 5, 7), (4, 3, 3, 3), (4,)], [(2, 4, 5, 7)])
    m = sym.contrib.ModulatedDeformableConvolution(data=v('a'), offset=v('b'), mask=v('m'),
                                                   kernel=(3, 3), num_filter=4,
                                                   num_deformable_group=2, stride=(2, 2),
                                                   name='dc')
    assert m.infer_shape(a=(2, 6, 5, 7), b=(2, 36, 2, 3), m=(2, 18, 2, 3))[:2] == (
        [(2, 6, 5, 7), (2, 36, 2, 3), (2, 18, 2, 3), (4, 6, 3, 3), (4,)], [(2, 4, 2, 3)])


@pytest.mark.parametrize('call, error, match', [
    (lambda: nd.contrib.DeformableConvolution(nd.ones((1, 3, 5, 5)), nd.zeros((1, 36, 3, 3)),
                                              nd.ones((2, 3, 3, 3)), kernel=(3, 3),
                                              num_filter=2, num_deformable_group=2,
                                              no_bias=True),
     ShapeError, 'divisible by num_group 1 and num_deformable_group 2'),
    (lambda: nd.contrib.DeformableConvolution(nd.ones((1, 4, 5, 5)), nd.zeros((1, 18, 4, 3)),
                                              nd.ones((2, 4, 3, 3)), kernel=(3, 3),
                                              num_filter=2, no_bias=True),
     ShapeError, 'offset'),
    (lambda: nd.contrib.DeformableConvolution(nd.ones((1, 2, 5)), nd.zeros((1, 6, 3)),
                                              nd.ones((2, 2, 3)), kernel=(3,), num_filter=2,
                                              no_bias=True),
     AttributeParseError, 'only 2-D deformable convolutions'),
    (lambda: nd.contrib.ModulatedDeformableConvolution(
        nd.ones((1, 2, 5, 5)), nd.zeros((1, 18, 3, 3)), nd.ones((1, 9, 3, 3)),
        nd.ones((2, 2, 3, 3)), kernel=(3, 3), num_filter=2, no_bias=True, layout='NHWC'),
     AttributeParseError, 'layout'),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_modulated_with_unit_masks_is_deformable_inside_the_image():
    """Both convolutions sample alike where a tap and its neighbours lie inside the image."""
    rng = np.random.default_rng(3)
    data = nd.array(rng.uniform(-1, 1, (1, 2, 6, 6)))
    # every tap (i, j) of output (y, x) moved to a point in [0.05, 4.95]^2
    base = np.stack(np.broadcast_arrays(np.arange(2)[:, None, None, None, None],
                                        np.arange(2)[None, :, None, None, None],
                                        np.arange(5)[None, None, None, :, None],
                                        np.arange(5)[None, None, None, None, :]))
    base = np.concatenate([base[0] + base[2], base[1] + base[3]], axis=2)  # (2, 2, 2, 5, 5)
    offset = nd.array((rng.uniform(0.05, 4.95, base.shape) - base).reshape(1, 8, 5, 5))
    weight = nd.array(rng.uniform(-1, 1, (3, 2, 2, 2)))
    kw = dict(kernel=(2, 2), num_filter=3, no_bias=True)
    v1 = nd.contrib.DeformableConvolution(data, offset, weight, **kw).asnumpy()
    v2 = nd.contrib.ModulatedDeformableConvolution(data, offset, nd.ones((1, 4, 5, 5)), weight,
                                                   **kw).asnumpy()
    np.testing.assert_allclose(v1, v2, rtol=1e-6, atol=1e-6)
