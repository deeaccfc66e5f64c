"""Cases for the indexing operators of hybridlib/ops/gather.py, sort.py, sequence.py and
embedding.py: take, batch_take, pick, one_hot, where, gather_nd, scatter_nd, _scatter_set_nd,
topk, sort, argsort, SequenceMask/Last/Reverse, Embedding and their backward operators.

Literal arrays marked "MXNet 1.9.1" were produced by the oracle and pin its conventions.
"""
import json

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, DTypeError, MXNetError, NotSupportedError, \
    ShapeError

from harness import Case, check_case, ints, normal

I32 = np.int32


def _trunc(indices):
    return np.trunc(np.asarray(indices)).astype(np.int64)


def _fixed(indices, n, mode):
    idx = _trunc(indices)
    return np.mod(idx, n) if mode == 'wrap' else np.clip(idx, 0, n - 1)


# -------------------------------------------------------------------------------------------------
# take, batch_take, pick
# -------------------------------------------------------------------------------------------------

def _take_ref(a, indices, axis=0, mode='clip'):
    # numpy's own clip/wrap modes, on truncated indices
    return np.take(a, _trunc(indices), axis=axis, mode='clip' if mode == 'raise' else mode)


def _backward_take_ref(ograd, indices, data, axis=0, mode='clip'):
    ax = axis % data.ndim
    n = data.shape[ax]
    idx = _fixed(indices, n, mode).reshape(-1)
    g = np.moveaxis(ograd.reshape(data.shape[:ax] + (idx.size,) + data.shape[ax + 1:]), ax, 0)
    out = np.zeros(data.shape)
    view = np.moveaxis(out, ax, 0)
    for j, i in enumerate(idx):
        view[i] += g[j]
    return out


TAKE_IDX = np.array([[0.0, 3.0], [-1.0, 5.0], [1.7, -0.5]])
WRAP_IDX = np.array([-5.0, -1.0, 0.0, 2.0, 4.0, 7.0, 2.0])


def _batch_take_ref(a, indices):
    rows = a.reshape(-1, a.shape[-1])
    out = [rows[i, min(max(int(j), 0), a.shape[-1] - 1)] for i, j in enumerate(indices.ravel())]
    return np.array(out).reshape(indices.shape)


def _pick_ref(data, index, axis=-1, keepdims=False, mode='clip'):
    ax = axis % data.ndim
    moved = np.moveaxis(data, ax, -1)
    idx = _fixed(index, data.shape[ax], mode).reshape(moved.shape[:-1])
    out = np.empty(moved.shape[:-1])
    for pos in np.ndindex(*moved.shape[:-1]):
        out[pos] = moved[pos + (idx[pos],)]
    if keepdims:
        return np.expand_dims(out, ax)
    return out.reshape(out.shape or (1,))


def _backward_pick_ref(ograd, index, data, axis=-1, keepdims=False, mode='clip'):
    ax = axis % data.ndim
    out = np.zeros(data.shape)
    moved = np.moveaxis(out, ax, -1)
    idx = _fixed(index, data.shape[ax], mode).reshape(moved.shape[:-1])
    g = ograd.reshape(moved.shape[:-1])
    for pos in np.ndindex(*moved.shape[:-1]):
        moved[pos + (idx[pos],)] = g[pos]
    return out


PICK_IDX = np.array([0.0, 5.0, -1.0])

TAKE_CASES = [
    Case('take', [(4, 3), TAKE_IDX], ref=_take_ref, grad_inputs=[0], name='clip-float-idx'),
    Case('take', [(3, 4), WRAP_IDX], attrs=dict(axis=1, mode='wrap'), ref=_take_ref,
         grad_inputs=[0], name='wrap'),
    Case('take', [(2, 3, 4), ints((2, 2), 0, 3)], attrs=dict(axis=-2, mode='raise'),
         ref=_take_ref, name='raise'),
    Case('take', [(2, 5), ints((3,), -2, 7, np.int64)], attrs=dict(axis=1), ref=_take_ref,
         name='int64-idx'),
    Case('_backward_take', [(3, 2, 2), TAKE_IDX, (4, 2)], ref=_backward_take_ref,
         grad_inputs=[0]),
    Case('_backward_take', [(3, 7), WRAP_IDX, (3, 4)], attrs=dict(axis=-1, mode='wrap'),
         ref=_backward_take_ref, grad_inputs=[0], name='wrap'),
    Case('batch_take', [(3, 4), np.array([0, 5, -1], dtype=I32)], ref=_batch_take_ref,
         grad=False),
    Case('batch_take', [(2, 3, 2), np.array([[1, 0, 1], [0, 1, 1]], dtype=I32)],
         ref=_batch_take_ref, grad=False, name='3d'),
    Case('pick', [(3, 4), PICK_IDX], attrs=dict(axis=1), ref=_pick_ref, grad_inputs=[0]),
    Case('pick', [(3, 4), PICK_IDX], attrs=dict(axis=-1, mode='wrap'), ref=_pick_ref,
         grad_inputs=[0], name='wrap'),
    Case('pick', [(3, 4), np.array([[0.0, 3.0, -1.0, 1.7]])],
         attrs=dict(axis=0, keepdims=True), ref=_pick_ref, grad_inputs=[0],
         name='axis0-keepdims'),
    Case('pick', [(2, 3, 2), ints((2, 2), 0, 3)], attrs=dict(axis=-2), ref=_pick_ref,
         name='3d'),
    Case('pick', [(4,), np.array([2.0])], attrs=dict(axis=0), ref=_pick_ref, grad_inputs=[0],
         name='1d'),
    Case('choose_element_0index', [(3, 4), PICK_IDX], attrs=dict(axis=1), ref=_pick_ref,
         grad_inputs=[0], name='alias'),
    Case('_backward_pick', [(3,), PICK_IDX, (3, 4)], attrs=dict(axis=1),
         ref=_backward_pick_ref, grad_inputs=[0]),
    Case('_backward_pick', [(1, 4), np.array([[0.0, 3.0, -1.0, 1.7]]), (3, 4)],
         attrs=dict(axis=0, keepdims=True, mode='wrap'), ref=_backward_pick_ref,
         grad_inputs=[0], name='keepdims-wrap'),
]


# -------------------------------------------------------------------------------------------------
# one_hot, where
# -------------------------------------------------------------------------------------------------

def _one_hot_ref(indices, depth, on_value=1.0, off_value=0.0, dtype='float32'):
    idx = _trunc(indices)
    out = np.full(idx.shape + (depth,), off_value, dtype=np.float64)
    for pos in np.ndindex(*idx.shape):
        if 0 <= idx[pos] < depth:
            out[pos + (idx[pos],)] = on_value
    return out


def _where_ref(condition, x, y):
    cond = condition.reshape(condition.shape + (1,) * (x.ndim - condition.ndim)) != 0
    return np.where(cond, x, y)


COND = np.array([[1.0, 0.0, -2.0], [0.0, 0.5, 0.0]])

WHERE_CASES = [
    Case('one_hot', [np.array([0.0, 2.0, -1.0, 5.0, 1.7])], attrs=dict(depth=3),
         ref=_one_hot_ref, grad=False),
    Case('one_hot', [np.array([[0, 2], [1, 1]], dtype=I32)],
         attrs=dict(depth=4, on_value=0.5, off_value=-1.5, dtype='float64'), ref=_one_hot_ref,
         name='2d-float64', check_float32=False),   # dtype='float64' is float64 by design
    Case('one_hot', [np.array([0.0, 2.0])], attrs=dict(depth=3, on_value=5, off_value=-2,
                                                       dtype='int32'),
         ref=_one_hot_ref, grad=False, name='int32'),
    Case('where', [COND, (2, 3), (2, 3)], ref=_where_ref, grad_inputs=[1, 2]),
    Case('where', [np.array([1.0, 0.0]), (2, 3), (2, 3)], ref=_where_ref, grad_inputs=[1, 2],
         name='rows'),
    Case('where', [np.array([0, 3, 1], dtype=I32), (3,), (3,)], ref=_where_ref, name='1d'),
]


# -------------------------------------------------------------------------------------------------
# gather_nd, scatter_nd, _backward_gather_nd, _scatter_set_nd
# -------------------------------------------------------------------------------------------------

def _coords(indices, shape):
    idx = _trunc(indices)
    m = idx.shape[0]
    cols = idx.reshape(m, -1)
    return m, [tuple(int(c) % shape[a] for a, c in enumerate(cols[:, j]))
               for j in range(cols.shape[1])]


def _gather_nd_ref(data, indices):
    m, points = _coords(indices, data.shape)
    out = np.array([data[p] for p in points])
    return out.reshape(indices.shape[1:] + data.shape[m:])


def _scatter_ref(data, indices, shape, add):
    m, points = _coords(indices, shape)
    out = np.zeros(shape)
    values = data.reshape((len(points),) + tuple(shape[m:]))
    for p, v in zip(points, values):
        out[p] = out[p] + v if add else v
    return out


ND_IDX = np.array([[1.0, 0.0, -1.0], [2.0, 1.0, -3.0]])        # 3 points into (2, 3, ...)
ND_DUP = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 2.0]])          # (1, 0) twice

SCATTER_CASES = [
    Case('gather_nd', [(2, 3, 2), ND_IDX], ref=_gather_nd_ref, grad_inputs=[0]),
    Case('gather_nd', [(2, 3, 2), ND_DUP], ref=_gather_nd_ref, grad_inputs=[0], name='repeats'),
    Case('gather_nd', [(2, 3), np.array([[1, 0], [2, -1]], dtype=np.int64)],
         ref=_gather_nd_ref, name='points'),
    Case('gather_nd', [(2, 3, 2), np.array([[[1.0]], [[2.0]], [[0.0]]])], ref=_gather_nd_ref,
         grad_inputs=[0], name='full'),
    Case('scatter_nd', [(3, 2), ND_IDX], attrs=dict(shape=(2, 3, 2)),
         ref=lambda d, i, shape: _scatter_ref(d, i, shape, False), grad_inputs=[0]),
    Case('scatter_nd', [(2,), np.array([[1, 0], [2, 1]], dtype=I32)], attrs=dict(shape=(2, 3)),
         ref=lambda d, i, shape: _scatter_ref(d, i, shape, False), grad_inputs=[0],
         name='points'),
    Case('_backward_gather_nd', [(3, 2), ND_DUP], attrs=dict(shape=(2, 3, 2)),
         ref=lambda d, i, shape: _scatter_ref(d, i, shape, True), grad_inputs=[0]),
    Case('_scatter_set_nd', [(2, 3), (2,), np.array([[0.0, 1.0], [2.0, -3.0]])],
         attrs=dict(shape=(2, 3)), grad_inputs=[0, 1],
         ref=lambda lhs, rhs, i, shape: _set_ref(lhs, rhs, i)),
    Case('_scatter_set_nd', [(2, 3, 2), (2, 2), np.array([[1, 0], [0, 2]], dtype=I32)],
         attrs=dict(shape=(2, 3, 2)), grad_inputs=[0, 1],
         ref=lambda lhs, rhs, i, shape: _set_ref(lhs, rhs, i), name='slices'),
]


def _set_ref(lhs, rhs, indices):
    m, points = _coords(indices, lhs.shape)
    out = lhs.copy()
    for p, v in zip(points, rhs.reshape((len(points),) + lhs.shape[m:])):
        out[p] = v
    return out


# -------------------------------------------------------------------------------------------------
# topk, sort, argsort
# -------------------------------------------------------------------------------------------------

def _order(x, ascend):
    # stable both ways: sort by (value, position) or (-value, position)
    keys = [(v if ascend else -v, i) for i, v in enumerate(x)]
    return [i for _, i in sorted(keys)]


def _along(data, axis, fn):
    """Apply fn(1-D array) -> 1-D array along ``axis`` (None: the flattened array)."""
    if axis is None:
        return np.asarray(fn(data.ravel()))
    return np.apply_along_axis(lambda v: np.asarray(fn(v)), axis % data.ndim, data)


def _topk_ref(data, axis=-1, k=1, ret_typ='indices', is_ascend=False, dtype='float32'):
    n = data.size if axis is None else data.shape[axis]
    k = n if k <= 0 else k
    idx = _along(data, axis, lambda v: _order(v, is_ascend)[:k])
    values = _along(data, axis, lambda v: v[_order(v, is_ascend)[:k]])
    if ret_typ == 'mask':
        def mask(v):
            m = np.zeros(v.shape)
            m[_order(v, is_ascend)[:k]] = 1
            return m
        return _along(data, axis, mask).reshape(data.shape)
    if ret_typ == 'value':
        return values
    if ret_typ == 'both':
        return [values, idx]
    return idx


def _sort_ref(data, axis=-1, is_ascend=True):
    return _along(data, axis, lambda v: v[_order(v, is_ascend)])


def _argsort_ref(data, axis=-1, is_ascend=True, dtype='float32'):
    return _along(data, axis, lambda v: _order(v, is_ascend))


def _backward_topk_ref(ograd, indices, data, axis=-1, **_):
    out = np.zeros(data.size if axis is None else data.shape)
    if axis is None:
        np.add.at(out, _trunc(indices), ograd)
        return out.reshape(data.shape)
    ax = axis % data.ndim
    moved = np.moveaxis(out, ax, -1)
    idx = np.moveaxis(_trunc(indices), ax, -1)
    g = np.moveaxis(ograd, ax, -1)
    for pos in np.ndindex(*idx.shape[:-1]):
        for j in range(idx.shape[-1]):
            moved[pos + (idx[pos + (j,)],)] += g[pos + (j,)]
    return out


def _take_along_ref(data, indices, axis=-1):
    if axis is None:
        return data.ravel()[_trunc(indices)]
    return np.take_along_axis(data, _trunc(indices), axis=axis)


TIES = np.array([[3.0, 1.0, 2.0, 1.0, 5.0], [0.0, 0.0, 4.0, 4.0, 2.0]])

SORT_CASES = [
    Case('topk', [normal((3, 5))], ref=_topk_ref, name='default-indices'),
    Case('topk', [normal((3, 5))], attrs=dict(k=2, ret_typ='value'), ref=_topk_ref,
         name='value'),
    Case('topk', [normal((3, 5))], attrs=dict(k=3, ret_typ='both', is_ascend=True),
         ref=_topk_ref, name='both-ascend'),
    Case('topk', [normal((3, 5))], attrs=dict(k=2, ret_typ='mask'), ref=_topk_ref,
         name='mask'),
    Case('topk', [normal((3, 4))], attrs=dict(k=2, axis=0, ret_typ='both', dtype='int32'),
         ref=_topk_ref, name='axis0-int32'),
    Case('topk', [normal((2, 4, 3))], attrs=dict(k=0, axis=1, ret_typ='value'), ref=_topk_ref,
         name='k0-3d'),
    Case('topk', [normal((3, 4))], attrs=dict(k=3, axis=None, ret_typ='both'), ref=_topk_ref,
         name='flat'),
    Case('topk', [normal((3, 4))], attrs=dict(k=3, axis=None, ret_typ='mask'), ref=_topk_ref,
         name='flat-mask'),
    Case('topk', [TIES], attrs=dict(k=0, ret_typ='both'), ref=_topk_ref, grad=False,
         name='ties'),
    Case('_backward_topk', [(3, 2), np.array([[4.0, 0.0], [1.0, 3.0], [2.0, 1.0]]), (3, 5)],
         ref=_backward_topk_ref, grad_inputs=[0]),
    Case('_backward_topk', [(3,), np.array([7.0, 0.0, 4.0]), (2, 4)], attrs=dict(axis=None),
         ref=_backward_topk_ref, grad_inputs=[0], name='flat'),
    Case('_take_along_axis', [(3, 4), np.array([[1, 1, 0], [3, 2, 3], [0, 0, 0]], dtype=I32)],
         attrs=dict(axis=1), ref=_take_along_ref, grad_inputs=[0]),
    Case('_take_along_axis', [(2, 3), np.array([5, 0, 5], dtype=np.int64)],
         attrs=dict(axis=None), ref=_take_along_ref, grad_inputs=[0], name='flat'),
    Case('sort', [normal((3, 4))], ref=_sort_ref),
    Case('sort', [normal((3, 4))], attrs=dict(axis=0, is_ascend=False), ref=_sort_ref,
         name='axis0-descend'),
    Case('sort', [normal((2, 3))], attrs=dict(axis=None), ref=_sort_ref, name='flat'),
    Case('argsort', [normal((3, 4))], ref=_argsort_ref),
    Case('argsort', [normal((3, 4))], attrs=dict(axis=0, is_ascend=False, dtype='int32'),
         ref=_argsort_ref, name='axis0-descend-int32'),
    Case('argsort', [normal((2, 3))], attrs=dict(axis=None), ref=_argsort_ref, name='flat'),
    Case('argsort', [TIES], attrs=dict(is_ascend=False), ref=_argsort_ref, grad=False,
         name='ties'),
]


# -------------------------------------------------------------------------------------------------
# SequenceMask, SequenceLast, SequenceReverse
# -------------------------------------------------------------------------------------------------

def _seq_lengths(sequence_length, low, high):
    return [min(max(int(v), low), high) for v in np.trunc(sequence_length)]


def _mask_ref(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0):
    out = data.copy()
    if not use_sequence_length:
        return out
    for b, n in enumerate(_trunc(sequence_length)):
        if axis == 0:
            out[max(n, 0):, b] = value
        else:
            out[b, max(n, 0):] = value
    return out


def _last_ref(data, sequence_length=None, use_sequence_length=False, axis=0):
    steps = data.shape[axis]
    lengths = (_seq_lengths(sequence_length, 1, steps) if use_sequence_length
               else [steps] * data.shape[1 - axis])
    rows = [data[n - 1, b] if axis == 0 else data[b, n - 1] for b, n in enumerate(lengths)]
    return np.array(rows)


def _backward_last_ref(ograd, data, sequence_length=None, use_sequence_length=False, axis=0):
    steps = data.shape[axis]
    lengths = (_seq_lengths(sequence_length, 1, steps) if use_sequence_length
               else [steps] * data.shape[1 - axis])
    out = np.zeros(data.shape)
    for b, n in enumerate(lengths):
        if axis == 0:
            out[n - 1, b] = ograd[b]
        else:
            out[b, n - 1] = ograd[b]
    return out


def _reverse_ref(data, sequence_length=None, use_sequence_length=False, axis=0):
    steps = data.shape[0]
    if not use_sequence_length:
        return data[::-1].copy()
    out = data.copy()
    for b, n in enumerate(_seq_lengths(sequence_length, 0, steps)):
        out[:n, b] = data[:n, b][::-1]
    return out


LENGTHS = np.array([1.0, 4.0, 2.5])

SEQUENCE_CASES = [
    Case('SequenceMask', [(4, 3, 2), LENGTHS], attrs=dict(use_sequence_length=True, value=-1),
         ref=_mask_ref, grad_inputs=[0]),
    Case('SequenceMask', [(3, 4), np.array([0, 2, 5], dtype=I32)],
         attrs=dict(use_sequence_length=True, axis=1), ref=_mask_ref, grad_inputs=[0],
         name='axis1'),
    Case('SequenceMask', [(2, 3)], attrs=dict(value=7), ref=_mask_ref, name='no-lengths'),
    Case('SequenceLast', [(4, 3, 2), LENGTHS], attrs=dict(use_sequence_length=True),
         ref=_last_ref, grad_inputs=[0]),
    Case('SequenceLast', [(3, 4), np.array([1, 2, 4], dtype=I32)],
         attrs=dict(use_sequence_length=True, axis=1), ref=_last_ref, grad_inputs=[0],
         name='axis1'),
    Case('SequenceLast', [(3, 2, 2)], ref=_last_ref, name='no-lengths'),
    Case('_backward_SequenceLast', [(3, 2), (4, 3, 2), LENGTHS],
         attrs=dict(use_sequence_length=True), ref=_backward_last_ref, grad_inputs=[0]),
    Case('_backward_SequenceLast', [(2,), (2, 3)], attrs=dict(axis=1),
         ref=_backward_last_ref, grad_inputs=[0], name='no-lengths'),
    Case('SequenceReverse', [(4, 3, 2), np.array([0.0, 4.0, 2.5])],
         attrs=dict(use_sequence_length=True), ref=_reverse_ref, grad_inputs=[0]),
    Case('SequenceReverse', [(3, 2)], ref=_reverse_ref, name='no-lengths'),
]


# -------------------------------------------------------------------------------------------------
# Embedding
# -------------------------------------------------------------------------------------------------

def _embedding_ref(data, weight, input_dim, output_dim, **_):
    rows = np.clip(_trunc(data), 0, input_dim - 1)
    return weight[rows]


def _backward_embedding_ref(ograd, data, input_dim, output_dim, **_):
    rows = np.clip(_trunc(data), 0, input_dim - 1).ravel()
    out = np.zeros((input_dim, output_dim))
    for r, g in zip(rows, ograd.reshape(-1, output_dim)):
        out[r] += g
    return out


EMB = dict(input_dim=4, output_dim=3)

EMBEDDING_CASES = [
    Case('Embedding', [np.array([0.0, 3.0, -1.0, 4.0, 1.7, 3.0]), (4, 3)], attrs=EMB,
         ref=_embedding_ref, grad_inputs=[1]),
    Case('Embedding', [ints((2, 3), 0, 4), (4, 3)], attrs=dict(EMB, sparse_grad=True),
         ref=_embedding_ref, name='int-2d'),
    Case('_backward_Embedding', [(2, 3, 3), np.array([[0.0, 3.0, 3.0], [5.0, -1.0, 1.0]])],
         attrs=EMB, ref=_backward_embedding_ref, grad_inputs=[0]),
]

CASES = TAKE_CASES + WHERE_CASES + SCATTER_CASES + SORT_CASES + SEQUENCE_CASES + EMBEDDING_CASES


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_indexing(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet's conventions, pinned with values from MXNet 1.9.1
# -------------------------------------------------------------------------------------------------

A = np.arange(12, dtype=np.float32).reshape(3, 4)
OOB = nd.array([-5, -1, 0, 2, 3, 4, 7])


def test_take_modes_match_mxnet():
    # MXNet 1.9.1: clip sends negative indices to 0, wrap takes them modulo the axis size
    assert nd.take(nd.array(A), OOB, axis=0).asnumpy()[:, 0].tolist() == [0, 0, 0, 8, 8, 8, 8]
    assert nd.take(nd.array(A), OOB, axis=0, mode='wrap').asnumpy()[:, 0].tolist() == \
        [4, 8, 0, 8, 0, 4, 4]
    assert nd.take(nd.array(A), OOB, axis=1).asnumpy()[0].tolist() == [0, 0, 0, 2, 3, 3, 3]
    assert nd.take(nd.array(A), OOB, axis=1, mode='wrap').asnumpy()[0].tolist() == \
        [3, 3, 0, 2, 3, 0, 3]
    frac = nd.array([0.5, 1.7, -0.5, -1.5, 4.5])
    assert nd.take(nd.array(A), frac, axis=1, mode='wrap').asnumpy()[0].tolist() == \
        [0, 1, 0, 3, 0]
    out = nd.take(nd.array(A, dtype='int32'), nd.array([0, 1], dtype='int64'))
    assert out.dtype == np.int32


def test_take_gradient_matches_mxnet():
    for mode, expected in (('clip', [3, 0, 1, 1]), ('wrap', [2, 1, 1, 1])):
        x = nd.array(A)
        x.attach_grad()
        with autograd.record():
            y = nd.take(x, nd.array([0, 0, -1, 5, 2]), axis=1, mode=mode)
        y.backward(nd.ones_like(y))
        assert x.grad.asnumpy()[0].tolist() == expected


def test_take_raise_mode():
    assert nd.take(nd.array(A), nd.array([0, 2]), mode='raise').shape == (2, 4)
    for bad in ([0, 3], [-1]):
        with pytest.raises(MXNetError, match='out of bound'):
            nd.take(nd.array(A), nd.array(bad), mode='raise')
    with pytest.raises(AttributeParseError, match='mode'):
        nd.take(nd.array(A), nd.array([0]), mode='foo')
    with pytest.raises(ShapeError, match='take'):
        nd.take(nd.array(A), nd.array([0]), axis=2)


def test_pick_conventions():
    # MXNet 1.9.1
    assert nd.pick(nd.array(A), nd.array([0, 5, -1]), axis=1).asnumpy().tolist() == [0, 7, 8]
    assert nd.pick(nd.array(A), nd.array([0, 5, -1]), axis=1, mode='wrap').asnumpy().tolist() \
        == [0, 5, 11]
    assert nd.pick(nd.array(A), nd.array([0, 5, -1, 1.7]), axis=0).asnumpy().tolist() == \
        [0, 9, 2, 7]
    assert nd.pick(nd.array(A), nd.array([0, 1, 2]), axis=1, keepdims=True).shape == (3, 1)
    # the index may also come in the other form (with or without the axis as 1)
    x = nd.array(A)
    x.attach_grad()
    for index, keepdims, shape in (([[0], [1], [2]], False, (3,)), ([0, 1, 2], True, (3, 1))):
        with autograd.record():
            out = nd.pick(x, nd.array(index), axis=1, keepdims=keepdims)
        out.backward(nd.ones_like(out))
        assert out.shape == shape and out.asnumpy().ravel().tolist() == [0, 5, 10]
        assert x.grad.asnumpy().tolist() == np.eye(3, 4).tolist()
    assert nd.pick(nd.array([1, 2, 3]), nd.array([1]), axis=0).shape == (1,)
    with pytest.raises(ShapeError, match='index'):
        nd.pick(nd.array(A), nd.array([0, 1]), axis=1)
    with pytest.raises(NotSupportedError, match='axis=None'):
        nd.pick(nd.array(A), nd.array([0]), axis=None)
    assert sym.pick(sym.var('d'), sym.var('i'), axis=1).infer_shape(d=(3, 4))[0] == \
        [(3, 4), (3,)]


def test_batch_take_rules():
    out = nd.batch_take(nd.array(np.arange(24).reshape(3, 8)),
                        nd.array([0, 9, -1], dtype='int32'))
    assert out.asnumpy().tolist() == [0, 15, 16]           # MXNet 1.9.1
    with pytest.raises(DTypeError, match='int32'):
        nd.batch_take(nd.array(A), nd.array([0, 1, 2]))
    with pytest.raises(ShapeError, match='one element per row'):
        nd.batch_take(nd.array(A), nd.array([0, 1], dtype='int32'))
    with pytest.raises(ShapeError, match='2 axes'):
        nd.batch_take(nd.array([1, 2]), nd.array([0], dtype='int32'))
    x = nd.array(A)
    x.attach_grad()
    with autograd.record():
        y = nd.batch_take(x, nd.array([0, 1, 2], dtype='int32'))
    with pytest.raises(NotSupportedError, match='pick'):
        y.backward()


def test_one_hot_conventions():
    out = nd.one_hot(nd.array([0, 2, -1, 5, 1.7]), depth=3)
    assert out.dtype == np.float32
    assert out.asnumpy().tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0], [0, 1, 0]]
    # MXNet 1.9.1 casts on/off values to the dtype like C: 300.7 -> 44, -1 -> 255 in uint8
    out = nd.one_hot(nd.array([0, 2]), depth=3, dtype='uint8', on_value=300.7, off_value=-1)
    assert out.dtype == np.uint8
    assert out.asnumpy().tolist() == [[44, 255, 255], [255, 255, 44]]
    assert nd.one_hot(nd.array([1, 0]), depth=0).shape == (2, 0)
    with pytest.raises(AttributeParseError, match='depth'):
        nd.one_hot(nd.array([1]), depth=-1)
    with pytest.raises(AttributeParseError, match='dtype'):
        nd.one_hot(nd.array([1]), depth=2, dtype='bool')


def test_where_rules():
    x, y = nd.array(np.arange(6).reshape(2, 3)), -nd.array(np.arange(6).reshape(2, 3))
    # a NaN condition counts as true (MXNet 1.9.1)
    assert nd.where(nd.array([np.nan, 0]), x, y).asnumpy().tolist() == \
        [[0, 1, 2], [-3, -4, -5]]
    with pytest.raises(ShapeError, match='condition'):
        nd.where(nd.array([1, 0, 1]), x, y)
    with pytest.raises(ShapeError):
        nd.where(nd.array([1, 0]), x, nd.array([1, 2, 3]))
    with pytest.raises(DTypeError, match='same dtype'):
        nd.where(nd.array([1, 0]), x.astype('int32'), y)
    c = nd.array([[1, 0, 2], [0, -1, 0.5]])
    c.attach_grad()
    x.attach_grad()
    with autograd.record():
        out = nd.where(c, x, y)
    out.backward(nd.ones_like(out) * 3)
    assert x.grad.asnumpy().tolist() == [[3, 0, 3], [0, 3, 3]]
    assert c.grad.asnumpy().tolist() == [[0, 0, 0], [0, 0, 0]]
    s = sym.where(sym.var('c'), sym.var('x'), sym.var('y'))
    assert s.infer_shape(c=(2,), x=(2, 3))[0] == [(2,), (2, 3), (2, 3)]


def test_gather_scatter_nd_rules():
    d = nd.array(np.arange(24).reshape(2, 3, 4))
    # MXNet 1.9.1: negative indices count from the end, fractions truncate
    assert nd.gather_nd(d, nd.array([[-1, -2], [-1, -3]])).asnumpy()[:, 0].tolist() == [20, 0]
    assert nd.gather_nd(d, nd.array([[0.7, 1.0], [2.0, 1.2]])).asnumpy()[:, 0].tolist() == \
        [8, 16]
    for bad in ([[-3], [0]], [[1.7], [0]], [[0], [3]]):
        with pytest.raises(MXNetError, match='out of bounds'):
            nd.gather_nd(d, nd.array(bad))
    with pytest.raises(ShapeError, match='at least 2 axes'):
        nd.gather_nd(d, nd.array([1, 0]))
    with pytest.raises(ShapeError, match='exceed'):
        nd.gather_nd(d, nd.array([[1], [2], [3], [0]]))
    with pytest.raises(ShapeError, match='data'):
        nd.scatter_nd(nd.array([1, 2]), nd.array([[0, 1]]), shape=(3, 2))
    out = nd._internal._backward_gather_nd(nd.array([2, 3, 5]), nd.array([[1, 1, 0], [1, 1, 0]]),
                                           shape=(2, 2))
    assert out.asnumpy().tolist() == [[5, 0], [0, 5]]       # repeats add up (MXNet 1.9.1)
    with pytest.raises(ShapeError, match='shape attribute'):
        nd._internal._scatter_set_nd(nd.ones((2, 3)), nd.array([7, 8]),
                                     nd.array([[0, 1], [2, 0]]), shape=(3, 3))
    assert sym.scatter_nd(sym.var('d'), sym.var('i'), shape=(2, 3)).infer_shape(i=(2, 4))[0] \
        == [(4,), (2, 4)]


def test_topk_conventions():
    x = nd.array(TIES)
    # MXNet 1.9.1: indices (the default) in float32, k=1
    out = nd.topk(x)
    assert out.dtype == np.float32 and out.asnumpy().tolist() == [[4], [2]]
    values, indices = nd.topk(x, k=3, ret_typ='both', is_ascend=True)
    assert values.asnumpy().tolist() == [[1, 1, 2], [0, 0, 2]]
    assert indices.asnumpy().tolist() == [[1, 3, 2], [0, 1, 4]]
    values, indices = nd.topk(x, k=0, ret_typ='both')
    assert indices.asnumpy().tolist() == [[4, 0, 2, 1, 3], [2, 3, 4, 0, 1]]
    values, indices = nd.topk(x, k=3, axis=None, ret_typ='both')
    assert values.asnumpy().tolist() == [5, 4, 4] and indices.asnumpy().tolist() == [4, 7, 8]
    assert nd.topk(x, k=2, ret_typ='mask', dtype='int32').dtype == np.float32
    assert nd.topk(x.astype('float64'), k=2, ret_typ='mask').dtype == np.float64
    v, i = nd.topk(x.astype('int32'), k=2, ret_typ='both')
    assert v.dtype == np.int32 and i.dtype == np.float32
    assert nd.topk(x, k=2, dtype='int32').dtype == np.int32
    big = nd.topk(nd.array(np.arange(300)), k=3, dtype='uint8')
    assert big.asnumpy().tolist() == [43, 42, 41]           # 299, 298, 297 wrapped
    with pytest.raises(ShapeError, match='k'):
        nd.topk(x, k=9)
    with pytest.raises(ShapeError, match='axis'):
        nd.topk(x, axis=2)
    with pytest.raises(AttributeParseError, match='dtype'):
        nd.topk(x, dtype='int8')


def test_topk_sort_symbols():
    with mx.name.NameManager():
        _check_topk_sort_symbols()


def _check_topk_sort_symbols():
    d = sym.var('d')
    s = sym.topk(d, k=2, ret_typ='value')
    assert s.list_outputs() == ['topk0_output0']
    assert json.loads(s.tojson())['node_row_ptr'] == [0, 1, 3]      # MXNet 1.9.1: 2 outputs
    assert sym.topk(d, ret_typ='both').list_outputs() == ['topk1_output0', 'topk1_output1']
    assert sym.topk(d, ret_typ='mask').list_outputs() == ['topk2_output']
    assert sym.sort(d).list_outputs() == ['sort0_output0']
    assert sym.argsort(d).list_outputs() == ['argsort0_output']
    flat = sym.topk(d, axis=None)
    assert json.loads(flat.tojson())['nodes'][1]['attrs'] == {'axis': 'None'}
    again = sym.fromjson(flat.tojson())
    assert again.infer_shape(d=(3, 4))[1] == [(1,)]


def test_sort_argsort_conventions():
    x = nd.array(TIES)
    assert nd.sort(x, is_ascend=False).asnumpy().tolist() == [[5, 3, 2, 1, 1], [4, 4, 2, 0, 0]]
    assert nd.sort(x, axis=None).shape == (10,)
    # MXNet 1.9.1: stable in both directions, float32 indices by default
    assert nd.argsort(x).asnumpy().tolist() == [[1, 3, 2, 0, 4], [0, 1, 4, 2, 3]]
    assert nd.argsort(x, is_ascend=False).asnumpy().tolist() == \
        [[4, 0, 2, 1, 3], [2, 3, 4, 0, 1]]
    assert nd.argsort(x, axis=None).asnumpy().tolist() == [5, 6, 1, 3, 2, 9, 0, 7, 8, 4]
    assert nd.argsort(x.astype('int32')).dtype == np.float32
    assert nd.argsort(x, dtype='int32').dtype == np.int32
    assert nd.sort(nd.array([3, 1, 2, 250], dtype='uint8'), is_ascend=False).asnumpy().tolist() \
        == [250, 3, 2, 1]
    y = nd.array(np.random.RandomState(0).permutation(12).reshape(3, 4))
    y.attach_grad()
    with autograd.record():
        v = nd.sort(y, axis=None)
    v.backward(nd.array(np.arange(12)))
    assert y.grad.asnumpy().tolist() == [[6, 11, 4, 10], [2, 8, 1, 7], [9, 3, 0, 5]]


def test_topk_gradients_match_mxnet():
    y = nd.array(np.random.RandomState(0).permutation(12).reshape(3, 4))
    y.attach_grad()
    with autograd.record():
        v, _ = nd.topk(y, k=2, ret_typ='both')
    v.backward(nd.ones_like(v))
    assert y.grad.asnumpy().tolist() == [[0, 1, 0, 1], [0, 1, 0, 1], [1, 0, 0, 1]]
    for ret_typ in ('indices', 'mask'):
        with autograd.record():
            out = nd.topk(y, k=2, ret_typ=ret_typ)
        out.backward(nd.ones_like(out))
        assert not y.grad.asnumpy().any()
    with autograd.record():
        out = nd.argsort(y)
    out.backward(nd.ones_like(out))
    assert not y.grad.asnumpy().any()


def test_sequence_conventions():
    x = nd.array(np.arange(24).reshape(4, 3, 2))
    lengths = nd.array([0, 7, 2.5])
    # MXNet 1.9.1: lengths truncate; value is cast to the data's dtype
    out = nd.SequenceMask(x, lengths, use_sequence_length=True, value=-1).asnumpy()
    assert out[:, :, 0].tolist() == [[-1, 2, 4], [-1, 8, 10], [-1, 14, -1], [-1, 20, -1]]
    out = nd.SequenceMask(x.astype('int32'), nd.array([1, 4, 2]), use_sequence_length=True,
                          value=-1.7)
    assert out.dtype == np.int32 and out.asnumpy()[1, 0, 0] == -1
    last = nd.SequenceLast(x, nd.array([1, 4, 2]), use_sequence_length=True)
    assert last.asnumpy().tolist() == [[0, 1], [20, 21], [10, 11]]
    last = nd.SequenceLast(x, nd.array([1, 2, 3, 0]), use_sequence_length=True, axis=1)
    assert last.asnumpy()[:3].tolist() == [[0, 1], [8, 9], [16, 17]]
    assert nd.SequenceLast(x).asnumpy().tolist() == [[18, 19], [20, 21], [22, 23]]
    rev = nd.SequenceReverse(x, nd.array([1, 4, 2]), use_sequence_length=True).asnumpy()
    assert rev[:, :, 0].tolist() == [[0, 20, 10], [6, 14, 4], [12, 8, 16], [18, 2, 22]]
    with pytest.raises(AttributeParseError, match='sequence_length'):
        nd.SequenceMask(x, lengths, value=-1)       # lengths given without use_sequence_length
    with pytest.raises(AttributeParseError, match='axis'):
        nd.SequenceMask(x, axis=2)
    with pytest.raises(AttributeParseError, match='axis'):
        nd.SequenceReverse(x, axis=1)
    with pytest.raises(ShapeError, match='2 axes'):
        nd.SequenceMask(nd.array([1, 2, 3]))
    with pytest.raises(ShapeError, match='sequence_length'):
        nd.SequenceMask(x, nd.array([1, 2]), use_sequence_length=True)
    s = sym.SequenceLast(sym.var('d'), sym.var('l'), use_sequence_length=True)
    assert s.list_arguments() == ['d', 'l']
    assert s.infer_shape(d=(4, 3, 2)) == ([(4, 3, 2), (3,)], [(3, 2)], [])
    assert s.infer_type(d='float16')[0] == [np.float16, np.float16]
    assert sym.SequenceLast(sym.var('d')).list_arguments() == ['d']


def test_embedding_conventions():
    w = nd.array(np.arange(8).reshape(4, 2))
    out = nd.Embedding(nd.array([0, 3, -1, 4, 1.7, -0.5]), w, input_dim=4, output_dim=2)
    assert out.asnumpy()[:, 0].tolist() == [0, 6, 0, 6, 2, 0]    # MXNet 1.9.1: clipped
    assert nd.Embedding(nd.array([0, 3]), w.astype('float64'), input_dim=4,
                        output_dim=2).dtype == np.float64
    ww = w.copy()
    ww.attach_grad()
    d = nd.array([0, 5, -1, 1])
    d.attach_grad()
    with autograd.record():
        o = nd.Embedding(d, ww, input_dim=4, output_dim=2)
    o.backward(nd.ones_like(o))
    assert ww.grad.asnumpy()[:, 0].tolist() == [2, 1, 0, 1]
    assert not d.grad.asnumpy().any()                    # no gradient for the indices
    with pytest.raises(ShapeError, match='weight'):
        nd.Embedding(nd.array([0, 3]), w, input_dim=5, output_dim=2)
    s = sym.Embedding(sym.var('d'), sym.var('w'), input_dim=4, output_dim=2)
    assert s.infer_shape(d=(3, 5)) == ([(3, 5), (4, 2)], [(3, 5, 2)], [])
    assert s.infer_type(d='int32')[0] == [np.int32, np.float32]
    assert s.infer_type(d='float32', w='float64')[1] == [np.float64]


def test_gradient_graph_of_gathers():
    """The backward graph of a composition of gathers runs (shapes known only at bind)."""
    data, weight = sym.var('data'), sym.var('weight')
    emb = sym.Embedding(data, weight, input_dim=5, output_dim=3)
    out = sym.topk(sym.pick(emb, sym.var('idx'), axis=2), k=2, ret_typ='value')
    w = nd.array(np.random.RandomState(1).uniform(size=(5, 3)))
    args = {'data': nd.array([[0, 4, 2], [1, 1, 3]]), 'weight': w,
            'idx': nd.array([[0, 1, 2], [2, 1, 0]])}
    grad = nd.zeros((5, 3))
    exe = out.bind(mx.cpu(), args, args_grad={'weight': grad})
    exe.forward(is_train=True)
    exe.backward([nd.ones((2, 2))])
    w.attach_grad()
    with autograd.record():
        y = nd.topk(nd.pick(nd.Embedding(args['data'], w, input_dim=5, output_dim=3),
                            args['idx'], axis=2), k=2, ret_typ='value')
    y.backward(nd.ones((2, 2)))
    np.testing.assert_allclose(grad.asnumpy(), w.grad.asnumpy())
    assert grad.asnumpy().sum() == 4
