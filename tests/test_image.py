"""mx.image against MXNet 1.9.1: decoding, resizing, borders, crops, augmenters and the image
iterators, compared with the numbers in tests/data/image-* (written by
tests/data/make_image_files.py); and the base classes of mx.io they use."""
import builtins
import importlib.util
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from hybridlib import image, nd
from hybridlib.base import MXNetError, NotSupportedError
from hybridlib.io import DataBatch, DataDesc, DataIter

# decoding needs Pillow, the image extra (the test extra installs it)
needs_pillow = pytest.mark.skipif(importlib.util.find_spec('PIL') is None,
                                  reason='decoding needs Pillow (the image extra)')

HERE = os.path.join(os.path.dirname(__file__), 'data')
DECODED = np.load(os.path.join(HERE, 'image-decoded.npz'))
OPS = np.load(os.path.join(HERE, 'image-ops.npz'))
AUG = np.load(os.path.join(HERE, 'image-augment.npz'))
ITER = np.load(os.path.join(HERE, 'image-iter.npz'))
with open(os.path.join(HERE, 'image-augment.json')) as _f:
    AUG_JSON = json.load(_f)
IMAGE_FILES = sorted({k.split(':')[0] for k in DECODED.files})


def data_path(name):
    return os.path.join(HERE, name)


def read(name):
    with open(data_path(name), 'rb') as f:
        return f.read()


def u8(array):
    return nd.array(array, dtype=np.uint8)


# -- decoding ---------------------------------------------------------------------------------

@pytest.mark.parametrize('flag', [0, 1])
@pytest.mark.parametrize('name', IMAGE_FILES)
def test_decoding_equals_mxnet(name, flag):
    features = pytest.importorskip('PIL.features')
    got = image.imdecode(read(name), flag=flag)
    expected = DECODED[f'{name}:{flag}']
    assert got.dtype == np.uint8 and got.shape == expected.shape
    diff = np.abs(got.asnumpy().astype(int) - expected)
    if name == 'image-rgb16.png' and flag == 0:
        # libpng makes grey from the 16-bit samples, Pillow gives their high bytes
        assert diff.max() <= 1
    elif name.endswith('.jpg') and not features.check_feature('libjpeg_turbo'):
        # other libjpeg builds upsample chroma and round the IDCT their own way
        assert diff.max() <= 3 and diff.mean() < 1
    else:
        # PNG exactly; JPEG too with libjpeg-turbo (the islow IDCT and the fancy upsampling
        # of OpenCV's libjpeg)
        assert diff.max() == 0
    # MXNet 1.9.1 (OpenCV 3.4) ignores the EXIF orientation: so does imdecode
    if name == 'image-exif6.jpg':
        assert got.shape[:2] == (8, 16)


@needs_pillow
def test_bgr_imread_and_buffers():
    for name in ('image-rgba.png', 'image-420.jpg'):
        data = read(name)
        np.testing.assert_array_equal(image.imdecode(data, to_rgb=0).asnumpy(),
                                      DECODED[f'{name}:bgr'])
        np.testing.assert_array_equal(image.imread(data_path(name), flag=0).asnumpy(),
                                      DECODED[f'{name}:imread'])
        rgb = DECODED[f'{name}:1']
        for buf in (bytearray(data), np.frombuffer(data, np.uint8), u8(np.frombuffer(data,
                                                                                    np.uint8))):
            np.testing.assert_array_equal(image.imdecode(buf).asnumpy(), rgb)
    out = nd.zeros((6, 9, 3), dtype='uint8')
    assert image.imdecode(read('image-rgb.png'), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), DECODED['image-rgb.png:1'])


@needs_pillow
def test_decoding_errors():
    with pytest.raises(MXNetError, match='Decoding failed. Invalid image file'):
        image.imdecode(b'not an image')
    with pytest.raises(ValueError, match='buf must be of type bytes, bytearray or numpy'):
        image.imdecode('image.png')
    with pytest.raises(MXNetError, match="couldn't open file"):
        image.imread(data_path('no-such-image.png'))


def test_missing_pillow_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_pil(name, *args, **kwargs):
        if name == 'PIL' or name.startswith('PIL.'):
            raise ImportError('No module named PIL')
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, '__import__', no_pil)
    with pytest.raises(NotSupportedError, match=r'pip install "hybridlib\[image\]"'):
        image.imdecode(read('image-rgb.png'))
    with pytest.raises(NotSupportedError, match='Pillow'):
        image.imread(data_path('image-rgb.png'))
    # everything that does not decode works without Pillow
    assert image.imresize(u8(DECODED['image-rgb.png:1']), 3, 2).shape == (2, 3, 3)


def test_import_without_pillow():
    code = ('import sys; sys.modules["PIL"] = None\n'
            'import hybridlib.image as image, hybridlib as mx\n'
            'print(image.imresize(mx.nd.ones((4, 4, 3)), 2, 2).shape)\n'
            'try:\n    image.imdecode(b"x")\nexcept Exception as e:\n    print(e)\n')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert '(2, 2, 3)' in result.stdout and 'hybridlib[image]' in result.stdout


# -- resizing, borders, colour, rotation --------------------------------------------------------

RESIZES = [(4, 3), (11, 9), (5, 10), (3, 6), (2, 2), (16, 12)]


@pytest.mark.parametrize('size', RESIZES, ids=lambda s: f'{s[0]}x{s[1]}')
def test_imresize_equals_mxnet(size):
    w, h = size
    img = u8(OPS['img'])
    for interp in range(5):
        got = image.imresize(img, w, h, interp=interp)
        assert got.dtype == np.uint8
        # OpenCV's fixed-point arithmetic, its rounding and its vectorised paths: bit for bit
        np.testing.assert_array_equal(got.asnumpy(), OPS[f'imresize_{w}x{h}_u8'][interp],
                                      err_msg=f'interp {interp}')
    if f'imresize_{w}x{h}_f32' in OPS.files:
        for interp in range(5):
            got = image.imresize(img.astype('float32') * 0.9 + 3, w, h, interp=interp)
            np.testing.assert_allclose(got.asnumpy(), OPS[f'imresize_{w}x{h}_f32'][interp],
                                       rtol=1e-6, atol=1e-4)


def test_image_resize_batches_and_keep_ratio():
    batch = u8(OPS['batch'])
    for interp in range(5):
        got = nd.image.resize(batch, size=(4, 9), interp=interp)
        np.testing.assert_array_equal(got.asnumpy(), OPS['resize_batch'][interp])
    np.testing.assert_array_equal(nd.image.resize(batch, size=4, keep_ratio=True,
                                                  interp=2).asnumpy(), OPS['resize_keep'])


def test_copy_make_border_equals_mxnet():
    small = u8(OPS['img'][:3, :4])
    # OpenCV's types: 0 constant, 1 replicate, 2 reflect, 3 wrap, 4 reflect_101; margins
    # wider than the image reflect and wrap again
    for kind in range(5):
        got = image.copyMakeBorder(small, 5, 1, 9, 2, type=kind)
        np.testing.assert_array_equal(got.asnumpy(), OPS[f'border_{kind}'])
    np.testing.assert_array_equal(
        image.copyMakeBorder(small, 1, 2, 0, 1, type=0, values=(7, 300, -4)).asnumpy(),
        OPS['border_values'])
    np.testing.assert_array_equal(
        image.copyMakeBorder(small.astype('float32'), 1, 0, 2, 1, type=16, value=2.5).asnumpy(),
        OPS['border_value'])
    np.testing.assert_array_equal(image.copyMakeBorder(small, 1, 1, 1, 1, values=(9,)).asnumpy(),
                                  OPS['border_short_values'])
    with pytest.raises(MXNetError, match='type=5 is not a border type'):
        image.copyMakeBorder(small, 1, 1, 1, 1, type=5)


def test_colour_operators_equal_mxnet():
    x = u8(OPS['img'])
    for f in (0.4, 1.3):
        for name in ('brightness', 'contrast', 'hue'):
            got = getattr(nd.image, f'random_{name}')(x, f, f)
            np.testing.assert_array_equal(got.asnumpy(), OPS[f'{name}_{f}'], err_msg=name)
    np.testing.assert_array_equal(nd.image.adjust_lighting(x, alpha=(0.8, -1.5, 2.0)).asnumpy(),
                                  OPS['lighting'])
    np.testing.assert_array_equal(nd.image.crop(x, 2, 1, 5, 4).asnumpy(), OPS['crop'])


def test_imrotate_equals_mxnet():
    tensor = nd.image.to_tensor(u8(OPS['img'][:4, :5]))
    for name, kwargs in (('rotate', {}), ('rotate_in', dict(zoom_in=True)),
                         ('rotate_out', dict(zoom_out=True))):
        got = image.imrotate(tensor, 30, **kwargs)
        np.testing.assert_allclose(got.asnumpy(), OPS[name], rtol=1e-5, atol=1e-6)
    got = image.imrotate(nd.stack(tensor, tensor * 0.5), nd.array([-45, 90]))
    np.testing.assert_allclose(got.asnumpy(), OPS['rotate_batch'], rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match='float32'):
        image.imrotate(u8(OPS['img']), 30)
    with pytest.raises(ValueError, match='cannot be both True'):
        image.imrotate(tensor, 30, zoom_in=True, zoom_out=True)
    with pytest.raises(TypeError, match='scalar'):
        image.imrotate(tensor, nd.array([30]))
    np.random.seed(0)
    angle = np.random.uniform(-20, 20)
    np.random.seed(0)
    np.testing.assert_allclose(image.random_rotate(tensor, (-20, 20)).asnumpy(),
                               image.imrotate(tensor, angle).asnumpy(), rtol=1e-6, atol=1e-7)


# -- crops and helpers ----------------------------------------------------------------------------

def test_scale_down_and_interp_method():
    assert image.scale_down((640, 480), (720, 120)) == (640, 106)       # MXNet's docstring
    assert image.scale_down((5, 5), (3, 2)) == (3, 2)
    from hybridlib.image.image import _get_interp_method
    assert [_get_interp_method(9, s) for s in ((2, 2, 3, 3), (4, 4, 2, 2), (2, 4, 3, 3))] == \
        [2, 3, 1]
    assert _get_interp_method(9) == 2 and _get_interp_method(3) == 3
    random.seed(11)
    assert [_get_interp_method(10) for _ in range(20)] == AUG_JSON['interp_random']
    with pytest.raises(ValueError, match='Unknown interp method 7'):
        _get_interp_method(7)
    img = nd.array(OPS['img'], dtype='uint8')
    # imresize takes 9 and 10 too (MXNet hands them to OpenCV, which fails)
    np.testing.assert_array_equal(image.imresize(img, 16, 12, interp=9).asnumpy(),
                                  OPS['imresize_16x12_u8'][2])
    np.testing.assert_array_equal(image.imresize(img, 4, 3, interp=9).asnumpy(),
                                  OPS['imresize_4x3_u8'][3])


def test_crop_functions():
    img = u8(OPS['img'])                                    # 6 x 8
    assert image.resize_short(img, 3).shape == (3, 4, 3)
    assert image.resize_short(u8(OPS['img'].transpose(1, 0, 2)), 3).shape == (4, 3, 3)
    np.testing.assert_array_equal(image.fixed_crop(img, 1, 2, 3, 4).asnumpy(),
                                  OPS['img'][2:6, 1:4])
    np.testing.assert_array_equal(image.fixed_crop(img, 2, 1, 5, 4, size=(11, 9),
                                                   interp=1).asnumpy(),
                                  image.imresize(u8(OPS['img'][1:5, 2:7]), 11, 9).asnumpy())
    out, rect = image.center_crop(img, (4, 2))
    assert rect == (2, 2, 4, 2)
    np.testing.assert_array_equal(out.asnumpy(), OPS['img'][2:4, 2:6])
    out, rect = image.center_crop(img, (16, 4))             # scaled down to fit, then up
    assert rect == (0, 2, 8, 2) and out.shape == (4, 16, 3)
    random.seed(4)
    x0, y0 = random.randint(0, 3), random.randint(0, 3)
    random.seed(4)
    out, rect = image.random_crop(img, (5, 3))
    assert rect == (x0, y0, 5, 3)
    np.testing.assert_array_equal(out.asnumpy(), OPS['img'][y0:y0 + 3, x0:x0 + 5])
    out, rect = image.random_size_crop(img, (4, 4), (0.3, 1.0), (0.5, 2))
    assert out.shape == (4, 4, 3) and rect[2] <= 8 and rect[3] <= 6
    with pytest.warns(DeprecationWarning):
        image.random_size_crop(img, (4, 4), None, (0.5, 2), min_area=0.5)
    src = nd.array(OPS['img'], dtype='float32')
    expected = (OPS['img'] - np.array([1, 2, 3])) / np.array([2, 4, 8])
    got = image.color_normalize(src, nd.array([1, 2, 3]), nd.array([2, 4, 8]))
    assert got is src
    np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-6)


# -- augmenters -------------------------------------------------------------------------------

def augmenters():
    """The list of tests/data/make_image_files.py."""
    I = image
    eigval = np.array([55.46, 4.794, 1.148])
    eigvec = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                       [-0.5836, -0.6948, 0.4203]])
    return [
        ('resize', I.ResizeAug(5, interp=1)),
        ('resize_auto', I.ResizeAug(9, interp=9)),
        ('force_resize', I.ForceResizeAug((5, 4), interp=2)),
        ('random_crop', I.RandomCropAug((5, 4), interp=1)),
        ('random_crop_up', I.RandomCropAug((12, 10), interp=1)),
        ('random_sized_crop', I.RandomSizedCropAug((4, 4), 0.3, (0.75, 1.33), interp=1)),
        ('center_crop', I.CenterCropAug((5, 3), interp=1)),
        ('brightness', I.BrightnessJitterAug(0.3)),
        ('contrast', I.ContrastJitterAug(0.3)),
        ('saturation', I.SaturationJitterAug(0.3)),
        ('hue', I.HueJitterAug(0.2)),
        ('color_jitter', I.ColorJitterAug(0.2, 0.3, 0.4)),
        ('lighting', I.LightingAug(0.5, eigval, eigvec)),
        ('normalize', I.ColorNormalizeAug(nd.array([120, 110, 100]), nd.array([50, 60, 70]))),
        ('gray', I.RandomGrayAug(0.7)),
        ('flip', I.HorizontalFlipAug(0.6)),
        ('cast', I.CastAug()),
        ('sequential', I.SequentialAug([I.CastAug(), I.BrightnessJitterAug(0.2)])),
        ('random_order', I.RandomOrderAug([I.BrightnessJitterAug(0.2),
                                           I.ContrastJitterAug(0.2)])),
    ]


GEOMETRIC = ('resize', 'resize_auto', 'force_resize', 'random_crop', 'random_crop_up',
             'random_sized_crop', 'center_crop', 'flip', 'cast', 'sequential')


@pytest.mark.parametrize('name,aug', augmenters(), ids=[a[0] for a in augmenters()])
def test_augmenters_equal_mxnet(name, aug):
    """With the seeds of Python's random and numpy's generator, each augmenter draws and
    computes what MXNet's does."""
    for seed in (0, 1):
        random.seed(seed)
        np.random.seed(seed)
        src = u8(AUG['img'])
        if name not in GEOMETRIC:
            src = src.astype('float32')
        got = aug(src)
        expected = AUG[name][seed]
        assert got.shape == expected.shape and got.dtype == expected.dtype
        if expected.dtype == np.uint8:
            np.testing.assert_array_equal(got.asnumpy(), expected)
        else:
            np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-5, atol=1e-4)
    # dumps() gives MXNet's JSON (a list for the composite augmenters)
    assert aug.dumps() == AUG_JSON['dumps'][name]


CREATE_ARGS = [
    dict(data_shape=(3, 4, 5)),
    dict(data_shape=(3, 4, 5), resize=6, rand_crop=True, rand_mirror=True),
    dict(data_shape=(3, 4, 5), rand_crop=True, rand_resize=True, mean=True, std=True),
    dict(data_shape=(3, 4, 5), brightness=0.1, contrast=0.2, saturation=0.3, hue=0.1,
         pca_noise=0.05, rand_gray=0.2, inter_method=10),
    dict(data_shape=(3, 4, 5), mean=np.array([1, 2, 3]), std=np.array([4.0])),
]


def test_create_augmenter_lists_equal_mxnet():
    for kwargs, expected in zip(CREATE_ARGS, AUG_JSON['create']):
        assert [a.dumps() for a in image.CreateAugmenter(**kwargs)] == expected
    det = image.CreateDetAugmenter((3, 8, 8), resize=10, rand_crop=0.5, rand_pad=0.5,
                                   rand_gray=0.1, rand_mirror=True, mean=True, std=True,
                                   brightness=0.1, hue=0.1, pca_noise=0.1)
    assert [a.dumps() for a in det] == AUG_JSON['det']
    with pytest.raises(AssertionError, match='rand_resize needs rand_crop'):
        image.CreateAugmenter((3, 4, 5), rand_resize=True)
    with pytest.raises(AssertionError, match='mean must be'):
        image.CreateAugmenter((3, 4, 5), mean=[1, 2, 3])


def test_create_augmenter_pipeline_runs():
    augs = image.CreateAugmenter((3, 4, 5), resize=6, rand_crop=True, rand_resize=True,
                                 rand_mirror=True, mean=True, std=True, brightness=0.2,
                                 contrast=0.2, saturation=0.2, hue=0.1, pca_noise=0.1,
                                 rand_gray=0.5, inter_method=10)
    x = u8(AUG['img'])
    for aug in augs:
        x = aug(x)
    assert x.shape == (4, 5, 3) and x.dtype == np.float32
    assert np.isfinite(x.asnumpy()).all()


# -- detection augmenters ---------------------------------------------------------------------

def det_label():
    return np.array([[0, 0.1, 0.2, 0.6, 0.7], [1, 0.5, 0.4, 0.9, 0.95]])


def test_det_flip_crop_and_pad_move_the_boxes():
    img = u8(AUG['img'])                                   # 5 x 6
    label = det_label()
    flipped, out = image.DetHorizontalFlipAug(1.0)(img, label.copy())
    np.testing.assert_array_equal(flipped.asnumpy(), AUG['img'][:, ::-1])
    np.testing.assert_allclose(out[:, (1, 3)], 1 - label[:, (3, 1)])
    random.seed(2)
    crop = image.DetRandomCropAug(min_object_covered=0.5, area_range=(0.3, 1.0))
    src, new = crop(img, label)
    h, w = src.shape[:2]
    assert h <= 5 and w <= 6 and new.shape[1] == 5
    assert np.all((new[:, 1:] >= 0) & (new[:, 1:] <= 1))
    random.seed(1)
    pad = image.DetRandomPadAug(area_range=(2.0, 3.0), pad_val=(1, 2, 3))
    src, new = pad(img, label)
    h, w = src.shape[:2]
    assert h >= 7 and w >= 8
    # the image sits somewhere in the canvas, and the boxes cover the same pixels
    x0 = int(round(new[0, 1] * w - label[0, 1] * 6))
    y0 = int(round(new[0, 2] * h - label[0, 2] * 5))
    np.testing.assert_array_equal(src.asnumpy()[y0:y0 + 5, x0:x0 + 6], AUG['img'])
    assert tuple(src.asnumpy()[0 if y0 else -1, 0 if x0 else -1]) == (1, 2, 3)
    select = image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5], skip_prob=1)
    assert len(select.aug_list) == 2
    assert select(img, label)[1] is label
    borrowed = image.DetBorrowAug(image.CastAug())
    assert borrowed(img, label)[0].dtype == np.float32
    assert borrowed.dumps() == ['detborrowaug', '["castaug", {"type": "float32"}]']
    with pytest.raises(TypeError, match='Borrowing from invalid Augmenter'):
        image.DetBorrowAug(crop)


# -- iterators --------------------------------------------------------------------------------

def run(it, epochs=2):
    data, labels, pads, counts = [], [], [], []
    for _ in range(epochs):
        batches = list(it)
        counts.append(len(batches))
        for batch in batches:
            assert isinstance(batch, DataBatch)
            data.append(batch.data[0].asnumpy())
            labels.append(batch.label[0].asnumpy())
            pads.append(batch.pad)
        it.reset()
    return np.stack(data), np.stack(labels), np.array(pads), np.array(counts)


def check_run(key, it, epochs=2):
    data, labels, pads, counts = run(it, epochs)
    np.testing.assert_array_equal(counts, ITER[f'{key}_count'])
    np.testing.assert_array_equal(pads, ITER[f'{key}_pad'])
    np.testing.assert_array_equal(data, ITER[f'{key}_data'])
    np.testing.assert_array_equal(labels, ITER[f'{key}_label'])


REC = dict(path_imgrec=data_path('image-records.rec'))


@needs_pillow
@pytest.mark.parametrize('handle', ['pad', 'discard', 'roll_over'])
def test_image_iter_over_records(handle):
    it = image.ImageIter(2, (3, 4, 4), last_batch_handle=handle, **REC)
    assert it.provide_data == [DataDesc('data', (2, 3, 4, 4))]
    assert it.provide_label == [('softmax_label', (2,))]
    check_run(f'rec_{handle}', it)


@needs_pillow
def test_image_iter_shuffle_parts_and_lists():
    random.seed(3)
    check_run('rec_shuffle', image.ImageIter(2, (3, 3, 5), shuffle=True, rand_crop=True,
                                             path_imgidx=data_path('image-records.idx'), **REC))
    check_run('rec_part', image.ImageIter(1, (3, 4, 4), num_parts=2, part_index=1,
                                          path_imgidx=data_path('image-records.idx'), **REC), 1)
    it = image.ImageIter(2, (3, 5, 5), label_width=2, path_imglist=data_path('image-list.lst'),
                         path_root=HERE, resize=6)
    assert it.provide_label == [DataDesc('softmax_label', (2, 2))]
    check_run('list', it, 1)
    check_run('imglist', image.ImageIter(2, (3, 4, 4), label_width=2,
                                         imglist=[[1.5, 'image-rgb.png'],
                                                  [[2, 3], 'image-420.jpg'],
                                                  [4, 5, 'image-grey.png']],
                                         path_root=HERE, dtype='int32'), 1)


def test_image_iter_errors():
    with pytest.raises(AssertionError):
        image.ImageIter(2, (3, 4, 4))
    with pytest.raises(ValueError, match='3 channels'):
        image.ImageIter(2, (1, 4, 4), **REC)
    with pytest.raises(AssertionError, match='label not supported'):
        image.ImageIter(2, (3, 4, 4), dtype='uint8', **REC)
    with pytest.raises(AssertionError, match='path_imgidx'):
        image.ImageIter(2, (3, 4, 4), shuffle=True, **REC)
    it = image.ImageIter(1, (3, 2, 2), imglist=[[0, 'image-missing.png']], path_root=HERE)
    with pytest.raises(FileNotFoundError):
        it.next()
    broken = image.ImageIter(1, (3, 2, 2), imglist=[[0, 'image-list.lst']], path_root=HERE)
    with pytest.raises(RuntimeError, match='Broken image filename: image-list.lst'):
        broken.next()


@needs_pillow
def test_image_det_iter():
    it = image.ImageDetIter(2, (3, 5, 5), path_imgrec=data_path('image-det.rec'))
    assert it.provide_label == [DataDesc('label', (2, 2, 5))]
    check_run('det', it)
    other = image.ImageDetIter(1, (3, 5, 5), imglist=[[[4, 5, 6, 6] + [0, 0.1, 0.1, 0.5, 0.5] * 3,
                                                       'image-rgb.png']], path_root=HERE)
    assert other.label_shape == (3, 5)
    it.sync_label_shape(other)
    assert it.label_shape == (3, 5) and it.provide_label[0][1] == (2, 3, 5)
    batch = it.next()
    assert batch.label[0].shape == (2, 3, 5) and float(batch.label[0][0, 2, 0].asscalar()) == -1
    with pytest.raises(ValueError, match='reduce label count'):
        it.reshape(label_shape=(1, 5))
    drawn = next(image.ImageDetIter(1, (3, 8, 8), path_imgrec=data_path('image-det.rec'))
                 .draw_next(color=(255, 0, 0)))
    assert drawn.dtype == np.uint8 and drawn.shape == (8, 8, 3)
    assert (drawn.reshape(-1, 3) == [0, 0, 255]).all(axis=1).any()     # BGR red boxes


# -- mx.io base classes -------------------------------------------------------------------------

def test_io_base_classes():
    desc = DataDesc('data', (2, 3))
    # MXNet 1.9.1's repr
    assert repr(desc) == "DataDesc[data,(2, 3),<class 'numpy.float32'>,NCHW]"
    assert desc == ('data', (2, 3)) and desc.layout == 'NCHW'
    assert DataDesc.get_batch_axis('TNC') == 1 and DataDesc.get_batch_axis(None) == 0
    assert repr(DataDesc.get_list([('a', (1, 2))], [('a', 'int32')])) == \
        '[DataDesc[a,(1, 2),int32,NCHW]]'
    batch = DataBatch([nd.zeros((2, 3))], [nd.zeros((2,))], pad=1)
    assert str(batch) == 'DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]'
    assert str(DataBatch([nd.zeros((2, 3))])) == \
        'DataBatch: data shapes: [(2, 3)] label shapes: None'
    with pytest.raises(AssertionError, match='list of NDArrays'):
        DataBatch(nd.zeros((2, 3)))

    class Three(DataIter):
        def __init__(self):
            super().__init__(batch_size=1)
            self.n = 0

        def iter_next(self):
            self.n += 1
            return self.n <= 3

        def getdata(self):
            return [nd.full((1,), self.n)]

        def getlabel(self):
            return None

        def getpad(self):
            return 0

    values = [float(b.data[0].asscalar()) for b in Three()]
    assert values == [1.0, 2.0, 3.0]
