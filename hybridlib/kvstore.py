"""Key-value stores (``mx.kv``): MXNet's ``local`` and ``device`` KVStores in one process, and
the distributed ``dist_sync``, ``dist_device_sync`` and ``horovod`` across the workers of an MPI
job (``DistKVStore``).

A KVStore keeps one array per key. ``push`` sums the values given for a key (the gradients of
one parameter on several devices) and either stores the sum or, once an optimizer is set
(``set_optimizer``), hands it to the updater, which updates the stored weight; ``pull`` copies
the stored array into arrays on any contexts. That is what a Trainer needs to keep the copies
of a parameter on several contexts in step.

The stored copy lives on CPU for ``local`` (as MXNet, which merges in CPU memory) and on the
context of the first value given to ``init`` otherwise.

A distributed store is the same store on every worker (``dist.py``: the workers of one MPI job,
no servers). ``init`` takes rank 0's value on every worker; ``push`` sums the values over the
local devices and then over the workers, so every worker holds the same sum and, with an
optimizer, applies the same update to the same weights. As with MXNet's ``dist_sync``, the
sum is not divided: ``trainer.step(batch_size)`` with each worker's own batch size trains as
one process would with a learning rate ``num_workers`` times larger, and with the total batch
size as one process on the whole batches. ``dist_async`` (updates without waiting for the
other workers) is not supported: it raises, naming the synchronous types. ``byteps``, gradient
compression and row_sparse pulls are not supported either and raise ``NotSupportedError``.
"""
import os

from . import dist, optimizer as opt, optimizer_states
from .base import MXNetError, NotSupportedError
from .context import cpu
from .ndarray import NDArray
from .serialization import atomic_write

__all__ = ['KVStoreBase', 'KVStore', 'DistKVStore', 'TestStore', 'create', 'is_distributed']

_LOCAL_TYPES = ('local', 'device', 'nccl', 'local_update_cpu', 'local_allreduce_cpu',
                'local_allreduce_device')
# the stored copy of these lives on CPU, of the others on the values' context
_CPU_TYPES = ('local', 'local_update_cpu', 'dist_sync')
DIST_TYPES = ('dist_sync', 'dist_device_sync', 'dist_sync_device', 'horovod')
_LAUNCH = 'start the workers alone with python -m hybridlib.launch -n N script.py (or mpiexec)'


def _refuse_server_roles():
    """MXNet's parameter-server launcher starts the script as servers and a scheduler too
    (``DMLC_ROLE``), which in MXNet serve from ``import mxnet`` and exit. hybridlib has none:
    such a process stops at once, saying how to launch instead, rather than train alone."""
    role = os.environ.get('DMLC_ROLE')
    if role in ('server', 'scheduler'):
        raise SystemExit(f"hybridlib: this process was started as MXNet's parameter-server "
                         f'{role} (DMLC_ROLE={role}), and hybridlib has no servers: {_LAUNCH}')


_refuse_server_roles()


class KVStoreBase:
    """The interface of key-value stores (``mx.kv.KVStoreBase``) and its registry."""
    OPTIMIZER = 'optimizer'
    kv_registry = {}

    @staticmethod
    def register(klass):
        """Register a KVStore class under its lower-cased name (for ``create``)."""
        assert isinstance(klass, type)
        KVStoreBase.kv_registry[klass.__name__.lower()] = klass
        return klass

    def broadcast(self, key, value, out, priority=0):
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        raise NotImplementedError()

    def is_capable(self, capability):
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        raise NotImplementedError()

    @property
    def type(self):
        raise NotImplementedError()

    @property
    def rank(self):
        raise NotImplementedError()

    @property
    def num_workers(self):
        raise NotImplementedError()


@KVStoreBase.register
class TestStore(KVStoreBase):
    """MXNet's key-value store for tests (``create('teststore')``): ``pushpull`` sums a list
    of values into each output, ``broadcast`` copies; it keeps nothing and takes no optimizer.
    """

    def broadcast(self, key, value, out, priority=0):
        """Copy ``value`` into ``out`` (an NDArray or a list of them)."""
        for o in out if isinstance(out, list) else [out]:
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        """Sum ``value`` (a list of NDArrays) into ``out``, or into each value without one."""
        if isinstance(value, NDArray):
            if out is not None:
                self.broadcast(key, value, out)
            return
        self.broadcast(key, _sum(value, value[0].context), value if out is None else out)

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError(f'Unknown capability: {capability}')

    @property
    def type(self):
        return 'teststore'

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1


class KVStore(KVStoreBase):
    """A key-value store of one process (``local``, ``device``); make one with ``create``.

    Keys are ints or strings (not mixed). Values are NDArrays, lists of NDArrays (one per
    device, summed by ``push``), or lists of those for lists of keys.
    """

    def __init__(self, name='local'):
        self._type = name
        self._store = {}
        self._key_type = None
        self._updater = None

    # -- properties -------------------------------------------------------------------------------
    @property
    def type(self):
        """The store's type name (``'local'``, ``'device'``, ...)."""
        return self._type

    @property
    def rank(self):
        """This worker's rank: always 0 in one process."""
        return 0

    @property
    def num_workers(self):
        """The number of workers: always 1 in one process."""
        return 1

    def is_capable(self, capability):
        """Whether the store supports ``capability`` (only ``'optimizer'`` is known)."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError(f'Unknown capability: {capability}')

    # -- keys and values --------------------------------------------------------------------------
    def _pairs(self, key, value, what):
        """[(key, [NDArray, ...]), ...] from MXNet's key/value conventions."""
        if isinstance(key, (list, tuple)):
            if not isinstance(value, (list, tuple)) or len(key) != len(value):
                raise MXNetError(f'{what}: {len(key)} keys need as many values')
            return [(self._check_key(k), _arrays(v, what)) for k, v in zip(key, value)]
        return [(self._check_key(key), _arrays(value, what))]

    def _check_key(self, key):
        if not isinstance(key, (int, str)):
            raise MXNetError(f'KVStore keys must be int or str, got {type(key).__name__}')
        kind = str if isinstance(key, str) else int
        if self._key_type is not None and kind is not self._key_type:
            raise MXNetError('Mixed key types are not allowed: this KVStore has '
                             f'{self._key_type.__name__} keys, got {key!r}')
        self._key_type = kind
        return key

    def _stored(self, key):
        if key not in self._store:
            raise MXNetError(f'key {key} has not been inited')
        return self._store[key]

    def init(self, key, value):
        """Store an initial value for each key (once per key)."""
        for k, values in self._pairs(key, value, 'init'):
            if k in self._store:
                raise MXNetError(f'duplicate init of key {k}. Please double check if you called '
                                 'kv.init or kv.broadcast with this key multiple times')
            ctx = cpu() if self._type in _CPU_TYPES else values[0].context
            self._store[k] = values[0].copyto(ctx)

    def push(self, key, value, priority=0):
        """Sum the values of each key; the updater (if set) applies the sum to the stored
        array, else the sum replaces it."""
        pairs = [(k, self._stored(k), values) for k, values in self._pairs(key, value, 'push')]
        merged = [_sum(values, stored.context) for _, stored, values in pairs]
        self._reduce(merged)
        for (k, stored, _), total in zip(pairs, merged):
            if self._updater is not None:
                self._updater(k, total, stored)
            else:
                stored[:] = total

    def _reduce(self, merged):
        """Sum each of the merged values over the workers, in place: nothing in one process."""

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored array of each key into ``out`` (one array or one per device)."""
        assert out is not None
        for k, outs in self._pairs(key, out, 'pull'):
            stored = self._stored(k)
            for o in outs:
                if o.shape != stored.shape:
                    raise MXNetError(f'pull of key {k}: operands shape mismatch from.shape = '
                                     f'{stored.shape} to.shape={o.shape}')
                stored.copyto(o)

    def pushpull(self, key, value, out=None, priority=0):
        """``push`` then ``pull``, into ``value`` itself when ``out`` is None."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key, value, out, priority=0):
        """``init`` each key with ``value`` and ``pull`` it into ``out``."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Not supported: hybridlib has no row_sparse arrays."""
        raise NotSupportedError('row_sparse_pull needs row_sparse arrays, which hybridlib does '
                                'not have; use pull')

    def set_gradient_compression(self, compression_params):
        """Not supported: gradients are summed uncompressed."""
        raise NotSupportedError(f'gradient compression ({compression_params}) is not supported '
                                'by hybridlib\'s KVStore; leave compression_params unset')

    # -- optimizer --------------------------------------------------------------------------------
    def set_optimizer(self, optimizer):
        """Update stored arrays with ``optimizer`` on each push (as ``_set_updater``)."""
        self._set_updater(opt.get_updater(optimizer))

    def _set_updater(self, updater):
        """Call ``updater(key, merged_value, stored_array)`` on each push."""
        self._updater = updater

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Save the updater's states (see ``optimizer.Updater.get_states`` for the format)."""
        assert self._updater is not None, 'Cannot save states for distributed training'
        atomic_write(fname, self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        """Load states saved by ``save_optimizer_states``."""
        assert self._updater is not None, 'Cannot load states for distributed training'
        optimizer_states.load_file(fname, [self._updater])

    def barrier(self):
        """Wait for every worker: nothing to wait for in one process."""

    _barrier = barrier


class DistKVStore(KVStore):
    """A KVStore shared by the workers of an MPI job (``dist_sync``, ``dist_device_sync``,
    ``horovod``); make one with ``create``. Every call that changes the store (``init``,
    ``push``, ``pushpull``, ``broadcast``) is collective: every worker makes it, with the same
    keys in the same order."""

    def __init__(self, name='dist_sync'):
        super().__init__(name)
        self._comm = dist.world()
        launched = os.environ.get('DMLC_NUM_WORKER')
        if launched and launched != str(self._comm.size):
            # alone, each worker would train a model of its own, silently
            raise MXNetError(
                f"kvstore '{name}': this worker was started by MXNet's parameter-server launcher "
                f'(DMLC_NUM_WORKER={launched}) but is one of {self._comm.size} in its MPI job. '
                f'hybridlib has no servers: {_LAUNCH}')

    @property
    def rank(self):
        """This worker's rank, 0 .. num_workers - 1."""
        return self._comm.rank

    @property
    def num_workers(self):
        """The number of workers in the job."""
        return self._comm.size

    def is_capable(self, capability):
        """``'optimizer'``: whether the store updates the weights on push (not ``horovod``,
        which only sums, as Horovod's KVStore)."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return self._type != 'horovod'
        raise ValueError(f'Unknown capability: {capability}')

    def init(self, key, value):
        """Store rank 0's value of each key on every worker. The workers must give the same
        keys, shapes and dtypes: a worker that differs makes every worker raise."""
        pairs = self._pairs(key, value, 'init')
        self._comm.check_same('the KVStore keys (init)', [
            (k, values[0].shape, values[0]._data.dtype.name) for k, values in pairs])
        super().init(key, value)
        self._comm.broadcast_([self._store[k] for k, _ in pairs], root=0)

    def _reduce(self, merged):
        self._comm.allreduce_(merged)

    def pushpull_gradients(self, keys, grads, out=None):
        """A Trainer's ``pushpull`` of its Parameters' gradients (a list per key, one per
        device), without copying them: where every key has one gradient, on its stored
        array's context, the gradients are summed in place, in the buffers they become views
        of (``allreduce_(lay_out=True)``). With an optimizer the stored weights are updated
        from there and copied into ``out``; without, the gradients hold the sums, which are
        not kept in the store (the Trainer never pulls them)."""
        stored = [self._stored(k) for k in keys]
        if any(len(g) != 1 or g[0].context != s.context for g, s in zip(grads, stored)):
            return self.pushpull(keys, grads, out=out)
        arrays = [g[0] for g in grads]
        self._comm.allreduce_(arrays, lay_out=True)
        if self._updater is not None:
            for k, g, s in zip(keys, arrays, stored):
                self._updater(k, g, s)
        if out is not None:
            self.pull(keys, out)

    def set_optimizer(self, optimizer):
        """Update the stored weights with ``optimizer`` on each push, on every worker (there
        are no servers)."""
        if self._type == 'horovod':
            raise NotSupportedError('the horovod KVStore only sums gradients; the Trainer '
                                    'updates the weights (update_on_kvstore=False)')
        super().set_optimizer(optimizer)

    def barrier(self):
        """Wait until every worker has reached this call."""
        self._comm.barrier()

    _barrier = barrier


def _arrays(value, what):
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise MXNetError(f'{what}: no values given')
    for v in values:
        if not isinstance(v, NDArray):
            raise TypeError(f'{what}: values must be NDArrays, got {type(v).__name__}')
    return values


def _sum(values, ctx):
    """The sum of ``values`` on ``ctx``, in a new array."""
    total = values[0].copyto(ctx)
    for v in values[1:]:
        total += v.as_in_context(ctx)
    return total


def is_distributed(name):
    """Whether the KVStore type ``name`` spans the workers of a job (``dist_*`` as MXNet says
    it, and ``horovod``), supported or not."""
    name = name.lower()
    return 'dist' in name or name in DIST_TYPES


def create(name='local'):
    """A new KVStore: ``'local'`` (merges on CPU), ``'device'`` (merges on the devices'
    context), another single-process MXNet type (``'nccl'``, ``'local_update_cpu'``,
    ``'local_allreduce_cpu'``, ``'local_allreduce_device'``), a distributed one across the
    workers of an MPI job (``'dist_sync'``, ``'dist_device_sync'``, ``'horovod'``; needs the
    ``dist`` extra) or a registered class name."""
    if not isinstance(name, str):
        raise TypeError('name must be a string')
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if name in _LOCAL_TYPES:
        return KVStore(name)
    if name in DIST_TYPES:
        return DistKVStore(name)
    if name.startswith('dist') and 'async' in name:
        raise NotSupportedError(f'KVStore type {name!r}: asynchronous updates are not supported '
                                f'by hybridlib; use a synchronous type ({", ".join(DIST_TYPES)})')
    raise MXNetError(f'Unknown KVStore type {name!r}; hybridlib supports '
                     f'{", ".join(_LOCAL_TYPES + DIST_TYPES)}')
