"""MXNet's legacy symbolic RNN cells (``mx.rnn.rnn_cell``), as MXNet 1.9.1's.

``RNNCell``, ``LSTMCell`` and ``GRUCell`` hold ``i2h_weight (G*H, C)``, ``h2h_weight (G*H, H)``,
``i2h_bias`` and ``h2h_bias`` (G*H,) for G = 1, 4 or 3 gates of H units, and add a step to the
graph with ``FullyConnected`` and element-wise nodes. ``FusedRNNCell`` unrolls all steps and
layers at once with the ``RNN`` operator over one flat ``parameters`` vector; ``unfuse()`` gives
the equivalent stack of step-wise cells, and its ``unpack_weights``/``pack_weights`` convert
between the flat vector and their weights. ``SequentialRNNCell`` stacks cells,
``BidirectionalCell`` runs two over a sequence in both directions, ``DropoutCell`` drops inputs,
and modifier cells wrap another (``ZoneoutCell``, ``ResidualCell``). The convolutional cells
are in ``conv_rnn_cell.py`` and exported here too, as MXNet's module holds them.

Node names follow MXNet's (``lstm_t0_i2h``, ``gru_t1__h2h_slice``, ``bi_t0``, ``lstm_rnn``), so
an unrolled graph has MXNet's arguments, shapes and JSON.
"""
import math
import warnings

from .. import initializer as init
from .. import ndarray, symbol
from ..base import numeric_types
from .cell_base import (GATES, MODIFIED, BaseRNNCell, RNNParams, cells_begin_state,
                        cells_pack_weights, cells_state_info, cells_unpack_weights, check,
                        gru_update, lstm_update, missing_weight, normalize_sequence, plus,
                        pop_weight)
from .conv_rnn_cell import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell

__all__ = ['RNNParams', 'BaseRNNCell', 'RNNCell', 'LSTMCell', 'GRUCell', 'FusedRNNCell',
           'SequentialRNNCell', 'DropoutCell', 'ModifierCell', 'ZoneoutCell', 'ResidualCell',
           'BidirectionalCell', 'BaseConvRNNCell', 'ConvRNNCell', 'ConvLSTMCell', 'ConvGRUCell']


class _DenseCell(BaseRNNCell):
    """What ``RNNCell``, ``LSTMCell`` and ``GRUCell`` share: the weights of all gates as one
    matrix each, the two ``FullyConnected`` transforms of a step and ``_num_states`` states
    of (0, num_hidden)."""

    _num_states = 1

    def __init__(self, num_hidden, prefix, params, i2h_bias_init=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get('i2h_weight')
        self._iB = self.params.get('i2h_bias', init=i2h_bias_init)
        self._hW = self.params.get('h2h_weight')
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [{'shape': (0, self._num_hidden), '__layout__': 'NC'}
                for _ in range(self._num_states)]

    def _fc_forward(self, inputs, states, name):
        """The input and the recurrent transforms of one step, all gates at once."""
        num_hidden = self._num_hidden * self._num_gates
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=num_hidden, name='%si2h' % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=num_hidden, name='%sh2h' % name)
        return i2h, h2h


class RNNCell(_DenseCell):
    """Simple recurrent cell: ``out = activation(i2h(x) + h2h(h))``.

    Parameters
    ----------
    num_hidden : int
        Number of units of the output.
    activation : str or callable, default 'tanh'
        An ``Activation`` type ('tanh', 'relu', ...) or a function of a Symbol (and ``name``).
    prefix : str, default 'rnn_'
        Prefix of the names of nodes (and of the weights when ``params`` is None).
    params : RNNParams, optional
        Container for sharing weights between cells.
    """

    _gate_names = GATES['rnn']

    def __init__(self, num_hidden, activation='tanh', prefix='rnn_', params=None):
        super().__init__(num_hidden, prefix, params)
        self._activation = activation

    def __call__(self, inputs, states):
        name = self._next_step_name()
        i2h, h2h = self._fc_forward(inputs, states, name)
        output = self._get_activation(plus(i2h, h2h), self._activation, name='%sout' % name)
        return output, [output]


class LSTMCell(_DenseCell):
    """Long short-term memory cell; gates in the order input, forget, cell, output.

    Parameters
    ----------
    num_hidden : int
        Number of units of the output.
    prefix : str, default 'lstm_'
        Prefix of the names of nodes (and of the weights when ``params`` is None).
    params : RNNParams, optional
        Container for sharing weights between cells.
    forget_bias : float, default 1.0
        Initial bias of the forget gate (Jozefowicz et al. 2015 recommend 1.0): the
        ``i2h_bias`` variable is initialized by ``init.LSTMBias(forget_bias)``.
    """

    _gate_names = GATES['lstm']
    _num_states = 2

    def __init__(self, num_hidden, prefix='lstm_', params=None, forget_bias=1.0):
        super().__init__(num_hidden, prefix, params,
                         i2h_bias_init=init.LSTMBias(forget_bias=forget_bias))

    def __call__(self, inputs, states):
        name = self._next_step_name()
        i2h, h2h = self._fc_forward(inputs, states, name)
        return lstm_update(i2h, h2h, states[1], name, 'tanh')


class GRUCell(_DenseCell):
    """Gated recurrent unit cell, cuDNN's variant (the reset gate scales ``h2h`` after the
    product); gates in the order reset, update, new.

    Parameters
    ----------
    num_hidden : int
        Number of units of the output.
    prefix : str, default 'gru_'
        Prefix of the names of nodes (and of the weights when ``params`` is None).
    params : RNNParams, optional
        Container for sharing weights between cells.
    """

    _gate_names = GATES['gru']

    def __init__(self, num_hidden, prefix='gru_', params=None):
        super().__init__(num_hidden, prefix, params)

    def __call__(self, inputs, states):
        name = self._next_step_name()
        # MXNet's GRU names its nodes with a doubled underscore: 'gru_t0__i2h'
        i2h, h2h = self._fc_forward(inputs, states, name + '_')
        return gru_update(i2h, h2h, states[0], name, 'tanh')


class FusedRNNCell(BaseRNNCell):
    """All time steps and layers of an RNN in one ``RNN`` operator.

    Its weights are one flat variable, ``PREFIX + 'parameters'``, laid out as the ``RNN``
    operator reads it: for each layer and direction (``l``, then ``r``) the ``i2h`` then the
    ``h2h`` weight of each gate, then all biases in the same order. ``unpack_weights`` names
    the pieces as the cells of ``unfuse()`` do (``lstm_l0_i2h_i_weight``, ...).

    Parameters
    ----------
    num_hidden : int
        Number of units of each layer's output.
    num_layers : int, default 1
    mode : {'lstm', 'gru', 'rnn_relu', 'rnn_tanh'}, default 'lstm'
    bidirectional : bool, default False
        Run a second RNN backwards over the sequence; the outputs are 2 * num_hidden wide.
    dropout : float, default 0.
        Dropout between layers, during training.
    get_next_state : bool, default False
        Whether ``unroll`` returns the final states.
    forget_bias : float, default 1.0
        Initial bias of an LSTM's forget gate (through ``init.FusedRNN``).
    prefix : str, optional
        Default ``mode + '_'`` (``'lstm_'``).
    params : RNNParams, optional
        Container for sharing weights between cells.
    """

    def __init__(self, num_hidden, num_layers=1, mode='lstm', bidirectional=False,
                 dropout=0., get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if prefix is None:
            prefix = '%s_' % mode
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ['l', 'r'] if bidirectional else ['l']
        initializer = init.FusedRNN(None, num_hidden, num_layers, mode, bidirectional,
                                    forget_bias)
        self._parameter = self.params.get('parameters', init=initializer)

    @property
    def state_info(self):
        b = self._bidirectional + 1
        n = (self._mode == 'lstm') + 1
        return [{'shape': (b * self._num_layers, 0, self._num_hidden), '__layout__': 'LNC'}
                for _ in range(n)]

    @property
    def _gate_names(self):
        return GATES['rnn' if self._mode in ('rnn_relu', 'rnn_tanh') else self._mode]

    def _pieces(self, num_input):
        """``[(name, shape)]`` of the unpacked weights, in their order in the flat vector."""
        h, b = self._num_hidden, len(self._directions)
        weights, biases = [], []
        for layer in range(self._num_layers):
            width = num_input if layer == 0 else b * h
            for direction in self._directions:
                for group, shape in (('i2h', (h, width)), ('h2h', (h, h))):
                    for gate in self._gate_names:
                        stem = '%s%s%d_%s%s' % (self._prefix, direction, layer, group, gate)
                        weights.append((stem + '_weight', shape))
                        biases.append((stem + '_bias', (h,)))
        return weights + biases

    def unpack_weights(self, args):
        args = args.copy()
        arr = pop_weight(args, self._parameter.name, self)
        b, m, h = len(self._directions), self._num_gates, self._num_hidden
        # size = b*m*h*(C + h + 2) + (L-1)*b*m*h*(b*h + h + 2), solved for the input size C
        num_input = arr.size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2
        pieces = self._pieces(num_input)
        total = sum(math.prod(shape) for _, shape in pieces)
        check(num_input > 0 and total == arr.size,
              f'FusedRNNCell {self._prefix!r}: {self._parameter.name} has {arr.size} values, '
              f'which fit no {self._mode} RNN of {self._num_layers} layer(s) and {h} hidden '
              f'units{" (bidirectional)" if self._bidirectional else ""}')
        flat = arr.reshape((-1,))
        offset = 0
        for name, shape in pieces:
            size = math.prod(shape)
            args[name] = flat[offset:offset + size].reshape(shape).copy()
            offset += size
        return args

    def pack_weights(self, args):
        args = args.copy()
        first = '%sl0_i2h%s_weight' % (self._prefix, self._gate_names[0])
        if first not in args:
            raise missing_weight(first, self)
        w0 = args[first]
        parts = []
        for name, shape in self._pieces(w0.shape[1]):
            value = pop_weight(args, name, self)
            check(tuple(value.shape) == shape,
                  f'FusedRNNCell {self._prefix!r}: {name} has shape {tuple(value.shape)}, '
                  f'but the cell needs {shape}')
            parts.append(value.astype(w0.dtype, copy=False).reshape((-1,)))
        args[self._parameter.name] = ndarray.concatenate(parts)
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError('FusedRNNCell cannot be stepped. Please use unroll')

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn('NTC layout detected. Consider using TNC for FusedRNNCell for '
                          'faster speed')
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        else:
            check(axis == 0, f'Unsupported layout {layout}')
        if begin_state is None:
            begin_state = self.begin_state()
        states = {'state': begin_state[0]}
        if self._mode == 'lstm':
            states['state_cell'] = begin_state[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state, mode=self._mode,
                         name=self._prefix + 'rnn', **states)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            n = len(self.state_info)
            for i in range(1, n + 1):
                rnn[i]._set_attr(__layout__='LNC')
            outputs, states = rnn[0], [rnn[i] for i in range(1, n + 1)]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The same network as a stack of step-wise cells (which run everywhere and can be
        stepped): a ``SequentialRNNCell`` of one cell per layer, prefixed ``PREFIX + 'l%d_'``
        (a ``BidirectionalCell`` of ``l`` and ``r`` cells when bidirectional), with
        ``DropoutCell``s between layers when ``dropout`` > 0.

        Returns
        -------
        SequentialRNNCell
        """
        def make(prefix):
            if self._mode == 'lstm':
                return LSTMCell(self._num_hidden, prefix=prefix)
            if self._mode == 'gru':
                return GRUCell(self._num_hidden, prefix=prefix)
            return RNNCell(self._num_hidden, activation=self._mode[4:], prefix=prefix)

        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make('%sl%d_' % (self._prefix, i)),
                                            make('%sr%d_' % (self._prefix, i)),
                                            output_prefix='%sbi_l%d_' % (self._prefix, i)))
            else:
                stack.add(make('%sl%d_' % (self._prefix, i)))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix='%s_dropout%d_' % (self._prefix, i)))
        return stack


class SequentialRNNCell(BaseRNNCell):
    """Cells stacked: each cell's output is the next one's input.

    Parameters
    ----------
    params : RNNParams, optional
        Container for sharing weights; when given, the cells added must not have their own.
    """

    def __init__(self, params=None):
        super().__init__(prefix='', params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Append ``cell`` to the stack.

        Parameters
        ----------
        cell : BaseRNNCell
            Its input is the previous cell's output (the stack's input for the first cell).
        """
        self._cells.append(cell)
        if self._override_cell_params:
            check(cell._own_params, 'Either specify params for SequentialRNNCell or child '
                                    'cells, not both.')
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        return cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        check(not self._modified, MODIFIED)
        return cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args):
        return cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._cells:
            check(not isinstance(cell, BidirectionalCell),
                  'a SequentialRNNCell with a BidirectionalCell cannot be stepped; use unroll')
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        if begin_state is None:
            begin_state = self.begin_state()
        p = 0
        next_states = []
        last = len(self._cells) - 1
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=begin_state[p:p + n],
                                         layout=layout,
                                         merge_outputs=None if i < last else merge_outputs)
            p += n
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the input; no states.

    Parameters
    ----------
    dropout : float
        Fraction of the elements to drop during training.
    prefix : str, default 'dropout_'
    params : RNNParams, optional
    """

    def __init__(self, dropout, prefix='dropout_', params=None):
        super().__init__(prefix, params)
        check(isinstance(dropout, numeric_types), 'dropout probability must be a number')
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """Base class of cells that wrap and modify another (``base_cell``), which must then no
    longer be called directly.

    Parameters
    ----------
    base_cell : BaseRNNCell
    """

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        check(not self._modified, MODIFIED)
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(init_sym, **kwargs)
        self.base_cell._modified = True
        return begin

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError(f'{type(self).__name__} does not define a time step; '
                                  'subclasses of ModifierCell implement __call__')


class ZoneoutCell(ModifierCell):
    """Zoneout on a cell's outputs and states: during training each element keeps its
    previous value with probability ``zoneout_outputs`` (``zoneout_states``).

    Parameters
    ----------
    base_cell : BaseRNNCell
        A step-wise cell (not fused, not bidirectional).
    zoneout_outputs : float, default 0.
    zoneout_states : float, default 0.
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        check(not isinstance(base_cell, FusedRNNCell),
              "FusedRNNCell doesn't support zoneout. Please unfuse first.")
        check(not isinstance(base_cell, BidirectionalCell),
              "BidirectionalCell doesn't support zoneout since it doesn't support step. "
              'Please add ZoneoutCell to the cells underneath instead.')
        check(not isinstance(base_cell, SequentialRNNCell) or not any(
            isinstance(c, BidirectionalCell) for c in base_cell._cells),
              "Bidirectional SequentialRNNCell doesn't support zoneout. "
              'Please add ZoneoutCell to the cells underneath instead.')
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        p_outputs, p_states = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev_output = self.prev_output if self.prev_output is not None else \
            symbol.zeros((0, 0))
        output = symbol.where(mask(p_outputs, next_output), next_output, prev_output) \
            if p_outputs != 0. else next_output
        if p_states != 0.:
            states = [symbol.where(mask(p_states, new), new, old)
                      for new, old in zip(next_states, states)]
        else:
            states = next_states
        self.prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input to the output of a cell (Wu et al. 2016,
    https://arxiv.org/abs/1609.08144): the nodes ``OUTPUT_NAME + '_plus_residual'``.

    Parameters
    ----------
    base_cell : BaseRNNCell
        Its output must have the input's shape.
    """

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name='%s_plus_residual' % output.name)
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state,
                                                layout=layout, merge_outputs=merge_outputs)
        self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, symbol.Symbol)
        inputs, _ = normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs,
                                          name='%s_plus_residual' % outputs.name)
        else:
            outputs = [symbol.elemwise_add(out, inp, name='%s_plus_residual' % out.name)
                       for out, inp in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(BaseRNNCell):
    """Two cells over a sequence, ``l_cell`` forwards and ``r_cell`` backwards; each step's
    output is the two outputs concatenated (``Concat`` nodes ``OUTPUT_PREFIX + 't%d'``, or
    ``OUTPUT_PREFIX + 'out'`` when merged). It cannot be stepped, only unrolled.

    Parameters
    ----------
    l_cell, r_cell : BaseRNNCell
    params : RNNParams, optional
        Container for sharing weights; when given, the cells must not have their own.
    output_prefix : str, default 'bi_'
    """

    def __init__(self, l_cell, r_cell, params=None, output_prefix='bi_'):
        super().__init__('', params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            check(l_cell._own_params and r_cell._own_params,
                  'Either specify params for BidirectionalCell or child cells, not both.')
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        return cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        raise NotImplementedError('Bidirectional cannot be stepped. Please use unroll')

    @property
    def state_info(self):
        return cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        check(not self._modified, MODIFIED)
        return cells_begin_state(self._cells, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        l_cell, r_cell = self._cells
        n_left = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs,
                                            begin_state=begin_state[:n_left], layout=layout,
                                            merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=begin_state[n_left:], layout=layout,
                                            merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, symbol.Symbol) and \
                isinstance(r_outputs, symbol.Symbol)
            if not merge_outputs:
                if isinstance(l_outputs, symbol.Symbol):
                    l_outputs = list(symbol.SliceChannel(l_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
                if isinstance(r_outputs, symbol.Symbol):
                    r_outputs = list(symbol.SliceChannel(r_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            l_outputs = [l_outputs]
            r_outputs = [symbol.reverse(r_outputs, axis=axis)]
        else:
            r_outputs = list(reversed(r_outputs))
        outputs = [symbol.Concat(l_o, r_o, dim=1 + merge_outputs,
                                 name=('%sout' % self._output_prefix if merge_outputs
                                       else '%st%d' % (self._output_prefix, i)))
                   for i, (l_o, r_o) in enumerate(zip(l_outputs, r_outputs))]
        if merge_outputs:
            outputs = outputs[0]
        # MXNet returns the two cells' states as a nested list [l_states, r_states]
        return outputs, [l_states, r_states]
