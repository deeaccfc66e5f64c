"""mx.profiler: the Chrome trace, MXNet's statistics layouts, what is timed (every imperative
operator call, every line of a compiled graph), the time a training step's operators cover,
and that a stopped profiler costs the hot paths nothing.

The profiled session and MXNet's outputs come from tests/data/make_profiler_files.py (the same
``run_session`` ran on MXNet 1.9.1)."""
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd, profiler, sym
from hybridlib.base import MXNetError
from hybridlib.cached_op import CachedOp, Plan
from hybridlib.model_zoo import vision

DATA = os.path.join(os.path.dirname(__file__), 'data')
_spec = importlib.util.spec_from_file_location(
    'make_profiler_files', os.path.join(DATA, 'make_profiler_files.py'))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)


def _load(name):
    with open(os.path.join(DATA, name)) as f:
        return json.load(f)


TABLES = _load('profiler-tables.json')
TRACE = _load('profiler-trace.json')
FACTS = _load('profiler-facts.json')
ROW_NUMBERS = 16 + 4 * 17       # the count and four times columns closing every row


@pytest.fixture(autouse=True)
def fresh_profiler():
    """Each test starts and ends with a stopped profiler, default settings, nothing recorded
    (a running profiler would time every later test)."""
    def reset():
        profiler.set_state('stop')
        profiler.resume()
        if profiler._state['output']:
            profiler.dump()
        profiler.set_config()
        profiler._pending.clear()
        profiler._unwritten.clear()
        profiler._stats.clear()
        profiler._state['configured'] = False
    reset()
    yield
    reset()


def _trace(path):
    with open(path) as f:
        return json.load(f)


def _operator_events(trace):
    return [e for e in trace['traceEvents'] if e['ph'] == 'X' and e['cat'] == 'operator']


def _parse_table(text, counters=()):
    """The statistics of a "Profile Statistics" table: {category: {name: [kind, count, total,
    min, max]}} in integer microseconds (MXNet's unit: its tables show them exactly)."""
    stats = {}
    lines = text.split('\n')
    assert lines[:3] == ['', 'Profile Statistics:',
                         '\tNote the difference in units for different entries.'], lines[:3]
    i = 3
    while i < len(lines) and lines[i]:
        category = lines[i]
        assert lines[i + 1] == '=================', lines[i + 1]
        rows = stats[category] = {}
        i += 4
        while lines[i]:
            line = lines[i]
            name, numbers = line[:-ROW_NUMBERS].rstrip(), line[-ROW_NUMBERS:]
            count, *times = numbers.split()
            assert all(re.fullmatch(r'-?\d+\.\d{4}', t) for t in times), line
            micro = [round(float(t) * 1000) for t in times[:3]]
            kind = profiler._COUNTER if name in counters else profiler._DURATION
            rows[name] = [kind, int(count), *micro]
            i += 1
        i += 1
    return stats


# -------------------------------------------------------------------------------------------------
# The trace file
# -------------------------------------------------------------------------------------------------

def test_the_trace_is_chrome_trace_json(tmp_path):
    path = str(tmp_path / 'profile.json')
    GEN.run_session(mx, path)
    profiler.dump()
    trace = _trace(path)
    assert sorted(trace) == TRACE['keys'] and trace['displayTimeUnit'] == 'ms'
    events = trace['traceEvents']
    processes = {e['pid']: e['args']['name'] for e in events if e['ph'] == 'M'}
    for e in events:
        if e['ph'] == 'M':
            assert e['name'] == 'process_name' and isinstance(e['pid'], int)
            continue
        assert {'name', 'cat', 'ph', 'ts', 'pid', 'tid'} <= set(e), e
        assert isinstance(e['ts'], (int, float)) and e['pid'] in processes
        if e['ph'] == 'X':
            assert e['dur'] >= 0
        if e['ph'] in 'be':
            assert isinstance(e['id'], int)
    ops = _operator_events(trace)
    assert [e['name'] for e in ops] == ['relu'] * 3 + ['sigmoid', 'FullyConnected',
                                                        'Activation', 'FullyConnected', 'exp']
    assert {processes[e['pid']] for e in ops} == {'cpu/0'}
    starts = [e['ts'] for e in ops]
    assert starts == sorted(starts)
    # what MXNet's trace of the same session holds, its engine internals left out
    ours = {(e['cat'], e['name']) for e in events if e['ph'] != 'M'}
    assert ours == {(cat, name) for cat, name, _ in TRACE['events']}
    assert set(processes.values()) <= set(TRACE['process_names'])


def test_dumps_add_to_a_file_that_stays_valid(tmp_path):
    path = str(tmp_path / 'profile.json')
    profiler.set_config(filename=path, continuous_dump=False)
    x = nd.ones((2, 3))
    profiler.set_state('run')
    nd.relu(x)
    profiler.dump(finished=False)
    assert [e['name'] for e in _operator_events(_trace(path))] == ['relu']
    nd.exp(x)
    nd.exp(x)
    profiler.dump(finished=False)
    assert [e['name'] for e in _operator_events(_trace(path))] == ['relu', 'exp', 'exp']
    profiler.set_state('stop')
    profiler.dump()
    with pytest.raises(MXNetError, match="Profiler hasn't been run"):
        profiler.dump()                 # a finished file: the next run starts a new one
    profiler.set_state('run')
    nd.sigmoid(x)
    profiler.dump()
    assert [e['name'] for e in _operator_events(_trace(path))] == ['sigmoid']


def test_continuous_dump_writes_the_file_while_running(tmp_path):
    path = tmp_path / 'profile.json'
    profiler.set_config(filename=str(path), dump_period=0.05)    # continuous_dump: default
    x = nd.ones((2, 3))
    profiler.set_state('run')
    nd.relu(x)
    deadline = time.monotonic() + 30
    while not _written(path):
        assert time.monotonic() < deadline, 'the trace was not written while running'
        time.sleep(0.05)
    profiler.set_state('stop')
    profiler.dump()
    assert [e['name'] for e in _operator_events(_trace(path))] == ['relu']


def _written(path):
    """Whether ``path`` holds a trace with an operator (False while a dump writes it)."""
    try:
        return bool(_operator_events(_trace(path)))
    except (OSError, ValueError):
        return False


# -------------------------------------------------------------------------------------------------
# Statistics: MXNet's table and JSON
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('fmt', ['table', 'json'])
@pytest.mark.parametrize('sort_by', GEN.SORTS)
@pytest.mark.parametrize('ascending', [False, True])
def test_statistics_print_as_mxnet_prints_them(fmt, sort_by, ascending):
    """MXNet's numbers (its table shows integer microseconds exactly), printed by hybridlib in
    every layout and order, are MXNet's text byte for byte."""
    stats = _parse_table(TABLES['table-total-desc'], TABLES['counters'])
    expected = TABLES[f'{fmt}-{sort_by}-{"asc" if ascending else "desc"}']
    formatter = profiler._format_table if fmt == 'table' else profiler._format_json
    assert formatter(stats, sort_by, ascending) == expected


def test_statistics_of_the_session_have_mxnets_rows(tmp_path):
    GEN.run_session(mx, str(tmp_path / 'profile.json'))
    ours = _parse_table(profiler.dumps(), GEN.COUNTERS)
    theirs = _parse_table(TABLES['table-total-desc'], GEN.COUNTERS)

    def counts(stats):
        return {category: {name: row[1] for name, row in rows.items()
                           if name not in GEN.INTERNAL} for category, rows in stats.items()}
    assert list(ours) == list(theirs)
    assert counts(ours) == counts(theirs)
    counter = ours['session']['steps']      # 5, 8, 7, 10: its last value, min, max
    assert counter == [profiler._COUNTER, 4, 10, 5, 10]
    json.loads(profiler.dumps(format='json'))
    profiler.dumps(reset=True)
    assert profiler.dumps() == TABLES['after_reset']
    assert profiler.dumps(format='json') == TABLES['after_reset_json']


def test_statistics_need_aggregate_stats():
    assert profiler.dumps() == FACTS['dumps_before_config'] == ''
    with pytest.raises(MXNetError, match='Operation not permitted'):
        profiler.dumps(reset=True)
    for kwargs, key in [(dict(format='xml'), 'bad_format'), (dict(sort_by='name'), 'bad_sort')]:
        with pytest.raises(AssertionError) as info:
            profiler.dumps(**kwargs)
        assert [type(info.value).__name__, str(info.value)] == FACTS[key]


# -------------------------------------------------------------------------------------------------
# What is timed
# -------------------------------------------------------------------------------------------------

def test_imperative_calls_are_recorded_per_operator(tmp_path):
    path = str(tmp_path / 'profile.json')
    profiler.set_config(filename=path, aggregate_stats=True, continuous_dump=False)
    x, w, g = nd.ones((2, 3)), nd.ones((4,)), nd.ones((4,))
    profiler.set_state('run')
    for _ in range(3):
        nd.relu(x)
    nd.sgd_update(w, g, lr=0.1, out=w)      # written into out by its body
    x.attach_grad()
    with autograd.record():
        y = nd.sigmoid(x)
    before_backward = len(profiler._pending)
    y.backward()                            # the gradient's operators are operators too
    assert len(profiler._pending) > before_backward
    profiler.pause()
    nd.exp(x)
    profiler.resume()
    nd.tanh(x)
    profiler.set_state('stop')
    nd.log(x)
    rows = _parse_table(profiler.dumps())['operator']
    assert rows['relu'][1] == 3 and rows['sgd_update'][1] == 1 and rows['tanh'][1] == 1
    assert rows['sigmoid'][1] == 1
    assert 'exp' not in rows and 'log' not in rows      # paused, stopped
    profiler.dump()
    names = [e['name'] for e in _operator_events(_trace(path))]
    assert names[:4] == ['relu', 'relu', 'relu', 'sgd_update'] and names[-1] == 'tanh'


def _mlp():
    x = sym.var('x')
    hidden = sym.Activation(sym.FullyConnected(x, sym.var('w1'), sym.var('b1'), num_hidden=6,
                                               name='fc1'), act_type='relu', name='act')
    out = sym.FullyConnected(hidden, sym.var('w2'), sym.var('b2'), num_hidden=3, name='fc2')
    return sym.sum(sym.reshape(out, shape=(-1,), name='flat'), name='total')


def _mlp_arrays():
    rng = np.random.default_rng(0)
    shapes = dict(x=(4, 5), w1=(6, 5), b1=(6,), w2=(3, 6), b2=(3,))
    return [nd.array(rng.uniform(-1, 1, shapes[n])) for n in _mlp().list_inputs()]


def _code_operators(source):
    """The operator of each line of generated code that runs one (its ``# <op>`` comment)."""
    return re.findall(r'^    \S.* = .*  # (\S+)$', source, flags=re.M)


@pytest.mark.parametrize('static_alloc', [False, True])
def test_each_line_of_a_compiled_graph_is_an_event(tmp_path, static_alloc):
    path = str(tmp_path / 'profile.json')
    profiler.set_config(filename=path, profile_imperative=False, continuous_dump=False)
    op = CachedOp(_mlp(), {'static_alloc': static_alloc})
    arrays = _mlp_arrays()
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        expected_out = op(*arrays)[0]
    expected_out.backward()
    expected_grads = [a.grad.asnumpy() for a in arrays]
    plan = op._last[1]
    forward, backward = plan.code.split('\n\n\n')
    profiler.set_state('run')
    with autograd.record():
        out = op(*arrays)[0]
    out.backward()
    profiler.set_state('stop')
    profiler.dump()
    names = [e['name'] for e in _operator_events(_trace(path))]
    assert names == _code_operators(forward) + _code_operators(backward)
    assert 'Reshape' in names and plan.code == forward + '\n\n\n' + backward
    # the timed variant computes what the plain one does
    assert out.asnumpy() == pytest.approx(expected_out.asnumpy())
    for a, g in zip(arrays, expected_grads):
        np.testing.assert_allclose(a.grad.asnumpy(), g, rtol=1e-6)
    assert plan.timed_code.count('_record(') == len(names)
    assert _code_operators(plan.timed_code) == names


def test_switches_choose_what_is_timed(tmp_path):
    op = CachedOp(_mlp())
    arrays = _mlp_arrays()
    for kwargs, expected in [(dict(profile_symbolic=False), {'relu'}),
                             (dict(profile_imperative=False), {'FullyConnected', 'Activation',
                                                               'Reshape', 'sum'}),
                             (dict(profile_symbolic=False, profile_imperative=False,
                                   profile_all=True),
                              {'relu', 'FullyConnected', 'Activation', 'Reshape', 'sum'})]:
        path = str(tmp_path / 'profile.json')
        profiler.set_config(filename=path, continuous_dump=False, **kwargs)
        profiler.set_state('run')
        op(*arrays)
        nd.relu(arrays[0])
        profiler.set_state('stop')
        profiler.dump()
        assert {e['name'] for e in _operator_events(_trace(path))} == expected, kwargs


# -------------------------------------------------------------------------------------------------
# A stopped profiler costs nothing
# -------------------------------------------------------------------------------------------------

_CODE_SCRIPT = '''
import numpy as np
from hybridlib import autograd, nd, sym
from hybridlib.cached_op import CachedOp
x = sym.var('x')
h = sym.Activation(sym.FullyConnected(x, sym.var('w'), sym.var('b'), num_hidden=4, name='fc'),
                   act_type='relu', name='act')
op = CachedOp(sym.sum(sym.reshape(h, shape=(-1,), name='flat'), name='total'),
              {'static_alloc': True})
arrays = [nd.ones(s) for s in [(2, 3), (4, 3), (4,)]]
for a in arrays:
    a.attach_grad()
with autograd.record():
    out = op(*arrays)[0]
out.backward()
print(op.code)
'''


def test_stopped_profiler_leaves_generated_code_unchanged(tmp_path):
    """The code of a plan compiled after profiling is the code of a process in which the
    profiler was never used; neither holds any timing call."""
    never_used = subprocess.run([sys.executable, '-c', _CODE_SCRIPT], check=True,
                                capture_output=True, text=True).stdout
    profiler.set_config(filename=str(tmp_path / 'profile.json'), continuous_dump=False)
    profiler.set_state('run')
    namespace = {}
    exec(_CODE_SCRIPT.replace('print(op.code)', 'profiled = op'), namespace)  # noqa: S102
    profiler.set_state('stop')
    printed = []
    namespace['print'] = lambda text: printed.append(text + '\n')
    exec(_CODE_SCRIPT, namespace)    # noqa: S102 - the same script, profiler stopped
    assert printed == [never_used]
    for token in ('_clock', '_record', '_start'):
        assert token not in never_used
    assert namespace['profiled'].code == never_used[:-1]    # .code never shows the timing
    assert '_record(' in namespace['profiled']._last[1].timed_code


def test_stopped_profiler_does_no_work_on_the_hot_paths(monkeypatch, tmp_path):
    def forbidden(*args, **kwargs):
        raise AssertionError('profiling work with the profiler stopped')
    profiler.set_config(filename=str(tmp_path / 'profile.json'), continuous_dump=False)
    profiler.set_state('run')
    profiler.set_state('stop')
    assert not profiler.active.imperative and not profiler.active.symbolic
    for name in ('timed_call', 'clock', 'operator_timer'):
        monkeypatch.setattr(profiler, name, forbidden)
    monkeypatch.setattr(Plan, 'timed_forward', forbidden)
    monkeypatch.setattr(Plan, 'timed_backward', forbidden)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(4, activation='relu'), gluon.nn.Dense(2))
    net.initialize()
    net.hybridize(static_alloc=True)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    x = nd.ones((2, 3))
    for _ in range(2):
        with autograd.record():
            loss = nd.relu(net(x)).sum()
        loss.backward()
        trainer.step(2)
    nd.sgd_update(nd.ones((3,)), nd.ones((3,)), lr=0.1, out=nd.ones((3,)))
    assert profiler._pending == []


def test_profiled_resnet_training_step_is_covered_by_its_operators(tmp_path):
    """The operators' events of a hybridized ResNet training step (forward, loss, backward,
    optimizer updates) add up to the step's wall time within 10%. What they leave out is
    Python between operators: the tape and the Trainer's loop (the copy of the gradients into
    the parameters' buffers is timed, as ``_copyto``). The best of a few tries: this machine
    is shared."""
    net = vision.resnet18_v1(classes=10, thumbnail=True)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01,
                                                          'momentum': 0.9})
    x = nd.random.uniform(shape=(4, 3, 32, 32))
    label = nd.array([1, 3, 5, 7])

    def step():
        with autograd.record():
            loss = loss_fn(net(x), label)
        loss.backward()
        trainer.step(4)
        loss.wait_to_read()

    step()                                  # compile the plans
    path = str(tmp_path / 'profile.json')
    profiler.set_config(filename=path, continuous_dump=False)
    profiler.set_state('run')
    step()                                  # compile their timed variants
    tries = []
    for _ in range(5):
        start = time.perf_counter_ns()
        step()
        step()
        end = time.perf_counter_ns()
        profiler.dump(finished=False)
        # the trace's clock is time.perf_counter_ns, shown in microseconds
        events = [e for e in _operator_events(_trace(path))
                  if start / 1000 <= e['ts'] and e['ts'] + e['dur'] <= end / 1000]
        covered = sum(e['dur'] for e in events) * 1000 / (end - start)
        tries.append(round(covered, 3))
        if covered >= 0.9:
            break
    profiler.set_state('stop')
    names = {e['name'] for e in events}
    assert {'Convolution', 'BatchNorm', '_backward_Convolution_weight', 'sgd_mom_update',
            'log_softmax'} <= names
    assert 0.9 <= max(tries) <= 1.001, f'operators cover {tries} of the steps\' time'


# -------------------------------------------------------------------------------------------------
# The user's objects
# -------------------------------------------------------------------------------------------------

def test_domains_tasks_frames_events_counters_markers(tmp_path):
    path = str(tmp_path / 'profile.json')
    profiler.set_config(filename=path, aggregate_stats=True, continuous_dump=False)
    domain = profiler.Domain('app')
    assert str(domain) == 'app' and str(domain.new_task('t')) == 't'
    early = domain.new_task('before_run')   # configured but stopped: recorded, as in MXNet
    early.start()
    early.stop()
    profiler.set_state('run')
    outer, inner = domain.new_task('outer'), domain.new_task('inner')
    outer.start()
    inner.start()
    inner.stop()
    outer.stop()
    inner.stop()                            # without a start: nothing
    counter = profiler.Counter(domain, 'items', 2)
    counter += 5
    counter -= 3
    counter.decrement()
    profiler.pause()
    counter.increment(10)                   # kept, not recorded while paused
    hidden = profiler.Event('hidden')
    hidden.start()
    hidden.stop()
    profiler.resume()
    counter.increment()
    for scope in ('global', 'process', 'thread', 'task', 'marker'):
        domain.new_marker(f'm_{scope}').mark(scope)
    with pytest.raises(MXNetError) as info:
        domain.new_marker('m').mark('galaxy')
    assert 'MXNetError: ' + str(info.value) == FACTS['bad_marker_scope'][1]
    profiler.set_state('stop')
    rows = _parse_table(profiler.dumps(), ['items'])
    assert set(rows['app']) == {'before_run', 'outer', 'inner', 'items'}
    assert rows['app']['items'] == [profiler._COUNTER, 5, 14, 2, 14]
    assert rows['app,instant_marker'] == {} and 'event' not in rows
    profiler.dump()
    events = [e for e in _trace(path)['traceEvents'] if e['ph'] != 'M']
    ranges = [(e['name'], e['ph'], e['id']) for e in events if e['cat'] == 'app'
              and e['ph'] in 'be']
    ids = {name: i for name, _, i in ranges}
    assert [(n, p) for n, p, _ in ranges] == [('before_run', 'b'), ('before_run', 'e'),
                                              ('inner', 'b'), ('inner', 'e'), ('outer', 'b'),
                                              ('outer', 'e')]
    assert len(set(ids.values())) == 3
    values = [e['args']['items'] for e in events if e['ph'] == 'C']
    assert values == [2, 7, 4, 3, 14]
    scopes = [e['s'] for e in events if e['ph'] == 'i']
    assert scopes == ['g', 'p', 't', 'p', 'p']


# -------------------------------------------------------------------------------------------------
# Configuration and the API's edges, as MXNet
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('key, call', [
    ('unknown_key', lambda: profiler.set_config(bogus=1)),
    ('bad_boolean', lambda: profiler.set_config(profile_all='yes')),
    ('bad_float', lambda: profiler.set_config(dump_period='soon')),
    ('bad_choice', lambda: profiler.set_config(profile_process='Worker')),
])
def test_configuration_errors_are_mxnets(key, call):
    with pytest.raises(MXNetError) as info:
        call()
    assert 'MXNetError: ' + str(info.value) == FACTS[key][1]


def test_configuration_values_and_states():
    accepted = [v for v in ('true', 'True', 'FALSE', '1', '0', 'yes', '2', '')
                if _accepted(lambda: profiler.set_config(profile_all=v))]
    assert accepted == FACTS['booleans_accepted']
    with pytest.raises(KeyError) as info:
        profiler.set_state('go')
    assert str(info.value) == FACTS['bad_state'][1]
    with pytest.raises(MXNetError) as info:
        profiler.set_state('run', profile_process='server')
    assert ('MXNetError: ' + str(info.value)).startswith(FACTS['server_state'][1])
    with pytest.raises(MXNetError) as info:
        profiler.dump()
    assert 'MXNetError: ' + str(info.value) == FACTS['dump_before_run'][1]
    assert repr(profiler.profiler_kvstore_handle) == FACTS['kvstore_handle']
    profiler.set_kvstore_handle('handle')
    assert profiler.profiler_kvstore_handle == 'handle'
    profiler.set_kvstore_handle(profiler.ctypes.c_void_p())


def _accepted(call):
    try:
        call()
    except MXNetError:
        return False
    return True


def test_deprecated_functions_warn_as_mxnet(tmp_path):
    x = nd.ones((2,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        profiler.profiler_set_config(mode='all', filename=str(tmp_path / 'old.json'))
        profiler.profiler_set_state('run')
        nd.relu(x)
        profiler.profiler_set_state('stop')
        profiler.dump_profile()
    assert [[w.category.__name__, str(w.message)] for w in caught] == \
        FACTS['deprecation_warnings']
    assert [e['name'] for e in _operator_events(_trace(tmp_path / 'old.json'))] == ['relu']
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with pytest.raises(MXNetError) as info:
            profiler.profiler_set_config(mode='everything')
    assert 'MXNetError: ' + str(info.value) == FACTS['bad_mode'][1]
