"""The DataLoader (``gluon.data.dataloader``): mini-batches from a dataset, in this process, in
worker processes, or in a thread pool.

Worker processes are forked (where the platform can) with the dataset and the batchify function
as inherited globals, so lambdas and open record files work as in MXNet. Each worker starts from
a clean state: autograd off, the cpu as the current context, and its own random seeds (drawn
from the parent's generator, so a run seeded with ``mx.random.seed`` repeats, while the workers'
random augmentations differ from each other). Batches come back through pickle, where an NDArray
travels as its numpy data.
"""
import multiprocessing
import multiprocessing.pool
import signal
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


# -- worker processes -------------------------------------------------------------------------
# global per worker process (set by the pool's initializer): each process opens its own
# record files and so on
_worker_dataset = None
_worker_batchify_fn = None


def _worker_initializer(dataset, batchify_fn, counter, base_seed):
    """Start a worker process: keep the dataset, clear what the fork copied from the parent."""
    global _worker_dataset, _worker_batchify_fn
    _worker_dataset = dataset
    _worker_batchify_fn = batchify_fn
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    autograd.set_recording(False)
    autograd.set_training(False)
    Context._local.value = None     # a `with mx.gpu():` of the parent must not apply here
    seed = np.random.SeedSequence([base_seed, index]).generate_state(2)
    _random.seed(int(seed[0]))
    np.random.seed(int(seed[1]))


def _worker_fn(samples, batchify_fn=None, dataset=None):
    """Make one batch in a worker process (the dataset and batchify_fn are its globals)."""
    return _worker_batchify_fn([_worker_dataset[i] for i in samples])


def _thread_worker_fn(samples, batchify_fn, dataset):
    """Make one batch in a pool thread."""
    return batchify_fn([dataset[i] for i in samples])


def _start_method_context():
    # fork keeps unpicklable datasets (lambdas in transforms) working, as in MXNet
    if 'fork' in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context('fork')
    return multiprocessing.get_context()


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


class DataLoader:
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
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        self._timeout = timeout

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
            batch_sampler = _sampler.BatchSampler(
                sampler, batch_size, last_batch if last_batch else 'keep')
        elif batch_size is not None or shuffle or sampler is not None or \
                last_batch is not None:
            raise ValueError('batch_size, shuffle, sampler and last_batch must '
                             'not be specified if batch_sampler is specified.')

        self._batch_sampler = batch_sampler
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._prefetch = max(0, int(prefetch) if prefetch is not None
                             else 2 * self._num_workers)
        if batchify_fn is None:
            batchify_fn = default_mp_batchify_fn if num_workers > 0 else default_batchify_fn
        self._batchify_fn = batchify_fn
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
        base_seed = int(_random.generator(np).integers(2 ** 63))
        in_main_thread = threading.current_thread() is threading.main_thread()
        if in_main_thread:
            # the workers ignore Ctrl-C: the parent handles it and terminates them
            original_sigint_handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self._worker_pool = context.Pool(
                self._num_workers, initializer=_worker_initializer,
                initargs=(self._dataset, self._batchify_fn, context.Value('i', 0), base_seed))
        finally:
            if in_main_thread:
                signal.signal(signal.SIGINT, original_sigint_handler)
        self._workers = list(self._worker_pool._pool)

    def _check_workers(self):
        """Raise if a worker process died (its batch would never come)."""
        for worker in self._workers:
            if worker.exitcode is not None:
                pid, code = worker.pid, worker.exitcode
                self._worker_pool.terminate()
                self._start_pool()      # a fresh pool for the next epoch
                raise RuntimeError(f'DataLoader worker (pid {pid}) exited unexpectedly with '
                                   f'exit code {code} (killed, out of memory, or a crash in '
                                   'native code); its batch is lost. Run with num_workers=0 '
                                   'to see the error in this process.')

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
            def same_process_iter():
                for batch in self._batch_sampler:
                    ret = self._batchify_fn([self._dataset[idx] for idx in batch])
                    if self._pin_memory:
                        ret = _as_in_context(ret, cpu_pinned(self._pin_device_id))
                    yield ret
            return same_process_iter()
        # worker processes have the batchify_fn already (it need not pickle, as in MXNet)
        batchify_fn = self._batchify_fn if self._thread_pool else None
        return _MultiWorkerIter(self._worker_pool, batchify_fn, self._batch_sampler,
                                pin_memory=self._pin_memory, pin_device_id=self._pin_device_id,
                                worker_fn=_thread_worker_fn if self._thread_pool else _worker_fn,
                                prefetch=self._prefetch,
                                dataset=self._dataset if self._thread_pool else None,
                                data_loader=self, timeout=self._timeout)

    def __len__(self):
        return len(self._batch_sampler)

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
