"""``mx.callback`` against MXNet 1.9.1: the log records of every callback scenario of
tests/data/make_model_files.py (run there with MXNet into tests/data/model-logs.json) are
produced word for word here, speeds masked; checkpoints they write load back."""
import importlib.util
import json
import logging
import os
import re

import numpy as np
import pytest

import hybridlib as mx
import hybridlib.callback  # noqa: F401  (mx.callback before hybridlib/__init__.py imports it)
import hybridlib.model  # noqa: F401
from hybridlib import callback, model, nd

DATA = os.path.join(os.path.dirname(__file__), 'data')
_spec = importlib.util.spec_from_file_location(
    'make_model_files', os.path.join(DATA, 'make_model_files.py'))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)

with open(os.path.join(DATA, 'model-logs.json'), encoding='utf-8') as _f:
    REF = json.load(_f)['callbacks']


@pytest.fixture(scope='module')
def ours():
    return GEN.callback_logs(mx)


@pytest.mark.parametrize('scenario', sorted(REF))
def test_callback_logs_match_mxnet(ours, scenario):
    assert ours[scenario]['logs'] == REF[scenario]['logs']
    assert ours[scenario]['result'] == REF[scenario]['result']


def test_every_scenario_was_recorded(ours):
    assert sorted(ours) == sorted(REF)


def test_speed_is_logged_with_two_decimals(caplog):
    # the recorded logs mask the speed: check the unmasked text has MXNet's %.2f there
    speedometer = callback.Speedometer(batch_size=8, frequent=1)
    metric = mx.metric.Accuracy()
    with caplog.at_level(logging.INFO):
        for nbatch in range(3):
            speedometer(model.BatchEndParam(0, nbatch, metric, None))
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    for message in messages:
        assert re.fullmatch(r'Epoch\[0\] Batch \[\d-\d\]\tSpeed: (\d+\.\d\d|inf) samples/sec'
                            r'\taccuracy=nan', message), message


class _Clock:
    """Stands for the ``time`` module in callback.py: ``time()`` returns the given times."""

    def __init__(self, *times):
        self._times = iter(times)

    def time(self):
        return next(self._times)


def test_speedometer_reports_inf_when_no_time_passed(monkeypatch, caplog):
    monkeypatch.setattr(callback, 'time', _Clock(*[100.0] * 3))
    speedometer = callback.Speedometer(batch_size=4, frequent=2)
    with caplog.at_level(logging.INFO):
        for nbatch in range(3):
            speedometer(model.BatchEndParam(2, nbatch, None, None))
    assert [r.getMessage() for r in caplog.records] == [
        'Iter[2] Batch [2]\tSpeed: inf samples/sec']


def test_speedometer_measures_the_time_since_its_last_log(monkeypatch, caplog):
    # the start, then at batches 2 and 4 the time for the speed and the new start
    monkeypatch.setattr(callback, 'time', _Clock(10.0, 12.0, 12.0, 13.0, 13.0))
    speedometer = callback.Speedometer(batch_size=5, frequent=2)
    with caplog.at_level(logging.INFO):
        for nbatch in range(5):
            speedometer(model.BatchEndParam(0, nbatch, None, None))
    assert [r.getMessage() for r in caplog.records] == [
        'Iter[0] Batch [2]\tSpeed: 5.00 samples/sec',
        'Iter[0] Batch [4]\tSpeed: 10.00 samples/sec']


def test_do_checkpoint_files_load_back(tmp_path):
    symbol = GEN.mlp(mx)
    args, aux = GEN.params_for(mx, symbol)
    save = callback.do_checkpoint(str(tmp_path / 'run'), period=0)    # period 0 counts as 1
    save(0, symbol, args, aux)
    assert sorted(os.listdir(tmp_path)) == ['run-0001.params', 'run-symbol.json']
    loaded, arg_params, _ = model.load_checkpoint(str(tmp_path / 'run'), 1)
    assert loaded.tojson() == symbol.tojson()
    for name, value in args.items():
        np.testing.assert_array_equal(arg_params[name].asnumpy(), value.asnumpy())


def test_module_checkpoint_defaults():
    calls = []

    class Mod:
        def save_checkpoint(self, prefix, epoch, save_optimizer_states=False):
            calls.append((prefix, epoch, save_optimizer_states))
    save = callback.module_checkpoint(Mod(), 'p')
    save(0)
    save(1, None, {}, {})
    assert calls == [('p', 1, False), ('p', 2, False)]


def test_log_train_metric_skips_a_missing_metric(caplog):
    log = callback.log_train_metric(1)
    with caplog.at_level(logging.INFO):
        log(model.BatchEndParam(0, 0, None, None))
    assert caplog.records == []


def test_validation_callback_logs_the_metric_given(caplog):
    metric = mx.metric.Accuracy()
    metric.update([nd.array([1, 0])], [nd.array([[0.2, 0.8], [0.1, 0.9]])])
    with caplog.at_level(logging.INFO):
        callback.LogValidationMetricsCallback()(model.BatchEndParam(4, 0, metric, None))
    assert [r.getMessage() for r in caplog.records] == ['Epoch[4] Validation-accuracy=0.500000']
