"""Gluon's names, for ``from hybridlib import gluon`` (as ``from mxnet import gluon``)."""
from .. import nn, rnn, loss, data, model_zoo, utils, contrib
from ..block import Block, HybridBlock, SymbolBlock
from ..parameter import Parameter, Constant, ParameterDict, DeferredInitializationError
from ..trainer import Trainer

__all__ = ['nn', 'rnn', 'loss', 'data', 'model_zoo', 'utils', 'contrib', 'Block',
           'HybridBlock', 'SymbolBlock', 'Parameter', 'Constant', 'ParameterDict',
           'DeferredInitializationError', 'Trainer']


def _alias_modules():
    """Make ``hybridlib.gluon.nn`` (and every module below it) importable by that name, so
    ``from mxnet.gluon.nn import Dense`` keeps working with hybridlib; the modules are the same
    objects, not second copies."""
    import sys
    for name in ('nn', 'rnn', 'loss', 'data', 'model_zoo', 'utils', 'contrib'):
        module = globals()[name]
        sys.modules[f'{__name__}.{name}'] = module
        for key, sub in list(sys.modules.items()):
            if key.startswith(module.__name__ + '.'):
                sys.modules[f'{__name__}.{name}{key[len(module.__name__):]}'] = sub


_alias_modules()
