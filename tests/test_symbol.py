"""Symbol: composition, naming, attributes, structure, inference, JSON, evaluation, binding."""
import json
import os
import pickle

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import nd, sym
from hybridlib.base import AttributeParseError, MXNetError, ShapeError

DATA = os.path.join(os.path.dirname(__file__), 'data')


def test_automatic_names_like_mxnet():
    # names printed by MXNet 1.9.1 for the same expressions
    with mx.name.NameManager():
        x, y = sym.var('x'), sym.var('y')
        assert (x + y).name == '_plus0'
        assert (x / 2).name == '_divscalar0' and (x / 2).attr_dict()['_divscalar1'] == \
            {'scalar': '2'}
        assert (-x).name == '_mulscalar0' and (x ** 2).name == '_powerscalar0'
        assert (2 ** x).name == '_rpower_scalar0' and (3 - x).name == '_rminusscalar0'
        assert (3 / x).name == '_rdivscalar0' and (x == 1).name == '_equal_scalar0'
        assert (x == y).name == '_equal0' and (1 > x).name == '_lesser_scalar0'
        assert (x % 2).name == '_modscalar0'
        fc = sym.FullyConnected(x, num_hidden=3)
        assert fc.name == 'fullyconnected0'
        assert fc.list_arguments() == ['x', 'fullyconnected0_weight', 'fullyconnected0_bias']
        assert fc.list_outputs() == ['fullyconnected0_output']
        assert sym.relu(x).name == 'relu0' and sym.Activation(x, act_type='relu').name == \
            'activation0'
        with mx.name.Prefix('pre_'):
            assert sym.relu(x).name == 'pre_relu0'
            q = sym.FullyConnected(x, num_hidden=2, name='fwd')
            assert q.name == 'pre_fwd'
            assert q.list_arguments()[1:] == ['pre_fwd_weight', 'pre_fwd_bias']


def test_var_attributes():
    w = sym.var('w', shape=(2, 3), dtype='float16', lr_mult=2, wd_mult=0.5, init='zeros',
                __layout__='NC')
    attrs = w.list_attr()
    assert attrs['__shape__'] == '(2, 3)' and attrs['__dtype__'] == '2'
    assert attrs['__lr_mult__'] == '2' and attrs['lr_mult'] == '2'
    assert attrs['__wd_mult__'] == '0.5' and attrs['__init__'] == 'zeros'
    assert attrs['__layout__'] == 'NC' and w.attr('__shape__') == '(2, 3)'
    assert w.shape == (2, 3) and w.dtype == np.float16
    with pytest.raises(ValueError, match='double underscores'):
        sym.var('v', foo=1)
    with pytest.raises(TypeError):
        sym.var(3)


def test_attr_scope():
    with mx.AttrScope(ctx_group='dev1'):
        a = sym.var('a')
        b = sym.exp(a)
        with mx.AttrScope(mirror='x'):
            c = sym.exp(b)
    assert a.attr('ctx_group') == 'dev1' and b.attr('ctx_group') == 'dev1'
    assert c.list_attr()['mirror'] == 'x' and c.attr('ctx_group') == 'dev1'
    assert sym.exp(a).attr('ctx_group') is None


def test_operator_attr_values_are_written_as_strings():
    # MXNet 1.9.1 writes str(value) for an operator's attr (GluonCV's SSD puts an initializer
    # there); an initializer writes its JSON form instead of an object address
    x = sym.var('x')
    init = mx.init.Xavier(rnd_type='gaussian', factor_type='out', magnitude=2)
    y = sym.Convolution(x, num_filter=2, kernel=(1, 1), name='c',
                        attr={'__init__': init, '__n__': 3, '__none__': None, '__l__': [1, 2]})
    nodes = json.loads(y.tojson())['nodes']
    for node in nodes[1:]:                 # the weight and bias variables carry them too
        assert node['attrs']['__n__'] == '3' and node['attrs']['__none__'] == 'None'
        assert node['attrs']['__l__'] == '[1, 2]'
        assert node['attrs']['__init__'] == init.dumps()
    assert sym.load_json(y.tojson()).tojson() == y.tojson()
    # variables take strings only, as in MXNet
    with pytest.raises(ValueError, match="variable 'v'.*'__n__'.*string"):
        sym.var('v', attr={'__n__': 3})


def test_structure_of_multi_output_and_aux():
    x = sym.var('x')
    bn = sym.BatchNorm(x, name='bn')
    assert bn.list_arguments() == ['x', 'bn_gamma', 'bn_beta']
    assert bn.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert bn.list_outputs() == ['bn_output']
    assert bn.list_inputs() == ['x', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var']
    assert bn.get_internals().list_outputs() == [
        'x', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var', 'bn_output']
    s = sym.split(x, num_outputs=3, name='sp')
    assert s.list_outputs() == ['sp_output0', 'sp_output1', 'sp_output2'] and len(s) == 3
    assert s[1].list_outputs() == ['sp_output1'] and s['sp_output2'].name == 'sp'
    a, b, c = s
    assert c.list_outputs() == ['sp_output2']
    g = sym.Group([bn, s[0]])
    assert g.list_outputs() == ['bn_output', 'sp_output0'] and g.name is None
    assert repr(g) == '<Symbol group [bn, sp]>' and repr(bn) == '<Symbol bn>'
    internals = sym.FullyConnected(sym.exp(x, name='e'), num_hidden=2, name='fc').get_internals()
    assert internals['e_output'].name == 'e'
    assert [c.name for c in internals['fc_output'].get_children()] == ['e', 'fc_weight',
                                                                       'fc_bias']
    with pytest.raises(ValueError, match='no output named'):
        internals['nope']


def test_infer_shape_and_type():
    x = sym.var('x')
    fc = sym.FullyConnected(x, num_hidden=3, name='fc')
    assert fc.infer_shape(x=(4, 5)) == ([(4, 5), (3, 5), (3,)], [(4, 3)], [])
    assert fc.infer_shape((4, 5)) == ([(4, 5), (3, 5), (3,)], [(4, 3)], [])
    # MXNet answers [(), (), ()] here; knowing num_hidden, hybridlib fills in what it can
    assert fc.infer_shape_partial() == ([(), (3, 0), (3,)], [(0, 3)], [])
    assert fc.infer_shape_partial(x=(0, 5)) == ([(0, 5), (3, 5), (3,)], [(0, 3)], [])
    assert fc.infer_shape() == (None, None, None)
    assert fc.infer_type(x='float16') == ([np.float16] * 3, [np.float16], [])
    with pytest.raises(ShapeError, match='fc'):
        fc.infer_shape(x=(4, 5), fc_weight=(3, 6))
    with pytest.raises(MXNetError, match="'y' is not an input"):
        fc.infer_shape(y=(1,))
    z = sym.var('a') + sym.var('b')
    with pytest.raises(ShapeError, match=r'_plus\d.*\(2, 3\).*\(3, 3\)'):
        z.infer_shape(a=(2, 3), b=(3, 3))


def test_plus_broadcasts_on_symbols_as_on_ndarrays():
    a, b = sym.var('a', shape=(2, 3)), sym.var('b', shape=(3,))
    out = a * b + a
    ops = json.loads(out.tojson())['nodes']
    assert [n['op'] for n in ops if n['op'] != 'null'] == ['broadcast_mul', 'elemwise_add']
    x, y = nd.array(np.arange(6).reshape(2, 3)), nd.array([1, 2, 3])
    np.testing.assert_array_equal(out.eval(a=x, b=y)[0].asnumpy(), (x * y + x).asnumpy())
    # without shapes the broadcasting form is chosen: right for any shapes
    u = sym.var('u') + sym.var('v')
    np.testing.assert_array_equal(u.eval(u=x, v=y)[0].asnumpy(), (x + y).asnumpy())
    assert (u > 1).eval(u=x, v=y)[0].shape == (2, 3)


def test_slicing_a_single_output_symbol_is_slicing():
    x = sym.var('x', shape=(3, 4))
    data = nd.array(np.arange(12).reshape(3, 4))
    for key in [0, -1, (slice(None), slice(1, 3)), (1, slice(None, None, 2)), (None, 2)]:
        got = x[key].eval(x=data)[0]
        np.testing.assert_array_equal(got.asnumpy(), data[key].asnumpy())
    unknown = sym.var('y')
    np.testing.assert_array_equal(unknown[1:].eval(y=data)[0].asnumpy(), data[1:].asnumpy())


def test_shape_errors_at_composition_name_the_call():
    a, b = sym.var('a', shape=(2, 3)), sym.var('b', shape=(4,))
    with pytest.raises(ShapeError, match=r'broadcast_add.*\(2, 3\).*\(4,\)'):
        a + b


def test_compose_and_call():
    x = sym.var('x')
    net = sym.FullyConnected(x, num_hidden=2, name='fc')
    y = sym.exp(sym.var('data'), name='ex')
    composed = net(x=y)
    assert composed.list_arguments() == ['data', 'fc_weight', 'fc_bias']
    assert net.list_arguments() == ['x', 'fc_weight', 'fc_bias']      # the original is intact
    again = net(y, name='fc2')
    assert again.name == 'fc2'
    net2 = sym.exp(sym.var('p'))
    net2._compose(p=sym.var('q'))
    assert net2.list_arguments() == ['q']
    with pytest.raises(MXNetError, match='not inputs'):
        net(zzz=y)


def test_json_round_trip_and_files(tmp_path):
    x = sym.var('x', shape=(2, 5))
    out = sym.FullyConnected(x, num_hidden=3, name='fc')
    out = sym.Group([sym.Activation(out, act_type='tanh', name='act'), out])
    text = out.tojson()
    again = sym.fromjson(text)
    assert again.tojson() == text and again.list_outputs() == out.list_outputs()
    f = tmp_path / 'net-symbol.json'
    out.save(str(f))
    assert sym.load(str(f)).tojson() == text
    assert pickle.loads(pickle.dumps(out)).tojson() == text
    assert '"heads": [[4, 0, 0], [3, 0, 0]]' in text


def test_legacy_json_is_upgraded_as_mxnet_does():
    graph = sym.load(os.path.join(DATA, 'legacy_000800-symbol.json'))
    with open(os.path.join(DATA, 'legacy_000800-expected.json')) as f:
        expected = json.load(f)
    assert graph.list_arguments() == expected['list_arguments']
    assert graph.list_auxiliary_states() == expected['list_auxiliary_states']
    assert graph.list_outputs() == expected['list_outputs']
    args, outs, aux = graph.infer_shape(data=(2, 3, 8, 8))
    assert [list(s) for s in args] == expected['arg_shapes']
    assert [list(s) for s in outs] == expected['out_shapes']
    assert [list(s) for s in aux] == expected['aux_shapes']
    mine = json.loads(graph.tojson())['nodes']
    theirs = expected['upgraded_json']['nodes']
    assert [(n['op'], n['name'], [e[:2] for e in n['inputs']]) for n in mine] == \
        [(n['op'], n['name'], [e[:2] for e in n['inputs']]) for n in theirs]
    for m, t in zip(mine, theirs):
        if m['op'] != 'null':
            assert m.get('attrs', {}) == t.get('attrs', {})
    assert graph.attr_dict()['conv1_weight']['__lr_mult__'] == '0.5'
    assert graph.attr_dict()['data']['ctx_group'] == 'stage1'


@pytest.mark.parametrize('change, message', [
    (lambda d: d['nodes'][3].update(inputs=[[-1, 0, 0], [1, 0, 0], [2, 0, 0]]),
     r"node 3 \('fc'\): input 0: node id -1 is not that of an earlier node"),
    (lambda d: d.update(heads=[[-1, 0, 0]]), 'head 0: node id -1'),
    (lambda d: d.update(heads=[[3, 5, 0]]), "head 0: node 'fc' has 1 output.s., not an output 5"),
    (lambda d: d.update(heads=[[3, '0', 0]]), 'an entry is .node id, output index'),
    (lambda d: d.update(heads=[[3, 0.0, 0]]), 'an entry is .node id, output index'),
    (lambda d: d.update(heads=[]), 'no heads'),
    (lambda d: d.update(nodes=5), '"nodes" and "heads" must be lists'),
    (lambda d: d['nodes'].__setitem__(0, 7), r"node 0 \(None\) of the symbol JSON is malformed"),
    (lambda d: d['nodes'][3]['attrs'].update(num_hidden='1e999'),
     r"node 3 \('fc'\): operator FullyConnected: attribute 'num_hidden' expects int, got "
     r"'1e999' \(inf is not an integer\)"),
    # MXNet's declared ranges: num_hidden is a C++ int of at least 1
    (lambda d: d['nodes'][3]['attrs'].update(num_hidden='-5'),
     r"node 3 \('fc'\): .*'num_hidden' .*-5 is out of range: it must be at least 1"),
    (lambda d: d['nodes'][3]['attrs'].update(num_hidden=str(2 ** 40)),
     r"'num_hidden' .*1099511627776 is out of range: it must be at most 2147483647"),
    # attribute strings are read by a bounded parser, and shown shortened
    (lambda d: d['nodes'][3]['attrs'].update(num_hidden='(' * 100000),
     r"got '\(\(\(\(.*\.\.\. \(100000 characters\) \(nested deeper than 16 levels\)"),
    (lambda d: d['nodes'][3]['attrs'].update(num_hidden='2**40'), r"cannot read '2\*\*40'"),
    (lambda d: d['nodes'][3]['attrs'].update(num_hidden='9' * 5000), 'expects int'),
    (lambda d: d['nodes'][3]['attrs'].update(num_hidden='1' * (2 ** 20 + 1)),
     'more than an attribute may have'),
    # an operator without inputs may not ask for more than the machine's memory
    (lambda d: d['nodes'].__setitem__(1, {'op': '_zeros', 'name': 'big', 'inputs': [],
                                          'attrs': {'shape': '(1099511627776,)'}}),
     r"node 1 \('big'\): operator _zeros: attributes shape=\(1099511627776,\), "
     r"dtype=float32 ask for an output of 4.0 TiB, more than this machine's memory"),
])
def test_node_references_and_values_are_checked_at_load(change, message):
    data = json.loads(sym.FullyConnected(sym.var('x'), num_hidden=2, name='fc').tojson())
    change(data)
    with pytest.raises(MXNetError, match=message):
        sym.fromjson(json.dumps(data))


def test_deep_json_and_undecodable_files_are_clear_errors(tmp_path):
    with pytest.raises(MXNetError, match='not a symbol JSON document .RecursionError'):
        sym.fromjson('[' * 100000 + ']' * 100000)
    path = tmp_path / 'bad-symbol.json'
    path.write_bytes(b'{"nodes": "\xff\xfe"}')
    with pytest.raises(MXNetError, match='cannot read symbol file .*bad-symbol.json'):
        sym.load(str(path))


def test_bad_json_gives_clear_errors():
    good = json.loads(sym.exp(sym.var('x'), name='e').tojson())
    bad_op = json.loads(json.dumps(good))
    bad_op['nodes'][1]['op'] = 'expp'
    with pytest.raises(MXNetError, match=r"unknown operator 'expp'.*Did you mean.*exp"):
        sym.fromjson(json.dumps(bad_op))
    bad_attr = json.loads(json.dumps(good))
    bad_attr['nodes'][1] = {'op': 'clip', 'name': 'c', 'attrs': {'a_min': '0', 'a_max': '1',
                                                                  'foo': '1'},
                            'inputs': [[0, 0, 0]]}
    with pytest.raises(AttributeParseError, match="clip has no attribute"):
        sym.fromjson(json.dumps(bad_attr))
    # as MXNet's, an operator without attributes keeps any it is given
    free = json.loads(json.dumps(good))
    free['nodes'][1]['attrs'] = {'foo': '1'}
    assert sym.fromjson(json.dumps(free)).attr_dict() == {'e': {'foo': '1'}}
    with pytest.raises(MXNetError, match='not a symbol JSON'):
        sym.fromjson('{"nodes": ')
    with pytest.raises(MXNetError, match=r"node 0 \('e'\): input 0: node id 5 is not that of "
                                         'an earlier node'):
        sym.fromjson('{"nodes": [{"op": "exp", "name": "e", "inputs": [[5, 0, 0]]}], '
                     '"heads": [[0, 0, 0]]}')
    bad_value = json.loads(json.dumps(good))
    bad_value['nodes'][1] = {'op': 'clip', 'name': 'c', 'attrs': {'a_min': 'x', 'a_max': '1'},
                             'inputs': [[0, 0, 0]]}
    with pytest.raises(AttributeParseError, match="'a_min' expects float"):
        sym.fromjson(json.dumps(bad_value))


def test_eval_bind_and_backward():
    a, b = sym.var('a'), sym.var('b')
    out = sym.exp(a) * b
    av, bv = nd.array([0.0, 1.0]), nd.array([2.0, 3.0])
    np.testing.assert_allclose(out.eval(a=av, b=bv)[0].asnumpy(), np.exp([0, 1]) * [2, 3], 1e-6)
    ga, gb = nd.zeros((2,)), nd.zeros((2,))
    exe = out.bind(mx.cpu(), {'a': av, 'b': bv}, args_grad={'a': ga, 'b': gb})
    exe.forward(is_train=True)
    exe.backward(nd.array([1.0, 1.0]))
    np.testing.assert_allclose(ga.asnumpy(), np.exp([0, 1]) * [2, 3], 1e-6)
    np.testing.assert_allclose(gb.asnumpy(), np.exp([0, 1]), 1e-6)
    exe2 = out.simple_bind(mx.cpu(), a=(2,), b=(2,))
    exe2.forward(a=av, b=bv)
    assert exe2.outputs[0].shape == (2,) and set(exe2.grad_dict) == {'a', 'b'}
    with pytest.raises(MXNetError, match="no value was given for the input 'b'"):
        out.eval(a=av)


def test_gradient_graph_is_a_symbol():
    x = sym.var('x')
    y = sym.sin(x) * x
    graph = y.gradient(['x'])
    head = y.list_outputs()[0] + '_head_grad'
    assert sorted(graph.list_arguments()) == sorted(['x', head])
    value = graph.eval(x=nd.array([0.5]), **{head: nd.array([2.0])})[0]
    np.testing.assert_allclose(value.asnumpy(), 2 * (np.cos(0.5) * 0.5 + np.sin(0.5)), 1e-6)
