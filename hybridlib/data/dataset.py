"""Datasets (``gluon.data.dataset``): indexable collections of samples, and the lazy views
that ``transform``, ``filter``, ``shard``, ``take`` and ``sample`` make of them.

A dataset is anything with ``__getitem__`` and ``__len__``; lists, numpy arrays and NDArrays
work as datasets too. A sample that is a tuple is passed to ``transform``'s function as
separate arguments, as in MXNet.
"""
import os

from .. import recordio
from ..base import MXNetAssertionError
from ..ndarray import NDArray
from .sampler import FilterSampler, Sampler, SequentialSampler

__all__ = ['Dataset', 'SimpleDataset', 'ArrayDataset', 'RecordFileDataset']


def _check(condition, message):
    """MXNet's ``assert``, with its message, that ``python -O`` does not remove."""
    if not condition:
        raise MXNetAssertionError(message)


class Dataset:
    """Abstract dataset: subclasses define ``__getitem__`` (the i-th sample) and ``__len__``.

    .. note:: An NDArray or a numpy array can be used directly as a dataset.
    """

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """A dataset of the samples for which ``fn(sample)`` is true.

        ``fn`` runs on every sample now; a lazily transformed dataset is transformed again
        when a sample of the result is read.
        """
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Shard ``index`` of ``num_shards`` contiguous shards (the first
        ``len(self) % num_shards`` shards have one sample more).

        For distributed training, shard before shuffling so that each worker sees its own
        samples.
        """
        _check(index < num_shards, 'Shard index of out bound: %d out of %d' % (index, num_shards))
        _check(num_shards > 0, 'Number of shards must be greater than 0')
        _check(index >= 0, 'Index must be non-negative')
        length = len(self)
        shard_len, rest = divmod(length, num_shards)
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        return _SampledDataset(self, SequentialSampler(end - start, start))

    def take(self, count):
        """A dataset of the first ``count`` samples (all of them when ``count`` is None or
        larger than the dataset)."""
        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """A dataset of the samples at the indices that ``sampler`` (a Sampler) yields."""
        if not isinstance(sampler, Sampler):
            raise TypeError('Invalid sampler type: %s. Expected gluon.data.Sampler instead.'
                            % type(sampler))
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """A dataset of ``fn(sample)`` (``fn(*sample)`` for a tuple sample).

        Parameters
        ----------
        fn : callable
            The transformation.
        lazy : bool, default True
            True: transform each sample when it is read (needed for random transforms, which
            must differ from epoch to epoch). False: transform every sample now.
        """
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([i for i in trans])

    def transform_first(self, fn, lazy=True):
        """Like ``transform``, on the first element of each sample only (the data, not the
        label)."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over any object with ``len()`` and ``[]`` (a list, an array).

    Parameters
    ----------
    data : dataset-like object
        The samples.
    """

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    """A dataset transformed sample by sample when read."""

    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """``fn`` on the first element (a class, not a closure, so that it pickles)."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    """The samples of ``dataset`` at the indices of ``sampler`` (drawn once, when made)."""

    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._sampler)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Combines dataset-like objects (datasets, lists, arrays) of one length: sample ``i`` is
    ``(x1[i], x2[i], ...)``, or ``x1[i]`` for one object.

    A 1-D NDArray is read as a numpy array, so its samples are numpy scalars (as in MXNet).

    Parameters
    ----------
    *args : one or more dataset-like objects
        The data arrays.
    """

    def __init__(self, *args):
        _check(len(args) > 0, 'Needs at least 1 arrays')
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            _check(len(data) == self._length,
                   'All arrays must have the same length; array[0] has length %d '
                   'while array[%d] has %d.' % (self._length, i + 1, len(data)))
            if isinstance(data, NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """The records of a RecordIO file as bytes; the index is the ``.idx`` file beside it.

    Parameters
    ----------
    filename : str
        Path to the ``.rec`` file.
    """

    def __init__(self, filename):
        self.idx_file = os.path.splitext(filename)[0] + '.idx'
        self.filename = filename
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, 'r')

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)


class _DownloadedDataset(Dataset):
    """Base of MNIST, CIFAR10, ...: ``(data[i], label[i])``, through ``transform`` if given."""

    def __init__(self, root, transform):
        super().__init__()
        self._transform = transform
        self._data = None
        self._label = None
        root = os.path.expanduser(root)
        self._root = root
        if not os.path.isdir(root):
            os.makedirs(root)
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError
