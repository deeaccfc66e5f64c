"""gluon.data.vision: transforms against MXNet 1.9.1's outputs (tests/data/data-transforms.npz,
written by tests/data/make_data_files.py) and numpy references, hybridized and not; the
datasets read from small files written here in the real formats (sums and labels are what
MXNet 1.9.1 reads from the same files)."""
import gzip
import json
import os
import struct

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import gluon, nd
from hybridlib.base import NotSupportedError

vision = gluon.data.vision
T = vision.transforms
REF = np.load(os.path.join(os.path.dirname(__file__), 'data', 'data-transforms.npz'))


def u8(array):
    return nd.array(array, dtype=array.dtype)


def run(block, x, hybridize):
    if hybridize:
        block.hybridize()
    return block(x).asnumpy()


# -- transforms: values -----------------------------------------------------------------------

RESIZES = [('up', (11, 9)), ('down', (3, 2)), ('mixed', (4, 8)), ('same', (7, 5))]


@pytest.mark.parametrize('hybridize', [False, True], ids=['imperative', 'hybridized'])
@pytest.mark.parametrize('interp', [0, 1])
@pytest.mark.parametrize('name,size', RESIZES, ids=[r[0] for r in RESIZES])
def test_resize_equals_mxnet(name, size, interp, hybridize):
    img = REF['img']
    got = run(T.Resize(size, interpolation=interp), u8(img), hybridize)
    # uint8: OpenCV's fixed-point arithmetic, bit for bit
    np.testing.assert_array_equal(got, REF[f'resize_{name}_{interp}_u8'])
    assert got.dtype == np.uint8 and got.shape == (size[1], size[0], 3)
    got = run(T.Resize(size, interpolation=interp), u8(img).astype('float32'), hybridize)
    np.testing.assert_allclose(got, REF[f'resize_{name}_{interp}_f32'], rtol=1e-6, atol=1e-4)
    assert got.dtype == np.float32


def test_resize_sizes_and_batches():
    img = u8(REF['img'])                        # 5 x 7
    np.testing.assert_array_equal(T.Resize(4, keep_ratio=True)(img).asnumpy(),
                                  REF['resize_keep_4'])
    np.testing.assert_array_equal(T.Resize(6)(img).asnumpy(), REF['resize_int_6'])
    np.testing.assert_array_equal(run(T.Resize((5, 3)), u8(REF['batch']), True),
                                  REF['resize_batch'])
    # MXNet: the shorter edge to size, the longer one scaled and rounded down
    assert T.Resize(3, keep_ratio=True)(nd.zeros((4, 5, 3))).shape == (3, 3, 3)
    assert T.Resize(8, keep_ratio=True)(nd.zeros((4, 5, 3))).shape == (8, 10, 3)
    assert T.Resize(7, keep_ratio=True)(nd.zeros((5, 4, 3))).shape == (8, 7, 3)
    assert T.Resize((7, 3), keep_ratio=True)(nd.zeros((4, 5, 3))).shape == (3, 7, 3)


def numpy_bilinear(img, out_h, out_w):
    """Half-pixel bilinear interpolation with clamped borders, in float64."""
    def taps(n_in, n_out):
        pos = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
        i0 = np.floor(pos).astype(int)
        return i0, np.minimum(i0 + 1, n_in - 1), pos - i0
    y0, y1, fy = taps(img.shape[0], out_h)
    x0, x1, fx = taps(img.shape[1], out_w)
    rows = img[y0] * (1 - fy)[:, None, None] + img[y1] * fy[:, None, None]
    return rows[:, x0] * (1 - fx)[None, :, None] + rows[:, x1] * fx[None, :, None]


def test_resize_float64_matches_numpy_reference():
    img = np.random.default_rng(1).random((6, 9, 2))
    got = T.Resize((13, 4))(nd.array(img, dtype='float64'))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.asnumpy(), numpy_bilinear(img, 4, 13), atol=1e-6)


def test_resize_other_integer_dtypes_round():
    img = np.arange(12, dtype=np.int32).reshape(2, 2, 3) * 100
    got = T.Resize((3, 3))(nd.array(img, dtype='int32'))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.asnumpy(), np.rint(numpy_bilinear(img, 3, 3)))


def test_resize_errors():
    with pytest.raises(ValueError, match='interp=7 is not one of 0 \\(nearest\\)'):
        T.Resize(3, interpolation=7)(nd.zeros((4, 4, 3)))
    with pytest.raises(ValueError, match=r'\(height, width, channels\).*\(4, 4\)'):
        T.Resize(3)(nd.zeros((4, 4)))


@pytest.mark.parametrize('hybridize', [False, True], ids=['imperative', 'hybridized'])
def test_to_tensor_and_normalize_equal_mxnet(hybridize):
    img = u8(REF['img'])
    tensor = run(T.ToTensor(), img, hybridize)
    np.testing.assert_array_equal(tensor, REF['to_tensor'])
    assert tensor.dtype == np.float32
    np.testing.assert_array_equal(REF['to_tensor'], REF['img'].transpose(2, 0, 1) / np.float32(255))
    batch = run(T.ToTensor(), u8(REF['batch']), hybridize)
    np.testing.assert_array_equal(batch, REF['to_tensor_batch'])
    norm = T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    got = run(norm, nd.array(tensor), hybridize)
    np.testing.assert_allclose(got, REF['normalize'], rtol=1e-6, atol=1e-6)


def test_normalize_scalar_broadcast_and_batches():
    x = np.random.default_rng(2).random((2, 3, 4, 5)).astype(np.float32)
    got = T.Normalize(0.5, 0.25)(nd.array(x)).asnumpy()
    np.testing.assert_allclose(got, (x - 0.5) / 0.25, rtol=1e-6)
    got = T.Normalize((0.1, 0.2, 0.3), (1, 2, 4))(nd.array(x)).asnumpy()
    ref = (x - np.array([0.1, 0.2, 0.3], np.float32)[:, None, None]) / \
        np.array([1, 2, 4], np.float32)[:, None, None]
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    one = T.Normalize((0.1,), (0.2,))(nd.array(x[0]))
    np.testing.assert_allclose(one.asnumpy(), (x[0] - 0.1) / 0.2, rtol=1e-5)
    assert T.Normalize(0.5, 0.5)(nd.ones((3, 2, 2), dtype='float64')).dtype == np.float64


def test_normalize_errors():
    with pytest.raises(ValueError, match='mean must have either 1 or 3 elements, but got '
                                         r'\(0.1, 0.2\)'):
        T.Normalize((0.1, 0.2), (1, 1))(nd.ones((3, 2, 2)))
    with pytest.raises(ValueError, match='either 1 or 3 elements'):
        T.Normalize(0.5, 0.5)(nd.ones((4, 2, 2)))
    with pytest.raises(ValueError, match=r'\(channels, height, width\)'):
        T.Normalize(0.5, 0.5)(nd.ones((2, 2)))


def test_cast():
    img = u8(REF['img'])
    assert T.Cast()(img).dtype == np.float32
    assert run(T.Cast('float16'), img, True).dtype == np.float16
    np.testing.assert_array_equal(T.Cast('int32')(img).asnumpy(), REF['img'].astype(np.int32))


def test_crops_equal_mxnet():
    img = u8(REF['img'])
    np.testing.assert_array_equal(T.CenterCrop((3, 2))(img).asnumpy(), REF['center_crop_3x2'])
    # larger than the image: scaled down to fit, then resized up (MXNet: (9, 9, 3))
    np.testing.assert_array_equal(T.CenterCrop(9)(img).asnumpy(), REF['center_crop_9'])
    for hybridize in (False, True):
        np.testing.assert_array_equal(run(T.CropResize(1, 2, 4, 3), img, hybridize),
                                      REF['crop_resize'])
        # MXNet fails on the default interpolation=None with a size; 1 is used here
        np.testing.assert_array_equal(run(T.CropResize(1, 2, 4, 3, size=(6, 5)), img,
                                          hybridize), REF['crop_resize_size'])
    assert T.CropResize(1, 0, 2, 3)(nd.ones((2, 3, 3, 3))).shape == (2, 3, 2, 3)
    with pytest.raises(ValueError, match='x \\+ width should not be greater than input width'):
        T.CropResize(1, 1, 5, 2)(nd.ones((3, 3, 3)))


# -- transforms: randomness -------------------------------------------------------------------

@pytest.mark.parametrize('hybridize', [False, True], ids=['imperative', 'hybridized'])
@pytest.mark.parametrize('cls,axis', [(T.RandomFlipLeftRight, 1), (T.RandomFlipTopBottom, 0)])
def test_random_flips(cls, axis, hybridize):
    img = REF['img']
    flip = cls()
    if hybridize:
        flip.hybridize()
    mx.random.seed(3)
    outs = [flip(u8(img)).asnumpy() for _ in range(20)]
    flipped = [bool(np.array_equal(o, np.flip(img, axis))) for o in outs]
    assert all(f or np.array_equal(o, img) for f, o in zip(flipped, outs))
    assert 3 < sum(flipped) < 17
    mx.random.seed(3)
    again = [bool(np.array_equal(flip(u8(img)).asnumpy(), np.flip(img, axis)))
             for _ in range(20)]
    assert again == flipped
    with pytest.raises(ValueError, match=r'_image_random_flip_.*\(height, width, channels\)'):
        cls()(u8(REF['batch']))


def test_random_resized_crop():
    img = u8(REF['img'])
    crop = T.RandomResizedCrop((4, 3))
    mx.random.seed(7)
    first = [crop(img).asnumpy() for _ in range(5)]
    mx.random.seed(7)
    second = [crop(img).asnumpy() for _ in range(5)]
    assert all(a.shape == (3, 4, 3) and a.dtype == np.uint8 for a in first)
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    assert not all(np.array_equal(first[0], a) for a in first[1:])
    # the whole image at its own size is an identity crop
    whole = T.RandomResizedCrop((7, 5), scale=(1.0, 1.0), ratio=(7 / 5, 7 / 5))
    np.testing.assert_array_equal(whole(img).asnumpy(), REF['img'])
    # no crop fits: the center crop
    fallback = T.RandomResizedCrop((3, 2), scale=(1.0, 1.0), ratio=(10.0, 10.0))
    np.testing.assert_array_equal(fallback(img).asnumpy(), REF['center_crop_3x2'])


def test_random_apply():
    apply = T.RandomApply(gluon.nn.Lambda(lambda x: x + 1), p=0.5)
    mx.random.seed(0)
    results = [float(apply(nd.zeros((1,))).asscalar()) for _ in range(40)]
    assert set(results) == {0.0, 1.0}
    always = T.RandomApply(gluon.nn.Lambda(lambda x: x + 1), p=1)
    assert float(always(nd.zeros((1,))).asscalar()) == 1.0


# -- colour transforms, rotations, and the graphs MXNet's transforms make -------------------------

def graph_transforms():
    """The list of tests/data/make_image_files.py."""
    return [('to_tensor', T.ToTensor()), ('normalize', T.Normalize((0.1, 0.2, 0.3), (1, 2, 3))),
            ('resize_keep', T.Resize(5, keep_ratio=True, interpolation=2)),
            ('resize', T.Resize((4, 3))),
            ('crop_resize', T.CropResize(1, 2, 3, 4, size=(5, 6), interpolation=1)),
            ('flip_lr', T.RandomFlipLeftRight()), ('flip_tb', T.RandomFlipTopBottom()),
            ('brightness', T.RandomBrightness(0.3)), ('contrast', T.RandomContrast(1.5)),
            ('saturation', T.RandomSaturation(0.1)), ('hue', T.RandomHue(0.2)),
            ('jitter', T.RandomColorJitter(0.1, 0.2, 0.3, 0.4)),
            ('lighting', T.RandomLighting(0.1)), ('cast', T.Cast('float16'))]


def test_transform_graphs_name_mxnets_operators():
    with open(os.path.join(os.path.dirname(__file__), 'data', 'image-transforms.json')) as f:
        expected = json.load(f)
    for name, block in graph_transforms():
        nodes = json.loads(block(mx.sym.var('data')).tojson())['nodes'][1:]
        assert [[n['op'], n.get('attrs', {})] for n in nodes] == expected[name], name


COLOUR = [(T.RandomBrightness, 0.3), (T.RandomContrast, 0.4), (T.RandomSaturation, 0.5),
          (T.RandomHue, 0.2), (T.RandomLighting, 0.5)]


@pytest.mark.parametrize('cls,amount', COLOUR, ids=[c[0].__name__ for c in COLOUR])
def test_colour_transforms_hybridize_and_repeat(cls, amount):
    img = u8(REF['img'])
    outs = []
    for hybridize in (False, True):
        block = cls(amount)
        if hybridize:
            block.hybridize()
        mx.random.seed(4)
        outs.append([block(img).asnumpy() for _ in range(3)])
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == np.uint8 and a.shape == REF['img'].shape
    assert not np.array_equal(outs[0][0], outs[0][1])          # a new factor at each call


def test_colour_transform_values():
    img = np.random.default_rng(3).uniform(0, 255, (4, 5, 3)).astype(np.float32)
    out = T.RandomBrightness(0.5)(nd.array(img)).asnumpy()
    alpha = float(np.sum(out * img) / np.sum(img * img))
    assert 0.5 - 1e-6 <= alpha <= 1.5 + 1e-6
    np.testing.assert_allclose(out, img * alpha, rtol=1e-5)
    # brightness 1.5: the factors are drawn from [max(0, 1 - 1.5), 2.5] = [0, 2.5] (MXNet)
    low = T.RandomContrast(1.5)._args
    assert low == (0, 2.5)
    grey = np.full((2, 2, 3), 100, np.float32)
    np.testing.assert_allclose(T.RandomHue(0.4)(nd.array(grey)).asnumpy(), grey, atol=1e-3)
    np.testing.assert_allclose(T.RandomSaturation(0.9)(nd.array(grey)).asnumpy(), grey,
                               atol=1e-3)
    same = T.RandomColorJitter()(nd.array(img)).asnumpy()      # every amount 0: unchanged
    np.testing.assert_array_equal(same, img)
    jitter = T.RandomColorJitter(brightness=0.2, contrast=0.2, saturation=0.2, hue=0.1)
    jitter.hybridize()
    assert jitter(u8(REF['img'])).dtype == np.uint8


def test_rotate():
    tensor = T.ToTensor()(u8(REF['img']))
    np.testing.assert_allclose(T.Rotate(30)(tensor).asnumpy(),
                               mx.image.imrotate(tensor, 30).asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(T.Rotate(90, zoom_out=True)(tensor).asnumpy(),
                               mx.image.imrotate(tensor, 90, zoom_out=True).asnumpy(),
                               rtol=1e-6)
    # a half turn maps pixel centres onto pixel centres
    np.testing.assert_allclose(T.Rotate(180)(tensor).asnumpy(),
                               tensor.asnumpy()[:, ::-1, ::-1], atol=1e-5)
    with pytest.raises(TypeError, match='only supports float32'):
        T.Rotate(30)(u8(REF['img']))


def test_random_rotation():
    tensor = T.ToTensor()(u8(REF['img']))
    rotation = T.RandomRotation((-30, 30))
    mx.random.seed(2)
    first = [rotation(tensor).asnumpy() for _ in range(3)]
    mx.random.seed(2)
    again = [rotation(tensor).asnumpy() for _ in range(3)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.allclose(first[0], first[1])
    batch = nd.stack(tensor, tensor)
    out = T.RandomRotation((10, 20), zoom_in=True)(batch).asnumpy()
    assert out.shape == batch.shape and not np.allclose(out[0], out[1])
    img = u8(REF["img"])
    assert T.RandomRotation((0, 90), rotate_with_proba=0)(img) is img
    with pytest.raises(ValueError, match='ordered tuple'):
        T.RandomRotation((30, -30))
    with pytest.raises(ValueError, match='between 0 and 1'):
        T.RandomRotation((0, 30), rotate_with_proba=2)
    with pytest.raises(TypeError, match='only supports float32'):
        T.RandomRotation((0, 30))(u8(REF['img']))


def test_transforms_beyond_opencvs_two_interpolations():
    img = u8(REF['img'])
    for interp in (2, 3, 4):
        got = run(T.Resize((4, 3), interpolation=interp), img, True)
        np.testing.assert_array_equal(got, mx.image.imresize(img, 4, 3, interp=interp).asnumpy())


# -- Compose ----------------------------------------------------------------------------------

def test_compose_groups_hybrid_blocks():
    steps = [T.Resize(6), T.CenterCrop(4), T.ToTensor(), T.Normalize(0.5, 0.2)]
    compose = T.Compose(steps)
    assert len(steps) == 4                      # MXNet appends None to the caller's list
    # MXNet 1.9.1's repr
    assert repr(compose) == ('Compose(\n  (0): Resize(\n  \n  )\n  (1): CenterCrop(\n  \n  )\n'
                             '  (2): HybridSequential(\n    (0): ToTensor(\n    \n    )\n'
                             '    (1): Normalize(\n    \n    )\n  )\n)')
    assert isinstance(compose[2], gluon.nn.HybridSequential) and compose[2]._active
    img = u8(REF['img'])
    out = compose(img)
    ref = (T.CenterCrop(4)(T.Resize(6)(img)).asnumpy().transpose(2, 0, 1) / np.float32(255)
           - 0.5) / 0.2
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    assert compose[2].cached_op is not None


def test_transforms_in_a_dataloader():
    images = np.random.default_rng(0).integers(0, 256, (6, 8, 8, 3), dtype=np.uint8)
    ds = gluon.data.ArrayDataset(nd.array(images, dtype='uint8'), np.arange(6))
    aug = T.Compose([T.Resize(4), T.ToTensor()])
    loader = gluon.data.DataLoader(ds.transform_first(aug), batch_size=3, num_workers=2)
    ref = [b[0].asnumpy() for b in gluon.data.DataLoader(ds.transform_first(aug), batch_size=3)]
    got = [b[0].asnumpy() for b in loader]
    assert got[0].shape == (3, 3, 4, 4)
    assert all(np.array_equal(a, b) for a, b in zip(got, ref))


# -- datasets ---------------------------------------------------------------------------------

def write_files(root):
    """Small MNIST, CIFAR-10 and CIFAR-100 files in the real formats."""
    rng = np.random.RandomState(3)
    imgs = rng.randint(0, 256, (3, 28, 28)).astype(np.uint8)
    labels = np.array([7, 0, 9], np.uint8)
    for prefix in ('train', 't10k'):
        with gzip.open(os.path.join(root, f'{prefix}-images-idx3-ubyte.gz'), 'wb') as f:
            f.write(struct.pack('>IIII', 2051, 3, 28, 28) + imgs.tobytes())
        with gzip.open(os.path.join(root, f'{prefix}-labels-idx1-ubyte.gz'), 'wb') as f:
            f.write(struct.pack('>II', 2049, 3) + labels.tobytes())
    cifar = rng.randint(0, 256, (2, 3073)).astype(np.uint8)
    cifar[:, 0] = [3, 8]
    for i in range(1, 6):
        with open(os.path.join(root, f'data_batch_{i}.bin'), 'wb') as f:
            f.write(cifar.tobytes())
    with open(os.path.join(root, 'test_batch.bin'), 'wb') as f:
        f.write(cifar[:1].tobytes())
    c100 = rng.randint(0, 256, (2, 3074)).astype(np.uint8)
    c100[:, :2] = [[4, 44], [5, 55]]
    for name in ('train.bin', 'test.bin'):
        with open(os.path.join(root, name), 'wb') as f:
            f.write(c100.tobytes())
    return imgs, cifar


def test_mnist(tmp_path):
    imgs, _ = write_files(str(tmp_path))
    for cls in (vision.MNIST, vision.FashionMNIST):
        ds = cls(str(tmp_path))
        x, y = ds[1]
        # MXNet 1.9.1 on these files: 3 samples, (28, 28, 1) uint8, numpy int32 label 0
        assert len(ds) == 3 and x.shape == (28, 28, 1) and x.dtype == np.uint8
        assert type(y) is np.int32 and y == 0 and int(x.asnumpy().sum()) == 98467
        np.testing.assert_array_equal(x.asnumpy()[:, :, 0], imgs[1])
    test = vision.MNIST(str(tmp_path), train=False,
                        transform=lambda d, label: (d.astype('float32') / 255, label + 1))
    x, y = test[0]
    assert y == 8 and x.dtype == np.float32


def test_cifar(tmp_path):
    _, cifar = write_files(str(tmp_path))
    ds = vision.CIFAR10(str(tmp_path))
    x, y = ds[1]
    # MXNet 1.9.1: 10 samples, label 8, pixel sum 394057, x[0, 1] == [25, 124, 95]
    assert len(ds) == 10 and x.shape == (32, 32, 3) and x.dtype == np.uint8
    assert type(y) is np.int32 and y == 8 and int(x.asnumpy().sum()) == 394057
    assert x[0, 1].asnumpy().tolist() == [25, 124, 95]
    np.testing.assert_array_equal(x.asnumpy(), cifar[1, 1:].reshape(3, 32, 32).transpose(1, 2, 0))
    assert len(vision.CIFAR10(str(tmp_path), train=False)) == 1
    coarse = vision.CIFAR100(str(tmp_path))
    fine = vision.CIFAR100(str(tmp_path), fine_label=True)
    assert (len(coarse), coarse[1][1], fine[1][1]) == (2, 5, 55)
    assert int(fine[1][0].asnumpy().sum()) == 395443


def _rewrite_gz(path, change):
    with gzip.open(path, 'rb') as f:
        raw = f.read()
    with gzip.open(path, 'wb') as f:
        f.write(change(raw))


@pytest.mark.parametrize('name, change, message', [
    ('train-images-idx3-ubyte.gz', lambda raw: raw[:-5], r'shape \(3, 28, 28\) \(2352 bytes\), the '
     'file holds 2347'),
    ('train-images-idx3-ubyte.gz', lambda raw: b'\x00\x00\x08\x01' + raw[4:],
     'not an IDX file of 3-dimensional unsigned bytes .its header begins 00000801'),
    ('train-labels-idx1-ubyte.gz', lambda raw: raw[:4] + struct.pack('>I', 2) + raw[8:10],
     r'holds 3 images, .*train-labels-idx1-ubyte.gz 2 labels'),
    ('train-labels-idx1-ubyte.gz', lambda raw: b'', 'its header begins nothing'),
])
def test_corrupt_mnist_files_are_named(tmp_path, name, change, message):
    write_files(str(tmp_path))
    _rewrite_gz(tmp_path / name, change)
    with pytest.raises(mx.base.MXNetError, match=message):
        vision.MNIST(str(tmp_path))


def test_corrupt_dataset_files_are_named(tmp_path):
    write_files(str(tmp_path))
    path = tmp_path / 'train-images-idx3-ubyte.gz'
    path.write_bytes(path.read_bytes()[:30])            # a truncated gzip stream
    with pytest.raises(mx.base.MXNetError, match='cannot read .*train-images-idx3-ubyte.gz'):
        vision.MNIST(str(tmp_path))
    with open(tmp_path / 'data_batch_3.bin', 'ab') as f:
        f.write(b'x')
    with pytest.raises(mx.base.MXNetError, match=r'data_batch_3.bin holds 6147 bytes, not a whole '
                                                 r'number of 3073-byte CIFAR10 records'):
        vision.CIFAR10(str(tmp_path))
    (tmp_path / 'test.bin').write_bytes(b'\0' * 3073)
    with pytest.raises(mx.base.MXNetError, match='3074-byte CIFAR100 records'):
        vision.CIFAR100(str(tmp_path), train=False)
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / 'i.idx'), str(tmp_path / 'i.rec'), 'w')
    rec.write_idx(0, b'short')
    rec.write_idx(1, struct.pack('IfQQ', 5, 0.0, 0, 0) + b'ab')     # flag: 5 labels follow
    rec.close()
    ds = vision.ImageRecordDataset(str(tmp_path / 'i.rec'))
    with pytest.raises(mx.base.MXNetError, match=r'record 0 of .*i.rec: a record of 5 bytes is '
                                                 r'shorter than its header \(24 bytes\)'):
        ds[0]
    with pytest.raises(mx.base.MXNetError, match='record 1 .*gives 5 labels, but only 2 bytes'):
        ds[1]


def test_cifar_archive_layout(tmp_path):
    import tarfile
    src = tmp_path / 'src' / 'cifar-10-batches-bin'
    src.mkdir(parents=True)
    write_files(str(src))
    root = tmp_path / 'root'
    root.mkdir()
    with tarfile.open(root / 'cifar-10-binary.tar.gz', 'w:gz') as tar:
        tar.add(src, arcname='cifar-10-batches-bin')
    assert len(vision.CIFAR10(str(root))) == 10
    assert (root / 'cifar-10-batches-bin' / 'test_batch.bin').exists()


class _Fetched(Exception):
    pass


# the files MXNet 1.9.1 downloads (under MXNET_GLUON_REPO/gluon/dataset/) and their sha1s
MISSING = [
    (vision.MNIST, True, [('mnist/train-images-idx3-ubyte.gz',
                           '6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d'),
                          ('mnist/train-labels-idx1-ubyte.gz',
                           '2a80914081dc54586dbdf242f9805a6b8d2a15fc')]),
    (vision.MNIST, False, [('mnist/t10k-images-idx3-ubyte.gz',
                            'c3a25af1f52dad7f726cce8cacb138654b760d48'),
                           ('mnist/t10k-labels-idx1-ubyte.gz',
                            '763e7fa3757d93b0cdec073cef058b2004252c17')]),
    (vision.FashionMNIST, True, [('fashion-mnist/train-images-idx3-ubyte.gz',
                                  '0cf37b0d40ed5169c6b3aba31069a9770ac9043d'),
                                 ('fashion-mnist/train-labels-idx1-ubyte.gz',
                                  '236021d52f1e40852b06a4c3008d8de8aef1e40b')]),
    (vision.FashionMNIST, False, [('fashion-mnist/t10k-images-idx3-ubyte.gz',
                                   '626ed6a7c06dd17c0eec72fa3be1740f146a2863'),
                                  ('fashion-mnist/t10k-labels-idx1-ubyte.gz',
                                   '17f9ab60e7257a1620f4ad76bbbaf857c3920701')]),
    (vision.CIFAR10, True, [('cifar10/cifar-10-binary.tar.gz',
                             'fab780a1e191a7eda0f345501ccd62d20f7ed891')]),
    (vision.CIFAR10, False, [('cifar10/cifar-10-binary.tar.gz',
                              'fab780a1e191a7eda0f345501ccd62d20f7ed891')]),
    (vision.CIFAR100, True, [('cifar100/cifar-100-binary.tar.gz',
                              'a0bb982c76b83111308126cc779a992fa506b90b')]),
]


@pytest.mark.parametrize('cls, train, expected', MISSING)
def test_missing_files_are_downloaded(cls, train, expected, tmp_path, monkeypatch):
    """From MXNet's URLs, with MXNet's sha1s, into root (the downloads themselves:
    tests/test_download.py)."""
    fetched = []

    def download(url, path=None, sha1_hash=None, **kwargs):
        fetched.append((url, path, sha1_hash))
        if len(fetched) == len(expected):
            raise _Fetched
        return path
    monkeypatch.setattr(vision.datasets, 'download', download)
    monkeypatch.setenv('MXNET_GLUON_REPO', 'http://127.0.0.1:9/repo')
    root = tmp_path / 'root'
    with pytest.raises(_Fetched):
        cls(str(root), train=train)
    assert fetched == [('http://127.0.0.1:9/repo/gluon/dataset/' + name,
                        str(root / os.path.basename(name)), sha1) for name, sha1 in expected]


def test_image_folder_listing(tmp_path):
    for folder, names in (('cat', ['b.png', 'a.jpg', 'x.txt']), ('ant', ['1.JPEG'])):
        (tmp_path / folder).mkdir()
        for n in names:
            (tmp_path / folder / n).write_bytes(b'')
    (tmp_path / 'notes.txt').write_bytes(b'')
    with pytest.warns(UserWarning, match='Ignoring'):
        ds = vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ['ant', 'cat'] and len(ds) == 3
    assert [(os.path.basename(f), label) for f, label in ds.items] == \
        [('1.JPEG', 0), ('a.jpg', 1), ('b.png', 1)]


def encoded_png():
    pil = pytest.importorskip('PIL.Image')
    import io
    pixels = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3) * 10
    buf = io.BytesIO()
    pil.fromarray(pixels).save(buf, format='PNG')
    return pixels, buf.getvalue()


def test_image_decoding_without_pillow(tmp_path, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_pil(name, *args, **kwargs):
        if name.startswith('PIL'):
            raise ImportError('no PIL')
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, '__import__', no_pil)
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / 'i.idx'), str(tmp_path / 'i.rec'), 'w')
    rec.write_idx(0, mx.recordio.pack(mx.recordio.IRHeader(0, 2.0, 0, 0), b'\x89PNG'))
    rec.close()
    ds = vision.ImageRecordDataset(str(tmp_path / 'i.rec'))
    assert len(ds) == 1
    with pytest.raises(NotSupportedError, match=r'Pillow.*hybridlib\[image\]'):
        ds[0]


def test_image_record_dataset_with_pillow(tmp_path):
    pixels, png = encoded_png()
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / 'i.idx'), str(tmp_path / 'i.rec'), 'w')
    rec.write_idx(0, mx.recordio.pack(mx.recordio.IRHeader(0, 2.0, 0, 0), png))
    rec.close()
    img, label = vision.ImageRecordDataset(str(tmp_path / 'i.rec'))[0]
    assert label == 2.0 and img.dtype == np.uint8
    np.testing.assert_array_equal(img.asnumpy(), pixels)
    grey, _ = vision.ImageRecordDataset(str(tmp_path / 'i.rec'), flag=0)[0]
    assert grey.shape == (2, 3, 1)
    (tmp_path / 'folder' / 'cls').mkdir(parents=True)
    (tmp_path / 'folder' / 'cls' / 'a.png').write_bytes(png)
    img, label = vision.ImageFolderDataset(str(tmp_path / 'folder'))[0]
    assert label == 0
    np.testing.assert_array_equal(img.asnumpy(), pixels)
