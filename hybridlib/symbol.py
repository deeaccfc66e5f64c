"""Symbol: a graph of operator calls, in MXNet's JSON format.

A graph is made of ``Node``s: a variable (``op is None``) or one call of a registered operator
with its parsed attributes and input entries ``(node, output index)``. A ``Symbol`` is a list
of such entries (its outputs). Calling a ``sym.*`` function adds a node; the operator functions
of this module are generated from the registry at the end of this file, the methods shared with
NDArray live in ``methods.py``, and execution (``eval``, ``bind``) lives in ``executor.py``.

Each node also carries *hints*: the shapes and dtypes its outputs are known to have, inferred
from its inputs when it is created. They make ``a + b`` broadcast as on NDArrays, let
``x.shape`` answer on a Symbol whose inputs have shapes, and report a shape error on the line
that composed the bad call. Graph-wide inference (``infer_shape``) does not depend on them.
"""
import builtins      # nd.slice, nd.sum, ... are module globals here: builtins.slice
import json
import math
import os
import sys
import threading
import warnings

import numpy as np

from . import attribute, name as _name, tape
from .base import (AttributeParseError, MXNetError, NotImplementedForSymbol, dtype_to_flag,
                   np_dtype)
from .executor import Executor, evaluate, simple_bind
from .graph import (Node, copy_graph, hidden_key, hint_dtype, hint_shape, hints_from, infer_graph,
                    topo_nodes)
from .methods import ArrayMethods, binary_functions
from .ops import frontend, registry
from .ops.attrs import format_value
from .ops.registry import known
from .serialization import atomic_write

__all__ = ['Symbol', 'Node', 'var', 'Variable', 'Group', 'load', 'load_json', 'fromjson',
           'invoke', 'traced_var', 'MXNET_VERSION']

MXNET_VERSION = 10901


class Symbol(ArrayMethods):
    """A symbolic value: one or more outputs of a graph (as ``mxnet.sym.Symbol``)."""
    __slots__ = ('_outputs', '__weakref__')
    _is_hybrid_value = True
    # numpy defers to our reflected operators: np.float32(2) * x is a Symbol
    __array_ufunc__ = None
    __array_priority__ = 1000.0

    def __init__(self, outputs):
        self._outputs = list(outputs)

    # -- naming and attributes --------------------------------------------------------------------
    @property
    def name(self):
        """The name of the node behind this symbol (None for a group of several nodes)."""
        nodes = {id(e[0]) for e in self._outputs}
        return self._outputs[0][0].name if len(nodes) == 1 else None

    def _head(self):
        if len({id(e[0]) for e in self._outputs}) != 1:
            raise MXNetError('this operation needs a symbol of one node, not a group')
        return self._outputs[0][0]

    def attr(self, key):
        """The string attribute ``key`` of this symbol's node, or None."""
        nodes = {id(e[0]) for e in self._outputs}
        if len(nodes) != 1:
            return None
        return self._outputs[0][0].listed_attrs().get(key)

    def list_attr(self, recursive=False):
        """Attributes of this symbol's node (of every node, keyed ``name$key``, if recursive)."""
        if recursive:
            return {f'{n.name}${k}': v for n in topo_nodes(self._outputs)
                    for k, v in n.listed_attrs().items()}
        return self._head().listed_attrs()

    def attr_dict(self):
        """``{node name: {key: value}}`` for every node that has attributes."""
        return {n.name: n.listed_attrs() for n in topo_nodes(self._outputs)
                if n.listed_attrs()}

    def _set_attr(self, **kwargs):
        node = self._head()
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError(f'attribute {key!r} must be a string, got {value!r}')
            if node.op is not None and key in node.op.attrs:
                node.attrs[key] = value
                node.params = node.op.parse_attrs(node.attrs)
            else:
                node.user_attrs[hidden_key(key)] = value

    # -- structure ---------------------------------------------------------------------------------
    def _nodes(self):
        return topo_nodes(self._outputs)

    def _aux_node_ids(self, nodes):
        return {id(e[0]) for n in nodes for e in n.aux_inputs()}

    def list_arguments(self):
        """Names of the variables that are not auxiliary states, in graph order."""
        nodes = self._nodes()
        aux = self._aux_node_ids(nodes)
        return [n.name for n in nodes if n.op is None and id(n) not in aux]

    def list_auxiliary_states(self):
        """Names of the variables that operators mutate (BatchNorm's running statistics)."""
        nodes = self._nodes()
        aux = self._aux_node_ids(nodes)
        return [n.name for n in nodes if n.op is None and id(n) in aux]

    def list_inputs(self):
        """Names of all variables, arguments and auxiliary states, in graph order."""
        return [n.name for n in self._nodes() if n.op is None]

    def list_outputs(self):
        """Output names: ``<node>_output`` for one output, ``<node>_output0``... for several."""
        return [node.output_name(i) for node, i in self._outputs]

    def get_internals(self):
        """A group of every visible output of every node (pick one with ``['name_output']``)."""
        return Symbol([(n, i) for n in self._nodes() for i in range(n.num_visible_outputs)])

    def get_children(self):
        """A group of the inputs of this symbol's node, or None for a variable."""
        node = self._head()
        return Symbol(node.inputs) if node.inputs else None

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([e]) for e in self._outputs)

    def __getitem__(self, index):
        """An output by name or position; on a single-output symbol, a slice as on NDArrays."""
        if isinstance(index, str):
            names = self.list_outputs()
            if index not in names:
                raise ValueError(f'there is no output named {index!r}; the outputs are '
                                 f'{", ".join(names)}')
            return Symbol([self._outputs[names.index(index)]])
        if len(self._outputs) > 1:
            if isinstance(index, builtins.slice):
                return Symbol(self._outputs[index])
            if isinstance(index, (int, np.integer)):
                if not -len(self) <= index < len(self):
                    raise IndexError(f'output {index} of a symbol with {len(self)} outputs')
                return Symbol([self._outputs[index]])
            raise TypeError(f'a symbol with {len(self)} outputs is indexed by an output name '
                            f'or position, not {index!r}')
        return self._index_with_ops(index, self._rank())

    # -- hints: what is known about this symbol's value --------------------------------------------
    def _single(self, what):
        if len(self._outputs) != 1:
            raise MXNetError(f'{what} of a group of {len(self._outputs)} outputs; pick one')
        return self._outputs[0]

    def _known_shape(self):
        if len(self._outputs) != 1:
            return None
        shape = hint_shape(self._outputs[0])
        return shape if known(shape) else None

    def _known_dtype(self):
        return hint_dtype(self._outputs[0]) if len(self._outputs) == 1 else None

    def _rank(self):
        shape = hint_shape(self._outputs[0]) if len(self._outputs) == 1 else None
        return None if shape is None else len(shape)

    @property
    def shape(self):
        """The output shape, when the inputs' shapes make it known (MXNet has no such thing)."""
        shape_reads.add()
        entry = self._single('shape')
        shape = hint_shape(entry)
        if not known(shape):
            raise MXNetError(
                f'the shape of symbol {entry[0].name!r} is not known here (partial: {shape}); '
                'give its variables a shape (var(..., shape=...)) or use infer_shape')
        return shape

    @property
    def dtype(self):
        entry = self._single('dtype')
        dtype = hint_dtype(entry)
        if dtype is None:
            raise MXNetError(f'the dtype of symbol {entry[0].name!r} is not known here')
        return dtype.type

    @property
    def context(self):
        """While a HybridBlock traces, the context it traces for (its traces are kept per
        context), so ``F.ones(n, ctx=x.context)`` hybridizes; MXNet has no such thing."""
        ctx = traced_context.current()
        if ctx is None:
            raise AttributeError("'Symbol' object has no attribute 'context' (a Symbol has a "
                                 'context only while a HybridBlock traces it)')
        return ctx

    @property
    def ndim(self):
        shape_reads.add()
        rank = self._rank()
        if rank is None:
            raise MXNetError(f'the rank of symbol {self.name!r} is not known here')
        return rank

    # -- hooks for methods.py -------------------------------------------------------------------
    def _apply(self, op_name, inputs, attrs, hint):
        op = registry.get(op_name)
        return invoke(op, inputs, op.parse_attrs(attrs), attrs, hint.lower())

    @classmethod
    def _function(cls, op_name):
        return getattr(_OPS, op_name)

    # -- composition -------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """A copy with its free variables replaced by the given symbols (see ``_compose``)."""
        out = self.__copy__()
        out._compose(*args, **kwargs)
        return out

    def _compose(self, *args, **kwargs):
        """Replace variables in place: positional symbols by ``list_arguments()`` order,
        keyword symbols by variable name. ``name=`` renames the head node."""
        new_name = kwargs.pop('name', None)
        if args and kwargs:
            raise TypeError('_compose takes positional or keyword symbols, not both')
        names = self.list_arguments()
        if len(args) > len(names):
            raise MXNetError(f'_compose: {len(args)} symbols for {len(names)} arguments')
        mapping = dict(zip(names, args)) if args else kwargs
        for key, value in mapping.items():
            if not isinstance(value, Symbol) or len(value) != 1:
                raise TypeError(f'_compose: {key} must be a single-output Symbol')
        unknown = set(mapping) - set(self.list_inputs())
        if unknown:
            raise MXNetError(f'_compose: {sorted(unknown)} are not inputs of this symbol; '
                             f'its inputs are {self.list_inputs()}')
        replace = {k: v._outputs[0] for k, v in mapping.items()}
        self._outputs = copy_graph(self._outputs, replace)
        if new_name:
            head = self._head()
            if head.op is not None:
                head.name = new_name

    def __copy__(self):
        return Symbol(copy_graph(self._outputs, {}))

    # what only a value has: a Symbol (hybrid_forward being traced) raises, as in MXNet,
    # rather than answer something the compiled graph would not compute (``if x > 0:``)
    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, 'bool')

    def _value_only(name):
        def method(self, *args, **kwargs):
            raise NotImplementedForSymbol(getattr(self, name), None)
        method.__name__ = name
        method.__doc__ = 'NDArray only: a Symbol raises NotImplementedForSymbol.'
        return method

    wait_to_read = _value_only('wait_to_read')
    asnumpy = _value_only('asnumpy')
    asscalar = _value_only('asscalar')
    copy = _value_only('copy')
    as_in_context = _value_only('as_in_context')
    detach = _value_only('detach')
    backward = _value_only('backward')
    del _value_only

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __repr__(self):
        if self.name is not None:
            return f'<Symbol {self.name}>'
        return f'<Symbol group [{", ".join(e[0].name for e in self._outputs)}]>'

    def __getstate__(self):
        return {'json': self.tojson()}

    def __setstate__(self, state):
        self._outputs = fromjson(state['json'])._outputs

    def debug_str(self):
        """The graph as MXNet prints it: the outputs, then every variable and operator in
        order, with each operator's inputs and attributes (``version=1`` marks a variable
        that an operator mutates, as BatchNorm its running statistics)."""
        nodes = self._nodes()
        mutated = {id(e[0]) for n in nodes for e in n.aux_inputs()}
        lines = ['Symbol Outputs:']
        lines += [f'\toutput[{i}]={n.name}({k})' for i, (n, k) in enumerate(self._outputs)]
        for node in nodes:
            if node.op is None:
                lines.append(f'Variable:{node.name}')
                continue
            lines += ['-' * 20, f'Op:{node.op.name}, Name={node.name}', 'Inputs:']
            for j, (src, k) in enumerate(node.inputs):
                version = f' version={int(id(src) in mutated)}' if src.op is None else ''
                lines.append(f'\targ[{j}]={src.name}({k}){version}')
            if node.attrs:
                lines.append('Attrs:')
                lines += [f'\t{key}={value}' for key, value in sorted(node.attrs.items())]
        return '\n'.join(lines) + '\n'

    # -- inference ---------------------------------------------------------------------------------
    def infer_shape(self, *args, **kwargs):
        """(argument shapes, output shapes, auxiliary shapes) from some input shapes.

        Returns (None, None, None) when the given shapes do not determine all of them (see
        ``infer_shape_partial``). An inconsistency raises ShapeError naming the node.
        """
        res = self._infer('shape', args, kwargs)
        if res is None:
            return None, None, None
        return res

    def infer_shape_partial(self, *args, **kwargs):
        """Like ``infer_shape``, but unknown shapes are ``()`` and unknown dims are 0."""
        return self._infer('shape', args, kwargs, partial=True)

    def infer_type(self, *args, **kwargs):
        """(argument dtypes, output dtypes, auxiliary dtypes) as numpy types."""
        res = self._infer('dtype', args, kwargs)
        if res is None:
            return None, None, None
        return res

    def infer_type_partial(self, *args, **kwargs):
        """Like ``infer_type``, with None where a dtype is unknown."""
        return self._infer('dtype', args, kwargs, partial=True)

    def _infer(self, kind, args, kwargs, partial=False):
        nodes = self._nodes()
        given = _name_inputs(self, args, kwargs, kind)
        values = infer_graph(nodes, kind, given)
        aux_ids = self._aux_node_ids(nodes)
        args_v = [values.get((n, 0)) for n in nodes if n.op is None and id(n) not in aux_ids]
        aux_v = [values.get((n, 0)) for n in nodes if n.op is None and id(n) in aux_ids]
        outs_v = [values.get(e) for e in self._outputs]
        everything = args_v + outs_v + aux_v
        complete = all(known(v) for v in everything) if kind == 'shape' else \
            all(v is not None for v in everything)
        if not complete and not partial:
            return None
        if kind == 'shape':
            def fmt(v):
                return () if v is None else tuple(v)
        else:
            def fmt(v):
                return None if v is None else v.type
        return [fmt(v) for v in args_v], [fmt(v) for v in outs_v], [fmt(v) for v in aux_v]

    # -- serialisation -----------------------------------------------------------------------------
    def tojson(self, remove_amp_cast=True):
        """The graph in MXNet's JSON format (byte-compatible with MXNet 1.9.1's writer).

        ``remove_amp_cast`` leaves out the ``amp_cast``/``amp_multicast`` nodes that
        ``contrib.amp`` adds, except those that are outputs, as MXNet does.
        """
        return _to_json(_without_amp_casts(self) if remove_amp_cast else self)

    def save(self, fname, remove_amp_cast=True):
        """Write ``tojson()`` to ``fname`` (atomically: a failed save keeps the old file)."""
        atomic_write(fname, self.tojson(remove_amp_cast).encode('utf-8'))

    # -- execution (executor.py) ---------------------------------------------------------------
    def eval(self, ctx=None, **kwargs):
        """Run the graph on NDArrays given by input name; returns a list of NDArrays."""
        return evaluate(self, kwargs, ctx)

    def bind(self, ctx, args, args_grad=None, grad_req='write', aux_states=None,
             group2ctx=None, shared_exec=None):
        """An Executor for these argument arrays (list in ``list_arguments()`` order, or dict)."""
        return Executor(self, ctx, args, args_grad, grad_req, aux_states)

    def simple_bind(self, ctx, grad_req='write', type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """An Executor with arrays allocated from input shapes given as keyword arguments."""
        return simple_bind(self, ctx, grad_req, type_dict, kwargs)

    def gradient(self, wrt):
        """A symbol of the gradients of this symbol's outputs with respect to ``wrt`` (names);
        the head gradients are extra inputs named ``<output>_head_grad``."""
        return Group(gradient_graph(self, wrt)[0])

    def _gradient_graph(self, wrt, **kwargs):
        # for the Executor, which does not import this module
        return gradient_graph(self, wrt, **kwargs)


def _name_inputs(symbol, args, kwargs, kind):
    """Map positional values (``list_arguments()`` order) and keyword values to input names."""
    arg_names = symbol.list_arguments()
    if len(args) > len(arg_names):
        raise MXNetError(f'infer_{kind}: {len(args)} positional values for {len(arg_names)} '
                         f'arguments {arg_names}')
    given = {n: v for n, v in zip(arg_names, args) if v is not None}
    inputs = set(symbol.list_inputs())
    for key, value in kwargs.items():
        if key not in inputs:
            raise MXNetError(f'infer_{kind}: {key!r} is not an input of this symbol; its inputs '
                             f'are {sorted(inputs)}')
        if value is not None:
            given[key] = value
    if kind == 'shape':
        return {k: (tuple(v) if not isinstance(v, int) else (v,)) for k, v in given.items()}
    return {k: np_dtype(v) for k, v in given.items()}


# -------------------------------------------------------------------------------------------------
# Creating symbols
# -------------------------------------------------------------------------------------------------

def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
        stype=None, **kwargs):
    """A variable: an input of the graph (data, a parameter or an auxiliary state)."""
    if not isinstance(name, str):
        raise TypeError(f'a variable name must be a string, got {name!r}')
    attrs = attribute.current().get(attr)
    for key, value in attrs.items():
        if not isinstance(value, str):       # as MXNet: only operators convert their attr
            raise ValueError(f'variable {name!r}: attribute {key!r} must be a string, got '
                             f'{value!r}')
    if shape is not None:
        attrs['__shape__'] = format_value(tuple(shape) if not isinstance(shape, int)
                                          else (shape,))
    if lr_mult is not None:
        attrs['__lr_mult__'] = str(lr_mult)
    if wd_mult is not None:
        attrs['__wd_mult__'] = str(wd_mult)
    if dtype is not None:
        attrs['__dtype__'] = str(dtype_to_flag(dtype))
    if init is not None:
        attrs['__init__'] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        attrs['__storage_type__'] = str({'default': 0, 'row_sparse': 1, 'csr': 2}[stype])
    for key, value in kwargs.items():
        if not (key.startswith('__') and key.endswith('__')):
            raise ValueError(f'attribute {key!r} is not supported: additional attributes must '
                             'start and end with double underscores, e.g. __yourattr__')
        attrs[key] = str(value)
    node = Node(None, name, user_attrs=attrs)
    node.infer_hints()
    return Symbol([(node, 0)])


Variable = var


def traced_var(name, shape, dtype):
    """A variable that knows the shape and dtype of the value being traced, as hints only:
    nothing is written into the graph's JSON, so the export matches MXNet's."""
    node = Node(None, name)
    node.shapes = [tuple(shape)]
    node.dtypes = [np_dtype(dtype)]
    return Symbol([(node, 0)])


class shape_reads:
    """Counts reads of ``Symbol.shape``/``ndim`` (a trace that reads shapes depends on them)."""
    _local = threading.local()

    @classmethod
    def count(cls):
        return getattr(cls._local, 'n', 0)

    @classmethod
    def add(cls):
        cls._local.n = cls.count() + 1


class traced_context:
    """``with traced_context(ctx, is_train):`` a HybridBlock traces for inputs on ``ctx`` in
    that autograd mode (its traces are kept per context and mode)."""
    _local = threading.local()

    def __init__(self, ctx, is_train):
        self._state = (ctx, is_train)

    @classmethod
    def current(cls):
        state = getattr(cls._local, 'state', None)
        return state[0] if state else None

    @classmethod
    def fixed_mode(cls):
        """The mode a ``train_mode()``/``predict_mode()`` scope inside the traced
        ``hybrid_forward`` sets, when it differs from the trace's; else None."""
        state = getattr(cls._local, 'state', None)
        if state is None or tape.is_training() == state[1]:
            return None
        return tape.is_training()

    def __enter__(self):
        self._old = getattr(self._local, 'state', None)
        self._local.state = self._state

    def __exit__(self, *exc):
        self._local.state = self._old


def full(shape, val, dtype=None, name=None, attr=None):
    """A symbol of ``shape`` filled with ``val`` (MXNet's signature for ``_full``)."""
    return _OPS._full(shape=shape, value=float(val), dtype=dtype or 'float32', name=name,
                      attr=attr)


def Group(symbols):
    """One symbol whose outputs are the outputs of ``symbols``, in order."""
    symbols = list(symbols)
    if not symbols or not all(isinstance(s, Symbol) for s in symbols):
        raise TypeError('Group takes a non-empty list of Symbols')
    return Symbol([e for s in symbols for e in s._outputs])


def _attr_string(value):
    """An operator's ``attr`` value as MXNet writes it: its ``str``, except that an
    initializer writes its JSON form (as ``var(init=...)`` does), which MXNet can read back."""
    if isinstance(value, str):
        return value
    dumps = getattr(value, 'dumps', None)
    return dumps() if callable(dumps) else str(value)


def invoke(op, inputs, params, given=None, hint=None, name=None, attr=None):
    """Add one call of ``op`` to the graph (the backend of every ``sym.*`` function)."""
    node_name = _name.current().get(name, hint or op.hint)
    attrs = op.format_attrs(given or {})
    user_attrs = {key: _attr_string(value) for key, value in attribute.current().get(attr).items()}
    entries = []
    input_names = op.list_inputs(params)
    inputs = list(inputs) + [None] * (len(input_names) - len(inputs))
    for in_name, x in zip(input_names, inputs):
        if x is None:
            # as MXNet, an input not given is a variable carrying the node's attributes
            # (so FullyConnected(..., lr_mult=0) also marks fc_weight with __lr_mult__)
            x = var(f'{node_name}_{in_name}', attr=dict(attrs, **user_attrs))
        elif not isinstance(x, Symbol):
            raise TypeError(f'operator {op.name} ({node_name}): input {in_name!r} must be a '
                            f'Symbol, got {type(x).__name__}')
        if len(x._outputs) != 1:
            raise MXNetError(f'operator {op.name} ({node_name}): input {in_name!r} is a group '
                             f'of {len(x._outputs)} outputs; pass one of them')
        entries.append(x._outputs[0])
        init = op.var_inits.get(in_name)
        source = x._outputs[0][0]
        if init is not None and source.op is None and '__init__' not in source.user_attrs:
            source.user_attrs['__init__'] = init
    node = Node(op, node_name, params, attrs, user_attrs, entries)
    if op.train_aware:
        node.fixed_mode = traced_context.fixed_mode()
    node.infer_hints()
    return Symbol([(node, i) for i in range(op.num_visible_outputs(params))])


# -------------------------------------------------------------------------------------------------
# The backward graph
# -------------------------------------------------------------------------------------------------

def gradient_graph(symbol, wrt, head_grads=None, is_train=True, shapes=None, dtypes=None):
    """Symbols of d(outputs)/d(wrt), built with the registered gradients.

    ``wrt`` names variables. ``head_grads`` are Symbols for the outputs' gradients (default:
    variables named ``<output>_head_grad``). ``shapes``/``dtypes`` map entries to inferred values
    that gradient functions may read as ``x.shape``. A variable that no gradient reaches gets
    ``zeros_like``. Returns (list of gradient Symbols, list of head-gradient Symbols).
    """
    nodes = topo_nodes(symbol._outputs)
    by_name = {n.name: n for n in nodes if n.op is None}
    missing = [w for w in wrt if w not in by_name]
    if missing:
        raise MXNetError(f'gradient: {missing} are not inputs of this symbol')
    if head_grads is None:
        # the head gradients have their outputs' shapes and dtypes, when those are known
        head_grads = [var(f'{name}_head_grad', shape=(shapes or {}).get(e),
                          dtype=(dtypes or {}).get(e))
                      for name, e in zip(symbol.list_outputs(), symbol._outputs)]
    wanted = [(by_name[w], 0) for w in wrt]

    def node_values(node):
        return ([Symbol([e]) for e in node.inputs],
                [Symbol([(node, i)]) for i in range(node.num_outputs)])

    with _name.NameManager(), hints_from(shapes, dtypes):
        grads = tape.backprop(symbol._outputs, head_grads, _OPS, node_values, nodes,
                                  keep=wanted, is_train=is_train)
        out = [grads.get(e) for e in wanted]
        out = [g if g is not None else _OPS.zeros_like(Symbol([e])) for g, e in zip(out, wanted)]
    return out, head_grads


# -------------------------------------------------------------------------------------------------
# MXNet's JSON format
# -------------------------------------------------------------------------------------------------

class _JSONWriter:
    """dmlc-core's JSONWriter layout: a multi-line scope puts each item on its own line; lists
    of more than 10 numbers and maps of more than 1 entry are multi-line."""

    def __init__(self):
        self.parts = []
        self.scopes = []       # [multi_line, items written]

    def _separator(self):
        if not self.scopes or self.scopes[-1][0]:
            self.parts.append('\n' + '  ' * len(self.scopes))

    def begin(self, bracket, multi_line=True):
        self.parts.append(bracket)
        self.scopes.append([multi_line, 0])

    def end(self, bracket):
        multi_line, count = self.scopes.pop()
        if multi_line and count:
            self._separator()
        self.parts.append(bracket)

    def key(self, key):
        scope = self.scopes[-1]
        if scope[1]:
            self.parts.append(', ')
        self._separator()
        self.parts.append(json.dumps(key) + ': ')
        scope[1] += 1

    def item(self):
        scope = self.scopes[-1]
        if scope[1]:
            self.parts.append(', ')
        scope[1] += 1
        self._separator()

    def string(self, text):
        self.parts.append('"' + text.replace('\\', '\\\\').replace('"', '\\"')
                          .replace('\n', '\\n').replace('\r', '\\r').replace('\t', '\\t') + '"')

    def number(self, value):
        self.parts.append(str(int(value)))

    def numbers(self, values):
        self.begin('[', len(values) > 10)
        for v in values:
            self.item()
            self.number(v)
        self.end(']')

    def entries(self, entries):
        self.begin('[', len(entries) > 10)
        for entry in entries:
            self.item()
            self.numbers(entry)
        self.end(']')

    def string_map(self, mapping):
        self.begin('{', len(mapping) > 1)
        for key in sorted(mapping):
            self.key(key)
            self.string(mapping[key])
        self.end('}')


_AMP_CASTS = ('amp_cast', 'amp_multicast')


def _without_amp_casts(symbol):
    """A copy of the graph whose operators read what the amp casts they read were cast from
    (MXNet's ``RemoveAmpCast``): unused casts drop out, the graph's outputs stay."""
    nodes = symbol._nodes()
    if not any(n.op is not None and n.op.name in _AMP_CASTS for n in nodes):
        return symbol
    copies = {}

    def source(entry):
        node, index = entry
        copy = copies[id(node)]
        if node.op is not None and node.op.name in _AMP_CASTS:
            return copy.inputs[index]       # output i of a cast is its input i
        return (copy, index)

    for n in nodes:
        copy = Node(n.op, n.name, n.params, n.attrs, n.user_attrs, [source(e) for e in n.inputs])
        copy.shapes, copy.dtypes, copy.fixed_mode = n.shapes, n.dtypes, n.fixed_mode
        copies[id(n)] = copy
    return Symbol([(copies[id(node)], index) for node, index in symbol._outputs])


def _to_json(symbol):
    nodes = symbol._nodes()
    fixed = [n.name for n in nodes if n.op is not None and n.fixed_mode is not None]
    if fixed:
        warnings.warn(f'nodes {fixed} run in a fixed autograd mode (a train_mode() or '
                      "predict_mode() scope in hybrid_forward); MXNet's JSON cannot say so, and "
                      "MXNet runs them in the call's mode", stacklevel=3)
    index = {id(n): i for i, n in enumerate(nodes)}
    w = _JSONWriter()
    w.begin('{')
    w.key('nodes')
    w.begin('[')
    row_ptr = [0]
    for n in nodes:
        aux = {id(e[0]) for e in n.aux_inputs()}
        w.item()
        w.begin('{')
        w.key('op')
        w.string(n.op.name if n.op else 'null')
        w.key('name')
        w.string(n.name)
        attrs = n.all_attrs()
        if attrs:
            w.key('attrs')
            w.string_map(attrs)
        w.key('inputs')
        w.entries([(index[id(e[0])], e[1], 1 if id(e[0]) in aux else 0) for e in n.inputs])
        w.end('}')
        row_ptr.append(row_ptr[-1] + n.num_outputs)
    w.end(']')
    w.key('arg_nodes')
    w.numbers([i for i, n in enumerate(nodes) if n.op is None])
    w.key('node_row_ptr')
    w.numbers(row_ptr)
    w.key('heads')
    w.entries([(index[id(e[0])], e[1], 0) for e in symbol._outputs])
    w.key('attrs')
    w.begin('{', False)
    w.key('mxnet_version')
    w.begin('[', False)
    w.item()
    w.string('int')
    w.item()
    w.number(MXNET_VERSION)
    w.end(']')
    w.end('}')
    w.end('}')
    return ''.join(w.parts)


def fromjson(json_str):
    """A Symbol from MXNet's JSON, any version (older files' ``param``/``attr`` keys, two-number
    entries and missing auxiliary inputs are upgraded as MXNet does)."""
    try:
        data = json.loads(json_str)
        raw_nodes, raw_heads = data['nodes'], data['heads']
    except (ValueError, KeyError, TypeError, RecursionError) as err:
        raise MXNetError(f'not a symbol JSON document ({type(err).__name__}: {err})') from None
    if not isinstance(raw_nodes, list) or not isinstance(raw_heads, list):
        raise MXNetError('not a symbol JSON document: "nodes" and "heads" must be lists')
    nodes = []
    for i, raw in enumerate(raw_nodes):
        name = raw.get('name') if isinstance(raw, dict) else None
        try:
            if not isinstance(raw, dict):
                raise TypeError(f'a node is an object, not {type(raw).__name__}')
            nodes.append(_node_from_json(raw, nodes))
        except MXNetError as err:
            raise type(err)(f'node {i} ({name!r}): {err}') from None
        except (KeyError, IndexError, TypeError, ValueError, OverflowError, MemoryError,
                RecursionError) as err:
            raise MXNetError(f'node {i} ({name!r}) of the symbol JSON is malformed '
                             f'({type(err).__name__}: {err})') from None
    if not raw_heads:
        raise MXNetError('the symbol JSON has no heads (outputs)')
    heads = [_entry(h, nodes, f'head {k}') for k, h in enumerate(raw_heads)]
    return Symbol(heads)


def _entry(raw, built, what):
    """A node entry ``[node id, output index(, version)]`` of the JSON: ids of earlier nodes
    only (the file is in topological order), indices of outputs the node has."""
    if not isinstance(raw, list) or len(raw) not in (2, 3) or \
            not all(type(v) is int for v in raw):
        raise MXNetError(f'{what}: an entry is [node id, output index(, version)] of '
                         f'integers, got {raw!r}'[:200])
    node_id, index = raw[0], raw[1]
    if not 0 <= node_id < len(built):
        raise MXNetError(f'{what}: node id {node_id} is not that of an earlier node '
                         f'(0 to {len(built) - 1})')
    node = built[node_id]
    if not 0 <= index < node.num_outputs:
        raise MXNetError(f'{what}: node {node.name!r} has {node.num_outputs} output(s), not '
                         f'an output {index}')
    return (node, index)


def _node_from_json(raw, built):
    op_name, node_name = raw['op'], raw['name']
    if not isinstance(op_name, str) or not isinstance(node_name, str):
        raise TypeError(f'"op" and "name" are strings, not {type(op_name).__name__} and '
                        f'{type(node_name).__name__}')
    attrs = {}
    for key in ('param', 'attr', 'attrs'):
        attrs.update(raw.get(key) or {})
    attrs = {hidden_key(k): str(v) for k, v in attrs.items()}
    if not isinstance(raw['inputs'], list):
        raise TypeError('"inputs" must be a list')
    inputs = [_entry(e, built, f'input {k}') for k, e in enumerate(raw['inputs'])]
    if op_name == 'null':
        node = Node(None, node_name, user_attrs=attrs)
        node.infer_hints()
        return node
    op = registry.find(op_name)
    if op is None:
        raise registry.unknown_op_error(op_name, where=f'node {node_name!r}: ')
    op_attrs = {k: v for k, v in attrs.items() if k in op.attrs or op.open_attrs
                and not (k.startswith('__') and k.endswith('__'))}
    user = {k: v for k, v in attrs.items() if k not in op_attrs}
    unknown = [k for k in user if not (k.startswith('__') and k.endswith('__'))]
    if unknown and op.attrs:        # operators without attributes keep any, as MXNet's
        raise AttributeParseError(f'operator {op_name} has no attribute(s) {unknown}; its '
                                  f'attributes are: {op.describe_attrs()}')
    params = op.parse_attrs(op_attrs)
    expected = op.list_inputs(params)
    if len(inputs) < len(expected):
        # files from MXNet < 0.9 leave out auxiliary states; MXNet adds them as variables
        for in_name in expected[len(inputs):]:
            aux = Node(None, f'{node_name}_{in_name}')
            aux.infer_hints()
            inputs.append((aux, 0))
    elif len(inputs) > len(expected):
        raise AttributeParseError(f'operator {op_name} takes {len(expected)} inputs '
                                  f'({", ".join(expected)}), the file gives {len(inputs)}')
    if not expected:
        _check_creation_size(op, params)
    node = Node(op, node_name, params, op_attrs, user, inputs)
    node.infer_hints()
    return node


def _check_creation_size(op, params):
    """An operator without inputs (``_zeros``, ``_random_uniform``, ...) whose attributes ask
    for more bytes than this machine's memory is refused before anything runs."""
    shapes = op.infer_shapes(params, [])[1]
    dtypes = op.infer_types(params, [])[1]
    size = builtins.sum(math.prod(s) * np.dtype(d).itemsize for s, d in zip(shapes, dtypes)
               if s is not None and d is not None and None not in s)
    memory = _physical_memory()
    if memory and size > memory:
        given = ', '.join(f'{k}={format_value(v)}' for k, v in params.items()
                          if k in ('shape', 'dtype'))
        raise AttributeParseError(f'operator {op.name}: attributes {given} ask for an output of '
                                  f'{_bytes(size)}, more than this machine\'s memory '
                                  f'({_bytes(memory)})')


def _physical_memory():
    try:
        return os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')
    except (AttributeError, ValueError, OSError):
        return None


def _bytes(n):
    for unit in ('bytes', 'KiB', 'MiB', 'GiB', 'TiB'):
        if n < 1024 or unit == 'TiB':
            return f'{n:.0f} {unit}' if unit == 'bytes' else f'{n:.1f} {unit}'
        n /= 1024


load_json = fromjson


def load(fname):
    """Load a ``-symbol.json`` file (from ``save``, ``export`` or MXNet)."""
    try:
        with open(fname, encoding='utf-8') as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as err:
        raise MXNetError(f'cannot read symbol file {fname!r}: {err}') from None
    try:
        return fromjson(text)
    except MXNetError as err:
        raise type(err)(f'{fname}: {err}') from None


def tape_to_symbol(array):
    """The graph recorded for ``array`` by autograd, as a Symbol."""
    if array._entry is None:
        raise MXNetError('get_symbol: the array was not computed under autograd.record()')
    order = tape.topo_order([array._entry[0]])
    made = {}
    counter = 0
    for n in order:
        if n.op is None:
            made[id(n)] = Node(None, f'var{counter}')
            counter += 1
            continue
        inputs = []
        for e, value in zip(n.inputs, n.input_values or ()):
            if e is None:
                const = Node(None, f'var{counter}', user_attrs={
                    '__shape__': format_value(value.shape)})
                counter += 1
                inputs.append((const, 0))
            else:
                inputs.append((made[id(e[0])], e[1]))
        made[id(n)] = Node(n.op, f'{n.op.hint}{counter}', n.params,
                           n.op.format_attrs(n.params), {}, inputs)
        counter += 1
    return Symbol([(made[id(array._entry[0])], array._entry[1])])


globals().update(binary_functions())
_SPACES = frontend.populate(sys.modules[__name__], invoke, extras=('name', 'attr'))
_OPS = _SPACES['op']
