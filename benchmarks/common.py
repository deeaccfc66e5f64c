"""What the benchmark workers share: the workload table, the timing loop, the result lines.

Standard library only: the workers import it from other interpreters (MXNet's venv with
numpy<1.24, PyTorch's venv) as well as from the one running hybridlib.

A worker is a script that knows how to build a workload for one library (``make_step``) and
calls :func:`worker_main`. It prints one result line per (workload, mode), prefixed with
:data:`RESULT_PREFIX` and holding JSON, which ``run.py`` reads back.
"""
import argparse
import json
import platform
import statistics
import time
import traceback
import tracemalloc
from dataclasses import dataclass
from typing import Optional, Tuple

RESULT_PREFIX = '@@bench '


def cpu_model():
    """The processor's name (from /proc/cpuinfo where there is one): which CPU a figure holds
    for."""
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or 'unknown CPU'


@dataclass(frozen=True)
class Workload:
    """One benchmark workload, as ``../shared/bench/gluon_bench.py`` defines it.

    model: 'mlp' (784-256-256-10, ReLU), 'deep20' (20 Dense(32) + Dense(10)), 'lenet' (the
    LeNet of Gluon's hybridize tutorial) or 'resnet18' (model_zoo resnet18_v1).
    shape: the input batch; calls: calls per timed sample; train: forward, loss, backward and an
    SGD step per call rather than a forward; classes: the network's outputs; quick_shape: the
    input shape under ``--quick``.
    """
    name: str
    model: str
    shape: Tuple[int, ...]
    calls: int
    train: bool = False
    classes: int = 10
    quick_shape: Optional[Tuple[int, ...]] = None

    def input_shape(self, quick=False):
        return self.quick_shape if quick and self.quick_shape else self.shape


WORKLOADS = {w.name: w for w in [
    Workload('mlp_b1_infer', 'mlp', (1, 784), 300),
    Workload('mlp_b256_infer', 'mlp', (256, 784), 50),
    Workload('mlp_b64_train', 'mlp', (64, 784), 50, train=True),
    Workload('deep20_b1_infer', 'deep20', (1, 32), 200),
    Workload('lenet_b16_infer', 'lenet', (16, 1, 28, 28), 30),
    Workload('lenet_b64_train', 'lenet', (64, 1, 28, 28), 10, train=True),
    Workload('resnet18_b1_infer', 'resnet18', (1, 3, 224, 224), 3, classes=1000,
             quick_shape=(1, 3, 32, 32)),
    Workload('resnet18_b8_train', 'resnet18', (8, 3, 64, 64), 2, train=True,
             quick_shape=(2, 3, 32, 32)),
]}

# Labels of the training workloads: sample i has class i % LABEL_CLASSES.
LABEL_CLASSES = 10
LEARNING_RATE = 0.01


def select(only):
    """The workloads named by ``--only``: comma-separated names or parts of names."""
    if not only:
        return list(WORKLOADS.values())
    parts = [p.strip() for p in only.split(',') if p.strip()]
    chosen = [w for w in WORKLOADS.values() if any(p in w.name for p in parts)]
    if not chosen:
        raise SystemExit(f"--only {only!r} matches no workload; the workloads are: "
                         f"{', '.join(WORKLOADS)}")
    return chosen


def time_calls(step, calls, repeat, warmup=2, sync=None):
    """Milliseconds per call of ``step``: one sample per repeat, each the mean of ``calls``.

    ``sync`` (MXNet's ``nd.waitall``) runs at the end of each sample, inside the timing, so
    work an asynchronous engine still has queued is counted.
    """
    for _ in range(warmup):
        step()
    if sync:
        sync()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            step()
        if sync:
            sync()
        samples.append((time.perf_counter() - start) / calls * 1e3)
    return samples


def peak_memory_mb(build, calls, warmup=2):
    """Peak traced memory (MB) while ``calls`` calls run after warm-up.

    Tracing starts before ``build()``, so what the workload keeps between calls (parameters,
    gradients, optimizer state, static buffers) counts; the peak is reset after warm-up, so
    the one-off cost of the first calls (deferred initialisation, tracing, compiling) does not.
    numpy reports its array allocations to tracemalloc; MXNet's and PyTorch's allocators
    do not, which is why only hybridlib and numpy are measured this way.
    """
    tracemalloc.start()
    try:
        step, sync = build()
        for _ in range(warmup):
            step()
        tracemalloc.reset_peak()
        for _ in range(calls):
            step()
        if sync:
            sync()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def emit(**result):
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def parse_worker_args(description, modes, lib_choices=None):
    parser = argparse.ArgumentParser(description=description)
    if lib_choices:
        parser.add_argument('--lib', choices=lib_choices, required=True)
    parser.add_argument('--only', help='comma-separated workload names or parts of names')
    parser.add_argument('--modes', default=','.join(modes),
                        help=f'comma-separated, among {", ".join(modes)} (default: all)')
    parser.add_argument('--repeat', type=int, default=7, help='timed samples (default 7)')
    parser.add_argument('--quick', action='store_true',
                        help='one call per sample, one warm-up call, smaller resnet inputs')
    parser.add_argument('--memory', action='store_true',
                        help='report peak traced memory instead of time')
    args = parser.parse_args()
    args.modes = [m for m in args.modes.split(',') if m]
    unknown = set(args.modes) - set(modes)
    if unknown:
        parser.error(f"unknown mode(s) {', '.join(sorted(unknown))}; known: {', '.join(modes)}")
    return args


def worker_main(args, lib, version, make_step, supports=lambda workload: True):
    """Run the selected workloads in every mode and print one result line for each.

    make_step(workload, mode, quick) -> (step, sync): builds the network, its inputs and its
    trainer, and returns the function one timed call runs (and a sync function or None).
    A failure is a result too: the line carries the error and the next workload runs.
    """
    warmup = 1 if args.quick else 2
    for workload in select(args.only):
        if not supports(workload):
            continue
        calls = 1 if args.quick else workload.calls
        for mode in args.modes:
            head = dict(lib=lib, version=version, workload=workload.name, mode=mode)
            build = lambda: make_step(workload, mode, args.quick)
            try:
                if args.memory:
                    emit(**head, peak_mb=peak_memory_mb(build, min(calls, 2), warmup))
                else:
                    step, sync = build()
                    samples = time_calls(step, calls, args.repeat, warmup, sync)
                    emit(**head, ms=statistics.median(samples), samples=samples)
            except Exception as exc:  # a missing feature is a result too
                traceback.print_exc()
                emit(**head, error=f'{type(exc).__name__}: {str(exc)[:200]}')
