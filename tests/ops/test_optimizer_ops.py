"""The fused optimizer updates (``hybridlib/ops/optimizer.py``): harness cases against numpy
references of MXNet's rules, MXNet 1.9.1's numbers for a few steps (optimizer.json), in-place
semantics, the Symbol path and errors. The multi-tensor updates are ``test_multi_tensor.py``."""
import json
import pathlib
import tracemalloc

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import nd, sym
from hybridlib.base import AttributeParseError, DTypeError, ShapeError
from hybridlib.ops import registry
from harness import Case, check_case, positive, uniform
from optimizer_rules import RULES, json_array, random_array

S = (2, 3)
DATA = pathlib.Path(__file__).parent.parent / 'data' / 'optimizer.json'


def _output(op):
    rule = RULES[registry.get(op).name]
    return lambda *inputs, **attrs: rule(*inputs, **attrs)[0]


def case(op, inputs, attrs, name=None, stateful=True, **kw):
    # Updates are not differentiable (zero_gradient). A stateful one mutates its state inputs,
    # so the harness's second evaluation of the Symbol (on the same arrays) would start from
    # updated states: its Symbol path is checked by the tests further down instead.
    return Case(op, inputs, attrs, _output(op), name=name, grad=False,
                check_symbol=not stateful, **kw)


W, G = uniform(S), uniform(S, -2, 2)
COMMON = dict(lr=0.1, wd=0.05, rescale_grad=0.5, clip_gradient=0.6)
HALF = np.array([0.5])

CASES = [
    case('sgd_update', [W, G], COMMON, stateful=False),
    case('sgd_update', [W, G], dict(lr=0.2, wd=0.1), 'noclip', stateful=False),
    case('_sparse_sgd_update', [W, G], dict(lr=0.2, lazy_update=False), stateful=False),
    case('sgd_mom_update', [W, G, uniform(S)], dict(COMMON, momentum=0.9)),
    case('sgd_mom_update', [W, G, uniform(S)], dict(lr=0.1), 'nomomentum'),
    case('mp_sgd_update', [W, G, uniform(S)], COMMON),
    case('mp_sgd_mom_update', [W, G, uniform(S), uniform(S)], dict(COMMON, momentum=0.9)),
    case('nag_mom_update', [W, G, uniform(S)], dict(COMMON, momentum=0.9)),
    case('nag_mom_update', [W, G, uniform(S)], dict(lr=0.1, momentum=0.5, wd=0.2), 'noclip'),
    case('mp_nag_mom_update', [W, G, uniform(S), uniform(S)], dict(COMMON, momentum=0.9)),
    case('adam_update', [W, G, uniform(S), positive(S)], dict(COMMON, beta1=0.8, beta2=0.99)),
    case('adam_update', [W, G, uniform(S), positive(S)], dict(lr=0.01, epsilon=1e-3), 'noclip'),
    case('_adamw_update', [W, G, uniform(S), positive(S), HALF],
         dict(lr=0.1, eta=0.7, wd=0.05, clip_gradient=0.6)),
    case('_adamw_update', [W, G, uniform(S), positive(S), np.array([np.nan])],
         dict(lr=0.1, eta=0.7), 'skip_nan'),
    case('_adamw_update', [W, G, uniform(S), positive(S), np.array([0.0])],
         dict(lr=0.1, eta=0.7), 'skip_zero'),
    case('_mp_adamw_update', [W, G, uniform(S), positive(S), uniform(S), HALF],
         dict(lr=0.1, eta=0.7, wd=0.05, beta1=0.8)),
    case('rmsprop_update', [W, G, positive(S)], dict(COMMON, gamma1=0.8, clip_weights=0.9)),
    case('rmsprop_update', [W, G, positive(S)], dict(lr=0.01), 'defaults'),
    case('rmspropalex_update', [W, G, positive(S, 1, 2), uniform(S, -0.5, 0.5), uniform(S)],
         dict(COMMON, lr=0.01, gamma1=0.8, gamma2=0.7, clip_weights=0.9)),
    case('ftrl_update', [W, G, uniform(S), positive(S)], dict(COMMON, lamda1=0.05, beta=0.5)),
    case('ftrl_update', [W, G, uniform(S, -0.2, 0.2), positive(S)], dict(lr=0.1, lamda1=0.1),
         'sparse'),
    case('ftml_update', [W, G, positive(S), positive(S), uniform(S)],
         dict(lr=0.1, wd=0.05, rescale_grad=0.5, clip_grad=0.6, t=1, beta1=0.6, beta2=0.99)),
    case('ftml_update', [W, G, positive(S), positive(S), uniform(S)],
         dict(lr=0.1, t=3, epsilon=1e-3), 't3'),
    case('signsgd_update', [W, G], COMMON, stateful=False),
    case('signum_update', [W, G, uniform(S)], dict(COMMON, momentum=0.9, wd_lh=0.02)),
    case('lamb_update_phase1', [W, G, uniform(S), positive(S)],
         dict(t=3, wd=0.05, beta1=0.8, beta2=0.99, rescale_grad=0.5, clip_gradient=0.6)),
    case('lamb_update_phase1', [W, G, uniform(S), positive(S)],
         dict(t=2, wd=0.0, bias_correction=False), 'nobias'),
    case('lamb_update_phase2', [W, G, np.array([3.0]), np.array([1.5])],
         dict(lr=0.1, lower_bound=0.5, upper_bound=2.0), stateful=False),
    case('lamb_update_phase2', [W, G, np.array([0.2]), np.array([1.5])],
         dict(lr=0.1, lower_bound=0.5), 'lower', stateful=False),
    case('lamb_update_phase2', [W, G, np.array([0.0]), np.array([1.5])], dict(lr=0.1),
         'zero_r1', stateful=False),
    case('mp_lamb_update_phase1', [W, G, uniform(S), positive(S), uniform(S)],
         dict(t=2, wd=0.05, rescale_grad=0.5)),
    case('mp_lamb_update_phase2', [W, G, np.array([3.0]), np.array([1.5]), uniform(S)],
         dict(lr=0.1, upper_bound=2.0)),
    case('_sparse_adagrad_update', [W, G, positive(S)], dict(COMMON, epsilon=1e-6)),
    case('_sparse_adagrad_update', [W, G, positive(S)], dict(lr=0.1), 'nowd'),
    case('_contrib_group_adagrad_update', [uniform((3, 4)), uniform((3, 4), -2, 2),
                                           positive((3, 1))],
         dict(lr=0.1, rescale_grad=0.5, clip_gradient=0.6, epsilon=1e-4)),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_optimizer_ops(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet 1.9.1's numbers (tests/data/make_optimizer_files.py)
# -------------------------------------------------------------------------------------------------

def _oracle_ops():
    return json.loads(DATA.read_text())['ops']


@pytest.mark.parametrize('entry', _oracle_ops(), ids=lambda e: e['op'])
def test_against_mxnet(entry):
    dtype = entry['weight']['dtype']
    weight = nd.array(json_array(entry['weight']), dtype=dtype)
    states = [nd.array(json_array(s), dtype=s['dtype']) for s in entry['states']]
    master = nd.array(json_array(entry['master'])) if entry['master'] else None
    scalars = [nd.array([v]) for v in entry['scalars']]
    fn = getattr(nd.op, entry['op'])
    for k, g in enumerate(entry['grads']):
        attrs = dict(entry['attrs'], **(entry['per_step'][k] if entry['per_step'] else {}))
        args = [weight, nd.array(json_array(g), dtype=g['dtype'])] + states
        if entry['master_last']:
            args += scalars + [master]
        else:
            args += ([master] if master is not None else []) + scalars
        out = fn(*args, **attrs)
        weight[:] = out.astype(dtype)
    tol = dict(rtol=2e-3, atol=1e-3) if dtype == 'float16' else dict(rtol=2e-4, atol=1e-6)
    assert out.dtype == np.dtype(entry['output']['dtype'])
    np.testing.assert_allclose(out.asnumpy(), json_array(entry['output']), **tol)
    for s, expected in zip(states, entry['final_states']):
        np.testing.assert_allclose(s.asnumpy(), json_array(expected), rtol=2e-4, atol=1e-6)
    if master is not None and entry['op'] != 'mp_lamb_update_phase2':
        # (MXNet's mp_lamb_update_phase2 does not update the master copy: a bug)
        np.testing.assert_allclose(master.asnumpy(), json_array(entry['final_master']),
                                   rtol=2e-4, atol=1e-6)


def test_contrib_wrappers():
    """MXNet's Python functions around the AdamW and LAMB operators: lists of arrays, and
    rescale_grad as a number."""
    w, g = random_array(S, 1), random_array(S, 2)
    mean, var = np.zeros(S), np.full(S, 0.1)
    expected = RULES['_adamw_update'](w, g, mean, var, 0.5, lr=0.1, eta=0.7, wd=0.05)
    m, v = nd.array(mean), nd.array(var)
    out = nd.contrib.adamw_update(nd.array(w), nd.array(g), m, v, 0.5, 0.1, 0.7, wd=0.05)
    np.testing.assert_allclose(out.asnumpy(), expected[0], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), expected[1], rtol=1e-6)
    masters = [nd.array(w)]
    out = nd.contrib.multi_mp_adamw_update([nd.array(w, dtype='float16')],
                                           [nd.array(g, dtype='float16')],
                                           [nd.array(mean)], [nd.array(var)], masters, 0.5,
                                           lrs=[0.1], wds=[0.05], etas=[0.7])
    np.testing.assert_allclose(masters[0].asnumpy(), expected[0], rtol=1e-3, atol=1e-3)
    assert out[0].dtype == np.float16
    weights = [nd.array(w), nd.array(random_array((4,), 3))]
    out = nd.contrib.multi_lamb_update(weights, [nd.array(g), nd.array(random_array((4,), 4))],
                                       [nd.zeros(S), nd.zeros(4)], [nd.zeros(S), nd.zeros(4)],
                                       step_count=[1, 2], lrs=[0.1, 0.2], wds=[0.0, 0.1],
                                       out=weights)
    assert out is weights
    assert nd.contrib.multi_adamw_update.__name__ == 'multi_adamw_update'
    s = sym.contrib.adamw_update(sym.var('w'), sym.var('g'), sym.var('m'), sym.var('v'), 0.5,
                                 lr=0.1, eta=1.0)
    assert s.list_arguments() == ['w', 'g'] and s.list_auxiliary_states() == ['m', 'v']


# -------------------------------------------------------------------------------------------------
# In-place semantics
# -------------------------------------------------------------------------------------------------

def test_weight_is_written_through_out_only():
    w0, g, m0 = random_array(S, 1), random_array(S, 2), random_array(S, 3)
    w, m = nd.array(w0), nd.array(m0)
    out = nd.sgd_mom_update(w, nd.array(g), m, lr=0.1, momentum=0.9)
    expected, mom = RULES['sgd_mom_update'](w0, g, m0, lr=0.1, momentum=0.9)
    np.testing.assert_allclose(w.asnumpy(), w0.astype(np.float32))     # weight untouched
    np.testing.assert_allclose(m.asnumpy(), mom, rtol=1e-6)             # the state in place
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-6)
    result = nd.sgd_update(w, nd.array(g), lr=0.1, out=w)
    assert result is w
    np.testing.assert_allclose(w.asnumpy(), RULES['sgd_update'](w0, g, lr=0.1)[0], rtol=1e-6)


@pytest.mark.parametrize('op', ['nag_mom_update', 'mp_nag_mom_update'])
def test_nag_momentum_does_not_depend_on_aliasing(op):
    # MXNet computes the momentum from the new weight when out aliases weight; not here
    w0, g, m0 = random_array(S, 1), random_array(S, 2), random_array(S, 3)
    attrs = dict(lr=0.1, momentum=0.9, wd=0.3)
    extra = [nd.array(w0)] if op.startswith('mp') else []
    m1 = nd.array(m0)
    out = getattr(nd, op)(nd.array(w0), nd.array(g), m1, *extra, **attrs)
    w, m2 = nd.array(w0), nd.array(m0)
    extra = [nd.array(w0)] if op.startswith('mp') else []
    getattr(nd, op)(w, nd.array(g), m2, *extra, out=w, **attrs)
    np.testing.assert_array_equal(w.asnumpy(), out.asnumpy())
    np.testing.assert_array_equal(m1.asnumpy(), m2.asnumpy())
    np.testing.assert_allclose(m1.asnumpy(), RULES['nag_mom_update'](w0, g, m0, **attrs)[1],
                               rtol=1e-6)


def test_multi_precision_float16():
    w0, g = random_array(S, 1), random_array(S, 2, -2, 2)
    w16 = nd.array(w0, dtype='float16')
    g16 = nd.array(g, dtype='float16')
    mom, w32 = nd.zeros(S), nd.array(w16.asnumpy(), dtype='float32')
    attrs = dict(lr=0.1, momentum=0.9, wd=0.05, rescale_grad=0.5)
    expected = w16.asnumpy().astype(np.float64)
    m = np.zeros(S)
    for _ in range(3):
        out = nd.mp_sgd_mom_update(w16, g16, mom, w32, out=w16, **attrs)
        expected, m = RULES['sgd_mom_update'](expected, g16.asnumpy().astype(np.float64), m,
                                              **attrs)
    assert out.dtype == np.float16 and w32.dtype == np.float32 and mom.dtype == np.float32
    np.testing.assert_allclose(w32.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mom.asnumpy(), m, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(w16.asnumpy(), w32.asnumpy().astype(np.float16))


def test_mp_lamb_phase2_updates_the_master_copy():
    # MXNet 1.9.1 leaves weight32 alone (LAMB with multi_precision then never moves on)
    w32 = nd.array([1.0, 2.0])
    out = nd.mp_lamb_update_phase2(nd.array([1.0, 2.0], dtype='float16'), nd.array([0.5, -1.0]),
                                   nd.array([2.0]), nd.array([4.0]), w32, lr=0.1)
    # w32 - lr * (r1 / r2) * g; MXNet's output is the same, its weight32 stays [1, 2]
    np.testing.assert_allclose(out.asnumpy(), [0.975, 2.05], rtol=1e-3)
    np.testing.assert_allclose(w32.asnumpy(), [0.975, 2.05], rtol=1e-6)


def _case_arrays(case, dtype):
    """The case's inputs in ``dtype``; an ``mp_`` operator's weight and gradient in float16, its
    other arrays in float32."""
    op = registry.get(case.op)
    rng = np.random.RandomState(case.seed)
    names = op.list_inputs(op.parse_attrs(case.attrs))
    master = 'weight32' in names
    arrays = []
    for name, spec in zip(names, case.inputs):
        value = np.asarray(spec(rng) if callable(spec) else spec)
        low = name in ('weight', 'grad') or not master
        arrays.append(value.astype(np.float16 if master and low else
                                   np.float32 if master else dtype))
    if master:      # the master copy holds the weight
        arrays[names.index('weight32')] = arrays[0].astype(np.float32)
    return op, arrays


def _run(op, attrs, arrays, into):
    """``compute`` on copies of ``arrays``: without ``out`` (``into`` None), into a fresh
    buffer ('fresh') or into the weight ('weight'). -> (output, inputs after the call)."""
    arrays = [a.copy() for a in arrays]
    params = op.parse_attrs(attrs)
    if into is None:
        out = op.compute(np, params, *arrays)
        for a in arrays:
            assert not np.may_share_memory(out, a), 'compute without out= returns fresh arrays'
        return out, arrays
    out = arrays[0] if into == 'weight' else None
    if out is None:
        kind = op.infer_types(params, [a.dtype for a in arrays])[1][0]
        out = np.full(arrays[0].shape, np.nan, kind)
    assert op.compute(np, params, *arrays, out=out) is out
    return out.copy(), arrays


@pytest.mark.parametrize('dtype', [np.float32, np.float16, np.float64])
@pytest.mark.parametrize('case', CASES, ids=repr)
def test_out_forms_agree_bit_for_bit(case, dtype):
    # one rule, written in place: the output and the states are the same bits whether the
    # output is allocated, given, or the weight itself (an optimizer's out=weight)
    op, arrays = _case_arrays(case, dtype)
    out, after = _run(op, case.attrs, arrays, None)
    forms = ['fresh'] + (['weight'] if out.dtype == arrays[0].dtype else [])
    for into in forms:
        got, got_after = _run(op, case.attrs, arrays, into)
        assert got.dtype == out.dtype
        np.testing.assert_array_equal(got, out, err_msg=f'out={into}')
        for k, (a, b) in enumerate(zip(got_after[1:], after[1:]), 1):
            np.testing.assert_array_equal(a, b, err_msg=f'input {k} with out={into}')


@pytest.mark.parametrize('op', sorted({registry.get(c.op).name for c in CASES}))
def test_updates_allocate_nothing_of_the_weights_size(op):
    # the temporaries live in the workspace; numpy's own casting buffers are of a fixed size
    case = next(c for c in CASES if registry.get(c.op).name == op)
    opdef, arrays = _case_arrays(case, np.float32)
    arrays = [_tiled(a) for a in arrays]         # about 512 x 512, the values of the case
    params = opdef.parse_attrs(case.attrs)
    out = np.empty_like(opdef.compute(np, params, *arrays))     # warms the workspace
    if out.dtype == arrays[0].dtype:
        out = arrays[0]             # as an optimizer calls it
    tracemalloc.start()
    try:
        opdef.compute(np, params, *arrays, out=out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < out.nbytes // 8, f'{op} allocated {peak} bytes for a {out.nbytes}-byte weight'


def _tiled(a):
    """A 2-d array repeated to about 512 rows (and columns, unless it has one)."""
    if a.ndim != 2:
        return a
    return np.tile(a, (512 // a.shape[0], 512 // a.shape[1] if a.shape[1] > 1 else 1))


def test_signsgd_sign_of_nan_is_zero():
    out = nd.signsgd_update(nd.array([1.0, 1.0, 1.0]), nd.array([np.nan, 0.0, -3.0]), lr=0.5)
    np.testing.assert_array_equal(out.asnumpy(), [1.0, 1.0, 1.5])


@pytest.mark.parametrize('scale', [np.nan, np.inf, 0.0])
def test_adamw_skips_the_step(scale):
    w, m, v = nd.array([1.0, 2.0]), nd.array([0.1, 0.2]), nd.array([0.3, 0.4])
    out = nd.op._adamw_update(w, nd.array([5.0, 6.0]), m, v, nd.array([scale]), lr=0.1, eta=1.0)
    np.testing.assert_array_equal(out.asnumpy(), [1.0, 2.0])
    np.testing.assert_array_equal(m.asnumpy(), np.float32([0.1, 0.2]))
    np.testing.assert_array_equal(v.asnumpy(), np.float32([0.3, 0.4]))


def test_namespaces():
    # where MXNet's Python frontend puts them
    assert nd.sparse.sgd_update.op.name == 'sgd_update'
    assert nd.sparse.adagrad_update.op.name == '_sparse_adagrad_update'
    assert nd.contrib.group_adagrad_update.op.name == '_contrib_group_adagrad_update'
    assert nd._internal._adamw_update.op.name == '_adamw_update'
    assert registry.get('_sparse_adam_update').name == 'adam_update'
    assert registry.get('_sparse_ftrl_update').name == 'ftrl_update'
    assert nd._internal._multi_adamw_update.op.name == '_multi_adamw_update'
    assert nd._internal._multi_mp_lamb_update.op.name == '_multi_mp_lamb_update'
    assert nd.multi_sum_sq.op.name == 'multi_sum_sq' and nd.op.reset_arrays.op.name
    # MXNet's contrib names are Python functions, not operators
    assert registry.find('_contrib_adamw_update') is None
    assert callable(nd.contrib.multi_mp_lamb_update) and callable(sym.contrib.mp_adamw_update)


# -------------------------------------------------------------------------------------------------
# The Symbol path: states are auxiliary, updated in place by the graph
# -------------------------------------------------------------------------------------------------

def test_symbol_lists_states_as_auxiliary():
    v = [sym.var(n) for n in ('w', 'g', 'm', 'v', 'w32')]
    s = sym.adam_update(*v[:4], lr=0.1)
    assert s.list_arguments() == ['w', 'g']
    assert s.list_auxiliary_states() == ['m', 'v']
    s = sym.mp_sgd_mom_update(v[0], v[1], v[2], v[4], lr=0.1, momentum=0.9)
    assert s.list_auxiliary_states() == ['m', 'w32']
    s = sym.mp_lamb_update_phase1(*v[:4], v[4], t=1, wd=0.0)
    assert s.list_auxiliary_states() == ['m', 'v']      # the master copy is only read
    assert s.infer_type(w='float16', g='float16')[1] == [np.float32]
    assert s.infer_type(w='float16', g='float16')[2] == [np.float32, np.float32]


def test_symbol_eval_and_json():
    w0, g, m0 = random_array(S, 1), random_array(S, 2), random_array(S, 3)
    s = sym.sgd_mom_update(sym.var('w'), sym.var('g'), sym.var('m'), lr=0.1, momentum=0.9)
    again = sym.fromjson(s.tojson())
    assert again.tojson() == s.tojson()
    m = nd.array(m0)
    out = again.eval(w=nd.array(w0), g=nd.array(g), m=m)[0]
    expected, mom = RULES['sgd_mom_update'](w0, g, m0, lr=0.1, momentum=0.9)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), mom, rtol=1e-6)
    exe = s.bind(mx.cpu(), {'w': nd.array(w0), 'g': nd.array(g)},
                 aux_states={'m': nd.array(m0)})
    exe.forward()
    exe.forward()
    _, mom = RULES['sgd_mom_update'](w0, g, mom, lr=0.1, momentum=0.9)
    np.testing.assert_allclose(exe.aux_dict['m'].asnumpy(), mom, rtol=1e-6)


def test_no_gradient():
    w, g = nd.array(random_array(S, 1)), nd.array(random_array(S, 2))
    w.attach_grad()
    with mx.autograd.record():
        out = nd.sgd_update(w, g, lr=0.1)
    out.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), np.zeros(S))


# -------------------------------------------------------------------------------------------------
# Errors
# -------------------------------------------------------------------------------------------------

def test_shape_errors():
    w = nd.zeros((2, 3))
    with pytest.raises(ShapeError, match='sgd_mom_update.*mom must have the shape of weight'):
        nd.sgd_mom_update(w, nd.zeros((2, 3)), nd.zeros((3, 2)), lr=0.1)
    with pytest.raises(ShapeError, match=r'lamb_update_phase2.*r1 must have shape \(1,\)'):
        nd.lamb_update_phase2(w, w, nd.zeros(2), nd.zeros(1), lr=0.1)
    with pytest.raises(ShapeError, match='group_adagrad_update.*2-d'):
        nd.contrib.group_adagrad_update(nd.zeros((2, 3, 4)), nd.zeros((2, 3, 4)),
                                        nd.zeros((2, 1)), lr=0.1)
    with pytest.raises(ShapeError, match=r'history must have shape'):
        nd.contrib.group_adagrad_update(w, w, nd.zeros((2, 3)), lr=0.1)


def test_dtype_and_attribute_errors():
    with pytest.raises(DTypeError, match='adam_update'):
        nd.adam_update(nd.zeros(3), nd.zeros(3, dtype='float64'), nd.zeros(3), nd.zeros(3),
                       lr=0.1)
    with pytest.raises(DTypeError, match='mp_sgd_update'):
        nd.mp_sgd_update(nd.zeros(3, dtype='float16'), nd.zeros(3), nd.zeros(3), lr=0.1)
    # MXNet: "This operation only support floating point types"
    with pytest.raises(DTypeError, match='sgd_update.*floating point.*int32'):
        nd.sgd_update(nd.zeros(3, dtype='int32'), nd.zeros(3, dtype='int32'), lr=0.1)
    with pytest.raises(DTypeError, match='mp_sgd_mom_update.*floating point.*int32'):
        nd.mp_sgd_mom_update(nd.zeros(3, dtype='float16'), nd.zeros(3, dtype='float16'),
                             nd.zeros(3, dtype='int32'), nd.zeros(3, dtype='int32'), lr=0.1)
    with pytest.raises(AttributeParseError, match='required attribute.*lr'):
        nd.sgd_update(nd.zeros(3), nd.zeros(3))
    with pytest.raises(AttributeParseError, match="required attribute.*t"):
        nd.lamb_update_phase1(nd.zeros(3), nd.zeros(3), nd.zeros(3), nd.zeros(3), wd=0.0)
