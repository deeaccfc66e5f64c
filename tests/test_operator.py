"""``mx.operator``: CustomOp/CustomOpProp through every path, against MXNet 1.9.1.

The operators and the block are defined by tests/data/make_custom_files.py (the same source
ran on MXNet to write tests/data/custom-*); here they run on hybridlib: imperatively, under
autograd, in a Symbol executor, in a hybridized block (with and without ``static_alloc``),
through hybridlib's export and through MXNet's. Local operators check what MXNet's
documentation promises a CustomOp (NDArrays in, one operator for a node's forward and backward,
the declared backward dependencies) and the errors.
"""
import importlib.util
import json
import logging
import os
import warnings

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd, sym
from hybridlib.base import MXNetError, NotSupportedError, ShapeError

DATA = os.path.join(os.path.dirname(__file__), 'data')
_spec = importlib.util.spec_from_file_location(
    'make_custom_files', os.path.join(DATA, 'make_custom_files.py'))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)
GEN.define_operators(mx)

with np.load(os.path.join(DATA, 'custom-values.npz')) as _f:
    REF = {k: _f[k] for k in _f.files}
TOL = dict(rtol=1e-5, atol=1e-6)


def _in(name):
    return nd.array(REF[f'input_{name}'])


def _close(actual, key):
    np.testing.assert_allclose(actual.asnumpy(), REF[key], err_msg=key, **TOL)


# -------------------------------------------------------------------------------------------------
# The recorded operators, every way MXNet ran them
# -------------------------------------------------------------------------------------------------

def test_imperative_call_matches_mxnet():
    count = _in('count')
    output, norm = nd.Custom(_in('data'), _in('weight'), count, op_type='test_scaled_softmax',
                             **GEN.SOFTMAX_KWARGS)
    _close(output, 'imperative_output')
    _close(norm, 'imperative_norm')
    _close(count, 'imperative_count')         # the auxiliary state is updated in place


def test_autograd_matches_mxnet():
    data, weight = _in('data'), _in('weight')
    data.attach_grad()
    weight.attach_grad()
    with autograd.record():
        output, norm = nd.Custom(data, weight, _in('count'), op_type='test_scaled_softmax',
                                 **GEN.SOFTMAX_KWARGS)
    autograd.backward([output, norm], [_in('head_output'), _in('head_norm')])
    _close(data.grad, 'autograd_data_grad')
    _close(weight.grad, 'autograd_weight_grad')


def test_autograd_grad_and_add_requests():
    data, weight = _in('data'), _in('weight')
    weight.attach_grad(grad_req='add')
    for _ in range(2):
        with autograd.record():
            output, norm = nd.Custom(data, weight, _in('count'), op_type='test_scaled_softmax',
                                     **GEN.SOFTMAX_KWARGS)
        autograd.backward([output, norm], [_in('head_output'), _in('head_norm')])
    np.testing.assert_allclose(weight.grad.asnumpy(), 2 * REF['autograd_weight_grad'], **TOL)
    data.attach_grad()
    with autograd.record():
        output, norm = nd.Custom(data, weight, _in('count'), op_type='test_scaled_softmax',
                                 **GEN.SOFTMAX_KWARGS)
    g = autograd.grad([output, norm], [data], head_grads=[_in('head_output'), _in('head_norm')])
    _close(g[0], 'autograd_data_grad')


def test_executor_matches_mxnet():
    s = sym.Custom(sym.var('data'), sym.var('weight'), op_type='test_scaled_softmax',
                   name='softmax', **GEN.SOFTMAX_KWARGS)
    assert s.list_arguments() == ['data', 'weight']
    assert s.list_auxiliary_states() == ['softmax_count']
    assert s.list_outputs() == ['softmax_output', 'softmax_norm']
    assert s.infer_shape(data=(3, 4)) == ([(3, 4), (4,)], [(3, 4), (3,)], [(1,)])
    exe = s.simple_bind(mx.cpu(), data=(3, 4))
    exe.arg_dict['data'][:] = REF['input_data']
    exe.arg_dict['weight'][:] = REF['input_weight']
    for _ in range(2):
        exe.forward(is_train=True)
    exe.backward([_in('head_output'), _in('head_norm')])
    _close(exe.outputs[0], 'executor_output')
    _close(exe.outputs[1], 'executor_norm')
    _close(exe.aux_dict['softmax_count'], 'executor_count')
    _close(exe.grad_dict['data'], 'executor_data_grad')
    _close(exe.grad_dict['weight'], 'executor_weight_grad')


def test_backward_reading_the_output_gradient_only_matches_mxnet():
    s = sym.Custom(sym.var('x'), op_type='test_smooth', epsilon=0.3, name='smooth')
    exe = s.simple_bind(mx.cpu(), x=(3, 4))
    exe.arg_dict['x'][:] = REF['input_data']
    exe.forward(is_train=True)
    exe.backward([_in('head_output')])
    _close(exe.outputs[0], 'smooth_output')
    _close(exe.grad_dict['x'], 'smooth_x_grad')


def test_loss_layer_ignores_the_head_gradient_as_mxnet():
    x, label = _in('loss_data'), _in('loss_label')
    x.attach_grad()
    label.attach_grad()
    with autograd.record():
        loss = nd.Custom(x, label, op_type='test_square_loss', grad_scale=0.25)
    loss.backward(_in('loss_head'))
    _close(loss, 'loss_output')
    _close(x.grad, 'loss_data_grad')
    _close(label.grad, 'loss_label_grad')


@pytest.mark.parametrize('mode', ['imperative', 'hybrid', 'static'])
def test_block_matches_mxnet(mode):
    net = GEN.define_net(mx)
    if mode != 'imperative':
        net.hybridize(static_alloc=mode == 'static', static_shape=mode == 'static')
    x, label = _in('net_x'), _in('net_label')
    x.attach_grad()
    for _ in range(2):          # the second call runs the compiled plan (its buffers) again
        with autograd.record():
            loss = net(x, label)
        loss.backward(_in('net_head'))
        _close(loss, f'net_{mode}_output')
        _close(x.grad, f'net_{mode}_x_grad')
        _close(net.dense.weight.grad(), f'net_{mode}_weight_grad')
        _close(net.dense.bias.grad(), f'net_{mode}_bias_grad')
    if mode != 'imperative':     # each Custom node is a call in the generated source
        code = net.cached_op.code
        assert '  # Custom\n' in code and '  # _backward_Custom\n' in code, code
    with autograd.predict_mode():
        _close(net(x, label), f'net_{mode}_output')


def test_export_writes_mxnets_json(tmp_path):
    net = GEN.define_net(mx)
    net.hybridize()
    net(_in('net_x'), _in('net_label'))
    prefix = str(tmp_path / 'custom-net')
    net.export(prefix)
    with open(prefix + '-symbol.json') as f, \
            open(os.path.join(DATA, 'custom-net-symbol.json')) as g:
        assert f.read() == g.read()
    mine, theirs = nd.load(prefix + '-0000.params'), \
        nd.load(os.path.join(DATA, 'custom-net-0000.params'))
    assert sorted(mine) == sorted(theirs)
    for key in mine:
        np.testing.assert_array_equal(mine[key].asnumpy(), theirs[key].asnumpy())


@pytest.mark.parametrize('source', ['mxnet', 'hybridlib'])
@pytest.mark.parametrize('hybridize', [False, True])
def test_imported_graph_runs_as_mxnet(source, hybridize, tmp_path):
    prefix = os.path.join(DATA, 'custom-net')
    if source == 'hybridlib':
        net = GEN.define_net(mx)
        net.hybridize()
        net(_in('net_x'), _in('net_label'))
        prefix = str(tmp_path / 'custom-net')
        net.export(prefix)
    net = gluon.SymbolBlock.imports(prefix + '-symbol.json', ['data0', 'data1'],
                                    prefix + '-0000.params')
    if hybridize:
        net.hybridize(static_alloc=True)
    x, label = _in('net_x'), _in('net_label')
    x.attach_grad()
    with autograd.record():
        loss = net(x, label)
    loss.backward(_in('net_head'))
    params = net.collect_params()
    _close(loss, 'net_imperative_output')
    _close(x.grad, 'net_imperative_x_grad')
    _close(params['customnet_dense0_weight'].grad(), 'net_imperative_weight_grad')
    _close(params['customnet_dense0_bias'].grad(), 'net_imperative_bias_grad')


def test_json_round_trip_keeps_the_string_attributes():
    s = sym.Custom(sym.var('data'), sym.var('weight'), op_type='test_scaled_softmax', scale=2,
                   tag=(1, 2), name='c')
    node = [n for n in json.loads(s.tojson())['nodes'] if n['op'] == 'Custom'][0]
    assert node['attrs'] == {'op_type': 'test_scaled_softmax', 'scale': '2', 'tag': '(1, 2)'}
    again = sym.fromjson(s.tojson())
    assert again.tojson() == s.tojson()
    assert again.list_auxiliary_states() == ['c_count']
    assert again.attr('tag') == '(1, 2)'


# -------------------------------------------------------------------------------------------------
# What a CustomOp sees
# -------------------------------------------------------------------------------------------------

class _Probe(mx.operator.CustomOp):
    """3 * x; records what it is given."""
    log = []

    def forward(self, is_train, req, in_data, out_data, aux):
        self.seen = in_data[0].asnumpy().copy()
        self.log.append(('forward', self, is_train, req, [type(a) for a in in_data + out_data],
                         in_data[0].context, autograd.is_recording(), autograd.is_training()))
        self.assign(out_data[0], req[0], in_data[0] * 3)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        np.testing.assert_array_equal(self.seen, in_data[0].asnumpy())  # this node's forward
        self.log.append(('backward', self, req, [a is None for a in out_grad + in_data
                                                 + out_data], autograd.is_recording()))
        self.assign(in_grad[0], req[0], out_grad[0] * 3)


@mx.operator.register('test_probe')
class _ProbeProp(mx.operator.CustomOpProp):
    created = []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0]]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        self.created.append((ctx, in_shapes, in_dtypes))
        return _Probe()


class _ProbeNet(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.Custom(x * 2, op_type='test_probe') + 1


@pytest.mark.parametrize('mode', ['imperative', 'hybrid', 'static'])
def test_operator_sees_ndarrays_and_keeps_its_forward_for_backward(mode):
    _Probe.log.clear()
    net = _ProbeNet()
    if mode != 'imperative':
        net.hybridize(static_alloc=mode == 'static')
    for step in range(2):
        x = nd.array(np.arange(6.0).reshape(2, 3) + step)
        x.attach_grad()
        with autograd.record():
            y = net(x)
        y.backward()
        np.testing.assert_allclose(y.asnumpy(), (np.arange(6.0).reshape(2, 3) + step) * 6 + 1)
        np.testing.assert_allclose(x.grad.asnumpy(), np.full((2, 3), 6.0))
    forwards = [e for e in _Probe.log if e[0] == 'forward']
    backwards = [e for e in _Probe.log if e[0] == 'backward']
    assert len(forwards) == len(backwards) == 2
    for (_, op, is_train, req, types, ctx, recording, training), \
            (_, bop, breq, missing, brecording) in zip(forwards, backwards):
        assert bop is op
        assert is_train is True and req == ['write'] and breq == ['write']
        assert all(t is nd.NDArray for t in types) and ctx == mx.cpu()
        assert not recording and training and not brecording
        assert missing == [False, False, True]     # out_data was not declared
    with autograd.predict_mode():
        net(nd.ones((2, 3)))
    assert _Probe.log[-1][2] is False


def test_executor_creates_one_operator_per_node():
    _ProbeProp.created.clear()
    exe = sym.Custom(sym.var('x'), op_type='test_probe').simple_bind(mx.cpu(), x=(2, 3))
    for _ in range(3):
        exe.forward(is_train=True)
        exe.backward([nd.ones((2, 3))])
    assert _ProbeProp.created == [(mx.cpu(), [[2, 3]], [0])]   # MXNet's type flag for float32
    np.testing.assert_allclose(exe.grad_dict['x'].asnumpy(), np.full((2, 3), 3.0))


def test_inputs_by_name_and_missing_ones_become_variables():
    s = sym.Custom(data=sym.var('a'), op_type='test_scaled_softmax', name='t2')
    assert s.list_arguments() == ['a', 't2_weight'] and s.list_auxiliary_states() == ['t2_count']
    outs = nd.Custom(data=_in('data'), weight=_in('weight'), count=_in('count'),
                     op_type='test_scaled_softmax', **GEN.SOFTMAX_KWARGS)
    _close(outs[0], 'imperative_output')


def test_assign_follows_req():
    op, dst = mx.operator.CustomOp(), nd.ones((2,))
    op.assign(dst, 'null', nd.array([5, 6]))
    np.testing.assert_array_equal(dst.asnumpy(), [1, 1])
    op.assign(dst, 'add', nd.array([5, 6]))
    np.testing.assert_array_equal(dst.asnumpy(), [6, 7])
    for req in ('write', 'inplace'):
        op.assign(dst, req, 2)
        np.testing.assert_array_equal(dst.asnumpy(), [2, 2])


def test_prop_defaults():
    prop = mx.operator.CustomOpProp()
    assert prop.list_arguments() == ['data'] and prop.list_outputs() == ['output']
    assert prop.list_auxiliary_states() == []
    assert prop.infer_shape([[2, 3]]) == ([[2, 3]], ([2, 3],), ())
    assert prop.infer_type([np.float32]) == ([np.float32], [np.float32], [])
    assert prop.infer_storage_type(['default']) == (['default'], ['default'], [])
    with pytest.raises(MXNetError, match='csr'):
        prop.infer_storage_type(['csr'])
    assert prop.declare_backward_dependency([0], [1], [2]) == [0, 1, 2]
    assert mx.operator.CustomOpProp(need_top_grad=False) \
        .declare_backward_dependency([0], [1], [2]) == [1, 2]


def test_operator_listing():
    names = mx.operator.get_all_registered_operators()
    assert {'Custom', '_backward_Custom', 'FullyConnected', 'flatten', 'Flatten'} <= set(names)
    args = mx.operator.get_operator_arguments('FullyConnected')
    # MXNet 1.9.1: OperatorArguments(narg=6, names=[...], types=['NDArray-or-Symbol', ...])
    assert args.narg == 6
    assert args.names == ['data', 'weight', 'bias', 'num_hidden', 'no_bias', 'flatten']
    assert args.types[:4] == ['NDArray-or-Symbol'] * 3 + ['int, required']
    custom = mx.operator.get_operator_arguments('Custom')
    assert custom.names == ['data', 'op_type'] and custom.types[0] == 'NDArray-or-Symbol[]'
    with pytest.raises(MXNetError, match='unknown operator'):
        mx.operator.get_operator_arguments('NoSuchOp')


def test_registering_twice_replaces_with_a_warning(caplog):
    @mx.operator.register('test_twice')
    class First(mx.operator.CustomOpProp):
        pass

    with caplog.at_level(logging.WARNING):
        @mx.operator.register('test_twice')
        class Second(mx.operator.CustomOpProp):
            def list_outputs(self):
                return ['a', 'b']
    assert 'overriding existing custom operator test_twice' in caplog.text
    assert sym.Custom(sym.var('x'), op_type='test_twice', name='t').list_outputs() == \
        ['t_a', 't_b']


# -------------------------------------------------------------------------------------------------
# Errors
# -------------------------------------------------------------------------------------------------

def test_unregistered_op_type_is_named():
    with pytest.raises(MXNetError, match="Cannot find custom operator 'no_such_op'"):
        nd.Custom(nd.ones((2,)), op_type='no_such_op')
    with pytest.raises(MXNetError, match="Cannot find custom operator 'no_such_op'"):
        sym.Custom(sym.var('x'), op_type='no_such_op')
    text = sym.Custom(sym.var('x'), op_type='test_probe').tojson()
    with pytest.raises(MXNetError, match="Cannot find custom operator 'no_such_op'"):
        sym.fromjson(text.replace('test_probe', 'no_such_op'))
    with pytest.raises(MXNetError, match='op_type'):
        nd.Custom(nd.ones((2,)))


@mx.operator.register('test_bad_shape')
class _BadShapeProp(mx.operator.CustomOpProp):
    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]], []


def test_wrong_infer_shape_counts_name_the_op_type():
    message = "'test_bad_shape'.*expecting 1 entries in returned output shapes, got 2"
    with pytest.raises(ShapeError, match=message):
        nd.Custom(nd.ones((2, 3)), op_type='test_bad_shape')
    with pytest.raises(ShapeError, match=message):
        sym.Custom(sym.var('a'), op_type='test_bad_shape').infer_shape(a=(2, 3))


def test_wrong_input_count_names_the_op_type():
    with pytest.raises(ShapeError, match=r"'test_scaled_softmax'.*expects 3 inputs "
                                         r"\(data, weight, count\), got 2"):
        nd.Custom(_in('data'), _in('weight'), op_type='test_scaled_softmax')


class _Failing(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise ValueError('broken forward')


@mx.operator.register('test_failing')
class _FailingProp(mx.operator.CustomOpProp):
    def __init__(self, level='1'):
        super().__init__()
        int(level)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Failing()


def test_errors_in_user_code_name_the_op_type_and_keep_the_cause():
    with pytest.raises(MXNetError, match="'test_failing'.*forward failed: ValueError: "
                                         "broken forward") as info:
        nd.Custom(nd.ones((2,)), op_type='test_failing')
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(MXNetError, match=r"'test_failing'.*_FailingProp\(\*\*\{'level': "
                                         r"'x'\}\) failed: ValueError"):
        nd.Custom(nd.ones((2,)), op_type='test_failing', level='x')


def test_gradients_of_gradients_are_refused():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = nd.Custom(x, op_type='test_probe')
        g = autograd.grad(y, [x], create_graph=True)[0]
    with pytest.raises(NotSupportedError, match="'test_probe'"):
        g.backward()


# -------------------------------------------------------------------------------------------------
# The deprecated PythonOp family
# -------------------------------------------------------------------------------------------------

def _legacy_classes():
    class NumpySquare(mx.operator.NumpyOp):
        def __init__(self):
            super().__init__(need_top_grad=True)

        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0]]

        def forward(self, in_data, out_data):
            assert isinstance(in_data[0], np.ndarray)
            out_data[0][:] = in_data[0] ** 2

        def backward(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = 2 * in_data[0] * out_grad[0]

    class NDArrayTriple(mx.operator.NDArrayOp):
        def __init__(self):
            super().__init__(need_top_grad=True)

        def forward(self, in_data, out_data):
            assert isinstance(in_data[0], nd.NDArray)
            out_data[0][:] = in_data[0] * 3

        def backward(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = 3 * out_grad[0]

    return NumpySquare, NDArrayTriple


def test_legacy_python_ops_run_in_an_executor():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        numpy_cls, ndarray_cls = _legacy_classes()
        ops = [numpy_cls(), ndarray_cls()]
    x = np.array([1.0, 2.0, 3.0], np.float32)
    head = np.array([1.0, 1.0, 2.0], np.float32)
    for op, fwd, bwd in zip(ops, (x ** 2, 3 * x), (2 * x * head, 3 * head)):
        s = op(sym.var('x'), name='n')
        exe = s.simple_bind(mx.cpu(), x=(3,))
        exe.arg_dict['x'][:] = x
        exe.forward(is_train=True)
        exe.backward(nd.array(head))
        np.testing.assert_allclose(exe.outputs[0].asnumpy(), fwd)
        np.testing.assert_allclose(exe.grad_dict['x'].asnumpy(), bwd)
    with pytest.warns(UserWarning, match='deprecated'):
        mx.operator.PythonOp()
