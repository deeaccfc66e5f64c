"""MXNet's binary NDArray list format (``.params`` files), between bytes and numpy arrays.

``nd.save``/``nd.load`` (ndarray.py) are thin wrappers that check and convert NDArrays.

Layout (little-endian; see the project's FORMAT notes)::

    u64 0x112, u64 0, u64 count, count x array, u64 n_names, n_names x (u64 len, utf-8 bytes)
    array := u32 magic, i32 stype, i32 ndim, ndim x i64 dims, i32 dev_type, i32 dev_id,
             i32 type_flag, raw C-order data

Arrays are written with magic 0xF993FAC9 (MXNet's V2), or 0xF993FACA (V3, numpy shape rules)
for the shapes only that allows: 0-d and zero-size. The reader also takes MXNet's V1 and
pre-V1 layouts. Files are written to a temporary file and renamed, so a failed save never
destroys the previous file. No pickle anywhere.
"""
import math
import os
import struct

import numpy as np

from .base import MXNetError, NotSupportedError, dtype_to_flag, flag_to_dtype

__all__ = ['dumps_arrays', 'loads_arrays', 'read_file', 'atomic_write']

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA


def atomic_write(fname, payload):
    """Write bytes to ``fname`` so that a failed or killed save never harms the previous file.

    The bytes go to a new file in the target's folder (through a symlink: the file it names),
    are synced, and renamed over the target; then the folder is synced so the rename lasts.
    The new file has the old one's permissions, or the umask's for a new name (as ``open``).
    Where the file system takes O_TMPFILE, the file has no name until it is complete: a
    process killed mid-write leaves nothing behind. Elsewhere the file is named after the
    target and the writing process, and the next save of that target removes what a killed
    process left.
    """
    target = os.path.realpath(os.fspath(fname))
    folder = os.path.dirname(target)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    _remove_stale_temporaries(target)
    tmp = _write_unnamed(folder, target, payload, mode) or \
        _write_named(target, payload, mode)
    try:
        os.replace(tmp, target)
    except BaseException:
        os.remove(tmp)
        raise
    _sync_folder(folder)


def _temporary_name(target):
    return f'{target}.{os.getpid()}.{os.urandom(4).hex()}.tmp'


def _remove_stale_temporaries(target):
    folder, base = os.path.split(target)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        parts = name[len(base):].split('.') if name.startswith(base + '.') else []
        # '', pid, random, 'tmp'
        if len(parts) != 4 or parts[3] != 'tmp' or not parts[1].isdigit():
            continue
        try:
            os.kill(int(parts[1]), 0)         # its writer still runs
        except ProcessLookupError:
            try:
                os.remove(os.path.join(folder, name))
            except OSError:
                pass
        except OSError:                       # alive, another user's
            pass


def _write_synced(fd, payload, mode):
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]
    if mode is not None:
        os.fchmod(fd, mode)
    os.fsync(fd)


# st_dev -> whether an O_TMPFILE there can be given a name (learnt by the first save)
_NAMEABLE = {}


def _write_unnamed(folder, target, payload, mode):
    """The name given to an O_TMPFILE holding ``payload`` once written, or None where the
    system or file system has none or cannot name one (overlayfs, a /proc that refuses the
    link); those are remembered per device, so a payload is written once per save but the
    first."""
    if not hasattr(os, 'O_TMPFILE') or not os.path.isdir('/proc/self/fd'):
        return None
    device = os.stat(folder).st_dev
    if not _NAMEABLE.get(device, True):
        return None
    try:
        fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o666)   # less the umask
    except OSError:
        _NAMEABLE[device] = False
        return None
    try:
        _write_synced(fd, payload, mode)
        name = _temporary_name(target)
        try:
            os.link(f'/proc/self/fd/{fd}', name, follow_symlinks=True)
        except OSError:
            _NAMEABLE[device] = False
            return None
        _NAMEABLE[device] = True
        return name
    finally:
        os.close(fd)


def _write_named(target, payload, mode):
    name = _temporary_name(target)
    fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)   # less the umask
    try:
        _write_synced(fd, payload, mode)
    except BaseException:
        os.close(fd)
        os.remove(name)
        raise
    os.close(fd)
    return name


def _sync_folder(folder):
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:                           # (Windows: folders cannot be opened)
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -------------------------------------------------------------------------------------------------
# Writing
# -------------------------------------------------------------------------------------------------

def _encode_array(data):
    """One dense array record from a numpy array."""
    data = np.asarray(data, order='C')   # (ascontiguousarray would make a 0-d array 1-d)
    flag = dtype_to_flag(data.dtype)
    magic = V3_MAGIC if data.ndim == 0 or 0 in data.shape else V2_MAGIC
    head = struct.pack('<Iii', magic, 0, data.ndim)
    head += struct.pack(f'<{data.ndim}q', *data.shape)
    head += struct.pack('<iii', 1, 0, flag)
    return head + data.astype(data.dtype.newbyteorder('<'), copy=False).tobytes()


def dumps_arrays(names, arrays):
    """The bytes of an NDArray file holding numpy ``arrays``, named by ``names`` (or [])."""
    parts = [struct.pack('<QQQ', LIST_MAGIC, 0, len(arrays))]
    parts += [_encode_array(a) for a in arrays]
    parts.append(struct.pack('<Q', len(names)))
    for name in names:
        raw = name.encode('utf-8')
        parts.append(struct.pack('<Q', len(raw)) + raw)
    return b''.join(parts)


# -------------------------------------------------------------------------------------------------
# Reading
# -------------------------------------------------------------------------------------------------

class _Reader:
    """A cursor over the bytes that names what it was reading when the file ends early."""

    def __init__(self, buf, source):
        self.buf = memoryview(buf)
        self.pos = 0
        self.source = source

    def take(self, n, what):
        if self.pos + n > len(self.buf):
            raise MXNetError(
                f'{self.source}: the file is truncated or corrupt: {what} needs {n} bytes at '
                f'offset {self.pos}, but the file has {len(self.buf)} bytes')
        chunk = self.buf[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt, what):
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size, what))


def _read_shape(r, what, legacy_ndim=None):
    if legacy_ndim is not None:     # pre-V1: the magic was the ndim; dims are u32
        return r.unpack(f'<{legacy_ndim}I', what)
    (ndim,) = r.unpack('<i', what)
    if ndim < 0 or ndim > 32:
        raise MXNetError(f'{r.source}: corrupt file: {what} has {ndim} dimensions')
    return r.unpack(f'<{ndim}q', what)


def _read_array(r, i):
    what = f'array {i}'
    (magic,) = r.unpack('<I', f'the header of {what}')
    if magic in (V2_MAGIC, V3_MAGIC):
        (stype,) = r.unpack('<i', f'the storage type of {what}')
        if stype != 0:
            kind = {1: 'row_sparse', 2: 'csr'}.get(stype, f'type {stype}')
            raise NotSupportedError(f'{r.source}: {what} is stored as {kind}; hybridlib reads '
                                    'dense arrays only (save it dense with tostype("default"))')
        shape = _read_shape(r, f'the shape of {what}')
        if not shape and magic == V2_MAGIC:
            return None        # MXNet's legacy rules: ndim 0 is an empty record
    elif magic == V1_MAGIC:
        shape = _read_shape(r, f'the shape of {what}')
        if not shape:
            return None
    elif magic <= 32:
        shape = _read_shape(r, f'the shape of {what}', legacy_ndim=magic)
        if not shape:
            return None
    else:
        raise MXNetError(f'{r.source}: corrupt file: {what} starts with 0x{magic:08X}, which '
                         'is not an NDArray magic number')
    if any(d < 0 for d in shape):
        raise MXNetError(f'{r.source}: corrupt file: {what} has shape {shape}')
    dev_type, _dev_id = r.unpack('<ii', f'the context of {what}')
    if dev_type not in (1, 2, 3, 5):
        raise MXNetError(f'{r.source}: corrupt file: {what} has device type {dev_type}')
    (flag,) = r.unpack('<i', f'the dtype of {what}')
    try:
        dtype = flag_to_dtype(flag)
    except MXNetError as err:
        raise MXNetError(f'{r.source}: {what}: {err}') from None
    count = math.prod(shape)            # Python integers: a corrupt shape cannot wrap around
    raw = r.take(count * dtype.itemsize, f'the data of {what} (shape {shape}, {dtype.name})')
    try:
        return np.frombuffer(raw, dtype=dtype.newbyteorder('<')).astype(dtype).reshape(shape)
    except ValueError as err:           # a zero-size shape numpy cannot index (2**63 x 0)
        raise MXNetError(f'{r.source}: corrupt file: {what} has shape {shape}: {err}') from None


def loads_arrays(buf, source='<buffer>'):
    """Parse the bytes of an NDArray file: (names, numpy arrays); names is [] for a list, and
    MXNet's empty records (ndim 0 in its legacy layouts) are None."""
    r = _Reader(buf, source)
    magic, _reserved = r.unpack('<QQ', 'the file header')
    if magic != LIST_MAGIC:
        raise MXNetError(f'{source}: not an MXNet NDArray file (magic 0x{magic:X}, expected '
                         f'0x{LIST_MAGIC:X})')
    (count,) = r.unpack('<Q', 'the array count')
    if count > len(buf):
        raise MXNetError(f'{source}: corrupt file: it claims {count} arrays')
    datas = [_read_array(r, i) for i in range(count)]
    (n_names,) = r.unpack('<Q', 'the name count')
    if n_names not in (0, count):
        raise MXNetError(f'{source}: corrupt file: {n_names} names for {count} arrays')
    names = []
    for i in range(n_names):
        (length,) = r.unpack('<Q', f'the length of name {i}')
        raw = r.take(length, f'name {i}')
        try:
            names.append(bytes(raw).decode('utf-8'))
        except UnicodeDecodeError:
            raise MXNetError(f'{source}: corrupt file: name {i} is not UTF-8') from None
    if r.pos != len(r.buf):
        raise MXNetError(f'{source}: corrupt file: {len(r.buf) - r.pos} unexpected bytes '
                         'after the last name')
    return names, datas


def read_file(fname):
    """The bytes of an NDArray file, or an MXNetError naming it."""
    fname = os.fspath(fname)
    try:
        with open(fname, 'rb') as f:
            return f.read()
    except OSError as err:
        raise MXNetError(f'cannot read NDArray file {fname!r}: {err}') from None
