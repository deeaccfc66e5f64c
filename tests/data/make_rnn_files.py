"""Writes the MXNet 1.9.1 fixtures of the recurrent layer and cell tests (tests/gluon_rnn/).

Run with the MXNet oracle's Python, from the repository root::

    .oracle/bin/python tests/data/make_rnn_files.py

It writes, under tests/data/rnn/:

* ``facts.json``: the construction code (``builders``: source that works with MXNet's and
  hybridlib's ``gluon``, ``rnn``, ``nd``, ``sym``; the cases' expressions), and what MXNet
  printed: reprs, parameter names and shapes, structural parameter names
  (``_collect_params_with_prefix``) and ``state_info`` of layers and cells;
* ``graphs.json.gz``: ``{case: -symbol.json text}``: exports of hybridized layers (bare and
  nested) and Symbol graphs of layers and unrolled cells;
* ``numbers.npz``: per case one float32 vector holding the arrays that ``index`` (a JSON text:
  ``{case: [[key, offset, shape], ...]}``) lists: its parameters (``param:NAME``, less the
  block's prefix where they have it), inputs, outputs, the cotangents of the outputs and the
  gradients of the inputs and parameters, computed by MXNet in float64 (predict mode) from
  float32 numbers and stored in float32. Gradients are left out where MXNet's disagree with
  central differences of its own forward (``facts.json``'s ``mxnet_wrong_gradients``: the case
  and the largest error; MXNet 1.9.1's CPU backward of ``rnn_relu`` is wrong).
"""
import gzip
import json
import os

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd, sym
from mxnet.gluon import rnn
from mxnet.gluon.contrib.rnn import VariationalDropoutCell

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'rnn')

# the blocks the cases build and a numeric gradient, run by the tests with hybridlib's modules
# in the same names
BUILDERS = '''
def stack(hybrid):
    """An LSTMCell(3) and a GRUCell(3), stacked."""
    s = rnn.HybridSequentialRNNCell() if hybrid else rnn.SequentialRNNCell()
    with s.name_scope():
        s.add(rnn.LSTMCell(3))
        s.add(rnn.GRUCell(3))
    return s


def modifier_stack():
    s = rnn.HybridSequentialRNNCell(prefix='stack_')
    with s.name_scope():
        s.add(rnn.ZoneoutCell(rnn.LSTMCell(3), 0.5, 0.5))
        s.add(rnn.ResidualCell(rnn.GRUCell(3)))
        s.add(rnn.DropoutCell(0.5))
    return s


def bi_cell():
    return rnn.BidirectionalCell(rnn.LSTMCell(3, input_size=2), rnn.GRUCell(2, input_size=2))


def res_stack():
    s = rnn.HybridSequentialRNNCell()
    with s.name_scope():
        s.add(rnn.LSTMCell(2, input_size=2))
        s.add(rnn.ResidualCell(rnn.GRUCell(2, input_size=2)))
        s.add(rnn.DropoutCell(0.5))
        s.add(rnn.RNNCell(3, activation='relu', input_size=2))
    return s


class RecNet(gluon.HybridBlock):
    """An LSTM (bidirectional, NTC) then a GRU, called without states inside a block."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.lstm = rnn.LSTM(6, num_layers=2, bidirectional=True, layout='NTC')
            self.gru = rnn.GRU(3)

    def hybrid_forward(self, F, x):
        return self.gru(self.lstm(x))


class Unroll(gluon.HybridBlock):
    """cell.unroll as a block: (data, begin states, valid_length) -> outputs, states."""

    def __init__(self, cell, length, layout, merge, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell
        self._args = (length, layout, merge)

    def hybrid_forward(self, F, x, states, valid_length=None):
        length, layout, merge = self._args
        return self.cell.unroll(length, x, states, layout=layout, merge_outputs=merge,
                                valid_length=valid_length)


def export(net, inputs):
    """The -symbol.json text of net, hybridized and called on inputs (at EXPORT_PATH)."""
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(*inputs)
    net.export(EXPORT_PATH)
    with open(EXPORT_PATH + '-symbol.json') as f:
        return f.read()


def numeric_gradient(loss, base, eps=1e-6):
    """Central differences of loss (a function of an array like base) at base."""
    numeric = base * 0.0
    for idx in np.ndindex(base.shape):
        up, down = base.copy(), base.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (loss(up) - loss(down)) / (2 * eps)
    return numeric


def cell_graph(cell, length, layout, merge, valid_length=False):
    """The JSON of cell unrolled on Symbols: its outputs, then its states."""
    kwargs = {'valid_length': sym.var('valid_length')} if valid_length else {}
    outputs, states = cell.unroll(length, sym.var('data'), layout=layout, merge_outputs=merge,
                                  **kwargs)
    outputs = outputs if isinstance(outputs, list) else [outputs]
    return sym.Group(outputs + states).tojson()
'''

FACT_LAYERS = {
    'lstm_2l': "rnn.LSTM(8, num_layers=2, input_size=4)",
    'gru_bi_ntc': "rnn.GRU(5, bidirectional=True, layout='NTC', dropout=0.5)",
    'rnn_tanh': "rnn.RNN(3, activation='tanh')",
    'lstm_proj_bi': "rnn.LSTM(6, projection_size=3, num_layers=2, bidirectional=True)",
}
FACT_CELLS = {
    'rnn_cell': "rnn.RNNCell(4)",
    'lstm_cell': "rnn.LSTMCell(4, input_size=3)",
    'gru_cell': "rnn.GRUCell(4)",
    'dropout_cell': "rnn.DropoutCell(0.5)",
    'zoneout_cell': "rnn.ZoneoutCell(rnn.LSTMCell(3), 0.1, 0.2)",
    'residual_cell': "rnn.ResidualCell(rnn.GRUCell(3))",
    'bi_cell': "rnn.BidirectionalCell(rnn.LSTMCell(2), rnn.LSTMCell(2))",
    'relu_cell': "rnn.RNNCell(4, activation='relu', input_size=2)",
    'vardrop_cell': "VariationalDropoutCell(rnn.GRUCell(3), 0.1, 0.2, 0.3)",
    'seq_cell': "stack(False)",
    'hseq_cell': "stack(True)",
}
GRAPH_CASES = {
    'nested_export': "export(RecNet(prefix='recnet_'), [nd.ones((2, 5, 4))])",
    'gru_ntc_export': "export(rnn.GRU(4, layout='NTC', prefix='gru_'), [nd.ones((2, 3, 5))])",
    'lstm_options_symbol': (
        "rnn.LSTM(6, num_layers=2, projection_size=3, state_clip_min=-1, state_clip_max=1, "
        "state_clip_nan=True, dropout=0.2, use_sequence_length=True, prefix='lstmp_')"
        "(sym.var('data'), sequence_length=sym.var('seqlen')).tojson()"),
    'rnn_states_symbol': (
        "sym.Group(sum([[o] if not isinstance(o, list) else o for o in "
        "rnn.RNN(4, bidirectional=True, prefix='rnn_')(sym.var('data'), sym.var('h0'))], "
        "[])).tojson()"),
    'lstm_cell_unroll': "cell_graph(rnn.LSTMCell(3, prefix='lstm_'), 2, 'NTC', True)",
    'gru_cell_unroll': "cell_graph(rnn.GRUCell(3, prefix='gru_'), 2, 'TNC', False)",
    'relu_cell_unroll': ("cell_graph(rnn.RNNCell(3, activation='relu', prefix='rnn_'), 2, "
                         "'NTC', True, valid_length=True)"),
    'bi_cell_unroll': ("cell_graph(rnn.BidirectionalCell(rnn.LSTMCell(2, prefix='l_'), "
                       "rnn.GRUCell(2, prefix='r_')), 2, 'NTC', True, valid_length=True)"),
    'stack_cell_unroll': "cell_graph(modifier_stack(), 2, 'NTC', None)",
}
LAYER_NUMBERS = {
    # name: (layer, input shape)
    'lstm_bi_ntc': ("rnn.LSTM(4, num_layers=2, bidirectional=True, layout='NTC', input_size=3, "
                    "dtype='float64')", [2, 3, 3]),
    'gru_bi': ("rnn.GRU(4, num_layers=2, bidirectional=True, input_size=3, dtype='float64')",
               [3, 2, 3]),
    'rnn_relu': ("rnn.RNN(4, num_layers=2, activation='relu', input_size=3, dtype='float64')",
                 [3, 2, 3]),
    'rnn_tanh_bi_ntc': ("rnn.RNN(4, activation='tanh', bidirectional=True, layout='NTC', "
                        "input_size=3, dtype='float64')", [2, 3, 3]),
}
CELL_NUMBERS = {
    # name: (cell, length, layout, input shape, valid_length or None); run as
    # Unroll(cell, length, layout, True, prefix='unroll_') on (data, begin states[, valid])
    'lstm_cell': ("rnn.LSTMCell(4, input_size=2)", 3, 'NTC', [2, 3, 2], [3, 1]),
    'gru_cell': ("rnn.GRUCell(4, input_size=2)", 3, 'TNC', [3, 2, 2], None),
    'tanh_cell': ("rnn.RNNCell(3, input_size=2)", 3, 'NTC', [2, 3, 2], [2, 3]),
    'bi_cell': ("bi_cell()", 3, 'TNC', [3, 2, 2], [1, 3]),
    'stack_cell': ("res_stack()", 3, 'NTC', [2, 3, 2], None),
}


def scope():
    names = dict(np=np, mx=mx, gluon=gluon, rnn=rnn, nd=nd, sym=sym,
                 VariationalDropoutCell=VariationalDropoutCell,
                 EXPORT_PATH=os.path.join('/tmp', 'make_rnn_files_export'))
    exec(BUILDERS, names)   # noqa: S102 - our own source
    return names


SCOPE = scope()


def build(code):
    """Evaluate ``code`` with block names counting from 0."""
    with mx.name.NameManager():
        return eval(code, SCOPE)   # noqa: S307 - our own source


# -------------------------------------------------------------------------------------------------
# facts and graphs
# -------------------------------------------------------------------------------------------------

def facts():
    out = {'builders': BUILDERS, 'graph_cases': GRAPH_CASES, 'layer_numbers': LAYER_NUMBERS,
           'cell_numbers': CELL_NUMBERS, 'layers': {}, 'cells': {}}
    for name, code in FACT_LAYERS.items():
        net = build(code)
        out['layers'][name] = {
            'code': code, 'repr': repr(net),
            'params': [[k, list(v.shape)] for k, v in net.collect_params().items()],
            'structural': list(net._collect_params_with_prefix().keys()),
            'state_info': [dict(i, shape=list(i['shape'])) for i in net.state_info(3)],
        }
    for name, code in FACT_CELLS.items():
        cell = build(code)
        out['cells'][name] = {
            'code': code, 'repr': repr(cell), 'prefix': cell.prefix,
            'params': [[k, list(v.shape)] for k, v in cell.collect_params().items()],
            'state_info': [dict(i, shape=list(i['shape'])) for i in cell.state_info(2)],
        }
    return out


def graphs():
    return {name: build(code) for name, code in GRAPH_CASES.items()}


# -------------------------------------------------------------------------------------------------
# numbers
# -------------------------------------------------------------------------------------------------

def values(rs, *shape):
    # float32 numbers (stored exactly in float32), computed with in float64
    return rs.uniform(-1, 1, shape).astype(np.float32).astype(np.float64)


def short(block, name):
    """A parameter's name without the block's prefix (the cells of an Unroll block, made
    outside it, keep theirs)."""
    return name[len(block.prefix):] if name.startswith(block.prefix) else name


def set_params(block, rs):
    """Random float64 parameters (biases too), by short name."""
    params = {}
    for name, p in block.collect_params().items():
        value = values(rs, *p.shape)
        p.set_data(nd.array(value, dtype='float64'))
        params[short(block, name)] = value
    return params


def flat(out):
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in flat(o)]
    return [out]


WRONG_GRADIENTS = {}


def record(block, inputs, rs, case, store):
    """Run ``block(*inputs)`` under autograd (predict mode) and store everything."""
    arrays = flat(inputs)
    for i, a in enumerate(arrays):
        a.attach_grad()
        store[f'{case}:input{i}'] = a.asnumpy()
    with autograd.record(train_mode=False):
        outs = flat(block(*inputs))
    cots = [values(rs, *o.shape) for o in outs]
    # (MXNet's GRU backward writes into the head gradients it is given: pass copies)
    autograd.backward(outs, [nd.array(c, dtype='float64') for c in cots])
    for i, (o, c) in enumerate(zip(outs, cots)):
        store[f'{case}:out{i}'] = o.asnumpy()
        store[f'{case}:cot{i}'] = c
    error = numeric_error(block, inputs, cots)
    if error > 1e-6:
        # MXNet's backward disagrees with its own forward: no gradients stored
        WRONG_GRADIENTS[case] = error
        return
    for i, a in enumerate(arrays):
        store[f'{case}:grad_input{i}'] = a.grad.asnumpy()
    for name, p in block.collect_params().items():
        store[f'{case}:grad_param:{short(block, name)}'] = p.grad().asnumpy()


def numeric_error(block, inputs, cots, eps=1e-6):
    """max |MXNet's gradient of the first input - central differences of its forward|."""
    x = inputs[0]

    def loss(value):
        with autograd.pause():
            outs = flat(block(nd.array(value, dtype='float64'), *inputs[1:]))
        return sum((o.asnumpy() * c).sum() for o, c in zip(outs, cots))

    numeric = SCOPE['numeric_gradient'](loss, x.asnumpy(), eps)
    return float(np.abs(numeric - x.grad.asnumpy()).max())


def numbers():
    store = {}
    rs = np.random.RandomState(7)
    for case, (code, shape) in LAYER_NUMBERS.items():
        net = build(code)
        net.initialize()
        for name, value in set_params(net, rs).items():
            store[f'{case}:param:{name}'] = value
        batch = shape[net._layout.find('N')]
        states = [nd.array(values(rs, *i['shape']), dtype='float64')
                  for i in net.state_info(batch)]
        x = nd.array(values(rs, *shape), dtype='float64')
        record(net, [x, states], rs, case, store)
    for case, (code, length, layout, shape, valid) in CELL_NUMBERS.items():
        with mx.name.NameManager():
            cell = eval(code, SCOPE)   # noqa: S307
            block = SCOPE['Unroll'](cell, length, layout, True, prefix='unroll_')
        block.initialize()
        block.cast('float64')
        for name, value in set_params(block, rs).items():
            store[f'{case}:param:{name}'] = value
        x = nd.array(values(rs, *shape), dtype='float64')
        states = [nd.array(values(rs, *i['shape']), dtype='float64')
                  for i in cell.state_info(shape[layout.find('N')])]
        inputs = [x, states] + ([] if valid is None else [nd.array(valid, dtype='float64')])
        record(block, inputs, rs, case, store)
        if valid is not None:
            store.pop(f'{case}:grad_input{len(states) + 1}', None)
    return store


def main():
    os.makedirs(OUT, exist_ok=True)
    results = numbers()
    with open(os.path.join(OUT, 'facts.json'), 'w') as f:
        json.dump(dict(facts(), mxnet_wrong_gradients=WRONG_GRADIENTS), f, indent=1)
    with gzip.GzipFile(os.path.join(OUT, 'graphs.json.gz'), 'wb', mtime=0) as f:
        f.write(json.dumps(graphs()).encode())
    # one float32 vector per case, and an index (fewer, smaller files than one array a key)
    parts, index = {}, {}
    for key, value in results.items():
        case, name = key.split(':', 1)
        parts.setdefault(case, [])
        offset = sum(p.size for p in parts[case])
        index.setdefault(case, []).append([name, offset, list(value.shape)])
        parts[case].append(value.astype(np.float32).ravel())
    store = {case: np.concatenate(p) for case, p in parts.items()}
    np.savez_compressed(os.path.join(OUT, 'numbers.npz'), index=np.array(json.dumps(index)),
                        **store)


if __name__ == '__main__':
    main()
