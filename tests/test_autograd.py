"""autograd: scopes, the tape, backward/grad, grad_req, retain_graph, higher order."""
import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd
from hybridlib.base import MXNetError


def test_scopes_nest_and_restore():
    assert not autograd.is_recording() and not autograd.is_training()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
            with autograd.train_mode():
                assert autograd.is_training() and not autograd.is_recording()
        with autograd.predict_mode():
            assert not autograd.is_training() and autograd.is_recording()
    with autograd.record(train_mode=False):
        assert autograd.is_recording() and not autograd.is_training()
    assert not autograd.is_recording() and not autograd.is_training()
    prev = autograd.set_recording(True)
    assert prev is False and autograd.is_recording()
    autograd.set_recording(False)
    assert autograd.set_training(True) is False
    autograd.set_training(False)


def test_backward_writes_and_accumulates():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x * x + x          # x used twice: contributions add up
    y.backward()
    assert x.grad.asnumpy().tolist() == [3, 5, 7]
    with autograd.record():
        y = x * 3
    y.backward(nd.array([1.0, 0.0, 2.0]))
    assert x.grad.asnumpy().tolist() == [3, 0, 6]            # 'write' overwrites


def test_grad_req_add_and_null():
    x = nd.array([1.0, 2.0])
    x.attach_grad(grad_req='add')
    for _ in range(2):
        with autograd.record():
            y = x * x
        y.backward()
    assert x.grad.asnumpy().tolist() == [4, 8]
    z = nd.array([1.0])
    z.attach_grad(grad_req='null')
    with autograd.record():
        w = z * 2
    w.backward()
    assert z.grad.asnumpy().tolist() == [0]


def test_graph_is_freed_unless_retained():
    x = nd.array([2.0])
    x.attach_grad()
    with autograd.record():
        y = nd.exp(x)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp([2.0]), 1e-6)
    with pytest.raises(MXNetError, match='not in a computational graph|freed'):
        y.backward()


def test_heads_outside_a_graph_are_an_error():
    with pytest.raises(MXNetError, match='not in a computational graph'):
        nd.ones((2,)).backward()
    x = nd.ones((2,))
    x.attach_grad()
    y = x * 2                  # not recorded
    with pytest.raises(MXNetError, match='not in a computational graph'):
        y.backward()


def test_grad_returns_without_writing():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x * x * x
    g = autograd.grad(y, x)
    assert g.asnumpy().tolist() == [3, 12]
    assert x.grad.asnumpy().tolist() == [0, 0]


def test_second_and_third_order():
    x = nd.array([0.5, 1.5])
    x.attach_grad()
    with autograd.record():
        y = nd.sin(x)
        dy = autograd.grad(y, x, create_graph=True)            # cos
        d2y = autograd.grad(dy, x, create_graph=True)          # -sin
    d2y.backward()                                             # -cos
    np.testing.assert_allclose(dy.asnumpy(), np.cos([0.5, 1.5]), 1e-6)
    np.testing.assert_allclose(d2y.asnumpy(), -np.sin([0.5, 1.5]), 1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), -np.cos([0.5, 1.5]), 1e-6)


def test_mark_variables_and_detach():
    x = nd.array([1.0, 2.0])
    g = nd.zeros((2,))
    autograd.mark_variables([x], [g], 'write')
    with autograd.record():
        y = x * 2 + x.detach() * 5     # the detached use contributes nothing
    y.backward()
    assert g.asnumpy().tolist() == [2, 2] and x.grad is g


def test_gradient_through_a_piecewise_constant_op_is_zero():
    x = nd.array([1.0, -2.0])
    x.attach_grad()
    x.grad[:] = 7
    with autograd.record():
        y = nd.floor(x)
    y.backward()
    assert x.grad.asnumpy().tolist() == [0, 0]


def test_tape_is_data():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = nd.exp(x * 2)
    node, index = y._entry
    assert node.op.name == 'exp' and index == 0
    prev, _ = node.inputs[0]
    assert prev.op.name == '_mul_scalar' and prev.params['scalar'] == 2
    graph = autograd.get_symbol(y)
    assert [n for n in graph.tojson().split('"op": "')[1:]][0].startswith('null')
    assert 'exp' in graph.tojson()


def test_training_mode_reaches_operators():
    seen = []
    x = nd.ones((100,))
    x.attach_grad()
    with autograd.record(train_mode=True):
        seen.append(autograd.is_training())
    with autograd.record(train_mode=False):
        seen.append(autograd.is_training())
    assert seen == [True, False]


def test_copies_between_contexts_are_differentiable():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x.copyto(mx.cpu(1)) * 3
    assert y.context == mx.cpu(1)
    y.backward()
    assert x.grad.asnumpy().tolist() == [3, 3]
