"""Gluon's utilities (``gluon.utils``), as MXNet 1.9.1 defines them.

Data parallelism (``split_data``, ``split_and_load``: a batch in slices, one per context),
gradient clipping (``clip_global_norm``) and the file helpers of the model zoo and the datasets:
``download`` fetches a URL into a file (through ``requests``), ``check_sha1`` checks a file's
content, ``replace_file`` moves a finished download into place atomically, and
``_get_repo_file_url`` names a file of the Gluon repository ($MXNET_GLUON_REPO).
"""
import hashlib
import os
import tarfile
import uuid
import warnings

import numpy as np

from . import ndarray
from .base import MXNetAssertionError
from .block import HookHandle            # noqa: F401  (public in MXNet's gluon.utils)
from .parameter import shape_is_known    # noqa: F401  (public in MXNet's gluon.utils)
from .parameter import _brief_print_list, _indent  # noqa: F401  (model zoo, data helpers)

__all__ = ['split_data', 'split_and_load', 'clip_global_norm', 'check_sha1', 'download',
           'replace_file']


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Split ``data`` into ``num_slice`` slices along ``batch_axis``.

    Parameters
    ----------
    data : NDArray
        A batch of data.
    num_slice : int
        The number of slices (at least 1).
    batch_axis : int, default 0
        The axis along which to slice.
    even_split : bool, default True
        Whether the slices must all have the same size: if True, a ValueError is raised when
        ``num_slice`` does not divide ``data.shape[batch_axis]``. If False, the first
        ``size % num_slice`` slices get one more element (some may be empty).

    Returns
    -------
    list of NDArray
        The slices, a list even for ``num_slice=1``.
    """
    if num_slice < 1:
        # MXNet divides by zero here
        raise ValueError('num_slice must be at least 1, got %d' % num_slice)
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            "data with shape %s cannot be evenly split into %d slices along axis %d. "
            "Use a batch size that's multiple of %d or set even_split=False to allow "
            "uneven partitioning of data." % (str(data.shape), num_slice, batch_axis, num_slice))
    n_each_section, extras = divmod(size, num_slice)
    section_sizes = [0] + (extras * [n_each_section + 1]
                           + (num_slice - extras) * [n_each_section])
    div_points = [int(p) for p in np.array(section_sizes).cumsum()]
    if batch_axis == 0:
        return [data[div_points[i]:div_points[i + 1]] for i in range(num_slice)]
    return [ndarray.slice_axis(data, axis=batch_axis, begin=div_points[i], end=div_points[i + 1])
            for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Split ``data`` into ``len(ctx_list)`` slices along ``batch_axis`` and copy slice ``i``
    to ``ctx_list[i]``.

    Parameters
    ----------
    data : NDArray or array-like
        A batch of data; anything else becomes an NDArray on ``ctx_list[0]`` (float32).
    ctx_list : list of Context
        One context per slice.
    batch_axis : int, default 0
        The axis along which to slice.
    even_split : bool, default True
        Whether the slices must all have the same size (see ``split_data``).

    Returns
    -------
    list of NDArray
        Slice ``i`` on ``ctx_list[i]``. With one context, the whole batch on it.
    """
    if len(ctx_list) == 0:
        raise ValueError('split_and_load needs at least one context in ctx_list')
    if not isinstance(data, ndarray.NDArray):
        data = ndarray.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [i.as_in_context(ctx) for i, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale ``arrays`` in place so that their global 2-norm is at most ``max_norm``.

    The global norm is ``sqrt(sum(||a||^2 for a in arrays))``; when it exceeds ``max_norm``
    every array is multiplied by ``max_norm / (norm + 1e-8)``.

    Parameters
    ----------
    arrays : list of NDArray
        Floating-point arrays (typically gradients), on any contexts.
    max_norm : float
        The largest global norm allowed.
    check_isfinite : bool, default True
        Whether to check that the norm is finite (warning otherwise: the scaled arrays are then
        nan), which copies it to the host.

    Returns
    -------
    float or NDArray
        The global norm before scaling: a numpy float when ``check_isfinite``, else an NDArray
        of shape (1,) on the context of ``arrays[0]`` (no host synchronisation).
    """
    if len(arrays) == 0:
        raise MXNetAssertionError('clip_global_norm needs at least one array')
    for i, arr in enumerate(arrays):
        if not np.issubdtype(arr.dtype, np.floating):
            raise TypeError('clip_global_norm needs floating-point arrays; array %d has dtype '
                            '%s' % (i, np.dtype(arr.dtype).name))
    # MXNet needs one dtype for all arrays and fails on float16 (its CPU dot); here squares are
    # summed in float32, or in float64 when every array is float64
    sum_dtype = np.float64 if all(a.dtype == np.float64 for a in arrays) else np.float32
    ctx = arrays[0].context

    def squared_norm(array):
        x = array.reshape((-1,)).astype(sum_dtype, copy=False)
        return ndarray.dot(x, x).as_in_context(ctx)

    total_norm = ndarray.sqrt(ndarray.add_n(*[squared_norm(arr) for arr in arrays]))
    if check_isfinite and not np.isfinite(total_norm.asscalar()):
        warnings.warn(UserWarning('nan or inf is detected. Clipping results will be undefined.'),
                      stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = ndarray.min(ndarray.concat(scale, ndarray.ones(1, ctx=ctx, dtype=sum_dtype), dim=0))
    with np.errstate(invalid='ignore'):   # inf * 0 with a non-finite norm: warned above
        for arr in arrays:
            arr *= scale.as_in_context(arr.context).astype(arr.dtype, copy=False)
    if check_isfinite:
        return total_norm.asscalar()
    return total_norm


def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 of the file's content is ``sha1_hash`` (hexadecimal digits)."""
    return _file_sha1(filename) == sha1_hash


def _file_sha1(filename):
    """The SHA-1 of the file's content, in hexadecimal digits."""
    sha1 = hashlib.sha1()
    with open(filename, 'rb') as f:
        while True:
            data = f.read(1048576)
            if not data:
                break
            sha1.update(data)
    return sha1.hexdigest()


def replace_file(src, dst):
    """Move ``src`` to ``dst`` atomically, replacing ``dst``; on failure remove ``src`` and
    raise OSError."""
    try:
        os.replace(src, dst)
    except OSError:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError('Moving downloaded temp file - {}, to {} failed. Please retry the '
                      'download.'.format(src, dst)) from None


def _extract_tar(archive, root):
    """Extract the regular files of a tar archive (any compression) into root (no links,
    nothing outside)."""
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile() or m.isdir()]
        base = os.path.realpath(root)
        for m in members:
            target = os.path.realpath(os.path.join(root, m.name))
            if os.path.commonpath([base, target]) != base:
                raise ValueError(f'{archive}: member {m.name!r} would be written outside {root}')
        tar.extractall(root, members=members)


# Seconds to wait for the server to answer, and then for each next piece of the body: without a
# limit, a stalled connection would hang forever instead of being retried.
_TIMEOUT = 60


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Download ``url`` into a file, unless a good copy is already there.

    The body is streamed into a temporary file beside the target (its own for each process and
    attempt), checked, and renamed into place atomically: the target is either absent, the file
    that was there before, or the complete download, never a partial one. Several processes may
    download the same file at once; each finished copy is whole and checked, and one of them is
    kept. A failed attempt (connection error, HTTP status other than 200, a body shorter than
    announced, a SHA-1 mismatch) is retried; after the last one its error is raised.

    Parameters
    ----------
    url : str
        The URL of the file.
    path : str, optional
        Where to store it: a file name, or an existing directory (for the URL's last part).
        Default: the URL's last part in the current directory.
    overwrite : bool, default False
        Whether to download even if the file exists (and the new copy then replaces it).
    sha1_hash : str, optional
        The expected SHA-1 in hexadecimal digits. An existing file with another one is
        downloaded again; a download with another one is discarded (a UserWarning is raised,
        as in MXNet, naming the file, the URL and both hashes).
    retries : int, default 5
        The number of attempts (at least one is made).
    verify_ssl : bool, default True
        Whether to verify the server's SSL certificate (False warns).

    Returns
    -------
    str
        The file path of the downloaded file.
    """
    if path is None:
        fname = url.split('/')[-1]
        if not fname:
            raise MXNetAssertionError("Can't construct file-name from this URL. Please set the "
                                      "`path` option manually.")
    else:
        path = os.path.expanduser(path)
        if os.path.isdir(path):
            fname = os.path.join(path, url.split('/')[-1])
        else:
            fname = path
    if retries < 0:
        raise MXNetAssertionError(
            "Number of retries should be at least 0, currently it's {}".format(retries))
    if not verify_ssl:
        warnings.warn('Unverified HTTPS request is being made (verify_ssl=False). '
                      'Adding certificate verification is strongly advised.', stacklevel=2)
    if not overwrite and _is_usable(fname, sha1_hash):
        return fname
    os.makedirs(os.path.dirname(os.path.abspath(fname)), exist_ok=True)
    # imported here, not with hybridlib: requests takes a tenth of a second to import and most
    # programs never download
    import requests
    attempts_left = retries
    while True:
        try:
            print('Downloading {} from {}...'.format(fname, url))
            _fetch(requests, url, fname, sha1_hash, overwrite, verify_ssl)
            return fname
        except Exception as err:    # every failure is retried, as in MXNet
            attempts_left -= 1
            if attempts_left <= 0:
                attempts = max(retries, 1)
                if hasattr(err, 'add_note'):     # Python 3.11+: shown under the traceback
                    err.add_note('Failed downloading url {} to {} ({} attempt{}).'.format(
                        url, fname, attempts, 's' if attempts > 1 else ''))
                raise
            print('download failed due to {}, retrying, {} attempt{} left'.format(
                repr(err), attempts_left, 's' if attempts_left > 1 else ''))


def _is_usable(fname, sha1_hash):
    """Whether ``fname`` exists (with the SHA-1 ``sha1_hash`` when one is given)."""
    return os.path.exists(fname) and (not sha1_hash or check_sha1(fname, sha1_hash))


def _fetch(requests, url, fname, sha1_hash, overwrite, verify_ssl):
    """One attempt of ``download``: ``url`` streamed into a temporary file beside ``fname``,
    checked, then moved into place. The temporary file never outlives the attempt."""
    temp_name = '{}.{}'.format(fname, uuid.uuid4())
    try:
        with requests.get(url, stream=True, verify=verify_ssl, timeout=_TIMEOUT) as response:
            if response.status_code != 200:
                raise RuntimeError('Failed downloading url {} (HTTP status {} {})'.format(
                    url, response.status_code, response.reason))
            sha1 = hashlib.sha1()
            size = 0
            with open(temp_name, 'wb') as f:
                for chunk in response.iter_content(chunk_size=1 << 16):
                    f.write(chunk)
                    sha1.update(chunk)
                    size += len(chunk)
            # urllib3 2 raises on a body shorter than its Content-Length; urllib3 1 does not
            expected = response.headers.get('Content-Length')
            encoding = response.headers.get('Content-Encoding', 'identity')
            if expected is not None and encoding == 'identity' and size != int(expected):
                raise requests.exceptions.ConnectionError(
                    'Connection broken: {} bytes read from {}, {} expected'.format(
                        size, url, expected))
        if sha1_hash and sha1.hexdigest() != sha1_hash:
            raise UserWarning(
                'File {} downloaded from {} has SHA-1 {} instead of {}, so it was not saved '
                '(what was at {} is left as it was). The repo may be outdated or the download '
                'incomplete; if MXNET_GLUON_REPO is set, consider switching to the default '
                'repo.'.format(os.path.basename(fname), url, sha1.hexdigest(), sha1_hash,
                               fname))
        if not overwrite and _is_usable(fname, sha1_hash):
            # another process finished the same download first: its copy is as good
            warnings.warn('File {} exists in file system so the downloaded file is '
                          'deleted'.format(fname), stacklevel=3)
        else:
            replace_file(temp_name, fname)
    finally:
        if os.path.exists(temp_name):
            try:
                os.remove(temp_name)
            except OSError:
                pass


# where MXNet publishes the model zoo's weights and the datasets' files
apache_repo_url = 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/'


def _get_repo_url():
    """The base URL of the Gluon dataset and model repository ($MXNET_GLUON_REPO or MXNet's),
    ending with '/'."""
    repo_url = os.environ.get('MXNET_GLUON_REPO', apache_repo_url)
    if repo_url[-1] != '/':
        repo_url = repo_url + '/'
    return repo_url


def _get_repo_file_url(namespace, filename):
    """The URL of ``filename`` under ``namespace`` in the Gluon repository."""
    return '{base_url}{namespace}/{filename}'.format(base_url=_get_repo_url(),
                                                     namespace=namespace, filename=filename)
