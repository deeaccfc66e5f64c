"""Custom: operators written in Python (``mx.operator.CustomOp``), as one registry operator.

``Custom(*data, op_type=name, **kwargs)`` runs the ``CustomOpProp`` registered under ``name``
(``mx.operator.register``). As in MXNet (``src/operator/custom/custom.cc``):

* the keyword arguments other than ``op_type`` are attributes kept as strings, written into
  the graph's JSON as they are and given to the prop's ``__init__`` as strings;
* the inputs are the prop's ``list_arguments()`` then its ``list_auxiliary_states()`` (which
  the operator may mutate), the outputs its ``list_outputs()``; shapes and dtypes come from its
  ``infer_shape``/``infer_type``, which see the arguments only and also give the auxiliary
  states';
* the gradient is the node ``_backward_Custom``, whose inputs are what the prop's
  ``declare_backward_dependency`` asks for (output gradients, inputs, outputs, by MXNet's ids:
  output gradients first, then inputs, then outputs) followed by the auxiliary states, and
  whose outputs are the arguments' gradients. The auxiliary states get none.

The attributes parse into a ``CustomParams``: one prop, made when they are parsed (once per
imperative call, once per graph node), and the ``CustomOp``s it creates, one per context, input
shapes and dtypes (``create_operator``). A node's forward and the backward built from it share
that operator, so what ``forward`` keeps on ``self`` is there in ``backward``.

The user's ``forward``/``backward`` receive NDArrays over the operator's buffers, outside
recording, in the graph's training mode, with the operator's context current; the output (and
input-gradient) buffers start as zeros and every ``req`` is ``'write'``. ``hybridlib.operator``
provides that bridge (``set_runner``), since NDArray sits above the registry.

Differences from MXNet: keyword NDArrays/Symbols name inputs (``Custom(data=x, label=y, ...)``;
MXNet's ``nd.Custom`` crashes on them); ``is_train`` is a bool where MXNet passes 0 or 1; an
array ``declare_backward_dependency`` leaves out is None in ``backward`` (MXNet passes an empty
array); shape inference with unknown input shapes asks the prop with ``[]`` for them, as MXNet
does, and takes a failure there as "not known yet" instead of an error.
"""
import numpy as np

from ..base import DTypeError, MXNetError, NotSupportedError, ShapeError, dtype_to_flag, np_dtype
from ..context import context_of_array, current_context
from .attrs import Attr, Str
from .registry import Params, known, register

__all__ = ['register_prop', 'find_prop', 'registered_props', 'set_runner', 'CustomParams',
           'BackwardLink']

_PROPS = {}            # op_type -> CustomOpProp subclass
_MAX_STATES = 64       # operators kept per node (one per input signature)
_runner = None


def register_prop(op_type, prop_cls):
    """Make ``prop_cls`` the operator of ``Custom(..., op_type=op_type)``; returns the one it
    replaces (None if new)."""
    previous = _PROPS.get(op_type)
    _PROPS[op_type] = prop_cls
    return previous


def find_prop(op_type):
    """The prop class registered under ``op_type``, or None."""
    return _PROPS.get(op_type)


def registered_props():
    """The registered op_type names, sorted."""
    return sorted(_PROPS)


def set_runner(runner):
    """Install what calls a ``CustomOp`` on raw buffers: ``runner.forward(op, is_train, ctx,
    req, in_data, out_data, aux)`` and ``runner.backward(op, is_train, ctx, req, out_grad,
    in_data, out_data, in_grad, aux)``, with lists of xp arrays (None for what the backward
    does not read)."""
    global _runner
    _runner = runner


def _get_runner():
    if _runner is None:
        raise MXNetError('Custom operators run through hybridlib.operator; import it '
                         '(import hybridlib.operator) before running one')
    return _runner


# -------------------------------------------------------------------------------------------------
# Parsed attributes: the prop and the operators it created
# -------------------------------------------------------------------------------------------------

class _State:
    """One ``CustomOp`` and the signature it was created for."""
    __slots__ = ('op', 'in_shapes', 'in_dtypes', 'out_shapes', 'out_dtypes')

    def __init__(self, op, in_shapes, in_dtypes, out_shapes, out_dtypes):
        self.op = op
        self.in_shapes = in_shapes
        self.in_dtypes = in_dtypes
        self.out_shapes = out_shapes
        self.out_dtypes = out_dtypes


class CustomParams(Params):
    """The attributes of one Custom call or node (``op_type`` and the string kwargs), with the
    prop they make, its lists, and the operators it created."""
    __slots__ = ('op_type', 'prop', 'arguments', 'outputs', 'aux_states', 'backward_deps',
                 '_states', '_last')
    # its own attributes before the kwargs (which may have any name)
    __getattribute__ = object.__getattribute__

    def __init__(self, params):
        super().__init__(params)
        self.op_type = params['op_type']
        prop_cls = _PROPS.get(self.op_type)
        if prop_cls is None:
            known_types = ', '.join(registered_props()) or '(none)'
            raise MXNetError(
                f'Cannot find custom operator {self.op_type!r}: register its CustomOpProp with '
                f'@mx.operator.register({self.op_type!r}) first (registered: {known_types})')
        kwargs = {k: v for k, v in params.items() if k != 'op_type'}
        self.prop = self._call(f'{prop_cls.__name__}(**{kwargs})', prop_cls, **kwargs)
        self.arguments = self._names('list_arguments')
        self.outputs = self._names('list_outputs')
        self.aux_states = self._names('list_auxiliary_states')
        n_out, n_args = len(self.outputs), len(self.arguments)
        ids = list(range(2 * n_out + n_args))
        deps = self._call('declare_backward_dependency', self.prop.declare_backward_dependency,
                          ids[:n_out], ids[n_out:n_out + n_args], ids[n_out + n_args:])
        deps = [int(d) for d in deps]
        bad = [d for d in deps if not 0 <= d < len(ids)]
        if bad:
            raise MXNetError(
                f'Custom operator {self.op_type!r}: declare_backward_dependency returned ids '
                f'{bad}; valid ids are 0..{len(ids) - 1} (output gradients, inputs, outputs)')
        self.backward_deps = tuple(self._dependency(d) for d in deps)
        self._states = {}
        self._last = None

    def _call(self, what, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as err:      # the user's code: keep its traceback as the cause
            raise MXNetError(f'Custom operator {self.op_type!r}: {what} failed: '
                             f'{type(err).__name__}: {err}') from err

    def _names(self, method):
        names = self._call(f'{method}()', getattr(self.prop, method))
        return tuple(str(n) for n in names)

    def _dependency(self, idx):
        """A backward dependency id as (MXNet's list, position in it): ``'out_grad'``,
        ``'in_data'`` or ``'out_data'``."""
        n_out, n_args = len(self.outputs), len(self.arguments)
        if idx < n_out:
            return 'out_grad', idx
        if idx < n_out + n_args:
            return 'in_data', idx - n_out
        return 'out_data', idx - n_out - n_args

    @property
    def num_args(self):
        return len(self.arguments)

    def input_names(self):
        return self.arguments + self.aux_states

    def where(self):
        return f'Custom operator {self.op_type!r} ({type(self.prop).__name__})'

    # -- the operators ------------------------------------------------------------------------
    def state(self, ctx, shapes, dtypes):
        """The CustomOp for these input shapes and dtypes (all inputs, auxiliary states
        included), created by the prop the first time."""
        shapes = tuple(tuple(int(d) for d in s) for s in shapes)
        dtypes = tuple(np.dtype(d) for d in dtypes)
        key = (ctx, shapes, dtypes)
        state = self._states.get(key)
        if state is None:
            _, out_shapes = infer_shape(self, *shapes, strict=True)
            _, out_dtypes = infer_type(self, *dtypes)
            if not all(known(s) for s in out_shapes):
                raise ShapeError(f'{self.where()}: infer_shape left output shapes unknown '
                                 f'({out_shapes}) for input shapes {list(shapes)}')
            if any(d is None for d in out_dtypes):
                raise DTypeError(f'{self.where()}: infer_type left output dtypes unknown '
                                 f'({out_dtypes}) for input dtypes {[d.name for d in dtypes]}')
            op = self._call('create_operator', self.prop.create_operator, ctx,
                            [list(s) for s in shapes], [dtype_to_flag(d) for d in dtypes])
            state = _State(op, shapes, dtypes, [tuple(s) for s in out_shapes], out_dtypes)
            if len(self._states) >= _MAX_STATES:
                self._states.pop(next(iter(self._states)))
            self._states[key] = state
        self._last = state
        return state

    def backward_state(self, ctx, link, inputs):
        """The operator the forward of this node used for the inputs of ``link``; ``inputs``
        are the input values the backward reads (None for the others)."""
        shapes, dtypes = list(link.in_shapes), list(link.in_dtypes)
        for i, x in enumerate(inputs):          # the inputs the backward reads say it exactly
            if x is not None:
                shapes[i], dtypes[i] = x.shape, x.dtype
        if all(known(s) for s in shapes) and all(d is not None for d in dtypes):
            return self.state(ctx, shapes, dtypes)
        if self._last is None:
            raise MXNetError(f'{self.where()}: its backward runs before any forward and the '
                             'shapes of its inputs are not known; run the forward first')
        return self._last


def _spec(params):
    """The CustomParams of ``params`` (re-parsed when a copy lost them)."""
    if isinstance(params, CustomParams):
        return params
    return CustomParams(params)


# -------------------------------------------------------------------------------------------------
# Shape and dtype inference through the prop
# -------------------------------------------------------------------------------------------------

def _check_count(spec, n_given, what):
    names = spec.input_names()
    if n_given != len(names):
        raise ShapeError(f'{spec.where()} expects {len(names)} inputs ({", ".join(names)}), '
                         f'got {n_given} {what}')


def _split(spec, ret, method, kind):
    """(inputs, outputs, aux) from what ``infer_shape``/``infer_type`` returned, counts checked
    as MXNet checks them."""
    error = ShapeError if kind == 'shapes' else DTypeError
    try:
        parts = list(ret)
    except TypeError:
        raise error(f'{spec.where()}: {method} must return 2 or 3 lists, '
                    f'got {type(ret).__name__}') from None
    if len(parts) == 2:
        parts.append([])
    if len(parts) != 3:
        raise error(f'{spec.where()}: {method} must return 2 or 3 lists, got {len(parts)}')
    ins, outs, aux = (list(p) for p in parts)
    for got, expected, what in ((outs, len(spec.outputs), 'output'),
                                (ins, spec.num_args, 'input'),
                                (aux, len(spec.aux_states), 'aux state')):
        if len(got) != expected:
            raise error(f'{spec.where()}: {method}: expecting {expected} entries in returned '
                        f'{what} {kind}, got {len(got)}.')
    return ins, outs, aux


def infer_shape(attrs, *shapes, strict=False):
    """Custom's shape inference: the prop's ``infer_shape`` on the argument shapes (``[]`` for
    an unknown one). With unknown inputs a failing prop means "not known yet"."""
    spec = _spec(attrs)
    _check_count(spec, len(shapes), 'input shapes')
    args = shapes[:spec.num_args]
    complete = strict or all(known(s) for s in args)
    try:
        ret = spec.prop.infer_shape([[] if s is None else [int(d) for d in s] for s in args])
    except Exception as err:
        if not complete:
            return list(shapes), [None] * len(spec.outputs)
        raise ShapeError(f'{spec.where()}: infer_shape failed for argument shapes '
                         f'{[tuple(s) for s in args]}: {type(err).__name__}: {err}') from err
    ins, outs, aux = _split(spec, ret, 'infer_shape', 'shapes')
    return ([_shape(spec, s, complete) for s in ins + aux],
            [_shape(spec, s, complete) for s in outs])


def _shape(spec, shape, complete):
    if shape is None:
        return None
    try:
        shape = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise ShapeError(f'{spec.where()}: infer_shape returned {shape!r}, which is not a '
                         'shape') from None
    if not shape and not complete:       # computed from an unknown shape
        return None
    if any(d < 0 for d in shape):
        raise ShapeError(f'{spec.where()}: infer_shape returned the negative shape {shape}')
    return shape


def infer_type(attrs, *dtypes):
    """Custom's dtype inference: the prop's ``infer_type`` on the arguments' numpy types (None
    for an unknown one, as MXNet passes)."""
    spec = _spec(attrs)
    _check_count(spec, len(dtypes), 'input dtypes')
    args = [None if d is None else np.dtype(d).type for d in dtypes[:spec.num_args]]
    complete = all(d is not None for d in args)
    try:
        ret = spec.prop.infer_type(args)
    except Exception as err:
        if not complete:
            return list(dtypes), [None] * len(spec.outputs)
        raise DTypeError(f'{spec.where()}: infer_type failed for argument dtypes '
                         f'{[np.dtype(d).name for d in args]}: {type(err).__name__}: {err}') \
            from err
    ins, outs, aux = _split(spec, ret, 'infer_type', 'types')
    return [np_dtype(d) for d in ins + aux], [np_dtype(d) for d in outs]


# -------------------------------------------------------------------------------------------------
# Custom and _backward_Custom
# -------------------------------------------------------------------------------------------------

def _run(spec, method, *args):
    runner = _get_runner()
    try:
        getattr(runner, method)(*args)
    except Exception as err:      # the user's code: keep its traceback as the cause
        raise MXNetError(f'{spec.where()}: {type(args[0]).__name__}.{method} failed: '
                         f'{type(err).__name__}: {err}') from err


def _context(arrays):
    return context_of_array(arrays[0]) if arrays else current_context()


@register('Custom')
class Custom:
    """Apply a custom operator implemented in Python (a registered ``CustomOpProp``).

    ``Custom(*data, op_type=name, **kwargs)``: ``data`` are the prop's arguments then its
    auxiliary states; the keyword arguments reach the prop's ``__init__`` as strings.
    """
    variadic = True
    open_attrs = True
    attrs = {'op_type': Str(doc='Name of the custom operator: the name passed to '
                                '`mx.operator.register`.')}
    check = CustomParams
    train_aware = True
    infer_shape = infer_shape
    infer_type = infer_type

    def list_inputs(params):
        return _spec(params).input_names()

    def aux(params):
        return _spec(params).aux_states

    def num_outputs(params):
        return len(_spec(params).outputs)

    def output_names(params):
        return _spec(params).outputs

    def compute(xp, attrs, *inputs, is_train=False):
        spec = _spec(attrs)
        _check_count(spec, len(inputs), 'inputs')
        ctx = _context(inputs)
        state = spec.state(ctx, [x.shape for x in inputs], [x.dtype for x in inputs])
        outs = [xp.zeros(s, d) for s, d in zip(state.out_shapes, state.out_dtypes)]
        n = spec.num_args
        _run(spec, 'forward', state.op, bool(is_train), ctx, ['write'] * len(outs),
             list(inputs[:n]), outs, list(inputs[n:]))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def gradient(F, attrs, inputs, outputs, ograds, is_train=False):
        spec = _spec(attrs)
        n_args = spec.num_args
        if not n_args:
            return [None] * len(inputs)
        deps = []
        for kind, i in spec.backward_deps:
            if kind == 'out_grad':
                deps.append(F.zeros_like(outputs[i]) if ograds[i] is None else ograds[i])
            else:
                deps.append((inputs if kind == 'in_data' else outputs)[i])
        link = BackwardLink(spec, [x._known_shape() for x in inputs],
                            [x._known_dtype() for x in inputs])
        grads = F._backward_Custom(*deps, *inputs[n_args:], forward=link)
        grads = [grads] if n_args == 1 else list(grads)
        return grads + [None] * len(spec.aux_states)


class BackwardLink:
    """What a ``_backward_Custom`` node knows of the forward it differentiates: its parsed
    attributes (so the operator that ran the forward) and its input shapes and dtypes (None
    where unknown)."""
    __slots__ = ('spec', 'in_shapes', 'in_dtypes')

    def __init__(self, spec, in_shapes, in_dtypes):
        self.spec = spec
        self.in_shapes = [None if s is None else tuple(s) for s in in_shapes]
        self.in_dtypes = [None if d is None else np.dtype(d) for d in in_dtypes]

    def __repr__(self):
        return f'<backward of Custom {self.spec.op_type!r}>'


class _ForwardAttr(Attr):
    """The BackwardLink of a ``_backward_Custom`` node: a live object, so the node exists only
    in backward graphs built from a forward one, never in JSON."""
    type_name = 'the forward Custom node'

    def parse_string(self, text):
        raise ValueError('a _backward_Custom node belongs to the Custom node it differentiates '
                         'and cannot be read from JSON; load the forward graph and take its '
                         'gradient')

    def parse_value(self, value):
        if not isinstance(value, BackwardLink):
            raise ValueError(f'{value!r} is not the link to a forward Custom node')
        return value

    def format(self, value):
        return value.spec.op_type


def _link(attrs):
    return attrs['forward']


def _backward_names(params):
    spec = _link(params).spec
    names = {'out_grad': spec.outputs, 'in_data': spec.arguments, 'out_data': spec.outputs}
    return ([f'{kind}_{names[kind][i]}' for kind, i in spec.backward_deps] +
            [f'aux_{n}' for n in spec.aux_states])


def _backward_inputs(link, values):
    """The declared dependencies placed as MXNet's backward lists them (None elsewhere)."""
    spec = link.spec
    lists = {'out_grad': [None] * len(spec.outputs), 'in_data': [None] * spec.num_args,
             'out_data': [None] * len(spec.outputs)}
    for (kind, i), value in zip(spec.backward_deps, values):
        lists[kind][i] = value
    return lists['out_grad'], lists['in_data'], lists['out_data']


@register('_backward_Custom')
class _backward_Custom:
    """The gradient of ``Custom``: the operator's ``backward`` on the dependencies its prop
    declared (then the auxiliary states); the arguments' gradients."""
    variadic = True
    attrs = {'forward': _ForwardAttr(doc='The forward Custom node this node differentiates.')}
    train_aware = True

    def list_inputs(params):
        return _backward_names(params)

    def num_outputs(params):
        return _link(params).spec.num_args

    def output_names(params):
        return [f'{n}_grad' for n in _link(params).spec.arguments]

    def infer_shape(attrs, *shapes):
        link = _link(attrs)
        _, in_data, _ = _backward_inputs(link, shapes)
        outs = [d if d is not None else s for d, s in zip(in_data, link.in_shapes)]
        return list(shapes), outs

    def infer_type(attrs, *dtypes):
        link = _link(attrs)
        _, in_data, _ = _backward_inputs(link, dtypes)
        outs = [d if d is not None else s for d, s in zip(in_data, link.in_dtypes)]
        return list(dtypes), outs

    def compute(xp, attrs, *inputs, is_train=False):
        link = _link(attrs)
        spec = link.spec
        n_dep = len(spec.backward_deps)
        out_grad, in_data, out_data = _backward_inputs(link, inputs[:n_dep])
        ctx = _context(inputs)
        state = spec.backward_state(ctx, link, in_data + list(inputs[n_dep:]))
        in_grad = [xp.zeros(s, d) for s, d in zip(state.in_shapes[:spec.num_args],
                                                  state.in_dtypes[:spec.num_args])]
        _run(spec, 'backward', state.op, bool(is_train), ctx, ['write'] * len(in_grad),
             out_grad, in_data, out_data, in_grad, list(inputs[n_dep:]))
        return in_grad[0] if len(in_grad) == 1 else tuple(in_grad)

    def gradient(F, attrs, inputs, outputs, ograds, is_train=False):
        raise NotSupportedError(
            f'{_link(attrs).spec.where()}: gradients of its gradient are not supported (a '
            'CustomOp defines one backward); differentiate it once')
