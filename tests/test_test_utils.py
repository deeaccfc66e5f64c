"""mx.test_utils (hybridlib/test_utils/) against MXNet 1.9.1: tolerances, the decisions and
messages of assert_almost_equal, the random helpers under np.random.seed, numeric_grad and the
symbol checks (tests/data/test_utils-cases.json, written by tests/data/make_test_utils_files.py),
and the behaviour of the other helpers (downloads against a local HTTP server)."""
import bz2
import contextlib
import functools
import gzip
import http.server
import io
import json
import math
import os
import re
import struct
import subprocess
import sys
import threading
import zipfile

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import gluon, nd, sym
from hybridlib import test_utils as tu
from hybridlib.base import NotSupportedError

with open(os.path.join(os.path.dirname(__file__), 'data', 'test_utils-cases.json')) as _f:
    CASES = json.load(_f)


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.name.NameManager():
        yield


# -------------------------------------------------------------------------------------------------
# decoding the recorded inputs
# -------------------------------------------------------------------------------------------------

def build(spec):
    if spec['kind'] == 'number':
        return spec['value']
    if spec['kind'] == 'npscalar':
        return np.dtype(spec['dtype']).type(spec['value'])
    arr = np.array(spec['values'], dtype=spec['dtype']).reshape(spec['shape'])
    return nd.array(arr, dtype=arr.dtype) if spec['kind'] == 'nd' else arr


def tol_build(tol):
    if isinstance(tol, dict):
        return {np.dtype(k): v for k, v in tol['dict'].items()}
    return tol


def kwargs_build(kwargs):
    out = {k: tol_build(v) if k in ('rtol', 'atol') else v for k, v in kwargs.items()}
    for key in ('names', 'mismatches'):
        if key in out:
            out[key] = tuple(out[key])
    return out


def outcome(fn):
    out = io.StringIO()
    result = {}
    with contextlib.redirect_stdout(out):
        try:
            ret = fn()
            result.update(passed=True)
            if isinstance(ret, (bool, np.bool_)):
                result['returned'] = bool(ret)
        except Exception as err:  # noqa: BLE001 (compared with MXNet's)
            result.update(passed=False, error=type(err).__name__, message=str(err))
    result['stdout'] = out.getvalue()
    return result


def check_same_outcome(got, case):
    assert got['passed'] == case['passed'], (got, case)
    if not case['passed']:
        assert got['error'] == case['error']
        assert got['message'] == case['message']
    if 'returned' in case:
        assert got['returned'] == case['returned']
    assert got['stdout'] == case['stdout']


def case_id(case):
    def describe(s):
        if s['kind'] in ('number', 'npscalar'):
            return s.get('dtype', '') + repr(s['value'])
        return '%s-%s%s' % (s['kind'], s['dtype'], tuple(s['shape']))
    return '%s|%s|%s' % (describe(case['a']), describe(case['b']),
                         ','.join('%s=%s' % kv for kv in sorted(case['kwargs'].items())))


# -------------------------------------------------------------------------------------------------
# tolerances
# -------------------------------------------------------------------------------------------------

def test_default_tolerances_are_mxnets():
    recorded = CASES['tolerances']

    def names(table):
        return {np.dtype(k).name: v for k, v in table.items()}
    assert names(tu.default_rtols()) == recorded['rtols']
    assert names(tu.default_atols()) == recorded['atols']
    assert names(tu.default_numeric_eps()) == recorded['numeric_eps']
    assert np.dtype(tu.default_dtype()).name == recorded['default_dtype']


@pytest.mark.parametrize('case', CASES['get_tols']['pairs'],
                         ids=lambda c: case_id({'a': c['x'], 'b': c['y'], 'kwargs': {
                             'rtol': c['rtol'], 'atol': c['atol']}}))
def test_get_tols(case):
    x, y = build(case['x']), build(case['y'])
    got = tu.get_tols(x, y, tol_build(case['rtol']), tol_build(case['atol']))
    assert list(got) == case['result']


def test_get_rtol_atol_etol():
    for case in CASES['get_tols']['singles']:
        if case['dtype'] is None:
            assert (tu.get_rtol(), tu.get_atol(), tu.get_etol(), tu.get_etol(0.3)) == (
                case['rtol'], case['atol'], case['etol'], case['etol_given'])
        else:
            assert tu.get_rtol(None, np.dtype(case['dtype'])) == case['rtol']
            assert tu.get_atol(None, case['dtype']) == case['atol']
    assert tu.get_rtol(0.5, np.float16) == 0.5 and tu.get_atol(0.25) == 0.25


def test_tolerance_of_dtypes_missing_from_mxnets_tables():
    # integers compare exactly; other dtypes need explicit tolerances
    assert tu.get_tols(np.ones(2, np.int16), np.ones(2, np.int16), None, None) == (0, 0)
    with pytest.raises(KeyError, match='complex64'):
        tu.get_tols(np.ones(2, np.complex64), np.ones(2, np.complex64), None, None)


def test_effective_dtype():
    assert tu.effective_dtype(nd.ones(2)) == np.float32
    assert tu.effective_dtype(np.ones(2, np.float16)) == np.float16
    # TF32 happens only on GPUs (with cupy's TF32 mode)
    with tu.environment('CUPY_TF32', '1'):
        assert tu.effective_dtype(nd.ones(2)) == np.float32


# -------------------------------------------------------------------------------------------------
# assert_almost_equal and friends: decisions, messages and printed reports
# -------------------------------------------------------------------------------------------------

# MXNet indexes the unbroadcast array with the broadcast location and raises IndexError; here
# the report is on the broadcast arrays
BROADCAST_REPORT = ('np-float32(2, 3)|np-float32(1, 3)|')


@pytest.mark.parametrize('case', CASES['assert_almost_equal'] + CASES['near_threshold'],
                         ids=case_id)
def test_assert_almost_equal_as_mxnet(case):
    a, b = build(case['a']), build(case['b'])
    kwargs = kwargs_build(case['kwargs'])
    got = outcome(lambda: tu.assert_almost_equal(a, b, **kwargs))
    if case_id(case) == BROADCAST_REPORT:
        assert case['error'] == 'IndexError'
        assert got['error'] == 'AssertionError'
        assert 'Location of maximum error: (1, 0), a=4.00000000, b=1.00000000' in got['message']
        return
    check_same_outcome(got, case)


def test_near_threshold_cases_decide_both_ways():
    # the recorded cases are a real test of the decision: some pass, some fail, per dtype/kind
    seen = {}
    for case in CASES['near_threshold']:
        seen.setdefault((case['a']['kind'], case['a']['dtype']), set()).add(case['passed'])
    assert len(seen) == 6 and all(v == {True, False} for v in seen.values()), seen


@pytest.mark.parametrize('case', CASES['other_comparisons'],
                         ids=lambda c: c['fn'] + '|' + case_id(c))
def test_other_comparisons_as_mxnet(case):
    a, b = build(case['a']), build(case['b'])
    fn = getattr(tu, case['fn'])
    got = outcome(lambda: fn(a, b, **kwargs_build(case['kwargs'])))
    check_same_outcome(got, case)


def test_assert_almost_equal_leaves_print_options_alone():
    before = np.get_printoptions()
    with pytest.raises(AssertionError), contextlib.redirect_stdout(io.StringIO()):
        tu.assert_almost_equal(np.arange(10.), np.arange(10.) + 1)
    assert np.get_printoptions() == before


def test_assert_almost_equal_with_broadcast_and_lists():
    tu.assert_almost_equal([1.0, 2.0], np.array([1.0, 2.0]))
    tu.assert_almost_equal(nd.ones((2, 3)), nd.ones((1, 3)))
    with pytest.raises(AssertionError, match=r'Location of maximum error: \(1, 2\), a=1\.0+, '
                                             r'b=3\.0+'), \
            contextlib.redirect_stdout(io.StringIO()):
        tu.assert_almost_equal(nd.ones((1, 3)), nd.array([[1, 1, 1], [1, 1, 3]]))
    with pytest.raises(AssertionError, match='are not equal'):
        tu.assert_almost_equal(nd.ones((2, 3)), nd.ones((1, 3)), use_broadcast=False)


def test_assert_almost_equal_bool_and_ignore_nan():
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([True, False]), np.array([True, True]))
    assert tu.almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 1.0]))
    assert not tu.almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 2.0]))


def test_assert_almost_equal_with_err_uses_tolerance_dicts():
    a = np.zeros(10, np.float32)
    b = a.copy()
    b[0] = 1
    tu.assert_almost_equal_with_err(a, b, etol=0.15)
    tu.assert_almost_equal_with_err(nd.array(a), nd.array(b), etol=0.15)
    with pytest.raises(AssertionError), contextlib.redirect_stdout(io.StringIO()):
        tu.assert_almost_equal_with_err(a, b, etol=0.05)
    tu.assert_almost_equal_with_err(a, b, atol={np.dtype(np.float32): 2.0}, etol=0.05)


# -------------------------------------------------------------------------------------------------
# random helpers (numpy's global generator, as MXNet) and numpy helpers
# -------------------------------------------------------------------------------------------------

def test_draws_match_mxnet_under_a_seed():
    rec = CASES['draws']
    np.random.seed(0)
    assert [list(tu.rand_shape_2d()) for _ in range(5)] == rec['rand_shape_2d']
    assert [list(tu.rand_shape_2d(3, 4, allow_zero_size=True)) for _ in range(5)] == \
        rec['rand_shape_2d_zero']
    assert [list(tu.rand_shape_3d(2, 5, 9)) for _ in range(5)] == rec['rand_shape_3d']
    shapes = [tu.rand_shape_nd(4, 7) for _ in range(5)]
    assert [list(s) for s in shapes] == rec['rand_shape_nd']
    assert all(type(d) is int for s in shapes for d in s)
    assert [list(tu.rand_shape_nd(3, allow_zero_size=True)) for _ in range(5)] == \
        rec['rand_shape_nd_zero']
    assert [[int(v) for v in tu.rand_coord_2d(0, 10, 5, 8)] for _ in range(3)] == \
        rec['rand_coord_2d']
    np.random.seed(1)
    one = tu.random_arrays((2, 3))
    assert one.dtype == np.float32 and one.tolist() == rec['random_arrays_one']
    assert [a.tolist() for a in tu.random_arrays((2,), (3, 1))] == rec['random_arrays_two']
    scalar = tu.random_arrays(())
    assert scalar.shape == () and float(scalar) == rec['random_arrays_scalar']
    uniform = tu.random_uniform_arrays((2, 2), (3,), low=-1, high=2, dtype=np.float64)
    assert [a.tolist() for a in uniform] == rec['random_uniform_arrays']
    assert tu.random_sample(list(range(10)), 4) == rec['random_sample']
    for got, want in zip([tu.rand_ndarray((3, 2)), tu.rand_ndarray((2, 2), dtype='float64')],
                         rec['rand_ndarray']):
        assert isinstance(got, nd.NDArray) and np.dtype(got.dtype).name == want['dtype']
        assert got.asnumpy().tolist() == want['values']
    np.random.seed(2)
    for name, args in (('new_matrix_with_real_eigvals_2d', (3,)),
                       ('new_matrix_with_real_eigvals_nd', ((2, 2, 2),)),
                       ('new_orthonormal_matrix_2d', (3,)),
                       ('new_sym_matrix_with_real_eigvals_2d', (3,)),
                       ('new_sym_matrix_with_real_eigvals_nd', ((2, 1, 3, 3),))):
        np.testing.assert_allclose(getattr(tu, name)(*args), rec[name], rtol=1e-9, atol=1e-9)
    np.random.seed(3)
    assert [tu.mean_check(lambda n: np.random.normal(0.1, 1.0, size=n), mu, 1.0,
                          nsamples=20000) for mu in (0.1, 0.0, 0.13)] == rec['mean_check']
    assert [tu.var_check(lambda n: np.random.normal(0, 2.0, size=n), sigma, nsamples=20000)
            for sigma in (2.0, 1.9)] == rec['var_check']
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda p: 2 * p - 1, 4)
    assert [[list(b) for b in buckets], probs] == [[list(b) for b in
                                                    rec['gen_buckets_probs_with_ppf'][0]],
                                                   rec['gen_buckets_probs_with_ppf'][1]]


def test_random_helper_errors():
    with pytest.raises(TypeError, match='unexpected'):
        tu.random_uniform_arrays((2,), scale=3)
    with pytest.raises(AssertionError):
        tu.random_sample([1, 2], 3)


def test_numpy_helpers_match_mxnet():
    rec = CASES['numpy_helpers']
    a = np.array(rec['input'])
    for case in rec['np_reduce']:
        got = tu.np_reduce(a, case['axis'], case['keepdims'], getattr(np, case['fn']))
        np.testing.assert_allclose(got, case['result'], rtol=1e-12)
    for case in rec['collapse_sum_like']:
        np.testing.assert_allclose(tu.collapse_sum_like(a, tuple(case['shape'])),
                                   case['result'], rtol=1e-12)
    np.testing.assert_allclose(tu.assign_each(a[0], lambda x: x * x - 1), rec['assign_each'])
    np.testing.assert_allclose(tu.assign_each2(a[0], a[1], lambda x, y: x * 10 + y),
                               rec['assign_each2'])
    # positions are kept for non-contiguous input too
    t = a[0].T
    np.testing.assert_allclose(tu.assign_each(t, lambda x: x + 1), t + 1)
    assert tu.assign_each(t, None).tolist() == t.tolist()
    assert tu.collapse_sum_like(np.zeros((0, 3)), (1, 3)).shape == (1, 3)


def test_ndarray_builders():
    assert tu.create_vector(4).asnumpy().tolist() == [0, 1, 2, 3]
    assert tu.create_vector(4).dtype == np.int64
    assert tu.create_2d_tensor(3, 2).asnumpy().tolist() == [[0, 0], [1, 1], [2, 2]]
    assert tu.get_identity_mat(3).asnumpy().tolist() == np.eye(3).tolist()
    assert tu.get_identity_mat_batch(2).shape == (2, 2, 2)
    assert tu.get_identity_mat_batch(2).asnumpy()[1].tolist() == np.eye(2).tolist()


def test_sparse_storage_is_refused_clearly():
    for call in (lambda: tu.rand_ndarray((2, 3), stype='csr'),
                 lambda: tu.rand_ndarray((2, 3), stype='row_sparse'),
                 lambda: tu.rand_sparse_ndarray((2, 3), 'csr'),
                 lambda: tu.create_sparse_array((2, 3), 'row_sparse'),
                 lambda: tu.create_sparse_array_zd((2, 3), 'csr', density=0.5),
                 lambda: tu.shuffle_csr_column_indices(nd.ones((2, 2)))):
        with pytest.raises(NotSupportedError, match='sparse storage'):
            call()
    with pytest.raises(AssertionError, match='storage type'):
        tu.rand_ndarray((2, 3), stype='dense')
    with pytest.raises(AssertionError, match='storage type'):
        tu.create_sparse_array((2, 3), 'coo')
    with pytest.raises(NotSupportedError, match='sparse storage'):
        tu.check_symbolic_backward(sym.var('x') * 2, [np.ones(2)], [np.ones(2)], [np.ones(2)],
                                   grad_stypes={'x': 'row_sparse'})


def test_shuffle_csr_column_indices_shuffles_within_rows():
    class CSR:
        indptr = np.array([0, 3, 3, 7])
        indices = np.array([0, 1, 2, 0, 1, 2, 3])
    csr = CSR()
    np.random.seed(4)
    tu.shuffle_csr_column_indices(csr)
    assert sorted(csr.indices[:3]) == [0, 1, 2] and sorted(csr.indices[3:]) == [0, 1, 2, 3]
    assert csr.indices.tolist() != [0, 1, 2, 0, 1, 2, 3]


# -------------------------------------------------------------------------------------------------
# symbols: numeric_grad, check_numeric_gradient, check_symbolic_*, check_consistency
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('case', CASES['numeric_grad'], ids=lambda c: c['dtype'] + '-' + str(
    sorted(c['location'])))
def test_numeric_grad_matches_mxnet(case):
    s = sym.fromjson(case['symbol'])
    dtype = np.dtype(case['dtype']).type
    loc = {k: np.array(v) for k, v in case['location'].items()}
    shapes = {k: v.shape for k, v in loc.items()}
    exe = s.simple_bind(mx.cpu(), type_dict={k: case['dtype'] for k in loc}, **shapes)
    aux = case.get('aux_states')
    aux = {k: np.array(v) for k, v in aux.items()} if aux else None
    grads = tu.numeric_grad(exe, loc, aux_states=aux, eps=case['eps'], dtype=dtype)
    assert sorted(grads) == sorted(case['grads'])
    tol = 1e-9 if dtype == np.float64 else 2e-3
    for k, v in case['grads'].items():
        assert grads[k].dtype == dtype
        np.testing.assert_allclose(grads[k], v, rtol=tol, atol=tol)
    # the executor's arguments are back at the location
    for k, v in loc.items():
        np.testing.assert_allclose(exe.arg_dict[k].asnumpy(), v, rtol=1e-6)


def _location_error(message):
    match = re.search(r'Location of maximum error: (\([0-9, ]*\)), (\w+)=(-?[0-9.]+), '
                      r'(\w+)=(-?[0-9.]+)', message)
    assert match, message
    return match.group(1), match.group(2), float(match.group(3)), match.group(4), \
        float(match.group(5))


@pytest.mark.parametrize('case', CASES['check_numeric_gradient'], ids=lambda c: c['name'])
def test_check_numeric_gradient_as_mxnet(case):
    s = sym.fromjson(case['symbol'])
    loc = {k: np.array(v) for k, v in case['location'].items()}
    kwargs = dict(case['kwargs'])
    if 'dtype' in kwargs:
        kwargs['dtype'] = np.dtype(kwargs['dtype']).type
    if 'aux_states' in kwargs:
        kwargs['aux_states'] = {k: np.array(v) for k, v in kwargs['aux_states'].items()}
    np.random.seed(11)
    got = outcome(lambda: tu.check_numeric_gradient(s, loc, **kwargs))
    assert got['passed'] == case['passed'], got
    if not case['passed']:
        assert got['error'] == case['error'] == 'AssertionError'
        want = _location_error(case['message'])
        have = _location_error(got['message'])
        # same location and names; the values come from float32 finite differences
        assert have[0] == want[0] and have[1] == want[1] and have[3] == want[3]
        np.testing.assert_allclose([have[2], have[4]], [want[2], want[4]], rtol=2e-3)
        first = case['message'].splitlines()[2]
        assert got['message'].splitlines()[2].split('exceeds')[1] == first.split('exceeds')[1]


def test_check_numeric_gradient_checks_shapes_and_outputs():
    x = sym.var('x')
    tu.check_numeric_gradient(sym.exp(x), [np.random.rand(2, 2)], dtype=np.float64)
    with pytest.raises(AssertionError, match='one output'):
        tu.check_numeric_gradient(sym.Group([x * 2, x * 3]), [np.ones(2)])
    with pytest.raises(ValueError, match='do not match'):
        tu.check_numeric_gradient(x * sym.var('y'), {'x': np.ones(2)})
    with pytest.raises(ValueError, match='grad_nodes'):
        tu.check_numeric_gradient(sym.exp(x), [np.ones(2)], grad_nodes='x')


@pytest.mark.parametrize('case', CASES['symbolic'], ids=lambda c: c['name'])
def test_check_symbolic_forward_backward_as_mxnet(case):
    s = sym.fromjson(case['symbol'])
    loc = [np.array(v) for v in case['location']]

    def arrays(value):
        if isinstance(value, dict):
            return {k: np.array(v) for k, v in value.items()}
        return [np.array(v) for v in value]
    np.random.seed(5)
    if case['name'].startswith('forward'):
        got = outcome(lambda: tu.check_symbolic_forward(s, loc, arrays(case['expected'])))
    else:
        if isinstance(case['out_grads'], dict):
            loc = dict(zip(s.list_arguments(), loc))
        got = outcome(lambda: tu.check_symbolic_backward(
            s, loc, arrays(case['out_grads']), arrays(case['expected']),
            grad_req=case.get('grad_req', 'write')))
    check_same_outcome(got, case)


def test_check_symbolic_backward_returns_the_buffers():
    x, w = sym.var('x'), sym.var('w')
    out = sym.broadcast_mul(x, w)
    xv, wv = np.arange(6.).reshape(2, 3), np.array([[1., 2., 3.]])
    outs = tu.check_symbolic_forward(out, {'x': xv, 'w': wv}, [xv * wv])
    assert outs[0].shape == (2, 3)
    grads = tu.check_symbolic_backward(out, [xv, wv], [np.ones((2, 3))],
                                       [np.broadcast_to(wv, (2, 3)), xv.sum(0, keepdims=True)],
                                       dtype='asnumpy')
    assert grads['x'].dtype == np.float64
    with pytest.raises(ValueError, match='Invalid grad_req'):
        tu.check_symbolic_backward(out, [xv, wv], [np.ones((2, 3))], {'x': xv},
                                   grad_req='sometimes')


def test_simple_forward():
    x = sym.var('x')
    np.testing.assert_allclose(tu.simple_forward(sym.exp(x), x=np.zeros(2)), [1, 1])
    two = tu.simple_forward(sym.Group([x + 1, x * 3]), x=np.ones(2))
    assert [t.tolist() for t in two] == [[2, 2], [3, 3]]


@pytest.mark.parametrize('case', CASES['check_consistency'], ids=lambda c: '-'.join(c['dtypes']))
def test_check_consistency_ground_truth_as_mxnet(case):
    s = sym.fromjson(case['symbol'])
    shapes = {k: tuple(v) for k, v in case['shapes'].items()}
    ctx_list = [dict(ctx=mx.cpu(), type_dict={k: dt for k in shapes}, **shapes)
                for dt in case['dtypes']]
    params = {k: np.array(v) for k, v in case['arg_params'].items()}
    with contextlib.redirect_stdout(io.StringIO()):
        gt = tu.check_consistency(s, ctx_list, arg_params=params)
    assert sorted(gt) == sorted(case['ground_truth'])
    for k, v in case['ground_truth'].items():
        assert np.dtype(gt[k].dtype).name == case['ground_truth_dtypes'][k]
        np.testing.assert_allclose(gt[k].asnumpy(), v, rtol=1e-6, atol=1e-7)


def test_check_consistency_reports_mismatches():
    x = sym.var('x')
    ctx_list = [{'ctx': mx.cpu(), 'x': (2, 3), 'type_dict': {'x': np.float64}},
                {'ctx': mx.cpu(), 'x': (2, 3), 'type_dict': {'x': np.float16}}]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        tu.check_consistency(sym.tanh(x), ctx_list)
        tu.check_consistency(sym.tanh(x), ctx_list, grad_req='add')
        gt = tu.check_consistency(sym.tanh(x, name='t'), ctx_list, grad_req='null')
        assert sorted(gt) == ['t_output']
        wrong = {'t_output': np.ones((2, 3))}
        with pytest.raises(AssertionError):
            tu.check_consistency(sym.tanh(x, name='t'), ctx_list, ground_truth=wrong,
                                 grad_req='null')
        tu.check_consistency(sym.tanh(x, name='t'), ctx_list, ground_truth=wrong,
                             grad_req='null', raise_on_err=False)
    assert 'Predict Err: ctx 1 vs ctx 0 at t_output' in out.getvalue()


def test_check_speed():
    x = sym.var('x')
    assert tu.check_speed(sym.tanh(x), x=(3, 3), N=2) > 0
    assert tu.check_speed(sym.tanh(x), location={'x': np.ones((3, 3))}, typ='forward', N=2) > 0
    with pytest.raises(ValueError, match='whole'):
        tu.check_speed(sym.tanh(x), x=(3, 3), typ='backward')


class _Scale(gluon.HybridBlock):
    def __init__(self, odd=False, **kwargs):
        super().__init__(**kwargs)
        self.odd = odd
        with self.name_scope():
            self.dense = gluon.nn.Dense(3, in_units=4)

    def hybrid_forward(self, F, x):
        y = self.dense(x)
        if self.odd and F is nd:     # imperative and hybridized differ
            y = y + 1
        return F.tanh(y)


def test_check_gluon_hybridize_consistency():
    data = [nd.array(np.random.uniform(-1, 1, (2, 4)))]
    tu.check_gluon_hybridize_consistency(_Scale, data)
    with pytest.raises(AssertionError):
        tu.check_gluon_hybridize_consistency(functools.partial(_Scale, odd=True), data)
    with pytest.raises(AssertionError):
        tu.check_gluon_hybridize_consistency(_Scale, data, numpy_func=lambda x: x[:, :3])


def test_compare_optimizer():
    opt = mx.optimizer
    tu.compare_optimizer(opt.SGD(learning_rate=0.1, momentum=0.9),
                         opt.SGD(learning_rate=0.1, momentum=0.9), (3, 4), np.float32)
    tu.compare_optimizer(opt.SGD(learning_rate=0.1), opt.SGD(learning_rate=0.1),
                         [(2, 3), (4,)], np.float32, ntensors=2)
    with pytest.raises(AssertionError), contextlib.redirect_stdout(io.StringIO()):
        tu.compare_optimizer(opt.SGD(learning_rate=0.1), opt.SGD(learning_rate=0.2), (3, 4),
                             np.float32)
    with pytest.raises(NotSupportedError, match='sparse storage'):
        tu.compare_optimizer(opt.SGD(), opt.SGD(), (3, 4), np.float32, g_stype='row_sparse')


def test_same_symbol_structure_and_same_array():
    x = sym.var('x')
    assert tu.same_symbol_structure(sym.exp(x) + 1, sym.exp(sym.var('y')) + 2)
    assert not tu.same_symbol_structure(sym.exp(x), sym.log(x))
    a = nd.zeros((2, 3))
    assert tu.same_array(a, a[:]) and not tu.same_array(a, a.copy())
    assert a.asnumpy().tolist() == np.zeros((2, 3)).tolist()
    assert tu.same(np.ones(2), nd.ones(2).asnumpy())


# -------------------------------------------------------------------------------------------------
# statistics
# -------------------------------------------------------------------------------------------------

def test_chi_square_p_value_is_exact():
    # Q(k/2, x/2) for even k has a closed form; k = 1 is erfc(sqrt(x/2))
    for dof in (2, 4, 10):
        for x in (0.1, 1.0, 3.0, 7.5, 20.0, 80.0):
            exact = math.exp(-x / 2) * sum((x / 2) ** i / math.factorial(i)
                                           for i in range(dof // 2))
            stat, p = tu._chisquare(np.ones(dof + 1) * 10, np.ones(dof + 1) * 10)
            assert stat == 0 and p == 1.0
            assert tu._upper_regularized_gamma(dof / 2, x / 2) == pytest.approx(exact,
                                                                                 rel=1e-10)
    for x in (0.01, 0.5, 4.0, 30.0):
        assert tu._upper_regularized_gamma(0.5, x / 2) == pytest.approx(
            math.erfc(math.sqrt(x / 2)), rel=1e-10)
    scipy_stats = pytest.importorskip('scipy.stats')
    obs, exp = np.array([30, 14, 34, 45, 57, 20]), np.array([20, 20, 30, 40, 60, 30])
    assert tu._chisquare(obs, exp) == pytest.approx(tuple(scipy_stats.chisquare(obs, exp)))


def test_verify_generator():
    np.random.seed(8)
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda p: p, 5)
    uniform = lambda n: np.random.uniform(0, 1, size=n)  # noqa: E731
    p_values = tu.verify_generator(uniform, buckets, probs, nsamples=20000, nrepeat=3)
    assert len(p_values) == 3 and all(0 <= p <= 1 for p in p_values)
    p, obs, expected = tu.chi_square_check(lambda n: np.random.randint(0, 3, size=n),
                                           [0, 1, 2], [1 / 3.] * 3, nsamples=30000)
    assert p > 1e-4 and obs.sum() == 30000 and expected.tolist() == [10000] * 3
    skewed = lambda n: np.random.uniform(0, 1, size=n) ** 1.2  # noqa: E731
    with pytest.raises(AssertionError, match='Generator test fails'):
        tu.verify_generator(skewed, buckets, probs, nsamples=20000, nrepeat=3)


# -------------------------------------------------------------------------------------------------
# environment, machine, decorators
# -------------------------------------------------------------------------------------------------

def test_contexts_and_machine():
    assert tu.default_context() == mx.cpu()
    tu.set_default_context(mx.cpu(1))
    try:
        assert tu.default_context() == mx.cpu(1) and mx.current_context() == mx.cpu(1)
    finally:
        tu.set_default_context(mx.cpu(0))
    assert list(tu.list_gpus()) == list(range(mx.num_gpus()))
    assert tu.has_tvm_ops() is False and tu.is_op_runnable() is True
    assert tu.is_aarch64_run() == (os.uname().machine == 'aarch64')
    with tu.environment('CD_JOB', '1'):
        assert tu.is_cd_run()
    with tu.environment('CD_JOB', None):
        assert not tu.is_cd_run()


def test_environment_sets_and_restores():
    os.environ['HYBRIDLIB_TU_A'] = 'old'
    os.environ.pop('HYBRIDLIB_TU_B', None)
    try:
        with tu.environment({'HYBRIDLIB_TU_A': None, 'HYBRIDLIB_TU_B': 'new'}):
            assert 'HYBRIDLIB_TU_A' not in os.environ and os.environ['HYBRIDLIB_TU_B'] == 'new'
        assert os.environ['HYBRIDLIB_TU_A'] == 'old' and 'HYBRIDLIB_TU_B' not in os.environ
        with pytest.raises(RuntimeError):
            with tu.environment('HYBRIDLIB_TU_A', 'inside'):
                assert os.environ['HYBRIDLIB_TU_A'] == 'inside'
                raise RuntimeError('body failed')
        assert os.environ['HYBRIDLIB_TU_A'] == 'old'
        with pytest.raises(AssertionError, match='Expecting'):
            with tu.environment('A', 'b', 'c'):
                pass
    finally:
        os.environ.pop('HYBRIDLIB_TU_A', None)


def test_discard_stderr(capfd):
    with tu.discard_stderr():
        os.write(2, b'lost\n')
        sys.stderr.write('lost too\n')
    os.write(2, b'kept\n')
    sys.stderr.write('kept too\n')
    assert capfd.readouterr().err == 'kept\nkept too\n'


def test_retry_and_assert_exception():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 3
    flaky()
    assert len(calls) == 3 and flaky.__name__ == 'flaky'
    calls.clear()
    with pytest.raises(AssertionError):
        tu.retry(2)(flaky.__wrapped__)()
    assert len(calls) == 2

    def raises(kind):
        raise kind('x')
    tu.assert_exception(raises, ValueError, ValueError)
    with pytest.raises(AssertionError, match='did not raise'):
        tu.assert_exception(lambda: None, ValueError)
    # an expected AssertionError is not satisfied by the check's own failure
    with pytest.raises(AssertionError, match='did not raise AssertionError'):
        tu.assert_exception(lambda: None, AssertionError)
    with pytest.raises(KeyError):
        tu.assert_exception(raises, ValueError, KeyError)


def test_compare_ndarray_tuple():
    a = (nd.ones(2), (nd.zeros(3), None))
    tu.compare_ndarray_tuple(a, (nd.ones(2), (nd.zeros(3), nd.ones(1))))
    tu.compare_ndarray_tuple(None, a)
    with pytest.raises(AssertionError), contextlib.redirect_stdout(io.StringIO()):
        tu.compare_ndarray_tuple(a, (nd.ones(2), (nd.ones(3), None)))


# -------------------------------------------------------------------------------------------------
# data: iterators, tools, downloads
# -------------------------------------------------------------------------------------------------

def test_dummy_iter_repeats_the_first_batch():
    class Batches:
        provide_data, provide_label, batch_size = [('data', (2, 3))], [('label', (2,))], 2

        def __init__(self):
            self.items = iter(['b0', 'b1'])

        def __next__(self):
            return next(self.items)
    it = tu.DummyIter(Batches())
    assert isinstance(it, mx.io.DataIter)
    assert [next(it) for _ in range(4)] == ['b0'] * 4
    assert it.next() == 'b0' and it.iter_next() and it.batch_size == 2
    it.reset()
    assert it.provide_data == [('data', (2, 3))] and next(iter(it)) == 'b0'
    source = Batches()
    source.items = iter([mx.io.DataBatch(data=[nd.ones((2, 3))], label=[nd.zeros(2)])])
    it = tu.DummyIter(source)
    assert it.getdata()[0].shape == (2, 3) and it.getlabel()[0].shape == (2,)


def test_get_mnist_iterator(tmp_path, monkeypatch, fake_web):
    made = []
    monkeypatch.setattr(mx.io, 'MNISTIter', lambda **kw: made.append(kw) or len(made))
    pages, _ = fake_web
    pages['http://data.mxnet.io/mxnet/data/mnist.zip'] = _zip_bytes(
        {n: b'x' for n in ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte',
                           't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte')})
    monkeypatch.chdir(tmp_path)
    assert tu.get_mnist_iterator(32, (784,), num_parts=2, part_index=1) == (1, 2)
    assert made[0] == dict(image='data/train-images-idx3-ubyte',
                           label='data/train-labels-idx1-ubyte', input_shape=(784,),
                           batch_size=32, shuffle=True, flat=True, num_parts=2, part_index=1)
    assert made[1]['image'] == 'data/t10k-images-idx3-ubyte' and 'shuffle' not in made[1]
    assert (tmp_path / 'data' / 't10k-images-idx3-ubyte').exists()
    tu.get_mnist_iterator(8, (1, 28, 28))
    assert made[2]['flat'] is False


def test_im2rec_path_is_reported_clearly(tmp_path):
    with tu.environment('MXNET_HOME', None):
        with pytest.raises(IOError, match='im2rec'):
            tu.get_im2rec_path()
    (tmp_path / 'tools').mkdir()
    (tmp_path / 'tools' / 'im2rec.py').write_text('# tool\n')
    with tu.environment('MXNET_HOME', str(tmp_path)):
        assert tu.get_im2rec_path() == str(tmp_path / 'tools' / 'im2rec.py')
    with tu.environment('MY_HOME', str(tmp_path / 'nowhere')):
        with pytest.raises(IOError, match='MY_HOME'):
            tu.get_im2rec_path('MY_HOME')


@pytest.fixture
def fake_web(monkeypatch):
    """URL -> bytes served through the file fetcher that ``download`` uses; records fetches."""
    pages, fetched = {}, []

    def fetch(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
        fetched.append((url, path))
        if url not in pages:
            raise RuntimeError('Failed downloading url %s' % url)
        with open(path, 'wb') as f:
            f.write(pages[url])
        return path
    monkeypatch.setattr(tu._utils, 'download', fetch)
    return pages, fetched


def test_download_names_and_skips(tmp_path, monkeypatch, fake_web):
    pages, fetched = fake_web
    monkeypatch.chdir(tmp_path)
    pages['http://x.org/a/file.txt'] = b'one'
    assert tu.download('http://x.org/a/file.txt') == 'file.txt'
    assert (tmp_path / 'file.txt').read_bytes() == b'one'
    pages['http://x.org/a/file.txt'] = b'two'
    assert tu.download('http://x.org/a/file.txt') == 'file.txt'      # exists: skipped
    assert (tmp_path / 'file.txt').read_bytes() == b'one' and len(fetched) == 1
    tu.download('http://x.org/a/file.txt', overwrite=True)
    assert (tmp_path / 'file.txt').read_bytes() == b'two'
    got = tu.download('http://x.org/a/file.txt', fname='b.txt', dirname='sub/dir')
    assert got == os.path.join('sub/dir', 'b.txt') and (tmp_path / got).read_bytes() == b'two'
    assert tu.download('http://x.org/a/file.txt', fname='c/d.txt') == 'c/d.txt'
    with pytest.raises(AssertionError):
        tu.download('http://x.org/a/file.txt', retries=-1)
    with pytest.raises(RuntimeError, match='missing'):
        tu.download('http://x.org/missing')


def _idx(magic_dims, data):
    return gzip.compress(struct.pack('>' + 'I' * len(magic_dims), *magic_dims) + data.tobytes())


def test_get_mnist_reads_the_idx_files(tmp_path, monkeypatch, fake_web):
    pages, _ = fake_web
    monkeypatch.chdir(tmp_path)
    base = 'http://data.mxnet.io/data/mnist/'
    for prefix, n in (('train', 3), ('t10k', 2)):
        labels = np.arange(n, dtype=np.int8)
        images = (np.arange(n * 28 * 28) % 256).astype(np.uint8)
        pages[base + prefix + '-labels-idx1-ubyte.gz'] = _idx((2049, n), labels)
        pages[base + prefix + '-images-idx3-ubyte.gz'] = _idx((2051, n, 28, 28), images)
    data = tu.get_mnist()
    assert data['train_data'].shape == (3, 1, 28, 28) and data['test_data'].shape == (2, 1, 28, 28)
    assert data['train_data'].dtype == np.float32 and data['train_label'].dtype == np.int8
    assert data['test_label'].tolist() == [0, 1]
    assert data['train_data'].reshape(-1)[255] == 1.0 and data['train_data'].max() == 1.0


def _zip_bytes(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, 'w') as zf:
        for name, content in files.items():
            zf.writestr(name, content)
    return buf.getvalue()


def test_archives_and_models(tmp_path, monkeypatch, fake_web):
    pages, fetched = fake_web
    monkeypatch.chdir(tmp_path)
    pages['http://data.mxnet.io/mxnet/data/mnist.zip'] = _zip_bytes(
        {n: b'x' for n in ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte',
                           't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte')})
    tu.get_mnist_ubyte()
    tu.get_mnist_ubyte()                                    # present: no second fetch
    assert (tmp_path / 'data' / 't10k-labels-idx1-ubyte').exists() and len(fetched) == 1
    pages['http://data.mxnet.io/mxnet/data/cifar10.zip'] = _zip_bytes(
        {'cifar/' + n: b'x' for n in ('train.rec', 'test.rec', 'train.lst', 'test.lst')})
    tu.get_cifar10()
    assert (tmp_path / 'data' / 'cifar' / 'test.lst').exists()
    pages['http://deeplearning.net/data/mnist/mnist.pkl.gz'] = b'pkl'
    tu.get_mnist_pkl()
    assert (tmp_path / 'data' / 'mnist.pkl.gz').read_bytes() == b'pkl'

    pages['http://h/ml.zip'] = _zip_bytes({'ml/ratings.dat': b'1::2'})
    tu.get_zip_data('zdir', 'http://h/ml.zip', 'ml.zip')
    assert (tmp_path / 'zdir' / 'ml' / 'ratings.dat').read_bytes() == b'1::2'
    pages['http://h/kdda.t.bz2'] = bz2.compress(b'line1\nline2\n')
    tu.get_bz2_data('bdir', 'kdda.t', 'http://h/kdda.t.bz2', 'kdda.t.bz2')
    assert (tmp_path / 'bdir' / 'kdda.t').read_bytes() == b'line1\nline2\n'
    assert not (tmp_path / 'bdir' / 'kdda.t.bz2').exists()

    meta = {'tiny': {'symbol': 'http://h/tiny-symbol.json', 'params': 'http://h/tiny.params'}}
    pages['http://h/tiny-symbol.json'] = b'{}'
    pages['http://h/tiny.params'] = b'P'
    assert tu.download_model('tiny', dst_dir='models', meta_info=meta) == (
        os.path.join('models', 'tiny'), 0)
    assert (tmp_path / 'models' / 'tiny-0000.params').read_bytes() == b'P'
    assert tu.download_model('unknown', meta_info=meta) == (None, 0)
    assert tu._DEFAULT_MODEL_INFO['imagenet1k-inception-bn']['params'] == (
        'http://data.mxnet.io/models/imagenet/inception-bn/Inception-BN-0126.params')


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def local_server(tmp_path):
    root = tmp_path / 'www'
    root.mkdir()
    handler = functools.partial(_Handler, directory=str(root))
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, 'http://127.0.0.1:%d/' % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_download_fetches_over_http(tmp_path, monkeypatch, local_server):
    root, url = local_server
    (root / 'weights.bin').write_bytes(b'\x00\x01' * 1000)
    monkeypatch.chdir(tmp_path)
    got = tu.download(url + 'weights.bin', dirname='out')
    assert (tmp_path / got).read_bytes() == b'\x00\x01' * 1000
    with pytest.raises(Exception):
        with contextlib.redirect_stdout(io.StringIO()):
            tu.download(url + 'missing.bin', dirname='out', retries=0)
    assert not (tmp_path / 'out' / 'missing.bin').exists()


def test_import_is_cheap():
    # numpy.testing (a tenth of a second) is imported only by a comparison of bool arrays
    # (scipy, optional, imports it for itself: block it)
    code = ('import sys; sys.modules["scipy"] = None; import hybridlib; '
            'print("numpy.testing" in sys.modules, "hybridlib.test_utils" in sys.modules)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ['False', 'True']


def test_public_names_are_mxnets():
    layout = os.path.join(os.path.dirname(__file__), 'data', 'mxnet_layout.json')
    with open(layout) as f:
        names = json.load(f)['modules']['mxnet.test_utils']
    missing = [n for n in names if not hasattr(tu, n)]
    assert missing == []
    assert set(names) <= set(tu.__all__)
