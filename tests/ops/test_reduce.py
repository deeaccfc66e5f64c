"""Cases for hybridlib/ops/reduce.py: broadcasting, reductions, norm, argmax/argmin, moments,
all_finite/multi_all_finite.

The literals in the plain tests below were read from MXNet 1.9.1.
"""
import numpy as np
import pytest

from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, ShapeError
from hybridlib.cached_op import CachedOp

from harness import Case, away_from, check_case, ints

S3 = (2, 3, 4)


# -------------------------------------------------------------------------------------------------
# References, written independently of the implementation
# -------------------------------------------------------------------------------------------------

def _axes(ndim, axis, exclude=False):
    """MXNet's reduced axes: None/() is all of them (even with exclude)."""
    if axis is None:
        return tuple(range(ndim))
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    if not axis:
        return tuple(range(ndim))
    listed = sorted(a % ndim for a in axis)
    if exclude:
        return tuple(a for a in range(ndim) if a not in listed)
    return tuple(listed)


def _finish(out, shape, axes, keepdims):
    if keepdims:
        return out.reshape([1 if i in axes else d for i, d in enumerate(shape)])
    kept = [d for i, d in enumerate(shape) if i not in axes]
    return out.reshape(kept or [1])


def _reduction_ref(fn):
    def ref(x, axis=None, keepdims=False, exclude=False):
        axes = _axes(x.ndim, axis, exclude)
        out = fn(x, axis=axes, keepdims=True) if axes else x.copy()
        return _finish(out, x.shape, axes, keepdims)
    return ref


def _norm_ref(x, ord=2, axis=None, keepdims=False, out_dtype=None):
    axes = _axes(x.ndim, axis)
    count = int(np.prod([x.shape[a] for a in axes]))
    flat = np.moveaxis(x, axes, range(len(axes))).reshape(count, -1)
    if ord == 1:
        out = np.abs(flat).sum(axis=0)
    else:
        out = np.sqrt((flat ** 2).sum(axis=0))
    return _finish(out, x.shape, axes, keepdims)


def _arg_ref(fn):
    def ref(x, axis=None, keepdims=False):
        if axis is None:
            out = np.array(fn(x.reshape(-1)), dtype=x.dtype)
            return out.reshape((1,) * x.ndim if keepdims else (1,))
        out = fn(x, axis=axis).astype(x.dtype)
        return _finish(out, x.shape, (axis % x.ndim,), keepdims)
    return ref


def _moments_ref(x, axes=None, keepdims=False):
    ax = _axes(x.ndim, axes)
    mean = x.mean(axis=ax, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=ax, keepdims=True)
    return _finish(mean, x.shape, ax, keepdims), _finish(var, x.shape, ax, keepdims)


def _int_mean_ref(x, axis=None, keepdims=False, exclude=False):
    # C division of the (wrapping) integer sum: truncation toward zero
    axes = _axes(x.ndim, axis, exclude)
    total = x.sum(axis=axes, keepdims=True, dtype=x.dtype).astype(np.int64)
    n = int(np.prod([x.shape[a] for a in axes]))
    out = (np.abs(total) // n * np.sign(total)).astype(x.dtype)
    return _finish(out, x.shape, axes, keepdims)


def _with_nans(shape, where):
    def make(rng):
        x = rng.uniform(-1, 1, size=shape)
        x.reshape(-1)[list(where)] = np.nan
        return x
    return make


def _distinct(shape):
    """Values with no ties (so max/min/argmax are differentiable and unambiguous)."""
    def make(rng):
        n = int(np.prod(shape))
        return (rng.permutation(n) / n - 0.5).reshape(shape) + rng.uniform(0, 0.01, size=shape)
    return make


# -------------------------------------------------------------------------------------------------
# Broadcasting
# -------------------------------------------------------------------------------------------------

BROADCAST_CASES = [
    Case('broadcast_to', [(2, 1, 3)], dict(shape=(2, 4, 3)),
         ref=lambda x, shape: np.broadcast_to(x, shape)),
    Case('broadcast_to', [(1, 3, 1)], dict(shape=(0, 0, 2)),
         ref=lambda x, shape: np.broadcast_to(x, (1, 3, 2)), name='zero-keeps'),
    Case('broadcast_like', [(1, 3), (4, 3)], ref=lambda a, b: np.broadcast_to(a, b.shape),
         grad_inputs=[0]),
    Case('broadcast_like', [(3,), (2, 4, 3)], ref=lambda a, b: np.broadcast_to(a, b.shape),
         grad_inputs=[0], name='lower-rank'),
    Case('broadcast_like', [(1, 3, 1), (4, 5)], dict(lhs_axes=(0, -1), rhs_axes=(-2, 1)),
         ref=lambda a, b, lhs_axes, rhs_axes: np.broadcast_to(a, (4, 3, 5)),
         grad_inputs=[0], name='axes'),
    Case('broadcast_like', [(1, 3), (4, 3)], dict(lhs_axes=(1,)),
         ref=lambda a, b, lhs_axes: np.broadcast_to(a, b.shape), grad_inputs=[0],
         name='one-axes-ignored'),
    Case('broadcast_axis', [(1, 3, 1)], dict(axis=(0, 2), size=(2, 4)),
         ref=lambda x, axis, size: np.broadcast_to(x, (2, 3, 4))),
    Case('broadcast_axes', [(2, 1)], dict(axis=-1, size=3),
         ref=lambda x, axis, size: np.broadcast_to(x, (2, 3)), name='alias-negative'),
]


# -------------------------------------------------------------------------------------------------
# sum, mean, prod, nansum, nanprod, max, min
# -------------------------------------------------------------------------------------------------

AXIS_VARIANTS = [
    ('all', {}),
    ('axis1', dict(axis=1)),
    ('neg-keep', dict(axis=(-1, 0), keepdims=True)),
    ('exclude', dict(axis=1, exclude=True)),
    ('exclude-keep', dict(axis=(0, 2), exclude=True, keepdims=True)),
    ('empty-exclude', dict(axis=(), exclude=True)),
    ('exclude-every', dict(axis=(0, 1, 2), exclude=True)),
]

REDUCE_REFS = [
    ('sum', np.sum, lambda s: s),
    ('mean', np.mean, lambda s: s),
    ('prod', np.prod, lambda s: away_from(s, margin=0.3)),
    ('max', np.max, _distinct),
    ('min', np.min, _distinct),
]

REDUCE_CASES = [Case(op, [make(S3)], attrs, ref=_reduction_ref(fn), name=tag)
                for op, fn, make in REDUCE_REFS for tag, attrs in AXIS_VARIANTS]

REDUCE_CASES += [
    Case('sum_axis', [(3, 4)], dict(axis=0), ref=_reduction_ref(np.sum), name='alias'),
    Case('max_axis', [_distinct((3, 4))], dict(axis=1, keepdims=True),
         ref=_reduction_ref(np.max), name='alias'),
    Case('min_axis', [_distinct((3, 4))], dict(axis=-1), ref=_reduction_ref(np.min),
         name='alias'),
    Case('sum', [(5,)], dict(axis=0), ref=_reduction_ref(np.sum), name='1d'),
    Case('nansum', [_with_nans(S3, (1, 5, 6, 7, 20))], dict(axis=(0, 2)),
         ref=_reduction_ref(np.nansum)),
    Case('nansum', [_with_nans((3, 4), (0, 2))], dict(axis=0, exclude=True, keepdims=True),
         ref=_reduction_ref(np.nansum), name='exclude'),
    Case('nanprod', [_with_nans(S3, (1, 5, 6, 7, 20))], dict(axis=-1),
         ref=_reduction_ref(np.nanprod)),
    Case('nanprod', [_with_nans((3, 4), (0, 2))], dict(keepdims=True),
         ref=_reduction_ref(np.nanprod), name='all'),
    # integers: wrapping sums, truncating means (checked against MXNet's numbers below too)
    Case('sum', [ints((3, 4), -50, 50)], dict(axis=1), ref=_reduction_ref(np.sum), name='int'),
    Case('mean', [ints((3, 4), -50, 50)], dict(axis=0), ref=_int_mean_ref, name='int'),
    Case('max', [ints((3, 4), -50, 50)], dict(axis=0), ref=_reduction_ref(np.max), name='int'),
]

# MXNet gives the gradient to every tied extremum, and prod's gradient is y / x (NaN at 0)
TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
ZEROS = np.array([[1.0, 0.0, 3.0], [0.0, 0.0, 2.0], [2.0, 3.0, 4.0]])


def _tie_grad(op):
    def grad_ref(cots, x, axis):
        y = getattr(np, op)(x, axis=axis, keepdims=True)
        return [np.expand_dims(cots[0], axis) * (x == y)]
    return grad_ref


def _prod_zero_grad(cots, x, axis):
    with np.errstate(all='ignore'):
        y = np.prod(x, axis=axis, keepdims=True)
        return [np.expand_dims(cots[0], axis) * (y / x)]


REDUCE_CASES += [
    Case('max', [TIES], dict(axis=1), ref=_reduction_ref(np.max), grad_ref=_tie_grad('max'),
         name='ties'),
    Case('min', [TIES], dict(axis=1), ref=_reduction_ref(np.min), grad_ref=_tie_grad('min'),
         name='ties'),
    Case('prod', [ZEROS], dict(axis=1), ref=_reduction_ref(np.prod), grad_ref=_prod_zero_grad,
         name='zeros'),
]


# -------------------------------------------------------------------------------------------------
# norm, argmax/argmin/argmax_channel, moments
# -------------------------------------------------------------------------------------------------

NORM_CASES = [
    Case('norm', [away_from(S3)], ref=_norm_ref, name='l2-all'),
    Case('norm', [away_from(S3)], dict(ord=1), ref=_norm_ref, name='l1-all'),
    Case('norm', [away_from(S3)], dict(axis=1), ref=_norm_ref, name='l2-axis'),
    Case('norm', [away_from(S3)], dict(ord=1, axis=(0, -1), keepdims=True), ref=_norm_ref,
         name='l1-axes-keep'),
    Case('norm', [away_from(S3)], dict(axis=(2, 0)), ref=_norm_ref, name='l2-axes'),
    Case('norm', [away_from((3, 4))], dict(axis=(), keepdims=True), ref=_norm_ref,
         name='empty-axes'),
    # float64 in and out: out_dtype given (float32 inputs would still give float64)
    Case('norm', [away_from((3, 4))], dict(axis=1, out_dtype='float64'), ref=_norm_ref,
         check_float32=False, name='out_dtype'),
]

ARG_CASES = [
    Case('argmax', [_distinct(S3)], ref=_arg_ref(np.argmax), name='flat'),
    Case('argmax', [_distinct(S3)], dict(axis=1), ref=_arg_ref(np.argmax), name='axis'),
    Case('argmax', [_distinct(S3)], dict(axis=-1, keepdims=True), ref=_arg_ref(np.argmax),
         name='keep'),
    Case('argmax', [_distinct(S3)], dict(keepdims=True), ref=_arg_ref(np.argmax),
         name='flat-keep'),
    Case('argmin', [_distinct(S3)], dict(axis=0), ref=_arg_ref(np.argmin), name='axis'),
    Case('argmin', [_distinct((3, 4))], ref=_arg_ref(np.argmin), name='flat'),
    Case('argmax', [TIES], dict(axis=1), ref=_arg_ref(np.argmax), grad=False,
         name='ties-first'),
    Case('argmax', [ints((3, 4), -50, 50)], dict(axis=1), ref=_arg_ref(np.argmax), name='int'),
    Case('argmax_channel', [_distinct(S3)], ref=lambda x: np.argmax(x, axis=1).astype(x.dtype)),
    Case('argmax_channel', [_distinct((3, 4))],
         ref=lambda x: np.argmax(x, axis=1).astype(x.dtype), name='2d'),
]

MOMENTS_CASES = [
    Case('moments', [S3], dict(axes=(1,)), ref=_moments_ref),
    Case('moments', [S3], dict(axes=(0, -1), keepdims=True), ref=_moments_ref, name='keep'),
    Case('moments', [(3, 4)], dict(axes=(0, 1)), ref=_moments_ref, name='all'),
]


def _finite_ref(*arrays, **attrs):
    return np.array([float(all(np.isfinite(a).all() for a in arrays))])


FINITE_CASES = [
    Case('all_finite', [S3], ref=_finite_ref, grad=False, name='finite'),
    Case('all_finite', [np.array([1.0, -np.inf, 2.0])], ref=_finite_ref, grad=False,
         name='inf'),
    Case('multi_all_finite', [S3, (2,)], dict(num_arrays=2), ref=_finite_ref, grad=False,
         name='finite'),
    Case('multi_all_finite', [S3, np.array([[np.nan, 1.0]])], dict(num_arrays=2),
         ref=_finite_ref, grad=False, name='nan'),
]


# -------------------------------------------------------------------------------------------------
# The internal gradient operators
# -------------------------------------------------------------------------------------------------

INTERNAL_CASES = [
    Case('_backward_sum', [(2, 4), S3], dict(axis=1),
         ref=lambda g, x, axis: np.broadcast_to(g[:, None, :], x.shape)),
    Case('_backward_sum', [(1, 3, 1), S3], dict(axis=1, exclude=True, keepdims=True),
         ref=lambda g, x, axis, exclude, keepdims: np.broadcast_to(g, x.shape), name='exclude'),
    Case('_backward_sum', [(1,), (3, 4)], ref=lambda g, x: np.broadcast_to(g, x.shape),
         name='all'),
    Case('_backward_mean', [(2, 3), S3], dict(axis=-1),
         ref=lambda g, x, axis: np.broadcast_to(g[..., None] / 4, x.shape)),
    Case('_backward_mean', [(4,), S3], dict(axis=(0, 1)),
         ref=lambda g, x, axis: np.broadcast_to(g / 6, x.shape), name='axes'),
    Case('_backward_nanprod', [_with_nans((3, 4), (1, 6)), (3, 4)],
         ref=lambda x, p: np.where(np.isnan(x), 0, p / x)),
]

CASES = (BROADCAST_CASES + REDUCE_CASES + NORM_CASES + ARG_CASES + MOMENTS_CASES
         + FINITE_CASES + INTERNAL_CASES)


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_reduce(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet's numbers (read from MXNet 1.9.1)
# -------------------------------------------------------------------------------------------------

def _grad(op, x, head=None, **attrs):
    x = nd.array(x)
    x.attach_grad()
    with autograd.record():
        y = getattr(nd, op)(x, **attrs)
    heads = y if isinstance(y, list) else [y]
    if head is None:
        head = [nd.ones_like(h) * (i + 1) for i, h in enumerate(heads)]
    autograd.backward(heads, head)
    return y, x.grad.asnumpy()


def test_all_finite_chains_into_out():
    # MXNet 1.9.1: init_output=False ANDs into out=, which is how its LossScaler chains chunks
    ok, bad = nd.array([1, 2]), nd.array([1, float('inf')])
    out = nd.ones((1,))
    nd.multi_all_finite(ok, num_arrays=1, init_output=False, out=out)
    assert out.asnumpy().tolist() == [1.0]
    nd.multi_all_finite(bad, num_arrays=1, init_output=False, out=out)
    nd.multi_all_finite(ok, num_arrays=1, init_output=False, out=out)
    assert out.asnumpy().tolist() == [0.0]
    nd.all_finite(ok, out=out)                     # init_output=True starts again from 1
    assert out.asnumpy().tolist() == [1.0]
    assert nd.all_finite(nd.array([1, 2], dtype='float16')).dtype == np.float32


def test_all_finite_without_init_output_in_a_static_graph():
    # the body ANDs into what out= holds: a static_alloc graph must not give it a planned
    # buffer, whose stale flag (an earlier call's) would be ANDed in
    x = sym.var('x')
    graphs = [sym.all_finite(x, init_output=False) * 2,
              sym.multi_all_finite(x, x, num_arrays=2, init_output=False) * 2]
    for graph in graphs:
        op = CachedOp(graph, {'static_alloc': True, 'static_shape': True})
        assert op(nd.array([1.0, float('inf')]))[0].asnumpy().tolist() == [0.0]
        assert op(nd.array([1.0, 2.0]))[0].asnumpy().tolist() == [2.0]   # as imperatively
    assert (nd.all_finite(nd.array([1.0, 2.0]), init_output=False) * 2).asnumpy().tolist() == \
        [2.0]


def test_legacy_shapes():
    x = nd.ones(S3)
    assert nd.sum(x).shape == (1,)
    assert nd.sum(x, axis=()).shape == (1,)
    assert nd.sum(x, axis=(), keepdims=True).shape == (1, 1, 1)
    assert nd.sum(x, axis=(), exclude=True).shape == (1,)
    assert nd.sum(x, axis=(0, 1, 2), exclude=True).shape == S3
    assert nd.max(x, axis=(-1,), exclude=True).shape == (4,)
    assert nd.argmax(x).shape == (1,)
    assert nd.argmax(x, keepdims=True).shape == (1, 1, 1)
    assert nd.argmax(nd.ones((4,)), axis=0).shape == (1,)
    assert nd.norm(x, axis=(), keepdims=True).shape == (1, 1, 1)
    mean, var = nd.moments(x, axes=(0, 1, 2))
    assert mean.shape == var.shape == (1,)


def test_integer_arithmetic():
    u8 = nd.array([[100, 100, 100], [2, 2, 0]], dtype='uint8')
    assert nd.sum(u8).asnumpy().tolist() == [48]          # wraps in uint8
    assert nd.mean(u8).asnumpy().tolist() == [8]
    i32 = nd.array([[-1, -3, -3], [2, 2, -7]], dtype='int32')
    assert nd.mean(i32, axis=1).asnumpy().tolist() == [-2, -1]   # truncation toward 0
    mean, var = nd.moments(i32, axes=(1,))
    assert mean.dtype == var.dtype == np.int32
    assert mean.asnumpy().tolist() == [-2, -1] and var.asnumpy().tolist() == [1, 18]
    assert nd.norm(i32, axis=1).asnumpy().tolist() == [4, 7]
    assert nd.norm(i32, axis=1, ord=1).asnumpy().tolist() == [7, 11]
    # MXNet's scaled (nrm2) accumulation truncates in integers: max|x| * sqrt(#ties of it)
    pair = nd.array([[3, -4], [5, 5]], dtype='int32')
    assert nd.norm(pair, axis=1).asnumpy().tolist() == [4, 7]
    assert nd.norm(pair.astype('int64')).asnumpy().tolist() == [7]
    i8 = nd.array([[100, 100, 100], [2, 2, -7]], dtype='int8')
    assert nd.norm(i8, axis=1).asnumpy().tolist() == [-83, 7]    # computed wide, then wrapped
    assert nd.prod(i8, axis=1).asnumpy().tolist() == [64, -28]
    big = nd.array([[2 ** 31 - 1, 2 ** 31 - 1, 1]], dtype='int32')
    assert nd.mean(big, axis=1).asnumpy().tolist() == [0]


def test_index_dtypes():
    x = np.array([[1, 3, 3], [2, 2, 0]])
    for dtype in ('float16', 'float32', 'float64', 'int32'):
        out = nd.argmax(nd.array(x, dtype=dtype), axis=1)
        assert out.dtype == np.dtype(dtype) and out.asnumpy().tolist() == [1, 0]
    long = np.arange(300).reshape(1, -1)
    assert nd.argmax(nd.array(long, dtype='uint8'), axis=1).asnumpy().tolist() == [255]
    assert nd.argmax(nd.array(long, dtype='int8'), axis=1).asnumpy().tolist() == [127]
    with_nan = nd.array([[1, np.nan, 3], [np.nan, np.nan, np.nan], [1, 2, 3]])
    assert nd.argmin(with_nan, axis=1).asnumpy().tolist() == [1, 0, 0]
    assert nd.argmax(with_nan, axis=1).asnumpy().tolist() == [1, 0, 2]


def test_float16():
    x = nd.array([[300, 300, 301], [2, 2, 7]], dtype='float16')
    mean, var = nd.moments(x, axes=1)
    np.testing.assert_allclose(mean.asnumpy(), [300.2, 3.666], rtol=1e-3)
    np.testing.assert_allclose(var.asnumpy(), [0.2291, 5.56], rtol=1e-3)
    big = nd.array([[300, 300, 300], [2, 2, 7]], dtype='float16')
    np.testing.assert_allclose(nd.norm(big, axis=1).asnumpy(), [519.5, 7.55], rtol=1e-3)
    s = nd.array([[30000, 30000, 300], [2, 2, 7]], dtype='float16')
    np.testing.assert_allclose(nd.sum(s, axis=1).asnumpy(), [60300, 11], rtol=1e-3)
    np.testing.assert_allclose(nd.mean(s, axis=1).asnumpy(), [20100, 3.666], rtol=1e-3)
    assert nd.prod(nd.array([[300, 300, 3]], dtype='float16'), axis=1).asnumpy().tolist() == \
        [np.inf]


def test_nan_handling():
    x = nd.array([[1, np.nan, 3], [np.nan, np.nan, np.nan], [1, 2, 3]])
    assert np.isnan(nd.max(x, axis=1).asnumpy()[:2]).all()
    assert np.isnan(nd.min(x, axis=1).asnumpy()[:2]).all()
    assert nd.nansum(x, axis=1).asnumpy().tolist() == [4, 0, 6]
    assert nd.nanprod(x, axis=1).asnumpy().tolist() == [3, 1, 6]


@pytest.mark.parametrize('rows, n', [(64, 10), (40, 32), (3, 10), (64, 33)])
@pytest.mark.parametrize('name', ['max', 'min'])
def test_extremum_of_many_short_rows(name, rows, n):
    # many short rows are reduced as columns of their transpose: the same values, NaN and
    # infinities included, over the last axis or the last two, with and without keepdims
    rng = np.random.default_rng(rows + n)
    x = rng.standard_normal((rows, 2, n)).astype(np.float32)
    x[0, 0, 3] = np.nan
    x[1, 1, :] = np.inf
    x[2, 0, 5] = -np.inf
    ref = getattr(np, name)
    for axis, keepdims in (((2,), False), ((1, 2), True), ((-1,), True)):
        got = getattr(nd, name)(nd.array(x), axis=axis, keepdims=keepdims).asnumpy()
        np.testing.assert_array_equal(got, ref(x, axis=axis, keepdims=keepdims))
    s = getattr(sym, name)(sym.var('x'), axis=-1)
    got = CachedOp(s)(nd.array(x))[0].asnumpy()
    np.testing.assert_array_equal(got, ref(x, axis=-1))


@pytest.mark.parametrize('name', ['sum', 'mean', 'prod', 'max', 'min'])
def test_reduction_of_one_element(name):
    # a reduction of one element per result is a copy of it, never a view of the input
    x = nd.array(np.arange(6, dtype=np.float32).reshape(3, 2, 1) - 2.5)
    y = getattr(nd, name)(x, axis=2)
    assert y.shape == (3, 2)
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy()[:, :, 0])
    x[:] = 0
    assert y.asnumpy()[0, 0] == -2.5


def test_gradients_match_mxnet():
    nan = np.nan
    _, g = _grad('prod', [[1, 0, 3], [0, 0, 2], [2, 3, 4]], axis=1)
    np.testing.assert_array_equal(g, [[0, nan, 0], [nan, nan, 0], [12, 8, 6]])
    _, g = _grad('max', [[1, 3, 3], [2, 2, 0]])
    np.testing.assert_array_equal(g, [[0, 1, 1], [0, 0, 0]])
    _, g = _grad('max', [[1, nan, 3], [2, 2, 0]], axis=1)
    np.testing.assert_array_equal(g, [[0, 0, 0], [1, 1, 0]])
    _, g = _grad('norm', [[0, 0, 0], [3, 4, 0]], axis=1)
    np.testing.assert_allclose(g, [[nan, nan, nan], [0.6, 0.8, 0]])
    _, g = _grad('norm', [[0, 0, 0], [3, -4, 0]], axis=1, ord=1)
    np.testing.assert_array_equal(g, [[0, 0, 0], [1, -1, 0]])
    _, g = _grad('nansum', [[1, nan, 3], [2, 2, 0]], axis=1)
    np.testing.assert_array_equal(g, [[1, 0, 1], [1, 1, 1]])
    _, g = _grad('nanprod', [[1, nan, 3], [2, 2, 0]], axis=1)
    np.testing.assert_array_equal(g, [[3, 0, 1], [0, 0, nan]])
    _, g = _grad('argmax', [[1, 3, 3], [2, 2, 0]], axis=1)
    np.testing.assert_array_equal(g, np.zeros((2, 3)))
    _, g = _grad('moments', [[1, 3, 3], [2, 2, 0]], axes=(1,))
    np.testing.assert_allclose(g, [[-1.4444443, 1.2222223, 1.2222223],
                                   [1.2222222, 1.2222222, -1.4444444]], rtol=1e-6)
    _, g = _grad('mean', [[1, 3, 3], [2, 2, 0]], axis=1, exclude=True)
    np.testing.assert_allclose(g, np.full((2, 3), 0.5))


def test_moments_one_output_used():
    x = nd.array(np.arange(6.0).reshape(2, 3))
    x.attach_grad()
    with autograd.record():
        mean, var = nd.moments(x, axes=(1,))
    var.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * (x.asnumpy() - 1 - 3 * (x.asnumpy() > 2))
                               / 3)


def test_norm_out_dtype():
    x = nd.array([[3.0, 4.0], [1.0, 0.0]])
    x.attach_grad()
    with autograd.record():
        y = nd.norm(x, axis=1, out_dtype='float64')
    assert y.dtype == np.float64
    y.backward(nd.array([1.0, 2.0], dtype='float64'))
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.asnumpy(), [[0.6, 0.8], [2.0, 0.0]], rtol=1e-6)
    assert nd.norm(x, out_dtype='int32').asnumpy().tolist() == [5]
    s = sym.norm(sym.var('x'), out_dtype='float16')
    assert s.infer_type(x=np.float32)[1] == [np.float16]


@pytest.mark.parametrize('call, pattern', [
    (lambda: nd.sum(nd.ones(S3), axis=(1, 1)), 'duplicates'),
    (lambda: nd.sum(nd.ones(S3), axis=(0, -3)), 'duplicates'),
    (lambda: nd.sum(nd.ones(S3), axis=3), 'exceeds'),
    (lambda: nd.mean(nd.ones(S3), axis=-4, exclude=True), 'exceeds'),
    (lambda: nd.norm(nd.ones(S3), axis=(2, 2)), 'duplicates'),
    (lambda: nd.argmax(nd.ones(S3), axis=3), 'out of range'),
    (lambda: nd.argmax_channel(nd.ones((4,))), 'axis 1'),
    (lambda: nd.moments(nd.ones(S3), axes=(1, 1)), 'duplicates'),
    (lambda: nd.broadcast_to(nd.ones((2, 1, 3)), shape=(4, 3)), 'rank'),
    (lambda: nd.broadcast_to(nd.ones((2, 1, 3)), shape=(3, 4, 3)), 'broadcast'),
    (lambda: nd.broadcast_like(nd.ones((1, 3)), nd.ones((4, 5))), 'broadcast'),
    (lambda: nd.broadcast_like(nd.ones((4, 3, 1)), nd.ones((4, 5)), lhs_axes=(0,),
                               rhs_axes=(0,)), 'not 1'),
    (lambda: nd.broadcast_like(nd.ones((1, 3)), nd.ones((4, 5)), lhs_axes=(0,),
                               rhs_axes=(2,)), 'rhs_axes'),
    (lambda: nd.broadcast_axis(nd.ones((1, 3, 1)), axis=(1,), size=(3,)), 'not 1'),
    (lambda: nd.broadcast_axis(nd.ones((1, 3, 1)), axis=(0, 0), size=(3, 4)), 'not 1'),
    (lambda: nd.broadcast_axis(nd.ones((1, 3, 1)), axis=(0,), size=(3, 4)), 'length'),
])
def test_shape_errors(call, pattern):
    with pytest.raises(ShapeError, match=pattern) as err:
        call()
    # the message names the operator and the input shapes
    assert 'Error in operator' in str(err.value) and '(' in str(err.value)


@pytest.mark.parametrize('call, pattern', [
    (lambda: nd.norm(nd.ones(S3), ord=3), 'ord=1 and ord=2'),
    (lambda: nd.norm(nd.ones(S3), out_dtype='uint8'), 'out_dtype'),
    (lambda: nd.moments(nd.ones(S3)), 'axes'),
    (lambda: nd.moments(nd.ones(S3), axes=()), 'axes'),
    (lambda: nd.broadcast_like(nd.ones((1, 3)), nd.ones((4, 3)), lhs_axes=(),
                               rhs_axes=()), 'empty'),
    (lambda: nd.broadcast_like(nd.ones((1, 3)), nd.ones((4, 3)), lhs_axes=(0,),
                               rhs_axes=(0, 1)), 'length'),
    (lambda: nd.sum(nd.ones(S3), keepdim=True), 'keepdim'),
])
def test_attribute_errors(call, pattern):
    with pytest.raises(AttributeParseError, match=pattern):
        call()


def test_methods():
    x = nd.array(np.arange(24.0).reshape(S3))
    np.testing.assert_allclose(x.sum(axis=1).asnumpy(), np.arange(24.0).reshape(S3).sum(1))
    assert x.max().asnumpy().tolist() == [23.0]
    assert x.min(axis=(0, 2), keepdims=True).shape == (1, 3, 1)
    np.testing.assert_allclose(x.mean(axis=-1, exclude=True).asnumpy(), [10, 11, 12, 13])
    assert x.prod(axis=0).shape == (3, 4)
    assert x.nansum().shape == x.nanprod().shape == (1,)
    np.testing.assert_allclose(x.norm().asnumpy(), [np.sqrt((np.arange(24.0) ** 2).sum())],
                               rtol=1e-6)
    assert x.argmax(axis=1).asnumpy().tolist() == [[2] * 4] * 2
    assert x.argmin().asnumpy().tolist() == [0]
    assert x.argmax_channel().shape == (2, 4)
    assert nd.ones((2, 1)).broadcast_to((2, 3)).shape == (2, 3)
    assert nd.ones((1, 3)).broadcast_axes(axis=0, size=4).shape == (4, 3)
    assert nd.ones((1, 3)).broadcast_like(nd.ones((5, 3))).shape == (5, 3)
    s = sym.var('x')
    out = s.sum(axis=1).max(keepdims=True)
    assert out.infer_shape(x=S3)[1] == [(1, 1)]
    np.testing.assert_allclose(out.eval(x=x)[0].asnumpy(), [[57.0]])


def test_json_attributes():
    text = sym.sum(sym.var('x'), axis=1).tojson()
    assert '"axis": "1"' in text
    text = sym.norm(sym.var('x'), ord=1, axis=(0, 1), keepdims=True).tojson()
    assert '"ord": "1"' in text and '"axis": "(0, 1)"' in text and '"keepdims": "True"' in text
    node = sym.moments(sym.var('x'), axes=1)
    assert node.list_outputs() == [f'{node.name}_output0', f'{node.name}_output1']
    again = sym.fromjson(node.tojson())
    assert again.infer_shape(x=S3)[1] == [(2, 4), (2, 4)]


def test_partial_shape_inference():
    x = sym.var('x')
    _, out, _ = sym.sum(x, axis=1).infer_shape_partial(x=(2, 0, 3))
    assert out == [(2, 3)]
    _, out, _ = sym.sum(x, axis=1, exclude=True).infer_shape_partial(x=(0, 4, 3))
    assert out == [(4,)]
    _, out, _ = sym.broadcast_to(x, shape=(2, 3)).infer_shape_partial()
    assert out == [(2, 3)]
