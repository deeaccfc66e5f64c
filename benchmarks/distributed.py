"""Distributed training on this machine: allreduce throughput, and the step time of two
networks from 1 to N worker processes (``python -m hybridlib.launch``; needs the ``dist``
extra).

usage: python benchmarks/distributed.py [--workers N] [--steps 150] [--threads T] [--hosts H,H]
                                        [--models digits,resnet18]

* **allreduce**: float32 buffers of 4 KiB to 64 MiB summed over N workers
  (``dist.Communicator.allreduce_``, one buffer per call), median seconds of a call. The
  algorithm bandwidth is bytes / time; the bus bandwidth is ``2 (N - 1) / N * bytes / time``,
  what each link carries in a ring allreduce, comparable across worker counts.
* **training**, hybridized, the global batch split between the workers
  (``kvstore='dist_sync'``), median ms per step after a warm-up:
  - the digits CNN of ``training_loop.py`` (two convolutions with BatchNorm, max pooling,
    Dense, Dropout; Adam), batch 64, ``--steps`` steps: little to communicate;
  - ResNet-18 on 64x64 images (SGD with momentum), batch 16, 12 steps: 45 MB of gradients.

  Each worker runs with ``--threads`` BLAS threads (default: the cores divided between the
  workers), so N workers use the same cores as one.

The tables end with the ring cost model: a step on N machines takes about
``compute / N + 2 (N - 1) / N * gradient bytes / link bandwidth + 2 (N - 1) * latency``, with
the compute and the gradient sizes measured here.

``--hosts`` places the N workers as the launcher's ``--hosts`` does. Two names of this machine
(``--hosts localhost,127.0.0.1``) make MPI treat the workers as two machines; with
``UCX_TLS=tcp,self`` in the environment, MPICH's network module (UCX) sends their traffic over
TCP on loopback instead of shared memory, as between machines.

Worker mode (under the launcher; rank 0 prints one JSON line):
``--worker allreduce|train [--model NAME] [--steps S] [--sizes BYTES,...]``.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import common
import training_loop

HERE = Path(__file__).resolve().parent
SIZES = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20]


def _median_allreduce(world, arrays, repeat):
    """Median seconds of ``world.allreduce_(arrays)``, the workers starting together."""
    times = []
    for _ in range(repeat):
        world.barrier()
        start = time.perf_counter()
        world.allreduce_(arrays)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _allreduce(args):
    from hybridlib import dist, nd
    world = dist.world()
    results = []
    for size in args.sizes:
        x = nd.ones((size // 4,))
        for _ in range(3):
            world.allreduce_([x])
        repeat = max(5, min(200, (256 << 20) // (size * 2)))
        results.append({'bytes': size, 'seconds': _median_allreduce(world, [x], repeat)})
    return {'workers': world.size, 'allreduce': results}


# the workloads trained: (title, network, one sample's shape, global batch, steps (None:
# --steps), optimizer); ResNet-18 has 45 MB of gradients, where the digits CNN has 0.15
WORKLOADS = {
    'digits': ('digits CNN', training_loop.digits_cnn, (1, 8, 8), 64, None,
               ('adam', {'learning_rate': 0.003})),
    'resnet18': ('ResNet-18', lambda mx: mx.gluon.model_zoo.vision.resnet18_v1(classes=10),
                 (3, 64, 64), 16, 12, ('sgd', {'learning_rate': 0.01, 'momentum': 0.9})),
}


def _train(args):
    import hybridlib as mx
    from hybridlib import autograd, dist, gluon, nd
    world = dist.world()
    _, build, sample, batch, steps, optimizer = WORKLOADS[args.model]
    steps = steps or args.steps
    rng = np.random.default_rng(0)
    images = rng.random((steps, batch) + sample, dtype=np.float32)
    labels = rng.integers(0, 10, (steps, batch)).astype(np.float32)
    net = build(mx)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), *optimizer,
                            kvstore='dist_sync' if world.size > 1 else None)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rank, n = world.rank, world.size
    times = []
    for step in range(steps):
        x = nd.array(images[step][rank::n])
        y = nd.array(labels[step][rank::n])
        start = time.perf_counter()
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
        times.append(time.perf_counter() - start)
    params = [p for p in net.collect_params().values() if p.grad_req != 'null']
    gradient_bytes = sum(int(np.prod(p.shape)) * 4 for p in params)
    # the reduction alone, for the same gradients: what a step spends communicating
    grads = [p.grad() for p in params]
    reduce = _median_allreduce(world, grads, 50 if gradient_bytes < (8 << 20) else 10)
    warm = times[len(times) // 5:]
    return {'workers': n, 'step_ms': statistics.median(warm) * 1e3, 'reduce_ms': reduce * 1e3,
            'gradient_bytes': gradient_bytes}


def worker(args):
    from hybridlib import dist
    result = {'allreduce': _allreduce, 'train': _train}[args.worker](args)
    if dist.world().rank == 0:
        print(json.dumps(result), flush=True)


def launch(n, what, args, threads, model=''):
    env = dict(os.environ)
    for name in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
        env[name] = str(threads)
    where = ['--hosts', args.hosts] if args.hosts and n > 1 else []
    cmd = [sys.executable, '-m', 'hybridlib.launch', '-n', str(n), *where, str(Path(__file__)),
           '--worker', what, '--steps', str(args.steps),
           '--sizes', ','.join(str(s) for s in args.sizes)] + (['--model', model] if model else [])
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f'{what} on {n} workers failed:\n{done.stdout[-2000:]}'
                         f'{done.stderr[-2000:]}')
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(args):
    n = args.workers
    cores = os.cpu_count() or 1
    threads = args.threads or max(1, cores // n)
    print(f'## Distributed training on one machine ({common.cpu_model()}, {cores} CPUs; '
          f'{n} workers, {threads} BLAS thread(s) each'
          + (f', hosts {args.hosts}' if args.hosts else '') + ')\n')
    reduce = launch(n, 'allreduce', args, threads)['allreduce']
    print(f'### allreduce of float32 buffers, {n} workers (median per call)\n')
    print('| bytes | ms | algorithm GB/s | bus GB/s |')
    print('|---|---|---|---|')
    for row in reduce:
        seconds = row['seconds']
        print(f"| {row['bytes']:,} | {seconds * 1e3:.3f} | {row['bytes'] / seconds / 1e9:.2f} | "
              f"{2 * (n - 1) / n * row['bytes'] / seconds / 1e9:.2f} |")
    alone = args.threads or cores          # one worker takes every core
    best = max(reduce, key=lambda row: row['bytes'] / row['seconds'])
    bandwidth = 2 * (n - 1) / n * best['bytes'] / best['seconds']
    small = reduce[0]['seconds']
    print('\n### training, dist_sync, the global batch split between the workers (median ms '
          'per step)\n')
    print('| workload | workers | BLAS threads each | step ms | of which allreduce ms | '
          'speed-up |')
    print('|---|---|---|---|---|---|')
    model_lines = []
    for model in args.models.split(','):
        title, _, _, batch, _, _ = WORKLOADS[model]
        one = launch(1, 'train', args, alone, model)
        many = launch(n, 'train', args, threads, model)
        print(f"| {title}, batch {batch} | 1 | {alone} | {one['step_ms']:.2f} | - | 1.00 |")
        print(f"| {title}, batch {batch} | {n} | {threads} | {many['step_ms']:.2f} | "
              f"{many['reduce_ms']:.3f} | {one['step_ms'] / many['step_ms']:.2f} |")
        gradient = many['gradient_bytes']
        model_lines.append(
            f"{title}: compute {one['step_ms']:.2f} ms on one worker, {gradient:,} bytes of "
            f"gradients, which 8 machines on a 10 Gbit/s network (1.25 GB/s, about 50 us per "
            f"message) would sum in about "
            f"{(2 * 7 / 8 * gradient / 1.25e9 + 2 * 7 * 50e-6) * 1e3:.2f} ms a step.")
    print(f"\nRing cost model: a step on N machines takes about compute / N + "
          f"2 (N - 1) / N * gradient bytes / bandwidth + 2 (N - 1) * latency. Here the highest "
          f"bus bandwidth measured is {bandwidth / 1e9:.2f} GB/s ({best['bytes']:,} bytes) and "
          f"the latency of a {reduce[0]['bytes']:,}-byte call {small * 1e6:.0f} us.\n")
    for line in model_lines:
        print(f'* {line}')


def parse():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--steps', type=int, default=150)
    parser.add_argument('--threads', type=int, default=0)
    parser.add_argument('--hosts', default='')
    parser.add_argument('--sizes', default=','.join(str(s) for s in SIZES))
    parser.add_argument('--worker', choices=('allreduce', 'train'))
    parser.add_argument('--model', choices=tuple(WORKLOADS), help='(worker mode)')
    parser.add_argument('--models', default=','.join(WORKLOADS),
                        help='the workloads to train, of ' + ', '.join(WORKLOADS))
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(',')]
    return args


if __name__ == '__main__':
    arguments = parse()
    if arguments.worker:
        worker(arguments)
    else:
        main(arguments)
