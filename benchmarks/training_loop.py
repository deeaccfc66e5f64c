"""The training loop as a user writes it: a small CNN on scikit-learn's 8x8 digits, with a
DataLoader, Adam, BatchNorm, Dropout and an accuracy metric, hybridlib against MXNet 1.9.1.

usage: python benchmarks/training_loop.py [--mxnet PYTHON] [--epochs 15] [--rounds 3]
           [--threads N] [--profile]

The network (two 3x3 convolutions of 16 and 32 filters, each with BatchNorm and ReLU, 2x2 max
pooling, Dense(64), Dropout(0.3), Dense(10)) is hybridized; the loss is imperative, or
hybridized too (the second row). Each run trains for ``--epochs`` epochs on 1500 digits in
batches of 64 and is timed from its first batch to its last; the libraries take turns, run by
run, ``--rounds`` times, and the table gives the median seconds. The digits come from
scikit-learn here (``pip install scikit-learn``) and reach the MXNet worker as a file.

``--profile`` runs each library once more (loss imperative) under its operator profiler
and prints the per-operator tables (hybridlib's: the hybridized graph's operators, each timed
by itself) after the results.

Worker mode (one run, one JSON line):
``--lib hybridlib|mxnet --data DIGITS.npz [--hybridize-loss] [--profile]``.
"""
import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import common

HERE = Path(__file__).resolve().parent
TRAIN = 1500


def digits_cnn(mx):
    """The user's network (also ``distributed.py``'s)."""
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'),
            nn.Conv2D(32, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'),
            nn.MaxPool2D(2), nn.Flatten(), nn.Dense(64, activation='relu'), nn.Dropout(0.3),
            nn.Dense(10))
    return net


def train(mx, data, epochs, hybridize_loss, profile=False):
    """The user's script: (seconds of training, training accuracy, test accuracy)."""
    gluon = mx.gluon
    mx.random.seed(0)
    np.random.seed(0)
    images = data['images'].reshape(-1, 1, 8, 8).astype('float32') / 16
    labels = data['labels'].astype('float32')
    net = digits_cnn(mx)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    if hybridize_loss:
        loss_fn.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': 0.003})
    dataset = gluon.data.ArrayDataset(mx.nd.array(images[:TRAIN]), mx.nd.array(labels[:TRAIN]))
    loader = gluon.data.DataLoader(dataset, batch_size=64, shuffle=True)
    metric = mx.metric.Accuracy()
    if profile:
        mx.profiler.set_config(profile_all=True, aggregate_stats=True,
                               filename=os.path.join(tempfile.gettempdir(), 'profile.json'))
        mx.profiler.set_state('run')
    start = time.perf_counter()
    for _ in range(epochs):
        metric.reset()
        for x, y in loader:
            with mx.autograd.record():
                out = net(x)
                loss = loss_fn(out, y)
            loss.backward()
            trainer.step(x.shape[0])
            metric.update(y, out)
    mx.nd.waitall()
    seconds = time.perf_counter() - start
    if profile:
        mx.profiler.set_state('stop')
        table = mx.profiler.dumps(sort_by='total')
        print(table[table.find('operator'):], file=sys.stderr)
    test = mx.metric.Accuracy()
    test.update(mx.nd.array(labels[TRAIN:]), net(mx.nd.array(images[TRAIN:])))
    return seconds, metric.get()[1], test.get()[1]


def worker(args):
    mx = importlib.import_module(args.lib)
    seconds, train_acc, test_acc = train(mx, np.load(args.data), args.epochs,
                                         args.hybridize_loss, args.profile)
    print(json.dumps(dict(lib=args.lib, version=f'{args.lib} {mx.__version__}',
                          seconds=seconds, train_accuracy=train_acc, test_accuracy=test_acc)))


def digits(folder):
    """scikit-learn's digits written to ``folder``/digits.npz."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit('training_loop.py needs scikit-learn for its data: pip install scikit-learn')
    data = load_digits()
    path = os.path.join(folder, 'digits.npz')
    np.savez(path, images=data.images, labels=data.target)
    return path


def run(python, lib, data, args, hybridize_loss, profile=False):
    command = [python, str(HERE / 'training_loop.py'), '--lib', lib, '--data', data,
               '--epochs', str(args.epochs)] + (['--hybridize-loss'] if hybridize_loss else []) \
        + (['--profile'] if profile else [])
    env = dict(os.environ)
    if args.threads:
        for name in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
            env[name] = str(args.threads)
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f'{lib} failed:\n{done.stderr[-2000:]}')
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if profile:
        result['profile'] = done.stderr.strip()
    return result


def main(args):
    libs = [('hybridlib', sys.executable)] + ([('mxnet', args.mxnet)] if args.mxnet else [])
    runs = {}
    with tempfile.TemporaryDirectory() as folder:
        data = digits(folder)
        for hybridize_loss in (False, True):
            for round_ in range(args.rounds):
                for lib, python in (libs if round_ % 2 == 0 else libs[::-1]):
                    result = run(python, lib, data, args, hybridize_loss)
                    runs.setdefault((hybridize_loss, lib), []).append(result)
                    print(f"[loss {'hybridized' if hybridize_loss else 'imperative'}] {lib}: "
                          f"{result['seconds']:.2f} s", file=sys.stderr, flush=True)
        profiles = [run(python, lib, data, args, False, profile=True)
                    for lib, python in libs] if args.profile else []
    versions = '; '.join(runs[False, lib][0]['version'] for lib, _ in libs)
    print(f'## Training loop: digits CNN, {args.epochs} epochs ({common.cpu_model()}, '
          f'{os.cpu_count()} CPUs, threads: {args.threads or "library defaults"})\n')
    print(f'{versions}; median seconds over {args.rounds} runs each, taking turns\n')
    print('| loss | hybridlib s | MXNet s | hybridlib / MXNet | accuracy train / test '
          '(hybridlib; MXNet) |')
    print('|---|---|---|---|---|')
    for hybridize_loss in (False, True):
        mine = runs[hybridize_loss, 'hybridlib']
        theirs = runs.get((hybridize_loss, 'mxnet'))
        h = statistics.median(r['seconds'] for r in mine)
        m = statistics.median(r['seconds'] for r in theirs) if theirs else None
        accuracy = '; '.join(f"{r[0]['train_accuracy']:.3f} / {r[0]['test_accuracy']:.3f}"
                             for r in (mine, theirs) if r)
        print(f"| {'hybridized' if hybridize_loss else 'imperative'} | {h:.2f} | "
              f"{'-' if m is None else f'{m:.2f}'} | {'-' if m is None else f'{h / m:.2f}'} | "
              f'{accuracy} |')
    for result in profiles:
        print(f"\n### {result['version']}: operators, loss imperative "
              f"({result['seconds']:.2f} s profiled)\n\n```\n{result['profile']}\n```")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--mxnet', metavar='PYTHON', help='interpreter with MXNet 1.9.1')
    parser.add_argument('--epochs', type=int, default=15)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--threads', type=int, help='OMP/OPENBLAS/MKL threads of every run')
    parser.add_argument('--profile', action='store_true',
                        help='print per-operator profiles of one more run of each library')
    parser.add_argument('--lib', help=argparse.SUPPRESS)
    parser.add_argument('--data', help=argparse.SUPPRESS)
    parser.add_argument('--hybridize-loss', action='store_true', help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == '__main__':
    arguments = parse_args()
    worker(arguments) if arguments.lib else main(arguments)
