"""The base of the evaluation metrics (``mx.metric.EvalMetric``), the metric registry
(``register``, ``alias``) and the input helpers every metric shares.

A metric accumulates over mini-batches: ``update(labels, preds)`` takes lists of NDArrays (one
per output; a single NDArray is wrapped), ``get()`` returns ``(name, value)`` for the batches
since the last ``reset_local()``, ``get_global()`` for those since the last ``reset()``. Like
MXNet, metrics compute on the host with numpy on ``asnumpy()`` copies.

The totals (``sum_metric``, ``num_inst`` and their ``global_`` twins) are Python numbers, so
``get()`` returns a Python float and prints as it did under MXNet and numpy 1 (numpy 2 would
otherwise keep float32 sums and print ``np.float64(...)``).

``hybridlib.metric`` (``mx.metric``) serves these names with ``create``; the metric families
(``metric_classification.py``, ``metric_regression.py``) and user-defined metrics subclass
``EvalMetric`` and ``register`` themselves here.
"""
import warnings

import numpy

from .base import MXNetAssertionError
from .ndarray import NDArray

__all__ = ['EvalMetric', 'check_label_shapes', 'register', 'alias']


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
