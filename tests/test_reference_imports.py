"""Models exported by real MXNet 1.9.1, run through ``SymbolBlock.imports`` and Gluon's API.

For every case of tests/data/reference/manifest.json: the predict-mode outputs, the train-mode
outputs, the gradients with respect to inputs and parameters, and the BatchNorm running
statistics after one training step must equal MXNet's within the manifest's tolerances.
"""
import json
import os

import numpy as np
import pytest

from hybridlib import autograd, gluon, nd

REF = os.path.join(os.path.dirname(__file__), 'data', 'reference')
with open(os.path.join(REF, 'manifest.json')) as _f:
    CASES = {c['name']: c for c in json.load(_f)['cases']}


def _load(case):
    net = gluon.SymbolBlock.imports(os.path.join(REF, case['files']['symbol']),
                                    case['input_names'],
                                    os.path.join(REF, case['files']['params']))
    with np.load(os.path.join(REF, case['files']['io'])) as f:
        io = {k: f[k] for k in f.files}
    return net, io


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


@pytest.mark.parametrize('name', sorted(CASES))
def test_imports_reproduce_mxnet(name):
    case = CASES[name]
    net, io = _load(case)
    xs = [nd.array(io[f'input{i}']) for i in range(len(case['input_names']))]
    for i, out in enumerate(_as_list(net(*xs))):
        np.testing.assert_allclose(out.asnumpy(), io[f'out{i}'], case['rtol'], case['atol'],
                                   err_msg=f'{name}: predict output {i}')
    train = case['grad_mode'] == 'train'
    for i, spec in enumerate(case['inputs']):
        if spec['has_grad']:
            xs[i].attach_grad()
    with autograd.record(train_mode=train):
        outs = _as_list(net(*xs))
    autograd.backward(outs, [nd.array(io[f'cot{i}']) for i in range(len(outs))],
                      train_mode=train)
    params = net.collect_params()
    checked = set()
    for key, expected in io.items():
        if key.startswith('train_out'):
            actual, tol = outs[int(key[9:])], (case['rtol'], case['atol'])
        elif key.startswith('grad_input'):
            actual, tol = xs[int(key[10:])].grad, (case['grad_rtol'], case['grad_atol'])
        elif key.startswith('grad_param:'):
            actual, tol = params[key[11:]].grad(), (case['grad_rtol'], case['grad_atol'])
        elif key.startswith('aux_after:'):
            actual, tol = params[key[10:]].data(), (case['rtol'], case['atol'])
        else:
            continue
        np.testing.assert_allclose(actual.asnumpy(), expected, *tol, err_msg=f'{name}: {key}')
        checked.add(key.split(':')[0].rstrip('0123456789'))
    if train:
        assert 'train_out' in checked and 'grad_param' in checked
    without = set(case['params_without_grad'])
    assert all(p.grad_req == 'null' for n, p in params.items() if n in without
               and n in case['aux_states'])
