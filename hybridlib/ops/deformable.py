"""Deformable convolutions (Deformable ConvNets v1 and v2) and their backward operators.

* ``_contrib_DeformableConvolution`` (v1): a convolution whose taps move by learnt offsets;
* ``_contrib_ModulatedDeformableConvolution`` (v2): the same with a mask per tap;
* ``_backward__contrib_DeformableConvolution`` and
  ``_backward__contrib_ModulatedDeformableConvolution``: the gradients of data, offsets,
  [masks] and weights the forward operators' gradients are made of.

Everything follows MXNet 1.9.1's kernels (checked against MXNet):

* DeformableConvolution samples as MXNet's CPU ``deformable_im2col``: zero outside
  ``[0, H) x [0, W)`` and the last row/column repeated over ``[H - 1, H)``; the modulated one
  as its ``modulated_deformable_im2col``: bilinear with zeros outside the image, for taps in
  ``(-1, H) x (-1, W)``. MXNet's CPU has no backward for the modulated convolution; here it
  has the gradients MXNet's GPU kernels compute;
* both are 2-D (NCHW) only, as in MXNet.

The bilinear taps (``_taps``) and the scatter-add of the gradients come from ``detection.py``,
whose ROI poolings sample with them too.

Float32 inputs compute in float32 in MXNet's order of operations, float64 ones in float64,
float16 ones in float32.
"""
import math

from ..base import ShapeError
from .attrs import Bool, Int, Shape, Str
from .contrib import _check_rank, _dim, _work_dtype
from .conv import _add_bias, _check_conv, _conv_size, _float_types, _geom, _kw
from .detection import _scatter_add, _taps
from .elemwise import not_differentiable_twice
from .registry import OpDef, merge_shape, register, register_op

__all__ = []


def _dconv_attrs(modulated):
    attrs = dict(kernel=Shape(), stride=Shape(()), dilate=Shape(()), pad=Shape(()),
                 num_filter=Int(), num_group=Int(1), num_deformable_group=Int(1),
                 workspace=Int(1024), no_bias=Bool(False))
    if modulated:
        attrs['im2col_step'] = Int(64)
    attrs['layout'] = Str(None, choices=('NCDHW', 'NCHW', 'NCW'))
    return attrs


def _dconv_check(attrs):
    _check_conv(attrs)
    if len(attrs.kernel) != 2 or attrs.layout not in (None, 'NCHW'):
        raise ValueError(f'only 2-D deformable convolutions (NCHW) are implemented, as in '
                         f'MXNet; got kernel {attrs.kernel}, layout {attrs.layout}')
    if attrs.num_deformable_group < 1 or attrs.get('im2col_step', 1) < 1:
        raise ValueError('num_deformable_group and im2col_step must be positive')


def _dconv_inputs(modulated, backward=False):
    def list_inputs(attrs):
        names = ['ograd'] if backward else []
        names += ['data', 'offset'] + (['mask'] if modulated else []) + ['weight']
        return names if backward or attrs.no_bias else names + ['bias']
    return list_inputs


def _dconv_infer(attrs, shapes, modulated):
    """Shapes of (data, offset, [mask], weight, [bias]) and the output."""
    name = '_contrib_ModulatedDeformableConvolution' if modulated else \
        '_contrib_DeformableConvolution'
    names = _dconv_inputs(modulated)(attrs)
    given = dict(zip(names, shapes))
    for key in ('data', 'offset', 'mask', 'weight'):
        _check_rank(given.get(key), 4, f'{name}: {key} (4-D, NCHW)')
    data, offset, mask, weight = (given.get(k) for k in ('data', 'offset', 'mask', 'weight'))
    geo, groups, dg = _geom(attrs), attrs.num_group, attrs.num_deformable_group
    taps = geo.kernel[0] * geo.kernel[1]
    batch = _dim(data, 0) or _dim(offset, 0) or _dim(mask, 0)
    channels = _dim(data, 1) or _dim(weight, 1) * groups
    if channels % groups or channels % dg:
        raise ShapeError(f'{name}: {channels} input channels must be divisible by num_group '
                         f'{groups} and num_deformable_group {dg}')
    size = [_conv_size(*a, op=name) for a in zip((_dim(data, 2), _dim(data, 3)), *geo)]
    size = [s or _dim(offset, 2 + i) or _dim(mask, 2 + i) for i, s in enumerate(size)]
    result = dict(
        data=merge_shape(data, (batch, channels, _dim(data, 2), _dim(data, 3)), f'{name}: data'),
        offset=merge_shape(offset, (batch, dg * 2 * taps, *size),
                           f'{name}: offset (batch, num_deformable_group x 2 x {taps} taps, '
                           'output height, output width)'),
        mask=merge_shape(mask, (batch, dg * taps, *size),
                         f'{name}: mask (batch, num_deformable_group x {taps} taps, '
                         'output height, output width)'),
        weight=merge_shape(weight, (attrs.num_filter, channels // groups) + tuple(geo.kernel),
                           f'{name}: weight'),
        bias=merge_shape(given.get('bias'), (attrs.num_filter,), f'{name}: bias'))
    if data is None and not channels:
        result['data'] = None
    return [result[k] for k in names], (batch, attrs.num_filter, *size)


class _DeformableWindows:
    """The sampling points of a deformable convolution's windows: per image and deformable
    group (N * DG), per tap and output position (K * P), their bilinear taps into the image
    (``index``, ``weight``, ``d_y``, ``d_x``: 4 x (N * DG, K * P)), sampled with MXNet's CPU
    rule ('deformable') or its modulated one ('modulated')."""

    def __init__(self, xp, attrs, data_shape, offset, rule):
        n, c, height, width = data_shape
        geo = _geom(attrs)
        (kh, kw), (sh, sw), (dh, dw), (ph, pw) = geo
        out_h, out_w = offset.shape[2:]
        self.groups = attrs.num_deformable_group
        work = offset.dtype
        # tap (i, j) of window (y, x) reads (y * stride - pad + i * dilate + offset, ...)
        base_y = xp.arange(kh)[:, None, None, None] * dh + \
            (xp.arange(out_h) * sh - ph)[None, None, :, None]
        base_x = xp.arange(kw)[None, :, None, None] * dw + \
            (xp.arange(out_w) * sw - pw)[None, None, None, :]
        shift = offset.reshape(n * self.groups, kh, kw, 2, out_h, out_w)
        y = base_y.astype(work) + shift[:, :, :, 0]
        x = base_x.astype(work) + shift[:, :, :, 1]
        if rule == 'modulated':
            valid = (y > -1) & (x > -1) & (y < height) & (x < width)
        else:
            valid = (y >= 0) & (x >= 0) & (y < height) & (x < width)
        taps = _taps(xp, y, x, height, width, rule, valid)
        self.index, self.weight, self.d_y, self.d_x = \
            (t.reshape(4, n * self.groups, -1) for t in taps)
        self.shape = (n, c, height, width)

    def values(self, xp, data):
        """The image at every tap: 4 x (N * DG, C / DG, K * P)."""
        n, c, height, width = self.shape
        images = data.reshape(n * self.groups, c // self.groups, height * width)
        rows = xp.arange(images.shape[0])[:, None, None]
        channels = xp.arange(images.shape[1])[None, :, None]
        return [images[rows, channels, i[:, None, :]] for i in self.index]

    def sample(self, values):
        """The bilinear samples (N * DG, C / DG, K * P), from ``values``."""
        total = 0
        for w, v in zip(self.weight, values):
            total = total + w[:, None, :] * v
        return total


def _dconv_arrays(inputs, modulated):
    """(data, offset, mask or None, weight, bias or None) from the inputs."""
    inputs = list(inputs)
    data, offset = inputs[:2]
    mask = inputs.pop(2) if modulated else None
    return data, offset, mask, inputs[2], inputs[3] if len(inputs) > 3 else None


def _dconv_forward(xp, attrs, inputs, modulated):
    data, offset, mask, weight, bias = _dconv_arrays(inputs, modulated)
    work = _work_dtype(data.dtype)
    n, groups, filters = data.shape[0], attrs.num_group, attrs.num_filter
    out_shape = (n, filters) + offset.shape[2:]
    windows = _DeformableWindows(xp, attrs, data.shape, offset.astype(work, copy=False),
                                 'modulated' if modulated else 'deformable')
    cols = windows.sample(windows.values(xp, data.astype(work, copy=False)))
    if modulated:
        cols = cols * mask.astype(work, copy=False).reshape(cols.shape[0], 1, -1)
    # the matmul part of a grouped convolution: (G, F / G, C / G * K) x (N, G, C / G * K, P)
    cols = cols.reshape(n, groups, -1, math.prod(offset.shape[2:]))
    out = xp.matmul(weight.astype(work, copy=False).reshape(groups, filters // groups, -1), cols)
    out = _add_bias(out.reshape(out_shape), None if bias is None else bias.astype(work))
    return out.astype(data.dtype, copy=False)


def _dconv_backward(xp, attrs, ograd, data, offset, mask, weight):
    """Gradients of data, offset, [mask], weight of a deformable convolution (the taps'
    derivatives: MXNet's deformable_col2im, col2im_coord and their modulated forms)."""
    work = _work_dtype(data.dtype)
    n, c, height, width = data.shape
    groups, filters = attrs.num_group, attrs.num_filter
    positions = math.prod(offset.shape[2:])
    windows = _DeformableWindows(xp, attrs, data.shape, offset.astype(work, copy=False),
                                 'deformable' if mask is None else 'modulated')
    values = windows.values(xp, data.astype(work, copy=False))
    sampled = windows.sample(values)
    cols = sampled
    if mask is not None:
        mask_w = mask.astype(work, copy=False).reshape(sampled.shape[0], 1, -1)
        cols = sampled * mask_w
    g = ograd.astype(work, copy=False).reshape(n, groups, filters // groups, positions)
    w = weight.astype(work, copy=False).reshape(groups, filters // groups, -1)
    cols = cols.reshape(n, groups, -1, positions)
    d_weight = xp.matmul(g.transpose(1, 2, 0, 3).reshape(groups, filters // groups, -1),
                         cols.transpose(1, 0, 3, 2).reshape(groups, n * positions, -1))
    d_cols = xp.matmul(w.transpose(0, 2, 1), g).reshape(sampled.shape)
    grads = []
    if mask is not None:
        d_mask = (d_cols * sampled).sum(axis=1)
        d_cols = d_cols * mask_w
    # data: each sample's gradient spread over its four pixels
    base = (xp.arange(n * c) * (height * width)).reshape(sampled.shape[:2] + (1,))
    d_data = 0
    for index, weight_t in zip(windows.index, windows.weight):
        d_data = d_data + _scatter_add(xp, base + index[:, None, :],
                                       d_cols * weight_t[:, None, :], data.size)
    grads.append(d_data.reshape(data.shape))
    # offsets: the samples' slopes along y and x, summed over the group's channels
    slopes = [(d_cols * v).sum(axis=1) for v in values]
    d_y = sum(d * s for d, s in zip(windows.d_y, slopes))
    d_x = sum(d * s for d, s in zip(windows.d_x, slopes))
    kh, kw = attrs.kernel
    d_offset = xp.stack([d_y.reshape((-1, kh, kw) + offset.shape[2:]),
                         d_x.reshape((-1, kh, kw) + offset.shape[2:])], axis=3)
    grads.append(d_offset.reshape(offset.shape))
    if mask is not None:
        grads.append(d_mask.reshape(mask.shape))
    grads.append(d_weight.reshape(weight.shape))
    return tuple(x.astype(data.dtype, copy=False) for x in grads)


def _dconv_ops(name, modulated):
    """A deformable convolution and its backward operator."""
    attrs = _dconv_attrs(modulated)
    backward = '_backward_' + name
    count = 4 if modulated else 3

    def infer_shape(attrs, *shapes):
        ins, out = _dconv_infer(attrs, shapes, modulated)
        return ins, [out]

    def compute(xp, attrs, *inputs):
        return _dconv_forward(xp, attrs, inputs, modulated)

    def gradient(F, attrs, inputs, outputs, ograds):
        grads = list(getattr(F, backward)(ograds[0], *inputs[:count], **_kw(attrs)))
        if not attrs.no_bias:
            grads.append(F._backward_Convolution_bias(ograds[0]))
        return grads

    def backward_infer(attrs, ograd, *shapes):
        ins, out = _dconv_infer(attrs, shapes + (None,) * (not attrs.no_bias), modulated)
        ins = ins[:count]
        _check_rank(ograd, 4, f'{backward}: ograd (batch, num_filter, height, width)')
        return [merge_shape(ograd, out, f'{backward}: ograd')] + ins, ins

    def backward_types(attrs, *dtypes):
        ins, outs = _float_types(attrs, *dtypes)
        return ins, outs * count

    def backward_compute(xp, attrs, ograd, *inputs):
        data, offset, mask, weight, _ = _dconv_arrays(inputs, modulated)
        return _dconv_backward(xp, attrs, ograd, data, offset, mask, weight)

    def register_forward(cls):
        register_op(OpDef(backward, inputs=('ograd', 'data', 'offset') + ('mask',) * modulated
                          + ('weight',), attrs=attrs, check=_dconv_check, num_outputs=count,
                          infer_shape=backward_infer, infer_type=backward_types,
                          compute=backward_compute, gradient=not_differentiable_twice(backward),
                          doc=_BACKWARD_DOC.format(name=name)))
        return register(name, inputs=('data', 'offset') + ('mask',) * modulated +
                        ('weight', 'bias'), list_inputs=_dconv_inputs(modulated), attrs=attrs,
                        check=_dconv_check, infer_shape=infer_shape, infer_type=_float_types,
                        compute=compute, gradient=gradient)(cls)
    return register_forward


_BACKWARD_DOC = """The gradients of {name}: ``ograd`` (N, num_filter, OH, OW) and the forward
    inputs but the bias -> the gradients of those inputs (bilinear weights into the data,
    bilinear slopes into the offsets). Not differentiable again."""


@_dconv_ops('_contrib_DeformableConvolution', modulated=False)
class DeformableConvolution:
    """2-D deformable convolution (Deformable ConvNets v1).

    ``data`` (N, C, H, W), ``offset`` (N, DG * 2 * kh * kw, OH, OW) (DG =
    ``num_deformable_group``; per tap (y, x) offsets, the taps in row-major order),
    ``weight`` (num_filter, C / num_group, kh, kw), ``bias`` (num_filter,) unless
    ``no_bias`` -> (N, num_filter, OH, OW), sizes as Convolution's. Tap (i, j) of output (y,
    x) reads channel group g's image bilinearly at ``(y * stride - pad + i * dilate +
    offset_y, ...)``: zero outside [0, H) x [0, W), the last row/column repeated over
    [H - 1, H) (MXNet's CPU kernel). Then a grouped convolution's matmul. ``workspace`` is
    accepted. Gradients reach every input.
    """


@_dconv_ops('_contrib_ModulatedDeformableConvolution', modulated=True)
class ModulatedDeformableConvolution:
    """2-D modulated deformable convolution (Deformable ConvNets v2): DeformableConvolution
    with a ``mask`` (N, DG * kh * kw, OH, OW) that scales each tap's sample.

    Samples are bilinear with zeros outside the image, for taps in (-1, H) x (-1, W).
    ``im2col_step`` (images per batch of MXNet's im2col) and ``workspace`` are accepted; any
    batch size works. Gradients reach every input (MXNet computes them on GPUs only).
    """
