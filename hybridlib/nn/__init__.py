"""Gluon's neural-network layers (``gluon.nn``), one file per family."""
from .basic_layers import (Sequential, HybridSequential, Dense, Dropout, BatchNorm, Activation,
                           Flatten, Lambda, HybridLambda)
from .conv_layers import Conv2D, MaxPool2D, AvgPool2D

__all__ = ['Sequential', 'HybridSequential', 'Dense', 'Dropout', 'BatchNorm', 'Activation',
           'Flatten', 'Lambda', 'HybridLambda', 'Conv2D', 'MaxPool2D', 'AvgPool2D']
