"""ROIAlign forward and backward on detection-sized inputs: hybridlib against MXNet 1.9.1.

usage: python benchmarks/roi_align.py [--mxnet PYTHON] [--baseline DIR] [--only NAMES]
           [--repeat N] [--threads N] [--save DIR]

Each library runs in a worker, this file with ``--lib``: hybridlib (this checkout) under
this interpreter, MXNet under ``--mxnet`` (default ``.oracle/bin/python``; '' leaves it
out) and, with ``--baseline DIR``, the hybridlib package found in DIR (another version of
it) under this interpreter; they take turns workload by workload. All build the same inputs
from the same seed. 'forward' times ``nd.contrib.ROIAlign``; 'backward' times
``out.backward(cot)`` of a forward recorded before the clock starts. Times are medians of
seconds per call; each call waits for its result. ``--threads N`` sets the thread counts of
every worker (BLAS's and OpenMP's). ``--save DIR`` writes each worker's output and data
gradient per workload (DIR/<worker>-<workload>.npz) for comparing numbers.
"""
import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULT_PREFIX = '@@roi '

# data shape, image size (height, width), roi count, roi sides in image pixels, attributes
WORKLOADS = {
    'frcnn_c4_8x8': ((1, 1024, 8, 8), (128, 128), 300, (16, 128),
                     dict(pooled_size=(14, 14), spatial_scale=1 / 16, sample_ratio=2)),
    'frcnn_c4_38x50': ((1, 1024, 38, 50), (600, 800), 300, (32, 512),
                       dict(pooled_size=(14, 14), spatial_scale=1 / 16, sample_ratio=2)),
    'fpn_p2_200x200': ((1, 256, 200, 200), (800, 800), 1000, (8, 64),
                       dict(pooled_size=(7, 7), spatial_scale=0.25, sample_ratio=2)),
    'fpn_p2_adaptive_aligned': ((1, 256, 200, 200), (800, 800), 1000, (8, 64),
                                dict(pooled_size=(7, 7), spatial_scale=0.25, sample_ratio=0,
                                     aligned=True)),
}


def inputs(name):
    """data, rois and the head gradient of a workload, from a fixed seed."""
    shape, (height, width), count, (small, large), attrs = WORKLOADS[name]
    rng = np.random.default_rng(7)
    data = rng.standard_normal(shape, dtype=np.float32)
    sides = np.exp(rng.uniform(np.log(small), np.log(large), (count, 2)))
    sides = np.minimum(sides, [width, height])
    corner = rng.uniform(0, 1, (count, 2)) * ([width, height] - sides)
    image = rng.integers(0, shape[0], (count, 1))
    rois = np.concatenate([image, corner, corner + sides], axis=1).astype(np.float32)
    cot = rng.standard_normal((count, shape[1]) + attrs['pooled_size'], dtype=np.float32)
    return data, rois, cot, attrs


def run(mx, names, repeat, save, lib):
    """{(workload, pass, lib): median seconds per call}."""
    nd, autograd = mx.nd, mx.autograd
    results = {}
    for name in names:
        data, rois, cot, attrs = inputs(name)
        x, boxes, head = nd.array(data), nd.array(rois), nd.array(cot)
        x.attach_grad()

        def forward():
            out = nd.contrib.ROIAlign(x, boxes, **attrs)
            out.wait_to_read()
            return out

        times = {'forward': [], 'backward': []}
        for _ in range(repeat):
            start = time.perf_counter()
            out = forward()
            times['forward'].append(time.perf_counter() - start)
        for _ in range(repeat):
            with autograd.record():
                out = nd.contrib.ROIAlign(x, boxes, **attrs)
            nd.waitall()
            start = time.perf_counter()
            out.backward(head)
            x.grad.wait_to_read()
            times['backward'].append(time.perf_counter() - start)
        if save:
            np.savez(os.path.join(save, f'{lib}-{name}.npz'), out=out.asnumpy(),
                     grad=x.grad.asnumpy())
        for mode, samples in times.items():
            results[name, mode, lib] = statistics.median(samples)
    return results


def worker(python, lib, name, args, path=ROOT, label=None):
    """Run one library on one workload in its own interpreter, importing from ``path``
    first; its results, under ``label`` (default: the library's name)."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [path, env.get('PYTHONPATH')]))
    if args.threads:
        for key in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
            env[key] = str(args.threads)
    command = [python, os.path.abspath(__file__), '--lib', lib, '--label', label or lib,
               '--only', name, '--repeat', str(args.repeat), '--save', args.save]
    lines = subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout
    for line in lines.splitlines():
        if line.startswith(RESULT_PREFIX):
            return {tuple(key): s for key, s in json.loads(line[len(RESULT_PREFIX):])}
    return {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--lib', choices=('hybridlib', 'mxnet'),
                        help='run as the worker of one library')
    parser.add_argument('--label', help="a worker's name for its results")
    parser.add_argument('--mxnet', default=os.path.join(ROOT, '.oracle', 'bin', 'python'))
    parser.add_argument('--baseline', help='a directory holding another hybridlib package')
    parser.add_argument('--only', default='', help='comma-separated parts of workload names')
    parser.add_argument('--repeat', type=int, default=5)
    parser.add_argument('--threads', type=int,
                        help='set OMP/OPENBLAS/MKL_NUM_THREADS for both libraries')
    parser.add_argument('--save', default='')
    args = parser.parse_args()
    parts = [p for p in args.only.split(',') if p]
    names = [n for n in WORKLOADS if not parts or any(p in n for p in parts)]
    if args.lib:
        results = run(importlib.import_module(args.lib), names, args.repeat, args.save,
                      args.label or args.lib)
        print(RESULT_PREFIX + json.dumps(list(results.items())))
        return
    results = {}
    for name in names:                   # the workers take turns, workload by workload
        if args.baseline:
            results.update(worker(sys.executable, 'hybridlib', name, args,
                                  os.path.abspath(args.baseline), 'baseline'))
        results.update(worker(sys.executable, 'hybridlib', name, args))
        if args.mxnet:
            results.update(worker(args.mxnet, 'mxnet', name, args))
    print('| workload | pass | baseline s | hybridlib s | MXNet 1.9.1 s |')
    print('| --- | --- | --- | --- | --- |')
    for name in names:
        for mode in ('forward', 'backward'):
            cells = [results.get((name, mode, lib)) for lib in ('baseline', 'hybridlib', 'mxnet')]
            print(f'| {name} | {mode} | ' +
                  ' | '.join('-' if c is None else f'{c:.4f}' for c in cells) + ' |')


if __name__ == '__main__':
    main()
