"""``hybridlib.horovod``: the API of ``horovod.mxnet`` on hybridlib's MPI workers (``dist.py``).

Horovod-era Gluon scripts run unchanged: with the ``mxnet`` alias installed (``python -m
hybridlib``, ``python -m hybridlib.launch``), ``import horovod.mxnet as hvd`` gives this module
when the real Horovod is not installed. Launch them with ``python -m hybridlib.launch -n N
script.py`` where Horovod used ``horovodrun -np N python script.py``.

As Horovod:

* ``allreduce`` averages by default (``average=False`` or ``op=Sum`` sums); the trailing-
  underscore forms work in place. ``name`` and ``priority`` are accepted and unused: every
  call is collective and runs at once, so the workers must make the same calls in the same
  order.
* ``DistributedTrainer`` is a Gluon Trainer without a KVStore that sums each step's gradients
  over the workers and divides its gradient scale by their number, so ``step(batch_size)``
  with each worker's own batch size trains as one process on the whole batches.
  ``DistributedOptimizer`` does the same inside an optimizer's ``update``.
* ``broadcast_parameters`` copies rank 0's parameters to every worker; a parameter whose
  initialisation is deferred is broadcast once it is initialised.

Gradients are summed in a few large fused buffers (``dist.py``), so ``num_groups`` changes
nothing. ``Adasum`` and ``alltoall`` are not supported.
"""
import warnings

import numpy as np

from . import dist, ndarray as nd, optimizer as _opt
from .base import NotSupportedError
from .ndarray import NDArray
from .parameter import DeferredInitializationError, Parameter, ParameterDict
from .trainer import Trainer

__all__ = ['init', 'shutdown', 'is_initialized', 'rank', 'size', 'local_rank', 'local_size',
           'cross_rank', 'cross_size', 'mpi_threads_supported', 'mpi_enabled', 'mpi_built',
           'gloo_enabled', 'gloo_built', 'nccl_built', 'ddl_built', 'ccl_built', 'cuda_built',
           'rocm_built', 'Average', 'Sum', 'Adasum', 'allreduce', 'allreduce_',
           'grouped_allreduce', 'grouped_allreduce_', 'allgather', 'broadcast', 'broadcast_',
           'broadcast_parameters', 'Compression', 'DistributedOptimizer', 'DistributedTrainer']

# reduction ops (Horovod's values)
Average, Sum, Adasum = 0, 1, 2


# -------------------------------------------------------------------------------------------------
# The job
# -------------------------------------------------------------------------------------------------

def init(comm=None):
    """Join the job (an mpi4py communicator ``comm`` instead of COMM_WORLD)."""
    if comm is not None and not hasattr(comm, 'Get_rank'):
        raise NotSupportedError('hvd.init(comm): give an mpi4py communicator; lists of ranks '
                                'are not supported')
    dist.world(comm)


def shutdown():
    """Nothing to release: MPI is finalised when the process exits."""


def is_initialized():
    return dist.initialized()


def _world():
    if not dist.initialized():
        raise ValueError('Horovod has not been initialized; use hvd.init().')
    return dist.world()


def rank():
    return _world().rank


def size():
    return _world().size


def local_rank():
    return _world().local_rank


def local_size():
    return _world().local_size


def cross_rank():
    """This machine's index among the machines (workers of one machine share it)."""
    return rank() // local_size()


def cross_size():
    return size() // local_size()


def mpi_threads_supported():
    return _world().MPI.Query_thread() == _world().MPI.THREAD_MULTIPLE


def mpi_enabled():
    return True


def mpi_built():
    return True


def gloo_enabled():
    return False


gloo_built = gloo_enabled


def nccl_built():
    return 0


def ddl_built():
    return False


ccl_built = rocm_built = ddl_built


def cuda_built():
    return False


# -------------------------------------------------------------------------------------------------
# Collectives
# -------------------------------------------------------------------------------------------------

def _average(average, op):
    if average is not None and op is not None:
        raise ValueError('The op parameter supersedes average. Please provide only one of them.')
    if op is None:
        return average is None or bool(average)
    if op == Adasum:
        raise NotSupportedError('Adasum is not supported by hybridlib.horovod; use Average or Sum')
    if op not in (Average, Sum):
        raise ValueError(f'unknown allreduce op {op!r}: Average or Sum')
    return op == Average


def _check(tensor, what):
    if not isinstance(tensor, NDArray):
        raise TypeError(f'{what} takes an NDArray, got {type(tensor).__name__}')
    return tensor


def _allreduce(tensors, what, copy, average, op, prescale, postscale):
    """The allreduce of ``tensors`` (fused), in place or on copies; returns them."""
    tensors = [_check(t, what) for t in tensors]
    if copy:
        tensors = [t.copy() for t in tensors]
    return _world().allreduce_(tensors, _average(average, op), prescale, postscale)


def allreduce_(tensor, average=None, name=None, priority=0, prescale_factor=1.0,
               postscale_factor=1.0, process_set=None, op=None):
    """Sum (or average) ``tensor`` over the workers, in place; returns it."""
    return _allreduce([tensor], 'allreduce_', False, average, op, prescale_factor,
                      postscale_factor)[0]


def allreduce(tensor, average=None, name=None, priority=0, prescale_factor=1.0,
              postscale_factor=1.0, process_set=None, op=None):
    """The sum (or average) of ``tensor`` over the workers, in a new array."""
    return _allreduce([tensor], 'allreduce', True, average, op, prescale_factor,
                      postscale_factor)[0]


def grouped_allreduce_(tensors, average=None, name=None, priority=0, prescale_factor=1.0,
                       postscale_factor=1.0, process_set=None, op=None):
    """``allreduce_`` of each of ``tensors``, fused; returns them."""
    return _allreduce(tensors, 'grouped_allreduce_', False, average, op, prescale_factor,
                      postscale_factor)


def grouped_allreduce(tensors, average=None, name=None, priority=0, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=None, op=None):
    """``allreduce`` of each of ``tensors``, fused, into new arrays."""
    return _allreduce(tensors, 'grouped_allreduce', True, average, op, prescale_factor,
                      postscale_factor)


def allgather(tensor, name=None, priority=0, process_set=None):
    """The workers' ``tensor`` joined along the first axis (whose length may differ between
    workers), on ``tensor``'s context."""
    tensor = _check(tensor, 'allgather')
    return nd.array(_world().allgather(tensor), ctx=tensor.context, dtype=tensor.dtype)


def broadcast_(tensor, root_rank, name=None, priority=0, process_set=None):
    """Overwrite ``tensor`` with worker ``root_rank``'s, in place; returns it."""
    _world().broadcast_([_check(tensor, 'broadcast_')], root_rank)
    return tensor


def broadcast(tensor, root_rank, name=None, priority=0, process_set=None):
    """Worker ``root_rank``'s ``tensor``, in a new array."""
    return broadcast_(_check(tensor, 'broadcast').copy(), root_rank)


def broadcast_parameters(params, root_rank=0, prefix=None):
    """Copy worker ``root_rank``'s parameters to every worker, in place.

    ``params``: a ParameterDict or a dict of names to Parameters or NDArrays (taken in sorted
    order, as Horovod). A Parameter whose initialisation is deferred is broadcast right after
    it is initialised (its first forward), which every worker reaches together.
    """
    if not isinstance(params, (ParameterDict, dict)):
        raise ValueError(f'invalid params of type: {type(params)}')
    items = sorted(params.items())
    world = _world()
    tensors, names = [], []
    for key, value in items:
        if isinstance(value, Parameter):
            try:
                value = value.data()
            except DeferredInitializationError:
                dist.broadcast_after_init(value, root_rank)
                continue
        if not isinstance(value, NDArray):
            raise ValueError(f'broadcast_parameters: {key!r} is a {type(value).__name__}, not a '
                             'Parameter or NDArray')
        tensors.append(value)
        names.append((str(key), value.shape, np.dtype(value.dtype).name))
    world.check_same('the parameters to broadcast', names)
    world.broadcast_(tensors, root_rank)


# -------------------------------------------------------------------------------------------------
# Training
# -------------------------------------------------------------------------------------------------

class Compression:
    """Gradient compression before the sum: ``Compression.none`` or ``Compression.fp16``."""

    class none:
        @staticmethod
        def compress(tensor):
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor

    class fp16:
        """Sum float32/float64 gradients as float16 (half the bytes), then cast back."""

        @staticmethod
        def compress(tensor):
            if np.dtype(tensor.dtype).kind == 'f' and tensor.dtype != np.float16:
                return tensor.astype(np.float16), tensor.dtype
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor if ctx is None else tensor.astype(ctx)


def _allreduce_grads(grads, compression, predivide):
    """Sum ``grads`` (NDArrays) over the workers in place, through ``compression``, each first
    divided by ``predivide``."""
    if size() == 1:
        return
    compressed = [compression.compress(g) for g in grads]
    # uncompressed, the gradients become views of the buffers they are summed in, for good
    _world().allreduce_([c for c, _ in compressed], False, 1.0 / predivide, 1.0,
                        lay_out=compression is Compression.none)
    for g, (c, ctx) in zip(grads, compressed):
        if c is not g:
            g[:] = compression.decompress(c, ctx)


class DistributedOptimizer(_opt.Optimizer):
    """An optimizer that sums each gradient over the workers before the wrapped optimizer's
    update; its gradient scale is divided by their number (an average, as Horovod).

    Everything but the updates is the wrapped optimizer's own: reading or setting any other
    attribute (``rescale_grad``, which a Trainer sets each step, ``lr``, the update counts)
    reaches it, so that it never works from values the wrapper shadows."""
    _OWN = frozenset(('_optimizer', '_gradient_predivide_factor', '_num_groups', '_do_allreduce',
                      'update', 'update_multi_precision', '_OWN'))

    def __init__(self, optimizer, gradient_predivide_factor=1.0, num_groups=0):
        object.__setattr__(self, '_optimizer', optimizer)
        object.__setattr__(self, '_gradient_predivide_factor', gradient_predivide_factor)
        object.__setattr__(self, '_num_groups', num_groups)
        optimizer.rescale_grad *= gradient_predivide_factor / size()

    def __getattribute__(self, name):
        if name in DistributedOptimizer._OWN or name.startswith('__'):
            return object.__getattribute__(self, name)
        return getattr(object.__getattribute__(self, '_optimizer'), name)

    def __setattr__(self, name, value):
        setattr(self._optimizer, name, value)

    def _do_allreduce(self, grad):
        grads = list(grad) if isinstance(grad, (list, tuple)) else [grad]
        _allreduce_grads(grads, Compression.none, self._gradient_predivide_factor)

    def update(self, index, weight, grad, state):
        self._do_allreduce(grad)
        self._optimizer.update(index, weight, grad, state)

    def update_multi_precision(self, index, weight, grad, state):
        self._do_allreduce(grad)
        self._optimizer.update_multi_precision(index, weight, grad, state)


class DistributedTrainer(Trainer):
    """A Gluon Trainer whose ``step`` sums the gradients over the workers (fused, with
    ``compression``) before the update; the gradient scale is divided by the number of
    workers, so gradients are averaged. No KVStore is used."""

    def __init__(self, params, optimizer, optimizer_params=None, compression=Compression.none,
                 gradient_predivide_factor=1.0, prefix=None, num_groups=0):
        if isinstance(optimizer, DistributedOptimizer):
            optimizer = optimizer._optimizer
            warnings.warn('DistributedTrainer does not take DistributedOptimizer as its '
                          'optimizer. We have unwrapped it for you.')
        self._compression = compression
        self._gradient_predivide_factor = gradient_predivide_factor
        self._prefix = prefix or ''
        self._num_groups = num_groups
        super().__init__(params, optimizer, optimizer_params=optimizer_params, kvstore=None)
        self._scale *= gradient_predivide_factor / size()
        self._shapes_checked = False
        self._check_same_params()

    def _check_same_params(self):
        """The workers must train the same parameters, in the same order; the shapes are
        compared again at the first step, once deferred shapes are known."""
        _world().check_same_parameters('the DistributedTrainer\'s parameters', self._params)

    def _allreduce_grads(self, params):
        if not self._shapes_checked:
            self._check_same_params()
            self._shapes_checked = True
        # every trainable parameter, stale or not, so that every worker makes the same call
        grads = [g for p in self._params if p.grad_req != 'null' for g in p.list_grad()]
        _allreduce_grads(grads, self._compression, self._gradient_predivide_factor)
