"""``SVRGModule``: a Module trained with stochastic variance reduced gradients (MXNet 1.9.1's
``contrib.svrg_optimization.svrg_module``).

SVRG (Johnson and Zhang, 2013) keeps a snapshot of the weights and the mean gradient over all
the data at that snapshot (the full gradient), refreshed every ``update_freq`` epochs. Each
batch then steps with ``g(w) - g(snapshot) + full gradient``: the gradient of the batch at the
current weights, corrected by the same batch's gradient at the snapshot. ``SVRGModule`` is a
``Module`` for the current weights with a second ``Module`` (``_mod_aux``) for the snapshot;
forward and backward run on both, and ``update`` rewrites the gradients by that rule before the
optimizer (``_SVRGOptimizer``) steps.

As MXNet 1.9.1 does, and so with its numbers:

* the full gradients are summed onto the previous ones before the mean is taken (MXNet never
  clears them), so from the second refresh on they carry ``previous / number of batches``;
* with a KVStore that updates the weights (several devices), ``init_optimizer`` pulls the
  zeros of the ``_full`` keys into the devices' weights: the first batch runs on zero weights,
  the store keeps the right ones and the first update brings them back.
"""
import logging

from ... import ndarray as nd
from ... import optimizer as opt
from ...context import cpu
from ...executor_manager import _create_kvstore
from ...module import Module
from .svrg_optimizer import _SVRGOptimizer

__all__ = ['SVRGModule']


class SVRGModule(Module):
    """A ``Module`` trained with SVRG: it holds a second Module for the weights of the last
    full-gradient pass, and ``update`` steps with the variance-reduced gradient.

    Parameters
    ----------
    symbol : Symbol
        The network, ending in a loss (``LinearRegressionOutput``, ``SoftmaxOutput``, ...).
    data_names : list of str, default ('data',)
    label_names : list of str, default ('softmax_label',)
    logger : Logger, default logging
    context : Context or list of Context, default cpu()
    work_load_list : list of number, optional
        The share of the batch of each context (equal by default).
    fixed_param_names : list of str, optional
        Parameters that are not trained.
    state_names : list of str, optional
        Inputs that are states (``set_states``), neither data nor parameters.
    group2ctxs : dict or list of dict, optional
        Context groups (see ``Module``).
    compression_params : dict, optional
        Gradient compression of the KVStore (see ``Module``).
    update_freq : int
        Compute the full gradients every ``update_freq`` epochs (required, positive).

    Examples
    --------
    >>> mod = SVRGModule(symbol=lro, data_names=['data'], label_names=['lin_reg_label'],
    ...                  update_freq=2)
    >>> mod.fit(di, eval_metric='mse', optimizer='sgd',
    ...         optimizer_params=(('learning_rate', 0.025),), num_epoch=10, kvstore='local')
    """

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=cpu(), work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None, update_freq=None):
        super().__init__(symbol, data_names=data_names, label_names=label_names, logger=logger,
                         context=context, work_load_list=work_load_list,
                         fixed_param_names=fixed_param_names, state_names=state_names,
                         group2ctxs=group2ctxs, compression_params=compression_params)
        # bool is an int subclass; MXNet lets True through as 1, and so does this check
        if not isinstance(update_freq, int):
            raise TypeError('update_freq in SVRGModule must be an integer to represent the '
                            'frequency for calculating full gradients')
        if update_freq <= 0:
            raise ValueError('update_freq in SVRGModule must be a positive integer to represent '
                             'the frequency for calculating full gradients')
        self.update_freq = update_freq
        self._mod_aux = Module(symbol, data_names, label_names, logger, context, work_load_list,
                               fixed_param_names, state_names, group2ctxs, compression_params)
        self._param_dict = None     # per context: parameter name -> mean full gradient
        self._ctx_len = len(self._context)

    def _reset_bind(self):
        """Forget the executors of both modules."""
        super()._reset_bind()
        self._mod_aux._reset_bind()

    def reshape(self, data_shapes, label_shapes=None):
        """Reshape both modules for new input shapes.

        Parameters
        ----------
        data_shapes : list of (str, tuple) or DataDesc
            Typically ``data_iter.provide_data``.
        label_shapes : list of (str, tuple) or DataDesc, optional
            Typically ``data_iter.provide_label``.
        """
        super().reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Install an ``_SVRGOptimizer`` around ``optimizer``; with a KVStore, also a key
        ``<name>_full`` per parameter where the devices' full gradients are summed.

        Parameters
        ----------
        kvstore : str or KVStore, default 'local'
        optimizer : str or Optimizer, default 'sgd'
            The optimizer that updates the weights.
        optimizer_params : dict or tuple of pairs, default (('learning_rate', 0.01),)
            Its arguments (``rescale_grad`` defaults to 1/batch size).
        force_init : bool, default False
            Install again when an optimizer is installed already.
        """
        self._param_dict = [{name: nd.zeros(shape=value.shape, ctx=self._context[i])
                             for name, value in self.get_params()[0].items()}
                            for i in range(self._ctx_len)]
        svrg_optimizer = self._create_optimizer(_SVRGOptimizer.__name__, default_opt=optimizer,
                                                kvstore=kvstore,
                                                optimizer_params=optimizer_params)
        super().init_optimizer(kvstore=kvstore, optimizer=svrg_optimizer,
                               optimizer_params=optimizer_params, force_init=force_init)
        if self._kvstore:
            for idx, param_on_devs in enumerate(self._exec_group.param_arrays):
                name = self._exec_group.param_names[idx]
                self._kvstore.init(name + '_full', nd.zeros(shape=self._arg_params[name].shape))
                if self._update_on_kvstore:
                    # MXNet 1.9.1 does this: the weights on the devices become zeros until
                    # the first update pulls the store's weights (see the module docstring)
                    self._kvstore.pull(name + '_full', param_on_devs, priority=-idx)

    def _create_optimizer(self, optimizer, default_opt, kvstore, optimizer_params):
        """The ``_SVRGOptimizer`` (registered as ``optimizer``) around ``default_opt``, with
        Module's ``rescale_grad`` and parameter indices, plus one index per ``_full`` key."""
        kv_store, update_on_kvstore = _create_kvstore(kvstore, self._ctx_len, self._arg_params)
        rescale_grad, idx2name = self._optimizer_indexing(kv_store, update_on_kvstore)
        for name in self._param_dict[0]:
            idx2name[max(idx2name) + 1] = name + '_full'

        optimizer_params = dict(optimizer_params)
        if 'rescale_grad' not in optimizer_params:
            optimizer_params['rescale_grad'] = rescale_grad
        optimizer_params['default_optimizer'] = default_opt
        optimizer_params['param_idx2name'] = idx2name
        return opt.create(optimizer, **optimizer_params)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind both modules (the snapshot module only ``for_training``); see
        ``Module.bind``."""
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                     shared_module, grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                               force_rebind, shared_module, grad_req)

    def forward(self, data_batch, is_train=None):
        """Forward computation; with ``is_train=True`` also on the snapshot module (as
        MXNet, the default ``None`` runs the current module only).

        Parameters
        ----------
        data_batch : DataBatch
        is_train : bool, optional
            Training mode; ``for_training`` by default.
        """
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Backward computation on both modules (the snapshot one when bound).

        Parameters
        ----------
        out_grads : NDArray or list of NDArray, optional
            Gradients of the outputs that are not losses.
        """
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self):
        """Rewrite the gradients by the SVRG rule, then update the weights with the
        optimizer (see ``Module.update``)."""
        self._update_svrg_gradients()
        super().update()

    def update_full_grads(self, train_data):
        """Take a snapshot of the weights and compute the mean gradient over all of
        ``train_data`` at it (per context, through the KVStore when there is one).

        Parameters
        ----------
        train_data : DataIter
            The training data; it is reset first.
        """
        param_names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        train_data.reset()
        nbatch = 0
        padding = 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for ctx in range(self._ctx_len):
                for index, name in enumerate(param_names):
                    grads = self._mod_aux._exec_group.grad_arrays[index][ctx]
                    self._param_dict[ctx][name] = self._param_dict[ctx][name] + grads
            padding = batch.pad

        # the padded samples of the last batch do not count
        true_num_batch = nbatch - padding / train_data.batch_size
        for name in param_names:
            grad_list = []
            for i in range(self._ctx_len):
                self._param_dict[i][name] /= true_num_batch
                grad_list.append(self._param_dict[i][name])
            if self._kvstore:
                self._accumulate_kvstore(name, grad_list)

    def _accumulate_kvstore(self, key, value):
        """Sum the full gradients of all devices in the KVStore's ``<key>_full`` and give
        each device the mean."""
        self._kvstore.push(key + '_full', value)
        self._kvstore._barrier()
        self._kvstore.pull(key + '_full', value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key, value):
        """Each device's full gradient of ``key``: the sum ``value[i]`` over the devices."""
        for i in range(self._ctx_len):
            self._param_dict[i][key] = value[i] / self._ctx_len

    def _svrg_grads_update_rule(self, g_curr_batch_curr_weight, g_curr_batch_special_weight,
                                g_special_weight_all_batch):
        """``g_curr_batch_curr_weight - g_curr_batch_special_weight +
        g_special_weight_all_batch``, in place in the first (returned).

        Parameters
        ----------
        g_curr_batch_curr_weight : NDArray
            The batch's gradient at the current weights.
        g_curr_batch_special_weight : NDArray
            The batch's gradient at the snapshot.
        g_special_weight_all_batch : NDArray
            The mean gradient over all the data at the snapshot.
        """
        for index, grad in enumerate(g_curr_batch_curr_weight):
            grad -= g_curr_batch_special_weight[index]
            grad += g_special_weight_all_batch[index]
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self):
        """Rewrite every gradient of every context by the SVRG rule."""
        param_names = self._exec_group.param_names
        for ctx in range(self._ctx_len):
            for index, name in enumerate(param_names):
                g_curr_batch_reg = self._exec_group.grad_arrays[index][ctx]
                g_curr_batch_special = self._mod_aux._exec_group.grad_arrays[index][ctx]
                g_special_weight_all_batch = self._param_dict[ctx][name]
                g_svrg = self._svrg_grads_update_rule(g_curr_batch_reg, g_curr_batch_special,
                                                      g_special_weight_all_batch)
                self._exec_group.grad_arrays[index][ctx] = g_svrg

    # fit is BaseModule's, with these epoch steps
    def _begin_epoch(self, epoch, train_data):
        """The full gradients at the start of every ``update_freq``-th epoch (epoch 0
        included); MXNet's SVRGModule then rewinds the data here, not after the epoch."""
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)
        train_data.reset()

    def _end_epoch(self, train_data):
        pass

    @staticmethod
    def _epoch_values(eval_metric):
        return eval_metric.get_name_value()     # MXNet's SVRGModule logs the local values

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare both modules for ``data_batch`` (see ``Module.prepare``)."""
        super().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
