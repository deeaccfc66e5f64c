"""Layers against what MXNet 1.9.1 computed and exported for them (tests/data/nn_layers_a.json,
written by tests/data/make_nn_layers_a_files.py; see there for the procedure).

``check_against_mxnet(case, tmp_path)`` repeats MXNet's procedure for one case: the same
parameter values, one recorded call in training mode differentiated with the same head
gradient, then the output, the gradients, the parameters after the step and the exported
``-symbol.json`` (byte for byte) must be MXNet's.
"""
import json
import os

import numpy as np

import hybridlib as mx
from hybridlib import autograd, nd
from hybridlib.gluon import contrib, nn
from hybrid_check import data, head_like

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, '..', 'data', 'nn_layers_a.json')) as _f:
    FIXTURE = json.load(_f)


def cases(*prefixes):
    """The fixture's cases whose constructor starts with one of ``prefixes``."""
    return [c for c in FIXTURE['cases'] if c['make'].startswith(prefixes)]


def case_id(case):
    return case['make']


def concurrent(block):
    """The generator's Concurrent cases: Dense(3), Identity, Dense(2, tanh) side by side."""
    with block.name_scope():
        block.add(nn.Dense(3), contrib.nn.Identity(), nn.Dense(2, activation='tanh'))
    return block


def build(make):
    """The layer of a case's constructor code, named as in a fresh MXNet process."""
    with mx.name.NameManager():
        return eval(make, {'nn': nn, 'cnn': contrib.nn, 'concurrent': concurrent})


def param_values(shape, index):
    size = int(np.prod(shape))
    return (0.6 + 0.5 * np.cos(np.arange(size) * 0.9 + index)).reshape(shape)


def case_input(case):
    if case['shape'] == 'tokens':
        return nd.array(FIXTURE['tokens'])
    return data(*case['shape'])


def check_against_mxnet(case, tmp_path, rtol=1e-5, atol=1e-6):
    block = build(case['make'])
    block.initialize()
    x = case_input(case)
    block(x)
    params = block.collect_params()
    for i, p in enumerate(params.values()):
        p.set_data(nd.array(param_values(p.shape, i)))
    tokens = case['shape'] == 'tokens'
    if not tokens:
        x.attach_grad()
    with autograd.record():
        out = block(x)
    out.backward(head_like(out))

    def same(actual, expected, what):
        np.testing.assert_allclose(actual.asnumpy(), np.array(expected), rtol=rtol, atol=atol,
                                   err_msg=f"{case['make']}: {what}")

    assert np.dtype(out.dtype).name == case['dtype']
    same(out, case['output'], 'output')
    if not tokens:
        same(x.grad, case['input grad'], 'input gradient')
    assert sorted(case['param grads']) == sorted(k for k, p in params.items()
                                                 if p.grad_req != 'null')
    for key, expected in case['param grads'].items():
        same(params[key].grad(), expected, f'gradient of {key}')
    assert list(case['params after']) == list(params.keys())
    for key, expected in case['params after'].items():
        same(params[key].data(), expected, f'{key} after the step')
    if case['symbol'] is not None:
        block.hybridize()
        block(x)
        prefix = str(tmp_path / 'layer')
        block.export(prefix)
        with open(prefix + '-symbol.json') as f:
            assert f.read() == case['symbol'], f"{case['make']}: exported graph"
