"""Convolution, pooling and padding layers, as Gluon 1.9.1: Conv1D/2D/3D, their transposes
Conv1DTranspose/2DTranspose/3DTranspose, MaxPool1D/2D/3D, AvgPool1D/2D/3D,
GlobalMaxPool1D/2D/3D, GlobalAvgPool1D/2D/3D and ReflectionPad2D.

``_Conv`` (one ``Convolution`` or ``Deconvolution``) and ``_Pooling`` (one ``Pooling``) hold
everything; the public classes check MXNet's arguments for their dimension count and fix the
defaults. Weight shapes are ``(channels, in_channels / groups, *kernel_size)`` for a
convolution and ``(in_channels, channels / groups, *kernel_size)`` for a transposed one
(channel-last layouts move the second axis last), with 0 for ``in_channels`` inferred on the
first call.
"""
from numbers import Number

from .. import symbol
from ..block import HybridBlock, UsageError
from .basic_layers import Activation

__all__ = ['Conv1D', 'Conv2D', 'Conv3D', 'Conv1DTranspose', 'Conv2DTranspose',
           'Conv3DTranspose', 'MaxPool1D', 'MaxPool2D', 'MaxPool3D', 'AvgPool1D', 'AvgPool2D',
           'AvgPool3D', 'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D',
           'GlobalAvgPool1D', 'GlobalAvgPool2D', 'GlobalAvgPool3D', 'ReflectionPad2D']

# The layouts each class accepts, by spatial dimension count (MXNet 1.9.1's assertions: its 1-D
# convolutions take NCW only, and the Convolution operator has no NWC)
_CONV_LAYOUTS = {1: ('NCW',), 2: ('NCHW', 'NHWC'), 3: ('NCDHW', 'NDHWC')}
_POOL_LAYOUTS = {1: ('NCW', 'NWC'), 2: ('NCHW', 'NHWC'), 3: ('NCDHW', 'NDHWC')}


def _tuple(value, n):
    """``(value,) * n`` for a number; sequences stay as given (MXNet's reprs show them so)."""
    return (value,) * n if isinstance(value, Number) else value


def _sized(value, n, what):
    """``value`` as an n-tuple (a sequence as given), with MXNet's assertion on its length."""
    value = _tuple(value, n)
    if len(value) != n:
        raise UsageError(f'{what} must be a number or a list of {n} ints')
    return value


def _infer_weight_shapes(op_name, data_shape, kwargs):
    """(data, weight[, bias]) shapes that the operator infers from a partial data shape."""
    data = symbol.var('data', shape=data_shape)
    return getattr(symbol, op_name)(data, **kwargs).infer_shape_partial()[0]


# -------------------------------------------------------------------------------------------------
# Convolutions
# -------------------------------------------------------------------------------------------------

class _Conv(HybridBlock):
    """N-d convolution (``op_name='Convolution'``) or transposed convolution
    (``'Deconvolution'``, with ``adj`` its output padding) and an optional activation."""

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
        # 'shape[1] -> shape[0]' as MXNet: in_channels / groups -> channels for a convolution,
        # channels / groups -> in_channels for a transposed one. For a channel-last layout that
        # axis is the last one (MXNet shows shape[1] there too, which is a kernel size)
        in_axis = -1 if self._kwargs['layout'].endswith('C') else 1
        return _conv_repr(self, self._kwargs, self.weight, self.bias, in_axis)


def _conv_repr(block, kw, weight, bias, in_axis):
    """MXNet's repr of a convolution layer whose operator takes the arguments ``kw``:
    ``Name(in -> out, kernel_size=..., stride=...`` and the settings that differ from their
    defaults, the bias and the activation. ``in -> out`` is ``weight.shape[in_axis] ->
    weight.shape[0]``, None while the input channels are unknown."""
    n = len(kw['kernel'])
    s = f'{type(block).__name__}({{mapping}}, kernel_size={kw["kernel"]}, stride={kw["stride"]}'
    if kw['pad'] != (0,) * n:
        s += f', padding={kw["pad"]}'
    if kw['dilate'] != (1,) * n:
        s += f', dilation={kw["dilate"]}'
    # MXNet 1.9.1 means to show a transposed convolution's output_padding but tests an
    # attribute that it never sets (out_pad; it sets outpad), so it never does; here it shows
    if tuple(kw.get('adj') or (0,) * n) != (0,) * n:
        s += f', output_padding={kw["adj"]}'
    if kw['num_group'] != 1:
        s += f', groups={kw["num_group"]}'
    if bias is None:
        s += ', bias=False'
    if block.act:
        s += f', {block.act}'
    s += ')'
    shape = weight.shape
    return s.format(mapping=f'{shape[in_axis] if shape[in_axis] else None} -> {shape[0]}')


def _check_conv_layout(layout, ndim):
    layouts = _CONV_LAYOUTS[ndim]
    if layout not in layouts:
        raise UsageError(f"Only supports {' and '.join(map(repr, layouts))} layout for now")


class _ConvNd(_Conv):
    """A convolution over ``ndim`` spatial axes, with MXNet's checks of the layout and the
    kernel size."""

    def __init__(self, ndim, channels, kernel_size, strides, padding, dilation, groups, layout,
                 activation, use_bias, weight_initializer, bias_initializer, in_channels,
                 **kwargs):
        _check_conv_layout(layout, ndim)
        kernel_size = _sized(kernel_size, ndim, 'kernel_size')
        op_name = kwargs.pop('op_name', 'Convolution')
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, op_name, **kwargs)


class _ConvTransposeNd(_Conv):
    """A transposed convolution over ``ndim`` spatial axes, with MXNet's checks of the layout,
    the kernel size and the output padding (kept as ``outpad``, as MXNet does)."""

    def __init__(self, ndim, channels, kernel_size, strides, padding, output_padding, dilation,
                 groups, layout, activation, use_bias, weight_initializer, bias_initializer,
                 in_channels, **kwargs):
        _check_conv_layout(layout, ndim)
        kernel_size = _sized(kernel_size, ndim, 'kernel_size')
        output_padding = _sized(output_padding, ndim, 'output_padding')
        op_name = kwargs.pop('op_name', 'Deconvolution')
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv1D(_ConvNd):
    """1-D convolution over ``(N, C, W)`` input (e.g. over time).

    Parameters
    ----------
    channels : int
        Output channels.
    kernel_size : int or (int,)
    strides, padding, dilation : int or (int,)
    groups : int
        Split the input and output channels into this many independent groups.
    layout : {'NCW'}
    activation : str, optional
        An ``Activation`` applied to the output.
    use_bias : bool
    weight_initializer, bias_initializer : Initializer or str
    in_channels : int, default 0
        Input channels; 0 infers them on the first call.

    Shapes: ``(N, in_channels, W)`` -> ``(N, channels, W')`` with
    ``W' = (W + 2 * padding - dilation * (kernel_size - 1) - 1) // strides + 1``.
    The weight is ``(channels, in_channels / groups, kernel_size)``.
    """

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout='NCW', activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(1, channels, kernel_size, strides, padding, dilation, groups, layout,
                         activation, use_bias, weight_initializer, bias_initializer,
                         in_channels, **kwargs)


class Conv2D(_ConvNd):
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
        super().__init__(2, channels, kernel_size, strides, padding, dilation, groups, layout,
                         activation, use_bias, weight_initializer, bias_initializer,
                         in_channels, **kwargs)


class Conv3D(_ConvNd):
    """3-D convolution over ``(N, C, D, H, W)`` (or ``NDHWC``) input.

    The arguments are Conv2D's with three entries per size, and ``layout`` 'NCDHW' or
    'NDHWC'. Shapes: ``(N, in_channels, D, H, W)`` -> ``(N, channels, D', H', W')``, each
    output size as in Conv2D. The weight is ``(channels, in_channels / groups,
    *kernel_size)`` (NCDHW) or ``(channels, *kernel_size, in_channels / groups)`` (NDHWC).
    """

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout='NCDHW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(3, channels, kernel_size, strides, padding, dilation, groups, layout,
                         activation, use_bias, weight_initializer, bias_initializer,
                         in_channels, **kwargs)


class Conv1DTranspose(_ConvTransposeNd):
    """Transposed 1-D convolution (the gradient of Conv1D with respect to its input) over
    ``(N, C, W)`` input.

    Parameters
    ----------
    channels : int
        Output channels.
    kernel_size : int or (int,)
    strides, padding : int or (int,)
    output_padding : int or (int,), default 0
        Added to the output size (smaller than ``strides``): which of the input sizes
        that a Conv1D with these arguments maps to ``W`` to produce.
    dilation : int or (int,)
    groups : int
    layout : {'NCW'}
    activation : str, optional
    use_bias : bool
    weight_initializer, bias_initializer : Initializer or str
    in_channels : int, default 0
        Input channels; 0 infers them on the first call.

    Shapes: ``(N, in_channels, W)`` -> ``(N, channels, W')`` with
    ``W' = (W - 1) * strides - 2 * padding + dilation * (kernel_size - 1) + 1
    + output_padding``. The weight is ``(in_channels, channels / groups, kernel_size)``.
    """

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout='NCW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(1, channels, kernel_size, strides, padding, output_padding, dilation,
                         groups, layout, activation, use_bias, weight_initializer,
                         bias_initializer, in_channels, **kwargs)


class Conv2DTranspose(_ConvTransposeNd):
    """Transposed 2-D convolution over ``(N, C, H, W)`` (or ``NHWC``) input.

    The arguments are Conv1DTranspose's with two entries per size, and ``layout`` 'NCHW' or
    'NHWC'. Shapes: ``(N, in_channels, H, W)`` -> ``(N, channels, H', W')``, each output size
    as in Conv1DTranspose. The weight is ``(in_channels, channels / groups, *kernel_size)``
    (NCHW) or ``(in_channels, *kernel_size, channels / groups)`` (NHWC).
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout='NCHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(2, channels, kernel_size, strides, padding, output_padding, dilation,
                         groups, layout, activation, use_bias, weight_initializer,
                         bias_initializer, in_channels, **kwargs)


class Conv3DTranspose(_ConvTransposeNd):
    """Transposed 3-D convolution over ``(N, C, D, H, W)`` (or ``NDHWC``) input.

    The arguments are Conv1DTranspose's with three entries per size, and ``layout`` 'NCDHW'
    or 'NDHWC'. Shapes: ``(N, in_channels, D, H, W)`` -> ``(N, channels, D', H', W')``, each
    output size as in Conv1DTranspose. The weight is ``(in_channels, channels / groups,
    *kernel_size)`` (NCDHW) or ``(in_channels, *kernel_size, channels / groups)`` (NDHWC).
    """

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout='NCDHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        super().__init__(3, channels, kernel_size, strides, padding, output_padding, dilation,
                         groups, layout, activation, use_bias, weight_initializer,
                         bias_initializer, in_channels, **kwargs)


# -------------------------------------------------------------------------------------------------
# Pooling
# -------------------------------------------------------------------------------------------------

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


def _pool_size(pool_size, layout, n):
    """MXNet's checks of an n-d pooling layer's layout and window; the window as a tuple."""
    layouts = _POOL_LAYOUTS[n]
    if layout not in layouts:
        raise UsageError(f'Only {layouts[0]} and {layouts[1]} layouts are valid for {n}D Pooling')
    return _sized(pool_size, n, 'pool_size')


class MaxPool1D(_Pooling):
    """1-D max pooling over ``(N, C, W)`` (or ``NWC``) input.

    Parameters
    ----------
    pool_size : int or (int,), default 2
    strides : int or (int,), optional
        Default: ``pool_size``.
    padding : int or (int,), default 0
    layout : {'NCW', 'NWC'}
    ceil_mode : bool, default False
        Round the output size up (MXNet's 'full' convention) instead of down.

    Shapes: ``(N, C, W)`` -> ``(N, C, W')`` with
    ``W' = floor_or_ceil((W + 2 * padding - pool_size) / strides) + 1``.
    """

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False,
                 **kwargs):
        super().__init__(_pool_size(pool_size, layout, 1), strides, padding, ceil_mode, False,
                         'max', layout, **kwargs)


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
        super().__init__(_pool_size(pool_size, layout, 2), strides, padding, ceil_mode, False,
                         'max', layout, **kwargs)


class MaxPool3D(_Pooling):
    """3-D max pooling over ``(N, C, D, H, W)`` (or ``NDHWC``) input; the arguments are
    MaxPool2D's with three entries per size (note MXNet's order: ``ceil_mode`` before
    ``layout`` here), the output sizes as in MaxPool1D."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCDHW', **kwargs):
        super().__init__(_pool_size(pool_size, layout, 3), strides, padding, ceil_mode, False,
                         'max', layout, **kwargs)


class AvgPool1D(_Pooling):
    """1-D average pooling over ``(N, C, W)`` (or ``NWC``) input; the arguments and shapes are
    MaxPool1D's, and ``count_include_pad`` (default True) counts padded zeros in the
    average."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False,
                 count_include_pad=True, **kwargs):
        super().__init__(_pool_size(pool_size, layout, 1), strides, padding, ceil_mode, False,
                         'avg', layout, count_include_pad, **kwargs)


class AvgPool2D(_Pooling):
    """2-D average pooling over ``(N, C, H, W)`` (or ``NHWC``) input; the arguments and shapes
    are MaxPool2D's, and ``count_include_pad`` (default True) counts padded zeros in the
    average."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCHW', count_include_pad=True, **kwargs):
        super().__init__(_pool_size(pool_size, layout, 2), strides, padding, ceil_mode, False,
                         'avg', layout, count_include_pad, **kwargs)


class AvgPool3D(_Pooling):
    """3-D average pooling over ``(N, C, D, H, W)`` (or ``NDHWC``) input; the arguments and
    shapes are MaxPool3D's, and ``count_include_pad`` (default True) counts padded zeros in
    the average."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCDHW', count_include_pad=True, **kwargs):
        super().__init__(_pool_size(pool_size, layout, 3), strides, padding, ceil_mode, False,
                         'avg', layout, count_include_pad, **kwargs)


class _GlobalPooling(_Pooling):
    """Max or average pooling of each whole channel to size 1 over ``ndim`` spatial axes (as
    MXNet: ``global_pool`` with a kernel of ones and ceil_mode, which only the repr shows)."""

    def __init__(self, ndim, pool_type, layout, **kwargs):
        super().__init__(_pool_size((1,) * ndim, layout, ndim), None, 0, True, True, pool_type,
                         layout, **kwargs)


class GlobalMaxPool1D(_GlobalPooling):
    """The maximum of each channel over the whole width: ``(N, C, W)`` -> ``(N, C, 1)``
    (``layout`` 'NCW', or 'NWC': ``(N, W, C)`` -> ``(N, 1, C)``)."""

    def __init__(self, layout='NCW', **kwargs):
        super().__init__(1, 'max', layout, **kwargs)


class GlobalMaxPool2D(_GlobalPooling):
    """The maximum of each channel over the whole image: ``(N, C, H, W)`` -> ``(N, C, 1, 1)``
    (``layout`` 'NCHW', or 'NHWC': ``(N, H, W, C)`` -> ``(N, 1, 1, C)``)."""

    def __init__(self, layout='NCHW', **kwargs):
        super().__init__(2, 'max', layout, **kwargs)


class GlobalMaxPool3D(_GlobalPooling):
    """The maximum of each channel over the whole volume: ``(N, C, D, H, W)`` ->
    ``(N, C, 1, 1, 1)`` (``layout`` 'NCDHW', or 'NDHWC': channels last)."""

    def __init__(self, layout='NCDHW', **kwargs):
        super().__init__(3, 'max', layout, **kwargs)


class GlobalAvgPool1D(_GlobalPooling):
    """The mean of each channel over the whole width: ``(N, C, W)`` -> ``(N, C, 1)``
    (``layout`` 'NCW', or 'NWC': ``(N, W, C)`` -> ``(N, 1, C)``)."""

    def __init__(self, layout='NCW', **kwargs):
        super().__init__(1, 'avg', layout, **kwargs)


class GlobalAvgPool2D(_GlobalPooling):
    """The mean of each channel over the whole image: ``(N, C, H, W)`` -> ``(N, C, 1, 1)``
    (``layout`` 'NCHW', or 'NHWC': ``(N, H, W, C)`` -> ``(N, 1, 1, C)``)."""

    def __init__(self, layout='NCHW', **kwargs):
        super().__init__(2, 'avg', layout, **kwargs)


class GlobalAvgPool3D(_GlobalPooling):
    """The mean of each channel over the whole volume: ``(N, C, D, H, W)`` ->
    ``(N, C, 1, 1, 1)`` (``layout`` 'NCDHW', or 'NDHWC': channels last)."""

    def __init__(self, layout='NCDHW', **kwargs):
        super().__init__(3, 'avg', layout, **kwargs)


# -------------------------------------------------------------------------------------------------
# Padding
# -------------------------------------------------------------------------------------------------

class ReflectionPad2D(HybridBlock):
    """Pad the height and width of ``(N, C, H, W)`` input with the reflection of its border
    (the border itself not repeated), through the ``pad`` operator in 'reflect' mode.

    Parameters
    ----------
    padding : int or 8 ints, default 0
        The pad on each side of H and W, or MXNet's ``pad_width``: (before, after) for each of
        the four axes, zero on N and C. Every pad must be smaller than its axis.

    Shapes: ``(N, C, H, W)`` -> ``(N, C, H + 2 * padding, W + 2 * padding)``.
    """

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, Number):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        if len(padding) != 8:
            # MXNet 1.9.1 asserts this without a message
            raise UsageError(f'padding must be a number or a pad_width of 8 ints (before, '
                             f'after for N, C, H and W), got {padding}')
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode='reflect', pad_width=self._padding)
