"""What ``mx.io``'s iterators are built from.

MXNet's ``mxnet.io.utils`` has no public names; it holds the helpers of ``NDArrayIter``
(``_init_data``, ``_has_instance``, ``_getdata_by_idx``, ``_slice_along_batch_axis``), and so
does this module. The file iterators that MXNet writes in C++ (``CSVIter``, ``MNISTIter``) take
their pieces from here too:

* ``parse_iter_params``: their keyword arguments, read the way MXNet's dmlc parameters read them
  (every value may be a string: ``batch_size='2'``, ``data_shape='(3,)'``), with its messages;
* ``csv_rows``: the rows of a CSV file or directory, numbers read as dmlc's CSV parser reads
  them (its own ``strtof``, which can differ from Python's ``float`` in the last bit; C's
  ``strtoll`` for integers, so ``010`` is 8);
* ``read_mnist``: MNIST's idx files, and ``std_shuffle_order``: the order in which
  ``MNISTIter`` shuffles, which is ``std::shuffle`` with ``std::mt19937``.
"""
import gzip
import os
import re
import struct
from collections import OrderedDict
from itertools import islice

import numpy as np

from ..base import MXNetAssertionError, MXNetError, NotSupportedError
from ..ndarray import NDArray, array
from ..ops import attrs

__all__ = []


# -------------------------------------------------------------------------------------------------
# NDArrayIter's helpers (MXNet's mxnet.io.utils)
# -------------------------------------------------------------------------------------------------

def _init_data(data, allow_empty, default_name):
    """``data`` as a sorted list of ``(name, NDArray)``.

    An array (NDArray, numpy array, anything ``nd.array`` reads) becomes ``[(default_name,
    array)]``; a list of them ``[('_0_<default_name>', a0), ...]``; a dict keeps its names and
    is sorted by them. Arrays that are not NDArrays become float32 NDArrays, as in MXNet.
    """
    if data is None and not allow_empty:
        raise MXNetAssertionError(f'{default_name}: the data is required (got None)')
    if data is None:
        data = []
    if isinstance(data, (np.ndarray, NDArray)) or _is_sparse(data):
        data = [data]
    if isinstance(data, list):
        if not allow_empty and not data:
            raise MXNetAssertionError(f'{default_name}: the data is an empty list')
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([('_%d_%s' % (i, default_name), d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError('Input must be NDArray, numpy.ndarray, h5py.Dataset a list of them or '
                        'dict with them as values')
    data = dict(data)       # MXNet converts in the caller's dict; a copy leaves it alone
    for k, v in data.items():
        if _is_sparse(v):
            raise NotSupportedError(
                f'{k!r} is a sparse matrix ({type(v).__name__}): hybridlib has no sparse '
                f'(CSR) storage; pass a dense array instead (for example v.toarray())')
        if not isinstance(v, NDArray):
            try:
                data[k] = array(v)
            except Exception:
                raise TypeError(("Invalid type '%s' for %s, " % (type(v), k)) +
                                'should be NDArray, numpy.ndarray or h5py.Dataset') from None
    return list(sorted(data.items()))


def _is_sparse(value):
    """A scipy.sparse matrix or an array whose storage type is not dense."""
    if type(value).__module__.startswith('scipy.sparse'):
        return True
    return getattr(value, 'stype', 'default') != 'default'


def _has_instance(data, dtype):
    """True if an array of ``data`` (a list of ``(name, array)``) is a ``dtype``."""
    return any(isinstance(arr, dtype) for _, arr in data)


def _getdata_by_idx(data, idx):
    """The arrays of ``data`` (a list of ``(name, NDArray)``) with their rows in the order
    ``idx``; like MXNet's, the copies are float32."""
    return [(k, array(v.asnumpy()[idx], v.context)) for k, v in data]


def _slice_along_batch_axis(data, s, batch_axis):
    """``data[s]`` along ``batch_axis``."""
    return data.slice_axis(axis=batch_axis, begin=s.start, end=s.stop)


# -------------------------------------------------------------------------------------------------
# The keyword arguments of the C++ iterators
# -------------------------------------------------------------------------------------------------

class IterParam:
    """One keyword argument of a C++ iterator: its type as MXNet's documentation names it
    (``'int (non-negative)'``, ``'Shape(tuple)'``, ...), its default (``attrs.REQUIRED`` if
    none), a lower bound for numbers and the valid values of a choice."""

    _PARSERS = {'int': attrs.Int, 'long': attrs.Int, 'boolean': attrs.Bool,
                'string': attrs.Str, 'Shape(tuple)': attrs.Shape}

    def __init__(self, name, type_name, default=attrs.REQUIRED, lower=None, choices=None):
        self.name = name
        self.type_name = type_name
        self.default = default
        self.lower = lower
        self.choices = choices
        self._parser = None if choices else self._PARSERS[type_name.split(' ')[0]]()

    def parse(self, iter_name, value):
        if self.choices is not None:
            text = _dmlc_string(value)
            if text not in self.choices:
                valid = ', '.join("'%s'" % c if c != 'None' else c for c in self.choices)
                raise MXNetError(f"{iter_name}: Invalid Input: '{text}' for {self.name}, "
                                 f'valid values are: {{{valid}}}')
            return text
        try:
            parsed = self._parser.parse(_dmlc_string(value))
        except (ValueError, TypeError, SyntaxError):
            raise MXNetError(f'{iter_name}: Invalid Parameter format for {self.name} expect '
                             f"{self.type_name} but value='{_dmlc_string(value)}'") from None
        if self.lower is not None and parsed < self.lower:
            raise MXNetError(f'{iter_name}: value {parsed} for Parameter {self.name} should be '
                             f'greater equal to {self.lower}')
        return parsed


def _dmlc_string(value):
    """The string MXNet passes to C++ for a keyword value (``str(value)``); dtypes by name."""
    if isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    return value if isinstance(value, str) else str(value)


def parse_iter_params(iter_name, params, kwargs):
    """``{name: value}`` for every parameter of ``params`` (a list of ``IterParam``), read from
    ``kwargs``; a missing value takes the default. Raises MXNetError, naming ``iter_name``,
    for a missing required value or one that does not read as its type."""
    values = {}
    for param in params:
        value = kwargs.get(param.name, param.default)
        if value is attrs.REQUIRED:
            raise MXNetError(f'{iter_name}: Required parameter {param.name} of '
                             f'{param.type_name} is not presented')
        values[param.name] = param.parse(iter_name, value)
    return values


def data_files(uri, iter_name, what):
    """The files that ``uri`` names: itself, or every file of a directory (sorted by name)."""
    if os.path.isdir(uri):
        return sorted(os.path.join(uri, n) for n in os.listdir(uri)
                      if os.path.isfile(os.path.join(uri, n)))
    if not os.path.isfile(uri):
        raise MXNetError(f'{iter_name}: cannot read {what}={uri!r}: No such file or directory')
    return [uri]


# -------------------------------------------------------------------------------------------------
# Numbers in CSV files, as dmlc's CSV parser reads them
# -------------------------------------------------------------------------------------------------

# dmlc::strtof: blanks, a sign, then INF/INFINITY, NAN or digits[.digits][e[sign]digits][f]
_FLOAT = re.compile(r'[ \t\r\n\f]*([+-]?)(?:(infinity|inf(?!i))|(nan)|(\d*)(?:(\.)(\d*))?'
                    r'(?:[eE]([+-]?)(\d*))?[fF]?)', re.IGNORECASE)
# C's strtoll(text, &end, 0): hexadecimal after 0x, octal after 0, decimal otherwise
_INTEGER = re.compile(r'[ \t\n\v\f\r]*([+-]?)(?:0[xX]([0-9a-fA-F]+)|(0[0-7]*)|([1-9][0-9]*))')
_NAN_TAIL = re.compile(r'\(([0-9A-Za-z_]*)\)')
_MAX_FRACTION_DIGITS = 19        # dmlc ignores the digits after these
_MAX_EXPONENT = 38
_FLT_MAX_SIGNIFICAND = np.float32(3.402823466)
_FLT_MIN_SIGNIFICAND = np.float32(1.175494351)


def _float32_scales():
    """dmlc's powers of ten, multiplied up in float32 (1e8f at a time, then 10f)."""
    scales = []
    for expon in range(_MAX_EXPONENT + 1):
        scale = np.float32(1.0)
        while expon >= 8:
            scale = np.float32(scale * np.float32(1e8))
            expon -= 8
        while expon > 0:
            scale = np.float32(scale * np.float32(10.0))
            expon -= 1
        scales.append(scale)
    return np.array(scales, dtype=np.float32)


_SCALES = _float32_scales()


def _uint64_to_float32(n):
    """C++'s ``static_cast<float>(uint64_t)``: one rounding to nearest, ties to even (through
    a double only where that is exact)."""
    if n < (1 << 53):
        return float(n)
    shift = n.bit_length() - 24
    kept, rest = divmod(n, 1 << shift)
    half = 1 << (shift - 1)
    if rest > half or rest == half and kept & 1:
        kept += 1
    return float(kept << shift)


def _parse_floats(fields):
    """The float32 values of ``fields`` as ``dmlc::strtof`` reads them, and for each field
    whether it holds one: a field that strtof reads no character of is left out of its row,
    as in dmlc's CSV parser."""
    negative, whole, fraction, exp_negative, exponent, special, kept = [], [], [], [], [], [], []
    for field in fields:
        match = _FLOAT.match(field)
        kept.append(match.end() > 0)
        if not kept[-1]:
            continue
        sign, inf, nan, digits, _, decimals, exp_sign, exp_digits = match.groups()
        if nan and field[match.end():match.end() + 1] == '(' and \
                not _NAN_TAIL.match(field, match.end()):
            raise MXNetError(f'Invalid NAN literal in CSV field {field!r}')
        negative.append(sign == '-')
        special.append(np.inf if inf else np.nan if nan else 0.0)
        whole.append(_uint64_to_float32(int(digits or '0') & 0xFFFFFFFFFFFFFFFF))
        decimals = (decimals or '')[:_MAX_FRACTION_DIGITS]
        fraction.append(float(int(decimals)) / float(10 ** len(decimals)) if decimals else 0.0)
        exp_negative.append(exp_sign == '-')
        # no exponent is a scale of 10**0; the exponent is an unsigned int, clipped at 38
        exponent.append(0 if exp_sign is None else
                        min(int(exp_digits or '0') & 0xFFFFFFFF, _MAX_EXPONENT))
    value = (np.array(whole, np.float64).astype(np.float32) +
             np.array(fraction, np.float64).astype(np.float32))
    exponent = np.array(exponent, dtype=np.int64)
    exp_negative = np.array(exp_negative, dtype=bool)
    # at the largest exponent dmlc clips the significand so that the result stays finite
    at_limit = exponent == _MAX_EXPONENT
    value = np.where(at_limit & ~exp_negative & (value > _FLT_MAX_SIGNIFICAND),
                     _FLT_MAX_SIGNIFICAND, value)
    value = np.where(at_limit & exp_negative & (value < _FLT_MIN_SIGNIFICAND),
                     _FLT_MIN_SIGNIFICAND, value)
    scale = _SCALES[exponent]
    with np.errstate(over='ignore', under='ignore'):
        value = np.where(exp_negative, value / scale, value * scale).astype(np.float32)
    special = np.array(special, dtype=np.float32)
    value = np.where(special != 0, special, value)     # inf and nan (nan != 0 too)
    return np.where(np.array(negative, dtype=bool), -value, value).astype(np.float32), kept


def _parse_integers(fields, dtype):
    """The values of ``fields`` as C's ``strtoll(field, &end, 0)`` reads them (clamped to
    int64) cast to ``dtype`` (int32 wraps round, as in C++), and for each field whether it
    holds one."""
    values, kept = [], []
    for field in fields:
        match = _INTEGER.match(field)
        kept.append(match is not None)
        if match is None:
            continue
        sign, hexadecimal, octal, decimal = match.groups()
        if hexadecimal:
            value = int(hexadecimal, 16)
        elif octal:
            value = int(octal, 8)
        else:
            value = int(decimal)
        value = -value if sign == '-' else value
        values.append(min(max(value, -(1 << 63)), (1 << 63) - 1))
    return np.array(values, dtype=np.int64).astype(dtype), kept


def parse_csv_lines(lines, dtype):
    """One 1-D array of ``dtype`` (float32, int32 or int64) per non-empty line of ``lines``."""
    rows = []
    for line in lines:
        line = line.rstrip('\n')
        if line.startswith('\xef\xbb\xbf'):         # a UTF-8 BOM, read as latin-1
            line = line[3:]
        if line:
            rows.append(line.split(','))
    if not rows:
        return []
    fields = [field for row in rows for field in row]
    # one vectorised pass over all fields of the block
    if np.dtype(dtype) == np.float32:
        values, kept = _parse_floats(fields)
    else:
        values, kept = _parse_integers(fields, dtype)
    sizes = []
    start = 0
    for row in rows:
        sizes.append(sum(kept[start:start + len(row)]))
        start += len(row)
    return np.split(values, np.cumsum(sizes)[:-1])


def csv_rows(paths, dtype, chunk=4096):
    """Yield the rows of the CSV files ``paths`` in order, as 1-D arrays of ``dtype``.

    Lines end at ``\\n``, ``\\r`` or ``\\r\\n``; empty lines are skipped; fields are separated by
    commas and a field with no number is left out of its row, as in dmlc's CSV parser.
    """
    for path in paths:
        # latin-1 reads any byte; the numbers are ASCII
        with open(path, encoding='latin-1') as lines:
            while True:
                block = list(islice(lines, chunk))
                if not block:
                    break
                yield from parse_csv_lines(block, dtype)


# -------------------------------------------------------------------------------------------------
# MNIST's idx files, and MNISTIter's shuffle
# -------------------------------------------------------------------------------------------------

def _read_file(path, iter_name, what):
    """The bytes of ``path`` (gunzipped when it is a .gz file)."""
    try:
        with open(path, 'rb') as f:
            raw = f.read()
    except OSError as error:
        raise MXNetError(f'{iter_name}: cannot open {what}={path!r}: {error.strerror}') from None
    if raw[:2] == b'\x1f\x8b':
        raw = gzip.decompress(raw)
    return raw


def part_bounds(count, num_parts, part_index, iter_name):
    """The first and one-past-last example of part ``part_index`` of ``num_parts``, as MXNet's
    MNISTIter cuts them (``int(count / num_parts * part_index)``)."""
    if part_index < 0 or num_parts <= 0 or part_index >= num_parts:
        raise MXNetError(f'{iter_name}: part_index={part_index} must be in [0, num_parts) with '
                         f'num_parts={num_parts} > 0')
    return (int(float(count) / num_parts * part_index),
            int(float(count) / num_parts * (part_index + 1)))


def read_mnist(image, label, num_parts, part_index, iter_name='MNISTIter'):
    """Images (N, rows, cols) float32 scaled by 1/256 and labels (N,) float32 of part
    ``part_index`` of the idx files ``image`` and ``label`` (plain or gzipped)."""
    raw = _read_file(image, iter_name, 'image')
    if len(raw) < 16:
        raise MXNetError(f'{iter_name}: image={image!r} is too short for an idx header')
    _, count, rows, cols = struct.unpack_from('>iiii', raw)
    if min(count, rows, cols) < 0:
        raise MXNetError(f'{iter_name}: image={image!r} is not an idx file of images: its '
                         f'header says {count} images of {rows}x{cols} pixels')
    start, end = part_bounds(count, num_parts, part_index, iter_name)
    size = rows * cols
    if len(raw) < 16 + end * size:
        raise MXNetError(f'{iter_name}: image={image!r} ends before its {count} images of '
                         f'{rows}x{cols} pixels (it has {len(raw)} bytes)')
    pixels = np.frombuffer(raw, np.uint8, count=(end - start) * size, offset=16 + start * size)
    # MXNet scales by 1/256, so 255 reads as 0.99609375
    images = pixels.reshape(end - start, rows, cols).astype(np.float32) * np.float32(1 / 256)
    raw = _read_file(label, iter_name, 'label')
    if len(raw) < 8:
        raise MXNetError(f'{iter_name}: label={label!r} is too short for an idx header')
    _, label_count = struct.unpack_from('>ii', raw)
    if label_count < 0:
        raise MXNetError(f'{iter_name}: label={label!r} is not an idx file of labels: its '
                         f'header says {label_count} labels')
    label_start, label_end = part_bounds(label_count, num_parts, part_index, iter_name)
    if len(raw) < 8 + label_end:
        raise MXNetError(f'{iter_name}: label={label!r} ends before its {label_count} labels '
                         f'(it has {len(raw)} bytes)')
    if label_end - label_start != end - start:
        raise MXNetError(f'{iter_name}: image={image!r} has {count} images but label={label!r} '
                         f'has {label_count} labels')
    labels = np.frombuffer(raw, np.uint8, count=label_end - label_start,
                           offset=8 + label_start).astype(np.float32)
    return images, labels


def _mt19937_key(seed):
    """The state of ``std::mt19937(seed)``: MT19937's init_genrand."""
    key = [seed & 0xFFFFFFFF]
    for i in range(1, 624):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return np.array(key, dtype=np.uint32)


def std_shuffle_order(n, seed):
    """The order ``std::shuffle`` with ``std::mt19937(seed)`` puts ``range(n)`` in, as
    MXNet 1.9.1's MNISTIter does it: libstdc++'s Fisher-Yates from the back, each position drawn
    by ``uniform_int_distribution``'s rejection and division."""
    generator = np.random.MT19937()
    generator.state = {'bit_generator': 'MT19937',
                       'state': {'key': _mt19937_key(seed), 'pos': 624}}
    draws = []
    order = list(range(n))
    for i in range(1, n):
        bound = i + 1
        scaling = 0xFFFFFFFF // bound
        past = bound * scaling
        while True:
            if not draws:
                draws = generator.random_raw(4096).tolist()[::-1]
            draw = draws.pop()
            if draw < past:
                break
        j = draw // scaling
        order[i], order[j] = order[j], order[i]
    return np.array(order, dtype=np.int64)


# -------------------------------------------------------------------------------------------------
# The readers behind the C++ iterators' handles (see MXDataIter)
# -------------------------------------------------------------------------------------------------

class BatchLoader:
    """MXNet's C++ ``BatchLoader``: batches of ``batch_size`` examples from ``source``, a
    reader of single examples (``before_first()``; ``next()``, which returns a tuple of arrays,
    data then label, and the example's index, or None at the end).

    The batch arrays are reused from batch to batch. An incomplete last batch is filled, with
    ``round_batch``, from the start of the data (``pad`` counts those examples, and the next
    epoch goes on after them, as MXNet's does); without it, its tail keeps what the previous
    batch left there.
    """

    def __init__(self, source, batch_size, round_batch, iter_name):
        self.source = source
        self.batch_size = batch_size
        self.round_batch = round_batch
        self.iter_name = iter_name
        self._num_overflow = 0
        self._pad = 0
        self._arrays = None
        self._index = np.zeros(batch_size, dtype=np.uint64)

    def before_first(self):
        if not self.round_batch or self._num_overflow == 0:
            self.source.before_first()
        else:
            # the overflow already started the data over: the next epoch goes on from there
            self._num_overflow = 0

    def _store(self, top, example):
        arrays, index = example
        if self._arrays is None:
            self._arrays = [np.zeros((self.batch_size,) + a.shape, a.dtype) for a in arrays]
        if top >= self.batch_size:
            return
        for buffer, value in zip(self._arrays, arrays):
            if buffer.shape[1:] != value.shape:
                raise MXNetError(f'{self.iter_name}: an example has shape {value.shape} where '
                                 f'the first had {buffer.shape[1:]}')
            buffer[top] = value
        self._index[top] = index

    def next(self):
        self._pad = 0
        if self._num_overflow != 0:
            return False
        top = 0
        while True:
            example = self.source.next()
            if example is None:
                break
            self._store(top, example)
            top += 1
            if top >= self.batch_size:
                return True
        if top == 0:
            return False
        if self.round_batch:
            self.source.before_first()
            while top < self.batch_size:
                example = self.source.next()
                if example is None:
                    raise MXNetError(
                        f'{self.iter_name}: number of input must be bigger than batch size: '
                        f'batch_size={self.batch_size} is more than the rest of the data and a '
                        f'second pass can fill (round_batch); use a smaller batch_size')
                self._store(top, example)
                top += 1
                self._num_overflow += 1
            self._pad = self._num_overflow
        else:
            self._pad = self.batch_size - top
        return True

    def get_data(self):
        return self._arrays[0]

    def get_label(self):
        return self._arrays[1]

    def get_pad(self):
        return self._pad

    def get_index(self):
        return self._index


class CSVExamples:
    """The examples of ``CSVIter``: row i of the data file(s), reshaped to ``data_shape``,
    with row i of the label file(s) (or 0 without them). A label of one value is a scalar, so
    that the batch's label is (batch_size,)."""

    def __init__(self, data_paths, data_shape, label_paths, label_shape, dtype):
        self.data_paths = data_paths
        self.data_shape = tuple(data_shape)
        self.label_paths = label_paths
        self.label_shape = tuple(label_shape)
        self.dtype = dtype
        self.before_first()

    def before_first(self):
        self._data = csv_rows(self.data_paths, self.dtype)
        self._label = csv_rows(self.label_paths, self.dtype) if self.label_paths else None
        self._count = 0

    @staticmethod
    def _shaped(row, shape, what, count):
        size = int(np.prod(shape))
        if row.size != size:
            raise MXNetError(f'CSVIter: The data size in CSV do not match size of shape: '
                             f'specified {what}_shape={shape}, the csv row-length={row.size} '
                             f'(row {count} of {what}_csv)')
        return row.reshape(shape) if size != 1 or what == 'data' else row.reshape(())

    def next(self):
        row = next(self._data, None)
        if row is None:
            return None
        index = self._count
        self._count += 1
        data = self._shaped(row, self.data_shape, 'data', index)
        if self._label is None:
            return (data, np.zeros((), self.dtype)), index
        label = next(self._label, None)
        if label is None:
            raise MXNetError(f'CSVIter: label_csv has fewer rows than data_csv: it ends before '
                             f'row {index}')
        return (data, self._shaped(label, self.label_shape, 'label', index)), index


class MNISTBatches:
    """MXNet's C++ ``MNISTIter``: the whole batches of images and labels held in memory, in
    order; the examples left over at the end are never given."""

    def __init__(self, images, labels, batch_size, flat):
        self.images = images.reshape(len(images), -1) if flat else images[:, None]
        self.labels = labels
        self.batch_size = batch_size
        self._loc = 0
        self._start = None

    def before_first(self):
        self._loc = 0

    def next(self):
        if self._loc + self.batch_size > len(self.images):
            return False
        self._start = self._loc
        self._loc += self.batch_size
        return True

    def get_data(self):
        return self.images[self._start:self._start + self.batch_size]

    def get_label(self):
        return self.labels[self._start:self._start + self.batch_size]

    def get_pad(self):
        return 0

    def get_index(self):
        # MXNet's MNIST batches carry no instance indices: its getindex() gives zeros
        return np.zeros(self.batch_size, dtype=np.uint64)
