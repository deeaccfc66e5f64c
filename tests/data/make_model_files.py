"""Writes tests/data/model-*: MXNet 1.9.1's checkpoints, callback logs and Monitor statistics.

Run with the MXNet oracle, from the repository root::

    .oracle/bin/python tests/data/make_model_files.py

The networks, their parameter values and the scenarios are the functions of this file that
take the ``mx`` module: run here with ``mxnet``, and by tests/test_model.py,
tests/test_callback.py and tests/test_monitor.py with ``hybridlib`` (the same source, as a
drop-in user would run it). Files:

* ``model-mlp-symbol.json``, ``model-mlp-0002.params``: ``mx.model.save_checkpoint`` of
  ``mlp`` (FullyConnected, relu, FullyConnected, SoftmaxOutput) with ``params_for``'s values;
* ``model-bn-symbol.json``, ``model-bn-0001.params``: the same for ``bn_net`` (with a
  BatchNorm, so the file holds ``aux:`` states too);
* ``model-logs.json``: the log records (level, message) of each callback scenario
  (``callback_logs``; speeds masked as ``<speed>``, the scratch folder as ``<dir>``) and of
  each Monitor scenario (``monitor_logs``: forward only, or forward and backward, on ``mlp``,
  ``bn_net`` and ``bn_flatten_net``).
"""
import contextlib
import json
import logging
import os
import re
import shutil
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_SHAPE = (3, 5)
MLP_EPOCH = 2
BN_EPOCH = 1


def wave(shape, offset=0.0, low=-1.0, high=1.0, step=1.3):
    """Distinct smooth float32 values in [low, high] of ``shape``."""
    n = int(np.prod(shape))
    unit = (np.sin(np.arange(n) * step + offset) + 1) / 2
    return (low + (high - low) * unit).reshape(shape).astype(np.float32)


def mlp(mx):
    """data (3, 5) -> fc1 (4) -> relu1 -> fc2 (3) -> softmax (SoftmaxOutput)."""
    x = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc1')
    x = mx.sym.Activation(x, act_type='relu', name='relu1')
    x = mx.sym.FullyConnected(x, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(x, name='softmax')


def bn_net(mx):
    """data (3, 5) -> fc1 (4) -> bn1 (BatchNorm) -> relu1 -> fc2 (3) -> softmax."""
    x = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc1')
    x = mx.sym.BatchNorm(x, name='bn1')
    x = mx.sym.Activation(x, act_type='relu', name='relu1')
    x = mx.sym.FullyConnected(x, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(x, name='softmax')


def bn_flatten_net(mx):
    """data (3, 5) -> reshape (3, 5, 1) -> bn1 (BatchNorm) -> relu1 -> flat (Flatten) -> fc2 (3)
    -> softmax."""
    x = mx.sym.Reshape(mx.sym.var('data'), shape=(3, 5, 1), name='rs')
    x = mx.sym.BatchNorm(x, fix_gamma=False, name='bn1')
    x = mx.sym.Activation(x, act_type='relu', name='relu1')
    x = mx.sym.Flatten(x, name='flat')
    x = mx.sym.FullyConnected(x, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(x, name='softmax')


NETWORKS = {'mlp': mlp, 'bn': bn_net, 'bn_flatten': bn_flatten_net}


def params_for(mx, symbol):
    """(arg_params, aux_params): deterministic NDArrays for the parameters of ``symbol``
    (not ``data`` or the label); moving variances positive."""
    arg_shapes, _, aux_shapes = symbol.infer_shape(data=DATA_SHAPE)
    args = {}
    for i, (name, shape) in enumerate(zip(symbol.list_arguments(), arg_shapes)):
        if name not in ('data', 'softmax_label'):
            args[name] = mx.nd.array(wave(shape, offset=i))
    aux = {}
    for i, (name, shape) in enumerate(zip(symbol.list_auxiliary_states(), aux_shapes)):
        low = 0.5 if name.endswith('var') else -1.0
        aux[name] = mx.nd.array(wave(shape, offset=10 + i, low=low))
    return args, aux


def inputs():
    """data and label of one batch."""
    return wave(DATA_SHAPE, 0.3, -2.0, 2.0, step=2.9), np.array([0, 2, 1], np.float32)


# -------------------------------------------------------------------------------------------------
# Log capture
# -------------------------------------------------------------------------------------------------

class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append([record.levelname, record.getMessage()])


@contextlib.contextmanager
def captured_logs():
    """The root logger's records (at INFO and above) while the block runs, as a list of
    [level, message]."""
    handler = _Records()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield handler.records
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def mask_speed(message):
    """A Speedometer message with its measured speed replaced by ``<speed>``."""
    return re.sub(r'Speed: (?:[0-9]+\.[0-9]{2}|inf)', 'Speed: <speed>', message)


# -------------------------------------------------------------------------------------------------
# Callback scenarios
# -------------------------------------------------------------------------------------------------

def _batches(mx, metric, nbatches, epoch=0):
    """BatchEndParams of one epoch, the metric updated with a fixed batch before each."""
    labels = mx.nd.array([0, 1, 2, 1])
    for nbatch in range(nbatches):
        preds = mx.nd.array(wave((4, 3), nbatch, 0.0, 1.0))
        metric.update([labels], [preds])
        yield mx.model.BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=metric,
                                     locals={'nbatch': nbatch})


def _run_batch_callback(mx, callback, metric_name, nbatches=7, epochs=2):
    metric = mx.metric.create(metric_name) if metric_name else None
    for epoch in range(epochs):
        if metric is not None:
            metric.reset()
        for param in _batches(mx, metric or mx.metric.Accuracy(), nbatches, epoch):
            callback(param._replace(eval_metric=metric))


class _FakeModule:
    """Records the ``save_checkpoint`` calls that ``module_checkpoint`` makes."""

    def __init__(self):
        self.calls = []

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False):
        self.calls.append([prefix, epoch, save_optimizer_states])


def callback_scenarios(mx, folder):
    """{name: function()} of the callback scenarios; files go under ``folder``."""
    cb = mx.callback
    symbol = mlp(mx)
    args, aux = params_for(mx, symbol)

    def checkpoints():
        callback = cb.do_checkpoint(os.path.join(folder, 'cb'), period=2)
        for epoch in range(5):
            callback(epoch, symbol, args, aux)
        return sorted(os.listdir(folder))

    def module_checkpoints():
        mod = _FakeModule()
        callback = cb.module_checkpoint(mod, 'prefix', period=3, save_optimizer_states=True)
        for epoch in range(7):
            callback(epoch)
        return mod.calls

    def empty_params():
        mx.nd.save(os.path.join(folder, 'empty-0003.params'), {})
        arg, aux_ = mx.model.load_params(os.path.join(folder, 'empty'), 3)
        return [sorted(arg), sorted(aux_)]

    scenarios = {
        'log_train_metric': lambda: _run_batch_callback(
            mx, cb.log_train_metric(3), 'acc'),
        'log_train_metric_reset': lambda: _run_batch_callback(
            mx, cb.log_train_metric(2, auto_reset=True), 'acc'),
        'log_train_metric_composite': lambda: _run_batch_callback(
            mx, cb.log_train_metric(3), ['acc', 'ce']),
        'speedometer': lambda: _run_batch_callback(mx, cb.Speedometer(4, frequent=2), 'acc'),
        'speedometer_no_reset': lambda: _run_batch_callback(
            mx, cb.Speedometer(4, 3, auto_reset=False), 'acc'),
        'speedometer_composite': lambda: _run_batch_callback(
            mx, cb.Speedometer(2, 3), ['acc', 'ce']),
        'speedometer_no_metric': lambda: _run_batch_callback(
            mx, cb.Speedometer(4, 2), None),
        'progress_bar': lambda: _run_batch_callback(mx, cb.ProgressBar(6, length=10), 'acc',
                                                    epochs=1),
        'progress_bar_default': lambda: _run_batch_callback(mx, cb.ProgressBar(7), 'acc',
                                                            epochs=1),
        'validation': lambda: _run_batch_callback(
            mx, cb.LogValidationMetricsCallback(), ['acc', 'ce'], nbatches=2),
        'validation_no_metric': lambda: _run_batch_callback(
            mx, cb.LogValidationMetricsCallback(), None, nbatches=2),
        'do_checkpoint': checkpoints,
        'module_checkpoint': module_checkpoints,
        'load_params_empty': empty_params,
    }
    return scenarios


def callback_logs(mx):
    """{scenario: {'logs': [[level, message], ...], 'result': what it returned}}."""
    results = {}
    folder = tempfile.mkdtemp(prefix='model-callbacks-')
    try:
        for name, run in callback_scenarios(mx, folder).items():
            with captured_logs() as records:
                result = run()
            logs = [[level, mask_speed(msg).replace(folder, '<dir>')] for level, msg in records]
            results[name] = {'logs': logs, 'result': result}
    finally:
        shutil.rmtree(folder)
    return results


# -------------------------------------------------------------------------------------------------
# Monitor scenarios
# -------------------------------------------------------------------------------------------------

def bound_executor(mx, symbol):
    """``symbol`` bound (simple_bind, for training) with ``params_for``'s values and a batch."""
    exe = symbol.simple_bind(mx.cpu(), data=DATA_SHAPE)
    args, aux = params_for(mx, symbol)
    exe.copy_params_from(args, aux)
    data, label = inputs()
    exe.arg_dict['data'][:] = data
    exe.arg_dict['softmax_label'][:] = label
    return exe


MONITORS = {
    # name: (network, Monitor keyword arguments, steps, run backward)
    'default': ('mlp', dict(interval=1), 1, False),
    'monitor_all': ('mlp', dict(interval=1, monitor_all=True), 1, False),
    'pattern_sorted': ('mlp', dict(interval=1, pattern='.*weight|.*output', sort=True), 1,
                       False),
    'interval': ('mlp', dict(interval=2, pattern='fc2.*'), 5, False),
    'vector_stat': ('mlp', dict(interval=1, pattern='fc.*', stat='vector'), 1, False),
    'list_stat': ('mlp', dict(interval=1, pattern='.*output', stat='list'), 1, False),
    'with_backward': ('mlp', dict(interval=1), 1, True),
    'with_backward_all': ('mlp', dict(interval=1, monitor_all=True), 1, True),
    'batchnorm': ('bn', dict(interval=1), 1, False),
    'batchnorm_backward': ('bn', dict(interval=1), 1, True),
    'batchnorm_backward_all': ('bn', dict(interval=1, monitor_all=True), 1, True),
    'bn_flatten_backward': ('bn_flatten', dict(interval=1), 2, True),
    'bn_flatten_backward_all': ('bn_flatten', dict(interval=1, monitor_all=True), 1, True),
}


def _stat(mx, kind):
    if kind == 'vector':
        return lambda x: mx.nd.mean(mx.nd.abs(x), axis=0)
    if kind == 'list':
        return lambda x: [mx.nd.max(x), mx.nd.min(x)]
    return None


def run_monitor(mx, name):
    """The log records of Monitor scenario ``name`` (``MONITORS``), as [level, message]."""
    network, kwargs, steps, backward = MONITORS[name]
    kwargs = dict(kwargs)
    stat = _stat(mx, kwargs.pop('stat', None))
    symbol = NETWORKS[network](mx)
    exe = bound_executor(mx, symbol)
    mon = mx.monitor.Monitor(stat_func=stat, **kwargs)
    mon.install(exe)
    with captured_logs() as records:
        for _ in range(steps):
            mon.tic()
            exe.forward(is_train=True)
            if backward:
                exe.backward()
            mon.toc_print()
    return records


def monitor_logs(mx):
    return {name: run_monitor(mx, name) for name in MONITORS}


# -------------------------------------------------------------------------------------------------

def main():
    import mxnet as mx
    for prefix, net, epoch in (('model-mlp', mlp, MLP_EPOCH), ('model-bn', bn_net, BN_EPOCH)):
        symbol = net(mx)
        args, aux = params_for(mx, symbol)
        mx.model.save_checkpoint(os.path.join(HERE, prefix), epoch, symbol, args, aux)
    logs = {'callbacks': callback_logs(mx), 'monitor': monitor_logs(mx)}
    with open(os.path.join(HERE, 'model-logs.json'), 'w', encoding='utf-8') as f:
        json.dump(logs, f, indent=1, sort_keys=True)
        f.write('\n')
    print('wrote the model-mlp and model-bn checkpoints and model-logs.json')


if __name__ == '__main__':
    main()
