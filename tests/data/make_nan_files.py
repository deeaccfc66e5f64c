"""Writes MXNet 1.9.1's outputs for NaN and infinite inputs of the operators that order or
normalise: Activation, softmax, log_softmax, softmin, topk, sort, argsort, box_nms, box_iou and
MultiBoxDetection.

Run with the MXNet oracle's Python, from the repository root::

    .oracle/bin/python tests/data/make_nan_files.py

It writes under tests/data/:

* ``nan-cases.json``: per case the operator (its ``nd`` name, ``contrib.`` for the contrib
  ones), the attributes and the number of inputs and outputs;
* ``nan-numbers.npz``: the arrays ``CASE:inI`` (inputs) and ``CASE:outK`` (outputs); for the
  log_softmax cases also ``CASE:softmax``, MXNet's softmax of the same input with the same
  attributes (the test reads from it which rows' sums overflowed, see test_nan.py).

The CPU build is MXNet's pip wheel (oneDNN 2.4, AVX-512 here): float32 softmax and
log_softmax over the last axis of 1-4-d data run in oneDNN, the rest in MXNet's own loops.
Sorting rows without NaN keep their values distinct where MXNet's std::sort is not stable
(rows longer than 16, partial sorts): ties are not what these cases are about.
tests/ops/test_nan.py reads the files.
"""
import json
import os

import numpy as np
import mxnet as mx
from mxnet import nd

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20240917)
NAN, INF = np.nan, np.inf


def sprinkle(x, nan=0.2, posinf=0.05, neginf=0.05):
    """``x`` with random entries set to NaN, +inf and -inf."""
    x = x.copy()
    draw = RNG.random(x.shape)
    x[draw < nan] = NAN
    x[(draw >= nan) & (draw < nan + posinf)] = INF
    x[(draw >= nan + posinf) & (draw < nan + posinf + neginf)] = -INF
    return x


# -------------------------------------------------------------------------------------------------
# softmax, log_softmax, softmin
# -------------------------------------------------------------------------------------------------

# NaN first, in the middle, last, several, everywhere; infinities with and without NaN
SOFTMAX_ROWS = np.array([[NAN, 1, 2], [1, NAN, 2], [1, 2, NAN], [NAN, NAN, 2],
                         [NAN, NAN, NAN], [INF, 1, 2], [1, INF, INF], [-INF, 1, 2],
                         [-INF, -INF, -INF], [-INF, NAN, 1], [INF, NAN, 1], [INF, -INF, 0],
                         [0.5, -1, 3]], np.float32)


def long_rows(rows, width):
    """Rows of ``width`` values: NaN-free ones, one NaN at each end, and random sprinkles
    (oneDNN reduces the maximum in 16 lanes: where a NaN falls among them matters)."""
    x = RNG.normal(0, 3, (rows, width)).astype(np.float32)
    x[2:] = sprinkle(x[2:], nan=0.15)
    x[1, 0] = NAN
    x[2, -1] = NAN
    x[3, width // 2] = NAN
    x[4, :] = NAN
    x[5, ::3] = NAN
    return x


def softmax_cases(case):
    rows = SOFTMAX_ROWS
    for op in ('softmax', 'log_softmax', 'softmin'):
        case(f'{op}_rows', op, {}, [rows])
        case(f'{op}_axis0', op, dict(axis=0), [rows.T.copy()])
        case(f'{op}_float64', op, {}, [rows.astype(np.float64)])
        case(f'{op}_temperature', op, dict(temperature=2.0), [rows])
    for width in (16, 17, 21, 40, 81):
        case(f'softmax_long{width}', 'softmax', {}, [long_rows(12, width)])
        case(f'log_softmax_long{width}', 'log_softmax', {}, [long_rows(12, width)])
    case('softmin_long21', 'softmin', {}, [long_rows(12, 21)])
    cube = sprinkle(RNG.normal(0, 2, (2, 3, 19)).astype(np.float32))
    case('softmax_3d', 'softmax', {}, [cube])
    case('softmax_3d_axis1', 'softmax', dict(axis=1), [cube])
    case('log_softmax_4d', 'log_softmax', {}, [cube.reshape(2, 3, 1, 19)])
    case('softmax_1d', 'softmax', {}, [rows[0]])
    case('softmax_5d', 'softmax', {}, [cube.reshape(1, 2, 3, 1, 19)])
    case('softmax_float16', 'softmax', {}, [rows.astype(np.float16)])
    case('log_softmax_float16', 'log_softmax', {}, [rows.astype(np.float16)])
    case('softmax_temperature1', 'softmax', dict(temperature=1.0), [rows])
    case('log_softmax_temperature1', 'log_softmax', dict(temperature=1.0), [rows])
    case('softmax_dtype32', 'softmax', dict(dtype='float32'), [rows])
    case('softmax_dtype64', 'softmax', dict(dtype='float64'), [rows])
    length = np.array([3, 2, 1, 2, 0, 2, 1, 3, 3, 1, 3, 2, 3], np.int32)
    case('softmax_length', 'softmax', dict(use_length=True), [rows, length])
    case('softmax_length_axis0', 'softmax', dict(use_length=True, axis=0),
         [rows.T.copy(), length])
    # the maximum comes off before the division by the temperature: no overflow
    big = np.array([[3e38, 3e38, 0], [-3e38, 3e38, 1]], np.float32)
    for op in ('softmax', 'log_softmax'):
        case(f'{op}_temperature_big', op, dict(temperature=0.5), [big])
        case(f'{op}_temperature_big64', op, dict(temperature=0.5), [big.astype(np.float64)])
    case('softmin_temperature_big', 'softmin', dict(temperature=0.5), [-big])


def activation_cases(case):
    """Activation's relu in oneDNN (float32, 1-d to 5-d) maps NaN to 0; elsewhere, and the
    other activations and the relu operator, keep NaN."""
    row = np.array([NAN, -1, 2, INF, -INF, 0], np.float32)
    for ndim in range(1, 7):
        x = np.resize(row, (2,) * ndim).astype(np.float32)
        case(f'activation_relu_{ndim}d', 'Activation', dict(act_type='relu'), [x])
    x = np.resize(row, (2, 3, 4))
    for dtype in ('float64', 'float16'):
        case(f'activation_relu_{dtype}', 'Activation', dict(act_type='relu'),
             [x.astype(dtype)])
    for act in ('sigmoid', 'tanh', 'softrelu', 'softsign'):
        case(f'activation_{act}', 'Activation', dict(act_type=act), [x.astype(np.float32)])
    case('relu_operator', 'relu', {}, [x.astype(np.float32)])
    case('leaky_relu', 'LeakyReLU', dict(slope=0.1), [x.astype(np.float32)])


# -------------------------------------------------------------------------------------------------
# topk, sort, argsort
# -------------------------------------------------------------------------------------------------

SORT_ROWS = np.array([[3, NAN, 1, 2, 0, 5], [NAN, 3, 1, 2, 5, 0], [3, 1, 2, 0, 5, NAN],
                      [5, NAN, 4, NAN, 1, 0], [NAN, NAN, NAN, NAN, NAN, NAN],
                      [INF, NAN, -INF, 1, NAN, 0], [2, NAN, 2, 1, NAN, 1],
                      [-INF, 3, INF, 0, -1, 2], [NAN, INF, INF, -INF, -INF, NAN]], np.float32)


def sort_rows(rows, width, ties):
    """Rows with NaN (random, at the ends, all NaN) and ``ties`` equal values among them; the
    NaN-free first row has distinct values."""
    x = RNG.permutation(rows * width).reshape(rows, width).astype(np.float32)
    if ties:
        x = np.floor(x / 3)
    x[1:] = sprinkle(x[1:], nan=0.25, posinf=0.0, neginf=0.0)
    x[0] = RNG.permutation(width).astype(np.float32)
    x[1, 0] = x[2, -1] = x[3, width // 2] = NAN
    x[4] = NAN
    x[5, ::2] = NAN
    x[6, :2] = INF
    x[6, 5] = NAN
    x[7, 1:4] = -INF
    x[7, 9] = NAN
    return x


def sort_cases(case):
    rows = SORT_ROWS
    for ascend in (False, True):
        tag = 'ascend' if ascend else 'descend'
        for ret_typ in ('indices', 'value', 'both', 'mask'):
            case(f'topk_{ret_typ}_{tag}', 'topk', dict(k=3, ret_typ=ret_typ, is_ascend=ascend),
                 [rows])
        case(f'topk_k1_{tag}', 'topk', dict(k=1, ret_typ='both', is_ascend=ascend), [rows])
        case(f'topk_all_{tag}', 'topk', dict(k=0, ret_typ='both', is_ascend=ascend), [rows])
        case(f'sort_{tag}', 'sort', dict(is_ascend=ascend), [rows])
        case(f'argsort_{tag}', 'argsort', dict(is_ascend=ascend), [rows])
        case(f'topk_axis0_{tag}', 'topk', dict(k=2, axis=0, ret_typ='both', is_ascend=ascend),
             [rows.T.copy()])
        case(f'sort_axis0_{tag}', 'sort', dict(axis=0, is_ascend=ascend), [rows.T.copy()])
        case(f'argsort_flat_{tag}', 'argsort', dict(axis=None, is_ascend=ascend), [rows])
        case(f'topk_flat_{tag}', 'topk', dict(axis=None, k=7, ret_typ='both', is_ascend=ascend),
             [rows])
        for width, ties in ((17, False), (21, True), (40, True), (100, True), (300, True)):
            long = sort_rows(8, width, ties)
            case(f'argsort{width}_{tag}', 'argsort', dict(is_ascend=ascend), [long])
            # k * 8 <= n: std::partial_sort (a heap); k * 8 > n: a full std::sort
            for k in sorted({width // 8, width // 8 + 1} | ({1, 2} if width < 300 else set())):
                case(f'topk{width}_k{k}_{tag}', 'topk',
                     dict(k=k, ret_typ='both', is_ascend=ascend), [long])
            if width < 300:         # the rest as the shorter rows: smaller files
                case(f'sort{width}_{tag}', 'sort', dict(is_ascend=ascend), [long])
                case(f'topk{width}_mask_{tag}', 'topk',
                     dict(k=width // 8, ret_typ='mask', is_ascend=ascend), [long])
    # NaN-free rows with equal values (a saturated heatmap): the algorithms' order too
    ties = np.floor(RNG.permutation(4 * 64).reshape(4, 64).astype(np.float32) / 8)
    ties[3] = np.r_[np.ones(30), np.zeros(4), np.ones(30)]
    for ascend in (False, True):
        tag = 'ascend' if ascend else 'descend'
        case(f'argsort_ties_{tag}', 'argsort', dict(is_ascend=ascend), [ties])
        for k in (4, 9):                 # a partial sort, a full one
            case(f'topk_ties_k{k}_{tag}', 'topk', dict(k=k, ret_typ='both', is_ascend=ascend),
                 [ties])
    case('sort_float64', 'sort', {}, [rows.astype(np.float64)])
    case('topk_float64', 'topk', dict(k=3, ret_typ='both'), [sort_rows(8, 40, True)
                                                              .astype(np.float64)])
    case('argsort_int32', 'argsort', dict(is_ascend=False, dtype='int32'), [rows])
    case('topk_int32_indices', 'topk', dict(k=4, dtype='int32', ret_typ='both'), [rows])


# -------------------------------------------------------------------------------------------------
# box_nms, box_iou
# -------------------------------------------------------------------------------------------------

def nms_data():
    """(2, 10, 6) rows [id, score, xmin, ymin, xmax, ymax]: clusters of overlapping boxes with
    NaN and infinite scores, coordinates (of better and of worse boxes) and ids."""
    batch, num = 2, 10
    centre = RNG.uniform(0.3, 0.7, (batch, num, 2))
    centre[:, 1::2] = centre[:, 0::2] + RNG.uniform(-0.05, 0.05, (batch, num // 2, 2))
    half = RNG.uniform(0.1, 0.2, (batch, num, 2))
    boxes = np.concatenate([centre - half, centre + half], axis=-1)
    ids = RNG.integers(0, 2, (batch, num, 1)).astype(np.float64)
    score = RNG.permutation(batch * num).reshape(batch, num, 1) / (batch * num) + 0.01
    data = np.concatenate([ids, score, boxes], axis=-1).astype(np.float32)
    order = np.argsort(-data[..., 1], axis=1, kind='stable')
    best, second, third = order[:, 0], order[:, 1], order[:, 4]
    b = np.arange(batch)
    data[b, best, 2] = NAN            # the best box: a NaN xmin
    data[0, second[0], 5] = NAN       # a NaN ymax
    data[1, second[1], 4] = INF       # an infinite xmax
    data[0, third[0], 1] = NAN        # a NaN score
    data[1, third[1], 1] = INF        # an infinite score
    data[0, order[0, 6], 0] = NAN     # a NaN id
    data[1, order[1, 7], 3] = -INF
    data[1, order[1, 8], 1] = -INF
    data[0, order[0, 9], 2:6] = NAN   # the worst box: all NaN
    return data


def nms_cases(case):
    data = nms_data()
    for name, attrs in (('default', {}), ('thresh', dict(overlap_thresh=0.2)),
                        ('negative_thresh', dict(overlap_thresh=-0.1)),
                        ('topk', dict(topk=4)), ('valid', dict(valid_thresh=0.3)),
                        ('ids', dict(id_index=0, overlap_thresh=0.1)),
                        ('force', dict(id_index=0, force_suppress=True, overlap_thresh=0.1)),
                        ('background', dict(id_index=0, background_id=0)),
                        ('center_in', dict(in_format='center', overlap_thresh=0.1)),
                        ('center_out', dict(out_format='center')),
                        ('center_both', dict(in_format='center', out_format='corner',
                                             overlap_thresh=-0.1))):
        case(f'box_nms_{name}', 'contrib.box_nms', attrs, [data])
    case('box_nms_4d', 'contrib.box_nms', dict(overlap_thresh=0.1),
         [data.reshape(2, 1, 10, 6)])
    case('box_nms_all_nan', 'contrib.box_nms', {}, [np.full((1, 3, 6), NAN, np.float32)])
    boxes = data[..., 2:].reshape(-1, 4)
    case('box_iou', 'contrib.box_iou', {}, [boxes, boxes[:7]])
    case('box_iou_center', 'contrib.box_iou', dict(format='center'), [boxes, boxes[:7]])


# -------------------------------------------------------------------------------------------------
# MultiBoxDetection
# -------------------------------------------------------------------------------------------------

def detection_inputs():
    """cls_prob (2, 4, 10), loc_pred (2, 40), anchor (1, 10, 4) with NaN and infinities in
    class probabilities (some foreground classes, all of them, the background), offsets and
    anchors."""
    batch, classes, num = 2, 4, 10
    logits = RNG.normal(0, 1.5, (batch, classes, num))
    prob = (np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)).astype(np.float32)
    prob[0, 1, 0] = NAN               # one foreground class
    prob[0, 1:, 1] = NAN              # all foreground classes
    prob[0, 0, 2] = NAN               # the background
    prob[0, 2, 3] = INF
    prob[1, 3, 4] = NAN
    prob[1, 2, 4] = INF
    prob[1, 1:3, 5] = NAN
    prob[1, 1:, 6] = -INF
    centre = RNG.uniform(0.2, 0.8, (num, 2))
    centre[1::2] = centre[0::2] + 0.02
    half = RNG.uniform(0.1, 0.2, (num, 2))
    anchor = np.concatenate([centre - half, centre + half], axis=-1)[None].astype(np.float32)
    anchor[0, 7, 1] = NAN
    loc = RNG.normal(0, 0.5, (batch, num, 4)).astype(np.float32)
    loc[0, 3, 0] = NAN
    loc[0, 4, 2] = NAN
    loc[1, 0, 3] = INF
    loc[1, 2, 1] = NAN
    loc[1, 8, :] = NAN
    return prob, loc.reshape(batch, -1), anchor


def detection_cases(case):
    inputs = list(detection_inputs())
    for name, attrs in (('default', dict(threshold=0.05)), ('no_clip', dict(clip=False)),
                        ('force', dict(force_suppress=True, nms_threshold=0.3)),
                        ('topk', dict(nms_topk=3)), ('no_nms', dict(nms_threshold=0)),
                        ('threshold', dict(threshold=0.3, nms_threshold=0.2))):
        case(f'detection_{name}', 'contrib.MultiBoxDetection', attrs, inputs)


# -------------------------------------------------------------------------------------------------

def _op(name):
    fn = nd
    for part in name.split('.'):
        fn = getattr(fn, part)
    return fn


def main():
    cases, numbers = {}, {}

    def case(name, op, attrs, inputs):
        assert name not in cases, name
        arrays = [nd.array(x, dtype=x.dtype) for x in inputs]
        outs = _op(op)(*arrays, **attrs)
        outs = outs if isinstance(outs, list) else [outs]
        cases[name] = dict(op=op, attrs=attrs, inputs=len(inputs), outputs=len(outs))
        for i, x in enumerate(inputs):
            numbers[f'{name}:in{i}'] = x
        for k, out in enumerate(outs):
            numbers[f'{name}:out{k}'] = out.asnumpy()
        if op == 'log_softmax':
            numbers[f'{name}:softmax'] = nd.softmax(*arrays, **attrs).asnumpy()

    softmax_cases(case)
    activation_cases(case)
    sort_cases(case)
    nms_cases(case)
    detection_cases(case)
    with open(os.path.join(HERE, 'nan-cases.json'), 'w') as f:
        json.dump(dict(mxnet=mx.__version__, cases=cases), f, indent=1, sort_keys=True)
        f.write('\n')
    np.savez_compressed(os.path.join(HERE, 'nan-numbers.npz'), **numbers)


if __name__ == '__main__':
    main()
