"""The distributed KVStore's interface on every worker of a job (run by test_dist.py through
``hybridlib.launch``); each check raises on failure, which stops the job."""
import sys

import numpy as np

import hybridlib as mx
from hybridlib import nd


def main(kind, states_file):
    kv = mx.kv.create(kind)
    rank, n = kv.rank, kv.num_workers
    assert kv.type == kind and n == 2 and rank in (0, 1)
    # init takes rank 0's value on every worker; keys in a list are one collective call
    kv.init(['w', 'b'], [nd.full((2, 3), rank + 1.0), nd.full((4,), 10.0 * (rank + 1))])
    out = nd.zeros((2, 3))
    kv.pull('w', out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.ones((2, 3)))
    # push sums over the local values and then over the workers; pull gives every worker the sum
    kv.push('w', [nd.full((2, 3), rank + 1.0), nd.full((2, 3), 0.5)])
    kv.pull('w', out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), 1 + 2 + 0.5 * 2))
    # pushpull into the values themselves, and into out
    grads = [nd.full((4,), rank + 1.0)]
    kv.pushpull('b', grads)
    np.testing.assert_array_equal(grads[0].asnumpy(), np.full(4, 3.0))
    other = nd.zeros((4,))
    kv.pushpull('b', nd.arange(4) * (rank + 1), out=other)
    np.testing.assert_array_equal(other.asnumpy(), np.arange(4) * 3)
    # broadcast: init with rank 0's value, pulled everywhere
    got = nd.zeros((3,))
    kv.broadcast('c', nd.full((3,), 7.0 + rank), out=got)
    np.testing.assert_array_equal(got.asnumpy(), np.full(3, 7.0))
    kv.barrier()
    if kind == 'horovod':
        assert not kv.is_capable('optimizer')
        return
    # with an optimizer, push updates the stored weight on every worker alike
    kv.set_optimizer(mx.optimizer.create('sgd', learning_rate=0.5, momentum=0.9))
    kv.init('u', nd.ones((2,)))
    kv.push('u', nd.full((2,), rank + 1.0))      # the sum, 3, is the gradient
    weight = nd.zeros((2,))
    kv.pull('u', out=weight)
    np.testing.assert_allclose(weight.asnumpy(), np.full(2, 1 - 0.5 * 3))
    kv.save_optimizer_states(f'{states_file}.{rank}')
    kv.load_optimizer_states(f'{states_file}.{rank}')


if __name__ == '__main__':
    main(*sys.argv[1:])
