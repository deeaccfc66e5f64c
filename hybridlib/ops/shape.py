"""Shape manipulation: Reshape (MXNet's special codes), Flatten, transpose, expand_dims,
squeeze, SwapAxis, reverse, Concat, stack, SliceChannel, _split_v2, reshape_like,
depth_to_space, space_to_depth, shape_array, size_array and diag (and ``_backward_diag``).
Slicing, tiling and padding (slice, slice_axis, slice_like, tile, repeat, Pad) are in
``slicing.py``, which shares this module's helpers (``_unary``, ``_fresh``, ``_prod``,
``_known``).

Shape inference works with partial knowledge (0 is an unknown dimension, None an unknown
shape), because Gluon's deferred initialisation runs it through these operators: Reshape tracks
unknown input dimensions symbolically so that ``(0, -1)`` on ``(0, 5, 4)`` still gives
``(0, 20)``, and Concat fills the non-concatenated axes of every input from the others.

Outputs never share memory with inputs (in-place NDArray arithmetic writes into an output's
buffer), so views are copied. Gradients use registered operators only: reshapes use
``reshape_like``, transpose its inverse permutation, Concat/stack/split are each other's
gradients, diag and ``_backward_diag`` are each other's.
"""
from collections import Counter
from fractions import Fraction

import numpy as np

from ..base import ShapeError
from .attrs import Bool, Count, Int, Shape
from .registry import (BackwardNode, LEGACY, merge_shape, normalize_axis, register, same_dtype,
                       zero_gradient)

__all__ = []


# -------------------------------------------------------------------------------------------------
# Helpers
# -------------------------------------------------------------------------------------------------

def _fresh(xp, result, *inputs):
    """``result``, copied when it is a view of one of ``inputs``."""
    if any(xp.may_share_memory(result, x) for x in inputs):
        return result.copy()
    return result


def _prod(dims):
    out = 1
    for d in dims:
        out *= d
    return out


def _known(shape):
    return shape is not None and 0 not in shape


def _outputs(value, n):
    """The outputs of a multi-output call as a list (a single output is not a sequence)."""
    return [value] if n == 1 else [value[i] for i in range(n)]


def _unary(shape_fn):
    """``infer_shape`` of a one-input operator from ``shape_fn(attrs, data) -> output``."""
    def infer_shape(attrs, data):
        return [data], [None if data is None else shape_fn(attrs, tuple(data))]
    return infer_shape


def _reshaping(shape_fn):
    """``compute`` of an operator that only reshapes its input to ``shape_fn``'s shape."""
    def compute(xp, attrs, data):
        return _fresh(xp, data.reshape(shape_fn(attrs, data.shape)), data)
    return compute


def _reshaping_infer(shape_fn):
    """``infer_shape`` of an operator that only reshapes: a single unknown input dimension is
    filled from the output's size, also when the output is known only from its consumers
    (Gluon's deferred RNN weights: Reshape(-1) of an (4H, 0) weight into a known length)."""
    def infer_shape(attrs, data, out_shapes=None):
        if data is None:
            return [None], [None]
        out = shape_fn(attrs, data)
        if out_shapes and out_shapes[0] is not None and out is not None:
            out = merge_shape(out, out_shapes[0], 'output')
        return [_fill_one_unknown(data, _prod(out)) if _known(out) else data], [out]
    return infer_shape


def _like_data_gradient(F, attrs, inputs, outputs, ograds):
    return [F.reshape_like(ograds[0], inputs[0])]


def _fill_one_unknown(shape, size):
    """Fill the single unknown dimension of ``shape`` from the known total ``size``."""
    if shape is None or list(shape).count(0) != 1:
        return shape
    rest = _prod(d for d in shape if d)
    if size % rest:
        raise ShapeError(f'the input {tuple(shape)} cannot have {size} elements')
    return tuple(d or size // rest for d in shape)


# -------------------------------------------------------------------------------------------------
# Reshape and friends
# -------------------------------------------------------------------------------------------------

class _Dim:
    """A dimension as ``coef * product of unknown input dimensions`` (their indices in
    ``syms``), so that unknown dimensions that Reshape only moves around cancel out. ``coef``
    is an int until a division leaves a remainder (then a Fraction); ``syms`` is None for a
    known size, so that reshapes of known shapes (every imperative call) stay integer maths."""
    __slots__ = ('coef', 'syms')

    def __init__(self, coef, syms=()):
        self.coef = coef
        self.syms = Counter(syms) if syms else None

    def __mul__(self, other):
        out = _Dim(self.coef * other.coef)
        if self.syms or other.syms:
            out.syms = (self.syms or Counter()) + (other.syms or Counter())
        return out

    def divide(self, other):
        if other.coef == 0:
            raise ShapeError('cannot infer the -1 of a reshape with a zero-size dimension')
        a, b = self.coef, other.coef
        out = _Dim(a // b if isinstance(a, int) and isinstance(b, int) and a % b == 0
                   else Fraction(a) / b)
        if other.syms:
            left = (self.syms or Counter()).copy()
            left.subtract(other.syms)
            if any(v < 0 for v in left.values()):
                return _Dim(0, (-1,))            # not expressible: unknown
            out.syms = +left or None
        elif self.syms:
            out.syms = self.syms.copy()
        return out

    def value(self):
        """The size when it is a known integer, else 0."""
        if self.syms or self.coef < 0 or \
                isinstance(self.coef, Fraction) and self.coef.denominator != 1:
            return 0
        return int(self.coef)


def _infer_reshape(codes, dshape, reverse, exact):
    """MXNet's InferReshapeShape on a partial shape (``exact``: 0 is a real size)."""
    dims = [_Dim(d) if d or exact else _Dim(1, (i,)) for i, d in enumerate(dshape)]
    params = list(codes)
    if reverse:
        dims.reverse()
        params.reverse()
    tmp, src, inf_idx, i, n = [], 0, -1, 0, len(dims)
    while i < len(params):
        p = params[i]
        if p in (0, -3, -4) and src + (p == -3) >= n:
            raise ShapeError(f'code {p} at position {i} reads input dimension '
                             f'{src + (p == -3)}, but the input {tuple(dshape)} has only {n}')
        if p == 0:
            tmp.append(dims[src])
            src += 1
        elif p == -1:
            if inf_idx >= 0:
                raise ShapeError('one and only one dimension can be inferred (-1)')
            inf_idx = i
            tmp.append(_Dim(1))
            src += 1
        elif p == -2:
            tmp.extend(dims[src:])
            src = n
        elif p == -3:
            tmp.append(dims[src] * dims[src + 1])
            src += 2
        elif p == -4:
            if i + 2 >= len(params):
                raise ShapeError(f'code -4 at position {i} must be followed by two sizes')
            d0, (d1, d2) = dims[src], params[i + 1:i + 3]
            src, i = src + 1, i + 2
            if d1 == d2 == -1 or min(d1, d2) < -1 or 0 in (d1, d2):
                raise ShapeError(f'the sizes after -4 must be positive or one -1, got {d1}, '
                                 f'{d2}')
            if not d0.syms and (exact or d0.value() > 0):
                v0 = int(d0.coef)
                d1 = v0 // d2 if d1 == -1 else d1
                d2 = v0 // d1 if d2 == -1 else d2
                if d1 * d2 != v0:
                    raise ShapeError(f'split dims {d1}, {d2} do not divide the input '
                                     f'dimension {v0}')
                tmp += [_Dim(d1), _Dim(d2)]
            else:
                tmp += [d0.divide(_Dim(d2)) if d1 == -1 else _Dim(d1),
                        d0.divide(_Dim(d1)) if d2 == -1 else _Dim(d2)]
        else:
            tmp.append(_Dim(p))
            src += 1
        i += 1
    if inf_idx >= 0:
        # MXNet indexes the inferred dimension by the code's position, not the output's
        if inf_idx >= len(tmp):
            raise ShapeError(f'cannot infer the -1 at position {inf_idx}: MXNet requires it '
                             'not to follow -2 or -4 codes that change the count of dimensions')
        total, new_size = _Dim(1), _Dim(1)
        for d in dims:
            total = total * d
        for d in tmp:
            new_size = new_size * d
        guess = total.divide(new_size)
        tmp[inf_idx] = guess if guess.syms else _Dim(int(guess.coef))   # integer division
    if reverse:
        tmp.reverse()
    return tuple(d.value() for d in tmp)


def _target_shape(attrs, dshape, exact):
    """The deprecated ``target_shape`` (with ``keep_highest``) form of Reshape."""
    oshape = list(attrs.target_shape)
    if not oshape:
        raise ShapeError('Reshape needs shape (or the deprecated target_shape)')
    if attrs.keep_highest:
        oshape[0] = dshape[0]
    zeros = [i for i in range(int(attrs.keep_highest), len(oshape)) if oshape[i] == 0]
    if len(zeros) == 1 and (exact or _known(dshape)):
        rest = _prod(d for j, d in enumerate(oshape) if j != zeros[0])
        if rest:
            oshape[zeros[0]] = _prod(dshape) // rest
    return tuple(oshape)


def _reshape_shape(attrs, dshape, exact=False):
    if attrs.shape:
        out = _infer_reshape(attrs.shape, dshape, attrs.reverse, exact)
    else:
        out = _target_shape(attrs, dshape, exact)
    if (exact or (_known(dshape) and _known(out))) and _prod(out) != _prod(dshape):
        raise ShapeError(f'cannot reshape {tuple(dshape)} (size {_prod(dshape)}) to {out} '
                         f'(size {_prod(out)})')
    return out


def _reshape_check(attrs):
    if any(c is None or c < -4 for c in attrs.shape):
        raise ValueError(f'shape {attrs.shape}: a size must be positive or one of the codes '
                         '0, -1, -2, -3, -4')
    if any(c is None or c < 0 for c in attrs.target_shape):
        raise ValueError(f'target_shape {attrs.target_shape} must hold sizes >= 0')


@register('Reshape', aliases=('reshape',))
class Reshape:
    """Reshape ``data`` to ``shape``, which may hold MXNet's codes: 0 copies the next input
    dimension, -1 infers one dimension, -2 copies all remaining, -3 merges the next two, -4
    splits the next into the two sizes that follow (one may be -1). ``reverse`` reads the codes
    and the input right to left. The deprecated ``target_shape`` (a 0 is inferred;
    ``keep_highest`` keeps the first dimension) is used when ``shape`` is empty.
    data (d0, ..., dn) -> the new shape, same size.
    """
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(shape=Shape(()), reverse=Bool(False), target_shape=Shape(()),
                 keep_highest=Bool(False))
    check = _reshape_check
    compute = _reshaping(lambda attrs, shape: _reshape_shape(attrs, shape, exact=True))
    reshapes = True
    infer_shape = _reshaping_infer(_reshape_shape)
    gradient = _like_data_gradient


def _flatten_shape(attrs, data):
    if not data:
        raise ShapeError('Flatten needs an input with at least one axis')
    return (data[0], _prod(data[1:]) if _known(data[1:]) else 0)


@register('Flatten', aliases=('flatten',))
class Flatten:
    """Collapse all axes but the first: (d0, d1, ..., dn) -> (d0, d1 * ... * dn); a 1-d
    input (d0,) gives (d0, 1)."""
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0',))
    compute = _reshaping(_flatten_shape)
    reshapes = True
    infer_shape = _reshaping_infer(_flatten_shape)
    gradient = _like_data_gradient


def _transpose_axes(attrs, ndim):
    axes = tuple(attrs.axes) or tuple(range(ndim - 1, -1, -1))
    if sorted(axes) != list(range(ndim)):
        raise ShapeError(f'axes {axes} must be a permutation of 0..{ndim - 1} (MXNet takes no '
                         'negative axes here)')
    return axes


@register('transpose')
class transpose:
    """Permute the axes: output axis i is input axis ``axes[i]``; empty ``axes`` reverses
    them. data (d0, ..., dn) -> (d[axes[0]], ..., d[axes[n]])."""
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(axes=Shape(()))
    infer_shape = _unary(lambda attrs, d: tuple(d[a] for a in _transpose_axes(attrs, len(d))))

    def compute(xp, attrs, data):
        out = data.transpose(_transpose_axes(attrs, data.ndim))
        return _fresh(xp, xp.ascontiguousarray(out), data)

    def gradient(F, attrs, inputs, outputs, ograds):
        if not attrs.axes:
            return [F.transpose(ograds[0])]
        return [F.transpose(ograds[0], axes=tuple(int(i) for i in np.argsort(attrs.axes)))]


def _expand_shape(attrs, data):
    ndim = len(data)
    if not -ndim - 1 <= attrs.axis <= ndim:
        raise ShapeError(f'axis must be in the range [{-ndim - 1}, {ndim}] ({attrs.axis} '
                         'provided)')
    a = attrs.axis % (ndim + 1)
    return tuple(data[:a]) + (1,) + tuple(data[a:])


@register('expand_dims')
class expand_dims:
    """Insert an axis of size 1 at ``axis`` (in [-ndim-1, ndim]).
    data (d0, ..., dn) -> (d0, ..., 1, ..., dn)."""
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(axis=Int())
    compute = _reshaping(_expand_shape)
    reshapes = True
    infer_shape = _unary(_expand_shape)
    gradient = _like_data_gradient


def _squeeze_shape(attrs, data):
    """(input shape with the squeezed axes set to 1, output shape or None if unknown)."""
    if attrs.axis is None:
        if 0 in data:
            return data, None
        out = tuple(d for d in data if d != 1)
    else:
        axes = [normalize_axis(a, len(data)) for a in attrs.axis]
        if len(set(axes)) != len(axes):
            raise ShapeError(f'duplicate value in axis {attrs.axis}')
        for a in axes:
            if data[a] not in (0, 1):
                raise ShapeError(f'cannot squeeze out axis {a} of size {data[a]}, not one')
        data = tuple(1 if i in axes else d for i, d in enumerate(data))
        out = tuple(d for i, d in enumerate(data) if i not in axes)
    return data, out or (1,)


@register('squeeze')
class squeeze:
    """Remove axes of size 1 (all of them, or those in ``axis``; ``axis=()`` removes none).
    Squeezing every axis gives shape (1,), MXNet's rule for its non-numpy arrays."""
    inputs = ('data',)
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(axis=Shape(None))
    compute = _reshaping(lambda attrs, shape: _squeeze_shape(attrs, shape)[1])
    reshapes = True
    gradient = _like_data_gradient

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        data, out = _squeeze_shape(attrs, data)
        return [data], [out]


def _swap_axes(attrs, ndim):
    return normalize_axis(attrs.dim1, ndim, 'dim1'), normalize_axis(attrs.dim2, ndim, 'dim2')


def _swap_shape(attrs, data):
    a, b = _swap_axes(attrs, len(data))
    out = list(data)
    out[a], out[b] = data[b], data[a]
    return tuple(out)


@register('SwapAxis', aliases=('swapaxes',))
class SwapAxis:
    """Exchange axes ``dim1`` and ``dim2`` (negative values count from the end)."""
    inputs = ('data',)
    backward_node = LEGACY
    attrs = dict(dim1=Int(0), dim2=Int(0))
    infer_shape = _unary(_swap_shape)

    def compute(xp, attrs, data):
        a, b = _swap_axes(attrs, data.ndim)
        return _fresh(xp, xp.ascontiguousarray(xp.swapaxes(data, a, b)), data)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.SwapAxis(ograds[0], dim1=attrs.dim1, dim2=attrs.dim2)]


def _reverse_axes(attrs, ndim):
    for a in attrs.axis:
        if not 0 <= a < ndim:
            raise ShapeError(f'axis {a} must be in [0, {ndim}) (MXNet takes no negative axes '
                             'here)')
    # a repeated axis is reversed twice, as in MXNet
    return tuple(sorted(a for a, c in Counter(attrs.axis).items() if c % 2))


def _reverse_shape(attrs, data):
    _reverse_axes(attrs, len(data))
    return data


@register('reverse', aliases=('flip',))
class reverse:
    """Reverse the order of the elements along each axis in ``axis``; shape unchanged."""
    inputs = ('data',)
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(axis=Shape())
    infer_shape = _unary(_reverse_shape)

    def compute(xp, attrs, data):
        axes = _reverse_axes(attrs, data.ndim)
        return xp.flip(data, axis=axes).copy() if axes else data.copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.reverse(ograds[0], axis=attrs.axis)]


# -------------------------------------------------------------------------------------------------
# Joining and splitting
# -------------------------------------------------------------------------------------------------

def _check_count(attrs, shapes):
    if len(shapes) != attrs.num_args:
        raise ShapeError(f'num_args={attrs.num_args} but {len(shapes)} inputs are given')


@register('Concat', aliases=('concat',))
class Concat:
    """Join arrays along axis ``dim``; the other axes must agree.
    arg_i (..., c_i, ...) -> (..., sum c_i, ...)."""
    variadic = 'num_args'
    attrs = dict(num_args=Count(), dim=Int(1))
    infer_type = same_dtype

    def backward_node(attrs):
        return BackwardNode(('ograd0',) + tuple(f'in{i}' for i in range(attrs.num_args)))

    def compute(xp, attrs, *args):
        return xp.concatenate(args, axis=attrs.dim)

    def infer_shape(attrs, *shapes):
        _check_count(attrs, shapes)
        ranks = {len(s) for s in shapes if s is not None}
        if len(ranks) > 1:
            raise ShapeError(f'inputs have different ranks: {list(shapes)}')
        if not ranks:
            return list(shapes), [None]
        ndim = ranks.pop()
        if not -ndim <= attrs.dim < ndim:
            raise ShapeError(f'axis {attrs.dim} exceeds the input dimension of {ndim}')
        axis = attrs.dim % ndim
        common = (0,) * ndim
        for i, s in enumerate(shapes):
            if s is not None:
                common = merge_shape(common, s[:axis] + (0,) + s[axis + 1:],
                                     f'input arg{i} disagrees with the others off axis {axis}')
        sizes = [0 if s is None else s[axis] for s in shapes]
        ins = [common[:axis] + (c,) + common[axis + 1:] for c in sizes]
        return ins, [common[:axis] + ((sum(sizes) if all(sizes) else 0),) + common[axis + 1:]]

    def gradient(F, attrs, inputs, outputs, ograds):
        if len(inputs) == 1:
            return [ograds[0]]
        axis = attrs.dim % inputs[0].ndim
        bounds = [0]
        for x in inputs[:-1]:
            bounds.append(bounds[-1] + x.shape[axis])
        parts = F._split_v2(ograds[0], indices=tuple(bounds), axis=axis)
        return _outputs(parts, len(inputs))


@register('stack')
class stack:
    """Join arrays of one shape along a new axis ``axis`` (in [-ndim-1, ndim]).
    n arrays (d0, ..., dk) -> (d0, ..., n, ..., dk)."""
    variadic = 'num_args'
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(axis=Int(0), num_args=Count())
    infer_type = same_dtype

    def compute(xp, attrs, *args):
        return xp.stack(args, axis=attrs.axis)

    def infer_shape(attrs, *shapes):
        _check_count(attrs, shapes)
        merged = None
        for i, s in enumerate(shapes):
            merged = merge_shape(merged, s, f'input arg{i} differs from the others')
        if merged is None:
            return list(shapes), [None]
        ndim = len(merged) + 1
        if not -ndim <= attrs.axis < ndim:
            raise ShapeError(f'axis {attrs.axis} exceeds the output dimension of {ndim}')
        a = attrs.axis % ndim
        return [merged] * len(shapes), [merged[:a] + (len(shapes),) + merged[a:]]

    def gradient(F, attrs, inputs, outputs, ograds):
        n = len(inputs)
        parts = F.split(ograds[0], num_outputs=n, axis=attrs.axis, squeeze_axis=True)
        return _outputs(parts, n)


def _split_gradient(F, attrs, inputs, outputs, ograds):
    """Concat (or stack, when the split axis was squeezed) of the output gradients."""
    grads = [F.zeros_like(o) if g is None else g for g, o in zip(ograds, outputs)]
    if not attrs.squeeze_axis:
        return [F.Concat(*grads, dim=attrs.axis)]
    out = F.stack(*grads, axis=attrs.axis)
    # a 1-d input split into (1,)-shaped outputs (not 0-d) stacks to (n, 1)
    return [F.reshape_like(out, inputs[0]) if inputs[0].ndim == 1 else out]


def _split_type(attrs, dtype):
    n = attrs.num_outputs if 'num_outputs' in attrs else _split_v2.num_outputs(attrs)
    return [dtype], [dtype] * n


def _split_shapes(data, axis, sizes, squeeze):
    """(input shape, output shapes) of a split of ``data`` along ``axis`` into ``sizes``."""
    if squeeze:
        if any(s not in (0, 1) for s in sizes):
            raise ShapeError(f'with squeeze_axis=True every part must have size 1, got sizes '
                             f'{sizes} from the input {tuple(data)}')
        data = tuple(data[:axis]) + (len(sizes),) + tuple(data[axis + 1:])
        return data, [tuple(data[:axis] + data[axis + 1:]) or (1,)] * len(sizes)
    return data, [tuple(data[:axis]) + (s,) + tuple(data[axis + 1:]) for s in sizes]


def _split_compute(xp, attrs, data, sizes):
    axis = normalize_axis(attrs.axis, data.ndim)
    parts = xp.split(data, [int(b) for b in np.cumsum(sizes)[:-1]], axis=axis)
    if attrs.squeeze_axis:
        # MXNet's 0-d parts of a 1-d input are (1,) here (no 0-d results in legacy mode)
        parts = [p.reshape(1) if data.ndim == 1 else xp.squeeze(p, axis=axis) for p in parts]
    return tuple(_fresh(xp, p, data) for p in parts)


def _slice_channel_sizes(attrs, data):
    axis = normalize_axis(attrs.axis, len(data))
    d, n = data[axis], attrs.num_outputs
    if d and d % n:
        raise ShapeError(f'cannot split axis {axis} of the input {tuple(data)} into '
                         f'num_outputs={n} evenly sized chunks')
    if attrs.squeeze_axis and d and d != n:
        raise ShapeError(f'with squeeze_axis=True the size of the split axis must equal '
                         f'num_outputs: input {tuple(data)}, axis={axis}, num_outputs={n}')
    return axis, [(d or n * attrs.squeeze_axis) // n] * n


@register('SliceChannel', aliases=('split',))
class SliceChannel:
    """Split ``data`` along ``axis`` into ``num_outputs`` equal parts (outputs output0, ...).
    With ``squeeze_axis`` (the axis size must equal num_outputs) the axis is removed.
    data (..., d, ...) -> num_outputs x (..., d / num_outputs, ...)."""
    inputs = ('data',)
    backward_node = LEGACY
    attrs = dict(num_outputs=Count(), axis=Int(1), squeeze_axis=Bool(False))
    hint = 'split'
    infer_type = _split_type
    gradient = _split_gradient

    def num_outputs(attrs):
        return attrs.num_outputs

    def output_names(attrs):
        return [f'output{i}' for i in range(attrs.num_outputs)]

    def check(attrs):
        if attrs.num_outputs < 1:
            raise ValueError(f'num_outputs must be positive, got {attrs.num_outputs}')

    def compute(xp, attrs, data):
        return _split_compute(xp, attrs, data, _slice_channel_sizes(attrs, data.shape)[1])

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None] * attrs.num_outputs
        axis, sizes = _slice_channel_sizes(attrs, data)
        data, outs = _split_shapes(data, axis, sizes, attrs.squeeze_axis)
        return [data], outs


def _split_v2_sizes(attrs, data):
    """(axis, sizes of the parts along it; 0 = unknown)."""
    axis = normalize_axis(attrs.axis, len(data))
    d = data[axis]
    if attrs.sections > 0:
        base, extra = divmod(d, attrs.sections)
        return axis, [(base + 1) * bool(d)] * extra + [base] * (attrs.sections - extra)
    idx = attrs.indices
    for k in range(1, len(idx)):
        if idx[k - 1] > idx[k]:
            raise ShapeError(f'indices {idx}: start {idx[k - 1]} is not less than end '
                             f'{idx[k]} for part {k - 1}')
    if d and idx[-1] > d:
        raise ShapeError(f'indices {idx}: {idx[-1]} exceeds the axis size {d}')
    return axis, [b - a for a, b in zip(idx, idx[1:])] + [d - idx[-1] if d else 0]


def _split_v2_check(attrs):
    if attrs.sections < 0:
        raise ValueError(f'sections must be >= 0, got {attrs.sections}')
    if attrs.sections == 0 and (not attrs.indices or attrs.indices[0] != 0):
        raise ValueError(f'indices {attrs.indices} must start with 0 (the start of the first '
                         'part), or sections must be > 0')


@register('_split_v2')
class _split_v2:
    """Split ``data`` along ``axis`` at ``indices`` (the start of each part, beginning with 0)
    or into ``sections`` near-equal parts (the first ``d % sections`` one larger), optionally
    removing the axis (``squeeze_axis``; every part must then have size 1)."""
    inputs = ('data',)
    attrs = dict(indices=Shape(), axis=Int(1), squeeze_axis=Bool(False), sections=Int(0))
    check = _split_v2_check
    infer_type = _split_type
    gradient = _split_gradient

    def num_outputs(attrs):
        return attrs.sections if attrs.sections > 0 else len(attrs.indices)

    def backward_node(attrs):
        # MXNet's reads the gradients of all the parts
        return BackwardNode(tuple(f'ograd{i}' for i in range(_split_v2.num_outputs(attrs))))

    def compute(xp, attrs, data):
        _split_v2.infer_shape(attrs, data.shape)
        return _split_compute(xp, attrs, data, _split_v2_sizes(attrs, data.shape)[1])

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None] * _split_v2.num_outputs(attrs)
        axis, sizes = _split_v2_sizes(attrs, data)
        data, outs = _split_shapes(data, axis, sizes, attrs.squeeze_axis)
        return [data], outs


# -------------------------------------------------------------------------------------------------
# reshape_like, depth/space, shape and size, diag
# -------------------------------------------------------------------------------------------------

def _like_range(begin, end, ndim, which):
    b = 0 if begin is None else begin + ndim if begin < 0 else begin
    e = ndim if end is None else end + ndim if end < 0 else end
    if not 0 <= b < e <= ndim:
        raise ShapeError(f'invalid {which}_begin={begin}, {which}_end={end} for a {ndim}-d '
                         f'{which} (begin < end <= ndim is needed)')
    return b, e


@register('reshape_like')
class reshape_like:
    """Reshape ``lhs`` to the shape of ``rhs``, or replace ``lhs``'s axes
    [lhs_begin, lhs_end) by ``rhs``'s axes [rhs_begin, rhs_end) (None: the whole range;
    negative values count from the end). The size must not change. Output: lhs's dtype."""
    inputs = ('lhs', 'rhs')
    attrs = dict(lhs_begin=Int(None), lhs_end=Int(None), rhs_begin=Int(None),
                 rhs_end=Int(None))

    def compute(xp, attrs, lhs, rhs):
        out = reshape_like.infer_shape(attrs, lhs.shape, rhs.shape)[1][0]
        return _fresh(xp, lhs.reshape(out), lhs)

    reshapes = True

    def infer_shape(attrs, lhs, rhs):
        if lhs is None or rhs is None:
            return [lhs, rhs], [None]
        lb, le = _like_range(attrs.lhs_begin, attrs.lhs_end, len(lhs), 'lhs')
        rb, re = _like_range(attrs.rhs_begin, attrs.rhs_end, len(rhs), 'rhs')
        mid_l, mid_r = tuple(lhs[lb:le]), tuple(rhs[rb:re])
        if _known(mid_l) and _known(mid_r) and _prod(mid_l) != _prod(mid_r):
            raise ShapeError(f'cannot reshape lhs {tuple(lhs)}: axes {lb}..{le - 1} and rhs '
                             f'axes {rb}..{re - 1} differ in size')
        # one unknown dimension on one side follows from the other side's size
        if _known(mid_r):
            mid_l = _fill_one_unknown(mid_l, _prod(mid_r))
        elif _known(mid_l):
            mid_r = _fill_one_unknown(mid_r, _prod(mid_l))
        lhs = tuple(lhs[:lb]) + mid_l + tuple(lhs[le:])
        rhs = tuple(rhs[:rb]) + mid_r + tuple(rhs[re:])
        return [lhs, rhs], [lhs[:lb] + mid_r + lhs[le:]]

    def infer_type(attrs, lhs, rhs):
        return [lhs, rhs], [lhs]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.reshape_like(ograds[0], inputs[0]), None]


def _block_check(attrs):
    if attrs.block_size < 1:
        raise ValueError(f'block_size must be a positive integer, got {attrs.block_size}')


def _depth_space_shape(attrs, data, to_space):
    if len(data) != 4:
        raise ShapeError(f'the operation requires a 4-D (N, C, H, W) input, got {tuple(data)}')
    n, c, h, w = data
    b = attrs.block_size
    if to_space:
        if c % (b * b):
            raise ShapeError(f'the depth {c} must be a multiple of block_size^2 = {b * b}')
        return (n, c // (b * b), h * b, w * b)
    if h % b or w % b:
        raise ShapeError(f'the spatial sizes {h}, {w} must be multiples of block_size={b}')
    return (n, c * b * b, h // b, w // b)


def _block_compute(to_space):
    # depth_to_space reads channel (i*b + j)*C' + c into block position (i, j) (DCR order);
    # space_to_depth is its inverse
    def compute(xp, attrs, data):
        n, c, h, w = data.shape
        b = attrs.block_size
        out = _depth_space_shape(attrs, data.shape, to_space)
        if to_space:
            x = data.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
        else:
            x = data.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
        return _fresh(xp, x.reshape(out), data)
    return compute


@register('depth_to_space')
class depth_to_space:
    """Move depth blocks to space: out[n, c, h*b + i, w*b + j] = data[n, (i*b + j)*C' + c,
    h, w] with C' = C / b^2. (N, C, H, W) -> (N, C/b^2, H*b, W*b)."""
    inputs = ('data',)
    backward_node = BackwardNode(('ograd0',), ('data',))
    attrs = dict(block_size=Int())
    check = _block_check
    compute = _block_compute(True)
    infer_shape = _unary(lambda attrs, data: _depth_space_shape(attrs, data, True))

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.space_to_depth(ograds[0], block_size=attrs.block_size)]


@register('space_to_depth')
class space_to_depth:
    """Move spatial blocks to depth (the inverse of depth_to_space): out[n, (i*b + j)*C + c,
    h, w] = data[n, c, h*b + i, w*b + j]. (N, C, H, W) -> (N, C*b^2, H/b, W/b)."""
    inputs = ('data',)
    backward_node = BackwardNode(('ograd0',), ('data',))
    attrs = dict(block_size=Int())
    check = _block_check
    compute = _block_compute(False)
    infer_shape = _unary(lambda attrs, data: _depth_space_shape(attrs, data, False))

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.depth_to_space(ograds[0], block_size=attrs.block_size)]


def _int64_output(attrs, dtype):
    return [dtype], [np.dtype(np.int64)]


@register('shape_array')
class shape_array:
    """The shape of ``data`` as a 1-d int64 array: (d0, ..., dn) -> (ndim,)."""
    inputs = ('data',)
    named_inputs = False
    infer_shape = _unary(lambda attrs, data: (len(data),))
    infer_type = _int64_output
    gradient = zero_gradient

    def compute(xp, attrs, data):
        return xp.asarray(np.asarray(data.shape, dtype=np.int64))


@register('size_array')
class size_array:
    """The number of elements of ``data`` as an int64 array of shape (1,)."""
    inputs = ('data',)
    named_inputs = False
    infer_type = _int64_output
    gradient = zero_gradient

    def compute(xp, attrs, data):
        return xp.asarray(np.asarray([data.size], dtype=np.int64))

    def infer_shape(attrs, data):
        return [data], [(1,)]


def _diag_axes(attrs, ndim):
    a1 = normalize_axis(attrs.axis1, ndim, 'axis1')
    a2 = normalize_axis(attrs.axis2, ndim, 'axis2')
    if a1 == a2:
        raise ShapeError(f'axis1 and axis2 cannot refer to the same axis {a1}')
    return a1, a2


def _diag_shape(attrs, data):
    if not data:
        raise ShapeError('diag needs an input with at least one axis')
    k = attrs.k
    if len(data) == 1:
        n = data[0] + abs(k) if data[0] else 0
        return (n, n)
    a1, a2 = _diag_axes(attrs, len(data))
    d1, d2 = data[a1], data[a2]
    size = max(0, min(d1, d2 - k) if k >= 0 else min(d1 + k, d2)) if d1 and d2 else 0
    return tuple(d for i, d in enumerate(data) if i not in (a1, a2)) + (size,)


_DIAG_ATTRS = dict(k=Int(0), axis1=Int(0), axis2=Int(1))


@register('diag')
class diag:
    """A 1-d input (n,) gives the (n+|k|, n+|k|) matrix with it on diagonal ``k``; an n-d
    input gives its diagonal ``k`` over axes (axis1, axis2) as the last axis (numpy.diagonal):
    (..., d1, ..., d2, ...) -> (..., L)."""
    inputs = ('data',)
    attrs = dict(_DIAG_ATTRS)
    infer_shape = _unary(_diag_shape)

    def compute(xp, attrs, data):
        if data.ndim == 1:
            return xp.diag(data, attrs.k)
        return xp.diagonal(data, attrs.k, *_diag_axes(attrs, data.ndim)).copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_diag(ograds[0], inputs[0], k=attrs.k, axis1=attrs.axis1,
                                 axis2=attrs.axis2)]


@register('_backward_diag')
class _backward_diag:
    """The adjoint of diag: ``ograd`` (diag's output shape) placed back on ``data``'s shape
    (zeros off the diagonal; for a 1-d ``data``, diagonal k of the matrix ``ograd``)."""
    inputs = ('ograd', 'data')
    attrs = dict(_DIAG_ATTRS)

    def compute(xp, attrs, ograd, data):
        if data.ndim == 1:
            return xp.diagonal(ograd, attrs.k).copy()
        out = xp.zeros(data.shape, dtype=ograd.dtype)
        view = xp.moveaxis(out, _diag_axes(attrs, data.ndim), (-2, -1))
        i, k = xp.arange(ograd.shape[-1]), attrs.k
        view[..., i + max(-k, 0), i + max(k, 0)] = ograd
        return out

    def infer_shape(attrs, ograd, data):
        if data is None:
            return [ograd, data], [None]
        ograd = merge_shape(_diag_shape(attrs, data), ograd, "ograd must have diag's shape")
        return [ograd, data], [data]

    def infer_type(attrs, ograd, data):
        return [ograd, data], [ograd]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.diag(ograds[0], k=attrs.k, axis1=attrs.axis1, axis2=attrs.axis2), None]
