"""Vision datasets (``gluon.data.vision.datasets``): MNIST, FashionMNIST, CIFAR10, CIFAR100 read
from their standard files, and images in RecordIO files or in class folders.

The files are looked for in ``root`` (default ``$MXNET_HOME/datasets/<name>``) and downloaded
there when missing, from the Gluon repository (``$MXNET_GLUON_REPO``) with MXNet's SHA-1 checks,
as MXNet does; files already in ``root`` are used as they are. Images are NDArrays
``(H, W, C)`` of uint8, as MXNet returns them; labels are numpy int32 values. Decoding
JPEG/PNG images (ImageRecordDataset, ImageFolderDataset) needs Pillow, as MXNet needs OpenCV.
"""
import gzip
import math
import os
import struct
import warnings
import zlib

import numpy as np

from ... import ndarray as nd
from ... import codec, recordio
from ...base import MXNetError, data_dir
from ...utils import _extract_tar, _get_repo_file_url, download
from .. import dataset

__all__ = ['MNIST', 'FashionMNIST', 'CIFAR10', 'CIFAR100', 'ImageRecordDataset',
           'ImageFolderDataset']


def _fetch(root, namespace, name, sha1_hash):
    """``root/name``, downloaded from the Gluon repository's ``gluon/dataset/<namespace>`` (and
    checked against ``sha1_hash``) when it is not there."""
    path = os.path.join(root, name)
    if not os.path.exists(path):
        download(_get_repo_file_url('gluon/dataset/' + namespace, name), path=path,
                 sha1_hash=sha1_hash)
    return path


def _read(path, opener=open):
    """The bytes of ``path`` (``opener`` may be ``gzip.open``); a file that cannot be read or
    decompressed is an MXNetError naming it (a missing one stays FileNotFoundError)."""
    try:
        with opener(path, 'rb') as fin:
            return fin.read()
    except FileNotFoundError:
        raise
    except (OSError, EOFError, zlib.error) as err:
        raise MXNetError(f'cannot read {path}: {err}') from None


def _read_idx(path, ndim):
    """The uint8 array of a gzipped IDX file (MNIST's format: a magic number giving the element
    type and the number of dimensions, the sizes as big-endian uint32, then the data), checked
    against its header."""
    raw = _read(path, gzip.open)
    start = 4 + 4 * ndim
    if len(raw) < start or raw[:4] != bytes((0, 0, 8, ndim)):
        raise MXNetError(f'{path} is not an IDX file of {ndim}-dimensional unsigned bytes '
                         f'(its header begins {raw[:4].hex() or "nothing"})')
    dims = struct.unpack(f'>{ndim}I', raw[4:start])
    if len(raw) - start != math.prod(dims):
        raise MXNetError(f'{path}: the header gives shape {dims} ({math.prod(dims)} bytes), the '
                         f'file holds {len(raw) - start}')
    return np.frombuffer(raw, np.uint8, offset=start).reshape(dims)


def _idx_files(*sha1s):
    """(file name, MXNet's sha1 of the real file) of the four gzipped IDX files of MNIST (and
    Fashion-MNIST): train images, train labels, test images, test labels."""
    names = ('train-images-idx3-ubyte.gz', 'train-labels-idx1-ubyte.gz',
             't10k-images-idx3-ubyte.gz', 't10k-labels-idx1-ubyte.gz')
    return tuple(zip(names, sha1s))


class MNIST(dataset._DownloadedDataset):
    """The MNIST handwritten digits, from the gzipped IDX files of
    http://yann.lecun.com/exdb/mnist in ``root``.

    Each sample is ``(image, label)``: an NDArray (28, 28, 1) of uint8 and a numpy int32.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/mnist
        The folder with train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
        t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (those that are missing are
        downloaded).
    train : bool, default True
        The training set (else the test set).
    transform : callable, default None
        Called as ``transform(data, label)`` on each sample, e.g.
        ``lambda data, label: (data.astype(np.float32) / 255, label)``.
    """
    _namespace = 'mnist'
    _train_data, _train_label, _test_data, _test_label = _idx_files(
        '6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d', '2a80914081dc54586dbdf242f9805a6b8d2a15fc',
        'c3a25af1f52dad7f726cce8cacb138654b760d48', '763e7fa3757d93b0cdec073cef058b2004252c17')

    def __init__(self, root=os.path.join(data_dir(), 'datasets', 'mnist'),
                 train=True, transform=None):
        self._train = train
        super().__init__(root, transform)

    def _get_data(self):
        if self._train:
            data, label = self._train_data, self._train_label
        else:
            data, label = self._test_data, self._test_label
        data_file, label_file = (_fetch(self._root, self._namespace, name, sha1_hash)
                                 for name, sha1_hash in (data, label))
        label = _read_idx(label_file, 1).astype(np.int32)
        data = _read_idx(data_file, 3)      # MXNet assumes 28 x 28; the IDX header says it
        if len(data) != len(label):
            raise MXNetError(f'{data_file} holds {len(data)} images, {label_file} '
                             f'{len(label)} labels')
        data = data[..., None]
        self._data = nd.array(data, dtype=data.dtype)
        self._label = label


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST (https://github.com/zalandoresearch/fashion-mnist), a drop-in
    replacement of MNIST with the same files and samples.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/fashion-mnist
        The folder with the four gzipped IDX files (named as MNIST's).
    train : bool, default True
        The training set (else the test set).
    transform : callable, default None
        Called as ``transform(data, label)`` on each sample.
    """
    _namespace = 'fashion-mnist'
    _train_data, _train_label, _test_data, _test_label = _idx_files(
        '0cf37b0d40ed5169c6b3aba31069a9770ac9043d', '236021d52f1e40852b06a4c3008d8de8aef1e40b',
        '626ed6a7c06dd17c0eec72fa3be1740f146a2863', '17f9ab60e7257a1620f4ad76bbbaf857c3920701')

    def __init__(self, root=os.path.join(data_dir(), 'datasets', 'fashion-mnist'),
                 train=True, transform=None):
        super().__init__(root, train, transform)


class CIFAR10(dataset._DownloadedDataset):
    """CIFAR-10 (https://www.cs.toronto.edu/~kriz/cifar.html), from the binary version's
    ``data_batch_1.bin`` .. ``data_batch_5.bin`` and ``test_batch.bin`` (each record: a label
    byte, then 3072 bytes of the image as 3 x 32 x 32).

    The files are looked for in ``root``, then in ``root/cifar-10-batches-bin`` (the layout of
    the original archive); if they are in neither, ``cifar-10-binary.tar.gz`` is extracted into
    ``root``, downloaded first when it is not there. Each sample is an NDArray (32, 32, 3) of
    uint8 and a numpy int32 label.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/cifar10
        The folder with the files.
    train : bool, default True
        The training set (else the test set).
    transform : callable, default None
        Called as ``transform(data, label)`` on each sample.
    """
    _archive_folder = 'cifar-10-batches-bin'
    _namespace = 'cifar10'
    _archive_file = ('cifar-10-binary.tar.gz', 'fab780a1e191a7eda0f345501ccd62d20f7ed891')
    _train_data = [('data_batch_1.bin', 'aadd24acce27caa71bf4b10992e9e7b2d74c2540'),
                   ('data_batch_2.bin', 'c0ba65cce70568cd57b4e03e9ac8d2a5367c1795'),
                   ('data_batch_3.bin', '1dd00a74ab1d17a6e7d73e185b69dbf31242f295'),
                   ('data_batch_4.bin', 'aab85764eb3584312d3c7f65fd2fd016e36a258e'),
                   ('data_batch_5.bin', '26e2849e66a845b7f1e4614ae70f4889ae604628')]
    _test_data = [('test_batch.bin', '67eb016db431130d61cd03c7ad570b013799c88c')]

    def __init__(self, root=os.path.join(data_dir(), 'datasets', 'cifar10'),
                 train=True, transform=None):
        self._train = train
        super().__init__(root, transform)

    _label_bytes = 1

    def _read_batch(self, filename):
        """(images (N, 32, 32, 3), labels) of one binary file: records of label bytes, then the
        image as 3 x 32 x 32."""
        raw = _read(filename)
        size = self._label_bytes + 3072
        if len(raw) % size:
            raise MXNetError(f'{filename} holds {len(raw)} bytes, not a whole number of '
                             f'{size}-byte {type(self).__name__} records')
        data = np.frombuffer(raw, dtype=np.uint8).reshape(-1, size)
        images = data[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, data[:, self._label_column()].astype(np.int32)

    def _label_column(self):
        return 0

    def _find_folder(self, names):
        """The folder that holds all ``names``, or None."""
        for folder in (self._root, os.path.join(self._root, self._archive_folder)):
            if all(os.path.exists(os.path.join(folder, n)) for n in names):
                return folder
        return None

    def _get_data(self):
        names = [name for name, _ in (self._train_data if self._train else self._test_data)]
        folder = self._find_folder(names)
        if folder is None:
            archive = _fetch(self._root, self._namespace, *self._archive_file)
            _extract_tar(archive, self._root)
            folder = self._find_folder(names)
        if folder is None:
            raise FileNotFoundError(
                f'{type(self).__name__}: {", ".join(names)} found neither in {self._root} nor in '
                f'{self._archive_folder} after extracting {archive}')
        data, label = zip(*(self._read_batch(os.path.join(folder, name)) for name in names))
        data = np.concatenate(data)
        label = np.concatenate(label)
        self._data = nd.array(data, dtype=data.dtype)
        self._label = label


class CIFAR100(CIFAR10):
    """CIFAR-100, from the binary version's ``train.bin`` and ``test.bin`` (each record: the
    coarse label byte, the fine label byte, then the 3 x 32 x 32 image), in ``root`` or
    ``root/cifar-100-binary``, or extracted from ``cifar-100-binary.tar.gz`` (downloaded when
    it is not there).

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/cifar100
        The folder with the files.
    fine_label : bool, default False
        The 100 fine classes (else the 20 coarse super-classes).
    train : bool, default True
        The training set (else the test set).
    transform : callable, default None
        Called as ``transform(data, label)`` on each sample.
    """
    _archive_folder = 'cifar-100-binary'
    _namespace = 'cifar100'
    _archive_file = ('cifar-100-binary.tar.gz', 'a0bb982c76b83111308126cc779a992fa506b90b')
    _train_data = [('train.bin', 'e207cd2e05b73b1393c74c7f5e7bea451d63e08e')]
    _test_data = [('test.bin', '8fb6623e830365ff53cf14adec797474f5478006')]

    def __init__(self, root=os.path.join(data_dir(), 'datasets', 'cifar100'),
                 fine_label=False, train=True, transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    _label_bytes = 2        # the coarse label, then the fine one

    def _label_column(self):
        return 1 if self._fine_label else 0


def _decode(data, flag, what):
    """An encoded image (JPEG, PNG, ...) as an NDArray (H, W, 3) RGB, or (H, W, 1) grey for
    ``flag=0``, decoded as MXNet's ``image.imdecode`` does (``codec.py``; needs Pillow)."""
    if not isinstance(data, bytes):
        with open(data, 'rb') as f:
            data = f.read()
    return nd.array(codec.decode(data, flag, what=what), dtype=np.uint8)


class ImageRecordDataset(dataset.RecordFileDataset):
    """Images and labels from a RecordIO file (as written by MXNet's im2rec: each record is
    ``recordio.pack(header, encoded image)``).

    Each sample is ``(image, label)``: the decoded image, an NDArray (H, W, 3) (or (H, W, 1)
    with ``flag=0``) of uint8, and ``header.label``. Decoding needs Pillow.

    Parameters
    ----------
    filename : str
        Path to the ``.rec`` file (the ``.idx`` file is beside it).
    flag : {0, 1}, default 1
        0: convert images to greyscale; 1: to colour (RGB).
    transform : callable, default None
        Called as ``transform(data, label)`` on each sample.
    """

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        record = super().__getitem__(idx)
        what = f'ImageRecordDataset.__getitem__: record {idx} of {self.filename}'
        try:
            header, img = recordio.unpack(record)
        except MXNetError as err:
            raise MXNetError(f'{what}: {err}') from None
        img = _decode(img, self._flag, what)
        if self._transform is not None:
            return self._transform(img, header.label)
        return img, header.label


class ImageFolderDataset(dataset.Dataset):
    """Images stored in one folder per class::

        root/car/0001.jpg
        root/car/xxxa.jpg
        root/bus/123.png

    Classes are the sorted folder names; their labels are their positions. Files other than
    .jpg, .jpeg and .png are skipped with a warning. Each sample is ``(image, label)``, the
    image an NDArray (H, W, 3) (or (H, W, 1) with ``flag=0``) of uint8. Decoding needs Pillow.

    Parameters
    ----------
    root : str
        Path to the root folder.
    flag : {0, 1}, default 1
        0: convert images to greyscale; 1: to colour (RGB).
    transform : callable, default None
        Called as ``transform(data, label)`` on each sample.

    Attributes
    ----------
    synsets : list
        The class names: ``synsets[i]`` is the name of label ``i``.
    items : list of tuples
        Every image as ``(filename, label)``.
    """

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = ['.jpg', '.jpeg', '.png']
        self._list_images(self._root)

    def _list_images(self, root):
        self.synsets = []
        self.items = []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn('Ignoring %s, which is not a directory.' % path, stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn('Ignoring %s of type %s. Only support %s' % (
                        filename, ext, ', '.join(self._exts)))
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        filename, label = self.items[idx]
        img = _decode(filename, self._flag, f'ImageFolderDataset.__getitem__: {filename}')
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)
