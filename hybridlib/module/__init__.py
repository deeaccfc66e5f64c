"""``mx.mod`` (``mxnet.module``): MXNet's symbolic training API.

A module binds a Symbol to executors on one or several contexts, initializes its parameters,
installs an optimizer and trains (``fit``), scores or predicts over data iterators.
``Module`` holds one Symbol; ``BucketingModule`` one per bucket of variable-length data, with
shared parameters; ``SequentialModule`` chains modules; ``PythonModule`` and
``PythonLossModule`` are modules written in Python.
"""
from . import base_module, bucketing_module, executor_group, module, python_module
from . import sequential_module
from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = ['BaseModule', 'Module', 'BucketingModule', 'SequentialModule', 'PythonModule',
           'PythonLossModule', 'base_module', 'bucketing_module', 'executor_group', 'module',
           'python_module', 'sequential_module']
