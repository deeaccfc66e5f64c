"""Recurrent cells (``gluon.rnn``), as MXNet 1.9.1's: one time step per call, ``unroll`` for a
sequence.

``RNNCell``, ``LSTMCell`` and ``GRUCell`` hold ``i2h_weight (G*H, C)``, ``h2h_weight (G*H, H)``,
``i2h_bias``, ``h2h_bias`` and compute a step with ``FullyConnected`` and element-wise
operators (the gate math of the fused ``RNN`` operator, gates in the same order, so a stack of
cells with a fused layer's weights computes the same: ``_RNNLayer._unfuse``). Containers
stack cells (``SequentialRNNCell``, ``HybridSequentialRNNCell``) or run two over a sequence in
both directions (``BidirectionalCell``); modifier cells wrap one (``ZoneoutCell``,
``ResidualCell``); ``DropoutCell`` and ``VariationalDropoutCell`` drop inputs.

States are lists of arrays (N, H); ``begin_state`` makes them, ``unroll(length, inputs,
begin_state, layout, merge_outputs, valid_length)`` runs a cell over the time axis of an NDArray
or Symbol (or a list of per-step ones) and returns ``(outputs, states)``.
"""
import contextlib
import inspect
import numbers

from .. import ndarray, nn, symbol
from ..block import Block, HybridBlock, UsageError, _indent
from ..parameter import tensor_types

__all__ = ['RecurrentCell', 'HybridRecurrentCell', 'RNNCell', 'LSTMCell', 'GRUCell',
           'SequentialRNNCell', 'HybridSequentialRNNCell', 'DropoutCell', 'ModifierCell',
           'ZoneoutCell', 'ResidualCell', 'BidirectionalCell', 'VariationalDropoutCell']

_MODIFIED = ('After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called '
             'directly. Call the modifier cell instead.')


def _check(condition, message):
    """MXNet's ``assert``s, as UsageError (an AssertionError that ``python -O`` keeps)."""
    if not condition:
        raise UsageError(message)


def call_state_func(func, name, info):
    """``func(name=name, **info)``: how MXNet makes a begin state.

    ``info`` holds the hidden attribute ``__layout__``, which MXNet's functions take as a
    keyword. hybridlib's generated ``nd``/``sym`` functions take no ``__x__`` keywords: a Symbol
    function gets them through ``attr`` (node attributes, in the JSON as MXNet writes them), an
    NDArray function goes without; functions with ``**kwargs`` (``sym.var``, lambdas) get all.
    """
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return func(name=name, **info)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return func(name=name, **info)
    hidden = {k: v for k, v in info.items() if k.startswith('__') and k.endswith('__')}
    rest = {k: v for k, v in info.items() if k not in hidden}
    if hidden and 'attr' in params:
        rest['attr'] = dict(hidden, **(rest.get('attr') or {}))
    return func(name=name, **rest)


def _as_list(obj):
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def _cells_state_info(cells, batch_size):
    return sum([c.state_info(batch_size) for c in cells], [])


def _cells_begin_state(cells, **kwargs):
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _get_begin_state(cell, F, begin_state, inputs, batch_size):
    if begin_state is None:
        if F is ndarray:
            ctx = inputs.context if isinstance(inputs, tensor_types) else inputs[0].context
            with ctx:
                begin_state = cell.begin_state(func=F.zeros, batch_size=batch_size)
        else:
            begin_state = cell.begin_state(func=F.zeros, batch_size=batch_size)
    return begin_state


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """``(inputs as one array (merge) or a list of steps, time axis, F, batch size)``."""
    _check(inputs is not None, 'unroll(inputs=None) has been deprecated. Please create input '
                               'variables outside unroll.')
    axis = layout.find('T')
    batch_axis = layout.find('N')
    batch_size = 0
    in_axis = in_layout.find('T') if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        F = symbol
        if merge is False:
            _check(len(inputs.list_outputs()) == 1,
                   "unroll doesn't allow grouped symbol as input. Please convert to list with "
                   'list(inputs) first or let unroll handle splitting.')
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    elif isinstance(inputs, ndarray.NDArray):
        F = ndarray
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            _check(length is None or length == inputs.shape[in_axis],
                   f'unroll: length {length} differs from the input sequence length '
                   f'{inputs.shape[in_axis]}')
            inputs = _as_list(ndarray.split(inputs, axis=in_axis,
                                            num_outputs=inputs.shape[in_axis], squeeze_axis=1))
    else:
        _check(length is None or len(inputs) == length,
               f'unroll: length {length} differs from the number of inputs {len(inputs)}')
        if isinstance(inputs[0], symbol.Symbol):
            F = symbol
        else:
            F = ndarray
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, tensor_types) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    _check(valid_length is not None, 'valid_length is required')
    if not isinstance(data, tensor_types):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                             axis=time_axis)
    if not merge:
        outputs = _as_list(F.split(outputs, num_outputs=length, axis=time_axis,
                                   squeeze_axis=True))
    return outputs


def _format_masked(length, seq, layout, merge, valid_length):
    """``(seq as merge asks (see _format_sequence), zero past valid_length, F)``."""
    seq, axis, F, _ = _format_sequence(length, seq, layout, merge)
    if valid_length is not None:
        seq = _mask_sequence_variable_length(F, seq, length, valid_length, axis, merge)
    return seq, F


def _reverse_sequences(sequences, unroll_step, valid_length=None):
    F = symbol if isinstance(sequences[0], symbol.Symbol) else ndarray
    if valid_length is None:
        return list(reversed(sequences))
    reversed_sequences = F.SequenceReverse(F.stack(*sequences, axis=0),
                                           sequence_length=valid_length,
                                           use_sequence_length=True)
    if unroll_step > 1 or F is symbol:
        return F.split(reversed_sequences, axis=0, num_outputs=unroll_step, squeeze_axis=True)
    return [reversed_sequences[0]]


# -------------------------------------------------------------------------------------------------
# Bases
# -------------------------------------------------------------------------------------------------

class RecurrentCell(Block):
    """The base class of recurrent cells.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the names of the cell's blocks and (when ``params`` is None) weights.
    params : ParameterDict, optional
        Share these weights instead of creating new ones.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters before using the cell for another sequence or graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            # an activation block given to a cell is a child too, without counters (MXNet
            # 1.9.1 fails on it here)
            if isinstance(cell, RecurrentCell):
                cell.reset()

    def state_info(self, batch_size=0):
        """Shape and layout of each state (a list of dicts)."""
        raise NotImplementedError()

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """The initial states: ``func(name=..., shape=(batch_size, H), **kwargs)`` each.

        Parameters
        ----------
        batch_size : int, default 0
            The batch size N (for the NDArray API; 0 for Symbols).
        func : callable, default ``nd.zeros``
            ``nd.zeros``, ``nd.ones``, ``sym.zeros``, ``sym.var`` (to feed states), ...
        **kwargs
            More arguments for ``func`` (``ctx``, ``dtype``, ``mean``...).

        Returns
        -------
        list of NDArray or Symbol
        """
        _check(not self._modified, _MODIFIED)
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(call_state_func(
                func, f'{self._prefix}begin_state_{self._init_counter}', info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Run the cell over ``length`` time steps.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : NDArray, Symbol or list of them
            One array (N, T, ...) for 'NTC' or (T, N, ...) for 'TNC', or a list of ``length``
            arrays (N, ...).
        begin_state : list of NDArray or Symbol, optional
            The initial states (zeros from ``begin_state()`` when None).
        layout : str, default 'NTC'
        merge_outputs : bool, optional
            True: the outputs as one array with the time axis of ``layout``; False: a list of
            per-step outputs; None: whichever is at hand.
        valid_length : NDArray or Symbol, optional
            (N,) valid steps of each sequence: the outputs past it are zeros and the states
            returned are those of the last valid step.

        Returns
        -------
        outputs : NDArray, Symbol or list of them
        states : list of NDArray or Symbol
        """
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        states = begin_state
        outputs = []
        all_states = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*ele_list, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for ele_list in zip(*all_states)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        """Apply ``activation``: a name, a LeakyReLU block or a callable."""
        func = {'tanh': F.tanh, 'relu': F.relu, 'sigmoid': F.sigmoid,
                'softsign': F.softsign}.get(activation)
        if func:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, nn.LeakyReLU):
            return F.LeakyReLU(inputs, act_type='leaky', slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One time step: ``(output, new states)`` from ``inputs`` (N, C) and ``states``."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell that can be hybridized."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError

    def _i2h_h2h_params(self, i2h_shape, h2h_shape, i2h_weight_initializer,
                        h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer):
        """Make the parameters of a cell's input and recurrent transforms, in MXNet's order:
        ``i2h_weight``, ``h2h_weight`` (of these shapes), ``i2h_bias``, ``h2h_bias`` (one per
        row of the weights). Unknown sizes (0) are inferred on the first call."""
        rows = (i2h_shape[0],)
        self.i2h_weight = self.params.get('i2h_weight', shape=i2h_shape,
                                          init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get('h2h_weight', shape=h2h_shape,
                                          init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get('i2h_bias', shape=rows, init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get('h2h_bias', shape=rows, init=h2h_bias_initializer,
                                        allow_deferred_init=True)


class _GatedCell(HybridRecurrentCell):
    """The weights of a cell with ``gates`` gate blocks of ``hidden_size`` rows."""
    _gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        rows = self._gates * hidden_size
        self._i2h_h2h_params((rows, input_size), (rows, hidden_size), i2h_weight_initializer,
                             h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer)

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}]

    def _mapping(self):
        # MXNet shows the weight's rows, G*H (LSTMCell(3 -> 16) for H = 4)
        shape = self.i2h_weight.shape
        return f'{shape[1] if shape[1] else None} -> {shape[0]}'

    def __repr__(self):
        return f'{type(self).__name__}({self._mapping()})'

    def _projections(self, F, inputs, h, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix):
        rows = self._gates * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=rows,
                               name=prefix + 'i2h')
        h2h = F.FullyConnected(data=h, weight=h2h_weight, bias=h2h_bias, num_hidden=rows,
                               name=prefix + 'h2h')
        return i2h, h2h


_CELL_DOC = """
    Parameters
    ----------
    hidden_size : int
        The number of features H of the state.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    input_size : int, default 0
        The number of input features C; 0 infers it on the first call.
    prefix : str, optional
    params : ParameterDict, optional

    Inputs: ``data`` (N, C); ``states``: {states}, each (N, H).
    Outputs: ``out`` (N, H); ``next_states``, shaped as ``states``.
"""


class RNNCell(_GatedCell):
    r"""Elman RNN cell: ``h_t = act(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh)``.

    ``activation`` (str, a LeakyReLU block or a callable, default 'tanh') is the
    non-linearity.
    """

    def __init__(self, hidden_size, activation='tanh', i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer='zeros',
                 h2h_bias_initializer='zeros', input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation

    def _alias(self):
        return 'rnn'

    def __repr__(self):
        return f'{type(self).__name__}({self._mapping()}, {self._activation})'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f't{self._counter}_'
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias, prefix)
        i2h_plus_h2h = F.elemwise_add(i2h, h2h, name=prefix + 'plus0')
        output = self._get_activation(F, i2h_plus_h2h, self._activation, name=prefix + 'out')
        return output, [output]


class LSTMCell(_GatedCell):
    r"""Long short-term memory cell.

    ``i, f, g, o = sigmoid, sigmoid, tanh, sigmoid(W_i x_t + b_i + W_h h_(t-1) + b_h)`` (the
    gates in this order in the weight rows), ``c_t = f c_(t-1) + i g``, ``h_t = o tanh(c_t)``.
    ``activation`` (default 'tanh') replaces tanh, ``recurrent_activation`` (default
    'sigmoid') the sigmoid.
    """
    _gates = 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 prefix=None, params=None, activation='tanh', recurrent_activation='sigmoid'):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._hidden_size), '__layout__': 'NC'},
                {'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}]

    def _alias(self):
        return 'lstm'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f't{self._counter}_'
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias, prefix)
        gates = F.elemwise_add(i2h, h2h, name=prefix + 'plus0')
        slice_gates = F.SliceChannel(gates, num_outputs=4, name=prefix + 'slice')
        in_gate = self._get_activation(F, slice_gates[0], self._recurrent_activation,
                                       name=prefix + 'i')
        forget_gate = self._get_activation(F, slice_gates[1], self._recurrent_activation,
                                           name=prefix + 'f')
        in_transform = self._get_activation(F, slice_gates[2], self._activation,
                                            name=prefix + 'c')
        out_gate = self._get_activation(F, slice_gates[3], self._recurrent_activation,
                                        name=prefix + 'o')
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + 'mul0'),
                                F.elemwise_mul(in_gate, in_transform, name=prefix + 'mul1'),
                                name=prefix + 'state')
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=self._activation,
                                                       name=prefix + 'activation0'),
                                name=prefix + 'out')
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    r"""Gated recurrent unit cell, cuDNN's variant (the reset gate applies after the recurrent
    matrix product).

    ``r, z = sigmoid(W_i x_t + b_i + W_h h_(t-1) + b_h)`` (gates r, z, n in this order in the
    weight rows), ``n = tanh(W_in x_t + b_in + r (W_hn h_(t-1) + b_hn))``,
    ``h_t = (1 - z) n + z h_(t-1)``.
    """
    _gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self):
        return 'gru'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f't{self._counter}_'
        prev_state_h = states[0]
        i2h, h2h = self._projections(F, inputs, prev_state_h, i2h_weight, h2h_weight,
                                     i2h_bias, h2h_bias, prefix)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + 'i2h_slice')
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + 'h2h_slice')
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r, name=prefix + 'plus0'),
                                  act_type='sigmoid', name=prefix + 'r_act')
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z, name=prefix + 'plus1'),
                                   act_type='sigmoid', name=prefix + 'z_act')
        next_h_tmp = F.Activation(
            F.elemwise_add(i2h, F.elemwise_mul(reset_gate, h2h, name=prefix + 'mul0'),
                           name=prefix + 'plus2'),
            act_type='tanh', name=prefix + 'h_act')
        ones = F.ones_like(update_gate, name=prefix + 'ones_like0')
        next_h = F.elemwise_add(
            F.elemwise_mul(F.elemwise_sub(ones, update_gate, name=prefix + 'minus0'),
                           next_h_tmp, name=prefix + 'mul1'),
            F.elemwise_mul(update_gate, prev_state_h, name=prefix + 'mul20'),
            name=prefix + 'out')
        return next_h, [next_h]


RNNCell.__doc__ += _CELL_DOC.format(states='a list of one state')
LSTMCell.__doc__ += _CELL_DOC.format(states='a list [h, c]')
GRUCell.__doc__ += _CELL_DOC.format(states='a list of one state')


# -------------------------------------------------------------------------------------------------
# Containers
# -------------------------------------------------------------------------------------------------

class _StackMixin:
    """Stacking cells: ``add``, indexing, states, one step through all, and ``unroll``."""

    def __repr__(self):
        lines = '\n'.join(f'({i}): {_indent(repr(m), 2)}' for i, m in self._children.items())
        return f'{type(self).__name__}(\n{lines}\n)'

    def add(self, cell):
        """Append ``cell`` to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        _check(not self._modified, _MODIFIED)
        return _cells_begin_state(self._children.values(), **kwargs)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        _check(all(not isinstance(cell, BidirectionalCell) for cell in self._children.values()),
               'a stack with a BidirectionalCell cannot be stepped; use unroll')
        for cell in self._children.values():
            n = len(cell.state_info())
            state = states[p:p + n]
            p += n
            inputs, state = cell(inputs, state)
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        num_cells = len(self._children)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        p = 0
        next_states = []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(
                length, inputs=inputs, begin_state=states, layout=layout,
                merge_outputs=None if i < num_cells - 1 else merge_outputs,
                valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_StackMixin, RecurrentCell):
    """Stacks recurrent cells: each step runs them in order (see ``unroll``)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, *args, **kwargs):
        raise NotImplementedError


class HybridSequentialRNNCell(_StackMixin, HybridRecurrentCell):
    """Stacks hybridizable recurrent cells: each step runs them in order."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, inputs, states):
        return self.__call__(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs of each step; the states pass unchanged.

    Parameters
    ----------
    rate : float
        The fraction of the values dropped (training only).
    axes : tuple of int, default ()
        Axes along which the mask is shared.

    Inputs: ``data`` (N, C), ``states`` (returned as they are). Outputs: ``out`` (N, C).
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        _check(isinstance(rate, numbers.Number), 'rate must be a number')
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return f'{type(self).__name__}(rate={self._rate}, axes={self._axes})'

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return 'dropout'

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name=f't{self._counter}_fwd')
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, tensor_types):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


# -------------------------------------------------------------------------------------------------
# Modifiers
# -------------------------------------------------------------------------------------------------

class ModifierCell(HybridRecurrentCell):
    """The base of cells that modify another cell (``base_cell``), which is then called
    through the modifier only. Its parameters are the base cell's."""

    def __init__(self, base_cell):
        _check(not base_cell._modified,
               f'Cell {base_cell.name} is already modified. One cell cannot be modified twice')
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=symbol.zeros, **kwargs):
        _check(not self._modified, _MODIFIED)
        with self._unmodified() as base:
            return base.begin_state(func=func, **kwargs)

    @contextlib.contextmanager
    def _unmodified(self):
        """``with self._unmodified() as base:`` the base cell may be used directly."""
        self.base_cell._modified = False
        try:
            yield self.base_cell
        finally:
            self.base_cell._modified = True

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError

    def __repr__(self):
        return f'{type(self).__name__}({self.base_cell})'


class ZoneoutCell(ModifierCell):
    """Zoneout on a cell: each output and state value keeps its previous value with
    probability ``zoneout_outputs`` / ``zoneout_states`` (training only).

    Inputs and outputs are the base cell's.
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        _check(not isinstance(base_cell, BidirectionalCell),
               "BidirectionalCell doesn't support zoneout since it doesn't support step. "
               'Please add ZoneoutCell to the cells underneath instead.')
        # MXNet 1.9.1 reads base_cell._bidirectional here, which no stack has
        # (AttributeError); the intent: no stack holding a BidirectionalCell
        _check(not _has_bidirectional(base_cell),
               "Bidirectional SequentialRNNCell doesn't support zoneout. Please add "
               'ZoneoutCell to the cells underneath instead.')
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return (f'{type(self).__name__}(p_out={self.zoneout_outputs}, '
                f'p_state={self.zoneout_states}, {self.base_cell})')

    def _alias(self):
        return 'zoneout'

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p, like):
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        output = (F.where(mask(p_outputs, next_output), next_output, prev_output)
                  if p_outputs != 0. else next_output)
        states = ([F.where(mask(p_states, new_s), new_s, old_s)
                   for new_s, old_s in zip(next_states, states)]
                  if p_states != 0. else next_states)
        self._prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (Wu et al., 2016): the input size must be the
    base cell's output size."""

    def __init__(self, base_cell):
        super().__init__(base_cell)

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = F.elemwise_add(output, inputs, name=f't{self._counter}_fwd')
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        with self._unmodified() as base:
            outputs, states = base.unroll(length, inputs=inputs, begin_state=begin_state,
                                          layout=layout, merge_outputs=merge_outputs,
                                          valid_length=valid_length)
        merge_outputs = (isinstance(outputs, tensor_types) if merge_outputs is None
                         else merge_outputs)
        # the padded inputs are masked to zero
        inputs, F = _format_masked(length, inputs, layout, merge_outputs, valid_length)
        if merge_outputs:
            outputs = F.elemwise_add(outputs, inputs)
        else:
            outputs = [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward over a sequence (``unroll`` only) and
    concatenates their outputs along the features (``output_prefix`` names the concat).

    Outputs of ``unroll``: (N, T, H_l + H_r) for 'NTC'; states: ``l_cell``'s then
    ``r_cell``'s.
    """

    def __init__(self, l_cell, r_cell, output_prefix='bi_'):
        super().__init__(prefix='', params=None)
        self.register_child(l_cell, 'l_cell')
        self.register_child(r_cell, 'r_cell')
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError('Bidirectional cannot be stepped. Please use unroll')

    def __repr__(self):
        return (f"{type(self).__name__}(forward={self._children['l_cell']}, "
                f"backward={self._children['r_cell']})")

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        _check(not self._modified, _MODIFIED)
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = list(_reverse_sequences(inputs, length, valid_length))
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        states = begin_state
        l_cell, r_cell = self._children.values()
        n_left = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=states[n_left:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        reversed_r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, tensor_types)
            l_outputs, _, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _, _ = _format_sequence(None, reversed_r_outputs, layout,
                                                           merge_outputs)
        if merge_outputs:
            reversed_r_outputs = F.stack(*reversed_r_outputs, axis=axis)
            outputs = F.concat(l_outputs, reversed_r_outputs, dim=2,
                               name=f'{self._output_prefix}out')
        else:
            outputs = [F.concat(l_o, r_o, dim=1, name=f'{self._output_prefix}t{i}')
                       for i, (l_o, r_o) in enumerate(zip(l_outputs, reversed_r_outputs))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, l_states + r_states


def _has_bidirectional(cell):
    """A BidirectionalCell, or a stack holding one (such cells cannot be stepped)."""
    return isinstance(cell, BidirectionalCell) or isinstance(cell, _StackMixin) and any(
        isinstance(c, BidirectionalCell) for c in cell._children.values())


class VariationalDropoutCell(ModifierCell):
    """Variational dropout on a cell (Gal and Ghahramani, https://arxiv.org/abs/1512.05287):
    one dropout mask for every time step, drawn on the first step and kept until ``reset()``
    (``unroll`` resets; reset yourself between sequences when stepping by hand).

    MXNet 1.9.1 has it in ``gluon.contrib.rnn``.

    Parameters
    ----------
    base_cell : RecurrentCell
    drop_inputs : float, default 0
        Dropout rate of the inputs.
    drop_states : float, default 0
        Dropout rate of the first state (h).
    drop_outputs : float, default 0
        Dropout rate of the outputs.
    """

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        _check(not drop_states or not _has_bidirectional(base_cell),
               "BidirectionalCell doesn't support variational state dropout. Please add "
               'VariationalDropoutCell to the cells underneath instead.')
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _alias(self):
        return 'vardrop'

    def reset(self):
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def hybrid_forward(self, F, inputs, states):
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = F.Dropout(F.ones_like(states[0]), p=self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = F.Dropout(F.ones_like(inputs), p=self.drop_inputs)
        if self.drop_states:
            states = list(states)
            # only h, always the first state, is dropped
            states[0] = states[0] * self.drop_states_mask
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        next_output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = F.Dropout(F.ones_like(next_output), p=self.drop_outputs)
        if self.drop_outputs:
            next_output = next_output * self.drop_outputs_mask
        return next_output, next_states

    def __repr__(self):
        return (f'{type(self).__name__}(p_out = {self.drop_outputs}, '
                f'p_state = {self.drop_states})')

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        # without state dropout, the input and output dropout apply to the whole sequence
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        with self._unmodified() as base:
            outputs, states = base.unroll(length, inputs, states, layout, merge_outputs=True,
                                          valid_length=valid_length)
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        merge_outputs = (isinstance(outputs, tensor_types) if merge_outputs is None
                         else merge_outputs)
        outputs, _ = _format_masked(length, outputs, layout, merge_outputs, valid_length)
        return outputs, states
