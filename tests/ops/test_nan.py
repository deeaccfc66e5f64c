"""NaN and infinities through the operators that order or normalise, against MXNet 1.9.1.

tests/data/make_nan_files.py recorded MXNet's outputs (CPU) for Activation, softmax, log_softmax, softmin,
topk, sort, argsort, box_nms, box_iou and MultiBoxDetection on inputs holding NaN, +inf and
-inf. Each case runs here imperatively and hybridized; NaN and infinities must sit exactly
where MXNet has them, orders and indices must be MXNet's, finite values close to its.

One documented difference: where a float32 log_softmax row (oneDNN's path) holds a NaN, the
row's sum of exponentials is infinite and MXNet's softmax gives 0 beside the NaN; oneDNN's
approximate log of that infinite sum is 88.7 (128 ln 2), so MXNet's log_softmax there is a
finite number near -89. Here it is log(0) = -inf, as exact maths has it.
"""
import json
import os

import numpy as np
import pytest

from hybridlib import autograd, nd
from hybridlib.nn import HybridLambda

DATA = os.path.join(os.path.dirname(__file__), os.pardir, 'data')
with open(os.path.join(DATA, 'nan-cases.json')) as _f:
    RECORDED = json.load(_f)['cases']
NUMBERS = np.load(os.path.join(DATA, 'nan-numbers.npz'))


def _op(namespace, name):
    fn = namespace
    for part in name.split('.'):
        fn = getattr(fn, part)
    return fn


def _expected(name, k):
    """MXNet's output ``k``; for log_softmax, -inf where the row's softmax sum overflowed."""
    case = RECORDED[name]
    out = NUMBERS[f'{name}:out{k}']
    if case['op'] != 'log_softmax':
        return out
    overflowed = np.isnan(NUMBERS[f'{name}:softmax']).any(axis=case['attrs'].get('axis', -1),
                                                           keepdims=True)
    return np.where(overflowed & np.isfinite(out), -np.inf, out).astype(out.dtype)


def _tolerance(*dtypes):
    """The tolerance of the least precise of ``dtypes`` (MXNet computes float32 input in
    float32 whatever the output type)."""
    tolerances = {np.dtype(np.float16): 2e-3, np.dtype(np.float64): 1e-12}
    return max(tolerances.get(np.dtype(d), 2e-6) for d in dtypes)


def assert_matches(got, expected, what, computed=None):
    """Same dtype, shape, NaN and infinities; finite values close (to the tolerance of the
    output dtype, or of ``computed`` if less precise)."""
    assert got.dtype == expected.dtype and got.shape == expected.shape, \
        f'{what}: {got.dtype}{got.shape} != {expected.dtype}{expected.shape}'
    if expected.dtype.kind != 'f':
        np.testing.assert_array_equal(got, expected, err_msg=what)
        return
    for test in (np.isnan, np.isposinf, np.isneginf):
        np.testing.assert_array_equal(test(got), test(expected),
                                      err_msg=f'{what}: {test.__name__} differs')
    finite = np.isfinite(expected)
    tol = _tolerance(expected.dtype, computed or expected.dtype)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=tol * 10, atol=tol,
                               err_msg=what)


def _run(name, hybridize):
    case = RECORDED[name]
    inputs = [nd.array(NUMBERS[f'{name}:in{i}'], dtype=NUMBERS[f'{name}:in{i}'].dtype)
              for i in range(case['inputs'])]
    if hybridize:
        block = HybridLambda(lambda F, *xs: _op(F, case['op'])(*xs, **case['attrs']))
        block.hybridize()
        outs = block(*inputs)
    else:
        outs = _op(nd, case['op'])(*inputs, **case['attrs'])
    return outs if isinstance(outs, (list, tuple)) else [outs]


@pytest.mark.parametrize('hybridize', [False, True], ids=['nd', 'hybridized'])
@pytest.mark.parametrize('name', sorted(RECORDED))
def test_matches_mxnet(name, hybridize):
    outs = _run(name, hybridize)
    assert len(outs) == RECORDED[name]['outputs']
    computed = NUMBERS[f'{name}:in0'].dtype
    for k, out in enumerate(outs):
        assert_matches(out.asnumpy(), _expected(name, k), f'{name} output {k}', computed)


def test_the_fixtures_reach_the_paths():
    """The recorded cases hold what the rules are about: NaN that oneDNN's softmax skips,
    NaN that MXNet's own loops spread, orders that no stable sort gives, boxes kept beside
    NaN coordinates, and MultiBoxDetection's clip turning NaN into 1."""
    rows = NUMBERS['softmax_rows:out0']
    assert np.isnan(rows[0, 0]) and (rows[0, 1:] == 0).all()
    assert np.isnan(NUMBERS['softmax_float64:out0'][0]).all()
    stable = np.argsort(NUMBERS['argsort_ascend:in0'], axis=-1, kind='stable')
    assert (NUMBERS['argsort_ascend:out0'].astype(int) != stable).any()
    assert np.isnan(NUMBERS['box_nms_default:out0'][..., 2]).any()
    assert (NUMBERS['detection_default:out0'][..., 2:] == 1).any()


def test_gradients_beside_nan_rows():
    """softmax's gradient is computed from its output, as before: finite rows keep exact
    gradients when another row holds NaN."""
    x = nd.array([[np.nan, 1, 2], [0.5, -1, 3]])
    x.attach_grad()
    with autograd.record():
        y = nd.softmax(x)
    y.backward(nd.array([[1, 0, 0], [1, 0, 0]]))
    p = np.exp([0.5, -1, 3]) / np.exp([0.5, -1, 3]).sum()
    np.testing.assert_allclose(x.grad.asnumpy()[1], p[0] * (np.eye(3)[0] - p), rtol=1e-5)
