"""``mx.notebook`` (hybridlib/notebook): PandasLogger against MXNet 1.9.1, the live bokeh charts,
and the optional packages (pandas, bokeh) imported on first use, with a clear ImportError.

tests/data/make_notebook_files.py holds the scenario (a Module.fit run with a PandasLogger);
run with MXNet (and pandas) it wrote tests/data/notebook-facts.json. Here the same function
runs on hybridlib. The bokeh charts are checked with bokeh when it is installed; its notebook
output (which needs IPython and a browser) is replaced by recorders.
"""
import importlib.util
import json
import os
import sys
from collections import namedtuple

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import notebook
from hybridlib.notebook import callback

DATA = os.path.join(os.path.dirname(__file__), 'data')
_spec = importlib.util.spec_from_file_location('make_notebook_files',
                                               os.path.join(DATA, 'make_notebook_files.py'))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)
with open(os.path.join(DATA, 'notebook-facts.json')) as _f:
    FACTS = json.load(_f)

Param = namedtuple('Param', ['epoch', 'nbatch', 'eval_metric'])


def _approx_frames(got, expected):
    assert sorted(got) == sorted(expected)
    for key, value in expected.items():
        if key in ('accuracy', 'cross-entropy'):
            assert got[key] == pytest.approx(value, rel=1e-5), key
        else:
            assert got[key] == value, key


def _approx_log(got, expected):
    assert [line.split('=')[0] for line in got] == [line.split('=')[0] for line in expected]
    assert [float(line.split('=')[1]) for line in got] == pytest.approx(
        [float(line.split('=')[1]) for line in expected], rel=1e-5, abs=2e-6, nan_ok=True)


@pytest.fixture
def pandas():
    return pytest.importorskip('pandas')


@pytest.fixture
def without(monkeypatch):
    """``without('pandas')``: the package cannot be imported, and nothing has cached it."""
    def hide(package, attribute):
        monkeypatch.setitem(sys.modules, package, None)
        monkeypatch.delitem(callback.__dict__, attribute, raising=False)
        monkeypatch.delitem(notebook.__dict__, attribute, raising=False)
    return hide


# -------------------------------------------------------------------------------------------------
# PandasLogger
# -------------------------------------------------------------------------------------------------

def test_pandas_logger_over_fit_matches_mxnet(pandas):
    facts = GEN.run_pandas_logger(mx)
    expected = FACTS['pandas_logger']
    assert sorted(facts) == sorted(expected)
    for name in ('train', 'eval', 'epoch'):
        _approx_frames(facts[name], expected[name])
    # the logger resets the metrics it reads: MXNet's validation lines read nan
    _approx_log(facts['log'], expected['log'])
    assert facts['same_frames'] == expected['same_frames']
    assert facts['callback_args'] == expected['callback_args']


def test_callback_args_install_all_three_callbacks_in_fit(pandas):
    x, y = GEN.classification_data(0, 16)
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(
        mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3), name='softmax'),
        logger=GEN.capture_logger('notebook-args'))
    logger = callback.PandasLogger(batch_size=8, frequent=1)
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=8), eval_data=mx.io.NDArrayIter(x, y, 8),
            num_epoch=3, **logger.callback_args())      # MXNet fails after epoch 0 here
    assert len(logger.train_df) == 6 and len(logger.eval_df) == 3
    assert list(logger.epoch_df.columns) == ['elapsed', 'epoch_time']
    assert len(logger.epoch_df) == 3
    assert all(t >= pandas.Timedelta(0) for t in logger.epoch_df['epoch_time'])
    assert logger.elapsed() >= logger.epoch_df['elapsed'].iloc[-1]


def test_append_metrics_adds_columns_in_the_order_given(pandas):
    logger = callback.PandasLogger(batch_size=4)
    logger.append_metrics({'b': 1, 'a': 2.5}, 'train')
    logger.append_metrics({'a': 3.5, 'c': 'x'}, 'train')
    df = logger.train_df
    assert list(df.columns) == ['b', 'a', 'c'] and len(df) == 2
    assert df['a'].tolist() == [2.5, 3.5] and df['c'].iloc[1] == 'x'
    assert df['b'].isna().tolist() == [False, True]


def test_train_cb_logs_every_frequent_batches_and_resets_the_metric(pandas):
    logger = callback.PandasLogger(batch_size=4, frequent=3)
    metric = mx.metric.Accuracy()
    for nbatch in range(7):
        metric.update([mx.nd.array([1, 0])], [mx.nd.array([[0.1, 0.9], [0.8, 0.2]])])
        logger.train_cb(Param(epoch=0, nbatch=nbatch, eval_metric=metric))
    assert logger.train_df['minibatch_count'].tolist() == [0, 3, 6]
    assert logger.train_df['accuracy'].tolist() == [1.0, 1.0, 1.0]
    assert metric.num_inst == 0
    logger.eval_cb(Param(epoch=2, nbatch=5, eval_metric=None))
    assert list(logger.eval_df.columns) == ['batches_per_sec', 'records_per_sec', 'elapsed',
                                            'minibatch_count', 'epoch']
    row = logger.eval_df.iloc[0]
    assert row['batches_per_sec'] == pytest.approx(4 * row['records_per_sec'])


def test_missing_pandas_is_named(without):
    without('pandas', 'pd')
    assert callback.pd is callback.Pandas_Failed_To_Import
    with pytest.raises(ImportError, match=r'PandasLogger needs pandas.*pip install pandas'):
        callback.PandasLogger(batch_size=8)


# -------------------------------------------------------------------------------------------------
# The module attributes
# -------------------------------------------------------------------------------------------------

def test_optional_packages_are_imported_on_first_use_only():
    import subprocess
    code = ('import sys, hybridlib, hybridlib.notebook as nb; '
            'print(sys.modules.get("pandas") is not None, sys.modules.get("bokeh") is not None, '
            '"bokeh" in dir(nb), "pd" in dir(nb.callback))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ['False', 'False', 'True', 'True']


def test_module_attributes_as_mxnet(without):
    bokeh = notebook.bokeh
    assert bokeh is callback.bokeh
    if bokeh is not notebook.Bokeh_Failed_To_Import:
        assert bokeh.__name__ == 'bokeh' and hasattr(bokeh, 'plotting')
    assert notebook.callback is callback
    with pytest.raises(AttributeError, match='no attribute'):
        notebook.missing_name
    without('bokeh', 'bokeh')
    assert notebook.bokeh is notebook.Bokeh_Failed_To_Import
    assert callback.bokeh is callback.Bokeh_Failed_To_Import


def test_missing_bokeh_is_named(without):
    without('bokeh', 'bokeh')
    with pytest.raises(ImportError, match=r'LiveLearningCurve needs bokeh.*pip install bokeh'):
        callback.LiveLearningCurve('accuracy')
    with pytest.raises(ImportError, match='LiveTimeSeries needs bokeh'):
        callback.LiveTimeSeries(title='loss')


def test_args_wrapper_collects_each_callback_kind():
    class Recorder:
        def __init__(self, kinds):
            self.kinds = kinds

        def callback_args(self):
            return {kind: (self, kind) for kind in self.kinds}

    first = Recorder(['batch_end_callback', 'eval_end_callback'])
    second = Recorder(['batch_end_callback'])
    assert callback.args_wrapper(first, second) == {
        'batch_end_callback': [(first, 'batch_end_callback'), (second, 'batch_end_callback')],
        'eval_end_callback': [(first, 'eval_end_callback')]}
    assert callback.args_wrapper() == {}


# -------------------------------------------------------------------------------------------------
# The live charts, with bokeh
# -------------------------------------------------------------------------------------------------

@pytest.fixture
def bokeh_notebook(monkeypatch):
    """Real bokeh figures; the notebook output recorded instead of sent to a browser."""
    bokeh = pytest.importorskip('bokeh')
    pytest.importorskip('bokeh.plotting')
    monkeypatch.delitem(callback.__dict__, 'bokeh', raising=False)
    calls = []
    monkeypatch.setattr(bokeh.io, 'output_notebook', lambda: calls.append('output_notebook'))
    monkeypatch.setattr(bokeh.plotting, 'show',
                        lambda fig, notebook_handle: calls.append(('show', fig)) or 'handle')
    monkeypatch.setattr(bokeh.io, 'push_notebook',
                        lambda handle: calls.append(('push', handle)))
    return calls


def test_live_learning_curve_draws_train_and_validation(bokeh_notebook, monkeypatch):
    curve = callback.LiveLearningCurve('accuracy', display_freq=1000, frequent=2)
    assert bokeh_notebook == ['output_notebook', ('show', curve.fig)]
    assert curve.handle == 'handle' and curve.fig.yaxis.axis_label == 'accuracy'
    assert [item.label['value'] for item in curve.fig.legend.items] == ['train', 'validation']
    metric = mx.metric.Accuracy()
    for nbatch in range(5):
        metric.update([mx.nd.array([1])], [mx.nd.array([[0.2, 0.8]])])
        curve.batch_cb(Param(epoch=0, nbatch=nbatch, eval_metric=metric))
    assert len(bokeh_notebook) == 2                 # display_freq has not passed
    assert curve._data['train']['accuracy'] == [1.0, 1.0, 1.0]
    metric.update([mx.nd.array([0])], [mx.nd.array([[0.2, 0.8]])])
    curve.eval_cb(Param(epoch=0, nbatch=3, eval_metric=metric))
    assert bokeh_notebook[-1] == ('push', 'handle')
    assert curve.train1.data_source.data['y'] == [1.0, 1.0, 1.0]
    assert curve.valid1.data_source.data['y'] == [0.0]
    assert len(curve.valid2.data_source.data['x']) == 1
    assert curve.train1.visible and not curve.train2.visible
    monkeypatch.setattr(curve, 'display_freq', -1)    # every batch pushes now
    for nbatch in range(0, 20, 2):
        curve.batch_cb(Param(epoch=1, nbatch=nbatch, eval_metric=metric))
    assert len(curve.train2.data_source.data['y']) == 13
    assert not curve.train1.visible and curve.train2.visible
    assert callback.args_wrapper(curve) == {'batch_end_callback': [curve.batch_cb],
                                            'eval_end_callback': [curve.eval_cb]}


def test_live_time_series_plots_the_values_given(bokeh_notebook):
    series = callback.LiveTimeSeries(title='loss', width=300)
    assert series.fig.title.text == 'loss' and series.fig.width == 300
    series.update_chart_data(0.5)
    series.update_chart_data(0.25)
    assert series.line.data_source.data['y'] == [0.5, 0.25]
    assert all(np.diff([t.total_seconds() for t in series.line.data_source.data['x']]) >= 0)
    series.batch_cb(Param(epoch=0, nbatch=0, eval_metric=None))   # display_freq not passed
    assert bokeh_notebook.count(('push', 'handle')) == 2
    series.eval_cb(Param(epoch=0, nbatch=0, eval_metric=None))    # pushes, adds nothing
    assert series.line.data_source.data['y'] == [0.5, 0.25]
    assert bokeh_notebook.count(('push', 'handle')) > 2


def test_live_bokeh_chart_is_a_base_class(bokeh_notebook):
    with pytest.raises(NotImplementedError, match='must be sub-classed'):
        callback.LiveBokehChart(None, 'accuracy', batch_size=8)
