"""The model-zoo table: GluonCV's and GluonNLP's models, hybridized, hybridlib against MXNet 1.9.1.

usage: python benchmarks/model_zoo.py [--mxnet PYTHON] [--only NAMES] [--repeat N]
           [--threads N] [--json PATH]

The models, their inputs and parameters are those of the model-zoo tier (tests/clients/zoo.py;
it needs the "clients" extra here and GluonCV/GluonNLP in MXNet's interpreter). Each library
runs in its own long-lived worker (hybridlib through the ``mxnet`` alias); they take turns
model by model, so a noisy spell on a shared machine falls on both alike. Times are medians of
ms per hybridized forward (``static_alloc``, ``static_shape``, outputs copied to numpy). Models
MXNet records without oneDNN (3-d convolutions; see zoo.py) run in a second MXNet worker with
oneDNN off, marked in the table.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import common

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ZOO = ROOT / 'tests' / 'clients' / 'zoo.py'
FIXTURES = ROOT / 'tests' / 'clients' / 'data' / 'zoo'


class Worker:
    """``zoo.py serve`` in a subprocess: one model at a time. Between requests it is stopped
    (SIGSTOP): an idle library's threads still spin a while (oneDNN's OpenMP for 200 ms after
    each operator), which on a small machine slowed the other library tens of times."""

    def __init__(self, command, env):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=env)
        self.stopped = False

    def time(self, name, repeat):
        self._signal(signal.SIGCONT, False)
        self.proc.stdin.write(f'{name} {repeat}\n')
        self.proc.stdin.flush()
        try:
            for line in self.proc.stdout:
                if line.startswith('RESULT '):
                    return json.loads(line[len('RESULT '):])
            return {'name': name, 'error': 'the worker exited'}
        finally:
            self._signal(signal.SIGSTOP, True)

    def _signal(self, sig, stopped):
        if self.proc.poll() is None and self.stopped != stopped:
            os.kill(self.proc.pid, sig)
            self.stopped = stopped

    def close(self):
        self._signal(signal.SIGCONT, False)
        self.proc.stdin.close()
        self.proc.wait()


def onednn_off():
    """The models zoo.py runs in MXNet without oneDNN (asked of zoo.py under hybridlib)."""
    code = ('import sys; sys.path.insert(0, sys.argv[1]); import zoo; '
            'print(" ".join(n for n, c in zoo.CASES.items() if not c.onednn))')
    out = subprocess.run([sys.executable, '-m', 'hybridlib', '-c', code, str(ZOO.parent)],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--mxnet', default=str(ROOT / '.oracle' / 'bin' / 'python'),
                        help='the python of an MXNet 1.9.1 environment with the clients')
    parser.add_argument('--only', help='comma-separated parts of model names')
    parser.add_argument('--repeat', type=int, default=5, help='timed calls per model')
    parser.add_argument('--threads', type=int,
                        help='OMP/OpenBLAS/MKL threads for both (default: the libraries\')')
    parser.add_argument('--json', help='write the results here too')
    args = parser.parse_args()

    names = sorted(p.stem for p in FIXTURES.glob('*.npz'))
    if args.only:
        parts = args.only.split(',')
        names = [n for n in names if any(p in n for p in parts)]
    env = dict(os.environ, MPLBACKEND='Agg')
    if args.threads:
        for key in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
            env[key] = str(args.threads)
    plain = onednn_off()
    workers = {'hybridlib': Worker([sys.executable, '-m', 'hybridlib', str(ZOO), 'serve'], env)}
    if os.path.exists(args.mxnet):
        workers['mxnet'] = Worker([args.mxnet, str(ZOO), 'serve'], env)
        workers['mxnet_plain'] = Worker([args.mxnet, str(ZOO), 'serve'],
                                        dict(env, MXNET_MKLDNN_ENABLED='0'))
    rows = []
    for name in names:
        row = {'name': name, 'hybridlib': workers['hybridlib'].time(name, args.repeat)}
        peer = 'mxnet_plain' if name in plain else 'mxnet'
        if peer in workers:
            row['mxnet'] = workers[peer].time(name, args.repeat)
            row['mxnet_onednn'] = peer == 'mxnet'
        rows.append(row)
        print(_line(row), flush=True)
    for worker in workers.values():
        worker.close()

    print(f'\n# Model zoo, hybridized forward, batch 1 ({common.cpu_model()}, '
          f'{os.cpu_count()} cores, threads: {args.threads or "library default"})\n')
    print('| model | hybridlib ms | MXNet ms | ratio |')
    print('| --- | ---: | ---: | ---: |')
    ratios = []
    for row in rows:
        hl, mx = row['hybridlib'], row.get('mxnet', {})
        ratio = hl['ms'] / mx['ms'] if 'ms' in hl and 'ms' in mx else None
        if ratio:
            ratios.append(ratio)
        mark = '' if row.get('mxnet_onednn', True) else ' (no oneDNN)'
        print(f"| {row['name']} | {_ms(hl)} | {_ms(mx)}{mark} | "
              f"{f'{ratio:.2f}' if ratio else '-'} |")
    if ratios:
        ratios.sort()
        print(f'\nmedian ratio {ratios[len(ratios) // 2]:.2f} over {len(ratios)} models '
              f'(range {ratios[0]:.2f} to {ratios[-1]:.2f})')
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'cpu': common.cpu_model(), 'threads': args.threads, 'rows': rows}, f,
                      indent=1)


def _ms(result):
    if 'ms' in result:
        return f"{result['ms']:.2f}"
    return 'error' if result else '-'


def _line(row):
    return ' '.join(f"{k}={_ms(v)}" if isinstance(v, dict) else f'{k}={v}'
                    for k, v in row.items())


if __name__ == '__main__':
    main()
