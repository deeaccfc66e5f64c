"""``mx.viz``: a Symbol's layers as a printed table or a graphviz drawing (``mxnet.visualization``).

``print_summary`` prints MXNet 1.9.1's table of layers, output shapes, parameter counts and
previous layers; ``plot_network`` returns a ``graphviz.Digraph`` of the graph. Both read the
graph through ``Symbol.tojson()``, the node list that MXNet's functions read, and follow MXNet's
rules to the letter, quirks included, so the printed text and the DOT source are MXNet's:

* only Convolution, FullyConnected, BatchNorm (with shapes) and Embedding count parameters;
  a layer's input width is the sum of the channel dims of the inputs that are operator outputs;
* of the variables only the first node is a row, with its shape only when its index is one of
  the three numbers of the first head entry (``[node, output, version]``), as MXNet tests it;
  by the same test a variable shows in the "Previous Layer" column and adds to the width;
* with shapes, a layer that reads a 1-d output (batch dim only) fails with IndexError, as in
  MXNet: the reshaped weights that an RNN layer packs are such outputs;
* the shape on an edge from an operator with ``num_outputs`` is that of its last output.

``graphviz`` (the Python package) is optional: ``pip install "hybridlib[viz]"``. Rendering the
Digraph to a file needs Graphviz's ``dot`` program as well.
"""
import copy
import json
import re
import warnings

from .symbol import Symbol

__all__ = ['print_summary', 'plot_network']

# the fill colours of plot_network, by kind of node (MXNet's colour map)
_COLORS = ('#8dd3c7', '#fb8072', '#ffffb3', '#bebada', '#80b1d3', '#fdb462', '#b3de69',
           '#fccde5')
# variables that plot_network treats as weights
_WEIGHT_SUFFIXES = ('_weight', '_bias', '_beta', '_gamma', '_moving_var', '_moving_mean',
                    '_running_var', '_running_mean')


def _str2tuple(string):
    """The digits runs of an attribute string: ``'(3, 3)'`` -> ``['3', '3']``."""
    return re.findall(r"\d+", string)


def _shape_dict(internals, shape):
    """``{output name: shape}`` for every internal output, or ValueError if ``shape`` is short."""
    _, out_shapes, _ = internals.infer_shape(**shape)
    if out_shapes is None:
        raise ValueError("Input shape is incomplete")
    return dict(zip(internals.list_outputs(), out_shapes))


def _print_row(fields, positions):
    """Print ``fields`` left-aligned, each cut or padded to end at its position."""
    line = ''
    for i, field in enumerate(fields):
        line += str(field)
        line = line[:positions[i]]
        line += ' ' * (positions[i] - len(line))
    print(line)


def _layer_params(node, pre_filter, shape_dict):
    """The parameter count MXNet prints for ``node``, whose inputs have ``pre_filter`` channels.

    Only the layers MXNet knows are counted; BatchNorm needs the shapes (``shape_dict``).
    """
    op, attrs = node['op'], node.get('attrs', {})
    if op == 'Convolution':
        num_filter = int(attrs['num_filter'])
        count = pre_filter * num_filter // int(attrs.get('num_group', '1'))
        for k in _str2tuple(attrs['kernel']):
            count *= int(k)
        if attrs.get('no_bias') != 'True':
            count += num_filter
        return count
    if op == 'FullyConnected':
        inputs = pre_filter if attrs.get('no_bias') == 'True' else pre_filter + 1
        return inputs * int(attrs['num_hidden'])
    if op == 'BatchNorm':
        if shape_dict is None:
            return 0
        return int(shape_dict[node['name'] + '_output'][1]) * 2    # gamma and beta
    if op == 'Embedding':
        return int(attrs['input_dim']) * int(attrs['output_dim'])
    return 0


def print_summary(symbol, shape=None, line_length=120, positions=[.44, .64, .74, 1.]):
    """Print a table of the layers of ``symbol``: name (op), output shape, parameters, inputs.

    The output is MXNet 1.9.1's, character for character. The positions default is a list, as
    in MXNet's signature; it is never modified.

    Parameters
    ----------
    symbol : Symbol
        The network to describe.
    shape : dict of str to tuple, optional
        The shapes of the inputs, e.g. ``{'data': (1, 3, 224, 224)}``. Without them the
        output shapes are left empty and BatchNorm counts no parameters. The batch dim is not
        printed.
    line_length : int
        The width of the table in characters.
    positions : list of float or int
        Where each of the four columns ends: fractions of ``line_length`` when the last one is
        at most 1, else character positions.

    Raises
    ------
    TypeError
        If ``symbol`` is not a Symbol.
    ValueError
        If ``shape`` does not determine every shape in the graph.
    """
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be Symbol")
    shape_dict = None
    if shape is not None:
        shape_dict = _shape_dict(symbol.get_internals(), shape)
    conf = json.loads(symbol.tojson())
    nodes = conf['nodes']
    # MXNet tests membership in the first head entry [node, output, version] (not all heads)
    heads = set(conf['heads'][0])
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    def output_shape(node):
        if shape_dict is None:
            return None
        key = node['name'] + '_output' if node['op'] != 'null' else node['name']
        return shape_dict.get(key)

    print('_' * line_length)
    _print_row(['Layer (type)', 'Output Shape', 'Param #', 'Previous Layer'], positions)
    print('=' * line_length)
    total_params = 0
    for i, node in enumerate(nodes):
        op = node['op']
        if op == 'null' and i > 0:
            continue                      # of the variables, only the first node is a row
        previous = []
        pre_filter = 0
        for entry in (node['inputs'] if op != 'null' else []):
            source = nodes[entry[0]]
            if source['op'] != 'null' or entry[0] in heads:
                previous.append(source['name'])
                source_shape = output_shape(source)
                if source_shape is not None:
                    pre_filter += int(source_shape[1:][0])
        params = _layer_params(node, pre_filter, shape_dict)
        out_shape = output_shape(node) if op != 'null' or i in heads else None
        out_shape = out_shape[1:] if out_shape is not None else []
        _print_row([node['name'] + '(' + op + ')', 'x'.join(str(x) for x in out_shape), params,
                    previous[0] if previous else ''], positions)
        for name in previous[1:]:
            _print_row(['', '', '', name], positions)
        total_params += params
        print(('=' if i == len(nodes) - 1 else '_') * line_length)
    print("Total params: {params}".format(params=total_params))
    print('_' * line_length)


def _node_look(node, node_attr):
    """The label and graphviz attributes of a drawn node (MXNet's labels and colours)."""
    op, attrs = node['op'], node.get('attrs', {})
    attr = copy.deepcopy(node_attr)
    label = node['name']
    if op == 'null':
        attr['shape'] = 'oval'
        attr['fillcolor'] = _COLORS[0]
    elif op == 'Convolution':
        label = "Convolution\n{kernel}/{stride}, {filter}".format(
            kernel='x'.join(_str2tuple(attrs['kernel'])),
            stride='x'.join(_str2tuple(attrs['stride'])) if 'stride' in attrs else '1',
            filter=attrs['num_filter'])
        attr['fillcolor'] = _COLORS[1]
    elif op == 'FullyConnected':
        label = "FullyConnected\n{hidden}".format(hidden=attrs['num_hidden'])
        attr['fillcolor'] = _COLORS[1]
    elif op == 'BatchNorm':
        attr['fillcolor'] = _COLORS[3]
    elif op in ('Activation', 'LeakyReLU'):
        # LeakyReLU's act_type defaults to leaky, which MXNet spells "Leaky" here
        act_type = attrs['act_type'] if op == 'Activation' else attrs.get('act_type', 'Leaky')
        label = '{op}\n{activation}'.format(op=op, activation=act_type)
        attr['fillcolor'] = _COLORS[2]
    elif op == 'Pooling':
        label = "Pooling\n{pooltype}, {kernel}/{stride}".format(
            pooltype=attrs['pool_type'],
            kernel='x'.join(_str2tuple(attrs['kernel'])) if 'kernel' in attrs else '[]',
            stride='x'.join(_str2tuple(attrs['stride'])) if 'stride' in attrs else '1')
        attr['fillcolor'] = _COLORS[4]
    elif op in ('Concat', 'Flatten', 'Reshape'):
        attr['fillcolor'] = _COLORS[5]
    elif op == 'Softmax':
        attr['fillcolor'] = _COLORS[6]
    else:
        attr['fillcolor'] = _COLORS[7]
        if op == 'Custom':
            label = attrs['op_type']
    return label, attr


def _edge_key(node):
    """The internal output an edge from ``node`` is labelled with: its last, for num_outputs."""
    if node['op'] == 'null':
        return node['name']
    key = node['name'] + '_output'
    if 'num_outputs' in node.get('attrs', {}):
        key += str(int(node['attrs']['num_outputs']) - 1)
    return key


def plot_network(symbol, title="plot", save_format='pdf', shape=None, dtype=None, node_attrs={},
                 hide_weights=True):
    """A graphviz drawing of the graph that computes ``symbol`` (as MXNet 1.9.1 draws it).

    Each operator is a box labelled with its op (and kernel, stride, filters, hidden units or
    activation for the common layers), each input variable an oval; edges point from a node back
    to its inputs, labelled with the shape (batch dim left out) and dtype when those are asked
    for. ``node_attrs`` defaults to a dict, as in MXNet's signature; it is never modified.

    Parameters
    ----------
    symbol : Symbol
        The network to draw.
    title : str
        The name of the digraph (and of the file it renders to).
    save_format : str
        The format the digraph renders to (``'pdf'``, ``'png'``, ``'svg'``, ...).
    shape : dict of str to tuple, optional
        The shapes of the inputs; with them each edge shows the shape it carries.
    dtype : dict of str to numpy type, optional
        The dtypes of the inputs; with them each edge shows its dtype, e.g. ``(float32)``.
    node_attrs : dict of str to str, optional
        Graphviz attributes for every node, over the defaults ``shape='box'``,
        ``fixedsize='true'``, ``width='1.3'``, ``height='0.8034'``, ``style='filled'``.
    hide_weights : bool
        Leave out the variables named like weights (``*_weight``, ``*_bias``, ``*_gamma``,
        ``*_beta``, running or moving means and variances) and their edges. When False their
        edges are drawn and graphviz shows them as plain nodes.

    Returns
    -------
    graphviz.Digraph
        The drawing; ``.source`` is its DOT text, ``.render()`` or ``.view()`` need Graphviz.

    Raises
    ------
    ImportError
        If the graphviz package is not installed.
    TypeError
        If ``symbol`` is not a Symbol.
    ValueError
        If ``shape`` or ``dtype`` do not determine every shape or dtype in the graph.
    """
    try:
        from graphviz import Digraph      # optional: the viz extra
    except ImportError:
        raise ImportError('Draw network requires graphviz library: '
                          'pip install "hybridlib[viz]" (or pip install graphviz)') from None
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be a Symbol")
    internals = symbol.get_internals()
    shape_dict = _shape_dict(internals, shape) if shape is not None else None
    type_dict = None
    if dtype is not None:
        _, out_types, _ = internals.infer_type(**dtype)
        if out_types is None:
            raise ValueError("Input type is incomplete")
        type_dict = dict(zip(internals.list_outputs(), out_types))
    nodes = json.loads(symbol.tojson())['nodes']
    names = [node['name'] for node in nodes]
    if len(names) != len(set(names)):
        seen = set()
        repeated = set(name for name in names if name in seen or seen.add(name))
        warnings.warn("There are multiple variables with the same name in your graph, "
                      "this may result in cyclic graph. Repeated names: " + ','.join(repeated),
                      RuntimeWarning)
    node_attr = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
                 "style": "filled"}
    node_attr.update(node_attrs)
    dot = Digraph(name=title, format=save_format)

    hidden_nodes = set()
    for node in nodes:
        if node['op'] == 'null' and node['name'].endswith(_WEIGHT_SUFFIXES):
            # not drawn either way; shown weights appear as graphviz's default nodes via edges
            if hide_weights:
                hidden_nodes.add(node['name'])
            continue
        label, attr = _node_look(node, node_attr)
        dot.node(name=node['name'], label=label, **attr)

    for node in nodes:
        if node['op'] == 'null':
            continue
        inputs = node['inputs']
        if node['op'] == '_contrib_BilinearResize2D':
            inputs = inputs[:1]           # MXNet leaves out its like= input
        for entry in inputs:
            source = nodes[entry[0]]
            if source['name'] in hidden_nodes:
                continue
            attr = {"dir": "back", 'arrowtail': 'open', 'label': ''}
            key = _edge_key(source)
            if shape_dict is not None:
                attr['label'] = 'x'.join(str(x) for x in shape_dict[key][1:])
            if type_dict is not None:
                attr['label'] += '(' + type_dict[key].__name__ + ')'
            dot.edge(tail_name=node['name'], head_name=source['name'], **attr)
    return dot
