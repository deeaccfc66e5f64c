"""Samplers (``gluon.data.sampler``): the orders in which a DataLoader visits a dataset.

A sampler is an iterable of sample indices with a length; ``BatchSampler`` groups another
sampler's indices into mini-batches. ``RandomSampler`` shuffles with numpy's global generator,
as MXNet does, so ``np.random.seed`` gives MXNet's order.
"""
import numpy as np

__all__ = ['Sampler', 'SequentialSampler', 'RandomSampler', 'SplitSampler', 'FilterSampler',
           'BatchSampler']

_LAST_BATCH = ('keep', 'discard', 'rollover')


class Sampler:
    """Base class for samplers: subclasses define ``__iter__`` and ``__len__``."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Samples ``start, start + 1, ..., start + length - 1`` in order.

    Parameters
    ----------
    length : int
        Number of indices.
    start : int, default 0
        The first index.
    """

    def __init__(self, length, start=0):
        self._length = length
        self._start = start

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """Samples ``0 .. length - 1`` in a random order (without replacement), drawn anew for each
    pass with ``numpy.random.shuffle``.

    Parameters
    ----------
    length : int
        Number of indices.
    """

    def __init__(self, length):
        self._length = length

    def __iter__(self):
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices)

    def __len__(self):
        return self._length


class SplitSampler(Sampler):
    """One worker's part of a dataset, for distributed training: ``0 .. length - 1`` cut into
    ``num_parts`` contiguous parts of ``length // num_parts`` indices, of which this samples part
    ``part_index``, in a new random order each pass (``shuffle``). The indices past the last
    whole part are left out, so every worker has as many batches (a worker with one batch more
    would wait for the others in a step they never take).

    Not in MXNet 1.9.1 itself: the sampler of GluonCV's and MXNet's distributed examples, with
    numpy's generator (as ``RandomSampler``). With ``kvstore='dist_sync'`` give it
    ``num_parts=kv.num_workers, part_index=kv.rank`` (Horovod: ``hvd.size()``, ``hvd.rank()``).

    Parameters
    ----------
    length : int
        Number of indices (the dataset's length).
    num_parts : int, default 1
        Number of parts (workers).
    part_index : int, default 0
        The part to sample, ``0 .. num_parts - 1``.
    shuffle : bool, default True
        Whether to visit the part in a random order, drawn anew for each pass.
    """

    def __init__(self, length, num_parts=1, part_index=0, shuffle=True):
        if num_parts < 1:
            raise ValueError(f'SplitSampler: num_parts must be at least 1, got {num_parts}')
        if not 0 <= part_index < num_parts:
            raise ValueError(f'SplitSampler: part_index {part_index} is not a part of '
                             f'{num_parts} (0 .. {num_parts - 1})')
        self._length = length // num_parts
        self._start = self._length * part_index
        self._shuffle = shuffle

    def __iter__(self):
        indices = np.arange(self._start, self._start + self._length)
        if self._shuffle:
            np.random.shuffle(indices)
        return iter(indices)

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of ``dataset`` for which ``fn(sample)`` is true (evaluated once,
    when the sampler is made).

    Parameters
    ----------
    fn : callable
        Takes a sample, returns a boolean.
    dataset : Dataset
        The dataset to filter.
    """

    def __init__(self, fn, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


def _check_last_batch(last_batch):
    if last_batch not in _LAST_BATCH:
        raise ValueError("last_batch must be one of 'keep', 'discard', or 'rollover', "
                         "but got %s" % last_batch)


class BatchSampler(Sampler):
    """Groups the indices of another sampler into lists of ``batch_size``.

    Parameters
    ----------
    sampler : Sampler
        The source of indices.
    batch_size : int
        Size of a mini-batch.
    last_batch : {'keep', 'discard', 'rollover'}
        What to do with the last indices when ``batch_size`` does not divide their number:
        ``'keep'`` yields a smaller last batch, ``'discard'`` drops it, ``'rollover'`` puts
        the indices at the start of the next pass.

    Examples
    --------
    >>> list(BatchSampler(SequentialSampler(10), 3, 'keep'))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    """

    def __init__(self, sampler, batch_size, last_batch='keep'):
        self._sampler = sampler
        self._batch_size = batch_size
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            _check_last_batch(self._last_batch)
            if self._last_batch == 'keep':
                yield batch
            elif self._last_batch == 'rollover':
                self._prev = batch

    def __len__(self):
        _check_last_batch(self._last_batch)
        if self._last_batch == 'keep':
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == 'discard':
            return len(self._sampler) // self._batch_size
        return (len(self._prev) + len(self._sampler)) // self._batch_size
