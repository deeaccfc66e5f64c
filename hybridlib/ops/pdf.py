"""Densities of the random distributions: ``_random_pdf_X`` (``nd.random.pdf_X``, top-level
``random_pdf_X``), the probability density (or mass) of ``sample`` under distributions whose
parameters are arrays, or its logarithm with ``is_log=True``.

The parameters (all of one shape P) are the leftmost subshape of ``sample``: ``sample`` is
P + S, each parameter value describing the S samples under it, and the output has the shape of
``sample``. Dirichlet's parameter ``alpha`` is P + (k,) and its samples P + S + (k,) give P + S
(a single sample (k,) gives (1,)).

The formulas are MXNet's (``pdf_op.h``): gamma's ``beta`` is a rate, the negative binomial's
``p`` is the success probability of ``k`` successes, the generalised negative binomial is the
negative binomial with k = 1 / alpha and p = 1 / (1 + alpha mu); the uniform density is
1 / (high - low) whatever the sample. Values are computed in float64 and returned in the
sample's dtype.

Gradients reach the parameters and, for continuous distributions, the samples; samples of the
discrete ones (and of the uniform, whose density does not depend on them) get none, as in
MXNet. They are written as the derivative of the log-density times the head gradient (times the
density without ``is_log``), in registered operators.
"""
import numpy as np

from ..base import DTypeError, ShapeError
from . import special
from .attrs import Bool
from .registry import OpDef, merge_shape, register_op, same_dtype

__all__ = []

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


# -------------------------------------------------------------------------------------------------
# Log-densities (xp, float64 arrays, parameters broadcast against the sample) and their
# derivatives (F: d/dsample or None, then d/dparameter for each parameter)
# -------------------------------------------------------------------------------------------------

def _uniform(xp, x, low, high):
    return xp.broadcast_to(-xp.log(high - low), x.shape)


def _uniform_grads(F, x, low, high):
    inv = F.reciprocal(F.elemwise_sub(high, low))
    return None, inv, F.negative(inv)


def _normal(xp, x, mu, sigma):
    return -0.5 * ((x - mu) / sigma) ** 2 - xp.log(sigma) - _LOG_SQRT_2PI


def _normal_grads(F, x, mu, sigma):
    d = F.broadcast_sub(x, mu)
    var = F.square(sigma)
    return (F.negative(F.broadcast_div(d, var)), F.broadcast_div(d, var),
            F.broadcast_div(F.broadcast_sub(F.square(d), var), F.elemwise_mul(var, sigma)))


def _gamma(xp, x, alpha, beta):
    return (alpha * xp.log(beta) + (alpha - 1) * xp.log(x) - beta * x -
            special.gammaln(xp, alpha))


def _gamma_grads(F, x, alpha, beta):
    return (F.broadcast_sub(F.broadcast_div(F._minus_scalar(alpha, scalar=1.0), x), beta),
            F.broadcast_sub(F.broadcast_add(F.log(x), F.log(beta)), F._digamma(alpha)),
            F.broadcast_sub(F.elemwise_div(alpha, beta), x))


def _exponential(xp, x, lam):
    return xp.log(lam) - lam * x


def _exponential_grads(F, x, lam):
    return (F.broadcast_mul(F.negative(lam), F.ones_like(x)),
            F.broadcast_sub(F.reciprocal(lam), x))


def _poisson(xp, x, lam):
    return x * xp.log(lam) - special.gammaln(xp, x + 1) - lam


def _poisson_grads(F, x, lam):
    return None, F._minus_scalar(F.broadcast_div(x, lam), scalar=1.0)


def _negative_binomial(xp, x, k, p):
    return (special.gammaln(xp, x + k) - special.gammaln(xp, x + 1) - special.gammaln(xp, k) +
            k * xp.log(p) + x * xp.log1p(-p))


def _negative_binomial_grads(F, x, k, p):
    dk = F.broadcast_add(F.broadcast_sub(F._digamma(F.broadcast_add(x, k)), F._digamma(k)),
                         F.log(p))
    dp = F.broadcast_sub(F.elemwise_div(k, p),
                         F.broadcast_div(x, F._rminus_scalar(p, scalar=1.0)))
    return None, dk, dp


def _generalized_negative_binomial(xp, x, mu, alpha):
    return _negative_binomial(xp, x, 1.0 / alpha, 1.0 / (mu * alpha + 1.0))


def _generalized_negative_binomial_grads(F, x, mu, alpha):
    # through k = 1 / alpha, p = 1 / (1 + alpha mu): dp/dmu = -alpha p^2, dp/dalpha = -mu p^2
    k = F.reciprocal(alpha)
    p = F.reciprocal(F._plus_scalar(F.elemwise_mul(mu, alpha), scalar=1.0))
    _, dk, dp = _negative_binomial_grads(F, x, k, p)
    p2 = F.square(p)
    dmu = F.broadcast_mul(dp, F.negative(F.elemwise_mul(alpha, p2)))
    dalpha = F.elemwise_sub(F.broadcast_mul(dk, F.negative(F.square(k))),
                            F.broadcast_mul(dp, F.elemwise_mul(mu, p2)))
    return None, dmu, dalpha


def _dirichlet(xp, x, alpha):
    return ((alpha - 1) * xp.log(x)).sum(axis=-1) + special.gammaln(xp, alpha.sum(axis=-1)) - \
        special.gammaln(xp, alpha).sum(axis=-1)


def _dirichlet_grads(F, x, alpha):
    total = F._digamma(F.sum(alpha, axis=-1, keepdims=True))
    return (F.broadcast_div(F._minus_scalar(alpha, scalar=1.0), x),
            F.broadcast_add(F.log(x), F.broadcast_sub(total, F._digamma(alpha))))


# name: (parameter names, log-density, derivatives, what)
_DISTRIBUTIONS = {
    'uniform': (('low', 'high'), _uniform, _uniform_grads,
                'uniform distributions on [low, high)'),
    'normal': (('mu', 'sigma'), _normal, _normal_grads,
               'normal distributions of mean mu and standard deviation sigma'),
    'gamma': (('alpha', 'beta'), _gamma, _gamma_grads,
              'gamma distributions of shape alpha and rate beta'),
    'exponential': (('lam',), _exponential, _exponential_grads,
                    'exponential distributions of rate lam'),
    'poisson': (('lam',), _poisson, _poisson_grads, 'Poisson distributions of mean lam'),
    'negative_binomial': (('k', 'p'), _negative_binomial, _negative_binomial_grads,
                          'negative binomial distributions (failures before k successes of '
                          'probability p)'),
    'generalized_negative_binomial': (
        ('mu', 'alpha'), _generalized_negative_binomial, _generalized_negative_binomial_grads,
        'generalized negative binomial distributions of mean mu and dispersion alpha'),
    'dirichlet': (('alpha',), _dirichlet, _dirichlet_grads,
                  'Dirichlet distributions of concentration alpha'),
}


# -------------------------------------------------------------------------------------------------
# The operators
# -------------------------------------------------------------------------------------------------

def _spread(param, ndim, vector):
    """``param`` (P or P + (k,)) with axes of size 1 inserted to broadcast against a sample of
    rank ``ndim`` (P + S, or P + S + (k,))."""
    extra = ndim - param.ndim
    if vector:
        return param.reshape(param.shape[:-1] + (1,) * extra + param.shape[-1:])
    return param.reshape(param.shape + (1,) * extra)


def _make_compute(logpdf, vector):
    def compute(xp, attrs, sample, *params):
        x = sample.astype(np.float64)
        spread = [_spread(p.astype(np.float64), sample.ndim, vector) for p in params]
        with np.errstate(divide='ignore', invalid='ignore'):
            out = logpdf(xp, x, *spread)
            out = out if attrs.is_log else xp.exp(out)
        if vector and sample.ndim == 1:
            out = out.reshape(1)
        return xp.ascontiguousarray(out, dtype=sample.dtype)
    return compute


def _make_infer_shape(names, vector):
    def infer_shape(attrs, sample, *params):
        merged = None
        for name, p in zip(names, params):
            merged = merge_shape(merged, p, f'the parameters ({", ".join(names)}) must have one '
                                 f'shape; {name} has {p}')
        if merged is not None and sample is not None:
            if len(merged) > len(sample):
                raise ShapeError(f'the samples {tuple(sample)} have fewer dimensions than the '
                                 f'parameters {tuple(merged)}')
            n = len(merged)
            if vector:
                prefix = merge_shape(merged, tuple(sample[:n - 1]) + (sample[-1],),
                                     'the parameters must be the leading subshape of the '
                                     'samples (and their last axis the samples\' last one)')
                sample = prefix[:-1] + tuple(sample[n - 1:-1]) + prefix[-1:]
            else:
                prefix = merge_shape(merged, sample[:n], 'the parameters must be the leading '
                                     'subshape of the samples')
                sample = prefix + tuple(sample[n:])
            merged = prefix
        out = None
        if sample is not None:
            out = ((1,) if len(sample) == 1 else tuple(sample[:-1])) if vector else tuple(sample)
        return [None if sample is None else tuple(sample)] + [merged] * len(params), [out]
    return infer_shape


def _pdf_type(attrs, *dtypes):
    ins, outs = same_dtype(attrs, *dtypes)
    if outs[0] is not None and outs[0].kind != 'f':
        raise DTypeError(f'This operation only support floating point types, not '
                         f'{outs[0].name}')
    return ins, outs


def _make_gradient(derivatives, vector):
    def gradient(F, attrs, inputs, outputs, ograds):
        sample, params = inputs[0], inputs[1:]
        extra = sample.ndim - params[0].ndim
        scale = ograds[0] if attrs.is_log else F.elemwise_mul(ograds[0], outputs[0])
        # the parameters get the sample axes (before the vector axis of a Dirichlet's)
        spread = list(params)
        for _ in range(extra):
            spread = [F.expand_dims(p, axis=-2 if vector else -1) for p in spread]
        if vector and sample.ndim > 1:
            # the density is one value per vector sample: broadcast it over the vector axis
            scale = F.expand_dims(scale, axis=-1)
        axes = tuple(range(-extra - 1, -1)) if vector else tuple(range(-extra, 0))
        dsample, *dparams = derivatives(F, sample, *spread)
        grads = [None if dsample is None else F.broadcast_mul(scale, dsample)]
        for d in dparams:
            g = F.broadcast_mul(scale, d)
            grads.append(F.sum(g, axis=axes) if axes else g)
        return grads
    return gradient


def _register(name, params, logpdf, derivatives, what):
    vector = name == 'dirichlet'
    shape_doc = ('alpha P + (k,), sample P + S + (k,) -> P + S' if vector else
                 'parameters P, sample P + S -> P + S')
    register_op(OpDef(
        f'_random_pdf_{name}', inputs=('sample',) + params,
        attrs=dict(is_log=Bool(False, 'give the log-density instead of the density')),
        compute=_make_compute(logpdf, vector), gradient=_make_gradient(derivatives, vector),
        infer_shape=_make_infer_shape(params, vector), infer_type=_pdf_type,
        aliases=(f'random_pdf_{name}',), hint=f'random_pdf_{name}',
        doc=f"""The density of ``sample`` under {what} (its log with ``is_log``): {shape_doc}.
        """))


for _name, (_params, _logpdf, _derivatives, _what) in _DISTRIBUTIONS.items():
    _register(_name, _params, _logpdf, _derivatives, _what)
del _name, _params, _logpdf, _derivatives, _what
