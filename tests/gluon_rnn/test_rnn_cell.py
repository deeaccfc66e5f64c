"""Recurrent cells (hybridlib/gluon_rnn/rnn_cell.py): MXNet 1.9.1's parameters, reprs, unrolled graphs
and numbers, imperative vs hybridized, the cells against the fused layers with the same
weights, begin states, valid lengths and the modifier cells."""
import json

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd, sym
from hybridlib.gluon import nn, rnn
from rnn_data import FACTS, GRAPHS, SCOPE, build, check_numbers, load_params, numbers
from hybrid_check import check_hybrid, data, fresh_names  # noqa: F401 (a fixture)

Unroll, bi_cell, res_stack, stack = (SCOPE[name]
                                     for name in ('Unroll', 'bi_cell', 'res_stack', 'stack'))


# -------------------------------------------------------------------------------------------------
# Parameters, reprs, states and graphs: MXNet's
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('case', sorted(FACTS['cells']))
def test_parameters_repr_and_state_info_are_mxnets(case):
    fact = FACTS['cells'][case]
    cell = build(fact['code'])
    assert repr(cell) == fact['repr']
    assert cell.prefix == fact['prefix']
    assert [[k, list(v.shape)] for k, v in cell.collect_params().items()] == fact['params']
    assert [dict(i, shape=list(i['shape'])) for i in cell.state_info(2)] == fact['state_info']


@pytest.mark.parametrize('case', sorted(k for k in FACTS['graph_cases'] if 'cell' in k))
def test_unrolled_graphs_are_mxnets(case):
    """Node names (t0_i2h, ...), operators, attributes and order, byte for byte."""
    assert build(FACTS['graph_cases'][case]) == GRAPHS[case]


# -------------------------------------------------------------------------------------------------
# Numbers: MXNet's outputs and gradients of unrolled cells (float64)
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('hybrid', [None, {}, {'static_alloc': True, 'static_shape': True}])
@pytest.mark.parametrize('case', sorted(FACTS['cell_numbers']))
def test_unrolled_cells_compute_mxnets_numbers(case, hybrid):
    values = numbers(case)
    code, length, layout, _, valid = FACTS['cell_numbers'][case]
    with mx.name.NameManager():
        cell = eval(code, SCOPE)        # noqa: S307 - the generator's own source
        block = Unroll(cell, length, layout, True, prefix='unroll_')
    block.initialize()
    block.cast('float64')
    load_params(block, values)
    if hybrid is not None:
        block.hybridize(**hybrid)
    n_states = len(cell.state_info())
    arrays = [nd.array(values[f'input{i}'], dtype='float64')
              for i in range(n_states + 1 + (valid is not None))]
    inputs = [arrays[0], arrays[1:n_states + 1]] + arrays[n_states + 1:]
    check_numbers(block, values, inputs)


# -------------------------------------------------------------------------------------------------
# Cells against the fused layers
# -------------------------------------------------------------------------------------------------

FUSED = [
    "rnn.LSTM(3, num_layers=2, bidirectional=True, input_size=2)",
    "rnn.GRU(3, num_layers=2, input_size=2, dropout=0.5)",
    "rnn.GRU(3, bidirectional=True, input_size=2)",
    "rnn.RNN(3, num_layers=2, activation='tanh', bidirectional=True, input_size=2)",
    "rnn.RNN(3, activation='relu', input_size=2)",
]


@pytest.mark.parametrize('valid', [False, True])
@pytest.mark.parametrize('code', FUSED)
def test_unfused_cells_compute_the_fused_layer(code, valid):
    """The layer's cell stack (``_unfuse``, sharing its weights) unrolled gives the layer's
    outputs and final states; with valid lengths, the layer with ``use_sequence_length``."""
    layer = build(code.replace(')', ', use_sequence_length=True)') if valid else code)
    layer.initialize(mx.init.Xavier())
    for p in layer.collect_params().values():
        if p.name.endswith('bias'):
            p.set_data(nd.array(np.linspace(-0.5, 0.5, p.shape[0])))
    x = data(4, 3, 2)
    states = [data(*i['shape'], offset=k + 1) for k, i in enumerate(layer.state_info(3))]
    lengths = nd.array([4, 2, 3])
    out, final = layer(x, states, lengths) if valid else layer(x, states)
    cells = layer._unfuse()
    # the cells' states: per layer and direction (N, H), layer by layer
    begin = [s[k] for k in range(states[0].shape[0]) for s in states]
    c_out, c_final = cells.unroll(4, x, begin, layout='TNC', merge_outputs=True,
                                  valid_length=lengths if valid else None)
    np.testing.assert_allclose(c_out.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)
    n = len(states)
    for i, s in enumerate(final):
        expected = nd.stack(*c_final[i::n], axis=0)
        np.testing.assert_allclose(expected.asnumpy(), s.asnumpy(), rtol=1e-5, atol=1e-6)


def test_unfuse_is_refused_for_projections():
    with pytest.raises(AssertionError, match='projection'):
        rnn.LSTM(4, projection_size=2)._unfuse()


# -------------------------------------------------------------------------------------------------
# Imperative vs hybridized
# -------------------------------------------------------------------------------------------------

class Step(gluon.HybridBlock):
    """One step of a cell, returning its new states (the output is the first state)."""

    def __init__(self, cell, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell

    def hybrid_forward(self, F, x, states):
        return self.cell(x, states)[1]


STEP_CELLS = [
    lambda: rnn.RNNCell(4, activation='relu'),
    lambda: rnn.RNNCell(4, activation='softrelu', input_size=3),
    lambda: rnn.LSTMCell(4, activation='softsign', recurrent_activation='tanh'),
    lambda: rnn.GRUCell(4),
    lambda: stack(True),
]


@pytest.mark.parametrize('make', STEP_CELLS)
def test_step_hybridized_matches_imperative(make):
    cell = make()
    cell.initialize(mx.init.Xavier())
    states = [data(*i['shape'], offset=k + 1) for k, i in enumerate(cell.state_info(2))]
    check_hybrid(Step(cell), [data(2, 3), states])


def test_cell_hybridized_alone():
    """A cell hybridized by itself: one compiled step (``(output, [h, c])``), called step by
    step; the step counter does not change the compiled graph."""
    cell = rnn.LSTMCell(3, input_size=2)
    cell.initialize()
    x, states = data(2, 2), cell.begin_state(2)
    expected = []
    for _ in range(3):
        out, states = cell(x, states)
        expected.append(out.asnumpy())
    cell.hybridize(static_alloc=True)
    states = cell.begin_state(2)
    for e in expected:
        out, states = cell(x, states)
        np.testing.assert_allclose(out.asnumpy(), e, rtol=1e-6)
    assert len(states) == 2


UNROLL_CASES = [
    (lambda: rnn.LSTMCell(3, input_size=2), 'NTC', True),
    (lambda: rnn.GRUCell(3, input_size=2), 'TNC', True),
    (bi_cell, 'NTC', True),
    (res_stack, 'TNC', False),
    (lambda: rnn.ZoneoutCell(rnn.GRUCell(2, input_size=2), 0.3, 0.4), 'NTC', False),
    (lambda: rnn.VariationalDropoutCell(rnn.LSTMCell(2, input_size=2), 0.3, 0.4, 0.5), 'NTC',
     False),
    (lambda: rnn.VariationalDropoutCell(rnn.LSTMCell(2, input_size=2), 0.3, 0, 0.5), 'NTC',
     False),
]


@pytest.mark.parametrize('train', [False, True])
@pytest.mark.parametrize('make, layout, valid', UNROLL_CASES)
def test_unroll_hybridized_matches_imperative(make, layout, valid, train):
    cell = make()
    if train and getattr(cell, 'drop_states', 0):
        pytest.skip('the first step draws three independent masks, which the compiled '
                    'graph draws in another order than the imperative calls')
    block = Unroll(cell, 3, layout, True)
    block.initialize(mx.init.Xavier())
    batch = 2
    states = [data(*i['shape'], offset=k + 1) for k, i in enumerate(cell.state_info(batch))]
    x = data(batch, 3, 2) if layout == 'NTC' else data(3, batch, 2)
    inputs = [x, states] + ([nd.array([3, 1])] if valid else [])
    check_hybrid(block, inputs, train=train)


# -------------------------------------------------------------------------------------------------
# unroll: inputs, layouts, merging, begin states, valid lengths
# -------------------------------------------------------------------------------------------------

def test_unroll_input_forms_and_merging():
    cell = rnn.GRUCell(3, input_size=2)
    cell.initialize()
    x = data(2, 4, 2)                   # NTC
    merged, states = cell.unroll(4, x, merge_outputs=True)
    assert merged.shape == (2, 4, 3) and states[0].shape == (2, 3)
    steps, _ = cell.unroll(4, x, merge_outputs=False)
    assert isinstance(steps, list) and len(steps) == 4
    np.testing.assert_allclose(nd.stack(*steps, axis=1).asnumpy(), merged.asnumpy(), rtol=1e-6)
    as_list, _ = cell.unroll(4, [x[:, t] for t in range(4)], merge_outputs=True)
    np.testing.assert_allclose(as_list.asnumpy(), merged.asnumpy(), rtol=1e-6)
    tnc, _ = cell.unroll(4, nd.swapaxes(x, 0, 1), layout='TNC', merge_outputs=True)
    np.testing.assert_allclose(nd.swapaxes(tnc, 0, 1).asnumpy(), merged.asnumpy(), rtol=1e-6)
    # the last output is the state
    np.testing.assert_array_equal(states[0].asnumpy(), merged[:, 3].asnumpy())
    with pytest.raises(AssertionError):
        cell.unroll(3, x)


def test_unroll_valid_length_masks_outputs_and_keeps_last_valid_states():
    cell = rnn.LSTMCell(3, input_size=2)
    cell.initialize()
    x = data(2, 4, 2)
    out, (h, c) = cell.unroll(4, x, merge_outputs=True, valid_length=nd.array([2, 4]))
    full, _ = cell.unroll(4, x, merge_outputs=True)
    short, (h2, c2) = cell.unroll(2, x[:1, :2], merge_outputs=True)
    np.testing.assert_allclose(out[1].asnumpy(), full[1].asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(out[0, :2].asnumpy(), short[0].asnumpy(), rtol=1e-6)
    assert not out[0, 2:].asnumpy().any()
    np.testing.assert_allclose(h[:1].asnumpy(), h2.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(c[:1].asnumpy(), c2.asnumpy(), rtol=1e-6)


def test_begin_state():
    cell = rnn.LSTMCell(3, prefix='lstm_')
    h, c = cell.begin_state(4)
    assert h.shape == (4, 3) and not c.asnumpy().any()
    h, c = cell.begin_state(func=sym.zeros)
    assert json.loads(c.tojson())['nodes'][0] == {
        'op': '_zeros', 'name': 'lstm_begin_state_3', 'inputs': [],
        'attrs': {'__layout__': 'NC', 'dtype': 'float32', 'shape': '(0, 3)'}}
    h, _ = cell.begin_state(func=sym.var)
    assert h.name == 'lstm_begin_state_4'
    assert h.list_attr() == {'__layout__': 'NC', '__shape__': '(0, 3)'}
    h, _ = cell.begin_state(2, func=nd.ones, dtype='float64')
    assert h.dtype == np.float64 and (h.asnumpy() == 1).all()
    cell.reset()
    assert cell.begin_state(func=lambda **kw: kw)[0] == {
        'name': 'lstm_begin_state_0', 'shape': (0, 3), '__layout__': 'NC'}
    seq = stack(False)
    assert [s.shape for s in seq.begin_state(batch_size=5)] == [(5, 3)] * 3


# -------------------------------------------------------------------------------------------------
# Containers and modifiers
# -------------------------------------------------------------------------------------------------

def test_sequential_cells_step_and_unroll():
    for hybrid in (False, True):
        with mx.name.NameManager():
            seq = stack(hybrid)
        seq.initialize()
        if hybrid:
            seq.hybridize()
        x = data(2, 3)
        out, states = seq(x, seq.begin_state(batch_size=2))
        assert out.shape == (2, 3) and len(states) == 3
        assert len(seq) == 2 and isinstance(seq[1], rnn.GRUCell)
        outs, states = seq.unroll(2, data(2, 2, 3), merge_outputs=True)
        assert outs.shape == (2, 2, 3) and len(states) == 3


def test_bidirectional_cell_cannot_step():
    cell = bi_cell()
    cell.initialize()
    with pytest.raises(NotImplementedError, match='Bidirectional cannot be stepped'):
        cell(data(2, 2), cell.begin_state(batch_size=2))
    with pytest.raises(AssertionError):
        rnn.ZoneoutCell(bi_cell())
    seq = rnn.SequentialRNNCell()
    seq.add(bi_cell())
    with pytest.raises(AssertionError, match="Bidirectional SequentialRNNCell doesn't support"):
        rnn.ZoneoutCell(seq)        # MXNet 1.9.1 fails with an AttributeError here


def test_modified_cell_is_called_through_its_modifier():
    base = rnn.GRUCell(3, input_size=3)
    cell = rnn.ResidualCell(base)
    cell.initialize()
    with pytest.raises(AssertionError, match='After applying modifier cells'):
        base.begin_state(batch_size=2)
    with pytest.raises(AssertionError, match='already modified'):
        rnn.ZoneoutCell(base)
    assert cell.params is base.params
    x = data(2, 3)
    states = cell.begin_state(batch_size=2, func=nd.zeros)
    out, _ = cell(x, states)
    base._modified = False
    plain, _ = base(x, states)
    np.testing.assert_allclose(out.asnumpy(), (plain + x).asnumpy(), rtol=1e-6)


def test_zoneout_keeps_previous_values_in_training():
    base = rnn.RNNCell(6, input_size=2)
    cell = rnn.ZoneoutCell(base, zoneout_outputs=0.5)
    assert repr(cell) == 'ZoneoutCell(p_out=0.5, p_state=0.0, RNNCell(2 -> 6, tanh))'
    cell.initialize()
    x = data(3, 4, 2)
    base._modified = False
    plain, _ = base.unroll(4, x, merge_outputs=True)
    base._modified = True
    with autograd.record(train_mode=False):
        predicted, _ = cell.unroll(4, x, merge_outputs=True)
    np.testing.assert_allclose(predicted.asnumpy(), plain.asnumpy(), rtol=1e-6)
    mx.random.seed(1)
    with autograd.record(train_mode=True):
        trained, _ = cell.unroll(4, x, merge_outputs=True)
    # the states are not zoned out, so each output is the cell's or the previous output
    trained, plain = trained.asnumpy(), plain.asnumpy()
    previous = np.concatenate([np.zeros_like(trained[:, :1]), trained[:, :-1]], axis=1)
    new_value = trained == plain
    assert (new_value | (trained == previous)).all()
    assert 0.2 < new_value.mean() < 0.8


def test_dropout_cells():
    cell = rnn.DropoutCell(0.5, axes=(1,))
    assert repr(cell) == 'DropoutCell(rate=0.5, axes=(1,))'
    x = nd.ones((2, 3, 4))
    out, states = cell.unroll(3, x, merge_outputs=True)
    assert states == [] and (out.asnumpy() == 1).all()
    mx.random.seed(0)
    with autograd.record(train_mode=True):
        out, _ = cell.unroll(3, x, merge_outputs=True)
    out = out.asnumpy()
    assert set(np.unique(out)) <= {0.0, 2.0} and (out == out[:, :1]).all()
    with pytest.raises(AssertionError, match='rate must be a number'):
        rnn.DropoutCell('0.5')


def test_variational_dropout_shares_masks_across_steps():
    base = rnn.RNNCell(5, input_size=4, activation=lambda x, **kw: x, prefix='lin_')
    cell = rnn.VariationalDropoutCell(base, drop_inputs=0.5, drop_states=0.5, drop_outputs=0.5)
    assert cell.prefix == 'lin_vardrop'
    cell.initialize()
    x = nd.ones((3, 4, 4))
    mx.random.seed(3)
    with autograd.record(train_mode=True):
        cell.unroll(4, x, merge_outputs=True)
        masks = [cell.drop_inputs_mask, cell.drop_states_mask, cell.drop_outputs_mask]
    for m in masks:
        assert set(np.unique(m.asnumpy())) <= {0.0, 2.0}
    out, _ = cell.unroll(4, x, merge_outputs=True)       # predict mode: no dropout
    base._modified = False
    plain, _ = base.unroll(4, x, merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), plain.asnumpy(), rtol=1e-6)


def test_activations():
    x = data(2, 3)
    cell = rnn.RNNCell(4, activation='softsign', input_size=3)
    cell.initialize()
    h = cell.begin_state(batch_size=2)
    pre = cell(x, h)[0]
    cell2 = rnn.RNNCell(4, activation=lambda v, **kw: v / (1 + nd.abs(v)), input_size=3,
                        params=cell.collect_params(), prefix=cell.prefix)
    np.testing.assert_allclose(cell2(x, h)[0].asnumpy(), pre.asnumpy(), rtol=1e-6)
    if not hasattr(nn, 'LeakyReLU'):
        return
    leaky = rnn.RNNCell(4, activation=nn.LeakyReLU(0.1), input_size=3,
                        params=cell.collect_params(), prefix=cell.prefix)
    assert repr(leaky) == 'RNNCell(3 -> 4, LeakyReLU(0.1))'
    out = leaky(x, h)[0].asnumpy()
    linear = rnn.RNNCell(4, activation=lambda v, **kw: v, input_size=3,
                         params=cell.collect_params(), prefix=cell.prefix)
    raw = linear(x, h)[0].asnumpy()
    np.testing.assert_allclose(out, np.where(raw > 0, raw, 0.1 * raw), rtol=1e-6)
