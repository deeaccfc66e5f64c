"""The fused recurrent layers (hybridlib/gluon_rnn/rnn_layer.py): MXNet 1.9.1's parameters, reprs,
graphs and numbers, imperative vs hybridized, begin states, sequence lengths, deferred input
size, and MXNet's reference export of an LSTM (tests/data/reference/lstm_tnc-*)."""
import json
import os
import warnings

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd, sym
from hybridlib.block import UsageError
from hybridlib.gluon import rnn
from rnn_data import (FACTS, GRAPHS, SCOPE, build, check_numbers, flat, load_params,
                      numbers, scope)
from hybrid_check import check_hybrid, data, fresh_names  # noqa: F401 (a fixture)

REF = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data', 'reference')


# -------------------------------------------------------------------------------------------------
# Parameters, reprs, states: MXNet's
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('case', sorted(FACTS['layers']))
def test_parameters_repr_and_state_info_are_mxnets(case):
    fact = FACTS['layers'][case]
    net = build(fact['code'])
    assert repr(net) == fact['repr']
    assert [[k, list(v.shape)] for k, v in net.collect_params().items()] == fact['params']
    assert list(net._collect_params_with_prefix()) == fact['structural']
    assert [dict(i, shape=list(i['shape'])) for i in net.state_info(3)] == fact['state_info']


def test_layer_parameter_layout_literals():
    # MXNet 1.9.1: rnn.GRU(4, num_layers=2, bidirectional=True, input_size=3)
    net = rnn.GRU(4, num_layers=2, bidirectional=True, input_size=3, dtype='float64')
    shapes = {k: v.shape for k, v in net.collect_params().items()}
    assert list(shapes)[:5] == ['gru0_l0_i2h_weight', 'gru0_l0_h2h_weight', 'gru0_l0_i2h_bias',
                                'gru0_l0_h2h_bias', 'gru0_r0_i2h_weight']
    assert shapes['gru0_l0_i2h_weight'] == (12, 3)
    assert shapes['gru0_l1_i2h_weight'] == (12, 8)
    assert shapes['gru0_r1_h2h_bias'] == (12,)
    assert all(np.dtype(p.dtype) == np.float64 for p in net.collect_params().values())
    assert str(net.l0_i2h_bias.init) == 'zeros' and net.l0_i2h_weight.init is None


def test_invalid_layout():
    with pytest.raises(AssertionError, match=r"Invalid layout NCT; must be one of \['TNC' or "):
        rnn.LSTM(3, layout='NCT')


# -------------------------------------------------------------------------------------------------
# Graphs: MXNet's exports and Symbol graphs, byte for byte
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('case', sorted(k for k in FACTS['graph_cases'] if 'cell' not in k))
def test_graphs_are_mxnets(case, tmp_path):
    """Exports of hybridized layers, bare (begin states as inputs) and nested (``_zeros`` begin
    states), and Symbol graphs: byte for byte."""
    mine = build(FACTS['graph_cases'][case], scope(str(tmp_path / 'net')))
    theirs = GRAPHS[case]
    if case == 'lstm_options_symbol':
        mine, theirs = json.loads(mine), json.loads(theirs)
        # hybridlib's RNN with dropout between layers has a hidden 4th output (the mask, for
        # the backward), which node_row_ptr counts; MXNet's (CPU build) has 3
        assert mine.pop('node_row_ptr')[:-1] == theirs.pop('node_row_ptr')[:-1]
    assert mine == theirs


def test_nested_layers_export_zeros_begin_states():
    """Inside a block, begin states are ``_zeros`` nodes with the batch size 0, named with the
    doubled prefix; deferred input sizes show as 0."""
    nodes = {n['name']: n for n in json.loads(GRAPHS['nested_export'])['nodes']}
    assert nodes['recnet_recnet_lstm0_h0_0']['attrs'] == {
        '__layout__': 'LNC', 'dtype': 'float32', 'shape': '(4, 0, 6)'}
    assert nodes['recnet_lstm0_l0_i2h_weight']['attrs']['__shape__'] == '(24, 0)'


# -------------------------------------------------------------------------------------------------
# Numbers: MXNet's outputs and gradients (float64)
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('hybrid', [None, {}, {'static_alloc': True, 'static_shape': True}])
@pytest.mark.parametrize('case', sorted(FACTS['layer_numbers']))
def test_layers_compute_mxnets_numbers(case, hybrid):
    values = numbers(case)
    net = build(FACTS['layer_numbers'][case][0])
    net.initialize()
    load_params(net, values)
    if hybrid is not None:
        net.hybridize(**hybrid)
    n_states = 2 if 'lstm' in case else 1
    inputs = [nd.array(values['input0'], dtype='float64'),
              [nd.array(values[f'input{i + 1}'], dtype='float64') for i in range(n_states)]]
    check_numbers(net, values, inputs)
    if case in FACTS['mxnet_wrong_gradients']:
        # MXNet 1.9.1's CPU backward of rnn_relu disagrees with its own forward: here the
        # gradient of the data is checked against central differences instead
        assert 'grad_input0' not in values
        check_numeric_gradient(net, values, inputs)


def check_numeric_gradient(net, values, inputs):
    def loss(x):
        outs = flat(net(nd.array(x, dtype='float64'), *inputs[1:]))
        return sum((o.asnumpy() * values[f'cot{i}']).sum() for i, o in enumerate(outs))

    numeric = SCOPE['numeric_gradient'](loss, values['input0'])
    np.testing.assert_allclose(inputs[0].grad.asnumpy(), numeric, rtol=1e-5, atol=1e-7)


# -------------------------------------------------------------------------------------------------
# Imperative vs hybridized
# -------------------------------------------------------------------------------------------------

HYBRID_CASES = [
    # (constructor, data shape, begin states given, train)
    ("rnn.LSTM(5, num_layers=2, bidirectional=True, layout='NTC')", (3, 4, 2), False, False),
    ("rnn.LSTM(5, num_layers=2, bidirectional=True, layout='NTC')", (3, 4, 2), True, False),
    ("rnn.GRU(5, num_layers=2, dropout=0.3, input_size=2)", (3, 4, 2), True, True),
    ("rnn.RNN(4, activation='tanh', num_layers=2, bidirectional=True)", (3, 4, 2), True, False),
    ("rnn.RNN(4, layout='NTC')", (3, 4, 2), False, False),
    ("rnn.LSTM(6, projection_size=3, state_clip_min=-0.5, state_clip_max=0.5, "
     "bidirectional=True)", (3, 4, 2), True, False),
]


@pytest.mark.parametrize('code, shape, with_states, train', HYBRID_CASES)
def test_hybridized_layer_matches_imperative(code, shape, with_states, train):
    net = build(code)
    net.initialize(mx.init.Xavier())
    inputs = [data(*shape)]
    if with_states:
        batch = shape[net._layout.find('N')]
        inputs.append([data(*i['shape'], offset=k + 1)
                       for k, i in enumerate(net.state_info(batch))])
    check_hybrid(net, inputs, train=train)


def test_sequence_length_hybridized():
    net = rnn.GRU(4, bidirectional=True, layout='NTC', use_sequence_length=True)
    net.initialize(mx.init.Xavier())
    check_hybrid(net, [data(3, 4, 2), data(2, 3, 4), nd.array([4, 1, 3])])


@pytest.mark.parametrize('mode', ['lstm', 'gru', 'rnn'])
def test_sequence_length_equals_truncated_sequences(mode):
    """Steps past a sequence's length give zeros and leave the state: each sequence alone,
    cut to its length, gives the same outputs and final states (both directions)."""
    make = {'lstm': rnn.LSTM, 'gru': rnn.GRU, 'rnn': rnn.RNN}[mode]
    kwargs = dict(num_layers=2, bidirectional=True, input_size=2)
    net = make(3, use_sequence_length=True, **kwargs)
    net.initialize(mx.init.Xavier())
    plain = make(3, params=net.collect_params(), prefix=net.prefix, **kwargs)
    x = data(4, 3, 2)
    states = [data(*i['shape'], offset=1 + k) for k, i in enumerate(net.state_info(3))]
    lengths = [4, 1, 3]
    out, final = net(x, states, nd.array(lengths))
    for n, length in enumerate(lengths):
        one, one_final = plain(x[:length, n:n + 1], [s[:, n:n + 1] for s in states])
        np.testing.assert_allclose(out[:length, n:n + 1].asnumpy(), one.asnumpy(), rtol=1e-5,
                                   atol=1e-6)
        assert not out[length:, n].asnumpy().any()
        for s, s1 in zip(final, one_final):
            np.testing.assert_allclose(s[:, n:n + 1].asnumpy(), s1.asnumpy(), rtol=1e-5,
                                       atol=1e-6)


def test_sequence_length_is_required():
    net = rnn.LSTM(3, use_sequence_length=True)
    net.initialize()
    with pytest.raises(UsageError, match='takes the valid length of each sequence'):
        net(nd.ones((2, 3, 2)))


# -------------------------------------------------------------------------------------------------
# Calls: with and without states, begin_state
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('hybrid', [False, True])
def test_returns_states_only_when_given(hybrid):
    """Unlike MXNet 1.9.1, a hybridized layer does not keep the return structure of its first
    call (MXNet returns no states when called with them after a call without)."""
    net = rnn.LSTM(4, num_layers=2, input_size=3)
    net.initialize()
    net.hybridize(hybrid)
    x = data(5, 2, 3)
    out = net(x)
    assert isinstance(out, nd.NDArray) and out.shape == (5, 2, 4)
    out2, states = net(x, net.begin_state(2))
    assert [s.shape for s in states] == [(2, 2, 4), (2, 2, 4)]
    np.testing.assert_array_equal(out2.asnumpy(), out.asnumpy())
    assert isinstance(net(x), nd.NDArray)
    # a single array is one state
    gru = rnn.GRU(4, input_size=3)
    gru.initialize()
    gru.hybridize(hybrid)
    out3, states = gru(x, nd.zeros((1, 2, 4)))
    assert len(states) == 1 and states[0].shape == (1, 2, 4)


def test_state_shape_is_checked():
    net = rnn.LSTM(8, num_layers=2, input_size=4)
    net.initialize()
    with pytest.raises(ValueError, match=r'Invalid recurrent state shape. Expecting '
                                         r'\(2, 2, 8\), got \(1, 2, 8\).'):
        net(nd.ones((5, 2, 4)), [nd.zeros((1, 2, 8)), nd.zeros((2, 2, 8))])


def test_begin_state():
    net = rnn.LSTM(6, num_layers=2, bidirectional=True, projection_size=3, prefix='lstm_')
    h, c = net.begin_state(5)
    assert (h.shape, c.shape) == ((4, 5, 3), (4, 5, 6))
    assert h.dtype == np.float32 and not h.asnumpy().any()
    h, c = net.begin_state(2, func=nd.ones, dtype='float64')
    assert h.dtype == np.float64 and (c.asnumpy() == 1).all()
    h, c = net.begin_state(func=sym.zeros)
    assert json.loads(h.tojson())['nodes'][0] == {
        'op': '_zeros', 'name': 'lstm_h0_0', 'inputs': [],
        'attrs': {'__layout__': 'LNC', 'dtype': 'float32', 'shape': '(4, 0, 3)'}}
    h, _ = net.begin_state(func=sym.var)
    assert h.name == 'lstm_h0_0' and h.attr('__layout__') == 'LNC'
    h, _ = net.begin_state(3, func=lambda name, **kw: (name, kw))
    assert h == ('lstm_h0_0', {'shape': (4, 3, 3), '__layout__': 'LNC', 'dtype': 'float32'})


def test_cast_changes_the_begin_states():
    net = rnn.GRU(3, input_size=2)
    net.initialize()
    net.cast('float64')
    out = net(nd.ones((2, 2, 2), dtype='float64'))
    assert out.dtype == np.float64
    assert net.begin_state(2)[0].dtype == np.float64


# -------------------------------------------------------------------------------------------------
# Deferred input size
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('hybrid', [False, True])
@pytest.mark.parametrize('bidirectional', [False, True])
def test_deferred_input_size(hybrid, bidirectional):
    net = rnn.LSTM(4, num_layers=2, bidirectional=bidirectional, layout='NTC')
    net.initialize()
    assert net.l0_i2h_weight.shape == (16, 0)
    net.hybridize(hybrid)
    out = net(data(2, 3, 5))
    assert out.shape == (2, 3, 4 * (2 if bidirectional else 1))
    assert net.l0_i2h_weight.shape == (16, 5)
    if bidirectional:
        assert net.r0_i2h_weight.shape == (16, 5)
    assert repr(net).startswith('LSTM(5 -> 4, NTC, num_layers=2')


def test_deferred_input_size_with_projection():
    net = rnn.LSTM(4, projection_size=2, bidirectional=True)
    net.initialize()
    net.hybridize()
    out, (h, c) = net(data(3, 2, 5), net.begin_state(2))
    assert (out.shape, h.shape, c.shape) == ((3, 2, 4), (2, 2, 2), (2, 2, 4))
    assert net.r0_i2h_weight.shape == (16, 5) and net.r0_h2r_weight.shape == (2, 4)


# -------------------------------------------------------------------------------------------------
# Files
# -------------------------------------------------------------------------------------------------

def test_save_parameters_uses_mxnets_unfused_names(tmp_path):
    net = rnn.GRU(3, num_layers=2, bidirectional=True, input_size=2)
    net.initialize()
    path = str(tmp_path / 'gru.params')
    net.save_parameters(path)
    keys = list(nd.load(path))
    assert keys[:3] == ['_unfused.0.l_cell.i2h_weight', '_unfused.0.l_cell.h2h_weight',
                        '_unfused.0.l_cell.i2h_bias']
    other = rnn.GRU(3, num_layers=2, bidirectional=True, input_size=2)
    other.load_parameters(path)
    x = data(4, 2, 2)
    np.testing.assert_array_equal(other(x).asnumpy(), net(x).asnumpy())


def _reference():
    with open(os.path.join(REF, 'manifest.json')) as f:
        case = {c['name']: c for c in json.load(f)['cases']}['lstm_tnc']
    with np.load(os.path.join(REF, case['files']['io'])) as f:
        io = {k: f[k] for k in f.files}
    net = rnn.LSTM(8, num_layers=2, layout='TNC', input_size=4, prefix='lstm_')
    net.collect_params().load(os.path.join(REF, case['files']['params']))
    return case, io, net


@pytest.mark.parametrize('hybrid', [None, {}, {'static_alloc': True, 'static_shape': True}])
def test_mxnet_reference_lstm(hybrid):
    """MXNet's export of a bare LSTM: outputs (called without states) and the gradients of
    the input, the zero begin states and the parameters."""
    case, io, net = _reference()
    if hybrid is not None:
        net.hybridize(**hybrid)
    x = nd.array(io['input0'])
    tol = dict(rtol=case['rtol'], atol=case['atol'])
    np.testing.assert_allclose(net(x).asnumpy(), io['out0'], **tol)
    states = [nd.array(io['input1']), nd.array(io['input2'])]
    for a in [x] + states:
        a.attach_grad()
    with autograd.record():
        out, _ = net(x, states)
    out.backward(nd.array(io['cot0']))
    np.testing.assert_allclose(out.asnumpy(), io['train_out0'], **tol)
    gtol = dict(rtol=case['grad_rtol'], atol=case['grad_atol'])
    for i, a in enumerate([x] + states):
        np.testing.assert_allclose(a.grad.asnumpy(), io[f'grad_input{i}'], **gtol)
    params = net.collect_params()
    for key, value in io.items():
        if key.startswith('grad_param:'):
            np.testing.assert_allclose(params[key[11:]].grad().asnumpy(), value, **gtol)


def test_mxnet_reference_lstm_export(tmp_path):
    case, io, net = _reference()
    net.hybridize()
    net(nd.array(io['input0']))
    net.export(str(tmp_path / 'lstm'))
    with open(tmp_path / 'lstm-symbol.json') as f, \
            open(os.path.join(REF, case['files']['symbol'])) as g:
        assert f.read() == g.read()
    saved = nd.load(str(tmp_path / 'lstm-0000.params'))
    reference = nd.load(os.path.join(REF, case['files']['params']))
    assert list(saved) == list(reference)
    for key in saved:
        np.testing.assert_array_equal(saved[key].asnumpy(), reference[key].asnumpy())
    # and the export runs through SymbolBlock.imports with the begin states as inputs
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        block = gluon.SymbolBlock.imports(str(tmp_path / 'lstm-symbol.json'),
                                          ['data0', 'data1', 'data2'],
                                          str(tmp_path / 'lstm-0000.params'))
    out = block(*[nd.array(io[f'input{i}']) for i in range(3)])
    np.testing.assert_allclose(out.asnumpy(), io['out0'], rtol=case['rtol'], atol=case['atol'])
