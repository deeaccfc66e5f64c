"""``mx.notebook`` (MXNet 1.9.1's ``mxnet.notebook``): training callbacks for Jupyter notebooks,
in ``callback`` (``PandasLogger``, ``LiveLearningCurve``, ``LiveTimeSeries``, ``args_wrapper``).

As in MXNet, ``notebook.bokeh`` is the bokeh package, or ``Bokeh_Failed_To_Import`` where it
is not installed; it is imported on first use of the attribute, not with hybridlib.
"""
from . import callback
from .callback import Bokeh_Failed_To_Import

__all__ = ['callback', 'Bokeh_Failed_To_Import']


def __getattr__(name):
    if name == 'bokeh':
        module = getattr(callback, 'bokeh')
        globals()['bokeh'] = module     # imported once
        return module
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__():
    return sorted(set(globals()) | {'bokeh'})
