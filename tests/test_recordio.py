"""mx.recordio: RecordIO files byte for byte as MXNet 1.9.1 writes them (fixtures written by
MXNet with tests/data/make_data_files.py), reading, indexes, IRHeader packing."""
import importlib.util
import os
import pickle
import struct

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import recordio

DATA = os.path.join(os.path.dirname(__file__), 'data')
REC, IDX = os.path.join(DATA, 'data-records.rec'), os.path.join(DATA, 'data-records.idx')
MAGIC = struct.pack('<I', 0xced7230a)
PLAIN = [b'', b'a', b'ab', b'abc', b'abcd', b'abcde', MAGIC, b'xy' + MAGIC + b'zw',
         b'abcd' + MAGIC + b'1234' + MAGIC, MAGIC + MAGIC + b'q', b'ab' + MAGIC]
PACKED = [recordio.pack(recordio.IRHeader(0, 3.5, 7, 0), b'xyz'),
          recordio.pack(recordio.IRHeader(5, [1, 2.5], 8, 1), b'payload')]
RECORDS = PLAIN + PACKED
# MXNet's write positions (MXIndexedRecordIO.tell before each write_idx)
OFFSETS = [0, 8, 20, 32, 44, 56, 72, 88, 104, 136, 164, 180, 216]


def read_bytes(path):
    with open(path, 'rb') as f:
        return f.read()


def test_written_bytes_equal_mxnet(tmp_path):
    rec = recordio.MXIndexedRecordIO(str(tmp_path / 'r.idx'), str(tmp_path / 'r.rec'), 'w')
    positions = []
    for i, r in enumerate(RECORDS):
        positions.append(rec.tell())
        rec.write_idx(i * 10, r)
    rec.close()
    assert positions == OFFSETS
    assert read_bytes(tmp_path / 'r.rec') == read_bytes(REC)
    assert read_bytes(tmp_path / 'r.idx') == read_bytes(IDX)
    assert read_bytes(IDX).decode().splitlines()[:3] == ['0\t0', '10\t8', '20\t20']


def test_record_layout():
    data = read_bytes(REC)
    # b'a': magic, lrec=1, 'a' and 3 bytes of padding
    assert data[8:20] == MAGIC + struct.pack('<I', 1) + b'a\0\0\0'
    # a record that is only the magic number: a start part and an end part, both empty
    assert data[72:88] == MAGIC + struct.pack('<I', 1 << 29) + MAGIC + struct.pack('<I', 3 << 29)
    # an unaligned magic is data: one part of 6 bytes
    assert data[164:180] == MAGIC + struct.pack("<I", 6) + b"ab" + MAGIC + bytes(2)


def test_read_mxnet_file_sequentially():
    rec = recordio.MXRecordIO(REC, 'r')
    got = [rec.read() for _ in RECORDS]
    assert got == RECORDS
    assert rec.read() is None and rec.read() is None
    rec.reset()
    assert rec.read() == b'' and rec.read() == b'a'
    rec.close()
    rec.close()


def test_read_by_index():
    rec = recordio.MXIndexedRecordIO(IDX, REC, 'r')
    assert rec.keys == [i * 10 for i in range(len(RECORDS))]
    assert rec.idx == dict(zip(rec.keys, OFFSETS))
    for i in reversed(range(len(RECORDS))):
        assert rec.read_idx(i * 10) == RECORDS[i]
    assert rec.read_idx(120) == RECORDS[-1] and rec.read() is None
    rec.close()


def test_string_keys(tmp_path):
    rec = recordio.MXIndexedRecordIO(str(tmp_path / 'k.idx'), str(tmp_path / 'k.rec'), 'w',
                                     key_type=str)
    rec.write_idx('b', b'second')
    rec.write_idx('a', b'first')
    rec.close()
    rec = recordio.MXIndexedRecordIO(str(tmp_path / 'k.idx'), str(tmp_path / 'k.rec'), 'r',
                                     key_type=str)
    assert rec.keys == ['b', 'a'] and rec.read_idx('a') == b'first'


def test_large_record_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    payload = rng.integers(0, 256, 10001, dtype=np.uint8).tobytes()
    payload = payload[:400] + MAGIC + payload[400:4000] + MAGIC + MAGIC + payload[4000:]
    path = str(tmp_path / 'big.rec')
    rec = recordio.MXRecordIO(path, 'w')
    rec.write(payload)
    rec.write(bytearray(b'next'))
    rec.close()
    rec = recordio.MXRecordIO(path, 'r')
    assert rec.read() == payload and rec.read() == b'next' and rec.read() is None


def test_mode_and_argument_errors(tmp_path):
    with pytest.raises(ValueError, match='Invalid flag a'):
        recordio.MXRecordIO(str(tmp_path / 'x.rec'), 'a')
    with pytest.raises(mx.MXNetError, match='No such file'):
        recordio.MXRecordIO(str(tmp_path / 'missing.rec'), 'r')
    reader = recordio.MXIndexedRecordIO(IDX, REC, 'r')
    with pytest.raises(AssertionError, match="opened with flag 'r'"):
        reader.write(b'x')
    with pytest.raises(AssertionError):
        reader.tell()
    writer = recordio.MXRecordIO(str(tmp_path / 'w.rec'), 'w')
    with pytest.raises(AssertionError, match='cannot be read'):
        writer.read()
    with pytest.raises(TypeError, match='encode'):
        writer.write('text')
    writer.close()
    with pytest.raises(AssertionError, match='closed'):
        writer.write(b'x')


def test_corrupt_file(tmp_path):
    path = tmp_path / 'bad.rec'
    path.write_bytes(b'\0' * 8)
    with pytest.raises(mx.MXNetError, match='Invalid RecordIO File'):
        recordio.MXRecordIO(str(path), 'r').read()
    path.write_bytes(read_bytes(REC)[:30])
    rec = recordio.MXRecordIO(str(path), 'r')
    rec.read(), rec.read()
    with pytest.raises(mx.MXNetError, match='truncated'):
        rec.read()


@pytest.mark.parametrize('index, message', [
    ('0\t0\n1\t-5\n', "line 2: offset -5 is outside"),
    ('0\t0\nx\t3\n', 'line 2: expected "key<TAB>offset"'),
    ('0\t999999\n', 'line 1: offset 999999 is outside'),
    ('0\n', 'line 1: expected'),
    (b'\xff\xfe\n', 'not text'),
])
def test_corrupt_index_is_a_clear_error(tmp_path, index, message):
    idx, rec = str(tmp_path / 'r.idx'), str(tmp_path / 'r.rec')
    writer = recordio.MXIndexedRecordIO(idx, rec, 'w')
    for i in range(3):
        writer.write_idx(i, b'record %d' % i)
    writer.close()
    assert recordio.MXIndexedRecordIO(idx, rec, 'r').read_idx(2) == b'record 2'
    with open(idx, 'wb' if isinstance(index, bytes) else 'w') as f:
        f.write(index)
    with pytest.raises(mx.MXNetError, match=f"r.idx.*{message}"):
        recordio.MXIndexedRecordIO(idx, rec, 'r')


def test_pickle_reopens():
    rec = recordio.MXIndexedRecordIO(IDX, REC, 'r')
    rec.read_idx(30)
    copy = pickle.loads(pickle.dumps(rec))
    assert copy.is_open and copy.read_idx(70) == RECORDS[7]
    assert rec.read() == RECORDS[4]         # the original keeps its position


def test_pack_unpack():
    # bytes from MXNet 1.9.1's recordio.pack
    assert PACKED[0].hex() == '00000000000060400700000000000000000000000000000078797a'
    assert PACKED[1][:28].hex() == ('0200000000000000080000000000000001000000000000000000803f'
                                    '00002040')[:56]
    header, payload = recordio.unpack(PACKED[0])
    assert header == recordio.IRHeader(0, 3.5, 7, 0) and payload == b'xyz'
    assert repr(header) == 'HEADER(flag=0, label=3.5, id=7, id2=0)'
    header, payload = recordio.unpack(PACKED[1])
    assert header.flag == 2 and header.id == 8 and header.id2 == 1 and payload == b'payload'
    np.testing.assert_array_equal(header.label, np.array([1, 2.5], np.float32))
    assert header.label.dtype == np.float32


needs_pillow = pytest.mark.skipif(importlib.util.find_spec('PIL') is None,
                                  reason='images are encoded with Pillow (the image extra)')
IMAGES = np.load(os.path.join(os.path.dirname(__file__), 'data', 'image-decoded.npz'))


@needs_pillow
@pytest.mark.parametrize('name', ['image-rgb.png', 'image-grey.png', 'image-444.jpg'])
def test_unpack_img_decodes_as_opencv(name):
    # MXNet 1.9.1 decoded these files to image-decoded.npz (RGB); unpack_img gives OpenCV's
    # BGR, and a 2-D array for a grey file
    with open(os.path.join(os.path.dirname(__file__), 'data', name), 'rb') as f:
        record = recordio.pack(recordio.IRHeader(0, 1.5, 3, 0), f.read())
    header, img = recordio.unpack_img(record)
    assert header == recordio.IRHeader(0, 1.5, 3, 0)
    rgb = IMAGES[f'{name}:1']
    if 'grey' in name:
        np.testing.assert_array_equal(img, IMAGES[f'{name}:0'][:, :, 0])
    else:
        np.testing.assert_array_equal(img, rgb[:, :, ::-1])
    np.testing.assert_array_equal(recordio.unpack_img(record, 1)[1], rgb[:, :, ::-1])


@needs_pillow
def test_pack_img_round_trip():
    bgr = np.random.RandomState(0).randint(0, 255, size=(5, 7, 3)).astype(np.uint8)
    header = recordio.IRHeader(0, [1.0, 2.0], 9, 0)
    packed = recordio.pack_img(header, bgr, quality=3, img_fmt='.png')
    got_header, img = recordio.unpack_img(packed)
    assert got_header.id == 9 and got_header.label.tolist() == [1.0, 2.0]
    np.testing.assert_array_equal(img, bgr)                 # PNG is lossless
    cols, rows = np.meshgrid(np.arange(16) * 8, np.arange(16) * 12)
    smooth = np.stack([cols, rows, np.full((16, 16), 90)], axis=2).astype(np.uint8)
    _, jpeg = recordio.unpack_img(recordio.pack_img(header, smooth, quality=95))
    error = np.abs(jpeg.astype(int) - smooth)
    assert jpeg.shape == smooth.shape and error.mean() < 3 and error.max() < 16
    grey = bgr[:, :, 0]
    np.testing.assert_array_equal(
        recordio.unpack_img(recordio.pack_img(header, grey, img_fmt='.png'))[1], grey)
    with pytest.raises(mx.MXNetError, match="unknown image format '.gif'"):
        recordio.pack_img(header, bgr, img_fmt='.gif')
    with pytest.raises(mx.MXNetError, match='Decoding failed'):
        recordio.unpack_img(recordio.pack(header, b'not an image'))