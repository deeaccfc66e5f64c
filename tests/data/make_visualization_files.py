"""Writes tests/data/viz-*: what MXNet 1.9.1's ``mx.viz`` prints and draws.

Run with the MXNet oracle (it needs the ``graphviz`` Python package), from the repository root::

    .oracle/bin/python tests/data/make_visualization_files.py

The networks are the reference models of tests/data/reference/ (with the input shapes of their
manifest) and the symbols that ``build_symbols`` builds; the calls are listed by ``calls``; and
``transcript`` runs one call and writes down what it printed, warned or raised, or the DOT
source it drew. These functions take the ``mx`` module (or its ``viz``): run here with
``mxnet``, and by tests/test_visualization.py with ``hybridlib`` (the same source, as a drop-in
user would run it), which compares the two transcripts character for character. Files:

* ``viz-summary.txt``: the transcripts of the ``print_summary`` calls;
* ``viz-plot.txt``: the transcripts of the ``plot_network`` calls.

Each transcript starts with a line ``>>> `` and the call, as ``call_line`` writes it.
"""
import contextlib
import io
import json
import os
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, 'reference')
FILES = {'print_summary': 'viz-summary.txt', 'plot_network': 'viz-plot.txt'}


def reference_cases():
    """``[(name, symbol file, {input name: shape})]`` of the exported reference models."""
    with open(os.path.join(REFERENCE, 'manifest.json')) as f:
        manifest = json.load(f)
    return [(case['name'], os.path.join(REFERENCE, case['files']['symbol']),
             {item['name']: tuple(item['shape']) for item in case['inputs']})
            for case in manifest['cases']]


def build_symbols(mx):
    """``{name: (symbol, {input name: shape})}`` of the hand-built networks, on ``mx``."""
    sym = mx.sym
    nets = {}
    # automatic names (leakyrelu0, elemwise_add0, ...) count from 0 in a fresh NameManager
    with mx.name.NameManager():
        data = sym.var('data')
        net = sym.FullyConnected(data, name='fc1', num_hidden=128)
        net = sym.Activation(net, name='relu1', act_type='relu')
        net = sym.FullyConnected(net, name='fc2', num_hidden=64)
        net = sym.Activation(net, name='relu2', act_type='relu')
        net = sym.FullyConnected(net, name='fc3', num_hidden=10)
        net = sym.SoftmaxOutput(net, name='softmax')
        nets['hand_mlp'] = (net, {'data': (100, 784)})

    with mx.name.NameManager():
        data = sym.var('data')
        net = sym.Convolution(data, kernel=(5, 5), num_filter=20, name='conv1')
        net = sym.Activation(net, act_type='tanh', name='tanh1')
        net = sym.Pooling(net, pool_type='max', kernel=(2, 2), stride=(2, 2), name='pool1')
        net = sym.Convolution(net, kernel=(5, 5), num_filter=50, name='conv2')
        net = sym.Activation(net, act_type='tanh', name='tanh2')
        net = sym.Pooling(net, pool_type='max', kernel=(2, 2), stride=(2, 2), name='pool2')
        net = sym.Flatten(net, name='flatten')
        net = sym.FullyConnected(net, num_hidden=500, name='fc1')
        net = sym.Activation(net, act_type='tanh', name='tanh3')
        net = sym.FullyConnected(net, num_hidden=10, name='fc2')
        net = sym.SoftmaxOutput(net, name='softmax')
        nets['hand_lenet'] = (net, {'data': (64, 1, 28, 28)})

    # BatchNorm, Concat of three branches, grouped and bias-free convolutions, LeakyReLU with
    # and without attributes, a global pool
    with mx.name.NameManager():
        data = sym.var('data')
        net = sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True,
                              name='conv0')
        net = sym.BatchNorm(net, fix_gamma=False, name='bn0')
        net = sym.LeakyReLU(net, act_type='prelu', name='prelu0')
        branch1 = sym.Convolution(net, kernel=(1, 1), num_filter=8, name='b1_conv')
        branch2 = sym.Convolution(net, kernel=(3, 3), pad=(1, 1), num_filter=8, num_group=2,
                                  name='b2_conv')
        branch2 = sym.LeakyReLU(branch2)
        branch3 = sym.Pooling(net, kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type='avg',
                              name='b3_pool')
        net = sym.Concat(branch1, branch2, branch3, dim=1, name='concat')
        net = sym.BatchNorm(net, name='bn1')
        net = sym.Pooling(net, global_pool=True, kernel=(1, 1), pool_type='avg', name='gpool')
        net = sym.Flatten(net, name='flatten')
        net = sym.FullyConnected(net, num_hidden=10, no_bias=True, name='fc')
        net = sym.softmax(net, name='prob')
        nets['hand_bn_concat'] = (net, {'data': (4, 3, 12, 12)})

    # an Embedding, a SliceChannel read twice, a Reshape, a resize to another input's size
    # (whose like= edge MXNet leaves out) and two outputs
    with mx.name.NameManager():
        tokens = sym.var('tokens')
        image = sym.var('image')
        like = sym.var('like')
        net = sym.Embedding(tokens, input_dim=50, output_dim=8, name='embed')
        parts = sym.SliceChannel(net, num_outputs=2, axis=1, name='split')
        net = sym.elemwise_add(parts[0], parts[1])
        net = sym.Reshape(net, shape=(0, -1), name='reshape')
        net = sym.FullyConnected(net, num_hidden=4, name='fc')
        big = sym.contrib.BilinearResize2D(image, like=like, mode='like', name='resize')
        big = sym.Activation(big, act_type='sigmoid', name='gate')
        nets['hand_two_heads'] = (sym.Group([net, big]),
                                  {'tokens': (2, 6), 'image': (2, 3, 4, 4),
                                   'like': (2, 3, 8, 8)})

    # two variables called x: MXNet warns that the drawing may have a cycle
    with mx.name.NameManager():
        net = sym.elemwise_add(sym.var('x'), sym.var('x'), name='twice')
        nets['hand_same_names'] = (net, {'x': (2, 3)})
    return nets


def load_networks(mx):
    """``{name: (symbol, input shapes)}``: the reference models, then the hand-built ones."""
    nets = {name: (mx.sym.load(path), shapes) for name, path, shapes in reference_cases()}
    nets.update(build_symbols(mx))
    return nets


def calls(names):
    """``[(function, network, kwargs)]``: the calls recorded for the networks ``names``.

    In kwargs, ``shape=True`` and ``dtype=True`` stand for the network's input shapes and
    float32 for every input.
    """
    out = []
    for name in names:
        if name == 'hand_same_names':
            out.append(('plot_network', name, {}))
            continue
        out.append(('print_summary', name, {'shape': True}))
        out.append(('plot_network', name, {}))
        out.append(('plot_network', name, {'shape': True, 'dtype': True}))
        if name.startswith('hand_') or name in ('lenet', 'vgg_bn_small'):
            out.append(('plot_network', name, {
                'title': 'net', 'save_format': 'png', 'hide_weights': False, 'shape': True,
                'node_attrs': {'shape': 'oval', 'fixedsize': 'false'}}))
    out += [
        ('print_summary', 'hand_lenet', {}),
        ('print_summary', 'hand_bn_concat', {}),
        ('print_summary', 'resnet18_v1_thumb', {}),
        ('print_summary', 'hand_mlp', {'shape': True, 'line_length': 80,
                                       'positions': [30, 50, 60, 80]}),
        ('print_summary', 'hand_lenet', {'shape': True, 'line_length': 100,
                                         'positions': [.3, .5, .6, 1.]}),
        ('print_summary', 'hand_bn_concat', {'shape': True, 'line_length': 40}),
        # no shapes given: MXNet cannot infer the graph's
        ('print_summary', 'hand_lenet', {'shape': {}}),
        ('plot_network', 'hand_lenet', {'shape': {}}),
        ('print_summary', None, {}),
        ('plot_network', None, {}),
    ]
    return out


def call_line(function, name, kwargs):
    """The ``>>>`` line that heads the transcript of a call."""
    args = [name or "'not a symbol'"]
    for key, value in kwargs.items():
        if key == 'dtype' and isinstance(value, dict):
            value = '{' + ', '.join(f'{k!r}: np.{v.__name__}' for k, v in value.items()) + '}'
        elif value is True and key == 'shape':
            value = 'SHAPES'
        elif value is True and key == 'dtype':
            value = 'FLOAT32'
        else:
            value = repr(value)
        args.append(f'{key}={value}')
    return f'>>> mx.viz.{function}({", ".join(args)})'


def resolve(networks, name, kwargs):
    """The symbol and the keyword arguments of a call of ``calls``."""
    symbol, shapes = networks[name] if name else ('not a symbol', {})
    kwargs = dict(kwargs)
    if kwargs.get('shape') is True:
        kwargs['shape'] = shapes
    if kwargs.get('dtype') is True:
        kwargs['dtype'] = {key: np.float32 for key in shapes}
    return symbol, kwargs


def transcript(viz, networks, function, name, kwargs):
    """What ``viz.<function>`` printed, warned and raised (or drew) for one call, as text.

    ``viz`` is ``mx.viz`` of mxnet or hybridlib.
    """
    symbol, kwargs = resolve(networks, name, kwargs)
    lines = [call_line(function, name, kwargs)]
    printed = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(printed):
        warnings.simplefilter('always')
        try:
            dot = getattr(viz, function)(symbol, **kwargs)
        except (TypeError, ValueError, IndexError, KeyError) as err:
            dot = err
    lines += printed.getvalue().splitlines()
    lines += [f'!! {w.category.__name__}: {w.message}' for w in caught
              if issubclass(w.category, RuntimeWarning)]
    if isinstance(dot, Exception):
        lines.append(f'!! raised {type(dot).__name__}: {dot}')
    elif dot is not None:
        # graphviz 0.8.4 (with MXNet) ends the source without the newline of later versions
        lines += [f'format: {dot.format}'] + dot.source.rstrip('\n').split('\n')
    return '\n'.join(lines) + '\n'


def main():
    import mxnet as mx
    networks = load_networks(mx)
    texts = {function: [] for function in FILES}
    for function, name, kwargs in calls(list(networks)):
        texts[function].append(transcript(mx.viz, networks, function, name, kwargs))
    for function, fname in FILES.items():
        with open(os.path.join(HERE, fname), 'w') as f:
            f.write(''.join(texts[function]))


if __name__ == '__main__':
    main()
