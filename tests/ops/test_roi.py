"""Cases for hybridlib/ops/roi.py: ROIAlign and its backward operator.

The harness cases check both against a loop over rois, bins and samples written from
Detectron's description of ROIAlign (the backward operator: central differences of that
loop). ``test_operators_match_mxnet`` and the block tests compare with MXNet 1.9.1's outputs
and gradients (tests/data/attention-*, written by tests/data/make_attention_files.py).
"""
import math

import numpy as np
import pytest

from hybridlib import autograd, gluon, nd, sym
from hybridlib.base import AttributeParseError, MXNetError, ShapeError
from hybridlib.gluon import nn
from harness import Case, check_case, numeric_vjp, uniform
from test_attention import FACTS, NUMBERS, check_mxnet_numbers, run_block_case
from hybrid_check import check_hybrid  # noqa: E402  (test_attention puts tests/nn on the path)


# -------------------------------------------------------------------------------------------------
# Reference
# -------------------------------------------------------------------------------------------------

def bilinear(image, y, x):
    """The value at (y, x): 0 more than a pixel outside the image, the border pixels just
    outside it."""
    height, width = image.shape
    if y < -1 or y > height or x < -1 or x > width:
        return 0.0
    y, x = min(max(y, 0.0), height - 1), min(max(x, 0.0), width - 1)
    y0, x0 = math.floor(y), math.floor(x)
    y1, x1 = min(y0 + 1, height - 1), min(x0 + 1, width - 1)
    fy, fx = y - y0, x - x0
    return ((1 - fy) * (1 - fx) * image[y0, x0] + (1 - fy) * fx * image[y0, x1]
            + fy * (1 - fx) * image[y1, x0] + fy * fx * image[y1, x1])


def ref_roi_align(data, rois, pooled_size, spatial_scale, sample_ratio=-1,
                  position_sensitive=False, aligned=False):
    out_h, out_w = pooled_size
    cells = out_h * out_w if position_sensitive else 1
    out = np.zeros((len(rois), data.shape[1] // cells, out_h, out_w))
    for r, roi in enumerate(rois):
        image = int(roi[0])
        if image < 0:
            continue
        shift = 0.5 if aligned else 0.0
        x1, y1, x2, y2 = (v * spatial_scale - shift for v in roi[1:5])
        width, height = x2 - x1, y2 - y1
        if not aligned:
            width, height = max(width, 1.0), max(height, 1.0)
        bin_h, bin_w = height / out_h, width / out_w
        grid_h = sample_ratio if sample_ratio > 0 else math.ceil(bin_h)
        grid_w = sample_ratio if sample_ratio > 0 else math.ceil(bin_w)
        for c, i, j in np.ndindex(out.shape[1:]):
            channel = c * cells + (i * out_w + j if position_sensitive else 0)
            total = 0.0
            for si, sj in np.ndindex(grid_h, grid_w):
                y = y1 + i * bin_h + (si + 0.5) * bin_h / grid_h
                x = x1 + j * bin_w + (sj + 0.5) * bin_w / grid_w
                total += bilinear(data[image, channel], y, x)
            out[r, c, i, j] = total / (grid_h * grid_w)
    return out


def rois(num, images, height, width, scale=1.0, negative=()):
    """[image, x1, y1, x2, y2] rows, some reaching beyond the image; rows in ``negative``
    get image index -1."""
    def make(rng):
        corner = rng.uniform(-2, [width / scale, height / scale], (num, 2))
        size = rng.uniform(0.3, [width / scale, height / scale], (num, 2))
        image = rng.integers(0, images, (num, 1)).astype(np.float64)
        image[list(negative)] = -1
        return np.concatenate([image, corner, corner + size], axis=1)
    return make


def backward_ref(ograd, data, rois, **attrs):
    return numeric_vjp(lambda x: ref_roi_align(x, rois, **attrs), [data], ograd, [0])[0]


CASES = [
    Case('_contrib_ROIAlign', [uniform((2, 3, 6, 7)), rois(4, 2, 6, 7)],
         dict(pooled_size=(2, 3), spatial_scale=1.0), ref=ref_roi_align, grad_inputs=[0]),
    Case('_contrib_ROIAlign', [uniform((1, 2, 8, 6)), rois(3, 1, 8, 6, 0.5)],
         dict(pooled_size=(2, 2), spatial_scale=0.5, sample_ratio=2), ref=ref_roi_align,
         grad_inputs=[0], name='sample-ratio'),
    Case('_contrib_ROIAlign', [uniform((2, 2, 5, 6)), rois(3, 2, 5, 6)],
         dict(pooled_size=(3, 2), spatial_scale=1.0, aligned=True), ref=ref_roi_align,
         grad_inputs=[0], name='aligned'),
    Case('_contrib_ROIAlign', [uniform((1, 2 * 4, 5, 5)), rois(3, 1, 5, 5)],
         dict(pooled_size=(2, 2), spatial_scale=1.0, position_sensitive=True),
         ref=ref_roi_align, grad_inputs=[0], name='position-sensitive'),
    Case('_contrib_ROIAlign', [uniform((2, 2, 4, 5)), rois(3, 2, 4, 5, negative=(1,))],
         dict(pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=1), ref=ref_roi_align,
         grad_inputs=[0], name='negative-image'),
    Case('_backward_ROIAlign', [uniform((3, 2, 2, 3)), uniform((2, 2, 5, 6)), rois(3, 2, 5, 6)],
         dict(pooled_size=(2, 3), spatial_scale=1.0), ref=backward_ref, grad_inputs=[0, 1]),
    Case('_backward_ROIAlign',
         [uniform((2, 2, 2, 2)), uniform((1, 8, 5, 5)), rois(2, 1, 5, 5, negative=(0,))],
         dict(pooled_size=(2, 2), spatial_scale=1.0, position_sensitive=True, aligned=True,
              sample_ratio=2), ref=backward_ref, grad_inputs=[0], name='position-sensitive'),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_roi(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet's numbers
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('name', sorted(n for n, c in FACTS['operators'].items()
                                        if c['op'] == 'ROIAlign'))
def test_operators_match_mxnet(name):
    check_mxnet_numbers(name)


class RegionHead(gluon.HybridBlock):
    """An R-CNN head: features, ROIAlign of the given rois, a dense layer per roi."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.Conv2D(4, 3, padding=1, in_channels=3)
            self.head = nn.Dense(5, in_units=4 * 2 * 2)

    def hybrid_forward(self, F, x, rois):
        pooled = F.contrib.ROIAlign(self.features(x), rois, pooled_size=(2, 2),
                                    spatial_scale=0.5, sample_ratio=2)
        return self.head(pooled)


@pytest.mark.parametrize('hybridize', [False, True])
def test_region_head_matches_mxnet(hybridize):
    block, (x, boxes) = run_block_case('block_region_head', RegionHead, hybridize)
    assert boxes.grad is None


def test_region_head_hybridizes_consistently():
    block = RegionHead()
    block.initialize()
    check_hybrid(block, [nd.array(NUMBERS['block_region_head:in0']),
                         nd.array(NUMBERS['block_region_head:in1'])])


def test_negative_image_index_gives_zeros_alone():
    """A skipped roi is zeros and leaves the other rois' values alone (MXNet's kernel
    zeroes one element of another roi): MXNet's, to float32 rounding."""
    data = nd.array(NUMBERS['roi_align:in0'])
    boxes = NUMBERS['roi_align:in1']
    skipped = boxes.copy()
    skipped[0, 0] = -1
    out = nd.contrib.ROIAlign(data, nd.array(skipped), pooled_size=(2, 3), spatial_scale=1.0)
    assert not out.asnumpy()[0].any()
    np.testing.assert_allclose(out.asnumpy()[1:], NUMBERS['roi_align:out0'][1:], rtol=1e-5,
                               atol=1e-6)


def test_rois_get_no_gradient():
    data, boxes = nd.array(NUMBERS['roi_align:in0']), nd.array(NUMBERS['roi_align:in1'])
    boxes.attach_grad()
    with autograd.record():
        out = nd.contrib.ROIAlign(data, boxes, pooled_size=(2, 2), spatial_scale=1.0)
    out.backward()
    assert not boxes.grad.asnumpy().any()


def test_no_rois():
    out = nd.contrib.ROIAlign(nd.ones((1, 6, 4, 4)), nd.zeros((0, 5)), pooled_size=(3, 2),
                              spatial_scale=1.0, position_sensitive=True)
    assert out.shape == (0, 1, 3, 2)


def test_float16_computes_in_float32():
    data, boxes = NUMBERS['roi_align:in0'], NUMBERS['roi_align:in1']
    out = nd.contrib.ROIAlign(nd.array(data, dtype='float16'), nd.array(boxes, dtype='float16'),
                              pooled_size=(2, 3), spatial_scale=1.0)
    assert out.dtype == np.float16
    expected = ref_roi_align(data.astype(np.float16).astype(np.float64),
                             boxes.astype(np.float16).astype(np.float64), (2, 3), 1.0)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=2e-3, atol=2e-3)


def test_symbol_backward_shapes():
    """The backward operator infers data's channels from the output gradient."""
    s = sym.op._backward_ROIAlign(sym.var('g'), sym.var('d'), sym.var('r'), pooled_size=(2, 2),
                                  spatial_scale=1.0, position_sensitive=True)
    args, outs, _ = s.infer_shape_partial(g=(3, 2, 2, 2), d=(1, 0, 6, 6))
    assert args == [(3, 2, 2, 2), (1, 8, 6, 6), (3, 5)] and outs == [(1, 8, 6, 6)]


@pytest.mark.parametrize('call, error, match', [
    (lambda: nd.contrib.ROIAlign(nd.ones((1, 2, 4, 4)), nd.ones((1, 4)), pooled_size=(2, 2),
                                 spatial_scale=1.0), ShapeError, r'rois \(num_rois, 5\)'),
    (lambda: nd.contrib.ROIAlign(nd.ones((2, 4, 4)), nd.ones((1, 5)), pooled_size=(2, 2),
                                 spatial_scale=1.0), ShapeError, 'must have 4 axes'),
    (lambda: nd.contrib.ROIAlign(nd.ones((1, 6, 4, 4)), nd.ones((1, 5)), pooled_size=(2, 2),
                                 spatial_scale=1.0, position_sensitive=True),
     ShapeError, 'has 6 channels, not a multiple of pooled_size 2 x 2'),
    (lambda: nd.contrib.ROIAlign(nd.ones((1, 2, 4, 4)), nd.ones((1, 5)), pooled_size=(2,),
                                 spatial_scale=1.0), AttributeParseError, 'pooled_size'),
    (lambda: nd.contrib.ROIAlign(nd.ones((1, 2, 4, 4)), nd.ones((1, 5)), pooled_size=(2, 2)),
     AttributeParseError, 'spatial_scale'),
    (lambda: nd.contrib.ROIAlign(nd.ones((1, 2, 4, 4)), nd.array([[0, 2, 2, 2, 3]]),
                                 pooled_size=(2, 2), spatial_scale=1.0, aligned=True),
     MXNetError, r'roi 0 is 0.0 x 1.0 after scaling'),
    (lambda: nd.contrib.ROIAlign(nd.ones((1, 2, 4, 4)), nd.array([[1, 0, 0, 2, 2]]),
                                 pooled_size=(2, 2), spatial_scale=1.0),
     MXNetError, 'rois refer to image 1, but data holds 1 images'),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
