"""Generates the Python functions of ``nd.*`` and ``sym.*`` from the registry.

Each function is a closure with a real ``inspect.Signature`` (inputs, then attributes in MXNet's
order, then the frontend's keyword arguments), so IDEs, ``help()`` and linters see it. Arguments
bind the way MXNet's generated functions bind them: positionally in that order, or by keyword.

Where a function lands follows MXNet: ``_contrib_X`` in ``contrib``, ``_random_X`` in
``random``, ``_linalg_X`` in ``linalg``, ``_image_X`` in ``image``, other names starting with
``_`` in ``_internal``, the rest at the top. ``op`` holds every name, canonical and alias; it
is the ``F`` that gradient functions receive.

``input_rule`` is the one hook into every call: ``contrib.amp`` sets it to cast inputs.
"""
import inspect
import sys
import types

from ..base import AttributeParseError
from . import registry
from .attrs import format_value

__all__ = ['Null', 'make_function', 'populate', 'exposure', 'bind_arguments',
           'apply_input_rule']

# attribute keys that MXNet stores as __key__ (given as lr_mult=0, written "__lr_mult__": "0")
HIDDEN_KEYS = ('ctx_group', 'lr_mult', 'wd_mult', 'force_mirroring', 'mirror_stage',
               'profiler_scope')

_SPACES = (('_contrib_', 'contrib'), ('_linalg_', 'linalg'), ('_random_', 'random'),
           ('_image_', 'image'), ('_sparse_', 'sparse'))
SUBMODULES = ('contrib', 'linalg', 'random', 'image', 'sparse', '_internal', 'op')


class _NullType:
    """The default of an attribute that was not given (MXNet's ``_Null``)."""

    def __repr__(self):
        return '_Null'

    def __bool__(self):
        return False


Null = _NullType()


# functions MXNet's Python layer adds to a namespace under another name
_EXTRA = {'_sample_multinomial': ('random', 'multinomial'), '_shuffle': ('random', 'shuffle')}

# functions MXNet's Python layer writes around operators with signatures of their own
# (nd.histogram): ``(namespace, name) -> make(op) -> function``, ``op`` being the frontend's
# ``op`` module; the operator families fill it
PYTHON_FUNCTIONS = {}

# names under which MXNet's Python layer wraps an operator: its Symbols are named after the
# operator (sym.zeros -> _zeros0, sym.random.uniform -> _random_uniform0, sym.eye -> _eye0)
_WRAPPERS = {'zeros', 'ones', 'arange', 'linspace', 'eye'}
# what those Python wrappers always pass (their defaults, spelled as MXNet's JSON shows them)
_WRAPPER_RECORDS = {
    '_zeros': {'dtype': 'float32'}, '_ones': {'dtype': 'float32'},
    '_arange': {'stop': None, 'step': 1.0, 'repeat': 1, 'infer_range': False,
                'dtype': 'float32'},
    '_linspace': {'endpoint': True, 'dtype': 'float32'},
    '_eye': {'M': 0, 'k': 0, 'dtype': 'float32'},
    '_random_uniform': {'low': 0, 'high': 1}, '_random_normal': {'loc': 0, 'scale': 1},
    '_random_gamma': {'alpha': 1, 'beta': 1}, '_random_poisson': {'lam': 1},
    '_random_negative_binomial': {'k': 1, 'p': 1},
    '_random_generalized_negative_binomial': {'mu': 1, 'alpha': 1},
}


def _wrapper_hint(op, name, space):
    if name in _WRAPPERS or name in _EXTRA or (space == 'random' and name == op.name):
        return op.hint
    return None


def exposure(name):
    """(namespace, python name) under which MXNet exposes the operator name ``name``."""
    for prefix, space in _SPACES:
        if name.startswith(prefix):
            return space, name[len(prefix):]
    if name.startswith('_'):
        return '_internal', name
    return '', name


def _signature(op, extras):
    P = inspect.Parameter
    params = []
    if op.variadic is not None:
        params.append(P('data', P.VAR_POSITIONAL))
        kind = P.KEYWORD_ONLY
    else:
        kind = P.POSITIONAL_OR_KEYWORD
        params.extend(P(n, kind, default=None) for n in op.inputs)
    for key, attr in op.attrs.items():
        default = Null if attr.default is registry.REQUIRED else attr.default
        params.append(P(key, kind, default=default))
    params.extend(P(n, P.KEYWORD_ONLY, default=None) for n in extras)
    if op.open_attrs:
        params.append(P('kwargs', P.VAR_KEYWORD))
    return inspect.Signature(params)


def bind_arguments(op, args, kwargs, extras, pyname=None):
    """Split a call's arguments into (inputs, params, given attributes, extras).

    ``inputs`` follows ``op.list_inputs(params)``, with None where an input was not given.
    ``given`` holds the attributes passed explicitly, which is what a Symbol records in JSON.
    """
    pyname = pyname or op.name
    extra_values = {k: kwargs.pop(k) for k in extras if k in kwargs}
    # MXNet takes hidden attributes (__layout__, ...) as keywords: a Symbol records them as
    # node attributes, an NDArray call ignores them
    hidden = {}
    for key in list(kwargs):
        if key.startswith('__') and key.endswith('__'):
            hidden[key] = str(kwargs.pop(key))
        elif key in HIDDEN_KEYS:        # lr_mult=0 is __lr_mult__, as MXNet's C++ layer has it
            hidden[f'__{key}__'] = str(kwargs.pop(key))
        elif not op.attrs and not op.open_attrs and op.variadic is None \
                and key not in op.inputs:
            # an operator without attributes takes any keyword as MXNet's do: recorded on a
            # Symbol, ignored by an NDArray call (zeros_like(x, dtype='int32') is float32)
            hidden[key] = format_value(kwargs.pop(key))
    if hidden and 'attr' in extras:
        extra_values['attr'] = dict(hidden, **(extra_values.get('attr') or {}))
    given_inputs, given = {}, {}
    if op.variadic is not None:
        inputs = list(args)
        for key, value in kwargs.items():
            if op.open_attrs and hasattr(value, '_is_hybrid_value'):
                given_inputs[key] = value      # Custom(data=x, label=y, op_type=...)
            elif key in op.attrs or op.open_attrs:
                given[key] = value
            else:
                raise _unknown_argument(op, key, pyname)
        if isinstance(op.variadic, str) and op.variadic not in given:
            given[op.variadic] = len(inputs)
    else:
        names = op.inputs + tuple(op.attrs)
        if len(args) > len(names):
            raise TypeError(f'{pyname}() takes at most {len(names)} positional arguments '
                            f'({", ".join(names)}), {len(args)} given')
        for key, value in zip(names, args):
            (given_inputs if key in op.inputs else given)[key] = value
        for key, value in kwargs.items():
            if key in given_inputs or key in given:
                raise TypeError(f'{pyname}() got multiple values for argument {key!r}')
            if key in op.inputs:
                given_inputs[key] = value
            elif key in op.attrs:
                given[key] = value
            else:
                raise _unknown_argument(op, key, pyname)
    given = {k: v for k, v in given.items() if v is not Null}
    params = op.parse_attrs(given)
    if given_inputs and op.variadic is not None:
        inputs = _place_named_inputs(op, params, inputs, given_inputs, pyname)
    elif op.variadic is None:
        names = op.list_inputs(params)
        present = [given_inputs[k] for k in op.inputs if given_inputs.get(k) is not None]
        if len(present) == len(names):
            # as MXNet's generated functions: the given inputs, in declared order, are the
            # operator's inputs (RNN(x, params, h, seq_len, mode='gru') fills sequence_length)
            inputs = present
        else:
            stray = [k for k, v in given_inputs.items() if v is not None and k not in names]
            if stray:
                raise AttributeParseError(
                    f'operator {op.name}: input(s) {", ".join(stray)} given, but with these '
                    f'attributes it takes only {", ".join(names)}')
            inputs = [given_inputs.get(n) for n in names]
    return inputs, params, given, extra_values


def _place_named_inputs(op, params, positional, named, pyname):
    """Positional inputs first, then the named ones where ``list_inputs`` puts them (None for
    an input not given: a Symbol makes it a variable)."""
    names = op.list_inputs(params)
    inputs = list(positional) + [None] * (len(names) - len(positional))
    for key, value in named.items():
        if key not in names:
            raise AttributeParseError(f'{pyname}() got an input named {key!r}; with these '
                                      f'attributes the inputs are {", ".join(names)}')
        index = names.index(key)
        if index < len(positional):
            raise TypeError(f'{pyname}() got multiple values for input {key!r}')
        inputs[index] = value
    return inputs


def _unknown_argument(op, key, pyname):
    inputs = ', '.join(op.inputs) or ('*data' if op.variadic else '(none)')
    return AttributeParseError(
        f'{pyname}() got an unexpected argument {key!r}. Operator {op.name} takes inputs '
        f'{inputs}; attributes: {op.describe_attrs()}')


# None, or ``rule(op, params, inputs, cast) -> (inputs, params)``, which may rewrite a call before
# it runs (nd.*) or is recorded (sym.*); ``cast(op_name, inputs, attrs)`` adds an operator call
# with the same frontend and returns its outputs as a list. Every generated function and the
# arithmetic of methods.py consult it, so that a block computes the same imperatively and
# hybridized: contrib.amp's casts.
input_rule = None


def apply_input_rule(op, params, inputs, run):
    """``input_rule`` on one call; ``run(op, inputs, params, given, hint)`` is the frontend's."""
    def cast(name, values, attrs):
        cast_op = registry.get(name)
        cast_params = cast_op.parse_attrs(attrs)
        out = run(cast_op, values, cast_params, attrs, cast_op.hint)
        n = cast_op.num_visible_outputs(cast_params)
        return [out] if n == 1 else [out[i] for i in range(n)]
    return input_rule(op, params, inputs, cast)


def make_function(op, pyname, invoke, extras, hint=None):
    """The frontend function of ``op`` under ``pyname``: binds, then ``invoke(op, ...)``.

    ``invoke(op, inputs, params, given, hint, **extras)`` is the backend's (NDArray or Symbol).
    The naming hint of a Symbol is the called name in lower case, as in MXNet
    (``sym.FullyConnected`` -> ``fullyconnected0``, ``sym._Plus`` -> ``_plus0``), or ``hint``
    for functions that MXNet writes in Python around an operator (``sym.zeros`` -> ``_zeros0``).
    """
    records = _WRAPPER_RECORDS.get(op.name, {}) if hint else {}
    hint = hint or pyname.lower()
    array_form = getattr(op, 'array_form', None)

    def function(*args, **kwargs):
        if array_form is not None and _has_array_attr(args, kwargs, extras):
            # MXNet's nd.random.X(loc=array, ...) calls _sample_X(mu, ...): the parameters
            # become the inputs in order, ctx is dropped (the arrays say where)
            target = registry.get(array_form)
            args, kwargs = _to_array_form(op, target, args, kwargs)
            inputs, params, given, extra = bind_arguments(target, args, kwargs, extras, pyname)
            return invoke(target, inputs, params, given, target.hint, **extra)
        inputs, params, given, extra = bind_arguments(op, args, kwargs, extras, pyname)
        if input_rule is not None:
            inputs, params = apply_input_rule(op, params, inputs, invoke)
        if records:
            given = dict(records, **given)
        return invoke(op, inputs, params, given, hint, **extra)

    function.__name__ = pyname
    function.__qualname__ = pyname
    function.__signature__ = _signature(op, extras)
    function.__doc__ = _docstring(op, pyname)
    function.op = op
    return function


def _has_array_attr(args, kwargs, extras):
    values = list(args) + [v for k, v in kwargs.items() if k not in extras]
    return any(hasattr(v, '_is_hybrid_value') for v in values)


def _to_array_form(op, target, args, kwargs):
    names = list(op.attrs)
    if len(args) > len(names):
        raise TypeError(f'{op.name}() takes at most {len(names)} positional arguments')
    rename = dict(zip(names, target.inputs))
    merged = dict(zip(names, args))
    for key, value in kwargs.items():
        if key in merged:
            raise TypeError(f'{op.name}() got multiple values for argument {key!r}')
        merged[key] = value
    merged.pop('ctx', None)
    return (), {rename.get(k, k): v for k, v in merged.items()}


def _docstring(op, pyname):
    lines = [(op.doc or f'The {op.name} operator.').strip(), '']
    if pyname != op.name:
        lines += [f'Operator ``{op.name}`` (called here as ``{pyname}``).', '']
    lines += ['Parameters', '----------']
    for n in (('*data',) if op.variadic else op.inputs):
        lines += [f'{n} : NDArray or Symbol', '    An input.']
    for key, attr in op.attrs.items():
        lines += [f'{key} : {attr.describe()}']
        if attr.doc:
            lines += [f'    {attr.doc}']
    return '\n'.join(lines)


def populate(module, invoke, extras):
    """Fill ``module`` (``hybridlib.ndarray`` or ``hybridlib.symbol``) with operator functions.

    Creates its submodules (``contrib``, ``random``, ``_internal``, ``op``, ...) and registers
    them in ``sys.modules`` so ``from hybridlib.ndarray import contrib`` works.
    """
    spaces = {'': module}
    for space in SUBMODULES:
        full = f'{module.__name__}.{space}'
        sub = sys.modules.get(full) or types.ModuleType(full, f'{space} operators')
        sys.modules[full] = sub
        setattr(module, space, sub)
        spaces[space] = sub
    for name in registry.all_names():
        op = registry.find(name)
        space, pyname = exposure(name)
        fn = make_function(op, pyname, invoke, extras, _wrapper_hint(op, name, space))
        target = spaces[space]
        if not hasattr(target, pyname):          # handwritten functions take precedence
            setattr(target, pyname, fn)
        setattr(spaces['op'], name, fn)
        if name in _EXTRA:
            space, pyname = _EXTRA[name]
            setattr(spaces[space], pyname, make_function(op, pyname, invoke, extras, op.hint))
    _add_random_wrappers(spaces['random'], spaces['op'])
    for (space, pyname), make in PYTHON_FUNCTIONS.items():
        if not hasattr(spaces[space], pyname):
            setattr(spaces[space], pyname, make(spaces['op']))
    return spaces


def _add_random_wrappers(random, ops):
    """The two ``random`` functions whose MXNet signature is not an operator's."""

    def exponential(scale=1, shape=Null, dtype=Null, ctx=None, **kwargs):
        """Draws from an exponential distribution of mean ``scale`` (MXNet passes 1/scale)."""
        if hasattr(scale, '_is_hybrid_value'):
            return ops._sample_exponential(1.0 / scale, shape=shape, dtype=dtype, **kwargs)
        if ctx is not None:
            kwargs['ctx'] = ctx
        return ops._random_exponential(lam=1.0 / scale, shape=shape, dtype=dtype, **kwargs)

    def randn(*shape, **kwargs):
        """Standard normal draws of ``shape``; ``loc``, ``scale``, ``dtype``, ``ctx`` by name."""
        loc = kwargs.pop('loc', 0)
        scale = kwargs.pop('scale', 1)
        return random.normal(loc, scale, shape, **kwargs)

    random.exponential = exponential
    random.randn = randn
