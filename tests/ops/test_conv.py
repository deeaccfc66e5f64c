"""Cases for hybridlib/ops/conv.py: Convolution, Deconvolution, Pooling, im2col/col2im and
their internal backward operators (the resizing operators are in test_resize.py, which
imports ``deconv_ref``, ``_adjoint`` and ``_np`` from here).

The references are plain loops over output positions written from MXNet's definitions; the
tests at the end pin numbers and shapes taken from MXNet 1.9.1 itself.
"""
import itertools

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, DTypeError, NotSupportedError, ShapeError
from harness import Case, check_case, positive


# -------------------------------------------------------------------------------------------------
# Independent references
# -------------------------------------------------------------------------------------------------

def _cl(layout):
    return layout is not None and layout[-1] == 'C'


def _first(x, cl):
    return np.moveaxis(x, -1, 1) if cl else x


def _last(x, cl):
    return np.moveaxis(x, 1, -1) if cl else x


def _geometry(kernel, stride, dilate, pad):
    nd = len(kernel)
    return (tuple(stride) or (1,) * nd, tuple(dilate) or (1,) * nd, tuple(pad) or (0,) * nd)


def conv_ref(x, w, b=None, *, kernel, stride=(), dilate=(), pad=(), num_filter, num_group=1,
             layout=None, **_):
    cl = _cl(layout)
    x, w = _first(x, cl), _first(w, cl)
    s, d, p = _geometry(kernel, stride, dilate, pad)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    n, c = x.shape[:2]
    cg, fg = c // num_group, num_filter // num_group
    out_sp = [(xp.shape[2 + i] - d[i] * (k - 1) - 1) // s[i] + 1 for i, k in enumerate(kernel)]
    out = np.zeros((n, num_filter) + tuple(out_sp))
    for o in np.ndindex(*out_sp):
        for kk in np.ndindex(*kernel):
            patch = xp[(slice(None), slice(None)) + tuple(oi * si + ki * di for oi, si, ki, di
                                                          in zip(o, s, kk, d))]
            for g in range(num_group):
                wg = w[(slice(g * fg, (g + 1) * fg), slice(None)) + kk]
                out[(slice(None), slice(g * fg, (g + 1) * fg)) + o] += \
                    patch[:, g * cg:(g + 1) * cg] @ wg.T
    if b is not None:
        out += b.reshape((1, -1) + (1,) * len(kernel))
    return _last(out, cl)


def deconv_ref(x, w, b=None, *, kernel, stride=(), dilate=(), pad=(), adj=(), target_shape=(),
               num_filter, num_group=1, layout=None, **_):
    cl = _cl(layout)
    x, w = _first(x, cl), _first(w, cl)
    s, d, p = _geometry(kernel, stride, dilate, pad)
    a = tuple(adj) or (0,) * len(kernel)
    n, c = x.shape[:2]
    in_sp = x.shape[2:]
    full = [si * (ni - 1) + di * (ki - 1) + 1 for si, ni, di, ki in zip(s, in_sp, d, kernel)]
    if target_shape:
        total = [f - t for f, t in zip(full, target_shape)]
        p = tuple((t + 1) // 2 for t in total)
        a = tuple(t % 2 for t in total)
    out_sp = [f - 2 * pi + ai for f, pi, ai in zip(full, p, a)]
    cg, fg = c // num_group, num_filter // num_group
    big = np.zeros((n, num_filter) + tuple(f + ai for f, ai in zip(full, a)))
    for i in np.ndindex(*in_sp):
        for kk in np.ndindex(*kernel):
            at = tuple(ii * si + ki * di for ii, si, ki, di in zip(i, s, kk, d))
            for g in range(num_group):
                big[(slice(None), slice(g * fg, (g + 1) * fg)) + at] += \
                    x[(slice(None), slice(g * cg, (g + 1) * cg)) + i] @ \
                    w[(slice(g * cg, (g + 1) * cg), slice(None)) + kk]
    out = big[(slice(None), slice(None)) + tuple(slice(pi, pi + o) for pi, o in zip(p, out_sp))]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * len(kernel))
    return _last(out, cl)


def wgrad_ref(g, x, *, kernel, stride=(), dilate=(), pad=(), num_filter, num_group=1, **_):
    """dW[f, c, k] = sum over batch and windows of g * the input at that window and offset."""
    s, d, p = _geometry(kernel, stride, dilate, pad)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    c = x.shape[1]
    cg, fg = c // num_group, num_filter // num_group
    dw = np.zeros((num_filter, cg) + tuple(kernel))
    for o in np.ndindex(*g.shape[2:]):
        for kk in np.ndindex(*kernel):
            patch = xp[(slice(None), slice(None)) + tuple(oi * si + ki * di for oi, si, ki, di
                                                          in zip(o, s, kk, d))]
            for grp in range(num_group):
                dw[(slice(grp * fg, (grp + 1) * fg), slice(None)) + kk] += \
                    g[(slice(None), slice(grp * fg, (grp + 1) * fg)) + o].T @ \
                    patch[:, grp * cg:(grp + 1) * cg]
    return dw


def _pool_windows(sp, kernel, stride, pad, convention, global_pool):
    """MXNet's windows: per output index, (start, end) with end clipped at n + pad."""
    nd = len(sp)
    if global_pool:
        kernel, stride, pad = tuple(sp), (1,) * nd, (0,) * nd
    s = tuple(stride) or (1,) * nd
    p = (0,) * nd if convention == 'same' or not pad else tuple(pad)
    out = []
    for n, k, si, pi in zip(sp, kernel, s, p):
        if global_pool:
            m = 1
        elif convention == 'valid':
            m = (n + 2 * pi - k) // si + 1
        elif convention == 'full':
            m = int(np.ceil((n + 2 * pi - k) / si)) + 1
        else:
            m = int(np.ceil(n / si))
        out.append([(o * si - pi, min(o * si - pi + k, n + pi)) for o in range(m)])
    return out


def pool_ref(x, *, kernel=(), pool_type='max', global_pool=False, pooling_convention='valid',
             stride=(), pad=(), p_value=None, count_include_pad=None, layout=None, **_):
    cl = _cl(layout)
    x = _first(x, cl)
    sp = x.shape[2:]
    wins = _pool_windows(sp, kernel, stride, pad, pooling_convention, global_pool)
    out = np.zeros(x.shape[:2] + tuple(len(w) for w in wins))
    for o in np.ndindex(*out.shape[2:]):
        bounds = [wins[i][oi] for i, oi in enumerate(o)]
        size = np.prod([e - s for s, e in bounds])
        clip = tuple(slice(max(s, 0), min(e, n)) for (s, e), n in zip(bounds, sp))
        win = x[(slice(None), slice(None)) + clip].reshape(x.shape[:2] + (-1,))
        count = win.shape[-1]
        if pool_type == 'max':
            val = win.max(-1) if count else np.full(x.shape[:2], np.finfo(np.float64).min)
        elif pool_type == 'sum':
            val = win.sum(-1)
        elif pool_type == 'lp':
            val = np.sum(win ** p_value, -1)
            val = np.cbrt(val) if p_value == 3 else val ** (1.0 / p_value)
        else:
            div = count if count_include_pad is False else size
            val = win.sum(-1) / div if div > 0 else 0 * win.sum(-1)
        out[(slice(None), slice(None)) + o] = val
    return _last(out, cl)


def pool_backward_ref(g, x, y=None, *, kernel=(), pool_type='max', global_pool=False,
                      pooling_convention='valid', stride=(), pad=(), count_include_pad=None,
                      layout=None, gather=None, **_):
    """Scatter g to each window's first maximum (max), or evenly (avg/sum); with ``gather``
    (shape of x) instead return, per window, gather's value at that first maximum."""
    cl = _cl(layout)
    x, g = _first(x, cl), _first(g, cl)
    sp = x.shape[2:]
    wins = _pool_windows(sp, kernel, stride, pad, pooling_convention, global_pool)
    dx = np.zeros_like(x)
    picked = np.zeros(g.shape)
    h = None if gather is None else _first(gather, cl)
    for o in np.ndindex(*g.shape[2:]):
        bounds = [wins[i][oi] for i, oi in enumerate(o)]
        size = np.prod([e - s for s, e in bounds])
        ranges = [range(max(s, 0), min(e, n)) for (s, e), n in zip(bounds, sp)]
        cells = list(itertools.product(*ranges))
        for b, ch in np.ndindex(*x.shape[:2]):
            gv = g[(b, ch) + o]
            if pool_type == 'max':
                if not cells:
                    continue
                best = max(cells, key=lambda c: (x[(b, ch) + c], -cells.index(c)))
                dx[(b, ch) + best] += gv
                if h is not None:
                    picked[(b, ch) + o] = h[(b, ch) + best]
            else:
                div = 1 if pool_type == 'sum' else (len(cells) if count_include_pad is False
                                                    else size)
                for c in cells:
                    dx[(b, ch) + c] += gv / max(div, 1)
    return _last(picked if h is not None else dx, cl)


def _adjoint(forward, in_shape, g):
    """The transposed map of a linear ``forward`` applied to g (by unit impulses)."""
    out = np.zeros(in_shape)
    for idx in np.ndindex(*in_shape):
        e = np.zeros(in_shape)
        e[idx] = 1
        out[idx] = np.sum(forward(e) * g)
    return out


def im2col_ref(x, *, kernel, stride=(), dilate=(), pad=(), **_):
    s, d, p = _geometry(kernel, stride, dilate, pad)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    grid = [(xp.shape[2 + i] - d[i] * (k - 1) - 1) // s[i] + 1 for i, k in enumerate(kernel)]
    cols = np.zeros(x.shape[:2] + tuple(kernel) + tuple(grid))
    for o in np.ndindex(*grid):
        for kk in np.ndindex(*kernel):
            cols[(slice(None), slice(None)) + kk + o] = xp[
                (slice(None), slice(None)) + tuple(oi * si + ki * di for oi, si, ki, di
                                                   in zip(o, s, kk, d))]
    return cols.reshape(x.shape[0], -1, int(np.prod(grid)))


def col2im_ref(cols, *, output_size, kernel, stride=(), dilate=(), pad=(), **kw):
    n = cols.shape[0]
    c = cols.shape[1] // int(np.prod(kernel))
    shape = (n, c) + tuple(output_size)
    return _adjoint(lambda e: im2col_ref(e, kernel=kernel, stride=stride, dilate=dilate,
                                         pad=pad), shape, cols)


# -------------------------------------------------------------------------------------------------
# Cases
# -------------------------------------------------------------------------------------------------

_RNG = np.random.default_rng(7)


def _fixed(shape, low=-1.0, high=1.0):
    return _RNG.uniform(low, high, size=shape)


CONV = dict(kernel=(3, 2), stride=(2, 1), dilate=(1, 2), pad=(1, 1), num_filter=4, num_group=2)
MAXP = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pooling_convention='full')
AVGP = dict(MAXP, pool_type='avg', count_include_pad=False)
X_POOL = _fixed((1, 2, 4, 5))
X_POOL_NHWC = _fixed((1, 4, 5, 2))
CONV_CASES = [
    Case('Convolution', [(1, 4, 6, 4), (4, 2, 3, 2), (4,)], CONV, ref=conv_ref, name='2d'),
    Case('Convolution', [(2, 3, 7), (2, 3, 3)],
         dict(kernel=(3,), stride=(2,), pad=(1,), num_filter=2, no_bias=True),
         ref=conv_ref, name='1d'),
    Case('Convolution', [(1, 2, 3, 4, 3), (2, 2, 2, 2, 2), (2,)],
         dict(kernel=(2, 2, 2), stride=(1, 2, 1), pad=(1, 0, 0), num_filter=2),
         ref=conv_ref, name='3d'),
    Case('Convolution', [(1, 4, 4, 4), (4, 1, 3, 3)],
         dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=4, num_group=4, no_bias=True),
         ref=conv_ref, name='depthwise'),
    Case('Convolution', [(2, 3, 5, 5), (4, 3, 1, 1), (4,)],
         dict(kernel=(1, 1), stride=(2, 2), num_filter=4), ref=conv_ref, name='1x1_stride2'),
    Case('Convolution', [(1, 5, 4, 4), (4, 3, 2, 2)],
         dict(CONV, kernel=(3, 2), layout='NHWC', no_bias=True, stride=(1, 1), pad=(0, 1)),
         ref=conv_ref, name='nhwc'),
    Case('Convolution', [(1, 2, 7), (2, 2, 3), (2,)],
         dict(kernel=(3,), num_filter=2, dilate=(2,)),
         ref=conv_ref, name='dilate1d'),
    Case('Deconvolution', [(1, 4, 2, 3), (4, 2, 3, 3), (4,)],
         dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 0), num_filter=4, num_group=2,
              no_bias=False), ref=deconv_ref, name='adj_groups'),
    Case('Deconvolution', [(1, 2, 3, 3), (2, 1, 3, 3)],
         dict(kernel=(3, 3), stride=(2, 2), target_shape=(4, 6), num_filter=1),
         ref=deconv_ref, name='target_shape'),
    Case('Deconvolution', [(1, 2, 3, 2), (2, 2, 2, 3)],
         dict(kernel=(2, 3), stride=(1, 2), dilate=(2, 1), pad=(1, 0), num_filter=2),
         ref=deconv_ref, name='dilate'),
    Case('Deconvolution', [(2, 2, 4), (2, 3, 3)],
         dict(kernel=(3,), stride=(3,), pad=(1,), adj=(2,), num_filter=3), ref=deconv_ref,
         name='1d'),
    Case('Deconvolution', [(1, 2, 2, 2, 2), (2, 1, 2, 2, 3)],
         dict(kernel=(2, 2, 3), stride=(2, 1, 2), pad=(0, 1, 1), num_filter=1),
         ref=deconv_ref, name='3d'),
    Case('Deconvolution', [(1, 3, 2, 2), (2, 3, 3, 2), (2,)],
         dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=2, layout='NHWC',
              no_bias=False), ref=deconv_ref, name='nhwc'),
    Case('_backward_Convolution_weight', [(1, 4, 3, 4), (1, 4, 5, 4)], CONV, ref=wgrad_ref),
    Case('_backward_Convolution_weight', [(2, 2, 4), (2, 2, 7)],
         dict(kernel=(3,), stride=(2,), pad=(1,), num_filter=2), ref=wgrad_ref, name='1d'),
    Case('_backward_Convolution_bias', [(2, 3, 2, 2)], ref=lambda g: g.sum(axis=(0, 2, 3))),
    Case('_backward_Convolution_bias', [(2, 2, 2, 3)], dict(layout='NHWC'),
         ref=lambda g, layout: g.sum(axis=(0, 1, 2)), name='nhwc'),
    Case('_broadcast_Convolution_bias', [(3,), (2, 3, 2, 2)], grad_inputs=[0],
         ref=lambda b, like: np.broadcast_to(b.reshape(1, 3, 1, 1), like.shape)),
    Case('_broadcast_Convolution_bias', [(2,), (1, 3, 2, 2)], dict(layout='NHWC'),
         grad_inputs=[0], name='nhwc',
         ref=lambda b, like, layout: np.broadcast_to(b, like.shape)),
]

POOL_CASES = [
    Case('Pooling', [(1, 2, 4, 5)], MAXP, ref=pool_ref, name='max_full'),
    Case('Pooling', [(1, 2, 5, 5)], dict(kernel=(2, 2), stride=(2, 2), pad=(1, 1),
                                         pooling_convention='full'),
         ref=pool_ref, name='max_empty_window', check_float32=False,
         grad=False),   # the lowest double in the loss overflows finite differences
    Case('Pooling', [(1, 2, 4, 5)], dict(AVGP, count_include_pad=True), ref=pool_ref,
         name='avg_full'),
    Case('Pooling', [(1, 2, 4, 5)], AVGP, ref=pool_ref, name='avg_no_pad_count'),
    Case('Pooling', [(1, 2, 5, 5)], dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                         pool_type='avg'), ref=pool_ref, name='avg_valid'),
    Case('Pooling', [(1, 2, 4, 5)], dict(kernel=(2, 3), stride=(1, 2), pad=(1, 1),
                                         pool_type='sum', pooling_convention='full'),
         ref=pool_ref, name='sum'),
    Case('Pooling', [(1, 2, 4, 4)], dict(kernel=(2, 2), stride=(2, 2), pool_type='lp',
                                         p_value=2), ref=pool_ref, name='lp2'),
    Case('Pooling', [positive((1, 2, 3, 4))], dict(kernel=(2, 2), stride=(1, 2), pad=(1, 0),
                                                   pool_type='lp', p_value=3),
         ref=pool_ref, name='lp3'),
    Case('Pooling', [(1, 2, 4, 4)], dict(kernel=(2, 2), stride=(2, 1), pool_type='lp',
                                         p_value=1), ref=pool_ref, name='lp1'),
    Case('Pooling', [(1, 2, 7)], dict(kernel=(3,), stride=(2,), pooling_convention='same',
                                      pool_type='avg'), ref=pool_ref, name='same_1d'),
    Case('Pooling', [(2, 2, 7)], dict(kernel=(3,), stride=(2,), pad=(1,)), ref=pool_ref,
         name='max_1d'),
    Case('Pooling', [(1, 1, 3, 4, 3)], dict(kernel=(2, 3, 2), stride=(2, 1, 2), pad=(1, 1, 0),
                                            pool_type='avg', pooling_convention='full'),
         ref=pool_ref, name='avg_3d'),
    Case('Pooling', [(2, 2, 3, 4)], dict(kernel=(1, 1), global_pool=True), ref=pool_ref,
         name='global_max'),
    Case('Pooling', [(2, 2, 3, 4)], dict(kernel=(1, 1), global_pool=True, pool_type='avg',
                                         pooling_convention='full'), ref=pool_ref,
         name='global_avg'),
    Case('Pooling', [(2, 2, 3, 3)], dict(global_pool=True, pool_type='lp', p_value=2),
         ref=pool_ref, name='global_lp2'),
    Case('Pooling', [(1, 4, 5, 2)], dict(MAXP, layout='NHWC'), ref=pool_ref, name='nhwc'),
    Case('Pooling', [(1, 5, 2)], dict(kernel=(2,), stride=(2,), pool_type='avg',
                                      layout='NWC'), ref=pool_ref, name='nwc'),
    Case('_backward_Pooling', [(1, 2, 3, 3), X_POOL, pool_ref(X_POOL, **MAXP)], MAXP,
         grad_inputs=[0], ref=pool_backward_ref, name='max'),
    Case('_backward_Pooling', [(1, 2, 3, 3), X_POOL, pool_ref(X_POOL, **AVGP)], AVGP,
         grad_inputs=[0], ref=pool_backward_ref, name='avg'),
    Case('_backward_Pooling', [(1, 2, 3, 3), X_POOL, (1, 2, 3, 3)],
         dict(MAXP, pool_type='sum'), grad_inputs=[0], ref=pool_backward_ref, name='sum'),
    Case('_backward_Pooling', [(2, 2, 1, 1), X_POOL[[0, 0]],
                               pool_ref(X_POOL[[0, 0]], global_pool=True)],
         dict(global_pool=True), grad_inputs=[0], ref=pool_backward_ref, name='global_max'),
    Case('_backward_Pooling', [(1, 3, 3, 2), X_POOL_NHWC,
                               pool_ref(X_POOL_NHWC, layout='NHWC', **MAXP)],
         dict(MAXP, layout='NHWC'), grad_inputs=[0], ref=pool_backward_ref, name='max_nhwc'),
    Case('_backward_Pooling_gather', [(1, 2, 4, 5), X_POOL, pool_ref(X_POOL, **MAXP)], MAXP,
         grad_inputs=[0], name='max',
         ref=lambda h, x, y, **a: pool_backward_ref(np.zeros(y.shape), x, gather=h, **a)),
    Case('_backward_Pooling_gather', [(1, 2, 4, 5), X_POOL,
                                      pool_ref(X_POOL, global_pool=True)],
         dict(global_pool=True), grad_inputs=[0], name='global',
         ref=lambda h, x, y, **a: pool_backward_ref(np.zeros(y.shape), x, gather=h, **a)),
]

IM2COL_CASES = [
    Case('im2col', [(1, 2, 4, 5)], dict(kernel=(2, 3), stride=(1, 2), pad=(1, 0)),
         ref=im2col_ref),
    Case('im2col', [(1, 1, 5, 4)], dict(kernel=(2, 2), stride=(2, 1), pad=(1, 1),
                                        dilate=(2, 2)), ref=im2col_ref, name='dilate'),
    Case('im2col', [(2, 2, 5)], dict(kernel=(2,), stride=(2,)), ref=im2col_ref, name='1d'),
    Case('col2im', [(1, 12, 10)], dict(output_size=(4, 5), kernel=(2, 3), stride=(1, 2),
                                       pad=(1, 0)), ref=col2im_ref),
]

CASES = CONV_CASES + POOL_CASES + IM2COL_CASES


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_conv(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet 1.9.1's numbers and shapes (obtained from the oracle, pasted as literals)
# -------------------------------------------------------------------------------------------------

def _np(x):
    return x.asnumpy()


def test_pooling_output_sizes_with_padding():
    x = nd.arange(49).reshape((1, 1, 7, 7))
    for convention in ('valid', 'full'):
        y = nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type='avg',
                       pooling_convention=convention)
        assert y.shape == (1, 1, 4, 4)
        np.testing.assert_allclose(_np(y)[0, 0, 0], [1.7777778, 3.6666667, 5.0000005, 4.0],
                                   rtol=1e-6)
    x = nd.arange(36).reshape((1, 1, 6, 6))
    kw = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type='avg')
    assert nd.Pooling(x, pooling_convention='valid', **kw).shape == (1, 1, 3, 3)
    full = nd.Pooling(x, pooling_convention='full', **kw)
    np.testing.assert_allclose(_np(full)[0, 0], [[1.5555556, 3.3333333, 4.666667, 2.6666667],
                                                 [8.333334, 14., 15.999999, 8.5],
                                                 [16.333332, 26., 28., 14.5],
                                                 [10.166666, 16., 17., 8.75]], rtol=1e-6)
    nocount = nd.Pooling(x, pooling_convention='full', count_include_pad=False, **kw)
    np.testing.assert_allclose(_np(nocount)[0, 0], [[3.5, 5., 7., 8.], [12.5, 14., 16., 17.],
                                                    [24.5, 26., 28., 29.],
                                                    [30.5, 32., 34., 35.]], rtol=1e-6)
    mx_max = nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pooling_convention='full')
    np.testing.assert_array_equal(_np(mx_max)[0, 0], [[7, 9, 11, 11], [19, 21, 23, 23],
                                                      [31, 33, 35, 35], [31, 33, 35, 35]])


def test_pooling_empty_windows():
    x = nd.arange(1, 26).reshape((1, 1, 5, 5))
    kw = dict(kernel=(2, 2), stride=(2, 2), pad=(1, 1), pooling_convention='full')
    y = _np(nd.Pooling(x, **kw))[0, 0]
    low = np.finfo(np.float32).min
    np.testing.assert_array_equal(y, [[1, 3, 5, low], [11, 13, 15, low], [21, 23, 25, low],
                                      [low] * 4])
    y64 = _np(nd.Pooling(x.astype('float64'), **kw))
    assert y64[0, 0, 0, 3] == np.finfo(np.float64).min
    y = _np(nd.Pooling(x, pool_type='avg', count_include_pad=False, **kw))[0, 0]
    np.testing.assert_allclose(y, [[1, 2.5, 4.5, 0], [8.5, 10, 12, 0], [18.5, 20, 22, 0],
                                   [0, 0, 0, 0]])
    x.attach_grad()
    with autograd.record():
        y = nd.Pooling(x, pool_type='avg', **kw)
    y.backward(nd.ones_like(y))
    np.testing.assert_allclose(_np(x.grad), np.full((1, 1, 5, 5), 0.25))


def test_pooling_same_convention():
    x = nd.arange(1, 9).reshape((1, 1, 8))
    kw = dict(kernel=(3,), stride=(2,), pooling_convention='same', pad=(0, 0, 0))
    np.testing.assert_array_equal(_np(nd.Pooling(x, **kw)).ravel(), [3, 5, 7, 8])
    np.testing.assert_array_equal(_np(nd.Pooling(x, pool_type='avg', **kw)).ravel(),
                                  [2, 4, 6, 7.5])
    with pytest.raises(AttributeParseError, match='1-D'):
        nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(3, 3), pooling_convention='same')


def test_max_pool_ties_go_to_the_first_maximum():
    x = nd.array([[[[1, 3, 3], [3, 2, 1], [0, 3, 3]]]])
    x.attach_grad()
    with autograd.record():
        y = nd.Pooling(x, kernel=(2, 2), stride=(1, 1))
    y.backward(nd.ones_like(y))
    np.testing.assert_array_equal(_np(x.grad)[0, 0], [[0, 2, 0], [1, 0, 0], [0, 1, 0]])
    # NaN is skipped, as MXNet's running maximum does
    y = nd.Pooling(nd.array([[[[np.nan, 1], [2, 0]]]]), kernel=(2, 2))
    assert _np(y).item() == 2


@pytest.mark.parametrize('p,out,grad', [
    (1, [[1., -2.5], [1., 0.5]], np.ones((2, 4))),
    (3, [[1.9129312, -2.9953632], [1.481248, 1.9682486]],
     [[0.27327588, 1.0931035, 1.0030982, 0.02786385],
      [1.0254793, 0.11394216, 1.6133184, 1.0325238]])])
def test_lp_pooling_matches_mxnet(p, out, grad):
    x = nd.array([[[[-1., 2., -3., 0.5], [1.5, -0.5, 2.5, -2]]]])
    x.attach_grad()
    with autograd.record():
        y = nd.Pooling(x, kernel=(1, 2), stride=(1, 2), pool_type='lp', p_value=p)
    y.backward(nd.ones_like(y))
    np.testing.assert_allclose(_np(y)[0, 0], out, rtol=1e-6)
    np.testing.assert_allclose(_np(x.grad)[0, 0], grad, rtol=1e-6)


def test_deconvolution_adj_and_target_shape():
    x = nd.arange(1, 10).reshape((1, 1, 3, 3))
    w = nd.ones((1, 1, 3, 3))
    kw = dict(kernel=(3, 3), stride=(2, 2), num_filter=1)
    y = _np(nd.Deconvolution(x, w, target_shape=(4, 4), **kw))[0, 0]
    np.testing.assert_array_equal(y, [[12, 7, 16, 9], [9, 5, 11, 6], [24, 13, 28, 15],
                                      [15, 8, 17, 9]])
    y = _np(nd.Deconvolution(x, w, target_shape=(6, 5), **kw))[0, 0]
    np.testing.assert_array_equal(y[:2], [[1, 3, 2, 5, 3], [5, 12, 7, 16, 9]])
    assert y.shape == (6, 5)
    y = _np(nd.Deconvolution(x, w, pad=(0, 1), adj=(1, 0), **kw))[0, 0]
    assert y.shape == (8, 5)
    np.testing.assert_array_equal(y[[0, 6, 7]], [[1, 3, 2, 5, 3], [7, 15, 8, 17, 9], [0] * 5])
    d = sym.var('d')
    shapes = sym.Deconvolution(d, kernel=(3, 3), num_filter=6, stride=(2, 2), pad=(1, 1),
                               adj=(1, 1)).infer_shape(d=(2, 4, 5, 5))
    assert shapes[0][1] == (4, 6, 3, 3) and shapes[1] == [(2, 6, 10, 10)]
    shapes = sym.Deconvolution(d, kernel=(3, 3), num_filter=6, num_group=2, no_bias=False,
                               layout='NHWC').infer_shape(d=(2, 5, 5, 4))
    assert shapes[0][1:] == [(4, 3, 3, 3), (6,)] and shapes[1] == [(2, 7, 7, 6)]
    with pytest.raises(ShapeError, match='smaller than stride'):
        nd.Deconvolution(x, w, adj=(2, 2), **kw)
    with pytest.raises(ShapeError, match='too big'):
        nd.Deconvolution(x, w, target_shape=(12, 12), **kw)


def test_im2col_matches_mxnet():
    x = nd.arange(2 * 2 * 4 * 5).reshape((2, 2, 4, 5))
    kw = dict(kernel=(2, 3), stride=(1, 2), pad=(1, 0))
    c = nd.im2col(x, **kw)
    assert c.shape == (2, 12, 10)
    np.testing.assert_array_equal(_np(c)[0, :3], [[0, 0, 0, 2, 5, 7, 10, 12, 15, 17],
                                                  [0, 0, 1, 3, 6, 8, 11, 13, 16, 18],
                                                  [0, 0, 2, 4, 7, 9, 12, 14, 17, 19]])
    back = nd.col2im(c, output_size=(4, 5), **kw)
    np.testing.assert_array_equal(_np(back)[0, 0], [[0, 2, 8, 6, 8], [10, 12, 28, 16, 18],
                                                    [20, 22, 48, 26, 28], [30, 32, 68, 36, 38]])
    with pytest.raises(ShapeError, match='col2im'):
        nd.col2im(c, output_size=(5, 5), **kw)


# -------------------------------------------------------------------------------------------------
# Shape inference, errors, graphs
# -------------------------------------------------------------------------------------------------

def test_convolution_infers_weight_bias_and_channels():
    d = sym.var('d')
    conv = sym.Convolution(d, kernel=(3, 3), num_filter=6, stride=(2, 2), dilate=(2, 2),
                           pad=(1, 1), num_group=2, name='c')
    assert conv.list_arguments() == ['d', 'c_weight', 'c_bias']
    args, outs, _ = conv.infer_shape(d=(2, 4, 9, 9))
    assert args == [(2, 4, 9, 9), (6, 2, 3, 3), (6,)] and outs == [(2, 6, 4, 4)]
    args, outs, _ = conv.infer_shape_partial(d=(0, 4, 9, 0))
    assert args[1] == (6, 2, 3, 3) and outs == [(0, 6, 4, 0)]
    args, outs, _ = conv.infer_shape_partial(c_weight=(6, 2, 3, 3))
    assert args[0] in ((0, 4, 0, 0), ())
    nhwc = sym.Convolution(d, kernel=(3, 3), num_filter=6, layout='NHWC', num_group=2)
    args, outs, _ = nhwc.infer_shape(d=(2, 5, 5, 4))
    assert args[1:] == [(6, 3, 3, 2), (6,)] and outs == [(2, 3, 3, 6)]
    pool = sym.Pooling(d, kernel=(3, 3), global_pool=True)
    assert pool.infer_shape_partial(d=(2, 3, 0, 6))[1] == [(2, 3, 1, 1)]


def test_errors_name_the_operator_and_shapes():
    x = nd.ones((2, 4, 5, 5))
    with pytest.raises(ShapeError, match=r'Convolution.*\(6, 3, 3, 3\).*4'):
        nd.Convolution(x, nd.ones((6, 3, 3, 3)), kernel=(3, 3), num_filter=6, no_bias=True)
    with pytest.raises(ShapeError, match='exceeds the input'):
        nd.Convolution(x, nd.ones((6, 4, 7, 7)), kernel=(7, 7), num_filter=6, no_bias=True)
    with pytest.raises(ShapeError, match='num_group'):
        sym.Convolution(sym.var('d'), kernel=(3, 3), num_filter=6,
                        num_group=3).infer_shape(d=(2, 4, 5, 5))
    with pytest.raises(AttributeParseError, match='divisible'):
        nd.Convolution(x, kernel=(3, 3), num_filter=5, num_group=2)
    with pytest.raises(AttributeParseError, match='stride'):
        nd.Convolution(x, kernel=(3, 3), stride=(2,), num_filter=4)
    with pytest.raises(AttributeParseError, match='1 to 3'):
        nd.Convolution(x, kernel=(1, 1, 1, 1), num_filter=4)
    with pytest.raises(AttributeParseError, match='layout'):
        nd.Convolution(x, kernel=(3,), num_filter=4, layout='NCHW')
    with pytest.raises(ShapeError, match='4 dimensions'):
        nd.Convolution(nd.ones((2, 4, 5)), nd.ones((4, 4, 3, 3)), kernel=(3, 3), num_filter=4,
                       no_bias=True)
    with pytest.raises(DTypeError, match='floating'):
        nd.Convolution(nd.ones((1, 1, 3, 3), dtype='int32'), nd.ones((1, 1, 2, 2),
                       dtype='int32'), kernel=(2, 2), num_filter=1, no_bias=True)
    with pytest.raises(AttributeParseError, match='kernel is required'):
        nd.Pooling(x)
    with pytest.raises(AttributeParseError, match='p_value'):
        nd.Pooling(x, kernel=(2, 2), pool_type='lp')
    with pytest.raises(ShapeError, match='Pooling.*exceeds'):
        nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(5, 5))
    with pytest.raises(NotSupportedError, match='lp'):
        nd.op._backward_Pooling(x, x, x, kernel=(1, 1), pool_type='lp', p_value=2)


def test_graph_backward_and_mxnet_json():
    """A conv/pool graph written as MXNet writes it loads, runs and differentiates."""
    text = ('{"nodes": [{"op": "null", "name": "data", "inputs": []}, '
            '{"op": "null", "name": "w", "attrs": {"kernel": "(3, 3)", "num_filter": "4"}, '
            '"inputs": []}, {"op": "null", "name": "b", "inputs": []}, '
            '{"op": "Convolution", "name": "conv0", "attrs": {"cudnn_tune": "None", '
            '"dilate": "(1, 1)", "kernel": "(3, 3)", "layout": "NCHW", "no_bias": "False", '
            '"num_filter": "4", "num_group": "2", "pad": "(1, 1)", "stride": "(2, 2)", '
            '"workspace": "1024"}, "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}, '
            '{"op": "Pooling", "name": "pool0", "attrs": {"count_include_pad": "True", '
            '"global_pool": "False", "kernel": "(2, 2)", "layout": "NCHW", "pad": "(0, 0)", '
            '"pool_type": "avg", "pooling_convention": "full", "stride": "(2, 2)", '
            '"p_value": "None"}, "inputs": [[3, 0, 0]]}], "arg_nodes": [0, 1, 2], '
            '"node_row_ptr": [0, 1, 2, 3, 4, 5], "heads": [[4, 0, 0]], '
            '"attrs": {"mxnet_version": ["int", 10901]}}')
    net = sym.fromjson(text)
    rng = np.random.default_rng(0)
    values = dict(data=rng.uniform(-1, 1, (2, 4, 7, 7)), w=rng.uniform(-1, 1, (4, 2, 3, 3)),
                  b=rng.uniform(-1, 1, (4,)))
    arrays = {k: nd.array(v, dtype='float64') for k, v in values.items()}
    out = net.eval(**arrays)[0]
    conv = conv_ref(values['data'], values['w'], values['b'], kernel=(3, 3), stride=(2, 2),
                    pad=(1, 1), num_filter=4, num_group=2)
    expected = pool_ref(conv, kernel=(2, 2), stride=(2, 2), pool_type='avg',
                        pooling_convention='full')
    np.testing.assert_allclose(_np(out), expected, rtol=1e-10)
    grads = {k: nd.zeros(v.shape, dtype='float64') for k, v in values.items()}
    exe = net.bind(mx.cpu(), arrays, args_grad=grads)
    exe.forward(is_train=True)
    exe.backward([nd.ones(out.shape, dtype='float64')])
    for k, v in arrays.items():
        v.attach_grad()
    with autograd.record():
        y = nd.Pooling(nd.Convolution(arrays['data'], arrays['w'], arrays['b'], kernel=(3, 3),
                                      stride=(2, 2), pad=(1, 1), num_filter=4, num_group=2),
                       kernel=(2, 2), stride=(2, 2), pool_type='avg', pooling_convention='full')
    y.backward(nd.ones(y.shape, dtype='float64'))
    for k in values:
        np.testing.assert_allclose(_np(grads[k]), _np(arrays[k].grad), rtol=1e-12)


def test_float32_network_speed_path():
    """A LeNet-sized float32 forward/backward stays float32 and agrees with float64."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (4, 1, 28, 28))
    w = rng.uniform(-0.2, 0.2, (6, 1, 5, 5))
    outs = []
    for dtype in ('float32', 'float64'):
        xa, wa = nd.array(x, dtype=dtype), nd.array(w, dtype=dtype)
        wa.attach_grad()
        with autograd.record():
            y = nd.Pooling(nd.Convolution(xa, wa, kernel=(5, 5), num_filter=6, no_bias=True),
                           kernel=(2, 2), stride=(2, 2))
        y.backward(nd.ones_like(y))
        assert y.dtype == np.dtype(dtype) and wa.grad.dtype == np.dtype(dtype)
        outs.append((_np(y), _np(wa.grad)))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-4, atol=1e-3)
