"""Writes contrib_estimator.json: what MXNet 1.9.1's ``gluon.contrib.estimator`` does in small
training runs (tests/contrib/test_estimator.py).

Run with the MXNet oracle's Python, from the repository root::

    .oracle/bin/python tests/data/make_contrib_estimator_files.py

``builders`` is source that runs with MXNet's and hybridlib's ``mx``, ``gluon``, ``nd``, ``np``
and ``E`` (``gluon.contrib.estimator``): a small classification problem, a handler that records
every event it sees, and the scenarios. Each scenario returns ``events`` (what the recording
handlers saw, in order, with the metric values at epoch ends), ``lines`` (what the estimator
logged, numbers masked as '#'), ``values`` (the numbers of each log line) and what else it
checks (handler order, checkpoint files, parameters after training). ``results`` holds what
MXNet returned; ``signatures`` the public signatures.
"""
import inspect
import json
import os
import tempfile
import warnings

import numpy as np
import mxnet as mx
from mxnet import gluon, nd
from mxnet.gluon.contrib import estimator as E

OUT = os.path.dirname(os.path.abspath(__file__))

BUILDERS = r'''
import logging
import os
import re

NUMBER = re.compile(r'-?\d+(\.\d+)?')
SECONDS = re.compile(r'\d+(\.\d+)?s\b')


def problem(n=16, batch_size=4):
    """A linearly separable 3-feature, 2-class problem in fixed order, as DataLoaders."""
    x = np.sin(np.arange(n * 3) * 1.7).reshape(n, 3).astype('float32')
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype('float32')
    dataset = gluon.data.ArrayDataset(x, y)
    return (gluon.data.DataLoader(dataset, batch_size=batch_size),
            gluon.data.DataLoader(dataset, batch_size=batch_size * 2))


def network(hybridize=False):
    net = gluon.nn.HybridSequential(prefix='net_')
    with net.name_scope():
        net.add(gluon.nn.Dense(4, activation='tanh', in_units=3))
        net.add(gluon.nn.Dense(2, in_units=4))
    net.initialize()
    for i, p in enumerate(net.collect_params().values()):
        p.set_data(nd.array(np.cos(np.arange(np.prod(p.shape)) * 0.9 + i).reshape(p.shape)))
    if hybridize:
        net.hybridize()
    return net


def estimator(net, **kwargs):
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.2})
    est = E.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer, **kwargs)
    lines = []

    class Lines(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    est.logger.handlers = [Lines()]
    return est, lines


class Recorder(E.TrainBegin, E.TrainEnd, E.EpochBegin, E.EpochEnd, E.BatchBegin, E.BatchEnd):
    """Records each event: its name, the batch size (batch events), the arguments of batch
    end, and the values of ``metrics`` at epoch end."""

    def __init__(self, log, name, metrics=None, priority=0, stop_at_batch=None):
        self.log = log
        self.name = name
        self.metrics = metrics or []
        self.priority = priority
        self.stop_at_batch = stop_at_batch
        self.batches = 0

    def train_begin(self, estimator, *args, **kwargs):
        self.log.append([self.name, 'train_begin', estimator.max_epoch, estimator.max_batch])

    def train_end(self, estimator, *args, **kwargs):
        self.log.append([self.name, 'train_end'])

    def epoch_begin(self, estimator, *args, **kwargs):
        self.log.append([self.name, 'epoch_begin'])

    def epoch_end(self, estimator, *args, **kwargs):
        self.log.append([self.name, 'epoch_end',
                         [[m.name, float(m.get()[1])] for m in self.metrics]])
        return False

    def batch_begin(self, estimator, *args, **kwargs):
        self.log.append([self.name, 'batch_begin', int(kwargs['batch'][0].shape[0])])

    def batch_end(self, estimator, *args, **kwargs):
        self.batches += 1
        self.log.append([self.name, 'batch_end', sorted(kwargs), len(kwargs['pred']),
                         list(kwargs['pred'][0].shape), list(kwargs['loss'][0].shape)])
        return self.batches == self.stop_at_batch


def masked(lines, folder):
    """The log lines with their numbers as '#' (times as 'Ts', the scenario's folder as
    'DIR'), and the numbers of each line."""
    lines = [SECONDS.sub('Ts', line.replace(folder, 'DIR')) for line in lines]
    return ([NUMBER.sub('#', line) for line in lines],
            [[float(m.group()) for m in NUMBER.finditer(line)] for line in lines])


def outcome(folder, log, lines, net, **more):
    text, values = masked(lines, folder)
    params = [p.data().asnumpy().ravel().tolist() for p in net.collect_params().values()]
    return dict(more, events=log, lines=text, values=values, params=params)


def fit_epochs(folder):
    """Two epochs with validation data: the default handlers and a recorder in training and
    in validation (with a MetricHandler of its own there)."""
    train, val = problem()
    net = network()
    est, lines = estimator(net)
    log = []
    val_handlers = [Recorder(log, 'val', est.val_metrics, priority=-500)]
    handlers = [Recorder(log, 'train', est.train_metrics),
                E.ValidationHandler(val, est.evaluate, event_handlers=val_handlers)]
    est.fit(train, val_data=val, epochs=2, event_handlers=handlers)
    return outcome(folder, log, lines, net, train_metrics=[m.name for m in est.train_metrics],
                   val_metrics=[m.name for m in est.val_metrics])


def fit_batches(folder):
    """Six batches (an epoch and a half), logged every two batches."""
    train, _ = problem()
    net = network()
    est, lines = estimator(net)
    log = []
    handlers = [Recorder(log, 'rec', est.train_metrics, priority=-1500),
                E.LoggingHandler(log_interval=2, metrics=est.train_metrics)]
    est.fit(train, batches=6, event_handlers=handlers)
    return outcome(folder, log, lines, net)


def stop_from_handler(folder):
    """A handler stops the training at its third batch end."""
    train, _ = problem()
    net = network()
    est, lines = estimator(net)
    log = []
    est.fit(train, epochs=3, event_handlers=[Recorder(log, 'rec', stop_at_batch=3)])
    return outcome(folder, log, lines, net)


def handler_order(folder):
    """The handlers fit runs, by priority, with the defaults it adds."""
    train, val = problem()
    net = network()
    est, _ = estimator(net)
    est.max_epoch, est.max_batch = 2, None
    mine = [Recorder([], 'late', priority=5), Recorder([], 'early', priority=-3000),
            E.EarlyStoppingHandler(est.train_metrics[1], mode='min'),
            E.CheckpointHandler(os.path.join(folder, 'order'))]
    order = est._prepare_default_handlers(val, mine)
    validation = est._prepare_default_validation_handlers(None)
    return {'fit': [type(h).__name__ + ('' if not isinstance(h, Recorder) else ':' + h.name)
                    for h in order],
            'evaluate': [type(h).__name__ for h in validation]}


def early_stopping(folder):
    """Patience 1 on the training loss with a min_delta too large to count as improving."""
    train, _ = problem()
    net = network()
    est, lines = estimator(net)
    log = []
    stopper = E.EarlyStoppingHandler(est.train_metrics[1], min_delta=0.5, patience=1,
                                     mode='min')
    est.fit(train, epochs=6, event_handlers=[stopper, Recorder(log, 'rec',
                                                                est.train_metrics)])
    return outcome(folder, log, lines, net, stopped_epoch=stopper.stopped_epoch,
                   best=float(stopper.best), wait=stopper.wait)


def early_stopping_baseline(folder):
    """Accuracy must beat a baseline it never reaches: stops after `patience` epochs."""
    train, _ = problem()
    net = network()
    est, lines = estimator(net)
    log = []
    stopper = E.EarlyStoppingHandler(est.train_metrics[0], patience=2, mode='max',
                                     baseline=1.5)
    est.fit(train, epochs=5, event_handlers=[stopper, Recorder(log, 'rec',
                                                                est.train_metrics)])
    return outcome(folder, log, lines, net, stopped_epoch=stopper.stopped_epoch)


def checkpoints(folder):
    """Every epoch, keeping two, the best by validation accuracy, the symbol of a hybridized
    network; verbose."""
    train, val = problem()
    net = network(hybridize=True)
    est, lines = estimator(net)
    model_dir = os.path.join(folder, 'epochs')
    handler = E.CheckpointHandler(model_dir, model_prefix='m', monitor=est.val_metrics[0],
                                  save_best=True, mode='max', max_checkpoints=2, verbose=1)
    est.fit(train, val_data=val, epochs=3, event_handlers=[handler])
    with open(os.path.join(model_dir, 'm-symbol.json')) as f:
        symbol = f.read()
    return outcome(folder, [], lines, net, files=sorted(os.listdir(model_dir)), symbol=symbol,
                   best=float(handler.best))


def checkpoints_by_batch(folder):
    """Every three batches of seven, not hybridized (no symbol file: logged)."""
    train, _ = problem()
    net = network()
    est, lines = estimator(net)
    model_dir = os.path.join(folder, 'batches')
    handler = E.CheckpointHandler(model_dir, epoch_period=None, batch_period=3,
                                  max_checkpoints=5)
    est.fit(train, batches=7, event_handlers=[handler])
    return outcome(folder, [], lines, net,
                   files=sorted(os.listdir(model_dir)))


def resume(folder):
    """Two epochs saved, then a new estimator resumes from them to train four in all."""
    train, _ = problem()
    model_dir = os.path.join(folder, 'resume')
    net = network()
    est, _ = estimator(net)
    est.fit(train, epochs=2, event_handlers=[E.CheckpointHandler(model_dir)])
    net = network()
    est, lines = estimator(net)
    log = []
    est.fit(train, epochs=4, event_handlers=[
        E.CheckpointHandler(model_dir, resume_from_checkpoint=True),
        Recorder(log, 'rec', est.train_metrics)])
    return outcome(folder, log, lines, net, files=sorted(os.listdir(model_dir)),
                   max_epoch=est.max_epoch)


def evaluate_only(folder):
    """evaluate() with a recorder, twice (the metrics are reset)."""
    _, val = problem()
    net = network()
    est, lines = estimator(net)
    log = []
    for _ in range(2):
        est.evaluate(val, event_handlers=[Recorder(log, 'val', est.val_metrics)])
    return outcome(folder, log, lines, net)


def default_metrics(folder):
    """The metrics an estimator makes for a loss, and given ones."""
    net = network()
    l2 = E.Estimator(net, gluon.loss.L2Loss(), trainer=gluon.Trainer(
        net.collect_params(), 'sgd'))
    given = E.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(),
                        train_metrics=[mx.metric.Accuracy(), mx.metric.TopKAccuracy(2)],
                        trainer=gluon.Trainer(net.collect_params(), 'sgd'))
    composite = E.Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(),
                            train_metrics=mx.metric.CompositeEvalMetric(
                                [mx.metric.Accuracy(), mx.metric.F1()]),
                            val_metrics=mx.metric.MAE(),
                            trainer=gluon.Trainer(net.collect_params(), 'sgd'))
    return {name: [[m.name for m in e.train_metrics], [m.name for m in e.val_metrics]]
            for name, e in (('l2', l2), ('given', given), ('composite', composite))}


SCENARIOS = ['fit_epochs', 'fit_batches', 'stop_from_handler', 'handler_order',
             'early_stopping', 'early_stopping_baseline', 'checkpoints',
             'checkpoints_by_batch', 'resume', 'evaluate_only', 'default_metrics']
'''

PUBLIC = ['Estimator', 'BatchProcessor', 'StoppingHandler', 'MetricHandler', 'ValidationHandler',
          'LoggingHandler', 'CheckpointHandler', 'EarlyStoppingHandler',
          'GradientUpdateHandler']
METHODS = [('Estimator', 'fit'), ('Estimator', 'evaluate'), ('BatchProcessor', 'fit_batch'),
           ('BatchProcessor', 'evaluate_batch')]


def main():
    names = dict(np=np, mx=mx, gluon=gluon, nd=nd, E=E)
    exec(BUILDERS, names)   # noqa: S102 - our own source
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for scenario in names['SCENARIOS']:
            with tempfile.TemporaryDirectory() as folder, mx.name.NameManager():
                results[scenario] = names[scenario](folder)
    signatures = {name: str(inspect.signature(getattr(E, name).__init__)) for name in PUBLIC}
    signatures.update({f'{c}.{m}': str(inspect.signature(getattr(getattr(E, c), m)))
                       for c, m in METHODS})
    out = {'builders': BUILDERS, 'results': results, 'signatures': signatures,
           'all': {'estimator': E.estimator.__all__, 'event_handler': E.event_handler.__all__,
                   'batch_processor': E.batch_processor.__all__}}
    with open(os.path.join(OUT, 'contrib_estimator.json'), 'w') as f:
        json.dump(out, f, indent=1)


if __name__ == '__main__':
    main()
