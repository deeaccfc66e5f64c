"""Training callbacks for Jupyter notebooks (MXNet 1.9.1's ``mxnet.notebook.callback``).

``PandasLogger`` collects the metrics of a ``Module.fit`` run into pandas DataFrames;
``LiveLearningCurve`` and ``LiveTimeSeries`` draw live bokeh charts in a notebook;
``args_wrapper`` merges the callback arguments of several such objects for ``fit``.

pandas and bokeh are optional. MXNet imports them when ``mxnet`` is imported; here they are
imported on first use, so ``import hybridlib`` stays fast. The module attributes ``pd`` and
``bokeh`` are there as in MXNet: the package, or MXNet's stand-in class
(``Pandas_Failed_To_Import``, ``Bokeh_Failed_To_Import``) where it is not installed; a
callback that needs a missing package raises an ImportError that names it.

Differences from MXNet 1.9.1:

* ``PandasLogger.epoch_cb`` takes (and ignores) the arguments that ``fit`` passes to an
  epoch-end callback; MXNet's takes none, so ``fit(**logger.callback_args())`` fails there
  with a TypeError after the first epoch.
* New columns are added in the order of the metrics (MXNet adds them in the order of a set,
  which changes from run to run).
* The charts use bokeh's current API (``figure``, ``legend_label``, ``scatter``); MXNet's
  calls (``Figure``, ``legend=``) were removed in bokeh 3. ``LiveTimeSeries`` plots a value
  only when one is given (MXNet's ``batch_cb`` called ``update_chart_data()`` without the
  value it requires), and ``LiveLearningCurve`` switches from a dotted line to points once
  it has more than 10 training points (MXNet compared the number of columns, so never did).
"""
import datetime
import time
from collections import defaultdict

# ``pd`` is left out: ``import *`` would import pandas
__all__ = ['PandasLogger', 'LiveBokehChart', 'LiveTimeSeries', 'LiveLearningCurve',
           'args_wrapper', 'Pandas_Failed_To_Import']


class Pandas_Failed_To_Import:    # noqa: N801 - MXNet's name
    """What ``pd`` is when pandas cannot be imported."""


class Bokeh_Failed_To_Import:     # noqa: N801 - MXNet's name
    """What ``bokeh`` is when bokeh cannot be imported."""


def _import_pandas():
    try:
        import pandas
    except ImportError:
        return Pandas_Failed_To_Import
    return pandas


def _import_bokeh():
    try:
        import bokeh
        import bokeh.io
        import bokeh.plotting
    except ImportError:
        return Bokeh_Failed_To_Import
    return bokeh


# lazy module attributes: name -> (importer, what it stands for when missing)
_LAZY = {'pd': (_import_pandas, Pandas_Failed_To_Import),
         'bokeh': (_import_bokeh, Bokeh_Failed_To_Import)}


def __getattr__(name):
    if name in _LAZY:
        module = _LAZY[name][0]()
        globals()[name] = module        # imported once
        return module
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def _require(name, package, user):
    """The module attribute ``name`` (``pd``, ``bokeh``), or an ImportError for ``user``."""
    module = globals()[name] if name in globals() else __getattr__(name)
    if module is _LAZY[name][1]:
        raise ImportError(f'{user} needs {package}, which cannot be imported; install it '
                          f'(pip install {package})')
    return module


def _add_new_columns(dataframe, metrics):
    """Add a column (of None) to ``dataframe`` for each key of ``metrics`` it lacks."""
    for col in metrics:
        if col not in dataframe.columns:
            dataframe[col] = None


def _extend(base_data, new_data):
    """Append the end of ``new_data`` (what ``base_data``, the shorter, lacks) to
    ``base_data``."""
    base_data.extend(new_data[len(base_data):])


class PandasLogger:
    """Logs the statistics of a training run into three pandas DataFrames: ``train`` (every
    ``frequent`` batches), ``eval`` (each evaluation) and ``epoch`` (timing).

    A row of ``train`` or ``eval`` holds the metric values (the metric is reset after they
    are read), ``batches_per_sec`` (MXNet's name for batches per second times
    ``batch_size``), ``records_per_sec`` (MXNet's name for the batches per second),
    ``elapsed`` (a timedelta since the logger was made), ``minibatch_count`` and ``epoch``.

    Parameters
    ----------
    batch_size : int
        The batch size of the data.
    frequent : int, default 50
        Log a training row every ``frequent`` batches.

    Examples
    --------
    >>> logger = PandasLogger(batch_size=32)
    >>> mod.fit(train, eval_data=val, num_epoch=2, **logger.callback_args())
    >>> logger.train_df.tail()
    """

    def __init__(self, batch_size, frequent=50):
        pandas = _require('pd', 'pandas', 'PandasLogger')
        self.batch_size = batch_size
        self.frequent = frequent
        self._dataframes = {
            'train': pandas.DataFrame(),
            'eval': pandas.DataFrame(),
            'epoch': pandas.DataFrame(),
        }
        self.last_time = time.time()
        self.start_time = datetime.datetime.now()
        self.last_epoch_time = datetime.datetime.now()

    @property
    def train_df(self):
        """The training metrics, one row every ``frequent`` batches."""
        return self._dataframes['train']

    @property
    def eval_df(self):
        """The validation metrics, one row per evaluation (each epoch)."""
        return self._dataframes['eval']

    @property
    def epoch_df(self):
        """The timing of each epoch (``elapsed``, ``epoch_time``)."""
        return self._dataframes['epoch']

    @property
    def all_dataframes(self):
        """The dict of the three DataFrames (``train``, ``eval``, ``epoch``)."""
        return self._dataframes

    def elapsed(self):
        """The time since the logger was made (a ``datetime.timedelta``)."""
        return datetime.datetime.now() - self.start_time

    def append_metrics(self, metrics, df_name):
        """Append ``metrics`` (a dict of column to value) as a row of DataFrame ``df_name``,
        adding the columns it lacks."""
        dataframe = self._dataframes[df_name]
        _add_new_columns(dataframe, metrics)
        dataframe.loc[len(dataframe)] = metrics

    def train_cb(self, param):
        """The batch-end callback: a ``train`` row every ``frequent`` batches."""
        if param.nbatch % self.frequent == 0:
            self._process_batch(param, 'train')

    def eval_cb(self, param):
        """The evaluation-end callback: an ``eval`` row."""
        self._process_batch(param, 'eval')

    def _process_batch(self, param, dataframe):
        """Append a row of ``param``'s metrics (then reset) and speed to ``dataframe``."""
        now = time.time()
        if param.eval_metric is not None:
            metrics = dict(param.eval_metric.get_name_value())
            param.eval_metric.reset()
        else:
            metrics = {}
        try:
            speed = self.frequent / (now - self.last_time)
        except ZeroDivisionError:
            speed = float('inf')
        metrics['batches_per_sec'] = speed * self.batch_size
        metrics['records_per_sec'] = speed
        metrics['elapsed'] = self.elapsed()
        metrics['minibatch_count'] = param.nbatch
        metrics['epoch'] = param.epoch
        self.append_metrics(metrics, dataframe)
        self.last_time = now

    def epoch_cb(self, *_fit_args):
        """The epoch-end callback: an ``epoch`` row with ``elapsed`` and ``epoch_time``
        (``fit``'s arguments, epoch, symbol and parameters, are not used)."""
        metrics = {}
        metrics['elapsed'] = self.elapsed()
        now = datetime.datetime.now()
        metrics['epoch_time'] = now - self.last_epoch_time
        self.append_metrics(metrics, 'epoch')
        self.last_epoch_time = now

    def callback_args(self):
        """The keyword arguments of ``fit`` that install the three callbacks:
        ``mod.fit(train, eval_data=val, **logger.callback_args())``."""
        return {
            'batch_end_callback': self.train_cb,
            'eval_end_callback': self.eval_cb,
            'epoch_end_callback': self.epoch_cb,
        }


class LiveBokehChart:
    """The base of the live bokeh charts: a chart shown in the notebook and pushed again
    every ``display_freq`` seconds of training and after each evaluation.

    Sub-classes define ``setup_chart`` (draw, return the notebook handle) and
    ``update_chart_data``.

    Parameters
    ----------
    pandas_logger : PandasLogger, optional
        Where the data comes from (a new one by default).
    metric_name : str
        The metric to draw.
    display_freq : float, default 10
        Seconds between two pushes of the chart during training.
    batch_size : int, optional
        The new PandasLogger's batch size.
    frequent : int, default 50
        The new PandasLogger's ``frequent``.
    """

    def __init__(self, pandas_logger, metric_name, display_freq=10, batch_size=None,
                 frequent=50):
        bokeh = _require('bokeh', 'bokeh', type(self).__name__)
        if pandas_logger:
            self.pandas_logger = pandas_logger
        else:
            self.pandas_logger = PandasLogger(batch_size=batch_size, frequent=frequent)
        self.display_freq = display_freq
        self.last_update = time.time()
        self.metric_name = metric_name
        bokeh.io.output_notebook()
        self.handle = self.setup_chart()

    def setup_chart(self):
        """Draw the chart and return its notebook handle."""
        raise NotImplementedError('Incomplete base class: LiveBokehChart must be sub-classed')

    def update_chart_data(self):
        """Bring the chart's data up to date."""
        raise NotImplementedError('Incomplete base class: LiveBokehChart must be sub-classed')

    def interval_elapsed(self):
        """Whether ``display_freq`` seconds have passed since the last push."""
        return time.time() - self.last_update > self.display_freq

    def _push_render(self):
        """Push the chart to the notebook."""
        _require('bokeh', 'bokeh', type(self).__name__).io.push_notebook(handle=self.handle)
        self.last_update = time.time()

    def _do_update(self):
        """Update the data and push the chart."""
        self.update_chart_data()
        self._push_render()

    def batch_cb(self, param):
        """The batch-end callback: update when ``display_freq`` has passed."""
        if self.interval_elapsed():
            self._do_update()

    def eval_cb(self, param):
        """The evaluation-end callback: always update."""
        self._do_update()

    def callback_args(self):
        """The keyword arguments of ``fit`` that install the callbacks."""
        return {
            'batch_end_callback': self.batch_cb,
            'eval_end_callback': self.eval_cb,
        }


class LiveTimeSeries(LiveBokehChart):
    """A line of values against the time since the chart was made; add a value with
    ``update_chart_data(value)``.

    Parameters
    ----------
    **fig_params
        Arguments of ``bokeh.plotting.figure`` (``title``, ``width``, ...).
    """

    def __init__(self, **fig_params):
        bokeh = _require('bokeh', 'bokeh', 'LiveTimeSeries')
        self.fig = bokeh.plotting.figure(x_axis_type='datetime', x_axis_label='Elapsed time',
                                         **fig_params)
        super().__init__(None, None)

    def setup_chart(self):
        self.start_time = datetime.datetime.now()
        self.x_axis_val = []
        self.y_axis_val = []
        self.line = self.fig.line(self.x_axis_val, self.y_axis_val)
        return _require('bokeh', 'bokeh', 'LiveTimeSeries').plotting.show(
            self.fig, notebook_handle=True)

    def elapsed(self):
        """The time since the chart was made (a ``datetime.timedelta``)."""
        return datetime.datetime.now() - self.start_time

    def update_chart_data(self, value=None):
        """Add ``value`` at the current time (nothing without one) and push the chart."""
        if value is not None:
            self.x_axis_val.append(self.elapsed())
            self.y_axis_val.append(value)
            self.line.data_source.data = {'x': list(self.x_axis_val),
                                          'y': list(self.y_axis_val)}
        self._push_render()


class LiveLearningCurve(LiveBokehChart):
    """A learning curve: the training metric (every ``frequent`` batches) and the validation
    metric (each evaluation) against the training time.

    Parameters
    ----------
    metric_name : str
        The metric to draw (as the metric names it: ``accuracy``, ``mse``, ...).
    display_freq : float, default 10
        Seconds between two pushes of the chart during training.
    frequent : int, default 50
        Record the training metric every ``frequent`` batches.
    """

    def __init__(self, metric_name, display_freq=10, frequent=50):
        self.frequent = frequent
        self.start_time = datetime.datetime.now()
        self._data = {
            'train': {'elapsed': []},
            'eval': {'elapsed': []},
        }
        # MXNet passes ``frequent`` where the base class takes batch_size; kept as it is
        super().__init__(None, metric_name, display_freq, frequent)

    def setup_chart(self):
        bokeh = _require('bokeh', 'bokeh', 'LiveLearningCurve')
        self.fig = bokeh.plotting.figure(x_axis_type='datetime', x_axis_label='Training time')
        self.x_axis_val1 = []
        self.y_axis_val1 = []
        self.train1 = self.fig.line(self.x_axis_val1, self.y_axis_val1, line_dash='dotted',
                                    alpha=0.3, legend_label='train')
        self.train2 = self.fig.scatter(self.x_axis_val1, self.y_axis_val1, marker='circle',
                                       size=1.5, line_alpha=0.3, fill_alpha=0.3,
                                       legend_label='train')
        self.train2.visible = False     # shown instead of the line once there is more data
        self.x_axis_val2 = []
        self.y_axis_val2 = []
        self.valid1 = self.fig.line(self.x_axis_val2, self.y_axis_val2, line_color='green',
                                    line_width=2, legend_label='validation')
        self.valid2 = self.fig.scatter(self.x_axis_val2, self.y_axis_val2, marker='circle',
                                       line_color='green', line_width=2)
        self.fig.legend.location = 'bottom_right'
        self.fig.yaxis.axis_label = self.metric_name
        return bokeh.plotting.show(self.fig, notebook_handle=True)

    def _do_update(self):
        self.update_chart_data()
        self._push_render()

    def batch_cb(self, param):
        """The batch-end callback: record every ``frequent`` batches, push every
        ``display_freq`` seconds."""
        if param.nbatch % self.frequent == 0:
            self._process_batch(param, 'train')
        if self.interval_elapsed():
            self._do_update()

    def eval_cb(self, param):
        """The evaluation-end callback: record and push."""
        self._process_batch(param, 'eval')
        self._do_update()

    def _process_batch(self, param, df_name):
        """Record ``param``'s metrics (then reset them) and the time in ``df_name``."""
        if param.eval_metric is not None:
            metrics = dict(param.eval_metric.get_name_value())
            param.eval_metric.reset()
        else:
            metrics = {}
        metrics['elapsed'] = datetime.datetime.now() - self.start_time
        for key, value in metrics.items():
            self._data[df_name].setdefault(key, []).append(value)

    def update_chart_data(self):
        """Copy the recorded points into the chart's data sources."""
        train = self._data['train']
        if train['elapsed']:
            _extend(self.x_axis_val1, train['elapsed'])
            _extend(self.y_axis_val1, train[self.metric_name])
            points = {'x': list(self.x_axis_val1), 'y': list(self.y_axis_val1)}
            self.train1.data_source.data = points
            self.train2.data_source.data = dict(points)
        valid = self._data['eval']
        if valid['elapsed']:
            _extend(self.x_axis_val2, valid['elapsed'])
            _extend(self.y_axis_val2, valid[self.metric_name])
            points = {'x': list(self.x_axis_val2), 'y': list(self.y_axis_val2)}
            self.valid1.data_source.data = points
            self.valid2.data_source.data = dict(points)
        if len(train['elapsed']) > 10:
            self.train1.visible = False
            self.train2.visible = True


def args_wrapper(*args):
    """The keyword arguments of ``fit`` for several callback objects (``PandasLogger``,
    ``LiveLearningCurve``, ...): each argument gets the list of their callbacks.

    Examples
    --------
    >>> mod.fit(train, eval_data=val, num_epoch=2, **args_wrapper(logger, curve))
    """
    out = defaultdict(list)
    for callback in args:
        for key, value in callback.callback_args().items():
            out[key].append(value)
    return dict(out)
