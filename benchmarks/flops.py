"""The arithmetic floor of each workload: its multiply-adds (FLOPs) divided by the machine's
float32 matrix-product rate, what no implementation on this CPU's BLAS can beat.

usage: python benchmarks/flops.py [--only NAMES] [--quick]   (prints JSON)

FLOPs are counted on hybridlib's traced graph of the workload's network: 2 * M * N * K for each
FullyConnected, Convolution, Deconvolution, dot and batch_dot; a training step counts three
times its forward (the data and the weight gradients are two more products of each size).
The rate is the best of numpy's 1024 x 1024 float32 matmul.
"""
import argparse
import json
import math
import time

import numpy as np

import common
import gluon_workloads
import hybridlib as mx


def forward_flops(net, shape):
    """Multiply-adds (x2) of one forward of ``net`` on a batch of ``shape``."""
    graph = net(mx.sym.var('data'))
    internals = graph.get_internals()
    _, out_shapes, _ = internals.infer_shape(data=shape)
    shapes = dict(zip(internals.list_outputs(), out_shapes))
    args, _, _ = internals.infer_shape(data=shape)
    shapes.update(zip(internals.list_arguments(), args))
    total = 0
    nodes = json.loads(graph.tojson())['nodes']
    for node in nodes:
        op, name = node['op'], node['name']
        if op not in ('FullyConnected', 'Convolution', 'Deconvolution', 'dot', 'batch_dot'):
            continue
        out = shapes[f'{name}_output']
        if op in ('Convolution', 'Deconvolution'):
            # every element of the larger side takes one product per weight of a filter
            weight = _entry_shape(nodes, node['inputs'][1], shapes)
            side = out if op == 'Convolution' else _entry_shape(nodes, node['inputs'][0], shapes)
            total += 2 * math.prod(side) * math.prod(weight[1:])
        elif op == 'FullyConnected':
            total += 2 * math.prod(out) * _entry_shape(nodes, node['inputs'][1], shapes)[1]
        else:
            a = _entry_shape(nodes, node['inputs'][0], shapes)
            inner = a[-2] if node.get('attrs', {}).get('transpose_a') == 'True' else a[-1]
            total += 2 * math.prod(out) * inner
    return total


def _entry_shape(nodes, entry, shapes):
    """The shape of a node entry [node id, output index, ...] of the graph's JSON."""
    source = nodes[entry[0]]
    if source['op'] == 'null':
        return shapes[source['name']]
    name = source['name']
    return shapes.get(f'{name}_output') or shapes[f'{name}_output{entry[1]}']


def sgemm_gflops(n=1024, tries=5):
    a, b = np.random.rand(n, n).astype(np.float32), np.random.rand(n, n).astype(np.float32)
    a @ b
    best = min(_timed(lambda: a @ b) for _ in range(tries))
    return 2 * n ** 3 / best / 1e9


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--only')
    parser.add_argument('--quick', action='store_true')
    args = parser.parse_args()
    flops = {}
    for workload in common.select(args.only):
        net = gluon_workloads.MODELS[workload.model](mx, classes=workload.classes)
        forward = forward_flops(net, workload.input_shape(args.quick))
        flops[workload.name] = forward * (3 if workload.train else 1)
    print(json.dumps({'gflops': sgemm_gflops(), 'flops': flops}))


if __name__ == '__main__':
    main()
