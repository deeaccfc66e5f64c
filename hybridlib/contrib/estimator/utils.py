"""Checks shared by the Estimator and its event handlers."""
from ...loss import SoftmaxCrossEntropyLoss
from ...metric import Accuracy, CompositeEvalMetric, EvalMetric


def _check_metrics(metrics):
    """``metrics`` (a metric, a composite one or a list; None) as a flat list of metrics."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for metric in metrics.metrics for m in _check_metrics(metric)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = metrics or []
    if not all(isinstance(metric, EvalMetric) for metric in metrics):
        raise ValueError('metrics must be a Metric or a list of Metric, '
                         'refer to mxnet.metric.EvalMetric: {}'.format(metrics))
    return metrics


def _check_handler_metric_ref(handler, known_metrics):
    """Every metric a handler holds (in an attribute whose name has 'metric', as MXNet reads
    them; methods aside) must be one of ``known_metrics``: a copy would never be updated."""
    for attribute in dir(handler):
        if 'metric' not in attribute:
            continue
        reference = getattr(handler, attribute)
        if not reference or callable(reference):
            continue
        for metric in reference if isinstance(reference, list) else [reference]:
            _check_metric_known(handler, metric, known_metrics)


def _check_metric_known(handler, metric, known_metrics):
    if metric not in known_metrics:
        raise ValueError(
            'Event handler {} refers to a metric instance {} outside of '
            'the known training and validation metrics. Please use the metrics from '
            'estimator.train_metrics and estimator.val_metrics '
            'instead.'.format(type(handler).__name__, metric))


def _suggest_metric_for_loss(loss):
    """The metric that goes with a loss by default (accuracy for softmax cross-entropy)."""
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None
