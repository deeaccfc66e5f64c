"""gluon.data datasets: SimpleDataset, ArrayDataset, RecordFileDataset and the lazy views
(transform, transform_first, filter, shard, take, sample), against MXNet 1.9.1's behaviour."""
import os
import pickle

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import gluon, nd

data = gluon.data
DATA = os.path.join(os.path.dirname(__file__), 'data')


def three_samples():
    return data.ArrayDataset(nd.arange(6).reshape((3, 2)), nd.arange(3), [7, 8, 9])


def test_exports():
    assert data.dataset.__all__ == ['Dataset', 'SimpleDataset', 'ArrayDataset',
                                    'RecordFileDataset']
    for name in ('Dataset', 'SimpleDataset', 'ArrayDataset', 'RecordFileDataset',
                 'Sampler', 'SequentialSampler', 'RandomSampler', 'FilterSampler',
                 'BatchSampler', 'DataLoader', 'vision'):
        assert hasattr(data, name)


def test_abstract_dataset():
    with pytest.raises(NotImplementedError):
        data.Dataset()[0]
    with pytest.raises(NotImplementedError):
        len(data.Dataset())


def test_array_dataset_samples():
    ds = three_samples()
    assert len(ds) == 3
    x, y, z = ds[1]
    # a 2-D NDArray gives NDArray rows; a 1-D NDArray is read as numpy (MXNet: float32 1.0)
    assert isinstance(x, nd.NDArray) and x.asnumpy().tolist() == [2.0, 3.0]
    assert type(y) is np.float32 and y == 1.0
    assert z == 8
    single = data.ArrayDataset(np.arange(4))
    assert single[2] == 2 and len(single) == 4


def test_array_dataset_errors():
    with pytest.raises(AssertionError, match='All arrays must have the same length; array'
                                             r'\[0\] has length 2 while array\[2\] has 1.'):
        data.ArrayDataset([1, 2], [1])
    with pytest.raises(AssertionError, match='Needs at least 1 arrays'):
        data.ArrayDataset()


def test_simple_dataset_over_list_and_array():
    ds = data.SimpleDataset([10, 20, 30])
    assert len(ds) == 3 and ds[2] == 30 and list(ds) == [10, 20, 30]
    arr = data.SimpleDataset(nd.arange(4))
    assert float(arr[3].asscalar()) == 3.0


def test_transform_lazy_and_eager():
    ds = three_samples()
    calls = []

    def fn(x, y, z):
        calls.append(z)
        return (z,)
    lazy = ds.transform(fn)
    assert type(lazy).__name__ == '_LazyTransformDataset' and calls == []
    assert lazy[1] == (8,) and lazy[1] == (8,) and calls == [8, 8]
    assert len(lazy) == 3
    eager = ds.transform(lambda x, y, z: z, lazy=False)
    assert isinstance(eager, data.SimpleDataset) and eager._data == [7, 8, 9]


def test_transform_first():
    assert data.SimpleDataset([1, 2, 3]).transform_first(lambda x: x * 10)[1] == 20
    x, y, z = three_samples().transform_first(lambda x: x * 10)[1]
    assert x.asnumpy().tolist() == [20.0, 30.0] and y == 1.0 and z == 8
    # the closure is a class so that transformed datasets pickle (for worker processes)
    ds = data.SimpleDataset([(1, 'a'), (2, 'b')]).transform_first(abs)
    assert pickle.loads(pickle.dumps(ds))[1] == (2, 'b')


def test_filter_take_shard_sample():
    ds = three_samples()
    kept = ds.filter(lambda sample: sample[2] > 7)
    assert type(kept).__name__ == '_SampledDataset' and len(kept) == 2 and kept[0][2] == 8
    assert ds.take(2)[1][2] == 8 and len(ds.take(2)) == 2
    assert len(ds.take(None)) == 3 and len(ds.take(10)) == 3
    ten = data.SimpleDataset(list(range(10)))
    # 10 samples in 3 shards: 4, 3, 3
    shards = [list(ten.shard(3, i)) for i in range(3)]
    assert shards == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert len(ds.shard(2, 1)) == 1 and ds.shard(2, 1)[0][2] == 9
    picked = ten.sample(data.SequentialSampler(3, 5))
    assert list(picked) == [5, 6, 7]
    with pytest.raises(TypeError, match="Invalid sampler type: <class 'list'>. Expected "
                                        'gluon.data.Sampler instead.'):
        ten.sample([1, 2])


def test_filter_of_lazy_transform_reapplies_it():
    calls = []

    def double(x):
        calls.append(x)
        return 2 * x
    ds = data.SimpleDataset([1, 2, 3, 4]).transform(double).filter(lambda v: v > 4)
    assert calls == [1, 2, 3, 4]
    assert list(ds) == [6, 8] and calls == [1, 2, 3, 4, 3, 4]


def test_shard_errors():
    ds = data.SimpleDataset([1])
    with pytest.raises(AssertionError, match='Shard index of out bound: 2 out of 2'):
        ds.shard(2, 2)
    with pytest.raises(AssertionError, match='Index must be non-negative'):
        ds.shard(2, -1)


def test_record_file_dataset():
    ds = data.RecordFileDataset(os.path.join(DATA, 'data-records.rec'))
    assert ds.idx_file.endswith('data-records.idx')
    assert len(ds) == 13
    assert ds[1] == b'a' and ds[3] == b'abc' and ds[0] == b''
    header, payload = mx.recordio.unpack(ds[11])
    assert header.label == 3.5 and payload == b'xyz'


def test_record_file_dataset_is_a_dataset():
    ds = data.RecordFileDataset(os.path.join(DATA, 'data-records.rec'))
    assert list(ds.take(3)) == [b'', b'a', b'ab']
    assert ds.transform(len)[5] == 5
