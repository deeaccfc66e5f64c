"""Cases for hybridlib/ops/spatial.py: GridGenerator, SpatialTransformer, ROIPooling,
Correlation, Crop, BilinearSampler and their internal backward operators.

The references are plain loops over MXNet's definitions; test_against_mxnet replays MXNet
1.9.1's outputs and gradients (tests/data/spatial.json, from make_spatial_files.py).
"""
import itertools
import json
import math
import pathlib

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, NotSupportedError, ShapeError
from harness import Case, check_case, uniform
from test_conv import _adjoint

DATA = pathlib.Path(__file__).parent.parent / 'data' / 'spatial.json'


# -------------------------------------------------------------------------------------------------
# Independent references
# -------------------------------------------------------------------------------------------------

def _centres(n):
    return np.array([-1.0 + i * 2.0 / (n - 1) if n > 1 else -1.0 for i in range(n)])


def grid_ref(data, transform_type, target_shape=(0, 0)):
    if transform_type == 'affine':
        h, w = target_shape
        out = np.zeros((data.shape[0], 2, h, w))
        for n in range(data.shape[0]):
            m = data[n].reshape(2, 3)
            for i, y in enumerate(_centres(h)):
                for j, x in enumerate(_centres(w)):
                    out[n, :, i, j] = m @ [x, y, 1.0]
        return out
    n, _, h, w = data.shape
    out = np.zeros(data.shape)
    for i in range(h):
        for j in range(w):
            out[:, 0, i, j] = (data[:, 0, i, j] + j) / ((w - 1) / 2) - 1
            out[:, 1, i, j] = (data[:, 1, i, j] + i) / ((h - 1) / 2) - 1
    return out


def grid_backward_ref(ograd, data, transform_type, target_shape=(0, 0)):
    """The gradient of sum(GridGenerator(data) * ograd): the map is affine in data."""
    out = np.zeros(data.shape)
    base = grid_ref(np.zeros_like(data), transform_type, target_shape)
    for k in range(data.size):
        e = np.zeros(data.size)
        e[k] = 1.0
        column = grid_ref(e.reshape(data.shape), transform_type, target_shape) - base
        out.reshape(-1)[k] = np.sum(column * ograd)
    return out


def sample_ref(data, grid):
    n, c, h, w = data.shape
    out = np.zeros((n, c) + grid.shape[2:])
    for b, i, j in itertools.product(range(n), range(grid.shape[2]), range(grid.shape[3])):
        x = (grid[b, 0, i, j] + 1) * (w - 1) / 2
        y = (grid[b, 1, i, j] + 1) * (h - 1) / 2
        x0, y0 = int(np.floor(x)), int(np.floor(y))
        for yy, xx in itertools.product((y0, y0 + 1), (x0, x0 + 1)):
            if 0 <= yy < h and 0 <= xx < w:
                out[b, :, i, j] += data[b, :, yy, xx] * (1 - abs(y - yy)) * (1 - abs(x - xx))
    return out


def transformer_ref(data, loc, target_shape, **_):
    return sample_ref(data, grid_ref(loc, 'affine', target_shape))


def _round(v):
    return int(np.sign(v) * np.floor(abs(v) + 0.5))


def _roi_argmax(data, rois, pooled_size, spatial_scale):
    """Per (roi, c, i, j): the (b, c, y, x) of the bin's first maximum, or None."""
    _, c, h, w = data.shape
    ph, pw = pooled_size
    result = {}
    for r, roi in enumerate(rois):
        b = int(roi[0])
        x1, y1, x2, y2 = (_round(np.float32(v) * np.float32(spatial_scale)) for v in roi[1:])
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for i, j in itertools.product(range(ph), range(pw)):
            hs = min(max(int(np.floor(i * rh / ph)) + y1, 0), h)
            he = min(max(int(np.ceil((i + 1) * rh / ph)) + y1, 0), h)
            ws = min(max(int(np.floor(j * rw / pw)) + x1, 0), w)
            we = min(max(int(np.ceil((j + 1) * rw / pw)) + x1, 0), w)
            for ch in range(c):
                best = None
                for y, x in itertools.product(range(hs, he), range(ws, we)):
                    if best is None or data[b, ch, y, x] > data[best]:
                        best = (b, ch, y, x)
                result[r, ch, i, j] = best
    return result


def roi_ref(data, rois, pooled_size, spatial_scale):
    out = np.zeros((len(rois), data.shape[1]) + tuple(pooled_size))
    for key, at in _roi_argmax(data, rois, pooled_size, spatial_scale).items():
        out[key] = 0 if at is None else data[at]
    return out


def roi_backward_ref(ograd, data, rois, pooled_size, spatial_scale):
    out = np.zeros(data.shape)
    for key, at in _roi_argmax(data, rois, pooled_size, spatial_scale).items():
        if at is not None:
            out[at] += ograd[key]
    return out


def roi_gather_ref(data_grad, data, rois, pooled_size, spatial_scale):
    out = np.zeros((len(rois), data.shape[1]) + tuple(pooled_size))
    for key, at in _roi_argmax(data, rois, pooled_size, spatial_scale).items():
        out[key] = 0 if at is None else data_grad[at]
    return out


def _corr_terms(shape, kernel_size=1, max_displacement=1, stride1=1, stride2=1, pad_size=0,
                **_):
    """Every (output index, padded data1 index, padded data2 index) MXNet's loops visit."""
    n, c, h, w = shape
    k, md, p = kernel_size, max_displacement, pad_size
    border = md + (k - 1) // 2
    top_h = int(np.ceil((h + 2 * p - 2 * border) / stride1))
    top_w = int(np.ceil((w + 2 * p - 2 * border) / stride1))
    r = md // stride2
    grid = 2 * r + 1
    for b, t, i, j in itertools.product(range(n), range(grid * grid), range(top_h), range(top_w)):
        y1, x1 = i * stride1 + md, j * stride1 + md
        y2, x2 = y1 + (t // grid - r) * stride2, x1 + (t % grid - r) * stride2
        for dy, dx, ch in itertools.product(range(k), range(k), range(c)):
            yield (b, t, i, j), (b, ch, y1 + dy, x1 + dx), (b, ch, y2 + dy, x2 + dx)


def _padded(x, p):
    return np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))


def corr_ref(data1, data2, is_multiply=True, **attrs):
    k, md, s1, s2 = (attrs.get(n, 1) for n in ('kernel_size', 'max_displacement', 'stride1',
                                               'stride2'))
    p = attrs.get('pad_size', 0)
    n, c, h, w = data1.shape
    border = md + (k - 1) // 2
    shape = (n, (2 * (md // s2) + 1) ** 2, int(np.ceil((h + 2 * p - 2 * border) / s1)),
             int(np.ceil((w + 2 * p - 2 * border) / s1)))
    a, b = _padded(data1, p), _padded(data2, p)
    out = np.zeros(shape)
    for o, i1, i2 in _corr_terms(data1.shape, **attrs):
        out[o] += a[i1] * b[i2] if is_multiply else abs(a[i1] - b[i2])
    return out / (k * k * c)


def corr_backward_ref(ograd, data1, data2, is_multiply=True, **attrs):
    p, k = attrs.get('pad_size', 0), attrs.get('kernel_size', 1)
    a, b = _padded(data1, p), _padded(data2, p)
    g1, g2 = np.zeros_like(a), np.zeros_like(b)
    scale = 1.0 / (k * k * data1.shape[1])
    for o, i1, i2 in _corr_terms(data1.shape, **attrs):
        if is_multiply:
            g1[i1] += ograd[o] * b[i2] * scale
            g2[i2] += ograd[o] * a[i1] * scale
        else:
            sign = 1.0 if a[i1] >= b[i2] else -1.0
            g1[i1] += ograd[o] * sign * scale
            g2[i2] -= ograd[o] * sign * scale
    h, w = data1.shape[2:]
    return [g1[:, :, p:p + h, p:p + w], g2[:, :, p:p + h, p:p + w]]


def _crop_window(data_hw, out_hw, offset, center_crop):
    if center_crop:
        return (data_hw[0] - out_hw[0]) // 2, (data_hw[1] - out_hw[1]) // 2
    return tuple(offset)


def crop_ref(data, *like, num_args, offset=(0, 0), h_w=(0, 0), center_crop=False):
    oh, ow = h_w if num_args == 1 else like[0].shape[2:]
    y, x = _crop_window(data.shape[2:], (oh, ow), offset, center_crop)
    return data[:, :, y:y + oh, x:x + ow]


def crop_backward_ref(ograd, data, offset=(0, 0), center_crop=False):
    oh, ow = ograd.shape[2:]
    y, x = _crop_window(data.shape[2:], (oh, ow), offset, center_crop)
    out = np.zeros(data.shape)
    out[:, :, y:y + oh, x:x + ow] = ograd
    return out


# -------------------------------------------------------------------------------------------------
# Cases
# -------------------------------------------------------------------------------------------------

# (no sampling point on a pixel boundary, where the sampler's derivative jumps)
THETA = np.array([[0.93, 0.17, 0.11, -0.12, 1.07, 0.06],
                  [0.61, -0.33, 0.23, 0.26, 0.71, -0.13]])
AFFINE = dict(transform_type='affine', target_shape=(3, 4))
WARP = dict(transform_type='warp')
# rois: fractional corners (rounded), a 1x1 region, one past the map, one partly outside
ROIS = np.array([[0, 0.2, 0.4, 5.6, 3.2], [1, 2, 1, 2, 1], [0, -3, -2, 9, 8],
                 [1, 1.4, 0.6, 4.4, 2.6]])
ROIS_DOUBLED = ROIS * [1, 2, 2, 2, 2]
ROI = dict(pooled_size=(2, 3), spatial_scale=1.0)
ROI_HALF = dict(pooled_size=(3, 2), spatial_scale=0.5)
CORR = dict(max_displacement=1, pad_size=1)
CORR_STRIDED = dict(kernel_size=3, max_displacement=2, stride1=2, stride2=2, pad_size=2)
CORR_ABS = dict(kernel_size=3, max_displacement=1, pad_size=1, is_multiply=False)

def sampler_ref(data, grid, cudnn_off=None):
    n, c, h, w = data.shape
    out = np.zeros((n, c) + grid.shape[2:])
    for b in range(n):
        for i, j in np.ndindex(*grid.shape[2:]):
            x = (grid[b, 0, i, j] + 1) * (w - 1) / 2
            y = (grid[b, 1, i, j] + 1) * (h - 1) / 2
            x0, y0 = math.floor(x), math.floor(y)
            for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
                for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
                    if 0 <= xx < w and 0 <= yy < h:
                        out[b, :, i, j] += data[b, :, yy, xx] * wy * wx
    return out


def sampler_backward_ref(g, data, grid, cudnn_off=None):
    gdata = _adjoint(lambda d: sampler_ref(d, grid), data.shape, g)
    ggrid = np.zeros_like(grid)
    eps = 1e-6
    for idx in np.ndindex(*grid.shape):
        plus, minus = grid.copy(), grid.copy()
        plus[idx] += eps
        minus[idx] -= eps
        ggrid[idx] = np.sum((sampler_ref(data, plus) - sampler_ref(data, minus)) * g) / (2 * eps)
    return [gdata, ggrid]


CASES = [
    Case('BilinearSampler', [uniform((2, 2, 3, 4), 0, 1), uniform((2, 2, 3, 2), -1.2, 1.2)],
         ref=sampler_ref, second_order=False),
    Case('_backward_BilinearSampler', [(1, 2, 2, 3), uniform((1, 2, 3, 4), 0, 1),
                                       uniform((1, 2, 2, 3), -1.2, 1.2)],
         ref=sampler_backward_ref, grad=False, rtol=1e-5, atol=1e-6),
    Case('GridGenerator', [THETA], AFFINE, grid_ref, name='affine'),
    Case('GridGenerator', [uniform((2, 2, 3, 4), -2, 2)], WARP, grid_ref, name='warp'),
    Case('_backward_GridGenerator', [uniform((2, 2, 3, 4)), THETA], AFFINE, grid_backward_ref,
         grad_inputs=[0], name='affine'),
    Case('_backward_GridGenerator', [uniform((2, 2, 3, 4)), uniform((2, 2, 3, 4))], WARP,
         grid_backward_ref, grad_inputs=[0], name='warp'),
    Case('SpatialTransformer', [uniform((2, 2, 4, 5)), THETA],
         dict(target_shape=(3, 2), transform_type='affine', sampler_type='bilinear'),
         transformer_ref, second_order=False),
    Case('ROIPooling', [uniform((2, 2, 4, 6)), ROIS], ROI, roi_ref, grad_inputs=[0]),
    Case('ROIPooling', [uniform((2, 2, 4, 6)), ROIS_DOUBLED], ROI_HALF, roi_ref, grad_inputs=[0],
         name='half_scale'),
    Case('_backward_ROIPooling', [uniform((4, 2, 2, 3)), uniform((2, 2, 4, 6)), ROIS], ROI,
         roi_backward_ref, grad_inputs=[0, 1]),
    Case('_backward_ROIPooling_gather', [uniform((2, 2, 4, 6)), uniform((2, 2, 4, 6)), ROIS],
         ROI, roi_gather_ref, grad_inputs=[0, 1]),
    Case('Correlation', [uniform((1, 2, 4, 5)), uniform((1, 2, 4, 5))], CORR, corr_ref),
    Case('Correlation', [uniform((1, 2, 6, 7)), uniform((1, 2, 6, 7))], CORR_STRIDED, corr_ref,
         name='strided'),
    Case('Correlation', [uniform((1, 2, 4, 4)), uniform((1, 2, 4, 4))], CORR_ABS, corr_ref,
         second_order=False, name='abs'),
    Case('_backward_Correlation', [uniform((1, 9, 4, 5)), uniform((1, 2, 4, 5)),
                                   uniform((1, 2, 4, 5))], CORR, corr_backward_ref),
    Case('_backward_Correlation', [uniform((1, 9, 2, 2)), uniform((1, 2, 4, 4)),
                                   uniform((1, 2, 4, 4))], CORR_ABS, corr_backward_ref,
         grad=False, name='abs'),
    Case('Crop', [uniform((2, 2, 4, 5))], dict(num_args=1, h_w=(2, 3), offset=(1, 2)),
         crop_ref),
    Case('Crop', [uniform((2, 2, 5, 5)), uniform((1, 1, 2, 3))],
         dict(num_args=2, center_crop=True), crop_ref, grad_inputs=[0], name='like_center'),
    Case('_backward_Crop', [uniform((2, 2, 2, 3)), uniform((2, 2, 4, 5))], dict(offset=(2, 1)),
         crop_backward_ref, grad_inputs=[0]),
    Case('_backward_Crop', [uniform((2, 2, 2, 3)), uniform((2, 2, 5, 6))],
         dict(center_crop=True), crop_backward_ref, grad_inputs=[0], name='center'),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_spatial(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet 1.9.1's numbers
# -------------------------------------------------------------------------------------------------

def _array(t):
    return np.array(t['data'], dtype=np.float64).reshape(t['shape']).astype(np.float32)


def replay(entry):
    """Run an oracle case (make_spatial_files.py) imperatively: (outputs, gradients by input
    name, auxiliary states by name)."""
    inputs = {n: nd.array(_array(v)) for n, v in entry['inputs']}
    aux = {n: nd.array(_array(v)) for n, v in entry['aux']}
    for n in entry['grads']:
        inputs[n].attach_grad()
    with autograd.record(train_mode=entry['train']):
        outs = getattr(nd.op, entry['op'])(*inputs.values(), *aux.values(), **entry['attrs'])
    outs = outs if isinstance(outs, list) else [outs]
    autograd.backward(outs, [nd.array(_array(h)) for h in entry['heads']],
                      train_mode=entry['train'])
    return outs, {n: inputs[n].grad for n in entry['grads']}, aux


def check_against_mxnet(entry, rtol=1e-5, atol=1e-6):
    outs, grads, aux = replay(entry)
    assert len(outs) == len(entry['outputs'])
    for out, expected in zip(outs, entry['outputs']):
        np.testing.assert_allclose(out.asnumpy(), _array(expected), rtol=rtol, atol=atol)
    for name, expected in entry['grads'].items():
        np.testing.assert_allclose(grads[name].asnumpy(), _array(expected), rtol=rtol,
                                   atol=atol, err_msg=f'gradient of {name}')
    for name, expected in entry['aux_after'].items():
        np.testing.assert_allclose(aux[name].asnumpy(), _array(expected), rtol=rtol, atol=atol,
                                   err_msg=f'auxiliary state {name}')


@pytest.mark.parametrize('entry', json.loads(DATA.read_text())['cases'],
                         ids=lambda e: e['name'])
def test_against_mxnet(entry):
    check_against_mxnet(entry)


# -------------------------------------------------------------------------------------------------
# Shapes, graphs and errors
# -------------------------------------------------------------------------------------------------

def test_symbol_shapes_and_names():
    s = sym.SpatialTransformer(sym.var('data'), sym.var('loc'), target_shape=(5, 6),
                               transform_type='affine', sampler_type='bilinear')
    assert s.infer_shape(data=(2, 3, 8, 9))[0][1] == (2, 6)
    assert s.infer_shape(data=(2, 3, 8, 9))[1] == [(2, 3, 5, 6)]
    s = sym.ROIPooling(sym.var('feat'), sym.var('rois'), pooled_size=(7, 7), spatial_scale=0.0625)
    assert s.infer_shape(feat=(1, 16, 20, 30), rois=(128, 5))[1] == [(128, 16, 7, 7)]
    s = sym.Correlation(sym.var('a'), sym.var('b'), kernel_size=1, max_displacement=20,
                        stride2=2, pad_size=20)
    assert s.infer_shape(a=(4, 8, 48, 64))[1] == [(4, 441, 48, 64)]
    # MXNet names Crop's inputs arg0, arg1 and fills num_args from the inputs
    s = sym.Crop(sym.var('x'), sym.var('like'), center_crop=True)
    assert s.infer_shape(x=(1, 3, 9, 9), like=(1, 1, 4, 5))[1] == [(1, 3, 4, 5)]
    assert json.loads(s.tojson())['nodes'][-1]['attrs']['num_args'] == '2'


def test_spatial_transformer_is_sampler_of_grid():
    rng = np.random.default_rng(0)
    data = nd.array(rng.uniform(-1, 1, (2, 3, 6, 7)))
    loc = nd.array(THETA)
    grid = nd.GridGenerator(loc, transform_type='affine', target_shape=(4, 5))
    np.testing.assert_array_equal(
        nd.SpatialTransformer(data, loc, target_shape=(4, 5), transform_type='affine',
                              sampler_type='bilinear').asnumpy(),
        nd.BilinearSampler(data, grid).asnumpy())


def test_roi_pooling_gradient_goes_to_the_first_maximum():
    data = np.zeros((1, 1, 3, 4))
    data[0, 0, 1, 0] = data[0, 0, 0, 3] = data[0, 0, 2, 1] = 5.0
    x = nd.array(data)
    x.attach_grad()
    with autograd.record():
        out = nd.ROIPooling(x, nd.array([[0, 0, 0, 3, 2]]), pooled_size=(1, 1),
                            spatial_scale=1.0)
    out.backward()
    expected = np.zeros((1, 1, 3, 4))
    expected[0, 0, 0, 3] = 1.0                  # row-major: (0, 3) comes before (1, 0)
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)


def test_float16_runs_in_float32():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-1, 1, (1, 2, 5, 5)), rng.uniform(-1, 1, (1, 2, 5, 5))
    half = nd.Correlation(nd.array(a, dtype='float16'), nd.array(b, dtype='float16'),
                          max_displacement=1, pad_size=1)
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.asnumpy(), corr_ref(a, b, max_displacement=1, pad_size=1),
                               atol=2e-3)


def test_errors():
    x = nd.zeros((1, 2, 4, 4))
    with pytest.raises(AttributeParseError, match='GridGenerator.*target_shape'):
        nd.GridGenerator(nd.zeros((1, 6)), transform_type='affine')
    with pytest.raises(ShapeError, match=r'GridGenerator.*\(N, 6\)'):
        nd.GridGenerator(nd.zeros((1, 5)), transform_type='affine', target_shape=(2, 2))
    with pytest.raises(AttributeParseError, match='transform_type.*not one of affine, warp'):
        nd.GridGenerator(nd.zeros((1, 6)), transform_type='projective', target_shape=(2, 2))
    with pytest.raises(ShapeError, match='SpatialTransformer.*batch size'):
        nd.SpatialTransformer(x, nd.zeros((2, 6)), target_shape=(2, 2), transform_type='affine',
                              sampler_type='bilinear')
    with pytest.raises(ShapeError, match=r'ROIPooling.*\(R, 5\)'):
        nd.ROIPooling(x, nd.zeros((3, 4)), pooled_size=(2, 2), spatial_scale=1.0)
    with pytest.raises(ShapeError, match=r'ROIPooling.*batch indices'):
        nd.ROIPooling(x, nd.array([[1, 0, 0, 2, 2]]), pooled_size=(2, 2), spatial_scale=1.0)
    with pytest.raises(AttributeParseError, match='required attribute.*pooled_size'):
        nd.ROIPooling(x, nd.zeros((3, 5)), spatial_scale=1.0)
    with pytest.raises(AttributeParseError, match='kernel_size must be odd'):
        nd.Correlation(x, x, kernel_size=2)
    with pytest.raises(ShapeError, match='Correlation.*do not fit'):
        nd.Correlation(x, x, max_displacement=3)
    with pytest.raises(ShapeError, match='Correlation.*one shape'):
        nd.Correlation(x, nd.zeros((1, 2, 4, 5)))
    with pytest.raises(ShapeError, match=r'Crop.*larger than the input'):
        nd.Crop(x, h_w=(5, 2))
    with pytest.raises(ShapeError, match=r'Crop.*offset \(3, 0\)'):
        nd.Crop(x, h_w=(2, 2), offset=(3, 0))
    with pytest.raises(AttributeParseError, match='Crop with one input needs h_w'):
        nd.Crop(x)


def test_absolute_correlation_has_no_second_derivative():
    a, b = nd.array(np.ones((1, 1, 3, 3))), nd.array(np.zeros((1, 1, 3, 3)))
    a.attach_grad()
    with autograd.record():
        out = nd.Correlation(a, b, is_multiply=False, max_displacement=1, pad_size=1)
        g = autograd.grad(out, [a], create_graph=True)[0]
    with pytest.raises(NotSupportedError, match='second derivatives'):
        g.backward()


def test_hybridized_block_matches_imperative():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, loc, rois):
            t = F.SpatialTransformer(x, loc, target_shape=(4, 4), transform_type='affine',
                                     sampler_type='bilinear')
            c = F.Correlation(t, t, max_displacement=1, pad_size=1)
            return F.ROIPooling(c, rois, pooled_size=(2, 2), spatial_scale=1.0)

    rng = np.random.default_rng(3)
    x = nd.array(rng.uniform(-1, 1, (2, 2, 5, 6)))
    loc = nd.array(THETA)
    rois = nd.array([[0, 0, 0, 3, 3], [1, 1, 0, 2, 3]])
    results = []
    for hybridize in (False, True):
        net = Net()
        if hybridize:
            net.hybridize()
        xs = [x.copy(), loc.copy()]
        for a in xs:
            a.attach_grad()
        with autograd.record():
            out = net(xs[0], xs[1], rois)
        out.backward()
        results.append([out.asnumpy()] + [a.grad.asnumpy() for a in xs])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_bilinear_sampler_shapes():
    s = sym.BilinearSampler(sym.var('d'), sym.var('g'))
    assert s.infer_shape(d=(2, 3, 5, 6), g=(2, 2, 4, 7))[1] == [(2, 3, 4, 7)]
    with pytest.raises(ShapeError, match='grid must have 2 channels'):
        nd.BilinearSampler(nd.zeros((1, 1, 2, 2)), nd.zeros((1, 3, 2, 2)))
