"""The context and dtype of test data, and the tolerances of comparisons per dtype."""
import numbers
import os

import numpy as np

from ..context import Context, current_context

__all__ = ['default_context', 'set_default_context', 'default_dtype', 'default_rtols',
           'default_atols', 'default_numeric_eps', 'effective_dtype', 'get_tolerance', 'get_tols',
           'get_atol', 'get_rtol', 'get_etol']


def default_context():
    """The context tests run on: the current context (``cpu(0)`` unless changed)."""
    return current_context()


def set_default_context(ctx):
    """Make ``ctx`` the current context of this thread (what ``default_context`` returns)."""
    Context._local.value = ctx


def default_dtype():
    """The dtype of test data: float32."""
    return np.float32


# MXNet's tables list these dtypes with tolerance 0: booleans and integers compare exactly
_EXACT_DTYPES = (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)


def _tolerance_table(float16, float32, float64):
    """``{np.dtype: tolerance}``: the given ones of the float dtypes, 0 for the exact ones."""
    table = {np.dtype(np.float16): float16, np.dtype(np.float32): float32,
             np.dtype(np.float64): float64}
    table.update((np.dtype(t), 0) for t in _EXACT_DTYPES)
    return table


def default_rtols():
    """The relative tolerance of comparisons, per dtype (``{np.dtype: float}``)."""
    return _tolerance_table(1e-2, 1e-4, 1e-5)


def default_atols():
    """The absolute tolerance of comparisons, per dtype (``{np.dtype: float}``)."""
    return _tolerance_table(1e-1, 1e-3, 1e-20)


def default_numeric_eps():
    """The finite-difference step of ``check_numeric_gradient``, per float dtype."""
    # powers of two: adding one to an input drops no bits
    return {np.dtype(np.float16): 1.0 / 2**6,
            np.dtype(np.float32): 1.0 / 2**9,
            np.dtype(np.float64): 1.0 / 2**14}


def _tf32_enabled(ctx):
    """Whether float32 matrix products on ``ctx`` run in TF32 (an Ampere or later GPU with
    cupy's TF32 mode, ``CUPY_TF32=1``, not overridden by ``NVIDIA_TF32_OVERRIDE=0``)."""
    if not isinstance(ctx, Context) or ctx.device_type != 'gpu':
        return False
    if os.environ.get('CUPY_TF32') != '1' or os.environ.get('NVIDIA_TF32_OVERRIDE') == '0':
        return False
    try:
        capability = ctx.array_module.cuda.Device(ctx.device_id).compute_capability
        return int(capability) >= 80
    except Exception:  # noqa: BLE001 (no usable device: no TF32)
        return False


def effective_dtype(dat):
    """The dtype whose tolerances apply to ``dat`` (an array with a ``dtype``).

    float32 results of TF32 matrix products have about float16's precision, so float16 is the
    effective dtype of float32 data on a GPU that computes in TF32.
    """
    dtype = np.dtype(dat.dtype)
    if dtype == np.float32 and _tf32_enabled(getattr(dat, 'ctx', None)):
        return np.dtype(np.float16)
    return dtype


def get_tolerance(dat, tol, default_tol):
    """The tolerance for comparing ``dat``: ``tol`` when it is a number, else the entry of the
    dict ``tol`` (or of ``default_tol``) for the effective dtype of ``dat``."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    if dtype in tol:
        return tol[dtype]
    if dtype in default_tol:
        return default_tol[dtype]
    if dtype.kind in 'biu':     # integer types missing from MXNet's tables compare exactly
        return 0
    raise KeyError('no default tolerance for dtype %s; pass rtol/atol explicitly' % dtype.name)


def _with_dtype(x):
    if hasattr(x, 'dtype'):
        return x
    return np.asarray(x)


def get_tols(x, y, rtol, atol):
    """The (rtol, atol) for comparing ``x`` and ``y``: the larger default of their dtypes
    unless given (as numbers, or dicts of dtype -> tolerance)."""
    x, y = _with_dtype(x), _with_dtype(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol``, or the default absolute tolerance of ``dtype`` when it is None."""
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """``rtol``, or the default relative tolerance of ``dtype`` when it is None."""
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_etol(etol=None):
    """``etol`` (the fraction of elements allowed to differ), 0 when None."""
    return 0 if etol is None else etol
