"""What keeping hybridized calls safe from several threads costs: a lock held while a plan runs
(what hybridlib does) against per-thread static buffers (a plan per thread, no lock).

    python benchmarks/thread_safety.py [--calls 2000] [--threads 4]

For each network it times one thread calling ``calls`` times and ``threads`` threads calling
``calls`` times each, with ``static_alloc=True, static_shape=True``, under both designs, and
checks that every result is bit-identical to the single-threaded one. The per-thread design is
built here by keying plans by thread (``PerThreadCachedOp``); it is measured, not shipped.
"""
import argparse
import threading
import time

import numpy as np

import hybridlib as mx
from hybridlib import cached_op, nd
from hybridlib.gluon import nn


class PerThreadCachedOp(cached_op.CachedOp):
    """Plans keyed by thread as well, each thread's last plan in a thread-local, and no plan
    lock: every thread has its own static buffers."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._local = threading.local()

    def _plan(self, datas, ctx, is_train, grad_mask):
        key = cached_op.signature(datas, ctx, is_train) + (grad_mask, threading.get_ident())
        last = getattr(self._local, 'last', None)
        if last is not None and last[0] == key:
            return last[1]
        with self._plans_lock:
            plan = self._plans.get(key)
            if plan is None:
                plan = cached_op.Plan(self._symbol, self._input_nodes, key[0], key[1], ctx,
                                      is_train, grad_mask, None, True)
                plan.lock = None            # this thread's buffers only
                self._plans[key] = plan
        self._local.last = (key, plan)
        return plan


def _mlp(width, depth):
    net = nn.HybridSequential()
    for _ in range(depth):
        net.add(nn.Dense(width, activation='relu'))
    net.add(nn.Dense(10))
    return net


NETWORKS = {
    'mlp_b1 (784-256-256-10)': (lambda: _mlp(256, 2), (1, 784)),
    'deep20_b1 (20 x Dense(32))': (lambda: _mlp(32, 20), (1, 32)),
    'mlp_b256 (784-1024x2-10)': (lambda: _mlp(1024, 2), (256, 784)),
}


def _build(make, shape, design):
    net = make()
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    x = nd.array(np.random.RandomState(0).rand(*shape).astype('float32'))
    net(x)
    if design == 'per-thread':
        op = net._last_call.cached_op
        per_thread = PerThreadCachedOp(op._symbol, flags=list(op.flags.items()))
        net._last_call.cached_op = per_thread
    return net, x


def _run(net, inputs, calls, threads):
    """Seconds for ``threads`` threads each calling ``calls`` times, and the wrong results."""
    expected = [net(x).asnumpy() for x in inputs]
    wrong = [0]

    def work(k):
        x, want = inputs[k % len(inputs)], expected[k % len(inputs)]
        for _ in range(calls):
            if not np.array_equal(net(x).asnumpy(), want):
                wrong[0] += 1

    pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    start = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return time.perf_counter() - start, wrong[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--calls', type=int, default=2000)
    parser.add_argument('--threads', type=int, default=4)
    args = parser.parse_args()
    print(f'| network | design | 1 thread, us/call | {args.threads} threads, us/call '
          '(all calls) | wrong |')
    print('| --- | --- | --- | --- | --- |')
    for name, (make, shape) in NETWORKS.items():
        for design in ('lock', 'per-thread'):
            net, x = _build(make, shape, design)
            inputs = [x * (k + 1) for k in range(args.threads)]
            _run(net, inputs, 50, 1)                                    # warm up
            one, wrong1 = _run(net, inputs[:1], args.calls, 1)
            many, wrong = _run(net, inputs, args.calls, args.threads)
            print(f'| {name} | {design} | {one / args.calls * 1e6:.1f} | '
                  f'{many / (args.calls * args.threads) * 1e6:.1f} | {wrong1 + wrong} |')


if __name__ == '__main__':
    main()
