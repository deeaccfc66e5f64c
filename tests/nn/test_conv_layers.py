"""Convolution and pooling layers (hybridlib/nn/conv_layers.py): MXNet 1.9.1's names,
defaults, weight shapes and reprs, values for MXNet's edge conventions, and every layer
imperative vs hybridized (outputs and gradients, both flag sets)."""
import inspect

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import nd
from hybridlib.gluon import nn
from hybrid_check import check_hybrid, data, fresh_names  # noqa: F401 (a fixture)


# (constructor, repr, parameters (name, shape, init)) as MXNet 1.9.1 printed them
LAYERS = [
    ('nn.Conv2D(4, 3)', 'Conv2D(None -> 4, kernel_size=(3, 3), stride=(1, 1))',
     [('conv0_weight', (4, 0, 3, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ("nn.Conv2D(4, (3, 2), strides=2, padding=1, dilation=(2, 1), groups=2, in_channels=6, "
     "activation='relu', use_bias=False)",
     'Conv2D(3 -> 4, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), dilation=(2, 1), '
     'groups=2, bias=False, Activation(relu))',
     [('conv0_weight', (4, 3, 3, 2), 'None')]),
    ("nn.Conv2D(4, 3, layout='NHWC', in_channels=3)",
     'Conv2D(3 -> 4, kernel_size=(3, 3), stride=(1, 1))',
     [('conv0_weight', (4, 3, 3, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ("nn.Conv2D(4, (3, 2), layout='NHWC', in_channels=6, groups=2)",
     # MXNet prints 'Conv2D(3 -> 4, ...' here too: weight.shape[1], a kernel size for NHWC;
     # hybridlib prints the weight's input-channel size (the same number for NCHW)
     'Conv2D(3 -> 4, kernel_size=(3, 2), stride=(1, 1), groups=2)',
     [('conv0_weight', (4, 3, 2, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ("nn.Conv2D(4, (3, 2), layout='NHWC', in_channels=5)",
     'Conv2D(5 -> 4, kernel_size=(3, 2), stride=(1, 1))',           # MXNet: '3 -> 4'
     [('conv0_weight', (4, 3, 2, 5), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ("nn.Conv2D(4, (3, 2), layout='NHWC')",
     'Conv2D(None -> 4, kernel_size=(3, 2), stride=(1, 1))',        # MXNet: '3 -> 4'
     [('conv0_weight', (4, 3, 2, 0), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ('nn.Conv2D(4, [3, 3], strides=[2, 2], padding=[1, 1])',
     'Conv2D(None -> 4, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])',
     [('conv0_weight', (4, 0, 3, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ('nn.MaxPool2D()', 'MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False, '
     'global_pool=False, pool_type=max, layout=NCHW)', []),
    ('nn.MaxPool2D(3, 2, 1, ceil_mode=True)',
     'MaxPool2D(size=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=True, global_pool=False, '
     'pool_type=max, layout=NCHW)', []),
    ("nn.MaxPool2D(pool_size=(3, 1), strides=1, layout='NHWC')",
     'MaxPool2D(size=(3, 1), stride=(1, 1), padding=(0, 0), ceil_mode=False, global_pool=False, '
     'pool_type=max, layout=NHWC)', []),
    ('nn.AvgPool2D()', 'AvgPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False, '
     'global_pool=False, pool_type=avg, layout=NCHW)', []),
    ('nn.AvgPool2D(3, 2, 1, ceil_mode=True, count_include_pad=False)',
     'AvgPool2D(size=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=True, global_pool=False, '
     'pool_type=avg, layout=NCHW)', []),
]


@pytest.mark.parametrize('make, text, params', LAYERS, ids=[c[0] for c in LAYERS])
def test_names_weight_shapes_and_repr_as_mxnet(make, text, params):
    block = eval(make)
    assert repr(block) == text
    assert block.name == ('conv0' if 'Conv' in make else 'pool0')
    assert [(k, v.shape, str(v.init)) for k, v in block.params.items()] == params


# MXNet 1.9.1's operator attributes for the layers above
KWARGS = {
    "nn.Conv2D(4, 3)": {'kernel': (3, 3), 'stride': (1, 1), 'dilate': (1, 1), 'pad': (0, 0),
                        'num_filter': 4, 'num_group': 1, 'no_bias': False, 'layout': 'NCHW'},
    'nn.Conv2D(4, [3, 3], strides=[2, 2], padding=[1, 1])': {
        'kernel': [3, 3], 'stride': [2, 2], 'dilate': (1, 1), 'pad': [1, 1], 'num_filter': 4,
        'num_group': 1, 'no_bias': False, 'layout': 'NCHW'},
    "nn.MaxPool2D(pool_size=(3, 1), strides=1, layout='NHWC')": {
        'kernel': (3, 1), 'stride': (1, 1), 'pad': (0, 0), 'global_pool': False,
        'pool_type': 'max', 'layout': 'NHWC', 'pooling_convention': 'valid'},
    'nn.AvgPool2D(3, 2, 1, ceil_mode=True, count_include_pad=False)': {
        'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1), 'global_pool': False,
        'pool_type': 'avg', 'layout': 'NCHW', 'pooling_convention': 'full',
        'count_include_pad': False},
}


@pytest.mark.parametrize('make', KWARGS)
def test_operator_attributes_as_mxnet(make):
    assert eval(make)._kwargs == KWARGS[make]


SIGNATURES = {
    'Conv2D': "(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1), "
              "groups=1, layout='NCHW', activation=None, use_bias=True, "
              "weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs)",
    'MaxPool2D': "(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW', "
                 "ceil_mode=False, **kwargs)",
    'AvgPool2D': "(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False, "
                 "layout='NCHW', count_include_pad=True, **kwargs)",
}


@pytest.mark.parametrize('name', SIGNATURES)
def test_signatures_as_mxnet(name):
    assert str(inspect.signature(getattr(nn, name).__init__)) == SIGNATURES[name]


@pytest.mark.parametrize('make, message', [
    ("nn.Conv2D(2, 3, layout='NCW')", "Only supports 'NCHW' and 'NHWC' layout for now"),
    ('nn.Conv2D(2, (3, 3, 3))', 'kernel_size must be a number or a list of 2 ints'),
    ("nn.MaxPool2D(layout='NCW')", 'Only NCHW and NHWC layouts are valid for 2D Pooling'),
    ('nn.MaxPool2D((2, 2, 2))', 'pool_size must be a number or a list of 2 ints'),
    ("nn.AvgPool2D(layout='NCW')", 'Only NCHW and NHWC layouts are valid for 2D Pooling'),
])
def test_argument_errors_as_mxnet(make, message):
    with pytest.raises(AssertionError, match=message):      # MXNet asserts
        eval(make)


def test_in_channels_inferred_with_groups_and_activation():
    conv = nn.Conv2D(4, 3, padding=1, groups=2, dilation=2, activation='relu')
    conv.initialize()
    y = conv(nd.ones((1, 4, 5, 5)))
    # MXNet 1.9.1
    assert (conv.weight.shape, y.shape, conv.act.name) == \
        ((4, 2, 3, 3), (1, 4, 3, 3), 'conv0_relu')
    assert repr(conv) == ('Conv2D(2 -> 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), '
                          'dilation=(2, 2), groups=2, Activation(relu))')


X25 = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)


@pytest.mark.parametrize('make, expected', [
    ('nn.AvgPool2D(3, 2, 1, ceil_mode=True, count_include_pad=False)',
     [[3.0, 4.5, 6.0], [10.5, 12.0, 13.5], [18.0, 19.5, 21.0]]),
    ('nn.AvgPool2D(3, 2, 1, ceil_mode=True)',
     [[1.3333334, 3.0, 2.6666667], [7.0, 12.0, 9.0], [8.0, 13.0, 9.333334]]),
    ('nn.MaxPool2D(2, 2, 0, ceil_mode=True)',
     [[6.0, 8.0, 9.0], [16.0, 18.0, 19.0], [21.0, 23.0, 24.0]]),
    ('nn.MaxPool2D(3, 1, 1)',
     [[6.0, 7.0, 8.0, 9.0, 9.0], [11.0, 12.0, 13.0, 14.0, 14.0], [16.0, 17.0, 18.0, 19.0, 19.0],
      [21.0, 22.0, 23.0, 24.0, 24.0], [21.0, 22.0, 23.0, 24.0, 24.0]]),
])
def test_pooling_conventions_as_mxnet(make, expected):
    layer = eval(make)
    for active in (False, True):
        layer.hybridize(active)
        np.testing.assert_allclose(layer(nd.array(X25)).asnumpy()[0, 0], expected, rtol=1e-6)


@pytest.mark.parametrize('make, shape', [
    (lambda: nn.Conv2D(3, 3), (2, 2, 5, 5)),
    (lambda: nn.Conv2D(4, (3, 2), strides=(2, 1), padding=1, dilation=(1, 2), groups=2,
                       activation='tanh'), (2, 4, 6, 5)),
    (lambda: nn.Conv2D(2, 1, use_bias=False), (1, 3, 3, 3)),
    (lambda: nn.Conv2D(4, (3, 2), strides=(2, 1), padding=(1, 0), layout='NHWC', groups=2),
     (2, 5, 4, 4)),
    (lambda: nn.MaxPool2D(), (2, 2, 4, 6)),
    (lambda: nn.MaxPool2D(3, 2, 1, ceil_mode=True), (1, 2, 6, 5)),
    (lambda: nn.MaxPool2D((2, 3), strides=1, layout='NHWC'), (1, 4, 5, 2)),
    (lambda: nn.AvgPool2D(), (2, 2, 4, 4)),
    (lambda: nn.AvgPool2D(3, 2, 1, ceil_mode=True, count_include_pad=False), (1, 2, 6, 5)),
    (lambda: nn.AvgPool2D(2, 1, 1, layout='NHWC'), (1, 3, 3, 2)),
], ids=['conv', 'conv_groups_act', 'conv_1x1_nobias', 'conv_nhwc', 'max', 'max_ceil',
        'max_nhwc', 'avg', 'avg_ceil_nopad', 'avg_nhwc'])
def test_layers_imperative_and_hybridized_agree(make, shape):
    layer = make()
    layer.initialize(mx.init.Xavier())
    # distinct values: no ties in max pooling, whose gradient routing would then differ
    x = nd.array(np.random.RandomState(0).permutation(int(np.prod(shape))).reshape(shape)
                 / 10.0)
    check_hybrid(layer, [x], rtol=1e-5, atol=1e-5)


def test_conv_net_imperative_and_hybridized_agree_in_training():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, padding=1, activation='relu'), nn.BatchNorm(),
                nn.MaxPool2D(ceil_mode=True), nn.Conv2D(2, 2, strides=2), nn.AvgPool2D(1),
                nn.Flatten(), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    check_hybrid(net, [data(2, 3, 7, 7)], train=True, atol=1e-5)
