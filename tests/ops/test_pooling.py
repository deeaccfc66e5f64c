"""Cases for hybridlib/ops/pooling.py: Pooling (max, avg, sum, lp; the valid, full and same
conventions; global; channel-last) and its internal backward operators.

The references are plain loops over MXNet's windows; the tests at the end pin numbers and
shapes taken from MXNet 1.9.1 itself.
"""
import itertools

import numpy as np
import pytest

from hybridlib import autograd, nd
from hybridlib.base import AttributeParseError
from harness import Case, check_case, positive
from test_conv import _cl, _first, _fixed, _last, _np


# -------------------------------------------------------------------------------------------------
# Independent references
# -------------------------------------------------------------------------------------------------

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


# -------------------------------------------------------------------------------------------------
# Cases
# -------------------------------------------------------------------------------------------------

MAXP = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pooling_convention='full')
AVGP = dict(MAXP, pool_type='avg', count_include_pad=False)
X_POOL = _fixed((1, 2, 4, 5))
X_POOL_NHWC = _fixed((1, 4, 5, 2))
CASES = [
    Case('Pooling', [(1, 2, 4, 5)], MAXP, ref=pool_ref, name='max_full'),
    # windows that tile the image: the gradient's own path (pooling._spread_max_tiles)
    Case('Pooling', [(1, 2, 4, 6)], dict(kernel=(2, 2), stride=(2, 2)), ref=pool_ref,
         name='max_tiles'),
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


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_pooling(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet 1.9.1's numbers and shapes (obtained from the oracle, pasted as literals)
# -------------------------------------------------------------------------------------------------

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


@pytest.mark.parametrize('pad, convention', [((0, 0), 'valid'), ((0, 0), 'full'),
                                              ((1, 0), 'valid'), ((1, 1), 'full')])
def test_max_pool_nan_and_infinities(pad, convention):
    # MXNet's running maximum starts at the lowest float: NaN is skipped, an all-NaN window and
    # one of -inf give the lowest float, +inf stays; with and without windows past the border
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    x[0, 0, :3, :3] = np.nan
    x[0, 1, 2:6, 1:4] = -np.inf
    x[1, 2, 4, 4] = np.inf
    x[1, 0, ::2, ::3] = np.nan
    got = _np(nd.Pooling(nd.array(x), kernel=(3, 3), stride=(2, 2), pad=pad,
                         pooling_convention=convention))
    lowest = np.finfo(np.float32).min
    want = pool_ref(np.where(np.isnan(x) | (x < lowest), lowest, x), kernel=(3, 3),
                    stride=(2, 2), pad=pad, pooling_convention=convention)
    np.testing.assert_array_equal(got, want.astype(np.float32))


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


@pytest.mark.parametrize('pool_type', ['max', 'avg', 'sum'])
@pytest.mark.parametrize('layout', ['NCHW', 'NHWC'])
def test_pooling_in_blocks_of_channels(monkeypatch, pool_type, layout):
    # large inputs are pooled a few channels at a time (blocks sized by the level-2 cache): a
    # tiny cache makes these inputs large, and the blocks must give what one pass gives
    from hybridlib.ops import pooling, tuning
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 9, 11)).astype(np.float32)
    x[1, 3, :3, :3] = np.nan
    xin = x.transpose(0, 2, 3, 1).copy() if layout == 'NHWC' else x
    kw = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type=pool_type, layout=layout)
    whole = _np(nd.Pooling(nd.array(xin), **kw))
    monkeypatch.setattr(tuning, 'l2_cache_bytes', lambda: 4 * 9 * 11 * 4 * 2)
    assert pooling._maps_per_block(np, x) == 2
    # channel-last maps are not contiguous: no blocks, which would read all of x each time
    assert pooling._maps_per_block(np, x.transpose(0, 2, 3, 1).copy().transpose(0, 3, 1, 2)) \
        is None
    blocked = _np(nd.Pooling(nd.array(xin), **kw))
    np.testing.assert_array_equal(blocked, whole)
    if layout == 'NHWC':
        blocked = blocked.transpose(0, 3, 1, 2)
    want = pool_ref(np.where(np.isnan(x), np.finfo(np.float32).min, x) if pool_type == 'max'
                    else x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type=pool_type)
    np.testing.assert_allclose(blocked, want, rtol=1e-6, atol=1e-6)
