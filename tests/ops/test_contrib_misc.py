"""Cases for hybridlib/ops/contrib_misc.py: SyncBatchNorm, BatchNormWithReLU, SparseEmbedding,
boolean_mask, index_array, index_copy, count_sketch, fft/ifft, hawkesll, quadratic,
gradientmultiplier, round_ste/sign_ste, allclose (and their backward operators), and the
Python functions of ``nd.contrib``/``sym.contrib``: foreach, while_loop, cond (from
hybridlib/ops/control_flow.py), rand_zipfian, isinf, isfinite, isnan.

References are written independently with numpy (hawkesll from the definition of the Hawkes
log likelihood, not MXNet's recursion). Numbers compared in the ``*_matches_mxnet`` tests were
produced by MXNet 1.9.1 (tests/data/make_contrib_misc_files.py); MXNet runs count_sketch, fft
and ifft on GPUs only, so those are checked against numpy alone.
"""
import json
import os
import sys

import numpy as np
import pytest

import harness
import hybridlib as mx
from hybridlib import autograd, gluon, nd, sym
from hybridlib.base import AttributeParseError, DTypeError, MXNetError, ShapeError
from harness import Case, away_from, check_case, ints, numeric_vjp, positive, uniform
from test_norm import _bn_forward, bn_inputs, first_output_grad

# the Gluon block checks of tests/nn (imperative against hybridized)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), 'nn'))
from hybrid_check import check_hybrid  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data')
NUMBERS = np.load(os.path.join(DATA, 'contrib_misc-numbers.npz'))
with open(os.path.join(DATA, 'contrib_misc-facts.json')) as _f:
    FACTS = json.load(_f)


# -------------------------------------------------------------------------------------------------
# numpy references
# -------------------------------------------------------------------------------------------------

def sync_bn_ref(train):
    def ref(data, gamma, beta, mm, mv, output_mean_var=False, key=None, ndev=1, **attrs):
        out, mean, invstd = _bn_forward(data, gamma, beta, mm, mv, train, axis=1, **attrs)
        var = 1 / invstd ** 2 - attrs.get('eps', 1e-3)
        return [out, mean, var] if output_mean_var else out
    return ref


def bn_relu_ref(train):
    def ref(*inputs, output_mean_var=False, **attrs):
        out, mean, invstd = _bn_forward(*inputs, train, **attrs)
        out = np.maximum(out, 0)
        return [out, mean, invstd] if output_mean_var else out
    return ref


def embedding_ref(data, weight, input_dim, output_dim, **_):
    return weight[np.clip(data.astype(np.int64), 0, input_dim - 1)]


def boolean_mask_ref(data, index, axis=0):
    return np.compress(index != 0, data, axis=axis)


def boolean_mask_backward_ref(ograd, data, index, axis=0):
    out = np.zeros_like(data)
    kept = np.flatnonzero(index)
    for k, i in enumerate(kept):
        np.moveaxis(out, axis, 0)[i] = np.moveaxis(ograd, axis, 0)[k]
    return out


def index_array_ref(data, axes=None):
    axes = range(data.ndim) if axes is None else axes
    out = np.zeros(data.shape + (len(axes),), np.int64)
    for idx in np.ndindex(*data.shape):
        out[idx] = [idx[a] for a in axes]
    return out


def index_copy_ref(old, index, new):
    out = old.copy()
    for i, row in zip(index.astype(int), new):
        out[i] = row
    return out


def index_copy_backward_ref(ograd, old, index, new):
    d_old = ograd.copy()
    d_old[index.astype(int)] = 0
    return [d_old, np.zeros_like(index), ograd[index.astype(int)]]


def count_sketch_ref(data, h, s, out_dim, **_):
    flat = data.reshape(-1, data.shape[-1])
    out = np.zeros((flat.shape[0], out_dim))
    for j in range(flat.shape[1]):
        out[:, int(h[0, j])] += flat[:, j] * s[0, j]
    return out.reshape(data.shape[:-1] + (out_dim,))


def fft_ref(data, **_):
    n = data.shape[-1]
    out = np.zeros(data.shape[:-1] + (2 * n,))
    for k in range(n):
        angle = -2 * np.pi * k * np.arange(n) / n
        out[..., 2 * k] = (data * np.cos(angle)).sum(-1)
        out[..., 2 * k + 1] = (data * np.sin(angle)).sum(-1)
    return out


def ifft_ref(data, **_):
    re, im = data[..., 0::2], data[..., 1::2]
    n = re.shape[-1]
    out = np.zeros(data.shape[:-1] + (n,))
    for j in range(n):
        angle = 2 * np.pi * j * np.arange(n) / n
        out[..., j] = (re * np.cos(angle) - im * np.sin(angle)).sum(-1)
    return out


def hawkes_ref(lda, alpha, beta, state, lags, marks, valid_length, max_time):
    """The log likelihood from its definition: sum of log intensities at the points minus the
    integral of the intensities over (0, max_time]; the state is the decayed memory."""
    n, k = lda.shape
    ll, out_state = np.zeros(n), np.zeros((n, k))
    for i in range(n):
        count = int(np.ceil(valid_length[i]))
        times = np.cumsum(lags[i, :count])
        kinds = marks[i, :count]
        horizon = max_time[i]
        total = 0.0
        for j, (t, c) in enumerate(zip(times, kinds)):
            earlier = times[:j][kinds[:j] == c]
            excite = state[i, c] * np.exp(-beta[c] * t) + np.exp(-beta[c] * (t - earlier)).sum()
            total += np.log(lda[i, c] + alpha[c] * beta[c] * excite)
        for c in range(k):
            own = times[kinds == c]
            total -= lda[i, c] * horizon + alpha[c] * (
                state[i, c] * (1 - np.exp(-beta[c] * horizon))
                + (1 - np.exp(-beta[c] * (horizon - own))).sum())
            out_state[i, c] = state[i, c] * np.exp(-beta[c] * horizon) + \
                np.exp(-beta[c] * (horizon - own)).sum()
        ll[i] = total
    return [ll, out_state]


def _ll_gradients(cot, inputs):
    """d sum(ll * cot) / d (lda, alpha, beta) by central differences of the reference."""
    return numeric_vjp(lambda *a: hawkes_ref(*a)[0], inputs, cot, range(3))


def hawkes_grad_ref(cots, *inputs):
    # MXNet's gradient: the log likelihood's only; out_state's cotangent is dropped
    return _ll_gradients(cots[0], list(inputs)) + [None] * 5


def hawkes_backward_ref(ograd, ograd_state, *inputs):
    grads = _ll_gradients(ograd, list(inputs))
    return grads + [np.zeros_like(v) for v in inputs[3:]]


def quadratic_ref(data, a=0, b=0, c=0):
    return a * data ** 2 + b * data + c


def round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def allclose_ref(a, b, rtol=1e-5, atol=1e-8, equal_nan=True):
    return np.array(np.allclose(a, b, rtol, atol, equal_nan), np.uint8)


def identity_grad(cots, *inputs, **attrs):
    return [cots[0]]


# -------------------------------------------------------------------------------------------------
# cases
# -------------------------------------------------------------------------------------------------

BN = [0, 1, 2]
SYNC = dict(key='sync0')


def hawkes_inputs(n=3, t=4, k=2):
    return [positive((n, k)), uniform((k,), 0.1, 0.6), positive((k,), 0.5, 2.0),
            uniform((n, k), 0.0, 0.5), positive((n, t), 0.1, 1.0), ints((n, t), 0, k),
            np.array([4.0, 2.0, 3.0][:n]), np.array([5.0, 3.0, 4.5][:n])]


MASK = np.array([1.0, 0.0, 1.0, 1.0])

CASES = [
    Case('_contrib_SyncBatchNorm', bn_inputs((3, 2, 2)), dict(SYNC, fix_gamma=False),
         sync_bn_ref(True), train=True, grad_inputs=BN, name='train'),
    Case('_contrib_SyncBatchNorm', bn_inputs((4, 3)), dict(SYNC, eps=0.01, momentum=0.5),
         sync_bn_ref(True), train=True, grad_inputs=BN, name='train-2d-fix_gamma'),
    Case('_contrib_SyncBatchNorm', bn_inputs((2, 2, 3, 2)), dict(SYNC, fix_gamma=False, ndev=1),
         sync_bn_ref(False), grad_inputs=BN, name='predict-4d'),
    Case('_contrib_SyncBatchNorm', bn_inputs((3, 2, 2)),
         dict(SYNC, fix_gamma=False, output_mean_var=True), sync_bn_ref(True), train=True,
         grad_inputs=BN, grad_ref=first_output_grad(sync_bn_ref(True), BN),
         name='train-output_mean_var'),
    Case('_contrib_BatchNormWithReLU', bn_inputs((3, 2, 2)), dict(fix_gamma=False),
         bn_relu_ref(True), train=True, grad_inputs=BN, name='train'),
    Case('_contrib_BatchNormWithReLU', bn_inputs((3, 2, 2)), {}, bn_relu_ref(False),
         grad_inputs=BN, name='predict-fix_gamma'),
    Case('_contrib_BatchNormWithReLU', bn_inputs((2, 3, 2), -1),
         dict(fix_gamma=False, axis=-1, eps=0.01), bn_relu_ref(True), train=True,
         grad_inputs=BN, name='train-axis-1'),
    Case('_contrib_BatchNormWithReLU', bn_inputs((3, 2, 2)),
         dict(fix_gamma=False, use_global_stats=True, output_mean_var=True), bn_relu_ref(True),
         train=True, grad_inputs=BN, grad_ref=first_output_grad(bn_relu_ref(True), BN),
         name='use_global_stats-output_mean_var'),
    Case('_contrib_SparseEmbedding', [ints((2, 3), 0, 5, np.float32), (5, 4)],
         dict(input_dim=5, output_dim=4), embedding_ref, grad_inputs=[1]),
    Case('_contrib_boolean_mask', [(4, 3), MASK], {}, boolean_mask_ref, grad_inputs=[0],
         check_symbol=False),
    Case('_contrib_boolean_mask', [(2, 4, 2), MASK.astype(np.int32)], dict(axis=1),
         boolean_mask_ref, grad_inputs=[0], check_symbol=False, name='axis1'),
    Case('_backward_contrib_boolean_mask', [(3, 3), (4, 3), MASK], {},
         boolean_mask_backward_ref, grad_inputs=[0]),
    Case('_contrib_index_array', [(2, 3, 2)], {}, index_array_ref, grad=False),
    Case('_contrib_index_array', [(2, 3, 2)], dict(axes=(-1, 0)), index_array_ref, grad=False,
         name='axes'),
    Case('_contrib_index_copy', [(5, 2), np.array([3.0, 0.0, 1.0]), (3, 2)], {},
         index_copy_ref, grad_inputs=[0, 2]),
    Case('_contrib_index_copy', [(4,), np.array([2, 0], np.int64), (2,)], {}, index_copy_ref,
         grad_inputs=[0, 2], name='1d-int64'),
    Case('_contrib_backward_index_copy', [(5, 2), (5, 2), np.array([3.0, 0.0, 1.0]), (3, 2)],
         {}, index_copy_backward_ref, grad_inputs=[0]),
    Case('_contrib_count_sketch', [(2, 3), np.array([[0.0, 3.0, 4.0]]),
                                   np.array([[1.0, -1.0, 1.0]])],
         dict(out_dim=5), count_sketch_ref, grad_inputs=[0]),
    Case('_contrib_count_sketch', [(2, 1, 2, 4), np.array([[2.0, 0.0, 2.0, 1.0]]),
                                   np.array([[-1.0, 1.0, 1.0, -1.0]])],
         dict(out_dim=3, processing_batch_size=4), count_sketch_ref, grad_inputs=[0],
         name='4d'),
    Case('_contrib_fft', [(2, 4)], {}, fft_ref),
    Case('_contrib_fft', [(1, 2, 1, 3)], dict(compute_size=2), fft_ref, name='4d'),
    Case('_contrib_ifft', [(2, 6)], {}, ifft_ref),
    Case('_contrib_ifft', [(2, 1, 1, 4)], dict(compute_size=1), ifft_ref, name='4d'),
    Case('_contrib_hawkesll', hawkes_inputs(), {}, hawkes_ref, grad_inputs=[0, 1, 2],
         grad_ref=hawkes_grad_ref, grad_rtol=1e-5, grad_atol=1e-6),
    Case('_contrib_backward_hawkesll', [(3,), (3, 2)] + hawkes_inputs(), {},
         hawkes_backward_ref, grad=False, rtol=1e-6, atol=1e-7),
    Case('_contrib_quadratic', [(2, 3)], dict(a=0.7, b=-1.3, c=0.2), quadratic_ref),
    Case('_contrib_quadratic', [ints((2, 3), -4, 4)], dict(a=1.5, b=2, c=-3),
         lambda x, **a: np.trunc(quadratic_ref(x, **a)).astype(np.int32), grad=False,
         name='int'),
    Case('_contrib_backward_quadratic', [(2, 3), (2, 3)], dict(a=0.7, b=-1.3),
         lambda g, x, a, b: g * (2 * a * x + b)),
    Case('_contrib_gradientmultiplier', [(2, 3)], dict(scalar=-0.5), lambda x, **_: x,
         grad_ref=lambda cots, x, scalar, **_: [cots[0] * scalar]),
    Case('_contrib_backward_gradientmultiplier', [(2, 3)], dict(scalar=2.5, is_int=False),
         lambda x, scalar, **_: x * scalar),
    Case('_contrib_round_ste', [away_from((3, 4), points=(-1.5, -0.5, 0.5, 1.5), low=-2,
                                          high=2)], {}, round_half_away,
         grad_ref=identity_grad),
    Case('_contrib_sign_ste', [away_from((3, 4))], {}, np.sign, grad_ref=identity_grad),
    Case('_contrib_allclose', [uniform((2, 3)), np.zeros((2, 3))], dict(atol=2.0),
         allclose_ref, grad=False),
    Case('_contrib_allclose', [uniform((2, 3)), uniform((2, 3))], {}, allclose_ref,
         grad=False, name='far'),
]

# operators whose output shape depends on input values: shape inference leaves that axis
# unknown, which the harness's exact shape check does not allow for
VALUE_DEPENDENT = {'_contrib_boolean_mask'}


def _check_value_dependent_inference(case, op, arrays, outs):
    """Shape and dtype inference for boolean_mask: the masked axis unknown (0), the rest and
    the dtypes exact, also from partial input shapes."""
    _, params, _, _ = harness.bind_arguments(op, list(arrays), dict(case.attrs), ())
    axis = params.axis % arrays[0].ndim
    shapes = [x.shape for x in arrays]
    expected = [tuple(0 if i == axis else d for i, d in enumerate(o.shape)) for o in outs]
    ins, got = op.infer_shapes(params, shapes)
    assert got == expected and [tuple(s) for s in ins] == shapes, (case, got, ins)
    _, got = op.infer_shapes(params, [shapes[0], None])
    assert got == expected
    _, got = op.infer_shapes(params, [None, shapes[1]])
    assert got == [None]
    _, types = op.infer_types(params, [x.dtype for x in arrays])
    assert types == [o.dtype for o in outs]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_contrib_misc(case, monkeypatch):
    if case.opdef.name in VALUE_DEPENDENT:
        monkeypatch.setattr(harness, '_check_inference', _check_value_dependent_inference)
    check_case(case)


# -------------------------------------------------------------------------------------------------
# against MXNet 1.9.1's numbers
# -------------------------------------------------------------------------------------------------

def numbers(case, kind):
    out, i = [], 0
    while f'{case}/{kind}{i}' in NUMBERS:
        out.append(NUMBERS[f'{case}/{kind}{i}'])
        i += 1
    return out


def run_case(case, fn, grad=(), train=True, backward_train=None, aux=(), restore_aux=False):
    """fn on the recorded inputs with the recorded head gradients, as the generator ran it:
    (outputs, gradients, auxiliary inputs after). ``restore_aux`` puts the auxiliary inputs
    back before the backward pass."""
    inputs = numbers(case, 'in')
    arrays = [nd.array(x, dtype=x.dtype) for x in inputs]
    for i in grad:
        arrays[i].attach_grad()
    with autograd.record(train_mode=train):
        outs = fn(*arrays)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    for i in aux if restore_aux else ():
        arrays[i][:] = inputs[i]
    if grad:
        autograd.backward(outs, [nd.array(c, dtype=c.dtype) for c in numbers(case, 'cot')],
                          train_mode=train if backward_train is None else backward_train)
    return ([o.asnumpy() for o in outs], [arrays[i].grad.asnumpy() for i in grad],
            [arrays[i].asnumpy() for i in aux])


def assert_matches(case, result, rtol=1e-5, atol=1e-6, outputs=None):
    outs, grads, aux = result
    expected = numbers(case, 'out') if outputs is None else \
        [numbers(case, 'out')[i] for i in outputs]
    outs = outs if outputs is None else [outs[i] for i in outputs]
    for kind, got, want in (('output', outs, expected), ('gradient', grads, numbers(case, 'grad')),
                            ('aux', aux, numbers(case, 'aux'))):
        assert len(got) == len(want), f'{case}: {len(got)} {kind}s, MXNet has {len(want)}'
        for k, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.dtype, f'{case}: {kind} {k} is {g.dtype}, MXNet {w.dtype}'
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f'{case} {kind} {k}')


def test_sync_batch_norm_matches_mxnet():
    result = run_case('sync_bn_train', lambda *a: nd.contrib.SyncBatchNorm(
        *a, key='k', fix_gamma=False, output_mean_var=True, momentum=0.8), grad=(0, 1, 2),
        aux=(3, 4))
    assert_matches('sync_bn_train', result)
    result = run_case('sync_bn_predict', lambda *a: nd.contrib.SyncBatchNorm(*a, key='k',
                                                                            eps=0.01),
                      train=False)
    assert_matches('sync_bn_predict', result)


@pytest.mark.parametrize('case, attrs, backward_train', [
    ('bn_relu_train', dict(fix_gamma=False), True),
    ('bn_relu_train_fix_gamma', {}, True),
    ('bn_relu_train_backward_predict', dict(fix_gamma=False), False),
    ('bn_relu_global_stats', dict(fix_gamma=False, use_global_stats=True), True),
])
def test_batch_norm_with_relu_matches_mxnet(case, attrs, backward_train):
    # MXNet updates the moving statistics in a training-mode backward pass, so a
    # predict-mode backward after a training forward reads (and keeps) the old ones;
    # hybridlib updates them in the forward (see ops/norm.py): put them back to compare
    result = run_case(case, lambda *a: nd.contrib.BatchNormWithReLU(*a, **attrs),
                      grad=(0, 1, 2), backward_train=backward_train, aux=(3, 4),
                      restore_aux=not backward_train)
    assert_matches(case, result)


def test_batch_norm_with_relu_predict_matches_mxnet():
    result = run_case('bn_relu_predict', lambda *a: nd.contrib.BatchNormWithReLU(
        *a, fix_gamma=False, output_mean_var=True), train=False)
    assert_matches('bn_relu_predict', result)


def test_indexing_matches_mxnet():
    assert_matches('sparse_embedding', run_case(
        'sparse_embedding', lambda d, w: nd.contrib.SparseEmbedding(d, w, input_dim=5,
                                                                      output_dim=3), grad=(1,)))
    assert_matches('boolean_mask', run_case('boolean_mask', nd.contrib.boolean_mask, grad=(0,)))
    assert_matches('index_array', run_case(
        'index_array', lambda x: nd.contrib.index_array(x, axes=(-1, 0)), train=False))
    # a repeated index: the last copy wins, and both rows of new_tensor get its gradient
    assert_matches('index_copy', run_case('index_copy', nd.contrib.index_copy, grad=(0, 2)))


@pytest.mark.parametrize('case', ['hawkesll', 'hawkesll_float64'])
def test_hawkesll_matches_mxnet(case):
    grad = (0, 1, 2) if case == 'hawkesll' else ()
    result = run_case(case, nd.contrib.hawkesll, grad=grad, train=bool(grad))
    assert_matches(case, result, rtol=2e-5, atol=2e-5)
    # the state gets no gradient from either output, as in MXNet
    arrays = [nd.array(x, dtype=x.dtype) for x in numbers(case, 'in')]
    arrays[3].attach_grad()
    with autograd.record():
        ll, state = nd.contrib.hawkesll(*arrays)
    autograd.backward([ll, state], [nd.ones_like(ll), nd.ones_like(state)])
    assert not arrays[3].grad.asnumpy().any()


def test_elementwise_matches_mxnet():
    assert_matches('quadratic', run_case(
        'quadratic', lambda x: nd.contrib.quadratic(x, a=0.7, b=-1.3, c=0.2), grad=(0,)))
    assert_matches('quadratic_int', run_case(
        'quadratic_int', lambda x: nd.contrib.quadratic(x, a=1.5, b=2, c=-3), train=False))
    assert_matches('gradientmultiplier', run_case(
        'gradientmultiplier', lambda x: nd.contrib.gradientmultiplier(x, scalar=-0.25),
        grad=(0,)))
    for name in ('round_ste', 'sign_ste'):
        assert_matches(name, run_case(name, getattr(nd.contrib, name), grad=(0,)))
    for name in ('isinf', 'isfinite', 'isnan'):
        assert_matches(name, run_case(name, getattr(nd.contrib, name), train=False))


@pytest.mark.parametrize('name', sorted(FACTS['allclose']))
def test_allclose_matches_mxnet(name):
    a, b, attrs, dtype, expected, out_dtype, shape = FACTS['allclose'][name]
    out = nd.contrib.allclose(nd.array(a, dtype=dtype), nd.array(b, dtype=dtype), **attrs)
    assert (out.asscalar(), out.dtype.__name__, list(out.shape)) == (expected, out_dtype, shape)


def test_rand_zipfian_matches_mxnet():
    facts = FACTS['rand_zipfian']
    mx.random.seed(3)
    samples, count_true, count_sample = nd.contrib.rand_zipfian(nd.array([0, 3, 7]), 6, 10)
    assert samples.dtype.__name__ == facts['samples_dtype']
    assert count_true.dtype.__name__ == count_sample.dtype.__name__ == facts['count_dtype']
    np.testing.assert_allclose(count_true.asnumpy(), facts['expected_count_true'], rtol=1e-12)
    drawn = samples.asnumpy()
    assert drawn.shape == (6,) and ((drawn >= 0) & (drawn < 10)).all()
    # the expected count of a sample is a function of the class: MXNet's pairs give it
    table = dict(zip(facts['samples'], facts['expected_count_sample']))
    expected = np.log((drawn + 2.0) / (drawn + 1.0)) / np.log(11) * 6
    np.testing.assert_allclose(count_sample.asnumpy(), expected, rtol=1e-12)
    for c, v in table.items():
        np.testing.assert_allclose(np.log((c + 2.0) / (c + 1.0)) / np.log(11) * 6, v, rtol=1e-12)
    # Symbols: the same function
    s = sym.contrib.rand_zipfian(sym.var('t'), 6, 10)
    assert len(s) == 3
    got = s[1].eval(t=nd.array([0, 3, 7]))[0]
    np.testing.assert_allclose(got.asnumpy(), facts['expected_count_true'], rtol=1e-12)


def test_rand_zipfian_draws_the_zipfian_distribution():
    mx.random.seed(0)
    samples = nd.contrib.rand_zipfian(nd.array([1]), 20000, 5)[0].asnumpy()
    freq = np.bincount(samples, minlength=5) / samples.size
    # classes 0..4 of range_max 5: log((c + 2) / (c + 1)) / log(6), the tail folded by % 5
    p = np.log((np.arange(5) + 2) / (np.arange(5) + 1)) / np.log(6)
    np.testing.assert_allclose(freq, p, atol=0.02)


# -------------------------------------------------------------------------------------------------
# errors and attributes
# -------------------------------------------------------------------------------------------------

def test_errors_name_the_operator_and_shapes():
    with pytest.raises(AttributeParseError, match='key'):
        nd.contrib.SyncBatchNorm(nd.ones((2, 3)), nd.ones(3), nd.ones(3), nd.zeros(3),
                                 nd.ones(3))
    with pytest.raises(ShapeError, match=r'boolean_mask.*data=\(3, 2\), index=\(2,\)'):
        nd.contrib.boolean_mask(nd.ones((3, 2)), nd.array([1, 0]))
    with pytest.raises(MXNetError, match=r'index_copy.*\[0, 5\].*5 rows'):
        nd.contrib.index_copy(nd.zeros((5, 2)), nd.array([0, 5]), nd.ones((2, 2)))
    with pytest.raises(ShapeError, match='index_copy'):
        nd.contrib.index_copy(nd.zeros((5, 2)), nd.array([0, 1]), nd.ones((2, 3)))
    with pytest.raises(ShapeError, match='one index per row'):
        nd.contrib.index_copy(nd.zeros((5, 2)), nd.array([0, 1, 2]), nd.ones((2, 2)))
    with pytest.raises(DTypeError, match='new_tensor'):
        sym.contrib.index_copy(sym.var('a'), sym.var('i'), sym.var('n')).infer_type(
            a='float32', n='float64')
    with pytest.raises(ShapeError, match=r'count_sketch: h must have shape \(1, 3\), got \(1, 4\)'):
        nd.contrib.count_sketch(nd.ones((2, 3)), nd.ones((1, 4)), nd.ones((1, 3)), out_dim=2)
    with pytest.raises(MXNetError, match='out_dim'):
        nd.contrib.count_sketch(nd.ones((2, 3)), nd.array([[0, 1, 2]]), nd.ones((1, 3)),
                                out_dim=2)
    with pytest.raises(ShapeError, match='even'):
        nd.contrib.ifft(nd.ones((2, 3)))
    with pytest.raises(ShapeError, match=r'hawkesll: alpha'):
        nd.contrib.hawkesll(nd.ones((2, 3)), nd.ones((2,)), nd.ones((3,)), nd.ones((2, 3)),
                            nd.ones((2, 4)), nd.zeros((2, 4), dtype='int32'), nd.ones((2,)),
                            nd.ones((2,)))
    with pytest.raises(DTypeError, match='marks must be int32'):
        nd.contrib.hawkesll(nd.ones((2, 3)), nd.ones((3,)), nd.ones((3,)), nd.ones((2, 3)),
                            nd.ones((2, 4)), nd.zeros((2, 4)), nd.ones((2,)), nd.ones((2,)))
    with pytest.raises(ShapeError, match='same shape'):
        nd.contrib.allclose(nd.ones((2,)), nd.ones((3,)))
    with pytest.raises(ShapeError, match='index_array axes'):
        nd.contrib.index_array(nd.ones((3, 2)), axes=(2,))
    with pytest.raises(MXNetError, match='non-differentiable'):
        inputs = [nd.array(x, dtype=x.dtype) for x in numbers('hawkesll', 'in')]
        inputs[0].attach_grad()
        with autograd.record():
            out = nd.contrib.backward_hawkesll(nd.ones((3,)), nd.ones((3, 2)), *inputs)[0]
        out.backward()


def test_symbols_as_mxnet():
    s = sym.contrib.SyncBatchNorm(name='x', key='k', output_mean_var=True)
    assert s.list_arguments() == ['x_data', 'x_gamma', 'x_beta']
    assert s.list_auxiliary_states() == ['x_moving_mean', 'x_moving_var']
    assert s.list_outputs() == ['x_output', 'x_mean', 'x_var']
    s = sym.contrib.BatchNormWithReLU(name='x')
    assert s.list_outputs() == ['x_output']
    assert s.list_auxiliary_states() == ['x_moving_mean', 'x_moving_var']
    # four outputs, one visible: MXNet's JSON rows (node_row_ptr) count all of them
    graph = json.loads(s.tojson())
    assert graph['node_row_ptr'][-1] - graph['node_row_ptr'][-2] == 4
    s = sym.contrib.hawkesll(*[sym.var(n) for n in 'abcdefgh'], name='h')
    assert s.list_outputs() == ['h_output', 'h_out_state']
    assert s.infer_type(a='float32')[0][5] == np.int32
    for s, op, attrs in (
            (sym.contrib.quadratic(sym.var('a'), a=1), '_contrib_quadratic', {'a': '1'}),
            (sym.contrib.gradientmultiplier(sym.var('a'), scalar=2),
             '_contrib_gradientmultiplier', {'scalar': '2'})):
        node = json.loads(s.tojson())['nodes'][1]
        assert (node['op'], node['attrs']) == (op, attrs)
    assert sym.contrib.allclose(sym.var('a'), sym.var('b')).infer_shape(a=(2, 3), b=(2, 3))[1] \
        == [()]
    s = sym.contrib.boolean_mask(sym.var('a'), sym.var('b'))
    assert s.infer_shape_partial(a=(2, 3), b=(2,))[1] == [(0, 3)]
    assert s.infer_type(a='float32', b='float32')[1] == [np.float32]


def test_boolean_mask_symbol_and_hybridized_block():
    s = sym.contrib.boolean_mask(sym.var('d'), sym.var('m'))
    data = nd.array(np.arange(12.0).reshape(4, 3))
    got = s.eval(d=data, m=nd.array(MASK))[0]
    np.testing.assert_array_equal(got.asnumpy(), boolean_mask_ref(data.asnumpy(), MASK))
    again = sym.fromjson(s.tojson())
    np.testing.assert_array_equal(again.eval(d=data, m=nd.array(MASK))[0].asnumpy(),
                                  got.asnumpy())
    grads = {'d': nd.zeros((4, 3))}
    exe = s.bind(mx.cpu(), {'d': data, 'm': nd.array(MASK)}, args_grad=grads)
    exe.forward(is_train=True)
    exe.backward([nd.ones((3, 3))])
    np.testing.assert_array_equal(grads['d'].asnumpy(), np.repeat(MASK[:, None], 3, axis=1))

    class Masked(gluon.HybridBlock):
        def hybrid_forward(self, F, x, mask):
            return F.contrib.boolean_mask(x * 2, mask).sum(axis=1)
    net = Masked()
    # masks with different counts go through the same compiled graph
    check_hybrid(net, [nd.array(np.arange(12.0).reshape(4, 3)), nd.array(MASK)])
    check_hybrid(net, [nd.array(np.arange(12.0).reshape(4, 3)), nd.array([0, 1, 0, 0])])


# -------------------------------------------------------------------------------------------------
# control flow
# -------------------------------------------------------------------------------------------------

def rnn_step(F, x, states, wx, wh, b):
    h = F.tanh(F.broadcast_add(F.dot(x, wx) + F.dot(states[0], wh), b))
    return [h, h * 2], [h]


class ForeachRNN(gluon.HybridBlock):
    def hybrid_forward(self, F, x, h, wx, wh, b):
        outs, states = F.contrib.foreach(lambda xt, s: rnn_step(F, xt, s, wx, wh, b), x, [h])
        return outs + states


class WhileLoop(gluon.HybridBlock):
    """(i, s, x) -> step output s * x while i < limit, at most 6 steps."""

    def hybrid_forward(self, F, i, s, x, limit):
        outs, final = F.contrib.while_loop(
            lambda i, s, x: i < limit,
            lambda i, s, x: ([s * x, i * 1], [i + 1, s + x * x, x * 0.9]),
            [i, s, x], max_iterations=6)
        return outs + final


class Cond(gluon.HybridBlock):
    def hybrid_forward(self, F, x, w):
        return F.contrib.cond((x * w).sum() > 0, lambda: [x * w * 2, F.exp(x)],
                              lambda: [x * x * w, x - 1])


def recorded_block(block, case, grad, hybridize):
    if hybridize:
        block.hybridize()
    return run_case(case, lambda *a: block(*a), grad=grad)


@pytest.mark.parametrize('hybridize', [False, True])
def test_foreach_matches_mxnet(hybridize):
    result = recorded_block(ForeachRNN(), 'foreach_rnn', (0, 1, 2, 3, 4), hybridize)
    assert_matches('foreach_rnn', result, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('hybridize', [False, True])
@pytest.mark.parametrize('case', ['while_loop_stops', 'while_loop_max'])
def test_while_loop_matches_mxnet(case, hybridize):
    block = WhileLoop()
    if hybridize:
        block.hybridize()
    arrays = [nd.array(x, dtype=x.dtype) for x in numbers(case, 'in')]
    for a in arrays[1:3]:
        a.attach_grad()
    with autograd.record():
        outs = block(*arrays)
    assert len(outs) == FACTS[case]['num_outputs']
    autograd.backward([outs[0], outs[3], outs[4]],
                      [nd.array(c, dtype=c.dtype) for c in numbers(case, 'cot')])
    steps = FACTS[case]['steps']
    expected = numbers(case, 'out')
    np.testing.assert_allclose(outs[0].asnumpy(), expected[0], rtol=1e-12)
    np.testing.assert_allclose(outs[3].asnumpy(), expected[1], rtol=1e-12)
    np.testing.assert_allclose(outs[4].asnumpy(), expected[2], rtol=1e-12)
    counter = outs[1].asnumpy()
    np.testing.assert_array_equal(counter[:steps], FACTS[case]['counter'])
    assert not counter[steps:].any()             # the padding rows are zeros
    np.testing.assert_array_equal(outs[2].asnumpy(), FACTS[case]['final_counter'])
    for a, g in zip(arrays[1:3], numbers(case, 'grad')):
        np.testing.assert_allclose(a.grad.asnumpy(), g, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('hybridize', [False, True])
@pytest.mark.parametrize('case', ['cond_then', 'cond_else'])
def test_cond_matches_mxnet(case, hybridize):
    result = recorded_block(Cond(), case, (0, 1), hybridize)
    assert_matches(case, result, rtol=1e-12, atol=1e-12)


def test_control_flow_blocks_hybridize_consistently():
    rng = np.random.RandomState(0)
    for length in (3, 1):
        check_hybrid(ForeachRNN(), [nd.array(rng.uniform(-1, 1, s)) for s in
                                    ((length, 2, 4), (2, 5), (4, 5), (5, 5), (5,))])
    check_hybrid(WhileLoop(), [nd.array([1.0]), nd.array([0.5, -1.0]),
                               nd.array([0.3, 0.8]), nd.array([3.0])])
    check_hybrid(Cond(), [nd.array(rng.uniform(-1, 1, (2, 3))), nd.array([1.0, -0.5, 2.0])])
    check_hybrid(Cond(), [nd.array(rng.uniform(-1, 1, (2, 3))), nd.array([-1.0, -0.5, -2.0])])


def test_symbolic_control_flow_as_mxnet():
    step = lambda data, states: (data + states[0], [states[0] * 2])      # noqa: E731
    # MXNet's docstring example, on Symbols whose shapes are known
    out, states = sym.contrib.foreach(step, sym.var('d', shape=(3, 2)),
                                      [sym.var('s', shape=(2,))])
    assert isinstance(out, sym.Symbol) and isinstance(states, list) and len(states) == 1
    got = sym.Group([out] + states).eval(d=nd.arange(6).reshape((3, 2)), s=nd.ones((2,)))
    np.testing.assert_array_equal(got[0].asnumpy(), [[1, 2], [4, 5], [8, 9]])
    np.testing.assert_array_equal(got[1].asnumpy(), [8, 8])
    # 1-d data: each slice keeps shape (1,), as in MXNet
    out, _ = nd.contrib.foreach(lambda d, s: (d * 2, [s[0] + d]), nd.array([1, 2, 3]),
                                [nd.zeros((1,))])
    assert out.shape == (3, 1)
    out, _ = sym.contrib.foreach(lambda d, s: (d * 2, [s[0] + d]), sym.var('d', shape=(3,)),
                                 [sym.var('s', shape=(1,))])
    assert out.eval(d=nd.array([1, 2, 3]))[0].shape == (3, 1)
    # without known shapes there is nothing to unroll
    with pytest.raises(MXNetError, match='shape'):
        sym.contrib.foreach(step, sym.var('d'), [sym.var('s')])
    cond = lambda i, s: i <= 5                                            # noqa: E731
    func = lambda i, s: ([i + s], [i + 1, s + i])                        # noqa: E731
    outs, states = sym.contrib.while_loop(cond, func, (sym.var('i'), sym.var('s')),
                                          max_iterations=10)
    got = sym.Group(outs + states).eval(i=nd.array([0]), s=nd.array([1]))
    np.testing.assert_array_equal(got[0].asnumpy().ravel(), [1, 2, 4, 7, 11, 16, 0, 0, 0, 0])
    np.testing.assert_array_equal([got[1].asscalar(), got[2].asscalar()], [6, 16])
    with pytest.raises(ValueError, match='max_iterations'):
        sym.contrib.while_loop(cond, func, (sym.var('i'), sym.var('s')))
    with pytest.raises(ValueError, match='Return of cond must be a Symbol'):
        sym.contrib.while_loop(lambda i: True, lambda i: ([], [i]), sym.var('i'),
                               max_iterations=2)
    a, b = sym.var('a'), sym.var('b')
    out = sym.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))
    assert isinstance(out, sym.Symbol)
    assert out.eval(a=nd.array([1]), b=nd.array([2]))[0].asscalar() == 42
    assert out.eval(a=nd.array([3]), b=nd.array([2]))[0].asscalar() == 6
    with pytest.raises(ValueError, match='Number of outputs differs'):
        sym.contrib.cond(a < 1, lambda: [a, b], lambda: [a])
    # a branch of several outputs gives a list of them (MXNet 1.9.1 cannot bind this graph)
    x, y = sym.var('x'), sym.var('y')
    outs = sym.contrib.cond(a < 1, lambda: sym.split(x, num_outputs=2),
                            lambda: sym.split(y, num_outputs=2))
    assert isinstance(outs, list) and len(outs) == 2
    for pred, want in ((0, [[1], [2]]), (5, [[3], [4]])):
        got = sym.Group(outs).eval(x=nd.array([[1, 2]]), y=nd.array([[3, 4]]),
                                   a=nd.array([pred]))
        np.testing.assert_array_equal([g.asnumpy().ravel() for g in got], want)


def test_imperative_control_flow_as_mxnet():
    cond = lambda i, s: i <= 5                                            # noqa: E731
    func = lambda i, s: ([i + s], [i + 1, s + i])                        # noqa: E731
    outs, states = nd.contrib.while_loop(cond, func, (nd.array([0], dtype='int64'),
                                                      nd.array([1], dtype='int64')),
                                         max_iterations=10)
    assert len(outs) == 1 and outs[0].dtype == np.int64 and outs[0].shape == (10, 1)
    np.testing.assert_array_equal(outs[0].asnumpy().ravel(), [1, 2, 4, 7, 11, 16, 0, 0, 0, 0])
    assert [s.asscalar() for s in states] == [6, 16]
    # a condition that never holds: no outputs, the variables as given (MXNet's warning)
    start = (nd.array([0]), nd.array([1]))
    outs, states = nd.contrib.while_loop(lambda i, s: i > 100, func, start, max_iterations=3)
    assert outs == [] and states is start
    # a single loop variable comes back single
    outs, final = nd.contrib.while_loop(lambda x: x < 3, lambda x: (x * 10, x + 1),
                                        nd.array([0]), max_iterations=5)
    np.testing.assert_array_equal(outs.asnumpy().ravel(), [0, 10, 20, 0, 0])
    assert final.asscalar() == 3
    with pytest.raises(ValueError, match='max_iterations should be specified'):
        nd.contrib.while_loop(cond, func, start)
    with pytest.raises(ValueError, match='consistent'):
        nd.contrib.while_loop(cond, lambda i, s: ([], [i]), start, max_iterations=2)
    a, b = nd.array([1]), nd.array([2])
    assert nd.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5),
                           lambda: (a - 5) * (b - 5)).asscalar() == 42
    out, states = nd.contrib.foreach(lambda d, s: (d + s[0], [s[0] * 2]),
                                     nd.arange(6).reshape((3, 2)), [nd.ones((2,))])
    np.testing.assert_array_equal(out.asnumpy(), [[1, 2], [4, 5], [8, 9]])
    # a list of data arrays, nested outputs
    out, states = nd.contrib.foreach(
        lambda d, s: ([d[0] + d[1], [d[0] * s]], s + 1),
        [nd.ones((2, 3)), nd.arange(6).reshape((2, 3))], nd.zeros((3,)))
    assert len(out) == 2 and out[0].shape == (2, 3) and out[1][0].shape == (2, 3)
    np.testing.assert_array_equal(states.asnumpy(), [2, 2, 2])
    with pytest.raises(AssertionError, match='foreach input'):
        nd.contrib.foreach(lambda d, s: (d, s), 3, [nd.ones((1,))])


def test_control_flow_functions_have_mxnet_signatures():
    import inspect
    for function, signature in (
            (nd.contrib.foreach, '(body, data, init_states)'),
            (sym.contrib.foreach, "(body, data, init_states, name='foreach')"),
            (nd.contrib.while_loop, '(cond, func, loop_vars, max_iterations=None)'),
            (sym.contrib.while_loop,
             "(cond, func, loop_vars, max_iterations=None, name='while_loop')"),
            (nd.contrib.cond, '(pred, then_func, else_func)'),
            (sym.contrib.cond, "(pred, then_func, else_func, name='cond')"),
            (nd.contrib.rand_zipfian, '(true_classes, num_sampled, range_max, ctx=None)'),
            (sym.contrib.rand_zipfian, '(true_classes, num_sampled, range_max)')):
        assert str(inspect.signature(function)) == signature, function
    from hybridlib.contrib import ndarray as contrib_nd
    assert contrib_nd.isnan is nd.contrib.isnan


# (dtype, a, b, rtol, atol, MXNet 1.9.1's result)
_INTEGER_ALLCLOSE = [
    ('int32', 2 ** 30 + 1, 2 ** 30 + 3, 0, 1, 0), ('int32', 2 ** 30 + 1, 2 ** 30 + 3, 0, 2, 1),
    ('int64', 2 ** 30 + 1, 2 ** 30 + 3, 0, 1, 0), ('uint8', 250, 3, 0.5, 1, 0),
    ('int32', 100000007, 100000000, 1e-7, 0, 1), ('int32', 100000007, 100000000, 1e-7, 6, 1),
]


@pytest.mark.parametrize('dtype, a, b, rtol, atol, expected', _INTEGER_ALLCLOSE)
def test_allclose_subtracts_integers_exactly(dtype, a, b, rtol, atol, expected):
    # integers beyond float32's 2**24 must not round together before they are compared
    out = nd.contrib.allclose(nd.array([a], dtype=dtype), nd.array([b], dtype=dtype),
                              rtol=rtol, atol=atol)
    assert out.asscalar() == expected
    # MXNet's int32 difference wraps around (2**31 - 1 and -2**31 are 1 apart there); here the
    # difference is exact
    far = nd.contrib.allclose(nd.array([2 ** 31 - 1], dtype='int32'),
                              nd.array([-2 ** 31], dtype='int32'), rtol=0, atol=1e9)
    assert far.asscalar() == 0
