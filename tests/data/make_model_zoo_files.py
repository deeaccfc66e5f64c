"""Writes the model-zoo fixtures from MXNet 1.9.1 (run with the oracle's python, from the
repository root)::

    .oracle/bin/python tests/data/make_model_zoo_files.py

* ``model_zoo-params.json.gz``: for every model of ``vision.get_model``, its prefix (built in a
  fresh NameManager) and its parameters in ``collect_params()`` order as ``[name without the
  prefix, declared shape, shape inferred for a 224x224 input (299x299 for inceptionv3)]``.
* ``model_zoo-<net>.params``: ``save_parameters`` files of three tiny zoo networks (ResNet V1
  and V2 with bottlenecks, a DenseNet), with random weights and BatchNorm statistics.
* ``model_zoo-io.npz``: for each tiny network its input, predict-mode output, the gradient of
  ``sum(output * cot)`` with respect to the input and to every parameter in training mode
  (batch statistics), the exported ``-symbol.json`` (hybridized before the first call, as the
  reference exports of tests/data/reference) and the repr; and the traced graphs
  (``tojson()``) of the zoo models in GRAPHS.
"""
import gzip
import json
import os

os.environ['MXNET_MKLDNN_ENABLED'] = '0'     # MXNet's native CPU kernels, as the references
os.environ['MXNET_STORAGE_FALLBACK_LOG_VERBOSE'] = '0'

import numpy as np                           # noqa: E402
import mxnet as mx                           # noqa: E402
from mxnet import autograd, nd               # noqa: E402
from mxnet.gluon.model_zoo import vision     # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

MODELS = ['resnet18_v1', 'resnet34_v1', 'resnet50_v1', 'resnet101_v1', 'resnet152_v1',
          'resnet18_v2', 'resnet34_v2', 'resnet50_v2', 'resnet101_v2', 'resnet152_v2',
          'vgg11', 'vgg13', 'vgg16', 'vgg19', 'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn',
          'alexnet', 'densenet121', 'densenet161', 'densenet169', 'densenet201',
          'squeezenet1.0', 'squeezenet1.1', 'inceptionv3', 'mobilenet1.0', 'mobilenet0.75',
          'mobilenet0.5', 'mobilenet0.25', 'mobilenetv2_1.0', 'mobilenetv2_0.75',
          'mobilenetv2_0.5', 'mobilenetv2_0.25']

# name -> (construction code run with ``vision`` in scope, input shape)
TINY = {
    'resnetv2_tiny': ("vision.ResNetV2(vision.BottleneckV2, [1, 1, 1, 1], [4, 8, 12, 16, 20], "
                      "classes=5, thumbnail=True)", (2, 3, 12, 12)),
    'densenet_tiny': ("vision.DenseNet(8, 4, [2, 2], bn_size=2, classes=5)", (1, 1, 56, 56)),
    'resnetv1_tiny': ("vision.ResNetV1(vision.BottleneckV1, [1, 1, 1, 1], [4, 8, 12, 16, 20], "
                      "classes=5, thumbnail=True)", (1, 3, 8, 8)),
}
# models whose traced graph (``net(sym.var('data')).tojson()``) is stored: the structures the
# tiny networks and tests/data/reference do not cover (the ResNets trace ``+`` on Symbols of
# unknown shape, which hybridlib writes as broadcast_add; their exports are compared instead)
GRAPHS = ['inceptionv3', 'mobilenetv2_0.25', 'squeezenet1.0', 'vgg11_bn', 'alexnet']


def param_table():
    table = {}
    for name in MODELS:
        with mx.name.NameManager():
            net = vision.get_model(name)
        size = 299 if name == 'inceptionv3' else 224
        out = net(mx.sym.var('data'))
        args, _, auxs = out.infer_shape(data=(1, 3, size, size))
        inferred = dict(zip(out.list_arguments(), args))
        inferred.update(zip(out.list_auxiliary_states(), auxs))
        prefix = net.prefix
        rows = [[key[len(prefix):], list(p.shape), list(inferred[key])]
                for key, p in net.collect_params().items()]
        table[name] = {'prefix': prefix, 'params': rows}
    text = json.dumps(table, separators=(',', ':')).encode()
    with open(os.path.join(HERE, 'model_zoo-params.json.gz'), 'wb') as f:
        f.write(gzip.compress(text, mtime=0))        # the same bytes on every run


def tiny_networks():
    rng = np.random.RandomState(0)
    arrays = {}
    for name, (code, shape) in TINY.items():
        mx.random.seed(1)
        with mx.name.NameManager():
            net = eval(code)                     # noqa: S307 - our own construction code
        # the procedure of tests/data/reference: hybridized before the first call, so that
        # the exported graph records deferred shapes as 0
        net.initialize(mx.init.Xavier())
        net.hybridize()
        x = nd.array(rng.uniform(-1, 1, shape))
        net(x)
        for key, p in net.collect_params().items():
            if key.endswith(('beta', 'bias', 'running_mean')):
                p.set_data(nd.array(rng.normal(0, 0.1, p.shape)))
            elif key.endswith(('gamma', 'running_var')):
                p.set_data(nd.array(rng.uniform(0.5, 1.5, p.shape)))
        net.save_parameters(os.path.join(HERE, f'model_zoo-{name}.params'))
        arrays[f'{name}:input'] = x.asnumpy()
        arrays[f'{name}:output'] = net(x).asnumpy()
        cot = nd.array(rng.uniform(-1, 1, arrays[f'{name}:output'].shape))
        arrays[f'{name}:cot'] = cot.asnumpy()
        x.attach_grad()
        with autograd.record():
            out = net(x)
        out.backward(cot)
        arrays[f'{name}:grad_input'] = x.grad.asnumpy()
        for key, p in net.collect_params().items():
            if p.grad_req != 'null':
                arrays[f'{name}:grad:{key}'] = p.grad().asnumpy()
        arrays[f'{name}:repr'] = np.array(repr(net).encode())
        prefix = os.path.join(HERE, f'_tmp_{name}')
        net.export(prefix)
        with open(prefix + '-symbol.json') as f:
            arrays[f'{name}:symbol'] = np.array(f.read().encode())
        os.remove(prefix + '-symbol.json')
        os.remove(prefix + '-0000.params')
    for name in GRAPHS:
        with mx.name.NameManager():
            net = vision.get_model(name)
        arrays[f'graph:{name}'] = np.array(net(mx.sym.var('data')).tojson().encode())
    np.savez_compressed(os.path.join(HERE, 'model_zoo-io.npz'), **arrays)


if __name__ == '__main__':
    param_table()
    tiny_networks()
