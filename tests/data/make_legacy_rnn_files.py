"""Writes the MXNet 1.9.1 fixtures of the legacy symbolic RNN API tests (tests/rnn/).

Run it with MXNet 1.9.1's Python (numpy<1.24), from the repository root:

    .oracle/bin/python tests/data/make_legacy_rnn_files.py

It writes, under tests/data/:

* ``legacy_rnn-cases.json.gz``: per case of ``CASES`` (code that builds a cell and unrolls it,
  run by the tests with hybridlib too), the cell's ``state_info``, ``begin_state`` names and
  parameter names, the unrolled graph's arguments, outputs, inferred shapes and JSON, and the
  names and shapes of ``unpack_weights`` (None where it raises KeyError, as for cells that
  share an ``RNNParams`` of another prefix); per case of ``SENTENCES``, the vocabulary and the
  batches of ``BucketSentenceIter`` (seeded);
* ``legacy_rnn-numbers.npz``: per case, the argument values given (seeded numpy), the forward
  outputs, the gradients (for cases without dropout) and the unpacked weights, as one float32
  vector per case and an ``index`` (JSON: per case, ``[key, offset, shape]`` of each array);
* ``legacy_rnn-ckpt-symbol.json`` and ``legacy_rnn-ckpt-0003.params``: a checkpoint that
  ``save_rnn_checkpoint`` wrote for a ``FusedRNNCell`` (weights unpacked).

Each case runs in a fresh ``NameManager``, so the automatic names (``_plus0``, ``split0``) are
the same in every run.
"""
import gzip
import json
import os
import random
import sys
import warnings

import numpy as np

os.environ.setdefault('MXNET_SUBGRAPH_BACKEND', 'NONE')   # MXNet's plain operators
import mxnet as mx  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# name: (code that sets `cell`, `outputs`, `states` from the variable `data`, data shape,
#        deterministic: whether forward in training and backward are recorded)
CASES = {
    'rnn_tanh_ntc_merged': (
        "cell = mx.rnn.RNNCell(4, prefix='rnn_')\n"
        "outputs, states = cell.unroll(3, data, layout='NTC', merge_outputs=True)",
        (2, 3, 5), True),
    'rnn_relu_list': (
        "cell = mx.rnn.RNNCell(3, activation='relu', prefix='r_')\n"
        "steps = [mx.sym.Variable('x%d' % i) for i in range(3)]\n"
        "outputs, states = cell.unroll(3, steps, begin_state=cell.begin_state(\n"
        "    func=mx.sym.Variable))",
        None, True),
    'lstm_tnc_merged': (
        "cell = mx.rnn.LSTMCell(4)\n"
        "outputs, states = cell.unroll(3, data, layout='TNC', merge_outputs=True)",
        (3, 2, 5), True),
    'lstm_forget_variable_states': (
        "cell = mx.rnn.LSTMCell(3, prefix='enc_', forget_bias=0.5)\n"
        "outputs, states = cell.unroll(2, data, begin_state=cell.begin_state(\n"
        "    func=mx.sym.Variable))",
        (2, 2, 4), True),
    'lstm_ones_states': (
        "cell = mx.rnn.LSTMCell(3, prefix='o_')\n"
        "outputs, states = cell.unroll(2, data, begin_state=cell.begin_state(\n"
        "    func=mx.sym.ones, dtype='float32'), merge_outputs=True)",
        (2, 2, 4), True),
    'shared_params_stack': (
        "shared = mx.rnn.RNNParams('shared_')\n"
        "cell = mx.rnn.SequentialRNNCell()\n"
        "cell.add(mx.rnn.LSTMCell(3, prefix='a_', params=shared))\n"
        "cell.add(mx.rnn.LSTMCell(3, prefix='b_', params=shared))\n"
        "outputs, states = cell.unroll(2, data)",
        (2, 2, 3), True),
    'gru_ntc': (
        "cell = mx.rnn.GRUCell(3)\n"
        "outputs, states = cell.unroll(3, data)",
        (2, 3, 4), True),
    'fused_lstm_bi_2l_tnc': (
        "cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode='lstm', bidirectional=True,\n"
        "                           get_next_state=True)\n"
        "outputs, states = cell.unroll(3, data, layout='TNC', merge_outputs=True)",
        (3, 2, 4), True),
    'fused_gru_ntc': (
        "cell = mx.rnn.FusedRNNCell(4, mode='gru', prefix='g_')\n"
        "outputs, states = cell.unroll(3, data, layout='NTC')",
        (2, 3, 3), True),
    'fused_tanh_split': (
        "cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode='rnn_tanh', get_next_state=True)\n"
        "outputs, states = cell.unroll(3, data, layout='TNC', merge_outputs=False)",
        (3, 2, 2), True),
    'unfused_lstm_bi_2l': (
        "fused = mx.rnn.FusedRNNCell(3, num_layers=2, mode='lstm', bidirectional=True)\n"
        "cell = fused.unfuse()\n"
        "outputs, states = cell.unroll(3, data, layout='TNC', merge_outputs=True)",
        (3, 2, 4), True),
    'unfused_relu_dropout': (
        "fused = mx.rnn.FusedRNNCell(3, num_layers=2, mode='rnn_relu', dropout=0.5)\n"
        "cell = fused.unfuse()\n"
        "outputs, states = cell.unroll(3, data)",
        (2, 3, 2), False),
    'sequential_dropout': (
        "cell = mx.rnn.SequentialRNNCell()\n"
        "cell.add(mx.rnn.LSTMCell(3, prefix='l0_'))\n"
        "cell.add(mx.rnn.DropoutCell(0.5, prefix='drop_'))\n"
        "cell.add(mx.rnn.GRUCell(3, prefix='l1_'))\n"
        "outputs, states = cell.unroll(3, data, merge_outputs=True)",
        (2, 3, 4), False),
    'sequential_step': (
        "cell = mx.rnn.SequentialRNNCell()\n"
        "cell.add(mx.rnn.RNNCell(3, prefix='a_'))\n"
        "cell.add(mx.rnn.GRUCell(2, prefix='b_'))\n"
        "cell.reset()\n"
        "x = mx.sym.split(data, num_outputs=2, axis=1, squeeze_axis=True)\n"
        "states = cell.begin_state()\n"
        "o0, states = cell(x[0], states)\n"
        "outputs, states = cell(x[1], states)",
        (2, 2, 3), True),
    'dropout_merged': (
        "cell = mx.rnn.DropoutCell(0.3)\n"
        "outputs, states = cell.unroll(3, data, merge_outputs=True)",
        (2, 3, 4), False),
    'bidirectional_merged': (
        "cell = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(3, prefix='l_'),\n"
        "                                mx.rnn.GRUCell(3, prefix='r_'))\n"
        "outputs, states = cell.unroll(3, data, merge_outputs=True)",
        (2, 3, 4), True),
    'bidirectional_list_tnc': (
        "cell = mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix='l_'),\n"
        "                                mx.rnn.RNNCell(2, prefix='r_'), output_prefix='two_')\n"
        "outputs, states = cell.unroll(3, data, layout='TNC')",
        (3, 2, 4), True),
    'zoneout': (
        "cell = mx.rnn.ZoneoutCell(mx.rnn.LSTMCell(3), zoneout_outputs=0.3,\n"
        "                          zoneout_states=0.2)\n"
        "outputs, states = cell.unroll(3, data)",
        (2, 3, 4), False),
    'residual_merged': (
        "cell = mx.rnn.ResidualCell(mx.rnn.GRUCell(4, prefix='res_'))\n"
        "outputs, states = cell.unroll(3, data, merge_outputs=True)",
        (2, 3, 4), True),
    'residual_list': (
        "cell = mx.rnn.ResidualCell(mx.rnn.RNNCell(4))\n"
        "outputs, states = cell.unroll(2, data)",
        (2, 2, 4), True),
    'conv_rnn': (
        "cell = mx.rnn.ConvRNNCell((2, 3, 4, 4), 2)\n"
        "outputs, states = cell.unroll(2, data, merge_outputs=True)",
        (2, 2, 3, 4, 4), True),
    'conv_lstm_tanh': (
        "cell = mx.rnn.ConvLSTMCell((2, 2, 5, 5), 2, i2h_kernel=(3, 3), i2h_pad=(0, 0),\n"
        "                           h2h_kernel=(3, 3), h2h_dilate=(2, 2), activation='tanh')\n"
        "outputs, states = cell.unroll(2, data)",
        (2, 2, 2, 5, 5), True),
    'conv_gru': (
        "cell = mx.rnn.ConvGRUCell((2, 2, 4, 4), 3, i2h_stride=(2, 2), prefix='cg_')\n"
        "outputs, states = cell.unroll(2, data, layout='TNC')",
        (2, 2, 2, 4, 4), True),
}

# name: (sentences, iterator keyword arguments)
SENTENCES = {
    'nt_auto_buckets': ([
        'the cat sat', 'a dog ran far', 'the dog sat', 'a cat', 'the bird flew high',
        'a bird sat', 'the cat ran', 'a dog', 'birds fly', 'cats sit down now',
        'the dog ran far away', 'a cat sat', 'dogs run'], dict(batch_size=2)),
    'tn_given_buckets': ([
        'the cat sat', 'a dog ran far', 'the dog sat', 'a cat', 'the bird flew high',
        'a bird sat', 'the cat ran', 'a dog', 'birds fly', 'cats sit down now',
        'the dog ran far away today in the park', 'a cat sat'],
        dict(batch_size=3, buckets=[3, 5], layout='TN', invalid_label=0, data_name='words',
             label_name='next', dtype='int32')),
}


def flatten(nested):
    if isinstance(nested, (list, tuple)):
        return [s for item in nested for s in flatten(item)]
    return [nested]


def distinct(symbols):
    """``symbols`` without repeats of one output (a cell's last output is also its state):
    MXNet's executor keeps only the last head gradient of a repeated output."""
    seen, result = set(), []
    for s in symbols:
        if s.list_outputs()[0] not in seen:
            seen.add(s.list_outputs()[0])
            result.append(s)
    return result


def build(mx_module, code, data_shape):
    """``(cell, grouped outputs and states, number of outputs)`` of a case, run in a fresh
    NameManager with ``mx`` being ``mx_module``."""
    with mx_module.name.NameManager():
        scope = {'mx': mx_module, 'data': mx_module.sym.Variable('data')}
        exec(code, scope)  # noqa: S102 - the cases above
        outputs, states = flatten(scope['outputs']), flatten(scope['states'])
        return scope['cell'], mx_module.sym.Group(distinct(outputs + states)), len(outputs)


def input_shapes(graph, data_shape):
    """The shapes to infer from: ``data``, or every input named ``x*`` and the states."""
    names = graph.list_arguments()
    if data_shape is not None:
        return {'data': data_shape}
    return {n: (2, 3) for n in names if n.startswith(('x', 'r_begin'))}


def state_info_json(cell):
    return [None if info is None else {'shape': list(info['shape']),
                                       '__layout__': info['__layout__']}
            for info in cell.state_info]


def run_case(name, code, data_shape, deterministic, numbers):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        cell, graph, n_out = build(mx, code, data_shape)
    shapes = input_shapes(graph, data_shape)
    arg_shapes, out_shapes, aux_shapes = graph.infer_shape(**shapes)
    rng = np.random.RandomState(sum(map(ord, name)))
    args = {n: rng.uniform(-1, 1, s).astype(np.float32)
            for n, s in zip(graph.list_arguments(), arg_shapes)}
    grads = {n: mx.nd.zeros(s) for n, s in zip(graph.list_arguments(), arg_shapes)}
    exe = graph.bind(mx.cpu(), {n: mx.nd.array(v) for n, v in args.items()},
                     args_grad=grads if deterministic else None,
                     grad_req='write' if deterministic else 'null')
    exe.forward(is_train=deterministic)
    for key, value in args.items():
        numbers[f'{name}/arg:{key}'] = value
    for i, out in enumerate(exe.outputs):
        numbers[f'{name}/out{i}'] = out.asnumpy()
    if deterministic:
        heads = [rng.uniform(-1, 1, s).astype(np.float32) for s in out_shapes]
        exe.backward([mx.nd.array(h) for h in heads])
        for i, head in enumerate(heads):
            numbers[f'{name}/head{i}'] = head
        for key, grad in grads.items():
            numbers[f'{name}/grad:{key}'] = grad.asnumpy()
    params = {n: mx.nd.array(v) for n, v in args.items() if n in cell.params._params}
    try:
        unpacked = cell.unpack_weights(params)
    except KeyError:        # cells sharing params under another prefix (recorded as None)
        unpacked = None
    for key, value in (unpacked or {}).items():
        numbers[f'{name}/unpacked:{key}'] = value.asnumpy()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with mx.name.NameManager():
            cell.reset()
            begin = [s.name for s in flatten(cell.begin_state())]
    return {
        'code': code, 'data_shape': data_shape, 'deterministic': deterministic,
        'n_outputs': n_out, 'state_info': state_info_json(cell), 'begin_state': begin,
        'params': sorted(cell.params._params), 'input_shapes': {k: list(v) for k, v in
                                                                shapes.items()},
        'arguments': graph.list_arguments(), 'outputs': graph.list_outputs(),
        'auxiliary_states': graph.list_auxiliary_states(),
        'arg_shapes': [list(s) for s in arg_shapes], 'out_shapes': [list(s) for s in out_shapes],
        'json': json.loads(graph.tojson()),
        'unpacked': None if unpacked is None else {k: list(v.shape)
                                                   for k, v in unpacked.items()},
    }


def run_sentences(name, sentences, kwargs, numbers):
    tokens = [s.split() for s in sentences]
    encoded, vocab = mx.rnn.encode_sentences(tokens, invalid_label=0, start_label=1)
    random.seed(7)
    np.random.seed(7)
    it = mx.rnn.BucketSentenceIter(encoded, **dict(kwargs))
    epochs = []
    for epoch in range(2):
        if epoch:
            it.reset()
        batches = []
        for i, batch in enumerate(it):
            numbers[f'{name}/e{epoch}b{i}/data'] = batch.data[0].asnumpy()
            numbers[f'{name}/e{epoch}b{i}/label'] = batch.label[0].asnumpy()
            batches.append({'bucket_key': batch.bucket_key, 'pad': batch.pad,
                            'provide_data': [[d.name, list(d.shape), d.layout]
                                             for d in batch.provide_data],
                            'provide_label': [[d.name, list(d.shape), d.layout]
                                              for d in batch.provide_label],
                            'dtype': str(batch.data[0].dtype)})
        epochs.append(batches)
    return {'sentences': sentences, 'kwargs': kwargs, 'encoded': encoded, 'vocab': vocab,
            'buckets': it.buckets, 'default_bucket_key': it.default_bucket_key,
            'provide_data': [[d.name, list(d.shape), d.layout] for d in it.provide_data],
            'provide_label': [[d.name, list(d.shape), d.layout] for d in it.provide_label],
            'epochs': epochs}


def write_checkpoint():
    """A fused LSTM's checkpoint, written by save_rnn_checkpoint (weights unpacked)."""
    cell = mx.rnn.FusedRNNCell(2, mode='lstm', prefix='ck_', get_next_state=True)
    with mx.name.NameManager():
        out, _ = cell.unroll(2, mx.sym.Variable('data'), layout='TNC', merge_outputs=True)
        net = mx.sym.FullyConnected(out, num_hidden=2, flatten=False, name='fc')
    arg_shapes, _, _ = net.infer_shape(data=(2, 1, 3))
    rng = np.random.RandomState(3)
    args = {n: mx.nd.array(rng.uniform(-1, 1, s)) for n, s in
            zip(net.list_arguments(), arg_shapes) if n != 'data'}
    mx.rnn.save_rnn_checkpoint(cell, os.path.join(HERE, 'legacy_rnn-ckpt'), 3, net, args, {})
    return {n: a.asnumpy() for n, a in args.items()}


def pack(numbers):
    """``{case: float32 vector}`` and the index of the arrays in them (see the docstring)."""
    vectors, index = {}, {}
    for key, value in numbers.items():
        case, name = key.split('/', 1)
        parts = vectors.setdefault(case, [])
        offset = sum(p.size for p in parts)
        index.setdefault(case, []).append([name, offset, list(value.shape)])
        parts.append(np.asarray(value, dtype=np.float32).reshape(-1))
    vectors = {case: np.concatenate(parts) for case, parts in vectors.items()}
    return vectors, index


def main():
    numbers = {}
    facts = {'cases': {name: run_case(name, *case, numbers) for name, case in CASES.items()},
             'sentences': {name: run_sentences(name, *case, numbers)
                           for name, case in SENTENCES.items()},
             'rnn_all': sorted(n for n in dir(mx.rnn) if not n.startswith('_'))}
    for key, value in write_checkpoint().items():
        numbers[f'ckpt/arg:{key}'] = value
    with gzip.open(os.path.join(HERE, 'legacy_rnn-cases.json.gz'), 'wt') as f:
        json.dump(facts, f, sort_keys=True)
    vectors, index = pack(numbers)
    np.savez_compressed(os.path.join(HERE, 'legacy_rnn-numbers.npz'), index=json.dumps(index),
                        **vectors)
    print(f'{len(CASES)} cell cases, {len(SENTENCES)} iterator cases, {len(numbers)} arrays',
          file=sys.stderr)


if __name__ == '__main__':
    main()
