"""Recurrent cells of ``gluon.contrib.rnn``, as MXNet 1.9.1's: ``LSTMPCell`` (an LSTM whose
recurrent state is a projection of its hidden state), ``VariationalDropoutCell`` (one dropout
mask for all time steps; it lives in ``hybridlib.gluon_rnn``, which also exports it) and
``dynamic_unroll`` (a cell run over the time axis of one array).
"""
from ...base import MXNetError
from ...parameter import tensor_types  # noqa: F401 (a name of MXNet's module)
from ...gluon_rnn.rnn_cell import HybridRecurrentCell, VariationalDropoutCell, _as_list, \
    _format_sequence

__all__ = ['VariationalDropoutCell', 'LSTMPCell']


class LSTMPCell(HybridRecurrentCell):
    r"""Long short-term memory cell with a projected recurrent state (LSTMP,
    https://arxiv.org/abs/1402.1128).

    .. math::
        \begin{array}{ll}
        i_t = sigmoid(W_{ii} x_t + b_{ii} + W_{ri} r_{(t-1)} + b_{ri}) \\
        f_t = sigmoid(W_{if} x_t + b_{if} + W_{rf} r_{(t-1)} + b_{rf}) \\
        g_t = \tanh(W_{ig} x_t + b_{ig} + W_{rc} r_{(t-1)} + b_{rg}) \\
        o_t = sigmoid(W_{io} x_t + b_{io} + W_{ro} r_{(t-1)} + b_{ro}) \\
        c_t = f_t * c_{(t-1)} + i_t * g_t \\
        h_t = o_t * \tanh(c_t) \\
        r_t = W_{hr} h_t
        \end{array}

    Parameters
    ----------
    hidden_size : int
        The number of features H of the cell state c and the hidden state h.
    projection_size : int
        The number of features P of the projected state r (the output).
    i2h_weight_initializer, h2h_weight_initializer, h2r_weight_initializer : str or Initializer
        Initializers of ``i2h_weight`` (4H, C), ``h2h_weight`` (4H, P) and ``h2r_weight``
        (P, H).
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers of ``i2h_bias`` and ``h2h_bias`` (4H,).
    input_size : int, default 0
        The number of input features C; 0 infers it on the first call.
    prefix : str, default ``'lstmp_'``
    params : ParameterDict, optional
        Share these weights instead of creating new ones.

    Inputs: ``data`` (N, C); ``states``: a list ``[r, c]`` of (N, P) and (N, H).
    Outputs: ``out`` (N, P), which is the new r; ``next_states``, shaped as ``states``.
    """

    def __init__(self, hidden_size, projection_size,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 h2r_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 input_size=0, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._projection_size = projection_size
        self.i2h_weight = self.params.get('i2h_weight', shape=(4 * hidden_size, input_size),
                                          init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get('h2h_weight',
                                          shape=(4 * hidden_size, projection_size),
                                          init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2r_weight = self.params.get('h2r_weight', shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get('i2h_bias', shape=(4 * hidden_size,),
                                        init=i2h_bias_initializer, allow_deferred_init=True)
        self.h2h_bias = self.params.get('h2h_bias', shape=(4 * hidden_size,),
                                        init=h2h_bias_initializer, allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._projection_size), '__layout__': 'NC'},
                {'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}]

    def _alias(self):
        return 'lstmp'

    def __repr__(self):
        # MXNet shows the weight rows: LSTMPCell(3 -> 16 -> 2) for H = 4, P = 2
        shape = self.i2h_weight.shape
        return (f'{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]} -> '
                f'{self.h2r_weight.shape[0]})')

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,
                       h2h_bias):
        prefix = f't{self._counter}_'
        rows = 4 * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=rows,
                               name=prefix + 'i2h')
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias,
                               num_hidden=rows, name=prefix + 'h2h')
        gates = i2h + h2h
        slice_gates = F.SliceChannel(gates, num_outputs=4, name=prefix + 'slice')
        in_gate = F.Activation(slice_gates[0], act_type='sigmoid', name=prefix + 'i')
        forget_gate = F.Activation(slice_gates[1], act_type='sigmoid', name=prefix + 'f')
        in_transform = F.Activation(slice_gates[2], act_type='tanh', name=prefix + 'c')
        out_gate = F.Activation(slice_gates[3], act_type='sigmoid', name=prefix + 'o')
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=prefix + 'state')
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type='tanh'),
                                name=prefix + 'hidden')
        next_r = F.FullyConnected(data=hidden, num_hidden=self._projection_size,
                                  weight=h2r_weight, no_bias=True, name=prefix + 'out')
        return next_r, [next_r, next_c]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0,
                   layout='TNC', valid_length=None):
    """Run ``cell`` over the time axis of ``inputs``, a single array.

    MXNet runs the steps with its ``foreach`` operator; here they are a loop over the time
    steps, so a Symbol's sequence length must be known (it is when the Symbol is traced by a
    hybridized block).

    Parameters
    ----------
    cell : RecurrentCell
        The cell to run.
    inputs : NDArray or Symbol
        (N, T, ...) for layout 'NTC', (T, N, ...) for 'TNC'.
    begin_state : list of NDArray or Symbol
        The initial states of the cell.
    drop_inputs, drop_outputs : float, default 0
        Dropout rates of the inputs and the outputs, with one mask for all time steps (MXNet
        1.9.1 shares it across the batch instead, for 'NTC' data, which is not variational
        dropout).
    layout : str, default 'TNC'
    valid_length : NDArray or Symbol, optional
        (N,) valid steps of each sequence: outputs past them are zeros and the states
        returned are those of the last valid step.

    Returns
    -------
    outputs : NDArray or Symbol
        Shaped as ``inputs`` up to the features, in ``layout``.
    states : list of NDArray or Symbol
        The final states.
    """
    inputs, axis, F, _ = _format_sequence(0, inputs, layout, True)
    # time first (swapping the axes, not MXNet's transpose of len(layout) axes, so that inputs
    # of any rank work: the convolutional cells' too)
    if axis != 0:
        inputs = F.swapaxes(inputs, dim1=0, dim2=axis)
    try:
        length = inputs.shape[0]
    except MXNetError as err:
        raise MXNetError(f'dynamic_unroll: the sequence length of the inputs is not known '
                         f'({err}); call it on NDArrays or inside a hybridized block') from None
    states = list(_as_list(begin_state))
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(0,))
    steps, _, _, _ = _format_sequence(length, inputs, 'TNC', False)
    outputs = []
    for step, x in enumerate(steps):
        out, new_states = cell(x, states)
        if valid_length is not None:
            # a sequence past its length keeps its last state
            valid = valid_length > step
            new_states = [F.where(valid, new, old) for new, old in zip(new_states, states)]
        outputs.append(out)
        states = list(new_states)
    outputs = F.stack(*outputs, axis=0)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(0,))
    if axis != 0:
        outputs = F.swapaxes(outputs, dim1=0, dim2=axis)
    if valid_length is not None:
        outputs = F.SequenceMask(outputs, sequence_length=valid_length,
                                 use_sequence_length=True, axis=axis)
    return outputs, states
