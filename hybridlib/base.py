"""Errors and dtype tables shared by every layer of hybridlib.

MXNet raises ``MXNetError`` (a ``RuntimeError``) for everything that its C++ core checks.
hybridlib keeps that base class so ``except mx.MXNetError`` keeps working, and adds subclasses
that are also the natural Python error (``ValueError``, ``TypeError``), so code written for
either style catches them.

The rest are the small helpers that MXNet's ``base`` module offers and code written against
MXNet imports from it (``py_str``, ``classproperty``, ``NotImplementedForSymbol``,
``data_dir``, ...).
"""
import ctypes
import inspect
import os
import re
import sys

import numpy as np

__all__ = ['MXNetError', 'ShapeError', 'DTypeError', 'AttributeParseError', 'NotSupportedError',
           'MXNetAssertionError', 'NotImplementedForSymbol', 'NotSupportedForSparseNDArray',
           'error_types', 'register_error', 'check_stype', 'py_str', 'classproperty',
           'with_metaclass', 'build_param_doc', 'add_fileline_to_docstring', 'data_dir',
           'data_dir_default',
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


class _UnavailableFunction(MXNetError):
    """A function called with arguments it has no form for; ``where`` says what it takes."""
    where = ''

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = function.__name__
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = f'Function {self.function}'
        if self.alias:
            msg += f' (namely operator "{self.alias}")'
        if self.args:
            msg += f' with arguments ({", ".join(self.args)})'
        return f'{msg} {self.where}'


class NotImplementedForSymbol(_UnavailableFunction):
    """A function that works on NDArrays only, called with Symbols (as MXNet's)."""
    where = 'is not implemented for Symbol and only available in NDArray.'


class NotSupportedForSparseNDArray(_UnavailableFunction):
    """A function that has no sparse form, called on sparse storage (as MXNet's)."""
    where = 'is not supported for SparseNDArray and only available in NDArray.'


# error classes by name (mx.error.register adds to it)
error_types = {'MXNetError': MXNetError}


def register_error(func_name=None, cls=None):
    """Register an error class under a name (its own by default); usable as a decorator."""
    if callable(func_name):
        cls, func_name = func_name, func_name.__name__

    def register(mycls):
        error_types[func_name if isinstance(func_name, str) else mycls.__name__] = mycls
        return mycls
    return register if cls is None else register(cls)


def check_stype(stype, where):
    """Accept MXNet's dense storage type (``None`` or ``'default'``); the sparse ones
    (``'row_sparse'``, ``'csr'``) raise ``NotSupportedError`` naming ``where``."""
    if stype in (None, 'default'):
        return
    if stype in ('row_sparse', 'csr'):
        raise NotSupportedError(f"{where}: sparse storage (stype='{stype}') is not supported by "
                                "hybridlib; arrays are dense (stype='default')")
    raise ValueError(f"{where}: unknown storage type {stype!r}; MXNet's are 'default', "
                     "'row_sparse' and 'csr'")


def py_str(x):
    """bytes from a C API as str (MXNet's ``py_str``)."""
    return x.decode('utf-8') if isinstance(x, bytes) else x


class classproperty:
    """A read-only property of the class (``@classproperty def name(cls): ...``)."""

    def __init__(self, func):
        self.func = func

    def __get__(self, obj, owner):
        return self.func(owner)


def with_metaclass(meta, *bases):
    """A base class with metaclass ``meta`` (the idiom MXNet kept from Python 2)."""
    class _Meta(type):
        def __new__(cls, name, this_bases, namespace):
            return meta(name, bases, namespace)
    return type.__new__(_Meta, 'temporary_class', (), {})


def build_param_doc(arg_names, arg_types, arg_descs, remove_dup=True):
    """A numpy-style ``Parameters`` section from names, types and descriptions."""
    seen, lines = set(), []
    for key, type_info, desc in zip(arg_names, arg_types, arg_descs):
        if (key in seen and remove_dup) or key == 'num_args':
            continue
        seen.add(key)
        lines.append(f'{key} : {type_info}' + (f'\n    {desc}' if desc else ''))
    return 'Parameters\n----------\n' + '\n'.join(lines) + '\n'


def add_fileline_to_docstring(module, incursive=True):
    """Append ``From:file:line`` to the docstring of each function (and class method) of
    ``module``, a module or its name."""
    def add(obj):
        if obj.__doc__ is None or 'From:' in obj.__doc__:
            return
        try:
            fname = inspect.getsourcefile(obj)
            line = inspect.getsourcelines(obj)[-1]
        except (OSError, TypeError):
            return
        if fname is not None:
            obj.__doc__ += f'\n\nFrom:{fname}:{line}'

    if isinstance(module, str):
        module = sys.modules[module]
    for _, obj in inspect.getmembers(module):
        if inspect.isfunction(obj):
            add(obj)
        elif inspect.ismethod(obj):
            add(obj.__func__)
        elif inspect.isclass(obj) and incursive:
            add_fileline_to_docstring(obj, False)


# the handle types of MXNet's C API, which code written for MXNet imports from here
NDArrayHandle = SymbolHandle = ExecutorHandle = CachedOpHandle = KVStoreHandle = ctypes.c_void_p
RecordIOHandle = DataIterHandle = DataIterCreatorHandle = OpHandle = ctypes.c_void_p

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


_DTYPE_SPELLING = re.compile(r'[<>=|]?[A-Za-z_?][A-Za-z0-9_]{0,15}')


def np_dtype(dtype):
    """Normalise anything that names a dtype ('float32', np.float32, np.dtype) to np.dtype.

    ``None`` stays ``None`` (unknown). Raises DTypeError for what numpy cannot read or MXNet
    cannot hold.
    """
    if dtype is None or isinstance(dtype, np.dtype) and dtype in DTYPE_FLAGS:
        return dtype
    if isinstance(dtype, str) and not _DTYPE_SPELLING.fullmatch(dtype):
        # numpy reads structured spellings ('(2,3)f4', '9999i4') with Python's own parser
        raise DTypeError(f'{dtype[:40]!r} is not a data type name')
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError, SyntaxError) as err:
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


def data_dir_default():
    """MXNet's default data folder: ``~/.mxnet``, or ``%APPDATA%/mxnet`` on Windows."""
    if os.name == 'nt':
        return os.path.join(os.environ.get('APPDATA', os.path.expanduser('~')), 'mxnet')
    return os.path.join(os.path.expanduser('~'), '.mxnet')


def data_dir():
    """The folder where downloaded models and data sets are kept: ``$MXNET_HOME``, or
    ``data_dir_default()`` when that is not set."""
    return os.getenv('MXNET_HOME', data_dir_default())
