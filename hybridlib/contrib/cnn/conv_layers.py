"""Deformable convolution layers: ``DeformableConvolution`` (Deformable ConvNets v1, Dai et
al. 2017) and ``ModulatedDeformableConvolution`` (v2, Zhu et al. 2018), as MXNet 1.9.1's
``gluon.contrib.cnn``.

Each layer holds two convolutions: an ordinary ``Convolution`` (``offset_weight``,
``offset_bias``) that computes the sampling offsets from the input (and, for the modulated
layer, the masks: ``2 * sigmoid`` of the last third of its channels), and the deformable
convolution (``deformable_conv_weight``, ``deformable_conv_bias``) that samples the input at
the offset taps. The offset convolution starts at zero (``offset_weight_initializer`` and
``offset_bias_initializer`` are 'zeros'), so a new layer computes an ordinary convolution (the
modulated one's masks start at ``2 * sigmoid(0) = 1``).
"""
from ...block import HybridBlock, UsageError
from ...nn import Activation
from ...nn.conv_layers import _conv_repr, _infer_weight_shapes, _tuple

__all__ = ['DeformableConvolution', 'ModulatedDeformableConvolution']


class _DeformableConv(HybridBlock):
    """What the two layers share; ``_modulated`` picks the form."""
    _modulated = False

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups,
                 num_deformable_group, layout, use_bias, in_channels, activation,
                 weight_initializer, bias_initializer, offset_weight_initializer,
                 offset_bias_initializer, offset_use_bias, op_name, adj, prefix, params):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            if layout not in ('NCHW', 'NHWC'):
                raise UsageError("Only supports 'NCHW' and 'NHWC' layout for now")
            kernel_size = _tuple(kernel_size, 2)
            strides, padding, dilation = (_tuple(v, len(kernel_size))
                                          for v in (strides, padding, dilation))
            self._op_name = op_name
            taps = kernel_size[0] * kernel_size[1] * num_deformable_group
            # the offset convolution gives (y, x) per tap, and a mask per tap when modulated
            offset_channels = (3 if self._modulated else 2) * taps
            if self._modulated:
                self.offset_split_index = 2 * taps
            self._kwargs_offset = {
                'kernel': kernel_size, 'stride': strides, 'dilate': dilation, 'pad': padding,
                'num_filter': offset_channels, 'num_group': groups,
                'no_bias': not offset_use_bias, 'layout': layout}
            self._kwargs_deformable_conv = {
                'kernel': kernel_size, 'stride': strides, 'dilate': dilation, 'pad': padding,
                'num_filter': channels, 'num_group': groups,
                'num_deformable_group': num_deformable_group, 'no_bias': not use_bias,
                'layout': layout}
            if adj:
                self._kwargs_offset['adj'] = adj
                self._kwargs_deformable_conv['adj'] = adj
            # MXNet creates the modulated layer's deformable parameters first
            if self._modulated:
                self._deformable_params(channels, kernel_size, use_bias, weight_initializer,
                                        bias_initializer)
            data_shape = [0] * (len(kernel_size) + 2)
            data_shape[layout.find('N')] = 1
            data_shape[layout.find('C')] = in_channels
            shapes = _infer_weight_shapes('Convolution', tuple(data_shape), self._kwargs_offset)
            self.offset_weight = self.params.get('offset_weight', shape=shapes[1],
                                                 init=offset_weight_initializer,
                                                 allow_deferred_init=True)
            if offset_use_bias:
                self.offset_bias = self.params.get('offset_bias', shape=shapes[2],
                                                   init=offset_bias_initializer,
                                                   allow_deferred_init=True)
            else:
                self.offset_bias = None
            if not self._modulated:
                self._deformable_params(channels, kernel_size, use_bias, weight_initializer,
                                        bias_initializer)
            self.act = Activation(activation, prefix=activation + '_') if activation else None

    def _deformable_params(self, channels, kernel_size, use_bias, weight_initializer,
                           bias_initializer):
        # (channels, in_channels / groups, *kernel), the input channels inferred on first use
        self.deformable_conv_weight = self.params.get(
            'deformable_conv_weight', shape=(channels, 0) + tuple(kernel_size[:2]),
            init=weight_initializer, allow_deferred_init=True)
        if use_bias:
            self.deformable_conv_bias = self.params.get(
                'deformable_conv_bias', shape=(channels,), init=bias_initializer,
                allow_deferred_init=True)
        else:
            self.deformable_conv_bias = None

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        if offset_bias is None:
            offset = F.Convolution(x, offset_weight, cudnn_off=True, **self._kwargs_offset)
        else:
            offset = F.Convolution(x, offset_weight, offset_bias, cudnn_off=True,
                                   **self._kwargs_offset)
        inputs = dict(data=x, offset=offset, weight=deformable_conv_weight)
        if self._modulated:
            inputs['offset'] = F.slice_axis(offset, axis=1, begin=0,
                                            end=self.offset_split_index)
            mask = F.slice_axis(offset, axis=1, begin=self.offset_split_index, end=None)
            inputs['mask'] = F.sigmoid(mask) * 2
            op = F.contrib.ModulatedDeformableConvolution
        else:
            op = F.contrib.DeformableConvolution
        if deformable_conv_bias is not None:
            inputs['bias'] = deformable_conv_bias
        out = op(name='fwd', **inputs, **self._kwargs_deformable_conv)
        if self.act:
            out = self.act(out)
        return out


def _public_layer(op_name):
    """Class decorator of the two layers: MXNet's ``__init__``, the same for both but for the
    default of ``op_name`` (kept as ``_op_name``; the class picks the operator)."""
    def decorate(cls):
        def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                     dilation=(1, 1), groups=1, num_deformable_group=1, layout='NCHW',
                     use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                     bias_initializer='zeros', offset_weight_initializer='zeros',
                     offset_bias_initializer='zeros', offset_use_bias=True,
                     op_name=op_name, adj=None, prefix=None, params=None):
            super(cls, self).__init__(
                channels, kernel_size, strides, padding, dilation, groups, num_deformable_group,
                layout, use_bias, in_channels, activation, weight_initializer, bias_initializer,
                offset_weight_initializer, offset_bias_initializer, offset_use_bias, op_name,
                adj, prefix, params)

        __init__.__qualname__ = f'{cls.__qualname__}.__init__'
        cls.__init__ = __init__
        return cls
    return decorate


@_public_layer(op_name='DeformableConvolution')
class DeformableConvolution(_DeformableConv):
    """2-D deformable convolution (Deformable ConvNets v1): a convolution whose taps move by
    offsets that a second, ordinary convolution computes from the input.

    Parameters
    ----------
    channels : int
        Output channels.
    kernel_size, strides, padding, dilation : int or (int, int)
        As Conv2D's.
    groups : int
        Groups of input and output channels (both convolutions).
    num_deformable_group : int
        Groups of input channels that share their offsets.
    layout : {'NCHW'}
        MXNet accepts 'NHWC' here, but its operator does not.
    use_bias : bool
        Whether the deformable convolution has a bias.
    in_channels : int
        Input channels; 0 infers them on the first call.
    activation : str, optional
        An ``Activation`` applied to the output.
    weight_initializer, bias_initializer : Initializer or str
        Of the deformable convolution.
    offset_weight_initializer, offset_bias_initializer : Initializer or str, default 'zeros'
        Of the offset convolution.
    offset_use_bias : bool
        Whether the offset convolution has a bias.

    Parameters of the block: ``offset_weight`` (2 * kh * kw * num_deformable_group,
    in_channels / groups, kh, kw), ``offset_bias``, ``deformable_conv_weight`` (channels,
    in_channels / groups, kh, kw), ``deformable_conv_bias`` (channels,).

    Shapes: ``(N, in_channels, H, W)`` -> ``(N, channels, H', W')``, H' and W' as Conv2D's.
    """

    def _alias(self):
        return 'deformable_conv'

    def __repr__(self):
        # the deformable weight is (channels, in_channels / groups, kh, kw) in either layout
        return _conv_repr(self, self._kwargs_deformable_conv, self.deformable_conv_weight,
                          self.deformable_conv_bias, in_axis=1)


@_public_layer(op_name='ModulatedDeformableConvolution')
class ModulatedDeformableConvolution(_DeformableConv):
    """2-D modulated deformable convolution (Deformable ConvNets v2): DeformableConvolution
    whose offset convolution also gives a mask per tap (``2 * sigmoid`` of its last
    ``kh * kw * num_deformable_group`` channels) that scales the tap's sample.

    The arguments are DeformableConvolution's. Parameters of the block:
    ``deformable_conv_weight`` (channels, in_channels / groups, kh, kw),
    ``deformable_conv_bias`` (channels,), ``offset_weight`` (3 * kh * kw *
    num_deformable_group, in_channels / groups, kh, kw), ``offset_bias``.

    Shapes: ``(N, in_channels, H, W)`` -> ``(N, channels, H', W')``, H' and W' as Conv2D's.
    """
    _modulated = True

    def _alias(self):
        return 'modulated_deformable_conv'
