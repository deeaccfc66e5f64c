"""gluon.data.vision: transforms against MXNet 1.9.1's outputs (tests/data/data-transforms.npz,
written by tests/data/make_data_files.py) and numpy references, hybridized and not; the
datasets read from small files written here in the real formats (sums and labels are what
MXNet 1.9.1 reads from the same files)."""
import gzip
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
    with pytest.raises(NotSupportedError, match='interpolation 2'):
        T.Resize(3, interpolation=2)(nd.zeros((4, 4, 3)))
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
    with pytest.raises(ValueError, match='RandomFlip'):
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


def test_missing_files_name_them(tmp_path):
    with pytest.raises(FileNotFoundError, match=r'train-images-idx3-ubyte.gz, '
                                                r'train-labels-idx1-ubyte.gz not found in'):
        vision.MNIST(str(tmp_path / 'mnist'))
    with pytest.raises(FileNotFoundError, match=r'test_batch.bin, \(or cifar-10-binary'):
        vision.CIFAR10(str(tmp_path), train=False)


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
    with pytest.raises(NotSupportedError, match='install Pillow'):
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
