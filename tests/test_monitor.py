"""``mx.monitor.Monitor`` and ``Executor.set_monitor_callback`` against MXNet 1.9.1: the
logs of the Monitor scenarios of tests/data/make_model_files.py (run there with MXNet into
tests/data/model-logs.json), line by line: the same steps and names in the same order, the
statistics equal to float32 rounding; forward and backward (MXNet's ``NODE_backward_outputI``
gradients), ``monitor_all`` off and on.

Known differences, each checked as such below: MXNet's BatchNorm writes 1 into gamma
(``fix_gamma``) in its forward, which hybridlib's does not; and it updates the moving statistics
in its backward where hybridlib's updates them in the forward, so after a forward alone they
differ (a backward reports them as the forward found them, as MXNet's does).
"""
import importlib.util
import json
import logging
import os
import re

import numpy as np
import pytest

import hybridlib as mx
import hybridlib.model  # noqa: F401  (the scenarios make BatchEndParams)
import hybridlib.monitor  # noqa: F401  (mx.monitor before hybridlib/__init__.py imports it)
from hybridlib import monitor, nd, sym
from hybridlib.base import MXNetAssertionError

DATA = os.path.join(os.path.dirname(__file__), 'data')
_spec = importlib.util.spec_from_file_location(
    'make_model_files', os.path.join(DATA, 'make_model_files.py'))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)

with open(os.path.join(DATA, 'model-logs.json'), encoding='utf-8') as _f:
    REF = json.load(_f)['monitor']

_LINE = re.compile(r'Batch: {1,7}(\d+) (\S+) +(.*)\t', re.S)
_NUMBER = re.compile(r'[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)')


def _parse(records):
    """[(step, name, [numbers])] of Monitor log records; the layout is checked on the way."""
    lines = []
    for level, message in records:
        assert level == 'INFO'
        match = _LINE.fullmatch(message)
        assert match, repr(message)
        step, name, stats = match.groups()
        # MXNet's '{:7d} {:30s} {:s}' layout
        assert message == 'Batch: {:7d} {:30s} {:s}'.format(int(step), name, stats + '\t')
        lines.append((int(step), name, [float(x) for x in _NUMBER.findall(stats)]))
    return lines


# float32 rounding of statistics of order 1 (a gradient that is 0 but for rounding, as a bias
# before a BatchNorm's, is a statistic of order 1e-7 in either)
RTOL, ATOL = 2e-6, 5e-7


def _assert_same(ours, expected):
    assert [(s, n, len(v)) for s, n, v in ours] == [(s, n, len(v)) for s, n, v in expected]
    for (step, name, got), (_, _, want) in zip(ours, expected):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=f'{step} {name}')


EXACT = ['default', 'pattern_sorted', 'interval', 'vector_stat', 'list_stat', 'monitor_all',
         'with_backward', 'with_backward_all', 'bn_flatten_backward', 'bn_flatten_backward_all']
# BatchNorm with fix_gamma: the names whose values differ (see the module docstring)
BATCHNORM = {'batchnorm': {'bn1_gamma', 'bn1_moving_mean', 'bn1_moving_var'},
             'batchnorm_backward': {'bn1_gamma'},
             'batchnorm_backward_all': {'bn1_gamma', 'bn1_backward_input4'}}


@pytest.mark.parametrize('scenario', EXACT)
def test_monitor_logs_match_mxnet(scenario):
    _assert_same(_parse(GEN.run_monitor(mx, scenario)), _parse(REF[scenario]))


def test_backward_reports_mxnets_backward_nodes():
    names = [n for _, n, _ in _parse(REF['with_backward'])]
    assert names[4:13] == ['softmax_backward_output0', 'softmax_backward_output1',
                           'fc2_backward_output0', 'fc2_backward_output1',
                           'fc2_backward_output2', 'relu1_backward_output',
                           'fc1_backward_output0', 'fc1_backward_output1',
                           'fc1_backward_output2']
    assert [n for _, n, _ in _parse(GEN.run_monitor(mx, 'with_backward'))] == names


@pytest.mark.parametrize('scenario', sorted(BATCHNORM))
def test_batchnorm_net_matches_mxnet_but_for_batchnorms_own_arrays(scenario):
    expected = _parse(REF[scenario])
    ours = _parse(GEN.run_monitor(mx, scenario))
    assert [(s, n) for s, n, _ in ours] == [(s, n) for s, n, _ in expected]
    differ = [(n, got, want) for (_, n, got), (_, _, want) in zip(ours, expected)
              if not np.allclose(got, want, rtol=RTOL, atol=ATOL)]
    assert {n for n, _, _ in differ} == BATCHNORM[scenario]
    # gamma: 1 in MXNet once its forward ran
    assert all(want == [1.0] for n, _, want in differ if n in ('bn1_gamma', 'bn1_backward_input4'))


def test_every_scenario_is_checked():
    assert set(EXACT) | set(BATCHNORM) == set(REF) == set(GEN.MONITORS)


# -------------------------------------------------------------------------------------------------
# The executor's callback
# -------------------------------------------------------------------------------------------------

def _executor():
    return GEN.bound_executor(mx, GEN.mlp(mx))


def test_callback_gets_bytes_names_and_ndarrays_in_execution_order():
    exe = _executor()
    seen = []
    exe.set_monitor_callback(lambda name, array: seen.append((name, array)))
    exe.forward(is_train=False)
    assert [(name, array.shape) for name, array in seen] == [
        (b'fc1_output', (3, 4)), (b'relu1_output', (3, 4)), (b'fc2_output', (3, 3)),
        (b'softmax_output', (3, 3))]
    assert all(isinstance(array, nd.NDArray) for _, array in seen)
    assert seen[-1][1] is exe.outputs[0]


def test_monitor_all_reports_variables_by_their_own_name_too():
    a, b = sym.var('a'), sym.var('b')
    out = sym.elemwise_add(a, sym.elemwise_mul(a, b, name='mul'), name='add')
    exe = out.bind(mx.cpu(), {'a': nd.array([1.0, 2.0]), 'b': nd.array([3.0, 4.0])})
    seen = []
    exe.set_monitor_callback(lambda name, array: seen.append((name, array.asnumpy().tolist())),
                             monitor_all=True)
    exe.forward()
    assert seen == [
        (b'a', [1.0, 2.0]), (b'mul_lhs', [1.0, 2.0]), (b'b', [3.0, 4.0]), (b'mul_rhs', [3.0, 4.0]),
        (b'mul_output', [3.0, 8.0]),
        (b'a', [1.0, 2.0]), (b'add_lhs', [1.0, 2.0]), (b'add_rhs', [3.0, 8.0]),
        (b'add_output', [4.0, 10.0])]


def test_monitoring_does_not_change_results_and_can_be_removed():
    plain = _executor()
    plain.forward(is_train=True)
    plain.backward()
    watched = _executor()
    seen = []
    watched.set_monitor_callback(lambda name, array: seen.append(name), monitor_all=True)
    watched.forward(is_train=True)
    watched.backward()
    for x, y in zip(plain.outputs + plain.grad_arrays, watched.outputs + watched.grad_arrays):
        np.testing.assert_array_equal(x.asnumpy(), y.asnumpy())
    count = len(seen)
    watched.set_monitor_callback(None)
    watched.forward()
    assert len(seen) == count


def test_backward_reports_the_gradients_it_computes():
    exe = _executor()
    seen = {}
    exe.set_monitor_callback(lambda name, array: seen.setdefault(name, array.asnumpy()))
    exe.forward(is_train=True)
    exe.backward()
    for name, gradient in (('fc1_backward_output1', 'fc1_weight'),
                           ('fc2_backward_output2', 'fc2_bias'),
                           ('fc1_backward_output0', 'data')):
        np.testing.assert_array_equal(seen[name.encode()], exe.grad_dict[gradient].asnumpy())
    # SoftmaxOutput gives its label no gradient: MXNet's second output is zeros
    assert not seen[b'softmax_backward_output1'].any()


def test_a_backward_without_monitor_builds_nothing_for_one():
    exe = _executor()
    exe.forward(is_train=True)
    exe.backward()
    assert exe._backward[4] is None     # no units, no extra gradients to compute
    seen = []
    exe.set_monitor_callback(lambda name, array: seen.append(name))
    exe.forward(is_train=True)
    exe.backward()
    assert b'relu1_backward_output' in seen
    count = len(seen)
    exe.set_monitor_callback(None)
    exe.forward(is_train=True)
    exe.backward()
    assert len(seen) == count


def test_unknown_variable_is_still_reported_as_missing():
    exe = sym.elemwise_add(sym.var('x'), sym.var('y')).bind(
        mx.cpu(), {'x': nd.ones((2,)), 'y': nd.ones((2,))})
    exe.set_monitor_callback(lambda name, array: None)
    assert exe.forward()[0].asnumpy().tolist() == [2.0, 2.0]


# -------------------------------------------------------------------------------------------------
# Monitor itself
# -------------------------------------------------------------------------------------------------

def test_toc_without_tic_returns_nothing():
    mon = monitor.Monitor(1)
    mon.install(_executor())
    assert mon.toc() == []


def test_default_statistic_is_the_root_mean_square():
    exe = _executor()
    mon = monitor.Monitor(1, pattern='fc1_weight')
    mon.install(exe)
    mon.tic()
    exe.forward()
    [(step, name, text)] = mon.toc()
    weight = exe.arg_dict['fc1_weight'].asnumpy().astype(np.float64)
    assert (step, name) == (1, 'fc1_weight')
    assert text.endswith('\t')
    assert float(text) == pytest.approx(np.sqrt(np.mean(weight ** 2)), rel=1e-6)


def test_one_monitor_watches_several_executors():
    first, second = _executor(), _executor()
    mon = monitor.Monitor(1, pattern='softmax_output')
    mon.install(first)
    mon.install(second)
    mon.tic()
    first.forward()
    second.forward()
    assert [name for _, name, _ in mon.toc()] == ['softmax_output', 'softmax_output']


def test_stat_func_must_return_ndarrays():
    exe = _executor()
    mon = monitor.Monitor(1, stat_func=lambda x: x.asnumpy(), pattern='fc1_output')
    mon.install(exe)
    mon.tic()
    exe.forward()
    with pytest.raises(AssertionError, match="for 'fc1_output' it returned ndarray"):
        mon.toc()
    assert issubclass(MXNetAssertionError, AssertionError)


def test_toc_print_logs_at_info(caplog):
    exe = _executor()
    mon = monitor.Monitor(1, pattern='softmax_label')
    mon.install(exe)
    mon.tic()
    exe.forward()
    with caplog.at_level(logging.INFO):
        mon.toc_print()
    [record] = caplog.records
    assert record.levelname == 'INFO'
    # the label is [0, 2, 1]: sqrt(5 / 3)
    assert re.fullmatch(r'Batch:       1 softmax_label {18}1\.29099\d+\t', record.getMessage())
