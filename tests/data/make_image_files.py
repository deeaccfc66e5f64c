"""Write the fixtures of tests/test_image.py with MXNet 1.9.1 (the oracle).

Run from the repository root with the oracle's python::

    .oracle/bin/python tests/data/make_image_files.py

MXNet has no image encoder of its own (it needs Python's cv2), so the PNG and JPEG files are
encoded here: PNG with zlib, JPEG with the small baseline encoder below (its own quantisation
and Huffman tables; the decoders read them from the file). Everything else is what MXNet 1.9.1
computes. It writes (all in tests/data):

- ``image-*.png`` and ``image-*.jpg``: tiny images in several PNG colour types and JPEG
  samplings, one JPEG with an EXIF orientation;
- ``image-decoded.npz``: ``mx.image.imdecode`` of each with flag 0 and 1 (and some with
  to_rgb=0 and through ``imread``);
- ``image-ops.npz``: ``imresize`` with every interpolation on uint8 and float32 images,
  ``nd.image.resize`` of a batch, ``copyMakeBorder`` with every border type, the colour
  operators at fixed factors, ``imrotate``;
- ``image-augment.npz`` and ``image-augment.json``: every augmenter's output with fixed seeds
  of Python's ``random`` and numpy's generator, its ``dumps()``, ``CreateAugmenter``'s lists;
- ``image-records.rec/.idx``, ``image-list.lst``, ``image-det.rec/.idx``: RecordIO files and
  an image list (paths relative to tests/data), and ``image-iter.npz``: the batches that
  ``ImageIter`` and ``ImageDetIter`` read from them;
- ``image-transforms.json``: the operators and attributes of the graphs of
  ``gluon.data.vision.transforms`` (tests/test_data_vision.py).
"""
import json
import os
import random
import struct
import zlib

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


# -------------------------------------------------------------------------------------------------
# PNG
# -------------------------------------------------------------------------------------------------

def _chunk(kind, data):
    body = kind + data
    return struct.pack('>I', len(data)) + body + struct.pack('>I', zlib.crc32(body) & 0xffffffff)


def encode_png(pixels, color_type, bit_depth=8, palette=None, transparency=None):
    """PNG bytes of ``pixels`` (H, W[, samples]) with filter type 0 on every row."""
    h, w = pixels.shape[:2]
    samples = pixels.reshape(h, w, -1)
    if bit_depth == 16:
        rows = samples.astype('>u2').reshape(h, -1).view(np.uint8)
    else:
        rows = samples.astype(np.uint8).reshape(h, -1)
    raw = b''.join(b'\x00' + rows[i].tobytes() for i in range(h))
    out = b'\x89PNG\r\n\x1a\n' + _chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, bit_depth,
                                                             color_type, 0, 0, 0))
    if palette is not None:
        out += _chunk(b'PLTE', np.asarray(palette, np.uint8).tobytes())
    if transparency is not None:
        out += _chunk(b'tRNS', np.asarray(transparency, np.uint8).tobytes())
    return out + _chunk(b'IDAT', zlib.compress(raw, 9)) + _chunk(b'IEND', b'')


# -------------------------------------------------------------------------------------------------
# A baseline JPEG encoder (sequential DCT, Huffman)
# -------------------------------------------------------------------------------------------------

_ZIGZAG = sorted(((u, v) for u in range(8) for v in range(8)),
                 key=lambda p: (p[0] + p[1], p[1] if (p[0] + p[1]) % 2 == 0 else p[0]))
_DCT = np.array([[(np.sqrt(0.5) if u == 0 else 1) * 0.5 * np.cos((2 * x + 1) * u * np.pi / 16)
                  for x in range(8)] for u in range(8)])


def _quant_table(scale):
    return np.array([[min(255, max(1, round((1 + u + v) * scale))) for v in range(8)]
                     for u in range(8)])


def _huffman(symbols, length):
    """A canonical Huffman table giving every symbol a code of ``length`` bits."""
    bits = [0] * 16
    bits[length - 1] = len(symbols)
    codes = {s: (i, length) for i, s in enumerate(symbols)}
    return bits, list(symbols), codes


_DC = _huffman(list(range(12)), 4)
_AC = _huffman([0x00, 0xF0] + [(r << 4) | s for r in range(16) for s in range(1, 11)], 8)


class _Bits:
    def __init__(self):
        self.out, self.acc, self.n = bytearray(), 0, 0

    def put(self, value, n):
        for i in range(n - 1, -1, -1):
            self.acc = (self.acc << 1) | ((value >> i) & 1)
            self.n += 1
            if self.n == 8:
                self.out.append(self.acc)
                if self.acc == 0xFF:
                    self.out.append(0)          # byte stuffing
                self.acc, self.n = 0, 0

    def flush(self):
        if self.n:
            self.put((1 << (8 - self.n)) - 1, 8 - self.n)
        return bytes(self.out)


def _category(v):
    return int(abs(v)).bit_length()


def _put_value(bits, v, size):
    bits.put(v if v >= 0 else v + (1 << size) - 1, size)


def _encode_block(bits, block, q, prev_dc):
    coef = np.round((_DCT @ (block - 128.0) @ _DCT.T) / q).astype(int)
    zz = [coef[u, v] for u, v in _ZIGZAG]
    diff = zz[0] - prev_dc
    size = _category(diff)
    bits.put(*_DC[2][size])
    _put_value(bits, diff, size)
    run = 0
    for v in zz[1:]:
        if v == 0:
            run += 1
            continue
        while run > 15:
            bits.put(*_AC[2][0xF0])
            run -= 16
        size = _category(v)
        bits.put(*_AC[2][(run << 4) | size])
        _put_value(bits, v, size)
        run = 0
    if run:
        bits.put(*_AC[2][0x00])
    return zz[0]


def _segment(marker, data):
    return struct.pack('>BBH', 0xFF, marker, len(data) + 2) + data


def encode_jpeg(pixels, subsample=True, quality_scale=2.0, exif_orientation=None):
    """Baseline JPEG bytes of uint8 (H, W, 3) RGB or (H, W) grey pixels; colour images in
    YCbCr with 4:2:0 (``subsample``) or 4:4:4 sampling."""
    h, w = pixels.shape[:2]
    grey = pixels.ndim == 2
    f = pixels.astype(np.float64)
    if grey:
        planes = [f]
        sampling = [(1, 1)]
    else:
        r, g, b = f[..., 0], f[..., 1], f[..., 2]
        planes = [0.299 * r + 0.587 * g + 0.114 * b,
                  -0.168736 * r - 0.331264 * g + 0.5 * b + 128,
                  0.5 * r - 0.418688 * g - 0.081312 * b + 128]
        sampling = [(2, 2), (1, 1), (1, 1)] if subsample else [(1, 1)] * 3
    hmax = max(s[0] for s in sampling)
    mcu = 8 * hmax
    ph, pw = -(-h // mcu) * mcu, -(-w // mcu) * mcu
    padded = [np.pad(p, ((0, ph - h), (0, pw - w)), mode='edge') for p in planes]
    comps = []
    for p, (sh, sv) in zip(padded, sampling):
        factor = hmax // sh
        if factor > 1:
            p = p.reshape(ph // factor, factor, pw // factor, factor).mean(axis=(1, 3))
        comps.append(p)
    tables = [_quant_table(quality_scale), _quant_table(quality_scale * 1.5)]
    bits, prev = _Bits(), [0] * len(comps)
    for my in range(ph // mcu):
        for mx_ in range(pw // mcu):
            for k, (p, (sh, sv)) in enumerate(zip(comps, sampling)):
                q = tables[min(k, 1)]
                for by in range(sv):
                    for bx in range(sh):
                        y0, x0 = (my * sv + by) * 8, (mx_ * sh + bx) * 8
                        prev[k] = _encode_block(bits, p[y0:y0 + 8, x0:x0 + 8], q, prev[k])
    data = bits.flush()
    out = b'\xff\xd8' + _segment(0xE0, b'JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00')
    if exif_orientation is not None:
        tiff = b'II*\x00' + struct.pack('<I', 8) + struct.pack('<H', 1) + \
            struct.pack('<HHIHH', 0x0112, 3, 1, exif_orientation, 0) + struct.pack('<I', 0)
        out += _segment(0xE1, b'Exif\x00\x00' + tiff)
    for t, q in enumerate(tables[:len(comps) if grey else 2]):
        out += _segment(0xDB, bytes([t]) + bytes(int(q[u, v]) for u, v in _ZIGZAG))
    sof = struct.pack('>BHHB', 8, h, w, len(comps))
    for k, (sh, sv) in enumerate(sampling):
        sof += bytes([k + 1, (sh << 4) | sv, min(k, 1)])
    out += _segment(0xC0, sof)
    for cls, table in ((0, _DC), (1, _AC)):
        for t in range(1 if grey else 2):
            out += _segment(0xC4, bytes([(cls << 4) | t] + table[0] + table[1]))
    sos = bytes([len(comps)]) + b''.join(bytes([k + 1, (min(k, 1) << 4) | min(k, 1)])
                                         for k in range(len(comps))) + b'\x00\x3f\x00'
    return out + _segment(0xDA, sos) + data + b'\xff\xd9'


# -------------------------------------------------------------------------------------------------
# Images
# -------------------------------------------------------------------------------------------------

def smooth_image(h, w, seed):
    """A smooth colour image (JPEG-friendly) with some edges."""
    rs = np.random.RandomState(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([128 + 100 * np.sin(x / 3.0 + seed), 128 + 100 * np.cos(y / 2.5),
                    (x * 17 + y * 11) % 256], axis=-1)
    img += rs.uniform(-10, 10, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def write_images():
    """The image files, by name; returns {name: bytes}."""
    rs = np.random.RandomState(7)
    rgb = rs.randint(0, 256, (6, 9, 3)).astype(np.uint8)
    rgb[0, :3] = [[10, 10, 10], [0, 0, 0], [255, 255, 255]]       # grey pixels stay exact
    alpha = rs.randint(0, 256, (6, 9, 1)).astype(np.uint8)
    grey = rs.randint(0, 256, (5, 7)).astype(np.uint8)
    palette = rs.randint(0, 256, (4, 3))
    files = {
        'image-rgb.png': encode_png(rgb, 2),
        'image-rgba.png': encode_png(np.concatenate([rgb, alpha], axis=2), 6),
        'image-grey.png': encode_png(grey, 0),
        'image-grey-alpha.png': encode_png(np.stack([grey, grey[::-1]], axis=-1), 4),
        'image-grey16.png': encode_png(rs.randint(0, 65536, (4, 5)), 0, 16),
        'image-palette.png': encode_png(rs.randint(0, 4, (5, 6)), 3, palette=palette,
                                        transparency=[255, 0]),
        'image-rgb16.png': encode_png(rs.randint(0, 65536, (3, 4, 3)), 2, 16),
        'image-420.jpg': encode_jpeg(smooth_image(13, 18, 1)),
        'image-444.jpg': encode_jpeg(smooth_image(11, 10, 2), subsample=False),
        'image-grey.jpg': encode_jpeg(smooth_image(9, 12, 3)[..., 1]),
        'image-exif6.jpg': encode_jpeg(smooth_image(8, 16, 4), subsample=False,
                                       exif_orientation=6),
    }
    for name, data in files.items():
        with open(path(name), 'wb') as f:
            f.write(data)
    return files


def write_decoded(files):
    out = {}
    for name, data in files.items():
        for flag in (0, 1):
            out[f'{name}:{flag}'] = mx.image.imdecode(data, flag=flag).asnumpy()
    for name in ('image-rgba.png', 'image-420.jpg'):
        out[f'{name}:bgr'] = mx.image.imdecode(files[name], to_rgb=0).asnumpy()
        out[f'{name}:imread'] = mx.image.imread(path(name), flag=0).asnumpy()
    np.savez_compressed(path('image-decoded.npz'), **out)


# -------------------------------------------------------------------------------------------------
# Operators: resize, borders, colour, rotation
# -------------------------------------------------------------------------------------------------

RESIZES = [(4, 3), (11, 9), (5, 10), (3, 6), (2, 2), (16, 12)]     # (w, h) of a 6 x 8 image


def write_ops():
    rs = np.random.RandomState(3)
    img = rs.randint(0, 256, (6, 8, 3)).astype(np.uint8)
    out = {'img': img}
    for w, h in RESIZES:     # one array per size: the five interpolations stacked
        out[f'imresize_{w}x{h}_u8'] = np.stack([mx.image.imresize(
            mx.nd.array(img, dtype='uint8'), w, h, interp=interp).asnumpy()
            for interp in range(5)])
    w, h = RESIZES[1]
    out[f'imresize_{w}x{h}_f32'] = np.stack([mx.image.imresize(
        mx.nd.array(img, dtype='float32') * 0.9 + 3, w, h, interp=interp).asnumpy()
        for interp in range(5)])
    batch = rs.randint(0, 256, (2, 5, 7, 3)).astype(np.uint8)
    out['batch'] = batch
    out['resize_batch'] = np.stack([mx.nd.image.resize(
        mx.nd.array(batch, dtype='uint8'), size=(4, 9), interp=interp).asnumpy()
        for interp in range(5)])
    out['resize_keep'] = mx.nd.image.resize(mx.nd.array(batch, dtype='uint8'), size=4,
                                            keep_ratio=True, interp=2).asnumpy()
    small = img[:3, :4]
    for kind in range(5):
        out[f'border_{kind}'] = mx.image.copyMakeBorder(
            mx.nd.array(small, dtype='uint8'), 5, 1, 9, 2, type=kind).asnumpy()
    out['border_values'] = mx.image.copyMakeBorder(mx.nd.array(small, dtype='uint8'), 1, 2, 0,
                                                   1, type=0, values=(7, 300, -4)).asnumpy()
    out['border_value'] = mx.image.copyMakeBorder(mx.nd.array(small, dtype='float32'), 1, 0, 2,
                                                  1, type=16, value=2.5).asnumpy()
    out['border_short_values'] = mx.image.copyMakeBorder(
        mx.nd.array(small, dtype='uint8'), 1, 1, 1, 1, values=(9,)).asnumpy()
    x = mx.nd.array(img, dtype='uint8')
    out['crop'] = mx.nd.image.crop(x, 2, 1, 5, 4).asnumpy()
    for f in (0.4, 1.3):
        out[f'brightness_{f}'] = mx.nd.image.random_brightness(x, f, f).asnumpy()
        out[f'contrast_{f}'] = mx.nd.image.random_contrast(x, f, f).asnumpy()
        out[f'hue_{f}'] = mx.nd.image.random_hue(x, f, f).asnumpy()
    out['lighting'] = mx.nd.image.adjust_lighting(x, alpha=(0.8, -1.5, 2.0)).asnumpy()
    tensor = mx.nd.image.to_tensor(x[:4, :5])
    for name, kwargs in (('rotate', {}), ('rotate_in', dict(zoom_in=True)),
                         ('rotate_out', dict(zoom_out=True))):
        out[name] = mx.image.imrotate(tensor, 30, **kwargs).asnumpy()
    out['rotate_batch'] = mx.image.imrotate(mx.nd.stack(tensor, tensor * 0.5),
                                            mx.nd.array([-45, 90])).asnumpy()
    np.savez_compressed(path('image-ops.npz'), **out)


# -------------------------------------------------------------------------------------------------
# Augmenters
# -------------------------------------------------------------------------------------------------

def augmenters():
    """(name, augmenter) pairs; the tests build the same list."""
    I = mx.image
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
        ('normalize', I.ColorNormalizeAug(mx.nd.array([120, 110, 100]),
                                          mx.nd.array([50, 60, 70]))),
        ('gray', I.RandomGrayAug(0.7)),
        ('flip', I.HorizontalFlipAug(0.6)),
        ('cast', I.CastAug()),
        ('sequential', I.SequentialAug([I.CastAug(), I.BrightnessJitterAug(0.2)])),
        ('random_order', I.RandomOrderAug([I.BrightnessJitterAug(0.2),
                                           I.ContrastJitterAug(0.2)])),
    ]


CREATE_ARGS = [
    dict(data_shape=(3, 4, 5)),
    dict(data_shape=(3, 4, 5), resize=6, rand_crop=True, rand_mirror=True),
    dict(data_shape=(3, 4, 5), rand_crop=True, rand_resize=True, mean=True, std=True),
    dict(data_shape=(3, 4, 5), brightness=0.1, contrast=0.2, saturation=0.3, hue=0.1,
         pca_noise=0.05, rand_gray=0.2, inter_method=10),
    dict(data_shape=(3, 4, 5), mean=np.array([1, 2, 3]), std=np.array([4.0])),
]


GEOMETRIC = ('resize', 'resize_auto', 'force_resize', 'random_crop', 'random_crop_up',
             'random_sized_crop', 'center_crop', 'flip', 'cast', 'sequential')


def write_augment():
    rs = np.random.RandomState(5)
    img = rs.randint(0, 256, (5, 6, 3)).astype(np.uint8)
    arrays = {'img': img}
    out = {'dumps': {}, 'create': []}
    for name, aug in augmenters():
        results = []
        for seed in (0, 1):
            random.seed(seed)
            np.random.seed(seed)
            src = mx.nd.array(img, dtype='uint8')
            if name not in GEOMETRIC:
                src = src.astype('float32')         # the colour augmenters work in place
            results.append(aug(src).asnumpy())
        arrays[name] = np.stack(results)            # seeds 0 and 1
        out['dumps'][name] = aug.dumps()
    np.savez_compressed(path('image-augment.npz'), **arrays)
    for kwargs in CREATE_ARGS:
        augs = mx.image.CreateAugmenter(**kwargs)
        out['create'].append([a.dumps() for a in augs])
    out['det'] = [a.dumps() for a in mx.image.CreateDetAugmenter(
        (3, 8, 8), resize=10, rand_crop=0.5, rand_pad=0.5, rand_gray=0.1, rand_mirror=True,
        mean=True, std=True, brightness=0.1, hue=0.1, pca_noise=0.1)]
    random.seed(11)
    out['interp_random'] = [mx.image.image._get_interp_method(10) for _ in range(20)]
    with open(path('image-augment.json'), 'w') as f:
        json.dump(out, f, indent=0)


# -------------------------------------------------------------------------------------------------
# Iterators
# -------------------------------------------------------------------------------------------------

def record_images():
    """(label, PNG bytes) of the images in image-records.rec; the tests build the same."""
    rs = np.random.RandomState(11)
    return [(float(i % 3), encode_png(rs.randint(0, 256, (5 + i % 2, 6, 3)), 2))
            for i in range(5)]


def det_labels():
    """Flat detection labels: header (width 4: 4, 5, h, w), then [cls, x0, y0, x1, y1]."""
    return [[4, 5, 6, 6, 0, 0.1, 0.2, 0.6, 0.7],
            [4, 5, 6, 6, 1, 0.0, 0.0, 0.5, 0.5, 2, 0.4, 0.3, 0.9, 1.0],
            [4, 5, 6, 6, 2, 0.2, 0.2, 0.8, 0.9, 0, 0.5, 0.5, 0.4, 0.9, 1, 0.1, 0.6, 0.3, 0.95]]


def write_iterators():
    records = record_images()
    rec = mx.recordio.MXIndexedRecordIO(path('image-records.idx'), path('image-records.rec'),
                                        'w')
    for i, (label, png) in enumerate(records):
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, label, i, 0), png))
    rec.close()
    with open(path('image-list.lst'), 'w') as f:
        f.write('0\t1\t2.5\timage-rgb.png\n3\t0\t1\timage-444.jpg\n7\t2\t0\timage-grey.png\n')
    det = mx.recordio.MXIndexedRecordIO(path('image-det.idx'), path('image-det.rec'), 'w')
    for i, label in enumerate(det_labels()):
        det.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, label, i, 0), records[i][1]))
    det.close()

    out = {}

    def run(key, it, epochs=2):
        """The batches of ``epochs`` epochs stacked: data (as uint8: no augmenter here
        leaves fractions), labels, pads and the number of batches of each epoch."""
        data, labels, pads, counts = [], [], [], []
        for _ in range(epochs):
            batches = list(it)
            counts.append(len(batches))
            for batch in batches:
                values = batch.data[0].asnumpy()
                assert np.array_equal(values, np.round(values)) and values.max() < 256
                data.append(values.astype(np.uint8))
                labels.append(batch.label[0].asnumpy())
                pads.append(batch.pad)
            it.reset()
        out[f'{key}_data'], out[f'{key}_label'] = np.stack(data), np.stack(labels)
        out[f'{key}_pad'], out[f'{key}_count'] = np.array(pads), np.array(counts)

    rec_args = dict(path_imgrec=path('image-records.rec'))
    for handle in ('pad', 'discard', 'roll_over'):
        run(f'rec_{handle}', mx.image.ImageIter(2, (3, 4, 4), last_batch_handle=handle,
                                                **rec_args))
    random.seed(3)
    run('rec_shuffle', mx.image.ImageIter(2, (3, 3, 5), shuffle=True, rand_crop=True,
                                          path_imgidx=path('image-records.idx'), **rec_args))
    run('rec_part', mx.image.ImageIter(1, (3, 4, 4), num_parts=2, part_index=1,
                                       path_imgidx=path('image-records.idx'), **rec_args), 1)
    run('list', mx.image.ImageIter(2, (3, 5, 5), label_width=2,
                                   path_imglist=path('image-list.lst'), path_root=HERE,
                                   resize=6), 1)
    run('imglist', mx.image.ImageIter(2, (3, 4, 4), label_width=2,
                                      imglist=[[1.5, 'image-rgb.png'], [[2, 3], 'image-420.jpg'],
                                               [4, 5, 'image-grey.png']],
                                      path_root=HERE, dtype='int32'), 1)
    run('det', mx.image.ImageDetIter(2, (3, 5, 5), path_imgrec=path('image-det.rec')))
    np.savez_compressed(path('image-iter.npz'), **out)


# -------------------------------------------------------------------------------------------------
# Transforms: the operators and attributes of their graphs
# -------------------------------------------------------------------------------------------------

def transforms():
    """(name, transform) pairs; tests/test_data_vision.py builds the same."""
    T = mx.gluon.data.vision.transforms
    return [('to_tensor', T.ToTensor()), ('normalize', T.Normalize((0.1, 0.2, 0.3), (1, 2, 3))),
            ('resize_keep', T.Resize(5, keep_ratio=True, interpolation=2)),
            ('resize', T.Resize((4, 3))),
            ('crop_resize', T.CropResize(1, 2, 3, 4, size=(5, 6), interpolation=1)),
            ('flip_lr', T.RandomFlipLeftRight()), ('flip_tb', T.RandomFlipTopBottom()),
            ('brightness', T.RandomBrightness(0.3)), ('contrast', T.RandomContrast(1.5)),
            ('saturation', T.RandomSaturation(0.1)), ('hue', T.RandomHue(0.2)),
            ('jitter', T.RandomColorJitter(0.1, 0.2, 0.3, 0.4)),
            ('lighting', T.RandomLighting(0.1)), ('cast', T.Cast('float16'))]


def write_transforms():
    out = {}
    for name, block in transforms():
        nodes = json.loads(block(mx.sym.var('data')).tojson())['nodes'][1:]
        out[name] = [[n['op'], n.get('attrs', {})] for n in nodes]
    with open(path('image-transforms.json'), 'w') as f:
        json.dump(out, f, indent=0, sort_keys=True)


if __name__ == '__main__':
    files = write_images()
    write_decoded(files)
    write_ops()
    write_augment()
    write_iterators()
    write_transforms()
