"""Parameter, Constant and ParameterDict as Gluon 1.9.1 has them.

Messages, reprs and defaults were printed by MXNet 1.9.1 and pasted here; files in tests/data
were written by MXNet (tests/data/make_oracle_files.py). cpu(0) and cpu(1) are distinct
contexts, which is how several devices are tested without GPUs.
"""
import json
import logging
import os
import re

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd
from hybridlib.base import MXNetError, NotSupportedError
from hybridlib.parameter import DeferredInitializationError, shape_is_known

DATA = os.path.join(os.path.dirname(__file__), 'data')
P = gluon.Parameter
NAMING = ('For more info on naming, please see '
          'https://mxnet.io/api/python/docs/tutorials/packages/gluon/blocks/naming.html')
NOT_INITIALIZED = ("Parameter 'w' has not been initialized. Note that you should initialize "
                   'parameters and create Trainer with Block.collect_params() instead of '
                   'Block.params because the later does not include Parameters of nested '
                   'child Blocks')
DEFERRED = ("Parameter 'w' has not been initialized yet because initialization was deferred. "
            'Actual initialization happens during the first forward pass. Please pass one batch '
            'of data through the network before accessing Parameters. You can also avoid '
            'deferred initialization by specifying in_units, num_features, etc., for network '
            'layers.')


def _expected():
    with open(os.path.join(DATA, 'parameters-expected.json')) as f:
        return json.load(f)


def raises(kind, message):
    """pytest.raises for an exact message (MXNet's), not a regular expression."""
    return pytest.raises(kind, match='^' + re.escape(message) + '$')


def backward(param, factor):
    with autograd.record():
        y = (param.data() * factor).sum()
    y.backward()


# -- construction, attributes ----------------------------------------------------------------
def test_defaults_and_repr():
    p = P('w', shape=(2, 3))
    assert (p.grad_req, p.lr_mult, p.wd_mult, p.init, p.shape) == ('write', 1.0, 1.0, None,
                                                                   (2, 3))
    assert p.dtype is np.float32
    # MXNet's reprs: the dtype as it was given
    assert repr(p) == "Parameter w (shape=(2, 3), dtype=<class 'numpy.float32'>)"
    assert repr(P('w', shape=(2, 3), dtype='float16')) == \
        'Parameter w (shape=(2, 3), dtype=float16)'
    assert repr(P('w', shape=3)) == "Parameter w (shape=(3,), dtype=<class 'numpy.float32'>)"
    assert repr(P('w')) == "Parameter w (shape=None, dtype=<class 'numpy.float32'>)"
    assert P('w', shape=[2, 3]).shape == (2, 3)


def test_construction_errors():
    with raises(AssertionError, "grad_req must be one of 'write', 'add', or 'null', but got "
                "'foo'") as info:
        P('w', grad_req='foo')
    assert isinstance(info.value, MXNetError)
    with raises(AssertionError, "stype for Parameter 'w' must be one of 'default', "
                "'row_sparse', or 'csr', but got 'foo'"):
        P('w', stype='foo')
    with pytest.raises(NotSupportedError, match='sparse storage'):
        P('w', grad_stype='row_sparse')
    with pytest.raises(MXNetError):
        P('w', dtype='not-a-dtype')
    p = P('w', shape=(2,))
    p.initialize()
    with raises(RuntimeError, 'Cannot return a copy of Parameter w via row_sparse_data() '
                'because its storage type is default. Please use data() instead.'):
        p.row_sparse_data(nd.array([0]))


def test_var_attributes_match_mxnet():
    for key, case in _expected()['vars'].items():
        kwargs = dict(case['kwargs'])
        if isinstance(kwargs.get('init'), dict):
            kwargs['init'] = mx.init.create(kwargs['init']['dumps'])
        param = P(**kwargs)
        assert json.loads(param.var().tojson()) == case['var'], key
        assert param.var() is param.var()


def test_grad_req_switching():
    p = P('w', shape=(2, 2))
    p.initialize()
    p.grad_req = 'add'
    assert p.grad().asnumpy().tolist() == [[0, 0], [0, 0]]
    backward(p, 2)
    backward(p, 2)
    assert p.grad().asnumpy().tolist() == [[4, 4], [4, 4]]             # MXNet: accumulated
    data = p.data()
    p.grad_req = 'null'
    assert p.data() is not data                                        # detached
    for get in (p.grad, p.list_grad):
        with raises(RuntimeError, "Cannot get gradient array for Parameter 'w' because "
                    "grad_req='null'"):
            get()
    p.zero_grad()                                                      # nothing to do
    p.grad_req = 'write'
    assert p.grad().asnumpy().tolist() == [[0, 0], [0, 0]]
    backward(p, 3)
    backward(p, 3)
    assert p.grad().asnumpy().tolist() == [[3, 3], [3, 3]]
    p.zero_grad()
    assert p.grad().asnumpy().tolist() == [[0, 0], [0, 0]]
    q = P('w', shape=(2,), differentiable=False)
    q.grad_req = 'write'
    assert q.grad_req == 'null'


def test_shape_merging():
    q = P('q')
    q.shape = (4, 0)
    assert q.shape == (4, 0)
    q = P('q', shape=(0, 3))
    q.shape = (4, 3)
    assert q.shape == (4, 3)
    # MXNet refuses (the new shape may only fill the old one's unknowns); merged here
    q = P('q', shape=(0, 3))
    q.shape = (4, 0)
    assert q.shape == (4, 3)
    with raises(AssertionError, 'Expected shape (3, 3) is incompatible with given shape '
                '(4, 3).'):
        q.shape = (3, 3)
    with raises(AssertionError, 'Expected shape (4, 3, 1) is incompatible with given shape '
                '(4, 3).'):
        q.shape = (4, 3, 1)
    assert not shape_is_known(None) and not shape_is_known(()) and not shape_is_known((2, 0))
    assert shape_is_known((2, 1))


def test_cast_and_dtype():
    p = P('w', shape=(2,))
    p.initialize()
    v = p.var()
    p.cast('float16')
    assert p.dtype == 'float16' and p.data().dtype is np.float16 and p.grad().dtype is np.float16
    assert repr(p) == 'Parameter w (shape=(2,), dtype=float16)'
    # MXNet keeps the old variable (with __dtype__ of float32); it is remade here
    assert p.var() is not v and p.var().attr('__dtype__') == '2'
    p.dtype = np.float64                                               # setting casts
    assert p.dtype is np.float64 and p.data().dtype is np.float64
    backward(p, 2)
    assert p.grad().asnumpy().tolist() == [2, 2]
    p.lr_mult, p.wd_mult = 0.5, 0
    assert (p.lr_mult, p.wd_mult) == (0.5, 0)


# -- initialization ---------------------------------------------------------------------------
def test_init_precedence():
    # MXNet: initialize's init > the parameter's own init > default_init
    p = P('w', shape=(2,), init=mx.init.One())
    p.initialize(init=mx.init.Zero())
    assert p.data().asnumpy().tolist() == [0, 0]
    p = P('w', shape=(2,), init=mx.init.One())
    p.initialize(default_init=mx.init.Zero())
    assert p.data().asnumpy().tolist() == [1, 1]
    p = P('w', shape=(2,))
    p.initialize(init=mx.init.One(), default_init=mx.init.Zero())
    assert p.data().asnumpy().tolist() == [1, 1]
    p = P('w', shape=(2,), init='ones')
    p.initialize()
    assert p.data().asnumpy().tolist() == [1, 1]
    # the default (Uniform) fills any name, biases too (MXNet: no "unknown pattern" error)
    for name in ('w_bias', 'foo'):
        p = P(name, shape=(100,))
        p.initialize()
        values = p.data().asnumpy()
        assert np.abs(values).max() <= 0.07 and values.std() > 0.01


def test_force_reinit_warning():
    p = P('w', shape=(2,), init='zeros')
    p.initialize()
    with pytest.warns(UserWarning) as record:
        p.initialize(init=mx.init.One())
    assert str(record[0].message) == ("Parameter 'w' is already initialized, ignoring. Set "
                                      'force_reinit=True to re-initialize.')
    assert record[0].filename == __file__                    # points at the caller
    assert p.data().asnumpy().tolist() == [0, 0]
    p.initialize(init=mx.init.One(), force_reinit=True)
    assert p.data().asnumpy().tolist() == [1, 1]


def test_uninitialized_errors():
    p = P('w', shape=(2, 3))
    for get in (p.data, p.list_data, p.grad, p.list_grad):
        with raises(RuntimeError, NOT_INITIALIZED):
            get()
    with raises(RuntimeError, "Parameter 'w' has not been initialized"):
        p.list_ctx()
    with raises(AssertionError, "Parameter 'w' has not been initialized"):
        p.set_data(nd.ones((2, 3)))
    with raises(ValueError, "Cannot reset context for Parameter 'w' because it has not been "
                'initialized.'):
        p.reset_ctx(mx.cpu())
    with raises(ValueError, "Cannot initialize Parameter 'w' because it has invalid shape: "
                '(0, 3).'):
        P('w', shape=(0, 3)).initialize()


def test_deferred_initialization():
    p = P('w', shape=(0, 2), allow_deferred_init=True, init='ones')
    p.initialize(ctx=mx.cpu(1))
    for get in (p.data, p.list_data, p.grad, p.list_grad):
        with raises(DeferredInitializationError, DEFERRED):
            get()
    assert isinstance(DeferredInitializationError('x'), MXNetError)
    assert p.list_ctx() == [mx.cpu(1)]
    with raises(AssertionError, "Cannot initialize Parameter 'w' because it has invalid shape: "
                '(0, 2). Please specify in_units, in_channels, etc for `Block`s.'):
        p._finish_deferred_init()
    p.initialize(ctx=mx.cpu(1))
    p.shape = (3, 2)
    p._finish_deferred_init()
    assert p.data().context == mx.cpu(1) and p.data().asnumpy().tolist() == [[1, 1]] * 3
    assert p.grad().shape == (3, 2)


def test_set_data_before_deferred_init_finishes():
    p = P('w', shape=(0, 2), allow_deferred_init=True, init='ones')
    p.initialize()
    p.set_data(nd.array([[5, 6]]))
    assert p.shape == (1, 2)
    p._finish_deferred_init()
    assert p.data().asnumpy().tolist() == [[5, 6]]
    with raises(AssertionError, 'Expected shape (3, 2) is incompatible with given shape '
                '(1, 2).'):
        p.set_data(nd.ones((3, 2)))


def test_several_contexts():
    p = P('w', shape=(2,), init='zeros')
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    assert p.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    assert [d.context for d in p.list_data()] == [mx.cpu(0), mx.cpu(1)]
    assert [g.context for g in p.list_grad()] == [mx.cpu(0), mx.cpu(1)]
    assert p.data().context == mx.cpu(0)                    # the current context's copy
    with mx.cpu(1):
        assert p.data() is p.data(mx.cpu(1))
    assert p.data(mx.cpu_pinned(0)) is p.data(mx.cpu(0))     # as MXNet: same memory
    with raises(RuntimeError, "Parameter 'w' was not initialized on context cpu(2). It was "
                'only initialized on [cpu(0), cpu(1)].'):
        p.data(mx.cpu(2))
    p.data(mx.cpu(1))[:] = 3                                 # copies are independent
    assert p.data(mx.cpu(0)).asnumpy().tolist() == [0, 0]
    p.set_data(nd.array([1, 2]))
    assert [d.asnumpy().tolist() for d in p.list_data()] == [[1, 2], [1, 2]]


@pytest.mark.skipif(mx.num_gpus() == 0, reason='needs a GPU and cupy')
def test_gpu_and_cpu_copies():
    p = P('w', shape=(2,), init='ones')
    p.initialize(ctx=[mx.gpu(0), mx.cpu(0)])
    assert p.data(mx.gpu(0)).context == mx.gpu(0) and p.grad(mx.gpu(0)).context == mx.gpu(0)
    with mx.gpu(0):
        assert p.data() is p.data(mx.gpu(0))
        backward(p, 2)
    assert p.grad(mx.gpu(0)).asnumpy().tolist() == [2, 2]
    p.data(mx.gpu(0))[:] = 3
    assert p._reduce().context == mx.cpu(0) and p._reduce().asnumpy().tolist() == [2, 2]
    p.reset_ctx(mx.gpu(0))
    assert p.list_ctx() == [mx.gpu(0)] and p.data().asnumpy().tolist() == [2, 2]


def test_reduce_and_reset_ctx():
    p = P('w', shape=(2,))
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    p.data(mx.cpu(0))[:] = 1
    p.data(mx.cpu(1))[:] = 3
    reduced = p._reduce()
    assert reduced.asnumpy().tolist() == [2, 2] and reduced.context == mx.cpu(0)  # the mean
    p.reset_ctx(mx.cpu(2))
    assert p.list_ctx() == [mx.cpu(2)] and p.data().asnumpy().tolist() == [2, 2]
    assert p.grad().context == mx.cpu(2)
    backward(p, 5)
    assert p.grad().asnumpy().tolist() == [5, 5]
    p.reset_ctx(None)
    assert p.list_ctx() == [mx.cpu(0)]
    q = P('w', shape=(0,), allow_deferred_init=True)
    q.initialize(ctx=mx.cpu(1))
    q.reset_ctx([mx.cpu(3)])
    assert q.list_ctx() == [mx.cpu(3)]


# -- loading ----------------------------------------------------------------------------------
def test_load_init_checks():
    p = P('w', shape=(0, 3))
    with raises(AssertionError, "Failed loading Parameter 'w' from saved params: shape "
                'incompatible expected (0, 3) vs saved (2, 4)'):
        p._load_init(nd.ones((2, 4)), None)
    # MXNet zips the shapes and takes a value with more dims
    with raises(AssertionError, "Failed loading Parameter 'w' from saved params: shape "
                'incompatible expected (0, 3) vs saved (2, 3, 1)'):
        p._load_init(nd.ones((2, 3, 1)), None)
    with raises(AssertionError, "Failed loading Parameter 'w' from saved params: dtype "
                "incompatible expected <class 'numpy.float32'> vs saved <class 'numpy.float64'>"
                '. Set cast_dtype=True to cast the dtype of saved params.'):
        p._load_init(nd.ones((2, 3), dtype='float64'), None)
    p._load_init(nd.ones((2, 3), dtype='float64'), mx.cpu(1), cast_dtype=True)
    assert (p.shape, p.dtype, p.list_ctx()) == ((2, 3), np.float32, [mx.cpu(1)])
    assert p.data(mx.cpu(1)).dtype is np.float32 and p.grad(mx.cpu(1)).shape == (2, 3)
    with raises(AssertionError, "Failed to load Parameter 'w' on [cpu(0)] because it was "
                'previous initialized on [cpu(1)].'):
        p._load_init(nd.ones((2, 3)), mx.cpu(0))
    p._load_init(nd.zeros((2, 3)), [mx.cpu(1)])
    assert p.data().asnumpy().sum() == 0

    p = P('w', shape=(0, 3))
    p._load_init(nd.ones((2, 3), dtype='float64'), None, cast_dtype=True, dtype_source='saved')
    assert (p.shape, p.dtype, p.data().dtype, p.list_ctx()) == \
        ((2, 3), np.float64, np.float64, [mx.cpu(0)])
    with pytest.raises(AssertionError, match='dtype_source'):
        p._load_init(nd.ones((2, 3)), None, cast_dtype=True, dtype_source='foo')
    p = P('w')
    p._load_init(nd.ones((2, 3)), None)
    assert p.shape == (2, 3)              # MXNet leaves it None

    p = P('w', shape=(0, 3), allow_deferred_init=True)
    p.initialize(ctx=[mx.cpu(1)])
    with raises(AssertionError, "Failed to load Parameter 'w' on [cpu(0)] because it was "
                'previous initialized on [cpu(1)].'):
        p._load_init(nd.ones((2, 3)), [mx.cpu(0)])
    p._load_init(nd.ones((2, 3)), None)
    assert p.list_ctx() == [mx.cpu(1)] and not p._deferred_init


# -- Constant ---------------------------------------------------------------------------------
def test_constant():
    c = gluon.Constant('c', [[1, 2], [3, 4]])
    assert repr(c) == "Constant c (shape=(2, 2), dtype=<class 'numpy.float32'>)"
    assert c.grad_req == 'null' and c.dtype is np.float32
    assert re.fullmatch(r'Constant_c_\d+', c.init)
    assert c.var().attr('__init__') == c.init
    with pytest.warns(UserWarning) as record:
        c.grad_req = 'write'
    assert str(record[0].message) == ('Constant parameter "c" does not support grad_req other '
                                      'than "null", and new value "write" is ignored.')
    assert c.grad_req == 'null'
    c.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    assert c.data(mx.cpu(1)).asnumpy().tolist() == [[1, 2], [3, 4]]
    with raises(RuntimeError, "Cannot get gradient array for Parameter 'c' because "
                "grad_req='null'"):
        c.grad()
    arr = nd.zeros((2, 2))                   # a graph's __init__ attribute finds the value
    mx.init.create(c.init)._init_weight('c', arr)
    assert arr.asnumpy().tolist() == [[1, 2], [3, 4]]
    c.set_data(nd.ones((2, 2)))
    assert c.data().asnumpy().tolist() == [[1, 1], [1, 1]]
    assert gluon.Constant('i', nd.array([1, 2], dtype='int32')).dtype is np.int32


# -- ParameterDict ----------------------------------------------------------------------------
def test_parameterdict_basics_and_repr():
    pd = gluon.ParameterDict('net_')
    a = pd.get('weight', shape=(2, 3))
    b = pd.get('bias', shape=(3,), init='zeros')
    assert pd.prefix == 'net_' and list(pd.keys()) == ['net_weight', 'net_bias']
    assert list(pd.values()) == [a, b]
    assert list(pd.items()) == [('net_weight', a), ('net_bias', b)]
    assert pd['net_weight'] is a and list(pd) == ['net_weight', 'net_bias']
    assert 'net_weight' in pd and 'weight' not in pd and len(pd) == 2
    assert repr(pd) == ("net_ (\n"
                        "  Parameter net_weight (shape=(2, 3), dtype=<class 'numpy.float32'>)\n"
                        "  Parameter net_bias (shape=(3,), dtype=<class 'numpy.float32'>)\n"
                        ")")
    assert repr(gluon.ParameterDict()) == '(\n\n)'
    assert not hasattr(pd, 'select')                  # MXNet has it on Block.collect_params
    pd.initialize(mx.init.One())
    assert a.data().asnumpy().tolist() == [[1, 1, 1]] * 2
    assert b.data().asnumpy().tolist() == [0, 0, 0]   # its own init wins
    assert pd.list_ctx() == [mx.cpu(0)]


def test_parameterdict_get_existing():
    pd = gluon.ParameterDict('net_')
    w = pd.get('weight', shape=(0, 3), dtype='float16', lr_mult=2.)
    assert pd.get('weight', shape=(4, 0), dtype=np.float16) is w
    assert w.shape == (4, 3)
    message = ("Cannot retrieve Parameter 'net_weight' because desired attribute does not match "
               "with stored for attribute '{}': desired '{}' vs stored '{}'.")
    for key, value, stored in [('shape', (5, 3), '(4, 3)'), ('shape', (5, 3, 1), '(4, 3)'),
                               ('dtype', 'float32', 'float16'), ('lr_mult', 1., '2.0'),
                               ('grad_req', 'null', 'write')]:
        with raises(AssertionError, message.format(key, value, stored)):
            pd.get('weight', **{key: value})
    assert pd.get('weight', init='zeros').init == 'zeros'     # set when it had none
    with raises(AssertionError, message.format('init', 'ones', 'zeros')):
        pd.get('weight', init='ones')
    assert pd.get('weight', foo=3).foo == 3                    # MXNet sets unknown attributes
    # MXNet sets an unused public attribute; honoured here
    pd.get('weight', allow_deferred_init=True)
    assert w._allow_deferred_init
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        pd.get('other', foo=3)
    shared = gluon.ParameterDict('net_', shared=pd)
    assert shared.get('weight') is w and list(shared.keys()) == ['net_weight']


def test_parameterdict_get_constant():
    pd = gluon.ParameterDict('net_')
    w = pd.get('weight', shape=(2,))
    with pytest.raises(KeyError, match="No constant named 'net_c'. Please specify value if you "
                       'want to create a new constant.'):
        pd.get_constant('c')
    c = pd.get_constant('c', [1, 2])
    assert isinstance(c, gluon.Constant) and pd.get('c') is c
    assert pd.get_constant('c') is c
    assert pd.get_constant('c', nd.array([1, 2])) is c
    assert pd.get_constant('c', np.array([1., 2.])) is c
    assert pd.get_constant('c', [1, 2]) is c                  # MXNet: AttributeError on a list
    with raises(AssertionError, "Constant 'net_c' already exists but it's value doesn't match "
                'new value'):
        pd.get_constant('c', np.array([1., 3.]))
    with raises(AssertionError, "Parameter 'net_weight' already exists but it is not a "
                'constant.'):
        pd.get_constant('weight', [1., 3.])
    assert pd.get_constant('weight') is w


def test_parameterdict_update_setattr_zero_grad_reset_ctx():
    pd = gluon.ParameterDict('net_')
    a = pd.get('weight', shape=(2,))
    other = gluon.ParameterDict('net_')
    other.get('weight', shape=(2,))
    with raises(AssertionError, 'Cannot update self with other because they have different '
                "Parameters with the same name 'net_weight'"):
        pd.update(other)
    extra = gluon.ParameterDict('x_')
    b = extra.get('bias', shape=(2,))
    pd.update(extra)
    pd.update({'net_weight': a})
    assert list(pd.keys()) == ['net_weight', 'x_bias']
    pd.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    b.grad_req = 'null'
    backward(a, 2)
    pd.zero_grad()
    assert a.grad().asnumpy().tolist() == [0, 0]
    pd.setattr('lr_mult', 0.5)
    assert a.lr_mult == b.lr_mult == 0.5
    pd.setattr('grad_req', 'add')
    assert a.grad_req == b.grad_req == 'add'
    pd.reset_ctx(mx.cpu(1))
    assert pd.list_ctx() == [mx.cpu(1)]
    pd.reset_ctx([mx.cpu(2), mx.cpu(3)])
    assert pd.list_ctx() == [mx.cpu(2), mx.cpu(3)]


def test_parameterdict_initialize_verbose(caplog):
    pd = gluon.ParameterDict('v_')
    pd.get('weight', shape=(2, 2))
    default = mx.init.One()
    with caplog.at_level(logging.INFO):
        pd.initialize(default, verbose=True)
    assert caplog.records[-1].getMessage() == 'Initialized v_weight as One(): 1.0'
    assert not default._verbose                 # MXNet leaves the initializer verbose
    count = len(caplog.records)
    with caplog.at_level(logging.INFO):
        pd.initialize(default, force_reinit=True)
    assert len(caplog.records) == count


# -- files ------------------------------------------------------------------------------------
def _mxnet_values():
    """The values in MXNet's parameter files (tests/data/make_oracle_files.py)."""
    return {name: np.array(value, dtype=dtype) for name, dtype, value in _expected()['values']}


def _dict_for(values, prefix='net_', unknown=False):
    pd = gluon.ParameterDict(prefix)
    for name, value in values.items():
        pd.get(name, shape=(0,) * value.ndim if unknown else value.shape, dtype=value.dtype,
               grad_req='null' if value.dtype.kind == 'i' else 'write')
    return pd


def test_save_is_byte_identical_to_mxnet(tmp_path):
    values = _mxnet_values()
    pd = _dict_for(values)
    pd.initialize(mx.init.Zero(), ctx=[mx.cpu(0), mx.cpu(1)])
    for name, value in values.items():         # as MXNet wrote it: the mean of the copies
        pd['net_' + name].data(mx.cpu(0))[:] = value - 1
        pd['net_' + name].data(mx.cpu(1))[:] = value + 1
    out = tmp_path / 'p.params'
    pd.save(str(out), strip_prefix='net_')
    with open(os.path.join(DATA, 'parameterdict-mxnet.params'), 'rb') as f:
        assert out.read_bytes() == f.read()
    with raises(ValueError, "Prefix 'foo_' is to be striped before saving, but Parameter's name "
                "'net_dense0_weight' does not start with 'foo_'. this may be due to your Block "
                'shares parameters from other Blocks or you forgot to use \'with name_scope()\' '
                'when creating child blocks. ' + NAMING):
        pd.save(str(out), strip_prefix='foo_')


@pytest.mark.parametrize('name,restore_prefix', [('parameterdict-mxnet.params', 'net_'),
                                                 ('parameterdict-export-mxnet.params', '')])
def test_load_files_written_by_mxnet(name, restore_prefix):
    values = _mxnet_values()
    pd = _dict_for(values, unknown=True)
    pd.load(os.path.join(DATA, name), ctx=[mx.cpu(0), mx.cpu(1)],
            restore_prefix=restore_prefix)
    for key, value in values.items():
        param = pd['net_' + key]
        assert param.shape == value.shape and param.list_ctx() == [mx.cpu(0), mx.cpu(1)]
        for data in param.list_data():
            assert data.dtype is value.dtype.type
            np.testing.assert_array_equal(data.asnumpy(), value)


def test_load_errors_and_options(tmp_path):
    path = str(tmp_path / 'x.params')
    pd = gluon.ParameterDict('net_')
    a = pd.get('weight', shape=(2, 3))
    pd.get('bias', shape=(3,))
    pd.initialize(mx.init.One())
    pd.save(path, strip_prefix='net_')

    pd2 = gluon.ParameterDict('net_')
    pd2.get('weight', shape=(2, 3))
    pd2.get('bias', shape=(3,))
    pd2.get('extra', shape=(1,))
    with raises(AssertionError, f"Parameter 'extra' is missing in file: {path}, which contains "
                "parameters: 'net_weight', 'net_bias'. Please make sure source and target "
                'networks have the same prefix.' + NAMING):
        pd2.load(path, restore_prefix='net_')
    with raises(AssertionError, "restore_prefix is 'foo_' but Parameters name 'net_weight' does "
                "not start with 'foo_'. " + NAMING):
        pd2.load(path, restore_prefix='foo_')
    pd2.load(path, restore_prefix='net_', allow_missing=True)
    assert pd2['net_bias'].data().asnumpy().tolist() == [1, 1, 1]

    pd3 = gluon.ParameterDict('net_')
    pd3.get('weight', shape=(2, 3))
    with raises(AssertionError, f"Parameter 'bias' loaded from file: {path} is not present in "
                "ParameterDict, choices are: 'net_weight'. Set ignore_extra to True to ignore. "
                'Please make sure source and target networks have the same prefix.' + NAMING):
        pd3.load(path, restore_prefix='net_')
    pd3.load(path, restore_prefix='net_', ignore_extra=True)

    nd.save(path, {'arg:net_weight': nd.zeros((2, 3)), 'aux:net_bias': nd.zeros((3,))})
    pd.load(path)
    assert a.data().asnumpy().sum() == 0

    nd.save(path, [nd.zeros((2, 3))])
    with pytest.raises(TypeError, match='list of unnamed arrays'):
        pd3.load(path)                 # MXNet: TypeError "type <class 'str'> not supported"

    nd.save(path, {'weight': nd.ones((2, 3), dtype='float64')})
    pd3.load(path, restore_prefix='net_', cast_dtype=True)
    assert pd3['net_weight'].data().dtype is np.float32
    pd3.load(path, restore_prefix='net_', cast_dtype=True, dtype_source='saved')
    assert pd3['net_weight'].data().dtype is np.float64


def test_load_dict():
    pd = gluon.ParameterDict('net_')
    pd.get('weight', shape=(2, 3))
    pd.load_dict({'net_weight': nd.ones((2, 3))})
    pd.load_dict([('net_weight', nd.zeros((2, 3)))])
    assert pd['net_weight'].data().asnumpy().sum() == 0
    with raises(AssertionError, "Parameter 'net_zz' loaded from param_dict is not present in "
                "ParameterDict, choices are: 'net_weight'. Set ignore_extra to True to ignore. "
                'Please make sure source and target networks have the same prefix.' + NAMING):
        pd.load_dict({'net_weight': nd.ones((2, 3)), 'net_zz': nd.ones((3,))})
    names = {f'net_p{i}': nd.zeros((1,)) for i in range(20)}
    # MXNet: at most 7 names (3 first, 4 last)
    with raises(AssertionError, "Parameter 'net_weight' is missing in param_dict, which contains "
                "parameters: 'net_p0', 'net_p1', 'net_p2', ..., 'net_p16', 'net_p17', "
                "'net_p18', 'net_p19'. Please make sure source and target networks have the "
                'same prefix.' + NAMING):
        pd.load_dict(names)
