"""Convolution and pooling layers: Conv2D, MaxPool2D, AvgPool2D (and their 1-D/3-D bases).

``_Conv`` and ``_Pooling`` hold everything; the public classes only fix the dimension count
and defaults, as in Gluon 1.9.1. Weight shapes are ``(channels, in_channels / groups,
*kernel_size)`` with 0 for ``in_channels`` inferred on the first call.
"""
from numbers import Number

from ..block import HybridBlock
from .basic_layers import Activation

__all__ = ['Conv2D', 'MaxPool2D', 'AvgPool2D']


def _tuple(value, n):
    return (value,) * n if isinstance(value, Number) else tuple(value)


class _Conv(HybridBlock):
    """N-d convolution (``op_name='Convolution'``) or transposed convolution
    (``'Deconvolution'``) with an optional activation."""

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', op_name='Convolution', adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            n = len(kernel_size)
            self._op_name = op_name
            self._kwargs = {'kernel': tuple(kernel_size), 'stride': _tuple(strides, n),
                            'dilate': _tuple(dilation, n), 'pad': _tuple(padding, n),
                            'num_filter': channels, 'num_group': groups,
                            'no_bias': not use_bias, 'layout': layout}
            if adj is not None:
                self._kwargs['adj'] = adj
            if op_name == 'Convolution':
                wshape = (channels, in_channels // groups if in_channels else 0) + \
                    tuple(kernel_size)
            else:
                wshape = (in_channels, channels // groups) + tuple(kernel_size)
            self.weight = self.params.get('weight', shape=wshape, init=weight_initializer,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=(channels,), init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + '_') if activation else None

    def _alias(self):
        return 'conv'

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name='fwd', **self._kwargs)
        else:
            out = op(x, weight, bias, name='fwd', **self._kwargs)
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self):
        kw = self._kwargs
        n = len(kw['kernel'])
        s = f'{type(self).__name__}({{mapping}}, kernel_size={kw["kernel"]}, stride={kw["stride"]}'
        if kw['pad'] != (0,) * n:
            s += f', padding={kw["pad"]}'
        if kw['dilate'] != (1,) * n:
            s += f', dilation={kw["dilate"]}'
        if kw['num_group'] != 1:
            s += f', groups={kw["num_group"]}'
        if self.bias is None:
            s += ', bias=False'
        if self.act:
            s += f', {self.act}'
        s += ')'
        shape = self.weight.shape
        return s.format(mapping=f'{shape[1] if shape[1] else None} -> {shape[0]}')


class Conv2D(_Conv):
    """2-D convolution over ``(N, C, H, W)`` (or ``NHWC``) input.

    Parameters
    ----------
    channels : int
        Output channels.
    kernel_size : int or (int, int)
    strides, padding, dilation : int or (int, int)
    groups : int
    layout : {'NCHW', 'NHWC'}
    activation : str, optional
    use_bias : bool
    in_channels : int, default 0 (inferred on the first call)
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                 groups=1, layout='NCHW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        if layout not in ('NCHW', 'NHWC'):
            raise ValueError("Only supports 'NCHW' and 'NHWC' layout for now")
        kernel_size = _tuple(kernel_size, 2)
        if len(kernel_size) != 2:
            raise ValueError('kernel_size must be a number or a list of 2 ints')
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, **kwargs)


class _Pooling(HybridBlock):
    """N-d max or average pooling."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        n = len(pool_size)
        self._kwargs = {'kernel': tuple(pool_size), 'stride': _tuple(strides, n),
                        'pad': _tuple(padding, n), 'global_pool': global_pool,
                        'pool_type': pool_type, 'layout': layout,
                        'pooling_convention': 'full' if ceil_mode else 'valid'}
        if count_include_pad is not None:
            self._kwargs['count_include_pad'] = count_include_pad

    def _alias(self):
        return 'pool'

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name='fwd', **self._kwargs)

    def __repr__(self):
        kw = self._kwargs
        return (f'{type(self).__name__}(size={kw["kernel"]}, stride={kw["stride"]}, '
                f'padding={kw["pad"]}, ceil_mode={kw["pooling_convention"] == "full"}, '
                f'global_pool={kw["global_pool"]}, pool_type={kw["pool_type"]}, '
                f'layout={kw["layout"]})')


def _pool2d_args(pool_size, layout):
    if layout not in ('NCHW', 'NHWC'):
        raise ValueError("Only NCHW and NHWC layouts are valid for 2D Pooling")
    pool_size = _tuple(pool_size, 2)
    if len(pool_size) != 2:
        raise ValueError('pool_size must be a number or a list of 2 ints')
    return pool_size


class MaxPool2D(_Pooling):
    """2-D max pooling; ``strides`` defaults to ``pool_size``; ``ceil_mode`` rounds the output
    size up (MXNet's 'full' convention)."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW',
                 ceil_mode=False, **kwargs):
        super().__init__(_pool2d_args(pool_size, layout), strides, padding, ceil_mode, False,
                         'max', layout, **kwargs)


class AvgPool2D(_Pooling):
    """2-D average pooling; ``count_include_pad`` counts padded zeros in the average."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCHW', count_include_pad=True, **kwargs):
        super().__init__(_pool2d_args(pool_size, layout), strides, padding, ceil_mode, False,
                         'avg', layout, count_include_pad, **kwargs)
