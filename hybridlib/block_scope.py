"""Naming scopes and hooks of Gluon blocks: the prefix a block gives what is created inside
it (``name_scope``), forward-hook handles, and the operator-hook names a compiled graph passes
to a monitor callback. Also ``UsageError``, what a wrong use of a block raises.
"""
import threading
import weakref

from . import name as _name
from .base import MXNetAssertionError
from .parameter import ParameterDict

__all__ = ['UsageError', 'HookHandle']


class UsageError(MXNetAssertionError, ValueError):
    """A wrong use of a Block or layer (also a ``ValueError``). MXNet 1.9.1 checks these with
    ``assert``, so ``except AssertionError`` written for MXNet keeps working."""


class _BlockScope:
    """The naming scope of a block: children created inside get ``<block prefix><hint><n>_``."""
    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """(prefix, ParameterDict) of a new block, from the enclosing scope."""
        current = getattr(_BlockScope._current, 'value', None)
        if current is None:
            if prefix is None:
                prefix = _name.current().get(None, hint) + '_'
            params = ParameterDict(prefix) if params is None else \
                ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f'{hint}{count}_'
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, 'value', None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, *exc):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(*exc)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


def _indent(text, n):
    lines = text.split('\n')
    return '\n'.join([lines[0]] + [' ' * n + line for line in lines[1:]])


def _brief(names, limit=7):
    """MXNet's short listing of names: the first 3 and last 4 of a long list, quoted."""
    names = list(names)
    if len(names) > limit:
        return _brief(names[:limit // 2], limit) + ', ..., ' + _brief(names[-limit // 2:], limit)
    return ', '.join(f"'{n}'" for n in names)


class HookHandle:
    """Detaches a forward hook or pre-hook from its block (also as a context manager)."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        if self._hooks_dict_ref is not None:
            raise UsageError('The same handle cannot be attached twice.')
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self):
        hooks = self._hooks_dict_ref() if self._hooks_dict_ref else None
        if hooks is not None and self._id in hooks:
            del hooks[self._id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


class _HookName(str):
    """An operator-hook name: a ``str`` that also has ``decode()``, because MXNet passes bytes
    and callbacks written for it decode them."""

    def decode(self, encoding='utf-8', errors='strict'):
        return str(self)


def _op_hook(callback):
    """``callback`` as CachedOp calls it, with names that work as MXNet's bytes and as str."""
    def call(name, op_name, array):
        callback(_HookName(name), _HookName(op_name), array)
    return call
