"""The workers of a data-parallel job: one MPI communicator (mpi4py) for every distributed
KVStore (``dist_sync``, ``dist_device_sync``, ``horovod``) and for ``hybridlib.horovod``.

A job is the processes of one MPI launch: ``python -m hybridlib.launch -n N script.py`` (a
thin front over the MPI's ``mpiexec``) or ``mpiexec -n N python script.py``. ``world()``
joins it on first use; each process is a worker with a ``rank`` in ``0 .. size - 1``. There
are no servers: every worker keeps the weights and runs the optimizer, after the gradients are
summed across workers (``allreduce_``).

What travels:

* ``allreduce_`` and ``broadcast_`` work in place on lists of NDArrays, packed by dtype and
  context into buffers (``_BUCKET_BYTES`` each) so that a step costs a few collective calls,
  not one per parameter. A Trainer's gradients are laid out in those buffers for good
  (``lay_out``): the backward writes them there and the sum needs no copies.
* GPU arrays are packed on their device and summed by NCCL (through cupy), its communicator
  bootstrapped over MPI (rank 0's unique id), when every worker has a GPU of its own: NCCL
  refuses two ranks on one device. Otherwise, or with ``HYBRIDLIB_DIST_NCCL=0``, they are
  staged through host memory for MPI (the MPI wheels are not CUDA-aware).
* ``allgather`` joins arrays along their first axis (their first dimensions may differ).
* ``check_same`` compares what every worker declares (parameter names, shapes, dtypes) and
  raises on every worker alike when they disagree, naming the first rank that differs.

Faults: a worker that dies is reported by the MPI launcher, which stops the others. A Python
exception is not: the failing process would finalise MPI and exit while the others wait in a
collective forever. So joining the job installs an exception hook that prints the traceback
under the worker's rank and aborts the whole job (``MPI_Abort``). A worker that leaves early
(its script ends, or calls ``sys.exit``) tells the others as it exits, and a collective that
waits for it raises (``Communicator._wait``).
"""
import atexit
import os
import pickle
import socket
import sys
import threading
import time
import traceback
import types

import numpy as np

from .base import MXNetError
from .context import cpu

__all__ = ['world', 'initialized', 'launch_folder', 'Communicator', 'broadcast_after_init']

DIST_EXTRA = "pip install 'hybridlib[dist]'"
# set by hybridlib.launch: the folder where its workers leave their rank and their failures
LAUNCH_FOLDER = 'HYBRIDLIB_LAUNCH_DIR'
_ABORT_GRACE = 0.5          # seconds between a worker's traceback and the abort
_LEFT_GRACE = 5.0           # seconds a collective may still take after a worker left
_LEFT = 1                   # the tag of the message a worker sends as it leaves
_CPU = cpu()                # where GPU buffers are staged for MPI
# the largest buffer one collective call reduces: MPICH sums ResNet-18's 45 MB of gradients
# between two processes in 14 ms in 4 MiB buffers, 24 in 16 MiB and 32 in 64 MiB (shared
# memory; over TCP 50, 64 and 77 ms), and a call costs some 10 us
_BUCKET_BYTES = 4 << 20

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


def launch_folder():
    """The folder ``hybridlib.launch`` made for this run, where its workers leave their
    placement and failures; None outside the launcher, or on another machine than its."""
    folder = os.environ.get(LAUNCH_FOLDER)
    return folder if folder and os.path.isdir(folder) else None


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
        self._nccl = {}         # device id -> _NcclGroup or None
        self._gone = None       # the rank of a worker that left the job, once one has
        self._leaving = False   # this worker is exiting
        if self.size > 1:
            _abort_on_exception(self)
            self._watch_for_leavers()

    # -- workers that leave -----------------------------------------------------------------------
    # A worker whose script ends (or calls sys.exit) while the others still wait for it in a
    # collective would leave them waiting forever: MPI only stops a job whose worker died or
    # aborted. So each worker, as it exits, tells the others on a communicator of their own,
    # and every collective here waits for its completion or that message, whichever is first.
    def _watch_for_leavers(self):
        self._control = self.comm.Dup()
        # one receive per other worker, posted for good, so that every goodbye is received
        # (MPI's network module warns of messages left unmatched at the end)
        self._peers = [rank for rank in range(self.size) if rank != self.rank]
        self._goodbyes = np.zeros(len(self._peers), np.int64)
        self._left = [self._control.Irecv(self._goodbyes[i:i + 1], source=rank, tag=_LEFT)
                      for i, rank in enumerate(self._peers)]
        atexit.register(self._leave, os.getpid())

    def _leave(self, pid):
        """Say goodbye to the others, and wait for theirs: MPI_Finalize waits for every worker
        anyway, and nothing may be left to arrive in buffers Python frees on exit."""
        if os.getpid() != pid or self.MPI.Is_finalized():     # a forked child; MPI is gone
            return
        self._leaving = True                    # later collectives simply wait
        goodbye = np.full(1, self.rank, np.int64)
        sent = [self._control.Isend(goodbye, dest=rank, tag=_LEFT) for rank in self._peers]
        self.MPI.Request.Waitall(sent + self._left)

    def _wait(self, request, what):
        """Wait for the collective ``request`` (``what``, for the error); raise if a worker
        left the job and it does not complete soon after, as it never will."""
        if self._gone is None:
            if self._leaving:
                request.Wait()
                return
            index = self.MPI.Request.Waitany([request] + self._left)
            if index == 0:
                return
            self._gone = self._peers[index - 1]
        # a worker that ended normally may have finished its part of this very call: give
        # what is in flight time to arrive
        deadline = time.monotonic() + _LEFT_GRACE
        while not request.Test():
            if time.monotonic() > deadline:
                raise MXNetError(
                    f'worker rank {self._gone} left the job (its script ended or exited) while '
                    f'worker rank {self.rank} waits for it in {what}: every worker must make '
                    'the same collective calls, for example train the same number of steps '
                    '(give each as many batches)')
            time.sleep(0.001)

    # -- synchronisation --------------------------------------------------------------------------
    def barrier(self):
        if self.size > 1:
            self._wait(self.comm.Ibarrier(), 'a barrier')

    def allgather_object(self, obj):
        """Every worker's ``obj`` (picklable), in rank order."""
        if self.size == 1:
            return [obj]
        data = np.frombuffer(pickle.dumps(obj), np.uint8)
        sizes = np.empty(self.size, np.int64)
        self._wait(self.comm.Iallgather(np.array([data.size], np.int64), sizes),
                   'an exchange of objects')
        out = np.empty(int(sizes.sum()), np.uint8)
        self._wait(self.comm.Iallgatherv(data, [out, sizes.tolist()]), 'an exchange of objects')
        ends = np.cumsum(sizes).tolist()
        return [pickle.loads(out[end - size:end].tobytes()) for end, size in zip(ends, sizes)]

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

    def check_same_parameters(self, what, params):
        """``check_same`` of the Parameters' names, shapes and dtypes."""
        self.check_same(what, [(p.name, p.shape, np.dtype(p.dtype).name) for p in params])

    # -- collectives on NDArrays ------------------------------------------------------------------
    def allreduce_(self, arrays, average=False, prescale=1.0, postscale=1.0, lay_out=False):
        """Sum ``arrays`` (NDArrays, any contexts) over the workers, in place; ``average``
        divides by the number of workers. The factors scale before and after the sum.

        ``lay_out``, for arrays summed again and again (gradients): those that own their memory
        become views of the buffers they are summed in, so that later calls copy nothing. No
        other NDArray may view them (it would no longer share their memory)."""
        after = postscale / self.size if average else postscale
        return self._in_buckets(arrays, 'allreduce', prescale, after, lay_out=lay_out)

    def broadcast_(self, arrays, root=0):
        """Overwrite ``arrays`` with worker ``root``'s, in place."""
        if not 0 <= root < self.size:
            raise MXNetError(f'broadcast root rank {root} is not a worker (0 .. {self.size - 1})')
        return self._in_buckets(arrays, 'broadcast', 1.0, 1.0, root)

    def _in_buckets(self, arrays, what, before, after, root=0, lay_out=False):
        """Run the collective ``what`` on ``arrays`` packed into buckets, scaled ``before``
        and ``after``; returns them."""
        for ctx, bucket in _buckets(arrays):
            with ctx.device_scope():
                if self.size == 1:          # nothing to exchange: only the scale
                    if before * after != 1.0:
                        for a in bucket:
                            a._data *= before * after
                    continue
                flat, in_place = _pack(bucket, before, lay_out)
                self._collective(ctx, flat, what, root)
                _unpack(flat, in_place, bucket, after)
        return arrays

    def _collective(self, ctx, flat, what, root=0):
        """Sum (``allreduce``) or copy from ``root`` (``broadcast``) the contiguous buffer
        ``flat`` in place: by NCCL on a GPU where it serves, else by MPI on the host."""
        if ctx.device_type == 'gpu':
            group = self.nccl(ctx)
            if group is not None:
                group.run(flat, what, root)
                return
            host = flat.get()
            self._collective(_CPU, host, what, root)
            flat.set(host)
            return
        if what == 'allreduce':
            self._wait(self.comm.Iallreduce(self.MPI.IN_PLACE, flat, op=self.MPI.SUM),
                       'a sum (allreduce)')
        else:
            self._wait(self.comm.Ibcast(flat, root=root), 'a broadcast')

    def nccl(self, ctx):
        """The NCCL communicator of the workers' GPUs for ``ctx`` (made on first use), or None
        where NCCL cannot serve them all: cupy without NCCL, two workers on one device, or
        ``HYBRIDLIB_DIST_NCCL=0``. Collective: every worker asks for it at the same point, and
        all reach the same answer from what they all gathered."""
        key = ctx.device_id
        if key not in self._nccl:
            self._nccl[key] = _NcclGroup.make(self, ctx)
        return self._nccl[key]

    def allgather(self, array):
        """The workers' ``array`` (an NDArray) joined along the first axis, as numpy on the
        host; the other dimensions and the dtype must agree."""
        host = np.ascontiguousarray(array.asnumpy())
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
            self._wait(self.comm.Iallgatherv(host, [out, counts]), 'an allgather')
        return out


# -------------------------------------------------------------------------------------------------
# Packing NDArrays into the contiguous buffers the collectives work on, and NCCL
# -------------------------------------------------------------------------------------------------

def _pack(bucket, scale, lay_out=False):
    """(buffer, in place): the bucket's arrays side by side in one contiguous buffer on their
    device, scaled. The buffer is the arrays' own memory (in place) where they already lie so:
    a lone contiguous array, or arrays an earlier ``lay_out`` made views of one buffer.
    ``lay_out`` makes arrays that own their memory views of the new buffer."""
    data = bucket[0]._data
    flat = _laid_out(bucket)
    if flat is None and len(bucket) == 1 and data.flags.c_contiguous:
        flat = data.reshape(-1)
    if flat is not None:            # the sum overwrites the arrays anyway: scale them
        if scale != 1.0:
            flat *= scale
        return flat, True
    xp = bucket[0]._ctx.array_module
    flat = xp.empty(sum(a.size for a in bucket), data.dtype)
    at = 0
    for a in bucket:
        flat[at:at + a.size] = a._data.reshape(-1)
        at += a.size
    if scale != 1.0:
        flat *= scale
    if not (lay_out and all(a._data.base is None for a in bucket)):
        return flat, False
    at = 0
    for a in bucket:
        a._data = flat[at:at + a.size].reshape(a.shape)
        at += a.size
    return flat, True


def _laid_out(bucket):
    """The buffer whose consecutive parts the bucket's arrays are, in order (as ``lay_out``
    leaves them), or None."""
    base = bucket[0]._data.base
    if base is None or base.ndim != 1 or base.dtype != bucket[0]._data.dtype \
            or base.size != sum(a.size for a in bucket):
        return None
    start, at = _address(base), 0
    for a in bucket:
        data = a._data
        if data.base is not base or not data.flags.c_contiguous \
                or _address(data) != start + at * base.itemsize:
            return None
        at += data.size
    return base


def _address(data):
    """Where the array's first element lies in memory (host or device)."""
    return data.ctypes.data if isinstance(data, np.ndarray) else data.data.ptr


def _unpack(flat, in_place, bucket, scale):
    """Write the buffer back into the bucket's arrays, scaled."""
    if scale != 1.0:
        flat *= scale
    if in_place:
        return
    at = 0
    for a in bucket:
        a._data[...] = flat[at:at + a.size].reshape(a.shape)
        at += a.size


class _NcclGroup:
    """An NCCL communicator over the workers' GPUs (one device each), bootstrapped over MPI:
    rank 0 makes the unique id and broadcasts it."""
    _DTYPES = {'float16': 'NCCL_FLOAT16', 'float32': 'NCCL_FLOAT32', 'float64': 'NCCL_FLOAT64',
               'int8': 'NCCL_INT8', 'uint8': 'NCCL_UINT8', 'int32': 'NCCL_INT32',
               'int64': 'NCCL_INT64'}

    def __init__(self, xp, nccl, comm):
        self.xp, self.nccl, self.comm = xp, nccl, comm

    @classmethod
    def make(cls, world, ctx):
        xp = ctx.array_module
        try:
            from cupy.cuda import nccl
            usable = nccl.available
        except ImportError:
            nccl, usable = None, False
        usable = usable and os.environ.get('HYBRIDLIB_DIST_NCCL', '1') != '0'
        with ctx.device_scope():
            device = xp.cuda.Device().pci_bus_id if usable else None
        every = world.allgather_object((usable, socket.gethostname(), device))
        if not all(u for u, _, _ in every) or len({(h, d) for _, h, d in every}) < len(every):
            return None
        uid = world.allgather_object(nccl.get_unique_id() if world.rank == 0 else None)[0]
        with ctx.device_scope():
            return cls(xp, nccl, nccl.NcclCommunicator(world.size, uid, world.rank))

    def run(self, flat, what, root=0):
        """``allreduce`` (sum) or ``broadcast`` from ``root`` of the device buffer ``flat``,
        in place, on the current stream (which then holds the result, as for any operator)."""
        dtype = self._DTYPES.get(flat.dtype.name)
        if dtype is None:
            raise MXNetError(f'NCCL cannot reduce {flat.dtype.name} arrays')
        dtype = getattr(self.nccl, dtype)
        stream = self.xp.cuda.get_current_stream().ptr
        ptr = flat.data.ptr
        if what == 'allreduce':
            self.comm.allReduce(ptr, ptr, flat.size, dtype, self.nccl.NCCL_SUM, stream)
        else:
            self.comm.bcast(ptr, flat.size, dtype, root, stream)


def broadcast_after_init(param, root=0):
    """Make the deferred initialisation of ``param`` (a Parameter whose shape is known at its
    first forward) end with a broadcast of worker ``root``'s values, so that every worker's
    first forward already runs on the same weights. The workers reach it together, in the
    first forward. Asking twice before the initialisation changes nothing."""
    if '_init_impl' in vars(param):
        return                                  # already made to broadcast
    init_impl = param._init_impl

    def init_then_broadcast(self, *args, **kwargs):
        init_impl(*args, **kwargs)
        del self._init_impl                     # once: back to the class's method
        # the shapes were not known to compare before: a broadcast of different sizes would
        # fail inside MPI, or worse
        world().check_same_parameters('a parameter initialised at the first forward', [self])
        world().broadcast_(self._check_and_get(self._data, list), root)

    param._init_impl = types.MethodType(init_then_broadcast, param)


def _buckets(arrays):
    """(context, bucket): ``arrays`` grouped by context and dtype, in order, each group cut
    into buckets of at most ``_BUCKET_BYTES`` (an array larger than that is a bucket of its
    own)."""
    groups = {}
    for a in arrays:
        groups.setdefault((a._ctx, a._data.dtype), []).append(a)
    for (ctx, _), group in groups.items():
        bucket, size = [], 0
        for a in group:
            nbytes = a.size * a._data.dtype.itemsize
            if bucket and size + nbytes > _BUCKET_BYTES:
                yield ctx, bucket
                bucket, size = [], 0
            bucket.append(a)
            size += nbytes
        if bucket:
            yield ctx, bucket


def _show(entry):
    name, shape, dtype = entry
    return f'{name!r} of shape {tuple(shape)} ({dtype})'


def _abort_on_exception(comm):
    """Make an uncaught exception stop every worker of the job, not only this one."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        if issubclass(kind, KeyboardInterrupt):
            return previous(kind, value, tb)
        text = ''.join(traceback.format_exception(kind, value, tb))
        sys.stderr.write(f'hybridlib: worker rank {comm.rank} of {comm.size} failed; stopping '
                         'the job:\n' + text)
        sys.stderr.flush()
        folder = launch_folder()
        if folder:          # for hybridlib.launch, which says what failed whatever MPI relays
            try:
                with open(os.path.join(folder, f'failed{comm.rank}'), 'w') as f:
                    f.write(text)
            except OSError:
                pass        # the abort below matters more
        # the abort kills every worker at once: give the MPI launcher a moment to relay the
        # output first
        time.sleep(_ABORT_GRACE)
        comm.comm.Abort(1)

    sys.excepthook = hook
