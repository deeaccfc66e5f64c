"""The workers of a data-parallel job: one MPI communicator (mpi4py) for every distributed
KVStore (``dist_sync``, ``dist_device_sync``, ``horovod``) and for ``hybridlib.horovod``.

A job is the processes of one MPI launch: ``python -m hybridlib.launch -n N script.py`` (a
thin front over the MPI's ``mpiexec``) or ``mpiexec -n N python script.py``. ``world()``
joins it on first use; each process is a worker with a ``rank`` in ``0 .. size - 1``. There
are no servers: every worker keeps the weights and runs the optimizer, after the gradients are
summed across workers (``allreduce_``).

What travels:

* ``allreduce_`` and ``broadcast_`` work in place on lists of NDArrays, packed by dtype into
  a few large buffers (``_BUCKET_BYTES`` each) so that a step costs a few collective calls, not
  one per parameter. GPU arrays are staged through host memory: the MPI wheels are not
  CUDA-aware.
* ``allgather`` joins arrays along their first axis (their first dimensions may differ).
* ``check_same`` compares what every worker declares (parameter names, shapes, dtypes) and
  raises on every worker alike when they disagree, naming the first rank that differs.

Faults: a worker that dies is reported by the MPI launcher, which stops the others. A Python
exception is not: the failing process would finalise MPI and exit while the others wait in a
collective forever. So joining the job installs an exception hook that prints the traceback
under the worker's rank and aborts the whole job (``MPI_Abort``).
"""
import sys
import threading
import traceback
import types

import numpy as np

from .base import MXNetError

__all__ = ['world', 'initialized', 'Communicator', 'broadcast_after_init']

DIST_EXTRA = "pip install 'hybridlib[dist]'"
# the largest buffer one collective call reduces (Horovod's fusion threshold)
_BUCKET_BYTES = 64 << 20

_lock = threading.Lock()
_world = None


def _mpi():
    """mpi4py's MPI module, with a clear error naming the extra when it is missing."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError(f'distributed training needs mpi4py and an MPI library: {DIST_EXTRA} '
                          f'(mpi4py and the mpich wheel); {error}') from error
    return MPI


def world(comm=None):
    """The communicator of this job, joined on first call (``comm``: an mpi4py communicator
    to use instead of COMM_WORLD, only on that first call)."""
    global _world
    with _lock:
        if _world is None:
            _world = Communicator(comm)
        elif comm is not None and comm is not _world.comm:
            raise MXNetError('the distributed job is already initialised with another '
                             'communicator')
        return _world


def initialized():
    return _world is not None


class Communicator:
    """The workers of an MPI communicator: their ranks, and collectives on NDArrays."""

    def __init__(self, comm=None):
        MPI = _mpi()
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        local = self.comm.Split_type(MPI.COMM_TYPE_SHARED)
        self.local_rank, self.local_size = local.Get_rank(), local.Get_size()
        local.Free()
        if self.size > 1:
            _abort_on_exception(self)

    # -- synchronisation --------------------------------------------------------------------------
    def barrier(self):
        self.comm.Barrier()

    def allgather_object(self, obj):
        """Every worker's ``obj`` (picklable), in rank order."""
        return self.comm.allgather(obj)

    def check_same(self, what, entries):
        """Raise MXNetError on every worker unless all declare the same ``entries`` (a list of
        (name, shape, dtype) tuples); the message names the first rank and entry that differ.
        """
        entries = [tuple(e) for e in entries]
        every = self.allgather_object(entries)
        reference = every[0]
        for rank, theirs in enumerate(every[1:], 1):
            if theirs == reference:
                continue
            if len(theirs) != len(reference):
                detail = f'rank {rank} has {len(theirs)} where rank 0 has {len(reference)}'
            else:
                i = next(i for i, (a, b) in enumerate(zip(reference, theirs)) if a != b)
                detail = f'entry {i}: rank {rank} has {_show(theirs[i])} where rank 0 has ' \
                         f'{_show(reference[i])}'
            raise MXNetError(f'the workers disagree on {what}: {detail}. Every worker must '
                             f'build the same model and give its parameters in the same order')

    # -- collectives on NDArrays ------------------------------------------------------------------
    def allreduce_(self, arrays, average=False, prescale=1.0, postscale=1.0):
        """Sum ``arrays`` (NDArrays, any contexts) over the workers, in place; ``average``
        divides by the number of workers. The factors scale before and after the sum."""
        after = postscale / self.size if average else postscale
        for bucket in _buckets(arrays):
            flat, in_place = _pack(bucket, prescale)
            if self.size > 1:
                self.comm.Allreduce(self.MPI.IN_PLACE, flat, op=self.MPI.SUM)
            _unpack(flat, in_place, bucket, after)
        return arrays

    def broadcast_(self, arrays, root=0):
        """Overwrite ``arrays`` with worker ``root``'s, in place."""
        if not 0 <= root < self.size:
            raise MXNetError(f'broadcast root rank {root} is not a worker (0 .. {self.size - 1})')
        for bucket in _buckets(arrays):
            flat, in_place = _pack(bucket, 1.0)
            if self.size > 1:
                self.comm.Bcast(flat, root=root)
            _unpack(flat, in_place, bucket, 1.0)
        return arrays

    def allgather(self, array):
        """The workers' ``array`` (numpy or cupy data) joined along the first axis, on the
        host; the other dimensions and the dtype must agree."""
        host = np.ascontiguousarray(_host(array))
        shapes = self.allgather_object((host.shape, host.dtype.str))
        rest = {(s[1:], d) for s, d in shapes}
        if len(rest) > 1:
            raise MXNetError('allgather: the workers\' arrays differ beyond the first axis or in '
                             f'dtype: {[f"{s} {np.dtype(d).name}" for s, d in shapes]}')
        counts = [int(np.prod(s)) for s, _ in shapes]
        out = np.empty((sum(s[0] for s, _ in shapes),) + host.shape[1:], host.dtype)
        if self.size == 1:
            out[...] = host
        else:
            self.comm.Allgatherv(host, [out, counts])
        return out


# -------------------------------------------------------------------------------------------------
# Packing NDArrays into the contiguous host buffers MPI reduces
# -------------------------------------------------------------------------------------------------

def _pack(bucket, scale):
    """(buffer, in place): the bucket's arrays side by side in one contiguous host buffer,
    each scaled; a lone contiguous host array unscaled is its own buffer (reduced in place)."""
    if len(bucket) == 1 and scale == 1.0:
        data = bucket[0]._data
        if isinstance(data, np.ndarray) and data.flags.c_contiguous:
            return data.reshape(-1), True
    flat = np.empty(sum(a.size for a in bucket), bucket[0]._data.dtype)
    at = 0
    for a in bucket:
        part = flat[at:at + a.size]
        part[...] = _host(a._data).reshape(-1)
        if scale != 1.0:
            part *= scale
        at += a.size
    return flat, False


def _unpack(flat, in_place, bucket, scale):
    """Write the reduced buffer back into the bucket's arrays, scaled."""
    if scale != 1.0:
        flat *= scale
    if in_place:
        return
    at = 0
    for a in bucket:
        part = flat[at:at + a.size].reshape(a.shape)
        at += a.size
        if isinstance(a._data, np.ndarray):
            a._data[...] = part
        else:
            a._data[...] = a._ctx.array_module.asarray(part)


def broadcast_after_init(param, root=0):
    """Make the deferred initialisation of ``param`` (a Parameter whose shape is known at its
    first forward) end with a broadcast of worker ``root``'s values, so that every worker's
    first forward already runs on the same weights. The workers reach it together, in the
    first forward."""
    init_impl = param._init_impl

    def init_then_broadcast(self, *args, **kwargs):
        init_impl(*args, **kwargs)
        del self._init_impl                     # once: back to the class's method
        world().broadcast_(self._check_and_get(self._data, list), root)

    param._init_impl = types.MethodType(init_then_broadcast, param)


def _host(data):
    return data if isinstance(data, np.ndarray) else data.get()


def _buckets(arrays):
    """``arrays`` grouped by dtype, in order, each group cut into buckets of at most
    ``_BUCKET_BYTES`` (an array larger than that is a bucket of its own)."""
    by_dtype = {}
    for a in arrays:
        by_dtype.setdefault(a._data.dtype, []).append(a)
    for group in by_dtype.values():
        bucket, size = [], 0
        for a in group:
            nbytes = a.size * a._data.dtype.itemsize
            if bucket and size + nbytes > _BUCKET_BYTES:
                yield bucket
                bucket, size = [], 0
            bucket.append(a)
            size += nbytes
        if bucket:
            yield bucket


def _show(entry):
    name, shape, dtype = (tuple(entry) + (None, None))[:3]
    return f'{name!r} of shape {tuple(shape) if shape is not None else None} ({dtype})'


def _abort_on_exception(comm):
    """Make an uncaught exception stop every worker of the job, not only this one."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        if issubclass(kind, KeyboardInterrupt):
            return previous(kind, value, tb)
        sys.stderr.write(f'hybridlib: worker rank {comm.rank} of {comm.size} failed; stopping '
                         'the job:\n' + ''.join(traceback.format_exception(kind, value, tb)))
        sys.stderr.flush()
        comm.comm.Abort(1)

    sys.excepthook = hook
