"""Writes MXNet 1.9.1's numbers for the attention operators (arange_like, div_sqrt_dim, the
interleaved multi-head products) and ROIAlign.

Run with the MXNet oracle's Python, from the repository root::

    .oracle/bin/python tests/data/make_attention_files.py

It writes under tests/data/:

* ``attention-numbers.npz``: per case ``CASE:inI`` (inputs), ``CASE:out0`` (the output),
  ``CASE:cot0`` (the head gradient of a backward pass) and ``CASE:gradI`` (the gradients of
  the inputs MXNet differentiated); per block case also ``CASE:param:NAME`` (the parameter
  values set before the call) and ``CASE:pgrad:NAME`` (their gradients);
* ``attention-cases.json``: per operator case its ``nd.contrib`` name, attributes, number of
  inputs and differentiated inputs (``grads``); per block case its block, input count and
  parameter names; and ``symbols``: for some Symbol calls the arguments, outputs, inferred
  shapes and the node's attributes in MXNet's JSON, and the parameters of each ``nd.contrib``
  function in MXNet's order.

MXNet's CPU runs the interleaved products in float32 only. arange_like has no gradient (MXNet
writes zeros), which one case records. ROIAlign cases keep every roi's image index >= 0:
MXNet's kernel leaves most of a skipped roi's output unset.
tests/ops/test_attention.py and tests/ops/test_roi.py read the files.
"""
import inspect
import json
import os

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd, sym
from mxnet.gluon import nn

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20240917)


def normal(shape, dtype=np.float32):
    return RNG.normal(0, 1, size=shape).astype(dtype)


def wave(shape, offset=0.0):
    """Smooth distinct values in [-1, 1] (head gradients, block parameters)."""
    size = int(np.prod(shape))
    return np.sin(np.arange(size) * 0.7 + offset).reshape(shape).astype(np.float32)


# -------------------------------------------------------------------------------------------------
# Operator cases: (name, nd.contrib operator, attributes, inputs, inputs to differentiate)
# -------------------------------------------------------------------------------------------------

def attention_cases():
    cases = []

    def case(name, op, attrs, inputs, grads=()):
        cases.append((name, op, attrs, inputs, list(grads)))

    x = normal((3, 4, 5))
    case('arange_like', 'arange_like', {}, [x], grads=[0])
    case('arange_like_repeat', 'arange_like', dict(start=1.5, step=0.25, repeat=3), [x])
    case('arange_like_axis', 'arange_like', dict(start=-2.0, step=3.0, axis=1), [x])
    case('arange_like_negative_axis', 'arange_like', dict(step=0.1, start=1000.0, axis=-1,
                                                          repeat=2), [x])
    case('arange_like_float64', 'arange_like', dict(step=0.1, start=1000.0, repeat=2),
         [x.astype(np.float64)])
    case('arange_like_float16', 'arange_like', dict(step=2.0, start=-3.0), [x.astype(np.float16)])
    case('arange_like_int32', 'arange_like', dict(start=3.7, step=-2.5), [x.astype(np.int32)])
    case('arange_like_int8', 'arange_like', dict(start=-3.7, step=50.0), [x.astype(np.int8)])
    case('arange_like_uint8', 'arange_like', dict(start=2.0, step=-1.0, axis=0, repeat=2),
         [x.astype(np.uint8)])
    case('arange_like_ctx', 'arange_like', dict(ctx='cpu(0)', axis=2), [x])

    case('div_sqrt_dim', 'div_sqrt_dim', {}, [normal((2, 3, 6))], grads=[0])
    case('div_sqrt_dim_float64', 'div_sqrt_dim', {}, [normal((4, 7), np.float64)], grads=[0])
    case('div_sqrt_dim_float16', 'div_sqrt_dim', {}, [normal((3, 3), np.float16)])
    ints = (np.arange(24).reshape(3, 8) * 3 - 30).astype(np.int32)
    case('div_sqrt_dim_int32', 'div_sqrt_dim', {}, [ints[:, :4]])
    case('div_sqrt_dim_int32_odd', 'div_sqrt_dim', {}, [ints[:, :3]])
    case('div_sqrt_dim_int64', 'div_sqrt_dim', {}, [ints.astype(np.int64)])

    length, batch, heads, size, q_len = 4, 3, 2, 5, 3
    qkv = normal((length, batch, heads * 3 * size))
    case('selfatt_qk', 'interleaved_matmul_selfatt_qk', dict(heads=heads), [qkv], grads=[0])
    case('selfatt_qk_one_head', 'interleaved_matmul_selfatt_qk', dict(heads=1),
         [normal((5, 2, 3 * 4))], grads=[0])
    case('selfatt_valatt', 'interleaved_matmul_selfatt_valatt', dict(heads=heads),
         [qkv, normal((batch * heads, length, length))], grads=[0, 1])
    queries, keys_values = normal((q_len, batch, heads * size)), normal((length, batch,
                                                                         heads * 2 * size))
    case('encdec_qk', 'interleaved_matmul_encdec_qk', dict(heads=heads), [queries, keys_values],
         grads=[0, 1])
    case('encdec_valatt', 'interleaved_matmul_encdec_valatt', dict(heads=heads),
         [keys_values, normal((batch * heads, q_len, length))], grads=[0, 1])
    case('encdec_qk_three_heads', 'interleaved_matmul_encdec_qk', dict(heads=3),
         [normal((2, 1, 3 * 3)), normal((5, 1, 3 * 2 * 3))], grads=[0, 1])
    return cases


def roi_cases():
    cases = []

    def case(name, attrs, inputs, grads=(0,)):
        cases.append((name, 'ROIAlign', attrs, inputs, list(grads)))

    data = normal((2, 8, 7, 9))
    # rois inside, across the border, smaller than a pixel, far larger than the image
    rois = np.array([[0, 1.2, 0.7, 6.3, 5.1], [1, -2.0, -1.5, 4.0, 3.0],
                     [1, 3.3, 2.2, 10.5, 8.9], [0, 5.0, 5.0, 5.2, 5.1],
                     [1, 0.1, 0.3, 30.0, 20.0], [0, 8.4, 6.1, 8.9, 6.9]], np.float32)
    case('roi_align', dict(pooled_size=(2, 3), spatial_scale=1.0), [data, rois])
    case('roi_align_sample_ratio', dict(pooled_size=(2, 2), spatial_scale=0.7, sample_ratio=2),
         [data, rois])
    case('roi_align_aligned', dict(pooled_size=(3, 2), spatial_scale=1.0, aligned=True),
         [data, rois])
    case('roi_align_position_sensitive', dict(pooled_size=(2, 2), spatial_scale=0.5,
                                              position_sensitive=True), [data, rois])
    case('roi_align_ps_aligned', dict(pooled_size=(2, 1), spatial_scale=0.8, sample_ratio=3,
                                      position_sensitive=True, aligned=True), [data, rois])
    case('roi_align_float64', dict(pooled_size=(3, 3), spatial_scale=0.9),
         [data.astype(np.float64), rois.astype(np.float64)])
    # a roi whose scaled size stays below a pixel: grids of one sample per bin
    case('roi_align_small_scale', dict(pooled_size=(2, 2), spatial_scale=0.0625, sample_ratio=-1),
         [data, rois * np.array([1, 16, 16, 16, 16], np.float32)])
    # samples exactly at -1 and at the height and width (still read), entirely outside the
    # image (zeros), rois with x2 < x1 or y2 == y1 (1 x 1 without aligned), the whole image
    edges = np.array([[0, -2.0, -2.0, 2.0, 2.0], [1, 8.0, 6.0, 12.0, 10.0],
                      [0, 12.0, 1.0, 20.0, 3.0], [1, -9.0, -9.0, -3.0, -4.0],
                      [0, 6.0, 5.0, 2.0, 1.0], [1, 3.0, 2.5, 3.0, 2.5],
                      [0, 0.0, 0.0, 9.0, 7.0]], np.float32)
    case('roi_align_edges', dict(pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=1),
         [data, edges])
    case('roi_align_edges_adaptive', dict(pooled_size=(3, 2), spatial_scale=1.0, sample_ratio=0),
         [data, edges])
    # adaptive grids of 1 to 10 samples per axis (sample_ratio 0), aligned, on both images
    case('roi_align_adaptive_aligned', dict(pooled_size=(2, 3), spatial_scale=1.0, sample_ratio=0,
                                            aligned=True), [data, rois])
    case('roi_align_float64_aligned', dict(pooled_size=(2, 2), spatial_scale=0.6, sample_ratio=2,
                                           aligned=True),
         [data.astype(np.float64), rois.astype(np.float64)])
    case('roi_align_ps_adaptive', dict(pooled_size=(2, 2), spatial_scale=0.9, sample_ratio=0,
                                       position_sensitive=True), [data, edges])
    return cases


def run_operator(name, op, attrs, inputs, grads, numbers):
    arrays = [nd.array(x, dtype=x.dtype) for x in inputs]
    for i in grads:
        arrays[i].attach_grad()
    with autograd.record():
        out = getattr(nd.contrib, op)(*arrays, **attrs)
    for i, x in enumerate(inputs):
        numbers[f'{name}:in{i}'] = x
    numbers[f'{name}:out0'] = out.asnumpy()
    if grads:
        cot = wave(out.shape, 0.5).astype(out.dtype)
        out.backward(nd.array(cot, dtype=out.dtype))
        numbers[f'{name}:cot0'] = cot
        for i in grads:
            numbers[f'{name}:grad{i}'] = arrays[i].grad.asnumpy()
    return dict(op=op, attrs=attrs, inputs=len(inputs), grads=grads)


# -------------------------------------------------------------------------------------------------
# Blocks (tests/ops/test_attention.py and test_roi.py define the same ones)
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


class RegionHead(gluon.HybridBlock):
    """An R-CNN head: features, ROIAlign of the given rois, a dense layer per roi."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.Conv2D(4, 3, padding=1, in_channels=3)
            self.head = nn.Dense(5, in_units=4 * 2 * 2)

    def hybrid_forward(self, F, x, rois):
        pooled = F.contrib.ROIAlign(self.features(x), rois, pooled_size=(2, 2),
                                    spatial_scale=0.5, sample_ratio=2)
        return self.head(pooled)


BLOCKS = {
    'block_self_attention': (lambda: SelfAttention(8, 2), [(5, 2, 8)]),
    'block_encdec_attention': (lambda: EncoderDecoderAttention(6, 3), [(3, 2, 6), (4, 2, 6)]),
    'block_region_head': (lambda: RegionHead(), None),
}


def block_inputs(name):
    if name == 'block_region_head':
        return [wave((2, 3, 8, 10), 0.3),
                np.array([[0, 1.0, 2.0, 12.0, 9.0], [1, 3.5, 0.5, 18.0, 15.0],
                          [0, -2.0, 4.0, 6.0, 20.0]], np.float32)]
    return [wave(shape, 0.3 + i) for i, shape in enumerate(BLOCKS[name][1])]


def run_block(name, numbers):
    with mx.name.NameManager():
        block = BLOCKS[name][0]()
    block.initialize()
    params = block.collect_params()
    for i, (key, p) in enumerate(params.items()):
        values = (0.5 * wave(p.shape, i)).astype(np.float32)
        p.set_data(nd.array(values))
        numbers[f'{name}:param:{key[len(block.prefix):]}'] = values
    block.hybridize()
    inputs = block_inputs(name)
    arrays = [nd.array(x) for x in inputs]
    arrays[0].attach_grad()
    with autograd.record():
        out = block(*arrays)
    cot = wave(out.shape, 1.0)
    out.backward(nd.array(cot))
    for i, x in enumerate(inputs):
        numbers[f'{name}:in{i}'] = x
    numbers[f'{name}:out0'] = out.asnumpy()
    numbers[f'{name}:cot0'] = cot
    numbers[f'{name}:grad0'] = arrays[0].grad.asnumpy()
    for key, p in params.items():
        numbers[f'{name}:pgrad:{key[len(block.prefix):]}'] = p.grad().asnumpy()
    return dict(inputs=len(inputs), params=[k[len(block.prefix):] for k in params])


# -------------------------------------------------------------------------------------------------
# Symbols: arguments, outputs, shapes, JSON attributes; the functions' parameters
# -------------------------------------------------------------------------------------------------

SYMBOLS = [
    ('arange_like', dict(start=1, step=0.5, ctx='cpu(0)', axis=1), {'a': (3, 5)}),
    ('arange_like', dict(repeat=2), {'a': (2, 4)}),
    ('div_sqrt_dim', {}, {'a': (2, 3, 8)}),
    ('interleaved_matmul_selfatt_qk', dict(heads=4), {'a': (7, 2, 4 * 3 * 8)}),
    ('interleaved_matmul_selfatt_valatt', dict(heads=4),
     {'a': (7, 2, 4 * 3 * 8), 'b': (8, 7, 7)}),
    ('interleaved_matmul_encdec_qk', dict(heads=2), {'a': (5, 3, 16), 'b': (9, 3, 32)}),
    ('interleaved_matmul_encdec_valatt', dict(heads=2), {'a': (9, 3, 32), 'b': (6, 5, 9)}),
    ('ROIAlign', dict(pooled_size=(7, 7), spatial_scale=0.0625, sample_ratio=2),
     {'a': (2, 256, 38, 50), 'b': (128, 5)}),
    ('ROIAlign', dict(pooled_size=(3, 3), spatial_scale=0.125, position_sensitive=True,
                      aligned=True), {'a': (1, 18, 12, 12), 'b': (4, 5)}),
]

FUNCTIONS = ['arange_like', 'div_sqrt_dim', 'interleaved_matmul_selfatt_qk',
             'interleaved_matmul_selfatt_valatt', 'interleaved_matmul_encdec_qk',
             'interleaved_matmul_encdec_valatt', 'ROIAlign']


def symbol_facts():
    facts = []
    for op, attrs, shapes in SYMBOLS:
        s = getattr(sym.contrib, op)(*[sym.var(n) for n in shapes], name='node', **attrs)
        args, outs, _ = s.infer_shape(**shapes)
        node = json.loads(s.tojson())['nodes'][-1]
        facts.append(dict(op=op, attrs=attrs, shapes=shapes, arguments=s.list_arguments(),
                          outputs=s.list_outputs(), arg_shapes=args, out_shapes=outs,
                          json_op=node['op'], json_attrs=node.get('attrs', {})))
    return facts


def function_parameters():
    skip = {'out', 'name', 'attr', 'kwargs'}
    return {op: [p for p in inspect.signature(getattr(nd.contrib, op)).parameters
                 if p not in skip] for op in FUNCTIONS}


def main():
    numbers = {}
    facts = {'operators': {}, 'blocks': {}}
    for name, op, attrs, inputs, grads in attention_cases() + roi_cases():
        facts['operators'][name] = run_operator(name, op, attrs, inputs, grads, numbers)
    for name in BLOCKS:
        facts['blocks'][name] = run_block(name, numbers)
    facts['symbols'] = symbol_facts()
    facts['parameters'] = function_parameters()
    with open(os.path.join(HERE, 'attention-cases.json'), 'w') as f:
        json.dump(facts, f, indent=1, sort_keys=True)
        f.write('\n')
    np.savez_compressed(os.path.join(HERE, 'attention-numbers.npz'), **numbers)


if __name__ == '__main__':
    main()
