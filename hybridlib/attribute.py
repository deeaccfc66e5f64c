"""``AttrScope``: attributes attached to every Symbol created inside a ``with`` block."""
import threading

__all__ = ['AttrScope', 'current']

_local = threading.local()


class AttrScope:
    """``with AttrScope(ctx_group='dev1'):`` adds these string attributes to new Symbols."""

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError(f'AttrScope: attribute {key!r} must be a string, got {value!r}')
        self._attr = kwargs
        self._old_scope = None

    def get(self, attr):
        """The scope's attributes updated with ``attr`` (which wins)."""
        if not self._attr:
            return dict(attr) if attr else {}
        merged = dict(self._attr)
        if attr:
            merged.update(attr)
        return merged

    def __enter__(self):
        self._old_scope = current()
        merged = dict(self._old_scope._attr)
        merged.update(self._attr)
        self._attr = merged
        _local.value = self
        return self

    def __exit__(self, *exc):
        _local.value = self._old_scope


_DEFAULT = AttrScope()


def current():
    """The innermost AttrScope of this thread."""
    return getattr(_local, 'value', None) or _DEFAULT


class _CurrentDescriptor:
    def __get__(self, obj, cls):
        return current()


AttrScope.current = _CurrentDescriptor()
