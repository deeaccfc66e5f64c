"""Cases for hybridlib/ops/numeric.py: khatri_rao, cumsum, histogram, ravel_multi_index,
unravel_index and fill_element_0index.

The references are numpy's (einsum, cumsum, histogram, ravel_multi_index, unravel_index) or
plain loops; MXNet's own numbers (histogram edges, truncated and out-of-range indices) come from
tests/data/linalg.json (tests/data/make_linalg_files.py).
"""
import json

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, DTypeError, ShapeError

from harness import Case, check_case, ints, uniform
from test_linalg import _load, check_recorded


# -------------------------------------------------------------------------------------------------
# References
# -------------------------------------------------------------------------------------------------

def ref_khatri_rao(*mats, **_):
    out = mats[0]
    for m in mats[1:]:
        out = np.einsum('ik,jk->ijk', out, m).reshape(-1, m.shape[1])
    return out


def ref_cumsum(a, axis=None, dtype=None):
    return np.cumsum(a.reshape(-1) if axis is None else a, axis=0 if axis is None else axis,
                     dtype=dtype or a.dtype)


def ref_histogram(data, bins=None, bin_cnt=None, range=None):     # noqa: A002
    counts, edges = np.histogram(data, bins=bin_cnt if bins is None else bins, range=range)
    return counts.astype(np.int64), edges


def ref_ravel(data, shape):
    return np.ravel_multi_index(tuple(data.astype(np.int64)), shape).astype(data.dtype)


def ref_unravel(data, shape):
    return np.stack(np.unravel_index(data.astype(np.int64), shape)).astype(data.dtype)


def ref_fill(lhs, mhs, rhs):
    out = lhs.copy()
    for i, j in enumerate(rhs.astype(np.int64)):
        if 0 <= j < lhs.shape[1]:
            out[i, j] = mhs[i]
    return out


def away_from_edges(shape, low, high, bins):
    """Values in (low, high) at least 1% of a bin from every bin edge."""
    def make(rng):
        width = (high - low) / bins
        k = rng.integers(0, bins, size=shape)
        return low + width * (k + rng.uniform(0.01, 0.99, size=shape))
    return make


def index_rows(shape, size):
    """A (len(shape), size) array of valid multi-indices, as floats."""
    return lambda rng: np.stack([rng.integers(0, n, size=size) for n in shape]).astype(float)


# -------------------------------------------------------------------------------------------------
# Cases
# -------------------------------------------------------------------------------------------------

CASES = [
    Case('khatri_rao', [(2, 3), (4, 3)], {}, ref_khatri_rao, name='two'),
    Case('khatri_rao', [(2, 2), (3, 2), (2, 2)], {}, ref_khatri_rao, name='three'),
    Case('khatri_rao', [(3, 4)], {}, ref_khatri_rao, name='one'),
    Case('_np_cumsum', [(2, 3, 4)], dict(axis=1), ref_cumsum, name='axis'),
    Case('cumsum', [(3, 4)], dict(axis=-1), ref_cumsum, name='negative_axis'),
    Case('cumsum', [(2, 3)], {}, ref_cumsum, name='flat'),
    Case('cumsum', [(3, 4)], dict(axis=0, dtype='float64'), ref_cumsum, name='dtype'),
    Case('cumsum', [ints((3, 4), -5, 5)], dict(axis=1), ref_cumsum, name='int', grad=False),
    Case('_histogram', [away_from_edges((4, 5), -1, 3, 4)], dict(bin_cnt=4, range=(-1, 3)),
         ref_histogram, name='bin_cnt', grad=False),
    Case('_histogram', [uniform((30,), -2, 5)], dict(bin_cnt=3, range=(0, 3)), ref_histogram,
         name='outside', grad=False),
    Case('_histogram', [uniform((3, 7), -1, 4), np.array([0., 0.5, 1.25, 3.])], {},
         ref_histogram, name='bins', grad=False),
    Case('_ravel_multi_index', [index_rows((7, 6, 3), 5)], dict(shape=(7, 6, 3)), ref_ravel,
         name='float', grad=False),
    Case('ravel_multi_index', [ints((2, 4), 0, 5)], dict(shape=(5, 6)), ref_ravel,
         name='int', grad=False),
    Case('_unravel_index', [ints((6,), 0, 42)], dict(shape=(7, 6)), ref_unravel,
         name='int', grad=False),
    Case('unravel_index', [lambda rng: rng.integers(0, 60, size=(2, 3)).astype(float)],
         dict(shape=(3, 4, 5)), ref_unravel, name='float_2d', grad=False),
    Case('fill_element_0index', [(4, 3), (4,), np.array([2., 0., 1., 1.])], {}, ref_fill,
         grad_inputs=[0, 1]),
    Case('fill_element_0index', [(3, 4), (3,), np.array([5, -1, 3], np.int32)], {}, ref_fill,
         grad_inputs=[0, 1], name='out_of_range'),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_numeric(case):
    check_case(case)


@pytest.mark.parametrize('spec', _load('numeric'), ids=lambda s: s['name'])
def test_mxnet_values(spec):
    check_recorded(spec)


# -------------------------------------------------------------------------------------------------
# histogram, the Python function
# -------------------------------------------------------------------------------------------------

def test_histogram_function():
    x = nd.array([0.1, 0.5, 0.5, 1.0, 2.0, 3.0, -1.0, 5.0])
    counts, edges = nd.histogram(x, bins=4, range=(0, 3))
    assert counts.dtype == np.int64 and edges.dtype == np.float32
    np.testing.assert_array_equal(counts.asnumpy(), [3, 1, 1, 1])
    np.testing.assert_allclose(edges.asnumpy(), [0, 0.75, 1.5, 2.25, 3])
    counts, edges = nd.histogram(x, bins=nd.array([0, 0.5, 1, 3]))
    np.testing.assert_array_equal(counts.asnumpy(), [1, 2, 3])
    # without a range: numpy's result, as float32 arrays (MXNet's values)
    counts, edges = nd.histogram(x, bins=3)
    assert counts.dtype == np.float32 and edges.dtype == np.float32
    np.testing.assert_array_equal(counts.asnumpy(), [4, 2, 2])
    np.testing.assert_array_equal(edges.asnumpy(), [-1, 1, 3, 5])
    with pytest.raises(ValueError, match='bins argument'):
        nd.histogram(x, bins=[0, 1, 2])


def test_histogram_symbol():
    a, b = sym.var('a'), sym.var('b')
    with mx.name.NameManager():
        s = sym.histogram(a, bins=4, range=(0, 3))
        assert s.list_outputs() == ['_histogram0_output0', '_histogram0_output1']
        node = json.loads(s.tojson())['nodes'][-1]
        assert node['op'] == '_histogram'
        assert node['attrs'] == {'bin_cnt': '4', 'range': '(0, 3)'}
        assert sym.histogram(a, bins=b).list_arguments() == ['a', 'b']
    counts, _ = sym.histogram(a, bins=2, range=(0, 1)).eval(a=nd.array([0.2, 0.7, 0.9]))
    np.testing.assert_array_equal(counts.asnumpy(), [1, 2])
    with pytest.raises(ValueError, match='symbol mode'):
        sym.histogram(a, bins=4)


def test_histogram_attribute_errors():
    x = nd.array([1., 2.])
    with pytest.raises(AttributeParseError, match='both or neither'):
        nd.op._histogram(x, bin_cnt=3)
    with pytest.raises(AttributeParseError, match='left side'):
        nd.op._histogram(x, bin_cnt=3, range=(2, 1))
    with pytest.raises(ShapeError, match='at least 2 edges'):
        nd.op._histogram(x, nd.array([1.]))


# -------------------------------------------------------------------------------------------------
# Indices and errors
# -------------------------------------------------------------------------------------------------

def test_index_conventions():
    # MXNet truncates float indices and divides as C does (values read from MXNet 1.9.1)
    flat = nd.ravel_multi_index(nd.array([[3.7, 6.2, -0.5], [4, 5, 1]]), shape=(7, 6))
    np.testing.assert_array_equal(flat.asnumpy(), [22, 41, 1])
    multi = nd.unravel_index(nd.array([22, 41, 37, 50, -1]), shape=(7, 6))
    np.testing.assert_array_equal(multi.asnumpy(), [[3, 6, 6, 8, 0], [4, 5, 1, 2, -1]])
    filled = nd.fill_element_0index(nd.array([[1, 2, 3], [4, 5, 6]]), nd.array([10, 20]),
                                    nd.array([1.7, -0.2]))
    np.testing.assert_array_equal(filled.asnumpy(), [[1, 10, 3], [20, 5, 6]])


def test_khatri_rao_gradient_through_block():
    a, b = nd.array([[1., -1.], [2., -3.]]), nd.array([[1., 4.], [2., 5.], [3., 6.]])
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        out = nd.khatri_rao(a, b)
    out.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [[6., 15.], [6., 15.]])
    np.testing.assert_allclose(b.grad.asnumpy(), [[3., -4.], [3., -4.], [3., -4.]])


@pytest.mark.parametrize('call, error', [
    (lambda: nd.khatri_rao(nd.ones((2, 3)), nd.ones((2, 2))), ShapeError),
    (lambda: nd.khatri_rao(nd.ones((2,)), nd.ones((2,))), ShapeError),
    (lambda: nd.khatri_rao(nd.ones((2, 2)), nd.ones((2, 2), dtype='float64')), DTypeError),
    (lambda: nd.cumsum(nd.ones((2, 2)), axis=2), ShapeError),
    (lambda: nd.cumsum(nd.ones((2, 2)), dtype='uint8'), AttributeParseError),
    (lambda: nd.ravel_multi_index(nd.ones((3, 2)), shape=(7, 6)), ShapeError),
    (lambda: nd.ravel_multi_index(nd.ones((2, 2, 2)), shape=(7, 6)), ShapeError),
    (lambda: nd.ravel_multi_index(nd.ones((2, 2))), AttributeParseError),
    (lambda: nd.fill_element_0index(nd.ones((2, 3)), nd.ones((3,)), nd.ones((2,))), ShapeError),
])
def test_errors(call, error):
    with pytest.raises(error):
        call().asnumpy()
