"""The ``mxnet`` alias: unmodified MXNet code, and the libraries built on it, run on hybridlib.

``install_mxnet_alias()`` puts a finder at the front of ``sys.meta_path`` that answers every
``import mxnet``, ``import mxnet.X.Y`` and ``from mxnet.X import Y`` with hybridlib's module of
the same path (``layout.py`` gives MXNet's paths their modules). The modules are shared, not
copied: ``mxnet.gluon.nn is hybridlib.gluon.nn``, so a class defined against one is the class of
the other, and third-party packages that ``import mxnet`` in their own files get hybridlib too.
Nothing changes until the alias is asked for, and a real MXNet installed beside hybridlib is
left alone unless it is shadowed this way. ``python -m hybridlib SCRIPT.py`` runs a script with
the alias installed (``__main__.py``).

MXNet 1.9.1 needs numpy < 1.24, so the code written for it uses numpy names that numpy 2 has
removed (``np.float``, ``np.Inf``, ``np.float_``: GluonCV's anchors and COCO metric, for
example). The alias also gives those names back, as the objects numpy 1.x had under them,
unless ``numpy_compat=False``; names numpy 2 still has are never touched.
"""
import importlib
import sys

import numpy as np

from .layout import AliasFinder

__all__ = ['install_mxnet_alias', 'uninstall_mxnet_alias', 'mxnet_alias_installed']

ALIAS = 'mxnet'
_PACKAGE = __name__.rpartition('.')[0]          # 'hybridlib'


def _target(fullname):
    """``mxnet[.X...]`` -> ``hybridlib[.X...]``; None for other names."""
    if fullname == ALIAS or fullname.startswith(ALIAS + '.'):
        return _PACKAGE + fullname[len(ALIAS):]
    return None


_FINDER = AliasFinder(_target)

# numpy 1.x names removed by numpy 1.24 and 2.0, with what they were
NUMPY1_NAMES = {
    'float': float, 'int': int, 'object': object, 'str': str, 'complex': complex,
    'unicode': str, 'Inf': np.inf, 'Infinity': np.inf, 'infty': np.inf, 'NaN': np.nan,
    'NAN': np.nan, 'PINF': np.inf, 'NINF': -np.inf, 'PZERO': 0.0, 'NZERO': -0.0,
    'float_': np.float64, 'complex_': np.complex128, 'int0': np.intp, 'uint0': np.uintp,
    'bool8': np.bool_, 'object0': np.object_, 'str0': np.str_, 'bytes0': np.bytes_,
    'void0': np.void, 'string_': np.bytes_, 'unicode_': np.str_, 'cfloat': np.complex128,
    'singlecomplex': np.complex64, 'longfloat': np.longdouble, 'clongfloat': np.clongdouble,
    'longcomplex': np.clongdouble, 'round_': np.round, 'product': np.prod,
    'cumproduct': np.cumprod, 'sometrue': np.any, 'alltrue': np.all,
}


def _restore_numpy1_names():
    for name, value in NUMPY1_NAMES.items():
        if name not in vars(np):        # vars(): hasattr would ask numpy's __getattr__
            setattr(np, name, value)


def _alias_of(name):
    if name == _PACKAGE or name.startswith(_PACKAGE + '.'):
        return ALIAS + name[len(_PACKAGE):]
    return None


def mxnet_alias_installed():
    """True when ``import mxnet`` gives hybridlib."""
    return _FINDER in sys.meta_path


def install_mxnet_alias(numpy_compat=True):
    """Make ``import mxnet`` (and every ``mxnet.X.Y``) give hybridlib's modules from now on,
    and (``numpy_compat``) give numpy back the 1.x names that MXNet-era code uses.

    Raises RuntimeError if another ``mxnet`` was imported already: two MXNets in one process
    would mix their arrays silently.
    """
    loaded = sys.modules.get(ALIAS)
    package = importlib.import_module(_PACKAGE)
    if loaded is not None and loaded is not package:
        raise RuntimeError(
            f'install_mxnet_alias(): a real MXNet ({getattr(loaded, "__file__", loaded)}) is '
            f'already imported in this process; install the alias before anything imports mxnet')
    if not mxnet_alias_installed():
        sys.meta_path.insert(0, _FINDER)
    if numpy_compat:
        _restore_numpy1_names()
    # what is loaded already is named at once; what loads later, the finder answers
    for key, module in list(sys.modules.items()):
        alias = _alias_of(key)
        if module is not None and alias is not None:
            sys.modules.setdefault(alias, module)
    return package


def uninstall_mxnet_alias():
    """Undo ``install_mxnet_alias``: ``mxnet`` names nothing of hybridlib's any more."""
    if mxnet_alias_installed():
        sys.meta_path.remove(_FINDER)
    for key in [k for k in sys.modules if k == ALIAS or k.startswith(ALIAS + '.')]:
        module = sys.modules[key]
        if module is not None and getattr(module, '__name__', '').startswith(_PACKAGE):
            del sys.modules[key]
