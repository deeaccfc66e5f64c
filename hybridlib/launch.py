"""``python -m hybridlib.launch -n N [--hosts H1,H2] SCRIPT.py [ARGS]``: run a script on N
workers of one MPI job, each as ``python -m hybridlib SCRIPT.py ARGS`` runs it (``import
mxnet`` gives hybridlib).

A thin front over the MPI implementation's own launcher (``mpiexec``, from the ``dist`` extra's
MPICH wheel, or another MPI's on the PATH): it builds the command line and waits. The same job
runs without it as ``mpiexec -n N python -m hybridlib SCRIPT.py ARGS``, or with ``python
SCRIPT.py`` for scripts that ``import hybridlib``.

Each worker joins the job (``dist.world()``) before the script starts, so an exception in any
worker stops them all with its traceback, under its rank, instead of leaving the others
waiting. A worker that dies (a signal, ``os._exit``) is reported by the MPI launcher, which
stops the rest; MPICH's report names the process id, which this front turns into the worker's
rank. The workers leave the host and pid of every rank in a folder for the run, and the
exception each raised, which this front repeats in one line at the end (MPI may cut the
traceback short when it stops the job). Workers on other machines, where that folder does not
exist, leave nothing there: their tracebacks still come through MPI's output. The exit status
is the MPI launcher's: non-zero when any worker failed.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

from . import dist
from .__main__ import main as run_script

__all__ = ['mpiexec', 'command', 'main']

_WORKER = '--worker'
_RANKS = 'ranks.json'        # in the run's folder: [host, pid] of every rank
# MPICH's report of a worker that died: "=   PID 21101 RUNNING AT host" then "EXIT CODE: 9"
_DIED = re.compile(rb'PID (\d+) RUNNING AT (\S+)')
_EXIT = re.compile(rb'EXIT CODE: (\d+)')


def mpiexec():
    """The MPI launcher: the one installed beside this Python (the ``mpich`` wheel puts it in
    the environment's bin), else ``mpiexec`` or ``mpirun`` on the PATH."""
    here = os.path.dirname(sys.executable)
    for name in ('mpiexec', 'mpirun'):
        path = os.path.join(here, name)
        if os.access(path, os.X_OK):
            return path
    for name in ('mpiexec', 'mpirun'):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit(f'hybridlib.launch: no MPI launcher (mpiexec) found; {dist.DIST_EXTRA}')


def _is_open_mpi(launcher):
    try:
        version = subprocess.run([launcher, '--version'], capture_output=True, text=True,
                                 timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return 'Open MPI' in version or 'OpenRTE' in version


def command(n, argv, hosts=None, launcher=None):
    """The command line that runs ``argv`` (a script and its arguments, or ``-m MODULE ...``)
    on ``n`` workers."""
    launcher = launcher or mpiexec()
    cmd = [launcher, '-n', str(n)]
    if _is_open_mpi(launcher):
        cmd += ['--oversubscribe']                  # more workers than cores, as MPICH allows
        if hasattr(os, 'geteuid') and os.geteuid() == 0:
            cmd += ['--allow-run-as-root']
        if hosts:
            cmd += ['--host', hosts]
    elif hosts:
        cmd += ['-hosts', hosts]
    return cmd + [sys.executable, '-m', 'hybridlib.launch', _WORKER] + list(argv)


def _worker(argv):
    """One worker: join the job, then run the script as ``python -m hybridlib`` does."""
    world = dist.world()
    placement = world.allgather_object((socket.gethostname(), os.getpid()))
    folder = dist.launch_folder()
    if folder:              # on the launcher's machine: every worker there writes the same
        path = os.path.join(folder, _RANKS)
        with open(f'{path}.{world.rank}', 'w') as f:
            json.dump(placement, f)
        os.replace(f'{path}.{world.rank}', path)
    return run_script(argv)


def _run(cmd):
    """Run the MPI launcher, relaying its output; when it reports a worker that died by its
    process id, name the worker's rank. Returns the exit status."""
    with tempfile.TemporaryDirectory(prefix='hybridlib-launch-') as folder:
        env = dict(os.environ, **{dist.LAUNCH_FOLDER: folder})
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env)
        died, code = None, None
        for line in iter(proc.stdout.readline, b''):
            sys.stdout.buffer.write(line)
            sys.stdout.flush()
            found = _DIED.search(line)
            if found and died is None:
                died = (found.group(2).decode(), int(found.group(1)))
            found = _EXIT.search(line)
            if found and code is None:
                code = int(found.group(1))
        status = proc.wait()
        for rank, text in _failures(folder):
            print(f'hybridlib.launch: worker rank {rank} raised {text}; the others were '
                  'stopped', file=sys.stderr)
        if died is not None:
            rank = _rank_of(_placement(folder), *died)
            what = f'worker rank {rank}' if rank is not None else 'a worker'
            how = f'exit code {code}' if code is not None else f'status {status}'
            print(f'hybridlib.launch: {what} (pid {died[1]} on {died[0]}) died ({how}); the '
                  'others were stopped', file=sys.stderr)
        return status


def _failures(folder):
    """(rank, the exception's last line) of each worker that raised, by rank."""
    found = []
    for name in os.listdir(folder):
        if name.startswith('failed'):
            with open(os.path.join(folder, name)) as f:
                lines = f.read().strip().splitlines()
            found.append((int(name[len('failed'):]), lines[-1] if lines else 'an exception'))
    return sorted(found)


def _placement(folder):
    """[(host, pid)] of every rank, as the workers left it (empty if none could)."""
    try:
        with open(os.path.join(folder, _RANKS)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return []


def _rank_of(placement, host, pid):
    """The rank of the worker MPI reports as ``pid`` on ``host``: MPI names the host as
    ``--hosts`` gave it (an address, a long or short name), so the process id decides, and
    the host name only between equal ids on several machines."""
    ranks = [rank for rank, (_, their_pid) in enumerate(placement) if their_pid == pid]
    if len(ranks) > 1:
        ranks = [rank for rank in ranks
                 if host.split('.')[0] == placement[rank][0].split('.')[0]]
    return ranks[0] if len(ranks) == 1 else None


USAGE = """usage: python -m hybridlib.launch -n N [--hosts H1,H2,...] SCRIPT.py [ARGS...]
       python -m hybridlib.launch -n N [--hosts H1,H2,...] -m MODULE [ARGS...]

Runs a script on N workers of one MPI job (distributed training); every `import mxnet` in it
gives hybridlib."""


def _parse(argv):
    """(n, hosts, the script's argv): our options come before the script (or -m/-c)."""
    n, hosts, i = None, None, 0
    while i < len(argv) and argv[i].startswith('-') and argv[i] not in ('-m', '-c'):
        option, _, value = argv[i].partition('=')
        if option in ('-h', '--help'):
            print(USAGE)
            raise SystemExit(0)
        if option not in ('-n', '--num-workers', '--hosts'):
            raise SystemExit(f'hybridlib.launch: unknown option {option}\n\n{USAGE}')
        if not value:
            i += 1
            if i == len(argv):
                raise SystemExit(f'hybridlib.launch: {option} needs a value\n\n{USAGE}')
            value = argv[i]
        if option == '--hosts':
            hosts = value
        else:
            try:
                n = int(value)
            except ValueError:
                n = 0
            if n < 1:
                raise SystemExit(f'hybridlib.launch: -n takes a positive number of workers, '
                                 f'got {value!r}')
        i += 1
    if n is None:
        raise SystemExit(f'hybridlib.launch: -n N (the number of workers) is required\n\n{USAGE}')
    if i == len(argv):
        raise SystemExit(f'hybridlib.launch: a script to run is required\n\n{USAGE}')
    return n, hosts, argv[i:]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [_WORKER]:
        return _worker(argv[1:])
    n, hosts, script = _parse(argv)
    return _run(command(n, script, hosts))


if __name__ == '__main__':
    sys.exit(main())
