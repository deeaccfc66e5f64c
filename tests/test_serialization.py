"""nd.save / nd.load in MXNet's binary format (files in tests/data were written by MXNet 1.9.1)."""
import os
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import nd
from hybridlib.base import MXNetError, NotSupportedError

DATA = os.path.join(os.path.dirname(__file__), 'data')


def _expected():
    with np.load(os.path.join(DATA, 'ndarrays-expected.npz')) as f:
        return {k: f[k] for k in f.files}


def _read(name):
    with open(os.path.join(DATA, name), 'rb') as f:
        return f.read()


def test_load_dict_written_by_mxnet():
    loaded = nd.load(os.path.join(DATA, 'ndarrays-dict.params'))
    expected = _expected()
    assert isinstance(loaded, dict) and list(loaded) == list(expected)
    for key, value in expected.items():
        assert loaded[key].dtype == value.dtype.type
        assert loaded[key].context == mx.cpu()
        np.testing.assert_array_equal(loaded[key].asnumpy(), value)


def test_load_list_written_by_mxnet():
    loaded = nd.load(os.path.join(DATA, 'ndarrays-list.params'))
    expected = _expected()
    assert isinstance(loaded, list)
    for array, key in zip(loaded, sorted(expected)):
        np.testing.assert_array_equal(array.asnumpy(), expected[key])


@pytest.mark.parametrize('name', ['ndarrays-dict.params', 'ndarrays-list.params',
                                  'ndarrays-empty.params'])
def test_save_is_byte_identical_to_mxnet(tmp_path, name):
    data = nd.load(os.path.join(DATA, name))
    out = tmp_path / name
    nd.save(str(out), data)
    assert out.read_bytes() == _read(name)


def test_round_trip_all_dtypes_and_shapes(tmp_path):
    arrays = {
        'scalar': nd.array(3.5),                       # 0-d: written with the numpy-shape magic
        'empty': nd.zeros((2, 0)),
        'bool': nd.array([True, False], dtype='bool'),
        'big': nd.array(np.arange(1000).reshape(10, 10, 10), dtype='int64'),
    }
    f = tmp_path / 'x.params'
    nd.save(f, arrays)
    loaded = nd.load(f)
    for key, value in arrays.items():
        assert loaded[key].shape == value.shape and loaded[key].dtype == value.dtype
        np.testing.assert_array_equal(loaded[key].asnumpy(), value.asnumpy())


def test_single_ndarray_saves_as_a_list(tmp_path):
    nd.save(tmp_path / 'one', nd.ones((2,)))
    loaded = nd.load(tmp_path / 'one')
    assert isinstance(loaded, list) and len(loaded) == 1


@pytest.mark.parametrize('cut', [0, 7, 24, 30, 60, 200, -1])
def test_truncated_file_is_a_clear_error(cut):
    full = _read('ndarrays-dict.params')
    with pytest.raises(MXNetError, match='truncated|corrupt|not an MXNet'):
        nd.load_frombuffer(full[:cut if cut >= 0 else len(full) - 1])


def test_corrupt_magic_and_trailing_bytes():
    full = bytearray(_read('ndarrays-list.params'))
    bad = bytes(full[:24]) + b'\x00\x11\x22\x33' + bytes(full[28:])
    with pytest.raises(MXNetError, match='magic'):
        nd.load_frombuffer(bad)
    with pytest.raises(MXNetError, match='unexpected bytes'):
        nd.load_frombuffer(bytes(full) + b'\x00')
    with pytest.raises(MXNetError, match='not an MXNet NDArray file'):
        nd.load_frombuffer(b'\x00' * 40)


def test_sparse_arrays_are_refused_clearly():
    header = struct.pack('<QQQ', 0x112, 0, 1) + struct.pack('<Ii', 0xF993FAC9, 1)
    with pytest.raises(NotSupportedError, match='row_sparse'):
        nd.load_frombuffer(header + b'\x00' * 64)


def _legacy_record(magic_and_shape, data):
    return magic_and_shape + struct.pack('<iii', 1, 0, 0) + data.astype('<f4').tobytes()


def test_reads_mxnet_v1_and_pre_v1_layouts():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    v1 = _legacy_record(struct.pack('<Ii2q', 0xF993FAC8, 2, 2, 3), data)
    pre_v1 = _legacy_record(struct.pack('<I2I', 2, 2, 3), data)     # magic is the ndim
    for record in (v1, pre_v1):
        blob = struct.pack('<QQQ', 0x112, 0, 1) + record + struct.pack('<Q', 0)
        loaded = nd.load_frombuffer(blob)
        np.testing.assert_array_equal(loaded[0].asnumpy(), data)


def test_failed_save_keeps_the_previous_file(tmp_path, monkeypatch):
    f = tmp_path / 'keep.params'
    nd.save(f, {'a': nd.ones((2,))})
    before = f.read_bytes()
    with pytest.raises(TypeError):
        nd.save(f, {'a': np.ones(2)})           # not an NDArray: refused before writing
    assert f.read_bytes() == before

    def failing_replace(src, dst):
        raise OSError('disk full')
    monkeypatch.setattr(os, 'replace', failing_replace)
    with pytest.raises(OSError):
        nd.save(f, {'b': nd.zeros((3,))})
    assert f.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ['keep.params']


@pytest.mark.parametrize('shape, message', [
    ((2**32, 2**32), 'needs 73786976294838206464 bytes'),     # wraps to 0 in int64
    ((2**62, 4), 'needs 73786976294838206464 bytes'),
    ((0, 2**62, 2**62), 'array is too big'),
])
def test_shapes_too_large_are_clear_errors(shape, message):
    buf = struct.pack('<QQQ', 0x112, 0, 1) + struct.pack('<Iii', 0xF993FAC9, 0, len(shape))
    buf += struct.pack(f'<{len(shape)}q', *shape) + struct.pack('<iii', 1, 0, 0)
    buf += struct.pack('<Q', 0)
    with pytest.raises(MXNetError, match=f'w.params: .*{message}'):
        nd.load_frombuffer(buf, 'w.params')


def test_parameters_load_from_named_arrays_only(tmp_path):
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    nd.save(tmp_path / 'list.params', [nd.ones((2, 3)), nd.ones(2)])
    for load in (net.load_parameters, net.collect_params().load):
        with pytest.raises(TypeError, match=r'list.params. holds a list of unnamed arrays \(2\)'):
            load(str(tmp_path / 'list.params'))
    # MXNet's empty records: ndim 0 in its V1 layout
    empty = struct.pack('<QQQ', 0x112, 0, 2) + struct.pack('<II', 0xF993FAC8, 0) * 2
    empty += struct.pack('<Q', 2) + struct.pack('<Q', 6) + b'weight' + struct.pack('<Q', 4)
    (tmp_path / 'empty.params').write_bytes(empty + b'bias')
    with pytest.raises(MXNetError, match="empty.params: 'weight', 'bias' are empty records"):
        net.load_parameters(str(tmp_path / 'empty.params'))


def test_failed_write_keeps_the_previous_file_and_no_temporary(tmp_path, monkeypatch):
    f = tmp_path / 'keep.params'
    nd.save(f, [nd.ones((2,))])
    before = f.read_bytes()

    def failing_fsync(fd):
        raise OSError('disk full')
    monkeypatch.setattr(os, 'fsync', failing_fsync)
    with pytest.raises(OSError, match='disk full'):
        nd.save(f, [nd.zeros((3,))])
    assert f.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ['keep.params']


@pytest.mark.parametrize('umask, mode', [(0o022, 0o644), (0o077, 0o600)])
def test_saved_files_take_the_umask_or_keep_their_mode(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        nd.save(tmp_path / 'new.params', [nd.ones((2,))])
    finally:
        os.umask(old)
    assert os.stat(tmp_path / 'new.params').st_mode & 0o777 == mode
    os.chmod(tmp_path / 'new.params', 0o640)
    nd.save(tmp_path / 'new.params', [nd.ones((3,))])
    assert os.stat(tmp_path / 'new.params').st_mode & 0o777 == 0o640


def test_save_writes_through_a_symlink(tmp_path):
    (tmp_path / 'real').mkdir()
    real = tmp_path / 'real' / 'w.params'
    nd.save(real, [nd.ones((2,))])
    link = tmp_path / 'link.params'
    link.symlink_to(real)
    nd.save(link, [nd.ones((5,))])
    assert link.is_symlink() and nd.load(str(real))[0].shape == (5,)
    assert sorted(p.name for p in (tmp_path / 'real').iterdir()) == ['w.params']


@pytest.mark.parametrize('unnamed', [True, False])
def test_a_killed_save_leaves_nothing_after_the_next_save(tmp_path, unnamed):
    # unnamed: an O_TMPFILE where the system has one; else a named file the next save removes
    f = tmp_path / 'w.params'
    nd.save(f, [nd.ones((2,))])
    before = f.read_bytes()
    # the child stops in the middle of writing, and is killed there
    child = subprocess.Popen([sys.executable, '-c', f"""
import os, sys, time
from hybridlib import nd, serialization
def stuck(fd, payload, mode):
    os.write(fd, bytes(payload)[:100])
    print('writing', flush=True)
    time.sleep(60)
serialization._write_synced = stuck
if not {unnamed}:
    serialization._write_unnamed = lambda *args: None
nd.save({str(f)!r}, [nd.zeros((100000,))])
"""], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == 'writing'
        assert f.read_bytes() == before
    finally:
        child.kill()
        child.wait()
    nd.save(f, [nd.ones((3,))])
    assert [p.name for p in tmp_path.iterdir()] == ['w.params']
    assert nd.load(str(f))[0].shape == (3,)


@pytest.mark.parametrize('unnamed', [True, False])
def test_saves_killed_at_random_points_never_lose_the_file(tmp_path, unnamed):
    """A child saves versions 1, 2, ... of a 2 MB array in a loop and is killed at a random
    moment, four times: the file always loads whole (some version), and the next save leaves
    nothing else in the folder."""
    f = tmp_path / 'w.params'
    nd.save(f, {'v': nd.zeros((500000,))})
    rng = np.random.RandomState(7 + unnamed)
    seen = []
    for kill in range(4):
        child = subprocess.Popen([sys.executable, '-c', f"""
import itertools
from hybridlib import nd, serialization
if not {unnamed}:
    serialization._write_unnamed = lambda *args: None
print('ready', flush=True)
for k in itertools.count(1):
    nd.save({str(f)!r}, {{'v': nd.full((500000,), k)}})
"""], stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline().strip() == 'ready'
            time.sleep(rng.uniform(0.02, 0.15))
        finally:
            child.kill()
            child.wait()
        value = nd.load(str(f))['v'].asnumpy()
        assert value.shape == (500000,) and (value == value[0]).all(), f'kill {kill}'
        seen.append(value[0])
        nd.save(f, {'v': nd.full((500000,), -1)})
        assert [p.name for p in tmp_path.iterdir()] == ['w.params'], f'kill {kill}'
    assert max(seen) >= 1, f'the child never finished a save before its kill: {seen}'


def test_save_rejects_bad_containers(tmp_path):
    with pytest.raises(TypeError, match='keys must be strings'):
        nd.save(tmp_path / 'x', {1: nd.ones((1,))})
    with pytest.raises(TypeError, match='save takes'):
        nd.save(tmp_path / 'x', 'not arrays')


def test_missing_file():
    with pytest.raises(MXNetError, match='cannot read'):
        nd.load('/nonexistent/file.params')


def test_dumps_matches_save(tmp_path):
    data = [nd.array([[1, 2], [3, 4]])]
    nd.save(tmp_path / 'a', data)
    assert (tmp_path / 'a').read_bytes() == nd.save_to_bytes(data)
