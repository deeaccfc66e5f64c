"""SVRG optimization on the Module API (MXNet 1.9.1's ``mxnet.contrib.svrg_optimization``):
``svrg_module.SVRGModule`` and the optimizers it installs (``svrg_optimizer``)."""
from . import svrg_module, svrg_optimizer

__all__ = ['svrg_module', 'svrg_optimizer']
