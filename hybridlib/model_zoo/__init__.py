"""Pre-defined architectures (``gluon.model_zoo``)."""
from . import vision

__all__ = ['vision']
