"""Cases for hybridlib/ops/linalg.py: the nd.linalg operators.

The references are written out in numpy without the LAPACK routine each operator uses:
Cholesky by its recurrence, triangular solves by substitution, determinants by permutation
expansion, LQ by Householder reflections with LAPACK's signs. potrf and syevd read one triangle
of a symmetric input and give MXNet's symmetric gradient, so their gradients are checked
against finite differences of symmetric perturbations. tests/data/linalg.json holds MXNet
1.9.1's outputs and gradients (tests/data/make_linalg_files.py), compared at the end.
"""
import itertools
import json
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import DTypeError, MXNetError, ShapeError

from harness import Case, check_case

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'data',
                    'linalg.json')


# -------------------------------------------------------------------------------------------------
# Inputs
# -------------------------------------------------------------------------------------------------

def spd(shape, noise_above=True):
    """Symmetric positive-definite matrices plus noise above the diagonal (below with
    ``noise_above=False``), which potrf must not read."""
    def make(rng):
        m = rng.uniform(-1, 1, size=shape)
        a = m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])
        noise = rng.uniform(-1, 1, size=shape)
        return a + (np.triu(noise, 1) if noise_above else np.tril(noise, -1))
    return make


def triangular(shape):
    """Full matrices whose triangles are both well conditioned (diagonal in [1.5, 2.5])."""
    def make(rng):
        diag = rng.uniform(1.5, 2.5, size=shape[:-1])
        return rng.uniform(-1, 1, size=shape) + diag[..., None] * np.eye(shape[-1])
    return make


def square(shape):
    """Well-conditioned square matrices, the first of each batch with a negative determinant."""
    def make(rng):
        a = rng.uniform(-1, 1, size=shape) + 2.5 * np.eye(shape[-1])
        a[..., 0, :] *= -1
        return a
    return make


def symmetric(shape):
    """Symmetric matrices with well separated eigenvalues, noise above the diagonal."""
    def make(rng):
        q, _ = np.linalg.qr(rng.normal(size=shape))
        lam = np.arange(shape[-1]) * 1.5 + rng.uniform(-0.3, 0.3, size=shape[:-1])
        a = q @ (lam[..., None] * np.swapaxes(q, -1, -2))
        return a + np.triu(rng.uniform(-1, 1, size=shape), 1)
    return make


def wide(shape):
    """Full-rank (m, n) matrices, m <= n."""
    def make(rng):
        return rng.uniform(-1, 1, size=shape) + 2 * np.eye(shape[-2], shape[-1])
    return make


# -------------------------------------------------------------------------------------------------
# References
# -------------------------------------------------------------------------------------------------

def T(x):
    return np.swapaxes(x, -1, -2)


def batched(fn):
    """``fn`` on single matrices, mapped over the leading axes of its first argument."""
    def apply(a, *rest, **kwargs):
        if a.ndim == 2:
            return fn(a, *rest, **kwargs)
        results = [apply(a[i], *[r[i] for r in rest], **kwargs) for i in range(a.shape[0])]
        if isinstance(results[0], tuple):
            return tuple(np.stack(parts) for parts in zip(*results))
        return np.stack(results)
    return apply


def ref_gemm2(a, b, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2):
    a, b = np.swapaxes(a, axis, -2), np.swapaxes(b, axis, -2)
    out = alpha * np.einsum('...ij,...jk->...ik', T(a) if transpose_a else a,
                            T(b) if transpose_b else b)
    return np.swapaxes(out, axis, -2)


def ref_gemm(a, b, c, beta=1.0, **kwargs):
    return ref_gemm2(a, b, **kwargs) + beta * c


def from_triangle(a, lower=True):
    t = np.tril(a) if lower else np.triu(a)
    return t + T(t) - np.diagonal(a, 0, -2, -1)[..., None] * np.eye(a.shape[-1])


@batched
def cholesky(a):
    n = a.shape[0]
    low = np.zeros_like(a)
    for j in range(n):
        low[j, j] = np.sqrt(a[j, j] - low[j, :j] @ low[j, :j])
        for i in range(j + 1, n):
            low[i, j] = (a[i, j] - low[i, :j] @ low[j, :j]) / low[j, j]
    return low


def ref_potrf(a, lower=True):
    low = cholesky(from_triangle(a, lower))
    return low if lower else T(low)


@batched
def solve_lower(t, b):
    """X with tril(t) X = b, by forward substitution."""
    x = np.zeros_like(b)
    for i in range(t.shape[0]):
        x[i] = (b[i] - t[i, :i] @ x[:i]) / t[i, i]
    return x


def solve_triangular(t, b, lower):
    """X with t X = b for triangular t (its ``lower`` or upper triangle)."""
    if lower:
        return solve_lower(np.tril(t), b)
    flip = np.arange(t.shape[-1])[::-1]
    return solve_lower(np.triu(t)[..., flip, :][..., :, flip], b[..., flip, :])[..., flip, :]


def ref_potri(b, lower=True):
    eye = np.broadcast_to(np.eye(b.shape[-1]), b.shape)
    inv = solve_triangular(b, eye, lower)
    return T(inv) @ inv if lower else inv @ T(inv)


def op_triangle(a, lower, transpose):
    t = np.tril(a) if lower else np.triu(a)
    return T(t) if transpose else t


def ref_trmm(a, b, transpose=False, rightside=False, lower=True, alpha=1.0):
    t = op_triangle(a, lower, transpose)
    return alpha * (b @ t if rightside else t @ b)


def ref_trsm(a, b, transpose=False, rightside=False, lower=True, alpha=1.0):
    t = op_triangle(a, lower, transpose)
    # op(A) is lower triangular exactly when lower != transpose
    if rightside:
        return T(solve_triangular(T(t), alpha * T(b), lower == transpose))
    return solve_triangular(t, alpha * b, lower != transpose)


def per_matrix(values, a):
    return values.reshape(a.shape[:-2] or (1,))


def ref_sumlogdiag(a):
    return per_matrix(np.log(np.diagonal(a, 0, -2, -1)).sum(-1), a)


def diagonal_index(n, offset):
    return [(i + max(-offset, 0), i + max(offset, 0)) for i in range(n - abs(offset))]


def ref_extractdiag(a, offset=0):
    return np.stack([a[..., r, c] for r, c in diagonal_index(a.shape[-1], offset)], axis=-1)


def ref_makediag(a, offset=0):
    n = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n))
    for k, (r, c) in enumerate(diagonal_index(n, offset)):
        out[..., r, c] = a[..., k]
    return out


def triangle_index(n, offset, lower):
    """MXNet's order: the lower triangle row by row, the upper one column by column."""
    k = abs(offset)
    if offset < 0 or (offset == 0 and lower):
        return [(r, c) for r in range(k, n) for c in range(r - k + 1)]
    return [(r, c) for c in range(k, n) for r in range(c - k + 1)]


def ref_extracttrian(a, offset=0, lower=True):
    return np.stack([a[..., r, c] for r, c in triangle_index(a.shape[-1], offset, lower)],
                    axis=-1)


def ref_maketrian(a, offset=0, lower=True):
    m = int(round((np.sqrt(8 * a.shape[-1] + 1) - 1) / 2))
    n = m + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n))
    for k, (r, c) in enumerate(triangle_index(n, offset, lower)):
        out[..., r, c] = a[..., k]
    return out


def ref_syrk(a, transpose=False, alpha=1.0):
    return alpha * (T(a) @ a if transpose else a @ T(a))


@batched
def householder_lq(a):
    """A = L Q by Householder reflections of the rows, with LAPACK's choices (so that L's
    diagonal has the signs of LAPACK's gelqf): beta = -sign(alpha) * norm, and no reflection
    when nothing is below alpha."""
    m, n = a.shape
    r = a.T.copy()                      # QR of A^T
    q = np.eye(n)
    for j in range(m):
        x = r[j:, j].copy()
        if not np.any(x[1:]):
            continue
        beta = -np.copysign(np.linalg.norm(x), x[0])
        v = x.copy()
        v[0] -= beta
        v /= np.linalg.norm(v)
        h = np.eye(n)
        h[j:, j:] -= 2 * np.outer(v, v)
        r = h @ r
        q = q @ h
    return q[:, :m].T, r[:m, :m].T


def ref_gelqf(a):
    return householder_lq(a)


def ref_syevd(a):
    lam, vectors = np.linalg.eigh(from_triangle(a, True), UPLO='U')
    u = T(vectors)
    largest = np.take_along_axis(u, np.argmax(np.abs(u), axis=-1)[..., None], axis=-1)
    return np.where(largest < 0, -u, u), lam


@batched
def permutation_det(a):
    n = a.shape[0]
    total = 0.0
    for perm in itertools.permutations(range(n)):
        inversions = sum(perm[i] > perm[j] for i in range(n) for j in range(i + 1, n))
        total += (-1) ** inversions * np.prod([a[i, perm[i]] for i in range(n)])
    return np.array(total)


def ref_inverse(a):
    return np.linalg.solve(a, np.broadcast_to(np.eye(a.shape[-1]), a.shape))


def ref_det(a):
    return per_matrix(permutation_det(a), a)


def ref_slogdet(a):
    det = ref_det(a)
    return np.sign(det), np.log(np.abs(det))


def symmetric_grad(ref):
    """Gradient reference of an operator that reads the lower (``lower=False``: upper)
    triangle of a symmetric matrix: finite differences of symmetric perturbations, spread
    evenly over the two triangles (MXNet's convention)."""
    def grad_ref(cots, a, lower=True, **attrs):
        kwargs = dict(attrs, lower=lower) if ref is ref_potrf else attrs

        def loss(x):
            outs = ref(x, **kwargs)
            outs = outs if isinstance(outs, tuple) else (outs,)
            return sum(float(np.sum(o * c)) for o, c in zip(outs, cots))
        eps = 1e-6
        s = from_triangle(a, lower)
        grad = np.zeros_like(a)
        n = a.shape[-1]
        for index in np.ndindex(*a.shape[:-2]):
            for i, j in itertools.product(range(n), repeat=2):
                if i < j:
                    continue
                e = np.zeros_like(a)
                e[index + (i, j)] = e[index + (j, i)] = eps
                d = (loss(s + e) - loss(s - e)) / (2 * eps)
                grad[index + (i, j)] = grad[index + (j, i)] = d if i == j else d / 2
        return [grad]
    return grad_ref


# -------------------------------------------------------------------------------------------------
# Cases
# -------------------------------------------------------------------------------------------------

U = (-1.0, 1.0)
CASES = [
    Case('_linalg_gemm', [(2, 3, 4), (2, 4, 5), (2, 3, 5)], dict(alpha=1.5, beta=-0.5),
         ref_gemm, name='batch'),
    Case('linalg_gemm', [(4, 3), (5, 4), (3, 5)],
         dict(transpose_a=True, transpose_b=True, alpha=2.0, beta=3.0), ref_gemm,
         name='transposed'),
    Case('_linalg_gemm', [(2, 3, 2, 4), (2, 4, 2, 3), (2, 3, 2, 3)], dict(axis=1), ref_gemm,
         name='axis'),
    Case('_linalg_gemm2', [(2, 3, 4), (2, 5, 4)], dict(transpose_b=True, alpha=0.5), ref_gemm2,
         name='transpose_b'),
    Case('linalg_gemm2', [(3, 2, 4), (3, 2, 5)], dict(axis=0, transpose_a=True), ref_gemm2,
         name='axis0_transpose_a'),
    Case('_linalg_potrf', [spd((2, 3, 3))], {}, ref_potrf, grad_ref=symmetric_grad(ref_potrf),
         name='lower'),
    Case('linalg_potrf', [spd((3, 3), noise_above=False)], dict(lower=False), ref_potrf,
         grad_ref=symmetric_grad(ref_potrf), name='upper'),
    Case('_linalg_potri', [triangular((2, 3, 3))], {}, ref_potri, name='lower'),
    Case('linalg_potri', [triangular((3, 3))], dict(lower=False), ref_potri, name='upper'),
    Case('_linalg_trmm', [triangular((2, 3, 3)), (2, 3, 4)], dict(alpha=2.0), ref_trmm,
         name='left'),
    Case('linalg_trmm', [triangular((3, 3)), (4, 3)],
         dict(rightside=True, transpose=True, lower=False), ref_trmm, name='right_t_upper'),
    Case('_linalg_trmm', [triangular((3, 3)), (3, 2)], dict(transpose=True), ref_trmm,
         name='transpose'),
    Case('_linalg_trsm', [triangular((2, 3, 3)), (2, 3, 4)], dict(alpha=0.5), ref_trsm,
         name='left'),
    Case('linalg_trsm', [triangular((3, 3)), (3, 2)], dict(transpose=True, lower=False),
         ref_trsm, name='transpose_upper'),
    Case('_linalg_trsm', [triangular((2, 3, 3)), (2, 4, 3)], dict(rightside=True, alpha=-1.5),
         ref_trsm, name='right'),
    Case('_linalg_trsm', [triangular((3, 3)), (2, 3)],
         dict(rightside=True, transpose=True, lower=False), ref_trsm, name='right_t_upper'),
    Case('_linalg_sumlogdiag', [spd((2, 3, 3))], {}, ref_sumlogdiag, name='batch'),
    Case('linalg_sumlogdiag', [spd((3, 3))], {}, ref_sumlogdiag, name='single'),
    Case('_linalg_extractdiag', [(2, 4, 4)], dict(offset=-1), ref_extractdiag),
    Case('linalg_extractdiag', [(3, 3)], dict(offset=2), ref_extractdiag, name='above'),
    Case('_linalg_makediag', [(2, 3)], dict(offset=2), ref_makediag),
    Case('linalg_makediag', [(3,)], {}, ref_makediag, name='single'),
    Case('_linalg_extracttrian', [(2, 4, 4)], dict(lower=False), ref_extracttrian,
         name='upper'),
    Case('linalg_extracttrian', [(4, 4)], dict(offset=-1), ref_extracttrian, name='below'),
    Case('_linalg_extracttrian', [(4, 4)], dict(offset=2), ref_extracttrian, name='above'),
    Case('_linalg_maketrian', [(2, 6)], {}, ref_maketrian, name='lower'),
    Case('linalg_maketrian', [(6,)], dict(offset=1), ref_maketrian, name='above'),
    Case('_linalg_maketrian', [(3,)], dict(lower=False), ref_maketrian, name='upper'),
    Case('_linalg_syrk', [(2, 3, 4)], dict(alpha=0.5), ref_syrk),
    Case('linalg_syrk', [(3, 4)], dict(transpose=True), ref_syrk, name='transpose'),
    Case('_linalg_gelqf', [wide((2, 3, 4))], {}, ref_gelqf, name='batch'),
    Case('linalg_gelqf', [wide((3, 3))], {}, ref_gelqf, name='square'),
    Case('_linalg_syevd', [symmetric((2, 3, 3))], {}, ref_syevd,
         grad_ref=symmetric_grad(ref_syevd), name='batch'),
    Case('_linalg_syevd', [symmetric((4, 4))], {}, ref_syevd,
         grad_ref=symmetric_grad(ref_syevd), name='single'),
    Case('_linalg_inverse', [square((2, 3, 3))], {}, ref_inverse),
    Case('linalg_inverse', [square((1, 1))], {}, ref_inverse, name='1x1'),
    Case('_linalg_det', [square((2, 3, 3))], {}, ref_det, name='batch'),
    Case('linalg_det', [square((3, 3))], {}, ref_det, name='single'),
    Case('_linalg_slogdet', [square((2, 3, 3))], {}, ref_slogdet, name='batch'),
    Case('linalg_slogdet', [square((2, 2))], {}, ref_slogdet, name='single'),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_linalg(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet's numbers (tests/data/linalg.json)
# -------------------------------------------------------------------------------------------------

def _load(section):
    with open(DATA) as f:
        return json.load(f)[section]


def heads(shape, offset=0.7):
    """The head gradients of make_linalg_files.py."""
    n = int(np.prod(shape))
    return (-1.0 + 2.0 * (np.sin(np.arange(n) * 0.9 + offset) + 1) / 2).reshape(shape)


def function(name):
    target = nd
    for part in name.split('.'):
        target = getattr(target, part)
    return target


def check_recorded(spec, rtol=1e-6, atol=1e-9):
    """Run a case of linalg.json and compare its outputs and gradients with MXNet's."""
    arrays = [nd.array(np.array(x), dtype=spec['dtype']) for x in spec['inputs']]
    attrs = {k: tuple(v) if isinstance(v, list) else v for k, v in spec['attrs'].items()}
    if spec['fn'] == 'histogram' and len(arrays) == 2:
        arrays, attrs['bins'] = arrays[:1], arrays[1]
    for i in spec['diff']:
        arrays[i].attach_grad()
    with autograd.record():
        outs = function(spec['fn'])(*arrays, **attrs)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    assert len(outs) == len(spec['outputs'])
    if spec['dtype'] == 'float32':
        rtol, atol = max(rtol, 1e-5), max(atol, 1e-6)
    for k, (out, want, dtype) in enumerate(zip(outs, spec['outputs'], spec['output_dtypes'])):
        assert out.dtype == np.dtype(dtype), f'{spec["name"]}: output {k} is {out.dtype}'
        np.testing.assert_allclose(out.asnumpy(), np.array(want, dtype=np.float64), rtol=rtol,
                                   atol=atol, err_msg=f'{spec["name"]}: output {k}')
    if spec['grads'] is None:
        return
    autograd.backward(outs, [nd.array(heads(o.shape), dtype=o.dtype) for o in outs])
    for i, want in zip(spec['diff'], spec['grads']):
        np.testing.assert_allclose(arrays[i].grad.asnumpy(), np.array(want), rtol=rtol * 10,
                                   atol=atol * 10, err_msg=f'{spec["name"]}: gradient {i}')


@pytest.mark.parametrize('spec', _load('linalg'), ids=lambda s: s['name'])
def test_mxnet_values(spec):
    check_recorded(spec)


# -------------------------------------------------------------------------------------------------
# Names, outputs and errors
# -------------------------------------------------------------------------------------------------

NAMES = ['gemm', 'gemm2', 'potrf', 'potri', 'trmm', 'trsm', 'sumlogdiag', 'extractdiag',
         'makediag', 'extracttrian', 'maketrian', 'syrk', 'gelqf', 'syevd', 'inverse', 'det',
         'slogdet']


def test_exposure():
    for name in NAMES:
        assert callable(getattr(nd.linalg, name)) and callable(getattr(sym.linalg, name))
        assert getattr(nd.op, f'_linalg_{name}').op.name == f'_linalg_{name}'
        # MXNet has top-level aliases for all but syevd
        assert hasattr(nd, f'linalg_{name}') == (name != 'syevd')


def test_symbol_outputs_and_json():
    a = sym.var('a')
    with mx.name.NameManager():          # names count from 0, as in a fresh MXNet process
        assert sym.linalg.det(a).list_outputs() == ['det0_output0']
        assert sym.linalg.slogdet(a).list_outputs() == ['slogdet0_output0', 'slogdet0_output1']
        assert sym.linalg.gelqf(a).list_outputs() == ['gelqf0_output0', 'gelqf0_output1']
        assert sym.linalg.inverse(a).list_outputs() == ['inverse0_output']
        assert sym.linalg_potrf(a).list_outputs() == ['linalg_potrf0_output']
    s = sym.linalg_trsm(a, sym.var('b'), rightside=True, alpha=0.5, name='solve')
    node = json.loads(s.tojson())['nodes'][-1]
    assert node['op'] == '_linalg_trsm'
    assert node['attrs'] == {'rightside': 'True', 'alpha': '0.5'}


def test_gemm_axis_matches_swapaxes():
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 5, 4, 6)), \
        rng.normal(size=(2, 3, 4, 6))
    got = nd.linalg.gemm(nd.array(a, dtype='float64'), nd.array(b, dtype='float64'),
                         nd.array(c, dtype='float64'), axis=1).asnumpy()
    swapped = nd.linalg.gemm(*[nd.array(np.swapaxes(x, 1, 2), dtype='float64')
                               for x in (a, b, c)])
    np.testing.assert_allclose(got, np.swapaxes(swapped.asnumpy(), 1, 2), rtol=1e-12)


def test_potrf_potri_invert():
    a = spd((2, 4, 4))(np.random.default_rng(1))
    sym_a = from_triangle(a)
    inv = nd.linalg.potri(nd.linalg.potrf(nd.array(a, dtype='float64'))).asnumpy()
    np.testing.assert_allclose(inv @ sym_a, np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-10)


def test_syevd_reconstructs():
    a = symmetric((3, 4, 4))(np.random.default_rng(2))
    u, lam = [x.asnumpy() for x in nd.linalg.syevd(nd.array(a, dtype='float64'))]
    np.testing.assert_allclose(T(u) @ (lam[..., None] * u), from_triangle(a), atol=1e-10)
    assert np.all(np.diff(lam, axis=-1) > 0)


def test_singular_determinant_has_no_gradient():
    a = nd.array([[[1., 2.], [2., 4.]], [[2., 1.], [1., 3.]]], dtype='float64')
    a.attach_grad()
    with autograd.record():
        d = nd.linalg.det(a)
    d.backward()
    np.testing.assert_array_equal(a.grad.asnumpy()[0], 0)
    np.testing.assert_allclose(a.grad.asnumpy()[1], [[3., -1.], [-1., 2.]])
    with autograd.record():
        sign, logabsdet = nd.linalg.slogdet(a)
    assert sign.asnumpy()[0] == 0 and logabsdet.asnumpy()[0] == -np.inf
    logabsdet.backward()
    np.testing.assert_array_equal(a.grad.asnumpy()[0], 0)
    np.testing.assert_allclose(a.grad.asnumpy()[1], np.linalg.inv([[2., 1.], [1., 3.]]).T)


@pytest.mark.parametrize('call, error', [
    (lambda: nd.linalg.gemm2(nd.ones((2, 3)), nd.ones((2, 3))), ShapeError),
    (lambda: nd.linalg.gemm2(nd.ones((2, 2, 3)), nd.ones((3, 3))), ShapeError),
    (lambda: nd.linalg.gemm2(nd.ones((2, 3, 4)), nd.ones((2, 4, 3)), axis=-1), ShapeError),
    (lambda: nd.linalg.gemm2(nd.ones((2,)), nd.ones((2,))), ShapeError),
    (lambda: nd.linalg.potrf(nd.ones((2, 3))), ShapeError),
    (lambda: nd.linalg.potrf(nd.array([[1., 0.], [0., 1.]], dtype='float16')), DTypeError),
    (lambda: nd.linalg.inverse(nd.array([[1, 0], [0, 1]], dtype='int32')), DTypeError),
    (lambda: nd.linalg.gemm2(nd.ones((2, 2)), nd.ones((2, 2), dtype='float64')), DTypeError),
    (lambda: nd.linalg.potrf(nd.array([[1., 2.], [2., 1.]])), MXNetError),
    (lambda: nd.linalg.inverse(nd.array([[1., 2.], [2., 4.]])), MXNetError),
    (lambda: nd.linalg.trmm(nd.ones((3, 3)), nd.ones((2, 3))), ShapeError),
    (lambda: nd.linalg.extractdiag(nd.ones((3, 3)), offset=3), ShapeError),
    (lambda: nd.linalg.maketrian(nd.ones((4,))), ShapeError),
    (lambda: nd.linalg.gelqf(nd.ones((3, 2))), ShapeError),
    (lambda: nd.linalg.syevd(nd.ones((2, 3))), ShapeError),
])
def test_errors(call, error):
    with pytest.raises(error):
        call().asnumpy()


def test_shape_error_names_operator_and_shapes():
    with pytest.raises(ShapeError, match=r'_linalg_gemm2.*\(2, 3\).*\(2, 3\)'):
        sym.linalg.gemm2(sym.var('a', shape=(2, 3)), sym.var('b', shape=(2, 3))).infer_shape()


def test_hybridized_block_gradients():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            chol = F.linalg.potrf(F.linalg.syrk(x, transpose=True))
            return F.linalg.sumlogdiag(chol) + F.linalg.det(F.linalg.gemm2(x, x,
                                                                           transpose_a=True))

    x = nd.array(np.random.default_rng(3).normal(size=(2, 4, 3)) + np.eye(4, 3), dtype='float64')
    results = []
    for hybrid in (False, True):
        net = Net()
        if hybrid:
            net.hybridize()
        x.attach_grad()
        with autograd.record():
            y = net(x)
        y.backward()
        results.append((y.asnumpy(), x.grad.asnumpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-10)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-8)



def _grad(case, x, cots, create_graph=False):
    x = nd.array(x, dtype='float64')
    x.attach_grad()
    with autograd.record():
        outs = getattr(nd.op, case.op)(x, **case.attrs)
        outs = outs if isinstance(outs, list) else [outs]
        g = autograd.grad(outs, [x], head_grads=[nd.array(c, dtype='float64') for c in cots],
                          create_graph=create_graph)[0]
    return x, g


@pytest.mark.parametrize('case', [c for c in CASES if c.grad_ref is not None], ids=repr)
def test_second_order_of_symmetric_gradients(case):
    """The harness skips second-order checks where the gradient is a convention (grad_ref):
    its derivative is checked here against finite differences, which see one triangle of the
    input, spread evenly over both as the convention does."""
    rng = np.random.default_rng(case.seed)
    a = case.inputs[0](rng)
    outs = getattr(nd.op, case.op)(nd.array(a, dtype='float64'), **case.attrs)
    outs = outs if isinstance(outs, list) else [outs]
    cots = [rng.uniform(-1, 1, size=o.shape) for o in outs]
    v = rng.uniform(-1, 1, size=a.shape)
    x, g = _grad(case, a, cots, create_graph=True)
    g.backward(nd.array(v, dtype='float64'))
    numeric = np.zeros_like(a)
    eps = 1e-6
    for j in np.ndindex(*a.shape):
        plus, minus = a.copy(), a.copy()
        plus[j] += eps
        minus[j] -= eps
        numeric[j] = np.sum((_grad(case, plus, cots)[1].asnumpy() -
                             _grad(case, minus, cots)[1].asnumpy()) * v) / (2 * eps)
    np.testing.assert_allclose(x.grad.asnumpy(), (numeric + T(numeric)) / 2, rtol=1e-4,
                               atol=1e-6)
