"""The downloads of MXNet's examples and tests: files (``download``), models
(``download_model``), MNIST, CIFAR-10 and archives, and ``DummyIter`` for speed tests.
"""
import bz2
import gzip
import logging
import os
import struct
import zipfile

import numpy as np

from .. import io as _io
from .. import utils as _utils
from ..io import DataIter

__all__ = ['download', 'download_model', 'get_mnist', 'get_mnist_pkl', 'get_mnist_ubyte',
           'get_cifar10', 'get_mnist_iterator', 'get_zip_data', 'get_bz2_data', 'get_im2rec_path',
           'DummyIter']


def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Download ``url`` to a file and return its name.

    Parameters
    ----------
    url : str
    fname : str, optional
        The file name (default: the URL's last part); inside ``dirname`` when given.
    dirname : str, optional
        The directory, created when missing (default: the directory of ``fname``).
    overwrite : bool
        Whether to download again when the file exists.
    retries : int
        How many times to retry a failed download.
    """
    assert retries >= 0, 'Number of retries should be at least 0'
    if fname is None:
        fname = url.split('/')[-1]
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    if dirname != '' and not os.path.exists(dirname):
        logging.info('create directory %s', dirname)
        os.makedirs(dirname, exist_ok=True)
    if not overwrite and os.path.exists(fname):
        logging.info('%s exists, skipping download', fname)
        return fname
    _utils.download(url, path=fname, overwrite=True, retries=retries)
    logging.info('downloaded %s into %s successfully', url, fname)
    return fname


_BASE_MODEL_URL = 'http://data.mxnet.io/models/'
_DEFAULT_MODEL_INFO = {
    name: {'symbol': _BASE_MODEL_URL + path + '-symbol.json',
           'params': _BASE_MODEL_URL + path + '-%s.params' % epoch}
    for name, path, epoch in [
        ('imagenet1k-inception-bn', 'imagenet/inception-bn/Inception-BN', '0126'),
        ('imagenet1k-resnet-18', 'imagenet/resnet/18-layers/resnet-18', '0000'),
        ('imagenet1k-resnet-34', 'imagenet/resnet/34-layers/resnet-34', '0000'),
        ('imagenet1k-resnet-50', 'imagenet/resnet/50-layers/resnet-50', '0000'),
        ('imagenet1k-resnet-101', 'imagenet/resnet/101-layers/resnet-101', '0000'),
        ('imagenet1k-resnet-152', 'imagenet/resnet/152-layers/resnet-152', '0000'),
        ('imagenet1k-resnext-50', 'imagenet/resnext/50-layers/resnext-50', '0000'),
        ('imagenet1k-resnext-101', 'imagenet/resnext/101-layers/resnext-101', '0000'),
        ('imagenet1k-resnext-101-64x4d', 'imagenet/resnext/101-layers/resnext-101-64x4d',
         '0000'),
        ('imagenet11k-resnet-152', 'imagenet-11k/resnet-152/resnet-152', '0000'),
        ('imagenet11k-place365ch-resnet-152', 'imagenet-11k-place365-ch/resnet-152', '0000'),
        ('imagenet11k-place365ch-resnet-50', 'imagenet-11k-place365-ch/resnet-50', '0000')]}


def download_model(model_name, dst_dir='./', meta_info=None):
    """Download a model's ``-symbol.json`` and ``-0000.params`` into ``dst_dir``.

    Parameters
    ----------
    model_name : str
        A key of ``meta_info`` (by default, MXNet's ImageNet models on data.mxnet.io).
    dst_dir : str
    meta_info : dict of str -> {'symbol': url, 'params': url}, optional

    Returns
    -------
    (str, int)
        The path prefix of the files and the epoch 0 (``(None, 0)`` for an unknown model).
    """
    meta_info = dict(_DEFAULT_MODEL_INFO if meta_info is None else meta_info)
    if model_name not in meta_info:
        return (None, 0)
    if not os.path.isdir(dst_dir):
        os.mkdir(dst_dir)
    meta = dict(meta_info[model_name])
    assert 'symbol' in meta, 'missing symbol url'
    model_name = os.path.join(dst_dir, model_name)
    download(meta['symbol'], model_name + '-symbol.json')
    assert 'params' in meta, 'mssing parameter file url'
    download(meta['params'], model_name + '-0000.params')
    return (model_name, 0)


def _read_mnist(label_url, image_url):
    with gzip.open(download(label_url)) as flbl:
        struct.unpack('>II', flbl.read(8))
        label = np.frombuffer(flbl.read(), dtype=np.int8)
    with gzip.open(download(image_url), 'rb') as fimg:
        _, _, rows, cols = struct.unpack('>IIII', fimg.read(16))
        image = np.frombuffer(fimg.read(), dtype=np.uint8).reshape(len(label), rows, cols)
        image = image.reshape(image.shape[0], 1, rows, cols).astype(np.float32) / 255
    return label, image


def get_mnist():
    """Download MNIST into the current directory and load it.

    Returns
    -------
    dict
        'train_data' (60000, 1, 28, 28) and 'test_data' float32 in [0, 1], 'train_label' and
        'test_label' int8.
    """
    path = 'http://data.mxnet.io/data/mnist/'
    train_lbl, train_img = _read_mnist(path + 'train-labels-idx1-ubyte.gz',
                                       path + 'train-images-idx3-ubyte.gz')
    test_lbl, test_img = _read_mnist(path + 't10k-labels-idx1-ubyte.gz',
                                     path + 't10k-images-idx3-ubyte.gz')
    return {'train_data': train_img, 'train_label': train_lbl,
            'test_data': test_img, 'test_label': test_lbl}


def get_mnist_pkl():
    """Download ``data/mnist.pkl.gz`` (in the current directory) when missing."""
    if not os.path.isdir('data'):
        os.makedirs('data')
    if not os.path.exists('data/mnist.pkl.gz'):
        download('http://deeplearning.net/data/mnist/mnist.pkl.gz', dirname='data')


def get_mnist_ubyte():
    """Download MNIST's ubyte files into ``data/`` (in the current directory) when missing."""
    _extract_into_data('http://data.mxnet.io/mxnet/data/mnist.zip',
                       ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte',
                        't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte'))


def get_cifar10():
    """Download CIFAR-10's RecordIO files into ``data/cifar`` (in the current directory) when
    missing."""
    _extract_into_data('http://data.mxnet.io/mxnet/data/cifar10.zip',
                       [os.path.join('cifar', n)
                        for n in ('train.rec', 'test.rec', 'train.lst', 'test.lst')])


def _extract_into_data(url, paths):
    """Download the zip file ``url`` into ``data/`` and extract it there, unless every one of
    ``paths`` (relative to ``data/``) exists."""
    if not os.path.isdir('data'):
        os.makedirs('data')
    if not all(os.path.exists(os.path.join('data', p)) for p in paths):
        with zipfile.ZipFile(download(url, dirname='data')) as zf:
            zf.extractall('data')


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """Training and validation ``mx.io.MNISTIter`` over MNIST's ubyte files (downloaded into
    ``data/`` when missing): flat examples unless ``input_shape`` has 3 dimensions."""
    mnist_iter = _io.MNISTIter     # looked up per call: tests replace it
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    train_dataiter = mnist_iter(
        image='data/train-images-idx3-ubyte', label='data/train-labels-idx1-ubyte',
        input_shape=input_shape, batch_size=batch_size, shuffle=True, flat=flat,
        num_parts=num_parts, part_index=part_index)
    val_dataiter = mnist_iter(
        image='data/t10k-images-idx3-ubyte', label='data/t10k-labels-idx1-ubyte',
        input_shape=input_shape, batch_size=batch_size, flat=flat, num_parts=num_parts,
        part_index=part_index)
    return (train_dataiter, val_dataiter)


def get_zip_data(data_dir, url, data_origin_name):
    """Download the zip file ``url`` as ``data_dir/data_origin_name`` and extract it into
    ``data_dir``, unless that file exists."""
    archive = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(archive):
        download(url, fname=data_origin_name, dirname=data_dir, overwrite=False)
        with zipfile.ZipFile(archive) as zip_file:
            zip_file.extractall(path=data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Download the bz2 file ``url`` as ``data_dir/data_origin_name`` and decompress it into
    ``data_dir/data_name`` (removing the archive), unless that file exists."""
    target = os.path.join(data_dir, data_name)
    archive = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(target):
        download(url, fname=data_origin_name, dirname=data_dir, overwrite=False)
        with bz2.BZ2File(archive, 'rb') as bz_file, open(target, 'wb') as fout:
            for line in bz_file:
                fout.write(line)
        os.remove(archive)


def get_im2rec_path(home_env='MXNET_HOME'):
    """The path of MXNet's ``tools/im2rec.py`` in the MXNet source tree that the environment
    variable ``home_env`` names.

    hybridlib ships no im2rec tool (``mx.recordio`` writes RecordIO files from Python); the
    script of an MXNet checkout is found through ``home_env``.
    """
    mxnet_path = os.environ.get(home_env)
    if mxnet_path:
        for candidate in (os.path.join(mxnet_path, 'tools', 'im2rec.py'),
                          os.path.join(mxnet_path, '..', '..', 'tools', 'im2rec.py')):
            if os.path.isfile(candidate):
                return candidate
    where = ('${}={!r} has no tools/im2rec.py'.format(home_env, mxnet_path) if mxnet_path
             else '${} is not set'.format(home_env))
    raise IOError('Could not find path to tools/im2rec.py: hybridlib does not ship MXNet\'s '
                  'im2rec tool, and {}. Point {} at an MXNet source tree, or write RecordIO '
                  'files with mx.recordio.MXIndexedRecordIO.'.format(where, home_env))


class DummyIter(DataIter):
    """A data iterator that returns the first batch of ``real_iter`` forever (for speed
    tests); it never raises StopIteration.

    Parameters
    ----------
    real_iter : mx.io.DataIter
        The iterator whose first batch is repeated (anything with ``provide_data``,
        ``provide_label``, ``batch_size`` and ``next()``).
    """

    def __init__(self, real_iter):
        super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        """The first batch of the real iterator, again."""
        return self.the_batch

    def iter_next(self):
        """Always True: there is always a next batch."""
        return True

    def getdata(self):
        return self.the_batch.data

    def getlabel(self):
        return self.the_batch.label
