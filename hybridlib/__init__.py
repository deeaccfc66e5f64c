"""hybridlib: MXNet 1.x Gluon, re-implemented in Python on numpy 2 (CPU) and cupy (GPU).

``import hybridlib as mx`` gives the names a Gluon script uses from ``mxnet``, and
``install_mxnet_alias()`` (or ``python -m hybridlib SCRIPT.py``) makes ``import mxnet`` itself
give hybridlib, for code that cannot be edited. ``mx.__version__`` is the MXNet release whose
API this serves ('1.9.1'); hybridlib's own version is ``hybridlib.libinfo.hybridlib_version``.
"""
from .base import MXNetError
from . import base, context, libinfo
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus
from . import ops                    # registers every operator
from . import autograd, name, attribute, random, random as rnd
from . import ndarray, symbol, executor
from . import visualization, visualization as viz
from .attribute import AttrScope
from . import ndarray as nd
from . import symbol as sym
from . import initializer, initializer as init
from . import parameter, block, cached_op, nn
ndarray.CachedOp = ndarray.op.CachedOp = cached_op.NDArrayCachedOp   # mx.nd.CachedOp
from . import optimizer, lr_scheduler, metric, kvstore, recordio
from . import model, callback, monitor, notebook
from . import monitor as mon
from . import kvstore as kv
from . import gluon, contrib
from . import io, image, image as img, operator, test_utils
from . import rnn                    # mx.rnn: the legacy symbolic RNN API (not gluon.rnn)
from . import executor_manager, module, module as mod
from . import engine, error, log, profiler, registry, runtime, util
from .util import (is_np_array, is_np_shape, np_array, np_shape, set_np_shape, use_np,
                   use_np_array, use_np_shape)
from .mxnet_alias import install_mxnet_alias, uninstall_mxnet_alias
from . import layout as _layout

__version__ = libinfo.__version__

__all__ = ['MXNetError', 'Context', 'cpu', 'gpu', 'cpu_pinned', 'current_context', 'num_gpus', 'nd',
           'ndarray', 'sym', 'symbol', 'viz', 'visualization', 'autograd', 'random', 'rnd',
           'context', 'base', 'name', 'attribute', 'AttrScope', 'executor', 'ops', 'init',
           'initializer', 'gluon', 'nn', 'block', 'parameter', 'cached_op', 'optimizer',
           'lr_scheduler', 'metric', 'kvstore', 'kv', 'model', 'callback', 'monitor', 'mon',
           'notebook', 'recordio', 'contrib', 'io', 'image', 'img', 'operator', 'test_utils', 'rnn',
           'executor_manager', 'module', 'mod', 'engine', 'error', 'log', 'profiler', 'registry',
           'runtime', 'util', 'libinfo', 'is_np_array', 'is_np_shape', 'np_array', 'np_shape',
           'set_np_shape', 'use_np', 'use_np_array', 'use_np_shape', 'install_mxnet_alias',
           'uninstall_mxnet_alias']

_layout.register(__import__(__name__))
