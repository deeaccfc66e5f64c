"""One ResNet-18 training step on the GPU (batch 32, 224x224, SGD), hybridlib against PyTorch eager.

Median milliseconds over 20 steps after 3 warm-up steps; each step ends by waiting for the loss.
``--profile`` prints where hybridlib's step goes instead: cProfile's top functions over 5 steps
(host time) and the profiler's per-operator table over 3 (each operator synchronised).
"""
import cProfile
import io
import pstats
import sys
import time

import numpy as np

import hybridlib as mx
from hybridlib import autograd, gluon


def median_ms(step, n=20):
    for _ in range(3):
        step()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def hybridlib_step(batch=32):
    ctx = mx.gpu(0)
    x = mx.nd.array(np.random.rand(batch, 3, 224, 224), ctx=ctx)
    y = mx.nd.array(np.random.randint(0, 1000, batch), ctx=ctx)
    net = gluon.model_zoo.vision.resnet18_v1()
    net.initialize(mx.init.Xavier(), ctx=ctx)
    net.hybridize(static_alloc=True, static_shape=True)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01})

    def step():
        with autograd.record():
            value = loss(net(x), y)
        value.backward()
        trainer.step(batch)
        value.wait_to_read()
    return step


def torch_step(batch=32):
    import torch
    import torchvision
    net = torchvision.models.resnet18().cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.rand(batch, 3, 224, 224, device='cuda')
    y = torch.randint(0, 1000, (batch,), device='cuda')

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        torch.cuda.synchronize()
    return step


def profile(step):
    for _ in range(3):
        step()
    host = cProfile.Profile()
    host.enable()
    for _ in range(5):
        step()
    host.disable()
    text = io.StringIO()
    pstats.Stats(host, stream=text).sort_stats('tottime').print_stats(30)
    print(text.getvalue())
    mx.profiler.set_config(profile_all=True, aggregate_stats=True,
                           filename='resnet18_gpu_profile.json')
    mx.profiler.set_state('run')
    for _ in range(3):
        step()
    mx.profiler.set_state('stop')
    print(mx.profiler.dumps(sort_by='total'))


if __name__ == '__main__':
    if '--profile' in sys.argv:
        profile(hybridlib_step())
        sys.exit()
    h = median_ms(hybridlib_step())
    print(f'resnet18 b32 224 train step: hybridlib {h:.1f} ms', flush=True)
    try:
        t = median_ms(torch_step())
    except ImportError as e:
        print('PyTorch not available:', e)
    else:
        print(f'torch eager {t:.1f} ms, ratio {h / t:.2f}')
