"""MXNet's ``mx.util``: environment variables, GPU queries, and the NumPy-interface switches.

MXNet 1.x has an optional NumPy-compatible interface (``mx.np``/``mx.npx``) that the switches
here turn on. hybridlib serves the classic ``mx.nd``/``mx.sym`` interface only, so
``is_np_array()`` and ``is_np_shape()`` are always False, which is what code written for
both interfaces checks; asking to turn the NumPy interface on raises ``NotSupportedError``.
"""
import functools
import os

import numpy as np

from .base import NotSupportedError
from .context import _import_cupy, gpu_memory_info, num_gpus

__all__ = ['get_gpu_count', 'get_gpu_memory', 'get_cuda_compute_capability', 'getenv', 'setenv',
           'set_module', 'is_np_array', 'is_np_shape', 'set_np_shape', 'np_shape', 'np_array',
           'use_np_shape', 'use_np_array', 'use_np', 'set_np', 'reset_np',
           'np_ufunc_legal_option', 'wrap_np_unary_func', 'wrap_np_binary_func']


def get_gpu_count():
    """The number of GPUs visible (0 without cupy or a driver)."""
    return num_gpus()


def get_gpu_memory(gpu_dev_id):
    """(free, total) bytes of memory on GPU ``gpu_dev_id``."""
    return gpu_memory_info(gpu_dev_id)


def get_cuda_compute_capability(ctx):
    """The CUDA compute capability of a gpu context as an int (70 for sm_70)."""
    if ctx.device_type != 'gpu':
        raise ValueError('Expecting a gpu context to get cuda compute capability, '
                         f'while received ctx {ctx}')
    return int(_import_cupy().cuda.Device(ctx.device_id).compute_capability)


def getenv(name):
    """The value of environment variable ``name``, or None."""
    return os.environ.get(name)


def setenv(name, value):
    """Set environment variable ``name`` (None removes it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def set_module(module):
    """Decorator that sets ``__module__`` of a function or class (for docs and pickling)."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


# -- the NumPy-interface switches: always off here ------------------------------------------------

def _numpy_interface(what):
    return NotSupportedError(
        f'{what}: MXNet\'s NumPy-compatible interface (mx.np, mx.npx) is not part of hybridlib; '
        f'use mx.nd and mx.sym, which follow numpy broadcasting and shapes already')


def is_np_array():
    """Whether the NumPy-compatible array interface is on: never in hybridlib."""
    return False


def is_np_shape():
    """Whether NumPy shape semantics are on: never in hybridlib."""
    return False


def set_np_shape(active):
    """Turn NumPy shape semantics off (a no-op) or on (``NotSupportedError``); returns the
    previous state, False."""
    if active:
        raise _numpy_interface('set_np_shape(True)')
    return False


def set_np(shape=True, array=True):
    """Turn the NumPy interface on: ``NotSupportedError`` unless both are False."""
    if shape or array:
        raise _numpy_interface('set_np()')


def reset_np():
    """Turn the NumPy interface off: it always is."""


class _Scope:
    def __init__(self, active, what):
        if active:
            raise _numpy_interface(what)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def np_shape(active=True):
    """A scope with NumPy shape semantics; only ``active=False`` is possible here."""
    return _Scope(active, 'np_shape()')


def np_array(active=True):
    """A scope with NumPy arrays; only ``active=False`` is possible here."""
    return _Scope(active, 'np_array()')


def _np_decorator(name):
    def decorator(func):
        raise _numpy_interface(f'@{name} on {getattr(func, "__qualname__", func)!r}')
    decorator.__name__ = name
    decorator.__doc__ = f'MXNet\'s ``@{name}`` decorator: raises ``NotSupportedError`` here.'
    return decorator


use_np_shape = _np_decorator('use_np_shape')
use_np_array = _np_decorator('use_np_array')
use_np = _np_decorator('use_np')


_UFUNC_DEFAULTS = {'where': True, 'casting': 'same_kind', 'order': 'K', 'dtype': None,
                   'subok': True}
_UFUNC_DTYPES = {'int8', 'uint8', 'int32', 'int64', 'float16', 'float32', 'float64'}


def np_ufunc_legal_option(key, value):
    """Whether ``key=value`` is a legal numpy ufunc keyword argument."""
    if key == 'where':
        return True
    if key == 'casting':
        return value in ('no', 'equiv', 'safe', 'same_kind', 'unsafe')
    if key == 'order':
        return isinstance(value, str)
    if key == 'dtype':
        try:
            return np.dtype(value).name in _UFUNC_DTYPES
        except TypeError:
            return False
    if key == 'subok':
        return isinstance(value, bool)
    return False


def _check_ufunc_kwargs(func, kwargs):
    for key, value in kwargs.items():
        if key not in _UFUNC_DEFAULTS:
            raise TypeError(f"{key} is an invalid keyword to function '{func.__name__}'")
        if value != _UFUNC_DEFAULTS[key]:
            if np_ufunc_legal_option(key, value):
                raise NotImplementedError(f'{key}={value} is not implemented yet for operator '
                                          f'{func.__name__}')
            raise TypeError(f'{key}={value} not understood for operator {func.__name__}')


def wrap_np_unary_func(func):
    """Wrap a unary ufunc-like function: numpy's keyword arguments are checked, as MXNet's."""
    @functools.wraps(func)
    def wrapped(x, out=None, **kwargs):
        _check_ufunc_kwargs(func, kwargs)
        return func(x, out=out)
    return wrapped


def wrap_np_binary_func(func):
    """Wrap a binary ufunc-like function: numpy's keyword arguments are checked, as MXNet's."""
    @functools.wraps(func)
    def wrapped(x1, x2, out=None, **kwargs):
        _check_ufunc_kwargs(func, kwargs)
        return func(x1, x2, out=out)
    return wrapped


