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


if __name__ == '__main__':
    main()
