"""hybridlib: MXNet 1.x Gluon, re-implemented in Python on numpy 2 (CPU) and cupy (GPU).

``import hybridlib as mx`` gives the names a Gluon script uses from ``mxnet``.
"""
from .base import MXNetError
from . import base, context
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus
from . import ops                    # registers every operator
from . import autograd, name, attribute, random
from . import ndarray, symbol, executor
from .attribute import AttrScope
from . import ndarray as nd
from . import symbol as sym
from . import initializer, initializer as init
from . import parameter, block, cached_op, nn
from . import optimizer, lr_scheduler, metric, kvstore, recordio
from . import kvstore as kv
from . import gluon, contrib

__version__ = '0.1.0'

__all__ = ['MXNetError', 'Context', 'cpu', 'gpu', 'cpu_pinned', 'current_context', 'num_gpus',
           'nd', 'ndarray', 'sym', 'symbol', 'autograd', 'random', 'context', 'base', 'name',
           'attribute', 'AttrScope', 'executor', 'ops', 'init', 'initializer', 'gluon',
           'nn', 'block', 'parameter', 'cached_op', 'optimizer', 'lr_scheduler', 'metric',
           'kvstore', 'kv', 'recordio', 'contrib']
