"""gluon.contrib.estimator (hybridlib/contrib/estimator/): small training runs against MXNet
1.9.1's (tests/data/contrib_estimator.json, written by
tests/data/make_contrib_estimator_files.py): the events each handler sees and their order, the
metric values, the log lines, checkpoint files, early stopping, validation, resuming, the
parameters after training; then the checks, defaults and errors."""
import inspect
import json
import logging
import os
import warnings

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import gluon, nd
from hybridlib.gluon.contrib import estimator as E

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, '..', 'data', 'contrib_estimator.json')) as _f:
    FIXTURE = json.load(_f)
SCOPE = dict(np=np, mx=mx, gluon=gluon, nd=nd, E=E)
exec(FIXTURE['builders'], SCOPE)      # noqa: S102 - the generator's own source
RESULTS = FIXTURE['results']
problem, network, estimator, Recorder = (SCOPE[name] for name in
                                         ('problem', 'network', 'estimator', 'Recorder'))


@pytest.fixture(autouse=True)
def _without_gpus(monkeypatch):
    """The runs were recorded where MXNet saw no GPU, so that the default context was the CPU
    the builders initialise their networks on (with a GPU, MXNet's Estimator picks gpu(0))."""
    monkeypatch.setattr(E.estimator, 'num_gpus', lambda: 0)


def run(scenario, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with mx.name.NameManager():
            return SCOPE[scenario](str(tmp_path))


# -------------------------------------------------------------------------------------------------
# Names and signatures
# -------------------------------------------------------------------------------------------------

def test_exports_and_signatures_as_mxnet():
    assert E.estimator.__all__ == FIXTURE['all']['estimator']
    assert E.event_handler.__all__ == FIXTURE['all']['event_handler']
    assert E.batch_processor.__all__ == FIXTURE['all']['batch_processor']
    for name, text in FIXTURE['signatures'].items():
        owner, _, method = name.partition('.')
        func = getattr(getattr(E, owner), method or '__init__')
        assert str(inspect.signature(func)) == text, name
    assert mx.contrib.estimator is E
    from hybridlib.gluon.contrib.estimator import Estimator, CheckpointHandler  # noqa: F401


# -------------------------------------------------------------------------------------------------
# Training runs: MXNet's events, logs, files and numbers
# -------------------------------------------------------------------------------------------------

def assert_events(actual, expected):
    """The same events in the same order; metric values at epoch ends within float32
    rounding."""
    assert [e[:2] for e in actual] == [e[:2] for e in expected]
    for a, e in zip(actual, expected):
        if e[1] == 'epoch_end':
            assert [m[0] for m in a[2]] == [m[0] for m in e[2]]
            np.testing.assert_allclose([m[1] for m in a[2]], [m[1] for m in e[2]], rtol=1e-5,
                                       atol=1e-6, err_msg=str(e))
        else:
            assert a == e


def assert_log(lines, values, expected_lines, expected_values):
    """The same lines, their numbers as MXNet printed them (to the last digit, 1e-4)."""
    assert lines == expected_lines
    for line, a, e in zip(lines, values, expected_values):
        np.testing.assert_allclose(a, e, rtol=0, atol=1.01e-4, err_msg=line)


def assert_params(actual, expected):
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


SCENARIOS = ['fit_epochs', 'fit_batches', 'stop_from_handler', 'early_stopping',
             'early_stopping_baseline', 'checkpoints_by_batch', 'resume', 'evaluate_only']


@pytest.mark.parametrize('scenario', SCENARIOS)
def test_training_runs_as_mxnet(scenario, tmp_path):
    expected = RESULTS[scenario]
    out = run(scenario, tmp_path)
    assert sorted(out) == sorted(expected)
    assert_events(out['events'], expected['events'])
    assert_log(out['lines'], out['values'], expected['lines'], expected['values'])
    assert_params(out['params'], expected['params'])
    for key in sorted(set(expected) - {'events', 'lines', 'values', 'params'}):
        if isinstance(expected[key], float):
            np.testing.assert_allclose(out[key], expected[key], rtol=1e-5, err_msg=key)
        else:
            assert out[key] == expected[key], key


def mxnet_slips_fixed(lines, values):
    """MXNet's CheckpointHandler log as hybridlib writes it: 'improved from' shows the
    previous best (MXNet repeats the new one; the first is -inf) and 'did not improve' the
    epoch (MXNet shows the batch count)."""
    lines, values = list(lines), [list(v) for v in values]
    best, epoch = None, None
    for i, line in enumerate(lines):
        if 'trained total' in line:
            epoch = values[i][0]
        elif 'improved from' in line:
            if best is None:
                lines[i] = line.replace('from #', 'from -inf')
                values[i] = [values[i][0], values[i][2]]
            else:
                values[i][1] = best
            best = values[i][-1]
        elif 'did not improve' in line:
            values[i][0] = epoch
    return lines, values


def test_checkpoints_as_mxnet(tmp_path):
    expected = RESULTS['checkpoints']
    out = run('checkpoints', tmp_path)
    assert out['files'] == expected['files']
    assert out['symbol'] == expected['symbol']
    assert out['best'] == expected['best']
    assert_log(out['lines'], out['values'], *mxnet_slips_fixed(expected['lines'],
                                                               expected['values']))
    assert_params(out['params'], expected['params'])


def test_handlers_run_in_mxnets_order(tmp_path):
    assert run('handler_order', tmp_path) == RESULTS['handler_order']


def test_default_metrics_as_mxnet(tmp_path):
    assert run('default_metrics', tmp_path) == RESULTS['default_metrics']


def test_checkpoint_files_load_back(tmp_path):
    """A checkpoint holds the parameters and the trainer state at that point."""
    train, _ = problem()
    net = network()
    est, _ = estimator(net)
    est.fit(train, epochs=1, event_handlers=[E.CheckpointHandler(str(tmp_path))])
    other = network()
    other.load_parameters(str(tmp_path / 'model-epoch0batch4.params'))
    for a, b in zip(net.collect_params().values(), other.collect_params().values()):
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy())
    est.trainer.load_states(str(tmp_path / 'model-epoch0batch4.states'))


# -------------------------------------------------------------------------------------------------
# Behaviour beyond the recorded runs
# -------------------------------------------------------------------------------------------------

def test_logs_go_to_stdout_by_default(capsys):
    train, _ = problem()
    net = network()
    with pytest.warns(UserWarning, match='No trainer specified'):
        est = E.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss())
    est.fit(train, epochs=1)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == 'Training begin: using optimizer SGD with current learning rate 0.0010 '
    assert out[1] == 'Train for 1 epochs.'
    assert out[-1].startswith('Train finished using total 0s with 1 epochs. training accuracy: ')
    assert est.logger.level == logging.INFO


def test_default_handlers_join_the_callers_list():
    """As in MXNet, fit adds its default handlers to the list it is given, and a later fit
    with that list reuses them (with one more StoppingHandler)."""
    train, _ = problem()
    est, _ = estimator(network())
    handlers = [E.GradientUpdateHandler()]
    est.fit(train, batches=2, event_handlers=handlers)
    assert [type(h).__name__ for h in handlers] == [
        'GradientUpdateHandler', 'MetricHandler', 'StoppingHandler', 'LoggingHandler']
    est.fit(train, batches=2, event_handlers=handlers)
    assert [type(h).__name__ for h in handlers].count('StoppingHandler') == 2
    assert len(handlers) == 5


def test_auto_mode_compares_accuracy_up_and_losses_down(tmp_path):
    """MXNet 1.9.1's 'auto' chose ``greater`` for every metric ('acc' or 'f1' in name is
    always true): a loss never improved."""
    est, _ = estimator(network())
    accuracy, loss = est.train_metrics
    with pytest.warns(UserWarning, match='`greater` operator will be used to determine if '
                                         'training accuracy has improved'):
        assert E.EarlyStoppingHandler(accuracy).monitor_op is np.greater
    with pytest.warns(UserWarning, match='`less` operator will be used to determine if '
                                         'training softmaxcrossentropyloss has improved'):
        stopper = E.EarlyStoppingHandler(loss, min_delta=0.1)
    assert stopper.monitor_op is np.less and stopper.min_delta == -0.1
    with pytest.warns(UserWarning, match='`greater`'):
        assert E.CheckpointHandler(str(tmp_path), monitor=mx.metric.F1(), save_best=True,
                                   mode='auto').monitor_op is np.greater
    with pytest.warns(RuntimeWarning, match='mode sideways is unknown'), \
            pytest.warns(UserWarning, match='`less`'):
        E.EarlyStoppingHandler(loss, mode='sideways')


def test_early_stopping_on_a_loss_in_auto_mode(tmp_path):
    train, _ = problem()
    est, lines = estimator(network())
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        stopper = E.EarlyStoppingHandler(est.train_metrics[1], patience=0)
    est.fit(train, epochs=4, event_handlers=[stopper])
    # the loss falls every epoch: no stop
    assert stopper.stopped_epoch == 0 and stopper.current_epoch == 4
    assert stopper.best == est.train_metrics[1].get()[1]


def test_early_stopping_warns_on_a_metric_never_updated():
    train, _ = problem()
    est, _ = estimator(network())
    foreign = mx.metric.MAE()
    stopper = E.EarlyStoppingHandler(foreign, mode='min')
    with pytest.warns(RuntimeWarning, match='mae is not updated'):
        est.fit(train, epochs=1, event_handlers=[stopper, E.MetricHandler(est.train_metrics),
                                                 E.LoggingHandler(metrics=est.train_metrics),
                                                 E.GradientUpdateHandler()])


def test_validation_every_few_batches(tmp_path):
    train, val = problem()
    est, lines = estimator(network())
    log = []
    validation = E.ValidationHandler(val, est.evaluate, epoch_period=None, batch_period=3,
                                     event_handlers=[Recorder(log, 'val', est.val_metrics)])
    est.fit(train, epochs=2, event_handlers=[validation])
    # 8 batches: validation after the third and the sixth
    assert [e[1] for e in log].count('epoch_begin') == 2
    assert sum('Validation Begin' in line for line in lines) == 2


def test_custom_batch_processor_is_used():
    calls = []

    class Scaled(E.BatchProcessor):
        def fit_batch(self, estimator, train_batch, batch_axis=0):
            calls.append(('fit', train_batch[0].shape))
            return super().fit_batch(estimator, (train_batch[0] * 2, train_batch[1]),
                                     batch_axis)

        def evaluate_batch(self, estimator, val_batch, batch_axis=0):
            calls.append(('evaluate', val_batch[0].shape))
            return super().evaluate_batch(estimator, val_batch, batch_axis)

    train, val = problem()
    est, _ = estimator(network(), batch_processor=Scaled())
    est.fit(train, val_data=val, batches=2)
    # stopping after two batches ends the epoch, which is validated
    assert calls == [('fit', (4, 3))] * 2 + [('evaluate', (8, 3))] * 2
    est.evaluate(val)
    assert calls[4:] == [('evaluate', (8, 3))] * 2


def test_two_contexts_train_as_one():
    """A batch split over two contexts gives the update of the whole batch on one."""
    train, _ = problem()
    results = []
    for context in ([mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]):
        net = gluon.nn.Dense(2, in_units=3, prefix='d_')
        net.initialize(mx.init.Constant(0.1), ctx=context)
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.2})
        est = E.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                          context=context)
        est.logger.handlers = []
        est.fit(train, epochs=2)
        results.append(net.weight.data(context[-1]).asnumpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5)


def test_initialization():
    net = gluon.nn.Dense(2, in_units=3)
    with pytest.warns(UserWarning, match='No trainer specified'):
        est = E.Estimator(net, gluon.loss.L2Loss(), initializer=mx.init.Constant(0.5))
    assert (net.weight.data().asnumpy() == 0.5).all()
    with pytest.warns(UserWarning, match='Network already fully initialized'):
        E.Estimator(net, gluon.loss.L2Loss(), initializer=mx.init.Zero(),
                    trainer=est.trainer)
    assert (net.weight.data().asnumpy() == 0.5).all()


def test_resume_refuses_a_finished_training(tmp_path):
    train, _ = problem()
    est, _ = estimator(network())
    est.fit(train, epochs=2, event_handlers=[E.CheckpointHandler(str(tmp_path))])
    est, _ = estimator(network())
    with pytest.raises(ValueError, match='maximum number of epoch 2 reached'):
        est.fit(train, epochs=2, event_handlers=[
            E.CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)])
    with pytest.raises(AssertionError, match='same type of period'):
        est.fit(train, batches=2, event_handlers=[
            E.CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)])


def test_max_checkpoints_keeps_the_newest(tmp_path):
    train, _ = problem()
    est, _ = estimator(network())
    est.fit(train, batches=8, event_handlers=[
        E.CheckpointHandler(str(tmp_path), epoch_period=None, batch_period=1,
                            max_checkpoints=3)])
    assert sorted(os.listdir(tmp_path)) == [
        f'model-epoch1batch{b}.{ext}' for b in (5, 6, 7) for ext in ('params', 'states')]


ERRORS = [
    (lambda net: E.Estimator(net, 'l2'), ValueError, 'loss must be a Loss'),
    (lambda net: E.Estimator(net, gluon.loss.L2Loss(), train_metrics=['acc']), ValueError,
     'metrics must be a Metric or a list of Metric'),
    (lambda net: E.Estimator(net, gluon.loss.L2Loss(), context='cpu'), ValueError,
     'context must be a Context or a list of Context'),
    (lambda net: E.Estimator(net, gluon.loss.L2Loss(), context=mx.gpu(7)), AssertionError,
     r'gpu\(7\) is not available'),
    (lambda net: E.Estimator(net, gluon.loss.L2Loss(), trainer='sgd'), ValueError,
     'Trainer must be a Gluon Trainer instance'),
    (lambda net: E.Estimator(net, gluon.loss.L2Loss(), trainer=gluon.Trainer(
        net.collect_params(), 'sgd'), batch_processor=object()), ValueError,
     'must contain fit_batch'),
    (lambda net: E.LoggingHandler(log_interval='batch'), ValueError,
     "log_interval must be either an integer or string 'epoch'"),
    (lambda net: E.CheckpointHandler('unused_dir', save_best=True), ValueError,
     'To save best model only'),
    (lambda net: E.EarlyStoppingHandler('loss'), ValueError, 'Please provide one of the'),
    (lambda net: E.EarlyStoppingHandler(mx.metric.CompositeEvalMetric()), ValueError,
     'CompositeEvalMetric is not supported'),
]


@pytest.mark.parametrize('make, error, match', ERRORS)
def test_construction_errors_as_mxnet(make, error, match, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with pytest.raises(error, match=match):
            make(net)


def test_fit_and_evaluate_errors_as_mxnet():
    train, val = problem()
    est, _ = estimator(network())
    with pytest.raises(ValueError, match='only support input as Gluon DataLoader'):
        est.fit([(nd.ones((2, 3)), nd.ones(2))], epochs=1)
    with pytest.raises(ValueError, match='only support input as Gluon DataLoader'):
        est.evaluate(nd.ones((2, 3)))
    for kwargs in ({}, {'epochs': 1, 'batches': 2}):
        with pytest.raises(ValueError, match='Fit only support exactly one type of iteration'):
            est.fit(train, **kwargs)
    with pytest.raises(ValueError, match='handlers must be an EventHandler'):
        est.fit(train, epochs=1, event_handlers=['logging'])
    # a handler beside the default ones must use the estimator's own metrics
    foreign = E.LoggingHandler(metrics=[mx.metric.Accuracy()])
    with pytest.raises(ValueError, match='Event handler LoggingHandler refers to a metric '
                                         'instance'):
        est.fit(train, epochs=1, event_handlers=[foreign])
    with pytest.raises(ValueError, match='refers to a metric instance'):
        est.evaluate(val, event_handlers=[E.MetricHandler(est.train_metrics)])
