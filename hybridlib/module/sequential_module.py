"""``SequentialModule``: modules chained so that each one's outputs are the next one's data."""
import copy
import logging

from ..base import MXNetAssertionError
from ..initializer import Uniform
from .base_module import BaseModule, _check

__all__ = ['SequentialModule']


class SequentialModule(BaseModule):
    """A chain of modules: forward runs them in order, backward in reverse, feeding each
    module's input gradients to the one before.

    ``add(module, take_labels=True)`` gives a module the labels (and makes its metric count);
    ``add(module, auto_wiring=True)`` renames the previous outputs to the module's data names.

    Parameters
    ----------
    logger : logging.Logger, default logging
    """
    META_TAKE_LABELS = 'take_labels'
    META_AUTO_WIRING = 'auto_wiring'

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {getattr(SequentialModule, x) for x in dir(SequentialModule)
                           if x.startswith('META_')}

    def add(self, module, **kwargs):
        """Append ``module`` (with meta flags ``take_labels``, ``auto_wiring``); returns self,
        so that calls chain. The chain has to be bound and initialized again."""
        self._modules.append(module)
        for key in kwargs:
            _check(key in self._meta_keys, 'Unknown meta "%s", a typo?' % key)
        self._metas.append(kwargs)
        # after adding new modules, we are reset back to raw states, needs to bind, init_params
        self.binded = False
        self.params_initialized = False
        self.optimizer_initialized = False
        return self

    @property
    def data_names(self):
        """The first module's data names."""
        if self._modules:
            return self._modules[0].data_names
        return []

    @property
    def output_names(self):
        """The last module's output names."""
        if self._modules:
            return self._modules[-1].output_names
        return []

    @property
    def data_shapes(self):
        """The first module's data shapes."""
        self._check_bound('data_shapes')
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        """The label shapes (None when no module takes labels)."""
        self._check_bound('label_shapes')
        return self._label_shapes

    @property
    def output_shapes(self):
        """The last module's output shapes."""
        self._check_bound('output_shapes')
        return self._modules[-1].output_shapes

    def get_params(self):
        """The parameters of all modules, in two dicts."""
        self._check_ready('get_params')
        arg_params = dict()
        aux_params = dict()
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return (arg_params, aux_params)

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize every module's parameters; two modules may not share a name."""
        if self.params_initialized and not force_init:
            return
        _check(self.binded, 'call bind before initializing the parameters')
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=allow_extra)

        def _check_name(known_names, new_names, modules, i):
            """Internal function to help checking duplicated names."""
            for name in new_names:
                if name in known_names:
                    raise MXNetAssertionError(
                        'Duplicated parameter names: name "%s" in layer %d (%s) is already '
                        'used in layer %d (%s).' % (name, i, type(modules[i]), known_names[name],
                                                    type(modules[known_names[name]])))
                known_names[name] = i

        arg_names = dict()
        aux_names = dict()
        for i_layer, module in enumerate(self._modules):
            arg_params, aux_params = module.get_params()
            _check_name(arg_names, arg_params.keys(), self._modules, i_layer)
            _check_name(aux_names, aux_params.keys(), self._modules, i_layer)
        self.params_initialized = True

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind each module for the previous one's output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if inputs_need_grad:
            _check(for_training is True, 'bind: inputs_need_grad needs for_training=True')
        _check(shared_module is None, 'Shared module is not supported')
        _check(len(self._modules) > 0, 'Attempting to bind an empty SequentialModule')
        self.binded = True
        # the same label shapes are used for all chained modules
        self._label_shapes = label_shapes
        my_data_shapes = data_shapes
        anybody_ever_needs_label = False
        for i_layer, module in enumerate(self._modules):
            meta = self._metas[i_layer]
            if meta.get(SequentialModule.META_TAKE_LABELS):
                my_label_shapes = label_shapes
                anybody_ever_needs_label = True
            else:
                my_label_shapes = None
            my_inputs_need_grad = bool(inputs_need_grad or (for_training and i_layer > 0))
            if meta.get(SequentialModule.META_AUTO_WIRING, False):
                data_names = module.data_names
                _check(len(data_names) == len(my_data_shapes),
                       f'auto_wiring: module {i_layer} takes {len(data_names)} inputs, the '
                       f'previous one gives {len(my_data_shapes)}')
                my_data_shapes = [(new_name, shape)
                                  for (new_name, (_, shape)) in zip(data_names, my_data_shapes)]
            module.bind(data_shapes=my_data_shapes, label_shapes=my_label_shapes,
                        for_training=for_training, inputs_need_grad=my_inputs_need_grad,
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            # the output of the previous module is the data of the next module
            my_data_shapes = module.output_shapes
        if not anybody_ever_needs_label:
            # then I do not need label either
            self._label_shapes = None

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Install the optimizer on every module."""
        if self._skip_init_optimizer(force_init):
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None):
        """Run the modules in order, each on the previous one's outputs."""
        self._check_ready('forward')
        # make a shallow copy, just to maintain necessary properties (if any) like
        # bucket_key, pad, etc.
        data_batch = copy.copy(data_batch)
        for i_layer, module in enumerate(self._modules):
            module.forward(data_batch, is_train=is_train)
            if i_layer + 1 == len(self._modules):
                # the last layer, do not need to do the followings
                break
            data_batch.data = module.get_outputs()
            if hasattr(data_batch, 'provide_data'):
                # need to update this, in case the internal module is using bucketing
                # or whatever
                data_names = [x[0] for x in module.output_shapes]
                _check(len(data_names) == len(data_batch.data),
                       f'module {i_layer} gives {len(data_batch.data)} outputs for output '
                       f'shapes {module.output_shapes}')
                data_batch.provide_data = [(name, x.shape)
                                           for name, x in zip(data_names, data_batch.data)]

    def backward(self, out_grads=None):
        """Run backward from the last module to the first."""
        self._check_ready('backward')
        for i_layer, module in reversed(list(zip(range(len(self._modules)), self._modules))):
            module.backward(out_grads=out_grads)
            if i_layer == 0:
                break
            out_grads = module.get_input_grads()

    def update(self):
        """Update every module's parameters."""
        self._check_updatable()
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        """The last module's outputs."""
        self._check_ready('get_outputs')
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The first module's input gradients."""
        self._check_input_grads()
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the modules that take labels."""
        self._check_ready('update_metric')
        for meta, module in zip(self._metas, self._modules):
            if meta.get(SequentialModule.META_TAKE_LABELS):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install a ``Monitor`` on every module."""
        self._check_bound('install_monitor')
        for module in self._modules:
            module.install_monitor(mon)
