"""Checkpoints of models built with legacy RNN cells (``mx.rnn.rnn``), as MXNet 1.9.1's.

A checkpoint holds each cell's weights unpacked, one array per gate (``cell.unpack_weights``),
so that it reads the same whether the model used a ``FusedRNNCell`` or its unfused cells;
loading packs them again for the given cells. The files are ``mx.model``'s:
``PREFIX-symbol.json`` and ``PREFIX-EPOCH.params``.
"""
import warnings

from ..model import load_checkpoint, save_checkpoint
from .cell_base import BaseRNNCell, cells_pack_weights, cells_unpack_weights

__all__ = ['rnn_unroll', 'save_rnn_checkpoint', 'load_rnn_checkpoint', 'do_rnn_checkpoint']


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix='', layout='NTC'):
    """Deprecated: ``cell.unroll(length, inputs, begin_state, layout)``.

    ``input_prefix`` is ignored: inputs are made outside (MXNet 1.9.1 passed it on to
    ``unroll``, which no longer takes it, so its ``rnn_unroll`` always failed).
    """
    warnings.warn('rnn_unroll is deprecated. Please call cell.unroll directly.')
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)


def _as_cells(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else cells


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """Save a checkpoint with the weights of ``cells`` unpacked.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
        The cells of the model.
    prefix : str
        The files' prefix.
    epoch : int
        The epoch, the number in the parameter file's name.
    symbol : Symbol
        The model's graph, saved as ``PREFIX-symbol.json``.
    arg_params, aux_params : dict of str to NDArray
        The model's arguments (with the cells' weights packed) and auxiliary states, saved as
        ``PREFIX-EPOCH.params``.
    """
    arg_params = cells_unpack_weights(_as_cells(cells), arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """Load a checkpoint and pack the weights of ``cells``.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
        The cells of the model.
    prefix : str
        The files' prefix.
    epoch : int
        The epoch to load.

    Returns
    -------
    symbol : Symbol
    arg_params : dict of str to NDArray
        The arguments, with the cells' weights packed.
    aux_params : dict of str to NDArray
    """
    sym, arg, aux = load_checkpoint(prefix, epoch)
    arg = cells_pack_weights(_as_cells(cells), arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback that saves ``save_rnn_checkpoint`` every ``period`` epochs.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
        The cells of the model.
    prefix : str
        The files' prefix.
    period : int, default 1
        Save after every ``period``-th epoch (at least 1).

    Returns
    -------
    callable
        ``callback(iter_no, sym=None, arg=None, aux=None)``, for ``Module.fit``'s
        ``epoch_end_callback``; it saves epoch ``iter_no + 1``.
    """
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
