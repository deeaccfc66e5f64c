"""The standard Gluon block test: imperative and hybridized runs of a block agree.

``check_hybrid(block, inputs)`` runs one recorded call of the block imperatively, then
hybridized with each of ``FLAGS``, from the same parameter values and random seed, and compares
the outputs, the gradients of the inputs and of the parameters (for head gradients that are not
all ones), and the parameter values after the step (BatchNorm's running statistics). The
hybridized block is then called a second time (the compiled graph, not a new trace) on other
inputs, and must still agree with the imperative block. Its unrecorded calls (in predict mode:
the plan that reuses static buffers and works in place), on the inputs and then on the other
inputs, must agree with the imperative block's unrecorded calls. No call may overwrite the
outputs of an earlier one.
"""
import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd

FLAGS = ({'static_alloc': False}, {'static_alloc': True, 'static_shape': True})


@pytest.fixture(autouse=True)
def fresh_names():
    """Block names count from 0, as in a fresh MXNet process (import it into a test module)."""
    with mx.name.NameManager():
        yield


def data(*shape, offset=0.0):
    """Smooth, distinct test values of ``shape``."""
    size = int(np.prod(shape))
    return nd.array(np.sin(np.arange(size) * 1.3 + offset).reshape(shape))


def flat_outputs(out):
    if isinstance(out, (list, tuple)):
        return [o for item in out for o in flat_outputs(item)]
    return [] if out is None else [out]


def head_like(out):
    return nd.array(np.sin(np.arange(out.size) * 0.7 + 1.0).reshape(out.shape), dtype=out.dtype,
                    ctx=out.context)


def nested_map(fn, args):
    """``args`` (arrays in nested lists/tuples, None kept) with ``fn`` applied to each array."""
    if isinstance(args, (list, tuple)):
        return type(args)(nested_map(fn, a) for a in args)
    return None if args is None else fn(args)


def run(block, inputs, train, seed):
    """One recorded call: outputs, input grads, parameter grads and values after it."""
    xs = nested_map(lambda x: x.copy(), inputs)
    for x in flat_outputs(xs):
        x.attach_grad()
    mx.random.seed(seed)
    with autograd.record(train_mode=train):
        outs = flat_outputs(block(*xs))
    autograd.backward(outs, [head_like(o) for o in outs])
    params = block.collect_params()
    return {
        'outputs': [o.asnumpy() for o in outs],
        'input grads': [x.grad.asnumpy() for x in flat_outputs(xs)],
        'param grads': {k: p.grad().asnumpy() for k, p in params.items()
                        if p.grad_req != 'null'},
        'params after': {k: p.data().asnumpy() for k, p in params.items()},
    }


def predict(block, inputs, seed):
    """The outputs of one unrecorded call (predict mode)."""
    mx.random.seed(seed)
    return flat_outputs(block(*inputs))


def assert_same(expected, actual, what, rtol, atol):
    if isinstance(expected, dict):
        assert expected.keys() == actual.keys(), what
        for key in expected:
            assert_same(expected[key], actual[key], f'{what} {key}', rtol, atol)
    elif isinstance(expected, list):
        assert len(expected) == len(actual), what
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same(e, a, f'{what} {i}', rtol, atol)
    else:
        assert expected.dtype == actual.dtype, what
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def check_hybrid(block, inputs, train=False, seed=7, rtol=1e-5, atol=1e-6, flags=FLAGS):
    """Compare the imperative and the hybridized block (see the module docstring); returns the
    imperative results. ``inputs`` are the call's arguments: arrays, nested lists or tuples of
    them, or None. ``block`` must be initialized; its parameters are restored after."""
    block.hybridize(False)
    block(*inputs)                     # finish deferred initialisation before seeding
    saved = {k: p.data().copy() for k, p in block.collect_params().items()}

    def restore():
        for k, p in block.collect_params().items():
            p.set_data(saved[k])

    expected = run(block, inputs, train, seed)
    others = nested_map(lambda x: x * 0.5 - 0.25, inputs)
    restore()
    expected_again = run(block, others, train, seed + 1)
    restore()
    predicted = [o.asnumpy() for o in predict(block, inputs, seed)]
    restore()
    predicted_again = [o.asnumpy() for o in predict(block, others, seed + 1)]
    for flag in flags:
        block.hybridize(**flag)
        restore()
        first = run(block, inputs, train, seed)
        assert_same(expected, first, f'{flag} first call', rtol, atol)
        restore()
        outputs = predict(block, inputs, seed)
        kept = [o.asnumpy().copy() for o in outputs]
        assert_same(predicted, kept, f'{flag} unrecorded call', rtol, atol)
        restore()
        assert_same(expected_again, run(block, others, train, seed + 1),
                    f'{flag} second call', rtol, atol)
        restore()
        again = predict(block, others, seed + 1)
        assert_same(predicted_again, [o.asnumpy() for o in again],
                    f'{flag} second unrecorded call', rtol, atol)
        assert_same(kept, [o.asnumpy() for o in outputs], f'{flag} outputs kept', 0, 0)
    block.hybridize(False)
    restore()
    return expected
