"""``PythonModule``: a module written in Python, without parameters; ``PythonLossModule``: a
loss computed by a Python function, to put at the end of a ``SequentialModule``."""
import logging

from .. import ndarray as nd
from ..initializer import Uniform
from .base_module import BaseModule, _check

__all__ = ['PythonModule', 'PythonLossModule']


class PythonModule(BaseModule):
    """A module without parameters, implemented in Python: a subclass gives
    ``_compute_output_shapes``, ``forward``, ``get_outputs``, ``backward`` and
    ``get_input_grads``; parameter, optimizer and update methods do nothing.

    Parameters
    ----------
    data_names, label_names, output_names : list of str
        The names of its inputs and outputs.
    logger : logging.Logger, default logging
    """

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super().__init__(logger=logger)
        if isinstance(data_names, tuple):
            data_names = list(data_names)
        if isinstance(label_names, tuple):
            label_names = list(label_names)
        self._data_names = data_names
        self._label_names = label_names
        self._output_names = output_names
        self._data_shapes = None
        self._label_shapes = None
        self._output_shapes = None

    @property
    def data_names(self):
        """The names of the data inputs."""
        return self._data_names

    @property
    def output_names(self):
        """The names of the outputs."""
        return self._output_names

    @property
    def data_shapes(self):
        """The data inputs' shapes, as given to ``bind``."""
        return self._data_shapes

    @property
    def label_shapes(self):
        """The label inputs' shapes, as given to ``bind``."""
        return self._label_shapes

    @property
    def output_shapes(self):
        """The outputs' shapes (``_compute_output_shapes``)."""
        return self._output_shapes

    def get_params(self):
        """No parameters: two empty dicts."""
        return (dict(), dict())

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Nothing to initialize."""

    def update(self):
        """Nothing to update."""

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the outputs (when bound with labels)."""
        if self._label_shapes is None:
            # since we do not need labels, we are probably not a module with a loss function
            return
        if pre_sliced:
            raise RuntimeError('PythonModule does not support presliced labels')
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Record the shapes and compute the output shapes (``grad_req`` must be 'write')."""
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        _check(grad_req == 'write', 'Python module only support write gradient')
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        _check(len(data_shapes) == len(self._data_names),
               f'bind: {len(data_shapes)} data shapes for data names {self._data_names}')
        _check([x[0] for x in data_shapes] == self._data_names,
               f'bind: data shapes {data_shapes} are not for data names {self._data_names}')
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        if label_shapes is not None:
            _check(self._label_names is not None,
                   'bind: label shapes given to a module without label names')
            _check(len(self._label_names) == len(label_shapes),
                   f'bind: {len(label_shapes)} label shapes for label names {self._label_names}')
            _check([x[0] for x in label_shapes] == self._label_names,
                   f'bind: label shapes {label_shapes} are not for label names '
                   f'{self._label_names}')
        self._output_shapes = self._compute_output_shapes()

    def _compute_output_shapes(self):
        """``(name, shape)`` of each output, from ``_data_shapes`` and ``_label_shapes``."""
        raise self._not_implemented('_compute_output_shapes')

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """No parameters, so no optimizer."""


class PythonLossModule(PythonModule):
    """A loss as a module: the output is the input scores; the gradient of the scores is
    ``grad_func(scores, labels)``.

    Parameters
    ----------
    name : str, default 'pyloss'
        The output is named ``name + '_output'``.
    data_names, label_names : tuple of one str
        The scores and the labels.
    logger : logging.Logger, default logging
    grad_func : callable
        ``grad_func(scores, labels)`` returns the gradient of the scores (an NDArray or
        something ``nd.array`` takes).
    """

    def __init__(self, name='pyloss', data_names=('data',), label_names=('softmax_label',),
                 logger=logging, grad_func=None):
        super().__init__(data_names, label_names, [name + '_output'], logger=logger)
        self._name = name
        _check(len(data_names) == 1, 'PythonLossModule takes one data input')
        _check(len(label_names) == 1, 'PythonLossModule takes one label input')
        self._scores = None
        self._labels = None
        self._scores_grad = None
        if grad_func is not None:
            _check(callable(grad_func), 'grad_func must be callable')
        self._grad_func = grad_func

    def _compute_output_shapes(self):
        return [(self._name + '_output', self._data_shapes[0][1])]

    def forward(self, data_batch, is_train=None):
        """Keep the scores (and, training, the labels)."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        """``[scores]``."""
        _check(merge_multi_context is True, 'PythonLossModule has one context: '
               'merge_multi_context must be True')
        return [self._scores]

    def backward(self, out_grads=None):
        """Compute the gradient of the scores."""
        _check(out_grads is None, 'For a loss module, out_grads should be None')
        _check(self.for_training, 're-bind with for_training=True to run backward')
        self._backward_impl()

    def _backward_impl(self):
        """``grad_func(scores, labels)``; a subclass without ``grad_func`` overrides this."""
        if self._grad_func is None:
            raise self._not_implemented('_backward_impl (or pass grad_func)')
        grad = self._grad_func(self._scores, self._labels)
        if not isinstance(grad, nd.NDArray):
            grad = nd.array(grad)
        self._scores_grad = grad

    def get_input_grads(self, merge_multi_context=True):
        """``[gradient of the scores]``."""
        _check(merge_multi_context is True, 'PythonLossModule has one context: '
               'merge_multi_context must be True')
        return [self._scores_grad]

    def install_monitor(self, mon):
        """Not supported: there are no executors to monitor."""
        raise self._not_implemented('install_monitor')
