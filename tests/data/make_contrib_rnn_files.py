"""Writes the MXNet 1.9.1 fixtures of the contrib recurrent cell tests
(tests/contrib/test_rnn.py): ``gluon.contrib.rnn``'s convolutional cells, ``LSTMPCell``,
``VariationalDropoutCell`` and ``rnn_cell.dynamic_unroll``.

Run with the MXNet oracle's Python, from the repository root::

    .oracle/bin/python tests/data/make_contrib_rnn_files.py

It writes, under tests/data/:

* ``contrib_rnn-facts.json``: the construction code (``builders``: source that works with
  MXNet's and hybridlib's ``gluon``, ``rnn``, ``crnn`` (``gluon.contrib.rnn``), ``nd``,
  ``sym``; the cases' expressions), the signatures of the public classes and functions, and
  what MXNet printed for each cell: repr, prefix, parameter names and shapes, ``state_info``,
  and the output and state shapes of one step (channel-last cells too, whose numbers MXNet's
  CPU cannot compute);
* ``contrib_rnn-graphs.json.gz``: ``{case: -symbol.json text}``: exports of hybridized blocks
  unrolling cells;
* ``contrib_rnn-numbers.npz``: per case one float32 vector holding the arrays that ``index``
  (a JSON text: ``{case: [[key, offset, shape], ...]}``) lists: parameters (``param:NAME``,
  less the block's prefix where they have it), inputs, outputs, the cotangents of the
  outputs and the gradients of the inputs and parameters. Unrolled cells are computed in
  float64 (predict mode) from float32 numbers, cells with an activation block stepped by
  hand (``Steps``: MXNet's ``unroll`` fails on them); ``dynamic_unroll`` in float32 (MXNet's
  ``dynamic_unroll`` with ``valid_length`` refuses float64).
"""
import gzip
import inspect
import json
import os

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd, sym
from mxnet.gluon import rnn
from mxnet.gluon.contrib import rnn as crnn

OUT = os.path.dirname(os.path.abspath(__file__))

# the blocks the cases build, run by the tests with hybridlib's modules in the same names
BUILDERS = '''
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


class DynamicUnroll(gluon.HybridBlock):
    """crnn.rnn_cell.dynamic_unroll as a block: (data, begin states, valid_length) ->
    outputs, states."""

    def __init__(self, cell, layout, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell
        self._layout = layout

    def hybrid_forward(self, F, x, states, valid_length=None):
        return crnn.rnn_cell.dynamic_unroll(self.cell, x, states, layout=self._layout,
                                            valid_length=valid_length)


class Steps(gluon.HybridBlock):
    """The cell stepped by hand over the time axis of 'NTC' data: (data, begin states) ->
    stacked outputs, states. (MXNet's unroll fails on cells holding an activation block.)"""

    def __init__(self, cell, length, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell
        self._length = length

    def hybrid_forward(self, F, x, states):
        outputs = []
        for t in range(self._length):
            step = F.squeeze(F.slice_axis(x, axis=1, begin=t, end=t + 1), axis=1)
            out, states = self.cell(step, states)
            outputs.append(out)
        return F.stack(*outputs, axis=1), states


def export(block, inputs):
    """The -symbol.json text of block, hybridized and called on inputs."""
    import os
    import tempfile
    block.initialize()
    block.hybridize()
    block(*inputs)
    with tempfile.TemporaryDirectory() as folder:
        block.export(os.path.join(folder, 'net'))
        with open(os.path.join(folder, 'net-symbol.json')) as f:
            return f.read()
'''

# name: (cell, input shape of one step with the batch axis)
FACT_CELLS = {
    'conv1d_rnn': ("crnn.Conv1DRNNCell((3, 7), 4, 3, 3)", [2, 3, 7]),
    'conv1d_rnn_options': ("crnn.Conv1DRNNCell((3, 7), 4, (3,), (5,), i2h_pad=1, i2h_dilate=2, "
                           "h2h_dilate=(2,), activation='relu', prefix='c1_')", [2, 3, 7]),
    'conv2d_rnn': ("crnn.Conv2DRNNCell((2, 5, 6), 3, (3, 1), 3)", [2, 2, 5, 6]),
    'conv2d_rnn_nhwc': ("crnn.Conv2DRNNCell((5, 6, 2), 3, 3, (1, 3), conv_layout='NHWC')",
                        [2, 5, 6, 2]),
    'conv3d_rnn': ("crnn.Conv3DRNNCell((2, 4, 4, 5), 2, 3, 1, i2h_pad=(1, 0, 1))",
                   [2, 2, 4, 4, 5]),
    'conv1d_lstm': ("crnn.Conv1DLSTMCell((3, 8), 2, 3, 3, activation='sigmoid')", [2, 3, 8]),
    'conv2d_lstm': ("crnn.Conv2DLSTMCell((3, 5, 5), 4, 3, 3, i2h_pad=(1, 1))", [2, 3, 5, 5]),
    'conv2d_lstm_leaky': ("crnn.Conv2DLSTMCell((3, 5, 5), 4, 3, 3, "
                          "activation=gluon.nn.LeakyReLU(0.1))", [2, 3, 5, 5]),
    'conv3d_lstm_ndhwc': ("crnn.Conv3DLSTMCell((3, 4, 4, 2), 2, (1, 3, 3), 3, "
                          "conv_layout='NDHWC')", [2, 3, 4, 4, 2]),
    'conv1d_gru': ("crnn.Conv1DGRUCell((2, 6), 3, 3, 3, h2h_dilate=2)", [2, 2, 6]),
    'conv2d_gru': ("crnn.Conv2DGRUCell((2, 4, 5), 3, (1, 3), (3, 1), prefix='g_')",
                   [2, 2, 4, 5]),
    'conv2d_gru_nhwc': ("crnn.Conv2DGRUCell((4, 5, 2), 3, 3, 3, conv_layout='NHWC')",
                        [2, 4, 5, 2]),
    'conv3d_gru': ("crnn.Conv3DGRUCell((1, 3, 3, 3), 2, 1, 3)", [2, 1, 3, 3, 3]),
    'lstmp': ("crnn.LSTMPCell(4, 2)", [2, 3]),
    'lstmp_sized': ("crnn.LSTMPCell(5, 3, input_size=2, prefix='p_')", [2, 2]),
    'vardrop_lstmp': ("crnn.VariationalDropoutCell(crnn.LSTMPCell(4, 2), 0.1, 0.2, 0.3)",
                      [2, 3]),
    'vardrop_conv': ("crnn.VariationalDropoutCell(crnn.Conv1DGRUCell((2, 6), 3, 3, 3), "
                     "drop_inputs=0.5)", [2, 2, 6]),
}
GRAPH_CASES = {
    'conv1d_rnn_unroll': "export(Unroll(crnn.Conv1DRNNCell((3, 7), 4, 3, 3, prefix='r_'), 2, "
                         "'NTC', True, prefix='u_'), "
                         "[nd.ones((2, 2, 3, 7)), [nd.ones((2, 4, 5))]])",
    'conv2d_lstm_unroll': "export(Unroll(crnn.Conv2DLSTMCell((3, 5, 5), 4, 3, 3, i2h_pad=1, "
                          "prefix='l_'), 2, 'TNC', False, prefix='u_'), [nd.ones((2, 2, 3, 5, 5)), "
                          "[nd.ones((2, 4, 5, 5)), nd.ones((2, 4, 5, 5))]])",
    'conv3d_gru_unroll': "export(Unroll(crnn.Conv3DGRUCell((1, 3, 3, 3), 2, 1, 3, "
                         "activation='relu', prefix='g_'), 2, 'NTC', True, prefix='u_'), "
                         "[nd.ones((2, 2, 1, 3, 3, 3)), [nd.ones((2, 2, 3, 3, 3))], "
                         "nd.array([2, 1])])",
    'lstmp_unroll': "export(Unroll(crnn.LSTMPCell(4, 2, prefix='p_'), 3, 'NTC', True, "
                    "prefix='u_'), [nd.ones((2, 3, 5)), [nd.ones((2, 2)), nd.ones((2, 4))]])",
    'lstmp_valid_unroll': "export(Unroll(crnn.LSTMPCell(4, 2, prefix='p_'), 2, 'TNC', False, "
                          "prefix='u_'), [nd.ones((2, 3, 5)), [nd.ones((3, 2)), nd.ones((3, 4))], "
                          "nd.array([1, 2, 2])])",
}
CELL_NUMBERS = {
    # name: (cell, length, layout, input shape, valid_length or None); run as
    # Unroll(cell, length, layout, True, prefix='unroll_') on (data, begin states[, valid])
    'conv1d_rnn': ("crnn.Conv1DRNNCell((2, 6), 3, 3, 3, i2h_pad=1, activation='relu')", 3,
                   'NTC', [2, 3, 2, 6], None),
    'conv2d_rnn': ("crnn.Conv2DRNNCell((2, 4, 5), 2, (3, 1), 3)", 2, 'TNC', [2, 2, 2, 4, 5],
                   [2, 1]),
    'conv3d_rnn': ("crnn.Conv3DRNNCell((1, 3, 3, 4), 2, 1, (3, 1, 3))", 2, 'NTC',
                   [2, 2, 1, 3, 3, 4], None),
    'conv1d_lstm': ("crnn.Conv1DLSTMCell((2, 7), 2, 3, 3, i2h_dilate=2, h2h_dilate=2)", 3,
                    'NTC', [2, 3, 2, 7], [3, 2]),
    'conv2d_lstm': ("crnn.Conv2DLSTMCell((2, 4, 4), 2, 3, 3, i2h_pad=(1, 1))", 2, 'TNC',
                    [2, 2, 2, 4, 4], None),
    'conv3d_lstm': ("crnn.Conv3DLSTMCell((1, 2, 3, 3), 2, (1, 3, 3), 3, i2h_pad=(0, 1, 1))", 2,
                    'NTC', [2, 2, 1, 2, 3, 3], None),
    'conv1d_gru': ("crnn.Conv1DGRUCell((2, 6), 3, 3, 5)", 3, 'TNC', [3, 2, 2, 6], [1, 3]),
    'conv2d_gru': ("crnn.Conv2DGRUCell((2, 4, 5), 2, (1, 3), (3, 1), activation='softsign')",
                   2, 'NTC', [2, 2, 2, 4, 5], None),
    'conv3d_gru': ("crnn.Conv3DGRUCell((1, 3, 3, 3), 2, 1, 3)", 2, 'NTC', [2, 2, 1, 3, 3, 3],
                   None),
    'lstmp': ("crnn.LSTMPCell(4, 2, input_size=3)", 3, 'NTC', [2, 3, 3], [3, 2]),
    'lstmp_tnc': ("crnn.LSTMPCell(3, 2, input_size=2)", 4, 'TNC', [4, 2, 2], None),
    'vardrop_lstmp': ("crnn.VariationalDropoutCell(crnn.LSTMPCell(4, 2, input_size=3), 0.3, "
                      "0.4, 0.5)", 3, 'NTC', [2, 3, 3], None),
    'vardrop_lstmp_nostate': ("crnn.VariationalDropoutCell(crnn.LSTMPCell(3, 2, input_size=2), "
                              "0.3, 0., 0.5)", 3, 'TNC', [3, 2, 2], [2, 3]),
}
STEP_NUMBERS = {
    # name: (cell, length, 'NTC' input shape); run as Steps(cell, length, prefix='steps_')
    # on (data, begin states), float64
    'conv2d_lstm_leaky': ("crnn.Conv2DLSTMCell((1, 4, 4), 2, 3, 3, "
                          "activation=gluon.nn.LeakyReLU(0.1))", 2, [2, 2, 1, 4, 4]),
    'conv1d_rnn_leaky': ("crnn.Conv1DRNNCell((2, 5), 2, 3, 3, "
                         "activation=gluon.nn.LeakyReLU(0.2))", 3, [2, 3, 2, 5]),
}
DYNAMIC_NUMBERS = {
    # name: (cell, layout, input shape, valid_length or None); run as
    # DynamicUnroll(cell, layout, prefix='dyn_') on (data, begin states[, valid]), float32
    'dynamic_lstm_tnc': ("rnn.LSTMCell(3, input_size=2)", 'TNC', [4, 2, 2], None),
    'dynamic_lstm_ntc_valid': ("rnn.LSTMCell(3, input_size=2)", 'NTC', [2, 4, 2], [2, 4]),
    'dynamic_gru_tnc_valid': ("rnn.GRUCell(3, input_size=2)", 'TNC', [3, 3, 2], [3, 1, 2]),
    'dynamic_lstmp_ntc': ("crnn.LSTMPCell(4, 2, input_size=3)", 'NTC', [2, 3, 3], None),
}
PUBLIC = ['Conv1DRNNCell', 'Conv2DRNNCell', 'Conv3DRNNCell', 'Conv1DLSTMCell',
          'Conv2DLSTMCell', 'Conv3DLSTMCell', 'Conv1DGRUCell', 'Conv2DGRUCell', 'Conv3DGRUCell',
          'LSTMPCell', 'VariationalDropoutCell']


def scope():
    names = dict(np=np, mx=mx, gluon=gluon, rnn=rnn, crnn=crnn, nd=nd, sym=sym)
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

def step_shapes(cell, shape):
    """The shapes of one step's output and states, from a Symbol step's shape inference (it
    works for the layouts that MXNet's CPU cannot compute)."""
    states = [sym.var(f's{i}', shape=tuple(info['shape']))
              for i, info in enumerate(cell.state_info(shape[0]))]
    out, new_states = cell(sym.var('x', shape=tuple(shape)), states)
    _, out_shapes, _ = sym.Group([out] + new_states).infer_shape()
    return [list(s) for s in out_shapes]


def facts():
    out = {'builders': BUILDERS, 'graph_cases': GRAPH_CASES, 'cell_numbers': CELL_NUMBERS,
           'step_numbers': STEP_NUMBERS, 'dynamic_numbers': DYNAMIC_NUMBERS, 'cells': {},
           'signatures': {name: str(inspect.signature(getattr(crnn, name).__init__))
                          for name in PUBLIC},
           'dynamic_unroll_signature': str(inspect.signature(crnn.rnn_cell.dynamic_unroll)),
           'all': {'rnn': crnn.__all__, 'conv_rnn_cell': crnn.conv_rnn_cell.__all__,
                   'rnn_cell': crnn.rnn_cell.__all__}}
    for name, (code, shape) in FACT_CELLS.items():
        cell = build(code)
        fact = {
            'code': code, 'input_shape': shape, 'repr': repr(cell), 'prefix': cell.prefix,
            'params': [[k, list(v.shape)] for k, v in cell.collect_params().items()],
            'state_info': [dict(i, shape=list(i['shape'])) for i in cell.state_info(2)],
        }
        fact['step_shapes'] = step_shapes(build(code), shape)
        out['cells'][name] = fact
    return out


def graphs():
    return {name: build(code) for name, code in GRAPH_CASES.items()}


# -------------------------------------------------------------------------------------------------
# numbers
# -------------------------------------------------------------------------------------------------

def values(rs, *shape):
    # float32 numbers (stored exactly in float32)
    return rs.uniform(-1, 1, shape).astype(np.float32).astype(np.float64)


def short(block, name):
    """A parameter's name without the block's prefix."""
    return name[len(block.prefix):] if name.startswith(block.prefix) else name


def flat(out):
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in flat(o)]
    return [out]


def record(block, inputs, rs, case, store, dtype):
    """Run ``block(*inputs)`` under autograd (predict mode) and store everything but the
    gradient of a valid_length."""
    arrays = flat(inputs)
    for i, a in enumerate(arrays):
        a.attach_grad()
        store[f'{case}:input{i}'] = a.asnumpy()
    with autograd.record(train_mode=False):
        outs = flat(block(*inputs))
    cots = [values(rs, *o.shape) for o in outs]
    autograd.backward(outs, [nd.array(c, dtype=dtype) for c in cots])
    for i, (o, c) in enumerate(zip(outs, cots)):
        store[f'{case}:out{i}'] = o.asnumpy()
        store[f'{case}:cot{i}'] = c
    for i, a in enumerate(arrays):
        store[f'{case}:grad_input{i}'] = a.grad.asnumpy()
    for name, p in block.collect_params().items():
        store[f'{case}:grad_param:{short(block, name)}'] = p.grad().asnumpy()


def run_case(case, block, cell, shape, layout, valid, rs, store, dtype):
    block.initialize()
    block.cast(dtype)
    for name, p in block.collect_params().items():
        value = values(rs, *p.shape)
        p.set_data(nd.array(value, dtype=dtype))
        store[f'{case}:param:{short(block, name)}'] = value
    x = nd.array(values(rs, *shape), dtype=dtype)
    states = [nd.array(values(rs, *i['shape']), dtype=dtype)
              for i in cell.state_info(shape[layout.find('N')])]
    inputs = [x, states] + ([] if valid is None else [nd.array(valid, dtype=dtype)])
    record(block, inputs, rs, case, store, dtype)
    if valid is not None:
        store.pop(f'{case}:grad_input{len(states) + 1}')


def numbers():
    store = {}
    rs = np.random.RandomState(11)
    for case, (code, length, layout, shape, valid) in CELL_NUMBERS.items():
        with mx.name.NameManager():
            cell = eval(code, SCOPE)   # noqa: S307
            block = SCOPE['Unroll'](cell, length, layout, True, prefix='unroll_')
        run_case(case, block, cell, shape, layout, valid, rs, store, 'float64')
    for case, (code, length, shape) in STEP_NUMBERS.items():
        with mx.name.NameManager():
            cell = eval(code, SCOPE)   # noqa: S307
            block = SCOPE['Steps'](cell, length, prefix='steps_')
        run_case(case, block, cell, shape, 'NTC', None, rs, store, 'float64')
    for case, (code, layout, shape, valid) in DYNAMIC_NUMBERS.items():
        with mx.name.NameManager():
            cell = eval(code, SCOPE)   # noqa: S307
            block = SCOPE['DynamicUnroll'](cell, layout, prefix='dyn_')
        run_case(case, block, cell, shape, layout, valid, rs, store, 'float32')
    return store


def main():
    results = numbers()
    with open(os.path.join(OUT, 'contrib_rnn-facts.json'), 'w') as f:
        json.dump(facts(), f, indent=1)
    with gzip.GzipFile(os.path.join(OUT, 'contrib_rnn-graphs.json.gz'), 'wb', mtime=0) as f:
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
    np.savez_compressed(os.path.join(OUT, 'contrib_rnn-numbers.npz'),
                        index=np.array(json.dumps(index)), **store)


if __name__ == '__main__':
    main()
