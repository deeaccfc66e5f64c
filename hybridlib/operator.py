"""``mx.operator``: operators written in Python.

A ``CustomOpProp`` describes an operator: its arguments, outputs and auxiliary states, shape
and dtype inference, and which arrays its backward reads; its ``create_operator`` makes the
``CustomOp`` whose ``forward``/``backward`` compute on NDArrays. ``register(name)`` makes it
the operator ``Custom(..., op_type=name)`` of the registry (``ops/custom.py``), so it runs
imperatively (``nd.Custom``), under autograd, in Symbol executors and in hybridized blocks,
and is exported as MXNet exports it::

    class Scale(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * 2)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0] * 2)

    @mx.operator.register('scale')
    class ScaleProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Scale()

    y = mx.nd.Custom(x, op_type='scale')

The deprecated ``PythonOp``/``NumpyOp``/``NDArrayOp`` are adapters onto the same operator:
their ``get_symbol`` registers the instance under a generated op_type (MXNet's ``_Native`` and
``_NDArray`` nodes point at a process address instead, so neither kind of graph can be loaded
by another process).
"""
import collections
import itertools
import logging
import warnings

import numpy as np

from . import autograd, symbol as _symbol
from .base import MXNetError
from .ndarray import NDArray
from .ops import custom as _custom, registry as _registry

__all__ = ['PythonOp', 'NumpyOp', 'NDArrayOp', 'CustomOp', 'CustomOpProp', 'register',
           'get_all_registered_operators', 'OperatorArguments', 'get_operator_arguments']

_log = logging.getLogger(__name__)
_DEFAULT_STYPE = 'default'


class CustomOp:
    """Base class for operators implemented in Python."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute the outputs. Override to create new operators.

        Parameters
        ----------
        is_train : bool
            Whether this is for training.
        req : list of str
            How to assign to ``out_data``: 'null', 'write', 'inplace' or 'add'; ``assign``
            handles it.
        in_data, out_data, aux : list of NDArray
            Inputs, outputs (written here) and auxiliary states (may be updated in place).
        """

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute the input gradients. Override to create new operators.

        Parameters
        ----------
        req : list of str
            How to assign to ``in_grad``; ``assign`` handles it.
        out_grad, in_data, out_data, in_grad, aux : list of NDArray
            Output gradients, inputs, outputs, input gradients (written here) and auxiliary
            states. An array the prop's ``declare_backward_dependency`` leaves out is None.
        """

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` as ``req`` says ('null' does nothing, 'add' adds)."""
        if req == 'null':
            return
        if req in ('write', 'inplace'):
            dst[:] = src
        elif req == 'add':
            dst[:] += src


class CustomOpProp:
    """Base class for the property (the description) of an operator implemented in Python.

    Parameters
    ----------
    need_top_grad : bool
        Whether the backward reads the output gradients: the default
        ``declare_backward_dependency`` asks for them when True (False for loss layers).
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """(argument shapes, output shapes[, auxiliary state shapes]) from the argument shapes
        (lists, in ``list_arguments`` order; ``[]`` for an unknown one)."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """(argument types, output types[, auxiliary state types]) from the argument types
        (numpy types; None for an unknown one)."""
        return in_type, [in_type[0]] * len(self.list_outputs()), \
            [in_type[0]] * len(self.list_auxiliary_states())

    def infer_storage_type(self, in_stype):
        """Storage types: only dense ('default') arrays exist here."""
        for i, stype in enumerate(in_stype):
            if stype != _DEFAULT_STYPE:
                raise MXNetError(f"Default infer_storage_type implementation doesnt allow non "
                                 f"default stypes: found non default stype '{stype}' for "
                                 f"in_stype[{i}]")
        return in_stype, [_DEFAULT_STYPE] * len(self.list_outputs()), \
            [_DEFAULT_STYPE] * len(self.list_auxiliary_states())

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        """Storage types of the backward: all dense."""
        lists = [ograd_stype, in_stype, out_stype, igrad_stype, aux_stype]
        for name, stypes in (('ograd_stype', ograd_stype), ('igrad_stype', igrad_stype)):
            for i, stype in enumerate(stypes):
                if stype not in (_DEFAULT_STYPE, 'undefined'):
                    raise MXNetError(f"Default infer_storage_type_backward implementation "
                                     f"doesnt allow non default stypes: found non default "
                                     f"stype '{stype}' for {name}[{i}]")
        return tuple([_DEFAULT_STYPE] * len(s) for s in lists)

    def list_outputs(self):
        """Output names (``['output']``)."""
        return ['output']

    def list_arguments(self):
        """Argument names (``['data']``)."""
        return ['data']

    def list_auxiliary_states(self):
        """Auxiliary state names (none)."""
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The ids (among ``out_grad``, ``in_data``, ``out_data``) of the arrays the backward
        reads: by default all of them, the output gradients only if ``need_top_grad``."""
        return _all_dependencies(self.need_top_grad_, out_grad, in_data, out_data)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The CustomOp that computes this operator on ``ctx`` for inputs of these shapes
        (lists) and dtypes (MXNet's type flags)."""
        return CustomOp()


def _all_dependencies(need_top_grad, out_grad, in_data, out_data):
    """The default backward dependencies: every input and output, and the output gradients
    when the backward reads them."""
    return (list(out_grad) if need_top_grad else []) + list(in_data) + list(out_data)


def register(reg_name):
    """Register a subclass of CustomOpProp under ``reg_name`` (the ``op_type`` of Custom).

    A later registration under the same name replaces the earlier one (with a warning).
    """
    def do_register(prop_cls):
        if _custom.register_prop(reg_name, prop_cls) is not None:
            _log.warning('New registration is overriding existing custom operator %s',
                         reg_name)
        return prop_cls
    return do_register


register('custom_op')(CustomOpProp)


def get_all_registered_operators():
    """Names of all registered operators (aliases included), as a list of strings."""
    return list(_registry.all_names())


OperatorArguments = collections.namedtuple('OperatorArguments', ['narg', 'names', 'types'])


def get_operator_arguments(op_name):
    """The arguments of operator ``op_name``: their number, names and types (as MXNet
    describes them, e.g. ``'NDArray-or-Symbol'``, ``'int, required'``)."""
    op = _registry.get(op_name)
    if op.variadic is not None:
        names, types = ['data'], ['NDArray-or-Symbol[]']
    else:
        names = list(op.inputs)
        types = ['NDArray-or-Symbol'] * len(names)
    for key, attr in op.attrs.items():
        names.append(key)
        if attr.default is _registry.REQUIRED:
            types.append(f'{attr.type_name}, required')
        else:
            types.append(f'{attr.type_name}, optional, default={attr.format(attr.default)}')
    return OperatorArguments(len(names), names, types)


# -------------------------------------------------------------------------------------------------
# Running a CustomOp on the buffers of the Custom operator
# -------------------------------------------------------------------------------------------------

def _wrap(arrays, ctx):
    return [None if a is None else NDArray(a, ctx) for a in arrays]


class _Runner:
    """Calls a CustomOp as MXNet's worker thread does: NDArrays over the buffers, recording
    off, the graph's training mode, the operator's context current."""

    @staticmethod
    def forward(op, is_train, ctx, req, in_data, out_data, aux):
        with autograd.pause(train_mode=is_train), ctx:
            op.forward(is_train=is_train, req=req, in_data=_wrap(in_data, ctx),
                       out_data=_wrap(out_data, ctx), aux=_wrap(aux, ctx))

    @staticmethod
    def backward(op, is_train, ctx, req, out_grad, in_data, out_data, in_grad, aux):
        with autograd.pause(train_mode=is_train), ctx:
            op.backward(req=req, out_grad=_wrap(out_grad, ctx), in_data=_wrap(in_data, ctx),
                        out_data=_wrap(out_data, ctx), in_grad=_wrap(in_grad, ctx),
                        aux=_wrap(aux, ctx))


_custom.set_runner(_Runner())


# -------------------------------------------------------------------------------------------------
# The deprecated PythonOp family, as adapters onto CustomOp
# -------------------------------------------------------------------------------------------------

class PythonOp:
    """Base class for operators implemented in Python (deprecated: use CustomOp).

    Parameters
    ----------
    need_top_grad : bool
        The default ``need_top_grad()`` returns this value.
    """
    _ref_holder = []

    def __init__(self, need_top_grad=True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        warnings.warn('PythonOp has been deprecated. Please use CustomOp')

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """A Symbol applying this operator to ``args`` (Symbols)."""
        raise NotImplementedError('Must override this')

    def forward(self, in_data, out_data):
        """Compute ``out_data`` from ``in_data``; the default copies the first input."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        """Compute ``in_grad``; the default writes ones."""
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        """(argument shapes, output shapes); the default: one output shaped as the input."""
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        """Output names."""
        return ['output']

    def list_arguments(self):
        """Argument names."""
        return ['data']

    def need_top_grad(self):
        """Whether the backward reads the output gradients (False for loss layers)."""
        return self.need_top_grad_


class NumpyOp(PythonOp):
    """An operator whose ``forward``/``backward`` compute on numpy arrays (deprecated: use
    CustomOp). On a GPU the arrays are host copies, written back after the call."""

    def __init__(self, need_top_grad=True):
        super().__init__(need_top_grad)
        warnings.warn('NumpyOp has been deprecated. Please use CustomOp')

    def get_symbol(self, *args, **kwargs):
        return _legacy_symbol(self, True, args, kwargs)


class NDArrayOp(PythonOp):
    """An operator whose ``forward``/``backward`` compute on NDArrays (deprecated: use
    CustomOp)."""

    def __init__(self, need_top_grad=True):
        super().__init__(need_top_grad)
        warnings.warn('NDArrayOp has been deprecated. Please use CustomOp')

    def get_symbol(self, *args, **kwargs):
        return _legacy_symbol(self, False, args, kwargs)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The ids of the arrays the backward reads (as ``CustomOpProp``'s)."""
        return _all_dependencies(self.need_top_grad(), out_grad, in_data, out_data)


_legacy_ids = itertools.count()


def _legacy_symbol(legacy, numpy_arrays, args, kwargs):
    """``sym.Custom`` of a prop made for one PythonOp instance, kept alive as MXNet keeps it."""
    op_type = f'_{type(legacy).__name__}{next(_legacy_ids)}'
    prop_cls = type(f'{type(legacy).__name__}Prop', (_LegacyProp,),
                    {'legacy': legacy, 'numpy_arrays': numpy_arrays})
    register(op_type)(prop_cls)
    PythonOp._ref_holder.append(legacy)
    return _symbol.Custom(*args, op_type=op_type, **kwargs)


class _LegacyProp(CustomOpProp):
    legacy = None
    numpy_arrays = False

    def __init__(self):
        super().__init__(self.legacy.need_top_grad())

    def list_arguments(self):
        return self.legacy.list_arguments()

    def list_outputs(self):
        return self.legacy.list_outputs()

    def infer_shape(self, in_shape):
        ishape, oshape = self.legacy.infer_shape(in_shape)
        return ishape, oshape, []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        if hasattr(self.legacy, 'declare_backward_dependency'):
            return self.legacy.declare_backward_dependency(out_grad, in_data, out_data)
        return super().declare_backward_dependency(out_grad, in_data, out_data)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _LegacyOp(self.legacy, self.numpy_arrays)


class _LegacyOp(CustomOp):
    def __init__(self, legacy, numpy_arrays):
        super().__init__()
        self._legacy = legacy
        self._numpy = numpy_arrays

    def forward(self, is_train, req, in_data, out_data, aux):
        ins, outs = self._arrays(in_data), self._arrays(out_data)
        self._legacy.forward(in_data=ins, out_data=outs)
        self._write_back(out_data, outs)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        grads = self._arrays(in_grad)
        self._legacy.backward(out_grad=self._arrays(out_grad), in_data=self._arrays(in_data),
                              out_data=self._arrays(out_data), in_grad=grads)
        self._write_back(in_grad, grads)

    def _arrays(self, arrays):
        if not self._numpy:
            return arrays
        # numpy arrays sharing the NDArrays' memory on the cpu, host copies on a gpu
        return [None if a is None else a._data if isinstance(a._data, np.ndarray)
                else a.asnumpy() for a in arrays]

    def _write_back(self, targets, values):
        if self._numpy:
            for target, value in zip(targets, values):
                if not isinstance(target._data, np.ndarray):
                    target[:] = value
