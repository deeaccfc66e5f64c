"""One harness for every operator test case.

A test module under ``tests/ops`` lists ``CASES = [Case(...), ...]`` and runs them with
``check_case``. For each case the harness checks, against the registry's definition:

1. forward on NDArrays (float64) against the case's numpy reference;
2. shape inference against the actual output shapes, also with every input shape unknown in
   turn and every single dimension unknown (0) in turn: what it returns must agree with the
   truth, and it must not fail;
3. dtype inference against the actual output dtypes, and a float32 run close to float64;
4. the body's ``out=`` (what a compiled graph's buffers use), for an operator whose body takes
   one: it returns the buffer it is given with what ``compute`` returns without one (fresh
   arrays), with the case's inputs and with them as float32, also written into an input that
   the ``inplace`` hint names;
5. gradients from autograd against central finite differences of ``sum(out_i * cot_i)``;
6. the Symbol path: composition, ``infer_shape``/``infer_type``, evaluation by the graph
   interpreter, the backward graph (``Executor.backward``) and a JSON round trip, all equal to
   the NDArray path;
7. the compiled graph (``CachedOp``), ``static_alloc`` off and on: the operator as one node
   whose output 0 feeds a ``_copy`` (a graph output never gets a static buffer, so this is what
   reaches ``out=``). Its outputs and the inputs it mutates (aux) equal the imperative ones; so
   do those of a second call on other values, which must leave the first call's outputs as
   they were; and its generated backward gives imperative autograd's gradients;
8. second-order gradients (``create_graph=True``) against finite differences of the first;
9. on a GPU when one is present, the same forward and gradients as on the CPU, and the checks
   of 7 on the GPU.

``tests/ops/test_coverage.py`` fails if a registered operator has no case, and, running each
case's compiled graph (``run_compiled``), if a specialisation or engine path is reached by none.
"""
import numpy as np

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.cached_op import CachedOp
from hybridlib.ops import registry
from hybridlib.ops.frontend import bind_arguments

__all__ = ['Case', 'check_case', 'run_compiled', 'uniform', 'ints', 'normal', 'positive',
           'away_from', 'numeric_vjp']

FLOATS = (np.float16, np.float32, np.float64)


# -------------------------------------------------------------------------------------------------
# Input builders: each returns a function of a numpy Generator that makes one input
# -------------------------------------------------------------------------------------------------

def normal(shape, scale=1.0):
    return lambda rng: rng.normal(0, scale, size=shape)


def uniform(shape, low=-1.0, high=1.0):
    return lambda rng: rng.uniform(low, high, size=shape)


def positive(shape, low=0.5, high=2.0):
    return uniform(shape, low, high)


def away_from(shape, points=(0.0,), margin=0.1, low=-1.0, high=1.0):
    """Uniform values at least ``margin`` from each of ``points`` (kinks of the function)."""
    def make(rng):
        x = rng.uniform(low, high, size=shape)
        for p in points:
            near = np.abs(x - p) < margin
            x = np.where(near, p + np.sign(x - p + 1e-12) * margin * 1.5, x)
        return x
    return make


def ints(shape, low, high, dtype=np.int32):
    """Integer values in [low, high) (for indices); not differentiated."""
    return lambda rng: rng.integers(low, high, size=shape).astype(dtype)


def numeric_vjp(fn, inputs, cot, which, eps=1e-6):
    """Central differences of ``sum(fn(*inputs) * cot)`` with respect to ``inputs[which]``."""
    grads = []
    for i in which:
        grad = np.zeros_like(inputs[i])
        for j in np.ndindex(inputs[i].shape):
            plus = [x.copy() for x in inputs]
            minus = [x.copy() for x in inputs]
            plus[i][j] += eps
            minus[i][j] -= eps
            grad[j] = np.sum((fn(*plus) - fn(*minus)) * cot) / (2 * eps)
        grads.append(grad)
    return grads


def _make_input(spec, rng):
    if callable(spec):
        value = spec(rng)
    elif isinstance(spec, np.ndarray):
        value = spec
    elif isinstance(spec, (tuple, list)):
        value = rng.uniform(-1, 1, size=spec)
    else:
        raise TypeError(f'bad input spec {spec!r}')
    value = np.asarray(value)
    if value.dtype.kind == 'f':
        value = value.astype(np.float64)
    return value


class Case:
    """One operator call to check.

    Parameters
    ----------
    op : str
        Registered name (canonical or alias) of the operator.
    inputs : list
        One spec per input: a shape (uniform in [-1, 1)), a numpy array, or a builder
        (``uniform``, ``positive``, ``ints``, ...).
    attrs : dict
        Attributes, passed as keyword arguments.
    ref : callable or None
        ``ref(*numpy_inputs, **attrs)`` -> the expected visible output(s), computed in float64.
        For random operators, a checker ``ref(outputs, *numpy_inputs, **attrs)`` that asserts.
    grad : bool
        Check gradients numerically (False for operators without a meaningful derivative).
    grad_inputs : list of int or None
        Inputs to differentiate (default: every float input).
    grad_ref : callable or None
        For operators whose registered gradient is on purpose not the derivative of the forward
        (``make_loss``, ``SoftmaxOutput``): ``grad_ref(cotangents, *inputs, **attrs)`` -> the
        expected input gradients, checked instead of finite differences.
    second_order : bool
        Also check gradients of gradients.
    train : bool
        Run in training mode (for train-aware operators).
    random : bool
        The operator draws random numbers: outputs are checked by ``ref`` as a checker, and the
        NDArray and Symbol paths are compared with the same seed.
    """

    def __init__(self, op, inputs=(), attrs=None, ref=None, *, name=None, grad=True,
                 grad_inputs=None, grad_ref=None, second_order=True, train=False, random=False,
                 rtol=1e-5, atol=1e-7, grad_rtol=1e-4, grad_atol=1e-6, f32_rtol=1e-3,
                 f32_atol=1e-4, check_float32=True, check_symbol=True, seed=0, eps=1e-6):
        self.op = op
        self.inputs = list(inputs)
        self.attrs = dict(attrs or {})
        self.ref = ref
        self.name = name
        self.grad = grad
        self.grad_inputs = grad_inputs
        self.grad_ref = grad_ref
        self.second_order = second_order
        self.train = train
        self.random = random
        self.rtol, self.atol = rtol, atol
        self.grad_rtol, self.grad_atol = grad_rtol, grad_atol
        self.f32_rtol, self.f32_atol = f32_rtol, f32_atol
        self.check_float32 = check_float32
        self.check_symbol = check_symbol
        self.seed = seed
        self.eps = eps

    def __repr__(self):
        return f'{self.op}-{self.name}' if self.name else self.op

    @property
    def opdef(self):
        return registry.get(self.op)


# -------------------------------------------------------------------------------------------------
# Running one case
# -------------------------------------------------------------------------------------------------

def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _call_nd(case, arrays):
    mx.random.seed(case.seed)
    fn = getattr(nd.op, case.op)
    with autograd.train_mode() if case.train else autograd.predict_mode():
        return _as_list(fn(*arrays, **case.attrs))


def _nd_inputs(values, ctx=None, dtype=None):
    out = []
    for v in values:
        if dtype is not None and v.dtype.kind == 'f':
            v = v.astype(dtype)
        out.append(nd.array(v, ctx=ctx, dtype=v.dtype))
    return out


def _diff_inputs(case, values):
    if case.grad_inputs is not None:
        return list(case.grad_inputs)
    return [i for i, v in enumerate(values) if v.dtype.kind == 'f']


def _cotangents(outputs, rng):
    return [rng.uniform(-1, 1, size=o.shape).astype(o.dtype) if o.dtype.kind == 'f'
            else np.zeros(o.shape, o.dtype) for o in outputs]


def _loss(case, values, cots):
    outs = _call_nd(case, _nd_inputs(values))
    return sum(float(np.sum(o.asnumpy().astype(np.float64) * c)) for o, c in zip(outs, cots))


def _autograd_grads(case, values, cots, which, ctx=None):
    arrays = _nd_inputs(values, ctx=ctx)
    for i in which:
        arrays[i].attach_grad()
    mx.random.seed(case.seed)
    fn = getattr(nd.op, case.op)
    with autograd.record(train_mode=case.train):
        outs = _as_list(fn(*arrays, **case.attrs))
    autograd.backward(outs, [nd.array(c, ctx=ctx, dtype=c.dtype) for c in cots],
                      train_mode=case.train)
    return [arrays[i].grad.asnumpy() for i in which]


def _numeric_grads(case, values, cots, which):
    grads = []
    for i in which:
        g = np.zeros_like(values[i])
        flat = g.reshape(-1)
        for j in range(values[i].size):
            plus = [v.copy() for v in values]
            minus = [v.copy() for v in values]
            plus[i].reshape(-1)[j] += case.eps
            minus[i].reshape(-1)[j] -= case.eps
            flat[j] = (_loss(case, plus, cots) - _loss(case, minus, cots)) / (2 * case.eps)
        grads.append(g)
    return grads


def _close(actual, expected, rtol, atol, what):
    actual = np.asarray(actual, dtype=np.float64) if np.asarray(actual).dtype.kind in 'fiub' \
        else actual
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def check_case(case):
    rng = np.random.default_rng(case.seed + 12345)
    op = case.opdef
    values = [_make_input(s, rng) for s in case.inputs]
    arrays = _nd_inputs(values)
    outs = _call_nd(case, arrays)
    out_np = [o.asnumpy() for o in outs]

    _check_forward(case, values, out_np)
    _check_inference(case, op, arrays, outs)
    if case.check_float32:
        _check_float32(case, values, out_np)
    _check_body_out(case, op, values)
    which = _diff_inputs(case, values) if case.grad else []
    cots = _cotangents(out_np, rng)
    grads = None
    if which:
        grads = _autograd_grads(case, values, cots, which)
        if case.grad_ref is not None:
            expected = _as_list(case.grad_ref(cots, *values, **case.attrs))
            for i, g, e in zip(which, grads, [expected[i] for i in which]):
                _close(g, e, case.grad_rtol, case.grad_atol, f'{case}: gradient of input {i}')
        else:
            numeric = _numeric_grads(case, values, cots, which)
            for i, g, e in zip(which, grads, numeric):
                _close(g, e, case.grad_rtol, case.grad_atol,
                       f'{case}: autograd vs finite differences, input {i}')
    if case.check_symbol:
        _check_symbol(case, values, out_np, cots, which, grads)
        _check_compiled(case, values, cots, which, grads, mx.cpu())
    if which and case.second_order and case.grad_ref is None:
        _check_second_order(case, values, cots, which[0], rng)
    if mx.num_gpus() > 0:
        _check_gpu(case, values, out_np, cots, which, grads)
        if case.check_symbol:
            gpu_grads = _autograd_grads(case, values, cots, which, mx.gpu(0)) if which else None
            _check_compiled(case, values, cots, which, gpu_grads, mx.gpu(0))


def _check_forward(case, values, out_np):
    if case.ref is None:
        return
    if case.random:
        case.ref(out_np, *values, **case.attrs)
        return
    expected = _as_list(case.ref(*values, **case.attrs))
    assert len(expected) == len(out_np), \
        f'{case}: {len(out_np)} outputs, the reference gives {len(expected)}'
    for k, (o, e) in enumerate(zip(out_np, expected)):
        e = np.asarray(e)
        assert o.shape == e.shape, f'{case}: output {k} has shape {o.shape}, expected {e.shape}'
        _close(o, e, case.rtol, case.atol, f'{case}: output {k} vs the numpy reference')


def _check_inference(case, op, arrays, outs):
    """Shapes and dtypes from the registry agree with what compute produced (all outputs)."""
    inputs, params, _, _ = bind_arguments(op, list(arrays), dict(case.attrs), ())
    mx.random.seed(case.seed)
    with autograd.train_mode() if case.train else autograd.predict_mode():
        all_outs = nd.invoke_all(op, inputs, params, is_train=case.train)
    shapes = [x.shape for x in inputs]
    in_shapes, out_shapes = op.infer_shapes(params, shapes)
    actual = [o.shape for o in all_outs]
    assert list(out_shapes) == actual, \
        f'{case}: infer_shape gives {out_shapes}, compute gives {actual}'
    for s, x in zip(in_shapes, shapes):
        assert s is None or tuple(s) == tuple(x), f'{case}: infer_shape changed input {x} to {s}'
    # partial knowledge: nothing may fail, and what is inferred must agree with the truth
    trials = [[None if j == i else s for j, s in enumerate(shapes)] for i in range(len(shapes))]
    for i, s in enumerate(shapes):
        for d in range(len(s)):
            trials.append([tuple(0 if (j == i and k == d) else v for k, v in enumerate(t))
                           for j, t in enumerate(shapes)])
    for trial in trials:
        got_in, got_out = op.infer_shapes(params, trial)
        for got, truth in zip(list(got_in) + list(got_out), shapes + actual):
            if got is not None:
                assert len(got) == len(truth) and all(g in (0, t) for g, t in zip(got, truth)), \
                    f'{case}: with input shapes {trial}, inferred {got} disagrees with {truth}'
    in_types, out_types = op.infer_types(params, [x._data.dtype for x in inputs])
    actual_types = [o._data.dtype for o in all_outs]
    assert list(out_types) == actual_types, \
        f'{case}: infer_type gives {out_types}, compute gives {actual_types}'


def _check_float32(case, values, out_np):
    if not any(v.dtype.kind == 'f' for v in values) and not case.attrs.get('dtype'):
        return
    arrays = _nd_inputs(values, dtype=np.float32)
    outs = _call_nd(case, arrays)
    for k, (o, ref) in enumerate(zip(outs, out_np)):
        if ref.dtype == np.float64 and not case.attrs.get('dtype'):
            assert o.dtype == np.float32, f'{case}: float32 inputs give a {o.dtype} output {k}'
        if not case.random:
            _close(o.asnumpy(), ref, case.f32_rtol, case.f32_atol,
                   f'{case}: float32 output {k} vs float64')


# tight tolerances per float size: the compiled graph and the body's out= run the same maths
_SAME_TOL = {8: 1e-12, 4: 1e-6, 2: 1e-3}


def _same(actual, expected, what, tol=None):
    """Equal up to rounding: ``tol`` (default by float size) for floats, exact otherwise."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, \
        f'{what}: {actual.dtype} {actual.shape}, expected {expected.dtype} {expected.shape}'
    if actual.dtype.kind in 'fc':
        tol = tol or _SAME_TOL.get(actual.dtype.itemsize, 1e-12)
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def _check_body_out(case, op, values):
    """``compute(..., out=buffer)`` returns the buffer holding what ``compute`` returns without
    one (fresh arrays, as the planner relies on), with the case's inputs and as float32."""
    if not op.writes_into:
        return
    inputs, params, _, _ = bind_arguments(op, _nd_inputs(values), dict(case.attrs), ())
    if not op.writes_into_buffer(params):      # it reads out= (reads_out): never given a buffer
        return
    datas = [x._data for x in inputs]
    _check_body_out_on(case, op, params, datas)
    if any(d.dtype == np.float64 for d in datas):      # specialisations branch on the dtype
        _check_body_out_on(case, op, params,
                           [d.astype(np.float32) if d.dtype == np.float64 else d for d in datas])


def _check_body_out_on(case, op, params, before):
    train = {'is_train': bool(case.train)} if op.train_aware else {}

    def call(datas, **out):
        mx.random.seed(case.seed)
        result = op.compute(np, params, *datas, **train, **out)
        return list(result) if isinstance(result, (tuple, list)) else [result]

    datas = [d.copy() for d in before]
    expected = call(datas)
    kind = expected[0].dtype
    if kind.kind != 'f':
        return
    for k, o in enumerate(expected):
        assert not any(np.may_share_memory(o, d) for d in datas), \
            f'{case}: compute output {k} ({kind}) shares memory with an input; a body that ' \
            'takes out= must return fresh arrays without one'
    checks = [(None, f'out= ({kind})')]
    checks += [(i, f'out= input {i}, its inplace hint ({kind})') for i, k in op.inplace
               if k == 0 and i < len(before) and before[i].shape == expected[0].shape
               and before[i].dtype == kind]
    for i, what in checks:
        written = [d.copy() for d in before]
        buffer = np.full_like(expected[0], np.nan) if i is None else written[i]
        got = call(written, out=buffer)
        assert got[0] is buffer, f'{case}: {what}: the body must return the buffer it is given'
        assert len(got) == len(expected), f'{case}: {what}: {len(got)} outputs'
        for k, (g, e) in enumerate(zip(got, expected)):
            _same(g, e, f'{case}: {what}: output {k} vs compute')
        if i is None:
            for k in op.aux_indices(params):
                _same(written[k], datas[k], f'{case}: {what}: aux input {k} vs compute')


def _symbol_inputs(values):
    return [sym.var(f'in{i}') for i in range(len(values))]


def _check_symbol(case, values, out_np, cots, which, grads):
    variables = _symbol_inputs(values)
    fn = getattr(sym.op, case.op)
    s = fn(*variables, **case.attrs)
    _, params, _, _ = bind_arguments(case.opdef, list(variables), dict(case.attrs), ())
    n_visible = case.opdef.num_visible_outputs(params)
    assert len(s.list_outputs()) == len(out_np) == n_visible, \
        f'{case}: the Symbol lists {s.list_outputs()} for {len(out_np)} NDArray outputs'
    names = [f'in{i}' for i in range(len(values))]
    shapes = {n: v.shape for n, v in zip(names, values)}
    inputs_present = [n for n in names if n in s.list_inputs()]
    _, out_shapes, _ = s.infer_shape(**{n: shapes[n] for n in inputs_present})
    assert out_shapes == [o.shape for o in out_np], \
        f'{case}: Symbol.infer_shape gives {out_shapes}, NDArrays have {[o.shape for o in out_np]}'
    dtypes = {n: v.dtype for n, v in zip(names, values)}
    _, out_types, _ = s.infer_type(**{n: dtypes[n] for n in inputs_present})
    assert [np.dtype(t) for t in out_types] == [o.dtype for o in out_np], \
        f'{case}: Symbol.infer_type gives {out_types}'
    # the graph interpreter gives what the NDArray path gave
    arrays = {n: a for n, a in zip(names, _nd_inputs(values)) if n in inputs_present}
    mx.random.seed(case.seed)
    with autograd.train_mode() if case.train else autograd.predict_mode():
        evaluated = s.eval(**arrays)
    for k, (o, e) in enumerate(zip(evaluated, out_np)):
        _close(o.asnumpy(), e, 1e-12, 1e-12, f'{case}: Symbol.eval output {k} vs NDArray')
    # JSON round trip: same text, same values
    text = s.tojson()
    again = sym.fromjson(text)
    assert again.tojson() == text, f'{case}: JSON round trip changed the graph'
    mx.random.seed(case.seed)
    with autograd.train_mode() if case.train else autograd.predict_mode():
        reloaded = again.eval(**arrays)
    for k, (o, e) in enumerate(zip(reloaded, out_np)):
        _close(o.asnumpy(), e, 1e-12, 1e-12, f'{case}: reloaded Symbol output {k}')
    if not which or grads is None:
        return
    # the backward graph gives what imperative autograd gave
    args = s.list_arguments()
    wrt = [names[i] for i in which if names[i] in args]
    grad_arrays = {n: nd.zeros(shapes[n], dtype=dtypes[n]) for n in wrt}
    arg_arrays = {n: arrays[n] for n in args}
    aux_arrays = {n: arrays[n].copy() for n in s.list_auxiliary_states()}
    exe = s.bind(mx.cpu(), arg_arrays, args_grad=grad_arrays, grad_req='write',
                 aux_states=aux_arrays)
    mx.random.seed(case.seed)
    exe.forward(is_train=case.train)
    exe.backward([nd.array(c, dtype=c.dtype) for c in cots], is_train=case.train)
    for i, g in zip(which, grads):
        if names[i] in grad_arrays:
            _close(grad_arrays[names[i]].asnumpy(), g, 1e-10, 1e-10,
                   f'{case}: Symbol backward graph vs autograd, input {i}')


class _Compiled:
    """The case's operator as a compiled graph over the inputs ``in0``, ``in1``, ...: output 0
    feeds a ``_copy`` whose result is returned, so that a static plan gives output 0 a buffer (a
    graph output never gets one); the other visible outputs are returned as they are. A graph
    without inputs (creation operators) also returns an input ``ctx``: a CachedOp takes its
    context from its inputs."""

    def __init__(self, case, values, static_alloc, ctx):
        outputs = list(getattr(sym.op, case.op)(*_symbol_inputs(values), **case.attrs))
        outputs[0] = sym.op._copy(outputs[0])
        self.anchor = not sym.Group(outputs).list_inputs()
        if self.anchor:
            outputs.append(sym.var('ctx'))
        graph = sym.Group(outputs)
        self.case, self.ctx = case, ctx
        self.op = CachedOp(graph, {'static_alloc': static_alloc, 'static_shape': static_alloc})
        self.order = [int(name[2:]) for name in self.op.input_names if name != 'ctx']
        arguments = set(graph.list_arguments())
        self.differentiable = {i for i in self.order if f'in{i}' in arguments}

    def inputs(self, values):
        return _nd_inputs(values, ctx=self.ctx)

    def _call(self, arrays):
        mx.random.seed(self.case.seed)
        if self.anchor:
            return self.op(nd.zeros((1,), ctx=self.ctx))[:-1]
        return self.op(*[arrays[i] for i in self.order])

    def forward(self, arrays):
        with autograd.train_mode() if self.case.train else autograd.predict_mode():
            return self._call(arrays)

    def gradients(self, arrays, cots, which):
        """The gradients of ``which`` from the compiled backward (a recorded call)."""
        for i in which:
            arrays[i].attach_grad()
        with autograd.record(train_mode=self.case.train):
            outs = self._call(arrays)
        autograd.backward(outs, [nd.array(c, ctx=self.ctx, dtype=c.dtype) for c in cots],
                          train_mode=self.case.train)
        return [arrays[i].grad.asnumpy() for i in which]


def run_compiled(case, rng, dtype=None):
    """The case's compiled forward with ``static_alloc`` on inputs drawn from ``rng`` (float
    inputs as ``dtype`` if given), then its compiled backward where the case has gradients;
    nothing compared (``test_coverage.py`` runs it to see which bodies the cases reach). With
    ``dtype`` and no float input, nothing is run."""
    values = [_make_input(s, rng) for s in case.inputs]
    if dtype is not None:
        if not any(v.dtype.kind == 'f' for v in values):
            return
        values = [v.astype(dtype) if v.dtype.kind == 'f' else v for v in values]
    compiled = _Compiled(case, values, True, mx.cpu())
    outs = [o.asnumpy() for o in compiled.forward(compiled.inputs(values))]
    which = [i for i in _diff_inputs(case, values) if i in compiled.differentiable] \
        if case.grad else []
    if which:
        compiled.gradients(compiled.inputs(values), _cotangents(outs, rng), which)


def _imperative(case, values, ctx):
    """Visible outputs (numpy) and the input NDArrays after an imperative call (aux moved)."""
    arrays = _nd_inputs(values, ctx=ctx)
    with ctx:   # where creation operators put their result
        return [o.asnumpy() for o in _call_nd(case, arrays)], arrays


def _check_compiled(case, values, cots, which, grads, ctx):
    """The compiled graph against imperative calls on ``ctx`` (``grads``: autograd's there)."""
    op = case.opdef
    _, params, _, _ = bind_arguments(op, _nd_inputs(values), dict(case.attrs), ())
    aux = set(op.aux_indices(params))
    other = [_make_input(s, np.random.default_rng(case.seed + 777)) for s in case.inputs]
    expected = _imperative(case, values, ctx)
    expected_other = _imperative(case, other, ctx)
    for static_alloc in (False, True):
        what = f'{case}: compiled, static_alloc={static_alloc}, on {ctx}'
        compiled = _Compiled(case, values, static_alloc, ctx)
        arrays = compiled.inputs(values)
        first = compiled.forward(arrays)
        kept = _check_compiled_call(what, first, arrays, values, expected, aux)
        if static_alloc:
            _check_buffer_used(what, op, params, compiled, kept[0])
        arrays = compiled.inputs(other)
        _check_compiled_call(f'{what}, second call on other values', compiled.forward(arrays),
                             arrays, other, expected_other, aux)
        for k, (o, e) in enumerate(zip(first, kept)):
            np.testing.assert_array_equal(o.asnumpy(), e, err_msg=f'{what}: output {k} of '
                                          'the first call changed by the second')
        use = [i for i in which if i in compiled.differentiable] if grads is not None else []
        if use:
            got = compiled.gradients(compiled.inputs(values), cots, use)
            for i, g in zip(use, got):
                _same(g, grads[which.index(i)], f'{what}: backward vs autograd, input {i}',
                      tol=1e-10 if g.dtype == np.float64 else None)


def _check_compiled_call(what, outs, arrays, values, expected, aux):
    """Outputs and mutated (aux) inputs as the imperative call's; other inputs untouched."""
    expected_outs, expected_arrays = expected
    assert len(outs) == len(expected_outs), f'{what}: {len(outs)} outputs'
    got = [o.asnumpy() for o in outs]
    for k, (o, e) in enumerate(zip(got, expected_outs)):
        _same(o, e, f'{what}: output {k} vs imperative')
    for i, (a, v) in enumerate(zip(arrays, values)):
        if i in aux:
            _same(a.asnumpy(), expected_arrays[i].asnumpy(), f'{what}: aux input {i}')
        else:
            np.testing.assert_array_equal(a.asnumpy(), v, err_msg=f'{what}: input {i} changed')
    return [o.copy() for o in got]


def _check_buffer_used(what, op, params, compiled, first):
    """With static_alloc, output 0 (read by the ``_copy``, whose body writes into buffers too)
    is written into a planned buffer when the body can write into one: so these checks reach
    the out= path."""
    if not op.writes_into_buffer(params) or op.reshapes or first.dtype.kind != 'f' or \
            not first.size:
        return
    line = next(line for line in compiled.op.code.splitlines() if line.endswith(f'# {op.name}'))
    assert 'out=' in line, f'{what}: output 0 is not written into a buffer:\n{compiled.op.code}'


def _grad_at(case, values, cots, i, create_graph=False):
    arrays = _nd_inputs(values)
    arrays[i].attach_grad()
    mx.random.seed(case.seed)
    fn = getattr(nd.op, case.op)
    with autograd.record(train_mode=case.train):
        outs = _as_list(fn(*arrays, **case.attrs))
        heads = [nd.array(c, dtype=c.dtype) for c in cots]
        g = autograd.grad(outs, [arrays[i]], head_grads=heads, create_graph=create_graph,
                          train_mode=case.train)[0]
    return arrays, g


def _check_second_order(case, values, cots, i, rng):
    """d/dx sum(v * dL/dx) against finite differences of dL/dx."""
    v = rng.uniform(-1, 1, size=values[i].shape)
    arrays, g = _grad_at(case, values, cots, i, create_graph=True)
    if g._entry is None:
        # the gradient does not depend on the input: the second derivative is zero
        analytic = np.zeros_like(values[i])
    else:
        g.backward(nd.array(v, dtype=g.dtype), train_mode=case.train)
        analytic = arrays[i].grad.asnumpy()
    numeric = np.zeros_like(values[i])
    flat = numeric.reshape(-1)
    for j in range(values[i].size):
        plus = [x.copy() for x in values]
        minus = [x.copy() for x in values]
        plus[i].reshape(-1)[j] += case.eps
        minus[i].reshape(-1)[j] -= case.eps
        gp = _grad_at(case, plus, cots, i)[1].asnumpy()
        gm = _grad_at(case, minus, cots, i)[1].asnumpy()
        flat[j] = np.sum((gp - gm) * v) / (2 * case.eps)
    _close(analytic, numeric, case.grad_rtol * 10, case.grad_atol * 10,
           f'{case}: second-order gradient of input {i}')


def _check_gpu(case, values, out_np, cots, which, grads):
    ctx = mx.gpu(0)
    with ctx:
        outs = _call_nd(case, _nd_inputs(values, ctx=ctx))
    for k, (o, e) in enumerate(zip(outs, out_np)):
        if not case.random:
            _close(o.asnumpy(), e, 1e-9, 1e-9, f'{case}: gpu output {k} vs cpu')
    if which and grads is not None and not case.random:   # cupy draws other numbers
        arrays = _nd_inputs(values, ctx=ctx)
        for i in which:
            arrays[i].attach_grad()
        mx.random.seed(case.seed)
        with autograd.record(train_mode=case.train):
            gouts = _as_list(getattr(nd.op, case.op)(*arrays, **case.attrs))
        autograd.backward(gouts, [nd.array(c, ctx=ctx, dtype=c.dtype) for c in cots],
                          train_mode=case.train)
        for i, g in zip(which, grads):
            _close(arrays[i].grad.asnumpy(), g, 1e-9, 1e-9, f'{case}: gpu gradient {i}')
