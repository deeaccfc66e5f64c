"""``mx.io``: data iterators. This holds the base classes (``DataDesc``, ``DataBatch``,
``DataIter``) that ``mx.image.ImageIter`` builds on; the iterators over arrays and files
(``NDArrayIter``, ``CSVIter``, ...) come later."""
from . import io
from .io import DataBatch, DataDesc, DataIter

__all__ = ['DataBatch', 'DataDesc', 'DataIter', 'io']
