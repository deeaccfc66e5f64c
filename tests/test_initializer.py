"""mx.init: names, dumps() strings and create() as MXNet 1.9.1, and what each initializer draws.

Random numbers cannot match MXNet's generator: draws are checked by their statistics (bounds,
variance per factor_type) and deterministic initializers (Bilinear, LSTMBias, Orthogonal's
structure) by their values. Literals marked "MXNet" were printed by MXNet 1.9.1.
"""
import logging
import warnings

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import initializer, nd
from hybridlib.base import MXNetError
from hybridlib.initializer import InitDesc


def fill(init, shape, name='x_weight', dtype='float32', attrs=None):
    arr = nd.zeros(shape, dtype=dtype)
    init(InitDesc(name, attrs), arr)
    return arr.asnumpy()


def test_mx_init_is_the_initializer_module():
    assert mx.init is initializer
    for name in ('InitDesc', 'Initializer', 'register', 'alias', 'create', 'Load', 'Mixed',
                 'Zero', 'One', 'Constant', 'Uniform', 'Normal', 'Orthogonal', 'Xavier',
                 'MSRAPrelu', 'Bilinear', 'LSTMBias'):
        assert hasattr(mx.init, name), name


# MXNet: init.dumps()
DUMPS = [
    (lambda: mx.init.Zero(), '["zero", {}]'),
    (lambda: mx.init.One(), '["one", {}]'),
    (lambda: mx.init.Constant(2), '["constant", {"value": 2}]'),
    (lambda: mx.init.Constant(np.ones((2,))), '["constant", {"value": [1.0, 1.0]}]'),
    (lambda: mx.init.Constant(nd.ones((2,))), '["constant", {"value": [1.0, 1.0]}]'),
    (lambda: mx.init.Uniform(), '["uniform", {"scale": 0.07}]'),
    (lambda: mx.init.Uniform(1), '["uniform", {"scale": 1}]'),
    (lambda: mx.init.Normal(), '["normal", {"sigma": 0.01}]'),
    (lambda: mx.init.Orthogonal(), '["orthogonal", {"scale": 1.414, "rand_type": "uniform"}]'),
    (lambda: mx.init.Xavier(),
     '["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 3}]'),
    (lambda: mx.init.Xavier('gaussian', 'in', 2.34),
     '["xavier", {"rnd_type": "gaussian", "factor_type": "in", "magnitude": 2.34}]'),
    (lambda: mx.init.MSRAPrelu(), '["msraprelu", {"factor_type": "avg", "slope": 0.25}]'),
    (lambda: mx.init.MSRAPrelu('in', 0.1), '["msraprelu", {"factor_type": "in", "slope": 0.1}]'),
    (lambda: mx.init.Bilinear(), '["bilinear", {}]'),
    (lambda: mx.init.LSTMBias(), '["lstmbias", {"forget_bias": 1.0}]'),
    (lambda: mx.init.LSTMBias(0.5), '["lstmbias", {"forget_bias": 0.5}]'),
]


@pytest.mark.parametrize('make,expected', DUMPS, ids=[d[1].split('"')[1] + str(i)
                                                      for i, d in enumerate(DUMPS)])
def test_dumps_match_mxnet_and_round_trip(make, expected):
    init = make()
    assert init.dumps() == expected
    again = mx.init.create(expected)
    assert type(again) is type(init) and again.dumps() == expected


def test_constant_dumps_a_list_value():
    # MXNet fails here ('list' object has no attribute 'asnumpy'); the value is kept intact
    init = mx.init.Constant([1, 2])
    assert init.dumps() == '["constant", {"value": [1, 2]}]'
    assert init._kwargs['value'] == [1, 2]


@pytest.mark.parametrize('name,klass', [
    ('xavier', 'Xavier'), ('Xavier', 'Xavier'), ('zeros', 'Zero'), ('zero', 'Zero'),
    ('ones', 'One'), ('one', 'One'), ('uniform', 'Uniform'), ('normal', 'Normal'),
    ('msraprelu', 'MSRAPrelu'), ('orthogonal', 'Orthogonal'), ('bilinear', 'Bilinear'),
    ('lstmbias', 'LSTMBias')])
def test_create_by_name(name, klass):
    assert type(mx.init.create(name)).__name__ == klass


def test_create_forms():
    assert mx.init.create('xavier', magnitude=2).magnitude == 2
    assert mx.init.create('["xavier", {"magnitude": 2}]').dumps() == \
        '["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 2}]'
    assert mx.init.create({'initializer': 'normal', 'sigma': 0.5}).dumps() == \
        '["normal", {"sigma": 0.5}]'
    assert mx.init.create('{"initializer": "normal", "sigma": 0.5}').sigma == 0.5
    assert mx.init.create(initializer='zeros').dumps() == '["zero", {}]'
    init = mx.init.One()
    assert mx.init.create(init) is init
    with pytest.raises(TypeError, match='missing 1 required positional argument'):
        mx.init.create('constant')


@pytest.mark.parametrize('args,kwargs,message', [
    (('foo',), {}, 'foo is not registered. Please register with initializer.register first'),
    ((mx.init.Zero(),), {'a': 1},
     'initializer is already an instance. Additional arguments are invalid'),
    ((3,), {}, 'initializer must be of string type'),
    ((None,), {}, 'initializer must be of string type'),
    (('["xavier", {}]',), {'magnitude': 3}, 'additional arguments are invalid'),
])
def test_create_errors(args, kwargs, message):
    # MXNet asserts: AssertionError there, also an MXNetError here
    with pytest.raises(AssertionError, match=message) as info:
        mx.init.create(*args, **kwargs)
    assert isinstance(info.value, MXNetError)


def test_register_alias_and_override_warning():
    @mx.init.register
    @mx.init.alias('hl_test_twos')
    class HlTestTwo(mx.init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 2

    assert type(mx.init.create('hltesttwo')) is HlTestTwo
    assert fill(mx.init.create('HL_TEST_TWOS'), (2,)).tolist() == [2, 2]
    with pytest.warns(UserWarning, match='is overriding existing initializer'):
        @mx.init.register
        class HlTestTwo(mx.init.Initializer):         # noqa: F811 - the same name on purpose
            pass
    with pytest.raises(AssertionError, match='Can only register subclass of Initializer'):
        mx.init.register(int)


def test_equality_by_type_and_arguments():
    assert mx.init.Xavier() == mx.init.Xavier()
    assert mx.init.Xavier() != mx.init.Xavier(magnitude=2)
    assert mx.init.Zero() != mx.init.One() and mx.init.Zero() != 'zeros'
    with pytest.raises(TypeError, match='unhashable'):
        hash(mx.init.Zero())
    assert repr(mx.init.Normal(0.5)) == 'Normal(sigma=0.5)'


def test_deterministic_fills():
    assert fill(mx.init.Zero(), (2, 2)).tolist() == [[0, 0], [0, 0]]
    assert fill(mx.init.One(), (3,), dtype='int32').tolist() == [1, 1, 1]
    assert fill(mx.init.Constant(3), (4,)).tolist() == [3, 3, 3, 3]
    assert fill(mx.init.Constant([1, 2]), (2, 2)).tolist() == [[1, 2], [1, 2]]
    assert fill(mx.init.Constant(np.arange(2.0)), (2,)).tolist() == [0, 1]
    assert fill(mx.init.Constant(nd.array([5, 6])), (2,)).tolist() == [5, 6]
    # MXNet: [0, 0, 2.5, 2.5, 0, 0, 0, 0] (the forget gate is the second quarter)
    assert fill(mx.init.LSTMBias(2.5), (8,), 'x_i2h_weight').tolist() == [0, 0, 2.5, 2.5, 0, 0,
                                                                          0, 0]


# MXNet: Bilinear()(InitDesc('x_weight'), nd.zeros(shape)).asnumpy().tolist()
BILINEAR_4x4 = [[0.0625, 0.1875, 0.1875, 0.0625], [0.1875, 0.5625, 0.5625, 0.1875],
                [0.1875, 0.5625, 0.5625, 0.1875], [0.0625, 0.1875, 0.1875, 0.0625]]
BILINEAR_3x5 = [[0.1111111119389534, 0.2222222238779068, 0.3333333432674408, 0.2222222238779068,
                 0.1111111119389534],
                [0.2222222238779068, 0.4444444477558136, 0.6666666865348816, 0.4444444477558136,
                 0.2222222238779068],
                [0.3333333432674408, 0.6666666865348816, 1.0, 0.6666666865348816,
                 0.3333333432674408]]


def test_bilinear_values_match_mxnet():
    assert fill(mx.init.Bilinear(), (1, 1, 4, 4)).tolist() == [[BILINEAR_4x4]]
    out = fill(mx.init.Bilinear(), (2, 1, 3, 5))
    assert out.tolist() == [[BILINEAR_3x5], [BILINEAR_3x5]]
    with pytest.raises(ValueError, match='4-d'):
        fill(mx.init.Bilinear(), (3, 3))


def test_uniform_and_normal_statistics():
    mx.random.seed(7)
    u = fill(mx.init.Uniform(0.5), (200, 100))
    assert u.min() >= -0.5 and u.max() <= 0.5 and u.min() < -0.49 and u.max() > 0.49
    assert abs(u.mean()) < 0.01 and abs(u.var() - 0.25 / 3) < 0.003
    assert fill(mx.init.Uniform(), (1000,)).max() <= 0.07
    n = fill(mx.init.Normal(2.0), (200, 100))
    assert abs(n.mean()) < 0.05 and abs(n.std() - 2.0) < 0.05
    h = fill(mx.init.Normal(), (100, 100), dtype='float16')
    assert h.dtype == np.float16 and abs(h.std() - 0.01) < 0.001


def test_seed_makes_draws_repeatable():
    mx.random.seed(3)
    a = fill(mx.init.Xavier(), (4, 5))
    mx.random.seed(3)
    assert (fill(mx.init.Xavier(), (4, 5)) == a).all()


@pytest.mark.parametrize('factor_type', ['avg', 'in', 'out'])
@pytest.mark.parametrize('rnd_type', ['uniform', 'gaussian'])
def test_xavier_scale_per_factor_type(rnd_type, factor_type):
    mx.random.seed(11)
    shape = (64, 16, 3, 3)                  # fan_in = 16 * 9, fan_out = 64 * 9
    factor = {'avg': (144 + 576) / 2, 'in': 144, 'out': 576}[factor_type]
    scale = np.sqrt(2.0 / factor)
    out = fill(mx.init.Xavier(rnd_type, factor_type, magnitude=2), shape)
    if rnd_type == 'uniform':
        assert np.abs(out).max() <= scale and np.abs(out).max() > 0.98 * scale
        assert abs(out.var() / (scale ** 2 / 3) - 1) < 0.05
    else:
        assert abs(out.std() / scale - 1) < 0.05
    assert abs(out.mean()) < 0.05 * scale


def test_xavier_errors():
    with pytest.raises(ValueError, match='Xavier initializer cannot be applied to vector '
                       'x_weight. It requires at least 2D.'):
        fill(mx.init.Xavier(), (3,))
    # MXNet raises these on the first fill; earlier here
    with pytest.raises(ValueError, match='Unknown random type'):
        mx.init.Xavier(rnd_type='foo')
    with pytest.raises(ValueError, match='Incorrect factor type'):
        mx.init.Xavier(factor_type='foo')


def test_msraprelu_is_gaussian_xavier_with_the_slope_magnitude():
    init = mx.init.MSRAPrelu('in', 0.1)
    # MXNet: rnd_type, factor_type, magnitude, _kwargs
    assert (init.rnd_type, init.factor_type) == ('gaussian', 'in')
    assert init.magnitude == 1.9801980198019802
    assert init._kwargs == {'factor_type': 'in', 'slope': 0.1}
    mx.random.seed(5)
    out = fill(mx.init.MSRAPrelu(), (256, 64))
    assert abs(out.std() / np.sqrt(2 / 1.0625 / 160) - 1) < 0.05


@pytest.mark.parametrize('shape', [(3, 8), (8, 3), (4, 2, 3, 3), (5, 5)])
@pytest.mark.parametrize('rand_type', ['uniform', 'normal'])
def test_orthogonal_is_orthogonal(shape, rand_type):
    out = fill(mx.init.Orthogonal(scale=2.0, rand_type=rand_type), shape)
    flat = out.reshape(shape[0], -1).astype(np.float64) / 2.0
    gram = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(gram, np.eye(len(gram)), atol=1e-5)


def test_orthogonal_bad_rand_type():
    # MXNet: UnboundLocalError on the first fill
    with pytest.raises(ValueError, match="rand_type must be 'uniform' or 'normal'"):
        mx.init.Orthogonal(rand_type='foo')


def test_call_dispatch_on_the_name_suffix():
    init = mx.init.Constant(3)
    assert fill(init, (2,), 'x_weight').tolist() == [3, 3]
    assert fill(init, (2,), 'x_bias').tolist() == [0, 0]                 # MXNet
    assert fill(init, (2,), 'x_beta').tolist() == [0, 0]
    assert fill(init, (2,), 'x_gamma').tolist() == [1, 1]
    assert fill(init, (2,), 'x_min').tolist() == [0, 0]
    assert fill(init, (2,), 'x_max').tolist() == [1, 1]
    with pytest.raises(ValueError, match='Unknown initialization pattern for x_moving_mean. '
                       'Default initialization is now limited to "weight", "bias", "gamma" '
                       r'\(1.0\), and "beta" \(0.0\).Please use mx.sym.Variable'):
        fill(init, (2,), 'x_moving_mean')


def test_call_prefers_the_init_attribute():
    for attr in ('ones', '["one", {}]', mx.init.One()):
        assert fill(mx.init.Zero(), (2,), 'x_bias', attrs={'__init__': attr}).tolist() == [1, 1]
    desc = InitDesc('x_weight')
    default = mx.init.Zero()
    default(desc, nd.zeros((1,)))
    assert desc.global_init is default


def test_legacy_string_names():
    init = mx.init.Uniform()
    cases = [('w_moving_var', (2,), [1, 1]), ('w_moving_mean', (2,), [0, 0]),
             ('w_moving_inv_var', (2,), [0, 0]), ('w_moving_avg', (2,), [0, 0]),
             ('stn_loc_weight', (2,), [0, 0]), ('w_gamma', (2,), [1, 1]),
             ('stn_loc_bias', (6,), [1, 0, 0, 0, 1, 0])]                # MXNet
    for name, shape, expected in cases:
        arr = nd.zeros(shape) + 7
        with pytest.warns(DeprecationWarning, match=r'init\(str, NDArray\) has been deprecated'):
            init(name, arr)
        assert arr.asnumpy().tolist() == expected, name
    arr = nd.zeros((1, 1, 4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        init('upsampling0_weight', arr)
        assert arr.asnumpy().tolist() == [[BILINEAR_4x4]]
        with pytest.raises(TypeError, match='name must be string'):
            init(3, arr)
        with pytest.raises(TypeError, match='arr must be NDArray'):
            init('w_weight', np.zeros(3))
        with pytest.raises(ValueError, match='Unknown initialization pattern for foo'):
            init('foo', arr)


def test_mixed():
    mixed = mx.init.Mixed(['.*bias', '.*'], [mx.init.Zero(), mx.init.One()])
    assert not isinstance(mixed, mx.init.Initializer)                    # MXNet
    arr = nd.zeros((2,)) + 5
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        mixed('fc_bias', arr)
        assert arr.asnumpy().tolist() == [0, 0]
        mixed('fc_weight', arr)
        assert arr.asnumpy().tolist() == [1, 1]
        with pytest.raises(ValueError, match='Parameter name fc_weight did not match any '
                           'pattern'):
            mx.init.Mixed(['.*bias'], [mx.init.Zero()])('fc_weight', arr)
    with pytest.raises(AssertionError, match='one initializer per pattern'):
        mx.init.Mixed(['a'], [])


def test_load(tmp_path):
    params = {'arg:fc_weight': nd.ones((2,)) * 7, 'aux:fc_mean': nd.ones((2,)) * 3,
              'fc_bias': nd.ones((2,))}
    load = mx.init.Load(params, default_init=mx.init.Zero())
    assert sorted(load.param) == ['fc_bias', 'fc_mean', 'fc_weight']
    arr = nd.zeros((2,))
    load('fc_weight', arr)
    assert arr.asnumpy().tolist() == [7, 7]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        load('fc_gamma', arr)                 # the default, by MXNet's legacy name rules
    assert arr.asnumpy().tolist() == [1, 1]
    with pytest.raises(AssertionError, match=r'Parameter fc_weight cannot be initialized from '
                       r'loading. Shape mismatch, target \(3,\) vs loaded \(2,\)'):
        load('fc_weight', nd.zeros((3,)))
    with pytest.raises(AssertionError, match='Cannot Initialize b. Not found in loaded param '
                       'and no default Initializer is provided.'):
        mx.init.Load({'a': nd.ones((1,))})('b', nd.zeros((1,)))
    with pytest.raises(AssertionError, match='dict of named arrays'):
        mx.init.Load([nd.ones((1,))])
    nd.save(str(tmp_path / 'l.params'), params)
    assert sorted(mx.init.Load(str(tmp_path / 'l.params')).param) == sorted(load.param)


def test_verbose_logs_a_statistic(caplog):
    init = mx.init.One().set_verbosity(True)
    with caplog.at_level(logging.INFO):
        fill(init, (2, 2), 'v_weight')
        fill(init, (4,), 'v_bias', attrs={'__init__': 'zeros'})
    assert [r.getMessage() for r in caplog.records] == ['Initialized v_weight as weight: 1.0',
                                                        'Initialized v_bias as zeros: 0.0']
    init.set_verbosity(True, print_func=lambda arr: 'custom')
    with caplog.at_level(logging.INFO):
        fill(init, (2,), 'w_weight')
    assert caplog.records[-1].getMessage() == 'Initialized w_weight as weight: custom'


def _fused(init, size, global_init):
    arr = mx.nd.zeros((size,))
    desc = mx.init.InitDesc('parameters', attrs={'__init__': init.dumps()},
                            global_init=global_init)
    init(desc, arr)
    return arr.asnumpy()


def test_fused_rnn_initializer_matches_mxnet():
    # a 2-layer bidirectional LSTM over 3 features: MXNet 1.9.1 fills the 0.5 weights, zero
    # biases and 1.5 forget biases (i2h and h2h) at these offsets
    a = _fused(mx.init.FusedRNN(mx.init.Constant(0.5), 2, 2, 'lstm', True, forget_bias=1.5),
               4 * 2 * (3 + 2) * 2 + 4 * 2 * (4 + 2) * 2 + 2 * 2 * 2 * 4 * 2, mx.init.Uniform())
    assert np.nonzero(a == 1.5)[0].tolist() == [178, 179, 186, 187, 194, 195, 202, 203, 210,
                                                211, 218, 219, 226, 227, 234, 235]
    assert ((a == 0.5).sum(), (a == 0).sum(), a.size) == (176, 48, 240)
    # no initializer of its own: the global one fills the weights, biases are zero
    b = _fused(mx.init.FusedRNN(None, 2, 1, 'gru', False), 3 * 2 * (3 + 2) + 2 * 3 * 2,
               mx.init.One())
    assert b.tolist() == [1.0] * 30 + [0.0] * 12


def test_fused_rnn_initializer_scales_each_matrix():
    # Xavier sees each gate's (hidden, inputs) matrix, not the flat vector
    mx.random.seed(3)
    a = _fused(mx.init.FusedRNN(mx.init.Xavier(magnitude=3), 4, 1, 'rnn_tanh'), 4 * 6 + 4 * 4 + 8,
               mx.init.Uniform())
    i2h, h2h = a[:24], a[24:40]
    assert 0.5 < np.abs(i2h).max() <= np.sqrt(3 / 5)
    assert np.sqrt(3 / 5) < np.abs(h2h).max() <= np.sqrt(3 / 4)
    assert (a[40:] == 0).all()
    with pytest.raises(mx.MXNetError, match='do not fit'):
        _fused(mx.init.FusedRNN(None, 4, 1, 'lstm'), 7, mx.init.One())
