"""``Module``: a Symbol with its parameters, bound on one or several contexts.

The module keeps a CPU copy of its parameters (``get_params``) and a
``DataParallelExecutorGroup`` that runs the graph, one executor per context. With one context
the optimizer's ``Updater`` updates the weights in place; with several, a KVStore sums the
gradients of the contexts and (by default) updates the weights itself, as MXNet's
``_create_kvstore`` decides.
"""
import logging
import warnings

from .. import context as ctx
from .. import optimizer as opt
from ..executor_manager import (_create_kvstore, _initialize_kvstore, _update_params,
                                _update_params_on_kvstore)
from ..initializer import InitDesc, Uniform
from ..io import DataDesc
from ..model import load_checkpoint
from ..ndarray import zeros
from .base_module import BaseModule, _check, _input_names, _parse_data_desc
from .executor_group import DataParallelExecutorGroup

__all__ = ['Module']


class Module(BaseModule):
    """A module of one Symbol.

    Parameters
    ----------
    symbol : Symbol
        The graph.
    data_names : list of str, default ('data',)
        Its data inputs.
    label_names : list of str, default ('softmax_label',)
        Its label inputs (None or [] for none).
    logger : logging.Logger, default logging
    context : Context or list of Context, default cpu()
        The contexts; a batch is split across several.
    work_load_list : list of number, optional
        The relative share of the batch of each context (equal by default).
    fixed_param_names : list of str, optional
        Parameters that are not trained.
    state_names : list of str, optional
        Inputs that are states (``set_states``), neither data nor parameters.
    group2ctxs : dict or list of dict, optional
        Context groups; hybridlib runs a graph on one context, so each group must map to the
        executor's own context.
    compression_params : dict, optional
        Gradient compression of the KVStore (not supported by hybridlib's KVStore).
    """

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=ctx.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        super().__init__(logger=logger)
        if isinstance(context, ctx.Context):
            context = [context]
        self._context = context
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        _check(len(work_load_list) == len(self._context),
               f'work_load_list {work_load_list} needs one number per context '
               f'({len(self._context)})')
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._symbol = symbol

        data_names, label_names, state_names, fixed_param_names = _input_names(
            symbol, data_names, label_names, state_names, fixed_param_names)

        arg_names = symbol.list_arguments()
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in arg_names if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()

        self._arg_params = None
        self._aux_params = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module of a checkpoint (``prefix-symbol.json``, ``prefix-%04d.params``).

        Parameters
        ----------
        prefix : str
            The checkpoint's path prefix.
        epoch : int
            Its epoch number.
        load_optimizer_states : bool, default False
            Also load ``prefix-%04d.states`` when ``init_optimizer`` is called.
        **kwargs
            The Module's other arguments (``data_names``, ``context``, ...).
        """
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = '%s-%04d.states' % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Save the symbol (``prefix-symbol.json``), the parameters (``prefix-%04d.params``)
        and optionally the optimizer states (``prefix-%04d.states``)."""
        self._symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
        param_name = '%s-%04d.params' % (prefix, epoch)
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = '%s-%04d.states' % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    def _reset_bind(self):
        """Forget the executors (the parameters stay)."""
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    @property
    def data_names(self):
        """The names of the data inputs."""
        return self._data_names

    @property
    def label_names(self):
        """The names of the label inputs."""
        return self._label_names

    @property
    def output_names(self):
        """The names of the outputs."""
        return self._output_names

    @property
    def data_shapes(self):
        """The data inputs' DataDescs."""
        self._check_bound('data_shapes')
        return self._data_shapes

    @property
    def label_shapes(self):
        """The label inputs' DataDescs (None when bound without labels)."""
        self._check_bound('label_shapes')
        return self._label_shapes

    @property
    def output_shapes(self):
        """``(name, shape)`` of each output."""
        self._check_bound('output_shapes')
        return self._exec_group.get_output_shapes()

    def get_params(self):
        """``(arg_params, aux_params)``, synced from the devices (averaged) when they have
        been updated since."""
        _check(self.params_initialized, 'get_params: the parameters are not initialized; call '
               'init_params first')
        if self._params_dirty:
            self._sync_params_from_devices()
        return (self._arg_params, self._aux_params)

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the parameters and auxiliary states.

        Parameters
        ----------
        initializer : Initializer, default Uniform(0.01)
            For parameters not given (and all of them when no dicts are given).
        arg_params, aux_params : dict of str to NDArray, optional
            Values to copy.
        allow_missing : bool, default False
            Initialize parameters missing from the given dicts (else RuntimeError).
        force_init : bool, default False
            Initialize again when already initialized (else a warning and nothing).
        allow_extra : bool, default False
            Ignore names in the dicts that the module does not have (else ValueError).
        """
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. init_params '
                          'call ignored.', stacklevel=2)
            return
        _check(self.binded, 'call bind before initializing the parameters')

        def _impl(name, arr, cache):
            """Copy ``name`` from ``cache``, or initialize it."""
            if cache is not None:
                if name in cache:
                    cache_arr = cache[name]
                    if cache_arr is not arr:
                        cache_arr.copyto(arr)
                else:
                    if not allow_missing:
                        raise RuntimeError('%s is not presented' % name)
                    if initializer is not None:
                        initializer(name, arr)
            else:
                initializer(name, arr)

        attrs = self._symbol.attr_dict()
        for name, arr in sorted(self._arg_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        # copy the initialized parameters to the devices
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter values (see ``BaseModule.set_params``); with ``allow_missing``
        the values go to the devices directly and the missing ones stay as they are."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. set_params '
                          'call ignored.', stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        # the CPU copy is behind the devices now; sync it on the next get_params
        self._params_dirty = True
        self.params_initialized = True

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind the executors (see ``BaseModule.bind``). Binding again for other shapes needs
        ``force_rebind``; ``reshape`` (or a ``forward`` of other shapes) keeps the memory."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        if not for_training:
            _check(not inputs_need_grad, 'bind: inputs_need_grad needs for_training=True')
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)

        if shared_module is not None:
            _check(isinstance(shared_module, Module) and shared_module.binded
                   and shared_module.params_initialized,
                   'bind: shared_module must be a bound Module with initialized parameters')
            shared_group = shared_module._exec_group
            _check(len(shared_group.execs) >= len(self._context),
                   'bind: shared_module has fewer contexts than this module')
        else:
            shared_group = None

        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad, shared_group,
            logger=self.logger, fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            group2ctxs=self._group2ctxs, state_names=self._state_names)
        self._total_exec_bytes = self._exec_group._total_exec_bytes
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            # parameters loaded or set before binding (Module.load, rebinding)
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            _check(self._arg_params is None and self._aux_params is None,
                   'bind: parameters exist but are not marked initialized')
            self._arg_params = {name: zeros(arrs[0].shape, dtype=arrs[0].dtype)
                                for name, arrs in zip(self._param_names,
                                                      self._exec_group.param_arrays)}
            self._aux_params = {name: zeros(arrs[0].shape, dtype=arrs[0].dtype)
                                for name, arrs in zip(self._aux_names,
                                                      self._exec_group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes, label_shapes=None):
        """Reshape the executors for new input shapes, keeping the parameters."""
        self._check_bound('reshape')
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    def _optimizer_indexing(self, kvstore, update_on_kvstore):
        """MXNet's default ``rescale_grad`` (1 / the batch size over all workers) and the
        optimizer's parameter names by index: one index per parameter when the KVStore
        updates, else one per parameter and device."""
        batch_size = self._exec_group.batch_size
        if kvstore and 'dist' in kvstore.type and '_sync' in kvstore.type:
            batch_size *= kvstore.num_workers
        names = self._exec_group.param_names
        if update_on_kvstore:
            return 1.0 / batch_size, dict(enumerate(names))
        n_dev = len(self._context)
        return 1.0 / batch_size, {i * n_dev + k: name for k in range(n_dev)
                                  for i, name in enumerate(names)}

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Install the optimizer (its ``rescale_grad`` defaults to 1/batch size) and, for
        several contexts, the KVStore.

        Parameters
        ----------
        kvstore : str or KVStore, default 'local'
        optimizer : str or Optimizer, default 'sgd'
        optimizer_params : dict or tuple of pairs, default (('learning_rate', 0.01),)
            Arguments of ``optimizer.create`` when ``optimizer`` is a name.
        force_init : bool, default False
            Install again when already installed (else a warning and nothing).
        """
        if self._skip_init_optimizer(force_init, ellipsis='...'):
            return
        if self._params_dirty:
            self._sync_params_from_devices()

        kvstore, update_on_kvstore = _create_kvstore(kvstore, len(self._context),
                                                     self._arg_params)
        rescale_grad, idx2name = self._optimizer_indexing(kvstore, update_on_kvstore)
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            if 'rescale_grad' not in optimizer_params:
                optimizer_params['rescale_grad'] = rescale_grad
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name,
                                   **optimizer_params)
        else:
            _check(isinstance(optimizer, opt.Optimizer),
                   f'init_optimizer: optimizer must be a name or an Optimizer, got '
                   f'{type(optimizer).__name__}')
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn(
                    'Optimizer created manually outside Module but rescale_grad is not '
                    'normalized to 1.0/batch_size/num_workers (%s vs. %s). Is this intended?'
                    % (optimizer.rescale_grad, rescale_grad), stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()

        self._optimizer = optimizer
        self._kvstore = kvstore
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            # copy the initialized local parameters to the kvstore
            _initialize_kvstore(kvstore=kvstore, param_arrays=self._exec_group.param_arrays,
                                arg_params=self._arg_params, param_names=self._param_names,
                                update_on_kvstore=update_on_kvstore)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer, KVStore and updater (bucketing)."""
        _check(shared_module.optimizer_initialized,
               'borrow_optimizer: the shared module has no optimizer; call init_optimizer on it')
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None):
        """Forward computation; a batch whose shapes differ from the bound ones reshapes the
        executors first (its ``provide_data``/``provide_label`` when it has them).

        Parameters
        ----------
        data_batch : DataBatch or list of DataBatch
            The batch (anything with ``data``, and ``label`` for training), or one per
            context.
        is_train : bool, optional
            Training mode; ``for_training`` by default.
        """
        self._check_ready('forward')
        curr_data_shapes = tuple(i.shape for i in self._data_shapes)
        if isinstance(data_batch, list):
            _check(len(data_batch) > 0, 'Encountered empty data batch')
            new_data_shapes = []
            for i in range(len(data_batch[0].data)):
                shape = data_batch[0].data[i].shape
                for db in data_batch:
                    _check(shape == db.data[i].shape,
                           'All data batches in a list need to have the same shape')
                new_batch_size = len(data_batch) * shape[0]
                new_data_shapes.append((new_batch_size,) + shape[1:])
            new_data_shapes = tuple(new_data_shapes)
        else:
            new_data_shapes = tuple(i.shape for i in data_batch.data)

        if curr_data_shapes != new_data_shapes:
            if hasattr(data_batch, 'provide_data') and data_batch.provide_data:
                new_dshape = data_batch.provide_data
            else:
                new_dshape = [DataDesc(i.name, shape, i.dtype, i.layout)
                              for i, shape in zip(self._data_shapes, new_data_shapes)]
            if hasattr(data_batch, 'provide_label') and data_batch.provide_label:
                new_lshape = data_batch.provide_label
            elif hasattr(data_batch, 'label') and data_batch.label:
                new_lshape = [DataDesc(i.name, j.shape, i.dtype, i.layout)
                              for i, j in zip(self._label_shapes, data_batch.label)]
            else:
                new_lshape = None
            self.reshape(new_dshape, new_lshape)
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Backward computation (``out_grads`` for outputs that are not losses)."""
        self._check_ready('backward')
        self._exec_group.backward(out_grads=out_grads)

    def update(self):
        """Update the parameters with the installed optimizer and the last gradients."""
        self._check_updatable()
        self._params_dirty = True
        if self._update_on_kvstore:
            _update_params_on_kvstore(self._exec_group.param_arrays,
                                      self._exec_group.grad_arrays,
                                      self._kvstore, self._exec_group.param_names)
        else:
            _update_params(self._exec_group.param_arrays, self._exec_group.grad_arrays,
                           updater=self._updater, num_device=len(self._context),
                           kvstore=self._kvstore, param_names=self._exec_group.param_names)

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward (see ``BaseModule.get_outputs``)."""
        self._check_ready('get_outputs')
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        self._check_input_grads()
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        """The state arrays, ``[[state1_dev1, state1_dev2], ...]``."""
        self._check_ready('get_states')
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the states from ``[[state1_dev1, ...], ...]`` or to one scalar ``value``."""
        self._check_ready('set_states')
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` over the last outputs and ``labels``."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def _sync_params_from_devices(self):
        """Copy the devices' parameters (averaged) into the CPU copy."""
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    def save_optimizer_states(self, fname):
        """Save the optimizer's states (of the KVStore's updater when it updates)."""
        _check(self.optimizer_initialized, 'save_optimizer_states: call init_optimizer first')
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            with open(fname, 'wb') as fout:
                fout.write(self._updater.get_states())

    def load_optimizer_states(self, fname):
        """Load optimizer states saved by ``save_optimizer_states``."""
        _check(self.optimizer_initialized, 'load_optimizer_states: call init_optimizer first')
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, 'rb') as fin:
                self._updater.set_states(fin.read())

    def install_monitor(self, mon):
        """Install a ``Monitor`` on the executors."""
        self._check_bound('install_monitor')
        self._exec_group.install_monitor(mon)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare for ``data_batch``. ``sparse_row_id_fn`` pulls rows of row_sparse
        parameters in MXNet; hybridlib's parameters are dense, so it only warns as MXNet does
        for dense ones."""
        self._check_bound('prepare')
        if sparse_row_id_fn is None:
            return
        if not self._kvstore or not self._update_on_kvstore:
            warnings.warn(UserWarning('Parameters are not updated in the KVStore. No need to '
                                      'call sparse_row_id_fn.'))
            return
        row_ids = sparse_row_id_fn(data_batch)
        _check(isinstance(row_ids, dict), 'Expected dict output from sparse_row_id_fn')
        for param_name in row_ids:
            warnings.warn(UserWarning("%s.stype is not 'row_sparse'. No need to perform "
                                      "row_sparse_pull." % param_name))
