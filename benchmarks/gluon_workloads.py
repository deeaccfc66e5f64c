"""The Gluon workloads: one source that runs unchanged on MXNet 1.9.1 or on hybridlib.

usage: python benchmarks/gluon_workloads.py --lib mxnet|hybridlib [--only NAMES]
           [--modes imperative,hybridized] [--repeat N] [--quick] [--memory]

'hybridized' is ``net.hybridize(static_alloc=True, static_shape=True)``. Timing an MXNet call
waits for its result (``wait_to_read``), as a user reading the output would.
"""
import importlib

import numpy

import common

MODES = ('imperative', 'hybridized')


def mlp(mx, width=256, depth=2, classes=10):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    for _ in range(depth):
        net.add(nn.Dense(width, activation='relu'))
    net.add(nn.Dense(classes))
    return net


def deep20(mx, classes=10):
    return mlp(mx, width=32, depth=20, classes=classes)


def lenet(mx, classes=10):
    """The LeNet-style network of Gluon's hybridize tutorial, its last layer a bare weight."""
    gluon = mx.gluon
    nn = gluon.nn

    class LeNet(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.conv1 = nn.Conv2D(6, kernel_size=5)
                self.pool1 = nn.MaxPool2D(pool_size=2)
                self.conv2 = nn.Conv2D(16, kernel_size=5)
                self.pool2 = nn.MaxPool2D(pool_size=2)
                self.fc1 = nn.Dense(120)
                self.fc2 = nn.Dense(84)
                self.fc3_weight = self.params.get('fc3_weight', shape=(classes, 84))

        def hybrid_forward(self, F, x, fc3_weight):
            x = self.pool1(F.relu(self.conv1(x)))
            x = self.pool2(F.relu(self.conv2(x)))
            x = x.reshape((0, -1))
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return F.dot(x, fc3_weight, transpose_b=True)

    return LeNet()


def resnet18(mx, classes=1000):
    return mx.gluon.model_zoo.vision.resnet18_v1(classes=classes)


MODELS = {'mlp': mlp, 'deep20': deep20, 'lenet': lenet, 'resnet18': resnet18}


def make_step(mx, workload, mode, quick=False):
    """The network of ``workload``, ready, and the function one timed call runs."""
    mx.random.seed(0)
    shape = workload.input_shape(quick)
    net = MODELS[workload.model](mx, classes=workload.classes)
    net.initialize(mx.init.Xavier())
    if mode == 'hybridized':
        net.hybridize(static_alloc=True, static_shape=True)
    x = mx.nd.random.uniform(shape=shape)
    if not workload.train:
        def step():
            net(x).wait_to_read()
        return step, mx.nd.waitall

    y = mx.nd.array([i % common.LABEL_CLASSES for i in range(shape[0])])
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd',
                               {'learning_rate': common.LEARNING_RATE})

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(shape[0])
        loss.wait_to_read()
    return step, mx.nd.waitall


def main():
    args = common.parse_worker_args(__doc__.splitlines()[0], MODES, ('mxnet', 'hybridlib'))
    mx = importlib.import_module(args.lib)
    version = f'{args.lib} {mx.__version__} (numpy {numpy.__version__})'
    common.worker_main(args, args.lib, version,
                       lambda workload, mode, quick: make_step(mx, workload, mode, quick))


if __name__ == '__main__':
    main()
