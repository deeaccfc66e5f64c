"""Slicing, tiling and padding: slice (alias crop) with ``_slice_assign`` (``_crop_assign``)
and ``_slice_assign_scalar`` (``_crop_assign_scalar``) for its gradient, slice_axis, slice_like,
tile, repeat, and Pad (alias pad) with ``_backward_Pad``.

Slices follow Python's clipping rules (None entries, negative values and steps); slice_axis
checks its range as MXNet does; Pad works on the spatial axes of 4-D/5-D arrays in 'constant',
'edge' or 'reflect' mode. Shape inference accepts partial shapes (0 is an unknown dimension).

Outputs never share memory with inputs (views are copied). Gradients use registered operators
only: slices scatter into zeros with ``_slice_assign``, tile/repeat reshape and sum, and Pad's
adjoint is ``_backward_Pad``, whose own gradient is Pad again. The shape helpers shared with
the other shape operators (``_unary``, ``_fresh``, ...) live in ``shape.py``.
"""
import numpy as np

from ..base import NotSupportedError, ShapeError
from .attrs import INT32_MAX, Float, Int, Shape, Str
from .registry import BackwardNode, LEGACY, merge_shape, normalize_axis, register
from .shape import _fresh, _known, _prod, _unary

__all__ = []


# -------------------------------------------------------------------------------------------------
# Slicing
# -------------------------------------------------------------------------------------------------

def _slice_check(attrs):
    if len(attrs.begin) != len(attrs.end):
        raise ValueError(f'begin {attrs.begin} and end {attrs.end} must have the same length')
    if attrs.step and len(attrs.step) != len(attrs.begin):
        raise ValueError(f'step {attrs.step} and begin {attrs.begin} must have the same length')
    if 0 in attrs.step:
        raise ValueError(f'step {attrs.step} cannot hold 0')


def _slice_key(attrs, ndim):
    """The Python index of MXNet's slice (its clipping rules are Python's)."""
    if len(attrs.begin) > ndim:
        raise ShapeError(f'begin {attrs.begin} has more entries than the {ndim} input axes')
    step = attrs.step or (None,) * len(attrs.begin)
    return tuple(slice(b, e, s) for b, e, s in zip(attrs.begin, attrs.end, step))


def _sliced_shape(attrs, shape):
    key = _slice_key(attrs, len(shape))
    out = [len(range(*k.indices(d))) if d else 0 for k, d in zip(key, shape)]
    return tuple(out) + tuple(shape[len(key):])


def _same_checked_shape(attrs, shape):
    _slice_key(attrs, len(shape))
    return shape


_SLICE_ATTRS = dict(begin=Shape(), end=Shape(), step=Shape(()))


def _slice_kwargs(attrs):
    return dict(begin=attrs.begin, end=attrs.end, step=attrs.step)


@register('slice', aliases=('crop',))
class slice_op:
    """Basic slicing ``data[b0:e0:s0, b1:e1:s1, ...]`` with Python's rules (None entries and
    negative values allowed; a negative step runs backwards). Fewer entries than axes slice
    the leading axes."""
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(_SLICE_ATTRS)
    check = _slice_check
    infer_shape = _unary(_sliced_shape)

    def compute(xp, attrs, data):
        return data[_slice_key(attrs, data.ndim)].copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._slice_assign(F.zeros_like(inputs[0]), ograds[0], **_slice_kwargs(attrs))]


@register('_slice_assign', aliases=('_crop_assign',))
class _slice_assign:
    """``lhs`` with the slice ``[begin:end:step]`` (as in ``slice``) replaced by ``rhs``,
    which has the shape of that slice. lhs (d0, ..., dn), rhs (sliced) -> (d0, ..., dn)."""
    inputs = ('lhs', 'rhs')
    attrs = dict(_SLICE_ATTRS)
    check = _slice_check

    def compute(xp, attrs, lhs, rhs):
        out = lhs.copy()
        out[_slice_key(attrs, lhs.ndim)] = rhs
        return out

    def infer_shape(attrs, lhs, rhs):
        if lhs is None:
            return [lhs, rhs], [None]
        rhs = merge_shape(_sliced_shape(attrs, lhs), rhs, 'rhs must have the slice\'s shape')
        return [lhs, rhs], [lhs]

    def gradient(F, attrs, inputs, outputs, ograds):
        kw = _slice_kwargs(attrs)
        return [F._slice_assign_scalar(ograds[0], scalar=0, **kw), F.slice(ograds[0], **kw)]


@register('_slice_assign_scalar', aliases=('_crop_assign_scalar',))
class _slice_assign_scalar:
    """``data`` with the slice ``[begin:end:step]`` set to ``scalar``; shape unchanged."""
    inputs = ('data',)
    named_inputs = False
    attrs = dict(scalar=Float(0), **_SLICE_ATTRS)
    check = _slice_check
    infer_shape = _unary(_same_checked_shape)

    def compute(xp, attrs, data):
        out = data.copy()
        out[_slice_key(attrs, data.ndim)] = np.asarray(attrs.scalar).astype(data.dtype)[()]
        return out

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._slice_assign_scalar(ograds[0], scalar=0, **_slice_kwargs(attrs))]


class _IntOrNone(Int):
    """MXNet's ``int or None, required``: must be given, and may be None."""

    @property
    def optional(self):
        return True


def _slice_axis_range(attrs, shape):
    """(axis, begin, end) with MXNet's checks; begin/end None when they are unknown."""
    axis = normalize_axis(attrs.axis, len(shape))
    size, begin, end = shape[axis], attrs.begin, attrs.end
    if not size:
        if begin < 0 or end is None or end < 0:
            return axis, None, None
    else:
        begin += size if begin < 0 else 0
        end = size if end is None else end + size if end < 0 else end
        if end > size or begin < 0:
            raise ShapeError(f'invalid begin={attrs.begin}, end={attrs.end} for an axis of '
                             f'size {size}')
    if begin >= end:
        raise ShapeError(f'invalid begin={attrs.begin}, end={attrs.end}: begin must come '
                         'before end')
    return axis, begin, end


def _slice_axis_shape(attrs, data):
    axis, b, e = _slice_axis_range(attrs, data)
    return data[:axis] + ((0 if b is None else e - b),) + data[axis + 1:]


@register('slice_axis')
class slice_axis:
    """``data`` sliced to ``[begin, end)`` along ``axis`` (end None: to the end; negative
    values count from the end; the range must be non-empty and inside the axis)."""
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(axis=Int(), begin=Int(), end=_IntOrNone())
    infer_shape = _unary(_slice_axis_shape)

    def compute(xp, attrs, data):
        axis, b, e = _slice_axis_range(attrs, data.shape)
        return data[(slice(None),) * axis + (slice(b, e),)].copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        axis, b, e = _slice_axis_range(attrs, inputs[0].shape)
        return [F._slice_assign(F.zeros_like(inputs[0]), ograds[0],
                                begin=(None,) * axis + (b,), end=(None,) * axis + (e,))]


def _slice_like_shape(attrs, data, like):
    """(sliced axes, output shape); ``like`` None: unknown sizes."""
    n = len(data) if like is None or attrs.axes else len(like)
    if not attrs.axes and len(data) != n:
        raise ShapeError(f'slice_like slices all axes by default, but the inputs have '
                         f'{len(data)} and {n} axes')
    axes = [normalize_axis(a, len(data), 'axes') for a in attrs.axes] or list(range(n))
    out = list(data)
    for a, given in zip(axes, attrs.axes or axes):
        if like is not None and a >= len(like):
            raise ShapeError(f'slice axis {given} exceeds the {len(like)} axes of shape_like')
        size = 0 if like is None else like[a]
        if data[a] and size > data[a]:
            raise ShapeError(f'slice axis {a} of size {size} exceeds the input size {data[a]}')
        out[a] = size
    return axes, tuple(out)


@register('slice_like')
class slice_like:
    """``data[:l0, :l1, ...]`` where l is the shape of ``shape_like`` (on ``axes`` only when
    given; otherwise on all axes, and the ranks must agree). Output: data's dtype."""
    inputs = ('data', 'shape_like')
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(axes=Shape(()))

    def compute(xp, attrs, data, shape_like):
        out = _slice_like_shape(attrs, data.shape, shape_like.shape)[1]
        return data[tuple(slice(0, d) for d in out)].copy()

    def infer_shape(attrs, data, shape_like):
        if data is None:
            out = shape_like if not attrs.axes else None
        else:
            out = _slice_like_shape(attrs, data, shape_like)[1]
        return [data, shape_like], [out]

    def infer_type(attrs, data, shape_like):
        return [data, shape_like], [data]

    def gradient(F, attrs, inputs, outputs, ograds):
        data, like = inputs
        axes, out = _slice_like_shape(attrs, data.shape, like.shape)
        end = tuple(out[a] if a in axes else None for a in range(data.ndim))
        return [F._slice_assign(F.zeros_like(data), ograds[0], begin=(None,) * data.ndim,
                                end=end), None]


# -------------------------------------------------------------------------------------------------
# Tiling, repeating, padding
# -------------------------------------------------------------------------------------------------

def _tile_check(attrs):
    if any(r is None or r < 1 for r in attrs.reps):
        raise ValueError(f'reps {attrs.reps} must hold positive integers')


def _tile_shape(attrs, data):
    n = max(len(data), len(attrs.reps))
    d = (1,) * (n - len(data)) + tuple(data)
    r = (1,) * (n - len(attrs.reps)) + tuple(attrs.reps)
    return tuple(a * b for a, b in zip(d, r))


@register('tile')
class tile:
    """Repeat the whole array ``reps[i]`` times along axis i (numpy.tile: a shorter ``reps``
    is padded with leading 1s, a longer one adds leading axes to the input)."""
    inputs = ('data',)
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(reps=Shape())
    check = _tile_check
    infer_shape = _unary(_tile_shape)

    def compute(xp, attrs, data):
        return xp.tile(data, attrs.reps) if attrs.reps else data.copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        data, g = inputs[0], ograds[0]
        if all(r == 1 for r in attrs.reps):
            return [F.reshape_like(g, data)]
        n = max(data.ndim, len(attrs.reps))
        reps = (1,) * (n - len(attrs.reps)) + tuple(attrs.reps)
        # each output axis (r * d) splits into (r, d); the sum over the r axes undoes the tiling
        split = F.reshape(g, shape=tuple(c for r in reps for c in (-4, r, -1)))
        return [F.reshape_like(F.sum(split, axis=tuple(range(0, 2 * n, 2))), data)]


def _repeat_axis(attrs, ndim):
    if attrs.axis is not None and not -ndim <= attrs.axis < ndim:
        raise ShapeError(f'axis = {attrs.axis} out of bounds for a {ndim}-d input')
    return None if attrs.axis is None else attrs.axis % ndim


def _repeat_shape(attrs, data):
    axis = _repeat_axis(attrs, len(data))
    if axis is None:
        return (_prod(data) * attrs.repeats if _known(data) else 0,)
    return data[:axis] + (data[axis] * attrs.repeats,) + data[axis + 1:]


def _repeat_check(attrs):
    if attrs.repeats < 0:
        raise ValueError(f'repeats cannot be a negative number, got {attrs.repeats}')


@register('repeat')
class repeat:
    """Repeat each element ``repeats`` times along ``axis`` (None: of the flattened array).
    data (..., d, ...) -> (..., d * repeats, ...); axis None: (size * repeats,)."""
    inputs = ('data',)
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(repeats=Int(high=INT32_MAX), axis=Int(None))
    check = _repeat_check
    infer_shape = _unary(_repeat_shape)

    def compute(xp, attrs, data):
        axis = _repeat_axis(attrs, data.ndim)
        return xp.repeat(data.reshape(-1) if axis is None else data, attrs.repeats, axis=axis)

    def gradient(F, attrs, inputs, outputs, ograds):
        data, g, r = inputs[0], ograds[0], attrs.repeats
        if r == 0:
            return [F.zeros_like(data)]
        axis = _repeat_axis(attrs, data.ndim)
        if axis is None:
            return [F.reshape_like(F.sum(F.reshape(g, shape=(-1, r)), axis=1), data)]
        return [F.sum(F.reshape(g, shape=(0,) * axis + (-4, -1, r, -2)), axis=axis + 1)]


_PAD_MODES = ('constant', 'edge', 'reflect')


def _pad_pairs(attrs, shape, backward=False):
    """Per-axis (before, after) pads, with MXNet's checks on the forward input ``shape``."""
    ndim, pw = len(shape), attrs.pad_width
    if ndim not in (4, 5):
        raise ShapeError(f'the current implementation only supports 4-D or 5-D input, got '
                         f'{tuple(shape)}')
    if len(pw) != 2 * ndim:
        raise ShapeError(f'input shape {tuple(shape)} vs padding spec {pw} mismatch')
    if any(pw[:4]):
        raise ShapeError(f'padding on the first two axes must be zero, got pad_width={pw}')
    pairs = [(pw[2 * i], pw[2 * i + 1]) for i in range(ndim)]
    if attrs.mode != 'constant' and min(pw) < 0:
        raise NotSupportedError(f'Pad: negative pad_width {pw} works only in constant mode')
    if attrs.mode == 'reflect' and not backward:
        if any(d and max(p) >= d for d, p in zip(shape, pairs)):
            raise ShapeError(f'reflection padding only supports pads smaller than the input '
                             f'size: pad_width={pw}, input {tuple(shape)}')
    return pairs


def _pad_shape(attrs, data, backward=False):
    sign = -1 if backward else 1
    out = tuple(d + sign * (b + a) if d else 0
                for d, (b, a) in zip(data, _pad_pairs(attrs, data, backward)))
    if min(out) < 0:
        raise ShapeError(f'the pads {attrs.pad_width} crop more than the input {data} holds')
    return out


def _pad_constant(xp, data, pairs, value):
    """Constant padding; a negative pad crops (MXNet's kernel reads out of range as value)."""
    crop = tuple(slice(max(-b, 0), d - max(-a, 0)) for d, (b, a) in zip(data.shape, pairs))
    grow = [(max(b, 0), max(a, 0)) for b, a in pairs]
    value = np.asarray(value).astype(data.dtype)[()]
    return xp.pad(data[crop], grow, mode='constant', constant_values=value)


def _at(axis, start, stop):
    return (slice(None),) * axis + (slice(start, stop),)


def _pad_check(attrs):
    if None in attrs.pad_width:
        raise ValueError(f'pad_width {attrs.pad_width} must hold integers')


@register('Pad', aliases=('pad',))
class Pad:
    """Pad the spatial axes of a 4-D or 5-D array: ``pad_width`` holds (before, after) per
    axis and must be 0 on the first two axes; ``mode`` 'constant' (``constant_value``;
    negative pads crop), 'edge' (repeat the border) or 'reflect' (mirror without the border;
    pads smaller than the axis). data (N, C, d...) -> (N, C, d + before + after ...)."""
    inputs = ('data',)
    backward_node = LEGACY
    attrs = dict(mode=Str(choices=_PAD_MODES), pad_width=Shape(), constant_value=Float(0))
    check = _pad_check
    infer_shape = _unary(_pad_shape)

    def compute(xp, attrs, data):
        pairs = _pad_pairs(attrs, data.shape)
        if attrs.mode == 'constant':
            return _pad_constant(xp, data, pairs, attrs.constant_value)
        return xp.pad(data, pairs, mode=attrs.mode)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_Pad(ograds[0], mode=attrs.mode, pad_width=attrs.pad_width)]


@register('_backward_Pad')
class _backward_Pad:
    """The adjoint of Pad: the gradient of the padded output back on the input's shape
    (the pads of edge/reflect mode add onto the input elements they copied).
    data (padded shape) -> (N, C, d - before - after ...)."""
    inputs = ('data',)
    attrs = dict(mode=Str(choices=_PAD_MODES), pad_width=Shape())
    check = _pad_check
    infer_shape = _unary(lambda attrs, data: _pad_shape(attrs, data, backward=True))

    def compute(xp, attrs, data):
        pairs = _pad_pairs(attrs, data.shape, backward=True)
        if attrs.mode == 'constant':
            return _pad_constant(xp, data, [(-b, -a) for b, a in pairs], 0)
        grad = data
        for axis, (b, a) in enumerate(pairs):
            if not (b or a):
                continue
            n = grad.shape[axis] - b - a
            centre = grad[_at(axis, b, b + n)].copy()
            left, right = grad[_at(axis, 0, b)], grad[_at(axis, b + n, None)]
            if attrs.mode == 'edge':
                centre[_at(axis, 0, 1)] += left.sum(axis=axis, keepdims=True)
                centre[_at(axis, n - 1, n)] += right.sum(axis=axis, keepdims=True)
            else:
                # padded position j (< b) copied element b - j; after the data, k copied n-2-k
                centre[_at(axis, 1, b + 1)] += xp.flip(left, axis=axis)
                centre[_at(axis, n - 1 - a, n - 1)] += xp.flip(right, axis=axis)
            grad = centre
        return _fresh(xp, grad, data)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.Pad(ograds[0], mode=attrs.mode, pad_width=attrs.pad_width, constant_value=0)]
