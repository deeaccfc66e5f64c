"""``Module.fit`` with ``kvstore='dist_sync'`` on every worker of a job (run by
test_distributed.py through ``hybridlib.launch``), or in one process (``single``); saves the
trained weight to OUT/KIND-RANK.npy.

usage: module_fit.py KIND OUT

Each worker takes rows ``r::N`` of every batch of 8 and starts from its own seed; as MXNet's
Module does with a synchronous distributed store, the gradient scale is 1 / (batch size times
workers), so the workers end with the weights of one process on the whole batches."""
import os
import sys

import numpy as np

import hybridlib as mx


def main(kind, out):
    kv = None if kind == 'single' else mx.kv.create(kind)
    rank, size = (0, 1) if kv is None else (kv.rank, kv.num_workers)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 5)).astype('f4')
    y = (x.sum(1) > 0).astype('f4')
    rows = np.arange(64).reshape(-1, 8)[:, rank::size].reshape(-1)
    it = mx.io.NDArrayIter(x[rows], y[rows], batch_size=8 // size)
    data = mx.sym.var('data')
    hidden = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=6, name='fc1'), 'relu')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(hidden, num_hidden=2, name='fc2'),
                               name='softmax')
    mx.random.seed(rank)
    mod = mx.mod.Module(net)
    mod.fit(it, num_epoch=3, kvstore=kv or 'local', optimizer='sgd',
            optimizer_params={'learning_rate': 0.5, 'momentum': 0.9})
    arg_params = mod.get_params()[0]
    np.save(os.path.join(out, f'{kind}-{rank}.npy'), np.concatenate(
        [arg_params[name].asnumpy().ravel() for name in sorted(arg_params)]))


if __name__ == '__main__':
    main(*sys.argv[1:])
