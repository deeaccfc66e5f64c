"""Running a Symbol: the node-by-node interpreter and ``Executor`` (``Symbol.bind``).

``run_graph`` is the reference interpreter: it visits nodes in order and runs each operator
imperatively (so under ``autograd.record()`` the run is recorded like any NDArray code). An
Executor runs the Symbol's backward graph (``symbol.gradient_graph``, which it asks the Symbol
for) with the same interpreter, reusing the values its forward pass computed. This module works
on the graph (``graph.py``) and NDArrays; ``symbol.py`` imports it, not the other way round.

An Executor's monitor callback (``set_monitor_callback``, what ``mx.mon.Monitor`` installs)
sees what MXNet 1.9.1's would: each operator's outputs in the forward, hidden ones included,
and with ``monitor_all`` its inputs by MXNet's names; in the backward, the nodes of MXNet's
backward graph (``fc1_backward``, ``sum_grad``, ``_head_grad_0_id``, ...), in MXNet's order.
hybridlib's backward graph is made of other operators, so ``_backward_units`` rebuilds MXNet's
from the gradient each node gave each of its inputs (``tape.observe_backprop``) and the
operators' ``backward_node`` descriptions; the values are hybridlib's.
"""
import numpy as np

from . import ndarray as nd, tape
from .base import MXNetError, NotSupportedError
from .context import current_context
from .graph import has_unknown_shape, infer_graph, topo_nodes, with_inferred_shape
from .ndarray import NDArray, invoke_all
from .ops.registry import CLONE, ZEROS, BackwardNode

__all__ = ['run_graph', 'evaluate', 'Executor', 'simple_bind']


def run_graph(nodes, values, is_train=False, params=None):
    """Compute every entry of ``nodes`` missing from ``values`` ({entry: NDArray}), in order.

    ``params`` ({node: Params}) replaces some nodes' attributes (``resolve_shapes``).
    """
    params = params or {}
    for node in nodes:
        if node.op is None:
            if (node, 0) not in values:
                raise MXNetError(f'no value was given for the input {node.name!r}')
            continue
        if (node, 0) in values:
            continue
        ins = [values[e] for e in node.inputs]
        try:
            outs = invoke_all(node.op, ins, params.get(node, node.params),
                              is_train=node.mode(is_train))
        except MXNetError as err:
            raise type(err)(f'while running node {node.name!r}: {err}') from None
        for i, out in enumerate(outs):
            values[(node, i)] = out
    return values


def resolve_shapes(nodes, arrays):
    """``{node: Params}`` for the creation nodes of unknown dimensions
    (``graph.has_unknown_shape``), their shape inferred from the input arrays ({name: NDArray})
    over the whole graph."""
    unknown = [n for n in nodes if has_unknown_shape(n)]
    if not unknown:
        return {}
    shapes = infer_graph(nodes, 'shape', {name: a.shape for name, a in arrays.items()})
    return {node: with_inferred_shape(node, shapes.get((node, 0))) for node in unknown}


def _input_values(symbol, arrays, ctx=None):
    values = {}
    names = set()
    for node in topo_nodes(symbol._outputs):
        if node.op is None:
            names.add(node.name)
            if node.name in arrays:
                value = arrays[node.name]
                if not isinstance(value, NDArray):
                    raise TypeError(f'input {node.name!r} must be an NDArray, '
                                    f'got {type(value).__name__}')
                if ctx is not None:
                    value = value.as_in_context(ctx)
                values[(node, 0)] = value
    unknown = set(arrays) - names
    if unknown:
        raise MXNetError(f'{sorted(unknown)} are not inputs of this symbol; its inputs are '
                         f'{sorted(names)}')
    return values


def evaluate(symbol, arrays, ctx=None, is_train=None):
    """The outputs of ``symbol`` for input NDArrays given by name, as a list."""
    if is_train is None:
        is_train = tape.is_training()
    nodes = topo_nodes(symbol._outputs)
    values = run_graph(nodes, _input_values(symbol, arrays, ctx), is_train,
                       resolve_shapes(nodes, arrays))
    return [values[e] for e in symbol._outputs]


def _check_unique_names(names):
    """Arrays are bound by name here, so two different variables of one name given arrays by
    position would silently share one (MXNet gives each its own)."""
    seen, repeated = set(), []
    for name in names:
        if name in seen and name not in repeated:
            repeated.append(name)
        seen.add(name)
    if repeated:
        raise NotSupportedError(
            f'bind: the graph has several different variables named {repeated}; hybridlib binds '
            'arrays by name, so give each variable its own name (sym.var(\'data1\'), ...)')


def _as_dict(values, names, what):
    if values is None:
        return {}
    if isinstance(values, dict):
        unknown = set(values) - set(names)
        if unknown:
            raise MXNetError(f'bind: {what} {sorted(unknown)} are not among {names}')
        return dict(values)
    values = list(values)
    if len(values) != len(names):
        raise MXNetError(f'bind: {len(values)} {what} for {len(names)} names {names}')
    return dict(zip(names, values))


class Executor:
    """A Symbol bound to argument, gradient and auxiliary arrays (as ``mxnet.executor``)."""

    _monitor = None     # (callback, monitor_all) from set_monitor_callback

    def __init__(self, symbol, ctx, args, args_grad=None, grad_req='write', aux_states=None):
        self._symbol = symbol
        self._ctx = ctx or current_context()
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        if isinstance(args, (list, tuple)) or isinstance(aux_states, (list, tuple)):
            _check_unique_names(self._arg_names + self._aux_names)
        self.arg_dict = _as_dict(args, self._arg_names, 'arguments')
        missing = [n for n in self._arg_names if n not in self.arg_dict]
        if missing:
            raise MXNetError(f'bind: no arrays for arguments {missing}')
        self.aux_dict = _as_dict(aux_states, self._aux_names, 'auxiliary states')
        missing = [n for n in self._aux_names if n not in self.aux_dict]
        if missing:
            raise MXNetError(f'bind: no arrays for auxiliary states {missing}')
        self.grad_dict = _as_dict(args_grad, self._arg_names, 'gradients')
        if isinstance(grad_req, str):
            grad_req = {n: grad_req for n in self._arg_names}
        elif not isinstance(grad_req, dict):
            grad_req = dict(zip(self._arg_names, grad_req))
        self._grad_req = {n: (grad_req.get(n, 'null') if n in self.grad_dict else 'null')
                          for n in self._arg_names}
        self.outputs = []
        self._values = None
        self._backward = None
        self._aux_before = {}   # aux inputs as a monitored forward found them (see backward)
        self._resolved = None   # (input shapes, resolve_shapes for them)

    @property
    def arg_arrays(self):
        return [self.arg_dict[n] for n in self._arg_names]

    @property
    def grad_arrays(self):
        return [self.grad_dict.get(n) for n in self._arg_names]

    @property
    def aux_arrays(self):
        return [self.aux_dict[n] for n in self._aux_names]

    @property
    def output_dict(self):
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    def forward(self, is_train=False, **kwargs):
        """Run the graph; keyword NDArrays are copied into the bound arguments first."""
        for key, value in kwargs.items():
            if key not in self.arg_dict:
                raise MXNetError(f'forward: {key!r} is not an argument ({self._arg_names})')
            self.arg_dict[key][:] = value
        arrays = dict(self.arg_dict)
        arrays.update(self.aux_dict)
        values = _input_values(self._symbol, arrays)
        nodes = topo_nodes(self._symbol._outputs)
        key = {name: a.shape for name, a in arrays.items()}
        if self._resolved is None or self._resolved[0] != key:
            self._resolved = (key, resolve_shapes(nodes, arrays))
        params = self._resolved[1]
        if self._monitor is None:
            self._values = run_graph(nodes, values, is_train, params)
            self._aux_before = {}
        else:
            self._values = self._run_monitored(nodes, values, is_train, params)
        self.outputs = [self._values[e] for e in self._symbol._outputs]
        return self.outputs

    def set_monitor_callback(self, callback, monitor_all=False):
        """Install ``callback(name, array)``, called for what each operator computes.

        ``name`` is bytes, as MXNet's C callback gives it (``base.py_str`` reads it), such as
        ``b'fc1_output'``; ``array`` is the NDArray itself (MXNet gives a handle). ``forward``
        reports each operator's outputs, hidden ones included (``b'bn1_mean'``); with
        ``monitor_all`` also its inputs, before it runs: a variable input by its own name and
        then by ``NODE_INPUTNAME`` (``b'fc1_weight'``; ``b'relu1_input0'`` for an operator
        that MXNet does not name the inputs of). ``backward`` reports the nodes of MXNet's
        backward graph the same way (``b'fc1_backward_output0'``, the gradient of fc1's
        input 0; ``b'sum_grad_output'``, a sum of gradients), in MXNet's order.
        ``mx.mon.Monitor`` installs itself through this; ``callback=None`` removes the
        callback.
        """
        self._monitor = None if callback is None else (callback, bool(monitor_all))

    def _run_monitored(self, nodes, values, is_train, params):
        """``run_graph`` one node at a time, reporting around each operator as MXNet does."""
        callback, monitor_all = self._monitor
        self._aux_before = {}
        for node in nodes:
            for entry in node.aux_inputs():
                # MXNet's BatchNorm updates its moving statistics in the backward, so its
                # backward node reads them as they were before the step
                array = values[entry]
                self._aux_before[entry] = NDArray(array._data.copy(), array._ctx)
            if node.op is not None and monitor_all:
                names = node.op.graph_input_names(node.params)
                for i, entry in enumerate(node.inputs):
                    if entry[0].op is None:
                        callback(entry[0].name.encode('utf-8'), values[entry])
                    suffix = names[i] if i < len(names) else f'input{i}'
                    callback(f'{node.name}_{suffix}'.encode('utf-8'), values[entry])
            run_graph([node], values, is_train, params)
            if node.op is not None:
                for i in range(node.num_outputs):
                    callback(node.output_name(i).encode('utf-8'), values[(node, i)])
        return values

    def backward(self, out_grads=None, is_train=True):
        """Gradients for the last forward, written into the bound gradient arrays."""
        if self._values is None:
            raise MXNetError('backward before forward')
        wrt = [n for n in self._arg_names if self._grad_req[n] != 'null']
        if not wrt:
            return
        monitored = self._monitor is not None
        if self._backward is None or self._backward[3] != is_train or \
                monitored and self._backward[4] is None:
            self._backward = self._backward_graph(wrt, is_train, monitored)
        grads, heads, nodes, _, monitor_plan = self._backward
        if out_grads is None:
            out_grads = [None] * len(self.outputs)
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        elif isinstance(out_grads, dict):
            out_grads = [out_grads[k] for k in self._symbol.list_outputs()]
        values = dict(self._values)
        for head, g, out in zip(heads, out_grads, self.outputs):
            if g is None:
                g = NDArray(out._ctx.array_module.ones_like(out._data), out._ctx)
            values[head._outputs[0]] = g
        if monitored:
            nodes, units = monitor_plan
            run_graph(nodes, values, is_train)
            _report_backward(units, {**values, **self._aux_before}, *self._monitor)
        else:
            run_graph(nodes, values, is_train)
        for name, g in zip(wrt, grads):
            result = values[g._outputs[0]]
            buf = self.grad_dict[name]
            if self._grad_req[name] == 'add':
                buf._data += result._data
            else:
                buf._data[...] = result._data

    def _backward_graph(self, wrt, is_train, monitored):
        """What ``backward`` runs: (gradient Symbols, head-gradient Symbols, the nodes that
        compute them, ``is_train``, and when ``monitored`` a monitor plan: (the nodes that
        also compute every gradient MXNet's monitor reports, MXNet's backward units in its
        order); None otherwise, so that a backward without a monitor costs nothing more)."""
        shapes = {e: v.shape for e, v in self._values.items()}
        dtypes = {e: v._data.dtype for e, v in self._values.items()}
        records = []
        observer = (lambda *record: records.append(record)) if monitored else None
        with tape.observe_backprop(observer):
            grads, heads = self._symbol._gradient_graph(wrt, is_train=is_train,
                                                        shapes=shapes, dtypes=dtypes)
        entries = [g._outputs[0] for g in grads]
        plan = None
        if monitored:
            variables = {n.name: n for n in topo_nodes(self._symbol._outputs) if n.op is None}
            units = _backward_units(self._symbol._outputs, [h._outputs[0] for h in heads],
                                    records, [(variables[name], 0) for name in wrt])
            # every gradient a unit reports, also of inputs that need none (MXNet computes
            # them, unlike hybridlib's backward graph)
            reported = [g._outputs[0] for _, _, igrads in records for g in igrads
                        if g is not None]
            plan = (topo_nodes(entries + reported), units)
        return grads, heads, topo_nodes(entries), is_train, plan

    def debug_str(self):
        """The bound graph (``Symbol.debug_str``) and the memory of the bound arrays."""
        arrays = list(self.arg_dict.values()) + list(self.aux_dict.values()) + [
            g for g in self.grad_dict.values() if g is not None] + list(self.outputs)
        total = sum(a.size * np.dtype(a.dtype).itemsize for a in arrays)
        return self._symbol.debug_str() + f'Total {total >> 20} MB allocated\n'

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy parameter values into the bound arrays."""
        for target, source in ((self.arg_dict, arg_params), (self.aux_dict, aux_params or {})):
            for key, value in source.items():
                if key in target:
                    target[key][:] = value
                elif not allow_extra_params:
                    raise MXNetError(f'copy_params_from: {key!r} is not bound')


# -------------------------------------------------------------------------------------------------
# MXNet's backward graph, as its monitor reports it
# -------------------------------------------------------------------------------------------------

class _Unit:
    """One node of MXNet's backward graph: its ``name``; ``inputs`` [(name, value, variable
    name or None)]; ``outputs`` [(name, value)]; ``after``: the units whose outputs it reads;
    ``zero``: a ``zeros_like`` node (a sum leaves it out). A value is a function of the
    executor's values ({entry: NDArray})."""
    __slots__ = ('name', 'inputs', 'outputs', 'after', 'zero')

    def __init__(self, name, inputs, outputs, after=(), zero=False):
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.after = list(after)
        self.zero = zero

    def value(self, index):
        return self.outputs[index][1]


def _at(entry):
    return lambda values: values[entry]


def _zeros_like(entry):
    def zeros(values):
        like = values[entry]
        return NDArray(like._ctx.array_module.zeros_like(like._data), like._ctx)
    return zeros


def _sum_of(parts):
    def total(values):
        arrays = [part(values) for part in parts]
        data = arrays[0]._data.copy()
        for array in arrays[1:]:
            data += array._data
        return NDArray(data, arrays[0]._ctx)
    return total


def _variable_name(entry):
    return entry[0].name if entry[0].op is None else None


def _head_unit(index, output, head):
    """MXNet's ``_head_grad_<i>_id``: the head gradient (a variable), shaped like output i."""
    name = f'_head_grad_{index}'
    return _Unit(f'{name}_id', [('lhs', _at(head), name),
                                ('rhs', _at(output), _variable_name(output))],
                 [('output', _at(head))])


def _node_units(node, spec, sources, igrads):
    """MXNet's backward of ``node`` as [(unit, input index)]: which unit output gives the
    gradient of which input. ``spec``: the operator's ``backward_node``; ``sources``: the
    (unit, index) of each output's gradient, None where none reaches it; ``igrads``: the
    gradient Symbols hybridlib's backward made of each input (None: no gradient)."""
    op, params = node.op, node.params
    if spec == ZEROS:
        single = len(node.inputs) == 1
        return [(_Unit(f'{node.name}_backward' if single else f'{node.name}_in{i}_backward',
                       [('input0', _at(entry), _variable_name(entry))],
                       [('output', _zeros_like(entry))], zero=True), i)
                for i, entry in enumerate(node.inputs)]
    grads = op.backward_grads(params, spec)
    outputs = []
    for name, i in zip(op.backward_output_names(params, spec), grads):
        grad = igrads[i]
        outputs.append((name, _at(grad._outputs[0]) if grad is not None
                        else _zeros_like(node.inputs[i])))
    inputs, after = [], []
    if isinstance(spec, BackwardNode) and spec.inputs is not None:
        for name, (kind, k) in zip(spec.input_names, spec.inputs):
            if kind == 'ograd':
                unit, index = sources[k] or (_zeros_unit(node, k), 0)
                after.append(unit)
                inputs.append((name, unit.value(index), None))
            elif kind == 'in':
                inputs.append((name, _at(node.inputs[k]), _variable_name(node.inputs[k])))
            else:
                inputs.append((name, _at((node, k)), None))
    else:
        after = [s[0] for s in sources[:node.num_visible_outputs] if s is not None]
    unit = _Unit(f'{node.name}_backward', inputs, outputs, after)
    return [(unit, i) for i in grads[:len(outputs)]]


def _zeros_unit(node, index):
    """MXNet's ``zeros_without_dtype``: the gradient of an output that none reaches."""
    return _Unit('zeros_without_dtype', [], [('output', _zeros_like((node, index)))])


def _aggregate(sources):
    """The (unit, index) of the sum of gradient contributions ``sources``, as nnvm's
    AggregateGradient: zeros_like contributions left out (the first kept if all are), one
    itself, several summed by a ``sum_grad`` (ElementWiseSum), None for none. (MXNet sums 8
    or more with a chain of ``_grad_add`` nodes instead; hybridlib reports one sum_grad.)"""
    nonzero = [source for source in sources if not source[0].zero]
    sources = nonzero or sources[:1]
    if len(sources) < 2:
        return sources[0] if sources else None
    inputs = [(f'arg{i}', unit.value(index), None) for i, (unit, index) in enumerate(sources)]
    unit = _Unit('sum_grad', inputs, [('output', _sum_of([v for _, v, _ in inputs]))],
                 [unit for unit, _ in sources])
    return unit, 0


def _backward_units(outputs, heads, records, wanted):
    """The units of MXNet's backward graph that its executor runs, in its order.

    ``outputs``: the Symbol's output entries; ``heads``: their head-gradient entries;
    ``records``: (node, output gradients, input gradients) per node that backprop
    differentiated, in its order (outputs first: nnvm's gradient pass visits the nodes in the
    same order); ``wanted``: the variable entries to differentiate, in argument order. As
    nnvm, each entry gets its gradient contributions in that order (a head's own first) and
    sums them; MXNet runs the nodes reached from the wanted gradients, each after what it
    reads (depth first), and copies a gradient that a second variable gets too.
    """
    contributions = {}
    for k, (output, head) in enumerate(zip(outputs, heads)):
        contributions.setdefault(output, []).append((_head_unit(k, output, head), 0))
    for node, _, igrads in records:
        sources = [_aggregate(contributions.pop((node, i), []))
                   for i in range(node.num_outputs)]
        spec = node.op.backward_node(node.params)
        if spec == CLONE:
            if sources[0] is not None:
                for entry in node.inputs:
                    contributions.setdefault(entry, []).append(sources[0])
            continue
        for output, (unit, i) in enumerate(_node_units(node, spec, sources, igrads)):
            index = 0 if unit.zero else output
            contributions.setdefault(node.inputs[i], []).append((unit, index))
    order, seen, copies = [], set(), {}
    for entry in wanted:
        source = _aggregate(contributions.get(entry, []))
        if source is None:
            continue
        key = (id(source[0]), source[1])
        if key in copies:
            copies[key] += 1
            unit, index = source
            source = (_Unit(f'{unit.name}_{copies[key]}_copy',
                            [('input0', unit.value(index), None)],
                            [('output', unit.value(index))], [unit]), 0)
        else:
            copies[key] = 0
        _visit(source[0], seen, order)
    return order


def _visit(unit, seen, order):
    """Depth-first, each unit after the units it reads (nnvm's DFS order)."""
    if id(unit) in seen:
        return
    seen.add(id(unit))
    for before in unit.after:
        _visit(before, seen, order)
    order.append(unit)


def _report_backward(units, values, callback, monitor_all):
    for unit in units:
        if monitor_all:
            for name, value, variable in unit.inputs:
                array = value(values)
                if variable is not None:
                    callback(variable.encode('utf-8'), array)
                callback(f'{unit.name}_{name}'.encode('utf-8'), array)
        for name, value in unit.outputs:
            callback(f'{unit.name}_{name}'.encode('utf-8'), value(values))


def simple_bind(symbol, ctx, grad_req='write', type_dict=None, shapes=None):
    """Allocate zero arrays from input shapes (and dtypes) and bind them."""
    ctx = ctx or current_context()
    arg_shapes, _, aux_shapes = symbol.infer_shape(**(shapes or {}))
    if arg_shapes is None:
        partial = symbol.infer_shape_partial(**(shapes or {}))
        raise MXNetError(f'simple_bind: the given shapes do not determine all shapes '
                         f'(arguments {dict(zip(symbol.list_arguments(), partial[0]))})')
    arg_types, _, aux_types = symbol.infer_type(**(type_dict or {}))
    if arg_types is None:
        arg_types = ['float32'] * len(arg_shapes)
        aux_types = ['float32'] * len(aux_shapes)
    args = [nd.zeros(s, ctx=ctx, dtype=t) for s, t in zip(arg_shapes, arg_types)]
    aux = [nd.zeros(s, ctx=ctx, dtype=t) for s, t in zip(aux_shapes, aux_types)]
    grads = None
    if grad_req != 'null':
        grads = [nd.zeros(s, ctx=ctx, dtype=t) for s, t in zip(arg_shapes, arg_types)]
    return Executor(symbol, ctx, args, grads, grad_req, aux)
