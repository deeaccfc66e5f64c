"""Resizing of (N, C, H, W) feature maps: ``UpSampling``, ``_contrib_AdaptiveAvgPooling2D``,
``_contrib_BilinearResize2D`` and the internal backward operators their gradients are made of
(``_backward_UpSampling``, ``_backward_contrib_AdaptiveAvgPooling2D``,
``_backward_contrib_BilinearResize2D``).

Nearest UpSampling writes each input into a strided (N, C, H, s, W, s) view of the output (one
assignment per input, no index arrays); bilinear UpSampling is a grouped Deconvolution, computed
by conv.py's kernels. Adaptive average pooling and bilinear resizing are separable linear maps:
one (out, in) matrix per spatial axis (cached per size), applied as two matmuls; their gradients
apply the transposed matrices.

Gradients are written with registered operators only, so they differentiate again: nearest
UpSampling's gradient is ``_backward_UpSampling`` (block sums), whose gradient is UpSampling of
the head gradients; bilinear UpSampling's gradients are a Convolution and
``_backward_Convolution_weight``; the backward operators of AdaptiveAvgPooling2D and
BilinearResize2D have the forward operator (mode 'like' for the resize) as their gradient.
The geometry, shape-check and dtype helpers are shared with conv.py and imported from it.
"""
import functools

import numpy as np

from ..base import ShapeError
from .attrs import Bool, Count, Float, Int, Shape, Str
from .conv import Geom, _check_rank, _deconv, _float_types, _kw, _shares
from .registry import merge_shape, register

__all__ = []


def _outputs_list(result, n):
    return [result] if n == 1 else list(result)


# -------------------------------------------------------------------------------------------------
# UpSampling
# -------------------------------------------------------------------------------------------------

def _blocks(xp, a, sh, sw):
    """The (N, C, H, sh, W, sw) view of a (N, C, H * sh, W * sw) array (writes go through)."""
    n, c, oh, ow = a.shape
    st = a.strides
    return xp.lib.stride_tricks.as_strided(
        a, (n, c, oh // sh, sh, ow // sw, sw), (st[0], st[1], st[2] * sh, st[2], st[3] * sw, st[3]))


def _check_upsampling(attrs):
    if attrs.scale < 1 or attrs.num_args < 1:
        raise ValueError(f'scale ({attrs.scale}) and num_args ({attrs.num_args}) must be '
                         'positive')


def _nearest_infer(scale, mode, shapes, op='UpSampling'):
    """(input shapes, output shape) of nearest upsampling: input 0 scaled by ``scale`` sets
    the output size; every other input must scale to it by a whole factor."""
    shapes = [None if s is None else tuple(s) for s in shapes]
    for i, s in enumerate(shapes):
        if s is not None and len(s) != 4:
            raise ShapeError(f'{op}: input {i} must be 4-d (N, C, H, W), got {s}')
    first = shapes[0] or (0, 0, 0, 0)
    oh, ow = first[2] * scale, first[3] * scale
    n, chans = 0, []
    for i, s in enumerate(shapes):
        if s is None:
            chans.append(0)
            continue
        if n and s[0] and s[0] != n:
            raise ShapeError(f'{op}: input {i} has batch size {s[0]}, input 0 has {n}')
        n = n or s[0]
        chans.append(s[1])
        if s[2] and oh and (oh % s[2] or s[3] and ow and s[3] * (oh // s[2]) != ow):
            raise ShapeError(f'{op}: input {i} of shape {s} does not upsample by a whole '
                             f'factor to the output size {(oh, ow)}')
    if mode == 'sum':
        known = {c for c in chans if c}
        if len(known) > 1:
            raise ShapeError(f'{op}: multi_input_mode=sum needs the same channels, got {chans}')
        c = known.pop() if known else 0
    else:
        c = sum(chans) if all(chans) else 0
    ins = [None if s is None else (n,) + s[1:] for s in shapes]
    return ins, (n, c, oh, ow)


def _bilinear_geom(scale):
    kernel = 2 * scale - scale % 2
    pad = scale // 2              # ceil((scale - 1) / 2)
    return Geom((kernel, kernel), (scale, scale), (1, 1), (pad, pad))


def _upsample(xp, attrs, args):
    out_h, out_w = args[0].shape[2] * attrs.scale, args[0].shape[3] * attrs.scale
    if attrs.multi_input_mode == 'sum':
        chans = args[0].shape[1]
    else:
        chans = sum(a.shape[1] for a in args)
    out = xp.empty((args[0].shape[0], chans, out_h, out_w), dtype=args[0].dtype)
    start = 0
    for i, a in enumerate(args):
        s = out_h // a.shape[2]
        if attrs.multi_input_mode == 'sum':
            target = _blocks(xp, out, s, s)
        else:
            target = _blocks(xp, out[:, start:start + a.shape[1]], s, s)
            start += a.shape[1]
        if i and attrs.multi_input_mode == 'sum':
            target += a[:, :, :, None, :, None]
        else:
            target[...] = a[:, :, :, None, :, None]
    return out


@register('UpSampling')
class UpSampling:
    """Upsampling of (N, C, H, W) maps by an integer ``scale``.

    'nearest': any number of inputs; input 0 gives the output size (H * scale, W * scale),
    each other input is repeated by the whole factor that reaches it; the results are
    concatenated along channels (``multi_input_mode='concat'``) or added ('sum').
    'bilinear': inputs ``data`` (N, C, H, W) and ``weight`` (C, 1, k, k),
    k = 2 * scale - scale % 2: a Deconvolution with stride ``scale``, pad ceil((scale - 1) / 2)
    and ``num_group = num_filter = C`` (MXNet requires num_filter to equal C).
    """
    var_inits = {'weight': '["bilinear", {}]'}
    variadic = 'num_args'
    attrs = dict(scale=Count(), num_filter=Int(0), sample_type=Str(choices=('bilinear', 'nearest')),
                 multi_input_mode=Str('concat', choices=('concat', 'sum')), num_args=Int(),
                 workspace=Int(512))
    check = _check_upsampling
    infer_type = _float_types

    def list_inputs(attrs):
        if attrs.sample_type == 'bilinear':
            return ('data', 'weight')
        return tuple(f'arg{i}' for i in range(attrs.num_args))

    def infer_shape(attrs, *shapes):
        if attrs.sample_type == 'nearest':
            if len(shapes) != attrs.num_args:
                raise ShapeError(f'UpSampling: num_args is {attrs.num_args}, '
                                 f'{len(shapes)} inputs given')
            ins, out = _nearest_infer(attrs.scale, attrs.multi_input_mode, shapes)
            return ins, [out]
        if len(shapes) != 2:
            raise ShapeError(f'bilinear UpSampling takes data and weight, got {len(shapes)} '
                             'inputs')
        data, weight = shapes
        data = _check_rank(data, 4, 'data', 'UpSampling')
        k = _bilinear_geom(attrs.scale).kernel[0]
        weight = merge_shape(weight, (0, 1, k, k), 'weight')
        n, c, h, w = data or (0, 0, 0, 0)
        c = c or weight[0] or attrs.num_filter
        if c and attrs.num_filter != c or weight[0] and weight[0] != c:
            raise ShapeError(f'bilinear UpSampling: num_filter ({attrs.num_filter}), the '
                             f'channels of data and the weight {weight} must agree')
        data = (n, c, h, w) if data is not None or c else None
        return [data, (c, 1, k, k)], [(n, c, h * attrs.scale, w * attrs.scale)]

    def compute(xp, attrs, *args):
        if attrs.sample_type == 'nearest':
            return _upsample(xp, attrs, args)
        x, w = args
        geo = _bilinear_geom(attrs.scale)
        return _deconv(xp, x, w, geo, x.shape[1], tuple(n * attrs.scale for n in x.shape[2:]))

    def gradient(F, attrs, inputs, outputs, ograds):
        g = ograds[0]
        if attrs.sample_type == 'nearest':
            n = len(inputs)
            grads = F._backward_UpSampling(g, *inputs, scale=attrs.scale, num_args=n + 1,
                                           multi_input_mode=attrs.multi_input_mode)
            return _outputs_list(grads, n)
        x, w = inputs
        geo = _bilinear_geom(attrs.scale)
        c = x.shape[1]
        kw = dict(kernel=geo.kernel, stride=geo.stride, pad=geo.pad, num_filter=c, num_group=c)
        return [F.Convolution(g, w, no_bias=True, **kw),
                F._backward_Convolution_weight(x, g, **kw)]


@register('_backward_UpSampling')
class _backward_UpSampling:
    """The gradient of nearest UpSampling: ``ograd`` (N, C_out, H_out, W_out), then the
    ``num_args - 1`` upsampled inputs (for their shapes). Output i: the channels of ograd that
    came from input i, summed over each input position's block (shape of input i).
    Its gradient is UpSampling of the head gradients."""
    variadic = 'num_args'
    attrs = dict(scale=Count(), multi_input_mode=Str('concat', choices=('concat', 'sum')),
                 num_args=Int())
    check = _check_upsampling

    def num_outputs(attrs):
        return attrs.num_args - 1

    def infer_type(attrs, *dtypes):
        ins, outs = _float_types(attrs, *dtypes)
        return ins, outs * (len(dtypes) - 1)

    def infer_shape(attrs, ograd, *datas):
        if not datas:
            raise ShapeError('_backward_UpSampling needs the upsampled inputs after ograd')
        ins, out = _nearest_infer(attrs.scale, attrs.multi_input_mode, datas,
                                  '_backward_UpSampling')
        ograd = merge_shape(ograd, out, 'ograd')
        if ograd and ograd[0]:
            ins = [None if s is None else (ograd[0],) + s[1:] for s in ins]
        return [ograd] + ins, ins

    def compute(xp, attrs, ograd, *datas):
        grads, start = [], 0
        for d in datas:
            s = ograd.shape[2] // d.shape[2]
            if attrs.multi_input_mode == 'sum':
                part = ograd
            else:
                part = ograd[:, start:start + d.shape[1]]
                start += d.shape[1]
            grads.append(_blocks(xp, part, s, s).sum(axis=(3, 5)))
        return tuple(grads)

    def gradient(F, attrs, inputs, outputs, ograds):
        datas = inputs[1:]
        heads = [F.zeros_like(d) if h is None else h for h, d in zip(ograds, datas)]
        up = F.UpSampling(*heads, scale=attrs.scale, sample_type='nearest',
                          multi_input_mode=attrs.multi_input_mode, num_args=len(heads))
        return [up] + [None] * len(datas)


# -------------------------------------------------------------------------------------------------
# Adaptive average pooling and bilinear resizing: separable linear maps (matrices per axis)
# -------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=256)
def _adaptive_matrix(n_in, n_out):
    """(n_out, n_in): output i averages inputs floor(i n / m) .. ceil((i + 1) n / m) - 1."""
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        lo, hi = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return m


@functools.lru_cache(maxsize=256)
def _bilinear_matrix(n_in, n_out, align_corners):
    """(n_out, n_in) linear interpolation weights, with MXNet's float32 source coordinates:
    i * (n_in - 1) / (n_out - 1) with align_corners, else (i + 0.5) * n_in / n_out - 0.5
    (at least 0); the upper neighbour is clamped to the last input."""
    if n_in == n_out:
        return np.eye(n_in)
    m = np.zeros((n_out, n_in))
    f32 = np.float32
    if n_out > 1:
        scale = f32(n_in - 1) / f32(n_out - 1) if align_corners else f32(n_in) / f32(n_out)
    else:
        scale = f32(0)
    for i in range(n_out):
        # MXNet's float kernel compiles (i + 0.5) * scale - 0.5 to a fused multiply-add: one
        # rounding to float32 (matches its output bit for bit)
        src = scale * f32(i) if align_corners else max(f32(float(scale) * (i + 0.5) - 0.5), 0)
        lo = int(src)
        lam = float(src) - lo
        m[i, lo] += 1 - lam
        m[i, lo + (lo < n_in - 1)] += lam
    return m


def _apply_2d(xp, x, mh, mw):
    """mh @ x @ mw.T over the last two axes (an identity factor is skipped); a new array."""
    data = x
    if mh.shape[0] != mh.shape[1] or not np.array_equal(mh, np.eye(mh.shape[0])):
        x = xp.matmul(xp.asarray(mh, dtype=x.dtype), x)
    if mw.shape[0] != mw.shape[1] or not np.array_equal(mw, np.eye(mw.shape[0])):
        x = xp.matmul(x, xp.asarray(mw.T, dtype=x.dtype))
    return x.copy() if _shares(xp, x, data) else x


def _output_size(attrs):
    size = tuple(attrs.output_size) or (1,)
    return size * 2 if len(size) == 1 else size


def _check_adaptive(attrs):
    size = attrs.output_size
    if len(size) > 2 or size and min(size) < 1:
        raise ValueError(f'output_size must be one or two positive sizes, got {size}')


def _map_infer(data, out_hw, op):
    data = _check_rank(data, 4, 'data', op)
    if data is None:
        return None, None
    return data, data[:2] + tuple(out_hw)


@register('_contrib_AdaptiveAvgPooling2D')
class _contrib_AdaptiveAvgPooling2D:
    """Average pooling of (N, C, H, W) to (N, C, *output_size) with adaptive windows: output
    row i averages input rows floor(i H / OH) to ceil((i + 1) H / OH) - 1 (same for columns).
    ``output_size`` () means (1, 1), an int k means (k, k)."""
    inputs = ('data',)
    named_inputs = False
    attrs = dict(output_size=Shape(()))
    check = _check_adaptive
    infer_type = _float_types

    def infer_shape(attrs, data):
        data, out = _map_infer(data, _output_size(attrs), 'AdaptiveAvgPooling2D')
        return [data], [out]

    def compute(xp, attrs, data):
        oh, ow = _output_size(attrs)
        return _apply_2d(xp, data, _adaptive_matrix(data.shape[2], oh),
                         _adaptive_matrix(data.shape[3], ow))

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._backward_contrib_AdaptiveAvgPooling2D(ograds[0], inputs[0], **_kw(attrs))]


def _backward_map_infer(op, out_hw):
    def infer_shape(attrs, ograd, data):
        data = _check_rank(data, 4, 'data', op)
        ograd = _check_rank(ograd, 4, 'ograd', op)
        if data is not None:
            ograd = merge_shape(ograd, data[:2] + tuple(out_hw(attrs, ograd)), 'ograd')
        return [ograd, data], [data]
    return infer_shape


@register('_backward_contrib_AdaptiveAvgPooling2D')
class _backward_contrib_AdaptiveAvgPooling2D:
    """The gradient of AdaptiveAvgPooling2D: ``ograd`` (N, C, OH, OW) spread back onto the
    shape of ``data`` (N, C, H, W) (the transposed averaging); its gradient is the pooling."""
    inputs = ('ograd', 'data')
    attrs = dict(output_size=Shape(()))
    check = _check_adaptive
    infer_type = _float_types
    infer_shape = _backward_map_infer('_backward_contrib_AdaptiveAvgPooling2D',
                                      lambda attrs, ograd: _output_size(attrs))

    def compute(xp, attrs, ograd, data):
        h, w = data.shape[2:]
        return _apply_2d(xp, ograd, _adaptive_matrix(h, ograd.shape[2]).T,
                         _adaptive_matrix(w, ograd.shape[3]).T)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._contrib_AdaptiveAvgPooling2D(ograds[0], **_kw(attrs)), None]


_RESIZE_MODES = ('like', 'odd_scale', 'size', 'to_even_down', 'to_even_up', 'to_odd_down',
                 'to_odd_up')


def _check_resize(attrs):
    if not (1 <= attrs.height <= 10000 and 1 <= attrs.width <= 10000):
        raise ValueError(f'height ({attrs.height}) and width ({attrs.width}) must be in '
                         '[1, 10000]')
    if attrs.mode == 'size' and attrs.scale_height is not None and attrs.scale_width is None:
        # MXNet reads scale_width whenever scale_height is set (and ignores it otherwise)
        raise ValueError('scale_height needs scale_width')
    if attrs.mode == 'odd_scale' and (attrs.scale_height is None or attrs.scale_width is None):
        raise ValueError("mode='odd_scale' needs scale_height and scale_width")


def _resize_hw(attrs, data, like):
    """MXNet's output (height, width) of BilinearResize2D (0 where unknown)."""
    h, w = data[2], data[3]
    f32 = np.float32
    mode = attrs.mode
    if mode == 'like':
        return (like[2], like[3]) if like is not None else (0, 0)
    if mode == 'size':
        if attrs.scale_height is None:
            return attrs.height, attrs.width
        return int(f32(attrs.scale_height) * f32(h)), int(f32(attrs.scale_width) * f32(w))
    if mode == 'odd_scale':
        return tuple(int(f32(scale) * f32(n)) if n % 2 == 0 else int(f32(scale) * f32(n - 1)) + 1
                     if n else 0 for n, scale in ((h, attrs.scale_height),
                                                  (w, attrs.scale_width)))
    parity = 0 if mode.startswith('to_even') else 1
    step = -1 if mode.endswith('down') else 1
    return tuple(0 if not n else n if n % 2 == parity else n + step for n in (h, w))


@register('_contrib_BilinearResize2D')
class _contrib_BilinearResize2D:
    """Bilinear resizing of (N, C, H, W) to (N, C, OH, OW).

    The size: mode 'size' (``height``, ``width``, or int(scale * H), int(scale * W) when
    ``scale_height`` is given), 'like' (the H, W of the input ``like``), 'odd_scale'
    (int(scale * n) for even n, int(scale * (n - 1)) + 1 for odd), 'to_even_down/up',
    'to_odd_down/up' (the nearest such size). Source coordinates: i (n - 1) / (m - 1) with
    ``align_corners``, else (i + 0.5) n / m - 0.5 clamped at 0.
    """
    inputs = ('data', 'like')
    attrs = dict(height=Int(1), width=Int(1), scale_height=Float(None), scale_width=Float(None),
                 mode=Str('size', choices=_RESIZE_MODES), align_corners=Bool(True))
    check = _check_resize

    def list_inputs(attrs):
        return ('data', 'like') if attrs.mode == 'like' else ('data',)

    def infer_shape(attrs, data, like=None):
        data = _check_rank(data, 4, 'data', 'BilinearResize2D')
        like = _check_rank(like, 4, 'like', 'BilinearResize2D')
        if data is None:
            return [data, like][:1 + (attrs.mode == 'like')], [None]
        hw = _resize_hw(attrs, data, like)
        if attrs.mode != 'like' and any(n and s < 1 for n, s in zip(data[2:], hw)):
            raise ShapeError(f'BilinearResize2D: output size {hw} is empty')
        return [data, like][:1 + (attrs.mode == 'like')], [data[:2] + tuple(hw)]

    def infer_type(attrs, data, like=None):
        _float_types(attrs, data)
        return [data, like][:1 + (attrs.mode == 'like')], [data]

    def compute(xp, attrs, data, like=None):
        oh, ow = _resize_hw(attrs, data.shape, None if like is None else like.shape)
        ac = attrs.align_corners
        return _apply_2d(xp, data, _bilinear_matrix(data.shape[2], oh, ac),
                         _bilinear_matrix(data.shape[3], ow, ac))

    def gradient(F, attrs, inputs, outputs, ograds):
        g = F._backward_contrib_BilinearResize2D(ograds[0], inputs[0],
                                                 align_corners=attrs.align_corners)
        return [g] + [None] * (len(inputs) - 1)


@register('_backward_contrib_BilinearResize2D')
class _backward_contrib_BilinearResize2D:
    """The gradient of BilinearResize2D: ``ograd`` (N, C, OH, OW) sent back through the
    interpolation weights onto the shape of ``data`` (N, C, H, W). Its gradient is
    BilinearResize2D (mode 'like') of the head to ograd's size."""
    inputs = ('ograd', 'data')
    attrs = dict(align_corners=Bool(True))
    infer_type = _float_types
    infer_shape = _backward_map_infer('_backward_contrib_BilinearResize2D',
                                      lambda attrs, ograd: (ograd or (0,) * 4)[2:])

    def compute(xp, attrs, ograd, data):
        h, w = data.shape[2:]
        ac = attrs.align_corners
        return _apply_2d(xp, ograd, _bilinear_matrix(h, ograd.shape[2], ac).T,
                         _bilinear_matrix(w, ograd.shape[3], ac).T)

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._contrib_BilinearResize2D(ograds[0], inputs[0], mode='like',
                                            align_corners=attrs.align_corners), None]
