"""Graphs and parameters exported by real MXNet 1.9.1 (tests/data/reference, see manifest.json).

Every ``-symbol.json`` must load, write itself back byte for byte, and infer from the input
shapes exactly the parameter shapes stored in its ``.params`` file. Where the inputs, outputs
and gradients MXNet computed are stored (``-io.npz``), the graph evaluated by the interpreter
and its backward graph must reproduce them.
"""
import json
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import nd, sym

REF = os.path.join(os.path.dirname(__file__), 'data', 'reference')
with open(os.path.join(REF, 'manifest.json')) as _f:
    MANIFEST = json.load(_f)
CASES = {c['name']: c for c in MANIFEST['cases']}


def _path(case, kind):
    return os.path.join(REF, case['files'][kind])


def _params(case):
    loaded = nd.load(_path(case, 'params'))
    args = {k[4:]: v for k, v in loaded.items() if k.startswith('arg:')}
    aux = {k[4:]: v for k, v in loaded.items() if k.startswith('aux:')}
    assert len(args) + len(aux) == len(loaded)
    return args, aux


@pytest.mark.parametrize('name', sorted(CASES))
def test_symbol_json_round_trips_byte_for_byte(name):
    case = CASES[name]
    with open(_path(case, 'symbol')) as f:
        text = f.read()
    graph = sym.load(_path(case, 'symbol'))
    assert graph.tojson() == text
    assert sym.fromjson(graph.tojson()).tojson() == text


@pytest.mark.parametrize('name', sorted(CASES))
def test_infer_shape_gives_the_parameter_shapes(name):
    case = CASES[name]
    graph = sym.load(_path(case, 'symbol'))
    args, aux = _params(case)
    shapes = {i['name']: tuple(i['shape']) for i in case['inputs']}
    arg_shapes, out_shapes, aux_shapes = graph.infer_shape(**shapes)
    assert arg_shapes is not None, graph.infer_shape_partial(**shapes)
    assert graph.list_auxiliary_states() == list(aux)
    for arg, shape in zip(graph.list_arguments(), arg_shapes):
        expected = shapes[arg] if arg in shapes else args[arg].shape
        assert shape == expected, f'{name}: {arg} inferred {shape}, the file has {expected}'
    for arg, shape in zip(graph.list_auxiliary_states(), aux_shapes):
        assert shape == aux[arg].shape
    assert [list(s) for s in out_shapes] == case['output_shapes']
    assert set(graph.list_arguments()) == set(args) | set(shapes)
    _, out_types, _ = graph.infer_type(**{k: 'float32' for k in shapes})
    assert all(t == np.float32 for t in out_types)


def _io(case):
    path = _path(case, 'io')
    if not os.path.exists(path):
        pytest.skip(f'{os.path.basename(path)} is not copied into tests/data (large case)')
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize('name', sorted(CASES))
def test_graph_reproduces_mxnet_outputs_and_gradients(name):
    case = CASES[name]
    io = _io(case)
    graph = sym.load(_path(case, 'symbol'))
    args, aux = _params(case)
    inputs = {n: nd.array(io[f'input{i}']) for i, n in enumerate(case['input_names'])}
    # predict mode
    outs = graph.eval(**inputs, **args, **aux)
    for i, out in enumerate(outs):
        np.testing.assert_allclose(out.asnumpy(), io[f'out{i}'], case['rtol'], case['atol'],
                                   err_msg=f'{name}: output {i}')
    # a training-mode (or predict-mode) forward and backward with MXNet's cotangents
    train = case['grad_mode'] == 'train'
    arg_arrays = dict(inputs, **{k: v.copy() for k, v in args.items()})
    aux_arrays = {k: v.copy() for k, v in aux.items()}
    grads = {k: nd.zeros(v.shape) for k, v in arg_arrays.items()}
    reqs = {k: 'null' if k in case['params_without_grad'] else 'write' for k in arg_arrays}
    for i, spec in enumerate(case['inputs']):
        if not spec['has_grad']:
            reqs[spec['name']] = 'null'
    exe = graph.bind(mx.cpu(), arg_arrays, args_grad=grads, grad_req=reqs, aux_states=aux_arrays)
    outs = exe.forward(is_train=train)
    exe.backward([nd.array(io[f'cot{i}']) for i in range(len(outs))], is_train=train)
    rtol, atol = case['rtol'], case['atol']
    grtol, gatol = case['grad_rtol'], case['grad_atol']
    for key, expected in io.items():
        if key.startswith('train_out'):
            actual = outs[int(key[9:])]
            np.testing.assert_allclose(actual.asnumpy(), expected, rtol, atol, err_msg=key)
        elif key.startswith('grad_input'):
            actual = grads[case['input_names'][int(key[10:])]]
            np.testing.assert_allclose(actual.asnumpy(), expected, grtol, gatol, err_msg=key)
        elif key.startswith('grad_param:'):
            actual = grads[key[11:]]
            np.testing.assert_allclose(actual.asnumpy(), expected, grtol, gatol, err_msg=key)
        elif key.startswith('aux_after:'):
            actual = aux_arrays[key[10:]]
            np.testing.assert_allclose(actual.asnumpy(), expected, rtol, atol, err_msg=key)
