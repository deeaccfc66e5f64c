"""Writes the MXNet-made files in this folder. Run it with MXNet 1.9.1's Python (numpy<2):

    $(bash ../shared/tools/mxnet-oracle.sh) tests/data/make_oracle_files.py

The test suite only reads the files; it never needs MXNet.
"""
import json
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def main():
    rng = np.random.RandomState(0)
    arrays = {
        'f32': rng.randn(2, 3).astype(np.float32),
        'f64': rng.randn(4).astype(np.float64),
        'f16': rng.randn(3, 1, 2).astype(np.float16),
        'u8': rng.randint(0, 255, size=(5,)).astype(np.uint8),
        'i32': rng.randint(-9, 9, size=(2, 2)).astype(np.int32),
        'i8': rng.randint(-9, 9, size=(3,)).astype(np.int8),
        'i64': rng.randint(-9, 9, size=(1, 2, 1, 2)).astype(np.int64),
    }
    np.savez(path('ndarrays-expected.npz'), **arrays)
    nds = {k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()}
    mx.nd.save(path('ndarrays-dict.params'), nds)
    mx.nd.save(path('ndarrays-list.params'), [nds[k] for k in sorted(nds)])
    mx.nd.save(path('ndarrays-empty.params'), [])

    # a graph in MXNet 0.8's format: "param"/"attr" keys, two-number entries, BatchNorm
    # without its auxiliary inputs; MXNet upgrades it on load
    sym = mx.sym.load(path('legacy_000800-symbol.json'))
    arg, out, aux = sym.infer_shape(data=(2, 3, 8, 8))
    info = {
        'upgraded_json': json.loads(sym.tojson()),
        'list_arguments': sym.list_arguments(),
        'list_auxiliary_states': sym.list_auxiliary_states(),
        'list_outputs': sym.list_outputs(),
        'arg_shapes': arg, 'out_shapes': out, 'aux_shapes': aux,
        'attr_dict': sym.attr_dict(),
    }
    with open(path('legacy_000800-expected.json'), 'w') as f:
        json.dump(info, f, indent=1)


def parameter_values():
    """The values of the parameters in the parameter files."""
    return {
        'dense0_weight': np.arange(6, dtype=np.float32).reshape(3, 2) / 4,
        'dense0_bias': np.array([1.5, -2, 0.25], dtype=np.float32),
        'half': (np.arange(4).reshape(2, 2) - 1.5).astype(np.float16),
        'steps': np.array([3, -1, 4, 1], dtype=np.int32),
    }


def parameter_files():
    """Files of Gluon parameters written by MXNet, and what MXNet makes of Parameter.var():

    - parameterdict-mxnet.params: ParameterDict.save(strip_prefix='net_') of parameters that
      live on cpu(0) and cpu(1) with different values there (the file holds their mean);
    - parameterdict-export-mxnet.params: the same values under export's arg:/aux: names;
    - parameters-expected.json: the values in these files, and json.loads(var().tojson()) of
      several parameters with the keyword arguments that made them.
    """
    values = parameter_values()
    params = mx.gluon.ParameterDict('net_')
    for name, value in values.items():
        params.get(name, shape=value.shape, dtype=value.dtype,
                   grad_req='null' if value.dtype.kind == 'i' else 'write')
    params.initialize(mx.init.Zero(), ctx=[mx.cpu(0), mx.cpu(1)])
    for name, value in values.items():
        param = params['net_' + name]
        param.data(mx.cpu(0))[:] = value - 1
        param.data(mx.cpu(1))[:] = value + 1
    params.save(path('parameterdict-mxnet.params'), strip_prefix='net_')
    export = {('aux:' if name == 'steps' else 'arg:') + 'net_' + name:
              mx.nd.array(value, dtype=value.dtype) for name, value in values.items()}
    mx.nd.save(path('parameterdict-export-mxnet.params'), export)

    # parameters as keyword arguments (an Initializer as its dumps(), a dtype by name), each
    # with MXNet's variable
    cases = {
        'default': dict(name='w', shape=(2, 3)),
        'no_shape': dict(name='w'),
        'partial': dict(name='fc_weight', shape=(0, 3), dtype='float16', lr_mult=2.0,
                        wd_mult=0.5, init=mx.init.Xavier(magnitude=2)),
        'int_mults': dict(name='b', shape=4, dtype='float64', lr_mult=2, wd_mult=0),
        'string_init': dict(name='x', init='zeros', dtype='int32'),
        'msra': dict(name='k', shape=(8, 3, 3, 3), init=mx.init.MSRAPrelu('in', 0.1)),
        'constant_init': dict(name='c', shape=(3,),
                              init=mx.init.Constant(np.array([0.0, 1.0, 2.0]))),
        'uint8': dict(name='u', shape=(1,), dtype='uint8', grad_req='null', init=mx.init.One()),
    }
    info = {}
    for key, kwargs in cases.items():
        var = json.loads(mx.gluon.Parameter(**kwargs).var().tojson())
        if isinstance(kwargs.get('init'), mx.init.Initializer):
            # (MXNet's Constant.dumps() works once only)
            kwargs['init'] = {'dumps': var['nodes'][0]['attrs']['__init__']}
        info[key] = {'kwargs': kwargs, 'var': var}
    expected = {'vars': info,
                'values': [[name, value.dtype.name, value.tolist()]      # in the files' order
                           for name, value in values.items()]}
    with open(path('parameters-expected.json'), 'w') as f:
        json.dump(expected, f, indent=1, sort_keys=True)


def gluon_block_files():
    """Files of a small Gluon model written by MXNet, for tests/test_block.py and tests/nn:

    - gluon_net.params: save_parameters (structural names; block 5 is block 4 registered
      twice, so its parameters are saved under both names);
    - gluon_net-dedup.params: save_parameters(deduplicate=True) (one name per parameter);
    - gluon_net-legacy.params: the deprecated save_params (full names less the prefix);
    - gluon_net-symbol.json, gluon_net-0000.params: export;
    - gluon_net-io.npz: input, outputs in predict and training mode, the gradients of
      sum(out * head) for the input and the parameters, and the running statistics after the
      training step (MXNet updates them in the backward pass);
    - gluon_net-summary.txt: what summary() prints for net[:6] (the shared block once; MXNet
      prints a block registered twice twice per call, hybridlib once per call).
    """
    import contextlib
    import io
    nn = mx.gluon.nn
    net = nn.HybridSequential(prefix='model_')
    with net.name_scope():
        shared = nn.Dense(3, in_units=3)
        net.add(nn.Conv2D(2, 3, padding=1, in_channels=1), nn.BatchNorm(in_channels=2),
                nn.MaxPool2D(), nn.Flatten(), nn.Dense(3, in_units=8, activation='tanh'))
        net.add(shared, shared)
    net.initialize()
    for i, param in enumerate(net.collect_params().values()):
        size = int(np.prod(param.shape))
        values = np.sin(np.arange(size, dtype=np.float64) + i).reshape(param.shape) / 2
        if param.name.endswith('running_var'):
            values = values + 1
        param.set_data(mx.nd.array(values))
    net.save_parameters(path('gluon_net.params'))
    net.save_parameters(path('gluon_net-dedup.params'), deduplicate=True)
    net.save_params(path('gluon_net-legacy.params'))
    x = mx.nd.array(np.cos(np.arange(32)).reshape(2, 1, 4, 4))
    head = mx.nd.array(np.sin(np.arange(6) * 3).reshape(2, 3))
    out = {'x': x.asnumpy(), 'head': head.asnumpy(), 'y_predict': net(x).asnumpy()}
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward(head)
    out['y_train'] = y.asnumpy()
    out['grad:x'] = x.grad.asnumpy()
    for name, param in net.collect_params().items():
        if param.grad_req != 'null':
            out['grad:' + name] = param.grad().asnumpy()
        else:
            out['after:' + name] = param.data().asnumpy()
    np.savez(path('gluon_net-io.npz'), **out)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        net[:6].summary(x)
    with open(path('gluon_net-summary.txt'), 'w') as f:
        f.write(text.getvalue())
    net.hybridize()
    net(x)
    net.export(path('gluon_net'))


if __name__ == '__main__':
    main()
    parameter_files()
    gluon_block_files()
