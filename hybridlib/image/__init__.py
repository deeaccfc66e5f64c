"""``mx.image``: decoding, resizing, cropping and augmenting images, and the image iterators
(``ImageIter``, ``ImageDetIter``). ``image`` holds the classification tools, ``detection``
(also ``det``) those that move bounding boxes with the image."""
from . import image
from .image import *             # noqa: F401,F403
from .image import _get_interp_method  # noqa: F401  (client libraries import it from here)
from . import detection
from . import detection as det
from .detection import *         # noqa: F401,F403
from .. import io, ndarray as nd, recordio   # noqa: F401  (MXNet's mx.image has them)
from ..util import is_np_array   # noqa: F401

__all__ = image.__all__ + [n for n in detection.__all__ if n not in image.__all__] + \
    ['image', 'detection', 'det']
