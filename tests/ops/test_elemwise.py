"""Cases for hybridlib/ops/elemwise.py."""
import math

import numpy as np
import pytest

from hybridlib import nd

from harness import Case, away_from, check_case, positive, uniform

S = (2, 3)


def _round_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _mod(a, b):
    with np.errstate(all='ignore'):
        return np.where(b == 0, 0, np.mod(a, np.where(b == 0, 1, b)))


def _rint_half_down(x):
    return np.where(x - np.floor(x) <= 0.5, np.floor(x), np.ceil(x))


TIES = np.array([[1.5, -2.5, 0.4], [-0.6, 2.49, 3.51]])
_erf = np.vectorize(math.erf)
_gamma = np.vectorize(math.gamma)
_lgamma = np.vectorize(math.lgamma)

UNARY_CASES = [
    Case('abs', [away_from(S)], ref=np.abs),
    Case('sign', [away_from(S)], ref=np.sign),
    Case('negative', [S], ref=np.negative),
    Case('reciprocal', [positive(S)], ref=np.reciprocal),
    Case('square', [S], ref=np.square),
    Case('sqrt', [positive(S)], ref=np.sqrt),
    Case('rsqrt', [positive(S)], ref=lambda x: 1 / np.sqrt(x)),
    Case('cbrt', [positive(S)], ref=np.cbrt),
    Case('rcbrt', [positive(S)], ref=lambda x: 1 / np.cbrt(x)),
    Case('exp', [S], ref=np.exp),
    Case('expm1', [S], ref=np.expm1),
    Case('log', [positive(S)], ref=np.log),
    Case('log10', [positive(S)], ref=np.log10),
    Case('log2', [positive(S)], ref=np.log2),
    Case('log1p', [positive(S)], ref=np.log1p),
    Case('sin', [S], ref=np.sin),
    Case('cos', [S], ref=np.cos),
    Case('tan', [S], ref=np.tan),
    Case('arcsin', [uniform(S, -0.8, 0.8)], ref=np.arcsin),
    Case('arccos', [uniform(S, -0.8, 0.8)], ref=np.arccos),
    Case('arctan', [S], ref=np.arctan),
    Case('sinh', [S], ref=np.sinh),
    Case('cosh', [S], ref=np.cosh),
    Case('tanh', [S], ref=np.tanh),
    Case('arcsinh', [S], ref=np.arcsinh),
    Case('arccosh', [positive(S, 1.5, 3)], ref=np.arccosh),
    Case('arctanh', [uniform(S, -0.8, 0.8)], ref=np.arctanh),
    Case('degrees', [S], ref=np.degrees),
    Case('radians', [S], ref=np.radians),
    Case('floor', [uniform(S, -3, 3)], ref=np.floor),
    Case('ceil', [uniform(S, -3, 3)], ref=np.ceil),
    Case('round', [TIES], ref=_round_away, grad=False, name='ties'),
    Case('round', [away_from(S, points=(-0.5, 0.5), low=-0.9, high=0.9)], ref=_round_away),
    Case('rint', [TIES], ref=_rint_half_down, grad=False, name='ties'),
    Case('rint', [away_from(S, points=(-0.5, 0.5), low=-0.9, high=0.9)], ref=_rint_half_down),
    Case('fix', [uniform(S, -3, 3)], ref=np.trunc),
    Case('trunc', [uniform(S, -3, 3)], ref=np.trunc),
    Case('relu', [away_from(S)], ref=lambda x: np.maximum(x, 0)),
    Case('sigmoid', [S], ref=lambda x: 1 / (1 + np.exp(-x))),
    Case('softsign', [away_from(S)], ref=lambda x: x / (1 + np.abs(x))),
    # Activation's softrelu: x itself above 20
    Case('_softrelu', [uniform(S, -3, 3)], ref=lambda x: np.log1p(np.exp(x))),
    Case('_softrelu', [np.array([-30.0, 19.0, 21.0, 40.0])],
         ref=lambda x: np.where(x > 20, x, np.log1p(np.exp(x))), name='large'),
    Case('erf', [S], ref=_erf),
    Case('erfinv', [uniform(S, -0.9, 0.9)], ref=lambda y: _erfinv_ref(y), f32_rtol=1e-3),
    Case('gamma', [positive(S, 0.5, 3)], ref=_gamma, second_order=False),
    Case('gammaln', [positive(S, 0.5, 3)], ref=_lgamma, second_order=False),
    Case('_digamma', [positive(S, 0.5, 3)],
         ref=lambda x: (_lgamma(x + 1e-6) - _lgamma(x - 1e-6)) / 2e-6,
         rtol=1e-6, atol=1e-6, grad=False),
    Case('logical_not', [np.array([[0.0, 1.0, -2.0], [0.0, 0.5, 0.0]])],
         ref=lambda x: (x == 0).astype(x.dtype)),
    Case('_copy', [S], ref=lambda x: x),
    Case('identity', [S], ref=lambda x: x, name='alias'),
    Case('BlockGrad', [S], ref=lambda x: x, grad_ref=lambda cots, x: [np.zeros_like(x)]),
    Case('stop_gradient', [S], ref=lambda x: x, grad_ref=lambda cots, x: [np.zeros_like(x)],
         name='alias'),
    Case('make_loss', [S], ref=lambda x: x,
         grad_ref=lambda cots, x: [np.ones_like(x)]),
    Case('hard_sigmoid', [away_from(S, points=(-2.5, 2.5), low=-4, high=4)],
         attrs=dict(alpha=0.2, beta=0.5),
         ref=lambda x, alpha, beta: np.clip(alpha * x + beta, 0, 1)),
    Case('clip', [away_from(S, points=(-0.5, 0.5))], attrs=dict(a_min=-0.5, a_max=0.5),
         ref=lambda x, a_min, a_max: np.clip(x, a_min, a_max)),
    Case('smooth_l1', [away_from(S, points=(-0.25, 0.25))], attrs=dict(scalar=2.0),
         ref=lambda x, scalar: np.where(np.abs(x) < 1 / scalar ** 2, 0.5 * (scalar * x) ** 2,
                                        np.abs(x) - 0.5 / scalar ** 2)),
]


def _erfinv_ref(y):
    # invert math.erf by bisection: an independent reference
    lo, hi = np.full(y.shape, -6.0), np.full(y.shape, 6.0)
    for _ in range(200):
        mid = (lo + hi) / 2
        above = _erf(mid) > y
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return (lo + hi) / 2


BINARY_REFS = [
    ('elemwise_add', 'broadcast_add', np.add, S),
    ('elemwise_sub', 'broadcast_sub', np.subtract, S),
    ('elemwise_mul', 'broadcast_mul', np.multiply, S),
    ('elemwise_div', 'broadcast_div', np.divide, None),
    ('_mod', 'broadcast_mod', _mod, 'mod'),
    ('_power', 'broadcast_power', np.power, None),
    ('_maximum', 'broadcast_maximum', np.maximum, 'kink'),
    ('_minimum', 'broadcast_minimum', np.minimum, 'kink'),
    ('_hypot', 'broadcast_hypot', np.hypot, S),
    ('_equal', 'broadcast_equal', np.equal, 'cmp'),
    ('_not_equal', 'broadcast_not_equal', np.not_equal, 'cmp'),
    ('_greater', 'broadcast_greater', np.greater, 'cmp'),
    ('_greater_equal', 'broadcast_greater_equal', np.greater_equal, 'cmp'),
    ('_lesser', 'broadcast_lesser', np.less, 'cmp'),
    ('_lesser_equal', 'broadcast_lesser_equal', np.less_equal, 'cmp'),
    ('_logical_and', 'broadcast_logical_and', lambda a, b: np.logical_and(a != 0, b != 0), 'cmp'),
    ('_logical_or', 'broadcast_logical_or', lambda a, b: np.logical_or(a != 0, b != 0), 'cmp'),
    ('_logical_xor', 'broadcast_logical_xor', lambda a, b: np.logical_xor(a != 0, b != 0),
     'cmp'),
]


def _binary_inputs(kind, lhs_shape, rhs_shape):
    if kind == 'cmp':
        rng = np.random.default_rng(7)
        a = rng.integers(-1, 2, size=lhs_shape).astype(np.float64)
        b = rng.integers(-1, 2, size=rhs_shape).astype(np.float64)
        return [a, b]
    if kind == 'mod':
        return [uniform(lhs_shape, 0.3, 2.9), positive(rhs_shape, 0.7, 1.3)]
    if kind == 'kink':
        return [uniform(lhs_shape, -1, 1), uniform(rhs_shape, -1, 1)]
    return [positive(lhs_shape), positive(rhs_shape)]


def _as_dtype(fn):
    return lambda a, b: fn(a, b).astype(a.dtype)


BINARY_CASES = []
for _same, _bcast, _fn, _kind in BINARY_REFS:
    _kind = _kind if isinstance(_kind, str) else None
    # comparisons: equal values (ties) for the forward; the gradient away from them
    _grad = _kind != 'cmp'
    BINARY_CASES.append(Case(_same, _binary_inputs(_kind, S, S), ref=_as_dtype(_fn),
                             grad=_grad))
    BINARY_CASES.append(Case(_bcast, _binary_inputs(_kind, S, (3,)), ref=_as_dtype(_fn),
                             grad=_grad, name='row'))
    BINARY_CASES.append(Case(_bcast, _binary_inputs(_kind, (2, 1), (1, 3)),
                             ref=_as_dtype(_fn), grad=_grad, name='outer'))
    if _kind == 'cmp':
        BINARY_CASES.append(Case(_bcast, [S, (3,)], ref=_as_dtype(_fn), name='continuous'))
        BINARY_CASES.append(Case(_same, [S, S], ref=_as_dtype(_fn), name='continuous'))

SCALAR_REFS = [
    ('_plus_scalar', lambda x, s: x + s, None),
    ('_minus_scalar', lambda x, s: x - s, None),
    ('_rminus_scalar', lambda x, s: s - x, None),
    ('_mul_scalar', lambda x, s: x * s, None),
    ('_div_scalar', lambda x, s: x / s, None),
    ('_rdiv_scalar', lambda x, s: s / x, 'pos'),
    ('_mod_scalar', lambda x, s: _mod(x, s), 'mod'),
    ('_rmod_scalar', lambda x, s: _mod(s, x), 'rmod'),
    ('_power_scalar', lambda x, s: x ** s, 'pos'),
    ('_rpower_scalar', lambda x, s: s ** x, None),
    ('_maximum_scalar', np.maximum, 'kink'),
    ('_minimum_scalar', np.minimum, 'kink'),
    ('_hypot_scalar', np.hypot, None),
    ('_equal_scalar', lambda x, s: (x == s).astype(x.dtype), 'cmp'),
    ('_not_equal_scalar', lambda x, s: (x != s).astype(x.dtype), 'cmp'),
    ('_greater_scalar', lambda x, s: (x > s).astype(x.dtype), 'cmp'),
    ('_greater_equal_scalar', lambda x, s: (x >= s).astype(x.dtype), 'cmp'),
    ('_lesser_scalar', lambda x, s: (x < s).astype(x.dtype), 'cmp'),
    ('_lesser_equal_scalar', lambda x, s: (x <= s).astype(x.dtype), 'cmp'),
    ('_logical_and_scalar', lambda x, s: np.logical_and(x != 0, s != 0).astype(x.dtype), 'cmp'),
    ('_logical_or_scalar', lambda x, s: np.logical_or(x != 0, s != 0).astype(x.dtype), 'cmp'),
    ('_logical_xor_scalar', lambda x, s: np.logical_xor(x != 0, s != 0).astype(x.dtype), 'cmp'),
]


def _scalar_case(name, fn, kind):
    scalar = {'cmp': 1.0, 'kink': 0.25, 'rmod': 2.5}.get(kind, 1.5)
    inputs = {'pos': [positive(S)], 'mod': [uniform(S, 0.2, 1.4)],
              'rmod': [uniform(S, 0.9, 1.2)], 'kink': [away_from(S, points=(0.25,))],
              'cmp': [np.array([[0.0, 1.0, 2.0], [1.0, -1.0, 1.0]])]}.get(kind, [S])
    cases = [Case(name, inputs, attrs=dict(scalar=scalar), grad=kind != 'cmp',
                  ref=lambda x, scalar, **_: np.asarray(fn(x, scalar)))]
    if kind == 'cmp':
        cases.append(Case(name, [S], attrs=dict(scalar=0.1), name='continuous',
                          ref=lambda x, scalar, **_: np.asarray(fn(x, scalar))))
    return cases


SCALAR_CASES = [c for row in SCALAR_REFS for c in _scalar_case(*row)]

OTHER_CASES = [
    Case('add_n', [S, S, S], ref=lambda *xs: sum(xs)),
    Case('ElementWiseSum', [S, S], ref=lambda *xs: sum(xs), name='alias'),
    Case('_broadcast_backward', [S, (3,)],
         ref=lambda d, like: d.sum(axis=0), grad_inputs=[0]),
    Case('_broadcast_backward', [(2, 3, 4), (3, 1)],
         ref=lambda d, like: d.sum(axis=(0, 2)).reshape(3, 1), grad_inputs=[0], name='inner'),
]

CASES = UNARY_CASES + BINARY_CASES + SCALAR_CASES + OTHER_CASES


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_elemwise(case):
    check_case(case)


def test_integer_inputs_keep_their_dtype_as_mxnet():
    # MXNet 1.9.1: computed, then cast to the input's integer dtype
    x = nd.array([0, 1, -1, 4, 3], dtype='int32')
    expected = {'sigmoid': [0, 0, 0, 0, 0], 'softsign': [0, 0, 0, 0, 0],
                'rsqrt': [-2 ** 31, 1, -2 ** 31, 0, 0], 'rcbrt': [-2 ** 31, 1, -1, 0, 0],
                'degrees': [0, 57, -57, 229, 171], 'radians': [0, 0, 0, 0, 0],
                'relu': [0, 1, 0, 4, 3], 'exp': [1, 2, 0, 54, 20], 'square': [0, 1, 1, 16, 9],
                'reciprocal': [-2 ** 31, 1, -1, 0, 0], 'negative': [0, -1, 1, -4, -3]}
    for name, values in expected.items():
        y = getattr(nd, name)(x)
        assert y.dtype == np.int32 and y.asnumpy().tolist() == values, name
    u8 = nd.array([1, 2, 250], dtype='uint8')
    assert (u8 + 300).asnumpy().tolist() == [45, 46, 38]      # 300 is 44 in uint8
    assert (300 - u8).asnumpy().tolist() == [43, 42, 50]
    assert (u8 / 2).asnumpy().tolist() == [0, 1, 125]
    assert (2 / nd.array([1, 2, 4], dtype='int32')).asnumpy().tolist() == [2, 1, 0]


def test_softrelu_float16_computes_in_float32():
    # e^12 overflows float16; MXNet 1.9.1 gives these values
    x = nd.array([0, 6, -6, 24, 18, 12], dtype='float16')
    y = nd._internal._softrelu(x)
    assert y.dtype == np.float16
    assert y.asnumpy().tolist() == [0.693359375, 6.00390625, 0.002475738525390625, 24.0, 18.0,
                                    12.0]


def test_unary_bodies_write_into_out():
    # out= reaches the body (no copy of a fresh result), also in place
    x = nd.array([-1.0, 0.5, 2.0])
    out = nd.zeros((3,))
    buffer = out._data
    assert nd.sigmoid(x, out=out) is out and out._data is buffer
    np.testing.assert_allclose(out.asnumpy(), 1 / (1 + np.exp([1.0, -0.5, -2.0])), rtol=1e-6)
    nd.relu(x, out=x)
    assert x.asnumpy().tolist() == [0.0, 0.5, 2.0]
    nd.elemwise_add(x, x, out=x)
    assert x.asnumpy().tolist() == [0.0, 1.0, 4.0]
