"""The base of every optimizer (``mx.optimizer.Optimizer``), the optimizer registry
(``register``, ``create``) and what the update rules of ``optimizer.py`` share: a fused update
written straight into the weight (``_fused``), zero states, the inputs of a multi-tensor update
and the ``multi_precision`` mixin of SGD, NAG and LAMB.

``hybridlib.optimizer`` (``mx.optimizer``) serves these names; ``optimizer_contrib.py`` and
user-defined optimizers subclass ``Optimizer`` and ``register`` themselves as the built-in ones
do.
"""
import warnings

import numpy as np

from . import autograd, profiler
from . import ndarray as nd
from .ops import registry

__all__ = ['Optimizer', 'register', 'create']

_F16 = np.float16


class Optimizer:
    """The base class of all optimizers.

    Parameters
    ----------
    rescale_grad : float, default 1
        Gradients are multiplied by this first (a Trainer sets ``1 / batch_size``).
    param_idx2name : dict of int to str, optional
        Parameter names by index; a name not ending in ``_weight`` or ``_gamma`` gets
        ``wd_mult`` 0.
    wd : float, default 0
        Weight decay (L2 regularisation).
    clip_gradient : float, optional
        Clip the (rescaled) gradient into ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional
        The learning rate; overrides ``lr_scheduler.base_lr``; 0.01 without either.
    lr_scheduler : LRScheduler, optional
        Gives the learning rate from the number of updates.
    sym : Symbol, optional
        Its ``__lr_mult__``/``__wd_mult__`` attributes set multipliers by name.
    begin_num_update : int, default 0
        The update count to start from.
    multi_precision : bool, default False
        Keep float32 master copies of float16 weights and update those.
    param_dict : dict of int to Parameter, optional
        Parameters by index, whose ``lr_mult``/``wd_mult`` apply (a Trainer sets it).
    """
    opt_registry = {}

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if self.lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if self.lr_scheduler is not None and learning_rate is not None:
            if self.lr_scheduler.base_lr != learning_rate:
                warnings.warn('learning rate from ``lr_scheduler`` has been overwritten by '
                              '``learning_rate`` in optimizer.', UserWarning, stacklevel=2)
                self.lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        # update counts per device (a Trainer runs one Updater per context), then per index
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        assert isinstance(param_idx2name, dict), \
            'param_idx2name should be a dict of param indexes to names.'
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry -----------------------------------------------------------------------------
    @staticmethod
    def register(klass):
        """Register an optimizer class under its lower-cased name (for ``create``)."""
        assert isinstance(klass, type)
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn(f'WARNING: New optimizer {klass.__module__}.{klass.__name__} is '
                          f'overriding existing optimizer {old.__module__}.{old.__name__}',
                          stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An instance of the optimizer registered as ``name`` (any case)."""
        if name.lower() in Optimizer.opt_registry:
            return Optimizer.opt_registry[name.lower()](**kwargs)
        raise ValueError(f'Cannot find optimizer {name}')

    # -- learning rate --------------------------------------------------------------------------
    @property
    def learning_rate(self):
        """The current learning rate (the scheduler's at ``num_update``, if there is one)."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Set the learning rate; not allowed when an ``lr_scheduler`` sets it."""
        if self.lr_scheduler is not None:
            raise UserWarning('LRScheduler of the optimizer has already been defined. Note '
                              'that set_learning_rate can mutate the value of the learning '
                              'rate of the optimizer only when the LRScheduler of the '
                              'optimizer is undefined.')
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        """[DEPRECATED] Use ``set_lr_mult``."""
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult):
        """Learning-rate multipliers by parameter index or name (``sym``'s ``__lr_mult__``
        attributes first, then these)."""
        self.lr_mult = self._sym_mults('__lr_mult__')
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Weight-decay multipliers by index or name. With ``param_idx2name``, names that do not
        end in ``_weight`` or ``_gamma`` (biases, BatchNorm's beta) get 0."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values()
                        if not (n.endswith('_weight') or n.endswith('_gamma'))}
        self.wd_mult.update(self._sym_mults('__wd_mult__'))
        self.wd_mult.update(args_wd_mult)

    def _sym_mults(self, key):
        attr, arg_names = self.sym_info or ({}, [])
        return {n: float(attr[n][key]) for n in arg_names if key in attr.get(n, {})}

    # -- states ---------------------------------------------------------------------------------
    def create_state(self, index, weight):
        """The state (None, an NDArray or a tuple of them) the update of ``weight`` needs."""

    def create_state_multi_precision(self, index, weight):
        """``(float32 master copy, state of the copy)`` for a float16 weight with
        ``multi_precision``, else ``create_state``."""
        if self.multi_precision and weight.dtype == _F16:
            master = weight.astype(np.float32)
            return (master, self.create_state(index, master))
        if weight.dtype == _F16:
            _warn_float16('')
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Update ``weight`` (in place) from ``grad`` and ``state``."""
        raise NotImplementedError()

    def update_multi_precision(self, index, weight, grad, state):
        """``update``, through the float32 master copy for float16 weights with
        ``multi_precision``."""
        if self.multi_precision and weight.dtype == _F16:
            master, original_state = state[0], state[1]
            self.update(index, master, grad.astype(np.float32), original_state)
            nd.cast(master, dtype=weight.dtype, out=weight)
        else:
            self.update(index, weight, grad, state)

    # -- bookkeeping ----------------------------------------------------------------------------
    def _set_current_context(self, device_id):
        """Count updates of the device ``device_id`` from now on."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index):
        """Count one update of each index; ``num_update`` is the largest count."""
        if not isinstance(index, (list, tuple)):
            index = [index]
        for idx in index:
            if idx not in self._index_update_count:
                self._index_update_count[idx] = self.begin_num_update
            self._index_update_count[idx] += 1
            self.num_update = max(self._index_update_count[idx], self.num_update)

    def _get_lrs(self, indices):
        """The learning rates of ``indices``: the current rate times each ``lr_mult``."""
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        return [lr * self._mult(index, self.lr_mult, 'lr_mult') for index in indices]

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        """The weight decays of ``indices``: ``wd`` times each ``wd_mult``."""
        return [self.wd * self._mult(index, self.wd_mult, 'wd_mult') for index in indices]

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    def _mult(self, index, table, attr):
        # a Parameter's multiplier wins, then one set by index, then one set by name
        if index in self.param_dict:
            return getattr(self.param_dict[index], attr)
        if index in table:
            return table[index]
        if index in self.idx2name:
            return table.get(self.idx2name[index], 1.0)
        return 1.0

    def _count_and_rates(self, index):
        """Count an update of ``index``; its (learning rate, weight decay)."""
        self._update_count(index)
        return self._get_lr(index), self._get_wd(index)

    def _op_kwargs(self, momentum=False, **kwargs):
        """Keyword arguments of a fused update: rescale_grad, clip_gradient and momentum when
        set (MXNet passes them only then)."""
        kwargs['rescale_grad'] = self.rescale_grad
        if self.clip_gradient:
            kwargs['clip_gradient'] = self.clip_gradient
        if momentum and self.momentum > 0:
            kwargs['momentum'] = self.momentum
        return kwargs

    def _clip(self, grad):
        """``grad`` clipped into [-clip_gradient, clip_gradient] unless that is None."""
        if self.clip_gradient is None:
            return grad
        return nd.clip(grad, -self.clip_gradient, self.clip_gradient)

    def _rescale_and_clip(self, grad):
        """``clip(grad * rescale_grad)`` with NDArray operators (a new array)."""
        return self._clip(grad * self.rescale_grad)

    def __getstate__(self):
        state = self.__dict__.copy()
        del state['param_dict']      # Parameters are the Trainer's, not the optimizer's
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}


register = Optimizer.register
create = Optimizer.create_optimizer


def _warn_float16(name):
    warnings.warn('Accumulating with float16 in optimizer can lead to poor accuracy or slow '
                  'convergence. Consider using multi_precision=True option of the '
                  f'{name + " " if name else ""}optimizer', stacklevel=3)


_PARSED = {}        # (operator, attribute values) -> parsed attributes
_CHECKED = set()    # (operator, the inputs' contexts, shapes and dtypes) checked once


def _fused(name, weight, *arrays, **attrs):
    """``nd.<name>(weight, *arrays, out=weight, **attrs)``: a fused update written straight
    into the weight, its attributes parsed once per distinct set (a step repeats them for
    every parameter). An update's result has its weight's shape and dtype whatever the
    attributes, so once the full call (``_invoke_into``: shape and dtype inference, contexts,
    layout) has accepted a signature of inputs, later updates with that signature run the
    operator's body straight away: the Python work of a step is a few checks per weight."""
    key = (name, tuple(attrs.items()))
    parsed = _PARSED.get(key)
    if parsed is None:
        if len(_PARSED) >= 1024:        # a learning-rate schedule makes new sets: forget
            _PARSED.clear()
        op = registry.get(name)
        parsed = _PARSED[key] = (op, op.parse_attrs(attrs))
    op, params = parsed
    inputs = (weight,) + arrays
    try:
        datas = [x._data for x in inputs]
        signature = (name,) + tuple((x._ctx, d.shape, d.dtype) for x, d in zip(inputs, datas))
    except AttributeError:          # not NDArrays: the full call says what is wrong
        signature = None
    if signature in _CHECKED and weight._ctx.device_type == 'cpu' and not op.train_aware \
            and _direct(datas):
        op.compute(np, params, *datas, out=datas[0])
        return
    if nd._invoke_into(op, list(inputs), params, weight) is None:
        getattr(nd, name)(weight, *arrays, out=weight, **attrs)
    elif signature is not None:
        _CHECKED.add(signature)


def _direct(datas):
    """Whether an update may skip the full call: nothing recorded or profiled, the weight
    C-contiguous and no other input sharing its memory."""
    out = datas[0]
    return not (autograd.is_recording() or profiler.active.imperative) and \
        out.flags.c_contiguous and not any(np.may_share_memory(d, out) for d in datas[1:])


def _zeros(weight, count=None, dtype=np.float32):
    """Zero arrays of ``weight``'s shape and context: one, or a tuple of ``count``. float32 by
    default, as MXNet's ``zeros`` without a dtype."""
    if count is None:
        return nd.zeros(weight.shape, weight.context, dtype=dtype)
    return tuple(_zeros(weight, dtype=dtype) for _ in range(count))


def _interleave(*lists):
    """``[a0, b0, ..., a1, b1, ...]``: the inputs of a multi-tensor update."""
    return [x for group in zip(*lists) for x in group]


def _as_lists(indices, weights, grads, states):
    if isinstance(indices, (tuple, list)):
        return list(indices), list(weights), list(grads), list(states)
    return [indices], [weights], [grads], [states]


class _ImplUpdate:
    """Mixin: ``update`` and ``update_multi_precision`` both run ``_update_impl``, which
    updates through the master copy when told to (SGD, NAG, LAMB)."""

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        first = weight[0] if isinstance(index, (tuple, list)) else weight
        self._update_impl(index, weight, grad, state,
                          multi_precision=self._use_master(first, state))

    def _use_master(self, weight, state):
        return self.multi_precision and weight.dtype == _F16
