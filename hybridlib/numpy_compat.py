"""numpy 1.x behaviour that code written for MXNet relies on, turned on by the ``mxnet`` alias.

MXNet 1.9.1 needs numpy < 1.24. Code of that era (Dive into Deep Learning, GluonCV) relies on
two things numpy 2 has changed:

* names numpy removed in 1.24 and 2.0 (``np.float``, ``np.Inf``, ``np.float_``, ...):
  ``enable()`` gives them back as the objects they were, never touching a name numpy has;
* one-element arrays as numbers: ``'loss %f' % l.mean().asnumpy()`` and ``float(x.asnumpy())``
  of a shape-(1,) array, which numpy 2 refuses. Once enabled, ``NDArray.asnumpy()`` returns
  such arrays as ``Numpy1Array``, a numpy array that converts to a number as numpy 1.x did.

Nothing changes until ``enable()`` is called (``hybridlib.install_mxnet_alias`` and
``python -m hybridlib`` call it).
"""
import numpy as np

__all__ = ['NUMPY1_NAMES', 'Numpy1Array', 'enable', 'enabled', 'legacy_view']

# numpy 1.x names removed by numpy 1.24 and 2.0, with what they were
NUMPY1_NAMES = {
    'float': float, 'int': int, 'object': object, 'str': str, 'complex': complex,
    'unicode': str, 'Inf': np.inf, 'Infinity': np.inf, 'infty': np.inf, 'NaN': np.nan,
    'NAN': np.nan, 'PINF': np.inf, 'NINF': -np.inf, 'PZERO': 0.0, 'NZERO': -0.0,
    'float_': np.float64, 'complex_': np.complex128, 'int0': np.intp, 'uint0': np.uintp,
    'bool8': np.bool_, 'object0': np.object_, 'str0': np.str_, 'bytes0': np.bytes_,
    'void0': np.void, 'string_': np.bytes_, 'unicode_': np.str_, 'cfloat': np.complex128,
    'singlecomplex': np.complex64, 'longfloat': np.longdouble, 'clongfloat': np.clongdouble,
    'longcomplex': np.clongdouble, 'round_': np.round, 'product': np.prod,
    'cumproduct': np.cumprod, 'sometrue': np.any, 'alltrue': np.all,
}


def _restore_names():
    for name, value in NUMPY1_NAMES.items():
        if name not in vars(np):        # vars(): hasattr would ask numpy's __getattr__
            setattr(np, name, value)


class Numpy1Array(np.ndarray):
    """A numpy array whose one element converts to a Python number, as in numpy 1.x."""

    def __float__(self):
        return float(self.reshape(-1)[0]) if self.size == 1 else super().__float__()

    def __int__(self):
        return int(self.reshape(-1)[0]) if self.size == 1 else super().__int__()

    def __complex__(self):
        return complex(self.reshape(-1)[0]) if self.size == 1 else super().__complex__()


_enabled = False


def enabled():
    """Whether numpy 1.x behaviour is on."""
    return _enabled


def enable():
    """Turn numpy 1.x behaviour on for this process (it stays on)."""
    global _enabled
    _restore_names()
    _enabled = True


def legacy_view(array):
    """``array`` itself, or once enabled, a one-element array with dimensions as a
    ``Numpy1Array`` view (what ``NDArray.asnumpy()`` returns)."""
    if _enabled and array.size == 1 and array.ndim:
        return array.view(Numpy1Array)
    return array
