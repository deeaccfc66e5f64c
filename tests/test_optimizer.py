"""``mx.optimizer``: every optimizer against a numpy reference of MXNet's rule and against
MXNet 1.9.1's numbers (tests/data/optimizer.json); multipliers, multi_precision, the registry,
the Updater and its states file."""
import json
import math
import pathlib

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import nd, optimizer as opt, optimizer_base
from hybridlib.base import MXNetError, NotSupportedError
from optimizer_rules import RULES

DATA = pathlib.Path(__file__).parent / 'data' / 'optimizer.json'
MULTI_DATA = pathlib.Path(__file__).parent / 'data' / 'optimizer_ops.json'
SHAPES = [(2, 3), (3,)]


# -------------------------------------------------------------------------------------------------
# numpy references of MXNet's optimizers: init(o, w) -> state, step(o, t, lr, wd, w, g, state)
# -------------------------------------------------------------------------------------------------

def _fused(o):
    """rescale_grad and clip_gradient as the fused operators get them (clip only if truthy)."""
    kw = {'rescale_grad': o.get('rescale_grad', 1.0)}
    if o.get('clip_gradient'):
        kw['clip_gradient'] = o['clip_gradient']
    return kw


def _clipped(o, g):
    """clip(g * rescale_grad) as the optimizers written with NDArray operators do it."""
    g = g * o.get('rescale_grad', 1.0)
    c = o.get('clip_gradient')
    return np.clip(g, -c, c) if c is not None else g


def _zeros(w, n=None):
    return np.zeros_like(w) if n is None else tuple(np.zeros_like(w) for _ in range(n))


def _sgd_like(rule):
    def step(o, t, lr, wd, w, g, s):
        if s is None:
            return RULES['sgd_update'](w, g, lr=lr, wd=wd, **_fused(o))[0], None
        return RULES[rule](w, g, s, lr=lr, wd=wd, momentum=o['momentum'], **_fused(o))
    return step


def _adam(o, t, lr, wd, w, g, s):
    b1, b2 = o.get('beta1', 0.9), o.get('beta2', 0.999)
    lr = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    out, m, v = RULES['adam_update'](w, g, *s, lr=lr, wd=wd, beta1=b1, beta2=b2,
                                     epsilon=o.get('epsilon', 1e-8), **_fused(o))
    return out, (m, v)


def _adagrad(o, t, lr, wd, w, g, s):
    c = o.get('clip_gradient')
    return RULES['_sparse_adagrad_update'](
        w, g, s, lr=lr, wd=wd, epsilon=o.get('eps', 1e-7), rescale_grad=o.get('rescale_grad', 1),
        clip_gradient=-1 if c is None else c)


def _rmsprop(o, t, lr, wd, w, g, s):
    kw = dict(_fused(o), lr=lr, wd=wd, gamma1=o.get('gamma1', 0.9), epsilon=o.get('epsilon', 1e-8))
    if o.get('clip_weights'):
        kw['clip_weights'] = o['clip_weights']
    if o.get('centered'):
        out, *s = RULES['rmspropalex_update'](w, g, *s, gamma2=o.get('gamma2', 0.9), **kw)
        return out, tuple(s)
    out, n = RULES['rmsprop_update'](w, g, s[0], **kw)
    return out, (n,)


def _adadelta(o, t, lr, wd, w, g, s):
    rho, eps = o.get('rho', 0.9), o.get('epsilon', 1e-5)
    g = _clipped(o, g)
    acc_g = rho * s[0] + (1 - rho) * g * g
    delta = np.sqrt(s[1] + eps) / np.sqrt(acc_g + eps) * g
    acc_delta = rho * s[1] + (1 - rho) * delta * delta
    return w - (delta + wd * w), (acc_g, acc_delta)


def _ftrl(o, t, lr, wd, w, g, s):
    out, z, n = RULES['ftrl_update'](w, g, *s, lr=lr, wd=wd, lamda1=o.get('lamda1', 0.01),
                                     beta=o.get('beta', 1), **_fused(o))
    return out, (z, n)


def _adamax(o, t, lr, wd, w, g, s):
    b1, b2 = o.get('beta1', 0.9), o.get('beta2', 0.999)
    g = g * o.get('rescale_grad', 1.0) + wd * w
    if o.get('clip_gradient') is not None:
        g = np.clip(g, -o['clip_gradient'], o['clip_gradient'])
    m = b1 * s[0] + (1 - b1) * g
    u = np.maximum(b2 * s[1], np.abs(g))
    return w - lr / (1 - b1 ** t) * m / u, (m, u)


def _nadam(o, t, lr, wd, w, g, s):
    b1, b2, eps, decay = (o.get('beta1', 0.9), o.get('beta2', 0.999), o.get('epsilon', 1e-8),
                          o.get('schedule_decay', 0.004))
    g = g * o.get('rescale_grad', 1.0) + wd * w
    if o.get('clip_gradient') is not None:
        g = np.clip(g, -o['clip_gradient'], o['clip_gradient'])
    mu = [b1 * (1 - 0.5 * 0.96 ** (k * decay)) for k in range(1, t + 2)]
    schedule, schedule_next = np.prod(mu[:t]), np.prod(mu[:t + 1])
    m = b1 * s[0] + (1 - b1) * g
    v = b2 * s[1] + (1 - b2) * g * g
    m_bar = (1 - mu[t - 1]) * g / (1 - schedule) + mu[t] * m / (1 - schedule_next)
    return w - lr * m_bar / (np.sqrt(v / (1 - b2 ** t)) + eps), (m, v)


def _signum(o, t, lr, wd, w, g, s):
    if s is None:
        return RULES['signsgd_update'](w, g, lr=lr, wd=wd, **_fused(o))[0], None
    return RULES['signum_update'](w, g, s, lr=lr, wd=wd, momentum=o.get('momentum', 0.9),
                                  wd_lh=o.get('wd_lh', 0.0), **_fused(o))


def _ftml(o, t, lr, wd, w, g, s):
    kw = {'rescale_grad': o.get('rescale_grad', 1.0)}
    if o.get('clip_gradient'):
        kw['clip_grad'] = o['clip_gradient']
    out, *s = RULES['ftml_update'](w, g, *s, lr=lr, wd=wd, t=t, beta1=o.get('beta1', 0.6),
                                   beta2=o.get('beta2', 0.999), epsilon=o.get('epsilon', 1e-8),
                                   **kw)
    return out, tuple(s)


def _lamb(o, t, lr, wd, w, g, s):
    step, m, v = RULES['lamb_update_phase1'](
        w, g, *s, t=t, wd=wd, beta1=o.get('beta1', 0.9), beta2=o.get('beta2', 0.999),
        epsilon=o.get('epsilon', 1e-6), bias_correction=o.get('bias_correction', True),
        **_fused(o))
    bounds = {k: o[k] for k in ('lower_bound', 'upper_bound') if o.get(k)}
    out = RULES['lamb_update_phase2'](w, step, np.linalg.norm(w), np.linalg.norm(step), lr=lr,
                                      **bounds)[0]
    return out, (m, v)


def _dcasgd(o, t, lr, wd, w, g, s):
    g = _clipped(o, g)
    mom, previous = s
    step = -lr * (g + wd * w + o.get('lamda', 0.04) * g * g * (w - previous))
    mom = step if mom is None else o['momentum'] * mom + step
    return w + mom, (mom if o.get('momentum') else None, w)


def _test(o, t, lr, wd, w, g, s):
    w = w + g * o.get('rescale_grad', 1.0)
    return w, w


def _momentum(o, w):
    return _zeros(w) if o.get('momentum') else None


REFERENCES = {   # name: (default learning rate, init, step)
    'sgd': (0.01, _momentum, _sgd_like('sgd_mom_update')),
    'nag': (0.01, _momentum, _sgd_like('nag_mom_update')),
    'adam': (0.001, lambda o, w: _zeros(w, 2), _adam),
    'adagrad': (0.01, lambda o, w: _zeros(w), _adagrad),
    'rmsprop': (0.001, lambda o, w: _zeros(w, 3 if o.get('centered') else 1), _rmsprop),
    'adadelta': (0.01, lambda o, w: _zeros(w, 2), _adadelta),
    'ftrl': (0.1, lambda o, w: _zeros(w, 2), _ftrl),
    'adamax': (0.002, lambda o, w: _zeros(w, 2), _adamax),
    'nadam': (0.001, lambda o, w: _zeros(w, 2), _nadam),
    'signum': (0.01, lambda o, w: _zeros(w) if o.get('momentum', 0.9) else None, _signum),
    'ftml': (0.01, lambda o, w: _zeros(w, 3), _ftml),
    'lamb': (0.001, lambda o, w: _zeros(w, 2), _lamb),
    'dcasgd': (0.01, lambda o, w: (_momentum(o, w), w.copy()), _dcasgd),
    'test': (0.01, lambda o, w: _zeros(w), _test),
}


def reference(name, o, weights, grad_steps, lr_mult=(), wd_mult=()):
    """MXNet's optimizer ``name`` on float64 copies: the weights after every step."""
    default_lr, init, step = REFERENCES[name]
    lr = o.get('learning_rate', default_lr)
    weights = [w.astype(np.float64) for w in weights]
    states = [init(o, w) for w in weights]
    for t, grads in enumerate(grad_steps, 1):
        for i, g in enumerate(grads):
            weights[i], states[i] = step(o, t, lr * dict(lr_mult).get(i, 1.0),
                                         o.get('wd', 0.0) * dict(wd_mult).get(i, 1.0),
                                         weights[i], g.astype(np.float64), states[i])
    return weights


def _inputs(seed, steps, dtype=np.float32):
    rng = np.random.default_rng(seed)
    weights = [rng.uniform(-1, 1, s).astype(dtype) for s in SHAPES]
    grads = [[rng.uniform(-2, 2, s).astype(dtype) for s in SHAPES] for _ in range(steps)]
    return weights, grads


def _run(optimizer, weights, grad_steps, dtype=None):
    updater = opt.get_updater(optimizer)
    arrays = [nd.array(w, dtype=dtype or w.dtype) for w in weights]
    for grads in grad_steps:
        updater(list(range(len(arrays))), [nd.array(g, dtype=g.dtype) for g in grads], arrays)
    return arrays, updater


BASE = dict(learning_rate=0.1, wd=0.05, rescale_grad=0.5, clip_gradient=0.7)
CONFIGS = [
    ('sgd', {}), ('sgd', dict(BASE, momentum=0.9)), ('sgd', dict(BASE, clip_gradient=None)),
    ('nag', dict(BASE, momentum=0.9)), ('nag', BASE),
    ('adam', {}), ('adam', dict(BASE, beta1=0.8, beta2=0.95, epsilon=1e-5)),
    ('adagrad', {}), ('adagrad', dict(BASE, eps=1e-6)),
    ('rmsprop', {}), ('rmsprop', dict(BASE, gamma1=0.8, clip_weights=0.95)),
    ('rmsprop', dict(BASE, learning_rate=0.01, centered=True, gamma2=0.8)),
    ('adadelta', {}), ('adadelta', dict(BASE, rho=0.8, epsilon=1e-4)),
    ('ftrl', {}), ('ftrl', dict(BASE, lamda1=0.02, beta=0.5)),
    ('adamax', {}), ('adamax', dict(BASE, beta1=0.8, beta2=0.95)),
    ('nadam', {}), ('nadam', dict(BASE, schedule_decay=0.1)),
    ('signum', {}), ('signum', dict(BASE, wd_lh=0.01)), ('signum', dict(BASE, momentum=0.0)),
    ('ftml', {}), ('ftml', BASE),
    ('lamb', {}), ('lamb', dict(BASE, lower_bound=0.1, upper_bound=5.0)),
    ('lamb', dict(BASE, bias_correction=False)),
    ('dcasgd', dict(BASE, lamda=0.1)), ('dcasgd', dict(BASE, momentum=0.9)),
    ('test', dict(rescale_grad=0.5)),
]


@pytest.mark.parametrize('steps', [1, 3])
@pytest.mark.parametrize('name, kwargs', CONFIGS, ids=[f'{n}{i}' for i, (n, _) in
                                                       enumerate(CONFIGS)])
def test_against_numpy_reference(name, kwargs, steps):
    weights, grads = _inputs(sum(map(ord, name)), steps)
    optimizer = opt.create(name, **kwargs)
    optimizer.set_lr_mult({0: 0.5})
    optimizer.set_wd_mult({1: 2.0})
    arrays, _ = _run(optimizer, weights, grads)
    expected = reference(name, kwargs, weights, grads, {0: 0.5}, {1: 2.0})
    for a, e in zip(arrays, expected):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=1e-4, atol=1e-6)
    assert optimizer.num_update == (0 if name == 'test' else steps)   # Test does not count


# -------------------------------------------------------------------------------------------------
# MXNet 1.9.1's numbers
# -------------------------------------------------------------------------------------------------

def _array(t):
    return np.array(t['data'], dtype=np.float64).reshape(t['shape']).astype(t['dtype'])


def _flat(state):
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [x for s in state for x in _flat(s)]
    return [state]


def _optimizer(entry):
    """The optimizer of an entry of MXNet's numbers: its class, arguments, scheduler,
    parameter names and multipliers."""
    kwargs = dict(entry['kwargs'])
    if entry.get('idx2name'):
        kwargs['param_idx2name'] = {int(k): v for k, v in entry['idx2name'].items()}
    if entry['scheduler']:
        cls, sched_kwargs = entry['scheduler']
        kwargs['lr_scheduler'] = getattr(mx.lr_scheduler, cls)(**sched_kwargs)
    if entry.get('contrib'):
        optimizer = getattr(opt.contrib, entry['name'])(**kwargs)
    else:
        optimizer = opt.create(entry['name'], **kwargs)
    if entry['lr_mult']:
        optimizer.set_lr_mult({int(k): v for k, v in entry['lr_mult'].items()})
    if entry.get('wd_mult'):
        optimizer.set_wd_mult({int(k): v for k, v in entry['wd_mult'].items()})
    return optimizer


def _check_states(updater, expected_states, rtol, atol):
    """The Updater's states, flattened, have MXNet's dtypes, shapes and values."""
    for i, expected in enumerate(expected_states):
        got, want = _flat(updater.states[i]), _flat(expected)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == np.dtype(w['dtype']) and g.shape == tuple(w['shape'])
            np.testing.assert_allclose(g.asnumpy(), _array(w), rtol=rtol, atol=atol)


@pytest.mark.parametrize('entry', json.loads(DATA.read_text())['optimizers'],
                         ids=lambda e: e['name'])
def test_against_mxnet(entry):
    optimizer = _optimizer(entry)
    weights = [_array(w) for w in entry['weights']]
    grads = [[_array(g) for g in step] for step in entry['grads']]
    arrays, updater = _run(optimizer, weights, grads)
    f16 = entry['dtype'] == 'float16'
    for a, e in zip(arrays, entry['after']):
        assert a.dtype == np.dtype(entry['dtype'])
        np.testing.assert_allclose(a.asnumpy(), _array(e), rtol=2e-3 if f16 else 2e-4,
                                   atol=1e-3 if f16 else 1e-6)
    _check_states(updater, entry['states'], rtol=2e-4, atol=2e-6)
    assert optimizer.num_update == entry['num_update']


@pytest.mark.parametrize('entry', json.loads(MULTI_DATA.read_text())['optimizers'],
                         ids=lambda e: e['label'])
def test_against_mxnet_multi_tensor(entry):
    """LARS, LBSGD, contrib.GroupAdaGrad and SGD on float16 weights (the optimizers MXNet
    runs with multi-tensor updates) for four steps of three weights: the weights after every
    step, the states at the end (tests/data/make_optimizer_ops_files.py)."""
    optimizer = _optimizer(entry)
    updater = opt.get_updater(optimizer)
    arrays = [nd.array(_array(w), dtype=entry['dtype']) for w in entry['weights']]
    f16 = entry['dtype'] == 'float16'
    for step, after in zip(entry['grads'], entry['after']):
        updater(list(range(len(arrays))), [nd.array(_array(g), dtype=g['dtype']) for g in step],
                arrays)
        for a, e in zip(arrays, after):
            assert a.dtype == np.dtype(entry['dtype'])
            np.testing.assert_allclose(a.asnumpy(), _array(e), rtol=2e-3 if f16 else 2e-5,
                                       atol=1e-3 if f16 else 1e-6)
    # (LARS of float16 weights: MXNet rounds their squares to float16 in multi_sum_sq)
    _check_states(updater, entry['states'], rtol=1e-3 if f16 else 2e-5, atol=1e-6)
    assert optimizer.num_update == entry['num_update']


# -------------------------------------------------------------------------------------------------
# LARS, LBSGD
# -------------------------------------------------------------------------------------------------

def _lars_reference(weights, grad_steps, names, lr, eta, eps, wd, momentum, rescale):
    """MXNet's LARS in float64 (constant learning rate: no momentum correction)."""
    weights = [w.astype(np.float64) for w in weights]
    moms = [np.zeros_like(w) for w in weights]
    for grads in grad_steps:
        for i, g in enumerate(grads):
            g = g.astype(np.float64)
            name = names.get(i, str(i))
            w_wd = wd if name.endswith('_weight') or i not in names else 0.0
            rate = lr
            w_norm, g_norm = np.linalg.norm(weights[i]), np.linalg.norm(g)
            if not name.endswith(('gamma', 'beta', 'bias')) and w_norm > 0 and g_norm > 0:
                rate = lr * eta * w_norm / (g_norm * rescale + w_wd * w_norm + eps)
            weights[i], moms[i] = RULES['sgd_mom_update'](weights[i], g, moms[i], lr=rate,
                                                          wd=w_wd, momentum=momentum,
                                                          rescale_grad=rescale)
    return weights


@pytest.mark.parametrize('aggregate', [1, 4])
def test_lars_against_numpy(aggregate):
    weights, grads = _inputs(5, 3)
    weights.append(np.random.default_rng(6).uniform(-1, 1, 4))
    grads = [g + [np.random.default_rng(7 + k).uniform(-2, 2, 4)] for k, g in enumerate(grads)]
    names = {0: 'conv_weight', 1: 'conv_bias', 2: 'bn_gamma'}
    o = opt.LARS(learning_rate=0.1, momentum=0.9, eta=0.4, eps=1e-3, wd=0.05, rescale_grad=0.5,
                 param_idx2name=names)
    o.aggregate_num = aggregate
    assert o.wd_mult == {'conv_bias': 0.0, 'bn_gamma': 0.0}
    arrays, _ = _run(o, weights, grads)
    expected = _lars_reference(weights, grads, names, 0.1, 0.4, 1e-3, 0.05, 0.9, 0.5)
    for a, e in zip(arrays, expected):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=1e-5, atol=1e-6)


def test_lbsgd_keeps_its_own_copy_of_the_accumulated_gradient():
    # a Trainer passes the same gradient buffer every step: the accumulation must not alias it
    o = opt.LBSGD(learning_rate=0.1, batch_scale=2, warmup_epochs=0)
    weight, grad = nd.zeros(3), nd.array([1.0, 2.0, 3.0])
    o.update(0, weight, grad, None)
    np.testing.assert_array_equal(weight.asnumpy(), np.zeros(3))      # accumulating
    grad[:] = nd.array([3.0, 2.0, 1.0])
    o.update(0, weight, grad, None)
    # the mean of the two gradients, times the full warmup factor batch_scale
    np.testing.assert_allclose(weight.asnumpy(), -0.1 * 2 * np.array([2.0, 2.0, 2.0]),
                               rtol=1e-6)


def test_lbsgd_warmup_factors():
    o = opt.LBSGD(batch_scale=5, warmup_epochs=2, updates_per_epoch=4)
    assert o._get_lbmult(2) == pytest.approx(1 + 4 * 2 / 8)
    assert o._get_lbmult(8) == 5.0
    o.warmup_strategy = 'power2'
    assert o._get_lbmult(2) == pytest.approx(1 + 4 * 4 / 64)
    o.warmup_strategy = 'sqrt'
    assert o._get_lbmult(2) == pytest.approx(1 + 4 * math.sqrt(2 / 8))
    o.warmup_strategy = 'none'
    assert o._get_lbmult(2) == 1.0
    w = nd.array([3.0, 4.0])
    assert o._get_lars(w, nd.array([0.0, 0.0]), 0.0) == 100       # clipped
    assert o._get_lars(w, nd.array([3.0, 4.0]), 1.0) == pytest.approx(math.sqrt(0.5))


def test_sgd_float16_batches_use_multi_tensor_updates(monkeypatch):
    calls = []
    original = nd.multi_mp_sgd_mom_update

    def spy(*args, **kwargs):
        calls.append(kwargs['num_weights'])
        return original(*args, **kwargs)
    monkeypatch.setattr(nd, 'multi_mp_sgd_mom_update', spy)
    weights, grads = _inputs(9, 1, np.float16)
    o = opt.SGD(learning_rate=0.1, momentum=0.9, multi_precision=True)
    arrays, _ = _run(o, weights * 3, [grads[0] * 3])        # six float16 weights
    assert calls == [4, 2]
    expected = reference('sgd', dict(learning_rate=0.1, momentum=0.9), weights * 3,
                         [grads[0] * 3])
    for a, e in zip(arrays, expected):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=2e-3, atol=1e-3)


# -------------------------------------------------------------------------------------------------
# multi_precision
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('name, kwargs, layout', [
    ('sgd', dict(momentum=0.9), 'state_first'), ('nag', dict(momentum=0.9), 'state_first'),
    ('sgd', {}, 'state_first'), ('adam', {}, 'master_first'), ('lamb', {}, 'master_first'),
    ('rmsprop', {}, 'master_first')])
def test_multi_precision(name, kwargs, layout):
    weights, grads = _inputs(3, 3, np.float16)
    o = dict(kwargs, learning_rate=0.1, wd=0.01, rescale_grad=0.5, multi_precision=True)
    optimizer = opt.create(name, **o)
    arrays, updater = _run(optimizer, weights, grads)
    state = updater.states[0]
    master = state[1] if layout == 'state_first' else state[0]
    assert master.dtype == np.float32 and arrays[0].dtype == np.float16
    for s in _flat(state):
        assert s.dtype == np.float32
    expected = reference(name, o, weights, grads)
    np.testing.assert_allclose(master.asnumpy(), expected[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(arrays[0].asnumpy(), master.asnumpy().astype(np.float16))


def test_float16_without_multi_precision_warns():
    with pytest.warns(UserWarning, match='multi_precision=True'):
        opt.SGD(momentum=0.9).create_state_multi_precision(0, nd.zeros(3, dtype='float16'))
    with pytest.warns(UserWarning, match='multi_precision=True'):
        opt.Adam().create_state_multi_precision(0, nd.zeros(3, dtype='float16'))


# -------------------------------------------------------------------------------------------------
# Learning rates, multipliers, registry
# -------------------------------------------------------------------------------------------------

def test_multipliers():
    params = {0: mx.gluon.Parameter('p0', lr_mult=3.0, wd_mult=0.5)}
    o = opt.SGD(learning_rate=0.1, wd=0.2, param_dict=params,
                param_idx2name={1: 'fc_weight', 2: 'fc_bias', 3: 'bn_gamma', 4: 'bn_beta'})
    assert o.wd_mult == {'fc_bias': 0.0, 'bn_beta': 0.0}
    o.set_lr_mult({1: 2.0, 'fc_bias': 4.0, 0: 100.0})
    assert o._get_lrs([0, 1, 2, 3, 9]) == pytest.approx([0.3, 0.2, 0.4, 0.1, 0.1])
    assert o._get_wds([0, 1, 2, 3, 4]) == pytest.approx([0.1, 0.2, 0.0, 0.2, 0.0])
    params[0].lr_mult = 0.5          # param_dict is not copied: changes apply at once
    assert o._get_lr(0) == pytest.approx(0.05)
    s = mx.sym.var('a', lr_mult=2.0, wd_mult=3.0) + mx.sym.var('b')
    o = opt.SGD(sym=s)
    assert o.lr_mult == {'a': 2.0} and o.wd_mult == {'a': 3.0}


def test_learning_rate():
    o = opt.SGD()
    assert o.learning_rate == 0.01
    o.set_learning_rate(0.5)
    assert o.learning_rate == 0.5 and o.lr == 0.5
    o = opt.SGD(lr_scheduler=mx.lr_scheduler.FactorScheduler(1, 0.5, base_lr=1.0))
    with pytest.raises(UserWarning, match='LRScheduler of the optimizer has already been'):
        o.set_learning_rate(0.1)
    with pytest.raises(DeprecationWarning):
        o.set_lr_scale({})


def test_update_counts_and_begin_num_update():
    o = opt.SGD(begin_num_update=10)
    upd = opt.get_updater(o)
    w = [nd.zeros(2), nd.zeros(2)]
    upd([0, 1], [nd.ones(2), nd.ones(2)], w)
    upd(0, nd.ones(2), w[0])
    assert o._index_update_count == {0: 12, 1: 11} and o.num_update == 12
    upd(0, nd.ones(2, ctx=mx.cpu(1)), nd.zeros(2, ctx=mx.cpu(1)))   # counted per device
    assert o._all_index_update_counts[1] == {0: 11} and o.num_update == 12


def test_registry():
    assert isinstance(opt.create('SGD'), opt.SGD)
    assert type(opt.Optimizer.create_optimizer('adam', learning_rate=0.1)) is opt.Adam
    assert opt.create('adam', learning_rate=0.1).lr == 0.1
    with pytest.raises(ValueError, match='Cannot find optimizer nosuch'):
        opt.create('nosuch')
    assert {'sgd', 'nag', 'adam', 'adagrad', 'rmsprop', 'adadelta', 'ftrl', 'adamax', 'nadam',
            'signum', 'ftml', 'lamb', 'dcasgd', 'sgld', 'ccsgd', 'test',
            'groupadagrad', 'lars', 'lbsgd'} <= set(opt.Optimizer.opt_registry)

    class MyOpt(opt.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = weight - grad

    try:
        assert opt.register(MyOpt) is MyOpt
        assert isinstance(opt.create('myopt'), MyOpt)
        with pytest.warns(UserWarning, match='is overriding existing optimizer'):
            opt.register(MyOpt)
    finally:
        opt.Optimizer.opt_registry.pop('myopt')
    from hybridlib.optimizer.contrib import GroupAdaGrad
    assert mx.optimizer.contrib.GroupAdaGrad is GroupAdaGrad


def test_group_adagrad():
    w0 = np.random.default_rng(1).uniform(-1, 1, (3, 4))
    g = np.random.default_rng(2).uniform(-1, 1, (3, 4))
    o = opt.contrib.GroupAdaGrad(learning_rate=0.1, rescale_grad=0.5, clip_gradient=0.3)
    w = nd.array(w0)
    state = o.create_state(0, w)
    assert state.shape == (3, 1)
    o.update(0, w, nd.array(g), state)
    expected, history = RULES['_contrib_group_adagrad_update'](
        w0, g, np.zeros((3, 1)), lr=0.1, rescale_grad=0.5, clip_gradient=0.3)
    np.testing.assert_allclose(w.asnumpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(state.asnumpy(), history, rtol=1e-5)
    with pytest.raises(AssertionError, match='Weight decay is not supported'):
        opt.contrib.GroupAdaGrad(wd=0.1).update(0, w, nd.array(g), state)


def test_sgld_noise():
    mx.random.seed(3)
    o = opt.SGLD(learning_rate=0.01, wd=0.1)
    w = nd.ones((200, 100))
    o.update(0, w, nd.ones((200, 100)), None)
    noise = w.asnumpy() - (1 - 0.01 / 2 * (1 + 0.1))
    assert abs(noise.mean()) < 0.005 and noise.std() == pytest.approx(0.1, rel=0.05)


def test_adadelta_leaves_the_gradient_alone():
    g = nd.ones(3)
    opt.AdaDelta(rescale_grad=0.5).update(0, nd.zeros(3), g, (nd.zeros(3), nd.zeros(3)))
    np.testing.assert_array_equal(g.asnumpy(), np.ones(3))


# -------------------------------------------------------------------------------------------------
# Updater and its states file
# -------------------------------------------------------------------------------------------------

def _factor():
    return mx.lr_scheduler.FactorScheduler(2, 0.5, base_lr=0.3)


@pytest.mark.parametrize('name, kwargs', [
    ('sgd', dict(momentum=0.9, multi_precision=True)), ('adam', {}), ('nadam', {}),
    ('rmsprop', dict(centered=True)), ('dcasgd', {}), ('sgd', dict(lr_scheduler=_factor))])
def test_states_round_trip(name, kwargs):
    def make():     # a fresh scheduler each time: schedulers keep state
        return opt.create(name, **{k: v() if callable(v) else v for k, v in kwargs.items()})

    weights, grads = _inputs(5, 4, np.float16 if kwargs.get('multi_precision') else np.float32)
    straight, _ = _run(make(), weights, grads)
    # two steps, save, restore into a fresh optimizer of another class, two more steps
    first, updater = _run(make(), weights, grads[:2])
    blob = updater.get_states(dump_optimizer=True)
    fresh = opt.get_updater(opt.create('test'))
    fresh.set_states(blob)
    assert type(fresh.optimizer) is type(updater.optimizer)
    assert fresh.optimizer.num_update == 2
    for step in grads[2:]:
        fresh([0, 1], [nd.array(g, dtype=g.dtype) for g in step], first)
    for a, b in zip(first, straight):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_states_file_layout(tmp_path):
    updater = opt.get_updater(opt.SGD(momentum=0.9, multi_precision=True))
    updater(['a', 'b'], [nd.ones(2, dtype='float16'), nd.ones(3)],
            [nd.zeros(2, dtype='float16'), nd.zeros(3)])
    path = tmp_path / 'states'
    path.write_bytes(updater.get_states())
    arrays = nd.load(str(path))
    assert sorted(arrays) == ['__hybridlib_states__', 'state/a/0', 'state/a/1', 'state/b']
    meta = json.loads(arrays['__hybridlib_states__'].asnumpy().tobytes())
    assert meta['format'] == 1 and meta['optimizer'] is None
    assert meta['states'] == {'dict': [['a', {'tuple': [{'ndarray': 'state/a/0'},
                                                        {'ndarray': 'state/a/1'}]}],
                                       ['b', {'ndarray': 'state/b'}]]}
    # without the optimizer, only the states are replaced
    other = opt.get_updater(opt.SGD(momentum=0.5))
    other.set_states(updater.get_states())
    assert other.optimizer.momentum == 0.5 and set(other.states) == {'a', 'b'}


def test_states_move_to_the_weights_context():
    updater = opt.get_updater(opt.SGD(momentum=0.9))
    updater(0, nd.ones(2), nd.zeros(2))
    other = opt.get_updater(opt.SGD(momentum=0.9))
    other.set_states(updater.get_states())
    w = nd.zeros(2, ctx=mx.cpu(1))
    other(0, nd.ones(2, ctx=mx.cpu(1)), w)
    assert other.states[0].context == mx.cpu(1)
    np.testing.assert_allclose(w.asnumpy(), [-0.019, -0.019], rtol=1e-6)


def test_mxnet_pickles_are_refused():
    with pytest.raises(NotSupportedError, match='pickle'):
        opt.get_updater(opt.SGD()).set_states(b'\x80\x04\x95 pickled')
    with pytest.raises(MXNetError, match='not an optimizer states file'):
        opt.get_updater(opt.SGD()).set_states(nd_bytes({'x': nd.zeros(1)}))


def nd_bytes(data):
    return nd.save_to_bytes(data)


def test_unsaveable_attribute_is_skipped_with_a_warning():
    o = opt.SGD()
    o.callback = lambda: None
    with pytest.warns(UserWarning, match="'callback'"):
        blob = opt.get_updater(o).get_states(dump_optimizer=True)
    restored = opt.get_updater(opt.SGD()).__class__(opt.Adam())
    restored.set_states(blob)
    assert isinstance(restored.optimizer, opt.SGD) and not hasattr(restored.optimizer,
                                                                   'callback')


def test_aggregated_updates_group_by_dtype():
    o = opt.SGD(learning_rate=0.1, momentum=0.9)
    calls = []
    original = o.update_multi_precision
    o.update_multi_precision = lambda *a: (calls.append(len(a[0])), original(*a))
    upd = opt.get_updater(o)
    weights = [nd.zeros(2) for _ in range(5)] + [nd.zeros(2, dtype='float64')]
    upd(list(range(6)), [nd.ones(2, dtype=w.dtype) for w in weights], weights)
    assert calls == [4, 1, 1]
    for w in weights:
        np.testing.assert_allclose(w.asnumpy(), [-0.1, -0.1])


def test_adamw_decouples_weight_decay_as_pytorch():
    """AdamW (not a class in MXNet 1.9.1): PyTorch's update rule, steps checked in float64."""
    import hybridlib as mx
    rng = np.random.default_rng(5)
    w0 = rng.normal(size=(3, 4))
    grads = [rng.normal(size=(3, 4)) for _ in range(3)]
    opt = mx.optimizer.create('adamw', learning_rate=0.01, wd=0.1, beta1=0.8, beta2=0.9,
                              epsilon=1e-6, rescale_grad=0.5)
    weight = mx.nd.array(w0, dtype='float64')
    state = opt.create_state(0, weight)
    w, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    for t, g in enumerate(grads, 1):
        opt.update(0, weight, mx.nd.array(g, dtype='float64'), state)
        g = g * 0.5
        m = 0.8 * m + 0.2 * g
        v = 0.9 * v + 0.1 * g * g
        m_hat, v_hat = m / (1 - 0.8 ** t), v / (1 - 0.9 ** t)
        # the correction folded into the step scales epsilon by 1/sqrt(1 - beta2^t), as Adam
        w = w - 0.01 * 0.1 * w - 0.01 * m_hat / (np.sqrt(v_hat) + 1e-6 / np.sqrt(1 - 0.9 ** t))
        np.testing.assert_allclose(weight.asnumpy(), w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('name, kwargs', [('sgd', {}), ('sgd', {'momentum': 0.9}),
                                          ('adam', {'wd': 0.01, 'clip_gradient': 0.5})])
def test_updates_after_the_first_skip_the_checks_and_give_the_same_numbers(name, kwargs):
    """A fused update whose inputs' signature was accepted once runs its body straight away;
    its numbers are those of the full call, and an input sharing the weight's memory or a
    new signature still goes through the full call."""
    rng = np.random.default_rng(3)
    weights = [rng.standard_normal(s).astype(np.float32) for s in ((5, 4), (7,))]
    grads = [rng.standard_normal(w.shape).astype(np.float32) for w in weights]

    def train(full):
        opt = mx.optimizer.create(name, learning_rate=0.1, **kwargs)
        updater = mx.optimizer.get_updater(opt)
        ws = [mx.nd.array(w) for w in weights]
        for _ in range(3):
            if full:
                optimizer_base._CHECKED.clear()
            updater(list(range(len(ws))), [mx.nd.array(g) for g in grads], ws)
        return [w.asnumpy() for w in ws]
    for fast, full in zip(train(False), train(True)):
        np.testing.assert_array_equal(fast, full)
    assert any(s[0].endswith('_update') for s in optimizer_base._CHECKED)
    w = mx.nd.array(weights[0])
    sgd = mx.optimizer.create('sgd', learning_rate=0.5)
    for _ in range(2):      # the gradient is the weight: read before the write, every time
        sgd.update(0, w, w, None)
    np.testing.assert_allclose(w.asnumpy(), weights[0] * 0.25, rtol=1e-6)
    w64 = mx.nd.array(weights[0], dtype='float64')
    sgd.update(0, w64, mx.nd.ones(w64.shape, dtype='float64'), None)
    np.testing.assert_allclose(w64.asnumpy(), weights[0].astype(np.float64) - 0.5, rtol=1e-6)
