"""Gluon's names, for ``from hybridlib import gluon`` (as ``from mxnet import gluon``).

Gluon's modules live at the top of the package (``hybridlib.nn``, ``hybridlib.block``, ...;
``gluon.rnn`` is ``hybridlib.gluon_rnn``, for ``hybridlib.rnn`` is MXNet's older ``mx.rnn``);
``layout.py`` names them here too, under MXNet's paths (``hybridlib.gluon.nn``,
``hybridlib.gluon.block``), as the same module objects.
"""
from .. import nn, gluon_rnn as rnn, loss, data, model_zoo, utils, contrib
from .. import block, parameter, trainer
from ..block import Block, HybridBlock, SymbolBlock
from ..ndarray import NDArray
from ..parameter import Parameter, Constant, ParameterDict, DeferredInitializationError
from ..symbol import Symbol
from ..trainer import Trainer

# what Gluon accepts as a tensor (MXNet's gluon.tensor_types)
tensor_types = (Symbol, NDArray)

__all__ = ['nn', 'rnn', 'loss', 'data', 'model_zoo', 'utils', 'contrib', 'block', 'parameter',
           'trainer', 'Block', 'HybridBlock', 'SymbolBlock', 'Parameter', 'Constant',
           'ParameterDict', 'DeferredInitializationError', 'Trainer', 'tensor_types']
