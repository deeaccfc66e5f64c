"""Automatic mixed precision (MXNet 1.9.1's ``mxnet.contrib.amp``) with float16.

``init()`` makes every operator call cast its inputs by the lists in ``lists.py``: the inputs of
``FP16_FUNCS`` (Convolution, FullyConnected, ...) to float16, those of ``FP32_FUNCS`` (softmax,
norms, exp, log, sums, ...) to float32, and those of ``WIDEST_TYPE_CASTS`` (elementwise binary
operators, concat, ...) to their widest float type with ``amp_multicast``. MXNet wraps the
generated ``nd.*`` and ``sym.*`` functions one by one; here one rule sits in the single hook
that every generated function and the arithmetic methods consult (``frontend.input_rule``), so
``F.FullyConnected`` in ``hybrid_forward`` and ``x + y`` are covered whether ``F`` is ``nd``
(imperative) or ``sym`` (traced by ``hybridize``), and a network computes the same both ways.
The casts are the registered ``amp_cast``/``amp_multicast`` operators (recorded by autograd,
nodes of a traced graph); one that is known to change nothing (the dtype already right) is
left out, on both paths.

``init_trainer`` and ``scale_loss`` add dynamic loss scaling to a Gluon Trainer;
``convert_symbol``, ``convert_model``, ``convert_hybrid_block`` and
``convert_bucketing_module`` (not exported by ``contrib.amp``, as in MXNet) rewrite a float32
graph for mixed-precision inference, as MXNet's ``ReducePrecision`` pass does.

Differences from MXNet 1.9.1:

* float16 works on the cpu too (MXNet casts cpu arrays only to bfloat16); bfloat16 is not
  supported (numpy has no such type).
* Operators are matched by definition, so an alias (``nd.op._Plus``, ``sym._plus``) casts like
  its listed name; names that hybridlib does not implement are skipped.
* An operator listed in two lists is an error (MXNet's ``init`` silently keeps the first).
* With the symbol API, an input that the operator creates itself (``sym.FullyConnected(x,
  num_hidden=10)`` makes ``fullyconnected0_weight``) is not cast: the rule sees the call
  before the variable exists. Gluon layers pass all their parameters.
* The cast nodes that ``convert_symbol`` adds after an operator's output are named with its
  output name (``relu0_output_amp_cast_float16``) where MXNet uses the output's index for
  operators that do not name their outputs (``relu0_0_amp_cast_float16``).
"""
import contextlib
import logging
import warnings

import numpy as np

from ...base import MXNetAssertionError, NotSupportedError, dtype_to_flag, flag_to_dtype
from ...block import HybridBlock, SymbolBlock
from ...context import gpu
from ...methods import ArrayMethods
from ...module import BucketingModule
from ...ops import frontend, registry
from ...optimizer import Optimizer
from ...graph import Node, topo_nodes
from ...symbol import Symbol
from ...trainer import Trainer
from . import lists
from .loss_scaler import LossScaler

__all__ = ['init', 'init_trainer', 'scale_loss', 'unscale', 'convert_model',
           'convert_hybrid_block', 'list_lp16_ops', 'list_fp32_ops', 'list_lp16_fp32_ops',
           'list_conditional_fp32_ops', 'list_widest_type_cast', 'list_loss_output_functions',
           'list_lp16_use_fp32_params', 'convert_symbol', 'bfloat16']

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)

# MXNet's stand-in for bfloat16 (a 16-bit record); hybridlib computes nothing in it
bfloat16 = np.dtype([('bfloat16', np.uint16)])

_amp_initialized = False
_amp_loss_scale_initialized = False
_loss_scaler = None


# -------------------------------------------------------------------------------------------------
# init: the casting rule
# -------------------------------------------------------------------------------------------------

def init(target_dtype='float16', target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None):
    """Turn on automatic mixed precision. A hybridized block traced before traces again on its
    next call, with the casts (MXNet kept the old graph). A second call does nothing.

    Parameters
    ----------
    target_dtype : 'float16'
        The low precision type.
    target_precision_ops : list of str, optional
        Operators whose inputs are cast to ``target_dtype`` (default ``lists.FP16_FUNCS``).
    conditional_fp32_ops : list of (str, str, list of str), optional
        (operator, attribute, values): inputs cast to float32 when the attribute has one of
        the values (default ``lists.CONDITIONAL_FP32_FUNCS``).
    fp32_ops : list of str, optional
        Operators whose inputs are cast to float32 (default ``lists.FP32_FUNCS``).
    """
    global _amp_initialized, _loss_scaler
    if _amp_initialized:
        return
    target = _target_dtype(target_dtype)
    scaler = LossScaler()
    frontend.input_rule = _CastRule(target, target_precision_ops, fp32_ops,
                                    conditional_fp32_ops, scaler)
    _amp_initialized = True
    _loss_scaler = scaler
    logging.info('Using AMP')


def _target_dtype(target_dtype):
    if isinstance(target_dtype, str) and target_dtype == 'bfloat16' or target_dtype == bfloat16:
        raise NotSupportedError('AMP with bfloat16 is not supported: numpy has no bfloat16 type; '
                                "use target_dtype='float16'")
    if np.dtype(target_dtype) != _F16:
        raise MXNetAssertionError(f'AMP supports only float16 as a target_dtype, not '
                                  f'{target_dtype!r}')
    return _F16


class _CastRule:
    """``frontend.input_rule`` under AMP: each listed operator's inputs are cast before it runs
    (``nd.*``) or is recorded (``sym.*``); the running mean and variance of a normalisation
    (mutated inputs) are left alone."""

    def __init__(self, target, target_ops, fp32_ops, conditional_ops, loss_scaler):
        self.casts = {}         # OpDef -> (dtype or 'widest', [(attribute, values)] or None)
        self.sources = {}       # OpDef -> the list that names it
        for given, default, dtype in ((target_ops, lists.FP16_FUNCS, target),
                                      (fp32_ops, lists.FP32_FUNCS, _F32)):
            names = default if given is None else given
            for op in _resolve(names, given is not None):
                self._add(op, dtype, names)
        given = conditional_ops
        conditional_ops = lists.CONDITIONAL_FP32_FUNCS if given is None else given
        for name, attr, values in conditional_ops:
            for op in _resolve([name], given is not None):
                self._add(op, _F32, conditional_ops, (attr, tuple(values)))
        for op in _resolve(lists.WIDEST_TYPE_CASTS, False):
            self._add(op, 'widest', lists.WIDEST_TYPE_CASTS)
        self.loss_outputs = set(_resolve(lists.LOSS_OUTPUT_FUNCTIONS, False))
        self.loss_scaler = loss_scaler

    def _add(self, op, dtype, source, condition=None):
        if op in self.casts and self.sources[op] is not source:
            raise MXNetAssertionError(f'AMP: operator {op.name} is in two lists of casts; an '
                                      'operator may be in only one of target_precision_ops, '
                                      'fp32_ops, conditional_fp32_ops and WIDEST_TYPE_CASTS')
        conditions = self.casts.get(op, (dtype, None))[1]
        if condition is not None:       # several conditions: any of them casts
            conditions = (conditions or []) + [condition]
        self.casts[op] = (dtype, conditions)
        self.sources[op] = source

    def __call__(self, op, params, inputs, cast):
        if op in self.loss_outputs:
            params = self._scale_gradient(op, params, inputs)
        rule = self.casts.get(op)
        if rule is None:
            return inputs, params
        dtype, conditions = rule
        if conditions is not None and not any(
                attr in params and op.attrs[attr].format(params[attr]) in values
                for attr, values in conditions):
            return inputs, params
        if dtype == 'widest':
            return _cast_to_widest(inputs, cast), params
        mutated = set(op.aux_indices(params)) if op.variadic is None else set()
        return [x if i in mutated else _cast_input(x, dtype, cast)
                for i, x in enumerate(inputs)], params

    def _scale_gradient(self, op, params, inputs):
        # these operators make their gradient from grad_scale, not from the head gradient
        if any(isinstance(x, Symbol) for x in inputs):
            logging.warning('%s does not support dynamic loss scaling in symbolic and '
                            'hybridized execution.', op.name)
            return params
        return registry.Params(params, grad_scale=params['grad_scale'] *
                               self.loss_scaler.loss_scale)


def _resolve(names, given):
    """The OpDefs of ``names``. Names that hybridlib lacks are skipped: silently for MXNet's
    lists, with a warning for a user's list when MXNet lists them, else an error."""
    ops, missing = [], []
    for name in names:
        op = registry.find(name)
        if op is not None:
            ops.append(op)
        elif given:
            missing.append(name)
    if missing:
        known = set(_all_listed_names())
        unknown = [n for n in missing if n not in known]
        if unknown:
            raise registry.unknown_op_error(unknown[0], 'AMP: ')
        warnings.warn(f'AMP: operator(s) {", ".join(missing)} are not implemented by '
                      'hybridlib; their casts are skipped', stacklevel=4)
    return ops


def _all_listed_names():
    return (lists.FP16_FUNCS + lists.FP16_FP32_FUNCS + lists.FP32_FUNCS +
            [c[0] for c in lists.CONDITIONAL_FP32_FUNCS] + lists.WIDEST_TYPE_CASTS)


_AMP_CAST = registry.get('amp_cast')
_AMP_MULTICAST = registry.get('amp_multicast')
_CAST_PARAMS = {d: _AMP_CAST.parse_attrs({'dtype': d.name}) for d in (_F16, _F32)}


def _cast_input(x, dtype, cast):
    """``amp_cast(x, dtype)``, unless ``x``'s dtype is known and the cast would keep it."""
    if not isinstance(x, ArrayMethods):
        return x
    known = x._known_dtype()
    if known is not None and _AMP_CAST.infer_types(_CAST_PARAMS[dtype], [known])[1][0] == known:
        return x
    return cast('amp_cast', [x], {'dtype': dtype.name})[0]


def _cast_to_widest(inputs, cast):
    """``amp_multicast`` of the array inputs, unless their dtypes are known to stay."""
    where = [i for i, x in enumerate(inputs) if isinstance(x, ArrayMethods)]
    if len(where) < 2:
        return inputs
    values = [inputs[i] for i in where]
    known = [x._known_dtype() for x in values]
    attrs = {'num_outputs': len(values)}
    if None not in known:
        if len(set(known)) == 1:
            return inputs
        params = _AMP_MULTICAST.parse_attrs(attrs)
        if _AMP_MULTICAST.infer_types(params, known)[1] == known:
            return inputs
    cast_inputs = list(inputs)
    for i, x in zip(where, cast('amp_multicast', values, attrs)):
        cast_inputs[i] = x
    return cast_inputs


# -------------------------------------------------------------------------------------------------
# Dynamic loss scaling with a Gluon Trainer
# -------------------------------------------------------------------------------------------------

def init_trainer(optimizer_or_trainer):
    """Give a Gluon Trainer dynamic loss scaling (``amp.init()`` first): its ``step`` then
    skips updates whose gradients overflowed, and ``scale_loss`` uses its scaler.

    Parameters
    ----------
    optimizer_or_trainer : Trainer
        An Optimizer is refused, as in MXNet.
    """
    global _amp_loss_scale_initialized
    if not _amp_initialized:
        raise MXNetAssertionError('AMP not initialized, did you forget to call amp.init()?')
    if isinstance(optimizer_or_trainer, Trainer):
        if not _amp_loss_scale_initialized:
            # the first trainer gets init's scaler, the one loss-output operators scale by
            _amp_loss_scale_initialized = True
            loss_scaler = _loss_scaler
        else:
            loss_scaler = LossScaler()
        optimizer_or_trainer._amp_loss_scaler = loss_scaler
        optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale
    elif isinstance(optimizer_or_trainer, Optimizer):
        raise TypeError('AMP is currently only compatible with Gluon Trainer')
    else:
        raise TypeError('optimizer_or_trainer should be a Gluon Trainer or an optimizer, '
                        f'instead is {type(optimizer_or_trainer)}')


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """``with amp.scale_loss(loss, trainer) as scaled: scaled.backward()``: the loss (or list
    of losses) times the current loss scale; the trainer's next step divides it out."""
    scaler = getattr(optimizer_or_trainer, '_amp_loss_scaler', None)
    if scaler is None:
        raise MXNetAssertionError('Loss scaler is not initialized, did you forget to call '
                                  'amp.init_trainer()?')
    optimizer_or_trainer._scale = (optimizer_or_trainer._amp_original_scale /
                                   scaler.loss_scale)
    if isinstance(loss, (list, tuple)):
        yield [x * scaler.loss_scale for x in loss]
    else:
        yield scaler.loss_scale * loss


def unscale(optimizer_or_trainer):
    """Divide the loss scale out of the gradients now (to clip or inspect them); the next
    ``step`` then leaves them as they are."""
    if isinstance(optimizer_or_trainer, Trainer):
        scale = optimizer_or_trainer._scale
        for param in optimizer_or_trainer._params:
            for grad in param._grad or ():
                grad *= scale
        optimizer_or_trainer._scale = 1.
    elif isinstance(optimizer_or_trainer, Optimizer):
        raise TypeError('AMP is currently only compatible with Gluon Trainer')
    else:
        raise TypeError('optimizer_or_trainer should be a Gluon Trainer or an optimizer, '
                        f'instead is {type(optimizer_or_trainer)}')


# -------------------------------------------------------------------------------------------------
# The lists
# -------------------------------------------------------------------------------------------------

def _listing(name, values, doc):
    """``amp.<name>(target_dtype)``: ``values`` after checking the target dtype."""
    def listing(target_dtype):
        _target_dtype(target_dtype)
        return values
    listing.__name__ = listing.__qualname__ = name
    listing.__doc__ = doc
    return listing


list_lp16_ops = _listing('list_lp16_ops', lists.FP16_FUNCS,
                         'The default list of operators run in low precision.')
list_fp32_ops = _listing('list_fp32_ops', lists.FP32_FUNCS,
                         'The default list of operators run in float32.')
list_lp16_fp32_ops = _listing('list_lp16_fp32_ops', lists.FP16_FP32_FUNCS,
                              'The operators that run in either precision (not cast).')
list_conditional_fp32_ops = _listing(
    'list_conditional_fp32_ops', lists.CONDITIONAL_FP32_FUNCS,
    '(operator, attribute, values) run in float32 for those attribute values.')
list_widest_type_cast = _listing('list_widest_type_cast', lists.WIDEST_TYPE_CASTS,
                                 'The operators whose inputs are brought to their widest type.')
list_loss_output_functions = _listing(
    'list_loss_output_functions', lists.LOSS_OUTPUT_FUNCTIONS,
    "The loss-output operators whose ``grad_scale`` follows the loss scale.")
list_lp16_use_fp32_params = _listing(
    'list_lp16_use_fp32_params', None,
    'Parameters kept in float32 by low-precision operators: none for float16.')


# -------------------------------------------------------------------------------------------------
# Converting a float32 graph for mixed-precision inference
# -------------------------------------------------------------------------------------------------

def convert_symbol(sym, target_dtype='float16', target_dtype_ops=None, fp32_ops=None,
                   conditional_fp32_ops=None, excluded_sym_names=None, data_names=None,
                   cast_optional_params=False):
    """A copy of the float32 graph ``sym`` with ``amp_cast``/``amp_multicast`` nodes added by
    the lists (MXNet's ``ReducePrecision`` pass); its outputs are float32.

    Parameters
    ----------
    sym : Symbol
    target_dtype : 'float16'
    target_dtype_ops, fp32_ops : list of str, optional
        Override ``list_lp16_ops`` and ``list_fp32_ops``.
    conditional_fp32_ops : list of (str, str, list of str), optional
        Override ``list_conditional_fp32_ops``.
    excluded_sym_names : list of str, optional
        Nodes kept in float32.
    data_names : list of str, optional
        The graph's data inputs (default: the variables without a ``__dtype__``).
    cast_optional_params : bool, default False
        Parameters that only low-precision operators read are declared float16 (the caller
        casts their values) instead of being cast in the graph.
    """
    if not isinstance(sym, Symbol):
        raise MXNetAssertionError('First argument to convert_symbol should be Symbol')
    target = _target_dtype(target_dtype)
    target_dtype_ops = _checked_list(target_dtype_ops, lists.FP16_FUNCS, 'target_dtype_ops')
    fp32_ops = _checked_list(fp32_ops, lists.FP32_FUNCS, 'fp32_ops')
    conditional = _checked_list(conditional_fp32_ops, lists.CONDITIONAL_FP32_FUNCS,
                                'conditional_fp32_ops')
    excluded = set(_checked_list(excluded_sym_names, [], 'excluded_sym_names'))
    conditional_names = [c[0] for c in conditional]
    for a, b, what in ((target_dtype_ops, fp32_ops, 'target_dtype_ops and fp32_ops'),
                       (target_dtype_ops, conditional_names,
                        'target_dtype_ops and conditional_fp32_ops'),
                       (conditional_names, fp32_ops, 'fp32_ops and conditional_fp32_ops')):
        common = set(a) & set(b)
        if common:
            raise MXNetAssertionError(f'Ops cannot be in two or more lists. Common ops in '
                                      f'{what}: {sorted(common)}')
    illegal = set(target_dtype_ops + fp32_ops + conditional_names) - set(_all_listed_names())
    if illegal:
        raise MXNetAssertionError(
            f'Can only choose ops from list_lp16_ops, list_fp32_ops, list_lp16_fp32_ops or '
            f'list_conditional_fp32_ops; {sorted(illegal)} are in none of them')
    if data_names is None:
        attrs = sym.attr_dict()
        data_names = [n for n in sym.list_inputs() if '__dtype__' not in attrs.get(n, {})]
    conditions = {}
    for name, attr, values in conditional:
        for op in _resolve([name], False):
            conditions.setdefault(op, []).append((attr, values))
    graph = _ReducePrecision(target, set(_resolve(target_dtype_ops, False)),
                             set(_resolve(fp32_ops, False)),
                             set(_resolve(lists.WIDEST_TYPE_CASTS, False)),
                             conditions, excluded, set(data_names), cast_optional_params)
    return graph.run(sym)


def _checked_list(given, default, what):
    if given is None:
        return list(default)
    if not isinstance(given, list):
        raise MXNetAssertionError(f'{what} should be a list')
    return given


class _ReducePrecision:
    """MXNet's ``ReducePrecision`` graph pass, node by node in topological order.

    Each value of the old graph may get a float32 and a low-precision version in the new one
    (``as_fp32``, ``as_low``), made once and shared by every reader: low-precision operators
    read the low version (an ``amp_cast`` where there is none yet), float32 operators the
    float32 one, widest-type operators the common one (an ``amp_multicast`` when a dtype is
    unknown), and other operators what they read before, passing known dtypes on.
    """

    def __init__(self, target, low_ops, fp32_ops, widest_ops, conditions, excluded,
                 data_names, cast_optional_params):
        self.target = target
        self.low_ops = low_ops
        self.fp32_ops = fp32_ops
        self.widest_ops = widest_ops
        self.conditions = conditions
        self.excluded = excluded
        self.data_names = data_names
        self.cast_params = cast_optional_params
        self.mirror = {}        # id(old node) -> new node
        self.as_fp32 = {}       # (id(old node), index) -> entry of the float32 version
        self.as_low = {}        # (id(old node), index) -> entry of the target dtype version

    def run(self, sym):
        for old in topo_nodes(sym._outputs):
            new = Node(old.op, old.name, old.params, dict(old.attrs), dict(old.user_attrs))
            if old.op is None:
                new.shapes, new.dtypes = old.shapes, old.dtypes
                if old.name not in self.data_names:
                    _declare_parameter(new)
            if old.name in self.excluded or old.op in self.fp32_ops:
                new.inputs = self._float32(old, new, keep_variables=True)
            elif old.op in self.low_ops:
                new.inputs = self._low(old, new)
            elif old.op in self.widest_ops:
                new.inputs = self._widest(old, new)
            elif self._conditional(old):
                new.inputs = self._float32(old, new, keep_variables=False)
            else:
                new.inputs = [self._new(e) for e in old.inputs]
                if old.inputs and _key(old.inputs[0]) in self.as_low:
                    self._typed_outputs(old, new, self.target)
                elif old.inputs and _key(old.inputs[0]) in self.as_fp32:
                    self._typed_outputs(old, new, _F32)
            self.mirror[id(old)] = new
        outputs = [self.as_fp32.get(_key(e)) or self._cast(e, _F32, self.as_fp32)
                   for e in sym._outputs]
        return Symbol(outputs)

    def _new(self, entry):
        return (self.mirror[id(entry[0])], entry[1])

    def _cast(self, entry, dtype, table):
        node, index = entry
        suffix = '' if node.op is None else '_' + node.op.output_names(node.params)[index]
        cast = Node(_AMP_CAST, f'{node.name}{suffix}_amp_cast_{dtype.name}', _CAST_PARAMS[dtype],
                    {'dtype': dtype.name}, {}, [self._new(entry)])
        table[_key(entry)] = (cast, 0)
        return (cast, 0)

    def _float32(self, old, new, keep_variables):
        for i in range(old.num_outputs):
            self.as_fp32[(id(old), i)] = (new, i)
        mutated = set(_mutated(old))
        inputs = []
        for i, e in enumerate(old.inputs):
            if _key(e) in self.as_fp32:
                inputs.append(self.as_fp32[_key(e)])
            elif keep_variables and e[0].op is None or i in mutated:
                inputs.append(self._new(e))       # variables are float32 already
            else:
                inputs.append(self._cast(e, _F32, self.as_fp32))
        return inputs

    def _low(self, old, new):
        in_types, out_types = _infer_types(old, self.target)
        self._record_outputs(old, new, out_types)
        mutated = set(_mutated(old))
        inputs = []
        for i, e in enumerate(old.inputs):
            optional = self.cast_params and e[0].op is None and e[0].name not in self.data_names
            if _key(e) in self.as_low:
                inputs.append(self.as_low[_key(e)])
            elif optional or i in mutated or in_types[i] not in (self.target, None):
                inputs.append(self._new(e))
                if optional:            # declared in the target dtype instead of cast
                    var = self.mirror[id(e[0])]
                    var.user_attrs['__dtype__'] = str(dtype_to_flag(self.target))
                    var.dtypes = [self.target]
                    self.as_low[_key(e)] = self._new(e)
            else:
                inputs.append(self._cast(e, self.target, self.as_low))
        return inputs

    def _widest(self, old, new):
        keys = [_key(e) for e in old.inputs]
        if any(k not in self.as_low and k not in self.as_fp32 for k in keys):
            e = old.inputs[0]
            suffix = '' if e[0].op is None else '_' + e[0].op.output_names(e[0].params)[e[1]]
            n = len(old.inputs)
            multicast = Node(_AMP_MULTICAST, f'{e[0].name}{suffix}_amp_multicast',
                             _AMP_MULTICAST.parse_attrs({'num_outputs': n}),
                             {'num_outputs': str(n)}, {}, [self._new(x) for x in old.inputs])
            return [(multicast, i) for i in range(n)]
        dtype = _F32 if any(k in self.as_fp32 for k in keys) else self.target
        table = self.as_fp32 if dtype == _F32 else self.as_low
        for i in range(old.num_outputs):
            table[(id(old), i)] = (new, i)
        return [table.get(k) or self._cast(e, dtype, table) for k, e in zip(keys, old.inputs)]

    def _conditional(self, old):
        if old.op is None:
            return False
        return any(old.attrs.get(attr) in values
                   for attr, values in self.conditions.get(old.op, ()))

    def _typed_outputs(self, old, new, dtype):
        self._record_outputs(old, new, _infer_types(old, dtype)[1])

    def _record_outputs(self, old, new, out_types):
        for i, t in enumerate(out_types):
            if t == self.target:
                self.as_low[(id(old), i)] = (new, i)
            elif t == _F32:
                self.as_fp32[(id(old), i)] = (new, i)


def _declare_parameter(var):
    """Give a parameter of the new graph a ``__dtype__`` (float32 unless it has one), as
    MXNet's pass does; ``cast_optional_params`` may make it float16 later."""
    if '__dtype__' not in var.user_attrs:
        var.user_attrs['__dtype__'] = str(dtype_to_flag(_F32))
        var.dtypes = [_F32]


def _key(entry):
    return (id(entry[0]), entry[1])


def _mutated(node):
    return node.op.aux_indices(node.params) if node.op.variadic is None else ()


def _infer_types(node, first):
    """Input and output dtypes of ``node`` when its first input has dtype ``first`` (None
    where unknown, all None when the operator's inference refuses)."""
    dtypes = [first] + [None] * (len(node.inputs) - 1)
    try:
        return node.op.infer_types(node.params, dtypes)
    except (TypeError, ValueError):
        return [None] * len(node.inputs), [None] * node.num_outputs


def convert_model(sym, arg_params, aux_params, target_dtype='float16', target_dtype_ops=None,
                  fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                  cast_optional_params=False):
    """``convert_symbol`` for a model and its parameters: returns the new graph and the
    parameter dicts, with the parameters it declares float16 cast."""
    if excluded_sym_names is not None and not isinstance(excluded_sym_names, list):
        raise ValueError('excluded_sym_names must be a list of strings representing the names '
                         'of the symbols that should not be casted, while received type '
                         f'{type(excluded_sym_names)}')
    if not isinstance(sym, Symbol):
        raise MXNetAssertionError('First argument to convert_model should be Symbol')
    if not isinstance(arg_params, dict) or not isinstance(aux_params, dict):
        raise MXNetAssertionError('arg_params and aux_params should be dicts of name to '
                                  'ndarray')
    param_names = list(arg_params) + list(aux_params)
    data_names = list(set(sym.list_inputs()) - set(param_names))
    sym = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    declared = _declared_dtypes(sym)
    for params in (arg_params, aux_params):
        for name in params:
            if name in declared:
                params[name] = params[name].astype(declared[name])
    return sym, arg_params, aux_params


def _declared_dtypes(sym):
    return {name: flag_to_dtype(attrs['__dtype__']) for name, attrs in sym.attr_dict().items()
            if attrs.get('__dtype__', '-1') != '-1'}


def convert_hybrid_block(block, target_dtype='float16', target_dtype_ops=None, fp32_ops=None,
                         conditional_fp32_ops=None, excluded_sym_names=None, ctx=gpu(0),
                         cast_optional_params=False):
    """A SymbolBlock running ``block``'s graph converted by ``convert_symbol``, with its
    parameters' values on ``ctx`` (call the hybridized block once first).

    The default ``ctx`` is gpu(0), as in MXNet; pass ``ctx=mx.cpu()`` on a machine without one.
    """
    if not isinstance(block, HybridBlock):
        raise MXNetAssertionError('block input should be a HybridBlock')
    if not block._cached_graph:
        raise RuntimeError('Please first call block.hybridize() and then run forward with this '
                           'block at least once before calling export.')
    inputs, sym = block._cached_graph
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops,
                               conditional_fp32_ops, excluded_sym_names,
                               data_names=[i.name for i in inputs],
                               cast_optional_params=cast_optional_params)
    arg_names = set(converted.list_arguments())
    aux_names = set(converted.list_auxiliary_states())
    declared = _declared_dtypes(converted)
    values = {}
    for name, param in block.collect_params().items():
        if name in arg_names or name in aux_names:
            value = param._reduce()
            if name in declared:
                value = value.astype(declared[name])
            values[('arg:' if name in arg_names else 'aux:') + name] = value
    ret = SymbolBlock(converted, inputs)
    for name, param in ret.collect_params().items():
        value = values.get('arg:' + name, values.get('aux:' + name))
        if value is not None and np.dtype(param.dtype) != np.dtype(value.dtype):
            param.cast(value.dtype)
    ret.collect_params().load_dict(values, ctx=ctx)
    return ret


def convert_bucketing_module(bucketing_mod, target_dtype='float16', target_dtype_ops=None,
                             fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                             cast_optional_params=False):
    """A new BucketingModule whose buckets run the graphs of ``bucketing_mod``'s buckets
    converted by ``convert_model``, with the parameters of its current module.

    As in MXNet 1.9.1, the parameter dicts are converted in place (with
    ``cast_optional_params`` the original module's parameters become float16 too) and the
    new module shares them; it is not bound, and binding it builds the default bucket again
    from ``sym_gen``, unconverted.

    Parameters
    ----------
    bucketing_mod : BucketingModule
        Bound (so it has buckets) and with its parameters initialized.
    target_dtype : 'float16'
    target_dtype_ops, fp32_ops : list of str, optional
        Override ``list_lp16_ops`` and ``list_fp32_ops``.
    conditional_fp32_ops : list of (str, str, list of str), optional
        Override ``list_conditional_fp32_ops``.
    excluded_sym_names : list of str, optional
        Nodes kept in float32.
    cast_optional_params : bool, default False
        Declare (and cast) float16 the parameters that only low-precision operators read.
    """
    if not isinstance(bucketing_mod, BucketingModule):
        raise MXNetAssertionError('module should be instance of bucketing module')
    if not bucketing_mod._buckets:
        raise MXNetAssertionError('Bucketing Module should not be empty')
    if not bucketing_mod.params_initialized:
        raise MXNetAssertionError('bucketing_mod params should be initialized for mixed '
                                  'precision conversion')
    arg_params = bucketing_mod._curr_module._arg_params
    aux_params = bucketing_mod._curr_module._aux_params
    sym_dict = {}
    for key, module in bucketing_mod._buckets.items():
        sym_dict[key], arg_params, aux_params = convert_model(
            module._symbol, arg_params, aux_params, target_dtype=target_dtype,
            target_dtype_ops=target_dtype_ops, fp32_ops=fp32_ops,
            conditional_fp32_ops=conditional_fp32_ops, excluded_sym_names=excluded_sym_names,
            cast_optional_params=cast_optional_params)
    return BucketingModule.load_dict(
        sym_dict, sym_gen=bucketing_mod._sym_gen, arg_params=arg_params,
        aux_params=aux_params, default_bucket_key=bucketing_mod._default_bucket_key,
        logger=bucketing_mod.logger, context=bucketing_mod._context,
        work_load_list=bucketing_mod._work_load_list,
        fixed_param_names=bucketing_mod._fixed_param_names,
        state_names=bucketing_mod._state_names, group2ctxs=bucketing_mod._group2ctxs,
        compression_params=bucketing_mod._compression_params)
