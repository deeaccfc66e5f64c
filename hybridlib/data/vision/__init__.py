"""Vision datasets and transforms (``gluon.data.vision``)."""
from . import datasets, transforms
from .datasets import *      # noqa: F401,F403

__all__ = datasets.__all__ + ['transforms']
