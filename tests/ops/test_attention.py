"""Cases for hybridlib/ops/attention.py: arange_like, div_sqrt_dim and the interleaved
multi-head products of Transformer attention, with their backward operators.

The harness cases check each operator against numpy loops over the layouts MXNet documents
(the backward operators: central differences of those loops). The ``*_match_mxnet`` tests
compare with the outputs and gradients MXNet 1.9.1 computed, and the blocks built on the
operators with MXNet's hybridized runs (tests/data/attention-*, written by
tests/data/make_attention_files.py); test_roi.py reads the same files for ROIAlign.
"""
import inspect
import json
import math
import os
import sys

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd, sym
from hybridlib.base import AttributeParseError, ShapeError
from hybridlib.gluon import nn
from harness import Case, check_case, ints, normal, numeric_vjp

# the Gluon block checks of tests/nn (imperative against hybridized)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), 'nn'))
from hybrid_check import check_hybrid  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data')
with open(os.path.join(DATA, 'attention-cases.json')) as _f:
    FACTS = json.load(_f)
NUMBERS = np.load(os.path.join(DATA, 'attention-numbers.npz'))


# -------------------------------------------------------------------------------------------------
# References: loops over MXNet's documented layouts, in float64
# -------------------------------------------------------------------------------------------------

def ref_arange_like(data, start=0.0, step=1.0, repeat=1, ctx='', axis=None):
    shape = data.shape if axis is None else (data.shape[axis],)
    if data.dtype.kind in 'iu':              # integer dtypes: start and step truncated
        start, step = math.trunc(start), math.trunc(step)
    out = np.zeros(int(np.prod(shape)))
    for i in range(out.size):
        out[i] = start + (i // repeat) * step
    return out.reshape(shape)


def ref_div_sqrt_dim(data):
    return data / math.sqrt(data.shape[-1])


def heads_of(x, heads, parts):
    """x (L, B, heads * parts * D) -> a function (b, h, part, l) -> the D features."""
    size = x.shape[2] // heads // parts
    return lambda b, h, part, t: x[t, b, (h * parts + part) * size:(h * parts + part + 1) * size]


def ref_selfatt_qk(qkv, heads):
    length, batch = qkv.shape[:2]
    at = heads_of(qkv, heads, 3)
    size = qkv.shape[2] // heads // 3
    out = np.zeros((batch * heads, length, length))
    for b, h, i, j in np.ndindex(batch, heads, length, length):
        out[b * heads + h, i, j] = at(b, h, 0, i) @ at(b, h, 1, j) / math.sqrt(size)
    return out


def ref_valatt(projections, attention, heads, parts):
    """The attended values of the last part of ``projections`` (self-attention: 3 parts,
    encoder-decoder: 2)."""
    k_len, batch = projections.shape[:2]
    q_len = attention.shape[1]
    at = heads_of(projections, heads, parts)
    size = projections.shape[2] // heads // parts
    out = np.zeros((q_len, batch, heads * size))
    for b, h, i in np.ndindex(batch, heads, q_len):
        for j in range(k_len):
            out[i, b, h * size:(h + 1) * size] += attention[b * heads + h, i, j] * \
                at(b, h, parts - 1, j)
    return out


def ref_selfatt_valatt(qkv, attention, heads):
    return ref_valatt(qkv, attention, heads, 3)


def ref_encdec_qk(queries, keys_values, heads):
    q_len, batch = queries.shape[:2]
    k_len = keys_values.shape[0]
    q, kv = heads_of(queries, heads, 1), heads_of(keys_values, heads, 2)
    size = queries.shape[2] // heads
    out = np.zeros((batch * heads, q_len, k_len))
    for b, h, i, j in np.ndindex(batch, heads, q_len, k_len):
        out[b * heads + h, i, j] = q(b, h, 0, i) @ kv(b, h, 0, j) / math.sqrt(size)
    return out


def ref_encdec_valatt(keys_values, attention, heads):
    return ref_valatt(keys_values, attention, heads, 2)


def backward_ref(forward, count):
    """The reference of a backward operator ``(ograd, *inputs) -> gradients of the first
    ``count`` inputs``: central differences of the forward reference."""
    def ref(ograd, *inputs, **attrs):
        grads = numeric_vjp(lambda *a: forward(*a, **attrs), list(inputs), ograd, range(count))
        return grads[0] if count == 1 else grads
    return ref


# -------------------------------------------------------------------------------------------------
# Cases
# -------------------------------------------------------------------------------------------------

L, B, H, D, LQ = 3, 2, 2, 2, 2
QKV, ATT = normal((L, B, H * 3 * D)), normal((B * H, L, L))
QUERIES, KEYS_VALUES, ENC_ATT = normal((LQ, B, H * D)), normal((L, B, H * 2 * D)), \
    normal((B * H, LQ, L))

CASES = [
    Case('_contrib_arange_like', [(3, 4)], ref=ref_arange_like),
    Case('_contrib_arange_like', [(2, 3, 4)], dict(start=1.5, step=0.25, repeat=3),
         ref=ref_arange_like, name='repeat'),
    Case('_contrib_arange_like', [(2, 3, 4)], dict(start=-2.0, step=3.0, axis=1, ctx='cpu(0)'),
         ref=ref_arange_like, name='axis'),
    Case('_contrib_arange_like', [(2, 5)], dict(step=-0.5, axis=-1, repeat=2),
         ref=ref_arange_like, name='negative-axis'),
    Case('_npx_arange_like', [ints((3, 4), 0, 5)], dict(start=3.7, step=-2.5),
         ref=ref_arange_like, name='int32'),
    Case('_contrib_div_sqrt_dim', [(2, 3, 5)], ref=ref_div_sqrt_dim),
    Case('_contrib_div_sqrt_dim', [(7,)], ref=ref_div_sqrt_dim, name='vector'),
    Case('_contrib_interleaved_matmul_selfatt_qk', [QKV], dict(heads=H), ref=ref_selfatt_qk),
    Case('_contrib_interleaved_matmul_selfatt_qk', [normal((2, 1, 3 * 3))], dict(heads=1),
         ref=ref_selfatt_qk, name='one-head'),
    Case('_backward_interleaved_matmul_selfatt_qk', [normal((B * H, L, L)), QKV], dict(heads=H),
         ref=backward_ref(ref_selfatt_qk, 1)),
    Case('_contrib_interleaved_matmul_selfatt_valatt', [QKV, ATT], dict(heads=H),
         ref=ref_selfatt_valatt),
    Case('_backward_interleaved_matmul_selfatt_valatt', [normal((L, B, H * D)), QKV, ATT],
         dict(heads=H), ref=backward_ref(ref_selfatt_valatt, 2)),
    Case('_contrib_interleaved_matmul_encdec_qk', [QUERIES, KEYS_VALUES], dict(heads=H),
         ref=ref_encdec_qk),
    Case('_contrib_interleaved_matmul_encdec_qk', [normal((1, 2, 6)), normal((3, 2, 12))],
         dict(heads=3), ref=ref_encdec_qk, name='three-heads'),
    Case('_backward_interleaved_matmul_encdec_qk',
         [normal((B * H, LQ, L)), QUERIES, KEYS_VALUES], dict(heads=H),
         ref=backward_ref(ref_encdec_qk, 2)),
    Case('_contrib_interleaved_matmul_encdec_valatt', [KEYS_VALUES, ENC_ATT], dict(heads=H),
         ref=ref_encdec_valatt),
    Case('_backward_interleaved_matmul_encdec_valatt',
         [normal((LQ, B, H * D)), KEYS_VALUES, ENC_ATT], dict(heads=H),
         ref=backward_ref(ref_encdec_valatt, 2)),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_attention(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet's numbers
# -------------------------------------------------------------------------------------------------

def check_mxnet_numbers(name):
    """Outputs and gradients of fixture ``name`` are MXNet 1.9.1's (to about 1e-6 in float32,
    1e-12 in float64; float16 to one unit in the last place)."""
    case = FACTS['operators'][name]
    inputs = [NUMBERS[f'{name}:in{i}'] for i in range(case['inputs'])]
    arrays = [nd.array(x, dtype=x.dtype) for x in inputs]
    for i in case['grads']:
        arrays[i].attach_grad()
    with autograd.record():
        out = getattr(nd.contrib, case['op'])(*arrays, **case['attrs'])
    expected = NUMBERS[f'{name}:out0']
    assert out.dtype == expected.dtype and out.shape == expected.shape, name
    rtol, atol = {np.dtype(np.float64): (1e-12, 1e-12), np.dtype(np.float16): (1e-3, 1e-3)}.get(
        np.dtype(out.dtype), (1e-5, 1e-6))
    if expected.dtype.kind in 'iu':
        np.testing.assert_array_equal(out.asnumpy(), expected, err_msg=name)
    else:
        np.testing.assert_allclose(out.asnumpy(), expected, rtol=rtol, atol=atol, err_msg=name)
    if case['grads']:
        out.backward(nd.array(NUMBERS[f'{name}:cot0'], dtype=out.dtype))
        for i in case['grads']:
            np.testing.assert_allclose(arrays[i].grad.asnumpy(), NUMBERS[f'{name}:grad{i}'],
                                       rtol=rtol, atol=atol, err_msg=f'{name} gradient {i}')


@pytest.mark.parametrize('name', sorted(n for n, c in FACTS['operators'].items()
                                        if c['op'] != 'ROIAlign'))
def test_operators_match_mxnet(name):
    check_mxnet_numbers(name)


def test_fixtures_reach_the_quirks():
    """The integer fixtures hold MXNet's truncations: start and step toward zero, a division
    by the integer part of the root, rounding toward zero."""
    assert NUMBERS['arange_like_int32:out0'].ravel()[:3].tolist() == [3, 1, -1]
    assert NUMBERS['arange_like_uint8:out0'].tolist() == [2, 2, 1]
    ints = NUMBERS['div_sqrt_dim_int32:in0']
    assert (ints < 0).any() and (NUMBERS['div_sqrt_dim_int32:out0'] == np.trunc(ints / 2)).all()
    assert (NUMBERS['div_sqrt_dim_int32_odd:out0'] == NUMBERS['div_sqrt_dim_int32_odd:in0']).all()
    assert not NUMBERS['arange_like:grad0'].any()


def test_arange_like_float16_keeps_fractions():
    """MXNet truncates start and step for float16 (its kernel takes half for an unsigned
    type); here float16 counts like float32."""
    x = nd.zeros((2, 3), dtype='float16')
    out = nd.contrib.arange_like(x, start=1.5, step=0.5)
    assert out.dtype == np.float16
    assert out.asnumpy().ravel().tolist() == [1.5, 2.0, 2.5, 3.0, 3.5, 4.0]


def test_arange_like_output_lives_with_its_input():
    """``ctx`` is kept in the graph and ignored, as MXNet does."""
    x = nd.ones((2, 3))
    out = nd.contrib.arange_like(x, ctx=mx.cpu(1), axis=0)
    assert out.context == x.context and out.asnumpy().tolist() == [0, 1]
    s = sym.contrib.arange_like(sym.var('a'), ctx='cpu(1)')
    assert json.loads(s.tojson())['nodes'][-1]['attrs'] == {'ctx': 'cpu(1)'}


def test_low_precision_products():
    """float16 computes in float32 and returns float16 (MXNet's CPU takes float32 only)."""
    qkv = NUMBERS['selfatt_qk:in0']
    out = nd.contrib.interleaved_matmul_selfatt_qk(nd.array(qkv, dtype='float16'), heads=2)
    assert out.dtype == np.float16
    expected = ref_selfatt_qk(qkv.astype(np.float16).astype(np.float64), 2)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=2e-3, atol=2e-3)


# -------------------------------------------------------------------------------------------------
# Blocks: imperative and hybridized, against MXNet's hybridized run
# -------------------------------------------------------------------------------------------------

class SelfAttention(gluon.HybridBlock):
    """Multi-head self-attention as GluonNLP's BERT builds it, positions from arange_like."""

    def __init__(self, units, heads, **kwargs):
        super().__init__(**kwargs)
        self._heads = heads
        with self.name_scope():
            self.proj = nn.Dense(3 * units, flatten=False, in_units=units)
            self.out = nn.Dense(units, flatten=False, in_units=units)

    def hybrid_forward(self, F, x):
        position = F.contrib.arange_like(x, axis=0, start=1.0, step=0.5)
        x = F.broadcast_add(x, F.reshape(position, shape=(-1, 1, 1)))
        qkv = self.proj(x)
        score = F.contrib.interleaved_matmul_selfatt_qk(qkv, heads=self._heads)
        attention = F.softmax(score, axis=-1)
        context = F.contrib.interleaved_matmul_selfatt_valatt(qkv, attention, heads=self._heads)
        return self.out(F.contrib.div_sqrt_dim(context))


class EncoderDecoderAttention(gluon.HybridBlock):
    """Multi-head attention of decoder queries over encoder memory (GluonNLP's Transformer)."""

    def __init__(self, units, heads, **kwargs):
        super().__init__(**kwargs)
        self._heads = heads
        with self.name_scope():
            self.query = nn.Dense(units, flatten=False, in_units=units)
            self.key_value = nn.Dense(2 * units, flatten=False, in_units=units)

    def hybrid_forward(self, F, x, memory):
        queries, keys_values = self.query(x), self.key_value(memory)
        score = F.contrib.interleaved_matmul_encdec_qk(queries, keys_values, heads=self._heads)
        attention = F.softmax(score, axis=-1)
        return F.contrib.interleaved_matmul_encdec_valatt(keys_values, attention,
                                                          heads=self._heads)


def run_block_case(name, make, hybridize):
    """The block of fixture ``name`` with MXNet's parameters, run (hybridized or not) on
    MXNet's inputs: output, input gradient and parameter gradients against MXNet's."""
    with mx.name.NameManager():
        block = make()
    block.initialize()
    params = block.collect_params()
    for key, p in params.items():
        p.set_data(nd.array(NUMBERS[f'{name}:param:{key[len(block.prefix):]}']))
    if hybridize:
        block.hybridize()
    facts = FACTS['blocks'][name]
    arrays = [nd.array(NUMBERS[f'{name}:in{i}']) for i in range(facts['inputs'])]
    arrays[0].attach_grad()
    with autograd.record():
        out = block(*arrays)
    out.backward(nd.array(NUMBERS[f'{name}:cot0']))
    tol = dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out.asnumpy(), NUMBERS[f'{name}:out0'], **tol)
    np.testing.assert_allclose(arrays[0].grad.asnumpy(), NUMBERS[f'{name}:grad0'], **tol)
    assert [k[len(block.prefix):] for k in params] == facts['params']
    for key, p in params.items():
        np.testing.assert_allclose(p.grad().asnumpy(),
                                   NUMBERS[f'{name}:pgrad:{key[len(block.prefix):]}'],
                                   err_msg=key, **tol)
    return block, arrays


BLOCKS = {'block_self_attention': lambda: SelfAttention(8, 2),
          'block_encdec_attention': lambda: EncoderDecoderAttention(6, 3)}


@pytest.mark.parametrize('hybridize', [False, True])
@pytest.mark.parametrize('name', sorted(BLOCKS))
def test_blocks_match_mxnet(name, hybridize):
    run_block_case(name, BLOCKS[name], hybridize)


@pytest.mark.parametrize('name', sorted(BLOCKS))
def test_blocks_hybridize_consistently(name):
    block = BLOCKS[name]()
    block.initialize()
    facts = FACTS['blocks'][name]
    check_hybrid(block, [nd.array(NUMBERS[f'{name}:in{i}']) for i in range(facts['inputs'])])


def test_second_order_through_attention():
    """d/dx of the gradient of a softmax attention: the backward operators' own gradients,
    against central differences of the first gradient."""
    rng = np.random.default_rng(3)
    qkv0 = rng.normal(size=(3, 1, 2 * 3 * 2))
    direction = rng.normal(size=qkv0.shape)

    def first_gradient(values, create_graph=False):
        qkv = nd.array(values, dtype='float64')
        qkv.attach_grad()
        with autograd.record():
            score = nd.contrib.interleaved_matmul_selfatt_qk(qkv, heads=2)
            context = nd.contrib.interleaved_matmul_selfatt_valatt(
                qkv, nd.softmax(score, axis=-1), heads=2)
            loss = (context * context).sum()
            grad = autograd.grad(loss, [qkv], create_graph=create_graph)[0]
        return qkv, grad

    qkv, grad = first_gradient(qkv0, create_graph=True)
    grad.backward(nd.array(direction, dtype='float64'))
    eps = 1e-6
    numeric = np.zeros_like(qkv0)
    for j in np.ndindex(qkv0.shape):
        plus, minus = qkv0.copy(), qkv0.copy()
        plus[j] += eps
        minus[j] -= eps
        numeric[j] = np.sum((first_gradient(plus)[1].asnumpy() -
                             first_gradient(minus)[1].asnumpy()) * direction) / (2 * eps)
    np.testing.assert_allclose(qkv.grad.asnumpy(), numeric, rtol=1e-5, atol=1e-7)


# -------------------------------------------------------------------------------------------------
# Symbols, signatures, errors
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('fact', FACTS['symbols'], ids=lambda f: f['op'])
def test_symbols_as_mxnet(fact):
    names = list(fact['shapes'])
    attrs = {k: tuple(v) if isinstance(v, list) else v for k, v in fact['attrs'].items()}
    s = getattr(sym.contrib, fact['op'])(*[sym.var(n) for n in names], name='node', **attrs)
    assert s.list_arguments() == fact['arguments']
    assert s.list_outputs() == fact['outputs']
    args, outs, _ = s.infer_shape(**{k: tuple(v) for k, v in fact['shapes'].items()})
    assert [list(a) for a in args] == fact['arg_shapes']
    assert [list(o) for o in outs] == fact['out_shapes']
    node = json.loads(s.tojson())['nodes'][-1]
    assert node['op'] == fact['json_op'] and node.get('attrs', {}) == fact['json_attrs']


def test_function_parameters_as_mxnet():
    for op, expected in FACTS['parameters'].items():
        params = [p for p in inspect.signature(getattr(nd.contrib, op)).parameters
                  if p not in ('out', 'name', 'attr')]
        assert params == expected, op


def test_partial_shapes_fill_backwards():
    """What one input says about the others (MXNet infers only forwards)."""
    s = sym.contrib.interleaved_matmul_selfatt_valatt(sym.var('a'), sym.var('b'), heads=4)
    args, outs, _ = s.infer_shape_partial(a=(7, 2, 96))
    assert args == [(7, 2, 96), (8, 7, 7)] and outs == [(7, 2, 32)]
    s = sym.contrib.interleaved_matmul_encdec_valatt(sym.var('a'), sym.var('b'), heads=2)
    args, outs, _ = s.infer_shape_partial(b=(6, 5, 9))
    assert args == [(9, 3, 0), (6, 5, 9)] and outs == [(5, 3, 0)]


@pytest.mark.parametrize('call, error, match', [
    (lambda: nd.contrib.interleaved_matmul_selfatt_qk(nd.ones((2, 1, 12)), heads=5),
     ShapeError, r'queries_keys_values has 12 features, not heads \* 3 \* head_dim'),
    (lambda: nd.contrib.interleaved_matmul_selfatt_qk(nd.ones((2, 12)), heads=2),
     ShapeError, r'queries_keys_values \(seq_length, batch, heads \* 3 \* head_dim\) must have '
                 '3 axes'),
    (lambda: nd.contrib.interleaved_matmul_selfatt_valatt(nd.ones((2, 3, 12)),
                                                          nd.ones((5, 2, 2)), heads=2),
     ShapeError, 'attention'),
    (lambda: nd.contrib.interleaved_matmul_encdec_qk(nd.ones((2, 3, 4)), nd.ones((5, 3, 6)),
                                                     heads=2),
     ShapeError, 'keys_values'),
    (lambda: nd.contrib.interleaved_matmul_encdec_valatt(nd.ones((5, 3, 8)),
                                                         nd.ones((6, 2, 4)), heads=2),
     ShapeError, r'attention \(batch \* heads, query_length, key_length\)'),
    (lambda: nd.contrib.interleaved_matmul_encdec_qk(nd.ones((2, 3, 4)), nd.ones((5, 3, 8))),
     AttributeParseError, 'heads'),
    (lambda: nd.contrib.interleaved_matmul_selfatt_qk(nd.ones((2, 3, 12)), heads=0),
     AttributeParseError, 'heads must be positive'),
    (lambda: nd.contrib.div_sqrt_dim(nd.array(np.array(5.0))), ShapeError,
     'at least one axis'),
    (lambda: nd.contrib.arange_like(nd.ones((2, 3)), axis=2), ShapeError, 'axis=2'),
    (lambda: nd.contrib.arange_like(nd.ones((2, 3)), repeat=0), AttributeParseError,
     'repeat must be positive'),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
