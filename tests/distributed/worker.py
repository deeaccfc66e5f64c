"""One worker of the distributed tests (test_dist.py runs it through ``hybridlib.launch``).

usage: worker.py MODEL KIND OUT [FAULT]

Trains MODEL (``mlp`` or ``cnn``) for 20 steps on fixed batches of 8 and saves every parameter
to OUT/KIND-RANK.npy. KIND ``single`` is one process on the whole batches; the others split
each batch between the workers (rank r takes rows r, r + N, ...):

* ``dist_sync``, ``dist_device_sync``, ``horovod``: a Trainer with that KVStore, stepped with
  the whole batch's size (the KVStore sums the workers' gradients, as MXNet's);
* ``hvd_trainer``: ``horovod.mxnet``'s DistributedTrainer, stepped with the worker's own batch
  size (it averages);
* ``hvd_optimizer``: a Trainer without KVStore over a ``DistributedOptimizer``.

Every worker starts from its own random initialisation (the seed depends on the rank): the
KVStore's init, or ``broadcast_parameters``, must give all of them rank 0's. FAULT makes rank 1
fail: at step 5 by ``kill`` (SIGKILL), ``raise`` (an exception) or ``exit`` (``sys.exit(3)``);
by ``short``, one step short of the others, ending normally; from the start by ``shape`` (its
last layer is wider) or ``name`` (its layers are named apart).
"""
import os
import signal
import sys

import numpy as np

import mxnet as mx
from mxnet import autograd, gluon, nd

STEPS, BATCH = 20, 8


def model(name, units=4):
    net = gluon.nn.HybridSequential()
    if name == 'mlp':
        net.add(gluon.nn.Dense(16, activation='relu'), gluon.nn.Dense(units))
    else:
        net.add(gluon.nn.Conv2D(4, 3, padding=1, activation='relu'), gluon.nn.MaxPool2D(2),
                gluon.nn.Conv2D(6, 3), gluon.nn.Flatten(), gluon.nn.Dense(units))
    return net


def data(name):
    rng = np.random.default_rng(1)
    shape = (STEPS, BATCH, 6) if name == 'mlp' else (STEPS, BATCH, 1, 6, 6)
    return rng.standard_normal(shape).astype('f4'), \
        rng.integers(0, 4, (STEPS, BATCH)).astype('f4')


def main(name, kind, out, fault=None):
    if kind.startswith('hvd'):
        import horovod.mxnet as hvd
        hvd.init()
        rank, size = hvd.rank(), hvd.size()
    elif kind == 'single':
        rank, size = 0, 1
    else:
        kv = mx.kv.create(kind)
        rank, size = kv.rank, kv.num_workers
    mx.random.seed(100 + rank)
    if fault == 'name' and rank == 1:
        gluon.nn.Dense(1)           # takes the name dense0: this worker's layers are named apart
    net = model(name, 5 if fault == 'shape' and rank == 1 else 4)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    params = net.collect_params()
    optimizer = ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 1e-3})
    if kind == 'hvd_trainer':
        hvd.broadcast_parameters(params)
        trainer = hvd.DistributedTrainer(params, *optimizer)
    elif kind == 'hvd_optimizer':
        hvd.broadcast_parameters(params)
        trainer = gluon.Trainer(params, hvd.DistributedOptimizer(
            mx.optimizer.create(optimizer[0], **optimizer[1])), kvstore=None)
    elif kind == 'single':
        trainer = gluon.Trainer(params, *optimizer)
    else:
        trainer = gluon.Trainer(params, *optimizer, kvstore=kv)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    xs, ys = data(name)
    for step in range(STEPS):
        x, y = nd.array(xs[step][rank::size]), nd.array(ys[step][rank::size])
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        if step == 5 and rank == 1 and fault == 'kill':
            os.kill(os.getpid(), signal.SIGKILL)
        if step == 5 and rank == 1 and fault == 'raise':
            raise RuntimeError('worker 1 fails at step 5')
        if step == 5 and rank == 1 and fault == 'exit':
            sys.exit(3)
        if step == STEPS - 1 and rank == 1 and fault == 'short':
            break                   # one batch fewer: ends while rank 0 sums its last step
        trainer.step(x.shape[0] if kind.startswith('hvd') else BATCH)
    weights = [p.data().asnumpy().ravel() for _, p in sorted(params.items())]
    np.save(os.path.join(out, f'{kind}-{rank}.npy'), np.concatenate(weights))
    if kind != 'single':            # where MPI placed this worker
        import horovod.mxnet as hvd
        hvd.init()
        np.save(os.path.join(out, f'{kind}-{rank}-placement.npy'),
                [hvd.local_rank(), hvd.local_size(), hvd.cross_rank(), hvd.cross_size()])


if __name__ == '__main__':
    main(*sys.argv[1:])
