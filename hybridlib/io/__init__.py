"""``mx.io``: data iterators over arrays (``NDArrayIter``, ``ResizeIter``, ``PrefetchingIter``)
and files (``CSVIter``, ``MNISTIter``, the ``ImageRecordIter`` family), and their base classes
(``DataDesc``, ``DataBatch``, ``DataIter``, ``MXDataIter``)."""
from . import io
from .io import (CSVIter, DataBatch, DataDesc, DataIter, LibSVMIter, MNISTIter, MXDataIter,
                 NDArrayIter, PrefetchingIter, ResizeIter)
from . import utils
from .utils import _init_data, _getdata_by_idx, _has_instance  # noqa: F401 (as in MXNet)
from .image_record import (ImageRecordIter, ImageRecordUInt8Iter, ImageRecordInt8Iter,
                           ImageRecordIter_v1, ImageRecordUInt8Iter_v1, ImageDetRecordIter)

# MXNet's mxnet.io.io holds its C++ iterators too; image_record.py builds on io.py, so they are
# bound to that module here
for _name in ('ImageRecordIter', 'ImageRecordUInt8Iter', 'ImageRecordInt8Iter',
              'ImageRecordIter_v1', 'ImageRecordUInt8Iter_v1', 'ImageDetRecordIter'):
    setattr(io, _name, globals()[_name])
del _name

__all__ = ['CSVIter', 'DataBatch', 'DataDesc', 'DataIter', 'ImageDetRecordIter',
           'ImageRecordInt8Iter', 'ImageRecordIter', 'ImageRecordIter_v1', 'ImageRecordUInt8Iter',
           'ImageRecordUInt8Iter_v1', 'LibSVMIter', 'MNISTIter', 'MXDataIter', 'NDArrayIter',
           'PrefetchingIter', 'ResizeIter', 'io', 'utils']
