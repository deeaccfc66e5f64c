"""Small MXNet 1.9.1 behaviours that real scripts and MXNet's own tests rely on.

Each expected value was printed by MXNet 1.9.1 for the same code.
"""
import json

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import NotSupportedError


# -- the reshape family's inplace= --------------------------------------------------------------

@pytest.mark.parametrize('shape, call, out_shape', [
    ((2, 3), lambda x: x.expand_dims(0, inplace=True), (1, 2, 3)),
    ((2, 1, 3), lambda x: x.squeeze(inplace=True), (2, 3)),
    ((2, 1, 3), lambda x: x.flatten(inplace=True), (2, 3)),
])
def test_inplace_reshapes_share_memory(shape, call, out_shape):
    x = nd.ones(shape)
    view = call(x)
    assert view.shape == out_shape
    view[:] = 5
    assert (x.asnumpy() == 5).all()


def test_inplace_reshapes_default_to_copies_and_record():
    x = nd.ones((2, 1))
    y = x.squeeze()
    y[:] = 3
    assert (x.asnumpy() == 1).all()
    x.attach_grad()
    with autograd.record():
        z = (x.squeeze(inplace=True) * 2).sum()
    z.backward()
    assert x.grad.asnumpy().tolist() == [[2.0], [2.0]]
    # Symbols accept the keyword, so one hybrid_forward serves both
    with mx.name.NameManager():
        assert sym.var('a').squeeze(inplace=True).flatten(inplace=True).name == 'flatten0'


# -- storage types ------------------------------------------------------------------------------

def test_default_storage_is_accepted_everywhere():
    assert nd.zeros((2, 2), stype='default').stype == 'default'
    assert nd.empty((2,), stype='default').shape == (2,)
    assert nd.ones((2,)).tostype('default').stype == 'default'
    nd.ones((2,)).attach_grad(stype='default')
    mx.gluon.Parameter('w', shape=(2,), stype='default', grad_stype='default')
    assert nd.cast_storage(nd.ones((2,)), 'default').asnumpy().tolist() == [1.0, 1.0]


@pytest.mark.parametrize('make', [
    lambda s: nd.zeros((2, 2), stype=s), lambda s: nd.empty((2,), stype=s),
    lambda s: nd.ones((2,)).tostype(s), lambda s: nd.ones((2,)).attach_grad(stype=s),
    lambda s: nd.cast_storage(nd.ones((2,)), s),
    lambda s: mx.gluon.Parameter('w', shape=(2,), stype=s)])
@pytest.mark.parametrize('stype', ['row_sparse', 'csr'])
def test_sparse_storage_is_a_clear_error(make, stype):
    with pytest.raises(NotSupportedError, match=f"{stype}.*not supported"):
        make(stype)


# -- keyword arguments MXNet accepts --------------------------------------------------------------

def test_zeros_like_takes_dtype_as_mxnet():
    # MXNet 1.9.1 records dtype on the node and ignores it: the output keeps the input's type
    x = nd.ones((2, 3))
    assert nd.zeros_like(x, dtype='int32').dtype == np.float32
    assert nd.ones_like(x, dtype='float16').dtype == np.float32
    s = sym.zeros_like(sym.var('a'), dtype='int32')
    node = json.loads(s.tojson())['nodes'][1]
    assert node['op'] == 'zeros_like' and node['attrs'] == {'dtype': 'int32'}
    assert sym.load_json(s.tojson()).tojson() == s.tojson()
    assert s.infer_type(a='float32')[1] == [np.float32]


def test_lr_mult_becomes_an_attribute():
    s = sym.FullyConnected(sym.var('d'), num_hidden=2, lr_mult=0, name='fc')
    assert s.attr_dict() == {
        'fc_weight': {'num_hidden': '2', '__lr_mult__': '0', 'lr_mult': '0'},
        'fc_bias': {'num_hidden': '2', '__lr_mult__': '0', 'lr_mult': '0'},
        'fc': {'num_hidden': '2', '__lr_mult__': '0', 'lr_mult': '0'}}
    with mx.AttrScope(lr_mult='0.5'):
        s = sym.FullyConnected(sym.var('d'), num_hidden=2, name='fc')
    assert [n.get('attrs') for n in json.loads(s.tojson())['nodes']] == [
        {'__lr_mult__': '0.5'}, {'__lr_mult__': '0.5', 'num_hidden': '2'},
        {'__lr_mult__': '0.5', 'num_hidden': '2'}, {'__lr_mult__': '0.5', 'num_hidden': '2'}]
    # an NDArray call ignores it
    out = nd.FullyConnected(nd.ones((1, 3)), nd.ones((2, 3)), nd.ones((2,)), num_hidden=2,
                            wd_mult=0)
    assert out.asnumpy().tolist() == [[4.0, 4.0]]


# -- numpy scalars on the left -------------------------------------------------------------------

def test_numpy_scalars_on_the_left():
    x = nd.arange(3)
    assert isinstance(np.float32(2) * x, nd.NDArray)
    assert (np.float64(2) - x).asnumpy().tolist() == [2.0, 1.0, 0.0]
    np.testing.assert_allclose((np.int64(1) / (x + 1)).asnumpy(), [1.0, 0.5, 1 / 3], rtol=1e-6)
    s = np.float32(2) * sym.var('a')
    assert isinstance(s, sym.Symbol)
    assert s.eval(a=nd.array([1, 2]))[0].asnumpy().tolist() == [2.0, 4.0]


# -- element assignment --------------------------------------------------------------------------

def test_assigning_a_one_element_array_to_an_element():
    a = nd.array([1, 2, 3])
    c = nd.zeros((2,))
    c[0] = a[0] + a[1]
    c[1] = nd.array([[4]])
    assert c.asnumpy().tolist() == [3.0, 4.0]
    m = nd.zeros((2, 3))
    m[0] = nd.array([1])
    m[1, 1] = nd.array([9])
    assert m.asnumpy().tolist() == [[1, 1, 1], [0, 9, 0]]
    with pytest.raises(ValueError):
        c[1] = nd.array([4, 5])


# -- functions and methods -----------------------------------------------------------------------

def test_cached_op_of_mxnet():
    a, b = sym.var('a'), sym.var('b')
    op = nd.CachedOp(a * 2 + b)
    assert op(nd.ones((2,)), nd.ones((2,))).asnumpy().tolist() == [3.0, 3.0]
    two = nd.CachedOp(sym.Group([a * 2, a + b]))
    outs = two(nd.ones((1,)), nd.ones((1,)))
    assert [o.asnumpy().tolist() for o in outs] == [[2.0], [2.0]]
    target = nd.zeros((2,))
    assert op(nd.ones((2,)), nd.ones((2,)), out=target) is target
    assert target.asnumpy().tolist() == [3.0, 3.0]


def test_debug_str_as_mxnet():
    a, b = sym.var('a'), sym.var('b')
    with mx.name.NameManager():
        s = sym.FullyConnected(a * 2 + b, num_hidden=3, name='fc')
    # MXNet 1.9.1 prints elemwise_add where hybridlib's + records broadcast_add
    assert s.debug_str() == (
        'Symbol Outputs:\n\toutput[0]=fc(0)\nVariable:a\n--------------------\n'
        'Op:_mul_scalar, Name=_mulscalar0\nInputs:\n\targ[0]=a(0) version=0\nAttrs:\n'
        '\tscalar=2\nVariable:b\n--------------------\nOp:broadcast_add, Name=_plus0\n'
        'Inputs:\n\targ[0]=_mulscalar0(0)\n\targ[1]=b(0) version=0\nVariable:fc_weight\n'
        'Variable:fc_bias\n--------------------\nOp:FullyConnected, Name=fc\nInputs:\n'
        '\targ[0]=_plus0(0)\n\targ[1]=fc_weight(0) version=0\n'
        '\targ[2]=fc_bias(0) version=0\nAttrs:\n\tnum_hidden=3\n')
    bn = sym.BatchNorm(a, name='bn').debug_str()
    assert '\targ[3]=bn_moving_mean(0) version=1\n' in bn
    executor = (a * 2).simple_bind(mx.cpu(), a=(2,))
    assert executor.debug_str().endswith('Total 0 MB allocated\n')
    assert (a + b).get_children().list_outputs() == ['a', 'b']
    assert a.get_children() is None


def test_python_level_functions():
    assert nd.moveaxis(nd.ones((2, 3, 4)), 0, 2).shape == (3, 4, 2)
    assert nd.moveaxis(nd.ones((2, 3, 4)), [0, 1], [-1, -2]).shape == (4, 3, 2)
    parts = nd.split_v2(nd.arange(6).reshape((6, 1)), (2, 3))
    assert [p.asnumpy().ravel().tolist() for p in parts] == [[0, 1], [2], [3, 4, 5]]
    assert [p.shape for p in nd.split_v2(nd.ones((6, 2)), 3)] == [(2, 2)] * 3
    with pytest.raises(ValueError, match='equal division'):
        nd.split_v2(nd.ones((5, 2)), 3)
    with pytest.raises(ValueError, match='int or tuple'):
        nd.split_v2(nd.ones((6, 2)), [2, 3])
    node = json.loads(sym.split_v2(sym.var('a'), 3).tojson())['nodes'][1]
    assert node['op'] == '_split_v2' and node['attrs']['sections'] == '3'
    out = nd.zeros((2, 3))
    assert nd.onehot_encode(nd.array([0, 2]), out) is out
    assert out.asnumpy().tolist() == [[1, 0, 0], [0, 0, 1]]
    assert sym.pow(sym.var('a'), 2).eval(a=nd.array([3]))[0].asnumpy().tolist() == [9.0]


# -- autograd: an output of a freed graph is a constant -----------------------------------------

def test_reused_output_after_backward_is_a_constant():
    w = nd.array([0.5])
    w.attach_grad()
    h = nd.array([1.0])
    grads = []
    for _ in range(3):      # truncated BPTT: h carries over, its graph does not
        with autograd.record():
            h = nd.tanh(w * h + 1)
            loss = (h ** 2).sum()
        loss.backward()
        grads.append(w.grad.asnumpy()[0])
    x = nd.array([2.0])
    x.attach_grad()
    with autograd.record():
        y = x * 3
        z = y * y
    z.backward()
    grads.append(x.grad.asnumpy()[0])
    with autograd.record():
        q = y * x               # y's graph is gone: y is the constant 6
    q.backward()
    grads.append(x.grad.asnumpy()[0])
    with autograd.record():
        u = x * x
    u.backward(retain_graph=True)
    with autograd.record():
        v = u * x               # u's graph was kept: the gradient flows through it
    v.backward()
    grads.append(x.grad.asnumpy()[0])
    # MXNet 1.9.1's gradients for the same code
    np.testing.assert_allclose(grads, [0.32713258266448975, 0.3193255066871643,
                                       0.3183988630771637, 36.0, 6.0, 12.0], rtol=1e-6)


def test_operator_without_gradient_off_the_gradient_path():
    # a random shuffle of the data: MXNet differentiates only what leads to the weights
    class Net(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.fc = mx.gluon.nn.Dense(2)

        def hybrid_forward(self, F, x):
            return self.fc(F.random.shuffle(x))

    for hybridize in (False, True):
        net = Net()
        net.initialize()
        if hybridize:
            net.hybridize()
        with autograd.record():
            y = net(nd.ones((4, 3))).sum()
        y.backward()
        assert net.fc.weight.grad().asnumpy().tolist() == [[4.0] * 3] * 2


def test_legacy_imdecode():
    pytest.importorskip('PIL')
    import os
    with open(os.path.join(os.path.dirname(__file__), 'data', 'image-rgb.png'), 'rb') as f:
        data = f.read()
    hwc = mx.image.imdecode(data).asnumpy().astype(np.float32)
    a = nd.imdecode(data)
    assert a.shape == (1, 3, 6, 9) and a.dtype == np.float32
    np.testing.assert_array_equal(a.asnumpy()[0], hwc.transpose(2, 0, 1))
    clipped = nd.imdecode(data, clip_rect=(1, 1, 4, 3), mean=nd.ones((3, 2, 3)) * 10)
    np.testing.assert_array_equal(clipped.asnumpy()[0], hwc[1:3, 1:4].transpose(2, 0, 1) - 10)
    out = nd.zeros((2, 3, 6, 9))
    assert nd.imdecode(data, out=out, index=1) is out
    assert out.asnumpy()[0].sum() == 0
    np.testing.assert_array_equal(out.asnumpy()[1], hwc.transpose(2, 0, 1))
    assert nd.imdecode(data, channels=1).shape == (1, 1, 6, 9)


def test_split_into_one_part_hybridized():
    # an operator whose output count follows its attributes, asked for one output
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.split(x, num_outputs=1, axis=0) * 2 + F.stack(x, axis=0)[0]

    x = nd.ones((2, 3))
    expected = Net()(x).asnumpy()
    for flags in ({}, {'static_alloc': True}):
        net = Net()
        net.hybridize(**flags)
        x.attach_grad()
        with autograd.record():
            y = net(x)
        y.backward()
        np.testing.assert_array_equal(y.asnumpy(), expected)
        assert x.grad.asnumpy().tolist() == [[3.0] * 3] * 2


def test_two_variables_of_one_name_bound_by_position_are_refused():
    # MXNet gives each its own array; binding by name would silently share one
    d1, d2 = sym.var('data'), sym.var('data')
    s = sym.maximum(d1, d2)
    assert s.list_arguments() == ['data', 'data']
    with pytest.raises(NotSupportedError, match=r"variables named \['data'\]"):
        s.bind(mx.cpu(), args=[nd.ones((2,)), nd.zeros((2,))])
    # by name, both read the one array, as in MXNet
    assert s.eval(data=nd.array([1, 3]))[0].asnumpy().tolist() == [1.0, 3.0]


def test_value_only_methods_on_symbols_raise_as_mxnet():
    # what a traced hybrid_forward cannot know raises instead of answering wrongly
    from hybridlib.base import NotImplementedForSymbol

    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x * float(x.asnumpy().sum())

    net = Net()
    assert net(nd.ones((2,))).asnumpy().tolist() == [2.0, 2.0]
    net.hybridize()
    with pytest.raises(NotImplementedForSymbol, match='asnumpy'):
        net(nd.ones((2,)))
    s = sym.var('a')
    for call in (lambda: bool(s > 0), s.asscalar, s.wait_to_read, s.detach, s.backward,
                 lambda: s.as_in_context(mx.cpu())):
        with pytest.raises(mx.MXNetError):
            call()


def test_export_of_a_shape_reading_trace_warns(tmp_path):
    # hybridlib lets hybrid_forward read x.shape (MXNet raises); the graph then holds shapes
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x.reshape((x.shape[0], -1)) * 2

    net = Net()
    net.hybridize()
    net(nd.ones((2, 3, 4)))
    with pytest.warns(UserWarning, match=r'holds the shapes of that call, \[\(2, 3, 4\)\]'):
        net.export(str(tmp_path / 'net'))

    class ShapeFree(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x.reshape((0, -1)) * 2

    net = ShapeFree()
    net.hybridize()
    net(nd.ones((2, 3, 4)))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        net.export(str(tmp_path / 'free'))
