"""GPU arrays across the workers of a job (run by test_dist.py through ``hybridlib.launch``
on a machine with a GPU): both workers on GPU 0, where NCCL refuses two ranks on one device,
so the sums go through host memory; each check raises on failure, which stops the job."""
import numpy as np

import hybridlib as mx
from hybridlib import dist, nd


def main():
    world = dist.world()
    rank, ctx = world.rank, mx.gpu(0)
    assert world.nccl(ctx) is None          # two workers on one device: staged through host
    a = nd.full((3, 4), rank + 1.0, ctx=ctx)
    b = nd.arange(5, ctx=ctx) * (rank + 1)
    c = nd.full((2,), rank + 1.0, ctx=mx.cpu())
    world.allreduce_([a, b, c])
    np.testing.assert_array_equal(a.asnumpy(), np.full((3, 4), 3.0))
    np.testing.assert_array_equal(b.asnumpy(), np.arange(5) * 3)
    np.testing.assert_array_equal(c.asnumpy(), np.full(2, 3.0))
    h = nd.full((4,), 10.0 + rank, ctx=ctx, dtype='float16')
    world.broadcast_([h], root=1)
    np.testing.assert_array_equal(h.asnumpy(), np.full(4, 11.0, np.float16))
    # a Trainer on GPU parameters, dist_device_sync: the store on the device
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(rank + 1.0), ctx=ctx)
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0},
                               kvstore='dist_device_sync')
    with mx.autograd.record():
        loss = net(nd.ones((1, 3), ctx=ctx)).sum()
    loss.backward()
    trainer.step(1)
    # rank 0's weight (1) minus the summed gradient (1 from each worker)
    np.testing.assert_array_equal(net.weight.data(ctx).asnumpy(), np.full((2, 3), -1.0))


if __name__ == '__main__':
    main()
