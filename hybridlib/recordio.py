"""MXNet's RecordIO files (``mx.recordio``): sequential ``.rec`` files, ``.idx`` indexes for
random access, and the ``IRHeader`` that labelled (image) records start with.

The byte format is dmlc-core's, so files written here load in MXNet and the other way round.
Each record is::

    uint32 magic 0xced7230a | uint32 lrec = cflag << 29 | length | data | zero padding to 4 bytes

(little endian). A record whose data holds the magic number at a 4-byte aligned offset is
written in parts, split at each such magic (which is left out): the first part has cflag 1,
middle parts 2 and the last 3 (a record in one part has cflag 0); the reader joins the parts
and puts the magic numbers back. A ``.idx`` file has one ``key<TAB>byte offset`` line per
record.
"""
import numbers
import os
import struct
from collections import namedtuple
from multiprocessing import current_process

import numpy as np

from . import codec
from .base import MXNetAssertionError, MXNetError

__all__ = ['MXRecordIO', 'MXIndexedRecordIO', 'IRHeader', 'pack', 'unpack', 'pack_img',
           'unpack_img']

_MAGIC = 0xced7230a
_MAGIC_BYTES = struct.pack('<I', _MAGIC)
_LENGTH_BITS = 29
_MAX_LENGTH = 1 << _LENGTH_BITS


def _encode_lrec(cflag, length):
    return struct.pack('<II', _MAGIC, cflag << _LENGTH_BITS | length)


def _encode_record(buf):
    """The bytes of one record holding ``buf`` (dmlc::RecordIOWriter::WriteRecord)."""
    size = len(buf)
    if size >= _MAX_LENGTH:
        raise ValueError(f'RecordIO only accepts records of less than 2^29 bytes, got {size}')
    lower_align = size & ~3
    out = []
    start = 0           # where the current part begins
    pos = buf.find(_MAGIC_BYTES)
    while 0 <= pos < lower_align:
        if pos % 4:     # an unaligned magic number is ordinary data
            pos = buf.find(_MAGIC_BYTES, pos + 1)
            continue
        out += [_encode_lrec(1 if start == 0 else 2, pos - start), buf[start:pos]]
        start = pos + 4
        pos = buf.find(_MAGIC_BYTES, start)
    out += [_encode_lrec(3 if start else 0, size - start), buf[start:],
            bytes(-size % 4)]
    return b''.join(out)


class MXRecordIO:
    """Reads or writes a RecordIO file sequentially.

    Parameters
    ----------
    uri : str
        Path to the record file.
    flag : str
        ``'w'`` to write (the file is truncated) or ``'r'`` to read.

    Examples
    --------
    >>> record = mx.recordio.MXRecordIO('tmp.rec', 'w')
    >>> for i in range(5):
    ...     record.write(b'record_%d' % i)
    >>> record.close()
    >>> record = mx.recordio.MXRecordIO('tmp.rec', 'r')
    >>> record.read()
    b'record_0'
    """

    def __init__(self, uri, flag):
        self.uri = str(uri)
        self.handle = None
        self.flag = flag
        self.pid = None
        self.is_open = False
        self.writable = flag == 'w'
        self.open()

    def open(self):
        """Open the record file (for writing, an existing file is truncated)."""
        if self.flag not in ('w', 'r'):
            raise ValueError('Invalid flag %s' % self.flag)
        self.writable = self.flag == 'w'
        mode = 'wb' if self.writable else 'rb'
        try:
            self.handle = open(self.uri, mode)
        except OSError as err:
            raise MXNetError(f'RecordIO: cannot open {self.uri!r} '
                             f'for {"writing" if self.writable else "reading"}: '
                             f'{err.strerror}') from err
        self.pid = current_process().pid
        self.is_open = True

    def __del__(self):
        if getattr(self, 'handle', None) is not None:
            self.close()

    def __getstate__(self):
        """Pickle the path and the open state, not the file handle: a copy reopens the file.

        MXNet closes the original here (which then fails on its next read); this keeps it open.
        """
        state = dict(self.__dict__)
        del state['handle']
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        is_open = state['is_open']
        self.is_open = False
        self.handle = None
        if is_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        """A file handle cannot be shared by processes: reopen it in a new one (where allowed)."""
        if self.pid != current_process().pid:
            if allow_reset:
                self.reset()
            else:
                raise RuntimeError('Forbidden operation in multiple processes')

    def close(self):
        """Close the record file."""
        if not self.is_open:
            return
        self.handle.close()
        self.is_open = False
        self.pid = None

    def reset(self):
        """Go back to the first record; with flag ``'w'`` this truncates the file."""
        self.close()
        self.open()

    def _check_mode(self, writing):
        if not self.is_open:
            raise MXNetAssertionError(f'RecordIO file {self.uri!r} is closed')
        if writing != self.writable:
            raise MXNetAssertionError(f'RecordIO file {self.uri!r} was opened with flag '
                                      f'{self.flag!r}: it cannot be '
                                      f'{"written" if writing else "read"}')

    def write(self, buf):
        """Append ``buf`` (bytes) as one record."""
        self._check_mode(writing=True)
        self._check_pid(allow_reset=False)
        if isinstance(buf, str):
            raise TypeError('MXRecordIO.write takes bytes, not str: encode the string first')
        self.handle.write(_encode_record(bytes(buf)))

    def read(self):
        """The next record as bytes, or None at the end of the file."""
        self._check_mode(writing=False)
        self._check_pid(allow_reset=False)
        parts = []
        while True:
            head = self.handle.read(8)
            if not head and not parts:
                return None
            if len(head) != 8:
                raise MXNetError(f'Invalid RecordIO File {self.uri!r}: truncated record header')
            magic, lrec = struct.unpack('<II', head)
            if magic != _MAGIC:
                raise MXNetError(f'Invalid RecordIO File {self.uri!r}: no magic number at byte '
                                 f'{self.handle.tell() - 8}')
            cflag, length = lrec >> _LENGTH_BITS, lrec & (_MAX_LENGTH - 1)
            padded = length + (-length % 4)
            data = self.handle.read(padded)
            if len(data) != padded:
                raise MXNetError(f'Invalid RecordIO File {self.uri!r}: truncated record')
            parts.append(data[:length])
            if cflag in (0, 3):
                return _MAGIC_BYTES.join(parts)


class MXIndexedRecordIO(MXRecordIO):
    """Reads or writes a RecordIO file with an index file, for random access.

    Parameters
    ----------
    idx_path : str
        Path to the index file (``key<TAB>offset`` lines).
    uri : str
        Path to the record file.
    flag : str
        ``'w'`` to write or ``'r'`` to read.
    key_type : type
        The type of the keys (``int`` by default).

    Examples
    --------
    >>> record = mx.recordio.MXIndexedRecordIO('tmp.idx', 'tmp.rec', 'w')
    >>> for i in range(5):
    ...     record.write_idx(i, b'record_%d' % i)
    >>> record.close()
    >>> record = mx.recordio.MXIndexedRecordIO('tmp.idx', 'tmp.rec', 'r')
    >>> record.read_idx(3)
    b'record_3'
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = idx_path
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        try:
            self.fidx = open(self.idx_path, self.flag)
        except OSError as err:
            raise MXNetError(f'RecordIO: cannot open the index {self.idx_path!r}: {err}') from None
        if not self.writable:
            size = os.fstat(self.handle.fileno()).st_size
            try:
                for number, line in enumerate(iter(self._read_index_line, ''), 1):
                    key, offset = self._index_entry(line, number, size)
                    self.idx[key] = offset
                    self.keys.append(key)
            except MXNetError:
                self.close()
                raise

    def _read_index_line(self):
        try:
            return self.fidx.readline()
        except UnicodeDecodeError:
            raise MXNetError(f'RecordIO index {self.idx_path!r}: not text') from None

    def _index_entry(self, line, number, size):
        """(key, byte offset) of line ``number`` of the index, checked against the size of
        the record file."""
        parts = line.strip().split('\t')
        try:
            key, offset = self.key_type(parts[0]), int(parts[1])
        except (ValueError, TypeError, IndexError):
            raise MXNetError(f'RecordIO index {self.idx_path!r}, line {number}: expected '
                             f'"key<TAB>offset", got {line.strip()[:60]!r}') from None
        if not 0 <= offset <= size:
            raise MXNetError(f'RecordIO index {self.idx_path!r}, line {number}: offset {offset} '
                             f'is outside {self.uri!r} ({size} bytes)')
        return key, offset

    def close(self):
        """Close the record and the index files."""
        if not self.is_open:
            return
        super().close()
        self.fidx.close()

    def __getstate__(self):
        state = super().__getstate__()
        state['fidx'] = None
        return state

    def seek(self, idx):
        """Move the read position to the record with key ``idx``."""
        self._check_mode(writing=False)
        self._check_pid(allow_reset=True)
        self.handle.seek(self.idx[idx])

    def tell(self):
        """The byte offset at which the next record will be written."""
        self._check_mode(writing=True)
        return self.handle.tell()

    def read_idx(self, idx):
        """The record with key ``idx``."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Append ``buf`` as the record with key ``idx``."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write('%s\t%d\n' % (str(key), pos))
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple('HEADER', ['flag', 'label', 'id', 'id2'])
IRHeader.__doc__ = """The header of a labelled record (MXNet's ``HEADER``).

Parameters
----------
flag : int
    Free for the user when ``label`` is a number; the label count when it is an array.
label : float or array of float
    The label(s) of the record.
id : int
    A unique id of the record.
id2 : int
    Higher bits of the id (usually 0).
"""
_IR_FORMAT = 'IfQQ'
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """``header`` (an IRHeader) and the bytes ``s`` as one record's bytes.

    A number label is stored in the header (whose flag becomes 0); an array label is stored as
    float32 values before ``s``, with its size as the flag.
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    return struct.pack(_IR_FORMAT, *header) + s


def unpack(s):
    """(IRHeader, payload bytes) of a record written by ``pack``."""
    if len(s) < _IR_SIZE:
        raise MXNetError(f'a record of {len(s)} bytes is shorter than its header ({_IR_SIZE} '
                         'bytes): not written by pack')
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if header.flag * 4 > len(s):
            raise MXNetError(f'a record header gives {header.flag} labels, but only {len(s)} '
                             'bytes follow it')
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def unpack_img(s, iscolor=-1):
    """(IRHeader, image) of a record written by ``pack_img``: the image as OpenCV decodes it,
    a numpy uint8 array in BGR order, (H, W) for grey; ``iscolor`` 1 always gives colour, 0
    grey, -1 (default) what the file holds. Decoding needs Pillow (``hybridlib[image]``)."""
    header, payload = unpack(s)
    img = codec.decode(payload, iscolor, to_rgb=False, what='recordio.unpack_img')
    return header, img[:, :, 0] if img.shape[2] == 1 else img


def pack_img(header, img, quality=95, img_fmt='.jpg'):
    """``pack(header, encoded image)`` for a numpy uint8 image in BGR order (as OpenCV's
    ``imread`` gives it), encoded as JPEG (``quality`` 1-100) or PNG (``quality`` is the
    compression level); needs Pillow (``hybridlib[image]``)."""
    return pack(header, codec.encode(img, img_fmt, quality, what='recordio.pack_img'))
