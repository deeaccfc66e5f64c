"""Fused optimizer updates: ``sgd_update``, ``sgd_mom_update``, ``adam_update``, ... and their
multi-precision (``mp_``) forms, as MXNet 1.9.1's ``src/operator/optimizer_op.cc`` and
``contrib/adamw.cc`` define them; their multi-tensor forms (``multi_sgd_update``,
``preloaded_multi_sgd_mom_update``, ``_multi_adamw_update``, ``_multi_lamb_update``, ...), which
update ``num_weights`` weights in one call; and what LARS and ``zero_grad`` use:
``multi_sum_sq``, ``multi_lars``, ``reset_arrays``. ``nd.contrib``/``sym.contrib`` get MXNet's
Python functions around the AdamW and LAMB operators (``adamw_update``, ``multi_lamb_update``,
...: lists of arrays, ``rescale_grad`` as a number), through ``frontend.PYTHON_FUNCTIONS``.

An update takes ``weight``, ``grad`` and the optimizer's state arrays and returns the new
weight; the states (momentum, mean, variance, ...) are updated *in place*, so they are the
operator's auxiliary (mutated) inputs. The weight itself is not mutated: as in MXNet, an
optimizer writes the result back with ``out=weight``. The ``mp_`` forms keep a float32 master
copy ``weight32`` of a float16 weight: the rule runs on the master copy (with the gradient cast
to float32), the master copy is updated in place and the output is its cast to the weight's
dtype. None of these operators is differentiable: their gradient is ``zero_gradient``
(nothing flows back), as in MXNet, which registers no gradient for them.

Every rule is written once, as a function ``rule(xp, attrs, weight, grad, *inputs)`` returning
``(output, *new_states)``; ``_update_op`` builds the operator (and its ``mp_`` form) from it.
``clip_gradient`` (``clip_grad`` for FTML) clips into ``[-c, c]`` when ``c >= 0``; a negative
value (the default -1) turns clipping off, as MXNet's kernels do.

Differences from MXNet 1.9.1, on purpose (MXNet's behaviour is a bug in each case):

* ``nag_mom_update`` with ``out=weight`` (how the NAG optimizer calls it): MXNet's kernel writes
  the new weight before it updates ``mom``, and then reads the *new* weight for the ``wd * w``
  term of the momentum; ``mp_nag_mom_update`` always does so. Here the momentum uses the weight
  before the step, so it does not depend on whether ``out`` aliases ``weight``. The two agree
  when ``wd == 0``.
* ``mp_lamb_update_phase2`` leaves ``weight32`` unchanged in MXNet, so LAMB with
  ``multi_precision`` restarts every step from the initial master weights. Here it updates
  ``weight32`` in place like every other ``mp_`` operator.
* ``_adamw_update`` skips the step when ``rescale_grad`` is 0, inf or NaN; without ``out=weight``
  MXNet then returns an uninitialised array, here a copy of the weight.
* ``_sparse_adagrad_update`` (MXNet: row_sparse gradients only, ``wd`` must be 0) works on dense
  arrays and applies ``wd`` as the AdaGrad optimizer does (``w -= lr * wd * w``).
* The master copy and the states of an ``mp_`` operator may be float64 too (MXNet accepts only
  float32 there); they default to float32.
* MXNet 1.9.1 cannot compose these operators into Symbols ("Not enough argument to call
  operator"); here they compose, and their states are listed as auxiliary states.
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
from .registry import (OpDef, Params, get, merge_shape, register, register_op, same_dtype,
                       same_shape, workspace, zero_gradient)

__all__ = []


# -------------------------------------------------------------------------------------------------
# Shared pieces of the rules
# -------------------------------------------------------------------------------------------------

def _clip(xp, x, bound):
    """MXNet's ``clip::Map``: into [-bound, bound] when bound >= 0, untouched otherwise."""
    return xp.clip(x, -bound, bound) if bound is not None and bound >= 0 else x


def _rescaled(xp, attrs, grad, clip_key='clip_gradient'):
    """``clip(rescale_grad * grad)``: the gradient most rules start from."""
    return _clip(xp, attrs.rescale_grad * grad, attrs[clip_key])


def _step(xp, a, g):
    """``lr * clip(rescale_grad * grad)``: SGD's step (one product when nothing is clipped)."""
    if a.clip_gradient is None or a.clip_gradient < 0:
        return (a.lr * a.rescale_grad) * g
    return a.lr * _rescaled(xp, a, g)


def _sign(x):
    """MXNet's ``(x > 0) - (x < 0)``: 0 at 0 and at NaN (numpy's sign gives NaN there)."""
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _first(xp, x, like):
    """The (1,) array ``x`` in the dtype of ``like``: broadcasts against it, no device sync."""
    return x.reshape(-1)[:1].astype(like.dtype, copy=False)


# -------------------------------------------------------------------------------------------------
# The rules: (xp, attrs, weight, grad, *inputs) -> (output, *new states)
# -------------------------------------------------------------------------------------------------

def _sgd(xp, a, w, g):
    return (1 - a.lr * a.wd) * w - _step(xp, a, g),


def _sgd_mom(xp, a, w, g, mom):
    mom = a.momentum * mom - a.lr * a.wd * w - _step(xp, a, g)
    return w + mom, mom


def _nag_mom(xp, a, w, g, mom):
    grad = _rescaled(xp, a, g) + a.wd * w
    mom = a.momentum * mom - a.lr * grad
    return w + a.momentum * mom - a.lr * grad, mom


def _adam(xp, a, w, g, mean, var):
    grad = _clip(xp, a.rescale_grad * g + a.wd * w, a.clip_gradient)
    mean = a.beta1 * mean + (1 - a.beta1) * grad
    var = a.beta2 * var + (1 - a.beta2) * grad * grad
    return w - a.lr * mean / (xp.sqrt(var) + a.epsilon), mean, var


def _adamw(xp, a, w, g, mean, var, rescale_grad):
    scale = _first(xp, rescale_grad, g)
    # a non-finite or zero scale (a loss scaler's overflow signal) skips the step
    ok = xp.isfinite(scale) & (scale != 0)
    with np.errstate(all='ignore'):
        grad = _clip(xp, scale * g, a.clip_gradient)
        new_mean = a.beta1 * mean + (1 - a.beta1) * grad
        new_var = a.beta2 * var + (1 - a.beta2) * grad * grad
        out = w - a.eta * (a.lr * new_mean / (xp.sqrt(new_var) + a.epsilon) + a.wd * w)
    return (xp.where(ok, out, w), xp.where(ok, new_mean, mean), xp.where(ok, new_var, var))


def _rmsprop(xp, a, w, g, n):
    grad = _clip(xp, a.rescale_grad * g + a.wd * w, a.clip_gradient)
    n = (1 - a.gamma1) * grad * grad + a.gamma1 * n
    return _clip(xp, w - a.lr * grad / xp.sqrt(n + a.epsilon), a.clip_weights), n


def _rmspropalex(xp, a, w, g, n, mean, delta):
    grad = _clip(xp, a.rescale_grad * g + a.wd * w, a.clip_gradient)
    n = (1 - a.gamma1) * grad * grad + a.gamma1 * n
    mean = (1 - a.gamma1) * grad + a.gamma1 * mean
    delta = a.gamma2 * delta - a.lr * grad / xp.sqrt(n - mean * mean + a.epsilon)
    return _clip(xp, w + delta, a.clip_weights), n, mean, delta


def _ftrl(xp, a, w, g, z, n):
    grad = _rescaled(xp, a, g)
    z = z + grad - (xp.sqrt(n + grad * grad) - xp.sqrt(n)) * w / a.lr
    n = n + grad * grad
    out = (_sign(z) * a.lamda1 - z) / ((a.beta + xp.sqrt(n)) / a.lr + a.wd)
    return xp.where(xp.abs(z) > a.lamda1, out, 0).astype(w.dtype, copy=False), z, n


def _ftml(xp, a, w, g, d, v, z):
    grad = _clip(xp, a.rescale_grad * g + a.wd * w, a.clip_grad)
    v = a.beta2 * v + (1 - a.beta2) * grad * grad
    d_t = (1 - a.beta1 ** a.t) / a.lr * (xp.sqrt(v / (1 - a.beta2 ** a.t)) + a.epsilon)
    z = a.beta1 * z + (1 - a.beta1) * grad - (d_t - a.beta1 * d) * w
    return -z / d_t, d_t, v, z


def _signsgd(xp, a, w, g):
    # MXNet takes the sign of the raw gradient: rescaling and clipping do not change it
    return (1 - a.lr * a.wd) * w - a.lr * _sign(g),


def _signum(xp, a, w, g, mom):
    # the state holds minus the momentum of the paper, as MXNet's kernel stores it
    mom = (a.momentum * mom - (1 - a.momentum) * a.wd * w
           - (1 - a.momentum) * _rescaled(xp, a, g))
    return (1 - a.lr * a.wd_lh) * w + a.lr * _sign(mom), mom


def _lamb_phase1(xp, a, w, g, mean, var):
    grad = _rescaled(xp, a, g)
    mean = a.beta1 * mean + (1 - a.beta1) * grad
    var = a.beta2 * var + (1 - a.beta2) * grad * grad
    m, v = mean, var
    if a.bias_correction:
        m = mean / (1 - a.beta1 ** a.t)
        v = var / (1 - a.beta2 ** a.t)
    return m / (xp.sqrt(v) + a.epsilon) + a.wd * w, mean, var


def _lamb_phase2(xp, a, w, g, r1, r2):
    r1 = _first(xp, r1, w)
    r2 = _first(xp, r2, w)
    if a.lower_bound >= 0:
        r1 = xp.maximum(r1, a.lower_bound)
    if a.upper_bound >= 0:
        r1 = xp.minimum(r1, a.upper_bound)
    with np.errstate(all='ignore'):
        ratio = xp.where((r1 == 0) | (r2 == 0), 1, r1 / r2).astype(w.dtype, copy=False)
    return w - a.lr * ratio * g,


def _adagrad(xp, a, w, g, history):
    grad = _rescaled(xp, a, g)
    history = history + grad * grad
    return w - a.lr * (grad / xp.sqrt(history + a.epsilon) + a.wd * w), history


def _group_adagrad(xp, a, w, g, history):
    grad = _rescaled(xp, a, g)
    history = history + (grad * grad).mean(axis=1, keepdims=True)
    return w - a.lr * grad / xp.sqrt(history + a.epsilon), history


# -------------------------------------------------------------------------------------------------
# In-place forms of the common rules: (xp, attrs, out, weight, grad, *states) -> out
#
# The same operations in the same order as the rules above (so the same bits), written into the
# workspace and ``out`` (which may be ``weight``: how an optimizer calls them), the states
# updated in place: no array is allocated.
# -------------------------------------------------------------------------------------------------

def _scratch(xp, like, count=1):
    buf = workspace(xp, (count,) + like.shape, like.dtype)
    return buf[0] if count == 1 else buf


def _rescaled_into(xp, a, g, buf):
    """``clip(rescale_grad * grad)`` written into ``buf``."""
    xp.multiply(g, a.rescale_grad, out=buf)
    bound = a.clip_gradient
    if bound is not None and bound >= 0:
        xp.clip(buf, -bound, bound, out=buf)
    return buf


def _step_into(xp, a, g, buf):
    """``_step`` written into ``buf``."""
    if a.clip_gradient is None or a.clip_gradient < 0:
        return xp.multiply(g, a.lr * a.rescale_grad, out=buf)
    _rescaled_into(xp, a, g, buf)
    buf *= a.lr
    return buf


def _sgd_into(xp, a, out, w, g):
    step = _step_into(xp, a, g, _scratch(xp, g))
    if a.wd:
        xp.multiply(w, 1 - a.lr * a.wd, out=out)
    elif out is not w:
        out[...] = w
    return xp.subtract(out, step, out=out)


def _sgd_mom_into(xp, a, out, w, g, mom):
    tmp = _scratch(xp, g)
    mom *= a.momentum
    if a.wd:
        mom -= xp.multiply(w, a.lr * a.wd, out=tmp)
    mom -= _step_into(xp, a, g, tmp)
    return xp.add(w, mom, out=out)


def _nag_mom_into(xp, a, out, w, g, mom):
    grad, step = _scratch(xp, g, 2)
    _rescaled_into(xp, a, g, grad)
    grad += xp.multiply(w, a.wd, out=step)
    mom *= a.momentum
    xp.multiply(grad, a.lr, out=step)
    mom -= step
    xp.add(w, xp.multiply(mom, a.momentum, out=grad), out=out)
    return xp.subtract(out, step, out=out)


def _adam_into(xp, a, out, w, g, mean, var):
    grad, tmp = _scratch(xp, g, 2)
    xp.multiply(g, a.rescale_grad, out=grad)
    grad += xp.multiply(w, a.wd, out=tmp)
    if a.clip_gradient is not None and a.clip_gradient >= 0:
        xp.clip(grad, -a.clip_gradient, a.clip_gradient, out=grad)
    mean *= a.beta1
    mean += xp.multiply(grad, 1 - a.beta1, out=tmp)
    var *= a.beta2
    xp.multiply(grad, 1 - a.beta2, out=tmp)
    var += xp.multiply(tmp, grad, out=tmp)
    xp.sqrt(var, out=tmp)
    tmp += a.epsilon
    xp.multiply(mean, a.lr, out=grad)
    grad /= tmp
    return xp.subtract(w, grad, out=out)


_INTO = {_sgd: _sgd_into, _sgd_mom: _sgd_mom_into, _nag_mom: _nag_mom_into, _adam: _adam_into}


def _make_compute_into(rule):
    """``compute_into`` of a plain (not ``mp_``) update from its rule's in-place form."""
    into = _INTO.get(rule)
    if into is None:
        return None

    def compute_into(xp, attrs, out, *arrays):
        return into(xp, attrs, out, *arrays)
    return compute_into


# -------------------------------------------------------------------------------------------------
# Building the operators
# -------------------------------------------------------------------------------------------------

_SCALARS = ('r1', 'r2', 'rescale_grad')      # (1,)-shaped inputs, read only


def _make_compute(rule, inputs, states, master, writes_master, out_master_dtype):
    """``compute`` from a rule: runs it, writes the states (and master copy) back in place."""
    state_pos = [inputs.index(s) for s in states]
    master_pos = inputs.index('weight32') if master else None

    def compute(xp, attrs, *arrays):
        args = list(arrays)
        weight = arrays[0]
        if master:
            w32 = arrays[master_pos]
            # the rule runs on the master copy, with the gradient in its precision
            args[0] = w32
            args[1] = arrays[1].astype(w32.dtype, copy=False)
            del args[master_pos]
        result = rule(xp, attrs, *args)
        out, new_states = result[0], result[1:]
        for pos, new in zip(state_pos, new_states):
            arrays[pos][...] = new
        if master and writes_master:
            arrays[master_pos][...] = out
        if master and out_master_dtype:
            return out.astype(arrays[master_pos].dtype, copy=False)
        return out.astype(weight.dtype, copy=False)
    return compute


def _make_infer_shape(inputs, history=False):
    def infer_shape(attrs, *shapes):
        merged = None
        for name, shape in zip(inputs, shapes):
            if name not in _SCALARS and not (history and name == 'history'):
                merged = merge_shape(merged, shape, f'{name} must have the shape of weight')
        ins = []
        for name, shape in zip(inputs, shapes):
            if name in _SCALARS:
                if shape is not None and (len(shape) != 1 or shape[0] not in (0, 1)):
                    raise ShapeError(f'{name} must have shape (1,), got {tuple(shape)}')
                ins.append((1,))
            elif history and name == 'history':
                ins.append(_group_history_shape(merged, shape))
            else:
                ins.append(merged)
        return ins, [merged]
    return infer_shape


def _group_history_shape(weight, history):
    """Group AdaGrad: one accumulator per row of a 2-d weight, shape (rows, 1)."""
    if weight is not None and len(weight) != 2:
        raise ShapeError(f'weight must be 2-d, got {tuple(weight)}')
    expected = (weight[0], 1) if weight is not None else (0, 1)
    return merge_shape(expected, history, 'history must have shape (rows of weight, 1)')


def _make_infer_type(inputs, master, out_master_dtype):
    """Plain updates: one dtype for every array. ``mp_`` ones: ``weight`` and ``grad`` share the
    weight's dtype, the master copy and the states (and LAMB's ``g``) theirs, float32 by default.
    The (1,) inputs take their own dtype (the weight's, or the master's, when unknown)."""
    low = (tuple(n for n in ('weight', 'grad') if n in inputs) if master
           else tuple(n for n in inputs if n not in _SCALARS))
    high = tuple(n for n in inputs if n not in low and n not in _SCALARS)

    def infer_type(attrs, *dtypes):
        named = dict(zip(inputs, dtypes))
        weight = _merge_dtype([named[n] for n in low], ', '.join(low))
        state = weight
        if master:
            state = _merge_dtype([named[n] for n in high], ', '.join(high))
            state = np.dtype(np.float32) if state is None else state
        ins = []
        for name in inputs:
            if name in _SCALARS:
                ins.append(named[name] if named[name] is not None else state)
            else:
                ins.append(weight if name in low else state)
        return ins, [state if out_master_dtype else weight]
    return infer_type


def _merge_dtype(dtypes, what):
    merged = None
    for d in dtypes:
        if d is None:
            continue
        d = np.dtype(d)
        if merged is not None and d != merged:
            raise DTypeError(f'{what} must have the same dtype, got {merged.name} and {d.name}')
        merged = d
    return merged


def _update_op(name, rule, inputs, states, attrs, doc, *, aliases=(), master=False,
               writes_master=True, out_master_dtype=False, history=False):
    """Register the update operator ``name``.

    ``inputs`` are MXNet's input names in order, ``states`` those mutated in place;
    ``master`` marks an ``mp_`` operator whose ``weight32`` input is the master copy
    (updated in place unless ``writes_master`` is False).
    """
    aux = tuple(states) + (('weight32',) if master and writes_master else ())
    op = OpDef(name, inputs=inputs, aux=aux, attrs=attrs, aliases=aliases, doc=doc,
               compute=_make_compute(rule, inputs, states, master, writes_master,
                                     out_master_dtype),
               infer_shape=_make_infer_shape(inputs, history),
               infer_type=_make_infer_type(inputs, master, out_master_dtype),
               gradient=zero_gradient, inplace=((0, 0),),
               compute_into=None if master else _make_compute_into(rule))
    return register_op(op)


def _common(**extra):
    """The attributes most updates share (MXNet's order: lr, extras, wd, rescale_grad, clip)."""
    attrs = dict(lr=Float(doc='learning rate'))
    attrs.update(extra)
    attrs.update(wd=Float(0.0, doc='weight decay'), rescale_grad=Float(1.0),
                 clip_gradient=Float(-1.0, doc='clip into [-c, c] when c >= 0'))
    return attrs


def _lazy(attrs):
    # lazy_update only matters for row_sparse gradients, which hybridlib does not have
    return dict(attrs, lazy_update=Bool(True))


_MOMENTUM = dict(momentum=Float(0.0))
_ADAM = dict(beta1=Float(0.9), beta2=Float(0.999), epsilon=Float(1e-8))
_LAMB1 = dict(beta1=Float(0.9), beta2=Float(0.999), epsilon=Float(1e-6), t=Int(),
              bias_correction=Bool(True), wd=Float(), rescale_grad=Float(1.0),
              clip_gradient=Float(-1.0))
_LAMB2 = dict(lr=Float(), lower_bound=Float(-1.0), upper_bound=Float(-1.0))
_ADAMW = dict(lr=Float(), beta1=Float(0.9), beta2=Float(0.999), epsilon=Float(1e-8),
              wd=Float(0.0), eta=Float(), clip_gradient=Float(-1.0))
_RMS = dict(lr=Float(), gamma1=Float(0.95), epsilon=Float(1e-8), wd=Float(0.0),
            rescale_grad=Float(1.0), clip_gradient=Float(-1.0), clip_weights=Float(-1.0))
_RMS_ALEX = dict(lr=Float(), gamma1=Float(0.95), gamma2=Float(0.9), epsilon=Float(1e-8),
                 wd=Float(0.0), rescale_grad=Float(1.0), clip_gradient=Float(-1.0),
                 clip_weights=Float(-1.0))

# ---- SGD, NAG ------------------------------------------------------------------------------------
_update_op('sgd_update', _sgd, ('weight', 'grad'), (), _lazy(_common()), """\
SGD: ``weight = (1 - lr * wd) * weight - lr * clip(rescale_grad * grad)``.

``weight``, ``grad`` (any shape, same) -> the new weight.""", aliases=('_sparse_sgd_update',))

_update_op('sgd_mom_update', _sgd_mom, ('weight', 'grad', 'mom'), ('mom',),
           _lazy(_common(**_MOMENTUM)), """\
SGD with momentum: ``mom = momentum * mom - lr * wd * weight - lr * clip(rescale_grad * grad)``,
``weight = weight + mom``.

``weight``, ``grad``, ``mom`` (same shape) -> the new weight; ``mom`` is updated in place.""",
           aliases=('_sparse_sgd_mom_update',))

_update_op('mp_sgd_update', _sgd, ('weight', 'grad', 'weight32'), (), _lazy(_common()), """\
``sgd_update`` on the float32 master copy ``weight32`` (updated in place) of a float16 weight.

``weight``, ``grad`` (float16), ``weight32`` (float32) -> the new weight (weight's dtype).""",
           master=True)

_update_op('mp_sgd_mom_update', _sgd_mom, ('weight', 'grad', 'mom', 'weight32'), ('mom',),
           _lazy(_common(**_MOMENTUM)), """\
``sgd_mom_update`` on the float32 master copy ``weight32``; ``mom`` and ``weight32`` are updated
in place. -> the new weight in the weight's dtype.""", master=True)

_update_op('nag_mom_update', _nag_mom, ('weight', 'grad', 'mom'), ('mom',), _common(**_MOMENTUM),
           """\
Nesterov momentum: ``grad = clip(rescale_grad * grad) + wd * weight``,
``mom = momentum * mom - lr * grad``, ``weight = weight + momentum * mom - lr * grad``.

``weight``, ``grad``, ``mom`` (same shape) -> the new weight; ``mom`` is updated in place.""")

_update_op('mp_nag_mom_update', _nag_mom, ('weight', 'grad', 'mom', 'weight32'), ('mom',),
           _common(**_MOMENTUM), """\
``nag_mom_update`` on the float32 master copy ``weight32``; ``mom`` and ``weight32`` are updated
in place. -> the new weight in the weight's dtype.""", master=True)

# ---- Adam, AdamW ---------------------------------------------------------------------------------
_update_op('adam_update', _adam, ('weight', 'grad', 'mean', 'var'), ('mean', 'var'),
           _lazy(_common(**_ADAM)), """\
Adam (without bias correction: the optimizer folds it into ``lr``):
``g = clip(rescale_grad * grad + wd * weight)``, ``mean = beta1 * mean + (1 - beta1) * g``,
``var = beta2 * var + (1 - beta2) * g^2``, ``weight -= lr * mean / (sqrt(var) + epsilon)``.

``weight``, ``grad``, ``mean``, ``var`` (same shape) -> the new weight; ``mean`` and ``var`` are
updated in place.""", aliases=('_sparse_adam_update',))

_update_op('_adamw_update', _adamw, ('weight', 'grad', 'mean', 'var', 'rescale_grad'),
           ('mean', 'var'), _ADAMW, """\
AdamW (decoupled weight decay): ``g = clip(rescale_grad * grad)``, ``mean``/``var`` as Adam,
``weight -= eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)``. ``rescale_grad`` is a
(1,) array; when it is 0, inf or NaN nothing changes (the step is skipped).

``weight``, ``grad``, ``mean``, ``var`` (same shape), ``rescale_grad`` (1,) -> the new weight.""")

_update_op('_mp_adamw_update', _adamw,
           ('weight', 'grad', 'mean', 'var', 'weight32', 'rescale_grad'), ('mean', 'var'),
           _ADAMW, """\
``_adamw_update`` on the float32 master copy ``weight32`` (updated in place with ``mean`` and
``var``). -> the new weight in the weight's dtype.""", master=True)

# ---- RMSProp, Ftrl, FTML, Signum -----------------------------------------------------------------
_update_op('rmsprop_update', _rmsprop, ('weight', 'grad', 'n'), ('n',), _RMS, """\
RMSProp (Tieleman & Hinton): ``g = clip(rescale_grad * grad + wd * weight)``,
``n = (1 - gamma1) * g^2 + gamma1 * n``, ``weight -= lr * g / sqrt(n + epsilon)``, then the
weight is clipped into ``[-clip_weights, clip_weights]`` when ``clip_weights >= 0``.

``weight``, ``grad``, ``n`` (same shape) -> the new weight; ``n`` is updated in place.""")

_update_op('rmspropalex_update', _rmspropalex, ('weight', 'grad', 'n', 'g', 'delta'),
           ('n', 'g', 'delta'), _RMS_ALEX, """\
Centered RMSProp (Graves): ``n`` and ``g`` are running means of ``grad^2`` and ``grad``,
``delta = gamma2 * delta - lr * grad / sqrt(n - g^2 + epsilon)``, ``weight += delta``.

``weight``, ``grad``, ``n``, ``g``, ``delta`` (same shape) -> the new weight; the three states
are updated in place.""")

_update_op('ftrl_update', _ftrl, ('weight', 'grad', 'z', 'n'), ('z', 'n'),
           _common(lamda1=Float(0.01), beta=Float(1.0)), """\
FTRL-proximal: ``g = clip(rescale_grad * grad)``,
``z += g - (sqrt(n + g^2) - sqrt(n)) * weight / lr``, ``n += g^2``,
``weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd)`` where ``|z| > lamda1``,
else 0.

``weight``, ``grad``, ``z``, ``n`` (same shape) -> the new weight; ``z``, ``n`` in place.""",
           aliases=('_sparse_ftrl_update',))

_update_op('ftml_update', _ftml, ('weight', 'grad', 'd', 'v', 'z'), ('d', 'v', 'z'),
           dict(lr=Float(), beta1=Float(0.6), beta2=Float(0.999), epsilon=Float(1e-8), t=Int(),
                wd=Float(0.0), rescale_grad=Float(1.0), clip_grad=Float(-1.0)), """\
FTML at step ``t``: ``g = clip(rescale_grad * grad + wd * weight)``,
``v = beta2 * v + (1 - beta2) * g^2``,
``d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon)``,
``z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight``, ``weight = -z / d_t``,
``d = d_t``.

``weight``, ``grad``, ``d``, ``v``, ``z`` (same shape) -> the new weight; states in place.""")

_update_op('signsgd_update', _signsgd, ('weight', 'grad'), (), _common(), """\
signSGD: ``weight = (1 - lr * wd) * weight - lr * sign(grad)``.

``weight``, ``grad`` (same shape) -> the new weight.""")

_update_op('signum_update', _signum, ('weight', 'grad', 'mom'), ('mom',),
           dict(_common(**_MOMENTUM), wd_lh=Float(0.0)), """\
Signum: ``mom = momentum * mom - (1 - momentum) * (wd * weight + clip(rescale_grad * grad))``,
``weight = (1 - lr * wd_lh) * weight + lr * sign(mom)``.

``weight``, ``grad``, ``mom`` (same shape) -> the new weight; ``mom`` is updated in place.""")

# ---- LAMB ----------------------------------------------------------------------------------------
_update_op('lamb_update_phase1', _lamb_phase1, ('weight', 'grad', 'mean', 'var'),
           ('mean', 'var'), _LAMB1, """\
LAMB, phase 1: ``g = clip(rescale_grad * grad)``, ``mean``/``var`` as Adam (in place), and the
output ``mean_hat / (sqrt(var_hat) + epsilon) + wd * weight`` with the bias-corrected
``mean_hat = mean / (1 - beta1^t)``, ``var_hat = var / (1 - beta2^t)`` (or ``mean``, ``var``
without ``bias_correction``).

``weight``, ``grad``, ``mean``, ``var`` (same shape) -> the step direction ``g``.""")

_update_op('lamb_update_phase2', _lamb_phase2, ('weight', 'g', 'r1', 'r2'), (), _LAMB2, """\
LAMB, phase 2: ``r1`` (the weight's norm) is bounded to ``[lower_bound, upper_bound]`` (each
when >= 0); ``weight -= lr * r1 / r2 * g``, or ``lr * g`` when r1 or r2 is 0.

``weight``, ``g`` (same shape), ``r1``, ``r2`` (1,) -> the new weight.""")

_update_op('mp_lamb_update_phase1', _lamb_phase1,
           ('weight', 'grad', 'mean', 'var', 'weight32'), ('mean', 'var'), _LAMB1, """\
``lamb_update_phase1`` on the float32 master copy ``weight32`` (read only). -> ``g`` in float32.
""", master=True, writes_master=False, out_master_dtype=True)

_update_op('mp_lamb_update_phase2', _lamb_phase2, ('weight', 'g', 'r1', 'r2', 'weight32'), (),
           _LAMB2, """\
``lamb_update_phase2`` on the float32 master copy ``weight32``, updated in place (MXNet 1.9.1
leaves it unchanged, a bug). -> the new weight in the weight's dtype.""", master=True)

# ---- AdaGrad -------------------------------------------------------------------------------------
_update_op('_sparse_adagrad_update', _adagrad, ('weight', 'grad', 'history'), ('history',),
           dict(lr=Float(), epsilon=Float(1e-7), wd=Float(0.0), rescale_grad=Float(1.0),
                clip_gradient=Float(-1.0)), """\
AdaGrad: ``g = clip(rescale_grad * grad)``, ``history += g^2``,
``weight -= lr * (g / sqrt(history + epsilon) + wd * weight)`` (dense arrays here; MXNet's
operator takes row_sparse gradients and no ``wd``).

``weight``, ``grad``, ``history`` (same shape) -> the new weight; ``history`` in place.""")

_update_op('_contrib_group_adagrad_update', _group_adagrad, ('weight', 'grad', 'history'),
           ('history',), dict(lr=Float(), rescale_grad=Float(1.0), clip_gradient=Float(-1.0),
                              epsilon=Float(1e-5)), """\
Group AdaGrad: one accumulator per row, ``history += mean(g^2, axis=1, keepdims=True)`` with
``g = clip(rescale_grad * grad)``, ``weight -= lr * g / sqrt(history + epsilon)``.

``weight``, ``grad`` (rows, cols), ``history`` (rows, 1) -> the new weight; ``history`` in
place.""", history=True)


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


def _lamb_step(xp, a, weight, grad, mean, var):
    direction = _compute_of('lamb_update_phase1')(xp, a, weight, grad, mean, var)
    return _compute_of('lamb_update_phase2')(xp, a, weight, direction, _norm(xp, weight),
                                             _norm(xp, direction))


def _mp_lamb_step(xp, a, weight, grad, mean, var, weight32):
    direction = _compute_of('mp_lamb_update_phase1')(xp, a, weight, grad, mean, var, weight32)
    return _compute_of('mp_lamb_update_phase2')(xp, a, weight, direction, _norm(xp, weight32),
                                                _norm(xp, direction), weight32)


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


def _sum_sq_shape(attrs, *shapes):
    if len(shapes) != attrs.num_arrays:
        raise ShapeError(f'num_arrays={attrs.num_arrays} but {len(shapes)} inputs are given')
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
        if len(shapes) != attrs.num_arrays:
            raise ShapeError(f'num_arrays={attrs.num_arrays} but {len(shapes)} inputs are given')
        return list(shapes), []

    def infer_type(attrs, *dtypes):
        return list(dtypes), []

    def compute(xp, attrs, *arrays):
        for a in arrays:
            a[...] = 0
        return ()


# ---- nd.contrib / sym.contrib: MXNet's Python wrappers of the AdamW and LAMB operators ---------

def _scale_array(ops, value, like):
    """``rescale_grad`` as the (1,) float32 array the AdamW operators take (unless it is one)."""
    if hasattr(value, '_is_hybrid_value'):
        return value
    ctx = getattr(like, 'context', None)
    return ops._full(shape=(1,), value=float(value), dtype='float32',
                     **({'ctx': ctx} if ctx is not None else {}))


def _frontend_kwargs(out, name, kwargs):
    """``out``/``name`` only when given (a Symbol function takes no ``out``)."""
    extra = {k: v for k, v in (('out', out), ('name', name)) if v is not None}
    return dict(kwargs, **extra)


def _flatten(*lists):
    return [x for group in zip(*lists) for x in group]


def _adamw_function(ops):
    def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                     epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
        """AdamW (``_adamw_update``); ``rescale_grad`` may be a number or a (1,) array."""
        return ops._adamw_update(weight, grad, mean, var, _scale_array(ops, rescale_grad, weight),
                                 lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon,
                                 wd=wd, clip_gradient=clip_gradient,
                                 **_frontend_kwargs(out, name, kwargs))
    return adamw_update


def _mp_adamw_function(ops):
    def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                        beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                        **kwargs):
        """AdamW through a float32 master copy (``_mp_adamw_update``)."""
        return ops._mp_adamw_update(weight, grad, mean, var, weight32,
                                    _scale_array(ops, rescale_grad, weight), lr=lr, eta=eta,
                                    beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                    clip_gradient=clip_gradient,
                                    **_frontend_kwargs(out, name, kwargs))
    return mp_adamw_update


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
    ('contrib', 'adamw_update'): _adamw_function,
    ('contrib', 'mp_adamw_update'): _mp_adamw_function,
    ('contrib', 'multi_adamw_update'): _multi_adamw_function,
    ('contrib', 'multi_mp_adamw_update'): _multi_mp_adamw_function,
    ('contrib', 'multi_lamb_update'): _multi_lamb_function,
    ('contrib', 'multi_mp_lamb_update'): _multi_mp_lamb_function,
})
