"""gluon.contrib.nn (hybridlib/contrib/nn.py): MXNet 1.9.1's names, signatures, parameters,
reprs, numbers and exported graphs; imperative vs hybridized; numpy references."""
import inspect
import warnings

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd
from hybridlib.gluon import nn
from hybrid_check import check_hybrid, data, fresh_names  # noqa: F401 (a fixture)
from mxnet_layers import case_id, cases, check_against_mxnet, concurrent

cnn = gluon.contrib.nn

# (constructor, repr, name, parameters) printed by MXNet 1.9.1
LAYERS = [
    ('cnn.Concurrent()', 'Concurrent(\n\n)', 'concurrent0', []),
    ('cnn.HybridConcurrent(axis=1)', 'HybridConcurrent(\n\n)', 'hybridconcurrent0', []),
    ('cnn.Identity()', 'Identity(\n\n)', 'identity0', []),
    ('cnn.PixelShuffle1D(2)', 'PixelShuffle1D(2)', 'pixelshuffle1d0', []),
    ('cnn.PixelShuffle2D(2)', 'PixelShuffle2D((2, 2))', 'pixelshuffle2d0', []),
    ('cnn.PixelShuffle2D((2, 3))', 'PixelShuffle2D((2, 3))', 'pixelshuffle2d0', []),
    ('cnn.PixelShuffle3D(2)', 'PixelShuffle3D((2, 2, 2))', 'pixelshuffle3d0', []),
    ('cnn.PixelShuffle3D((1, 2, 3))', 'PixelShuffle3D((1, 2, 3))', 'pixelshuffle3d0', []),
    ('cnn.SyncBatchNorm(num_devices=1)',
     "SyncBatchNorm(eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False, ndev=1, "
     "key='syncbatchnorm0_', in_channels=None)", 'syncbatchnorm0',
     [('syncbatchnorm0_gamma', (0,), 'float32', 'write', 'ones'),
      ('syncbatchnorm0_beta', (0,), 'float32', 'write', 'zeros'),
      ('syncbatchnorm0_running_mean', (0,), 'float32', 'null', 'zeros'),
      ('syncbatchnorm0_running_var', (0,), 'float32', 'null', 'ones')]),
    ('cnn.SyncBatchNorm(in_channels=3, num_devices=1, scale=False)',
     "SyncBatchNorm(eps=1e-05, momentum=0.9, fix_gamma=True, use_global_stats=False, ndev=1, "
     "key='syncbatchnorm0_', in_channels=3)", 'syncbatchnorm0',
     [('syncbatchnorm0_gamma', (3,), 'float32', 'null', 'ones'),
      ('syncbatchnorm0_beta', (3,), 'float32', 'write', 'zeros'),
      ('syncbatchnorm0_running_mean', (3,), 'float32', 'null', 'zeros'),
      ('syncbatchnorm0_running_var', (3,), 'float32', 'null', 'ones')]),
    ('cnn.SparseEmbedding(10, 4)', 'SparseEmbedding(10 -> 4, float32)', 'sparseembedding0',
     [('sparseembedding0_weight', (10, 4), 'float32', 'write', 'None')]),
]


@pytest.mark.parametrize('make, text, name, params', LAYERS, ids=[c[0] for c in LAYERS])
def test_names_parameters_and_repr_as_mxnet(make, text, name, params):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')       # SparseEmbedding's note on dense storage
        block = eval(make)
    assert (repr(block), block.name, block.prefix) == (text, name, name + '_')
    assert [(k, v.shape, np.dtype(v.dtype).name, v.grad_req, str(v.init))
            for k, v in block.params.items()] == params


# inspect.signature(cls.__init__) in MXNet 1.9.1
SIGNATURES = {
    'Concurrent': '(self, axis=-1, prefix=None, params=None)',
    'HybridConcurrent': '(self, axis=-1, prefix=None, params=None)',
    'Identity': '(self, prefix=None, params=None)',
    'SparseEmbedding': "(self, input_dim, output_dim, dtype='float32', weight_initializer=None, "
                       "**kwargs)",
    'SyncBatchNorm': "(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-05, "
                     "center=True, scale=True, use_global_stats=False, beta_initializer='zeros', "
                     "gamma_initializer='ones', running_mean_initializer='zeros', "
                     "running_variance_initializer='ones', **kwargs)",
    'PixelShuffle1D': '(self, factor)',
    'PixelShuffle2D': '(self, factor)',
    'PixelShuffle3D': '(self, factor)',
}


def test_exports_and_signatures_as_mxnet():
    assert cnn.__all__ == ['Concurrent', 'HybridConcurrent', 'Identity', 'SparseEmbedding',
                           'SyncBatchNorm', 'PixelShuffle1D', 'PixelShuffle2D', 'PixelShuffle3D']
    for name, text in SIGNATURES.items():
        assert str(inspect.signature(getattr(cnn, name).__init__)) == text, name


@pytest.mark.parametrize('case', cases('cnn.', 'concurrent('), ids=case_id)
def test_layers_compute_and_export_as_mxnet(case, tmp_path):
    # SyncBatchNorm: MXNet's numbers (training step on one device, running statistics
    # included); its graph is not compared (a BatchNorm node here, _contrib_SyncBatchNorm there)
    check_against_mxnet(case, tmp_path)


def test_concurrent_repr_children_and_slices():
    net = concurrent(cnn.HybridConcurrent(axis=1))
    assert repr(net) == ('HybridConcurrent(\n'
                         '  (0): Dense(None -> 3, linear)\n'
                         '  (1): Identity(\n'
                         '  \n'
                         '  )\n'
                         '  (2): Dense(None -> 2, Activation(tanh))\n'
                         ')')
    assert [c.name for c in net._children.values()] == [
        'hybridconcurrent0_dense0', 'hybridconcurrent0_identity0', 'hybridconcurrent0_dense1']
    part = net[1:]
    # MXNet 1.9.1's slice is a HybridConcurrent with the default axis -1; hybridlib keeps the
    # axis, so the slice concatenates as the whole does
    assert type(part) is cnn.HybridConcurrent and part.axis == 1 and len(part) == 2
    net.initialize()
    x = data(2, 4)
    np.testing.assert_array_equal(part(x).asnumpy(), net(x).asnumpy()[:, 3:])


@pytest.mark.parametrize('train', [False, True])
@pytest.mark.parametrize('make, shape', [
    (lambda: concurrent(cnn.HybridConcurrent(axis=1)), (2, 4)),
    (lambda: concurrent(cnn.HybridConcurrent()), (3, 4)),
    (lambda: cnn.Identity(), (2, 3)),
    (lambda: cnn.PixelShuffle1D(3), (2, 6, 2)),
    (lambda: cnn.PixelShuffle2D((2, 1)), (1, 4, 2, 3)),
    (lambda: cnn.PixelShuffle3D(2), (1, 8, 1, 2, 2)),
], ids=['hybridconcurrent1', 'hybridconcurrent', 'identity', 'pixelshuffle1d',
        'pixelshuffle2d', 'pixelshuffle3d'])
def test_layers_imperative_and_hybridized_agree(make, shape, train):
    block = make()
    block.initialize(mx.init.Xavier())
    check_hybrid(block, [data(*shape)], train=train)


@pytest.mark.parametrize('train', [False, True])
def test_syncbatchnorm_imperative_and_hybridized_agree_and_equal_batchnorm(train):
    sync = cnn.SyncBatchNorm(num_devices=1, momentum=0.7, prefix='bn_')
    plain = nn.BatchNorm(momentum=0.7, prefix='bn_')
    x = data(4, 3, 2)
    results = []
    for layer in (sync, plain):
        layer.initialize()
        layer(x)
        layer.running_mean.set_data(nd.array([0.1, -0.2, 0.3]))
        results.append(check_hybrid(layer, [x], train=train))
    for key in ('outputs', 'input grads'):
        np.testing.assert_allclose(results[0][key][0], results[1][key][0], rtol=1e-6)
    for key in ('param grads', 'params after'):
        for name, value in results[1][key].items():
            np.testing.assert_allclose(results[0][key][name], value, rtol=1e-6)


def test_syncbatchnorm_warnings():
    with pytest.warns(UserWarning, match='Caution using SyncBatchNorm: if not using all the '
                                         'GPUs, please mannually set num_devices'):
        layer = cnn.SyncBatchNorm()
    assert layer._kwargs['ndev'] == max(mx.context.num_gpus(), 1)
    with pytest.warns(UserWarning, match='syncbatchnorm1: hybridlib does not synchronise batch '
                                         'statistics across devices'):
        layer = cnn.SyncBatchNorm(num_devices=2)
    assert "ndev=2, key='syncbatchnorm1_'" in repr(layer)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        cnn.SyncBatchNorm(num_devices=1)


def test_syncbatchnorm_cast_to_float16_keeps_float32_parameters():
    layer = cnn.SyncBatchNorm(in_channels=2, num_devices=1)
    layer.initialize()
    layer.cast('float16')
    assert {np.dtype(p.dtype).name for p in layer.collect_params().values()} == {'float32'}


def test_concurrent_runs_children_on_the_same_input():
    net = cnn.Concurrent(axis=1)
    with net.name_scope():
        net.add(nn.Dense(3), nn.Lambda(lambda x: x * 2), cnn.Identity())
    net.initialize()
    x = data(2, 4)
    out = net(x).asnumpy()
    dense = net[0](x).asnumpy()
    np.testing.assert_allclose(out, np.concatenate([dense, x.asnumpy() * 2, x.asnumpy()], 1),
                               rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter('error')       # not all children are hybrid: no advice
        net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), out, rtol=1e-6)
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward()
    weight = net[0].weight.data().asnumpy()
    np.testing.assert_allclose(x.grad.asnumpy(), weight.sum(0) + 3 + np.zeros((2, 4)),
                               rtol=1e-6)


def pixel_shuffle(x, factors):
    """numpy: out[n, c, d*f1 + i, h*f2 + j, ...] = x[n, c*F + ravel(i, j, ...), d, h, ...] with
    F = f1*f2*..."""
    n, channels, *spatial = x.shape
    size = int(np.prod(factors))
    grouped = x.reshape([n, channels // size, size] + spatial)
    out = np.zeros([n, channels // size] + [s * f for s, f in zip(spatial, factors)], x.dtype)
    for offsets in np.ndindex(*factors):
        where = (slice(None), slice(None)) + tuple(slice(o, None, f)
                                                   for o, f in zip(offsets, factors))
        out[where] = grouped[:, :, np.ravel_multi_index(offsets, factors)]
    return out


@pytest.mark.parametrize('make, shape, factors', [
    (lambda: cnn.PixelShuffle1D(2), (2, 6, 3), (2,)),
    (lambda: cnn.PixelShuffle2D((2, 3)), (1, 12, 2, 3), (2, 3)),
    (lambda: cnn.PixelShuffle2D(2), (2, 8, 1, 2), (2, 2)),
    (lambda: cnn.PixelShuffle3D((1, 2, 3)), (1, 12, 2, 1, 2), (1, 2, 3)),
    (lambda: cnn.PixelShuffle3D(2), (1, 16, 1, 2, 2), (2, 2, 2)),
])
def test_pixel_shuffle_matches_numpy(make, shape, factors):
    x = data(*shape)
    out = make()(x).asnumpy()
    np.testing.assert_array_equal(out, pixel_shuffle(x.asnumpy(), factors))


def test_pixel_shuffle_factor_errors_as_mxnet():
    with pytest.raises(AssertionError, match='wrong length 3'):
        cnn.PixelShuffle2D((1, 2, 3))
    with pytest.raises(AssertionError, match='wrong length 2'):
        cnn.PixelShuffle3D((1, 2))


def test_sparse_embedding_is_dense_here_and_says_so():
    with pytest.warns(UserWarning, match='SparseEmbedding sparseembedding0: hybridlib has no '
                                         'sparse storage'):
        layer = cnn.SparseEmbedding(5, 2)
    layer.initialize()
    weight = np.arange(10.).reshape(5, 2)
    layer.weight.set_data(nd.array(weight))
    with autograd.record():
        out = layer(nd.array([[3, 1], [3, 3]]))
    out.backward()
    np.testing.assert_array_equal(out.asnumpy(), weight[[[3, 1], [3, 3]]])
    np.testing.assert_array_equal(layer.weight.grad().asnumpy(),
                                  [[0, 0], [1, 1], [0, 0], [3, 3], [0, 0]])
