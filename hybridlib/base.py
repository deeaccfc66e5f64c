"""Errors and dtype tables shared by every layer of hybridlib.

MXNet raises ``MXNetError`` (a ``RuntimeError``) for everything that its C++ core checks.
hybridlib keeps that base class so ``except mx.MXNetError`` keeps working, and adds subclasses
that are also the natural Python error (``ValueError``, ``TypeError``), so code written for
either style catches them.
"""
import numpy as np

__all__ = ['MXNetError', 'ShapeError', 'DTypeError', 'AttributeParseError', 'NotSupportedError',
           'MXNetAssertionError',
           'np_dtype', 'dtype_name', 'dtype_to_flag', 'flag_to_dtype', 'DTYPE_FLAGS',
           'integer_types', 'numeric_types', 'string_types', 'DEFAULT_DTYPE']


class MXNetError(RuntimeError):
    """The base error of hybridlib, as ``mxnet.base.MXNetError``."""


class ShapeError(MXNetError, ValueError):
    """Shapes that an operator cannot accept, or that disagree across a graph."""


class DTypeError(MXNetError, TypeError):
    """Data types that an operator cannot accept, or that disagree across a graph."""


class AttributeParseError(MXNetError, ValueError):
    """An operator attribute that is unknown, missing or not of its type."""


class MXNetAssertionError(MXNetError, AssertionError):
    """A check that MXNet makes with ``assert``: ``except AssertionError`` (code written for
    MXNet) and ``except MXNetError`` both catch it, and it has a message where MXNet's often
    has none."""


class NotSupportedError(MXNetError, NotImplementedError):
    """A feature of MXNet that hybridlib does not provide (says what to use instead)."""


integer_types = (int, np.integer)
numeric_types = (float, int, np.generic)
string_types = (str,)

DEFAULT_DTYPE = np.dtype(np.float32)

# MXNet's type flags, as written in .params files and in the ``__dtype__`` attribute.
DTYPE_FLAGS = {
    np.dtype(np.float32): 0,
    np.dtype(np.float64): 1,
    np.dtype(np.float16): 2,
    np.dtype(np.uint8): 3,
    np.dtype(np.int32): 4,
    np.dtype(np.int8): 5,
    np.dtype(np.int64): 6,
    np.dtype(np.bool_): 7,
}
_FLAG_TO_DTYPE = {flag: dt for dt, flag in DTYPE_FLAGS.items()}


def np_dtype(dtype):
    """Normalise anything that names a dtype ('float32', np.float32, np.dtype) to np.dtype.

    ``None`` stays ``None`` (unknown). Raises DTypeError for what numpy cannot read or MXNet
    cannot hold.
    """
    if dtype is None or isinstance(dtype, np.dtype) and dtype in DTYPE_FLAGS:
        return dtype
    try:
        dt = np.dtype(dtype)
    except TypeError as err:
        raise DTypeError(f'{dtype!r} is not a data type: {err}') from None
    if dt not in DTYPE_FLAGS:
        names = ', '.join(sorted(d.name for d in DTYPE_FLAGS))
        raise DTypeError(f'data type {dt.name} is not supported; use one of {names}')
    return dt


def dtype_name(dtype):
    """'float32' for any spelling of float32; None for None."""
    return None if dtype is None else np_dtype(dtype).name


def dtype_to_flag(dtype):
    """MXNet's integer type flag of a dtype."""
    return DTYPE_FLAGS[np_dtype(dtype)]


def flag_to_dtype(flag):
    """The dtype of one of MXNet's integer type flags."""
    try:
        return _FLAG_TO_DTYPE[int(flag)]
    except (KeyError, ValueError):
        known = ', '.join(f'{f} ({d.name})' for f, d in sorted(_FLAG_TO_DTYPE.items()))
        raise DTypeError(f'unknown MXNet type flag {flag!r}; known flags: {known}') from None
