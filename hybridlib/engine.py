"""Engine settings (``mx.engine``).

MXNet's engine can bundle many small operators into one scheduled unit ("bulk execution").
hybridlib runs operators as they are called, and bundles them where it counts, in the compiled
graphs of hybridized blocks; the bulk size is kept so that code setting and restoring it runs
unchanged, and it has no effect on results.
"""
import threading

__all__ = ['set_bulk_size', 'bulk']

_state = threading.local()


def set_bulk_size(size):
    """Set the bulk size (kept, without effect here); returns the previous one."""
    previous = getattr(_state, 'size', 0)
    _state.size = int(size)
    return previous


class _BulkScope:
    def __init__(self, size):
        self._size = size
        self._old_size = None

    def __enter__(self):
        self._old_size = set_bulk_size(self._size)
        return self

    def __exit__(self, *exc):
        set_bulk_size(self._old_size)


def bulk(size):
    """A scope with bulk size ``size`` (``with mx.engine.bulk(10): ...``)."""
    return _BulkScope(size)
