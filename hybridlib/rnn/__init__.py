"""``mx.rnn``: MXNet's legacy symbolic RNN API (MXNet 1.9.1's ``python/mxnet/rnn``), not
Gluon's ``gluon.rnn`` (which is ``hybridlib.gluon_rnn``).

Cells that build Symbols (``rnn_cell``: ``LSTMCell``, ``FusedRNNCell``, ...), a bucketing
sentence iterator (``io``: ``BucketSentenceIter``, ``encode_sentences``) and checkpoints that
store the cells' weights unpacked (``rnn``). It also holds the names MXNet's package takes from
the rest of MXNet (``DataIter``, ``save_checkpoint``, ``symbol``, ...).
"""
from .. import initializer as init
from .. import ndarray, symbol
from ..io import DataBatch, DataDesc, DataIter
from ..model import load_checkpoint, save_checkpoint
from . import cell_base, conv_rnn_cell, rnn_cell  # noqa: F401  (submodules, as MXNet's)
from .rnn_cell import *      # noqa: F401,F403
from . import rnn
from .rnn import *           # noqa: F401,F403
from . import io
from .io import *            # noqa: F401,F403

__all__ = rnn_cell.__all__ + rnn.__all__ + io.__all__ + [
    'rnn_cell', 'rnn', 'io', 'DataBatch', 'DataDesc', 'DataIter', 'init', 'ndarray', 'symbol',
    'load_checkpoint', 'save_checkpoint']
