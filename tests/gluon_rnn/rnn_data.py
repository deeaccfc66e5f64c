"""What MXNet 1.9.1 printed, exported and computed for recurrent layers and cells
(tests/data/rnn/, written by tests/data/make_rnn_files.py; see there for the procedure), and
its construction code run with hybridlib.

Importing this module also makes ``hybrid_check`` (tests/nn) importable.
"""
import gzip
import json
import os
import sys

import numpy as np

import hybridlib as mx
from hybridlib import autograd, gluon, nd, sym
from hybridlib.gluon import rnn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'nn'))
DATA = os.path.join(HERE, '..', 'data', 'rnn')

with open(os.path.join(DATA, 'facts.json')) as _f:
    FACTS = json.load(_f)
with gzip.open(os.path.join(DATA, 'graphs.json.gz'), 'rt') as _f:
    GRAPHS = json.load(_f)
with np.load(os.path.join(DATA, 'numbers.npz')) as _f:
    _INDEX = json.loads(str(_f['index']))
    _VECTORS = {case: _f[case] for case in _INDEX}


def numbers(case):
    """``{key: float64 array}`` of one case of numbers.npz."""
    vector = _VECTORS[case]
    return {key: vector[offset:offset + int(np.prod(shape))].reshape(shape).astype(np.float64)
            for key, offset, shape in _INDEX[case]}


def scope(export_path=None):
    """The generator's builders (``stack``, ``bi_cell``, ``RecNet``, ``Unroll``, ``export``,
    ``cell_graph``, ``numeric_gradient``...) made with hybridlib, and the names its cases
    use."""
    names = dict(np=np, mx=mx, gluon=gluon, rnn=rnn, nd=nd, sym=sym,
                 VariationalDropoutCell=rnn.VariationalDropoutCell, EXPORT_PATH=export_path)
    exec(FACTS['builders'], names)    # noqa: S102 - the generator's own source
    return names


SCOPE = scope()


def build(code, names=SCOPE):
    """Evaluate a generator's expression with block names counting from 0."""
    with mx.name.NameManager():
        return eval(code, names)      # noqa: S307 - the generator's own source


def flat(out):
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in flat(o)]
    return [out]


def short(block, name):
    """A parameter's name in the fixture: less the block's prefix where it has it."""
    return name[len(block.prefix):] if name.startswith(block.prefix) else name


def load_params(block, values):
    """Set the parameters from the fixture's ``param:NAME`` entries."""
    params = {short(block, k): p for k, p in block.collect_params().items()}
    assert sorted(params) == sorted(k[6:] for k in values if k.startswith('param:'))
    for name, p in params.items():
        p.set_data(nd.array(values['param:' + name], dtype='float64'))


def check_numbers(block, values, inputs, rtol=1e-5, atol=1e-6):
    """One recorded call (predict mode) with MXNet's cotangents: outputs and gradients of the
    inputs and parameters must be MXNet's. ``inputs`` nest as the call's arguments."""
    arrays = flat(inputs)
    for x in arrays:
        x.attach_grad()
    with autograd.record(train_mode=False):
        outs = flat(block(*inputs))
    autograd.backward(outs, [nd.array(values[f'cot{i}'], dtype=o.dtype)
                             for i, o in enumerate(outs)])
    assert len(outs) == sum(k.startswith('out') for k in values)
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), values[f'out{i}'], rtol, atol, err_msg=f'out{i}')
    for i, x in enumerate(arrays):
        if f'grad_input{i}' in values:
            np.testing.assert_allclose(x.grad.asnumpy(), values[f'grad_input{i}'], rtol, atol,
                                       err_msg=f'grad_input{i}')
    for key, p in block.collect_params().items():
        name = f'grad_param:{short(block, key)}'
        if name in values:          # not where MXNet's gradients are wrong
            np.testing.assert_allclose(p.grad().asnumpy(), values[name], rtol, atol,
                                       err_msg=key)
