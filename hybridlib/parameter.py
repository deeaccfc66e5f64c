"""Parameter, Constant and ParameterDict, as in Gluon 1.9.1.

A Parameter holds one array per context (``data(ctx)``), a gradient buffer per context
(``grad(ctx)``) marked for autograd with its ``grad_req``, and everything a graph needs to know
about it (``var()``: name, shape, dtype, lr_mult, wd_mult, init). A shape may have unknown (0)
dimensions: with ``allow_deferred_init`` the arrays are created on the first forward pass, once
shape inference has filled them in.

Names follow Gluon's prefix scheme (``hybridsequential0_dense0_weight``), so parameter files and
exports written by MXNet load by name, and files written here load in MXNet.

What MXNet checks with ``assert`` raises ``MXNetAssertionError`` here, which is both an
``AssertionError`` (as in MXNet) and an ``MXNetError``.
"""
import copy
import warnings
from collections import OrderedDict

import numpy as np

from . import autograd, initializer
from . import ndarray as nd
from . import symbol
from .base import MXNetAssertionError, MXNetError, NotSupportedError, np_dtype
from .context import Context, cpu, current_context

__all__ = ['DeferredInitializationError', 'Parameter', 'Constant', 'ParameterDict',
           'tensor_types']

tensor_types = (symbol.Symbol, nd.NDArray)

_NAMING_HELP = ('For more info on naming, please see '
                'https://mxnet.io/api/python/docs/tutorials/packages/gluon/blocks/naming.html')


class DeferredInitializationError(MXNetError):
    """A parameter's arrays are not created yet: its shape becomes known on the first forward."""


def shape_is_known(shape):
    """Whether ``shape`` is fully known: not None, not () and without 0 (unknown) dims."""
    if shape is None or len(shape) == 0:
        return False
    for d in shape:
        if d < 0:
            raise MXNetAssertionError('shape dimension size cannot be less than 0, while '
                                      f'received {d}')
    return all(d > 0 for d in shape)


def _as_shape(shape):
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _ctx_list(ctx):
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    return list(ctx)


# Bumped whenever any Parameter's arrays are replaced (not when written in place): a
# hybridized block keeps its parameters' arrays between calls while this is unchanged.
_generation = 0


def _ctx_key(ctx):
    # cpu, cpu_pinned and cpu_shared (odd type ids) find the same copy, as in MXNet
    return (ctx.device_typeid & 1, ctx.device_id)


class Parameter:
    """A weight of a Block: per-context data and gradient arrays and its graph attributes.

    Parameters
    ----------
    name : str
        Full name (with the block's prefix).
    grad_req : {'write', 'add', 'null'}
        How backward updates the gradient: overwrite it, add to it (call ``zero_grad`` between
        iterations), or no gradient at all. Can be changed after initialization.
    shape : int or tuple of int, optional
        0 marks a dimension that is inferred on the first forward pass.
    dtype : numpy dtype or str, default numpy.float32
    lr_mult, wd_mult : float
        Multipliers of the optimizer's learning rate and weight decay.
    init : Initializer or str, optional
        This parameter's own initializer, used instead of the one given to ``Block.initialize``.
    allow_deferred_init : bool
        Whether ``initialize`` may wait for the shape to become known.
    differentiable : bool
        False for parameters that are never differentiated (grad_req is then always 'null').
    stype, grad_stype : {'default', 'row_sparse', 'csr'}
        Storage types; only the dense 'default' is supported here.
    """

    def __init__(self, name, grad_req='write', shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype='default', grad_stype='default'):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        self._shape = _as_shape(shape)
        self.name = name
        np_dtype(dtype)                      # an unknown dtype fails here, not at initialize
        self._dtype = dtype                  # kept as given: MXNet shows it so in repr/dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        for kind, value in (('grad_stype', grad_stype), ('stype', stype)):
            if value not in ('default', 'row_sparse', 'csr'):
                raise MXNetAssertionError(f"{kind} for Parameter '{name}' must be one of "
                                          f"'default', 'row_sparse', or 'csr', but got "
                                          f"'{value}'")
            if value != 'default':
                raise NotSupportedError(f"Parameter '{name}': {kind}='{value}' (sparse storage) "
                                        "is not supported; use the default dense storage")
        self._grad_stype = grad_stype
        self._stype = stype

    def __repr__(self):
        return f'Parameter {self.name} (shape={self.shape}, dtype={self.dtype})'

    @property
    def _data(self):
        """The value's NDArray per context (None before initialization)."""
        return self._arrays

    @_data.setter
    def _data(self, arrays):
        global _generation
        self._arrays = arrays
        _generation += 1

    # -- attributes ---------------------------------------------------------------------------
    @property
    def grad_req(self):
        """'write', 'add' or 'null'; setting 'null' drops the gradient buffers."""
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in ('write', 'add', 'null'):
            raise MXNetAssertionError("grad_req must be one of 'write', 'add', or 'null', but "
                                      f"got '{req}'")
        if not self._differentiable:
            req = 'null'
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == 'null' and self._grad is not None:
            self._grad = None
            self._data = [d.detach() for d in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        """The dtype as it was given (``numpy.float32`` by default); setting it casts."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        """The shape; 0 marks a dimension not known yet. Setting it fills unknown dimensions."""
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        new_shape = _as_shape(new_shape)
        old = self._shape
        if not old or new_shape is None:
            # None and () (legacy MXNet's "unknown number of dims") take any shape
            self._shape = new_shape if new_shape is not None else old
            return
        # MXNet only lets the new shape fill the old one's unknowns; knowledge from either side
        # is merged here, so (0, 3) then (4, 0) gives (4, 3) instead of an error
        if len(old) != len(new_shape) or any(a and b and a != b
                                             for a, b in zip(old, new_shape)):
            raise MXNetAssertionError(f'Expected shape {new_shape} is incompatible with given '
                                      f'shape {old}.')
        self._shape = tuple(a or b for a, b in zip(old, new_shape))

    def _set_trainer(self, trainer):
        """Remember the Trainer that updates this parameter (``set_data`` tells it)."""
        self._trainer = trainer

    # -- initialisation -----------------------------------------------------------------------
    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(),
                   force_reinit=False):
        """Create the arrays on ``ctx`` (one context or a list; the current one by default).

        ``init`` wins over the parameter's own ``init``, which wins over ``default_init``
        (``Block.initialize(init)`` passes its ``init`` as ``default_init``). With unknown
        dimensions and ``allow_deferred_init``, the arrays are made on the first forward.
        Copies on several contexts are independent arrays (a Trainer keeps them in step).
        """
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          'force_reinit=True to re-initialize.', stacklevel=2)
            return
        self._data = self._grad = None
        ctx = _ctx_list(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError(f"Cannot initialize Parameter '{self.name}' because it has "
                             f'invalid shape: {self.shape}.')
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        """Create the arrays of a deferred initialisation, now that the shape is known."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not shape_is_known(self.shape):
            raise MXNetAssertionError(f"Cannot initialize Parameter '{self.name}' because it "
                                      f'has invalid shape: {self.shape}. Please specify '
                                      'in_units, in_channels, etc for `Block`s.')
        with autograd.pause():
            if data is None:
                data = nd.zeros(self.shape, dtype=self.dtype, ctx=cpu())
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {'__init__': init}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        """Copy ``data`` to every context and make the gradient buffers."""
        self._ctx_list = list(ctx_list)
        self._ctx_map = {_ctx_key(c): i for i, c in enumerate(self._ctx_list)}
        self._data = [data.copyto(c) for c in self._ctx_list]
        self._init_grad()

    def _init_grad(self):
        if self.grad_req == 'null':
            self._grad = None
            return
        self._grad = [nd.zeros(d.shape, ctx=d.context, dtype=d.dtype) for d in self._data]
        autograd.mark_variables(self._data, self._grad, self.grad_req)

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source='current'):
        """Take ``data`` (an NDArray from a file) as this parameter's value.

        The shape must agree with the known dimensions; a different dtype needs
        ``cast_dtype=True``, then the value becomes the parameter's dtype
        (``dtype_source='current'``) or the parameter takes the file's (``'saved'``).
        """
        if cast_dtype and dtype_source not in ('current', 'saved'):
            raise MXNetAssertionError("dtype_source must be either 'current' or 'saved', but "
                                      f"got '{dtype_source}'")
        if self.shape:
            # MXNet zips the shapes, so a different number of dims slips through there
            if len(self.shape) != len(data.shape) or not all(
                    a in (0, b) for a, b in zip(self.shape, data.shape)):
                raise MXNetAssertionError(f"Failed loading Parameter '{self.name}' from saved "
                                          f'params: shape incompatible expected {self.shape} '
                                          f'vs saved {data.shape}')
            self.shape = data.shape
        else:
            # MXNet leaves the shape None (or ()) although the value has one
            self._shape = tuple(data.shape)
        if np_dtype(self.dtype) != np_dtype(data.dtype):
            if not cast_dtype:
                raise MXNetAssertionError(f"Failed loading Parameter '{self.name}' from saved "
                                          f'params: dtype incompatible expected {self.dtype} vs '
                                          f'saved {data.dtype}. Set cast_dtype=True to cast the '
                                          'dtype of saved params.')
            if dtype_source == 'current':
                data = data.astype(self.dtype, copy=False)
            else:
                self.dtype = data.dtype
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                if ctx is not None and set(ctx) != set(self._deferred_init[1]):
                    raise MXNetAssertionError(self._ctx_mismatch(ctx))
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            if ctx is not None and set(ctx) != set(self.list_ctx()):
                raise MXNetAssertionError(self._ctx_mismatch(ctx))
            self.set_data(data)
        self._deferred_init = ()

    def _ctx_mismatch(self, ctx):
        return (f"Failed to load Parameter '{self.name}' on {ctx} because it was previous "
                f'initialized on {self.list_ctx()}.')

    # -- data ---------------------------------------------------------------------------------
    def _check_and_get(self, arrays, ctx):
        if arrays is not None:
            if ctx is list:
                return arrays
            if ctx is None:
                if len(arrays) == 1:
                    return arrays[0]
                ctx = current_context()
            index = self._ctx_map.get(_ctx_key(ctx))
            if index is not None:
                return arrays[index]
            raise RuntimeError(f"Parameter '{self.name}' was not initialized on context {ctx}. "
                               f'It was only initialized on {self._ctx_list}.')
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization "
                'was deferred. Actual initialization happens during the first forward pass. '
                'Please pass one batch of data through the network before accessing Parameters. '
                'You can also avoid deferred initialization by specifying in_units, '
                'num_features, etc., for network layers.')
        raise RuntimeError(f"Parameter '{self.name}' has not been initialized. Note that you "
                           'should initialize parameters and create Trainer with '
                           'Block.collect_params() instead of Block.params because the later '
                           'does not include Parameters of nested child Blocks')

    def data(self, ctx=None):
        """The array on ``ctx`` (by default the only one, or the current context's)."""
        return self._check_and_get(self._data, ctx)

    def list_data(self):
        """The arrays on every context, in ``list_ctx()`` order."""
        return self._check_and_get(self._data, list)

    def _check_grad(self):
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because "
                               "grad_req='null'")

    def grad(self, ctx=None):
        """The gradient buffer on ``ctx``."""
        self._check_grad()
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        """The gradient buffers on every context, in ``list_ctx()`` order."""
        self._check_grad()
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        """The contexts this parameter lives on (or will, after a deferred initialization)."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
        return self._ctx_list

    def row_sparse_data(self, row_id):
        """Only for row_sparse parameters, which hybridlib does not have: use ``data()``."""
        raise RuntimeError(f'Cannot return a copy of Parameter {self.name} via '
                           f'row_sparse_data() because its storage type is {self._stype}. '
                           'Please use data() instead.')

    def list_row_sparse_data(self, row_id):
        """Only for row_sparse parameters, which hybridlib does not have: use ``list_data()``."""
        raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' on all contexts "
                           'via list_row_sparse_data() because its storage type is '
                           f'{self._stype}. Please use data() instead.')

    def set_data(self, data):
        """Overwrite the value on every context (or the pending value of a deferred init)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise MXNetAssertionError(f"Parameter '{self.name}' has not been initialized")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        # a Trainer that keeps its own copy (update_on_kvstore) must take the new value
        if (trainer is not None and getattr(trainer, '_kv_initialized', False)
                and getattr(trainer, '_update_on_kvstore', False)
                and self not in getattr(trainer, '_params_to_init', ())):
            trainer._reset_kvstore()
        for arr in self._data:
            arr[:] = data

    def zero_grad(self):
        """Set the gradient buffers to 0 (nothing to do without them)."""
        if self._grad is None:
            return
        for g in self._grad:
            g[:] = 0

    def reset_ctx(self, ctx):
        """Move the arrays to ``ctx`` (one context or a list; the current one by default)."""
        ctx = _ctx_list(ctx)
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError(f"Cannot reset context for Parameter '{self.name}' because it has "
                             'not been initialized.')

    def _reduce(self):
        """The value as one array on cpu(0): the mean of the copies on every context."""
        block = self.list_data()
        if len(block) == 1:
            return block[0].copyto(cpu())
        return nd.add_n(*(w.copyto(cpu()) for w in block)) / len(block)

    def cast(self, dtype):
        """Convert the value and gradient to ``dtype``."""
        np_dtype(dtype)
        self._dtype = dtype
        # MXNet keeps the graph variable made before, with its old __dtype__
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [d.astype(dtype) for d in self._data]
            if self._grad is None:
                return
            self._grad = [g.astype(dtype) for g in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)

    def var(self):
        """The graph variable of this parameter, with its shape, dtype, multipliers and init as
        attributes (made once, then reused)."""
        if self._var is None:
            self._var = symbol.var(self.name, shape=self.shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult, init=self.init,
                                   stype=self._stype)
        return self._var


class Constant(Parameter):
    """A parameter that autograd and Trainer leave alone (``set_data`` can still change it).

    ``Constant('const', [[1, 2], [3, 4]])`` or, in a Block,
    ``self.const = self.params.get_constant('const', [[1, 2], [3, 4]])``. It reaches
    ``hybrid_forward`` like any other parameter and is saved in parameter files and exports.

    Parameters
    ----------
    name : str
    value : array-like
        The value (an NDArray, or anything ``nd.array`` takes: float32 then).
    """

    def __init__(self, name, value):
        if not isinstance(value, nd.NDArray):
            value = nd.array(value)
        self.value = value

        class Init(initializer.Initializer):
            def _init_weight(self, _, arr):
                value.copyto(arr)
        # the graph variable's __init__ names this initializer, as in MXNet; registered
        # directly so that a reused id() does not warn about overriding
        init_name = f'Constant_{name}_{id(self)}'
        initializer._REGISTRY[init_name.lower()] = Init
        super().__init__(name, grad_req='null', shape=value.shape, dtype=value.dtype,
                         init=init_name)

    def __repr__(self):
        return f'Constant {self.name} (shape={self.shape}, dtype={self.dtype})'

    @property
    def grad_req(self):
        return 'null'

    @grad_req.setter
    def grad_req(self, req):
        if req != 'null':
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other '
                          f'than "null", and new value "{req}" is ignored.', stacklevel=2)


def _indent(text, spaces):
    lines = text.split('\n')
    return '\n'.join(lines[:1] + [' ' * spaces + line for line in lines[1:]])


def _brief_print_list(names, limit=7):
    """``'a', 'b', 'c', ..., 'x', 'y'``: at most ``limit`` names, quoted, as MXNet prints."""
    names = list(names)
    if len(names) > limit:
        return (_brief_print_list(names[:limit // 2], limit) + ', ..., '
                + _brief_print_list(names[-limit // 2:], limit))
    return ', '.join(f"'{n}'" for n in names)


def load_named(filename):
    """``nd.load`` of a parameter file: {name: NDArray}; an error naming the file when it
    holds unnamed arrays (TypeError, as in MXNet) or MXNet's empty (ndim 0) records."""
    loaded = nd.load(filename)
    if not isinstance(loaded, dict):
        if loaded:
            raise TypeError(f"'{filename}' holds a list of unnamed arrays ({len(loaded)}); "
                            'parameters load from named arrays (save_parameters, export or '
                            'nd.save of a dict)')
        return {}
    empty = [name for name, value in loaded.items() if value is None]
    if empty:
        raise MXNetError(f"{filename}: {_brief_print_list(empty)} are empty records (MXNet's "
                         'arrays of ndim 0), not parameter values')
    return loaded


class ParameterDict:
    """An ordered ``name -> Parameter`` dict with a name prefix, as Gluon's.

    ``get('weight')`` returns (creating it if needed) the parameter ``<prefix>weight``;
    parameters of ``shared`` are found by name too, which is how blocks share weights.

    Parameters
    ----------
    prefix : str
        Prepended to the names of the parameters that ``get`` creates.
    shared : ParameterDict, optional
        Searched by ``get`` before a new parameter is created.
    """

    def __init__(self, prefix='', shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        name = self._prefix + ' ' if self._prefix else ''
        content = '\n'.join(_indent(f'  {v}', 2) for v in self.values())
        return f'{name}(\n{content}\n)'

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    # not in MXNet (which has no len() and finds `in` by iterating); the same answers
    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        """The prefix of the names of the parameters ``get`` creates."""
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name, **kwargs):
        """The parameter ``prefix + name`` (from here or ``shared``), created with ``kwargs``
        if it does not exist.

        For an existing parameter each of ``kwargs`` must agree with it: unknown (0) shape
        dimensions are filled in from either side, dtypes compare as numpy dtypes, and an
        attribute the parameter does not have yet (or has as None) is set.
        """
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for key, value in kwargs.items():
            if key == 'allow_deferred_init':
                # MXNet sets an unused public attribute; the request is honoured here
                param._allow_deferred_init = param._allow_deferred_init or bool(value)
                continue
            existing = getattr(param, key, None)
            if existing is None:
                setattr(param, key, value)
                continue
            if key == 'shape' and value is not None:
                value = _as_shape(value)
                if len(value) == len(existing) and all(a == b or not a or not b
                                                       for a, b in zip(value, existing)):
                    param._shape = tuple(a or b for a, b in zip(value, existing))
                    continue
            elif key == 'dtype' and value is not None and np_dtype(value) == np_dtype(existing):
                continue
            if value is not None and value != existing:
                raise MXNetAssertionError(
                    f"Cannot retrieve Parameter '{name}' because desired attribute does not "
                    f"match with stored for attribute '{key}': desired '{value}' vs stored "
                    f"'{getattr(param, key)}'.")
        return param

    def get_constant(self, name, value=None):
        """The Constant ``prefix + name`` (from here or ``shared``), created with ``value`` if
        it does not exist; a given ``value`` must equal an existing constant's."""
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{name}'. Please specify value if you want "
                               'to create a new constant.')
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise MXNetAssertionError(f"Parameter '{name}' already exists but it is not a "
                                          'constant.')
            # MXNet needs an NDArray or numpy value here (a list fails)
            value = value.asnumpy() if isinstance(value, nd.NDArray) else np.asarray(value)
            if param.shape != value.shape or not (param.value.asnumpy() == value).all():
                raise MXNetAssertionError(f"Constant '{name}' already exists but it's value "
                                          "doesn't match new value")
        return param

    def update(self, other):
        """Add the parameters of ``other`` (a dict or ParameterDict); a name may not refer to
        two different parameters."""
        for key, value in other.items():
            if key in self._params and self._params[key] is not value:
                raise MXNetAssertionError('Cannot update self with other because they have '
                                          f"different Parameters with the same name '{key}'")
        for key, value in other.items():
            self._params[key] = value

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize every parameter on ``ctx``; ``init`` is for those without their own.

        ``verbose`` logs a statistic of each initialized array (``logging.info``).
        """
        if verbose:
            # a verbose copy: MXNet switches the (shared default) initializer itself to verbose
            init = copy.copy(initializer.create(init)).set_verbosity(verbose=verbose)
        for param in self.values():
            param.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Set every gradient buffer to 0."""
        for param in self.values():
            param.zero_grad()

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx`` (one context or a list)."""
        for param in self.values():
            param.reset_ctx(ctx)

    def list_ctx(self):
        """Every context any parameter lives on (in first-seen order; MXNet's is a set's)."""
        out = []
        for param in self.values():
            out.extend(c for c in param.list_ctx() if c not in out)
        return out

    def setattr(self, name, value):
        """Set an attribute on every parameter: ``setattr('grad_req', 'null')``,
        ``setattr('lr_mult', 0.5)``."""
        for param in self.values():
            setattr(param, name, value)

    def save(self, filename, strip_prefix=''):
        """Save every parameter (its mean over contexts) by name less ``strip_prefix``, in
        MXNet's ``.params`` format."""
        arg_dict = {}
        for param in self.values():
            weight = param._reduce()
            if not param.name.startswith(strip_prefix):
                raise ValueError(f"Prefix '{strip_prefix}' is to be striped before saving, but "
                                 f"Parameter's name '{param.name}' does not start with "
                                 f"'{strip_prefix}'. this may be due to your Block shares "
                                 'parameters from other Blocks or you forgot to use '
                                 "'with name_scope()' when creating child blocks. "
                                 + _NAMING_HELP)
            arg_dict[param.name[len(strip_prefix):]] = weight
        nd.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix='', cast_dtype=False, dtype_source='current'):
        """Load a file written by ``save``, ``export`` or MXNet (``arg:``/``aux:`` dropped).

        Parameters
        ----------
        filename : str
        ctx : Context or list of Context, optional
            Where uninitialized parameters are created (cpu by default).
        allow_missing : bool
            Leave parameters that the file lacks alone instead of failing.
        ignore_extra : bool
            Skip names in the file that this dict lacks instead of failing.
        restore_prefix : str
            Prepended to the file's names (every parameter's name must start with it).
        cast_dtype : bool
            Accept a dtype different from the parameter's ...
        dtype_source : {'current', 'saved'}
            ... and cast the value to the parameter's, or take the file's.
        """
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise MXNetAssertionError(
                        f"restore_prefix is '{restore_prefix}' but Parameters name '{name}' "
                        f"does not start with '{restore_prefix}'. " + _NAMING_HELP)
        self.load_dict(load_named(filename), ctx, allow_missing, ignore_extra, restore_prefix,
                       filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix='', filename=None, cast_dtype=False, dtype_source='current'):
        """Load from a dict ``name -> NDArray`` (or a list of such pairs); see ``load``.

        ``filename`` only names the source in error messages.
        """
        if isinstance(param_dict, dict):
            loaded = [(k[4:] if k.startswith(('arg:', 'aux:')) else k, v)
                      for k, v in param_dict.items()]
        else:
            loaded = list(param_dict)
            if not all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str)
                       for p in loaded):
                source = f"'{filename}'" if filename else 'param_dict'
                raise TypeError(f'{source} holds a list of unnamed arrays; parameters load '
                                'from named arrays (a file saved from a dict)')
        arg_dict = {restore_prefix + k: v for k, v in loaded}
        source = f'file: {filename}' if filename else 'param_dict'
        lprefix = len(restore_prefix)
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise MXNetAssertionError(
                        f"Parameter '{name[lprefix:]}' is missing in {source}, which contains "
                        f'parameters: {_brief_print_list(arg_dict.keys())}. Please make sure '
                        'source and target networks have the same prefix.' + _NAMING_HELP)
        for name, value in arg_dict.items():
            if name not in self._params:
                if ignore_extra:
                    continue
                raise MXNetAssertionError(
                    f"Parameter '{name[lprefix:]}' loaded from {source} is not present in "
                    f'ParameterDict, choices are: {_brief_print_list(self._params.keys())}. '
                    'Set ignore_extra to True to ignore. Please make sure source and target '
                    'networks have the same prefix.' + _NAMING_HELP)
            self._params[name]._load_init(value, ctx, cast_dtype=cast_dtype,
                                          dtype_source=dtype_source)
