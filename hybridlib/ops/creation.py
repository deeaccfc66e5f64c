"""Creating and converting arrays: zeros/ones/full, *_like, Cast, copies between devices.

Creation operators have no inputs; their ``ctx`` attribute says where the result lives (the
frontend fills in the current context) and ``dtype`` what it holds (float32 by default).
"""
from ..base import DEFAULT_DTYPE
from ..context import transfer
from .attrs import Ctx, DType, Float, Shape
from .registry import register, zero_gradient

__all__ = []


def _creation_shape(attrs):
    return [], [tuple(attrs.shape)]


def _creation_type(attrs):
    return [], [attrs.dtype]


_CREATION_ATTRS = dict(shape=Shape(()), ctx=Ctx(None), dtype=DType(DEFAULT_DTYPE))


@register('_zeros', aliases=('zeros',), hint='_zeros')
class _zeros:
    """An array of zeros of ``shape`` (MXNet: ``nd.zeros(shape, ctx, dtype)``)."""
    attrs = _CREATION_ATTRS
    infer_shape = _creation_shape
    infer_type = _creation_type
    gradient = zero_gradient

    def compute(xp, attrs):
        return xp.zeros(attrs.shape, dtype=attrs.dtype)


@register('_ones', aliases=('ones',), hint='_ones')
class _ones:
    """An array of ones of ``shape``."""
    attrs = _CREATION_ATTRS
    infer_shape = _creation_shape
    infer_type = _creation_type
    gradient = zero_gradient

    def compute(xp, attrs):
        return xp.ones(attrs.shape, dtype=attrs.dtype)


@register('_full', hint='_full')
class _full:
    """An array of ``shape`` filled with ``value`` (``nd.full(shape, val)`` calls it)."""
    attrs = dict(shape=Shape(()), ctx=Ctx(None), dtype=DType(DEFAULT_DTYPE), value=Float())
    infer_shape = _creation_shape
    infer_type = _creation_type
    gradient = zero_gradient

    def compute(xp, attrs):
        return xp.full(attrs.shape, attrs.value, dtype=attrs.dtype)


@register('zeros_like')
class zeros_like:
    """Zeros of the shape and dtype of the input."""
    inputs = ('data',)
    gradient = zero_gradient

    def compute(xp, attrs, data):
        return xp.zeros_like(data)


@register('ones_like')
class ones_like:
    """Ones of the shape and dtype of the input."""
    inputs = ('data',)
    gradient = zero_gradient

    def compute(xp, attrs, data):
        return xp.ones_like(data)


@register('Cast', aliases=('cast',))
class Cast:
    """Convert to ``dtype``; the gradient converts back to the input's dtype."""
    inputs = ('data',)
    attrs = dict(dtype=DType())

    def compute(xp, attrs, data):
        return data.astype(attrs.dtype)

    def infer_type(attrs, data):
        return [data], [attrs.dtype]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.Cast(ograds[0], dtype=inputs[0].dtype)]


@register('_copyto')
class _copyto:
    """A copy of the input on the context ``ctx`` (numpy <-> cupy, gpu i <-> gpu j)."""
    inputs = ('data',)
    attrs = dict(ctx=Ctx())

    def compute(xp, attrs, data):
        return transfer(data, attrs.ctx, copy=True)

    def gradient(F, attrs, inputs, outputs, ograds):
        source = getattr(inputs[0], 'context', None)
        if source is None:          # in a graph every value lives on one context
            return [F._copy(ograds[0])]
        return [F._copyto(ograds[0], ctx=source)]
