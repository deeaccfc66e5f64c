"""MXNet's data iterators (``mx.io``).

An iterator yields ``DataBatch`` objects on each ``next()``; ``provide_data`` and
``provide_label`` describe its arrays with ``DataDesc`` (name, shape, dtype, layout).

* ``NDArrayIter`` walks arrays held in memory, ``ResizeIter`` gives another iterator a fixed
  number of batches per epoch, ``PrefetchingIter`` reads other iterators ahead in threads
  (these follow MXNet's Python classes line for line);
* ``MXDataIter`` is the class of what MXNet's C++ iterators return; here it is the base of
  ``CSVIter`` and ``MNISTIter``, which read their files as MXNet's C++ code does (the same
  numbers, batches, padding and shuffle order), and of ``mx.io``'s ``ImageRecordIter``.
  ``LibSVMIter`` gives sparse (CSR) batches, which hybridlib does not have.

``mx.image.ImageIter`` builds on ``DataIter``.
"""
import logging
import threading
from collections import namedtuple

import numpy as np

from ..base import MXNetAssertionError, MXNetError, NotSupportedError
from ..context import cpu
from .. import ndarray as nd
from ..ndarray import NDArray
from ..ops.attrs import REQUIRED
from .utils import (BatchLoader, CSVExamples, IterParam, MNISTBatches, _getdata_by_idx,
                    _init_data, _slice_along_batch_axis, data_files, parse_iter_params,
                    read_mnist, std_shuffle_order)

__all__ = ['DataDesc', 'DataBatch', 'DataIter', 'ResizeIter', 'PrefetchingIter', 'NDArrayIter',
           'MXDataIter', 'CSVIter', 'MNISTIter', 'LibSVMIter']


class DataDesc(namedtuple('DataDesc', ['name', 'shape'])):
    """The name, shape, dtype and layout of one data or label array of an iterator.

    A ``DataDesc`` is a ``(name, shape)`` tuple with two more attributes, so code that unpacks
    ``name, shape = desc`` or compares it to a tuple keeps working.

    Parameters
    ----------
    name : str
        The array's name (``'data'``, ``'softmax_label'``).
    shape : tuple of int
        Its shape, batch axis included.
    dtype : numpy dtype, default numpy.float32
        Its data type.
    layout : str, default 'NCHW'
        What each axis means: ``N`` is the batch axis (``NCHW`` images, ``NTC`` sequences).
    """

    def __new__(cls, name, shape, dtype=np.float32, layout='NCHW'):
        desc = super().__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __repr__(self):
        return f'DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]'

    @staticmethod
    def get_batch_axis(layout):
        """The axis of the batch (``N``) in ``layout``; 0 when the layout is None, -1 when it
        has no ``N`` (the whole array goes to every device)."""
        if layout is None:
            return 0
        return layout.find('N')

    @staticmethod
    def get_list(shapes, types):
        """DataDescs from a list of ``(name, shape)`` and an optional list of
        ``(name, dtype)``."""
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(name, shape, type_dict[name]) for name, shape in shapes]
        return [DataDesc(name, shape) for name, shape in shapes]


class DataBatch:
    """One batch from an iterator.

    Parameters
    ----------
    data : list of NDArray
        The data arrays, each holding ``batch_size`` examples along its batch axis.
    label : list of NDArray, optional
        The label arrays.
    pad : int, optional
        How many examples at the end of the batch are padding (the last batch of an epoch
        whose size does not divide the data); predictions for them are to be ignored.
    index : numpy.ndarray, optional
        The indices of the examples in the batch.
    bucket_key : int, optional
        The bucket of the batch (bucketing modules).
    provide_data, provide_label : list of DataDesc, optional
        Descriptions of ``data`` and ``label`` when they differ from the iterator's.
    """

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        # MXNet asserts: MXNetAssertionError is an AssertionError with a message
        if data is not None and not isinstance(data, (list, tuple)):
            raise MXNetAssertionError(f'DataBatch: data must be a list of NDArrays, got '
                                      f'{type(data).__name__}')
        if label is not None and not isinstance(label, (list, tuple)):
            raise MXNetAssertionError(f'DataBatch: label must be a list of NDArrays, got '
                                      f'{type(label).__name__}')
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [l.shape for l in self.label] if self.label else None
        return f'{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}'


class DataIter:
    """The base class of data iterators: ``next()`` returns a ``DataBatch`` and raises
    ``StopIteration`` at the end of the data; ``reset()`` starts over.

    A subclass implements either ``next`` or the steps the default ``next`` calls:
    ``iter_next`` (move to the next batch, False at the end), ``getdata``, ``getlabel``,
    ``getpad`` and ``getindex``.

    Parameters
    ----------
    batch_size : int, optional
        The number of examples in a batch.
    """

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Go back to the beginning of the data."""

    def next(self):
        """The next batch; StopIteration at the end of the data."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; False when there is none."""

    def getdata(self):
        """The data arrays (a list of NDArray) of the current batch."""

    def getlabel(self):
        """The label arrays (a list of NDArray) of the current batch."""

    def getindex(self):
        """The indices of the examples of the current batch (None when unknown)."""
        return None

    def getpad(self):
        """How many examples at the end of the current batch are padding."""


class _HeldBatchIter(DataIter):
    """An iterator whose ``iter_next`` keeps the batch it moves to in ``current_batch``, which
    the getters read."""

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class ResizeIter(_HeldBatchIter):
    """Another iterator, resized to ``size`` batches per epoch: a short one starts over (it is
    reset when it runs out), a long one stops early.

    Parameters
    ----------
    data_iter : DataIter
        The iterator to resize.
    size : int
        The number of batches per epoch.
    reset_internal : bool
        Whether ``reset()`` resets ``data_iter`` too; if not, the next epoch goes on where this
        one stopped.

    Examples
    --------
    >>> nd_iter = mx.io.NDArrayIter(mx.nd.ones((100, 10)), batch_size=25)
    >>> resize_iter = mx.io.ResizeIter(nd_iter, 2)
    >>> [batch.data[0].shape for batch in resize_iter]
    [(25, 10), (25, 10)]
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__()
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, 'default_bucket_key'):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True


def _prefetch(source, ready, taken, slot, results, errors, stop):
    """A prefetching thread: each time ``taken`` is set, read the next batch of ``source`` into
    ``results[slot]`` (None at its end, the exception in ``errors[slot]`` if it raises) and set
    ``ready``. It holds no reference to the PrefetchingIter, which can so be collected."""
    while True:
        taken.wait()
        if stop.is_set():
            break
        try:
            results[slot] = source.next()
        except StopIteration:
            results[slot] = None
        except BaseException as error:      # noqa: BLE001 - raised again in the caller
            results[slot] = None
            errors[slot] = error
        taken.clear()
        ready.set()


class PrefetchingIter(_HeldBatchIter):
    """Reads other iterators ahead, each in its own thread, and gives their batches joined:
    the data (and labels) of one batch of each, in order.

    An exception raised by an iterator while its thread reads is raised again by the ``next()``
    (or ``iter_next()``) that would have returned its batch.

    Parameters
    ----------
    iters : DataIter or list of DataIter
        The iterators to read ahead; they must give the same number of batches.
    rename_data : list of dict, optional
        For each iterator, ``{'original_name': 'new_name'}`` for the names of its
        ``provide_data``.
    rename_label : list of dict, optional
        The same for ``provide_label``.

    Examples
    --------
    >>> iter1 = mx.io.NDArrayIter({'data': mx.nd.ones((100, 10))}, batch_size=25)
    >>> iter2 = mx.io.NDArrayIter({'data': mx.nd.ones((100, 10))}, batch_size=25)
    >>> piter = mx.io.PrefetchingIter([iter1, iter2],
    ...                               rename_data=[{'data': 'data_1'}, {'data': 'data_2'}])
    >>> [desc.name for desc in piter.provide_data]
    ['data_1', 'data_2']
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        if not isinstance(iters, list):
            iters = [iters]
        self.n_iter = len(iters)
        if self.n_iter == 0:
            raise MXNetAssertionError('PrefetchingIter: iters is an empty list; give at least '
                                      'one iterator')
        self.iters = iters
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.data_ready = [threading.Event() for _ in range(self.n_iter)]
        self.data_taken = [threading.Event() for _ in range(self.n_iter)]
        for event in self.data_taken:
            event.set()
        self._stop = threading.Event()
        self._errors = [None] * self.n_iter
        self.current_batch = None
        self.next_batch = [None] * self.n_iter
        self.prefetch_threads = [
            threading.Thread(target=_prefetch, daemon=True,
                             args=(it, self.data_ready[i], self.data_taken[i], i,
                                   self.next_batch, self._errors, self._stop))
            for i, it in enumerate(iters)]
        for thread in self.prefetch_threads:
            thread.start()

    @property
    def started(self):
        """Whether the prefetching threads run; setting it to False ends them after the read
        they are in (as deleting the iterator does)."""
        return not self._stop.is_set()

    @started.setter
    def started(self, value):
        if not value:
            self._stop.set()
            for event in self.data_taken:
                event.set()

    def __del__(self):
        # no join, unlike MXNet's: it could wait on a slow iterator while collecting garbage
        if hasattr(self, '_stop'):
            self.started = False

    @property
    def provide_data(self):
        if self.rename_data is None:
            return sum([i.provide_data for i in self.iters], [])
        return sum([[DataDesc(r[x.name], x.shape, x.dtype) if isinstance(x, DataDesc)
                     else DataDesc(*x) for x in i.provide_data]
                    for r, i in zip(self.rename_data, self.iters)], [])

    @property
    def provide_label(self):
        if self.rename_label is None:
            return sum([i.provide_label for i in self.iters], [])
        return sum([[DataDesc(r[x.name], x.shape, x.dtype) if isinstance(x, DataDesc)
                     else DataDesc(*x) for x in i.provide_label]
                    for r, i in zip(self.rename_label, self.iters)], [])

    def reset(self):
        for event in self.data_ready:
            event.wait()
        for it in self.iters:
            it.reset()
        for i in range(self.n_iter):
            self._errors[i] = None
        for event in self.data_ready:
            event.clear()
        for event in self.data_taken:
            event.set()

    def _raise_error(self):
        """Raise the first exception an iterator's thread met, and let that thread read on."""
        for i, error in enumerate(self._errors):
            if error is not None:
                self._errors[i] = None
                self.data_ready[i].clear()
                self.data_taken[i].set()
                raise error

    def iter_next(self):
        for event in self.data_ready:
            event.wait()
        self._raise_error()
        if self.next_batch[0] is None:
            if any(batch is not None for batch in self.next_batch):
                raise MXNetAssertionError('PrefetchingIter: Number of entry mismatches between '
                                          'iterators: the first ended before another')
            return False
        for batch in self.next_batch:
            if batch is None or batch.pad != self.next_batch[0].pad:
                raise MXNetAssertionError('PrefetchingIter: Number of entry mismatches between '
                                          'iterators: their batches have different padding '
                                          'or one ended before the first')
        self.current_batch = DataBatch(sum([batch.data for batch in self.next_batch], []),
                                       sum([batch.label or [] for batch in self.next_batch], []),
                                       self.next_batch[0].pad,
                                       self.next_batch[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        for event in self.data_ready:
            event.clear()
        for event in self.data_taken:
            event.set()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration


class NDArrayIter(DataIter):
    """Batches of arrays held in memory: NDArrays, numpy arrays, or anything ``nd.array``
    reads (numpy arrays and lists become float32 NDArrays, as in MXNet).

    Parameters
    ----------
    data : array, list of arrays or dict of str to array
        The data. One array is named ``data_name``; a list of them ``_0_<data_name>``,
        ``_1_<data_name>``, ...; a dict keeps its names, sorted.
    label : array, list of arrays or dict of str to array, optional
        The labels, named in the same way from ``label_name``.
    batch_size : int
        The number of examples in a batch.
    shuffle : bool
        Whether to shuffle the examples at the start and at each ``reset()``, with numpy's
        global generator (``np.random.seed`` repeats MXNet's order). Each shuffle permutes the
        already shuffled arrays, which become float32 copies, as in MXNet.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
        What to do with the examples that do not fill the last batch: ``'pad'`` fills it with
        examples from the start (``pad`` says how many); ``'discard'`` drops them;
        ``'roll_over'`` keeps them for the first batch of the next epoch (after ``reset()``;
        ``hard_reset()`` drops them).
    data_name, label_name : str
        The names of a single data and label array.
    layout : str
        The layout of the arrays; the batch axis is where its ``N`` is.

    Examples
    --------
    >>> data = np.arange(40).reshape((10, 2, 2))
    >>> labels = np.ones([10, 1])
    >>> it = mx.io.NDArrayIter(data, labels, 3, True, last_batch_handle='discard')
    >>> [batch.data[0].shape for batch in it]
    [(3, 2, 2), (3, 2, 2), (3, 2, 2)]
    >>> it.provide_data
    [DataDesc[data,(3, 2, 2),<class 'numpy.float32'>,NCHW]]
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle='pad',
                 data_name='data', label_name='softmax_label', layout='NCHW'):
        super().__init__(batch_size)
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        self.idx = np.arange(self.data[0][1].shape[0])
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = batch_size
        self.cursor = -self.batch_size
        self.num_data = self.idx.shape[0]
        self.reset()
        self.data_list = [x[1] for x in self.data] + [x[1] for x in self.label]
        self.num_source = len(self.data_list)
        # the incomplete last batch that 'roll_over' carries into the next epoch
        self._cache_data = None
        self._cache_label = None
        self.layout = layout

    def _describe(self, arrays):
        batch_axis = self.layout.find('N')
        return [DataDesc(k, tuple(list(v.shape[:batch_axis]) + [self.batch_size] +
                                  list(v.shape[batch_axis + 1:])), v.dtype, layout=self.layout)
                for k, v in arrays]

    @property
    def provide_data(self):
        """The name, shape (``batch_size`` on the batch axis), dtype and layout of each data
        array of a batch."""
        return self._describe(self.data)

    @property
    def provide_label(self):
        """The same for each label array."""
        return self._describe(self.label)

    def hard_reset(self):
        """Go back to the start, dropping what 'roll_over' kept of the last epoch."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        """Go back to the start (with 'roll_over', the kept examples begin the next epoch)."""
        if self.shuffle:
            self._shuffle_data()
        if self.last_batch_handle == 'roll_over' and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            # cursor - num_data examples are kept: the first batch takes the rest from the start
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        """Move the cursor one batch on; False past the end of the data."""
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        """The next batch; StopIteration at the end of the data, or at an incomplete last
        batch (kept for the next epoch with 'roll_over', dropped with 'discard')."""
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[self.layout.find('N')] != self.batch_size:
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _getdata(self, data_source, start=None, end=None):
        """The examples ``start:end`` of each array of ``data_source``."""
        if start is None and end is None:
            raise MXNetAssertionError('NDArrayIter._getdata: give start or end')
        start = start if start is not None else 0
        if end is None:
            end = data_source[0][1].shape[0] if data_source else 0
        s = slice(start, end)
        return [_slice_along_batch_axis(x[1], s, self.layout.find('N')) for x in data_source]

    def _concat(self, first_data, second_data):
        """Each array of ``first_data`` joined to its match in ``second_data`` along the batch
        axis."""
        if not first_data or not second_data:
            return first_data if first_data else second_data
        if len(first_data) != len(second_data):
            raise MXNetAssertionError('NDArrayIter: data source should contain the same size')
        return [nd.concat(first_data[i], second_data[i], dim=self.layout.find('N'))
                for i in range(len(first_data))]

    def _tile(self, data, repeats):
        """Each array of ``data`` repeated ``repeats`` times along its first axis."""
        if not data:
            return []
        res = []
        for datum in data:
            reps = [1] * len(datum.shape)
            reps[0] = repeats
            res.append(nd.tile(datum, reps=reps))
        return res

    def _batchify(self, data_source):
        """The current batch of the arrays of ``data_source``."""
        if not self.cursor < self.num_data:
            raise MXNetAssertionError('DataIter needs reset.')
        if self.last_batch_handle == 'roll_over' and -self.batch_size < self.cursor < 0:
            # the first batch after a roll-over: the kept examples, then the first ones
            if self._cache_data is None and self._cache_label is None:
                raise MXNetAssertionError('NDArrayIter: next epoch should have cached data')
            cache_data = self._cache_data if self._cache_data is not None else self._cache_label
            second_data = self._getdata(data_source, end=self.cursor + self.batch_size)
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return self._concat(cache_data, second_data)
        if self.last_batch_handle == 'pad' and self.cursor + self.batch_size > self.num_data:
            pad = self.batch_size - self.num_data + self.cursor
            first_data = self._getdata(data_source, start=self.cursor)
            if pad > self.num_data:
                repeats = pad // self.num_data
                second_data = self._tile(self._getdata(data_source, end=self.num_data), repeats)
                if pad % self.num_data != 0:
                    second_data = self._concat(
                        second_data, self._getdata(data_source, end=pad % self.num_data))
            else:
                second_data = self._getdata(data_source, end=pad)
            return self._concat(first_data, second_data)
        end_idx = min(self.cursor + self.batch_size, self.num_data)
        return self._getdata(data_source, self.cursor, end_idx)

    def getdata(self):
        """The data arrays of the current batch."""
        return self._batchify(self.data)

    def getlabel(self):
        """The label arrays of the current batch."""
        return self._batchify(self.label)

    def getpad(self):
        """How many examples of the current batch are padding: those taken from the start with
        'pad'; those kept from the last epoch with 'roll_over'."""
        if self.last_batch_handle == 'pad' and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == 'roll_over' and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        np.random.shuffle(self.idx)
        self.data = _getdata_by_idx(self.data, self.idx)
        self.label = _getdata_by_idx(self.label, self.idx)


class MXDataIter(DataIter):
    """The iterators that MXNet writes in C++ (``CSVIter``, ``MNISTIter``, ``ImageRecordIter``):
    this class gives them MXNet's Python interface over a ``handle`` that reads the batches.

    The first batch is read at construction (so a file error shows at once) and sets
    ``provide_data``, ``provide_label`` and ``batch_size``; ``next()`` returns it first.
    Batches are NDArrays on the CPU.

    Parameters
    ----------
    handle : object
        What reads the batches, with the methods of MXNet's C API for an iterator:
        ``before_first()`` (go back to the start), ``next()`` (read the next batch; False at
        the end), ``get_data()`` and ``get_label()`` (the batch's arrays: numpy arrays, which
        the handle may reuse, or NDArrays), ``get_pad()`` and ``get_index()`` (a numpy array of
        the examples' indices, or None).
    data_name, label_name : str
        The names in ``provide_data`` and ``provide_label``.
    """

    def __init__(self, handle, data_name='data', label_name='softmax_label', **_):
        super().__init__()
        self.handle = handle
        # debug option: the first batch again and again, to time a network without reading
        self._debug_skip_load = False
        self._debug_at_begin = True
        self.first_batch = None
        self.first_batch = self.next()
        data = self.first_batch.data[0]
        label = self.first_batch.label[0]
        self.provide_data = [DataDesc(data_name, data.shape, data.dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, label.dtype)]
        self.batch_size = data.shape[0]

    def debug_skip_load(self):
        """From now on return the current batch forever, without reading (to time a network
        without the reading)."""
        self._debug_skip_load = True
        logging.info('Set debug_skip_load to be true, will simply return first batch')

    def reset(self):
        self._debug_at_begin = True
        self.first_batch = None
        self.handle.before_first()

    def next(self):
        if self._debug_skip_load and not self._debug_at_begin:
            return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                             index=self.getindex())
        if self.first_batch is not None:
            batch = self.first_batch
            self.first_batch = None
            return batch
        self._debug_at_begin = False
        if self.handle.next():
            return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def iter_next(self):
        if self.first_batch is not None:
            # MXNet keeps the first batch here, so that a loop on iter_next() right after
            # construction never ends; it is the current batch of the handle either way
            self.first_batch = None
            return True
        return bool(self.handle.next())

    @staticmethod
    def _to_ndarray(array):
        if isinstance(array, NDArray):
            return array
        return nd.array(array, ctx=cpu(), dtype=array.dtype)

    def getdata(self):
        """The data of the current batch (one NDArray)."""
        return self._to_ndarray(self.handle.get_data())

    def getlabel(self):
        """The label of the current batch (one NDArray)."""
        return self._to_ndarray(self.handle.get_label())

    def getindex(self):
        """The indices (uint64) of the examples of the current batch, or None."""
        index = self.handle.get_index()
        if index is None or len(index) == 0:
            return None
        return np.array(index, dtype=np.uint64)

    def getpad(self):
        """How many examples at the end of the current batch are padding."""
        return int(self.handle.get_pad())


# the keyword arguments that every C++ iterator takes (MXNet's PrefetcherParam)
_DTYPES = ('None', 'bfloat16', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8',
           'uint8')
_PREFETCH_PARAMS = [
    IterParam('prefetch_buffer', 'long (non-negative)', 4, lower=0),
    IterParam('ctx', 'string', 'gpu', choices=('cpu', 'gpu')),
    IterParam('dtype', 'string', 'None', choices=_DTYPES),
]

_CSV_PARAMS = [
    IterParam('data_csv', 'string'),
    IterParam('data_shape', 'Shape(tuple)'),
    IterParam('label_csv', 'string', 'NULL'),
    IterParam('label_shape', 'Shape(tuple)', (1,)),
    IterParam('batch_size', 'int (non-negative)', lower=0),
    IterParam('round_batch', 'boolean', True),
] + _PREFETCH_PARAMS


class CSVIter(MXDataIter):
    """Batches of the rows of a CSV file (or of every file of a directory), as MXNet's C++
    CSVIter reads them.

    Each row is one example, reshaped to ``data_shape``: with ``data_shape=(3, 2)`` the row
    ``1,2,3,4,5,6`` is ``[[1, 2], [3, 4], [5, 6]]``. Numbers are read as MXNet reads them
    (its float parser can differ from Python's ``float`` in the last bit; integers are C's,
    so ``010`` is 8 and ``0x1A`` 26); empty lines are skipped.

    With ``round_batch`` (the default), the last batch of an epoch is filled from the start of
    the data and ``pad`` counts those rows; the next epoch then goes on after them, so with
    4 rows and ``batch_size=3`` the epochs are ``[0 1 2] [3 0 1]``, then ``[2 3 0]``, then
    ``[1 2 3]``, and so on. Without it, ``pad`` counts the missing rows and that part of the
    batch holds what the previous batch left there. ``reset()`` is meant for the end of an
    epoch.

    All arguments are keywords.

    Parameters
    ----------
    data_csv : str
        The CSV file, or a directory whose files are read one after the other (by name).
    data_shape : tuple of int
        The shape of one example; a row must have that many values.
    label_csv : str, optional
        The labels' CSV file or directory, a row per example; without it (or ``'NULL'``) all
        labels are 0.
    label_shape : tuple of int
        The shape of one label; a label of one value gives labels of shape (batch_size,).
    batch_size : int
        The number of rows in a batch.
    round_batch : bool
        Whether to fill the last batch from the start of the data.
    prefetch_buffer : int
        How many batches MXNet reads ahead in a thread; here batches are read when asked for.
    ctx : {'gpu', 'cpu'}
        Where MXNet's loader puts its buffers (pinned memory for 'gpu'); the batches are
        NDArrays on the CPU either way.
    dtype : {'float32', 'int32', 'int64'}
        What the numbers are read as (data and labels).
    data_name, label_name : str
        The names in ``provide_data`` and ``provide_label``.

    Other keyword arguments are ignored, as MXNet ignores them.
    """

    def __init__(self, *, data_csv=REQUIRED, data_shape=REQUIRED, label_csv='NULL',
                 label_shape=(1,), batch_size=REQUIRED, round_batch=True, prefetch_buffer=4,
                 ctx='gpu', dtype='float32', data_name='data', label_name='softmax_label',
                 **kwargs):
        given = dict(data_csv=data_csv, data_shape=data_shape, label_csv=label_csv,
                     label_shape=label_shape, batch_size=batch_size, round_batch=round_batch,
                     prefetch_buffer=prefetch_buffer, ctx=ctx, dtype=dtype)
        if label_csv is None:
            given['label_csv'] = 'NULL'
        params = parse_iter_params('CSVIter', _CSV_PARAMS, given)
        if params['dtype'] not in ('float32', 'int32', 'int64'):
            raise MXNetError(f"CSVIter: {params['dtype']} is not supported for CSVIter; "
                             f"use dtype='float32', 'int32' or 'int64'")
        self.data_csv = params['data_csv']
        self.label_csv = params['label_csv']
        examples = CSVExamples(
            data_files(self.data_csv, 'CSVIter', 'data_csv'), params['data_shape'],
            None if self.label_csv == 'NULL' else
            data_files(self.label_csv, 'CSVIter', 'label_csv'),
            params['label_shape'], np.dtype(params['dtype']))
        handle = BatchLoader(examples, params['batch_size'], params['round_batch'], 'CSVIter')
        super().__init__(handle, data_name=data_name, label_name=label_name, **kwargs)


_MNIST_PARAMS = [
    IterParam('image', 'string', './train-images-idx3-ubyte'),
    IterParam('label', 'string', './train-labels-idx1-ubyte'),
    IterParam('batch_size', 'int', 128, lower=1),
    IterParam('shuffle', 'boolean', True),
    IterParam('flat', 'boolean', False),
    IterParam('seed', 'int', 0),
    IterParam('silent', 'boolean', False),
    IterParam('num_parts', 'int', 1),
    IterParam('part_index', 'int', 0),
] + _PREFETCH_PARAMS


class MNISTIter(MXDataIter):
    """Batches of MNIST's idx files, as MXNet's C++ MNISTIter gives them.

    Images are float32, pixels divided by 256 (as MXNet does), of shape
    (batch_size, 1, rows, cols), or (batch_size, rows * cols) with ``flat``; labels are
    float32 of shape (batch_size,). Only whole batches are given: the examples that do not fill
    one are left out. The files may be gzipped (MXNet reads only plain ones).

    All arguments are keywords.

    Parameters
    ----------
    image, label : str
        The idx files of the images and of the labels.
    batch_size : int
        The number of images in a batch.
    shuffle : bool
        Whether to shuffle the images, once, when the iterator is made; the order is MXNet's
        for the same ``seed``.
    flat : bool
        Whether to give each image as one row of ``rows * cols`` values.
    seed : int
        The seed of the shuffle.
    silent : bool
        Whether to keep quiet; if not, a line saying what was loaded is logged (at INFO).
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` equal parts of the files (for
        distributed training).
    prefetch_buffer, ctx : optional
        As for ``CSVIter``: accepted, batches are read when asked for, on the CPU.
    dtype : {None, 'float32'}
        The images are float32; MXNet fails for other types.
    data_name, label_name : str
        The names in ``provide_data`` and ``provide_label``.

    Other keyword arguments (``input_shape``, ``data_shape``, ...) are ignored, as MXNet
    ignores them.
    """

    def __init__(self, *, image='./train-images-idx3-ubyte', label='./train-labels-idx1-ubyte',
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False, num_parts=1,
                 part_index=0, prefetch_buffer=4, ctx='gpu', dtype=None, data_name='data',
                 label_name='softmax_label', **kwargs):
        params = parse_iter_params('MNISTIter', _MNIST_PARAMS, dict(
            image=image, label=label, batch_size=batch_size, shuffle=shuffle, flat=flat,
            seed=seed, silent=silent, num_parts=num_parts, part_index=part_index,
            prefetch_buffer=prefetch_buffer, ctx=ctx, dtype=dtype))
        if params['dtype'] not in ('None', 'float32'):
            raise MXNetError(f"MNISTIter: dtype={params['dtype']} is not supported: MNIST "
                             f"images are float32 (MXNet fails for any other dtype)")
        images, labels = read_mnist(params['image'], params['label'], params['num_parts'],
                                    params['part_index'])
        if params['shuffle']:
            order = std_shuffle_order(len(labels), params['seed'])
            images, labels = images[order], labels[order]
        size = params['batch_size']
        if not params['silent']:
            shape = ('(%d,%d)' % (size, images[0].size) if params['flat'] else
                     '[%d,1,%d,%d]' % ((size,) + images.shape[1:]))
            logging.info('MNISTIter: load %d images, shuffle=%d, shape=%s', len(images),
                         params['shuffle'], shape)
        handle = MNISTBatches(images, labels, size, params['flat'])
        super().__init__(handle, data_name=data_name, label_name=label_name, **kwargs)


def LibSVMIter(**kwargs):      # noqa: N802 - MXNet's name
    """MXNet's iterator over LibSVM files, whose batches are sparse (CSR) NDArrays.

    hybridlib has no sparse storage, so this raises NotSupportedError. Read the file into
    dense arrays instead (for example ``sklearn.datasets.load_svmlight_file(path,
    zero_based=True)`` and ``.toarray()``) and iterate them with ``NDArrayIter``.
    """
    path = kwargs.get('data_libsvm', '')
    raise NotSupportedError(
        f'LibSVMIter(data_libsvm={path!r}) gives CSR (sparse) batches, and hybridlib has no '
        f'sparse storage: read the file into dense arrays (e.g. sklearn.datasets.'
        f'load_svmlight_file(path, zero_based=True) and .toarray()) and use mx.io.NDArrayIter')
