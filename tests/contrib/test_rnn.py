"""gluon.contrib.rnn (hybridlib/contrib/rnn/): the convolutional cells, LSTMPCell,
VariationalDropoutCell and dynamic_unroll against MXNet 1.9.1 (tests/data/contrib_rnn-*,
written by tests/data/make_contrib_rnn_files.py): names, signatures, parameters, reprs, state
shapes, unrolled graphs and numbers; imperative vs hybridized; channel-last layouts against
channel-first ones; dropout masks."""
import gzip
import inspect
import json
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd, sym
from hybridlib.base import MXNetError
from hybridlib.gluon import rnn
from hybridlib.gluon.contrib import rnn as crnn
from hybrid_check import check_hybrid, data, fresh_names  # noqa: F401 (a fixture)

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'data')
with open(os.path.join(DATA, 'contrib_rnn-facts.json')) as _f:
    FACTS = json.load(_f)
with gzip.open(os.path.join(DATA, 'contrib_rnn-graphs.json.gz'), 'rt') as _f:
    GRAPHS = json.load(_f)
with np.load(os.path.join(DATA, 'contrib_rnn-numbers.npz')) as _f:
    _INDEX = json.loads(str(_f['index']))
    _VECTORS = {case: _f[case] for case in _INDEX}

SCOPE = dict(np=np, mx=mx, gluon=gluon, rnn=rnn, crnn=crnn, nd=nd, sym=sym)
exec(FACTS['builders'], SCOPE)       # noqa: S102 - the generator's own source
Unroll, DynamicUnroll, Steps = SCOPE['Unroll'], SCOPE['DynamicUnroll'], SCOPE['Steps']


def build(code):
    """Evaluate a generator's expression with block names counting from 0."""
    with mx.name.NameManager():
        return eval(code, SCOPE)      # noqa: S307 - the generator's own source


def numbers(case):
    """``{key: float64 array}`` of one case of the numbers file."""
    vector = _VECTORS[case]
    return {key: vector[offset:offset + int(np.prod(shape))].reshape(shape).astype(np.float64)
            for key, offset, shape in _INDEX[case]}


def flat(out):
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in flat(o)]
    return [out]


def short(block, name):
    return name[len(block.prefix):] if name.startswith(block.prefix) else name


# -------------------------------------------------------------------------------------------------
# Names, signatures, parameters, reprs, states and graphs: MXNet's
# -------------------------------------------------------------------------------------------------

def test_exports_and_signatures_as_mxnet():
    assert crnn.__all__ == FACTS['all']['rnn']
    assert crnn.conv_rnn_cell.__all__ == FACTS['all']['conv_rnn_cell']
    assert crnn.rnn_cell.__all__ == FACTS['all']['rnn_cell']
    for name, text in FACTS['signatures'].items():
        assert str(inspect.signature(getattr(crnn, name).__init__)) == text, name
    assert str(inspect.signature(crnn.rnn_cell.dynamic_unroll)) == \
        FACTS['dynamic_unroll_signature']
    # one VariationalDropoutCell for gluon.rnn and gluon.contrib.rnn
    assert crnn.VariationalDropoutCell is rnn.VariationalDropoutCell
    assert mx.contrib.rnn is crnn and crnn.rnn_cell.tensor_types == (sym.Symbol, nd.NDArray)
    # the import paths GluonTS and GluonNLP write
    from hybridlib.gluon.contrib.rnn import VariationalDropoutCell, LSTMPCell
    from hybridlib.gluon.contrib.rnn.rnn_cell import dynamic_unroll
    assert (VariationalDropoutCell, LSTMPCell, dynamic_unroll) == \
        (crnn.VariationalDropoutCell, crnn.LSTMPCell, crnn.rnn_cell.dynamic_unroll)


@pytest.mark.parametrize('case', sorted(FACTS['cells']))
def test_parameters_repr_and_states_are_mxnets(case):
    fact = FACTS['cells'][case]
    cell = build(fact['code'])
    assert repr(cell) == fact['repr']
    assert cell.prefix == fact['prefix']
    assert [[k, list(v.shape)] for k, v in cell.collect_params().items()] == fact['params']
    assert [dict(i, shape=list(i['shape'])) for i in cell.state_info(2)] == fact['state_info']


@pytest.mark.parametrize('case', sorted(FACTS['cells']))
def test_one_step_shapes_are_mxnets(case):
    """A step's output and state shapes (MXNet's from shape inference: its CPU does not
    compute channel-last convolutions; hybridlib computes them)."""
    fact = FACTS['cells'][case]
    cell = build(fact['code'])
    cell.initialize()
    states = cell.begin_state(batch_size=fact['input_shape'][0], func=nd.zeros)
    out, new_states = cell(nd.ones(fact['input_shape']), states)
    assert [list(a.shape) for a in [out] + new_states] == fact['step_shapes']


@pytest.mark.parametrize('case', sorted(FACTS['graph_cases']))
def test_unrolled_graphs_are_mxnets(case):
    """Node names (t0_i2h, ...), operators, attributes and order, byte for byte."""
    assert build(FACTS['graph_cases'][case]) == GRAPHS[case]


def test_lstmp_repr_after_shape_inference():
    cell = crnn.LSTMPCell(4, 2)
    assert repr(cell) == 'LSTMPCell(None -> 16 -> 2)'
    cell.initialize()
    cell(nd.ones((2, 3)), cell.begin_state(2))
    assert repr(cell) == 'LSTMPCell(3 -> 16 -> 2)'


# -------------------------------------------------------------------------------------------------
# Numbers: MXNet's outputs and gradients
# -------------------------------------------------------------------------------------------------

def check_numbers(block, values, inputs, dtype, rtol, atol):
    """One recorded call (predict mode) with MXNet's cotangents: outputs and the gradients
    of the inputs and parameters must be MXNet's."""
    arrays = flat(inputs)
    for x in arrays:
        x.attach_grad()
    with autograd.record(train_mode=False):
        outs = flat(block(*inputs))
    autograd.backward(outs, [nd.array(values[f'cot{i}'], dtype=dtype)
                             for i in range(len(outs))])
    assert len(outs) == sum(k.startswith('out') for k in values)
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), values[f'out{i}'], rtol, atol, err_msg=f'out{i}')
    for i, x in enumerate(arrays):
        if f'grad_input{i}' in values:
            np.testing.assert_allclose(x.grad.asnumpy(), values[f'grad_input{i}'], rtol, atol,
                                       err_msg=f'grad_input{i}')
    for key, p in block.collect_params().items():
        np.testing.assert_allclose(p.grad().asnumpy(), values[f'grad_param:{short(block, key)}'],
                                   rtol, atol, err_msg=key)


def number_cases():
    cases = []
    for case, (code, length, layout, shape, valid) in FACTS['cell_numbers'].items():
        cases.append((case, lambda c, n=length, lay=layout: Unroll(c, n, lay, True,
                                                                    prefix='unroll_'),
                      code, layout, valid, 'float64'))
    for case, (code, length, shape) in FACTS['step_numbers'].items():
        cases.append((case, lambda c, n=length: Steps(c, n, prefix='steps_'), code, 'NTC', None,
                      'float64'))
    for case, (code, layout, shape, valid) in FACTS['dynamic_numbers'].items():
        cases.append((case, lambda c, lay=layout: DynamicUnroll(c, lay, prefix='dyn_'), code,
                      layout, valid, 'float32'))
    return cases


NUMBER_CASES = number_cases()


@pytest.mark.parametrize('hybrid', [None, {}, {'static_alloc': True, 'static_shape': True}],
                         ids=['imperative', 'hybridized', 'static'])
@pytest.mark.parametrize('case, make, code, layout, valid, dtype', NUMBER_CASES,
                         ids=[c[0] for c in NUMBER_CASES])
def test_cells_compute_mxnets_numbers(case, make, code, layout, valid, dtype, hybrid):
    values = numbers(case)
    with mx.name.NameManager():
        cell = eval(code, SCOPE)      # noqa: S307 - the generator's own source
        block = make(cell)
    block.initialize()
    block.cast(dtype)
    params = {short(block, k): p for k, p in block.collect_params().items()}
    assert sorted(params) == sorted(k[6:] for k in values if k.startswith('param:'))
    for name, p in params.items():
        p.set_data(nd.array(values['param:' + name], dtype=dtype))
    if hybrid is not None:
        block.hybridize(**hybrid)
    n_states = len(cell.state_info())
    arrays = [nd.array(values[f'input{i}'], dtype=dtype)
              for i in range(n_states + 1 + (valid is not None))]
    inputs = [arrays[0], arrays[1:n_states + 1]] + arrays[n_states + 1:]
    tol = (1e-5, 1e-6) if dtype == 'float64' else (1e-4, 1e-5)
    check_numbers(block, values, inputs, dtype, *tol)


# -------------------------------------------------------------------------------------------------
# Channel-last layouts compute what channel-first ones do
# -------------------------------------------------------------------------------------------------

LAST = [
    ('Conv2DRNNCell', 'NCHW', 'NHWC', (2, 4, 5)),
    ('Conv2DLSTMCell', 'NCHW', 'NHWC', (2, 4, 5)),
    ('Conv3DLSTMCell', 'NCDHW', 'NDHWC', (1, 3, 3, 4)),
    ('Conv2DGRUCell', 'NCHW', 'NHWC', (2, 4, 5)),
    ('Conv3DGRUCell', 'NCDHW', 'NDHWC', (2, 2, 3, 3)),
]


def to_last(a):
    """An NC... array as N...C."""
    return nd.transpose(a, axes=(0,) + tuple(range(2, a.ndim)) + (1,))


@pytest.mark.parametrize('name, first, last, shape', LAST, ids=[c[0] for c in LAST])
def test_channel_last_cells_compute_the_channel_first_ones(name, first, last, shape):
    """Inputs, states and weights transposed to channels last give the transposed outputs,
    states and gradients (MXNet's CPU cannot compute channel-last convolutions)."""
    make = getattr(crnn, name)
    cf = make(shape, 2, 3, 3, i2h_pad=1, conv_layout=first)
    cl = make(shape[1:] + shape[:1], 2, 3, 3, i2h_pad=1, conv_layout=last)
    for cell in (cf, cl):
        cell.initialize()
        cell.cast('float64')
    for (_, p), (_, q) in zip(cf.collect_params().items(), cl.collect_params().items()):
        value = nd.array(np.sin(np.arange(np.prod(p.shape)) * 0.7).reshape(p.shape),
                         dtype='float64')
        p.set_data(value)
        q.set_data(to_last(value) if value.ndim > 1 else value)
    x = data(2, 3, *shape).astype('float64')
    states = [data(*i['shape'], offset=k + 1).astype('float64')
              for k, i in enumerate(cf.state_info(2))]
    results = []
    for cell, xs, ss in ((cf, x, states),
                         (cl, nd.stack(*[to_last(x[:, t]) for t in range(3)], axis=1),
                          [to_last(s) for s in states])):
        xs.attach_grad()
        with autograd.record():
            out, new_states = cell.unroll(3, xs, ss, merge_outputs=False)
        autograd.backward(out + new_states)
        results.append((out + new_states, xs.grad, [p.grad() for p in
                                                    cell.collect_params().values()]))
    (outs_f, grad_f, pgrads_f), (outs_l, grad_l, pgrads_l) = results
    for a, b in zip(outs_f, outs_l):
        np.testing.assert_allclose(to_last(a).asnumpy(), b.asnumpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad_f.asnumpy(), nd.transpose(
        grad_l, axes=(0, 1, grad_l.ndim - 1) + tuple(range(2, grad_l.ndim - 1))).asnumpy(),
        rtol=1e-10, atol=1e-12)
    for a, b in zip(pgrads_f, pgrads_l):
        np.testing.assert_allclose((to_last(a) if a.ndim > 1 else a).asnumpy(), b.asnumpy(),
                                   rtol=1e-10, atol=1e-12)


def test_conv1d_channel_last_is_refused_by_convolution_as_in_mxnet():
    """MXNet's docstring offers 'NWC', which its Convolution refuses."""
    cell = crnn.Conv1DRNNCell((6, 2), 2, 3, 3, conv_layout='NWC')
    assert cell.state_info(1)[0]['shape'] == (1, 4, 2)
    cell.initialize()
    with pytest.raises(MXNetError, match='NWC'):
        cell(nd.ones((1, 6, 2)), cell.begin_state(1))


# -------------------------------------------------------------------------------------------------
# Imperative vs hybridized; unroll forms; begin states
# -------------------------------------------------------------------------------------------------

HYBRID_CASES = [
    ("crnn.Conv1DRNNCell((2, 6), 3, 3, 3, i2h_pad=1)", (2, 6)),
    ("crnn.Conv2DLSTMCell((2, 4, 5), 2, 3, 3, conv_layout='NCHW')", (2, 4, 5)),
    ("crnn.Conv2DLSTMCell((4, 5, 2), 2, 3, 3, conv_layout='NHWC')", (4, 5, 2)),
    ("crnn.Conv3DGRUCell((1, 3, 3, 3), 2, 1, 3)", (1, 3, 3, 3)),
    ("crnn.Conv2DGRUCell((4, 5, 2), 2, (1, 3), 3, conv_layout='NHWC', "
     "activation=gluon.nn.LeakyReLU(0.1))", (4, 5, 2)),
    ("crnn.LSTMPCell(4, 2, input_size=3)", (3,)),
    ("crnn.VariationalDropoutCell(crnn.LSTMPCell(4, 2, input_size=3), 0.3, 0., 0.5)", (3,)),
]


@pytest.mark.parametrize('valid', [False, True])
@pytest.mark.parametrize('code, shape', HYBRID_CASES, ids=[c[0] for c in HYBRID_CASES])
def test_unroll_hybridized_matches_imperative(code, shape, valid):
    cell = build(code)
    block = Unroll(cell, 3, 'NTC', True)
    block.initialize(mx.init.Xavier())
    states = [data(*i['shape'], offset=k + 1) for k, i in enumerate(cell.state_info(2))]
    inputs = [data(2, 3, *shape), states] + ([nd.array([3, 1])] if valid else [])
    check_hybrid(block, inputs)


@pytest.mark.parametrize('code, shape', HYBRID_CASES[:2] + HYBRID_CASES[5:6],
                         ids=[c[0] for c in HYBRID_CASES[:2] + HYBRID_CASES[5:6]])
def test_dynamic_unroll_hybridized_matches_imperative(code, shape):
    cell = build(code)
    block = DynamicUnroll(cell, 'NTC')
    block.initialize(mx.init.Xavier())
    states = [data(*i['shape'], offset=k + 1) for k, i in enumerate(cell.state_info(2))]
    check_hybrid(block, [data(2, 3, *shape), states, nd.array([2, 3])])


def test_unroll_merging_and_begin_states():
    cell = crnn.Conv2DGRUCell((2, 4, 5), 3, 3, 3, i2h_pad=1)
    cell.initialize()
    x = data(2, 4, 2, 4, 5)                          # NTC: (N, T, C, H, W)
    merged, states = cell.unroll(4, x, merge_outputs=True)
    assert merged.shape == (2, 4, 3, 4, 5) and states[0].shape == (2, 3, 4, 5)
    steps, states_b = cell.unroll(4, x, merge_outputs=False)
    assert isinstance(steps, list) and len(steps) == 4
    np.testing.assert_allclose(nd.stack(*steps, axis=1).asnumpy(), merged.asnumpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(states_b[0].asnumpy(), states[0].asnumpy(), rtol=1e-6)
    tnc, _ = cell.unroll(4, nd.transpose(x, axes=(1, 0, 2, 3, 4)), layout='TNC',
                         merge_outputs=True)
    np.testing.assert_allclose(tnc.asnumpy(), nd.transpose(merged, axes=(1, 0, 2, 3, 4))
                               .asnumpy(), rtol=1e-6)
    as_list, _ = cell.unroll(4, [x[:, t] for t in range(4)])
    assert isinstance(as_list, list)            # merge_outputs=None: as the inputs come
    np.testing.assert_allclose(as_list[3].asnumpy(), steps[3].asnumpy(), rtol=1e-6)
    # begin states: zeros by default; given ones change the result
    zeros = cell.begin_state(2)
    assert [s.shape for s in zeros] == [(2, 3, 4, 5)] and not zeros[0].asnumpy().any()
    ones = cell.begin_state(2, func=nd.ones)
    other, _ = cell.unroll(4, x, ones, merge_outputs=True)
    assert not np.allclose(other.asnumpy(), merged.asnumpy())
    # Symbol begin states carry MXNet's names and layout
    named = crnn.Conv1DLSTMCell((2, 6), 2, 3, 3, prefix='cl_').begin_state(func=sym.var)
    assert [s.name for s in named] == ['cl_begin_state_0', 'cl_begin_state_1']
    assert named[0].attr('__layout__') == 'NCW'


def test_lstmp_matches_numpy():
    """LSTMPCell's step from its formula: gates from x and the projected state r, then
    r_t = W_hr h_t."""
    cell = crnn.LSTMPCell(3, 2, input_size=4)
    cell.initialize(mx.init.Uniform(0.5))
    p = {k[len(cell.prefix):]: v.data().asnumpy().astype(np.float64)
         for k, v in cell.collect_params().items()}
    x, r, c = (np.sin(np.arange(n) * 0.9 + k).reshape(s) for k, (n, s) in
               enumerate([(8, (2, 4)), (4, (2, 2)), (6, (2, 3))]))
    out, (r1, c1) = cell(nd.array(x), [nd.array(r), nd.array(c)])
    gates = x @ p['i2h_weight'].T + p['i2h_bias'] + r @ p['h2h_weight'].T + p['h2h_bias']
    i, f, g, o = np.split(gates, 4, axis=1)

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    c_next = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    r_next = (sigmoid(o) * np.tanh(c_next)) @ p['h2r_weight'].T
    np.testing.assert_allclose(c1.asnumpy(), c_next, rtol=1e-5)
    np.testing.assert_allclose(out.asnumpy(), r_next, rtol=1e-5, atol=1e-7)
    assert r1 is out


def test_conv_settings_are_checked_as_in_mxnet():
    with pytest.raises(AssertionError, match='Only support odd number'):
        crnn.Conv2DRNNCell((2, 4, 4), 2, 3, (2, 3))
    with pytest.raises(AssertionError, match='For 2D convolution.*i2h_pad'):
        crnn.Conv2DLSTMCell((2, 4, 4), 2, 3, 3, i2h_pad=(1, 1, 1))
    with pytest.raises(AssertionError, match='For 3D convolution.*h2h_dilate'):
        crnn.Conv3DGRUCell((1, 3, 3, 3), 2, 1, 3, h2h_dilate=(1, 1))
    cell = crnn.Conv2DRNNCell((2, 4, 4), 2, [3, 1], [1, 3], i2h_pad=[1, 0])
    assert cell.i2h_weight.shape == (2, 2, 3, 1) and cell.state_info()[0]['shape'] == (0, 2, 4, 4)


# -------------------------------------------------------------------------------------------------
# VariationalDropoutCell: one mask for every step; none in predict mode
# -------------------------------------------------------------------------------------------------

def identity_rnn(size):
    """RNNCell(size) computing h_t = relu(x_t + h_(t-1)): the masks show in its outputs."""
    cell = rnn.RNNCell(size, activation='relu', input_size=size, prefix='id_')
    cell.initialize()
    for name in ('i2h_weight', 'h2h_weight'):
        getattr(cell, name).set_data(nd.array(np.eye(size)))
    return cell


@pytest.mark.parametrize('stepped', [False, True])
def test_variational_dropout_inputs_and_outputs_share_one_mask_over_time(stepped):
    cell = crnn.VariationalDropoutCell(rnn.DropoutCell(0.), drop_inputs=0.5)
    x = nd.ones((3, 6, 40))                     # NTC
    mx.random.seed(1)
    with autograd.record(train_mode=True):
        if stepped:
            out = nd.stack(*[cell(x[:, t], [])[0] for t in range(6)], axis=1)
        else:
            out, _ = cell.unroll(6, x, merge_outputs=True)
    out = out.asnumpy()
    assert set(np.unique(out)) == {0.0, 2.0}    # kept values scaled by 1 / (1 - p)
    assert (out == out[:, :1]).all()            # the same mask at every step
    assert not (out == out[:1]).all()           # but not for every sample
    mx.random.seed(2)
    cell.reset()                                # a new sequence: a new mask
    with autograd.record(train_mode=True):
        again = cell(x[:, 0], [])[0].asnumpy()
    assert not (again == out[:, 0]).all()

    outputs = crnn.VariationalDropoutCell(rnn.DropoutCell(0.), drop_outputs=0.5)
    with autograd.record(train_mode=True):
        out, _ = outputs.unroll(6, x, merge_outputs=True)
    out = out.asnumpy()
    assert set(np.unique(out)) == {0.0, 2.0} and (out == out[:, :1]).all()


def test_variational_dropout_state_mask_is_shared_over_time():
    """h_t = relu(x_t + m * h_(t-1)) with x = 0, h_0 = 1: the zeros of m stay in place and the
    rest grows by 1 / (1 - p) a step."""
    cell = crnn.VariationalDropoutCell(identity_rnn(30), drop_states=0.5)
    x = nd.zeros((2, 4, 30))
    h0 = [nd.ones((2, 30))]
    mx.random.seed(5)
    with autograd.record(train_mode=True):
        out, _ = cell.unroll(4, x, h0, merge_outputs=True)
    out = out.asnumpy()
    kept = out[:, 0] != 0
    assert 0 < kept.sum() < kept.size
    for t in range(4):
        np.testing.assert_allclose(out[:, t], np.where(kept, 2.0 ** (t + 1), 0))
    assert cell.drop_states_mask.shape == (2, 30)


def test_variational_dropout_is_the_base_cell_in_predict_mode():
    base = crnn.LSTMPCell(4, 2, input_size=3)
    base.initialize()
    x = data(2, 5, 3)
    expected, expected_states = base.unroll(5, x, merge_outputs=True)
    cell = crnn.VariationalDropoutCell(base, 0.5, 0.5, 0.5)
    for _ in range(2):
        out, states = cell.unroll(5, x, merge_outputs=True)
        np.testing.assert_allclose(out.asnumpy(), expected.asnumpy(), rtol=1e-6)
        for a, b in zip(states, expected_states):
            np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
    with autograd.record(train_mode=False):
        out, _ = cell.unroll(5, x, merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), expected.asnumpy(), rtol=1e-6)
    with autograd.record(train_mode=True):
        out, _ = cell.unroll(5, x, merge_outputs=True)
    assert not np.allclose(out.asnumpy(), expected.asnumpy())


def test_variational_dropout_refuses_state_dropout_on_bidirectional_cells():
    bi = rnn.BidirectionalCell(rnn.LSTMCell(2), rnn.LSTMCell(2))
    with pytest.raises(AssertionError, match="doesn't support variational state dropout"):
        crnn.VariationalDropoutCell(bi, drop_states=0.5)
    crnn.VariationalDropoutCell(rnn.BidirectionalCell(rnn.LSTMCell(2), rnn.LSTMCell(2)),
                                drop_inputs=0.5)


# -------------------------------------------------------------------------------------------------
# dynamic_unroll
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('layout', ['TNC', 'NTC'])
def test_dynamic_unroll_is_unroll(layout):
    cell = crnn.LSTMPCell(4, 2, input_size=3)
    cell.initialize()
    x = data(5, 3, 3) if layout == 'TNC' else data(3, 5, 3)
    states = [data(3, 2, offset=1), data(3, 4, offset=2)]
    valid = nd.array([5, 2, 4])
    out, final = crnn.rnn_cell.dynamic_unroll(cell, x, states, layout=layout,
                                              valid_length=valid)
    ref, ref_final = cell.unroll(5, x, states, layout=layout, merge_outputs=True,
                                 valid_length=valid)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-6)
    for a, b in zip(final, ref_final):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
    out, final = crnn.rnn_cell.dynamic_unroll(cell, x, states, layout=layout)
    ref, ref_final = cell.unroll(5, x, states, layout=layout, merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(final[1].asnumpy(), ref_final[1].asnumpy(), rtol=1e-6)


def test_dynamic_unroll_dropout_masks_are_shared_over_time():
    cell = rnn.DropoutCell(0.)
    x = nd.ones((2, 6, 50))
    mx.random.seed(4)
    with autograd.record(train_mode=True):
        out, _ = crnn.rnn_cell.dynamic_unroll(cell, x, [], drop_inputs=0.5, layout='NTC')
    out = out.asnumpy()
    assert set(np.unique(out)) == {0.0, 2.0}
    assert (out == out[:, :1]).all() and not (out == out[:1]).all()
    out, _ = crnn.rnn_cell.dynamic_unroll(cell, x, [], drop_outputs=0.5, layout='NTC')
    assert (out.asnumpy() == 1).all()          # predict mode: no dropout


def test_dynamic_unroll_needs_a_known_sequence_length():
    cell = rnn.GRUCell(3, input_size=2)
    with pytest.raises(MXNetError, match='dynamic_unroll: the sequence length'):
        crnn.rnn_cell.dynamic_unroll(cell, sym.var('data'), [sym.var('h')])
    out, states = crnn.rnn_cell.dynamic_unroll(cell, sym.var('data', shape=(4, 2, 2)),
                                               [sym.var('h')])
    assert out.infer_shape(h=(2, 3))[1] == [(4, 2, 3)]
