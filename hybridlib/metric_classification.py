"""The metrics of class predictions (``mx.metric``): accuracy (``Accuracy``,
``TopKAccuracy``), the binary scores made of true/false positive/negative counts (``F1``,
``MCC``), the multiclass correlation of a confusion matrix (``PCC``), and the metrics of the
probability predicted for the label (``Perplexity``, ``CrossEntropy``,
``NegativeLogLikelihood``).

``hybridlib.metric`` serves these names; each class registers itself for ``create`` by its
lower-case name and the aliases given.
"""
import math

import numpy

from . import ndarray
from .metric_base import (EvalMetric, _as_list, _as_numpy, _check, _python_number, alias,
                          check_label_shapes, register)
from .ndarray import NDArray

__all__ = ['Accuracy', 'TopKAccuracy', 'F1', 'MCC', 'PCC', 'Perplexity', 'CrossEntropy',
           'NegativeLogLikelihood']


# -- accuracy and the binary scores --------------------------------------------------------------
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


# -- the probability of the label ----------------------------------------------------------------
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
