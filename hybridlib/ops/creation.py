"""Creating and converting arrays, and drawing random numbers.

* constant arrays: ``_zeros``, ``_ones``, ``_full``, ``zeros_like``, ``ones_like``;
* ranges: ``_arange``, ``_linspace``, ``_eye``;
* conversions: ``Cast``, ``amp_cast``, ``amp_multicast``, ``_copyto`` (between devices),
  ``cast_storage`` (dense to dense: sparse storage does not exist here);
* random numbers: ``_random_X`` (scalar parameters, an output of ``shape``), ``_random_X_like``
  (the shape and dtype of ``data``), ``_sample_X`` (one draw of ``shape`` per element of the
  parameter arrays), ``_random_randint``, ``_sample_multinomial`` and ``_shuffle``.

Creation operators have no inputs; their ``ctx`` attribute says where the result lives (the
current context when not given) and ``dtype`` what it holds (float32 by default).

Random operators draw from ``hybridlib.random.generator(xp)``, so ``mx.random.seed`` makes them
repeatable; the numbers are not MXNet's streams, the distributions are. Parameters follow
MXNet: ``gamma(alpha, beta)`` has mean ``alpha * beta``, ``exponential(lam)`` mean ``1 / lam``,
``negative_binomial(k, p)`` counts failures before ``k`` successes of probability ``p``, and
``generalized_negative_binomial(mu, alpha)`` has mean ``mu`` and variance ``mu + alpha mu^2``.
Distribution parameters get no gradient (as in MXNet).
"""
import math
import platform

import numpy as np

from ..base import (DEFAULT_DTYPE, DTypeError, MXNetError, NotSupportedError, ShapeError,
                    check_stype)
from ..context import transfer
from . import rng
from .attrs import Bool, Ctx, DType, Float, Int, Shape, Str
from .registry import BackwardNode, OpDef, ZEROS, merge_shape, register, register_op, zero_gradient

__all__ = []

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_LOW_FLOATS = (_F16, _F32)          # what AMP casts (bfloat16 has no numpy dtype)
_INT32 = np.dtype(np.int32)


def _check_dtype(dtype, allowed, what='dtype'):
    """ValueError unless ``dtype`` (None or np.dtype) is one of the names in ``allowed``."""
    name = 'None' if dtype is None else dtype.name
    if name not in allowed:
        raise ValueError(f'{what}={name!r} is not one of {", ".join(repr(a) for a in allowed)}')


def _cast_scalar(value, dtype):
    """A Python number converted to ``dtype`` as C++'s ``static_cast`` does on x86 (300 -> uint8
    44, -2.7 -> int32 -2, nan -> int32 -2147483648)."""
    with np.errstate(all='ignore'):
        return c_cast(np, np.asarray(value, dtype=np.float64), np.dtype(dtype))[()]


# numpy's own casts are the x86 conversions on x86 machines; elsewhere (ARM, CUDA) they saturate
_NATIVE_X86_CASTS = platform.machine().lower() in ('x86_64', 'amd64', 'i386', 'i686')


def c_cast(xp, data, dtype):
    """``data.astype(dtype)`` with x86's C conversions from floating point to integers on every
    device, so that a GPU gives the CPU's (and MXNet's CPU's) integers where CUDA would saturate:
    -2.7 -> uint8 254, 300 -> uint8 44, -2 -> uint32 4294967294. NaN and values out of the range
    of the 32- or 64-bit conversion become its minimum, then wrap (3e9 -> int32 -2147483648);
    C leaves those undefined, and numpy's own results there vary with its vector loops."""
    dtype = np.dtype(dtype)
    if data.dtype.kind != 'f' or dtype.kind not in 'iu' or (xp is np and _NATIVE_X86_CASTS):
        return data.astype(dtype)
    x = data.astype(np.float64)     # float16 and float32 are exact there
    if dtype == np.uint64:
        # the compiler's two ranges: below 2**63 signed, above it shifted down and the bit set
        high = x >= 2.0 ** 63
        low = _x86_integer(xp, xp.where(high, x - 2.0 ** 63, x), 64).astype(dtype)
        return xp.where(high, low ^ np.uint64(1 << 63), low)
    bits = 32 if dtype.itemsize < 4 or dtype == np.int32 else 64
    return _x86_integer(xp, x, bits).astype(dtype)


def _x86_integer(xp, x, bits):
    """cvttsd2si: float64 ``x`` truncated to int``bits``, its minimum where out of range or NaN."""
    t = xp.trunc(x)
    ok = (t >= -2.0 ** (bits - 1)) & (t < 2.0 ** (bits - 1))
    wide = np.dtype(f'int{bits}')
    return xp.where(ok, xp.where(ok, t, 0).astype(wide), wide.type(np.iinfo(wide).min))


def _creation_shape(attrs):
    return [], [tuple(attrs.shape)]


def _creation_type(attrs):
    return [], [attrs.dtype]


_CREATION_ATTRS = dict(shape=Shape(()), ctx=Ctx(None), dtype=DType(DEFAULT_DTYPE))


# -------------------------------------------------------------------------------------------------
# Constant arrays
# -------------------------------------------------------------------------------------------------

def _constant_op(name, fill, doc):
    """``_zeros``/``_ones``: an array of ``shape`` filled with ``fill``, exposed as ``zeros``..."""
    def compute(xp, attrs):
        return xp.full(attrs.shape, fill, dtype=attrs.dtype)
    return OpDef(name, attrs=_CREATION_ATTRS, compute=compute, infer_shape=_creation_shape,
                 infer_type=_creation_type, gradient=zero_gradient, aliases=(name[1:],),
                 hint=name, doc=doc)


register_op(_constant_op('_zeros', 0, 'An array of zeros of ``shape`` '
                         '(MXNet: ``nd.zeros(shape, ctx, dtype)``).'))
register_op(_constant_op('_ones', 1, 'An array of ones of ``shape``.'))


@register('_full', hint='_full')
class _full:
    """An array of ``shape`` filled with ``value`` (``nd.full(shape, val)`` calls it).

    ``value`` is converted as MXNet converts a double: truncated and wrapped for integer dtypes
    (``full(2, 300, dtype='uint8')`` holds 44).
    """
    attrs = dict(shape=Shape(()), ctx=Ctx(None), dtype=DType(DEFAULT_DTYPE), value=Float())
    infer_shape = _creation_shape
    infer_type = _creation_type
    gradient = zero_gradient

    def compute(xp, attrs):
        return xp.full(attrs.shape, _cast_scalar(attrs.value, attrs.dtype), dtype=attrs.dtype)


@register('zeros_like')
class zeros_like:
    """Zeros of the shape and dtype of the input."""
    inputs = ('data',)
    named_inputs = False
    backward_node = ZEROS
    gradient = zero_gradient

    def compute(xp, attrs, data):
        return xp.zeros_like(data)


@register('ones_like')
class ones_like:
    """Ones of the shape and dtype of the input."""
    inputs = ('data',)
    named_inputs = False
    backward_node = ZEROS
    gradient = zero_gradient

    def compute(xp, attrs, data):
        return xp.ones_like(data)


# -------------------------------------------------------------------------------------------------
# Ranges
# -------------------------------------------------------------------------------------------------

_RANGE_DTYPES = ('float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8')


def _arange_bounds(attrs):
    """(start, stop) after MXNet's parser: ``arange(5)`` is ``arange(0, 5)``."""
    if attrs.stop is None:
        return 0, attrs.start
    return attrs.start, attrs.stop


def _arange_check(attrs):
    _check_dtype(attrs.dtype, _RANGE_DTYPES)
    if attrs.step == 0:
        raise ValueError(f'Range does not support step=0, received {attrs.step}')
    if attrs.repeat <= 0:
        raise ValueError(f'Range only supports repeat > 0, received {attrs.repeat}')
    if attrs.infer_range and attrs.stop is None:
        raise NotSupportedError(
            '_arange: infer_range=True without stop takes the length from the consumer of the '
            'output in MXNet graphs; hybridlib infers shapes forwards only. Give stop.')
    start, stop = _arange_bounds(attrs)
    if (attrs.step > 0 and not start < stop) or (attrs.step < 0 and not start > stop):
        raise ValueError(f'Invalid range (start, stop, step) = ({start}, {stop}, {attrs.step})')


def _arange_length(attrs):
    start, stop = _arange_bounds(attrs)
    return int(math.ceil((stop - start) / attrs.step)) * attrs.repeat


@register('_arange', aliases=('arange',), hint='_arange')
class _arange:
    """Evenly spaced values ``start, start + step, ...`` below ``stop``, each ``repeat`` times.

    ``arange(5)`` counts from 0 to 4. The output has shape ``(ceil((stop - start) / step) *
    repeat,)``. As in MXNet, ``start`` and ``step`` are first converted to ``dtype`` and the
    values computed in it (``arange(0, 2.5, 0.7, dtype='int32')`` is all zeros).
    ``infer_range=True`` without ``stop`` (length taken from the graph) is not supported.
    """
    attrs = dict(start=Float(), stop=Float(None), step=Float(1.0), repeat=Int(1),
                 infer_range=Bool(False), ctx=Ctx(None), dtype=DType(DEFAULT_DTYPE))
    check = _arange_check
    gradient = zero_gradient

    def infer_shape(attrs):
        return [], [(_arange_length(attrs),)]

    def infer_type(attrs):
        return [], [attrs.dtype]

    def compute(xp, attrs):
        start, _ = _arange_bounds(attrs)
        dtype = attrs.dtype
        index = xp.arange(_arange_length(attrs), dtype=np.int64) // attrs.repeat
        if dtype.kind == 'f':
            # start + i * step in the output dtype, as MXNet's kernel computes it
            return index.astype(dtype) * dtype.type(attrs.step) + dtype.type(start)
        if dtype.kind == 'u':
            # MXNet goes through int64 for unsigned types (two's complement on every platform)
            start, step = int(start), int(attrs.step)
        else:
            start, step = int(_cast_scalar(start, dtype)), int(_cast_scalar(attrs.step, dtype))
        return (index * step + start).astype(dtype)


@register('_linspace', aliases=('linspace',), hint='_linspace')
class _linspace:
    """``num`` evenly spaced values from ``start`` to ``stop`` (included when ``endpoint``).

    Values are ``start + i * step`` in double precision, then converted to ``dtype``
    (truncated for integer dtypes). Output shape ``(num,)``.
    """
    attrs = dict(start=Float(), stop=Float(), num=Int(), endpoint=Bool(True), ctx=Ctx(None),
                 dtype=DType(DEFAULT_DTYPE))
    gradient = zero_gradient

    def check(attrs):
        _check_dtype(attrs.dtype, _RANGE_DTYPES)
        if attrs.num < 0:
            raise ValueError(f'Number of sequence should be non-negative, received {attrs.num}')

    def infer_shape(attrs):
        return [], [(attrs.num,)]

    def infer_type(attrs):
        return [], [attrs.dtype]

    def compute(xp, attrs):
        steps = attrs.num - 1 if attrs.endpoint else attrs.num
        step = (attrs.stop - attrs.start) / steps if steps > 0 else 0.0
        values = attrs.start + step * xp.arange(attrs.num, dtype=np.float64)
        with np.errstate(invalid='ignore'):
            return values.astype(attrs.dtype)


@register('_eye', aliases=('eye',), hint='_eye')
class _eye:
    """An ``(N, M)`` matrix (``M=0`` means ``N``) with ones on diagonal ``k`` (> 0: above)."""
    attrs = dict(N=Int(), M=Int(0), k=Int(0), ctx=Ctx(None), dtype=DType(DEFAULT_DTYPE))
    gradient = zero_gradient

    def check(attrs):
        _check_dtype(attrs.dtype, _RANGE_DTYPES)
        if attrs.N < 0:
            raise ValueError(f'N={attrs.N}: the number of rows cannot be negative')

    def infer_shape(attrs):
        return [], [(attrs.N, attrs.M if attrs.M > 0 else attrs.N)]

    def infer_type(attrs):
        return [], [attrs.dtype]

    def compute(xp, attrs):
        return xp.eye(attrs.N, attrs.M if attrs.M > 0 else attrs.N, attrs.k, dtype=attrs.dtype)


# -------------------------------------------------------------------------------------------------
# Conversions
# -------------------------------------------------------------------------------------------------

@register('Cast', aliases=('cast',))
class Cast:
    """Convert to ``dtype`` (C casts: truncation, integer wrap-around); the gradient converts
    back to the input's dtype."""
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0',))
    attrs = dict(dtype=DType())

    def compute(xp, attrs, data):
        with np.errstate(invalid='ignore', over='ignore'):
            return c_cast(xp, data, attrs.dtype)

    def infer_type(attrs, data):
        return [data], [attrs.dtype]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.Cast(ograds[0], dtype=inputs[0].dtype)]


def _cast_shapes(attrs, *shapes, out_shapes=None):
    """Output i has the shape of input i, known from either side: amp's casts sit between a
    parameter and the operator that infers its shape (Gluon's deferred initialisation)."""
    outs = out_shapes or [None] * len(shapes)
    if len(shapes) != len(outs):
        raise ShapeError(f'{len(outs)} outputs but {len(shapes)} inputs given')
    merged = [merge_shape(s, o, f'input {i}') for i, (s, o) in enumerate(zip(shapes, outs))]
    return merged, merged


def _amp_type(attrs, data):
    # only float16/float32 (and bfloat16, which numpy lacks) are converted; others pass through
    return attrs.dtype if data in _LOW_FLOATS else data


@register('amp_cast')
class amp_cast:
    """AMP's cast: float16/float32 inputs are converted to ``dtype``, others pass unchanged.

    The gradient is converted back to the input's dtype (MXNet's ``_backward_amp_cast``).
    """
    inputs = ('data',)
    named_inputs = False
    attrs = dict(dtype=DType())
    infer_shape = _cast_shapes

    def check(attrs):
        _check_dtype(attrs.dtype, _RANGE_DTYPES)

    def compute(xp, attrs, data):
        return data.astype(_amp_type(attrs, data.dtype))

    def infer_type(attrs, data):
        return [data], [None if data is None else _amp_type(attrs, data)]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.Cast(ograds[0], dtype=inputs[0].dtype)]


def _multicast_types(attrs, dtypes):
    """MXNet 1.9.1's ``AMPMultiCastType``: every float16/float32 input goes to one type.

    Without ``cast_narrow`` that type is the first input's dtype, or float32 when any input is
    float32 (so an int32 first input casts float16 inputs to int32, as MXNet does); with
    ``cast_narrow`` it is float16 when any input is float16, else float32.
    """
    if attrs.cast_narrow:
        target = _F16 if _F16 in dtypes else _F32
    else:
        target = _F32 if _F32 in dtypes else dtypes[0]
    return [target if d in _LOW_FLOATS else d for d in dtypes]


@register('amp_multicast', variadic='num_outputs')
class amp_multicast:
    """AMP's cast of ``num_outputs`` inputs to a common type (see ``_multicast_types``).

    Output ``i`` has the shape of input ``i``; gradients are converted back to input dtypes.
    """
    attrs = dict(num_outputs=Int(), cast_narrow=Bool(False))

    def list_inputs(attrs):
        return [f'data_{i}' for i in range(attrs.num_outputs)]

    def num_outputs(attrs):
        return attrs.num_outputs

    def infer_shape(attrs, *shapes, out_shapes=None):
        if len(shapes) != attrs.num_outputs:
            raise ShapeError(f'num_outputs={attrs.num_outputs} but {len(shapes)} inputs given')
        return _cast_shapes(attrs, *shapes, out_shapes=out_shapes)

    def infer_type(attrs, *dtypes):
        return list(dtypes), _multicast_types(attrs, list(dtypes))

    def compute(xp, attrs, *data):
        types = _multicast_types(attrs, [d.dtype for d in data])
        return tuple(d.astype(t) for d, t in zip(data, types))

    def gradient(F, attrs, inputs, outputs, ograds):
        return [None if g is None else F.Cast(g, dtype=x.dtype) for x, g in zip(inputs, ograds)]


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


@register('cast_storage')
class cast_storage:
    """The input in storage ``stype``: only 'default' (dense) exists here, so a copy."""
    inputs = ('data',)
    named_inputs = False
    attrs = dict(stype=Str(choices=('default', 'row_sparse', 'csr')))

    def check(attrs):
        check_stype(attrs.stype, 'cast_storage')

    def compute(xp, attrs, data):
        return data.copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._copy(ograds[0])]


# -------------------------------------------------------------------------------------------------
# Random distributions. A sampler draws ``size`` values of ``dtype``; its parameters are Python
# numbers (``_random_X``) or float64 arrays broadcastable to ``size`` (``_sample_X``).
# -------------------------------------------------------------------------------------------------

_RANDOM_DTYPES = ('None', 'float16', 'float32', 'float64')


def _work_dtype(dtype):
    """The dtype to draw uniform/normal numbers in: float64 only for float64 outputs."""
    return _F64 if dtype == _F64 else _F32


def _as_param(xp, value):
    """A parameter as a float64 array (cupy's Generator takes no numpy scalars)."""
    return xp.asarray(value, dtype=np.float64)


def _uniform(xp, gen, size, dtype, low, high):
    u = gen.random(size, dtype=_work_dtype(dtype))
    return (low + (high - low) * u).astype(dtype, copy=False)


def _normal(xp, gen, size, dtype, loc, scale):
    z = gen.standard_normal(size, dtype=_work_dtype(dtype))
    return (loc + scale * z).astype(dtype, copy=False)


def _gamma(xp, gen, size, dtype, alpha, beta):
    alpha = xp.maximum(_as_param(xp, alpha), 0)
    return (gen.standard_gamma(alpha, size) * beta).astype(dtype, copy=False)


def _exponential(xp, gen, size, dtype, lam):
    with np.errstate(divide='ignore'):
        draw = gen.standard_exponential(size, dtype=_work_dtype(dtype))
        return (draw / _as_param(xp, lam)).astype(dtype, copy=False)


def _poisson(xp, gen, size, dtype, lam):
    lam = xp.maximum(_as_param(xp, lam), 0)
    return gen.poisson(xp.broadcast_to(lam, size), size).astype(dtype)


def _negative_binomial(xp, gen, size, dtype, k, p):
    # failures before k successes = Poisson(Gamma(k, scale=(1 - p) / p))
    k = xp.maximum(_as_param(xp, k), 0)
    p = _as_param(xp, p)
    positive = p > 0
    with np.errstate(divide='ignore', invalid='ignore'):
        scale = xp.where(positive, (1 - p) / xp.where(positive, p, 1), 0)
    lam = gen.standard_gamma(xp.broadcast_to(k, size), size) * scale
    return gen.poisson(xp.maximum(lam, 0), size).astype(dtype)


def _generalized_negative_binomial(xp, gen, size, dtype, mu, alpha):
    # mean mu, variance mu + alpha mu^2: Poisson(Gamma(1 / alpha, scale=alpha mu)); alpha=0 is
    # Poisson(mu)
    mu = xp.maximum(_as_param(xp, mu), 0)
    alpha = _as_param(xp, alpha)
    positive = alpha > 0
    safe = xp.where(positive, alpha, 1)
    draw = gen.standard_gamma(xp.broadcast_to(1 / safe, size), size) * (safe * mu)
    lam = xp.where(positive, draw, xp.broadcast_to(mu, size))
    return gen.poisson(xp.maximum(lam, 0), size).astype(dtype)


def _check_uniform(a):
    if not a.high >= a.low:
        raise ValueError(f'low must be less or equal to high in uniform distribution '
                         f'(low={a.low}, high={a.high})')


def _check_normal(a):
    if not a.scale > 0:
        raise ValueError(f'scale parameter in gaussian has to be positive (scale={a.scale})')


def _check_gamma(a):
    if not (a.alpha > 0 and a.beta > 0):
        raise ValueError('alpha and beta parameters in gamma distribution have to be positive '
                         f'(alpha={a.alpha}, beta={a.beta})')


def _check_exponential(a):
    if not a.lam > 0:
        raise ValueError(f'lambda parameter in exponential distribution has to be positive '
                         f'(lam={a.lam})')


def _check_poisson(a):
    if not a.lam >= 0:
        raise ValueError(f'lambda parameter in poisson distribution has to be non-negative '
                         f'(lam={a.lam})')


def _check_negative_binomial(a):
    if a.k < 0:
        raise ValueError(f'k parameter in negative binomial distribution has to be '
                         f'non-negative (k={a.k})')
    if not 0 < a.p <= 1:    # MXNet returns garbage for p=0; numpy's convention is 0 < p <= 1
        raise ValueError(f'p parameter in negative binomial distribution has to be in (0, 1] '
                         f'(p={a.p})')


def _check_generalized_negative_binomial(a):
    if not (a.mu >= 0 and a.alpha >= 0):
        raise ValueError('mu and alpha parameters in generalized negative binomial distribution '
                         f'have to be non-negative (mu={a.mu}, alpha={a.alpha})')


# name: (scalar attributes of _random_X, input names of _sample_X, sampler, check, aliases of
#        _random_X, description)
_DISTRIBUTIONS = {
    'uniform': (dict(low=Float(0), high=Float(1)), ('low', 'high'), _uniform, _check_uniform,
                ('random_uniform', 'uniform'), 'the uniform distribution on [low, high)'),
    'normal': (dict(loc=Float(0), scale=Float(1)), ('mu', 'sigma'), _normal, _check_normal,
               ('normal', 'random_normal'), 'the normal distribution N(loc, scale^2)'),
    'gamma': (dict(alpha=Float(1), beta=Float(1)), ('alpha', 'beta'), _gamma, _check_gamma,
              ('random_gamma',), 'the gamma distribution of shape alpha and scale beta'),
    'exponential': (dict(lam=Float(1)), ('lam',), _exponential, _check_exponential,
                    ('random_exponential',), 'the exponential distribution of rate lam'),
    'poisson': (dict(lam=Float(1)), ('lam',), _poisson, _check_poisson, ('random_poisson',),
                'the Poisson distribution of mean lam'),
    'negative_binomial': (dict(k=Int(1), p=Float(1)), ('k', 'p'), _negative_binomial,
                          _check_negative_binomial, ('random_negative_binomial',),
                          'the negative binomial distribution (failures before k successes of '
                          'probability p)'),
    'generalized_negative_binomial': (
        dict(mu=Float(1), alpha=Float(1)), ('mu', 'alpha'), _generalized_negative_binomial,
        _check_generalized_negative_binomial, ('random_generalized_negative_binomial',),
        'the generalized negative binomial distribution of mean mu and dispersion alpha'),
}


def _random_shape(attrs):
    # MXNet's nd.random.* draw one value when no shape is given
    return (1,) if attrs.shape is None else tuple(attrs.shape)


def _float_output(attrs):
    return attrs.dtype or _F32


def _make_random(name, params, sampler, check, aliases, what):
    keys = tuple(params)

    def random_check(attrs):
        _check_dtype(attrs.dtype, _RANDOM_DTYPES)
        check(attrs)

    def compute(xp, attrs):
        return sampler(xp, rng.generator(xp), _random_shape(attrs), _float_output(attrs),
                       *[attrs[k] for k in keys])

    register_op(OpDef(
        f'_random_{name}', compute=compute, gradient=zero_gradient, random=True,
        attrs=dict(params, shape=Shape(None), dtype=DType(None), ctx=Ctx(None)),
        infer_shape=lambda attrs: ([], [_random_shape(attrs)]),
        infer_type=lambda attrs: ([], [_float_output(attrs)]),
        check=random_check, aliases=aliases, array_form=f'_sample_{name}',
        doc=f"""Samples of {what}, of ``shape`` ((1,) when not given) and ``dtype`` (default
        float32). ``nd.random.{name}`` calls ``_sample_{name}`` when the parameters are arrays.
        """))


def _like_type(attrs, data):
    if data is not None and data.kind != 'f':
        raise DTypeError(f'This operation only support floating point types, not {data.name}')
    return [data], [data]


def _make_random_like(name, params, sampler, check, what):
    keys = tuple(params)

    def compute(xp, attrs, data):
        return sampler(xp, rng.generator(xp), data.shape, data.dtype, *[attrs[k] for k in keys])

    register_op(OpDef(
        f'_random_{name}_like', compute=compute, gradient=zero_gradient, random=True,
        inputs=('data',), attrs=dict(params), infer_type=_like_type, check=check,
        hint=f'{name}_like', named_inputs=False,
        doc=f"""Samples of {what}, of the shape and (floating) dtype of ``data``, which gets no
        gradient."""))


def _make_sample(name, inputs, sampler, what):
    def infer_shape(attrs, *shapes):
        merged = None
        for n, s in zip(inputs, shapes):
            merged = merge_shape(merged, s, f'parameter {n} must have the shape of {inputs[0]}')
        out = None if merged is None else merged + tuple(attrs.shape)
        return [merged] * len(shapes), [out]

    def infer_type(attrs, *dtypes):
        known = {d for d in dtypes if d is not None}
        if len(known) > 1:
            raise DTypeError(f'parameters {", ".join(inputs)} must have one dtype, got '
                             f'{", ".join(sorted(d.name for d in known))}')
        merged = known.pop() if known else None
        return [merged] * len(dtypes), [_float_output(attrs)]

    def compute(xp, attrs, *params):
        extra = tuple(attrs.shape)
        size = params[0].shape + extra
        params = [p.astype(np.float64).reshape(p.shape + (1,) * len(extra)) for p in params]
        return sampler(xp, rng.generator(xp), size, _float_output(attrs), *params)

    register_op(OpDef(
        f'_sample_{name}', compute=compute, gradient=zero_gradient, random=True, inputs=inputs,
        attrs=dict(shape=Shape(()), dtype=DType(None)), infer_shape=infer_shape,
        infer_type=infer_type, check=lambda attrs: _check_dtype(attrs.dtype, _RANDOM_DTYPES),
        aliases=(f'sample_{name}',),
        doc=f"""Samples of {what} with parameters {", ".join(inputs)} (arrays of one shape P):
        output shape P + ``shape``, dtype ``dtype`` (default float32). The parameters get no
        gradient."""))


for _name, (_params, _inputs, _sampler, _check, _aliases, _what) in _DISTRIBUTIONS.items():
    _make_random(_name, _params, _sampler, _check, _aliases, _what)
    _make_random_like(_name, _params, _sampler, _check, _what)
    _make_sample(_name, _inputs, _sampler, _what)
del _name, _params, _inputs, _sampler, _check, _aliases, _what


def _randint_check(attrs):
    _check_dtype(attrs.dtype, ('None', 'int32', 'int64'))
    if not attrs.low < attrs.high:
        raise ValueError(f'low must be less than high in randint (low={attrs.low}, '
                         f'high={attrs.high})')


def _randint_dtype(attrs):
    return attrs.dtype or _INT32


@register('_random_randint', aliases=('random_randint',))
class _random_randint:
    """Integers drawn uniformly from ``[low, high)``, of ``shape`` ((1,) when not given) and
    ``dtype`` int32 (default) or int64."""
    attrs = dict(low=Int(), high=Int(), shape=Shape(None), dtype=DType(None), ctx=Ctx(None))
    check = _randint_check
    random = True
    gradient = zero_gradient

    def infer_shape(attrs):
        return [], [_random_shape(attrs)]

    def infer_type(attrs):
        return [], [_randint_dtype(attrs)]

    def compute(xp, attrs):
        shape = _random_shape(attrs)
        draw = rng.generator(xp).integers(attrs.low, attrs.high, shape, dtype=np.int64)
        return draw.astype(_randint_dtype(attrs))


# -------------------------------------------------------------------------------------------------
# Multinomial sampling and shuffling
# -------------------------------------------------------------------------------------------------

def _multinomial_shape(attrs, data):
    """Batch shape (all but the last axis of ``data``) + ``shape``; (1,) or ``shape`` for 1-d
    data."""
    if data is None:
        return None
    if len(data) == 1:
        return tuple(attrs.shape) or (1,)
    return tuple(data[:-1]) + tuple(attrs.shape)


def _rows(data, sample):
    """``data`` as (rows, K) and ``sample`` as (rows, draws) int64 indices."""
    k = data.shape[-1]
    rows = data.size // k if k else int(np.prod(data.shape[:-1]))
    return data.reshape(rows, k), sample.reshape(rows, -1).astype(np.int64)


@register('_sample_multinomial', aliases=('sample_multinomial',))
class _sample_multinomial:
    """Draws category indices from the distributions in the last axis of ``data`` (B..., K).

    Output shape B... + ``shape`` (``shape`` or (1,) for 1-d data), dtype ``dtype``. With
    ``get_prob`` a second output holds the log-probability of each draw (dtype of ``data``),
    whose gradient is ``1 / data`` at the drawn category (MXNet's ``_backward_sample_multinomial``).
    Rows should sum to 1; a draw past the total (rows that sum to less) gives the last category
    where MXNet gives the out-of-range index K.
    """
    inputs = ('data',)
    named_inputs = False
    attrs = dict(shape=Shape(()), get_prob=Bool(False), dtype=DType(_INT32))
    random = True

    def check(attrs):
        _check_dtype(attrs.dtype, ('float16', 'float32', 'float64', 'int32', 'uint8'))

    def num_outputs(attrs):
        return 2 if attrs.get_prob else 1

    def infer_shape(attrs, data):
        out = _multinomial_shape(attrs, data)
        return [data], [out] * (2 if attrs.get_prob else 1)

    def infer_type(attrs, data):
        return [data], [attrs.dtype] + ([data] if attrs.get_prob else [])

    def compute(xp, attrs, data):
        shape = _multinomial_shape(attrs, data.shape)
        k = data.shape[-1]
        table = data.reshape(-1, k).astype(np.float64)
        rows = table.shape[0]
        draws = int(np.prod(shape)) // rows if rows else 0
        cum = xp.cumsum(table, axis=1)
        u = rng.generator(xp).random((rows, draws))
        # one sorted search for every row: shift row r's table and queries by r * width
        low = min(float(cum.min()), 0.0) if cum.size else 0.0
        width = (max(float(cum.max()), 1.0) if cum.size else 1.0) - low + 1.0
        offset = xp.arange(rows, dtype=np.float64)[:, None] * width
        found = xp.searchsorted((cum - low + offset).ravel(), (u - low + offset).ravel())
        index = xp.minimum(found.reshape(rows, draws) - xp.arange(rows)[:, None] * k, k - 1)
        sample = index.reshape(shape).astype(attrs.dtype)
        if not attrs.get_prob:
            return sample
        with np.errstate(divide='ignore', invalid='ignore'):
            prob = xp.log(xp.take_along_axis(data.reshape(rows, k), index, axis=1))
        return sample, prob.reshape(shape)

    def gradient(F, attrs, inputs, outputs, ograds):
        if not attrs.get_prob or ograds[1] is None:
            return [None]
        return [F._backward_sample_multinomial(ograds[1], inputs[0], outputs[0])]


@register('_backward_sample_multinomial')
class _backward_sample_multinomial:
    """The gradient of the log-probabilities of ``_sample_multinomial``: ``ograd / data`` added
    at each drawn category. ``ograd`` and ``sample`` have the sample shape, the result the shape
    and dtype of ``data``."""
    inputs = ('ograd', 'data', 'sample')

    def infer_shape(attrs, ograd, data, sample):
        merged = merge_shape(ograd, sample, 'ograd must have the shape of sample')
        return [merged, data, merged], [data]

    def infer_type(attrs, ograd, data, sample):
        return [ograd, data, sample], [data]

    def compute(xp, attrs, ograd, data, sample):
        table, index = _rows(data, sample)
        rows, k = table.shape
        with np.errstate(divide='ignore', invalid='ignore'):
            weight = ograd.reshape(rows, -1) / xp.take_along_axis(table, index, axis=1)
        flat = (xp.arange(rows, dtype=np.int64)[:, None] * k + index).ravel()
        total = xp.bincount(flat, weights=weight.ravel().astype(np.float64), minlength=rows * k)
        return total.reshape(data.shape).astype(data.dtype)

    def gradient(F, attrs, inputs, outputs, ograds):
        ograd, data, sample = inputs
        head = ograds[0]
        if head is None:
            return [None, None, None]
        # written without dividing by data: categories never drawn may have probability 0
        pick = F._sample_multinomial_pick
        return [pick(head, sample) / pick(data, sample),
                -head * F._backward_sample_multinomial(ograd, data * data, sample), None]


@register('_sample_multinomial_pick')
class _sample_multinomial_pick:
    """``data[..., sample[..., j]]`` for each draw j: the entries of ``data`` (B..., K) at the
    categories ``sample`` (B..., S...) holds; the transpose of ``_backward_sample_multinomial``
    (used by its gradient). Output: the shape of ``sample``, the dtype of ``data``."""
    inputs = ('data', 'sample')

    def infer_shape(attrs, data, sample):
        return [data, sample], [sample]

    def infer_type(attrs, data, sample):
        return [data, sample], [data]

    def compute(xp, attrs, data, sample):
        table, index = _rows(data, sample)
        return xp.take_along_axis(table, index, axis=1).reshape(sample.shape)

    def gradient(F, attrs, inputs, outputs, ograds):
        data, sample = inputs
        if ograds[0] is None:
            return [None, None]
        return [F._backward_sample_multinomial(ograds[0], F.ones_like(data), sample), None]


def _no_gradient(name):
    def gradient(F, attrs, inputs, outputs, ograds, **_):
        raise MXNetError(f"Operator {name} is non-differentiable because it didn't register "
                         'FGradient attribute.')
    return gradient


@register('_shuffle', aliases=('shuffle',))
class _shuffle:
    """A random permutation of ``data`` along its first axis (same shape and dtype). Not
    differentiable, as in MXNet."""
    inputs = ('data',)
    named_inputs = False
    random = True
    gradient = _no_gradient('_shuffle')

    def compute(xp, attrs, data):
        if data.ndim == 0:
            return data.copy()
        order = xp.argsort(rng.generator(xp).random(data.shape[0]))
        return data[order]
