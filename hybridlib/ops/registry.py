"""The operator registry: every operator defined once, under MXNet's name.

An ``OpDef`` is MXNet's operator attribute checklist as data:

=================  ==========================================================================
``inputs``         input names (``list_inputs(attrs)`` when they depend on attributes, as
                   FullyConnected's ``bias`` on ``no_bias``); ``variadic`` names the attribute
                   that counts a variable number of inputs (``num_args``), or is ``True`` when
                   ``list_inputs`` counts them (Custom: its prop's arguments)
``aux``            inputs that the operator mutates (BatchNorm's running statistics), or
                   ``aux(attrs)`` giving their names
``var_inits``      {input name: initializer JSON} that a variable given as that input gets as
                   its ``__init__`` attribute, unless it has one, when the operator is composed
                   into a Symbol (MXNet's FSetInputVarAttrOnCompose: BatchNorm's running
                   statistics start at zero and one whatever the Module's initializer)
``attrs``          typed attributes (``attrs.py``), in MXNet's order
``open_attrs``     any other keyword is an attribute too, kept as its MXNet string (Custom
                   hands them to its prop)
``check``          ``check(attrs)`` validates parsed attributes; it may return the Params to
                   use instead (Custom's carry its prop)
``named_inputs``   whether MXNet's graph names the inputs (its FListInputNames): an Executor's
                   monitor shows ``fc1_weight``, or ``relu1_input0`` for Activation (False)
``num_outputs``    all outputs, hidden ones included; ``num_visible_outputs`` those a Symbol
                   lists; ``output_names`` the suffixes of all, or a function of the
                   attributes giving them (``output``, ``mean``, ``var``; by default
                   ``output``, or ``output0``, ``output1``, ... for several)
``backward_node``  MXNet's backward node of the operator, as an Executor's monitor reports
                   it: a ``BackwardNode`` (what it reads, its input and output names),
                   ``CLONE`` (none: each input's gradient is output 0's), ``ZEROS``
                   (``zeros_like`` nodes), ``LEGACY`` (outputs named after the inputs), or
                   ``backward_node(attrs)`` giving one; by default a node of unknown inputs
                   with an output per input that is not auxiliary
``compute``        ``compute(xp, attrs, *inputs)``: the operator's one numeric body, for numpy
                   and cupy. A body that takes ``out=None`` writes output 0 into a given
                   (float, C-contiguous) buffer and returns it: what lets a compiled graph plan
                   buffers (``static_alloc``), work in place and serve ``out=weight``. Such a
                   body returns fresh arrays (never views of its inputs) without one
``specialise``     ``specialise(xp, attrs, shapes, dtypes, is_train)`` returns the body for
                   those input shapes and dtypes, ``fn(*inputs, out=None)``, with attributes,
                   reshapes and engine choices resolved once (a compiled graph calls it for
                   each node). Given alone, it is the one body and ``compute`` is derived
                   from it; given with ``compute``, both must be built from one helper (a
                   table row's forward: ``elemwise.py``). Every operator has
                   ``OpDef.specialise``: ``compute`` with its attributes bound by default
``reads_out``      ``reads_out(attrs)``: the body reads the ``out=`` array it is given and
                   combines its result into it (all_finite with ``init_output=False`` ANDs);
                   a compiled graph gives such a node no buffer
``reshapes``       output 0 is input 0 with another shape (Reshape, Flatten): ``compute``
                   copies, a compiled graph emits a view where the value is not returned
``hidden_views``   the hidden outputs are output 0 itself (max Pooling's, which nothing reads
                   but a monitor): no copy per call; a compiled graph keeps them with output
                   0's memory
``infer_shape``    ``(attrs, *shapes) -> (input shapes, output shapes)``; a shape is a tuple in
                   which 0 is an unknown dimension, or None when nothing is known; one that
                   takes ``out_shapes=`` also gets the outputs' known shapes, to fill inputs
                   backwards (Gluon's deferred RNN weights)
``infer_type``     ``(attrs, *dtypes) -> (input dtypes, output dtypes)``, None when unknown
``gradient``       ``(F, attrs, inputs, outputs, ograds) -> input gradients``, written with the
                   registered operators of ``F`` so that imperative autograd and the graph
                   backward share it (an ograd is None when no gradient reaches that output)
``train_aware``    compute and gradient take ``is_train`` (Dropout, BatchNorm)
``random``         draws random numbers (so two calls differ)
``inplace``        (input, output) pairs whose buffers may be shared
=================  ==========================================================================

``nd.*`` and ``sym.*`` are generated from this table (``frontend.py``), and so is everything
else that needs to know about an operator.
"""
import difflib
import functools
import inspect
import math
import re
import threading

import numpy as np

from ..base import AttributeParseError, MXNetError, ShapeError, DTypeError, np_dtype
from .attrs import REQUIRED, Attr, format_value, parse_error

__all__ = ['OpDef', 'Params', 'BackwardNode', 'CLONE', 'ZEROS', 'LEGACY', 'register',
           'register_op', 'get', 'find', 'list_ops', 'REGISTRY', 'same_shape', 'same_dtype',
           'merge_shape', 'known', 'broadcast_shape', 'zero_gradient', 'add_gradients',
           'normalize_axis', 'unknown_op_error', 'workspace', 'output']

REGISTRY = {}      # canonical name -> OpDef
_BY_NAME = {}      # canonical names and aliases -> OpDef


_DICT_NAMES = frozenset(dir(dict))
_dict_item = dict.__getitem__
_object_attribute = object.__getattribute__


class Params(dict):
    """Parsed attributes of one operator call: ``attrs.kernel`` or ``attrs['kernel']``.

    An attribute is looked up among the keys first (dict's own names excepted): the usual
    lookup would search the class and raise inside before ``__getattr__`` ran, which costs
    five times as much, and operator bodies read attributes on every call."""
    __slots__ = ()

    def __getattribute__(self, name):
        if name not in _DICT_NAMES:
            try:
                return _dict_item(self, name)
            except KeyError:
                pass
        return _object_attribute(self, name)

    def __getattr__(self, name):
        # (reached by subclasses that look up their own attributes first: CustomParams)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


# ---------------------------------------------------------------------------------------------
# Shape and dtype helpers for inference functions
# ---------------------------------------------------------------------------------------------

def known(shape):
    """True when every dimension of ``shape`` is known."""
    return shape is not None and 0 not in shape


def merge_shape(a, b, what='shape'):
    """The most specific shape agreeing with both partial shapes; ShapeError on a conflict."""
    if a is None:
        return None if b is None else tuple(b)
    if b is None:
        return tuple(a)
    if len(a) != len(b):
        raise ShapeError(f'{what}: {tuple(a)} and {tuple(b)} have different ranks')
    out = []
    for x, y in zip(a, b):
        if x and y and x != y:
            raise ShapeError(f'{what}: expected {tuple(a)}, got {tuple(b)}')
        out.append(x or y)
    return tuple(out)


def broadcast_shape(a, b):
    """numpy broadcasting of two (partial) shapes; unknown dims stay unknown unless forced."""
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x == 0 or y == 0:
            out.append(x or y)
        elif x == y:
            out.append(x)
        else:
            raise ShapeError(f'shapes {a} and {b} cannot be broadcast together')
    return tuple(out)


def normalize_axis(axis, ndim, what='axis'):
    """A non-negative axis index; ShapeError when out of range."""
    if not -ndim <= axis < ndim:
        raise ShapeError(f'{what}={axis} is out of range for {ndim}-d input')
    return axis % ndim


def same_shape(attrs, *shapes):
    """Default shape inference: all inputs and the outputs share one shape."""
    merged = None
    for s in shapes:
        merged = merge_shape(merged, s, 'inputs must have the same shape')
    return [merged] * len(shapes), [merged]


def same_dtype(attrs, *dtypes):
    """Default dtype inference: all inputs and outputs share one dtype."""
    merged = None
    for d in dtypes:
        if d is not None:
            if merged is not None and d != merged:
                raise DTypeError(f'inputs must have the same dtype, got {merged.name} and {d.name}')
            merged = d
    return [merged] * len(dtypes), [merged]


def zero_gradient(F, attrs, inputs, outputs, ograds, **_):
    """The gradient of a piecewise-constant operator: nothing flows back."""
    return [None] * len(inputs)


def add_gradients(a, b):
    """Sum of two gradient contributions, either of which may be None (none reached)."""
    if a is None:
        return b
    return a if b is None else a + b


def output(result, out, shape=None):
    """Output 0 of a body that computes ``result`` as a new array: ``result`` (reshaped to
    ``shape`` when given), or, when the caller gives a buffer ``out`` (as many elements),
    ``result`` written into it and ``out`` returned."""
    if out is None:
        return result if shape is None else result.reshape(shape)
    out.reshape(result.shape)[...] = result
    return out


_scratch = threading.local()


def workspace(xp, shape, dtype, part=0):
    """Scratch memory for an operator's temporaries (im2col columns), shared by the operators
    of a thread, which run one at a time, and grown to the largest request: MXNet's temporary
    workspace. ``part`` numbers the separate buffers one operator needs at once. Its contents
    are garbage; it must never be returned or kept."""
    dtype = np.dtype(dtype)
    size = math.prod(shape)
    key = (dtype, part) if xp is np else (xp.__name__, dtype, part, xp.cuda.Device().id)
    try:
        pool = _scratch.pool
    except AttributeError:
        pool = _scratch.pool = {}
    buf = pool.get(key)
    if buf is None or buf.size < size:
        buf = pool[key] = xp.empty(size, dtype)
    return buf[:size].reshape(shape)


class ChannelRows:
    """Data with its channel axis at ``axis`` as (lead, C, rest): the axes before the channel,
    the channel, the axes after it; per-channel vectors are ``spread`` to broadcast along it.

    numpy's loops pay per row of the innermost axis, so broadcasting a (C, 1) column along
    short rows (BatchNorm's (1, C, 1, 1) on small images) costs more than the arithmetic.
    Where the rows are short against the lead (``rest < _ROW_COST * lead``: the repeated
    vector is small beside the data), the vector is repeated ``rest`` times instead, and the
    passes run over rows of C * rest; where rows are long (a batch of one large image) the
    column broadcasts along them as it is. Per-channel sums are a product with a vector of ones
    (BLAS) and a short reduction."""

    def __init__(self, data, axis):
        self.axis, self.lead, self.c = axis, math.prod(data[:axis]), data[axis]
        self.rest = math.prod(data[axis + 1:])
        self.count = self.lead * self.rest
        self.repeat = 1 < self.rest < _ROW_COST * self.lead

    def __call__(self, x):
        return x.reshape(self.lead, self.c, self.rest)

    def spread(self, xp, v):
        """A (C,) vector as (C, rest) or (C, 1), broadcasting against (lead, C, rest)."""
        return xp.repeat(v, self.rest).reshape(self.c, self.rest) if self.repeat else \
            v.reshape(self.c, 1)

    def sums(self, xp, rows):
        """Per-channel sums (C,) of (lead, C, rest) rows (float16 by numpy's sum, which
        accumulates in float32)."""
        if rows.dtype == np.float16:
            total = rows.sum(axis=0)
        else:
            total = xp.ones(self.lead, rows.dtype) @ rows.reshape(self.lead, self.c * self.rest)
        return total.reshape(self.c, self.rest).sum(axis=1)

    def dots(self, xp, a, b):
        """Per-channel sums of ``a * b`` (float32 or float64 (lead, C, rest) rows), without a
        temporary the size of the data."""
        shape = (self.lead, self.c * self.rest)
        total = xp.einsum('ij,ij->j', a.reshape(shape), b.reshape(shape))
        return total.reshape(self.c, self.rest).sum(axis=1)


# what a row costs numpy's loops against an element of arithmetic (measured: a (1, C, 1, 1)
# operand on 8x8 images made a pass 4x slower), so a vector repeated ``rest`` times, at about
# one element per element, pays while ``rest`` is below this many times the lead
_ROW_COST = 40


# ---------------------------------------------------------------------------------------------
# MXNet's backward nodes, as a monitor names them
# ---------------------------------------------------------------------------------------------

CLONE = 'clone'     # no backward node: each input's gradient is output 0's (elemwise_add)
ZEROS = 'zeros'     # a zeros_like node per input (argmax, floor, the comparisons)
# one node, its outputs named after the operator's inputs and its inputs unknown: MXNet's
# legacy operators (SliceChannel's is ``_backward_SliceChannel``, its output ``data``; MXNet's
# monitor crashes on reading their inputs)
LEGACY = 'legacy'

_BACKWARD_SOURCE = re.compile(r'(ograd|in|out)(\d+)')


class BackwardNode:
    """MXNet's backward node of an operator (``fc1_backward``): what an Executor's monitor
    reports of it during ``backward``.

    Parameters
    ----------
    inputs : sequence of str, or None
        What the node reads, in its order: ``'ograd<k>'`` (the gradient of output k),
        ``'in<k>'`` (input k), ``'out<k>'`` (output k). None: unknown (not reported; the node
        is taken to read the gradients of the visible outputs).
    input_names : sequence of str, optional
        Their names (the backward operator's FListInputNames); ``input0``, ``input1``, ...
        when not given.
    output_names : sequence of str, optional
        The names of its outputs; ``output`` for one, ``output0``, ``output1``, ... for
        several when not given.
    grads : sequence of int, optional
        The inputs whose gradients its outputs are, in order; by default those that are not
        auxiliary.
    """
    __slots__ = ('inputs', 'input_names', 'output_names', 'grads')

    def __init__(self, inputs, input_names=None, output_names=None, grads=None):
        self.inputs = None if inputs is None else tuple(_parse_source(i) for i in inputs)
        if input_names is None and inputs is not None:
            input_names = [f'input{i}' for i in range(len(self.inputs))]
        if inputs is not None and len(input_names) != len(self.inputs):
            raise TypeError(f'BackwardNode: {len(input_names)} names for '
                            f'{len(self.inputs)} inputs')
        self.input_names = None if input_names is None else tuple(input_names)
        self.output_names = None if output_names is None else tuple(output_names)
        self.grads = None if grads is None else tuple(grads)

    def __repr__(self):
        reads = '?' if self.inputs is None else ', '.join(f'{k}{i}' for k, i in self.inputs)
        return f'<BackwardNode ({reads})>'


def _parse_source(source):
    match = _BACKWARD_SOURCE.fullmatch(source)
    if match is None:
        raise TypeError(f"BackwardNode: {source!r} is not 'ograd<k>', 'in<k>' or 'out<k>'")
    return match.group(1), int(match.group(2))


# ---------------------------------------------------------------------------------------------
# OpDef
# ---------------------------------------------------------------------------------------------

class OpDef:
    """One operator. See the module docstring for what each field means."""

    def __init__(self, name, *, gradient, compute=None, inputs=(), list_inputs=None,
                 variadic=None, aux=(), attrs=None, num_outputs=1, num_visible_outputs=None,
                 output_names=None, infer_shape=same_shape, infer_type=same_dtype,
                 train_aware=False, random=False, inplace=(), aliases=(), check=None,
                 hint=None, array_form=None, specialise=None, reads_out=None, reshapes=False,
                 open_attrs=False, var_inits=None, named_inputs=True, backward_node=None,
                 hidden_views=False, doc=''):
        self.name = name
        self.inputs = tuple(inputs)
        clash = {'out', 'name', 'attr'} & (set(self.inputs) | set(attrs or {}))
        if clash:
            raise TypeError(f'{name}: {sorted(clash)} are reserved by the frontend functions')
        self._list_inputs = list_inputs
        self.named_inputs = named_inputs
        self._backward_node = backward_node
        self.variadic = variadic
        self.aux = aux if callable(aux) else tuple(aux)
        self.var_inits = dict(var_inits or {})
        self.attrs = dict(attrs or {})
        self.open_attrs = open_attrs
        for key, attr in self.attrs.items():
            if not isinstance(attr, Attr):
                raise TypeError(f'{name}.{key}: attributes must be Attr instances')
        self._num_outputs = num_outputs
        self._num_visible = num_visible_outputs
        self._output_names = output_names
        if specialise is not None and compute is None:
            compute = _compute_from(specialise)
            self.writes_into = True
        else:
            self.writes_into = compute is not None and _takes_out(compute)
        if callable(num_outputs) and compute is not None:
            compute = _one_output_as_array(compute)
        self.compute = compute
        self._specialise = specialise
        self.reads_out = reads_out
        self.reshapes = reshapes
        self.hidden_views = hidden_views
        self.infer_shape = infer_shape
        self._infer_takes_outputs = _accepts_keyword(infer_shape, 'out_shapes')
        self.infer_type = infer_type
        self.gradient = gradient
        self.train_aware = train_aware
        self.random = random
        self.inplace = tuple(inplace)
        self.aliases = tuple(aliases)
        self.check = check
        self.array_form = array_form      # op to call when attributes are given as arrays
        self.hint = hint or name.lower()
        self.doc = doc or ''
        self.defaults = Params((k, a.default) for k, a in self.attrs.items()
                               if a.default is not REQUIRED)
        self.required = tuple(k for k, a in self.attrs.items() if a.default is REQUIRED)

    def __repr__(self):
        return f'<OpDef {self.name}>'

    def specialise(self, xp, attrs, shapes, dtypes, is_train=False):
        """The body for inputs of these shapes and dtypes: ``fn(*inputs, out=None)``.

        The operator's own ``specialise`` where it gives one, else ``compute`` with the
        attributes (and the mode of a train-aware operator) bound.
        """
        if self._specialise is not None:
            return self._specialise(xp, attrs, list(shapes), list(dtypes), is_train)
        return self.bound(xp, attrs, is_train)

    def bound(self, xp, attrs, is_train=False):
        """``compute`` with the array module, the attributes and (for a train-aware operator)
        the mode bound: ``fn(*inputs, out=None)`` for inputs of any shape."""
        if self.train_aware:
            return functools.partial(self.compute, xp, attrs, is_train=is_train)
        return functools.partial(self.compute, xp, attrs)

    def writes_into_buffer(self, attrs):
        """Whether a compiled graph may hand output 0 a planned buffer for these attributes."""
        return self.writes_into and not (self.reads_out is not None and self.reads_out(attrs))

    # -- attributes ---------------------------------------------------------------------------
    def parse_attrs(self, given):
        """Typed Params from a dict of Python values or MXNet attribute strings."""
        params = Params(self.defaults)
        for key, value in given.items():
            attr = self.attrs.get(key)
            if attr is None and self.open_attrs:
                params[key] = format_value(value)
                continue
            if attr is None:
                raise self.unknown_attr_error(key)
            try:
                params[key] = attr.parse(value)
            except (ValueError, TypeError, MXNetError) as err:
                raise parse_error(self.name, key, value, attr, err) from None
        missing = [k for k in self.required if k not in params]
        if missing:
            raise AttributeParseError(
                f'operator {self.name}: required attribute(s) {", ".join(missing)} not given; '
                f'attributes: {self.describe_attrs()}')
        if self.check is not None:
            try:
                checked = self.check(params)
            except (ValueError, TypeError) as err:
                raise AttributeParseError(f'operator {self.name}: {err}') from None
            if checked is not None:
                params = checked
        return params

    def format_attrs(self, given):
        """MXNet attribute strings of the attributes given explicitly (what JSON stores)."""
        out = {}
        for k, v in given.items():
            attr = self.attrs.get(k)
            if attr is None and self.open_attrs:
                out[k] = format_value(v)
            elif v is not None or attr.optional:
                out[k] = attr.format(v)
        return out

    def describe_attrs(self):
        if not self.attrs:
            return '(none)'
        return '; '.join(f'{k} ({a.describe()})' for k, a in self.attrs.items())

    def unknown_attr_error(self, key):
        return AttributeParseError(
            f'operator {self.name} has no attribute {key!r}; its attributes are: '
            f'{self.describe_attrs()}')

    # -- inputs and outputs -------------------------------------------------------------------
    def list_inputs(self, params):
        """Input names for these attributes (aux inputs included, in MXNet's order)."""
        if self._list_inputs is not None:
            return tuple(self._list_inputs(params))
        if self.variadic is not None:
            count = params.get(self.variadic, 0)
            return tuple(f'arg{i}' for i in range(count))
        return self.inputs

    def aux_indices(self, params):
        names = self.list_inputs(params)
        aux = self.aux(params) if callable(self.aux) else self.aux
        return tuple(i for i, n in enumerate(names) if n in aux)

    def num_outputs(self, params):
        n = self._num_outputs
        return n(params) if callable(n) else n

    def num_visible_outputs(self, params):
        n = self._num_visible
        if n is None:
            return self.num_outputs(params)
        return n(params) if callable(n) else n

    def output_names(self, params):
        """The name suffixes of all outputs, hidden ones included (as MXNet's graph names
        them: FListOutputNames, else ``output`` or ``output0``, ``output1``, ...)."""
        names = self._output_names
        if names is not None:
            return list(names(params) if callable(names) else names)
        n = self.num_outputs(params)
        return ['output'] if n == 1 else [f'output{i}' for i in range(n)]

    def graph_input_names(self, params):
        """Input names as MXNet's graph gives them (what a monitor shows after the node's
        name): ``list_inputs``, or ``input0``, ``input1``, ... for an operator that does not
        name its inputs (``named_inputs=False``)."""
        names = self.list_inputs(params)
        if self.named_inputs:
            return names
        return tuple(f'input{i}' for i in range(len(names)))

    def backward_node(self, params):
        """MXNet's backward node for these attributes: a ``BackwardNode``, ``CLONE``,
        ``ZEROS`` or ``LEGACY``; a ``BackwardNode`` of unknown inputs when not described."""
        spec = self._backward_node
        spec = spec(params) if callable(spec) else spec
        return BackwardNode(None) if spec is None else spec

    def backward_grads(self, params, node=None):
        """The inputs whose gradients the backward node ``node`` (``backward_node``'s by
        default) gives, in order."""
        node = self.backward_node(params) if node is None else node
        if isinstance(node, BackwardNode) and node.grads is not None:
            return list(node.grads)
        aux = set(self.aux_indices(params))
        return [i for i in range(len(self.list_inputs(params))) if i not in aux]

    def backward_output_names(self, params, node=None):
        """The output names of the backward node ``node`` (``backward_node``'s by default)."""
        node = self.backward_node(params) if node is None else node
        if isinstance(node, BackwardNode) and node.output_names is not None:
            return list(node.output_names)
        grads = self.backward_grads(params, node)
        if node == LEGACY:
            names = self.list_inputs(params)
            return [names[i] for i in grads]
        return ['output'] if len(grads) == 1 else [f'output{i}' for i in range(len(grads))]

    # -- inference with the context an error message needs -----------------------------------
    def infer_shapes(self, params, shapes, node=None, out_shapes=None):
        """Run ``infer_shape``; errors name the operator, the node and every input shape.

        ``out_shapes`` (known output shapes) reaches operators whose ``infer_shape`` takes it.
        """
        try:
            if out_shapes is not None and self._infer_takes_outputs:
                ins, outs = self.infer_shape(params, *shapes, out_shapes=list(out_shapes))
            else:
                ins, outs = self.infer_shape(params, *shapes)
        except ShapeError as err:
            raise ShapeError(self._context(params, node, shapes, 'shape') + str(err)) from None
        except (IndexError, TypeError, ValueError, ZeroDivisionError) as err:
            raise ShapeError(self._context(params, node, shapes, 'shape') +
                             f'{type(err).__name__}: {err}') from None
        return list(ins), list(outs)

    def infer_types(self, params, dtypes, node=None):
        """Run ``infer_type`` with the same error context as ``infer_shapes``."""
        try:
            ins, outs = self.infer_type(params, *dtypes)
        except (DTypeError, TypeError, ValueError) as err:
            names = [getattr(d, 'name', d) for d in dtypes]
            raise DTypeError(self._context(params, node, names, 'dtype') + str(err)) from None
        return list(ins), [np_dtype(d) for d in outs]

    def _context(self, params, node, values, kind):
        where = f'{node} ({self.name})' if node and node != self.name else self.name
        names = self.list_inputs(params)
        parts = []
        for i, v in enumerate(values):
            label = names[i] if i < len(names) else f'input{i}'
            parts.append(f'{label}={tuple(v) if isinstance(v, (list, tuple)) else v}')
        return f'Error in operator {where}: input {kind}s [{", ".join(parts)}]: '


def _accepts_keyword(fn, name):
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _takes_out(compute):
    """Whether ``compute`` has an ``out=None`` keyword (an input may be named ``out``)."""
    try:
        param = inspect.signature(compute).parameters.get('out')
    except (TypeError, ValueError):
        return False
    return param is not None and param.default is None and \
        param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY)


def register_op(op):
    """Add an OpDef under its name and aliases; a name may be defined only once."""
    for name in (op.name,) + op.aliases:
        if name in _BY_NAME:
            raise MXNetError(f'operator name {name!r} is registered twice '
                             f'({_BY_NAME[name].name} and {op.name})')
        _BY_NAME[name] = op
    REGISTRY[op.name] = op
    return op


_OPDEF_FIELDS = {'compute', 'gradient', 'inputs', 'list_inputs', 'variadic', 'aux', 'attrs',
                 'num_outputs', 'num_visible_outputs', 'output_names', 'infer_shape',
                 'infer_type', 'train_aware', 'random', 'inplace', 'aliases', 'check', 'hint',
                 'array_form', 'specialise', 'reads_out', 'reshapes', 'open_attrs',
                 'var_inits', 'named_inputs', 'backward_node', 'hidden_views'}


def register(name, **options):
    """Class decorator: the class body is the operator's namespace of fields and functions.

    ::

        @register('relu')
        class relu:
            def compute(xp, attrs, data): ...
            def gradient(F, attrs, inputs, outputs, ograds): ...

    The decorated name becomes the OpDef.
    """
    def wrap(cls):
        spec = {k: v for k, v in vars(cls).items() if not k.startswith('__')}
        spec.update(options)
        unknown = set(spec) - _OPDEF_FIELDS
        if unknown:
            raise TypeError(f'@register({name!r}): {sorted(unknown)} are not OpDef fields; '
                            'put helper functions at module level')
        return register_op(OpDef(name, doc=cls.__doc__ or '', **spec))
    return wrap


def find(name):
    """The OpDef registered under ``name`` (canonical or alias), or None."""
    return _BY_NAME.get(name)


def get(name):
    """The OpDef registered under ``name``; a clear MXNetError when there is none."""
    op = _BY_NAME.get(name)
    if op is None:
        raise unknown_op_error(name)
    return op


def unknown_op_error(name, where=''):
    close = difflib.get_close_matches(name, list(_BY_NAME), n=3)
    hint = f' Did you mean {", ".join(close)}?' if close else ''
    return MXNetError(f'{where}unknown operator {name!r}.{hint} hybridlib supports '
                      f'{len(REGISTRY)} operators: {", ".join(sorted(REGISTRY))}')


def list_ops():
    """Canonical names of all registered operators."""
    return sorted(REGISTRY)


def _compute_from(specialise):
    """``compute`` of an operator given as ``specialise``: specialised for the inputs at hand."""
    def compute(xp, attrs, *inputs, out=None, is_train=False):
        fn = specialise(xp, attrs, [x.shape for x in inputs], [x.dtype for x in inputs],
                        is_train)
        return fn(*inputs, out=out)
    compute.__doc__ = specialise.__doc__
    return compute


def _one_output_as_array(compute):
    """``compute`` of an operator whose output count follows its attributes (split into one
    part), returning a single output as the array itself, as every caller expects of one
    output (a compiled graph assigns it to one name)."""
    @functools.wraps(compute)
    def run(*args, **kwargs):
        out = compute(*args, **kwargs)
        return out[0] if isinstance(out, (tuple, list)) and len(out) == 1 else out
    return run


@functools.lru_cache(maxsize=None)
def all_names():
    return tuple(sorted(_BY_NAME))
