"""The Gluon workloads written in PyTorch: eager, and ``torch.jit.trace`` as the hybridized analog.

usage: python benchmarks/torch_workloads.py [--only NAMES] [--modes eager,jit] [--repeat N]
           [--quick]

Inference runs in ``eval()`` mode under ``torch.no_grad()``; training uses ``cross_entropy``
(the mean, which gives the gradients Gluon's summed loss with ``trainer.step(batch)`` gives)
and ``torch.optim.SGD``.
"""
import torch
import torch.nn.functional as F
from torch import nn

import common

MODES = ('eager', 'jit')


def mlp(inputs=784, width=256, depth=2, classes=10):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(inputs, width), nn.ReLU()]
        inputs = width
    layers.append(nn.Linear(inputs, classes))
    return nn.Sequential(*layers)


def deep20(classes=10):
    return mlp(inputs=32, width=32, depth=20, classes=classes)


class LeNet(nn.Module):
    """The LeNet of Gluon's hybridize tutorial, for 1x28x28 inputs."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 4 * 4, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3_weight = nn.Parameter(torch.randn(classes, 84))

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.reshape(x.shape[0], -1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return x @ self.fc3_weight.t()


class BasicBlock(nn.Module):
    """resnet18_v1's BasicBlockV1: two 3x3 convolutions, a 1x1 projection when shapes change."""

    def __init__(self, channels_in, channels, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(channels_in, channels, 3, stride, 1, bias=False), nn.BatchNorm2d(channels),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, 1, 1, bias=False), nn.BatchNorm2d(channels))
        self.downsample = None
        if stride != 1 or channels_in != channels:
            self.downsample = nn.Sequential(
                nn.Conv2d(channels_in, channels, 1, stride, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        return F.relu(self.body(x) + residual)


def resnet18(classes=1000):
    """Gluon's model_zoo resnet18_v1, layer for layer."""
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    channels_in = 64
    for channels, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [BasicBlock(channels_in, channels, stride), BasicBlock(channels, channels, 1)]
        channels_in = channels
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes)]
    return nn.Sequential(*layers)


MODELS = {'mlp': mlp, 'deep20': deep20, 'lenet': LeNet, 'resnet18': resnet18}


def make_step(workload, mode, quick=False):
    """The network of ``workload``, ready, and the function one timed call runs."""
    torch.manual_seed(0)
    shape = workload.input_shape(quick)
    net = MODELS[workload.model](classes=workload.classes)
    x = torch.rand(*shape)
    # Set for the whole timing, as a `with torch.no_grad():` around the loop would.
    torch.set_grad_enabled(workload.train)
    if not workload.train:
        net.eval()
        forward = torch.jit.trace(net, x) if mode == 'jit' else net
        return (lambda: forward(x)), None

    y = torch.tensor([i % common.LABEL_CLASSES for i in range(shape[0])])
    forward = torch.jit.trace(net, x) if mode == 'jit' else net
    optimizer = torch.optim.SGD(net.parameters(), lr=common.LEARNING_RATE)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(forward(x), y)
        loss.backward()
        optimizer.step()
    return step, None


def main():
    args = common.parse_worker_args(__doc__.splitlines()[0], MODES)
    if args.memory:
        raise SystemExit("--memory: PyTorch's allocator does not report to tracemalloc")
    version = f'torch {torch.__version__} ({torch.get_num_threads()} threads)'
    common.worker_main(args, 'torch', version, make_step)


if __name__ == '__main__':
    main()
