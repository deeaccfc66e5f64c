"""Cases for hybridlib/ops/shape.py (shape manipulation); slice, slice_axis, slice_like,
tile, repeat and Pad are in test_slicing.py, which uses the checks defined here. The
partial-shape, convention, aliasing and indexing tests below cover both families.

Literal shapes, attribute strings and error conditions below were obtained from MXNet 1.9.1.
"""
import json

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, MXNetError, ShapeError

from harness import Case, check_case


def _split_ref(x, num_outputs, axis=1, squeeze_axis=False):
    parts = np.split(x, num_outputs, axis=axis)
    if squeeze_axis:
        parts = [p.reshape(1) if x.ndim == 1 else np.squeeze(p, axis=axis) for p in parts]
    return parts


def _split_v2_ref(x, indices=(), axis=1, squeeze_axis=False, sections=0):
    parts = np.array_split(x, sections, axis=axis) if sections else \
        np.split(x, list(indices[1:]), axis=axis)
    if squeeze_axis:
        parts = [np.squeeze(p, axis=axis) for p in parts]
    return parts


def _d2s_ref(x, block_size):
    n, c, h, w = x.shape
    b = block_size
    out = np.empty((n, c // (b * b), h * b, w * b))
    for ni, ci, hi, wi in np.ndindex(*out.shape):
        i, j = hi % b, wi % b
        out[ni, ci, hi, wi] = x[ni, (i * b + j) * (c // (b * b)) + ci, hi // b, wi // b]
    return out


def _s2d_ref(x, block_size):
    n, c, h, w = x.shape
    b = block_size
    out = np.empty((n, c * b * b, h // b, w // b))
    for ni, ci, hi, wi in np.ndindex(*x.shape):
        i, j = hi % b, wi % b
        out[ni, (i * b + j) * c + ci, hi // b, wi // b] = x[ni, ci, hi, wi]
    return out


def _diag_ref(x, k=0, axis1=0, axis2=1):
    if x.ndim == 1:
        return np.diag(x, k)
    return np.diagonal(x, k, axis1, axis2)


def _backward_diag_ref(g, data, k=0, axis1=0, axis2=1):
    if data.ndim == 1:
        return np.diagonal(g, k)
    out = np.zeros(data.shape)
    moved = np.moveaxis(out, (axis1 % data.ndim, axis2 % data.ndim), (-2, -1))
    for i in range(g.shape[-1]):
        moved[..., i + max(-k, 0), i + max(k, 0)] = g[..., i]
    return out


X234 = (2, 3, 4)

RESHAPE_CASES = [
    Case('Reshape', [X234], dict(shape=(0, -1)), lambda x, **_: x.reshape(2, 12)),
    Case('Reshape', [X234], dict(shape=(-2,)), lambda x, **_: x, name='copy_rest'),
    Case('Reshape', [X234], dict(shape=(-3, 4)), lambda x, **_: x.reshape(6, 4), name='merge'),
    Case('Reshape', [X234], dict(shape=(-4, 1, 2, -2)), lambda x, **_: x.reshape(1, 2, 3, 4),
         name='split'),
    Case('Reshape', [X234], dict(shape=(2, -4, -1, 3, -2)),
         lambda x, **_: x.reshape(2, 1, 3, 4), name='split_infer'),
    Case('Reshape', [X234], dict(shape=(0, -1), reverse=True),
         lambda x, **_: x.reshape(3, 8), name='reverse'),
    Case('reshape', [X234], dict(shape=(4, 6)), lambda x, **_: x.reshape(4, 6), name='alias'),
    Case('Reshape', [X234], dict(target_shape=(6, 0)), lambda x, **_: x.reshape(6, 4),
         name='target_shape'),
    Case('Reshape', [X234], dict(target_shape=(5, 0), keep_highest=True),
         lambda x, **_: x.reshape(2, 12), name='keep_highest'),
    Case('Flatten', [(2, 3, 2)], {}, lambda x: x.reshape(2, 6)),
    Case('flatten', [(4,)], {}, lambda x: x.reshape(4, 1), name='1d'),
    Case('transpose', [X234], dict(axes=(1, 2, 0)), lambda x, axes: x.transpose(axes)),
    Case('transpose', [X234], {}, lambda x: x.transpose(), name='reverse'),
    Case('expand_dims', [(2, 3)], dict(axis=-1), lambda x, axis: x[:, :, None]),
    Case('expand_dims', [(2, 3)], dict(axis=0), lambda x, axis: x[None], name='front'),
    Case('squeeze', [(1, 3, 1)], {}, lambda x: x.reshape(3)),
    Case('squeeze', [(1, 3, 1)], dict(axis=(2,)), lambda x, axis: x.reshape(1, 3),
         name='axis'),
    Case('squeeze', [(1, 1)], {}, lambda x: x.reshape(1), name='all_gives_1'),
    Case('squeeze', [(1, 3)], dict(axis=()), lambda x, axis: x, name='empty_axis'),
    Case('SwapAxis', [X234], dict(dim1=-1, dim2=0), lambda x, dim1, dim2: x.swapaxes(2, 0)),
    Case('swapaxes', [X234], dict(dim1=1, dim2=2), lambda x, dim1, dim2: x.swapaxes(1, 2),
         name='alias'),
    Case('reverse', [X234], dict(axis=(0, 2)), lambda x, axis: x[::-1, :, ::-1]),
    Case('flip', [(2, 3)], dict(axis=(1, 1)), lambda x, axis: x, name='twice'),
    Case('reshape_like', [(2, 6), (3, 4)], {}, lambda a, b: a.reshape(3, 4)),
    Case('reshape_like', [(6, 2), (3, 2, 2)],
         dict(lhs_begin=0, lhs_end=1, rhs_begin=0, rhs_end=2),
         lambda a, b, **_: a.reshape(3, 2, 2), name='ranges'),
    Case('reshape_like', [X234, (6, 2, 2)], dict(lhs_begin=-1, rhs_begin=1),
         lambda a, b, **_: a.reshape(2, 3, 2, 2), name='negative'),
]

JOIN_CASES = [
    Case('Concat', [(2, 1), (2, 3), (2, 2)], dict(dim=1),
         lambda *xs, dim: np.concatenate(xs, axis=dim)),
    Case('concat', [(2, 3), (1, 3)], dict(dim=-2),
         lambda *xs, dim: np.concatenate(xs, axis=dim), name='alias'),
    Case('Concat', [(2, 3)], dict(dim=0), lambda x, dim: x, name='one'),
    Case('stack', [(2, 3), (2, 3), (2, 3)], dict(axis=1),
         lambda *xs, axis: np.stack(xs, axis=axis)),
    Case('stack', [(2, 3), (2, 3)], dict(axis=-1),
         lambda *xs, axis: np.stack(xs, axis=axis), name='last'),
    Case('SliceChannel', [(2, 6)], dict(num_outputs=3), _split_ref),
    Case('split', [(3, 2)], dict(num_outputs=3, axis=0, squeeze_axis=True), _split_ref,
         name='squeeze'),
    Case('split', [(3,)], dict(num_outputs=3, axis=0, squeeze_axis=True), _split_ref,
         name='squeeze_1d'),
    Case('split', [(2, 4)], dict(num_outputs=2, axis=-1), _split_ref, name='negative'),
    Case('split', [(2, 3)], dict(num_outputs=1, axis=0), _split_ref, name='one'),
    Case('_split_v2', [(2, 6)], dict(indices=(0, 1, 4), axis=1), _split_v2_ref),
    Case('_split_v2', [(2, 6)], dict(indices=(), sections=4, axis=1), _split_v2_ref,
         name='sections'),
    Case('_split_v2', [(2, 3)], dict(indices=(), sections=3, axis=-1, squeeze_axis=True),
         _split_v2_ref, name='squeeze'),
]

OTHER_CASES = [
    Case('depth_to_space', [(1, 8, 2, 1)], dict(block_size=2), _d2s_ref),
    Case('space_to_depth', [(1, 2, 2, 4)], dict(block_size=2), _s2d_ref),
    Case('shape_array', [X234], {}, lambda x: np.array(x.shape, dtype=np.int64)),
    Case('size_array', [X234], {}, lambda x: np.array([x.size], dtype=np.int64)),
    Case('diag', [(3,)], dict(k=1), _diag_ref),
    Case('diag', [(3,)], dict(k=-2), _diag_ref, name='1d_below'),
    Case('diag', [(3, 4)], dict(k=1), _diag_ref, name='2d'),
    Case('diag', [(3, 4)], dict(k=-2), _diag_ref, name='2d_below'),
    Case('diag', [X234], dict(k=1, axis1=0, axis2=2), _diag_ref, name='3d'),
    Case('diag', [X234], dict(k=-1, axis1=-1, axis2=1), _diag_ref, name='3d_negative'),
    Case('diag', [X234], dict(k=1, axis1=2, axis2=0), _diag_ref, name='3d_swapped'),
    Case('_backward_diag', [(3, 2), X234], dict(k=1, axis1=0, axis2=2), _backward_diag_ref),
    Case('_backward_diag', [(4, 4), (3,)], dict(k=1), _backward_diag_ref, name='1d'),
]

CASES = RESHAPE_CASES + JOIN_CASES + OTHER_CASES


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_shape(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# Reshape's codes, against shapes MXNet 1.9.1 gave
# -------------------------------------------------------------------------------------------------

# (input shape, shape codes, reverse, MXNet's output shape)
MXNET_RESHAPES = [
    ((2, 3, 4, 5), (0, -1), False, (2, 60)),
    ((2, 3, 4, 5), (-2,), False, (2, 3, 4, 5)),
    ((2, 3, 4, 5), (-3, 4, 5), False, (6, 4, 5)),
    ((2, 3, 4, 5), (-3, -2), False, (6, 4, 5)),
    ((2, 3, 4, 5), (-4, 1, 2, -2), False, (1, 2, 3, 4, 5)),
    ((2, 3, 4), (2, -4, -1, 3, -2), False, (2, 1, 3, 4)),
    ((2, 3, 4, 5), (-4, -1, 2, -2), False, (1, 2, 3, 4, 5)),
    ((2, 3, 4, 5), (0, 0, -1), False, (2, 3, 20)),
    ((2, 3, 4, 5), (-1, 5), True, (24, 5)),
    ((2, 3, 4, 5), (0, -1), True, (4, 30)),
    ((2, 3, 4, 5), (-3, -3), False, (6, 20)),
    ((2, 3, 4, 5), (6, -1), False, (6, 20)),
    ((2, 3, 4, 5), (-1,), False, (120,)),
    ((2, 3, 4, 5), (2, -3, -1), False, (2, 12, 5)),
    ((2, 3, 4, 5), (-2, 1, 1), False, (2, 3, 4, 5, 1, 1)),
    ((6, 4), (-4, 3, -1, -2), False, (3, 2, 4)),
    ((2, 3, 4, 5), (0, -3, 0), False, (2, 12, 5)),
    ((10, 5, 4), (-1, 0), True, (50, 4)),
    ((10, 5, 4), (-1, 0), False, (40, 5)),
    ((2, 3), (-1, -2), False, (2, 3)),
    ((2, 3, 4, 5), (0, 0, 0, 0, -1), False, (2, 3, 4, 5, 1)),
    ((4, 3, 5), (-4, 2, -1, -4, 1, 3, -2), False, (2, 2, 1, 3, 5)),
    ((3, 4, 2), (2, 0, -1), True, (2, 4, 3)),
    ((2, 3, 4), (-1, -3), True, (2, 12)),
    ((2, 3, 4, 5), (-1, 0, 0), True, (6, 4, 5)),
]


@pytest.mark.parametrize('dshape, codes, reverse, expected', MXNET_RESHAPES)
def test_reshape_codes_match_mxnet(dshape, codes, reverse, expected):
    x = nd.zeros(dshape)
    assert nd.Reshape(x, shape=codes, reverse=reverse).shape == expected
    s = sym.Reshape(sym.var('x'), shape=codes, reverse=reverse)
    assert s.infer_shape(x=dshape)[1] == [expected]


@pytest.mark.parametrize('dshape, codes, reverse', [
    ((2, 3, 4, 5), (0, 0, 0, 0, 0), False),     # more codes than input axes
    ((2, 3, 4, 5), (-4, -1, -1, -2), False),    # both split sizes inferred
    ((4, 6), (-4, 2, -1, -2), True),             # reversed, -4 lacks its two sizes
    ((6, 4), (-4, 4, 5, -2), False),             # split sizes do not divide
    ((2, 3, 4, 5), (-1, -1), False),             # two -1
    ((2, 3, 4, 5), (7, -1), False),              # MXNet gives (7, 17): wrong size
    ((2, 3), (-2, -1), False),                   # MXNet gives (2, 1, 1): wrong size
    ((2, 3), (3, 3), False),
])
def test_reshape_errors(dshape, codes, reverse):
    with pytest.raises(ShapeError, match='Reshape'):
        nd.Reshape(nd.zeros(dshape), shape=codes, reverse=reverse)


def test_reshape_bad_code_and_no_shape():
    with pytest.raises(AttributeParseError, match='Reshape'):
        nd.Reshape(nd.zeros((2, 3)), shape=(-5,))
    with pytest.raises(ShapeError, match='needs shape'):
        nd.Reshape(nd.zeros((2, 3)))


def test_reshape_method_codes():
    x = nd.array(np.arange(24).reshape(2, 3, 4))
    assert x.reshape(0, -1).shape == (2, 12)
    assert x.reshape((-3, -2)).shape == (6, 4)
    assert x.reshape(shape=(-1, 0), reverse=True).shape == (6, 4)


# -------------------------------------------------------------------------------------------------
# Partial shape inference (Gluon's deferred initialisation)
# -------------------------------------------------------------------------------------------------

def _partial(symbol, **shapes):
    args, outs, _ = symbol.infer_shape_partial(**shapes)
    return args, outs


def test_partial_reshape():
    x = sym.var('x')
    # an unknown dimension that is only copied cancels out of the -1
    assert _partial(sym.Reshape(x, shape=(0, -1)), x=(0, 5, 4))[1] == [(0, 20)]
    assert _partial(sym.Reshape(x, shape=(-1, 20)), x=(0, 5, 4))[1] == [(0, 20)]
    assert _partial(sym.Reshape(x, shape=(0, -1)), x=(3, 0, 4))[1] == [(3, 0)]
    assert _partial(sym.Reshape(x, shape=(-3, 0)), x=(0, 5, 4))[1] == [(0, 4)]
    assert _partial(sym.Reshape(x, shape=(-4, 2, -1, 0, 0)), x=(0, 5, 4))[1] == [(2, 0, 5, 4)]
    assert _partial(sym.Reshape(x, shape=(0, -1), reverse=True), x=(2, 0, 4))[1] == [(0, 8)]
    # a known output fills the one unknown input dimension (as MXNet does)
    assert _partial(sym.Reshape(x, shape=(2, 20)), x=(0, 5, 4)) == ([(2, 5, 4)], [(2, 20)])


def test_partial_flatten_and_others():
    x, y = sym.var('x'), sym.var('y')
    assert _partial(sym.Flatten(x), x=(0, 5, 4))[1] == [(0, 20)]
    assert _partial(sym.Flatten(x), x=(3, 0, 4))[1] == [(3, 0)]
    assert _partial(sym.transpose(x), x=(0, 5, 4))[1] == [(4, 5, 0)]
    assert _partial(sym.expand_dims(x, axis=1), x=(0, 5))[1] == [(0, 1, 5)]
    assert _partial(sym.squeeze(x, axis=1), x=(0, 0, 4)) == ([(0, 1, 4)], [(0, 4)])
    assert _partial(sym.split(x, num_outputs=2, axis=1), x=(0, 4))[1] == [(0, 2), (0, 2)]
    assert _partial(sym.slice(x, begin=(1, None), end=(3, None)), x=(5, 0))[1] == [(2, 0)]
    assert _partial(sym.slice_axis(x, axis=1, begin=0, end=2), x=(0, 0))[1] == [(0, 2)]
    assert _partial(sym.repeat(x, repeats=2, axis=1), x=(0, 4))[1] == [(0, 8)]
    assert _partial(sym.shape_array(x), x=(0, 3))[1] == [(2,)]
    assert _partial(sym.depth_to_space(x, block_size=2), x=(0, 8, 3, 3))[1] == [(0, 2, 6, 6)]
    assert _partial(sym.reshape_like(x, y), x=(0, 4), y=(2, 4)) == ([(2, 4), (2, 4)], [(2, 4)])


def test_partial_concat_and_stack():
    x, y = sym.var('x'), sym.var('y')
    # inputs fill each other off the concatenation axis (MXNet gives the same)
    assert _partial(sym.Concat(x, y, dim=1), x=(0, 5), y=(3, 0)) == \
        ([(3, 5), (3, 0)], [(3, 0)])
    assert _partial(sym.Concat(x, y, dim=1), x=(2, 5)) == ([(2, 5), (2, 0)], [(2, 0)])
    assert _partial(sym.Concat(x, y, dim=0), x=(2, 5), y=(0, 0)) == \
        ([(2, 5), (0, 5)], [(0, 5)])
    assert _partial(sym.Concat(x, y, dim=1), x=(0, 5), y=(0, 3))[1] == [(0, 8)]
    assert _partial(sym.stack(x, y, axis=1), x=(2, 0), y=(0, 5)) == \
        ([(2, 5), (2, 5)], [(2, 2, 5)])


# -------------------------------------------------------------------------------------------------
# Errors MXNet raises, and its edge conventions
# -------------------------------------------------------------------------------------------------

def check_shape_error(op, shapes, attrs):
    """``op`` on zeros of ``shapes`` raises a ShapeError naming the op and the first shape."""
    arrays = [nd.zeros(s) for s in shapes]
    with pytest.raises(ShapeError) as info:
        getattr(nd.op, op)(*arrays, **attrs)
    message = str(info.value)
    assert 'Error in operator' in message and str(tuple(shapes[0])) in message


def check_attribute_error(op, attrs):
    """``op`` on a (1, 4, 4, 4) input rejects ``attrs`` with an AttributeParseError."""
    with pytest.raises(AttributeParseError, match='operator'):
        getattr(nd.op, op)(nd.zeros((1, 4, 4, 4)), **attrs)


E = [
    ('transpose', [(2, 3, 4)], dict(axes=(-1, 0, 1))),       # MXNet: no negative axes
    ('transpose', [(2, 3, 4)], dict(axes=(1, 0))),
    ('transpose', [(2, 3, 4)], dict(axes=(0, 0, 1))),
    ('expand_dims', [(2, 3)], dict(axis=3)),
    ('expand_dims', [(2, 3)], dict(axis=-4)),
    ('squeeze', [(1, 3, 1)], dict(axis=1)),
    ('squeeze', [(1, 3, 1)], dict(axis=(0, 0))),
    ('SwapAxis', [(2, 3, 4)], dict(dim1=3, dim2=0)),
    ('reverse', [(2, 3)], dict(axis=-1)),                     # MXNet: no negative axes
    ('reverse', [(2, 3)], dict(axis=2)),
    ('Concat', [(2, 3), (3, 1)], dict(dim=1)),
    ('Concat', [(2, 3), (2, 3, 1)], dict(dim=1)),
    ('Concat', [(2, 3), (2, 1)], dict(dim=2)),
    ('stack', [(2, 3), (3, 2)], {}),                          # MXNet: garbage, no check
    ('stack', [(2, 3), (2, 3)], dict(axis=3)),
    ('split', [(2, 3)], dict(num_outputs=2, axis=1)),
    ('split', [(2, 4)], dict(num_outputs=2, axis=1, squeeze_axis=True)),
    ('_split_v2', [(2, 6)], dict(indices=(0, 2, 9), axis=1)),
    ('_split_v2', [(2, 6)], dict(indices=(0, 4, 2), axis=1)),
    ('_split_v2', [(2, 6)], dict(indices=(0, 1, 2), axis=1, squeeze_axis=True)),
    ('reshape_like', [(2, 6), (3, 5)], {}),
    ('reshape_like', [(2, 3, 4), (6, 2, 2)], dict(lhs_begin=2, lhs_end=1)),
    ('reshape_like', [(2, 3, 4), (6, 4)], dict(lhs_begin=0, lhs_end=5)),
    ('reshape_like', [(2, 3), (6, 4)], dict(lhs_begin=1, lhs_end=1, rhs_begin=0, rhs_end=0)),
    ('depth_to_space', [(1, 6, 2, 3)], dict(block_size=2)),
    ('depth_to_space', [(8, 2, 3)], dict(block_size=2)),
    ('space_to_depth', [(1, 2, 3, 6)], dict(block_size=2)),
    ('diag', [(2, 3, 4)], dict(axis1=1, axis2=1)),
]


@pytest.mark.parametrize('op, shapes, attrs', E, ids=[f'{e[0]}-{i}' for i, e in enumerate(E)])
def test_shape_errors(op, shapes, attrs):
    check_shape_error(op, shapes, attrs)


@pytest.mark.parametrize('op, attrs', [
    ('depth_to_space', dict(block_size=0)),
    ('_split_v2', dict(indices=(2, 4), axis=1)),
    ('split', dict(num_outputs=0)),
])
def test_attribute_errors(op, attrs):
    check_attribute_error(op, attrs)


def test_concat_dtypes_must_agree():
    with pytest.raises(MXNetError, match='dtype'):
        nd.concat(nd.zeros((2, 3)), nd.zeros((2, 3), dtype='int32'))


def test_mxnet_conventions():
    x = nd.array(np.arange(6).reshape(2, 3))
    # empty slices are zero-size arrays, as MXNet's imperative slice gives
    assert nd.slice(nd.zeros((4, 5)), begin=(3,), end=(1,)).shape == (0, 5)
    assert nd.diag(nd.zeros((3, 4)), k=4).shape == (0,)
    # shape_array/size_array are int64 whatever the input
    assert nd.shape_array(nd.zeros((2, 3), dtype='float16')).dtype == np.int64
    assert nd.size_array(x).asnumpy().tolist() == [6]
    # tile/repeat keep integer dtypes
    assert nd.tile(nd.array([1, 2], dtype='int32'), reps=(2,)).dtype == np.int32
    # slice_like/reshape_like take the dtype of their first input only
    like = nd.zeros((2, 2), dtype='int32')
    assert nd.slice_like(x, like).dtype == np.float32
    s = sym.slice_like(sym.var('a'), sym.var('b'))
    assert s.infer_type(a='float32', b='int32')[1] == [np.float32]


def test_outputs_never_alias_inputs():
    x = nd.array(np.arange(24).reshape(2, 3, 4))
    outs = [nd.Reshape(x, shape=(6, 4)), nd.Flatten(x), nd.expand_dims(x, axis=0),
            nd.squeeze(x), nd.transpose(x, axes=(0, 1, 2)), nd.reverse(x, axis=()),
            nd.slice(x, begin=(), end=()), nd.tile(x, reps=()), nd.reshape_like(x, x),
            nd.SwapAxis(x, dim1=1, dim2=1), nd.split(x, num_outputs=1, axis=0),
            nd.slice_axis(x, axis=0, begin=0, end=None)]
    for y in outs:
        y += 1
    np.testing.assert_array_equal(x.asnumpy(), np.arange(24).reshape(2, 3, 4))


# -------------------------------------------------------------------------------------------------
# Symbols: names, output names and JSON attributes as MXNet writes them
# -------------------------------------------------------------------------------------------------

def test_output_names():
    x = sym.var('x')
    with mx.name.NameManager():
        assert sym.split(x, num_outputs=1).list_outputs() == ['split0_output0']
        assert sym.split(x, num_outputs=2).list_outputs() == ['split1_output0', 'split1_output1']
        assert sym._internal._split_v2(x, indices=(0, 2), axis=1).list_outputs() == \
            ['_split_v20_output0', '_split_v20_output1']
        assert sym._internal._split_v2(x, indices=(0,), axis=1).list_outputs() == \
            ['_split_v21_output']


def check_json_node(make, expected):
    """The last node of ``make(x, y)``'s JSON is ``expected`` = (op, name, attrs)."""
    with mx.name.NameManager():
        s = make(sym.var('x'), sym.var('y'))
    node = json.loads(s.tojson())['nodes'][-1]
    assert (node['op'], node['name'], node.get('attrs', {})) == expected


# (symbol, MXNet's node as (op, name, attrs)) from MXNet 1.9.1's tojson()
JSON_NODES = [
    (lambda x, y: sym.Reshape(x, shape=(0, -1), reverse=True),
     ('Reshape', 'reshape0', {'reverse': 'True', 'shape': '(0, -1)'})),
    (lambda x, y: sym.concat(x, y, dim=0), ('Concat', 'concat0', {'dim': '0', 'num_args': '2'})),
    (lambda x, y: sym.stack(x, y, axis=1), ('stack', 'stack0', {'axis': '1', 'num_args': '2'})),
    (lambda x, y: sym.split(x, num_outputs=2, axis=1),
     ('SliceChannel', 'split0', {'axis': '1', 'num_outputs': '2'})),
    (lambda x, y: sym.squeeze(x, axis=(0,)), ('squeeze', 'squeeze0', {'axis': '(0,)'})),
    (lambda x, y: sym.reshape_like(x, y, lhs_begin=1, lhs_end=None),
     ('reshape_like', 'reshape_like0', {'lhs_begin': '1', 'lhs_end': 'None'})),
    (lambda x, y: sym.transpose(x), ('transpose', 'transpose0', {})),
    (lambda x, y: sym.flip(x, axis=1), ('reverse', 'flip0', {'axis': '1'})),
    (lambda x, y: sym.diag(x, k=-1), ('diag', 'diag0', {'k': '-1'})),
    (lambda x, y: sym.Flatten(x), ('Flatten', 'flatten0', {})),
    (lambda x, y: sym.swapaxes(x, dim1=0, dim2=1),
     ('SwapAxis', 'swapaxes0', {'dim1': '0', 'dim2': '1'})),
]


@pytest.mark.parametrize('make, expected', JSON_NODES, ids=[e[1][1] for e in JSON_NODES])
def test_json_like_mxnet(make, expected):
    check_json_node(make, expected)


# -------------------------------------------------------------------------------------------------
# Indexing lowers to slice/squeeze/expand_dims under autograd
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('key', [
    (slice(1, 3), 0), (None,), (slice(None), slice(None, None, -1)), (-1,), (1,),
    (Ellipsis, 2), (0, 1, 2), (slice(None), None, 1), (slice(-2, None), slice(None, 1)),
    (1, slice(None, None, 2), slice(3, 0, -2)),
], ids=repr)
def test_indexing_under_autograd(key):
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = nd.array(data)
    x.attach_grad()
    with autograd.record():
        y = x[key]
    expected = data[key]
    if expected.ndim == 0:
        expected = expected.reshape(1)
    np.testing.assert_array_equal(y.asnumpy(), expected)
    head = np.random.default_rng(0).uniform(size=expected.shape).astype(np.float32)
    y.backward(nd.array(head))
    want = np.zeros_like(data)
    want[key] += head.reshape(data[key].shape) if data[key].ndim else head[0]
    np.testing.assert_allclose(x.grad.asnumpy(), want)


def test_symbol_indexing():
    x = sym.var('x', shape=(2, 3, 4))
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = x[1:, ::-1, 0].eval(x=nd.array(data))[0]
    np.testing.assert_array_equal(out.asnumpy(), data[1:, ::-1, 0])
    assert mx.sym.var('y')[0:2].infer_shape(y=(5, 3))[1] == [(2, 3)]
