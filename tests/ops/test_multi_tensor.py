"""The multi-tensor optimizer updates (``hybridlib/ops/multi_tensor.py``): harness cases against
the single-weight numpy rules applied per weight, MXNet 1.9.1's numbers (optimizer_ops.json),
``out=``, the Symbol path and errors."""
import json
import pathlib

import numpy as np
import pytest

from hybridlib import nd, sym
from hybridlib.base import AttributeParseError, DTypeError, ShapeError
from harness import Case, check_case, positive, uniform
from optimizer_rules import MULTI_RULES, json_array, multi_lars, multi_sum_sq, random_array

S = (2, 3)
MULTI_DATA = pathlib.Path(__file__).parent.parent / 'data' / 'optimizer_ops.json'
HALF = np.array([0.5])


# -------------------------------------------------------------------------------------------------
# Multi-tensor updates: per weight the numbers of the single-weight rules
# -------------------------------------------------------------------------------------------------

def multi_case(op, inputs, attrs, name=None, stateful=True):
    rule = MULTI_RULES[op]
    return Case(op, inputs, attrs, lambda *xs, **kw: rule(*xs, **kw)[0], name=name, grad=False,
                check_symbol=not stateful)


def _groups(*makers):
    """Inputs of two weights, (2, 3) and (4,): one builder per input of a group."""
    return [make(shape) for shape in (S, (4,)) for make in makers]


def _grad(shape):
    return uniform(shape, -2, 2)


LR_WD = dict(lrs=(0.1, 0.2), wds=(0.05, 0.01), num_weights=2)
PRELOAD = [np.array([0.1, 0.2]), np.array([0.05, 0.01])]
CLIP = dict(rescale_grad=0.5, clip_gradient=0.6)
ADAMW = dict(lrs=(0.1, 0.2), wds=(0.05, 0.01), etas=(0.7, 0.9), beta1=0.8, num_weights=2)
LAMB = dict(learning_rates=(0.1, 0.2), wds=(0.05, 0.01), step_count=(3, 1), num_tensors=2)

CASES = [
    multi_case('multi_sgd_update', _groups(uniform, _grad), dict(LR_WD, **CLIP), stateful=False),
    multi_case('multi_sgd_update', [uniform(S), _grad(S)], dict(lrs=(0.2,), wds=(0.1,)),
               'one', stateful=False),
    multi_case('multi_sgd_mom_update', _groups(uniform, _grad, uniform),
               dict(LR_WD, momentum=0.9, **CLIP)),
    multi_case('multi_mp_sgd_update', _groups(uniform, _grad, uniform), LR_WD),
    multi_case('multi_mp_sgd_mom_update', _groups(uniform, _grad, uniform, uniform),
               dict(LR_WD, momentum=0.9, **CLIP)),
    multi_case('preloaded_multi_sgd_update', _groups(uniform, _grad) + PRELOAD,
               dict(num_weights=2, **CLIP), stateful=False),
    multi_case('preloaded_multi_sgd_mom_update', _groups(uniform, _grad, uniform) + PRELOAD,
               dict(num_weights=2, momentum=0.8)),
    multi_case('preloaded_multi_mp_sgd_update', _groups(uniform, _grad, uniform) + PRELOAD,
               dict(num_weights=2, rescale_grad=0.5)),
    multi_case('preloaded_multi_mp_sgd_mom_update',
               _groups(uniform, _grad, uniform, uniform) + PRELOAD,
               dict(num_weights=2, momentum=0.9, **CLIP)),
    multi_case('_multi_adamw_update', _groups(uniform, _grad, uniform, positive) + [HALF],
               dict(ADAMW, clip_gradient=0.6)),
    multi_case('_multi_adamw_update', _groups(uniform, _grad, uniform, positive)
               + [np.array([np.nan])], ADAMW, 'skip'),
    multi_case('_multi_mp_adamw_update',
               _groups(uniform, _grad, uniform, positive, uniform) + [HALF], ADAMW),
    multi_case('_multi_lamb_update', _groups(uniform, _grad, uniform, positive),
               dict(LAMB, rescale_grad=0.5, clip_gradient=0.6, beta1=0.8)),
    multi_case('_multi_lamb_update', _groups(uniform, _grad, uniform, positive),
               dict(LAMB, lower_bound=0.5, upper_bound=1.0, bias_correction=False), 'bounds'),
    multi_case('_multi_mp_lamb_update', _groups(uniform, _grad, uniform, positive, uniform),
               LAMB),
    Case('multi_sum_sq', [uniform(S), uniform((4,)), uniform((2, 1, 2))], dict(num_arrays=3),
         multi_sum_sq, grad=False, rtol=1e-6),
    Case('multi_lars', [np.array([0.1, 0.2, 0.3, 0.4]), np.array([2.0, 0.0, 3.0, 0.5]),
                        np.array([1.5, 1.0, 0.0, 4.0]), np.array([0.01, 0.02, 0.03, 0.5])],
         dict(eta=0.5, eps=1e-3, rescale_grad=0.25), multi_lars, grad=False),
    # no outputs: a Symbol of it has nothing to evaluate (MXNet 1.9.1 crashes composing one)
    Case('reset_arrays', [uniform(S), uniform((3,))], dict(num_arrays=2), lambda *xs, **kw: [],
         grad=False, check_symbol=False),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_multi_tensor_ops(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet 1.9.1's numbers (tests/data/make_optimizer_ops_files.py), out=, Symbols, errors
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('entry', json.loads(MULTI_DATA.read_text())['ops'],
                         ids=lambda e: e['name'])
def test_multi_tensor_against_mxnet(entry):
    """One call on MXNet's inputs: the outputs, and every input after the call (the states
    updated in place, the rest unchanged)."""
    arrays = [nd.array(json_array(t), dtype=t['dtype']) for t in entry['inputs']]
    result = getattr(nd.op, entry['op'])(*arrays, **entry['attrs'])
    outputs = result if isinstance(result, list) else [result]
    assert len(outputs) == len(entry['outputs'])
    # MXNet rounds float16 squares to float16 before summing (multi_sum_sq) and takes the
    # LAMB trust ratio from the float16 weights' norm; here both are exact
    loose = entry['name'] in ('sum_sq_float16', 'multi_mp_lamb')
    for out, expected in zip(outputs, entry['outputs']):
        assert out.dtype == np.dtype(expected['dtype'])
        f16 = expected['dtype'] == 'float16'
        np.testing.assert_allclose(out.asnumpy(), json_array(expected),
                                   rtol=1e-3 if f16 or loose else 2e-6, atol=1e-6)
    for k, (a, expected) in enumerate(zip(arrays, entry['after'])):
        np.testing.assert_allclose(a.asnumpy(), json_array(expected), rtol=1e-4 if loose else 2e-6,
                                   atol=1e-6, err_msg=f'input {k} after the call')


def test_multi_tensor_updates_write_out():
    w = [nd.array(random_array(S, 1)), nd.array(random_array((4,), 2))]
    g = [nd.array(random_array(S, 3)), nd.array(random_array((4,), 4))]
    m = [nd.zeros(S), nd.zeros(4)]
    expected, moms = MULTI_RULES['multi_sgd_mom_update'](
        *[x.asnumpy() for x in (w[0], g[0], m[0], w[1], g[1], m[1])], **LR_WD, momentum=0.9)
    result = nd.multi_sgd_mom_update(w[0], g[0], m[0], w[1], g[1], m[1], out=w, momentum=0.9,
                                     **LR_WD)
    assert result is w
    for a, e in zip(w, expected):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=1e-6)
    for a, (e,) in zip(m, moms):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=1e-6)

def test_multi_tensor_symbols():
    # MXNet's input names; the states and master copies are auxiliary (updated in place)
    s = sym.multi_mp_sgd_mom_update(lrs=(0.1, 0.1), wds=(0, 0), num_weights=2, name='u')
    assert s.list_arguments() == ['u_weight_0', 'u_grad_0', 'u_weight_1', 'u_grad_1']
    assert s.list_auxiliary_states() == ['u_mom_0', 'u_weight32_0', 'u_mom_1', 'u_weight32_1']
    assert s.list_outputs() == ['u_output0', 'u_output1']
    s = sym.preloaded_multi_sgd_update(num_weights=2, name='p')
    assert s.list_arguments()[-2:] == ['p_lrs', 'p_wds']
    w, g, m = (nd.array(random_array(S, k)) for k in (1, 2, 3))
    s = sym.multi_sgd_mom_update(sym.var('w'), sym.var('g'), sym.var('m'), lrs=(0.1,),
                                 wds=(0.0,), momentum=0.9, num_weights=1)
    again = sym.fromjson(s.tojson())
    assert again.tojson() == s.tojson()
    momentum = m.copy()
    out = again.eval(w=w, g=g, m=momentum)[0]
    expected, (mom,) = MULTI_RULES['multi_sgd_mom_update'](
        w.asnumpy(), g.asnumpy(), m.asnumpy(), lrs=(0.1,), wds=(0.0,), momentum=0.9,
        num_weights=1)
    np.testing.assert_allclose(out.asnumpy(), expected[0], rtol=1e-6)
    np.testing.assert_allclose(momentum.asnumpy(), mom[0], rtol=1e-6)


def test_multi_tensor_errors():
    w = nd.zeros(S)
    with pytest.raises(ShapeError, match='num_weights=2 takes 4 inputs.*got 2'):
        nd.multi_sgd_update(w, w, lrs=(0.1, 0.1), wds=(0, 0), num_weights=2)
    with pytest.raises(AttributeParseError, match='lrs has 2 values for num_weights=1'):
        nd.multi_sgd_update(w, w, lrs=(0.1, 0.1), wds=(0,))
    with pytest.raises(ShapeError, match='grad_1 must have the shape of weight_1'):
        nd.multi_sgd_update(w, w, w, nd.zeros(3), lrs=(0.1, 0.1), wds=(0, 0), num_weights=2)
    with pytest.raises(DTypeError, match='multi_sgd_update'):
        nd.multi_sgd_update(w, w, nd.zeros(3, dtype='float64'), nd.zeros(3, dtype='float64'),
                            lrs=(0.1, 0.1), wds=(0, 0), num_weights=2)
    with pytest.raises(ShapeError, match=r'lrs must have shape \(2,\)'):
        nd.preloaded_multi_sgd_update(w, w, w, w, nd.zeros(3), nd.zeros(2), num_weights=2)
    with pytest.raises(ShapeError, match='multi_lars.*1-d'):
        nd.multi_lars(w, w, w, w, eta=1.0, eps=0.0)
    with pytest.raises(DTypeError, match='multi_sum_sq'):
        nd.multi_sum_sq(w, nd.zeros(2, dtype='float16'))
