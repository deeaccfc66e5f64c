"""mx.io's image record iterators (hybridlib/io/image_record.py) against MXNet 1.9.1.

tests/data/make_io_image_record_files.py ran each case of io_rec-cases.json through MXNet and
recorded every batch (io_rec-expected.npz); here the same iterators must return the same
batches: pixels equal (within 1 for JPEG decoding), labels, pads, indexes, batch counts and
provide_data/provide_label equal.
"""
import json
import os
import pathlib
import shutil

import numpy as np
import pytest

import hybridlib as mx
from hybridlib.base import MXNetError, NotSupportedError
from hybridlib.io import image_record as ir
from hybridlib.io.image_record_aug import CppRandom, warp_affine

pytest.importorskip('PIL')

DATA = pathlib.Path(__file__).resolve().parent / 'data'
CASES = {c['name']: c for c in json.loads((DATA / 'io_rec-cases.json').read_text())}
EXPECTED = np.load(DATA / 'io_rec-expected.npz')
PNG = str(DATA / 'io_rec-png.rec')
IDX = str(DATA / 'io_rec-png.idx')
DET = str(DATA / 'io_rec-det.rec')


def _args(kwargs, tmp_path):
    """The case's arguments with paths in tests/data; a mean image to make goes to
    ``tmp_path``."""
    out = {}
    for key, value in kwargs.items():
        if value == '<made>':
            value = str(tmp_path / 'mean.params')
        elif key.startswith('path_') or key == 'mean_img':
            value = str(DATA / value)
        out[key] = tuple(value) if isinstance(value, list) else value
    return out


def _run(case, tmp_path):
    it = getattr(ir, case['iterator'])(verbose=False, **_args(case['kwargs'], tmp_path))
    provided = ([[d.name, list(d.shape), np.dtype(d.dtype).name] for d in it.provide_data],
                [[d.name, list(d.shape), np.dtype(d.dtype).name] for d in it.provide_label])
    data, labels, pads, indexes, counts = [], [], [], [], []
    for _ in range(case['epochs']):
        batches = list(it)
        counts.append(len(batches))
        for batch in batches:
            data.append(batch.data[0].asnumpy())
            labels.append(batch.label[0].asnumpy())
            pads.append(batch.pad)
            indexes.append(batch.index)
        it.reset()
    return provided, np.stack(data), np.stack(labels), pads, np.stack(indexes), counts


@pytest.mark.parametrize('name', sorted(CASES))
def test_batches_equal_mxnet(name, tmp_path):
    case = CASES[name]
    provided, data, labels, pads, indexes, counts = _run(case, tmp_path)
    assert provided == (case['provide_data'], case['provide_label'])
    assert counts == EXPECTED[f'{name}:count'].tolist()
    assert pads == EXPECTED[f'{name}:pad'].tolist()
    assert np.array_equal(indexes, EXPECTED[f'{name}:index'])
    np.testing.assert_allclose(labels, EXPECTED[f'{name}:label'], rtol=0, atol=1e-6)
    expected = EXPECTED[f'{name}:data']
    assert data.shape == expected.shape
    if case['kwargs'].get('path_imgrec') == 'io_rec-jpg.rec':
        # libjpeg's IDCT and upsampling may differ by one level between builds
        assert np.abs(data.astype(np.float64) - expected).max() <= 1
    elif expected.dtype == np.uint8:
        assert np.array_equal(data, expected.astype(data.dtype))
    else:
        np.testing.assert_allclose(data, expected, rtol=1e-6, atol=1e-5)
    if case['kwargs'].get('mean_img') == '<made>':
        names, arrays = mx.serialization.loads_arrays((tmp_path / 'mean.params').read_bytes())
        assert names == ['mean_img']
        np.testing.assert_allclose(arrays[0], EXPECTED[f'{name}:mean'], rtol=1e-6, atol=1e-5)


def test_dtypes_and_contexts():
    kw = dict(path_imgrec=PNG, data_shape=(3, 8, 8), batch_size=2, verbose=False)
    assert ir.ImageRecordIter(**kw).next().data[0].dtype == np.float32
    assert ir.ImageRecordIter(dtype='uint8', **kw).next().data[0].dtype == np.uint8
    assert ir.ImageRecordInt8Iter(**kw).next().data[0].dtype == np.int8
    batch = ir.ImageRecordIter(**kw).next()
    assert batch.data[0].context == mx.cpu_pinned(0)
    assert batch.label[0].context == mx.cpu_pinned(0)
    assert ir.ImageRecordIter(device_id=-1, **kw).next().data[0].context == mx.cpu(0)
    assert ir.ImageRecordIter_v1(**kw).next().data[0].context == mx.cpu(0)
    assert isinstance(ir.ImageRecordIter(**kw), mx.io.MXDataIter)
    assert mx.io.ImageRecordIter is ir.ImageRecordIter


def test_first_batch_is_read_at_construction_and_reset_restarts():
    it = ir.ImageRecordIter(path_imgrec=PNG, data_shape=(3, 8, 8), batch_size=3, verbose=False)
    assert it.batch_size == 3
    first = it.next().label[0].asnumpy().tolist()
    assert first == [0, 1, 2]
    assert it.iter_next()
    assert it.getlabel().asnumpy().tolist() == [3, 4, 5]
    assert it.getpad() == 0 and it.getindex().tolist() == [0, 0, 0]
    it.reset()
    assert it.next().label[0].asnumpy().tolist() == [0, 1, 2]


def test_random_augmentations_vary_with_the_seed_and_stay_in_range():
    def batch(seed_aug, **kw):
        it = ir.ImageRecordIter(path_imgrec=PNG, data_shape=(3, 6, 6), batch_size=7,
                                verbose=False, seed_aug=seed_aug, **kw)
        return it.next().data[0].asnumpy()
    kw = dict(rand_crop=True, rand_mirror=True, max_rotate_angle=20, brightness=0.2,
              pca_noise=0.1, random_h=10)
    a, b, again = batch(1, **kw), batch(2, **kw), batch(1, **kw)
    assert a.shape == (7, 3, 6, 6)
    assert np.array_equal(a, again) and not np.array_equal(a, b)
    assert a.min() >= 0 and a.max() <= 255 and np.array_equal(a, np.round(a))


def test_round_batch_needs_enough_images():
    kw = dict(path_imgrec=PNG, data_shape=(3, 8, 8), batch_size=20, verbose=False)
    with pytest.raises(MXNetError, match='bigger than the batch size'):
        ir.ImageRecordIter(**kw)
    with pytest.raises(MXNetError, match='bigger than batch size'):
        ir.ImageRecordIter_v1(**kw)
    it = ir.ImageRecordIter(round_batch=False, **kw)
    assert it.next().label[0].shape == (20,)


def test_empty_part_stops_at_construction():
    with pytest.raises(StopIteration):
        ir.ImageRecordIter(path_imgrec=PNG, path_imgidx=IDX, data_shape=(3, 8, 8), batch_size=1,
                           num_parts=5, part_index=4, verbose=False)


def test_mean_image_of_another_shape_is_refused(tmp_path):
    shutil.copy(DATA / 'io_rec-mean.params', tmp_path / 'mean.params')
    with pytest.raises(MXNetError, match='shape'):
        ir.ImageRecordIter(path_imgrec=PNG, mean_img=str(tmp_path / 'mean.params'),
                           data_shape=(3, 6, 6), batch_size=3, verbose=False)


@pytest.mark.parametrize('kwargs, error, match', [
    (dict(dtype='float16'), MXNetError, 'unknown dtype'),
    (dict(dtype='foo'), MXNetError, "Invalid Input: 'foo'"),
    (dict(path_imgrec=''), MXNetError, 'must specify image_rec'),
    (dict(path_imgrec='missing.rec'), MXNetError, 'No such file'),
    (dict(data_shape=(8, 8)), MXNetError, 'expected dimension=3'),
    (dict(data_shape=(2, 8, 8)), MXNetError, '1, 3 or 4 channels'),
    (dict(data_shape=(4, 8, 8)), MXNetError, 'Expected 4 channels, got 3'),
    (dict(label_width=2), MXNetError, 'label_width must be 1'),
    (dict(label_width=0), MXNetError, 'greater equal to 1'),
    (dict(shuffle='yes'), MXNetError, 'expect boolean'),
    (dict(batch_size=None), MXNetError, 'Required parameter batch_size'),
    (dict(part_index=3, num_parts=2), MXNetError, 'part < nsplit'),
    (dict(resize=9, inter_method=5), MXNetError, 'invalid inter_method'),
    (dict(rotate=20, inter_method=0), MXNetError, 'invalid inter_method'),
    (dict(random_resized_crop=True, rand_crop=True), MXNetError, 'conflicts'),
    (dict(max_crop_size=30, min_crop_size=3), MXNetError, 'max_crop_size'),
    (dict(data_shape=(1, 8, 8), brightness=0.2), MXNetError, '3-channel'),
    (dict(aug_seq='foo'), NotSupportedError, 'aug_seq'),
    (dict(path_imgrec=str(DATA)), NotSupportedError, 'folder'),
])
def test_errors_name_the_parameter(kwargs, error, match):
    args = dict(path_imgrec=PNG, data_shape=(3, 8, 8), batch_size=2, verbose=False)
    args.update(kwargs)
    args = {k: v for k, v in args.items() if v is not None}
    with pytest.raises(error, match=match):
        ir.ImageRecordIter(**args)


def test_keyword_arguments_only_and_unknown_ones_ignored():
    with pytest.raises(TypeError, match='keyword arguments'):
        ir.ImageRecordIter(PNG)
    it = ir.ImageRecordIter(path_imgrec=PNG, data_shape=(3, 8, 8), batch_size=2, verbose=False,
                            not_a_parameter=3)
    assert it.provide_data[0].shape == (2, 3, 8, 8)


def test_other_dtypes_fail_on_v1_and_detection():
    with pytest.raises(MXNetError, match='data type'):
        ir.ImageRecordIter_v1(path_imgrec=PNG, data_shape=(3, 8, 8), batch_size=2,
                              dtype='float16', verbose=False)
    with pytest.raises(MXNetError, match='data type'):
        ir.ImageRecordUInt8Iter_v1(path_imgrec=PNG, data_shape=(3, 8, 8), batch_size=2,
                                   dtype='uint8', verbose=False)
    with pytest.raises(MXNetError, match='label_pad_width: 3 smaller'):
        ir.ImageDetRecordIter(path_imgrec=DET, data_shape=(3, 6, 6), batch_size=2,
                              label_pad_width=3, verbose=False)


def test_detection_iterator_reads_an_image_list(tmp_path):
    lst = tmp_path / 'det.lst'
    lst.write_text('0\t2\t5\t1\t0.1\t0.1\t0.5\t0.6\ta.png\n1\t2\t5\t0\t0\t0\t1\t1\t'
                   '3\t0.2\t0.2\t0.4\t0.4\tb.png\n2\t2\t5\t1\t0\t0\t0.5\t0.5\tc.png\n'
                   '3\t2\t5\t1\t0\t0\t0.5\t0.5\td.png\n4\t2\t5\t1\t0\t0\t0.5\t0.5\te.png\n')
    it = ir.ImageDetRecordIter(path_imgrec=DET, path_imglist=str(lst), data_shape=(3, 6, 6),
                               batch_size=2, verbose=False)
    label = it.next().label[0].asnumpy()
    assert label.shape == (2, 16)
    assert label[0].tolist()[:11] == pytest.approx([3, 6, 6, 7, 2, 5, 1, 0.1, 0.1, 0.5, 0.6])
    assert label[0, 11:].tolist() == [-1] * 5


def test_cpp_random_is_mt19937_with_libstdcxx_distributions():
    rng = CppRandom(5489)
    assert rng.raw() == 3499211612          # the C++ standard's check value of mt19937
    rng = CppRandom(111)
    order = list(range(7))
    rng.shuffle(order)
    # MXNet's first shuffle of 7 records with seed 0 (io_rec 'idx_shuffle' checks others)
    assert order == [3, 4, 5, 2, 1, 6, 0]
    values = [CppRandom(3).uniform_int(0, 4) for _ in range(3)]
    assert all(0 <= v <= 4 for v in values)
    assert 0 <= CppRandom(4).canonical() < 1


def test_chunks_follow_dmlc_windows():
    starts = [0, 40, 80, 120, 160, 200]
    # a 96-byte window holds the starts 0, 40 and 80: the chunk ends before the last one
    assert ir._chunk_bounds(starts, 0, 6, 240, 96) == [(0, 2), (2, 4), (4, 6)]
    # a window with one start grows until it holds two
    assert ir._chunk_bounds(starts, 0, 6, 240, 16) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5),
                                                       (5, 6)]
    assert ir._chunk_bounds(starts, 0, 6, 240, 1 << 20) == [(0, 6)]
    assert ir._byte_partition(starts, 240, 1, 3) == (2, 4)


def test_warp_affine_identity_and_border():
    img = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    same = warp_affine(img, np.array([[1, 0, 0], [0, 1, 0]], np.float32), 4, 4, 1, 9)
    assert np.array_equal(same, img)
    shifted = warp_affine(img, np.array([[1, 0, 1], [0, 1, 0]], np.float32), 4, 4, 0, 9)
    assert np.array_equal(shifted[:, 1:], img[:, :3]) and (shifted[:, 0] == 9).all()


def test_exported_names():
    for name in ('ImageRecordIter', 'ImageRecordUInt8Iter', 'ImageRecordInt8Iter',
                 'ImageRecordIter_v1', 'ImageRecordUInt8Iter_v1', 'ImageDetRecordIter'):
        cls = getattr(ir, name)
        assert 'path_imgrec' in cls.__doc__ and 'batch_size' in cls.__doc__
    assert os.path.basename(ir.__file__) == 'image_record.py'
