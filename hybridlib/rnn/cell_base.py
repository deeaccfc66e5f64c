"""The base of MXNet's legacy symbolic RNN cells (``mx.rnn``): ``RNNParams`` and ``BaseRNNCell``.

A legacy cell builds Symbols, never arrays. It holds its weights as variables in an
``RNNParams`` (``PREFIX + 'i2h_weight'``, ...), so two cells that share one container share
weights. Calling a cell on ``(inputs, states)`` adds one time step to the graph, its nodes named
``PREFIX + 't%d_' % step`` + what the node is (``lstm_t0_i2h``, ``lstm_t1_slice``, ...); the
step counter goes back to -1 on ``reset()``, which ``unroll`` calls first, so every unrolled graph
has the same node names as MXNet 1.9.1's.

States are lists of Symbols. ``state_info`` describes each one as ``{'shape': ..., '__layout__':
...}`` with 0 for the batch size (inferred from the inputs); ``begin_state`` makes them,
``zeros`` by default, named ``PREFIX + 'begin_state_%d'``.

A cell's weights are kept one matrix for all gates (``i2h_weight (G*H, C)``); ``unpack_weights``
splits such a matrix into one per gate (``i2h_i_weight``, ``i2h_f_weight``, ...) and
``pack_weights`` joins them again, as checkpoints store them (``rnn.save_rnn_checkpoint``).
"""
from .. import ndarray, symbol
from ..base import MXNetAssertionError, string_types

__all__ = ['RNNParams', 'BaseRNNCell']

# the gate suffixes of unpacked weight names, per kind of cell
GATES = {'rnn': ('',), 'lstm': ('_i', '_f', '_c', '_o'), 'gru': ('_r', '_z', '_o')}

MODIFIED = ('After applying modifier cells (e.g. DropoutCell) the base cell cannot be called '
            'directly. Call the modifier cell instead.')


def check(condition, message):
    """MXNet's ``assert``s, as MXNetAssertionError (an AssertionError that ``python -O``
    keeps)."""
    if not condition:
        raise MXNetAssertionError(message)


def plus(lhs, rhs):
    """``lhs + rhs`` as MXNet's Symbol ``+`` records it: ``elemwise_add`` named ``_plus<n>``
    (hybridlib's ``+`` takes ``broadcast_add`` while shapes are unknown)."""
    return symbol._internal._Plus(lhs, rhs)


def times(lhs, rhs):
    """``lhs * rhs`` as MXNet's Symbol ``*`` records it: ``elemwise_mul`` named ``_mul<n>``."""
    return symbol._internal._Mul(lhs, rhs)


def activate(inputs, activation, **kwargs):
    """``activation`` applied to ``inputs``: an ``Activation`` node for a name ('tanh'),
    else ``activation(inputs, **kwargs)``."""
    if isinstance(activation, string_types):
        return symbol.Activation(inputs, act_type=activation, **kwargs)
    return activation(inputs, **kwargs)


def lstm_update(i2h, h2h, prev_c, name, activation, **slice_axis):
    """An LSTM step from its two transforms (gates input, forget, cell, output), as the
    ``LSTMCell`` and ``ConvLSTMCell`` of MXNet take it: ``(next_h, [next_h, next_c])``.
    ``activation`` stands where the LSTM has tanh; ``slice_axis`` is the gates' axis when
    not the default."""
    gates = symbol.SliceChannel(plus(i2h, h2h), num_outputs=4, name='%sslice' % name,
                                **slice_axis)
    in_gate = symbol.Activation(gates[0], act_type='sigmoid', name='%si' % name)
    forget_gate = symbol.Activation(gates[1], act_type='sigmoid', name='%sf' % name)
    in_transform = activate(gates[2], activation, name='%sc' % name)
    out_gate = symbol.Activation(gates[3], act_type='sigmoid', name='%so' % name)
    next_c = symbol._internal._plus(times(forget_gate, prev_c), times(in_gate, in_transform),
                                    name='%sstate' % name)
    next_h = symbol._internal._mul(out_gate, activate(next_c, activation), name='%sout' % name)
    return next_h, [next_h, next_c]


def gru_update(i2h, h2h, prev_h, name, activation):
    """A GRU step from its two transforms (gates reset, update, new), cuDNN's variant as the
    ``GRUCell`` and ``ConvGRUCell`` of MXNet take it: ``(next_h, [next_h])``. ``activation``
    stands where the GRU has tanh. As MXNet's, the node names have a doubled underscore:
    'gru_t0__r_act'."""
    i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name='%s_i2h_slice' % name)
    h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name='%s_h2h_slice' % name)
    reset_gate = symbol.Activation(plus(i2h_r, h2h_r), act_type='sigmoid',
                                   name='%s_r_act' % name)
    update_gate = symbol.Activation(plus(i2h_z, h2h_z), act_type='sigmoid',
                                    name='%s_z_act' % name)
    next_h_tmp = activate(plus(i2h, times(reset_gate, h2h)), activation,
                          name='%s_h_act' % name)
    next_h = symbol._internal._plus(times(1. - update_gate, next_h_tmp),
                                    times(update_gate, prev_h), name='%sout' % name)
    return next_h, [next_h]


def cells_state_info(cells):
    return sum([c.state_info for c in cells], [])


def cells_begin_state(cells, **kwargs):
    return sum([c.begin_state(**kwargs) for c in cells], [])


def cells_unpack_weights(cells, args):
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def cells_pack_weights(cells, args):
    for cell in cells:
        args = cell.pack_weights(args)
    return args


def missing_weight(name, cell):
    """The KeyError (MXNet's error type) for a weight that ``cell`` needs and did not get."""
    return KeyError(f'{type(cell).__name__} (prefix {cell._prefix!r}) needs the weight '
                    f'{name!r}, which is not among the given arguments; pass the parameters '
                    'of the graph this cell built')


def pop_weight(args, name, cell):
    """``args.pop(name)``, with an error that says which cell wanted the weight."""
    if name not in args:
        raise missing_weight(name, cell)
    return args.pop(name)


def normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """``(inputs, time axis)``: ``inputs`` as one Symbol (``merge`` True), as a list of one
    Symbol per step (``merge`` False) or as given (``merge`` None).

    Parameters
    ----------
    length : int or None
        The number of time steps.
    inputs : Symbol or list of Symbol
        One Symbol with a time axis where ``layout`` has ``T`` (``in_layout`` if given), or
        one Symbol (N, ...) per step.
    layout : str
        ``'NTC'`` or ``'TNC'``, the layout of a merged result.
    merge : bool or None
    in_layout : str, optional
        The layout of ``inputs`` when it differs from ``layout``.
    """
    check(inputs is not None, 'unroll(inputs=None) has been deprecated. Please create input '
                              'variables outside unroll.')
    axis = layout.find('T')
    in_axis = in_layout.find('T') if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            check(len(inputs.list_outputs()) == 1,
                  "unroll doesn't allow grouped symbol as input. Please convert to list with "
                  'list(inputs) first or let unroll handle splitting.')
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        check(length is None or len(inputs) == length,
              f'unroll: length {length} differs from the number of inputs {len(inputs)}')
        if merge is True:
            inputs = [symbol.expand_dims(i, axis=axis) for i in inputs]
            inputs = symbol.Concat(*inputs, dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class RNNParams:
    """Container for holding variables, for sharing weights between cells.

    Parameters
    ----------
    prefix : str
        Names of all variables created by this container start with ``prefix``.
    """

    def __init__(self, prefix=''):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, made on first use.

        Parameters
        ----------
        name : str
            The variable's name, without the prefix.
        **kwargs
            More arguments for ``symbol.Variable`` (``init``, ``shape``, ...), used only when
            the variable is made.
        """
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """Abstract base class for the legacy RNN cells.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the names of the cell's nodes, and of its weights when ``params`` is None.
    params : RNNParams, optional
        Container for sharing weights between cells; a new one when None.
    """

    def __init__(self, prefix='', params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters before re-using the cell for another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, '_cells', ()):
            cell.reset()

    def __call__(self, inputs, states):
        """Add one time step to the graph.

        Parameters
        ----------
        inputs : Symbol
            The input of the step, (N, C).
        states : list of Symbol
            The states from the previous step or ``begin_state()``.

        Returns
        -------
        output : Symbol
            The output of the step.
        states : list of Symbol
            The states after the step, like ``begin_state()``'s.
        """
        raise NotImplementedError(f'{type(self).__name__} does not define a time step; '
                                  'subclasses of BaseRNNCell implement __call__')

    @property
    def params(self):
        """The cell's ``RNNParams`` (from now on shared: no longer the cell's own)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """A list with the shape and layout (a dict) of each state."""
        raise NotImplementedError(f'{type(self).__name__} does not define state_info')

    @property
    def state_shape(self):
        """The shape of each state, 0 for the batch size."""
        return [ele['shape'] for ele in self.state_info]

    @property
    def _gate_names(self):
        """The suffix of each gate in unpacked weight names (``'_i'``, ``'_f'``, ...)."""
        return ()

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def _next_step_name(self):
        """Count one more time step; the prefix of its nodes' names, ``PREFIX + 't%d_'``."""
        self._counter += 1
        return '%st%d_' % (self._prefix, self._counter)

    def begin_state(self, func=symbol.zeros, **kwargs):
        """The initial states, one Symbol per entry of ``state_info``.

        Parameters
        ----------
        func : callable, default symbol.zeros
            Makes a state: ``func(name=..., shape=..., __layout__=..., **kwargs)``; e.g.
            ``symbol.zeros``, ``symbol.uniform``, or ``symbol.Variable`` to feed the states
            as inputs.
        **kwargs
            More arguments for ``func`` (``dtype``, ``low``, ...).

        Returns
        -------
        list of Symbol
            Named ``PREFIX + 'begin_state_%d'``, counted from the last ``reset()``.
        """
        check(not self._modified, MODIFIED)
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name='%sbegin_state_%d' % (self._prefix, self._init_counter),
                               **kwargs))
        return states

    def unpack_weights(self, args):
        """Split each all-gates weight of this cell into one weight per gate.

        For example an ``LSTMCell`` with prefix ``'lstm_'`` turns ``lstm_i2h_weight``
        (4H, C) into ``lstm_i2h_i_weight``, ``lstm_i2h_f_weight``, ``lstm_i2h_c_weight`` and
        ``lstm_i2h_o_weight`` (H, C), and so for ``h2h`` and the biases.

        Parameters
        ----------
        args : dict of str to NDArray
            The packed weights, e.g. ``Module.get_params()[0]``.

        Returns
        -------
        dict of str to NDArray
            A new dict: ``args`` with this cell's weights unpacked (copies).

        See Also
        --------
        pack_weights : the reverse.
        """
        args = args.copy()
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ('i2h', 'h2h'):
            weight = pop_weight(args, '%s%s_weight' % (self._prefix, group), self)
            bias = pop_weight(args, '%s%s_bias' % (self._prefix, group), self)
            for j, gate in enumerate(self._gate_names):
                args['%s%s%s_weight' % (self._prefix, group, gate)] = \
                    weight[j * h:(j + 1) * h].copy()
                args['%s%s%s_bias' % (self._prefix, group, gate)] = \
                    bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """Join the per-gate weights of this cell into one weight for all gates.

        Parameters
        ----------
        args : dict of str to NDArray
            The unpacked weights, as ``unpack_weights`` gives them.

        Returns
        -------
        dict of str to NDArray
            A new dict: ``args`` with this cell's weights packed.
        """
        args = args.copy()
        if not self._gate_names:
            return args
        for group in ('i2h', 'h2h'):
            weight, bias = [], []
            for gate in self._gate_names:
                weight.append(pop_weight(args, '%s%s%s_weight' % (self._prefix, group, gate),
                                         self))
                bias.append(pop_weight(args, '%s%s%s_bias' % (self._prefix, group, gate), self))
            args['%s%s_weight' % (self._prefix, group)] = ndarray.concatenate(weight)
            args['%s%s_bias' % (self._prefix, group)] = ndarray.concatenate(bias)
        return args

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        """Unroll the cell over ``length`` time steps.

        Parameters
        ----------
        length : int
            The number of steps.
        inputs : Symbol or list of Symbol
            One Symbol (N, T, ...) for layout ``'NTC'`` or (T, N, ...) for ``'TNC'`` (e.g. an
            ``Embedding``'s output), or a list of ``length`` Symbols (N, ...).
        begin_state : list of Symbol, optional
            The initial states; ``begin_state()`` when None.
        layout : str, default 'NTC'
            The layout of ``inputs`` when it is one Symbol, and of merged outputs.
        merge_outputs : bool, optional
            True: the outputs as one Symbol in ``layout``; False: a list of one Symbol per
            step; None: whichever the cell makes (a list for step-wise cells).

        Returns
        -------
        outputs : Symbol or list of Symbol
        states : list of Symbol
            The states after the last step, like ``begin_state()``'s.
        """
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        states = begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    # MXNet's cells (and custom ones written for it) call it as a method
    _get_activation = staticmethod(activate)
