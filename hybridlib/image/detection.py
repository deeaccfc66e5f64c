"""Object detection data: augmenters that move the boxes with the image, and ``ImageDetIter``.

A label is an array (num_objects, 5+) of ``[class, xmin, ymin, xmax, ymax, ...]`` rows with
coordinates in [0, 1] of the image's width and height. In a record or list file it is stored
flat with a header: ``[header_width, object_width, (other header values), objects...]``.
As in ``image.py``, random choices come from Python's ``random``.
"""
import logging
import random
import warnings
from math import sqrt

import numpy as np

from ..base import MXNetAssertionError, numeric_types
from .. import ndarray as nd
from .. import io
from ..ops.contrib import _area        # box areas, 0 for empty boxes (as box_iou counts them)
from .image import (Augmenter, CastAug, ColorJitterAug, ColorNormalizeAug, ForceResizeAug,
                    HueJitterAug, ImageIter, LightingAug, RandomGrayAug, ResizeAug, _PCA_EIGVAL,
                    _PCA_EIGVEC, _MEAN_RGB, _STD_RGB, _AugmenterBase, _check_mean_std,
                    copyMakeBorder, fixed_crop)

__all__ = ['DetAugmenter', 'DetBorrowAug', 'DetRandomSelectAug', 'DetHorizontalFlipAug',
           'DetRandomCropAug', 'DetRandomPadAug', 'CreateMultiRandCropAugmenter',
           'CreateDetAugmenter', 'ImageDetIter', 'copyMakeBorder']


class DetAugmenter(_AugmenterBase):
    """The base class of detection augmenters: ``aug(src, label) -> (image, label)``;
    ``dumps()`` is the JSON of ``[class name in lower case, constructor arguments]``.
    (Not an ``Augmenter``: ``DetBorrowAug`` tells the two apart.)"""

    def __call__(self, src, label):
        raise NotImplementedError('Must override implementation.')


class DetBorrowAug(DetAugmenter):
    """An image ``Augmenter`` that leaves the labels as they are (colour, cast, resize)."""

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError('Borrowing from invalid Augmenter')
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        """``[name, the borrowed augmenter's dumps()]`` (a list, as MXNet)."""
        return [type(self).__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """One augmenter of ``aug_list`` chosen at random, or none with probability
    ``skip_prob`` (always none for an empty list)."""

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise ValueError('Allow DetAugmenter in list only')
        if not aug_list:
            skip_prob = 1
        self.aug_list = aug_list
        self.skip_prob = skip_prob

    def dumps(self):
        """``[name, [dumps() of each augmenter]]``."""
        return [type(self).__name__.lower(), [x.dumps() for x in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return src, label
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """With probability ``p``, mirrors the image and its boxes left to right (the label is
    changed in place)."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
            self._flip_label(label)
        return src, label

    def _flip_label(self, label):
        xmin = 1.0 - label[:, 1]
        label[:, 1] = 1.0 - label[:, 3]
        label[:, 3] = xmin


def _as_range(value, what, name):
    if isinstance(value, (tuple, list)):
        return value
    if not isinstance(value, numeric_types):
        raise MXNetAssertionError(f'{name}: {what} must be a number or a (min, max) pair')
    logging.info('Using fixed %s: %s in %s', what, value, name)
    return (value, value)


class _RandomBoxAug(DetAugmenter):
    """What the random crop and pad share: up to ``max_attempts`` boxes of an aspect ratio
    drawn from ``aspect_ratio_range`` and an area, as a fraction of the image's, within
    ``area_range``. Ranges that allow no box disable the augmenter with a warning."""

    def _set_ranges(self, aspect_ratio_range, area_range, max_attempts, area_above,
                    area_problem):
        """Keep the ranges; ``enabled`` when the largest area exceeds ``area_above`` and
        both ranges are ordered, the ratios positive."""
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = False
        name = self._NAME
        if area_range[1] <= area_above or area_range[0] > area_range[1]:
            warnings.warn(f'Skip {name} due to {area_problem}: {area_range}')
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn(f'Skip {name} due to invalid aspect_ratio_range: '
                          f'{aspect_ratio_range}')
        else:
            self.enabled = True

    def _attempts(self, height, width):
        """Yield (ratio, min_area, max_area, h, max_h) for each attempt: the aspect ratio
        (w / h) drawn, the area bounds in pixels and the heights that give them at that
        ratio. Nothing when disabled or for an empty image."""
        if not self.enabled or height <= 0 or width <= 0:
            return
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = int(round(sqrt(min_area / ratio)))
            max_h = int(round(sqrt(max_area / ratio)))
            yield ratio, min_area, max_area, h, max_h


class DetRandomCropAug(_RandomBoxAug):
    """A random crop that keeps enough of the objects (SSD's sampling).

    Up to ``max_attempts`` crops of aspect ratio in ``aspect_ratio_range`` and area (as a
    fraction of the image) in ``area_range`` are drawn; the first whose every object it
    touches is covered more than ``min_object_covered`` is taken. Objects covered less than
    ``min_eject_coverage`` are dropped from the label, the others clipped to the crop.
    """
    _NAME = 'DetRandomCropAug'           # in messages, whatever the subclass

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        aspect_ratio_range = _as_range(aspect_ratio_range, 'aspect ratio', self._NAME)
        area_range = _as_range(area_range, 'area range', self._NAME)
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self._set_ranges(aspect_ratio_range, area_range, max_attempts, area_above=0,
                         area_problem='invalid area_range')

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    def _intersect(self, boxes, xmin, ymin, xmax, ymax):
        """The boxes clipped to the rectangle (all zeros where they miss it)."""
        left = np.maximum(boxes[:, 0], xmin)
        right = np.minimum(boxes[:, 2], xmax)
        top = np.maximum(boxes[:, 1], ymin)
        bot = np.minimum(boxes[:, 3], ymax)
        out = boxes.copy()
        out[:, 0], out[:, 1], out[:, 2], out[:, 3] = left, top, right, bot
        out[np.logical_or(left >= right, top >= bot), :] = 0
        return out

    def _check_satisfy_constraints(self, label, xmin, ymin, xmax, ymax, width, height):
        """Whether the crop (in pixels) covers every object it touches enough."""
        if (xmax - xmin) * (ymax - ymin) < 2:
            return False
        x1, y1 = float(xmin) / width, float(ymin) / height
        x2, y2 = float(xmax) / width, float(ymax) / height
        object_areas = _area(np, label[:, 1:], 'corner')
        valid = np.where(object_areas * width * height > 2)[0]
        if valid.size < 1:
            return False
        intersects = self._intersect(label[valid, 1:], x1, y1, x2, y2)
        coverages = _area(np, intersects, 'corner') / object_areas[valid]
        coverages = coverages[coverages > 0]
        return coverages.size > 0 and np.amin(coverages) > self.min_object_covered

    def _update_labels(self, label, crop_box, height, width):
        """The label in the crop's coordinates, without objects ejected; None if none is
        left."""
        xmin, ymin = float(crop_box[0]) / width, float(crop_box[1]) / height
        w, h = float(crop_box[2]) / width, float(crop_box[3]) / height
        out = label.copy()
        out[:, (1, 3)] -= xmin
        out[:, (2, 4)] -= ymin
        out[:, (1, 3)] /= w
        out[:, (2, 4)] /= h
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        coverage = _area(np, out[:, 1:], 'corner') * w * h / _area(np, label[:, 1:], 'corner')
        valid = np.logical_and(out[:, 3] > out[:, 1], out[:, 4] > out[:, 2])
        valid = np.where(np.logical_and(valid, coverage > self.min_eject_coverage))[0]
        if valid.size < 1:
            return None
        return out[valid, :]

    def _random_crop_proposal(self, label, height, width):
        """(x, y, w, h, new label) of an acceptable crop, or () when none was found."""
        for ratio, min_area, max_area, h, max_h in self._attempts(height, width):
            if round(max_h * ratio) > width:
                # find the largest h that keeps w within the image
                max_h = int((width + 0.4999999) / ratio)
            max_h = min(max_h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            area = w * h
            if area < min_area:
                h += 1
                w = int(round(h * ratio))
                area = w * h
            if area > max_area:
                h -= 1
                w = int(round(h * ratio))
                area = w * h
            if not (min_area <= area <= max_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._check_satisfy_constraints(label, x, y, x + w, y + h, width, height):
                new_label = self._update_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return (x, y, w, h, new_label)
        return ()


class DetRandomPadAug(_RandomBoxAug):
    """A random expansion (zoom out): the image placed at a random position on a canvas of
    ``pad_val`` whose area is ``area_range`` times the image's, of aspect ratio in
    ``aspect_ratio_range``; the boxes follow."""
    _NAME = 'DetRandomPadAug'           # in messages, whatever the subclass

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0), max_attempts=50,
                 pad_val=(128, 128, 128)):
        if not isinstance(pad_val, (list, tuple, *numeric_types)):
            raise MXNetAssertionError('DetRandomPadAug: pad_val must be a number or a tuple')
        aspect_ratio_range = _as_range(aspect_ratio_range, 'aspect ratio', self._NAME)
        area_range = _as_range(area_range, 'area range', self._NAME)
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        # a pad must enlarge the image
        self._set_ranges(aspect_ratio_range, area_range, max_attempts, area_above=1.0,
                         area_problem='invalid parameters')

    def __call__(self, src, label):
        height, width, _ = src.shape
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            fill = dict(values=self.pad_val) if isinstance(self.pad_val, (list, tuple)) else \
                dict(value=self.pad_val)           # one number fills every channel
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 16, **fill)
        return src, label

    def _update_labels(self, label, pad_box, height, width):
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + pad_box[0]) / pad_box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + pad_box[1]) / pad_box[3]
        return out

    def _random_pad_proposal(self, label, height, width):
        """(x, y, w, h, new label) of the canvas, or () when no attempt gave a real pad."""
        for ratio, _, _, h, max_h in self._attempts(height, width):
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)
            h = max(h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            if (h - height) < 2 or (w - width) < 2:
                continue            # a marginal pad does not help
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return (x, y, w, h, self._update_labels(label, (x, y, w, h), height, width))
        return ()


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """A ``DetRandomSelectAug`` over several ``DetRandomCropAug``: each argument may be a
    list (one value per crop augmenter) or one value for all of them."""
    params = [min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
              max_attempts]
    params = [p if isinstance(p, list) else [p] for p in params]
    num = max(len(p) for p in params)
    for k, p in enumerate(params):
        if len(p) != num:
            if len(p) != 1:
                raise MXNetAssertionError('CreateMultiRandCropAugmenter: the lists of '
                                          f'parameters must have one length, got {params}')
            params[k] = p * num
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*params)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2, min_object_covered=0.1,
                       aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 3.0),
                       min_eject_coverage=0.3, max_attempts=50, pad_val=(127, 127, 127)):
    """The standard detection augmenters for images of ``data_shape`` (C, H, W).

    In order: resize the shorter side (``resize``); random crops (with probability
    ``rand_crop``); a horizontal flip (``rand_mirror``); random padding (probability
    ``rand_pad``); a forced resize to (W, H); cast to float32; colour jitter, hue, PCA
    noise, random grey; normalisation by ``mean`` and ``std`` (True: ImageNet's RGB values).
    """
    auglist = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(min_object_covered, aspect_ratio_range,
                                                    area_range, min_eject_coverage,
                                                    max_attempts, skip_prob=(1 - rand_crop)))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:
        pad_aug = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts,
                                  pad_val)
        auglist.append(DetRandomSelectAug([pad_aug], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        auglist.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        auglist.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        auglist.append(DetBorrowAug(LightingAug(pca_noise, _PCA_EIGVAL, _PCA_EIGVEC)))
    if rand_gray > 0:
        auglist.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    _check_mean_std('mean', mean, np.ndarray, 'a numpy array')
    _check_mean_std('std', std, np.ndarray, 'a numpy array')
    if mean is True:
        mean = np.array(_MEAN_RGB)
    if std is True:
        std = np.array(_STD_RGB)
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist


class ImageDetIter(ImageIter):
    """Batches of augmented images and their boxes for object detection.

    Labels are stored flat (``[header_width, object_width, ..., objects]``, see the module
    docstring); a batch's label is (batch_size, max objects, object_width), padded with -1.
    The arguments are ImageIter's (without ``label_width`` and ``dtype``); ``kwargs`` go to
    ``CreateDetAugmenter``.
    """

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name='data', label_name='label',
                 last_batch_handle='pad', **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape,
                         path_imgrec=path_imgrec, path_imglist=path_imglist,
                         path_root=path_root, path_imgidx=path_imgidx, shuffle=shuffle,
                         part_index=part_index, num_parts=num_parts, aug_list=[],
                         imglist=imglist, data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        label_shape = self._estimate_label_shape()
        self.provide_label = [io.DataDesc(label_name, (self.batch_size,) + label_shape)]
        self.label_shape = label_shape

    def _check_valid_label(self, label):
        """RuntimeError unless the label has at least one valid object."""
        if len(label.shape) != 2 or label.shape[1] < 5:
            raise RuntimeError(f'Label with shape (1+, 5+) required, {label} received.')
        valid = np.where(np.logical_and(label[:, 0] >= 0, np.logical_and(
            label[:, 3] > label[:, 1], label[:, 4] > label[:, 2])))[0]
        if valid.size < 1:
            raise RuntimeError('Invalid label occurs.')

    def _estimate_label_shape(self):
        """(most objects in an image, object width), read through the whole data."""
        max_count, width = 0, None
        self.reset()
        try:
            while True:
                label, _ = self.next_sample()
                label = self._parse_label(label)
                max_count = max(max_count, label.shape[0])
                width = label.shape[1]
        except StopIteration:
            pass
        self.reset()
        if width is None:
            raise RuntimeError('ImageDetIter: found no image with a label')
        return (max_count, width)

    def _parse_label(self, label):
        """A flat label as (num_objects, object_width), without invalid boxes."""
        if isinstance(label, nd.NDArray):
            label = label.asnumpy()
        raw = np.asarray(label).ravel()
        if raw.size < 7:
            raise RuntimeError('Label shape is invalid: ' + str(raw.shape))
        header_width, obj_width = int(raw[0]), int(raw[1])
        if (raw.size - header_width) % obj_width != 0:
            raise RuntimeError(f'Label shape {raw.shape} inconsistent with annotation width '
                               f'{obj_width}.')
        out = np.reshape(raw[header_width:], (-1, obj_width))
        valid = np.where(np.logical_and(out[:, 3] > out[:, 1], out[:, 4] > out[:, 2]))[0]
        if valid.size < 1:
            raise RuntimeError('Encounter sample with no valid label.')
        return out[valid, :]

    def reshape(self, data_shape=None, label_shape=None):
        """Change the data shape (C, H, W) or the label shape (objects, width) of the
        batches (the label may only grow)."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [io.DataDesc(self.provide_data[0][0],
                                             (self.batch_size,) + tuple(data_shape))]
            self.data_shape = data_shape
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [io.DataDesc(self.provide_label[0][0],
                                              (self.batch_size,) + tuple(label_shape))]
            self.label_shape = label_shape

    # ImageIter's _batchify and next, with labels of (objects, object_width) padded with -1

    def _check_sample(self, data, label):
        self.check_valid_image([data])      # a list, as MXNet passes it here
        return data, self._parse_label(label)

    def _augmented_sample(self):
        # a sample is skipped also when the augmenters leave no valid object
        while True:
            data, label = self._read_valid_sample()
            try:
                data, label = self.augmentation_transform(data, label)
                self._check_valid_label(label)
                return data, label
            except RuntimeError as err:
                logging.debug('Invalid image, skipping:  %s', str(err))

    def _new_label_batch(self):
        batch_label = nd.empty(self.provide_label[0][1])
        batch_label[:] = -1
        return batch_label

    def _store_label(self, batch_label, i, label):
        num_object = label.shape[0]
        batch_label[i][0:num_object] = nd.array(label)
        if num_object < batch_label[i].shape[0]:
            batch_label[i][num_object:] = -1

    def augmentation_transform(self, data, label):
        """Apply every detection augmenter of ``auglist`` in turn."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def check_label_shape(self, label_shape):
        """ValueError unless ``label_shape`` (objects, width) can replace the current one."""
        if not len(label_shape) == 2:
            raise ValueError('label_shape should have length 2')
        if label_shape[0] < self.label_shape[0]:
            raise ValueError(f'Attempts to reduce label count from {self.label_shape[0]} to '
                             f'{label_shape[0]}, not allowed.')
        if label_shape[1] != self.provide_label[0][1][2]:
            raise ValueError(f'label_shape object width inconsistent: '
                             f'{self.provide_label[0][1][2]} vs {label_shape[1]}.')

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True, waitKey=None,
                  window_name='draw_next', id2labels=None):
        """Yield the next augmented images (uint8, BGR as OpenCV) with their boxes drawn.

        Boxes are drawn with numpy (``color`` as (R, G, B), random per box by default);
        class names (``id2labels``) and showing the images (``waitKey``) need OpenCV's
        ``cv2``, and are skipped with a warning without it.
        """
        try:
            import cv2
        except ImportError:
            cv2 = None
            if id2labels is not None or waitKey is not None:
                warnings.warn('draw_next: cv2 is not installed: class names are not written '
                              'and images are not shown')
        try:
            while True:
                data, label = self._read_valid_sample()
                data, label = self.augmentation_transform(data, label)
                yield self._draw(data.asnumpy(), label, color, thickness, mean, std, clip,
                                 waitKey, window_name, id2labels, cv2)
        except StopIteration:
            return

    @staticmethod
    def _draw(image, label, color, thickness, mean, std, clip, wait_key, window_name,
              id2labels, cv2):
        image = image.astype(np.float64)
        if std is True:
            std = np.array(_STD_RGB)
        if std is not None:
            image *= std
        if mean is True:
            mean = np.array(_MEAN_RGB)
        if mean is not None:
            image += mean
        image = image[:, :, (2, 1, 0)]            # BGR, as OpenCV draws and shows
        if clip:
            image = np.clip(image, 0, 255)
        image = np.ascontiguousarray(image.astype(np.uint8))
        height, width, _ = image.shape
        for row in label:
            x1 = int(row[1] * width)
            if x1 < 0:
                continue
            y1, x2, y2 = int(row[2] * height), int(row[3] * width), int(row[4] * height)
            bgr = np.random.rand(3) * 255 if not color else np.asarray(color[::-1])
            _rectangle(image, x1, y1, x2, y2, bgr, thickness)
            if cv2 is not None and id2labels is not None and int(row[0]) in id2labels:
                text = '{:s}'.format(id2labels[int(row[0])])
                font = cv2.FONT_HERSHEY_SIMPLEX
                text_height = cv2.getTextSize(text, font, 0.5, 2)[0][1]
                cv2.putText(image, text, (x1 + 5, y1 + text_height + 5), font, 0.5,
                            (255, 255, 255), 2)
        if cv2 is not None and wait_key is not None:
            cv2.imshow(window_name, image)
            cv2.waitKey(wait_key)
        return image

    def sync_label_shape(self, it, verbose=False):
        """Give this iterator and ``it`` (training and validation) the same label shape
        (the larger object count); returns ``it``."""
        if not isinstance(it, ImageDetIter):
            raise MXNetAssertionError('Synchronize with invalid iterator.')
        train_shape, val_shape = self.label_shape, it.label_shape
        if train_shape[1] != val_shape[1]:
            raise MXNetAssertionError('object width mismatch.')
        max_count = max(train_shape[0], val_shape[0])
        if max_count > train_shape[0]:
            self.reshape(None, (max_count, train_shape[1]))
        if max_count > val_shape[0]:
            it.reshape(None, (max_count, val_shape[1]))
        if verbose and max_count > min(train_shape[0], val_shape[0]):
            logging.info('Resized label_shape to (%d, %d).', max_count, train_shape[1])
        return it


def _rectangle(image, x1, y1, x2, y2, color, thickness):
    """An unfilled rectangle (OpenCV's ``cv2.rectangle``, centred on the given corners)."""
    height, width, _ = image.shape
    half = max(thickness, 1) // 2
    x_lo, x_hi = sorted((x1, x2))
    y_lo, y_hi = sorted((y1, y2))
    color = np.asarray(color, np.float64).astype(np.uint8)
    for ya, yb, xa, xb in ((y_lo - half, y_lo + half, x_lo - half, x_hi + half),
                           (y_hi - half, y_hi + half, x_lo - half, x_hi + half),
                           (y_lo - half, y_hi + half, x_lo - half, x_lo + half),
                           (y_lo - half, y_hi + half, x_hi - half, x_hi + half)):
        image[max(ya, 0):max(min(yb + 1, height), 0), max(xa, 0):max(min(xb + 1, width), 0)] = \
            color
