"""Check that models exported by hybridlib load in real MXNet 1.9.1 and give the same outputs.

Two steps, two interpreters (MXNet 1.9.1 needs numpy<2 and cannot share hybridlib's):

    python tools/crosscheck_exports.py export DIR             # hybridlib: build, run, export
    $(bash ../shared/tools/mxnet-oracle.sh) tools/crosscheck_exports.py check DIR   # MXNet

The models: an MLP, the LeNet-style net of the hybridize tutorial, and a net of residual
blocks with BatchNorm (non-trivial running statistics).
"""
import os
import sys

import numpy as np

NAMES = ('mlp', 'lenet', 'residual')


def export(folder):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, os.pardir, 'tests'))
    import hybridlib as mx
    from hybridlib import autograd, nd
    from hybridlib.gluon import nn
    from test_hybridize_tutorial import Net, _residual_net

    def mlp():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Flatten(), nn.Dense(32, activation='relu'),
                    nn.Dense(16, activation='tanh'), nn.Dense(10))
        return net
    mx.random.seed(1)
    out = {}
    for name, make, shape in [('mlp', mlp, (3, 1, 8, 8)), ('lenet', Net, (2, 1, 28, 28)),
                              ('residual', _residual_net, (2, 3, 8, 8))]:
        net = make()
        net.initialize(mx.init.Xavier())
        net.hybridize()
        x = nd.random.normal(shape=shape)
        net(x)
        for p in net.collect_params().values():
            if 'running_mean' in p.name:
                p.set_data(nd.random.normal(0, 0.1, shape=p.shape))
            if 'running_var' in p.name:
                p.set_data(nd.random.uniform(0.5, 1.5, shape=p.shape))
        out[name + '_x'] = x.asnumpy()
        out[name + '_y'] = net(x).asnumpy()
        net.export(os.path.join(folder, name))
        with autograd.record():
            out[name + '_train'] = net(x).asnumpy()
    np.savez(os.path.join(folder, 'hybridlib-outputs.npz'), **out)
    print(f'exported {", ".join(NAMES)} to {folder}')


def check(folder):
    from mxnet import autograd, gluon, nd
    ref = np.load(os.path.join(folder, 'hybridlib-outputs.npz'))
    for name in NAMES:
        path = os.path.join(folder, name)
        net = gluon.SymbolBlock.imports(f'{path}-symbol.json', ['data'], f'{path}-0000.params')
        x = nd.array(ref[name + '_x'])
        y = net(x).asnumpy()
        with autograd.record():
            t = net(x).asnumpy()
        print(f'{name}: output {y.shape}, max |MXNet - hybridlib|: predict '
              f'{np.abs(y - ref[name + "_y"]).max():.2e}, training mode '
              f'{np.abs(t - ref[name + "_train"]).max():.2e}')


if __name__ == '__main__':
    {'export': export, 'check': check}[sys.argv[1]](sys.argv[2])
