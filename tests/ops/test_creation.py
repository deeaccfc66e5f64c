"""Cases for hybridlib/ops/creation.py: constant arrays, ranges, casts, random numbers.

Random operators are checked by statistics of a few thousand draws (shape, dtype, mean and
variance, ranges); the literal values below were read from MXNet 1.9.1.
"""
import json
import math

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.ops import creation
from hybridlib.base import (AttributeParseError, DTypeError, MXNetError, NotSupportedError,
                            ShapeError)

from harness import Case, check_case, ints, positive, uniform

S = (2, 3)


def _no_grad(cots, *inputs, **attrs):
    """MXNet gives distribution parameters and *_like data no gradient."""
    return [np.zeros_like(x) for x in inputs]


# -------------------------------------------------------------------------------------------------
# Constant arrays, ranges, casts
# -------------------------------------------------------------------------------------------------

def _arange_ref(start, stop=None, step=1.0, repeat=1, dtype='float32', **_):
    if stop is None:
        start, stop = 0, start
    return np.repeat(np.arange(start, stop, step), repeat).astype(dtype)


def _linspace_ref(start, stop, num, endpoint=True, dtype='float32', **_):
    return np.linspace(start, stop, num, endpoint=endpoint).astype(dtype)


def _eye_ref(N, M=0, k=0, dtype='float32', **_):
    return np.eye(N, M or N, k, dtype=dtype)


CONSTANT_CASES = [
    Case('_zeros', [], dict(shape=S), ref=lambda shape: np.zeros(shape)),
    Case('zeros', [], dict(shape=(4,), dtype='int32'), ref=lambda shape, dtype: np.zeros(4)),
    Case('_ones', [], dict(shape=S), ref=lambda shape: np.ones(shape)),
    Case('ones', [], dict(shape=(3, 1, 2), dtype='float16'),
         ref=lambda shape, dtype: np.ones(shape)),
    Case('_full', [], dict(shape=S, value=2.5), ref=lambda shape, value: np.full(shape, value)),
    # MXNet's conversion of the double value (oracle): 300 -> uint8 44, -2.7 -> int32 -2
    Case('_full', [], dict(shape=(3,), value=300, dtype='uint8'), ref=lambda **a: np.full(3, 44),
         name='wrap'),
    Case('_full', [], dict(shape=(2,), value=-2.7, dtype='int32'),
         ref=lambda **a: np.array([-2, -2]), name='trunc'),
    Case('zeros_like', [S], ref=np.zeros_like),
    Case('ones_like', [S], ref=np.ones_like),
    Case('_arange', [], dict(start=5), ref=_arange_ref, name='stop_only'),
    Case('arange', [], dict(start=1, stop=5, step=1.5), ref=_arange_ref),
    Case('_arange', [], dict(start=5, stop=0, step=-1.5), ref=_arange_ref, name='negative'),
    Case('_arange', [], dict(start=0, stop=5, step=2, repeat=3), ref=_arange_ref,
         name='repeat'),
    Case('_arange', [], dict(start=0.5, stop=5, dtype='int32'), name='int',
         ref=lambda **a: np.arange(5)),
    Case('_linspace', [], dict(start=0, stop=1, num=5), ref=_linspace_ref),
    Case('linspace', [], dict(start=3, stop=1, num=4, endpoint=False), ref=_linspace_ref),
    Case('_linspace', [], dict(start=0, stop=1, num=1), ref=_linspace_ref, name='one'),
    Case('_linspace', [], dict(start=0, stop=10, num=4, dtype='int32'), name='int',
         ref=lambda **a: np.array([0, 3, 6, 10])),
    Case('_eye', [], dict(N=3), ref=_eye_ref),
    Case('eye', [], dict(N=3, M=4, k=1), ref=_eye_ref),
    Case('_eye', [], dict(N=4, M=2, k=-1, dtype='int32'), ref=_eye_ref, name='below'),
    Case('_eye', [], dict(N=2, M=3, k=5), ref=_eye_ref, name='outside'),
    Case('Cast', [S], dict(dtype='float64'), ref=lambda x, dtype: x,
         check_float32=False),     # float32 inputs give float64 here, on purpose
    Case('cast', [np.array([1.7, -2.7, 0.2, 126.9])], dict(dtype='int8'), grad=False,
         ref=lambda x, dtype: np.trunc(x), name='trunc'),
    Case('Cast', [np.array([1.7, -2.7, 300.0])], dict(dtype='uint8'), grad=False,
         ref=lambda x, dtype: np.array([1, 254, 44]), name='wrap'),
    Case('amp_cast', [S], dict(dtype='float32'), ref=lambda x, dtype: x),
    Case('amp_multicast', [S, S], dict(num_outputs=2), ref=lambda a, b, **_: [a, b]),
    Case('amp_multicast', [S, (3,), S], dict(num_outputs=3, cast_narrow=True),
         ref=lambda a, b, c, **_: [a, b, c], name='narrow'),
    Case('_copyto', [S], dict(ctx=mx.cpu(0)), ref=lambda x, ctx: x),
    Case('cast_storage', [S], dict(stype='default'), ref=lambda x, stype: x),
]


# -------------------------------------------------------------------------------------------------
# Random numbers
# -------------------------------------------------------------------------------------------------

def _check_draws(x, mean, var, what, tol=0.1):
    """Sample mean and variance of ``x`` agree with the distribution's (few-thousand draws)."""
    x = np.asarray(x, dtype=np.float64)
    scale = math.sqrt(var) if var > 0 else 1.0
    assert abs(x.mean() - mean) < tol * scale, f'{what}: mean {x.mean()}, expected {mean}'
    assert abs(x.var() - var) < 2 * tol * max(var, 1e-12) + 1e-12, \
        f'{what}: variance {x.var()}, expected {var}'


def _moments(name, a, b=None):
    """(mean, variance) of MXNet's parametrisation of each distribution."""
    if name == 'uniform':
        return (a + b) / 2, (b - a) ** 2 / 12
    if name == 'normal':
        return a, b ** 2
    if name == 'gamma':
        return a * b, a * b * b
    if name == 'exponential':
        return 1 / a, 1 / a ** 2
    if name == 'poisson':
        return a, a
    if name == 'negative_binomial':
        return a * (1 - b) / b, a * (1 - b) / b ** 2
    return a, a + b * a * a      # generalized_negative_binomial(mu, alpha)


def _is_discrete(name):
    return name in ('poisson', 'negative_binomial', 'generalized_negative_binomial')


def _random_checker(name, params, shape, dtype='float32'):
    def check(outputs, *inputs, **attrs):
        (out,) = outputs
        assert out.shape == shape and out.dtype == np.dtype(dtype), (out.shape, out.dtype)
        if _is_discrete(name):
            assert np.all(out == np.round(out)) and out.min() >= 0
        if name == 'uniform':
            assert params[0] <= out.min() and out.max() <= params[1]
        _check_draws(out, *_moments(name, *params), f'_random_{name}{params}')
    return check


def _sample_checker(name, shape):
    def check(outputs, *params, **attrs):
        (out,) = outputs
        assert out.shape == params[0].shape + shape and out.dtype == np.float32
        for i in range(params[0].shape[0]):
            row = [p[i] for p in params]
            _check_draws(out[i], *_moments(name, *row), f'_sample_{name}{row}')
    return check


def _like_checker(name, params):
    def check(outputs, data, **attrs):
        (out,) = outputs
        assert out.shape == data.shape and out.dtype == data.dtype
        _check_draws(out, *_moments(name, *params), f'_random_{name}_like{params}')
    return check


# name: (scalar parameters, parameter arrays for _sample_X)
DISTRIBUTIONS = {
    'uniform': (dict(low=-1, high=3), [np.array([0.0, -2.0]), np.array([1.0, 5.0])]),
    'normal': (dict(loc=1, scale=2), [np.array([0.0, 10.0]), np.array([1.0, 0.5])]),
    'gamma': (dict(alpha=2, beta=3), [np.array([0.5, 4.0]), np.array([1.0, 0.5])]),
    'exponential': (dict(lam=2), [np.array([0.5, 4.0])]),
    'poisson': (dict(lam=3), [np.array([0.5, 20.0])]),
    'negative_binomial': (dict(k=3, p=0.4), [np.array([2.5, 1.0]), np.array([0.5, 0.3])]),
    'generalized_negative_binomial': (dict(mu=3, alpha=0.4),
                                      [np.array([2.0, 5.0]), np.array([0.0, 0.25])]),
}

N = 4000
RANDOM_CASES = []
for _name, (_params, _arrays) in DISTRIBUTIONS.items():
    _values = tuple(_params.values())
    RANDOM_CASES += [
        Case(f'_random_{_name}', [], dict(_params, shape=(N,)), random=True,
             ref=_random_checker(_name, _values, (N,))),
        Case(f'_random_{_name}_like', [np.zeros((40, 100))], _params, random=True,
             ref=_like_checker(_name, _values), grad_ref=_no_grad),
        Case(f'_sample_{_name}', _arrays, dict(shape=(2000,)), random=True,
             ref=_sample_checker(_name, (2000,)), grad_ref=_no_grad),
    ]
RANDOM_CASES += [
    Case('random_uniform', [], dict(low=2, high=2.5, shape=(50, 80), dtype='float64'),
         random=True, ref=_random_checker('uniform', (2, 2.5), (50, 80), 'float64'),
         check_float32=False, name='float64'),
    Case('normal', [], dict(shape=(N,), dtype='float16'), random=True,
         ref=_random_checker('normal', (0, 1), (N,), 'float16'), name='float16'),
    Case('_random_poisson', [], dict(lam=0, shape=(10,)), random=True,
         ref=_random_checker('poisson', (0,), (10,)), name='zero'),
    Case('_random_exponential', [], dict(), random=True,
         ref=lambda outs: outs[0].shape == (1,) or pytest.fail(outs[0].shape), name='noshape'),
    Case('sample_normal', [np.array([[0.0], [3.0]]), np.array([[1.0], [2.0]])],
         dict(dtype='float64'), random=True, grad_ref=_no_grad, check_float32=False,
         ref=lambda outs, mu, sigma, **a: outs[0].shape == (2, 1) and outs[0].dtype == np.float64
         or pytest.fail(str(outs[0].dtype)), name='noshape'),
]


def _randint_checker(low, high, shape, dtype):
    def check(outputs, **attrs):
        (out,) = outputs
        assert out.shape == shape and out.dtype == np.dtype(dtype)
        assert out.min() == low and out.max() == high - 1
        _check_draws(out, (low + high - 1) / 2, ((high - low) ** 2 - 1) / 12, 'randint')
    return check


def _shuffle_checker(outputs, data):
    (out,) = outputs
    assert out.shape == data.shape and out.dtype == np.float64
    rows = sorted(map(tuple, out.reshape(out.shape[0], -1).tolist()))
    assert rows == sorted(map(tuple, data.reshape(data.shape[0], -1).tolist()))


# deterministic draws (one category with all the mass) keep gradients comparable everywhere
ONE_HOT = np.array([[0.0, 2.0, 0.0], [1.5, 0.0, 0.0]])


def _multinomial_checker(expected, prob=None, shape=None, dtype=np.int32):
    def check(outputs, data, **attrs):
        assert outputs[0].dtype == dtype
        if expected is not None:
            np.testing.assert_array_equal(outputs[0], expected)
        else:
            assert outputs[0].shape == shape
            assert outputs[0].min() >= 0 and outputs[0].max() < data.shape[-1]
        if prob is not None:
            assert outputs[1].dtype == data.dtype
            np.testing.assert_allclose(outputs[1], prob, rtol=1e-6)
    return check


def _backward_multinomial_ref(ograd, data, sample):
    out = np.zeros_like(data)
    flat_d, flat_o = data.reshape(-1, data.shape[-1]), out.reshape(-1, data.shape[-1])
    for r, (g_row, s_row) in enumerate(zip(ograd.reshape(len(flat_d), -1),
                                           sample.reshape(len(flat_d), -1))):
        for g, s in zip(g_row, s_row):
            flat_o[r, s] += g / flat_d[r, s]
    return out


def _pick_ref(data, sample):
    rows = data.reshape(-1, data.shape[-1])
    index = sample.reshape(len(rows), -1)
    return np.take_along_axis(rows, index, axis=1).reshape(sample.shape)


OTHER_RANDOM_CASES = [
    Case('_random_randint', [], dict(low=-3, high=4, shape=(N,)), random=True,
         ref=_randint_checker(-3, 4, (N,), 'int32')),
    Case('random_randint', [], dict(low=10, high=13, shape=(40, 50), dtype='int64'),
         random=True, ref=_randint_checker(10, 13, (40, 50), 'int64'), name='int64'),
    Case('_sample_multinomial', [ONE_HOT], dict(shape=(3,), get_prob=True), random=True,
         ref=_multinomial_checker([[1, 1, 1], [0, 0, 0]],
                                  [[math.log(2)] * 3, [math.log(1.5)] * 3])),
    Case('sample_multinomial', [ONE_HOT[0]], dict(shape=(2, 2), get_prob=True,
                                                  dtype='float32'), random=True,
         ref=_multinomial_checker(np.ones((2, 2)), np.full((2, 2), math.log(2)), dtype=np.float32),
         name='1d'),
    Case('_sample_multinomial', [positive((2, 2, 4))], dict(shape=(5,)), random=True,
         ref=_multinomial_checker(None, shape=(2, 2, 5)), name='batch'),
    Case('_backward_sample_multinomial', [S, positive((2, 4)), ints(S, 0, 4)],
         ref=_backward_multinomial_ref),
    Case('_sample_multinomial_pick', [(2, 4), ints(S, 0, 4)], ref=_pick_ref),
    Case('_shuffle', [uniform((6, 2))], random=True, grad=False, ref=_shuffle_checker),
    Case('shuffle', [uniform((5,))], random=True, grad=False, ref=_shuffle_checker, name='1d'),
]

CASES = CONSTANT_CASES + RANDOM_CASES + OTHER_RANDOM_CASES


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_creation(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# Seeds, frontends and MXNet's conventions
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('draw', [
    lambda: nd.random.uniform(shape=(5,)),
    lambda: nd.random.normal(0, 1, shape=(2, 3)),
    lambda: nd.random.gamma(2, 1, shape=(4,)),
    lambda: nd.random.poisson(3, shape=(6,)),
    lambda: nd.random.randint(0, 100, shape=(6,)),
    lambda: nd.random.uniform(nd.array([0, 1]), nd.array([1, 2]), shape=3),
    lambda: nd.random.multinomial(nd.array([0.2, 0.3, 0.5]), shape=8),
    lambda: nd.random.shuffle(nd.arange(10)),
])
def test_seed_repeats(draw):
    mx.random.seed(42)
    first = draw().asnumpy()
    mx.random.seed(42)
    np.testing.assert_array_equal(draw().asnumpy(), first)
    mx.random.seed(43)
    assert not np.array_equal(draw().asnumpy(), first)


def test_random_frontend():
    x = nd.random.uniform(0, 1, shape=(2, 3))
    assert x.shape == (2, 3) and x.dtype == np.float32
    assert nd.random.uniform().shape == (1,)            # MXNet draws one value
    assert nd.random.normal(0, 1, (2, 2), 'float64').dtype == np.float64
    y = nd.random.uniform(low=nd.array([0, 1]), high=nd.array([1, 2]), shape=3)
    assert y.shape == (2, 3) and y.dtype == np.float32
    assert np.all((y.asnumpy() >= [[0], [1]]) & (y.asnumpy() < [[1], [2]]))
    z = nd.random.gamma(nd.array([1, 2], dtype='float64'), nd.array([1, 1], dtype='float64'))
    assert z.shape == (2,) and z.dtype == np.float32    # parameters' dtype is not the output's
    assert nd.random.multinomial(nd.array([[0.5, 0.5]] * 3)).shape == (3,)
    assert nd.random.shuffle(nd.ones((4, 2))).shape == (4, 2)
    assert nd.random.randint(0, 5).dtype == np.int32
    assert nd.random.uniform_like(nd.zeros((2, 2), dtype='float16')).dtype == np.float16
    s = sym.random.uniform(-1, 1, shape=(2, 5))
    assert s.infer_shape()[1] == [(2, 5)]
    assert s.eval()[0].shape == (2, 5)
    assert nd.random.uniform(shape=2, ctx=mx.cpu(0)).context == mx.cpu(0)
    # the attribute strings MXNet writes for the same calls
    for s, attrs in [(sym.random.uniform(-1, 1, shape=(2, 2)),
                      {'high': '1', 'low': '-1', 'shape': '(2, 2)'}),
                     (sym.random.randint(0, 5, shape=(3,)),
                      {'high': '5', 'low': '0', 'shape': '(3,)'}),
                     (sym.random.poisson_like(sym.var('a'), lam=3), {'lam': '3'})]:
        assert json.loads(s.tojson())['nodes'][-1]['attrs'] == attrs
    t = sym.random.uniform(low=sym.var('lo'), high=sym.var('hi'), shape=(4,))
    assert t.list_arguments() == ['lo', 'hi']
    assert t.infer_shape(lo=(3,), hi=(3,))[1] == [(3, 4)]


def test_range_frontend():
    np.testing.assert_array_equal(nd.arange(5).asnumpy(), np.arange(5))
    np.testing.assert_array_equal(nd.arange(0, 5).asnumpy(), np.arange(5))
    np.testing.assert_array_equal(nd.arange(2, 8, 2, 2).asnumpy(), [2, 2, 4, 4, 6, 6])
    assert nd.arange(3, dtype='int64').dtype == np.int64
    np.testing.assert_array_equal(nd.linspace(0, 1, 3).asnumpy(), [0, 0.5, 1])
    np.testing.assert_array_equal(nd.eye(2, 3, 1).asnumpy(), [[0, 1, 0], [0, 0, 1]])
    assert sym.arange(3).infer_shape()[1] == [(3,)]
    assert nd.zeros(3).shape == (3,) and nd.zeros((2, 0)).shape == (2, 0)


def test_mxnet_values():
    """Values read from MXNet 1.9.1."""
    def values(x):
        return x.asnumpy().tolist()
    # start and step are converted to the dtype first, then the values computed in it
    assert values(nd.arange(0, 2.5, 0.7, dtype='int32')) == [0, 0, 0, 0]
    assert values(nd.arange(-3, 5, 2, dtype='uint8')) == [253, 255, 1, 3]
    assert values(nd.arange(16777216, 16777220, 1)) == [16777216, 16777216, 16777218, 16777220]
    assert values(nd.arange(1, 5, 1.5)) == [1, 2.5, 4]
    assert values(nd.linspace(0, -1, 4, dtype='int32')) == [0, 0, 0, -1]
    assert values(nd.linspace(0, 10, 6, dtype='int32')) == [0, 2, 4, 6, 8, 10]
    assert values(nd.linspace(0, 1, 0)) == []
    assert values(nd.eye(3, 4, -2)) == [[0] * 4, [0] * 4, [1, 0, 0, 0]]
    assert values(nd.eye(2, -1)) == [[1, 0], [0, 1]]
    assert values(nd.full((2,), -2.7, dtype='uint8')) == [254, 254]
    assert values(nd.full((2,), 2.7, dtype='int32')) == [2, 2]
    assert values(nd.zeros((2,), dtype='bool')) == [False, False]
    assert values(nd.Cast(nd.array([1.7, -2.7, 200]), dtype='int8')) == [1, -2, -56]
    assert values(nd.Cast(nd.array([1.7, -2.7, 0]), dtype='bool')) == [True, True, False]
    assert values(nd.Cast(nd.array([np.nan, np.inf]), dtype='int32')) == [-2 ** 31] * 2


AMP_TYPES = [  # (inputs, cast_narrow, outputs) from MXNet 1.9.1's infer_type
    (('float16', 'float32', 'float16'), False, ('float32',) * 3),
    (('float16', 'float16', 'float16'), False, ('float16',) * 3),
    (('float16', 'float64', 'int32'), False, ('float16', 'float64', 'int32')),
    (('float64', 'float16', 'float16'), False, ('float64',) * 3),
    (('int32', 'float16', 'float16'), False, ('int32',) * 3),
    (('uint8', 'float32', 'float16'), False, ('uint8', 'float32', 'float32')),
    (('float16', 'float32', 'float32'), True, ('float16',) * 3),
    (('float32', 'float32', 'float32'), True, ('float32',) * 3),
    (('float64', 'float32', 'int32'), True, ('float64', 'float32', 'int32')),
    (('int32', 'float32', 'float32'), True, ('int32', 'float32', 'float32')),
    (('float64', 'float64', 'float16'), True, ('float64', 'float64', 'float16')),
]


@pytest.mark.parametrize('types, narrow, expected', AMP_TYPES)
def test_amp_multicast_types(types, narrow, expected):
    arrays = [nd.ones((2,), dtype=t) for t in types]
    out = nd.amp_multicast(*arrays, num_outputs=3, cast_narrow=narrow)
    assert tuple(np.dtype(o.dtype).name for o in out) == expected
    s = sym.amp_multicast(*[sym.var(n) for n in 'abc'], num_outputs=3, cast_narrow=narrow)
    out_types = s.infer_type(a=types[0], b=types[1], c=types[2])[1]
    assert tuple(np.dtype(t).name for t in out_types) == expected


# values whose C conversion x86 defines (truncation, then wrap-around into narrower types)
_CAST_VALUES = [-2.7, 300.5, -200, 3e9, 2 ** 63 - 4096, 1.8e19, -2147483648.9, 2147483647.5,
                65535.9, -0.5, 0.99, 2 ** 31, 4e4, -4e4, 6e4, -6e4, 129.5, -129.5, 0, -0.0]


@pytest.mark.parametrize('src', ['float16', 'float32', 'float64'])
def test_cast_rule_for_devices_other_than_x86_numpy(src, monkeypatch):
    """What Cast does on cupy (and on CPUs whose numpy saturates): x86's integers."""
    if not creation._NATIVE_X86_CASTS:
        pytest.skip('the reference is numpy on x86')
    with np.errstate(all='ignore'):
        values = np.array(_CAST_VALUES).astype(src)
    monkeypatch.setattr(creation, '_NATIVE_X86_CASTS', False)
    for dtype in ['uint8', 'int8', 'uint16', 'int16', 'int32', 'int64', 'uint64', 'bool']:
        with np.errstate(all='ignore'):
            expected = values.astype(dtype)
        np.testing.assert_array_equal(creation.c_cast(np, values, dtype), expected,
                                      err_msg=f'{src} -> {dtype}')
    inside = np.abs(values.astype(np.float64)) < 2 ** 31
    np.testing.assert_array_equal(creation.c_cast(np, values[inside], 'uint32'),
                                  values[inside].astype('uint32'))
    # NaN and values beyond every conversion: the 32- or 64-bit minimum, wrapped
    with np.errstate(all='ignore'):
        odd = np.array([np.nan, np.inf, -1e20, 1e20, -3e9], dtype=src)
    assert creation.c_cast(np, odd, 'int32').tolist() == [-2 ** 31] * 5
    assert creation.c_cast(np, odd, 'uint8').tolist() == [0] * 5


def test_amp_cast_types():
    for src, dst in [('float32', 'float16'), ('float16', 'float16'), ('float64', 'float64'),
                     ('int32', 'int32'), ('uint8', 'uint8')]:
        x = nd.array([1.5, 2.5], dtype=src)
        assert nd.amp_cast(x, dtype='float16').dtype == np.dtype(dst)
    x = nd.array([1.5, -2.5])
    x.attach_grad()
    with autograd.record():
        y = nd.amp_cast(x, dtype='float16')
    y.backward(nd.array([1, 2], dtype='float16'))
    assert x.grad.dtype == np.float32 and x.grad.asnumpy().tolist() == [1, 2]


def test_multinomial_frequencies_and_gradient():
    mx.random.seed(3)
    p = np.array([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]])
    data = nd.array(p)
    draws = nd.random.multinomial(data, shape=5000).asnumpy()
    for row, probs in zip(draws, p):
        np.testing.assert_allclose(np.bincount(row, minlength=3) / 5000, probs, atol=0.03)
    data.attach_grad()
    with autograd.record():
        sample, logp = nd.random.multinomial(data, shape=6, get_prob=True)
    logp.backward(nd.ones_like(logp))
    s = sample.asnumpy()
    np.testing.assert_allclose(logp.asnumpy(), np.log(np.take_along_axis(p, s, 1)), rtol=1e-6)
    expected = np.stack([np.bincount(r, minlength=3) for r in s]) / p
    np.testing.assert_allclose(data.grad.asnumpy(), expected, rtol=1e-5)


def test_no_gradient_for_parameters():
    low, high = nd.array([0, 1]), nd.array([1, 2])
    low.attach_grad()
    high.attach_grad()
    with autograd.record():
        y = nd.random.uniform(low, high, shape=3)
    y.backward()
    assert low.grad.asnumpy().tolist() == [0, 0] and high.grad.asnumpy().tolist() == [0, 0]
    x = nd.ones((3, 2))
    x.attach_grad()
    with autograd.record():
        y = nd.random.shuffle(x)
    with pytest.raises(MXNetError, match='non-differentiable'):
        y.backward()


@pytest.mark.parametrize('call, error', [
    (lambda: nd.random.uniform(1, 0, shape=2), 'less or equal'),
    (lambda: nd.random.normal(0, 0, shape=2), 'scale'),
    (lambda: nd.random.gamma(-2, 3, shape=2), 'alpha'),
    (lambda: nd.op._random_exponential(lam=0, shape=2), 'lam'),
    (lambda: nd.random.poisson(-1, shape=2), 'lam'),
    (lambda: nd.random.negative_binomial(-1, 0.5, shape=2), 'k parameter'),
    (lambda: nd.random.negative_binomial(2, 0, shape=2), 'p parameter'),
    (lambda: nd.random.negative_binomial(1.5, 0.5, shape=2), "'k'"),
    (lambda: nd.random.generalized_negative_binomial(1, -0.5, shape=2), 'alpha'),
    (lambda: nd.random.uniform_like(nd.ones(2), low=3, high=2), 'less or equal'),
    (lambda: nd.random.randint(5, 2, shape=2), 'low must be less'),
    (lambda: nd.random.randint(5, 5, shape=2), 'low must be less'),
    (lambda: nd.random.uniform(0, 1, shape=2, dtype='int32'), 'dtype'),
    (lambda: nd.random.randint(0, 3, shape=2, dtype='float32'), 'dtype'),
    (lambda: nd.random.multinomial(nd.ones(2), dtype='int64'), 'dtype'),
    (lambda: nd.arange(5, 0), 'Invalid range'),
    (lambda: nd.arange(0, 0), 'Invalid range'),
    (lambda: nd.arange(0, 5, 0), 'step=0'),
    (lambda: nd.arange(0, 5, repeat=0), 'repeat > 0'),
    (lambda: nd.arange(0, 5, dtype='bool'), 'dtype'),
    (lambda: nd.linspace(0, 1, -1), 'non-negative'),
    (lambda: nd.eye(-1), 'negative'),
    (lambda: nd.amp_cast(nd.ones(2), dtype='bool'), 'dtype'),
    (lambda: nd._internal._linspace(start=0, stop=1, num=3, step=1), "'step'"),
])
def test_attribute_errors(call, error):
    with pytest.raises(AttributeParseError, match=error):
        call()


def test_other_errors():
    with pytest.raises(ShapeError, match='sigma'):
        nd.random.normal(nd.array([0, 1]), nd.array([1, 2, 3]), shape=2)
    with pytest.raises(DTypeError, match='one dtype'):
        nd.random.uniform(nd.array([0, 1], dtype='float64'), nd.array([1, 2]), shape=2)
    with pytest.raises(DTypeError, match='floating point'):
        nd.random.uniform_like(nd.ones(2, dtype='int32'))
    with pytest.raises(ShapeError, match='num_outputs'):
        nd.amp_multicast(nd.ones(2), nd.ones(2), num_outputs=3)
    with pytest.raises(NotSupportedError, match='infer_range'):
        sym.arange(3, infer_range=True)


# sym.Group of creation and random operators, written by MXNet 1.9.1's tojson()
MXNET_JSON = (
    '{"nodes":[{"op":"_arange","name":"_arange0","attrs":{"dtype":"float32","infer_range":'
    '"False","repeat":"1","start":"3","step":"1.0","stop":"None"},"inputs":[]},{"op":"_linspace",'
    '"name":"_linspace0","attrs":{"dtype":"float32","endpoint":"True","num":"5","start":"0",'
    '"stop":"1"},"inputs":[]},{"op":"_eye","name":"_eye0","attrs":{"M":"3","N":"2","dtype":'
    '"float32","k":"1"},"inputs":[]},{"op":"_zeros","name":"_zeros0","attrs":{"dtype":"float32",'
    '"shape":"(2, 3)"},"inputs":[]},{"op":"_full","name":"_full0","attrs":{"dtype":"int32",'
    '"shape":"(2,)","value":"7.0"},"inputs":[]},{"op":"_random_uniform","name":"_random_uniform0",'
    '"attrs":{"high":"1","low":"-1","shape":"(2, 2)"},"inputs":[]},{"op":"_random_randint","name":'
    '"_random_randint0","attrs":{"high":"5","low":"0","shape":"(3,)"},"inputs":[]},{"op":"null",'
    '"name":"a","inputs":[]},{"op":"_sample_normal","name":"_sample_normal0","attrs":{"shape":"2"},'
    '"inputs":[[7,0,0],[7,0,0]]},{"op":"_sample_multinomial","name":"_sample_multinomial0","attrs":'
    '{"dtype":"int32","get_prob":"True","shape":"2"},"inputs":[[7,0,0]]},{"op":"_shuffle","name":'
    '"_shuffle0","inputs":[[7,0,0]]},{"op":"amp_multicast","name":"amp_multicast0","attrs":'
    '{"num_outputs":"2"},"inputs":[[7,0,0],[7,0,0]]},{"op":"amp_cast","name":"amp_cast0","attrs":'
    '{"dtype":"float16"},"inputs":[[7,0,0]]},{"op":"_random_poisson_like","name":"poisson_like0",'
    '"attrs":{"lam":"3"},"inputs":[[7,0,0]]},{"op":"Cast","name":"cast0","attrs":{"dtype":"int32"},'
    '"inputs":[[7,0,0]]},{"op":"_arange","name":"_arange1","attrs":{"dtype":"int32","infer_range":'
    '"False","repeat":"2","start":"2","step":"2","stop":"8"},"inputs":[]}],"arg_nodes":[7],'
    '"node_row_ptr":[0,1,2,3,4,5,6,7,8,9,11,12,14,15,16,17,18],"heads":[[0,0,0],[1,0,0],[2,0,0],'
    '[3,0,0],[4,0,0],[5,0,0],[6,0,0],[8,0,0],[9,0,0],[9,1,0],[10,0,0],[11,0,0],[11,1,0],[12,0,0],'
    '[13,0,0],[14,0,0],[15,0,0]],"attrs":{"mxnet_version":["int",10901]}}')


def test_load_mxnet_json():
    s = sym.fromjson(MXNET_JSON)
    assert json.loads(MXNET_JSON)['heads'] == json.loads(s.tojson())['heads']
    _, shapes, _ = s.infer_shape(a=S)
    assert shapes == [(3,), (5,), (2, 3), (2, 3), (2,), (2, 2), (3,), (2, 3, 2), (2, 2), (2, 2),
                      (2, 3), (2, 3), (2, 3), (2, 3), (2, 3), (2, 3), (6,)]
    _, types, _ = s.infer_type(a='float32')
    assert [np.dtype(t).name for t in types] == [
        'float32', 'float32', 'float32', 'float32', 'int32', 'float32', 'int32', 'float32',
        'int32', 'float32', 'float32', 'float32', 'float32', 'float16', 'float32', 'int32',
        'int32']
    out = s.eval(a=nd.array(np.full(S, 0.25)))
    assert out[0].asnumpy().tolist() == [0, 1, 2]
    assert out[4].asnumpy().tolist() == [7, 7]
    assert out[16].asnumpy().tolist() == [2, 2, 4, 4, 6, 6]
