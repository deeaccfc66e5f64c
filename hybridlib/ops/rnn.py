"""The fused recurrent operator ``RNN`` (vanilla relu/tanh, LSTM with optional projection, GRU),
its backward ``_backward_RNN``, and ``_rnn_param_concat``, the Concat with which Gluon packs the
per-gate weight matrices into the flat parameter vector that ``RNN`` takes.

The flat parameter vector has MXNet's (cuDNN's) layout: all weights first, layer by layer, in
each layer the forward direction then the reverse one, each as ``i2h_weight (G*H, C_in)``,
``h2h_weight (G*H, P)`` (and for a projected LSTM ``h2r_weight (P, H)``); then all biases in the
same order, ``i2h_bias (G*H,)``, ``h2h_bias (G*H,)``. ``G`` is 1/4/3 gates for rnn/lstm/gru, in
MXNet's gate order (LSTM i, f, g, o; GRU r, z, n), ``H`` the state size, ``P`` the projection
size (``H`` without projection), ``C_in`` the data's C for the first layer and ``D*P`` after.

The forward loops over layers and time steps in Python and is vectorised over the batch; the
input projections of a whole layer are one matmul. The backward recomputes the forward (keeping
the gate activations) and runs backpropagation through time; the dropout mask between layers
(training with ``p > 0``) is a hidden output so that the backward sees the same mask.

MXNet 1.9.1 refuses ``use_sequence_length``, ``projection_size`` and the LSTM state clipping on
the CPU (cuDNN only); they follow cuDNN here: steps past a sequence's length give zero outputs
and leave the state as it was (the reverse direction starts at the sequence's last step), the
cell state is clipped after each step, and with ``lstm_state_clip_nan`` a NaN cell state
becomes ``lstm_state_clip_min``.
"""
import numpy as np

from ..base import DTypeError, ShapeError
from .attrs import UINT32_MAX, Bool, Count, Float, Int, Str
from .elemwise import not_differentiable_twice
from .registry import get, merge_shape, normalize_axis, register
from . import rng

__all__ = ['fused_layout']

_GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}

_RNN_ATTRS = dict(
    state_size=Count(high=UINT32_MAX, doc='size of the state of each layer (H)'),
    num_layers=Count(high=UINT32_MAX, doc='number of stacked layers (L)'),
    bidirectional=Bool(False, doc='a reverse direction in every layer (D = 2)'),
    mode=Str(choices=('gru', 'lstm', 'rnn_relu', 'rnn_tanh'), doc='the recurrent cell'),
    p=Float(0.0, doc='dropout rate on the outputs of every layer but the last (training)'),
    state_outputs=Bool(False, doc='also output the final states'),
    projection_size=Int(None, doc='LSTM only: size P of the projected hidden state'),
    lstm_state_clip_min=Float(None, doc='LSTM only: lower clip of the cell state'),
    lstm_state_clip_max=Float(None, doc='LSTM only: upper clip of the cell state'),
    lstm_state_clip_nan=Bool(False, doc='a NaN cell state becomes lstm_state_clip_min'),
    use_sequence_length=Bool(False, doc='take a sequence_length input (valid steps per batch)'),
)


# -------------------------------------------------------------------------------------------------
# Configuration and parameter layout
# -------------------------------------------------------------------------------------------------

class _Config:
    """The sizes an RNN call is built from."""

    def __init__(self, attrs):
        self.mode = attrs.mode
        self.G = _GATES[attrs.mode]
        self.L = attrs.num_layers
        self.D = 2 if attrs.bidirectional else 1
        self.H = attrs.state_size
        self.proj = attrs.projection_size is not None
        self.P = attrs.projection_size if self.proj else attrs.state_size
        self.lstm = attrs.mode == 'lstm'
        self.clip = attrs.lstm_state_clip_min is not None
        self.clip_min = attrs.lstm_state_clip_min
        self.clip_max = attrs.lstm_state_clip_max
        self.clip_nan = attrs.lstm_state_clip_nan
        self.has_mask = attrs.p > 0 and attrs.num_layers > 1
        self.p = attrs.p
        self.seq = attrs.use_sequence_length


def _layout(cfg, input_size):
    """Offsets and shapes of every matrix in the flat vector: ``(layers, total size)``.

    ``layers[l][d]`` maps 'wi', 'wh', ('wr'), 'bi', 'bh' to ``(offset, shape)``.
    """
    GH = cfg.G * cfg.H
    layers, off = [], 0
    for layer in range(cfg.L):
        c_in = input_size if layer == 0 else cfg.D * cfg.P
        dirs = []
        for _ in range(cfg.D):
            entry = {'wi': (off, (GH, c_in))}
            off += GH * c_in
            entry['wh'] = (off, (GH, cfg.P))
            off += GH * cfg.P
            if cfg.proj:
                entry['wr'] = (off, (cfg.P, cfg.H))
                off += cfg.P * cfg.H
            dirs.append(entry)
        layers.append(dirs)
    for dirs in layers:
        for entry in dirs:
            entry['bi'] = (off, (GH,))
            entry['bh'] = (off + GH, (GH,))
            off += 2 * GH
    return layers, off


def fused_layout(mode, num_layers, state_size, bidirectional, size):
    """The matrices of a flat parameter vector of ``size`` elements, as ``_layout`` gives them
    (``layers[l][d]``: 'wi', 'wh', 'bi', 'bh' -> (offset, shape)), with the input size the
    vector implies; None when no input size fits (what the legacy ``FusedRNN`` initializer
    unpacks)."""
    cfg = _Config(get('RNN').parse_attrs(dict(mode=mode, num_layers=num_layers,
                                              state_size=state_size,
                                              bidirectional=bidirectional)))
    _, without_input = _layout(cfg, 0)
    input_size, odd = divmod(size - without_input, cfg.D * cfg.G * cfg.H)
    if odd or input_size <= 0:
        return None
    return _layout(cfg, input_size)[0]


def _views(flat, layers):
    """Views of ``flat`` shaped as the matrices of ``layers`` (writing them writes ``flat``)."""
    return [[{k: flat[o:o + int(np.prod(s))].reshape(s) for k, (o, s) in entry.items()}
             for entry in dirs] for dirs in layers]


def _input_names(attrs):
    names = ['data', 'parameters', 'state']
    if attrs.mode == 'lstm':
        names.append('state_cell')
    if attrs.use_sequence_length:
        names.append('sequence_length')
    return names


def _num_visible(attrs):
    if not attrs.state_outputs:
        return 1
    return 3 if attrs.mode == 'lstm' else 2


def _check(attrs):
    if attrs.num_layers < 1:
        raise ValueError(f'num_layers must be at least 1, got {attrs.num_layers}')
    if attrs.state_size < 1:
        raise ValueError(f'state_size must be at least 1, got {attrs.state_size}')
    if not 0 <= attrs.p < 1:
        raise ValueError(f'the dropout rate p must be in [0, 1), got {attrs.p}')
    if attrs.projection_size is not None:
        if attrs.mode != 'lstm':
            raise ValueError('projection_size is only supported for mode=lstm')
        if not 1 <= attrs.projection_size <= attrs.state_size:
            raise ValueError(f'projection_size={attrs.projection_size} must be in '
                             f'[1, state_size={attrs.state_size}]')
    lo, hi = attrs.lstm_state_clip_min, attrs.lstm_state_clip_max
    if lo is not None or hi is not None:
        if attrs.mode != 'lstm':
            raise ValueError('state clipping is only supported for mode=lstm')
        if lo is None or hi is None:
            raise ValueError('lstm_state_clip_min and lstm_state_clip_max must be given together')
        if hi < lo:
            raise ValueError(f'lstm_state_clip_max={hi} must be >= lstm_state_clip_min={lo}')


# -------------------------------------------------------------------------------------------------
# Shape and dtype inference
# -------------------------------------------------------------------------------------------------

def _rnn_shapes(attrs, named):
    """Inputs and outputs (hidden mask included) of RNN from partial input shapes by name."""
    cfg = _Config(attrs)
    data = named.get('data')
    if data is not None and len(data) != 3:
        raise ShapeError(f'data must be 3-d (sequence length, batch, input size), got {data}')
    T, N, C = data if data is not None else (0, 0, 0)
    LD = cfg.L * cfg.D
    # the batch size can come from any state or from sequence_length
    for key, axis in (('state', 1), ('state_cell', 1), ('sequence_length', 0)):
        s = named.get(key)
        if s is not None and len(s) > axis and s[axis]:
            N = N or s[axis]
    out = {}
    out['state'] = merge_shape(named.get('state'), (LD, N, cfg.P), 'state')
    if cfg.lstm:
        out['state_cell'] = merge_shape(named.get('state_cell'), (LD, N, cfg.H), 'state_cell')
    if cfg.seq:
        out['sequence_length'] = merge_shape(named.get('sequence_length'), (N,),
                                             'sequence_length')
    size = (_layout(cfg, C)[1],) if C else (0,)
    out['parameters'] = merge_shape(named.get('parameters'), size, 'parameters')
    out['data'] = merge_shape(data, (T, N, C), 'data')
    outputs = [(T, N, cfg.D * cfg.P)]
    if attrs.state_outputs:
        outputs.append((LD, N, cfg.P))
        if cfg.lstm:
            outputs.append((LD, N, cfg.H))
    if cfg.has_mask:
        outputs.append((cfg.L - 1, T, N, cfg.D * cfg.P))
    return out, outputs


def _rnn_types(attrs, names, dtypes):
    dtype = None
    for name, d in zip(names, dtypes):
        if d is None or name == 'sequence_length':
            continue
        if dtype is not None and d != dtype:
            raise DTypeError(f'{name} has dtype {d.name}, but the other inputs are {dtype.name}')
        dtype = d
    ins = [d if name == 'sequence_length' else dtype for name, d in zip(names, dtypes)]
    return ins, dtype


# -------------------------------------------------------------------------------------------------
# The cells: one time step forward, and its backward
# -------------------------------------------------------------------------------------------------

def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


def _cell_forward(xp, cfg, xw, hw, h, c, w):
    """One step for the whole batch: ``(new h, new c, what the backward needs)``.

    ``xw`` and ``hw`` are the i2h and h2h projections with their biases, (N, G*H).
    """
    H = cfg.H
    if cfg.lstm:
        gates = xw + hw
        i = _sigmoid(xp, gates[:, :H])
        f = _sigmoid(xp, gates[:, H:2 * H])
        g = xp.tanh(gates[:, 2 * H:3 * H])
        o = _sigmoid(xp, gates[:, 3 * H:])
        cn = f * c + i * g
        inside = None
        if cfg.clip:
            raw = cn
            lo = xp.fmax(raw, cfg.clip_min) if cfg.clip_nan else xp.maximum(raw, cfg.clip_min)
            cn = xp.minimum(lo, cfg.clip_max)
            inside = (raw >= cfg.clip_min) & (raw <= cfg.clip_max)
        tc = xp.tanh(cn)
        hr = o * tc
        hn = xp.matmul(hr, w['wr'].T) if cfg.proj else hr
        return hn, cn, (i, f, g, o, tc, hr, inside)
    if cfg.mode == 'gru':
        r = _sigmoid(xp, xw[:, :H] + hw[:, :H])
        z = _sigmoid(xp, xw[:, H:2 * H] + hw[:, H:2 * H])
        hw_n = hw[:, 2 * H:]
        n = xp.tanh(xw[:, 2 * H:] + r * hw_n)
        return n + z * (h - n), None, (r, z, n, hw_n)
    pre = xw + hw
    y = xp.tanh(pre) if cfg.mode == 'rnn_tanh' else xp.maximum(pre, 0)
    return y, None, (y,)


def _cell_backward(xp, cfg, w, saved, h, c, dh, dc, dwr, dxw, dhw):
    """Backward of one step: ``(dh_prev, dc_prev)``.

    ``dh``/``dc`` are the gradients of the new states. The gradients of the i2h and h2h
    pre-activations (N, G*H) are written to ``dxw`` and ``dhw`` (the same array unless GRU);
    ``dwr`` accumulates the projection's gradient.
    """
    H = cfg.H
    if cfg.lstm:
        i, f, g, o, tc, hr, inside = saved
        if cfg.proj:
            dwr += xp.matmul(dh.T, hr)
            dh = xp.matmul(dh, w['wr'])
        dcn = dc + dh * o * (1 - tc * tc)
        if inside is not None:
            dcn = dcn * inside
        dxw[:, :H] = dcn * g * i * (1 - i)
        dxw[:, H:2 * H] = dcn * c * f * (1 - f)
        dxw[:, 2 * H:3 * H] = dcn * i * (1 - g * g)
        dxw[:, 3 * H:] = dh * tc * o * (1 - o)
        return xp.matmul(dxw, w['wh']), dcn * f
    if cfg.mode == 'gru':
        r, z, n, hw_n = saved
        dn_pre = dh * (1 - z) * (1 - n * n)
        dxw[:, :H] = dn_pre * hw_n * r * (1 - r)
        dxw[:, H:2 * H] = dh * (h - n) * z * (1 - z)
        dxw[:, 2 * H:] = dn_pre
        dhw[:, :2 * H] = dxw[:, :2 * H]
        dhw[:, 2 * H:] = dn_pre * r
        return dh * z + xp.matmul(dhw, w['wh']), None
    y, = saved
    dxw[...] = dh * (1 - y * y) if cfg.mode == 'rnn_tanh' else dh * (y > 0)
    return xp.matmul(dxw, w['wh']), None


# -------------------------------------------------------------------------------------------------
# One direction of one layer, and the whole stack
# -------------------------------------------------------------------------------------------------

def _direction_forward(xp, cfg, x, w, h, c, valid, reverse, keep):
    """Run one direction over ``x`` (T, N, C_in): ``(y (T, N, P), h, c, saved steps)``."""
    T, N = x.shape[0], x.shape[1]
    xw = (xp.matmul(x.reshape(T * N, -1), w['wi'].T) + w['bi']).reshape(T, N, -1)
    y = xp.empty((T, N, cfg.P), dtype=x.dtype)
    steps = []
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        hw = xp.matmul(h, w['wh'].T) + w['bh']
        hn, cn, saved = _cell_forward(xp, cfg, xw[t], hw, h, c, w)
        m = None
        if valid is not None:
            # past its length a sequence keeps its state and outputs zeros (cuDNN)
            m = valid[t]
            y[t] = xp.where(m, hn, 0)
            hn = xp.where(m, hn, h)
            if cn is not None:
                cn = xp.where(m, cn, c)
        else:
            y[t] = hn
        if keep:
            steps.append((t, saved, h, c, m))
        h, c = hn, cn
    return y, h, c, steps


def _direction_backward(xp, cfg, x, w, steps, dy, dh, dc):
    """BPTT of one direction: ``(dx, {name: gradient}, dh0, dc0)``."""
    T, N = x.shape[0], x.shape[1]
    GH = cfg.G * cfg.H
    # every step writes its rows (the steps cover all of 0..T-1)
    dxw = xp.empty((T, N, GH), dtype=x.dtype)
    dhw = dxw if cfg.mode != 'gru' else xp.empty((T, N, GH), dtype=x.dtype)
    hprev = xp.empty((T, N, cfg.P), dtype=x.dtype)
    dwr = xp.zeros_like(w['wr']) if cfg.proj else None
    for t, saved, h, c, m in reversed(steps):
        g = dh + dy[t]
        gc = dc
        if m is not None:
            # a masked step passed its state through unchanged
            dh_pass, g = xp.where(m, 0, dh), xp.where(m, g, 0)
            if dc is not None:
                dc_pass, gc = xp.where(m, 0, dc), xp.where(m, dc, 0)
        dh, dc = _cell_backward(xp, cfg, w, saved, h, c, g, gc, dwr, dxw[t], dhw[t])
        hprev[t] = h
        if m is not None:
            dh = dh + dh_pass
            if dc is not None:
                dc = dc + dc_pass
    flat = dxw.reshape(T * N, GH)
    grads = {'wi': xp.matmul(flat.T, x.reshape(T * N, -1)), 'bi': flat.sum(axis=0)}
    flat_h = dhw.reshape(T * N, GH)
    grads['wh'] = xp.matmul(flat_h.T, hprev.reshape(T * N, cfg.P))
    grads['bh'] = flat_h.sum(axis=0)
    if cfg.proj:
        grads['wr'] = dwr
    dx = xp.matmul(flat, w['wi']).reshape(T, N, -1)
    return dx, grads, dh, dc


def _valid_steps(xp, seq, T, N):
    """(T, N, 1) booleans: step t is inside sequence n (sequence lengths of any dtype)."""
    return xp.arange(T).reshape(T, 1, 1) < seq.reshape(1, N, 1)


def _stack_forward(xp, cfg, data, params, state, cell, seq, mask, keep=False):
    """The whole RNN: ``(out, hy, cy, per layer-direction steps, per layer inputs)``."""
    T, N = data.shape[0], data.shape[1]
    weights = _views(params, _layout(cfg, data.shape[2])[0])
    valid = _valid_steps(xp, seq, T, N) if seq is not None else None
    x, hy, cy, saved, inputs = data, [], [], [], []
    for layer in range(cfg.L):
        outs = []
        for d in range(cfg.D):
            k = layer * cfg.D + d
            y, h, c, steps = _direction_forward(
                xp, cfg, x, weights[layer][d], state[k], None if cell is None else cell[k],
                valid, d == 1, keep)
            outs.append(y)
            hy.append(h)
            cy.append(c)
            saved.append(steps)
        inputs.append(x)
        x = outs[0] if cfg.D == 1 else xp.concatenate(outs, axis=2)
        if mask is not None and layer < cfg.L - 1:
            x = x * mask[layer]
    cy = xp.stack(cy) if cfg.lstm else None
    return x, xp.stack(hy), cy, saved, inputs


def _stack_backward(xp, cfg, data, params, state, cell, seq, mask, dout, dhy, dcy):
    """Gradients of data, parameters, state and (LSTM) state_cell."""
    _, _, _, saved, inputs = _stack_forward(xp, cfg, data, params, state, cell, seq, mask,
                                            keep=True)
    layers = _layout(cfg, data.shape[2])[0]
    weights = _views(params, layers)
    dparams = xp.zeros_like(params)
    dviews = _views(dparams, layers)
    dstate = xp.empty_like(state)
    dcell = xp.empty_like(cell) if cfg.lstm else None
    dy = dout
    for layer in range(cfg.L - 1, -1, -1):
        dx = None
        for d in range(cfg.D):
            k = layer * cfg.D + d
            dyd = dy[:, :, d * cfg.P:(d + 1) * cfg.P]
            dck = dcy[k] if cfg.lstm else None
            ddx, grads, dh0, dc0 = _direction_backward(
                xp, cfg, inputs[layer], weights[layer][d], saved[k], dyd, dhy[k], dck)
            for name, g in grads.items():
                dviews[layer][d][name][...] = g
            dstate[k] = dh0
            if cfg.lstm:
                dcell[k] = dc0
            dx = ddx if dx is None else dx + ddx
        dy = dx * mask[layer - 1] if mask is not None and layer > 0 else dx
    return dy, dparams, dstate, dcell


def _dropout_mask(xp, cfg, shape, dtype, is_train):
    if not is_train:
        return xp.ones(shape, dtype=dtype)
    keep = rng.generator(xp).random(shape) >= cfg.p
    # a numpy scalar of the data's dtype (cupy refuses numpy arrays as operands)
    return keep.astype(dtype) * np.dtype(dtype).type(1.0 / (1.0 - cfg.p))


def _named(attrs, args):
    named = dict(zip(_input_names(attrs), args))
    return (named['data'], named['parameters'], named['state'], named.get('state_cell'),
            named.get('sequence_length'))


# -------------------------------------------------------------------------------------------------
# Operators
# -------------------------------------------------------------------------------------------------

@register('RNN')
class RNN:
    """Fused multi-layer (bidirectional) recurrent network: vanilla relu/tanh, LSTM, GRU.

    Inputs: ``data`` (T, N, C); ``parameters`` (flat vector, MXNet's layout: see the module);
    ``state`` (L*D, N, P); ``state_cell`` (L*D, N, H), LSTM only; ``sequence_length`` (N,),
    only with ``use_sequence_length``. Outputs: ``out`` (T, N, D*P) and, with
    ``state_outputs``, the final ``hy`` (L*D, N, P) and (LSTM) ``cy`` (L*D, N, H). P is
    ``projection_size`` or H. With ``p > 0`` and more than one layer the dropout mask
    (L-1, T, N, D*P) between layers is a hidden last output (ones outside training).

    LSTM: i, f, g, o = sig, sig, tanh, sig(W_i x + b_i + W_h h + b_h); c' = f c + i g;
    h' = o tanh(c') (projected: h' = W_r (o tanh(c'))). GRU: r, z = sig(...);
    n = tanh(W_in x + b_in + r (W_hn h + b_hn)); h' = (1 - z) n + z h.
    """
    inputs = ('data', 'parameters', 'state', 'state_cell', 'sequence_length')
    attrs = _RNN_ATTRS
    train_aware = True
    random = True
    check = _check

    def list_inputs(attrs):
        return _input_names(attrs)

    def num_outputs(attrs):
        return _num_visible(attrs) + (1 if _Config(attrs).has_mask else 0)

    num_visible_outputs = _num_visible

    def output_names(attrs):
        return ['output', 'state_output', 'statecell_output'][:_num_visible(attrs)]

    def infer_shape(attrs, *shapes):
        names = _input_names(attrs)
        ins, outs = _rnn_shapes(attrs, dict(zip(names, shapes)))
        return [ins[n] for n in names], outs

    def infer_type(attrs, *dtypes):
        ins, dtype = _rnn_types(attrs, _input_names(attrs), dtypes)
        return ins, [dtype] * RNN.num_outputs(attrs)

    def compute(xp, attrs, *args, is_train=False):
        cfg = _Config(attrs)
        data, params, state, cell, seq = _named(attrs, args)
        mask = None
        if cfg.has_mask:
            T, N = data.shape[0], data.shape[1]
            mask = _dropout_mask(xp, cfg, (cfg.L - 1, T, N, cfg.D * cfg.P), data.dtype,
                                 is_train)
        with np.errstate(all='ignore'):
            out, hy, cy, _, _ = _stack_forward(xp, cfg, data, params, state, cell, seq, mask)
        result = [out]
        if attrs.state_outputs:
            result.append(hy)
            if cfg.lstm:
                result.append(cy)
        if mask is not None:
            result.append(mask)
        return tuple(result) if len(result) > 1 else out

    def gradient(F, attrs, inputs, outputs, ograds, is_train=False):
        names = _input_names(attrs)
        nvis = _num_visible(attrs)
        heads = [g if g is not None else F.zeros_like(o)
                 for g, o in zip(ograds[:nvis], outputs[:nvis])]
        kwargs = dict(zip(names, inputs))
        if _Config(attrs).has_mask:
            kwargs['mask'] = outputs[nvis]
        kwargs.update(zip(('out_grad', 'state_grad', 'statecell_grad'), heads))
        grads = list(F._backward_RNN(**kwargs, **attrs))
        return [None if n == 'sequence_length' else grads.pop(0) for n in names]


def _backward_input_names(attrs):
    names = _input_names(attrs)
    if _Config(attrs).has_mask:
        names.append('mask')
    names.append('out_grad')
    if attrs.state_outputs:
        names.append('state_grad')
        if attrs.mode == 'lstm':
            names.append('statecell_grad')
    return names


@register('_backward_RNN')
class _backward_RNN:
    """Backpropagation through time for ``RNN`` (same attributes).

    Inputs: RNN's inputs, then its hidden dropout ``mask`` (when it has one), then the
    gradients of its visible outputs ``out_grad`` (T, N, D*P), ``state_grad`` (L*D, N, P) and
    ``statecell_grad`` (L*D, N, H) (with ``state_outputs``). Outputs: the gradients of
    ``data``, ``parameters``, ``state`` and (LSTM) ``state_cell``; none for sequence_length.
    """
    inputs = ('data', 'parameters', 'state', 'state_cell', 'sequence_length', 'mask',
              'out_grad', 'state_grad', 'statecell_grad')
    attrs = _RNN_ATTRS
    check = _check

    def list_inputs(attrs):
        return _backward_input_names(attrs)

    def num_outputs(attrs):
        return 4 if attrs.mode == 'lstm' else 3

    def infer_shape(attrs, *shapes):
        names = _backward_input_names(attrs)
        named = dict(zip(names, shapes))
        grad_names = ['out_grad', 'state_grad', 'statecell_grad']
        # the output gradient carries data's T and N
        dout = named.get('out_grad')
        if dout is not None and len(dout) == 3:
            named['data'] = merge_shape(named.get('data'), (dout[0], dout[1], 0), 'data')
        ins, outs = _rnn_shapes(attrs, named)
        ins.update(zip(grad_names, outs[:_num_visible(attrs)]))
        if _Config(attrs).has_mask:
            ins['mask'] = outs[-1]
        result = [merge_shape(named.get(n), ins[n], n) if n in grad_names or n == 'mask'
                  else ins[n] for n in names]
        fwd = _input_names(attrs)
        return result, [result[names.index(n)] for n in fwd if n != 'sequence_length']

    def infer_type(attrs, *dtypes):
        names = _backward_input_names(attrs)
        ins, dtype = _rnn_types(attrs, names, dtypes)
        return ins, [dtype] * _backward_RNN.num_outputs(attrs)

    def compute(xp, attrs, *args):
        cfg = _Config(attrs)
        named = dict(zip(_backward_input_names(attrs), args))
        data, params, state = named['data'], named['parameters'], named['state']
        cell = named.get('state_cell')
        dhy = named.get('state_grad')
        dhy = xp.zeros_like(state) if dhy is None else dhy
        dcy = named.get('statecell_grad')
        if cfg.lstm and dcy is None:
            dcy = xp.zeros_like(cell)
        with np.errstate(all='ignore'):
            grads = _stack_backward(xp, cfg, data, params, state, cell,
                                    named.get('sequence_length'), named.get('mask'),
                                    named['out_grad'], dhy, dcy)
        return grads if cfg.lstm else grads[:3]

    gradient = not_differentiable_twice('_backward_RNN')


# -------------------------------------------------------------------------------------------------
# Parameter packing
# -------------------------------------------------------------------------------------------------

def _concat_infer(attrs, *shapes, out_shapes=None):
    """MXNet's RNNParamConcatShape: Concat's rule, plus filling unknown sizes along ``dim``.

    When the output's size along ``dim`` is known (RNN infers it from the data), the one or
    two inputs of unknown size along ``dim`` (the first layer's i2h weights, whose input size
    Gluon defers) get the remainder, shared equally. ``out_shapes`` is that known output.
    """
    dshape, size, unknown, axis = None, 0, [], None
    for i, s in enumerate(shapes):
        if s is None:
            unknown.append(i)
            continue
        axis = normalize_axis(attrs.dim, len(s), 'dim')
        if s[axis] == 0:
            unknown.append(i)
        else:
            size += s[axis]
        dshape = merge_shape(dshape, s[:axis] + (0,) + s[axis + 1:],
                             f'input {i} of the concatenation')
    out = out_shapes[0] if out_shapes else None
    if out is not None:
        axis = normalize_axis(attrs.dim, len(out), 'dim')
        dshape = merge_shape(dshape, out[:axis] + (0,) + out[axis + 1:], 'the output')
    if dshape is None:
        return list(shapes), [None]
    ins = [merge_shape(s, dshape, f'input {i} of the concatenation')
           for i, s in enumerate(shapes)]
    total = size if not unknown else 0
    out = merge_shape(out, dshape[:axis] + (total,) + dshape[axis + 1:], 'the output')
    if out[axis] and unknown:
        residual = out[axis] - size
        if residual < 0:
            raise ShapeError(f'the inputs are already {size} long along dim {axis}, more '
                             f'than the output {out}')
        if len(unknown) <= 2 and residual % len(unknown) == 0:
            for i in unknown:
                ins[i] = ins[i][:axis] + (residual // len(unknown),) + ins[i][axis + 1:]
    return ins, [out]


@register('_rnn_param_concat')
class _rnn_param_concat:
    """Concatenate ``num_args`` arrays along ``dim`` (Gluon packs RNN parameters with it).

    Shapes agree except along ``dim``; the result's size there is the sum. Shape inference
    also fills an input's unknown size along ``dim`` from a known output (see the module).
    """
    variadic = 'num_args'
    attrs = dict(num_args=Int(), dim=Int(1))
    infer_shape = _concat_infer

    def compute(xp, attrs, *args):
        return xp.concatenate(args, axis=attrs.dim)

    def gradient(F, attrs, inputs, outputs, ograds):
        g = ograds[0]
        axis = normalize_axis(attrs.dim, len(inputs[0].shape), 'dim')
        grads, begin = [], 0
        for x in inputs:
            end = begin + x.shape[axis]
            grads.append(F.slice_axis(g, axis=axis, begin=begin, end=end))
            begin = end
        return grads
