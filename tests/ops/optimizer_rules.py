"""numpy references (float64) of MXNet 1.9.1's optimizer update rules, for the operator and
optimizer tests. Each ``rule(weight, grad, *states, **attrs)`` returns ``(output, *new
states)`` and leaves its arguments alone; written from MXNet's kernels and checked against
MXNet's numbers (``tests/data/optimizer.json``). At the end, the inputs that the operator tests
(``test_optimizer_ops.py``, ``test_multi_tensor.py``) build: seeded arrays and the arrays of
the reference files."""
import numpy as np


def _clip(g, c):
    return np.clip(g, -c, c) if c is not None and c >= 0 else g


def _sign(x):
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def sgd_update(w, g, lr, wd=0., rescale_grad=1., clip_gradient=-1., lazy_update=True):
    return ((1 - lr * wd) * w - lr * _clip(rescale_grad * g, clip_gradient),)


def sgd_mom_update(w, g, mom, lr, momentum=0., wd=0., rescale_grad=1., clip_gradient=-1.,
                   lazy_update=True):
    mom = momentum * mom - lr * wd * w - lr * _clip(rescale_grad * g, clip_gradient)
    return w + mom, mom


def nag_mom_update(w, g, mom, lr, momentum=0., wd=0., rescale_grad=1., clip_gradient=-1.):
    grad = _clip(rescale_grad * g, clip_gradient) + wd * w
    mom = momentum * mom - lr * grad
    return w + momentum * mom - lr * grad, mom


def adam_update(w, g, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.,
                rescale_grad=1., clip_gradient=-1., lazy_update=True):
    grad = _clip(rescale_grad * g + wd * w, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * grad
    var = beta2 * var + (1 - beta2) * grad ** 2
    return w - lr * mean / (np.sqrt(var) + epsilon), mean, var


def adamw_update(w, g, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 wd=0., clip_gradient=-1.):
    s = float(np.asarray(rescale_grad).reshape(-1)[0])
    if not np.isfinite(s) or s == 0:
        return w.copy(), mean.copy(), var.copy()
    grad = _clip(s * g, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * grad
    var = beta2 * var + (1 - beta2) * grad ** 2
    return w - eta * (lr * mean / (np.sqrt(var) + epsilon) + wd * w), mean, var


def rmsprop_update(w, g, n, lr, gamma1=0.95, epsilon=1e-8, wd=0., rescale_grad=1.,
                   clip_gradient=-1., clip_weights=-1.):
    grad = _clip(rescale_grad * g + wd * w, clip_gradient)
    n = (1 - gamma1) * grad ** 2 + gamma1 * n
    return _clip(w - lr * grad / np.sqrt(n + epsilon), clip_weights), n


def rmspropalex_update(w, g, n, gs, delta, lr, gamma1=0.95, gamma2=0.9, epsilon=1e-8, wd=0.,
                       rescale_grad=1., clip_gradient=-1., clip_weights=-1.):
    grad = _clip(rescale_grad * g + wd * w, clip_gradient)
    n = (1 - gamma1) * grad ** 2 + gamma1 * n
    gs = (1 - gamma1) * grad + gamma1 * gs
    delta = gamma2 * delta - lr * grad / np.sqrt(n - gs ** 2 + epsilon)
    return _clip(w + delta, clip_weights), n, gs, delta


def ftrl_update(w, g, z, n, lr, lamda1=0.01, beta=1., wd=0., rescale_grad=1., clip_gradient=-1.):
    grad = _clip(rescale_grad * g, clip_gradient)
    z = z + grad - (np.sqrt(n + grad ** 2) - np.sqrt(n)) * w / lr
    n = n + grad ** 2
    out = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + wd) * (np.abs(z) > lamda1)
    return out, z, n


def ftml_update(w, g, d, v, z, lr, t, beta1=0.6, beta2=0.999, epsilon=1e-8, wd=0.,
                rescale_grad=1., clip_grad=-1.):
    grad = _clip(rescale_grad * g + wd * w, clip_grad)
    v = beta2 * v + (1 - beta2) * grad ** 2
    d_t = (1 - beta1 ** t) / lr * (np.sqrt(v / (1 - beta2 ** t)) + epsilon)
    z = beta1 * z + (1 - beta1) * grad - (d_t - beta1 * d) * w
    return -z / d_t, d_t, v, z


def signsgd_update(w, g, lr, wd=0., rescale_grad=1., clip_gradient=-1.):
    return ((1 - lr * wd) * w - lr * _sign(g),)


def signum_update(w, g, mom, lr, momentum=0., wd=0., rescale_grad=1., clip_gradient=-1.,
                  wd_lh=0.):
    mom = (momentum * mom - (1 - momentum) * wd * w
           - (1 - momentum) * _clip(rescale_grad * g, clip_gradient))
    return (1 - lr * wd_lh) * w + lr * _sign(mom), mom


def lamb_update_phase1(w, g, mean, var, t, wd, beta1=0.9, beta2=0.999, epsilon=1e-6,
                       bias_correction=True, rescale_grad=1., clip_gradient=-1.):
    grad = _clip(rescale_grad * g, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * grad
    var = beta2 * var + (1 - beta2) * grad ** 2
    m, v = mean, var
    if bias_correction:
        m, v = mean / (1 - beta1 ** t), var / (1 - beta2 ** t)
    return m / (np.sqrt(v) + epsilon) + wd * w, mean, var


def lamb_update_phase2(w, g, r1, r2, lr, lower_bound=-1., upper_bound=-1.):
    r1 = float(np.asarray(r1).reshape(-1)[0])
    r2 = float(np.asarray(r2).reshape(-1)[0])
    if lower_bound >= 0:
        r1 = max(r1, lower_bound)
    if upper_bound >= 0:
        r1 = min(r1, upper_bound)
    ratio = 1.0 if r1 == 0 or r2 == 0 else r1 / r2
    return (w - lr * ratio * g,)


def adagrad_update(w, g, history, lr, epsilon=1e-7, wd=0., rescale_grad=1., clip_gradient=-1.):
    grad = _clip(rescale_grad * g, clip_gradient)
    history = history + grad ** 2
    return w - lr * (grad / np.sqrt(history + epsilon) + wd * w), history


def group_adagrad_update(w, g, history, lr, rescale_grad=1., clip_gradient=-1., epsilon=1e-5):
    grad = _clip(rescale_grad * g, clip_gradient)
    history = history + np.mean(grad ** 2, axis=1, keepdims=True)
    return w - lr * grad / np.sqrt(history + epsilon), history


def master(rule, n_states, writes=True):
    """The ``mp_`` form of ``rule``: inputs ``(weight, grad, *states, weight32, *scalars)``;
    the rule runs on ``weight32``, returned (updated, unless not ``writes``) after the
    states."""
    def mp_rule(w, g, *rest, **attrs):
        states = rest[:n_states]
        w32 = rest[n_states]
        scalars = rest[n_states + 1:]
        out = rule(w32, g, *states, *scalars, **attrs)
        return out + ((out[0] if writes else w32.copy()),)
    return mp_rule


# the rules by operator name
RULES = {
    'sgd_update': sgd_update, 'sgd_mom_update': sgd_mom_update,
    'nag_mom_update': nag_mom_update, 'adam_update': adam_update,
    '_adamw_update': adamw_update, 'rmsprop_update': rmsprop_update,
    'rmspropalex_update': rmspropalex_update, 'ftrl_update': ftrl_update,
    'ftml_update': ftml_update, 'signsgd_update': signsgd_update,
    'signum_update': signum_update, 'lamb_update_phase1': lamb_update_phase1,
    'lamb_update_phase2': lamb_update_phase2, '_sparse_adagrad_update': adagrad_update,
    '_contrib_group_adagrad_update': group_adagrad_update,
    'mp_sgd_update': master(sgd_update, 0), 'mp_sgd_mom_update': master(sgd_mom_update, 1),
    'mp_nag_mom_update': master(nag_mom_update, 1), '_mp_adamw_update': master(adamw_update, 2),
    'mp_lamb_update_phase1': master(lamb_update_phase1, 2, writes=False),
}


def mp_lamb_update_phase2(w, g, r1, r2, w32, **attrs):
    """Inputs (weight, g, r1, r2, weight32): the master copy comes last."""
    out = lamb_update_phase2(w32, g, r1, r2, **attrs)
    return out + (out[0],)


RULES['mp_lamb_update_phase2'] = mp_lamb_update_phase2


def lamb_update(w, g, mean, var, lr, t, wd, lower_bound=-1., upper_bound=-1., **phase1):
    """One LAMB step of a weight: phase 1, then phase 2 with the norms of the weight and of the
    step (what the multi-tensor LAMB operators do per tensor)."""
    step, mean, var = lamb_update_phase1(w, g, mean, var, t=t, wd=wd, **phase1)
    out = lamb_update_phase2(w, step, np.linalg.norm(w), np.linalg.norm(step), lr=lr,
                             lower_bound=lower_bound, upper_bound=upper_bound)[0]
    return out, mean, var


def multi(rule, group, keys=(('lrs', 'lr'), ('wds', 'wd')), count='num_weights', tail=0,
          preloaded=False):
    """The multi-tensor form of ``rule``: inputs in groups of ``group`` per weight, then
    ``tail`` shared inputs (or the preloaded ``lrs``/``wds`` arrays); the tuple attributes
    ``keys`` give each weight its own value. Returns the new weights (the outputs) and the
    states of each weight."""
    def multi_rule(*inputs, **attrs):
        n = attrs.pop(count, 1)
        per_weight = {single: attrs.pop(key) for key, single in keys if not preloaded}
        shared = inputs[n * group:]
        outs, states = [], []
        for i in range(n):
            kw = dict(attrs, **{k: v[i] for k, v in per_weight.items()})
            if preloaded:
                kw.update(lr=shared[0][i], wd=shared[1][i])
            result = rule(*inputs[i * group:(i + 1) * group], *(() if preloaded else shared),
                          **kw)
            outs.append(result[0])
            states.append(result[1:])
        return outs, states
    return multi_rule


_ADAMW_KEYS = (('lrs', 'lr'), ('wds', 'wd'), ('etas', 'eta'))
_LAMB_KEYS = (('learning_rates', 'lr'), ('wds', 'wd'), ('step_count', 't'))

# the multi-tensor rules by operator name
MULTI_RULES = {}
for _pre in ('', 'preloaded_'):
    MULTI_RULES.update({
        f'{_pre}multi_sgd_update': multi(sgd_update, 2, preloaded=bool(_pre)),
        f'{_pre}multi_sgd_mom_update': multi(sgd_mom_update, 3, preloaded=bool(_pre)),
        f'{_pre}multi_mp_sgd_update': multi(RULES['mp_sgd_update'], 3, preloaded=bool(_pre)),
        f'{_pre}multi_mp_sgd_mom_update': multi(RULES['mp_sgd_mom_update'], 4,
                                                preloaded=bool(_pre)),
    })
MULTI_RULES.update({
    '_multi_adamw_update': multi(adamw_update, 4, _ADAMW_KEYS, tail=1),
    '_multi_mp_adamw_update': multi(RULES['_mp_adamw_update'], 5, _ADAMW_KEYS, tail=1),
    '_multi_lamb_update': multi(lamb_update, 4, _LAMB_KEYS, count='num_tensors'),
    '_multi_mp_lamb_update': multi(master(lamb_update, 2), 5, _LAMB_KEYS, count='num_tensors'),
})


def multi_sum_sq(*arrays, num_arrays):
    return np.array([np.sum(np.square(a, dtype=np.float64)) for a in arrays])


def multi_lars(lrs, weights_sum_sq, grads_sum_sq, wds, eta, eps, rescale_grad=1.):
    out = np.array(lrs, dtype=np.float64)
    for i in range(len(out)):
        if weights_sum_sq[i] > 0 and grads_sum_sq[i] > 0:
            w, g = np.sqrt(weights_sum_sq[i]), np.sqrt(grads_sum_sq[i])
            out[i] = lrs[i] * eta * w / (g * rescale_grad + wds[i] * w + eps)
    return out


# ---- inputs of the operator tests ----------------------------------------------------------------

def random_array(shape, seed, low=-1.0, high=1.0):
    """float64 values uniform in [low, high), the same ones for the same seed."""
    return np.random.default_rng(seed).uniform(low, high, shape)


def json_array(t, dtype=None):
    """An array of a reference file (``{"data": ..., "shape": ..., "dtype": ...}``)."""
    return np.array(t['data'], dtype=np.float64).reshape(t['shape']).astype(dtype or t['dtype'])
