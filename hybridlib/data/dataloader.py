"""The DataLoader (``gluon.data.dataloader``): mini-batches from a dataset, in this process, in
worker processes, or in a thread pool.

Worker processes are forked (where the platform can) with the dataset and the batchify function
as inherited globals, so lambdas and open record files work as in MXNet. Each worker starts from
a clean state: autograd off, the cpu as the current context, and its own random seeds (drawn
from the parent's generator, so a run seeded with ``mx.random.seed`` repeats, while the workers'
random augmentations differ from each other). Batches come back through pickle, where an NDArray
travels as its numpy data (``reduce_ndarray``, registered with ``ForkingPickler``; MXNet sends a
handle to shared memory instead).

``DataLoaderV1`` is MXNet's older loader: worker processes that loop over a queue of batch keys
(``worker_loop_v1``), a thread in this process that collects their batches (``fetcher_loop_v1``),
and new workers for each pass. A worker's exception, or a worker that dies, reaches the caller
instead of leaving it waiting forever as in MXNet.
"""
import contextlib
import multiprocessing
import multiprocessing.pool
import multiprocessing.queues
import signal
import sys
from multiprocessing.reduction import ForkingPickler
import threading
import time

import numpy as np

from .. import autograd
from .. import ndarray as nd
from .. import random as _random
from ..base import MXNetAssertionError
from ..context import Context, cpu, cpu_pinned
from . import sampler as _sampler

__all__ = ['DataLoader']

# how often (seconds) a wait for a worker's batch checks that the worker processes are alive
_POLL_INTERVAL = 1.0


def _start_method_context():
    # fork keeps unpicklable datasets (lambdas in transforms) working, as in MXNet
    if 'fork' in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context('fork')
    return multiprocessing.get_context()


# -- NDArrays between processes ---------------------------------------------------------------

def rebuild_ndarray(state):
    """The NDArray that ``reduce_ndarray`` took apart: ``state`` is its numpy data and context.

    Returns
    -------
    NDArray
        An array equal to the one reduced (values, shape, dtype, context).
    """
    array = nd.NDArray.__new__(nd.NDArray)
    array.__setstate__(state)
    return array


def reduce_ndarray(data):
    """Take an NDArray apart for pickling: ``(rebuild_ndarray, args)``.

    The state is the NDArray's own pickled state, its data as a numpy array (copied from the
    GPU for a GPU array) and its context, so ``rebuild_ndarray(*args)`` can run any number of
    times, in any process. MXNet's version moves the data to shared memory and sends a file
    descriptor that can be opened once.
    """
    return rebuild_ndarray, (data.__getstate__(),)


# what multiprocessing sends (pool results, queues, connections) pickles NDArrays this way
ForkingPickler.register(nd.NDArray, reduce_ndarray)


class ConnectionWrapper:
    """A ``multiprocessing`` connection whose ``send``/``recv`` pickle with ``ForkingPickler``
    (so NDArrays travel by ``reduce_ndarray``); every other attribute is the connection's.

    Parameters
    ----------
    conn : multiprocessing.connection.Connection
        The connection to wrap.
    """

    def __init__(self, conn):
        self._conn = conn

    def send(self, obj):
        """Send a picklable object."""
        self.send_bytes(ForkingPickler.dumps(obj))

    def recv(self):
        """Receive an object that ``send`` sent."""
        return ForkingPickler.loads(self.recv_bytes())

    def __getattr__(self, name):
        # through __dict__: unpickling looks up attributes before _conn exists
        return getattr(self.__dict__.get('_conn', None), name)


class _WrappedConnections:
    """Gives a ``multiprocessing`` queue ``ConnectionWrapper``\\ s for its connections, and by
    default the context the workers start with (fork where the platform has it)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault('ctx', _start_method_context())
        super().__init__(*args, **kwargs)
        self._reader = ConnectionWrapper(self._reader)
        self._writer = ConnectionWrapper(self._writer)


class Queue(_WrappedConnections, multiprocessing.queues.Queue):
    """A ``multiprocessing`` queue whose connections are ``ConnectionWrapper``\\ s.

    It pickles with ``ForkingPickler`` (NDArrays as ``reduce_ndarray`` makes them). It takes
    the arguments of ``multiprocessing.Queue``; its context is the one the workers start with
    (fork where the platform has it) unless ``ctx`` is given.
    """


class SimpleQueue(_WrappedConnections, multiprocessing.queues.SimpleQueue):
    """A ``multiprocessing`` SimpleQueue (no feeder thread: ``put`` writes to the pipe at once)
    whose connections are ``ConnectionWrapper``\\ s; see ``Queue``."""


# -- batchify ---------------------------------------------------------------------------------

def _batchify(data, ctx):
    if isinstance(data[0], nd.NDArray):
        out = nd.stack(*data)
        return out if ctx is None else out.as_in_context(ctx)
    if isinstance(data[0], tuple):
        return [_batchify(list(field), ctx) for field in zip(*data)]
    try:
        array = np.asarray(data)
    except ValueError as err:       # ragged samples
        raise ValueError(f'default_batchify_fn cannot stack samples of different shapes '
                         f'({err}); pad them or give the DataLoader a batchify_fn') from None
    if array.dtype.kind not in 'biuf':
        raise TypeError(f'default_batchify_fn cannot make an NDArray of samples of type '
                        f'{type(data[0]).__name__} (numpy dtype {array.dtype}); convert them '
                        'to numbers in a transform or give the DataLoader a batchify_fn')
    return nd.array(array, ctx=ctx, dtype=array.dtype)


def default_batchify_fn(data):
    """Collate a list of samples into a batch.

    NDArrays are stacked along a new first axis; tuples give a list with one batch per field
    (recursively); numbers and numpy arrays become one NDArray of their numpy dtype (Python
    ints give int64, floats float64).
    """
    return _batchify(data, None)


def default_mp_batchify_fn(data):
    """``default_batchify_fn`` for worker processes and threads: the batch is on ``cpu(0)``.

    MXNet puts it in shared memory (``cpu_shared(0)``); here it leaves the worker as numpy data.
    """
    return _batchify(data, cpu())


def _as_in_context(data, ctx):
    """Move an NDArray, or the NDArrays in nested lists and tuples, to ``ctx``."""
    if isinstance(data, nd.NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


def _make_batch_sampler(dataset, batch_size, shuffle, sampler, last_batch, batch_sampler):
    """The batch sampler that a DataLoader's arguments describe (MXNet's checks and messages)."""
    if batch_sampler is None:
        if batch_size is None:
            raise ValueError('batch_size must be specified unless '
                             'batch_sampler is specified')
        if sampler is None:
            if shuffle:
                sampler = _sampler.RandomSampler(len(dataset))
            else:
                sampler = _sampler.SequentialSampler(len(dataset))
        elif shuffle:
            raise ValueError('shuffle must not be specified if sampler is specified')
        return _sampler.BatchSampler(sampler, batch_size, last_batch if last_batch else 'keep')
    if batch_size is not None or shuffle or sampler is not None or last_batch is not None:
        raise ValueError('batch_size, shuffle, sampler and last_batch must '
                         'not be specified if batch_sampler is specified.')
    return batch_sampler


def _same_process_iter(dataset, batch_sampler, batchify_fn, pin_memory, pin_device_id):
    """The batches made in this process (``num_workers=0``)."""
    for batch in batch_sampler:
        ret = batchify_fn([dataset[idx] for idx in batch])
        if pin_memory:
            ret = _as_in_context(ret, cpu_pinned(pin_device_id))
        yield ret


# -- worker processes -------------------------------------------------------------------------

@contextlib.contextmanager
def _sigint_ignored():
    """Worker processes started inside ignore Ctrl-C: the parent handles it and stops them."""
    if threading.current_thread() is not threading.main_thread():
        yield       # only the main thread may set signal handlers
        return
    original_sigint_handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, original_sigint_handler)


def _draw_base_seed():
    """A seed for a set of workers, from this process's generator (``mx.random.seed``)."""
    return int(_random.generator(np).integers(2 ** 63))


def _start_worker(base_seed, index):
    """Clear what a forked worker copied from its parent and seed it as worker ``index``."""
    autograd.set_recording(False)
    autograd.set_training(False)
    Context._local.value = None     # a `with mx.gpu():` of the parent must not apply here
    seed = np.random.SeedSequence([base_seed, index]).generate_state(2)
    _random.seed(int(seed[0]))
    np.random.seed(int(seed[1]))


def _dead_worker_error(workers):
    """The error to raise for the first of the processes ``workers`` that has exited, or None."""
    for worker in workers:
        if worker.exitcode is not None:
            return RuntimeError(f'DataLoader worker (pid {worker.pid}) exited unexpectedly with '
                                f'exit code {worker.exitcode} (killed, out of memory, or a crash '
                                'in native code); its batch is lost. Run with num_workers=0 to '
                                'see the error in this process.')
    return None


# global per worker process (set by the pool's initializer): each process opens its own
# record files and so on
_worker_dataset = None
_worker_batchify_fn = None


def _worker_initializer(dataset, batchify_fn, counter, base_seed):
    """Start a pool's worker process: keep the dataset, clear what the fork copied."""
    global _worker_dataset, _worker_batchify_fn
    _worker_dataset = dataset
    _worker_batchify_fn = batchify_fn
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    _start_worker(base_seed, index)


def _worker_fn(samples, batchify_fn=None, dataset=None):
    """Make one batch in a worker process (the dataset and batchify_fn are its globals)."""
    return _worker_batchify_fn([_worker_dataset[i] for i in samples])


def _thread_worker_fn(samples, batchify_fn, dataset):
    """Make one batch in a pool thread."""
    return batchify_fn([dataset[i] for i in samples])


class _MultiWorkerIter:
    """Iterates over the batches that a worker pool makes, in the sampler's order."""

    def __init__(self, worker_pool, batchify_fn, batch_sampler, pin_memory=False,
                 pin_device_id=0, worker_fn=_worker_fn, prefetch=0, dataset=None,
                 data_loader=None, timeout=120):
        self._worker_pool = worker_pool
        self._batchify_fn = batchify_fn
        self._batch_sampler = batch_sampler
        self._data_buffer = {}
        self._rcvd_idx = 0
        self._sent_idx = 0
        self._iter = iter(self._batch_sampler)
        self._worker_fn = worker_fn
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._dataset = dataset
        self._data_loader = data_loader
        self._timeout = timeout
        for _ in range(prefetch):
            self._push_next()

    def __len__(self):
        return len(self._batch_sampler)

    def _push_next(self):
        """Give the next batch to the workers."""
        r = next(self._iter, None)
        if r is None:
            return
        async_ret = self._worker_pool.apply_async(
            self._worker_fn, (r, self._batchify_fn, self._dataset))
        self._data_buffer[self._sent_idx] = async_ret
        self._sent_idx += 1

    def __next__(self):
        self._push_next()
        if self._rcvd_idx == self._sent_idx:
            if self._data_buffer:
                raise MXNetAssertionError('Data buffer should be empty at this moment')
            raise StopIteration
        ret = self._data_buffer.pop(self._rcvd_idx)
        self._wait(ret)
        batch = ret.get(0)      # a worker's exception is raised here, with its traceback
        if self._pin_memory:
            batch = _as_in_context(batch, cpu_pinned(self._pin_device_id))
        self._rcvd_idx += 1
        return batch

    def _wait(self, ret):
        deadline = time.monotonic() + self._timeout
        while not ret.ready():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise multiprocessing.TimeoutError(self._timeout_message())
            ret.wait(min(remaining, _POLL_INTERVAL))
            if not ret.ready() and self._data_loader is not None:
                self._data_loader._check_workers()

    def _timeout_message(self):
        msg = (f'DataLoader worker timed out after {self._timeout} seconds while making batch '
               f'{self._rcvd_idx}. This might be caused by a slow transform: give the '
               'DataLoader a larger timeout to allow slower data loading in each worker.')
        if not isinstance(self._worker_pool, multiprocessing.pool.ThreadPool):
            msg += (' If the timeout is large enough, the workers may be short of memory: '
                    'use fewer num_workers.')
        return msg

    def next(self):
        return self.__next__()

    def __iter__(self):
        return self


class _Loader:
    """What DataLoader and DataLoaderV1 take alike: the dataset, which samples make each batch,
    the function that merges them, the number of workers and the pinning of the batches."""

    def __init__(self, dataset, batch_size, shuffle, sampler, last_batch, batch_sampler,
                 batchify_fn, num_workers, pin_memory, pin_device_id):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._batch_sampler = _make_batch_sampler(dataset, batch_size, shuffle, sampler,
                                                  last_batch, batch_sampler)
        self._num_workers = num_workers if num_workers >= 0 else 0
        if batchify_fn is None:
            batchify_fn = default_mp_batchify_fn if num_workers > 0 else default_batchify_fn
        self._batchify_fn = batchify_fn

    def __len__(self):
        return len(self._batch_sampler)


class DataLoader(_Loader):
    """Loads data from a dataset and returns mini-batches of data.

    Parameters
    ----------
    dataset : Dataset
        Source dataset. Numpy arrays and NDArrays can be used directly as datasets.
    batch_size : int
        Size of a mini-batch.
    shuffle : bool
        Whether to shuffle the samples (with ``RandomSampler``).
    sampler : Sampler
        The order of the samples. Give either ``sampler`` or ``shuffle``, not both.
    last_batch : {'keep', 'discard', 'rollover'}, default 'keep'
        What to do when ``batch_size`` does not divide ``len(dataset)``: keep a smaller last
        batch, discard it, or roll its samples over to the next epoch.
    batch_sampler : Sampler
        A sampler that yields lists of indices (mini-batches). Give it without
        ``batch_size``, ``shuffle``, ``sampler`` and ``last_batch``.
    batchify_fn : callable
        Merges a list of samples into a batch; default ``default_batchify_fn`` (stack
        NDArrays, recurse into tuples, make NDArrays of numbers and numpy arrays).
    num_workers : int, default 0
        The number of worker processes (threads with ``thread_pool``) that make batches;
        0 makes them in this process.
    pin_memory : bool, default False
        Return batches on ``cpu_pinned(pin_device_id)``.
    pin_device_id : int, default 0
        The device id of the pinned memory.
    prefetch : int, default ``2 * num_workers``
        How many batches the workers make ahead (with ``num_workers > 0``).
    thread_pool : bool, default False
        Use a pool of threads instead of processes.
    timeout : int, default 120
        Seconds to wait for a worker's batch before raising ``multiprocessing.TimeoutError``.
    auto_reload : bool, default False
        Start the workers on the next epoch's first batches as soon as an epoch ends (and on
        the first epoch's when the DataLoader is made).

    Examples
    --------
    >>> data = ArrayDataset(nd.arange(10).reshape((5, 2)), [0, 1, 0, 1, 1])
    >>> for x, y in DataLoader(data, batch_size=2, last_batch='discard'):
    ...     print(x.shape, y.dtype)
    (2, 2) <class 'numpy.int64'>
    (2, 2) <class 'numpy.int64'>
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None,
                 num_workers=0, pin_memory=False, pin_device_id=0,
                 prefetch=None, thread_pool=False, timeout=120, auto_reload=False):
        self._worker_pool = None
        self._workers = []
        if not timeout > 0:
            raise MXNetAssertionError('timeout must be positive, given {}'.format(timeout))
        super().__init__(dataset, batch_size, shuffle, sampler, last_batch, batch_sampler,
                         batchify_fn, num_workers, pin_memory, pin_device_id)
        self._thread_pool = thread_pool
        self._timeout = timeout
        self._prefetch = max(0, int(prefetch) if prefetch is not None
                             else 2 * self._num_workers)
        if self._num_workers > 0:
            self._start_pool()
        self.auto_reload = auto_reload
        if self.auto_reload:
            self.refresh()
        else:
            self.clean()

    def _start_pool(self):
        if self._thread_pool:
            self._worker_pool = multiprocessing.pool.ThreadPool(self._num_workers)
            return
        context = _start_method_context()
        with _sigint_ignored():
            self._worker_pool = context.Pool(
                self._num_workers, initializer=_worker_initializer,
                initargs=(self._dataset, self._batchify_fn, context.Value('i', 0),
                          _draw_base_seed()))
        self._workers = list(self._worker_pool._pool)

    def _check_workers(self):
        """Raise if a worker process died (its batch would never come)."""
        error = _dead_worker_error(self._workers)
        if error is not None:
            self._worker_pool.terminate()
            self._start_pool()      # a fresh pool for the next epoch
            raise error

    def __iter__(self):
        if self._iter is None:
            self.refresh()
        t = self._iter
        self._iter = None       # an iterator is used once
        for item in t:
            yield item
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _prefetch_iter(self):
        if self._num_workers == 0:
            return _same_process_iter(self._dataset, self._batch_sampler, self._batchify_fn,
                                      self._pin_memory, self._pin_device_id)
        # worker processes have the batchify_fn already (it need not pickle, as in MXNet)
        batchify_fn = self._batchify_fn if self._thread_pool else None
        return _MultiWorkerIter(self._worker_pool, batchify_fn, self._batch_sampler,
                                pin_memory=self._pin_memory, pin_device_id=self._pin_device_id,
                                worker_fn=_thread_worker_fn if self._thread_pool else _worker_fn,
                                prefetch=self._prefetch,
                                dataset=self._dataset if self._thread_pool else None,
                                data_loader=self, timeout=self._timeout)

    def __del__(self):
        pool = getattr(self, '_worker_pool', None)
        if pool is not None:
            # a pool is not terminated when it is collected (https://bugs.python.org/issue34172)
            pool.terminate()

    def refresh(self):
        """Start a new iterator (with ``num_workers``, the workers start on its batches)."""
        self._iter = self._prefetch_iter()

    def clean(self):
        """Drop the prefetched iterator; the next ``iter()`` starts a new one."""
        self._iter = None


# -- DataLoaderV1: workers that loop over a key queue -----------------------------------------

class _WorkerError:
    """A worker's exception on its way to the caller, with the worker's traceback (as text) as
    its ``__cause__``, as ``multiprocessing.pool`` sends them."""

    def __init__(self, error):
        self.error = error

    def __reduce__(self):
        error = self.error
        try:
            ForkingPickler.loads(ForkingPickler.dumps(error))
        except Exception as err:    # whatever unpickling the exception raises
            # an exception that does not survive pickling (an __init__ with other arguments)
            # would stop the fetcher: send its text instead
            error = RuntimeError(f'{type(error).__name__}: {error} (raised in a DataLoader '
                                 f'worker; it cannot be sent to this process: {err!r})')
        return _WorkerError, (multiprocessing.pool.ExceptionWithTraceback(
            error, self.error.__traceback__),)


def worker_loop_v1(dataset, key_queue, data_queue, batchify_fn):
    """The loop of a ``DataLoaderV1`` worker process.

    Takes ``(idx, samples)`` from ``key_queue`` until ``idx`` is None, and puts
    ``(idx, batchify_fn([dataset[i] for i in samples]))`` on ``data_queue``. An exception
    goes to ``data_queue`` in place of the batch (MXNet's worker dies of it, and the loader
    waits forever).
    """
    while True:
        idx, samples = key_queue.get()
        if idx is None:
            break
        try:
            batch = batchify_fn([dataset[i] for i in samples])
        except Exception as err:    # the caller raises it
            batch = _WorkerError(err)
        try:
            data_queue.put((idx, batch))
        except Exception as err:    # a batch that cannot be pickled
            data_queue.put((idx, _WorkerError(err)))


def fetcher_loop_v1(data_queue, data_buffer, pin_memory=False, pin_device_id=0,
                    data_buffer_lock=None):
    """The loop of a ``DataLoaderV1`` fetcher thread.

    Takes ``(idx, batch)`` from ``data_queue`` until ``idx`` is None and stores
    ``data_buffer[idx] = batch``, its NDArrays moved to ``cpu()`` (``cpu_pinned(pin_device_id)``
    with ``pin_memory``); lists and tuples in the batch become lists, as in MXNet.
    ``data_buffer_lock``, when given, is held while storing; a ``threading.Condition`` is
    also notified, so that a reader can wait for its batch instead of polling.
    """
    ctx = cpu_pinned(pin_device_id) if pin_memory else cpu()
    while True:
        idx, batch = data_queue.get()
        if idx is None:
            break
        batch = _as_in_context(batch, ctx)
        if data_buffer_lock is None:
            data_buffer[idx] = batch
            continue
        with data_buffer_lock:
            data_buffer[idx] = batch
            if isinstance(data_buffer_lock, threading.Condition):
                data_buffer_lock.notify_all()


def _run_worker_v1(worker_fn, base_seed, index, *args):
    """Start ``DataLoaderV1`` worker ``index`` clean, then run ``worker_fn(*args)``."""
    _start_worker(base_seed, index)
    worker_fn(*args)


class _MultiWorkerIterV1:
    """Iterates over the batches of one pass of a ``DataLoaderV1`` with worker processes.

    It starts ``num_workers`` processes running ``worker_fn(dataset, key_queue, data_queue,
    batchify_fn)`` and a thread running ``fetcher_loop_v1``, keeps ``prefetch`` batches
    (at least one) in the workers' hands, and returns them in the sampler's order. The workers
    and the thread stop at the end of the pass, when the iterator is collected, or on
    ``shutdown()``.
    """

    def __init__(self, num_workers, dataset, batchify_fn, batch_sampler, pin_memory=False,
                 pin_device_id=0, worker_fn=worker_loop_v1, prefetch=None):
        self._shutdown = True       # until there is something to shut down
        if not num_workers > 0:
            raise MXNetAssertionError(f'_MultiWorkerIter is not for {num_workers} workers')
        self._workers = []
        self._fetcher = None
        self._batch_sampler = batch_sampler
        context = _start_method_context()
        self._key_queue = Queue(ctx=context)
        self._key_queue.cancel_join_thread()    # keys no worker will read never hold up exit
        self._data_queue = SimpleQueue(ctx=context)
        self._data_buffer = {}
        self._data_buffer_lock = threading.Condition()
        self._rcvd_idx = 0
        self._sent_idx = 0
        self._iter = iter(self._batch_sampler)

        # the processes fork before this process starts threads of its own (the fetcher, the
        # key queue's feeder), so that no lock of theirs is copied while held
        base_seed = _draw_base_seed()
        self._shutdown = False
        with _sigint_ignored():
            for index in range(num_workers):
                worker = context.Process(
                    target=_run_worker_v1,
                    args=(worker_fn, base_seed, index, dataset, self._key_queue,
                          self._data_queue, batchify_fn),
                    daemon=True)
                worker.start()
                self._workers.append(worker)
        # the thread holds the buffer, not the iterator: the iterator can be collected
        self._fetcher = threading.Thread(
            target=fetcher_loop_v1,
            args=(self._data_queue, self._data_buffer, pin_memory, pin_device_id,
                  self._data_buffer_lock),
            daemon=True)
        self._fetcher.start()
        prefetch = 2 * num_workers if prefetch is None else int(prefetch)
        for _ in range(max(1, prefetch)):
            self._push_next()

    def __len__(self):
        return len(self._batch_sampler)

    def __del__(self):
        # at interpreter exit the fetcher thread no longer runs (it could not be joined) and
        # multiprocessing has terminated the daemon workers
        if not sys.is_finalizing():
            self.shutdown()

    def _push_next(self):
        """Give the next batch's key to the workers."""
        r = next(self._iter, None)
        if r is None:
            return
        self._key_queue.put((self._sent_idx, r))
        self._sent_idx += 1

    def __next__(self):
        if self._rcvd_idx == self._sent_idx:
            if self._data_buffer:
                raise MXNetAssertionError('Data buffer should be empty at this moment')
            self.shutdown()
            raise StopIteration
        if self._shutdown:
            raise MXNetAssertionError('call __next__ after shutdown is forbidden')
        batch = self._wait_for_batch()
        self._rcvd_idx += 1
        if isinstance(batch, _WorkerError):
            self.shutdown()
            raise batch.error       # its __cause__ has the worker's traceback
        self._push_next()
        return batch

    def _wait_for_batch(self):
        def arrived():
            return self._rcvd_idx in self._data_buffer

        empty_checks = 0
        while True:
            with self._data_buffer_lock:
                if self._data_buffer_lock.wait_for(arrived, _POLL_INTERVAL):
                    return self._data_buffer.pop(self._rcvd_idx)
            if not self._fetcher.is_alive():
                self._raise_stopped(RuntimeError(
                    'DataLoaderV1 fetcher thread stopped (its traceback is printed above); '
                    'the batches it did not receive are lost.'))
            error = _dead_worker_error(self._workers)
            # what a worker wrote before it died is still on its way through the pipe and the
            # fetcher: the batch is lost once a whole interval passed with the pipe empty
            lost = error is not None and self._data_queue.empty()
            empty_checks = empty_checks + 1 if lost else 0
            if empty_checks == 2:
                self._raise_stopped(error)

    def _raise_stopped(self, error):
        self.shutdown()
        raise error

    def next(self):
        return self.__next__()

    def __iter__(self):
        return self

    def shutdown(self):
        """Stop the fetcher thread and the worker processes (once; later calls do nothing)."""
        if self._shutdown:
            return
        self._shutdown = True
        # the fetcher stops first: a worker terminated while writing a batch would leave half
        # of it in the pipe for the fetcher to read
        if self._fetcher is not None and self._fetcher.is_alive():
            self._data_queue.put((None, None))
            self._fetcher.join()
        for _ in self._workers:
            self._key_queue.put((None, None))
        # a worker busy with a batch no one will read is not waited for
        for worker in self._workers:
            if worker.is_alive():
                worker.terminate()
        for worker in self._workers:
            worker.join(_POLL_INTERVAL)
            if worker.is_alive():       # it handles SIGTERM itself
                worker.kill()
                worker.join()
        self._key_queue.close()
        self._data_queue.close()


class DataLoaderV1(_Loader):
    """MXNet's older DataLoader: loads data from a dataset and returns mini-batches of data.

    Each pass with ``num_workers > 0`` starts worker processes that take batch keys from a
    queue (``worker_loop_v1``) and a thread that puts their batches back in the sampler's order
    (``fetcher_loop_v1``); batches with workers are on ``cpu()`` (or ``cpu_pinned``), their
    tuples turned into lists, as in MXNet. ``DataLoader``, which keeps a pool of workers over
    passes, is usually faster.

    Parameters
    ----------
    dataset, batch_size, shuffle, sampler, last_batch, batch_sampler
        The dataset and which of its samples make each batch, as for ``DataLoader``.
    batchify_fn : callable
        Merges a list of samples into a batch; default ``default_batchify_fn``
        (``default_mp_batchify_fn`` with workers).
    num_workers : int, default 0
        The number of worker processes; 0 makes the batches in this process.
    pin_memory, pin_device_id
        As for ``DataLoader``: return batches on ``cpu_pinned(pin_device_id)``.
    prefetch : int, default ``2 * num_workers``
        How many batches the workers have in hand (at least one) with ``num_workers > 0``.
        MXNet's ``DataLoaderV1`` has no such argument and always uses the default.

    Examples
    --------
    >>> for x, y in DataLoaderV1(ArrayDataset(nd.ones((4, 2)), [0, 1, 0, 1]), batch_size=2):
    ...     print(x.shape, y.shape)
    (2, 2) (2,)
    (2, 2) (2,)
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None,
                 num_workers=0, pin_memory=False, pin_device_id=0, prefetch=None):
        super().__init__(dataset, batch_size, shuffle, sampler, last_batch, batch_sampler,
                         batchify_fn, num_workers, pin_memory, pin_device_id)
        self._prefetch = prefetch

    def __iter__(self):
        if self._num_workers == 0:
            return _same_process_iter(self._dataset, self._batch_sampler, self._batchify_fn,
                                      self._pin_memory, self._pin_device_id)
        return _MultiWorkerIterV1(self._num_workers, self._dataset, self._batchify_fn,
                                  self._batch_sampler, self._pin_memory, self._pin_device_id,
                                  prefetch=self._prefetch)
