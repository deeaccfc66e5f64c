"""The CachedOp: a traced graph compiled into straight-line Python source.

For each set of input shapes, dtypes, mode and context, the graph becomes a *plan*:

1. shapes and dtypes of every value are inferred once (and creation operators whose shape had
   unknown dimensions get the inferred one);
2. a forward function is generated: one line per node, ``name = Op(xp, attrs_name, inputs...)``,
   with operator bodies, attributes and the array module in a globals table, values deleted
   after their last use, and with ``static_alloc`` a buffer plan (``planner.py``);
3. when the call is recorded, the backward graph is built symbolically from the registry's
   gradients (``symbol.gradient_graph``), only the nodes that the wanted gradients need are
   kept, and a backward function is generated the same way. The forward of a recorded call
   also returns the values the backward reads.

The source is compiled with a file name registered in ``linecache``, so tracebacks show the
generated line; ``CachedOp.code`` returns it. A plan also keeps the source of a timed variant of
each function, every operator line between two clock reads; it is compiled, and run instead,
while ``mx.profiler`` times operators, so that the plain code does no profiling work.
``executor.run_graph`` interprets the same graph node by node and serves as the reference in
tests.

Under ``autograd.record()`` a call is one tape entry whose gradient runs the generated
backward, so the per-call Python work is the generated lines plus a constant.
"""
import builtins
import contextlib
import itertools
import keyword
import linecache
import re
import threading
import unicodedata
import weakref

from . import autograd, profiler
from .base import MXNetError, NotSupportedError
from .executor import run_graph
from .ndarray import NDArray
from .ops.registry import OpDef, Params
from .planner import plan_buffers, writes_into
from .graph import has_unknown_shape, infer_graph, topo_nodes, with_inferred_shape
from .symbol import gradient_graph
from .tape import grad_target

__all__ = ['CachedOp', 'NDArrayCachedOp', 'Plan', 'VALID_FLAGS']

VALID_FLAGS = ('static_alloc', 'static_shape', 'inline_limit', 'forward_bulk_size',
               'backward_bulk_size')
MAX_PLANS = 64        # compiled plans kept per CachedOp (one per input signature)
# names of the generated code's globals and locals that graph names must not take
_RESERVED = ('xp', '_hook', '_start', '_clock', '_record')
_counter = itertools.count()


class _Namespace:
    """Unique, legal Python names derived from graph names: ASCII only, because Python
    normalises identifiers (NFKC) when it compiles, so that ``fi`` and ``\ufb01`` (the fi
    ligature) would be one variable, and ``\uff58\uff50`` (fullwidth) the array module ``xp``.
    A name is normalised first, so it stays readable, then every other character becomes _."""

    def __init__(self, reserved=()):
        self._used = set(keyword.kwlist) | set(dir(builtins)) | set(reserved)

    def name(self, base):
        name = re.sub(r'[^0-9A-Za-z_]', '_', unicodedata.normalize('NFKC', base)) or 'v'
        if name[0].isdigit():
            name = '_' + name
        candidate, n = name, 1
        while candidate in self._used:
            candidate = f'{name}_{n}'
            n += 1
        self._used.add(candidate)
        return candidate


def _resolved_params(node, out_shapes):
    """A creation operator's attributes with the unknown dimensions of ``shape`` filled in."""
    return with_inferred_shape(node, out_shapes[0]) if has_unknown_shape(node) else node.params


def _generate(fn_name, args, nodes, outputs, shapes, dtypes, is_train, namer, xp,
              hooks=None, static_alloc=False, targets=()):
    """Source and globals of ``def fn_name(*args)`` computing ``outputs`` from ``args``.

    ``args`` are entries given as parameters; ``nodes`` the operator nodes to run, in order;
    ``shapes``/``dtypes`` the inferred values per entry. Each node calls its operator's body
    specialised for those shapes (``OpDef.specialise``), bound in the globals table; a line
    ends with the operator's name. With ``static_alloc`` the values that can live in a static
    buffer are written into one (``planner.plan_buffers``); otherwise each value is deleted
    after its last use. ``is_train`` is the mode the function runs in (a backward's is that of
    ``autograd.backward(train_mode=...)``, as imperative autograd does). ``hooks``
    ('outputs' or 'all') adds ``_hook(name, op, value)`` calls with MXNet's entry names
    (``<node>_output``, and ``<node>_<input>`` for 'all'). ``targets`` are outputs whose node
    writes into an array given by the caller, a parameter after ``args`` (None: a new array).

    Returns the source, the globals, and the source of the timed variant that runs while the
    profiler times operators: the same lines, each operator's between ``_start = _clock()``
    and ``_record('<operator>', _start)`` (globals that ``Plan`` adds when it compiles it).
    """
    g = {}
    local = {}
    params = []
    for entry in args:
        local[entry] = namer.name(_entry_name(entry))
        params.append(local[entry])
    target_names = {}
    for entry in targets:
        target_names[entry] = namer.name('_target')
        params.append(f'{target_names[entry]}=None')
    assign, buffers, _, views = plan_buffers(nodes, outputs, shapes, dtypes) \
        if static_alloc else ({}, [], {}, {})
    buffer_names = []
    for shape, dtype in buffers:
        name = namer.name('_buf')
        g[name] = xp.empty(shape, dtype=dtype)
        buffer_names.append(name)
    view_names = {}             # values written into a part of a buffer (a joined Concat's)
    for entry, (b, chain) in views.items():
        view = g[buffer_names[b]]
        for index in chain:
            view = view[index]
        view_names[entry] = namer.name('_view')
        g[view_names[entry]] = view
    last_use = {}
    for i, node in enumerate(nodes):
        for e in node.inputs:
            last_use[e] = i
    keep = set(outputs)
    body = []
    timed = []          # the timed variant's lines: body's, with the operators timed
    for i, node in enumerate(nodes):
        ins = ', '.join(local[e] for e in node.inputs)
        buffer = assign.get((node, 0))
        view = view_names.get((node, 0))
        if node.op.reshapes and node.num_outputs == 1 and (node, 0) not in keep \
                and shapes.get((node, 0)) and 0 not in shapes[(node, 0)]:
            # a view: the planner groups it with its input, so the memory lives long enough
            call = f'{local[node.inputs[0]]}.reshape({tuple(shapes[(node, 0)])})'
        elif view is not None and node.op.name == 'Concat':
            call = view         # its inputs were written into their slices of it
        else:
            fn = namer.name(node.op.name)
            g[fn] = _node_body(node, shapes, dtypes, is_train, xp)
            if view is not None:
                ins += (', ' if ins else '') + f'out={view}'
            elif buffer is not None:
                ins += (', ' if ins else '') + f'out={buffer_names[buffer]}'
            elif (node, 0) in target_names:
                ins += (', ' if ins else '') + f'out={target_names[(node, 0)]}'
            call = f'{fn}({ins})'
        if hooks == 'all':
            labels = node.op.graph_input_names(node.params)
            for label, e in zip(labels, node.inputs):
                body.append(f'    _hook({node.name + "_" + label!r}, {node.op.name!r}, '
                            f'{local[e]})')
                timed.append(body[-1])
        targets = []
        for k in range(node.num_outputs):
            entry = (node, k)
            if entry in last_use or entry in keep or hooks and k < node.num_visible_outputs:
                local[entry] = namer.name(_entry_name(entry))
                targets.append(local[entry])
            else:
                targets.append('_')
        body.append(f'    {", ".join(targets)} = {call}  # {node.op.name}')
        timed += ['    _start = _clock()', body[-1], f'    _record({node.op.name!r}, _start)']
        if hooks:
            for k in range(node.num_visible_outputs):
                body.append(f'    _hook({node.output_name(k)!r}, {node.op.name!r}, '
                            f'{local[(node, k)]})')
                timed.append(body[-1])
        dead = [local[e] for e in node.inputs if last_use.get(e) == i and e not in keep
                and e in local and e not in args and e not in assign]
        dead = list(dict.fromkeys(dead))
        if dead:
            body.append(f'    del {", ".join(dead)}')
            timed.append(body[-1])
    result = ', '.join(local[e] for e in outputs)
    body.append(f'    return ({result}{"," if len(outputs) == 1 else ""})')
    timed.append(body[-1])
    head = f'def {fn_name}({", ".join(params)}):\n'
    return head + '\n'.join(body) + '\n', g, head + '\n'.join(timed) + '\n'


def _grad_targets(grads, args, shapes, dtypes):
    """Indices of the gradients that the backward can compute in the caller's arrays (the
    variables' ``.grad``, ``tape.grad_target``): output 0 of a node whose body writes into a
    given float buffer, returned once, of a known shape."""
    chosen = []
    for i, e in enumerate(grads):
        node = e[0]
        if e[1] == 0 and node.op is not None and e not in args and grads.count(e) == 1 \
                and writes_into(node) and not node.op.reshapes \
                and shapes.get(e) is not None and 0 not in shapes[e] \
                and dtypes.get(e) is not None and dtypes[e].kind == 'f':
            chosen.append(i)
    return chosen


def _node_body(node, shapes, dtypes, is_train, xp):
    """The node's operator body, specialised when every input shape and dtype is known; else
    ``compute`` with the attributes bound (it specialises at run time, as imperatively)."""
    op = node.op
    out_shapes = [shapes.get((node, k)) for k in range(node.num_outputs)]
    params = _resolved_params(node, out_shapes)
    in_shapes = [shapes.get(e) for e in node.inputs]
    in_dtypes = [dtypes.get(e) for e in node.inputs]
    # (``is None``: numpy's float64 dtype compares equal to None)
    if all(s is not None and 0 not in s for s in in_shapes) and \
            not any(d is None for d in in_dtypes):
        return op.specialise(xp, params, in_shapes, in_dtypes, node.mode(is_train))
    return op.bound(xp, params, node.mode(is_train))


def _entry_name(entry):
    node, index = entry
    if node.op is None or node.num_outputs == 1:
        return node.name
    names = node.op.output_names(node.params)
    return f'{node.name}_{names[index]}' if index < len(names) else f'{node.name}_out{index}'


def _compile(source, globals_, name, tag):
    """The function ``name`` compiled from ``source`` in a namespace of its own; the text is
    registered for tracebacks under the returned file name."""
    filename = f'<hybridlib-cached-op-{next(_counter)}-{tag}>'
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, 'exec')
    namespace = dict(globals_)
    exec(code, namespace)      # noqa: S102 - our own generated source, shown by .code
    return namespace[name], filename


class Plan:
    """The compiled forward (and backward) of a graph for one input signature."""

    def __init__(self, graph, input_nodes, shapes, dtypes, ctx, is_train, grad_mask, hooks,
                 static_alloc=False):
        self.ctx = ctx
        self.is_train = is_train
        nodes = topo_nodes(graph._outputs)
        outputs = list(graph._outputs)
        given_shapes = {n.name: s for n, s in zip(input_nodes, shapes)}
        given_dtypes = {n.name: d for n, d in zip(input_nodes, dtypes)}
        self.shapes = infer_graph(nodes, 'shape', given_shapes)
        self.dtypes = infer_graph(nodes, 'dtype', given_dtypes)
        op_nodes = [n for n in nodes if n.op is not None]
        fwd_args = [(n, 0) for n in input_nodes]
        self.n_outputs = len(outputs)
        self.saved = []
        self._backward = {}
        self.filenames = []
        weakref.finalize(self, _forget, self.filenames)     # the sources go with the plan
        # the timed variants: (source, globals, tag) per function, compiled when first needed
        self._timed_sources = {}
        self._timed = {}
        # static buffers are shared by the calls of a plan: one at a time (threads)
        self.lock = threading.RLock() if static_alloc else None
        self.on_gpu = ctx.device_type == 'gpu'
        tag = 'train' if any(grad_mask) else 'infer'
        wrt = [n for n, need in zip(input_nodes, grad_mask) if need]
        if wrt:
            grads, heads = gradient_graph(graph, [n.name for n in wrt], is_train=is_train,
                                          shapes=self.shapes, dtypes=self.dtypes)
            grad_entries = [s._outputs[0] for s in grads]
            head_entries = [h._outputs[0] for h in heads]
            forward_ids = {id(n) for n in nodes}
            bwd_nodes = [n for n in topo_nodes(grad_entries)
                         if n.op is not None and id(n) not in forward_ids]
            needed = []
            for node in bwd_nodes:
                for e in node.inputs:
                    if id(e[0]) in forward_ids and e[0].op is not None and e not in needed:
                        needed.append(e)
            for e in grad_entries:
                if id(e[0]) in forward_ids and e[0].op is not None and e not in needed:
                    needed.append(e)
            self.saved = needed
            input_entries = [(n, 0) for n in input_nodes]
            all_nodes = topo_nodes(grad_entries + outputs)
            bwd_shapes = infer_graph(all_nodes, 'shape', given_shapes)
            bwd_dtypes = infer_graph(all_nodes, 'dtype', given_dtypes)
            self._backward_graph = (input_entries + needed + head_entries, bwd_nodes,
                                    grad_entries, bwd_shapes, bwd_dtypes, static_alloc)
            self.grad_mask = list(grad_mask)
            # per gradient computed in a caller's array: (its index, its input's, shape, dtype)
            inputs_wanted = [i for i, need in enumerate(grad_mask) if need]
            self.grad_targets = [
                (i, inputs_wanted[i], tuple(bwd_shapes[grad_entries[i]]),
                 bwd_dtypes[grad_entries[i]])
                for i in _grad_targets(grad_entries, input_entries + needed + head_entries,
                                       bwd_shapes, bwd_dtypes)]
        src, g, timed_src = _generate('forward', fwd_args, op_nodes, outputs + self.saved,
                                      self.shapes, self.dtypes, is_train,
                                      _Namespace(reserved=_RESERVED), ctx.array_module, hooks,
                                      static_alloc)
        self.forward = self._compile(src, g, 'forward', tag)
        self._timed_sources['forward'] = (timed_src, g, tag)
        self.code = src
        if wrt:     # the backward of the forward's own mode; the other one when asked for
            self.code += '\n\n' + self._compile_backward(is_train)

    def _compile(self, source, globals_, name, tag):
        fn, filename = _compile(source, dict(globals_, xp=self.ctx.array_module), name, tag)
        self.filenames.append(filename)
        return fn

    def _compile_backward(self, mode):
        args, nodes, grads, shapes, dtypes, static_alloc = self._backward_graph
        src, g, timed_src = _generate('backward', args, nodes, grads, shapes, dtypes, mode,
                                      _Namespace(reserved=_RESERVED), self.ctx.array_module,
                                      static_alloc=static_alloc,
                                      targets=[grads[t[0]] for t in self.grad_targets])
        tag = 'train' if mode else 'infer'
        self._backward[mode] = self._compile(src, g, 'backward', tag)
        self._timed_sources[('backward', mode)] = (timed_src, g, tag)
        return src

    def backward(self, mode):
        """The backward function for ``autograd.backward(train_mode=mode)``."""
        if mode not in self._backward:
            self._compile_backward(mode)
        return self._backward[mode]

    def timed_forward(self):
        """The forward's timed variant (each operator recorded by the profiler)."""
        return self._timed.get('forward') or self._compile_timed('forward')

    def timed_backward(self, mode):
        """The timed variant of ``backward(mode)``."""
        key = ('backward', mode)
        if key not in self._timed:
            self.backward(mode)
            self._compile_timed(key)
        return self._timed[key]

    def _compile_timed(self, key):
        source, globals_, tag = self._timed_sources[key]
        timers = {'_clock': profiler.clock, '_record': profiler.operator_timer(self.ctx)}
        name = key if isinstance(key, str) else key[0]
        self._timed[key] = self._compile(source, dict(globals_, **timers), name,
                                         f'{tag}-timed')
        return self._timed[key]

    @property
    def timed_code(self):
        """The source of the timed variants (forward, and each backward compiled so far)."""
        return '\n\n'.join(source for source, _, _ in self._timed_sources.values())

    def call(self, fn, args):
        """``fn(*args)`` (the forward or a backward) holding the plan's lock when it has
        static buffers, with cupy's current device that of the plan's context."""
        if self.lock is None and not self.on_gpu:
            return fn(*args)
        with self.lock or contextlib.nullcontext(), self.ctx.device_scope():
            return fn(*args)

    def release(self):
        """Forget the generated source kept for tracebacks."""
        _forget(self.filenames)


def _forget(filenames):
    for filename in filenames:
        linecache.cache.pop(filename, None)


def signature(arrays, ctx, is_train, shaped=None):
    """The one key of compiled code: per array (anything with ``shape`` and ``dtype``) its dtype,
    and its shape where ``shaped`` says (a bool per array; default all), then the context and
    the mode. A CachedOp keys its plans by it over every input, with the gradients wanted; a
    HybridBlock keys its traces by it over its inputs (their shapes only where tracing read
    them) and its parameters, with the argument structure and AMP's input rule
    (``tracing.trace_key``)."""
    if shaped is None:
        shapes = tuple([a.shape for a in arrays])
    else:
        shapes = tuple([a.shape if keep else None for a, keep in zip(arrays, shaped)])
    return (shapes, tuple([a.dtype for a in arrays]), ctx, is_train)


class CachedOp:
    """A graph (``Symbol``) compiled for fast repeated calls on NDArrays.

    ``CachedOp(symbol, flags)(*arrays)`` takes one NDArray per ``symbol.list_inputs()`` name, in
    that order, and returns the outputs. Flags: ``static_alloc`` (keep a buffer plan across
    calls), ``static_shape`` (the inputs keep their shapes).
    """

    def __init__(self, symbol, flags=()):
        flags = dict(flags)
        unknown = set(flags) - set(VALID_FLAGS)
        if unknown:
            raise TypeError(f'unknown CachedOp flags {sorted(unknown)}; valid flags are '
                            f'{", ".join(VALID_FLAGS)}')
        self.flags = flags
        self._symbol = symbol
        nodes = topo_nodes(symbol._outputs)
        self._input_nodes = [n for n in nodes if n.op is None]
        self.input_names = [n.name for n in self._input_nodes]
        aux = {id(e[0]) for n in nodes for e in n.aux_inputs()}
        self._differentiable = [id(n) not in aux for n in self._input_nodes]
        self._plans = {}
        self._last = (None, None)       # (key, plan), one tuple: read whole by any thread
        self._plans_lock = threading.Lock()
        self._hook = None

    @property
    def code(self):
        """The generated source of the most recent plan (forward, and backward if recorded)."""
        plan = self._last[1]
        return None if plan is None else plan.code

    def register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(node_name, op_name, array)`` on each operator output."""
        self._hook = callback
        self._hook_mode = 'all' if monitor_all else 'outputs'
        self.release()

    def release(self):
        """Forget every plan (and its source kept for tracebacks)."""
        with self._plans_lock:
            for plan in self._plans.values():
                plan.release()
            self._plans.clear()
            self._last = (None, None)

    def _plan(self, datas, ctx, is_train, grad_mask):
        key = signature(datas, ctx, is_train) + (grad_mask,)
        last_key, last_plan = self._last
        if key == last_key:
            return last_plan
        with self._plans_lock:
            plan = self._plans.pop(key, None)
            if plan is not None:
                self._plans[key] = plan             # most recently used last
            else:
                if len(self._plans) >= MAX_PLANS:   # many input shapes: forget the oldest
                    self._plans.pop(next(iter(self._plans))).release()
                with ctx.device_scope():            # its static buffers live on ctx's device
                    plan = Plan(self._symbol, self._input_nodes, key[0], key[1], ctx,
                                is_train, grad_mask, self._hook and self._hook_mode,
                                self.flags.get('static_alloc', False))
                self._plans[key] = plan
            self._last = (key, plan)
        return plan

    def __call__(self, *arrays):
        if len(arrays) != len(self._input_nodes):
            raise MXNetError(f'CachedOp takes {len(self._input_nodes)} inputs '
                             f'({", ".join(self.input_names)}), got {len(arrays)}')
        ctx = arrays[0]._ctx
        for name, a in zip(self.input_names, arrays):
            if a._ctx != ctx:
                raise MXNetError(f'CachedOp input {name!r} is on {a._ctx}, the others on {ctx}')
        return self.run(arrays, ctx)

    def run(self, arrays, ctx):
        """The outputs for ``arrays``, all on ``ctx`` (checked by the caller)."""
        is_train = autograd.is_training()
        grad_mask = ()
        if autograd.is_recording():
            grad_mask = tuple([a._entry is not None and d
                               for a, d in zip(arrays, self._differentiable)])
            if not any(grad_mask):
                grad_mask = ()
        datas = [a._data for a in arrays]
        plan = self._plan(datas, ctx, is_train, grad_mask)
        # the timed variant while the profiler times operators: one check per call
        forward = plan.timed_forward() if profiler.active.symbolic else plan.forward
        if self._hook is None:
            results = plan.call(forward, datas)
        else:
            forward.__globals__['_hook'] = self._hook_ndarray(ctx)
            with autograd.pause(is_train):      # what the callback does is not recorded
                results = plan.call(forward, datas)
        outs = [NDArray(r, ctx) for r in results[:plan.n_outputs]]
        if grad_mask:
            saved = [NDArray(r, ctx) for r in results[plan.n_outputs:]]
            autograd.record_op(_BackwardOp.for_plan(plan, self), Params(), list(arrays),
                               outs + saved, is_train)
        return outs

    def _hook_ndarray(self, ctx):
        hook = self._hook

        def call(node_name, op_name, data):
            hook(node_name, op_name, NDArray(data, ctx))
        return call

    def interpret(self, *arrays):
        """The same outputs computed node by node by the reference interpreter."""
        values = {(n, 0): a for n, a in zip(self._input_nodes, arrays)}
        nodes = topo_nodes(self._symbol._outputs)
        run_graph(nodes, values, autograd.is_training())
        return [values[e] for e in self._symbol._outputs]


class NDArrayCachedOp(CachedOp):
    """``mx.nd.CachedOp(sym, flags)``: MXNet's calling convention around a CachedOp.

    ``op(*arrays, out=None, default_ctx=None)`` returns the single output as an NDArray (a
    list for several), or writes them into ``out``.
    """

    def __call__(self, *args, out=None, default_ctx=None):
        outs = super().__call__(*args)
        if out is not None:
            targets = out if isinstance(out, (list, tuple)) else [out]
            if len(targets) != len(outs):
                raise MXNetError(f'CachedOp has {len(outs)} outputs, out= gives '
                                 f'{len(targets)} arrays')
            for target, value in zip(targets, outs):
                target[:] = value
            return out
        return outs[0] if len(outs) == 1 else outs


class _BackwardOp(OpDef):
    """The tape entry of a recorded CachedOp call: its gradient runs the plan's backward."""

    def __init__(self, plan, cached_op):
        super().__init__('_CachedOp', compute=None, gradient=self._gradient,
                         num_outputs=plan.n_outputs + len(plan.saved),
                         num_visible_outputs=plan.n_outputs)
        self._plan = plan
        self._cached_op = cached_op

    @classmethod
    def for_plan(cls, plan, cached_op):
        op = getattr(plan, '_tape_op', None)
        if op is None:
            op = plan._tape_op = cls(plan, cached_op)
        return op

    def _gradient(self, F, attrs, inputs, outputs, ograds):
        plan = self._plan
        if autograd.is_recording():
            raise NotSupportedError(
                'gradients of gradients (create_graph=True) through a hybridized block are not '
                'supported; call hybridize(active=False) on it for higher-order gradients')
        ctx = plan.ctx
        xp = ctx.array_module
        heads = []
        for g, out in zip(ograds[:plan.n_outputs], outputs[:plan.n_outputs]):
            heads.append(xp.zeros_like(out._data) if g is None else g._data)
        saved = [o._data for o in outputs[plan.n_outputs:]]
        mode = autograd.is_training()          # the mode of autograd.backward(train_mode=...)
        backward = plan.timed_backward(mode) if profiler.active.symbolic else \
            plan.backward(mode)
        args = [x._data for x in inputs] + saved + heads
        targets = _grad_targets_given(plan, inputs, args)
        with autograd.pause(mode):
            grads = plan.call(backward, args + targets if targets else args)
        result = []
        it = iter(grads)
        for need in plan.grad_mask:
            result.append(NDArray(next(it), ctx) if need else None)
        return result


def _grad_targets_given(plan, inputs, args):
    """The arrays the backward computes its gradients in (``Plan.grad_targets``): the inputs'
    ``.grad`` where the tape allows it (``tape.grad_target``) and the buffer fits
    (C-contiguous, the gradient's shape and dtype, sharing no memory with the backward's
    inputs; it may be a view, as the gradients a distributed Trainer sums in one buffer);
    None elsewhere. An empty list when there are none."""
    if not plan.grad_targets:
        return []
    targets, found = [], False
    owners = None
    for _, input_index, shape, dtype in plan.grad_targets:
        buf = grad_target(inputs[input_index]._entry)
        data = None if buf is None else buf._data
        if data is not None and data.shape == shape and data.dtype == dtype \
                and data.flags.c_contiguous:
            if owners is None:
                owners = {id(a) if a.base is None else id(a.base) for a in args}
            if id(data if data.base is None else data.base) not in owners:
                found = True
                targets.append(data)
                continue
        targets.append(None)
    return targets if found else []
