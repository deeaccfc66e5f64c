"""Multi-tensor optimizer updates: one call updates ``num_weights`` weights
(``multi_sgd_update``, ``preloaded_multi_sgd_mom_update``, ``_multi_adamw_update``,
``_multi_lamb_update``, ...), each weight by the compute of the single-weight operator of
``optimizer.py``; and what LARS and ``zero_grad`` use: ``multi_sum_sq``, ``multi_lars``,
``reset_arrays``. ``nd.contrib``/``sym.contrib`` get MXNet's Python functions around the
multi-tensor AdamW and LAMB operators (``multi_adamw_update``, ``multi_lamb_update``, ...: lists
of arrays, ``rescale_grad`` as a number), through ``frontend.PYTHON_FUNCTIONS``.

Differences from MXNet 1.9.1, on purpose:

* MXNet's multi-tensor updates fail without ``out=`` ("shape must have a valid ndim"); here they
  return the new weights. Their LAMB takes the trust ratio's weight norm of a float16 weight
  from the float16 weight (``_multi_mp_lamb_update``), and ``multi_sum_sq`` rounds the squares
  of float16 values to float16 before summing them; here the norm is the master copy's and the
  squares are exact (relative differences around 1e-5).
"""
import numpy as np

from ..base import DTypeError, ShapeError
from .attrs import Bool, Float, FloatTuple, Int, Shape
from .frontend import PYTHON_FUNCTIONS
from .optimizer import (_MOMENTUM, _SCALARS, _frontend_kwargs, _make_infer_type, _merge_dtype,
                        _scale_array)
from .registry import (OpDef, Params, get, merge_shape, register, register_op, same_dtype,
                       same_shape, zero_gradient)

__all__ = []


# -------------------------------------------------------------------------------------------------
# Multi-tensor updates: one call updates ``num_weights`` weights
#
# The inputs are the per-weight groups in order (``weight_0, grad_0, mom_0, weight_1, ...``),
# then the inputs all weights share (``rescale_grad`` of AdamW; the ``lrs`` and ``wds`` arrays of
# the preloaded forms). Each weight is updated by the single-weight operator's compute with its
# own learning rate and weight decay (``lrs[i]``, ``wds[i]``, ...), so the numbers are those of
# the single-weight updates; the outputs are the new weights, the states are updated in place.
# MXNet's multi-tensor operators fail without ``out=`` (an optimizer always passes the weights);
# here they also return new arrays.
# -------------------------------------------------------------------------------------------------

def _multi_list_inputs(group, tail, count):
    def list_inputs(attrs):
        return tuple(f'{g}_{i}' for i in range(attrs[count]) for g in group) + tuple(tail)
    return list_inputs


def _multi_aux(mutated, count):
    def aux(attrs):
        return tuple(f'{g}_{i}' for i in range(attrs[count]) for g in mutated)
    return aux


def _check_multi(count, per_weight):
    def check(attrs):
        n = attrs[count]
        if n < 1:
            raise ValueError(f'{count} must be at least 1, got {n}')
        for key in per_weight:
            if len(attrs[key]) != n:
                raise ValueError(f'{key} has {len(attrs[key])} values for {count}={n} (give '
                                 f'one per weight, and {count}=the number of weights)')
    return check


def _check_input_count(attrs, count, group, tail, n_inputs):
    n = attrs[count]
    expected = n * len(group) + len(tail)
    if n_inputs != expected:
        shared = f' then {", ".join(tail)}' if tail else ''
        raise ShapeError(f'{count}={n} takes {expected} inputs ({", ".join(group)} per '
                         f'weight{shared}), got {n_inputs}; pass {count}=number of weights')
    return n


def _multi_infer_shape(group, tail, count):
    k = len(group)

    def infer_shape(attrs, *shapes):
        n = _check_input_count(attrs, count, group, tail, len(shapes))
        ins, outs = [], []
        for i in range(n):
            merged = None
            for name, shape in zip(group, shapes[i * k:(i + 1) * k]):
                merged = merge_shape(merged, shape, f'{name}_{i} must have the shape of '
                                                    f'weight_{i}')
            ins += [merged] * k
            outs.append(merged)
        for name, shape in zip(tail, shapes[n * k:]):
            size = 1 if name in _SCALARS else n
            if shape is not None and (len(shape) != 1 or shape[0] not in (0, size)):
                raise ShapeError(f'{name} must have shape ({size},), got {tuple(shape)}')
            ins.append((size,))
        return ins, outs
    return infer_shape


def _multi_infer_type(group, tail, count, master):
    """The single-weight rule's dtypes, each role (weight, grad, mom, ...) merged over all
    weights (MXNet updates one dtype per call); ``lrs``/``wds`` arrays take their own."""
    k = len(group)
    scalars = tuple(n for n in tail if n in _SCALARS)
    single = _make_infer_type(group + scalars, master, False)

    def infer_type(attrs, *dtypes):
        n = _check_input_count(attrs, count, group, tail, len(dtypes))
        roles = [_merge_dtype(dtypes[j:n * k:k], f'every {g}_i') for j, g in enumerate(group)]
        named = dict(zip(tail, dtypes[n * k:]))
        ins, outs = single(attrs, *roles, *(named[s] for s in scalars))
        shared = dict(zip(scalars, ins[k:]))
        result = list(ins[:k]) * n
        for name in tail:
            result.append(shared.get(name, named[name] or np.dtype(np.float32)))
        return result, [outs[0]] * n
    return infer_type


def _multi_compute(step, group, tail, count, per_weight):
    k = len(group)
    preloaded = 'lrs' in tail

    def compute(xp, attrs, *arrays):
        n = attrs[count]
        shared = arrays[n * k:]
        outs = []
        for i in range(n):
            a = Params(attrs)
            for key, single in per_weight.items():
                a[single] = attrs[key][i]
            if preloaded:       # learning rates and weight decays as (n,) arrays
                a['lr'], a['wd'] = shared[0][i], shared[1][i]
            outs.append(step(xp, a, *arrays[i * k:(i + 1) * k],
                             *(() if preloaded else shared)))
        return tuple(outs)
    return compute


def _multi_op(name, step, group, mutated, attrs, doc, *, tail=(), count='num_weights',
              per_weight=None, master=False):
    """Register the multi-tensor update ``name``: ``step(xp, attrs, *group arrays, *tail)`` is
    one weight's update (a single-weight operator's compute); ``group`` the per-weight input
    names, ``mutated`` those updated in place; ``per_weight`` maps the tuple attributes to the
    single update's (``lrs`` -> ``lr``)."""
    per_weight = {'lrs': 'lr', 'wds': 'wd'} if per_weight is None else per_weight
    op = OpDef(name, variadic=True, list_inputs=_multi_list_inputs(group, tail, count),
               aux=_multi_aux(mutated, count), attrs=attrs, doc=doc,
               num_outputs=lambda params: params[count], check=_check_multi(count, per_weight),
               compute=_multi_compute(step, group, tail, count, per_weight),
               infer_shape=_multi_infer_shape(group, tail, count),
               infer_type=_multi_infer_type(group, tail, count, master),
               gradient=zero_gradient)
    return register_op(op)


def _multi_attrs(per_weight=True, **extra):
    attrs = dict(lrs=FloatTuple(doc='learning rates'),
                 wds=FloatTuple(doc='weight decays')) if per_weight else {}
    attrs.update(extra)
    attrs.update(rescale_grad=Float(1.0), clip_gradient=Float(-1.0),
                 num_weights=Int(1, doc='the number of weights updated'))
    return attrs


def _compute_of(name):
    return get(name).compute


_MULTI_DOC = """

``*data``: for each of the ``num_weights`` weights {group}{tail}. Returns the new weights (their
dtype); {states}. Give ``num_weights``."""

_SGD_FAMILY = (   # (single update, per-weight inputs, updated in place, master copy, states)
    ('sgd_update', ('weight', 'grad'), (), False, 'nothing else changes'),
    ('sgd_mom_update', ('weight', 'grad', 'mom'), ('mom',), False,
     'each ``mom`` is updated in place'),
    ('mp_sgd_update', ('weight', 'grad', 'weight32'), ('weight32',), True,
     'each master copy ``weight32`` (float32) is updated in place'),
    ('mp_sgd_mom_update', ('weight', 'grad', 'mom', 'weight32'), ('mom', 'weight32'), True,
     'each ``mom`` and master copy ``weight32`` (float32) is updated in place'),
)


def _register_multi_sgd(preloaded):
    """``multi_<sgd update>`` (per-weight ``lrs``/``wds`` attributes) or
    ``preloaded_multi_<sgd update>`` (``lrs``/``wds`` as trailing (num_weights,) arrays)."""
    prefix = 'preloaded_multi_' if preloaded else 'multi_'
    tail = ', then the ``lrs`` and ``wds`` arrays' if preloaded else ''
    for single, group, mutated, master, states in _SGD_FAMILY:
        momentum = _MOMENTUM if 'mom' in group else {}
        _multi_op(prefix + single, _compute_of(single), group, mutated,
                  _multi_attrs(not preloaded, **momentum),
                  tail=('lrs', 'wds') if preloaded else (), per_weight={} if preloaded else None,
                  master=master, doc=f'``{single}`` of several weights.' + _MULTI_DOC.format(
                      group=', '.join(f'``{g}``' for g in group), tail=tail, states=states))


_register_multi_sgd(preloaded=False)
_register_multi_sgd(preloaded=True)

_MULTI_ADAMW = dict(lrs=FloatTuple(), beta1=Float(0.9), beta2=Float(0.999), epsilon=Float(1e-8),
                    wds=FloatTuple(), etas=FloatTuple(), clip_gradient=Float(-1.0),
                    num_weights=Int(1))
_ADAMW_KEYS = {'lrs': 'lr', 'wds': 'wd', 'etas': 'eta'}

_multi_op('_multi_adamw_update', _compute_of('_adamw_update'), ('weight', 'grad', 'mean', 'var'),
          ('mean', 'var'), _MULTI_ADAMW, tail=('rescale_grad',), per_weight=_ADAMW_KEYS,
          doc='``_adamw_update`` of several weights (``nd.contrib.multi_adamw_update``).'
          + _MULTI_DOC.format(group='``weight``, ``grad``, ``mean``, ``var``',
                              tail=', then ``rescale_grad`` (1,) (0, inf or NaN skip the step)',
                              states='``mean`` and ``var`` are updated in place'))
_multi_op('_multi_mp_adamw_update', _compute_of('_mp_adamw_update'),
          ('weight', 'grad', 'mean', 'var', 'weight32'), ('mean', 'var', 'weight32'),
          _MULTI_ADAMW, tail=('rescale_grad',), per_weight=_ADAMW_KEYS, master=True,
          doc='``_mp_adamw_update`` of several weights (``nd.contrib.multi_mp_adamw_update``).'
          + _MULTI_DOC.format(group='``weight``, ``grad``, ``mean``, ``var``, ``weight32``',
                              tail=', then ``rescale_grad`` (1,)',
                              states='``mean``, ``var`` and ``weight32`` are updated in place'))


def _norm(xp, x):
    """The 2-norm of ``x`` as a (1,) array (float32 sums for float16)."""
    x = x.astype(np.float32) if x.dtype == np.float16 else x
    return xp.sqrt((x * x).sum()).reshape(1)


_LAMB_PHASE1, _LAMB_PHASE2 = _compute_of('lamb_update_phase1'), _compute_of('lamb_update_phase2')
_MP_LAMB_PHASE1 = _compute_of('mp_lamb_update_phase1')
_MP_LAMB_PHASE2 = _compute_of('mp_lamb_update_phase2')


def _lamb_step(xp, a, weight, grad, mean, var):
    direction = _LAMB_PHASE1(xp, a, weight, grad, mean, var)
    return _LAMB_PHASE2(xp, a, weight, direction, _norm(xp, weight), _norm(xp, direction))


def _mp_lamb_step(xp, a, weight, grad, mean, var, weight32):
    direction = _MP_LAMB_PHASE1(xp, a, weight, grad, mean, var, weight32)
    return _MP_LAMB_PHASE2(xp, a, weight, direction, _norm(xp, weight32), _norm(xp, direction),
                           weight32)


_MULTI_LAMB = dict(learning_rates=FloatTuple(), beta1=Float(0.9), beta2=Float(0.999),
                   epsilon=Float(1e-6), wds=FloatTuple(), rescale_grad=Float(1.0),
                   lower_bound=Float(-1.0), upper_bound=Float(-1.0), clip_gradient=Float(-1.0),
                   bias_correction=Bool(True), step_count=Shape(), num_tensors=Int(1))
_LAMB_KEYS = {'learning_rates': 'lr', 'wds': 'wd', 'step_count': 't'}
_LAMB_DOC = """

Per tensor: ``lamb_update_phase1`` with ``t = step_count[i]``, then ``lamb_update_phase2`` with
the 2-norms of the weight{master} and of the step. ``*data``: for each of the ``num_tensors``
tensors {group}. Returns the new weights; {states}. Give ``num_tensors``."""

_multi_op('_multi_lamb_update', _lamb_step, ('weight', 'grad', 'mean', 'var'), ('mean', 'var'),
          _MULTI_LAMB, count='num_tensors', per_weight=_LAMB_KEYS,
          doc='LAMB of several weights (``nd.contrib.multi_lamb_update``).' + _LAMB_DOC.format(
              master='', group='``weight``, ``grad``, ``mean``, ``var``',
              states='``mean`` and ``var`` are updated in place'))
_multi_op('_multi_mp_lamb_update', _mp_lamb_step, ('weight', 'grad', 'mean', 'var', 'weight32'),
          ('mean', 'var', 'weight32'), _MULTI_LAMB, count='num_tensors', per_weight=_LAMB_KEYS,
          master=True,
          doc='LAMB of several float16 weights through float32 master copies '
          '(``nd.contrib.multi_mp_lamb_update``).' + _LAMB_DOC.format(
              master=' copy', group='``weight``, ``grad``, ``mean``, ``var``, ``weight32``',
              states='``mean``, ``var`` and ``weight32`` are updated in place'))


# ---- sums of squares, LARS, reset ----------------------------------------------------------------

def _count_inputs(count):
    def check(attrs):
        if attrs[count] < 1:
            raise ValueError(f'{count} must be at least 1, got {attrs[count]}')
    return check


def _array_names(attrs):
    return tuple(f'array_{i}' for i in range(attrs.num_arrays))


def _check_num_arrays(attrs, given):
    if given != attrs.num_arrays:
        raise ShapeError(f'num_arrays={attrs.num_arrays} but {given} inputs are given')


def _sum_sq_shape(attrs, *shapes):
    _check_num_arrays(attrs, len(shapes))
    return list(shapes), [(attrs.num_arrays,)]


def _sum_sq_type(attrs, *dtypes):
    merged = _merge_dtype(dtypes, 'the arrays')
    return [merged] * len(dtypes), [np.dtype(np.float32)]


@register('multi_sum_sq', variadic='num_arrays', list_inputs=_array_names)
class multi_sum_sq:
    """The sum of squares of each of ``num_arrays`` arrays (of one dtype, any shapes) ->
    (num_arrays,) float32 (accumulated in float64 here). LARS takes norms with it. Not
    differentiable, as in MXNet."""
    attrs = dict(num_arrays=Int())
    check = _count_inputs('num_arrays')
    infer_shape = _sum_sq_shape
    infer_type = _sum_sq_type
    gradient = zero_gradient

    def compute(xp, attrs, *arrays):
        sums = [(a.astype(np.float64) ** 2).sum() for a in arrays]
        return xp.stack(sums).astype(np.float32)


@register('multi_lars')
class multi_lars:
    """LARS's layer-wise learning rates, for (n,) arrays ``lrs``, ``weights_sum_sq``,
    ``grads_sum_sq`` and ``wds``:
    ``lrs * eta * ||w|| / (||g|| * rescale_grad + wds * ||w|| + eps)`` where both sums of
    squares are positive, ``lrs`` elsewhere. Not differentiable, as in MXNet."""
    inputs = ('lrs', 'weights_sum_sq', 'grads_sum_sq', 'wds')
    attrs = dict(eta=Float(), eps=Float(), rescale_grad=Float(1.0))
    gradient = zero_gradient

    def infer_shape(attrs, *shapes):
        ins, outs = same_shape(attrs, *shapes)
        if outs[0] is not None and len(outs[0]) != 1:
            raise ShapeError(f'the inputs must be 1-d (one value per weight), got {outs[0]}')
        return ins, outs

    def infer_type(attrs, *dtypes):
        ins, outs = same_dtype(attrs, *dtypes)
        if outs[0] is not None and outs[0].kind != 'f':
            raise DTypeError(f'multi_lars takes floating point arrays, not {outs[0].name}')
        return ins, outs

    def compute(xp, attrs, lrs, weights_sum_sq, grads_sum_sq, wds):
        active = (weights_sum_sq > 0) & (grads_sum_sq > 0)
        w = xp.sqrt(xp.where(active, weights_sum_sq, 1))
        g = xp.sqrt(xp.where(active, grads_sum_sq, 1))
        scaled = lrs * attrs.eta * w / (g * attrs.rescale_grad + wds * w + attrs.eps)
        return xp.where(active, scaled, lrs).astype(lrs.dtype, copy=False)


@register('reset_arrays', variadic='num_arrays', list_inputs=_array_names)
class reset_arrays:
    """Sets each of ``num_arrays`` arrays to zero in place (what ``zero_grad`` runs); no
    outputs."""
    attrs = dict(num_arrays=Int())
    aux = _array_names
    num_outputs = 0
    check = _count_inputs('num_arrays')
    gradient = zero_gradient

    def infer_shape(attrs, *shapes):
        _check_num_arrays(attrs, len(shapes))
        return list(shapes), []

    def infer_type(attrs, *dtypes):
        return list(dtypes), []

    def compute(xp, attrs, *arrays):
        for a in arrays:
            a[...] = 0
        return ()


# ---- nd.contrib / sym.contrib: MXNet's Python wrappers of the multi-tensor AdamW and LAMB ------

def _flatten(*lists):
    return [x for group in zip(*lists) for x in group]


def _multi_adamw_function(ops):
    def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None,
                           name=None, size=0, **kwargs):
        """AdamW of several weights: lists of weights, gradients, means and variances;
        ``rescale_grad`` a number or a (1,) array; per weight its ``lrs``, ``wds``, ``etas``."""
        data = _flatten(weights, grads, mean, var) + [_scale_array(ops, rescale_grad,
                                                                   weights[0])]
        return ops._multi_adamw_update(*data, num_weights=size or len(weights), lrs=lrs,
                                       wds=wds, etas=etas, **_frontend_kwargs(out, name, kwargs))
    return multi_adamw_update


def _multi_mp_adamw_function(ops):
    def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds,
                              etas, out=None, name=None, size=0, **kwargs):
        """``multi_adamw_update`` through float32 master copies ``weights32``."""
        data = _flatten(weights, grads, mean, var, weights32) + [
            _scale_array(ops, rescale_grad, weights[0])]
        return ops._multi_mp_adamw_update(*data, num_weights=size or len(weights), lrs=lrs,
                                          wds=wds, etas=etas,
                                          **_frontend_kwargs(out, name, kwargs))
    return multi_mp_adamw_update


def _multi_lamb_function(ops):
    def multi_lamb_update(weights, grads, mean, var, step_count, lrs, wds, out=None,
                          num_tensors=0, **kwargs):
        """LAMB of several weights: lists of weights, gradients, means and variances; per
        tensor its ``step_count``, learning rate (``lrs``) and weight decay (``wds``)."""
        return ops._multi_lamb_update(*_flatten(weights, grads, mean, var),
                                      num_tensors=num_tensors or len(weights),
                                      step_count=step_count, learning_rates=lrs, wds=wds,
                                      **_frontend_kwargs(out, None, kwargs))
    return multi_lamb_update


def _multi_mp_lamb_function(ops):
    def multi_mp_lamb_update(weights, grads, mean, var, weights32, step_count, lrs, wds,
                             out=None, num_tensors=0, **kwargs):
        """``multi_lamb_update`` through float32 master copies ``weights32``."""
        return ops._multi_mp_lamb_update(*_flatten(weights, grads, mean, var, weights32),
                                         num_tensors=num_tensors or len(weights),
                                         step_count=step_count, learning_rates=lrs, wds=wds,
                                         **_frontend_kwargs(out, None, kwargs))
    return multi_mp_lamb_update


PYTHON_FUNCTIONS.update({
    ('contrib', 'multi_adamw_update'): _multi_adamw_function,
    ('contrib', 'multi_mp_adamw_update'): _multi_mp_adamw_function,
    ('contrib', 'multi_lamb_update'): _multi_lamb_function,
    ('contrib', 'multi_mp_lamb_update'): _multi_mp_lamb_function,
})
