"""Contrib namespaces: Gluon's (``gluon.contrib.nn``) and MXNet's top-level ``mx.contrib``
(``mx.contrib.ndarray`` and ``mx.contrib.symbol`` are ``nd.contrib`` and ``sym.contrib``;
``mx.contrib.amp`` is automatic mixed precision)."""
import sys

from . import nn
from . import amp
from ..ndarray import contrib as ndarray
from ..symbol import contrib as symbol

sys.modules[__name__ + '.ndarray'] = ndarray
sys.modules[__name__ + '.symbol'] = symbol

__all__ = ['nn', 'amp', 'ndarray', 'symbol']
