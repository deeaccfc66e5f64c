"""``mx.autograd.Function``: hand-written backwards on the tape, against MXNet 1.9.1.

The Functions are defined by tests/data/make_custom_files.py (the same source ran on MXNet to
record tests/data/custom-values.npz).
"""
import importlib.util
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd
from hybridlib.base import MXNetError

DATA = os.path.join(os.path.dirname(__file__), 'data')
_spec = importlib.util.spec_from_file_location(
    'make_custom_files', os.path.join(DATA, 'make_custom_files.py'))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)
Sigmoid, ProductSum = GEN.define_functions(mx)

with np.load(os.path.join(DATA, 'custom-values.npz')) as _f:
    REF = {k: _f[k] for k in _f.files}
TOL = dict(rtol=1e-5, atol=1e-6)


def _close(actual, key):
    np.testing.assert_allclose(actual.asnumpy(), REF[key], err_msg=key, **TOL)


def _inputs():
    x, y = nd.array(REF['input_fn_x']), nd.array(REF['input_fn_y'])
    x.attach_grad()
    y.attach_grad()
    return x, y


def test_backward_through_functions_matches_mxnet():
    x, y = _inputs()
    with autograd.record():
        s = Sigmoid()(x)
        p, q, e = ProductSum()(s, y)
    autograd.backward([p, q, e], [nd.array(h) for h in REF['input_fn_heads']])
    for value, key in ((s, 'fn_sigmoid'), (p, 'fn_prod'), (q, 'fn_sum'), (e, 'fn_exp'),
                       (x.grad, 'fn_x_grad'), (y.grad, 'fn_y_grad')):
        _close(value, key)


def test_autograd_grad_matches_mxnet():
    x, y = _inputs()
    with autograd.record():
        p, q, _ = ProductSum()(x, y)
    gx, gy = autograd.grad([p, q], [x, y], head_grads=[nd.array(h) for h in
                                                        REF['input_fn_heads'][:2]])
    _close(gx, 'fn_grad_x')
    _close(gy, 'fn_grad_y')


def test_mixes_with_recorded_operators():
    x, _ = _inputs()
    with autograd.record():
        z = (Sigmoid()(x * 2) * 3).sum()
    z.backward()
    s = 1 / (1 + np.exp(-2 * REF['input_fn_x'].astype(np.float64)))
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * s * (1 - s), rtol=1e-5)


class _Spy(mx.autograd.Function):
    """Records the recording state in forward and the output gradients backward receives."""

    def forward(self, x):
        self.recording = autograd.is_recording()
        return x * 2, x * 3

    def backward(self, da, db):
        self.received = (da.asnumpy(), db.asnumpy())
        return da * 2 + db * 3


def test_forward_is_not_recorded_and_missing_output_gradients_are_zeros():
    x, _ = _inputs()
    f = _Spy()
    with autograd.record():
        a, b = f(x)
    a.backward()            # b gets no gradient: backward receives zeros for it
    assert f.recording is False
    np.testing.assert_array_equal(f.received[0], np.ones(3))
    np.testing.assert_array_equal(f.received[1], np.zeros(3))
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(3, 2.0))


def test_outside_record_it_is_a_plain_call():
    x, _ = _inputs()
    a, b = _Spy()(x)
    np.testing.assert_allclose(b.asnumpy(), 3 * REF['input_fn_x'], rtol=1e-6)
    with pytest.raises(MXNetError, match='not in a computational graph'):
        a.backward()


class _Identity(mx.autograd.Function):
    def forward(self, x):
        return x

    def backward(self, dy):
        return dy * 5


def test_an_input_returned_as_output_keeps_its_own_place():
    x, _ = _inputs()
    with autograd.record():
        y = _Identity()(x)
    assert y is not x
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(3, 5.0))


def test_an_instance_is_called_once():
    f = Sigmoid()
    x, _ = _inputs()
    with autograd.record():
        f(x)
        with pytest.raises(AssertionError, match='only be called once'):
            f(x)


class _WrongCount(mx.autograd.Function):
    def forward(self, a, b):
        return a + b

    def backward(self, dy):
        return dy


class _WrongShape(mx.autograd.Function):
    def forward(self, a):
        return a.sum()

    def backward(self, dy):
        return dy


def test_backward_results_are_checked():
    x, y = _inputs()
    with autograd.record():
        z = _WrongCount()(x, y)
    with pytest.raises(AssertionError, match='Expecting 2 got 1'):
        z.backward()
    with autograd.record():
        z = _WrongShape()(x)
    with pytest.raises(MXNetError, match=r'_WrongShape.backward: gradient 0 has shape \(1,\)'):
        z.backward()
