"""Writes tests/data/profiler-*: what MXNet 1.9.1's ``mx.profiler`` prints and writes.

Run with the MXNet oracle, from the repository root::

    .oracle/bin/python tests/data/make_profiler_files.py

The profiled session is ``run_session(mx, filename)`` below: run here with ``mxnet``, and by
tests/test_profiler.py with ``hybridlib`` (the same source, as a drop-in user would run it).
Timings differ from run to run; the tests compare layouts, names and orders, and rebuild the
tables from the integer microseconds that MXNet's tables show. Files:

* ``profiler-tables.json``: ``dumps()`` of one snapshot of aggregate statistics as a table and
  as JSON, for every ``sort_by`` and both orders, and after ``reset=True``; which rows are
  counters;
* ``profiler-trace.json``: a summary of the Chrome trace file of the session (its top-level
  keys, and the (category, name, phase) of each event of the session's own objects and
  operators, MXNet's engine internals left out);
* ``profiler-facts.json``: error messages, warnings and return values of the API's edge cases.
"""
import json
import os
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SORTS = ('total', 'avg', 'min', 'max', 'count')
COUNTERS = ('steps', 'queue')
# MXNet's engine work (variable deletion, waits) and its C API: no equivalents in hybridlib
INTERNAL = ('DeleteVariable', 'WaitForVar', 'CopyCPU2CPU', 'ResourceParallelRandomSetSeed')


def run_session(mx, filename):
    """A profiled session: imperative operators, a hybridized block, and every kind of
    user-defined object. Returns nothing; the profiler is stopped at the end."""
    nd = mx.nd
    mx.profiler.set_config(filename=filename, profile_imperative=True,
                           profile_symbolic=True, profile_api=False, profile_memory=False,
                           continuous_dump=False, aggregate_stats=True)
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, activation='relu'), mx.gluon.nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = nd.ones((2, 3))
    net(x).wait_to_read()
    mx.profiler.set_state('run')
    for _ in range(3):
        nd.relu(x).wait_to_read()
    nd.sigmoid(x).wait_to_read()
    net(x).wait_to_read()
    domain = mx.profiler.Domain('session')
    task = domain.new_task('a_task_with_a_name_longer_than_the_column')
    task.start()
    nd.exp(x).wait_to_read()
    task.stop()
    frame = domain.new_frame('frame')
    frame.start()
    frame.stop()
    event = mx.profiler.Event('event_a')
    event.start()
    event.stop()
    steps = domain.new_counter(COUNTERS[0], 5)
    steps += 3
    steps -= 1
    steps.set_value(10)
    queue = mx.profiler.Counter(domain, COUNTERS[1])
    queue.increment(4)
    domain.new_marker('marker').mark('thread')
    mx.profiler.set_state('stop')


def tables(mx):
    """Every table and JSON form of the current statistics, then the table after a reset."""
    out = {}
    for fmt in ('table', 'json'):
        for sort_by in SORTS:
            for ascending in (False, True):
                out[f'{fmt}-{sort_by}-{"asc" if ascending else "desc"}'] = mx.profiler.dumps(
                    format=fmt, sort_by=sort_by, ascending=ascending)
    mx.profiler.dumps(reset=True)
    out['after_reset'] = mx.profiler.dumps()
    out['after_reset_json'] = mx.profiler.dumps(format='json')
    return out


def trace_summary(filename):
    with open(filename) as f:
        trace = json.load(f)
    events = [[e.get('cat'), e['name'], e['ph']] for e in trace['traceEvents']
              if e['ph'] != 'M' and e.get('cat') not in ('MXNET_C_API', 'Device Storage')
              and e['name'] not in INTERNAL]
    processes = sorted({e['args']['name'] for e in trace['traceEvents'] if e['ph'] == 'M'})
    return {'keys': sorted(trace), 'displayTimeUnit': trace.get('displayTimeUnit'),
            'events': events, 'process_names': processes}


def error_text(fn):
    try:
        fn()
    except Exception as error:      # noqa: BLE001 - recording what MXNet raises
        return [type(error).__name__, str(error).splitlines()[-1] if
                'Traceback' in str(error) else str(error)]
    return None


def fresh_facts(mx):
    """What a profiler that was never configured answers."""
    p = mx.profiler
    return {'dumps_before_config': p.dumps(),
            'dumps_reset_without_stats': error_text(lambda: p.dumps(reset=True)),
            'dump_before_run': error_text(p.dump)}


def facts(mx, directory):
    """Errors, warnings and values of the API's edge cases (run after the session: MXNet
    appends a later run to a finished trace file)."""
    p = mx.profiler
    out = {'unknown_key': error_text(lambda: p.set_config(bogus=1)),
           'bad_boolean': error_text(lambda: p.set_config(profile_all='yes')),
           'bad_float': error_text(lambda: p.set_config(dump_period='soon')),
           'bad_choice': error_text(lambda: p.set_config(profile_process='Worker')),
           'bad_state': error_text(lambda: p.set_state('go')),
           'bad_format': error_text(lambda: p.dumps(format='xml')),
           'bad_sort': error_text(lambda: p.dumps(sort_by='name')),
           'server_state': error_text(lambda: p.set_state('run', profile_process='server')),
           'kvstore_handle': repr(p.profiler_kvstore_handle),
           'booleans_accepted': [v for v in ('true', 'True', 'FALSE', '1', '0', 'yes', '2', '')
                                 if error_text(lambda: p.set_config(
                                     profile_all=v, continuous_dump=False)) is None]}
    marker = p.Marker(p.Domain('facts'), 'm')
    out['bad_marker_scope'] = error_text(lambda: marker.mark('galaxy'))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        p.profiler_set_config(mode='all', filename=os.path.join(directory, 'old.json'))
        p.profiler_set_state('run')
        p.profiler_set_state('stop')
        p.dump_profile()
    out['deprecation_warnings'] = [[w.category.__name__, str(w.message)] for w in caught]
    out['bad_mode'] = error_text(lambda: p.profiler_set_config(mode='everything'))
    return out


def main():
    import mxnet as mx
    with tempfile.TemporaryDirectory() as directory:
        fact = fresh_facts(mx)
        trace = os.path.join(directory, 'profile.json')
        run_session(mx, trace)
        mx.profiler.dump()      # first: MXNet's dumps(reset=True) can end the file's output
        record = tables(mx)
        record['counters'] = list(COUNTERS)
        summary = trace_summary(trace)
        fact.update(facts(mx, directory))
    with open(os.path.join(HERE, 'profiler-tables.json'), 'w') as f:
        json.dump(record, f, indent=1, sort_keys=True)
    with open(os.path.join(HERE, 'profiler-trace.json'), 'w') as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(HERE, 'profiler-facts.json'), 'w') as f:
        json.dump(fact, f, indent=1, sort_keys=True)


if __name__ == '__main__':
    main()
