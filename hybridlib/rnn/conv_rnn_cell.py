"""MXNet's legacy convolutional RNN cells (``mx.rnn.ConvRNNCell``, ``ConvLSTMCell``,
``ConvGRUCell``), as MXNet 1.9.1's: the cells of ``rnn_cell.py`` with 2-d convolutions in
place of the matrix products (Shi et al. 2015, https://arxiv.org/abs/1506.04214).

Each cell holds ``i2h_weight``, ``h2h_weight``, ``i2h_bias`` and ``h2h_bias`` for G gates of
``num_hidden`` channels (their shapes are inferred from the data). The input convolution has
the given kernel, stride, pad and dilation; the recurrent one pads to keep the state's size,
so its kernel must be odd. The state's shape is the input convolution's output shape for
``input_shape``, with 0 for the batch size.
"""
import functools

from .. import symbol
from .cell_base import GATES, BaseRNNCell, check, gru_update, lstm_update, plus

__all__ = ['BaseConvRNNCell', 'ConvRNNCell', 'ConvLSTMCell', 'ConvGRUCell']

_LEAKY = functools.partial(symbol.LeakyReLU, act_type='leaky', slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """Abstract base class of the convolutional RNN cells.

    Parameters
    ----------
    input_shape : tuple of int
        Shape of the input of one time step, batch axis included (e.g. (N, C, H, W)).
    num_hidden : int
        Number of channels of the output (and the state).
    h2h_kernel, h2h_dilate : tuple of int
        Kernel (odd sizes) and dilation of the state-to-state convolution.
    i2h_kernel, i2h_stride, i2h_pad, i2h_dilate : tuple of int
        The input-to-state convolution.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer or None
        Initializers of the weights (the global one when None).
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer or None
        Initializers of the biases.
    activation : str or callable
        An ``Activation`` type or a function of a Symbol (and ``name``).
    prefix : str, default ''
    params : RNNParams, optional
    conv_layout : str, default 'NCHW'
        The layout of the convolutions (and the states).
    """

    # as MXNet's base, two states (an LSTM's); the RNN and GRU cells have one
    _num_states = 2

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                 i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                 h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                 activation, prefix='', params=None, conv_layout='NCHW'):
        super().__init__(prefix=prefix, params=params)
        check(h2h_kernel[0] % 2 == 1 and h2h_kernel[1] % 2 == 1,
              f'Only support odd number, get h2h_kernel= {h2h_kernel}')
        self._h2h_kernel = h2h_kernel
        self._h2h_pad = (h2h_dilate[0] * (h2h_kernel[0] - 1) // 2,
                         h2h_dilate[1] * (h2h_kernel[1] - 1) // 2)
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation

        # the state's shape is the input convolution's output shape, by the op's own inference
        probe = symbol.Convolution(data=symbol.Variable('data'), num_filter=num_hidden,
                                   kernel=i2h_kernel, stride=i2h_stride, pad=i2h_pad,
                                   dilate=i2h_dilate, layout=conv_layout)
        state_shape = probe.infer_shape(data=input_shape)[1][0]
        self._state_shape = (0,) + tuple(state_shape[1:])

        self._iW = self.params.get('i2h_weight', init=i2h_weight_initializer)
        self._hW = self.params.get('h2h_weight', init=h2h_weight_initializer)
        self._iB = self.params.get('i2h_bias', init=i2h_bias_initializer)
        self._hB = self.params.get('h2h_bias', init=h2h_bias_initializer)

    @property
    def state_info(self):
        return [{'shape': self._state_shape, '__layout__': self._conv_layout}
                for _ in range(self._num_states)]

    def _conv_forward(self, inputs, states, name):
        """The input and the recurrent convolutions of one step, all gates at once."""
        i2h = symbol.Convolution(name='%si2h' % name, data=inputs,
                                 num_filter=self._num_hidden * self._num_gates,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate, weight=self._iW,
                                 bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name='%sh2h' % name, data=states[0],
                                 num_filter=self._num_hidden * self._num_gates,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError('BaseConvRNNCell is abstract class for convolutional RNN')


class ConvRNNCell(BaseConvRNNCell):
    """Convolutional RNN cell: ``out = activation(i2h(x) + h2h(h))``.

    Parameters are those of ``BaseConvRNNCell``, with defaults: ``h2h_kernel=(3, 3)``,
    ``h2h_dilate=(1, 1)``, ``i2h_kernel=(3, 3)``, ``i2h_stride=(1, 1)``, ``i2h_pad=(1, 1)``,
    ``i2h_dilate=(1, 1)``, zero biases, ``activation`` a leaky ReLU of slope 0.2,
    ``prefix='ConvRNN_'``, ``conv_layout='NCHW'``.
    """

    _gate_names = GATES['rnn']
    _num_states = 1

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_LEAKY, prefix='ConvRNN_', params=None, conv_layout='NCHW'):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix=prefix, params=params, conv_layout=conv_layout)

    def __call__(self, inputs, states):
        name = self._next_step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(plus(i2h, h2h), self._activation, name='%sout' % name)
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM cell (Xingjian et al. NIPS 2015); gates input, forget, cell, output.
    ``activation`` (a leaky ReLU of slope 0.2 by default) replaces the LSTM's tanh.

    Parameters are those of ``ConvRNNCell``, with ``prefix='ConvLSTM_'``.
    """

    _gate_names = GATES['lstm']

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_LEAKY, prefix='ConvLSTM_', params=None, conv_layout='NCHW'):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix=prefix, params=params, conv_layout=conv_layout)

    def __call__(self, inputs, states):
        name = self._next_step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        return lstm_update(i2h, h2h, states[1], name, self._activation,
                           axis=self._conv_layout.find('C'))


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU cell; gates reset, update, new. ``activation`` (a leaky ReLU of
    slope 0.2 by default) replaces the GRU's tanh.

    Parameters are those of ``ConvRNNCell``, with ``prefix='ConvGRU_'``.
    """

    _gate_names = GATES['gru']
    _num_states = 1

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_LEAKY, prefix='ConvGRU_', params=None, conv_layout='NCHW'):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix=prefix, params=params, conv_layout=conv_layout)

    def __call__(self, inputs, states):
        name = self._next_step_name()
        # unlike GRUCell's, the convolutions' names have a single underscore: 'ConvGRU_t0_i2h'
        i2h, h2h = self._conv_forward(inputs, states, name)
        return gru_update(i2h, h2h, states[0], name, self._activation)
