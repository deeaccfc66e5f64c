"""``mx.model``: checkpoints of a Symbol and its parameters (MXNet 1.9.1's ``model.py``).

A checkpoint is two files, as MXNet writes them, so either library reads the other's:

* ``PREFIX-symbol.json``: the graph (``Symbol.save``);
* ``PREFIX-EPOCH.params`` (the epoch as ``%04d``): ``nd.save`` of one dict whose keys are
  ``arg:NAME`` for arguments and ``aux:NAME`` for auxiliary states.

Both go through ``serialization.atomic_write``, so a save that fails keeps the previous file.
``BatchEndParam`` is what training loops hand to batch-end callbacks (``callback.py``).
``FeedForward``, MXNet's deprecated estimator from before ``mx.mod.Module``, is not provided.
"""
import glob
import importlib.util
import logging
import os
import re
from collections import namedtuple

from . import ndarray as nd
from . import symbol as sym
from .base import MXNetError, NotSupportedError
from .context import cpu

__all__ = ['BatchEndParam', 'FeedForward', 'SKLEARN_INSTALLED', 'load_checkpoint',
           'load_params', 'save_checkpoint']

# MXNet sets this (to False) only when ``import sklearn`` fails, for FeedForward's base class;
# here it is always a bool, and found without importing scikit-learn (slow to import).
SKLEARN_INSTALLED = importlib.util.find_spec('sklearn') is not None

# What a training loop passes to batch_end_callback (MXNet spells the type 'BatchEndParams')
BatchEndParam = namedtuple('BatchEndParams', ['epoch', 'nbatch', 'eval_metric', 'locals'])


def _params_file(prefix, epoch):
    return '%s-%04d.params' % (prefix, epoch)


def _saved_epochs(prefix):
    """The epochs of ``PREFIX-NNNN.params`` files next to ``prefix``, for error messages."""
    pattern = re.compile(re.escape(os.path.basename(prefix)) + r'-(\d{4,})\.params$')
    epochs = []
    for path in glob.glob(glob.escape(prefix) + '-*.params'):
        match = pattern.match(os.path.basename(path))
        if match:
            epochs.append(int(match.group(1)))
    return sorted(epochs)


def _missing_file_error(fname, prefix, epoch, what):
    """An MXNetError naming a missing checkpoint file and the epochs that were saved."""
    epochs = _saved_epochs(prefix)
    found = (f'the checkpoints saved with this prefix are epochs {epochs}' if epochs
             else 'no parameter files with this prefix exist')
    return MXNetError(f'{what}(prefix={prefix!r}, epoch={epoch}): file {fname!r} does not '
                      f'exist; {found}. A checkpoint is PREFIX-symbol.json and '
                      'PREFIX-%04d.params, as written by mx.model.save_checkpoint or '
                      'Module.save_checkpoint')


def _read(load, fname, prefix, epoch, what):
    """``load(fname)``; a missing file raises ``_missing_file_error``, other errors pass."""
    try:
        return load(fname)
    except MXNetError:
        if os.path.exists(fname):
            raise
        raise _missing_file_error(fname, prefix, epoch, what) from None


def _checkpoint_dict(arg_params, aux_params):
    """What a ``.params`` file holds: the arrays, on CPU, by ``arg:NAME`` and ``aux:NAME``."""
    save_dict = {('arg:%s' % k): v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({('aux:%s' % k): v.as_in_context(cpu()) for k, v in aux_params.items()})
    return save_dict


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Checkpoint the model data into files.

    Parameters
    ----------
    prefix : str
        Prefix of model name.
    epoch : int
        The epoch number of the model.
    symbol : Symbol or None
        The input Symbol; None saves the parameters only.
    arg_params : dict of str to NDArray
        Model parameters: the net's weights, by argument name.
    aux_params : dict of str to NDArray
        The net's auxiliary states, by name.
    remove_amp_cast : bool, optional
        Whether to remove the amp_cast and amp_multicast operators before saving the symbol.

    Notes
    -----
    - ``prefix-symbol.json`` is saved for the symbol.
    - ``prefix-epoch.params`` (epoch as ``%04d``) is saved for the parameters.
    """
    if symbol is not None:
        symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
    param_name = _params_file(prefix, epoch)
    nd.save(param_name, _checkpoint_dict(arg_params, aux_params))
    logging.info('Saved checkpoint to \"%s\"', param_name)


def load_params(prefix, epoch):
    """Load the parameters of a checkpoint.

    Parameters
    ----------
    prefix : str
        Prefix of model name.
    epoch : int
        Epoch number of the parameters to load.

    Returns
    -------
    arg_params : dict of str to NDArray
        The net's weights, by argument name (keys ``arg:NAME`` of the file).
    aux_params : dict of str to NDArray
        The net's auxiliary states, by name (keys ``aux:NAME`` of the file).
    """
    fname = _params_file(prefix, epoch)
    save_dict = _read(nd.load, fname, prefix, epoch, 'load_params')
    arg_params = {}
    aux_params = {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return (arg_params, aux_params)
    if not isinstance(save_dict, dict):
        raise ValueError(f'load_params: {fname!r} holds a list of {len(save_dict)} arrays '
                         'without names; a checkpoint holds a dict with keys arg:NAME and '
                         'aux:NAME')
    for k, v in save_dict.items():
        if ':' not in k:
            raise ValueError(f'load_params: key {k!r} of {fname!r} is neither arg:NAME nor '
                             'aux:NAME; is this a Gluon .params file? Load it with '
                             'net.load_parameters instead')
        tp, name = k.split(':', 1)
        if tp == 'arg':
            arg_params[name] = v
        if tp == 'aux':
            aux_params[name] = v
    return (arg_params, aux_params)


def load_checkpoint(prefix, epoch):
    """Load a model checkpoint from files.

    Parameters
    ----------
    prefix : str
        Prefix of model name.
    epoch : int
        Epoch number of the model to load.

    Returns
    -------
    symbol : Symbol
        The symbol configuration of the computation network.
    arg_params : dict of str to NDArray
        The net's weights, by argument name.
    aux_params : dict of str to NDArray
        The net's auxiliary states, by name.

    Notes
    -----
    - The symbol is loaded from ``prefix-symbol.json``.
    - The parameters are loaded from ``prefix-epoch.params`` (epoch as ``%04d``).
    """
    fname = '%s-symbol.json' % prefix
    symbol = _read(sym.load, fname, prefix, epoch, 'load_checkpoint')
    arg_params, aux_params = load_params(prefix, epoch)
    return (symbol, arg_params, aux_params)


class FeedForward:
    """MXNet's deprecated model API from before ``mx.mod.Module``: not provided.

    Constructing one (or calling ``FeedForward.load`` / ``FeedForward.create``) raises
    ``NotSupportedError``. ``mx.mod.Module`` trains and predicts a Symbol, and
    ``mx.model.load_checkpoint`` reads FeedForward's saved files.
    """

    _MESSAGE = ('mx.model.FeedForward (deprecated since MXNet 0.9) is not provided by hybridlib: '
                'use mx.mod.Module(symbol, context=ctx) and its fit/predict/score, and '
                'mx.model.load_checkpoint(prefix, epoch) (or Module.load) for saved models')

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd',
                 initializer=None, numpy_batch_size=128, arg_params=None, aux_params=None,
                 allow_extra_params=False, begin_epoch=0, **kwargs):
        raise NotSupportedError(self._MESSAGE)

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """Not provided: see the class docstring."""
        raise NotSupportedError(FeedForward._MESSAGE)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd',
               initializer=None, eval_data=None, eval_metric='acc', epoch_end_callback=None,
               batch_end_callback=None, kvstore='local', logger=None, work_load_list=None,
               eval_end_callback=None, eval_batch_end_callback=None, **kwargs):
        """Not provided: see the class docstring."""
        raise NotSupportedError(FeedForward._MESSAGE)
