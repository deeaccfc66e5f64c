"""Contrib namespaces, MXNet's two in one package (their names do not clash):

- Gluon's ``gluon.contrib``: ``nn`` (Concurrent, Identity, SyncBatchNorm, ...), ``rnn``
  (convolutional and projected cells, variational dropout), ``cnn`` (deformable convolutions),
  ``data`` (IntervalSampler, WikiText) and ``estimator`` (Estimator and its event handlers);
- MXNet's top-level ``mx.contrib``: ``amp`` (automatic mixed precision), ``text`` (vocabularies
  and pretrained embeddings), ``io`` (``DataLoaderIter``), ``svrg_optimization``
  (``SVRGModule``), and ``ndarray``/``nd`` and ``symbol``/``sym``, which are ``nd.contrib`` and
  ``sym.contrib``.
"""
import sys

from . import nn, rnn, cnn, data, estimator
from . import amp, io, text
from . import svrg_optimization
from ..ndarray import contrib as ndarray
from ..ndarray import contrib as nd
from ..symbol import contrib as symbol
from ..symbol import contrib as sym

for _name in ('ndarray', 'nd', 'symbol', 'sym'):
    sys.modules[f'{__name__}.{_name}'] = globals()[_name]

__all__ = ['nn', 'rnn', 'cnn', 'data', 'estimator', 'amp', 'io', 'text', 'svrg_optimization',
           'ndarray', 'nd', 'symbol', 'sym']
