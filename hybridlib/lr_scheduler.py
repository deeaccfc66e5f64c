"""Learning-rate schedules (``mx.lr_scheduler``), with MXNet 1.9.1's formulas and behaviour.

A scheduler is called with ``num_update``, the largest number of updates applied to any weight
so far, and returns the learning rate. All of them can warm up first: for ``num_update <
warmup_steps`` the rate goes from ``warmup_begin_lr`` to ``base_lr`` in equal steps
(``warmup_mode='linear'``) or stays at ``warmup_begin_lr`` (``'constant'``).

As in MXNet the schedulers keep state: ``FactorScheduler`` and ``MultiFactorScheduler`` lower
``base_lr`` in place as ``num_update`` passes their steps (so calling them again with a smaller
``num_update`` does not raise the rate back), and ``PolyScheduler``/``CosineScheduler`` store
the last rate in ``base_lr`` and keep returning it after ``max_update``.
"""
import logging
from math import ceil, cos, pi

__all__ = ['LRScheduler', 'FactorScheduler', 'MultiFactorScheduler', 'PolyScheduler',
           'CosineScheduler']


class LRScheduler:
    """Base class of learning-rate schedulers.

    Parameters
    ----------
    base_lr : float, default 0.01
        The rate after warm-up (schedules decay from it).
    warmup_steps : int, default 0
        Number of updates spent warming up.
    warmup_begin_lr : float, default 0
        The rate warm-up starts from (at most ``base_lr``).
    warmup_mode : {'linear', 'constant'}
        Increase in equal steps, or stay at ``warmup_begin_lr`` during warm-up.
    """

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        self.base_lr = base_lr
        assert isinstance(warmup_steps, int)
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError('Base lr has to be higher than warmup_begin_lr')
        if self.warmup_steps < 0:
            raise ValueError('Warmup steps has to be positive or 0')
        if warmup_mode not in ['linear', 'constant']:
            raise ValueError('Supports only linear and constant modes of warmup')
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """The warm-up rate at ``num_update`` (< ``warmup_steps``)."""
        assert num_update < self.warmup_steps
        if self.warmup_mode == 'linear':
            increase = ((self.warmup_final_lr - self.warmup_begin_lr)
                        * float(num_update) / float(self.warmup_steps))
            return self.warmup_begin_lr + increase
        if self.warmup_mode == 'constant':
            return self.warmup_begin_lr
        raise ValueError(f'Invalid warmup mode {self.warmup_mode}')

    def __call__(self, num_update):
        """The learning rate after ``num_update`` updates (the most any weight has had)."""
        raise NotImplementedError('must override this')


_STEPS_LOOPED = 10000    # decays FactorScheduler makes one by one in a call; more are computed


class FactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` every ``step`` updates:
    ``base_lr * factor ** floor((num_update - 1) / step)``, never below ``stop_factor_lr``.

    Parameters
    ----------
    step : int
        Updates between two decays (>= 1).
    factor : float, default 1
        The decay factor (<= 1).
    stop_factor_lr : float, default 1e-8
        The rate stops decaying at this value.
    base_lr, warmup_steps, warmup_begin_lr, warmup_mode
        As for ``LRScheduler``.
    """

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError('Schedule step must be greater or equal than 1 round')
        if factor > 1.0:
            raise ValueError('Factor must be no more than 1 to make lr reduce')
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # a loop, not an if: training resumed at a later update catches up at once
        while num_update > self.count + self.step:
            skipped = ceil((num_update - self.count) / self.step) - 2
            if skipped > _STEPS_LOOPED:     # (a count far behind) in one go, not a long loop
                self.count += skipped * self.step
                self.base_lr = max(self.base_lr * self.factor ** skipped, self.stop_factor_lr)
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                logging.info('Update[%d]: now learning rate arrived at %0.5e, will not '
                             'change in the future', num_update, self.base_lr)
            else:
                logging.info('Update[%d]: Change learning rate to %0.5e',
                             num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` each time ``num_update`` passes one of ``step``.

    Parameters
    ----------
    step : list of int
        Increasing update counts (each >= 1) after which the rate decays.
    factor : float, default 1
        The decay factor (<= 1).
    base_lr, warmup_steps, warmup_begin_lr, warmup_mode
        As for ``LRScheduler``.
    """

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        assert isinstance(step, list) and len(step) >= 1
        for i, _step in enumerate(step):
            if i != 0 and step[i] <= step[i - 1]:
                raise ValueError('Schedule step must be an increasing integer list')
            if _step < 1:
                raise ValueError('Schedule step must be greater or equal than 1 round')
        if factor > 1.0:
            raise ValueError('Factor must be no more than 1 to make lr reduce')
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind <= len(self.step) - 1:
            if num_update > self.step[self.cur_step_ind]:
                self.count = self.step[self.cur_step_ind]
                self.cur_step_ind += 1
                self.base_lr *= self.factor
                logging.info('Update[%d]: Change learning rate to %0.5e',
                             num_update, self.base_lr)
            else:
                return self.base_lr
        return self.base_lr


class _DecayScheduler(LRScheduler):
    """Decay from ``base_lr`` to ``final_lr`` over ``max_update - warmup_steps`` updates after
    warm-up, by ``final_lr + (base_lr - final_lr) * self._decay(fraction done)``; the last
    rate stays after ``max_update``."""

    def __init__(self, max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                 warmup_mode):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        assert isinstance(max_update, int)
        if max_update < 1:
            raise ValueError('maximum number of updates must be strictly positive')
        self.base_lr_orig = base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            done = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = (self.final_lr
                            + (self.base_lr_orig - self.final_lr) * self._decay(done))
        return self.base_lr


class PolyScheduler(_DecayScheduler):
    """Polynomial decay after warm-up:
    ``final_lr + (base_lr - final_lr) * (1 - (num_update - warmup_steps) / max_steps) ** pwr``
    with ``max_steps = max_update - warmup_steps``; the last rate stays after ``max_update``.

    Parameters
    ----------
    max_update : int
        The update at which the rate reaches ``final_lr`` (>= 1).
    base_lr : float, default 0.01
    pwr : int, default 2
        Power of the decay.
    final_lr : float, default 0
    warmup_steps, warmup_begin_lr, warmup_mode
        As for ``LRScheduler``.
    """

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)
        self.power = pwr

    def _decay(self, done):
        return pow(1 - done, self.power)


class CosineScheduler(_DecayScheduler):
    """Cosine decay after warm-up:
    ``final_lr + (base_lr - final_lr) * (1 + cos(pi * (num_update - warmup_steps) /
    max_steps)) / 2`` with ``max_steps = max_update - warmup_steps``; the last rate stays after
    ``max_update``.

    Parameters
    ----------
    max_update : int
        The update at which the rate reaches ``final_lr`` (>= 1).
    base_lr : float, default 0.01
    final_lr : float, default 0
    warmup_steps, warmup_begin_lr, warmup_mode
        As for ``LRScheduler``.
    """

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)

    def _decay(self, done):
        return (1 + cos(pi * done)) / 2
