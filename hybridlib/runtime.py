"""What this installation can do (``mx.runtime``), under MXNet's feature names.

MXNet reports the compile-time options of its native library. hybridlib has no native library,
so each feature says whether the capability MXNet names is available here, now:

- ``CUDA``: a GPU context works (cupy installed and a device visible); ``CUDNN``, ``NCCL``,
  ``CUDA_RTC``: cupy provides them, with a GPU;
- ``BLAS_OPEN``/``BLAS_MKL``/``BLAS_APPLE``/``LAPACK``: the BLAS numpy was built with;
- ``OPENCV``: ``mx.image`` can decode images (through Pillow, the ``image`` extra), which is
  what code checking this flag wants to know;
- ``INT64_TENSOR_SIZE``: arrays may exceed 2**31 elements (numpy's indexing is 64-bit);
- ``SIGNAL_HANDLER``: Python prints a traceback on a crash (``faulthandler``);
- ``CPU_SSE`` ... ``CPU_AVX2``, ``SSE``, ``F16C``: the instruction sets numpy found on this CPU
  and dispatches its loops to;
- ``MKLDNN``, ``TENSORRT``, ``CAFFE``, ``TVM_OP``, ``DIST_KVSTORE``,
  ``JEMALLOC``, ``OPENMP``, ``PROFILER``, ``DEBUG``, ``CXX14``: options of MXNet's C++ build,
  none of which hybridlib has: False.
"""
import collections
import importlib.util

import numpy as np

from .context import num_gpus

__all__ = ['Feature', 'Features', 'feature_list']

# MXNet 1.9.1's features, in its order
_NAMES = ('CUDA', 'CUDNN', 'NCCL', 'CUDA_RTC', 'TENSORRT', 'CPU_SSE', 'CPU_SSE2', 'CPU_SSE3',
          'CPU_SSE4_1', 'CPU_SSE4_2', 'CPU_SSE4A', 'CPU_AVX', 'CPU_AVX2', 'OPENMP', 'SSE',
          'F16C', 'JEMALLOC', 'BLAS_OPEN', 'BLAS_ATLAS', 'BLAS_MKL', 'BLAS_APPLE', 'LAPACK',
          'MKLDNN', 'OPENCV', 'CAFFE', 'PROFILER', 'DIST_KVSTORE', 'CXX14',
          'INT64_TENSOR_SIZE', 'SIGNAL_HANDLER', 'DEBUG', 'TVM_OP')


class Feature:
    """One feature: ``name`` and ``enabled``."""
    __slots__ = ('name', 'enabled', 'index')

    def __init__(self, name, enabled, index=0):
        self.name = name
        self.enabled = bool(enabled)
        self.index = index

    def __repr__(self):
        return f'{"✔" if self.enabled else "✖"} {self.name}'


def _blas_name():
    try:
        config = np.show_config(mode='dicts')
        return str(config['Build Dependencies']['blas']['name']).lower()
    except Exception:  # noqa: BLE001 - an unusual numpy build: report no known BLAS
        return ''


# MXNet's name -> numpy's name of a CPU feature
_CPU = {'CPU_SSE': 'SSE', 'CPU_SSE2': 'SSE2', 'CPU_SSE3': 'SSE3', 'CPU_SSE4_1': 'SSE41',
        'CPU_SSE4_2': 'SSE42', 'CPU_AVX': 'AVX', 'CPU_AVX2': 'AVX2', 'SSE': 'SSE', 'F16C': 'F16C'}


def _cpu_features():
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as found
    except ImportError:
        return {}
    return {name: bool(found.get(numpy_name)) for name, numpy_name in _CPU.items()}


def _available():
    blas = _blas_name()
    gpu = num_gpus() > 0
    return {
        'CUDA': gpu, 'CUDNN': gpu, 'NCCL': gpu, 'CUDA_RTC': gpu,
        'BLAS_OPEN': 'openblas' in blas, 'BLAS_MKL': 'mkl' in blas,
        'BLAS_APPLE': 'accelerate' in blas, 'BLAS_ATLAS': 'atlas' in blas,
        'LAPACK': bool(blas),
        'OPENCV': importlib.util.find_spec('PIL') is not None,
        'INT64_TENSOR_SIZE': True, 'SIGNAL_HANDLER': True,
        **_cpu_features(),
    }


def feature_list():
    """Every feature, in MXNet's order, each enabled or not in this installation."""
    available = _available()
    return [Feature(name, available.get(name, False), i) for i, name in enumerate(_NAMES)]


class Features(collections.OrderedDict):
    """{name: Feature}, as MXNet's (one instance per process)."""
    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super(Features, cls.instance).__init__((f.name, f) for f in feature_list())
        return cls.instance

    def __init__(self):     # filled once, in __new__
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether ``feature_name`` is enabled; RuntimeError for a name MXNet does not know."""
        feature_name = feature_name.upper()
        if feature_name not in self:
            raise RuntimeError(f"Feature '{feature_name}' is unknown, known features are: "
                               f'{list(self.keys())}')
        return self[feature_name].enabled
