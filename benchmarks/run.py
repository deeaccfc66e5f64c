"""Run the benchmark suite: hybridlib against MXNet 1.9.1, PyTorch and straight-line numpy.

usage: python benchmarks/run.py [--mxnet PYTHON] [--torch PYTHON] [--only NAMES] [--repeat N]
           [--rounds R] [--quick] [--no-memory] [--threads N] [--json PATH]

Every library runs in its own subprocess: hybridlib (this checkout) and the numpy floor under
the current interpreter, MXNet under ``--mxnet``, PyTorch under ``--torch``; a peer without an
interpreter is left out and its columns show '-'. The libraries take turns workload by workload
(and round by round with ``--rounds``), so a noisy spell on a shared machine falls on all of
them alike. Times are medians of ms per call over the samples. Peak memory of hybridlib
(imperative vs hybridized with static_alloc) is measured with tracemalloc, in a fresh
subprocess per workload and mode.

Prints three markdown tables: times and ratios, peak memory, and the speed targets.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import common

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# Result keys are (lib, mode), as the workers report them.
HL_IMP = ('hybridlib', 'imperative')
HL_HYB = ('hybridlib', 'hybridized')
MX_IMP = ('mxnet', 'imperative')
MX_HYB = ('mxnet', 'hybridized')
TORCH_EAGER = ('torch', 'eager')
TORCH_JIT = ('torch', 'jit')
NUMPY = ('numpy', 'floor')
FLOOR = ('arithmetic', 'floor')  # FLOPs / the machine's sgemm rate (flops.py)
MEMORY = 'memory'  # a target on peak memory rather than on time

TITLES = {HL_IMP: 'hybridlib imperative', HL_HYB: 'hybridlib hybridized',
          MX_IMP: 'MXNet imperative', MX_HYB: 'MXNet hybridized',
          TORCH_EAGER: 'torch eager', TORCH_JIT: 'torch jit', NUMPY: 'numpy floor',
          FLOOR: 'arithmetic floor'}
SHORT = {HL_IMP: 'hl imp', HL_HYB: 'hl hyb', MX_IMP: 'mx imp', MX_HYB: 'mx hyb',
         TORCH_EAGER: 'torch eager', TORCH_JIT: 'torch jit', NUMPY: 'numpy', FLOOR: 'floor'}
RATIO_SHORT = {HL_IMP: 'imp', TORCH_EAGER: 'eager', TORCH_JIT: 'jit'}
PEERS = (HL_IMP, MX_IMP, MX_HYB, TORCH_EAGER, TORCH_JIT, NUMPY, FLOOR)  # what hl hyb is divided by


@dataclass(frozen=True)
class Target:
    """hybridlib hybridized / ``peer`` on ``workload`` must be <= ``limit``."""
    workload: str
    peer: object
    limit: float

    def describe(self):
        if self.peer == MEMORY:
            return f'{self.workload}: peak memory, static_alloc / imperative'
        return f'{self.workload}: hybridized / {TITLES[self.peer]}'


TARGETS = (
    Target('mlp_b1_infer', MX_HYB, 0.5), Target('mlp_b1_infer', TORCH_JIT, 1.0),
    Target('deep20_b1_infer', MX_HYB, 0.5), Target('deep20_b1_infer', TORCH_JIT, 1.0),
    Target('mlp_b256_infer', NUMPY, 1.05),
    Target('mlp_b64_train', TORCH_JIT, 1.0),
    Target('lenet_b16_infer', MX_HYB, 1.0), Target('lenet_b64_train', MX_HYB, 1.0),
    Target('resnet18_b1_infer', MX_HYB, 1.3), Target('resnet18_b8_train', MX_HYB, 1.3),
    Target('deep20_b1_infer', HL_IMP, 0.6),
    Target('resnet18_b8_train', MEMORY, 1.0),
)


@dataclass(frozen=True)
class Worker:
    """One library's worker script and the interpreter that runs it."""
    lib: str
    python: str
    script: str
    modes: tuple
    args: tuple = ()

    def command(self, *args):
        return [self.python, str(HERE / self.script), *self.args, *args]


class Results:
    """Samples, errors and peak memory gathered from the workers, keyed by workload."""

    def __init__(self):
        self.samples = {}   # (workload, lib, mode) -> [ms, ...]
        self.memory = {}    # (workload, mode) -> MB
        self.errors = {}    # (workload, lib, mode) -> message
        self.versions = {}  # lib -> version line

    def add(self, result):
        key = (result['workload'], result['lib'], result['mode'])
        self.versions[result['lib']] = result['version']
        if 'error' in result:
            self.errors[key] = result['error']
        elif 'peak_mb' in result:
            self.memory[key[0], key[2]] = result['peak_mb']
        else:
            self.samples.setdefault(key, []).extend(result['samples'])

    def ms(self, workload, column):
        samples = self.samples.get((workload, *column))
        return statistics.median(samples) if samples else None

    def ratio(self, workload, peer):
        if peer == MEMORY:
            num, den = (self.memory.get((workload, mode)) for mode in ('hybridized', 'imperative'))
        else:
            num, den = self.ms(workload, HL_HYB), self.ms(workload, peer)
        return num / den if num is not None and den else None


def worker_env(threads):
    """The environment of every worker: this checkout importable first, thread counts set."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(ROOT), env.get('PYTHONPATH')]))
    if threads:
        for name in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
            env[name] = str(threads)
    return env


def run_worker(worker, workload, args, env, modes=None, memory=False):
    """Run one worker on one workload; its results, or an error per mode if it crashed."""
    modes = modes or worker.modes
    options = ['--only', workload.name, '--repeat', str(args.repeat), '--modes', ','.join(modes)]
    options += ['--quick'] * args.quick + ['--memory'] * memory
    proc = subprocess.run(worker.command(*options), cwd=ROOT, env=env,
                          capture_output=True, text=True)
    results = [json.loads(line[len(common.RESULT_PREFIX):]) for line in proc.stdout.splitlines()
               if line.startswith(common.RESULT_PREFIX)]
    if any('error' in r for r in results) or (proc.returncode and not results):
        print(proc.stderr.rstrip(), file=sys.stderr)
    if proc.returncode and not results:
        last = (proc.stderr.strip().splitlines() or [f'exit status {proc.returncode}'])[-1]
        results = [dict(lib=worker.lib, version=f'{worker.lib} (failed)',
                        workload=workload.name, mode=mode, error=last[:200]) for mode in modes]
    return results


def interpreter(path, option):
    """An interpreter given on the command line, as an absolute path (workers run in ROOT)."""
    found = shutil.which(path)
    if not found:
        raise SystemExit(f'{option} {path}: no such interpreter')
    return os.path.abspath(found)


def make_workers(args):
    gluon_modes = ('imperative', 'hybridized')
    workers = [Worker('hybridlib', sys.executable, 'gluon_workloads.py', gluon_modes,
                      ('--lib', 'hybridlib'))]
    if args.mxnet:
        workers.append(Worker('mxnet', interpreter(args.mxnet, '--mxnet'), 'gluon_workloads.py',
                              gluon_modes, ('--lib', 'mxnet')))
    if args.torch:
        workers.append(Worker('torch', interpreter(args.torch, '--torch'), 'torch_workloads.py',
                              ('eager', 'jit')))
    workers.append(Worker('numpy', sys.executable, 'numpy_floor.py', ('floor',)))
    return workers


def run_suite(args):
    workloads = common.select(args.only)
    workers = make_workers(args)
    env = worker_env(args.threads)
    results = Results()
    for workload in workloads:
        for round_ in range(args.rounds):
            # Alternate the order, so no library always runs right after the same one.
            for worker in (workers if round_ % 2 == 0 else workers[::-1]):
                start = time.perf_counter()
                got = run_worker(worker, workload, args, env)
                for result in got:
                    results.add(result)
                report = ', '.join(f"{r['mode']} " + (f"{r['ms']:.3f} ms" if 'ms' in r else 'error')
                                   for r in got) or 'not defined'
                print(f'[{workload.name}] {worker.lib}: {report} '
                      f'({time.perf_counter() - start:.1f} s)', file=sys.stderr, flush=True)
        if args.memory:
            for mode in ('imperative', 'hybridized'):
                for result in run_worker(workers[0], workload, args, env, (mode,), memory=True):
                    results.add(result)
                megabytes = results.memory.get((workload.name, mode))
                print(f'[{workload.name}] hybridlib {mode} peak memory: '
                      + (f'{megabytes:.1f} MB' if megabytes is not None else 'error'),
                      file=sys.stderr, flush=True)
    for result in arithmetic_floor(args, env):
        results.add(result)
    return workloads, results


def arithmetic_floor(args, env):
    """Result lines of the 'floor' column: each workload's FLOPs at the machine's sgemm rate
    (flops.py, under this interpreter, which runs hybridlib)."""
    command = [sys.executable, str(HERE / 'flops.py')] + (['--only', args.only] if args.only
                                                          else []) + (['--quick'] if args.quick
                                                                      else [])
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=HERE)
    if done.returncode:
        print(f'flops.py failed: {done.stderr[-500:]}', file=sys.stderr)
        return []
    counted = json.loads(done.stdout)
    version = f"arithmetic floor: FLOPs / {counted['gflops']:.0f} GFLOP/s (numpy float32 sgemm)"
    return [dict(workload=name, lib=FLOOR[0], mode=FLOOR[1], version=version,
                 samples=[flops / (counted['gflops'] * 1e6)])
            for name, flops in counted['flops'].items()]


def format_ms(value):
    if value is None:
        return '-'
    digits = 0 if value >= 100 else 1 if value >= 10 else 2 if value >= 1 else 3
    return f'{value:.{digits}f}'


def format_mb(value):
    return '-' if value is None else f'{value:.1f}'


def format_ratio(value):
    return '-' if value is None else f'{value:.2f}' if value < 10 else f'{value:.1f}'


def markdown(headers, rows):
    """A markdown table with padded columns, readable as plain text too."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]

    def line(cells):
        return '| ' + ' | '.join(str(c).ljust(w) for c, w in zip(cells, widths)) + ' |'
    return '\n'.join([line(headers), '|' + '|'.join('-' * (w + 2) for w in widths) + '|']
                     + [line(row) for row in rows])


def cell(results, workload, column):
    if (workload, *column) in results.errors:
        return 'error'
    return format_ms(results.ms(workload, column))


def time_table(workloads, results):
    columns = [HL_IMP, HL_HYB, MX_IMP, MX_HYB, TORCH_EAGER, TORCH_JIT, NUMPY, FLOOR]
    headers = (['workload'] + [SHORT[c] for c in columns]
               + ['hyb/' + RATIO_SHORT.get(p, SHORT[p]) for p in PEERS])
    rows = [[w.name] + [cell(results, w.name, c) for c in columns]
            + [format_ratio(results.ratio(w.name, p)) for p in PEERS] for w in workloads]
    return markdown(headers, rows)


def memory_table(workloads, results):
    rows = []
    for w in workloads:
        imperative, hybridized = (results.memory.get((w.name, m))
                                  for m in ('imperative', 'hybridized'))
        rows.append([w.name, format_mb(imperative), format_mb(hybridized),
                     format_ratio(results.ratio(w.name, MEMORY))])
    return markdown(['workload', 'imperative MB', 'static_alloc MB', 'static_alloc / imperative'],
                    rows)


def target_rows(workloads, results):
    names = {w.name for w in workloads}
    rows = []
    for target in TARGETS:
        if target.workload not in names:
            continue
        ratio = results.ratio(target.workload, target.peer)
        verdict = '-' if ratio is None else 'pass' if ratio <= target.limit else 'FAIL'
        rows.append(dict(target=target.describe(), ratio=ratio, limit=target.limit,
                         result=verdict))
    return rows


def header(args, results, started):
    load = ' / '.join(f'{x:.1f}' for x in os.getloadavg()) if hasattr(os, 'getloadavg') else '?'
    lines = [f'command: python benchmarks/run.py {" ".join(sys.argv[1:])}',
             f'started {started:%Y-%m-%d %H:%M} on {common.cpu_model()} ({platform.machine()}), '
             f'{os.cpu_count()} CPUs,'
             f' load average {load} (1/5/15 min, at the end); threads: '
             + (str(args.threads) if args.threads else 'library defaults'),
             'libraries: ' + '; '.join(results.versions[lib] for lib in
                                       ('hybridlib', 'mxnet', 'torch', 'numpy', 'arithmetic')
                                       if lib in results.versions),
             f'median ms per call over {args.repeat * args.rounds} samples'
             + (' (--quick: one call per sample, smaller resnet inputs)' if args.quick else '')
             + "; hyb/X = hybridlib hybridized / X; '-' = not run. Compare ratios within one"
             ' run only: these machines are shared and noisy.']
    return '\n'.join(['## hybridlib benchmarks', ''] + ['- ' + line for line in lines])


def report(args, workloads, results, started):
    parts = [header(args, results, started), '', '### Times (ms) and ratios', '',
             time_table(workloads, results)]
    if args.memory:
        parts += ['', '### Peak memory of hybridlib (tracemalloc, MB)', '',
                  'Peak over the timed calls, counting what the first calls left allocated '
                  '(parameters, gradients, static buffers).', '',
                  memory_table(workloads, results)]
    targets = target_rows(workloads, results)
    if targets:
        note = ' (not meaningful with --quick)' if args.quick else ''
        parts += ['', f'### Targets{note}', '',
                  markdown(['target', 'ratio', 'limit', 'result'],
                           [[t['target'], format_ratio(t['ratio']), f"<= {t['limit']}",
                             t['result']] for t in targets])]
        met = sum(t['result'] == 'pass' for t in targets)
        measured = sum(t['result'] != '-' for t in targets)
        parts += ['', f'{met} of {measured} measured targets met ({len(targets)} in all).']
    if results.errors:
        parts += ['', '### Errors', '']
        parts += [f'- {w} {lib} {mode}: {msg}' for (w, lib, mode), msg in results.errors.items()]
    return '\n'.join(parts), targets


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--mxnet', metavar='PYTHON', help='interpreter with MXNet 1.9.1')
    parser.add_argument('--torch', metavar='PYTHON', help='interpreter with PyTorch')
    parser.add_argument('--only', metavar='NAMES',
                        help='comma-separated workload names or parts of names, e.g. mlp,lenet')
    parser.add_argument('--repeat', type=int, help='timed samples per round (default 7; 2 quick)')
    parser.add_argument('--rounds', type=int, default=1,
                        help='turns each library takes per workload, samples pooled (default 1)')
    parser.add_argument('--quick', action='store_true',
                        help='a smoke run: one call per sample, smaller resnet inputs')
    parser.add_argument('--no-memory', dest='memory', action='store_false',
                        help='skip the peak-memory measurements')
    parser.add_argument('--threads', type=int,
                        help='set OMP/OPENBLAS/MKL_NUM_THREADS for every library')
    parser.add_argument('--json', metavar='PATH', help='also write the raw results as JSON')
    args = parser.parse_args(argv)
    if args.repeat is None:
        args.repeat = 2 if args.quick else 7
    return args


def main(argv=None):
    args = parse_args(argv)
    started = datetime.datetime.now()
    workloads, results = run_suite(args)
    text, targets = report(args, workloads, results, started)
    print(text)
    if args.json:
        raw = dict(versions=results.versions, targets=targets,
                   times=[dict(workload=w, lib=lib, mode=mode, ms=statistics.median(s), samples=s)
                          for (w, lib, mode), s in results.samples.items()],
                   memory=[dict(workload=w, mode=mode, peak_mb=mb)
                           for (w, mode), mb in results.memory.items()],
                   errors=[dict(workload=w, lib=lib, mode=mode, error=msg)
                           for (w, lib, mode), msg in results.errors.items()])
        Path(args.json).write_text(json.dumps(raw, indent=1))


if __name__ == '__main__':
    main()
