"""``gluon.contrib.cnn``: the deformable convolution layers (MXNet 1.9.1's names, arguments,
parameters and reprs)."""
from . import conv_layers
from .conv_layers import *      # noqa: F401,F403

__all__ = conv_layers.__all__
