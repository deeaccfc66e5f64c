"""Writes tests/data/linalg.json: MXNet 1.9.1's values and gradients of the linalg operators
(nd.linalg.*), of khatri_rao, cumsum, histogram, ravel/unravel_index and fill_element_0index,
and of the densities random_pdf_*.

Run with the MXNet oracle, from the repository root::

    .oracle/bin/python tests/data/make_linalg_files.py

Each case names the function (an attribute of mx.nd, dotted for submodules), its keyword
arguments, its inputs and the inputs to differentiate (``diff``); it runs in ``dtype`` (float64
unless given). The file holds the inputs, MXNet's outputs (a list: one entry per output), and
for ``diff`` the gradients for head gradients ``heads(shape)`` on every output (null where MXNet
cannot differentiate). tests/ops/test_linalg.py, test_numeric.py and test_pdf.py read it.
"""
import json
import os

import numpy as np
import mxnet as mx
from mxnet import autograd, nd


def wave(shape, offset=0.0, low=-1.0, high=1.0, step=1.3):
    """Distinct smooth values in [low, high] of ``shape``."""
    n = int(np.prod(shape))
    unit = (np.sin(np.arange(n) * step + offset) + 1) / 2
    return (low + (high - low) * unit).reshape(shape)


def heads(shape, offset=0.7):
    """The head gradient used for an output of ``shape``."""
    return wave(shape, offset, -1.0, 1.0, 0.9)


def spd(shape, offset=0.0):
    """Symmetric positive-definite matrices (..., n, n)."""
    m = wave(shape, offset)
    return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])


def triangular(shape, offset=0.0):
    """Matrices whose lower and upper triangles are both well conditioned (a diagonal in
    [1.5, 2.5]); each operator reads only one of them."""
    return wave(shape, offset) + np.eye(shape[-1]) * (2.0 + 0.5 * wave(shape[:-1], offset + 1))[
        ..., None]


def general(shape, offset=0.0):
    """Well-conditioned square matrices of both determinant signs."""
    m = wave(shape, offset) + 2.0 * np.eye(shape[-1])
    if m.ndim > 2:
        m[..., 0, :] *= np.where(np.arange(m.shape[0]) % 2 == 0, 1.0, -1.0)[:, None]
    return m


def symmetric(shape, offset=0.0):
    m = wave(shape, offset, -2, 2)
    return m + np.swapaxes(m, -1, -2)


def counts(shape, offset=0.0, high=6):
    return np.floor(wave(shape, offset, 0, high - 1e-9))


def case(name, fn, inputs, attrs=None, diff=(), dtype='float64', grads=True):
    return dict(name=name, fn=fn, attrs=attrs or {}, inputs=inputs, diff=list(diff),
                dtype=dtype, grads=grads)


LINALG = [
    case('gemm', 'linalg.gemm', [wave((2, 3, 4)), wave((2, 4, 5), 1), wave((2, 3, 5), 2)],
         dict(alpha=1.5, beta=-0.5), [0, 1, 2]),
    case('gemm_transposed', 'linalg.gemm', [wave((4, 3)), wave((5, 4), 1), wave((3, 5), 2)],
         dict(transpose_a=True, transpose_b=True, alpha=2.0, beta=10.0), [0, 1, 2]),
    case('gemm_axis', 'linalg.gemm', [wave((2, 3, 4, 5)), wave((2, 5, 4, 6), 1),
                                      wave((2, 3, 4, 6), 2)], dict(axis=1), [0, 1, 2]),
    case('gemm2', 'linalg.gemm2', [wave((2, 3, 4)), wave((2, 5, 4), 1)],
         dict(transpose_b=True, alpha=0.5), [0, 1]),
    case('gemm2_axis_transpose', 'linalg.gemm2', [wave((2, 4, 3, 5)), wave((2, 4, 3, 6), 1)],
         dict(axis=-3, transpose_a=True), [0, 1]),
    case('potrf', 'linalg.potrf', [spd((2, 3, 3)) + np.triu(wave((3, 3), 3), 1)], {}, [0]),
    case('potrf_upper', 'linalg.potrf', [spd((3, 3)) + np.tril(wave((3, 3), 3), -1)],
         dict(lower=False), [0]),
    case('potri', 'linalg.potri', [triangular((2, 3, 3))], {}, [0]),
    case('potri_upper', 'linalg.potri', [triangular((3, 3), 1)], dict(lower=False), [0]),
    case('trmm', 'linalg.trmm', [triangular((2, 3, 3)), wave((2, 3, 4), 1)],
         dict(alpha=2.0), [0, 1]),
    case('trmm_right_transpose_upper', 'linalg.trmm', [triangular((3, 3)), wave((4, 3), 1)],
         dict(rightside=True, transpose=True, lower=False), [0, 1]),
    case('trmm_right', 'linalg.trmm', [triangular((3, 3)), wave((4, 3), 1)],
         dict(rightside=True), [0, 1]),
    case('trsm', 'linalg.trsm', [triangular((2, 3, 3)), wave((2, 3, 4), 1)],
         dict(alpha=0.5), [0, 1]),
    case('trsm_transpose_upper', 'linalg.trsm', [triangular((3, 3)), wave((3, 2), 1)],
         dict(transpose=True, lower=False), [0, 1]),
    case('trsm_right', 'linalg.trsm', [triangular((2, 3, 3)), wave((2, 4, 3), 1)],
         dict(rightside=True, alpha=-1.5), [0, 1]),
    case('sumlogdiag', 'linalg.sumlogdiag', [spd((2, 3, 3))], {}, [0]),
    case('sumlogdiag_single', 'linalg.sumlogdiag', [spd((3, 3))], {}, [0]),
    case('extractdiag', 'linalg.extractdiag', [wave((2, 4, 4))], dict(offset=-1), [0]),
    case('makediag', 'linalg.makediag', [wave((2, 3))], dict(offset=2), [0]),
    case('extracttrian_upper', 'linalg.extracttrian', [wave((2, 4, 4))], dict(lower=False),
         [0]),
    case('extracttrian_offset', 'linalg.extracttrian', [wave((4, 4))], dict(offset=1), [0]),
    case('extracttrian_below', 'linalg.extracttrian', [wave((4, 4))], dict(offset=-1), [0]),
    case('maketrian', 'linalg.maketrian', [wave((2, 6))], {}, [0]),
    case('maketrian_upper_offset', 'linalg.maketrian', [wave((6,))], dict(offset=2), [0]),
    case('maketrian_upper', 'linalg.maketrian', [wave((6,))], dict(lower=False), [0]),
    case('syrk', 'linalg.syrk', [wave((2, 3, 4))], dict(alpha=0.5), [0]),
    case('syrk_transpose', 'linalg.syrk', [wave((3, 4))], dict(transpose=True), [0]),
    case('gelqf', 'linalg.gelqf', [wave((2, 3, 5)) + 2 * np.eye(3, 5)], {}, [0]),
    case('gelqf_square', 'linalg.gelqf', [general((3, 3), 1)], {}, [0]),
    case('syevd', 'linalg.syevd', [symmetric((2, 4, 4)) + np.triu(wave((4, 4), 3), 1)], {},
         [0]),
    case('syevd_single', 'linalg.syevd', [symmetric((3, 3), 2)], {}, [0]),
    case('inverse', 'linalg.inverse', [general((2, 3, 3))], {}, [0]),
    case('det', 'linalg.det', [general((3, 3, 3))], {}, [0]),
    case('det_single', 'linalg.det', [general((3, 3), 1)], {}, [0]),
    case('det_singular', 'linalg.det', [np.array([[[1., 2.], [2., 4.]], [[2., 1.], [1., 3.]]])],
         {}, [0]),
    case('slogdet', 'linalg.slogdet', [general((4, 3, 3))], {}, [0]),
    case('slogdet_singular', 'linalg.slogdet',
         [np.array([[[2., 3.], [1., 4.]], [[1., 2.], [2., 4.]], [[1., 2.], [4., 3.]]])], {},
         [0]),
    case('float32', 'linalg.gemm2', [wave((3, 4)), wave((4, 2), 1)], {}, [0, 1],
         dtype='float32'),
]

EDGES = np.array([0.0, 0.75, 1.5, 2.25, 3.0, 0.74999994, 2.2499998, 2.25000001, -0.0, 3.0000001,
                  1.4999999, 1.5000001, 0.3, 2.9])
NUMERIC = [
    case('khatri_rao', 'khatri_rao', [wave((2, 3)), wave((3, 3), 1), wave((2, 3), 2)],
         grads=False),
    case('cumsum_axis', 'cumsum', [wave((2, 3, 4))], dict(axis=1), [0]),
    case('cumsum_flat', 'cumsum', [wave((2, 3))], {}, [0]),
    case('cumsum_int', 'cumsum', [np.arange(-3, 9).reshape(3, 4)], dict(axis=0),
         dtype='int32', grads=False),
    case('cumsum_dtype', 'cumsum', [wave((3, 4))], dict(axis=1, dtype='float64'), [0],
         dtype='float32'),
    case('histogram_edges', 'histogram', [EDGES], dict(bins=4, range=(0, 3)), dtype='float32',
         grads=False),
    case('histogram_edges64', 'histogram', [EDGES], dict(bins=4, range=(0, 3)), grads=False),
    case('histogram_range', 'histogram', [wave((5, 7), 0, -2, 5)], dict(bins=5, range=(-1, 4)),
         dtype='float32', grads=False),
    case('histogram_flat_range', 'histogram', [np.array([1., 1., 1.])],
         dict(bins=3, range=(1, 1)), dtype='float32', grads=False),
    case('histogram_int', 'histogram', [np.arange(-2, 9)], dict(bins=4, range=(0, 7)),
         dtype='int32', grads=False),
    case('histogram_bins', 'histogram', [EDGES, np.array([0., 0.5, 0.75, 2.25, 3.])],
         dtype='float32', grads=False),
    case('histogram_no_range', 'histogram', [wave((4, 5), 0, -2, 5)], dict(bins=6),
         dtype='float32', grads=False),
    case('ravel', 'ravel_multi_index', [np.array([[3., 6., 6., 9., 0.], [4., 5., 1., -1., 2.7],
                                                  [0., 1., 2., 1., 1.]])],
         dict(shape=(7, 6, 3)), grads=False),
    case('ravel_int', 'ravel_multi_index', [np.array([[3, 6, 6], [4, 5, 1]])],
         dict(shape=(7, 6)), dtype='int32', grads=False),
    case('unravel', 'unravel_index', [np.array([22., 41., 37., 50., -1., 125.6])],
         dict(shape=(7, 6, 3)), grads=False),
    case('unravel_int64', 'unravel_index', [np.array([22, 41, 37, 0, 7])], dict(shape=(7, 6)),
         dtype='int64', grads=False),
    case('fill_element_0index', 'fill_element_0index',
         [wave((4, 3)), np.array([10., 20., 30., 40.]), np.array([2., 0., 1.7, -0.2])],
         dtype='float32', grads=False),
    case('fill_element_0index_out_of_range', 'fill_element_0index',
         [wave((3, 3)), np.array([10., 20., 30.]), np.array([3., -1., 1.])], dtype='float32',
         grads=False),
]

_S, _P = (2, 3, 4), (2,)
PDF = []
for _log in (False, True):
    _tag = '_log' if _log else ''
    PDF += [
        case('uniform' + _tag, 'random_pdf_uniform',
             [wave(_S, 0, -1, 3), wave(_P, 1, -2, -1), wave(_P, 2, 3.5, 5)],
             dict(is_log=_log), [0, 1, 2]),
        case('normal' + _tag, 'random_pdf_normal',
             [wave(_S, 0, -2, 2), wave(_P, 1), wave(_P, 2, 0.5, 2)], dict(is_log=_log),
             [0, 1, 2]),
        case('gamma' + _tag, 'random_pdf_gamma',
             [wave(_S, 0, 0.2, 4), wave(_P, 1, 0.5, 3), wave(_P, 2, 0.5, 2)],
             dict(is_log=_log), [0, 1, 2]),
        case('exponential' + _tag, 'random_pdf_exponential',
             [wave(_S, 0, 0.1, 3), wave((2, 3), 1, 0.5, 2)], dict(is_log=_log), [0, 1]),
        case('poisson' + _tag, 'random_pdf_poisson',
             [counts(_S, 0, 7), wave(_P, 1, 0.5, 4)], dict(is_log=_log), [0, 1]),
        case('negative_binomial' + _tag, 'random_pdf_negative_binomial',
             [counts(_S, 0, 7), wave(_P, 1, 1, 5), wave(_P, 2, 0.2, 0.8)], dict(is_log=_log),
             [0, 1, 2]),
        case('generalized_negative_binomial' + _tag, 'random_pdf_generalized_negative_binomial',
             [counts(_S, 0, 7), wave(_P, 1, 0.5, 4), wave(_P, 2, 0.2, 2)], dict(is_log=_log),
             [0, 1, 2]),
    ]
_SAMPLES = np.exp(wave((2, 3, 4), 0, -2, 0))
PDF += [
    case('dirichlet', 'random_pdf_dirichlet', [_SAMPLES / _SAMPLES.sum(-1, keepdims=True),
                                               wave((2, 4), 1, 0.5, 3)], {}, [0, 1]),
    case('dirichlet_log', 'random_pdf_dirichlet', [_SAMPLES[0] / _SAMPLES[0].sum(-1)[:, None],
                                                   wave((3, 4), 1, 0.5, 3)],
         dict(is_log=True), [0, 1]),
    case('dirichlet_single', 'random_pdf_dirichlet', [np.array([0.2, 0.3, 0.5]),
                                                      np.array([1., 2., 3.])], {}, [0, 1]),
    case('normal_same_shape', 'random_pdf_normal',
         [wave((2, 3)), wave((2, 3), 1), wave((2, 3), 2, 0.5, 1.5)], {}, [0, 1, 2]),
    case('normal_float32', 'random_pdf_normal', [wave(_S, 0, -2, 2), wave(_P, 1),
                                                 wave(_P, 2, 0.5, 2)], {}, [0, 1, 2],
         dtype='float32'),
]


def function(name):
    target = nd
    for part in name.split('.'):
        target = getattr(target, part)
    return target


def as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def values(array):
    return array.asnumpy().tolist()


def run(spec):
    arrays = [nd.array(x, dtype=spec['dtype']) for x in spec['inputs']]
    attrs = dict(spec['attrs'])
    if spec['fn'] == 'histogram' and len(arrays) == 2:
        arrays, attrs['bins'] = arrays[:1], arrays[1]
    for i in spec['diff']:
        arrays[i].attach_grad()
    grads = None
    if spec['grads'] and spec['diff']:
        with autograd.record():
            outs = as_list(function(spec['fn'])(*arrays, **attrs))
        autograd.backward(outs, [nd.array(heads(o.shape), dtype=o.dtype) for o in outs])
        grads = [values(arrays[i].grad) for i in spec['diff']]
    else:
        outs = as_list(function(spec['fn'])(*arrays, **attrs))
    inputs = [values(a) for a in arrays]
    if 'bins' in attrs and not isinstance(attrs['bins'], int):
        inputs.append(values(attrs.pop('bins')))
    return dict(spec, inputs=inputs, outputs=[values(o) for o in outs],
                output_dtypes=[np.dtype(o.dtype).name for o in outs], grads=grads)


def main():
    data = dict(mxnet=mx.__version__, linalg=[run(c) for c in LINALG],
                numeric=[run(c) for c in NUMERIC], pdf=[run(c) for c in PDF])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'linalg.json')
    with open(path, 'w') as f:
        json.dump(data, f, separators=(',', ':'))
        f.write('\n')
    print(f'wrote {sum(len(v) for v in data.values() if isinstance(v, list))} cases to {path}')


if __name__ == '__main__':
    main()
