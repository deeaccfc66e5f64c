"""Autograd: recording scopes, ``backward`` and ``grad``, ``get_symbol`` and ``Function``.

The recording state, the tape and reverse-mode differentiation live in ``tape.py`` (which
NDArray records onto); this module is MXNet's public ``mx.autograd`` over it, for NDArrays.
"""
from . import ndarray as nd
from .base import MXNetAssertionError, MXNetError
from .ndarray import NDArray
from .ops.registry import OpDef, Params
from .symbol import tape_to_symbol
from . import tape
from .tape import (TapeNode, Variable, backprop, is_recording, is_training, mark_variables,
                   pause, predict_mode, record, record_op, set_recording, set_training,
                   topo_order, train_mode, zeros_like)

__all__ = ['record', 'pause', 'train_mode', 'predict_mode', 'is_recording', 'is_training',
           'set_recording', 'set_training', 'mark_variables', 'backward', 'grad',
           'get_symbol', 'backprop', 'topo_order', 'TapeNode', 'Variable', 'Function']


def _check_arrays(arrays, what):
    for a in arrays if isinstance(arrays, (list, tuple)) else [arrays]:
        if not isinstance(a, NDArray):
            raise TypeError(f'{what} must be NDArrays, got {type(a).__name__}')


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # noqa: F811
    """Compute the gradients of ``heads`` and write them into the variables' ``.grad``.

    ``grad_req='write'`` overwrites, ``'add'`` accumulates, ``'null'`` skips. A variable that
    the heads depend on only through non-differentiable operators gets zeros.
    """
    _check_arrays(heads, 'backward heads')
    tape.backward(heads, head_grads, retain_graph, train_mode, nd.op)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):  # noqa: F811
    """Gradients of ``heads`` with respect to ``variables``, returned instead of written.

    With ``create_graph=True`` the gradients are recorded, so they can be differentiated again.
    """
    _check_arrays(heads, 'grad heads')
    _check_arrays(variables, 'grad variables')
    single = isinstance(variables, NDArray)
    out = tape.grad(heads, [variables] if single else list(variables), head_grads,
                    retain_graph, create_graph, train_mode, nd.op)
    return out[0] if single else out


def get_symbol(x):
    """The recorded computation that produced ``x``, as a Symbol (variables become ``var``s)."""
    return tape_to_symbol(x)


# -------------------------------------------------------------------------------------------------
# Function: a computation with a hand-written backward
# -------------------------------------------------------------------------------------------------

class Function:
    """Customize differentiation in autograd.

    ``forward`` computes on NDArrays (not recorded: it may go through numpy); ``backward``
    takes one gradient per output of ``forward`` and returns one per input. Called under
    ``record()``, the call is one tape entry whose gradient is ``backward``. For example, a
    stable sigmoid::

        class sigmoid(mx.autograd.Function):
            def forward(self, x):
                y = 1 / (1 + mx.nd.exp(-x))
                self.save_for_backward(y)
                return y

            def backward(self, dy):
                y, = self.saved_tensors
                return dy * y * (1 - y)

        func = sigmoid()
        with mx.autograd.record():
            m = func(x)
        m.backward()

    An instance can be called once. An output of ``forward`` that is one of its inputs (or
    already in a graph) comes back as a new NDArray over the same data, so that the input keeps
    its own place on the tape.
    """

    def __init__(self):
        self._used = False
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        """Keep ``args`` for ``backward`` as ``self.saved_tensors``."""
        self.saved_tensors = args

    def __call__(self, *inputs):
        if self._used:
            raise MXNetAssertionError('Each Function instance can only be called once. '
                                      'Please create another instance.')
        self._used = True
        prev = set_recording(False)
        try:
            outputs = self.forward(*inputs)
        finally:
            set_recording(prev)
        if not prev:
            return outputs
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        name = type(self).__name__
        for what, values in (('inputs', inputs), ('outputs', outs)):
            for v in values:
                if not isinstance(v, NDArray):
                    raise TypeError(f'{name}: autograd.Function {what} must be NDArrays, '
                                    f'got {type(v).__name__}')
        placed = []
        for out in outs:
            if out._entry is not None or any(out is x for x in list(inputs) + placed):
                out = NDArray(out._data, out._ctx)
            placed.append(out)
        op = OpDef('_CustomFunction', compute=None, gradient=self._gradient,
                   num_outputs=len(placed))
        record_op(op, Params(), list(inputs), placed, is_training())
        if single:
            return placed[0]
        return tuple(placed) if isinstance(outputs, tuple) else placed

    def _gradient(self, F, attrs, inputs, outputs, ograds):
        name = type(self).__name__
        ograds = [zeros_like(o) if g is None else g for g, o in zip(ograds, outputs)]
        rets = self.backward(*ograds)
        rets = [rets] if not isinstance(rets, (list, tuple)) else list(rets)
        if len(rets) != len(inputs):
            raise MXNetAssertionError(
                f'{name}.backward must return exactly the same number of NDArrays as the '
                f'number of NDArrays arguments to forward. Expecting {len(inputs)} got '
                f'{len(rets)}')
        for i, (ret, x) in enumerate(zip(rets, inputs)):
            if not isinstance(ret, type(x)):
                raise MXNetAssertionError(f'autograd.Function.backward must return NDArrays, '
                                          f'not {type(ret)} ({name}, gradient {i})')
            if ret.shape != x.shape:
                raise MXNetError(f'{name}.backward: gradient {i} has shape {ret.shape}, its '
                                 f'input has shape {x.shape}')
        return rets

    def forward(self, *inputs):
        """Forward computation."""
        raise NotImplementedError

    def backward(self, *output_grads):
        """Backward computation: as many inputs as forward's outputs, returns as many NDArrays
        as forward's inputs."""
        raise NotImplementedError
