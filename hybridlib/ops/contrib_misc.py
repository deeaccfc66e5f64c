"""Contrib operators outside detection, and the Python functions of ``nd.contrib``/``sym.contrib``.

Operators (MXNet 1.9.1's ``_contrib_X`` names, so they appear as ``nd.contrib.X``):

* normalisation: ``SyncBatchNorm`` (on one device BatchNorm over axis 1; its hidden ``var``
  output is the variance, not BatchNorm's inverse standard deviation) and
  ``BatchNormWithReLU`` (BatchNorm then ReLU, with MXNet's four outputs, the hidden fourth
  being the ReLU mask; the gradient masks the output gradient where the output is zero, then
  goes through BatchNorm's). Both reuse BatchNorm's definition in ``norm.py``.
* indexing: ``SparseEmbedding`` (Embedding; the weight gradient is dense), ``boolean_mask``
  (its output length depends on the mask's values), ``index_array``, ``index_copy``.
* ``count_sketch``, ``fft``, ``ifft`` (MXNet runs these on GPUs only; here everywhere). fft
  writes ``[re0, im0, re1, im1, ...]`` along the last axis; ifft reads that layout and returns
  the real part of the *unnormalised* inverse transform, so ``ifft(fft(x)) = n * x``. Each is
  the other's gradient, as in MXNet.
* ``hawkesll``: log likelihood of marked Hawkes processes. Its gradient is MXNet's: only the
  log likelihood's gradient reaches ``lda``, ``alpha``, ``beta``; the ``out_state`` output and
  the ``state`` input pass no gradient.
* elementwise: ``quadratic``, ``gradientmultiplier`` (identity forward, scaled gradient),
  ``round_ste`` and ``sign_ste`` (straight-through: the gradient passes unchanged),
  ``allclose`` (one uint8 of shape ``()``).
* the backward operators MXNet exposes (``_contrib_backward_quadratic``,
  ``_contrib_backward_gradientmultiplier``, ``_contrib_backward_index_copy``,
  ``_contrib_backward_hawkesll``) are the operators these gradients run, and
  ``_backward_contrib_boolean_mask`` is boolean_mask's.

Python functions (through ``frontend.PYTHON_FUNCTIONS``, in both frontends):
``rand_zipfian``, and ``isinf``, ``isfinite``, ``isnan`` (NDArray-only in MXNet; here they also
work on Symbols). The control flow of ``nd.contrib`` (``foreach``, ``while_loop``, ``cond``) is
in ``control_flow.py``.
"""
import math

import numpy as np

from ..base import DTypeError, MXNetAssertionError, MXNetError, ShapeError
from ..context import current_context
from .attrs import Bool, Float, Int, Shape, Str
from .contrib import _exp, _work_dtype
from .control_flow import _frontend_is_symbol, _is_symbol
from .creation import _no_gradient
from .elemwise import _round_half_away
from .embedding import Embedding as _EMBEDDING
from .frontend import PYTHON_FUNCTIONS
from .norm import BatchNorm as _BATCH_NORM
from .registry import (BackwardNode, add_gradients, merge_shape, normalize_axis, register,
                       same_dtype, zero_gradient)

__all__ = []


# -------------------------------------------------------------------------------------------------
# SyncBatchNorm, BatchNormWithReLU: BatchNorm's definition, reused
# -------------------------------------------------------------------------------------------------

_SYNC_BN_ATTRS = dict(eps=Float(1e-3), momentum=Float(0.9), fix_gamma=Bool(True),
                      use_global_stats=Bool(False), output_mean_var=Bool(False), ndev=Int(1),
                      key=Str())


def _batch_norm_params(attrs):
    """BatchNorm's parsed attributes for a SyncBatchNorm call (channel axis 1)."""
    return _BATCH_NORM.parse_attrs({k: attrs[k] for k in ('eps', 'momentum', 'fix_gamma',
                                                          'use_global_stats', 'output_mean_var')})


def _bn_visible(attrs):
    return 3 if attrs.output_mean_var else 1


@register('_contrib_SyncBatchNorm')
class _contrib_SyncBatchNorm:
    """Batch normalisation synchronised over ``ndev`` devices under ``key``; on one device,
    BatchNorm over axis 1.

    ``data`` (N, C, ...); ``gamma``, ``beta``, ``moving_mean``, ``moving_var`` (C,) ->
    ``output`` like ``data``, hidden ``mean`` (C,) and ``var`` (C,): the (biased) variance of
    the statistics used, where BatchNorm hides the inverse standard deviation. The moving
    statistics update in training mode as BatchNorm's do. ``ndev`` and ``key`` name the
    devices to synchronise; hybridlib computes each device's statistics on its own batch.
    """
    var_inits = {'moving_mean': '["zero", {}]', 'moving_var': '["one", {}]'}
    inputs = ('data', 'gamma', 'beta', 'moving_mean', 'moving_var')
    aux = ('moving_mean', 'moving_var')
    attrs = _SYNC_BN_ATTRS
    num_outputs = 3
    num_visible_outputs = _bn_visible
    train_aware = True

    def output_names(attrs):
        return ['output', 'mean', 'var']

    def compute(xp, attrs, data, gamma, beta, moving_mean, moving_var, is_train=False):
        out, mean, invstd = _BATCH_NORM.compute(xp, _batch_norm_params(attrs), data, gamma,
                                                beta, moving_mean, moving_var, is_train=is_train)
        var = (1 / (invstd.astype(np.float64) ** 2) - attrs.eps).astype(invstd.dtype)
        return out, mean, var

    def infer_shape(attrs, *shapes):
        return _BATCH_NORM.infer_shape(_batch_norm_params(attrs), *shapes)

    def infer_type(attrs, *dtypes):
        return _BATCH_NORM.infer_type(_batch_norm_params(attrs), *dtypes)

    def gradient(F, attrs, inputs, outputs, ograds, is_train=False):
        return _BATCH_NORM.gradient(F, _batch_norm_params(attrs), inputs, outputs, ograds,
                                    is_train=is_train)


@register('_contrib_BatchNormWithReLU', aliases=('_npx_batch_norm_with_relu',))
class _contrib_BatchNormWithReLU:
    """BatchNorm followed by ReLU, as one operator (BatchNorm's inputs and attributes).

    Outputs: ``output``, hidden ``mean`` and ``var`` (BatchNorm's: the inverse standard
    deviation) and hidden ``workspace``, the ReLU mask (1 where the output is positive) in the
    parameters' dtype. The gradient is BatchNorm's, of the output gradient where the output is
    positive. (MXNet's CPU kernel, after a predict-mode forward, reads a mask that only a
    training-mode forward writes; here the mask is always the forward's output.)
    """
    var_inits = {'moving_mean': '["zero", {}]', 'moving_var': '["one", {}]'}
    inputs = _BATCH_NORM.inputs
    aux = _BATCH_NORM.aux
    attrs = _BATCH_NORM.attrs
    num_outputs = 4
    num_visible_outputs = _bn_visible
    train_aware = True

    def output_names(attrs):
        return ['output', 'mean', 'var', 'workspace']

    def compute(xp, attrs, data, gamma, beta, moving_mean, moving_var, is_train=False):
        out, mean, invstd = _BATCH_NORM.compute(xp, attrs, data, gamma, beta, moving_mean,
                                                moving_var, is_train=is_train)
        positive = out > 0
        return xp.maximum(out, 0), mean, invstd, positive.astype(mean.dtype)

    def infer_shape(attrs, *shapes):
        ins, (out, mean, var) = _BATCH_NORM.infer_shape(attrs, *shapes)
        return ins, [out, mean, var, out]

    def infer_type(attrs, *dtypes):
        ins, (out, mean, var) = _BATCH_NORM.infer_type(attrs, *dtypes)
        return ins, [out, mean, var, mean]

    def gradient(F, attrs, inputs, outputs, ograds, is_train=False):
        if ograds[0] is None:
            return [None] * 5
        masked = ograds[0] * (outputs[0] > 0)
        return _BATCH_NORM.gradient(F, attrs, inputs, outputs[:3], [masked] + list(ograds[1:3]),
                                    is_train=is_train)


# -------------------------------------------------------------------------------------------------
# SparseEmbedding, boolean_mask, index_array, index_copy
# -------------------------------------------------------------------------------------------------

@register('_contrib_SparseEmbedding')
class _contrib_SparseEmbedding:
    """Embedding under its sparse-gradient name (deprecated in MXNet for ``Embedding``): rows
    of ``weight`` at the indices in ``data``. hybridlib has no sparse storage: the weight's
    gradient is dense, with the same values.
    """
    inputs = _EMBEDDING.inputs
    attrs = _EMBEDDING.attrs
    check = _EMBEDDING.check
    compute = _EMBEDDING.compute
    infer_shape = _EMBEDDING.infer_shape
    infer_type = _EMBEDDING.infer_type
    gradient = _EMBEDDING.gradient


def _mask_check(data_shape, index_shape, axis):
    """The 1-d mask must have one value per slice of ``data`` along ``axis``."""
    if len(index_shape) != 1 or index_shape[0] != data_shape[axis]:
        raise ShapeError(f'boolean_mask: index must be 1-d with data.shape[{axis}] = '
                         f'{data_shape[axis]} values, got shape {tuple(index_shape)} for data '
                         f'{tuple(data_shape)}')


@register('_contrib_boolean_mask')
class _contrib_boolean_mask:
    """The slices of ``data`` along ``axis`` where ``index`` is non-zero.

    ``data`` (d0, ..., dn), ``index`` (d_axis,) of any dtype -> ``data``'s shape with
    ``axis`` shortened to the number of non-zero values (known only from the values: shape
    inference leaves it unknown, 0). MXNet supports ``axis=0`` only; any axis works here. The
    gradient scatters the output gradient back into zeros (``_backward_contrib_boolean_mask``).
    """
    inputs = ('data', 'index')
    attrs = dict(axis=Int(0))

    def compute(xp, attrs, data, index):
        axis = normalize_axis(attrs.axis, data.ndim, 'boolean_mask axis')
        _mask_check(data.shape, index.shape, axis)
        return xp.compress(index != 0, data, axis=axis)

    def infer_shape(attrs, data, index):
        out = None
        if data is not None:
            axis = normalize_axis(attrs.axis, len(data), 'boolean_mask axis')
            index = merge_shape(index, (data[axis],), 'index (one value per slice of data)')
            if index[0] and data[axis] == 0:
                data = data[:axis] + index + data[axis + 1:]
            out = data[:axis] + (0,) + data[axis + 1:]
        return [data, index], [out]

    def infer_type(attrs, data, index):
        return [data, index], [data]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_contrib_boolean_mask(ograds[0], inputs[0], inputs[1],
                                                 axis=attrs.axis), None]


@register('_backward_contrib_boolean_mask')
class _backward_contrib_boolean_mask:
    """The gradient of ``boolean_mask``: ``ograd``'s slices written where ``index`` is
    non-zero, zeros elsewhere, in ``data``'s shape (``data`` is read for its shape only)."""
    inputs = ('ograd', 'data', 'index')
    attrs = dict(axis=Int(0))

    def compute(xp, attrs, ograd, data, index):
        axis = normalize_axis(attrs.axis, data.ndim, 'boolean_mask axis')
        _mask_check(data.shape, index.shape, axis)
        out = xp.zeros(data.shape, dtype=ograd.dtype)
        where = [slice(None)] * data.ndim
        where[axis] = xp.nonzero(index)[0]
        out[tuple(where)] = ograd
        return out

    def infer_shape(attrs, ograd, data, index):
        if data is not None:
            axis = normalize_axis(attrs.axis, len(data), 'boolean_mask axis')
            index = merge_shape(index, (data[axis],), 'index (one value per slice of data)')
            if ograd is not None:
                ograd = merge_shape(ograd, data[:axis] + (ograd[axis],) + data[axis + 1:],
                                    'ograd')
        return [ograd, data, index], [data]

    def infer_type(attrs, ograd, data, index):
        return [ograd, data, index], [ograd if ograd is not None else data]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._contrib_boolean_mask(ograds[0], inputs[2], axis=attrs.axis), None, None]


@register('_contrib_index_array')
class _contrib_index_array:
    """The index of every element: ``out[i1, ..., in, j] = i_{axes[j]}``.

    ``data`` (d1, ..., dn) (read for its shape) -> (d1, ..., dn, m) int64, ``m`` the number of
    ``axes`` (default all n axes in order; negative axes count from the end). No gradient.
    """
    inputs = ('data',)
    attrs = dict(axes=Shape(None))
    gradient = zero_gradient

    def compute(xp, attrs, data):
        axes = _index_axes(attrs, data.ndim)
        grids = xp.indices(data.shape, dtype=np.int64)
        return xp.stack([grids[a] for a in axes], axis=-1) if axes else \
            xp.zeros(data.shape + (0,), np.int64)

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        return [data], [tuple(data) + (len(_index_axes(attrs, len(data))),)]

    def infer_type(attrs, data):
        return [data], [np.dtype(np.int64)]


def _index_axes(attrs, ndim):
    if attrs.axes is None:
        return tuple(range(ndim))
    return tuple(normalize_axis(a, ndim, 'index_array axes') for a in attrs.axes)


def _index_copy_shapes(old, index, new):
    """Merged (old, index, new) shapes of index_copy: ``new`` has ``len(index)`` rows shaped
    like ``old``'s."""
    if old is not None and new is not None:
        if len(old) != len(new):
            raise ShapeError(f'index_copy: old_tensor {tuple(old)} and new_tensor {tuple(new)} '
                             'must have the same number of dimensions')
        rows = merge_shape(old[1:], new[1:], 'index_copy: rows of old_tensor and new_tensor')
        old, new = old[:1] + rows, new[:1] + rows
    if index is not None and len(index) != 1:
        raise ShapeError(f'index_copy: index_vector must be 1-d, got {tuple(index)}')
    if new is not None:
        index = merge_shape(index, new[:1], 'index_copy: one index per row of new_tensor')
        new = index + tuple(new[1:])
    return old, index, new


def _copy_rows(index, rows):
    """``index_vector`` as row indices (floats truncate), which must lie in [0, rows)."""
    idx = index.astype(np.int64)
    if idx.size and bool(((idx < 0) | (idx >= rows)).any()):
        raise MXNetError(f'index_copy: index_vector holds {idx.tolist()}, outside the {rows} '
                         'rows of old_tensor')
    return idx


@register('_contrib_index_copy')
class _contrib_index_copy:
    """``old_tensor`` with row ``index_vector[i]`` replaced by row ``i`` of ``new_tensor``.

    ``old_tensor`` (M, ...), ``index_vector`` (n,) of any dtype (floats truncate),
    ``new_tensor`` (n, ...) -> (M, ...) in ``old_tensor``'s dtype. A repeated index keeps the
    last row copied to it. An index outside [0, M) raises (MXNet writes past the array). The
    gradient (``_contrib_backward_index_copy``) is the output gradient with the copied rows
    zeroed for ``old_tensor`` and its rows at the indices for ``new_tensor``.
    """
    inputs = ('old_tensor', 'index_vector', 'new_tensor')

    def compute(xp, attrs, old_tensor, index_vector, new_tensor):
        _index_copy_shapes(old_tensor.shape, index_vector.shape, new_tensor.shape)
        idx = _copy_rows(index_vector, old_tensor.shape[0])
        out = old_tensor.copy()
        out[idx] = new_tensor
        return out

    def infer_shape(attrs, old_tensor, index_vector, new_tensor):
        old, index, new = _index_copy_shapes(old_tensor, index_vector, new_tensor)
        return [old, index, new], [old]

    def infer_type(attrs, old_tensor, index_vector, new_tensor):
        dtype = old_tensor if old_tensor is not None else new_tensor
        if old_tensor is not None and new_tensor is not None and old_tensor != new_tensor:
            raise DTypeError(f'index_copy: new_tensor ({new_tensor.name}) must have the dtype '
                             f'of old_tensor ({old_tensor.name})')
        return [dtype, index_vector, dtype], [dtype]

    def gradient(F, attrs, inputs, outputs, ograds):
        grads = F._contrib_backward_index_copy(ograds[0], *inputs)
        return [grads[0], None, grads[2]]


@register('_contrib_backward_index_copy')
class _contrib_backward_index_copy:
    """The gradients of ``index_copy`` for the gradient ``ograd`` of its output:
    (``ograd`` with the rows at ``index_vector`` zeroed, zeros like ``index_vector``,
    ``ograd``'s rows at ``index_vector``). As MXNet, every row of ``new_tensor`` gets the
    gradient of the row it was copied to, even when a later row overwrote it.
    """
    inputs = ('ograd', 'old_tensor', 'index_vector', 'new_tensor')
    num_outputs = 3

    def compute(xp, attrs, ograd, old_tensor, index_vector, new_tensor):
        idx = _copy_rows(index_vector, ograd.shape[0])
        d_old = ograd.copy()
        d_old[idx] = 0
        return d_old, xp.zeros_like(index_vector), ograd[idx]

    def infer_shape(attrs, ograd, old_tensor, index_vector, new_tensor):
        old = merge_shape(ograd, old_tensor, 'ograd and old_tensor')
        old, index, new = _index_copy_shapes(old, index_vector, new_tensor)
        return [old, old, index, new], [old, index, new]

    def infer_type(attrs, ograd, old_tensor, index_vector, new_tensor):
        dtype = ograd if ograd is not None else old_tensor
        return [dtype, dtype, index_vector, dtype], [dtype, index_vector, dtype]

    def gradient(F, attrs, inputs, outputs, ograds):
        ograd, old, index, new = inputs
        u, _, v = ograds
        d_ograd = None
        if u is not None:
            d_ograd = F._contrib_backward_index_copy(u, old, index, new)[0]
        if v is not None:
            d_ograd = add_gradients(d_ograd, F._backward_take(v, index, old, axis=0))
        return [d_ograd, None, None, None]


# -------------------------------------------------------------------------------------------------
# count_sketch, fft, ifft
# -------------------------------------------------------------------------------------------------

def _sketch_hash_shape(shape, d, name):
    """The shape (1, d) of ``h`` or ``s`` from its partial ``shape`` and ``d`` (0: unknown)."""
    if shape is None:
        return (1, d) if d else None
    if len(shape) != 2 or shape[0] not in (0, 1) or (d and shape[1] not in (0, d)):
        size = d or 'data.shape[-1]'
        raise ShapeError(f'count_sketch: {name} must have shape (1, {size}), got {tuple(shape)}')
    return (1, shape[1] or d)


@register('_contrib_count_sketch')
class _contrib_count_sketch:
    """Count sketch of the last axis: ``out[..., h[j]] += data[..., j] * s[j]``.

    ``data`` (..., d) with at least 2 axes (MXNet: 2 or 4), ``h`` (1, d) (indices in
    [0, out_dim), as floats), ``s`` (1, d) (signs, +1 or -1), all one dtype -> (..., out_dim).
    ``processing_batch_size`` only batches MXNet's GPU kernel. The gradient goes to ``data``
    only: ``ograd[..., h[j]] * s[j]``.
    """
    inputs = ('data', 'h', 's')
    attrs = dict(out_dim=Int(), processing_batch_size=Int(32))
    infer_type = same_dtype

    def compute(xp, attrs, data, h, s):
        d = data.shape[-1]
        _sketch_hash_shape(h.shape, d, 'h')
        _sketch_hash_shape(s.shape, d, 's')
        cols = h.reshape(-1).astype(np.int64)
        if cols.size and bool(((cols < 0) | (cols >= attrs.out_dim)).any()):
            raise MXNetError(f'count_sketch: h holds indices outside [0, out_dim={attrs.out_dim})')
        sketch = xp.zeros((d, attrs.out_dim), dtype=data.dtype)
        sketch[xp.arange(d), cols] = s.reshape(-1)
        return data @ sketch

    def infer_shape(attrs, data, h, s):
        d = 0 if data is None else data[-1]
        if data is not None and len(data) < 2:
            raise ShapeError(f'count_sketch: data must have at least 2 axes, got {tuple(data)}')
        h = _sketch_hash_shape(h, d, 'h')
        s = _sketch_hash_shape(s, d, 's')
        d = d or (h[1] if h is not None else 0) or (s[1] if s is not None else 0)
        if data is not None and not data[-1] and d:
            data = tuple(data[:-1]) + (d,)
        out = None if data is None else tuple(data[:-1]) + (attrs.out_dim,)
        return [data, _sketch_hash_shape(h, d, 'h'), _sketch_hash_shape(s, d, 's')], [out]

    def gradient(F, attrs, inputs, outputs, ograds):
        _, h, s = inputs
        picked = F.take(ograds[0], F.reshape(h, shape=(-1,)), axis=-1)
        return [F.broadcast_mul(picked, F.reshape(s, shape=(-1,))), None, None]


def _fft_check(shape, name):
    if len(shape) < 1:
        raise ShapeError(f'{name}: data must have at least 1 axis, got {tuple(shape)}')


@register('_contrib_fft')
class _contrib_fft:
    """The discrete Fourier transform of the last axis, of real data.

    ``data`` (..., d) -> (..., 2d): ``[re0, im0, re1, im1, ...]`` of
    ``X_k = sum_j x_j exp(-2 pi i j k / d)``. ``compute_size`` only batches MXNet's GPU
    kernel. The gradient is ``ifft`` of the output gradient (exact).
    """
    inputs = ('data',)
    attrs = dict(compute_size=Int(128))

    def compute(xp, attrs, data):
        spectrum = xp.fft.fft(data.astype(np.float64), axis=-1)
        out = xp.stack([spectrum.real, spectrum.imag], axis=-1)
        return out.reshape(data.shape[:-1] + (2 * data.shape[-1],)).astype(data.dtype)

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        _fft_check(data, 'fft')
        return [data], [tuple(data[:-1]) + (2 * data[-1],)]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._contrib_ifft(ograds[0], compute_size=attrs.compute_size)]


@register('_contrib_ifft')
class _contrib_ifft:
    """The real part of the unnormalised inverse Fourier transform of the last axis.

    ``data`` (..., 2d) in fft's ``[re0, im0, ...]`` layout -> (..., d):
    ``Re sum_k X_k exp(2 pi i j k / d)``, not divided by ``d`` (as MXNet). The gradient is
    ``fft`` of the output gradient (exact).
    """
    inputs = ('data',)
    attrs = dict(compute_size=Int(128))

    def compute(xp, attrs, data):
        if data.shape[-1] % 2:
            raise ShapeError(f'ifft: the last axis holds (re, im) pairs and must be even, got '
                             f'shape {data.shape}')
        pairs = data.astype(np.float64).reshape(data.shape[:-1] + (-1, 2))
        n = pairs.shape[-2]
        signal = xp.fft.ifft(pairs[..., 0] + 1j * pairs[..., 1], axis=-1) * n
        return signal.real.astype(data.dtype)

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None]
        _fft_check(data, 'ifft')
        if data[-1] % 2:
            raise ShapeError(f'ifft: the last axis holds (re, im) pairs and must be even, got '
                             f'shape {tuple(data)}')
        return [data], [tuple(data[:-1]) + (data[-1] // 2,)]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._contrib_fft(ograds[0], compute_size=attrs.compute_size)]


# -------------------------------------------------------------------------------------------------
# hawkesll
# -------------------------------------------------------------------------------------------------

_HAWKES_INPUTS = ('lda', 'alpha', 'beta', 'state', 'lags', 'marks', 'valid_length', 'max_time')


_HAWKES_GRAD_INPUTS = ('ograd', 'ograd_state') + _HAWKES_INPUTS
_HAWKES_LAYOUT = dict(lda='NK', alpha='K', beta='K', state='NK', lags='NT', marks='NT',
                      valid_length='N', max_time='N', ograd='N', ograd_state='NK')


def _hawkes_shapes(given):
    """The sizes N (samples), K (marks) and T (points) from the shapes ``{input: shape}``,
    and each input's shape from them."""
    dims = {'N': 0, 'K': 0, 'T': 0}
    layout = _HAWKES_LAYOUT
    for name, shape in given.items():
        if shape is not None and len(shape) != len(layout[name]):
            raise ShapeError(f'hawkesll: {name} must be {len(layout[name])}-d, got '
                             f'{tuple(shape)}')
    for name, shape in given.items():
        for letter, size in zip(layout[name], shape or ()):
            if size and dims[letter] and size != dims[letter]:
                raise ShapeError(f'hawkesll: {name} {tuple(shape)} disagrees with the other '
                                 f'inputs on {letter} = {dims[letter]}')
            dims[letter] = dims[letter] or size
    return [tuple(dims[c] for c in layout[n]) for n in given], dims


def _hawkes_type(dtypes, what):
    """(input dtypes, value dtype): marks int32, everything else the dtype of ``lda``."""
    values = [d for n, d in zip(_HAWKES_INPUTS, dtypes) if n != 'marks' and d is not None]
    dtype = values[0] if values else None
    for name, d in zip(_HAWKES_INPUTS, dtypes):
        want = np.dtype(np.int32) if name == 'marks' else dtype
        if d is not None and d != want:
            raise DTypeError(f'{what}: {name} must be {want.name}, got {d.name}')
    return [np.dtype(np.int32) if n == 'marks' else dtype for n in _HAWKES_INPUTS], dtype


def _hawkes_points(xp, lags, marks, valid_length, num_marks):
    """The number of points (columns of ``lags``) a sweep visits: up to the longest
    ``valid_length``. Raises on a mark outside [0, num_marks)."""
    if marks.size and bool(((marks < 0) | (marks >= num_marks)).any()):
        raise MXNetError(f'hawkesll: marks must be in [0, {num_marks}), got '
                         f'{marks.min().item()}..{marks.max().item()}')
    steps = int(xp.ceil(valid_length.max()).item()) if valid_length.size else 0
    return min(max(steps, 0), lags.shape[1])


def _hawkes_forward(xp, mu, alpha, beta, state, lags, marks, valid_length, max_time):
    """(log likelihood (N,), the state at ``max_time`` (N, K))."""
    n, k = mu.shape
    rows = xp.arange(n)
    dtype = mu.dtype
    last = xp.zeros((n, k), dtype)
    state = state.copy()
    t = xp.zeros(n, dtype)
    ll = xp.zeros(n, dtype)
    for j in range(_hawkes_points(xp, lags, marks, valid_length, k)):
        live = j < valid_length
        c = marks[:, j].astype(np.int64)
        t = xp.where(live, t + lags[:, j], t)
        d = t - last[rows, c]
        ed = _exp(xp, -beta[c] * d)
        s = state[rows, c]
        lda = mu[rows, c] + alpha[c] * beta[c] * s * ed
        comp = mu[rows, c] * d + alpha[c] * s * (1 - ed)
        logged = xp.log(xp.where(live, lda, 1).astype(np.float64)).astype(dtype)
        ll = xp.where(live, ll + (logged - comp), ll)
        state[rows, c] = xp.where(live, 1 + s * ed, s)
        last[rows, c] = xp.where(live, t, last[rows, c])
    d = max_time[:, None] - last
    ed = _exp(xp, -beta * d)
    remaining = mu * d + alpha * state * (1 - ed)
    return ll - remaining.sum(axis=1), ed * state


def _hawkes_backward(xp, ograd, mu, alpha, beta, state, lags, marks, valid_length, max_time):
    """MXNet's gradients of the log likelihood: (d lda (N, K), d alpha (K,), d beta (K,))."""
    n, k = mu.shape
    rows = xp.arange(n)
    dtype = mu.dtype
    last = xp.zeros((n, k), dtype)
    phi = state.copy()                   # the state, and its derivative in beta
    dphi = xp.zeros((n, k), dtype)
    g_mu, g_alpha, g_beta = (xp.zeros((n, k), dtype) for _ in range(3))
    t = xp.zeros(n, dtype)
    for j in range(_hawkes_points(xp, lags, marks, valid_length, k)):
        live = j < valid_length
        c = marks[:, j].astype(np.int64)
        t = xp.where(live, t + lags[:, j], t)
        d = t - last[rows, c]
        a, b = alpha[c], beta[c]
        ed = _exp(xp, -b * d)
        s, ds = phi[rows, c], dphi[rows, c]
        lda = xp.where(live, mu[rows, c] + a * b * s * ed, 1)
        g_mu[rows, c] += xp.where(live, 1 / lda - d, 0)
        g_alpha[rows, c] += xp.where(live, b * s * ed / lda - s * (1 - ed), 0)
        g_beta[rows, c] += xp.where(live, a * ed * (s * (1 - b * d) + b * ds) / lda
                                    - a * (ds * (1 - ed) + s * d * ed), 0)
        dphi[rows, c] = xp.where(live, ed * (-d * s + ds), ds)
        phi[rows, c] = xp.where(live, 1 + s * ed, s)
        last[rows, c] = xp.where(live, t, last[rows, c])
    d = max_time[:, None] - last
    ed = _exp(xp, -beta * d)
    g = ograd[:, None]
    g_mu = g * (g_mu - d)
    g_alpha = g * (g_alpha - phi * (1 - ed))
    g_beta = g * (g_beta - alpha * (dphi * (1 - ed) + phi * d * ed))
    return g_mu, g_alpha.sum(axis=0), g_beta.sum(axis=0)


@register('_contrib_hawkesll')
class _contrib_hawkesll:
    """Log likelihood of K independent univariate Hawkes processes per sample, with intensity
    ``lda_k + alpha_k * sum_{t_i < t, mark_i = k} beta_k exp(-beta_k (t - t_i))``.

    ``lda`` (N, K) background intensities, ``alpha`` (K,) branching ratios, ``beta`` (K,) decay
    rates, ``state`` (N, K) the memory ``sum_i exp(-beta_k (0 - t_i))`` of earlier points,
    ``lags`` (N, T) interarrival times and ``marks`` (N, T) (int32) of the points, of which the
    first ``valid_length`` (N,) count, observed on (0, ``max_time``] (N,) -> the log
    likelihood (N,) and the state at ``max_time`` (N, K), in ``lda``'s dtype.

    The gradient is MXNet's: the log likelihood's reaches ``lda``, ``alpha`` and ``beta``
    (``_contrib_backward_hawkesll``); ``out_state``'s and the one to ``state`` are dropped.
    """
    inputs = _HAWKES_INPUTS
    num_outputs = 2

    def output_names(attrs):
        return ['output', 'out_state']

    def compute(xp, attrs, lda, alpha, beta, state, lags, marks, valid_length, max_time):
        return _hawkes_forward(xp, lda, alpha, beta, state, lags, marks, valid_length,
                               max_time)

    def infer_shape(attrs, *shapes):
        ins, dims = _hawkes_shapes(dict(zip(_HAWKES_INPUTS, shapes)))
        return ins, [(dims['N'],), (dims['N'], dims['K'])]

    def infer_type(attrs, *dtypes):
        ins, dtype = _hawkes_type(dtypes, 'hawkesll')
        return ins, [dtype, dtype]

    def gradient(F, attrs, inputs, outputs, ograds):
        if ograds[0] is None:
            return [None] * 8
        state_grad = ograds[1] if ograds[1] is not None else F.zeros_like(outputs[1])
        grads = F._contrib_backward_hawkesll(ograds[0], state_grad, *inputs)
        return [grads[0], grads[1], grads[2]] + [None] * 5


@register('_contrib_backward_hawkesll')
class _contrib_backward_hawkesll:
    """The gradients of ``hawkesll`` for the gradients (``ograd``, ``ograd_state``) of its
    outputs, one per input: d ``lda``, d ``alpha``, d ``beta`` from the log likelihood's
    gradient, zeros for the rest (``ograd_state`` is read and ignored, as MXNet does). Not
    differentiable, as in MXNet.
    """
    inputs = _HAWKES_GRAD_INPUTS
    num_outputs = 8
    gradient = _no_gradient('_contrib_backward_hawkesll')

    def compute(xp, attrs, ograd, ograd_state, lda, alpha, beta, state, lags, marks,
                valid_length, max_time):
        g_lda, g_alpha, g_beta = _hawkes_backward(xp, ograd, lda, alpha, beta, state, lags,
                                                  marks, valid_length, max_time)
        rest = [xp.zeros_like(v) for v in (state, lags, marks, valid_length, max_time)]
        return (g_lda, g_alpha, g_beta, *rest)

    def infer_shape(attrs, *shapes):
        ins, _ = _hawkes_shapes(dict(zip(_HAWKES_GRAD_INPUTS, shapes)))
        return ins, ins[2:]

    def infer_type(attrs, ograd, ograd_state, *dtypes):
        ins, dtype = _hawkes_type(dtypes, 'backward_hawkesll')
        dtype = dtype or ograd or ograd_state
        ins = [np.dtype(np.int32) if n == 'marks' else dtype for n in _HAWKES_INPUTS]
        return [dtype, dtype] + ins, ins


# -------------------------------------------------------------------------------------------------
# Elementwise: quadratic, gradientmultiplier, round_ste, sign_ste, allclose
# -------------------------------------------------------------------------------------------------

_QUADRATIC_ATTRS = dict(a=Float(0), b=Float(0), c=Float(0))


def _float_work(x):
    """``x`` in the dtype MXNet's float parameters meet it in: float64 stays, the rest is
    float32 (integer results truncate back)."""
    return x.astype(_work_dtype(x.dtype), copy=False)


def _param(value, x):
    """A float attribute in the work dtype of ``x``."""
    return _work_dtype(x.dtype).type(value)


@register('_contrib_quadratic')
class _contrib_quadratic:
    """``a * data**2 + b * data + c``, elementwise, in ``data``'s dtype (integer data: computed
    in float32 and truncated, as MXNet). The gradient is ``(2 a data + b) * ograd``
    (``_contrib_backward_quadratic``).
    """
    inputs = ('data',)
    attrs = _QUADRATIC_ATTRS
    inplace = ((0, 0),)

    def compute(xp, attrs, data):
        x = _float_work(data)
        out = _param(attrs.a, x) * x * x + _param(attrs.b, x) * x + _param(attrs.c, x)
        return out.astype(data.dtype, copy=False)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._contrib_backward_quadratic(ograds[0], inputs[0], a=attrs.a, b=attrs.b,
                                              c=attrs.c)]


@register('_contrib_backward_quadratic')
class _contrib_backward_quadratic:
    """The gradient of ``quadratic``: ``ograd * (2 a data + b)``."""
    inputs = ('ograd', 'data')
    attrs = _QUADRATIC_ATTRS

    def compute(xp, attrs, ograd, data):
        x = _float_work(data)
        slope = 2 * _param(attrs.a, x) * x + _param(attrs.b, x)
        return (_float_work(ograd) * slope).astype(ograd.dtype, copy=False)

    def gradient(F, attrs, inputs, outputs, ograds):
        ograd, data = inputs
        g = ograds[0]
        return [F._contrib_backward_quadratic(g, data, a=attrs.a, b=attrs.b, c=attrs.c),
                g * ograd * (2 * attrs.a)]


_MULTIPLIER_ATTRS = dict(scalar=Float(1), is_int=Bool(True))


def _multiplied_gradient(F, attrs, inputs, outputs, ograds):
    # both operators are linear with slope ``scalar``: their gradient is the backward operator
    return [F._contrib_backward_gradientmultiplier(ograds[0], scalar=attrs.scalar,
                                                   is_int=attrs.is_int)]


@register('_contrib_gradientmultiplier')
class _contrib_gradientmultiplier:
    """The identity, whose gradient is the output gradient times ``scalar`` (a negative
    scalar reverses gradients, as in domain-adversarial training). ``is_int`` says how MXNet
    parsed ``scalar``; the values are the same.
    """
    inputs = ('data',)
    named_inputs = False
    backward_node = BackwardNode(('ograd0',))
    attrs = _MULTIPLIER_ATTRS
    inplace = ((0, 0),)
    gradient = _multiplied_gradient

    def compute(xp, attrs, data):
        return data.copy()


@register('_contrib_backward_gradientmultiplier')
class _contrib_backward_gradientmultiplier:
    """The gradient of ``gradientmultiplier``: ``data * scalar`` (``data`` is the gradient
    arriving at its output)."""
    inputs = ('data',)
    named_inputs = False
    attrs = _MULTIPLIER_ATTRS
    inplace = ((0, 0),)
    gradient = _multiplied_gradient

    def compute(xp, attrs, data):
        return (_float_work(data) * _param(attrs.scalar, data)).astype(data.dtype, copy=False)


def _straight_through(F, attrs, inputs, outputs, ograds):
    # the straight-through estimator: the gradient of the identity
    return [ograds[0]]


@register('_contrib_round_ste')
class _contrib_round_ste:
    """``round`` (halves away from zero) forward; the identity's gradient backward."""
    inputs = ('data',)
    named_inputs = False
    inplace = ((0, 0),)
    gradient = _straight_through

    def compute(xp, attrs, data):
        if data.dtype.kind != 'f':
            return data.copy()
        return _round_half_away(xp, data).astype(data.dtype, copy=False)


@register('_contrib_sign_ste')
class _contrib_sign_ste:
    """``sign`` (0 at 0 and NaN) forward; the identity's gradient backward."""
    inputs = ('data',)
    named_inputs = False
    inplace = ((0, 0),)
    gradient = _straight_through

    def compute(xp, attrs, data):
        if data.dtype.kind != 'f':
            return xp.sign(data)
        return xp.where(xp.isnan(data), 0, xp.sign(data)).astype(data.dtype, copy=False)


@register('_contrib_allclose')
class _contrib_allclose:
    """1 (uint8, shape ``()``) when every ``|a - b| <= atol + rtol * |b|`` (or ``a == b``),
    else 0. ``a`` and ``b`` have one shape and dtype; ``rtol`` and ``atol`` are float32, as
    MXNet's. With ``equal_nan`` (the default, unlike numpy) NaNs at the same places compare
    equal; otherwise any NaN makes the result 0. No gradient.
    """
    inputs = ('a', 'b')
    attrs = dict(rtol=Float(1e-5), atol=Float(1e-8), equal_nan=Bool(True))
    gradient = zero_gradient

    def compute(xp, attrs, a, b):
        if a.shape != b.shape:
            raise ShapeError(f'allclose: a {a.shape} and b {b.shape} must have the same shape')
        if a.dtype != b.dtype:
            raise DTypeError(f'allclose: a ({a.dtype.name}) and b ({b.dtype.name}) must have '
                             'the same dtype')
        wb = _float_work(b)
        tolerance = _param(attrs.atol, wb) + _param(attrs.rtol, wb) * xp.abs(wb)
        # floats subtract in their own precision (inf - inf is NaN, decided below); integers
        # exactly, in 64 bits, before the difference meets the float32 tolerance
        with np.errstate(invalid='ignore'):
            if a.dtype.kind == 'f':
                diff = xp.abs(a - b)
            else:
                wide = np.uint64 if a.dtype.kind == 'u' else np.int64
                a64, b64 = a.astype(wide), b.astype(wide)
                diff = xp.where(a64 > b64, a64 - b64, b64 - a64).astype(wb.dtype)
        close = (a == b) | (diff <= tolerance)
        if a.dtype.kind == 'f':
            nan_a, nan_b = xp.isnan(a), xp.isnan(b)
            either = nan_a | nan_b
            close = xp.where(either, attrs.equal_nan & (nan_a == nan_b), close)
        return xp.asarray(close.all(), dtype=np.uint8).reshape(())

    def infer_shape(attrs, a, b):
        merged = merge_shape(a, b, 'allclose: a and b must have the same shape')
        return [merged, merged], [()]

    def infer_type(attrs, a, b):
        if a is not None and b is not None and a != b:
            raise DTypeError(f'allclose: a ({a.name}) and b ({b.name}) must have the same dtype')
        dtype = a if a is not None else b
        return [dtype, dtype], [np.dtype(np.uint8)]


# -------------------------------------------------------------------------------------------------
# Python functions: rand_zipfian, isinf, isfinite, isnan
# -------------------------------------------------------------------------------------------------

def _rand_zipfian(F, true_classes, num_sampled, range_max, ctx):
    log_range = math.log(range_max + 1)
    place = {} if ctx is None else {'ctx': ctx}
    rand = F._random_uniform(low=0, high=log_range, shape=(num_sampled,), dtype='float64',
                             **place)
    # keeps the sampled classes in [0, range_max)
    sampled_classes = (rand.exp() - 1).astype('int64') % range_max
    if ctx is not None:
        true_classes = true_classes.as_in_context(ctx)
    true_cls = true_classes.astype('float64')
    expected_count_true = ((true_cls + 2.0) / (true_cls + 1.0)).log() / log_range * num_sampled
    sampled = sampled_classes.astype('float64')
    expected_prob_sampled = ((sampled + 2.0) / (sampled + 1.0)).log() / log_range
    return sampled_classes, expected_count_true, expected_prob_sampled * num_sampled


def _make_rand_zipfian(F):
    if _frontend_is_symbol(F):
        def rand_zipfian(true_classes, num_sampled, range_max):
            if not _is_symbol(true_classes):
                raise MXNetAssertionError(f'unexpected type {type(true_classes)}')
            return _rand_zipfian(F, true_classes, num_sampled, range_max, None)
    else:
        def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
            if ctx is None:
                ctx = current_context()
            return _rand_zipfian(F, true_classes, num_sampled, range_max, ctx)
    rand_zipfian.__doc__ = _RAND_ZIPFIAN_DOC
    return rand_zipfian


def _make_isinf(F):
    def isinf(data):
        """1 where ``data`` is +inf or -inf, else 0 (``data``'s shape and dtype)."""
        return data.abs() == np.inf
    return isinf


def _make_isfinite(F):
    def isfinite(data):
        """1 where ``data`` is neither infinite nor NaN, else 0."""
        return F.broadcast_logical_and(data.abs() != np.inf, data == data)
    return isfinite


def _make_isnan(F):
    def isnan(data):
        """1 where ``data`` is NaN, else 0."""
        return data != data
    return isnan


_RAND_ZIPFIAN_DOC = """Draws ``num_sampled`` classes in [0, range_max) from the approximately
    log-uniform (Zipfian) distribution ``P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)``.

    Returns ``(samples, expected_count_true, expected_count_sample)``: the sampled classes
    (int64) and the expected counts (float64) of ``true_classes`` and of the samples.
    """

for _name, _make in (('rand_zipfian', _make_rand_zipfian), ('isinf', _make_isinf),
                     ('isfinite', _make_isfinite), ('isnan', _make_isnan)):
    PYTHON_FUNCTIONS[('contrib', _name)] = _make
