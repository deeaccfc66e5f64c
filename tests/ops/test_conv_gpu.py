"""The GPU convolution engines (hybridlib/ops/conv_gpu.py), run on numpy against the CPU
engines of conv.py: forward, weight gradient and transposed convolution (the data gradient),
over strides, dilations, paddings, groups, 1-3 spatial axes and batches split in chunks. On a
GPU, tests/ops/harness.py also checks every convolution case there against the CPU."""
import numpy as np
import pytest

from hybridlib.ops import conv, conv_gpu

# (data shape, filters, kernel, stride, dilate, pad, groups)
GEOMETRIES = [
    ((2, 4, 9, 8), 6, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 4, 9, 8), 6, (3, 3), (2, 2), (1, 1), (1, 1), 2),
    ((3, 6, 11), 4, (5,), (3,), (2,), (2,), 2),
    ((1, 3, 5, 6, 7), 4, (2, 3, 2), (1, 2, 2), (1, 1, 2), (1, 0, 1), 1),
    ((2, 4, 8, 8), 4, (3, 3), (1, 1), (1, 1), (1, 1), 4),
    ((2, 4, 8, 8), 8, (1, 1), (2, 2), (1, 1), (0, 0), 1),
    ((2, 3, 15, 15), 5, (7, 7), (2, 2), (1, 1), (3, 3), 1),
    ((2, 4, 6, 6), 4, (3, 3), (3, 3), (2, 2), (2, 2), 1),
    ((3, 2, 7, 5), 2, (2, 2), (2, 3), (1, 1), (0, 1), 1),
]


def _run(engine, shape, *args):
    out = np.empty(shape)
    engine(*args, out)
    return out


@pytest.mark.parametrize('chunked', [False, True])
@pytest.mark.parametrize('shape, f, kernel, stride, dilate, pad, groups', GEOMETRIES)
def test_engines_match_the_cpu_engines(shape, f, kernel, stride, dilate, pad, groups, chunked,
                                       monkeypatch):
    if chunked:     # a few images at a time
        monkeypatch.setattr(conv_gpu, '_COLS_LIMIT', 2 * shape[1] * 50)
    rng = np.random.default_rng(len(shape) * 100 + f)
    geo = conv.Geom(kernel, stride, dilate, pad)
    grid = tuple(conv._conv_size(*a) for a in zip(shape[2:], *geo))
    x = rng.standard_normal(shape)
    w = rng.standard_normal((f, shape[1] // groups) + kernel)
    g = rng.standard_normal((shape[0], f) + grid)
    out_shape, g_shape, image = (shape[0], f) + grid, g.shape, shape[2:]
    pairs = [
        (_run(conv_gpu.conv_engine(np, geo, groups, shape, f, grid), out_shape, x, w),
         _run(conv._conv_engine(np, geo, groups, shape, f), out_shape, x, w)),
        (_run(conv_gpu.wgrad_engine(np, geo, groups, g_shape, shape), w.shape, g, x),
         _run(conv._wgrad_engine(np, geo, groups, g_shape, shape), w.shape, g, x)),
        (_run(conv_gpu.deconv_engine(np, geo, groups, g_shape, shape[1], image), shape, g, w),
         _run(conv._deconv_engine(np, geo, groups, g_shape, shape[1], image), shape, g, w)),
    ]
    for what, (got, expected) in zip(['forward', 'weight gradient', 'transposed'], pairs):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, err_msg=what)
