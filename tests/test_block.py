"""Block, HybridBlock and SymbolBlock (hybridlib/block.py) against MXNet 1.9.1.

The literals (names, reprs, messages, printed tables) are what MXNet 1.9.1 printed for the same
code; tests/data/gluon_net* were written by MXNet (tests/data/make_oracle_files.py). Every
HybridBlock here is also compared imperative vs hybridized (tests/nn/hybrid_check.py).
"""
import contextlib
import copy
import filecmp
import io
import linecache
import os
import pickle
import sys
import warnings

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd, sym
from hybridlib import tracing
from hybridlib.block import HookHandle, UsageError
from hybridlib.gluon import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'nn'))
from hybrid_check import check_hybrid, data, fresh_names  # noqa: E402,F401

DATA = os.path.join(os.path.dirname(__file__), 'data')


@contextlib.contextmanager
def caught_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        yield caught


# -------------------------------------------------------------------------------------------
# Names, children and parameters
# -------------------------------------------------------------------------------------------

class Model(gluon.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense0 = nn.Dense(20)
            self.inner = nn.HybridSequential(prefix='')
            with self.inner.name_scope():
                self.inner.add(nn.Dense(3), nn.Dense(4))
            self.shared = nn.Dense(20, params=self.dense0.params)
            self.w = self.params.get('w', shape=(2, 2))
        self.outside = nn.Dense(5)

    def forward(self, x):
        return self.dense0(x)


def test_prefixes_names_and_parameters_as_mxnet():
    m = Model()
    assert repr(m) == ('Model(\n'
                       '  (dense0): Dense(None -> 20, linear)\n'
                       '  (inner): HybridSequential(\n'
                       '    (0): Dense(None -> 3, linear)\n'
                       '    (1): Dense(None -> 4, linear)\n'
                       '  )\n'
                       '  (shared): Dense(None -> 20, linear)\n'
                       '  (outside): Dense(None -> 5, linear)\n'
                       ')')
    assert (m.prefix, m.name, m.params.prefix, list(m.params.keys())) == \
        ('model0_', 'model0', 'model0_', ['model0_w'])
    assert list(m.collect_params().keys()) == [
        'model0_w', 'model0_dense0_weight', 'model0_dense0_bias', 'model0_dense1_weight',
        'model0_dense1_bias', 'model0_dense2_weight', 'model0_dense2_bias', 'dense0_weight',
        'dense0_bias']
    assert [(k, c.name, c.prefix) for k, c in m._children.items()] == [
        ('dense0', 'model0_dense0', 'model0_dense0_'), ('inner', 'model0', 'model0_'),
        ('shared', 'model0_dense3', 'model0_dense3_'), ('outside', 'dense0', 'dense0_')]
    assert sorted(m._collect_params_with_prefix()) == [
        'dense0.bias', 'dense0.weight', 'inner.0.bias', 'inner.0.weight', 'inner.1.bias',
        'inner.1.weight', 'outside.bias', 'outside.weight', 'shared.bias', 'shared.weight', 'w']
    assert m.shared.weight is m.dense0.weight
    assert list(Model(prefix='custom_').collect_params().keys())[:3] == \
        ['custom_w', 'custom_dense0_weight', 'custom_dense0_bias']
    empty = nn.Dense(2, prefix='')
    assert (empty.prefix, empty.name, list(empty.params.keys())) == ('', '', ['weight', 'bias'])


def test_collect_params_select_matches_full_names_from_the_start():
    m = Model()
    assert list(m.collect_params('.*dense0.*').keys()) == [
        'model0_dense0_weight', 'model0_dense0_bias', 'dense0_weight', 'dense0_bias']
    assert list(m.collect_params('model0_w|.*bias').keys()) == [
        'model0_w', 'model0_dense0_bias', 'model0_dense1_bias', 'model0_dense2_bias',
        'dense0_bias']
    assert list(m.collect_params('dense1.*').keys()) == []


def test_setattr_errors_as_mxnet():
    m = Model()
    with pytest.raises(TypeError, match="Changing attribute type for dense0 from <class "
                                        "'hybridlib.nn.basic_layers.Dense'> to <class 'int'>"):
        m.dense0 = 3
    with pytest.raises(TypeError, match='Changing attribute type for w from'):
        m.w = nn.Dense(2)
    with pytest.raises(AssertionError, match='Overriding Parameter attribute w is not allowed'):
        m.w = m.params.get('w2', shape=(1,))
    m.dense0 = nn.Dense(7)              # a block replaces a block
    assert m._children['dense0'] is m.dense0


def test_register_child_and_blocks_hidden_in_containers():
    class Hidden(gluon.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.layers = [nn.Dense(2), nn.Dense(3)]
                self.table = {'a': (nn.Dense(4),)}
            self.register_child(self.layers[0])
            self.register_child(self.layers[1], 'second')

    block = Hidden()
    assert list(block._children) == ['0', 'second']
    with caught_warnings() as caught:
        names = list(block.collect_params().keys())
    assert names == ['hidden0_dense0_weight', 'hidden0_dense0_bias', 'hidden0_dense1_weight',
                     'hidden0_dense1_bias']
    assert [str(w.message) for w in caught] == [
        '"Hidden.table" is an unregistered container with Blocks. Note that Blocks inside the '
        'list, tuple or dict will not be registered automatically. Make sure to register them '
        'using register_child() or switching to nn.Sequential/nn.HybridSequential instead. ']


# -------------------------------------------------------------------------------------------
# Parameter files (MXNet's format, both ways)
# -------------------------------------------------------------------------------------------

def gluon_net():
    """The model of tests/data/gluon_net*, built as make_oracle_files.py builds it."""
    net = nn.HybridSequential(prefix='model_')
    with net.name_scope():
        shared = nn.Dense(3, in_units=3)
        net.add(nn.Conv2D(2, 3, padding=1, in_channels=1), nn.BatchNorm(in_channels=2),
                nn.MaxPool2D(), nn.Flatten(), nn.Dense(3, in_units=8, activation='tanh'))
        net.add(shared, shared)
    return net


def io_file():
    return np.load(os.path.join(DATA, 'gluon_net-io.npz'))


def same_file(produced, name):
    return filecmp.cmp(produced, os.path.join(DATA, name), shallow=False)


@pytest.mark.parametrize('name, load', [
    ('gluon_net.params', 'load_parameters'),
    ('gluon_net-dedup.params', 'load_parameters'),
    ('gluon_net-legacy.params', 'load_params'),
])
def test_files_written_by_mxnet_load_and_we_write_the_same_bytes(tmp_path, name, load):
    net = gluon_net()
    with caught_warnings():
        getattr(net, load)(os.path.join(DATA, name))
    out = str(tmp_path / 'out.params')
    net.save_parameters(out)
    assert same_file(out, 'gluon_net.params')
    net.save_parameters(out, deduplicate=True)       # shared: saved once, under its last name
    assert same_file(out, 'gluon_net-dedup.params')
    assert sorted(nd.load(out)) == ['0.bias', '0.weight', '1.beta', '1.gamma',
                                    '1.running_mean', '1.running_var', '4.bias', '4.weight',
                                    '6.bias', '6.weight']
    with pytest.warns(UserWarning, match='save_params is deprecated'):
        net.save_params(out)
    assert same_file(out, 'gluon_net-legacy.params')


@pytest.mark.parametrize('hybridize', [None, {}, {'static_alloc': True, 'static_shape': True}])
def test_outputs_gradients_and_statistics_as_mxnet(hybridize):
    net = gluon_net()
    net.load_parameters(os.path.join(DATA, 'gluon_net.params'))
    if hybridize is not None:
        net.hybridize(**hybridize)
    ref = io_file()
    x = nd.array(ref['x'])
    np.testing.assert_allclose(net(x).asnumpy(), ref['y_predict'], rtol=1e-5, atol=1e-6)
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward(nd.array(ref['head']))
    np.testing.assert_allclose(y.asnumpy(), ref['y_train'], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), ref['grad:x'], rtol=1e-5, atol=1e-6)
    for name, param in net.collect_params().items():
        key = ('grad:' if param.grad_req != 'null' else 'after:') + name
        value = param.grad() if param.grad_req != 'null' else param.data()
        np.testing.assert_allclose(value.asnumpy(), ref[key], rtol=1e-5, atol=1e-6,
                                   err_msg=key)


def test_export_writes_mxnet_bytes_and_imports_mxnet_exports(tmp_path):
    net = gluon_net()
    net.load_parameters(os.path.join(DATA, 'gluon_net.params'))
    ref = io_file()
    x = nd.array(ref['x'])
    with autograd.record():                 # the training step make_oracle_files.py takes
        y = net(x)
    y.backward(nd.array(ref['head']))
    net.hybridize()
    expected = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / 'net'), epoch=7)
    assert params_file.endswith('net-0007.params')
    assert same_file(sym_file, 'gluon_net-symbol.json')
    os.rename(params_file, tmp_path / 'net-0000.params')
    assert same_file(str(tmp_path / 'net-0000.params'), 'gluon_net-0000.params')
    imported = gluon.SymbolBlock.imports(os.path.join(DATA, 'gluon_net-symbol.json'), ['data'],
                                         os.path.join(DATA, 'gluon_net-0000.params'))
    np.testing.assert_allclose(imported(x).asnumpy(), expected, rtol=1e-6)
    check_hybrid(imported, [x], train=True)


def test_export_needs_a_graph():
    with pytest.raises(RuntimeError, match='Please first call block.hybridize\\(\\) and then run '
                                           'forward with this block at least once before '
                                           'calling export.'):
        nn.Dense(2).export('unused')


def test_load_parameters_checks_names_as_mxnet(tmp_path):
    net = gluon_net()
    net.load_parameters(os.path.join(DATA, 'gluon_net.params'))
    fname = str(tmp_path / 'net.params')
    net.save_parameters(fname)
    small = nn.Dense(3, in_units=3, prefix='a_')
    with pytest.raises(AssertionError) as info:
        small.load_parameters(fname)
    assert str(info.value) == (
        f"Parameter 'weight' is missing in file '{fname}', which contains parameters: "
        "'0.weight', '0.bias', '1.gamma', ..., '5.weight', '5.bias', '6.weight', '6.bias'. Set "
        "allow_missing=True to ignore missing parameters.")
    with pytest.raises(ValueError, match="Parameter '0.weight' loaded from file '.*' is not "
                                         'present in ParameterDict, which contains parameters '
                                         "'weight', 'bias'. Set ignore_extra=True to ignore."):
        small.load_parameters(fname, allow_missing=True)
    small.initialize()
    small.load_parameters(fname, allow_missing=True, ignore_extra=True)   # nothing matches
    more = gluon_net()
    more.add(nn.Dense(2, in_units=3))
    more.initialize()
    more.load_parameters(fname, allow_missing=True)
    np.testing.assert_array_equal(more[4].weight.data().asnumpy(),
                                  net[4].weight.data().asnumpy())


def test_load_parameters_casts_dtypes_and_clears_the_cache(tmp_path):
    fname = str(tmp_path / 'd.params')
    dense = nn.Dense(2, in_units=3)
    dense.initialize()
    dense.save_parameters(fname)
    wide = nn.Dense(2, in_units=3, dtype='float64')
    wide.initialize()
    wide.hybridize()
    wide(data(1, 3).astype('float64'))
    with pytest.raises(AssertionError, match="Failed loading Parameter 'dense1_weight' from saved "
                                             'params: dtype incompatible expected float64 vs '
                                             "saved <class 'numpy.float32'>. Set cast_dtype"):
        wide.load_parameters(fname)
    wide.load_parameters(fname, cast_dtype=True)
    assert wide.weight.data().dtype == np.float64
    assert wide._traces                      # same dtypes: the compiled graph stays
    wide.load_parameters(fname, cast_dtype=True, dtype_source='saved')
    assert wide.weight.data().dtype == np.float32 and not wide._traces
    x = data(2, 3)
    np.testing.assert_allclose(wide(x).asnumpy(), dense(x).asnumpy(), rtol=1e-6)


def test_deprecated_save_params_and_load_params(tmp_path):
    dense = nn.Dense(2, in_units=3)
    dense.initialize()
    fname = str(tmp_path / 'legacy.params')
    with caught_warnings() as caught:
        dense.save_params(fname)
        dense.load_params(fname)
    assert [str(w.message) for w in caught] == [
        'save_params is deprecated. Please use save_parameters. Note that if you want load '
        'from SymbolBlock later, please use export instead. For details, see '
        'https://mxnet.apache.org/tutorials/gluon/save_load_params.html',
        'load_params is deprecated. Please use load_parameters.']
    assert sorted(nd.load(fname)) == ['bias', 'weight']


# -------------------------------------------------------------------------------------------
# Hooks, apply, hybridize, cast, summary
# -------------------------------------------------------------------------------------------

def test_forward_hooks_with_detachable_handles():
    dense = nn.Dense(2, in_units=2)
    dense.initialize()
    log = []
    pre = dense.register_forward_pre_hook(
        lambda b, i: log.append(('pre', b.name, type(i).__name__, len(i))))
    post = dense.register_forward_hook(
        lambda b, i, o: log.append(('post', b.name, type(i).__name__, o.shape)))
    x = nd.ones((1, 2))
    dense(x)
    pre.detach()
    dense(x)
    with post:
        pass                                  # leaving the with block detaches
    dense(x)
    assert log == [('pre', 'dense0', 'tuple', 1), ('post', 'dense0', 'tuple', (1, 2)),
                   ('post', 'dense0', 'tuple', (1, 2))]
    with pytest.raises(AssertionError, match='The same handle cannot be attached twice'):
        post.attach({}, print)
    assert isinstance(post, HookHandle)


def test_hybridizing_a_block_with_hooks_warns():
    dense = nn.Dense(2)
    dense.register_forward_hook(lambda *args: None)
    with caught_warnings() as caught:
        dense.hybridize()
    assert [str(w.message) for w in caught] == [
        '"Dense(None -> 2, linear)" is being hybridized while still having forward hook/'
        'pre-hook. If "Dense(None -> 2, linear)" is a child of HybridBlock, the hooks will not '
        'take effect.']


def test_initialize_on_several_contexts():
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=3, bias_initializer='ones'), nn.Dense(2))
    net.initialize(mx.init.Constant(0.5), ctx=[mx.cpu(0), mx.cpu(1)])
    assert net[0].weight.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    assert net[0].weight.data(mx.cpu(1)).asnumpy().tolist() == [[0.5] * 3] * 2
    assert net[0].bias.data().asnumpy().tolist() == [1, 1]          # its own initializer wins
    with caught_warnings() as caught:
        net.initialize()
    # as MXNet 1.9.1: the deferred dense1_weight stays deferred, silently
    assert [str(w.message) for w in caught] == [
        f"Parameter '{name}' is already initialized, ignoring. Set force_reinit=True to "
        're-initialize.' for name in ('dense0_weight', 'dense0_bias', 'dense1_bias')]
    net.initialize(mx.init.Zero(), force_reinit=True)
    assert net[0].weight.data().asnumpy().sum() == 0


@pytest.mark.skipif(mx.num_gpus() == 0, reason='no GPU')
def test_gpu_imperative_and_hybridized_agree():
    net = gluon_net()
    net.initialize(mx.init.Xavier(), ctx=mx.gpu(0))
    x = nd.array(io_file()['x'], ctx=mx.gpu(0))
    result = check_hybrid(net, [x], train=True, atol=1e-5)
    cpu = gluon_net()
    cpu.initialize(ctx=mx.cpu())
    for key, p in cpu.collect_params().items():
        p.set_data(net.collect_params()[key].data().as_in_context(mx.cpu()))
    np.testing.assert_allclose(cpu(x.as_in_context(mx.cpu())).asnumpy(),
                               net(x).asnumpy(), rtol=1e-5, atol=1e-5)
    assert result['outputs'][0].shape == (2, 3)


def test_apply_visits_children_first():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, activation='relu'), nn.Dense(3))
    names = []
    assert net.apply(lambda b: names.append(b.name)) is net
    assert names == ['hybridsequential0_dense0_relu', 'hybridsequential0_dense0',
                     'hybridsequential0_dense1', 'hybridsequential0']


class Plain(gluon.Block):
    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.body = nn.HybridSequential()
            self.body.add(nn.Dense(2), nn.Dense(3))

    def forward(self, x):
        return self.body(x) * 2


def test_hybridize_goes_through_plain_blocks_and_checks_its_arguments():
    block = Plain()
    block.initialize()
    x = data(2, 4)
    expected = block(x).asnumpy()
    block.hybridize(static_alloc=True)
    assert block.body._active and block.body[1]._active
    assert block.body._flags == {'static_alloc': True, 'static_shape': False}
    np.testing.assert_allclose(block(x).asnumpy(), expected, rtol=1e-6)
    assert block.body.cached_op is not None and block.body[0].cached_op is None
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['static_aloc'\]"):
        block.hybridize(static_aloc=True)       # MXNet ignores misspelt flags
    with pytest.raises(TypeError, match='unexpected keyword arguments'):
        nn.Dense(2).hybridize(foo=1)
    with pytest.raises(mx.MXNetError, match='subgraph backends are not supported'):
        block.hybridize(backend='MKLDNN')
    with pytest.raises(ValueError, match='Must specify "backend" to optimize_for'):
        block.body.optimize_for(x)
    block.hybridize(False)
    assert not block.body._active and not block.body[0]._active


def test_cast_and_zero_grad():
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=2), nn.Dense(2, in_units=3))
    net.initialize()
    x = data(4, 2)
    net.hybridize()
    with autograd.record():
        y = net(x)
    y.backward()
    assert any(p.grad().abs().sum().asscalar() > 0 for p in net.collect_params().values())
    net.zero_grad()
    assert all(p.grad().abs().sum().asscalar() == 0 for p in net.collect_params().values())
    net.cast('float64')
    assert {np.dtype(p.dtype).name for p in net.collect_params().values()} == {'float64'}
    assert not net._traces
    out = net(x.astype('float64'))
    assert out.dtype == np.float64
    check_hybrid(net, [x.astype('float64')])


def test_summary_as_mxnet():
    net = gluon_net()
    net.load_parameters(os.path.join(DATA, 'gluon_net.params'))
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        net[:6].summary(nd.array(io_file()['x']))
    with open(os.path.join(DATA, 'gluon_net-summary.txt')) as f:
        assert text.getvalue() == f.read()


class Split(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.split(x, num_outputs=2, axis=1)


class Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.a = nn.Dense(4, in_units=3)
            self.b = nn.Dense(4, in_units=4)
            self.c = nn.Dense(4, in_units=4, params=self.b.params)
            self.bn = nn.BatchNorm(in_channels=4)
            self.s = Split()

    def hybrid_forward(self, F, x):
        y = self.bn(self.c(self.b(self.a(x))))
        p, q = self.s(y)
        return p, [q, y]


def test_summary_with_nested_outputs_and_shared_parameters_as_mxnet():
    net = Net()
    net.initialize()
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        net.summary(nd.ones((2, 3)))
    assert text.getvalue().split('\n') == [
        '-' * 80,
        '        Layer (type)                                Output Shape         Param #',
        '=' * 80,
        '               Input                                      (2, 3)               0',
        '             Dense-1                                      (2, 4)              16',
        '             Dense-2                                      (2, 4)              20',
        '             Dense-3                                      (2, 4)              20',
        '         BatchNorm-4                                      (2, 4)              16',
        '             Split-5                              (2, 2), (2, 2)               0',
        '               Net-6                    (2, 2), [(2, 2), (2, 4)]               0',
        '=' * 80,
        'Parameters in forward computation graph, duplicate included',
        '   Total params: 72',
        '   Trainable params: 64',
        '   Non-trainable params: 8',
        'Shared params in forward computation graph: 20',
        'Unique parameters in model: 52',
        '-' * 80, '']
    net.hybridize()
    with pytest.raises(AssertionError,
                       match='"net0_dense0" must not be hybridized to print summary.'):
        net.summary(nd.ones((2, 3)))


# -------------------------------------------------------------------------------------------
# HybridBlock
# -------------------------------------------------------------------------------------------

def test_symbol_inputs_give_symbols_and_nested_outputs():
    net = Net()
    out = net(sym.var('data'))
    assert type(out) is tuple and type(out[1]) is list
    assert [repr(out[0]), repr(out[1][0]), repr(out[1][1])] == [
        '<Symbol net0_split0_split0>', '<Symbol net0_split0_split0>',
        '<Symbol net0_batchnorm0_fwd>']
    assert out[1][1].list_outputs() == ['net0_batchnorm0_fwd_output']
    net.initialize()
    check_hybrid(net, [data(2, 3)], train=True)
    net.hybridize()
    result = net(data(2, 3))
    assert type(result) is list and type(result[1]) is list        # as MXNet's regroup


class Nested(gluon.HybridBlock):
    """Nested inputs with None, nested outputs; parameters arrive as keyword arguments."""

    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.scale = self.params.get('scale', shape=(3,), init=mx.init.Constant(0.5))

    def hybrid_forward(self, F, x, pair, extra=None, scale=None):
        a, b = pair
        y = F.broadcast_mul(x, scale) + a * b
        if extra is not None:
            y = y - extra
        return [y, (F.sum(y), x * 2)]


@pytest.mark.parametrize('with_extra', [False, True])
def test_nested_inputs_none_arguments_and_keyword_parameters(with_extra):
    block = Nested()
    block.initialize()
    args = [data(2, 3), [data(2, 3, offset=1), data(2, 3, offset=2)],
            data(2, 3, offset=3) if with_extra else None]
    check_hybrid(block, args, train=True)


def test_parameters_come_on_the_input_context():
    seen = []

    class Where(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get('w', shape=(3,))

        def hybrid_forward(self, F, x, w):
            if F is nd:
                seen.append((x.context, w.context))
            return F.broadcast_add(x, w)

    block = Where()
    block.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    x1 = data(2, 3).as_in_context(mx.cpu(1))
    assert block(x1).context == mx.cpu(1)
    assert seen == [(mx.cpu(1), mx.cpu(1))]
    check_hybrid(block, [x1])
    block.hybridize()
    out0, out1 = block(data(2, 3)), block(x1)
    assert (out0.context, out1.context) == (mx.cpu(0), mx.cpu(1))
    np.testing.assert_array_equal(out0.asnumpy(), out1.asnumpy())
    nested = Nested()
    nested.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    nested.hybridize()
    with pytest.raises(ValueError, match='Find multiple contexts in the input, After hybridized, '
                                         'the HybridBlock only supports one input context.'):
        nested(data(2, 3), [data(2, 3), x1])


def test_mixed_and_missing_inputs_errors_as_mxnet():
    block = Nested()
    block.initialize()
    message = ('In HybridBlock, we do not support mixed NDArrays and Symbols types for the '
               'input. Please check the type of the args.\n')
    with pytest.raises(ValueError) as info:
        block(data(2, 3), [sym.var('a'), data(2, 3)])
    assert str(info.value) == message
    with pytest.raises(ValueError) as info:
        block(sym.var('x'), [data(2, 3), data(2, 3)])
    assert str(info.value) == message
    with pytest.raises(ValueError) as info:
        block(None, [None, None])
    assert str(info.value) == ('In HybridBlock, there must be one NDArray or one Symbol in the '
                               'input. Please check the type of the args.\n')
    block.hybridize()
    with pytest.raises(ValueError, match="When hybridized, the input of HybridBlock must be "
                                         "\\(nested\\) list of Symbol or NDArray, but got 3 of "
                                         "type <class 'int'>"):
        block(data(2, 3), [data(2, 3), data(2, 3)], 3)


def test_non_hybrid_children_are_refused():
    with pytest.raises(ValueError, match="Children of HybridBlock must also be HybridBlock, but "
                                         "Lambda\\(tanh\\) has type <class 'hybridlib.nn."
                                         "basic_layers.Lambda'>. If you are using Sequential, "
                                         'please try HybridSequential instead.'):
        nn.HybridSequential().add(nn.Lambda('tanh'))


@pytest.mark.parametrize('hybridize', [False, True])
def test_deferred_initialisation_on_the_first_call(hybridize):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(3, 3), nn.BatchNorm(), nn.Dense(2))
    net.initialize()
    with pytest.raises(gluon.DeferredInitializationError):
        net[0].weight.data()
    net.hybridize(hybridize)
    assert net(data(2, 4, 5, 5)).shape == (2, 2)
    assert [p.shape for p in net.collect_params().values()] == [
        (3, 4, 3, 3), (3,), (3,), (3,), (3,), (3,), (2, 27), (2,)]


def test_deferred_initialisation_that_cannot_infer_says_so():
    class Unknown(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get('w', shape=(0, 2), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):
            return F.broadcast_add(x, F.sum(w))

    block = Unknown()
    block.initialize()
    with pytest.raises(ValueError, match='Deferred initialization failed because shape cannot be '
                                         "inferred: parameter 'unknown0_w' .* shape \\(0, 2\\)"):
        block(data(2))


def test_infer_shape_and_infer_type():
    net = nn.HybridSequential()
    net.add(nn.Dense(3), nn.BatchNorm())
    net.initialize()
    net.infer_shape(nd.ones((2, 5)))
    assert [(k, v.shape) for k, v in net.collect_params().items()] == [
        ('dense0_weight', (3, 5)), ('dense0_bias', (3,)), ('batchnorm0_gamma', (3,)),
        ('batchnorm0_beta', (3,)), ('batchnorm0_running_mean', (3,)),
        ('batchnorm0_running_var', (3,))]
    net.cast('float64')
    net.infer_type(nd.ones((2, 5), dtype='float64'))    # MXNet fails here: a stale var dtype
    assert {np.dtype(v.dtype).name for v in net.collect_params().values()} == {'float64'}


def test_unused_inputs_and_parameters_warn_as_mxnet():
    class Unused(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get('w', shape=(2,))

        def hybrid_forward(self, F, x, y, w):
            return x * 2

    block = Unused()
    block.initialize()
    block.hybridize()
    with caught_warnings() as caught:
        assert block(nd.ones((2,)), nd.ones((2,))).asnumpy().tolist() == [2, 2]
    assert [str(w.message) for w in caught] == [
        'The 1-th input to HybridBlock is not used by any computation. Is this intended?',
        'Parameter unused0_w is not used by any computation. Is this intended?']


def test_op_hook_sees_every_operator_output():
    net = Net()
    net.initialize()
    net.hybridize()
    seen = []
    net.register_op_hook(lambda name, op, arr: seen.append((name.decode(), str(op), arr.shape)))
    net(nd.ones((2, 3)))
    assert [(op, shape) for _, op, shape in seen] == [
        ('FullyConnected', (2, 4)), ('FullyConnected', (2, 4)), ('FullyConnected', (2, 4)),
        ('BatchNorm', (2, 4)), ('SliceChannel', (2, 2)), ('SliceChannel', (2, 2))]
    assert all(isinstance(name, str) for name, _, _ in seen)


# what MXNet 1.9.1's callback received (bytes there) for Net()(nd.ones((2, 3)))
HOOK_OUTPUTS = ['net0_dense0_fwd_output', 'net0_dense1_fwd_output', 'net0_dense2_fwd_output',
                'net0_batchnorm0_fwd_output', 'net0_split0_split0_output0',
                'net0_split0_split0_output1']
HOOK_ALL = [
    'net0_dense0_fwd_data', 'net0_dense0_fwd_weight', 'net0_dense0_fwd_bias',
    'net0_dense0_fwd_output', 'net0_dense1_fwd_data', 'net0_dense1_fwd_weight',
    'net0_dense1_fwd_bias', 'net0_dense1_fwd_output', 'net0_dense2_fwd_data',
    'net0_dense2_fwd_weight', 'net0_dense2_fwd_bias', 'net0_dense2_fwd_output',
    'net0_batchnorm0_fwd_data', 'net0_batchnorm0_fwd_gamma', 'net0_batchnorm0_fwd_beta',
    'net0_batchnorm0_fwd_moving_mean', 'net0_batchnorm0_fwd_moving_var',
    'net0_batchnorm0_fwd_output', 'net0_split0_split0_data', 'net0_split0_split0_output0',
    'net0_split0_split0_output1']


@pytest.mark.parametrize('monitor_all, expected', [(False, HOOK_OUTPUTS), (True, HOOK_ALL)])
def test_op_hook_names_as_mxnet(monitor_all, expected):
    net = Net()
    net.initialize()
    net.hybridize()
    seen = []
    net.register_op_hook(lambda name, op, arr: seen.append(name.decode()), monitor_all)
    net(nd.ones((2, 3)))
    assert seen == expected


# -------------------------------------------------------------------------------------------
# The trace cache
# -------------------------------------------------------------------------------------------

class Counting(gluon.HybridBlock):
    """Counts its traces; branches on the training mode; optionally reads a shape."""

    def __init__(self, read_shape=False):
        super().__init__()
        self.traces = 0
        self.read_shape = read_shape
        with self.name_scope():
            self.dense = nn.Dense(3)

    def hybrid_forward(self, F, x, y=None, **params):
        if F is sym:
            self.traces += 1
        out = self.dense(x)
        if y is not None:
            out = F.broadcast_add(out, y)
        if autograd.is_training():
            out = out * 2
        if self.read_shape:
            out = out.reshape((x.shape[0] * 3,))
        return out


def test_the_cache_is_keyed_by_everything_that_changes_the_graph():
    block = Counting()
    block.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    block.hybridize()
    x, y = data(2, 4), data(2, 3)
    block(x)
    block(x)
    assert block.traces == 1
    block(data(5, 4))
    assert block.traces == 1, 'another batch size: the trace read no shape'
    block(x, y)
    assert block.traces == 2, 'another argument'
    block(x, None)
    assert block.traces == 3, 'a None argument'
    with autograd.train_mode():
        block(x)
    assert block.traces == 4, 'training mode'
    with autograd.record():
        block(x)
    assert block.traces == 4, 'recording is not a new graph'
    block(x.as_in_context(mx.cpu(1)))
    assert block.traces == 5, 'context'
    for what, change in [('hybridize', lambda: block.hybridize()),
                         ('a new child', lambda: setattr(block, 'dense', nn.Dense(3))),
                         ('a new parameter',
                          lambda: setattr(block, 'p', block.params.get('p', shape=(1,)))),
                         ('cast', lambda: block.cast('float32')),
                         ('op hook', lambda: block.register_op_hook(lambda *a: None))]:
        traces = block.traces
        change()
        with caught_warnings():
            block.collect_params().initialize(ctx=[mx.cpu(0), mx.cpu(1)])
            block(x)
        assert block.traces == traces + 1, what


def test_the_nesting_of_the_inputs_is_part_of_the_key():
    traces = []

    class Flexible(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            traces.append(1)
            return (x[0] if isinstance(x, list) else x) * 2

    block = Flexible()
    block.hybridize()
    x = data(2, 3)
    for args in [x, [x], x, [x]]:
        np.testing.assert_allclose(block(args).asnumpy(), x.asnumpy() * 2, rtol=1e-6)
    assert len(traces) == 2


def test_copies_and_pickles_trace_again_and_keep_their_structure():
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=3))
    net.initialize()
    net.hybridize()
    x = data(1, 3)
    expected = net(x).asnumpy()
    for copied in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert not copied._traces and copied[0] is not net[0]
        np.testing.assert_allclose(copied(x).asnumpy(), expected, rtol=1e-6)
        copied[0].cast('float64')                 # clears the copy's cache, not the original's
        assert not copied._traces and net._traces
        assert copied(x.astype('float64')).dtype == np.float64


def test_dtype_is_part_of_the_key():
    block = Counting()
    block.initialize()
    block.hybridize()
    block(data(2, 4))
    block.cast('float64')
    block(data(2, 4).astype('float64'))
    block(data(2, 4).astype('float64'))
    assert block.traces == 2


def test_repeated_calls_see_every_change_of_the_parameters(tmp_path):
    """A repeated hybridized call keeps the parameters' arrays: whatever replaces them is seen."""
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=4), nn.Dense(2, in_units=3))
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    x = data(2, 4)

    def expected():
        h = x.asnumpy() @ net[0].weight.data().asnumpy().T + net[0].bias.data().asnumpy()
        return h @ net[1].weight.data().asnumpy().T + net[1].bias.data().asnumpy()

    net.save_parameters(str(tmp_path / 'net.params'))
    changes = [
        ('set_data', lambda: net[0].weight.set_data(nd.ones((3, 4)))),
        ('in-place write', lambda: net[1].bias.data().__setitem__(slice(None), 5)),
        ('force_reinit', lambda: net.initialize(mx.init.Normal(), force_reinit=True)),
        ('load_parameters', lambda: net.load_parameters(str(tmp_path / 'net.params'))),
        ('reset_ctx', lambda: net.collect_params().reset_ctx(mx.cpu(0))),
        ('grad_req', lambda: net.collect_params().setattr('grad_req', 'null')),
    ]
    for what, change in changes:
        net(x)
        change()
        np.testing.assert_allclose(net(x).asnumpy(), expected(), rtol=1e-5, err_msg=what)
    with autograd.record():                     # no gradient wanted: recorded as nothing
        assert net(x)._entry is None
    net.collect_params().setattr('grad_req', 'write')
    with autograd.record():
        net(x).sum().backward()
    np.testing.assert_allclose(net[1].bias.grad().asnumpy(), [2, 2])


def test_changing_a_grandchild_clears_the_ancestors_caches():
    """MXNet keeps running the outer block's stale graph here."""
    class Outer(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.inner = nn.HybridSequential()
                self.inner.add(nn.Dense(2))

        def hybrid_forward(self, F, x):
            return self.inner(x)

    outer = Outer()
    outer.initialize()
    outer.hybridize()
    x = data(2, 3)
    assert outer(x).shape == (2, 2)
    outer.inner.add(nn.Dense(5))
    outer.inner[1].initialize()
    assert outer(x).shape == (2, 5)
    outer.inner[1].cast('float64')
    assert not outer._traces
    outer.inner[1].cast('float32')
    assert outer(x).shape == (2, 5)
    check_hybrid(outer, [x])


# -------------------------------------------------------------------------------------------
# Better than MXNet: shapes while tracing, errors that name the block
# -------------------------------------------------------------------------------------------

def test_shape_dtype_and_ndim_are_real_while_tracing():
    seen = []

    class Reads(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            seen.append((F.__name__.split('.')[-1], x.shape, x.ndim, x.dtype))
            return x.reshape((x.shape[0] * x.shape[1], -1)) * 2

    block = Reads()
    block.hybridize()
    assert block(nd.ones((2, 3, 4))).shape == (6, 4)
    assert block(nd.ones((2, 3, 4))).shape == (6, 4)
    assert block(nd.ones((3, 3, 4))).shape == (9, 4)          # traced again for the new shape
    assert seen == [('symbol', (2, 3, 4), 3, np.float32), ('symbol', (3, 3, 4), 3, np.float32)]
    check_hybrid(block, [data(2, 3, 4)])


def test_shape_reading_trace_is_redone_per_shape_but_others_are_not():
    block = Counting(read_shape=True)
    block.initialize()
    block.hybridize()
    assert block(data(2, 4)).shape == (6,)
    assert block(data(5, 4)).shape == (15,)
    assert block(data(2, 4)).shape == (6,)
    assert block.traces == 2


class Folds(gluon.HybridBlock):
    """Scales its rows, then folds them into one by the input's shape: a trace per shape."""

    def __init__(self):
        super().__init__()
        self.traces = 0
        with self.name_scope():
            self.scale = self.params.get('scale', shape=(1, 4), init=mx.init.Uniform())

    def hybrid_forward(self, F, x, scale):
        if F is sym:
            self.traces += 1
        return F.broadcast_mul(x, scale).reshape((1, x.shape[0] * x.shape[1])) + 1


def generated_sources():
    """The compiled graphs' source kept in linecache (for tracebacks)."""
    return {f for f in linecache.cache if f.startswith('<hybridlib-cached-op-')}


def test_shape_reading_traces_are_bounded_least_recently_used_dropped():
    bound = tracing.MAX_TRACES
    net = Folds()
    net.initialize()
    net.hybridize()
    before = generated_sources()
    net(data(1, 4))
    first = net.cached_op
    kept = {}
    for rows in range(1, 501):
        x = data(rows, 4, offset=rows)
        out = net(x)
        expected = net.hybrid_forward(nd, x, scale=net.scale.data())     # imperative
        assert out.shape == (1, rows * 4)
        assert np.array_equal(out.asnumpy(), expected.asnumpy()), rows
        kept[rows] = (len(net._traces), len(generated_sources() - before))
        assert max(kept[rows]) <= bound
    assert net.traces == 500
    assert kept[500] == kept[2 * bound]             # full since then, and not growing
    assert first.code is None                       # the first trace's plans were released
    for rows in range(500 - bound // 2, 501):       # recent shapes: served by their traces
        net(data(rows, 4))
    assert net.traces == 500
    net(data(1, 4))                                 # dropped long ago: traced again
    assert net.traces == 501
    net.hybridize()                                 # clearing releases every trace
    assert not net._traces and not generated_sources() - before


def test_the_trace_dropped_is_the_least_recently_used(monkeypatch):
    monkeypatch.setattr(tracing, 'MAX_TRACES', 4)  # the shapes' marker and 3 traces
    net = Folds()
    net.initialize()
    net.hybridize()
    for rows in (1, 2, 3, 1, 4):                        # 1 used again: 2 is the oldest
        net(data(rows, 4))
    assert net.traces == 4
    net(data(1, 4))
    net(data(3, 4))
    assert net.traces == 4
    net(data(2, 4))
    assert net.traces == 5 and len(net._traces) == 4


class CastsLikeItsWeight(gluon.HybridBlock):
    """Reads its parameter's dtype and shape while tracing: both belong in the trace key."""

    def __init__(self):
        super().__init__()
        self.traces = 0
        with self.name_scope():
            self.w = self.params.get('w', shape=(3,), init=mx.init.Uniform())

    def hybrid_forward(self, F, x, w):
        if F is sym:
            self.traces += 1
        return F.cast(x, dtype=w.dtype).reshape((-1, w.shape[0])) * w * 1.001


def test_a_trace_is_keyed_by_its_parameters_dtypes():
    net = CastsLikeItsWeight()
    net.initialize()
    net.hybridize()
    x = data(2, 3)
    assert net(x).dtype == np.float32
    net.w.cast('float16')      # the Parameter itself, not Block.cast: no trace is cleared
    out = net(x)
    expected = net.hybrid_forward(nd, x, w=net.w.data())
    assert out.dtype == expected.dtype == np.float16
    assert np.array_equal(out.asnumpy(), expected.asnumpy())
    assert net.traces == 2
    net.w.cast('float32')
    assert net(x).dtype == np.float32 and net.traces == 2      # the first trace again


def test_deferred_parameters_are_traced_once():
    net = nn.HybridSequential()
    net.add(nn.Dense(4), nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = data(3, 5)
    first = net(x)
    (trace,) = [v for v in net._traces.values()]
    assert net(x) is not first and [v for v in net._traces.values()] == [trace]
    check_hybrid(net, [x])


class Broken(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.reshape(x, shape=(7, 7))           # the line the error points at


def tracing_error(block, x):
    block.initialize()
    block.hybridize()
    with pytest.raises(mx.MXNetError) as info:
        block(x)
    return str(info.value)


def test_tracing_errors_name_the_block_path_and_the_line():
    net = nn.HybridSequential()
    with net.name_scope():
        inner = nn.HybridSequential()
        inner.add(nn.Dense(3), Broken())
        net.add(nn.Activation('relu'), inner)
    message = tracing_error(net, data(2, 5))
    assert 'cannot reshape' in message
    assert 'while tracing block hybridsequential0.1.1 (Broken): ' in message
    assert f'{__file__}:' in message and 'return F.reshape(x, shape=(7, 7))' in message


def test_tracing_errors_in_library_layers_point_at_the_users_line():
    class Wrong(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.dense = nn.Dense(3, in_units=4)

        def hybrid_forward(self, F, x):
            return self.dense(x) + 1                # the user's line

    message = tracing_error(Wrong(), data(2, 5))
    assert 'while tracing block wrong0.dense (Dense): ' in message
    assert 'return self.dense(x) + 1' in message


# -------------------------------------------------------------------------------------------
# SymbolBlock
# -------------------------------------------------------------------------------------------

def feature_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, activation='relu'), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net(data(2, 5))
    return net


def test_symbolblock_extracts_features_sharing_parameters():
    net = feature_net()
    x = data(2, 5)
    inputs = sym.var('data')
    internals = net(inputs).get_internals()
    assert internals.list_outputs() == [
        'data', 'hybridsequential0_dense0_weight', 'hybridsequential0_dense0_bias',
        'hybridsequential0_dense0_fwd_output', 'hybridsequential0_dense0_relu_fwd_output',
        'hybridsequential0_dense1_weight', 'hybridsequential0_dense1_bias',
        'hybridsequential0_dense1_fwd_output']
    features = gluon.SymbolBlock(internals['hybridsequential0_dense0_relu_fwd_output'], inputs,
                                 params=net.collect_params())
    assert repr(features) == ('SymbolBlock(\n<Symbol hybridsequential0_dense0_relu_fwd> : '
                              '1 -> 1\n)')
    assert (features.prefix, features.name, features.params.prefix) == ('', 'symbolblock0', '')
    assert sorted(features.collect_params()) == ['hybridsequential0_dense0_bias',
                                                 'hybridsequential0_dense0_weight']
    assert sorted(features._reg_params) == ['bias', 'weight']
    assert features.params['hybridsequential0_dense0_weight'] is net[0].weight
    np.testing.assert_allclose(features(x).asnumpy(), net[0](x).asnumpy(), rtol=1e-6)
    check_hybrid(features, [x], train=True)


def test_symbolblock_with_several_outputs_and_symbol_inputs():
    net = feature_net()
    inputs = sym.var('data')
    internals = net(inputs).get_internals()
    two = gluon.SymbolBlock([internals['hybridsequential0_dense0_fwd_output'],
                             internals['hybridsequential0_dense1_fwd_output']], inputs,
                            params=net.collect_params())
    out = two(data(2, 5))
    assert type(out) is list and [o.shape for o in out] == [(2, 4), (2, 3)]
    composed = two(sym.var('z'))
    assert [repr(s) for s in composed] == \
        ['<Symbol hybridsequential0_dense0_fwd>', '<Symbol hybridsequential0_dense1_fwd>']
    assert composed[0].list_inputs()[0] == 'z'
    check_hybrid(two, [data(2, 5)])


def test_symbolblock_inputs_must_be_variables():
    net = feature_net()
    internals = net(sym.var('data')).get_internals()
    output = internals['hybridsequential0_dense0_fwd_output']
    with pytest.raises(AssertionError, match='Input symbols must be variable, but <Symbol '
                                             'hybridsequential0_dense0_fwd> is an output of '
                                             'operators'):
        gluon.SymbolBlock(output, output)
    unused = gluon.SymbolBlock(output, [sym.var('data'), sym.var('other')])
    assert repr(unused) == 'SymbolBlock(\n<Symbol hybridsequential0_dense0_fwd> : 2 -> 1\n)'


def test_symbolblock_imports_and_casts(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=3), nn.BatchNorm(in_channels=2))
    net.initialize()
    net.hybridize()
    x = data(2, 3)
    expected = net(x).asnumpy()
    prefix = str(tmp_path / 'f4')
    net.export(prefix)
    block = gluon.SymbolBlock.imports(prefix + '-symbol.json', 'data', prefix + '-0000.params')
    assert repr(block) == 'SymbolBlock(\n<Symbol batchnorm0_fwd> : 1 -> 1\n)'
    assert [(k, np.dtype(v.dtype).name, v.grad_req) for k, v in block.params.items()] == [
        ('dense0_weight', 'float32', 'write'), ('dense0_bias', 'float32', 'write'),
        ('batchnorm0_gamma', 'float32', 'write'), ('batchnorm0_beta', 'float32', 'write'),
        ('batchnorm0_running_mean', 'float32', 'null'),
        ('batchnorm0_running_var', 'float32', 'null')]
    np.testing.assert_allclose(block(x).asnumpy(), expected, rtol=1e-6)
    # parameters take the dtypes of the file
    half = {k: v.astype('float16') for k, v in nd.load(prefix + '-0000.params').items()}
    nd.save(prefix + '-half.params', half)
    block16 = gluon.SymbolBlock.imports(prefix + '-symbol.json', ['data'],
                                        prefix + '-half.params')
    assert {np.dtype(v.dtype).name for v in block16.params.values()} == {'float16'}
    # cast to float16 keeps BatchNorm in float32, as MXNet
    block.cast('float16')
    assert [(k, np.dtype(v.dtype).name) for k, v in block.params.items()] == [
        ('dense0_weight', 'float16'), ('dense0_bias', 'float16'),
        ('batchnorm0_gamma', 'float32'), ('batchnorm0_beta', 'float32'),
        ('batchnorm0_running_mean', 'float32'), ('batchnorm0_running_var', 'float32')]
    without = gluon.SymbolBlock.imports(prefix + '-symbol.json', ['data'])
    without.initialize(mx.init.One())       # MXNet too fills running_var uniformly by default
    assert without(x).shape == (2, 2)


def test_symbolblock_rejects_another_input_structure():
    net = feature_net()
    block = gluon.SymbolBlock(net(sym.var('data')), sym.var('data'),
                              params=net.collect_params())
    with pytest.raises(ValueError, match='The argument structure of HybridBlock does not match'):
        block(data(2, 5), data(2, 5))


def test_usage_errors_are_caught_as_mxnet_code_catches_them():
    for kind in (AssertionError, ValueError, mx.MXNetError):
        with pytest.raises(kind):
            raise UsageError('wrong use')


class _Branches(mx.gluon.HybridBlock):
    """A block whose hybrid_forward branches on a Python attribute."""

    def __init__(self):
        super().__init__()
        self.use_relu = True

    def hybrid_forward(self, F, x):
        return F.relu(x) if self.use_relu else F.tanh(x)


def test_hybridize_check_catches_a_stale_graph():
    x = mx.nd.array([[-1.0, 0.5]])
    net = _Branches()
    net.hybridize()
    net(x)
    net.use_relu = False
    np.testing.assert_allclose(net(x).asnumpy(), [[0.0, 0.5]])    # the trap: relu's values
    net = _Branches()
    net.hybridize(check=True, static_alloc=True)
    np.testing.assert_allclose(net(x).asnumpy(), [[0.0, 0.5]])
    np.testing.assert_allclose(net(x).asnumpy(), [[0.0, 0.5]])    # checked again: same path
    net.use_relu = False
    with pytest.raises(mx.MXNetError, match=r'_branches\d+ \(_Branches\).hybrid_forward took '
                                            'another path'):
        net(x)
    net.hybridize(check=True)                                   # traced anew
    np.testing.assert_allclose(net(x).asnumpy(), np.tanh([[-1.0, 0.5]]), rtol=1e-6)


def test_hybridize_check_compares_the_compiled_call(monkeypatch):
    net = mx.gluon.nn.Dense(3, in_units=2)
    net.initialize()
    net.hybridize(check=True, static_alloc=True)
    x = mx.nd.array([[1.0, 2.0]])
    net(x)
    from hybridlib.cached_op import Plan
    real = Plan.call
    monkeypatch.setattr(Plan, 'call', lambda self, fn, args: [r * 2 for r in real(self, fn, args)])
    with pytest.raises(mx.MXNetError, match='output 0 of dense.* differs'):
        net(x)


class _GroupNormLike(gluon.HybridBlock):
    """GluonCV's GroupNorm: BatchNorm on batch statistics whatever the call's mode, with
    constants made on the input's context (``x.context``, read while tracing)."""

    def hybrid_forward(self, F, x):
        groups = x.shape[1]
        with autograd.train_mode():
            y = F.BatchNorm(x, F.ones(groups, ctx=x.context),
                            F.zeros(groups, ctx=x.context), F.zeros(groups, ctx=x.context),
                            F.ones(groups, ctx=x.context))
        with autograd.predict_mode():      # and a node fixed to predict inside training
            z = F.BatchNorm(x, F.ones(groups), F.zeros(groups),
                            F.zeros(groups) + 1, F.ones(groups) * 4)
        return y + z


@pytest.mark.parametrize('train', [False, True])
def test_mode_scopes_inside_hybrid_forward_are_kept_when_hybridized(train):
    x = nd.array(np.random.RandomState(0).randn(1, 3, 4) * 3 + 2)
    net = _GroupNormLike()
    outs, grads = [], []
    for hybrid in (False, True):
        if hybrid:
            net.hybridize()
        x.attach_grad()
        with autograd.record(train_mode=train):
            out = net(x)
        out.backward(nd.array(np.arange(12).reshape(1, 3, 4)))
        outs.append(out.asnumpy())
        grads.append(x.grad.asnumpy())
    ref = x.asnumpy().reshape(3, 4)
    want = (ref - ref.mean(1, keepdims=True)) / np.sqrt(ref.var(1, keepdims=True) + 1e-3)
    want = want + (ref - 1) / np.sqrt(4 + 1e-3)
    np.testing.assert_allclose(outs[0].reshape(3, 4), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-5)
    with pytest.warns(UserWarning, match='fixed autograd mode'):
        net._cached_graph[1].tojson()
    with pytest.raises(AttributeError, match='only while a HybridBlock traces'):
        sym.var('a').context
