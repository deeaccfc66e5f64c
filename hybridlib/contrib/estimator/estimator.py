"""``Estimator`` (``gluon.contrib.estimator.estimator``): a training and validation loop over
Gluon DataLoaders, as MXNet 1.9.1's.

``fit`` runs epochs of batches and calls the event handlers around them (see
``event_handler``); the work on each batch is the ``BatchProcessor``'s. Without handlers of
their kinds, ``fit`` adds a ``StoppingHandler``, a ``GradientUpdateHandler``, a
``MetricHandler`` of the training metrics, a ``ValidationHandler`` (with ``val_data``) and a
``LoggingHandler``; ``evaluate`` adds a ``MetricHandler`` and a ``LoggingHandler`` of the
validation metrics.
"""
import copy
import logging
import sys
import warnings

from ...base import MXNetAssertionError
from ...context import Context, cpu, gpu, num_gpus
from ...data import DataLoader
from ...loss import Loss as gluon_loss
from ...metric import Loss as metric_loss
from ...trainer import Trainer
from .batch_processor import BatchProcessor
from .event_handler import MetricHandler, ValidationHandler, LoggingHandler, StoppingHandler, \
    GradientUpdateHandler
from .event_handler import TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd
from .event_handler import _check_event_handlers
from .utils import _check_metrics, _suggest_metric_for_loss, _check_handler_metric_ref

__all__ = ['Estimator']


class Estimator:
    """Trains and evaluates a network with event handlers.

    Parameters
    ----------
    net : Block
        The network to train.
    loss : gluon.loss.Loss
        The training objective.
    train_metrics : EvalMetric or list of EvalMetric, optional
        Metrics of the training data. Default: accuracy for ``SoftmaxCrossEntropyLoss``, and
        the mean loss (``metric.Loss`` named after the loss). Their names get the prefix
        'training '.
    val_metrics : EvalMetric or list of EvalMetric, optional
        Metrics of the validation data. Default: copies of the training metrics. Their names
        get the prefix 'validation '.
    initializer : Initializer, optional
        Initializes the network when it is not fully initialized already.
    trainer : Trainer, optional
        Default: SGD with learning rate 0.001 over ``net.collect_params()``.
    context : Context or list of Context, optional
        Where to train (the batches are split over them). Default: ``gpu(0)`` when there is
        a GPU, else ``cpu()``.
    val_net : Block, optional
        The network for validation (usually sharing ``net``'s parameters). Default: ``net``.
    val_loss : gluon.loss.Loss, optional
        The validation objective. Default: ``loss``.
    batch_processor : BatchProcessor, optional
        What to do with each batch (``fit_batch``, ``evaluate_batch``).

    Attributes
    ----------
    logger : logging.Logger
        Where the handlers log: level INFO, to ``sys.stdout``. Add handlers to it (a
        ``logging.FileHandler``...) to log elsewhere as well.
    """

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None,
                 batch_processor=None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = _check_metrics(train_metrics)
        self._val_metrics = _check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net

        self.logger = logging.Logger(name='Estimator', level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))

        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)

    # -- checks and defaults --------------------------------------------------------------------
    def _check_loss(self, loss):
        if not isinstance(loss, gluon_loss):
            raise ValueError('loss must be a Loss, refer to gluon.loss.Loss:{}'.format(loss))
        return loss

    def _check_context(self, context):
        gpus = num_gpus()
        available_gpus = [gpu(i) for i in range(gpus)]
        if context:
            if isinstance(context, Context):
                context = [context]
            elif not (isinstance(context, list)
                      and all(isinstance(c, Context) for c in context)):
                raise ValueError('context must be a Context or a list of Context, '
                                 'for example mx.cpu() or [mx.gpu(0), mx.gpu(1)], '
                                 'refer to mxnet.Context:{}'.format(context))
            for ctx in context:
                if not (ctx in available_gpus or str(ctx).startswith('cpu')):
                    raise MXNetAssertionError(
                        '%s is not available, please make sure your context is in one of: '
                        'mx.cpu(), %s' % (ctx, ', '.join(str(c) for c in available_gpus)))
            return context
        if gpus > 1:
            warnings.warn('You have multiple GPUs, gpu(0) will be used by default.'
                          'To utilize all your GPUs, specify context as a list of gpus, '
                          'e.g. context=[mx.gpu(0), mx.gpu(1)] ')
        return [gpu(0)] if gpus > 0 else [cpu()]

    def _check_batch_processor(self, batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not callable(getattr(batch_processor, 'fit_batch', None)) \
                or not callable(getattr(batch_processor, 'evaluate_batch', None)):
            raise ValueError('Customized Batch Processor must contain fit_batch()'
                             ' and evaluate_batch() methods')
        return batch_processor

    def _initialize(self, initializer):
        if not self._is_initialized():
            # the parameters not initialized yet; those that are keep their values
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn('Network already fully initialized, skipping initialization. '
                          "You don't need to pass initializer if you already "
                          'initialized your net. '
                          'You can use net.initialize(init=your_initializer, force_reinit=True)'
                          'to force re-initialize.')

    def _check_trainer(self, trainer):
        if not trainer:
            warnings.warn('No trainer specified, default SGD optimizer '
                          'with learning rate 0.001 is used.')
            return Trainer(self.net.collect_params(), 'sgd', {'learning_rate': 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError('Trainer must be a Gluon Trainer instance, refer to '
                             'gluon.Trainer:{}'.format(trainer))
        return trainer

    def _is_initialized(self):
        param_dict = self.net.collect_params()
        for param in param_dict:
            try:
                param_dict[param].list_ctx()
            except RuntimeError:
                return False
        return True

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        return self.batch_processor._get_data_and_label(batch, ctx, batch_axis)

    def _add_default_training_metrics(self):
        if not self._train_metrics:
            suggested_metric = _suggest_metric_for_loss(self.loss)
            if suggested_metric:
                self._train_metrics = [suggested_metric]
            loss_name = self.loss.name.rstrip('1234567890')
            self._train_metrics.append(metric_loss(loss_name))
        # the prefix tells the handlers training metrics from validation ones
        for metric in self._train_metrics:
            metric.name = 'training ' + metric.name

    def _add_validation_metrics(self):
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(metric) for metric in self._train_metrics]
        for metric in self._val_metrics:
            if 'training' in metric.name:
                metric.name = metric.name.replace('training', 'validation')
            else:
                metric.name = 'validation ' + metric.name

    @property
    def train_metrics(self):
        """list of EvalMetric: the training metrics (named 'training ...')."""
        return self._train_metrics

    @property
    def val_metrics(self):
        """list of EvalMetric: the validation metrics (named 'validation ...')."""
        return self._val_metrics

    # -- the loops ------------------------------------------------------------------------------
    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Evaluate ``val_net`` on ``val_data``: one pass of ``evaluate_batch`` over it, with
        the epoch and batch events of ``event_handlers`` (and by default a MetricHandler and a
        LoggingHandler of the validation metrics).

        Parameters
        ----------
        val_data : DataLoader
            Batches of ``(data, label)``.
        batch_axis : int, default 0
            The axis split over the contexts.
        event_handlers : EventHandler or list of EventHandler, optional
        """
        if not isinstance(val_data, DataLoader):
            raise ValueError('Estimator only support input as Gluon DataLoader. Alternatively, '
                             'you can transform your DataIter or any NDArray into Gluon '
                             'DataLoader. Refer to gluon.data.DataLoader')
        for metric in self.val_metrics:
            metric.reset()
        event_handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = \
            self._categorize_handlers(event_handlers)

        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):
        """Train ``net`` on ``train_data`` for ``epochs`` epochs or ``batches`` batches (one of
        the two), calling the event handlers around every epoch and batch.

        Parameters
        ----------
        train_data : DataLoader
            Batches of ``(data, label)``.
        val_data : DataLoader, optional
            Validation data: a ValidationHandler evaluates it after every epoch unless
            ``event_handlers`` holds one.
        epochs : int, optional
        event_handlers : EventHandler or list of EventHandler, optional
            Handlers besides the default ones (a StoppingHandler, a GradientUpdateHandler, a
            MetricHandler, a ValidationHandler and a LoggingHandler, each added unless one of
            its kind is given).
        batches : int, optional
        batch_axis : int, default 0
            The axis split over the contexts.
        """
        if not isinstance(train_data, DataLoader):
            raise ValueError('Estimator only support input as Gluon DataLoader. Alternatively, '
                             'you can transform your DataIter or any NDArray into Gluon '
                             'DataLoader. Refer to gluon.data.dataloader')
        if (not epochs) == (not batches):
            raise ValueError(
                'Fit only support exactly one type of iteration, '
                'train by number of epochs or number of batches.'
                'Please specify one and only one of: epochs or batches.')
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis

        event_handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(event_handlers)

        for handler in train_begin:
            handler.train_begin(self)
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            for batch in train_data:
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                # every handler sees the batch end, then any may stop the epoch
                stop = [handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                        for handler in batch_end]
                if any(stop):
                    break
            stop = [handler.epoch_end(self) for handler in epoch_end]
            if any(stop):
                break
        for handler in train_end:
            handler.train_end(self)

    # -- handlers -------------------------------------------------------------------------------
    def _prepare_default_handlers(self, val_data, event_handlers):
        event_handlers = _check_event_handlers(event_handlers)
        added_default_handlers = [StoppingHandler(self.max_epoch, self.max_batch)]
        if _lacks(event_handlers, GradientUpdateHandler):
            added_default_handlers.append(GradientUpdateHandler())
        if _lacks(event_handlers, MetricHandler):
            added_default_handlers.append(MetricHandler(metrics=self.train_metrics))
        if _lacks(event_handlers, ValidationHandler) and val_data:
            added_default_handlers.append(ValidationHandler(val_data=val_data,
                                                            eval_fn=self.evaluate))
        if _lacks(event_handlers, LoggingHandler):
            added_default_handlers.append(LoggingHandler(metrics=self.train_metrics))
        return self._add_default_handlers(event_handlers, added_default_handlers,
                                          self.train_metrics + self.val_metrics)

    def _prepare_default_validation_handlers(self, event_handlers):
        event_handlers = _check_event_handlers(event_handlers)
        added_default_handlers = []
        if _lacks(event_handlers, MetricHandler):
            added_default_handlers.append(MetricHandler(metrics=self.val_metrics))
        if _lacks(event_handlers, LoggingHandler):
            added_default_handlers.append(LoggingHandler(metrics=self.val_metrics))
        return self._add_default_handlers(event_handlers, added_default_handlers,
                                          self.val_metrics)

    @staticmethod
    def _add_default_handlers(event_handlers, added_default_handlers, known_metrics):
        """``event_handlers`` (the caller's list, extended in place) with the default ones
        added, sorted by priority. The user's handlers beside default ones must use
        ``known_metrics`` (the estimator's metrics, which the default handlers update)."""
        mixing_handlers = event_handlers and added_default_handlers
        event_handlers.extend(added_default_handlers)
        if mixing_handlers:
            known_metrics = set(known_metrics)
            for handler in event_handlers:
                _check_handler_metric_ref(handler, known_metrics)
        event_handlers.sort(key=lambda handler: getattr(handler, 'priority', 0))
        return event_handlers

    def _categorize_handlers(self, event_handlers):
        """The handlers of each event (train begin, epoch begin, batch begin, batch end,
        epoch end, train end), so that no empty method is called."""
        events = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)
        return tuple([handler for handler in event_handlers if isinstance(handler, event)]
                     for event in events)


def _lacks(event_handlers, kind):
    """Whether no handler of ``event_handlers`` is a ``kind`` (so fit adds a default one)."""
    return not any(isinstance(handler, kind) for handler in event_handlers)
