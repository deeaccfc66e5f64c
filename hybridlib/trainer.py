"""``gluon.Trainer``: applies an Optimizer to a set of Parameters after ``backward``.

``step(batch_size)`` sums each parameter's gradients over its contexts (through a KVStore when
there are several), scales them by ``1 / batch_size`` and updates every copy of the weight.
With a KVStore and ``update_on_kvstore`` (MXNet's default for several contexts) the store
keeps the weight and the optimizer states and the update runs once, on the store's copy, which
is then copied to every context; otherwise every context runs the same update on its own copy
with its own states.

Differences from MXNet 1.9.1, on purpose:

* A stale gradient (not written by ``backward`` since the last step) is detected before
  anything changes: MXNet raises in the middle of a step, after the KVStore already updated
  the weights and after clearing the flags of the parameters before the stale one.
* With ``update_on_kvstore``, ``ignore_stale_grad=True`` skips the stale parameters (MXNet
  still pushes their old gradients to the store and updates them), and the freshness flags
  are cleared after each step (MXNet never clears them in that mode, so it only ever detects
  stale gradients on the first step).
* ``save_states`` writes MXNet's ``nd.save`` format instead of a pickle (see
  ``optimizer.Updater.get_states``); MXNet's pickled states files are refused with a clear
  error.
* With a distributed KVStore (``dist_sync``, ``dist_device_sync``, ``horovod``: the workers
  of an MPI job) the store is made with the Trainer, not at the first step, and the
  parameters are broadcast from rank 0 then, or right after a deferred initialisation: every
  worker's first forward runs on the same weights (MXNet's first step mixes each worker's own).
  A step sums every trainable parameter's gradient in one fused call. Every worker runs the
  optimizer, so ``step`` may change the batch size (MXNet's servers keep the first).
"""
import os

from . import dist, optimizer as opt, optimizer_states
from .base import MXNetError
from .kvstore import DistKVStore, KVStoreBase, create as create_kvstore, is_distributed
from .parameter import Parameter, ParameterDict
from .serialization import atomic_write

__all__ = ['Trainer']


class Trainer:
    """Applies an Optimizer on a set of Parameters; use with ``autograd``.

    Parameters
    ----------
    params : ParameterDict, dict of str to Parameter, or list of Parameter
        The parameters to optimize (a dict is taken in sorted key order).
    optimizer : str or Optimizer
        An optimizer name for ``mx.optimizer.create``, or an instance.
    optimizer_params : dict, optional
        Keyword arguments of the optimizer (``{'learning_rate': 0.1}``); only with a name.
    kvstore : str, KVStore or None, default 'device'
        How gradients of several contexts are summed; with one context no store is used.
    compression_params : dict, optional
        Gradient compression; not supported (it raises once a store is needed).
    update_on_kvstore : bool, optional
        Update on the KVStore's copy (default when a store is used) or on every context.
        The environment variable ``MXNET_UPDATE_ON_KVSTORE=0`` changes the default.
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore='device',
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(list(params.keys()))]
        if not isinstance(params, (list, tuple)):
            raise ValueError(f'First argument must be a list or dict of Parameters, got '
                             f'{type(params)}.')
        self._params = []
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError(f'First argument must be a list or dict of Parameters, got '
                                 f'list of {type(param)}.')
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params if optimizer_params else {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {'kvstore': kvstore, 'update_on_kvstore': update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._reset_kvstore()
        if isinstance(kvstore, DistKVStore) or isinstance(kvstore, str) and \
                is_distributed(kvstore):
            # at once, not at the first step: every worker's first forward must already run
            # on rank 0's weights (the workers make their Trainers together); a type that is
            # not supported says so here
            self._prepare()

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            assert contexts is None or contexts == ctx, \
                (f'All Parameters must be initialized on the same set of contexts, but '
                 f'Parameter {param.name} is initialized on {ctx} while previous Parameters '
                 f'are initialized on {contexts}.')
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = {i: param for i, param in enumerate(self._params)}
        if isinstance(optimizer, opt.Optimizer):
            assert not optimizer_params, \
                'optimizer_params must be None if optimizer is an instance of Optimizer ' \
                'instead of str'
            self._optimizer = optimizer
            # not a copy: lr_mult/wd_mult changed on a Parameter later still apply
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    # -- the KVStore ------------------------------------------------------------------------------
    def _init_params(self):
        """Put the initialized parameters into the KVStore (deferred ones wait)."""
        assert self._kv_initialized, \
            'Cannot initialize parameters in KVStore when KVStore is not initialized.'
        pending, ready = [], []
        if self._kvstore:
            for param in self._params_to_init:
                (pending if param._deferred_init else ready).append(param)
            if self._distributed:
                for param in pending:
                    dist.broadcast_after_init(param, root=0)
            if self._distributed and ready:
                # one collective call for them all; the workers must agree on what they train
                dist.world().check_same_parameters('the Trainer\'s parameters', ready)
                arrays = [p._check_and_get(p._data, list) for p in ready]
                self._kvstore.broadcast([self._param2idx[p.name] for p in ready],
                                        [a[0] for a in arrays], arrays)
            else:
                for param in ready:
                    arrays = param._check_and_get(param._data, list)
                    self._kvstore.broadcast(self._param2idx[param.name], arrays[0], arrays)
        self._params_to_init = pending

    def _reset_kvstore(self):
        """Forget the KVStore (it is made again, from the current weights, on the next step)."""
        if self._kvstore and 'dist' in self._kvstore.type:
            raise RuntimeError('Cannot reset distributed KVStore.')
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self):
        """Create the KVStore and decide where updates run, as MXNet's ``_create_kvstore``."""
        config = self._kvstore_params
        kvstore, update_on_kvstore = self._create_kvstore(config['kvstore'])
        self._distributed = isinstance(kvstore, DistKVStore)
        if config['update_on_kvstore'] is not None:
            update_on_kvstore = config['update_on_kvstore']
        if update_on_kvstore and kvstore is not None and not kvstore.is_capable('optimizer'):
            if config['update_on_kvstore']:
                raise ValueError(f'Please set update_on_kvstore=False when training with '
                                 f'{type(kvstore)}')
            update_on_kvstore = False
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _create_kvstore(self, kvstore):
        update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', '1')))
        if kvstore is None:
            kv = None
        elif isinstance(kvstore, KVStoreBase):
            kv = kvstore
        elif isinstance(kvstore, str):
            if len(self._contexts) == 1 and not is_distributed(kvstore):
                kv = None       # one device and one worker: nothing to sum
            else:
                kv = create_kvstore(kvstore)
                if kvstore == 'local':
                    # MXNet updates big weights on the devices rather than in CPU memory
                    sizes = [_size(p.shape) for p in self._params]
                    if sizes and max(sizes) > 1024 * 1024 * 16:
                        update_on_kvstore = False
        else:
            raise TypeError('kvstore must be KVStore, str or None')
        if kv is None:
            return None, False
        return kv, update_on_kvstore and kv.is_capable(KVStoreBase.OPTIMIZER)

    # -- learning rate ----------------------------------------------------------------------------
    @property
    def learning_rate(self):
        """The optimizer's current learning rate."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning('Optimizer has to be defined before its learning rate can be '
                              'accessed.')
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        """The Optimizer."""
        if isinstance(self._optimizer, opt.Optimizer):
            return self._optimizer
        raise UserWarning('Optimizer has not been initialized yet')

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate (not with an lr_scheduler)."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning('Optimizer has to be defined before its learning rate is '
                              'mutated.')
        self._optimizer.set_learning_rate(lr)

    # -- stepping ---------------------------------------------------------------------------------
    def _row_sparse_pull(self, parameter, out, row_id, full_idx=False):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._kvstore is None:
            raise MXNetError('row_sparse_pull needs a KVStore and row_sparse parameters, '
                             'which hybridlib does not have')
        self._kvstore.row_sparse_pull(self._param2idx[parameter.name], out=out, row_ids=row_id)

    def _check_and_rescale_grad(self, scale):
        # MXNet refuses a new batch size with a distributed store that updates (its servers
        # kept the first scale); here every worker runs the optimizer, so it takes the new one
        self._optimizer.rescale_grad = scale

    def _prepare(self):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    def step(self, batch_size, ignore_stale_grad=False):
        """One update of every parameter: ``allreduce_grads`` then ``update``.

        Parameters
        ----------
        batch_size : int
            Gradients are scaled by ``1 / batch_size`` (use 1 for a loss that is a mean).
        ignore_stale_grad : bool, default False
            Skip parameters whose gradient ``backward`` has not written since the last step,
            instead of raising.
        """
        self._check_and_rescale_grad(self._scale / batch_size)
        self._prepare()
        fresh = self._fresh_params(ignore_stale_grad)
        self._allreduce_grads(fresh)
        self._update(fresh)

    def allreduce_grads(self):
        """Sum each parameter's gradients over its contexts (into every gradient array).

        For custom processing of the summed gradients (clipping): call it, change the
        gradients, then ``update``. Not available with ``update_on_kvstore``.
        """
        self._prepare()
        assert not (self._kvstore and self._update_on_kvstore), \
            'allreduce_grads() when parameters are updated on kvstore is not supported. ' \
            'Try setting `update_on_kvstore` to False when creating trainer.'
        self._allreduce_grads(self._fresh_params(True, check=False))

    def update(self, batch_size, ignore_stale_grad=False):
        """The update part of ``step`` (after ``allreduce_grads``); see ``step``."""
        self._prepare()
        assert not (self._kvstore and self._update_on_kvstore), \
            'update() when parameters are updated on kvstore is not supported. Try setting ' \
            '`update_on_kvstore` to False when creating trainer.'
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(self._fresh_params(ignore_stale_grad))

    def _fresh_params(self, ignore_stale_grad, check=True):
        """(index, parameter) of the parameters to update; raises on a stale gradient."""
        chosen = []
        for i, param in enumerate(self._params):
            if param.grad_req == 'null':
                continue
            arrays = param._check_and_get(param._data, list)
            if check and not ignore_stale_grad:
                for data in arrays:
                    if not data._fresh_grad:
                        raise UserWarning(
                            f'Gradient of Parameter `{param.name}` on context {data.context} '
                            'has not been updated by backward since last `step`. This could '
                            'mean a bug in your model that made it only use a subset of the '
                            'Parameters (Blocks) for this iteration. If you are intentionally '
                            'only using a subset, call step with ignore_stale_grad=True to '
                            'suppress this warning and skip updating of Parameters with stale '
                            'gradient')
            if not check or not ignore_stale_grad or all(d._fresh_grad for d in arrays):
                chosen.append((i, param))
        return chosen

    def _allreduce_grads(self, params):
        if not self._kvstore:
            return
        if self._distributed:
            # collective: every worker sums every trainable parameter's gradient (stale ones
            # too, as MXNet), so that all make the same calls, and in one call, which packs them
            # into a few large buffers
            params = [(i, p) for i, p in enumerate(self._params) if p.grad_req != 'null']
            keys = [i for i, _ in params]
            grads = [p.list_grad() for _, p in params]
            out = [p.list_data() for _, p in params] if self._update_on_kvstore else None
            self._kvstore.pushpull_gradients(keys, grads, out=out)
            return
        for i, param in params:
            if self._update_on_kvstore:
                self._kvstore.pushpull(i, param.list_grad(), out=param.list_data(),
                                       priority=-i)
            else:
                self._kvstore.pushpull(i, param.list_grad(), priority=-i)

    def _update(self, params):
        loss_scaler = getattr(self, '_amp_loss_scaler', None)
        if loss_scaler is not None and loss_scaler.has_overflow(self._params):
            return  # skip on overflow
        updates = [[] for _ in self._updaters]
        for i, param in params:
            for upd, arr, grad in zip(updates, param.list_data(), param.list_grad()):
                upd.append((i, grad, arr))
                arr._fresh_grad = False
        if self._kvstore and self._update_on_kvstore:
            return          # the KVStore updated the weights in _allreduce_grads
        for updater, upd in zip(self._updaters, updates):
            if upd:
                indices, grads, arrays = zip(*upd)
                updater(list(indices), list(grads), list(arrays))

    # -- states -----------------------------------------------------------------------------------
    def save_states(self, fname):
        """Save the optimizer and its states (momentum, ...) to ``fname``.

        The format is MXNet's ``nd.save`` (see ``optimizer.Updater.get_states``), not
        MXNet's pickle. The Parameters' ``lr_mult``/``wd_mult`` are not saved.
        """
        assert self._optimizer is not None
        self._prepare()
        if self._update_on_kvstore:
            assert not self._params_to_init, \
                'Cannot save trainer states when some parameters are not yet initialized ' \
                'in kvstore.'
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            atomic_write(fname, self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname):
        """Load what ``save_states`` wrote; the optimizer's ``param_dict`` is this Trainer's."""
        self._prepare()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            optimizer_states.load_file(fname, self._updaters)
            for updater in self._updaters:
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = {i: param for i, param in enumerate(self._params)}


def _size(shape):
    n = 1
    for d in shape or ():
        n *= d
    return n
