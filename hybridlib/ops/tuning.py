"""Engine paths chosen by timing them on this machine: MXNet's cuDNN autotuning, for the CPU.

When several paths compute one operator for one set of shapes and no rule says which is faster
on every CPU (it depends on the cache sizes, the BLAS and the vector width), ``Tuned`` runs each
on the first call's own inputs and keeps the fastest for the rest of the process. The choice
is remembered by the key of the shapes, apart from the engine caches, so that every later call
with those shapes (imperative or compiled, from any thread) takes the same path and gives the
same bits.

``HYBRIDLIB_TUNE=0`` turns the timing off: the first path (the rule-based one) is taken.
"""
import os
import threading
import time

__all__ = []

_RUNS = 2   # timed runs of each path; the fastest counts
_chosen = {}
_lock = threading.Lock()


def enabled():
    return os.environ.get('HYBRIDLIB_TUNE', '1') != '0'


class Tuned:
    """``run(a, b, out)`` by the fastest of ``paths`` (each ``path(a, b, out)``, all writing
    the same result into out), timed on the first call. ``key`` names the operator and shapes;
    ``force`` (an index) skips the timing, for tests."""

    force = None

    def __init__(self, key, paths):
        self.key, self.paths = key, tuple(paths)
        index = _chosen.get(key)
        self.run = None if index is None else self.paths[index]

    def __call__(self, a, b, out):
        run = self.run
        if run is None:
            run = self._choose(a, b, out)
        return run(a, b, out)

    def _choose(self, a, b, out):
        with _lock:
            index = _chosen.get(self.key)
            if index is None:
                index = self._time(a, b, out)
                _chosen[self.key] = index
            self.run = self.paths[index]
        return self.run

    def _time(self, a, b, out):
        if self.force is not None:
            return self.force
        if len(self.paths) == 1 or not enabled():
            return 0
        best = []
        for path in self.paths:
            seconds = float('inf')
            for _ in range(_RUNS):
                start = time.perf_counter()
                path(a, b, out)
                seconds = min(seconds, time.perf_counter() - start)
            best.append(seconds)
        return best.index(min(best))


def forget():
    """Forget every choice (tests that force paths)."""
    with _lock:
        _chosen.clear()
