"""Write ``optimizer.json``: MXNet 1.9.1's numbers for the optimizer, scheduler and Trainer tests.

Run from the repository root with the oracle's python::

    .oracle/bin/python tests/data/make_optimizer_files.py

It records, with every input stored in the file (the tests need no random generator):

- ``ops``: update operators run for a few steps (``r = op(weight, grad, *states)`` then
  ``weight[:] = r``, so MXNet's in-place aliasing quirks stay out) with the last output and
  the states after the last step;
- ``optimizers``: optimizers driven through ``mx.optimizer.get_updater`` on two weights for
  three steps (lr_mult/wd_mult, clip_gradient, rescale_grad, multi_precision, schedulers),
  with the final weights and states;
- ``schedulers``: learning rates of the schedulers for a range of ``num_update``;
- ``trainer``: a Dense layer trained by ``gluon.Trainer`` for three steps, on one context and
  on two (cpu(0), cpu(1)), with the parameters after each step.
"""
import json
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(7)
S = (2, 3)


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
# Update operators
# -------------------------------------------------------------------------------------------------

def op_case(name, fn, states, attrs, steps=2, dtype='float32', master=False, scalars=(),
            positive=(), per_step=None, master_last=False, grad_dtype=None, ranges=None):
    weight = arr(S, dtype=dtype)
    state_values = []
    for k in range(states):
        low, high = (ranges or {}).get(k, (0.0 if k in positive else -1.0, 1.0))
        state_values.append(arr(S, low, high))
    master_value = weight.astype('float32') if master else None
    grad_dtype = grad_dtype or dtype
    grads = [arr(S, -2, 2, grad_dtype) for _ in range(steps)]
    W = mx.nd.array(weight, dtype=dtype)
    St = [mx.nd.array(s) for s in state_values]
    M = mx.nd.array(master_value) if master else None
    for k, g in enumerate(grads):
        kw = dict(attrs, **(per_step(k) if per_step else {}))
        args = [W, mx.nd.array(g, dtype=grad_dtype)] + St
        extra = [mx.nd.array([v]) for v in scalars]
        if master_last:
            args += extra + [M]
        else:
            args += ([M] if master else []) + extra
        r = fn(*args, **kw)
        W[:] = r.astype(dtype)
    return {'op': name, 'attrs': attrs, 'weight': tolist(weight), 'master_last': master_last,
            'states': [tolist(s) for s in state_values],
            'master': tolist(master_value) if master else None,
            'scalars': list(scalars), 'grads': [tolist(g) for g in grads],
            'per_step': [per_step(k) for k in range(steps)] if per_step else None,
            'output': tolist(r),
            'final_states': [tolist(s) for s in St],
            'final_master': tolist(M) if master else None}


def ops():
    nd = mx.nd
    common = dict(lr=0.1, wd=0.05, rescale_grad=0.5, clip_gradient=0.6)
    cases = [
        op_case('sgd_update', nd.sgd_update, 0, common),
        op_case('sgd_mom_update', nd.sgd_mom_update, 1, dict(common, momentum=0.9)),
        op_case('mp_sgd_update', nd.mp_sgd_update, 0, common, dtype='float16', master=True),
        op_case('mp_sgd_mom_update', nd.mp_sgd_mom_update, 1, dict(common, momentum=0.9),
                dtype='float16', master=True),
        op_case('nag_mom_update', nd.nag_mom_update, 1, dict(common, momentum=0.9)),
        # MXNet's mp_nag_mom_update reads the updated master weight for wd: pinned with wd=0
        op_case('mp_nag_mom_update', nd.mp_nag_mom_update, 1,
                dict(common, momentum=0.9, wd=0.0), dtype='float16', master=True),
        op_case('adam_update', nd.adam_update, 2,
                dict(common, beta1=0.8, beta2=0.99, epsilon=1e-6), positive=(1,)),
        op_case('_adamw_update', nd.contrib.adamw_update, 2,
                dict(lr=0.1, eta=0.7, wd=0.05, clip_gradient=0.6), positive=(1,),
                scalars=(0.5,)),
        op_case('_mp_adamw_update', nd.contrib.mp_adamw_update, 2,
                dict(lr=0.1, eta=0.7, wd=0.05), positive=(1,), scalars=(0.5,),
                dtype='float16', master=True),
        op_case('rmsprop_update', nd.rmsprop_update, 1,
                dict(common, gamma1=0.8, epsilon=1e-6, clip_weights=0.9), positive=(0,)),
        op_case('rmspropalex_update', nd.rmspropalex_update, 3,
                dict(common, lr=0.01, gamma1=0.8, gamma2=0.7, epsilon=1e-6),
                ranges={0: (1.0, 2.0), 1: (-0.5, 0.5)}),
        op_case('ftrl_update', nd.ftrl_update, 2, dict(common, lamda1=0.05, beta=0.5),
                positive=(1,)),
        op_case('ftml_update', nd.ftml_update, 3,
                dict(lr=0.1, beta1=0.6, beta2=0.99, epsilon=1e-6, wd=0.05, rescale_grad=0.5,
                     clip_grad=0.6), positive=(0, 1), per_step=lambda k: {'t': k + 1}),
        op_case('signsgd_update', nd.signsgd_update, 0, common),
        op_case('signum_update', nd.signum_update, 1, dict(common, momentum=0.9, wd_lh=0.02)),
        op_case('lamb_update_phase1', nd.lamb_update_phase1, 2,
                dict(beta1=0.8, beta2=0.99, epsilon=1e-6, t=3, wd=0.05, rescale_grad=0.5,
                     clip_gradient=0.6), positive=(1,), steps=1),
        op_case('lamb_update_phase1', nd.lamb_update_phase1, 2,
                dict(t=3, wd=0.05, bias_correction=False), positive=(1,), steps=1),
        op_case('lamb_update_phase2', nd.lamb_update_phase2, 0,
                dict(lr=0.1, lower_bound=0.5, upper_bound=2.0), scalars=(3.0, 1.5), steps=1),
        op_case('lamb_update_phase2', nd.lamb_update_phase2, 0, dict(lr=0.1),
                scalars=(0.0, 1.5), steps=1),
        op_case('mp_lamb_update_phase1', nd.mp_lamb_update_phase1, 2,
                dict(t=2, wd=0.05, rescale_grad=0.5), positive=(1,), steps=1, dtype='float16',
                master=True),
        op_case('mp_lamb_update_phase2', nd.mp_lamb_update_phase2, 0, dict(lr=0.1),
                scalars=(3.0, 1.5), steps=1, dtype='float16', master=True, master_last=True,
                grad_dtype='float32'),
    ]
    return cases


# -------------------------------------------------------------------------------------------------
# Optimizers
# -------------------------------------------------------------------------------------------------

def optimizer_case(name, kwargs, dtype='float32', n_params=2, lr_mult=None, wd_mult=None,
                   scheduler=None, steps=3):
    shapes = [(2, 3), (3,)][:n_params]
    weights = [arr(s, dtype=dtype) for s in shapes]
    grads = [[arr(s, -2, 2, dtype) for s in shapes] for _ in range(steps)]
    kw = dict(kwargs)
    if scheduler is not None:
        kw['lr_scheduler'] = getattr(mx.lr_scheduler, scheduler[0])(**scheduler[1])
    opt = mx.optimizer.create(name, **kw)
    if lr_mult:
        opt.set_lr_mult({int(k): v for k, v in lr_mult.items()})
    if wd_mult:
        opt.set_wd_mult({int(k): v for k, v in wd_mult.items()})
    upd = mx.optimizer.get_updater(opt)
    W = [mx.nd.array(w, dtype=dtype) for w in weights]
    for step in grads:
        upd(list(range(n_params)), [mx.nd.array(g, dtype=dtype) for g in step], W)
    return {'name': name, 'kwargs': kwargs, 'dtype': dtype, 'lr_mult': lr_mult,
            'wd_mult': wd_mult, 'scheduler': scheduler,
            'weights': [tolist(w) for w in weights],
            'grads': [[tolist(g) for g in step] for step in grads],
            'after': [tolist(w) for w in W],
            'states': [flat_states(upd.states[i]) for i in range(n_params)],
            'num_update': opt.num_update}


def optimizers():
    base = dict(learning_rate=0.1, wd=0.05, rescale_grad=0.5, clip_gradient=0.7)
    mults = dict(lr_mult={'1': 0.5}, wd_mult={'0': 2.0})
    return [
        optimizer_case('sgd', dict(learning_rate=0.1)),
        optimizer_case('sgd', dict(base, momentum=0.9), **mults),
        optimizer_case('sgd', dict(base, momentum=0.9, multi_precision=True), dtype='float16'),
        optimizer_case('sgd', dict(base, multi_precision=True), dtype='float16'),
        optimizer_case('sgd', dict(momentum=0.9, wd=0.01),
                       scheduler=('FactorScheduler', dict(step=2, factor=0.5, base_lr=0.2))),
        optimizer_case('nag', dict(base, momentum=0.9, wd=0.0), **mults),
        optimizer_case('nag', dict(base)),
        optimizer_case('nag', dict(base, momentum=0.9, wd=0.0, multi_precision=True),
                       dtype='float16'),
        optimizer_case('adam', dict(base)),
        optimizer_case('adam', dict(base, beta1=0.8, beta2=0.95, epsilon=1e-5,
                                    multi_precision=True), dtype='float16'),
        optimizer_case('adagrad', dict(base, eps=1e-6)),
        optimizer_case('rmsprop', dict(base, gamma1=0.8, clip_weights=0.95)),
        optimizer_case('rmsprop', dict(base, learning_rate=0.01, centered=True, gamma2=0.8)),
        optimizer_case('adadelta', dict(base, rho=0.8, epsilon=1e-4)),
        optimizer_case('ftrl', dict(base, lamda1=0.02, beta=0.5)),
        optimizer_case('adamax', dict(base, beta1=0.8, beta2=0.95)),
        optimizer_case('nadam', dict(base), n_params=1),
        optimizer_case('signum', dict(base, wd_lh=0.01)),
        optimizer_case('signum', dict(base, momentum=0.0)),
        optimizer_case('ftml', dict(base)),
        optimizer_case('lamb', dict(base, lower_bound=0.1, upper_bound=5.0)),
        optimizer_case('lamb', dict(base, bias_correction=False)),
        optimizer_case('dcasgd', dict(base, lamda=0.1)),
        optimizer_case('test', dict(rescale_grad=0.5)),
    ]


# -------------------------------------------------------------------------------------------------
# Schedulers
# -------------------------------------------------------------------------------------------------

def schedulers():
    configs = [
        ('FactorScheduler', dict(step=3, factor=0.5, base_lr=1.0)),
        ('FactorScheduler', dict(step=2, factor=0.1, stop_factor_lr=1e-3, base_lr=1.0)),
        ('FactorScheduler', dict(step=2, factor=0.5, base_lr=1.0, warmup_steps=4,
                                 warmup_begin_lr=0.1)),
        ('MultiFactorScheduler', dict(step=[2, 5, 6], factor=0.5, base_lr=1.0)),
        ('MultiFactorScheduler', dict(step=[3, 7], factor=0.1, base_lr=0.5, warmup_steps=3,
                                      warmup_mode='constant', warmup_begin_lr=0.05)),
        ('PolyScheduler', dict(max_update=10, base_lr=1.0, pwr=2)),
        ('PolyScheduler', dict(max_update=10, base_lr=1.0, pwr=1, final_lr=0.1,
                               warmup_steps=3, warmup_begin_lr=0.2)),
        ('CosineScheduler', dict(max_update=10, base_lr=1.0)),
        ('CosineScheduler', dict(max_update=12, base_lr=2.0, final_lr=0.5, warmup_steps=4,
                                 warmup_mode='constant', warmup_begin_lr=0.25)),
    ]
    out = []
    for cls, kwargs in configs:
        sched = getattr(mx.lr_scheduler, cls)(**kwargs)
        updates = list(range(0, 15))
        out.append({'class': cls, 'kwargs': kwargs, 'num_update': updates,
                    'lr': [float(sched(n)) for n in updates]})
    return out


# -------------------------------------------------------------------------------------------------
# Trainer
# -------------------------------------------------------------------------------------------------

def trainer_run(contexts, optimizer, optimizer_params, kvstore='device', update_on_kvstore=None):
    net = mx.gluon.nn.Dense(2, in_units=3, prefix='dense_')
    net.initialize(ctx=contexts)
    w = arr((2, 3))
    b = arr((2,))
    net.weight.set_data(mx.nd.array(w))
    net.bias.set_data(mx.nd.array(b))
    trainer = mx.gluon.Trainer(net.collect_params(), optimizer, dict(optimizer_params),
                               kvstore=kvstore, update_on_kvstore=update_on_kvstore)
    batches = [(arr((4, 3)), arr((4, 2))) for _ in range(3)]
    after = []
    for x, y in batches:
        parts = np.array_split(np.arange(4), len(contexts))
        with mx.autograd.record():
            losses = [((net(mx.nd.array(x[p], ctx=c)) - mx.nd.array(y[p], ctx=c)) ** 2).sum()
                      for p, c in zip(parts, contexts)]
        for loss in losses:
            loss.backward()
        trainer.step(4)
        after.append({'weight': tolist(net.weight.data(contexts[0])),
                      'bias': tolist(net.bias.data(contexts[0]))})
    return {'contexts': len(contexts), 'optimizer': optimizer,
            'optimizer_params': optimizer_params, 'update_on_kvstore': update_on_kvstore,
            'weight': tolist(w), 'bias': tolist(b),
            'batches': [[tolist(x), tolist(y)] for x, y in batches], 'after': after}


def trainer():
    one = [mx.cpu(0)]
    two = [mx.cpu(0), mx.cpu(1)]
    return [
        trainer_run(one, 'sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}),
        trainer_run(one, 'adam', {'learning_rate': 0.05}),
        trainer_run(two, 'sgd', {'learning_rate': 0.1, 'momentum': 0.9}),
        trainer_run(two, 'adam', {'learning_rate': 0.05}, update_on_kvstore=False),
    ]


def main():
    data = {'ops': ops(), 'optimizers': optimizers(), 'schedulers': schedulers(),
            'trainer': trainer()}
    path = os.path.join(HERE, 'optimizer.json')
    with open(path, 'w') as f:
        json.dump(data, f, separators=(',', ':'))
    print('wrote', path, os.path.getsize(path), 'bytes')


if __name__ == '__main__':
    main()
