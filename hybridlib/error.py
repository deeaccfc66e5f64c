"""MXNet's error classes by name (``mx.error``), and ``register`` for new ones.

MXNet maps the error type named in a C++ message to a Python class; hybridlib raises its
errors directly, so the table serves code that registers or looks up classes by name.
"""
from .base import MXNetError, error_types, register_error as register

__all__ = ['MXNetError', 'InternalError', 'register']


@register
class InternalError(MXNetError):
    """An internal error of the library (a bug): please report it."""
