"""``mx.profiler``: operator timings as a Chrome trace, and MXNet's aggregate statistics.

What is timed, while the profiler runs (``set_state('run')``, not paused):

* each imperative operator call (``nd.*``, autograd's gradient operators, optimizer updates):
  ``ndarray.invoke_all`` and ``ndarray._invoke_into`` time the operator's body
  (``timed_call``) when ``active.imperative`` is set (``profile_imperative``);
* each line of a hybridized block's compiled graph (``cached_op``): every plan is also
  generated as a *timed variant*, the same lines with ``_start = _clock()`` before each
  operator and ``_record('<operator>', _start)`` after it (``operator_timer``). A plan call
  takes that variant while ``active.symbolic`` is set (``profile_symbolic``);
* the user's own ``Task``, ``Frame`` and ``Event`` ranges, ``Counter`` values and ``Marker``
  instants.

With the profiler off, the hot paths do no profiling work beyond one attribute check per
operator call (``invoke``) and per plan call, and the generated code of a plan is the same
as if this module did not exist. On a GPU an operator's time ends after a synchronisation, so
that it is the operator's run and not its launch.

A record is a tuple appended to a list (atomic in CPython, so any thread may record). ``dump``
writes the records to a Chrome trace (``chrome://tracing``, Perfetto): operators are complete
("X") events named by their operator, in category ``operator``, in one process per device
(``cpu/0``); the user's objects are in processes named by their domains, as in MXNet. Times
(``ts``, ``dur``) are ``time.perf_counter_ns()`` in microseconds. The file is valid JSON after
every dump: later dumps overwrite its closing lines with the new events and close it again.
``dumps`` folds the records into MXNet's aggregate statistics (with ``aggregate_stats=True``)
and prints them in MXNet's table or JSON layout.

MXNet also profiles its C API calls (``profile_api``) and its device memory
(``profile_memory``); hybridlib has no C API, and numpy and cupy own the memory, so these two
switches are accepted and record nothing.
"""
import atexit
import ctypes
import itertools
import json
import math
import struct
import threading
import time
import warnings

from .base import MXNetError

__all__ = ['set_config', 'set_state', 'pause', 'resume', 'dump', 'dumps',
           'profiler_set_config', 'profiler_set_state', 'dump_profile', 'set_kvstore_handle',
           'profiler_kvstore_handle', 'Domain', 'Task', 'Frame', 'Event', 'Counter', 'Marker',
           'active', 'clock', 'timed_call', 'operator_timer']

# -------------------------------------------------------------------------------------------------
# Configuration (MXNet's ProfileConfigParam: names, types, defaults and descriptions)
# -------------------------------------------------------------------------------------------------

_PARAMETERS = (
    ('profile_all', 'boolean', False, 'Profile all. Default is False.'),
    ('profile_symbolic', 'boolean', True, 'Profile symbolic operators.  Default is True.'),
    ('profile_imperative', 'boolean', True, 'Profile imperative operators.  Default is True.'),
    ('profile_memory', 'boolean', True, 'Profile memory.  Default is True.'),
    ('profile_api', 'boolean', True, 'Profile C API.  Default is True.'),
    ('filename', 'string', 'profile.json', 'File name to write profiling info.'),
    ('continuous_dump', 'boolean', True,
     'Periodically dump (and append) profiling data to file while running. Default is True.'),
    ('dump_period', 'float', 1.0,
     'When continuous dump is enabled, the period between subsequent profile info dumping.'),
    ('aggregate_stats', 'boolean', False,
     'Maintain aggregate stats, required for MXDumpAggregateStats.  Note that this can have '
     'a negative performance impact. Default is False.'),
    ('profile_process', ('server', 'worker'), 'worker',
     'Specifies which process to profile: worker: this is default. for single node training '
     'it should always be worker.server: for distributed training, this profiles server '
     'process'),
)
_DEFAULTS = {key: default for key, _, default, _ in _PARAMETERS}
_PROCESSES = {'worker': 0, 'server': 1}
_STATES = {'stop': 0, 'run': 1}


def _parameter_doc():
    """MXNet's list of the parameters, as its errors print it."""
    lines = ['Possible Arguments:', '----------------']
    for key, kind, default, doc in _PARAMETERS:
        if isinstance(kind, tuple):
            choices = ', '.join(f"'{c}'" for c in kind)
            lines.append(f"{key} : {{{choices}}},optional, default='{default}'")
        else:
            shown = {bool: lambda v: str(int(v)), str: lambda v: f"'{v}'",
                     float: lambda v: f'{v:g}'}[type(default)](default)
            lines.append(f'{key} : {kind}, optional, default={shown}')
        lines.append(f'    {doc}')
    return '\n'.join(lines)


def _parse(key, kind, value):
    """``value`` (any object; MXNet reads ``str(value)``) as a parameter of type ``kind``."""
    text = str(value)
    if kind == 'boolean':
        if text.lower() in ('true', '1'):
            return True
        if text.lower() in ('false', '0'):
            return False
    elif kind == 'float':
        try:
            return float(text)
        except ValueError:
            pass
    elif kind == 'string':
        return text
    elif text in kind:
        return text
    else:
        choices = ', '.join(f"'{c}'" for c in kind)
        raise MXNetError(f"Invalid Input: '{text}', valid values are: {{{choices}}}")
    raise MXNetError(f"Invalid Parameter format for {key} expect {kind} but value='{text}'")


# -------------------------------------------------------------------------------------------------
# State, and the flags that the operator paths read
# -------------------------------------------------------------------------------------------------

class _Active:
    """What is being timed now: ``imperative`` operator calls, ``symbolic`` (compiled graph)
    operators. Read once per call by ``ndarray.invoke_all`` and by a CachedOp's plan call."""
    __slots__ = ('imperative', 'symbolic')

    def __init__(self):
        self.imperative = False
        self.symbolic = False


active = _Active()
_config = dict(_DEFAULTS)
_state = {'running': False, 'paused': False, 'configured': False, 'output': False}
_lock = threading.RLock()       # the records' consumers: dumps, the file, the dump thread


def _update_flags():
    on = _state['running'] and not _state['paused']
    everything = _config['profile_all']
    active.imperative = on and (everything or _config['profile_imperative'])
    active.symbolic = on and (everything or _config['profile_symbolic'])


profiler_kvstore_handle = ctypes.c_void_p()


def set_kvstore_handle(handle):
    """Set the KVStore handle whose server ``profile_process='server'`` would profile."""
    global profiler_kvstore_handle
    profiler_kvstore_handle = handle


def _check_process(profile_process):
    """Only this process can be profiled: a KVStore server exists only for a distributed
    KVStore, and hybridlib's is single-process."""
    if _PROCESSES[profile_process] == 1:
        raise MXNetError('Check failed: kvStoreHandle: Kvstore Handle passed to profiler is '
                         "null (hybridlib's KVStore is single-process: it has no server to "
                         "profile; use profile_process='worker')")


def set_config(**kwargs):
    """Set up the configuration of the profiler (only keyword arguments).

    Keys not given take their defaults again, as in MXNet.

    Parameters
    ----------
    filename : str
        Output file of the trace (default ``'profile.json'``).
    profile_all : bool
        Time everything (overrides the next two).
    profile_symbolic : bool
        Time the operators of hybridized blocks' compiled graphs (default True).
    profile_imperative : bool
        Time imperative operator calls (default True).
    profile_memory : bool
        Accepted; device memory is not recorded (numpy and cupy own it).
    profile_api : bool
        Accepted; there is no C API to record.
    continuous_dump : bool
        Write the trace every ``dump_period`` seconds while running (default True).
    dump_period : float
        Seconds between those writes (default 1).
    aggregate_stats : bool
        Keep the statistics that ``dumps`` prints (default False).
    profile_process : str
        ``'worker'``; a KVStore ``'server'`` exists only in distributed training.
    """
    known = {key: kind for key, kind, _, _ in _PARAMETERS}
    config = dict(_DEFAULTS)
    for key, value in kwargs.items():
        if key not in known:
            raise MXNetError(f"Cannot find argument '{key}', {_parameter_doc()}")
        config[key] = _parse(key, known[key], value)
    _check_process(config['profile_process'])
    with _lock:
        _config.update(config)
        _state['configured'] = True
        _update_flags()
        _dumper.restart()


def profiler_set_config(mode='symbolic', filename='profile.json'):
    """Set up the configuration of the profiler (deprecated: use ``set_config``).

    Parameters
    ----------
    mode : str
        ``'symbolic'`` or ``'all'``: sets ``profile_<mode>``.
    filename : str
        Output file of the trace.
    """
    warnings.warn('profiler.profiler_set_config() is deprecated. '
                  'Please use profiler.set_config() instead')
    set_config(**{'profile_' + mode: True, 'filename': filename})


def set_state(state='stop', profile_process='worker'):
    """Start (``'run'``) or stop (``'stop'``) the profiler.

    Parameters
    ----------
    state : str
        ``'run'`` or ``'stop'``.
    profile_process : str
        ``'worker'`` (this process).
    """
    running = _STATES[state] == 1
    _check_process(profile_process)
    with _lock:
        _state['running'] = running
        _state['configured'] = True
        if running:
            _state['output'] = True
            _register_exit_dump()
        _update_flags()
        _dumper.restart()


def profiler_set_state(state='stop'):
    """Start or stop the profiler (deprecated: use ``set_state``)."""
    warnings.warn('profiler.profiler_set_state() is deprecated. '
                  'Please use profiler.set_state() instead')
    set_state(state)


def pause(profile_process='worker'):
    """Pause profiling: nothing is recorded until ``resume()``."""
    _check_process(profile_process)
    with _lock:
        _state['paused'] = True
        _update_flags()


def resume(profile_process='worker'):
    """Resume paused profiling."""
    _check_process(profile_process)
    with _lock:
        _state['paused'] = False
        _update_flags()


# -------------------------------------------------------------------------------------------------
# Recording
# -------------------------------------------------------------------------------------------------

clock = time.perf_counter_ns            # nanoseconds; the trace shows microseconds
_pending = []                           # records not yet folded or written (never rebound)
_append = _pending.append
_get_ident = threading.get_ident
_DEVICE_NAMES = {'cpu': 'cpu', 'gpu': 'gpu', 'cpu_pinned': 'cpu pinned',
                 'cpu_shared': 'cpu shared'}


def _device_label(ctx):
    """The trace's process of a device, named as MXNet names it (``cpu/0``)."""
    return f'{_DEVICE_NAMES[ctx.device_type]}/{ctx.device_id}'


def _synchronise(ctx):
    """Wait for the work queued on ``ctx``'s current stream (cupy runs asynchronously)."""
    ctx.array_module.cuda.get_current_stream().synchronize()


def timed_call(name, ctx, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` recorded as a run of operator ``name`` on ``ctx``."""
    start = clock()
    result = fn(*args, **kwargs)
    if ctx.device_type == 'gpu':
        _synchronise(ctx)
    _append(('X', 'operator', name, _device_label(ctx), _get_ident(), start, clock()))
    return result


def operator_timer(ctx):
    """``record(name, start)``, bound into the timed variant of a plan compiled for ``ctx``:
    records operator ``name`` from ``start`` (a ``clock()`` value) to now."""
    label = _device_label(ctx)
    if ctx.device_type == 'gpu':
        def record(name, start):
            _synchronise(ctx)
            _append(('X', 'operator', name, label, _get_ident(), start, clock()))
    else:
        def record(name, start):
            _append(('X', 'operator', name, label, _get_ident(), start, clock()))
    return record


def _user_record(record):
    """Record a user object's range, value or instant. As in MXNet these are kept whenever the
    profiler is configured and not paused, running or not."""
    if _state['configured'] and not _state['paused']:
        _append(record)


# -------------------------------------------------------------------------------------------------
# Aggregate statistics (MXNet's AggregateStats: its table and JSON layouts)
# -------------------------------------------------------------------------------------------------

_DURATION, _COUNTER = 0, 1
_stats = {}             # category -> {name: [kind, count, total, min, max]} (microseconds)
_unwritten = []         # records folded but not yet in the trace file
_SORT_KEYS = {'total': 2, 'avg': None, 'min': 3, 'max': 4, 'count': 1}


def _drain():
    """Move the pending records into the statistics and the trace's queue."""
    n = len(_pending)
    batch = _pending[:n]
    del _pending[:n]            # records appended meanwhile by other threads stay pending
    if _config['aggregate_stats']:
        for record in batch:
            _fold(record)
    _unwritten.extend(batch)


def _fold(record):
    phase, category, name = record[0], record[1], record[2]
    names = _stats.setdefault(category, {})
    if phase == 'i':            # an instant: the category is listed, with no rows (as MXNet)
        return
    if phase == 'C':
        value = record[6]
        stat = names.get(name)
        if stat is None:
            names[name] = [_COUNTER, 1, value, value, value]
        else:
            stat[1] += 1
            stat[2] = value     # a counter's "total" is its last value
            stat[3] = min(stat[3], value)
            stat[4] = max(stat[4], value)
        return
    duration = (record[6] - record[5]) / 1000
    stat = names.get(name)
    if stat is None:
        names[name] = [_DURATION, 1, duration, duration, duration]
    else:
        stat[1] += 1
        stat[2] += duration
        stat[3] = min(stat[3], duration)
        stat[4] = max(stat[4], duration)


def _milli(micro):
    """MXNet's MicroToMilli: microseconds to milliseconds as a 32-bit float."""
    return struct.unpack('f', struct.pack('f', micro / 1000))[0]


def _average(stat):
    """The Avg column: the mean duration, or half a counter's range (in integers, as MXNet)."""
    kind, count, total, low, high = stat
    if kind == _COUNTER:
        return (high - low) // 2
    return total / count


def _ordered(names, sort_by, ascending):
    """Rows in MXNet's order: by the key, largest first (smallest with ``ascending``), equal
    keys by name, largest first (its heap of (key, name) pairs)."""
    index = _SORT_KEYS[sort_by]
    sign = -1 if ascending else 1

    def key(item):
        stat = item[1]
        return (sign * (_average(stat) if index is None else stat[index]), item[0])
    return sorted(names.items(), key=key, reverse=True)


def _format_table(stats, sort_by='total', ascending=False):
    """The statistics as MXNet's "Profile Statistics" text."""
    lines = ['', 'Profile Statistics:', '\tNote the difference in units for different entries.']
    for category in sorted(stats):
        lines += [category, '=================',
                  f'{"Name":<25}{"Total Count":>16} {"Time (ms)":>16} {"Min Time (ms)":>16} '
                  f'{"Max Time (ms)":>16} {"Avg Time (ms)":>16}',
                  f'{"----":<25}{"-----------":>16} {"---------":>16} {"-------------":>16} '
                  f'{"-------------":>16} {"-------------":>16}']
        for name, stat in _ordered(stats[category], sort_by, ascending):
            lines.append(f'{name:<25}{stat[1]:>16} {_milli(stat[2]):>16.4f} '
                         f'{_milli(stat[3]):>16.4f} {_milli(stat[4]):>16.4f} '
                         f'{_milli(_average(stat)):>16.4f}')
        lines.append('')
    return '\n'.join(lines) + '\n'


def _number(value):
    """A number as MXNet's JSON statistics print it (C++ streams, precision 4)."""
    return '%.4g' % value


def _format_json(stats, sort_by='total', ascending=False):
    """The statistics as MXNet's JSON text."""
    blocks = []
    for category in sorted(stats):
        rows = []
        for name, stat in _ordered(stats[category], sort_by, ascending):
            rows.append(f'            {json.dumps(name)}: {{\n'
                        f'                "Count": {stat[1]},\n'
                        f'                "Total": {_number(_milli(stat[2]))},\n'
                        f'                "Min": {_number(_milli(stat[3]))},\n'
                        f'                "Max": {_number(_milli(stat[4]))},\n'
                        f'                "Avg": {_number(_milli(_average(stat)))}\n'
                        '            }\n')
        blocks.append(f'        {json.dumps(category)}: {{\n' + '            ,\n'.join(rows)
                      + '        }\n')
    return ('{\n    "Time": {\n' + '        ,\n'.join(blocks) + '    }\n    ,\n'
            '    "Memory": {\n    }\n,\n    "Unit": {\n        "Time": "ms",\n'
            '        "Memory": "kB"\n    }\n}\n')


def dumps(reset=False, format='table', sort_by='total', ascending=False):  # noqa: A002
    """The aggregate statistics as printable text (needs ``aggregate_stats=True``).

    Parameters
    ----------
    reset : bool
        Clear the statistics collected so far, after printing them.
    format : str
        ``'table'`` or ``'json'``.
    sort_by : str
        ``'total'``, ``'avg'``, ``'min'``, ``'max'`` or ``'count'``: the order of the rows
        within each category.
    ascending : bool
        Smallest first.

    Returns
    -------
    str
        MXNet's layout; empty when ``aggregate_stats`` is off.
    """
    assert format in ('table', 'json'), \
        "Invalid value provided for format: {0}. Support: 'table', 'json'".format(format)
    assert sort_by in _SORT_KEYS, \
        "Invalid value provided for sort_by: {0}.\
             Support: 'total', 'avg', 'min', 'max', 'count'"\
        .format(sort_by)
    assert ascending in (False, True), \
        "Invalid value provided for ascending: {0}. Support: False, True".format(ascending)
    assert reset in (False, True), \
        "Invalid value provided for reset: {0}. Support: False, True".format(reset)
    with _lock:
        if not _config['aggregate_stats']:
            if reset:
                raise MXNetError('Operation not permitted (the profiler keeps no statistics: '
                                 'set_config(aggregate_stats=True))')
            return ''
        _drain()
        text = (_format_table if format == 'table' else _format_json)(_stats, sort_by,
                                                                        ascending)
        if reset:
            _stats.clear()
    return text


# -------------------------------------------------------------------------------------------------
# The trace file
# -------------------------------------------------------------------------------------------------

_HEAD = b'{\n    "traceEvents": [\n'
_TAIL = b'\n    ],\n    "displayTimeUnit": "ms"\n}\n'
_SCOPES = {'global': 'g', 'process': 'p', 'thread': 't', 'task': 'p', 'marker': 'p'}


class _TraceFile:
    """A Chrome trace being written: the events so far, then the closing lines, which the
    next ``write`` overwrites with its events and writes again."""

    def __init__(self, filename):
        self.filename = filename
        self.tail_at = None         # where the closing lines start, once written
        self.count = 0
        self.pids = {}

    def _events(self, record):
        """The trace events (dicts) of one record, after its process's name when new."""
        phase, category, name, process, tid, ts = record[:6]
        pid = self.pids.get(process)
        if pid is None:
            pid = self.pids[process] = len(self.pids)
            yield {'ph': 'M', 'args': {'name': process}, 'pid': pid, 'name': 'process_name'}
        event = {'name': name, 'cat': category, 'ph': phase, 'ts': round(ts / 1000, 3)}
        if phase == 'X':
            event['dur'] = round((record[6] - ts) / 1000, 3)
        elif phase == 'C':
            event['args'] = {name: record[6]}
        elif phase == 'i':
            event['s'] = record[6]
        event.update(pid=pid, tid=tid)
        if phase == 'b':        # a Task or Frame: an async range, one id per object
            event['id'] = record[7]
            yield event
            event = dict(event, ph='e', ts=round(record[6] / 1000, 3))
        yield event

    def write(self, records):
        """Append ``records``' events, leaving the file valid JSON."""
        texts = [json.dumps(e) for r in records for e in self._events(r)]
        text = ',\n'.join(texts).encode('utf-8')
        if self.tail_at is None:
            with open(self.filename, 'wb') as f:
                f.write(_HEAD + text + _TAIL)
            self.tail_at = len(_HEAD) + len(text)
        else:
            if self.count and texts:
                text = b',\n' + text
            with open(self.filename, 'r+b') as f:
                f.seek(self.tail_at)
                f.write(text + _TAIL)
                f.truncate()
            self.tail_at += len(text)
        self.count += len(texts)


_file = [None]          # the _TraceFile being written, or None


def _dump(finished):
    if not _state['output']:
        raise MXNetError("Check failed: profiler->IsEnableOutput(): Profiler hasn't been run. "
                         'Config and start profiler first')
    _drain()
    trace = _file[0]
    if trace is None or trace.filename != _config['filename']:
        trace = _file[0] = _TraceFile(_config['filename'])
    trace.write(_unwritten)
    _unwritten.clear()
    if finished:
        _file[0] = None
        _state['output'] = False


def dump(finished=True, profile_process='worker'):
    """Write the trace file (``filename`` of ``set_config``) with what was recorded.

    Parameters
    ----------
    finished : bool
        End this file: the next dump, after the next ``set_state('run')``, starts a new one.
        With False the file is complete JSON as well, and later dumps add to it.
    profile_process : str
        ``'worker'`` (this process).
    """
    _check_process(profile_process)
    with _lock:
        _dump(finished is True)


def dump_profile():
    """Write the trace file and end it (deprecated: use ``dump``)."""
    warnings.warn('profiler.dump_profile() is deprecated. '
                  'Please use profiler.dump() instead')
    dump(True)


class _Dumper:
    """The thread that writes the trace every ``dump_period`` seconds while the profiler runs
    with ``continuous_dump`` (MXNet's default)."""

    def __init__(self):
        self._stop = None

    def restart(self):
        """Stop the thread, and start one if the configuration and state ask for it."""
        if self._stop is not None:
            self._stop.set()
            self._stop = None
        if _state['running'] and _config['continuous_dump']:
            period = _config['dump_period']
            # MXNet accepts any float; a thread must not spin
            period = period if math.isfinite(period) and period > 0.01 else 0.01
            self._stop = threading.Event()
            threading.Thread(target=self._run, args=(self._stop, period), daemon=True,
                             name='hybridlib-profiler-dump').start()

    @staticmethod
    def _run(stop, period):
        while not stop.wait(period):
            with _lock:
                if stop.is_set() or not _state['output']:
                    return
                try:
                    _dump(finished=False)
                except OSError as error:
                    warnings.warn(f'profiler: cannot write {_config["filename"]!r} ({error}); '
                                  'continuous dumping stops')
                    return


_dumper = _Dumper()
_exit_registered = []


def _register_exit_dump():
    """Write what is left when the interpreter exits, as MXNet does."""
    if not _exit_registered:
        _exit_registered.append(True)
        atexit.register(_exit_dump)


def _exit_dump():
    with _lock:
        if _dumper._stop is not None:
            _dumper._stop.set()
        if _state['output']:
            try:
                _dump(finished=True)
            except OSError as error:
                warnings.warn(f'profiler: cannot write {_config["filename"]!r} at exit '
                              f'({error})')


# -------------------------------------------------------------------------------------------------
# The user's objects: domains, ranges, counters, markers
# -------------------------------------------------------------------------------------------------

_ids = itertools.count(1)


class Domain:
    """A profiling domain: groups tasks, frames, counters and markers (a process of the trace,
    a category of the statistics).

    Parameters
    ----------
    name : str
        Name of the domain.
    """

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def new_task(self, name):
        """A ``Task`` of this domain."""
        return Task(self, name)

    def new_frame(self, name):
        """A ``Frame`` of this domain."""
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """A ``Counter`` of this domain, set to ``value`` when given."""
        return Counter(self, name, value)

    def new_marker(self, name):
        """A ``Marker`` of this domain."""
        return Marker(self, name)


class _Range:
    """A named span of time between ``start()`` and ``stop()``."""
    _phase = 'X'

    def __init__(self, category, name):
        self.name = name
        self._category = category
        self._start = None
        self._id = next(_ids)

    def start(self):
        """Start timing the range."""
        self._start = clock()

    def stop(self):
        """Stop timing the range and record it (a ``stop`` without ``start`` records
        nothing)."""
        start, self._start = self._start, None
        if start is not None:
            _user_record((self._phase, self._category, self.name, self._category, _get_ident(),
                          start, clock(), self._id))

    def __str__(self):
        return self.name


class Task(_Range):
    """A logical unit of work of a thread; tasks may overlap and nest. All runs of a task
    add up to one row of the statistics.

    Parameters
    ----------
    domain : Domain
        The domain it belongs to.
    name : str
        Name of the task.
    """
    _phase = 'b'

    def __init__(self, domain, name):
        super().__init__(domain.name, name)


class Frame(_Range):
    """A period between two points, such as one iteration or one rendered frame: each run is
    its own range of the trace.

    Parameters
    ----------
    domain : Domain
        The domain it belongs to.
    name : str
        Name of the frame.
    """
    _phase = 'b'

    def __init__(self, domain, name):
        super().__init__(f'{domain.name},frame', name)


class Event(_Range):
    """A range of the calling thread, outside any domain (category ``event``); recorded only
    while the profiler is not paused.

    Parameters
    ----------
    name : str
        Name of the event.
    """

    def __init__(self, name):
        super().__init__('event', name)


class Counter:
    """A value tracked over time (a counter track of the trace).

    Parameters
    ----------
    domain : Domain
        The domain it belongs to.
    name : str
        Name of the counter.
    value : int, optional
        Its initial value.
    """

    def __init__(self, domain, name, value=None):
        self.name = name
        self._category = domain.name
        self._value = 0
        self._value_lock = threading.Lock()
        if value is not None:
            self.set_value(value)

    def _set(self, value):
        self._value = value
        _user_record(('C', self._category, self.name, self._category, _get_ident(), clock(),
                      value))

    def set_value(self, value):
        """Set the counter to ``value`` (an int)."""
        with self._value_lock:
            self._set(int(value))

    def increment(self, delta=1):
        """Add ``delta`` to the counter."""
        with self._value_lock:
            self._set(self._value + int(delta))

    def decrement(self, delta=1):
        """Subtract ``delta`` from the counter."""
        with self._value_lock:
            self._set(self._value - int(delta))

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


class Marker:
    """An instant in time (an instant event of the trace).

    Parameters
    ----------
    domain : Domain
        The domain it belongs to.
    name : str
        Name of the marker.
    """

    def __init__(self, domain, name):
        self.name = name
        self.domain = domain

    def mark(self, scope='process'):
        """Record the instant.

        Parameters
        ----------
        scope : str
            What it marks: ``'global'``, ``'process'``, ``'thread'``, ``'task'`` or
            ``'marker'`` (the last two show as process-wide).
        """
        if scope not in _SCOPES:
            valid = ', '.join(f"'{s}'" for s in sorted(_SCOPES))
            raise MXNetError(f"Invalid Input: '{scope}', valid values are: {{{valid}}}")
        category = f'{self.domain.name},instant_marker'
        _user_record(('i', category, self.name, category, _get_ident(), clock(),
                      _SCOPES[scope]))
