"""Block, HybridBlock and SymbolBlock: Gluon's model containers.

A ``Block`` owns parameters and child blocks (registered by attribute assignment) under a name
prefix, and computes in ``forward``. A ``HybridBlock`` computes in
``hybrid_forward(F, x, ..., **params)``: with ``F = hybridlib.ndarray`` it runs imperatively;
after ``hybridize()`` it is traced with ``F = hybridlib.symbol`` into a graph that a ``CachedOp``
compiles and runs. A ``SymbolBlock`` wraps an existing graph (``imports`` loads a model exported
by MXNet or by hybridlib).

Traces are cached by everything that can change the graph: the nesting of the inputs and its
``None`` pattern, dtypes, context, training mode, and the input shapes when the traced code read
a shape (``x.shape``, ``x.ndim`` and ``x.dtype`` give real values while tracing, unlike in
MXNet). Registering a child or a parameter, ``cast``, ``hybridize``, ``register_op_hook`` and a
load that changes a dtype clear the cache of the block *and of every block that contains it*,
so a stale graph never runs. A block keeps at most ``MAX_TRACES`` traces, as a CachedOp keeps
``MAX_PLANS`` plans: a shape-reading ``hybrid_forward`` fed many shapes has the least recently
used traces dropped, with the generated source that ``linecache`` holds for their plans.

An error raised while tracing names the block by its path from the traced block through the
children's registered names (``hybridsequential0.2``, ``net0.features.3``), with the user's
``hybrid_forward`` line: ``while tracing block net0.body.1 (Dense): model.py:12: ...``.
"""
import copy
import os
import re
import warnings
import weakref
from collections import OrderedDict

import numpy as np

from . import autograd, initializer
from . import ndarray as nd_module
from . import parameter as parameter_module
from . import symbol as sym_module
from .base import MXNetError
from .block_scope import HookHandle, UsageError, _BlockScope, _brief, _indent, _op_hook
from .cached_op import CachedOp, VALID_FLAGS
from .ndarray import NDArray
from .parameter import DeferredInitializationError, Parameter, ParameterDict
from .summary import _summary_table
from .graph import infer_graph, topo_nodes
from .symbol import Symbol
from . import tracing
from .tracing import (_SHAPE_KEYED, _Trace, _Traced, _cached_trace, _flatten, _freeze,
                      _graph_form, _regroup, _release_traces, _traces_lock, _uses, param_specs,
                      trace_key)

__all__ = ['Block', 'HybridBlock', 'SymbolBlock', 'HookHandle', 'UsageError']


# -------------------------------------------------------------------------------------------------
# Block
# -------------------------------------------------------------------------------------------------

class Block:
    """The base class of all layers and models (``forward`` computes).

    Parameters
    ----------
    prefix : str, optional
        Prefix of the names of this block's parameters and children (default: the class name in
        lower case and a counter, ``dense0_``).
    params : ParameterDict, optional
        Share these parameters (by name) instead of creating new ones.
    """
    _summary_row = True      # a row of summary()'s table when called

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ''
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith('_') else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()
        # the blocks that hold this one as a child: their traces include ours
        self._parents = weakref.WeakSet()

    def _alias(self):
        return type(self).__name__.lower()

    def __getstate__(self):
        state = dict(self.__dict__)
        del state['_parents']            # weak references; rebuilt from the children
        return state

    def __setstate__(self, state):
        """For copy.deepcopy and pickle: the copies of the children know their new parent."""
        self.__dict__.update(state)
        self.__dict__['_parents'] = weakref.WeakSet()
        for child in self._children.values():
            child._parents.add(self)

    def __repr__(self):
        lines = [f'  ({key}): {_indent(repr(block), 2)}'
                 for key, block in self.__dict__.items() if isinstance(block, Block)]
        return f'{type(self).__name__}(\n' + '\n'.join(lines) + '\n)'

    def __setattr__(self, name, value):
        """Registers child blocks and parameters assigned as attributes."""
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(f'Changing attribute type for {name} from {type(existing)} to '
                                f'{type(value)} is not allowed.')
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise UsageError(f'Overriding Parameter attribute {name} is not allowed. If you '
                                 "want to share parameters between blocks, please set 'params' "
                                 'at Block construction instead.')
            self._reg_params[name] = value
            self._clear_cached_op()
        super().__setattr__(name, value)

    # -- names and parameters ---------------------------------------------------------------
    @property
    def prefix(self):
        """Prefix of this block's names (``dense0_``)."""
        return self._prefix

    @property
    def name(self):
        """Name of this block, without the trailing ``_``."""
        return self._name

    @property
    def params(self):
        """This block's own parameters (not its children's; see ``collect_params``)."""
        return self._params

    def name_scope(self):
        """``with self.name_scope():`` names children and parameters under this block."""
        return self._scope

    def collect_params(self, select=None):
        """A ParameterDict of this block's and all its descendants' parameters.

        ``select`` keeps the full names that match a regular expression from their start
        (``'.*weight|.*bias'``).
        """
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({k: v for k, v in self.params.items() if pattern.match(k)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=''):
        """``{structural name: Parameter}``: ``features.0.weight``, as in parameter files."""
        if prefix:
            prefix += '.'
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def _check_container_with_block(self):
        children = set(id(c) for c in self._children.values())

        def hides_block(data):
            if isinstance(data, (list, tuple)):
                return any(hides_block(e) for e in data)
            if isinstance(data, dict):
                return any(hides_block(v) for v in data.values())
            return isinstance(data, Block) and id(data) not in children

        for key, value in self.__dict__.items():
            if isinstance(value, (list, tuple, dict)) and not (key.startswith('__') or
                                                               key == '_children'):
                if hides_block(value):
                    warnings.warn(f'"{type(self).__name__}.{key}" is an unregistered container '
                                  'with Blocks. Note that Blocks inside the list, tuple or dict '
                                  'will not be registered automatically. Make sure to register '
                                  'them using register_child() or switching to '
                                  'nn.Sequential/nn.HybridSequential instead. ', stacklevel=3)

    def register_child(self, block, name=None):
        """Register ``block`` as a child (named ``name``, or its position)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block
        block._parents.add(self)
        self._clear_cached_op()

    def _clear_cached_op(self):
        """Forget traced graphs here and in every block containing this one."""
        for parent in list(self._parents):
            parent._clear_cached_op()

    # -- hooks --------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook):
        """Call ``hook(block, inputs)`` before each forward; returns a detachable handle."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """Call ``hook(block, inputs, outputs)`` after each forward; returns a handle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def register_op_hook(self, callback, monitor_all=False):
        """Install ``callback(name, op_name, array)`` on the hybridized blocks inside."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def apply(self, fn):
        """Call ``fn(block)`` on every descendant, then on this block; returns this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    # -- initialisation, modes, dtypes ------------------------------------------------------
    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize every parameter of this block and its children (see Parameter)."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, check=False, **kwargs):
        """Hybridize the HybridBlocks among the descendants (see ``HybridBlock.hybridize``)."""
        _check_hybridize_args(backend, kwargs)
        for child in self._children.values():
            child.hybridize(active, clear=clear, static_alloc=static_alloc,
                            static_shape=static_shape, inline_limit=inline_limit,
                            forward_bulk_size=forward_bulk_size,
                            backward_bulk_size=backward_bulk_size, check=check)

    def cast(self, dtype):
        """Convert parameters (and children's) to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for param in self.params.values():
            param.cast(dtype)

    def zero_grad(self):
        """Set the gradients of all parameters to 0 (MXNet 2's name for
        ``collect_params().zero_grad()``)."""
        self.collect_params().zero_grad()

    def reset_ctx(self, ctx):
        """Move all parameters to ``ctx``."""
        self.collect_params().reset_ctx(ctx)

    # -- calling ------------------------------------------------------------------------------
    def __call__(self, *args):
        for hook in self._forward_pre_hooks.values():
            hook(self, args)
        out = self.forward(*args)
        for hook in self._forward_hooks.values():
            hook(self, args, out)
        return out

    def forward(self, *args):
        """Override to compute."""
        raise NotImplementedError(f'{type(self).__name__} must implement forward')

    # -- files --------------------------------------------------------------------------------
    def save_parameters(self, filename, deduplicate=False):
        """Save parameters by their structural names (``features.0.weight``) in MXNet's format.

        ``deduplicate`` saves a shared parameter once, under the last of its names (as MXNet).
        """
        params = self._collect_params_with_prefix()
        if deduplicate:
            last = {id(p): key for key, p in params.items()}
            params = {key: p for key, p in params.items() if last[id(p)] == key}
        nd_module.save(filename, {key: val._reduce() for key, val in params.items()})

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source='current'):
        """Load parameters saved by ``save_parameters`` (or, for files without structural
        names, by ``save_params``/``ParameterDict.save``: full names less this prefix).

        A shared parameter needs only one of its names in the file (``deduplicate``).
        """
        loaded = parameter_module.load_named(filename)
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        everything = list(self.collect_params().values())
        dtypes = [p.dtype for p in everything]
        if loaded and all(key.startswith(('arg:', 'aux:')) for key in loaded):
            # a file written by export(): full names behind arg:/aux: (MXNet 1.9.1 fails here,
            # prefixing the names twice; no file MXNet accepts looks like this)
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
        elif not any('.' in key for key in loaded):
            # a file saved by ParameterDict.save / save_params: full names
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
        else:
            if not allow_missing:
                names_of = {}
                for key, param in params.items():
                    names_of.setdefault(id(param), []).append(key)
                for key, param in params.items():
                    if not any(n in loaded for n in names_of[id(param)]):
                        raise UsageError(f"Parameter '{key}' is missing in file '{filename}', "
                                         f'which contains parameters: {_brief(loaded)}. Set '
                                         'allow_missing=True to ignore missing parameters.')
            for key, value in loaded.items():
                if key not in params:
                    if ignore_extra:
                        continue
                    raise UsageError(f"Parameter '{key}' loaded from file '{filename}' is not "
                                     'present in ParameterDict, which contains parameters '
                                     f'{_brief(params)}. Set ignore_extra=True to ignore. ')
                params[key]._load_init(value, ctx, cast_dtype=cast_dtype,
                                       dtype_source=dtype_source)
        if [p.dtype for p in everything] != dtypes:      # the graphs' variables change
            self.apply(lambda block: block._clear_cached_op())

    def save_params(self, filename):
        """Deprecated: use ``save_parameters`` (this one saves full names less the prefix)."""
        warnings.warn('save_params is deprecated. Please use save_parameters. Note that if you '
                      'want load from SymbolBlock later, please use export instead. For '
                      'details, see https://mxnet.apache.org/tutorials/gluon/save_load_params.'
                      'html', stacklevel=2)
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as err:
            raise ValueError(f'{err}\nsave_params is deprecated. Using save_parameters may '
                             'resolve this error.') from None

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """Deprecated: use ``load_parameters``."""
        warnings.warn('load_params is deprecated. Please use load_parameters.', stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    # -- summary --------------------------------------------------------------------------
    def summary(self, *inputs):
        """Print a table of the layers called, their output shapes and parameter counts.

        Runs one forward pass on ``inputs``; the blocks must not be hybridized (their layers
        would not be called one by one).
        """
        print(_summary_table(self, inputs))


def _check_hybridize_args(backend, kwargs):
    if kwargs:
        raise TypeError(f'hybridize() got unexpected keyword arguments {sorted(kwargs)}; it '
                        f'takes active, backend, clear and {", ".join(VALID_FLAGS)}')
    if backend is not None:
        raise MXNetError(f'hybridize(backend={backend!r}): subgraph backends are not supported')


# -------------------------------------------------------------------------------------------------
# HybridBlock
# -------------------------------------------------------------------------------------------------

class HybridBlock(Block):
    """A Block whose ``hybrid_forward(F, x, *args, **params)`` works on NDArrays (imperative)
    and on Symbols (traced by ``hybridize()`` into a compiled graph)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._traces = {}
        self._last_call = None
        self._specs = None          # (Parameter generation, param_specs) for trace keys
        self._active = False
        self._check = False
        self._flags = {}
        self._callback = None
        self._monitor_all = False

    def __getstate__(self):
        state = super().__getstate__()
        state['_traces'] = {}            # compiled code: a copy traces again
        state['_last_call'] = None
        return state

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError(f'Children of HybridBlock must also be HybridBlock, but {block} has '
                             f'type {type(block)}. If you are using Sequential, please try '
                             'HybridSequential instead.')
        super().register_child(block, name)

    def _clear_cached_op(self):
        with _traces_lock:
            _release_traces(self._traces)
            self._traces = {}
        self._cached_graph = ()
        self._last_call = None
        self._specs = None
        super()._clear_cached_op()

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, check=False, **kwargs):
        """Trace and compile on the next call (``active=False`` goes back to imperative), here
        and in every HybridBlock inside.

        ``static_alloc`` keeps the compiled graph's buffers across calls; ``static_shape``
        declares that input shapes do not change. ``inline_limit`` and the bulk sizes are
        accepted for compatibility. Unknown keyword arguments are an error (MXNet ignores them).

        ``check`` (not in MXNet; for debugging, slow) traces ``hybrid_forward`` again on every
        call and raises, naming the block, when it took another path than the compiled graph
        (a Python attribute or global it branches on changed: MXNet's stale-graph trap), and
        compares the compiled call with the graph run operator by operator, as imperatively.
        """
        _check_hybridize_args(backend, kwargs)
        self._active = active
        self._check = check
        self._flags = {'static_alloc': static_alloc, 'static_shape': static_shape}
        if clear:
            self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn(f'"{self}" is being hybridized while still having forward hook/'
                          f'pre-hook. If "{self}" is a child of HybridBlock, the hooks will not '
                          'take effect.', stacklevel=2)
        super().hybridize(active, clear=clear, static_alloc=static_alloc,
                          static_shape=static_shape, inline_limit=inline_limit,
                          forward_bulk_size=forward_bulk_size,
                          backward_bulk_size=backward_bulk_size, check=check)

    def optimize_for(self, x, *args, backend=None, **kwargs):
        """MXNet's partitioning for a subgraph backend, which hybridlib does not have."""
        if not backend:
            raise ValueError('Must specify "backend" to optimize_for')
        _check_hybridize_args(backend, {})

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)

    def register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(name, op_name, array)`` for every operator output of the compiled
        graph (inputs too with ``monitor_all``), here and in every HybridBlock inside.

        Names are MXNet's (``dense0_fwd_output``); they are ``str`` with a ``decode()`` method,
        since MXNet passes bytes; ``array`` is an NDArray (MXNet passes a raw handle).
        """
        self._callback = callback
        self._monitor_all = monitor_all
        self._clear_cached_op()
        super().register_op_hook(callback, monitor_all)

    @property
    def cached_op(self):
        """The CachedOp of the most recent hybridized call (``.code`` shows its source)."""
        return self._last_call.cached_op if self._last_call is not None else None

    # -- tracing ------------------------------------------------------------------------------
    def _trace(self, flat, fmt):
        """Trace ``hybrid_forward`` with Symbols standing for ``flat`` (None kept)."""
        real = [a for a in flat if a is not None]
        if not real:
            raise ValueError(f'All args are None and we do not support such a case. Received '
                             f'args={flat}')
        names = ['data'] if len(real) == 1 else [f'data{i}' for i in range(len(real))]
        inputs = [sym_module.traced_var(n, a.shape, a.dtype) for n, a in zip(names, real)]
        it = iter(inputs)
        grouped, _ = _regroup([None if a is None else next(it) for a in flat], fmt)
        reads = sym_module.shape_reads.count()
        with sym_module.traced_context(real[0].context, autograd.is_training()):
            out = self._trace_call(grouped)
        shape_dependent = sym_module.shape_reads.count() != reads
        out, out_fmt = _flatten(out, 'output')
        trace = _Trace(inputs, sym_module.Group(out), out_fmt, shape_dependent)
        self._cached_graph = (inputs, trace.output)
        return trace

    def _trace_call(self, grouped):
        params = {k: v.var() for k, v in self._reg_params.items()}
        with _Traced(self), self.name_scope():
            return self.hybrid_forward(sym_module, *grouped, **params)

    def _get_trace(self, flat, fmt, finish_deferred=True):
        """The trace for these inputs, kept by ``tracing.trace_key`` (everything that can
        change the graph) and by the input shapes when tracing read them; the least recently
        used beyond ``MAX_TRACES`` are dropped. A new trace first gives deferred parameters
        their shapes (unless ``finish_deferred`` is False): they are part of its key."""
        arrays = [a for a in flat if a is not None]
        key = trace_key(flat, fmt, self._param_specs())
        trace = _cached_trace(self._traces, key, arrays)
        if trace is None:
            with _traces_lock:
                trace = _cached_trace(self._traces, key, arrays)   # (traced by another thread)
                if trace is None:
                    trace = self._trace(flat, fmt)
                    if finish_deferred and self._finish_deferred(trace, arrays):
                        key = trace_key(flat, fmt, self._param_specs())
                    self._keep_trace(self._traces, key, arrays, trace)
        trace.used = next(_uses)
        return trace

    def _param_specs(self):
        """``tracing.param_specs`` of this block's parameters, collected again only after some
        Parameter's arrays were replaced (initialised, cast, moved)."""
        generation = parameter_module._generation
        cached = self._specs
        if cached is None or cached[0] != generation:
            cached = (generation, param_specs(self.collect_params()))
            object.__setattr__(self, '_specs', cached)
        return cached[1]

    def _keep_trace(self, traces, base, arrays, trace):
        """Add a new trace to ``traces``; beyond ``MAX_TRACES`` entries, drop the least recently
        used traces, but not the last call's, which forward's hot path runs without a lookup."""
        if trace.shape_dependent:
            traces[base] = _SHAPE_KEYED
            traces[(base, tuple(a.shape for a in arrays))] = trace
        else:
            traces[base] = trace
        while len(traces) > tracing.MAX_TRACES:
            old = [(v.used, k) for k, v in traces.items()
                   if isinstance(v, _Trace) and v is not trace and v is not self._last_call]
            if not old:
                return
            key = min(old, key=lambda item: item[0])[1]
            dropped = traces.pop(key)
            dropped.release()
            if dropped.shape_dependent and traces.get(key[0]) is _SHAPE_KEYED and not any(
                    isinstance(v, _Trace) and v.shape_dependent and k[0] == key[0]
                    for k, v in traces.items()):
                del traces[key[0]]      # the last trace of its signature: the marker goes too

    def _graph_params(self, trace):
        """The parameters (of this block and those inside) that the traced graph reads."""
        names = set(trace.output.list_inputs())
        return {p.name: p for p in self.collect_params().values() if p.name in names}

    def _finish_deferred(self, trace, arrays):
        """Give deferred parameters of the graph the shapes it infers, and create them;
        whether there were any."""
        pending = [p for p in self._graph_params(trace).values() if p._deferred_init]
        if not pending:
            return False
        nodes = topo_nodes(trace.output._outputs)
        given = {s.name: a.shape for s, a in zip(trace.inputs, arrays)}
        try:
            shapes = infer_graph(nodes, 'shape', given)
        except MXNetError as err:
            raise UsageError(f'Deferred initialization failed because shape cannot be '
                             f'inferred. {err}') from None
        by_name = {n.name: shapes.get((n, 0)) for n in nodes if n.op is None}
        for p in pending:
            shape = by_name.get(p.name)
            if shape is not None:
                p.shape = shape
            if not p.shape or 0 in p.shape:
                raise UsageError(f'Deferred initialization failed because shape cannot be '
                                 f"inferred: parameter '{p.name}' of block {self.name} has "
                                 f'shape {p.shape} with the inputs {list(given.values())}. '
                                 'Give the layer its input size (in_units, in_channels).')
        for p in pending:
            p._finish_deferred_init()
        return True

    def infer_shape(self, *args):
        """Infer and set the shapes of the parameters from input arrays."""
        self._infer_attrs('shape', args)

    def infer_type(self, *args):
        """Infer and set the dtypes of the parameters from input arrays."""
        self._infer_attrs('dtype', args)

    def _infer_attrs(self, kind, args):
        flat, fmt = _flatten(args, 'input')
        arrays = [a for a in flat if a is not None]
        trace = self._get_trace(flat, fmt, finish_deferred=False)
        nodes = topo_nodes(trace.output._outputs)
        given = {s.name: (a.shape if kind == 'shape' else np.dtype(a.dtype))
                 for s, a in zip(trace.inputs, arrays)}
        values = infer_graph(nodes, kind, given)
        by_name = {n.name: values.get((n, 0)) for n in nodes if n.op is None}
        for param in self.collect_params().values():
            value = by_name.get(param.name)
            if value is None or kind == 'shape' and 0 in value:
                raise UsageError(f"{kind} of parameter '{param.name}' cannot be inferred from "
                                 f'the inputs {[a.shape for a in arrays]}')
            setattr(param, kind, value)

    # -- calling ------------------------------------------------------------------------------
    def forward(self, x, *args):
        """Dispatch on the inputs: NDArrays run (compiled when hybridized), Symbols compose."""
        last = self._last_call
        if last is not None and self._active and last.matches((x,) + args):
            return last.run((x,) + args, x._ctx)    # called as last time: the hot path
        flat = [a for a in _flatten([x] + list(args), 'input')[0] if a is not None]
        has_symbol = any(isinstance(a, Symbol) for a in flat)
        has_ndarray = any(isinstance(a, NDArray) for a in flat)
        if has_symbol and has_ndarray:
            raise ValueError('In HybridBlock, we do not support mixed NDArrays and Symbols '
                             'types for the input. Please check the type of the args.\n')
        if not flat:
            raise ValueError('In HybridBlock, there must be one NDArray or one Symbol in the '
                             'input. Please check the type of the args.\n')
        if has_symbol:
            params = {k: v.var() for k, v in self._reg_params.items()}
            with _Traced(self), self.name_scope():
                return self.hybrid_forward(sym_module, x, *args, **params)
        ctx = flat[0].context
        if self._active:
            contexts = {a.context for a in flat}
            if len(contexts) > 1:
                raise ValueError('Find multiple contexts in the input, After hybridized, the '
                                 'HybridBlock only supports one input context. You can print '
                                 'the ele.ctx in the input arguments to inspect their contexts. '
                                 f'Find all contexts = {contexts}')
            with ctx:
                return self._call_cached_op(x, *args)
        try:
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        except DeferredInitializationError:
            flat_all, fmt = _flatten([x] + list(args), 'input')
            self._finish_deferred(self._get_trace(flat_all, fmt), flat)
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        with ctx:
            return self.hybrid_forward(nd_module, x, *args, **params)

    def _call_cached_op(self, *args):
        flat, fmt = _flatten(list(args), 'input')
        arrays = [a for a in flat if a is not None]
        trace = self._get_trace(flat, fmt)
        if trace.cached_op is None:
            self._finish_deferred(trace, arrays)
            self._build_cached_op(trace)
        # plain attributes: Block.__setattr__ registers children and is too slow per call
        object.__setattr__(self, '_cached_graph', (trace.inputs, trace.output))
        if self._check:     # every call takes this path, so that every call is checked
            return self._checked_call(trace, flat, fmt, arrays)
        object.__setattr__(self, '_last_call', trace)
        if trace.signature is None:
            trace.remember_call(args)
        return trace.run(arrays, arrays[0].context)

    def _checked_call(self, trace, flat, fmt, arrays):
        """``hybridize(check=True)``: the compiled call, after the graph traced again now has
        been compared with the compiled one, and checked against the graph run operator by
        operator (in predict mode, without random operators)."""
        with _traces_lock:
            fresh = self._trace(flat, fmt)
        if _graph_form(fresh.output) != _graph_form(trace.output):
            raise MXNetError(
                f'hybridize(check=True): {self.name} ({type(self).__name__}).hybrid_forward took '
                'another path than when it was traced: a Python attribute or global it branches '
                'on has changed since. The compiled graph would give the old path\'s result; '
                'call hybridize() again to trace anew.')
        ctx = arrays[0].context
        inputs = trace.arrays(arrays, ctx)
        outs = trace.cached_op.run(inputs, ctx)
        random = any(n.op is not None and n.op.random for n in topo_nodes(trace.output._outputs))
        if not autograd.is_training() and not random:
            with autograd.pause():
                expected = trace.cached_op.interpret(*inputs)
            for i, (got, want) in enumerate(zip(outs, expected)):
                if not np.allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6,
                                   equal_nan=True):
                    raise MXNetError(f'hybridize(check=True): output {i} of {self.name} differs '
                                     'between the compiled graph and the graph run operator by '
                                     'operator (a hybridlib bug: please report it)')
        return trace.result(outs)

    def _build_cached_op(self, trace):
        params = self._graph_params(trace)
        op = CachedOp(trace.output, self._flags)
        if self._callback is not None:
            op.register_op_hook(_op_hook(self._callback), self._monitor_all)
        data_index = {s.name: i for i, s in enumerate(trace.inputs)}
        feed = []
        for name in op.input_names:
            if name in data_index:
                feed.append(('data', data_index[name]))
            elif name in params:
                feed.append(('param', params[name]))
            else:
                raise MXNetError(f'the graph of {self.name} has an input {name!r} that is '
                                 'neither an argument nor a parameter of the block')
        _warn_unused(trace, op.input_names, self.collect_params())
        trace.cached_op = op
        trace.feed = feed

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Override to compute; ``F`` is ``hybridlib.ndarray`` or ``hybridlib.symbol``."""
        raise NotImplementedError(f'{type(self).__name__} must implement hybrid_forward')

    # -- export -------------------------------------------------------------------------------
    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (MXNet's formats) from the
        graph of the last hybridized call; returns the two file names."""
        if not self._cached_graph:
            raise RuntimeError('Please first call block.hybridize() and then run forward with '
                               'this block at least once before calling export.')
        graph = self._cached_graph[1]
        trace = self._last_call
        if trace is not None and trace.output is graph and trace.shape_dependent:
            shapes = [sym_module.hint_shape(s._outputs[0]) for s in trace.inputs]
            warnings.warn(
                f'{self.name}: hybrid_forward read input shapes (x.shape) when it was traced, so '
                f'the exported graph holds the shapes of that call, {shapes}: it is right for '
                'inputs of those shapes only. Shape-free operators (reshape with 0 and -1, '
                'the *_like operators) export a graph for any shape.', stacklevel=2)
        sym_file = f'{path}-symbol.json'
        graph.save(sym_file, remove_amp_cast=remove_amp_cast)
        arg_names = set(graph.list_arguments())
        params = {p.name: p for p in self.collect_params().values()}
        arg_dict = {}
        for name in graph.list_inputs():     # the graph's order, as MXNet writes the file
            if name in params:
                prefix = 'arg' if name in arg_names else 'aux'
                arg_dict[f'{prefix}:{name}'] = params[name]._reduce()
        params_file = f'{path}-{epoch:04d}.params'
        nd_module.save(params_file, arg_dict)
        return sym_file, params_file


def _warn_unused(trace, graph_inputs, params):
    """MXNet's warnings for inputs and parameters that the graph does not read."""
    used = set(graph_inputs)
    unused = [f'{i}-th' for i, s in enumerate(trace.inputs) if s.name not in used]
    if unused:
        warnings.warn(f'The {", ".join(unused)} input to HybridBlock is not used by any '
                      'computation. Is this intended?', stacklevel=5)
    unused = [name for name in params.keys() if name not in used]
    if unused:
        warnings.warn(f'Parameter {", ".join(unused)} is not used by any computation. Is this '
                      'intended?', stacklevel=5)


# -------------------------------------------------------------------------------------------------
# SymbolBlock
# -------------------------------------------------------------------------------------------------

def _param_dtypes(inputs, graph):
    """``{name: dtype}`` of the graph's variables, inferred from the inputs' declared dtypes
    (float32 where they do not determine it), as MXNet's SymbolBlock does."""
    given = {}
    for s in inputs:
        dtype = s.infer_type_partial()[0][0]
        if dtype is None:
            return {}
        given[s.name] = dtype
    try:
        arg_types, _, aux_types = graph.infer_type_partial(**given)
    except MXNetError:
        return {}
    names = graph.list_arguments() + graph.list_auxiliary_states()
    return {n: t for n, t in zip(names, arg_types + aux_types) if t is not None}


class SymbolBlock(HybridBlock):
    """A HybridBlock made from a graph: ``outputs`` computed from the variables ``inputs``;
    the graph's other variables are parameters (shared from ``params`` when given).

    Feature extraction::

        internals = net(sym.var('data')).get_internals()
        features = SymbolBlock(internals['dense0_fwd_output'], sym.var('data'),
                               params=net.collect_params())
    """

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """Load a model exported by ``export`` (hybridlib's or MXNet's): parameters take the
        dtypes saved in ``param_file``."""
        graph = sym_module.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [sym_module.var(i, dtype='float32') for i in input_names]
        else:
            inputs = [sym_module.var(i) for i in input_names]
        block = SymbolBlock(graph, inputs)
        if param_file is not None:
            block.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                        cast_dtype=True, dtype_source='saved')
        return block

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ''
        self._params = ParameterDict('', params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, 'input')
        out, out_format = _flatten(outputs, 'output')
        out = sym_module.Group(out)
        input_names = set()
        for s in syms:
            if len(s.get_internals().list_outputs()) != 1:
                raise UsageError(f'Input symbols must be variable, but {s} is an output of '
                                 'operators')
            input_names.add(s.name)
        dtypes = _param_dtypes(syms, out)
        for name in out.list_arguments():
            if name not in input_names:
                self.params.get(name, allow_deferred_init=True,
                                dtype=dtypes.get(name, np.float32))
        for name in out.list_auxiliary_states():
            if name not in input_names:
                self.params.get(name, grad_req='null', allow_deferred_init=True,
                                dtype=dtypes.get(name, np.float32))
        self._graph_inputs = syms
        self._graph = out
        self._graph_out_format = out_format
        self._cached_graph = (syms, out)
        len_prefix = len(os.path.commonprefix(list(self._params.keys())))   # by character
        self._reg_params = {key[len_prefix:]: val for key, val in self._params.items()}

    def __repr__(self):
        graph = self._cached_graph[1]
        return (f'{type(self).__name__}(\n{graph} : {len(self._cached_graph[0])} -> '
                f'{len(graph.list_outputs())}\n)')

    def _clear_cached_op(self):
        with _traces_lock:
            _release_traces(self._traces)
            self._traces = {}
        self._last_call = None
        Block._clear_cached_op(self)

    def _trace(self, flat, fmt):
        if _freeze(fmt) != _freeze(self._in_format):
            raise ValueError('The argument structure of HybridBlock does not match the cached '
                             f'version. Stored format = {self._in_format}, input format = '
                             f'{fmt}')
        return _Trace(self._graph_inputs, self._graph, self._graph_out_format, False)

    def forward(self, x, *args):
        last = self._last_call
        if last is not None and last.matches((x,) + args):
            return last.run((x,) + args, x._ctx)    # called as last time: the hot path
        if isinstance(x, NDArray):
            with x.context:
                return self._call_cached_op(x, *args)
        if not isinstance(x, Symbol):
            raise UsageError(f'HybridBlock requires the first argument to forward be either '
                             f'Symbol or NDArray, but got {type(x)}')
        flat, fmt = _flatten([x] + list(args), 'input')
        if _freeze(fmt) != _freeze(self._in_format):
            raise UsageError('Invalid input format')
        ret = copy.copy(self._graph)
        ret._compose(**{k.name: v for k, v in zip(self._graph_inputs, flat)
                        if k.name in ret.list_inputs()})
        return _regroup(list(ret), self._graph_out_format)[0]

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError

    def cast(self, dtype):
        super().cast(dtype)
        if np.dtype(dtype).name == 'float16':
            # BatchNorm keeps float32 statistics (and scale/shift), as in MXNet
            names = set(self._graph.get_internals().list_inputs())
            for name in names:
                for stat, mean in (('running_var', 'running_mean'),
                                   ('moving_var', 'moving_mean')):
                    if not name.endswith(stat):
                        continue
                    prefix = name[:-len(stat)]
                    siblings = [prefix + t for t in (mean, 'gamma', 'beta')]
                    if all(s in names for s in siblings):
                        for p in [name] + siblings:
                            self.params[p].cast('float32')
