"""Gluon's names, for ``from hybridlib import gluon`` (as ``from mxnet import gluon``)."""
from .. import nn, rnn, loss, data, model_zoo, utils, contrib
from ..block import Block, HybridBlock, SymbolBlock
from ..parameter import Parameter, Constant, ParameterDict, DeferredInitializationError
from ..trainer import *      # noqa: F401,F403  (Trainer)

__all__ = ['nn', 'rnn', 'loss', 'data', 'model_zoo', 'utils', 'contrib', 'Block',
           'HybridBlock', 'SymbolBlock', 'Parameter', 'Constant', 'ParameterDict',
           'DeferredInitializationError', 'Trainer']
