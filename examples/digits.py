"""Train a hybridized CNN on scikit-learn's 8x8 handwritten digits, export it, import it back.

    pip install -e ".[examples]"
    python examples/digits.py

A plain Gluon script: with ``import mxnet as mx`` in place of ``import hybridlib as mx`` it runs
on MXNet 1.9.1 as well.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

import hybridlib as mx
from hybridlib import autograd, gluon
from hybridlib.gluon import nn


def load_digits(seed):
    """(train, test) pairs of (images (N, 1, 8, 8) in [0, 1], labels), 80/20 split."""
    from sklearn.datasets import load_digits as sklearn_digits
    digits = sklearn_digits()
    images = (digits.images / 16.0).astype('float32')[:, None]
    labels = digits.target.astype('float32')
    order = np.random.RandomState(seed).permutation(len(images))
    split = int(0.8 * len(images))
    train, test = order[:split], order[split:]
    return (images[train], labels[train]), (images[test], labels[test])


def build_net():
    net = nn.HybridSequential(prefix='digits_')
    with net.name_scope():
        net.add(nn.Conv2D(32, kernel_size=3, padding=1, activation='relu'),
                nn.BatchNorm(),
                nn.Conv2D(64, kernel_size=3, padding=1, activation='relu'),
                nn.MaxPool2D(pool_size=2),
                nn.Dropout(0.25),
                nn.Flatten(),
                nn.Dense(128, activation='relu'),
                nn.Dropout(0.5),
                nn.Dense(10))
    return net


def evaluate(net, loader):
    metric = mx.metric.Accuracy()
    for x, y in loader:
        metric.update(y, net(x))
    return metric.get()[1]


def progress(epoch, epochs, done, total, loss, width=30):
    filled = int(width * done / total)
    bar = '=' * filled + ('>' if filled < width else '') + '.' * (width - filled - 1)
    return f'epoch {epoch + 1:2d}/{epochs} [{bar[:width]}] {done:3d}/{total} loss {loss:.4f}'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--epochs', type=int, default=12)
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--lr', type=float, default=2e-3)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--out', default=None,
                        help='path prefix of the exported model (default: a temporary folder)')
    args = parser.parse_args(argv)

    mx.random.seed(args.seed)
    np.random.seed(args.seed)
    (x_train, y_train), (x_test, y_test) = load_digits(args.seed)
    train_data = gluon.data.DataLoader(gluon.data.ArrayDataset(x_train, y_train),
                                       batch_size=args.batch_size, shuffle=True)
    test_data = gluon.data.DataLoader(gluon.data.ArrayDataset(x_test, y_test), batch_size=256)
    print(f'{len(x_train)} training and {len(x_test)} test images of 8x8 pixels')

    net = build_net()
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': args.lr})

    start = time.time()
    steps = len(train_data)
    interactive = sys.stdout.isatty()
    for epoch in range(args.epochs):
        total = 0.0
        for i, (x, y) in enumerate(train_data):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(x.shape[0])
            total += loss.mean().asscalar()
            if interactive:
                print('\r' + progress(epoch, args.epochs, i + 1, steps, total / (i + 1)),
                      end='', flush=True)
        accuracy = evaluate(net, test_data)
        line = progress(epoch, args.epochs, steps, steps, total / steps)
        print(('\r' if interactive else '') + f'{line}  test accuracy {accuracy:.4f}  '
              f'({time.time() - start:.1f} s)')

    prefix = args.out or os.path.join(tempfile.mkdtemp(prefix='hybridlib-digits-'), 'digits')
    net.export(prefix)
    symbol_file, params_file = f'{prefix}-symbol.json', f'{prefix}-0000.params'
    imported = gluon.SymbolBlock.imports(symbol_file, ['data'], params_file)
    imported_accuracy = evaluate(imported, test_data)
    print(f'exported {symbol_file} and {params_file}')
    print(f'test accuracy: trained net {accuracy:.4f}, re-imported net {imported_accuracy:.4f}')
    return accuracy, imported_accuracy


if __name__ == '__main__':
    main()
