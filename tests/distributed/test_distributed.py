"""Distributed training across processes: ``python -m hybridlib.launch -n 2`` on this machine,
with the ``dist`` extra (mpi4py and MPICH); skipped without it.

Every distributed way of training (the ``dist_sync``, ``dist_device_sync`` and ``horovod``
KVStores, ``horovod.mxnet``'s DistributedTrainer and DistributedOptimizer) trains an MLP and a
small CNN for 20 steps, each worker taking half of every batch, and must end with the weights
of one process trained on the whole batches; a worker that dies, raises or builds another
model makes the job fail, naming it, in bounded time.
"""
import importlib.util
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import dist, kvstore, launch as launcher
from hybridlib.base import MXNetError, NotSupportedError

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, 'worker.py')

needs_mpi = pytest.mark.skipif(
    importlib.util.find_spec('mpi4py') is None,
    reason="needs the dist extra (pip install 'hybridlib[dist]')")


def launch(script, *args, timeout=120, hosts=None, env=None):
    """``python -m hybridlib.launch -n 2 [--hosts HOSTS] SCRIPT ARGS`` with ``env`` added to
    the environment: (the finished run, its seconds)."""
    start = time.monotonic()
    where = ['--hosts', hosts] if hosts else []
    done = subprocess.run([sys.executable, '-m', 'hybridlib.launch', '-n', '2', *where, script]
                          + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})
    return done, time.monotonic() - start


def succeeds(script, *args, **options):
    """Run ``script`` on two workers (``launch``'s options); it must exit 0."""
    done, _ = launch(os.path.join(HERE, script), *args, **options)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


def weights(out, kind, rank):
    return np.load(os.path.join(out, f'{kind}-{rank}.npy'))


def assert_trained_as_one(out, kind, expected):
    """Both workers hold the same weights, those of one process (``expected``). They started
    apart (each its own seed), so what they share came from rank 0."""
    first, second = weights(out, kind, 0), weights(out, kind, 1)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, expected, rtol=1e-5, atol=1e-6)


def placements(out, kind):
    """Each worker's [local rank, local size, cross rank, cross size], by rank."""
    return [np.load(os.path.join(out, f'{kind}-{rank}-placement.npy')).tolist()
            for rank in (0, 1)]


@pytest.fixture(scope='module')
def single(tmp_path_factory):
    """The weights of one process trained on the whole batches, per model."""
    out = tmp_path_factory.mktemp('single')
    result = {}
    for name in ('mlp', 'cnn'):
        done = subprocess.run([sys.executable, '-m', 'hybridlib', WORKER, name, 'single',
                               out], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        result[name] = weights(out, 'single', 0)
    return result


@needs_mpi
@pytest.mark.parametrize('kind', ['dist_sync', 'dist_device_sync', 'horovod', 'hvd_trainer',
                                  'hvd_optimizer'])
@pytest.mark.parametrize('name', ['mlp', 'cnn'])
def test_two_workers_train_as_one_process(single, tmp_path, name, kind):
    succeeds('worker.py', name, kind, tmp_path)
    assert_trained_as_one(tmp_path, kind, single[name])
    assert placements(tmp_path, kind) == [[0, 2, 0, 1], [1, 2, 0, 1]]   # one machine, shared


@needs_mpi
@pytest.mark.parametrize('kind', ['dist_sync', 'hvd_trainer'])
def test_two_hosts_train_as_one_process(single, tmp_path, kind):
    # two names of this machine: MPI places one worker on each as on two machines, and UCX
    # (MPICH's network module) is kept to TCP, over loopback, instead of shared memory
    done, _ = launch(WORKER, 'cnn', kind, tmp_path, hosts='localhost,127.0.0.1',
                     env={'UCX_TLS': 'tcp,self'})
    assert done.returncode == 0, done.stderr[-3000:]
    assert 'not matched' not in done.stderr, done.stderr[-3000:]    # no message unreceived
    assert_trained_as_one(tmp_path, kind, single['cnn'])
    assert placements(tmp_path, kind) == [[0, 1, 0, 2], [0, 1, 1, 2]]   # a machine each


@needs_mpi
@pytest.mark.parametrize('kind', ['dist_sync', 'dist_device_sync', 'horovod'])
def test_kvstore_interface_across_workers(tmp_path, kind):
    succeeds('kvstore_api.py', kind, tmp_path / 'states')


@needs_mpi
def test_module_fit_with_dist_sync_trains_as_one_process(tmp_path):
    script = os.path.join(HERE, 'module_fit.py')
    single = subprocess.run([sys.executable, script, 'single', tmp_path], capture_output=True,
                            text=True, timeout=120)
    assert single.returncode == 0, single.stderr[-3000:]
    succeeds('module_fit.py', 'dist_sync', tmp_path)
    assert_trained_as_one(tmp_path, 'dist_sync', weights(tmp_path, 'single', 0))


@needs_mpi
def test_horovod_collectives_across_workers():
    succeeds('horovod_api.py')


@needs_mpi
@pytest.mark.parametrize('hosts', [None, 'localhost,127.0.0.1'])
def test_a_killed_worker_stops_the_job_and_is_named(tmp_path, hosts):
    # with --hosts, MPI names the dead worker's host as given (127.0.0.1), not by its name
    done, seconds = launch(WORKER, 'mlp', 'dist_sync', tmp_path, 'kill', timeout=90,
                           hosts=hosts)
    assert done.returncode != 0
    assert seconds < 60
    assert 'worker rank 1 (pid' in done.stderr, done.stdout[-2000:] + done.stderr[-2000:]


@needs_mpi
def test_an_exception_in_a_worker_stops_the_job_with_its_traceback(tmp_path):
    done, seconds = launch(WORKER, 'mlp', 'hvd_trainer', tmp_path, 'raise', timeout=90)
    assert done.returncode != 0
    assert seconds < 60
    assert 'worker rank 1 raised RuntimeError: worker 1 fails at step 5' in done.stderr


@needs_mpi
@pytest.mark.parametrize('fault', ['exit', 'short'])
def test_a_worker_that_leaves_early_stops_the_others_waiting_for_it(tmp_path, fault):
    # sys.exit(3) at step 5, or a normal end one step before the others: MPI alone would
    # leave them waiting in the sum of the next step forever
    done, seconds = launch(WORKER, 'mlp', 'dist_sync', tmp_path, fault, timeout=90)
    assert done.returncode != 0
    assert seconds < 60
    assert 'worker rank 0 raised' in done.stderr and 'worker rank 1 left the job' in \
        done.stderr, done.stderr[-3000:]


@needs_mpi
def test_a_worker_may_go_on_alone_after_the_others_end(tmp_path):
    # rank 0 evaluates or saves after the last step, longer than a collective's grace
    script = tmp_path / 'alone.py'
    script.write_text(
        'import time\nfrom hybridlib import dist, nd\n'
        'world = dist.world()\nx = nd.ones((4,))\nworld.allreduce_([x])\nworld.barrier()\n'
        'if world.rank == 0:\n'
        f'    time.sleep({dist._LEFT_GRACE} + 1)\n    print("rank 0 done", x.sum().asscalar())\n')
    done, _ = launch(str(script))
    assert done.returncode == 0 and 'rank 0 done 8.0' in done.stdout, done.stderr[-3000:]


@needs_mpi
def test_a_worker_away_from_the_launchers_folder_runs_and_stops_the_job(tmp_path):
    # as on another machine than the launcher's, where the run's folder does not exist
    cmd = launcher.command(2, [WORKER, 'mlp', 'dist_sync', tmp_path, 'raise'])
    start = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=90,
                          env={**os.environ, dist.LAUNCH_FOLDER: str(tmp_path / 'elsewhere')})
    assert done.returncode != 0
    assert time.monotonic() - start < 60
    assert 'worker rank 1 of 2 failed' in done.stderr, done.stderr[-3000:]
    assert 'RuntimeError: worker 1 fails at step 5' in done.stderr


@needs_mpi
@pytest.mark.parametrize('kind', ['dist_sync', 'hvd_trainer'])
@pytest.mark.parametrize('fault, differs', [('shape', "of shape (5,)"),
                                            ('name', "rank 1 has 'dense1_")])
def test_workers_that_disagree_on_the_model_fail_at_init(tmp_path, kind, fault, differs):
    done, seconds = launch(WORKER, 'cnn', kind, tmp_path, fault, timeout=90)
    assert done.returncode != 0
    assert seconds < 60
    message = done.stderr
    assert 'the workers disagree on' in message, message[-3000:]
    assert 'rank 1 has' in message and 'where rank 0 has' in message and differs in message


def test_launch_command_line(monkeypatch):
    monkeypatch.setattr(launcher, '_is_open_mpi', lambda launcher: False)
    assert launcher.command(3, ['train.py', '--lr', '1'], hosts='a,b', launcher='mpiexec') == [
        'mpiexec', '-n', '3', '-hosts', 'a,b', sys.executable, '-m', 'hybridlib.launch',
        '--worker', 'train.py', '--lr', '1']
    monkeypatch.setattr(launcher, '_is_open_mpi', lambda launcher: True)
    cmd = launcher.command(2, ['-m', 'pkg'], hosts='a,b', launcher='mpirun')
    assert cmd[:3] == ['mpirun', '-n', '2'] and ['--host', 'a,b'] == cmd[-8:-6]
    assert '--oversubscribe' in cmd and cmd[-2:] == ['-m', 'pkg']
    for bad in (['-n', '0', 'x.py'], ['-n', 'two', 'x.py'], ['--bogus', 'x.py'], ['-n', '2']):
        with pytest.raises(SystemExit):
            launcher._parse(bad)
    assert launcher._parse(['-n', '2', '--hosts=h1,h2', 'x.py', '-n', '5']) == \
        (2, 'h1,h2', ['x.py', '-n', '5'])


@needs_mpi
def test_launch_runs_code_and_reports_usage(tmp_path):
    done = subprocess.run([sys.executable, '-m', 'hybridlib.launch', '-n', '2', '-c',
                           'import sys, hybridlib.horovod as hvd; hvd.init(); '
                           'open(f"{sys.argv[1]}/{hvd.rank()}", "w").write(str(hvd.size()))',
                           tmp_path], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {'0': '2', '1': '2'}
    usage = subprocess.run([sys.executable, '-m', 'hybridlib.launch', WORKER],
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode != 0 and 'usage: python -m hybridlib.launch -n N' in usage.stderr


needs_gpu = pytest.mark.skipif(not importlib.util.find_spec('cupy') or mx.num_gpus() == 0,
                               reason='needs a GPU and cupy')


@needs_mpi
@needs_gpu
def test_gpu_arrays_across_two_workers_on_one_device():
    succeeds('gpu_api.py', timeout=300)


@needs_mpi
@needs_gpu
def test_nccl_communicator_of_one_worker():
    """The machines lent have one GPU: NCCL's calls run as a communicator of size one."""
    world = dist.world()
    assert world.size == 1
    group = world.nccl(mx.gpu(0))
    assert group is not None
    with mx.gpu(0).device_scope():
        x = mx.nd.arange(6, ctx=mx.gpu(0)) + 1
        group.run(x._data, 'allreduce')
        np.testing.assert_array_equal(x.asnumpy(), np.arange(6) + 1)
        group.run(x._data, 'broadcast', 0)
        np.testing.assert_array_equal(x.asnumpy(), np.arange(6) + 1)
        with pytest.raises(MXNetError, match='NCCL cannot reduce bool'):
            group.run(x._data > 2, 'allreduce')


def test_dist_async_names_the_synchronous_types():
    with pytest.raises(NotSupportedError, match='dist_sync, dist_device_sync'):
        kvstore.create('dist_async')
    with pytest.raises(MXNetError, match='Unknown KVStore type'):
        kvstore.create('dist_nonsense')
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    with pytest.raises(NotSupportedError, match='asynchronous'):       # at once, not at a step
        mx.gluon.Trainer(net.collect_params(), 'sgd', kvstore='dist_async')


def test_mxnets_parameter_servers_are_refused():
    # its servers and scheduler would otherwise run the training script, and each worker
    # would train alone
    for role in ('server', 'scheduler'):
        done = subprocess.run([sys.executable, '-c', 'import hybridlib'], capture_output=True,
                              text=True, timeout=60, env={**os.environ, 'DMLC_ROLE': role})
        assert done.returncode == 1
        assert f'DMLC_ROLE={role}' in done.stderr and 'hybridlib.launch -n N' in done.stderr


@needs_mpi
def test_a_worker_of_mxnets_parameter_server_launch_is_refused(monkeypatch):
    monkeypatch.setenv('DMLC_ROLE', 'worker')
    monkeypatch.setenv('DMLC_NUM_WORKER', '2')
    with pytest.raises(MXNetError, match=r'DMLC_NUM_WORKER=2\) but is one of 1'):
        kvstore.create('dist_sync')
    monkeypatch.setenv('DMLC_NUM_WORKER', '1')
    assert kvstore.create('dist_sync').num_workers == 1


def test_missing_mpi4py_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, 'mpi4py', None)
    with pytest.raises(ImportError, match=r"pip install 'hybridlib\[dist\]'"):
        dist._mpi()


def test_laid_out_gradients_are_summed_where_they_lie():
    a, b = mx.nd.array(np.arange(6.).reshape(2, 3)), mx.nd.array(np.arange(4.))
    lone = mx.nd.array(np.ones(3))
    flat, in_place = dist._pack([a, b], 1.0, lay_out=True)
    assert in_place and a._data.base is flat and b._data.base is flat
    np.testing.assert_array_equal(flat, np.r_[np.arange(6.), np.arange(4.)])
    again, in_place = dist._pack([a, b], 2.0)             # later calls: no copy
    assert again is flat and in_place
    np.testing.assert_array_equal(b.asnumpy(), np.arange(4.) * 2)
    assert dist._laid_out([b, a]) is None                 # another order is another layout
    assert dist._laid_out([a, lone]) is None
    b._data = b._data.copy()                              # a gradient reallocated: copied again
    assert dist._laid_out([a, b]) is None
    assert dist._pack([a, b], 1.0)[1] is False
    view = mx.nd.array(np.zeros(8))[2:6]                  # a view of another array stays one
    dist._pack([view, lone], 1.0, lay_out=True)
    assert dist._laid_out([view, lone]) is None


def test_a_hybridized_backward_writes_into_laid_out_gradients(monkeypatch):
    given = []

    def spy(*args):
        given.append(cached_op_targets(*args))
        return given[-1]
    cached_op_targets = mx.cached_op._grad_targets_given
    monkeypatch.setattr(mx.cached_op, '_grad_targets_given', spy)

    def net():
        mx.random.seed(3)
        n = mx.gluon.nn.HybridSequential()
        n.add(mx.gluon.nn.Dense(5, activation='relu', in_units=3), mx.gluon.nn.Dense(2, in_units=5))
        n.initialize()
        n.hybridize()
        return n
    x = mx.nd.array(np.random.default_rng(0).standard_normal((4, 3)))
    plain, laid = net(), net()
    for n in (plain, laid):
        n(x)
    grads = [p.grad() for p in laid.collect_params().values()]
    flat, _ = dist._pack(grads, 1.0, lay_out=True)
    for _ in range(2):                  # the second backward finds its targets laid out
        for n in (plain, laid):
            with mx.autograd.record():
                loss = (n(x) ** 2).sum()
            loss.backward()
        expected = np.concatenate([p.grad().asnumpy().ravel()
                                   for p in plain.collect_params().values()])
        np.testing.assert_allclose(flat, expected, rtol=1e-6)
        assert all(g._data.base is flat for g in grads)
    # computed in place: the last backward's targets are the laid-out gradients themselves
    assert {id(t) for t in given[-1] if t is not None} == {id(g._data) for g in grads}
