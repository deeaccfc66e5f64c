"""The tape: recording scopes, recorded operator calls, and reverse-mode differentiation.

The tape is data, not closures: each recorded call is a ``TapeNode`` holding the operator, its
parsed attributes, its input arrays and its output buffers, so a recorded graph can be
inspected (``get_symbol``) and replayed. A recorded array points at its node through
``_entry = (node, output index)``; a variable (``attach_grad``) points at a ``Variable`` leaf.

``backprop`` is the one reverse-mode routine. It walks any graph whose nodes have ``op``,
``params``, ``inputs`` (entries) and ``is_train``, and calls each operator's registered
``gradient`` with an ``F`` namespace: with NDArrays it computes gradients (imperative
autograd); with Symbols it builds the backward graph (``symbol.py``, the CachedOp). Gradients
computed while recording (``create_graph=True``) are themselves on the tape, so higher-order
gradients come from the same rules.

Nothing here imports NDArray: ndarray.py records onto the tape, and ``autograd.py`` is the
public API over it.
"""
import contextlib
import threading
import weakref

from . import profiler
from .base import MXNetError

__all__ = ['record', 'pause', 'train_mode', 'predict_mode', 'is_recording', 'is_training',
           'set_recording', 'set_training', 'mark_variables', 'backprop', 'observe_backprop',
           'topo_order', 'TapeNode', 'Variable', 'record_op', 'backward', 'grad', 'grad_target',
           'zeros_like']


class _State(threading.local):
    recording = False
    training = False
    backprop_observer = None    # observe_backprop's function
    grad_targets = None         # backward's {id(Variable): .grad NDArray} (grad_target)


_state = _State()


def is_recording():
    """Whether operator calls are being recorded for differentiation."""
    return _state.recording


def is_training():
    """Whether operators run in training mode (Dropout drops, BatchNorm uses batch stats)."""
    return _state.training


def set_recording(is_recording):  # noqa: A002 - MXNet's parameter name
    """Set recording on or off; returns the previous value."""
    prev, _state.recording = _state.recording, bool(is_recording)
    return prev


def set_training(train_mode):  # noqa: A002
    """Set training mode on or off; returns the previous value."""
    prev, _state.training = _state.training, bool(train_mode)
    return prev


class _Scope:
    """Sets recording and/or training mode inside a ``with`` block (None leaves one alone)."""

    def __init__(self, recording, training):
        self._recording = recording
        self._training = training
        self._saved = []

    def __enter__(self):
        self._saved.append((_state.recording, _state.training))
        if self._recording is not None:
            _state.recording = self._recording
        if self._training is not None:
            _state.training = self._training
        return self

    def __exit__(self, *exc):
        _state.recording, _state.training = self._saved.pop()


def record(train_mode=True):  # noqa: F811 - MXNet's name for both
    """``with autograd.record():`` records operators for ``backward`` (training mode by default)."""
    return _Scope(True, train_mode)


def pause(train_mode=False):  # noqa: F811
    """``with autograd.pause():`` stops recording inside a ``record`` block."""
    return _Scope(False, train_mode)


def train_mode():
    """``with autograd.train_mode():`` runs operators in training mode without recording."""
    return _Scope(None, True)


def predict_mode():
    """``with autograd.predict_mode():`` runs operators in inference mode."""
    return _Scope(None, False)


# -------------------------------------------------------------------------------------------------
# The tape
# -------------------------------------------------------------------------------------------------

class Variable:
    """A leaf: an NDArray marked for gradients, with its gradient buffer and ``grad_req``."""
    __slots__ = ('array', 'grad_req', '__weakref__')
    op = None
    inputs = ()

    def __init__(self, array, grad_req):
        self.array = weakref.ref(array)
        self.grad_req = grad_req


class TapeNode:
    """One recorded operator call."""
    __slots__ = ('op', 'params', 'inputs', 'input_values', 'outputs', 'array_type', 'ctx',
                 'is_train', 'freed', '__weakref__')

    def __init__(self, op, params, inputs, outputs, is_train):
        self.op = op
        self.params = params
        self.inputs = [_live_entry(x) for x in inputs]
        self.input_values = list(inputs)
        self.outputs = [o._data for o in outputs]   # buffers, not NDArrays: no reference cycle
        self.array_type = type((outputs or inputs)[0])
        # an operator may write its inputs and return nothing (reset_arrays)
        self.ctx = (outputs or inputs)[0]._ctx
        self.is_train = is_train
        self.freed = False

    def __repr__(self):
        return f'<TapeNode {self.op.name}>'

    def mode(self, is_train):
        """The autograd mode its gradient takes: the recorded one unless ``is_train`` says."""
        return self.is_train if is_train is None else is_train

    def values(self):
        """(inputs, outputs) as NDArrays for the gradient; outputs stay on the graph."""
        outs = []
        for i, data in enumerate(self.outputs):
            out = self.array_type(data, self.ctx)
            out._entry = (self, i)
            outs.append(out)
        return self.input_values, outs

    def free(self):
        self.input_values = None
        self.outputs = None
        self.freed = True


def _live_entry(array):
    """``array``'s place on the tape, or None once a backward has freed its graph: as in MXNet
    1.x, the array is then a constant of whatever is recorded next (how a truncated-BPTT loop
    carries ``h = nd.tanh(w * h + 1)`` from one iteration to the next)."""
    entry = array._entry
    if entry is not None and getattr(entry[0], 'freed', False):
        array._entry = entry = None
    return entry


def record_op(op, params, inputs, outputs, is_train):
    """Put one operator call on the tape and point its outputs at it."""
    node = TapeNode(op, params, inputs, outputs, is_train)
    for i, out in enumerate(outputs):
        out._entry = (node, i)
    return node


def mark_variables(variables, gradients, grad_reqs='write'):
    """Mark NDArrays as variables whose gradients ``backward`` writes into ``gradients``."""
    if not isinstance(variables, (list, tuple)):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not len(variables) == len(gradients) == len(grad_reqs):
        raise MXNetError('mark_variables: variables, gradients and grad_reqs differ in length')
    for var, g, req in zip(variables, gradients, grad_reqs):
        if req not in ('write', 'add', 'null'):
            raise MXNetError(f"grad_req must be 'write', 'add' or 'null', got {req!r}")
        if g is not None and g.shape != var.shape:
            raise MXNetError(f'mark_variables: gradient shape {g.shape} differs from the '
                             f'variable shape {var.shape}')
        var._grad = g
        var._entry = (Variable(var, req), 0)


# -------------------------------------------------------------------------------------------------
# Reverse mode, shared by the tape and the Symbol graph
# -------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def observe_backprop(observer):
    """While active, ``backprop`` (not the ones it runs inside gradient rules) calls
    ``observer(node, ograds, igrads)`` for each node it reaches, in its order (igrads all None
    where no gradient reached the node): how an Executor's monitor learns which gradient each
    node gave which input."""
    prev, _state.backprop_observer = _state.backprop_observer, observer
    try:
        yield
    finally:
        _state.backprop_observer = prev


def topo_order(head_nodes):
    """Nodes reachable from ``head_nodes`` (through ``inputs``), inputs before their users."""
    order, seen = [], set()
    for head in head_nodes:
        if id(head) in seen:
            continue
        stack = [(head, iter(_input_nodes(head)))]
        seen.add(id(head))
        while stack:
            node, it = stack[-1]
            for child in it:
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, iter(_input_nodes(child))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def _input_nodes(node):
    if getattr(node, 'freed', False):
        raise MXNetError(
            f'the graph of {node.op.name} was freed by an earlier backward; pass '
            'retain_graph=True to the first backward to differentiate the same graph twice')
    return [e[0] for e in node.inputs if e is not None]


def backprop(heads, head_grads, F, node_values, order=None, keep=(), is_train=None):
    """Reverse-mode accumulation from ``heads`` (entries) with ``head_grads``.

    ``node_values(node)`` gives the (inputs, outputs) values the gradient of ``node`` needs.
    Returns ``{entry: gradient}`` for leaf entries (``op is None``) and for the entries in
    ``keep``; sums of several contributions use ``F.elemwise_add``. ``is_train`` overrides the
    nodes' own mode (a Symbol graph is differentiated for one mode).

    With ``keep``, only the nodes on a path to a kept entry are differentiated: an operator
    without a gradient (a random shuffle of the data) may then sit anywhere else, as in MXNet.
    """
    observer, _state.backprop_observer = _state.backprop_observer, None
    try:
        return _backprop(heads, head_grads, F, node_values, order, keep, is_train, observer)
    finally:
        _state.backprop_observer = observer


def _backprop(heads, head_grads, F, node_values, order, keep, is_train, observer):
    if order is None:
        order = topo_order([e[0] for e in heads])
    keep = set(keep)
    live = _leading_to({id(e[0]) for e in keep}, order) if keep else None
    grads = {}
    for entry, g in zip(heads, head_grads):
        _accumulate(grads, entry, g, F)
    result = {}
    for node in reversed(order):
        if node.op is None or live is not None and id(node) not in live:
            continue
        n_out = node.op.num_outputs(node.params)
        ograds = []
        for i in range(n_out):
            entry = (node, i)
            g = grads.pop(entry, None)
            if entry in keep and g is not None:
                result[entry] = g
            ograds.append(g)
        if all(g is None for g in ograds):
            if observer is not None:
                observer(node, ograds, [None] * len(node.inputs))
            continue
        inputs, outputs = node_values(node)
        if node.op.train_aware:
            mode = node.mode(is_train)
            igrads = node.op.gradient(F, node.params, inputs, outputs, ograds, is_train=mode)
        else:
            igrads = node.op.gradient(F, node.params, inputs, outputs, ograds)
        if len(igrads) != len(node.inputs):
            raise MXNetError(f'gradient of {node.op.name} returned {len(igrads)} values for '
                             f'{len(node.inputs)} inputs')
        if observer is not None:
            observer(node, ograds, igrads)
        for entry, g in zip(node.inputs, igrads):
            if entry is not None and g is not None:
                _accumulate(grads, entry, g, F)
    for entry, g in grads.items():
        if entry[0].op is None or entry in keep:
            result[entry] = g
    return result


def _leading_to(targets, order):
    """ids of the nodes of ``order`` (inputs first) from which a target node is reached."""
    live = set(targets)
    for node in order:
        if any(e is not None and id(e[0]) in live for e in node.inputs):
            live.add(id(node))
    return live


def _accumulate(grads, entry, g, F):
    prev = grads.get(entry)
    grads[entry] = g if prev is None else F.elemwise_add(prev, g)


# -------------------------------------------------------------------------------------------------
# Imperative backward and grad (autograd.py checks the arrays and passes ``F``)
# -------------------------------------------------------------------------------------------------

def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _head_entries(heads, head_grads):
    heads = _as_list(heads)
    for h in heads:
        if h._entry is None:
            raise MXNetError(
                f'cannot differentiate an array of shape {h.shape} that is not in a '
                'computational graph: compute it inside autograd.record() from arrays that '
                'have attach_grad()')
    if head_grads is None:
        head_grads = [None] * len(heads)
    head_grads = _as_list(head_grads)
    if len(head_grads) != len(heads):
        raise MXNetError(f'{len(heads)} heads but {len(head_grads)} head gradients')
    values = []
    for h, g in zip(heads, head_grads):
        if g is None:
            g = type(h)(h._ctx.array_module.ones_like(h._data), h._ctx)
        elif g.shape != h.shape:
            raise MXNetError(f'head gradient of shape {g.shape} for a head of shape {h.shape}')
        values.append(g)
    return heads, [h._entry for h in heads], values


def _run_backprop(entries, values, create_graph, train_mode, F, keep=(), order=None):
    if order is None:
        order = topo_order([e[0] for e in entries])
    scope = record(train_mode) if create_graph else pause(train_mode)
    with scope:
        grads = backprop(entries, values, F, lambda node: node.values(), order, keep)
    return order, grads


def zeros_like(array):
    """Zeros shaped like ``array``, of its type and context (a gradient nothing reached)."""
    return type(array)(array._ctx.array_module.zeros_like(array._data), array._ctx)


def backward(heads, head_grads, retain_graph, train_mode, F):
    """Compute the gradients of ``heads`` (arrays on the tape) and write them into the
    variables' ``.grad``; gradient rules run with the operator namespace ``F``.

    ``grad_req='write'`` overwrites, ``'add'`` accumulates, ``'null'`` skips. A variable that
    the heads depend on only through non-differentiable operators gets zeros.
    """
    heads, entries, values = _head_entries(heads, head_grads)
    order = topo_order([e[0] for e in entries])
    _state.grad_targets = _grad_targets(order, entries)
    try:
        order, grads = _run_backprop(entries, values, False, train_mode, F, order=order)
    finally:
        _state.grad_targets = None
    for node in order:
        if not isinstance(node, Variable) or node.grad_req == 'null':
            continue
        array = node.array()
        if array is None or array._grad is None or array._entry[0] is not node:
            continue
        g = grads.get((node, 0))
        buf = array._grad
        if profiler.active.imperative:      # the write into .grad is a copy worth timing
            profiler.timed_call('_copyto', buf._ctx, _write_grad, buf, g, node.grad_req)
        else:
            _write_grad(buf, g, node.grad_req)
        buf._fresh_grad = True
        array._fresh_grad = True
    if not retain_graph:
        for node in order:
            if isinstance(node, TapeNode):
                node.free()
        for h in heads:     # a head given twice is cleared once
            if h._entry is not None and isinstance(h._entry[0], TapeNode):
                h._entry = None


def _write_grad(buf, g, grad_req):
    """Write (``grad_req='write'``) or add (``'add'``) gradient ``g`` into ``buf``; None is a
    gradient that did not reach the variable (zeros). A gradient computed in ``buf`` itself
    (``grad_target``) is already there."""
    if grad_req == 'add':
        if g is not None:
            buf._data += g._data
    elif g is None:
        buf._data[...] = 0
    elif g._data is not buf._data:
        buf._data[...] = g._data


def _grad_targets(order, heads):
    """The ``.grad`` buffers a gradient may be computed in directly: those of the variables
    with ``grad_req='write'`` that one input of one node reads, so that node's gradient is the
    whole of theirs (no sum with another) and nothing else reads it."""
    uses = {}
    for node in order:
        for e in node.inputs:
            if e is not None and e[0].op is None:
                uses[id(e[0])] = uses.get(id(e[0]), 0) + 1
    for e in heads:
        uses[id(e[0])] = 2
    targets = {}
    for node in order:
        if isinstance(node, Variable) and node.grad_req == 'write' and uses.get(id(node)) == 1:
            array = node.array()
            if array is not None and array._grad is not None and array._entry is not None \
                    and array._entry[0] is node:
                targets[id(node)] = array._grad
    return targets


def grad_target(entry):
    """The ``.grad`` NDArray into which the gradient of ``entry`` (an input of the node being
    differentiated) may be written in place of a new array, or None. Set by ``backward`` for
    the variables that ``_grad_targets`` allows; a gradient written there must be returned
    as that array's data, which ``backward`` then does not copy."""
    targets = _state.grad_targets
    if not targets or entry is None or entry[1] != 0:
        return None
    return targets.get(id(entry[0]))


def grad(heads, variables, head_grads, retain_graph, create_graph, train_mode, F):
    """Gradients of ``heads`` with respect to ``variables`` (a list), returned instead of
    written. With ``create_graph=True`` the gradients are recorded, so they can be
    differentiated again."""
    for v in variables:
        if v._entry is None:
            raise MXNetError(f'grad: a variable of shape {v.shape} is not in a graph; call '
                             'attach_grad() on it before recording')
    if retain_graph is None:
        retain_graph = create_graph
    heads, entries, values = _head_entries(heads, head_grads)
    wanted = [v._entry for v in variables]
    order, grads = _run_backprop(entries, values, create_graph, train_mode, F, keep=wanted)
    out = [grads[e] if e in grads else zeros_like(v) for e, v in zip(wanted, variables)]
    if not retain_graph:
        for node in order:
            if isinstance(node, TapeNode):
                node.free()
    return out
