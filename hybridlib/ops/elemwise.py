"""Elementwise operators: unary maths, binary (same shape and broadcasting), with a scalar,
comparisons and logic, ``add_n``, ``clip``, ``smooth_l1`` and the identity-like operators.

Most operators here are rows of a table: a forward in the array module ``xp`` and a gradient
written with Python operators and ``F`` functions on the values it is given (NDArrays or
Symbols), so the same rule serves imperative autograd and the graph backward.

MXNet's legacy operators keep the input dtype (``exp`` of int32 is int32, a scalar is first cast
to the array's dtype), which ``_keep`` and ``_scalar_like`` reproduce.
"""
import math

import numpy as np

from .attrs import Bool, Float, Int
from .registry import (OpDef, broadcast_shape, merge_shape, register, register_op, same_dtype,
                       zero_gradient)
from . import special

__all__ = []


def _keep(result, like):
    """``result`` in the dtype of ``like`` (a no-op when it already is)."""
    return result.astype(like.dtype, copy=False)


def _scalar_like(value, like):
    """A scalar cast to the dtype of ``like`` first, as MXNet's kernels do (300 -> uint8 44)."""
    return np.asarray(value).astype(like.dtype)[()]


def not_differentiable_twice(name):
    """The gradient of an internal backward operator whose own derivative is not provided."""
    from ..base import NotSupportedError

    def gradient(F, attrs, inputs, outputs, ograds, **_):
        raise NotSupportedError(f'{name} has no gradient: higher-order derivatives through it '
                                'are not implemented')
    return gradient


# -------------------------------------------------------------------------------------------------
# Unary
# -------------------------------------------------------------------------------------------------

def _round_half_away(xp, x):
    return xp.sign(x) * xp.floor(xp.abs(x) + 0.5)


def _rint_half_down(xp, x):
    # MXNet's rint rounds halves down: rint(1.5) == 1, rint(-2.5) == -3
    fl = xp.floor(x)
    return xp.where(x - fl <= 0.5, fl, xp.ceil(x))


def _sigmoid(xp, x):
    with np.errstate(over='ignore'):
        return 1 / (1 + xp.exp(-x))


_LN10 = math.log(10.0)
_LN2 = math.log(2.0)
_DEG = 180.0 / math.pi
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0

# name, forward(xp, x), gradient(F, x, y, g) or None for a zero gradient, aliases
UNARY = [
    ('abs', lambda xp, x: xp.abs(x), lambda F, x, y, g: g * F.sign(x), ()),
    ('sign', lambda xp, x: xp.where(xp.isnan(x), 0, xp.sign(x)), None, ()),   # MXNet: 0 at NaN
    ('negative', lambda xp, x: -x, lambda F, x, y, g: -g, ()),
    ('reciprocal', lambda xp, x: xp.reciprocal(x), lambda F, x, y, g: -g * y * y, ()),
    ('square', lambda xp, x: x * x, lambda F, x, y, g: g * x * 2, ()),
    ('sqrt', lambda xp, x: xp.sqrt(x), lambda F, x, y, g: g / (y * 2), ()),
    ('rsqrt', lambda xp, x: 1 / xp.sqrt(x), lambda F, x, y, g: g * y * y * y * -0.5, ()),
    ('cbrt', lambda xp, x: xp.cbrt(x), lambda F, x, y, g: g / (y * y * 3), ()),
    ('rcbrt', lambda xp, x: 1 / xp.cbrt(x), lambda F, x, y, g: g * y * y * y * y * (-1 / 3), ()),
    ('exp', lambda xp, x: xp.exp(x), lambda F, x, y, g: g * y, ()),
    ('expm1', lambda xp, x: xp.expm1(x), lambda F, x, y, g: g * (y + 1), ()),
    ('log', lambda xp, x: xp.log(x), lambda F, x, y, g: g / x, ()),
    ('log10', lambda xp, x: xp.log10(x), lambda F, x, y, g: g / (x * _LN10), ()),
    ('log2', lambda xp, x: xp.log2(x), lambda F, x, y, g: g / (x * _LN2), ()),
    ('log1p', lambda xp, x: xp.log1p(x), lambda F, x, y, g: g / (x + 1), ()),
    ('sin', lambda xp, x: xp.sin(x), lambda F, x, y, g: g * F.cos(x), ()),
    ('cos', lambda xp, x: xp.cos(x), lambda F, x, y, g: -g * F.sin(x), ()),
    ('tan', lambda xp, x: xp.tan(x), lambda F, x, y, g: g * (y * y + 1), ()),
    ('arcsin', lambda xp, x: xp.arcsin(x), lambda F, x, y, g: g * F.rsqrt(1 - x * x), ()),
    ('arccos', lambda xp, x: xp.arccos(x), lambda F, x, y, g: -g * F.rsqrt(1 - x * x), ()),
    ('arctan', lambda xp, x: xp.arctan(x), lambda F, x, y, g: g / (x * x + 1), ()),
    ('sinh', lambda xp, x: xp.sinh(x), lambda F, x, y, g: g * F.cosh(x), ()),
    ('cosh', lambda xp, x: xp.cosh(x), lambda F, x, y, g: g * F.sinh(x), ()),
    ('tanh', lambda xp, x: xp.tanh(x), lambda F, x, y, g: g * (1 - y * y), ()),
    ('arcsinh', lambda xp, x: xp.arcsinh(x), lambda F, x, y, g: g * F.rsqrt(x * x + 1), ()),
    ('arccosh', lambda xp, x: xp.arccosh(x), lambda F, x, y, g: g * F.rsqrt(x * x - 1), ()),
    ('arctanh', lambda xp, x: xp.arctanh(x), lambda F, x, y, g: g / (1 - x * x), ()),
    ('degrees', lambda xp, x: x * _DEG, lambda F, x, y, g: g * _DEG, ()),
    ('radians', lambda xp, x: x / _DEG, lambda F, x, y, g: g / _DEG, ()),
    ('floor', lambda xp, x: xp.floor(x), None, ()),
    ('ceil', lambda xp, x: xp.ceil(x), None, ()),
    ('round', _round_half_away, None, ()),
    ('rint', _rint_half_down, None, ()),
    ('fix', lambda xp, x: xp.trunc(x), None, ()),
    ('trunc', lambda xp, x: xp.trunc(x), None, ()),
    ('relu', lambda xp, x: xp.maximum(x, 0), lambda F, x, y, g: g * (x > 0), ()),
    ('sigmoid', _sigmoid, lambda F, x, y, g: g * y * (1 - y), ()),
    ('softsign', lambda xp, x: x / (1 + xp.abs(x)),
     lambda F, x, y, g: g / F.square(F.abs(x) + 1), ()),
    ('erf', special.erf, lambda F, x, y, g: g * F.exp(-x * x) * _TWO_OVER_SQRT_PI, ()),
    ('erfinv', special.erfinv, lambda F, x, y, g: g * F.exp(y * y) * _SQRT_PI_OVER_TWO, ()),
    ('gamma', special.gamma, lambda F, x, y, g: g * y * F._digamma(x), ()),
    ('gammaln', special.gammaln, lambda F, x, y, g: g * F._digamma(x), ()),
    ('logical_not', lambda xp, x: x == 0, None, ()),
    ('_copy', lambda xp, x: x.copy(), lambda F, x, y, g: g, ('identity',)),
    ('BlockGrad', lambda xp, x: x.copy(), None, ('stop_gradient',)),
]


def _sigmoid_into(xp, x, out):
    xp.negative(x, out=out)
    with np.errstate(over='ignore'):
        xp.exp(out, out=out)
    out += 1
    return xp.reciprocal(out, out=out)


# the unary operators that are one ufunc of the array module (name, ufunc)
_UNARY_UFUNCS = [('abs', 'abs'), ('negative', 'negative'), ('reciprocal', 'reciprocal'),
                 ('square', 'square'), ('sqrt', 'sqrt'), ('cbrt', 'cbrt'), ('exp', 'exp'),
                 ('expm1', 'expm1'), ('log', 'log'), ('log10', 'log10'), ('log2', 'log2'),
                 ('log1p', 'log1p'), ('sin', 'sin'), ('cos', 'cos'), ('tan', 'tan'),
                 ('arcsin', 'arcsin'), ('arccos', 'arccos'), ('arctan', 'arctan'),
                 ('sinh', 'sinh'), ('cosh', 'cosh'), ('tanh', 'tanh'), ('arcsinh', 'arcsinh'),
                 ('arccosh', 'arccosh'), ('arctanh', 'arctanh'), ('floor', 'floor'),
                 ('ceil', 'ceil'), ('fix', 'trunc'), ('trunc', 'trunc')]

# in-buffer forms (compute_into) of the unary operators that have one: ufuncs, mostly
_UNARY_INTO = {name: (lambda fn: lambda xp, x, out: getattr(xp, fn)(x, out=out))(fn)
               for name, fn in _UNARY_UFUNCS}
_UNARY_INTO['relu'] = lambda xp, x, out: xp.maximum(x, 0, out=out)
_UNARY_INTO['sigmoid'] = _sigmoid_into


def _float_into(into):
    """``compute_into`` from an in-buffer form (graphs use it for float outputs only)."""
    if into is None:
        return None

    def compute_into(xp, attrs, out, *inputs):
        with np.errstate(all='ignore'):
            return into(xp, *inputs, out)
    return compute_into


# ufuncs that raise no floating-point warnings worth silencing (as the forwards that use them)
_LOUD_FREE = {'abs', 'negative', 'floor', 'ceil', 'trunc', 'add', 'subtract', 'multiply',
              'maximum', 'minimum', 'equal', 'not_equal', 'greater', 'greater_equal', 'less',
              'less_equal'}


def ufunc_kernel(fn, reflect=False, arity=1, scalar=None):
    """The ``kernel`` of an operator that is one ufunc ``fn`` of the array module, for float
    inputs of one dtype: ``fn(*inputs, out=out)``, with the operator's scalar attribute (or
    ``scalar``, a constant) as second argument (first with ``reflect``)."""
    def kernel(xp, attrs, shapes, dtypes, is_train):
        if len(set(dtypes)) != 1 or dtypes[0].kind != 'f':
            return None
        f = getattr(xp, fn)
        if arity == 2:
            call = lambda out, a, b: f(a, b, out=out)
        elif scalar is None and 'scalar' not in attrs:
            call = lambda out, x: f(x, out=out)
        else:
            c = np.asarray(attrs.scalar if scalar is None else scalar).astype(dtypes[0])[()]
            call = (lambda out, x: f(c, x, out=out)) if reflect else \
                (lambda out, x: f(x, c, out=out))
        return call if fn in _LOUD_FREE or xp is not np else _quietly(call)
    return kernel


def _quietly(call):
    def quiet(out, *inputs):
        with np.errstate(all='ignore'):
            return call(out, *inputs)
    return quiet


def _sigmoid_kernel(xp, attrs, shapes, dtypes, is_train):
    if dtypes[0].kind != 'f':
        return None
    return lambda out, x: _sigmoid_into(xp, x, out)


UNARY_KERNELS = {name: ufunc_kernel(fn) for name, fn in _UNARY_UFUNCS}
UNARY_KERNELS['relu'] = ufunc_kernel('maximum', scalar=0)
UNARY_KERNELS['sigmoid'] = _sigmoid_kernel


def _unary_op(name, forward, backward, aliases):
    def compute(xp, attrs, data):
        with np.errstate(all='ignore'):
            return _keep(forward(xp, data), data)

    if backward is None:
        gradient = zero_gradient
    else:
        def gradient(F, attrs, inputs, outputs, ograds):
            return [backward(F, inputs[0], outputs[0], ograds[0])]
    return OpDef(name, inputs=('data',), compute=compute, gradient=gradient, aliases=aliases,
                 inplace=((0, 0),), compute_into=_float_into(_UNARY_INTO.get(name)),
                 kernel=UNARY_KERNELS.get(name), doc=f'Elementwise {name}.')


for _row in UNARY:
    register_op(_unary_op(*_row))


@register('_digamma')
class _digamma:
    """The digamma function psi(x) = d/dx log Gamma(x) (used by the gradients of gamma)."""
    inputs = ('data',)

    def compute(xp, attrs, data):
        return _keep(special.digamma(xp, data), data)

    gradient = not_differentiable_twice('_digamma')


@register('make_loss')
class make_loss:
    """Marks a loss: the forward is the identity; the gradient is ones, whatever comes back."""
    inputs = ('data',)

    def compute(xp, attrs, data):
        return data.copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.ones_like(inputs[0])]


@register('hard_sigmoid')
class hard_sigmoid:
    """``clip(alpha * x + beta, 0, 1)``."""
    inputs = ('data',)
    attrs = dict(alpha=Float(0.2), beta=Float(0.5))

    def compute(xp, attrs, data):
        return _keep(xp.clip(data * attrs.alpha + attrs.beta, 0, 1), data)

    def gradient(F, attrs, inputs, outputs, ograds):
        z = inputs[0] * attrs.alpha + attrs.beta
        return [ograds[0] * ((z > 0) * (z < 1)) * attrs.alpha]


@register('clip')
class clip:
    """Limit the values to ``[a_min, a_max]``; the gradient passes where the input was inside."""
    inputs = ('data',)
    attrs = dict(a_min=Float(), a_max=Float())

    def compute(xp, attrs, data):
        return _keep(xp.clip(data, attrs.a_min, attrs.a_max), data)

    def gradient(F, attrs, inputs, outputs, ograds):
        x = inputs[0]
        return [ograds[0] * ((x >= attrs.a_min) * (x <= attrs.a_max))]


@register('smooth_l1')
class smooth_l1:
    """``0.5 (sigma x)^2`` where ``|x| < 1/sigma^2``, else ``|x| - 0.5/sigma^2`` (sigma=scalar)."""
    inputs = ('data',)
    attrs = dict(scalar=Float(1.0))

    def compute(xp, attrs, data):
        s2 = float(attrs.scalar) ** 2
        quad = 0.5 * s2 * data * data
        lin = xp.abs(data) - 0.5 / s2
        return _keep(xp.where(xp.abs(data) < 1.0 / s2, quad, lin), data)

    def gradient(F, attrs, inputs, outputs, ograds):
        x = inputs[0]
        s2 = float(attrs.scalar) ** 2
        inside = F.abs(x) < 1.0 / s2
        return [ograds[0] * (inside * x * s2 + (1 - inside) * F.sign(x))]


# -------------------------------------------------------------------------------------------------
# Binary: same-shape (elemwise_*) and broadcasting (broadcast_*) forms
# -------------------------------------------------------------------------------------------------

def _mod(xp, a, b):
    """Python's modulo (sign of the divisor), and 0 where the divisor is 0, as MXNet."""
    with np.errstate(all='ignore'):
        return xp.where(b == 0, 0, xp.mod(a, xp.where(b == 0, 1, b)))


def _divide(xp, a, b):
    with np.errstate(all='ignore'):
        return a / b


def _power(xp, a, b):
    with np.errstate(all='ignore'):
        return xp.power(a, b)


def _logical(name):
    return lambda xp, a, b: getattr(xp, name)(a != 0, b != 0)


# name, aliases, broadcast name, its aliases, forward(xp, a, b), gradient(F, a, b, y, g) or None
BINARY = [
    ('elemwise_add', ('_add', '_plus', '_Plus'), 'broadcast_add', ('broadcast_plus',),
     lambda xp, a, b: a + b, lambda F, a, b, y, g: (g, g)),
    ('elemwise_sub', ('_sub', '_minus', '_Minus'), 'broadcast_sub', ('broadcast_minus',),
     lambda xp, a, b: a - b, lambda F, a, b, y, g: (g, -g)),
    ('elemwise_mul', ('_mul', '_Mul'), 'broadcast_mul', (),
     lambda xp, a, b: a * b, lambda F, a, b, y, g: (g * b, g * a)),
    ('elemwise_div', ('_div', '_Div'), 'broadcast_div', (),
     _divide, lambda F, a, b, y, g: (g / b, -g * y / b)),
    ('_mod', ('_Mod',), 'broadcast_mod', (),
     _mod, lambda F, a, b, y, g: (g, -g * F.floor(a / b))),
    ('_power', ('_Power',), 'broadcast_power', (),
     _power, lambda F, a, b, y, g: (g * b * a ** (b - 1), g * y * F.log(a))),
    ('_maximum', ('_Maximum',), 'broadcast_maximum', (),
     lambda xp, a, b: xp.maximum(a, b), lambda F, a, b, y, g: (g * (a >= b), g * (a < b))),
    ('_minimum', ('_Minimum',), 'broadcast_minimum', (),
     lambda xp, a, b: xp.minimum(a, b), lambda F, a, b, y, g: (g * (a <= b), g * (a > b))),
    ('_hypot', ('_Hypot',), 'broadcast_hypot', (),
     lambda xp, a, b: xp.hypot(a, b), lambda F, a, b, y, g: (g * a / y, g * b / y)),
    ('_equal', ('_Equal',), 'broadcast_equal', (), lambda xp, a, b: a == b, None),
    ('_not_equal', ('_Not_Equal',), 'broadcast_not_equal', (), lambda xp, a, b: a != b, None),
    ('_greater', ('_Greater',), 'broadcast_greater', (), lambda xp, a, b: a > b, None),
    ('_greater_equal', ('_Greater_Equal',), 'broadcast_greater_equal', (),
     lambda xp, a, b: a >= b, None),
    ('_lesser', ('_Lesser',), 'broadcast_lesser', (), lambda xp, a, b: a < b, None),
    ('_lesser_equal', ('_Lesser_Equal',), 'broadcast_lesser_equal', (),
     lambda xp, a, b: a <= b, None),
    ('_logical_and', ('_Logical_And',), 'broadcast_logical_and', (),
     _logical('logical_and'), None),
    ('_logical_or', ('_Logical_Or',), 'broadcast_logical_or', (),
     _logical('logical_or'), None),
    ('_logical_xor', ('_Logical_Xor',), 'broadcast_logical_xor', (),
     _logical('logical_xor'), None),
]


def _broadcast_infer(attrs, lhs, rhs):
    return [lhs, rhs], [broadcast_shape(lhs, rhs)]


_BINARY_UFUNC = {'elemwise_add': 'add', 'elemwise_sub': 'subtract', 'elemwise_mul': 'multiply',
                 'elemwise_div': 'divide', '_power': 'power', '_maximum': 'maximum',
                 '_minimum': 'minimum', '_hypot': 'hypot', '_equal': 'equal',
                 '_not_equal': 'not_equal', '_greater': 'greater',
                 '_greater_equal': 'greater_equal', '_lesser': 'less',
                 '_lesser_equal': 'less_equal'}


def _ufunc_into(fn, reflect=False):
    if reflect:
        return lambda xp, a, b, out: getattr(xp, fn)(b, a, out=out)
    return lambda xp, a, b, out: getattr(xp, fn)(a, b, out=out)


def _binary_ops(name, aliases, bname, baliases, forward, backward):
    def compute(xp, attrs, lhs, rhs):
        return _keep(forward(xp, lhs, rhs), lhs)

    if backward is None:
        same_grad = broadcast_grad = zero_gradient
    else:
        def same_grad(F, attrs, inputs, outputs, ograds):
            return list(backward(F, inputs[0], inputs[1], outputs[0], ograds[0]))

        def broadcast_grad(F, attrs, inputs, outputs, ograds):
            lhs, rhs = inputs
            ga, gb = backward(F, lhs, rhs, outputs[0], ograds[0])
            return [F._broadcast_backward(ga, lhs), F._broadcast_backward(gb, rhs)]

    doc = f'Elementwise {name.strip("_")} of two arrays'
    ufunc = _BINARY_UFUNC.get(name)
    into = _float_into(_ufunc_into(ufunc)) if ufunc else None
    kernel = ufunc_kernel(ufunc, arity=2) if ufunc else None
    yield OpDef(name, inputs=('lhs', 'rhs'), compute=compute, gradient=same_grad,
                aliases=aliases, inplace=((0, 0), (1, 0)), compute_into=into, kernel=kernel,
                doc=doc + ' of the same shape.')
    yield OpDef(bname, inputs=('lhs', 'rhs'), compute=compute, gradient=broadcast_grad,
                infer_shape=_broadcast_infer, aliases=baliases, compute_into=into,
                kernel=kernel, doc=doc + ', broadcasting them (numpy rules).')


for _row in BINARY:
    for _op in _binary_ops(*_row):
        register_op(_op)


@register('_broadcast_backward')
class _broadcast_backward:
    """Sum ``data`` over the axes along which an input of ``like``'s shape was broadcast.

    The gradient of every broadcasting operator ends with this, so gradients need no shapes
    known in advance.
    """
    inputs = ('data', 'like')

    def compute(xp, attrs, data, like):
        return sum_to_shape(data, like.shape)

    def infer_shape(attrs, data, like):
        if data is not None and like is not None and len(like) > len(data):
            from ..base import ShapeError
            raise ShapeError(f'cannot reduce {data} to the larger rank of {like}')
        return [data, like], [like]

    def infer_type(attrs, data, like):
        return [data, like], [data]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.broadcast_like(ograds[0], inputs[0]), None]


def sum_to_shape(data, shape):
    """Sum ``data`` down to ``shape`` (which numpy could broadcast back to ``data.shape``)."""
    if data.shape == tuple(shape):
        return data
    lead = data.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and data.shape[lead + i] != 1)
    return data.sum(axis=axes, keepdims=True).reshape(shape) if axes else data.reshape(shape)


# -------------------------------------------------------------------------------------------------
# With a scalar
# -------------------------------------------------------------------------------------------------

def _log_or_nan(s):
    return math.log(s) if s > 0 else float('nan')


# name, aliases, forward(xp, x, s), gradient(F, x, y, g, s) or None
SCALAR = [
    ('_plus_scalar', ('_PlusScalar',), lambda xp, x, s: x + s, lambda F, x, y, g, s: g),
    ('_minus_scalar', ('_MinusScalar',), lambda xp, x, s: x - s, lambda F, x, y, g, s: g),
    ('_rminus_scalar', ('_RMinusScalar',), lambda xp, x, s: s - x, lambda F, x, y, g, s: -g),
    ('_mul_scalar', ('_MulScalar',), lambda xp, x, s: x * s, lambda F, x, y, g, s: g * s),
    ('_div_scalar', ('_DivScalar',), lambda xp, x, s: _divide(xp, x, s),
     lambda F, x, y, g, s: g / s),
    ('_rdiv_scalar', ('_RDivScalar',), lambda xp, x, s: _divide(xp, s, x),
     lambda F, x, y, g, s: -g * y / x),
    ('_mod_scalar', ('_ModScalar',), lambda xp, x, s: _mod(xp, x, s), lambda F, x, y, g, s: g),
    ('_rmod_scalar', ('_RModScalar',), lambda xp, x, s: _mod(xp, s, x),
     lambda F, x, y, g, s: -g * F.floor(s / x)),
    ('_power_scalar', ('_PowerScalar',), lambda xp, x, s: _power(xp, x, s),
     lambda F, x, y, g, s: g * s * x ** (s - 1)),
    ('_rpower_scalar', ('_RPowerScalar',), lambda xp, x, s: _power(xp, s, x),
     lambda F, x, y, g, s: g * y * _log_or_nan(s)),
    ('_maximum_scalar', ('_MaximumScalar',), lambda xp, x, s: xp.maximum(x, s),
     lambda F, x, y, g, s: g * (x >= s)),
    ('_minimum_scalar', ('_MinimumScalar',), lambda xp, x, s: xp.minimum(x, s),
     lambda F, x, y, g, s: g * (x <= s)),
    ('_hypot_scalar', ('_HypotScalar',), lambda xp, x, s: xp.hypot(x, s),
     lambda F, x, y, g, s: g * x / y),
    ('_equal_scalar', ('_EqualScalar',), lambda xp, x, s: x == s, None),
    ('_not_equal_scalar', ('_NotEqualScalar',), lambda xp, x, s: x != s, None),
    ('_greater_scalar', ('_GreaterScalar',), lambda xp, x, s: x > s, None),
    ('_greater_equal_scalar', ('_GreaterEqualScalar',), lambda xp, x, s: x >= s, None),
    ('_lesser_scalar', ('_LesserScalar',), lambda xp, x, s: x < s, None),
    ('_lesser_equal_scalar', ('_LesserEqualScalar',), lambda xp, x, s: x <= s, None),
    ('_logical_and_scalar', ('_LogicalAndScalar',),
     lambda xp, x, s: xp.logical_and(x != 0, bool(s != 0)), None),
    ('_logical_or_scalar', ('_LogicalOrScalar',),
     lambda xp, x, s: xp.logical_or(x != 0, bool(s != 0)), None),
    ('_logical_xor_scalar', ('_LogicalXorScalar',),
     lambda xp, x, s: xp.logical_xor(x != 0, bool(s != 0)), None),
]

_SCALAR_ATTRS = dict(scalar=Float(1.0), is_int=Bool(True))
_SCALAR_UFUNC = {'_plus_scalar': ('add', False), '_minus_scalar': ('subtract', False),
                 '_rminus_scalar': ('subtract', True), '_mul_scalar': ('multiply', False),
                 '_div_scalar': ('divide', False), '_rdiv_scalar': ('divide', True),
                 '_power_scalar': ('power', False), '_rpower_scalar': ('power', True),
                 '_maximum_scalar': ('maximum', False), '_minimum_scalar': ('minimum', False),
                 '_hypot_scalar': ('hypot', False), '_equal_scalar': ('equal', False),
                 '_not_equal_scalar': ('not_equal', False), '_greater_scalar': ('greater', False),
                 '_greater_equal_scalar': ('greater_equal', False),
                 '_lesser_scalar': ('less', False), '_lesser_equal_scalar': ('less_equal', False)}


def _scalar_into(name):
    if name not in _SCALAR_UFUNC:
        return None
    into = _ufunc_into(*_SCALAR_UFUNC[name])

    def compute_into(xp, attrs, out, data):
        with np.errstate(all='ignore'):
            return into(xp, data, _scalar_like(attrs.scalar, data), out)
    return compute_into


def _scalar_op(name, aliases, forward, backward):
    def compute(xp, attrs, data):
        return _keep(forward(xp, data, _scalar_like(attrs.scalar, data)), data)

    if backward is None:
        gradient = zero_gradient
    else:
        def gradient(F, attrs, inputs, outputs, ograds):
            return [backward(F, inputs[0], outputs[0], ograds[0], attrs.scalar)]
    return OpDef(name, inputs=('data',), attrs=_SCALAR_ATTRS, compute=compute,
                 gradient=gradient, aliases=aliases, inplace=((0, 0),),
                 compute_into=_scalar_into(name),
                 kernel=ufunc_kernel(*_SCALAR_UFUNC[name]) if name in _SCALAR_UFUNC else None,
                 doc=f'Elementwise {name.strip("_").replace("_", " ")} with a scalar.')


for _row in SCALAR:
    register_op(_scalar_op(*_row))


# -------------------------------------------------------------------------------------------------
# Several inputs
# -------------------------------------------------------------------------------------------------

@register('add_n', aliases=('ElementWiseSum',))
class add_n:
    """The sum of any number of arrays of the same shape."""
    variadic = 'num_args'
    attrs = dict(num_args=Int())

    def compute(xp, attrs, *args):
        out = args[0].copy()
        for a in args[1:]:
            out += a
        return out

    def infer_shape(attrs, *shapes):
        merged = None
        for s in shapes:
            merged = merge_shape(merged, s, 'add_n inputs must have the same shape')
        return [merged] * len(shapes), [merged]

    infer_type = same_dtype

    def gradient(F, attrs, inputs, outputs, ograds):
        return [ograds[0]] * len(inputs)


del _row, _op
