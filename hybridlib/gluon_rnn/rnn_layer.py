"""The fused recurrent layers ``RNN``, ``LSTM`` and ``GRU`` (``gluon.rnn``), as MXNet 1.9.1's.

A layer keeps one parameter per gate matrix and direction, named as in MXNet
(``l0_i2h_weight (G*H, C)``, ``l0_h2h_weight (G*H, P)``, ``l0_i2h_bias``, ``l0_h2h_bias``,
``l0_h2r_weight (P, H)`` for a projected LSTM, ``r0_...`` for the reverse direction; G is 1, 4
or 3 gates, H the hidden size, P the projection size or H). ``hybrid_forward`` builds MXNet's
graph: every parameter ``Reshape``'d to 1-d, one ``_rnn_param_concat(dim=0)`` into the flat
vector (all weights, then all biases, layer by layer, forward before reverse), the fused ``RNN``
operator, and a ``SwapAxis`` before and after it for the NTC layout.

Called without states, a layer makes zero begin states: NDArrays when called on NDArrays (a
hybridized bare layer's graph then takes them as inputs ``data1``, ``data2``, as MXNet's
exports), ``_zeros`` nodes with the batch size 0 (inferred) when called on Symbols (a layer
inside a hybridized block), and it returns the output alone; with states it returns
``(output, states)``.
"""
import re

from .. import ndarray, symbol
from ..block import HybridBlock, UsageError
from ..parameter import tensor_types
from . import rnn_cell

__all__ = ['RNN', 'LSTM', 'GRU']

_GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}


class _RNNLayer(HybridBlock):
    """The fused recurrent layer; ``RNN``, ``LSTM`` and ``GRU`` choose the mode."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        if layout not in ('TNC', 'NTC'):
            raise UsageError(f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']")
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._gates = _GATES[mode]

        ng, ni, nh = self._gates, input_size, hidden_size
        nr = self._projection_size or nh           # the size of the recurrent state h
        for i in range(num_layers):
            for j in ['l', 'r'][:self._dir]:
                self._register_param(f'{j}{i}_i2h_weight', (ng * nh, ni),
                                     i2h_weight_initializer, dtype)
                self._register_param(f'{j}{i}_h2h_weight', (ng * nh, nr),
                                     h2h_weight_initializer, dtype)
                self._register_param(f'{j}{i}_i2h_bias', (ng * nh,), i2h_bias_initializer, dtype)
                self._register_param(f'{j}{i}_h2h_bias', (ng * nh,), h2h_bias_initializer, dtype)
                if self._projection_size:
                    self._register_param(f'{j}{i}_h2r_weight', (nr, nh),
                                         h2r_weight_initializer, dtype)
            ni = nr * self._dir

    def _register_param(self, name, shape, init, dtype):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True, dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        s = f'{type(self).__name__}({{mapping}}, {self._layout}'
        if self._num_layers != 1:
            s += f', num_layers={self._num_layers}'
        if self._dropout != 0:
            s += f', dropout={self._dropout}'
        if self._dir == 2:
            s += ', bidirectional'
        shape = self.l0_i2h_weight.shape
        mapping = f'{shape[1] if shape[1] else None} -> {shape[0] // self._gates}'
        return s.format(mapping=mapping) + ')'

    def _collect_params_with_prefix(self, prefix=''):
        """MXNet's structural names, those of the unfused cell stack (older files):
        ``_unfused.0.i2h_weight``, or ``_unfused.0.l_cell.i2h_weight`` when bidirectional."""
        if prefix:
            prefix += '.'
        pattern = re.compile(r'(l|r)(\d)_(i2h|h2h|h2r)_(weight|bias)\Z')
        bidirectional = self._dir == 2

        def convert_key(key):
            d, layer, g, t = pattern.match(key).groups()
            if bidirectional:
                return f'_unfused.{layer}.{d}_cell.{g}_{t}'
            return f'_unfused.{layer}.{g}_{t}'

        ret = {prefix + convert_key(key): val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size=0):
        """Shapes, layout and dtype of the begin states, one dict per state."""
        raise NotImplementedError

    def _state_shape(self, batch_size, size):
        return {'shape': (self._num_layers * self._dir, batch_size, size),
                '__layout__': 'LNC', 'dtype': self._dtype}

    def _unfuse(self):
        """The same network as a stack of cells (``HybridSequentialRNNCell``) sharing this
        layer's parameters."""
        if self._projection_size:
            raise UsageError('_unfuse does not support projection layer yet!')
        if self._lstm_state_clip_min or self._lstm_state_clip_max:
            raise UsageError('_unfuse does not support state clipping yet!')
        make = {'rnn_relu': lambda **kw: rnn_cell.RNNCell(self._hidden_size, activation='relu',
                                                          **kw),
                'rnn_tanh': lambda **kw: rnn_cell.RNNCell(self._hidden_size, activation='tanh',
                                                          **kw),
                'lstm': lambda **kw: rnn_cell.LSTMCell(self._hidden_size, **kw),
                'gru': lambda **kw: rnn_cell.GRUCell(self._hidden_size, **kw)}[self._mode]
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kwargs = {'input_size': ni,
                          'i2h_weight_initializer': self._i2h_weight_initializer,
                          'h2h_weight_initializer': self._h2h_weight_initializer,
                          'i2h_bias_initializer': self._i2h_bias_initializer,
                          'h2h_bias_initializer': self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(make(prefix=f'l{i}_', **kwargs),
                                                         make(prefix=f'r{i}_', **kwargs)))
                else:
                    stack.add(make(prefix=f'l{i}_', **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """The initial states: ``func(name=..., shape=..., dtype=..., **kwargs)`` for each.

        Parameters
        ----------
        batch_size : int
            The batch size N (0 for the Symbol API: inferred).
        func : callable, default ``nd.zeros``
            Makes a state: ``nd.zeros``, ``nd.ones``, ``sym.zeros``, ``sym.var``, ...
        **kwargs
            More arguments for ``func`` (``ctx``, ``dtype``, ``mean``...).

        Returns
        -------
        list of NDArray or Symbol
            ``(num_layers * D, N, H)`` each (the LSTM's first, h, is ``(L*D, N, P)`` with a
            projection).
        """
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(rnn_cell.call_state_func(func, f'{self.prefix}h0_{i}', info))
        return states

    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        self.skip_states = states is None
        if states is None:
            if isinstance(inputs, ndarray.NDArray):
                batch_size = inputs.shape[self._layout.find('N')]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=symbol.zeros)
        if isinstance(states, tensor_types):
            states = [states]
        if self._use_sequence_length:
            if sequence_length is None:
                raise UsageError(f'{self.name}: a layer made with use_sequence_length=True '
                                 'takes the valid length of each sequence, sequence_length '
                                 '(batch_size,)')
            return super().__call__(inputs, states, sequence_length, **kwargs)
        return super().__call__(inputs, states, **kwargs)

    def _get_trace(self, flat, fmt, finish_deferred=True):
        # MXNet 1.9.1 keeps the graph of the first hybridized call, so a layer first called
        # without states then returns no states when called with them (and the reverse). The
        # graph depends on it: here each return structure has its own traces.
        outer = self._traces
        self._traces = outer.setdefault(('skip_states', self.skip_states), {})
        try:
            return super()._get_trace(flat, fmt, finish_deferred)
        finally:
            self._traces = outer

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if F is ndarray:
            batch_size = inputs.shape[self._layout.find('N')]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info['shape']:
                    raise ValueError(f"Invalid recurrent state shape. Expecting "
                                     f"{info['shape']}, got {state.shape}.")
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        # out is (output, states)
        return out[0] if self.skip_states else out

    def _forward_kernel(self, F, inputs, states, sequence_length, **kwargs):
        """The fused RNN operator on the packed parameters."""
        if self._layout == 'NTC':
            inputs = F.swapaxes(inputs, 0, 1)
        gates = ['i2h', 'h2h', 'h2r'] if self._projection_size else ['i2h', 'h2h']
        # F.Reshape(shape=-1): MXNet's x.reshape(-1) on a Symbol, recorded as shape "-1"
        params = [F.Reshape(kwargs[f'{d}{layer}_{g}_{t}'], shape=-1)
                  for t in ['weight', 'bias']
                  for layer in range(self._num_layers)
                  for d in ['l', 'r'][:self._dir]
                  for g in gates
                  if g != 'h2r' or t != 'bias']
        params = F._internal._rnn_param_concat(*params, dim=0)
        rnn_args = list(states)
        if self._use_sequence_length:
            rnn_args.append(sequence_length)
        rnn = F.RNN(inputs, params, *rnn_args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, projection_size=self._projection_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        if self._mode == 'lstm':
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, states = rnn[0], [rnn[1]]
        if self._layout == 'NTC':
            outputs = F.swapaxes(outputs, 0, 1)
        return outputs, states


_LAYER_DOC = """
    Parameters
    ----------
    hidden_size : int
        The number of features H in the hidden state h.
    num_layers : int, default 1
        Number of stacked recurrent layers L.
    layout : str, default 'TNC'
        The layout of the input and output: 'TNC' (time, batch, features) or 'NTC'.
    dropout : float, default 0
        Dropout on the outputs of each layer but the last (training only).
    bidirectional : bool, default False
        A reverse direction in each layer (D = 2; the outputs are concatenated).
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
        Initializers of the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    input_size : int, default 0
        The number of input features C; 0 infers it on the first call.
    dtype : str, default 'float32'
        The type of the parameters and of the default begin states.
    use_sequence_length : bool, default False (keyword)
        The layer takes ``sequence_length`` (N,): steps past it give zeros and leave the
        state as it was.
    prefix : str, optional
    params : ParameterDict, optional

    Inputs: ``data`` (T, N, C) for 'TNC' ((N, T, C) for 'NTC'); ``states`` (optional): {states}
    each (L*D, N, H); ``sequence_length`` (N,) with ``use_sequence_length``.

    Outputs: ``out`` (T, N, D*H) ((N, T, D*H) for 'NTC'); with ``states`` given, also the final
    states, shaped as they are.
"""


class RNN(_RNNLayer):
    r"""A multi-layer Elman RNN with tanh or ReLU non-linearity:
    ``h_t = act(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh)``.

    ``activation`` : {'relu', 'tanh'}, default 'relu'.
    """

    def __init__(self, hidden_size, num_layers=1, activation='relu', layout='TNC', dropout=0,
                 bidirectional=False, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer='zeros',
                 h2h_bias_initializer='zeros', input_size=0, dtype='float32', **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 'rnn_' + activation,
                         None, None, None, None, False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [self._state_shape(batch_size, self._hidden_size)]


class LSTM(_RNNLayer):
    r"""A multi-layer long short-term memory (LSTM) RNN.

    ``i, f, g, o = sigmoid, sigmoid, tanh, sigmoid(W_i x_t + b_i + W_h h_(t-1) + b_h)`` (the
    four gates in this order in the weight rows), ``c_t = f c_(t-1) + i g``,
    ``h_t = o tanh(c_t)``.

    More parameters: ``projection_size`` (int, optional): h_t is projected to this size by
    ``h2r_weight`` (P, H); ``h2r_weight_initializer``; ``state_clip_min``,
    ``state_clip_max`` (float, optional, together): clip the cell state after each step;
    ``state_clip_nan`` (bool): a NaN cell state becomes ``state_clip_min``.
    """

    def __init__(self, hidden_size, num_layers=1, layout='TNC', dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype='float32', **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 'lstm', projection_size,
                         h2r_weight_initializer, state_clip_min, state_clip_max,
                         state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [self._state_shape(batch_size, self._projection_size or self._hidden_size),
                self._state_shape(batch_size, self._hidden_size)]


class GRU(_RNNLayer):
    r"""A multi-layer gated recurrent unit (GRU) RNN, cuDNN's variant (the reset gate applies
    after the recurrent matrix product).

    ``r, z = sigmoid(W_i x_t + b_i + W_h h_(t-1) + b_h)`` (gates r, z, n in this order in the
    weight rows), ``n = tanh(W_in x_t + b_in + r (W_hn h_(t-1) + b_hn))``,
    ``h_t = (1 - z) n + z h_(t-1)``.
    """

    def __init__(self, hidden_size, num_layers=1, layout='TNC', dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', dtype='float32',
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 'gru', None, None, None,
                         None, False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [self._state_shape(batch_size, self._hidden_size)]


RNN.__doc__ += _LAYER_DOC.format(states='one array')
LSTM.__doc__ += _LAYER_DOC.format(states='a list [h, c] (h is (L*D, N, P) with a projection)')
GRU.__doc__ += _LAYER_DOC.format(states='one array')
