"""Weight initializers (``mx.init``), as MXNet 1.9.1 defines them.

An ``Initializer`` fills an NDArray in place. ``create`` turns any spelling into one: an
instance, a registered name (``'xavier'``, ``'zeros'``), a dict (``{'initializer': 'normal',
'sigma': 0.5}``) or the JSON that ``dumps`` writes into a ``-symbol.json`` ``__init__``
attribute (``'["xavier", {"magnitude": 2}]'``).

Gluon calls ``default_init(InitDesc(name, {'__init__': init}), array)``: the parameter's own
initializer (``init``) wins over the block-wide one, which is what ``Initializer.__call__``
implements. A plain name instead of an ``InitDesc`` is MXNet's deprecated calling convention
(Module era): the suffix of the name picks the fill (``_bias`` 0, ``_gamma`` 1, ...).

Random draws go through ``nd.random`` (``mx.random.seed`` makes them repeatable); the numbers
cannot equal MXNet's, whose generator differs, but their distributions do.
"""
import json
import logging
import re
import warnings
from math import sqrt

import numpy as np

from . import ndarray as nd
from .base import MXNetAssertionError
from .ndarray import NDArray
from .ops.rnn import fused_layout

__all__ = ['InitDesc', 'Initializer', 'register', 'alias', 'create', 'Load', 'Mixed', 'Zero',
           'One', 'Constant', 'Uniform', 'Normal', 'Orthogonal', 'Xavier', 'MSRAPrelu',
           'Bilinear', 'LSTMBias', 'FusedRNN']


_REGISTRY = {}


def _register(klass, name=None):
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise MXNetAssertionError('Can only register subclass of Initializer')
    name = (klass.__name__ if name is None else name).lower()
    old = _REGISTRY.get(name)
    if old is not None and old is not klass:
        warnings.warn(f'New initializer {klass.__module__}.{klass.__name__} registered with name '
                      f'{name} is overriding existing initializer {old.__module__}.'
                      f'{old.__name__}', UserWarning, stacklevel=3)
    _REGISTRY[name] = klass
    return klass


def register(klass):
    """Class decorator: make ``klass`` (an Initializer subclass) creatable by its lower-case
    name, as ``create('myinit')`` or a ``__init__`` attribute in a graph."""
    return _register(klass)


def alias(*aliases):
    """Class decorator: more names under which ``create`` finds the class."""
    def reg(klass):
        for name in aliases:
            _register(klass, name)
        return klass
    return reg


def create(*args, **kwargs):
    """An Initializer from an instance, a registered name, a dict or ``dumps()`` JSON.

    ``create('xavier', magnitude=2)``, ``create('["xavier", {"magnitude": 2}]')``,
    ``create({'initializer': 'normal', 'sigma': 0.5})`` and ``create(initializer='zeros')``
    all work, as in MXNet.
    """
    if args:
        name, args = args[0], args[1:]
    elif 'initializer' in kwargs:
        name = kwargs.pop('initializer')
    else:
        raise TypeError("create() needs the initializer: a name, an Initializer, a dict or "
                        "JSON (positionally or as initializer=)")
    if isinstance(name, Initializer):
        if args or kwargs:
            raise MXNetAssertionError('initializer is already an instance. Additional arguments '
                                      'are invalid')
        return name
    if isinstance(name, dict):
        return create(**name)
    if not isinstance(name, str):
        raise MXNetAssertionError(f'initializer must be of string type (a registered name, '
                                  f'JSON or an Initializer), not {name!r}')
    if name.startswith(('[', '{')):
        if args or kwargs:
            raise MXNetAssertionError(f'initializer {name!r} is JSON with its own arguments; '
                                      'additional arguments are invalid')
        try:
            loaded = json.loads(name)
        except ValueError:
            raise MXNetAssertionError(f'cannot read the initializer JSON {name!r}') from None
        if isinstance(loaded, dict):
            return create(**loaded)
        name, kwargs = loaded
        return create(name, **kwargs)
    klass = _REGISTRY.get(name.lower())
    if klass is None:
        raise MXNetAssertionError(f'{name.lower()} is not registered. Please register with '
                                  f'initializer.register first (known: '
                                  f'{", ".join(sorted(_REGISTRY))})')
    return klass(*args, **kwargs)


class InitDesc(str):
    """The name of the array to initialize, with its attributes (``__init__``...) and the
    global initializer to fall back to."""

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


def _norm_stat(arr):
    """MXNet's default verbose statistic: the root mean square of ``arr``."""
    return str((nd.norm(arr) / sqrt(arr.size)).asscalar())


class Initializer:
    """Base class: subclasses implement ``_init_weight(desc, arr)``.

    ``init(InitDesc(name, attrs), arr)`` fills ``arr``: with the initializer named by
    ``attrs['__init__']`` when there is one, else by the name's suffix (``weight`` with
    ``_init_weight``, ``bias``/``beta``/``min`` with 0, ``gamma``/``max`` with 1).
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log (``logging.info``) a statistic of every array this initializer fills.

        ``print_func(arr) -> str`` defaults to the root mean square of the array.
        """
        self._verbose = verbose
        self._print_func = _norm_stat if print_func is None else print_func
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info('Initialized %s as %s: %s', desc, init, self._print_func(arr))

    def dumps(self):
        """JSON ``[name, kwargs]``, the form MXNet stores in a graph's ``__init__`` attribute.

        >>> mx.init.Xavier(factor_type='in', magnitude=2.34).dumps()
        '["xavier", {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2.34}]'
        """
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __repr__(self):
        # MXNet shows the default object repr; the arguments say more
        args = ', '.join(f'{k}={v!r}' for k, v in self._kwargs.items())
        return f'{type(self).__name__}({args})'

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = None     # equal by value and mutable, as in MXNet

    def __call__(self, desc, arr):
        """Fill ``arr`` (an NDArray) for the array described by ``desc`` (an InitDesc)."""
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get('__init__', '')
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, fill in (('weight', self._init_weight), ('bias', self._init_bias),
                             ('gamma', self._init_gamma), ('beta', self._init_beta),
                             ('min', self._init_zero), ('max', self._init_one),
                             ('weight_quantize', self._init_quantized_weight),
                             ('bias_quantize', self._init_quantized_bias)):
            if desc.endswith(suffix):
                fill(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr):
        """MXNet's deprecated ``init(name, arr)``: the fill follows the name's prefix/suffix."""
        warnings.warn('Calling initializer with init(str, NDArray) has been deprecated.please '
                      'use init(mx.init.InitDesc(...), NDArray) instead.', DeprecationWarning,
                      stacklevel=3)
        if not isinstance(name, str):
            raise TypeError('name must be string')
        if not isinstance(arr, NDArray):
            raise TypeError('arr must be NDArray')
        if name.startswith('upsampling'):
            self._init_bilinear(name, arr)
        elif name.startswith('stn_loc') and name.endswith('weight'):
            self._init_zero(name, arr)
        elif name.startswith('stn_loc') and name.endswith('bias'):
            self._init_loc_bias(name, arr)
        else:
            for suffix, fill in (('bias', self._init_bias), ('gamma', self._init_gamma),
                                 ('beta', self._init_beta), ('weight', self._init_weight),
                                 ('moving_mean', self._init_zero),
                                 ('moving_var', self._init_one),
                                 ('moving_inv_var', self._init_zero),
                                 ('moving_avg', self._init_zero), ('min', self._init_zero),
                                 ('max', self._init_one)):
                if name.endswith(suffix):
                    fill(name, arr)
                    return
            self._init_default(name, arr)

    def _init_bilinear(self, _, arr):
        arr[:] = _bilinear_kernel(arr.shape)

    def _init_loc_bias(self, name, arr):
        if arr.shape[0] != 6:
            raise MXNetAssertionError(f'{name}: a spatial transformer localisation bias has 6 '
                                      f'values, not shape {arr.shape}')
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    def _init_bias(self, _, arr):
        arr[:] = 0.0

    def _init_quantized_bias(self, _, arr):
        arr[:] = 0

    def _init_gamma(self, _, arr):
        arr[:] = 1.0

    def _init_beta(self, _, arr):
        arr[:] = 0.0

    def _init_weight(self, name, arr):
        raise NotImplementedError(f'{type(self).__name__} must implement _init_weight')

    def _init_quantized_weight(self, _, arr):
        # MXNet draws one integer for the whole array (no shape); one per element here
        draws = nd.random.randint(-127, 127, shape=arr.shape, dtype='int32', ctx=arr.context)
        arr[:] = draws.astype(arr.dtype)

    def _init_default(self, name, _):
        raise ValueError(f'Unknown initialization pattern for {name}. Default initialization is '
                         'now limited to "weight", "bias", "gamma" (1.0), and "beta" (0.0).'
                         'Please use mx.sym.Variable(init=mx.init.*) to set initialization '
                         'pattern')


def _bilinear_kernel(shape):
    """The weights of a bilinear-upsampling deconvolution of kernel ``shape[2:]``
    (``(C_out, C_in, kh, kw)``), as MXNet's Bilinear computes them (float32)."""
    if len(shape) != 4:
        raise ValueError(f'Bilinear initializer needs a 4-d (C_out, C_in, kh, kw) weight, not '
                         f'shape {tuple(shape)}')
    # MXNet takes both the scale and the centre from the width, also for the rows
    f = np.ceil(shape[3] / 2.)
    c = (2 * f - 1 - f % 2) / (2. * f)
    x = np.arange(shape[3])
    y = np.arange(shape[2])[:, None]
    kernel = (1 - np.abs(x / f - c)) * (1 - np.abs(y / f - c))
    return np.broadcast_to(kernel.astype(np.float32), shape)


def _fill_random(arr, kind, a, b):
    sample = nd.random.uniform if kind == 'uniform' else nd.random.normal
    sample(a, b, shape=arr.shape, dtype=arr.dtype, ctx=arr.context, out=arr)


class Load:
    """Initializes arrays from a file or a dict of NDArrays, by name (``arg:``/``aux:`` dropped).

    Parameters
    ----------
    param : str or dict of str to NDArray
        A ``.params`` file (``nd.save``/``export``) or the dict itself.
    default_init : Initializer, optional
        For names that ``param`` does not hold.
    verbose : bool
        Log where each array came from.
    """

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            param = nd.load(param)
        if not isinstance(param, dict):
            raise MXNetAssertionError('Load needs a dict of named arrays (or a file of them), '
                                      f'not {type(param).__name__}')
        self.param = {(name[4:] if name.startswith(('arg:', 'aux:')) else name): arr
                      for name, arr in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            if arr.shape != self.param[name].shape:
                raise MXNetAssertionError(
                    f'Parameter {name} cannot be initialized from loading. Shape mismatch, '
                    f'target {arr.shape} vs loaded {self.param[name].shape}')
            arr[:] = self.param[name]
            if self.verbose:
                logging.info('Initialized %s by loading', name)
            return
        if self.default_init is None:
            raise MXNetAssertionError(f'Cannot Initialize {name}. Not found in loaded param and '
                                      'no default Initializer is provided.')
        self.default_init(name, arr)
        if self.verbose:
            logging.info('Initialized %s by default', name)


class Mixed:
    """Initializes each array with the initializer of the first pattern its name matches.

    Parameters
    ----------
    patterns : list of str
        Regular expressions (``re.match``: anchored at the start of the name).
    initializers : list of Initializer
        One per pattern.

    ``Mixed(['.*bias', '.*'], [mx.init.Zero(), mx.init.Uniform(0.1)])``
    """

    def __init__(self, patterns, initializers):
        if len(patterns) != len(initializers):
            raise MXNetAssertionError(f'Mixed needs one initializer per pattern: '
                                      f'{len(patterns)} patterns, {len(initializers)} '
                                      'initializers')
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        # MXNet's message forgets to fill in the name
        raise ValueError(f'Parameter name {name} did not match any pattern. Consider add a ".*" '
                         'pattern at the and with default Initializer.')


@register
@alias('zeros')
class Zero(Initializer):
    """Fills with 0."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias('ones')
class One(Initializer):
    """Fills with 1."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Fills with ``value``: a scalar, or an array (NDArray, numpy, list) that broadcasts to
    the shape."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        value = self.value
        if isinstance(value, (list, tuple)):
            value = np.asarray(value)
        arr[:] = value

    def dumps(self):
        value = self._kwargs['value']
        if not np.isscalar(value):
            # MXNet converts NDArray and numpy values (and fails on lists)
            value = value.asnumpy() if hasattr(value, 'asnumpy') else np.asarray(value)
            value = value.tolist()
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
class Orthogonal(Initializer):
    """An orthogonal matrix times ``scale`` (Saxe et al., https://arxiv.org/abs/1312.6120).

    The weight is seen as ``(shape[0], prod(shape[1:]))``; its rows (when there are no more rows
    than columns) or columns are orthonormal, taken from the SVD of ``rand_type`` ('uniform' in
    [-1, 1) or 'normal') draws.
    """

    def __init__(self, scale=1.414, rand_type='uniform'):
        super().__init__(scale=scale, rand_type=rand_type)
        # MXNet fails with UnboundLocalError on the first use of another rand_type
        if rand_type not in ('uniform', 'normal'):
            raise ValueError(f"Orthogonal: rand_type must be 'uniform' or 'normal', not "
                             f'{rand_type!r}')
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        if self.rand_type == 'uniform':
            tmp = nd.random.uniform(-1.0, 1.0, shape=(nout, nin)).asnumpy()
        else:
            tmp = nd.random.normal(0.0, 1.0, shape=(nout, nin)).asnumpy()
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = self.scale * res.reshape(arr.shape)


@register
class Xavier(Initializer):
    """Glorot/Xavier: draws of scale ``c = sqrt(magnitude / factor)``.

    ``factor`` is the average of fan in and fan out (``factor_type='avg'``), the fan in
    (``'in'``) or the fan out (``'out'``), where for a weight of shape ``(O, I, *kernel)`` fan in
    is ``I * prod(kernel)`` and fan out ``O * prod(kernel)``. ``rnd_type='uniform'`` draws in
    ``[-c, c)``, ``'gaussian'`` from N(0, c^2). Needs at least 2-d arrays.
    """

    def __init__(self, rnd_type='uniform', factor_type='avg', magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        # MXNet checks these only when it first fills an array; the same errors, earlier
        if rnd_type not in ('uniform', 'gaussian'):
            raise ValueError(f"Unknown random type {rnd_type!r}: use 'uniform' or 'gaussian'")
        if factor_type not in ('avg', 'in', 'out'):
            raise ValueError(f"Incorrect factor type {factor_type!r}: use 'avg', 'in' or 'out'")
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
        scale = float(np.sqrt(self.magnitude / factor))
        if self.rnd_type == 'uniform':
            _fill_random(arr, 'uniform', -scale, scale)
        else:
            _fill_random(arr, 'normal', 0, scale)


@register
class MSRAPrelu(Xavier):
    """He/MSRA initialization for (P)ReLU networks (https://arxiv.org/abs/1502.01852):
    gaussian Xavier with ``magnitude = 2 / (1 + slope**2)``."""

    def __init__(self, factor_type='avg', slope=0.25):
        magnitude = 2. / (1 + slope ** 2)
        super().__init__('gaussian', factor_type, magnitude)
        self._kwargs = {'factor_type': factor_type, 'slope': slope}


@register
class Bilinear(Initializer):
    """Bilinear-interpolation weights for upsampling deconvolutions (4-d weights)."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = _bilinear_kernel(arr.shape)


@register
class LSTMBias(Initializer):
    """Zeros, except the forget gate's quarter (the second of the 4 LSTM gates), which is
    ``forget_bias`` (Jozefowicz et al. 2015 recommend 1.0)."""

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden:2 * num_hidden] = self.forget_bias


# the gates of each fused RNN mode, as the legacy FusedRNNCell names its unpacked weights
_FUSED_GATES = {'lstm': ('_i', '_f', '_c', '_o'), 'gru': ('_r', '_z', '_o'),
                'rnn_relu': ('',), 'rnn_tanh': ('',)}


@register
class FusedRNN(Initializer):
    """Initializes the flat parameter vector of a fused RNN (the ``RNN`` operator) one matrix
    at a time, as MXNet's legacy ``FusedRNNCell`` unpacks it: ``l0_i2h_i_weight``,
    ``r1_h2h_f_bias``, ... with ``init`` (or the global initializer when None); every
    ``_f_bias`` of an LSTM is ``forget_bias``.

    Parameters
    ----------
    init : Initializer, str or None
    num_hidden, num_layers : int
    mode : {'lstm', 'gru', 'rnn_relu', 'rnn_tanh'}
    bidirectional : bool, default False
    forget_bias : float, default 1.0
    """

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if isinstance(init, str):
            init = create(init)
        super().__init__(init=init.dumps() if init is not None else None,
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        if mode not in _FUSED_GATES:
            raise MXNetAssertionError(f'FusedRNN: mode must be one of {sorted(_FUSED_GATES)}, '
                                      f'not {mode!r}')
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _matrices(self, size):
        """[(name, offset, shape)] of each gate's matrix in the flat vector of ``size``."""
        layers = fused_layout(self._mode, self._num_layers, self._num_hidden,
                              self._bidirectional, size)
        if layers is None:
            raise MXNetAssertionError(
                f'FusedRNN: {size} parameters do not fit a {self._mode} RNN of '
                f'{self._num_layers} layer(s), {self._num_hidden} hidden units'
                f'{", bidirectional" if self._bidirectional else ""}')
        H = self._num_hidden
        entries = []
        for layer, dirs in enumerate(layers):
            for direction, matrices in zip('lr', dirs):
                for key, group, kind in (('wi', 'i2h', 'weight'), ('wh', 'h2h', 'weight'),
                                         ('bi', 'i2h', 'bias'), ('bh', 'h2h', 'bias')):
                    offset, shape = matrices[key]
                    part = (H,) + tuple(shape[1:])           # one gate's rows
                    for g, gate in enumerate(_FUSED_GATES[self._mode]):
                        entries.append((f'{direction}{layer}_{group}{gate}_{kind}',
                                        offset + g * int(np.prod(part)), part))
        return entries

    def _init_weight(self, desc, arr):
        flat = arr.asnumpy().reshape(-1)
        for name, offset, shape in self._matrices(flat.size):
            part = nd.zeros(shape, ctx=arr.context, dtype=arr.dtype)
            sub = InitDesc(name, global_init=desc.global_init)
            if self._mode == 'lstm' and name.endswith('_f_bias'):
                part[:] = self._forget_bias
            elif self._init is None:
                desc.global_init(sub, part)
            else:
                self._init(sub, part)
            flat[offset:offset + part.size] = part.asnumpy().reshape(-1)
        arr[:] = flat.reshape(arr.shape)
