"""Cases for hybridlib/ops/slicing.py (slice, slice_axis, slice_like, tile, repeat, Pad and
their internal operators).

Literal shapes, attribute strings and error conditions below were obtained from MXNet 1.9.1.
The partial-shape, convention and aliasing tests that mix these operators with the other shape
operators stay in test_shape.py, whose error and JSON checks are used here.
"""
import numpy as np
import pytest

from hybridlib import nd, sym
from hybridlib.base import AttributeParseError, NotSupportedError

from harness import Case, check_case
from test_shape import check_attribute_error, check_json_node, check_shape_error


def _slice_ref(x, begin, end, step=()):
    step = step or (None,) * len(begin)
    return x[tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))]


def _slice_assign_ref(lhs, rhs, begin, end, step=()):
    out = lhs.copy()
    step = step or (None,) * len(begin)
    out[tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))] = rhs
    return out


def _slice_assign_scalar_ref(x, scalar, begin, end, step=()):
    out = x.copy()
    out[tuple(slice(b, e, s) for b, e, s in zip(begin, end, step or (None,) * len(begin)))] = \
        scalar
    return out


def _pad_ref(x, mode, pad_width, constant_value=0):
    """Padding written element by element: each output index maps to an input index."""
    pairs = [(pad_width[2 * i], pad_width[2 * i + 1]) for i in range(x.ndim)]
    out_shape = tuple(d + b + a for d, (b, a) in zip(x.shape, pairs))
    out = np.empty(out_shape)
    for idx in np.ndindex(*out_shape):
        src = _pad_source(idx, pairs, x.shape, mode)
        out[idx] = constant_value if src is None else x[src]
    return out


def _pad_source(idx, pairs, in_shape, mode):
    """The input index that output index ``idx`` of a pad reads, or None for a constant."""
    src = []
    for i, (b, _), n in zip(idx, pairs, in_shape):
        j = i - b
        if not 0 <= j < n:
            if mode == 'constant':
                return None
            j = min(max(j, 0), n - 1) if mode == 'edge' else (-j if j < 0 else 2 * (n - 1) - j)
        src.append(j)
    return tuple(src)


def _backward_pad_ref(g, mode, pad_width):
    """The adjoint of _pad_ref, by accumulating each output element into its source."""
    pairs = [(pad_width[2 * i], pad_width[2 * i + 1]) for i in range(g.ndim)]
    in_shape = tuple(d - b - a for d, (b, a) in zip(g.shape, pairs))
    out = np.zeros(in_shape)
    for idx in np.ndindex(*g.shape):
        src = _pad_source(idx, pairs, in_shape, mode)
        if src is not None:
            out[src] += g[idx]
    return out


def _repeat_ref(x, repeats, axis=None):
    return np.repeat(x.reshape(-1) if axis is None else x, repeats, axis=axis)


SLICE_CASES = [
    Case('slice', [(4, 5)], dict(begin=(1, None), end=(3, None)), _slice_ref),
    Case('slice', [(4, 5)], dict(begin=(None, 4), end=(None, 0), step=(1, -2)), _slice_ref,
         name='negative_step'),
    Case('slice', [(4, 5)], dict(begin=(None, None), end=(None, None), step=(-1, -2)),
         _slice_ref, name='reverse_all'),
    Case('slice', [(4, 5)], dict(begin=(-3, -1), end=(-1, None)), _slice_ref,
         name='negative'),
    Case('crop', [(4, 5)], dict(begin=(1,), end=(10,)), _slice_ref, name='alias_clipped'),
    Case('slice', [(7, 2)], dict(begin=(1,), end=(7,), step=(3,)), _slice_ref, name='step'),
    Case('_slice_assign', [(4, 5), (2, 3)], dict(begin=(1, 0), end=(3, 5), step=(1, 2)),
         _slice_assign_ref),
    Case('_crop_assign', [(4, 5), (1, 5)], dict(begin=(-1,), end=(None,)),
         _slice_assign_ref, name='alias'),
    Case('_slice_assign_scalar', [(4, 5)],
         dict(scalar=2.5, begin=(None, 1), end=(None, 4), step=(None, 2)),
         _slice_assign_scalar_ref),
    Case('_crop_assign_scalar', [(4, 5)], dict(begin=(3,), end=(0,), step=(-1,)),
         lambda x, begin, end, step: _slice_assign_scalar_ref(x, 0, begin, end, step),
         name='alias'),
    Case('slice_axis', [(4, 5)], dict(axis=1, begin=1, end=-1),
         lambda x, axis, begin, end: x[:, 1:-1]),
    Case('slice_axis', [(4, 5)], dict(axis=-1, begin=-2, end=None),
         lambda x, axis, begin, end: x[:, -2:], name='end_none'),
    Case('slice_axis', [(4, 5)], dict(axis=0, begin=0, end=1),
         lambda x, axis, begin, end: x[:1], name='first'),
    Case('slice_like', [(4, 5), (2, 3)], {}, lambda x, y: x[:2, :3]),
    Case('slice_like', [(2, 5, 4), (3, 2)], dict(axes=(-2,)),
         lambda x, y, axes: x[:, :2], name='axes'),
]

REPEAT_CASES = [
    Case('tile', [(2, 3)], dict(reps=(2,)), lambda x, reps: np.tile(x, reps)),
    Case('tile', [(2, 3)], dict(reps=(2, 1, 2)), lambda x, reps: np.tile(x, reps),
         name='longer'),
    Case('tile', [(2, 2, 3)], dict(reps=(3, 1)), lambda x, reps: np.tile(x, reps),
         name='shorter'),
    Case('tile', [(2, 3)], dict(reps=()), lambda x, reps: x, name='empty'),
    Case('repeat', [(2, 3)], dict(repeats=2), _repeat_ref),
    Case('repeat', [(2, 3)], dict(repeats=3, axis=-1), _repeat_ref, name='axis'),
    Case('repeat', [(2, 3)], dict(repeats=2, axis=0), _repeat_ref, name='axis0'),
    # a zero-size result reads as unknown to Symbol shape inference (0 = unknown), as in MXNet
    Case('repeat', [(2, 3)], dict(repeats=0, axis=1), _repeat_ref, name='zero',
         check_symbol=False),
    Case('Pad', [(1, 2, 2, 3)], dict(mode='constant', pad_width=(0, 0, 0, 0, 1, 0, 0, 2),
                                     constant_value=1.5), _pad_ref),
    Case('pad', [(1, 1, 2, 3)], dict(mode='edge', pad_width=(0, 0, 0, 0, 1, 2, 2, 1)),
         _pad_ref, name='edge'),
    Case('Pad', [(1, 1, 3, 3)], dict(mode='reflect', pad_width=(0, 0, 0, 0, 1, 2, 2, 1)),
         _pad_ref, name='reflect'),
    Case('Pad', [(1, 1, 2, 2, 3)],
         dict(mode='edge', pad_width=(0, 0, 0, 0, 1, 1, 0, 1, 1, 0)), _pad_ref, name='5d'),
    Case('Pad', [(1, 1, 2, 2, 2)],
         dict(mode='reflect', pad_width=(0, 0, 0, 0, 1, 0, 1, 1, 0, 1)), _pad_ref,
         name='5d_reflect'),
    Case('Pad', [(1, 1, 3, 3)],
         dict(mode='constant', pad_width=(0, 0, 0, 0, 1, -2, -1, 1), constant_value=7),
         _pad_ref, name='negative_crops'),
    Case('_backward_Pad', [(1, 1, 5, 6)], dict(mode='edge', pad_width=(0, 0, 0, 0, 1, 2, 2, 1)),
         _backward_pad_ref),
    Case('_backward_Pad', [(1, 1, 6, 6)],
         dict(mode='reflect', pad_width=(0, 0, 0, 0, 1, 2, 2, 1)), _backward_pad_ref,
         name='reflect'),
    Case('_backward_Pad', [(1, 2, 3, 5)],
         dict(mode='constant', pad_width=(0, 0, 0, 0, 1, 0, 0, 2)), _backward_pad_ref,
         name='constant'),
]

CASES = SLICE_CASES + REPEAT_CASES


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_slicing(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# Errors MXNet raises
# -------------------------------------------------------------------------------------------------

E = [
    ('slice', [(4, 5)], dict(begin=(1, 1, 1), end=(3, 3, 3))),
    ('slice_axis', [(4, 5)], dict(axis=1, begin=3, end=2)),
    ('slice_axis', [(4, 5)], dict(axis=1, begin=0, end=7)),
    ('slice_axis', [(4, 5)], dict(axis=1, begin=-7, end=2)),
    ('slice_axis', [(4, 5)], dict(axis=2, begin=0, end=2)),
    ('slice_like', [(4, 5, 6), (2, 3)], dict(axes=(0, -1))),
    ('slice_like', [(4, 5), (2, 3, 4)], {}),
    ('slice_like', [(4, 5), (5, 3)], {}),
    ('slice_like', [(4, 5), (2, 3)], dict(axes=(2,))),
    ('repeat', [(2, 3)], dict(repeats=2, axis=2)),
    ('Pad', [(1, 1, 2, 3)], dict(mode='reflect', pad_width=(0, 0, 0, 0, 2, 0, 0, 0))),
    ('Pad', [(1, 1, 3, 3)], dict(mode='reflect', pad_width=(0, 0, 0, 0, 3, 0, 0, 0))),
    ('Pad', [(1, 2, 3)], dict(mode='constant', pad_width=(0, 0, 0, 0, 1, 1))),
    ('Pad', [(1, 1, 1, 2, 2, 2)], dict(mode='constant', pad_width=(0,) * 6 + (1,) * 6)),
    ('Pad', [(1, 1, 2, 3)], dict(mode='constant', pad_width=(1, 0, 0, 0, 1, 0, 0, 2))),
    ('Pad', [(1, 1, 2, 3)], dict(mode='constant', pad_width=(0, 0, 1, 0, 1, 0, 0, 2))),
    ('Pad', [(1, 1, 2, 3)], dict(mode='constant', pad_width=(0, 0, 0, 0, 1, 0))),
]


@pytest.mark.parametrize('op, shapes, attrs', E, ids=[f'{e[0]}-{i}' for i, e in enumerate(E)])
def test_shape_errors(op, shapes, attrs):
    check_shape_error(op, shapes, attrs)


@pytest.mark.parametrize('op, attrs', [
    ('slice', dict(begin=(1,), end=(3,), step=(0,))),
    ('slice', dict(begin=(1, 1), end=(3,))),
    ('slice', dict(begin=(1, 1), end=(3, 3), step=(1,))),
    ('tile', dict(reps=(0, 1))),
    ('tile', dict(reps=(-1, 2))),
    ('repeat', dict(repeats=-1, axis=1)),
    ('Pad', dict(mode='wrap', pad_width=(0,) * 8)),
])
def test_attribute_errors(op, attrs):
    check_attribute_error(op, attrs)


def test_pad_negative_edge_not_supported():
    with pytest.raises(NotSupportedError):
        nd.pad(nd.zeros((1, 1, 3, 3)), mode='edge', pad_width=(0, 0, 0, 0, 1, -1, 0, 0))


def test_slice_axis_requires_end():
    with pytest.raises(AttributeParseError, match='end'):
        nd.slice_axis(nd.zeros((2, 3)), axis=1, begin=0)


# -------------------------------------------------------------------------------------------------
# Symbols: JSON attributes as MXNet writes them
# -------------------------------------------------------------------------------------------------

# (symbol, MXNet's node as (op, name, attrs)) from MXNet 1.9.1's tojson()
JSON_NODES = [
    (lambda x, y: sym.slice(x, begin=(1, None), end=(3, None), step=(None, -1)),
     ('slice', 'slice0', {'begin': '(1, None)', 'end': '(3, None)', 'step': '(None, -1)'})),
    (lambda x, y: sym.slice_axis(x, axis=1, begin=0, end=None),
     ('slice_axis', 'slice_axis0', {'axis': '1', 'begin': '0', 'end': 'None'})),
    (lambda x, y: sym.Pad(x, mode='edge', pad_width=(0, 0, 0, 0, 1, 1, 1, 1)),
     ('Pad', 'pad0', {'mode': 'edge', 'pad_width': '(0, 0, 0, 0, 1, 1, 1, 1)'})),
    (lambda x, y: sym.repeat(x, repeats=2), ('repeat', 'repeat0', {'repeats': '2'})),
    (lambda x, y: sym.tile(x, reps=(2, 1)), ('tile', 'tile0', {'reps': '(2, 1)'})),
    (lambda x, y: sym.crop(x, begin=(1,), end=(2,)),
     ('slice', 'crop0', {'begin': '(1,)', 'end': '(2,)'})),
]


@pytest.mark.parametrize('make, expected', JSON_NODES, ids=[e[1][1] for e in JSON_NODES])
def test_json_like_mxnet(make, expected):
    check_json_node(make, expected)
