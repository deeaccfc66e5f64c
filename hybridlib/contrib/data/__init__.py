"""Contrib data (``gluon.contrib.data``): ``IntervalSampler`` and the WikiText language
modelling data sets (``text``)."""
from . import sampler, text
from .sampler import *     # noqa: F401,F403

__all__ = sampler.__all__ + ['sampler', 'text']
