"""Write tests/data/svrg-*: MXNet 1.9.1's numbers for ``contrib.svrg_optimization``.

Run with the MXNet oracle, from the repository root::

    .oracle/bin/python tests/data/make_svrg_files.py

The scenarios are functions of the ``mx`` package: run here with ``mxnet``, and by
tests/contrib/test_svrg_optimization.py with ``hybridlib`` (the same source, as a drop-in user
would run it), which compares what they return. The data and the initial parameters come
from ``numpy.random.RandomState`` with fixed seeds, so both sides start equal. Scenarios:

* ``run_fit``: a linear regression (``FullyConnected`` + ``LinearRegressionOutput``) trained
  by ``SVRGModule.fit`` for 5 epochs, full gradients every 2, on 44 samples in batches of 8
  (the last one padded), with validation data: the final parameters and the log lines;
* ``run_two_contexts``: the same on ``cpu(0)`` and ``cpu(1)`` through the ``local`` KVStore
  (the ``_full`` keys, the weights updated in the store), sgd with momentum and wd;
* ``run_manual``: MXNet's lower-level loop (``bind``, ``init_params``, ``init_optimizer``,
  ``update_full_grads``, ``forward(is_train=True)``, ``backward``, ``update``) with a two-layer
  net and an ``Optimizer`` instance (SGD with momentum): the full gradients after the first
  and the second refresh, the final parameters and outputs.

Files: ``svrg-numbers.npz`` (arrays, keys ``<scenario>/<name>``), ``svrg-facts.json``.
"""
import importlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_module_files import capture_logger  # noqa: E402
NUMBERS = os.path.join(HERE, 'svrg-numbers.npz')
FACTS = os.path.join(HERE, 'svrg-facts.json')
TRUE_W = np.array([1.5, -2.0, 0.5, 0.8], np.float32)


def svrg_module(mx):
    """``<package>.contrib.svrg_optimization.svrg_module`` of ``mx`` (mxnet or hybridlib)."""
    return importlib.import_module(mx.__name__ + '.contrib.svrg_optimization.svrg_module')


def regression_data(seed, samples):
    """Features in [-1, 1] and targets ``x @ TRUE_W + 0.3`` plus a little noise (float32)."""
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (samples, len(TRUE_W))).astype(np.float32)
    y = x @ TRUE_W + 0.3 + 0.01 * rng.normal(0, 1, samples)
    return x, y.astype(np.float32)


def linear_symbol(mx, hidden=None):
    """FullyConnected (with a tanh layer of ``hidden`` units first, if given) and
    LinearRegressionOutput; label ``lin_reg_label``."""
    net = mx.sym.Variable('data')
    if hidden:
        net = mx.sym.FullyConnected(net, num_hidden=hidden, name='fc1')
        net = mx.sym.Activation(net, act_type='tanh', name='tanh1')
    net = mx.sym.FullyConnected(net, num_hidden=1, name='fc')
    return mx.sym.LinearRegressionOutput(net, mx.sym.Variable('lin_reg_label'), name='lro')


def init_params(mx, seed, shapes):
    """Uniform(-0.3, 0.3) parameters by name, as NDArrays."""
    rng = np.random.RandomState(seed)
    return {name: mx.nd.array(rng.uniform(-0.3, 0.3, shapes[name]).astype(np.float32))
            for name in sorted(shapes)}


def _params(mod):
    arg, aux = mod.get_params()
    out = {'arg:' + k: v.asnumpy() for k, v in arg.items()}
    out.update({'aux:' + k: v.asnumpy() for k, v in aux.items()})
    return out


def _log(logger):
    return [line for line in logger.handlers[0].lines if 'Time cost' not in line]


def _iter(mx, x, y, batch_size):
    return mx.io.NDArrayIter(x, y, batch_size=batch_size, shuffle=False,
                             label_name='lin_reg_label', last_batch_handle='pad')


def run_fit(mx):
    """``SVRGModule.fit`` on one context; return (arrays, facts)."""
    x, y = regression_data(0, 44)
    vx, vy = regression_data(1, 16)
    logger = capture_logger('svrg-fit')
    mod = svrg_module(mx).SVRGModule(linear_symbol(mx), data_names=['data'],
                                     label_names=['lin_reg_label'], logger=logger,
                                     update_freq=2)
    args = init_params(mx, 2, {'fc_weight': (1, len(TRUE_W)), 'fc_bias': (1,)})
    batches = []
    mod.fit(_iter(mx, x, y, 8), eval_data=_iter(mx, vx, vy, 8), eval_metric='mse',
            optimizer='sgd', optimizer_params=(('learning_rate', 0.1),), arg_params=args,
            num_epoch=5, batch_end_callback=lambda p: batches.append([p.epoch, p.nbatch]))
    return _params(mod), {'log': _log(logger), 'batches': batches}


def run_two_contexts(mx):
    """``SVRGModule.fit`` on cpu(0) and cpu(1) through the local KVStore."""
    x, y = regression_data(3, 48)
    logger = capture_logger('svrg-two')
    mod = svrg_module(mx).SVRGModule(linear_symbol(mx), data_names=['data'],
                                     label_names=['lin_reg_label'], logger=logger,
                                     context=[mx.cpu(0), mx.cpu(1)], update_freq=3)
    args = init_params(mx, 4, {'fc_weight': (1, len(TRUE_W)), 'fc_bias': (1,)})
    mod.fit(_iter(mx, x, y, 12), eval_metric='mse', kvstore='local', optimizer='sgd',
            optimizer_params={'learning_rate': 0.05, 'momentum': 0.9, 'wd': 0.01},
            arg_params=args, num_epoch=4)
    facts = {'log': _log(logger), 'update_on_kvstore': bool(mod._update_on_kvstore),
             'full_keys': sorted(n for n in mod._optimizer.idx2name.values()
                                 if n.endswith('_full'))}
    return _params(mod), facts


def run_manual(mx):
    """The lower-level SVRG loop with an SGD instance; return (arrays, facts)."""
    x, y = regression_data(5, 40)
    train = _iter(mx, x, y, 10)
    mod = svrg_module(mx).SVRGModule(linear_symbol(mx, hidden=3), data_names=['data'],
                                     label_names=['lin_reg_label'], update_freq=2)
    mod.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
    shapes = {'fc1_weight': (3, len(TRUE_W)), 'fc1_bias': (3,), 'fc_weight': (1, 3),
              'fc_bias': (1,)}
    mod.init_params(arg_params=init_params(mx, 6, shapes))
    # an instance keeps its own rescale_grad (Module sets 1/batch size for names only)
    sgd = mx.optimizer.SGD(learning_rate=0.05, momentum=0.9, rescale_grad=0.1)
    mod.init_optimizer(kvstore='local', optimizer=sgd)
    metric = mx.metric.create('mse')
    arrays, values = {}, []
    for epoch in range(4):
        if epoch % mod.update_freq == 0:
            mod.update_full_grads(train)
            for name, grad in mod._param_dict[0].items():
                arrays['full%d:%s' % (epoch, name)] = grad.asnumpy()
        train.reset()
        metric.reset()
        for batch in train:
            mod.forward(batch, is_train=True)
            mod.backward()
            mod.update()
            mod.update_metric(metric, batch.label)
        values.append(metric.get()[1])
    arrays.update(_params(mod))
    arrays['outputs'] = mod.get_outputs()[0].asnumpy()
    return arrays, {'mse': values, 'optimizer': type(mod._optimizer).__name__,
                    'default_opt': type(mod._optimizer.default_opt).__name__,
                    'aux_opt': type(mod._optimizer.aux_opt).__name__}


SCENARIOS = {'fit': run_fit, 'two_contexts': run_two_contexts, 'manual': run_manual}


def main():
    import mxnet as mx
    arrays, facts = {}, {}
    for name, run in SCENARIOS.items():
        got, facts[name] = run(mx)
        arrays.update({'%s/%s' % (name, k): v for k, v in got.items()})
    np.savez_compressed(NUMBERS, **arrays)
    with open(FACTS, 'w') as f:
        json.dump(facts, f, indent=1, sort_keys=True)
    print('wrote', NUMBERS, FACTS)


if __name__ == '__main__':
    main()
