"""Cases for hybridlib/ops/rnn.py: RNN, _backward_RNN and _rnn_param_concat.

The numpy reference below is written independently of the operator (one batch element and one
time step at a time) and was checked against MXNet 1.9.1 (``mx.nd.RNN``, float64 native CPU
kernel, and float32 oneDNN kernel) for lstm/gru/rnn_tanh/rnn_relu, 1-2 layers, uni- and
bidirectional, outputs and gradients, to ~1e-16 (float64). Some of MXNet's numbers are pasted
below as literals, and the Gluon-exported 2-layer LSTM in
tests/data/reference/lstm_tnc-* is checked too.
"""
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, ShapeError
from hybridlib.ops import registry
from hybridlib.ops.frontend import bind_arguments

from harness import Case, check_case, uniform

DATA = os.path.join(os.path.dirname(__file__), os.pardir, 'data')
GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}


# -------------------------------------------------------------------------------------------------
# Independent numpy reference
# -------------------------------------------------------------------------------------------------

def param_size(mode, num_layers, input_size, state_size, bidirectional=False,
               projection_size=None):
    G, H, D = GATES[mode], state_size, 2 if bidirectional else 1
    P = projection_size or H
    total, c_in = 0, input_size
    for _ in range(num_layers):
        per_dir = G * H * c_in + G * H * P + 2 * G * H + (P * H if projection_size else 0)
        total += D * per_dir
        c_in = D * P
    return total


def unpack(flat, mode, L, D, C, H, P, proj):
    """The matrices of the flat vector, keyed (layer, direction, name)."""
    G = GATES[mode]
    pos = 0
    out = {}

    def take(shape):
        nonlocal pos
        n = int(np.prod(shape))
        value = flat[pos:pos + n].reshape(shape)
        pos += n
        return value

    for layer in range(L):
        c_in = C if layer == 0 else D * P
        for d in range(D):
            out[layer, d, 'wi'] = take((G * H, c_in))
            out[layer, d, 'wh'] = take((G * H, P))
            if proj:
                out[layer, d, 'wr'] = take((P, H))
    for layer in range(L):
        for d in range(D):
            out[layer, d, 'bi'] = take((G * H,))
            out[layer, d, 'bh'] = take((G * H,))
    assert pos == flat.size, (pos, flat.size)
    return out


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def ref_step(mode, x, h, c, w, clip):
    """One cell step for one batch element: (h', c')."""
    a = w['wi'] @ x + w['bi']
    b = w['wh'] @ h + w['bh']
    if mode == 'lstm':
        i, f, g, o = np.split(a + b, 4)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        if clip is not None:
            lo, hi, nan = clip
            c = np.where(np.isnan(c), lo if nan else c, np.clip(c, lo, hi))
        h = sigmoid(o) * np.tanh(c)
        if 'wr' in w:
            h = w['wr'] @ h
        return h, c
    if mode == 'gru':
        ar, az, an = np.split(a, 3)
        br, bz, bn = np.split(b, 3)
        r, z = sigmoid(ar + br), sigmoid(az + bz)
        n = np.tanh(an + r * bn)
        return (1 - z) * n + z * h, None
    pre = a + b
    return (np.tanh(pre) if mode == 'rnn_tanh' else np.maximum(pre, 0)), None


def rnn_ref(data, parameters, state, *rest, state_size, num_layers, mode, bidirectional=False,
            state_outputs=False, projection_size=None, lstm_state_clip_min=None,
            lstm_state_clip_max=None, lstm_state_clip_nan=False, use_sequence_length=False,
            p=0, sequence_length=None, mask=None):
    """RNN's visible outputs; ``rest`` holds state_cell (LSTM), then sequence_length."""
    rest = list(rest)
    state_cell = rest.pop(0) if mode == 'lstm' else None
    if rest:
        sequence_length = rest.pop(0)
    T, N, C = data.shape
    L, D, H = num_layers, 2 if bidirectional else 1, state_size
    P = projection_size or H
    w = unpack(parameters, mode, L, D, C, H, P, projection_size is not None)
    clip = None if lstm_state_clip_min is None else \
        (lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan)
    hy = np.zeros((L * D, N, P))
    cy = np.zeros((L * D, N, H))
    x = data
    for layer in range(L):
        out = np.zeros((T, N, D * P))
        for d in range(D):
            k = layer * D + d
            cell = {name: w[layer, d, name] for name in ('wi', 'wh', 'wr', 'bi', 'bh')
                    if (layer, d, name) in w}
            for n in range(N):
                length = T if sequence_length is None else int(sequence_length[n])
                h = state[k, n]
                c = state_cell[k, n] if mode == 'lstm' else None
                for t in (range(length) if d == 0 else reversed(range(length))):
                    h, c = ref_step(mode, x[t, n], h, c, cell, clip)
                    out[t, n, d * P:(d + 1) * P] = h
                hy[k, n] = h
                if c is not None:
                    cy[k, n] = c
        x = out if mask is None or layer == L - 1 else out * mask[layer]
    if not state_outputs:
        return x
    return [x, hy, cy] if mode == 'lstm' else [x, hy]


def numeric_vjp(attrs, values, cots, eps=1e-6):
    """Finite-difference gradients of sum(rnn_ref(values) * cots) for the float inputs."""
    names = ['data', 'parameters', 'state'] + (['state_cell'] if attrs['mode'] == 'lstm'
                                               else [])

    def loss(vals):
        outs = rnn_ref(*vals, **attrs)
        outs = outs if isinstance(outs, list) else [outs]
        return sum(np.sum(o * c) for o, c in zip(outs, cots))

    grads = []
    for i in range(len(names)):
        g = np.zeros_like(values[i])
        for j in range(values[i].size):
            plus = [v.copy() for v in values]
            minus = [v.copy() for v in values]
            plus[i].reshape(-1)[j] += eps
            minus[i].reshape(-1)[j] -= eps
            g.reshape(-1)[j] = (loss(plus) - loss(minus)) / (2 * eps)
        grads.append(g)
    return grads


# -------------------------------------------------------------------------------------------------
# Harness cases
# -------------------------------------------------------------------------------------------------

T, N, C, H = 3, 2, 3, 2


def rnn_case(mode, L=1, bidirectional=False, name=None, seq=None, grad_inputs=None, **attrs):
    D = 2 if bidirectional else 1
    Hs = attrs.pop('state_size', H)
    P = attrs.get('projection_size') or Hs
    size = param_size(mode, L, C, Hs, bidirectional, attrs.get('projection_size'))
    inputs = [uniform((T, N, C)), uniform((size,)), uniform((L * D, N, P))]
    if mode == 'lstm':
        inputs.append(uniform((L * D, N, Hs)))
    if seq is not None:
        inputs.append(np.array(seq, dtype=np.int32))
        attrs['use_sequence_length'] = True
    attrs = dict(state_size=Hs, num_layers=L, mode=mode, bidirectional=bidirectional, **attrs)
    # _backward_RNN has no gradient of its own: no second-order check for RNN
    return Case('RNN', inputs, attrs, ref=rnn_ref, name=name, grad_inputs=grad_inputs,
                second_order=False)


def _dropout_checker(outs, *values, **attrs):
    """Outputs equal the reference with the hidden mask the operator drew (same seed)."""
    op = registry.get('RNN')
    arrays = [nd.array(v, dtype=v.dtype) for v in values]
    inputs, params, _, _ = bind_arguments(op, arrays, dict(attrs), ())
    mx.random.seed(0)
    mask = nd.invoke_all(op, inputs, params, is_train=True)[-1].asnumpy()
    scale = 1 / (1 - attrs['p'])
    assert set(np.unique(mask)) <= {0.0, scale}, np.unique(mask)
    assert 0 < np.mean(mask == 0) < 1
    expected = rnn_ref(*values, mask=mask, **attrs)
    expected = expected if isinstance(expected, list) else [expected]
    for o, e in zip(outs, expected):
        np.testing.assert_allclose(o, e, rtol=1e-4, atol=1e-5)


RNN_CASES = [
    rnn_case('lstm', state_outputs=True, name='lstm'),
    rnn_case('lstm', 2, True, state_outputs=True, name='lstm-2-bi', grad_inputs=[0, 2, 3]),
    rnn_case('gru', 1, True, name='gru-bi'),
    rnn_case('gru', 2, state_outputs=True, name='gru-2'),
    rnn_case('rnn_tanh', 2, True, state_outputs=True, name='tanh-2-bi', grad_inputs=[0, 1]),
    rnn_case('rnn_relu', 1, state_outputs=True, name='relu'),
    rnn_case('lstm', projection_size=1, state_size=3, state_outputs=True, name='lstmp'),
    rnn_case('lstm', 2, True, projection_size=1, state_size=2, name='lstmp-2-bi',
             grad_inputs=[0, 2, 3]),
    rnn_case('lstm', lstm_state_clip_min=-0.3, lstm_state_clip_max=0.3, state_outputs=True,
             name='clip'),
    rnn_case('lstm', 1, True, seq=[3, 1], state_outputs=True, name='lstm-seq-bi'),
    Case('RNN', [uniform((T, N, C)), uniform((param_size('gru', 2, C, H),)),
                 uniform((2, N, H))],
         dict(state_size=H, num_layers=2, mode='gru', p=0.5, state_outputs=True),
         ref=_dropout_checker, name='dropout', train=True, random=True, second_order=False,
         grad_inputs=[0, 2]),
    # p > 0 in predict mode: no dropout
    Case('RNN', [uniform((T, N, C)), uniform((param_size('rnn_tanh', 2, C, H),)),
                 uniform((2, N, H))],
         dict(state_size=H, num_layers=2, mode='rnn_tanh', p=0.3),
         ref=rnn_ref, name='dropout-predict', second_order=False,
         grad_inputs=[0]),
]


def backward_case(mode, L=1, bidirectional=False, name=None, seq=None, p=0.0, **attrs):
    D = 2 if bidirectional else 1
    size = param_size(mode, L, C, H, bidirectional)
    shapes = [(T, N, C), (size,), (L * D, N, H)] + ([(L * D, N, H)] if mode == 'lstm' else [])
    rng = np.random.default_rng(7)
    inputs = [rng.uniform(-1, 1, s) for s in shapes]
    attrs = dict(state_size=H, num_layers=L, mode=mode, bidirectional=bidirectional, **attrs)
    if seq is not None:
        inputs.append(np.array(seq, dtype=np.int32))
        attrs['use_sequence_length'] = True
    mask = None
    if p > 0:
        attrs['p'] = p
        mask = (rng.uniform(size=(L - 1, T, N, D * H)) > p) / (1 - p)
        inputs.append(mask)
    outs = rnn_ref(*inputs[:len(shapes)], sequence_length=seq, mask=mask, **attrs)
    outs = outs if isinstance(outs, list) else [outs]
    cots = [rng.uniform(-1, 1, o.shape) for o in outs]

    def ref(*values, **a):
        fwd = list(values[:len(shapes)])
        s = values[len(shapes)] if seq is not None else None
        m = values[len(shapes) + (seq is not None)] if p > 0 else None
        cot = list(values[-len(outs):])
        a = dict(a, sequence_length=s, mask=m)
        return numeric_vjp(a, fwd, cot)

    return Case('_backward_RNN', inputs + cots, attrs, ref=ref, name=name, grad=False,
                rtol=1e-6, atol=1e-8)


# Only LSTM calls with every optional input bind positionally (see the note on
# test_backward_rnn_by_keyword); the other modes are checked there.
BACKWARD_CASES = [
    backward_case('lstm', 2, True, seq=[3, 2], p=0.4, state_outputs=True,
                  name='lstm-seq-dropout'),
]

CONCAT_CASES = [
    Case('_rnn_param_concat', [(6,), (4,), (2,)], dict(dim=0),
         ref=lambda *a, dim: np.concatenate(a, axis=dim), name='vectors'),
    Case('_rnn_param_concat', [(2, 3), (2, 1), (2, 2)],
         ref=lambda *a: np.concatenate(a, axis=1), name='default-dim'),
    Case('_rnn_param_concat', [(2, 1, 2), (2, 1, 3)], dict(dim=-1),
         ref=lambda *a, dim: np.concatenate(a, axis=dim), name='negative-dim'),
]

CASES = RNN_CASES + BACKWARD_CASES + CONCAT_CASES


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_rnn(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet 1.9.1's numbers (mx.nd.RNN, float64, state_outputs=True), pasted as literals
# -------------------------------------------------------------------------------------------------

def oracle_inputs(mode, L, D, param_offset=0.0):
    size = param_size(mode, L, C, H, D == 2)
    arrays = [np.sin(np.arange(T * N * C) * 0.7).reshape(T, N, C),
              np.cos(np.arange(size) * 0.37) * 0.5 + param_offset,
              np.sin(np.arange(L * D * N * H) * 1.3).reshape(L * D, N, H) * 0.5]
    if mode == 'lstm':
        arrays.append(np.cos(np.arange(L * D * N * H) * 0.9).reshape(L * D, N, H) * 0.5)
    return arrays


ORACLE_OUT = {
    ('lstm', 2, 2): [
        [[[-0.05214191, 0.00528110, -0.10317355, -0.02423413],
          [-0.05368987, -0.09174505, 0.02531481, 0.04103296]],
         [[-0.03633995, -0.00696991, -0.06303513, -0.01206687],
          [-0.05748014, -0.02525241, 0.05193714, 0.05105928]],
         [[-0.03503807, 0.02148244, -0.10991338, 0.02335751],
          [-0.03488750, -0.02567645, 0.11981388, 0.06482100]]],
        [[[0.06480358, 0.13026778], [0.03081416, -0.03877483]],
         [[-0.05121677, 0.03077440], [0.06494339, 0.03236374]],
         [[-0.03503807, 0.02148244], [-0.03488750, -0.02567645]],
         [[-0.10317355, -0.02423413], [0.02531481, 0.04103296]]],
        [[[0.10183265, 0.24248714], [0.09713175, -0.06582471]],
         [[-0.14861091, 0.06559821], [0.15339912, 0.07737739]],
         [[-0.06674215, 0.04274062], [-0.06857725, -0.04760312]],
         [[-0.19046373, -0.04614361], [0.04970400, 0.08233425]]]],
    ('gru', 2, 2): [
        [[[-0.54563612, -0.25982934, -0.08454692, 0.16545124],
          [-0.24745895, -0.14794558, -0.15323866, 0.15018945]],
         [[-0.59955822, -0.15024911, 0.00997033, 0.04928769],
          [-0.47838689, -0.19355121, -0.23756935, 0.31961519]],
         [[-0.43424708, -0.25852166, 0.07063799, -0.29322101],
          [-0.59799557, -0.08660049, -0.23399166, 0.37457690]]],
        [[[0.06622640, 0.31577193], [0.27594257, 0.13105046]],
         [[0.04844307, 0.13915627], [0.03082884, -0.00021096]],
         [[-0.43424708, -0.25852166], [-0.59799557, -0.08660049]],
         [[-0.08454692, 0.16545124], [-0.15323866, 0.15018945]]]],
    ('rnn_tanh', 2, 2): [
        [[[0.37879287, -0.21404455, 0.34309850, -0.55821365],
          [0.14951714, -0.27904715, 0.25233818, -0.76039268]],
         [[0.08162889, 0.08298602, -0.08019057, -0.79302393],
          [0.26367364, -0.32521228, 0.54746271, -0.35349214]],
         [[0.46318044, -0.20712106, 0.23496862, -0.47175064],
          [0.11515451, 0.15069817, -0.32895874, -0.84662335]]],
        [[[0.19671475, 0.46045332], [-0.91541052, -0.27211904]],
         [[0.80345994, 0.96678078], [0.81423340, 0.92014801]],
         [[0.46318044, -0.20712106], [0.11515451, 0.15069817]],
         [[0.34309850, -0.55821365], [0.25233818, -0.76039268]]]],
    # parameters offset by +0.3 so that most units are active
    ('rnn_relu', 2, 1): [
        [[[0.00000000, 0.39603025], [0.14846015, 1.18612504]],
         [[0.29725501, 0.11945374], [0.62522566, 1.49138665]],
         [[0.02435068, 0.97701234], [1.36129177, 1.47551489]]],
        [[[1.96709466, 1.50600433], [0.00000000, 0.00000000]],
         [[0.02435068, 0.97701234], [1.36129177, 1.47551489]]]],
}


@pytest.mark.parametrize('key', list(ORACLE_OUT), ids=lambda k: '-'.join(map(str, k)))
def test_rnn_matches_mxnet(key):
    mode, L, D = key
    arrays = oracle_inputs(mode, L, D, 0.3 if mode == 'rnn_relu' else 0.0)
    outs = nd.RNN(*[nd.array(a, dtype='float64') for a in arrays], state_size=H, num_layers=L,
                  mode=mode, bidirectional=D == 2, state_outputs=True)
    # MXNet's float64 rnn_relu kernel is only accurate to ~1e-7 (float32 somewhere inside)
    atol = 1e-6 if mode == 'rnn_relu' else 1e-8
    for o, e in zip(outs, ORACLE_OUT[key]):
        np.testing.assert_allclose(o.asnumpy(), np.array(e), rtol=0, atol=atol)
    # the independent reference agrees as well
    for o, e in zip(rnn_ref(*arrays, state_size=H, num_layers=L, mode=mode,
                            bidirectional=D == 2, state_outputs=True), ORACLE_OUT[key]):
        np.testing.assert_allclose(o, np.array(e), rtol=0, atol=atol)


# gradients of sum(out_i * cos(0.5 * arange(size_i))) from MXNet (data, state, state_cell in
# full; the parameter gradient's first 12 entries, its sum and its sum of absolute values)
ORACLE_GRAD = {
    ('lstm', 2, 2): dict(
        data=[[[-0.13504599, -0.01990571, 0.09792871], [-0.15475145, 0.02293103, 0.19750991]],
              [[-0.10838040, 0.03049895, 0.16525040], [-0.08224411, 0.03531249, 0.14808970]],
              [[0.02880795, 0.22879288, 0.39781177], [-0.05157760, 0.00897338, 0.06830986]]],
        params=[-0.05341183, 0.01191241, 0.07163405, 0.23062117, 0.25272758, 0.15597226,
                0.03487607, -0.02930224, -0.07969926, -0.04747256, -0.03850235, -0.01142389],
        params_sum=11.213493637332537, params_abs=35.52288222931912,
        state=[[[0.01577123, 0.04935451], [0.06081986, 0.06682656]],
               [[0.02744883, 0.04436171], [0.02750794, 0.05962522]],
               [[-0.00008946, -0.00903991], [0.00769652, -0.01308145]],
               [[0.28426370, 0.29731936], [0.19448432, 0.21294377]]],
        state_cell=[[[0.10937053, 0.17308278], [0.07229694, 0.03520023]],
                    [[-0.09868350, -0.10676010], [-0.07334242, -0.04843347]],
                    [[-0.02642337, 0.05519894], [0.08566799, 0.06677651]],
                    [[0.28220641, 0.24873907], [0.22278933, 0.23930227]]]),
    ('gru', 2, 2): dict(
        data=[[[0.08321392, 0.07520009, 0.05700828], [0.23424563, 0.18123563, 0.10369624]],
              [[-0.11072935, -0.05998964, -0.00113061], [0.03259649, 0.05303646, 0.06629820]],
              [[0.06571657, 0.22165554, 0.34759447], [-0.03494965, -0.00281750, 0.02969599]]],
        params=[-0.02025016, 0.01128670, 0.03751525, -0.04119281, -0.01476091, 0.01861328,
                0.05600377, -0.00335949, -0.06114273, -0.15056991, -0.16953299, -0.10876206],
        params_sum=2.8425155124596184, params_abs=23.867918044707864,
        state=[[[0.00838050, 0.07273602], [0.02770980, -0.03812004]],
               [[0.01777032, -0.05336694], [-0.08125844, 0.11087112]],
               [[0.26096205, 0.24876088], [0.00660318, -0.07457448]],
               [[-0.24811240, -0.34403106], [0.08046532, 0.10964518]]]),
}


@pytest.mark.parametrize('key', list(ORACLE_GRAD), ids=lambda k: '-'.join(map(str, k)))
def test_rnn_gradient_matches_mxnet(key):
    mode, L, D = key
    arrays = [nd.array(a, dtype='float64') for a in oracle_inputs(mode, L, D)]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        outs = nd.RNN(*arrays, state_size=H, num_layers=L, mode=mode, bidirectional=D == 2,
                      state_outputs=True)
    heads = [nd.array(np.cos(np.arange(o.size) * 0.5).reshape(o.shape), dtype='float64')
             for o in outs]
    autograd.backward(outs, heads)
    expected = ORACLE_GRAD[key]
    close = dict(rtol=0, atol=1e-8)
    np.testing.assert_allclose(arrays[0].grad.asnumpy(), expected['data'], **close)
    gp = arrays[1].grad.asnumpy()
    np.testing.assert_allclose(gp[:12], expected['params'], **close)
    np.testing.assert_allclose(gp.sum(), expected['params_sum'], rtol=1e-12)
    np.testing.assert_allclose(np.abs(gp).sum(), expected['params_abs'], rtol=1e-12)
    np.testing.assert_allclose(arrays[2].grad.asnumpy(), expected['state'], **close)
    if mode == 'lstm':
        np.testing.assert_allclose(arrays[3].grad.asnumpy(), expected['state_cell'], **close)


# -------------------------------------------------------------------------------------------------
# The 2-layer LSTM exported by Gluon (MXNet 1.9.1, oneDNN float32)
# -------------------------------------------------------------------------------------------------

def test_reference_lstm_tnc():
    params = nd.load(os.path.join(DATA, 'reference', 'lstm_tnc-0000.params'))
    io = np.load(os.path.join(DATA, 'reference', 'lstm_tnc-io.npz'))
    # Gluon's packing order: weights then biases, layer by layer, i2h then h2h
    names = [f'lstm_l{layer}_{g}_{t}' for t in ('weight', 'bias') for layer in range(2)
             for g in ('i2h', 'h2h')]
    pieces = [nd.array(params[f'arg:{n}'].asnumpy().reshape(-1)) for n in names]
    flat = nd.op._rnn_param_concat(*pieces, dim=0)
    assert flat.shape == (param_size('lstm', 2, 4, 8),)
    xs = [nd.array(io[f'input{i}']) for i in range(3)]
    for x in xs + [flat]:
        x.attach_grad()
    attrs = dict(state_size=8, num_layers=2, mode='lstm', state_outputs=True)
    out = nd.RNN(*xs[:1], flat, *xs[1:], **attrs)[0]
    np.testing.assert_allclose(out.asnumpy(), io['out0'], rtol=1e-4, atol=1e-6)
    with autograd.record(train_mode=True):
        out = nd.RNN(xs[0], flat, xs[1], xs[2], **attrs)[0]
    np.testing.assert_allclose(out.asnumpy(), io['train_out0'], rtol=1e-4, atol=1e-6)
    out.backward(nd.array(io['cot0']))
    for i, x in enumerate(xs):
        np.testing.assert_allclose(x.grad.asnumpy(), io[f'grad_input{i}'], rtol=1e-3, atol=1e-6)
    grad = flat.grad.asnumpy()
    pos = 0
    for n in names:
        expected = io[f'grad_param:{n}']
        np.testing.assert_allclose(grad[pos:pos + expected.size].reshape(expected.shape),
                                   expected, rtol=1e-3, atol=1e-6, err_msg=n)
        pos += expected.size


# -------------------------------------------------------------------------------------------------
# Behaviour the table does not express
# -------------------------------------------------------------------------------------------------

def _random_inputs(mode, L, D, seed=0, n=N):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1, 1, (T, n, C)), rng.uniform(-1, 1, (param_size(mode, L, C, H,
                                                                            D == 2),)),
              rng.uniform(-1, 1, (L * D, n, H))]
    if mode == 'lstm':
        arrays.append(rng.uniform(-1, 1, (L * D, n, H)))
    return [nd.array(a, dtype='float64') for a in arrays]


@pytest.mark.parametrize('mode', ['lstm', 'gru'])
def test_sequence_length_is_truncation(mode):
    """Each sequence gives what running it alone, cut to its length, gives; the gradients
    past its end are zero."""
    arrays = _random_inputs(mode, 2, 2)
    lengths = [1, 3]
    seq = nd.array(lengths, dtype='int32')
    for a in arrays:
        a.attach_grad()
    attrs = dict(state_size=H, num_layers=2, mode=mode, bidirectional=True, state_outputs=True)
    with autograd.record():
        outs = nd.RNN(*arrays, sequence_length=seq, use_sequence_length=True, **attrs)
    autograd.backward(outs, [nd.ones_like(o) for o in outs])
    for n, length in enumerate(lengths):
        single = [arrays[0].asnumpy()[:length, n:n + 1], arrays[1].asnumpy()] + \
            [a.asnumpy()[:, n:n + 1] for a in arrays[2:]]
        alone = nd.RNN(*[nd.array(a, dtype='float64') for a in single], **attrs)
        np.testing.assert_allclose(outs[0].asnumpy()[:length, n:n + 1], alone[0].asnumpy(),
                                   rtol=1e-12, atol=1e-12)
        assert not outs[0].asnumpy()[length:, n].any()
        for full, part in zip(outs[1:], alone[1:]):
            np.testing.assert_allclose(full.asnumpy()[:, n:n + 1], part.asnumpy(),
                                       rtol=1e-12, atol=1e-12)
        assert not arrays[0].grad.asnumpy()[length:, n].any()
        assert arrays[0].grad.asnumpy()[:length, n].all()


def test_dropout_only_in_training_and_hidden():
    arrays = _random_inputs('rnn_tanh', 2, 1)
    attrs = dict(state_size=H, num_layers=2, mode='rnn_tanh')
    plain = nd.RNN(*arrays, **attrs).asnumpy()
    np.testing.assert_array_equal(nd.RNN(*arrays, p=0.5, **attrs).asnumpy(), plain)
    with autograd.train_mode():
        dropped = nd.RNN(*arrays, p=0.5, **attrs).asnumpy()
    assert not np.allclose(dropped, plain)
    op = registry.get('RNN')
    params = op.parse_attrs(dict(p=0.5, state_outputs=True, **attrs))
    assert op.num_outputs(params) == 3 and op.num_visible_outputs(params) == 2
    # one layer: nothing to drop, MXNet's output count
    params = op.parse_attrs(dict(state_size=H, num_layers=1, mode='lstm', p=0.5))
    assert op.num_outputs(params) == 1


def test_symbol_names_and_shapes():
    s = sym.RNN(sym.var('x'), sym.var('p'), sym.var('h'), sym.var('c'), state_size=2,
                num_layers=2, mode='lstm', state_outputs=True, bidirectional=True, name='rnn0')
    assert s.list_outputs() == ['rnn0_output', 'rnn0_state_output', 'rnn0_statecell_output']
    assert s.list_arguments() == ['x', 'p', 'h', 'c']
    args, outs, _ = s.infer_shape(x=(3, 2, 5))
    assert args == [(3, 2, 5), (272,), (4, 2, 2), (4, 2, 2)]        # as MXNet
    assert outs == [(3, 2, 4), (4, 2, 2), (4, 2, 2)]
    g = sym.RNN(state_size=2, num_layers=1, mode='gru', use_sequence_length=True, name='g')
    assert g.list_arguments() == ['g_data', 'g_parameters', 'g_state', 'g_sequence_length']
    _, types, _ = g.infer_type(g_data='float32', g_sequence_length='int32')
    assert types == [np.float32]


def test_shape_inference_partial():
    op = registry.get('RNN')
    params = op.parse_attrs(dict(state_size=2, num_layers=2, mode='lstm', bidirectional=True,
                                 state_outputs=True))
    ins, outs = op.infer_shapes(params, [(3, 2, 0), None, None, None])
    # the parameter size needs data's C (MXNet would compute it with C = 0)
    assert ins == [(3, 2, 0), (0,), (4, 2, 2), (4, 2, 2)]
    assert outs == [(3, 2, 4), (4, 2, 2), (4, 2, 2)]
    ins, outs = op.infer_shapes(params, [None, None, (4, 5, 2), None])
    assert ins[3] == (4, 5, 2) and outs[0] == (0, 5, 4)
    with pytest.raises(ShapeError, match='parameters'):
        op.infer_shapes(params, [(3, 2, 5), (271,), None, None])
    with pytest.raises(ShapeError, match='state'):
        op.infer_shapes(params, [(3, 2, 5), None, (4, 3, 2), None])
    with pytest.raises(ShapeError, match='3-d'):
        op.infer_shapes(params, [(3, 2), None, None, None])


def test_param_concat_fills_unknown_sizes_from_output():
    """MXNet's RNNParamConcatShape: a known output (from RNN's parameter size) gives the one
    or two inputs of unknown length the remainder, so Gluon can defer i2h's input size."""
    infer = registry.get('_rnn_param_concat').infer_shape
    params = registry.get('_rnn_param_concat').parse_attrs(dict(num_args=4, dim=0))
    ins, outs = infer(params, (0,), (4,), (2,), (2,), out_shapes=[(18,)])
    assert ins == [(10,), (4,), (2,), (2,)] and outs == [(18,)]
    ins, outs = infer(params, (0,), (4,), None, (2,), out_shapes=[(26,)])
    assert ins == [(10,), (4,), (10,), (2,)]
    ins, outs = infer(params, (0,), (4,), (2,), (2,))
    assert ins[0] == (0,) and outs == [(0,)]
    with pytest.raises(ShapeError):
        infer(params, (0,), (4,), (2,), (20,), out_shapes=[(18,)])
    params = registry.get('_rnn_param_concat').parse_attrs(dict(num_args=2))
    assert infer(params, (2, 3), (2, 0)) == ([(2, 3), (2, 0)], [(2, 0)])      # as MXNet
    with pytest.raises(ShapeError):
        registry.get('_rnn_param_concat').infer_shapes(params, [(2, 3), (3, 3)])


@pytest.mark.parametrize('attrs, message', [
    (dict(mode='gru', projection_size=1), 'projection_size'),
    (dict(mode='lstm', projection_size=3), 'projection_size'),
    (dict(mode='gru', lstm_state_clip_min=0, lstm_state_clip_max=1), 'clipping'),
    (dict(mode='lstm', lstm_state_clip_min=0), 'together'),
    (dict(mode='lstm', lstm_state_clip_min=1, lstm_state_clip_max=0), 'clip_max'),
    (dict(mode='lstm', p=1.0), 'dropout'),
    (dict(mode='lstm', num_layers=0), 'num_layers'),
    (dict(mode='lstmp'), 'mode'),
])
def test_bad_attributes(attrs, message):
    full = dict(state_size=2, num_layers=1)
    full.update(attrs)
    with pytest.raises(AttributeParseError, match=message):
        registry.get('RNN').parse_attrs(full)


def test_inputs_follow_the_mode():
    x = _random_inputs('lstm', 1, 1)
    with pytest.raises(AttributeParseError, match='state_cell'):
        nd.RNN(x[0], x[1], x[2], state_cell=x[3], state_size=H, num_layers=1, mode='gru')


def test_float16_keeps_dtype():
    x = [a.astype('float16') for a in _random_inputs('gru', 1, 2)]
    out = nd.RNN(*x, state_size=H, num_layers=1, mode='gru', bidirectional=True,
                 state_outputs=True)
    assert [o.dtype for o in out] == [np.float16, np.float16]
    ref = nd.RNN(*[a.astype('float64') for a in x], state_size=H, num_layers=1, mode='gru',
                 bidirectional=True)
    np.testing.assert_allclose(out[0].asnumpy(), ref.asnumpy(), atol=5e-3)


# Note: MXNet's NDArray functions pass the inputs given positionally in signature order,
# skipping the absent ones, so nd.RNN(x, params, h, seq, mode='gru', use_sequence_length=True)
# works in MXNet; hybridlib's frontend binds the fourth positional input to state_cell. Calls
# of non-LSTM modes with sequence_length (and of _backward_RNN) therefore pass them by keyword.

def _keyword_inputs(mode, L, D, seq=None, seed=3):
    arrays = _random_inputs(mode, L, D, seed)
    kwargs = dict(zip(['data', 'parameters', 'state', 'state_cell'], arrays))
    if seq is not None:
        kwargs['sequence_length'] = nd.array(seq, dtype='int32')
    return kwargs


@pytest.mark.parametrize('mode, L, D', [('gru', 2, 1), ('rnn_tanh', 1, 2), ('rnn_relu', 1, 2)])
def test_sequence_length_other_modes(mode, L, D):
    kwargs = _keyword_inputs(mode, L, D, seq=[2, 3])
    attrs = dict(state_size=H, num_layers=L, mode=mode, bidirectional=D == 2,
                 state_outputs=True, use_sequence_length=True)
    values = [kwargs[k].asnumpy() for k in ('data', 'parameters', 'state')]
    ref_attrs = dict(attrs, sequence_length=np.array([2, 3]))
    expected = rnn_ref(*values, **ref_attrs)
    rng = np.random.default_rng(1)
    cots = [rng.uniform(-1, 1, e.shape) for e in expected]
    for k in ('data', 'parameters', 'state'):
        kwargs[k].attach_grad()
    with autograd.record():
        outs = nd.RNN(**kwargs, **attrs)
    for o, e in zip(outs, expected):
        np.testing.assert_allclose(o.asnumpy(), e, rtol=1e-10, atol=1e-12)
    autograd.backward(outs, [nd.array(c, dtype='float64') for c in cots])
    numeric = numeric_vjp(ref_attrs, values, cots)
    for k, g in zip(('data', 'parameters', 'state'), numeric):
        np.testing.assert_allclose(kwargs[k].grad.asnumpy(), g, rtol=1e-5, atol=1e-8,
                                   err_msg=k)
    assert not kwargs['data'].grad.asnumpy()[2:, 0].any()


@pytest.mark.parametrize('mode, L, D, seq, p', [
    ('gru', 2, 2, [3, 1], 0.4), ('rnn_relu', 1, 2, None, 0.0), ('rnn_tanh', 2, 1, None, 0.0)])
def test_backward_rnn_by_keyword(mode, L, D, seq, p):
    kwargs = _keyword_inputs(mode, L, D, seq, seed=5)
    attrs = dict(state_size=H, num_layers=L, mode=mode, bidirectional=D == 2, p=p,
                 state_outputs=True, use_sequence_length=seq is not None)
    rng = np.random.default_rng(2)
    ref_attrs = dict(attrs, sequence_length=None if seq is None else np.array(seq))
    if p > 0 and L > 1:
        mask = (rng.uniform(size=(L - 1, T, N, D * H)) > p) / (1 - p)
        kwargs['mask'] = nd.array(mask, dtype='float64')
        ref_attrs['mask'] = mask
    values = [kwargs[k].asnumpy() for k in ('data', 'parameters', 'state')]
    cots = [rng.uniform(-1, 1, e.shape) for e in rnn_ref(*values, **ref_attrs)]
    grads = nd.op._backward_RNN(out_grad=nd.array(cots[0], dtype='float64'),
                                state_grad=nd.array(cots[1], dtype='float64'), **kwargs, **attrs)
    assert len(grads) == 3
    for g, e in zip(grads, numeric_vjp(ref_attrs, values, cots)):
        np.testing.assert_allclose(g.asnumpy(), e, rtol=1e-5, atol=1e-8)
