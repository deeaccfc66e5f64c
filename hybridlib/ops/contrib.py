"""Detection operators: SSD's MultiBox family and the box utilities.

``_contrib_MultiBoxPrior`` (anchor boxes of a feature map), ``_contrib_MultiBoxTarget``
(training targets: anchor/ground-truth matching, box encoding, hard negative mining),
``_contrib_MultiBoxDetection`` (box decoding, score threshold, per-class NMS),
``_contrib_box_nms`` (alias ``_contrib_box_non_maximum_suppression``), ``_contrib_box_iou``,
and ``_backward_contrib_box_nms`` (box_nms's gradient: the output rows' gradients routed back
to the input rows they were copied from).

Everything follows MXNet 1.9.1's CPU kernels, quirks included (checked against MXNet):

* Boxes are ``[xmin, ymin, xmax, ymax]`` in [0, 1] image coordinates.
* MultiBoxPrior, MultiBoxTarget and MultiBoxDetection have no gradient (MXNet writes zeros);
  box_nms passes the output rows' gradients to the kept input rows, box_iou has none.
* MultiBoxTarget: an image whose first label row has class -1 has no ground truth, and all its
  anchors get ``ignore_label`` (not background). ``minimum_negative_samples`` is accepted and
  ignored, as MXNet's CPU kernel ignores it.
* MultiBoxDetection: class 0 is the background whatever ``background_id`` says (MXNet's
  kernel ignores the attribute too); with ``nms_topk`` the rows past the top k keep the
  unsorted candidates with id -1, as MXNet leaves them.
* MXNet runs the MultiBox operators in float32 only; here float64 (and float16) inputs work
  too: float64 computes in float64, the rest in float32. Float32 follows MXNet's order of
  float operations, so the matching decisions are MXNet's.

Non-maximum suppression is greedy and sequential by nature (a box is kept when no kept box
ranked above it overlaps it), so it loops over the boxes kept, image by image, each step
vectorised over the candidates still left below.
"""
import numpy as np

from ..base import MXNetError, ShapeError
from .attrs import Bool, Float, FloatTuple, Int, Str
from .registry import merge_shape, register

__all__ = []


def _work_dtype(dtype):
    """The dtype of the arithmetic: float64 stays float64, everything else is float32."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def _exp(xp, x):
    """exp rounded from float64: what C's expf gives (numpy's float32 exp can be 1 ulp off)."""
    return xp.exp(x.astype(np.float64)).astype(x.dtype, copy=False)


def _log(xp, x):
    """log rounded from float64, as C's logf."""
    return xp.log(x.astype(np.float64)).astype(x.dtype, copy=False)


def _no_gradient(F, attrs, inputs, outputs, ograds):
    # MXNet's backward of these operators writes zeros into every input gradient
    return [None] * len(inputs)


def _dim(shape, i):
    """Dimension ``i`` of a partial shape (0 when unknown)."""
    return 0 if shape is None else shape[i]


def _check_rank(shape, ndim, what):
    if shape is not None and len(shape) != ndim:
        raise ShapeError(f'{what} must have {ndim} axes, got {tuple(shape)}')


def _stable_order(xp, key):
    """Stable ascending argsort along the last axis (ties keep their index order)."""
    if key.dtype == bool:
        key = key.astype(np.int8)
    return xp.argsort(key, axis=-1, kind='stable')


def _stable_top(xp, key, k):
    """The first k of ``_stable_order(key)`` for (B, N) keys: where k is below N, only the
    keys up to each row's k-th smallest are sorted (box_nms takes its top 400 of tens of
    thousands of anchors). A row whose selection comes short (NaN keys) is sorted whole."""
    n = key.shape[-1]
    if k >= n:
        return _stable_order(xp, key)[..., :k]
    kth = xp.partition(key, k - 1, axis=-1)[:, k - 1]
    rows = []
    for b in range(key.shape[0]):
        chosen = xp.nonzero(key[b] <= kth[b])[0]
        if chosen.size < k:
            rows.append(_stable_order(xp, key[b])[:k])
        else:
            rows.append(chosen[_stable_order(xp, key[b][chosen])][:k])
    return xp.stack(rows) if rows else xp.zeros((0, k), dtype=np.int64)


def _gather_rows(xp, rows, order):
    """``rows[b, order[b, i]]`` for (B, N, W) rows and (B, N) order."""
    return xp.take_along_axis(rows, order[..., None], axis=1)


def _corner_iou(xp, a, b, empty='<='):
    """IoU of corner boxes broadcast against each other (MultiBoxDetection's and
    MultiBoxTarget's formula): 0 where the union is ``<= 0`` (``empty='=='``: where it is 0, as
    MultiBoxTarget's safe division)."""
    with np.errstate(all='ignore'):     # NaN and infinite coordinates
        w = xp.maximum(xp.minimum(a[..., 2], b[..., 2]) - xp.maximum(a[..., 0], b[..., 0]), 0)
        h = xp.maximum(xp.minimum(a[..., 3], b[..., 3]) - xp.maximum(a[..., 1], b[..., 1]), 0)
        inter = w * h
        union = ((a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
                 + (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1]) - inter)
        none = union <= 0 if empty == '<=' else union == 0
        return xp.where(none, 0, inter / xp.where(none, 1, union))


def _greedy_nms(xp, alive, suppresses):
    """Greedy non-maximum suppression over ranked boxes.

    ``alive`` (B, K) bool: the candidates, in rank order. In each image b, the best candidate
    left is kept and removes the later ones for which ``suppresses(b, a, later)`` is true (a
    bool per pair of ranks, broadcasting ``a`` against ``later``), until none is left. Returns
    the kept boxes.

    The candidates are compared in blocks: the next few left against all left, in one call
    (the same arithmetic per pair), then the block is walked in order. An image with at most
    ``_PAIRS_LIMIT`` candidates is one block; otherwise a block doubles while most of it is
    kept (few calls where little is suppressed) and halves while most of it is suppressed
    (little wasted on boxes an earlier one removes).
    """
    kept = xp.zeros_like(alive)
    for b in range(alive.shape[0]):
        left = xp.nonzero(alive[b])[0]
        size = 8
        while left.size:
            m = left.size if left.size <= _PAIRS_LIMIT else min(size, left.size)
            table = suppresses(b, left[:m, None], left[None, :])
            gone = xp.zeros(left.size, dtype=bool)
            count = 0
            for i in range(m):
                if not gone[i]:
                    kept[b, left[i]] = True
                    gone[i + 1:] |= table[i, i + 1:]
                    count += 1
            left = left[m:][~gone[m:]]
            size = min(2 * size, max(_PAIRS_LIMIT, 1)) if 2 * count >= m else \
                max(size // 2, 1)
    return kept


# candidates of an image up to which NMS compares every pair at once (a few milliseconds)
_PAIRS_LIMIT = 512


# -------------------------------------------------------------------------------------------------
# MultiBoxPrior
# -------------------------------------------------------------------------------------------------

def _prior_check(attrs):
    if not attrs.sizes:
        raise ValueError('sizes must not be empty')
    if not attrs.ratios:
        raise ValueError('ratios must not be empty')
    if len(attrs.steps) != 2:
        raise ValueError(f'steps must have 2 values (step_y, step_x), got {attrs.steps}')
    if len(attrs.offsets) != 2:
        raise ValueError(f'offsets must have 2 values (y, x), got {attrs.offsets}')
    if not all(0 <= o <= 1 for o in attrs.offsets):
        raise ValueError(f'offsets must lie in [0, 1], got {attrs.offsets}')
    if attrs.steps[0] * attrs.steps[1] < 0:
        raise ValueError(f'steps: give both step_y and step_x (or neither), got {attrs.steps}')


def _anchors_per_position(attrs):
    return len(attrs.sizes) + len(attrs.ratios) - 1


@register('_contrib_MultiBoxPrior')
class MultiBoxPrior:
    """Anchor boxes for every position of a feature map (SSD's prior boxes).

    ``data`` (N, C, H, W) (only H and W are read) -> (1, H * W * K, 4) corner boxes in the
    data's dtype, K = len(sizes) + len(ratios) - 1 per position, in the order: position by
    position (row-major), at each the sizes with the first ratio, then the other ratios with
    the first size. A box of size s and ratio r is ``s * H / W * sqrt(r)`` wide and
    ``s / sqrt(r)`` high, centred at ``((x + offsets[1]) * steps[1], (y + offsets[0]) *
    steps[0])``; steps of -1 mean ``1 / W`` and ``1 / H``. ``clip`` clips to [0, 1].
    No gradient.
    """
    inputs = ('data',)
    attrs = dict(sizes=FloatTuple((1.0,)), ratios=FloatTuple((1.0,)), clip=Bool(False),
                 steps=FloatTuple((-1.0, -1.0)), offsets=FloatTuple((0.5, 0.5)))
    check = _prior_check
    gradient = _no_gradient

    def compute(xp, attrs, data):
        height, width = data.shape[2], data.shape[3]
        ft = _work_dtype(data.dtype).type
        if attrs.steps[0] <= 0 or attrs.steps[1] <= 0:
            step_y, step_x = ft(1) / ft(height), ft(1) / ft(width)
        else:
            step_y, step_x = ft(attrs.steps[0]), ft(attrs.steps[1])
        # MXNet's float expressions, in its order of operations
        cy = (xp.arange(height, dtype=ft) + ft(attrs.offsets[0])) * step_y
        cx = (xp.arange(width, dtype=ft) + ft(attrs.offsets[1])) * step_x
        shapes = [(ft(s), np.sqrt(ft(attrs.ratios[0]))) for s in attrs.sizes]
        shapes += [(ft(attrs.sizes[0]), np.sqrt(ft(r))) for r in attrs.ratios[1:]]
        half_w = xp.asarray([s * ft(height) / ft(width) * r / ft(2) for s, r in shapes], ft)
        half_h = xp.asarray([s / r / ft(2) for s, r in shapes], ft)
        cx = cx[None, :, None]
        cy = cy[:, None, None]
        boxes = xp.stack(xp.broadcast_arrays(cx - half_w, cy - half_h, cx + half_w,
                                             cy + half_h), axis=-1)
        if attrs.clip:
            boxes = xp.clip(boxes, 0, 1)
        return boxes.reshape(1, -1, 4).astype(data.dtype, copy=False)

    def infer_shape(attrs, data):
        if data is None:
            return [None], [(1, 0, 4)]
        if len(data) < 4:
            raise ShapeError(f'data must be 4-D (batch, channel, y, x), got {tuple(data)}')
        count = data[2] * data[3] * _anchors_per_position(attrs)
        return [data], [(1, count, 4)]

    def infer_type(attrs, data):
        return [data], [data]


# -------------------------------------------------------------------------------------------------
# MultiBoxTarget
# -------------------------------------------------------------------------------------------------

def _variances_check(attrs):
    if len(attrs.variances) != 4:
        raise ValueError(f'variances must have 4 values, got {attrs.variances}')


def _target_check(attrs):
    _variances_check(attrs)
    if attrs.negative_mining_ratio > 0 and not attrs.negative_mining_thresh > 0:
        raise ValueError('negative_mining_thresh must be > 0 when negative mining is on '
                         f'(negative_mining_ratio={attrs.negative_mining_ratio})')


def _num_valid_labels(xp, label):
    """Ground truths per image: the rows before the first one of class -1 (whose coordinates
    must then be -1 too, as MXNet checks)."""
    n_labels = label.shape[1]
    is_pad = label[:, :, 0].astype(np.float32) == -1
    count = xp.where(is_pad.any(axis=1), xp.argmax(is_pad.astype(np.int8), axis=1), n_labels)
    first_pad = xp.take_along_axis(label, xp.minimum(count, n_labels - 1)[:, None, None],
                                   axis=1)[:, 0, 1:5].astype(np.float32)
    bad = (count < n_labels) & (first_pad != -1).any(axis=1)
    if bool(bad.any()):
        raise MXNetError('_contrib_MultiBoxTarget: a label row of class -1 (padding) must have '
                         'the coordinates -1 too')
    return count


def _bipartite_match(xp, iou, gt_valid):
    """MXNet's greedy matching: repeatedly the best (anchor, ground truth) pair among the
    unmatched ones, while its IoU exceeds 1e-6; each ground truth gets at most one anchor.
    Returns (matched anchors (B, A) bool, their ground truth (B, A), -1 elsewhere)."""
    batch, n_anchor, n_label = iou.shape
    positive = xp.zeros((batch, n_anchor), dtype=bool)
    match_gt = xp.full((batch, n_anchor), -1, dtype=np.int64)
    gt_done = ~gt_valid
    rows = xp.arange(batch)
    for _ in range(n_label):
        free = xp.where(positive[:, :, None] | gt_done[:, None, :], -1, iou)
        best = xp.argmax(free.reshape(batch, -1), axis=1)      # first in (anchor, gt) order
        found = free.reshape(batch, -1)[rows, best] > np.float32(1e-6)
        j, k = best // n_label, best % n_label
        positive[rows, j] |= found
        gt_done[rows, k] |= found
        match_gt[rows, j] = xp.where(found, k, match_gt[rows, j])
    return positive, match_gt


def _background_prob(xp, cls_pred):
    """Softmax probability of class 0 per anchor, (B, C, A) -> (B, A)."""
    top = cls_pred.max(axis=1, keepdims=True)
    total = xp.exp(cls_pred - top).sum(axis=1)
    return xp.exp(cls_pred[:, 0] - top[:, 0]) / total


def _mine_negatives(xp, attrs, cls_pred, positive, best_iou):
    """Hard negative mining: the non-positive anchors whose best IoU is below
    ``negative_mining_thresh`` with the lowest background probability, ``ratio`` per positive
    (at most all the rest). Returns the (B, A) mask of negatives."""
    n_anchor = positive.shape[1]
    n_pos = positive.sum(axis=1)
    # MXNet: int num_negative = num_positive * negative_mining_ratio (a float product)
    n_neg = (n_pos.astype(np.float32) * np.float32(attrs.negative_mining_ratio)).astype(np.int64)
    n_neg = xp.minimum(n_neg, n_anchor - n_pos)
    candidate = ~positive & (best_iou < np.float32(attrs.negative_mining_thresh))
    if bool((candidate.sum(axis=1) < n_neg).any()):
        raise MXNetError('_contrib_MultiBoxTarget: fewer negative candidates than the mining '
                         'ratio asks for (anchors whose best overlap is >= '
                         'negative_mining_thresh cannot be negatives); raise '
                         'negative_mining_thresh or lower negative_mining_ratio')
    prob = _background_prob(xp, cls_pred)
    order = _stable_order(xp, xp.where(candidate, prob, xp.inf))
    rank = _stable_order(xp, order)               # the inverse permutation
    return candidate & (rank < n_neg[:, None])


def _encode_boxes(xp, anchors, boxes, variances):
    """MXNet's AssignLocTargets: the box offsets relative to anchors over the variances."""
    aw = anchors[..., 2] - anchors[..., 0]
    ah = anchors[..., 3] - anchors[..., 1]
    ax = (anchors[..., 0] + anchors[..., 2]) * 0.5
    ay = (anchors[..., 1] + anchors[..., 3]) * 0.5
    gw = boxes[..., 2] - boxes[..., 0]
    gh = boxes[..., 3] - boxes[..., 1]
    gx = (boxes[..., 0] + boxes[..., 2]) * 0.5
    gy = (boxes[..., 1] + boxes[..., 3]) * 0.5
    vx, vy, vw, vh = variances
    with np.errstate(all='ignore'):     # anchors that match nothing are masked out later
        return [(gx - ax) / aw / vx, (gy - ay) / ah / vy, _log(xp, gw / aw) / vw,
                _log(xp, gh / ah) / vh]


@register('_contrib_MultiBoxTarget')
class MultiBoxTarget:
    """Training targets of SSD: matches anchors to ground-truth boxes.

    ``anchor`` (1, A, 4), ``label`` (B, L, W >= 5) rows ``[class, xmin, ymin, xmax, ymax,
    ...]`` padded with rows of -1, ``cls_pred`` (B, C, A) class scores (read by negative
    mining) -> ``loc_target`` (B, A * 4) encoded box offsets, ``loc_mask`` (B, A * 4) 1 for
    positive anchors, ``cls_target`` (B, A): class + 1 for positives, 0 for negatives,
    ``ignore_label`` for the rest.

    Each ground truth first takes its best free anchor (greedily, best pair first); with
    ``overlap_threshold`` > 0 every other anchor whose best IoU exceeds it is positive too.
    With ``negative_mining_ratio`` > 0 only the hardest negatives (lowest background
    probability among anchors with best IoU < ``negative_mining_thresh``) are negatives,
    ``ratio`` per positive; otherwise every other anchor is. Offsets are
    ``((gx - ax) / aw / v0, (gy - ay) / ah / v1, log(gw / aw) / v2, log(gh / ah) / v3)``.
    No gradient.
    """
    inputs = ('anchor', 'label', 'cls_pred')
    attrs = dict(overlap_threshold=Float(0.5), ignore_label=Float(-1.0),
                 negative_mining_ratio=Float(-1.0), negative_mining_thresh=Float(0.5),
                 minimum_negative_samples=Int(0), variances=FloatTuple((0.1, 0.1, 0.2, 0.2)))
    check = _target_check
    num_outputs = 3
    gradient = _no_gradient

    def output_names(attrs):
        return ['loc_target', 'loc_mask', 'cls_target']

    def compute(xp, attrs, anchor, label, cls_pred):
        dtype = anchor.dtype
        work = _work_dtype(dtype)
        n_anchor = anchor.shape[1]
        batch = label.shape[0]
        anchors = anchor.reshape(-1, 4)[:n_anchor].astype(work, copy=False)
        label = label.astype(work, copy=False)
        # IoU (B, A, L) of every anchor with every label box
        iou = _corner_iou(xp, anchors[None, :, None, :], label[:, None, :, 1:5], empty='==')
        n_valid = _num_valid_labels(xp, label)
        gt_valid = xp.arange(label.shape[1])[None, :] < n_valid[:, None]
        positive, match_gt = _bipartite_match(xp, iou, gt_valid)
        # the other anchors: their best ground truth (first of equal IoUs)
        masked = xp.where(gt_valid[:, None, :], iou, -1)
        best_gt = xp.argmax(masked, axis=2)
        best_iou = xp.take_along_axis(masked, best_gt[..., None], axis=2)[..., 0]
        if attrs.overlap_threshold > 0:
            extra = ~positive & (best_iou > np.float32(attrs.overlap_threshold).astype(work))
            positive |= extra
        match_gt = xp.where(match_gt >= 0, match_gt, best_gt)
        if attrs.negative_mining_ratio > 0:
            negative = _mine_negatives(xp, attrs, cls_pred.astype(work, copy=False), positive,
                                       best_iou)
        else:
            negative = ~positive
        has_gt = (n_valid > 0)[:, None]
        positive &= has_gt
        negative &= has_gt
        matched = xp.take_along_axis(label, match_gt[..., None], axis=1)    # (B, A, W)
        cls_target = xp.where(positive, matched[..., 0] + 1,
                              xp.where(negative, 0, attrs.ignore_label))
        variances = [np.float32(v).astype(work) for v in attrs.variances]
        loc = xp.stack(_encode_boxes(xp, anchors[None], matched[..., 1:5], variances), axis=-1)
        mask = xp.broadcast_to(positive[..., None], loc.shape)
        loc_target = xp.where(mask, loc, 0).reshape(batch, -1)
        return (loc_target.astype(dtype), mask.reshape(batch, -1).astype(dtype),
                cls_target.astype(dtype))

    def infer_shape(attrs, anchor, label, cls_pred):
        for shape, what in ((anchor, 'anchor'), (label, 'label'), (cls_pred, 'cls_pred')):
            _check_rank(shape, 3, what)
        anchor = merge_shape(anchor, (1, _dim(cls_pred, 2), 4),
                             'anchor (1, num_anchors, 4) and cls_pred (batch, classes, '
                             'num_anchors)')
        if label is not None and 0 < label[2] < 5:
            raise ShapeError(f'label rows must have at least 5 values (class, xmin, ymin, xmax, '
                             f'ymax), got {tuple(label)}')
        batch = _dim(label, 0) or _dim(cls_pred, 0)
        label = merge_shape(label, (batch, 0, 0), 'label and cls_pred batch sizes')
        cls_pred = merge_shape(cls_pred, (batch, 0, anchor[1]), 'cls_pred')
        n_anchor = anchor[1]
        return [anchor, label, cls_pred], [(batch, n_anchor * 4), (batch, n_anchor * 4),
                                           (batch, n_anchor)]

    def infer_type(attrs, anchor, label, cls_pred):
        dtype = next((d for d in (anchor, label, cls_pred) if d is not None), None)
        return [dtype] * 3, [dtype] * 3


# -------------------------------------------------------------------------------------------------
# MultiBoxDetection
# -------------------------------------------------------------------------------------------------

def _decode_boxes(xp, anchors, loc, variances, clip):
    """MXNet's TransformLocations: boxes from anchors and predicted offsets."""
    aw = anchors[..., 2] - anchors[..., 0]
    ah = anchors[..., 3] - anchors[..., 1]
    ax = (anchors[..., 0] + anchors[..., 2]) / 2
    ay = (anchors[..., 1] + anchors[..., 3]) / 2
    vx, vy, vw, vh = variances
    ox = loc[..., 0] * vx * aw + ax
    oy = loc[..., 1] * vy * ah + ay
    ow = _exp(xp, loc[..., 2] * vw) * aw / 2
    oh = _exp(xp, loc[..., 3] * vh) * ah / 2
    boxes = xp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)
    if not clip:
        return boxes
    # std::max(0, std::min(1, v)): std::min returns its first argument when v is NaN, so 1
    return xp.where(xp.isnan(boxes), 1, xp.clip(boxes, 0, 1)).astype(boxes.dtype, copy=False)


def _detection_nms(xp, attrs, rows, nkeep):
    """Greedy NMS over the first ``nkeep`` rows (ranked) of each image: a kept box removes
    (id -1) the later ones of its class (any class with ``force_suppress``) whose IoU with it
    is >= ``nms_threshold``."""
    k = int(nkeep.max())
    if k < 2:
        return rows
    ids = rows[:, :k, 0]
    boxes = rows[:, :k, 2:6]
    threshold = np.float32(attrs.nms_threshold).astype(rows.dtype)

    def suppresses(b, a, later):
        hit = _corner_iou(xp, boxes[b, a], boxes[b, later]) >= threshold
        if not attrs.force_suppress:
            hit &= ids[b, later] == ids[b, a]
        return hit

    alive = (ids >= 0) & (xp.arange(k)[None, :] < nkeep[:, None])
    kept = _greedy_nms(xp, alive, suppresses)
    rows = rows.copy()
    rows[:, :k, 0] = xp.where(alive & ~kept, -1, ids)
    return rows


@register('_contrib_MultiBoxDetection')
class MultiBoxDetection:
    """Detections from SSD's outputs: decoded boxes, thresholded, with per-class NMS.

    ``cls_prob`` (B, C, A) class probabilities (class 0 is the background), ``loc_pred``
    (B, A * 4) box offsets, ``anchor`` (1, A, 4) -> (B, A, 6) rows ``[class, score, xmin,
    ymin, xmax, ymax]``: per image the anchors whose best foreground probability is >=
    ``threshold``, sorted by score (stable), after non-maximum suppression (suppressed rows
    keep their values with class -1), then rows of -1. Boxes decode as
    ``center = loc[:2] * variances[:2] * anchor_size + anchor_center``, ``size =
    exp(loc[2:] * variances[2:]) * anchor_size``, clipped to [0, 1] with ``clip``. NMS runs
    only when 0 < ``nms_threshold`` <= 1 (otherwise the rows stay in anchor order), on the
    ``nms_topk`` best (all for -1). ``background_id`` is accepted and, as in MXNet, ignored.
    No gradient.
    """
    inputs = ('cls_prob', 'loc_pred', 'anchor')
    attrs = dict(clip=Bool(True), threshold=Float(0.01), background_id=Int(0),
                 nms_threshold=Float(0.5), force_suppress=Bool(False),
                 variances=FloatTuple((0.1, 0.1, 0.2, 0.2)), nms_topk=Int(-1))
    check = _variances_check
    gradient = _no_gradient

    def compute(xp, attrs, cls_prob, loc_pred, anchor):
        dtype = cls_prob.dtype
        work = _work_dtype(dtype)
        batch, n_class, n_anchor = cls_prob.shape
        cls_prob = cls_prob.astype(work, copy=False)
        anchors = anchor.reshape(-1, 4)[:n_anchor].astype(work, copy=False)
        loc = loc_pred.astype(work, copy=False).reshape(batch, n_anchor, 4)
        if n_class > 1:
            # MXNet scans the foreground classes from score -1 with a strict >, which passes
            # over NaN
            foreground = cls_prob[:, 1:]
            foreground = xp.where(xp.isnan(foreground), -np.inf, foreground)
            score = xp.maximum(foreground.max(axis=1), -1)
            cls_id = xp.where(score > -1, foreground.argmax(axis=1), -1).astype(work)
        else:
            score = xp.full((batch, n_anchor), -1, dtype=work)
            cls_id = xp.full((batch, n_anchor), -1, dtype=work)
        valid = (cls_id >= 0) & ~(score < np.float32(attrs.threshold).astype(work))
        variances = [np.float32(v).astype(work) for v in attrs.variances]
        boxes = _decode_boxes(xp, anchors[None], loc, variances, attrs.clip)
        rows = xp.concatenate([cls_id[..., None], score[..., None], boxes], axis=-1)
        count = valid.sum(axis=1)
        position = xp.arange(n_anchor)[None, :, None]
        # the valid rows in anchor order, then rows of -1
        compact = _gather_rows(xp, rows, _stable_order(xp, ~valid))
        compact = xp.where(position < count[:, None, None], compact, -1)
        if not 0 < attrs.nms_threshold <= 1:
            return compact.astype(dtype, copy=False)
        ranked = _gather_rows(xp, rows, _stable_order(xp, xp.where(valid, -score, xp.inf)))
        nkeep = count if attrs.nms_topk <= 0 else xp.minimum(count, attrs.nms_topk)
        # past the top k MXNet leaves the unsorted candidates, marked -1
        compact[..., 0] = -1
        out = xp.where(position < nkeep[:, None, None], ranked, compact)
        out = xp.where(position < count[:, None, None], out, -1)
        return _detection_nms(xp, attrs, out, nkeep).astype(dtype, copy=False)

    def infer_shape(attrs, cls_prob, loc_pred, anchor):
        _check_rank(cls_prob, 3, 'cls_prob (batch, classes, num_anchors)')
        _check_rank(loc_pred, 2, 'loc_pred (batch, num_anchors * 4)')
        _check_rank(anchor, 3, 'anchor (1, num_anchors, 4)')
        if loc_pred is not None and loc_pred[1] % 4:
            raise ShapeError(f'loc_pred (batch, num_anchors * 4): {tuple(loc_pred)} has no whole '
                             'number of boxes')
        n_anchor = _dim(anchor, 1) or _dim(cls_prob, 2) or _dim(loc_pred, 1) // 4
        batch = _dim(cls_prob, 0) or _dim(loc_pred, 0)
        cls_prob = merge_shape(cls_prob, (batch, 0, n_anchor), 'cls_prob and anchor/loc_pred')
        loc_pred = merge_shape(loc_pred, (batch, n_anchor * 4), 'loc_pred')
        anchor = merge_shape(anchor, (0, n_anchor, 4), 'anchor')
        return [cls_prob, loc_pred, anchor], [(batch, n_anchor, 6)]

    def infer_type(attrs, *dtypes):
        dtype = next((d for d in dtypes if d is not None), None)
        return [dtype] * 3, [dtype]


# -------------------------------------------------------------------------------------------------
# box_nms, box_iou
# -------------------------------------------------------------------------------------------------

_FORMATS = ('corner', 'center')


def _intersect(xp, a, b, fmt):
    """Overlap length along one axis; ``a``/``b`` hold (start, end) or (center, size) at
    [..., 0] and [..., 2].

    MXNet's Intersect picks the ends with ternaries (``a > b ? a : b``), which take the
    second operand when either is NaN: in corner format a NaN of ``a`` is passed over (b's end
    is used) while b's NaN makes the overlap 0; in center format the roles swap.
    """
    if fmt == 'corner':
        a_left, a_right, b_left, b_right = a[..., 0], a[..., 2], b[..., 0], b[..., 2]
        left = xp.where(a_left > b_left, a_left, b_left)
        right = xp.where(a_right < b_right, a_right, b_right)
    else:
        a_left, a_right = a[..., 0] - a[..., 2] / 2, a[..., 0] + a[..., 2] / 2
        b_left, b_right = b[..., 0] - b[..., 2] / 2, b[..., 0] + b[..., 2] / 2
        left = xp.where(b_left > a_left, b_left, a_left)
        right = xp.where(b_right < a_right, b_right, a_right)
    w = right - left
    return xp.where(w > 0, w, 0)


def _area(xp, box, fmt):
    if fmt == 'corner':
        width, height = box[..., 2] - box[..., 0], box[..., 3] - box[..., 1]
    else:
        width, height = box[..., 2], box[..., 3]
    return xp.where((width < 0) | (height < 0), 0, width * height)


def _box_iou(xp, a, b, fmt, zero_apart=True):
    """inter / union (areas of inverted boxes count as 0); ``zero_apart``: 0 without
    intersection, as box_iou's compute_overlap (box_nms divides anyway: 0 / NaN is NaN)."""
    with np.errstate(all='ignore'):     # NaN and infinite coordinates
        inter = _intersect(xp, a, b, fmt) * _intersect(xp, a[..., 1:], b[..., 1:], fmt)
        iou = inter / (_area(xp, a, fmt) + _area(xp, b, fmt) - inter)
    return xp.where(inter <= 0, 0, iou) if zero_apart else iou


def _nms_check(attrs):
    for key in ('score_index', 'coord_start'):
        if attrs[key] < 0:
            raise ValueError(f'{key} must be >= 0, got {attrs[key]}')
    if attrs.coord_start <= attrs.score_index <= attrs.coord_start + 3:
        raise ValueError(f'score_index {attrs.score_index} conflicts with the coordinates '
                         f'[{attrs.coord_start}, {attrs.coord_start + 3}]')
    if attrs.id_index >= 0:
        if attrs.coord_start <= attrs.id_index <= attrs.coord_start + 3:
            raise ValueError(f'id_index {attrs.id_index} conflicts with the coordinates '
                             f'[{attrs.coord_start}, {attrs.coord_start + 3}]')
        if attrs.id_index == attrs.score_index:
            raise ValueError(f'id_index {attrs.id_index} conflicts with score_index')


def _nms_width_check(attrs, width):
    needed = max(5 if attrs.id_index < 0 else 6, attrs.score_index + 1, attrs.coord_start + 4,
                 attrs.id_index + 1)
    if width and width < needed:
        raise ShapeError(f'the last axis holds {width} values per box; score_index='
                         f'{attrs.score_index}, coord_start={attrs.coord_start} and id_index='
                         f'{attrs.id_index} need at least {needed}')


_INT_MIN = -2 ** 31


def _c_int(xp, x):
    """C's ``static_cast<int>`` of floats on x86 (class ids): truncation, and INT_MIN for NaN
    and values out of int's range (so NaN ids all compare equal)."""
    t = xp.trunc(x)
    bad = xp.isnan(t) | (t < _INT_MIN) | (t > -_INT_MIN - 1)
    return xp.where(bad, _INT_MIN, t).astype(np.int64)


def _convert_format(xp, out, attrs):
    """MXNet's corner_to_center / center_to_corner on the output boxes, skipping boxes whose
    first coordinate is negative (the -1 rows, and as MXNet, any such box)."""
    start = attrs.coord_start
    a, b, c, d = (out[..., start + i] for i in range(4))
    if attrs.out_format == 'center':
        new = [(a + c) / 2, (b + d) / 2, c - a, d - b]
    else:
        new = [a - c / 2, b - d / 2, a + c / 2, b + d / 2]
    keep = a < 0
    out = out.copy()
    for i, value in enumerate(new):
        out[..., start + i] = xp.where(keep, out[..., start + i], value)
    return out


_NMS_ATTRS = dict(overlap_thresh=Float(0.5), valid_thresh=Float(0), topk=Int(-1),
                  coord_start=Int(2), score_index=Int(1), id_index=Int(-1),
                  background_id=Int(-1), force_suppress=Bool(False),
                  in_format=Str('corner', choices=_FORMATS),
                  out_format=Str('corner', choices=_FORMATS))


def _nms_rows(xp, attrs, data):
    """(kept row indices in output order (B, N), -1 past the kept ones) for (B, N, W) data."""
    batch, num, _ = data.shape
    topk = num if attrs.topk < 0 else min(num, attrs.topk)
    score = data[..., attrs.score_index]
    valid = score > data.dtype.type(attrs.valid_thresh)
    if attrs.id_index >= 0:
        valid &= data[..., attrs.id_index] != data.dtype.type(attrs.background_id)
    # valid boxes by descending score, ties in index order, as MXNet's stable sorts
    order = _stable_top(xp, xp.where(valid, -score, xp.inf), topk)
    candidate = xp.take_along_axis(valid, order, axis=1)
    boxes = xp.take_along_axis(data, order[..., None], axis=1)
    coords = boxes[..., attrs.coord_start:attrs.coord_start + 4]
    ids = _c_int(xp, boxes[..., attrs.id_index]) if attrs.id_index >= 0 else None
    threshold = np.float32(attrs.overlap_thresh)

    def suppresses(b, a, later):
        iou = _box_iou(xp, coords[b, a], coords[b, later], attrs.in_format, zero_apart=False)
        hit = iou > threshold
        if ids is not None and not attrs.force_suppress:
            hit &= ids[b, later] == ids[b, a]
        return hit

    kept = _greedy_nms(xp, candidate, suppresses)
    # kept ones first, in rank order
    rank = _stable_order(xp, ~kept)
    index = xp.take_along_axis(order, rank, axis=1)
    index = xp.where(xp.take_along_axis(kept, rank, axis=1), index, -1)
    return xp.concatenate([index, xp.full((batch, num - topk), -1, dtype=index.dtype)], axis=1)


@register('_contrib_box_nms', aliases=('_contrib_box_non_maximum_suppression',))
class box_nms:
    """Non-maximum suppression of scored boxes.

    ``data`` (..., N, W) rows holding a score at ``score_index``, 4 coordinates from
    ``coord_start`` (``in_format`` 'corner' [xmin, ymin, xmax, ymax] or 'center' [x, y,
    width, height]) and optionally a class id at ``id_index`` -> the same shape: per batch
    element the boxes with score > ``valid_thresh`` (and class != ``background_id``), sorted by
    descending score, the first ``topk`` of them (all for -1; ``topk=0`` returns the data
    unchanged), minus those whose IoU with a better kept box exceeds ``overlap_thresh`` (only
    within a class when ``id_index`` is given and not ``force_suppress``), then rows of -1.
    Coordinates are written in ``out_format``. A hidden second output (..., N, 1) records each
    output row's input row (flat index, -1 for none); the gradient copies the output rows'
    gradients to those input rows (whole rows, even across a format change, as MXNet).
    """
    inputs = ('data',)
    named_inputs = False
    attrs = _NMS_ATTRS
    check = _nms_check
    num_outputs = 2
    num_visible_outputs = 1

    def output_names(attrs):
        return ['output0', 'output1']

    def compute(xp, attrs, data):
        shape = data.shape
        num, width = shape[-2], shape[-1]
        flat = data.reshape(-1, num, width)
        batch = flat.shape[0]
        if attrs.topk == 0:
            record = xp.arange(batch * num).astype(data.dtype)
            return data.copy(), record.reshape(shape[:-1] + (1,))
        index = _nms_rows(xp, attrs, flat)
        kept = index >= 0
        source = xp.where(kept, index, 0) + (xp.arange(batch) * num)[:, None]
        out = flat.reshape(-1, width)[source]
        out = xp.where(kept[..., None], out, -1).astype(data.dtype, copy=False)
        if attrs.in_format != attrs.out_format:
            out = _convert_format(xp, out, attrs)
        record = xp.where(kept, source, -1).astype(data.dtype)
        return out.reshape(shape), record.reshape(shape[:-1] + (1,))

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None, None]
        if len(data) < 2:
            raise ShapeError(f'data must have at least 2 axes (boxes, values per box), got '
                             f'{tuple(data)}')
        _nms_width_check(attrs, data[-1])
        return [data], [tuple(data), tuple(data[:-1]) + (1,)]

    def infer_type(attrs, data):
        return [data], [data, data]

    def gradient(F, attrs, inputs, outputs, ograds):
        if ograds[0] is None:
            return [None]
        return [F._backward_contrib_box_nms(ograds[0], outputs[1], **attrs)]


@register('_backward_contrib_box_nms')
class _backward_contrib_box_nms:
    """The gradient of box_nms: ``ograd`` (..., N, W) rows copied to the input rows that
    ``record`` (..., N, 1) names (flat indices, -1 for none), zeros elsewhere -> ``ograd``'s
    shape. Its own gradient gathers the rows back."""
    inputs = ('ograd', 'record')
    attrs = _NMS_ATTRS

    def compute(xp, attrs, ograd, record):
        width = ograd.shape[-1]
        rows = ograd.reshape(-1, width)
        index = record.reshape(-1).astype(np.int64)
        kept = index >= 0
        out = xp.zeros_like(rows)
        out[index[kept]] = rows[kept]
        return out.reshape(ograd.shape)

    def infer_shape(attrs, ograd, record):
        if ograd is not None:
            record = merge_shape(record, tuple(ograd[:-1]) + (1,), 'record')
        elif record is not None:
            ograd = tuple(record[:-1]) + (0,)
        return [ograd, record], [ograd]

    def infer_type(attrs, ograd, record):
        return [ograd, record], [ograd]

    def gradient(F, attrs, inputs, outputs, ograds):
        ograd, record = inputs
        rows = F.reshape(ograds[0], shape=(-1, ograd.shape[-1]))
        picked = F.take(rows, F.reshape(record, shape=(-1,)), axis=0, mode='clip')
        return [F.broadcast_mul(F.reshape_like(picked, ograd), record >= 0), None]


@register('_contrib_box_iou')
class box_iou:
    """Intersection over union of every ``lhs`` box with every ``rhs`` box.

    ``lhs`` (..., 4), ``rhs`` (..., 4) in ``format`` 'corner' or 'center' ->
    ``lhs.shape[:-1] + rhs.shape[:-1]``. No gradient (MXNet writes zeros).
    """
    inputs = ('lhs', 'rhs')
    attrs = dict(format=Str('corner', choices=_FORMATS))
    gradient = _no_gradient

    def compute(xp, attrs, lhs, rhs):
        a = lhs.reshape(lhs.shape[:-1] + (1,) * (rhs.ndim - 1) + (4,))
        return _box_iou(xp, a, rhs, attrs.format).astype(lhs.dtype, copy=False)

    def infer_shape(attrs, lhs, rhs):
        shapes = []
        for shape, what in ((lhs, 'lhs'), (rhs, 'rhs')):
            if shape is not None:
                if len(shape) < 2:
                    raise ShapeError(f'{what} must have at least 2 axes (..., 4), got '
                                     f'{tuple(shape)}')
                shape = merge_shape(shape, tuple(shape[:-1]) + (4,), f'{what} (..., 4)')
            shapes.append(shape)
        if None in shapes:
            return shapes, [None]
        return shapes, [tuple(shapes[0][:-1]) + tuple(shapes[1][:-1])]
