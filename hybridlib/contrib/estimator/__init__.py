"""The Gluon estimator (``gluon.contrib.estimator``): a training loop over a DataLoader
(``Estimator.fit``, ``evaluate``) driven by event handlers (metrics, validation, logging,
checkpoints, early stopping, gradient updates) and a ``BatchProcessor`` for the per-batch
work."""
from . import estimator, event_handler, batch_processor, utils
from .estimator import *          # noqa: F401,F403
from .event_handler import *      # noqa: F401,F403
from .batch_processor import *    # noqa: F401,F403

__all__ = estimator.__all__ + event_handler.__all__ + batch_processor.__all__
