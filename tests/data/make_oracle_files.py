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
    """The values of the parameters in the parameter files (the tests rebuild them)."""
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
    - parameter-vars-expected.json: json.loads(param.var().tojson()) for several parameters.
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
    export = {('aux:' if name == 'steps' else 'arg:') + 'net_' + name: mx.nd.array(value, dtype=value.dtype)
              for name, value in values.items()}
    mx.nd.save(path('parameterdict-export-mxnet.params'), export)

    P = mx.gluon.Parameter
    cases = {
        'default': P('w', shape=(2, 3)),
        'no_shape': P('w'),
        'partial': P('fc_weight', shape=(0, 3), dtype='float16', lr_mult=2.0, wd_mult=0.5,
                     init=mx.init.Xavier(magnitude=2)),
        'int_mults': P('b', shape=4, dtype=np.float64, lr_mult=2, wd_mult=0),
        'string_init': P('x', init='zeros', dtype='int32'),
        'msra': P('k', shape=(8, 3, 3, 3), init=mx.init.MSRAPrelu('in', 0.1)),
        'constant_init': P('c', shape=(3,), init=mx.init.Constant(np.array([0.0, 1.0, 2.0]))),
        'uint8': P('u', shape=(1,), dtype='uint8', grad_req='null', init=mx.init.One()),
    }
    info = {key: json.loads(param.var().tojson()) for key, param in cases.items()}
    with open(path('parameter-vars-expected.json'), 'w') as f:
        json.dump(info, f, indent=1, sort_keys=True)


if __name__ == '__main__':
    main()
    parameter_files()
