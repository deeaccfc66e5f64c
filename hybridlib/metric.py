"""Evaluation metrics (``mx.metric``), as MXNet 1.9.1 defines them.

A metric accumulates over mini-batches: ``update(labels, preds)`` takes lists of NDArrays (one
per output; a single NDArray is wrapped), ``get()`` returns ``(name, value)`` for the batches
since the last ``reset_local()``, ``get_global()`` for those since the last ``reset()``. Like
MXNet, metrics compute on the host with numpy on ``asnumpy()`` copies.

The totals (``sum_metric``, ``num_inst`` and their ``global_`` twins) are Python numbers, so
``get()`` returns a Python float and prints as it did under MXNet and numpy 1 (numpy 2 would
otherwise keep float32 sums and print ``np.float64(...)``).

``create`` turns any spelling into a metric: a registered name (``'acc'``, ``'top_k_accuracy'``,
``'ce'``, ...), a callable ``feval(label, pred)``, a list (a ``CompositeEvalMetric``), a
``get_config()`` dict or its JSON. ``Torch`` and ``Caffe`` (MXNet's Loss aliases for those
frameworks' criterions) are not provided.
"""
import json
import math
import warnings
from collections import OrderedDict

import numpy

from . import ndarray
from .base import MXNetAssertionError, numeric_types, string_types
from .ndarray import NDArray

__all__ = ['EvalMetric', 'CompositeEvalMetric', 'Accuracy', 'TopKAccuracy', 'F1', 'MCC',
           'Perplexity', 'MAE', 'MSE', 'RMSE', 'CrossEntropy', 'NegativeLogLikelihood',
           'PearsonCorrelation', 'PCC', 'Loss', 'Torch', 'Caffe', 'CustomMetric', 'create',
           'register', 'alias', 'check_label_shapes']
# ``np`` (a CustomMetric from a numpy function) is public but not in __all__: a star import
# would shadow numpy


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Raise ValueError unless ``labels`` and ``preds`` have the same length (or, with
    ``shape=True``, the same shape); with ``wrap=True`` return single arrays as lists."""
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError("Shape of labels {} does not match shape of "
                         "predictions {}".format(label_shape, pred_shape))
    if wrap:
        labels, preds = _as_list(labels), _as_list(preds)
    return labels, preds


def _as_list(arrays):
    """A single array as a one-element list; lists pass through."""
    return [arrays] if isinstance(arrays, (NDArray, numpy.ndarray)) else arrays


def _as_numpy(array):
    """The host copy of an NDArray (numpy arrays pass through)."""
    return array.asnumpy() if isinstance(array, NDArray) else numpy.asarray(array)


def _python_number(value):
    """A numpy scalar, 0-d or size-1 array as a Python int or float."""
    if isinstance(value, NDArray):
        value = value.asnumpy()
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        return value.item()
    return value


def _check(condition, message):
    # MXNet checks these with ``assert``; MXNetAssertionError is still an AssertionError
    if not condition:
        raise MXNetAssertionError(message)


class EvalMetric:
    """Base class of the metrics: subclasses implement ``update(labels, preds)``.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    output_names : list of str, or None
        Names of the predictions that ``update_dict`` uses (default: all of them).
    label_names : list of str, or None
        Names of the labels that ``update_dict`` uses (default: all of them).
    **kwargs
        Constructor arguments recorded for ``get_config``; ``has_global_stats=True`` makes
        ``get_global`` read the global totals (otherwise it returns ``get()``).
    """

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop('has_global_stats', False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return 'EvalMetric: {}'.format(dict(self.get_name_value()))

    def get_config(self):
        """The constructor arguments as a dict that ``create(**config)`` turns back into an
        equal metric."""
        config = self._kwargs.copy()
        config.update({'metric': self.__class__.__name__, 'name': self.name,
                       'output_names': self.output_names, 'label_names': self.label_names})
        return config

    def update_dict(self, label, pred):
        """Update with name -> NDArray dicts, picking ``label_names`` / ``output_names``."""
        if self.output_names is not None:
            pred = [pred[name] for name in self.output_names]
        else:
            pred = list(pred.values())
        if self.label_names is not None:
            label = [label[name] for name in self.label_names]
        else:
            label = list(label.values())
        self.update(label, pred)

    def update(self, labels, preds):
        """Add a batch: ``labels`` and ``preds`` are lists of NDArrays, one per output."""
        raise NotImplementedError()

    def reset(self):
        """Clear the local and the global totals."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local totals (what ``get`` reports); the global ones keep counting."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """``(name, value)`` since the last ``reset_local``; the value is nan before any data."""
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        """``(name, value)`` since the last ``reset``."""
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, self.global_sum_metric / self.global_num_inst)

    def get_name_value(self):
        """``get()`` as a list of ``(name, value)`` pairs."""
        return _zip_name_value(*self.get())

    def get_global_name_value(self):
        """``get_global()`` as a list of ``(name, value)`` pairs."""
        return _zip_name_value(*self.get_global())

    def _accumulate(self, value, count):
        """Add a batch's summed ``value`` over ``count`` instances to both totals."""
        value, count = _python_number(value), _python_number(count)
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count


def _zip_name_value(name, value):
    if not isinstance(name, list):
        name = [name]
    if not isinstance(value, list):
        value = [value]
    return list(zip(name, value))


# -- the registry: name -> class, for create('acc') and get_config() round trips ----------------
_REGISTRY = {}


def register(klass, name=None):
    """Make the EvalMetric subclass ``klass`` creatable by its lower-case class name (or by
    ``name``); usable as a class decorator."""
    _check(isinstance(klass, type) and issubclass(klass, EvalMetric),
           'Can only register subclass of EvalMetric')
    name = (klass.__name__ if name is None else name).lower()
    old = _REGISTRY.get(name)
    if old is not None and old is not klass:
        warnings.warn(f'New metric {klass.__module__}.{klass.__name__} registered with name '
                      f'{name} is overriding existing metric {old.__module__}.{old.__name__}',
                      UserWarning, stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases):
    """Class decorator: more names under which ``create`` finds the metric."""
    def reg(klass):
        for name in aliases:
            register(klass, name)
        return klass
    return reg


def _create(*args, **kwargs):
    """A metric from an instance, a registered name, a config dict or its JSON."""
    if args:
        name, args = args[0], args[1:]
    else:
        _check('metric' in kwargs, 'create() needs the metric: a name, an EvalMetric, a dict '
                                   'or JSON (positionally or as metric=)')
        name = kwargs.pop('metric')
    if isinstance(name, EvalMetric):
        _check(not args and not kwargs,
               'metric is already an instance. Additional arguments are invalid')
        return name
    if isinstance(name, dict):
        return _create(**name)
    _check(isinstance(name, string_types), 'metric must be of string type')
    if name.startswith('['):
        _check(not args and not kwargs, 'metric JSON carries its own arguments')
        name, kwargs = json.loads(name)
        return _create(name, **kwargs)
    if name.startswith('{'):
        _check(not args and not kwargs, 'metric JSON carries its own arguments')
        return _create(**json.loads(name))
    name = name.lower()
    _check(name in _REGISTRY,
           '%s is not registered. Please register with metric.register first' % name)
    return _REGISTRY[name](*args, **kwargs)


def create(metric, *args, **kwargs):
    """Create a metric from a name, an instance, a list of those, or a callable.

    Parameters
    ----------
    metric : str, EvalMetric, list, dict or callable
        A registered name (``'acc'``, ``'f1'``, ``'rmse'``, ...) with ``*args, **kwargs`` for
        its constructor; an EvalMetric (returned as is); a list (a CompositeEvalMetric of
        ``create(item, *args, **kwargs)`` for each item); a ``get_config()`` dict or JSON; or a
        function ``feval(label, pred)`` of numpy arrays (a CustomMetric).
    """
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite_metric = CompositeEvalMetric()
        for child_metric in metric:
            composite_metric.add(create(child_metric, *args, **kwargs))
        return composite_metric
    return _create(metric, *args, **kwargs)


@register
@alias('composite')
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns lists of names and values.

    Parameters
    ----------
    metrics : list of EvalMetric (or anything ``create`` takes), or None
        The child metrics.
    name, output_names, label_names
        As EvalMetric; ``update_dict`` filters by these names, then asks each child.
    """

    def __init__(self, metrics=None, name='composite', output_names=None, label_names=None):
        self.metrics = []
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(i) for i in (metrics or [])]

    def add(self, metric):
        """Add a child metric (anything ``create`` takes)."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at ``index``."""
        try:
            return self.metrics[index]
        except IndexError:
            # MXNet 1.9.1 returns this ValueError instead of raising it
            raise ValueError('Metric index {} is out of range 0 and {}'.format(
                index, len(self.metrics))) from None

    def update_dict(self, labels, preds):  # pylint: disable=arguments-renamed
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in self.metrics:
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def get(self):
        return self._collect(lambda metric: metric.get())

    def get_global(self):
        return self._collect(lambda metric: metric.get_global())

    def _collect(self, get):
        names, values = [], []
        for metric in self.metrics:
            name, value = get(metric)
            names.extend([name] if isinstance(name, string_types) else name)
            values.extend([value] if isinstance(value, numeric_types) else value)
        return (names, values)

    def get_config(self):
        config = super().get_config()
        config.update({'metrics': [i.get_config() for i in self.metrics]})
        return config


# -- classification ------------------------------------------------------------------------------
@register
@alias('acc')
class Accuracy(EvalMetric):
    """The fraction of correct predictions, ``mean(pred_class == label)``.

    Parameters
    ----------
    axis : int, default 1
        The class axis of the predictions. Predictions of the label's shape are class indices;
        others are scores, whose argmax along ``axis`` is the predicted class.
    name, output_names, label_names
        As EvalMetric.

    Inputs: labels of shape (N, ...) with class indices; preds of shape (N, C, ...) or the
    label's shape. Labels and predicted classes are truncated to int32, as in MXNet.
    """

    def __init__(self, axis=1, name='accuracy', output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            pred_label = _as_numpy(pred_label)
            if pred_label.shape != label.shape:
                pred_label = numpy.argmax(pred_label, axis=self.axis)
            pred_label = pred_label.astype('int32').ravel()
            label = _as_numpy(label).astype('int32').ravel()
            check_label_shapes(label, pred_label)
            self._accumulate((pred_label == label).sum(), len(pred_label))


@register
@alias('top_k_accuracy', 'top_k_acc')
class TopKAccuracy(EvalMetric):
    """The fraction of samples whose label is among the ``top_k`` highest scores.

    Parameters
    ----------
    top_k : int, default 1
        How many of the highest scores count; must be more than 1 (use Accuracy for 1). The
        name becomes ``'top_k_accuracy_<top_k>'``.
    name, output_names, label_names
        As EvalMetric.

    Inputs: labels of shape (N,); preds of shape (N, C).
    """

    def __init__(self, top_k=1, name='top_k_accuracy', output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        _check(self.top_k > 1, 'Please use Accuracy if top_k is no more than 1')
        # MXNet appends the suffix again to the name of get_config(): not when it is there
        if not self.name.endswith('_%d' % self.top_k):
            self.name += '_%d' % self.top_k

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            _check(len(pred_label.shape) <= 2, 'Predictions should be no more than 2 dims')
            scores = _as_numpy(pred_label).astype('float32')
            # MXNet fails in argpartition when top_k is more than the number of classes
            # (though it clamps top_k just after); clamping first counts every class
            top_k = min(scores.shape[-1], self.top_k)
            pred_label = numpy.argpartition(scores, -top_k)
            label = _as_numpy(label).astype('int32')
            check_label_shapes(label, pred_label)
            num_samples = pred_label.shape[0]
            if pred_label.ndim == 1:
                # MXNet's meaning for 1-d scores (index positions compared with labels); MXNet
                # forgets the global total here, which is added as well
                num_correct = (pred_label.ravel() == label.ravel()).sum()
            else:
                num_classes = pred_label.shape[1]
                top = pred_label[:, num_classes - top_k:]
                num_correct = (top == label.reshape(-1, 1)).sum()
            self._accumulate(num_correct, num_samples)


class _BinaryClassificationMetrics:
    """True/false positive/negative counts, local and global, and the scores made from them.

    The positive class is 1; predictions are the argmax of (N, 2) scores.
    """

    _COUNTS = ('true_positives', 'false_negatives', 'false_positives', 'true_negatives')

    def __init__(self):
        self.reset_stats()

    def update_binary_stats(self, label, pred):
        """Count a batch: ``label`` of shape (N,), ``pred`` scores of shape (N, 2)."""
        pred = _as_numpy(pred)
        # MXNet compares an (N, 1) label with the (N,) predictions by broadcasting to (N, N)
        # counts; the label is flattened here so that each sample counts once
        label = _as_numpy(label).astype('int32').ravel()
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError('%s currently only supports binary classification.'
                             % self.__class__.__name__)
        pred_true, label_true = pred_label == 1, label == 1
        batch = {'true_positives': (pred_true & label_true).sum(),
                 'false_positives': (pred_true & ~label_true).sum(),
                 'false_negatives': (~pred_true & label_true).sum(),
                 'true_negatives': (~pred_true & ~label_true).sum()}
        for key, count in batch.items():
            setattr(self, key, getattr(self, key) + int(count))
            setattr(self, 'global_' + key, getattr(self, 'global_' + key) + int(count))

    def _counts(self, use_global):
        prefix = 'global_' if use_global else ''
        return [getattr(self, prefix + key) for key in self._COUNTS]

    def _precision(self, use_global):
        tp, _, fp, _ = self._counts(use_global)
        return float(tp) / (tp + fp) if tp + fp > 0 else 0.

    def _recall(self, use_global):
        tp, fn, _, _ = self._counts(use_global)
        return float(tp) / (tp + fn) if tp + fn > 0 else 0.

    def _fscore(self, use_global):
        precision, recall = self._precision(use_global), self._recall(use_global)
        if precision + recall > 0:
            return 2 * precision * recall / (precision + recall)
        return 0.

    precision = property(lambda self: self._precision(False))
    global_precision = property(lambda self: self._precision(True))
    recall = property(lambda self: self._recall(False))
    global_recall = property(lambda self: self._recall(True))
    fscore = property(lambda self: self._fscore(False))
    global_fscore = property(lambda self: self._fscore(True))
    total_examples = property(lambda self: sum(self._counts(False)))
    global_total_examples = property(lambda self: sum(self._counts(True)))

    def matthewscc(self, use_global=False):
        """Matthews' correlation coefficient; zero factors of the denominator count as 1."""
        if not sum(self._counts(use_global)):
            return 0.
        true_pos, false_neg, false_pos, true_neg = map(float, self._counts(use_global))
        terms = [true_pos + false_pos, true_pos + false_neg,
                 true_neg + false_pos, true_neg + false_neg]
        denom = 1.
        for t in terms:
            if t != 0.:
                denom *= t
        return ((true_pos * true_neg) - (false_pos * false_neg)) / math.sqrt(denom)

    def local_reset_stats(self):
        for key in self._COUNTS:
            setattr(self, key, 0)

    def reset_stats(self):
        for key in self._COUNTS:
            setattr(self, key, 0)
            setattr(self, 'global_' + key, 0)


class _BinaryMetric(EvalMetric):
    """F1 and MCC: a score of the binary counts, averaged over batches ('macro') or of the
    counts of all batches ('micro', weighted by the number of samples)."""

    def __init__(self, name, output_names, label_names, average):
        self._average = average
        self._metrics = _BinaryClassificationMetrics()
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def _score(self, use_global):
        raise NotImplementedError()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        stats = self._metrics
        for label, pred in zip(labels, preds):
            stats.update_binary_stats(label, pred)
        if self._average == 'macro':
            self._accumulate(self._score(False), 1)
            stats.reset_stats()
        else:
            self.sum_metric = self._score(False) * stats.total_examples
            self.global_sum_metric = self._score(True) * stats.global_total_examples
            self.num_inst = stats.total_examples
            self.global_num_inst = stats.global_total_examples

    def reset(self):
        super().reset()
        self._metrics.reset_stats()

    def reset_local(self):
        super().reset_local()
        self._metrics.local_reset_stats()


@register
class F1(_BinaryMetric):
    """The F1 score of binary classification, ``2 * precision * recall / (precision +
    recall)``, with the positive class 1.

    Parameters
    ----------
    name, output_names, label_names
        As EvalMetric.
    average : {'macro', 'micro'}, default 'macro'
        'macro' averages the F1 of each ``update``; 'micro' is the F1 of all counts.

    Inputs: labels of shape (N,) with values 0 and 1; preds of shape (N, 2) (scores).
    """

    def __init__(self, name='f1', output_names=None, label_names=None, average='macro'):
        super().__init__(name, output_names, label_names, average)

    # MXNet's F1 has these public (MCC has them private)
    average = property(lambda self: self._average,
                       lambda self, value: setattr(self, '_average', value))
    metrics = property(lambda self: self._metrics)

    def _score(self, use_global):
        return self._metrics._fscore(use_global)


@register
class MCC(_BinaryMetric):
    """Matthews' correlation coefficient of binary classification,
    ``(TP*TN - FP*FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))`` (zero factors count as 1).

    Parameters
    ----------
    name, output_names, label_names
        As EvalMetric.
    average : {'macro', 'micro'}, default 'macro'
        'macro' averages the MCC of each ``update``; 'micro' is the MCC of all counts.

    Inputs: labels of shape (N,) with values 0 and 1; preds of shape (N, 2) (scores).
    """

    def __init__(self, name='mcc', output_names=None, label_names=None, average='macro'):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global):
        return self._metrics.matthewscc(use_global)


@register
class Perplexity(EvalMetric):
    """``exp(-mean(log p))`` of the probability each prediction gives its label.

    Parameters
    ----------
    ignore_label : int or None
        Labels equal to this are not counted (None counts all).
    axis : int, default -1
        The class axis of the predictions.
    name, output_names, label_names
        As EvalMetric.

    Inputs: labels of shape (N, ...) with class indices; preds of probabilities, the label's
    shape with the class axis inserted at ``axis``, e.g. (N, C) or (N, T, C). Indices out of
    range are clipped, as MXNet's ``pick`` does; probabilities are floored at 1e-10.
    """

    def __init__(self, ignore_label, axis=-1, name='perplexity', output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        # MXNet asserts the lengths (a single NDArray there iterates over rows) and checks the
        # size against the last axis whatever ``axis`` is, and its pick fails on 3-d
        # predictions; here single arrays are wrapped and the class axis is ``axis``
        labels, preds = _as_list(labels), _as_list(preds)
        _check(len(labels) == len(preds), 'got %d labels for %d predictions'
               % (len(labels), len(preds)))
        loss, num = 0., 0
        for label, pred in zip(labels, preds):
            axis = self.axis % len(pred.shape)
            _check(label.size * pred.shape[axis] == pred.size,
                   'shape mismatch: %s vs. %s' % (label.shape, pred.shape))
            prob = self._pick(label, pred, axis)
            label = _as_numpy(label).reshape(prob.shape)
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(prob.dtype)
                num -= _python_number(ignore.sum())
                prob = prob * (1 - ignore) + ignore
            loss -= _python_number(numpy.log(numpy.maximum(1e-10, prob)).sum())
            num += prob.size
        self._accumulate(loss, num)

    @staticmethod
    def _pick(label, pred, axis):
        """The probabilities of the labels (indices clipped into range), as numpy; picked
        where ``pred`` lives, as MXNet does, so that only they travel to the host."""
        shape = pred.shape[:axis] + pred.shape[axis + 1:]
        if isinstance(pred, NDArray):
            if not isinstance(label, NDArray):
                label = ndarray.array(label, ctx=pred.context)
            index = label.as_in_context(pred.context).reshape(shape).astype('int32')
            return ndarray.pick(pred, index, axis=axis, mode='clip').asnumpy()
        index = numpy.clip(_as_numpy(label).reshape(shape).astype('int32'), 0,
                           pred.shape[axis] - 1)
        return numpy.take_along_axis(pred, numpy.expand_dims(index, axis), axis).squeeze(axis)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


# -- regression ----------------------------------------------------------------------------------
class _BatchMeanMetric(EvalMetric):
    """MAE, MSE and RMSE: one value per (label, pred) pair, averaged over pairs (so batches of
    different sizes weigh the same, as in MXNet).

    Inputs: labels and preds of shapes that broadcast, e.g. (N,) or (N, K); 1-d arrays are
    read as (N, 1).
    """

    def __init__(self, name, output_names, label_names):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _as_numpy(label), _as_numpy(pred)
            if len(label.shape) == 1:
                label = label.reshape(label.shape[0], 1)
            if len(pred.shape) == 1:
                pred = pred.reshape(pred.shape[0], 1)
            self._accumulate(self._batch_value(label - pred), 1)


@register
class MAE(_BatchMeanMetric):
    """Mean absolute error, ``mean(|label - pred|)`` (inputs as in MSE).

    Parameters
    ----------
    name : str, default 'mae'
    output_names, label_names : list of str, or None
        As EvalMetric.
    """

    def __init__(self, name='mae', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    _batch_value = staticmethod(lambda diff: numpy.abs(diff).mean())


@register
class MSE(_BatchMeanMetric):
    """Mean squared error, ``mean((label - pred) ** 2)``.

    Parameters
    ----------
    name : str, default 'mse'
    output_names, label_names : list of str, or None
        As EvalMetric.

    Inputs: labels and preds of shapes that broadcast, e.g. (N,) or (N, K); 1-d arrays are
    read as (N, 1). Each (label, pred) pair gives one value; ``get`` averages them.
    """

    def __init__(self, name='mse', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    _batch_value = staticmethod(lambda diff: (diff ** 2.0).mean())


@register
class RMSE(_BatchMeanMetric):
    """Root mean squared error of each (label, pred) pair, ``sqrt(mean((label - pred) **
    2))``, averaged over pairs (inputs as in MSE).

    Parameters
    ----------
    name : str, default 'rmse'
    output_names, label_names : list of str, or None
        As EvalMetric.
    """

    def __init__(self, name='rmse', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    _batch_value = staticmethod(lambda diff: numpy.sqrt((diff ** 2.0).mean()))


class _LogLikelihoodMetric(EvalMetric):
    """CrossEntropy and NegativeLogLikelihood: ``-sum(log(p[label] + eps))`` over samples,
    divided by the number of samples."""

    def __init__(self, eps, name, output_names, label_names):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _as_numpy(label).ravel(), _as_numpy(pred)
            num_examples = pred.shape[0]
            _check(label.shape[0] == num_examples,
                   'label count %d does not match the %d predictions (shape %s)'
                   % (label.shape[0], num_examples, pred.shape))
            prob = pred[numpy.arange(num_examples, dtype=numpy.int64), numpy.int64(label)]
            self._accumulate((-numpy.log(prob + self.eps)).sum(), num_examples)


@register
@alias('ce')
class CrossEntropy(_LogLikelihoodMetric):
    """Cross entropy, ``-mean(log(pred[n, label[n]] + eps))``.

    Parameters
    ----------
    eps : float, default 1e-12
        Added to the probabilities, so that 0 gives a finite loss.
    name, output_names, label_names
        As EvalMetric.

    Inputs: labels of shape (N,) with class indices; preds of shape (N, C) (probabilities).
    """

    def __init__(self, eps=1e-12, name='cross-entropy', output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias('nll_loss')
class NegativeLogLikelihood(_LogLikelihoodMetric):
    """Negative log-likelihood: CrossEntropy (same arguments, inputs and value) under the name
    ``'nll-loss'``."""

    def __init__(self, eps=1e-12, name='nll-loss', output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


class _Moments:
    """Running count, means, sums of squared deviations and co-deviation of labels and
    predictions (Welford's algorithm, a batch at a time)."""

    def __init__(self):
        self.count = 0
        self.mean_l = self.sse_l = self.mean_p = self.sse_p = self.conv = 0.

    def update(self, label, pred):
        # the order is MXNet's: label moments, the co-deviation (new label mean, old pred
        # mean: exact for the batch update), then the prediction moments
        count, self.mean_l, self.sse_l = PearsonCorrelation.update_variance(
            label, self.count, self.mean_l, self.sse_l)
        self.conv = self.conv + numpy.sum((label - self.mean_l) * (pred - self.mean_p))
        self.count, self.mean_p, self.sse_p = PearsonCorrelation.update_variance(
            pred, self.count, self.mean_p, self.sse_p)

    def pearsonr(self):
        n = self.count
        if n < 2:
            return float('nan')
        return float(self.conv / ((n - 1) * numpy.sqrt(self.sse_p / (n - 1))
                                  * numpy.sqrt(self.sse_l / (n - 1))))


@register
@alias('pearsonr')
class PearsonCorrelation(EvalMetric):
    """Pearson's correlation coefficient of labels and predictions (flattened).

    Parameters
    ----------
    name, output_names, label_names
        As EvalMetric.
    average : {'macro', 'micro'}, default 'macro'
        'macro' averages the coefficient of each (label, pred) pair; 'micro' is the
        coefficient of all values seen, kept with running moments.

    Inputs: labels and preds of the same shape.
    """

    def __init__(self, name='pearsonr', output_names=None, label_names=None, average='macro'):
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def reset_micro(self):
        """Clear the running moments of 'micro' averaging."""
        # MXNet keeps one set, never cleared by reset_local, and get_global reads 0 totals
        # (0.0); here the local and the global moments are kept apart
        self._local, self._global = _Moments(), _Moments()

    def reset(self):
        super().reset()
        self.reset_micro()

    def reset_local(self):
        super().reset_local()
        self._local = _Moments()

    @staticmethod
    def update_variance(new_values, *aggregate):
        """Welford's update of ``(count, mean, sum of squared deviations)`` with a batch."""
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        delta_2 = new_values - mean
        m_2 += numpy.sum(delta * delta_2)
        return count, mean, m_2

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _as_numpy(label).ravel().astype(numpy.float64)
            pred = _as_numpy(pred).ravel().astype(numpy.float64)
            if self.average == 'macro':
                self._accumulate(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self._accumulate(0., 1)
                self._local.update(label, pred)
                self._global.update(label, pred)

    def get(self):
        if self.num_inst == 0 or self.average == 'macro':
            return super().get()
        return (self.name, self._local.pearsonr())

    def get_global(self):
        if self.global_num_inst == 0 or self.average == 'macro':
            return super().get_global()
        return (self.name, self._global.pearsonr())


@register
class PCC(EvalMetric):
    """The multiclass Matthews correlation coefficient (Gorodkin's R_K) of the confusion
    matrix of all batches; for two classes it equals MCC with 'micro' averaging.

    Parameters
    ----------
    name, output_names, label_names
        As EvalMetric.
    has_global_stats : bool, default True
        Whether ``get_global`` reads the global confusion matrix.

    Inputs: labels of shape (N,) with class indices; preds of shape (N, C) (scores) or (N,)
    (class indices). The matrix grows to the largest class index seen.
    """

    def __init__(self, name='pcc', output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), 'constant', constant_values=(0))
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), 'constant', constant_values=(0))
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float('nan')
        i = cmat.diagonal()
        cov_xy = numpy.sum(i * n - x * y)
        return float(cov_xy / (cov_xx * cov_yy) ** 0.5)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _as_numpy(label).astype('int32')
            pred = _as_numpy(pred)
            if pred.shape != label.shape:
                pred = pred.argmax(axis=1)
            else:
                pred = pred.astype('int32')
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(int(n) + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (pred.ravel(), label.ravel()), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    def reset(self):
        self.global_num_inst = 0.
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.
        self.lcm = numpy.zeros((self.k, self.k))


@register
class Loss(EvalMetric):
    """The mean of the predictions themselves: ``update(_, losses)`` for printing a loss.

    Parameters
    ----------
    name, output_names, label_names
        As EvalMetric.

    Inputs: labels are ignored; preds (an NDArray or a list) of any shape, each element one
    instance.
    """

    def __init__(self, name='loss', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _, preds):
        for pred in _as_list(preds):
            pred = _as_numpy(pred)
            self._accumulate(pred.sum(), pred.size)


@register
class Torch(Loss):
    """The mean of the predictions, named 'torch' (MXNet's placeholder for Torch criterions)."""

    def __init__(self, name='torch', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """The mean of the predictions, named 'caffe' (MXNet's placeholder for Caffe criterions)."""

    def __init__(self, name='caffe', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric computed by ``feval(label, pred)`` on numpy arrays, for each (label, pred)
    pair: a number (averaged over pairs) or a tuple ``(sum_metric, num_inst)``.

    Parameters
    ----------
    feval : callable(label, pred)
        The evaluation function.
    name : str, optional
        Default: ``feval.__name__``, as ``'custom(<lambda>)'`` for a lambda.
    allow_extra_outputs : bool, default False
        Whether there may be more predictions than labels (e.g. RNN states); the extra ones
        are ignored.
    output_names, label_names
        As EvalMetric.
    """

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if name is None:
            name = feval.__name__
            if name.find('<') != -1:
                name = 'custom(%s)' % name
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        else:
            labels, preds = _as_list(labels), _as_list(preds)
        for pred, label in zip(preds, labels):
            reval = self._feval(_as_numpy(label), _as_numpy(pred))
            if isinstance(reval, tuple):
                self._accumulate(*reval)
            else:
                self._accumulate(reval, 1)

    def get_config(self):
        raise NotImplementedError('CustomMetric cannot be serialized')


def np(numpy_feval, name=None, allow_extra_outputs=False):  # pylint: disable=invalid-name
    """A CustomMetric of ``numpy_feval(label, pred)``, a function of numpy arrays that returns
    the metric of a mini-batch.

    Parameters
    ----------
    numpy_feval : callable(label, pred)
        The evaluation function.
    name : str, optional
        The metric's name (default from ``numpy_feval.__name__``).
    allow_extra_outputs : bool, default False
        Whether there may be more predictions than labels.
    """
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
