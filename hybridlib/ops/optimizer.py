"""Fused optimizer updates: ``sgd_update``, ``sgd_mom_update``, ``adam_update``, ... and their
multi-precision (``mp_``) forms, as MXNet 1.9.1's ``src/operator/optimizer_op.cc`` and
``contrib/adamw.cc`` define them. ``nd.contrib``/``sym.contrib`` get MXNet's Python functions
around the AdamW operators (``adamw_update``, ``mp_adamw_update``: ``rescale_grad`` as a
number), through ``frontend.PYTHON_FUNCTIONS``. Their multi-tensor forms, which update
``num_weights`` weights in one call, and what LARS and ``zero_grad`` use are
``multi_tensor.py``.

An update takes ``weight``, ``grad`` and the optimizer's state arrays and returns the new
weight; the states (momentum, mean, variance, ...) are updated *in place*, so they are the
operator's auxiliary (mutated) inputs. The weight itself is not mutated: as in MXNet, an
optimizer writes the result back with ``out=weight``. The ``mp_`` forms keep a float32 master
copy ``weight32`` of a float16 weight: the rule runs on the master copy (with the gradient cast
to float32), the master copy is updated in place and the output is its cast to the weight's
dtype. None of these operators is differentiable: their gradient is ``zero_gradient``
(nothing flows back), as in MXNet, which registers no gradient for them.

Every rule is written once, in place: ``rule(xp, attrs, out, weight, grad, *inputs)`` writes
the new weight into ``out``, which may be ``weight`` itself (``out=weight``), updates the states
in place and takes its temporaries from the registry's workspace, so that an update allocates
nothing of the weight's size. ``_update_op`` builds the operator's one body, ``compute(xp,
attrs, *inputs, out=None)``, from it (and its ``mp_`` form): without ``out`` it runs the rule
into a fresh array; an ``mp_`` form runs it on the master copy and casts the result into
``out``.
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
"""
import numpy as np

from ..base import DTypeError, ShapeError
from .attrs import Bool, Float, Int
from .frontend import PYTHON_FUNCTIONS
from .registry import OpDef, merge_shape, register_op, workspace, zero_gradient

__all__ = []


# -------------------------------------------------------------------------------------------------
# Shared pieces of the rules
# -------------------------------------------------------------------------------------------------

def _scratch(xp, like, count=1):
    """``count`` temporaries of ``like``'s shape and dtype, from the workspace (part 0)."""
    buf = workspace(xp, (count,) + like.shape, like.dtype)
    return buf[0] if count == 1 else buf


def _clip_into(xp, x, bound):
    """MXNet's ``clip::Map``, in place: into [-bound, bound] when bound >= 0, untouched
    otherwise."""
    if bound is not None and bound >= 0:
        xp.clip(x, -bound, bound, out=x)
    return x


def _rescaled_into(xp, a, g, buf):
    """``clip(rescale_grad * grad)`` written into ``buf``: the gradient most rules start from."""
    xp.multiply(g, a.rescale_grad, out=buf)
    return _clip_into(xp, buf, a.clip_gradient)


def _decayed_into(xp, a, w, g, buf, tmp, clip_key='clip_gradient'):
    """``clip(rescale_grad * grad + wd * weight)`` written into ``buf`` (``tmp``: scratch)."""
    xp.multiply(g, a.rescale_grad, out=buf)
    buf += xp.multiply(w, a.wd, out=tmp)
    return _clip_into(xp, buf, a[clip_key])


def _step_into(xp, a, g, buf):
    """``lr * clip(rescale_grad * grad)``, SGD's step, written into ``buf`` (one product when
    nothing is clipped)."""
    if a.clip_gradient is None or a.clip_gradient < 0:
        return xp.multiply(g, a.lr * a.rescale_grad, out=buf)
    _rescaled_into(xp, a, g, buf)
    buf *= a.lr
    return buf


def _nonzero(x):
    """Whether a term scaled by ``x`` is computed: a zero number skips it; an array (a preloaded
    multi-tensor update's ``wd``) is not asked, which would wait for the device."""
    return not isinstance(x, (int, float)) or x != 0


def _sign_into(xp, x, out):
    """MXNet's ``(x > 0) - (x < 0)`` written into ``out``: 0 at 0 and at NaN (numpy's sign
    gives NaN there)."""
    flag = workspace(xp, x.shape, np.bool_)
    xp.copyto(out, xp.greater(x, 0, out=flag))
    out -= xp.less(x, 0, out=flag)
    return out


def _first(xp, x, like):
    """The (1,) array ``x`` as a 0-d array in the dtype of ``like``: broadcasts against it, no
    device sync."""
    return x.reshape(-1)[:1].reshape(()).astype(like.dtype, copy=False)


# -------------------------------------------------------------------------------------------------
# The rules: (xp, attrs, out, weight, grad, *states) -> out
#
# Each writes the new weight into ``out`` and updates the states in place, its temporaries in
# the workspace. ``out`` may be ``weight`` (an optimizer's ``out=weight``): a rule writes it
# only after its last read of the weight.
# -------------------------------------------------------------------------------------------------

def _sgd(xp, a, out, w, g):
    step = _step_into(xp, a, g, _scratch(xp, g))
    if _nonzero(a.wd):
        xp.multiply(w, 1 - a.lr * a.wd, out=out)
    elif out is not w:
        out[...] = w
    return xp.subtract(out, step, out=out)


def _sgd_mom(xp, a, out, w, g, mom):
    tmp = _scratch(xp, g)
    mom *= a.momentum
    if _nonzero(a.wd):
        mom -= xp.multiply(w, a.lr * a.wd, out=tmp)
    mom -= _step_into(xp, a, g, tmp)
    return xp.add(w, mom, out=out)


def _nag_mom(xp, a, out, w, g, mom):
    grad, step = _scratch(xp, g, 2)
    _rescaled_into(xp, a, g, grad)
    grad += xp.multiply(w, a.wd, out=step)
    mom *= a.momentum
    mom -= xp.multiply(grad, a.lr, out=step)
    # weight + momentum * mom - lr * grad, from the weight before the step
    xp.add(w, xp.multiply(mom, a.momentum, out=grad), out=out)
    return xp.subtract(out, step, out=out)


def _moments_into(xp, a, grad, mean, var, new_mean, new_var, tmp):
    """Adam's running moments, ``beta1 * mean + (1 - beta1) * grad`` and
    ``beta2 * var + (1 - beta2) * grad^2``, written into ``new_mean`` and ``new_var`` (which may
    be ``mean`` and ``var``)."""
    xp.multiply(mean, a.beta1, out=new_mean)
    new_mean += xp.multiply(grad, 1 - a.beta1, out=tmp)
    xp.multiply(var, a.beta2, out=new_var)
    xp.multiply(grad, 1 - a.beta2, out=tmp)
    new_var += xp.multiply(tmp, grad, out=tmp)


def _adam(xp, a, out, w, g, mean, var):
    grad, tmp = _scratch(xp, g, 2)
    _decayed_into(xp, a, w, g, grad, tmp)
    _moments_into(xp, a, grad, mean, var, mean, var, tmp)
    xp.sqrt(var, out=tmp)
    tmp += a.epsilon
    xp.multiply(mean, a.lr, out=grad)
    grad /= tmp
    return xp.subtract(w, grad, out=out)


def _adamw(xp, a, out, w, g, mean, var, rescale_grad):
    scale = _first(xp, rescale_grad, g)
    # a non-finite or zero scale (a loss scaler's overflow signal) skips the step: the new
    # values are computed aside and kept where it is valid, without waiting for the device
    ok = xp.isfinite(scale) & (scale != 0)
    grad, new_mean, new_var, tmp = _scratch(xp, g, 4)
    with np.errstate(all='ignore'):
        _clip_into(xp, xp.multiply(g, scale, out=grad), a.clip_gradient)
        _moments_into(xp, a, grad, mean, var, new_mean, new_var, tmp)
        xp.sqrt(new_var, out=tmp)
        tmp += a.epsilon
        xp.multiply(new_mean, a.lr, out=grad)
        grad /= tmp
        grad += xp.multiply(w, a.wd, out=tmp)
        grad *= a.eta
        xp.subtract(w, grad, out=tmp)
    xp.copyto(mean, new_mean, where=ok)
    xp.copyto(var, new_var, where=ok)
    if out is not w:
        out[...] = w
    xp.copyto(out, tmp, where=ok)
    return out


def _mean_square_into(xp, a, w, g, n):
    """RMSProp's start: the decayed gradient, returned with a temporary, and its running mean
    square ``n = (1 - gamma1) * grad^2 + gamma1 * n`` updated in place."""
    grad, tmp = _scratch(xp, g, 2)
    _decayed_into(xp, a, w, g, grad, tmp)
    xp.multiply(grad, 1 - a.gamma1, out=tmp)
    tmp *= grad
    n *= a.gamma1
    n += tmp
    return grad, tmp


def _rmsprop(xp, a, out, w, g, n):
    grad, tmp = _mean_square_into(xp, a, w, g, n)
    xp.add(n, a.epsilon, out=tmp)
    xp.sqrt(tmp, out=tmp)
    grad *= a.lr
    grad /= tmp
    return _clip_into(xp, xp.subtract(w, grad, out=out), a.clip_weights)


def _rmspropalex(xp, a, out, w, g, n, mean, delta):
    grad, tmp = _mean_square_into(xp, a, w, g, n)
    mean *= a.gamma1
    mean += xp.multiply(grad, 1 - a.gamma1, out=tmp)
    # delta = gamma2 * delta - lr * grad / sqrt(n - mean^2 + epsilon)
    xp.multiply(mean, mean, out=tmp)
    xp.subtract(n, tmp, out=tmp)
    tmp += a.epsilon
    xp.sqrt(tmp, out=tmp)
    grad *= a.lr
    grad /= tmp
    delta *= a.gamma2
    delta -= grad
    return _clip_into(xp, xp.add(w, delta, out=out), a.clip_weights)


def _ftrl(xp, a, out, w, g, z, n):
    grad, tmp, tmp2 = _scratch(xp, g, 3)
    _rescaled_into(xp, a, g, grad)
    # z += grad - (sqrt(n + grad^2) - sqrt(n)) * weight / lr; n += grad^2
    xp.multiply(grad, grad, out=tmp)
    xp.add(n, tmp, out=tmp)
    xp.sqrt(tmp, out=tmp)
    tmp -= xp.sqrt(n, out=tmp2)
    tmp *= w
    tmp /= a.lr
    z += grad
    z -= tmp
    n += xp.multiply(grad, grad, out=tmp)
    # (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) where |z| > lamda1, else 0
    _sign_into(xp, z, grad)
    grad *= a.lamda1
    grad -= z
    xp.sqrt(n, out=tmp)
    tmp += a.beta
    tmp /= a.lr
    tmp += a.wd
    grad /= tmp
    out[...] = 0
    keep = xp.greater(xp.abs(z, out=tmp), a.lamda1, out=workspace(xp, z.shape, np.bool_))
    xp.copyto(out, grad, where=keep)
    return out


def _ftml(xp, a, out, w, g, d, v, z):
    grad, tmp, d_t = _scratch(xp, g, 3)
    _decayed_into(xp, a, w, g, grad, tmp, 'clip_grad')
    xp.multiply(grad, 1 - a.beta2, out=tmp)
    tmp *= grad
    v *= a.beta2
    v += tmp
    # d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon)
    xp.divide(v, 1 - a.beta2 ** a.t, out=d_t)
    xp.sqrt(d_t, out=d_t)
    d_t += a.epsilon
    d_t *= (1 - a.beta1 ** a.t) / a.lr
    # z = beta1 * z + (1 - beta1) * grad - (d_t - beta1 * d) * weight
    z *= a.beta1
    z += xp.multiply(grad, 1 - a.beta1, out=tmp)
    xp.multiply(d, a.beta1, out=tmp)
    xp.subtract(d_t, tmp, out=tmp)
    tmp *= w
    z -= tmp
    d[...] = d_t
    xp.negative(z, out=out)
    return xp.divide(out, d_t, out=out)


def _signsgd(xp, a, out, w, g):
    # MXNet takes the sign of the raw gradient: rescaling and clipping do not change it
    step = _sign_into(xp, g, _scratch(xp, g))
    step *= a.lr
    xp.multiply(w, 1 - a.lr * a.wd, out=out)
    return xp.subtract(out, step, out=out)


def _signum(xp, a, out, w, g, mom):
    # the state holds minus the momentum of the paper, as MXNet's kernel stores it
    tmp = _scratch(xp, g)
    mom *= a.momentum
    mom -= xp.multiply(w, (1 - a.momentum) * a.wd, out=tmp)
    _rescaled_into(xp, a, g, tmp)
    tmp *= 1 - a.momentum
    mom -= tmp
    _sign_into(xp, mom, tmp)
    tmp *= a.lr
    xp.multiply(w, 1 - a.lr * a.wd_lh, out=out)
    return xp.add(out, tmp, out=out)


def _lamb_phase1(xp, a, out, w, g, mean, var):
    grad, tmp = _scratch(xp, g, 2)
    _rescaled_into(xp, a, g, grad)
    _moments_into(xp, a, grad, mean, var, mean, var, tmp)
    # mean / (sqrt(var) + epsilon) + wd * weight, mean and var bias-corrected when asked
    if a.bias_correction:
        xp.divide(var, 1 - a.beta2 ** a.t, out=tmp)
        xp.sqrt(tmp, out=tmp)
        tmp += a.epsilon
        xp.divide(mean, 1 - a.beta1 ** a.t, out=grad)
        grad /= tmp
    else:
        xp.sqrt(var, out=tmp)
        tmp += a.epsilon
        xp.divide(mean, tmp, out=grad)
    return xp.add(grad, xp.multiply(w, a.wd, out=tmp), out=out)


def _lamb_phase2(xp, a, out, w, g, r1, r2):
    r1 = _first(xp, r1, w)
    r2 = _first(xp, r2, w)
    if a.lower_bound >= 0:
        r1 = xp.maximum(r1, a.lower_bound)
    if a.upper_bound >= 0:
        r1 = xp.minimum(r1, a.upper_bound)
    with np.errstate(all='ignore'):
        ratio = xp.where((r1 == 0) | (r2 == 0), 1, r1 / r2).astype(w.dtype, copy=False)
    step = xp.multiply(g, a.lr * ratio, out=_scratch(xp, g))
    return xp.subtract(w, step, out=out)


def _adagrad(xp, a, out, w, g, history):
    grad, tmp = _scratch(xp, g, 2)
    _rescaled_into(xp, a, g, grad)
    history += xp.multiply(grad, grad, out=tmp)
    xp.add(history, a.epsilon, out=tmp)
    grad /= xp.sqrt(tmp, out=tmp)
    grad += xp.multiply(w, a.wd, out=tmp)
    grad *= a.lr
    return xp.subtract(w, grad, out=out)


def _group_adagrad(xp, a, out, w, g, history):
    grad, tmp = _scratch(xp, g, 2)
    _rescaled_into(xp, a, g, grad)
    # history is (rows, 1): its temporaries are small enough to allocate
    history += xp.multiply(grad, grad, out=tmp).mean(axis=1, keepdims=True)
    grad *= a.lr
    grad /= xp.sqrt(history + a.epsilon)
    return xp.subtract(w, grad, out=out)


# -------------------------------------------------------------------------------------------------
# Building the operators
# -------------------------------------------------------------------------------------------------

_SCALARS = ('r1', 'r2', 'rescale_grad')      # (1,)-shaped inputs, read only


def _make_compute(rule, inputs, master, writes_master):
    """The operator's body from its rule: ``compute(xp, attrs, *arrays, out=None)`` writes the
    new weight into ``out`` (a fresh array without one) and updates the states in place."""
    if not master:
        def compute(xp, attrs, *arrays, out=None):
            return rule(xp, attrs, xp.empty_like(arrays[0]) if out is None else out, *arrays)
        return compute
    at = inputs.index('weight32') - 2       # among the arrays after weight and grad

    def compute(xp, attrs, weight, grad, *arrays, out=None):
        w32 = arrays[at]
        states = arrays[:at] + arrays[at + 1:]
        # the rule runs on the master copy, with the gradient in its precision (in the
        # workspace's part 1: the rule's temporaries are part 0)
        if grad.dtype != w32.dtype:
            g32 = workspace(xp, grad.shape, w32.dtype, part=1)
            g32[...] = grad
            grad = g32
        if not writes_master:       # mp_lamb phase 1: the output is in the master's dtype
            return rule(xp, attrs, xp.empty_like(w32) if out is None else out, w32, grad,
                        *states)
        rule(xp, attrs, w32, w32, grad, *states)
        if out is None:
            return w32.astype(weight.dtype)
        out[...] = w32
        return out
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
        _check_float(weight, ', '.join(low))
        state = weight
        if master:
            state = _merge_dtype([named[n] for n in high], ', '.join(high))
            _check_float(state, ', '.join(high))
            state = np.dtype(np.float32) if state is None else state
        ins = []
        for name in inputs:
            if name in _SCALARS:
                ins.append(named[name] if named[name] is not None else state)
            else:
                ins.append(weight if name in low else state)
        return ins, [state if out_master_dtype else weight]
    return infer_type


def _check_float(dtype, what):
    if dtype is not None and dtype.kind != 'f':
        raise DTypeError(f'{what} must be floating point (as in MXNet), got {dtype.name}')


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
               writes_master=True, history=False):
    """Register the update operator ``name``.

    ``inputs`` are MXNet's input names in order, ``states`` those mutated in place;
    ``master`` marks an ``mp_`` operator whose ``weight32`` input is the master copy, updated
    in place unless ``writes_master`` is False (the output is then in the master's dtype).
    """
    aux = tuple(states) + (('weight32',) if master and writes_master else ())
    op = OpDef(name, inputs=inputs, aux=aux, attrs=attrs, aliases=aliases, doc=doc,
               compute=_make_compute(rule, inputs, master, writes_master),
               infer_shape=_make_infer_shape(inputs, history),
               infer_type=_make_infer_type(inputs, master, master and not writes_master),
               gradient=zero_gradient, inplace=((0, 0),))
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
""", master=True, writes_master=False)

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


# ---- nd.contrib / sym.contrib: MXNet's Python wrappers of the AdamW operators ------------------

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


PYTHON_FUNCTIONS.update({
    ('contrib', 'adamw_update'): _adamw_function,
    ('contrib', 'mp_adamw_update'): _mp_adamw_function,
})
