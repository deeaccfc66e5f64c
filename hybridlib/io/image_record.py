"""MXNet's C++ image record iterators, in Python: ``ImageRecordIter`` (and its uint8 and int8
forms), the deprecated ``_v1`` iterators and ``ImageDetRecordIter``.

They read images packed in RecordIO files (``tools/im2rec.py``), decode them with
``hybridlib.codec`` (OpenCV's pixels), augment them (``image_record_aug``) and batch them in
the order MXNet does: the same split of a file into ``num_parts`` (by bytes, or by records with
an ``.idx`` file), the same shuffles (``std::mt19937`` seeded with ``seed``), the same handling
of the last batch (``round_batch`` wraps around and the next epoch goes on from there). Random
augmentations draw what MXNet draws on one preprocessing thread (or with ``seed_aug``), so
crops and mirrors repeat MXNet's; ``preprocess_threads`` and ``prefetch_buffer`` are accepted
and the work is done in the calling thread.

As in MXNet, keyword arguments no iterator knows are ignored (MXNet passes all of them to
every part of its pipeline), batches are (N, C, H, W), a label of width 1 is returned as (N,),
and an unset ``dtype`` means float32. With ``round_batch=False`` the unfilled rows of the last
batch hold the rows of the batch before (as MXNet's ``ctx='cpu'`` buffer does) and ``pad`` is
0 for ``ImageRecordIter`` and the number of those rows for the ``_v1`` and detection iterators
(as in MXNet). Unlike MXNet's reused buffers, each batch is a copy (MXNet's ``ctx='cpu'``
batches are overwritten by the next one) and never keeps the ``pad`` of an earlier batch.
"""
import bisect
import logging
import os
import struct

import numpy as np

from .. import ndarray as nd
from .. import recordio
from ..base import MXNetError, NotSupportedError, build_param_doc
from ..codec import decode
from ..context import cpu, cpu_pinned
from ..ops import attrs
from ..serialization import atomic_write, dumps_arrays, loads_arrays, read_file
from .image_record_aug import CppRandom, DefaultAugmenter, DetAugmenter
from .io import MXDataIter
from .utils import BatchLoader, IterParam, parse_iter_params

__all__ = ['ImageRecordIter', 'ImageRecordUInt8Iter', 'ImageRecordInt8Iter',
           'ImageRecordIter_v1', 'ImageRecordUInt8Iter_v1', 'ImageDetRecordIter']

_LOG = logging.getLogger(__name__)
_F32 = np.float32

# -------------------------------------------------------------------------------------------------
# Parameters, in MXNet's order
# -------------------------------------------------------------------------------------------------

class _Param(IterParam):
    """An ``IterParam`` with the types of the image iterators too: float (float32, as MXNet's
    fields are), ``'int or None'``, ``'float or None'`` and ``'tuple of <float>'``; and its
    description, for the docstrings."""

    _PARSERS = dict(IterParam._PARSERS, float=attrs.Float, tuple=attrs.FloatTuple)

    def __init__(self, name, type_name, default=attrs.REQUIRED, doc='', **kwargs):
        super().__init__(name, type_name, default, **kwargs)
        self.doc = doc
        if type_name.endswith(' or None'):
            self._parser = self._PARSERS[type_name.split(' ')[0]](default=None)

    def parse(self, iter_name, value):
        value = super().parse(iter_name, value)
        if self.type_name.startswith('float') and value is not None:
            return float(_F32(value))
        if self.type_name.startswith('tuple'):
            return tuple(float(_F32(v)) for v in value)
        return value

    def describe(self):
        if self.default is attrs.REQUIRED:
            return f'{self.type_name}, required'
        kind = self.type_name
        if self.choices:
            kind = '{' + ', '.join(repr(c) if c != 'None' else c for c in self.choices) + '}'
        return f'{kind}, optional, default={self.default!r}'


def _table(*rows):
    """_Params from (name, type, default, description[, lower]) rows; a type that is a tuple
    lists the choices of a string."""
    out = []
    for name, kind, default, doc, *lower in rows:
        choices = kind if isinstance(kind, tuple) else None
        out.append(_Param(name, 'string' if choices else kind, default, doc, choices=choices,
                          lower=lower[0] if lower else None))
    return out


_REQ = attrs.REQUIRED
_SHAPE_DOC = 'The shape of one output image in (channels, height, width) format.'
_THREADS_DOC = 'Accepted; images are processed in the calling thread.'
_INTERP_DOC = 'Interpolation: 0 NN, 1 bilinear, 2 cubic, 3 area, 4 Lanczos, 9 auto, 10 random.'
_DTYPES = ('None', 'bfloat16', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8',
           'uint8')

_PARSER = _table(
    ('path_imglist', 'string', '', 'Image list (.lst): <index>\\t<labels>\\t<path> lines.'),
    ('path_imgrec', 'string', '', 'Path to the image RecordIO (.rec) file.'),
    ('path_imgidx', 'string', '', 'Path to the image RecordIO index (.idx) file.'),
    ('aug_seq', 'string', 'aug_default', 'The augmenters to apply (only aug_default exists).'),
    ('label_width', 'int', 1, 'The number of labels per image.', 1),
    ('data_shape', 'Shape(tuple)', _REQ, _SHAPE_DOC),
    ('preprocess_threads', 'int', 4, _THREADS_DOC, 1),
    ('verbose', 'boolean', True, 'Log what the iterator reads.'),
    ('num_parts', 'int', 1, 'Virtually partition the data into these many parts.'),
    ('part_index', 'int', 0, 'The *i*-th virtual partition to be read.'),
    ('device_id', 'int', 0, '-1 gives batches on cpu(0), else on cpu_pinned(0).'),
    ('shuffle_chunk_size', 'long (non-negative)', 0, 'The shuffle buffer size in MB.', 0),
    ('shuffle_chunk_seed', 'int', 0, 'The random seed for shuffling chunks.'),
    ('seed_aug', 'int or None', None, 'Random seed for augmentations (reseeded per image).'))
_RECORD = _table(
    ('shuffle', 'boolean', False, 'Whether to shuffle data randomly or not.'),
    ('seed', 'int', 0, 'The random seed of the shuffles.'))
_BATCH = _table(
    ('batch_size', 'int (non-negative)', _REQ, 'Batch size.', 0),
    ('round_batch', 'boolean', True, 'Fill the last batch with images from the start (the '
                                     'next epoch goes on after them).'))
_PREFETCH = _table(
    ('prefetch_buffer', 'long (non-negative)', 4, 'Accepted; batches are made when asked.', 0),
    ('ctx', ('cpu', 'gpu'), 'gpu', 'Context the data loader is optimized for (accepted).'),
    ('dtype', _DTYPES, 'None', 'Output data type. None means float32.'))
_AUG = _table(
    ('resize', 'int', -1, 'Resize the shorter edge to this size before other augmentations.'),
    ('rand_crop', 'boolean', False, 'Crop at a random place instead of the center.'),
    ('random_resized_crop', 'boolean', False, 'Random resized crop (ResNet on ImageNet).'),
    ('max_rotate_angle', 'int', 0, 'Rotate by a random degree in [-v, v].'),
    ('max_aspect_ratio', 'float', 0.0, 'Random aspect ratio in [1 - v, 1 + v], or '
                                       '[min_aspect_ratio, v] when that is set.'),
    ('min_aspect_ratio', 'float or None', None, 'Lower bound of the random aspect ratio.'),
    ('max_shear_ratio', 'float', 0.0, 'Random shear (x, y) -> (x + my, y), m in [-v, v].'),
    ('max_crop_size', 'int', -1, 'Crop a random square size in [min_crop_size, v].'),
    ('min_crop_size', 'int', -1, 'Crop a random square size in [v, max_crop_size].'),
    ('max_random_scale', 'float', 1.0, 'Scale by a random s in [min_random_scale, v].'),
    ('min_random_scale', 'float', 1.0, 'Scale by a random s in [v, max_random_scale].'),
    ('max_random_area', 'float', 1.0, 'Largest area fraction of random_resized_crop.'),
    ('min_random_area', 'float', 1.0, 'Smallest area fraction of random_resized_crop.'),
    ('max_img_size', 'float', 1e10, 'Largest width and height after scaling and rotating.'),
    ('min_img_size', 'float', 0.0, 'Smallest width and height after scaling and rotating.'),
    ('brightness', 'float', 0.0, 'Random brightness change in [-v, v].'),
    ('contrast', 'float', 0.0, 'Random contrast change in [-v, v].'),
    ('saturation', 'float', 0.0, 'Random saturation change in [-v, v].'),
    ('pca_noise', 'float', 0.0, 'Standard deviation of PCA based (lighting) noise.'),
    ('random_h', 'int', 0, 'Random shift in [-v, v] of H in HLS space.'),
    ('random_s', 'int', 0, 'Random shift in [-v, v] of S in HLS space.'),
    ('random_l', 'int', 0, 'Random shift in [-v, v] of L in HLS space.'),
    ('rotate', 'int', -1, 'Rotate by this angle (overrides max_rotate_angle).'),
    ('fill_value', 'int', 255, 'The value of padded pixels.'),
    ('inter_method', 'int', 1, _INTERP_DOC),
    ('pad', 'int', 0, 'Pad each side by this many pixels of fill_value.'))
_NORMALIZE = _table(
    ('mirror', 'boolean', False, 'Flip every image horizontally.'),
    ('rand_mirror', 'boolean', False, 'Flip half of the images horizontally, at random.'),
    ('mean_img', 'string', '', 'Mean image file (NDArray format); made from the data when '
                               'it does not exist.'),
    ('mean_r', 'float', 0.0, 'The mean subtracted from the R channel.'),
    ('mean_g', 'float', 0.0, 'The mean subtracted from the G channel.'),
    ('mean_b', 'float', 0.0, 'The mean subtracted from the B channel.'),
    ('mean_a', 'float', 0.0, 'The mean subtracted from the alpha channel.'),
    ('std_r', 'float', 1.0, 'The standard deviation of the R channel.'),
    ('std_g', 'float', 1.0, 'The standard deviation of the G channel.'),
    ('std_b', 'float', 1.0, 'The standard deviation of the B channel.'),
    ('std_a', 'float', 1.0, 'The standard deviation of the alpha channel.'),
    ('scale', 'float', 1.0, 'Multiply the image with a scale value.'),
    ('max_random_contrast', 'float', 0.0, 'Random contrast factor in [1 - v, 1 + v].'),
    ('max_random_illumination', 'float', 0.0, 'Random illumination shift in [-v, v].'))
_DET_PARSER = _table(
    ('path_imglist', 'string', '', 'Path to the image list (.lst): index, labels, path.'),
    ('path_imgrec', 'string', './data/imgrec.rec', 'Path to the image record file.'),
    ('aug_seq', 'string', 'det_aug_default', 'The augmenters (only det_aug_default exists).'),
    ('label_width', 'int', -1, 'Labels per image, -1 for variable label size.'),
    ('data_shape', 'Shape(tuple)', _REQ, _SHAPE_DOC),
    ('preprocess_threads', 'int', 4, _THREADS_DOC, 1),
    ('verbose', 'boolean', True, 'Log what the iterator reads.'),
    ('num_parts', 'int', 1, 'Partition the data into multiple parts.'),
    ('part_index', 'int', 0, 'The index of the part to read.'),
    ('shuffle_chunk_size', 'long (non-negative)', 0, 'The size (MB) of the shuffle chunk.', 0),
    ('shuffle_chunk_seed', 'int', 0, 'The seed for chunk shuffling.'),
    ('label_pad_width', 'int', 0, 'Pad labels to this width; 0 or -1: the widest label.'),
    ('label_pad_value', 'float', -1.0, 'The value of the label padding.'),
    ('shuffle', 'boolean', False, 'Whether to shuffle data.'),
    ('seed', 'int', 0, 'Random seed.'))
_DET_AUG = _table(
    ('resize', 'int', -1, 'Scale the shorter edge to this size first, -1 to disable.'),
    ('rand_crop_prob', 'float', 0.0, 'Probability of random cropping, <= 0 to disable.'),
    ('min_crop_scales', 'tuple of <float>', (0.0,), 'Min crop scales.'),
    ('max_crop_scales', 'tuple of <float>', (1.0,), 'Max crop scales.'),
    ('min_crop_aspect_ratios', 'tuple of <float>', (1.0,), 'Min crop aspect ratios.'),
    ('max_crop_aspect_ratios', 'tuple of <float>', (1.0,), 'Max crop aspect ratios.'),
    ('min_crop_overlaps', 'tuple of <float>', (0.0,), 'Min IOU of crop box and ground truths.'),
    ('max_crop_overlaps', 'tuple of <float>', (1.0,), 'Max IOU of crop box and ground truths.'),
    ('min_crop_sample_coverages', 'tuple of <float>', (0.0,), 'Min intersect/crop area.'),
    ('max_crop_sample_coverages', 'tuple of <float>', (1.0,), 'Max intersect/crop area.'),
    ('min_crop_object_coverages', 'tuple of <float>', (0.0,), 'Min intersect/object area.'),
    ('max_crop_object_coverages', 'tuple of <float>', (1.0,), 'Max intersect/object area.'),
    ('num_crop_sampler', 'int', 1, 'Number of crop samplers.'),
    ('crop_emit_mode', ('center', 'overlap'), 'center', 'Drop a box after a crop when its '
                                                        'center is out, or its overlap low.'),
    ('emit_overlap_thresh', 'float', 0.3, 'Overlap threshold of crop_emit_mode=overlap.'),
    ('max_crop_trials', 'Shape(tuple)', (25,), 'Crop trials of each sampler.'),
    ('rand_pad_prob', 'float', 0.0, 'Probability of random padding.'),
    ('max_pad_scale', 'float', 1.0, 'Maximum padding scale.'),
    ('max_random_hue', 'int', 0, 'Maximum random shift of H in HLS space.'),
    ('random_hue_prob', 'float', 0.0, 'Probability of a random hue shift.'),
    ('max_random_saturation', 'int', 0, 'Maximum random shift of S in HLS space.'),
    ('random_saturation_prob', 'float', 0.0, 'Probability of a random saturation shift.'),
    ('max_random_illumination', 'int', 0, 'Maximum random shift of L in HLS space.'),
    ('random_illumination_prob', 'float', 0.0, 'Probability of a random illumination shift.'),
    ('max_random_contrast', 'float', 0.0, 'Maximum random contrast change.'),
    ('random_contrast_prob', 'float', 0.0, 'Probability of a random contrast change.'),
    ('rand_mirror_prob', 'float', 0.0, 'Probability of a horizontal flip.'),
    ('fill_value', 'int', 127, 'The value of padded pixels.'),
    ('inter_method', 'int', 1, _INTERP_DOC),
    ('resize_mode', ('fit', 'force', 'shrink'), 'force', 'force: to data_shape; shrink: fit '
                                                         'inside, keep ratio; fit: also enlarge.'))
_DET_NORMALIZE = _table(
    ('mean_img', 'string', '', 'Mean image file to subtract.'),
    ('mean_r', 'float', 0.0, 'Mean of the R channel (means apply when one is > 0).'),
    ('mean_g', 'float', 0.0, 'Mean of the G channel.'),
    ('mean_b', 'float', 0.0, 'Mean of the B channel.'),
    ('mean_a', 'float', 0.0, 'Mean of the alpha channel.'),
    ('std_r', 'float', 0.0, 'Standard deviation of the R channel (applies when > 0).'),
    ('std_g', 'float', 0.0, 'Standard deviation of the G channel.'),
    ('std_b', 'float', 0.0, 'Standard deviation of the B channel.'),
    ('std_a', 'float', 0.0, 'Standard deviation of the alpha channel.'),
    ('scale', 'float', 1.0, 'Scale in color space.'))


def _parse_params(name, table, kwargs):
    """The parameters of ``table`` from ``kwargs`` (unknown keys are ignored, as MXNet does)
    and MXNet's checks of data_shape and rotate_list."""
    params = parse_iter_params(name, table, kwargs)
    shape = params['data_shape']
    if len(shape) != 3:
        raise MXNetError(f'{name}: value [{",".join(map(str, shape))}]for Parameter '
                         'data_shape has wrong dimensions, expected dimension=3')
    if 0 in shape:
        raise MXNetError(f'{name}: data_shape={shape} has a zero size')
    params['dtype'] = None if params['dtype'] == 'None' else params['dtype']
    # rotate_list is read by MXNet's augmenter from the arguments it does not know
    text = str(kwargs.get('rotate_list', '')).strip('()[] ')
    params['rotate_list'] = [int(v) for v in text.split(',') if v.strip()]
    return params


# -------------------------------------------------------------------------------------------------
# Reading records: partitions, chunks, index files, shuffles (dmlc-core's InputSplit)
# -------------------------------------------------------------------------------------------------

_MAGIC = 0xced7230a


def _scan_records(path):
    """Start offsets of the records of a RecordIO file (multi-part records once) and its
    size."""
    starts = []
    with open(path, 'rb') as f:
        size = os.fstat(f.fileno()).st_size
        pos = 0
        while pos + 8 <= size:
            f.seek(pos)
            magic, lrec = struct.unpack('<II', f.read(8))
            if magic != _MAGIC:
                raise MXNetError(f'{path}: invalid RecordIO file: no record header at byte '
                                 f'{pos}')
            length = lrec & ((1 << 29) - 1)
            if lrec >> 29 in (0, 1):
                starts.append(pos)
            pos += 8 + length + (-length % 4)
    return starts, size


def _byte_partition(starts, size, part, nparts):
    """The records of part ``part`` of ``nparts`` equal byte ranges (4-byte aligned), each
    moved to the next record start: (first record, end record) indices."""
    step = (size + nparts - 1) // nparts
    step = (step + 3) // 4 * 4
    begin, end = min(step * part, size), min(step * (part + 1), size)
    if begin == end:
        return 0, 0
    return bisect.bisect_left(starts, begin), bisect.bisect_left(starts, end)


def _chunk_bounds(starts, first, last, part_end, chunk_bytes):
    """The chunks dmlc's InputSplit reads: [first, last) records cut where a window of
    ``chunk_bytes`` holds its last record start (the window grows when it holds one)."""
    chunks, i = [], first
    while i < last:
        words = chunk_bytes // 4
        while True:
            window_end = starts[i] + words * 4
            if window_end > part_end:
                chunks.append((i, last))
                i = last
                break
            j = bisect.bisect_right(starts, window_end - 8, i, last) - 1
            if j > i:
                chunks.append((i, j))
                i = j
                break
            words = 2 * (words + 1) - 1
    return chunks


def _chunk_bytes(p, default):
    """The bytes of a chunk: ``default``, or as ``shuffle_chunk_size`` hints (at least dmlc's
    8 MB buffer)."""
    if p['shuffle_chunk_size'] > 0:
        return max(8 << 20, p['shuffle_chunk_size'] << 17)
    return default


def _check_part(part, nparts):
    if not 0 <= part < nparts:
        raise MXNetError(f'Check failed: part < nsplit: invalid input parameter for '
                         f'InputSplit::Create (part_index={part}, num_parts={nparts})')


def _check_rec_path(path, what):
    if not path:
        raise MXNetError(f'{what}: must specify image_rec (path_imgrec)')
    if os.path.isdir(path):
        raise NotSupportedError(f'path_imgrec={path!r} is a folder: give the .rec file (reading '
                                'every file of a folder is not supported)')
    if not os.path.exists(path):
        raise MXNetError(f'LocalFileSystem.GetPathInfo: {path} error: No such file or directory')


class _RecordSource:
    """The records of one part of a .rec file, in chunks (``next_batch``), as dmlc-core's
    RecordIO splitters give them: by byte chunks, or by ``n`` records with an index file
    (shuffled with ``std::mt19937(111 + seed)`` each epoch when ``shuffle``)."""

    def __init__(self, path, part, nparts, chunk_bytes, idx_path='', shuffle=False, seed=0):
        _check_part(part, nparts)
        self.path = path
        self.indexed = bool(idx_path)
        self.shuffle = shuffle and self.indexed
        if self.indexed:
            offsets = self._read_index(idx_path)
            count = len(offsets)
            step = (count + nparts - 1) // nparts
            begin, end = min(step * part, count), min(step * (part + 1), count)
            self.offsets = offsets[begin:end] if begin < count else []
            self.rng = CppRandom(111 + seed)
            self.n_overflow = 0
        else:
            starts, size = _scan_records(path)
            first, last = _byte_partition(starts, size, part, nparts)
            part_end = starts[last] if last < len(starts) else size
            self.offsets = starts
            self.chunks = _chunk_bounds(starts, first, last, part_end, chunk_bytes)
        self.reader = recordio.MXRecordIO(path, 'r')
        self.before_first()

    def _read_index(self, idx_path):
        try:
            with open(idx_path) as f:
                lines = [line.split() for line in f if line.strip()]
            return sorted(int(line[1]) for line in lines)
        except (OSError, IndexError, ValueError) as err:
            raise MXNetError(f'cannot read the index file {idx_path!r} (lines of "key<TAB>'
                             f'offset"): {err}') from None

    def before_first(self):
        """Go back to the first record (and draw a new order when shuffling)."""
        self.cursor = 0
        if self.shuffle:
            self.order = list(range(len(self.offsets)))
            self.rng.shuffle(self.order)

    def _read(self, offset):
        self.reader.handle.seek(offset)
        return self.reader.read()

    def next_batch(self, n):
        """The next records (a list of bytes), or None at the end of the part: a chunk, or
        ``n`` records with an index (fewer after a short read, to fill what is left)."""
        if not self.indexed:
            if self.cursor >= len(self.chunks):
                return None
            first, last = self.chunks[self.cursor]
            self.cursor += 1
            return [self._read(self.offsets[i]) for i in range(first, last)]
        want = n if self.n_overflow == 0 else self.n_overflow
        if self.shuffle:
            picks = self.order[self.cursor:self.cursor + want]
            if not picks:
                return None
            self.n_overflow = want - len(picks)
        else:
            last = min(self.cursor + want, len(self.offsets))
            self.n_overflow = self.cursor + want - last
            picks = range(self.cursor, last)
            if not picks:
                return None
        self.cursor += len(picks)
        return [self._read(self.offsets[i]) for i in picks]


def _read_image_list(path, label_width):
    """{image index: labels} of a .lst file; ``label_width`` -1 takes every field between the
    index and the path."""
    labels = {}
    try:
        with open(path) as f:
            lines = [line.split() for line in f if line.strip()]
    except OSError as err:
        raise MXNetError(f'cannot read the image list {path!r}: {err}') from None
    for fields in lines:
        values = fields[1:-1] if label_width < 0 else fields[1:1 + label_width]
        if label_width > 0 and len(fields) < label_width + 1 or not values:
            raise MXNetError(f'Bad ImageList format in {path!r}: {" ".join(fields)!r} needs an '
                             f'index and {label_width if label_width > 0 else "some"} labels')
        try:
            labels[int(float(fields[0]))] = np.array([float(v) for v in values], _F32)
        except ValueError:
            raise MXNetError(f'Bad ImageList format in {path!r}: {" ".join(fields)!r}') from None
    return labels


def _unpack(buf, channels, what):
    """(image id, label array or None, header label, BGR image) of a record."""
    header, payload = recordio.unpack(buf)
    flag = {1: 0, 3: 1, 4: -1}.get(channels)
    if flag is None:
        raise MXNetError(f'{what}: Invalid output shape: data_shape must have 1, 3 or 4 '
                         f'channels, got {channels}')
    img = decode(payload, flag, to_rgb=False, what=what)
    if channels == 4 and img.shape[2] != 4:
        raise MXNetError(f'{what}: Invalid image with index {header.id}. Expected 4 channels, '
                         f'got {img.shape[2]}')
    label = header.label if header.flag > 0 else None
    return header.id, label, header.label, img


def _to_rgb(img):
    """OpenCV's BGR(A) to RGB(A), (H, W, C) to (C, H, W)."""
    if img.shape[2] >= 3:
        img = img[:, :, [2, 1, 0] + list(range(3, img.shape[2]))]
    return img.transpose(2, 0, 1)


def _load_mean(path, shape):
    _, arrays = loads_arrays(read_file(path), path)
    if len(arrays) != 1:
        raise MXNetError(f'Invalid mean image file format: {path!r} holds {len(arrays)} arrays, '
                         'expected 1')
    mean = np.asarray(arrays[0], _F32)
    if mean.shape != tuple(shape):
        raise MXNetError(f'the mean image {path!r} has shape {mean.shape}, the images '
                         f'{tuple(shape)}; delete it to compute it again')
    return mean


def _save_mean(path, mean, count, verbose):
    mean = (mean * _F32(1.0 / count)).astype(_F32)
    atomic_write(path, dumps_arrays(['mean_img'], [mean]))
    if verbose:
        _LOG.info('Save mean image to %s..', path)
    return mean


def _record_label(p, labels, what, image_id, label, header_label):
    """The label of a record: from the image list, the record's label array, or its header."""
    if labels is not None:
        if image_id not in labels:
            raise MXNetError(f'{what}: fail to find imagelabel for id {image_id} in '
                             f'{p["path_imglist"]!r}')
        return labels[image_id]
    if label is not None:
        if len(label) != p['label_width']:
            raise MXNetError(f'{what}: rec file provide {len(label)}-dimensional label but '
                             f'label_width is set to {p["label_width"]}')
        return label
    if p['label_width'] != 1:
        raise MXNetError(f'{what}: label_width must be 1 unless an imglist is provided or the '
                         'rec file is packed with multi dimensional label '
                         f'(label_width={p["label_width"]})')
    return np.array([header_label], _F32)


# -------------------------------------------------------------------------------------------------
# ImageRecordIter (MXNet's ImageRecordIOParser2)
# -------------------------------------------------------------------------------------------------

class _Parser2:
    """Parses chunks of records into batches as ImageRecordIOParser2: the first images of a
    chunk go straight into the batch, the rest wait in ``temp``; ``round_batch`` fills the
    last batch from the start and the next epoch goes on from there."""

    def __init__(self, p, dtype, what, ctx):
        self.p, self.dtype, self.what, self.ctx = p, dtype, what, ctx
        self.batch_size = p['batch_size']
        self.shape = p['data_shape']
        self.rng = CppRandom(111)                   # the first preprocessing thread's
        self.shuffle_rng = CppRandom(111 + p['seed'])
        self.aug = DefaultAugmenter(p, p['rotate_list'])
        self.labels = _read_image_list(p['path_imglist'], p['label_width']) \
            if p['path_imglist'] else None
        _check_rec_path(p['path_imgrec'], what)
        if p['verbose']:
            _LOG.info('ImageRecordIOParser2: %s, use 1 threads for decoding..', p['path_imgrec'])
        self.legacy_shuffle = p['shuffle'] and not p['path_imgidx']
        self.source = _RecordSource(p['path_imgrec'], p['part_index'], p['num_parts'],
                                    _chunk_bytes(p, 64 << 20), p['path_imgidx'], p['shuffle'],
                                    p['seed'])
        self.data = np.zeros((self.batch_size,) + self.shape, dtype)
        self.label = np.zeros((self.batch_size, p['label_width']), _F32)
        self.temp, self.order = [], []
        self.n_parsed, self.inst_index, self.overflow, self.pad = 0, 0, False, 0
        self.mean = None
        if dtype != np.uint8 and p['mean_img']:
            if os.path.exists(p['mean_img']):
                self.mean = _load_mean(p['mean_img'], self.shape)
            else:
                self._create_mean()

    def _create_mean(self):
        if self.dtype != _F32:
            raise NotSupportedError(f'{self.what} cannot create the mean image '
                                    f'{self.p["mean_img"]!r} (MXNet fails too): create it with '
                                    'ImageRecordIter')
        if self.p['verbose']:
            _LOG.info('Cannot find %s: create mean image, this will take some time...',
                      self.p['mean_img'])
        total, count = None, 0
        while True:
            records = self.source.next_batch(self.batch_size)
            if records is None:
                break
            self.order = []
            self._parse_chunk(self.batch_size, records)
            for i in self.order:
                image = self.temp[i][0]
                total = image.copy() if total is None else total + image
                count += 1
        if count == 0:
            raise MXNetError(f'{self.what}: no image to make the mean image of')
        self.mean = _save_mean(self.p['mean_img'], total, count, self.p['verbose'])
        self.before_first()

    def before_first(self):
        if not self.p['round_batch'] or not self.overflow:
            self.n_parsed = 0
            self.source.before_first()
        else:
            self.overflow = False

    def next(self):
        """Fill the next batch; False at the end of the epoch."""
        self.pad = 0
        if self.overflow:
            return False
        current = 0
        while current < self.batch_size:
            if self.n_parsed == 0:
                records = self.source.next_batch(self.batch_size)
                if records is not None:
                    self.order, self.inst_index = [], 0
                    # a shuffled chunk goes to temp whole (numbered from batch_size on)
                    start = self.batch_size if self.legacy_shuffle else current
                    n_out = self._parse_chunk(start, records)
                    if self.legacy_shuffle:
                        self.shuffle_rng.shuffle(self.order)
                    self.n_parsed = len(self.order)
                else:
                    if current == 0:
                        return False
                    if self.overflow:
                        raise MXNetError(f'{self.what}: number of input images must be bigger '
                                         f'than the batch size ({self.batch_size})')
                    if self.p['round_batch']:
                        self.overflow = True
                        self.source.before_first()
                    else:
                        current = self.batch_size
                    self.pad, n_out = self.batch_size - current, 0
            else:
                n_out = min(self.n_parsed, self.batch_size - current)
                for i in range(n_out):
                    image, label = self.temp[self.order[self.inst_index + i]]
                    self.data[current + i], self.label[current + i] = image, label
                self.n_parsed -= n_out
                self.inst_index += n_out
            current += n_out
        return True

    # MXDataIter's handle
    def get_data(self):
        return nd.array(self.data, ctx=self.ctx, dtype=self.data.dtype)

    def get_label(self):
        label = self.label[:, 0] if self.label.shape[1] == 1 else self.label    # (N,), as MXNet
        return nd.array(label, ctx=self.ctx, dtype=_F32)

    def get_pad(self):
        return self.pad

    def get_index(self):
        return np.zeros(self.batch_size, np.uint64)     # MXNet leaves them 0

    def _parse_chunk(self, current, records):
        """Process ``records``: those numbered below batch_size go to the batch, the others
        to ``temp`` (their places in ``order``). Returns how many went to the batch."""
        self.temp = []
        idx = current
        for buf in records:
            image, label = self._process(buf, idx)
            if idx < self.batch_size:
                self.data[idx], self.label[idx] = image, label
            else:
                self.order.append(len(self.temp))
                self.temp.append((image, label))
            idx += 1
        return min(self.batch_size, idx) - current

    def _process(self, buf, idx):
        """Decode, augment and normalize one record: ((C, H, W) image, label)."""
        p, rng = self.p, self.rng
        if p['seed_aug'] is not None:
            rng.seed(idx + p['seed_aug'] + 111)
        image_id, label, header_label, img = _unpack(buf, self.shape[0], self.what)
        label = _record_label(p, self.labels, self.what, image_id, label, header_label)
        img = self.aug.process(img, rng)
        mirrored = (p['rand_mirror'] and rng.bernoulli(0.5)) or p['mirror']
        if self.dtype != np.uint8:
            mrc, mri, scale = (_F32(p[k]) for k in ('max_random_contrast',
                                                    'max_random_illumination', 'scale'))
            contrast = (rng.canonical() * mrc * _F32(2) - mrc + _F32(1)) * scale
            illumination = (rng.canonical() * mri * _F32(2) - mri) * scale
        img = _to_rgb(img)
        if img.shape != self.shape:
            raise MXNetError(f'{self.what}: an augmented image has shape {img.shape}, not '
                             f'data_shape {self.shape}')
        channels = 'rgba'[:img.shape[0]]
        if self.dtype == np.int8:
            mean = np.floor(np.abs(self.mean) + 0.5) * np.sign(self.mean) \
                if self.mean is not None else _channel_values(p, 'mean_', channels, True)
            img = np.clip(img.astype(np.int32) - mean, -128, 127).astype(np.int8)
        elif self.dtype != np.uint8:
            std = _channel_values(p, 'std_', channels)
            mean = self.mean if self.mean is not None else _channel_values(p, 'mean_', channels)
            img = (img.astype(_F32) - mean) * (contrast / std) + illumination / std
        return (img[:, :, ::-1] if mirrored else img), label


def _channel_values(p, prefix, channels, rounded=False):
    values = np.array([p[prefix + c] for c in channels], _F32)[:, None, None]
    # std::round: halves away from zero
    return np.floor(np.abs(values) + 0.5) * np.sign(values) if rounded else values


# -------------------------------------------------------------------------------------------------
# The _v1 and detection iterators: image by image, then batched (MXNet's BatchLoader)
# -------------------------------------------------------------------------------------------------

class _InstanceStream:
    """Images one at a time, as MXNet's ImageRecordIter (v1) and ImageDetRecordIter: each
    8 MB chunk is processed in file order, then handed out (shuffled when ``shuffle``)."""

    def __init__(self, p, magic, process):
        self.process = process
        self.rng = CppRandom(magic)                 # the first preprocessing thread's
        self.shuffle_rng = CppRandom(magic + p['seed'])
        self.shuffle = p['shuffle']
        self.source = _RecordSource(p['path_imgrec'], p['part_index'], p['num_parts'],
                                    _chunk_bytes(p, 8 << 20))
        self.items, self.cursor = [], 0

    def before_first(self):
        self.source.before_first()
        self.items, self.cursor = [], 0

    def next(self):
        """((image, label), id) of the next image, or None at the end."""
        while self.cursor >= len(self.items):
            records = self.source.next_batch(0)
            if records is None:
                return None
            self.items = [self.process(buf, self.rng) for buf in records]
            if self.shuffle:
                self.shuffle_rng.shuffle(self.items)
            self.cursor = 0
        self.cursor += 1
        return self.items[self.cursor - 1]


class _Normalizer:
    """MXNet's ImageNormalizeIter (v1: mean, contrast, illumination, mirror, scale / std) or
    ImageDetNormalizeIter (det: means when one is > 0, stds when > 0, scale), with its mean
    image made from the data when the file does not exist."""

    def __init__(self, p, base, det):
        self.p, self.base, self.det = p, base, det
        self.rng = CppRandom(p['seed'])            # v1's contrast, illumination and mirror
        self.mean = None
        if p['mean_img']:
            if os.path.exists(p['mean_img']):
                self.mean = _load_mean(p['mean_img'], p['data_shape'])
            else:
                self._create_mean()

    def _create_mean(self):
        first = self.next()
        if first is None:
            raise MXNetError('input iterator failed: no image to make the mean image of')
        total, count = first[0][0].copy(), 1
        item = self.next()
        while item is not None:
            total, count = total + item[0][0], count + 1
            item = self.next()
        self.mean = _save_mean(self.p['mean_img'], total, count, self.p['verbose'])
        self.before_first()

    def before_first(self):
        self.base.before_first()

    def next(self):
        item = self.base.next()
        if item is None:
            return None
        (img, label), image_id = item
        p, img = self.p, img.astype(_F32)
        channels = 'rgba'[:img.shape[0]]
        if self.det:
            if max(p['mean_r'], p['mean_g'], p['mean_b'], p['mean_a']) > 0:
                img = img - _channel_values(p, 'mean_', channels)
            elif self.mean is not None:
                img = img - self.mean
            std = _channel_values(p, 'std_', channels)
            img = np.where(std > 0, img / np.where(std > 0, std, 1), img)
            return (img * _F32(p['scale']), label), image_id
        mrc, mri = _F32(p['max_random_contrast']), _F32(p['max_random_illumination'])
        contrast = self.rng.canonical() * mrc * _F32(2) - mrc + _F32(1)
        illumination = self.rng.canonical() * mri * _F32(2) - mri
        flip = (p['rand_mirror'] and self.rng.bernoulli(0.5)) or p['mirror']
        mean = self.mean if self.mean is not None else _channel_values(p, 'mean_', channels)
        img = ((img - mean) * contrast + illumination) * _F32(p['scale']) / \
            _channel_values(p, 'std_', channels)
        return ((img[:, :, ::-1] if flip else img), label), image_id


class _V1Pipeline:
    """ImageRecordIter_v1: records one by one (v1 parser), normalized (float) and batched."""

    def __init__(self, p, what, uint8):
        self.p, self.what = p, what
        _check_rec_path(p['path_imgrec'], what)
        self.labels = _read_image_list(p['path_imglist'], p['label_width']) \
            if p['path_imglist'] else None
        self.aug = DefaultAugmenter(p, p['rotate_list'])
        stream = _InstanceStream(p, 111, self._process)
        base = stream if uint8 else _Normalizer(p, stream, det=False)
        self.loader = BatchLoader(base, p['batch_size'], p['round_batch'], what)

    def _process(self, buf, rng):
        image_id, label, header_label, img = _unpack(buf, self.p['data_shape'][0], self.what)
        img = _to_rgb(self.aug.process(img, rng))
        label = _record_label(self.p, self.labels, self.what, image_id, label, header_label)
        return (img, label[0] if len(label) == 1 else label), image_id


class _DetPipeline:
    """ImageDetRecordIter: records one by one, det-augmented, labels padded, normalized and
    batched."""

    def __init__(self, p, what):
        self.p, self.what = p, what
        _check_rec_path(p['path_imgrec'], what)
        _check_part(p['part_index'], p['num_parts'])
        self.labels = _read_image_list(p['path_imglist'], p['label_width']) \
            if p['path_imglist'] else None
        self.aug = DetAugmenter(p)
        self.pad_width = self._label_pad_width()
        stream = _InstanceStream(p, 233, self._process)
        self.loader = BatchLoader(_Normalizer(p, stream, det=True), p['batch_size'],
                                  p['round_batch'], what)

    def _label_pad_width(self):
        """The widest raw label (MXNet reads every record for it), or label_pad_width."""
        p = self.p
        if self.labels is not None:
            widest = max((len(v) for v in self.labels.values()), default=0)
        else:
            widest = 0
            source = _RecordSource(p['path_imgrec'], p['part_index'], p['num_parts'], 8 << 20)
            records = source.next_batch(0)
            while records is not None:
                for buf in records:
                    header, _ = recordio.unpack(buf)
                    if header.flag <= 0:
                        raise MXNetError(f'{self.what}: Not enough label packed in img_list or '
                                         f'rec file (record {header.id} has none)')
                    self._check_width(header.flag)
                    widest = max(widest, header.flag)
                records = source.next_batch(0)
        if widest > p['label_pad_width'] > 0:
            raise MXNetError(f'ImageDetRecordIOParser: label_pad_width: {p["label_pad_width"]} '
                             f'smaller than estimated width: {widest}')
        return max(widest, p['label_pad_width'])

    def _check_width(self, width):
        if self.p['label_width'] > 0 and width != self.p['label_width']:
            raise MXNetError(f'{self.what}: rec file provide {width}-dimensional label but '
                             f'label_width is set to {self.p["label_width"]}')

    def _process(self, buf, rng):
        image_id, label, _, img = _unpack(buf, self.p['data_shape'][0], self.what)
        if self.labels is not None:
            if image_id not in self.labels:
                raise MXNetError(f'{self.what}: fail to find imagelabel for id {image_id}')
            label = self.labels[image_id]
        elif label is None:
            raise MXNetError(f'{self.what}: Not enough label packed in img_list or rec file '
                             f'(record {image_id} has none)')
        else:
            self._check_width(len(label))
        img, label = self.aug.process(img, label, rng)
        rows, cols, channels = img.shape
        out = np.zeros(self.p['data_shape'], _F32)
        out[:, :rows, :cols] = _to_rgb(img)
        padded = np.full(self.pad_width + 4, self.p['label_pad_value'], _F32)
        padded[:4] = channels, rows, cols, len(label)
        padded[4:4 + len(label)] = label
        return (out, padded), image_id


# -------------------------------------------------------------------------------------------------
# The iterators
# -------------------------------------------------------------------------------------------------

class _RecordIterBase(MXDataIter):
    """An MXDataIter over one of the pipelines above; all arguments are keywords."""

    _PARAMS = ()
    _AUG_SEQ = 'aug_default'

    def __init__(self, *args, **kwargs):
        name = type(self).__name__
        if args:
            raise TypeError(f'{name} can only accept keyword arguments')
        params = _parse_params(name, self._PARAMS, kwargs)
        if params['aug_seq'] != self._AUG_SEQ:
            raise NotSupportedError(f'{name}: aug_seq={params["aug_seq"]!r} is not supported; '
                                    f'the augmenter is {self._AUG_SEQ!r}')
        if params['batch_size'] == 0:
            raise MXNetError(f'{name}: batch_size must be positive')
        path = params['path_imgrec']
        if params['shuffle_chunk_size'] > 0 and os.path.isfile(path):
            parts = -(-os.path.getsize(path) * 1.1 //
                      (params['num_parts'] * (params['shuffle_chunk_size'] << 20)))
            if parts > 1:
                raise NotSupportedError(f'{name}: shuffle_chunk_size='
                                        f'{params["shuffle_chunk_size"]} splits {path!r} into '
                                        f'{int(parts)} shuffled chunks, which is not supported')
        super().__init__(self._make_handle(params, name), **kwargs)

    def _make_handle(self, params, name):
        raise NotImplementedError


class ImageRecordIter(_RecordIterBase):
    """Iterates on image RecordIO files (``.rec``, made by ``tools/im2rec.py``), as MXNet's
    C++ ``ImageRecordIter``: decodes, augments, normalizes and batches the images.

    Batches hold ``data`` (batch_size, C, H, W) (float32, or ``dtype`` 'uint8'/'int8') and
    ``softmax_label`` (batch_size,) or (batch_size, label_width).

    Examples
    --------
    >>> data_iter = mx.io.ImageRecordIter(path_imgrec='./sample.rec', data_shape=(3, 227, 227),
    ...                                   batch_size=4, resize=256)
    >>> batch = data_iter.next()
    >>> batch.data[0].shape
    (4, 3, 227, 227)
    """

    _PARAMS = _PARSER + _RECORD + _BATCH + _PREFETCH + _AUG + _NORMALIZE

    def _dtype(self, params, name):
        dtype = params['dtype'] or 'float32'
        if dtype not in ('float32', 'uint8', 'int8'):
            raise MXNetError(f'{name}: unknown dtype for ImageRecordIter2: {dtype!r} (float32, '
                             'uint8 or int8)')
        return np.dtype(dtype)

    def _make_handle(self, params, name):
        ctx = cpu(0) if params['device_id'] == -1 else cpu_pinned(0)
        return _Parser2(params, self._dtype(params, name).type, name, ctx)


class ImageRecordUInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` with uint8 data (deprecated in MXNet: use
    ``ImageRecordIter(dtype='uint8')``); no mean, std or scale is applied."""

    def _dtype(self, params, name):
        return np.dtype(np.uint8)


class ImageRecordInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` with int8 data (deprecated in MXNet: use
    ``ImageRecordIter(dtype='int8')``): pixel minus the rounded mean, saturated."""

    def _dtype(self, params, name):
        return np.dtype(np.int8)


def _check_native_dtype(params, name, native):
    if params['dtype'] not in (None, native):
        raise MXNetError(f'{name}: data type do not match specified type: this iterator makes '
                         f'{native or "no conversion"} data, dtype={params["dtype"]!r} fails')


class ImageRecordIter_v1(_RecordIterBase):
    """MXNet's deprecated first ``ImageRecordIter``: the same augmentations, read image by
    image in 8 MB chunks (no index file), normalized by its own random generator, and
    ``index`` gives the image ids of a batch."""

    _PARAMS = [t for t in _PARSER if t.name not in ('path_imgidx', 'seed_aug')] + _RECORD + \
        _BATCH + _PREFETCH + _AUG + _NORMALIZE

    def _make_handle(self, params, name):
        _check_native_dtype(params, name, 'float32')
        return _V1Pipeline(params, name, uint8=False).loader


class ImageRecordUInt8Iter_v1(ImageRecordIter_v1):
    """``ImageRecordIter_v1`` with uint8 data: no mean, std, scale or mirror."""

    def _make_handle(self, params, name):
        _check_native_dtype(params, name, None)
        return _V1Pipeline(params, name, uint8=True).loader


class ImageDetRecordIter(_RecordIterBase):
    """Iterates on detection datasets packed in RecordIO, as MXNet's ``ImageDetRecordIter``.

    A record's label is ``[header_width, object_width, (extra header), (id, xmin, ymin, xmax,
    ymax, extra...) per object]`` with coordinates in [0, 1]. A batch's label is (batch_size,
    4 + label_pad_width): ``[channels, height, width, label length, label...]`` padded with
    ``label_pad_value``; ``label_pad_width`` defaults to the widest label of the data. Objects
    with xmax <= xmin or ymax <= ymin are dropped, as MXNet does.
    """

    _PARAMS = _DET_PARSER + _BATCH + _PREFETCH + _DET_AUG + _DET_NORMALIZE
    _AUG_SEQ = 'det_aug_default'

    def _make_handle(self, params, name):
        _check_native_dtype(params, name, 'float32')
        return _DetPipeline(params, name).loader


for _cls in (ImageRecordIter, ImageRecordUInt8Iter, ImageRecordInt8Iter, ImageRecordIter_v1,
             ImageRecordUInt8Iter_v1, ImageDetRecordIter):
    # the Parameters section, from the table, goes before the Examples
    _doc, _sep, _examples = _cls.__doc__.partition('\n    Examples\n')
    _params = build_param_doc([t.name for t in _cls._PARAMS], [t.describe() for t in _cls._PARAMS],
                              [t.doc for t in _cls._PARAMS])
    _cls.__doc__ = (_doc.rstrip() + '\n\n    ' + _params.rstrip().replace('\n', '\n    ') +
                    '\n' + (_sep + _examples if _sep else '\n    '))
