"""``mx.lr_scheduler``: MXNet 1.9.1's learning rates (tests/data/optimizer.json), warm-up, state
and argument checks."""
import json
import pathlib

import pytest

import hybridlib as mx
from hybridlib import lr_scheduler

DATA = pathlib.Path(__file__).parent / 'data' / 'optimizer.json'


def _oracle():
    return json.loads(DATA.read_text())['schedulers']


@pytest.mark.parametrize('entry', _oracle(), ids=lambda e: e['class'])
def test_against_mxnet(entry):
    sched = getattr(lr_scheduler, entry['class'])(**entry['kwargs'])
    got = [sched(n) for n in entry['num_update']]
    assert got == pytest.approx(entry['lr'], rel=1e-12, abs=1e-15)


def test_formulas():
    # FactorScheduler: base_lr * factor ** floor((num_update - 1) / step)
    sched = lr_scheduler.FactorScheduler(step=3, factor=0.5, base_lr=1.0)
    assert [sched(n) for n in range(1, 11)] == [1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125]
    sched = lr_scheduler.PolyScheduler(max_update=4, base_lr=2.0, pwr=2, final_lr=1.0)
    assert [sched(n) for n in range(6)] == [2.0, 1 + 0.75 ** 2, 1.25, 1 + 0.25 ** 2, 1.0, 1.0]
    sched = lr_scheduler.CosineScheduler(max_update=4, base_lr=1.0)
    assert [sched(n) for n in (0, 2, 4, 9)] == pytest.approx([1.0, 0.5, 0.0, 0.0])


def test_warmup():
    linear = lr_scheduler.MultiFactorScheduler([10], base_lr=1.0, warmup_steps=4,
                                               warmup_begin_lr=0.2)
    assert [linear(n) for n in range(5)] == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0])
    constant = lr_scheduler.CosineScheduler(8, base_lr=1.0, warmup_steps=4,
                                            warmup_begin_lr=0.2, warmup_mode='constant')
    assert [constant(n) for n in range(5)] == [0.2, 0.2, 0.2, 0.2, 1.0]
    with pytest.raises(AssertionError):
        linear.get_warmup_lr(4)


def test_state_is_kept():
    # MXNet's decaying schedulers lower base_lr in place: going back does not raise the rate
    sched = lr_scheduler.FactorScheduler(step=2, factor=0.1, base_lr=1.0, stop_factor_lr=0.005)
    assert sched(7) == pytest.approx(0.005)       # clamped at stop_factor_lr
    assert sched(1) == pytest.approx(0.005)
    assert sched.count == 6
    multi = lr_scheduler.MultiFactorScheduler([2, 4], factor=0.5, base_lr=1.0)
    assert multi(10) == 0.25 and multi(0) == 0.25 and multi.cur_step_ind == 2
    poly = lr_scheduler.PolyScheduler(max_update=4, base_lr=1.0, pwr=1)
    assert poly(3) == pytest.approx(0.25) and poly(100) == pytest.approx(0.25)


def test_argument_errors():
    with pytest.raises(ValueError, match='Base lr has to be higher than warmup_begin_lr'):
        lr_scheduler.LRScheduler(base_lr=0.1, warmup_begin_lr=0.2)
    with pytest.raises(ValueError, match='Warmup steps has to be positive or 0'):
        lr_scheduler.LRScheduler(warmup_steps=-1)
    with pytest.raises(ValueError, match='Supports only linear and constant modes'):
        lr_scheduler.LRScheduler(warmup_mode='cosine')
    with pytest.raises(AssertionError):
        lr_scheduler.LRScheduler(warmup_steps=2.0)
    with pytest.raises(ValueError, match='Schedule step must be greater or equal than 1'):
        lr_scheduler.FactorScheduler(step=0)
    with pytest.raises(ValueError, match='Factor must be no more than 1'):
        lr_scheduler.FactorScheduler(step=1, factor=2)
    with pytest.raises(ValueError, match='increasing integer list'):
        lr_scheduler.MultiFactorScheduler([3, 2])
    with pytest.raises(AssertionError):
        lr_scheduler.MultiFactorScheduler(3)
    with pytest.raises(ValueError, match='strictly positive'):
        lr_scheduler.PolyScheduler(max_update=0)
    with pytest.raises(ValueError, match='strictly positive'):
        lr_scheduler.CosineScheduler(max_update=0)
    with pytest.raises(NotImplementedError):
        lr_scheduler.LRScheduler()(1)


def test_with_an_optimizer():
    sched = lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.SGD(lr_scheduler=sched)
    assert opt.lr is None and opt.learning_rate == 1.0
    opt.num_update = 3
    assert opt.learning_rate == 0.25
    with pytest.warns(UserWarning, match='overwritten by ``learning_rate``'):
        opt = mx.optimizer.SGD(learning_rate=0.3,
                               lr_scheduler=lr_scheduler.CosineScheduler(5, base_lr=1.0))
    assert opt.lr_scheduler.base_lr == 0.3


def test_factor_scheduler_catches_up_any_distance_at_once(monkeypatch):
    # a count far behind (resumed training, a corrupt states file) is not a loop of that length
    far = lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    assert far(10 ** 15) == 1e-8 and far.count == 10 ** 15 - 1
    # the computed steps give what stepping one by one gives
    computed = lr_scheduler.FactorScheduler(step=3, factor=0.9999, base_lr=1.0)
    stepped = lr_scheduler.FactorScheduler(step=3, factor=0.9999, base_lr=1.0)
    computed(60001)
    monkeypatch.setattr(lr_scheduler, '_STEPS_LOOPED', 10 ** 9)
    stepped(60001)
    assert computed.count == stepped.count == 60000
    assert computed.base_lr == pytest.approx(stepped.base_lr, rel=1e-9)
