"""Convolution and pooling layers: Conv2D, MaxPool2D, AvgPool2D (and their 1-D/3-D bases).

``_Conv`` and ``_Pooling`` hold everything; the public classes only fix the dimension count
and defaults, as in Gluon 1.9.1. Weight shapes are ``(channels, in_channels / groups,
*kernel_size)`` with 0 for ``in_channels`` inferred on the first call.
"""
from numbers import Number

from .. import symbol
from ..block import HybridBlock, UsageError
from .basic_layers import Activation

__all__ = ['Conv2D', 'MaxPool2D', 'AvgPool2D']


def _tuple(value, n):
    """``(value,) * n`` for a number; sequences stay as given (MXNet's reprs show them so)."""
    return (value,) * n if isinstance(value, Number) else value


def _infer_weight_shapes(op_name, data_shape, kwargs):
    """(data, weight[, bias]) shapes that the operator infers from a partial data shape."""
    data = symbol.var('data', shape=data_shape)
    return getattr(symbol, op_name)(data, **kwargs).infer_shape_partial()[0]


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
            self._kwargs = {'kernel': kernel_size, 'stride': _tuple(strides, n),
                            'dilate': _tuple(dilation, n), 'pad': _tuple(padding, n),
                            'num_filter': channels, 'num_group': groups,
                            'no_bias': not use_bias, 'layout': layout}
            if adj is not None:
                self._kwargs['adj'] = adj
            data_shape = [0] * (n + 2)
            data_shape[layout.find('N')] = 1
            data_shape[layout.find('C')] = in_channels
            shapes = _infer_weight_shapes(op_name, tuple(data_shape), self._kwargs)
            self.weight = self.params.get('weight', shape=shapes[1], init=weight_initializer,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=shapes[2], init=bias_initializer,
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
        # the weight's input-channel axis (per group): MXNet shows shape[1], which for a
        # channel-last layout is a kernel size
        in_axis = -1 if kw['layout'].endswith('C') and self._op_name == 'Convolution' else 1
        return s.format(mapping=f'{shape[in_axis] if shape[in_axis] else None} -> {shape[0]}')


class Conv2D(_Conv):
    """2-D convolution over ``(N, C, H, W)`` (or ``NHWC``) input.

    Parameters
    ----------
    channels : int
        Output channels.
    kernel_size : int or (int, int)
    strides, padding, dilation : int or (int, int)
    groups : int
        Split the input and output channels into this many independent groups.
    layout : {'NCHW', 'NHWC'}
    activation : str, optional
        An ``Activation`` applied to the output.
    use_bias : bool
    weight_initializer, bias_initializer : Initializer or str
    in_channels : int, default 0
        Input channels; 0 infers them on the first call.

    Shapes: ``(N, in_channels, H, W)`` -> ``(N, channels, H', W')`` with
    ``H' = (H + 2 * padding[0] - dilation[0] * (kernel_size[0] - 1) - 1) // strides[0] + 1``.
    The weight is ``(channels, in_channels / groups, *kernel_size)`` (NCHW) or
    ``(channels, *kernel_size, in_channels / groups)`` (NHWC).
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                 groups=1, layout='NCHW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        if layout not in ('NCHW', 'NHWC'):
            raise UsageError("Only supports 'NCHW' and 'NHWC' layout for now")
        kernel_size = _tuple(kernel_size, 2)
        if len(kernel_size) != 2:
            raise UsageError('kernel_size must be a number or a list of 2 ints')
        op_name = kwargs.pop('op_name', 'Convolution')
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, op_name, **kwargs)


class _Pooling(HybridBlock):
    """N-d max or average pooling (``pool_type``), or global pooling over all spatial axes."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        n = len(pool_size)
        self._kwargs = {'kernel': pool_size, 'stride': _tuple(strides, n),
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


def _pool2d_size(pool_size, layout):
    if layout not in ('NCHW', 'NHWC'):
        raise UsageError('Only NCHW and NHWC layouts are valid for 2D Pooling')
    pool_size = _tuple(pool_size, 2)
    if len(pool_size) != 2:
        raise UsageError('pool_size must be a number or a list of 2 ints')
    return pool_size


class MaxPool2D(_Pooling):
    """2-D max pooling over ``(N, C, H, W)`` (or ``NHWC``) input.

    Parameters
    ----------
    pool_size : int or (int, int), default (2, 2)
    strides : int or (int, int), optional
        Default: ``pool_size``.
    padding : int or (int, int), default 0
    layout : {'NCHW', 'NHWC'}
    ceil_mode : bool, default False
        Round the output size up (MXNet's 'full' convention) instead of down.

    Shapes: ``H' = floor_or_ceil((H + 2 * padding[0] - pool_size[0]) / strides[0]) + 1``.
    """

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW',
                 ceil_mode=False, **kwargs):
        super().__init__(_pool2d_size(pool_size, layout), strides, padding, ceil_mode, False,
                         'max', layout, **kwargs)


class AvgPool2D(_Pooling):
    """2-D average pooling over ``(N, C, H, W)`` (or ``NHWC``) input; the arguments and shapes
    are MaxPool2D's, and ``count_include_pad`` (default True) counts padded zeros in the
    average."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCHW', count_include_pad=True, **kwargs):
        super().__init__(_pool2d_size(pool_size, layout), strides, padding, ceil_mode, False,
                         'avg', layout, count_include_pad, **kwargs)
