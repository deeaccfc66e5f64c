"""gluon.data samplers and the DataLoader: batch contents, order and dtypes as MXNet 1.9.1
gives them (literals from MXNet), last_batch modes, worker processes and threads, errors;
DataLoaderV1 against the DataLoader, and the queues that carry NDArrays between processes."""
import multiprocessing
from multiprocessing.reduction import ForkingPickler
import os
import time

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd
from hybridlib.data import dataloader as dl
from hybridlib.data.dataloader import default_batchify_fn, default_mp_batchify_fn

data = gluon.data
DATA = os.path.join(os.path.dirname(__file__), 'data')


def values(batches):
    return [b.asnumpy().tolist() for b in batches]


def fields(batch):
    return [values(f) if isinstance(f, list) else f.asnumpy().tolist() for f in batch]


# -- samplers ---------------------------------------------------------------------------------

def test_sequential_and_filter_samplers():
    assert list(data.SequentialSampler(3, 5)) == [5, 6, 7]
    assert len(data.SequentialSampler(3, 5)) == 3
    assert list(data.FilterSampler(lambda x: x % 2, [1, 2, 3])) == [0, 2]


def test_random_sampler_is_mxnet_order_under_numpy_seed():
    np.random.seed(0)
    order = list(data.RandomSampler(10))
    assert order == [2, 8, 4, 9, 1, 6, 7, 3, 0, 5]      # MXNet 1.9.1, np.random.seed(0)
    assert type(order[0]) is np.int64
    assert sorted(data.RandomSampler(10)) == list(range(10))


def test_split_sampler_gives_each_worker_its_own_equal_part():
    parts = [gluon.data.SplitSampler(11, 3, i) for i in range(3)]
    assert [len(p) for p in parts] == [3, 3, 3]
    seen = [sorted(int(i) for i in p) for p in parts]
    assert seen == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]       # disjoint; 9 and 10 left out
    np.random.seed(3)
    orders = {tuple(int(i) for i in parts[1]) for _ in range(5)}
    assert len(orders) > 1 and all(sorted(o) == [3, 4, 5] for o in orders)  # an order per pass
    assert list(gluon.data.SplitSampler(6, 2, 1, shuffle=False)) == [3, 4, 5]
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(np.arange(10) * 10), batch_size=2,
                                   sampler=gluon.data.SplitSampler(10, 2, 1, shuffle=False))
    assert [b.asnumpy().tolist() for b in loader] == [[50, 60], [70, 80], [90]]
    for bad in (dict(num_parts=0), dict(num_parts=2, part_index=2),
                dict(num_parts=2, part_index=-1)):
        with pytest.raises(ValueError, match='SplitSampler'):
            gluon.data.SplitSampler(10, **bad)


def test_batch_sampler_modes():
    seq = data.SequentialSampler(10)
    keep = data.BatchSampler(seq, 3, 'keep')
    assert list(keep) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]] and len(keep) == 4
    discard = data.BatchSampler(seq, 3, 'discard')
    assert list(discard) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]] and len(discard) == 3
    roll = data.BatchSampler(seq, 3, 'rollover')
    assert len(roll) == 3
    # MXNet 1.9.1: the length counts the samples rolled over from the last pass
    assert list(roll) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]] and len(roll) == 3
    assert list(roll) == [[9, 0, 1], [2, 3, 4], [5, 6, 7]] and len(roll) == 4


def test_batch_sampler_bad_last_batch():
    bad = data.BatchSampler(data.SequentialSampler(10), 3, 'x')
    msg = "last_batch must be one of 'keep', 'discard', or 'rollover', but got x"
    with pytest.raises(ValueError, match=msg):
        list(bad)
    with pytest.raises(ValueError, match=msg):
        len(bad)


# -- batchify ---------------------------------------------------------------------------------

def test_default_batchify_numbers_and_arrays():
    ints = default_batchify_fn([1, 2, 3])
    assert ints.dtype == np.int64 and ints.asnumpy().tolist() == [1, 2, 3]
    assert default_batchify_fn([1.5, 2.0]).dtype == np.float64
    assert default_batchify_fn([np.float32(1)]).dtype == np.float32
    assert default_batchify_fn([True, False]).dtype == np.bool_
    stacked = default_batchify_fn([np.ones((2, 2), np.uint8), np.zeros((2, 2), np.uint8)])
    assert stacked.shape == (2, 2, 2) and stacked.dtype == np.uint8
    arrays = default_batchify_fn([nd.ones((2,)), nd.zeros((2,))])
    assert arrays.asnumpy().tolist() == [[1, 1], [0, 0]] and arrays.dtype == np.float32


def test_default_batchify_nested_tuples():
    # MXNet: [NDArray int64 [1 1 1], [NDArray float64 [2 2 2], NDArray int8 3x2]]
    batch = default_batchify_fn([(1, (2.0, np.array([1, 2], dtype=np.int8)))] * 3)
    assert isinstance(batch, list) and isinstance(batch[1], list)
    assert batch[0].asnumpy().tolist() == [1, 1, 1] and batch[0].dtype == np.int64
    assert batch[1][0].dtype == np.float64 and batch[1][1].dtype == np.int8
    assert batch[1][1].asnumpy().tolist() == [[1, 2]] * 3
    pairs = default_batchify_fn([((1, 2), nd.ones((2,))), ((3, 4), nd.zeros((2,)))])
    assert fields(pairs) == [[[1, 3], [2, 4]], [[1, 1], [0, 0]]]


def test_default_batchify_errors():
    # MXNet fails with KeyError: <class 'numpy.str_'>
    with pytest.raises(TypeError, match='samples of type str'):
        default_batchify_fn(['a', 'b'])
    with pytest.raises(ValueError, match='different shapes'):
        default_batchify_fn([np.ones(2), np.ones(3)])


def test_mp_batchify_is_on_cpu():
    batch = default_mp_batchify_fn([(nd.ones((2,)), 1)])
    assert [b.context for b in batch] == [mx.cpu(0), mx.cpu(0)]


# -- DataLoader in this process ---------------------------------------------------------------

def dataset3():
    return data.ArrayDataset(nd.arange(6).reshape((3, 2)), nd.arange(3), [7, 8, 9])


def test_batches_and_dtypes():
    loader = data.DataLoader(dataset3(), batch_size=2)
    assert len(loader) == 2
    batches = [fields(b) for b in loader]
    assert batches == [[[[0, 1], [2, 3]], [0, 1], [7, 8]], [[[4, 5]], [2], [9]]]
    x, y, z = next(iter(loader))
    assert (x.dtype, y.dtype, z.dtype) == (np.float32, np.float32, np.int64)
    u8 = data.ArrayDataset(np.ones((4, 2, 2), dtype=np.uint8), np.arange(4, dtype=np.int32))
    x, y = next(iter(data.DataLoader(u8, batch_size=4)))
    assert (x.dtype, x.shape, y.dtype) == (np.uint8, (4, 2, 2), np.int32)


def test_last_batch_modes():
    seven = np.arange(7)
    assert values(data.DataLoader(seven, batch_size=3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert values(data.DataLoader(seven, batch_size=3, last_batch='discard')) == \
        [[0, 1, 2], [3, 4, 5]]
    roll = data.DataLoader(seven, batch_size=3, last_batch='rollover')
    assert len(roll) == 2
    # MXNet 1.9.1
    assert [values(roll) for _ in range(3)] == [
        [[0, 1, 2], [3, 4, 5]], [[6, 0, 1], [2, 3, 4]], [[5, 6, 0], [1, 2, 3], [4, 5, 6]]]


def test_shuffle_and_batch_sampler():
    np.random.seed(1)
    shuffled = data.DataLoader(np.arange(7), batch_size=3, shuffle=True, last_batch='rollover')
    assert values(shuffled) == [[6, 2, 1], [0, 4, 3]]        # MXNet 1.9.1, np.random.seed(1)
    sampler = data.BatchSampler(data.SequentialSampler(7), 3)
    assert values(data.DataLoader(np.arange(10, 17), batch_sampler=sampler)) == \
        [[10, 11, 12], [13, 14, 15], [16]]
    fixed = data.DataLoader(np.arange(5), batch_size=2, sampler=data.SequentialSampler(3, 2))
    assert values(fixed) == [[2, 3], [4]]


def test_argument_errors():
    with pytest.raises(ValueError, match='batch_size must be specified unless '
                                         'batch_sampler is specified'):
        data.DataLoader(dataset3())
    with pytest.raises(ValueError, match='shuffle must not be specified if sampler is '
                                         'specified'):
        data.DataLoader(dataset3(), batch_size=2, shuffle=True,
                        sampler=data.SequentialSampler(3))
    with pytest.raises(ValueError, match='batch_size, shuffle, sampler and last_batch must '
                                         'not be specified if batch_sampler is specified.'):
        data.DataLoader(dataset3(), batch_size=2,
                        batch_sampler=data.BatchSampler(data.SequentialSampler(3), 2))
    with pytest.raises(ValueError, match="but got bad"):
        list(data.DataLoader(dataset3(), batch_size=2, last_batch='bad'))
    with pytest.raises(AssertionError, match='timeout must be positive, given 0'):
        data.DataLoader(dataset3(), batch_size=2, timeout=0)


def test_pin_memory_and_custom_batchify():
    batch = next(iter(data.DataLoader(dataset3(), batch_size=2, pin_memory=True)))
    assert [b.context for b in batch] == [mx.cpu_pinned(0)] * 3
    loader = data.DataLoader(dataset3(), batch_size=2, batchify_fn=lambda samples: samples)
    assert [len(b) for b in loader] == [2, 1]


def test_auto_reload_and_iterators():
    loader = data.DataLoader(np.arange(4), batch_size=2, auto_reload=True)
    assert loader._iter is not None
    assert values(loader) == [[0, 1], [2, 3]] and values(loader) == [[0, 1], [2, 3]]
    loader.clean()
    assert loader._iter is None and values(loader) == [[0, 1], [2, 3]]


# -- worker processes and threads -------------------------------------------------------------

def scaled(x):
    return x * 2


def image_dataset(n=10):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (n, 4, 3, 3), dtype=np.uint8)
    return data.ArrayDataset(nd.array(images, dtype='uint8'), np.arange(n))


@pytest.mark.parametrize('thread_pool', [False, True], ids=['processes', 'threads'])
def test_workers_give_the_same_batches(thread_pool):
    ds = image_dataset().transform_first(lambda x: x.astype('float32') / 255)
    ref = [fields(b) for b in data.DataLoader(ds, batch_size=3)]
    loader = data.DataLoader(ds, batch_size=3, num_workers=2, thread_pool=thread_pool)
    for _ in range(2):
        batches = list(loader)
        assert [fields(b) for b in batches] == ref
        assert all(f.context == mx.cpu(0) for b in batches for f in b)
    assert batches[0][0].dtype == np.float32 and batches[0][1].dtype == np.int64
    one_ahead = data.DataLoader(ds, batch_size=4, num_workers=1, prefetch=0,
                                last_batch='discard', thread_pool=thread_pool)
    assert [fields(b) for b in one_ahead] == [fields(b) for b in data.DataLoader(
        ds, batch_size=4, last_batch='discard')]


def test_workers_read_record_files():
    ds = data.RecordFileDataset(os.path.join(DATA, 'data-records.rec')).transform(len)
    loader = data.DataLoader(ds, batch_size=4, num_workers=2)
    assert values(loader) == [[0, 1, 2, 3], [4, 5, 4, 8], [16, 9, 6, 27], [39]]
    assert values(loader) == values(data.DataLoader(ds, batch_size=4))


def worker_state(_):
    return (autograd.is_recording(), autograd.is_training(), str(mx.current_context()),
            float(nd.random.uniform(shape=(1,)).asscalar()), float(np.random.rand()))


def test_workers_start_clean():
    mx.random.seed(5)
    with autograd.record(), mx.Context('cpu', 1):
        loader = data.DataLoader(data.SimpleDataset(list(range(8))).transform(worker_state),
                                 batch_size=1, num_workers=2, batchify_fn=lambda s: s[0])
        states = list(loader)
    assert {s[:3] for s in states} == {(False, False, 'cpu(0)')}
    # each worker draws its own random numbers (MXNet's forked workers share one stream)
    assert len({s[3] for s in states}) == 8 and len({s[4] for s in states}) == 8


def failing(x):
    if x == 3:
        raise KeyError(f'bad sample {x}')
    return x


@pytest.mark.parametrize('thread_pool', [False, True], ids=['processes', 'threads'])
def test_worker_errors_reach_the_caller(thread_pool):
    ds = data.SimpleDataset(list(range(6))).transform(failing)
    loader = data.DataLoader(ds, batch_size=2, num_workers=2, thread_pool=thread_pool)
    it = iter(loader)
    assert next(it).asnumpy().tolist() == [0, 1]
    with pytest.raises(KeyError, match='bad sample 3'):
        next(it)
    # the pool survives a failing batch (MXNet terminates it): the next epoch runs
    assert next(iter(loader)).asnumpy().tolist() == [0, 1]


def slow(x):
    time.sleep(1.0)
    return x


def test_timeout_message():
    loader = data.DataLoader(data.SimpleDataset([0, 1]).transform(slow), batch_size=1,
                             num_workers=1, thread_pool=True, timeout=0.05)
    with pytest.raises(multiprocessing.TimeoutError, match='timed out after 0.05 seconds'):
        next(iter(loader))


def die(x):
    if x == 1:
        os._exit(3)
    return x


def test_dead_worker_is_reported(monkeypatch):
    from hybridlib.data import dataloader
    monkeypatch.setattr(dataloader, '_POLL_INTERVAL', 0.05)
    loader = data.DataLoader(data.SimpleDataset([0, 1, 2]).transform(die), batch_size=1,
                             num_workers=1, timeout=30)
    it = iter(loader)
    assert next(it).asnumpy().tolist() == [0]
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r'exited unexpectedly with exit code 3'):
        next(it)
    assert time.monotonic() - start < 10
    # a fresh pool serves the next epoch's batches that do not kill it
    assert values(data.DataLoader(data.SimpleDataset([5]), batch_size=1, num_workers=1)) == [[5]]


# -- DataLoaderV1 and the pieces it shares with user code ------------------------------------

def tree(batch):
    """A batch as nested lists of (values, dtype, context) for NDArrays."""
    if isinstance(batch, nd.NDArray):
        return batch.asnumpy().tolist(), batch.dtype, str(batch.context)
    if isinstance(batch, (list, tuple)):
        return [tree(b) for b in batch]
    return batch


def sum_and_count(samples):
    return nd.stack(*[s[0] for s in samples]).sum(axis=0), len(samples)


LOADER_CASES = {
    'shuffled': dict(batch_size=3, shuffle=True),
    'keep': dict(batch_size=3, last_batch='keep'),
    'discard': dict(batch_size=3, last_batch='discard'),
    'rollover': dict(batch_size=3, last_batch='rollover'),
    'seeded_sampler': dict(batch_size=4, sampler=data.RandomSampler(10)),
    'batchify_fn': dict(batch_size=4, batchify_fn=sum_and_count),
}


@pytest.mark.parametrize('num_workers', [0, 2])
@pytest.mark.parametrize('case', list(LOADER_CASES))
def test_v1_gives_dataloader_batches(case, num_workers):
    # tuple samples (image, label) with a transform, as a vision dataset gives them
    ds = image_dataset().transform_first(lambda x: x.astype('float32') / 255)

    def epochs(loader_class, **kwargs):
        loader = loader_class(ds, **LOADER_CASES[case], **kwargs)
        np.random.seed(7)       # the shuffling samplers draw from numpy's global generator
        return len(loader), [tree(list(batch)) for _ in range(2) for batch in loader]

    assert epochs(dl.DataLoaderV1, num_workers=num_workers) == epochs(data.DataLoader)


def test_v1_batches_with_workers_are_lists_on_cpu():
    ds = data.ArrayDataset(nd.arange(10).reshape((5, 2)), np.arange(5))
    batches = list(dl.DataLoaderV1(ds, batch_size=2, num_workers=2, batchify_fn=tuple))
    # MXNet 1.9.1: the fetcher returns lists (tuples in this process)
    assert type(batches[0]) is list and type(batches[0][0]) is list
    assert type(next(iter(dl.DataLoaderV1(ds, batch_size=2, batchify_fn=tuple)))) is tuple
    x, y = next(iter(dl.DataLoaderV1(ds, batch_size=2, num_workers=2)))
    assert (x.context, x.dtype, y.dtype) == (mx.cpu(0), np.float32, np.int64)
    pinned = next(iter(dl.DataLoaderV1(ds, batch_size=2, num_workers=1, pin_memory=True,
                                         pin_device_id=1)))
    assert [b.context for b in pinned] == [mx.cpu_pinned(1)] * 2


def test_v1_arguments():
    assert len(dl.DataLoaderV1(np.arange(7), batch_size=3, last_batch='discard')) == 2
    with pytest.raises(ValueError, match='batch_size must be specified unless '):
        dl.DataLoaderV1(dataset3())
    with pytest.raises(ValueError, match='shuffle must not be specified if sampler is '):
        dl.DataLoaderV1(dataset3(), batch_size=2, shuffle=True,
                          sampler=data.SequentialSampler(3))
    with pytest.raises(ValueError, match='must not be specified if batch_sampler is '):
        dl.DataLoaderV1(dataset3(), batch_size=2,
                          batch_sampler=data.BatchSampler(data.SequentialSampler(3), 2))
    with pytest.raises(AssertionError, match='not for 0 workers'):
        dl._MultiWorkerIterV1(0, dataset3(), default_batchify_fn,
                              data.BatchSampler(data.SequentialSampler(3), 2))
    # one batch in the workers' hands at a time
    one = dl.DataLoaderV1(np.arange(5), batch_size=2, num_workers=1, prefetch=0)
    assert values(one) == [[0, 1], [2, 3], [4]]


def test_v1_workers_start_clean():
    mx.random.seed(5)
    with autograd.record(), mx.Context('cpu', 1):
        loader = dl.DataLoaderV1(data.SimpleDataset(list(range(8))).transform(worker_state),
                                   batch_size=1, num_workers=2, batchify_fn=lambda s: s[0])
        states = [tuple(s) for s in loader]
    assert {s[:3] for s in states} == {(False, False, 'cpu(0)')}
    assert len({s[3] for s in states}) == 8 and len({s[4] for s in states}) == 8


def test_v1_shutdown():
    loader = dl.DataLoaderV1(np.arange(20), batch_size=2, num_workers=2)
    it = iter(loader)
    assert values(it) == values(data.DataLoader(np.arange(20), batch_size=2))
    assert not it._fetcher.is_alive() and not any(w.is_alive() for w in it._workers)
    with pytest.raises(StopIteration):
        next(it)
    # a pass left early: collecting the iterator stops its workers and thread
    it = iter(loader)
    assert next(it).asnumpy().tolist() == [0, 1]
    workers, fetcher = it._workers, it._fetcher
    assert all(w.is_alive() for w in workers)
    del it
    assert not fetcher.is_alive() and not any(w.is_alive() for w in workers)
    it = iter(loader)
    next(it)
    it.shutdown()
    it.shutdown()
    with pytest.raises(AssertionError, match='call __next__ after shutdown is forbidden'):
        next(it)


def slow_first(x):
    if x == 0:
        time.sleep(0.3)
    return x


def stuck(x):
    if x > 0:
        time.sleep(30)
    return x


def test_v1_reorders_and_stops_busy_workers(monkeypatch):
    # batch 0 comes after batch 1 (the other worker's)
    ds = data.SimpleDataset(list(range(6))).transform(slow_first)
    assert values(dl.DataLoaderV1(ds, batch_size=1, num_workers=2)) == [[i] for i in range(6)]
    # a worker busy with a batch no one will read is terminated, not waited for
    monkeypatch.setattr(dl, '_POLL_INTERVAL', 5.0)
    it = iter(dl.DataLoaderV1(data.SimpleDataset([0, 1, 2]).transform(stuck), batch_size=1,
                              num_workers=1))
    assert next(it).asnumpy().tolist() == [0]
    start = time.monotonic()
    it.shutdown()
    assert time.monotonic() - start < 4 and it._workers[0].exitcode == -15     # SIGTERM


class NeedsTwoArguments(Exception):
    def __init__(self, a, b):
        super().__init__(f'{a} and {b}')


def failing_unpicklably(x):
    if x == 2:
        raise NeedsTwoArguments('x', x)
    return x


def test_v1_worker_errors_reach_the_caller():
    loader = dl.DataLoaderV1(data.SimpleDataset(list(range(6))).transform(failing),
                               batch_size=2, num_workers=2)
    it = iter(loader)
    assert next(it).asnumpy().tolist() == [0, 1]
    with pytest.raises(KeyError, match='bad sample 3') as info:
        next(it)
    assert 'in failing' in str(info.value.__cause__)    # the worker's traceback
    assert not any(w.is_alive() for w in it._workers)
    assert next(iter(loader)).asnumpy().tolist() == [0, 1]
    # an exception that cannot be unpickled arrives as its text
    loader = dl.DataLoaderV1(data.SimpleDataset(list(range(4))).transform(failing_unpicklably),
                               batch_size=1, num_workers=1)
    with pytest.raises(RuntimeError, match='NeedsTwoArguments: x and 2'):
        list(loader)


def test_v1_dead_worker_is_reported(monkeypatch):
    monkeypatch.setattr(dl, '_POLL_INTERVAL', 0.2)
    loader = dl.DataLoaderV1(data.SimpleDataset([0, 1, 2]).transform(die), batch_size=1,
                               num_workers=1)
    it = iter(loader)
    # the worker dies after it sent batch 0: that batch still arrives
    assert next(it).asnumpy().tolist() == [0]
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r'exited unexpectedly with exit code 3'):
        next(it)
    assert time.monotonic() - start < 10
    assert not it._fetcher.is_alive()


def test_reduce_and_rebuild_ndarray():
    for x in [nd.array([[1.5, -2], [3, 4]]), nd.array(np.arange(6, dtype=np.int8)),
              nd.array(np.float16(2.5)), nd.zeros((0, 3)),
              nd.array([1, 2], ctx=mx.cpu_pinned(1), dtype='int64')]:
        rebuild, args = dl.reduce_ndarray(x)
        assert rebuild is dl.rebuild_ndarray
        for _ in range(2):      # MXNet's shared-memory handle opens once; this state any time
            y = rebuild(*args)
            assert type(y) is nd.NDArray and y is not x
            assert (y.shape, y.dtype, y.context) == (x.shape, x.dtype, x.context)
            assert y.asnumpy().tolist() == x.asnumpy().tolist()
    # what multiprocessing sends pickles NDArrays with it
    x = nd.array([1, 2, 3])
    sent = ForkingPickler.dumps({'x': x})
    assert b'rebuild_ndarray' in bytes(sent)
    assert ForkingPickler.loads(sent)['x'].asnumpy().tolist() == [1, 2, 3]


def echo_doubled(inbox, outbox):
    while True:
        item = inbox.get()
        if item is None:
            return
        outbox.put([x * 2 for x in item])


@pytest.mark.parametrize('queue_types', [(dl.Queue, dl.SimpleQueue), (dl.SimpleQueue, dl.Queue)],
                         ids=['Queue', 'SimpleQueue'])
def test_queues_carry_ndarrays_across_processes(queue_types):
    inbox, outbox = queue_types[0](), queue_types[1]()
    assert isinstance(inbox._reader, dl.ConnectionWrapper)
    child = multiprocessing.get_context('fork').Process(target=echo_doubled,
                                                        args=(inbox, outbox), daemon=True)
    child.start()
    try:
        inbox.put([nd.array([[1, 2], [3, 4]]), nd.array(np.arange(3), dtype='int32')])
        x, y = outbox.get()
        assert x.asnumpy().tolist() == [[2, 4], [6, 8]] and x.dtype == np.float32
        assert y.asnumpy().tolist() == [0, 2, 4] and y.dtype == np.int32
        inbox.put(None)
        child.join(10)
        assert child.exitcode == 0
    finally:
        if child.is_alive():
            child.terminate()
            child.join()


def test_connection_wrapper():
    reader, writer = multiprocessing.Pipe(duplex=False)
    reader, writer = dl.ConnectionWrapper(reader), dl.ConnectionWrapper(writer)
    writer.send((nd.array([1, 2]), 'text'))
    assert reader.poll()        # the connection's own attributes
    x, text = reader.recv()
    assert x.asnumpy().tolist() == [1, 2] and text == 'text'
    writer.send_bytes(ForkingPickler.dumps(nd.ones((2,))))
    assert reader.recv().asnumpy().tolist() == [1, 1]
    reader.close()
    assert reader.closed
