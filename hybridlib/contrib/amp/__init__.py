"""Automatic mixed precision (``mxnet.contrib.amp``): ``amp.init()``, ``amp.init_trainer``,
``amp.scale_loss`` and the graph conversions; see ``amp.py``."""
from . import lists, loss_scaler
from .amp import *        # noqa: F401,F403
from .amp import __all__ as _amp_all
from .loss_scaler import LossScaler

__all__ = list(_amp_all) + ['LossScaler', 'lists', 'loss_scaler']
