"""The ``mxnet`` alias: unmodified MXNet code, and the libraries built on it, run on hybridlib.

``install_mxnet_alias()`` puts a finder at the front of ``sys.meta_path`` that answers every
``import mxnet``, ``import mxnet.X.Y`` and ``from mxnet.X import Y`` with hybridlib's module of
the same path (``layout.py`` gives MXNet's paths their modules). The modules are shared, not
copied: ``mxnet.gluon.nn is hybridlib.gluon.nn``, so a class defined against one is the class of
the other, and third-party packages that ``import mxnet`` in their own files get hybridlib too.
Nothing changes until the alias is asked for, and a real MXNet installed beside hybridlib is
left alone unless it is shadowed this way. ``python -m hybridlib SCRIPT.py`` runs a script with
the alias installed (``__main__.py``).

The alias also serves ``import horovod.mxnet as hvd`` with ``hybridlib.horovod`` while the real
Horovod is not installed, so that Horovod-era scripts run unchanged on hybridlib's workers.

MXNet 1.9.1 needs numpy < 1.24, and code written for it relies on numpy 1.x: names numpy 2 has
removed (``np.float``, ``np.Inf``: GluonCV's anchors and COCO metric) and one-element arrays as
numbers (``'loss %f' % l.mean().asnumpy()``, in Dive into Deep Learning). The alias turns that
back on (``numpy_compat.py``) unless ``numpy_compat=False``.
"""
import importlib
import importlib.machinery
import sys

from . import numpy_compat as _numpy1
from .layout import AliasFinder

__all__ = ['install_mxnet_alias', 'uninstall_mxnet_alias', 'mxnet_alias_installed']

ALIAS = 'mxnet'
_PACKAGE = __name__.rpartition('.')[0]          # 'hybridlib'


def _renamed(name, old, new):
    """``old[.X...]`` -> ``new[.X...]``; None for names outside ``old``."""
    if name == old or name.startswith(old + '.'):
        return new + name[len(old):]
    return None


_FINDER = AliasFinder(lambda fullname: _renamed(fullname, ALIAS, _PACKAGE))


class _HorovodFinder(AliasFinder):
    """``horovod.mxnet`` -> ``hybridlib.horovod``, and ``horovod`` an empty package above it,
    unless the real Horovod is installed."""

    def __init__(self):
        super().__init__(lambda fullname: f'{_PACKAGE}.horovod'
                         if fullname == 'horovod.mxnet' else None)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in ('horovod', 'horovod.mxnet') or \
                importlib.machinery.PathFinder.find_spec('horovod') is not None:
            return None
        if fullname == 'horovod':
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return super().find_spec(fullname, path, target)

    def exec_module(self, module):
        if module.__name__ == 'horovod':
            module.__doc__ = 'Horovod\'s package, served by hybridlib: only horovod.mxnet.'
            return
        super().exec_module(module)


_HOROVOD_FINDER = _HorovodFinder()


def mxnet_alias_installed():
    """True when ``import mxnet`` gives hybridlib."""
    return _FINDER in sys.meta_path


def install_mxnet_alias(numpy_compat=True):
    """Make ``import mxnet`` (and every ``mxnet.X.Y``) give hybridlib's modules from now on,
    and (``numpy_compat``) turn numpy 1.x's behaviour that MXNet-era code uses back on.

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
        sys.meta_path.insert(1, _HOROVOD_FINDER)
    if numpy_compat:
        _numpy1.enable()
    # what is loaded already is named at once; what loads later, the finder answers
    for key, module in list(sys.modules.items()):
        alias = _renamed(key, _PACKAGE, ALIAS)
        if module is not None and alias is not None:
            sys.modules.setdefault(alias, module)
    return package


def uninstall_mxnet_alias():
    """Undo ``install_mxnet_alias``: ``mxnet`` names nothing of hybridlib's any more."""
    for finder in (_FINDER, _HOROVOD_FINDER):
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
    for key in [k for k in sys.modules if k == ALIAS or k.startswith(ALIAS + '.')]:
        module = sys.modules[key]
        if module is not None and getattr(module, '__name__', '').startswith(_PACKAGE):
            del sys.modules[key]
    for key in ('horovod.mxnet', 'horovod'):
        module = sys.modules.get(key)
        if module is not None and (getattr(module.__spec__, 'loader', None) is _HOROVOD_FINDER
                                   or module.__name__ == f'{_PACKAGE}.horovod'):
            del sys.modules[key]
