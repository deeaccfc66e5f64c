"""Run a model exported by MXNet (PREFIX-symbol.json + PREFIX-0000.params) with hybridlib.

    python examples/run_export.py tests/data/reference/lenet

The inputs come from PREFIX-io.npz when it exists (``input0``, ``input1``, ... as MXNet's
reference exports store them, compared with MXNet's ``out0``, ...), else random ones of the
shapes given with --shape NAME=D1,D2,...
"""
import argparse
import os

import numpy as np

import hybridlib as mx


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('prefix', help='path prefix of PREFIX-symbol.json / PREFIX-0000.params')
    parser.add_argument('--epoch', type=int, default=0)
    parser.add_argument('--shape', action='append', default=[],
                        help='input shape when there is no -io.npz, e.g. data=1,3,224,224')
    args = parser.parse_args()

    graph = mx.sym.load(f'{args.prefix}-symbol.json')
    params = mx.nd.load(f'{args.prefix}-{args.epoch:04d}.params')
    weights = {k.split(':', 1)[1]: v for k, v in params.items()}
    inputs = [name for name in graph.list_inputs() if name not in weights]
    io_path = f'{args.prefix}-io.npz'
    io = dict(np.load(io_path)) if os.path.exists(io_path) else {}
    if io:
        values = {name: mx.nd.array(io[f'input{i}']) for i, name in enumerate(inputs)}
    else:
        shapes = dict(s.split('=') for s in args.shape)
        values = {name: mx.nd.random.uniform(shape=tuple(int(d) for d in shapes[name].split(',')))
                  for name in inputs}
    print(f'{os.path.basename(args.prefix)}: {len(graph.list_arguments())} arguments, '
          f'{len(graph.list_auxiliary_states())} auxiliary states, inputs {inputs}')
    arg_shapes, out_shapes, _ = graph.infer_shape(**{k: v.shape for k, v in values.items()})
    print(f'output shapes: {out_shapes}')
    outputs = graph.eval(**values, **weights)
    for i, out in enumerate(outputs):
        line = f'output {i} ({graph.list_outputs()[i]}): shape {out.shape}'
        if f'out{i}' in io:
            diff = np.abs(out.asnumpy() - io[f'out{i}']).max()
            line += f', max |hybridlib - MXNet| = {diff:.3g}'
        print(line)


if __name__ == '__main__':
    main()
