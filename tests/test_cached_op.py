"""The CachedOp: generated code vs the node-by-node interpreter vs imperative NDArray code,
the static buffer plan, recording as one tape entry, and tracebacks into generated lines."""
import traceback

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.cached_op import CachedOp
from hybridlib.planner import plan_buffers
from hybridlib.graph import topo_nodes

RNG = np.random.default_rng(0)


def _graphs():
    """(name, symbol, input shapes, imperative function of NDArrays by input name)."""
    x, w, b = sym.var('x'), sym.var('w'), sym.var('b')
    mlp = sym.tanh(sym.FullyConnected(sym.relu(sym.FullyConnected(x, w, b, num_hidden=6)),
                                      sym.var('w2'), sym.var('b2'), num_hidden=3))

    def mlp_nd(x, w, b, w2, b2):
        h = nd.relu(nd.FullyConnected(x, w, b, num_hidden=6))
        return nd.tanh(nd.FullyConnected(h, w2, b2, num_hidden=3))
    chain = sym.exp(sym.sigmoid(x * 2 + 1) - x) * x / 3

    def chain_nd(x):
        return nd.exp(nd.sigmoid(x * 2 + 1) - x) * x / 3
    # a broadcast whose gradient may return its input (aliasing) and a multi-output split
    y = sym.var('y')
    parts = sym.split(x * y, num_outputs=2, axis=1)
    branch = sym.Group([parts[0] + parts[1], sym.sum(x, axis=0) * 2, x])

    def branch_nd(x, y):
        p = nd.split(x * y, num_outputs=2, axis=1)
        return [p[0] + p[1], nd.sum(x, axis=0) * 2, x]
    conv = sym.Pooling(sym.relu(sym.Convolution(x, w, b, kernel=(3, 3), num_filter=4,
                                                pad=(1, 1))), kernel=(2, 2), stride=(2, 2),
                       pool_type='max')

    def conv_nd(x, w, b):
        c = nd.relu(nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4, pad=(1, 1)))
        return nd.Pooling(c, kernel=(2, 2), stride=(2, 2), pool_type='max')
    bn = sym.BatchNorm(sym.var('x'), sym.var('g'), sym.var('be'), sym.var('mm'), sym.var('mv'),
                       fix_gamma=False)

    def bn_nd(x, g, be, mm, mv):
        return nd.BatchNorm(x, g, be, mm, mv, fix_gamma=False)
    return [
        ('mlp', mlp, dict(x=(4, 5), w=(6, 5), b=(6,), w2=(3, 6), b2=(3,)), mlp_nd),
        ('chain', chain, dict(x=(3, 4)), chain_nd),
        ('branch', branch, dict(x=(2, 4), y=(2, 4)), branch_nd),
        ('conv', conv, dict(x=(2, 3, 6, 6), w=(4, 3, 3, 3), b=(4,)), conv_nd),
        ('batchnorm', bn, dict(x=(4, 3, 2), g=(3,), be=(3,), mm=(3,), mv=(3,)), bn_nd),
    ]


def _inputs(graph, shapes):
    arrays = {}
    for name in graph.list_inputs():
        value = RNG.uniform(-1, 1, size=shapes[name])
        if name == 'mv':
            value = np.abs(value) + 0.5
        arrays[name] = nd.array(value)
    return arrays


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


@pytest.mark.parametrize('name, graph, shapes, imperative', _graphs(), ids=lambda v: v
                         if isinstance(v, str) else '')
@pytest.mark.parametrize('static_alloc', [False, True])
@pytest.mark.parametrize('train', [False, True])
def test_generated_code_matches_interpreter_and_imperative(name, graph, shapes, imperative,
                                                           static_alloc, train):
    arrays = _inputs(graph, shapes)
    names = graph.list_inputs()
    op = CachedOp(graph, {'static_alloc': static_alloc, 'static_shape': static_alloc})
    with autograd.train_mode() if train else autograd.predict_mode():
        aux = {k: v.copy() for k, v in arrays.items()}
        compiled = op(*[arrays[n] for n in names])
        interpreted = op.interpret(*[aux[n] for n in names])
        direct = {k: v.copy() for k, v in arrays.items()}
        reference = _as_list(imperative(**{k: direct[k] for k in names}))
        again = op(*[arrays[n] for n in names])      # static buffers reused: same answer
    for c, i, r, a in zip(compiled, interpreted, reference, again):
        np.testing.assert_allclose(c.asnumpy(), i.asnumpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(c.asnumpy(), r.asnumpy(), rtol=1e-6, atol=1e-7)
        if not (train and name == 'batchnorm'):      # a second training step moves the stats
            np.testing.assert_allclose(a.asnumpy(), c.asnumpy(), rtol=1e-6, atol=1e-7)
    assert 'def forward(' in op.code


@pytest.mark.parametrize('name, graph, shapes, imperative', _graphs(), ids=lambda v: v
                         if isinstance(v, str) else '')
@pytest.mark.parametrize('static_alloc', [False, True])
def test_generated_backward_matches_imperative_autograd(name, graph, shapes, imperative,
                                                        static_alloc):
    arrays = _inputs(graph, shapes)
    names = graph.list_inputs()
    aux = {'mm', 'mv'}
    op = CachedOp(graph, {'static_alloc': static_alloc})

    def run(fn, values):
        for k, v in values.items():
            if k not in aux:
                v.attach_grad()
        with autograd.record():
            outs = _as_list(fn(values))
        heads = [nd.array(np.linspace(-1, 1, o.size).reshape(o.shape)) for o in outs]
        autograd.backward(outs, heads)
        return {k: v.grad.asnumpy() for k, v in values.items() if k not in aux}

    compiled = run(lambda v: op(*[v[n] for n in names]),
                   {k: v.copy() for k, v in arrays.items()})
    direct = run(lambda v: imperative(**v), {k: v.copy() for k, v in arrays.items()})
    for key in compiled:
        np.testing.assert_allclose(compiled[key], direct[key], rtol=1e-5, atol=1e-6,
                                   err_msg=f'{name}: gradient of {key}')
    assert 'def backward(' in op.code


def test_a_recorded_call_is_one_tape_entry():
    x, w = sym.var('x'), sym.var('w')
    op = CachedOp(sym.tanh(sym.dot(x, w)))
    xv, wv = nd.ones((2, 3)), nd.ones((3, 4))
    wv.attach_grad()
    with autograd.record():
        y = op(xv, wv)[0]
    node, index = y._entry
    assert node.op.name == '_CachedOp' and index == 0
    assert node.input_values[0] is xv and node.input_values[1] is wv
    y.backward()
    np.testing.assert_allclose(wv.grad.asnumpy(), np.full((3, 4), 2 * (1 - np.tanh(3) ** 2)),
                               rtol=1e-5)


def test_two_forwards_before_one_backward_with_static_buffers():
    x = sym.var('x')
    op = CachedOp(sym.exp(sym.sin(x) * 2), {'static_alloc': True, 'static_shape': True})
    a, b = nd.array([0.1, 0.2]), nd.array([0.7, 0.9])
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        ya = op(a)[0]
        yb = op(b)[0]
        total = ya + yb
    total.backward()
    for arr in (a, b):
        v = arr.asnumpy()
        expected = np.exp(np.sin(v) * 2) * 2 * np.cos(v)
        np.testing.assert_allclose(arr.grad.asnumpy(), expected, rtol=1e-5)


def test_static_outputs_are_not_overwritten_by_the_next_call():
    x = sym.var('x')
    op = CachedOp(sym.relu(x * 3) + 1, {'static_alloc': True, 'static_shape': True})
    first = op(nd.array([1.0, -1.0]))[0]
    op(nd.array([5.0, 5.0]))
    assert first.asnumpy().tolist() == [4.0, 1.0]


def test_planner_reuses_buffers_and_works_in_place():
    x = sym.var('x')
    graph = sym.exp(sym.tanh(sym.sigmoid(sym.relu(x))) * 2) + 1
    nodes = [n for n in topo_nodes(graph._outputs) if n.op is not None]
    from hybridlib.graph import infer_graph
    shapes = infer_graph(nodes + [n for n in topo_nodes(graph._outputs) if n.op is None],
                         'shape', {'x': (4, 4)})
    dtypes = infer_graph(topo_nodes(graph._outputs), 'dtype', {'x': np.float32})
    assign, buffers, in_place, _ = plan_buffers(nodes, graph._outputs, shapes, dtypes)
    assert len(buffers) == 1                 # a chain of elementwise ops needs one buffer
    assert len(assign) == len(nodes) - 1     # all but the returned value
    assert len(in_place) == len(nodes) - 2   # all but the first write in place


def _plan_of(graph, shapes_in):
    from hybridlib.graph import infer_graph
    every = topo_nodes(graph._outputs)
    nodes = [n for n in every if n.op is not None]
    shapes = infer_graph(every, 'shape', shapes_in)
    dtypes = infer_graph(every, 'dtype', {k: np.float32 for k in shapes_in})
    return nodes, plan_buffers(nodes, graph._outputs, shapes, dtypes)


def _dense_block(x, layers, joined_twice=False):
    """DenseNet's growing features: each layer's output joined to everything before it."""
    feats = sym.relu(x * 2)
    for i in range(layers):
        new = sym.exp(sym.tanh(feats) * (i + 1))
        feats = sym.concat(feats, new, dim=1)
    out = sym.sum(feats * 3, axis=(2, 3))
    if joined_twice:        # ``new`` also joins another Concat: no copy is saved then
        out = sym.Group([out, sym.sum(sym.concat(new, new * 2, dim=1), axis=(2, 3))])
    return out


@pytest.mark.parametrize('batch,joined_twice', [(1, False), (2, False), (1, True)])
def test_concat_writes_its_inputs_into_its_slices(batch, joined_twice):
    x = sym.var('x')
    graph = _dense_block(x, 3, joined_twice)
    nodes, (assign, buffers, _, views) = _plan_of(graph, {'x': (batch, 2, 3, 3)})
    concats = [n for n in nodes if n.op.name == 'Concat']
    placed = [n for n in concats if (n, 0) in views]
    # a batch of one: every Concat and what it joins share one buffer; a batch of two has no
    # contiguous slices along channels, and a value joined twice keeps its Concat copying
    assert len(placed) == (0 if batch > 1 else 2 if joined_twice else 3)
    assert len({views[e][0] for e in views}) == min(1, len(placed))
    xv = nd.array(RNG.standard_normal((batch, 2, 3, 3)))
    want = CachedOp(graph)(xv)
    op = CachedOp(graph, {'static_alloc': True, 'static_shape': True})
    for _ in range(2):
        got = op(xv)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())


def test_a_concat_of_a_graph_input_copies():
    # the input's memory is the caller's: the Concat copies it, and copies the rest too
    x = sym.var('x')
    graph = sym.sum(sym.concat(x, sym.exp(x), dim=1) * 2, axis=2)
    _, (_, _, _, views) = _plan_of(graph, {'x': (1, 3, 2)})
    assert not views
    xv = nd.array(RNG.standard_normal((1, 3, 2)))
    op = CachedOp(graph, {'static_alloc': True, 'static_shape': True})
    np.testing.assert_array_equal(op(xv)[0].asnumpy(), CachedOp(graph)(xv)[0].asnumpy())


def test_a_returned_concat_is_not_written_in_place():
    # the returned value must be a fresh array per call: its inputs keep their own buffers
    x = sym.var('x')
    graph = sym.concat(sym.exp(x), sym.tanh(x), dim=1)
    _, (_, _, _, views) = _plan_of(graph, {'x': (1, 2, 2)})
    assert not views
    op = CachedOp(graph, {'static_alloc': True, 'static_shape': True})
    first = op(nd.array(np.ones((1, 2, 2))))[0]
    op(nd.array(np.zeros((1, 2, 2))))
    np.testing.assert_allclose(first.asnumpy(), np.concatenate([np.full((1, 2, 2), np.e),
                                                                np.full((1, 2, 2), np.tanh(1))],
                                                               axis=1), rtol=1e-6)


def test_max_pooling_hidden_output_is_not_a_copy():
    # max Pooling's hidden output is output 0 itself; the plan keeps them together, so an op
    # working in place on the pooled value and a second call change no earlier result
    from hybridlib.ops import registry
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    out, hidden = registry.get('Pooling').compute(np, registry.get('Pooling').parse_attrs(
        {'kernel': (2, 2), 'stride': (2, 2)}), x)
    assert hidden is out
    data = sym.var('x')
    graph = sym.exp(sym.Pooling(data, kernel=(2, 2), stride=(2, 2), pool_type='max') * -1)
    op = CachedOp(graph, {'static_alloc': True, 'static_shape': True})
    values = [RNG.standard_normal((1, 2, 4, 4)) for _ in range(2)]
    firsts = [op(nd.array(v))[0] for v in values]
    for v, got in zip(values, firsts):
        want = nd.exp(nd.Pooling(nd.array(v), kernel=(2, 2), stride=(2, 2)) * -1)
        np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())


def test_planner_keeps_values_that_an_op_may_alias():
    # _broadcast_backward returns its input when shapes agree: its output is returned, so the
    # buffer of its input must never be reused
    x, like = sym.var('x'), sym.var('like')
    inner = sym.exp(x)
    out = sym.Group([sym._internal._broadcast_backward(inner, like), sym.tanh(x) * 2])
    op = CachedOp(out, {'static_alloc': True, 'static_shape': True})
    xv = nd.array([[0.5, 1.0]])
    first = op(xv, nd.zeros((1, 2)))
    np.testing.assert_allclose(first[0].asnumpy(), np.exp([[0.5, 1.0]]), rtol=1e-6)
    np.testing.assert_allclose(first[1].asnumpy(), np.tanh([[0.5, 1.0]]) * 2, rtol=1e-6)


def test_reshapes_inside_a_graph_are_views_and_returned_ones_are_copies():
    x = sym.var('x')
    inner = sym.exp(x)
    flat = sym.Flatten(inner)
    out = sym.Group([sym.relu(flat) * 2, sym.Flatten(x), sym.Reshape(inner, shape=(-1,))])
    op = CachedOp(out, {'static_alloc': True, 'static_shape': True})
    xv = nd.array(RNG.standard_normal((2, 3, 2)))
    before = xv.asnumpy().copy()
    for _ in range(2):      # the second call reuses the static buffers
        doubled, flat_x, reshaped = op(xv)
        e = np.exp(before)
        np.testing.assert_allclose(doubled.asnumpy(), np.maximum(e.reshape(2, 6), 0) * 2,
                                   rtol=1e-6)
        np.testing.assert_allclose(reshaped.asnumpy(), e.reshape(-1), rtol=1e-6)
    assert '.reshape((2, 6))' in op.code                # the inner Flatten is a view
    flat_x[:] = 0                                       # a returned one shares nothing
    assert np.array_equal(xv.asnumpy(), before)


def test_tracebacks_show_the_generated_line():
    x, i = sym.var('x'), sym.var('i')
    op = CachedOp(sym.take(sym.exp(x), i, mode='raise', name='lookup'))
    with pytest.raises(Exception) as info:
        op(nd.array([1.0, 2.0]), nd.array([5]))
    text = ''.join(traceback.format_exception(info.type, info.value, info.tb))
    assert '<hybridlib-cached-op-' in text and 'lookup = take(' in text


def test_op_hook_sees_every_output():
    seen = []
    x = sym.var('x')
    op = CachedOp(sym.relu(sym.exp(x)))
    op.register_op_hook(lambda node, opname, arr: seen.append((node, opname, arr.shape)))
    op(nd.ones((2, 2)))
    assert [(n[1], n[2]) for n in seen] == [('exp', (2, 2)), ('relu', (2, 2))]


def test_flags_are_checked():
    with pytest.raises(TypeError, match='unknown CachedOp flags'):
        CachedOp(sym.var('x') * 2, {'static_aloc': True})


def test_creation_ops_with_unknown_dims_take_the_inferred_shape():
    x = sym.var('x')
    zeros = sym.zeros((0, 3))            # batch size left to inference, as Gluon's RNN does
    op = CachedOp(sym.elemwise_add(x, zeros))
    result = op(nd.ones((2, 3)))[0]
    assert result.shape == (2, 3) and result.asnumpy().tolist() == [[1] * 3] * 2
    # with broadcasting the unknown size could be 1 or 2: a clear error, not a guess
    with pytest.raises(mx.MXNetError, match='unknown dimensions'):
        CachedOp(sym.broadcast_add(x, zeros))(nd.ones((2, 3)))


def test_plans_per_input_signature_are_bounded(monkeypatch):
    import linecache
    from hybridlib import cached_op
    monkeypatch.setattr(cached_op, 'MAX_PLANS', 3)
    x = sym.var('x')
    op = CachedOp(sym.tanh(x) * 2)
    before = set(linecache.cache)
    for n in range(1, 8):
        out = op(nd.ones((n,)))[0]
        np.testing.assert_allclose(out.asnumpy(), np.tanh(np.ones(n)) * 2, rtol=1e-6)
    assert len(op._plans) == 3
    kept = {f for p in op._plans.values() for f in p.filenames}
    assert all(f in linecache.cache for f in kept)
    assert set(linecache.cache) - before == kept    # the forgotten plans' sources went too
    del op
    assert set(linecache.cache) - before == set()   # and all of them with the CachedOp


def test_float64_graphs_run_specialised_bodies():
    # numpy's float64 dtype compares equal to None: that once sent float64 graphs to compute
    import functools
    s = sym.FullyConnected(sym.var('x'), num_hidden=2, no_bias=True, name='fc')
    op = CachedOp(s)
    op(nd.ones((1, 3), dtype='float64'), nd.ones((2, 3), dtype='float64'))
    body = op._last[1].forward.__globals__['FullyConnected']
    assert not isinstance(body, functools.partial), op.code


@pytest.mark.parametrize('names', [('fi', '\ufb01'), ('xp', '\uff58\uff50'), ('half', 'a\u00bd')])
def test_node_names_python_would_merge_stay_apart(names):
    # Python normalises identifiers (NFKC): the fi ligature is fi, fullwidth xp the array
    # module, and the 1/2 sign is no identifier at all
    x = sym.var('x')
    first, second = sym.tanh(x, name=names[0]), sym.relu(x, name=names[1])
    graph = sym.Group([first * 1.0, second * 3.0])
    value = nd.array([[-1.0, 0.5, 2.0]])
    for flags in ({}, {'static_alloc': True}):
        op = CachedOp(graph, flags)
        got = [o.asnumpy() for o in op(value)]
        np.testing.assert_allclose(got[0], np.tanh(value.asnumpy()), rtol=1e-6)
        np.testing.assert_allclose(got[1], np.maximum(value.asnumpy(), 0) * 3, rtol=1e-6)
        assert op.code.isascii()


def test_blocks_named_fi_and_the_fi_ligature():
    class Two(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__(prefix='two_')
            with self.name_scope():
                self.a = mx.gluon.nn.Activation('tanh', prefix='fi_')
                self.b = mx.gluon.nn.Activation('relu', prefix='\ufb01_')

        def hybrid_forward(self, F, x):
            return self.a(x) - self.b(x)

    net = Two()
    x = nd.array([[-1.0, 0.5, 2.0]])
    expected = net(x).asnumpy()
    net.hybridize(static_alloc=True)
    np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(net(x).asnumpy(), np.tanh(x.asnumpy()) - np.maximum(x.asnumpy(), 0),
                               rtol=1e-6)


def test_static_alloc_is_safe_from_several_threads():
    import threading
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(16, activation='relu'), mx.gluon.nn.Dense(16, activation='tanh'),
            mx.gluon.nn.Dense(4))
    net.initialize(mx.init.Xavier())
    inputs = [nd.array(np.random.default_rng(i).normal(size=(2, 8))) for i in range(4)]
    expected = [net(x).asnumpy() for x in inputs]
    net.hybridize(static_alloc=True, static_shape=True)
    wrong = []

    def work(i):
        for _ in range(300):
            out = net(inputs[i]).asnumpy()
            if not np.array_equal(out, expected[i]):
                wrong.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong, f'{len(wrong)} of 1200 calls gave other numbers'




def _gradients(graph, values, grad_reqs, extra=None, calls=1, w_grad_as_other=False):
    """Gradients of ``sum(graph(**values))`` (+ ``extra(arrays)``) for the arrays with a grad_req,
    by the interpreter (imperative operators) and by the CachedOp, after ``calls`` backwards.
    ``w_grad_as_other``: w's .grad (holding 0.5) is also the graph's input ``other``."""
    results = []
    for compiled in (False, True):
        arrays = {k: nd.array(v) for k, v in values.items()}
        for k, req in grad_reqs.items():
            arrays[k].attach_grad(req)
        if w_grad_as_other:
            arrays['w'].grad[:] = 0.5
            arrays['other'] = arrays['w'].grad
        op = CachedOp(graph, {'static_alloc': True})
        buffers = {k: arrays[k].grad._data for k in grad_reqs}
        for _ in range(calls):
            with autograd.record():
                ins = [arrays[n] for n in op.input_names]
                out = (op(*ins) if compiled else [op.interpret(*ins)[0]])[0].sum()
                if extra is not None:
                    out = out + extra(arrays)
            out.backward()
        for k in grad_reqs:     # the .grad arrays are the ones attach_grad made
            assert arrays[k].grad._data is buffers[k]
        results.append({k: arrays[k].grad.asnumpy() for k in grad_reqs})
    return results


@pytest.mark.parametrize('case', ['write', 'add', 'also_outside', 'grad_as_input'])
def test_backward_computes_gradients_in_the_grad_arrays(case):
    x, w, b = sym.var('x'), sym.var('w'), sym.var('b')
    graph = sym.tanh(sym.FullyConnected(x, w, b, num_hidden=4))
    values = {'x': RNG.normal(size=(3, 5)), 'w': RNG.normal(size=(4, 5)),
              'b': RNG.normal(size=4)}
    reqs, extra, calls = {'w': 'write', 'b': 'write', 'x': 'write'}, None, 1
    if case == 'add':           # accumulated over three calls, never overwritten
        reqs, calls = {'w': 'add', 'b': 'write'}, 3
    elif case == 'also_outside':    # w's gradient is a sum of the graph's and another op's
        extra = lambda a: (a['w'] * a['w']).sum()       # noqa: E731
    elif case == 'grad_as_input':
        # w's .grad is also the input ``other``, which the backward reads after it computed
        # w's gradient (w comes first): that gradient must not be written there early
        other, x2 = sym.var('other'), sym.var('x2')
        graph = sym.FullyConnected(x2, w, no_bias=True, num_hidden=4) + \
            sym.FullyConnected(x, other, no_bias=True, num_hidden=4)
        values['x2'], reqs = RNG.normal(size=(3, 5)), {'w': 'write', 'x': 'write'}
    want, got = _gradients(graph, values, reqs, extra, calls,
                           w_grad_as_other=case == 'grad_as_input')
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6)
