"""Elementwise operators: unary maths, binary (same shape and broadcasting), with a scalar,
comparisons and logic, ``add_n``, ``clip``, ``smooth_l1`` and the identity-like operators.

Most operators here are rows of a table: a forward written once and a gradient written with
Python operators and ``F`` functions on the values it is given (NDArrays or Symbols), so the
same rule serves imperative autograd and the graph backward. A forward is the name of a ufunc
of the array module ``xp``, or a function ``forward(xp, *inputs, out=None)`` that writes into
``out`` when given one; a forward that could not without a copy of its own (round, sign's NaN
rule, mod's zero rule, logic, the special functions) takes no ``out``. ``_table_bodies``
makes both the operator's ``compute`` and what a compiled graph calls (``specialise``: the
forward bound to the array module, for float inputs) of it.

MXNet's legacy operators keep the input dtype (``exp`` of int32 is int32, a scalar is first cast
to the array's dtype), which ``_keep`` and ``_scalar_like`` reproduce.

MXNet names the input of a unary or scalar operator ``input0`` (``named_inputs=False``), and its
backward node reads the output gradient (``lhs``) and the input or the output (``rhs``), the
gradient alone, or nothing (``zeros_like`` nodes for the piecewise-constant operators): the
``backward_node`` of each, as an Executor's monitor reports it.
"""
import functools
import inspect
import math

import numpy as np

from ..base import NotSupportedError, ShapeError
from .attrs import Bool, Count, Float
from .registry import (CLONE, ZEROS, BackwardNode, OpDef, broadcast_shape, merge_shape,
                       register, register_op, same_dtype, zero_gradient)
from . import special

__all__ = []


def _keep(result, like):
    """``result`` in the dtype of ``like`` (a no-op when it already is)."""
    return result.astype(like.dtype, copy=False)


def _scalar_like(value, like):
    """A scalar cast to the dtype of ``like`` first, as MXNet's kernels do (300 -> uint8 44)."""
    dtype = like.dtype
    if dtype.kind == 'f':       # the same cast of a Python float, without an array: faster
        return dtype.type(value)
    return np.asarray(value).astype(dtype)[()]


def not_differentiable_twice(name):
    """The gradient of an internal backward operator whose own derivative is not provided."""

    def gradient(F, attrs, inputs, outputs, ograds, **_):
        raise NotSupportedError(f'{name} has no gradient: higher-order derivatives through it '
                                'are not implemented')
    return gradient


# -------------------------------------------------------------------------------------------------
# From a table's forward to the operator's compute
# -------------------------------------------------------------------------------------------------

# ufuncs run without np.errstate (a microsecond a call): they cannot warn, or (add, subtract,
# multiply, hypot) their overflow warnings are left as numpy gives them
_LOUD_FREE = {'abs', 'negative', 'floor', 'ceil', 'trunc', 'add', 'subtract', 'multiply',
              'hypot', 'maximum', 'minimum', 'equal', 'not_equal', 'greater', 'greater_equal',
              'less', 'less_equal'}


def _loud_free(forward):
    """Marks a forward function that runs without np.errstate (it cannot warn)."""
    forward.loud_free = True
    return forward


def _ufunc(name, arity=1, swap=False, constant=None):
    """The forward that is the ufunc ``name`` of the array module, of ``arity`` arrays (2 with
    a scalar); ``swap`` exchanges its two arguments (``s - x`` of ``_rminus_scalar``);
    ``constant`` is the second argument of a unary forward (relu: ``maximum(x, 0)``). The
    forward keeps them as attributes, so that ``_table_specialise`` can bind the ufunc itself."""
    if constant is not None:
        def forward(xp, x, out=None):
            # a constant of x's dtype: numpy resolves the type of a Python number each call
            return getattr(xp, name)(x, _typed(constant, x.dtype), out=out)
    elif swap:
        def forward(xp, x, s, out=None):
            return getattr(xp, name)(s, x, out=out)
    elif arity == 2:
        def forward(xp, a, b, out=None):
            return getattr(xp, name)(a, b, out=out)
    else:
        def forward(xp, x, out=None):
            return getattr(xp, name)(x, out=out)
    forward.loud_free = name in _LOUD_FREE
    forward.ufunc, forward.swap, forward.constant = name, swap, constant
    return forward


_TYPED = {}


def _typed(value, dtype):
    """``value`` as a scalar of ``dtype`` (cached)."""
    key = (value, dtype)
    typed = _TYPED.get(key)
    if typed is None:
        typed = _TYPED[key] = np.asarray(value).astype(dtype)[()]
    return typed


def _quietly(compute, binary, into):
    """``compute`` (of two arrays when ``binary``, taking ``out`` when ``into``) with
    floating-point warnings silenced: MXNet computes inf and NaN quietly."""
    if binary and into:
        def quiet(xp, attrs, lhs, rhs, *, out=None):
            with np.errstate(all='ignore'):
                return compute(xp, attrs, lhs, rhs, out=out)
    elif binary:
        def quiet(xp, attrs, lhs, rhs):
            with np.errstate(all='ignore'):
                return compute(xp, attrs, lhs, rhs)
    elif into:
        def quiet(xp, attrs, data, *, out=None):
            with np.errstate(all='ignore'):
                return compute(xp, attrs, data, out=out)
    else:
        def quiet(xp, attrs, data):
            with np.errstate(all='ignore'):
                return compute(xp, attrs, data)
    return functools.wraps(compute)(quiet)


def _table_bodies(forward, arity=1, scalar=False):
    """``compute`` and ``specialise`` of a table row whose forward is ``forward`` (a ufunc name
    or a function) of ``arity`` arrays, or of an array and the attribute ``scalar`` in its
    dtype: both are that forward (``_table_specialise``).

    Without ``out`` the result is fresh, in the dtype of the (first) input; with one (a float
    buffer of the result's dtype, which may be an input) the forward writes into it. A forward
    without ``out`` gives a compute without. Floating-point warnings are silenced unless the
    forward is loud-free: decided here, once, as ``np.errstate`` costs a microsecond a call.
    The bodies name their arguments: a call through ``*args`` costs a fifth of one.
    """
    if isinstance(forward, str):
        forward = _ufunc(forward, 2 if scalar else arity)
    into = 'out' in inspect.signature(forward).parameters
    if scalar and into:
        def compute(xp, attrs, data, *, out=None):
            s = _scalar_like(attrs['scalar'], data)    # (Params' attribute access is slower)
            if out is None:
                return _keep(forward(xp, data, s), data)
            return forward(xp, data, s, out)
    elif scalar:
        def compute(xp, attrs, data):
            return _keep(forward(xp, data, _scalar_like(attrs['scalar'], data)), data)
    elif arity == 2 and into:
        def compute(xp, attrs, lhs, rhs, *, out=None):
            if out is None:
                return _keep(forward(xp, lhs, rhs), lhs)
            return forward(xp, lhs, rhs, out)
    elif arity == 2:
        def compute(xp, attrs, lhs, rhs):
            return _keep(forward(xp, lhs, rhs), lhs)
    elif into:
        def compute(xp, attrs, data, *, out=None):
            if out is None:
                return _keep(forward(xp, data), data)
            return forward(xp, data, out)
    else:
        def compute(xp, attrs, data):
            return _keep(forward(xp, data), data)
    if not getattr(forward, 'loud_free', False):
        compute = _quietly(compute, arity == 2 and not scalar, into)
    return compute, _table_specialise(forward, compute, into, scalar)


def _table_specialise(forward, compute, into, scalar):
    """What a compiled graph calls for a table row: the forward itself, bound to the array
    module (and the scalar cast once), where float inputs of one dtype give that dtype (so
    ``_keep`` has nothing to do); the row's compute otherwise (integers, comparisons)."""
    quiet = not getattr(forward, 'loud_free', False)

    def specialise(xp, attrs, shapes, dtypes, is_train):
        dtype = dtypes[0]
        if not into or dtype.kind != 'f' or any(d != dtype for d in dtypes):
            return functools.partial(compute, xp, attrs)
        probe = np.empty(0, dtype)
        s = _scalar_like(attrs['scalar'], probe) if scalar else None
        if forward(np, *[probe] * len(dtypes), *([s] if scalar else [])).dtype != dtype:
            return functools.partial(compute, xp, attrs)
        fn = _bound(forward, xp, dtype, s)
        return _quiet_call(fn) if quiet else fn
    return specialise


def _bound(forward, xp, dtype, s):
    """``forward`` as ``fn(*inputs, out=None)`` for inputs of ``dtype`` (with the scalar ``s``):
    the ufunc itself where the forward is one (no Python frame a call)."""
    name = getattr(forward, 'ufunc', None)
    if name is None:        # (the scalar rows that write into out are ufuncs)
        return functools.partial(forward, xp)
    f = getattr(xp, name)
    c = s if s is not None else None if forward.constant is None else \
        _typed(forward.constant, dtype)
    if c is None:
        return f
    if forward.swap:
        return lambda data, out=None: f(c, data, out=out)
    return lambda data, out=None: f(data, c, out=out)


def _quiet_call(fn):
    """``fn(*inputs, out=None)`` with floating-point warnings silenced."""
    def quiet(*inputs, out=None):
        with np.errstate(all='ignore'):
            return fn(*inputs, out=out)
    return quiet


# -------------------------------------------------------------------------------------------------
# Unary
# -------------------------------------------------------------------------------------------------

def _round_half_away(xp, x):
    return xp.sign(x) * xp.floor(xp.abs(x) + 0.5)


def _rint_half_down(xp, x):
    # MXNet's rint rounds halves down: rint(1.5) == 1, rint(-2.5) == -3
    fl = xp.floor(x)
    return xp.where(x - fl <= 0.5, fl, xp.ceil(x))


@_loud_free
def _sign(xp, x):
    return xp.where(xp.isnan(x), 0, xp.sign(x))       # MXNet: 0 at NaN


_relu = _ufunc('maximum', constant=0)


def _sigmoid(xp, x, out=None):
    y = xp.exp(xp.negative(x, out=out), out=out)
    y += 1
    return xp.reciprocal(y, out=y)


def _softsign(xp, x, out=None):
    return xp.divide(x, 1 + xp.abs(x), out=out)


def _softrelu(xp, x):
    # log(1 + e^x), and x itself above 20 where they agree in float precision (as MXNet);
    # float16 in float32, where e^20 does not overflow
    x = x.astype(np.float32) if x.dtype == np.float16 else x
    return xp.where(x > 20, x, xp.log1p(xp.exp(xp.minimum(x, 20))))


def _reciprocal_of(root):
    """The forward ``1 / root(x)`` (rsqrt, rcbrt)."""
    def forward(xp, x, out=None):
        y = getattr(xp, root)(x, out=out)
        return xp.reciprocal(y, out=y)
    return forward


@_loud_free
def _copy(xp, x, out=None):
    if out is None:
        return x.copy()
    xp.copyto(out, x)
    return out


_LN10 = math.log(10.0)
_LN2 = math.log(2.0)
_DEG = 180.0 / math.pi
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0

# name, forward, gradient(F, x, y, g) or None for a zero gradient, aliases
UNARY = [
    ('abs', 'abs', lambda F, x, y, g: g * F.sign(x), ()),
    ('sign', _sign, None, ()),
    ('negative', 'negative', lambda F, x, y, g: -g, ()),
    ('reciprocal', 'reciprocal', lambda F, x, y, g: -g * y * y, ()),
    ('square', 'square', lambda F, x, y, g: g * x * 2, ()),
    ('sqrt', 'sqrt', lambda F, x, y, g: g / (y * 2), ()),
    ('rsqrt', _reciprocal_of('sqrt'), lambda F, x, y, g: g * y * y * y * -0.5, ()),
    ('cbrt', 'cbrt', lambda F, x, y, g: g / (y * y * 3), ()),
    ('rcbrt', _reciprocal_of('cbrt'), lambda F, x, y, g: g * y * y * y * y * (-1 / 3), ()),
    ('exp', 'exp', lambda F, x, y, g: g * y, ()),
    ('expm1', 'expm1', lambda F, x, y, g: g * (y + 1), ()),
    ('log', 'log', lambda F, x, y, g: g / x, ()),
    ('log10', 'log10', lambda F, x, y, g: g / (x * _LN10), ()),
    ('log2', 'log2', lambda F, x, y, g: g / (x * _LN2), ()),
    ('log1p', 'log1p', lambda F, x, y, g: g / (x + 1), ()),
    ('sin', 'sin', lambda F, x, y, g: g * F.cos(x), ()),
    ('cos', 'cos', lambda F, x, y, g: -g * F.sin(x), ()),
    ('tan', 'tan', lambda F, x, y, g: g * (y * y + 1), ()),
    ('arcsin', 'arcsin', lambda F, x, y, g: g * F.rsqrt(1 - x * x), ()),
    ('arccos', 'arccos', lambda F, x, y, g: -g * F.rsqrt(1 - x * x), ()),
    ('arctan', 'arctan', lambda F, x, y, g: g / (x * x + 1), ()),
    ('sinh', 'sinh', lambda F, x, y, g: g * F.cosh(x), ()),
    ('cosh', 'cosh', lambda F, x, y, g: g * F.sinh(x), ()),
    ('tanh', 'tanh', lambda F, x, y, g: g * (1 - y * y), ()),
    ('arcsinh', 'arcsinh', lambda F, x, y, g: g * F.rsqrt(x * x + 1), ()),
    ('arccosh', 'arccosh', lambda F, x, y, g: g * F.rsqrt(x * x - 1), ()),
    ('arctanh', 'arctanh', lambda F, x, y, g: g / (1 - x * x), ()),
    ('degrees', lambda xp, x, out=None: xp.multiply(x, _DEG, out=out),
     lambda F, x, y, g: g * _DEG, ()),
    ('radians', lambda xp, x, out=None: xp.divide(x, _DEG, out=out),
     lambda F, x, y, g: g / _DEG, ()),
    ('floor', 'floor', None, ()),
    ('ceil', 'ceil', None, ()),
    ('round', _round_half_away, None, ()),
    ('rint', _rint_half_down, None, ()),
    ('fix', 'trunc', None, ()),
    ('trunc', 'trunc', None, ()),
    ('relu', _relu, lambda F, x, y, g: g * (x > 0), ()),
    ('sigmoid', _sigmoid, lambda F, x, y, g: g * y * (1 - y), ()),
    ('softsign', _softsign, lambda F, x, y, g: g / F.square(F.abs(x) + 1), ()),
    # Activation's softrelu, log(1 + e^x): MXNet has no operator of its own for it
    ('_softrelu', _softrelu, lambda F, x, y, g: g * F.sigmoid(x), ()),
    ('erf', special.erf, lambda F, x, y, g: g * F.exp(-x * x) * _TWO_OVER_SQRT_PI, ()),
    ('erfinv', special.erfinv, lambda F, x, y, g: g * F.exp(y * y) * _SQRT_PI_OVER_TWO, ()),
    ('gamma', special.gamma, lambda F, x, y, g: g * y * F._digamma(x), ()),
    ('gammaln', special.gammaln, lambda F, x, y, g: g * F._digamma(x), ()),
    ('logical_not', _loud_free(lambda xp, x: x == 0), None, ()),
    ('_copy', _copy, lambda F, x, y, g: g, ('identity',)),
    ('BlockGrad', _copy, None, ('stop_gradient',)),
]


# MXNet's backward node of a unary operator reads (gradient, input) as lhs/rhs, but these read
# the output; these read the gradient alone (``input0``); those without a gradient but sign's are
# zeros_like nodes
_BACKWARD_READS_OUTPUT = {'sqrt', 'cbrt', 'exp', 'tan', 'tanh', 'relu', 'sigmoid', 'erfinv'}
_BACKWARD_READS_GRADIENT = {'negative', '_copy'}


def _unary_backward(name, backward):
    if name in _BACKWARD_READS_GRADIENT:
        return BackwardNode(('ograd0',))
    if backward is None and name != 'sign':
        return ZEROS
    second = 'out0' if name in _BACKWARD_READS_OUTPUT else 'in0'
    return BackwardNode(('ograd0', second), ('lhs', 'rhs'))


def _unary_op(name, forward, backward, aliases):
    if backward is None:
        gradient = zero_gradient
    else:
        def gradient(F, attrs, inputs, outputs, ograds):
            return [backward(F, inputs[0], outputs[0], ograds[0])]
    compute, specialise = _table_bodies(forward)
    return OpDef(name, inputs=('data',), compute=compute, specialise=specialise,
                 gradient=gradient, aliases=aliases, inplace=((0, 0),), named_inputs=False,
                 backward_node=_unary_backward(name, backward), doc=f'Elementwise {name}.')


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
    named_inputs = False
    output_names = ('loss',)
    backward_node = BackwardNode(('in0',))      # ones_like

    def compute(xp, attrs, data):
        return data.copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.ones_like(inputs[0])]


@register('hard_sigmoid')
class hard_sigmoid:
    """``clip(alpha * x + beta, 0, 1)``."""
    inputs = ('data',)
    attrs = dict(alpha=Float(0.2), beta=Float(0.5))
    named_inputs = False
    backward_node = BackwardNode(('ograd0', 'in0'))

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
    named_inputs = False
    backward_node = BackwardNode(('ograd0', 'in0'))

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
    named_inputs = False
    backward_node = BackwardNode(('ograd0', 'in0'), ('lhs', 'rhs'))

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
    return xp.where(b == 0, 0, xp.mod(a, xp.where(b == 0, 1, b)))


def _logical(name):
    return _loud_free(lambda xp, a, b: getattr(xp, name)(a != 0, b != 0))


# name, aliases, broadcast name, its aliases, forward, gradient(F, a, b, y, g) or None
BINARY = [
    ('elemwise_add', ('_add', '_plus', '_Plus'), 'broadcast_add', ('broadcast_plus',),
     'add', lambda F, a, b, y, g: (g, g)),
    ('elemwise_sub', ('_sub', '_minus', '_Minus'), 'broadcast_sub', ('broadcast_minus',),
     'subtract', lambda F, a, b, y, g: (g, -g)),
    ('elemwise_mul', ('_mul', '_Mul'), 'broadcast_mul', (),
     'multiply', lambda F, a, b, y, g: (g * b, g * a)),
    ('elemwise_div', ('_div', '_Div'), 'broadcast_div', (),
     'divide', lambda F, a, b, y, g: (g / b, -g * y / b)),
    ('_mod', ('_Mod',), 'broadcast_mod', (),
     _mod, lambda F, a, b, y, g: (g, -g * F.floor(a / b))),
    ('_power', ('_Power',), 'broadcast_power', (),
     'power', lambda F, a, b, y, g: (g * b * a ** (b - 1), g * y * F.log(a))),
    ('_maximum', ('_Maximum',), 'broadcast_maximum', (),
     'maximum', lambda F, a, b, y, g: (g * (a >= b), g * (a < b))),
    ('_minimum', ('_Minimum',), 'broadcast_minimum', (),
     'minimum', lambda F, a, b, y, g: (g * (a <= b), g * (a > b))),
    ('_hypot', ('_Hypot',), 'broadcast_hypot', (),
     'hypot', lambda F, a, b, y, g: (g * a / y, g * b / y)),
    ('_equal', ('_Equal',), 'broadcast_equal', (), 'equal', None),
    ('_not_equal', ('_Not_Equal',), 'broadcast_not_equal', (), 'not_equal', None),
    ('_greater', ('_Greater',), 'broadcast_greater', (), 'greater', None),
    ('_greater_equal', ('_Greater_Equal',), 'broadcast_greater_equal', (),
     'greater_equal', None),
    ('_lesser', ('_Lesser',), 'broadcast_lesser', (), 'less', None),
    ('_lesser_equal', ('_Lesser_Equal',), 'broadcast_lesser_equal', (), 'less_equal', None),
    ('_logical_and', ('_Logical_And',), 'broadcast_logical_and', (),
     _logical('logical_and'), None),
    ('_logical_or', ('_Logical_Or',), 'broadcast_logical_or', (),
     _logical('logical_or'), None),
    ('_logical_xor', ('_Logical_Xor',), 'broadcast_logical_xor', (),
     _logical('logical_xor'), None),
]


def _broadcast_infer(attrs, lhs, rhs):
    return [lhs, rhs], [broadcast_shape(lhs, rhs)]


# MXNet's backward nodes of the binary operators with a gradient read (gradient, lhs, rhs) but
# these: elemwise_add has none (both inputs get the output's gradient), the others read the
# gradient alone
_BACKWARD_CLONE = {'elemwise_add'}
_BACKWARD_GRADIENT_ONLY = {'broadcast_add', 'elemwise_sub', 'broadcast_sub'}


def _binary_backward(name, backward):
    if backward is None:
        return ZEROS
    if name in _BACKWARD_CLONE:
        return CLONE
    if name in _BACKWARD_GRADIENT_ONLY:
        return BackwardNode(('ograd0',))
    return BackwardNode(('ograd0', 'in0', 'in1'))


def _binary_ops(name, aliases, bname, baliases, forward, backward):
    compute, specialise = _table_bodies(forward, arity=2)
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
    yield OpDef(name, inputs=('lhs', 'rhs'), compute=compute, specialise=specialise,
                gradient=same_grad, backward_node=_binary_backward(name, backward),
                aliases=aliases, inplace=((0, 0), (1, 0)), doc=doc + ' of the same shape.')
    yield OpDef(bname, inputs=('lhs', 'rhs'), compute=compute, specialise=specialise,
                gradient=broadcast_grad, backward_node=_binary_backward(bname, backward),
                infer_shape=_broadcast_infer, aliases=baliases,
                doc=doc + ', broadcasting them (numpy rules).')


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


# name, aliases, forward(xp, x, s[, out]), gradient(F, x, y, g, s) or None
SCALAR = [
    ('_plus_scalar', ('_PlusScalar',), 'add', lambda F, x, y, g, s: g),
    ('_minus_scalar', ('_MinusScalar',), 'subtract', lambda F, x, y, g, s: g),
    ('_rminus_scalar', ('_RMinusScalar',), _ufunc('subtract', swap=True),
     lambda F, x, y, g, s: -g),
    ('_mul_scalar', ('_MulScalar',), 'multiply', lambda F, x, y, g, s: g * s),
    ('_div_scalar', ('_DivScalar',), 'divide', lambda F, x, y, g, s: g / s),
    ('_rdiv_scalar', ('_RDivScalar',), _ufunc('divide', swap=True),
     lambda F, x, y, g, s: -g * y / x),
    ('_mod_scalar', ('_ModScalar',), _mod, lambda F, x, y, g, s: g),
    ('_rmod_scalar', ('_RModScalar',), lambda xp, x, s: _mod(xp, s, x),
     lambda F, x, y, g, s: -g * F.floor(s / x)),
    ('_power_scalar', ('_PowerScalar',), 'power', lambda F, x, y, g, s: g * s * x ** (s - 1)),
    ('_rpower_scalar', ('_RPowerScalar',), _ufunc('power', swap=True),
     lambda F, x, y, g, s: g * y * _log_or_nan(s)),
    ('_maximum_scalar', ('_MaximumScalar',), 'maximum', lambda F, x, y, g, s: g * (x >= s)),
    ('_minimum_scalar', ('_MinimumScalar',), 'minimum', lambda F, x, y, g, s: g * (x <= s)),
    ('_hypot_scalar', ('_HypotScalar',), 'hypot', lambda F, x, y, g, s: g * x / y),
    ('_equal_scalar', ('_EqualScalar',), 'equal', None),
    ('_not_equal_scalar', ('_NotEqualScalar',), 'not_equal', None),
    ('_greater_scalar', ('_GreaterScalar',), 'greater', None),
    ('_greater_equal_scalar', ('_GreaterEqualScalar',), 'greater_equal', None),
    ('_lesser_scalar', ('_LesserScalar',), 'less', None),
    ('_lesser_equal_scalar', ('_LesserEqualScalar',), 'less_equal', None),
    ('_logical_and_scalar', ('_LogicalAndScalar',),
     _loud_free(lambda xp, x, s: xp.logical_and(x != 0, bool(s != 0))), None),
    ('_logical_or_scalar', ('_LogicalOrScalar',),
     _loud_free(lambda xp, x, s: xp.logical_or(x != 0, bool(s != 0))), None),
    ('_logical_xor_scalar', ('_LogicalXorScalar',),
     _loud_free(lambda xp, x, s: xp.logical_xor(x != 0, bool(s != 0))), None),
]

_SCALAR_ATTRS = dict(scalar=Float(1.0), is_int=Bool(True))


# MXNet's backward nodes of the scalar operators with a gradient read (gradient, input) as
# lhs/rhs but these: _rpower_scalar reads the output, the others the gradient alone
_SCALAR_BACKWARD_READS_OUTPUT = {'_rpower_scalar'}
_SCALAR_BACKWARD_READS_GRADIENT = {'_plus_scalar', '_minus_scalar', '_rminus_scalar',
                                   '_mul_scalar', '_div_scalar'}


def _scalar_backward(name, backward):
    if backward is None:
        return ZEROS
    if name in _SCALAR_BACKWARD_READS_GRADIENT:
        return BackwardNode(('ograd0',))
    second = 'out0' if name in _SCALAR_BACKWARD_READS_OUTPUT else 'in0'
    return BackwardNode(('ograd0', second), ('lhs', 'rhs'))


def _scalar_op(name, aliases, forward, backward):
    if backward is None:
        gradient = zero_gradient
    else:
        def gradient(F, attrs, inputs, outputs, ograds):
            return [backward(F, inputs[0], outputs[0], ograds[0], attrs.scalar)]
    compute, specialise = _table_bodies(forward, scalar=True)
    return OpDef(name, inputs=('data',), attrs=_SCALAR_ATTRS, compute=compute,
                 specialise=specialise, gradient=gradient, named_inputs=False,
                 backward_node=_scalar_backward(name, backward),
                 aliases=aliases, inplace=((0, 0),),
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
    attrs = dict(num_args=Count())

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
