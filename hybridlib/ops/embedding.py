"""Embedding and its weight gradient ``_backward_Embedding`` (MXNet's backward node: the rows
of ``ograd`` summed by index; its gradient is ``Embedding`` again).

Indices may be of any dtype; as in MXNet 1.9.1 they are truncated toward zero and clipped to
``[0, input_dim-1]``.
"""
from ..base import DEFAULT_DTYPE
from .attrs import Bool, Count, DType
from .gather import _VALUE_DTYPES, _check_dtype, _gradient_type, _int_index, _scatter_add
from .registry import BackwardNode, merge_shape, register

__all__ = []


def _embedding_check(attrs):
    if attrs.input_dim <= 0 or attrs.output_dim <= 0:
        raise ValueError(f'input_dim and output_dim must be positive, got {attrs.input_dim} '
                         f'and {attrs.output_dim}')
    _check_dtype(attrs.dtype, _VALUE_DTYPES)


_EMBEDDING_ATTRS = dict(input_dim=Count(), output_dim=Count(), dtype=DType(DEFAULT_DTYPE),
                        sparse_grad=Bool(False))


def _embedding_rows(xp, attrs, data):
    return xp.clip(_int_index(data), 0, attrs.input_dim - 1)


@register('Embedding')
class Embedding:
    """Rows of ``weight`` at the indices in ``data``.

    ``data`` (any shape and dtype, truncated and clipped to [0, input_dim-1]), ``weight``
    (input_dim, output_dim) -> ``data.shape + (output_dim,)`` in ``weight``'s dtype (``dtype``
    when unknown). The weight's gradient sums rows (``_backward_Embedding``); ``data`` gets
    none, as in MXNet. ``sparse_grad`` is accepted; the gradient is always dense.
    """
    inputs = ('data', 'weight')
    backward_node = BackwardNode(('ograd0', 'in0'))
    attrs = _EMBEDDING_ATTRS
    check = _embedding_check

    def compute(xp, attrs, data, weight):
        return xp.take(weight, _embedding_rows(xp, attrs, data), axis=0)

    def infer_shape(attrs, data, weight):
        weight = merge_shape(weight, (attrs.input_dim, attrs.output_dim), 'weight')
        out = None if data is None else tuple(data) + (attrs.output_dim,)
        return [data, weight], [out]

    def infer_type(attrs, data, weight):
        weight = weight if weight is not None else attrs.dtype
        return [data, weight], [weight]

    def gradient(F, attrs, inputs, outputs, ograds):
        data = inputs[0]
        return [None, F._backward_Embedding(ograds[0], data, input_dim=attrs.input_dim,
                                            output_dim=attrs.output_dim, dtype=attrs.dtype,
                                            sparse_grad=attrs.sparse_grad)]


@register('_backward_Embedding')
class _backward_Embedding:
    """The weight gradient of ``Embedding``: the rows of ``ograd`` summed by index.

    ``ograd`` (``data.shape + (output_dim,)``), ``data`` (the indices) ->
    (input_dim, output_dim) in ``ograd``'s dtype.
    """
    inputs = ('ograd', 'data')
    attrs = _EMBEDDING_ATTRS
    check = _embedding_check

    def compute(xp, attrs, ograd, data):
        out = xp.zeros((attrs.input_dim, attrs.output_dim), dtype=ograd.dtype)
        rows = _embedding_rows(xp, attrs, data).reshape(-1)
        _scatter_add(xp, out, rows, ograd.reshape(rows.size, attrs.output_dim))
        return out

    def infer_shape(attrs, ograd, data):
        if data is not None:
            ograd = merge_shape(ograd, tuple(data) + (attrs.output_dim,), 'ograd')
        return [ograd, data], [(attrs.input_dim, attrs.output_dim)]

    infer_type = _gradient_type

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F.Embedding(inputs[1], ograds[0], input_dim=attrs.input_dim,
                            output_dim=attrs.output_dim, dtype=attrs.dtype,
                            sparse_grad=attrs.sparse_grad), None]
