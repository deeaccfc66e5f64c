"""Convolutional recurrent cells of ``gluon.contrib.rnn``, as MXNet 1.9.1's: the RNN, LSTM and
GRU cells with convolutions in place of the matrix products (Shi et al., 2015,
https://arxiv.org/abs/1506.04214), over 1, 2 or 3 spatial dimensions.

Each cell holds ``i2h_weight`` (G*H, C, *i2h_kernel), ``h2h_weight`` (G*H, H, *h2h_kernel),
``i2h_bias`` and ``h2h_bias`` (G*H,) for G gates of H channels (channel-last layouts put the
channels last in the weights too). The input convolution pads by ``i2h_pad``; the recurrent one
pads to keep the state's size, so its kernel must be odd. The state's spatial size is the input
convolution's output size, known from ``input_shape``.
"""
from math import floor

from ...base import numeric_types
from ...gluon_rnn.rnn_cell import HybridRecurrentCell, _check

__all__ = ['Conv1DRNNCell', 'Conv2DRNNCell', 'Conv3DRNNCell',
           'Conv1DLSTMCell', 'Conv2DLSTMCell', 'Conv3DLSTMCell',
           'Conv1DGRUCell', 'Conv2DGRUCell', 'Conv3DGRUCell']


def _get_conv_out_size(dimensions, kernels, paddings, dilations):
    """The output size of a stride-1 convolution per spatial axis (0 stays unknown)."""
    return tuple(int(floor(x + 2 * p - d * (k - 1) - 1) + 1) if x else 0
                 for x, k, p, d in zip(dimensions, kernels, paddings, dilations))


class _BaseConvRNNCell(HybridRecurrentCell):
    """The weights, shapes, two convolutions and step shared by the convolutional cells.

    Subclasses give their kind (``_kind``: 'RNN', 'LSTM' or 'GRU'), gates (``_gate_names``,
    in their order in the weights), number of states (``_num_states``) and the update of the
    states from the two convolutions (``_step``).
    """

    def __init__(self, input_shape, hidden_channels,
                 i2h_kernel, h2h_kernel,
                 i2h_pad, i2h_dilate, h2h_dilate,
                 i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer,
                 dims,
                 conv_layout, activation,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_channels = hidden_channels
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation

        settings = dict(i2h_kernel=i2h_kernel, i2h_pad=i2h_pad, i2h_dilate=i2h_dilate,
                        h2h_kernel=h2h_kernel, h2h_dilate=h2h_dilate)
        for name, spec in settings.items():
            _check(isinstance(spec, int) or len(spec) == dims,
                   f'For {dims}D convolution, the convolution settings can only be either int '
                   f'or list/tuple of length {dims} ({type(self).__name__}: {name}={spec})')

        def per_axis(spec):
            return (spec,) * dims if isinstance(spec, numeric_types) else tuple(spec)

        self._i2h_kernel = per_axis(i2h_kernel)
        self._stride = (1,) * dims
        self._i2h_pad = per_axis(i2h_pad)
        self._i2h_dilate = per_axis(i2h_dilate)
        self._h2h_kernel = per_axis(h2h_kernel)
        _check(all(k % 2 == 1 for k in self._h2h_kernel),
               f'Only support odd number, get h2h_kernel= {h2h_kernel}')
        self._h2h_dilate = per_axis(h2h_dilate)

        (self._channel_axis, self._in_channels, i2h_param_shape, h2h_param_shape,
         self._h2h_pad, self._state_shape) = self._decide_shapes()

        self._i2h_h2h_params(i2h_param_shape, h2h_param_shape, i2h_weight_initializer,
                             h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer)

    def _decide_shapes(self):
        """(channel axis, input channels, i2h weight shape, h2h weight shape, h2h padding,
        state shape without the batch axis)."""
        channel_axis = self._conv_layout.find('C')
        input_shape = self._input_shape
        in_channels = input_shape[channel_axis - 1]
        hidden_channels = self._hidden_channels
        dimensions = input_shape[1:] if channel_axis == 1 else input_shape[:-1]
        rows = (hidden_channels * self._num_gates,)
        conv_out_size = _get_conv_out_size(dimensions, self._i2h_kernel, self._i2h_pad,
                                           self._i2h_dilate)
        # the recurrent convolution keeps the state's size
        h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel))
        if channel_axis == 1:
            i2h_param_shape = rows + (in_channels,) + self._i2h_kernel
            h2h_param_shape = rows + (hidden_channels,) + self._h2h_kernel
            state_shape = (hidden_channels,) + conv_out_size
        else:
            i2h_param_shape = rows + self._i2h_kernel + (in_channels,)
            h2h_param_shape = rows + self._h2h_kernel + (hidden_channels,)
            state_shape = conv_out_size + (hidden_channels,)
        return (channel_axis, in_channels, i2h_param_shape, h2h_param_shape, h2h_pad,
                state_shape)

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        mapping = f'{in_channels if in_channels else None} -> {shape[0]}'
        return f'{type(self).__name__}({mapping}, {self._activation}, {self._conv_layout})'

    def _alias(self):
        return 'conv_' + self._kind.lower()

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size,) + self._state_shape, '__layout__': self._conv_layout}
                for _ in range(self._num_states)]

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                      prefix):
        num_filter = self._hidden_channels * self._num_gates
        i2h = F.Convolution(data=inputs, num_filter=num_filter, kernel=self._i2h_kernel,
                            stride=self._stride, pad=self._i2h_pad, dilate=self._i2h_dilate,
                            weight=i2h_weight, bias=i2h_bias, layout=self._conv_layout,
                            name=prefix + 'i2h')
        h2h = F.Convolution(data=states[0], num_filter=num_filter, kernel=self._h2h_kernel,
                            dilate=self._h2h_dilate, pad=self._h2h_pad, stride=self._stride,
                            weight=h2h_weight, bias=h2h_bias, layout=self._conv_layout,
                            name=prefix + 'h2h')
        return i2h, h2h

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f't{self._counter}_'
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        return self._step(F, i2h, h2h, states, prefix)

    def _step(self, F, i2h, h2h, states, prefix):
        """``(output, next_states)`` from the two convolutions (all gates stacked on the
        channel axis) and the previous states; symbol names start with ``prefix``."""
        raise NotImplementedError('_BaseConvRNNCell is abstract class for convolutional RNN')


class _ConvRNNCell(_BaseConvRNNCell):
    """``h_t = act(W_i * x_t + R_i * h_(t-1) + b_i)``."""
    _kind = 'RNN'
    _num_states = 1

    @property
    def _gate_names(self):
        return ('',)

    def _step(self, F, i2h, h2h, states, prefix):
        output = self._get_activation(F, i2h + h2h, self._activation, name=prefix + 'out')
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    """The LSTM gates i, f, c, o (in this order in the weights) from convolutions; the
    activation replaces tanh (of the candidate and of the new cell state)."""
    _kind = 'LSTM'
    _num_states = 2

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def _step(self, F, i2h, h2h, states, prefix):
        gates = i2h + h2h
        slice_gates = F.SliceChannel(gates, num_outputs=4, name=prefix + 'slice',
                                     axis=self._channel_axis)
        in_gate = F.Activation(slice_gates[0], act_type='sigmoid', name=prefix + 'i')
        forget_gate = F.Activation(slice_gates[1], act_type='sigmoid', name=prefix + 'f')
        in_transform = self._get_activation(F, slice_gates[2], self._activation,
                                            name=prefix + 'c')
        out_gate = F.Activation(slice_gates[3], act_type='sigmoid', name=prefix + 'o')
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=prefix + 'state')
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation),
                                name=prefix + 'out')
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    """The GRU gates r, z and the candidate n (in this order in the weights) from
    convolutions, the reset gate applied after the recurrent convolution; the activation
    replaces tanh of the candidate."""
    _kind = 'GRU'
    _num_states = 1

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def _step(self, F, i2h, h2h, states, prefix):
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + 'i2h_slice',
                                           axis=self._channel_axis)
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + 'h2h_slice',
                                           axis=self._channel_axis)
        reset_gate = F.Activation(i2h_r + h2h_r, act_type='sigmoid', name=prefix + 'r_act')
        update_gate = F.Activation(i2h_z + h2h_z, act_type='sigmoid', name=prefix + 'z_act')
        next_h_tmp = self._get_activation(F, i2h + reset_gate * h2h, self._activation,
                                          name=prefix + 'h_act')
        next_h = F.elemwise_add((1. - update_gate) * next_h_tmp, update_gate * states[0],
                                name=prefix + 'out')
        return next_h, [next_h]


# -------------------------------------------------------------------------------------------------
# The public cells: one per kind and number of spatial dimensions, with MXNet's defaults
# -------------------------------------------------------------------------------------------------

_MATH = {
    'RNN': r"""
    .. math::

        h_t = tanh(W_i \ast x_t + R_i \ast h_{t-1} + b_i)
""",
    'LSTM': r"""
    .. math::
        \begin{array}{ll}
        i_t = \sigma(W_i \ast x_t + R_i \ast h_{t-1} + b_i) \\
        f_t = \sigma(W_f \ast x_t + R_f \ast h_{t-1} + b_f) \\
        o_t = \sigma(W_o \ast x_t + R_o \ast h_{t-1} + b_o) \\
        c^\prime_t = tanh(W_c \ast x_t + R_c \ast h_{t-1} + b_c) \\
        c_t = f_t \circ c_{t-1} + i_t \circ c^\prime_t \\
        h_t = o_t \circ tanh(c_t) \\
        \end{array}
""",
    'GRU': r"""
    .. math::
        \begin{array}{ll}
        r_t = \sigma(W_r \ast x_t + R_r \ast h_{t-1} + b_r) \\
        z_t = \sigma(W_z \ast x_t + R_z \ast h_{t-1} + b_z) \\
        n_t = tanh(W_i \ast x_t + b_i + r_t \circ (R_n \ast h_{t-1} + b_n)) \\
        h^\prime_t = (1 - z_t) \circ n_t + z_t \circ h \\
        \end{array}
""",
}
_LAYOUTS = {1: ('NCW', 'NWC', '(C, W)'), 2: ('NCHW', 'NHWC', '(C, H, W)'),
            3: ('NCDHW', 'NDHWC', '(C, D, H, W)')}
_STATES = {'RNN': '[h]', 'LSTM': '[h, c]', 'GRU': '[h]'}

_DOC = """
{math}
    Parameters
    ----------
    input_shape : tuple of int
        The shape of one input step of one sample, in ``conv_layout`` without N: {example} for
        '{layout}'.
    hidden_channels : int
        The number of channels H of the state.
    i2h_kernel : int or tuple of int
        Kernel of the input convolution.
    h2h_kernel : int or tuple of int
        Kernel of the recurrent convolution (odd sizes only).
    i2h_pad : int or tuple of int, default {zeros}
        Padding of the input convolution.
    i2h_dilate : int or tuple of int, default {ones}
        Dilation of the input convolution.
    h2h_dilate : int or tuple of int, default {ones}
        Dilation of the recurrent convolution.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
        Initializers of the convolution weights.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers of the convolution biases.
    conv_layout : str, default '{layout}'
        The layout of inputs, states and weights: '{layout}' or '{last}'{note}.
    activation : str or Block, default 'tanh'
        The activation in place of tanh: a name (as for ``Activation``), a LeakyReLU block or
        a callable.
    prefix : str, default ``'conv_{alias}_'``
    params : ParameterDict, optional
        Share these weights instead of creating new ones.

    Inputs: ``data`` (N, *input_shape); ``states``: a list {states}, each shaped as
    ``state_info()`` says.
    Outputs: ``out``, the new h; ``next_states``, shaped as ``states``.
"""


def _public_cell(dims):
    """Class decorator of the public cells over ``dims`` spatial dimensions: MXNet's
    ``__init__``, whose defaults of ``i2h_pad``, the dilations and ``conv_layout`` depend on
    ``dims``, and the documentation of the cell's parameters after its first line."""
    zeros, ones = (0,) * dims, (1,) * dims
    layout, last, example = _LAYOUTS[dims]

    def decorate(cls):
        def __init__(self, input_shape, hidden_channels,
                     i2h_kernel, h2h_kernel,
                     i2h_pad=zeros, i2h_dilate=ones, h2h_dilate=ones,
                     i2h_weight_initializer=None, h2h_weight_initializer=None,
                     i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                     conv_layout=layout, activation='tanh',
                     prefix=None, params=None):
            super(cls, self).__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                                      i2h_pad, i2h_dilate, h2h_dilate, i2h_weight_initializer,
                                      h2h_weight_initializer, i2h_bias_initializer,
                                      h2h_bias_initializer, dims, conv_layout, activation,
                                      prefix, params)

        __init__.__qualname__ = f'{cls.__qualname__}.__init__'
        cls.__init__ = __init__
        note = "\n        (which MXNet's Convolution refuses)" if dims == 1 else ''
        cls.__doc__ += _DOC.format(math=_MATH[cls._kind], example=example, layout=layout,
                                   last=last, note=note, zeros=zeros, ones=ones,
                                   alias=cls._kind.lower(), states=_STATES[cls._kind])
        return cls
    return decorate


@_public_cell(dims=1)
class Conv1DRNNCell(_ConvRNNCell):
    """1D convolutional RNN cell."""


@_public_cell(dims=2)
class Conv2DRNNCell(_ConvRNNCell):
    """2D convolutional RNN cell."""


@_public_cell(dims=3)
class Conv3DRNNCell(_ConvRNNCell):
    """3D convolutional RNN cell."""


@_public_cell(dims=1)
class Conv1DLSTMCell(_ConvLSTMCell):
    """1D convolutional LSTM cell (Shi et al., "Convolutional LSTM Network: A Machine
    Learning Approach for Precipitation Nowcasting", NIPS 2015)."""


@_public_cell(dims=2)
class Conv2DLSTMCell(_ConvLSTMCell):
    """2D convolutional LSTM cell (Shi et al., "Convolutional LSTM Network: A Machine
    Learning Approach for Precipitation Nowcasting", NIPS 2015)."""


@_public_cell(dims=3)
class Conv3DLSTMCell(_ConvLSTMCell):
    """3D convolutional LSTM cell (Shi et al., "Convolutional LSTM Network: A Machine
    Learning Approach for Precipitation Nowcasting", NIPS 2015)."""


@_public_cell(dims=1)
class Conv1DGRUCell(_ConvGRUCell):
    """1D convolutional gated recurrent unit (GRU) cell."""


@_public_cell(dims=2)
class Conv2DGRUCell(_ConvGRUCell):
    """2D convolutional gated recurrent unit (GRU) cell."""


@_public_cell(dims=3)
class Conv3DGRUCell(_ConvGRUCell):
    """3D convolutional gated recurrent unit (GRU) cell."""
