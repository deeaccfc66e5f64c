"""MXNet's legacy symbolic RNN API (hybridlib/rnn/, ``mx.rnn``) against MXNet 1.9.1's.

The fixtures (tests/data/legacy_rnn-*) come from tests/data/make_legacy_rnn_files.py run with
MXNet 1.9.1: each case's code builds a cell and unrolls it; here the same code runs with
hybridlib, and the graph (arguments, shapes, JSON node for node), the states, the forward
outputs and gradients for MXNet's argument values, and the unpacked weights must be MXNet's.
"""
import gzip
import json
import os
import random
import warnings

import numpy as np
import pytest

import hybridlib as mx
import hybridlib.rnn  # noqa: F401  mx.rnn (the legacy API)
from hybridlib import gluon_rnn
from hybridlib.base import MXNetAssertionError

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, '..', 'data')

with gzip.open(os.path.join(DATA, 'legacy_rnn-cases.json.gz'), 'rt') as _f:
    FACTS = json.load(_f)
with np.load(os.path.join(DATA, 'legacy_rnn-numbers.npz')) as _f:
    _INDEX = json.loads(str(_f['index']))
    _VECTORS = {case: _f[case] for case in _INDEX}

CASES = FACTS['cases']
SENTENCES = FACTS['sentences']
RTOL, ATOL = 1e-5, 1e-6


def numbers(case, prefix=''):
    """``{key: float32 array}`` of one case's recorded arrays whose key starts with prefix
    (the prefix removed)."""
    vector = _VECTORS[case]
    return {key[len(prefix):]: vector[offset:offset + int(np.prod(shape))].reshape(shape)
            for key, offset, shape in _INDEX[case] if key.startswith(prefix)}


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


def build(code):
    """``(cell, outputs and states grouped)`` of a case's code, run with hybridlib in a fresh
    NameManager (as the generator ran it with MXNet)."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with mx.name.NameManager():
            scope = {'mx': mx, 'data': mx.sym.Variable('data')}
            exec(code, scope)  # noqa: S102 - the recorded cases
            outputs, states = flatten(scope['outputs']), flatten(scope['states'])
            return scope['cell'], mx.sym.Group(distinct(outputs + states))


def bind(graph, args, with_grad):
    grads = {n: mx.nd.zeros(a.shape) for n, a in args.items()} if with_grad else None
    exe = graph.bind(mx.cpu(), {n: mx.nd.array(a) for n, a in args.items()}, args_grad=grads,
                     grad_req='write' if with_grad else 'null')
    return exe, grads


def test_mx_rnn_holds_mxnets_names():
    foreign = {'bisect', 'functools', 'np', 'random', 'warnings', 'numeric_types',
               'string_types'}
    missing = [n for n in FACTS['rnn_all'] if n not in foreign and not hasattr(mx.rnn, n)]
    assert missing == []
    assert mx.rnn.io.BucketSentenceIter is mx.rnn.BucketSentenceIter
    assert mx.rnn.rnn.save_rnn_checkpoint is mx.rnn.save_rnn_checkpoint
    assert mx.rnn.rnn_cell.ConvLSTMCell is mx.rnn.ConvLSTMCell
    assert mx.rnn.DataIter is mx.io.DataIter and mx.rnn.symbol is mx.sym
    assert mx.rnn.save_checkpoint is mx.model.save_checkpoint


def test_gluon_rnn_is_another_module():
    assert mx.gluon.rnn is gluon_rnn
    assert mx.rnn is not gluon_rnn
    assert mx.rnn.LSTMCell is not gluon_rnn.LSTMCell


@pytest.mark.parametrize('name', sorted(CASES))
def test_graph_matches_mxnet(name):
    case = CASES[name]
    cell, graph = build(case['code'])
    assert graph.list_arguments() == case['arguments']
    assert graph.list_outputs() == case['outputs']
    assert graph.list_auxiliary_states() == case['auxiliary_states']
    arg_shapes, out_shapes, _ = graph.infer_shape(**case['input_shapes'])
    assert [list(s) for s in arg_shapes] == case['arg_shapes']
    assert [list(s) for s in out_shapes] == case['out_shapes']
    assert json.loads(graph.tojson()) == case['json']
    assert sorted(cell.params._params) == case['params']
    info = [None if i is None else {'shape': list(i['shape']), '__layout__': i['__layout__']}
            for i in cell.state_info]
    assert info == case['state_info']
    assert cell.state_shape == [tuple(i['shape']) for i in case['state_info']]
    with mx.name.NameManager():
        cell.reset()
        assert [s.name for s in flatten(cell.begin_state())] == case['begin_state']


@pytest.mark.parametrize('name', sorted(CASES))
def test_forward_and_gradients_match_mxnet(name):
    case = CASES[name]
    _, graph = build(case['code'])
    args = numbers(name, 'arg:')
    train = case['deterministic']
    exe, grads = bind(graph, args, train)
    outputs = exe.forward(is_train=train)
    expected = numbers(name, 'out')
    assert len(outputs) == len(expected)
    for i, out in enumerate(outputs):
        np.testing.assert_allclose(out.asnumpy(), expected[str(i)], rtol=RTOL, atol=ATOL,
                                   err_msg=f'{name}: output {i}')
    if not train:
        return
    heads = numbers(name, 'head')
    exe.backward([mx.nd.array(heads[str(i)]) for i in range(len(heads))])
    for key, grad in numbers(name, 'grad:').items():
        np.testing.assert_allclose(grads[key].asnumpy(), grad, rtol=RTOL, atol=ATOL,
                                   err_msg=f'{name}: gradient of {key}')


@pytest.mark.parametrize('name', sorted(CASES))
def test_unpack_and_pack_weights(name):
    case = CASES[name]
    cell, _ = build(case['code'])
    params = {k: mx.nd.array(v) for k, v in numbers(name, 'arg:').items()
              if k in cell.params._params}
    if case['unpacked'] is None:
        # MXNet looks the weights up under the cell's prefix, not the shared params' one
        with pytest.raises(KeyError):
            cell.unpack_weights(params)
        return
    unpacked = cell.unpack_weights(params)
    assert {k: list(v.shape) for k, v in unpacked.items()} == case['unpacked']
    for key, value in numbers(name, 'unpacked:').items():
        np.testing.assert_array_equal(unpacked[key].asnumpy(), value, err_msg=key)
    packed = cell.pack_weights(unpacked)
    assert sorted(packed) == sorted(params)
    for key, value in params.items():
        np.testing.assert_array_equal(packed[key].asnumpy(), value.asnumpy(), err_msg=key)


def _run(graph, args, data_grad_head):
    exe, grads = bind(graph, args, True)
    out = exe.forward(is_train=True)[0].asnumpy()
    exe.backward([mx.nd.array(data_grad_head)])
    return out, grads['data'].asnumpy()


@pytest.mark.parametrize('mode, layers, bidirectional', [
    ('lstm', 2, True), ('gru', 2, False), ('rnn_tanh', 1, True), ('rnn_relu', 3, False)])
def test_fused_cell_computes_as_its_unfused_cells(mode, layers, bidirectional):
    shape = (3, 2, 4)
    fused = mx.rnn.FusedRNNCell(3, num_layers=layers, mode=mode, bidirectional=bidirectional)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        out_f, _ = fused.unroll(3, mx.sym.Variable('data'), layout='TNC', merge_outputs=True)
        stack = fused.unfuse()
        out_u, _ = stack.unroll(3, mx.sym.Variable('data'), layout='TNC', merge_outputs=True)
    arg_shapes, out_shapes, _ = out_f.infer_shape(data=shape)
    rng = np.random.RandomState(5)
    args = {n: rng.uniform(-1, 1, s).astype(np.float32)
            for n, s in zip(out_f.list_arguments(), arg_shapes)}
    head = rng.uniform(-1, 1, out_shapes[0]).astype(np.float32)
    # the fused vector, unpacked per gate, packed again per cell of the stack
    unpacked = fused.unpack_weights({k: mx.nd.array(v) for k, v in args.items() if k != 'data'})
    unfused_args = {k: v.asnumpy() for k, v in stack.pack_weights(unpacked).items()}
    unfused_args['data'] = args['data']
    assert sorted(unfused_args) == sorted(out_u.list_arguments())
    fused_out, fused_grad = _run(out_f, args, head)
    unfused_out, unfused_grad = _run(out_u, unfused_args, head)
    np.testing.assert_allclose(fused_out, unfused_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fused_grad, unfused_grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('name', sorted(SENTENCES))
def test_bucket_sentence_iter_matches_mxnet(name, capsys):
    case = SENTENCES[name]
    tokens = [s.split() for s in case['sentences']]
    encoded, vocab = mx.rnn.encode_sentences(tokens, invalid_label=0, start_label=1)
    assert encoded == case['encoded'] and vocab == case['vocab']
    random.seed(7)
    np.random.seed(7)
    it = mx.rnn.BucketSentenceIter(encoded, **case['kwargs'])
    assert 'WARNING: discarded' in capsys.readouterr().out
    assert it.buckets == case['buckets'] and it.default_bucket_key == case['default_bucket_key']
    assert [[d.name, list(d.shape), d.layout] for d in it.provide_data] == case['provide_data']
    assert [[d.name, list(d.shape), d.layout] for d in it.provide_label] == \
        case['provide_label']
    arrays = numbers(name)
    for epoch, batches in enumerate(case['epochs']):
        if epoch:
            it.reset()
        got = list(it)
        assert len(got) == len(batches)
        for i, (batch, want) in enumerate(zip(got, batches)):
            assert batch.bucket_key == want['bucket_key'] and batch.pad == want['pad']
            assert str(batch.data[0].dtype) == want['dtype']
            assert [[d.name, list(d.shape), d.layout] for d in batch.provide_data] == \
                want['provide_data']
            assert [[d.name, list(d.shape), d.layout] for d in batch.provide_label] == \
                want['provide_label']
            np.testing.assert_array_equal(batch.data[0].asnumpy(), arrays[f'e{epoch}b{i}/data'])
            np.testing.assert_array_equal(batch.label[0].asnumpy(),
                                          arrays[f'e{epoch}b{i}/label'])


def test_encode_sentences_with_a_given_vocabulary():
    vocab = {'\n': -1, 'a': 0, 'b': 1}
    coded, same = mx.rnn.encode_sentences([['a', 'x', 'b']], vocab=vocab, unknown_token='<unk>',
                                          start_label=5)
    assert same is vocab and coded == [[0, 5, 1]] and vocab['<unk>'] == 5
    with pytest.raises(AssertionError, match='Unknown token x'):
        mx.rnn.encode_sentences([['x']], vocab={'a': 0})


def test_bucket_sentence_iter_rejects_a_bad_layout():
    with pytest.raises(ValueError, match='Invalid layout TC'):
        mx.rnn.BucketSentenceIter([[1, 2], [3, 4]], 2, layout='TC')


def _ckpt_cell():
    return mx.rnn.FusedRNNCell(2, mode='lstm', prefix='ck_', get_next_state=True)


def test_load_rnn_checkpoint_reads_mxnets_files():
    prefix = os.path.join(DATA, 'legacy_rnn-ckpt')
    graph, args, aux = mx.rnn.load_rnn_checkpoint(_ckpt_cell(), prefix, 3)
    expected = numbers('ckpt', 'arg:')
    assert sorted(args) == sorted(expected) and aux == {}
    for key, value in expected.items():
        np.testing.assert_array_equal(args[key].asnumpy(), value, err_msg=key)
    assert graph.list_arguments() == ['data', 'ck_parameters', 'fc_weight', 'fc_bias']


def test_save_rnn_checkpoint_writes_mxnets_files(tmp_path):
    prefix = os.path.join(DATA, 'legacy_rnn-ckpt')
    graph = mx.sym.load(prefix + '-symbol.json')
    args = {k: mx.nd.array(v) for k, v in numbers('ckpt', 'arg:').items()}
    mx.rnn.save_rnn_checkpoint(_ckpt_cell(), str(tmp_path / 'net'), 3, graph, args, {})
    for suffix in ('-symbol.json', '-0003.params'):
        with open(prefix + suffix, 'rb') as want, open(tmp_path / ('net' + suffix), 'rb') as got:
            assert got.read() == want.read(), suffix


def test_do_rnn_checkpoint_saves_every_period_and_loads_back(tmp_path):
    cell = _ckpt_cell()
    args = {k: mx.nd.array(v) for k, v in numbers('ckpt', 'arg:').items()}
    graph = mx.sym.load(os.path.join(DATA, 'legacy_rnn-ckpt-symbol.json'))
    prefix = str(tmp_path / 'net')
    callback = mx.rnn.do_rnn_checkpoint(cell, prefix, period=2)
    callback(0, graph, args, {})
    assert not os.path.exists(prefix + '-0001.params')
    callback(1, graph, args, {})
    saved = mx.nd.load(prefix + '-0002.params')
    assert 'arg:ck_l0_h2h_f_weight' in saved and 'arg:ck_parameters' not in saved
    loaded_graph, loaded, _ = mx.rnn.load_rnn_checkpoint([cell], prefix, 2)
    assert loaded_graph.tojson() == graph.tojson()
    assert sorted(loaded) == sorted(args)
    for key, value in args.items():
        np.testing.assert_array_equal(loaded[key].asnumpy(), value.asnumpy(), err_msg=key)


def test_rnn_unroll_is_cell_unroll_with_a_warning():
    cell = mx.rnn.GRUCell(2)
    with pytest.warns(UserWarning, match='rnn_unroll is deprecated'):
        outputs, states = mx.rnn.rnn_unroll(cell, 2, mx.sym.Variable('data'), layout='TNC')
    with mx.name.NameManager():
        again, _ = cell.unroll(2, mx.sym.Variable('data'), layout='TNC')
    assert [o.name for o in outputs] == [o.name for o in again] == ['gru_t0_out', 'gru_t1_out']
    assert states[0].name == 'gru_t1_out'


def test_cells_refuse_what_mxnet_refuses():
    with pytest.raises(NotImplementedError, match='FusedRNNCell cannot be stepped'):
        mx.rnn.FusedRNNCell(2)(mx.sym.Variable('x'), [])
    bi = mx.rnn.BidirectionalCell(mx.rnn.RNNCell(2, prefix='a_'), mx.rnn.RNNCell(2, prefix='b_'))
    with pytest.raises(NotImplementedError, match='Bidirectional cannot be stepped'):
        bi(mx.sym.Variable('x'), [])
    base = mx.rnn.LSTMCell(2)
    zoneout = mx.rnn.ZoneoutCell(base, 0.5)
    with pytest.raises(MXNetAssertionError, match='Call the modifier cell instead'):
        base.begin_state()
    assert [s.name for s in zoneout.begin_state()] == ['lstm_begin_state_0',
                                                       'lstm_begin_state_1']
    with pytest.raises(AssertionError, match="doesn't support zoneout"):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(2))
    with pytest.raises(AssertionError, match='dropout probability must be a number'):
        mx.rnn.DropoutCell('0.5')
    with pytest.raises(AssertionError, match='Only support odd number'):
        mx.rnn.ConvRNNCell((1, 2, 4, 4), 2, h2h_kernel=(2, 3))
    stack = mx.rnn.SequentialRNNCell(params=mx.rnn.RNNParams('s_'))
    with pytest.raises(AssertionError, match='Either specify params'):
        stack.add(mx.rnn.RNNCell(2))
    with pytest.raises(AssertionError, match='unroll.inputs=None. has been deprecated'):
        mx.rnn.RNNCell(2).unroll(2, None)


def test_weight_conversions_name_what_is_missing_or_wrong():
    with pytest.raises(KeyError, match="needs the weight 'lstm_i2h_i_bias'"):
        mx.rnn.LSTMCell(2).pack_weights({'lstm_i2h_i_weight': mx.nd.zeros((2, 3))})
    fused = mx.rnn.FusedRNNCell(2, mode='gru')
    with pytest.raises(AssertionError, match='has 7 values, which fit no gru RNN'):
        fused.unpack_weights({'gru_parameters': mx.nd.zeros((7,))})
    unpacked = fused.unpack_weights({'gru_parameters': mx.nd.zeros((3 * 2 * (3 + 2 + 2),))})
    unpacked['gru_l0_h2h_z_weight'] = mx.nd.zeros((2, 3))
    with pytest.raises(AssertionError, match=r'gru_l0_h2h_z_weight has shape \(2, 3\), but the '
                                             r'cell needs \(2, 2\)'):
        fused.pack_weights(unpacked)


def test_simple_bind_infers_the_batch_size_of_zero_states():
    # begin states are sym.zeros((0, H)): their batch size comes from the data, through the
    # FullyConnected (or Convolution) that reads them, as in MXNet's executor
    for cell, shape in ((mx.rnn.LSTMCell(3), (4, 2, 5)),
                        (mx.rnn.ConvGRUCell((1, 2, 3, 3), 2), (4, 2, 2, 3, 3))):
        out, _ = cell.unroll(2, mx.sym.Variable('data'), merge_outputs=True)
        exe = out.simple_bind(mx.cpu(), data=shape)
        exe.arg_dict['data'][:] = 1
        result = exe.forward()[0]
        assert result.shape[:2] == (4, 2) and np.isfinite(result.asnumpy()).all()


def test_shared_params_share_variables():
    params = mx.rnn.RNNParams('shared_')
    a = mx.rnn.LSTMCell(3, prefix='a_', params=params)
    b = mx.rnn.LSTMCell(3, prefix='b_', params=params)
    assert a._iW is b._iW and a._iW.name == 'shared_i2h_weight'
    assert not a._own_params and not b._own_params
