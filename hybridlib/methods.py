"""Methods shared by NDArray and Symbol: arithmetic, comparisons, reshape, indexing, and the
methods that forward to operators (``x.sum(axis=1)`` is ``F.sum(x, axis=1)``).

Both classes inherit ``ArrayMethods`` and supply two hooks:

* ``_apply(op_name, inputs, attrs, hint)`` runs (NDArray) or records (Symbol) one operator;
* ``_known_shape()`` returns the value's shape when it is known, else None.

Because everything here goes through those hooks, an expression means the same thing on both
paths. In particular ``a + b`` broadcasts on Symbols exactly as on NDArrays: it uses
``elemwise_add`` (MXNet's ``_plus``) when both shapes are known and equal, and ``broadcast_add``
otherwise.
"""
import inspect
import math
import numbers
import operator

import numpy as np

from .ops import frontend, registry
from .ops.frontend import _signature, exposure

__all__ = ['ArrayMethods', 'FORWARDED_METHODS', 'binary_functions']

# python operator -> (elemwise op, broadcast op, scalar op, reflected scalar op,
#                     hint of the array form, hint of the scalar form, of the reflected form)
_BINARY = {
    'add': ('elemwise_add', 'broadcast_add', '_plus_scalar', '_plus_scalar',
            '_plus', '_plusscalar', '_plusscalar'),
    'sub': ('elemwise_sub', 'broadcast_sub', '_minus_scalar', '_rminus_scalar',
            '_minus', '_minusscalar', '_rminusscalar'),
    'mul': ('elemwise_mul', 'broadcast_mul', '_mul_scalar', '_mul_scalar',
            '_mul', '_mulscalar', '_mulscalar'),
    'truediv': ('elemwise_div', 'broadcast_div', '_div_scalar', '_rdiv_scalar',
                '_div', '_divscalar', '_rdivscalar'),
    'mod': ('_mod', 'broadcast_mod', '_mod_scalar', '_rmod_scalar',
            '_mod', '_modscalar', '_rmodscalar'),
    'pow': ('_power', 'broadcast_power', '_power_scalar', '_rpower_scalar',
            '_power', '_powerscalar', '_rpower_scalar'),
    # no Python operator: reached through nd.maximum(...) and friends
    'maximum': ('_maximum', 'broadcast_maximum', '_maximum_scalar', '_maximum_scalar',
                '_maximum', '_maximumscalar', '_maximumscalar'),
    'minimum': ('_minimum', 'broadcast_minimum', '_minimum_scalar', '_minimum_scalar',
                '_minimum', '_minimumscalar', '_minimumscalar'),
    'hypot': ('_hypot', 'broadcast_hypot', '_hypot_scalar', '_hypot_scalar',
              '_hypot', '_hypotscalar', '_hypotscalar'),
    'logical_and': ('_logical_and', 'broadcast_logical_and', '_logical_and_scalar',
                    '_logical_and_scalar', '_logical_and', '_logical_and_scalar',
                    '_logical_and_scalar'),
    'logical_or': ('_logical_or', 'broadcast_logical_or', '_logical_or_scalar',
                   '_logical_or_scalar', '_logical_or', '_logical_or_scalar',
                   '_logical_or_scalar'),
    'logical_xor': ('_logical_xor', 'broadcast_logical_xor', '_logical_xor_scalar',
                    '_logical_xor_scalar', '_logical_xor', '_logical_xor_scalar',
                    '_logical_xor_scalar'),
}
# comparisons: (elemwise op, broadcast op, scalar op); their hints are the op names
_COMPARE = {
    'eq': ('_equal', 'broadcast_equal', '_equal_scalar'),
    'ne': ('_not_equal', 'broadcast_not_equal', '_not_equal_scalar'),
    'gt': ('_greater', 'broadcast_greater', '_greater_scalar'),
    'ge': ('_greater_equal', 'broadcast_greater_equal', '_greater_equal_scalar'),
    'lt': ('_lesser', 'broadcast_lesser', '_lesser_scalar'),
    'le': ('_lesser_equal', 'broadcast_lesser_equal', '_lesser_equal_scalar'),
}

# x.name(...) == F.name(x, ...), as MXNet's NDArray and Symbol methods
FORWARDED_METHODS = (
    'reshape_like', 'zeros_like', 'ones_like', 'broadcast_axes', 'broadcast_to',
    'broadcast_like', 'repeat', 'pad', 'swapaxes', 'split', 'slice', 'slice_axis', 'slice_like',
    'take', 'one_hot', 'pick', 'sort', 'topk', 'argsort', 'argmax', 'argmax_channel', 'argmin',
    'clip', 'abs', 'sign', 'shape_array', 'size_array', 'tile',
    'transpose', 'flip', 'depth_to_space', 'space_to_depth', 'diag', 'sum', 'nansum', 'prod',
    'nanprod', 'mean', 'max', 'min', 'norm', 'round', 'rint', 'fix', 'floor', 'ceil', 'trunc',
    'sin', 'cos', 'tan', 'arcsin', 'arccos', 'arctan', 'degrees', 'radians', 'sinh', 'cosh',
    'tanh', 'arcsinh', 'arccosh', 'arctanh', 'exp', 'expm1', 'log', 'log10', 'log2', 'log1p',
    'sqrt', 'rsqrt', 'cbrt', 'rcbrt', 'square', 'reciprocal', 'relu', 'sigmoid', 'softmax',
    'log_softmax', 'softmin',
)


def _is_scalar(x):
    return isinstance(x, numbers.Number) and not isinstance(x, bool) or isinstance(x, np.generic)


def _binary_method(name, reflect=False):
    elemwise, broadcast, scalar, rscalar, hint, shint, rhint = _BINARY[name]

    def method(self, other):
        other = self._coerce(other)
        if other is NotImplemented:
            return NotImplemented
        if _is_scalar(other):
            if reflect:
                return self._apply(rscalar, [self], {'scalar': other}, rhint)
            return self._apply(scalar, [self], {'scalar': other}, shint)
        lhs, rhs = (other, self) if reflect else (self, other)
        return self._apply_binary(lhs._pick_binary(rhs, elemwise, broadcast), lhs, rhs, hint)
    method.__name__ = f'__{"r" if reflect else ""}{name}__'
    return method


def _compare_method(name):
    elemwise, broadcast, scalar = _COMPARE[name]

    def method(self, other):
        other = self._coerce(other)
        if other is NotImplemented:
            return NotImplemented
        if _is_scalar(other):
            return self._apply(scalar, [self], {'scalar': other}, scalar)
        return self._apply_binary(self._pick_binary(other, elemwise, broadcast), self, other,
                                  elemwise)
    method.__name__ = f'__{name}__'
    return method


def _forwarded_method(op_name):
    op = registry.find(op_name)
    space, pyname = exposure(op_name)

    def method(self, *args, **kwargs):
        return self._function(op_name)(self, *args, **kwargs)
    method.__name__ = pyname
    method.__qualname__ = f'ArrayMethods.{pyname}'
    method.__doc__ = f'Same as ``F.{op_name}(self, ...)``.'
    if op is not None:
        sig = _signature(op, ())
        params = list(sig.parameters.values())
        self_param = inspect.Parameter('self', inspect.Parameter.POSITIONAL_OR_KEYWORD)
        method.__signature__ = sig.replace(parameters=[self_param] + params[1:])
    return method


class ArrayMethods:
    """The methods of NDArray and Symbol that are defined in terms of operators."""
    __slots__ = ()

    # -- hooks of the two classes ---------------------------------------------------------------
    def _apply(self, op_name, inputs, attrs, hint):
        raise NotImplementedError

    def _known_shape(self):
        raise NotImplementedError

    @classmethod
    def _function(cls, op_name):
        raise NotImplementedError

    def _coerce(self, other):
        """Turn ``other`` into something the binary operators accept, or NotImplemented."""
        if _is_scalar(other) or isinstance(other, type(self)):
            return other
        return NotImplemented

    def _apply_binary(self, op_name, lhs, rhs, hint):
        """``op_name`` on two arrays, after ``frontend.input_rule`` (amp's casts) as the
        generated functions apply it."""
        inputs = [lhs, rhs]
        if frontend.input_rule is not None:
            op = registry.get(op_name)

            def run(cast_op, values, params, attrs, cast_hint):
                return self._apply(cast_op.name, values, attrs, cast_hint)
            inputs = frontend.apply_input_rule(op, op.parse_attrs({}), inputs, run)[0]
        return self._apply(op_name, inputs, {}, hint)

    def _pick_binary(self, other, elemwise, broadcast):
        """The elementwise op when both shapes are known and equal, else the broadcasting op."""
        a, b = self._known_shape(), other._known_shape()
        if a is not None and a == b and 0 not in a:
            return elemwise
        return broadcast

    # -- arithmetic -------------------------------------------------------------------------------
    __add__ = _binary_method('add')
    __radd__ = _binary_method('add', reflect=True)
    __sub__ = _binary_method('sub')
    __rsub__ = _binary_method('sub', reflect=True)
    __mul__ = _binary_method('mul')
    __rmul__ = _binary_method('mul', reflect=True)
    __truediv__ = _binary_method('truediv')
    __rtruediv__ = _binary_method('truediv', reflect=True)
    __mod__ = _binary_method('mod')
    __rmod__ = _binary_method('mod', reflect=True)
    __pow__ = _binary_method('pow')
    __rpow__ = _binary_method('pow', reflect=True)
    __eq__ = _compare_method('eq')
    __ne__ = _compare_method('ne')
    __gt__ = _compare_method('gt')
    __ge__ = _compare_method('ge')
    __lt__ = _compare_method('lt')
    __le__ = _compare_method('le')
    __hash__ = object.__hash__

    def __neg__(self):
        return self._apply('_mul_scalar', [self], {'scalar': -1.0}, '_mulscalar')

    def __pos__(self):
        return self

    def __abs__(self):
        return self._apply('abs', [self], {}, 'abs')

    # -- shape ------------------------------------------------------------------------------------
    def reshape(self, *shape, **kwargs):
        """Reshape with MXNet's special codes: 0 copy, -1 infer, -2 copy the rest, -3 merge
        two, -4 split one into the next two; ``reverse=True`` reads them right to left.

        Accepts ``x.reshape((2, 3))``, ``x.reshape(2, 3)`` and ``x.reshape(shape=(2, 3))``.
        """
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        elif len(shape) == 1 and isinstance(shape[0], int):
            shape = shape[0]        # MXNet records x.reshape(-1) as shape "-1", not "(-1,)"
        if shape and 'shape' in kwargs:
            raise TypeError('reshape() got the shape both positionally and as shape=')
        attrs = {'shape': kwargs.pop('shape', shape)}
        if 'reverse' in kwargs:
            attrs['reverse'] = kwargs.pop('reverse')
        if kwargs:
            raise TypeError(f'reshape() got unexpected arguments {sorted(kwargs)}')
        return self._apply('Reshape', [self], attrs, 'reshape')

    # the reshape family: MXNet's inplace=True returns a view that shares this array's memory
    def expand_dims(self, axis, inplace=False):
        """A new axis of length 1 at ``axis``."""
        return self._reshape_op('expand_dims', {'axis': axis}, inplace)

    def squeeze(self, axis=None, inplace=False):
        """Without the axes of length 1 (those of ``axis``, or all)."""
        return self._reshape_op('squeeze', {'axis': axis}, inplace)

    def flatten(self, inplace=False):
        """``(N, x1, ..., xn)`` -> ``(N, x1 * ... * xn)``."""
        return self._reshape_op('Flatten', {}, inplace)

    def _reshape_op(self, op_name, attrs, inplace):
        """``op_name`` (a reshape) of this array; with ``inplace``, a view of this array's
        memory where views exist (a graph has none)."""
        return self._function(op_name)(self, **attrs)

    def astype(self, dtype, copy=True):
        """Cast to ``dtype`` (a copy unless ``copy=False`` and the dtype already matches)."""
        if not copy and self._known_dtype() == np.dtype(dtype):
            return self
        return self._apply('Cast', [self], {'dtype': dtype}, 'cast')

    def _known_dtype(self):
        return None

    @property
    def T(self):
        """The transpose (all axes reversed)."""
        return self._apply('transpose', [self], {}, 'transpose')

    # -- basic indexing as operators ---------------------------------------------------------------
    def _index_with_ops(self, key, ndim=None):
        """``x[key]`` for basic keys (ints, slices, None, Ellipsis) as slice/squeeze/expand_dims.

        An int index drops its axis, as in numpy, except that a result with no axes left is
        shape ``(1,)`` (MXNet's rule for its non-numpy arrays). ``ndim`` is needed only for an
        Ellipsis and for range checks; a Symbol of unknown rank can still be sliced.
        """
        if not isinstance(key, tuple):
            key = (key,)
        if sum(k is Ellipsis for k in key) > 1:
            raise IndexError('an index can only have a single ellipsis')
        n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
        if ndim is not None and n_real > ndim:
            raise IndexError(f'too many indices ({n_real}) for a {ndim}-d array')
        expanded = []
        for k in key:
            if k is Ellipsis:
                if ndim is None:
                    raise IndexError('indexing with ... needs the rank of the array, which is '
                                     'unknown here; give the variable a shape')
                expanded.extend([slice(None)] * (ndim - n_real))
            else:
                expanded.append(k)
        begin, end, step, drop, new_axes = [], [], [], [], []
        axis = out_axis = 0
        for k in expanded:
            if k is None:
                new_axes.append(out_axis)
                out_axis += 1
                continue
            if isinstance(k, slice):
                begin.append(k.start)
                end.append(k.stop)
                step.append(k.step)
                out_axis += 1
            else:
                i = int(k)
                begin.append(i)
                end.append(i + 1 if i != -1 else None)
                step.append(None)
                drop.append(axis)
            axis += 1
        out = self
        if any(v is not None for v in begin + end) or any(v not in (None, 1) for v in step):
            attrs = {'begin': tuple(begin), 'end': tuple(end), 'step': tuple(step)}
            out = out._apply('slice', [out], attrs, 'slice')
        if drop:
            out = out._apply('squeeze', [out], {'axis': tuple(drop)}, 'squeeze')
        for a in new_axes:
            out = out._apply('expand_dims', [out], {'axis': a}, 'expand_dims')
        return out


# nd.add(lhs, rhs) and friends: either side may be a scalar; both scalars give a scalar
_FUNCTIONS = {
    'add': ('add', operator.add), 'subtract': ('sub', operator.sub),
    'multiply': ('mul', operator.mul), 'divide': ('truediv', operator.truediv),
    'true_divide': ('truediv', operator.truediv), 'modulo': ('mod', operator.mod),
    'power': ('pow', operator.pow), 'pow': ('pow', operator.pow),   # sym.pow(base, exp)
    'maximum': ('maximum', max), 'minimum': ('minimum', min),
    'hypot': ('hypot', math.hypot),
    'logical_and': ('logical_and', lambda a, b: float(bool(a) and bool(b))),
    'logical_or': ('logical_or', lambda a, b: float(bool(a) or bool(b))),
    'logical_xor': ('logical_xor', lambda a, b: float(bool(a) != bool(b))),
    'equal': ('eq', operator.eq), 'not_equal': ('ne', operator.ne),
    'greater': ('gt', operator.gt), 'greater_equal': ('ge', operator.ge),
    'lesser': ('lt', operator.lt), 'lesser_equal': ('le', operator.le),
}
_SWAPPED = {'eq': 'eq', 'ne': 'ne', 'gt': 'lt', 'ge': 'le', 'lt': 'gt', 'le': 'ge'}


def _binary_function(pyname, key, scalar_fn):
    if key in _COMPARE:
        forward, reflected = _compare_method(key), _compare_method(_SWAPPED[key])
    else:
        forward, reflected = _binary_method(key), _binary_method(key, reflect=True)

    def function(lhs, rhs):
        if _is_scalar(lhs) and _is_scalar(rhs):
            return scalar_fn(lhs, rhs)
        if isinstance(lhs, ArrayMethods):
            return forward(lhs, rhs)
        if isinstance(rhs, ArrayMethods):
            return reflected(rhs, lhs)
        raise TypeError(f'{pyname}: expected arrays or scalars, got {type(lhs).__name__} and '
                        f'{type(rhs).__name__}')
    function.__name__ = pyname
    function.__doc__ = (f'Elementwise {pyname} of two arrays (broadcasting) or of an array '
                        'and a scalar.')
    return function


def binary_functions():
    """``{name: function}`` of MXNet's module-level binary functions (``nd.maximum``...),
    and the other functions that MXNet writes in Python for both ``nd`` and ``sym``."""
    functions = {name: _binary_function(name, key, fn) for name, (key, fn) in _FUNCTIONS.items()}
    functions.update(split_v2=split_v2, moveaxis=moveaxis)
    return functions


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into ``indices_or_sections`` equal parts (an int) or at
    the given indices (a tuple), as numpy's ``split``; ``squeeze_axis`` drops the axis from
    parts of size 1. Returns the parts."""
    split = ary._function('_split_v2')
    if isinstance(indices_or_sections, int):
        shape = ary._known_shape()
        if shape is not None and shape[axis] and shape[axis] % indices_or_sections:
            raise ValueError('array split does not result in an equal division')
        return split(ary, indices=(), axis=axis, squeeze_axis=squeeze_axis,
                     sections=indices_or_sections)
    if isinstance(indices_or_sections, tuple):
        return split(ary, indices=(0,) + indices_or_sections, axis=axis,
                     squeeze_axis=squeeze_axis)
    raise ValueError('indices_or_sections must either int or tuple of ints')


def moveaxis(tensor, source, destination):
    """``tensor`` with the axes ``source`` (an int or a sequence) moved to ``destination``
    and the others in their order, as numpy's ``moveaxis``."""
    shape = tensor._known_shape()
    if shape is None:
        raise ValueError('moveaxis needs the number of axes of its input')
    ndim = len(shape)
    source = _normalize_axes(source, ndim, 'source')
    destination = _normalize_axes(destination, ndim, 'destination')
    if len(source) != len(destination):
        raise ValueError('`source` and `destination` arguments must have the same number of '
                         'elements')
    order = [n for n in range(ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return tensor._function('transpose')(tensor, axes=tuple(order))


def _normalize_axes(axes, ndim, what):
    axes = (axes,) if isinstance(axes, numbers.Integral) else tuple(axes)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f'moveaxis: {what} axis {a} is out of bounds for an array of '
                             f'dimension {ndim}')
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f'moveaxis: repeated axis in `{what}` argument')
    return out


for _name in FORWARDED_METHODS:
    if not hasattr(ArrayMethods, _name):
        setattr(ArrayMethods, _name, _forwarded_method(_name))
del _name
