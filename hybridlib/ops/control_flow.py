"""The control flow of ``nd.contrib``/``sym.contrib``: ``foreach``, ``while_loop``, ``cond``.

They are Python functions (through ``frontend.PYTHON_FUNCTIONS``, in both frontends), not
operators. On NDArrays they run Python loops, as MXNet's NDArray versions do, and autograd
records each step. On Symbols (a traced ``hybrid_forward``) hybridlib unrolls them instead of
building MXNet's subgraph operators (``_foreach``, ``_while_loop``, ``_cond``):

* ``foreach`` slices axis 0, whose length must be known (it is while tracing);
* ``while_loop`` runs the body ``max_iterations`` times; after the condition first fails the
  loop variables keep their values and the step outputs are zeros, so the outputs are MXNet's,
  padded to ``max_iterations`` rows (MXNet leaves the padding uninitialised; the NDArray
  version pads with zeros too);
* ``cond`` builds both branches and selects with ``where`` on the broadcast predicate (a
  predicate that is not a Symbol, known while tracing, picks its branch).

Values and gradients are then those of the Python loop. The body of a masked-out step (or the
branch not taken) is still computed: where it overflows, its zero gradient times an infinite
derivative is NaN, which the Python loop never meets. An exported graph holds the unrolled
operators, not MXNet's subgraph nodes.

Nested lists of values go through ``hybridlib/nested.py``, as a HybridBlock's inputs do.
"""
from ..base import MXNetAssertionError, ShapeError
from ..nested import flatten_nested, regroup_nested
from .frontend import PYTHON_FUNCTIONS

__all__ = []


# -------------------------------------------------------------------------------------------------
# Nested lists of arrays
# -------------------------------------------------------------------------------------------------

def _is_symbol(value):
    # duck-typed: symbol.py builds on this package
    return hasattr(value, '_is_hybrid_value') and hasattr(value, 'list_outputs')


def _flatten(args, what):
    """``flatten_nested`` of control-flow values: one entry per output, no None."""
    return flatten_nested(args, lambda bad: MXNetAssertionError(
        f'{what} must be (nested) list of NDArray or Symbol, but got {bad!r} of type '
        f'{type(bad)}'), split_symbols=True)


# -------------------------------------------------------------------------------------------------
# foreach, while_loop, cond
# -------------------------------------------------------------------------------------------------

def _python_scalar(value, type_, what):
    """A Python bool or int from a one-element NDArray (a device sync) or a Python value."""
    if hasattr(value, 'asscalar'):
        value = value.asscalar()
    try:
        return type_(value)
    except (TypeError, ValueError):
        raise ValueError(f'Cannot convert {what} to python {type_.__name__}') from None


def _select(F, condition, x, y):
    """``x`` where the one-element ``condition`` is non-zero, else ``y`` (any shape)."""
    flat = F.broadcast_like(F.reshape(condition, shape=(1,)), F.reshape(x, shape=(-1,)))
    return F.where(F.reshape_like(flat, x), x, y)


def _stack_steps(F, steps):
    """One value per output: the outputs of every step stacked along a new axis 0."""
    if len(steps) == 1:
        # (stack's gradient splits into one piece, which a compiled graph mishandles)
        return [F.expand_dims(item, axis=0) for item in steps[0]]
    return [F.stack(*items, axis=0) for items in zip(*steps)]


def _rows(F, data, length):
    """The ``length`` slices of a Symbol along axis 0, each of shape ``data.shape[1:]`` (of a
    1-d Symbol: (1,), as MXNet's)."""
    if length == 1:
        # one piece as a reshape (a compiled graph mishandles a split into one piece)
        return [F.reshape(data, shape=tuple(data.shape[1:]) or (1,))]
    return F.split(data, num_outputs=length, axis=0, squeeze_axis=len(data.shape) > 1)


def _foreach(F, body, data, init_states):
    flat_data, data_fmt = _flatten(data, 'foreach input')
    flat_states, state_fmt = _flatten(init_states, 'foreach states')
    if not flat_data:
        raise ValueError('foreach: data must hold at least one array')
    symbolic = any(_is_symbol(v) for v in flat_data + flat_states)
    lengths = {d.shape[0] if d.shape else 0 for d in flat_data}
    if len(lengths) != 1:
        raise ShapeError(f'foreach: the data arrays differ in length (axis 0): '
                         f'{[tuple(d.shape) for d in flat_data]}')
    length = lengths.pop()
    if length == 0:
        raise ValueError('foreach: the data has length 0 along axis 0')
    if symbolic:
        pieces = [_rows(F, d, length) for d in flat_data]

        def slices(i):
            return [p[i] for p in pieces]
    else:
        def slices(i):
            return [d[i] for d in flat_data]
    states = regroup_nested(list(flat_states), state_fmt)[0]
    steps, out_fmt = [], None
    for i in range(length):
        out, states = body(regroup_nested(slices(i), data_fmt)[0], states)
        flat_out, out_fmt = _flatten(out, 'foreach output')
        steps.append(flat_out)
        if symbolic and _flatten(states, 'foreach loop_vars')[1] != state_fmt:
            raise MXNetAssertionError('The input and output loop_vars have different format')
    outputs = regroup_nested(_stack_steps(F, steps), out_fmt)[0] if steps[0] else []
    if symbolic:
        states = regroup_nested(_flatten(states, 'foreach loop_vars')[0], state_fmt)[0]
    return outputs, states


def _loop_step(func, loop_vars):
    """``func(*loop_vars)`` as (step outputs, new loop variables as a list)."""
    step_output, new_vars = func(*loop_vars)
    step_output = [] if step_output is None else step_output
    new_vars = [] if new_vars is None else new_vars
    if isinstance(step_output, tuple):
        step_output = list(step_output)
    if not isinstance(new_vars, (list, tuple)):
        new_vars = [new_vars]
    return step_output, list(new_vars)


def _while_loop_imperative(F, cond, func, loop_vars, max_iterations):
    """MXNet's NDArray while_loop: a Python loop, the outputs padded with zeros."""
    single = hasattr(loop_vars, '_is_hybrid_value')
    loop_vars = [loop_vars] if single else loop_vars
    steps, out_fmt = [], None
    while len(steps) < max_iterations and \
            _python_scalar(cond(*loop_vars), bool, 'Return value of cond'):
        step_output, new_vars = _loop_step(func, loop_vars)
        if len(new_vars) != len(loop_vars):
            raise ValueError('The length of loop_vars should be consistent during the loop')
        loop_vars = new_vars
        flat, out_fmt = _flatten(step_output, 'while output')
        if steps and len(flat) != len(steps[0]):
            raise ValueError('Number of elements in step_output should be the same in each '
                             'step')
        steps.append(flat)
    stacked = []
    for i_th, items in enumerate(zip(*steps), 1):
        items = [x.expand_dims(0) for x in items]
        if len(steps) < max_iterations:
            first = items[0]
            items.append(F._zeros(shape=(max_iterations - len(steps),) + first.shape[1:],
                                  ctx=first.context, dtype=first.dtype))
        try:
            stacked.append(F.concat(*items, dim=0))
        except ValueError:
            raise ValueError('\n'.join(
                [f'Shapes of {i_th}-th elements in step_outputs are inconsistent, which are:'] +
                [f'  Step {i}, shape is {x.shape}' for i, x in enumerate(items)])) from None
    if out_fmt is not None:
        stacked = regroup_nested(stacked, out_fmt)[0]
    return stacked, loop_vars[0] if single else loop_vars


def _while_loop_unrolled(F, cond, func, loop_vars, max_iterations):
    """``max_iterations`` steps; once ``cond`` fails, the variables stay and outputs are 0."""
    flat_vars, var_fmt = _flatten(loop_vars, 'while loop_vars')
    alive, steps, out_fmt = None, [], None
    for _ in range(max_iterations):
        args = regroup_nested(list(flat_vars), var_fmt)[0]
        args = [args] if var_fmt == 0 else args
        holds = cond(*args)
        if not _is_symbol(holds):
            raise ValueError('Return of cond must be a Symbol')
        # alive: every condition so far held (no gradient flows through conditions)
        alive = holds if alive is None else _select(F, alive, holds, F.zeros_like(holds))
        step_output, new_vars = _loop_step(func, args)
        flat_out, out_fmt = _flatten(step_output, 'while output')
        new_flat, _ = _flatten(new_vars, 'while loop_vars')
        if len(new_flat) != len(flat_vars):
            raise ValueError('The number of loop_vars should be consistent during the loop')
        flat_vars = [_select(F, alive, new, old) for new, old in zip(new_flat, flat_vars)]
        steps.append([_select(F, alive, o, F.zeros_like(o)) for o in flat_out])
    outputs = []
    if steps and steps[0]:
        outputs = regroup_nested(_stack_steps(F, steps), out_fmt)[0]
    return outputs, regroup_nested(flat_vars, var_fmt)[0]


def _while_loop(F, cond, func, loop_vars, max_iterations):
    if max_iterations is None:
        raise ValueError('max_iterations should be specified')
    max_iterations = _python_scalar(max_iterations, int, 'max_iteration')
    if len(loop_vars) == 0:
        raise ValueError('loop_vars should contain at least one element')
    flat_vars, _ = _flatten(loop_vars, 'while loop_vars')
    if any(_is_symbol(v) for v in flat_vars):
        return _while_loop_unrolled(F, cond, func, loop_vars, max_iterations)
    return _while_loop_imperative(F, cond, func, loop_vars, max_iterations)


def _cond(F, pred, then_func, else_func):
    if not _is_symbol(pred):
        return then_func() if _python_scalar(pred, bool, 'pred') else else_func()
    if len(pred) != 1:
        raise ValueError('pred should always be a single output')
    then_flat, then_fmt = _flatten(then_func(), 'cond outputs')
    else_flat, _ = _flatten(else_func(), 'cond outputs')
    if len(then_flat) != len(else_flat):
        raise ValueError('Number of outputs differs between then-branch and else-branch')
    selected = [_select(F, pred, a, b) for a, b in zip(then_flat, else_flat)]
    return regroup_nested(selected, then_fmt)[0]


def _frontend_is_symbol(F):
    """Whether ``F`` (a frontend's ``op`` module) makes Symbols."""
    return F.__name__.split('.')[-2] == 'symbol'


def _make_foreach(F):
    if _frontend_is_symbol(F):
        def foreach(body, data, init_states, name='foreach'):
            return _foreach(F, body, data, init_states)
    else:
        def foreach(body, data, init_states):
            return _foreach(F, body, data, init_states)
    foreach.__doc__ = _FOREACH_DOC
    return foreach


def _make_while_loop(F):
    if _frontend_is_symbol(F):
        def while_loop(cond, func, loop_vars, max_iterations=None, name='while_loop'):
            return _while_loop(F, cond, func, loop_vars, max_iterations)
    else:
        def while_loop(cond, func, loop_vars, max_iterations=None):
            return _while_loop(F, cond, func, loop_vars, max_iterations)
    while_loop.__doc__ = _WHILE_LOOP_DOC
    return while_loop


def _make_cond(F):
    if _frontend_is_symbol(F):
        def cond(pred, then_func, else_func, name='cond'):
            return _cond(F, pred, then_func, else_func)
    else:
        def cond(pred, then_func, else_func):
            return _cond(F, pred, then_func, else_func)
    cond.__doc__ = _COND_DOC
    return cond


_FOREACH_DOC = """Runs ``body`` over the slices of ``data`` along axis 0.

    ``out, states = body(data[i], states)`` for each i; returns ``(outputs, states)``: the
    step outputs stacked along a new axis 0 (a value or nested lists, as ``body`` returns
    them) and the last states. ``data`` is a value or a list of values of one length;
    ``init_states`` a value or nested lists of values. On Symbols the loop is unrolled over the
    (known) length of axis 0.
    """

_WHILE_LOOP_DOC = """Runs ``func`` while ``cond`` holds, at most ``max_iterations`` times.

    ``cond(*loop_vars)`` gives a one-element value; ``func(*loop_vars)`` gives
    ``(step_output, new_loop_vars)``. Returns ``(outputs, loop_vars)``: the step outputs stacked
    along axis 0 and padded with zeros to ``max_iterations`` rows, and the final loop
    variables. On NDArrays with no step run, the outputs are ``[]``. On Symbols the loop is
    unrolled to ``max_iterations`` steps, the steps after ``cond`` fails leaving the variables
    unchanged.
    """

_COND_DOC = """``then_func()`` if ``pred`` (a one-element value) is non-zero, else ``else_func()``.

    On Symbols both branches are built and their outputs (of one shape and dtype each) selected
    by ``pred``; the gradient reaches only the branch selected.
    """

for _name, _make in (('foreach', _make_foreach), ('while_loop', _make_while_loop),
                     ('cond', _make_cond)):
    PYTHON_FUNCTIONS[('contrib', _name)] = _make
