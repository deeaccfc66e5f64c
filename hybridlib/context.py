"""Devices: ``cpu(i)``, ``gpu(i)``, the current-context stack, and the array module of each.

Compute code never imports numpy or cupy to do arithmetic; it receives the array module of its
context (``ctx.array_module``) so that one body serves both (see ``hybridlib/ops``). cupy is
imported only when a gpu context is first used for data.
"""
import contextlib
import threading

import numpy as np

from .base import MXNetError

__all__ = ['Context', 'cpu', 'gpu', 'cpu_pinned', 'current_context', 'num_gpus',
           'gpu_memory_info', 'array_module_of', 'context_of_array', 'transfer']

_DEVICE_TYPES = {1: 'cpu', 2: 'gpu', 3: 'cpu_pinned', 5: 'cpu_shared'}
_DEVICE_TYPEIDS = {name: tid for tid, name in _DEVICE_TYPES.items()}


class Context:
    """A device on which NDArrays live and operators run (as ``mxnet.Context``).

    ``with ctx:`` makes ``ctx`` the default for array creation inside the block.
    """
    _local = threading.local()
    devtype2str = _DEVICE_TYPES
    devstr2type = _DEVICE_TYPEIDS

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        elif isinstance(device_type, int):
            device_type = _DEVICE_TYPES[device_type]
        if device_type not in _DEVICE_TYPEIDS:
            raise MXNetError(f'unknown device type {device_type!r}; '
                             f'use one of {sorted(_DEVICE_TYPEIDS)}')
        self.device_type = device_type
        self.device_id = int(device_id)
        self._old_ctx = []

    @property
    def device_typeid(self):
        return _DEVICE_TYPEIDS[self.device_type]

    @property
    def array_module(self):
        """numpy for cpu contexts, cupy for gpu contexts."""
        if self.device_type == 'gpu':
            return _cupy_for(self)
        return np

    def device_scope(self):
        """A ``with`` block in which cupy allocates and runs on this context's device (a no-op
        on cpu)."""
        if self.device_type == 'gpu':
            return _cupy_for(self).cuda.Device(self.device_id)
        return contextlib.nullcontext()

    def empty_cache(self):
        """Release cached device memory (cupy's memory pool); a no-op on cpu."""
        if self.device_type == 'gpu':
            _cupy_for(self).get_default_memory_pool().free_all_blocks()

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        return f'{self.device_type}({self.device_id})'

    __str__ = __repr__

    def __enter__(self):
        scope = self.device_scope()
        scope.__enter__()
        self._old_ctx.append((current_context(), scope))
        Context._local.value = self
        return self

    def __exit__(self, *exc):
        Context._local.value, scope = self._old_ctx.pop()
        scope.__exit__(*exc)


def cpu(device_id=0):
    """The CPU context. ``device_id`` is kept for compatibility; all cpus share memory."""
    return Context('cpu', device_id)


def cpu_pinned(device_id=0):
    """Pinned host memory in MXNet; ordinary host memory here."""
    return Context('cpu_pinned', device_id)


def gpu(device_id=0):
    """The context of NVIDIA GPU ``device_id`` (needs cupy: ``pip install hybridlib[gpu]``)."""
    return Context('gpu', device_id)


def current_context():
    """The context that ``with ctx:`` set, or ``cpu(0)``."""
    return getattr(Context._local, 'value', None) or _DEFAULT


_DEFAULT = Context('cpu', 0)
_cupy = None


def sync_devices():
    """Wait for the work queued on the current GPU (nothing to wait for on the CPU)."""
    if _cupy is not None:
        _cupy.cuda.Device().synchronize()


def _import_cupy():
    global _cupy
    if _cupy is None:
        try:
            import cupy
        except ImportError as err:
            raise MXNetError('gpu contexts need cupy, which is not installed '
                             f'({err}); install it with: pip install "hybridlib[gpu]"') from None
        _cupy = cupy
    return _cupy


_gpu_count = None


def num_gpus():
    """How many GPUs cupy can see; 0 without cupy or without a driver (asked once)."""
    global _gpu_count
    if _gpu_count is None:
        try:
            _gpu_count = _import_cupy().cuda.runtime.getDeviceCount()
        except Exception:  # noqa: BLE001 - no cupy, no driver, no device all mean "none"
            _gpu_count = 0
    return _gpu_count


def gpu_memory_info(device_id=0):
    """(free, total) bytes of memory on GPU ``device_id``, as the CUDA driver reports them."""
    cuda = _import_cupy().cuda
    with cuda.Device(device_id):
        return cuda.runtime.memGetInfo()


def _cupy_for(ctx):
    cupy = _import_cupy()
    count = num_gpus()
    if ctx.device_id >= count:
        raise MXNetError(f'{ctx} is not available: cupy sees {count} GPU(s)')
    return cupy


def array_module_of(array):
    """numpy or cupy, whichever owns ``array``."""
    if isinstance(array, np.ndarray) or _cupy is None:
        return np
    return _cupy.get_array_module(array)


def context_of_array(array):
    """The Context an xp array lives on."""
    if isinstance(array, np.ndarray):
        return _DEFAULT
    device = getattr(array, 'device', None)
    if device is not None and _cupy is not None and isinstance(array, _cupy.ndarray):
        return Context('gpu', device.id)
    return _DEFAULT


def transfer(data, ctx, copy=True):
    """An xp array on ``ctx`` with the contents of ``data`` (numpy or cupy, any device)."""
    xp = ctx.array_module
    if xp is np:
        if isinstance(data, np.ndarray):
            return data.copy() if copy else data
        return data.get()
    with xp.cuda.Device(ctx.device_id):
        if copy or not isinstance(data, xp.ndarray) or data.device.id != ctx.device_id:
            return xp.array(data, copy=True)
        return data
