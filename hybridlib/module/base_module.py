"""``BaseModule``: the interface of MXNet's modules and the loops built on it.

A module is a computation with parameters that goes through states: created (it knows its
``data_names`` and ``output_names``), bound (``bind``: shapes known, memory allocated),
parameters initialized (``init_params``), optimizer installed (``init_optimizer``). A subclass
implements the intermediate steps (``forward``, ``backward``, ``update``, ``get_outputs``,
``update_metric``, ``get_params``/``init_params``, ...); ``BaseModule`` builds ``fit``,
``score``, ``predict`` and ``iter_predict`` on them, with MXNet's log lines.
"""
import logging
import time
import warnings

import numpy as np

from .. import metric
from .. import ndarray
from ..base import MXNetAssertionError
from ..initializer import Uniform
from ..io import DataBatch, DataDesc, DataIter
from ..model import BatchEndParam, _checkpoint_dict

__all__ = ['BaseModule']


def _call_each(callbacks, *args):
    """Call ``callbacks``: one callable or a list of them (the loops take either)."""
    for callback in callbacks if isinstance(callbacks, list) else [callbacks]:
        callback(*args)


def _check(condition, message):
    """MXNet checks these with ``assert``; the error is an AssertionError that says more."""
    if not condition:
        raise MXNetAssertionError(message)


def _check_input_names(symbol, names, typename, throw):
    """Raise (``throw``) or warn when a name is not an argument of ``symbol``."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [arg for arg in args
                      if not arg.endswith(('_weight', '_bias', '_gamma', '_beta'))]
        msg = ('\033[91mYou created Module with Module(..., %s_names=%s) but input with name '
               '\'%s\' is not found in symbol.list_arguments(). Did you mean one of:\n\t%s\033[0m'
               % (typename, str(names), name, '\n\t'.join(candidates)))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _input_names(symbol, data_names, label_names, state_names, fixed_param_names):
    """The four lists of names (None for none) of a Module's graph, checked against its
    arguments: an unknown label name warns, any other raises."""
    checked = []
    for names, typename, throw in ((data_names, 'data', True), (label_names, 'label', False),
                                   (state_names, 'state', True),
                                   (fixed_param_names, 'fixed_param', True)):
        names = list(names) if names is not None else []
        _check_input_names(symbol, names, typename, throw)
        checked.append(names)
    return checked


def _check_names_match(data_names, data_shapes, name, throw):
    """Raise (``throw``) or warn when the described inputs are not the named ones."""
    actual = [x[0] for x in data_shapes]
    if sorted(data_names) != sorted(actual):
        msg = "Data provided by %s_shapes don't match names specified by %s_names (%s vs. %s)" % (
            name, name, str(data_shapes), str(data_names))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _parse_data_desc(data_names, label_names, data_shapes, label_shapes):
    """The shapes as DataDescs, checked against the names (labels only warn)."""
    data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
    _check_names_match(data_names, data_shapes, 'data', True)
    if label_shapes is not None:
        label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        _check_names_match(label_names, label_shapes, 'label', False)
    else:
        _check_names_match(label_names, [], 'label', False)
    return data_shapes, label_shapes


class BaseModule:
    """The base class of modules: the states, the interface and the high-level loops.

    State attributes: ``binded``, ``for_training``, ``inputs_need_grad``,
    ``params_initialized``, ``optimizer_initialized``. After ``bind`` a module reports
    ``data_shapes``, ``label_shapes`` and ``output_shapes``.

    Parameters
    ----------
    logger : logging.Logger or module, default logging
        Where ``fit`` logs its progress.

    Examples
    --------
    >>> data = mx.symbol.Variable('data')
    >>> fc1 = mx.symbol.FullyConnected(data, name='fc1', num_hidden=128)
    >>> act1 = mx.symbol.Activation(fc1, name='relu1', act_type='relu')
    >>> fc2 = mx.symbol.FullyConnected(act1, name='fc2', num_hidden=10)
    >>> out = mx.symbol.SoftmaxOutput(fc2, name='softmax')
    >>> mod = mx.mod.Module(out)
    """

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    def _not_implemented(self, what):
        return NotImplementedError(f'{type(self).__name__} does not implement {what}; it is '
                                   'part of the interface a BaseModule subclass provides')

    # MXNet asserts these states before each step; the errors say what to call first
    def _check_bound(self, what):
        _check(self.binded, f'{what}: the module is not bound; call bind first')

    def _check_ready(self, what):
        _check(self.binded and self.params_initialized,
               f'{what}: bind the module and initialize its parameters first')

    def _check_updatable(self):
        _check(self.binded and self.params_initialized and self.optimizer_initialized,
               'update: bind the module, initialize its parameters and call init_optimizer '
               'first')

    def _check_input_grads(self):
        _check(self.binded and self.params_initialized and self.inputs_need_grad,
               'get_input_grads: bind with inputs_need_grad=True and initialize the parameters')

    def _skip_init_optimizer(self, force_init, ellipsis='.'):
        """The start of ``init_optimizer``: True (with MXNet's warning, which ``Module`` ends
        with '...') when an optimizer is installed already and not ``force_init``."""
        self._check_ready('init_optimizer')
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring' + ellipsis)
            return True
        return False

    def _inference_batches(self, eval_data, num_batch, reset, sparse_row_id_fn):
        """Yield ``(nbatch, batch)`` for the first ``num_batch`` batches of ``eval_data`` (all
        of them when None), each after its forward in inference mode."""
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            yield nbatch, eval_batch

    def _update_metric_with(self, eval_metric, batch):
        """``update_metric`` with the labels of ``batch``, or of a list of per-context batches
        (pre-sliced)."""
        if isinstance(batch, list):
            self.update_metric(eval_metric, [b.label for b in batch], pre_sliced=True)
        else:
            self.update_metric(eval_metric, batch.label)

    # -- high-level interface ---------------------------------------------------------------------
    def forward_backward(self, data_batch):
        """``forward`` (training) then ``backward``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Run prediction on ``eval_data`` and evaluate ``eval_metric``.

        Parameters
        ----------
        eval_data : DataIter
            The data to evaluate.
        eval_metric : EvalMetric, str or list
            The metric (a name or list of names makes one with ``metric.create``).
        num_batch : int, optional
            Stop after this many batches (all by default).
        batch_end_callback, score_end_callback : callable or list of callables, optional
            Called with a ``BatchEndParam`` after each batch, and at the end.
        reset : bool, default True
            Reset ``eval_data`` first.
        epoch : int, default 0
            Passed to the callbacks.
        sparse_row_id_fn : callable, optional
            Passed to ``prepare``.

        Returns
        -------
        list of (str, float)
            The metric's ``get_name_value()``.
        """
        self._check_ready('score')
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in self._inference_batches(eval_data, num_batch, reset,
                                                          sparse_row_id_fn):
            self._update_metric_with(eval_metric, eval_batch)
            if batch_end_callback is not None:
                batch_end_params = BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                 eval_metric=eval_metric, locals=locals())
                _call_each(batch_end_callback, batch_end_params)
            actual_num_batch += 1
        if score_end_callback:
            params = BatchEndParam(epoch=epoch, nbatch=actual_num_batch,
                                   eval_metric=eval_metric, locals=locals())
            _call_each(score_end_callback, params)
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield ``(outputs, batch_index, batch)`` for each batch of ``eval_data``, the outputs
        without the batch's padding."""
        self._check_ready('iter_predict')
        for nbatch, eval_batch in self._inference_batches(eval_data, num_batch, reset,
                                                          sparse_row_id_fn):
            pad = eval_batch.pad
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield (outputs, nbatch, eval_batch)

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """Run prediction and collect the outputs.

        Parameters
        ----------
        eval_data : DataIter, NDArray or numpy.ndarray
            The data; an array is one batch, and its first output is returned.
        num_batch : int, optional
            Stop after this many batches.
        merge_batches : bool, default True
            Concatenate the batches' outputs into one array per output (else return
            ``[[out1_batch1, out2_batch1], [out1_batch2, ...], ...]``).
        reset : bool, default True
            Reset ``eval_data`` first.
        always_output_list : bool, default False
            With one output and ``merge_batches``, return ``[out]`` instead of ``out``.
        sparse_row_id_fn : callable, optional
            Passed to ``prepare``.

        Returns
        -------
        NDArray, list of NDArray or list of list of NDArray
            The outputs, without each batch's padding.
        """
        self._check_ready('predict')
        if isinstance(eval_data, (ndarray.NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = ndarray.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError('eval_data must be of type NDArray or DataIter')
        output_list = []
        for _, eval_batch in self._inference_batches(eval_data, num_batch, reset,
                                                     sparse_row_id_fn):
            pad = eval_batch.pad
            outputs = [out[0:out.shape[0] - pad].copy() for out in self.get_outputs()]
            output_list.append(outputs)
        if not output_list:
            return output_list
        if merge_batches:
            num_outputs = len(output_list[0])
            for out in output_list:
                _check(len(out) == num_outputs,
                       'Cannot merge batches, as num of outputs is not the same in mini-batches. '
                       'Maybe bucketing is used?')
            output_list2 = [ndarray.concatenate([out[i] for out in output_list])
                            for i in range(num_outputs)]
            if num_outputs == 1 and not always_output_list:
                return output_list2[0]
            return output_list2
        return output_list

    def fit(self, train_data, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', optimizer='sgd',
            optimizer_params=(('learning_rate', 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=Uniform(0.01), arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Train the module's parameters.

        Binds (for ``train_data``'s shapes), initializes the parameters and the optimizer,
        then for each epoch runs forward, backward and update on every batch, logs
        ``Epoch[%d] Train-<metric>=%f`` and ``Epoch[%d] Time cost=%.3f``, calls
        ``epoch_end_callback(epoch, symbol, arg_params, aux_params)``, and with ``eval_data``
        scores it and logs ``Epoch[%d] Validation-<metric>=%f``.

        Parameters
        ----------
        train_data : DataIter
            The training data.
        eval_data : DataIter, optional
            Scored after each epoch.
        eval_metric : str or EvalMetric, default 'acc'
            The training metric.
        epoch_end_callback, batch_end_callback : callable or list of callables, optional
            Called after each epoch, and with a ``BatchEndParam`` after each batch.
        kvstore : str or KVStore, default 'local'
        optimizer : str or Optimizer, default 'sgd'
        optimizer_params : dict or tuple of pairs, default (('learning_rate', 0.01),)
        eval_end_callback, eval_batch_end_callback : callable or list, optional
            Callbacks of the evaluation (``score``).
        initializer : Initializer, default Uniform(0.01)
            For parameters not in ``arg_params``/``aux_params``.
        arg_params, aux_params : dict of str to NDArray, optional
            Initial parameter values.
        allow_missing : bool, default False
            Initialize the parameters missing from ``arg_params`` with ``initializer``.
        force_rebind, force_init : bool, default False
            Bind again / initialize again even when already done.
        begin_epoch : int, default 0
            The first epoch's number (resuming).
        num_epoch : int
            The epoch to stop before; required.
        validation_metric : str or EvalMetric, optional
            The evaluation metric (``eval_metric`` by default).
        monitor : Monitor, optional
            Installed on the executors; ticks around each batch.
        sparse_row_id_fn : callable, optional
            Passed to ``prepare``.
        """
        _check(num_epoch is not None, 'please specify number of epochs')
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)

        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            self._begin_epoch(epoch, train_data)
            nbatch = 0
            data_iter = iter(train_data)
            end_of_batch = False
            next_data_batch = next(data_iter)
            while not end_of_batch:
                data_batch = next_data_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                self._update_metric_with(eval_metric, data_batch)
                try:
                    # pre-fetch the next batch (and switch its bucket) while this one is done
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    eval_name_vals = self._epoch_values(eval_metric)
                if batch_end_callback is not None:
                    batch_end_params = BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                     eval_metric=eval_metric, locals=locals())
                    _call_each(batch_end_callback, batch_end_params)
                nbatch += 1

            for name, val in eval_name_vals:
                self.logger.info('Epoch[%d] Train-%s=%f', epoch, name, val)
            toc = time.time()
            self.logger.info('Epoch[%d] Time cost=%.3f', epoch, (toc - tic))

            # sync the parameters of all devices (and the module's CPU copy)
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            if epoch_end_callback is not None:
                _call_each(epoch_end_callback, epoch, self.symbol, arg_params, aux_params)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, val)
            self._end_epoch(train_data)

    # what subclasses change in fit's epoch (SVRGModule)
    def _begin_epoch(self, epoch, train_data):
        """Called by ``fit`` before an epoch's batches."""

    def _end_epoch(self, train_data):
        """Called by ``fit`` after an epoch: rewinds the training data."""
        train_data.reset()

    @staticmethod
    def _epoch_values(eval_metric):
        """The metric values ``fit`` logs for an epoch."""
        return eval_metric.get_global_name_value()

    # -- symbol information -----------------------------------------------------------------------
    @property
    def data_names(self):
        """The names of the data inputs."""
        raise self._not_implemented('data_names')

    @property
    def output_names(self):
        """The names of the outputs."""
        raise self._not_implemented('output_names')

    # -- input/output information -----------------------------------------------------------------
    @property
    def data_shapes(self):
        """The data inputs' descriptions (list of DataDesc), once bound."""
        raise self._not_implemented('data_shapes')

    @property
    def label_shapes(self):
        """The label inputs' descriptions, once bound (None or [] without labels)."""
        raise self._not_implemented('label_shapes')

    @property
    def output_shapes(self):
        """``(name, shape)`` of each output, once bound."""
        raise self._not_implemented('output_shapes')

    # -- parameters -------------------------------------------------------------------------------
    def get_params(self):
        """``(arg_params, aux_params)``: dicts of name to NDArray, copies on CPU."""
        raise self._not_implemented('get_params')

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the parameters: from ``arg_params``/``aux_params``, the others (with
        ``allow_missing``) by ``initializer``."""
        raise self._not_implemented('init_params')

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter values (``init_params`` without an initializer).

        Parameters
        ----------
        arg_params, aux_params : dict of str to NDArray
            The values.
        allow_missing : bool, default False
            Leave parameters missing from the dicts as they are (else RuntimeError).
        force_init : bool, default True
            Assign even when the parameters are initialized already.
        allow_extra : bool, default False
            Ignore names the module does not have (else ValueError).
        """
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def save_params(self, fname):
        """Save the parameters to ``fname`` (``arg:``/``aux:`` names, MXNet's format)."""
        ndarray.save(fname, _checkpoint_dict(*self.get_params()))

    def load_params(self, fname):
        """Load parameters saved by ``save_params`` (or ``save_checkpoint``) and set them."""
        save_dict = ndarray.load(fname)
        arg_params = {}
        aux_params = {}
        for k, value in save_dict.items():
            arg_type, name = k.split(':', 1)
            if arg_type == 'arg':
                arg_params[name] = value
            elif arg_type == 'aux':
                aux_params[name] = value
            else:
                raise ValueError('Invalid param file ' + fname)
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context=True):
        """The state arrays, ``[[state1_dev1, state1_dev2], ...]`` (none by default)."""
        self._check_ready('get_states')
        _check(not merge_multi_context, 'get_states: merge_multi_context is not supported')
        return []

    def set_states(self, states=None, value=None):
        """Set the states from arrays or to one scalar (this module has none)."""
        self._check_ready('set_states')
        _check(not states and not value, f'{type(self).__name__} has no states to set')

    def install_monitor(self, mon):
        """Install a ``Monitor`` on the module's executors."""
        raise self._not_implemented('install_monitor')

    # -- computations -----------------------------------------------------------------------------
    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare for ``data_batch`` (switch bucket, reshape); nothing by default."""
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning('sparse_row_id_fn is not invoked for BaseModule.'))

    def forward(self, data_batch, is_train=None):
        """Forward computation of ``data_batch`` (training mode by default when bound for
        training); batches of other shapes than the bound ones are supported."""
        raise self._not_implemented('forward')

    def backward(self, out_grads=None):
        """Backward computation; ``out_grads`` are needed for outputs that are not losses."""
        raise self._not_implemented('backward')

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward: ``[out1, out2]``, or per context
        ``[[out1_dev1, out1_dev2], ...]`` without ``merge_multi_context``."""
        raise self._not_implemented('get_outputs')

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs from the last backward."""
        raise self._not_implemented('get_input_grads')

    def update(self):
        """Update the parameters with the optimizer and the last gradients."""
        raise self._not_implemented('update')

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` over the outputs of the last forward and ``labels``."""
        raise self._not_implemented('update_metric')

    # -- module setup -----------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Allocate the executors for the input shapes.

        Parameters
        ----------
        data_shapes : list of DataDesc or (str, tuple)
            Typically ``data_iter.provide_data``.
        label_shapes : list of DataDesc or (str, tuple), optional
            Typically ``data_iter.provide_label``.
        for_training : bool, default True
            Allocate gradients.
        inputs_need_grad : bool, default False
            Also compute the gradients of the data inputs.
        force_rebind : bool, default False
            Bind again when already bound (else a warning and nothing).
        shared_module : Module, optional
            Share its parameters and memory (bucketing).
        grad_req : str, list or dict, default 'write'
            ``'write'``, ``'add'`` or ``'null'``: for all, per argument, or by name.
        """
        raise self._not_implemented('bind')

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Install an optimizer (and a KVStore for several devices)."""
        raise self._not_implemented('init_optimizer')

    @property
    def symbol(self):
        """The module's Symbol (for a BucketingModule, the current bucket's)."""
        return self._symbol
