"""Recurrent layers and cells (``gluon.rnn``)."""
from . import rnn_layer, rnn_cell
from .rnn_layer import *     # noqa: F401,F403
from .rnn_cell import *      # noqa: F401,F403

__all__ = rnn_layer.__all__ + rnn_cell.__all__
