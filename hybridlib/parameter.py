"""Parameter, Constant and ParameterDict, as in Gluon 1.x.

A Parameter holds one array per context (``data(ctx)``), a gradient buffer per context
(``grad(ctx)``) marked for autograd with its ``grad_req``, and everything a graph needs to know
about it (``var()``: name, shape, dtype, lr_mult, wd_mult, init). A shape may have unknown (0)
dimensions: with ``allow_deferred_init`` the arrays are created on the first forward pass, once
shape inference has filled them in.

Names follow Gluon's prefix scheme (``hybridsequential0_dense0_weight``), so parameter files and
exports written by MXNet load by name.
"""
import re
import warnings
from collections import OrderedDict

import numpy as np

from . import autograd, initializer
from . import ndarray as nd
from . import symbol
from .base import MXNetError, np_dtype
from .context import Context, cpu, current_context

__all__ = ['DeferredInitializationError', 'Parameter', 'Constant', 'ParameterDict',
           'tensor_types']

tensor_types = (symbol.Symbol, nd.NDArray)


class DeferredInitializationError(MXNetError):
    """A parameter's arrays are not created yet: its shape becomes known on the first forward."""


def _shape_is_known(shape):
    return shape is not None and all(d > 0 for d in shape)


def _merge_shapes(name, old, new):
    """``old`` with its unknown (0) dimensions filled from ``new``; an error on a conflict."""
    if old is None or len(old) == 0:
        return tuple(new)
    if new is None:
        return tuple(old)
    if len(old) != len(new) or any(a and b and a != b for a, b in zip(old, new)):
        raise MXNetError(f"Parameter '{name}': expected shape {tuple(old)} is incompatible with "
                         f'given shape {tuple(new)}')
    return tuple(a or b for a, b in zip(old, new))


class Parameter:
    """A weight of a Block: per-context data and gradient arrays and its graph attributes.

    Parameters
    ----------
    name : str
        Full name (with the block's prefix).
    grad_req : {'write', 'add', 'null'}
    shape : tuple of int, optional
        0 marks a dimension that is inferred on the first forward pass.
    dtype : numpy dtype or str, default float32
    lr_mult, wd_mult : float
        Multipliers of the optimizer's learning rate and weight decay.
    init : Initializer or str, optional
        This parameter's own initializer; the one given to ``initialize`` otherwise.
    allow_deferred_init : bool
        Whether ``initialize`` may wait for the shape to become known.
    differentiable : bool
        False for parameters that are never differentiated (grad_req is then 'null').
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
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape) if shape is not None else None
        self.name = name
        self._dtype = np_dtype(dtype)
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        if stype != 'default' or grad_stype != 'default':
            raise MXNetError(f"Parameter '{name}': sparse storage ({stype}, {grad_stype}) is "
                             'not supported; use the default dense storage')
        self._stype = stype
        self._grad_stype = grad_stype

    def __repr__(self):
        return f'Parameter {self.name} (shape={self.shape}, dtype={self.dtype.__name__})'

    # -- attributes ---------------------------------------------------------------------------
    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in ('write', 'add', 'null'):
            raise ValueError(f"grad_req must be one of 'write', 'add', or 'null', but got '{req}'")
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
        """The numpy scalar type, as MXNet returns it."""
        return self._dtype.type

    @dtype.setter
    def dtype(self, dtype):
        self._dtype = np_dtype(dtype)

    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        self._shape = _merge_shapes(self.name, self._shape, new_shape)

    @property
    def stype(self):
        return self._stype

    # -- initialisation -----------------------------------------------------------------------
    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(),
                   force_reinit=False):
        """Create the arrays on ``ctx`` (one context or a list) and fill them.

        The parameter's own ``init`` wins over ``init``, which wins over ``default_init``.
        With unknown dimensions and ``allow_deferred_init``, this happens on the first forward.
        """
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          'force_reinit=True to re-initialize.', stacklevel=2)
            return
        self._data = self._grad = None
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if init is None:
            init = default_init if self.init is None else self.init
        if not _shape_is_known(self.shape):
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
        if not _shape_is_known(self.shape):
            raise MXNetError(f"Cannot initialize Parameter '{self.name}' because it has invalid "
                             f'shape: {self.shape}. Please specify in_units, in_channels, etc '
                             'for `Block`s.')
        with autograd.pause():
            if data is None:
                data = nd.zeros(self.shape, dtype=self._dtype, ctx=cpu())
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {'__init__': init}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        self._ctx_list = list(ctx_list)
        self._ctx_map = {c: i for i, c in enumerate(self._ctx_list)}
        self._data = [data.copyto(c) for c in self._ctx_list]
        self._init_grad()

    def _init_grad(self):
        if self.grad_req == 'null':
            self._grad = None
            return
        self._grad = [nd.zeros(d.shape, ctx=d.context, dtype=d.dtype) for d in self._data]
        autograd.mark_variables(self._data, self._grad, self.grad_req)

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source='current'):
        """Take ``data`` as this parameter's value (from a file)."""
        if cast_dtype and dtype_source not in ('current', 'saved'):
            raise ValueError("dtype_source must be either 'current' or 'saved'")
        if self.shape:
            unknown_ok = all(a in (0, b) for a, b in zip(self.shape, data.shape))
            if len(self.shape) != len(data.shape) or not unknown_ok:
                raise MXNetError(f"Failed loading Parameter '{self.name}' from saved params: "
                                 f'shape incompatible expected {self.shape} vs saved '
                                 f'{data.shape}')
            self.shape = data.shape
        else:
            self._shape = tuple(data.shape)
        if self.dtype != data.dtype:
            if not cast_dtype:
                raise MXNetError(f"Failed loading Parameter '{self.name}' from saved params: "
                                 f'dtype incompatible expected {self.dtype} vs saved '
                                 f'{data.dtype}. Set cast_dtype=True to cast the dtype of '
                                 'saved params.')
            if dtype_source == 'current':
                data = data.astype(self.dtype, copy=False)
            else:
                self.dtype = data.dtype
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                ctx = ctx or self._deferred_init[1]
            self._deferred_init = ()
            self._init_impl(data, ctx or [cpu()])
        else:
            if ctx is not None and set(ctx) != set(self._ctx_list):
                raise MXNetError(f"Failed to load Parameter '{self.name}' on {ctx} because it "
                                 f'was previously initialized on {self.list_ctx()}.')
            self.set_data(data)
        self._deferred_init = ()

    # -- data ---------------------------------------------------------------------------------
    def _check_and_get(self, arrays, ctx):
        if arrays is not None:
            if ctx is list:
                return arrays
            if ctx is None:
                if len(self._ctx_list) == 1:
                    ctx = self._ctx_list[0]
                else:
                    ctx = current_context()
            index = self._ctx_map.get(ctx)
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
        """The array on ``ctx`` (the only context, or the current one, by default)."""
        return self._check_and_get(self._data, ctx)

    def list_data(self):
        """The arrays on every context, in ``list_ctx()`` order."""
        return self._check_and_get(self._data, list)

    def grad(self, ctx=None):
        """The gradient buffer on ``ctx``."""
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because "
                               "grad_req='null'")
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        """The gradient buffers on every context."""
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' because "
                               "grad_req='null'")
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        """The contexts this parameter lives on."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
        return self._ctx_list

    def set_data(self, data):
        """Overwrite the value on every context (or the pending value of a deferred init)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise MXNetError(f"Parameter '{self.name}' has not been initialized")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        for arr in self._check_and_get(self._data, list):
            arr[:] = data

    def zero_grad(self):
        """Set the gradient buffers to 0."""
        if self._grad is None:
            return
        for g in self._grad:
            g[:] = 0

    def reset_ctx(self, ctx):
        """Move the arrays to ``ctx`` (one context or a list)."""
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data:
            with autograd.pause():
                self._init_impl(self._reduce(), ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError(f"Cannot reset context for Parameter '{self.name}' because it has "
                             'not been initialized.')

    def _reduce(self):
        """The value as one cpu array (the mean over contexts)."""
        block = self.list_data()
        if len(block) == 1:
            return block[0].copyto(cpu())
        total = block[0].copyto(cpu())
        for arr in block[1:]:
            total += arr.copyto(cpu())
        return total / len(block)

    def cast(self, dtype):
        """Convert the value and gradient to ``dtype``."""
        self.dtype = dtype
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [d.astype(dtype) for d in self._data]
            if self._grad is not None:
                self._grad = [g.astype(dtype) for g in self._grad]
                autograd.mark_variables(self._data, self._grad, self.grad_req)

    def var(self):
        """The graph variable of this parameter (made once, as MXNet does)."""
        if self._var is None:
            self._var = symbol.var(self.name, shape=self.shape, dtype=self._dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult, init=self.init,
                                   stype=self._stype)
        return self._var

    def row_sparse_data(self, row_id):
        raise MXNetError(f"Parameter '{self.name}': row_sparse storage is not supported")


class Constant(Parameter):
    """A parameter that is never updated: its value is fixed at construction.

    ``self.params.get_constant('anchors', value)`` creates one; it reaches ``hybrid_forward``
    like any other parameter and is saved in parameter files and exports.
    """

    def __init__(self, name, value):
        if not isinstance(value, nd.NDArray):
            value = nd.array(value)
        self.value = value
        init_name = f'Constant_{name}_{id(self)}'

        class _Init(initializer.Initializer):
            def _init_weight(self, _, arr):
                value.copyto(arr)

            def dumps(self):
                return init_name
        initializer.alias(init_name)(_Init)
        super().__init__(name, grad_req='null', shape=value.shape, dtype=value.dtype,
                         init=init_name, differentiable=False)

    def __repr__(self):
        return f'Constant {self.name} (shape={self.shape}, dtype={self.dtype.__name__})'

    @property
    def grad_req(self):
        return 'null'

    @grad_req.setter
    def grad_req(self, req):
        if req != 'null':
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other '
                          f'than "null", and new value "{req}" is ignored.', stacklevel=2)


class ParameterDict:
    """An ordered ``name -> Parameter`` dict with a name prefix, as Gluon's.

    ``get('weight')`` returns (creating it if needed) the parameter ``<prefix>weight``;
    parameters of ``shared`` are found by name too, which is how blocks share weights.
    """

    def __init__(self, prefix='', shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        body = '\n'.join(f'  {v!r}' for v in self._params.values())
        return f'{self._prefix} (\n{body}\n)'

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

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
        """The prefix of the names of this dict's parameters."""
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name, **kwargs):
        """The parameter ``prefix + name``, created with ``kwargs`` if it does not exist.

        For an existing parameter, ``kwargs`` must agree with it (an unknown shape dimension is
        filled in).
        """
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for key, value in kwargs.items():
            if key == 'shape' and value is not None:
                param.shape = value
                continue
            existing = getattr(param, key, None)
            if key == 'dtype' and value is not None:
                same = np_dtype(existing) == np_dtype(value)
            elif key == 'init':
                same = True
            else:
                same = value is None or existing == value
            if not same:
                raise MXNetError(f"Cannot retrieve Parameter '{name}' because desired attribute "
                                 f"does not match with stored for attribute '{key}': desired "
                                 f"'{value}' vs stored '{existing}'.")
        return param

    def get_constant(self, name, value=None):
        """The constant ``prefix + name`` (created with ``value`` if it does not exist)."""
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
                raise MXNetError(f"Parameter '{name}' already exists but it is not a constant.")
            if isinstance(value, nd.NDArray):
                value = value.asnumpy()
            if not (np.asarray(value) == param.value.asnumpy()).all():
                raise MXNetError(f"Constant '{name}' already exists but its value does not "
                                 'match new value')
        return param

    def update(self, other):
        """Add the parameters of ``other`` (a name may not refer to two parameters)."""
        for name, value in other.items():
            if name in self._params and self._params[name] is not value:
                raise MXNetError(f"Cannot update self with other because they have different "
                                 f"Parameters with the same name '{name}'")
        for name, value in other.items():
            self._params[name] = value

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize every parameter (``init`` is the default of those without their own)."""
        if verbose:
            init.set_verbosity(verbose=verbose)
        for param in self.values():
            param.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Set every gradient buffer to 0."""
        for param in self.values():
            param.zero_grad()

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx``."""
        for param in self.values():
            param.reset_ctx(ctx)

    def list_ctx(self):
        """Every context any parameter lives on."""
        out = []
        for param in self.values():
            out.extend(c for c in param.list_ctx() if c not in out)
        return out

    def setattr(self, name, value):
        """Set an attribute (``grad_req``, ``lr_mult``...) on every parameter."""
        for param in self.values():
            setattr(param, name, value)

    def save(self, filename, strip_prefix=''):
        """Save every parameter by name (less ``strip_prefix``) in MXNet's format."""
        arg_dict = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise ValueError(f"Prefix '{strip_prefix}' is to be striped before saving, but "
                                 f"Parameter's name '{param.name}' does not start with "
                                 f"'{strip_prefix}'. this may be due to your Block shares "
                                 'parameters from other Blocks or you forgot to use ``with '
                                 'name_scope()`` when creating child blocks.')
            arg_dict[param.name[len(strip_prefix):]] = param._reduce()
        nd.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix='', cast_dtype=False, dtype_source='current'):
        """Load values saved by ``save``, ``export`` or MXNet (``arg:``/``aux:`` are stripped)."""
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise ValueError(f"restore_prefix is '{restore_prefix}' but Parameters name "
                                     f"'{name}' does not start with '{restore_prefix}'")
        loaded = nd.load(filename)
        if not isinstance(loaded, dict):
            raise MXNetError(f"'{filename}' holds a list of arrays, not named parameters")
        arg_dict = {restore_prefix + _strip_arg_aux(k): v for k, v in loaded.items()}
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise MXNetError(f"Parameter '{name[len(restore_prefix):]}' is missing in "
                                     f"file '{filename}', which contains parameters: "
                                     f'{_brief_list(arg_dict)}. Please make sure source and '
                                     'target networks have the same prefix.For more info on '
                                     'naming, please see https://mxnet.io/api/python/docs/'
                                     'tutorials/packages/gluon/blocks/naming.html')
        for name, value in arg_dict.items():
            if name not in self._params:
                if ignore_extra:
                    continue
                raise MXNetError(f"Parameter '{name[len(restore_prefix):]}' loaded from file "
                                 f"'{filename}' is not present in ParameterDict, choices are: "
                                 f'{_brief_list(self._params)}. Set ignore_extra to True to '
                                 'ignore. Please make sure source and target networks have the '
                                 'same prefix.')
            self._params[name]._load_init(value, ctx, cast_dtype=cast_dtype,
                                          dtype_source=dtype_source)

    def select(self, pattern):
        """A dict of the parameters whose names match the regular expression ``pattern``."""
        out = ParameterDict(self._prefix)
        regex = re.compile(pattern)
        out._params.update((k, v) for k, v in self.items() if regex.match(k))
        return out


def _strip_arg_aux(key):
    return key[4:] if key.startswith(('arg:', 'aux:')) else key


def _brief_list(names):
    names = list(names)
    text = ', '.join(names[:10])
    return text + (f', ... ({len(names)} in all)' if len(names) > 10 else '')
