"""Detection operators of two-stage detectors: box utilities, region proposals, ROI poolings.

* box utilities: ``_contrib_box_encode``, ``_contrib_box_decode``,
  ``_contrib_bipartite_matching``;
* region proposals of Faster R-CNN's RPN: ``_contrib_Proposal`` (one image) and
  ``_contrib_MultiProposal`` (a batch);
* region pooling: ``_contrib_PSROIPooling`` (R-FCN's position-sensitive average pooling),
  ``_contrib_DeformablePSROIPooling`` (its deformable form), ``_contrib_RROIAlign`` (ROIAlign
  over rotated boxes);
* the internal backward operators the gradients are made of (``_backward__contrib_*``);
* the bilinear sampling (``_taps``) and gradient scatter (``_scatter_add``) the ROI poolings
  share with the deformable convolutions of ``deformable.py`` and ROIAlign (``roi.py``).

Everything follows MXNet 1.9.1's CPU kernels, quirks included (checked against MXNet):

* the box utilities and the proposals have no gradient (MXNet writes zeros); RROIAlign has
  none at all: its backward raises MXNetError, as MXNet's does;
* bipartite_matching with ``topk=k`` makes up to k + 1 matches (MXNet stops after the match
  that exceeds k);
* the proposals rank boxes by score with a stable sort, and boxes filtered out for their size
  or lying on padding keep their (enlarged) coordinates with score -1 and still take part in
  the non-maximum suppression, so they can fill the output;
* PSROIPooling averages (despite its description), over bins of whole pixels of rounded rois.

Float32 inputs compute in float32 in MXNet's order of operations; float64 ones in float64
(MXNet's proposals take float32 only); float16 ones in float32.
"""
import math

import numpy as np

from ..base import MXNetError, ShapeError
from .attrs import Bool, Float, FloatTuple, Int, Shape, Str
from .contrib import _check_rank, _dim, _exp, _log, _no_gradient, _stable_order, _work_dtype
from .creation import _no_gradient as _non_differentiable
from .elemwise import _round_half_away, not_differentiable_twice
from .registry import merge_shape, register, same_dtype

__all__ = []


def _as(value, dtype):
    """A float attribute as MXNet's kernels see it: a C float, then the data's type."""
    return np.dtype(dtype).type(np.float32(value))


def _same_dtypes(attrs, *dtypes):
    """dtype inference of the operators with two outputs: one dtype for every input and both
    outputs."""
    ins, outs = same_dtype(attrs, *dtypes)
    return ins, outs * 2


def _scatter_add(xp, index, values, size):
    """Sums ``values`` into a zero vector of ``size`` at ``index`` (repeated indices add up),
    in float64."""
    return xp.bincount(index.ravel(), weights=values.ravel().astype(np.float64), minlength=size)


# -------------------------------------------------------------------------------------------------
# box_encode, box_decode, bipartite_matching
# -------------------------------------------------------------------------------------------------

def _corner_to_center(boxes):
    """(x, y, width, height) of corner boxes, in MXNet's order of operations."""
    width = boxes[..., 2] - boxes[..., 0]
    height = boxes[..., 3] - boxes[..., 1]
    return boxes[..., 0] + width * 0.5, boxes[..., 1] + height * 0.5, width, height


@register('_contrib_box_encode')
class box_encode:
    """Training targets of boxes as normalised offsets from their anchors.

    ``samples`` (B, N): > 0.5 for positive anchors; ``matches`` (B, N): the index of each
    anchor's reference box; ``anchors`` (B, N, 4) and ``refs`` (B, M, 4) corner boxes;
    ``means`` (4,), ``stds`` (4,) -> ``targets`` (B, N, 4): ``((rx - ax) / aw - means[0]) /
    stds[0]``, the same for y, ``(log(rw / aw) - means[2]) / stds[2]`` and for the height, zero
    for non-positive anchors; ``masks`` (B, N, 4): 1 for positive anchors, else 0. (A match
    outside ``[0, M)`` of a positive anchor reads the nearest reference box; MXNet reads
    whatever memory is there.) No gradient (MXNet writes zeros).
    """
    inputs = ('samples', 'matches', 'anchors', 'refs', 'means', 'stds')
    num_outputs = 2
    infer_type = _same_dtypes
    gradient = _no_gradient

    def compute(xp, attrs, samples, matches, anchors, refs, means, stds):
        dtype = anchors.dtype
        work = _work_dtype(dtype)
        index = xp.clip(matches.astype(np.int64), 0, refs.shape[1] - 1)
        ref = xp.take_along_axis(refs.astype(work, copy=False), index[..., None], axis=1)
        rx, ry, rw, rh = _corner_to_center(ref)
        ax, ay, aw, ah = _corner_to_center(anchors.astype(work, copy=False))
        means, stds = means.astype(work, copy=False), stds.astype(work, copy=False)
        valid = samples > 0.5
        with np.errstate(all='ignore'):
            targets = [((rx - ax) / aw - means[0]) / stds[0], ((ry - ay) / ah - means[1]) / stds[1],
                       (_log(xp, rw / aw) - means[2]) / stds[2],
                       (_log(xp, rh / ah) - means[3]) / stds[3]]
        targets = xp.where(valid[..., None], xp.stack(targets, axis=-1), 0)
        masks = xp.broadcast_to(valid[..., None], targets.shape)
        return targets.astype(dtype), masks.astype(dtype)

    def infer_shape(attrs, samples, matches, anchors, refs, means, stds):
        _check_rank(samples, 2, 'samples (batch, num_anchors)')
        _check_rank(matches, 2, 'matches (batch, num_anchors)')
        _check_rank(anchors, 3, 'anchors (batch, num_anchors, 4)')
        _check_rank(refs, 3, 'refs (batch, num_refs, 4)')
        batch = _dim(samples, 0) or _dim(matches, 0) or _dim(anchors, 0) or _dim(refs, 0)
        num = _dim(samples, 1) or _dim(matches, 1) or _dim(anchors, 1)
        out = (batch, num, 4)
        return [merge_shape(samples, (batch, num), 'samples'),
                merge_shape(matches, (batch, num), 'matches'),
                merge_shape(anchors, out, 'anchors (batch, num_anchors, 4)'),
                merge_shape(refs, (batch, _dim(refs, 1), 4), 'refs (batch, num_refs, 4)'),
                merge_shape(means, (4,), 'means'), merge_shape(stds, (4,), 'stds')], [out, out]


@register('_contrib_box_decode')
class box_decode:
    """Boxes from offsets relative to anchors (the inverse of box_encode, without means).

    ``data`` (B, N, 4) offsets, ``anchors`` (K, N, 4) (the first N boxes are read) in
    ``format`` 'center' (x, y, width, height) or 'corner' -> (B, N, 4) corner boxes:
    center ``data[:2] * std[:2] * anchor size + anchor center``, size ``exp(data[2:] *
    std[2:]) * anchor size``, the exponents capped at ``clip`` when it is > 0. No gradient
    (MXNet writes zeros).
    """
    inputs = ('data', 'anchors')
    attrs = dict(std0=Float(1.0), std1=Float(1.0), std2=Float(1.0), std3=Float(1.0),
                 clip=Float(-1.0), format=Str('center', choices=('center', 'corner')))
    gradient = _no_gradient

    def compute(xp, attrs, data, anchors):
        work = _work_dtype(data.dtype)
        x = data.astype(work, copy=False)
        box = anchors.reshape(-1, 4)[:data.shape[1]].astype(work, copy=False)
        if attrs.format == 'corner':
            ax, ay, aw, ah = _corner_to_center(box)
        else:
            ax, ay, aw, ah = box[:, 0], box[:, 1], box[:, 2], box[:, 3]
        std = [_as(attrs[f'std{i}'], work) for i in range(4)]
        ox = x[..., 0] * std[0] * aw + ax
        oy = x[..., 1] * std[1] * ah + ay
        dw, dh = x[..., 2] * std[2], x[..., 3] * std[3]
        if attrs.clip > 0:
            clip = _as(attrs.clip, work)
            dw, dh = xp.where(dw < clip, dw, clip), xp.where(dh < clip, dh, clip)
        ow = _exp(xp, dw) * aw * 0.5
        oh = _exp(xp, dh) * ah * 0.5
        out = xp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)
        return out.astype(data.dtype, copy=False)

    def infer_shape(attrs, data, anchors):
        _check_rank(data, 3, 'data (batch, num_boxes, 4)')
        _check_rank(anchors, 3, 'anchors (1, num_boxes, 4)')
        num = _dim(data, 1) or _dim(anchors, 1)
        data = merge_shape(data, (_dim(data, 0), num, 4), 'data (batch, num_boxes, 4)')
        anchors = merge_shape(anchors, (_dim(anchors, 0), num, 4), 'anchors (1, num_boxes, 4)')
        return [data, anchors], [data]


@register('_contrib_bipartite_matching')
class bipartite_matching:
    """Greedy bipartite matching of the rows and columns of a score matrix.

    ``data`` (..., N, M) -> ``row_marker`` (..., N): the column matched to each row, -1 for
    none; ``col_marker`` (..., M): the row matched to each column, -1 for none. Pairs are taken
    in order of score (descending, ascending with ``is_ascend``; ties in index order) while
    both ends are free; the matching stops at the first free pair whose score is not beyond
    ``threshold`` (> for descending, < for ascending) and, with ``topk`` > 0, after the match
    that makes more than ``topk`` (MXNet's count). No gradient (MXNet writes zeros).
    """
    inputs = ('data',)
    named_inputs = False
    attrs = dict(is_ascend=Bool(False), threshold=Float(), topk=Int(-1))
    num_outputs = 2
    gradient = _no_gradient

    def compute(xp, attrs, data):
        shape = data.shape
        rows, cols = shape[-2:]
        work = _work_dtype(data.dtype)
        scores = data.reshape(-1, rows * cols).astype(work, copy=False)
        batch = scores.shape[0]
        order = _stable_order(xp, scores if attrs.is_ascend else -scores)
        ranked = xp.take_along_axis(scores, order, axis=1)
        threshold = _as(attrs.threshold, work)
        good = ranked < threshold if attrs.is_ascend else ranked > threshold
        row_of, col_of = order // cols, order % cols
        row_marker = xp.full((batch, rows), -1, dtype=np.int64)
        col_marker = xp.full((batch, cols), -1, dtype=np.int64)
        active = xp.ones(batch, dtype=bool)
        count = xp.zeros(batch, dtype=np.int64)
        b = xp.arange(batch)
        for _ in range(min(rows, cols)):
            # the best pair whose row and column are both free
            free = xp.take_along_axis(row_marker < 0, row_of, axis=1) & \
                xp.take_along_axis(col_marker < 0, col_of, axis=1)
            j = xp.argmax(free, axis=1)
            take = active & free[b, j] & good[b, j]
            r, c = row_of[b, j], col_of[b, j]
            row_marker[b, r] = xp.where(take, c, row_marker[b, r])
            col_marker[b, c] = xp.where(take, r, col_marker[b, c])
            count += take
            active = take if attrs.topk <= 0 else take & (count <= attrs.topk)
            if not bool(active.any()):
                break
        return (row_marker.reshape(shape[:-1]).astype(data.dtype),
                col_marker.reshape(shape[:-2] + (cols,)).astype(data.dtype))

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None, None]
        if len(data) < 2:
            raise ShapeError(f'data must be a score matrix (..., rows, columns), got '
                             f'{tuple(data)}')
        return [data], [tuple(data[:-1]), tuple(data[:-2]) + (data[-1],)]

    def infer_type(attrs, data):
        return [data], [data, data]


# -------------------------------------------------------------------------------------------------
# Proposal, MultiProposal
# -------------------------------------------------------------------------------------------------

_PROPOSAL_ATTRS = dict(rpn_pre_nms_top_n=Int(6000), rpn_post_nms_top_n=Int(300),
                       threshold=Float(0.7), rpn_min_size=Int(16),
                       scales=FloatTuple((4.0, 8.0, 16.0, 32.0)),
                       ratios=FloatTuple((0.5, 1.0, 2.0)), feature_stride=Int(16),
                       output_score=Bool(False), iou_loss=Bool(False))


def _proposal_check(attrs):
    if not attrs.scales or not attrs.ratios:
        raise ValueError(f'scales {attrs.scales} and ratios {attrs.ratios} must not be empty')
    if attrs.feature_stride < 1:
        raise ValueError(f'feature_stride must be positive, got {attrs.feature_stride}')
    if attrs.rpn_post_nms_top_n < 1:
        raise ValueError(f'rpn_post_nms_top_n must be positive, got {attrs.rpn_post_nms_top_n}')


def _rpn_anchors(attrs):
    """(A, 4) anchors centred on the first cell: for each ratio, each scale (MXNet's
    GenerateAnchors, in float32)."""
    f = np.float32
    side = f(attrs.feature_stride)       # the base anchor [0, 0, stride - 1, stride - 1]
    center = f(0.5) * (side - f(1))
    out = []
    for ratio in attrs.ratios:
        for scale in attrs.scales:
            ratio, scale = f(ratio), f(scale)
            width = np.floor(np.sqrt(np.floor(side * side / ratio)) + f(0.5)) * scale
            height = np.floor(width / scale * ratio + f(0.5)) * scale
            out.append([center - f(0.5) * (width - f(1)), center - f(0.5) * (height - f(1)),
                        center + f(0.5) * (width - f(1)), center + f(0.5) * (height - f(1))])
    return np.array(out, dtype=f)


def _rpn_boxes(xp, attrs, deltas, anchors, im_info, work):
    """The anchors moved by ``deltas`` (B, H, W, A, 4) and clipped to the image: (B, H, W, A,
    4) corner boxes (pixel coordinates, ends included)."""
    one = work.type(1)
    x1, y1, x2, y2 = (anchors[..., i] for i in range(4))
    if attrs.iou_loss:
        boxes = [x1 + deltas[..., 0], y1 + deltas[..., 1], x2 + deltas[..., 2],
                 y2 + deltas[..., 3]]
    else:
        width, height = x2 - x1 + one, y2 - y1 + one
        cx, cy = x1 + work.type(0.5) * (width - one), y1 + work.type(0.5) * (height - one)
        cx = deltas[..., 0] * width + cx
        cy = deltas[..., 1] * height + cy
        half_w = work.type(0.5) * (_exp(xp, deltas[..., 2]) * width - one)
        half_h = work.type(0.5) * (_exp(xp, deltas[..., 3]) * height - one)
        boxes = [cx - half_w, cy - half_h, cx + half_w, cy + half_h]
    limits = [im_info[:, 1], im_info[:, 0]] * 2           # width, height, width, height
    return xp.stack([xp.maximum(xp.minimum(b, (lim - one)[:, None, None, None]), 0)
                     for b, lim in zip(boxes, limits)], axis=-1)


def _rpn_nms(xp, dets, threshold, post):
    """Greedy NMS of ranked boxes (B, K, 4) with the pixel IoU (ends included), stopping at
    ``post`` kept boxes: the (B, K) mask of kept boxes. (A loop over ranks on slices, not
    contrib's ``_greedy_nms``: it stops a few hundred ranks in, where that one's gathering of
    the candidates left costs two to four times more.)"""
    one = dets.dtype.type(1)
    x1, y1, x2, y2 = (dets[..., i] for i in range(4))
    area = (x2 - x1 + one) * (y2 - y1 + one)
    batch, num = area.shape
    suppressed = xp.zeros((batch, num), dtype=bool)
    kept = xp.zeros((batch, num), dtype=bool)
    count = xp.zeros(batch, dtype=np.int64)
    for r in range(num):
        take = ~suppressed[:, r] & (count < post)
        if not bool(take.any()):
            if bool((count >= post).all()):
                break
            continue
        kept[:, r] = take
        count += take
        s = slice(r + 1, None)
        w = xp.maximum(xp.minimum(x2[:, r:r + 1], x2[:, s]) -
                       xp.maximum(x1[:, r:r + 1], x1[:, s]) + one, 0)
        h = xp.maximum(xp.minimum(y2[:, r:r + 1], y2[:, s]) -
                       xp.maximum(y1[:, r:r + 1], y1[:, s]) + one, 0)
        inter = w * h
        overlap = inter / (area[:, r:r + 1] + area[:, s] - inter) > threshold
        suppressed[:, s] |= overlap & take[:, None]
    return kept


def _proposals(xp, attrs, cls_prob, bbox_pred, im_info, name):
    """RPN proposals of every image: rois (B, post, 5) ``[batch index, x1, y1, x2, y2]`` and
    scores (B, post, 1), in the input's dtype."""
    dtype = cls_prob.dtype
    work = _work_dtype(dtype)
    batch, channels, height, width = cls_prob.shape
    num_anchors = channels // 2
    stride = attrs.feature_stride
    im_info = im_info.astype(work, copy=False)
    # every anchor at every cell, ordered (h, w, a)
    shift = xp.stack(xp.broadcast_arrays(xp.arange(width)[None, :], xp.arange(height)[:, None],
                                         xp.arange(width)[None, :], xp.arange(height)[:, None]),
                     axis=-1) * stride
    anchors = xp.asarray(_rpn_anchors(attrs), dtype=work) + shift[:, :, None, :].astype(work)
    score = cls_prob[:, num_anchors:].astype(work).transpose(0, 2, 3, 1)      # (B, H, W, A)
    deltas = bbox_pred.astype(work).reshape(batch, num_anchors, 4, height, width)
    boxes = _rpn_boxes(xp, attrs, deltas.transpose(0, 3, 4, 1, 2), anchors[None], im_info, work)
    # cells beyond the image (padding) get score -1
    real_h = (im_info[:, 0] / work.type(stride)).astype(np.int64)
    real_w = (im_info[:, 1] / work.type(stride)).astype(np.int64)
    if bool((real_h > height).any()) or bool((real_w > width).any()):
        raise MXNetError(f'{name}: im_info {im_info.tolist()} describes images '
                         f'larger than the {height}x{width} feature map at feature_stride '
                         f'{stride}')
    padding = (xp.arange(height)[None, :, None] >= real_h[:, None, None]) | \
        (xp.arange(width)[None, None, :] >= real_w[:, None, None])
    score = xp.where(padding[..., None], work.type(-1), score)
    # boxes smaller than rpn_min_size (in image pixels) grow by it and get score -1
    min_size = (attrs.rpn_min_size * im_info[:, 2])[:, None, None, None]
    small = (boxes[..., 2] - boxes[..., 0] + 1 < min_size) | \
        (boxes[..., 3] - boxes[..., 1] + 1 < min_size)
    grow = xp.where(small, min_size / 2, 0)[..., None] * xp.asarray([-1, -1, 1, 1], dtype=work)
    boxes = (boxes + grow).reshape(batch, -1, 4)
    score = xp.where(small, work.type(-1), score).reshape(batch, -1)
    count = score.shape[1]
    pre = min(attrs.rpn_pre_nms_top_n if attrs.rpn_pre_nms_top_n > 0 else count, count)
    post = min(attrs.rpn_post_nms_top_n, pre)
    order = _stable_order(xp, -score)[:, :pre]
    dets = xp.take_along_axis(boxes, order[..., None], axis=1)
    score = xp.take_along_axis(score, order, axis=1)
    kept = _rpn_nms(xp, dets, _as(attrs.threshold, work), post)
    # the kept boxes in rank order, repeated cyclically to fill the output
    keep = _stable_order(xp, ~kept)
    n_kept = kept.sum(axis=1)
    rows = xp.arange(attrs.rpn_post_nms_top_n)[None, :] % xp.maximum(n_kept, 1)[:, None]
    pick = xp.take_along_axis(keep, rows, axis=1)
    index = xp.broadcast_to(xp.arange(batch, dtype=work)[:, None, None], pick.shape + (1,))
    rois = xp.concatenate([index, xp.take_along_axis(dets, pick[..., None], axis=1)], axis=-1)
    scores = xp.take_along_axis(score, pick, axis=1)[..., None]
    return rois.astype(dtype), scores.astype(dtype)


def _proposal_infer(attrs, cls_prob, bbox_pred, im_info, single):
    name = '_contrib_Proposal' if single else '_contrib_MultiProposal'
    num_anchors = len(attrs.scales) * len(attrs.ratios)
    for shape, what in ((cls_prob, 'cls_prob'), (bbox_pred, 'bbox_pred')):
        _check_rank(shape, 4, f'{what} (batch, channels, height, width)')
    _check_rank(im_info, 2, 'im_info (batch, 3)')
    batch = _dim(cls_prob, 0) or _dim(bbox_pred, 0) or _dim(im_info, 0)
    height, width = _dim(cls_prob, 2) or _dim(bbox_pred, 2), _dim(cls_prob, 3) or \
        _dim(bbox_pred, 3)
    what = (f'{num_anchors} anchors per cell ({len(attrs.scales)} scales x '
            f'{len(attrs.ratios)} ratios)')
    cls_prob = merge_shape(cls_prob, (batch, 2 * num_anchors, height, width),
                           f'{name}: cls_prob (batch, 2 x {what}, height, width)')
    bbox_pred = merge_shape(bbox_pred, (batch, 4 * num_anchors, height, width),
                            f'{name}: bbox_pred (batch, 4 x {what}, height, width)')
    im_info = merge_shape(im_info, (batch, 3), f'{name}: im_info (batch, 3)')
    if single and batch > 1:
        raise ShapeError(f'{name} takes one image (batch 1), got batch {batch}: use '
                         '_contrib_MultiProposal')
    rows = attrs.rpn_post_nms_top_n * (1 if single else batch)
    return [cls_prob, bbox_pred, im_info], [(rows, 5), (rows, 1)]


def _proposal_op(name, single):
    """Proposal and MultiProposal: one definition, the batch rule aside."""
    def compute(xp, attrs, cls_prob, bbox_pred, im_info):
        rois, scores = _proposals(xp, attrs, cls_prob, bbox_pred, im_info, name)
        return rois.reshape(-1, 5), scores.reshape(-1, 1)

    def infer_shape(attrs, cls_prob, bbox_pred, im_info):
        return _proposal_infer(attrs, cls_prob, bbox_pred, im_info, single)

    return register(name, inputs=('cls_prob', 'bbox_pred', 'im_info'), attrs=_PROPOSAL_ATTRS,
                    check=_proposal_check, num_outputs=2,
                    num_visible_outputs=lambda attrs: 2 if attrs.output_score else 1,
                    output_names=lambda attrs: ['output', 'score'], compute=compute,
                    infer_shape=infer_shape, infer_type=_same_dtypes, gradient=_no_gradient)


@_proposal_op('_contrib_Proposal', single=True)
class Proposal:
    """Region proposals of an RPN for one image (batch 1).

    ``cls_prob`` (1, 2A, H, W) background then object scores of A = len(scales) *
    len(ratios) anchors per cell, ``bbox_pred`` (1, 4A, H, W) box deltas, ``im_info`` (1, 3)
    ``[height, width, scale]`` -> rois (rpn_post_nms_top_n, 5) ``[0, x1, y1, x2, y2]`` and,
    with ``output_score``, their scores (rpn_post_nms_top_n, 1).

    Anchors of size ``scale * feature_stride`` per ratio (each ratio, then each scale) at
    every cell move by the deltas (``dx * w``, ``dy * h`` on the centre, ``exp(dw) * w``,
    ``exp(dh) * h``; or added to the corners with ``iou_loss``) and are clipped to the image;
    boxes on padding cells or smaller than ``rpn_min_size * scale`` get score -1. The
    ``rpn_pre_nms_top_n`` best (all for <= 0) go through greedy NMS (IoU > ``threshold``
    suppresses) until ``rpn_post_nms_top_n`` are kept, which fill the output cyclically.
    No gradient (MXNet writes zeros).
    """


@_proposal_op('_contrib_MultiProposal', single=False)
class MultiProposal:
    """Region proposals of an RPN for a batch: Proposal per image.

    ``cls_prob`` (B, 2A, H, W), ``bbox_pred`` (B, 4A, H, W), ``im_info`` (B, 3) -> rois
    (B * rpn_post_nms_top_n, 5) ``[image index, x1, y1, x2, y2]`` and, with
    ``output_score``, scores (B * rpn_post_nms_top_n, 1). No gradient (MXNet writes zeros).
    """


# -------------------------------------------------------------------------------------------------
# Bilinear sampling
# -------------------------------------------------------------------------------------------------

def _axis_taps(xp, y, size, rule):
    """The two neighbours of coordinates ``y`` along an axis of ``size`` pixels: (low index,
    high index, fraction toward high, d(fraction)/dy, low inside, high inside).

    Rules (MXNet's kernels): 'deformable' (DeformableConvolution: low clamped to the last
    pixel, with fraction 0 there), 'modulated' (ModulatedDeformableConvolution: neighbours
    outside the image read 0), 'psroi' (DeformablePSROIPooling: the coordinate clamped into
    the image, neighbours floor and ceil), 'rroi' (RROIAlign: negative coordinates read as 0,
    then as 'deformable').
    """
    if rule == 'psroi':
        y = xp.clip(y, 0, size - 1)
        low, high = xp.floor(y), xp.ceil(y)
        return low, high, y - low, 1, True, True
    if rule == 'rroi':
        y = xp.maximum(y, 0)
    low = xp.floor(y)
    if rule == 'modulated':
        return low, low + 1, y - low, 1, low >= 0, low + 1 <= size - 1
    last = low >= size - 1
    low = xp.where(last, size - 1, low)
    return (low, xp.where(last, low, low + 1), xp.where(last, 0, y - low),
            xp.where(last, 0, 1), True, True)


def _taps(xp, y, x, height, width, rule, valid):
    """Bilinear interpolation at (y, x) in a (height, width) image as four taps: flat pixel
    indices (4, ...), weights (4, ...) (0 for invalid points and pixels outside), and the
    weights' derivatives along y and x (4, ...). Taps are ordered (low y, low x), (low y,
    high x), (high y, low x), (high y, high x)."""
    y0, y1, fy, dfy, in_y0, in_y1 = _axis_taps(xp, y, height, rule)
    x0, x1, fx, dfx, in_x0, in_x1 = _axis_taps(xp, x, width, rule)
    gy, gx = 1 - fy, 1 - fx
    inside = [valid & in_y0 & in_x0, valid & in_y0 & in_x1, valid & in_y1 & in_x0,
              valid & in_y1 & in_x1]
    weights = [gy * gx, gy * fx, fy * gx, fy * fx]
    d_y = [-gx * dfy, -fx * dfy, gx * dfy, fx * dfy]
    d_x = [-gy * dfx, gy * dfx, -fy * dfx, fy * dfx]
    index = []
    for yy, xx in ((y0, x0), (y0, x1), (y1, x0), (y1, x1)):
        index.append(xp.clip(yy, 0, height - 1).astype(np.int64) * width +
                     xp.clip(xx, 0, width - 1).astype(np.int64))
    return (xp.stack(index), xp.where(xp.stack(inside), xp.stack(weights), 0),
            xp.where(xp.stack(inside), xp.stack(d_y), 0),
            xp.where(xp.stack(inside), xp.stack(d_x), 0))


# -------------------------------------------------------------------------------------------------
# PSROIPooling
# -------------------------------------------------------------------------------------------------

def _roi_check(attrs):
    for key in ('output_dim', 'pooled_size'):
        if attrs[key] < 1:
            raise ValueError(f'{key} must be positive, got {attrs[key]}')
    if attrs.group_size < 0:
        raise ValueError(f'group_size must be >= 0, got {attrs.group_size}')
    if attrs.get('sample_per_part', 1) < 1:
        raise ValueError(f'sample_per_part must be positive, got {attrs.sample_per_part}')
    if attrs.get('part_size', 0) < 0:
        raise ValueError(f'part_size must be >= 0, got {attrs.part_size}')


def _group_size(attrs):
    return attrs.group_size or attrs.pooled_size


def _position_channels(xp, attrs, group):
    """The input channel of each (output channel, bin row, bin column): (O, P, P)."""
    size = attrs.pooled_size
    cell = xp.clip(xp.arange(size) * group // size, 0, group - 1)
    ct = xp.arange(attrs.output_dim)
    return (ct[:, None, None] * group + cell[None, :, None]) * group + cell[None, None, :]


def _roi_shapes(data, rois, name, attrs=None, group=None, rois_width=5):
    """(data, rois) shapes: 4-D data with enough channels for ``group`` (when given), ``rois``
    (R, rois_width)."""
    _check_rank(data, 4, 'data (batch, channels, height, width)')
    _check_rank(rois, 2, f'rois (num_rois, {rois_width})')
    if group:
        _check_channels(data, attrs, group, name)
    if rois is not None:
        rois = merge_shape(rois, (rois[0], rois_width), f'{name}: rois (num_rois, {rois_width})')
    return data, rois


def _psroi_bins(xp, attrs, rois, height, width, work):
    """Per roi and (output channel, bin): the image, the input channel and the bin's pixel
    range [h0, h1) x [w0, w1), each (R, O, P, P)."""
    scale = _as(attrs.spatial_scale, work)
    size = attrs.pooled_size
    rois = rois.astype(work, copy=False)
    corner = _round_half_away(xp, rois[:, 1:5])
    start_w, start_h = corner[:, 0] * scale, corner[:, 1] * scale
    end_w, end_h = (corner[:, 2] + 1) * scale, (corner[:, 3] + 1) * scale
    bin_w = xp.maximum(end_w - start_w, work.type(0.1)) / work.type(size)
    bin_h = xp.maximum(end_h - start_h, work.type(0.1)) / work.type(size)
    p = xp.arange(size, dtype=work)
    h0 = xp.floor(p[None, :] * bin_h[:, None] + start_h[:, None])
    h1 = xp.ceil((p[None, :] + 1) * bin_h[:, None] + start_h[:, None])
    w0 = xp.floor(p[None, :] * bin_w[:, None] + start_w[:, None])
    w1 = xp.ceil((p[None, :] + 1) * bin_w[:, None] + start_w[:, None])
    h0, h1 = (xp.clip(v, 0, height).astype(np.int64)[:, None, :, None] for v in (h0, h1))
    w0, w1 = (xp.clip(v, 0, width).astype(np.int64)[:, None, None, :] for v in (w0, w1))
    shape = (rois.shape[0], attrs.output_dim, size, size)
    image = xp.broadcast_to(rois[:, 0].astype(np.int64)[:, None, None, None], shape)
    channel = xp.broadcast_to(_position_channels(xp, attrs, _group_size(attrs))[None], shape)
    return [xp.broadcast_to(v, shape) for v in (image, channel, h0, h1, w0, w1)]


def _check_channels(data, attrs, group, name):
    """Data must hold output_dim x group^2 channels (more are ignored, as MXNet does; MXNet
    reads past fewer)."""
    needed = attrs.output_dim * group * group
    if data is not None and data[1] and data[1] < needed:
        raise ShapeError(f'{name}: data {tuple(data)} has {data[1]} channels, output_dim x '
                         f'group_size^2 = {needed} needed')


_PSROI_ATTRS = dict(spatial_scale=Float(), output_dim=Int(), pooled_size=Int(), group_size=Int(0))


@register('_contrib_PSROIPooling')
class PSROIPooling:
    """Position-sensitive ROI pooling (R-FCN): the average of each bin's pixels, from the
    channel that belongs to the bin's position.

    ``data`` (N, output_dim * G^2, H, W) (G = ``group_size``, ``pooled_size`` when 0),
    ``rois`` (R, 5) ``[image, x1, y1, x2, y2]`` in image coordinates (rounded, then scaled by
    ``spatial_scale``, the end pixel included) -> (R, output_dim, P, P), P = ``pooled_size``.
    Bin (i, j) of output channel c averages the pixels [floor(i * bin), ceil((i + 1) * bin))
    of input channel ``(c * G + i * G // P) * G + j * G // P``; an empty bin gives 0. The
    gradient reaches ``data`` (``rois``: zeros).
    """
    inputs = ('data', 'rois')
    attrs = _PSROI_ATTRS
    check = _roi_check
    infer_type = same_dtype

    def compute(xp, attrs, data, rois):
        _check_channels(data.shape, attrs, _group_size(attrs), '_contrib_PSROIPooling')
        n, c, height, width = data.shape
        image, channel, h0, h1, w0, w1 = _psroi_bins(xp, attrs, rois, height, width,
                                                     _work_dtype(data.dtype))
        # window sums from the integral image (float64)
        table = xp.zeros((n, c, height + 1, width + 1), dtype=np.float64)
        table[:, :, 1:, 1:] = data.astype(np.float64).cumsum(axis=2).cumsum(axis=3)
        total = (table[image, channel, h1, w1] - table[image, channel, h0, w1] -
                 table[image, channel, h1, w0] + table[image, channel, h0, w0])
        area = (h1 - h0) * (w1 - w0)
        out = xp.where((h1 > h0) & (w1 > w0), total / xp.maximum(area, 1), 0)
        return out.astype(data.dtype)

    def infer_shape(attrs, data, rois):
        data, rois = _roi_shapes(data, rois, '_contrib_PSROIPooling', attrs,
                                 _group_size(attrs))
        size = attrs.pooled_size
        return [data, rois], [(_dim(rois, 0), attrs.output_dim, size, size)]

    def gradient(F, attrs, inputs, outputs, ograds):
        data, rois = inputs
        return [F._backward__contrib_PSROIPooling(ograds[0], data, rois, **attrs), None]


@register('_backward__contrib_PSROIPooling')
class _backward_PSROIPooling:
    """The gradient of PSROIPooling's data: ``ograd`` (R, output_dim, P, P) spread evenly over
    each bin's pixels of ``data``'s shape (its values are not read), ``rois`` (R, 5) -> the
    shape of ``data``. Linear in ``ograd``: its own gradient is a PSROIPooling."""
    inputs = ('ograd', 'data', 'rois')
    attrs = _PSROI_ATTRS
    check = _roi_check

    def compute(xp, attrs, ograd, data, rois):
        _check_channels(data.shape, attrs, _group_size(attrs),
                        '_backward__contrib_PSROIPooling')
        n, c, height, width = data.shape
        image, channel, h0, h1, w0, w1 = _psroi_bins(xp, attrs, rois, height, width,
                                                     _work_dtype(data.dtype))
        area = (h1 - h0) * (w1 - w0)
        share = xp.where((h1 > h0) & (w1 > w0), ograd / xp.maximum(area, 1), 0)
        # each bin adds its share to a rectangle: corners of a difference table, summed up
        size = (height + 1) * (width + 1)
        base = (image * c + channel) * size
        delta = 0
        for h, w, sign in ((h0, w0, 1), (h0, w1, -1), (h1, w0, -1), (h1, w1, 1)):
            delta = delta + _scatter_add(xp, base + h * (width + 1) + w, sign * share,
                                         n * c * size)
        delta = delta.reshape(n, c, height + 1, width + 1)
        grad = delta.cumsum(axis=2).cumsum(axis=3)[:, :, :height, :width]
        return grad.astype(data.dtype)

    def infer_shape(attrs, ograd, data, rois):
        size = attrs.pooled_size
        _check_rank(ograd, 4, f'ograd (num_rois, {attrs.output_dim}, {size}, {size})')
        data, rois = _roi_shapes(data, rois, '_backward__contrib_PSROIPooling', attrs,
                                 _group_size(attrs))
        num = _dim(rois, 0) or _dim(ograd, 0)
        ograd = merge_shape(ograd, (num, attrs.output_dim, size, size), 'ograd')
        rois = merge_shape(rois, (num, 5), 'rois')
        return [ograd, data, rois], [data]

    def infer_type(attrs, ograd, data, rois):
        return [ograd, data, rois], [data or ograd]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._contrib_PSROIPooling(ograds[0], inputs[2], **attrs), None, None]


# -------------------------------------------------------------------------------------------------
# DeformablePSROIPooling
# -------------------------------------------------------------------------------------------------

_DPSROI_ATTRS = dict(spatial_scale=Float(), output_dim=Int(), group_size=Int(), pooled_size=Int(),
                     part_size=Int(0), sample_per_part=Int(1), trans_std=Float(0.0),
                     no_trans=Bool(False))


def _dpsroi_inputs(attrs):
    return ('data', 'rois') if attrs.no_trans else ('data', 'rois', 'trans')


def _dpsroi_check(attrs):
    _roi_check(attrs)
    if attrs.group_size < 1:
        raise ValueError(f'group_size must be positive, got {attrs.group_size}')


def _dpsroi_classes(attrs, trans_channels):
    """(classes, output channels per class): the offsets are shared by the output channels of
    a class."""
    if attrs.no_trans:
        return 1, attrs.output_dim
    classes = trans_channels // 2
    if trans_channels % 2 or not classes or attrs.output_dim % classes:
        raise ShapeError(f'trans has {trans_channels} channels: 2 (x, y) per class, for a '
                         f'number of classes that divides output_dim {attrs.output_dim}')
    return classes, attrs.output_dim // classes


class _DPSROISamples:
    """The sampling points of DeformablePSROIPooling: per (roi, output channel, bin, sample)
    their taps into the flat data (``index``, ``weight``, ``d_x``: 4 x (R, O, P, P, S, S)), the
    number of valid samples per bin ``count`` (R, O, P, P), and what the offsets' gradient
    needs (``classes``, ``part``: each bin's part cell, ``roi_w``, ``roi_h``)."""

    def __init__(self, xp, attrs, data_shape, rois, trans, work):
        n, c, height, width = data_shape
        size, samples = attrs.pooled_size, attrs.sample_per_part
        part = attrs.part_size or size
        self.classes, per_class = _dpsroi_classes(attrs, 0 if trans is None else trans.shape[1])
        scale, half = _as(attrs.spatial_scale, work), work.type(0.5)
        rois = rois.astype(work, copy=False)
        corner = _round_half_away(xp, rois[:, 1:5])
        start_w, start_h = corner[:, 0] * scale - half, corner[:, 1] * scale - half
        end_w, end_h = (corner[:, 2] + 1) * scale - half, (corner[:, 3] + 1) * scale - half
        roi_w = xp.maximum(end_w - start_w, work.type(0.1))[:, None, None, None]
        roi_h = xp.maximum(end_h - start_h, work.type(0.1))[:, None, None, None]
        bin_w, bin_h = roi_w / work.type(size), roi_h / work.type(size)
        p = xp.arange(size, dtype=work)
        self.part = xp.floor(p / work.type(size) * work.type(part)).astype(np.int64)
        self.cls = xp.arange(attrs.output_dim) // per_class
        w0 = p[None, None, None, :] * bin_w + start_w[:, None, None, None]
        h0 = p[None, None, :, None] * bin_h + start_h[:, None, None, None]
        if not attrs.no_trans:
            shift = trans.astype(work, copy=False).reshape(-1, self.classes, 2, part, part)
            shift = shift[:, self.cls][..., self.part[:, None], self.part[None, :]]
            w0 = w0 + shift[:, :, 0] * _as(attrs.trans_std, work) * roi_w
            h0 = h0 + shift[:, :, 1] * _as(attrs.trans_std, work) * roi_h
        s = xp.arange(samples, dtype=work)
        x = w0[..., None, None] + s * (bin_w / work.type(samples))[..., None, None]
        y = h0[..., None, None] + s[:, None] * (bin_h / work.type(samples))[..., None, None]
        shape = (rois.shape[0], attrs.output_dim, size, size, samples, samples)
        x, y = xp.broadcast_to(x, shape), xp.broadcast_to(y, shape)
        valid = (x >= -0.5) & (x <= width - 0.5) & (y >= -0.5) & (y <= height - 0.5)
        index, self.weight, self.d_y, self.d_x = _taps(xp, y, x, height, width, 'psroi', valid)
        image = rois[:, 0].astype(np.int64)[:, None, None, None]
        channel = _position_channels(xp, attrs, attrs.group_size)[None]
        self.index = index + ((image * c + channel) * (height * width))[..., None, None]
        self.count = valid.sum(axis=(-2, -1))
        self.roi_w, self.roi_h = roi_w, roi_h

    def values(self, flat):
        """The data's value at every tap: 4 x (R, O, P, P, S, S)."""
        return [flat[i] for i in self.index]


def _dpsroi_infer(attrs, data, rois, trans=None, name='_contrib_DeformablePSROIPooling'):
    data, rois = _roi_shapes(data, rois, name, attrs, attrs.group_size)
    part = attrs.part_size or attrs.pooled_size
    num = _dim(rois, 0)
    if not attrs.no_trans:
        _check_rank(trans, 4, f'trans (num_rois, 2 x classes, {part}, {part})')
        num = num or _dim(trans, 0)
        trans = merge_shape(trans, (num, _dim(trans, 1), part, part),
                            f'{name}: trans (num_rois, 2 x classes, {part}, {part})')
        if trans[1]:
            _dpsroi_classes(attrs, trans[1])
        rois = merge_shape(rois, (num, 5), f'{name}: rois (num_rois, 5)')
    ins = [data, rois] if attrs.no_trans else [data, rois, trans]
    size = attrs.pooled_size
    return ins, (num, attrs.output_dim, size, size)


@register('_contrib_DeformablePSROIPooling')
class DeformablePSROIPooling:
    """Deformable position-sensitive ROI pooling (Deformable ConvNets): PSROIPooling whose
    bins move by learnt offsets and average bilinear samples.

    ``data`` (N, C >= output_dim * G^2, H, W) (G = ``group_size``), ``rois`` (R, 5) ``[image,
    x1, y1, x2, y2]`` (rounded, scaled by ``spatial_scale``, shifted by -0.5), ``trans`` (R,
    2 * classes, part, part) (part = ``part_size``, ``pooled_size`` when 0; absent with
    ``no_trans``) -> (R, output_dim, P, P). Bin (i, j) of output channel c moves by
    ``trans[r, 2k:2k + 2, part_i, part_j] * trans_std * roi size`` (k = c's class: output
    channels are split evenly among the classes), and averages ``sample_per_part``^2
    bilinear samples of input channel ``(c * G + i * G // P) * G + j * G // P`` lying in
    [-0.5, size - 0.5] (0 with none). A hidden second output counts the samples. Gradients
    reach ``data`` and ``trans`` (MXNet's formulas); ``rois``: zeros.
    """
    inputs = ('data', 'rois', 'trans')
    list_inputs = _dpsroi_inputs
    attrs = _DPSROI_ATTRS
    check = _dpsroi_check
    num_outputs = 2
    num_visible_outputs = 1
    infer_type = _same_dtypes

    def output_names(attrs):
        return ['output', 'top_count']

    def compute(xp, attrs, data, rois, trans=None):
        work = _work_dtype(data.dtype)
        _check_channels(data.shape, attrs, attrs.group_size,
                        '_contrib_DeformablePSROIPooling')
        points = _DPSROISamples(xp, attrs, data.shape, rois, trans, work)
        flat = data.astype(work, copy=False).reshape(-1)
        total = 0
        for weight, value in zip(points.weight, points.values(flat)):
            total = total + weight * value
        count = points.count
        out = xp.where(count > 0, total.sum(axis=(-2, -1)) / xp.maximum(count, 1), 0)
        return out.astype(data.dtype), count.astype(data.dtype)

    def infer_shape(attrs, data, rois, trans=None):
        ins, out = _dpsroi_infer(attrs, data, rois, trans)
        return ins, [out, out]

    def gradient(F, attrs, inputs, outputs, ograds):
        if ograds[0] is None:
            return [None] * len(inputs)
        grads = F._backward__contrib_DeformablePSROIPooling(ograds[0], *inputs, **attrs)
        if attrs.no_trans:
            return [grads, None]
        return [grads[0], None, grads[1]]


def _dpsroi_backward_inputs(attrs):
    return ('ograd',) + _dpsroi_inputs(attrs)


@register('_backward__contrib_DeformablePSROIPooling')
class _backward_DeformablePSROIPooling:
    """The gradients of DeformablePSROIPooling: ``ograd`` (R, output_dim, P, P), ``data``,
    ``rois`` and ``trans`` as its inputs -> the gradients of ``data`` and (unless
    ``no_trans``) ``trans``, MXNet's formulas: each bin's gradient shared among its valid
    samples and spread bilinearly into ``data``; a sample's bilinear slope times
    ``trans_std * roi size`` into its offsets."""
    inputs = ('ograd', 'data', 'rois', 'trans')
    list_inputs = _dpsroi_backward_inputs
    attrs = _DPSROI_ATTRS
    check = _dpsroi_check
    gradient = not_differentiable_twice('_backward__contrib_DeformablePSROIPooling')

    def num_outputs(attrs):
        return 1 if attrs.no_trans else 2

    def compute(xp, attrs, ograd, data, rois, trans=None):
        work = _work_dtype(data.dtype)
        points = _DPSROISamples(xp, attrs, data.shape, rois, trans, work)
        share = xp.where(points.count > 0, ograd / xp.maximum(points.count, 1), 0)[..., None, None]
        grad = 0
        for index, weight in zip(points.index, points.weight):
            grad = grad + _scatter_add(xp, index, weight * share, data.size)
        grad = grad.reshape(data.shape).astype(data.dtype)
        if attrs.no_trans:
            return grad
        flat = data.astype(work, copy=False).reshape(-1)
        values = points.values(flat)
        slope_x = sum(d * v for d, v in zip(points.d_x, values))
        slope_y = sum(d * v for d, v in zip(points.d_y, values))
        std = _as(attrs.trans_std, work)
        d_x = (slope_x * share).sum(axis=(-2, -1)) * std * points.roi_w
        d_y = (slope_y * share).sum(axis=(-2, -1)) * std * points.roi_h
        # into trans (R, classes, 2, part, part)
        num, part = trans.shape[0], trans.shape[-1]
        r = xp.arange(num)[:, None, None, None]
        cell = points.cls[None, :, None, None] * 2 * part * part + \
            points.part[None, None, :, None] * part + points.part[None, None, None, :]
        index = r * trans[0].size + cell
        d_trans = _scatter_add(xp, index, d_x, trans.size) + \
            _scatter_add(xp, index + part * part, d_y, trans.size)
        return grad, d_trans.reshape(trans.shape).astype(trans.dtype)

    def infer_shape(attrs, ograd, data, rois, trans=None):
        ins, out = _dpsroi_infer(attrs, data, rois, trans,
                                 '_backward__contrib_DeformablePSROIPooling')
        _check_rank(ograd, 4, 'ograd (num_rois, output_dim, pooled_size, pooled_size)')
        ograd = merge_shape(ograd, out, 'ograd (num_rois, output_dim, pooled_size, pooled_size)')
        return [ograd] + ins, [ins[0]] + ([] if attrs.no_trans else [ins[2]])

    def infer_type(attrs, *dtypes):
        ins, outs = same_dtype(attrs, *dtypes)
        return ins, outs * (1 if attrs.no_trans else 2)


# -------------------------------------------------------------------------------------------------
# RROIAlign
# -------------------------------------------------------------------------------------------------

def _pooled_size_check(attrs):
    if len(attrs.pooled_size) != 2 or min(attrs.pooled_size) < 1:
        raise ValueError(f'pooled_size must be 2 positive sizes (height, width), got '
                         f'{attrs.pooled_size}')


@register('_contrib_RROIAlign')
class RROIAlign:
    """ROIAlign over rotated boxes (text detection): the average of bilinear samples on a
    grid in each bin of the rotated box.

    ``data`` (N, C, H, W), ``rois`` (R, 6) ``[image, center x, center y, width, height,
    angle in degrees]`` (scaled by ``spatial_scale``; sizes at least 1) -> (R, C, PH, PW),
    ``pooled_size`` = (PH, PW). Each bin averages a grid of ``sampling_ratio``^2 samples
    (``ceil(roi size / pooled size)`` per axis when <= 0), rotated by the angle about the
    box's centre; samples beyond the image border by more than one pixel count as 0. Not
    differentiable (MXNet's backward raises).
    """
    inputs = ('data', 'rois')
    attrs = dict(pooled_size=Shape(), spatial_scale=Float(), sampling_ratio=Int(-1))
    check = _pooled_size_check
    gradient = _non_differentiable('_contrib_RROIAlign')

    def compute(xp, attrs, data, rois):
        work = _work_dtype(data.dtype)
        n, c, height, width = data.shape
        (out_h, out_w), num = attrs.pooled_size, rois.shape[0]
        if not num:
            return xp.zeros((0, c, out_h, out_w), dtype=data.dtype)
        r = rois.astype(work, copy=False)
        scale = _as(attrs.spatial_scale, work)
        cx, cy = r[:, 1] * scale, r[:, 2] * scale
        roi_w = xp.maximum(r[:, 3] * scale, work.type(1))
        roi_h = xp.maximum(r[:, 4] * scale, work.type(1))
        theta = (r[:, 5].astype(np.float64) * math.pi / 180.0).astype(work)
        cos = xp.cos(theta.astype(np.float64)).astype(work)
        sin = xp.sin(theta.astype(np.float64)).astype(work)
        bin_h, bin_w = roi_h / work.type(out_h), roi_w / work.type(out_w)
        if attrs.sampling_ratio > 0:
            grid_h = grid_w = xp.full(num, attrs.sampling_ratio, dtype=np.int64)
        else:
            grid_h = xp.ceil(roi_h / work.type(out_h)).astype(np.int64)
            grid_w = xp.ceil(roi_w / work.type(out_w)).astype(np.int64)

        def offsets(start, size, bins, grid, upper):
            # (R, bins, G): start + bin * size + (g + .5) * size / grid
            g = xp.arange(upper, dtype=work)
            b = xp.arange(bins, dtype=work)
            return (start[:, None, None] + b[None, :, None] * size[:, None, None] +
                    (g + work.type(0.5))[None, None, :] * size[:, None, None] /
                    grid.astype(work)[:, None, None])

        upper_h, upper_w = int(grid_h.max()), int(grid_w.max())
        yy = offsets(-roi_h / work.type(2), bin_h, out_h, grid_h, upper_h)[:, :, None, :, None]
        xx = offsets(-roi_w / work.type(2), bin_w, out_w, grid_w, upper_w)[:, None, :, None, :]
        cos, sin = cos[:, None, None, None, None], sin[:, None, None, None, None]
        x = xx * cos + yy * sin + cx[:, None, None, None, None]
        y = yy * cos - xx * sin + cy[:, None, None, None, None]
        in_grid = (xp.arange(upper_h)[None, :, None] < grid_h[:, None, None])[:, None, None] & \
            (xp.arange(upper_w)[None, None, :] < grid_w[:, None, None])[:, None, None]
        valid = in_grid & (y >= -1) & (y <= height) & (x >= -1) & (x <= width)
        index, weight, _, _ = _taps(xp, y, x, height, width, 'rroi', valid)
        images = data.astype(work, copy=False).reshape(n, c, height * width)
        image = r[:, 0].astype(np.int64)[:, None, None, None, None]
        total = 0
        for i, w in zip(index, weight):
            # (R, PH, PW, GH, GW, C), summed over the grid
            total = total + (w[..., None] * images[image, :, i]).sum(axis=(3, 4))
        out = total / (grid_h * grid_w).astype(work)[:, None, None, None]
        return out.transpose(0, 3, 1, 2).astype(data.dtype)

    def infer_shape(attrs, data, rois):
        data, rois = _roi_shapes(data, rois, '_contrib_RROIAlign', rois_width=6)
        return [data, rois], [(_dim(rois, 0), _dim(data, 1)) + tuple(attrs.pooled_size)]
