"""mx.io's iterators against MXNet 1.9.1: every batch (data, label, pad, index), provide_data
and provide_label of NDArrayIter, ResizeIter, PrefetchingIter, CSVIter and MNISTIter over a few
epochs, as recorded with MXNet by tests/data/make_io_files.py; the cases of MXNet's own
tests/python/unittest/test_io.py; errors."""
import gc
import gzip
import json
import os
import shutil

import numpy as np
import pytest

import hybridlib as mx
from hybridlib.base import MXNetError, NotSupportedError
from hybridlib.io import utils

DATA = os.path.join(os.path.dirname(__file__), 'data')
with open(os.path.join(DATA, 'io-expected.json')) as _f:
    EXPECTED = json.load(_f)
MNIST_FILES = dict(image=os.path.join(DATA, 'io-mnist-images-idx3-ubyte'),
                   label=os.path.join(DATA, 'io-mnist-labels-idx1-ubyte'))


def describe(descs):
    return [[d.name, list(d.shape), np.dtype(d.dtype).name, d.layout] for d in descs]


def check_batches(it, expected, reset='reset'):
    """The batches of ``it`` over the recorded epochs equal MXNet's, down to dtypes and
    indices; a recorded error is raised at the same place."""
    for epoch, batches in enumerate(expected):
        if epoch:
            getattr(it, reset)()
        if batches and 'error' in batches[-1]:
            with pytest.raises(MXNetError):
                for _ in it:
                    pass
            return
        got = list(it)
        assert len(got) == len(batches), f'epoch {epoch}'
        for i, (batch, want) in enumerate(zip(got, batches)):
            where = f'epoch {epoch} batch {i}'
            arrays = batch.data + (batch.label or [])
            assert [np.dtype(a.dtype).name for a in arrays] == want['dtypes'], where
            for a, w in zip(batch.data, want['data']):
                np.testing.assert_array_equal(a.asnumpy(), np.array(w), err_msg=where)
            assert len(batch.label or []) == len(want['label']), where
            for a, w in zip(batch.label or [], want['label']):
                np.testing.assert_array_equal(a.asnumpy(), np.array(w), err_msg=where)
            assert batch.pad == want['pad'], where
            if want['index'] is None:
                assert batch.index is None, where
            else:
                assert batch.index.dtype == np.uint64
                assert batch.index.tolist() == want['index'], where


def arrays(spec):
    """A recorded case's arrays: numpy arrays, NDArrays, or lists/dicts of them."""
    if spec is None:
        return None
    if isinstance(spec, list):
        return [arrays(s) for s in spec]
    if 'values' not in spec:
        return {k: arrays(v) for k, v in spec.items()}
    value = np.array(spec['values'], dtype=spec['dtype'])
    return mx.nd.array(value, dtype=spec['dtype']) if spec['nd'] else value


# -------------------------------------------------------------------------------------------------
# NDArrayIter, ResizeIter, PrefetchingIter
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('name', sorted(EXPECTED['ndarray']))
def test_ndarrayiter_equals_mxnet(name):
    case = EXPECTED['ndarray'][name]
    if 'seed' in case:
        np.random.seed(case['seed'])
    it = mx.io.NDArrayIter(arrays(case['data']), arrays(case['label']), **case['kwargs'])
    assert describe(it.provide_data) == case['provide_data']
    assert describe(it.provide_label) == case['provide_label']
    check_batches(it, case['batches'], case.get('reset', 'reset'))
    if 'seed' in case:
        assert it.idx.tolist() == case['idx']


def test_resizeiter_equals_mxnet():
    for name in ('resize', 'resize_no_reset'):
        case = EXPECTED['wrappers'][name]
        it = mx.io.ResizeIter(mx.io.NDArrayIter(np.arange(10), batch_size=3), case['size'],
                              reset_internal=case['reset_internal'])
        assert describe(it.provide_data) == case['provide_data']
        assert it.batch_size == case['batch_size']
        check_batches(it, case['batches'])


def test_resizeiter_keeps_the_bucket_key():
    inner = mx.io.NDArrayIter(np.arange(4), batch_size=2)
    inner.default_bucket_key = 7
    assert mx.io.ResizeIter(inner, 3).default_bucket_key == 7


def test_prefetchingiter_equals_mxnet():
    case = EXPECTED['wrappers']['prefetch']
    first = mx.io.NDArrayIter({'data': np.arange(10)}, np.arange(10) * 2, batch_size=4)
    second = mx.io.NDArrayIter({'data': np.arange(10) + 100}, batch_size=4)
    it = mx.io.PrefetchingIter([first, second], rename_data=[{'data': 'd1'}, {'data': 'd2'}])
    assert describe(it.provide_data) == case['provide_data']
    assert describe(it.provide_label) == case['provide_label']
    assert it.batch_size == case['batch_size']
    check_batches(it, case['batches'])
    it.reset()
    batch = it.next()
    assert describe(batch.provide_data) == case['provide_data']
    assert it.getpad() == 0 and it.getindex() is None
    assert [d.asnumpy().tolist() for d in it.getdata()] == [[0, 1, 2, 3], [100, 101, 102, 103]]
    assert it.getlabel()[0].asnumpy().tolist() == [0, 2, 4, 6]


class _Failing(mx.io.DataIter):
    """Batches 1, 2, ... of ones; raises ValueError for batch ``fail_at``; ends after 3."""

    def __init__(self, fail_at):
        super().__init__(2)
        self.fail_at = fail_at
        self.count = 0
        self.provide_data = [mx.io.DataDesc('data', (2,))]
        self.provide_label = []

    def next(self):
        self.count += 1
        if self.count == self.fail_at:
            raise ValueError(f'cannot read batch {self.count}')
        if self.count > 3:
            raise StopIteration
        return mx.io.DataBatch([mx.nd.ones((2,)) * self.count], [], pad=0)

    def reset(self):
        self.count = 0


def test_prefetchingiter_raises_the_error_of_its_thread():
    it = mx.io.PrefetchingIter(_Failing(fail_at=2))
    assert it.next().data[0].asnumpy().tolist() == [1, 1]
    with pytest.raises(ValueError, match='cannot read batch 2'):
        it.next()
    # the thread reads on after the error
    assert it.next().data[0].asnumpy().tolist() == [3, 3]
    with pytest.raises(StopIteration):
        it.next()
    it.reset()
    assert it.next().data[0].asnumpy().tolist() == [1, 1]


def test_prefetchingiter_threads_end_with_it():
    it = mx.io.PrefetchingIter([mx.io.NDArrayIter(np.arange(6), batch_size=2),
                                mx.io.NDArrayIter(np.arange(6), batch_size=2)])
    threads = it.prefetch_threads
    assert len(threads) == 2 and all(t.is_alive() for t in threads)
    assert it.started
    assert len(list(it)) == 3
    del it
    gc.collect()
    for thread in threads:
        thread.join(timeout=5)
    assert not any(t.is_alive() for t in threads)


def test_prefetchingiter_checks_its_iterators():
    with pytest.raises(AssertionError, match='empty'):
        mx.io.PrefetchingIter([])
    short = mx.io.NDArrayIter(np.arange(4), batch_size=2)
    long = mx.io.NDArrayIter(np.arange(6), batch_size=2)
    it = mx.io.PrefetchingIter([short, long])
    with pytest.raises(AssertionError, match='mismatches'):
        list(it)


# -------------------------------------------------------------------------------------------------
# MXNet's tests/python/unittest/test_io.py
# -------------------------------------------------------------------------------------------------

def _init_ndarrayiter_data(data_type, is_image=False):
    if is_image:
        data = mx.nd.random.uniform(0, 255, shape=(500, 1, 28, 28))
        labels = mx.nd.ones((500, 1))
        return data, labels
    if data_type == 'NDArray':
        data = mx.nd.ones((1000, 2, 2))
        labels = mx.nd.ones((1000, 1))
    else:
        data = np.ones((1000, 2, 2))
        labels = np.ones((1000, 1))
    for i in range(1000):
        data[i] = i / 100
        labels[i] = i / 100
    return data, labels


def _test_last_batch_handle(data, labels=None, is_image=False):
    last_batch_handle_list = ['pad', 'discard', 'roll_over']
    labelcount_list = [(124, 100), (100, 96), (100, 96)]
    batch_count_list = [4, 3, 3] if is_image else [8, 7, 7]
    cache = None
    for idx, handle in enumerate(last_batch_handle_list):
        dataiter = mx.io.NDArrayIter(data, labels, 128, False, last_batch_handle=handle)
        batch_count = 0
        labelcount = [0] * 10
        for batch in dataiter:
            if len(data) == 2:
                assert len(batch.data) == 2
            if labels is not None and len(labels) != 0:
                if not is_image:
                    label = batch.label[0].asnumpy().flatten()
                    assert (batch.data[0].asnumpy()[:, 0, 0] == label).all()
                    for value in label:
                        labelcount[int(value)] += 1
            else:
                assert not batch.label, 'label is not empty list'
            batch_count += 1
            if handle == 'pad' and batch_count == batch_count_list[0]:
                cache = batch.data[0].asnumpy()
        if labels is not None and len(labels) != 0 and not is_image:
            assert labelcount[0] == labelcount_list[idx][0], handle
            assert labelcount[8] == labelcount_list[idx][1], handle
        assert batch_count == batch_count_list[idx]
    # roll_over: the first batch of the next epoch is the last one 'pad' made
    dataiter.reset()
    assert np.array_equal(dataiter.next().data[0].asnumpy(), cache)


def _test_shuffle(data, labels=None):
    dataiter = mx.io.NDArrayIter(data, labels, 1, False)
    batch_list = [batch.data[0].asnumpy() for batch in dataiter]
    dataiter = mx.io.NDArrayIter(data, labels, 1, True)
    idx_list = dataiter.idx
    for i, batch in enumerate(dataiter):
        assert np.array_equal(batch.data[0].asnumpy(), batch_list[idx_list[i]])


@pytest.mark.parametrize('dtype', ['NDArray', 'ndarray'])
@pytest.mark.parametrize('is_image', [False, True])
def test_mxnet_ndarrayiter(dtype, is_image):
    data, labels = _init_ndarrayiter_data(dtype, is_image)
    _test_last_batch_handle(data, labels, is_image)
    _test_last_batch_handle([data, data], labels, is_image)
    _test_last_batch_handle(data=[data, data], is_image=is_image)
    _test_last_batch_handle({'data1': data, 'data2': data}, labels, is_image)
    _test_last_batch_handle(data={'data1': data, 'data2': data}, is_image=is_image)
    _test_last_batch_handle(data, [], is_image)
    _test_last_batch_handle(data=data, is_image=is_image)
    _test_shuffle(data, labels)
    _test_shuffle([data, data], labels)
    _test_shuffle([data, data])
    _test_shuffle({'data1': data, 'data2': data}, labels)
    _test_shuffle({'data1': data, 'data2': data})
    _test_shuffle(data, [])
    _test_shuffle(data)


def test_mxnet_databatch_str():
    batch = mx.io.DataBatch(data=[mx.nd.ones((2, 3))])
    assert str(batch) == 'DataBatch: data shapes: [(2, 3)] label shapes: None'
    batch = mx.io.DataBatch(data=[mx.nd.ones((2, 3)), mx.nd.ones((7, 8))],
                            label=[mx.nd.ones((4, 5))])
    assert str(batch) == 'DataBatch: data shapes: [(2, 3), (7, 8)] label shapes: [(4, 5)]'


@pytest.mark.parametrize('dtype', ['int32', 'int64', 'float32'])
def test_mxnet_csviter(tmp_path, dtype):
    entry_str = {'int32': '200000001', 'int64': '2147483648', 'float32': '1'}[dtype]
    data_path, label_path = tmp_path / 'data.t', tmp_path / 'label.t'
    data_path.write_text(''.join(','.join([entry_str] * 64) + '\n' for _ in range(300)))
    label_path.write_text('0\n' * 300)
    data_train = mx.io.CSVIter(data_csv=str(data_path), data_shape=(8, 8),
                               label_csv=str(label_path), batch_size=100, dtype=dtype)
    expected = mx.nd.ones((100, 8, 8), dtype=dtype) * int(entry_str)
    count = 0
    for _ in iter(data_train):
        data_batch = data_train.getdata()
        np.testing.assert_array_equal(data_batch.asnumpy(), expected.asnumpy())
        assert data_batch.asnumpy().dtype == expected.asnumpy().dtype
        count += 1
    assert count == 3


def test_mxnet_mnistiter():
    # MXNet's test on the 60000 images of MNIST, on the 23 images of the recorded files
    batch_size = 4
    train_dataiter = mx.io.MNISTIter(data_shape=(12,), batch_size=batch_size, shuffle=1,
                                     flat=1, silent=0, seed=10, **MNIST_FILES)
    assert sum(1 for _ in train_dataiter) == 23 // batch_size
    train_dataiter.reset()
    train_dataiter.iter_next()
    label_0 = train_dataiter.getlabel().asnumpy().flatten()
    for _ in range(4):
        train_dataiter.iter_next()
    train_dataiter.reset()
    train_dataiter.iter_next()
    label_1 = train_dataiter.getlabel().asnumpy().flatten()
    assert sum(label_0 - label_1) == 0


def test_mxnet_libsvmiter_names_sparse_storage(tmp_path):
    data_path = tmp_path / 'data.t'
    data_path.write_text('1.0 0:0.5 2:1.2\n-2.0\n')
    with pytest.raises(NotSupportedError, match='sparse'):
        mx.io.LibSVMIter(data_libsvm=str(data_path), data_shape=(3,), batch_size=3)


# -------------------------------------------------------------------------------------------------
# NDArrayIter: inputs and errors
# -------------------------------------------------------------------------------------------------

def test_ndarrayiter_names_and_sorts_its_inputs():
    it = mx.io.NDArrayIter({'b': np.zeros((4, 2)), 'a': np.ones((4, 3))},
                           [np.zeros(4), np.ones(4)], batch_size=2)
    assert [d.name for d in it.provide_data] == ['a', 'b']
    assert [d.name for d in it.provide_label] == ['_0_softmax_label', '_1_softmax_label']
    assert it.num_source == 4 and len(it.data_list) == 4
    assert it.getindex() is None


def test_ndarrayiter_leaves_the_callers_dict_alone():
    data = {'x': np.arange(4)}
    mx.io.NDArrayIter(data, batch_size=2)
    assert isinstance(data['x'], np.ndarray)


def test_ndarrayiter_rejects_what_mxnet_rejects():
    with pytest.raises(AssertionError):
        mx.io.NDArrayIter(None)
    with pytest.raises(AssertionError):
        mx.io.NDArrayIter([])
    with pytest.raises(TypeError, match='Input must be NDArray'):
        mx.io.NDArrayIter('abc')
    with pytest.raises(TypeError, match="Invalid type .* for a"):
        mx.io.NDArrayIter({'a': 'x'})
    it = mx.io.NDArrayIter(np.arange(4), batch_size=2, last_batch_handle='discard')
    list(it)
    with pytest.raises(AssertionError, match='DataIter needs reset'):
        it.getdata()


def test_ndarrayiter_names_sparse_storage():
    scipy_sparse = pytest.importorskip('scipy.sparse')
    with pytest.raises(NotSupportedError, match="'data' is a sparse matrix"):
        mx.io.NDArrayIter(scipy_sparse.csr_matrix(np.eye(3)), batch_size=1)


def test_ndarrayiter_with_the_data_on_the_current_context():
    ctx = mx.gpu(0) if mx.context.num_gpus() else mx.cpu(0)
    data = mx.nd.array(np.arange(10).reshape(5, 2), ctx=ctx)
    it = mx.io.NDArrayIter(data, batch_size=2, shuffle=True)
    batches = list(it)
    assert all(b.data[0].context == ctx for b in batches)
    rows = np.concatenate([b.data[0].asnumpy() for b in batches])[:5]
    assert sorted(rows[:, 0].tolist()) == [0, 2, 4, 6, 8]


# -------------------------------------------------------------------------------------------------
# CSVIter
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('name', sorted(EXPECTED['csv']))
def test_csviter_equals_mxnet(name):
    case = EXPECTED['csv'][name]
    kwargs = {k: os.path.join(DATA, v) if k.endswith('_csv') else v
              for k, v in case['kwargs'].items()}
    it = mx.io.CSVIter(**kwargs)
    assert isinstance(it, mx.io.MXDataIter)
    assert describe(it.provide_data) == case['provide_data']
    assert describe(it.provide_label) == case['provide_label']
    assert it.batch_size == case['batch_size']
    check_batches(it, case['batches'])


def test_csviter_reads_numbers_as_mxnet_does():
    want = np.load(os.path.join(DATA, 'io-numbers.npz'))['values']
    rows = list(utils.csv_rows([os.path.join(DATA, 'io-numbers.csv')], np.float32))
    got = np.array(rows, dtype=np.float32)
    # bit for bit: dmlc's strtof, not correctly rounded
    assert got.shape == want.shape
    assert (got.view(np.uint32) == want.view(np.uint32)).all()
    plain = np.array([[np.float32(float(v)) for v in line.split(',')]
                      for line in open(os.path.join(DATA, 'io-numbers.csv')).read().split()
                      [:800]], dtype=np.float32)
    assert (plain != want[:800]).any(), 'the cases should show where strtof differs'


def test_csviter_getters_and_iter_next(tmp_path):
    it = mx.io.CSVIter(data_csv=os.path.join(DATA, 'io-data.csv'), data_shape=(3,),
                       batch_size=2)
    count = 0
    while it.iter_next():
        count += 1
        assert it.getdata().shape == (2, 3) and it.getlabel().shape == (2,)
    assert count == 2
    assert it.getindex().tolist() == [2, 3] and it.getpad() == 0
    it.reset()
    first = it.next()
    it.debug_skip_load()
    again = [it.next() for _ in range(3)]
    assert all(b.data[0].asnumpy().tolist() == first.data[0].asnumpy().tolist() for b in again)


def test_csviter_takes_keywords_only_and_ignores_unknown_ones():
    path = os.path.join(DATA, 'io-data.csv')
    with pytest.raises(TypeError):
        mx.io.CSVIter(path, data_shape=(3,), batch_size=2)
    it = mx.io.CSVIter(data_csv=path, data_shape=(3,), batch_size=2, foo=3, input_shape=(3,))
    assert it.provide_data[0].shape == (2, 3)


@pytest.mark.parametrize('kwargs, match', [
    (dict(data_shape=(3,), batch_size=2), 'Required parameter data_csv of string'),
    (dict(data_csv='D', batch_size=2), 'Required parameter data_shape of Shape'),
    (dict(data_csv='D', data_shape=(3,)), 'Required parameter batch_size of int'),
    (dict(data_csv='D', data_shape=(3,), batch_size='abc'),
     "format for batch_size expect int \\(non-negative\\) but value='abc'"),
    (dict(data_csv='D', data_shape=(3,), batch_size=2.5), 'format for batch_size'),
    (dict(data_csv='D', data_shape=(3,), batch_size=-2), 'should be greater equal to 0'),
    (dict(data_csv='D', data_shape='x', batch_size=2), 'format for data_shape'),
    (dict(data_csv='D', data_shape=(3,), batch_size=2, round_batch='maybe'),
     'format for round_batch expect boolean'),
    (dict(data_csv='D', data_shape=(3,), batch_size=2, ctx='tpu'),
     "Invalid Input: 'tpu' for ctx, valid values are: {'cpu', 'gpu'}"),
    (dict(data_csv='D', data_shape=(3,), batch_size=2, dtype='foo'), "Invalid Input: 'foo'"),
    (dict(data_csv='D', data_shape=(3,), batch_size=2, dtype='float16'),
     'float16 is not supported for CSVIter'),
    (dict(data_csv='D', data_shape=(3,), batch_size=2, dtype=None),
     'None is not supported for CSVIter'),
    (dict(data_csv='D', data_shape=(3,), batch_size=2, prefetch_buffer=-1),
     'prefetch_buffer should be greater equal to 0'),
    (dict(data_csv='nonexist.csv', data_shape=(3,), batch_size=2),
     "data_csv='nonexist.csv': No such file"),
    (dict(data_csv='D', data_shape=(2,), batch_size=2),
     'specified data_shape=\\(2,\\), the csv row-length=3'),
    (dict(data_csv='D', data_shape=(3,), batch_size=2, label_csv='D'),
     'specified label_shape=\\(1,\\), the csv row-length=3'),
    (dict(data_csv='D', data_shape=(3,), batch_size=9), 'number of input must be bigger'),
])
def test_csviter_errors(kwargs, match):
    kwargs = {k: os.path.join(DATA, 'io-data.csv') if v == 'D' else v
              for k, v in kwargs.items()}
    with pytest.raises(MXNetError, match=match):
        mx.io.CSVIter(**kwargs)


def test_csviter_label_file_shorter_than_the_data(tmp_path):
    (tmp_path / 'label.csv').write_text('1\n2\n')
    it = mx.io.CSVIter(data_csv=os.path.join(DATA, 'io-data.csv'), data_shape=(3,),
                       label_csv=str(tmp_path / 'label.csv'), batch_size=2)
    with pytest.raises(MXNetError, match='label_csv has fewer rows than data_csv'):
        it.next(), it.next()


def test_csviter_batch_size_zero_reads_a_row_per_batch():
    it = mx.io.CSVIter(data_csv=os.path.join(DATA, 'io-data.csv'), data_shape=(3,),
                       batch_size=0)
    assert [b.data[0].shape for b in it] == [(0, 3)] * 4


# -------------------------------------------------------------------------------------------------
# MNISTIter
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('name', sorted(EXPECTED['mnist']))
def test_mnistiter_equals_mxnet(name):
    case = EXPECTED['mnist'][name]
    it = mx.io.MNISTIter(**MNIST_FILES, **case['kwargs'])
    assert describe(it.provide_data) == case['provide_data']
    assert describe(it.provide_label) == case['provide_label']
    assert it.batch_size == case['batch_size']
    check_batches(it, case['batches'])


@pytest.mark.parametrize('seed', ['0', '7', '-5'])
def test_mnistiter_shuffles_as_mxnet(seed):
    # the images spell their own index, so the batch shows the order
    it = mx.io.MNISTIter(image=os.path.join(DATA, 'io-mnist-index-images-idx3-ubyte'),
                         label=os.path.join(DATA, 'io-mnist-index-labels-idx1-ubyte'),
                         batch_size=1000, seed=int(seed), silent=True)
    pixels = np.round(it.next().data[0].asnumpy().reshape(1000, 4) * 256).astype(np.int64)
    order = pixels[:, 0] << 24 | pixels[:, 1] << 16 | pixels[:, 2] << 8 | pixels[:, 3]
    assert order.tolist() == EXPECTED['mnist_orders'][seed]


def test_mnistiter_reads_gzipped_files(tmp_path):
    for key, source in MNIST_FILES.items():
        with open(source, 'rb') as f, gzip.open(tmp_path / (key + '.gz'), 'wb') as g:
            shutil.copyfileobj(f, g)
    plain = mx.io.MNISTIter(batch_size=5, silent=True, **MNIST_FILES)
    zipped = mx.io.MNISTIter(image=str(tmp_path / 'image.gz'), label=str(tmp_path / 'label.gz'),
                             batch_size=5, silent=True)
    for a, b in zip(plain, zipped):
        np.testing.assert_array_equal(a.data[0].asnumpy(), b.data[0].asnumpy())
        np.testing.assert_array_equal(a.label[0].asnumpy(), b.label[0].asnumpy())


def test_mnistiter_logs_what_it_loaded(caplog):
    with caplog.at_level('INFO'):
        mx.io.MNISTIter(batch_size=5, shuffle=False, **MNIST_FILES)
        mx.io.MNISTIter(batch_size=5, flat=True, silent=True, **MNIST_FILES)
    assert [r.getMessage() for r in caplog.records] == \
        ['MNISTIter: load 23 images, shuffle=0, shape=[5,1,4,3]']


def test_mnistiter_errors(tmp_path):
    with pytest.raises(MXNetError, match="cannot open image='nonexist'"):
        mx.io.MNISTIter(image='nonexist', label=MNIST_FILES['label'])
    with pytest.raises(MXNetError, match='greater equal to 1'):
        mx.io.MNISTIter(batch_size=-1, **MNIST_FILES)
    with pytest.raises(MXNetError, match='part_index=3 must be in'):
        mx.io.MNISTIter(num_parts=3, part_index=3, **MNIST_FILES)
    with pytest.raises(MXNetError, match='dtype=float16 is not supported'):
        mx.io.MNISTIter(dtype='float16', **MNIST_FILES)
    with pytest.raises(MXNetError, match='ends before its'):
        mx.io.MNISTIter(image=os.path.join(DATA, 'io-data.csv'), label=MNIST_FILES['label'])
    short = tmp_path / 'labels'
    short.write_bytes(open(MNIST_FILES['label'], 'rb').read()[:8] + bytes(5))
    with pytest.raises(MXNetError, match='ends before its 23 labels'):
        mx.io.MNISTIter(image=MNIST_FILES['image'], label=str(short))
    # more examples than the files hold: no batch at all, as in MXNet
    with pytest.raises(StopIteration):
        mx.io.MNISTIter(batch_size=30, **MNIST_FILES)


# -------------------------------------------------------------------------------------------------
# The module
# -------------------------------------------------------------------------------------------------

def test_mx_io_names():
    names = ['CSVIter', 'DataBatch', 'DataDesc', 'DataIter', 'LibSVMIter', 'MNISTIter',
             'MXDataIter', 'NDArrayIter', 'PrefetchingIter', 'ResizeIter']
    assert set(names) <= set(mx.io.__all__)
    for name in names + ['io', 'utils', '_init_data', '_getdata_by_idx', '_has_instance']:
        assert hasattr(mx.io, name), name
    assert mx.io.io.NDArrayIter is mx.io.NDArrayIter
    assert utils._has_instance([('a', mx.nd.ones(1))], mx.nd.NDArray)
    assert not utils._has_instance([('a', np.ones(1))], mx.nd.NDArray)
