"""Event handlers of the Estimator (``gluon.contrib.estimator.event_handler``), as MXNet 1.9.1's.

A handler subclasses the mixins of the events it reacts to (``TrainBegin``, ``EpochBegin``,
``BatchBegin``, ``BatchEnd``, ``EpochEnd``, ``TrainEnd``); ``Estimator.fit`` calls each
handler's method for each event, the handlers sorted by ``priority`` (ascending; 0 without
one). ``batch_end`` and ``epoch_end`` return True to stop the training.

Where MXNet 1.9.1 had slips, these handlers do what MXNet meant: ``mode='auto'`` compares
accuracy and F1 monitors with ``greater`` and the others (losses) with ``less`` (MXNet used
``greater`` for all), and the verbose messages of ``CheckpointHandler`` show the previous best
value and the epoch.
"""
import os
import time
import warnings

import numpy as np

from ...base import MXNetAssertionError
from ...metric import CompositeEvalMetric, EvalMetric
from ...metric import Loss as metric_loss
from .utils import _check_metrics

__all__ = ['TrainBegin', 'TrainEnd', 'EpochBegin', 'EpochEnd', 'BatchBegin', 'BatchEnd',
           'StoppingHandler', 'MetricHandler', 'ValidationHandler',
           'LoggingHandler', 'CheckpointHandler', 'EarlyStoppingHandler', 'GradientUpdateHandler']


class EventHandler:
    """The base of the event mixins."""


def _check_event_handlers(handlers):
    """``handlers`` (a handler, a list, None) as a list: a list given is returned itself, so
    the default handlers that ``fit`` and ``evaluate`` add to it stay there for the next
    call, as in MXNet (a ValidationHandler's own list thus keeps one LoggingHandler, which
    counts the validations)."""
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = handlers or []
    if not isinstance(handlers, list):
        handlers = list(handlers)
    if not all(isinstance(handler, EventHandler) for handler in handlers):
        raise ValueError('handlers must be an EventHandler or a list of EventHandler, '
                         'got: {}'.format(handlers))
    return handlers


class TrainBegin(EventHandler):
    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    def batch_end(self, estimator, *args, **kwargs):
        return False


def _check(condition, message):
    """MXNet's ``assert``s, as an AssertionError that ``python -O`` keeps."""
    if not condition:
        raise MXNetAssertionError(message)


def _monitor_op(handler, monitor, mode):
    """``np.greater`` or ``np.less``: how ``monitor`` improves under ``mode`` ('auto': greater
    for accuracy and F1, less otherwise, with a warning saying which)."""
    if mode not in ['auto', 'min', 'max']:
        warnings.warn('{} mode {} is unknown, fallback to auto mode. {} will use max mode for f1 '
                      'and accuracy metric comparison and use min mode other wise'
                      .format(handler, mode, handler), RuntimeWarning)
        mode = 'auto'
    if mode == 'min':
        return np.less
    if mode == 'max':
        return np.greater
    name = monitor.get()[0]
    if 'acc' in name.lower() or 'f1' in name.lower():
        warnings.warn("`greater` operator will be used to determine if {} has improved. "
                      "Please specify `mode='min'` to use the `less` operator. "
                      "Specify `mode='max' to disable this warning.`".format(name))
        return np.greater
    warnings.warn("`less` operator will be used to determine if {} has improved. "
                  "Please specify `mode='max'` to use the `greater` operator. "
                  "Specify `mode='min' to disable this warning.`".format(name))
    return np.less


def _worst(monitor_op):
    """The value that any first value of the monitor improves on."""
    return np.inf if monitor_op is np.less else -np.inf


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stops the training after ``max_epoch`` epochs or ``max_batch`` batches (the
    estimator's, read at train begin).

    Parameters
    ----------
    max_epoch : int, optional
    max_batch : int, optional
    """

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Resets ``metrics`` at epoch begin and updates them at batch end: ``metric.Loss``
    metrics with the losses, the others with the labels and predictions.

    Parameters
    ----------
    metrics : list of EvalMetric
    priority : scalar, default -1000
        Before the handlers that read the metrics.
    """

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        pred = kwargs['pred']
        label = kwargs['label']
        loss = kwargs['loss']
        for metric in self.metrics:
            if isinstance(metric, metric_loss):
                metric.update(0, loss)
            else:
                metric.update(label, pred)


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Runs ``eval_fn`` (usually ``Estimator.evaluate``) on ``val_data`` every
    ``epoch_period`` epochs and every ``batch_period`` batches.

    Parameters
    ----------
    val_data : DataLoader
    eval_fn : callable
        Called as ``eval_fn(val_data=, batch_axis=, event_handlers=)``.
    epoch_period : int, default 1
        Epochs between validations (None: not at epoch ends).
    batch_period : int, optional
        Batches between validations (None: not at batch ends).
    priority : scalar, default -1000
        Before the handlers that read the validation metrics.
    event_handlers : EventHandler or list of EventHandler, optional
        Handlers for ``eval_fn`` to run during validation.
    """

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None, priority=-1000,
                 event_handlers=None):
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = 0
        self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._validate(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._validate(estimator)

    def _validate(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs the optimizer, times and ``metrics`` to ``estimator.logger``.

    Parameters
    ----------
    log_interval : int or 'epoch', default 'epoch'
        'epoch': a line at each epoch's begin and end; k: also a line every k batches.
    metrics : list of EvalMetric, optional
        The metrics to log (at batch ends, epoch ends and the train end).
    priority : scalar, default inf
        After every other handler, so that the metrics are up to date.
    """

    def __init__(self, log_interval='epoch', metrics=None, priority=np.inf):
        super().__init__()
        if not isinstance(log_interval, int) and log_interval != 'epoch':
            raise ValueError("log_interval must be either an integer or string 'epoch'")
        self.metrics = _check_metrics(metrics)
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.priority = priority
        self.log_interval = log_interval
        self.log_interval_time = 0

    def _values_text(self):
        return ''.join('%s: %.4f, ' % metric.get() for metric in self.metrics)

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info('Training begin: using optimizer %s '
                              'with current learning rate %.4f ',
                              type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info('Train for %d epochs.', estimator.max_epoch)
        else:
            estimator.logger.info('Train for %d batches.', estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        train_time = time.time() - self.train_start
        msg = 'Train finished using total %ds with %d epochs. ' % (train_time, self.current_epoch)
        estimator.logger.info((msg + self._values_text()).rstrip(', '))

    def batch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            batch_time = time.time() - self.batch_start
            msg = '[Epoch %d][Batch %d]' % (self.current_epoch, self.batch_index)
            self.processed_samples += kwargs['batch'][0].shape[0]
            msg += '[Samples %s] ' % self.processed_samples
            self.log_interval_time += batch_time
            if self.batch_index % self.log_interval == 0:
                msg += 'time/interval: %.3fs ' % self.log_interval_time
                self.log_interval_time = 0
                estimator.logger.info((msg + self._values_text()).rstrip(', '))
        self.batch_index += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int) or self.log_interval == 'epoch':
            # the Estimator names its training metrics 'training ...'
            is_training = any('training' in metric.name for metric in self.metrics)
            self.epoch_start = time.time()
            if is_training:
                estimator.logger.info('[Epoch %d] Begin, current learning rate: %.4f',
                                      self.current_epoch, estimator.trainer.learning_rate)
            else:
                estimator.logger.info('Validation Begin')

    def epoch_end(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int) or self.log_interval == 'epoch':
            epoch_time = time.time() - self.epoch_start
            msg = '[Epoch %d] Finished in %.3fs, ' % (self.current_epoch, epoch_time)
            estimator.logger.info((msg + self._values_text()).rstrip(', '))
        self.current_epoch += 1
        self.batch_index = 0


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves the network's symbol after the first batch (a hybridized HybridBlock only), and
    its parameters and the trainer's states every ``epoch_period`` epochs or
    ``batch_period`` batches: ``{model_prefix}-epoch{E}batch{B}.params`` and ``.states`` in
    ``model_dir``, keeping the last ``max_checkpoints``; with ``save_best``, also
    ``{model_prefix}-best.params`` and ``.states`` whenever ``monitor`` improves.

    Parameters
    ----------
    model_dir : str
        The folder of the files (created if missing).
    model_prefix : str, default 'model'
    monitor : EvalMetric, optional
        The metric that ``save_best`` follows (one of the estimator's).
    verbose : int, default 0
        1: log each save.
    save_best : bool, default False
    mode : str, default 'auto'
        'min', 'max', or 'auto' ('max' for accuracy and F1, 'min' otherwise).
    epoch_period : int, default 1
    batch_period : int, optional
    max_checkpoints : int, default 5
        The number of periodic checkpoints kept (the best one not counted).
    resume_from_checkpoint : bool, default False
        Load the latest checkpoint of ``model_dir`` at train begin and train only the
        remaining epochs or batches.
    """

    def __init__(self, model_dir, model_prefix='model', monitor=None, verbose=0,
                 save_best=False, mode='auto', epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        self.monitor = monitor
        self.verbose = verbose
        if not os.path.exists(model_dir):
            os.makedirs(model_dir)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.save_best = save_best
        if self.save_best and not isinstance(self.monitor, EvalMetric):
            raise ValueError('To save best model only, please provide one of the metric objects '
                             'from estimator.train_metrics and estimator.val_metrics as monitor.')
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.saved_checkpoints = []
        if self.save_best:
            self.monitor_op = _monitor_op('CheckpointHandler', monitor, mode)
            self.best = _worst(self.monitor_op)

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = _worst(self.monitor_op)
        if self.resume_from_checkpoint:
            error_msg = ('To use resume from checkpoint, you must only specify '
                         'the same type of period you used for training.'
                         'For example, if you are training based on number of epochs,'
                         'you must save only based on epochs, and set batch_period to None.')
            if estimator.max_batch:
                _check(self.batch_period and not self.epoch_period, error_msg)
            if estimator.max_epoch:
                _check(self.epoch_period and not self.batch_period, error_msg)
            self._resume_from_checkpoint(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    def _save_checkpoint(self, estimator):
        if self.resume_from_checkpoint:
            # numbered after the checkpoint resumed from
            save_epoch_number = self.current_epoch + self.trained_epoch + 1
            if estimator.max_epoch:
                # saved at epoch end, when the batch counter is already past the epoch
                save_batch_number = self.current_batch + self.trained_batch
            else:
                save_batch_number = self.current_batch + self.trained_batch + 1
        else:
            save_epoch_number = self.current_epoch
            save_batch_number = self.current_batch
        prefix = '%s-epoch%dbatch%d' % (self.model_prefix, save_epoch_number, save_batch_number)
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info('[Epoch %d] CheckpointHandler: trained total %d batches, '
                                  'saving model at %s with prefix: %s',
                                  self.current_epoch, self.current_batch + 1, self.model_dir,
                                  prefix)
        if self.save_best:
            self._save_best(estimator)

    def _save_best(self, estimator):
        monitor_name, monitor_value = self.monitor.get()
        if np.isnan(monitor_value):
            warnings.warn(RuntimeWarning(
                'Skipping save best because %s is not updated, make sure you pass one of the '
                'metric objects estimator.train_metrics and estimator.val_metrics as monitor'
                % monitor_name))
        elif self.monitor_op(monitor_value, self.best):
            prefix = self.model_prefix + '-best'
            self._save_params_and_trainer(estimator, prefix)
            if self.verbose > 0:
                estimator.logger.info('[Epoch %d] CheckpointHandler: '
                                      '%s improved from %0.5f to %0.5f, '
                                      'updating best model at %s with prefix: %s',
                                      self.current_epoch, monitor_name, self.best,
                                      monitor_value, self.model_dir, prefix)
            self.best = monitor_value
        elif self.verbose > 0:
            estimator.logger.info('[Epoch %d] CheckpointHandler: '
                                  '%s did not improve from %0.5f, '
                                  'skipping updating best model',
                                  self.current_epoch, monitor_name, self.best)

    def _save_symbol(self, estimator):
        symbol_file = os.path.join(self.model_dir, self.model_prefix + '-symbol.json')
        if getattr(estimator.net, '_cached_graph', None):
            estimator.net._cached_graph[1].save(symbol_file)
        else:
            estimator.logger.info(
                'Model architecture(symbol file) is not saved, please use HybridBlock '
                'to construct your model, and call net.hybridize() before passing to '
                'Estimator in order to save model architecture as %s.', symbol_file)

    def _save_params_and_trainer(self, estimator, file_prefix):
        param_file = os.path.join(self.model_dir, file_prefix + '.params')
        trainer_file = os.path.join(self.model_dir, file_prefix + '.states')
        estimator.net.save_parameters(param_file)
        estimator.trainer.save_states(trainer_file)
        # only the numbered checkpoints count towards max_checkpoints
        if 'best' not in file_prefix:
            self.saved_checkpoints.append(file_prefix)
        if len(self.saved_checkpoints) > self.max_checkpoints:
            prefix = self.saved_checkpoints.pop(0)
            for fname in os.listdir(self.model_dir):
                if fname.startswith(prefix):
                    os.remove(os.path.join(self.model_dir, fname))

    def _resume_from_checkpoint(self, estimator):
        prefix = self.model_prefix + '-epoch'
        self.trained_epoch = self._find_max_iteration(
            dir=self.model_dir, prefix=prefix, start='epoch', end='batch',
            saved_checkpoints=self.saved_checkpoints)
        prefix += str(self.trained_epoch)
        self.trained_batch = self._find_max_iteration(
            dir=self.model_dir, prefix=prefix, start='batch', end='.params')

        if self.trained_epoch == -1:
            msg = 'CheckpointHandler: No checkpoint found, training from scratch for '
            if estimator.max_batch:
                msg += '%d batches' % estimator.max_batch
            else:
                msg += '%d epochs' % estimator.max_epoch
            estimator.logger.info(msg)
            return
        msg = ('CheckpointHandler: Checkpoint resumed from epoch %d batch %d, '
               'continue to train for ' % (self.trained_epoch, self.trained_batch))
        # train only what remains
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError('Found checkpoint with maximum number of epoch %d reached, '
                                 'please specify resume_from_checkpoint=False (default value) '
                                 'if you wan to train from scratch.' % estimator.max_epoch)
            estimator.max_epoch = estimator.max_epoch - self.trained_epoch - 1
            msg += '%d epochs ' % estimator.max_epoch
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ValueError('Found checkpoint with maximum number of batch %d reached, '
                                 'please specify resume_from_checkpoint=False (default value) '
                                 'if you wan to train from scratch.' % self.trained_batch)
            estimator.max_batch = estimator.max_batch - self.trained_batch - 1
            msg += '%d batches ' % estimator.max_batch
        name = '%s-epoch%dbatch%d' % (self.model_prefix, self.trained_epoch, self.trained_batch)
        param_file = os.path.join(self.model_dir, name + '.params')
        trainer_file = os.path.join(self.model_dir, name + '.states')
        for path in (param_file, trainer_file):
            _check(os.path.exists(path), 'Failed to load checkpoint, %s does not exist' % path)
        estimator.net.load_parameters(param_file, ctx=estimator.context)
        estimator.trainer.load_states(trainer_file)
        estimator.logger.warning(msg)

    def _find_max_iteration(self, dir, prefix, start, end, saved_checkpoints=None):
        """The largest number between ``start`` and ``end`` in the names of the ``.params``
        files of ``dir`` that start with ``prefix`` (-1 when none); their prefixes are added
        to ``saved_checkpoints``."""
        error_msg = ('Error parsing checkpoint file, please check your '
                     'checkpoints have the format: '
                     '{model_name}-epoch{epoch_number}batch{batch_number}.params, '
                     'there should also be a .states file for each .params file ')
        max_iter = -1
        for fname in os.listdir(dir):
            if fname.startswith(prefix) and '.params' in fname:
                if saved_checkpoints is not None:
                    saved_checkpoints.append(fname[:fname.find('.params')])
                try:
                    iteration = int(fname[fname.find(start) + len(start): fname.find(end)])
                except ValueError:
                    raise ValueError(error_msg) from None
                max_iter = max(max_iter, iteration)
        return max_iter


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stops the training when ``monitor`` has not improved for ``patience`` epochs.

    Parameters
    ----------
    monitor : EvalMetric
        The metric followed (one of the estimator's; not a composite one).
    min_delta : float, default 0
        The least change that counts as an improvement.
    patience : int, default 0
        Epochs without improvement before stopping.
    mode : str, default 'auto'
        'min', 'max', or 'auto' ('max' for accuracy and F1, 'min' otherwise).
    baseline : float, optional
        The value to improve on (default: the first epoch's).
    """

    def __init__(self, monitor, min_delta=0, patience=0, mode='auto', baseline=None):
        super().__init__()
        if not isinstance(monitor, EvalMetric):
            raise ValueError(
                'Please provide one of the metric objects from estimator.train_metrics and '
                'estimator.val_metrics as monitor.')
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError('CompositeEvalMetric is not supported for EarlyStoppingHandler, '
                             'please specify a simple metric instead.')
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.min_delta = min_delta
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.monitor_op = _monitor_op('EarlyStoppingHandler', monitor, mode)
        # an improvement must go past the best by min_delta, in the direction of monitor_op
        if self.monitor_op is not np.greater:
            self.min_delta *= -1

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.best = _worst(self.monitor_op) if self.baseline is None else self.baseline

    def epoch_end(self, estimator, *args, **kwargs):
        monitor_name, monitor_value = self.monitor.get()
        if np.isnan(monitor_value):
            warnings.warn(RuntimeWarning(
                '%s is not updated, make sure you pass one of the metric objects from '
                'estimator.train_metrics and estimator.val_metrics as monitor.' % monitor_name))
        elif self.monitor_op(monitor_value - self.min_delta, self.best):
            self.best = monitor_value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stopped_epoch > 0:
            estimator.logger.info('[Epoch %d] EarlyStoppingHanlder: '
                                  'early stopping due to %s not improving',
                                  self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Applies the gradients at each batch end: ``trainer.step(batch size)``, the batch size
    summed over the losses of the contexts.

    Parameters
    ----------
    priority : scalar, default -2000
        Before the metrics and every other handler.
    """

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs['loss']
        if not isinstance(loss, list):
            loss = [loss]
        batch_size = sum(l.shape[0] for l in loss)
        estimator.trainer.step(batch_size)
