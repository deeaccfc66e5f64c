"""Special functions that numpy lacks: erf, erfinv, gamma, gammaln, digamma.

On a GPU they come from ``cupyx.scipy.special``; on the CPU from scipy when it is installed,
otherwise from Python's ``math`` module element by element (exact, slower) or from the
vectorised series below. All take and return arrays of ``xp``.
"""
import math

import numpy as np

try:                                   # optional: faster, same values
    from scipy import special as _scipy_special
except ImportError:                    # pragma: no cover - depends on the environment
    _scipy_special = None

__all__ = ['erf', 'erfinv', 'gamma', 'gammaln', 'digamma']


def _gpu_special(xp):
    if xp is np:
        return None
    from cupyx.scipy import special
    return special


def _elementwise(fn, x):
    out = np.frompyfunc(fn, 1, 1)(x.astype(np.float64))
    return np.asarray(out, dtype=np.float64)


def _safe(fn):
    def wrapped(v):
        try:
            return fn(v)
        except (ValueError, OverflowError):
            return math.inf if v > 0 else math.nan
    return wrapped


def _special(name, xp, x, fallback):
    """``cupyx.scipy.special.<name>`` on a GPU, scipy's when installed, else ``fallback(x)``."""
    gpu = _gpu_special(xp)
    if gpu is not None:
        return getattr(gpu, name)(x)
    if _scipy_special is not None:
        return getattr(_scipy_special, name)(x)
    return fallback(x)


def erf(xp, x):
    return _special('erf', xp, x, lambda v: _elementwise(math.erf, v))


def erfinv(xp, x):
    return _special('erfinv', xp, x, _erfinv_newton)


def _erfinv_newton(x):
    # Giles' single-precision approximation, then two Newton steps on math.erf
    x64 = np.asarray(x, dtype=np.float64)
    w = -np.log(np.maximum((1.0 - x64) * (1.0 + x64), 1e-300))
    small = w < 5.0
    ws = w - 2.5
    p_small = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p_small = c + p_small * ws
    wl = np.sqrt(np.maximum(w, 0)) - 3.0
    p_large = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p_large = c + p_large * wl
    y = np.where(small, p_small, p_large) * x64
    erf_v = np.frompyfunc(math.erf, 1, 1)
    for _ in range(2):
        err = np.asarray(erf_v(y), dtype=np.float64) - x64
        y = y - err / (2.0 / math.sqrt(math.pi) * np.exp(-y * y))
    y = np.where(np.abs(x64) == 1, np.copysign(np.inf, x64), y)
    return np.where(np.abs(x64) > 1, np.nan, y)


def gamma(xp, x):
    return _special('gamma', xp, x, lambda v: _elementwise(_safe(math.gamma), v))


def gammaln(xp, x):
    return _special('gammaln', xp, x, lambda v: _elementwise(_safe(math.lgamma), v))


def digamma(xp, x):
    return _special('digamma', xp, x, _digamma_series)


def _digamma_series(x):
    """psi(x) by recurrence up to x >= 6 and the asymptotic series (|error| < 1e-12)."""
    x = np.asarray(x, dtype=np.float64)
    reflect = x < 0.5
    # psi(1 - x) - pi / tan(pi x) for the left half-line
    z = np.where(reflect, 1.0 - x, x)
    acc = np.zeros_like(z)
    for _ in range(6):
        low = z < 6.0
        acc = acc - np.where(low, 1.0 / np.where(low, z, 1.0), 0.0)
        z = np.where(low, z + 1.0, z)
    inv = 1.0 / z
    inv2 = inv * inv
    series = np.log(z) - 0.5 * inv - inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (
        1.0 / 252 - inv2 * (1.0 / 240 - inv2 * (1.0 / 132)))))
    psi = acc + series
    with np.errstate(divide='ignore', invalid='ignore'):
        psi = np.where(reflect, psi - np.pi / np.tan(np.pi * x), psi)
    return psi
