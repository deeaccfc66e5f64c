"""Gluon's neural-network layers (``gluon.nn``), one file per family.

Each file lists its public layers in ``__all__``; this package exports them all, and Gluon's
blocks (``nn.Block``, ``nn.HybridBlock``, ``nn.SymbolBlock``), as MXNet's ``gluon.nn`` does.
"""
from ..block import Block, HybridBlock, SymbolBlock
from . import basic_layers, activations, conv_layers
from .basic_layers import *     # noqa: F401,F403
from .activations import *      # noqa: F401,F403
from .conv_layers import *      # noqa: F401,F403

__all__ = (['Block', 'HybridBlock', 'SymbolBlock'] + basic_layers.__all__ + activations.__all__
           + conv_layers.__all__)
