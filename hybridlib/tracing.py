"""Tracing a HybridBlock and caching its traces.

A trace is the Symbol graph that ``hybrid_forward`` gives with Symbols for its inputs, with the
CachedOp that runs it; a block keeps its traces by everything that can change the graph
(``HybridBlock._get_trace``), at most ``MAX_TRACES`` of them. While tracing, ``_Traced`` keeps
the stack of blocks being traced, so that an error names the block by its path and the user's
``hybrid_forward`` line.
"""
import itertools
import os
import threading
import traceback

from collections import namedtuple

import numpy as np

from . import autograd
from . import parameter as parameter_module
from .cached_op import signature
from .graph import topo_nodes
from .ndarray import NDArray
from .nested import flatten_nested, regroup_nested as _regroup
from .ops import frontend as _frontend

__all__ = ['MAX_TRACES']

# traces (with their CachedOps) kept per HybridBlock, the least recently used dropped first; the
# marker that a signature's traces are keyed by input shapes counts as one
MAX_TRACES = 64


def _flatten(args, inout_str):
    """(flat list of NDArrays/Symbols/None, format to rebuild the nesting), as MXNet's."""
    return flatten_nested(args, lambda bad: ValueError(
        f'When hybridized, the {inout_str} of HybridBlock must be (nested) list of Symbol or '
        f'NDArray, but got {bad} of type {type(bad)}'), allow_none=True)


def _freeze(fmt):
    return tuple(_freeze(f) for f in fmt) if isinstance(fmt, list) else fmt


# a parameter's shape and dtype, as a trace key holds them
ParamSpec = namedtuple('ParamSpec', ['shape', 'dtype'])


def param_specs(params):
    """The ``ParamSpec`` of each Parameter of ``params`` (a ParameterDict), in order."""
    return tuple([ParamSpec(tuple(p.shape or ()), np.dtype(p.dtype)) for p in params.values()])


def trace_key(flat, fmt, specs):
    """The key a HybridBlock keeps a trace by: the argument structure and its None pattern,
    AMP's input rule, and ``cached_op.signature`` over the inputs (without their shapes: a
    trace that reads them is kept under them too) and the parameters ``specs``."""
    arrays = [a._data for a in flat if a is not None]
    shaped = [False] * len(arrays) + [True] * len(specs)
    return (_freeze(fmt), tuple([a is None for a in flat]), _frontend.input_rule,
            signature(arrays + list(specs), flat_ctx(flat), autograd.is_training(), shaped))


def flat_ctx(flat):
    return next(a for a in flat if a is not None)._ctx


_tracing = threading.local()
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class _Traced:
    """``with _Traced(block):`` marks ``block`` as being traced (for error messages).

    An error is noted with the path of the innermost traced block when it leaves that block,
    and with the user's line when it leaves the outermost one: only then does its traceback
    hold every ``hybrid_forward`` frame.
    """

    def __init__(self, block):
        self._block = block

    def __enter__(self):
        stack = getattr(_tracing, 'stack', None)
        if stack is None:
            stack = _tracing.stack = []
        stack.append(self._block)
        return self

    def __exit__(self, exc_type, exc, tb):
        stack = _tracing.stack
        if exc is not None:
            try:
                if not hasattr(exc, '_hybridlib_blocks'):
                    exc._hybridlib_blocks = list(stack)
                if len(stack) == 1 and not getattr(exc, '_hybridlib_noted', False):
                    exc._hybridlib_noted = True
                    _annotate(exc)
            except AttributeError:      # an exception type that takes no attributes
                pass
        stack.pop()


def _block_path(stack):
    """``root.child.grandchild``: the traced blocks by their registered names."""
    path = [stack[0].name or type(stack[0]).__name__.lower()]
    for parent, child in zip(stack, stack[1:]):
        key = next((k for k, v in parent._children.items() if v is child), child.name)
        path.append(key)
    return '.'.join(path)


def _annotate(exc):
    """Add the traced block's path and the user's hybrid_forward line to an error."""
    blocks = exc._hybridlib_blocks
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.name == 'hybrid_forward']
    users = [f for f in frames if not f.filename.startswith(_PACKAGE_DIR)]
    frame = (users or frames or [None])[-1]
    note = f'while tracing block {_block_path(blocks)} ({type(blocks[-1]).__name__})'
    if frame is not None:
        note += f': {frame.filename}:{frame.lineno}: {frame.line}'
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (f'{exc.args[0]}\n  {note}',) + exc.args[1:]
    else:
        exc.args = exc.args + (note,)


class _Trace:
    """One traced graph and its CachedOp, with how to feed it.

    ``feed`` says, per CachedOp input, where its array comes from: ('data', index into the
    flat arguments) or ('param', Parameter). ``signature`` is what a call of plain NDArray
    arguments must match to reuse this trace without the general lookup, and ``bound`` keeps
    the parameters' arrays between calls while no Parameter's arrays are replaced. ``used``
    orders the traces by their last lookup, for dropping the least recently used.
    """
    __slots__ = ('inputs', 'output', 'out_format', 'shape_dependent', 'cached_op', 'feed',
                 'signature', 'bound', 'used')

    def __init__(self, inputs, output, out_format, shape_dependent):
        self.inputs = inputs
        self.output = output
        self.out_format = out_format
        self.shape_dependent = shape_dependent
        self.cached_op = None
        self.feed = None
        self.signature = None
        self.bound = None
        self.used = 0

    def remember_call(self, args):
        """Let later calls with arguments like ``args`` (plain NDArrays) take ``matches``."""
        if all(type(a) is NDArray for a in args):
            shapes = tuple(a.shape for a in args) if self.shape_dependent else None
            self.signature = (tuple(a._data.dtype for a in args), args[0]._ctx,
                              autograd.is_training(), _frontend.input_rule, shapes,
                              parameter_module._generation)

    def matches(self, args):
        """Whether plain NDArray ``args`` would get this trace from the general lookup: the
        parts of ``trace_key`` that can change between calls, checked without building it
        (the parameters' shapes and dtypes cannot change while no Parameter's arrays are
        replaced)."""
        if self.signature is None:
            return False
        dtypes, ctx, training, rule, shapes, generation = self.signature
        if len(args) != len(dtypes) or autograd.is_training() != training or \
                _frontend.input_rule is not rule or generation != parameter_module._generation:
            return False
        for a, dtype in zip(args, dtypes):
            if type(a) is not NDArray or a._data.dtype != dtype or \
                    a._ctx is not ctx and a._ctx != ctx:
                return False
        return shapes is None or shapes == tuple(a._data.shape for a in args)

    def arrays(self, flat, ctx):
        """The CachedOp's inputs: the flat arguments and the parameters' arrays on ``ctx``."""
        bound = self.bound
        if bound is None or bound[0] != parameter_module._generation or \
                bound[1] is not ctx and bound[1] != ctx:
            arrays = [None if kind == 'data' else item.data(ctx) for kind, item in self.feed]
            slots = [(pos, item) for pos, (kind, item) in enumerate(self.feed) if kind == 'data']
            bound = self.bound = (parameter_module._generation, ctx, arrays, slots)
        arrays = list(bound[2])
        for pos, index in bound[3]:
            arrays[pos] = flat[index]
        return arrays

    def run(self, flat, ctx):
        return self.result(self.cached_op.run(self.arrays(flat, ctx), ctx))

    def result(self, outs):
        """The CachedOp's outputs in the nesting ``hybrid_forward`` returned."""
        if self.out_format == 0:
            return outs[0]
        return _regroup(outs, self.out_format)[0]

    def release(self):
        """Forget the compiled plans, and their source kept in ``linecache``."""
        if self.cached_op is not None:
            self.cached_op.release()


def _graph_form(graph):
    """A graph without its generated names: per node in order, the operator, its attributes
    and where its inputs come from (what a second trace must reproduce)."""
    nodes = topo_nodes(graph._outputs)
    index = {id(n): i for i, n in enumerate(nodes)}
    form = [(n.name if n.op is None else n.op.name, None if n.op is None else repr(n.params),
             tuple((index[id(e[0])], e[1]) for e in n.inputs)) for n in nodes]
    return form, [(index[id(e[0])], e[1]) for e in graph._outputs]


# Under a signature without shapes, in place of a trace: the traces of that signature read input
# shapes, so each is kept under (signature, input shapes).
_SHAPE_KEYED = 'traces keyed by input shapes'
_uses = itertools.count(1)      # ticks for _Trace.used
# Held while a trace cache changes, and while tracing, which is not safe from several threads at
# once (the shape-read counter, the naming scopes); a lookup that finds its trace needs no lock.
_traces_lock = threading.RLock()


def _cached_trace(traces, base, arrays):
    """The trace kept for signature ``base`` (and the shapes of ``arrays`` if it reads them)."""
    trace = traces.get(base)
    if trace is _SHAPE_KEYED:
        trace = traces.get((base, tuple(a.shape for a in arrays)))
    return trace


def _release_traces(traces):
    """Release every trace of a trace cache that is being dropped."""
    for value in traces.values():
        if isinstance(value, _Trace):
            value.release()
        elif isinstance(value, dict):       # a subclass's cache per variant (rnn layers)
            _release_traces(value)
