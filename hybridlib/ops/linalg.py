"""Linear algebra on batches of matrices: MXNet's ``linalg`` operators (``nd.linalg.*``).

Every operator works on the trailing two axes of its inputs and batches over the leading ones
(``gemm``/``gemm2`` also take the row axis from ``axis``). Only float32 and float64 are
accepted, as in MXNet. The maths comes from ``xp.linalg`` (numpy or cupy): ``cholesky``,
``qr``, ``eigh``, ``inv``, ``det``, ``slogdet`` and ``solve`` (triangular systems are solved as
general ones, which gives the same values).

Conventions that follow MXNet (LAPACK) exactly:

* the factorisations read one triangle of their input: ``potrf`` and ``syevd`` the lower one
  (the upper one for ``potrf(lower=False)``), ``potri``, ``trmm`` and ``trsm`` their triangular
  matrix's; the other triangle is ignored;
* the gradient of ``potrf`` and ``syevd`` is MXNet's symmetric one, which spreads over both
  triangles what the forward reads from one of them;
* ``gelqf`` has LAPACK's Householder signs (``L`` = ``R^T`` of ``qr(A^T)``), ``syevd`` turns
  each eigenvector so that its largest entry (the first on ties) is positive;
* ``det`` and ``slogdet`` give no gradient for singular matrices (det exactly 0);
* ``sumlogdiag`` and ``det`` of a single matrix have shape (1,).

Gradients are written with these operators themselves (MXNet's ``la_op-inl.h`` formulas):
triangles are taken as ``maketrian(extracttrian(x))``, so every gradient is differentiable again.
"""
import numpy as np

from ..base import DTypeError, MXNetError, ShapeError
from .attrs import Bool, Float, Int
from .registry import register, same_dtype

__all__ = []

_LA_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


# -------------------------------------------------------------------------------------------------
# Helpers: dtypes and shapes
# -------------------------------------------------------------------------------------------------

def _la_types(n_outputs=1):
    """dtype inference: one float32/float64 dtype for all inputs and ``n_outputs`` outputs."""
    def infer_type(attrs, *dtypes):
        ins, outs = same_dtype(attrs, *dtypes)
        if outs[0] is not None and outs[0] not in _LA_DTYPES:
            raise DTypeError('This operation only supports 32-bit and 64-bit floating point, '
                             f'got {outs[0].name}')
        return ins, outs * n_outputs
    return infer_type


def _dim(*values, what):
    """The one known value among ``values`` (0 is unknown); ShapeError when two differ."""
    known = {v for v in values if v}
    if len(known) > 1:
        raise ShapeError(f'{what}: {" vs ".join(str(v) for v in values)}')
    return known.pop() if known else 0


def _matrices(shape, name, square=False):
    """``shape`` as a list, checked to hold (square) matrices; None stays None."""
    if shape is None:
        return None
    if len(shape) < 2:
        raise ShapeError(f'{name} must have at least 2 dimensions, got {tuple(shape)}')
    shape = list(shape)
    if square:
        shape[-1] = shape[-2] = _dim(shape[-2], shape[-1],
                                     what=f'{name} must hold square matrices, got {tuple(shape)}')
    return shape


def _batch(shapes, what='inputs'):
    """Merge the leading (batch) axes of several partial shapes of one rank in place."""
    known = [s for s in shapes if s is not None]
    if not known:
        return
    if len({len(s) for s in known}) > 1:
        raise ShapeError(f'{what} must have the same rank, got '
                         f'{", ".join(str(tuple(s)) for s in known)}')
    for i in range(len(known[0]) - 2):
        d = _dim(*(s[i] for s in known), what=f'{what} differ on batch axis {i}')
        for s in known:
            s[i] = d


def _per_matrix_shape(batch):
    """MXNet's shape of one value per matrix: the batch axes, or (1,) for a single matrix."""
    return tuple(batch) if batch else (1,)


def _square_unary(attrs, a):
    a = _matrices(a, 'A', square=True)
    return [None if a is None else tuple(a)], [None if a is None else tuple(a)]


def _reduce_matrix(attrs, a):
    """(..., n, n) -> one value per matrix (sumlogdiag, det)."""
    a = _matrices(a, 'A', square=True)
    if a is None:
        return [None], [None]
    return [tuple(a)], [_per_matrix_shape(a[:-2])]


# -------------------------------------------------------------------------------------------------
# Helpers: arrays (xp) and gradients (F)
# -------------------------------------------------------------------------------------------------

def _mT(x):
    """The matrices of ``x`` transposed (an array of xp)."""
    return x.swapaxes(-1, -2)


def _triangle(xp, x, lower, k=0):
    return xp.tril(x, k) if lower else xp.triu(x, -k)


def _symmetric(xp, x, lower):
    """The symmetric matrices that the ``lower`` (or upper) triangle of ``x`` stands for."""
    return _triangle(xp, x, lower) + _mT(_triangle(xp, x, lower, -1))


def _contiguous(xp, x, dtype):
    return xp.ascontiguousarray(x, dtype=dtype)


def _lapack(what, fn, *args):
    """``fn(*args)``, its LinAlgError as MXNet's error for ``what``."""
    try:
        return fn(*args)
    except np.linalg.LinAlgError as err:
        raise MXNetError(f'{what} failed: {err}') from None


def _Ft(F, x):
    """The matrices of ``x`` transposed (a graph operator)."""
    return F.swapaxes(x, dim1=-1, dim2=-2)


def _Ftri(F, x, lower=True):
    """The ``lower`` (or upper) triangle of ``x``, the other one zero."""
    return F._linalg_maketrian(F._linalg_extracttrian(x, lower=lower), lower=lower)


def _Fsymmetric(F, x, lower=True):
    """Copies the ``lower`` triangle of ``x`` onto the upper one (or the upper onto the
    lower): MXNet's ``CopyTriangularToOppositeSide``."""
    t = _Ftri(F, x, lower)
    return F.elemwise_sub(F.elemwise_add(t, _Ft(F, t)),
                          F._linalg_makediag(F._linalg_extractdiag(x)))


def _Fper_matrix(F, values, ndim):
    """One value per matrix (shape batch, or (1,)) made to broadcast against the matrices."""
    if ndim == 2:
        return F.reshape(values, shape=(1, 1))
    return F.expand_dims(F.expand_dims(values, axis=-1), axis=-1)


def _Fidentity_where(F, a, singular, ndim):
    """``a`` with the matrices flagged in ``singular`` (1.0/0.0 per matrix) replaced by the
    identity, so that they can be inverted; their gradients are zeroed by the caller."""
    flag = _Fper_matrix(F, singular, ndim)
    eye = F._linalg_makediag(F.ones_like(F._linalg_extractdiag(a)))
    return F.elemwise_add(F.broadcast_mul(a, F._rminus_scalar(flag, scalar=1.0)),
                          F.broadcast_mul(eye, flag))


def _or_zeros(F, grad, like):
    return F.zeros_like(like) if grad is None else grad


# -------------------------------------------------------------------------------------------------
# gemm, gemm2
# -------------------------------------------------------------------------------------------------

def _row_axis(attrs, ndim):
    axis = attrs.axis + ndim if attrs.axis < 0 else attrs.axis
    if not 0 <= axis < ndim - 1:
        raise ShapeError(f'invalid row axis {attrs.axis} for {ndim}-d matrices (the last axis '
                         'holds the columns)')
    return axis


def _gemm_shapes(attrs, a, b, c=None, with_c=False):
    """Shapes of gemm (``with_c``) and gemm2: op(A) (m, k) x op(B) (k, n) -> (m, n), the rows
    on ``axis`` and the columns on the last axis; the other axes are batch axes."""
    given = [a, b, c] if with_c else [a, b]
    known = [s for s in given if s is not None]
    if not known:
        return given, [None]
    if len({len(s) for s in known}) > 1:
        raise ShapeError('A, B' + (' and C' if with_c else '') + ' must have the same rank')
    ndim = len(known[0])
    if ndim < 2:
        raise ShapeError(f'matrices must have at least 2 dimensions, got {ndim}')
    axis = _row_axis(attrs, ndim)
    last = ndim - 1
    a, b, out = (list(s) if s is not None else [0] * ndim for s in (a, b, c))
    for i in range(last):
        if i != axis:
            a[i] = b[i] = out[i] = _dim(a[i], b[i], out[i],
                                        what=f'A, B (and C) differ on batch axis {i}')
    rows_a, cols_a = (last, axis) if attrs.transpose_a else (axis, last)
    rows_b, cols_b = (last, axis) if attrs.transpose_b else (axis, last)
    a[cols_a] = b[rows_b] = _dim(a[cols_a], b[rows_b],
                                 what='incompatible matrix dimensions for multiplication')
    a[rows_a] = out[axis] = _dim(a[rows_a], out[axis], what='rows of op(A) and of C')
    b[cols_b] = out[last] = _dim(b[cols_b], out[last], what='columns of op(B) and of C')
    ins = [tuple(a), tuple(b)] + ([tuple(out)] if with_c else [])
    return ins, [tuple(out)]


def _gemm_product(xp, attrs, a, b):
    """alpha * op(A) op(B) with the rows on ``axis``: swapaxes, batched matmul, swapaxes."""
    axis = _row_axis(attrs, a.ndim)
    if axis != a.ndim - 2:
        a, b = a.swapaxes(axis, -2), b.swapaxes(axis, -2)
    a = _mT(a) if attrs.transpose_a else a
    b = _mT(b) if attrs.transpose_b else b
    out = xp.matmul(a, b)
    out *= attrs.alpha
    return out if axis == out.ndim - 2 else out.swapaxes(axis, -2)


def _gemm_grads(F, attrs, a, b, g):
    ta, tb, alpha, axis = attrs.transpose_a, attrs.transpose_b, attrs.alpha, attrs.axis
    if ta:
        da = F._linalg_gemm2(b, g, transpose_a=tb, transpose_b=True, alpha=alpha, axis=axis)
    else:
        da = F._linalg_gemm2(g, b, transpose_b=not tb, alpha=alpha, axis=axis)
    if tb:
        db = F._linalg_gemm2(g, a, transpose_a=True, transpose_b=ta, alpha=alpha, axis=axis)
    else:
        db = F._linalg_gemm2(a, g, transpose_a=not ta, alpha=alpha, axis=axis)
    return [da, db]


_GEMM_ATTRS = dict(transpose_a=Bool(False, 'multiply with the transpose of A'),
                   transpose_b=Bool(False, 'multiply with the transpose of B'),
                   alpha=Float(1.0, 'scale of A*B'))


@register('_linalg_gemm', aliases=('linalg_gemm',))
class _linalg_gemm:
    """``alpha * op(A) op(B) + beta * C`` for each matrix of the batch, op() the identity or
    the transpose (``transpose_a``, ``transpose_b``). The rows are on ``axis`` (default -2),
    the columns on the last axis; all other axes are batch axes."""
    inputs = ('A', 'B', 'C')
    attrs = dict(_GEMM_ATTRS, beta=Float(1.0, 'scale of C'),
                 axis=Int(-2, 'axis of the matrix rows'))
    infer_type = _la_types()

    def compute(xp, attrs, a, b, c):
        out = _gemm_product(xp, attrs, a, b)
        out += attrs.beta * c
        return _contiguous(xp, out, a.dtype)

    def infer_shape(attrs, a, b, c):
        return _gemm_shapes(attrs, a, b, c, with_c=True)

    def gradient(F, attrs, inputs, outputs, ograds):
        g = ograds[0]
        return _gemm_grads(F, attrs, inputs[0], inputs[1], g) + \
            [F._mul_scalar(g, scalar=attrs.beta)]


@register('_linalg_gemm2', aliases=('linalg_gemm2',))
class _linalg_gemm2:
    """``alpha * op(A) op(B)`` for each matrix of the batch; as ``gemm`` without C."""
    inputs = ('A', 'B')
    attrs = dict(_GEMM_ATTRS, axis=Int(-2, 'axis of the matrix rows'))
    infer_type = _la_types()

    def compute(xp, attrs, a, b):
        return _contiguous(xp, _gemm_product(xp, attrs, a, b), a.dtype)

    def infer_shape(attrs, a, b):
        return _gemm_shapes(attrs, a, b)

    def gradient(F, attrs, inputs, outputs, ograds):
        return _gemm_grads(F, attrs, inputs[0], inputs[1], ograds[0])


# -------------------------------------------------------------------------------------------------
# Cholesky: potrf, potri; triangular products and solves: trmm, trsm; syrk
# -------------------------------------------------------------------------------------------------

_LOWER = Bool(True, 'the triangular matrix is lower (True) or upper (False) triangular')


@register('_linalg_potrf', aliases=('linalg_potrf',))
class _linalg_potrf:
    """Cholesky factor of symmetric positive-definite matrices: A = B B^T with B lower
    triangular (``lower=True``), or A = B^T B with B upper triangular. Only the ``lower`` (or
    upper) triangle of A is read."""
    inputs = ('A',)
    attrs = dict(lower=_LOWER)
    infer_shape = _square_unary
    infer_type = _la_types()

    def compute(xp, attrs, a):
        chol = _lapack('potrf (the matrix must be symmetric positive-definite)',
                       xp.linalg.cholesky, _symmetric(xp, a, attrs.lower))
        return _contiguous(xp, chol if attrs.lower else _mT(chol), a.dtype)

    def gradient(F, attrs, inputs, outputs, ograds):
        # dA = 0.5 B^-T symm(B^T dB) B^-1 (lower; the transposes swap for upper)
        b, lower = outputs[0], attrs.lower
        m = F._linalg_trmm(b, ograds[0], transpose=True, rightside=not lower, lower=lower)
        s = _Fsymmetric(F, m, lower)
        x = F._linalg_trsm(b, s, rightside=False, lower=lower, transpose=lower)
        return [F._linalg_trsm(b, x, rightside=True, lower=lower, transpose=not lower,
                               alpha=0.5)]


@register('_linalg_potri', aliases=('linalg_potri',))
class _linalg_potri:
    """The inverse of B B^T (or B^T B for ``lower=False``) from its Cholesky factor B, which is
    the inverse of the matrix that ``potrf`` factorised. Only B's triangle is read."""
    inputs = ('A',)
    attrs = dict(lower=_LOWER)
    infer_shape = _square_unary
    infer_type = _la_types()

    def compute(xp, attrs, b):
        inv = _lapack('potri (the triangular matrix must be invertible)', xp.linalg.inv,
                      _triangle(xp, b, attrs.lower))
        out = xp.matmul(_mT(inv), inv) if attrs.lower else xp.matmul(inv, _mT(inv))
        return _contiguous(xp, _symmetric(xp, out, True), b.dtype)

    def gradient(F, attrs, inputs, outputs, ograds):
        # dB = -tril(A (dA + dA^T) B^-T), A the output (lower; mirrored for upper)
        b, a, g = inputs[0], outputs[0], ograds[0]
        s = F.elemwise_add(g, _Ft(F, g))
        if attrs.lower:
            m = F._linalg_gemm2(a, s)
            x = F._linalg_trsm(b, m, rightside=True, lower=True, transpose=True, alpha=-1.0)
        else:
            m = F._linalg_gemm2(s, a)
            x = F._linalg_trsm(b, m, rightside=False, lower=False, transpose=True, alpha=-1.0)
        return [_Ftri(F, x, attrs.lower)]


def _triangular_shapes(attrs, a, b):
    """trmm/trsm: A (..., n, n) triangular; B (..., p, q) with p = n (left) or q = n (right);
    the output has B's shape."""
    a = _matrices(a, 'A', square=True)
    b = _matrices(b, 'B')
    _batch([a, b], what='A and B')
    if a is not None and b is not None:
        side = -1 if attrs.rightside else -2
        a[-1] = a[-2] = b[side] = _dim(a[-1], b[side], what='incompatible matrix dimensions '
                                       f'(rightside={attrs.rightside})')
    return ([None if a is None else tuple(a), None if b is None else tuple(b)],
            [None if b is None else tuple(b)])


_TRIANGULAR_ATTRS = dict(transpose=Bool(False, 'use the transpose of the triangular matrix'),
                         rightside=Bool(False, 'the triangular matrix is on the right'),
                         lower=_LOWER, alpha=Float(1.0, 'scale of the result'))


def _op_triangle(xp, attrs, a):
    t = _triangle(xp, a, attrs.lower)
    return _mT(t) if attrs.transpose else t


def _triangle_grad(F, attrs, left, right, scale):
    """The gradient of the triangular matrix: ``scale`` times the product of ``left`` (the
    output's gradient, or the other operand) and ``right``, kept on the triangle."""
    t = attrs.transpose
    if attrs.rightside == t:
        d = F._linalg_gemm2(left, right, transpose_a=t, transpose_b=not t, alpha=scale)
    else:
        d = F._linalg_gemm2(right, left, transpose_a=not t, transpose_b=t, alpha=scale)
    return _Ftri(F, d, attrs.lower)


@register('_linalg_trmm', aliases=('linalg_trmm',))
class _linalg_trmm:
    """``alpha * op(A) B`` (or ``alpha * B op(A)`` with ``rightside``) for triangular A (only
    its ``lower``/upper triangle is read), op() the identity or the transpose."""
    inputs = ('A', 'B')
    attrs = dict(_TRIANGULAR_ATTRS)
    infer_shape = _triangular_shapes
    infer_type = _la_types()

    def compute(xp, attrs, a, b):
        t = _op_triangle(xp, attrs, a)
        out = xp.matmul(b, t) if attrs.rightside else xp.matmul(t, b)
        out *= attrs.alpha
        return _contiguous(xp, out, b.dtype)

    def gradient(F, attrs, inputs, outputs, ograds):
        a, b, g = inputs[0], inputs[1], ograds[0]
        da = _triangle_grad(F, attrs, g, b, attrs.alpha)
        db = F._linalg_trmm(a, g, transpose=not attrs.transpose, rightside=attrs.rightside,
                            lower=attrs.lower, alpha=attrs.alpha)
        return [da, db]


@register('_linalg_trsm', aliases=('linalg_trsm',))
class _linalg_trsm:
    """Solves ``op(A) X = alpha * B`` (or ``X op(A) = alpha * B`` with ``rightside``) for X,
    A triangular (only its ``lower``/upper triangle is read)."""
    inputs = ('A', 'B')
    attrs = dict(_TRIANGULAR_ATTRS)
    infer_shape = _triangular_shapes
    infer_type = _la_types()

    def compute(xp, attrs, a, b):
        t = _op_triangle(xp, attrs, a)
        rhs = b * attrs.alpha
        what = 'trsm (the triangular matrix must be invertible)'
        if attrs.rightside:
            out = _mT(_lapack(what, xp.linalg.solve, _mT(t), _mT(rhs)))
        else:
            out = _lapack(what, xp.linalg.solve, t, rhs)
        return _contiguous(xp, out, b.dtype)

    def gradient(F, attrs, inputs, outputs, ograds):
        # MXNet scales dA by -1/alpha after solving with alpha; solving with 1 first gives
        # the same without dividing (alpha = 0 gives zeros, not NaN)
        a, x, g = inputs[0], outputs[0], ograds[0]
        solved = F._linalg_trsm(a, g, transpose=not attrs.transpose,
                                rightside=attrs.rightside, lower=attrs.lower)
        da = _triangle_grad(F, attrs, solved, x, -1.0)
        return [da, F._mul_scalar(solved, scalar=attrs.alpha)]


@register('_linalg_syrk', aliases=('linalg_syrk',))
class _linalg_syrk:
    """``alpha * A A^T`` (or ``alpha * A^T A`` with ``transpose``): (..., m, n) -> (..., m, m)
    (or (..., n, n)), exactly symmetric."""
    inputs = ('A',)
    attrs = dict(transpose=Bool(False, 'use A^T A'), alpha=Float(1.0, 'scale of the result'))
    infer_type = _la_types()

    def compute(xp, attrs, a):
        out = xp.matmul(_mT(a), a) if attrs.transpose else xp.matmul(a, _mT(a))
        out *= attrs.alpha
        return _contiguous(xp, _symmetric(xp, out, True), a.dtype)

    def infer_shape(attrs, a):
        a = _matrices(a, 'A')
        if a is None:
            return [None], [None]
        n = a[-1] if attrs.transpose else a[-2]
        return [tuple(a)], [tuple(a[:-2]) + (n, n)]

    def gradient(F, attrs, inputs, outputs, ograds):
        a, g = inputs[0], ograds[0]
        s = F.elemwise_add(g, _Ft(F, g))
        if attrs.transpose:
            return [F._linalg_gemm2(a, s, alpha=attrs.alpha)]
        return [F._linalg_gemm2(s, a, alpha=attrs.alpha)]


# -------------------------------------------------------------------------------------------------
# Diagonals and triangles: sumlogdiag, extractdiag, makediag, extracttrian, maketrian
# -------------------------------------------------------------------------------------------------

@register('_linalg_sumlogdiag', aliases=('linalg_sumlogdiag',))
class _linalg_sumlogdiag:
    """The sum of the logarithms of the diagonal of each square matrix: (..., n, n) -> (...),
    (1,) for a single matrix."""
    inputs = ('A',)
    infer_shape = _reduce_matrix
    infer_type = _la_types()

    def compute(xp, attrs, a):
        out = xp.log(xp.diagonal(a, 0, -2, -1)).sum(axis=-1)
        return _contiguous(xp, out.reshape(_per_matrix_shape(a.shape[:-2])), a.dtype)

    def gradient(F, attrs, inputs, outputs, ograds):
        a, g = inputs[0], ograds[0]
        if a.ndim > 2:
            g = F.expand_dims(g, axis=-1)
        return [F._linalg_makediag(F.broadcast_div(g, F._linalg_extractdiag(a)))]


def _diag_index(xp, n, offset):
    """(rows, cols) of diagonal ``offset`` of an n x n matrix."""
    i = xp.arange(n - abs(offset))
    return i + max(-offset, 0), i + max(offset, 0)


def _extracted_size(n, offset, what):
    """n - |offset|: the length of diagonal ``offset`` (0 when n is unknown)."""
    if not n:
        return 0
    m = n - abs(offset)
    if m <= 0:
        raise ShapeError(f'illegal offset {offset} for {what} of {n} x {n} matrices')
    return m


def _made_matrices(xp, a, n, index):
    """(..., n, n) zeros with the last axis of ``a`` written at ``index`` (rows, cols): the
    matrices of makediag and maketrian."""
    out = xp.zeros(a.shape[:-1] + (n, n), dtype=a.dtype)
    rows, cols = index
    out[..., rows, cols] = a
    return out


def _made_shape(a, side, what):
    """Shapes of makediag and maketrian: (..., k) -> (..., n, n) with n = ``side(k)`` (0 when k
    is unknown)."""
    if a is None:
        return [None], [None]
    if len(a) < 1:
        raise ShapeError(f'{what} needs at least one dimension')
    n = side(a[-1]) if a[-1] else 0
    return [tuple(a)], [tuple(a[:-1]) + (n, n)]


_OFFSET = Int(0, 'offset of the diagonal from the main diagonal (< 0 below, > 0 above)')


@register('_linalg_extractdiag', aliases=('linalg_extractdiag',))
class _linalg_extractdiag:
    """Diagonal ``offset`` of each square matrix: (..., n, n) -> (..., n - |offset|)."""
    inputs = ('A',)
    attrs = dict(offset=_OFFSET)
    infer_type = _la_types()

    def compute(xp, attrs, a):
        return _contiguous(xp, xp.diagonal(a, attrs.offset, -2, -1), a.dtype)

    def infer_shape(attrs, a):
        a = _matrices(a, 'A', square=True)
        if a is None:
            return [None], [None]
        m = _extracted_size(a[-1], attrs.offset, 'extractdiag')
        return [tuple(a)], [tuple(a[:-2]) + (m,)]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._linalg_makediag(ograds[0], offset=attrs.offset)]


@register('_linalg_makediag', aliases=('linalg_makediag',))
class _linalg_makediag:
    """Square matrices with the input on diagonal ``offset`` and zeros elsewhere:
    (..., n) -> (..., n + |offset|, n + |offset|)."""
    inputs = ('A',)
    attrs = dict(offset=_OFFSET)
    infer_type = _la_types()

    def compute(xp, attrs, a):
        n = a.shape[-1] + abs(attrs.offset)
        return _made_matrices(xp, a, n, _diag_index(xp, n, attrs.offset))

    def infer_shape(attrs, a):
        return _made_shape(a, lambda k: k + abs(attrs.offset), 'makediag')

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._linalg_extractdiag(ograds[0], offset=attrs.offset)]


def _trian_index(xp, n, offset, lower):
    """(rows, cols) of the triangle MXNet stores as a vector: the lower triangle row by row,
    the upper one column by column (offset > 0, or offset 0 with ``lower=False``)."""
    rows, cols = np.tril_indices(n - abs(offset))
    rows = rows + abs(offset)
    if offset > 0 or (offset == 0 and not lower):
        rows, cols = cols, rows
    return xp.asarray(rows), xp.asarray(cols)


def _triangular_root(length):
    """m with m (m + 1) / 2 == length; ShapeError when there is none."""
    m = int(np.floor(0.5 + (np.sqrt(8 * length + 1) - 1) * 0.5))
    if m * (m + 1) // 2 != length:
        raise ShapeError(f'the last axis of maketrian\'s input ({length}) is not the size of a '
                         'triangle m (m + 1) / 2')
    return m


_TRIAN_ATTRS = dict(offset=_OFFSET, lower=Bool(True, 'the lower triangle (only for offset 0)'))


@register('_linalg_extracttrian', aliases=('linalg_extracttrian',))
class _linalg_extracttrian:
    """The triangle of each square matrix as a vector: the lower one (``lower``, offset <= 0)
    or the upper one, starting ``offset`` diagonals off the main one:
    (..., n, n) -> (..., m (m + 1) / 2) with m = n - |offset|."""
    inputs = ('A',)
    attrs = dict(_TRIAN_ATTRS)
    infer_type = _la_types()

    def compute(xp, attrs, a):
        rows, cols = _trian_index(xp, a.shape[-1], attrs.offset, attrs.lower)
        return _contiguous(xp, a[..., rows, cols], a.dtype)

    def infer_shape(attrs, a):
        a = _matrices(a, 'A', square=True)
        if a is None:
            return [None], [None]
        m = _extracted_size(a[-1], attrs.offset, 'extracttrian')
        return [tuple(a)], [tuple(a[:-2]) + (m * (m + 1) // 2,)]

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._linalg_maketrian(ograds[0], offset=attrs.offset, lower=attrs.lower)]


@register('_linalg_maketrian', aliases=('linalg_maketrian',))
class _linalg_maketrian:
    """Square matrices from triangles stored as vectors (the inverse of ``extracttrian``):
    (..., m (m + 1) / 2) -> (..., m + |offset|, m + |offset|), zeros off the triangle."""
    inputs = ('A',)
    attrs = dict(_TRIAN_ATTRS)
    infer_type = _la_types()

    def compute(xp, attrs, a):
        n = _triangular_root(a.shape[-1]) + abs(attrs.offset)
        return _made_matrices(xp, a, n, _trian_index(xp, n, attrs.offset, attrs.lower))

    def infer_shape(attrs, a):
        return _made_shape(a, lambda k: _triangular_root(k) + abs(attrs.offset), 'maketrian')

    def gradient(F, attrs, inputs, outputs, ograds):
        return [F._linalg_extracttrian(ograds[0], offset=attrs.offset, lower=attrs.lower)]


# -------------------------------------------------------------------------------------------------
# Factorisations: gelqf, syevd
# -------------------------------------------------------------------------------------------------

@register('_linalg_gelqf', aliases=('linalg_gelqf',))
class _linalg_gelqf:
    """LQ factorisation A = L Q of full-rank (..., m, n) matrices with m <= n: outputs Q
    (..., m, n) with orthonormal rows and L (..., m, m) lower triangular."""
    inputs = ('A',)
    num_outputs = 2
    infer_type = _la_types(2)

    def compute(xp, attrs, a):
        # LAPACK's gelqf of A is its geqrf of A^T: the same Householder signs as MXNet
        q, r = _lapack('gelqf', xp.linalg.qr, _mT(a))
        return _contiguous(xp, _mT(q), a.dtype), _contiguous(xp, _mT(r), a.dtype)

    def infer_shape(attrs, a):
        a = _matrices(a, 'A')
        if a is None:
            return [None], [None, None]
        if a[-2] and a[-1] and a[-2] > a[-1]:
            raise ShapeError(f'gelqf needs matrices with no more rows than columns, got '
                             f'{tuple(a)}')
        return [tuple(a)], [tuple(a), tuple(a[:-1]) + (a[-2],)]

    def gradient(F, attrs, inputs, outputs, ograds):
        # dA = L^-T (dQ + symm(M) Q), M = L^T dL - dQ Q^T
        q, l = outputs
        dq, dl = _or_zeros(F, ograds[0], q), _or_zeros(F, ograds[1], l)
        m = F._linalg_gemm(dq, q, F._linalg_trmm(l, dl, transpose=True), transpose_b=True,
                           alpha=-1.0)
        x = F._linalg_gemm(_Fsymmetric(F, m), q, dq)
        return [F._linalg_trsm(l, x, transpose=True)]


# MXNet's floor on the eigenvalue gaps in syevd's gradient (1e-30 in float32; it takes 1e-100
# in float64, where gaps that small give useless gradients either way)
_EIGENGAP_EPS = 1e-30


def _turn_eigenvectors(xp, u):
    """Flip each row of ``u`` whose largest entry in absolute value (the first of ties) is
    negative: MXNet's deterministic signs."""
    largest = xp.take_along_axis(u, xp.argmax(xp.abs(u), axis=-1)[..., None], axis=-1)
    return xp.where(largest < 0, -u, u)


@register('_linalg_syevd')
class _linalg_syevd:
    """Eigendecomposition of symmetric matrices (only the lower triangle is read): outputs U
    (..., n, n), the eigenvectors as rows, and L (..., n), the eigenvalues in ascending order,
    with U A = diag(L) U."""
    inputs = ('A',)
    num_outputs = 2
    infer_type = _la_types(2)

    def compute(xp, attrs, a):
        lam, vectors = _lapack('syevd', xp.linalg.eigh, _symmetric(xp, a, True))
        u = _turn_eigenvectors(xp, _mT(vectors))
        return _contiguous(xp, u, a.dtype), _contiguous(xp, lam, a.dtype)

    def infer_shape(attrs, a):
        a = _matrices(a, 'A', square=True)
        if a is None:
            return [None], [None, None]
        return [tuple(a)], [tuple(a), tuple(a[:-1])]

    def gradient(F, attrs, inputs, outputs, ograds):
        # dA = U^T Y U with Y symmetric: Y_ij = (X_ij - X_ji) / (2 max(L_i - L_j, eps)) below
        # the diagonal, X = dU U^T, and the eigenvalues' gradient on the diagonal
        u, lam = outputs
        du, dlam = ograds
        y = F._linalg_makediag(_or_zeros(F, dlam, lam))
        if du is not None:
            x = F._linalg_gemm2(du, u, transpose_b=True)
            gaps = F.broadcast_sub(F.expand_dims(lam, axis=-1), F.expand_dims(lam, axis=-2))
            gaps = F._mul_scalar(F._maximum_scalar(gaps, scalar=_EIGENGAP_EPS), scalar=2.0)
            below = _Ftri(F, F.elemwise_div(F.elemwise_sub(x, _Ft(F, x)), gaps))
            y = F.elemwise_add(y, F.elemwise_add(below, _Ft(F, below)))
        return [F._linalg_gemm2(u, F._linalg_gemm2(y, u), transpose_a=True)]


# -------------------------------------------------------------------------------------------------
# inverse, det, slogdet
# -------------------------------------------------------------------------------------------------

@register('_linalg_inverse', aliases=('linalg_inverse',))
class _linalg_inverse:
    """The inverse of each square matrix."""
    inputs = ('A',)
    infer_shape = _square_unary
    infer_type = _la_types()

    def compute(xp, attrs, a):
        return _contiguous(xp, _lapack('inverse (the matrix is singular)', xp.linalg.inv, a),
                           a.dtype)

    def gradient(F, attrs, inputs, outputs, ograds):
        # dA = -B^T dB B^T, B the inverse
        b = outputs[0]
        return [F._linalg_gemm2(b, F._linalg_gemm2(ograds[0], b, transpose_b=True),
                                transpose_a=True, alpha=-1.0)]


def _det_output_names(attrs):
    # MXNet's det has two hidden outputs (its LU factors), so its visible one is output0
    return ['output0']


@register('_linalg_det', aliases=('linalg_det',))
class _linalg_det:
    """The determinant of each square matrix: (..., n, n) -> (...), (1,) for one matrix.
    Singular matrices get no gradient, as in MXNet."""
    inputs = ('A',)
    output_names = _det_output_names
    infer_shape = _reduce_matrix
    infer_type = _la_types()

    def compute(xp, attrs, a):
        out = xp.linalg.det(a)
        return _contiguous(xp, out.reshape(_per_matrix_shape(a.shape[:-2])), a.dtype)

    def gradient(F, attrs, inputs, outputs, ograds):
        # dA = dDet * det * A^-T, zero where det == 0 (the identity stands in for A there)
        a, det = inputs[0], outputs[0]
        safe = _Fidentity_where(F, a, F._equal_scalar(det, scalar=0.0), a.ndim)
        scale = _Fper_matrix(F, F.elemwise_mul(ograds[0], det), a.ndim)
        return [F.broadcast_mul(scale, _Ft(F, F._linalg_inverse(safe)))]


@register('_linalg_slogdet', aliases=('linalg_slogdet',))
class _linalg_slogdet:
    """Sign and log of the absolute value of the determinant of each square matrix (sign 0
    and -inf for singular ones). Only the log gets a gradient, none for singular matrices."""
    inputs = ('A',)
    num_outputs = 2
    infer_type = _la_types(2)

    def compute(xp, attrs, a):
        sign, logabsdet = xp.linalg.slogdet(a)
        shape = _per_matrix_shape(a.shape[:-2])
        return (_contiguous(xp, sign.reshape(shape), a.dtype),
                _contiguous(xp, logabsdet.reshape(shape), a.dtype))

    def infer_shape(attrs, a):
        ins, outs = _reduce_matrix(attrs, a)
        return ins, outs * 2

    def gradient(F, attrs, inputs, outputs, ograds):
        if ograds[1] is None:
            return [None]
        a, sign = inputs[0], outputs[0]
        singular = F._equal_scalar(sign, scalar=0.0)
        safe = _Fidentity_where(F, a, singular, a.ndim)
        scale = _Fper_matrix(F, F.elemwise_mul(ograds[1], F._rminus_scalar(singular, scalar=1.0)),
                             a.ndim)
        return [F.broadcast_mul(scale, _Ft(F, F._linalg_inverse(safe)))]
