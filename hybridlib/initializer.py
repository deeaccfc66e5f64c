"""Weight initializers (``mx.init``), as MXNet 1.9.1 defines them.

An ``Initializer`` fills an NDArray in place. ``create`` turns any spelling into one: an
instance, a registered name (``'xavier'``, ``'zeros'``) or the JSON that ``dumps`` writes into a
``-symbol.json`` ``__init__`` attribute (``'["xavier", {"magnitude": 2}]'``).

Gluon calls ``default_init(InitDesc(name, {'__init__': init}), array)``: the parameter's own
initializer (``init``) wins over the block-wide one, which is what ``Initializer.__call__``
implements.
"""
import json

import numpy as np

from .base import MXNetError

__all__ = ['InitDesc', 'Initializer', 'register', 'alias', 'create', 'Zero', 'One', 'Constant',
           'Uniform', 'Normal', 'Xavier']

_REGISTRY = {}


def register(klass):
    """Class decorator: make ``klass`` creatable by its lower-case name."""
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*names):
    """Class decorator: more names for ``create``."""
    def wrap(klass):
        for name in names:
            _REGISTRY[name.lower()] = klass
        return klass
    return wrap


def create(init, **kwargs):
    """An Initializer from an instance, a registered name or ``dumps()`` JSON."""
    if isinstance(init, Initializer):
        return init
    if isinstance(init, type) and issubclass(init, Initializer):
        return init(**kwargs)
    if not isinstance(init, str):
        raise TypeError(f'an initializer is an Initializer or a name, not {init!r}')
    name, params = init, dict(kwargs)
    if init.startswith('['):
        try:
            name, loaded = json.loads(init)
        except (ValueError, TypeError):
            raise MXNetError(f'cannot read the initializer {init!r}') from None
        params.update(loaded)
    klass = _REGISTRY.get(name.lower())
    if klass is None:
        raise MXNetError(f'unknown initializer {name!r}; known: {", ".join(sorted(_REGISTRY))}')
    return klass(**params)


class InitDesc(str):
    """The name of the array to initialize, with its attributes (``__init__``...)."""

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


class Initializer:
    """Base class: subclasses implement ``_init_weight(desc, arr)``."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Print a summary of every array this initializer fills."""
        self._verbose = verbose
        self._print_func = print_func or (lambda x: str(float(x.norm().asscalar())))
        return self

    def dumps(self):
        """JSON ``[name, kwargs]``, the form MXNet stores in a graph's ``__init__`` attribute."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __repr__(self):
        args = ', '.join(f'{k}={v!r}' for k, v in self._kwargs.items())
        return f'{type(self).__name__}({args})'

    def __call__(self, desc, arr):
        if not isinstance(desc, InitDesc):
            desc = InitDesc(str(desc))
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get('__init__', '')
        if init:
            create(init)._init_weight(desc, arr)
        elif desc.endswith('weight'):
            self._init_weight(desc, arr)
        elif desc.endswith('bias') or desc.endswith('beta') or desc.endswith('min'):
            arr[:] = 0.0
        elif desc.endswith('gamma') or desc.endswith('max'):
            arr[:] = 1.0
        else:
            raise MXNetError(
                f'unknown initialization pattern for {desc}: default initialization is limited '
                'to "weight", "bias", "gamma" (1.0) and "beta" (0.0); give the parameter an '
                'initializer of its own')
        if self._verbose and self._print_func:
            print(f'Initialized {desc} as {init or type(self).__name__}: '
                  f'{self._print_func(arr)}')

    def _init_weight(self, desc, arr):
        raise NotImplementedError(f'{type(self).__name__} must implement _init_weight')


@register
@alias('zeros')
class Zero(Initializer):
    """Fills with 0."""

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias('ones')
class One(Initializer):
    """Fills with 1."""

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Fills with ``value`` (a scalar, or an array broadcast to the shape)."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        value = self.value
        if hasattr(value, 'asnumpy'):
            value = value.asnumpy()
        arr[:] = np.asarray(value) if not np.isscalar(value) else value

    def dumps(self):
        value = self.value
        if not np.isscalar(value):
            value = (value.asnumpy() if hasattr(value, 'asnumpy') else np.asarray(value)).tolist()
        return json.dumps([type(self).__name__.lower(), {'value': value}])


@register
class Uniform(Initializer):
    """Uniform draws in ``[-scale, scale)``."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _fill_random(arr, 'uniform', -self.scale, self.scale)


@register
class Normal(Initializer):
    """Normal draws with mean 0 and standard deviation ``sigma``."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _fill_random(arr, 'normal', 0, self.sigma)


@register
class Xavier(Initializer):
    """Glorot/Xavier: draws of scale ``sqrt(magnitude / factor)``, where ``factor`` is the
    average of fan in and fan out (``factor_type='avg'``), fan in or fan out; ``rnd_type``
    uniform or gaussian. Needs at least 2-d arrays (fans count the kernel's spatial size)."""

    def __init__(self, rnd_type='uniform', factor_type='avg', magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        if rnd_type not in ('uniform', 'gaussian'):
            raise ValueError(f'Xavier: rnd_type must be uniform or gaussian, not {rnd_type!r}')
        if factor_type not in ('avg', 'in', 'out'):
            raise ValueError(f'Xavier: factor_type must be avg, in or out, not {factor_type!r}')
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError(f'Xavier initializer cannot be applied to vector {name}. It '
                             'requires at least 2D.')
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {'avg': (fan_in + fan_out) / 2.0, 'in': fan_in, 'out': fan_out}[self.factor_type]
        scale = np.sqrt(self.magnitude / factor)
        if self.rnd_type == 'uniform':
            _fill_random(arr, 'uniform', -scale, scale)
        else:
            _fill_random(arr, 'normal', 0, scale)


def _fill_random(arr, kind, a, b):
    from . import ndarray as nd
    if kind == 'uniform':
        nd.random.uniform(a, b, shape=arr.shape, dtype=arr.dtype, ctx=arr.context, out=arr)
    else:
        nd.random.normal(a, b, shape=arr.shape, dtype=arr.dtype, ctx=arr.context, out=arr)
