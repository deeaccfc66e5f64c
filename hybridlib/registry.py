"""Registries of named classes (``mx.registry``), as MXNet's: one per base class.

``get_register_func(Base, 'nickname')`` returns a decorator that registers subclasses of Base
under their lower-cased name; ``get_create_func`` makes instances from a name, a JSON string
(``'["name", {kwargs}]'`` or ``'{"nickname": "name", ...}'``), a dict or an instance.
Libraries built on MXNet (GluonNLP's subword functions and token embeddings) register their
own classes this way.
"""
import json
import warnings

from .base import MXNetAssertionError

__all__ = ['get_registry', 'get_register_func', 'get_alias_func', 'get_create_func']

_REGISTRY = {}


def get_registry(base_class):
    """A copy of the {name: class} registry of ``base_class``."""
    return dict(_REGISTRY.setdefault(base_class, {}))


def get_register_func(base_class, nickname):
    """A decorator ``register(klass, name=None)`` for subclasses of ``base_class``."""
    registry = _REGISTRY.setdefault(base_class, {})

    def register(klass, name=None):
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise MXNetAssertionError(f'Can only register subclass of {base_class.__name__}')
        name = (name or klass.__name__).lower()
        if name in registry:
            old = registry[name]
            warnings.warn(f'New {nickname} {klass.__module__}.{klass.__name__} registered with '
                          f'name {name} is overriding existing {nickname} '
                          f'{old.__module__}.{old.__name__}', UserWarning, stacklevel=2)
        registry[name] = klass
        return klass

    register.__doc__ = f'Register {nickname} to the {nickname} factory'
    return register


def get_alias_func(base_class, nickname):
    """A decorator factory ``alias(*names)`` registering a class under each name."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        def reg(klass):
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class, nickname):
    """A function ``create(name_or_config, *args, **kwargs)`` making ``base_class`` instances."""
    registry = _REGISTRY.setdefault(base_class, {})

    def create(*args, **kwargs):
        if args:
            name, args = args[0], args[1:]
        else:
            name = kwargs.pop(nickname)
        if isinstance(name, base_class):
            if args or kwargs:
                raise MXNetAssertionError(
                    f'{nickname} is already an instance. Additional arguments are invalid')
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, str):
            raise MXNetAssertionError(f'{nickname} must be of string type')
        if name.startswith('['):
            name, kwargs = json.loads(name)
            return create(name, **kwargs)
        if name.startswith('{'):
            return create(**json.loads(name))
        name = name.lower()
        if name not in registry:
            raise MXNetAssertionError(f'{name} is not registered. Please register with '
                                      f'{nickname}.register first')
        return registry[name](*args, **kwargs)

    create.__doc__ = (f'Create a {nickname} instance from config: a registered name, a JSON '
                      f'string, a dict or a {base_class.__name__} instance.')
    return create
