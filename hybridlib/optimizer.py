"""Optimizers (``mx.optimizer``): MXNet 1.9.1's update rules, states and bookkeeping.

An ``Optimizer`` turns (index, weight, gradient, state) into an updated weight. Where MXNet
calls a fused update operator (``sgd_mom_update``, ``adam_update``, ...; ``ops/optimizer.py``),
so does hybridlib, with ``out=weight``, so an update is one operator call on the weight's
context; the others (AdaDelta, Adamax, Nadam, DCASGD, SGLD) are written with NDArray operators,
as in MXNet. Where MXNet updates a batch of weights with one multi-tensor operator
(``ops/multi_tensor.py``), so does hybridlib for LARS (``multi_sum_sq``, ``multi_lars``,
``preloaded_multi_*sgd*``) and for SGD's ``multi_precision`` updates (``multi_mp_sgd*``); SGD's
plain updates stay one fused operator per weight written in place (the same numbers as MXNet's
``multi_sgd*``, without copies).
``Updater`` keeps the per-index states for a KVStore or a Trainer and saves them.
``mx.optimizer.contrib`` (GroupAdaGrad) is ``optimizer_contrib.py``.

The base class, the registry and what the update rules share are ``optimizer_base.py``;
``Updater`` is ``optimizer_updater.py`` and the states file it writes ``optimizer_states.py``;
this module serves their names. The optimizers themselves are defined here, so that the names saved states files and
pickles give them (``hybridlib.optimizer:SGD``, ...) stay the same.

The per-parameter learning rate is ``lr * lr_mult`` and weight decay ``wd * wd_mult``, the
multipliers coming from the Trainer's Parameters (``param_dict``), from ``set_lr_mult`` /
``set_wd_mult`` (by index or name) or from the ``__lr_mult__``/``__wd_mult__`` attributes of
``sym``. ``multi_precision=True`` keeps a float32 master copy of float16 weights.

Differences from MXNet 1.9.1, on purpose:

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
"""
import math
import os

import numpy as np

from . import ndarray as nd
from .optimizer_base import (_F16, Optimizer, _ImplUpdate, _as_lists, _fused, _interleave,
                             _warn_float16, _zeros, create, register)
from .optimizer_updater import Updater, get_updater
# names scripts may import from here too (MXNet's optimizer module serves NDArray as well)
from .base import MXNetError, NotSupportedError  # noqa: F401
from .lr_scheduler import LRScheduler  # noqa: F401
from .ndarray import NDArray  # noqa: F401

__all__ = ['AdaDelta', 'AdaGrad', 'Adam', 'Adamax', 'DCASGD', 'FTML', 'Ftrl', 'LAMB', 'LARS',
           'LBSGD', 'NAG', 'NDabs', 'Nadam', 'Optimizer', 'RMSProp', 'SGD', 'SGLD', 'Signum',
           'Test', 'Updater', 'ccSGD', 'create', 'get_updater', 'register', 'contrib']

NDabs = nd.abs      # MXNet's optimizer module exports nd.abs under this name


class _MomentumSGD(_ImplUpdate):
    """Mixin of SGD and NAG: an optional momentum state, ``multi_precision`` states
    ``(momentum, float32 master copy)``, and four fused operators ``_OPS``: plain, with
    momentum, and their ``mp_`` forms."""

    def create_state_multi_precision(self, index, weight):
        if self.multi_precision and weight.dtype == _F16:
            master = weight.astype(np.float32)
            return (self.create_state(index, master), master)
        if weight.dtype == _F16:
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
