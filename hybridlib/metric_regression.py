"""The metrics of real-valued predictions (``mx.metric``): the errors ``MAE``, ``MSE`` and
``RMSE``, and Pearson's correlation of labels and predictions (``PearsonCorrelation``).

``hybridlib.metric`` serves these names; each class registers itself for ``create`` by its
lower-case name and the aliases given.
"""
import numpy

from .metric_base import EvalMetric, _as_numpy, alias, check_label_shapes, register

__all__ = ['MAE', 'MSE', 'RMSE', 'PearsonCorrelation']


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
