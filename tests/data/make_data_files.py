"""Write the fixtures of the data tests with MXNet 1.9.1 (the oracle).

Run from the repository root with the oracle's python::

    .oracle/bin/python tests/data/make_data_files.py

It writes
- ``data-records.rec`` / ``data-records.idx``: RecordIO records written by MXNet's
  MXIndexedRecordIO (short records, records holding the magic number at aligned and unaligned
  offsets, and ``recordio.pack`` records with number and array labels);
- ``data-transforms.npz``: inputs and MXNet's outputs of ``gluon.data.vision.transforms``
  (Resize with nearest and bilinear interpolation on uint8 and float32 images, CenterCrop,
  CropResize, ToTensor, Normalize).
"""
import os
import struct

import mxnet as mx
import numpy as np
from mxnet.gluon.data.vision import transforms as T

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = struct.pack('<I', 0xced7230a)


def records():
    """The records of data-records.rec, by key (the tests build the same list)."""
    plain = [b'', b'a', b'ab', b'abc', b'abcd', b'abcde', MAGIC, b'xy' + MAGIC + b'zw',
             b'abcd' + MAGIC + b'1234' + MAGIC, MAGIC + MAGIC + b'q', b'ab' + MAGIC]
    packed = [mx.recordio.pack(mx.recordio.IRHeader(0, 3.5, 7, 0), b'xyz'),
              mx.recordio.pack(mx.recordio.IRHeader(5, [1, 2.5], 8, 1), b'payload')]
    return plain + packed


def write_records():
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(HERE, 'data-records.idx'),
                                        os.path.join(HERE, 'data-records.rec'), 'w')
    for i, r in enumerate(records()):
        rec.write_idx(i * 10, r)
    rec.close()


def nd_u8(a):
    return mx.nd.array(a, dtype=a.dtype)


def write_transforms():
    rs = np.random.RandomState(0)
    out = {}
    img = rs.randint(0, 256, (5, 7, 3)).astype(np.uint8)
    batch = rs.randint(0, 256, (2, 4, 3, 1)).astype(np.uint8)
    out['img'], out['batch'] = img, batch
    cases = [('up', (11, 9)), ('down', (3, 2)), ('mixed', (4, 8)), ('same', (7, 5))]
    for name, size in cases:
        for interp in (0, 1):
            out[f'resize_{name}_{interp}_u8'] = T.Resize(size, interpolation=interp)(
                nd_u8(img)).asnumpy()
            out[f'resize_{name}_{interp}_f32'] = T.Resize(size, interpolation=interp)(
                nd_u8(img).astype('float32')).asnumpy()
    out['resize_keep_4'] = T.Resize(4, keep_ratio=True)(nd_u8(img)).asnumpy()
    out['resize_int_6'] = T.Resize(6)(nd_u8(img)).asnumpy()
    out['resize_batch'] = T.Resize((5, 3))(nd_u8(batch)).asnumpy()
    out['center_crop_3x2'] = T.CenterCrop((3, 2))(nd_u8(img)).asnumpy()
    out['center_crop_9'] = T.CenterCrop(9)(nd_u8(img)).asnumpy()
    out['crop_resize'] = T.CropResize(1, 2, 4, 3)(nd_u8(img)).asnumpy()
    out['crop_resize_size'] = T.CropResize(1, 2, 4, 3, size=(6, 5), interpolation=1)(
        nd_u8(img)).asnumpy()
    tensor = T.ToTensor()(nd_u8(img))
    out['to_tensor'] = tensor.asnumpy()
    out['to_tensor_batch'] = T.ToTensor()(nd_u8(batch)).asnumpy()
    out['normalize'] = T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))(
        tensor).asnumpy()
    np.savez_compressed(os.path.join(HERE, 'data-transforms.npz'), **out)


if __name__ == '__main__':
    write_records()
    write_transforms()
