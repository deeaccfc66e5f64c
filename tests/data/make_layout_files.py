"""Writes mxnet_layout.json: the public names of every module of MXNet 1.9.1's Python package.

Run it with MXNet 1.9.1's Python (numpy<2):

    $(bash ../shared/tools/mxnet-oracle.sh) tests/data/make_layout_files.py

A module's public names are those without a leading underscore that the module defines, holds as
a constant, has as a submodule, or lists in ``__all__``; a package (``__init__.py``) also counts
what it re-exports from the rest of MXNet. Operator functions count in the operator namespaces
(``mxnet.ndarray*``, ``mxnet.symbol*``, ``mxnet.contrib.ndarray``/``symbol``) only. Names
taken from outside MXNet (``np``, ``ctypes``, ``os.path``'s functions) do not count, nor do
MXNet's own constants borrowed from ``mxnet.base``.
test_mxnet_layout.py compares hybridlib with this record.
"""
import importlib
import json
import os
import pkgutil
import sys
import types
import warnings

import mxnet

HERE = os.path.dirname(os.path.abspath(__file__))
FOREIGN = {'numpy', 'scipy', 'PIL', 'cv2', 'requests', 'onnx', 'graphviz', 'tqdm', 'six',
           'past', 'future', 'setuptools'}
# modules that cannot be imported on their own (a shared-library stub, a setup script)
UNIMPORTABLE = {'mxnet.libmxnet', 'mxnet.onnx.setup'}


def is_foreign(module_name):
    top = module_name.split('.')[0]
    return top in FOREIGN or top in sys.stdlib_module_names


def public_names(module):
    name = module.__name__
    is_package = hasattr(module, '__path__')
    exported = set(getattr(module, '__all__', ()))
    base = sys.modules['mxnet.base']
    names = []
    for key in dir(module):
        if key.startswith('_'):
            continue
        value = getattr(module, key)
        if isinstance(value, types.ModuleType):
            if value.__name__.startswith('mxnet') and (
                    value.__name__ == f'{name}.{key}' or is_package or key in exported):
                names.append(key)
            continue
        owner = getattr(value, '__module__', None)
        if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)) \
                or callable(value) and isinstance(owner, str):
            if not isinstance(owner, str) or is_foreign(owner):
                continue
            # operator functions are generated with __module__ 'ndarray', 'symbol', ...: they
            # belong to the operator namespaces, not to modules that import them (optimizer)
            if not owner.startswith('mxnet') and not name.startswith(('mxnet.ndarray',
                                                                      'mxnet.symbol',
                                                                      'mxnet.contrib.nd',
                                                                      'mxnet.contrib.sym')) \
                    and not is_package and key not in exported:
                continue
            if owner.startswith('mxnet') and owner != name and not is_package \
                    and key not in exported:
                continue
        elif module is not base and getattr(base, key, None) is value and key not in exported:
            continue
        names.append(key)
    return sorted(names)


def main():
    warnings.filterwarnings('ignore')
    names = [info.name for info in pkgutil.walk_packages(mxnet.__path__, 'mxnet.')
             if info.name not in UNIMPORTABLE]
    layout = {}
    for module_name in ['mxnet'] + sorted(names):
        if any(part.startswith('_') for part in module_name.split('.')):
            continue
        layout[module_name] = public_names(importlib.import_module(module_name))
    with open(os.path.join(HERE, 'mxnet_layout.json'), 'w') as f:
        json.dump({'mxnet_version': mxnet.__version__, 'modules': layout}, f, indent=1,
                  sort_keys=True)
        f.write('\n')
    print(f'{len(layout)} modules, {sum(map(len, layout.values()))} names')


if __name__ == '__main__':
    main()
