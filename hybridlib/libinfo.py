"""Versions: the MXNet release whose API hybridlib serves, and hybridlib's own.

``mx.__version__`` is ``'1.9.1'``, MXNet's, because code written for MXNet compares it with
MXNet's releases (GluonCV requires ``>= 1.4, < 2.0``). hybridlib's own version is
``hybridlib_version`` here (also ``importlib.metadata.version('hybridlib')``).

MXNet's ``find_lib_path`` and friends locate its shared library; hybridlib has none, so they
raise ``NotSupportedError``.
"""
from .base import NotSupportedError

__all__ = ['find_lib_path', 'find_include_path', 'find_conf_path']

__version__ = '1.9.1'
hybridlib_version = '0.1.0'


def _no_native_library(what):
    raise NotSupportedError(f'{what}: hybridlib is pure Python and has no native library, '
                            f'headers or build configuration')


def find_lib_path(prefix='libmxnet'):
    """MXNet's shared-library path; hybridlib has none (``NotSupportedError``)."""
    _no_native_library('find_lib_path')


def find_include_path():
    """MXNet's C++ header folder; hybridlib has none (``NotSupportedError``)."""
    _no_native_library('find_include_path')


def find_conf_path(prefix='tvmop'):
    """MXNet's build configuration; hybridlib has none (``NotSupportedError``)."""
    _no_native_library('find_conf_path')
