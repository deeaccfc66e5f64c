"""Basic layers (hybridlib/nn/basic_layers.py): MXNet 1.9.1's names, defaults, parameters and
reprs, and every layer imperative vs hybridized (outputs and gradients, both flag sets)."""
import inspect
import warnings

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd
from hybridlib.block import UsageError
from hybridlib.gluon import nn
from hybrid_check import check_hybrid, data, fresh_names  # noqa: F401 (a fixture)
from mxnet_layers import case_id, cases, check_against_mxnet


def describe(block):
    return (repr(block), block.name, block.prefix,
            [(k, v.shape, np.dtype(v.dtype).name, v.grad_req, str(v.init))
             for k, v in block.params.items()])


# (constructor, repr, name, parameters) printed by MXNet 1.9.1, each made in a fresh process
LAYERS = [
    ('nn.Dense(3)', 'Dense(None -> 3, linear)', 'dense0',
     [('dense0_weight', (3, 0), 'float32', 'write', 'None'),
      ('dense0_bias', (3,), 'float32', 'write', 'zeros')]),
    ("nn.Dense(3, activation='relu', in_units=4, use_bias=False)",
     'Dense(4 -> 3, Activation(relu))', 'dense0',
     [('dense0_weight', (3, 4), 'float32', 'write', 'None')]),
    ("nn.Dense(3, flatten=False, dtype='float64')", 'Dense(None -> 3, linear)', 'dense0',
     [('dense0_weight', (3, 0), 'float64', 'write', 'None'),
      ('dense0_bias', (3,), 'float64', 'write', 'zeros')]),
    ('nn.Dropout(0.3)', 'Dropout(p = 0.3, axes=())', 'dropout0', []),
    ('nn.Dropout(0.3, axes=(1,))', 'Dropout(p = 0.3, axes=(1,))', 'dropout0', []),
    ('nn.Dropout(0)', 'Dropout(p = 0, axes=())', 'dropout0', []),
    ('nn.BatchNorm()', 'BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, '
     'use_global_stats=False, in_channels=None)', 'batchnorm0',
     [('batchnorm0_gamma', (0,), 'float32', 'write', 'ones'),
      ('batchnorm0_beta', (0,), 'float32', 'write', 'zeros'),
      ('batchnorm0_running_mean', (0,), 'float32', 'null', 'zeros'),
      ('batchnorm0_running_var', (0,), 'float32', 'null', 'ones')]),
    ('nn.BatchNorm(axis=3, momentum=0.8, epsilon=1e-3, center=False, scale=False, '
     'use_global_stats=True, in_channels=5)',
     'BatchNorm(axis=3, eps=0.001, momentum=0.8, fix_gamma=True, use_global_stats=True, '
     'in_channels=5)', 'batchnorm0',
     [('batchnorm0_gamma', (5,), 'float32', 'null', 'ones'),
      ('batchnorm0_beta', (5,), 'float32', 'null', 'zeros'),
      ('batchnorm0_running_mean', (5,), 'float32', 'null', 'zeros'),
      ('batchnorm0_running_var', (5,), 'float32', 'null', 'ones')]),
    ("nn.Activation('sigmoid')", 'Activation(sigmoid)', 'sigmoid0', []),
    ('nn.Flatten()', 'Flatten', 'flatten0', []),
    ("nn.Lambda('tanh')", 'Lambda(tanh)', 'lambda0', []),
    ('nn.Lambda(lambda x: x)', 'Lambda(<lambda>)', 'lambda0', []),
    ("nn.HybridLambda('tanh')", 'HybridLambda(tanh)', 'hybridlambda0', []),
    ('nn.HybridLambda(lambda F, x: x)', 'HybridLambda(<lambda>)', 'hybridlambda0', []),
    ('nn.Embedding(10, 4)', 'Embedding(10 -> 4, float32)', 'embedding0',
     [('embedding0_weight', (10, 4), 'float32', 'write', 'None')]),
    ("nn.Embedding(10, 4, dtype='float16', weight_initializer='uniform')",
     'Embedding(10 -> 4, float16)', 'embedding0',
     [('embedding0_weight', (10, 4), 'float16', 'write', 'uniform')]),
    ('nn.InstanceNorm()', 'InstanceNorm(eps=1e-05, axis=1, center=True, scale=False, '
     'in_channels=0)', 'instancenorm0',
     [('instancenorm0_gamma', (0,), 'float32', 'null', 'ones'),
      ('instancenorm0_beta', (0,), 'float32', 'write', 'zeros')]),
    ('nn.InstanceNorm(axis=2, epsilon=1e-3, center=False, scale=True, in_channels=3)',
     'InstanceNorm(eps=0.001, axis=2, center=False, scale=True, in_channels=3)', 'instancenorm0',
     [('instancenorm0_gamma', (3,), 'float32', 'write', 'ones'),
      ('instancenorm0_beta', (3,), 'float32', 'null', 'zeros')]),
    ('nn.LayerNorm()', 'LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=0)',
     'layernorm0',
     [('layernorm0_gamma', (0,), 'float32', 'write', 'ones'),
      ('layernorm0_beta', (0,), 'float32', 'write', 'zeros')]),
    ("nn.LayerNorm(axis=1, epsilon=1e-3, center=False, scale=False, beta_initializer='ones', "
     "in_channels=5)", 'LayerNorm(eps=0.001, axis=1, center=False, scale=False, in_channels=5)',
     'layernorm0',
     [('layernorm0_gamma', (5,), 'float32', 'null', 'ones'),
      ('layernorm0_beta', (5,), 'float32', 'null', 'ones')]),
    # MXNet 1.9.1's GroupNorm has one gamma and beta per group, not per channel
    ('nn.GroupNorm()', 'GroupNorm(eps=1e-05, num_groups=1, center=True, scale=True)',
     'groupnorm0',
     [('groupnorm0_gamma', (1,), 'float32', 'write', 'ones'),
      ('groupnorm0_beta', (1,), 'float32', 'write', 'zeros')]),
    ('nn.GroupNorm(num_groups=2, epsilon=1e-3, center=False, scale=True)',
     'GroupNorm(eps=0.001, num_groups=2, center=False, scale=True)', 'groupnorm0',
     [('groupnorm0_gamma', (2,), 'float32', 'write', 'ones'),
      ('groupnorm0_beta', (2,), 'float32', 'null', 'zeros')]),
    ('nn.Sequential()', 'Sequential(\n\n)', 'sequential0', []),
    ('nn.HybridSequential()', 'HybridSequential(\n\n)', 'hybridsequential0', []),
]


@pytest.mark.parametrize('make, text, name, params', LAYERS, ids=[c[0] for c in LAYERS])
def test_names_parameters_and_repr_as_mxnet(make, text, name, params):
    block = eval(make)
    assert describe(block) == (text, name, name + '_', params)


# inspect.signature(cls.__init__) in MXNet 1.9.1
SIGNATURES = {
    'Sequential': '(self, prefix=None, params=None)',
    'HybridSequential': '(self, prefix=None, params=None)',
    'Dense': "(self, units, activation=None, use_bias=True, flatten=True, dtype='float32', "
             "weight_initializer=None, bias_initializer='zeros', in_units=0, **kwargs)",
    'Dropout': '(self, rate, axes=(), **kwargs)',
    'BatchNorm': "(self, axis=1, momentum=0.9, epsilon=1e-05, center=True, scale=True, "
                 "use_global_stats=False, beta_initializer='zeros', gamma_initializer='ones', "
                 "running_mean_initializer='zeros', running_variance_initializer='ones', "
                 "in_channels=0, **kwargs)",
    'Embedding': "(self, input_dim, output_dim, dtype='float32', weight_initializer=None, "
                 "sparse_grad=False, **kwargs)",
    'InstanceNorm': "(self, axis=1, epsilon=1e-05, center=True, scale=False, "
                    "beta_initializer='zeros', gamma_initializer='ones', in_channels=0, "
                    "**kwargs)",
    'LayerNorm': "(self, axis=-1, epsilon=1e-05, center=True, scale=True, "
                 "beta_initializer='zeros', gamma_initializer='ones', in_channels=0, "
                 "prefix=None, params=None)",
    'GroupNorm': "(self, num_groups=1, epsilon=1e-05, center=True, scale=True, "
                 "beta_initializer='zeros', gamma_initializer='ones', prefix=None, params=None)",
    'Activation': '(self, activation, **kwargs)',
    'Flatten': '(self, **kwargs)',
    'Lambda': '(self, function, prefix=None)',
    'HybridLambda': '(self, function, prefix=None)',
}


@pytest.mark.parametrize('name', SIGNATURES)
def test_signatures_as_mxnet(name):
    assert str(inspect.signature(getattr(nn, name).__init__)) == SIGNATURES[name]


def test_containers_repr_nested_as_mxnet():
    net = nn.Sequential()
    with net.name_scope():
        inner = nn.HybridSequential()
        inner.add(nn.Dense(2, in_units=3), nn.Activation('relu'))
        net.add(inner, nn.Dropout(0.5), nn.Lambda('tanh'))
    assert repr(net) == ('Sequential(\n'
                         '  (0): HybridSequential(\n'
                         '    (0): Dense(3 -> 2, linear)\n'
                         '    (1): Activation(relu)\n'
                         '  )\n'
                         '  (1): Dropout(p = 0.5, axes=())\n'
                         '  (2): Lambda(tanh)\n'
                         ')')
    assert [c.name for c in inner._children.values()] == \
        ['sequential0_dense0', 'sequential0_relu0']
    assert len(net) == 3 and net[1].name == 'sequential0_dropout0'
    part = net[1:]
    assert type(part) is nn.Sequential and part.prefix == 'sequential0_' and len(part) == 2


def test_dense_infers_in_units_and_repr_follows():
    layer = nn.Dense(4, activation='tanh')
    layer.initialize()
    assert repr(layer) == 'Dense(None -> 4, Activation(tanh))'
    layer(data(2, 3, 2))
    assert layer.weight.shape == (4, 6)
    assert repr(layer) == 'Dense(6 -> 4, Activation(tanh))'
    assert layer.act.name == 'dense0_tanh'


def test_sequential_warns_when_all_children_are_hybrid():
    net = nn.Sequential()
    net.add(nn.Dense(2), nn.Dense(3))
    with pytest.warns(UserWarning, match="All children of this Sequential layer 'sequential0_' "
                                         'are HybridBlocks'):
        net.hybridize()
    assert all(c._active for c in net._children.values())


def test_hybridsequential_rejects_plain_blocks():
    with pytest.raises(ValueError, match='Children of HybridBlock must also be HybridBlock'):
        nn.HybridSequential().add(nn.Lambda('tanh'))


def test_lambda_errors_as_mxnet():
    with pytest.raises(AssertionError, match='Function name nonexist is not found in ndarray'):
        nn.Lambda('nonexist')
    with pytest.raises(UsageError, match='not found in symbol/ndarray'):
        nn.HybridLambda('nonexist')
    with pytest.raises(ValueError, match="Unrecognized function in lambda: 3 of type "
                                         "<class 'int'>"):
        nn.Lambda(3)


# -------------------------------------------------------------------------------------------
# imperative vs hybridized
# -------------------------------------------------------------------------------------------

def initialized(block):
    block.initialize(mx.init.Xavier())
    return block


@pytest.mark.parametrize('make, shape, dtype', [
    (lambda: nn.Dense(3), (2, 4), 'float32'),
    (lambda: nn.Dense(3, activation='relu', use_bias=False), (2, 2, 3), 'float32'),
    (lambda: nn.Dense(3, flatten=False), (2, 2, 4), 'float32'),
    (lambda: nn.Dense(2, dtype='float64', in_units=3), (2, 3), 'float64'),
    (lambda: nn.Activation('sigmoid'), (2, 3), 'float32'),
    (lambda: nn.Activation('softrelu'), (2, 3), 'float32'),
    (lambda: nn.Flatten(), (2, 3, 2), 'float32'),
    (lambda: nn.HybridLambda('tanh'), (3, 2), 'float32'),
    (lambda: nn.HybridLambda(lambda F, x: F.LeakyReLU(x, slope=0.1)), (3, 2), 'float32'),
], ids=['dense', 'dense_relu_nobias', 'dense_noflatten', 'dense_f64', 'sigmoid', 'softrelu',
        'flatten', 'lambda_tanh', 'lambda_leaky'])
def test_layers_imperative_and_hybridized_agree(make, shape, dtype):
    check_hybrid(initialized(make()), [data(*shape).astype(dtype)])


@pytest.mark.parametrize('train', [False, True])
@pytest.mark.parametrize('kwargs, shape', [
    ({}, (4, 3)),
    ({'axis': 3, 'momentum': 0.5}, (2, 2, 2, 3)),
    ({'center': False, 'scale': False, 'epsilon': 1e-3}, (3, 2, 2)),
    ({'use_global_stats': True}, (4, 3)),
], ids=['default', 'axis3', 'no_center_scale', 'global_stats'])
def test_batchnorm_imperative_and_hybridized_agree(kwargs, shape, train):
    layer = initialized(nn.BatchNorm(**kwargs))
    layer(data(*shape))
    for p, v in ((layer.running_mean, 0.3), (layer.running_var, 1.7)):
        p.set_data(nd.array(np.linspace(v - 0.2, v + 0.2, p.shape[0])))
    result = check_hybrid(layer, [data(*shape)], train=train)
    after = result['params after']
    moved = not np.allclose(after['batchnorm0_running_mean'],
                            layer.running_mean.data().asnumpy())
    assert moved == (train and not kwargs.get('use_global_stats', False))


def test_batchnorm_running_statistics_as_mxnet():
    # MXNet 1.9.1: momentum 0.5, x = [[1, 2], [3, 6]], after a training step (forward and
    # backward): running_mean [1, 2], running_var [1, 2.5] (the batch's biased variance)
    layer = nn.BatchNorm(in_channels=2, momentum=0.5)
    layer.initialize()
    x = nd.array([[1., 2.], [3., 6.]])
    with autograd.record():
        y = layer(x)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), [[-0.999995, -0.9999988], [0.999995, 0.9999988]],
                               rtol=1e-6)
    assert layer.running_mean.data().asnumpy().tolist() == [1.0, 2.0]
    np.testing.assert_allclose(layer.running_var.data().asnumpy(), [1.0, 2.5], rtol=1e-6)


def test_batchnorm_cast_to_float16_keeps_float32_parameters():
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=2), nn.BatchNorm(in_channels=2))
    net.initialize()
    net.cast('float16')
    # as MXNet 1.9.1
    assert [(k, np.dtype(v.dtype).name) for k, v in net.collect_params().items()] == [
        ('dense0_weight', 'float16'), ('dense0_bias', 'float16'),
        ('batchnorm0_gamma', 'float32'), ('batchnorm0_beta', 'float32'),
        ('batchnorm0_running_mean', 'float32'),
        ('batchnorm0_running_var', 'float32')]


@pytest.mark.parametrize('rate, axes', [(0.5, ()), (0.3, (1,)), (0, ())])
@pytest.mark.parametrize('train', [False, True])
def test_dropout_imperative_and_hybridized_agree(rate, axes, train):
    """With a fixed seed the masks are the same; in predict mode Dropout is the identity."""
    x = data(3, 4, 2)
    result = check_hybrid(nn.Dropout(rate, axes=axes), [x], train=train)
    out = result['outputs'][0]
    if not train or rate == 0:
        np.testing.assert_array_equal(out, x.asnumpy())
    else:
        kept = out != 0
        np.testing.assert_allclose(out[kept], x.asnumpy()[kept] / (1 - rate), rtol=1e-6)
        if axes:
            assert (kept == kept[:, :1, :]).all()     # one mask along the shared axis


def test_dropout_in_training_mode_drops():
    mx.random.seed(1)
    with autograd.train_mode():
        out = nn.Dropout(0.5)(nd.ones((4, 50))).asnumpy()
    assert set(np.unique(out)) == {0.0, 2.0} and 0.3 < (out == 0).mean() < 0.7


def test_sequentials_imperative_and_hybridized_agree():
    net = nn.HybridSequential()
    with net.name_scope():
        inner = nn.HybridSequential()
        inner.add(nn.Dense(5, activation='relu'), nn.BatchNorm())
        net.add(inner, nn.Dropout(0.4), nn.Dense(3), nn.HybridLambda(lambda F, x: x * 2))
    check_hybrid(initialized(net), [data(4, 6)], train=True)


class Split(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.split(x, num_outputs=2, axis=1)


class Join(gluon.HybridBlock):
    def hybrid_forward(self, F, pair):
        a, b = pair
        return F.concat(b, a * 2, dim=1)


def test_sequential_passes_a_tuple_on_as_one_argument():
    # as MXNet 1.9.1: a child's outputs, however many, are the next child's one input (a list
    # of NDArrays, or while tracing a Symbol of several outputs, which unpacks the same way)
    net = nn.HybridSequential()
    net.add(nn.Dense(4), Split(), Join())
    check_hybrid(initialized(net), [data(2, 3)])
    plain = nn.Sequential()
    plain.add(Split(), Join())
    assert plain(data(2, 4)).shape == (2, 4)
    last = nn.HybridSequential()
    last.add(nn.Dense(4), Split())
    check_hybrid(initialized(last), [data(2, 3)])


def test_sequential_with_plain_blocks_runs_hybrid_children_compiled():
    net = nn.Sequential()
    with net.name_scope():
        net.add(nn.Dense(3), nn.Lambda(lambda x: x + 1), nn.Dense(2))
    net.initialize()
    x = data(2, 4)
    expected = net(x).asnumpy()
    with warnings.catch_warnings():
        warnings.simplefilter('error')      # not all children are hybrid: no advice
        net.hybridize()
    assert net[0]._active and net[2]._active
    np.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-6)
    assert net[0].cached_op is not None


# -------------------------------------------------------------------------------------------
# Embedding, InstanceNorm, LayerNorm, GroupNorm
# -------------------------------------------------------------------------------------------

@pytest.mark.parametrize('case', cases('nn.Embedding', 'nn.InstanceNorm', 'nn.LayerNorm',
                                       'nn.GroupNorm'), ids=case_id)
def test_norm_and_embedding_layers_compute_and_export_as_mxnet(case, tmp_path):
    check_against_mxnet(case, tmp_path)


TOKENS = nd.array([[1, 3, 3, 0], [9, 2, 1, 1]])


@pytest.mark.parametrize('train', [False, True])
@pytest.mark.parametrize('make, x', [
    (lambda: nn.Embedding(10, 3), TOKENS),
    (lambda: nn.Embedding(10, 2, dtype='float64'), TOKENS.astype('int32')),
    (lambda: nn.InstanceNorm(), data(2, 3, 4)),
    (lambda: nn.InstanceNorm(axis=3, scale=True, center=False, epsilon=1e-3), data(2, 3, 2, 4)),
    (lambda: nn.LayerNorm(), data(2, 3, 4)),
    (lambda: nn.LayerNorm(axis=1, center=False), data(2, 3, 4)),
    (lambda: nn.GroupNorm(), data(2, 3, 4)),
    (lambda: nn.GroupNorm(num_groups=2, scale=False), data(2, 4, 3, 2)),
], ids=['embedding', 'embedding_f64_int_ids', 'instancenorm', 'instancenorm_axis3',
        'layernorm', 'layernorm_axis1', 'groupnorm', 'groupnorm_2'])
def test_norm_and_embedding_imperative_and_hybridized_agree(make, x, train):
    check_hybrid(initialized(make()), [x], train=train)


def test_embedding_looks_up_rows_and_sums_their_gradients():
    layer = nn.Embedding(5, 2)
    layer.initialize()
    weight = np.arange(10.).reshape(5, 2)
    layer.weight.set_data(nd.array(weight))
    ids = nd.array([[4, 0], [4, 7.9]])        # floats truncate; out of range clips (as MXNet)
    with autograd.record():
        out = layer(ids)
    out.backward(nd.array(np.arange(8.).reshape(2, 2, 2)))
    np.testing.assert_array_equal(out.asnumpy(), weight[[[4, 0], [4, 4]]])
    np.testing.assert_array_equal(layer.weight.grad().asnumpy(),
                                  [[2, 3], [0, 0], [0, 0], [0, 0], [0 + 4 + 6, 1 + 5 + 7]])


def test_embedding_dtype_and_cast():
    layer = nn.Embedding(5, 2, dtype='float16')
    layer.initialize()
    assert layer(nd.array([1, 2])).dtype == np.float16
    layer.cast('float64')
    assert layer(nd.array([1, 2])).dtype == np.float64
    assert repr(layer) == 'Embedding(5 -> 2, float16)'        # the argument, as MXNet


def test_embedding_sparse_grad_keeps_a_dense_gradient_and_says_so():
    with pytest.warns(UserWarning, match='embedding0 with sparse_grad=True: hybridlib has no '
                                         'sparse storage'):
        layer = nn.Embedding(4, 2, sparse_grad=True)
    layer.initialize()
    with autograd.record():
        out = layer(nd.array([1, 1]))
    out.backward()
    assert layer.weight.grad().asnumpy().tolist() == [[0, 0], [2, 2], [0, 0], [0, 0]]
    layer.hybridize()
    layer(nd.array([1]))
    assert layer._cached_graph[1].get_internals()['embedding0_fwd_output'].attr(
        'sparse_grad') == 'True'


def test_norm_layers_normalise_as_their_formulas():
    x = data(2, 4, 3, offset=0.5).asnumpy().astype(np.float64)

    def normalise(v, axes, eps=1e-5):
        return (v - v.mean(axes, keepdims=True)) / np.sqrt(v.var(axes, keepdims=True) + eps)

    layer = initialized(nn.LayerNorm(axis=1, gamma_initializer=mx.init.Constant(2.0),
                                     beta_initializer=mx.init.Constant(0.5)))
    np.testing.assert_allclose(layer(nd.array(x)).asnumpy(), normalise(x, 1) * 2 + 0.5,
                               rtol=1e-5, atol=1e-6)
    layer = initialized(nn.InstanceNorm(axis=2, epsilon=1e-3))
    np.testing.assert_allclose(layer(nd.array(x)).asnumpy(), normalise(x, 1, 1e-3),
                               rtol=1e-5, atol=1e-6)
    assert layer.gamma.shape == (3,)
    layer = initialized(nn.GroupNorm(num_groups=2))
    layer.gamma.set_data(nd.array([1.5, -1]))
    grouped = normalise(x.reshape(2, 2, 6), 2).reshape(2, 2, 2, 3) * np.array([1.5, -1]).reshape(
        1, 2, 1, 1)
    np.testing.assert_allclose(layer(nd.array(x)).asnumpy(), grouped.reshape(2, 4, 3),
                               rtol=1e-5, atol=1e-6)


def test_layernorm_instancenorm_infer_in_channels_and_repr_follows():
    layer = initialized(nn.LayerNorm())
    layer(data(2, 5))
    assert repr(layer) == 'LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=5)'
    layer = initialized(nn.InstanceNorm(axis=-1))
    layer(data(2, 3, 4))
    assert layer.gamma.shape == (4,) and layer.beta.shape == (4,)


def test_norm_layers_refuse_wrong_shapes():
    with pytest.raises(mx.MXNetError, match='4 channels are not divisible by num_groups=3'):
        initialized(nn.GroupNorm(num_groups=3))(nd.ones((2, 4, 3)))
    with pytest.raises(mx.MXNetError, match=r'gamma: expected \(4,\), got \(3,\)'):
        initialized(nn.LayerNorm(in_channels=3))(nd.ones((2, 4)))
    with pytest.raises(mx.MXNetError, match='InstanceNorm needs data of rank >= 3'):
        initialized(nn.InstanceNorm())(nd.ones((2, 4)))


def test_embed_text_reference_model_gives_mxnet_outputs():
    """tests/data/reference's embed_text (Embedding -> Dense -> mean -> Dense), built by the
    manifest's code and loaded from MXNet's parameter file."""
    from test_reference_export import CASES, _build, _io, _load
    case = CASES['embed_text']
    io = _io(case)
    net = _load(_build(case), case)
    np.testing.assert_allclose(net(nd.array(io['input0'])).asnumpy(), io['out0'],
                               rtol=case['rtol'], atol=case['atol'])
