"""Normalisation layers: ``BatchNorm`` (and its ``_backward_BatchNorm``), ``LayerNorm``,
``InstanceNorm``, ``GroupNorm``, ``L2Normalization`` and ``LRN``.

Conventions of MXNet 1.9.1 that this file reproduces (checked against the real library):

* Every normaliser uses the biased variance ``mean((x - mean)^2)``; ``eps`` goes inside the
  square root.
* BatchNorm has three outputs (``output``, ``mean``, ``var``), one visible unless
  ``output_mean_var``. The hidden ``var`` holds the *inverse* standard deviation
  ``1 / sqrt(var + eps)`` of the statistics used: the batch's in training mode, the moving ones
  in predict mode or with ``use_global_stats``. ``fix_gamma`` uses 1 for gamma and gives it no
  gradient (MXNet's CPU kernel also writes 1 into the gamma array; hybridlib leaves it alone).
  In training mode the moving statistics are updated in place,
  ``moving = moving * momentum + batch * (1 - momentum)``, with the biased batch variance.
  MXNet 1.9.1's CPU kernel does that during the backward pass; hybridlib does it during the
  forward, so the values after a training step (forward and backward) are the same, and a
  training-mode forward alone also updates them.
* LayerNorm and GroupNorm hide ``mean`` and ``std = sqrt(var + eps)``; InstanceNorm hides
  ``mean`` and ``var`` of shape (N, C); L2Normalization hides the norm; LRN the denominator
  base ``knorm + alpha / nsize * window sum of x^2``. Gradients arriving at hidden outputs are
  ignored, as MXNet ignores them.
* GroupNorm's gamma and beta have one value per *group* (shape ``(num_groups,)``).

The data gradients of LayerNorm, InstanceNorm, GroupNorm, L2Normalization and LRN are written
with registered operators (reductions, broadcasting arithmetic, reshapes), recomputing the
statistics from the data, so higher-order gradients follow. BatchNorm's goes through
``_backward_BatchNorm``, a train-aware operator whose mode is the one the backward pass *runs*
in (the ``train_mode`` of ``autograd.backward``; the forward's mode in an Executor): in
training mode it recomputes the batch statistics and differentiates through them, otherwise
it uses the moving statistics as constants. (After a predict-mode forward, MXNet's
training-mode backward mixes the two: the training formula with the moving statistics.)
"""
import functools
import math
import types

import numpy as np

from ..base import DTypeError, ShapeError
from .attrs import UINT32_MAX, Bool, Count, Float, Int, Str
from .reduce import _mean
from .registry import (BackwardNode, ChannelRows, LEGACY, add_gradients, merge_shape,
                       normalize_axis, register, workspace)

__all__ = []


# -------------------------------------------------------------------------------------------------
# Shared helpers
# -------------------------------------------------------------------------------------------------

def _work_dtype(dtype):
    """The dtype statistics are computed in: float32 for float16 (its sums lose too much)."""
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return np.dtype(np.float32)
    return dtype if dtype.kind == 'f' else np.dtype(np.float64)


def _bshape(ndim, axis, size):
    """The shape that broadcasts a (size,) vector along ``axis`` of an ``ndim``-d array."""
    shape = [1] * ndim
    shape[axis] = size
    return tuple(shape)


def _merge_params(pshape, shapes, names):
    """Merge every parameter shape with the expected ``pshape``; the merged shape."""
    for name, shape in zip(names, shapes):
        if shape is not None and len(shape) != 1:
            raise ShapeError(f'{name} must be 1-d, got {tuple(shape)}')
        pshape = merge_shape(pshape, shape, name)
    return pshape


def _same_dtypes(n_outputs):
    """Type inference: every input and all ``n_outputs`` outputs share one dtype."""
    def infer_type(attrs, *dtypes):
        merged = None
        for d in dtypes:
            if d is not None:
                if merged is not None and d != merged:
                    raise DTypeError(f'inputs must have the same dtype, got {merged.name} and '
                                     f'{d.name}')
                merged = d
        return [merged] * len(dtypes), [merged] * n_outputs
    return infer_type


def _along(F, v, axis, ndim):
    """The (C,) value ``v`` shaped to broadcast along ``axis`` of an ``ndim``-d value."""
    if axis == ndim - 1:
        return v        # trailing axis: numpy broadcasting lines it up already
    return F.reshape(v, shape=_bshape(ndim, axis, -1))


def _standardise(F, x, red, eps):
    """(xhat, s): ``x`` standardised over the reduction ``red`` and ``s = 1/sqrt(var + eps)``."""
    xc = x - F.mean(x, **red)
    s = F.rsqrt(F.mean(F.square(xc), **red) + eps)
    return xc * s, s


def _project(F, h, xhat, red):
    """``h - mean(h) - xhat * mean(h * xhat)``: the data gradient of standardisation, over s."""
    return h - F.mean(h, **red) - xhat * F.mean(h * xhat, **red)


def _ignore_hidden(grad):
    """An OpDef gradient from ``grad(F, attrs, inputs, g)``, ``g`` the visible output's gradient.

    Gradients reaching the hidden outputs are dropped, as MXNet drops them; with none at the
    visible output, no input gets one.
    """
    def gradient(F, attrs, inputs, outputs, ograds, **kwargs):
        if ograds[0] is None:
            return [None] * len(inputs)
        return grad(F, attrs, inputs, ograds[0], **kwargs)
    return gradient


# -------------------------------------------------------------------------------------------------
# BatchNorm
# -------------------------------------------------------------------------------------------------

_BN_ATTRS = dict(eps=Float(1e-3), momentum=Float(0.9), fix_gamma=Bool(True),
                 use_global_stats=Bool(False), output_mean_var=Bool(False), axis=Int(1),
                 cudnn_off=Bool(False), min_calib_range=Float(None),
                 max_calib_range=Float(None))
_BN_PARAMS = ('gamma', 'beta', 'moving_mean', 'moving_var')


def _bn_infer_shape(attrs, data, gamma, beta, moving_mean, moving_var):
    pshape = None
    if data is not None:
        axis = normalize_axis(attrs.axis, len(data), 'BatchNorm channel axis')
        pshape = (data[axis],)
    pshape = _merge_params(pshape, (gamma, beta, moving_mean, moving_var), _BN_PARAMS)
    if data is not None and pshape is not None and not data[axis]:
        data = data[:axis] + pshape + data[axis + 1:]
    return [data] + [pshape] * 4, [data, pshape, pshape]


def _bn_param_dtype(data, params, names):
    """Parameter dtype for a data dtype: float32 for float16 data, else the data's dtype."""
    if data is not None:
        if data.kind != 'f':
            raise DTypeError(f'BatchNorm only supports floating point types, not {data.name}')
        pdt = np.dtype(np.float32) if data == np.float16 else data
    else:
        pdt = next((p for p in params if p is not None), None)
    for name, p in zip(names, params):
        if p is not None and pdt is not None and p != pdt:
            what = f'{data.name} data' if data is not None else 'the other parameters'
            raise DTypeError(f'{name} must be {pdt.name} for {what}, got {p.name}')
    return pdt


def _bn_infer_type(attrs, data, *params):
    pdt = _bn_param_dtype(data, params, _BN_PARAMS)
    return [data] + [pdt] * 4, [data, pdt, pdt]


def _update_moving(moving_mean, moving_var, mean, var, momentum):
    """``moving = moving * momentum + batch * (1 - momentum)``, in place."""
    moving_mean *= momentum
    moving_mean += mean * (1 - momentum)
    moving_var *= momentum
    moving_var += var * (1 - momentum)


def _converted(xp, x, dtype, part):
    """x converted to ``dtype`` in the workspace: the float32 arithmetic of float16 data."""
    buf = workspace(xp, x.shape, dtype, part=part)
    buf[...] = x
    return buf


@register('BatchNorm')
class BatchNorm:
    """Batch normalisation along ``axis``:
    ``out = (data - mean) / sqrt(var + eps) * gamma + beta`` per channel.

    ``data`` (d0, ..., C, ..., dn) with C at ``axis``; ``gamma``, ``beta``, ``moving_mean``,
    ``moving_var`` (C,) -> ``output`` like ``data``, hidden ``mean`` (C,) and ``var`` (C,) (the
    inverse standard deviation, as MXNet). Training mode (unless ``use_global_stats``) uses
    the batch's statistics and updates the moving ones in place; predict mode uses the moving
    ones. ``fix_gamma`` uses 1 for gamma. float16 data takes float32 parameters.
    ``cudnn_off``, ``min_calib_range``, ``max_calib_range`` do not change float results.
    """
    inputs = ('data', 'gamma', 'beta', 'moving_mean', 'moving_var')
    backward_node = BackwardNode(('ograd0', 'out1', 'out2', 'in0', 'in1', 'in2', 'in3', 'in4'))
    aux = ('moving_mean', 'moving_var')
    var_inits = {'moving_mean': '["zero", {}]', 'moving_var': '["one", {}]'}
    attrs = _BN_ATTRS
    num_outputs = 3
    output_names = ('output', 'mean', 'var')    # hidden ones too (a monitor shows bn1_mean)
    train_aware = True
    inplace = ((0, 0),)
    infer_shape = _bn_infer_shape
    infer_type = _bn_infer_type

    def num_visible_outputs(attrs):
        return 3 if attrs.output_mean_var else 1

    def specialise(xp, attrs, shapes, dtypes, is_train):
        data = tuple(shapes[0])
        rows = ChannelRows(data, attrs.axis % len(data))
        axis, count = rows.axis, rows.count
        dtype, pdt = dtypes[0], dtypes[3]
        same = dtype == pdt     # else float16 data, computed in its float32 parameters' dtype
        eps, fix, m = attrs.eps, attrs.fix_gamma, attrs.momentum
        empty, multiply, add, subtract, sqrt = xp.empty, xp.multiply, xp.add, xp.subtract, xp.sqrt

        if not is_train or attrs.use_global_stats:
            # the moving statistics: a per-channel scale and shift of the data
            def batch_norm(x, gamma, beta, moving_mean, moving_var, out=None):
                if out is None:
                    out = empty(data, dtype)
                invstd = 1 / sqrt(moving_var + eps)
                scale = invstd if fix else gamma * invstd
                scaled = rows(out if same else workspace(xp, data, pdt))
                multiply(rows(x), rows.spread(xp, scale), out=scaled)
                add(scaled, rows.spread(xp, beta - moving_mean * scale), out=rows(out))
                return out, moving_mean.copy(), invstd
            return batch_norm

        if xp is not np and same:
            return _gpu_batch_norm_train(xp, data, axis, count, eps, fix, m)

        # the batch statistics, which also update the moving ones
        def batch_norm_train(x, gamma, beta, moving_mean, moving_var, out=None):
            if out is None:
                out = empty(data, dtype)
            if not same:
                x = _converted(xp, x, pdt, part=1)
            xr = rows(x)
            mean = rows.sums(xp, xr) / count
            centred = rows(out if same else x)
            subtract(xr, rows.spread(xp, mean), out=centred)
            var = rows.dots(xp, centred, centred) / count
            invstd = 1 / sqrt(var + eps)
            centred *= rows.spread(xp, invstd if fix else gamma * invstd)
            add(centred, rows.spread(xp, beta), out=rows(out))
            _update_moving(moving_mean, moving_var, mean, var, m)
            return out, mean, invstd
        return batch_norm_train

    def gradient(F, attrs, inputs, outputs, ograds, is_train=False):
        # MXNet ignores gradients arriving at the hidden mean/var outputs
        if ograds[0] is None:
            return [None] * 5
        # unpacked, not indexed: works alike for a list of NDArrays and a grouped Symbol
        dx, dgamma, dbeta = F._backward_BatchNorm(
            ograds[0], *inputs[:2], *inputs[3:], eps=attrs.eps, fix_gamma=attrs.fix_gamma,
            use_global_stats=attrs.use_global_stats, axis=attrs.axis)
        return [dx, None if attrs.fix_gamma else dgamma, dbeta, None, None]


def _bn_backward_infer_shape(attrs, ograd, data, gamma, moving_mean, moving_var):
    data = merge_shape(ograd, data, 'ograd and data')
    pshape = None
    if data is not None:
        axis = normalize_axis(attrs.axis, len(data), 'BatchNorm channel axis')
        pshape = (data[axis],)
    pshape = _merge_params(pshape, (gamma, moving_mean, moving_var),
                           ('gamma', 'moving_mean', 'moving_var'))
    if data is not None and pshape is not None and not data[axis]:
        data = data[:axis] + pshape + data[axis + 1:]
    return [data, data, pshape, pshape, pshape], [data, pshape, pshape]


def _bn_backward_infer_type(attrs, ograd, data, *params):
    if ograd is not None and data is not None and ograd != data:
        raise DTypeError(f'ograd ({ograd.name}) and data ({data.name}) differ in dtype')
    data = ograd if data is None else data
    pdt = _bn_param_dtype(data, params, ('gamma', 'moving_mean', 'moving_var'))
    return [data, data, pdt, pdt, pdt], [data, pdt, pdt]


@register('_backward_BatchNorm')
class _backward_BatchNorm:
    """The gradients of BatchNorm: (d data, d gamma, d beta) for the gradient ``ograd`` of its
    output.

    ``ograd``, ``data`` (d0, ..., C, ..., dn); ``gamma``, ``moving_mean``, ``moving_var`` (C,)
    -> (like ``data``, (C,), (C,)). Run in training mode (and not ``use_global_stats``), it
    uses the batch statistics of ``data`` and the data gradient goes through them:
    ``gamma * s * (ograd - mean(ograd) - xhat * mean(ograd * xhat))`` with
    ``s = 1 / sqrt(var + eps)`` and ``xhat = (data - mean) * s``; otherwise it uses the moving
    statistics and is ``ograd * gamma * s``. ``fix_gamma`` uses 1 for gamma and gives a zero
    gamma gradient. The mode is the one the backward pass runs in, as in MXNet.
    """
    inputs = ('ograd', 'data', 'gamma', 'moving_mean', 'moving_var')
    attrs = _BN_ATTRS
    num_outputs = 3
    train_aware = True
    infer_shape = _bn_backward_infer_shape
    infer_type = _bn_backward_infer_type

    def specialise(xp, attrs, shapes, dtypes, is_train):
        data = tuple(shapes[1])
        rows = ChannelRows(data, attrs.axis % len(data))
        axis, count = rows.axis, rows.count
        dtype, pdt = dtypes[1], dtypes[3]
        same = dtype == pdt     # else float16 data, computed in its float32 parameters' dtype
        batch = is_train and not attrs.use_global_stats
        eps, fix = attrs.eps, attrs.fix_gamma
        empty, multiply, subtract, sqrt = xp.empty, xp.multiply, xp.subtract, xp.sqrt
        if xp is not np and same:
            return _gpu_backward_batch_norm(xp, data, axis, count, eps, fix, batch)

        # per-channel sums of the gradient and of its product with the centred data, then one
        # scale of each (in the workspace)
        def backward_batch_norm(g, x, gamma, moving_mean, moving_var, out=None):
            if out is None:
                out = empty(data, dtype)
            if not same:
                g, x = _converted(xp, g, pdt, part=1), _converted(xp, x, pdt, part=2)
            gr, xr = rows(g), rows(x)
            centred = rows(workspace(xp, data, pdt))
            if batch:
                mean = rows.sums(xp, xr) / count
                subtract(xr, rows.spread(xp, mean), out=centred)
                var = rows.dots(xp, centred, centred) / count
            else:
                subtract(xr, rows.spread(xp, moving_mean), out=centred)
                var = moving_var
            invstd = 1 / sqrt(var + eps)
            dbeta = rows.sums(xp, gr)
            dgamma = rows.dots(xp, gr, centred) * invstd
            scale = rows.spread(xp, invstd if fix else gamma * invstd)
            through = rows(out if same else workspace(xp, data, pdt, part=3))
            if batch:       # through the batch statistics: minus the means of g and g * xhat
                subtract(gr, rows.spread(xp, dbeta / count), out=through)
                centred *= rows.spread(xp, invstd * dgamma / count)
                through -= centred
                through *= scale
            else:
                multiply(gr, scale, out=through)
            if not same:
                out[...] = through.reshape(data)
            return out, xp.zeros_like(dgamma) if fix else dgamma, dbeta
        return backward_batch_norm

    def gradient(F, attrs, inputs, outputs, ograds, is_train=False):
        return _bn_backward_gradient(F, attrs, inputs, ograds, is_train)


def _bn_backward_gradient(F, attrs, inputs, ograds, is_train):
    """Second derivatives of BatchNorm: the gradient of ``_backward_BatchNorm``.

    With u, a, b the gradients arriving at (d data, d gamma, d beta), g = ograd,
    P(z) = z - mean(z) - xhat * mean(z * xhat) and s the inverse std, training mode gives
    d ograd = gamma s P(u) + a xhat + b,  d gamma = sum(g s P(u)),
    d data = -gamma s^2 (xhat mean(u P(g)) + P(u) mean(g xhat) + P(g) mean(u xhat)) + a s P(g).
    In predict mode, d ograd = gamma s u + a xhat + b, d gamma = sum(u s g), d data = a s g.
    The moving statistics get no gradient (they are auxiliary states).
    """
    g, x, gamma, moving_mean, moving_var = inputs
    u, a, b = ograds
    fix = attrs.fix_gamma
    if fix:
        a = None        # d gamma is identically zero
    ndim = x.ndim
    axis = attrs.axis % ndim
    red = dict(axis=axis, exclude=True, keepdims=True)
    rest = dict(axis=axis, exclude=True)
    train = is_train and not attrs.use_global_stats
    if train:
        xhat, s = _standardise(F, x, red, attrs.eps)
    else:
        s = _along(F, F.rsqrt(moving_var + attrs.eps), axis, ndim)
        xhat = (x - _along(F, moving_mean, axis, ndim)) * s
    gam = None if fix else _along(F, gamma, axis, ndim)
    dg = dx = dgamma = None
    pg = _project(F, g, xhat, red) if train else g
    if u is not None:
        pu = _project(F, u, xhat, red) if train else u
        spu = s * pu
        dg = spu if fix else gam * spu
        if not fix:
            dgamma = F.sum(g * spu, **rest)
        if train:
            t = (xhat * F.mean(u * pg, **red) + pu * F.mean(g * xhat, **red)
                 + pg * F.mean(u * xhat, **red)) * F.square(s)
            dx = -t if fix else -(gam * t)
    if a is not None:
        a_b = _along(F, a, axis, ndim)
        dg = add_gradients(dg, a_b * xhat)
        dx = add_gradients(dx, a_b * s * pg)
    if b is not None:
        b_b = _along(F, b, axis, ndim)
        dg = F.broadcast_like(b_b, g) if dg is None else dg + b_b
    return [dg, dx, dgamma, None, None]


# BatchNorm on a GPU: each pass over the data one cupy kernel, instead of numpy's temporaries
# (about three times fewer passes over memory, which is what BatchNorm's time is made of)

@functools.lru_cache(maxsize=None)
def _gpu_kernels(xp):
    """cupy kernels over data viewed as (lead, C, rest), with (1, C, 1) per-channel operands."""
    def channel_sum(name, params, term):
        return xp.ReductionKernel(params, 'T y', term, 'a + b', 'y = a', '0', name)
    return types.SimpleNamespace(
        squares=channel_sum('bn_squares', 'T x, T m', '(x - m) * (x - m)'),
        products=channel_sum('bn_products', 'T g, T x, T m', 'g * (x - m)'),
        normalise=xp.ElementwiseKernel('T x, T m, T s, T b', 'T y', 'y = (x - m) * s + b',
                                       'bn_normalise'),
        through=xp.ElementwiseKernel('T g, T x, T m, T c1, T c2, T s', 'T y',
                                     'y = (g - c1 - (x - m) * c2) * s', 'bn_through'))


def _gpu_plan(xp, data, axis):
    """(the kernels, the (lead, C, rest) view of data, the (1, C, 1) shape of a channel
    vector)."""
    c = data[axis]
    return _gpu_kernels(xp), (math.prod(data[:axis]), c, -1), (1, c, 1)


def _gpu_channel_sum(reduce, *args):
    """``reduce(*args, axis=...)`` over every axis but the channel's, in two steps: one reduction
    over both would give each channel one thread block, too few to fill a GPU."""
    return reduce(*args, axis=2).sum(axis=0)


def _gpu_statistics(xp, kernels, x3, vec, count):
    mean = _gpu_channel_sum(xp.sum, x3) / count
    return mean, _gpu_channel_sum(kernels.squares, x3, mean.reshape(vec)) / count


def _gpu_batch_norm_train(xp, data, axis, count, eps, fix, momentum):
    """BatchNorm's training-mode body on a GPU: the CPU body's arithmetic in three kernels."""
    kernels, view, vec = _gpu_plan(xp, data, axis)

    def batch_norm_train(x, gamma, beta, moving_mean, moving_var, out=None):
        if out is None:
            out = xp.empty(data, x.dtype)
        x3 = x.reshape(view)
        mean, var = _gpu_statistics(xp, kernels, x3, vec, count)
        invstd = 1 / xp.sqrt(var + eps)
        scale = invstd if fix else gamma * invstd
        kernels.normalise(x3, mean.reshape(vec), scale.reshape(vec), beta.reshape(vec),
                          out.reshape(view))
        _update_moving(moving_mean, moving_var, mean, var, momentum)
        return out, mean, invstd
    return batch_norm_train


def _gpu_backward_batch_norm(xp, data, axis, count, eps, fix, batch):
    """``_backward_BatchNorm``'s body on a GPU (same arithmetic as the CPU body)."""
    kernels, view, vec = _gpu_plan(xp, data, axis)

    def backward_batch_norm(g, x, gamma, moving_mean, moving_var, out=None):
        if out is None:
            out = xp.empty(data, x.dtype)
        g3, x3 = g.reshape(view), x.reshape(view)
        if batch:
            mean, var = _gpu_statistics(xp, kernels, x3, vec, count)
        else:
            mean, var = moving_mean, moving_var
        invstd = 1 / xp.sqrt(var + eps)
        dbeta = _gpu_channel_sum(xp.sum, g3)
        dgamma = _gpu_channel_sum(kernels.products, g3, x3, mean.reshape(vec)) * invstd
        scale = (invstd if fix else gamma * invstd).reshape(vec)
        if batch:
            kernels.through(g3, x3, mean.reshape(vec), (dbeta / count).reshape(vec),
                            (invstd * dgamma / count).reshape(vec), scale, out.reshape(view))
        else:
            xp.multiply(g3, scale, out=out.reshape(view))
        return out, xp.zeros_like(dgamma) if fix else dgamma, dbeta
    return backward_batch_norm


# -------------------------------------------------------------------------------------------------
# LayerNorm, InstanceNorm, GroupNorm
# -------------------------------------------------------------------------------------------------

def _mean_var(xp, x, red):
    """The mean of x over the axes ``red`` (a tuple), x minus it, and the variance (keepdims):
    numpy's mean without its Python checks (reduce.py), the same bits."""
    mean = _mean(xp, x, red)
    xc = x - mean
    return mean, xc, _mean(xp, xc * xc, red)


@register('LayerNorm')
class LayerNorm:
    """Layer normalisation over ``axis``:
    ``out = (data - mean) / sqrt(var + eps) * gamma + beta``, statistics over ``axis`` only.

    ``data`` (d0, ..., C, ..., dn) with C at ``axis``; ``gamma``, ``beta`` (C,) -> ``output``
    like ``data``, hidden ``mean`` and ``std`` (``sqrt(var + eps)``), both ``data``'s shape
    with 1 at ``axis``.
    """
    inputs = ('data', 'gamma', 'beta')
    backward_node = BackwardNode(('ograd0', 'in0', 'in1', 'out1', 'out2'))
    attrs = dict(axis=Int(-1), eps=Float(1e-5), output_mean_var=Bool(False))
    num_outputs = 3
    output_names = ('output', 'mean', 'std')
    infer_type = _same_dtypes(3)

    def num_visible_outputs(attrs):
        return 3 if attrs.output_mean_var else 1

    def infer_shape(attrs, data, gamma, beta):
        pshape = stat = None
        if data is not None:
            axis = normalize_axis(attrs.axis, len(data), 'LayerNorm axis')
            pshape = (data[axis],)
        pshape = _merge_params(pshape, (gamma, beta), ('gamma', 'beta'))
        if data is not None:
            data = data[:axis] + pshape + data[axis + 1:]
            stat = data[:axis] + (1,) + data[axis + 1:]
        return [data, pshape, pshape], [data, stat, stat]

    def compute(xp, attrs, data, gamma, beta):
        axis = attrs.axis % data.ndim
        wdt = _work_dtype(data.dtype)
        mean, xc, var = _mean_var(xp, data.astype(wdt, copy=False), (axis,))
        std = xp.sqrt(var + attrs.eps)
        bshape = _bshape(data.ndim, axis, data.shape[axis])
        out = xc / std * gamma.reshape(bshape) + beta.reshape(bshape)
        dt = data.dtype
        return out.astype(dt, copy=False), mean.astype(dt, copy=False), std.astype(dt, copy=False)

    @_ignore_hidden
    def gradient(F, attrs, inputs, g):
        x, gamma, _ = inputs
        ndim = x.ndim
        axis = attrs.axis % ndim
        red = dict(axis=axis, keepdims=True)
        xhat, s = _standardise(F, x, red, attrs.eps)
        dx = s * _project(F, g * _along(F, gamma, axis, ndim), xhat, red)
        rest = dict(axis=axis, exclude=True)
        return [dx, F.sum(g * xhat, **rest), F.sum(g, **rest)]


def _check_rank3(name, data):
    if data is not None and len(data) < 3:
        raise ShapeError(f'{name} needs data of rank >= 3 (N, C, ...), got {tuple(data)}')


@register('InstanceNorm')
class InstanceNorm:
    """Instance normalisation: each (sample, channel) standardised over its spatial axes,
    then ``* gamma + beta`` per channel.

    ``data`` (N, C, d2, ...), rank >= 3; ``gamma``, ``beta`` (C,) -> ``output`` like ``data``,
    hidden ``mean`` and ``var`` (N, C) (the variance, without eps).
    """
    inputs = ('data', 'gamma', 'beta')
    output_names = ('output', 'mean', 'var')
    backward_node = LEGACY
    attrs = dict(eps=Float(1e-3))
    num_outputs = 3
    num_visible_outputs = 1
    infer_type = _same_dtypes(3)

    def infer_shape(attrs, data, gamma, beta):
        _check_rank3('InstanceNorm', data)
        pshape = None if data is None else (data[1],)
        pshape = _merge_params(pshape, (gamma, beta), ('gamma', 'beta'))
        stat = None
        if data is not None:
            data = data[:1] + pshape + data[2:]
            stat = data[:2]
        return [data, pshape, pshape], [data, stat, stat]

    def compute(xp, attrs, data, gamma, beta):
        red = tuple(range(2, data.ndim))
        mean, xc, var = _mean_var(xp, data.astype(_work_dtype(data.dtype), copy=False), red)
        bshape = _bshape(data.ndim, 1, data.shape[1])
        out = xc / xp.sqrt(var + attrs.eps) * gamma.reshape(bshape) + beta.reshape(bshape)
        stat = data.shape[:2]
        dt = data.dtype
        return (out.astype(dt, copy=False), mean.reshape(stat).astype(dt, copy=False),
                var.reshape(stat).astype(dt, copy=False))

    @_ignore_hidden
    def gradient(F, attrs, inputs, g):
        x, gamma, _ = inputs
        red = dict(axis=(0, 1), exclude=True, keepdims=True)
        xhat, s = _standardise(F, x, red, attrs.eps)
        dx = s * _project(F, g * _along(F, gamma, 1, x.ndim), xhat, red)
        rest = dict(axis=1, exclude=True)
        return [dx, F.sum(g * xhat, **rest), F.sum(g, **rest)]


def _group_check(attrs):
    if attrs.num_groups < 1:
        raise ValueError(f'num_groups must be positive, got {attrs.num_groups}')


@register('GroupNorm')
class GroupNorm:
    """Group normalisation: the channels split into ``num_groups`` groups; each (sample,
    group) standardised over its channels and spatial axes, then ``* gamma + beta`` per group.

    ``data`` (N, C, d2, ...), rank >= 3, C divisible by ``num_groups`` = G; ``gamma``, ``beta``
    (G,) (one value per group in MXNet 1.9.1) -> ``output`` like ``data``, hidden ``mean`` and
    ``std`` (``sqrt(var + eps)``) (N, G).
    """
    inputs = ('data', 'gamma', 'beta')
    backward_node = BackwardNode(('ograd0', 'in0', 'in1', 'out1', 'out2'))
    attrs = dict(num_groups=Count(1), eps=Float(1e-5), output_mean_var=Bool(False))
    num_outputs = 3
    output_names = ('output', 'mean', 'std')
    infer_type = _same_dtypes(3)
    check = _group_check

    def num_visible_outputs(attrs):
        return 3 if attrs.output_mean_var else 1

    def infer_shape(attrs, data, gamma, beta):
        _check_rank3('GroupNorm', data)
        groups = attrs.num_groups
        pshape = _merge_params((groups,), (gamma, beta), ('gamma', 'beta'))
        stat = None
        if data is not None:
            if data[1] and data[1] % groups:
                raise ShapeError(f'GroupNorm: {data[1]} channels are not divisible by '
                                 f'num_groups={groups}')
            stat = (data[0], groups)
        return [data, pshape, pshape], [data, stat, stat]

    def compute(xp, attrs, data, gamma, beta):
        groups = attrs.num_groups
        grouped = data.astype(_work_dtype(data.dtype), copy=False).reshape(
            data.shape[0], groups, -1)
        mean, xc, var = _mean_var(xp, grouped, (2,))
        std = xp.sqrt(var + attrs.eps)
        out = xc / std * gamma.reshape(1, groups, 1) + beta.reshape(1, groups, 1)
        stat = (data.shape[0], groups)
        dt = data.dtype
        return (out.reshape(data.shape).astype(dt, copy=False),
                mean.reshape(stat).astype(dt, copy=False), std.reshape(stat).astype(dt, copy=False))

    @_ignore_hidden
    def gradient(F, attrs, inputs, g):
        x, gamma, _ = inputs
        groups = attrs.num_groups
        xr = F.reshape(x, shape=(0, groups, -1))
        gr = F.reshape(g, shape=(0, groups, -1))
        red = dict(axis=2, keepdims=True)
        xhat, s = _standardise(F, xr, red, attrs.eps)
        dxr = s * _project(F, gr * F.reshape(gamma, shape=(1, groups, 1)), xhat, red)
        rest = dict(axis=1, exclude=True)
        return [F.reshape_like(dxr, x), F.sum(gr * xhat, **rest), F.sum(gr, **rest)]


# -------------------------------------------------------------------------------------------------
# L2Normalization
# -------------------------------------------------------------------------------------------------

def _l2_axes(mode, ndim):
    """The axes whose L2 norm is taken, for each mode."""
    if mode == 'instance':
        return tuple(range(1, ndim))
    if mode == 'channel':
        return (1,)
    return tuple(range(2, ndim))


@register('L2Normalization')
class L2Normalization:
    """``out = data / sqrt(sum(data^2) + eps)``, the sum over every axis but the first
    (``mode='instance'``), over the channel axis 1 (``'channel'``) or over the spatial axes 2...
    (``'spatial'``).

    ``data`` (N, ...) (rank >= 3 for 'channel' and 'spatial') -> ``output`` like ``data``,
    hidden ``norm``: (N,) for 'instance', (N, 1, d2, ...) for 'channel', (N, C) for 'spatial'.
    """
    inputs = ('data',)
    attrs = dict(eps=Float(1e-10), mode=Str('instance', choices=('channel', 'instance',
                                                                 'spatial')))
    num_outputs = 2
    num_visible_outputs = 1
    infer_type = _same_dtypes(2)
    output_names = ('output', 'norm')
    backward_node = LEGACY

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None, None]
        if attrs.mode != 'instance' and len(data) < 3:
            raise ShapeError(f"L2Normalization mode='{attrs.mode}' needs data of rank >= 3, "
                             f'got {tuple(data)}')
        if not data:
            raise ShapeError('L2Normalization needs data of rank >= 1')
        if attrs.mode == 'instance':
            norm = data[:1]
        elif attrs.mode == 'channel':
            norm = data[:1] + (1,) + data[2:]
        else:
            norm = data[:2]
        return [data], [data, norm]

    def compute(xp, attrs, data):
        axes = _l2_axes(attrs.mode, data.ndim)
        x = data.astype(_work_dtype(data.dtype), copy=False)
        norm = xp.sqrt((x * x).sum(axis=axes, keepdims=True) + attrs.eps)
        out = x / norm
        if attrs.mode == 'instance':
            norm = norm.reshape(data.shape[:1])
        elif attrs.mode == 'spatial':
            norm = norm.reshape(data.shape[:2])
        return out.astype(data.dtype, copy=False), norm.astype(data.dtype, copy=False)

    @_ignore_hidden
    def gradient(F, attrs, inputs, g):
        x = inputs[0]
        if attrs.mode == 'instance':
            red = dict(axis=0, exclude=True, keepdims=True)
        elif attrs.mode == 'channel':
            red = dict(axis=1, keepdims=True)
        else:
            red = dict(axis=(0, 1), exclude=True, keepdims=True)
        norm = F.sqrt(F.sum(F.square(x), **red) + attrs.eps)
        y = x / norm
        return [(g - y * F.sum(g * y, **red)) / norm]


# -------------------------------------------------------------------------------------------------
# LRN
# -------------------------------------------------------------------------------------------------

def _lrn_check(attrs):
    if attrs.nsize < 1 or attrs.nsize % 2 != 1:
        raise ValueError(f'LRN only supports odd values for nsize, got {attrs.nsize}')


def _window_sum(xp, z, nsize):
    """Sum over the channel window [c - nsize//2, c + nsize//2] (clipped), along axis 1."""
    out = z.copy()
    channels = z.shape[1]
    for d in range(1, nsize // 2 + 1):
        out[:, d:] += z[:, :channels - d]
        out[:, :channels - d] += z[:, d:]
    return out


def _window_sum_f(F, z, nsize):
    """``_window_sum`` with registered operators: zero-pad the channels and add the shifts."""
    half = nsize // 2
    if half == 0:
        return z
    zeros = F.zeros_like(F.slice_axis(z, axis=1, begin=0, end=half))
    padded = F.concat(zeros, z, zeros, dim=1)
    shifts = [F.slice_axis(padded, axis=1, begin=k, end=(k - 2 * half) or None)
              for k in range(2 * half + 1)]
    return F.add_n(*shifts)


@register('LRN')
class LRN:
    """Local response normalisation across channels:
    ``out = data * (knorm + alpha / nsize * sum_window(data^2)) ^ -beta``, the window being the
    ``nsize`` channels centred on each channel (clipped at the ends).

    ``data`` (N, C, H, W) with C >= ``nsize`` (odd) -> ``output`` and hidden ``tmp_norm`` (the
    base ``knorm + alpha / nsize * sum_window(data^2)``), both (N, C, H, W).
    """
    inputs = ('data',)
    attrs = dict(alpha=Float(1e-4), beta=Float(0.75), knorm=Float(2), nsize=Count(high=UINT32_MAX))
    num_outputs = 2
    num_visible_outputs = 1
    infer_type = _same_dtypes(2)
    check = _lrn_check
    output_names = ('output', 'tmp_norm')
    backward_node = BackwardNode(('ograd0', 'in0', 'out1'))

    def infer_shape(attrs, data):
        if data is None:
            return [None], [None, None]
        if len(data) != 4:
            raise ShapeError(f'LRN needs 4-d data (N, C, H, W), got {tuple(data)}')
        if data[1] and data[1] < attrs.nsize:
            raise ShapeError(f'LRN: nsize={attrs.nsize} is larger than the {data[1]} channels')
        return [data], [data, data]

    def compute(xp, attrs, data):
        x = data.astype(_work_dtype(data.dtype), copy=False)
        base = attrs.knorm + (attrs.alpha / attrs.nsize) * _window_sum(xp, x * x, attrs.nsize)
        out = x * base ** -attrs.beta
        return out.astype(data.dtype, copy=False), base.astype(data.dtype, copy=False)

    @_ignore_hidden
    def gradient(F, attrs, inputs, g):
        x = inputs[0]
        c = attrs.alpha / attrs.nsize
        base = _window_sum_f(F, F.square(x), attrs.nsize) * c + attrs.knorm
        scale = base ** -attrs.beta
        inner = _window_sum_f(F, g * x * scale / base, attrs.nsize)
        return [g * scale - x * inner * (2 * attrs.beta * c)]
