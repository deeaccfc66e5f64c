"""Graphs: nodes and entries, their order, shape and dtype hints, and whole-graph inference.

A graph is ``Node`` objects linked by entries ``(node, output index)``; a variable is a node
whose ``op`` is None. ``symbol.Symbol`` is a list of output entries over such nodes; the
executor, the planner and the CachedOp walk the same nodes. Each node carries shape/dtype
*hints* inferred from its inputs when it is created (what ``x.shape`` reads while tracing);
``infer_graph`` is MXNet's full forward-and-backward inference over a whole graph.
"""
import threading

from . import tape
from .base import DTypeError, MXNetError, ShapeError, flag_to_dtype
from .ops import frontend
from .ops.registry import Params, merge_shape

__all__ = ['Node', 'hidden_key', 'parse_shape', 'hint_shape', 'hint_dtype', 'hints_from',
           'topo_nodes', 'infer_graph', 'copy_graph', 'has_unknown_shape',
           'with_inferred_shape']

# attribute keys that older MXNet versions wrote without the __ __ around them
_HIDDEN_KEYS = frontend.HIDDEN_KEYS


def hidden_key(key):
    """``lr_mult`` -> ``__lr_mult__`` for the keys MXNet hides; other keys as they are."""
    return f'__{key}__' if key in _HIDDEN_KEYS else key


class Node:
    """One node of a graph: a variable (``op is None``) or an operator call."""
    __slots__ = ('op', 'name', 'params', 'attrs', 'user_attrs', 'inputs', 'shapes', 'dtypes',
                 'fixed_mode', '__weakref__')

    def __init__(self, op, name, params=None, attrs=None, user_attrs=None, inputs=()):
        self.op = op                          # OpDef, or None for a variable
        self.name = name
        self.params = params                  # parsed attributes (op nodes)
        self.attrs = attrs or {}              # op attribute strings given explicitly
        # __shape__, __init__, __lr_mult__, ... (lr_mult and the other hidden keys as MXNet
        # stores them: __lr_mult__)
        self.user_attrs = {hidden_key(k): v for k, v in (user_attrs or {}).items()}
        self.inputs = list(inputs)            # entries (node, output index)
        self.shapes = None                    # per-output shape hints
        self.dtypes = None                    # per-output dtype hints
        # the autograd mode of a train_aware node made inside a train_mode()/predict_mode()
        # scope of a traced hybrid_forward (GluonCV's GroupNorm); None: the mode of the run
        self.fixed_mode = None

    def mode(self, is_train):
        """The autograd mode it runs in when the graph runs in ``is_train``."""
        return is_train if self.fixed_mode is None else self.fixed_mode

    def __repr__(self):
        return f'<Node {self.op.name if self.op else "null"} {self.name}>'

    @property
    def num_outputs(self):
        return 1 if self.op is None else self.op.num_outputs(self.params)

    @property
    def num_visible_outputs(self):
        return 1 if self.op is None else self.op.num_visible_outputs(self.params)

    def output_name(self, index):
        if self.op is None:
            return self.name
        names = self.op.output_names(self.params)
        suffix = names[index] if index < len(names) else f'output{index}'
        return f'{self.name}_{suffix}'

    def all_attrs(self):
        """Operator and user attributes, as JSON stores them."""
        merged = dict(self.attrs)
        merged.update(self.user_attrs)
        return merged

    def listed_attrs(self):
        """What ``list_attr`` shows: MXNet reports ``__lr_mult__`` also as ``lr_mult``."""
        merged = self.all_attrs()
        for key in _HIDDEN_KEYS:
            if f'__{key}__' in merged:
                merged[key] = merged[f'__{key}__']
        return merged

    def aux_inputs(self):
        """Entries of the inputs this node mutates (BatchNorm's running statistics)."""
        if self.op is None or not self.op.aux:
            return []
        return [self.inputs[i] for i in self.op.aux_indices(self.params)]

    def infer_hints(self):
        """Fill this node's shape/dtype hints from its inputs' (errors name the node)."""
        if self.op is None:
            shape = self.user_attrs.get('__shape__')
            self.shapes = [parse_shape(shape) if shape else None]
            flag = self.user_attrs.get('__dtype__')
            self.dtypes = [flag_to_dtype(flag) if flag is not None else None]
            return
        n = self.num_outputs
        in_shapes = [hint_shape(e) for e in self.inputs]
        if self.inputs and all(s is None for s in in_shapes):
            self.shapes = [None] * n
        else:
            self.shapes = list(self.op.infer_shapes(self.params, in_shapes, self.name)[1])
        in_dtypes = [hint_dtype(e) for e in self.inputs]
        if self.inputs and all(d is None for d in in_dtypes):
            self.dtypes = [None] * n
        else:
            self.dtypes = list(self.op.infer_types(self.params, in_dtypes, self.name)[1])


def parse_shape(text):
    return tuple(int(d) for d in text.strip('()[] ').replace(',', ' ').split())


# A temporary view of shapes for entries (graph inference results) that overrides node hints,
# used while building a backward graph for known input shapes without touching shared nodes.
_hint_env = threading.local()


def _hint(entry, kind):
    """The shape (``kind='shapes'``) or dtype (``'dtypes'``) hint of an entry."""
    env = getattr(_hint_env, kind, None)
    if env is not None and entry in env:
        return env[entry]
    node, index = entry
    if getattr(node, kind) is None:
        node.infer_hints()
    values = getattr(node, kind)
    return values[index] if index < len(values) else None


def hint_shape(entry):
    return _hint(entry, 'shapes')


def hint_dtype(entry):
    return _hint(entry, 'dtypes')


class hints_from:
    """``with hints_from(shapes, dtypes):`` makes graph-inference results the shape hints."""

    def __init__(self, shapes, dtypes=None):
        self._shapes = shapes
        self._dtypes = dtypes

    def __enter__(self):
        self._saved = (getattr(_hint_env, 'shapes', None), getattr(_hint_env, 'dtypes', None))
        _hint_env.shapes, _hint_env.dtypes = self._shapes, self._dtypes
        return self

    def __exit__(self, *exc):
        _hint_env.shapes, _hint_env.dtypes = self._saved


def topo_nodes(entries):
    """Nodes reachable from ``entries``, inputs before their users, in MXNet's order."""
    return tape.topo_order([e[0] for e in entries])


def infer_graph(nodes, kind, given):
    """Shapes (or dtypes) of every entry of ``nodes``, from variable values in ``given``.

    Runs the operators' inference forwards and backwards (an operator may fill in its inputs,
    as FullyConnected fills its weight's shape) until nothing changes. Returns
    ``{entry: shape or dtype}`` with None where nothing is known.
    """
    is_shape = kind == 'shape'
    values = {}
    for n in nodes:
        if n.op is None:
            hint = _declared(n, kind)
            value = given.get(n.name)
            if is_shape:
                try:
                    values[(n, 0)] = merge_shape(hint, value, f'input {n.name!r}')
                except ShapeError as err:
                    raise ShapeError(f'{err} (the variable has attribute __shape__={hint})') \
                        from None
            else:
                values[(n, 0)] = value if value is not None else hint
    for _ in range(len(nodes) + 1):
        changed = False
        for n in nodes:
            if n.op is None:
                continue
            ins = [values.get(e) for e in n.inputs]
            if is_shape:
                known_outs = [values.get((n, i)) for i in range(n.num_outputs)]
                new_ins, outs = n.op.infer_shapes(n.params, ins, n.name, out_shapes=known_outs)
            else:
                new_ins, outs = n.op.infer_types(n.params, ins, n.name)
            updates = list(zip(n.inputs, new_ins))
            updates += [((n, i), v) for i, v in enumerate(outs)]
            for entry, value in updates:
                if value is None:
                    continue
                old = values.get(entry)
                if is_shape:
                    try:
                        new = merge_shape(old, value, f'{entry[0].name}')
                    except ShapeError as err:
                        raise ShapeError(f'Error in operator {n.name} ({n.op.name}): {err}') \
                            from None
                else:
                    if old is not None and old != value:
                        raise DTypeError(f'Error in operator {n.name} ({n.op.name}): dtype of '
                                         f'{entry[0].name} is {old.name}, inferred {value.name}')
                    new = value
                if old is None or new != old:     # np.dtype(...) == None can be True
                    values[entry] = new
                    changed = True
        if not changed:
            break
    return values


def _declared(node, kind):
    """What a variable's attributes declare (``__shape__``/``__dtype__``), not trace hints."""
    if kind == 'shape':
        text = node.user_attrs.get('__shape__')
        return parse_shape(text) if text else None
    flag = node.user_attrs.get('__dtype__')
    return flag_to_dtype(flag) if flag is not None else None


def copy_graph(outputs, replace):
    """New nodes for the graph behind ``outputs``; variables named in ``replace`` become those
    entries."""
    nodes = topo_nodes(outputs)
    mapping = {}
    for n in nodes:
        if n.op is None and n.name in replace:
            mapping[id(n)] = replace[n.name]
            continue
        copy = Node(n.op, n.name, n.params, dict(n.attrs), dict(n.user_attrs),
                    [_remap(e, mapping) for e in n.inputs])
        copy.fixed_mode = n.fixed_mode
        mapping[id(n)] = (copy, None)
    return [_remap(e, mapping) for e in outputs]


def _remap(entry, mapping):
    node, index = mapping[id(entry[0])]
    return (node, entry[1]) if index is None else (node, index)


def has_unknown_shape(node):
    """Whether ``node`` makes an array (no inputs) of a ``shape`` with unknown (0) dimensions,
    as the zero begin states of MXNet's legacy RNN cells do: ``sym.zeros(shape=(0, H))``."""
    shape = node.params.get('shape') if node.op is not None and not node.inputs else None
    return bool(shape) and not all(shape)


def with_inferred_shape(node, shape):
    """``node``'s attributes with ``shape`` (its output shape inferred over the whole graph)
    in place of its unknown dimensions, as MXNet infers every shape before running."""
    if shape is None or 0 in shape:
        raise MXNetError(f'node {node.name!r} ({node.op.name}): its shape '
                         f'{node.params["shape"]} has unknown dimensions that the graph does not '
                         'determine; give the shape in full')
    return Params(node.params, shape=tuple(shape))
