"""Writes tests/data/test_utils-cases.json: what MXNet 1.9.1's ``mx.test_utils`` decides and
returns, for tests/test_test_utils.py.

Run with the MXNet oracle, from the repository root::

    .oracle/bin/python tests/data/make_test_utils_files.py

The file holds:

- the default tolerances per dtype and ``get_tols``/``get_rtol``/``get_atol`` results;
- ``assert_almost_equal`` (and ``_with_err``, ``_ignore_nan``, ``assert_allclose``,
  ``almost_equal``) cases: the inputs (numpy or NDArray, values and dtype), the keyword
  arguments, whether MXNet passed, and otherwise the exception type, message and what it printed.
  Near-threshold cases (one element at 0.98 to 1.02 times the tolerance) check the decision;
- values drawn by the random helpers after ``np.random.seed`` (MXNet draws from numpy's global
  generator);
- ``numeric_grad`` of fixed inputs, and pass/fail of ``check_numeric_gradient``,
  ``check_symbolic_forward``/``backward`` on symbols stored as MXNet JSON (with the error
  messages where they are deterministic), and the ground truth ``check_consistency`` returns.
"""
import contextlib
import io
import json
import os

import numpy as np
import mxnet as mx
from mxnet import test_utils as tu

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'test_utils-cases.json')

FLOATS = ('float16', 'float32', 'float64')
DEFAULT_PRINT_OPTIONS = np.get_printoptions()


# -- encoding of inputs --------------------------------------------------------------------------

def spec(x, kind=None):
    """A JSON description of an input: numpy array or scalar, NDArray, or Python number."""
    if isinstance(x, mx.nd.NDArray):
        return {'kind': 'nd', 'dtype': np.dtype(x.dtype).name, 'shape': list(x.shape),
                'values': x.asnumpy().tolist()}
    if isinstance(x, np.ndarray):
        return {'kind': 'np', 'dtype': x.dtype.name, 'shape': list(x.shape),
                'values': x.tolist()}
    if isinstance(x, np.generic):
        return {'kind': 'npscalar', 'dtype': x.dtype.name, 'value': x.item()}
    return {'kind': 'number', 'value': x}


def build(s):
    if s['kind'] == 'number':
        return s['value']
    if s['kind'] == 'npscalar':
        return np.dtype(s['dtype']).type(s['value'])
    arr = np.array(s['values'], dtype=s['dtype']).reshape(s['shape'])
    return mx.nd.array(arr, dtype=arr.dtype) if s['kind'] == 'nd' else arr


def tol_spec(tol):
    if isinstance(tol, dict):
        return {'dict': {np.dtype(k).name: v for k, v in tol.items()}}
    return tol


def tol_build(t):
    if isinstance(t, dict):
        return {np.dtype(k): v for k, v in t['dict'].items()}
    return t


def outcome(fn):
    """What ``fn()`` did: passed (and returned), or raised (type, message); and its stdout."""
    out = io.StringIO()
    result = {}
    # MXNet's failed comparisons leave numpy's print options changed: start from the defaults
    np.set_printoptions(**DEFAULT_PRINT_OPTIONS)
    with contextlib.redirect_stdout(out):
        try:
            ret = fn()
            result.update(passed=True)
            if isinstance(ret, (bool, np.bool_)):
                result['returned'] = bool(ret)
        except Exception as err:  # noqa: BLE001 (recorded)
            result.update(passed=False, error=type(err).__name__, message=str(err))
    result['stdout'] = out.getvalue()
    return result


# -- tolerances ----------------------------------------------------------------------------------

def tolerances():
    def table(d):
        return {np.dtype(k).name: v for k, v in d.items()}
    return {'rtols': table(tu.default_rtols()), 'atols': table(tu.default_atols()),
            'numeric_eps': table(tu.default_numeric_eps()),
            'default_dtype': np.dtype(tu.default_dtype()).name}


def get_tols_cases():
    cases = []
    inputs = [np.ones(2, 'float16'), np.ones(2, 'float32'), np.ones(2, 'float64'),
              np.ones(2, 'int32'), np.ones(2, 'uint8'), np.ones(2, 'bool'),
              mx.nd.ones(2, dtype='float16'), mx.nd.ones(2), 1.0, 3]
    tols = [(None, None), (0.5, None), (None, 0.25),
            ({np.dtype('float32'): 0.5}, {np.dtype('float16'): 0.3})]
    for i, x in enumerate(inputs):
        for y in inputs[i:]:
            for rtol, atol in tols:
                cases.append({'x': spec(x), 'y': spec(y), 'rtol': tol_spec(rtol),
                              'atol': tol_spec(atol),
                              'result': list(tu.get_tols(x, y, rtol, atol))})
    singles = []
    for dtype in FLOATS + ('int32', 'bool', 'uint64'):
        singles.append({'dtype': dtype, 'rtol': tu.get_rtol(None, np.dtype(dtype)),
                        'atol': tu.get_atol(None, np.dtype(dtype))})
    singles.append({'dtype': None, 'rtol': tu.get_rtol(), 'atol': tu.get_atol(),
                    'etol': tu.get_etol(), 'etol_given': tu.get_etol(0.3)})
    return {'pairs': cases, 'singles': singles}


# -- comparisons ---------------------------------------------------------------------------------

def aae_case(a, b, **kwargs):
    enc = {k: tol_spec(v) if k in ('rtol', 'atol') else v for k, v in kwargs.items()}
    return {'a': spec(a), 'b': spec(b), 'kwargs': enc,
            **outcome(lambda: tu.assert_almost_equal(a, b, **kwargs))}


def near_threshold_cases(rs):
    """One element at 0.98-1.02 times the tolerance, the others at half of it."""
    cases = []
    for dtype in FLOATS:
        rtol = tu.default_rtols()[np.dtype(dtype)]
        atol = tu.default_atols()[np.dtype(dtype)]
        if dtype == 'float64':      # atol 1e-20 leaves rtol alone: test both with larger atol
            atol = 1e-6
        for kind in ('np', 'nd'):
            for _ in range(12):
                b = rs.uniform(-3, 3, size=(3, 4)).astype(dtype)
                factor = np.full(b.shape, 0.5)
                factor.flat[rs.randint(b.size)] = rs.uniform(0.98, 1.02)
                sign = np.where(rs.uniform(size=b.shape) < 0.5, -1.0, 1.0)
                tol = atol + rtol * np.abs(b.astype(np.float64))
                a = (b.astype(np.float64) + sign * factor * tol).astype(dtype)
                if kind == 'nd':
                    a, b = mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype)
                kwargs = {} if dtype != 'float64' else {'atol': atol}
                cases.append(aae_case(a, b, **kwargs))
    # float64 tolerances are float32 in MXNet's NDArray comparison: 1 - 9.9999999e-6 vs 1
    # passes for numpy arrays and fails for NDArrays
    a64, b64 = np.array([1.0 - 9.9999999e-6, 2.0]), np.array([1.0, 2.0])
    cases.append(aae_case(a64, b64, atol=0.0))
    cases.append(aae_case(mx.nd.array(a64, dtype='float64'), mx.nd.array(b64, dtype='float64'),
                          atol=0.0))
    # float16 NDArrays round each step of the tolerance to float16: these pass as numpy arrays
    # and fail as NDArrays (found by a search over random pairs)
    a16 = np.array([-10.875, -10.5078125, 7.74609375, -8.5546875], dtype=np.float16)
    b16 = np.array([-11.0859375, -10.3046875, 7.5703125, -8.7421875], dtype=np.float16)
    for i in range(len(a16)):
        cases.append(aae_case(a16[i:i + 1], b16[i:i + 1]))
        cases.append(aae_case(mx.nd.array(a16[i:i + 1], dtype='float16'),
                              mx.nd.array(b16[i:i + 1], dtype='float16')))
    return cases


def comparison_cases():
    f32 = np.array([[1., 2., 3.], [4., 5., 6.]], dtype=np.float32)
    off = f32.copy()
    off[1, 2] += 0.1
    off[0, 0] += 0.01
    big = np.arange(100.)
    nan = np.array([1.0, np.nan, 3.0], dtype=np.float32)
    inf = np.array([1.0, np.inf, -np.inf], dtype=np.float32)
    half = np.array([0.5, 1.0, 2.0, 4.0], dtype=np.float16)
    ints = np.array([1, 2, 3], dtype=np.int32)
    cases = [
        aae_case(f32, f32.copy()),
        aae_case(f32, off),
        aae_case(f32, off, names=('x', 'y')),
        aae_case(mx.nd.array(f32), mx.nd.array(off)),
        aae_case(mx.nd.array(f32), off, names=('mine', 'ref')),
        aae_case(f32, off, rtol=0.1),
        aae_case(f32, off, atol=0.2),
        aae_case(f32, off, rtol={np.dtype('float32'): 0.05}),
        aae_case(f32, off, atol={np.dtype('float16'): 1.0}),
        aae_case(f32, off.astype(np.float16)),
        aae_case(f32, off.astype(np.float64)),
        aae_case(mx.nd.array(f32), mx.nd.array(off, dtype='float16')),
        aae_case(mx.nd.array(f32, dtype='float16'), mx.nd.array(off, dtype='float16')),
        aae_case(half, half + np.float16(0.09)),
        aae_case(half, half + np.float16(0.2)),
        aae_case(mx.nd.array(half, dtype='float16'),
                 mx.nd.array(half + np.float16(0.2), dtype='float16')),
        aae_case(1.0, 1.1),
        aae_case(1.0, 1.000001),
        aae_case(np.float32(1.0), 1.0001),
        aae_case(np.array(2.0, dtype=np.float32), np.array(2.5, dtype=np.float32)),
        aae_case(big, big + np.linspace(0, 1, 100)),
        aae_case(big, big + np.linspace(0, 1, 100), mismatches=(3, 5)),
        aae_case(big, big + np.linspace(0, 1, 100), mismatches=(2, 0)),
        aae_case(big, big + np.linspace(0, 1, 100), mismatches=(0, 200)),
        aae_case(nan, nan.copy()),
        aae_case(nan, nan.copy(), equal_nan=True),
        aae_case(mx.nd.array(nan), mx.nd.array(nan)),
        aae_case(mx.nd.array(nan), mx.nd.array(nan), equal_nan=True),
        aae_case(nan, np.array([1.0, 2.0, 3.0], dtype=np.float32), equal_nan=True),
        aae_case(inf, inf.copy()),
        aae_case(mx.nd.array(inf), mx.nd.array(inf)),
        aae_case(inf, -inf),
        aae_case(ints, ints.copy()),
        aae_case(ints, ints + np.array([0, 1, 0], dtype=np.int32)),
        aae_case(mx.nd.array(ints, dtype='int32'),
                 mx.nd.array(ints + np.array([0, 0, 1]), dtype='int32')),
        aae_case(ints, ints.astype(np.float32) + 0.0005),
        aae_case(np.array([True, False]), np.array([True, False])),
        aae_case(f32, f32[:1], use_broadcast=False),
        aae_case(f32, f32[:1]),
        aae_case(f32[:, :1], np.ones((2, 3), np.float32) * f32[:, :1]),
        aae_case(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)),
    ]
    return cases


def other_comparisons():
    f32 = np.linspace(-1, 1, 10).astype(np.float32)
    bad = f32.copy()
    bad[3] += 0.5
    bad[7] += 0.25
    nan = np.array([1.0, np.nan, 3.0, 4.0], dtype=np.float32)
    cases = []
    for etol in (None, 0.1, 0.2, 0.3):
        cases.append({'fn': 'assert_almost_equal_with_err', 'a': spec(f32), 'b': spec(bad),
                      'kwargs': {'etol': etol},
                      **outcome(lambda: tu.assert_almost_equal_with_err(f32, bad, etol=etol))})
    for a, b in ((nan, np.array([1.0, 7.0, 3.0, 4.0], np.float32)),
                 (nan, np.array([1.0, 7.0, 3.5, 4.0], np.float32))):
        cases.append({'fn': 'assert_almost_equal_ignore_nan', 'a': spec(a), 'b': spec(b),
                      'kwargs': {},
                      **outcome(lambda: tu.assert_almost_equal_ignore_nan(a, b))})
    for a, b in ((f32, f32 + 1e-8), (f32, f32 * (1 + 1e-6)), (nan, nan.copy())):
        cases.append({'fn': 'assert_allclose', 'a': spec(a), 'b': spec(b), 'kwargs': {},
                      **outcome(lambda: tu.assert_allclose(a, b))})
    for a, b, kw in ((f32, bad, {}), (f32, f32 + 1e-6, {}), (f32, bad, {'atol': 0.6}),
                     (nan, nan.copy(), {'equal_nan': True}), (f32, bad[:1], {}),
                     (f32, f32 + 1e-6, {'rtol': 0.0, 'atol': 0.0})):
        cases.append({'fn': 'almost_equal', 'a': spec(a), 'b': spec(b), 'kwargs': kw,
                      **outcome(lambda: tu.almost_equal(a, b, **kw))})
    cases.append({'fn': 'checkShapes', 'a': spec(f32), 'b': spec(f32[:4]), 'kwargs': {},
                  **outcome(lambda: tu.checkShapes(f32, f32[:4]))})
    cases.append({'fn': 'same', 'a': spec(f32), 'b': spec(f32.copy()), 'kwargs': {},
                  **outcome(lambda: tu.same(f32, f32.copy()))})
    cases.append({'fn': 'same', 'a': spec(f32), 'b': spec(bad), 'kwargs': {},
                  **outcome(lambda: tu.same(f32, bad))})
    return cases


# -- random helpers ------------------------------------------------------------------------------

def draws():
    out = {}
    np.random.seed(0)
    out['rand_shape_2d'] = [list(tu.rand_shape_2d()) for _ in range(5)]
    out['rand_shape_2d_zero'] = [list(tu.rand_shape_2d(3, 4, allow_zero_size=True))
                                 for _ in range(5)]
    out['rand_shape_3d'] = [list(tu.rand_shape_3d(2, 5, 9)) for _ in range(5)]
    out['rand_shape_nd'] = [[int(d) for d in tu.rand_shape_nd(4, 7)] for _ in range(5)]
    out['rand_shape_nd_zero'] = [[int(d) for d in tu.rand_shape_nd(3, allow_zero_size=True)]
                                 for _ in range(5)]
    out['rand_coord_2d'] = [[int(v) for v in tu.rand_coord_2d(0, 10, 5, 8)] for _ in range(3)]
    np.random.seed(1)
    out['random_arrays_one'] = tu.random_arrays((2, 3)).tolist()
    out['random_arrays_two'] = [a.tolist() for a in tu.random_arrays((2,), (3, 1))]
    out['random_arrays_scalar'] = float(tu.random_arrays(()))
    out['random_uniform_arrays'] = [a.tolist() for a in tu.random_uniform_arrays(
        (2, 2), (3,), low=-1, high=2, dtype=np.float64)]
    out['random_sample'] = tu.random_sample(list(range(10)), 4)
    nd1 = tu.rand_ndarray((3, 2))
    nd2 = tu.rand_ndarray((2, 2), dtype='float64')
    out['rand_ndarray'] = [{'dtype': np.dtype(x.dtype).name, 'values': x.asnumpy().tolist()}
                           for x in (nd1, nd2)]
    np.random.seed(2)
    out['new_matrix_with_real_eigvals_2d'] = tu.new_matrix_with_real_eigvals_2d(3).tolist()
    out['new_matrix_with_real_eigvals_nd'] = tu.new_matrix_with_real_eigvals_nd(
        (2, 2, 2)).tolist()
    out['new_orthonormal_matrix_2d'] = tu.new_orthonormal_matrix_2d(3).tolist()
    out['new_sym_matrix_with_real_eigvals_2d'] = tu.new_sym_matrix_with_real_eigvals_2d(
        3).tolist()
    out['new_sym_matrix_with_real_eigvals_nd'] = tu.new_sym_matrix_with_real_eigvals_nd(
        (2, 1, 3, 3)).tolist()
    np.random.seed(3)
    out['mean_check'] = [bool(tu.mean_check(lambda n: np.random.normal(0.1, 1.0, size=n),
                                            mu, 1.0, nsamples=20000))
                         for mu in (0.1, 0.0, 0.13)]
    out['var_check'] = [bool(tu.var_check(lambda n: np.random.normal(0, 2.0, size=n),
                                          sigma, nsamples=20000)) for sigma in (2.0, 1.9)]
    out['gen_buckets_probs_with_ppf'] = [list(x) for x in tu.gen_buckets_probs_with_ppf(
        lambda p: 2 * p - 1, 4)]
    return out


def numpy_helpers():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 7
    out = {'input': a.tolist()}
    out['np_reduce'] = [
        {'axis': axis, 'keepdims': keepdims, 'fn': fn,
         'result': np.asarray(tu.np_reduce(a, axis, keepdims, getattr(np, fn))).tolist()}
        for axis, keepdims, fn in ((1, False, 'sum'), ([0, 2], True, 'max'),
                                   (None, False, 'prod'), ((2, 1), True, 'mean'))]
    out['collapse_sum_like'] = [
        {'shape': list(shape), 'result': tu.collapse_sum_like(a, shape).tolist()}
        for shape in ((3, 1), (2, 1, 4), (1,), (2, 3, 4))]
    out['assign_each'] = tu.assign_each(a[0], lambda x: x * x - 1).tolist()
    out['assign_each2'] = tu.assign_each2(a[0], a[1], lambda x, y: x * 10 + y).tolist()
    return out


# -- symbols -------------------------------------------------------------------------------------

def numeric_grad_cases():
    x, w = mx.sym.var('x'), mx.sym.var('w')
    cases = []
    loc = {'x': np.linspace(-1, 1, 6).reshape(2, 3), 'w': np.linspace(0.5, 2, 6).reshape(2, 3)}
    for dtype, eps in (('float32', 1e-2), ('float64', 1e-4)):
        sym = mx.sym.tanh(x) * w
        exe = sym.simple_bind(mx.cpu(), x=(2, 3), w=(2, 3),
                              type_dict={'x': dtype, 'w': dtype})
        grads = tu.numeric_grad(exe, {k: v.copy() for k, v in loc.items()}, eps=eps,
                                dtype=np.dtype(dtype).type)
        cases.append({'symbol': sym.tojson(), 'location': {k: v.tolist() for k, v in
                                                           loc.items()},
                      'dtype': dtype, 'eps': eps,
                      'grads': {k: v.tolist() for k, v in grads.items()}})
    # an auxiliary state that forward changes in training (BatchNorm's moving mean/var)
    bn = mx.sym.BatchNorm(x, name='bn', fix_gamma=False)
    exe = bn.simple_bind(mx.cpu(), x=(4, 2))
    bn_loc = {'x': np.linspace(-1, 2, 8).reshape(4, 2), 'bn_gamma': np.array([1.5, 0.5]),
              'bn_beta': np.array([0.1, -0.2])}
    aux = {'bn_moving_mean': np.zeros(2), 'bn_moving_var': np.ones(2)}
    grads = tu.numeric_grad(exe, {k: v.copy() for k, v in bn_loc.items()}, aux_states=aux,
                            eps=1e-2)
    cases.append({'symbol': bn.tojson(), 'location': {k: v.tolist() for k, v in bn_loc.items()},
                  'aux_states': {k: v.tolist() for k, v in aux.items()},
                  'dtype': 'float32', 'eps': 1e-2,
                  'grads': {k: v.tolist() for k, v in grads.items()}})
    return cases


def gradient_check_cases():
    """check_numeric_gradient: pass/fail, and for failures the names in the message."""
    x, w, b = mx.sym.var('x'), mx.sym.var('w'), mx.sym.var('b')
    rs = np.random.RandomState(7)
    specs = [
        ('tanh', mx.sym.tanh(x), {'x': rs.uniform(-1, 1, (3, 4))}, {}),
        ('tanh_f64', mx.sym.tanh(x), {'x': rs.uniform(-1, 1, (3, 4))}, {'dtype': 'float64'}),
        ('fully_connected', mx.sym.FullyConnected(x, w, b, num_hidden=3, name='fc'),
         {'x': rs.uniform(-1, 1, (2, 4)), 'w': rs.uniform(-1, 1, (3, 4)),
          'b': rs.uniform(-1, 1, (3,))}, {}),
        ('broadcast_mul', mx.sym.broadcast_mul(x, w),
         {'x': rs.uniform(-1, 1, (2, 3)), 'w': rs.uniform(-1, 1, (1, 3))}, {}),
        ('broadcast_add_grad_nodes', mx.sym.broadcast_add(x, w),
         {'x': rs.uniform(-1, 1, (2, 3)), 'w': rs.uniform(-1, 1, (2, 1))},
         {'grad_nodes': ['w']}),
        ('grad_req_add_null', x * w,
         {'x': rs.uniform(-1, 1, (2, 3)), 'w': rs.uniform(-1, 1, (2, 3))},
         {'grad_nodes': {'x': 'add', 'w': 'null'}}),
        ('block_grad_wrong', x * mx.sym.BlockGrad(x), {'x': rs.uniform(1, 2, (2, 3))}, {}),
        ('block_grad_right_when_unchecked', x * mx.sym.BlockGrad(w),
         {'x': rs.uniform(1, 2, (2, 3)), 'w': rs.uniform(1, 2, (2, 3))}, {'grad_nodes': ['x']}),
        ('stop_gradient_wrong', mx.sym.sin(x) + mx.sym.stop_gradient(mx.sym.square(w)),
         {'x': rs.uniform(1, 2, (2, 2)), 'w': rs.uniform(1, 2, (2, 2))}, {}),
        ('batchnorm_aux', mx.sym.BatchNorm(x, name='bn', fix_gamma=False),
         {'x': rs.uniform(-1, 1, (4, 2)), 'bn_gamma': rs.uniform(0.5, 1.5, (2,)),
          'bn_beta': rs.uniform(-1, 1, (2,))},
         {'aux_states': {'bn_moving_mean': np.zeros(2), 'bn_moving_var': np.ones(2)},
          'numeric_eps': 1e-3, 'rtol': 0.05, 'atol': 0.01}),
    ]
    cases = []
    for name, sym, loc, kwargs in specs:
        call = dict(kwargs)
        if 'dtype' in call:
            call['dtype'] = np.dtype(call['dtype']).type
        np.random.seed(11)
        result = outcome(lambda: tu.check_numeric_gradient(sym, dict(loc), **call))
        enc = {k: ({a: v.tolist() for a, v in val.items()} if k == 'aux_states' else val)
               for k, val in kwargs.items()}
        cases.append({'name': name, 'symbol': sym.tojson(),
                      'location': {k: v.tolist() for k, v in loc.items()},
                      'kwargs': enc, **result})
    return cases


def symbolic_cases():
    lhs, rhs = mx.sym.var('lhs'), mx.sym.var('rhs')
    dot = mx.sym.dot(lhs, rhs)
    m1 = np.array([[1., 2.], [3., 4.]])
    m2 = np.array([[5., 6.], [7., 8.]])
    og = np.array([[1., 2.], [0., 1.]])
    g_lhs, g_rhs = og.dot(m2.T), m1.T.dot(og)
    wrong = g_rhs.copy()
    wrong[1, 0] += 1
    cases = []

    def add(name, fn, sym, **info):
        np.random.seed(5)
        cases.append({'name': name, 'symbol': sym.tojson(), **info, **outcome(fn)})

    loc = {'location': [m1.tolist(), m2.tolist()]}
    add('forward_ok', lambda: tu.check_symbolic_forward(dot, [m1, m2], [m1.dot(m2)]), dot,
        expected=[m1.dot(m2).tolist()], **loc)
    add('forward_wrong', lambda: tu.check_symbolic_forward(dot, [m1, m2], [m1.dot(m2) + 0.5]),
        dot, expected=[(m1.dot(m2) + 0.5).tolist()], **loc)
    add('backward_ok', lambda: tu.check_symbolic_backward(dot, [m1, m2], [og], [g_lhs, g_rhs]),
        dot, out_grads=[og.tolist()], expected=[g_lhs.tolist(), g_rhs.tolist()], **loc)
    add('backward_wrong',
        lambda: tu.check_symbolic_backward(dot, [m1, m2], [og], [g_lhs, wrong]),
        dot, out_grads=[og.tolist()], expected=[g_lhs.tolist(), wrong.tolist()], **loc)
    add('backward_add',
        lambda: tu.check_symbolic_backward(dot, [m1, m2], [og], [g_lhs, g_rhs], grad_req='add'),
        dot, out_grads=[og.tolist()], expected=[g_lhs.tolist(), g_rhs.tolist()],
        grad_req='add', **loc)
    add('backward_null_dict',
        lambda: tu.check_symbolic_backward(
            dot, {'lhs': m1, 'rhs': m2}, {dot.list_outputs()[0]: og}, {'lhs': g_lhs},
            grad_req={'lhs': 'write', 'rhs': 'null'}),
        dot, out_grads={dot.list_outputs()[0]: og.tolist()}, expected={'lhs': g_lhs.tolist()},
        grad_req={'lhs': 'write', 'rhs': 'null'}, **loc)
    return cases


def consistency_cases():
    x, w, b = mx.sym.var('x'), mx.sym.var('w'), mx.sym.var('b')
    sym = mx.sym.tanh(mx.sym.FullyConnected(x, w, b, num_hidden=3, name='fc'))
    rs = np.random.RandomState(3)
    params = {'x': rs.uniform(-1, 1, (2, 4)), 'w': rs.uniform(-1, 1, (3, 4)),
              'b': rs.uniform(-1, 1, (3,))}
    shapes = {'x': (2, 4), 'w': (3, 4), 'b': (3,)}
    cases = []
    for dtypes in (('float64', 'float32'), ('float32', 'float64', 'float32')):
        ctx_list = [dict(ctx=mx.cpu(), type_dict={k: dt for k in shapes}, **shapes)
                    for dt in dtypes]
        gt = tu.check_consistency(sym, ctx_list, arg_params=dict(params))
        cases.append({'symbol': sym.tojson(), 'dtypes': list(dtypes),
                      'arg_params': {k: v.tolist() for k, v in params.items()},
                      'shapes': {k: list(v) for k, v in shapes.items()},
                      'ground_truth': {k: v.asnumpy().tolist() for k, v in gt.items()},
                      'ground_truth_dtypes': {k: np.dtype(v.dtype).name
                                              for k, v in gt.items()}})
    return cases


def plain(value):
    """numpy scalars as Python numbers, in JSON."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value).__name__)


def main():
    rs = np.random.RandomState(2024)
    data = {
        'mxnet_version': mx.__version__,
        'numpy_version': np.__version__,
        'tolerances': tolerances(),
        'get_tols': get_tols_cases(),
        'assert_almost_equal': comparison_cases(),
        'near_threshold': near_threshold_cases(rs),
        'other_comparisons': other_comparisons(),
        'draws': draws(),
        'numpy_helpers': numpy_helpers(),
        'numeric_grad': numeric_grad_cases(),
        'check_numeric_gradient': gradient_check_cases(),
        'symbolic': symbolic_cases(),
        'check_consistency': consistency_cases(),
    }
    with open(OUT, 'w') as f:
        json.dump(data, f, indent=None, sort_keys=True, default=plain)
        f.write('\n')
    print('wrote', OUT, os.path.getsize(OUT), 'bytes')


if __name__ == '__main__':
    main()
