"""The Gluon code that made MXNet's reference exports, run on hybridlib.

For each case of tests/data/reference/manifest.json whose layers hybridlib has, the manifest's
construction code runs unchanged (``mxnet`` is hybridlib), MXNet's weights are loaded by name,
and then: the imperative and the hybridized network give MXNet's outputs, and ``export``
writes the same ``-symbol.json`` as MXNet did, byte for byte (except for the one attribute MXNet
itself makes unreproducible: a Constant's ``__init__`` names the Python id of an object).
"""
import json
import os
import re
import sys

import numpy as np
import pytest

import hybridlib
from hybridlib import autograd, nd

REF = os.path.join(os.path.dirname(__file__), 'data', 'reference')
with open(os.path.join(REF, 'manifest.json')) as _f:
    MANIFEST = json.load(_f)
CASES = {c['name']: c for c in MANIFEST['cases']}
# cases whose layers exist in hybridlib today
BUILDABLE = ['mlp', 'lenet', 'vgg_bn_small', 'two_in_two_out', 'dropout_mlp', 'anchor_const',
             'embed_text', 'mobilenet0_25', 'squeezenet1_1', 'resnet18_v1_thumb', 'lstm_tnc']


def _build(case):
    """Run the manifest's construction code, unchanged, with hybridlib standing in for mxnet
    (every ``mxnet.X`` module is hybridlib's ``hybridlib.X``)."""
    modules = {'mxnet' + key[len('hybridlib'):]: module for key, module in sys.modules.items()
               if key == 'hybridlib' or key.startswith('hybridlib.')}
    saved = {k: sys.modules.get(k) for k in modules}
    sys.modules.update(modules)
    try:
        scope = {}
        exec(MANIFEST['preamble'] + case['construction'], scope)   # noqa: S102 - the manifest's
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return scope['net']


def _load(net, case):
    net.collect_params().load(os.path.join(REF, case['files']['params']))
    return net


def _io(case):
    with np.load(os.path.join(REF, case['files']['io'])) as f:
        return {k: f[k] for k in f.files}


def _call(net, inputs, differentiate=False):
    """Call the network on the exported inputs. A bare RNN layer called without states makes
    zero begin states itself, which its export takes as inputs (data1, data2); to
    differentiate them it is given them, and returns (output, states): the head is the output."""
    if isinstance(net, hybridlib.gluon.rnn.rnn_layer._RNNLayer):
        return net(inputs[0], list(inputs[1:]))[0] if differentiate else net(inputs[0])
    return net(*inputs)


def _outputs(net, inputs):
    out = _call(net, inputs)
    return [o.asnumpy() for o in (out if isinstance(out, (list, tuple)) else [out])]


@pytest.mark.parametrize('name', BUILDABLE)
def test_construction_code_reproduces_mxnet(name, tmp_path):
    case = CASES[name]
    io = _io(case)
    inputs = [nd.array(io[f'input{i}']) for i in range(len(case['input_names']))]
    # MXNet's procedure: initialize, hybridize, a first forward (deferred shapes are traced as
    # 0), then the weights
    net = _build(case)
    net.initialize(hybridlib.init.Xavier())
    net.hybridize()
    _call(net, inputs)
    _load(net, case)
    tol = dict(rtol=case['rtol'], atol=case['atol'])
    for flags in (dict(), dict(static_alloc=True, static_shape=True)):
        net.hybridize(**flags)
        for i, out in enumerate(_outputs(net, inputs)):
            np.testing.assert_allclose(out, io[f'out{i}'], err_msg=f'hybridized {flags}', **tol)
    prefix = str(tmp_path / name)
    net.export(prefix)
    with open(prefix + '-symbol.json') as f:
        mine = f.read()
    with open(os.path.join(REF, case['files']['symbol'])) as f:
        theirs = f.read()
    constant_init = re.compile(r'"Constant_[^"]*"')
    assert constant_init.sub('"Constant"', mine) == constant_init.sub('"Constant"', theirs)
    saved = nd.load(prefix + '-0000.params')
    reference = nd.load(os.path.join(REF, case['files']['params']))
    assert list(saved) == list(reference)
    for key in saved:
        np.testing.assert_array_equal(saved[key].asnumpy(), reference[key].asnumpy())
    net.hybridize(active=False)
    for i, out in enumerate(_outputs(net, inputs)):
        np.testing.assert_allclose(out, io[f'out{i}'], err_msg=f'imperative output {i}', **tol)


@pytest.mark.parametrize('name', [n for n in BUILDABLE if CASES[n]['grad_mode'] == 'train'])
def test_training_step_reproduces_mxnet(name):
    case = CASES[name]
    io = _io(case)
    for flags in (None, dict(), dict(static_alloc=True, static_shape=True)):
        net = _load(_build(case), case)
        if flags is not None:
            net.hybridize(**flags)
        inputs = [nd.array(io[f'input{i}']) for i in range(len(case['input_names']))]
        for x, spec in zip(inputs, case['inputs']):
            if spec['has_grad']:
                x.attach_grad()
        with autograd.record():
            outs = _call(net, inputs, differentiate=True)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        autograd.backward(outs, [nd.array(io[f'cot{i}']) for i in range(len(outs))])
        params = net.collect_params()
        gtol = dict(rtol=case['grad_rtol'], atol=case['grad_atol'])
        for key, expected in io.items():
            if key.startswith('grad_param:'):
                np.testing.assert_allclose(params[key[11:]].grad().asnumpy(), expected,
                                           err_msg=f'{key} {flags}', **gtol)
            elif key.startswith('grad_input'):
                np.testing.assert_allclose(inputs[int(key[10:])].grad.asnumpy(), expected,
                                           err_msg=f'{key} {flags}', **gtol)
            elif key.startswith('aux_after:'):
                np.testing.assert_allclose(params[key[10:]].data().asnumpy(), expected,
                                           rtol=case['rtol'], atol=case['atol'],
                                           err_msg=f'{key} {flags}')


def test_load_parameters_accepts_an_exported_file():
    """MXNet 1.9.1's net.load_parameters(exported file) fails (it prefixes the names twice);
    hybridlib loads it, as a user would hope."""
    case = CASES['lenet']
    io = _io(case)
    net = _build(case)
    net.load_parameters(os.path.join(REF, case['files']['params']))
    out = _outputs(net, [nd.array(io['input0'])])[0]
    np.testing.assert_allclose(out, io['out0'], rtol=case['rtol'], atol=case['atol'])
