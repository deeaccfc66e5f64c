"""``mx.model`` checkpoints against MXNet 1.9.1's files (tests/data/model-*, written by
tests/data/make_model_files.py with MXNet): hybridlib reads MXNet's checkpoints and writes
the same bytes, round trips, keeps the previous file when a save fails, and names missing
files; ``BatchEndParam``, ``SKLEARN_INSTALLED`` and the absent ``FeedForward``."""
import importlib.util
import logging
import os

import numpy as np
import pytest

import hybridlib as mx
import hybridlib.model  # noqa: F401  (mx.model before hybridlib/__init__.py imports it)
from hybridlib import model, nd
from hybridlib.base import MXNetError, NotSupportedError

DATA = os.path.join(os.path.dirname(__file__), 'data')
_spec = importlib.util.spec_from_file_location(
    'make_model_files', os.path.join(DATA, 'make_model_files.py'))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)

NETS = {'mlp': (GEN.mlp, GEN.MLP_EPOCH), 'bn': (GEN.bn_net, GEN.BN_EPOCH)}


def _mxnet_prefix(net):
    return os.path.join(DATA, f'model-{net}')


def _read(path):
    with open(path, 'rb') as f:
        return f.read()


def _assert_same_params(actual, expected):
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        assert actual[name].dtype == value.dtype, name
        np.testing.assert_array_equal(actual[name].asnumpy(), value.asnumpy(), err_msg=name)


# -------------------------------------------------------------------------------------------------
# MXNet's files
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('net', sorted(NETS))
def test_load_checkpoint_reads_mxnet_files(net):
    build, epoch = NETS[net]
    expected = build(mx)
    symbol, arg_params, aux_params = model.load_checkpoint(_mxnet_prefix(net), epoch)
    assert symbol.list_arguments() == expected.list_arguments()
    assert symbol.list_auxiliary_states() == expected.list_auxiliary_states()
    assert symbol.list_outputs() == expected.list_outputs()
    args, aux = GEN.params_for(mx, expected)
    _assert_same_params(arg_params, args)
    _assert_same_params(aux_params, aux)
    assert all(v.context == mx.cpu() for v in arg_params.values())


@pytest.mark.parametrize('net', sorted(NETS))
def test_load_params_reads_mxnet_files(net):
    build, epoch = NETS[net]
    args, aux = GEN.params_for(mx, build(mx))
    arg_params, aux_params = model.load_params(_mxnet_prefix(net), epoch)
    _assert_same_params(arg_params, args)
    _assert_same_params(aux_params, aux)


@pytest.mark.parametrize('net', sorted(NETS))
def test_save_checkpoint_writes_mxnet_params_bytes(tmp_path, net):
    build, epoch = NETS[net]
    symbol = build(mx)
    args, aux = GEN.params_for(mx, symbol)
    prefix = str(tmp_path / net)
    model.save_checkpoint(prefix, epoch, symbol, args, aux)
    name = '%s-%04d.params' % (prefix, epoch)
    assert _read(name) == _read('%s-%04d.params' % (_mxnet_prefix(net), epoch))


def test_save_checkpoint_writes_mxnet_symbol_bytes(tmp_path):
    symbol = GEN.mlp(mx)
    args, aux = GEN.params_for(mx, symbol)
    prefix = str(tmp_path / 'mlp')
    model.save_checkpoint(prefix, GEN.MLP_EPOCH, symbol, args, aux)
    assert _read(prefix + '-symbol.json') == _read(_mxnet_prefix('mlp') + '-symbol.json')


def test_params_file_keys_are_arg_and_aux(tmp_path):
    symbol = GEN.bn_net(mx)
    args, aux = GEN.params_for(mx, symbol)
    model.save_checkpoint(str(tmp_path / 'net'), 7, symbol, args, aux)
    saved = nd.load(str(tmp_path / 'net-0007.params'))
    assert list(saved) == [f'arg:{k}' for k in args] + [f'aux:{k}' for k in aux]


# -------------------------------------------------------------------------------------------------
# Round trips and saving
# -------------------------------------------------------------------------------------------------

def test_round_trip_keeps_names_values_and_dtypes(tmp_path):
    symbol = GEN.bn_net(mx)
    args = {'w': nd.array(np.arange(6).reshape(2, 3), dtype='float16'),
            'i': nd.array([1, 2, 3], dtype='int32'),
            'name:with:colons': nd.array([0.5], dtype='float64')}
    aux = {'bn1_moving_var': nd.array([2.0, 3.0])}
    prefix = str(tmp_path / 'rt')
    model.save_checkpoint(prefix, 12, symbol, args, aux)
    assert os.path.exists(prefix + '-0012.params')
    loaded, arg_params, aux_params = model.load_checkpoint(prefix, 12)
    assert loaded.tojson() == symbol.tojson()
    _assert_same_params(arg_params, args)
    _assert_same_params(aux_params, aux)


def test_epoch_is_formatted_with_four_digits(tmp_path):
    prefix = str(tmp_path / 'e')
    model.save_checkpoint(prefix, 12345, None, {'a': nd.ones((1,))}, {})
    assert sorted(os.listdir(tmp_path)) == ['e-12345.params']
    arg_params, aux_params = model.load_params(prefix, 12345)
    assert sorted(arg_params) == ['a'] and aux_params == {}


def test_symbol_none_saves_parameters_only(tmp_path):
    prefix = str(tmp_path / 'only')
    model.save_checkpoint(prefix, 1, None, {'a': nd.ones((2,))}, {'b': nd.zeros((3,))})
    assert sorted(os.listdir(tmp_path)) == ['only-0001.params']


def test_save_checkpoint_logs_the_params_file(tmp_path, caplog):
    prefix = str(tmp_path / 'log')
    with caplog.at_level(logging.INFO):
        model.save_checkpoint(prefix, 3, GEN.mlp(mx), {}, {})
    assert [r.getMessage() for r in caplog.records] == [
        f'Saved checkpoint to "{prefix}-0003.params"']


def test_failed_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    prefix = str(tmp_path / 'keep')
    model.save_checkpoint(prefix, 1, GEN.mlp(mx), {'a': nd.ones((2,))}, {})
    before = {name: _read(tmp_path / name) for name in os.listdir(tmp_path)}

    def broken_fsync(fd):
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(os, 'fsync', broken_fsync)
    with pytest.raises(OSError, match='No space left'):
        model.save_checkpoint(prefix, 1, GEN.bn_net(mx), {'a': nd.zeros((5,))}, {})
    monkeypatch.undo()
    after = {name: _read(tmp_path / name) for name in os.listdir(tmp_path)}
    assert after == before          # no temporary files left, both files untouched


def test_params_on_another_array_are_copied_to_cpu(tmp_path):
    value = nd.array([1.0, 2.0], ctx=mx.cpu(1))
    model.save_checkpoint(str(tmp_path / 'c'), 1, None, {'a': value}, {})
    arg_params, _ = model.load_params(str(tmp_path / 'c'), 1)
    assert arg_params['a'].context == mx.cpu()
    np.testing.assert_array_equal(arg_params['a'].asnumpy(), [1.0, 2.0])


# -------------------------------------------------------------------------------------------------
# Errors
# -------------------------------------------------------------------------------------------------

def test_missing_symbol_file_names_it(tmp_path):
    prefix = str(tmp_path / 'absent')
    with pytest.raises(MXNetError, match='absent-symbol.json.*does not exist; no parameter '
                                         'files with this prefix exist'):
        model.load_checkpoint(prefix, 1)


def test_missing_epoch_lists_the_saved_epochs(tmp_path):
    prefix = str(tmp_path / 'net')
    for epoch in (2, 4):
        model.save_checkpoint(prefix, epoch, GEN.mlp(mx), {'a': nd.ones((1,))}, {})
    with pytest.raises(MXNetError, match=r"net-0003.params' does not exist; the checkpoints "
                                         r"saved with this prefix are epochs \[2, 4\]"):
        model.load_checkpoint(prefix, 3)
    with pytest.raises(MXNetError, match=r'load_params\(prefix=.*epoch=5\).*epochs \[2, 4\]'):
        model.load_params(prefix, 5)


def test_unreadable_symbol_file_keeps_the_loaders_error(tmp_path):
    prefix = str(tmp_path / 'bad')
    (tmp_path / 'bad-symbol.json').write_text('not json')
    with pytest.raises(MXNetError) as info:
        model.load_checkpoint(prefix, 1)
    assert 'does not exist' not in str(info.value)


def test_gluon_params_file_is_refused_with_a_hint(tmp_path):
    nd.save(str(tmp_path / 'gluon-0001.params'), {'dense0_weight': nd.ones((2, 2))})
    with pytest.raises(ValueError, match="key 'dense0_weight'.*net.load_parameters"):
        model.load_params(str(tmp_path / 'gluon'), 1)


def test_list_params_file_is_refused(tmp_path):
    nd.save(str(tmp_path / 'list-0001.params'), [nd.ones((2,))])
    with pytest.raises(ValueError, match='list of 1 arrays without names'):
        model.load_params(str(tmp_path / 'list'), 1)


def test_other_key_prefixes_are_skipped_as_in_mxnet(tmp_path):
    nd.save(str(tmp_path / 'k-0001.params'), {'arg:a': nd.ones((1,)), 'opt:b': nd.ones((1,)),
                                               'aux:c': nd.zeros((1,))})
    arg_params, aux_params = model.load_params(str(tmp_path / 'k'), 1)
    assert sorted(arg_params) == ['a'] and sorted(aux_params) == ['c']


# -------------------------------------------------------------------------------------------------
# The other names of mx.model
# -------------------------------------------------------------------------------------------------

def test_batch_end_param_is_mxnets_namedtuple():
    param = model.BatchEndParam(epoch=1, nbatch=2, eval_metric=None, locals={'x': 3})
    assert type(param).__name__ == 'BatchEndParams'
    assert param._fields == ('epoch', 'nbatch', 'eval_metric', 'locals')
    assert tuple(param) == (1, 2, None, {'x': 3})


def test_sklearn_installed_is_a_bool_that_says_whether_sklearn_imports():
    assert model.SKLEARN_INSTALLED is (importlib.util.find_spec('sklearn') is not None)


def test_feedforward_says_to_use_module():
    with pytest.raises(NotSupportedError, match=r'mx\.mod\.Module'):
        model.FeedForward(GEN.mlp(mx), num_epoch=1)
    with pytest.raises(NotImplementedError, match='load_checkpoint'):
        model.FeedForward.load('prefix', 1)
    with pytest.raises(NotSupportedError, match=r'mx\.mod\.Module'):
        model.FeedForward.create(GEN.mlp(mx), X=None)
