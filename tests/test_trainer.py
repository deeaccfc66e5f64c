"""``gluon.Trainer`` and ``mx.kv``: MXNet 1.9.1's numbers, the same steps done by hand, stale
gradients, several contexts, states files, and the KVStore on its own."""
import json
import pathlib

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd
from hybridlib.base import MXNetError, NotSupportedError
from hybridlib.gluon import nn

DATA = pathlib.Path(__file__).parent / 'data' / 'optimizer.json'
CTX2 = [mx.cpu(0), mx.cpu(1)]


def _array(t):
    return np.array(t['data'], dtype=np.float64).reshape(t['shape']).astype(t['dtype'])


def _dense(ctx, seed=0, prefix='dense_'):
    """Dense(2, in_units=3) with fixed weights on the context(s) ``ctx``."""
    rng = np.random.default_rng(seed)
    net = nn.Dense(2, in_units=3, prefix=prefix)
    net.initialize(ctx=ctx)
    net.weight.set_data(nd.array(rng.uniform(-1, 1, (2, 3))))
    net.bias.set_data(nd.array(rng.uniform(-1, 1, (2,))))
    return net


def _batches(n, seed=1, size=4):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-1, 1, (size, 3)), rng.uniform(-1, 1, (size, 2))) for _ in range(n)]


def _train(net, trainer, batches, contexts):
    """Split each batch over ``contexts``, backward, ``trainer.step(batch size)``."""
    for x, y in batches:
        parts = np.array_split(np.arange(len(x)), len(contexts))
        with autograd.record():
            losses = [((net(nd.array(x[p], ctx=c)) - nd.array(y[p], ctx=c)) ** 2).sum()
                      for p, c in zip(parts, contexts)]
        for loss in losses:
            loss.backward()
        trainer.step(len(x))


def _values(net, ctx=None):
    return [p.data(ctx).asnumpy() for p in net.collect_params().values()]


# -------------------------------------------------------------------------------------------------
# MXNet's numbers and the same steps by hand
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('entry', json.loads(DATA.read_text())['trainer'],
                         ids=lambda e: f"{e['optimizer']}-{e['contexts']}ctx")
def test_against_mxnet(entry):
    contexts = CTX2[:entry['contexts']]
    net = nn.Dense(2, in_units=3, prefix='dense_')
    net.initialize(ctx=contexts)
    net.weight.set_data(nd.array(_array(entry['weight'])))
    net.bias.set_data(nd.array(_array(entry['bias'])))
    trainer = gluon.Trainer(net.collect_params(), entry['optimizer'],
                            entry['optimizer_params'],
                            update_on_kvstore=entry['update_on_kvstore'])
    for (x, y), after in zip(entry['batches'], entry['after']):
        _train(net, trainer, [(_array(x), _array(y))], contexts)
        for ctx in contexts:
            np.testing.assert_allclose(net.weight.data(ctx).asnumpy(), _array(after['weight']),
                                       rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(net.bias.data(ctx).asnumpy(), _array(after['bias']),
                                       rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('hybridize', [False, True])
def test_matches_steps_by_hand(hybridize):
    net = nn.HybridSequential(prefix='net_')
    with net.name_scope():
        net.add(nn.Dense(4, in_units=3, activation='tanh'), nn.Dense(2, in_units=4))
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    params = net.collect_params()
    params['net_dense1_bias'].lr_mult = 0.5
    params['net_dense0_weight'].wd_mult = 3.0
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.2, 'momentum': 0.8, 'wd': 0.01})
    names = sorted(params.keys())
    weights = {n: params[n].data().asnumpy().astype(np.float64) for n in names}
    moms = {n: np.zeros_like(w) for n, w in weights.items()}
    for x, y in _batches(3, size=5):
        with autograd.record():
            loss = ((net(nd.array(x)) - nd.array(y)) ** 2).sum()
        loss.backward()
        grads = {n: params[n].grad().asnumpy().astype(np.float64) for n in names}
        trainer.step(5)
        for n in names:
            lr = 0.2 * params[n].lr_mult
            wd = 0.01 * params[n].wd_mult
            moms[n] = 0.8 * moms[n] - lr * wd * weights[n] - lr * grads[n] / 5
            weights[n] = weights[n] + moms[n]
            np.testing.assert_allclose(params[n].data().asnumpy(), weights[n], rtol=1e-5,
                                       atol=1e-6)
    assert trainer.optimizer.num_update == 3


# -------------------------------------------------------------------------------------------------
# Stale gradients
# -------------------------------------------------------------------------------------------------

class _TwoHeads(gluon.Block):
    def __init__(self):
        super().__init__(prefix='two_')
        with self.name_scope():
            self.a = nn.Dense(2, in_units=3)
            self.b = nn.Dense(2, in_units=3)

    def forward(self, x, use_b=True):
        return self.a(x) + self.b(x) if use_b else self.a(x)


def _stale_setup():
    net = _TwoHeads()
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
    x = nd.ones((2, 3))
    with autograd.record():
        loss = net(x, False).sum()
    loss.backward()
    return net, trainer, x


def test_stale_gradient_raises_before_any_update():
    net, trainer, _ = _stale_setup()
    before = _values(net)
    with pytest.raises(UserWarning) as info:
        trainer.step(1)
    assert str(info.value) == (
        'Gradient of Parameter `two_dense1_bias` on context cpu(0) has not been updated by '
        'backward since last `step`. This could mean a bug in your model that made it only '
        'use a subset of the Parameters (Blocks) for this iteration. If you are intentionally '
        'only using a subset, call step with ignore_stale_grad=True to suppress this warning '
        'and skip updating of Parameters with stale gradient')
    for a, b in zip(_values(net), before):
        np.testing.assert_array_equal(a, b)


def test_ignore_stale_grad_skips_stale_parameters():
    net, trainer, x = _stale_setup()
    before = dict(zip(sorted(net.collect_params().keys()), _values(net)))
    trainer.step(1, ignore_stale_grad=True)
    after = dict(zip(sorted(net.collect_params().keys()), _values(net)))
    assert not np.allclose(after['two_dense0_weight'], before['two_dense0_weight'])
    np.testing.assert_array_equal(after['two_dense1_weight'], before['two_dense1_weight'])
    # the used parameters are stale now too, until the next backward
    with pytest.raises(UserWarning, match='two_dense0_bias'):
        trainer.step(1)
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(1)


@pytest.mark.parametrize('update_on_kvstore', [True, False])
def test_stale_gradient_on_two_contexts(update_on_kvstore):
    net = _dense(CTX2)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1},
                            update_on_kvstore=update_on_kvstore)
    _train(net, trainer, _batches(1), CTX2)
    with autograd.record():
        loss = net(nd.ones((1, 3), ctx=mx.cpu(1))).sum()
    loss.backward()          # only cpu(1)'s copies are fresh
    with pytest.raises(UserWarning, match='on context cpu\\(0\\) has not been updated'):
        trainer.step(1)


# -------------------------------------------------------------------------------------------------
# Several contexts
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('kvstore, update_on_kvstore', [('device', None), ('device', False),
                                                        ('local', True)])
@pytest.mark.parametrize('optimizer, params', [('sgd', {'learning_rate': 0.1, 'momentum': 0.9}),
                                               ('adam', {'learning_rate': 0.05})])
def test_two_contexts_sum_gradients(kvstore, update_on_kvstore, optimizer, params):
    batches = _batches(3)
    single = _dense(mx.cpu(0))
    _train(single, gluon.Trainer(single.collect_params(), optimizer, params), batches,
           [mx.cpu(0)])
    double = _dense(CTX2)
    trainer = gluon.Trainer(double.collect_params(), optimizer, params, kvstore=kvstore,
                            update_on_kvstore=update_on_kvstore)
    _train(double, trainer, batches, CTX2)
    expected_on_kv = True if update_on_kvstore is None else update_on_kvstore
    assert trainer._kvstore.type == kvstore and trainer._update_on_kvstore is expected_on_kv
    for ctx in CTX2:
        for a, b in zip(_values(double, ctx), _values(single)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_allreduce_grads_then_update():
    net = _dense(CTX2)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1},
                            update_on_kvstore=False)
    x, y = _batches(1)[0]
    with autograd.record():
        losses = [((net(nd.array(x[p], ctx=c)) - nd.array(y[p], ctx=c)) ** 2).sum()
                  for p, c in zip(([0, 1], [2, 3]), CTX2)]
    for loss in losses:
        loss.backward()
    separate = [g.asnumpy() for g in net.weight.list_grad()]
    trainer.allreduce_grads()
    for g in net.weight.list_grad():
        np.testing.assert_allclose(g.asnumpy(), separate[0] + separate[1], rtol=1e-6)
    for g in net.weight.list_grad():      # e.g. clip the summed gradients here
        g[:] = g * 0.5
    before = net.weight.data().asnumpy()
    trainer.update(4)
    np.testing.assert_allclose(net.weight.data(mx.cpu(1)).asnumpy(),
                               before - 0.1 * (separate[0] + separate[1]) * 0.5 / 4, rtol=1e-5)


def test_allreduce_and_update_refused_on_kvstore():
    net = _dense(CTX2)
    trainer = gluon.Trainer(net.collect_params(), 'sgd')
    with pytest.raises(AssertionError, match='allreduce_grads\\(\\) when parameters are upd'):
        trainer.allreduce_grads()
    with pytest.raises(AssertionError, match='update\\(\\) when parameters are updated'):
        trainer.update(1)


def test_set_data_resets_the_kvstore():
    net = _dense(CTX2)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    _train(net, trainer, _batches(1), CTX2)
    net.weight.set_data(nd.zeros((2, 3)))
    assert not trainer._kv_initialized
    with autograd.record():
        losses = [net(nd.zeros((1, 3), ctx=c)).sum() for c in CTX2]
    for loss in losses:
        loss.backward()
    trainer.step(1)
    for ctx in CTX2:      # zero input: the weight's gradient is 0, it stays at the new value
        np.testing.assert_array_equal(net.weight.data(ctx).asnumpy(), np.zeros((2, 3)))


def test_compression_params():
    net = _dense(mx.cpu(0))
    trainer = gluon.Trainer(net.collect_params(), 'sgd',
                            compression_params={'type': '2bit', 'threshold': 0.5})
    _train(net, trainer, _batches(1), [mx.cpu(0)])      # one context: no store, as MXNet
    net = _dense(CTX2)
    trainer = gluon.Trainer(net.collect_params(), 'sgd',
                            compression_params={'type': '2bit', 'threshold': 0.5})
    with pytest.raises(NotSupportedError, match='gradient compression'):
        _train(net, trainer, _batches(1), CTX2)


# -------------------------------------------------------------------------------------------------
# States files
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('contexts, update_on_kvstore', [([mx.cpu(0)], None), (CTX2, None),
                                                         (CTX2, False)])
def test_save_load_states(tmp_path, contexts, update_on_kvstore):
    batches = _batches(4)
    params = {'learning_rate': 0.05, 'beta1': 0.8}
    straight = _dense(contexts)
    _train(straight, gluon.Trainer(straight.collect_params(), 'adam', params,
                                   update_on_kvstore=update_on_kvstore), batches, contexts)
    net = _dense(contexts)
    trainer = gluon.Trainer(net.collect_params(), 'adam', params,
                            update_on_kvstore=update_on_kvstore)
    _train(net, trainer, batches[:2], contexts)
    path = str(tmp_path / 'trainer.states')
    trainer.save_states(path)
    assert '__hybridlib_states__' in nd.load(path)
    # a new Trainer (another optimizer and learning rate) restores Adam and its moments
    resumed = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 9.0},
                            update_on_kvstore=update_on_kvstore)
    resumed.load_states(path)
    assert isinstance(resumed.optimizer, mx.optimizer.Adam)
    assert resumed.optimizer.num_update == 2 and resumed.learning_rate == 0.05
    assert resumed.optimizer.param_dict[0] is net.bias
    _train(net, resumed, batches[2:], contexts)
    for ctx in contexts:
        for a, b in zip(_values(net, ctx), _values(straight, ctx)):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_load_mxnet_pickle_is_refused(tmp_path):
    path = tmp_path / 'mxnet.states'
    path.write_bytes(b'\x80\x03}q\x00.')
    trainer = gluon.Trainer(_dense(mx.cpu(0)).collect_params(), 'sgd')
    with pytest.raises(NotSupportedError, match='pickle'):
        trainer.load_states(str(path))


# -------------------------------------------------------------------------------------------------
# Construction, learning rate, parameters
# -------------------------------------------------------------------------------------------------

def test_parameters_and_arguments():
    net = _dense(mx.cpu(0))
    params = net.collect_params()
    for given in (params, dict(params.items()), [net.weight, net.bias]):
        trainer = gluon.Trainer(given, 'sgd')
        assert [p.name for p in trainer._params] in (['dense_bias', 'dense_weight'],
                                                     ['dense_weight', 'dense_bias'])
    assert [p.name for p in gluon.Trainer(params, 'sgd')._params] == ['dense_bias',
                                                                      'dense_weight']
    with pytest.raises(ValueError, match='First argument must be a list or dict of Parameters'):
        gluon.Trainer(net.weight, 'sgd')
    with pytest.raises(ValueError, match='got list of'):
        gluon.Trainer([net.weight, 'x'], 'sgd')
    with pytest.raises(AssertionError, match='optimizer_params must be None'):
        gluon.Trainer(params, mx.optimizer.SGD(), {'learning_rate': 0.1})
    other = _dense(CTX2, prefix='other_')
    with pytest.raises(AssertionError, match='same set of contexts'):
        gluon.Trainer([net.weight, other.weight], 'sgd')
    with pytest.raises(TypeError, match='kvstore must be KVStore, str or None'):
        gluon.Trainer(other.collect_params(), 'sgd', kvstore=3).step(1)
    assert gluon.Trainer.__module__ == 'hybridlib.trainer'


def test_learning_rate_and_scheduler():
    net = _dense(mx.cpu(0))
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.3})
    assert trainer.learning_rate == 0.3
    trainer.set_learning_rate(0.1)
    assert trainer.learning_rate == 0.1 and trainer.optimizer.lr == 0.1
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'lr_scheduler': sched})
    _train(net, trainer, _batches(3), [mx.cpu(0)])
    assert trainer.learning_rate == 0.25
    with pytest.raises(UserWarning, match='LRScheduler of the optimizer'):
        trainer.set_learning_rate(0.1)


def test_optimizer_instance_gets_the_parameters():
    net = _dense(mx.cpu(0))
    sgd = mx.optimizer.SGD(learning_rate=0.1)
    trainer = gluon.Trainer(net.collect_params(), sgd)
    assert trainer.optimizer is sgd and sgd.param_dict == {0: net.bias, 1: net.weight}
    net.bias.lr_mult = 0.0
    before = net.bias.data().asnumpy()
    _train(net, trainer, _batches(1), [mx.cpu(0)])
    np.testing.assert_array_equal(net.bias.data().asnumpy(), before)


def test_null_and_add_grad_req():
    net = _dense(mx.cpu(0))
    net.bias.grad_req = 'null'
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    bias = net.bias.data().asnumpy()
    _train(net, trainer, _batches(1), [mx.cpu(0)])
    np.testing.assert_array_equal(net.bias.data().asnumpy(), bias)
    net.weight.grad_req = 'add'
    net.weight.zero_grad()
    x, y = _batches(1)[0]
    for _ in range(2):
        with autograd.record():
            loss = ((net(nd.array(x)) - nd.array(y)) ** 2).sum()
        loss.backward()
    grad = net.weight.grad().asnumpy()
    before = net.weight.data().asnumpy()
    trainer.step(4)
    np.testing.assert_allclose(net.weight.data().asnumpy(), before - 0.1 * grad / 4, rtol=1e-5)


def test_deferred_initialization():
    net = nn.Dense(2)
    net.initialize(ctx=CTX2)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    _train(net, trainer, _batches(2), CTX2)
    for a, b in zip(_values(net, mx.cpu(0)), _values(net, mx.cpu(1))):
        np.testing.assert_array_equal(a, b)


def test_multi_precision_float16_net():
    net = _dense(mx.cpu(0))
    net.cast('float16')
    trainer = gluon.Trainer(net.collect_params(), 'sgd',
                            {'learning_rate': 0.1, 'momentum': 0.9, 'multi_precision': True})
    x, y = _batches(1)[0]
    with autograd.record():
        loss = ((net(nd.array(x, dtype='float16')) - nd.array(y, dtype='float16')) ** 2).sum()
    loss.backward()
    trainer.step(4)
    state = trainer._updaters[0].states[1]          # weight: (momentum, master copy)
    assert net.weight.data().dtype == np.float16 and state[1].dtype == np.float32
    np.testing.assert_array_equal(net.weight.data().asnumpy(),
                                  state[1].asnumpy().astype(np.float16))


# -------------------------------------------------------------------------------------------------
# The KVStore
# -------------------------------------------------------------------------------------------------

def test_kvstore_push_pull():
    kv = mx.kv.create('device')
    assert (kv.type, kv.rank, kv.num_workers) == ('device', 0, 1)
    assert kv.is_capable('optimizer')
    a = nd.ones((2, 3))
    kv.init(3, a * 2)
    out = nd.zeros((2, 3))
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), 2.0))
    kv.push(3, [a, a * 2, nd.array(a * 3, ctx=mx.cpu(1))])    # summed, replaces the value
    outs = [nd.zeros((2, 3)), nd.zeros((2, 3), ctx=mx.cpu(1))]
    kv.pull(3, out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), np.full((2, 3), 6.0))
    kv.init([4, 5], [a, a])
    kv.pushpull([4, 5], [[a, a], [a, a * 5]], out=[[outs[0]], [outs[1]]])
    np.testing.assert_array_equal(outs[0].asnumpy(), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(outs[1].asnumpy(), np.full((2, 3), 6.0))
    values = [nd.ones((2, 3)), nd.ones((2, 3), ctx=mx.cpu(1))]
    kv.pushpull(4, values)                   # without out, into the values themselves
    np.testing.assert_array_equal(values[1].asnumpy(), np.full((2, 3), 2.0))
    targets = [nd.zeros((2, 3)), nd.zeros((2, 3))]
    kv.broadcast(6, a * 7, out=targets)
    np.testing.assert_array_equal(targets[1].asnumpy(), np.full((2, 3), 7.0))


def test_kvstore_updater_and_optimizer(tmp_path):
    kv = mx.kv.create('local')
    kv.init('w', nd.ones(3))
    seen = []

    def update(key, value, stored):
        seen.append(key)
        stored[:] = stored + value * 2

    kv._set_updater(update)
    kv.push('w', [nd.ones(3), nd.ones(3)])
    out = nd.zeros(3)
    kv.pull('w', out=out)
    assert seen == ['w']
    np.testing.assert_array_equal(out.asnumpy(), [5.0, 5.0, 5.0])
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.9))
    kv.push('w', nd.ones(3))
    kv.pull('w', out=out)
    np.testing.assert_allclose(out.asnumpy(), [4.5, 4.5, 4.5])
    path = str(tmp_path / 'kv.states')
    kv.save_optimizer_states(path, dump_optimizer=True)
    kv2 = mx.kv.create('local')
    kv2.set_optimizer(mx.optimizer.Adam())
    kv2.load_optimizer_states(path)
    assert isinstance(kv2._updater.optimizer, mx.optimizer.SGD)
    np.testing.assert_allclose(kv2._updater.states['w'].asnumpy(), [-0.5, -0.5, -0.5])


def test_kvstore_errors():
    kv = mx.kv.create()
    assert kv.type == 'local'
    kv.init(3, nd.ones(2))
    with pytest.raises(MXNetError, match='duplicate init of key 3'):
        kv.init(3, nd.ones(2))
    with pytest.raises(MXNetError, match='key 9 has not been inited'):
        kv.pull(9, out=nd.zeros(2))
    with pytest.raises(MXNetError, match='key 9 has not been inited'):
        kv.push(9, nd.zeros(2))
    with pytest.raises(MXNetError, match='Mixed key types are not allowed'):
        kv.init('x', nd.ones(2))
    with pytest.raises(MXNetError, match='operands shape mismatch'):
        kv.pull(3, out=nd.zeros(3))
    with pytest.raises(NotSupportedError, match='row_sparse'):
        kv.row_sparse_pull(3, out=nd.zeros(2), row_ids=nd.array([0]))
    with pytest.raises(NotSupportedError, match='compression'):
        kv.set_gradient_compression({'type': '2bit'})
    with pytest.raises(NotSupportedError, match='asynchronous'):
        mx.kv.create('dist_async')
    with pytest.raises(MXNetError, match='Unknown KVStore type'):
        mx.kv.create('bogus')
    with pytest.raises(TypeError, match='name must be a string'):
        mx.kv.create(3)
    with pytest.raises(ValueError, match='Unknown capability'):
        kv.is_capable('telepathy')
    with pytest.raises(AssertionError):
        kv.save_optimizer_states('unused')


def _trainer_with_states(tmp_path):
    net = nn.Dense(2, in_units=3)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), 'adam')
    with autograd.record():
        loss = net(nd.ones((1, 3))).sum()
    loss.backward()
    trainer.step(1)
    trainer.save_states(str(tmp_path / 'good.states'))
    return trainer, (tmp_path / 'good.states').read_bytes()


def test_corrupt_states_files_are_errors_naming_the_file(tmp_path):
    trainer, good = _trainer_with_states(tmp_path)
    rng = np.random.RandomState(0)
    bad = tmp_path / 'bad.states'
    outcomes = {'loaded': 0, 'error': 0}
    for _ in range(300):                  # single bit flips anywhere
        flipped = bytearray(good)
        flipped[rng.randint(len(good))] ^= 1 << rng.randint(8)
        bad.write_bytes(bytes(flipped))
        try:
            trainer.load_states(str(bad))
            outcomes['loaded'] += 1       # a flip in the arrays' values
        except MXNetError as err:
            assert str(bad) in str(err)
            outcomes['error'] += 1
    assert outcomes['error'] > 100 and outcomes['loaded'] > 10
    # meta data of the wrong shape
    for meta in ([1, 2], {'format': 1, 'states': [1]}, {'format': 1}):
        nd.save(str(bad), {'__hybridlib_states__': nd.array(
            np.frombuffer(json.dumps(meta).encode(), np.uint8), dtype='uint8')})
        with pytest.raises(MXNetError,
                           match='bad.states: (corrupt optimizer states|the states are a list)'):
            trainer.load_states(str(bad))
    with pytest.raises(MXNetError, match='cannot read optimizer states'):
        trainer.load_states(str(tmp_path / 'missing.states'))
    trainer.load_states(str(tmp_path / 'good.states'))


def _with_optimizer_attrs(good, change):
    arrays = nd.load_frombuffer(good)
    meta = json.loads(arrays['__hybridlib_states__'].asnumpy().tobytes())
    change(meta['optimizer']['attrs'])
    arrays['__hybridlib_states__'] = nd.array(np.frombuffer(json.dumps(meta).encode(), np.uint8),
                                              dtype='uint8')
    return nd.save_to_bytes(arrays)


@pytest.mark.parametrize('change, message', [
    (lambda a: a.update(aggregate_num='4'), "'aggregate_num' is a str, where Adam has a number"),
    (lambda a: a.update(beta1=[0.9]), "'beta1' is a list, where Adam has a number"),
    (lambda a: a.update(clip_gradient='x'), "'clip_gradient' is a str, where Adam has None or"),
    (lambda a: a.update(update=1), "'update' is not one an optimizer can have"),
    (lambda a: a.update(lr_mult={'dict': [[0, 'x']]}), "'lr_mult' does not map indices"),
    (lambda a: a.update(lr_scheduler={'object': 'hybridlib.lr_scheduler:FactorScheduler',
                                      'attrs': {'dict': [['step', 'x']]}}),
     r'the saved lr_scheduler \(FactorScheduler\) cannot run'),
    (lambda a: a.update(lr_scheduler={'object': 'hybridlib.lr_scheduler:FactorScheduler',
                                      'attrs': {'dict': [['step', 0], ['factor', 0.5],
                                                         ['count', 0], ['base_lr', 0.1]]}}),
     r'the saved lr_scheduler \(FactorScheduler\) cannot run: ValueError: Schedule step must'),
    (lambda a: a.update(num_update=-1), "'num_update' is -1, not a count of updates"),
])
def test_saved_optimizer_attributes_are_checked_before_any_is_set(tmp_path, change, message):
    trainer, good = _trainer_with_states(tmp_path)
    before = dict(vars(trainer.optimizer))
    bad = tmp_path / 'bad.states'
    bad.write_bytes(_with_optimizer_attrs(good, change))
    with pytest.raises(MXNetError, match='bad.states: (the saved optimizer attribute )?' + message):
        trainer.load_states(str(bad))
    assert vars(trainer.optimizer).keys() == before.keys()
    assert all(vars(trainer.optimizer)[k] is v for k, v in before.items())
