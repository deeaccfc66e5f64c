"""mx.contrib.io.DataLoaderIter: a Gluon DataLoader as an mx.io iterator (expected values
recorded from MXNet 1.9.1 with the same data)."""
import numpy as np
import pytest

import hybridlib as mx
from hybridlib.contrib.io import DataLoaderIter
from hybridlib.gluon.data import ArrayDataset, DataLoader


def make_iter(dtype='float32'):
    x = np.arange(70, dtype='float32').reshape(7, 2, 5)
    y = np.arange(7, dtype='float32')
    return DataLoaderIter(DataLoader(ArrayDataset(x, y), batch_size=3), dtype=dtype)


def test_batches_pads_and_descriptions_as_mxnet():
    it = make_iter()
    assert it.batch_size == 3
    assert it.provide_data == [mx.io.DataDesc('data', (3, 2, 5), 'float32')]
    assert it.provide_label == [mx.io.DataDesc('softmax_label', (3,), 'float32')]
    for _ in range(2):                     # reset starts over
        seen = []
        for batch in it:
            data, label = batch.data[0].asnumpy(), batch.label[0].asnumpy()
            assert data.shape == (3, 2, 5) and label.shape == (3,)
            n = 3 - batch.pad
            seen.append((batch.pad, data[:n].sum(), label[:n].tolist()))
            assert not data[n:].any() and not label[n:].any()     # zeros, not garbage
        assert seen == [(0, 435.0, [0.0, 1.0, 2.0]), (0, 1335.0, [3.0, 4.0, 5.0]),
                        (2, 645.0, [6.0])]
        it.reset()


def test_dtype_is_applied_to_padded_batches_too():
    batches = list(make_iter('float16'))
    assert all(b.data[0].dtype == np.float16 and b.label[0].dtype == np.float16
               for b in batches)


def test_a_loader_of_single_arrays_is_refused():
    loader = DataLoader(ArrayDataset(np.zeros((4, 3), dtype='float32')), batch_size=2)
    with pytest.raises(ValueError, match=r'\(data, label\) pairs'):
        DataLoaderIter(loader)
