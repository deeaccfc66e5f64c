"""``horovod.mxnet``'s collectives on every worker of a job (run by test_dist.py through
``hybridlib.launch``, which serves ``import horovod.mxnet``); each check raises on failure,
which stops the job."""
import numpy as np
import pytest

import horovod.mxnet as hvd
import mxnet as mx
from mxnet import nd


def main():
    hvd.init()
    assert hvd.is_initialized() and hvd.mpi_built() and not hvd.gloo_enabled()
    rank, size = hvd.rank(), hvd.size()
    assert size == 2 and hvd.local_size() == 2 and hvd.local_rank() == rank
    assert hvd.cross_size() == 1 and hvd.cross_rank() == 0
    x = nd.array([1.0, 2.0]) * (rank + 1)
    # allreduce averages by default, sums with average=False or op=Sum; a new array
    np.testing.assert_allclose(hvd.allreduce(x).asnumpy(), [1.5, 3.0])
    np.testing.assert_allclose(hvd.allreduce(x, average=False).asnumpy(), [3.0, 6.0])
    np.testing.assert_allclose(hvd.allreduce(x, op=hvd.Sum, prescale_factor=2.0,
                                             postscale_factor=0.5).asnumpy(), [3.0, 6.0])
    np.testing.assert_allclose(x.asnumpy(), np.array([1.0, 2.0]) * (rank + 1))
    y = x.copy()
    assert hvd.allreduce_(y, average=False) is y
    np.testing.assert_allclose(y.asnumpy(), [3.0, 6.0])
    pair = hvd.grouped_allreduce([x, nd.full((3,), rank + 1.0, dtype='float64')])
    np.testing.assert_allclose(pair[0].asnumpy(), [1.5, 3.0])
    assert pair[1].dtype == np.float64 and pair[1].asnumpy().tolist() == [1.5] * 3
    # allgather joins along the first axis, whose length may differ between workers
    gathered = hvd.allgather(nd.full((rank + 1, 2), rank, dtype='int32'))
    assert gathered.dtype == np.int32
    np.testing.assert_array_equal(gathered.asnumpy(), [[0, 0], [1, 1], [1, 1]])
    # broadcast from any root, new or in place
    np.testing.assert_array_equal(hvd.broadcast(x, root_rank=1).asnumpy(), [2.0, 4.0])
    z = nd.full((2, 2), rank + 5.0)
    assert hvd.broadcast_(z, 0) is z
    np.testing.assert_array_equal(z.asnumpy(), np.full((2, 2), 5.0))
    # broadcast_parameters of a dict of NDArrays
    params = {'b': nd.full((2,), rank + 1.0), 'a': nd.full((1,), rank + 3.0)}
    hvd.broadcast_parameters(params, root_rank=1)
    assert params['b'].asnumpy().tolist() == [2.0, 2.0] and params['a'].asnumpy().tolist() == [4.0]
    # DistributedTrainer's fp16 compression: summed as float16, written back as float32
    net = mx.gluon.nn.Dense(2, in_units=2)
    net.initialize(mx.init.Constant(1.0))
    trainer = hvd.DistributedTrainer(net.collect_params(), 'sgd', {'learning_rate': 1.0},
                                     compression=hvd.Compression.fp16)
    with mx.autograd.record():
        loss = net(nd.array([[0.5, 0.25]]) * (rank + 1)).sum()
    loss.backward()
    trainer.step(1)
    # the average of the workers' gradients (x and 2x): 1.5x, subtracted from 1
    np.testing.assert_allclose(net.weight.data().asnumpy(), 1 - 1.5 * np.array([[0.5, 0.25]] * 2))
    assert net.weight.data().dtype == np.float32
    with pytest.raises(mx.base.NotSupportedError, match='Adasum'):
        hvd.allreduce(x, op=hvd.Adasum)
    with pytest.raises(ValueError, match='supersedes'):
        hvd.allreduce(x, average=True, op=hvd.Sum)
    with pytest.raises(mx.MXNetError, match='root rank 2 is not a worker'):
        hvd.broadcast(x, root_rank=2)
    with pytest.raises(ValueError, match='invalid params'):
        hvd.broadcast_parameters([x])


if __name__ == '__main__':
    main()
