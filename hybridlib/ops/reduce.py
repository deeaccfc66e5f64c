"""Broadcasting and reductions: broadcast_to/like/axis, sum/mean/prod/max/min/norm, argmax, ...

As in MXNet (``broadcast_reduce_op``), broadcasting and reducing are each other's gradients: a
broadcast sums its gradient back with ``_broadcast_backward`` and a reduction broadcasts its
gradient out with ``broadcast_like``.
"""
from ..base import ShapeError
from .attrs import Shape
from .registry import register, normalize_axis

__all__ = []


# -------------------------------------------------------------------------------------------------
# Broadcasting
# -------------------------------------------------------------------------------------------------

def _broadcast_gradient(F, attrs, inputs, outputs, ograds):
    grads = [F._broadcast_backward(ograds[0], inputs[0])]
    return grads + [None] * (len(inputs) - 1)


def _check_broadcastable(src, dst):
    """ShapeError unless ``src`` (right-aligned) broadcasts to ``dst``."""
    if src is None or dst is None:
        return
    if len(src) > len(dst):
        raise ShapeError(f'cannot broadcast {src} to the lower rank of {dst}')
    for a, b in zip(src[::-1], dst[::-1]):
        if a and b and a != 1 and a != b:
            raise ShapeError(f'cannot broadcast {src} to {dst}: only size-1 axes broadcast')


@register('broadcast_to')
class broadcast_to:
    """Broadcast to ``shape``; a 0 in ``shape`` keeps that axis of the input."""
    inputs = ('data',)
    attrs = dict(shape=Shape(()))

    def compute(xp, attrs, data):
        target = tuple(t or d for t, d in zip(attrs.shape, data.shape))
        return xp.broadcast_to(data, target).copy()

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        if len(attrs.shape) != len(data):
            raise ShapeError(f'broadcast_to: shape {attrs.shape} and the input {data} differ '
                             'in rank')
        out = tuple(t or d for t, d in zip(attrs.shape, data))
        _check_broadcastable(data, out)
        return [data], [out]

    gradient = _broadcast_gradient


def _like_target(attrs, lhs, rhs):
    if attrs.lhs_axes is None:
        return tuple(rhs)
    if attrs.rhs_axes is None or len(attrs.lhs_axes) != len(attrs.rhs_axes):
        raise ShapeError('broadcast_like: lhs_axes and rhs_axes must be given together and '
                         'have the same length')
    out = list(lhs)
    for la, ra in zip(attrs.lhs_axes, attrs.rhs_axes):
        out[normalize_axis(la, len(lhs), 'lhs_axes')] = rhs[normalize_axis(ra, len(rhs),
                                                                          'rhs_axes')]
    return tuple(out)


@register('broadcast_like')
class broadcast_like:
    """Broadcast ``lhs`` to the shape of ``rhs`` (or along ``lhs_axes`` to ``rhs_axes`` sizes).

    Unlike MXNet, ``lhs`` may have fewer axes than ``rhs`` (numpy's rule: leading axes added).
    """
    inputs = ('lhs', 'rhs')
    attrs = dict(lhs_axes=Shape(None), rhs_axes=Shape(None))

    def compute(xp, attrs, lhs, rhs):
        return xp.broadcast_to(lhs, _like_target(attrs, lhs.shape, rhs.shape)).copy()

    def infer_shape(attrs, lhs, rhs):
        if rhs is None or (lhs is None and attrs.lhs_axes is not None):
            return [lhs, rhs], [None]
        out = _like_target(attrs, lhs, rhs)
        _check_broadcastable(lhs, out)
        return [lhs, rhs], [out]

    def infer_type(attrs, lhs, rhs):
        return [lhs, rhs], [lhs]

    gradient = _broadcast_gradient


def _axis_target(attrs, shape):
    if len(attrs.axis) != len(attrs.size):
        raise ShapeError(f'broadcast_axis: axis {attrs.axis} and size {attrs.size} differ '
                         'in length')
    out = list(shape)
    for a, size in zip(attrs.axis, attrs.size):
        a = normalize_axis(a, len(shape))
        if shape[a] not in (0, 1):
            raise ShapeError(f'broadcast_axis: axis {a} has size {shape[a]}, not 1')
        out[a] = size
    return tuple(out)


@register('broadcast_axis', aliases=('broadcast_axes',))
class broadcast_axis:
    """Broadcast the size-1 axes ``axis`` to the sizes ``size``."""
    inputs = ('data',)
    attrs = dict(axis=Shape(()), size=Shape(()))

    def compute(xp, attrs, data):
        return xp.broadcast_to(data, _axis_target(attrs, data.shape)).copy()

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        return [data], [_axis_target(attrs, data)]

    gradient = _broadcast_gradient
