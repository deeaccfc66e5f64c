"""Cases for hybridlib/ops/conv.py: Convolution, Deconvolution, im2col/col2im and their
internal backward operators (pooling is in test_pooling.py and the resizing operators in
test_resize.py, which import the shared references and helpers from here).

The references are plain loops over output positions written from MXNet's definitions; the
tests at the end pin numbers and shapes taken from MXNet 1.9.1 itself.
"""
import json
import time

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import AttributeParseError, DTypeError, NotSupportedError, ShapeError
from hybridlib.ops import conv_last, registry, tuning
from harness import Case, check_case


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


# Cases whose shapes send the engine (conv.py) down each of its paths; test_engine_paths checks
# that they do. Each path is its own function in conv.ENGINE_PATHS.
ENGINE_CASES = [
    Case('Convolution', [(1, 4, 3, 3), (4, 2, 1, 1), (4,)],
         dict(kernel=(1, 1), num_filter=4, num_group=2), ref=conv_ref, name='pointwise'),
    Case('Convolution', [(2, 4, 4, 4), (3, 4, 3, 3), (3,)],
         dict(kernel=(3, 3), pad=(1, 1), num_filter=3), ref=conv_ref, name='windows'),
    Case('Convolution', [(1, 4, 5, 5), (3, 4, 3, 3)],
         dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=3, no_bias=True),
         ref=conv_ref, name='windows_direct'),
    Case('Convolution', [(1, 11, 7, 8), (2, 11, 3, 3), (2,)],
         dict(kernel=(3, 3), pad=(1, 1), num_filter=2), ref=conv_ref, name='rows'),
    Case('Deconvolution', [(1, 2, 4, 4), (2, 3, 3, 3)],
         dict(kernel=(3, 3), pad=(1, 1), num_filter=3), ref=deconv_ref, name='wide'),
    Case('_backward_Convolution_weight', [(1, 8, 3, 3), (1, 8, 3, 3)],
         dict(kernel=(3, 3), pad=(1, 1), num_filter=8), ref=wgrad_ref, name='large_weight'),
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

CASES = CONV_CASES + ENGINE_CASES + IM2COL_CASES


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_conv(case):
    check_case(case)


def _engine(conv, case):
    """(path function, its _Windows) that a channel-first Convolution, Deconvolution or
    weight gradient case takes."""
    (a, b), attrs = case.inputs[:2], registry.get(case.op).parse_attrs(case.attrs)
    geo, groups = conv._geom(attrs), attrs.num_group
    if case.op == 'Convolution':
        run = conv._conv_engine(np, geo, groups, a, b[0])
    elif case.op == 'Deconvolution':
        geo, image = conv._deconv_geom(attrs, a[2:])
        run = conv._deconv_engine(np, geo, groups, a, b[1] * groups, image)
    else:
        run = conv._wgrad_engine(np, geo, groups, a, b)
    if isinstance(run, tuning.Tuned):       # the rule-based path is the first
        run = run.paths[0]
    windows = [w for w in run.args if isinstance(w, conv._Windows)]
    return getattr(run.func, '__func__', run.func), windows


def test_engine_paths():
    """The cases above take every path of the convolution engine (the ones their names say),
    and gather and scatter windows both ways (wide and exact)."""
    from hybridlib.ops import conv
    expect = {'Convolution-2d': conv._conv_per_image,
              'Convolution-pointwise': conv._conv_pointwise,
              'Convolution-windows': conv._conv_windows,
              'Convolution-windows_direct': conv._conv_windows_direct,
              'Convolution-rows': conv._Windows.convolve_rows,
              'Deconvolution-wide': conv._deconv_windows,
              '_backward_Convolution_weight': conv._wgrad_by_windows,
              '_backward_Convolution_weight-large_weight': conv._wgrad_by_gradient}
    taken, gathers, scatters = {}, set(), set()
    for case in CONV_CASES + ENGINE_CASES:
        if case.op in ('Convolution', 'Deconvolution', '_backward_Convolution_weight') \
                and not case.attrs.get('layout'):
            path, windows = _engine(conv, case)
            taken[repr(case)] = path
            (scatters if case.op == 'Deconvolution' else gathers).update(
                w.wide for w in windows)
    for name, path in expect.items():
        assert taken[name] is path, f'{name} takes {taken[name].__qualname__}'
    assert gathers == scatters == {True, False}


PATH_CASES = [  # (data, weight, attributes): stride-1 geometries all three paths can take
    ((1, 32, 24, 24), (16, 32, 3, 3), dict(pad=(1, 1))),
    ((2, 4, 6, 7), (4, 2, 3, 2), dict(pad=(1, 0), dilate=(1, 2), num_group=2)),
    ((1, 3, 4, 8, 8), (2, 3, 2, 3, 2), dict(pad=(1, 1, 0), dilate=(2, 1, 1))),
]
STRIDED_CASES = [   # and geometries the convolution by rows cannot take
    ((2, 3, 7, 6), (4, 3, 3, 2), dict(pad=(1, 1), stride=(2, 1))),
    ((1, 4, 9, 8), (4, 2, 3, 3), dict(pad=(0, 2), stride=(2, 3), dilate=(2, 1), num_group=2)),
]
# thresholds that send every convolution down one path
PATHS = {'per_image': dict(_THIN_DEPTH=10 ** 9),
         'rows': dict(_THIN_DEPTH=-1, _ROWS_MIN_DEPTH=0, _ROWS_MIN_LENGTH=0),
         'windows': dict(_THIN_DEPTH=-1, _ROWS_MIN_DEPTH=10 ** 9)}


def _forget(conv):
    for engine in (conv._conv_engine, conv._deconv_engine, conv._wgrad_engine):
        engine.cache_clear()
    tuning.forget()


@pytest.fixture
def conv_engine(monkeypatch):
    """conv.py, its choices of paths forgotten before and after the test, and its rule-based
    paths taken (not timed against the channel-last ones)."""
    from hybridlib.ops import conv
    monkeypatch.setattr(tuning.Tuned, 'force', 0)
    _forget(conv)
    yield conv
    _forget(conv)


@pytest.fixture
def channel_last(monkeypatch):
    """conv.py with the channel-last paths (conv_last.py) taken wherever they can be."""
    from hybridlib.ops import conv
    monkeypatch.setattr(tuning.Tuned, 'force', 1)
    _forget(conv)
    yield conv
    _forget(conv)


LAST_CASES = [  # (data, weight, attributes) of groups of one
    ((2, 3, 5, 6), (4, 3, 3, 3), dict(pad=(1, 1))),
    ((3, 16, 8, 8), (8, 16, 3, 3), dict(pad=(1, 1))),
    ((2, 3, 7, 6), (4, 3, 3, 2), dict(pad=(1, 2), stride=(2, 1))),
    ((1, 4, 9, 8), (5, 4, 3, 3), dict(pad=(0, 2), stride=(2, 3), dilate=(2, 1))),
    ((2, 4, 9, 8), (5, 4, 2, 3), dict(pad=(2, 0), dilate=(1, 2))),      # flipped pad < 0
    ((2, 3, 11), (4, 3, 3), dict(pad=(1,), stride=(2,))),
    ((1, 3, 4, 6, 5), (2, 3, 2, 3, 2), dict(pad=(1, 1, 0), dilate=(2, 1, 1))),
]


def _convolved_by(conv, path, data, weight, attrs):
    """Checks the convolution of a case by the channel-last ``path``; (x, w, geometry,
    attributes, result) of the case."""
    nd_ = len(weight) - 2
    x, w = _fixed(data).astype(np.float32), _fixed(weight).astype(np.float32)
    full = dict(dict(stride=(1,) * nd_, dilate=(1,) * nd_, num_group=1), **attrs,
                kernel=weight[2:], num_filter=weight[0])
    geo = conv.Geom(weight[2:], full['stride'], full['dilate'], full['pad'])
    want = conv_ref(x.astype(np.float64), w.astype(np.float64), **full)
    run = conv._conv_engine(np, geo, full['num_group'], data, weight[0])
    assert run.paths[1].func is path
    out = np.empty(want.shape, np.float32)
    run(x, w, out)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)
    return x, w, geo, full, want


@pytest.mark.parametrize('data, weight, attrs', LAST_CASES)
def test_channel_last_paths_agree(channel_last, data, weight, attrs):
    """The channel-last paths of the convolution, its weight gradient and its transpose (by
    scatter, or by the flipped convolution for stride 1) give the references' numbers."""
    conv = channel_last
    x, w, geo, full, want = _convolved_by(conv, conv_last.conv, data, weight, attrs)
    g = _fixed(want.shape).astype(np.float32)
    out = np.empty(weight, np.float32)
    conv._wgrad_engine(np, geo, 1, want.shape, data)(g, x, out)
    np.testing.assert_allclose(out, wgrad_ref(g.astype(np.float64), x.astype(np.float64),
                                              **full), rtol=1e-4, atol=1e-4)
    image = data[2:]
    run = conv._deconv_engine(np, geo, 1, want.shape, data[1], image)
    by_conv = set(full['stride']) == {1} and all(
        d * (k - 1) >= p for k, d, p in zip(weight[2:], full['dilate'], full['pad']))
    assert run.paths[1].func is (conv_last.deconv_by_conv if by_conv else conv_last.deconv)
    out = np.empty(data, np.float32)
    run(g, w, out)
    want = deconv_ref(g.astype(np.float64), w.astype(np.float64),
                      **dict(full, num_filter=data[1], adj=tuple(
                          i - ((m - 1) * s + (k - 1) * d + 1 - 2 * p) for i, m, s, k, d, p in
                          zip(image, want.shape[2:], full['stride'], weight[2:], full['dilate'],
                              full['pad']))))
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('data, weight, attrs', [
    ((2, 4, 7, 6), (8, 1, 3, 3), dict(pad=(1, 1), num_group=4)),
    ((1, 3, 9, 8), (3, 1, 3, 2), dict(pad=(1, 0), stride=(2, 3), dilate=(1, 2), num_group=3)),
    ((2, 3, 11), (6, 1, 3), dict(pad=(1,), stride=(2,), num_group=3)),
    ((1, 2, 4, 5, 5), (2, 1, 2, 3, 3), dict(pad=(0, 1, 1), num_group=2)),
])
def test_depthwise_channel_last_path_agrees(channel_last, data, weight, attrs):
    """The depthwise convolution by einsum over channel-last windows (C groups of M filters)
    gives the reference's numbers."""
    _convolved_by(channel_last, conv_last.depthwise, data, weight, attrs)


def test_tuning_takes_the_faster_path_and_keeps_it(monkeypatch):
    """A tuned engine times its paths on the first call and keeps the fastest, by key, for
    every engine of the same key; HYBRIDLIB_TUNE=0 takes the first path untimed."""
    calls = []

    def path(name, seconds):
        def run(a, b, out):
            calls.append(name)
            time.sleep(seconds)
            out[0] = name
        return run
    monkeypatch.setattr(tuning, '_chosen', {})
    monkeypatch.setenv('HYBRIDLIB_TUNE_FILE', '')
    out = [None]
    tuned = tuning.Tuned('k', (path('slow', 0.02), path('fast', 0.0)))
    tuned(1, 2, out)
    assert out == ['fast'] and sorted(set(calls)) == ['fast', 'slow']
    calls.clear()
    tuning.Tuned('k', (path('slow', 0.02), path('fast', 0.0)))(1, 2, out)
    assert calls == ['fast']
    monkeypatch.setenv('HYBRIDLIB_TUNE', '0')
    calls.clear()
    tuning.Tuned('other', (path('slow', 0.02), path('fast', 0.0)))(1, 2, out)
    assert calls == ['slow'] and out == ['slow']


def test_tuning_choices_are_kept_in_a_file_for_later_processes(monkeypatch, tmp_path):
    """A choice is written to HYBRIDLIB_TUNE_FILE (merged with what is there) and a later
    process takes it without timing; an unreadable file or an index past the paths is timed
    again."""
    path = tmp_path / 'tuning' / 'machine.json'
    monkeypatch.setenv('HYBRIDLIB_TUNE_FILE', str(path))
    monkeypatch.setattr(tuning, '_chosen', None)
    calls = []

    def path_(name, seconds):
        def run(a, b, out):
            calls.append(name)
            time.sleep(seconds)
        return run
    tuning.Tuned(('conv', (3, 3)), (path_('slow', 0.02), path_('fast', 0.0)))(1, 2, [None])
    assert json.loads(path.read_text()) == {"('conv', (3, 3))": 1}
    monkeypatch.setattr(tuning, '_chosen', None)        # a new process
    calls.clear()
    tuning.Tuned(('conv', (3, 3)), (path_('slow', 0.02), path_('fast', 0.0)))(1, 2, [None])
    assert calls == ['fast']
    path.write_text('{"x": 5, "y": "no"')
    monkeypatch.setattr(tuning, '_chosen', None)
    calls.clear()
    tuning.Tuned('x', (path_('fast', 0.0), path_('slow', 0.02)))(1, 2, [None])
    assert sorted(set(calls)) == ['fast', 'slow']
    assert json.loads(path.read_text()) == {"'x'": 0}
    path.write_text('{"\'y\'": 7}')
    monkeypatch.setattr(tuning, '_chosen', None)
    calls.clear()
    tuning.Tuned('y', (path_('fast', 0.0), path_('slow', 0.02)))(1, 2, [None])
    assert sorted(set(calls)) == ['fast', 'slow']


@pytest.mark.parametrize('path, data, weight, attrs',
                         [(path,) + case for path in PATHS for case in PATH_CASES] +
                         [(path,) + case for path in ('per_image', 'windows')
                          for case in STRIDED_CASES])
def test_convolution_paths_agree(monkeypatch, conv_engine, path, data, weight, attrs):
    """The three forward paths (one matmul per image, by kernel rows, one matmul over all
    windows) give the reference's numbers on larger geometries; the size thresholds that
    choose among them are overridden so each geometry takes each path."""
    conv = conv_engine
    for name, value in PATHS[path].items():
        monkeypatch.setattr(conv, name, value)
    x, w = _fixed(data).astype(np.float32), _fixed(weight).astype(np.float32)
    kernel = weight[2:]
    full = dict(dict(stride=(1,) * len(kernel), dilate=(1,) * len(kernel)), **attrs,
                kernel=kernel, num_filter=weight[0])
    geo = conv.Geom(kernel, full['stride'], full['dilate'], full['pad'])
    want = conv_ref(x.astype(np.float64), w.astype(np.float64), **full)
    groups = attrs.get('num_group', 1)
    if path != 'per_image':
        win = conv._windows(geo, data[0], data[1], data[2:], want.shape[2:], weight[0] // groups)
        assert win.by_rows(weight[0], groups) == (path == 'rows')
    out = np.empty(want.shape, np.float32)
    conv._conv_engine(np, geo, groups, data, weight[0])(x, w, out)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


# -------------------------------------------------------------------------------------------------
# MXNet 1.9.1's numbers and shapes (obtained from the oracle, pasted as literals)
# -------------------------------------------------------------------------------------------------

def _np(x):
    return x.asnumpy()


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
    from test_pooling import pool_ref      # (it imports this module's helpers)
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
