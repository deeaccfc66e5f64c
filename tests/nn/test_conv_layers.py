"""Convolution, pooling and padding layers (hybridlib/nn/conv_layers.py): MXNet 1.9.1's names,
defaults, weight shapes, reprs, argument checks, operator attributes and output shapes, values
for MXNet's edge conventions and against numpy references, and every layer imperative vs
hybridized (outputs and gradients, both flag sets)."""
import inspect
import json

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.gluon import nn
from hybrid_check import check_hybrid, data, fresh_names  # noqa: F401 (a fixture)

POOL_DEFAULTS = 'ceil_mode=False, global_pool=False'
GLOBAL = 'ceil_mode=True, global_pool=True'

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
    ('nn.Conv1D(4, 3)', 'Conv1D(None -> 4, kernel_size=(3,), stride=(1,))',
     [('conv0_weight', (4, 0, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ("nn.Conv1D(4, 3, strides=2, padding=1, dilation=2, groups=2, in_channels=6, "
     "activation='relu', use_bias=False)",
     'Conv1D(3 -> 4, kernel_size=(3,), stride=(2,), padding=(1,), dilation=(2,), groups=2, '
     'bias=False, Activation(relu))',
     [('conv0_weight', (4, 3, 3), 'None')]),
    ('nn.Conv3D(4, 3)', 'Conv3D(None -> 4, kernel_size=(3, 3, 3), stride=(1, 1, 1))',
     [('conv0_weight', (4, 0, 3, 3, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ('nn.Conv3D(4, (3, 2, 1), strides=(2, 1, 1), padding=1, groups=2, in_channels=4)',
     'Conv3D(2 -> 4, kernel_size=(3, 2, 1), stride=(2, 1, 1), padding=(1, 1, 1), groups=2)',
     [('conv0_weight', (4, 2, 3, 2, 1), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ("nn.Conv3D(4, 3, layout='NDHWC', in_channels=3)",
     'Conv3D(3 -> 4, kernel_size=(3, 3, 3), stride=(1, 1, 1))',
     [('conv0_weight', (4, 3, 3, 3, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ("nn.Conv3D(4, (3, 2, 1), layout='NDHWC')",
     'Conv3D(None -> 4, kernel_size=(3, 2, 1), stride=(1, 1, 1))',  # MXNet: '3 -> 4'
     [('conv0_weight', (4, 3, 2, 1, 0), 'None'), ('conv0_bias', (4,), 'zeros')]),
    # a transposed convolution's repr shows 'channels / groups -> in_channels' (MXNet's
    # weight.shape[1] -> weight.shape[0]), with 0 for in_channels not known yet
    ('nn.Conv1DTranspose(4, 3)', 'Conv1DTranspose(4 -> 0, kernel_size=(3,), stride=(1,))',
     [('conv0_weight', (0, 4, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ('nn.Conv1DTranspose(4, 3, strides=2, padding=1, output_padding=1, in_channels=6, '
     'groups=2)',
     # MXNet 1.9.1 never prints output_padding (it tests a misspelt attribute)
     'Conv1DTranspose(2 -> 6, kernel_size=(3,), stride=(2,), padding=(1,), '
     'output_padding=(1,), groups=2)',
     [('conv0_weight', (6, 2, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ('nn.Conv2DTranspose(4, 3)', 'Conv2DTranspose(4 -> 0, kernel_size=(3, 3), stride=(1, 1))',
     [('conv0_weight', (0, 4, 3, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ("nn.Conv2DTranspose(4, (3, 2), strides=2, output_padding=1, dilation=2, in_channels=3, "
     "activation='tanh', use_bias=False)",
     'Conv2DTranspose(4 -> 3, kernel_size=(3, 2), stride=(2, 2), dilation=(2, 2), '
     'output_padding=(1, 1), bias=False, Activation(tanh))',      # MXNet: no output_padding
     [('conv0_weight', (3, 4, 3, 2), 'None')]),
    ("nn.Conv2DTranspose(4, 3, layout='NHWC', in_channels=3)",
     'Conv2DTranspose(4 -> 3, kernel_size=(3, 3), stride=(1, 1))',  # MXNet: '3 -> 3'
     [('conv0_weight', (3, 3, 3, 4), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ("nn.Conv2DTranspose(4, (3, 2), layout='NHWC')",
     'Conv2DTranspose(4 -> 0, kernel_size=(3, 2), stride=(1, 1))',  # MXNet: '3 -> 0'
     [('conv0_weight', (0, 3, 2, 4), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ('nn.Conv3DTranspose(4, 3)',
     'Conv3DTranspose(4 -> 0, kernel_size=(3, 3, 3), stride=(1, 1, 1))',
     [('conv0_weight', (0, 4, 3, 3, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ('nn.Conv3DTranspose(4, 3, strides=2, padding=1, output_padding=(1, 0, 1), in_channels=2)',
     'Conv3DTranspose(4 -> 2, kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1), '
     'output_padding=(1, 0, 1))',                                   # MXNet: no output_padding
     [('conv0_weight', (2, 4, 3, 3, 3), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ("nn.Conv3DTranspose(4, (3, 2, 1), layout='NDHWC', in_channels=2)",
     'Conv3DTranspose(4 -> 2, kernel_size=(3, 2, 1), stride=(1, 1, 1))',  # MXNet: '3 -> 2'
     [('conv0_weight', (2, 3, 2, 1, 4), 'None'), ('conv0_bias', (4,), 'zeros')]),
    ('nn.MaxPool2D()', f'MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), {POOL_DEFAULTS}, '
     'pool_type=max, layout=NCHW)', []),
    ('nn.MaxPool2D(3, 2, 1, ceil_mode=True)',
     'MaxPool2D(size=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=True, global_pool=False, '
     'pool_type=max, layout=NCHW)', []),
    ("nn.MaxPool2D(pool_size=(3, 1), strides=1, layout='NHWC')",
     f'MaxPool2D(size=(3, 1), stride=(1, 1), padding=(0, 0), {POOL_DEFAULTS}, pool_type=max, '
     'layout=NHWC)', []),
    ('nn.AvgPool2D()', f'AvgPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), {POOL_DEFAULTS}, '
     'pool_type=avg, layout=NCHW)', []),
    ('nn.AvgPool2D(3, 2, 1, ceil_mode=True, count_include_pad=False)',
     'AvgPool2D(size=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=True, global_pool=False, '
     'pool_type=avg, layout=NCHW)', []),
    ('nn.MaxPool1D()', f'MaxPool1D(size=(2,), stride=(2,), padding=(0,), {POOL_DEFAULTS}, '
     'pool_type=max, layout=NCW)', []),
    ("nn.MaxPool1D(3, 2, 1, layout='NWC', ceil_mode=True)",
     'MaxPool1D(size=(3,), stride=(2,), padding=(1,), ceil_mode=True, global_pool=False, '
     'pool_type=max, layout=NWC)', []),
    ('nn.MaxPool3D()', 'MaxPool3D(size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0), '
     f'{POOL_DEFAULTS}, pool_type=max, layout=NCDHW)', []),
    ("nn.MaxPool3D((3, 2, 1), 1, (1, 0, 0), ceil_mode=True, layout='NDHWC')",
     'MaxPool3D(size=(3, 2, 1), stride=(1, 1, 1), padding=(1, 0, 0), ceil_mode=True, '
     'global_pool=False, pool_type=max, layout=NDHWC)', []),
    ('nn.AvgPool1D()', f'AvgPool1D(size=(2,), stride=(2,), padding=(0,), {POOL_DEFAULTS}, '
     'pool_type=avg, layout=NCW)', []),
    ('nn.AvgPool1D(3, 2, 1, ceil_mode=True, count_include_pad=False)',
     'AvgPool1D(size=(3,), stride=(2,), padding=(1,), ceil_mode=True, global_pool=False, '
     'pool_type=avg, layout=NCW)', []),
    ('nn.AvgPool3D()', 'AvgPool3D(size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0), '
     f'{POOL_DEFAULTS}, pool_type=avg, layout=NCDHW)', []),
    ("nn.AvgPool3D(3, 2, 1, ceil_mode=True, layout='NDHWC', count_include_pad=False)",
     'AvgPool3D(size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1), ceil_mode=True, '
     'global_pool=False, pool_type=avg, layout=NDHWC)', []),
    ('nn.GlobalMaxPool1D()', f'GlobalMaxPool1D(size=(1,), stride=(1,), padding=(0,), {GLOBAL}, '
     'pool_type=max, layout=NCW)', []),
    ("nn.GlobalMaxPool1D(layout='NWC')", 'GlobalMaxPool1D(size=(1,), stride=(1,), '
     f'padding=(0,), {GLOBAL}, pool_type=max, layout=NWC)', []),
    ('nn.GlobalMaxPool2D()', 'GlobalMaxPool2D(size=(1, 1), stride=(1, 1), padding=(0, 0), '
     f'{GLOBAL}, pool_type=max, layout=NCHW)', []),
    ('nn.GlobalMaxPool3D()', 'GlobalMaxPool3D(size=(1, 1, 1), stride=(1, 1, 1), '
     f'padding=(0, 0, 0), {GLOBAL}, pool_type=max, layout=NCDHW)', []),
    ("nn.GlobalMaxPool3D(layout='NDHWC')", 'GlobalMaxPool3D(size=(1, 1, 1), stride=(1, 1, 1), '
     f'padding=(0, 0, 0), {GLOBAL}, pool_type=max, layout=NDHWC)', []),
    ('nn.GlobalAvgPool1D()', f'GlobalAvgPool1D(size=(1,), stride=(1,), padding=(0,), {GLOBAL}, '
     'pool_type=avg, layout=NCW)', []),
    ("nn.GlobalAvgPool2D(layout='NHWC')", 'GlobalAvgPool2D(size=(1, 1), stride=(1, 1), '
     f'padding=(0, 0), {GLOBAL}, pool_type=avg, layout=NHWC)', []),
    ('nn.GlobalAvgPool3D()', 'GlobalAvgPool3D(size=(1, 1, 1), stride=(1, 1, 1), '
     f'padding=(0, 0, 0), {GLOBAL}, pool_type=avg, layout=NCDHW)', []),
    ('nn.ReflectionPad2D()', 'ReflectionPad2D(\n\n)', []),
    ('nn.ReflectionPad2D(2)', 'ReflectionPad2D(\n\n)', []),
]


def _expected_name(make):
    if 'Conv' in make:
        return 'conv0'
    return 'reflectionpad2d0' if 'Reflection' in make else 'pool0'


@pytest.mark.parametrize('make, text, params', LAYERS, ids=[c[0] for c in LAYERS])
def test_names_weight_shapes_and_repr_as_mxnet(make, text, params):
    block = eval(make)
    assert repr(block) == text
    assert block.name == _expected_name(make)
    assert [(k, v.shape, str(v.init)) for k, v in block.params.items()] == params


# MXNet 1.9.1's operator attributes for some layers above
KWARGS = {
    "nn.Conv2D(4, 3)": {'kernel': (3, 3), 'stride': (1, 1), 'dilate': (1, 1), 'pad': (0, 0),
                        'num_filter': 4, 'num_group': 1, 'no_bias': False, 'layout': 'NCHW'},
    'nn.Conv2D(4, [3, 3], strides=[2, 2], padding=[1, 1])': {
        'kernel': [3, 3], 'stride': [2, 2], 'dilate': (1, 1), 'pad': [1, 1], 'num_filter': 4,
        'num_group': 1, 'no_bias': False, 'layout': 'NCHW'},
    "nn.Conv1D(4, 3, strides=2, padding=1, dilation=2, groups=2, use_bias=False)": {
        'kernel': (3,), 'stride': (2,), 'dilate': (2,), 'pad': (1,), 'num_filter': 4,
        'num_group': 2, 'no_bias': True, 'layout': 'NCW'},
    "nn.Conv3D(4, 3, layout='NDHWC')": {
        'kernel': (3, 3, 3), 'stride': (1, 1, 1), 'dilate': (1, 1, 1), 'pad': (0, 0, 0),
        'num_filter': 4, 'num_group': 1, 'no_bias': False, 'layout': 'NDHWC'},
    'nn.Conv1DTranspose(4, 3, strides=2, padding=1, output_padding=1, groups=2)': {
        'kernel': (3,), 'stride': (2,), 'dilate': (1,), 'pad': (1,), 'num_filter': 4,
        'num_group': 2, 'no_bias': False, 'layout': 'NCW', 'adj': (1,)},
    'nn.Conv3DTranspose(4, 3, strides=2, padding=1, output_padding=(1, 0, 1))': {
        'kernel': (3, 3, 3), 'stride': (2, 2, 2), 'dilate': (1, 1, 1), 'pad': (1, 1, 1),
        'num_filter': 4, 'num_group': 1, 'no_bias': False, 'layout': 'NCDHW',
        'adj': (1, 0, 1)},
    "nn.MaxPool2D(pool_size=(3, 1), strides=1, layout='NHWC')": {
        'kernel': (3, 1), 'stride': (1, 1), 'pad': (0, 0), 'global_pool': False,
        'pool_type': 'max', 'layout': 'NHWC', 'pooling_convention': 'valid'},
    'nn.AvgPool2D(3, 2, 1, ceil_mode=True, count_include_pad=False)': {
        'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1), 'global_pool': False,
        'pool_type': 'avg', 'layout': 'NCHW', 'pooling_convention': 'full',
        'count_include_pad': False},
    "nn.MaxPool1D(3, 2, 1, layout='NWC', ceil_mode=True)": {
        'kernel': (3,), 'stride': (2,), 'pad': (1,), 'global_pool': False, 'pool_type': 'max',
        'layout': 'NWC', 'pooling_convention': 'full'},
    'nn.AvgPool1D()': {
        'kernel': (2,), 'stride': (2,), 'pad': (0,), 'global_pool': False, 'pool_type': 'avg',
        'layout': 'NCW', 'pooling_convention': 'valid', 'count_include_pad': True},
    "nn.AvgPool3D(3, 2, 1, ceil_mode=True, layout='NDHWC', count_include_pad=False)": {
        'kernel': (3, 3, 3), 'stride': (2, 2, 2), 'pad': (1, 1, 1), 'global_pool': False,
        'pool_type': 'avg', 'layout': 'NDHWC', 'pooling_convention': 'full',
        'count_include_pad': False},
    "nn.GlobalMaxPool1D(layout='NWC')": {
        'kernel': (1,), 'stride': (1,), 'pad': (0,), 'global_pool': True, 'pool_type': 'max',
        'layout': 'NWC', 'pooling_convention': 'full'},
    'nn.GlobalAvgPool3D()': {
        'kernel': (1, 1, 1), 'stride': (1, 1, 1), 'pad': (0, 0, 0), 'global_pool': True,
        'pool_type': 'avg', 'layout': 'NCDHW', 'pooling_convention': 'full'},
}


@pytest.mark.parametrize('make', KWARGS)
def test_operator_attributes_as_mxnet(make):
    assert eval(make)._kwargs == KWARGS[make]


def test_transposed_layers_keep_outpad_and_reflection_pad_its_pad_width_as_mxnet():
    assert nn.Conv1DTranspose(2, 3, strides=2, output_padding=1).outpad == (1,)
    assert nn.Conv3DTranspose(2, 3, strides=2, output_padding=(1, 0, 1)).outpad == (1, 0, 1)
    # MXNet 1.9.1 too infers the weight shape at construction and fails there:
    # "adj(x) must be samller than stride[0]"
    with pytest.raises(mx.MXNetError, match='adj 1 must be smaller than stride 1'):
        nn.Conv1DTranspose(2, 3, output_padding=1)
    assert nn.ReflectionPad2D(2)._padding == (0, 0, 0, 0, 2, 2, 2, 2)
    assert nn.ReflectionPad2D((0, 0, 0, 0, 1, 2, 3, 0))._padding == (0, 0, 0, 0, 1, 2, 3, 0)


_CONV = ("groups=1, layout='{}', activation=None, use_bias=True, weight_initializer=None, "
         "bias_initializer='zeros', in_channels=0, **kwargs)")
SIGNATURES = {
    'Conv1D': "(self, channels, kernel_size, strides=1, padding=0, dilation=1, "
              + _CONV.format('NCW'),
    'Conv2D': "(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1), "
              + _CONV.format('NCHW'),
    'Conv3D': "(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0), "
              "dilation=(1, 1, 1), " + _CONV.format('NCDHW'),
    'Conv1DTranspose': "(self, channels, kernel_size, strides=1, padding=0, output_padding=0, "
                       "dilation=1, " + _CONV.format('NCW'),
    'Conv2DTranspose': "(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), "
                       "output_padding=(0, 0), dilation=(1, 1), " + _CONV.format('NCHW'),
    'Conv3DTranspose': "(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0), "
                       "output_padding=(0, 0, 0), dilation=(1, 1, 1), " + _CONV.format('NCDHW'),
    'MaxPool1D': "(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False, "
                 "**kwargs)",
    'MaxPool2D': "(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW', "
                 "ceil_mode=False, **kwargs)",
    'MaxPool3D': "(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False, "
                 "layout='NCDHW', **kwargs)",
    'AvgPool1D': "(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False, "
                 "count_include_pad=True, **kwargs)",
    'AvgPool2D': "(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False, "
                 "layout='NCHW', count_include_pad=True, **kwargs)",
    'AvgPool3D': "(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False, "
                 "layout='NCDHW', count_include_pad=True, **kwargs)",
    'GlobalMaxPool1D': "(self, layout='NCW', **kwargs)",
    'GlobalMaxPool2D': "(self, layout='NCHW', **kwargs)",
    'GlobalMaxPool3D': "(self, layout='NCDHW', **kwargs)",
    'GlobalAvgPool1D': "(self, layout='NCW', **kwargs)",
    'GlobalAvgPool2D': "(self, layout='NCHW', **kwargs)",
    'GlobalAvgPool3D': "(self, layout='NCDHW', **kwargs)",
    'ReflectionPad2D': "(self, padding=0, **kwargs)",
}


@pytest.mark.parametrize('name', SIGNATURES)
def test_signatures_as_mxnet(name):
    assert str(inspect.signature(getattr(nn, name).__init__)) == SIGNATURES[name]


@pytest.mark.parametrize('make, message', [
    ("nn.Conv2D(2, 3, layout='NCW')", "Only supports 'NCHW' and 'NHWC' layout for now"),
    ('nn.Conv2D(2, (3, 3, 3))', 'kernel_size must be a number or a list of 2 ints'),
    ("nn.Conv1D(2, 3, layout='NWC')", "Only supports 'NCW' layout for now"),
    ('nn.Conv1D(2, (3, 3))', 'kernel_size must be a number or a list of 1 ints'),
    ("nn.Conv3D(2, 3, layout='NCHW')", "Only supports 'NCDHW' and 'NDHWC' layout for now"),
    ('nn.Conv3D(2, (3, 3))', 'kernel_size must be a number or a list of 3 ints'),
    ("nn.Conv1DTranspose(2, 3, layout='NWC')", "Only supports 'NCW' layout for now"),
    ('nn.Conv1DTranspose(2, 3, output_padding=(1, 1))',
     'output_padding must be a number or a list of 1 ints'),
    ('nn.Conv1DTranspose(2, (3, 3), output_padding=(1, 1))',
     'kernel_size must be a number or a list of 1 ints'),
    ("nn.Conv2DTranspose(2, 3, layout='NCW')", "Only supports 'NCHW' and 'NHWC' layout for now"),
    ('nn.Conv2DTranspose(2, 3, output_padding=(1,))',
     'output_padding must be a number or a list of 2 ints'),
    ("nn.Conv3DTranspose(2, 3, layout='NHWC')",
     "Only supports 'NCDHW' and 'NDHWC' layout for now"),
    ('nn.Conv3DTranspose(2, (3, 3))', 'kernel_size must be a number or a list of 3 ints'),
    ("nn.MaxPool2D(layout='NCW')", 'Only NCHW and NHWC layouts are valid for 2D Pooling'),
    ('nn.MaxPool2D((2, 2, 2))', 'pool_size must be a number or a list of 2 ints'),
    ("nn.AvgPool2D(layout='NCW')", 'Only NCHW and NHWC layouts are valid for 2D Pooling'),
    ("nn.MaxPool1D(layout='NCHW')", 'Only NCW and NWC layouts are valid for 1D Pooling'),
    ('nn.MaxPool1D((2, 2))', 'pool_size must be a number or a list of 1 ints'),
    ("nn.MaxPool3D(layout='NCW')", 'Only NCDHW and NDHWC layouts are valid for 3D Pooling'),
    ('nn.MaxPool3D((2, 2))', 'pool_size must be a number or a list of 3 ints'),
    ("nn.AvgPool1D(layout='NHWC')", 'Only NCW and NWC layouts are valid for 1D Pooling'),
    ("nn.AvgPool3D(layout='NHWC')", 'Only NCDHW and NDHWC layouts are valid for 3D Pooling'),
    ("nn.GlobalMaxPool1D(layout='NCHW')", 'Only NCW and NWC layouts are valid for 1D Pooling'),
    ("nn.GlobalMaxPool2D(layout='NCW')", 'Only NCHW and NHWC layouts are valid for 2D Pooling'),
    ("nn.GlobalMaxPool3D(layout='NCHW')",
     'Only NCDHW and NDHWC layouts are valid for 3D Pooling'),
    ("nn.GlobalAvgPool1D(layout='NCDHW')", 'Only NCW and NWC layouts are valid for 1D Pooling'),
    ("nn.GlobalAvgPool2D(layout='NWC')", 'Only NCHW and NHWC layouts are valid for 2D Pooling'),
    ("nn.GlobalAvgPool3D(layout='NHWC')",
     'Only NCDHW and NDHWC layouts are valid for 3D Pooling'),
    # MXNet asserts this one without a message
    ('nn.ReflectionPad2D((1, 2))', 'padding must be a number or a pad_width of 8 ints'),
])
def test_argument_errors_as_mxnet(make, message):
    with pytest.raises(AssertionError, match=message.replace('(', r'\(')):   # MXNet asserts
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


@pytest.mark.parametrize('make, shape, out_shape, weight_shape', [
    ('nn.Conv1D(4, 3, strides=2, padding=1, dilation=2, groups=2)', (2, 6, 8), (2, 4, 3),
     (4, 3, 3)),
    ("nn.Conv3D(4, 3, layout='NDHWC')", (2, 5, 5, 5, 3), (2, 3, 3, 3, 4), (4, 3, 3, 3, 3)),
    ('nn.Conv2DTranspose(4, 3)', (2, 3, 4, 4), (2, 4, 6, 6), (3, 4, 3, 3)),
    ("nn.Conv2DTranspose(4, 3, layout='NHWC')", (2, 5, 5, 3), (2, 7, 7, 4), (3, 3, 3, 4)),
    ("nn.Conv3DTranspose(4, 3, layout='NDHWC')", (2, 3, 3, 3, 3), (2, 5, 5, 5, 4),
     (3, 3, 3, 3, 4)),
    ('nn.Conv3DTranspose(4, 3, strides=2, padding=1, output_padding=(1, 0, 1))',
     (2, 2, 3, 3, 3), (2, 4, 6, 5, 6), (2, 4, 3, 3, 3)),
    # MXNet 1.9.1 cannot infer a grouped transposed convolution's in_channels ("input
    # num_filter must divide group size"); given in_channels=6 it gives these shapes
    ('nn.Conv1DTranspose(4, 3, strides=2, padding=1, output_padding=1, groups=2)', (2, 6, 5),
     (2, 4, 10), (6, 2, 3)),
])
def test_deferred_in_channels_and_output_shapes_as_mxnet(make, shape, out_shape, weight_shape):
    layer = eval(make)
    layer.initialize()
    assert layer(nd.zeros(shape)).shape == out_shape
    assert layer.weight.shape == weight_shape


# output shapes of the pooling layers as MXNet 1.9.1 gave them ('full' is ceil_mode=True and
# keeps a last window that starts in the padding)
@pytest.mark.parametrize('make, shape, out_shape', [
    ('nn.MaxPool1D(3, 2, 1)', (2, 3, 8), (2, 3, 4)),
    ('nn.MaxPool1D(3, 2, 1, ceil_mode=True)', (2, 3, 8), (2, 3, 5)),
    ("nn.MaxPool1D(3, 2, 1, layout='NWC', ceil_mode=True)", (2, 8, 3), (2, 5, 3)),
    ('nn.MaxPool1D(2, 3, 1, ceil_mode=True)', (2, 3, 5), (2, 3, 3)),
    ("nn.AvgPool1D(4, 3, 1, ceil_mode=True, layout='NWC')", (2, 7, 3), (2, 3, 3)),
    ('nn.MaxPool3D(2)', (2, 3, 5, 4, 3), (2, 3, 2, 2, 1)),
    ('nn.MaxPool3D(2, ceil_mode=True)', (2, 3, 5, 4, 3), (2, 3, 3, 2, 2)),
    ("nn.MaxPool3D((3, 2, 1), 1, (1, 0, 0), ceil_mode=True, layout='NDHWC')", (2, 4, 4, 4, 3),
     (2, 4, 3, 4, 3)),
    ("nn.AvgPool3D((3, 2, 2), (2, 2, 1), (1, 0, 1), layout='NDHWC')", (2, 6, 5, 4, 3),
     (2, 3, 2, 5, 3)),
    ("nn.AvgPool3D((3, 2, 2), (2, 2, 1), (1, 0, 1), ceil_mode=True, layout='NDHWC')",
     (2, 6, 5, 4, 3), (2, 4, 3, 5, 3)),
    ("nn.AvgPool3D(3, 2, 1, ceil_mode=True, layout='NDHWC', count_include_pad=False)",
     (2, 6, 6, 6, 3), (2, 4, 4, 4, 3)),
    ('nn.GlobalAvgPool1D()', (2, 3, 5), (2, 3, 1)),
    ("nn.GlobalMaxPool1D(layout='NWC')", (2, 5, 3), (2, 1, 3)),
    ("nn.GlobalMaxPool2D(layout='NHWC')", (2, 5, 4, 3), (2, 1, 1, 3)),
    ("nn.GlobalAvgPool2D(layout='NHWC')", (2, 5, 4, 3), (2, 1, 1, 3)),
    ('nn.GlobalAvgPool3D()', (2, 5, 4, 3, 3), (2, 5, 1, 1, 1)),
    ("nn.GlobalMaxPool3D(layout='NDHWC')", (2, 5, 4, 3, 3), (2, 1, 1, 1, 3)),
    ("nn.GlobalAvgPool3D(layout='NDHWC')", (2, 5, 4, 3, 3), (2, 1, 1, 1, 3)),
    ('nn.ReflectionPad2D(2)', (2, 3, 4, 5), (2, 3, 8, 9)),
    ('nn.ReflectionPad2D((0, 0, 0, 0, 1, 2, 3, 0))', (2, 3, 4, 5), (2, 3, 7, 8)),
])
def test_output_shapes_as_mxnet(make, shape, out_shape):
    assert eval(make)(nd.zeros(shape)).shape == out_shape


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


# MXNet 1.9.1's values on arange inputs: a window wholly in the padding gives the lowest float
# (max) or 0 (average, also without count_include_pad)
LOWEST = float(np.finfo(np.float32).min)


@pytest.mark.parametrize('make, shape, expected', [
    ('nn.AvgPool1D(3, 2, 1, ceil_mode=True, count_include_pad=False)', (1, 1, 7),
     [0.5, 2.0, 4.0, 5.5]),
    ('nn.AvgPool1D(3, 2, 1, ceil_mode=True)', (1, 1, 7), [1 / 3, 2.0, 4.0, 11 / 3]),
    ('nn.AvgPool1D(3, 2, 1)', (1, 1, 7), [1 / 3, 2.0, 4.0, 11 / 3]),
    ('nn.MaxPool1D(2, 2, 0, ceil_mode=True)', (1, 1, 7), [1.0, 3.0, 5.0, 6.0]),
    ('nn.MaxPool1D(2, 3, 1, ceil_mode=True)', (1, 1, 7), [0.0, 3.0, 6.0, LOWEST]),
    ('nn.AvgPool1D(2, 3, 1, ceil_mode=True)', (1, 1, 7), [0.0, 2.5, 5.5, 0.0]),
    ('nn.AvgPool1D(2, 3, 1, ceil_mode=True, count_include_pad=False)', (1, 1, 5),
     [0.0, 2.5, 0.0]),
    ('nn.MaxPool3D(2, 2, 1)', (1, 1, 3, 3, 3), [0, 2, 6, 8, 18, 20, 24, 26]),
    ('nn.AvgPool3D(2, 2, 1, ceil_mode=True)', (1, 1, 3, 3, 3),
     [0.0, 0.375, 0.0, 1.125, 3.0, 0.0, 0.0, 0.0, 0.0, 3.375, 7.5, 0.0, 9.0, 19.5]
     + [0.0] * 13),
    # MXNet gives nan (0 / 0) for the windows wholly in the padding here, 0 in 1-D and 2-D;
    # hybridlib's Pooling gives 0 in every dimension
    ('nn.AvgPool3D(2, 2, 1, ceil_mode=True, count_include_pad=False)', (1, 1, 3, 3, 3),
     [0.0, 1.5, 0.0, 4.5, 6.0, 0.0, 0.0, 0.0, 0.0, 13.5, 15.0, 0.0, 18.0, 19.5] + [0.0] * 13),
    ('nn.MaxPool3D((3, 2, 1), (2, 1, 1), (1, 0, 0), ceil_mode=True)', (1, 1, 4, 2, 2),
     [6.0, 7.0, 14.0, 15.0, 14.0, 15.0]),
    ("nn.MaxPool3D((3, 2, 1), (2, 1, 1), (1, 0, 0), ceil_mode=True, layout='NDHWC')",
     (1, 4, 2, 2, 1), [6.0, 7.0, 14.0, 15.0, 14.0, 15.0]),
])
def test_pooling_values_as_mxnet(make, shape, expected):
    x = nd.array(np.arange(np.prod(shape)).reshape(shape))
    np.testing.assert_allclose(eval(make)(x).asnumpy().ravel(), expected, rtol=1e-6)


@pytest.mark.parametrize('layout', ['NCW', 'NWC', 'NCHW', 'NHWC', 'NCDHW', 'NDHWC'])
def test_global_pooling_is_the_max_and_mean_over_the_spatial_axes(layout):
    shape = {3: (2, 3, 5), 4: (2, 3, 4, 5), 5: (2, 3, 3, 2, 4)}[len(layout)]
    x = np.random.RandomState(1).randn(*shape)
    axes = tuple(i for i, c in enumerate(layout) if c not in 'NC')
    nd_ = len(layout) - 2
    for cls, reduce in (('GlobalMaxPool', np.max), ('GlobalAvgPool', np.mean)):
        y = getattr(nn, f'{cls}{nd_}D')(layout=layout)(nd.array(x, dtype='float64'))
        np.testing.assert_allclose(y.asnumpy(), reduce(x, axis=axes, keepdims=True), rtol=1e-12)


def test_convolution_values_as_mxnet():
    conv = nn.Conv1D(2, 2, dilation=2, padding=1, in_channels=2, groups=2, use_bias=False)
    conv.initialize()
    conv.weight.set_data(nd.array(np.arange(4).reshape(2, 1, 2)))
    y = conv(nd.array(np.arange(8).reshape(1, 2, 4)))
    assert y.asnumpy().tolist() == [[[1.0, 2.0, 3.0, 0.0], [15.0, 26.0, 31.0, 12.0]]]
    deconv = nn.Conv1DTranspose(2, 3, strides=2, padding=1, output_padding=1, in_channels=1)
    deconv.initialize()
    deconv.weight.set_data(nd.array(np.arange(6).reshape(1, 2, 3)))
    deconv.bias.set_data(nd.array([0.5, -1]))
    y = deconv(nd.array([[[1, 2, 3]]]))
    assert y.asnumpy().tolist() == [[[1.5, 2.5, 2.5, 4.5, 3.5, 6.5],
                                     [3.0, 10.0, 7.0, 18.0, 11.0, 14.0]]]


def _group_slices(total, groups):
    size = total // groups
    return [slice(g * size, (g + 1) * size) for g in range(groups)]


def conv_ref(x, w, stride, pad, dilate, groups):
    """Channel-first convolution in float64, by its definition: out[o] = sum over the kernel
    offsets k of x[o * stride + k * dilate - pad] . w[k], within each group."""
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    kernel = w.shape[2:]
    out_sp = [(n - d * (k - 1) - 1) // s + 1
              for n, k, s, d in zip(x.shape[2:], kernel, stride, dilate)]
    out = np.zeros((x.shape[0], w.shape[0], *out_sp))
    for gi, go in zip(_group_slices(x.shape[1], groups), _group_slices(w.shape[0], groups)):
        for o in np.ndindex(*out_sp):
            for k in np.ndindex(*kernel):
                at = tuple(i * s + j * d for i, j, s, d in zip(o, k, stride, dilate))
                out[(slice(None), go) + o] += x[(slice(None), gi) + at] @ w[(go, slice(None)) + k].T
    return out


def conv_transpose_ref(x, w, stride, pad, adj, dilate, groups):
    """Channel-first transposed convolution in float64, by its definition: each input
    element spreads x[i] . w[k] onto output position i * stride + k * dilate - pad."""
    kernel = w.shape[2:]
    full = [(n - 1) * s + d * (k - 1) + 1 + a
            for n, k, s, d, a in zip(x.shape[2:], kernel, stride, dilate, adj)]
    out = np.zeros((x.shape[0], w.shape[1] * groups, *full))
    for gi, go in zip(_group_slices(x.shape[1], groups), _group_slices(out.shape[1], groups)):
        for i in np.ndindex(*x.shape[2:]):
            for k in np.ndindex(*kernel):
                at = tuple(n * s + j * d for n, j, s, d in zip(i, k, stride, dilate))
                out[(slice(None), go) + at] += x[(slice(None), gi) + i] @ w[(gi, slice(None)) + k]
    crop = tuple(slice(p, n - p) for p, n in zip(pad, full))
    return out[(slice(None), slice(None)) + crop]


def _first(a):
    return np.moveaxis(a, -1, 1)


@pytest.mark.parametrize('make, shape', [
    (lambda: nn.Conv1D(4, 3, strides=2, padding=1, dilation=2, groups=2), (2, 4, 8)),
    (lambda: nn.Conv3D(4, (3, 2, 1), strides=(2, 1, 1), padding=(1, 0, 1), groups=2,
                       layout='NDHWC'), (2, 5, 4, 3, 2)),
    (lambda: nn.Conv2DTranspose(4, (2, 3), strides=(2, 1), padding=(0, 1), output_padding=(1, 0),
                                dilation=(1, 2), groups=2, layout='NHWC'), (2, 3, 3, 4)),
    (lambda: nn.Conv3DTranspose(2, 2, strides=2, padding=1, output_padding=(1, 0, 1)),
     (2, 3, 3, 2, 3)),
], ids=['conv1d', 'conv3d_ndhwc', 'conv2d_transpose_nhwc', 'conv3d_transpose'])
def test_convolutions_match_numpy_references(make, shape):
    layer = make()
    layer.cast('float64')
    layer.initialize(mx.init.Uniform())
    rng = np.random.RandomState(2)
    x = rng.randn(*shape)
    layer(nd.array(x, dtype='float64'))
    layer.bias.set_data(nd.array(rng.randn(*layer.bias.shape), dtype='float64'))
    y = layer(nd.array(x, dtype='float64')).asnumpy()
    kw, w = layer._kwargs, layer.weight.data().asnumpy()
    channel_last = kw['layout'].endswith('C')
    if channel_last:
        x, w = _first(x), _first(w)
    geometry = kw['stride'], kw['pad']
    if 'adj' in kw:
        expected = conv_transpose_ref(x, w, *geometry, kw['adj'], kw['dilate'], kw['num_group'])
    else:
        expected = conv_ref(x, w, *geometry, kw['dilate'], kw['num_group'])
    expected += layer.bias.data().asnumpy().reshape(-1, *(1,) * (x.ndim - 2))
    np.testing.assert_allclose(y, np.moveaxis(expected, 1, -1) if channel_last else expected,
                               rtol=1e-10, atol=1e-12)


def test_reflection_pad_values_and_gradient_as_mxnet():
    pad = nn.ReflectionPad2D(1)
    x = nd.array(np.arange(6).reshape(1, 1, 2, 3))
    x.attach_grad()
    with autograd.record():
        y = pad(x)
    y.backward(nd.array(np.arange(20).reshape(1, 1, 4, 5)))
    assert y.asnumpy()[0, 0].tolist() == [[4, 3, 4, 5, 4], [1, 0, 1, 2, 1], [4, 3, 4, 5, 4],
                                          [1, 0, 1, 2, 1]]
    assert x.grad.asnumpy()[0, 0].tolist() == [[22, 72, 26], [12, 42, 16]]
    y = nn.ReflectionPad2D((0, 0, 0, 0, 1, 2, 3, 0))(nd.array(np.arange(20).reshape(1, 1, 4, 5)))
    assert y.asnumpy()[0, 0].tolist() == [
        [8, 7, 6, 5, 6, 7, 8, 9], [3, 2, 1, 0, 1, 2, 3, 4], [8, 7, 6, 5, 6, 7, 8, 9],
        [13, 12, 11, 10, 11, 12, 13, 14], [18, 17, 16, 15, 16, 17, 18, 19],
        [13, 12, 11, 10, 11, 12, 13, 14], [8, 7, 6, 5, 6, 7, 8, 9]]


@pytest.mark.parametrize('make, shape, message', [
    # MXNet 1.9.1's messages: "Current implementation of reflection padding only supports
    # padding sizes smaller than the input size." and "...only supports 4-D or 5-D input."
    ('nn.ReflectionPad2D(2)', (2, 3, 2, 5), 'pads smaller than the input size'),
    ('nn.ReflectionPad2D(1)', (2, 3, 4), 'only supports 4-D or 5-D input'),
    ('nn.ReflectionPad2D((0, 0, 1, 0, 1, 2, 3, 0))', (2, 3, 4, 5),
     'padding on the first two axes must be zero'),
])
def test_reflection_pad_shape_errors(make, shape, message):
    with pytest.raises(mx.MXNetError, match=message):
        eval(make)(nd.zeros(shape))


# MXNet 1.9.1's node names and JSON attributes of the layers' graphs
@pytest.mark.parametrize('make, outputs, attrs', [
    ('nn.ReflectionPad2D(1)', ['data', 'reflectionpad2d0_pad0_output'],
     {'mode': 'reflect', 'pad_width': '(0, 0, 0, 0, 1, 1, 1, 1)'}),
    ('nn.Conv1DTranspose(2, 3, strides=2, output_padding=1, in_channels=2)',
     ['data', 'conv0_weight', 'conv0_bias', 'conv0_fwd_output'],
     {'adj': '(1,)', 'dilate': '(1,)', 'kernel': '(3,)', 'layout': 'NCW', 'no_bias': 'False',
      'num_filter': '2', 'num_group': '1', 'pad': '(0,)', 'stride': '(2,)'}),
    ("nn.GlobalMaxPool1D(layout='NWC')", ['data', 'pool0_fwd_output'],
     {'global_pool': 'True', 'kernel': '(1,)', 'layout': 'NWC', 'pad': '(0,)',
      'pool_type': 'max', 'pooling_convention': 'full', 'stride': '(1,)'}),
    ('nn.AvgPool3D(2, ceil_mode=True, count_include_pad=False)', ['data', 'pool0_fwd_output'],
     {'count_include_pad': 'False', 'global_pool': 'False', 'kernel': '(2, 2, 2)',
      'layout': 'NCDHW', 'pad': '(0, 0, 0)', 'pool_type': 'avg', 'pooling_convention': 'full',
      'stride': '(2, 2, 2)'}),
    ("nn.Conv3D(2, 3, layout='NDHWC', in_channels=1)",
     ['data', 'conv0_weight', 'conv0_bias', 'conv0_fwd_output'],
     {'dilate': '(1, 1, 1)', 'kernel': '(3, 3, 3)', 'layout': 'NDHWC', 'no_bias': 'False',
      'num_filter': '2', 'num_group': '1', 'pad': '(0, 0, 0)', 'stride': '(1, 1, 1)'}),
])
def test_symbol_names_and_attributes_as_mxnet(make, outputs, attrs):
    out = eval(make)(sym.var('data'))
    assert out.get_internals().list_outputs() == outputs
    nodes = [n for n in json.loads(out.tojson())['nodes'] if n['op'] != 'null']
    assert [n['attrs'] for n in nodes] == [attrs]


HYBRID_CASES = {
    'conv2d': (lambda: nn.Conv2D(3, 3), (2, 2, 5, 5)),
    'conv2d_groups_act': (lambda: nn.Conv2D(4, (3, 2), strides=(2, 1), padding=1,
                                            dilation=(1, 2), groups=2, activation='tanh'),
                          (2, 4, 6, 5)),
    'conv2d_1x1_nobias': (lambda: nn.Conv2D(2, 1, use_bias=False), (1, 3, 3, 3)),
    'conv2d_nhwc': (lambda: nn.Conv2D(4, (3, 2), strides=(2, 1), padding=(1, 0), layout='NHWC',
                                      groups=2), (2, 5, 4, 4)),
    'conv1d': (lambda: nn.Conv1D(3, 3), (2, 2, 8)),
    'conv1d_groups_act': (lambda: nn.Conv1D(4, 3, strides=2, padding=1, dilation=2, groups=2,
                                            activation='relu'), (2, 4, 8)),
    'conv3d': (lambda: nn.Conv3D(2, 2), (2, 2, 4, 4, 3)),
    'conv3d_ndhwc_groups': (lambda: nn.Conv3D(4, (3, 2, 1), strides=(2, 1, 1), padding=(1, 0, 0),
                                              layout='NDHWC', groups=2, use_bias=False),
                            (2, 5, 4, 3, 4)),
    'conv1d_transpose': (lambda: nn.Conv1DTranspose(3, 3, strides=2, padding=1,
                                                    output_padding=1), (2, 2, 5)),
    'conv1d_transpose_groups_act': (lambda: nn.Conv1DTranspose(4, 2, dilation=2, groups=2,
                                                               activation='tanh'), (2, 4, 6)),
    'conv2d_transpose': (lambda: nn.Conv2DTranspose(3, (3, 2), strides=(2, 1), padding=(1, 0),
                                                    output_padding=(1, 0)), (2, 2, 4, 4)),
    'conv2d_transpose_nhwc': (lambda: nn.Conv2DTranspose(4, 3, strides=2, layout='NHWC',
                                                         groups=2, use_bias=False),
                              (2, 3, 3, 4)),
    'conv3d_transpose': (lambda: nn.Conv3DTranspose(2, 2, strides=2, padding=1,
                                                    output_padding=1), (2, 2, 3, 3, 3)),
    'conv3d_transpose_ndhwc': (lambda: nn.Conv3DTranspose(2, (2, 1, 2), dilation=(1, 1, 2),
                                                          layout='NDHWC'), (2, 3, 3, 3, 2)),
    'max2d': (lambda: nn.MaxPool2D(), (2, 2, 4, 6)),
    'max2d_ceil': (lambda: nn.MaxPool2D(3, 2, 1, ceil_mode=True), (1, 2, 6, 5)),
    'max2d_nhwc': (lambda: nn.MaxPool2D((2, 3), strides=1, layout='NHWC'), (1, 4, 5, 2)),
    'avg2d': (lambda: nn.AvgPool2D(), (2, 2, 4, 4)),
    'avg2d_ceil_nopad': (lambda: nn.AvgPool2D(3, 2, 1, ceil_mode=True,
                                              count_include_pad=False), (1, 2, 6, 5)),
    'avg2d_nhwc': (lambda: nn.AvgPool2D(2, 1, 1, layout='NHWC'), (1, 3, 3, 2)),
    'max1d': (lambda: nn.MaxPool1D(), (2, 3, 8)),
    'max1d_nwc_ceil': (lambda: nn.MaxPool1D(3, 2, 1, layout='NWC', ceil_mode=True), (2, 8, 3)),
    'max3d': (lambda: nn.MaxPool3D(), (2, 2, 4, 4, 4)),
    'max3d_ndhwc_ceil': (lambda: nn.MaxPool3D((3, 2, 1), (2, 1, 1), (1, 0, 0), ceil_mode=True,
                                              layout='NDHWC'), (2, 5, 3, 2, 2)),
    'avg1d': (lambda: nn.AvgPool1D(3, 2, 1), (2, 3, 7)),
    'avg1d_nwc_ceil_nopad': (lambda: nn.AvgPool1D(3, 2, 1, layout='NWC', ceil_mode=True,
                                                  count_include_pad=False), (2, 8, 3)),
    'avg3d': (lambda: nn.AvgPool3D(), (2, 2, 4, 4, 2)),
    'avg3d_ndhwc_ceil_nopad': (lambda: nn.AvgPool3D(3, 2, 1, ceil_mode=True, layout='NDHWC',
                                                    count_include_pad=False), (2, 5, 4, 3, 2)),
    'global_max1d_nwc': (lambda: nn.GlobalMaxPool1D(layout='NWC'), (2, 6, 3)),
    'global_max2d': (lambda: nn.GlobalMaxPool2D(), (2, 3, 4, 5)),
    'global_max3d_ndhwc': (lambda: nn.GlobalMaxPool3D(layout='NDHWC'), (2, 3, 4, 2, 3)),
    'global_avg1d': (lambda: nn.GlobalAvgPool1D(), (2, 3, 6)),
    'global_avg2d_nhwc': (lambda: nn.GlobalAvgPool2D(layout='NHWC'), (2, 4, 5, 3)),
    'global_avg3d': (lambda: nn.GlobalAvgPool3D(), (2, 3, 3, 4, 2)),
    'reflection_pad': (lambda: nn.ReflectionPad2D(2), (2, 2, 4, 5)),
    'reflection_pad_uneven': (lambda: nn.ReflectionPad2D((0, 0, 0, 0, 1, 2, 3, 0)),
                              (2, 2, 3, 4)),
}


@pytest.mark.parametrize('case', HYBRID_CASES)
def test_layers_imperative_and_hybridized_agree(case):
    make, shape = HYBRID_CASES[case]
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


def test_encoder_decoder_imperative_and_hybridized_agree_in_training():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.ReflectionPad2D(1), nn.Conv2D(4, 3, strides=2, activation='relu'),
                nn.Conv2DTranspose(2, 3, strides=2, padding=1, output_padding=1),
                nn.MaxPool2D(2, 1), nn.GlobalAvgPool2D())
    net.initialize(mx.init.Xavier())
    y = check_hybrid(net, [data(2, 3, 6, 6)], train=True, atol=1e-5)
    assert y['outputs'][0].shape == (2, 2, 1, 1)
