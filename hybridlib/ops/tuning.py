"""Engine paths chosen by timing them on this machine: MXNet's cuDNN autotuning, for the CPU.

When several paths compute one operator for one set of shapes and no rule says which is faster
on every CPU (it depends on the cache sizes, the BLAS and the vector width), ``Tuned`` runs each
on the first call's own inputs and keeps the fastest. The choice is remembered by the key of
the shapes, apart from the engine caches, so that every later call with those shapes
(imperative or compiled, from any thread) takes the same path and gives the same bits.

The choices are also kept in a file per machine and version (``HYBRIDLIB_TUNE_FILE``, by
default ``tuning/<machine>.json`` in the data folder, ``$MXNET_HOME`` or ``~/.mxnet``), so
that later processes take the paths the first one chose: a run repeats an earlier run's
numbers to the bit, and skips the timing. ``HYBRIDLIB_TUNE_FILE=''`` keeps them in memory
only; ``HYBRIDLIB_TUNE=0`` turns the timing off (the first path, the rule-based one, is
taken).

Engines that size their work by the machine rather than choose among paths read its facts here
too (``l2_cache_bytes``: pooling's blocks of channels).
"""
import functools
import hashlib
import json
import os
import platform
import threading
import time
import warnings

import numpy as np

from .. import base
from ..serialization import atomic_write

__all__ = []

_RUNS = 3   # timed runs of each path, in turns; the fastest counts
# the paths' order: a choice is an index, so a release that changes the paths of an engine
# changes this, and the file with it (2: the paths timed in turns after a warm-up; choices
# made by the first way are timed again)
_PATHS_VERSION = 2
_lock = threading.RLock()     # re-entrant: a path timed under it may make engines too
_chosen = None      # repr(key) -> index of the path; loaded from the file on first use


def enabled():
    return os.environ.get('HYBRIDLIB_TUNE', '1') != '0'


def _machine():
    """What the choices depend on: the CPU, its count, numpy's version and the paths'."""
    model = platform.processor()
    try:
        with open('/proc/cpuinfo') as f:
            model = next((line.split(':', 1)[1].strip() for line in f
                          if line.startswith('model name')), model)
    except OSError:
        pass
    text = f'{model}|{os.cpu_count()}|{platform.machine()}|{np.__version__}|{_PATHS_VERSION}'
    return hashlib.sha1(text.encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def l2_cache_bytes():
    """The size of a core's level-2 cache, which engines that work through large arrays in
    blocks size their blocks by (Linux reports it; 1 MiB elsewhere)."""
    path = '/sys/devices/system/cpu/cpu0/cache'
    try:
        for entry in sorted(os.listdir(path)):
            with open(os.path.join(path, entry, 'level')) as f:
                if f.read().strip() != '2':
                    continue
            with open(os.path.join(path, entry, 'size')) as f:
                size = f.read().strip().upper()
            scale = {'K': 1 << 10, 'M': 1 << 20}.get(size[-1:], 1)
            return int(size.rstrip('KM')) * scale
    except (OSError, ValueError):
        pass
    return 1 << 20


def _file():
    path = os.environ.get('HYBRIDLIB_TUNE_FILE')
    if path is None:
        path = os.path.join(base.data_dir(), 'tuning', f'{_machine()}.json')
    return path or None


def _read(path):
    try:
        with open(path) as f:
            table = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and type(v) is int}


def _choices():
    global _chosen
    if _chosen is None:
        path = _file()
        _chosen = _read(path) if path else {}
    return _chosen


def _save(key, index):
    """Add a choice to the file (merged with what other processes wrote meanwhile); a file
    that cannot be written only costs the timing again in the next process."""
    path = _file()
    if not path:
        return
    try:
        table = _read(path)
        table[key] = index
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, json.dumps(table, sort_keys=True, indent=0).encode())
    except OSError as err:
        warnings.warn(f'hybridlib could not keep its choice of engine paths in {path}: {err}',
                      stacklevel=4)


class Tuned:
    """``run(a, b, out)`` by the fastest of ``paths`` (each ``path(a, b, out)``, all writing
    the same result into out), timed on the first call. ``key`` names the operator and shapes;
    ``force`` (an index) skips the timing, for tests."""

    force = None

    def __init__(self, key, paths):
        self.key, self.paths = repr(key), tuple(paths)
        with _lock:
            self.run = self._path(_choices().get(self.key))

    def _path(self, index):
        """The path of a kept choice; None for none, or for one that names no path here."""
        return self.paths[index] if index is not None and index < len(self.paths) else None

    def __call__(self, a, b, out):
        run = self.run
        if run is None:
            run = self._choose(a, b, out)
        return run(a, b, out)

    def _choose(self, a, b, out):
        with _lock:
            chosen = _choices()
            index = chosen.get(self.key)
            if self._path(index) is None:
                if self.force is not None:
                    index = self.force
                elif len(self.paths) == 1 or not enabled():
                    index = 0
                else:
                    index = self._time(a, b, out)
                    _save(self.key, index)
                chosen[self.key] = index
            self.run = self.paths[index]
        return self.run

    def _time(self, a, b, out):
        # each path once untimed (its workspace and caches warm), then the paths in turns, so
        # that neither the first run's page faults nor a noisy spell fall on one path alone
        for path in self.paths:
            path(a, b, out)
        best = [float('inf')] * len(self.paths)
        for _ in range(_RUNS):
            for i, path in enumerate(self.paths):
                start = time.perf_counter()
                path(a, b, out)
                best[i] = min(best[i], time.perf_counter() - start)
        return best.index(min(best))


def forget():
    """Forget every choice made in this process (tests that force paths); the file stays."""
    global _chosen
    with _lock:
        _chosen = {}
