"""``mx.contrib.io``: a Gluon ``DataLoader`` as an ``mx.io`` iterator, for the Module API."""
from .. import ndarray as nd
from ..io import DataDesc, DataIter

__all__ = ['DataLoaderIter']


class DataLoaderIter(DataIter):
    """The batches of a ``gluon.data.DataLoader`` of (data, label) pairs as ``DataBatch``es.

    The first batch sets ``batch_size``, ``provide_data`` and ``provide_label``; a shorter
    last batch is padded to ``batch_size`` (``getpad`` says by how much; the padding is zeros,
    where MXNet leaves it uninitialised).

    Parameters
    ----------
    loader : gluon.data.DataLoader
        Yields (data, label) pairs of NDArrays.
    data_name, label_name : str
        The names in ``provide_data`` / ``provide_label``.
    dtype : str
        The dtype the batches are cast to (float32 or float16).
    """

    def __init__(self, loader, data_name='data', label_name='softmax_label', dtype='float32'):
        super().__init__()
        self._loader = loader
        self._iter = iter(loader)
        first = next(self._iter, None)
        if first is None:
            raise ValueError('DataLoaderIter: the DataLoader yields no batch')
        # (an NDArray would unpack along its first axis: check for a real pair)
        if not isinstance(first, (list, tuple)) or len(first) != 2:
            raise ValueError('DataLoaderIter: the DataLoader must yield (data, label) pairs, '
                             f'got {type(first).__name__}')
        data, label = first
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current_batch = None
        self.reset()

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        self._current_batch = next(self._iter, None)
        return self._current_batch is not None

    def _padded(self, array):
        array = array.astype(self.dtype)
        pad = self.getpad()
        if not pad:
            return [array]
        full = nd.zeros((self.batch_size,) + array.shape[1:], ctx=array.context,
                        dtype=self.dtype)
        full[:array.shape[0]] = array
        return [full]

    def getdata(self):
        return self._padded(self._current_batch[0])

    def getlabel(self):
        return self._padded(self._current_batch[1])

    def getpad(self):
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self):
        return None
