"""Dynamic loss scaling for AMP (MXNet 1.9.1's ``mxnet.contrib.amp.loss_scaler``).

float16 gradients underflow where float32 ones would not, so ``amp.scale_loss`` multiplies the
loss by ``loss_scale`` before ``backward`` and the Trainer divides it out again. The scale starts
high (2**16); a step whose gradients overflowed (inf or nan) is skipped and the scale halved,
and after ``2000`` steps without overflow it doubles again (at most 2**24).
"""
import logging

from ... import autograd
from ... import ndarray as nd
from ...ndarray import multi_all_finite  # noqa: F401  (public here, as in MXNet)

__all__ = ['LossScaler']


class LossScaler:
    """Dynamic loss scaler for AMP.

    Properties
    ----------
    loss_scale : float
        The current loss scale.
    """

    def __init__(self):
        self._loss_scale = 2. ** 16
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = 2. ** 24
        self._scale_seq_len = 2000
        self._unskipped = 0

    @property
    def loss_scale(self):
        return self._loss_scale

    def has_overflow(self, params):
        """Whether a gradient of ``params`` (their first context, as MXNet) is not finite; also
        moves the scale for the next step: halved after an overflow, doubled after
        ``2000`` steps without one."""
        grads = [p._grad[0] for p in params if p._grad is not None]
        finite = None
        with autograd.pause():
            chunk = 200         # MXNet's chunk: a bounded number of inputs per operator call
            for start in range(0, len(grads), chunk):
                part = grads[start:start + chunk]
                flag = nd.multi_all_finite(*part, num_arrays=len(part))
                finite = flag if finite is None else finite * flag
        has_overflow = finite is not None and not bool(finite.asscalar())
        self._loss_scale = self._next_loss_scale
        if has_overflow:
            self._next_loss_scale = self._loss_scale / 2.
            self._unskipped = 0
            logging.info('AMP: decreasing loss scale to %f', self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.)
            logging.info('AMP: increasing loss scale to %f', self._next_loss_scale)
        return has_overflow
