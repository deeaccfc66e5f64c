"""Gluon's names, for ``from hybridlib import gluon`` (as ``from mxnet import gluon``)."""
from .. import nn
from ..block import Block, HybridBlock, SymbolBlock
from ..parameter import Parameter, Constant, ParameterDict, DeferredInitializationError

__all__ = ['nn', 'Block', 'HybridBlock', 'SymbolBlock', 'Parameter', 'Constant',
           'ParameterDict', 'DeferredInitializationError']
