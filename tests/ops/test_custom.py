"""Cases for hybridlib/ops/custom.py: Custom, with operators written in Python.

The operators are those of tests/data/make_custom_files.py (run there on MXNet): a softmax
with two arguments, two outputs, an auxiliary state and a string kwarg; a loss layer whose
backward ignores the head gradient; a smoothing whose backward reads the output gradient only.
Their gradients are hand-written in ``CustomOp.backward``, so finite differences check them.
Gradients of gradients do not exist for a CustomOp (``second_order=False``).

``_backward_Custom`` has no case of its own: its attribute is the live forward node it
differentiates, which a table of attributes cannot give; every case here runs it (autograd and
the Symbol backward graph), and tests/test_operator.py runs it compiled.
"""
import importlib.util
import os

import numpy as np
import pytest

import hybridlib as mx

from harness import Case, check_case, positive, uniform

_PATH = os.path.join(os.path.dirname(__file__), '..', 'data', 'make_custom_files.py')
_spec = importlib.util.spec_from_file_location('make_custom_files', _PATH)
_gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_gen)
_gen.define_operators(mx)


def _scaled_softmax(data, weight, count, scale, **_):
    logits = data * weight[None, :] * float(scale)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return [e / e.sum(axis=-1, keepdims=True), (data * data).sum(axis=-1)]


def _square_loss_grad(cots, data, label, grad_scale, **_):
    diff = data - label
    return [2 * float(grad_scale) * diff, -2 * float(grad_scale) * diff]


def _smooth(x, epsilon, **_):
    return (1 - float(epsilon)) * x + float(epsilon) / x.shape[-1]


CASES = [
    Case('Custom', [(3, 4), positive((4,)), np.zeros(1)], name='scaled_softmax',
         attrs=dict(op_type='test_scaled_softmax', scale=1.5, tag='x'), ref=_scaled_softmax,
         grad_inputs=[0, 1], second_order=False),
    Case('Custom', [(2, 3), uniform((2, 3))], name='loss_layer',
         attrs=dict(op_type='test_square_loss', grad_scale=0.25),
         ref=lambda d, l, **_: (d - l) ** 2, grad_ref=_square_loss_grad),
    Case('Custom', [(2, 5)], name='out_grad_only',
         attrs=dict(op_type='test_smooth', epsilon=0.3), ref=_smooth, second_order=False),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_case(case):
    check_case(case)
