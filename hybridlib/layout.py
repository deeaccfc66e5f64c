"""MXNet 1.9.1's module paths, over hybridlib's files.

hybridlib keeps Gluon's modules at the top of the package (``hybridlib.block``, ``hybridlib.nn``,
``hybridlib.trainer``), where MXNet has them under ``mxnet.gluon``; and some of MXNet's modules
are one file here (``ndarray.ndarray`` and ``ndarray.utils`` are both ``hybridlib.ndarray``).
``PATHS`` lists every MXNet path whose module lives under another name. ``register()`` makes
``hybridlib.<path>`` name that module, everywhere Python looks: an entry in ``sys.modules`` and
an attribute of its parent, for the module and every submodule below it. So
``import hybridlib.gluon.block`` and ``from hybridlib.gluon.nn import basic_layers`` work, and
give the very modules that ``hybridlib.block`` and ``hybridlib.nn.basic_layers`` are.

A submodule imported later under an MXNet path (``hybridlib.gluon.contrib.estimator``) is found
by ``AliasFinder``, which imports it under its own name and binds the MXNet path to that module:
without it Python would load the file a second time under the other name. The ``mxnet`` alias
(``mxnet_alias.py``) is an ``AliasFinder`` too, serving ``mxnet.<path>`` as
``hybridlib.<path>``, so this table is also what makes MXNet's import lines work.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys

__all__ = ['PATHS', 'register', 'AliasFinder']

# MXNet path -> the hybridlib module that holds its names (both relative to the package)
PATHS = {
    'gluon.block': 'block',
    'gluon.parameter': 'parameter',
    'gluon.trainer': 'trainer',
    'gluon.nn': 'nn',
    'gluon.rnn': 'gluon_rnn',
    'gluon.loss': 'loss',
    'gluon.data': 'data',
    'gluon.model_zoo': 'model_zoo',
    'gluon.utils': 'utils',
    'gluon.contrib': 'contrib',
    'contrib.nn.basic_layers': 'contrib.nn',
    'ndarray.ndarray': 'ndarray',
    'ndarray.utils': 'ndarray',
    'ndarray.register': 'ndarray',
    'ndarray.gen_op': 'ndarray.op',
    'ndarray.gen_contrib': 'ndarray.contrib',
    'ndarray.gen_linalg': 'ndarray.linalg',
    'ndarray.gen_random': 'ndarray.random',
    'ndarray.gen_image': 'ndarray.image',
    'ndarray.gen__internal': 'ndarray._internal',
    'symbol.symbol': 'symbol',
    'symbol.register': 'symbol',
    'symbol.gen_op': 'symbol.op',
    'symbol.gen_contrib': 'symbol.contrib',
    'symbol.gen_linalg': 'symbol.linalg',
    'symbol.gen_random': 'symbol.random',
    'symbol.gen_image': 'symbol.image',
    'symbol.gen__internal': 'symbol._internal',
    'kvstore.kvstore': 'kvstore',
    'kvstore.base': 'kvstore',
    'optimizer.optimizer': 'optimizer',
    'optimizer.contrib': 'optimizer_contrib',
    'img': 'image',
    'rnd': 'random',
    'mon': 'monitor',
}


class AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the module that ``resolve(fullname)`` names and binds ``fullname`` to it.

    ``resolve`` returns a module name, or None for names this finder does not serve. The
    module itself is shared, never re-executed: its ``__name__`` and ``__spec__`` stay its own.
    """

    def __init__(self, resolve):
        self._resolve = resolve

    def find_spec(self, fullname, path=None, target=None):
        name = self._resolve(fullname)
        if name is None:
            return None
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name == name:
                return None         # not there either: Python's own error follows
            raise
        return importlib.machinery.ModuleSpec(fullname, self, loader_state=name)

    def create_module(self, spec):
        return None                 # a throwaway module; exec_module puts the real one in place

    def exec_module(self, module):
        # the import system returns what sys.modules holds once exec_module is done
        sys.modules[module.__name__] = sys.modules[module.__spec__.loader_state]


def _resolver(prefix):
    """``hybridlib.<MXNet path>.<rest>`` -> ``hybridlib.<its module>.<rest>``, else None."""
    longest_first = sorted(PATHS, key=len, reverse=True)

    def resolve(fullname):
        if not fullname.startswith(prefix + '.'):
            return None
        path = fullname[len(prefix) + 1:]
        for key in longest_first:
            if path.startswith(key + '.'):
                return f'{prefix}.{PATHS[key]}{path[len(key):]}'
        return None
    return resolve


_FINDERS = {}       # package name -> its AliasFinder, put on sys.meta_path once


def _mirror(name, module):
    """Name every loaded submodule of ``module`` below ``name`` too."""
    source = module.__name__
    for key, sub in list(sys.modules.items()):
        if key.startswith(source + '.') and sub is not None:
            sys.modules.setdefault(name + key[len(source):], sub)


def register(package):
    """Give every path of ``PATHS`` its module, below ``package`` (``hybridlib``).

    Paths are bound parents first, so that ``gluon.contrib.nn.basic_layers`` finds
    ``gluon.contrib`` in place, and mirrored after all are bound, so that each alias also
    names the submodules that other entries add (``contrib.nn.basic_layers`` below
    ``gluon.contrib``). A target that this installation lacks leaves its path out.
    """
    prefix = package.__name__
    if prefix not in _FINDERS:
        _FINDERS[prefix] = AliasFinder(_resolver(prefix))
        sys.meta_path.insert(0, _FINDERS[prefix])
    bound = {}
    for path in sorted(PATHS, key=lambda p: p.count('.')):
        target = f'{prefix}.{PATHS[path]}'
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as error:
            if error.name != target:
                raise
            continue
        name = f'{prefix}.{path}'
        parent, _, leaf = name.rpartition('.')
        sys.modules[name] = module
        setattr(sys.modules[parent], leaf, module)
        bound[name] = module
    for name, module in bound.items():
        _mirror(name, module)
