"""Operators of Transformer attention (GluonNLP's BERT and Transformer).

* ``_contrib_arange_like`` (alias ``_npx_arange_like``): positions shaped like an input;
* ``_contrib_div_sqrt_dim``: the input scaled by 1 / sqrt(its last dimension);
* the interleaved multi-head products ``_contrib_interleaved_matmul_selfatt_qk``,
  ``_contrib_interleaved_matmul_selfatt_valatt``, ``_contrib_interleaved_matmul_encdec_qk``,
  ``_contrib_interleaved_matmul_encdec_valatt``, and the backward operators their gradients
  are made of (``_backward_interleaved_matmul_*``).

The interleaved layouts are MXNet's. With H heads of size D:

* self-attention projections ``queries_keys_values`` (L, B, H * 3 * D): per head its query,
  key and value side by side (a reshape to (L, B, H, 3, D));
* encoder-decoder ``queries`` (Lq, B, H * D) and ``keys_values`` (Lk, B, H * 2 * D): per head
  its key then its value;
* attention maps (B * H, Lq, Lk): head h of sequence b in row ``b * H + h``;
* the attended values (Lq, B, H * D), heads side by side.

The query-key products are scaled by 1 / sqrt(D), as MXNet's kernels scale them (in float32,
from the float32 square root). MXNet's CPU runs these products in float32 only; here float64
computes in float64, float16 in float32.

Every product is bilinear, so the gradient of each backward operator is made of the forward
operators and the backward operator itself: derivatives of any order follow.
"""
import math

import numpy as np

from ..base import ShapeError
from .attrs import Float, Int, Str
from .contrib import _check_rank, _dim, _work_dtype
from .creation import _cast_scalar
from .registry import (BackwardNode, Params, ZEROS, add_gradients, merge_shape, normalize_axis,
                       register, same_dtype, zero_gradient)

__all__ = []


# -------------------------------------------------------------------------------------------------
# arange_like, div_sqrt_dim
# -------------------------------------------------------------------------------------------------

def _arange_like_check(attrs):
    if attrs.repeat < 1:
        raise ValueError(f'repeat must be positive, got {attrs.repeat}')
    # MXNet keeps ``ctx`` in the graph but leaves the output with its input (the context is
    # only read by operators without inputs): the parsed value must not move the output
    return Params(attrs, ctx='')


def _arange_like_shape(attrs, data):
    if attrs.axis is None:
        return data
    if data is None:
        return (0,)
    return (data[normalize_axis(attrs.axis, len(data))],)


@register('_contrib_arange_like', aliases=('_npx_arange_like',))
class arange_like:
    """Evenly spaced values shaped like ``data``: ``start + (i // repeat) * step`` for the
    i-th element in row-major order.

    ``data`` (any shape; only its shape and dtype are read) -> its shape, or ``(data.shape[axis],)``
    when ``axis`` is given, in ``data``'s dtype. Values are computed in that dtype, as in
    MXNet; for integer dtypes ``start`` and ``step`` are first truncated to integers. (MXNet's
    kernel also truncates them for float16, which it takes for an unsigned type; here float16
    keeps the fractions, as ``arange`` does.)
    ``ctx`` is kept for MXNet's graphs and ignored: the output lives with ``data``. No gradient
    reaches ``data`` (zeros).
    """
    inputs = ('data',)
    named_inputs = False
    backward_node = ZEROS
    attrs = dict(start=Float(0.0), step=Float(1.0), repeat=Int(1), ctx=Str(''), axis=Int(None))
    check = _arange_like_check
    gradient = zero_gradient

    def compute(xp, attrs, data):
        shape = _arange_like_shape(attrs, data.shape)
        dtype = data.dtype
        index = xp.arange(math.prod(shape), dtype=np.int64) // attrs.repeat
        if dtype.kind == 'f':
            values = index.astype(dtype) * dtype.type(attrs.step) + dtype.type(attrs.start)
        else:
            if dtype.kind == 'u':
                # MXNet goes through int64 for unsigned types (negative steps wrap around)
                start, step = int(attrs.start), int(attrs.step)
            else:
                start = int(_cast_scalar(attrs.start, dtype))
                step = int(_cast_scalar(attrs.step, dtype))
            values = (index * step + start).astype(dtype)
        return values.reshape(shape)

    def infer_shape(attrs, data):
        return [data], [_arange_like_shape(attrs, data)]


def _div_sqrt_dim_shape(attrs, data):
    if data is not None and not len(data):
        raise ShapeError('data must have at least one axis (its last dimension scales it)')
    return [data], [data]


@register('_contrib_div_sqrt_dim')
class div_sqrt_dim:
    """The input divided by the square root of its last dimension: ``data / sqrt(data.shape[-1])``.

    Same shape and dtype. The root is converted to the data's dtype first, as in MXNet, so
    integer data is divided (truncating toward zero) by the integer part of the root. Linear:
    the gradient is ``div_sqrt_dim`` of the output gradient.
    """
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0',))
    infer_shape = _div_sqrt_dim_shape

    def compute(xp, attrs, data):
        root = math.sqrt(data.shape[-1])
        if data.dtype.kind == 'f':
            return data / data.dtype.type(root)
        divisor = int(root)
        if not divisor:                      # an empty last axis: nothing to divide
            return data.copy()
        quotient = xp.abs(data) // divisor
        return xp.where(data < 0, -quotient, quotient).astype(data.dtype)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._contrib_div_sqrt_dim(ograds[0])]


# -------------------------------------------------------------------------------------------------
# The interleaved layouts
# -------------------------------------------------------------------------------------------------

_HEADS = dict(heads=Int())


def _heads_check(attrs):
    if attrs.heads < 1:
        raise ValueError(f'heads must be positive, got {attrs.heads}')


def _scale(head_dim, dtype):
    """1 / sqrt(head_dim) as MXNet's kernels compute it: from the float32 square root, in
    float32 (float64 data gets the exact value)."""
    if dtype == np.float64:
        return 1.0 / math.sqrt(head_dim)
    return np.float32(1.0 / float(np.sqrt(np.float32(head_dim))))


def _to_heads(xp, x, heads, parts, work):
    """(L, B, heads * parts * D) -> (parts, B * heads, L, D), in the ``work`` dtype."""
    length, batch, width = x.shape
    x = x.astype(work, copy=False).reshape(length, batch, heads, parts, width // heads // parts)
    return x.transpose(3, 1, 2, 0, 4).reshape(parts, batch * heads, length, -1)


def _from_heads(x, batch):
    """(parts, B * heads, L, D) -> (L, B, heads * parts * D): the inverse of ``_to_heads``."""
    parts, rows, length, size = x.shape
    x = x.reshape(parts, batch, rows // batch, length, size).transpose(3, 1, 2, 0, 4)
    return x.reshape(length, batch, -1)


def _first(*dims):
    """The first known (non-zero) of some partial dimensions, or 0."""
    return next((d for d in dims if d), 0)


def _width(width, parts, heads, what):
    """``width`` (0 when unknown) must hold ``heads`` heads of ``parts`` equal parts."""
    if width and width % (parts * heads):
        layout = f'heads * {parts} * head_dim' if parts > 1 else 'heads * head_dim'
        raise ShapeError(f'{what} has {width} features, not {layout} with heads={heads}')
    return width


def _sequences(rows, heads, what):
    """The batch size of attention maps with ``rows`` (= batch * heads) rows, 0 when unknown."""
    if rows and rows % heads:
        raise ShapeError(f'{what} has {rows} rows, not batch * heads with heads={heads}')
    return rows // heads


_QKV = 'queries_keys_values (seq_length, batch, heads * 3 * head_dim)'
_Q = 'queries (query_length, batch, heads * head_dim)'
_KV = 'keys_values (key_length, batch, heads * 2 * head_dim)'
_ATT = 'attention (batch * heads, query_length, key_length)'
_SELF_ATT = 'attention (batch * heads, seq_length, seq_length)'


def _selfatt_qk_shapes(attrs, qkv, out=None):
    _check_rank(qkv, 3, _QKV)
    _check_rank(out, 3, 'output (batch * heads, seq_length, seq_length)')
    h = attrs.heads
    length = _first(_dim(qkv, 0), _dim(out, 1), _dim(out, 2))
    batch = _first(_dim(qkv, 1), _sequences(_dim(out, 0), h, 'the output'))
    width = _width(_dim(qkv, 2), 3, h, 'queries_keys_values')
    return ([merge_shape(qkv, (length, batch, width), _QKV)],
            merge_shape(out, (batch * h, length, length), 'the output'))


def _selfatt_valatt_shapes(attrs, qkv, att, out=None):
    _check_rank(qkv, 3, _QKV)
    _check_rank(att, 3, _SELF_ATT)
    _check_rank(out, 3, 'output (seq_length, batch, heads * head_dim)')
    h = attrs.heads
    length = _first(_dim(qkv, 0), _dim(att, 1), _dim(att, 2), _dim(out, 0))
    batch = _first(_dim(qkv, 1), _sequences(_dim(att, 0), h, 'attention'), _dim(out, 1))
    width = _first(_width(_dim(qkv, 2), 3, h, 'queries_keys_values'),
                   3 * _width(_dim(out, 2), 1, h, 'the output'))
    return ([merge_shape(qkv, (length, batch, width), _QKV),
             merge_shape(att, (batch * h, length, length), _SELF_ATT)],
            merge_shape(out, (length, batch, width // 3), 'the output'))


def _encdec_qk_shapes(attrs, queries, keys_values, out=None):
    _check_rank(queries, 3, _Q)
    _check_rank(keys_values, 3, _KV)
    _check_rank(out, 3, 'output (batch * heads, query_length, key_length)')
    h = attrs.heads
    q_len = _first(_dim(queries, 0), _dim(out, 1))
    k_len = _first(_dim(keys_values, 0), _dim(out, 2))
    batch = _first(_dim(queries, 1), _dim(keys_values, 1),
                   _sequences(_dim(out, 0), h, 'the output'))
    embed = _first(_width(_dim(queries, 2), 1, h, 'queries'),
                   _width(_dim(keys_values, 2), 2, h, 'keys_values') // 2)
    return ([merge_shape(queries, (q_len, batch, embed), _Q),
             merge_shape(keys_values, (k_len, batch, 2 * embed), _KV)],
            merge_shape(out, (batch * h, q_len, k_len), 'the output'))


def _encdec_valatt_shapes(attrs, keys_values, att, out=None):
    _check_rank(keys_values, 3, _KV)
    _check_rank(att, 3, _ATT)
    _check_rank(out, 3, 'output (query_length, batch, heads * head_dim)')
    h = attrs.heads
    k_len = _first(_dim(keys_values, 0), _dim(att, 2))
    q_len = _first(_dim(att, 1), _dim(out, 0))
    batch = _first(_dim(keys_values, 1), _sequences(_dim(att, 0), h, 'attention'), _dim(out, 1))
    embed = _first(_width(_dim(keys_values, 2), 2, h, 'keys_values') // 2,
                   _width(_dim(out, 2), 1, h, 'the output'))
    return ([merge_shape(keys_values, (k_len, batch, 2 * embed), _KV),
             merge_shape(att, (batch * h, q_len, k_len), _ATT)],
            merge_shape(out, (q_len, batch, embed), 'the output'))


def _forward_infer(shapes):
    def infer_shape(attrs, *inputs):
        ins, out = shapes(attrs, *inputs)
        return ins, [out]
    return infer_shape


def _backward_infer(shapes):
    """A backward operator's shapes: ``ograd`` has the forward output's shape, the gradients
    the forward inputs' shapes."""
    def infer_shape(attrs, ograd, *inputs):
        ins, out = shapes(attrs, *inputs, out=ograd)
        return [out] + ins, ins
    return infer_shape


def _scores(xp, q, k, work):
    """The scaled query-key products ``q k^T / sqrt(D)`` of (B * H, L, D) queries and keys."""
    return xp.matmul(q, k.swapaxes(1, 2)) * _scale(q.shape[-1], work)


def _scores_backward(xp, ograd, q, k, work):
    """The gradients (of the queries, of the keys) of ``_scores`` for its output gradient."""
    grad = ograd.astype(work, copy=False)
    scale = _scale(q.shape[-1], work)
    return xp.matmul(grad, k) * scale, xp.matmul(grad.swapaxes(1, 2), q) * scale


def _same_dtype_outputs(count):
    def infer_type(attrs, *dtypes):
        ins, outs = same_dtype(attrs, *dtypes)
        return ins, outs * count
    return infer_type


# -------------------------------------------------------------------------------------------------
# Self-attention
# -------------------------------------------------------------------------------------------------

@register('_contrib_interleaved_matmul_selfatt_qk')
class interleaved_matmul_selfatt_qk:
    """Scaled query-key products of multi-head self-attention.

    ``queries_keys_values`` (L, B, H * 3 * D), ``heads`` = H -> (B * H, L, L): row ``b * H + h``
    holds ``q k^T / sqrt(D)`` of head h of sequence b (queries along the rows).
    """
    inputs = ('queries_keys_values',)
    attrs = _HEADS
    check = _heads_check
    infer_shape = _forward_infer(_selfatt_qk_shapes)

    def compute(xp, attrs, queries_keys_values):
        work = _work_dtype(queries_keys_values.dtype)
        q, k, _ = _to_heads(xp, queries_keys_values, attrs.heads, 3, work)
        return _scores(xp, q, k, work).astype(queries_keys_values.dtype, copy=False)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_interleaved_matmul_selfatt_qk(ograds[0], inputs[0], **attrs)]


def _queries_of(F, qkv, heads):
    """The queries of self-attention projections, in the encoder-decoder layout."""
    parts = F.reshape(qkv, shape=(0, 0, heads, 3, -1))
    return F.reshape(F.slice_axis(parts, axis=3, begin=0, end=1), shape=(0, 0, -1))


def _keys_values_of(F, qkv, heads):
    """The keys and values of self-attention projections, in the encoder-decoder layout."""
    parts = F.reshape(qkv, shape=(0, 0, heads, 3, -1))
    return F.reshape(F.slice_axis(parts, axis=3, begin=1, end=3), shape=(0, 0, -1))


@register('_backward_interleaved_matmul_selfatt_qk')
class _backward_interleaved_matmul_selfatt_qk:
    """The gradient of ``interleaved_matmul_selfatt_qk``: ``ograd`` (B * H, L, L) and
    ``queries_keys_values`` -> the gradient of ``queries_keys_values``: ``ograd k / sqrt(D)``
    for the queries, ``ograd^T q / sqrt(D)`` for the keys, zeros for the values."""
    inputs = ('ograd', 'queries_keys_values')
    attrs = _HEADS
    check = _heads_check
    infer_shape = _backward_infer(_selfatt_qk_shapes)

    def compute(xp, attrs, ograd, queries_keys_values):
        dtype = queries_keys_values.dtype
        work = _work_dtype(dtype)
        q, k, _ = _to_heads(xp, queries_keys_values, attrs.heads, 3, work)
        d_q, d_k = _scores_backward(xp, ograd, q, k, work)
        parts = xp.stack([d_q, d_k, xp.zeros_like(d_q)])
        return _from_heads(parts, queries_keys_values.shape[1]).astype(dtype, copy=False)

    def gradient(F, attrs, inputs, outputs, ograds):
        # <C, backward(G, P)> is bilinear in G and P: with b(X, Y) = X's queries . Y's keys
        # (scaled), d/dG = b(C, P) + b(P, C) and d/dP = backward(G, C)
        (grad, qkv), (cot,) = inputs, ograds
        if cot is None:
            return [None, None]
        heads = attrs.heads
        d_grad = (F._contrib_interleaved_matmul_encdec_qk(
            _queries_of(F, cot, heads), _keys_values_of(F, qkv, heads), heads=heads) +
            F._contrib_interleaved_matmul_encdec_qk(
                _queries_of(F, qkv, heads), _keys_values_of(F, cot, heads), heads=heads))
        return [d_grad, F._backward_interleaved_matmul_selfatt_qk(grad, cot, heads=heads)]


def _weighted_values(groups):
    """The compute of a ``*_valatt`` product: the values (the last of the ``groups`` packed
    per head) weighted by ``attention``, back in the interleaved (L, B, H * D) layout."""
    def compute(xp, attrs, packed, attention):
        dtype = packed.dtype
        work = _work_dtype(dtype)
        v = _to_heads(xp, packed, attrs.heads, groups, work)[groups - 1]
        out = xp.matmul(attention.astype(work, copy=False), v)
        return _from_heads(out[None], packed.shape[1]).astype(dtype, copy=False)
    return compute


def _through_backward(backward_name):
    """A gradient that is the registered backward operator ``backward_name`` (two inputs)."""
    def gradient(F, attrs, inputs, outputs, ograds):
        grads = getattr(F, backward_name)(ograds[0], *inputs, **attrs)
        return [grads[0], grads[1]]
    return gradient


@register('_contrib_interleaved_matmul_selfatt_valatt')
class interleaved_matmul_selfatt_valatt:
    """Attention-weighted values of multi-head self-attention.

    ``queries_keys_values`` (L, B, H * 3 * D), ``attention`` (B * H, L, L), ``heads`` = H ->
    (L, B, H * D): head h of sequence b is ``attention[b * H + h] @ v``.
    """
    inputs = ('queries_keys_values', 'attention')
    attrs = _HEADS
    check = _heads_check
    infer_shape = _forward_infer(_selfatt_valatt_shapes)

    compute = _weighted_values(groups=3)
    gradient = _through_backward('_backward_interleaved_matmul_selfatt_valatt')


def _bilinear_backward_gradient(forward, backward):
    """The gradient of the backward operator of a product ``forward(X, Y)`` bilinear in its
    two inputs: with ``G`` the output gradient and ``Cx``, ``Cy`` the cotangents of the two
    gradients, d/dG = forward(Cx, Y) + forward(X, Cy), d/dX = backward(G, X, Cy)[0] and
    d/dY = backward(G, Cx, Y)[1]."""
    def gradient(F, attrs, inputs, outputs, ograds):
        (grad, x, y), (cot_x, cot_y) = inputs, ograds
        run, back = getattr(F, forward), getattr(F, backward)
        heads = attrs.heads
        d_grad = add_gradients(None if cot_x is None else run(cot_x, y, heads=heads),
                      None if cot_y is None else run(x, cot_y, heads=heads))
        d_x = None if cot_y is None else back(grad, x, cot_y, heads=heads)[0]
        d_y = None if cot_x is None else back(grad, cot_x, y, heads=heads)[1]
        return [d_grad, d_x, d_y]
    return gradient


def _weighted_values_backward(groups):
    """The compute of a ``*_valatt`` product's backward operator: the gradient of the packed
    projections (``attention^T ograd`` for the values, the last of the ``groups`` per head;
    zeros for the others) and of ``attention`` (``ograd v^T``)."""
    def compute(xp, attrs, ograd, packed, attention):
        dtype = packed.dtype
        work = _work_dtype(dtype)
        v = _to_heads(xp, packed, attrs.heads, groups, work)[groups - 1]
        grad = _to_heads(xp, ograd, attrs.heads, 1, work)[0]
        d_v = xp.matmul(attention.astype(work, copy=False).swapaxes(1, 2), grad)
        d_att = xp.matmul(grad, v.swapaxes(1, 2))
        parts = xp.stack([xp.zeros_like(d_v)] * (groups - 1) + [d_v])
        return (_from_heads(parts, packed.shape[1]).astype(dtype, copy=False),
                d_att.astype(attention.dtype, copy=False))
    return compute


@register('_backward_interleaved_matmul_selfatt_valatt')
class _backward_interleaved_matmul_selfatt_valatt:
    """The gradients of ``interleaved_matmul_selfatt_valatt``: ``ograd`` (L, B, H * D),
    ``queries_keys_values`` and ``attention`` -> the gradient of ``queries_keys_values``
    (``attention^T ograd`` for the values, zeros for the queries and keys) and of ``attention``
    (``ograd v^T``)."""
    inputs = ('ograd', 'queries_keys_values', 'attention')
    attrs = _HEADS
    check = _heads_check
    num_outputs = 2
    infer_shape = _backward_infer(_selfatt_valatt_shapes)
    infer_type = _same_dtype_outputs(2)
    compute = _weighted_values_backward(groups=3)
    gradient = _bilinear_backward_gradient('_contrib_interleaved_matmul_selfatt_valatt',
                                           '_backward_interleaved_matmul_selfatt_valatt')


# -------------------------------------------------------------------------------------------------
# Encoder-decoder attention
# -------------------------------------------------------------------------------------------------

@register('_contrib_interleaved_matmul_encdec_qk')
class interleaved_matmul_encdec_qk:
    """Scaled query-key products of multi-head encoder-decoder attention.

    ``queries`` (Lq, B, H * D), ``keys_values`` (Lk, B, H * 2 * D), ``heads`` = H ->
    (B * H, Lq, Lk): row ``b * H + h`` holds ``q k^T / sqrt(D)`` of head h of sequence b.
    """
    inputs = ('queries', 'keys_values')
    attrs = _HEADS
    check = _heads_check
    infer_shape = _forward_infer(_encdec_qk_shapes)

    def compute(xp, attrs, queries, keys_values):
        work = _work_dtype(queries.dtype)
        q = _to_heads(xp, queries, attrs.heads, 1, work)[0]
        k = _to_heads(xp, keys_values, attrs.heads, 2, work)[0]
        return _scores(xp, q, k, work).astype(queries.dtype, copy=False)

    gradient = _through_backward('_backward_interleaved_matmul_encdec_qk')


@register('_backward_interleaved_matmul_encdec_qk')
class _backward_interleaved_matmul_encdec_qk:
    """The gradients of ``interleaved_matmul_encdec_qk``: ``ograd`` (B * H, Lq, Lk),
    ``queries`` and ``keys_values`` -> the gradient of ``queries`` (``ograd k / sqrt(D)``) and
    of ``keys_values`` (``ograd^T q / sqrt(D)`` for the keys, zeros for the values)."""
    inputs = ('ograd', 'queries', 'keys_values')
    attrs = _HEADS
    check = _heads_check
    num_outputs = 2
    infer_shape = _backward_infer(_encdec_qk_shapes)
    infer_type = _same_dtype_outputs(2)
    gradient = _bilinear_backward_gradient('_contrib_interleaved_matmul_encdec_qk',
                                           '_backward_interleaved_matmul_encdec_qk')

    def compute(xp, attrs, ograd, queries, keys_values):
        work = _work_dtype(queries.dtype)
        batch = queries.shape[1]
        q = _to_heads(xp, queries, attrs.heads, 1, work)[0]
        k = _to_heads(xp, keys_values, attrs.heads, 2, work)[0]
        d_q, d_k = _scores_backward(xp, ograd, q, k, work)
        d_kv = xp.stack([d_k, xp.zeros_like(d_k)])
        return (_from_heads(d_q[None], batch).astype(queries.dtype, copy=False),
                _from_heads(d_kv, batch).astype(keys_values.dtype, copy=False))


@register('_contrib_interleaved_matmul_encdec_valatt')
class interleaved_matmul_encdec_valatt:
    """Attention-weighted values of multi-head encoder-decoder attention.

    ``keys_values`` (Lk, B, H * 2 * D), ``attention`` (B * H, Lq, Lk), ``heads`` = H ->
    (Lq, B, H * D): head h of sequence b is ``attention[b * H + h] @ v``.
    """
    inputs = ('keys_values', 'attention')
    attrs = _HEADS
    check = _heads_check
    infer_shape = _forward_infer(_encdec_valatt_shapes)

    compute = _weighted_values(groups=2)
    gradient = _through_backward('_backward_interleaved_matmul_encdec_valatt')


@register('_backward_interleaved_matmul_encdec_valatt')
class _backward_interleaved_matmul_encdec_valatt:
    """The gradients of ``interleaved_matmul_encdec_valatt``: ``ograd`` (Lq, B, H * D),
    ``keys_values`` and ``attention`` -> the gradient of ``keys_values`` (zeros for the keys,
    ``attention^T ograd`` for the values) and of ``attention`` (``ograd v^T``)."""
    inputs = ('ograd', 'keys_values', 'attention')
    attrs = _HEADS
    check = _heads_check
    num_outputs = 2
    infer_shape = _backward_infer(_encdec_valatt_shapes)
    infer_type = _same_dtype_outputs(2)
    compute = _weighted_values_backward(groups=2)
    gradient = _bilinear_backward_gradient('_contrib_interleaved_matmul_encdec_valatt',
                                           '_backward_interleaved_matmul_encdec_valatt')
