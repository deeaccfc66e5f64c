"""Optimizers (``mx.optimizer``): MXNet 1.9.1's update rules, states and bookkeeping.

An ``Optimizer`` turns (index, weight, gradient, state) into an updated weight. Where MXNet
calls a fused update operator (``sgd_mom_update``, ``adam_update``, ...; ``ops/optimizer.py``),
so does hybridlib, with ``out=weight``, so an update is one operator call on the weight's
context; the others (AdaDelta, Adamax, Nadam, DCASGD, SGLD) are written with NDArray operators,
as in MXNet. Where MXNet updates a batch of weights with one multi-tensor operator, so does
hybridlib for LARS (``multi_sum_sq``, ``multi_lars``, ``preloaded_multi_*sgd*``) and for SGD's
``multi_precision`` updates (``multi_mp_sgd*``); SGD's plain updates stay one fused operator per
weight written in place (the same numbers as MXNet's ``multi_sgd*``, without copies).
``Updater`` keeps the per-index states for a KVStore or a Trainer and saves them.
``mx.optimizer.contrib`` (GroupAdaGrad) is ``optimizer_contrib.py``.

The per-parameter learning rate is ``lr * lr_mult`` and weight decay ``wd * wd_mult``, the
multipliers coming from the Trainer's Parameters (``param_dict``), from ``set_lr_mult`` /
``set_wd_mult`` (by index or name) or from the ``__lr_mult__``/``__wd_mult__`` attributes of
``sym``. ``multi_precision=True`` keeps a float32 master copy of float16 weights.

Differences from MXNet 1.9.1, on purpose:

* ``Updater.get_states``/``set_states`` (and so ``Trainer.save_states``) write MXNet's
  ``nd.save`` format instead of a pickle (below). MXNet's pickled state files are refused with
  a clear error (unpickling runs arbitrary code).
* ``Nadam`` keeps its momentum schedule per weight (MXNet multiplies one shared schedule once
  per weight *and* step, so with several weights its bias correction goes wrong); the numbers
  agree with MXNet for a single weight.
* ``AdaDelta`` does not scale the caller's gradient array in place; ``DCASGD`` with momentum
  works (MXNet tests ``if mom:`` on an array and fails).
* ``AdaGrad`` (dense) uses the fused ``_sparse_adagrad_update`` (MXNet: NDArray operators, same
  formula).
* ``LBSGD`` accumulating gradients (``batch_scale`` > 1) keeps a copy of the first gradient
  (MXNet keeps the gradient buffer itself, which the next backward pass overwrites, so it
  counts the next gradient twice), and leaves the weight alone between updates (MXNet runs an
  ``sgd_update`` with learning rate 0, which turns weights into NaN where a gradient is not
  finite).

The states file is a dict of NDArrays (``nd.load`` reads it, MXNet's too):
``"__hybridlib_states__"`` is a uint8 array holding UTF-8 JSON
``{"format": 1, "states": ..., "optimizer": ...}`` that describes the structure: ``states``
maps each index to its state, where an array is ``{"ndarray": name}`` (naming an entry of the
file), a tuple ``{"tuple": [...]}``, a dict ``{"dict": [[key, value], ...]}``; ``optimizer``
is null or ``{"class": "module:QualName", "attrs": {...}}`` (an LRScheduler attribute as
``{"object": "module:QualName", "attrs": ...}``). The arrays are named ``state/<index>`` for
an array state and ``state/<index>/<i>`` (``/<j>``, ...) for the elements of tuple states;
arrays held by optimizer attributes are named ``optimizer/<attr>...``. Classes are looked up
among those already defined, never imported.
"""
import json
import math
import os
import warnings

import numpy as np

from . import ndarray as nd
from .base import MXNetError, NotSupportedError
from .ops import registry
from .lr_scheduler import LRScheduler
from .ndarray import NDArray

__all__ = ['AdaDelta', 'AdaGrad', 'Adam', 'Adamax', 'DCASGD', 'FTML', 'Ftrl', 'LAMB', 'LARS',
           'LBSGD', 'NAG', 'NDabs', 'Nadam', 'Optimizer', 'RMSProp', 'SGD', 'SGLD', 'Signum',
           'Test', 'Updater', 'ccSGD', 'create', 'get_updater', 'register', 'contrib']

NDabs = nd.abs      # MXNet's optimizer module exports nd.abs under this name

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
            return (master,) + (self.create_state(index, master),)
        if weight.dtype == _F16 and not self.multi_precision:
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


def _fused(name, weight, *arrays, **attrs):
    """``nd.<name>(weight, *arrays, out=weight, **attrs)``: a fused update written straight
    into the weight, its attributes parsed once per distinct set (a step repeats them for
    every parameter)."""
    key = (name, tuple(attrs.items()))
    parsed = _PARSED.get(key)
    if parsed is None:
        if len(_PARSED) >= 1024:        # a learning-rate schedule makes new sets: forget
            _PARSED.clear()
        op = registry.get(name)
        parsed = _PARSED[key] = (op, op.parse_attrs(attrs))
    if nd._invoke_into(parsed[0], [weight, *arrays], parsed[1], weight) is None:
        getattr(nd, name)(weight, *arrays, out=weight, **attrs)


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


class _MomentumSGD(_ImplUpdate):
    """Mixin of SGD and NAG: an optional momentum state, ``multi_precision`` states
    ``(momentum, float32 master copy)``, and four fused operators ``_OPS``: plain, with
    momentum, and their ``mp_`` forms."""

    def create_state_multi_precision(self, index, weight):
        if self.multi_precision and weight.dtype == _F16:
            master = weight.astype(np.float32)
            return (self.create_state(index, master), master)
        if weight.dtype == _F16 and not self.multi_precision:
            _warn_float16(type(self).__name__)
        return self.create_state(index, weight)

    def create_state(self, index, weight):
        return _zeros(weight, dtype=weight.dtype) if self.momentum != 0.0 else None

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        indices, weights, grads, states = _as_lists(indices, weights, grads, states)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        if multi_precision:
            self._update_masters(weights, grads, states, lrs, wds,
                                 self._op_kwargs(momentum=True))
            return
        kwargs = self._op_kwargs(momentum=True, **self._extra_kwargs())
        plain, mom = self._OPS[:2]
        for weight, grad, state, lr, wd in zip(weights, grads, states, lrs, wds):
            if state is not None:
                _fused(mom, weight, grad, state, lr=lr, wd=wd, **kwargs)
            else:
                _fused(plain, weight, grad, lr=lr, wd=wd, **kwargs)

    def _update_masters(self, weights, grads, states, lrs, wds, kwargs):
        """float16 weights through their float32 master copies, one ``mp_`` update each."""
        mp_plain, mp_mom = self._OPS[2:]
        for weight, grad, (mom, master), lr, wd in zip(weights, grads, states, lrs, wds):
            if mom is not None:
                getattr(nd, mp_mom)(weight, grad, mom, master, out=weight, lr=lr, wd=wd, **kwargs)
            else:
                getattr(nd, mp_plain)(weight, grad, master, out=weight, lr=lr, wd=wd, **kwargs)

    def _extra_kwargs(self):
        return {}


@register
class SGD(_MomentumSGD, Optimizer):
    """SGD with momentum and weight decay (``sgd_update``, ``sgd_mom_update`` and their ``mp_``
    forms)::

        state = momentum * state + lr * (rescale_grad * clip(grad) + wd * weight)
        weight = weight - state

    Parameters
    ----------
    momentum : float, default 0
    lazy_update : bool, default True
        Only matters for row_sparse gradients (not supported here).
    multi_precision : bool, default False
        Update float32 master copies of float16 weights.
    """
    _OPS = ('sgd_update', 'sgd_mom_update', 'mp_sgd_update', 'mp_sgd_mom_update')

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv('MXNET_OPTIMIZER_AGGREGATION_SIZE', '4'))

    def _extra_kwargs(self):
        return {'lazy_update': self.lazy_update}

    def _update_masters(self, weights, grads, states, lrs, wds, kwargs):
        # as MXNet: one multi-tensor update for the batch the Updater aggregated
        moms, masters = zip(*states)
        if self.momentum > 0:
            nd.multi_mp_sgd_mom_update(*_interleave(weights, grads, moms, masters), out=weights,
                                       num_weights=len(weights), lrs=lrs, wds=wds, **kwargs)
        else:
            nd.multi_mp_sgd_update(*_interleave(weights, grads, masters), out=weights,
                                   num_weights=len(weights), lrs=lrs, wds=wds, **kwargs)


@register
class Signum(Optimizer):
    """Signum (``signum_update``; ``signsgd_update`` without momentum)::

        state = momentum * state + (1 - momentum) * (rescale_grad * clip(grad) + wd * weight)
        weight = (1 - lr * wd_lh) * weight - lr * sign(state)

    Parameters
    ----------
    learning_rate : float, default 0.01
    momentum : float, default 0.9
    wd_lh : float, default 0
        Decoupled weight decay.
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        return _zeros(weight, dtype=weight.dtype) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        kwargs = self._op_kwargs(momentum=True)
        if state is not None:
            if self.wd_lh:
                kwargs['wd_lh'] = self.wd_lh
            nd.signum_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
        else:
            nd.signsgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)


@register
class FTML(Optimizer):
    """FTML, *Follow the Moving Leader* (``ftml_update``).

    Parameters
    ----------
    beta1, beta2, epsilon : float, default 0.6, 0.999, 1e-8
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return _zeros(weight, 3, weight.dtype)      # d, v, z

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        kwargs = dict(beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
                      rescale_grad=self.rescale_grad, t=self._index_update_count[index])
        if self.clip_gradient:
            kwargs['clip_grad'] = self.clip_gradient
        nd.ftml_update(weight, grad, *state, out=weight, lr=lr, wd=wd, **kwargs)


def _keeps_plain_rate(name):
    """LARS leaves the rates of biases and BatchNorm's gamma and beta alone."""
    return name.endswith(('gamma', 'beta', 'bias'))


@register
class LARS(_MomentumSGD, Optimizer):
    """LARS, layer-wise adaptive rate scaling (You et al., *Large Batch Training of
    Convolutional Networks*): SGD with momentum whose learning rate is scaled per weight by
    ``eta * ||w|| / (||g|| * rescale_grad + wd * ||w|| + eps)`` (when both norms are
    positive), as MXNet computes it: ``multi_sum_sq`` and ``multi_lars``, then the
    ``preloaded_multi_*sgd*`` updates in batches of ``aggregate_num``. Weights whose name (from
    ``param_idx2name``) ends in 'gamma', 'beta' or 'bias' keep the plain rate; those not ending
    in '_weight' get no weight decay.

    Parameters
    ----------
    momentum : float, default 0
    lazy_update : bool, default True
        Only matters for row_sparse gradients (not supported here).
    eta : float, default 0.001
        The LARS coefficient.
    eps : float, default 0
        Added to the denominator of the ratio.
    momentum_correction : bool, default True
        Scale the momentum by the ratio of this step's learning rate to the last one's (Goyal
        et al., with a learning-rate schedule).
    multi_precision : bool, default False
        Update float32 master copies of float16 weights (states ``(momentum, master)``).
    """

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv('MXNET_OPTIMIZER_AGGREGATION_SIZE', '4'))
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        # remember this step's rate and the last one's, for the momentum correction
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        self.last_lr = lr if self.cur_lr is None else self.cur_lr
        self.cur_lr = lr
        return [lr * self._mult(index, self.lr_mult, 'lr_mult') for index in indices]

    def set_wd_mult(self, args_wd_mult):
        """As ``Optimizer.set_wd_mult``, but every name not ending in '_weight' (BatchNorm's
        gamma too) gets ``wd_mult`` 0."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not n.endswith('_weight')}
        self.wd_mult.update(self._sym_mults('__wd_mult__'))
        self.wd_mult.update(args_wd_mult)

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        indices, weights, grads, states = _as_lists(indices, weights, grads, states)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        kwargs = {'rescale_grad': self.rescale_grad}
        if self.momentum > 0:
            correct = self.momentum_correction and self.last_lr != 0
            kwargs['momentum'] = (self.momentum * (self.cur_lr / self.last_lr) if correct
                                  else self.momentum)
        if self.clip_gradient:
            kwargs['clip_gradient'] = self.clip_gradient
        # the weights LARS scales first, then the others
        plain = [_keeps_plain_rate(self.idx2name.get(i, str(i))) for i in indices]
        order = sorted(range(len(indices)), key=lambda k: plain[k])
        count = plain.count(False)
        ctx = weights[0].context
        lrs = nd.array([lrs[k] for k in order], ctx=ctx, dtype='float32')
        wds = nd.array([wds[k] for k in order], ctx=ctx, dtype='float32')
        weights, grads, states = ([seq[k] for k in order] for seq in (weights, grads, states))
        if count:
            nd.multi_lars(lrs[:count], nd.multi_sum_sq(*weights[:count], num_arrays=count),
                          nd.multi_sum_sq(*grads[:count], num_arrays=count), wds[:count],
                          eta=self.eta, eps=self.eps, rescale_grad=self.rescale_grad,
                          out=lrs[:count])
        step = max(self.aggregate_num, 1)
        for start in range(0, len(weights), step):
            part = slice(start, start + step)
            w, g, s = weights[part], grads[part], states[part]
            if multi_precision:
                moms, masters = zip(*s)
                lists = (w, g, moms, masters) if self.momentum > 0 else (w, g, masters)
                name = 'mp_sgd_mom' if self.momentum > 0 else 'mp_sgd'
            else:
                lists = (w, g, s) if self.momentum > 0 else (w, g)
                name = 'sgd_mom' if self.momentum > 0 else 'sgd'
            getattr(nd, f'preloaded_multi_{name}_update')(
                *_interleave(*lists), lrs[part], wds[part], out=w, num_weights=len(w),
                **kwargs)


@register
class LBSGD(Optimizer):
    """Large-batch SGD: SGD with momentum and a warmup of the learning rate, which can also
    emulate batches ``batch_scale`` times larger by accumulating gradients (only every
    ``batch_scale``-th update of a weight changes it, with the mean of the gradients since).

    The rate of an update is multiplied, after ``u`` accumulated updates and ``W =
    warmup_epochs * updates_per_epoch``, by ``1 + (batch_scale - 1) * f(u / W)`` while u < W
    and by ``batch_scale`` after, ``f(x)`` being x ('linear'), x^2 ('power2') or sqrt(x)
    ('sqrt'); with 'lars' by ``sqrt(|w|^2 / (|g|^2 + wd |w|^2))`` clipped into [0.01, 100];
    any other strategy keeps it. The updates are ``sgd_mom_update``/``sgd_update`` (``mp_``
    with ``multi_precision``).

    Parameters
    ----------
    momentum : float, default 0
    multi_precision : bool, default False
    warmup_strategy : str, default 'linear'
    warmup_epochs : int, default 5
    batch_scale : int, default 1
    updates_per_epoch : int, default 32
    begin_epoch : int, default 0
        Accumulated updates start from ``begin_epoch * updates_per_epoch``.
    num_epochs : int, default 60
    """

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy='linear',
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.multi_precision = multi_precision
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index, weight):
        if self.multi_precision and weight.dtype == _F16:
            mom = _zeros(weight) if self.momentum != 0.0 else None
            return (mom, weight.astype(np.float32))
        if weight.dtype == _F16:
            _warn_float16('SGD')
        return _zeros(weight, dtype=weight.dtype) if self.momentum != 0.0 else None

    def _get_lbmult(self, nup):
        """The warmup factor of the rate after ``nup`` accumulated updates."""
        nwup = self.warmup_epochs * self.updates_per_epoch
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        ramp = {'linear': nup / nwup, 'power2': (nup * nup) / (nwup * nwup),
                'sqrt': math.sqrt(float(nup) / nwup)}.get(self.warmup_strategy)
        return 1.0 if ramp is None else 1.0 + (maxmult - 1) * ramp

    def _get_lars(self, weight, g, wd):
        """The 'lars' factor: sqrt(|w|^2 / (|g|^2 + wd |w|^2)), clipped into [0.01, 100]."""
        weight2, grad2 = self._l2norm(weight), self._l2norm(g)
        return min(max(math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18)), 0.01), 100)

    def _l2norm(self, v):
        """The sum of squares of ``v`` (MXNet's name)."""
        return float((v * v).asnumpy().sum())

    def _reset_cum_gradient(self, index):
        self.cumgrads[index]['cum_grad'] = 0

    def _get_cum_gradient(self, index):
        return self.cumgrads.get(index, {})

    def _put_cum_gradient(self, index, cgrad):
        self.cumgrads[index] = cgrad

    def _cumulate_gradient(self, grad, index):
        """Add ``grad`` to the gradient accumulated for ``index``; count the accumulations."""
        cgrad = self._get_cum_gradient(index)
        if cgrad and cgrad['num_cums'] > 0:
            cgrad = {'cum_grad': cgrad['cum_grad'] + grad, 'num_cums': cgrad['num_cums'] + 1}
        else:
            # a copy: the caller's gradient buffer is overwritten by the next backward pass
            # (MXNet keeps the buffer itself, and then counts the next gradient twice)
            first = grad.copy() if self.batch_scale > 1 else grad
            cgrad = {'cum_grad': first, 'num_cums': self.init_updates + 1}
        self._put_cum_gradient(index, cgrad)
        return cgrad

    def update(self, index, weight, grad, state):
        lr, wd = self._get_lr(index), self._get_wd(index)     # before counting, as MXNet
        self._update_count(index)
        cgrad = self._cumulate_gradient(grad, index)
        if cgrad['num_cums'] % self.batch_scale:
            # MXNet runs sgd_update with lr 0 here, which leaves the weight as it is (but turns
            # it into NaN where the gradient is not finite)
            return
        grad = cgrad['cum_grad'] / self.batch_scale
        if self.warmup_strategy == 'lars':
            lr *= self._get_lars(weight, grad, wd)
        else:
            lr *= self._get_lbmult(cgrad['num_cums'])
        kwargs = self._op_kwargs(momentum=True, lr=lr, wd=wd)
        if isinstance(state, (list, tuple)):        # (momentum, float32 master copy)
            if state[0] is not None:
                nd.mp_sgd_mom_update(weight, grad, state[0], state[1], out=weight, **kwargs)
            else:
                nd.mp_sgd_update(weight, grad, state[1], out=weight, **kwargs)
        elif state is not None:
            nd.sgd_mom_update(weight, grad, state, out=weight, **kwargs)
        else:
            nd.sgd_update(weight, grad, out=weight, **kwargs)
        self._reset_cum_gradient(index)


@register
class LAMB(_ImplUpdate, Optimizer):
    """LAMB (``lamb_update_phase1``/``phase2`` and their ``mp_`` forms): an Adam step scaled per
    weight by ``||weight|| / ||step||``.

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1, beta2, epsilon : float, default 0.9, 0.999, 1e-6
    lower_bound, upper_bound : float, optional
        Bounds of the weight norm in the trust ratio.
    bias_correction : bool, default True
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, int(os.getenv('MXNET_OPTIMIZER_AGGREGATION_SIZE',
                                                          '45'))))

    def create_state(self, index, weight):
        return _zeros(weight, 2, weight.dtype)

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        # MXNet's aggregated path (multi_lamb_update) computes the same per-weight steps
        bounds = {k: getattr(self, k) for k in ('lower_bound', 'upper_bound') if getattr(self, k)}
        for index, weight, grad, state in zip(*_as_lists(indices, weights, grads, states)):
            lr, wd = self._count_and_rates(index)
            kwargs = self._op_kwargs(beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
                                     bias_correction=self.bias_correction,
                                     t=self._index_update_count[index])
            if multi_precision:
                master, (mean, var) = state
                g = nd.mp_lamb_update_phase1(weight, grad, mean, var, master, wd=wd, **kwargs)
                nd.mp_lamb_update_phase2(weight, g, master.norm(), g.norm(), master, lr=lr,
                                         out=weight, **bounds)
            else:
                g = nd.lamb_update_phase1(weight, grad, *state, wd=wd, **kwargs)
                nd.lamb_update_phase2(weight, g, weight.norm(), g.norm(), lr=lr, out=weight,
                                      **bounds)


@register
class DCASGD(Optimizer):
    """DCASGD, asynchronous SGD with delay compensation::

        mom = momentum * mom - lr * (grad + wd * weight + lamda * grad^2 * (weight - previous))
        previous = weight; weight += mom

    Parameters
    ----------
    momentum : float, default 0
    lamda : float, default 0.04
        Scale of the delay compensation.
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        mom = None if self.momentum == 0.0 else _zeros(weight, dtype=weight.dtype)
        return (mom, weight.copy())      # (momentum, previous weight)

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        grad = self._rescale_and_clip(grad)
        mom, previous = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous))
        if mom is not None:
            mom[:] = mom * self.momentum + step
        else:
            mom = step
        previous[:] = weight
        weight[:] = weight + mom


@register
class NAG(_MomentumSGD, Optimizer):
    """Nesterov accelerated gradient (``nag_mom_update``, ``sgd_update`` without momentum, and
    their ``mp_`` forms).

    Parameters
    ----------
    momentum : float, default 0
    multi_precision : bool, default False
    """
    _OPS = ('sgd_update', 'nag_mom_update', 'mp_sgd_update', 'mp_nag_mom_update')

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def _use_master(self, weight, state):
        return self.multi_precision and weight.dtype == _F16 and isinstance(state, (tuple, list))


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics:
    ``weight += -lr / 2 * (grad + wd * weight) + normal(0, sqrt(lr))``."""

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        grad = self._rescale_and_clip(grad)
        weight[:] = weight + -lr / 2 * (grad + wd * weight)
        weight[:] = weight + nd.random.normal(0, math.sqrt(lr), shape=weight.shape,
                                              dtype=weight.dtype, ctx=weight.context)


@register
class ccSGD(SGD):
    """[DEPRECATED] The same as ``SGD``."""


@register
class Adam(Optimizer):
    """Adam (``adam_update``), with the bias correction folded into the learning rate::

        g = clip(rescale_grad * grad + wd * weight)
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
        weight -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + epsilon)

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1, beta2, epsilon : float, default 0.9, 0.999, 1e-8
    lazy_update : bool, default True
        Only matters for row_sparse gradients (not supported here).
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return _zeros(weight, 2, weight.dtype)      # mean, variance

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        t = self._index_update_count[index]
        lr *= math.sqrt(1. - self.beta2 ** t) / (1. - self.beta1 ** t)
        kwargs = self._op_kwargs(beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon)
        _fused('adam_update', weight, grad, *state, lazy_update=self.lazy_update, lr=lr, wd=wd,
               **kwargs)


@register
class AdamW(Optimizer):
    """Adam with decoupled weight decay (Loshchilov & Hutter), through the fused
    ``_adamw_update`` (MXNet 1.9.1 has that operator but no optimizer class for it)::

        g = clip(rescale_grad * grad)                  (no wd in the gradient)
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
        weight -= lr * (c * m / (sqrt(v) + epsilon) + wd * weight)

    ``c = sqrt(1 - beta2^t) / (1 - beta1^t)`` (Adam's bias correction; 1 with
    ``correct_bias=False``). The decay is scaled by the learning rate, as in PyTorch's AdamW.
    Registered as ``'adamw'``.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 correct_bias=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.correct_bias = correct_bias

    def create_state(self, index, weight):
        return _zeros(weight, 2, weight.dtype)      # mean, variance

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        t = self._index_update_count[index]
        correction = math.sqrt(1. - self.beta2 ** t) / (1. - self.beta1 ** t) \
            if self.correct_bias else 1.0
        rescale = nd.full((1,), self.rescale_grad, ctx=weight.context, dtype=weight.dtype)
        clip = self.clip_gradient if self.clip_gradient else -1.0
        nd._internal._adamw_update(weight, grad, *state, rescale, out=weight, lr=correction,
                                   eta=lr, wd=wd, beta1=self.beta1, beta2=self.beta2,
                                   epsilon=self.epsilon, clip_gradient=clip)


@register
class AdaGrad(Optimizer):
    """AdaGrad (the fused ``_sparse_adagrad_update``)::

        g = clip(grad * rescale_grad);  history += g^2
        weight -= lr * (g / sqrt(history + eps) + wd * weight)

    Parameters
    ----------
    eps : float, default 1e-7
    """

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return _zeros(weight)      # history (float32, as MXNet)

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        # MXNet's dense AdaGrad clips whenever clip_gradient is not None (0 included)
        clip = -1.0 if self.clip_gradient is None else self.clip_gradient
        nd.sparse.adagrad_update(weight, grad, state, out=weight, lr=lr, wd=wd,
                                 epsilon=self.float_stable_eps, rescale_grad=self.rescale_grad,
                                 clip_gradient=clip)


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton's (``rmsprop_update``) or, with ``centered``, Graves's
    (``rmspropalex_update``).

    Parameters
    ----------
    learning_rate : float, default 0.001
    gamma1 : float, default 0.9
        Decay of the running mean of squared gradients.
    gamma2 : float, default 0.9
        Momentum of the centered version.
    epsilon : float, default 1e-8
    centered : bool, default False
    clip_weights : float, optional
        Clip weights into ``[-clip_weights, clip_weights]``.
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        return _zeros(weight, 3 if self.centered else 1)      # n (, g, delta)

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        kwargs = self._op_kwargs(gamma1=self.gamma1, epsilon=self.epsilon)
        if self.clip_weights:
            kwargs['clip_weights'] = self.clip_weights
        if self.centered:
            nd.rmspropalex_update(weight, grad, *state, out=weight, lr=lr, wd=wd,
                                  gamma2=self.gamma2, **kwargs)
        else:
            nd.rmsprop_update(weight, grad, state[0], out=weight, lr=lr, wd=wd, **kwargs)


@register
class AdaDelta(Optimizer):
    """AdaDelta (NDArray operators)::

        g = clip(grad * rescale_grad)
        acc_g = rho * acc_g + (1 - rho) * g^2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta^2
        weight -= delta + wd * weight

    Parameters
    ----------
    rho : float, default 0.9
    epsilon : float, default 1e-5
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return _zeros(weight, 2)      # accumulated g, accumulated delta

    def update(self, index, weight, grad, state):
        _, wd = self._count_and_rates(index)
        grad = self._rescale_and_clip(grad)
        acc_g, acc_delta = state
        acc_g[:] = acc_g * self.rho + (1. - self.rho) * grad * grad
        delta = nd.sqrt(acc_delta + self.epsilon) / nd.sqrt(acc_g + self.epsilon) * grad
        acc_delta[:] = acc_delta * self.rho + (1. - self.rho) * delta * delta
        weight[:] = weight - (delta + wd * weight)


@register
class Ftrl(Optimizer):
    """FTRL-proximal (``ftrl_update``).

    Parameters
    ----------
    lamda1 : float, default 0.01
        L1 regularisation.
    learning_rate : float, default 0.1
    beta : float, default 1
    """

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return _zeros(weight, 2)      # z, n

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        nd.ftrl_update(weight, grad, *state, out=weight, lr=lr, wd=wd,
                       **self._op_kwargs(lamda1=self.lamda1, beta=self.beta))


@register
class Adamax(Optimizer):
    """AdaMax, Adam with the infinity norm (NDArray operators)::

        g = clip(grad * rescale_grad + wd * weight)
        m = beta1 * m + (1 - beta1) * g;  u = maximum(beta2 * u, |g|)
        weight -= lr / (1 - beta1^t) * m / u

    Parameters
    ----------
    learning_rate : float, default 0.002
    beta1, beta2 : float, default 0.9, 0.999
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return _zeros(weight, 2, weight.dtype)

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        lr /= (1. - self.beta1 ** self._index_update_count[index])
        grad = self._clip(grad * self.rescale_grad + wd * weight)
        m_t, u_t = state
        m_t[:] = m_t * self.beta1 + (1. - self.beta1) * grad
        u_t[:] = nd.maximum(self.beta2 * u_t, nd.abs(grad))
        weight[:] = weight - lr * m_t / u_t


@register
class Nadam(Optimizer):
    """Nesterov Adam (NDArray operators), with the momentum schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96^(t * schedule_decay))`` kept per weight.

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1, beta2, epsilon : float, default 0.9, 0.999, 1e-8
    schedule_decay : float, default 0.004
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.
        # the product of mu_1..mu_t, per device and index like the update counts
        self._all_m_schedules = {0: {}}

    def create_state(self, index, weight):
        return _zeros(weight, 2, weight.dtype)

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        t = self._index_update_count[index]
        grad = self._clip(grad * self.rescale_grad + wd * weight)
        momentum_t = self.beta1 * (1. - 0.5 * (pow(0.96, t * self.schedule_decay)))
        momentum_t_1 = self.beta1 * (1. - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        schedules = self._schedules()
        schedules[index] = schedules.get(index, 1.) * momentum_t
        self.m_schedule = schedules[index]
        m_schedule_next = self.m_schedule * momentum_t_1
        m_t, v_t = state
        m_t[:] = m_t * self.beta1 + (1. - self.beta1) * grad
        v_t[:] = v_t * self.beta2 + (1. - self.beta2) * grad * grad
        grad_prime = grad / (1. - self.m_schedule)
        m_t_prime = m_t / (1. - m_schedule_next)
        v_t_prime = v_t / (1. - pow(self.beta2, t))
        m_t_bar = (1. - momentum_t) * grad_prime + momentum_t_1 * m_t_prime
        weight[:] = weight - lr * m_t_bar / (nd.sqrt(v_t_prime) + self.epsilon)

    def _schedules(self):
        # the schedules of the device whose counts are current (see _set_current_context)
        for device, counts in self._all_index_update_counts.items():
            if counts is self._index_update_count:
                return self._all_m_schedules.setdefault(device, {})
        return self._all_m_schedules.setdefault(0, {})


@register
class Test(Optimizer):
    """The test optimizer: ``weight += rescale_grad * grad``; the state copies the weight."""

    def create_state(self, index, weight):
        return _zeros(weight)

    def update(self, index, weight, grad, state):
        weight[:] = weight + grad * self.rescale_grad
        state[:] = weight




# -------------------------------------------------------------------------------------------------
# Updater: the states of a KVStore or a Trainer
# -------------------------------------------------------------------------------------------------

class Updater:
    """Applies an optimizer by index, creating and keeping each index's state.

    ``updater(index, grad, weight)`` (or lists of each) updates the weights in place.
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        if not isinstance(index, (list, tuple)):
            indices, grads, weights = [index], [grad], [weight]
        else:
            indices, grads, weights = list(index), list(grad), list(weight)
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                indices[i] = idx = idx.decode('utf-8')
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx],
                                                           weights[i].context)
                self.states_synced[idx] = True
        step = self.optimizer.aggregate_num
        if not self.aggregate_updates or step <= 0:
            for i, w, g in zip(indices, weights, grads):
                self.optimizer.update_multi_precision(i, w, g, self.states[i])
            return
        # as MXNet: weights grouped by dtype, in batches of aggregate_num
        by_dtype = {}
        for item in zip(indices, weights, grads):
            by_dtype.setdefault(item[1].dtype, []).append(item)
        for items in by_dtype.values():
            for start in range(0, len(items), step):
                idx, ws, gs = zip(*items[start:start + step])
                self.optimizer.update_multi_precision(list(idx), list(ws), list(gs),
                                                      [self.states[i] for i in idx])

    def sync_state_context(self, state, context):
        """``state`` (an NDArray or nested tuples/lists of them) moved to ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def get_states(self, dump_optimizer=False):
        """The states (and with ``dump_optimizer`` the optimizer's attributes) as the bytes of
        an ``nd.save`` file; MXNet writes a pickle. The layout is in the module docstring;
        optimizer attributes that are not numbers, strings, containers, arrays or schedulers
        are left out with a warning."""
        writer = _StateWriter()
        meta = {'format': 1, 'states': writer.encode(self.states, 'state'),
                'optimizer': writer.optimizer(self.optimizer) if dump_optimizer else None}
        return writer.dumps(meta)

    def set_states(self, states):
        """Restore what ``get_states`` returned (bytes). With a saved optimizer, its
        attributes are restored too: into ``self.optimizer`` when it is of the saved class,
        else into a new optimizer of that class."""
        meta, arrays = _read_states(states)
        self.states = _decode(meta['states'], arrays)
        if meta.get('optimizer') is not None:
            self.optimizer = _restore_optimizer(meta['optimizer'], arrays, self.optimizer)
            # (MXNet keeps the old optimizer's setting, and loops forever when that was SGD's
            # and the restored optimizer does not aggregate)
            self.aggregate_updates = self.optimizer.aggregate_num > 0
        self.states_synced = dict.fromkeys(self.states.keys(), False)


def get_updater(optimizer):
    """An ``Updater`` for ``optimizer`` (what a KVStore calls on each push)."""
    return Updater(optimizer)


# -------------------------------------------------------------------------------------------------
# The states file: nd.save format, structure as JSON (no pickle)
# -------------------------------------------------------------------------------------------------

_META = '__hybridlib_states__'
_SKIP_ATTRS = ('param_dict', '_index_update_count')   # the Trainer's; an alias of a count dict


class _Unsupported(Exception):
    pass


class _StateWriter:
    def __init__(self):
        self.arrays = {}

    def encode(self, value, path):
        if value is None or isinstance(value, (bool, str, int, float)):
            return value
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, NDArray):
            self.arrays[path] = value
            return {'ndarray': path}
        if isinstance(value, tuple):
            return {'tuple': [self.encode(v, f'{path}/{i}') for i, v in enumerate(value)]}
        if isinstance(value, list):
            return {'list': [self.encode(v, f'{path}/{i}') for i, v in enumerate(value)]}
        if isinstance(value, dict):
            return {'dict': [[self.encode(k, path), self.encode(v, f'{path}/{k}')]
                             for k, v in value.items()]}
        if isinstance(value, LRScheduler):
            return {'object': _class_name(type(value)),
                    'attrs': self.encode(vars(value), path)}
        raise _Unsupported(type(value).__name__)

    def optimizer(self, optimizer):
        attrs = {}
        for key, value in vars(optimizer).items():
            if key in _SKIP_ATTRS:
                continue
            try:
                attrs[key] = self.encode(value, f'optimizer/{key}')
            except _Unsupported as err:
                warnings.warn(f'save_states: optimizer attribute {key!r} ({err}) cannot be '
                              'saved and is left out', stacklevel=4)
        return {'class': _class_name(type(optimizer)), 'attrs': attrs}

    def dumps(self, meta):
        from .serialization import dumps_ndarrays
        text = json.dumps(meta).encode('utf-8')
        data = {_META: nd.array(np.frombuffer(text, dtype=np.uint8), dtype=np.uint8)}
        data.update(self.arrays)
        return dumps_ndarrays(data)


def _class_name(cls):
    return f'{cls.__module__}:{cls.__qualname__}'


def _read_states(buf):
    from .serialization import load_ndarrays_from_bytes
    buf = bytes(buf)
    if buf[:1] == b'\x80':
        raise NotSupportedError(
            'this optimizer states file is a Python pickle (written by MXNet\'s '
            'Trainer.save_states or KVStore.save_optimizer_states); hybridlib does not unpickle '
            'files (that runs arbitrary code). Save the states with hybridlib to continue '
            'training here.')
    arrays = load_ndarrays_from_bytes(buf, '<optimizer states>')
    if not isinstance(arrays, dict) or _META not in arrays:
        raise MXNetError('not an optimizer states file written by hybridlib: it has no '
                         f'{_META!r} entry')
    meta = json.loads(arrays.pop(_META).asnumpy().tobytes().decode('utf-8'))
    if meta.get('format') != 1:
        raise MXNetError(f'optimizer states file format {meta.get("format")!r} is not known')
    return meta, arrays


def _decode(value, arrays):
    if not isinstance(value, dict):
        return value
    if 'ndarray' in value:
        return arrays[value['ndarray']]
    if 'tuple' in value:
        return tuple(_decode(v, arrays) for v in value['tuple'])
    if 'list' in value:
        return [_decode(v, arrays) for v in value['list']]
    if 'dict' in value:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in value['dict']}
    if 'object' in value:
        cls = _find_class(value['object'], LRScheduler)
        obj = cls.__new__(cls)
        obj.__dict__.update(_decode(value['attrs'], arrays))
        return obj
    raise MXNetError(f'optimizer states file: unknown entry {sorted(value)}')


def _find_class(name, base):
    """The subclass of ``base`` named ``module:QualName`` among the classes defined so far
    (never imports anything: a states file cannot make us run code)."""
    pending = [base]
    while pending:
        cls = pending.pop()
        if _class_name(cls) == name:
            return cls
        pending.extend(cls.__subclasses__())
    raise MXNetError(f'optimizer states file: class {name} is not defined here (define or '
                     'import it before loading the states)')


def _restore_optimizer(saved, arrays, current):
    cls = _find_class(saved['class'], Optimizer)
    attrs = _decode({'dict': [[k, v] for k, v in saved['attrs'].items()]}, arrays)
    target = current if type(current) is cls else cls.__new__(cls)
    param_dict = getattr(target, 'param_dict', {}) if target is current else {}
    target.__dict__.update(attrs)
    target.param_dict = param_dict
    counts = target.__dict__.get('_all_index_update_counts') or {0: {}}
    target._all_index_update_counts = counts
    target._index_update_count = counts[next(iter(counts))]
    return target
