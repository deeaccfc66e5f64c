"""``mx.callback``: callbacks for training loops (MXNet 1.9.1's ``callback.py``).

Epoch-end callbacks are called as ``callback(epoch, symbol, arg_params, aux_params)``;
batch-end callbacks get one ``model.BatchEndParam`` (``epoch``, ``nbatch``, ``eval_metric``,
``locals``). Messages go to the root logger with MXNet's wording, so logs read the same.
"""
import logging
import math
import time

from .model import save_checkpoint

__all__ = ['module_checkpoint', 'do_checkpoint', 'log_train_metric', 'Speedometer',
           'ProgressBar', 'LogValidationMetricsCallback']


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """Callback to checkpoint a Module to ``prefix`` every ``period`` epochs.

    Parameters
    ----------
    mod : subclass of BaseModule
        The module to checkpoint.
    prefix : str
        The file prefix for this checkpoint.
    period : int
        How many epochs to wait before checkpointing. Defaults to 1.
    save_optimizer_states : bool
        Indicates whether or not to save optimizer states for continued training.

    Returns
    -------
    callback : function
        The callback function that can be passed as ``epoch_end_callback`` to fit.
    """
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        """The checkpoint function."""
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def do_checkpoint(prefix, period=1):
    """A callback that saves a model checkpoint every ``period`` epochs.

    Each checkpoint is a model description file, ``prefix-symbol.json``, and a parameters
    file, ``prefix-EPOCH.params`` (``model.save_checkpoint``), EPOCH counting from 1.

    Parameters
    ----------
    prefix : str
        Prefix for the checkpoint filenames.
    period : int, optional
        Interval (number of epochs) between checkpoints. Default `period` is 1.

    Returns
    -------
    callback : function
        A callback function that can be passed as ``epoch_end_callback`` to fit.

    Example
    -------
    >>> module.fit(iterator, num_epoch=n_epoch,
    ... epoch_end_callback  = mx.callback.do_checkpoint("mymodel", 1))
    """
    period = int(max(1, period))

    def _callback(iter_no, sym, arg, aux):
        """The checkpoint function."""
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def log_train_metric(period, auto_reset=False):
    """Callback to log the training evaluation result every ``period`` batches.

    Parameters
    ----------
    period : int
        The number of batches between logs of the training evaluation metric.
    auto_reset : bool
        Reset the metric (``reset_local``) after each log.

    Returns
    -------
    callback : function
        The callback function that can be passed as ``batch_end_callback`` to fit.
    """
    def _callback(param):
        """Log the metric."""
        if param.nbatch % period == 0 and param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            for name, value in name_value:
                logging.info('Iter[%d] Batch[%d] Train-%s=%f',
                             param.epoch, param.nbatch, name, value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """Logs training speed and evaluation metrics periodically.

    Parameters
    ----------
    batch_size : int
        Batch size of data.
    frequent : int
        Specifies how frequently training speed and evaluation metrics must be logged.
        Default behavior is to log once every 50 batches.
    auto_reset : bool
        Reset the evaluation metrics (``reset_local``) after each log.

    Example
    -------
    >>> # Print training speed and evaluation metrics every ten batches. Batch size is one.
    >>> module.fit(iterator, num_epoch=n_epoch,
    ... batch_end_callback=mx.callback.Speedometer(1, 10))
    Epoch[0] Batch [0-10]   Speed: 1910.41 samples/sec  accuracy=0.200000
    Epoch[0] Batch [10-20]  Speed: 1764.83 samples/sec  accuracy=0.400000
    """

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.init = False
        self.tic = 0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param):
        """Callback to show speed."""
        count = param.nbatch
        if self.last_count > count:     # a new epoch: the first call only starts the clock
            self.init = False
        self.last_count = count

        if self.init:
            if count % self.frequent == 0:
                try:
                    speed = self.frequent * self.batch_size / (time.time() - self.tic)
                except ZeroDivisionError:   # a coarse clock (MXNet #11504)
                    speed = float('inf')
                if param.eval_metric is not None:
                    name_value = param.eval_metric.get_name_value()
                    if self.auto_reset:
                        param.eval_metric.reset_local()
                        msg = 'Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec'
                        msg += '\t%s=%f' * len(name_value)
                        logging.info(msg, param.epoch, count - self.frequent, count, speed,
                                     *sum(name_value, ()))
                    else:
                        msg = 'Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec'
                        msg += '\t%s=%f' * len(name_value)
                        logging.info(msg, param.epoch, count, speed, *sum(name_value, ()))
                else:
                    logging.info('Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec',
                                 param.epoch, count, speed)
                self.tic = time.time()
        else:
            self.init = True
            self.tic = time.time()


class ProgressBar:
    """Displays a progress bar, the share of batches processed within each epoch.

    Parameters
    ----------
    total : int
        Total number of batches per epoch.
    length : int
        Number of characters of the full bar.

    Examples
    --------
    >>> progress_bar = mx.callback.ProgressBar(total=2)
    >>> mod.fit(data, num_epoch=5, batch_end_callback=progress_bar)
    [========--------] 50.0%
    [================] 100.0%
    """

    def __init__(self, total, length=80):
        self.bar_len = length
        self.total = total

    def __call__(self, param):
        """Callback to show the progress bar."""
        count = param.nbatch
        filled_len = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        prog_bar = '=' * filled_len + '-' * (self.bar_len - filled_len)
        logging.info('[%s] %s%s\r', prog_bar, percents, '%')


class LogValidationMetricsCallback:
    """Logs the evaluation metrics at the end of an epoch."""

    def __call__(self, param):
        if not param.eval_metric:
            return
        name_value = param.eval_metric.get_name_value()
        for name, value in name_value:
            logging.info('Epoch[%d] Validation-%s=%f', param.epoch, name, value)
