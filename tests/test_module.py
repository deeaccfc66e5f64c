"""``mx.mod`` (``mxnet.module``): Module, BucketingModule, SequentialModule, PythonModule and
the executor groups, against MXNet 1.9.1.

tests/data/make_module_files.py holds the scenarios (MNIST MLP through ``fit``, two contexts,
a BatchNorm conv net from an MXNet checkpoint, a BucketingModule); run with MXNet it wrote
tests/data/module-*. Here the same functions run on hybridlib and their numbers are compared.
Training runs sum float32 products in another order than MXNet's kernels for up to 48 steps,
so parameters are compared with rtol 1e-4 (atol 1e-6); single forward passes with rtol 1e-5.

The second part ports MXNet 1.9.1's tests/python/unittest/test_module.py (those without sparse
arrays or GPUs), named ``test_mxnet_*``; the rest are hybridlib's own.
"""
import importlib.util
import json
import logging
import os
from collections import namedtuple

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import callback, nd
from hybridlib.base import MXNetAssertionError, MXNetError, NotSupportedError
from hybridlib.executor_manager import (DataParallelExecutorManager, _split_input_slice,
                                        bind_shared, reshape_executor)
from hybridlib.module.executor_group import DataParallelExecutorGroup
from hybridlib.test_utils import same_array

DATA = os.path.join(os.path.dirname(__file__), 'data')
_spec = importlib.util.spec_from_file_location(
    'make_module_files', os.path.join(DATA, 'make_module_files.py'))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)

REF = np.load(GEN.NUMBERS)
with open(GEN.FACTS) as _f:
    FACTS = json.load(_f)

TRAINED = {'rtol': 1e-4, 'atol': 1e-6}     # after many float32 training steps
FORWARD = {'rtol': 1e-5, 'atol': 1e-7}     # one pass


def _compare(scenario, arrays, tolerance):
    recorded = sorted(k.split('/', 1)[1] for k in REF.files if k.startswith(scenario + '/'))
    assert sorted(arrays) == recorded
    for name in recorded:
        np.testing.assert_allclose(arrays[name], REF[scenario + '/' + name], **tolerance,
                                   err_msg=f'{scenario}: {name}')


# -------------------------------------------------------------------------------------------------
# The scenarios, against MXNet's numbers
# -------------------------------------------------------------------------------------------------

def test_mlp_fit_matches_mxnet():
    arrays, facts = GEN.run_mlp_fit(mx)
    _compare('mlp_fit', arrays, TRAINED)
    expected = FACTS['mlp_fit']
    assert facts['log'] == expected['log']
    assert [n for n, _ in facts['score']] == [n for n, _ in expected['score']]
    np.testing.assert_allclose([v for _, v in facts['score']],
                               [v for _, v in expected['score']], rtol=1e-5)
    assert facts['output_shapes'] == expected['output_shapes']
    assert facts['data_shapes'] == expected['data_shapes']


def test_multi_context_fit_matches_mxnet():
    arrays, facts = GEN.run_multi_context_fit(mx)
    _compare('multi_context_fit', arrays, TRAINED)
    assert facts == FACTS['multi_context_fit']


def test_multi_context_fit_updating_on_each_device(monkeypatch):
    # MXNET_UPDATE_ON_KVSTORE=0: the store only sums the gradients, and an updater per
    # device applies them (indices parameter * 2 + device): the same training
    monkeypatch.setenv('MXNET_UPDATE_ON_KVSTORE', '0')
    arrays, facts = GEN.run_multi_context_fit(mx)
    _compare('multi_context_fit', arrays, TRAINED)
    assert facts['update_on_kvstore'] is False
    assert facts['log'] == FACTS['multi_context_fit']['log']


def test_predict_of_an_mxnet_checkpoint_with_batchnorm():
    arrays, facts = GEN.run_convbn_predict(mx, GEN.CONVBN_PREFIX)
    _compare('convbn_predict', arrays, FORWARD)
    assert facts == FACTS['convbn_predict']


def test_finetune_of_an_mxnet_checkpoint_updates_batchnorm_statistics():
    arrays, _ = GEN.run_convbn_finetune(mx, GEN.CONVBN_PREFIX)
    _compare('convbn_finetune', arrays, TRAINED)


def test_bucketing_module_matches_mxnet():
    arrays, facts = GEN.run_bucketing(mx)
    _compare('bucketing', arrays, TRAINED)
    assert facts == FACTS['bucketing']


def test_bucketing_module_fit_matches_mxnet():
    arrays, facts = GEN.run_bucketing_fit(mx)
    _compare('bucketing_fit', arrays, TRAINED)
    assert facts == FACTS['bucketing_fit']


def test_fit_logs_time_and_calls_callbacks():
    x, y = GEN.classification_data(2, 48, 20, 4)
    logger = GEN.capture_logger('module-callbacks')
    mod = mx.mod.Module(GEN.mlp_symbol(mx, hidden=(8,), classes=4), logger=logger)
    batches, epochs = [], []
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=16), num_epoch=2,
            batch_end_callback=lambda p: batches.append((p.epoch, p.nbatch)),
            epoch_end_callback=[lambda e, s, a, b: epochs.append((e, s is mod.symbol,
                                                                  sorted(a), b))])
    assert batches == [(e, n) for e in range(2) for n in range(3)]
    assert epochs == [(e, True, ['fc1_bias', 'fc1_weight', 'fc2_bias', 'fc2_weight'], {})
                      for e in range(2)]
    times = [line for line in logger.handlers[0].lines if 'Time cost' in line]
    assert [t.split('=')[0] for t in times] == ['Epoch[0] Time cost', 'Epoch[1] Time cost']


def test_fit_with_checkpoint_callbacks_and_load(tmp_path):
    x, y = GEN.classification_data(2, 48, 20, 4)
    mod = mx.mod.Module(GEN.mlp_symbol(mx, hidden=(8,), classes=4))
    prefix, module_prefix = str(tmp_path / 'net'), str(tmp_path / 'mod')
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=16), num_epoch=2,
            optimizer_params={'learning_rate': 0.1, 'momentum': 0.9},
            epoch_end_callback=[callback.do_checkpoint(prefix),
                                callback.module_checkpoint(mod, module_prefix,
                                                           save_optimizer_states=True)])
    assert sorted(os.listdir(tmp_path)) == [
        'mod-0001.params', 'mod-0001.states', 'mod-0002.params', 'mod-0002.states',
        'mod-symbol.json', 'net-0001.params', 'net-0002.params', 'net-symbol.json']
    loaded = mx.mod.Module.load(prefix, 2)
    loaded.bind(data_shapes=[('data', (16, 20))], for_training=False)
    it = mx.io.NDArrayIter(x, y, batch_size=16)
    assert np.array_equal(loaded.predict(it).asnumpy(), mod.predict(it).asnumpy())
    resumed = mx.mod.Module.load(module_prefix, 2, load_optimizer_states=True)
    resumed.bind(data_shapes=[('data', (16, 20))], label_shapes=[('softmax_label', (16,))])
    resumed.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    for index, state in mod._updater.states.items():
        assert np.array_equal(resumed._updater.states[index].asnumpy(), state.asnumpy())


# -------------------------------------------------------------------------------------------------
# MXNet 1.9.1's tests/python/unittest/test_module.py
# -------------------------------------------------------------------------------------------------

def test_mxnet_module_dtype():
    dtype = np.float16
    dshape = (3, 8, 7)
    sym = mx.sym.Variable('data')
    sym = mx.sym.Activation(data=sym, act_type='relu', __layout__='TNC')
    mod = mx.mod.Module(sym, ('data',), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc('data', dshape, dtype, layout='TNC')])
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones(dshape, dtype=dtype)], label=None))
    mod.backward([mx.nd.ones(dshape, dtype=dtype)])
    for x in mod.get_outputs():
        assert x.dtype == dtype


def test_mxnet_module_bind():
    sym = mx.sym.Variable('data')
    sym = mx.sym.Activation(data=sym, act_type='relu', __layout__='TNC')
    mod = mx.mod.Module(sym, ('data',), None, context=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(TypeError):
        mod.bind(data_shapes=[('data', mx.nd.array([10, 10]))])
    assert mod.binded is False
    mod.bind(data_shapes=[('data', (10, 10))])
    assert mod.binded is True


def test_mxnet_module_input_grads():
    a = mx.sym.Variable('a', __layout__='NC')
    b = mx.sym.Variable('b', __layout__='NC')
    c = mx.sym.Variable('c', __layout__='NC')
    c = a + 2 * b + 3 * c
    net = mx.mod.Module(c, data_names=['b', 'c', 'a'], label_names=None,
                        context=[mx.cpu(0), mx.cpu(1)])
    net.bind(data_shapes=[['b', (5, 5)], ['c', (5, 5)], ['a', (5, 5)]],
             label_shapes=None, inputs_need_grad=True)
    net.init_params()
    net.forward(data_batch=mx.io.DataBatch(data=[nd.ones((5, 5)), nd.ones((5, 5)),
                                                 nd.ones((5, 5))]))
    net.backward(out_grads=[nd.ones((5, 5))])
    b_grad, c_grad, a_grad = [g.asnumpy() for g in net.get_input_grads()]
    assert np.all(a_grad == 1), a_grad
    assert np.all(b_grad == 2), b_grad
    assert np.all(c_grad == 3), c_grad


def _ctx_group_symbol():
    with mx.AttrScope(ctx_group='dev1'):
        a = mx.symbol.Variable('a')
        a = a * 2
    with mx.AttrScope(ctx_group='dev2'):
        b = mx.symbol.Variable('b')
        c = a + b
    return c


def test_mxnet_module_ctx_group_on_the_module_context():
    # MXNet places ctx groups on other devices; hybridlib runs a graph on one context, so
    # groups that name it work and give the same gradients as without groups
    shape = (2, 5)
    grads = []
    for group2ctxs in ({'dev1': mx.cpu(0), 'dev2': [mx.cpu(0)]}, None):
        mod = mx.mod.Module(_ctx_group_symbol(), context=[mx.cpu(0)], data_names=['a', 'b'],
                            label_names=None, group2ctxs=group2ctxs)
        mod.bind(data_shapes=[['a', shape], ['b', shape]], inputs_need_grad=True)
        mod.init_params()
        mod.forward(mx.io.DataBatch(data=[mx.nd.ones(shape), mx.nd.ones(shape)]),
                    is_train=True)
        mod.backward([mx.nd.ones(shape)])
        grads.append([g.asnumpy() for g in mod.get_input_grads()])
    assert np.all(grads[0][0] == 2) and np.all(grads[0][1] == 1)
    for first, second in zip(*grads):
        assert np.array_equal(first, second)


def test_mxnet_module_ctx_group_on_other_contexts_is_not_supported():
    mod = mx.mod.Module(_ctx_group_symbol(), context=[mx.cpu(0)], data_names=['a', 'b'],
                        label_names=None, group2ctxs={'dev1': mx.cpu(1), 'dev2': mx.cpu(2)})
    with pytest.raises(NotSupportedError, match='group2ctx'):
        mod.bind(data_shapes=[['a', (2, 5)], ['b', (2, 5)]], inputs_need_grad=True)
    with pytest.raises(MXNetAssertionError, match='length of group2ctxs'):
        DataParallelExecutorGroup(_ctx_group_symbol(), [mx.cpu(0), mx.cpu(1)], [1, 1],
                                  [('a', (2, 5)), ('b', (2, 5))], None, [], False, False,
                                  group2ctxs=[{'dev1': mx.cpu(0)}])


def test_mxnet_bucket_module_ctx_group():
    num_hidden = 10
    batch_size = 5

    def sym_gen(seq_len):
        with mx.AttrScope(ctx_group='dev1'):
            data = mx.symbol.Variable('data')
            weight = mx.symbol.Variable('dev1_weight')
            bias = mx.symbol.Variable('dev1_bias')
            fc = data
            for i in range(seq_len):
                fc = mx.symbol.FullyConnected(data=fc, weight=weight, bias=bias,
                                              name='dev1_fc_%d' % i, num_hidden=num_hidden)
        with mx.AttrScope(ctx_group='dev2'):
            label = mx.symbol.Variable('label')
            weight = mx.symbol.Variable('dev2_weight')
            bias = mx.symbol.Variable('dev2_bias')
            for i in range(seq_len):
                fc = mx.symbol.FullyConnected(data=fc, weight=weight, bias=bias,
                                              name='dev2_fc_%d' % i, num_hidden=num_hidden)
            sym = mx.symbol.SoftmaxOutput(fc, label, name='softmax')
        return sym, ('data',), ('label',)

    mod = mx.mod.BucketingModule(sym_gen=sym_gen, default_bucket_key=10, context=[mx.cpu(0)],
                                 group2ctxs=[{'dev1': mx.cpu(0), 'dev2': mx.cpu(0)}])
    mod.bind(data_shapes=[['data', (batch_size, num_hidden)]],
             label_shapes=[['label', (batch_size,)]], for_training=True,
             inputs_need_grad=True)
    assert mod.binded


def test_mxnet_module_layout():
    sym = mx.sym.Variable('data')
    sym = mx.sym.Activation(data=sym, act_type='relu', __layout__='TNC')
    dshape = (3, 8, 7)
    mod = mx.mod.Module(sym, ('data',), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc('data', dshape, layout='TNC')])
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones(dshape)], label=None))
    mod.backward([mx.nd.ones(dshape)])
    assert mod.get_outputs()[0].shape == dshape
    hdshape = (3, 4, 7)
    for x in mod.get_outputs(merge_multi_context=False)[0]:
        assert x.shape == hdshape


@pytest.mark.parametrize('ctx,get_updater', [
    (mx.cpu(), lambda m: m._updater),
    ([mx.cpu(0), mx.cpu(1)], lambda m: m._kvstore._updater)])
def test_mxnet_save_load(ctx, get_updater, tmp_path, monkeypatch):
    monkeypatch.setenv('MXNET_UPDATE_ON_KVSTORE', '1')

    def dict_equ(a, b):
        assert set(a) == set(b)
        for k in a:
            assert (a[k].asnumpy() == b[k].asnumpy()).all()

    sym = mx.sym.Variable('data')
    sym = mx.sym.FullyConnected(sym, num_hidden=100)
    path = str(tmp_path / 'test')
    mod = mx.mod.Module(sym, ('data',), context=ctx)
    mod.bind(data_shapes=[('data', (10, 10))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    mod.update()
    mod.save_checkpoint(path, 0, save_optimizer_states=True)

    mod2 = mx.mod.Module.load(path, 0, load_optimizer_states=True, data_names=('data',))
    mod2.bind(data_shapes=[('data', (10, 10))])
    mod2.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    assert mod._symbol.tojson() == mod2._symbol.tojson()
    dict_equ(mod.get_params()[0], mod2.get_params()[0])
    dict_equ(get_updater(mod).states, mod2._updater.states)


def test_mxnet_bucketing_save_load(tmp_path):
    def dict_equ(a, b):
        assert set(a) == set(b)
        for k in a:
            assert (a[k].asnumpy() == b[k].asnumpy()).all()

    sym_gen = GEN.make_sym_gen(mx)
    prefix = str(tmp_path / 'bucket')
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=6)
    mod.bind(data_shapes=[('data', (GEN.BATCH, 6))],
             label_shapes=[('softmax_label', (GEN.BATCH,))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={'learning_rate': 0.1})
    for key in (6, 3):
        mod.forward_backward(GEN.bucket_batch(mx, key, key))
        mod.update()
    mod.save_checkpoint(prefix, 1)
    assert sorted(os.listdir(tmp_path)) == ['bucket-0001.params', 'bucket-3-symbol.json',
                                             'bucket-6-symbol.json', 'bucket.buckets']

    mod2 = mx.mod.BucketingModule.load(prefix, 1, sym_gen=sym_gen, default_bucket_key=6)
    mod2.bind(data_shapes=[('data', (GEN.BATCH, 6))],
              label_shapes=[('softmax_label', (GEN.BATCH,))])
    assert sorted(mod2._buckets) == [3, 6]
    dict_equ(mod.get_params()[0], mod2.get_params()[0])
    batch = GEN.bucket_batch(mx, 7, 3)
    mod.forward(batch, is_train=False)
    mod2.forward(batch, is_train=False)
    assert np.array_equal(mod.get_outputs()[0].asnumpy(), mod2.get_outputs()[0].asnumpy())


def test_mxnet_module_reshape():
    data = mx.sym.Variable('data')
    sym = mx.sym.FullyConnected(data, num_hidden=20, name='fc')
    dshape = (7, 20)
    mod = mx.mod.Module(sym, ('data',), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[('data', dshape)])
    mod.init_params()
    mod.init_optimizer(optimizer_params={'learning_rate': 1})
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones(dshape)], label=None))
    mod.backward([mx.nd.ones(dshape)])
    mod.update()
    assert mod.get_outputs()[0].shape == dshape
    assert (mod.get_params()[0]['fc_bias'].asnumpy() == -1).all()

    dshape = (14, 20)
    mod.reshape(data_shapes=[('data', dshape)])
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones(dshape)], label=None))
    mod.backward([mx.nd.ones(dshape)])
    mod.update()
    assert mod.get_outputs()[0].shape == dshape
    assert (mod.get_params()[0]['fc_bias'].asnumpy() == -3).all()


def _lstm_stack(num_layers, num_hidden):
    stack = mx.rnn.SequentialRNNCell()
    for i in range(num_layers):
        stack.add(mx.rnn.LSTMCell(num_hidden=num_hidden, prefix='lstm_l%d_' % i))
    return stack


def test_mxnet_module_states():
    stack = _lstm_stack(2, 20)
    begin_state = stack.begin_state(func=mx.sym.Variable)
    _, states = stack.unroll(10, begin_state=begin_state, inputs=mx.sym.Variable('data'))
    state_names = [i.name for i in begin_state]
    mod = mx.mod.Module(mx.sym.Group(states), context=[mx.cpu(0), mx.cpu(1)],
                        label_names=None, state_names=state_names)
    mod.bind(data_shapes=[('data', (5, 10))], label_shapes=None, for_training=False)
    mod.init_params()
    batch = mx.io.DataBatch(data=[mx.nd.zeros((5, 10))], label=[])

    mod.set_states(value=1)
    mod.forward(batch)
    out = mod.get_outputs(merge_multi_context=False)
    out1 = mod.get_outputs(merge_multi_context=True)

    mod.set_states(states=out)
    mod.forward(batch)
    out2 = mod.get_outputs(merge_multi_context=True)
    for x1, x2 in zip(out1, out2):
        assert not mx.test_utils.almost_equal(x1.asnumpy(), x2.asnumpy(), rtol=1e-3)


def _lstm_lm_symbol(seq_len, num_layers, num_words, num_hidden, num_embed):
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('softmax_label')
    embed = mx.sym.Embedding(data=data, input_dim=num_words, output_dim=num_embed,
                             name='embed')
    stack = _lstm_stack(num_layers, num_hidden)
    outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
    pred = mx.sym.Reshape(outputs, shape=(-1, num_hidden))
    pred = mx.sym.FullyConnected(data=pred, num_hidden=num_words, name='pred')
    label = mx.sym.Reshape(label, shape=(-1,))
    return mx.sym.SoftmaxOutput(data=pred, label=label, name='softmax')


def test_mxnet_module_switch_bucket():
    # MXNet's sizes (vocabulary 5000, 100 units, batch 32) made smaller: the test is about
    # the memory the default bucket keeps
    vocab_dim, num_hidden, num_embedding, num_layer = 50, 10, 10, 2
    default_key, test_key, batch_size = 10, 5, 8

    def sym_gen(seq_len):
        return (_lstm_lm_symbol(seq_len, num_layer, vocab_dim, num_hidden, num_embedding),
                ('data',), ('softmax_label',))

    model = mx.mod.BucketingModule(sym_gen=sym_gen, default_bucket_key=default_key,
                                   context=[mx.cpu(0)])
    model.bind([('data', (batch_size, default_key))],
               [('softmax_label', (batch_size, default_key))], True, False)
    model.init_params(initializer=mx.init.Xavier(factor_type='in', magnitude=2.34))
    model.switch_bucket(test_key, [('data', (batch_size, test_key))],
                        [('softmax_label', (batch_size, test_key))])
    total_bytes_before = model._buckets[default_key]._total_exec_bytes
    del model._buckets[test_key]
    model.switch_bucket(test_key, [('data', (batch_size, test_key))],
                        [('softmax_label', (batch_size, test_key))])
    total_bytes_after = model._buckets[default_key]._total_exec_bytes
    assert total_bytes_after == total_bytes_before
    # the new bucket's input is a view of the default bucket's buffer
    default_exec = model._buckets[default_key]._exec_group.execs[0]
    test_exec = model._buckets[test_key]._exec_group.execs[0]
    test_exec.arg_dict['data'][:] = 3
    assert default_exec.arg_dict['data'].asnumpy().ravel()[:batch_size * test_key].tolist() == \
        [3] * (batch_size * test_key)
    assert same_array(default_exec.arg_dict['pred_weight'], test_exec.arg_dict['pred_weight'])


def _set_params_module():
    data = mx.nd.array([[0.05, .10]])
    label = mx.nd.array([[.01, 0.99]])
    train_data = mx.io.NDArrayIter(data, label, batch_size=1)
    x = mx.symbol.Variable('data')
    x = mx.symbol.FullyConnected(name='fc_0', data=x, num_hidden=2)
    x = mx.symbol.Activation(name='act_0', data=x, act_type='sigmoid')
    x = mx.symbol.FullyConnected(name='fc_1', data=x, num_hidden=2)
    x = mx.symbol.Activation(name='act_1', data=x, act_type='sigmoid')
    x = mx.symbol.LinearRegressionOutput(data=x, name='softmax', grad_scale=2)
    mod = mx.mod.Module(x, context=[mx.cpu()])
    mod.bind(train_data.provide_data, label_shapes=train_data.provide_label,
             for_training=True)
    return mod, train_data


def test_mxnet_module_set_params():
    mod, _ = _set_params_module()
    arg_params_correct = {'fc_0_weight': mx.nd.array([[.15, .20], [.25, .30]]),
                          'fc_0_bias': mx.nd.array([.35, .35]),
                          'fc_1_weight': mx.nd.array([[.40, .45], [.50, .55]]),
                          'fc_1_bias': mx.nd.array([.60, .60])}
    arg_params_missing = {'fc_0_weight': mx.nd.array([[.15, .20], [.25, .30]]),
                          'fc_0_bias': mx.nd.array([.35, .35]),
                          'fc_1_weight': mx.nd.array([[.40, .45], [.50, .55]])}
    arg_params_extra = dict(arg_params_correct, fc_2_weight=mx.nd.array([.60, .60]))
    arg_params_missing_extra = {'fc_2_weight': mx.nd.array([.60, .60])}

    mod.set_params(force_init=True, arg_params=arg_params_correct, aux_params={})
    mod.set_params(force_init=True, arg_params=arg_params_missing, aux_params={},
                   allow_missing=True)
    with pytest.raises(RuntimeError):
        mod.set_params(force_init=True, arg_params=arg_params_missing, aux_params={},
                       allow_missing=False)
    mod.set_params(force_init=True, arg_params=arg_params_extra, aux_params={},
                   allow_missing=True, allow_extra=True)
    with pytest.raises(ValueError):
        mod.set_params(force_init=True, arg_params=arg_params_extra, aux_params={},
                       allow_missing=True, allow_extra=False)
    with pytest.raises(RuntimeError):
        mod.set_params(force_init=True, arg_params=arg_params_missing_extra, aux_params={},
                       allow_missing=False, allow_extra=False)
    with pytest.raises(ValueError):
        mod.set_params(force_init=True, arg_params=arg_params_missing_extra, aux_params={},
                       allow_missing=True, allow_extra=False)
    arg, _ = mod.get_params()
    for name, value in arg_params_correct.items():
        assert np.array_equal(arg[name].asnumpy(), value.asnumpy())


def test_mxnet_monitor():
    _, facts = GEN.run_monitor(mx)
    res = facts['stats']
    keys = ['act_0', 'act_1', 'data', 'fc_0', 'fc_1', 'softmax']
    mon_result_counts = [0, 0, 0, 0, 0, 0]
    assert len(res) == 21
    for k, _ in res:
        for idx, key in enumerate(keys):
            if k.startswith(key):
                mon_result_counts[idx] += 1
                break
    assert mon_result_counts == [2, 2, 1, 6, 6, 4]


def test_monitor_on_a_module_collects_mxnet_statistics():
    _, facts = GEN.run_monitor(mx)
    expected = FACTS['monitor']['stats']        # forward and backward, in MXNet's order
    assert [name for name, _ in facts['stats']] == [name for name, _ in expected]
    # (the recording keeps no value for the backward entries: None on both sides)
    assert [v is None for _, v in facts['stats']] == [v is None for _, v in expected]
    np.testing.assert_allclose([float(v) for _, v in facts['stats'] if v is not None],
                               [float(v) for _, v in expected if v is not None], rtol=1e-6)


def test_mxnet_executor_group():
    def test_shared_exec_group(exec_grp_shared, exec_grp_created, shared_arg_names=None,
                               extra_args=None):
        for i in range(len(exec_grp_shared.execs)):
            shared_data_array1 = exec_grp_shared.shared_data_arrays[i]
            shared_data_array2 = exec_grp_created.shared_data_arrays[i]
            if extra_args is not None:
                assert len(shared_data_array1) == len(extra_args)
            assert len(shared_data_array1) == len(shared_data_array2)
            for k, v in shared_data_array1.items():
                if extra_args is not None:
                    assert k in extra_args
                assert k in shared_data_array2
                assert same_array(v, shared_data_array2[k])
            exec_shared = exec_grp_shared.execs[i]
            exec_created = exec_grp_created.execs[i]
            if shared_arg_names is not None:
                for arg_name in shared_arg_names:
                    assert arg_name in exec_created.arg_dict
                    assert same_array(exec_shared.arg_dict[arg_name],
                                      exec_created.arg_dict[arg_name])
                for arg_name in shared_arg_names:
                    assert arg_name in exec_created.grad_dict
                    assert same_array(exec_shared.grad_dict[arg_name],
                                      exec_created.grad_dict[arg_name])
            for arg_name, grad in exec_grp_shared.grad_req.items():
                assert grad == exec_grp_created.grad_req[arg_name]

    contexts = [mx.cpu(0), mx.cpu(1)]
    workload = [1] * len(contexts)
    # MXNet's sizes (batch 32, length 80, 1000 words, 100 units) made smaller
    batch_size, max_bucket_size, num_words, num_hidden, num_embed = 8, 12, 50, 10, 12
    data_shapes = [('data', (batch_size, max_bucket_size))]
    label_shapes = [('softmax_label', (batch_size, max_bucket_size))]

    sym = _lstm_lm_symbol(max_bucket_size, 3, num_words, num_hidden, num_embed)
    arg_names1 = sym.list_arguments()
    input_names = [name[0] for name in data_shapes] + [name[0] for name in label_shapes]
    shared_arg_names = [name for name in arg_names1 if name not in input_names]
    exec_group1 = DataParallelExecutorGroup(
        symbol=sym, contexts=contexts, workload=workload, data_shapes=data_shapes,
        label_shapes=label_shapes, param_names=shared_arg_names, for_training=True,
        inputs_need_grad=False)
    for i in range(len(contexts)):
        assert len(exec_group1.shared_data_arrays[i]) == len(input_names)
        for name in input_names:
            assert name in exec_group1.shared_data_arrays[i]

    sym = _lstm_lm_symbol(max_bucket_size, 5, num_words, num_hidden, num_embed)
    arg_names2 = sym.list_arguments()
    exec_group2 = DataParallelExecutorGroup(
        symbol=sym, contexts=contexts, workload=workload, data_shapes=data_shapes,
        label_shapes=label_shapes, param_names=shared_arg_names, for_training=True,
        inputs_need_grad=False, shared_group=exec_group1)
    extra_args = [name for name in arg_names2 if name not in shared_arg_names]
    test_shared_exec_group(exec_grp_shared=exec_group1, exec_grp_created=exec_group2,
                           shared_arg_names=shared_arg_names, extra_args=extra_args)


def test_mxnet_forward_reshape():
    num_class = 10
    data1 = mx.sym.Variable('data1')
    data2 = mx.sym.Variable('data2')
    conv1 = mx.sym.Convolution(data=data1, kernel=(2, 2), num_filter=2, stride=(2, 2))
    conv2 = mx.sym.Convolution(data=data2, kernel=(3, 3), num_filter=3, stride=(1, 1))
    pooling1 = mx.sym.Pooling(data=conv1, kernel=(2, 2), stride=(1, 1), pool_type='avg')
    pooling2 = mx.sym.Pooling(data=conv2, kernel=(2, 2), stride=(1, 1), pool_type='max')
    flatten1 = mx.sym.flatten(data=pooling1)
    flatten2 = mx.sym.flatten(data=pooling2)
    total = mx.sym.sum(data=flatten1, axis=1) + mx.sym.sum(data=flatten2, axis=1)
    fc = mx.sym.FullyConnected(data=total, num_hidden=num_class)
    sym = mx.sym.SoftmaxOutput(data=fc, name='softmax')

    dshape1, dshape2, lshape = (10, 3, 64, 64), (10, 3, 32, 32), (10,)
    mod = mx.mod.Module(symbol=sym, data_names=['data1', 'data2'],
                        label_names=['softmax_label'])
    mod.bind(data_shapes=[('data1', dshape1), ('data2', dshape2)],
             label_shapes=[('softmax_label', lshape)])
    mod.init_params()
    mod.init_optimizer(optimizer_params={'learning_rate': 0.01})

    # the original shapes, other batch sizes, other batch sizes and image sizes
    for dshape1, dshape2, lshape, low in [((10, 3, 64, 64), (10, 3, 32, 32), (10,), 0),
                                          ((3, 3, 64, 64), (3, 3, 32, 32), (3,), 0),
                                          ((20, 3, 64, 64), (20, 3, 32, 32), (20,), 3),
                                          ((20, 3, 120, 120), (20, 3, 32, 64), (20,), 0),
                                          ((5, 3, 28, 40), (5, 3, 24, 16), (5,), 0)]:
        data_batch = mx.io.DataBatch(data=[mx.nd.random.uniform(low, 9, dshape1),
                                           mx.nd.random.uniform(5, 15, dshape2)],
                                     label=[mx.nd.ones(lshape)])
        mod.forward(data_batch)
        assert mod.get_outputs()[0].shape == tuple([lshape[0], num_class])
        mod.backward()
        mod.update()

    eval_dataiter = mx.io.NDArrayIter(data=[mx.nd.random.uniform(0, 9, (30, 3, 30, 30)),
                                            mx.nd.random.uniform(15, 25, (30, 3, 20, 40))],
                                      label=[mx.nd.ones((30,))], batch_size=5)
    assert len(mod.score(eval_data=eval_dataiter, eval_metric='acc')) == 1

    pred_dataiter = mx.io.NDArrayIter(data=[mx.nd.random.uniform(0, 9, (10, 3, 30, 30)),
                                            mx.nd.random.uniform(15, 25, (10, 3, 20, 40))])
    mod.bind(data_shapes=[('data1', (1, 3, 30, 30)), ('data2', (1, 3, 20, 40))],
             for_training=False, force_rebind=True)
    assert mod.predict(pred_dataiter).shape == tuple([10, num_class])


def test_mxnet_forward_types():
    Batch = namedtuple('Batch', ['data'])
    data = mx.sym.Variable('data')
    out = data * 2
    mod = mx.mod.Module(symbol=out, label_names=None)
    mod.bind(data_shapes=[('data', (1, 10))])
    mod.init_params()
    mod.forward(Batch([mx.nd.ones((1, 10))]))
    assert mod.get_outputs()[0].shape == (1, 10)
    mod.forward(Batch([mx.nd.ones((3, 5))]))
    assert mod.get_outputs()[0].shape == (3, 5)

    mod = mx.mod.Module(symbol=out, label_names=None)
    mod.bind(data_shapes=[('data', (1, 10))])
    mod.init_params()
    assert mod.predict(mx.nd.ones((1, 10))).shape == (1, 10)
    assert mod.predict(np.ones((1, 10))).shape == (1, 10)


def test_mxnet_reference_single_batch_during_fit():
    # fit must hold one batch of the iterator at a time (C++ iterators free the previous one)
    current = {'i': None}

    class MockBatch:
        def __init__(self, i):
            self.i = i

        @property
        def label(self):
            assert self.i == current['i']

    class MockTrainData:
        def __init__(self, batches):
            self._i = 0
            self._batches = batches
            self.provide_data = None
            self.provide_label = None
            self.reset = lambda: None

        def __iter__(self):
            self._i = 0
            return self

        def __next__(self):
            if self._i < self._batches:
                current['i'] = self._i
                self._i += 1
                return MockBatch(current['i'])
            raise StopIteration

    mod = mx.mod.BaseModule()

    def empty_fn(*args, **kwargs):
        pass
    mod.bind = empty_fn
    mod.init_params = empty_fn
    mod.init_optimizer = empty_fn
    mod.forward = empty_fn
    mod.backward = empty_fn
    mod.update = empty_fn
    mod.update_metric = empty_fn
    mod.get_params = lambda: (None, None)
    mod.fit(MockTrainData(batches=2), num_epoch=1)


def test_mxnet_bucket_module_grad_req():
    batch_size = 2

    def sym_gen(_):
        data = mx.symbol.Variable('data')
        weight = mx.symbol.Variable('a', shape=(1,), init=mx.init.One())
        sym = mx.sym.make_loss(mx.sym.broadcast_mul(data, weight))
        return sym, ('data',), None

    def batch(key):
        return mx.io.DataBatch(data=[mx.nd.ones((batch_size,))], label=None,
                               provide_data=[mx.io.DataDesc(name='data', shape=(batch_size,),
                                                            layout='N')],
                               bucket_key=key)

    mod = mx.mod.BucketingModule(sym_gen=sym_gen, default_bucket_key=10)
    mod.bind(data_shapes=[['data', (batch_size,)]], for_training=True, grad_req='write')
    mod.init_params()
    mod.forward_backward(batch(10))
    assert mod._curr_module._exec_group.execs[0].grad_dict['a'].asscalar() == batch_size
    mod.forward_backward(batch(5))
    assert mod._curr_module._exec_group.execs[0].grad_dict['a'].asscalar() == batch_size

    mod = mx.mod.BucketingModule(sym_gen=sym_gen, default_bucket_key=10)
    mod.bind(data_shapes=[['data', (batch_size,)]], for_training=True, grad_req='add')
    mod.init_params()
    mod.forward_backward(batch(10))
    assert mod._curr_module._exec_group.execs[0].grad_dict['a'].asscalar() == batch_size
    mod.forward_backward(batch(5))
    assert mod._curr_module._grad_req == 'add'
    assert mod._curr_module._exec_group.execs[0].grad_dict['a'].asscalar() == 2 * batch_size


def test_mxnet_module_update_no_pragram():
    data_shape = (10, 10)
    data = mx.sym.Variable('data')
    out = mx.sym.Dropout(data, 0.5)
    mod = mx.mod.Module(out)
    mod.bind(data_shapes=[('data', data_shape)])
    mod.init_params()
    mod.init_optimizer()
    mod.forward_backward(mx.io.DataBatch([nd.ones(data_shape)]))
    mod.update()
    assert mod.get_outputs()[0].shape == data_shape


def test_mxnet_module_init_optimizer():
    def get_module_idx2name(mod):
        return dict(enumerate(mod._exec_group.param_names))

    data = mx.sym.Variable('data')
    sym = mx.sym.FullyConnected(data, num_hidden=20, name='fc')
    batch_size = 8
    opt_params = {'learning_rate': 1, 'rescale_grad': 1.0 / batch_size}

    mod1 = mx.mod.Module(sym, ('data',), None, context=mx.cpu(0))
    mod1.bind(data_shapes=[('data', (batch_size, 20))])
    mod1.init_params()
    mod1.init_optimizer(optimizer='sgd', optimizer_params=opt_params)
    assert mod1._optimizer.idx2name == get_module_idx2name(mod1)

    mod2 = mx.mod.Module(sym, ('data',), None, context=mx.cpu(0))
    mod2.bind(data_shapes=[('data', (batch_size, 20))])
    mod2.init_params()
    opt = mx.optimizer.SGD(**opt_params)
    mod2.init_optimizer(optimizer=opt)
    assert mod2._optimizer.idx2name == get_module_idx2name(mod2)


# -------------------------------------------------------------------------------------------------
# hybridlib's own
# -------------------------------------------------------------------------------------------------

def _fc_module(**kwargs):
    sym = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3, name='fc')
    return mx.mod.Module(mx.sym.LinearRegressionOutput(sym, name='lro'), data_names=('data',),
                         label_names=('lro_label',), **kwargs)


def test_module_states_and_properties():
    mod = _fc_module()
    assert mod.data_names == ['data'] and mod.label_names == ['lro_label']
    assert mod.output_names == ['lro_output']
    assert not (mod.binded or mod.params_initialized or mod.optimizer_initialized)
    with pytest.raises(AssertionError, match='not bound'):
        mod.data_shapes
    with pytest.raises(AssertionError, match='call bind before initializing'):
        mod.init_params()
    mod.bind(data_shapes=[('data', (4, 5))], label_shapes=[('lro_label', (4, 3))])
    assert mod.binded and mod.for_training
    assert mod.data_shapes == [('data', (4, 5))]
    assert mod.output_shapes == [('lro_output', (4, 3))]
    with pytest.raises(AssertionError, match='initialize its parameters first'):
        mod.init_optimizer()
    mod.init_params()
    mod.init_optimizer()
    assert mod.params_initialized and mod.optimizer_initialized
    with pytest.warns(UserWarning, match='already initialized'):
        mod.init_params()


def test_module_names_are_checked():
    sym = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3, name='fc')
    with pytest.raises(ValueError, match="input with name 'x' is not found"):
        mx.mod.Module(sym, data_names=('x',))
    with pytest.warns(UserWarning, match="label_names=\\['softmax_label'\\]"):
        mx.mod.Module(sym)
    mod = mx.mod.Module(sym, label_names=None)
    with pytest.raises(ValueError, match="don't match names specified by data_names"):
        mod.bind(data_shapes=[('other', (2, 4))])


def test_fixed_params_are_not_updated_and_grad_req_add_accumulates():
    mod = _fc_module(fixed_param_names=['fc_bias'])
    mod.bind(data_shapes=[('data', (4, 5))], label_shapes=[('lro_label', (4, 3))],
             grad_req='add')
    mod.init_params(initializer=mx.init.Constant(0.5), arg_params={'fc_bias': nd.ones(3)},
                    allow_missing=True)
    mod.init_optimizer(optimizer_params={'learning_rate': 0.1})
    batch = mx.io.DataBatch([nd.ones((4, 5))], [nd.zeros((4, 3))])
    group = mod._exec_group
    assert group.grad_req == {'data': 'null', 'fc_weight': 'add', 'fc_bias': 'null',
                              'lro_label': 'null'}
    mod.forward_backward(batch)
    first = group.execs[0].grad_dict['fc_weight'].asnumpy().copy()
    mod.forward_backward(batch)
    np.testing.assert_allclose(group.execs[0].grad_dict['fc_weight'].asnumpy(), 2 * first)
    mod.update()
    arg, _ = mod.get_params()
    assert np.all(arg['fc_bias'].asnumpy() == 1)
    assert np.all(arg['fc_weight'].asnumpy() != 0.5)


def test_work_load_list_splits_the_batch():
    assert _split_input_slice(10, [1, 1]) == [slice(0, 5), slice(5, 10)]
    assert _split_input_slice(10, [1, 2, 2]) == [slice(0, 2), slice(2, 6), slice(6, 10)]
    with pytest.raises(ValueError, match='Too many slices'):
        _split_input_slice(2, [1, 1, 1])
    mod = _fc_module(context=[mx.cpu(0), mx.cpu(1), mx.cpu(2)], work_load_list=[1, 2, 1])
    mod.bind(data_shapes=[('data', (8, 5))], label_shapes=[('lro_label', (8, 3))])
    mod.init_params()
    x = np.arange(40, dtype=np.float32).reshape(8, 5)
    mod.forward(mx.io.DataBatch([nd.array(x)], [nd.zeros((8, 3))]), is_train=False)
    parts = mod.get_outputs(merge_multi_context=False)[0]
    assert [p.shape[0] for p in parts] == [2, 4, 2]
    assert [p.context for p in parts] == [mx.cpu(0), mx.cpu(1), mx.cpu(2)]
    arg, _ = mod.get_params()
    expected = x @ arg['fc_weight'].asnumpy().T + arg['fc_bias'].asnumpy()
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), expected, rtol=1e-6)
    with pytest.raises(AssertionError, match='one number per context'):
        _fc_module(context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1])


def test_predict_merges_batches_and_removes_padding():
    mod = _fc_module()
    mod.bind(data_shapes=[('data', (4, 5))], for_training=False)
    mod.init_params()
    x = np.random.RandomState(0).uniform(size=(10, 5)).astype(np.float32)
    it = mx.io.NDArrayIter(x, batch_size=4)
    merged = mod.predict(it)
    assert merged.shape == (10, 3)
    per_batch = mod.predict(it, merge_batches=False)
    assert [len(b) for b in per_batch] == [1, 1, 1]
    assert [b[0].shape[0] for b in per_batch] == [4, 4, 2]
    assert mod.predict(it, always_output_list=True)[0].shape == (10, 3)
    assert mod.predict(it, num_batch=2).shape == (8, 3)
    with pytest.raises(ValueError, match='eval_data must be of type NDArray or DataIter'):
        mod.predict([x])


def test_sequential_module_with_python_loss():
    x, y = GEN.classification_data(2, 32, 20, 4)
    net = GEN.mlp_symbol(mx, hidden=(8,), classes=4)
    scores = net.get_internals()['fc2_output']

    def softmax_grad(scores, labels):
        p = nd.softmax(scores, axis=1).asnumpy()
        p[np.arange(len(p)), labels.asnumpy().astype(int)] -= 1
        return p

    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(scores, label_names=None))
    seq.add(mx.mod.PythonLossModule(grad_func=softmax_grad, data_names=('fc2_output',)),
            take_labels=True, auto_wiring=True)
    seq.bind(data_shapes=[('data', (16, 20))], label_shapes=[('softmax_label', (16,))])
    init = GEN.init_params(3, GEN.param_shapes(net, data=(16, 20)))
    seq.init_params(arg_params={k: nd.array(v) for k, v in init.items()})
    seq.init_optimizer(optimizer_params={'learning_rate': 0.5})
    assert seq.output_shapes == [('pyloss_output', (16, 4))]

    # the same training by a Module with SoftmaxOutput gives the same parameters
    ref = mx.mod.Module(net)
    ref.bind(data_shapes=[('data', (16, 20))], label_shapes=[('softmax_label', (16,))])
    ref.init_params(arg_params={k: nd.array(v) for k, v in init.items()})
    ref.init_optimizer(optimizer_params={'learning_rate': 0.5})
    for module in (seq, ref):
        for batch in mx.io.NDArrayIter(x, y, batch_size=16):
            module.forward_backward(batch)
            module.update()
    for name, value in ref.get_params()[0].items():
        np.testing.assert_allclose(seq.get_params()[0][name].asnumpy(), value.asnumpy(),
                                   rtol=1e-5, atol=1e-7)
    # the loss module takes the labels, so it is the one that updates the metric
    batch = mx.io.DataBatch([nd.array(x[:16])], [nd.array(y[:16])])
    seq.forward(batch, is_train=False)
    metric = mx.metric.create('acc')
    seq.update_metric(metric, batch.label)
    predicted = seq.get_outputs()[0].asnumpy().argmax(axis=1)
    assert metric.num_inst == 16
    assert metric.get()[1] == np.mean(predicted == y[:16])


def test_bind_shared_reuses_parameters_and_input_memory():
    sym_gen = GEN.make_sym_gen(mx)
    long_sym, _, _ = sym_gen(6)
    short_sym, _, _ = sym_gen(3)
    params = ['embed_weight', 'rnn_i2h_weight', 'rnn_h2h_weight', 'rnn_h2h_bias',
              'cls_weight', 'cls_bias']
    reqs = dict.fromkeys(params, 'write')
    buffer = {}
    long_exec = bind_shared(long_sym, mx.cpu(), {'data': (4, 6), 'softmax_label': (4,)},
                            grad_req=reqs, shared_arg_names=params, shared_buffer=buffer)
    assert sorted(buffer) == ['data', 'softmax_label']
    short_exec = bind_shared(short_sym, mx.cpu(), {'data': (4, 3), 'softmax_label': (4,)},
                             grad_req=reqs, shared_exec=long_exec, shared_arg_names=params,
                             shared_buffer=buffer)
    for name in params:
        assert short_exec.arg_dict[name] is long_exec.arg_dict[name]
        assert short_exec.grad_dict[name] is long_exec.grad_dict[name]
    assert 'data' not in short_exec.grad_dict
    short_exec.arg_dict['data'][:] = 7
    assert np.all(long_exec.arg_dict['data'].asnumpy().ravel()[:12] == 7)
    bigger = bind_shared(long_sym, mx.cpu(), {'data': (8, 6), 'softmax_label': (8,)},
                         shared_exec=long_exec, shared_arg_names=params,
                         shared_buffer=buffer)
    assert buffer['data'] is bigger.arg_dict['data'] and buffer['data'].shape == (8, 6)
    with pytest.raises(MXNetError, match='cls_weight'):
        other, _, _ = GEN.make_sym_gen(mx)(6)
        bind_shared(mx.sym.FullyConnected(other, num_hidden=2, name='cls'), mx.cpu(),
                    {'data': (4, 6), 'softmax_label': (4,)}, shared_exec=long_exec,
                    shared_arg_names=params + ['cls_weight'])


def test_reshape_executor_shares_or_reallocates():
    sym = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3, name='fc')
    exe = sym.simple_bind(mx.cpu(), data=(4, 5))
    smaller = reshape_executor(exe, data=(2, 5))
    assert smaller.arg_dict['fc_weight'] is exe.arg_dict['fc_weight']
    smaller.arg_dict['data'][:] = 1
    assert exe.arg_dict['data'].asnumpy()[:2].sum() == 10
    with pytest.raises(MXNetError, match='allow_up_sizing'):
        reshape_executor(exe, data=(8, 5))
    assert reshape_executor(exe, allow_up_sizing=True, data=(8, 5)).arg_dict['data'].shape == \
        (8, 5)
    with pytest.raises(MXNetError, match='Shape of unspecified array arg:fc_weight changed'):
        reshape_executor(exe, data=(2, 10))
    assert reshape_executor(exe, partial_shaping=True, data=(4, 2)).arg_dict[
        'fc_weight'].shape == (3, 2)


def test_data_parallel_executor_manager_trains_like_a_module():
    x, y = GEN.classification_data(2, 24, 20, 4)
    sym = GEN.mlp_symbol(mx, hidden=(8,), classes=4)
    init = GEN.init_params(3, GEN.param_shapes(sym, data=(12, 20)))
    train = mx.io.NDArrayIter(x, y, batch_size=12)
    arg_names = sym.list_arguments()
    param_names = [n for n in arg_names if n not in ('data', 'softmax_label')]
    manager = DataParallelExecutorManager(sym, [mx.cpu(0), mx.cpu(1)], train, arg_names,
                                          param_names, [], logger=logging.getLogger('mgr'))
    manager.set_params({k: nd.array(v) for k, v in init.items()}, {})
    mod = mx.mod.Module(sym, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(arg_params={k: nd.array(v) for k, v in init.items()})
    batch = next(iter(train))
    manager.load_data_batch(batch)
    manager.forward(is_train=True)
    manager.backward()
    mod.forward_backward(batch)
    for name, grads in zip(param_names, manager.grad_arrays):
        index = mod._exec_group.param_names.index(name)
        for mine, theirs in zip(grads, mod._exec_group.grad_arrays[index]):
            np.testing.assert_allclose(mine.asnumpy(), theirs.asnumpy(), rtol=1e-6)
    out = {k: nd.zeros(v.shape) for k, v in init.items()}
    manager.copy_to(out, {})
    for name, value in init.items():
        np.testing.assert_allclose(out[name].asnumpy(), value)
    metric = mx.metric.create('acc')
    manager.update_metric(metric, batch.label)
    assert metric.num_inst == 12
