"""Datasets, samplers and the DataLoader (``gluon.data``)."""
from . import dataset, sampler, dataloader, vision
from .dataset import *       # noqa: F401,F403
from .sampler import *       # noqa: F401,F403
from .dataloader import *    # noqa: F401,F403

__all__ = dataset.__all__ + sampler.__all__ + dataloader.__all__ + ['vision']
