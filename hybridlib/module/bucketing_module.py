"""``BucketingModule``: one Module per bucket (input length), all sharing one set of
parameters.

Variable-length data (sentences) is batched into buckets of equal length; ``sym_gen(key)``
builds the graph of a bucket. The default bucket's module is bound first and owns the
parameters; every other bucket's module is bound over them (``shared_module``), so training
any bucket trains all. A batch's ``bucket_key`` picks the module (``switch_bucket``).
"""
import logging
import warnings

import numpy as np

from .. import context as ctx
from .. import ndarray as nd
from .. import symbol as sym
from ..initializer import Uniform
from ..model import load_params
from ..name import NameManager
from .base_module import BaseModule, _check, _input_names
from .module import Module

__all__ = ['BucketingModule']


class BucketingModule(BaseModule):
    """A module that switches between the graphs of several buckets, sharing parameters.

    Parameters
    ----------
    sym_gen : callable
        ``sym_gen(bucket_key)`` returns ``(symbol, data_names, label_names)`` (label_names may
        be None).
    default_bucket_key : hashable
        The bucket bound first, which owns the parameters and memory: best the largest one.
    logger : logging.Logger, default logging
    context, work_load_list, fixed_param_names, state_names, group2ctxs, compression_params
        As for ``Module``, for every bucket.
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=ctx.cpu(),
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        _check(default_bucket_key is not None, 'BucketingModule needs a default_bucket_key')
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen

        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        _, _, state_names, fixed_param_names = _input_names(
            symbol, data_names, label_names, state_names, fixed_param_names)

        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        self._context = context
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _reset_bind(self):
        """Forget every bucket's module."""
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _new_module(self, symbol, data_names, label_names):
        """A Module of one bucket's graph, with this module's settings."""
        return Module(symbol, data_names, label_names, logger=self.logger,
                      context=self._context, work_load_list=self._work_load_list,
                      fixed_param_names=self._fixed_param_names, state_names=self._state_names,
                      group2ctxs=self._group2ctxs, compression_params=self._compression_params)

    def _call_sym_gen(self, *args, **kwargs):
        # a fresh name scope: every bucket's graph gets the same automatic names
        with NameManager():
            return self._sym_gen(*args, **kwargs)

    @property
    def data_names(self):
        """The data inputs of the current (or, unbound, the default) bucket."""
        if self.binded:
            return self._curr_module.data_names
        _, data_names, _ = self._call_sym_gen(self._default_bucket_key)
        return data_names

    @property
    def output_names(self):
        """The outputs of the current (or, unbound, the default) bucket."""
        if self.binded:
            return self._curr_module.output_names
        symbol, _, _ = self._call_sym_gen(self._default_bucket_key)
        return symbol.list_outputs()

    @property
    def data_shapes(self):
        """The current bucket's data DataDescs."""
        self._check_bound('data_shapes')
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        """The current bucket's label DataDescs."""
        self._check_bound('label_shapes')
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        """The current bucket's output shapes."""
        self._check_bound('output_shapes')
        return self._curr_module.output_shapes

    def get_params(self):
        """``(arg_params, aux_params)`` of the shared parameters, on CPU."""
        _check(self.params_initialized, 'get_params: the parameters are not initialized; call '
               'init_params first')
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter values (see ``BaseModule.set_params``)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init)
            return
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. set_params '
                          'call ignored.', stacklevel=2)
            return
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                     force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the shared parameters (see ``Module.init_params``)."""
        if self.params_initialized and not force_init:
            return
        _check(self.binded, 'call bind before initializing the parameters')
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        """The current bucket's state arrays."""
        self._check_ready('get_states')
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the current bucket's states."""
        self._check_ready('set_states')
        self._curr_module.set_states(states, value)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind the default bucket (see ``BaseModule.bind``); ``shared_module`` is not
        supported."""
        # in case we already initialized params, keep them
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        _check(shared_module is None, 'shared_module for BucketingModule is not supported')
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.binded = True
        self._grad_req = grad_req

        symbol, data_names, label_names = self._call_sym_gen(self._default_bucket_key)
        if self._default_bucket_key not in self._buckets:
            module = self._new_module(symbol, data_names, label_names)
        else:
            module = self._buckets[self._default_bucket_key]
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=self._grad_req)
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if self.params_initialized:
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key``'s module current, binding it (over the default bucket's
        parameters) the first time.

        Parameters
        ----------
        bucket_key : hashable
            The bucket.
        data_shapes, label_shapes : list of DataDesc or (str, tuple)
            Its input shapes (used when it is bound).
        """
        _check(self.binded, 'call bind before switching bucket')
        module = self._buckets.get(bucket_key)
        if module is None:
            module = self._new_module(*self._call_sym_gen(bucket_key))
        if not module.binded:
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=self._buckets[self._default_bucket_key],
                        grad_req=self._grad_req)
        if bucket_key not in self._buckets:
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Install the optimizer on the current bucket; the others borrow it."""
        if self._skip_init_optimizer(force_init):
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for mod in self._buckets.values():
            if mod is not self._curr_module:
                mod.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Bind the batch's bucket if needed (keeping the current bucket current)."""
        self._check_ready('prepare')
        bucket_key = data_batch.bucket_key
        original_bucket_key = self._curr_bucket_key
        self.switch_bucket(bucket_key, data_batch.provide_data, data_batch.provide_label)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original_bucket_key, None, None)

    def forward(self, data_batch, is_train=None):
        """Switch to the batch's bucket (``data_batch.bucket_key``) and run forward."""
        self._check_ready('forward')
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        """Backward computation of the current bucket."""
        self._check_ready('backward')
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        """Update the shared parameters."""
        self._check_updatable()
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        """The current bucket's outputs."""
        self._check_ready('get_outputs')
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The current bucket's input gradients."""
        self._check_input_grads()
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` over the current bucket's outputs."""
        self._check_ready('update_metric')
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    @property
    def symbol(self):
        """The current bucket's Symbol."""
        self._check_bound('symbol')
        return self._curr_module.symbol

    def install_monitor(self, mon):
        """Install a ``Monitor`` on every bucket (and those bound later)."""
        self._check_bound('install_monitor')
        self._monitor = mon
        for mod in self._buckets.values():
            mod.install_monitor(mon)

    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Save the parameters (``prefix-%04d.params``), each bucket's symbol
        (``prefix-<key>-symbol.json``) and the bucket keys (``prefix.buckets``)."""
        _check(len(self._buckets) > 0, 'Empty BucketingModule cannot be saved')
        param_name = '%s-%04d.params' % (prefix, epoch)
        self.save_params(param_name)
        for bucket_key in self._buckets:
            symbol, _, _ = self._sym_gen(bucket_key)
            symbol.save('%s-%s-symbol.json' % (prefix, bucket_key),
                        remove_amp_cast=remove_amp_cast)
        nd.save('%s.buckets' % prefix, nd.array(list(self._buckets.keys()), dtype=np.int32))

    def _adopt_params(self, arg_params, aux_params):
        """Give the default bucket's module the loaded parameters (``load``, ``load_dict``)."""
        self._curr_module._arg_params = arg_params
        self._curr_module._aux_params = aux_params
        self._curr_module.params_initialized = True
        self.params_initialized = True

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule of a ``save_checkpoint``; ``sym_gen`` and
        ``default_bucket_key`` are required, ``kwargs`` go to the modules."""
        _check(sym_gen is not None, 'sym_gen is required for loading BucketingModule')
        _check(default_bucket_key is not None,
               'default_bucket_key is required for loading BucketingModule')
        buckets = nd.load('%s.buckets' % prefix)
        buckets = list(buckets[0].asnumpy().astype('int32'))
        bucketing_mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for bucket_key in buckets:
            _, data_names, label_names = sym_gen(bucket_key)
            symbol = sym.load('%s-%s-symbol.json' % (prefix, bucket_key))
            bucketing_mod._buckets[bucket_key] = Module(symbol, data_names, label_names,
                                                        **kwargs)
            if bucket_key == default_bucket_key:
                bucketing_mod._curr_module = bucketing_mod._buckets[bucket_key]
        arg_params, aux_params = load_params(prefix, epoch)
        bucketing_mod._adopt_params(arg_params, aux_params)
        return bucketing_mod

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None,
                  aux_params=None, **kwargs):
        """A BucketingModule from symbols by bucket key and parameter dicts."""
        _check(sym_dict is not None,
               'sym_dict needs to be provided for BucketingModule.load_dict')
        _check(arg_params is not None,
               'arg_params need to be provided for BucketingModule.load_dict')
        _check(aux_params is not None,
               'aux_params need to be provided for BucketingModule.load_dict')
        _check(default_bucket_key is not None,
               'default_bucket_key needs to be provided for BucketingModule.load_dict')
        bucketing_mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for bucket_key, loaded_sym in sym_dict.items():
            _, data_names, label_names = sym_gen(default_bucket_key)
            bucketing_mod._buckets[bucket_key] = Module(loaded_sym, data_names, label_names,
                                                        **kwargs)
            if bucket_key == default_bucket_key:
                bucketing_mod._curr_module = bucketing_mod._buckets[bucket_key]
        bucketing_mod._adopt_params(arg_params, aux_params)
        return bucketing_mod
