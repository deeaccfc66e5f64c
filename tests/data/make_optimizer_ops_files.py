"""Writes tests/data/optimizer_ops.json: MXNet 1.9.1's multi-tensor optimizer operators and the
optimizers that use them (LARS, LBSGD, contrib.GroupAdaGrad, SGD on float16 weights).

Run from the repository root with the oracle's python::

    .oracle/bin/python tests/data/make_optimizer_ops_files.py

- ``ops``: one call of each operator on fixed inputs (MXNet's multi-tensor updates need
  ``out=``: they get fresh copies of the weights), with its outputs and every input after the
  call (the states it updates in place, the others unchanged);
- ``optimizers``: optimizers driven through ``mx.optimizer.get_updater`` on three weights for
  four steps (fresh gradient arrays each step), with the weights after every step and the
  states at the end.

tests/ops/test_multi_tensor.py and tests/test_optimizer.py read it.
"""
import json
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(11)


def arr(shape, low=-1.0, high=1.0, dtype='float32'):
    return rng.uniform(low, high, shape).astype(dtype)


def tolist(x):
    x = x.asnumpy() if hasattr(x, 'asnumpy') else np.asarray(x)
    return {'dtype': str(x.dtype), 'shape': list(x.shape),
            'data': [float(format(v, '.9g')) for v in x.astype('float64').ravel()]}


def flat_states(state):
    if state is None:
        return None
    if isinstance(state, (tuple, list)):
        return [flat_states(s) for s in state]
    return tolist(state)


# -------------------------------------------------------------------------------------------------
# Operators
# -------------------------------------------------------------------------------------------------

SHAPES = [(2, 3), (4,)]


def op_case(name, op, inputs, attrs, out=None):
    """``inputs``: numpy arrays in the operator's order; ``out``: indices of the inputs whose
    copies receive the outputs (MXNet's multi-tensor updates fail without out=)."""
    arrays = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    fn = getattr(mx.nd, op, None) or getattr(mx.nd._internal, op)
    kwargs = dict(attrs)
    if out is not None:
        kwargs['out'] = [arrays[i].copy() for i in out]
    result = fn(*arrays, **kwargs)
    outputs = result if isinstance(result, (list, tuple)) else [result]
    return {'name': name, 'op': op, 'attrs': attrs, 'inputs': [tolist(x) for x in inputs],
            'outputs': [tolist(o) for o in outputs], 'after': [tolist(a) for a in arrays]}


def weights(dtype='float32'):
    return [arr(s, dtype=dtype) for s in SHAPES]


def grads(dtype='float32'):
    return [arr(s, -2, 2, dtype) for s in SHAPES]


def states(low=-1.0, high=1.0):
    return [arr(s, low, high) for s in SHAPES]


def interleave(*lists):
    return [x for group in zip(*lists) for x in group]


def ops():
    common = dict(rescale_grad=0.5, clip_gradient=0.6)
    lr_wd = dict(lrs=(0.1, 0.2), wds=(0.05, 0.01))
    w, g, m = weights(), grads(), states()
    w16, g16 = weights('float16'), grads('float16')
    masters = [x.astype('float32') for x in w16]
    preload = [np.array([0.1, 0.2], np.float32), np.array([0.05, 0.01], np.float32)]
    n2 = dict(num_weights=2)
    cases = [
        op_case('multi_sgd', 'multi_sgd_update', interleave(w, g), dict(lr_wd, **common, **n2),
                out=[0, 2]),
        op_case('multi_sgd_mom', 'multi_sgd_mom_update', interleave(w, g, m),
                dict(lr_wd, momentum=0.9, **common, **n2), out=[0, 3]),
        op_case('multi_mp_sgd', 'multi_mp_sgd_update', interleave(w16, g16, masters),
                dict(lr_wd, **common, **n2), out=[0, 3]),
        op_case('multi_mp_sgd_mom', 'multi_mp_sgd_mom_update',
                interleave(w16, g16, m, masters), dict(lr_wd, momentum=0.9, **n2),
                out=[0, 4]),
        op_case('preloaded_sgd', 'preloaded_multi_sgd_update', interleave(w, g) + preload,
                dict(common, **n2), out=[0, 2]),
        op_case('preloaded_sgd_mom', 'preloaded_multi_sgd_mom_update',
                interleave(w, g, m) + preload, dict(momentum=0.8, **common, **n2), out=[0, 3]),
        op_case('preloaded_mp_sgd', 'preloaded_multi_mp_sgd_update',
                interleave(w16, g16, masters) + preload, dict(rescale_grad=0.5, **n2),
                out=[0, 3]),
        op_case('preloaded_mp_sgd_mom', 'preloaded_multi_mp_sgd_mom_update',
                interleave(w16, g16, m, masters) + preload,
                dict(momentum=0.9, **common, **n2), out=[0, 4]),
        op_case('sum_sq', 'multi_sum_sq', w + [arr((3, 2, 2))], dict(num_arrays=3)),
        op_case('sum_sq_float16', 'multi_sum_sq', w16, dict(num_arrays=2)),
        op_case('lars', 'multi_lars', [np.array([0.1, 0.2, 0.3, 0.4], np.float32),
                                       np.array([2.0, 0.0, 3.0, 0.5], np.float32),
                                       np.array([1.5, 1.0, 0.0, 4.0], np.float32),
                                       np.array([0.01, 0.02, 0.03, 0.5], np.float32)],
                dict(eta=0.5, eps=1e-3, rescale_grad=0.25)),
        op_case('reset', 'reset_arrays', [arr((2, 2)), arr((3,))], dict(num_arrays=2)),
    ]
    mean, var = states(), states(0.0, 1.0)
    adamw = dict(lrs=(0.1, 0.2), wds=(0.05, 0.01), etas=(0.7, 0.9), beta1=0.8, beta2=0.95,
                 epsilon=1e-6, clip_gradient=0.6, num_weights=2)
    scale = np.array([0.5], np.float32)
    cases += [
        op_case('multi_adamw', '_multi_adamw_update', interleave(w, g, mean, var) + [scale],
                adamw, out=[0, 4]),
        op_case('multi_adamw_skip', '_multi_adamw_update',
                interleave(w, g, mean, var) + [np.array([np.inf], np.float32)], adamw,
                out=[0, 4]),
        op_case('multi_mp_adamw', '_multi_mp_adamw_update',
                interleave(w16, g16, mean, var, masters) + [scale], adamw, out=[0, 5]),
    ]
    lamb = dict(learning_rates=(0.1, 0.2), wds=(0.05, 0.01), step_count=(3, 1), beta1=0.8,
                beta2=0.95, rescale_grad=0.5, clip_gradient=0.6, num_tensors=2)
    cases += [
        op_case('multi_lamb', '_multi_lamb_update', interleave(w, g, mean, var), lamb,
                out=[0, 4]),
        op_case('multi_lamb_bounds', '_multi_lamb_update', interleave(w, g, mean, var),
                dict(lamb, lower_bound=0.5, upper_bound=1.0, bias_correction=False),
                out=[0, 4]),
        op_case('multi_mp_lamb', '_multi_mp_lamb_update', interleave(w16, g16, mean, var, masters),
                lamb, out=[0, 5]),
    ]
    return cases


# -------------------------------------------------------------------------------------------------
# Optimizers
# -------------------------------------------------------------------------------------------------

def optimizer_case(label, name, kwargs, dtype='float32', idx2name=None, lr_mult=None,
                   scheduler=None, steps=4, contrib=False, shapes=((2, 3), (4,), (3, 2))):
    ws = [arr(s, dtype=dtype) for s in shapes]
    gs = [[arr(s, -2, 2, dtype) for s in shapes] for _ in range(steps)]
    kw = dict(kwargs)
    if idx2name:
        kw['param_idx2name'] = {int(k): v for k, v in idx2name.items()}
    if scheduler is not None:
        kw['lr_scheduler'] = getattr(mx.lr_scheduler, scheduler[0])(**scheduler[1])
    if contrib:
        opt = getattr(mx.optimizer.contrib, name)(**kw)
    else:
        opt = mx.optimizer.create(name, **kw)
    if lr_mult:
        opt.set_lr_mult({int(k): v for k, v in lr_mult.items()})
    upd = mx.optimizer.get_updater(opt)
    W = [mx.nd.array(w, dtype=dtype) for w in ws]
    after = []
    for step in gs:
        upd(list(range(len(W))), [mx.nd.array(g, dtype=dtype) for g in step], W)
        after.append([tolist(w) for w in W])
    return {'label': label, 'name': name, 'contrib': contrib, 'kwargs': kwargs, 'dtype': dtype,
            'idx2name': idx2name, 'lr_mult': lr_mult, 'scheduler': scheduler,
            'weights': [tolist(w) for w in ws], 'grads': [[tolist(g) for g in s] for s in gs],
            'after': after, 'states': [flat_states(upd.states[i]) for i in range(len(W))],
            'num_update': opt.num_update}


def optimizers():
    names = {'0': 'fc_weight', '1': 'fc_bias', '2': 'bn_gamma'}
    base = dict(learning_rate=0.1, wd=0.05, rescale_grad=0.5)
    return [
        optimizer_case('lars', 'lars', dict(base, momentum=0.9, eta=0.5, eps=1e-3),
                       idx2name=names),
        optimizer_case('lars_plain', 'lars', dict(base, eta=0.2, clip_gradient=0.8),
                       lr_mult={'1': 2.0}),
        optimizer_case('lars_schedule', 'lars', dict(momentum=0.9, eta=0.3, wd=0.01),
                       idx2name=names,
                       scheduler=('FactorScheduler', dict(step=1, factor=0.5, base_lr=0.2))),
        optimizer_case('lars_no_correction', 'lars',
                       dict(momentum=0.9, eta=0.3, momentum_correction=False),
                       scheduler=('FactorScheduler', dict(step=1, factor=0.5, base_lr=0.2))),
        optimizer_case('lars_mp', 'lars', dict(base, momentum=0.9, eta=0.5,
                                               multi_precision=True), dtype='float16',
                       idx2name=names),
        optimizer_case('lbsgd', 'lbsgd', dict(base, momentum=0.9, warmup_epochs=1,
                                              updates_per_epoch=3, batch_scale=1)),
        optimizer_case('lbsgd_accumulate', 'lbsgd',
                       dict(base, momentum=0.9, batch_scale=2, warmup_strategy='power2',
                            warmup_epochs=2, updates_per_epoch=2, begin_epoch=1)),
        optimizer_case('lbsgd_lars', 'lbsgd', dict(base, warmup_strategy='lars',
                                                   clip_gradient=0.9)),
        optimizer_case('lbsgd_sqrt_mp', 'lbsgd', dict(base, momentum=0.9, warmup_strategy='sqrt',
                                                      batch_scale=3, multi_precision=True),
                       dtype='float16'),
        optimizer_case('group_adagrad', 'GroupAdaGrad',
                       dict(learning_rate=0.1, rescale_grad=0.5, clip_gradient=0.3, eps=1e-4),
                       contrib=True, shapes=((2, 3), (4, 2))),
        optimizer_case('sgd_mp_aggregated', 'sgd', dict(base, momentum=0.9,
                                                        multi_precision=True), dtype='float16',
                       shapes=((2, 3), (4,), (3, 2), (2,), (5,))),
        optimizer_case('sgd_mp_plain', 'sgd', dict(base, multi_precision=True), dtype='float16'),
    ]


def main():
    data = {'ops': ops(), 'optimizers': optimizers()}
    path = os.path.join(HERE, 'optimizer_ops.json')
    with open(path, 'w') as f:
        json.dump(data, f, separators=(',', ':'))
    print('wrote', path, os.path.getsize(path), 'bytes')


if __name__ == '__main__':
    main()
