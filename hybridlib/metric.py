"""Evaluation metrics (``mx.metric``), as MXNet 1.9.1 defines them.

This module is ``mx.metric``: it serves every metric and ``create``, which turns any spelling
into a metric: a registered name (``'acc'``, ``'top_k_accuracy'``, ``'ce'``, ...), a callable
``feval(label, pred)``, a list (a ``CompositeEvalMetric``), a ``get_config()`` dict or its JSON.
It holds the metrics built on others or on user code: ``CompositeEvalMetric``, ``Loss`` (with
``Torch`` and ``Caffe``, MXNet's placeholders for those frameworks' criterions),
``CustomMetric`` and ``np``.

The base class and the registry are in ``metric_base.py`` (how a metric accumulates is
described there); the metric families in ``metric_classification.py`` and
``metric_regression.py``.
"""
import json
from collections import OrderedDict

from . import metric_base, metric_classification, metric_regression
from . import ndarray, registry    # module attributes of MXNet's mx.metric that clients import
from .base import numeric_types, string_types
from .metric_base import (EvalMetric, _REGISTRY, _as_list, _as_numpy, _check, alias,
                          check_label_shapes, register)
from .metric_classification import (F1, MCC, PCC, Accuracy, CrossEntropy,
                                    NegativeLogLikelihood, Perplexity, TopKAccuracy)
from .metric_regression import MAE, MSE, RMSE, PearsonCorrelation

__all__ = ['EvalMetric', 'CompositeEvalMetric', 'Accuracy', 'TopKAccuracy', 'F1', 'MCC',
           'Perplexity', 'MAE', 'MSE', 'RMSE', 'CrossEntropy', 'NegativeLogLikelihood',
           'PearsonCorrelation', 'PCC', 'Loss', 'Torch', 'Caffe', 'CustomMetric', 'create',
           'register', 'alias', 'check_label_shapes']
# ``np`` (a CustomMetric from a numpy function) is public but not in __all__: a star import
# would shadow numpy

# The public names show and pickle as ``hybridlib.metric.<name>``, the module users import (as
# MXNet's are ``mxnet.metric.<name>``), wherever they are written
for _module in (metric_base, metric_classification, metric_regression):
    for _name in _module.__all__:
        getattr(_module, _name).__module__ = __name__
del _module, _name


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
