"""Gluon's contrib namespace (``gluon.contrib``)."""
from . import nn

__all__ = ['nn']
