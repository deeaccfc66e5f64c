"""Automatic naming of Symbols: ``fullyconnected0``, ``_plus1``, and prefixes (``dense0_fwd``).

As ``mxnet.name``: the current NameManager gives a node its name from a hint (the called
operator's name in lower case) and a counter per hint; ``Prefix`` puts a prefix in front.
Managers nest with ``with``.
"""
import threading

__all__ = ['NameManager', 'Prefix', 'current']

_local = threading.local()


class NameManager:
    """Gives names ``<hint><n>`` with one counter per hint; an explicit name is kept."""

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """The node name: ``name`` if given, else the next ``<hint><n>``."""
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f'{hint}{n}'

    def __enter__(self):
        self._old_manager = current()
        _local.value = self
        return self

    def __exit__(self, *exc):
        _local.value = self._old_manager


class Prefix(NameManager):
    """A NameManager that puts ``prefix`` in front of every name (given or generated)."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


_DEFAULT = NameManager()


def current():
    """The innermost NameManager of this thread."""
    return getattr(_local, 'value', None) or _DEFAULT


class _CurrentDescriptor:
    def __get__(self, obj, cls):
        return current()


NameManager.current = _CurrentDescriptor()
