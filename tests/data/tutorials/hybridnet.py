# The HybridNet example of MXNet 1.x's "Hybridize" tutorial (gluon/blocks/hybridize),
# unmodified: it imports mxnet. Run it on hybridlib with `python -m hybridlib hybridnet.py`.
import os
import tempfile

import mxnet as mx
from mxnet import gluon, nd
from mxnet.gluon import nn


class HybridNet(nn.HybridBlock):
    def __init__(self, **kwargs):
        super(HybridNet, self).__init__(**kwargs)
        with self.name_scope():
            self.fc1 = nn.Dense(256)
            self.fc2 = nn.Dense(128)
            self.fc3 = nn.Dense(2)

    def hybrid_forward(self, F, x):
        # F is a function space that depends on the type of x
        # If x's type is NDArray, then F will be mxnet.nd
        # If x's type is Symbol, then F will be mxnet.sym
        print('type(x): {}, F: {}'.format(
                type(x).__name__, F.__name__))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


net = HybridNet()
net.initialize()
x = nd.random.normal(shape=(1, 512))
print('=== 1st forward ===')
y = net(x)
print('=== 2nd forward ===')
y = net(x)

net.hybridize()
print('=== 1st forward ===')
y = net(x)
print('=== 2nd forward ===')
y = net(x)

x = mx.sym.var('data')
y = net(x)
print(y)
print(y.list_arguments())

folder = tempfile.mkdtemp()
y.save(os.path.join(folder, 'model.json'))
net.save_parameters(os.path.join(folder, 'model.params'))

net.export(os.path.join(folder, 'model'), epoch=1)
print(sorted(os.listdir(folder)))
x = nd.random.normal(shape=(3, 512))
reloaded = gluon.SymbolBlock.imports(os.path.join(folder, 'model-symbol.json'), ['data'],
                                     os.path.join(folder, 'model-0001.params'))
print('imported output matches:', (reloaded(x) - net(x)).abs().max().asscalar() < 1e-5)
sym = mx.sym.load(os.path.join(folder, 'model.json'))
executor = sym.simple_bind(mx.cpu(), data=(3, 512))
for name, param in net.collect_params().items():
    executor.arg_dict[name][:] = param.data()
executor.forward(data=x)
print('symbol output matches:',
      (executor.outputs[0] - net(x)).abs().max().asscalar() < 1e-5)
