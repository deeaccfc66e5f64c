"""``contrib.svrg_optimization`` (hybridlib/contrib/svrg_optimization): SVRGModule and its
optimizers, against MXNet 1.9.1.

tests/data/make_svrg_files.py holds the scenarios (``fit`` on one and on two contexts, the
lower-level loop with an SGD instance); run with MXNet it wrote tests/data/svrg-*. Here the
same functions run on hybridlib and their numbers are compared: parameters after up to 30
float32 training steps with rtol 1e-4, the log lines' text exactly and their numbers (printed
with 6 decimals) to 1e-5.
"""
import importlib.util
import json
import logging
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib.contrib.svrg_optimization import svrg_module, svrg_optimizer
from hybridlib.contrib.svrg_optimization.svrg_module import SVRGModule

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data')
_spec = importlib.util.spec_from_file_location('make_svrg_files',
                                               os.path.join(DATA, 'make_svrg_files.py'))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)

REF = np.load(GEN.NUMBERS)
with open(GEN.FACTS) as _f:
    FACTS = json.load(_f)

TRAINED = {'rtol': 1e-4, 'atol': 1e-6}


def _compare(scenario, arrays):
    recorded = sorted(k.split('/', 1)[1] for k in REF.files if k.startswith(scenario + '/'))
    assert sorted(arrays) == recorded
    for name in recorded:
        np.testing.assert_allclose(arrays[name], REF[scenario + '/' + name], **TRAINED,
                                   err_msg=f'{scenario}: {name}')


def _same_facts(facts, expected):
    """Equal, except that the numbers of the log lines may differ by float32 rounding."""
    assert sorted(facts) == sorted(expected)
    for key in facts:
        if key != 'log':
            assert facts[key] == expected[key], key
    assert [line.split('=')[0] for line in facts['log']] == \
        [line.split('=')[0] for line in expected['log']]
    assert [float(line.split('=')[1]) for line in facts['log']] == pytest.approx(
        [float(line.split('=')[1]) for line in expected['log']], rel=1e-5, abs=2e-6)


# -------------------------------------------------------------------------------------------------
# The scenarios, against MXNet's numbers
# -------------------------------------------------------------------------------------------------

def test_fit_matches_mxnet():
    arrays, facts = GEN.run_fit(mx)
    _compare('fit', arrays)
    _same_facts(facts, FACTS['fit'])


def test_fit_on_two_contexts_through_the_kvstore_matches_mxnet():
    arrays, facts = GEN.run_two_contexts(mx)
    _compare('two_contexts', arrays)
    _same_facts(facts, FACTS['two_contexts'])


def test_manual_loop_with_an_optimizer_instance_matches_mxnet():
    arrays, facts = GEN.run_manual(mx)
    _compare('manual', arrays)
    assert facts['mse'] == pytest.approx(FACTS['manual']['mse'], rel=1e-4)
    assert {k: v for k, v in facts.items() if k != 'mse'} == \
        {k: v for k, v in FACTS['manual'].items() if k != 'mse'}


# -------------------------------------------------------------------------------------------------
# The parts
# -------------------------------------------------------------------------------------------------

def _module(**kwargs):
    return SVRGModule(GEN.linear_symbol(mx), data_names=['data'],
                      label_names=['lin_reg_label'], **kwargs)


def _bound(update_freq=1):
    x, y = GEN.regression_data(0, 24)
    train = GEN._iter(mx, x, y, 8)
    mod = _module(update_freq=update_freq)
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(arg_params=GEN.init_params(mx, 1, {'fc_weight': (1, 4), 'fc_bias': (1,)}))
    mod.init_optimizer(optimizer='sgd', optimizer_params=(('learning_rate', 0.1),))
    return mod, train, x, y


def test_update_freq_must_be_a_positive_int():
    with pytest.raises(TypeError, match='update_freq in SVRGModule must be an integer'):
        _module()
    with pytest.raises(TypeError, match='must be an integer'):
        _module(update_freq=2.0)
    with pytest.raises(ValueError, match='must be a positive integer'):
        _module(update_freq=0)
    mod = _module(update_freq=3)
    assert isinstance(mod, mx.mod.Module) and mod.update_freq == 3
    assert isinstance(mod._mod_aux, mx.mod.Module) and not isinstance(mod._mod_aux, SVRGModule)


def test_full_gradients_are_the_mean_gradient_over_the_data():
    mod, train, x, y = _bound()
    mod.update_full_grads(train)
    w = mod.get_params()[0]['fc_weight'].asnumpy()
    b = mod.get_params()[0]['fc_bias'].asnumpy()
    # LinearRegressionOutput's gradient is (prediction - label), summed over each batch
    residual = x @ w.T[:, 0] + b - y
    np.testing.assert_allclose(mod._param_dict[0]['fc_weight'].asnumpy(),
                               (residual @ x)[None] / 3, rtol=1e-5)
    np.testing.assert_allclose(mod._param_dict[0]['fc_bias'].asnumpy(), [residual.sum() / 3],
                               rtol=1e-5)
    # the snapshot module holds the weights the full gradients were taken at
    aux = mod._mod_aux.get_params()[0]
    np.testing.assert_array_equal(aux['fc_weight'].asnumpy(), w)


def test_update_steps_with_the_variance_reduced_gradient():
    mod, train, x, y = _bound()
    mod.update_full_grads(train)
    mu = mod._param_dict[0]['fc_weight'].asnumpy()
    before = mod.get_params()[0]['fc_weight'].asnumpy()
    train.reset()
    batch = next(iter(train))
    mod.forward_backward(batch)
    current = mod._exec_group.grad_arrays[0][0].asnumpy()
    snapshot = mod._mod_aux._exec_group.grad_arrays[0][0].asnumpy()
    mod.update()
    expected = before - 0.1 / 8 * (current - snapshot + mu)
    np.testing.assert_allclose(mod.get_params()[0]['fc_weight'].asnumpy(), expected, rtol=1e-5)


def test_forward_runs_the_snapshot_module_only_when_training():
    mod, train, _, _ = _bound()
    mod.update_full_grads(train)
    train.reset()
    first, second = list(train)[:2]
    mod.forward(first, is_train=True)
    snapshot_out = mod._mod_aux.get_outputs()[0].asnumpy()
    mod.forward(second)                 # is_train=None: the snapshot module is left alone
    np.testing.assert_array_equal(mod._mod_aux.get_outputs()[0].asnumpy(), snapshot_out)
    assert not np.array_equal(mod.get_outputs()[0].asnumpy(), snapshot_out)


def test_predict_only_binding_leaves_the_snapshot_module_unbound():
    mod = _module(update_freq=1)
    x, y = GEN.regression_data(0, 8)
    train = GEN._iter(mx, x, y, 8)
    mod.bind(train.provide_data, train.provide_label, for_training=False)
    assert mod.binded and not mod._mod_aux.binded


def test_optimizer_routes_full_gradient_keys_to_the_assignment():
    idx2name = {0: 'fc_weight', 1: 'fc_bias', 2: 'fc_weight_full', 3: 'fc_bias_full'}
    optim = mx.optimizer.create('_SVRGOptimizer', default_optimizer='sgd', learning_rate=0.5,
                                momentum=0.9, rescale_grad=0.25, param_idx2name=idx2name)
    assert isinstance(optim, svrg_optimizer._SVRGOptimizer)
    assert isinstance(optim.aux_opt, svrg_optimizer._AssignmentOptimizer)
    # the default optimizer gets every argument, the wrapper those of Optimizer
    assert optim.default_opt.momentum == 0.9 and optim.default_opt.lr == 0.5
    assert optim.rescale_grad == 0.25 and not hasattr(optim, 'momentum')
    weight, grad = mx.nd.ones((2,)), mx.nd.array([2., 4.])
    optim.update(2, weight, grad, optim.create_state(2, weight))
    np.testing.assert_array_equal(weight.asnumpy(), [2., 4.])
    assert optim.create_state('fc_weight_full', weight) is None
    state = optim.create_state(0, weight)
    assert state.shape == (2,)                         # sgd's momentum
    optim.update('fc_weight', weight, grad, state)     # a KVStore key is the name
    np.testing.assert_allclose(weight.asnumpy(), [2. - 0.5 * 0.5, 4. - 0.5 * 1.])
    with pytest.raises(KeyError, match='param_idx2name'):
        optim.update(7, weight, grad, None)


def test_unnamed_fully_connected_weights_are_trained_not_assigned():
    """MXNet routes every name containing 'full' to the assignment (fullyconnected0_weight
    included) and diverges; here an unnamed layer trains as a named one."""
    x, y = GEN.regression_data(0, 40)
    trained = []
    for name in (None, 'fc'):
        data = mx.sym.Variable('data')
        out = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(data, num_hidden=1, name=name),
                                            mx.sym.Variable('lin_reg_label'))
        mod = SVRGModule(out, data_names=['data'], label_names=['lin_reg_label'],
                         update_freq=2, logger=GEN.capture_logger('svrg-unnamed'))
        mod.fit(GEN._iter(mx, x, y, 8), eval_metric='mse', optimizer='sgd',
                optimizer_params=(('learning_rate', 0.1),), num_epoch=3,
                initializer=mx.init.Zero())
        trained.append({k.split('_')[-1]: v.asnumpy().tolist()
                        for k, v in mod.get_params()[0].items()})
    assert trained[0] == trained[1]
    assert np.abs(trained[0]['weight']).max() < 5       # MXNet's reach 1e8 here


def test_fit_logs_as_mxnet_and_calls_the_callbacks(caplog):
    x, y = GEN.regression_data(0, 16)
    mod = _module(update_freq=1, logger=logging.getLogger('svrg-log'))
    epochs = []
    with caplog.at_level(logging.INFO, logger='svrg-log'):
        mod.fit(GEN._iter(mx, x, y, 8), eval_metric='mse', num_epoch=2,
                epoch_end_callback=lambda epoch, symbol, arg, aux: epochs.append(
                    (epoch, symbol is mod.symbol, sorted(arg))))
    messages = [r.getMessage() for r in caplog.records]
    assert [m.split('=')[0] for m in messages] == [
        'Epoch[0] Train-mse', 'Epoch[0] Time cost', 'Epoch[1] Train-mse', 'Epoch[1] Time cost']
    assert epochs == [(0, True, ['fc_bias', 'fc_weight']), (1, True, ['fc_bias', 'fc_weight'])]
    with pytest.raises(AssertionError, match='number of epochs'):
        mod.fit(GEN._iter(mx, x, y, 8))


def test_reshape_reshapes_both_modules():
    mod, _, _, _ = _bound()
    mod.reshape([('data', (4, 4))], [('lin_reg_label', (4,))])
    assert mod.data_shapes[0].shape == (4, 4)
    assert mod._mod_aux.data_shapes[0].shape == (4, 4)


def test_mxnet_paths():
    import hybridlib.contrib.svrg_optimization as package
    assert package.svrg_module is svrg_module and package.svrg_optimizer is svrg_optimizer
    assert svrg_module.SVRGModule is SVRGModule
