"""Sequences: SequenceMask, SequenceLast, SequenceReverse, and ``_backward_SequenceLast``
(MXNet's backward node of ``SequenceLast``, whose gradient is ``SequenceLast`` again).

``data`` is time-major (T, B, ...) or, where ``axis=1`` is allowed, batch-major (B, T, ...);
``sequence_length`` (B,) is an input only when ``use_sequence_length``, of any dtype (truncated
toward zero, as MXNet casts). ``SequenceLast``/``SequenceReverse`` clip lengths into range where
MXNet reads out of bounds (checked against MXNet 1.9.1).
"""
import numpy as np

from ..base import ShapeError
from .attrs import Bool, Float, Int
from .gather import _cast_scalar, _int_index
from .registry import merge_shape, register

__all__ = []


def _keep(result, like):
    return result.astype(like.dtype, copy=False)


def _sequence_inputs(attrs):
    return ('data', 'sequence_length') if attrs.use_sequence_length else ('data',)


def _sequence_check(attrs):
    if attrs.axis not in (0, 1):
        raise ValueError(f'axis must be 0 (time-major) or 1 (batch-major), got {attrs.axis}')


def _sequence_shapes(attrs, data, sequence_length=None):
    """(data, sequence_length) with each other's knowledge; ShapeError for a rank < 2."""
    if data is None:
        return None, sequence_length
    if len(data) < 2:
        raise ShapeError(f'the data must have at least 2 axes (time and batch), got {data}')
    batch = data[1 - attrs.axis]
    if attrs.use_sequence_length:
        sequence_length = merge_shape(sequence_length, (batch,), 'sequence_length')
        data = tuple(sequence_length[0] if i == 1 - attrs.axis else d
                     for i, d in enumerate(data))
    return data, sequence_length


def _sequence_infer_type(attrs, data, sequence_length=None):
    # MXNet gives an unknown sequence_length the data's dtype; a known one may be any dtype
    if attrs.use_sequence_length:
        return [data, sequence_length if sequence_length is not None else data], [data]
    return [data], [data]


def _lengths(xp, sequence_length, low, high):
    """Integer lengths (truncated), clipped to ``[low, high]``."""
    return xp.clip(_int_index(sequence_length), low, high)


def _sequence_grads(attrs, gdata):
    return [gdata, None] if attrs.use_sequence_length else [gdata]


_SEQUENCE_ATTRS = dict(use_sequence_length=Bool(False), axis=Int(0))



def _same_as_data(attrs, data, sequence_length=None):
    """Shapes of an operator whose output has the data's shape (SequenceMask, SequenceReverse)."""
    data, sequence_length = _sequence_shapes(attrs, data, sequence_length)
    ins = [data, sequence_length] if attrs.use_sequence_length else [data]
    return ins, [data]

@register('SequenceMask')
class SequenceMask:
    """Set the steps of each sequence at or past its length to ``value``.

    ``data`` (T, B, ...) for ``axis=0`` or (B, T, ...) for ``axis=1``; ``sequence_length``
    (B,) (any dtype, truncated), an input only when ``use_sequence_length`` (without it the
    data passes unchanged) -> ``data``'s shape. The gradient is masked the same way (to 0).
    """
    inputs = ('data', 'sequence_length')
    list_inputs = _sequence_inputs
    attrs = dict(use_sequence_length=Bool(False), value=Float(0.0), axis=Int(0))
    check = _sequence_check

    def compute(xp, attrs, data, sequence_length=None):
        if not attrs.use_sequence_length:
            return data.copy()
        steps = data.shape[attrs.axis]
        lengths = _int_index(sequence_length)
        t = xp.arange(steps)
        keep = t[:, None] < lengths[None, :] if attrs.axis == 0 else t[None, :] < lengths[:, None]
        keep = keep.reshape(keep.shape + (1,) * (data.ndim - 2))
        value = xp.asarray(_cast_scalar(attrs.value, data.dtype))
        return _keep(xp.where(keep, data, value), data)

    infer_shape = _same_as_data
    infer_type = _sequence_infer_type

    def gradient(F, attrs, inputs, outputs, ograds):
        if not attrs.use_sequence_length:
            return [ograds[0]]
        g = F.SequenceMask(ograds[0], inputs[1], use_sequence_length=True, value=0,
                           axis=attrs.axis)
        return [g, None]


def _last_positions(xp, attrs, data, sequence_length):
    """The index tuple of the last valid step of every sequence of ``data``."""
    steps, batch = data.shape[attrs.axis], data.shape[1 - attrs.axis]
    if attrs.use_sequence_length:
        t = _lengths(xp, sequence_length, 1, steps) - 1
    else:
        t = xp.full((batch,), steps - 1, dtype=np.int64)
    b = xp.arange(batch)
    return (t, b) if attrs.axis == 0 else (b, t)


def _last_shape(attrs, data):
    return None if data is None else tuple(d for i, d in enumerate(data) if i != attrs.axis)


@register('SequenceLast')
class SequenceLast:
    """The last valid step of each sequence.

    ``data`` (T, B, ...) for ``axis=0`` or (B, T, ...) for ``axis=1``; ``sequence_length``
    (B,) (any dtype, truncated; clipped to [1, T] where MXNet reads out of bounds), an input
    only when ``use_sequence_length`` (else step T-1) -> (B, ...).
    """
    inputs = ('data', 'sequence_length')
    list_inputs = _sequence_inputs
    attrs = _SEQUENCE_ATTRS
    check = _sequence_check

    def compute(xp, attrs, data, sequence_length=None):
        return data[_last_positions(xp, attrs, data, sequence_length)]

    def infer_shape(attrs, data, sequence_length=None):
        data, sequence_length = _sequence_shapes(attrs, data, sequence_length)
        ins = [data, sequence_length] if attrs.use_sequence_length else [data]
        return ins, [_last_shape(attrs, data)]

    infer_type = _sequence_infer_type

    def gradient(F, attrs, inputs, outputs, ograds):
        g = F._backward_SequenceLast(ograds[0], *inputs, axis=attrs.axis,
                                     use_sequence_length=attrs.use_sequence_length)
        return _sequence_grads(attrs, g)


def _backward_last_inputs(attrs):
    if attrs.use_sequence_length:
        return ('ograd', 'data', 'sequence_length')
    return ('ograd', 'data')


@register('_backward_SequenceLast')
class _backward_SequenceLast:
    """The gradient of ``SequenceLast``: ``ograd`` placed at the last valid steps of zeros.

    ``ograd`` (B, ...), ``data`` (only its shape is read), ``sequence_length`` (B,) only when
    ``use_sequence_length`` -> ``data``'s shape, in ``ograd``'s dtype.
    """
    inputs = ('ograd', 'data', 'sequence_length')
    list_inputs = _backward_last_inputs
    attrs = _SEQUENCE_ATTRS
    check = _sequence_check

    def compute(xp, attrs, ograd, data, sequence_length=None):
        out = xp.zeros(data.shape, dtype=ograd.dtype)
        out[_last_positions(xp, attrs, data, sequence_length)] = ograd
        return out

    def infer_shape(attrs, ograd, data, sequence_length=None):
        data, sequence_length = _sequence_shapes(attrs, data, sequence_length)
        ograd = merge_shape(ograd, _last_shape(attrs, data), 'ograd')
        if attrs.use_sequence_length:
            return [ograd, data, sequence_length], [data]
        return [ograd, data], [data]

    def infer_type(attrs, ograd, *rest):
        return [ograd, *rest], [ograd]

    def gradient(F, attrs, inputs, outputs, ograds):
        if attrs.use_sequence_length:
            g = F.SequenceLast(ograds[0], inputs[2], use_sequence_length=True, axis=attrs.axis)
            return [g, None, None]
        return [F.SequenceLast(ograds[0], axis=attrs.axis), None]


def _reverse_check(attrs):
    if attrs.axis != 0:
        raise ValueError(f'axis must be 0 (time-major), got {attrs.axis}')


@register('SequenceReverse')
class SequenceReverse:
    """Reverse the first ``sequence_length`` steps of each sequence (all T without lengths).

    ``data`` (T, B, ...), ``sequence_length`` (B,) (any dtype, truncated; clipped to [0, T]
    where MXNet reads out of bounds), an input only when ``use_sequence_length`` ->
    ``data``'s shape; steps past a length stay in place. Only ``axis=0``, as MXNet.
    """
    inputs = ('data', 'sequence_length')
    list_inputs = _sequence_inputs
    attrs = _SEQUENCE_ATTRS
    check = _reverse_check

    def compute(xp, attrs, data, sequence_length=None):
        if not attrs.use_sequence_length:
            return xp.flip(data, 0).copy()
        steps, batch = data.shape[0], data.shape[1]
        lengths = _lengths(xp, sequence_length, 0, steps)[None, :]
        t = xp.arange(steps)[:, None]
        source = xp.where(t < lengths, lengths - 1 - t, t)
        return data[source, xp.arange(batch)[None, :]]

    infer_shape = _same_as_data
    infer_type = _sequence_infer_type

    def gradient(F, attrs, inputs, outputs, ograds):
        # the permutation is its own inverse (and transpose)
        if attrs.use_sequence_length:
            return [F.SequenceReverse(ograds[0], inputs[1], use_sequence_length=True), None]
        return [F.SequenceReverse(ograds[0])]
