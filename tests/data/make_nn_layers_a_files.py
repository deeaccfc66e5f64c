"""Writes nn_layers_a.json: what MXNet 1.9.1 computes and exports for the layers of
hybridlib/nn/basic_layers.py (Embedding, InstanceNorm, LayerNorm, GroupNorm),
hybridlib/nn/activations.py and hybridlib/contrib/nn.py. Run it with MXNet 1.9.1's Python:

    /work/main/.oracle/bin/python tests/data/make_nn_layers_a_files.py

For each case: the layer is built in a fresh name scope, its parameters get the values of
``param_values`` below, one recorded call (training mode) on ``data(*shape)`` (or the given
token ids) is differentiated with the head gradient ``head_like``, and the file keeps the
output, the gradients of the input and of the parameters, the parameters after the step and the
exported ``-symbol.json`` (hybridized, after a forward). The tests only read the file.
"""
import json
import os
import tempfile

import mxnet as mx
import numpy as np
from mxnet import autograd, nd
from mxnet.gluon import nn
from mxnet.gluon.contrib import nn as cnn   # noqa: F401 (used by the cases' code)

HERE = os.path.dirname(os.path.abspath(__file__))
TOKENS = [[1, 3, 3], [0, 9, 1]]

# (constructor, input shape or 'tokens', export the graph?)
CASES = [
    ('nn.Embedding(10, 4)', 'tokens', True),
    ("nn.Embedding(10, 3, dtype='float64')", 'tokens', True),
    ('nn.InstanceNorm()', (2, 3, 4), True),
    ('nn.InstanceNorm(axis=2, epsilon=1e-3, center=False, scale=True)', (2, 3, 4, 2), True),
    ('nn.LayerNorm()', (2, 3, 4), True),
    ('nn.LayerNorm(axis=1, epsilon=1e-3, center=False, scale=False)', (2, 3, 4), True),
    ('nn.GroupNorm()', (2, 4, 3), True),
    ('nn.GroupNorm(num_groups=2, epsilon=1e-3)', (2, 4, 3, 2), True),
    ('nn.GroupNorm(num_groups=2, center=False, scale=False)', (2, 4, 3), True),
    ('nn.LeakyReLU(0.1)', (3, 4), True),
    ('nn.PReLU()', (2, 3, 4), True),
    ('nn.PReLU(in_channels=3)', (2, 3, 4), True),
    ('nn.ELU()', (3, 4), True),
    ('nn.ELU(0.5)', (3, 4), True),
    ('nn.SELU()', (3, 4), True),
    ('nn.GELU()', (3, 4), True),
    ('nn.Swish()', (3, 4), True),
    ('nn.Swish(2.0)', (3, 4), True),
    ('cnn.Identity()', (3, 4), True),
    ('concurrent(cnn.HybridConcurrent(axis=1))', (2, 4), True),
    ('concurrent(cnn.HybridConcurrent())', (2, 4), True),
    ('concurrent(cnn.Concurrent(axis=1))', (2, 4), False),
    ('cnn.PixelShuffle1D(2)', (1, 4, 3), True),
    ('cnn.PixelShuffle2D((2, 3))', (1, 12, 2, 3), True),
    ('cnn.PixelShuffle3D((1, 2, 3))', (1, 12, 2, 1, 2), True),
    ('cnn.SyncBatchNorm(num_devices=1)', (4, 3, 2), False),
]


def concurrent(block):
    with block.name_scope():
        block.add(nn.Dense(3), cnn.Identity(), nn.Dense(2, activation='tanh'))
    return block


def data(*shape, offset=0.0):
    size = int(np.prod(shape))
    return nd.array(np.sin(np.arange(size) * 1.3 + offset).reshape(shape))


def head_like(out):
    return nd.array(np.sin(np.arange(out.size) * 0.7 + 1.0).reshape(out.shape), dtype=out.dtype)


def param_values(shape, index):
    size = int(np.prod(shape))
    return (0.6 + 0.5 * np.cos(np.arange(size) * 0.9 + index)).reshape(shape)


def as_list(a):
    # 9 significant digits give a float32 back exactly
    return np.vectorize(lambda v: float(f'{v:.9g}'))(a.asnumpy().astype(np.float64)).tolist()


def run_case(make, shape, export):
    with mx.name.NameManager():
        block = eval(make)
    block.initialize()
    x = nd.array(TOKENS) if shape == 'tokens' else data(*shape)
    block(x)        # finish deferred initialisation
    params = block.collect_params()
    for i, p in enumerate(params.values()):
        p.set_data(nd.array(param_values(p.shape, i)))
    if shape != 'tokens':     # MXNet's Embedding refuses a data gradient
        x.attach_grad()
    with autograd.record():
        out = block(x)
    out.backward(head_like(out))
    case = {
        'make': make, 'shape': shape, 'output': as_list(out),
        'dtype': np.dtype(out.dtype).name,
        'input grad': None if shape == 'tokens' else as_list(x.grad),
        'param grads': {k: as_list(p.grad()) for k, p in params.items() if p.grad_req != 'null'},
        'params after': {k: as_list(p.data()) for k, p in params.items()},
        'symbol': None,
    }
    if export:
        block.hybridize()
        block(x)
        with tempfile.TemporaryDirectory() as tmp:
            block.export(os.path.join(tmp, 'layer'))
            with open(os.path.join(tmp, 'layer-symbol.json')) as f:
                case['symbol'] = f.read()
    return case


def main():
    cases = [run_case(*c) for c in CASES]
    with open(os.path.join(HERE, 'nn_layers_a.json'), 'w') as f:
        json.dump({'tokens': TOKENS, 'cases': cases}, f, separators=(',', ':'))
        f.write('\n')


if __name__ == '__main__':
    main()
