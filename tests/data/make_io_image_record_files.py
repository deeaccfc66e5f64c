"""Write the fixtures of tests/test_io_image_record.py with MXNet 1.9.1 (the oracle).

Run from the repository root with the oracle's python::

    .oracle/bin/python tests/data/make_io_image_record_files.py

The images are encoded with the PNG and JPEG encoders of make_image_files.py (MXNet has no
encoder of its own). It writes, in tests/data:

- ``io_rec-png.rec/.idx``: 7 RGB PNG images (one portrait, one smaller than some data
  shapes), header labels 0-6; ``io_rec-list.lst``: 3 labels for each;
- ``io_rec-det.lst``: detection labels for io_rec-det.rec (its own, in reverse order);
- ``io_rec-jpg.rec``: 4 JPEG images (4:2:0 and 4:4:4) with 2-value label arrays;
- ``io_rec-rgba.rec``: 3 RGBA PNG images;
- ``io_rec-det.rec``: 5 PNG images with detection labels (header widths 2 and 4, objects of
  width 5 and 6, one empty box);
- ``io_rec-mean.params``: the mean image ImageRecordIter made from io_rec-png.rec;
- ``io_rec-cases.json`` and ``io_rec-expected.npz``: the iterator, arguments and number of
  epochs of each case, and what MXNet returned: every batch's data (uint8 when it is whole
  numbers), label, pad and index, provide_data/provide_label, and the mean image of the
  cases that make one (``mean_img`` is ``'<made>'``: a file that does not exist yet).
  ``ImageRecordIter`` runs with ``prefetch_buffer=64``, so that no batch buffer is reused
  (see ``run``).

The random cases run on one preprocessing thread (``preprocess_threads=1``) or with
``seed_aug``, where MXNet's random draws are reproducible.
"""
import json
import os
import shutil
import sys
import tempfile

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_image_files import encode_jpeg, encode_png, smooth_image  # noqa: E402


def path(name):
    return os.path.join(HERE, name)


def png_images():
    """The 7 (H, W, 3) images of io_rec-png.rec."""
    rs = np.random.RandomState(5)
    sizes = [(10, 12), (13, 17), (16, 11), (10, 14), (13, 13), (9, 16), (12, 12)]
    return [smooth_image(h, w, i) // 2 + rs.randint(0, 128, (h, w, 3)).astype(np.uint8)
            for i, (h, w) in enumerate(sizes)]


def det_labels():
    """Flat detection labels (header, objects); record 3 has an empty box MXNet drops."""
    return [[2, 5, 0, 0.1, 0.2, 0.6, 0.7],
            [2, 5, 1, 0.0, 0.0, 0.5, 0.5, 2, 0.4, 0.3, 0.9, 1.0],
            [4, 5, 6, 6, 2, 0.2, 0.2, 0.8, 0.9, 1, 0.1, 0.6, 0.3, 0.95],
            [2, 6, 0, 0.3, 0.1, 0.7, 0.8, 9, 1, 0.5, 0.5, 0.4, 0.9, 8],
            [2, 5, 3, 0.05, 0.1, 0.95, 0.9, 1, 0.3, 0.3, 0.5, 0.6, 0, 0.6, 0.2, 0.9, 0.5]]


def write_records():
    rec = mx.recordio.MXIndexedRecordIO(path('io_rec-png.idx'), path('io_rec-png.rec'), 'w')
    for i, img in enumerate(png_images()):
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0),
                                          encode_png(img, 2)))
    rec.close()
    with open(path('io_rec-list.lst'), 'w') as f:
        for i in range(7):
            f.write(f'{i}\t{i * 0.5}\t{10 - i}\t{i % 3}\tpng-{i}.png\n')
    with open(path('io_rec-det.lst'), 'w') as f:
        for i, label in enumerate(det_labels()[::-1]):
            f.write('\t'.join(map(str, [i] + label + [f'det-{i}.png'])) + '\n')
    rec = mx.recordio.MXRecordIO(path('io_rec-jpg.rec'), 'w')
    for i in range(4):
        jpg = encode_jpeg(smooth_image(12 + 2 * i, 14 - i, 10 + i), subsample=i % 2 == 0)
        rec.write(mx.recordio.pack(mx.recordio.IRHeader(0, [i, -i * 0.5], i, 0), jpg))
    rec.close()
    rs = np.random.RandomState(8)
    rec = mx.recordio.MXRecordIO(path('io_rec-rgba.rec'), 'w')
    for i in range(3):
        rgba = rs.randint(0, 256, (7 + i, 8, 4))
        rec.write(mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), encode_png(rgba, 6)))
    rec.close()
    rec = mx.recordio.MXRecordIO(path('io_rec-det.rec'), 'w')
    sizes = [(10, 14), (12, 9), (11, 11), (9, 15), (14, 12)]
    for i, (label, (h, w)) in enumerate(zip(det_labels(), sizes)):
        rec.write(mx.recordio.pack(mx.recordio.IRHeader(0, label, i, 0),
                                   encode_png(smooth_image(h, w, 20 + i), 2)))
    rec.close()


ONE = dict(preprocess_threads=1)
MADE_MEAN = '<made>'            # a mean image file that the case makes
PNG = dict(path_imgrec='io_rec-png.rec')
IDX = dict(PNG, path_imgidx='io_rec-png.idx')
DET = dict(path_imgrec='io_rec-det.rec')


def cases():
    """(name, iterator, kwargs, epochs); paths are relative to tests/data."""
    v2, small = 'ImageRecordIter', dict(data_shape=(3, 8, 8), batch_size=3)
    out = [
        ('plain', v2, dict(PNG, **small), 3),
        ('no_round', v2, dict(PNG, round_batch=False, ctx='cpu', **small), 2),
        ('idx', v2, dict(IDX, **small), 3),
        ('idx_shuffle', v2, dict(IDX, shuffle=True, seed=3, **small), 3),
        ('shuffle', v2, dict(PNG, shuffle=True, seed=1, data_shape=(3, 8, 8), batch_size=2), 2),
        ('part_bytes', v2, dict(PNG, num_parts=3, part_index=1, **small), 2),
        ('part_bytes_last', v2, dict(PNG, num_parts=3, part_index=2, data_shape=(3, 8, 8),
                                     batch_size=1), 1),
        ('part_idx', v2, dict(IDX, num_parts=3, part_index=1, data_shape=(3, 8, 8),
                              batch_size=2), 2),
        ('part_idx_shuffle', v2, dict(IDX, num_parts=2, part_index=0, shuffle=True, seed=2,
                                      data_shape=(3, 8, 8), batch_size=2), 2),
        ('resize', v2, dict(PNG, resize=9, **small), 1),
        ('resize_up', v2, dict(PNG, resize=20, data_shape=(3, 12, 10), batch_size=3), 1),
        ('enlarge', v2, dict(PNG, data_shape=(3, 20, 15), batch_size=3), 1),
        ('normalize', v2, dict(PNG, mean_r=120.5, mean_g=110, mean_b=100.25, std_r=50,
                               std_g=60, std_b=70.5, scale=0.5, **small), 1),
        ('int8', v2, dict(PNG, dtype='int8', mean_r=120.5, mean_g=110.4, mean_b=100, **small), 1),
        ('int8_class', 'ImageRecordInt8Iter', dict(PNG, mean_r=64, **small), 1),
        ('uint8', v2, dict(PNG, dtype='uint8', mirror=True, mean_r=50, **small), 1),
        ('uint8_class', 'ImageRecordUInt8Iter', dict(PNG, resize=10, **small), 1),
        ('grey', v2, dict(PNG, data_shape=(1, 8, 8), batch_size=3), 1),
        ('pad', v2, dict(PNG, pad=2, fill_value=7, data_shape=(3, 14, 16), batch_size=3), 1),
        ('label_list', v2, dict(PNG, path_imglist='io_rec-list.lst', label_width=3, **small), 1),
        ('names', v2, dict(PNG, data_name='img', label_name='lab', ctx='cpu', device_id=-1,
                           **small), 1),
        ('jpeg', v2, dict(path_imgrec='io_rec-jpg.rec', label_width=2, resize=11,
                          data_shape=(3, 10, 10), batch_size=2), 1),
        ('jpeg_grey', v2, dict(path_imgrec='io_rec-jpg.rec', label_width=2,
                               data_shape=(1, 10, 10), batch_size=4), 1),
        ('rgba', v2, dict(path_imgrec='io_rec-rgba.rec', data_shape=(4, 6, 6), batch_size=3,
                          mean_a=10, std_a=2, pad=1), 1),
        ('mean_img', v2, dict(PNG, mean_img='io_rec-mean.params', **small), 1),
        ('mean_img_int8', v2, dict(PNG, mean_img='io_rec-mean.params', dtype='int8',
                                   mirror=True, **small), 1),
        ('mean_img_std', v2, dict(PNG, **ONE, mean_img='io_rec-mean.params', std_g=3,
                                  scale=0.1, max_random_illumination=3, **small), 1),
    ]
    for interp in (0, 1, 2, 3, 4, 9):
        out.append((f'interp{interp}', v2, dict(PNG, resize=7 if interp == 3 else 11,
                                                inter_method=interp, **small), 1))
    random_cases = [
        ('seed_aug', dict(rand_crop=True, rand_mirror=True, seed_aug=5, data_shape=(3, 6, 7))),
        ('one_thread', dict(ONE, rand_crop=True, rand_mirror=True, data_shape=(3, 6, 7))),
        ('contrast', dict(ONE, max_random_contrast=0.3, max_random_illumination=20)),
        ('rrc', dict(ONE, random_resized_crop=True, min_random_area=0.3, max_aspect_ratio=1.3,
                     min_aspect_ratio=0.7, data_shape=(3, 6, 6))),
        ('crop_size', dict(ONE, max_crop_size=9, min_crop_size=7, rand_crop=True,
                           data_shape=(3, 6, 6))),
        ('rotate', dict(ONE, max_rotate_angle=30, fill_value=0)),
        ('rotate_cubic', dict(ONE, rotate=15, inter_method=2, data_shape=(3, 6, 6))),
        ('rotate_lanczos', dict(ONE, max_rotate_angle=40, inter_method=4, fill_value=90)),
        ('affine', dict(ONE, max_random_scale=1.5, min_random_scale=0.9, max_aspect_ratio=0.2,
                        max_shear_ratio=0.1)),
        ('hls', dict(ONE, random_h=20, random_s=30, random_l=25)),
        ('pca', dict(ONE, pca_noise=0.1)),
        ('rotate_list', dict(ONE, rotate_list='0,90,180')),
        ('img_size', dict(ONE, max_img_size=11, min_img_size=9)),
        ('rotate_random_interp', dict(ONE, max_rotate_angle=40, inter_method=10)),
        ('seed_aug_idx', dict(path_imgidx='io_rec-png.idx', seed_aug=11, rand_crop=True,
                              rand_mirror=True, max_random_scale=1.3, data_shape=(3, 6, 6))),
        ('jitter', dict(ONE, brightness=0.3, contrast=0.3, saturation=0.3)),
        ('interp_random', dict(ONE, resize=9, inter_method=10)),
    ]
    for name, kwargs in random_cases:
        kwargs = dict(PNG, batch_size=3, **kwargs)
        kwargs.setdefault('data_shape', (3, 8, 8))
        out.append((name, v2, kwargs, 2))
    v1 = 'ImageRecordIter_v1'
    out += [
        ('v1_plain', v1, dict(PNG, **small), 3),
        ('v1_no_round', v1, dict(PNG, round_batch=False, **small), 1),
        ('v1_shuffle', v1, dict(PNG, shuffle=True, seed=4, **small), 2),
        ('v1_normalize', v1, dict(PNG, **ONE, rand_mirror=True, max_random_contrast=0.2,
                                  max_random_illumination=10, mean_g=100, std_b=20, scale=0.5,
                                  seed=2, resize=10, **small), 2),
        ('v1_uint8', 'ImageRecordUInt8Iter_v1', dict(PNG, rand_mirror=True, **small), 1),
        ('v1_list', v1, dict(PNG, path_imglist='io_rec-list.lst', label_width=2, **small), 1),
        ('det', 'ImageDetRecordIter', dict(DET, data_shape=(3, 6, 7), batch_size=2), 2),
        ('det_pad_label', 'ImageDetRecordIter', dict(DET, label_pad_width=25, label_pad_value=-2,
                                                     data_shape=(3, 6, 6), batch_size=3,
                                                     round_batch=False), 1),
        ('det_shrink', 'ImageDetRecordIter', dict(DET, resize_mode='shrink', data_shape=(3, 10, 8),
                                                  batch_size=5, inter_method=2), 1),
        ('det_fit', 'ImageDetRecordIter', dict(DET, resize_mode='fit', resize=9,
                                               data_shape=(3, 16, 16), batch_size=5), 1),
        ('det_normalize', 'ImageDetRecordIter', dict(DET, mean_r=100, mean_g=90, std_r=40,
                                                     std_b=30, scale=2, data_shape=(3, 6, 6),
                                                     batch_size=5), 1),
        ('det_random', 'ImageDetRecordIter', dict(
            DET, **ONE, rand_mirror_prob=0.5, rand_pad_prob=0.5, max_pad_scale=2.0,
            rand_crop_prob=0.7, num_crop_sampler=2, min_crop_scales=(0.3, 0.5),
            max_crop_scales=(0.9, 1.0), min_crop_aspect_ratios=(0.5,),
            max_crop_aspect_ratios=(2.0,), min_crop_overlaps=(0.1, 0.0),
            max_crop_trials=(10, 20), fill_value=60, data_shape=(3, 9, 9), batch_size=5), 2),
        ('det_overlap', 'ImageDetRecordIter', dict(
            DET, **ONE, rand_crop_prob=1, min_crop_scales=(0.4,), crop_emit_mode='overlap',
            emit_overlap_thresh=0.5, data_shape=(3, 8, 8), batch_size=5), 2),
        ('det_color', 'ImageDetRecordIter', dict(
            DET, **ONE, random_hue_prob=0.8, max_random_hue=20, random_saturation_prob=0.8,
            max_random_saturation=30, random_illumination_prob=0.8, max_random_illumination=25,
            random_contrast_prob=0.8, max_random_contrast=0.4, data_shape=(3, 6, 6),
            batch_size=5), 2),
        ('det_shuffle', 'ImageDetRecordIter', dict(DET, shuffle=True, seed=7,
                                                   data_shape=(3, 6, 6), batch_size=2), 2),
        ('det_list', 'ImageDetRecordIter', dict(DET, path_imglist='io_rec-det.lst',
                                                data_shape=(3, 6, 6), batch_size=2), 1),
        ('det_grey_crop', 'ImageDetRecordIter', dict(DET, **ONE, rand_crop_prob=1,
                                                     min_crop_scales=(0.3,),
                                                     data_shape=(1, 7, 7), batch_size=5), 1),
        ('det_random_interp', 'ImageDetRecordIter', dict(DET, **ONE, resize=8, inter_method=10,
                                                         data_shape=(3, 6, 6), batch_size=5), 2),
    ]
    # the mean image is made from the data (in a scratch folder) before the first batch
    mean = dict(mean_img=MADE_MEAN, **ONE)
    out += [
        ('make_mean', v2, dict(PNG, resize=9, rand_mirror=True, scale=2, **mean, **small), 1),
        ('make_mean_shuffle', v2, dict(IDX, shuffle=True, rand_mirror=True, **mean, **small),
         1),
        ('make_mean_v1', v1, dict(PNG, rand_mirror=True, **mean, **small), 1),
        ('make_mean_det', 'ImageDetRecordIter', dict(DET, **mean, data_shape=(3, 6, 6),
                                                     batch_size=2), 1),
    ]
    return out


def run(name, cls, kwargs, epochs, out):
    if cls.startswith('ImageRecord') and '_v1' not in cls:
        # MXNet's prefetching recycles batches, and a recycled batch keeps the pad of its
        # last use; with more buffers than batches every batch is fresh and its pad true
        kwargs = dict(kwargs, prefetch_buffer=64)
    args = {k: path(v) if k.startswith(('path_', 'mean_img')) else v for k, v in kwargs.items()}
    scratch = tempfile.mkdtemp()
    if kwargs.get('mean_img') == MADE_MEAN:
        args['mean_img'] = os.path.join(scratch, 'mean.params')
    it = getattr(mx.io, cls)(verbose=False, **args)
    record = {'provide_data': [[d.name, list(d.shape), np.dtype(d.dtype).name]
                               for d in it.provide_data],
              'provide_label': [[d.name, list(d.shape), np.dtype(d.dtype).name]
                                for d in it.provide_label]}
    data, labels, pads, indexes, counts = [], [], [], [], []
    for _ in range(epochs):
        count = 0
        for batch in it:        # read at once: with ctx='cpu' the next batch overwrites this one
            count += 1
            data.append(batch.data[0].asnumpy())
            labels.append(batch.label[0].asnumpy())
            pads.append(batch.pad)
            indexes.append(batch.index)
        counts.append(count)
        it.reset()
    if kwargs.get('mean_img') == MADE_MEAN:
        out[f'{name}:mean'] = mx.nd.load(args['mean_img'])['mean_img'].asnumpy()
    shutil.rmtree(scratch)
    data = np.stack(data)
    whole = data.dtype == np.uint8 or np.array_equal(data, np.round(data)) and \
        data.min() >= 0 and data.max() < 256
    out[f'{name}:data'] = data.astype(np.uint8) if whole else data
    out[f'{name}:label'] = np.stack(labels)
    out[f'{name}:pad'] = np.array(pads)
    out[f'{name}:index'] = np.stack(indexes).astype(np.uint64)
    out[f'{name}:count'] = np.array(counts)
    record.update(name=name, iterator=cls, kwargs=kwargs, epochs=epochs,
                  dtype=str(data.dtype))
    return record


def main():
    write_records()
    mean = path('io_rec-mean.params')
    if os.path.exists(mean):
        os.remove(mean)                    # the 'mean_img' case makes it
    records, out = [], {}
    for name, cls, kwargs, epochs in cases():
        records.append(run(name, cls, kwargs, epochs, out))
    np.savez_compressed(path('io_rec-expected.npz'), **out)
    with open(path('io_rec-cases.json'), 'w') as f:
        f.write('[\n' + ',\n'.join(json.dumps(r, separators=(',', ':')) for r in records) +
                '\n]\n')


if __name__ == '__main__':
    main()
