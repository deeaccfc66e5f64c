"""The base classes of MXNet's data iterators: ``DataDesc``, ``DataBatch`` and ``DataIter``.

An iterator yields ``DataBatch`` objects on each ``next()``; ``provide_data`` and
``provide_label`` describe its arrays with ``DataDesc`` (name, shape, dtype, layout).
``mx.image.ImageIter`` is built on these; the array iterators (``NDArrayIter``, ``CSVIter``, ...)
come later.
"""
from collections import namedtuple

import numpy as np

from ..base import MXNetAssertionError

__all__ = ['DataDesc', 'DataBatch', 'DataIter']


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
