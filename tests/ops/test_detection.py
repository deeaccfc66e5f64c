"""Cases for hybridlib/ops/detection.py: the box utilities, Proposal/MultiProposal and the ROI
poolings, with their backward operators.

The harness cases check each operator against loop references written from MXNet's CPU
kernels (gradients of the backward operators: central differences of those references); the
``test_*_match_mxnet`` functions compare with the outputs and gradients MXNet 1.9.1 computed
(tests/data/detection-*, written by tests/data/make_detection_files.py).
"""
import json
import math
import os

import numpy as np
import pytest

from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, MXNetError, ShapeError
from harness import Case, check_case, normal, numeric_vjp, uniform

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data')


# -------------------------------------------------------------------------------------------------
# References: loops over MXNet's kernels, in float64
# -------------------------------------------------------------------------------------------------

def _center(box):
    w, h = box[2] - box[0], box[3] - box[1]
    return box[0] + w / 2, box[1] + h / 2, w, h


def ref_box_encode(samples, matches, anchors, refs, means, stds):
    targets, masks = np.zeros(anchors.shape), np.zeros(anchors.shape)
    for b, i in np.ndindex(samples.shape):
        if samples[b, i] > 0.5:
            ax, ay, aw, ah = _center(anchors[b, i])
            rx, ry, rw, rh = _center(refs[b, int(matches[b, i])])
            targets[b, i] = (np.array([(rx - ax) / aw, (ry - ay) / ah, np.log(rw / aw),
                                       np.log(rh / ah)]) - means) / stds
            masks[b, i] = 1
    return targets, masks


def ref_box_decode(data, anchors, std0=1.0, std1=1.0, std2=1.0, std3=1.0, clip=-1.0,
                   format='center'):
    out = np.zeros(data.shape)
    for b, i in np.ndindex(data.shape[:2]):
        a = anchors.reshape(-1, 4)[i]
        ax, ay, aw, ah = _center(a) if format == 'corner' else a
        dx, dy, dw, dh = data[b, i] * [std0, std1, std2, std3]
        if clip > 0:
            dw, dh = min(dw, clip), min(dh, clip)
        x, y, w, h = dx * aw + ax, dy * ah + ay, np.exp(dw) * aw / 2, np.exp(dh) * ah / 2
        out[b, i] = [x - w, y - h, x + w, y + h]
    return out


def ref_bipartite(data, threshold, is_ascend=False, topk=-1):
    rows, cols = data.shape[-2:]
    scores = data.reshape(-1, rows * cols)
    row_marker = np.full((len(scores), rows), -1.0)
    col_marker = np.full((len(scores), cols), -1.0)
    for b, s in enumerate(scores):
        count = 0
        for j in np.argsort(s if is_ascend else -s, kind='stable'):
            r, c = divmod(j, cols)
            if row_marker[b, r] == -1 and col_marker[b, c] == -1:
                if not (s[j] < threshold if is_ascend else s[j] > threshold):
                    break
                row_marker[b, r], col_marker[b, c] = c, r
                count += 1
                if 0 < topk < count:
                    break
    return row_marker.reshape(data.shape[:-1]), col_marker.reshape(data.shape[:-2] + (cols,))


def rpn_anchors(stride, ratios, scales):
    size = stride * stride
    out = []
    for r in ratios:
        for s in scales:
            w = math.floor(math.sqrt(math.floor(size / r)) + 0.5) * s
            h = math.floor(w / s * r + 0.5) * s
            c = (stride - 1) / 2
            out.append([c - (w - 1) / 2, c - (h - 1) / 2, c + (w - 1) / 2, c + (h - 1) / 2])
    return np.array(out)


def ref_proposal(cls_prob, bbox_pred, im_info, rpn_pre_nms_top_n=6000, rpn_post_nms_top_n=300,
                 threshold=0.7, rpn_min_size=16, scales=(4, 8, 16, 32), ratios=(0.5, 1, 2),
                 feature_stride=16, output_score=False, iou_loss=False):
    batch, channels, height, width = cls_prob.shape
    num = channels // 2
    base = rpn_anchors(feature_stride, ratios, scales)
    rois, scores = [], []
    for b in range(batch):
        im_h, im_w, scale = im_info[b]
        dets = []
        for h, w, a in np.ndindex(height, width, num):
            x1, y1, x2, y2 = base[a] + np.array([w, h, w, h]) * feature_stride
            d = bbox_pred[b, 4 * a:4 * a + 4, h, w]
            if iou_loss:
                box = [x1 + d[0], y1 + d[1], x2 + d[2], y2 + d[3]]
            else:
                bw, bh = x2 - x1 + 1, y2 - y1 + 1
                cx, cy = x1 + (bw - 1) / 2 + d[0] * bw, y1 + (bh - 1) / 2 + d[1] * bh
                pw, ph = np.exp(d[2]) * bw, np.exp(d[3]) * bh
                box = [cx - (pw - 1) / 2, cy - (ph - 1) / 2, cx + (pw - 1) / 2,
                       cy + (ph - 1) / 2]
            box = [min(max(v, 0), lim - 1) for v, lim in zip(box, [im_w, im_h] * 2)]
            score = cls_prob[b, num + a, h, w]
            if h >= int(im_h / feature_stride) or w >= int(im_w / feature_stride):
                score = -1
            size = rpn_min_size * scale
            if box[2] - box[0] + 1 < size or box[3] - box[1] + 1 < size:
                box = [box[0] - size / 2, box[1] - size / 2, box[2] + size / 2,
                       box[3] + size / 2]
                score = -1
            dets.append(box + [score])
        dets = sorted(dets, key=lambda d: -d[4])          # stable, as MXNet's sort
        pre = min(rpn_pre_nms_top_n if rpn_pre_nms_top_n > 0 else len(dets), len(dets))
        dets = dets[:pre]
        keep = []
        for i, d in enumerate(dets):
            if len(keep) == min(rpn_post_nms_top_n, pre):
                break
            if all(_pixel_iou(dets[k], d) <= threshold for k in keep):
                keep.append(i)
        for i in range(rpn_post_nms_top_n):
            d = dets[keep[i % len(keep)]]
            rois.append([b] + d[:4])
            scores.append([d[4]])
    rois, scores = np.array(rois), np.array(scores)
    return [rois, scores] if output_score else rois


def _pixel_iou(a, b):
    w = max(0, min(a[2], b[2]) - max(a[0], b[0]) + 1)
    h = max(0, min(a[3], b[3]) - max(a[1], b[1]) + 1)
    area = [(r[2] - r[0] + 1) * (r[3] - r[1] + 1) for r in (a, b)]
    return w * h / (area[0] + area[1] - w * h)


def _rounded(roi, scale, shift=0.0):
    """A roi's corners as PSROIPooling reads them: rounded half away from zero, the end pixel
    included, scaled."""
    r = np.sign(roi[1:5]) * np.floor(np.abs(roi[1:5]) + 0.5)
    return r[0] * scale - shift, r[1] * scale - shift, (r[2] + 1) * scale - shift, \
        (r[3] + 1) * scale - shift


def ref_psroi(data, rois, spatial_scale, output_dim, pooled_size, group_size=0):
    g, size = group_size or pooled_size, pooled_size
    height, width = data.shape[2:]
    out = np.zeros((len(rois), output_dim, size, size))
    for n, roi in enumerate(rois):
        x1, y1, x2, y2 = _rounded(roi, spatial_scale)
        bh, bw = max(y2 - y1, 0.1) / size, max(x2 - x1, 0.1) / size
        for c, i, j in np.ndindex(output_dim, size, size):
            h0 = min(max(math.floor(i * bh + y1), 0), height)
            h1 = min(max(math.ceil((i + 1) * bh + y1), 0), height)
            w0 = min(max(math.floor(j * bw + x1), 0), width)
            w1 = min(max(math.ceil((j + 1) * bw + x1), 0), width)
            channel = (c * g + min(i * g // size, g - 1)) * g + min(j * g // size, g - 1)
            if h1 > h0 and w1 > w0:
                out[n, c, i, j] = data[int(roi[0]), channel, h0:h1, w0:w1].mean()
    return out


def _bilinear(image, y, x):
    y0, y1, x0, x1 = math.floor(y), math.ceil(y), math.floor(x), math.ceil(x)
    fy, fx = y - y0, x - x0
    return ((1 - fy) * (1 - fx) * image[y0, x0] + (1 - fy) * fx * image[y0, x1]
            + fy * (1 - fx) * image[y1, x0] + fy * fx * image[y1, x1])


def ref_dpsroi(data, rois, trans=None, spatial_scale=1.0, output_dim=1, group_size=1,
               pooled_size=1, part_size=0, sample_per_part=1, trans_std=0.0, no_trans=False):
    size, part, samples = pooled_size, part_size or pooled_size, sample_per_part
    height, width = data.shape[2:]
    classes = 1 if no_trans else trans.shape[1] // 2
    out = np.zeros((len(rois), output_dim, size, size))
    for n, roi in enumerate(rois):
        x1, y1, x2, y2 = _rounded(roi, spatial_scale, 0.5)
        rw, rh = max(x2 - x1, 0.1), max(y2 - y1, 0.1)
        for c, i, j in np.ndindex(output_dim, size, size):
            pi, pj = math.floor(i / size * part), math.floor(j / size * part)
            k = c // (output_dim // classes)
            tx = 0 if no_trans else trans[n, 2 * k, pi, pj] * trans_std
            ty = 0 if no_trans else trans[n, 2 * k + 1, pi, pj] * trans_std
            channel = (c * group_size + min(i * group_size // size, group_size - 1)) * \
                group_size + min(j * group_size // size, group_size - 1)
            values = []
            for si, sj in np.ndindex(samples, samples):
                y = i * rh / size + y1 + ty * rh + si * rh / size / samples
                x = j * rw / size + x1 + tx * rw + sj * rw / size / samples
                if -0.5 <= y <= height - 0.5 and -0.5 <= x <= width - 0.5:
                    values.append(_bilinear(data[int(roi[0]), channel],
                                            min(max(y, 0), height - 1),
                                            min(max(x, 0), width - 1)))
            out[n, c, i, j] = np.mean(values) if values else 0
    return out


def ref_rroi(data, rois, pooled_size, spatial_scale, sampling_ratio=-1):
    (out_h, out_w), (height, width) = pooled_size, data.shape[2:]
    out = np.zeros((len(rois), data.shape[1], out_h, out_w))
    for n, roi in enumerate(rois):
        cx, cy = roi[1] * spatial_scale, roi[2] * spatial_scale
        rw, rh = max(roi[3] * spatial_scale, 1.0), max(roi[4] * spatial_scale, 1.0)
        cos, sin = math.cos(roi[5] * math.pi / 180), math.sin(roi[5] * math.pi / 180)
        gh = sampling_ratio if sampling_ratio > 0 else math.ceil(rh / out_h)
        gw = sampling_ratio if sampling_ratio > 0 else math.ceil(rw / out_w)
        for i, j, si, sj in np.ndindex(out_h, out_w, gh, gw):
            yy = -rh / 2 + i * rh / out_h + (si + 0.5) * rh / out_h / gh
            xx = -rw / 2 + j * rw / out_w + (sj + 0.5) * rw / out_w / gw
            x, y = xx * cos + yy * sin + cx, yy * cos - xx * sin + cy
            if -1 <= y <= height and -1 <= x <= width:
                y, x = min(max(y, 0), height - 1), min(max(x, 0), width - 1)
                out[n, :, i, j] += _bilinear(data[int(roi[0])].transpose(1, 2, 0), y, x)
        out[n] /= gh * gw
    return out


def zero_grads(cots, *inputs, **attrs):
    """MXNet's gradient of the box utilities and the proposals: zeros."""
    return [np.zeros_like(x) for x in inputs]


# -------------------------------------------------------------------------------------------------
# Inputs
# -------------------------------------------------------------------------------------------------

def corner_boxes(shape, low=0.0, high=1.0):
    def make(rng):
        xy = rng.uniform(low, (low + high) / 2, shape[:-1] + (2,))
        wh = rng.uniform((high - low) / 10, (high - low) / 2, shape[:-1] + (2,))
        return np.concatenate([xy, xy + wh], axis=-1)
    return make


def distinct_scores(shape):
    """Scores on a grid of 1/64, all different (float32 keeps their order)."""
    def make(rng):
        return rng.permutation(64)[:int(np.prod(shape))].reshape(shape) / 64.0
    return make


def rois(num, images, height, width, scale=1.0):
    """[image, x1, y1, x2, y2] rows, corners away from the rounding points .5."""
    def make(rng):
        corners = rng.integers(-1, int(max(height, width) / scale), (num, 4)) + \
            rng.uniform(-0.3, 0.3, (num, 4))
        corners[:, 2:] = np.maximum(corners[:, 2:], corners[:, :2] + rng.integers(1, 4, (num, 2)))
        return np.concatenate([rng.integers(0, images, (num, 1)), corners], axis=1)
    return make


def rotated_rois(num, images, height, width):
    def make(rng):
        return np.stack([rng.integers(0, images, num), rng.uniform(0, width, num),
                         rng.uniform(0, height, num), rng.uniform(0.5, 6, num),
                         rng.uniform(0.5, 6, num), rng.uniform(-90, 90, num)], axis=1)
    return make


def image_info(*rows):
    return lambda rng: np.array(rows, dtype=np.float64)


ENCODE_INPUTS = [np.array([[1., -1., 0., 1.], [1., 1., 0., -1.]]),
                 np.array([[2., 0., 1., 1.], [0., 2., 2., 1.]]), corner_boxes((2, 4, 4)),
                 corner_boxes((2, 3, 4)), np.array([0.1, -0.1, 0.05, 0.]),
                 np.array([0.1, 0.2, 0.3, 0.4])]
RPN = dict(scales=(1.0, 2.0, 4.0), ratios=(0.5, 2.0), feature_stride=8, rpn_min_size=10,
           rpn_pre_nms_top_n=30, rpn_post_nms_top_n=10, threshold=0.5)


def proposal_case(batch, attrs, name, op='_contrib_MultiProposal', info=((30, 37, 1.0),)):
    num = len(attrs.get('scales', RPN['scales'])) * len(attrs.get('ratios', RPN['ratios']))
    return Case(op, [uniform((batch, 2 * num, 4, 5), 0, 1), normal((batch, 4 * num, 4, 5), 0.3),
                     image_info(*info)], attrs, ref=ref_proposal, grad_ref=zero_grads, name=name)


DPSROI = dict(spatial_scale=0.5, output_dim=2, group_size=2, pooled_size=2, part_size=3,
              sample_per_part=2, trans_std=0.3)


def dpsroi_backward_ref(ograd, data, rois, trans=None, **attrs):
    which = [0] if attrs.get('no_trans') else [0, 2]
    args = [data, rois] + ([] if trans is None else [trans])
    grads = numeric_vjp(lambda *a: ref_dpsroi(*a, **attrs), args, ograd, which)
    return grads[0] if len(grads) == 1 else grads


CASES = [
    Case('_contrib_box_encode', ENCODE_INPUTS, ref=ref_box_encode, grad_ref=zero_grads),
    Case('_contrib_box_decode', [normal((2, 5, 4), 0.5), corner_boxes((1, 5, 4))],
         dict(format='corner', std0=0.1, std1=0.2, std2=0.3, std3=0.4), ref=ref_box_decode,
         grad_ref=zero_grads, name='corner'),
    Case('_contrib_box_decode', [normal((3, 4, 4), 0.5), uniform((1, 4, 4), 0.2, 1)],
         ref=ref_box_decode, grad_ref=zero_grads, name='center'),
    Case('_contrib_box_decode', [normal((2, 3, 4)), corner_boxes((2, 3, 4))],
         dict(format='corner', std2=2.0, std3=3.0, clip=0.5), ref=ref_box_decode,
         grad_ref=zero_grads, name='clip'),
    Case('_contrib_bipartite_matching', [distinct_scores((2, 4, 3))], dict(threshold=0.2),
         ref=ref_bipartite, grad_ref=zero_grads),
    Case('_contrib_bipartite_matching', [distinct_scores((3, 5))], dict(threshold=-1, topk=2),
         ref=ref_bipartite, grad_ref=zero_grads, name='topk'),
    Case('_contrib_bipartite_matching', [distinct_scores((2, 1, 3, 4))],
         dict(threshold=0.5, is_ascend=True), ref=ref_bipartite, grad_ref=zero_grads,
         name='ascend'),
    proposal_case(1, dict(RPN, output_score=True), 'single', op='_contrib_Proposal'),
    proposal_case(1, dict(RPN, iou_loss=True, threshold=0.3), 'iou-loss',
                  op='_contrib_Proposal', info=((28, 40, 0.5),)),
    proposal_case(2, dict(RPN, output_score=True), 'multi', info=((30, 37, 1.0), (20, 40, 0.5))),
    proposal_case(2, dict(RPN, rpn_pre_nms_top_n=3, rpn_post_nms_top_n=5, output_score=True),
                  'cyclic', info=((32, 40, 1.0), (32, 40, 1.0))),
    proposal_case(1, dict(scales=(2.0,), ratios=(1.0,), feature_stride=8, rpn_min_size=4,
                          rpn_pre_nms_top_n=-1, rpn_post_nms_top_n=25, threshold=0.9),
                  'all'),
    Case('_contrib_PSROIPooling', [uniform((2, 2 * 9, 6, 7)), rois(4, 2, 6, 7, 0.5)],
         dict(spatial_scale=0.5, output_dim=2, pooled_size=3), ref=ref_psroi, grad_inputs=[0]),
    Case('_contrib_PSROIPooling', [uniform((1, 3 * 4, 5, 5)), rois(3, 1, 5, 5)],
         dict(spatial_scale=1.0, output_dim=3, pooled_size=3, group_size=2), ref=ref_psroi,
         grad_inputs=[0], name='group'),
    Case('_backward__contrib_PSROIPooling',
         [uniform((3, 2, 2, 2)), uniform((2, 2 * 4, 5, 6)), rois(3, 2, 5, 6)],
         dict(spatial_scale=1.0, output_dim=2, pooled_size=2),
         ref=lambda g, data, r, **a: numeric_vjp(lambda x: ref_psroi(x, r, **a), [data], g,
                                                 [0])[0],
         grad_inputs=[0]),
    Case('_contrib_DeformablePSROIPooling',
         [uniform((2, 2 * 4, 5, 6)), rois(3, 2, 5, 6, 0.5), uniform((3, 4, 3, 3))], DPSROI,
         ref=ref_dpsroi, grad_inputs=[0, 2], second_order=False),
    Case('_contrib_DeformablePSROIPooling',
         [uniform((1, 2 * 9, 5, 5)), rois(2, 1, 5, 5), uniform((2, 2, 3, 3))],
         dict(spatial_scale=1.0, output_dim=2, group_size=3, pooled_size=3, trans_std=0.1),
         ref=ref_dpsroi, grad_inputs=[0, 2], second_order=False, name='one-class'),
    Case('_contrib_DeformablePSROIPooling', [uniform((1, 3, 4, 5)), rois(2, 1, 4, 5)],
         dict(spatial_scale=1.0, output_dim=3, group_size=1, pooled_size=2, sample_per_part=3,
              no_trans=True), ref=ref_dpsroi, grad_inputs=[0], second_order=False,
         name='no-trans'),
    Case('_backward__contrib_DeformablePSROIPooling',
         [uniform((3, 2, 2, 2)), uniform((2, 2 * 4, 5, 6)), rois(3, 2, 5, 6, 0.5),
          uniform((3, 4, 3, 3))], DPSROI, ref=dpsroi_backward_ref, grad=False),
    Case('_backward__contrib_DeformablePSROIPooling',
         [uniform((2, 3, 2, 2)), uniform((1, 3, 4, 5)), rois(2, 1, 4, 5)],
         dict(spatial_scale=1.0, output_dim=3, group_size=1, pooled_size=2, no_trans=True),
         ref=dpsroi_backward_ref, grad=False, name='no-trans'),
    Case('_contrib_RROIAlign', [uniform((2, 3, 6, 7)), rotated_rois(4, 2, 6, 7)],
         dict(pooled_size=(2, 3), spatial_scale=1.0), ref=ref_rroi, grad=False),
    Case('_contrib_RROIAlign', [uniform((1, 2, 5, 5)), rotated_rois(3, 1, 10, 10)],
         dict(pooled_size=(3, 2), spatial_scale=0.5, sampling_ratio=2), ref=ref_rroi,
         grad=False, name='sampling'),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_detection(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet's numbers
# -------------------------------------------------------------------------------------------------

with open(os.path.join(DATA, 'detection-cases.json')) as _f:
    MXNET = json.load(_f)['operators']
NUMBERS = np.load(os.path.join(DATA, 'detection-numbers.npz'))


def check_mxnet_numbers(name):
    """The outputs and gradients of fixture ``name`` are MXNet 1.9.1's (to 1e-6 in float32,
    1e-12 in float64)."""
    case = MXNET[name]
    inputs = [NUMBERS[f'{name}:in{i}'] for i in range(case['inputs'])]
    arrays = [nd.array(x, dtype=x.dtype) for x in inputs]
    for i in case['grads']:
        arrays[i].attach_grad()
    with autograd.record():
        outs = getattr(nd.contrib, case['op'])(*arrays, **case['attrs'])
    outs = outs if isinstance(outs, list) else [outs]
    assert len(outs) == case['outputs']
    tol = 1e-12 if inputs[0].dtype == np.float64 else 1e-6
    for k, out in enumerate(outs):
        expected = NUMBERS[f'{name}:out{k}']
        assert out.dtype == expected.dtype and out.shape == expected.shape
        np.testing.assert_allclose(out.asnumpy(), expected, rtol=tol * 10, atol=tol,
                                   err_msg=f'{name} output {k}')
    if case['grads']:
        autograd.backward(outs, [nd.array(NUMBERS[f'{name}:cot{k}'], dtype=o.dtype)
                                 for k, o in enumerate(outs)])
        for i in case['grads']:
            np.testing.assert_allclose(arrays[i].grad.asnumpy(), NUMBERS[f'{name}:grad{i}'],
                                       rtol=tol * 10, atol=tol, err_msg=f'{name} gradient {i}')


# the deformable convolutions' fixtures are checked by test_deformable.py
@pytest.mark.parametrize('name', sorted(n for n, c in MXNET.items()
                                        if not c['op'].endswith('DeformableConvolution')))
def test_operators_match_mxnet(name):
    """Outputs and gradients of MXNet 1.9.1 (float32)."""
    check_mxnet_numbers(name)


def test_mxnet_quirks_the_fixtures_hold():
    """The fixtures reach the paths that differ from the obvious: MXNet's topk + 1 matches,
    and proposals of score -1 (filtered boxes) filling the output."""
    assert (NUMBERS['bipartite_topk:out0'] >= 0).sum(axis=1).tolist() == [2, 2]
    assert (NUMBERS['proposal:out1'] == -1).sum() > 0


# -------------------------------------------------------------------------------------------------
# Symbols, errors
# -------------------------------------------------------------------------------------------------

def test_symbols_as_mxnet():
    v = sym.var
    p = sym.contrib.Proposal(v('a'), v('b'), v('c'), name='p')
    assert p.list_outputs() == ['p_output']
    p = sym.contrib.MultiProposal(v('a'), v('b'), v('c'), output_score=True, name='p')
    assert p.list_outputs() == ['p_output', 'p_score']
    # the shapes MXNet 1.9.1 infers
    assert p.infer_shape(a=(2, 24, 3, 4))[:2] == ([(2, 24, 3, 4), (2, 48, 3, 4), (2, 3)],
                                                  [(600, 5), (600, 1)])
    d = sym.contrib.DeformablePSROIPooling(v('a'), v('b'), spatial_scale=1, output_dim=1,
                                           group_size=1, pooled_size=1, no_trans=True,
                                           name='dps')
    assert (d.list_arguments(), d.list_outputs()) == (['a', 'b'], ['dps_output'])
    e = sym.contrib.box_encode(*[v(x) for x in 'abcdef'], name='e')
    assert e.list_outputs() == ['e_output0', 'e_output1']
    assert e.infer_shape(a=(2, 3), b=(2, 3), c=(2, 3, 4), d=(2, 5, 4))[:2] == (
        [(2, 3), (2, 3), (2, 3, 4), (2, 5, 4), (4,), (4,)], [(2, 3, 4), (2, 3, 4)])
    r = sym.contrib.RROIAlign(v('a'), v('b'), spatial_scale=1, pooled_size=(2, 3))
    assert r.infer_shape(a=(1, 18, 5, 5), b=(4, 6))[1] == [(4, 18, 2, 3)]


def test_rroialign_is_not_differentiable():
    data = nd.ones((1, 2, 4, 4))
    data.attach_grad()
    with autograd.record():
        out = nd.contrib.RROIAlign(data, nd.array([[0, 2, 2, 2, 2, 30]]), pooled_size=(2, 2),
                                   spatial_scale=1.0)
    with pytest.raises(MXNetError, match='_contrib_RROIAlign is non-differentiable'):
        out.backward()


def test_zero_gradients_as_mxnet():
    anchors = nd.array([[[0.1, 0.1, 0.5, 0.6], [0.2, 0.3, 0.7, 0.9]]])
    offsets = nd.array(np.linspace(-1, 1, 8).reshape(1, 2, 4))
    for x in (anchors, offsets):
        x.attach_grad()
    with autograd.record():
        out = nd.contrib.box_decode(offsets, anchors, format='corner')
    out.backward()
    assert not offsets.grad.asnumpy().any() and not anchors.grad.asnumpy().any()


@pytest.mark.parametrize('call, error, match', [
    (lambda: nd.contrib.Proposal(nd.ones((2, 2, 2, 2)), nd.zeros((2, 4, 2, 2)),
                                 nd.array([[32, 32, 1]] * 2), scales=(1,), ratios=(1,)),
     ShapeError, 'one image'),
    (lambda: nd.contrib.MultiProposal(nd.ones((1, 4, 2, 2)), nd.zeros((1, 8, 2, 2)),
                                      nd.array([[32, 32, 1]]), scales=(1,), ratios=(1,)),
     ShapeError, r'1 anchors per cell \(1 scales x 1 ratios\)'),
    (lambda: nd.contrib.MultiProposal(nd.ones((1, 2, 2, 2)), nd.zeros((1, 4, 2, 2)),
                                      nd.array([[48, 32, 1]]), scales=(1,), ratios=(1,)),
     MXNetError, 'larger than the 2x2 feature map'),
    (lambda: nd.contrib.PSROIPooling(nd.ones((1, 7, 5, 5)), nd.array([[0, 0, 0, 3, 3]]),
                                     spatial_scale=1., output_dim=2, pooled_size=2),
     ShapeError, r'output_dim x group_size\^2 = 8 needed'),
    (lambda: nd.contrib.bipartite_matching(nd.ones((2, 3))), AttributeParseError, 'threshold'),
    (lambda: nd.contrib.RROIAlign(nd.ones((1, 2, 4, 4)), nd.ones((1, 5)), pooled_size=(2, 2),
                                  spatial_scale=1.0), ShapeError, r'rois \(num_rois, 6\)'),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
