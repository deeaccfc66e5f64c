"""Test arrays: random data drawn from numpy's global generator (as MXNet, so that
``np.random.seed`` makes it repeatable), random shapes, special matrices, and numpy references
of reductions.

Arrays are dense in hybridlib: the helpers that build sparse arrays raise ``NotSupportedError``.
"""
import numpy as np

from .. import ndarray as nd
from ..base import MXNetAssertionError, check_stype
from .tolerances import default_context, default_dtype

__all__ = ['random_arrays', 'random_uniform_arrays', 'random_sample', 'rand_shape_2d',
           'rand_shape_3d', 'rand_shape_nd', 'rand_coord_2d', 'rand_ndarray',
           'rand_sparse_ndarray', 'create_sparse_array', 'create_sparse_array_zd',
           'shuffle_csr_column_indices', 'assign_each', 'assign_each2', 'create_2d_tensor',
           'create_vector', 'get_identity_mat', 'get_identity_mat_batch', 'np_reduce',
           'collapse_sum_like', 'new_matrix_with_real_eigvals_2d',
           'new_matrix_with_real_eigvals_nd', 'new_orthonormal_matrix_2d',
           'new_sym_matrix_with_real_eigvals_2d', 'new_sym_matrix_with_real_eigvals_nd']


def random_arrays(*shapes):
    """Standard normal float32 numpy arrays of ``shapes``; one array for one shape."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    if len(arrays) == 1:
        return arrays[0]
    return arrays


def random_uniform_arrays(*shapes, **kwargs):
    """A list of uniform numpy arrays of ``shapes`` (keywords ``low=0``, ``high=1``,
    ``dtype=float32``)."""
    low = kwargs.pop('low', 0.0)
    high = kwargs.pop('high', 1.0)
    dtype = kwargs.pop('dtype', default_dtype())
    if len(kwargs) > 0:
        raise TypeError('Got unexpected argument/s : ' + str(kwargs.keys()))
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """``k`` elements of the sequence ``population``, drawn without replacement."""
    assert 0 <= k <= len(population)
    population_copy = population[:]
    np.random.shuffle(population_copy)
    return population_copy[0:k]


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-d shape with sizes up to ``dim0``, ``dim1`` (from 0 with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-d shape with sizes up to ``dim0``, ``dim1``, ``dim2``."""
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random shape of ``num_dim`` sizes up to ``dim`` (Python ints)."""
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in np.random.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random point with x in [x_low, x_high) and y in [y_low, y_high)."""
    x = np.random.randint(x_low, x_high, dtype=np.int64)
    y = np.random.randint(y_low, y_high, dtype=np.int64)
    return x, y


def rand_ndarray(shape, stype='default', density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A standard normal NDArray of ``shape`` (float32 unless ``dtype``) on ``ctx``."""
    ctx = ctx if ctx else default_context()
    if stype == 'default':
        return nd.array(random_arrays(shape), dtype=dtype, ctx=ctx)
    return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                               distribution=distribution, modifier_func=modifier_func,
                               shuffle_csr_indices=shuffle_csr_indices, ctx=ctx)[0]


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """MXNet's random sparse array: not available (hybridlib has no sparse storage)."""
    if stype not in ('row_sparse', 'csr'):
        raise MXNetAssertionError('unknown storage type %r' % (stype,))
    check_stype(stype, 'rand_sparse_ndarray')      # refuses the sparse types


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """MXNet's sparse test array: not available (hybridlib has no sparse storage)."""
    if stype not in ('row_sparse', 'csr'):
        raise MXNetAssertionError('Unknown storage type: ' + str(stype))
    check_stype(stype, 'create_sparse_array')      # refuses the sparse types


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None, dtype=None,
                           modifier_func=None, shuffle_csr_indices=False):
    """MXNet's sparse test array: not available (hybridlib has no sparse storage)."""
    if stype not in ('row_sparse', 'csr'):
        raise MXNetAssertionError('Unknown storage type: ' + str(stype))
    check_stype(stype, 'create_sparse_array_zd')   # refuses the sparse types


def shuffle_csr_column_indices(csr):
    """Shuffle the column indices within each row of a CSR matrix (anything with ``indptr``
    and ``indices`` arrays, e.g. a scipy.sparse matrix), in place."""
    if not (hasattr(csr, 'indptr') and hasattr(csr, 'indices')):
        check_stype('csr', 'shuffle_csr_column_indices')   # MXNet's CSRNDArray: refused
    for i in range(len(csr.indptr) - 1):
        start, end = csr.indptr[i], csr.indptr[i + 1]
        sublist = np.array(csr.indices[start:end])
        np.random.shuffle(sublist)
        csr.indices[start:end] = sublist


def assign_each(the_input, function):
    """A float64 array of ``function(x)`` for each element ``x`` of ``the_input``."""
    if function is None:
        return np.array(the_input)
    the_input = np.asarray(the_input)
    output = np.zeros(the_input.shape)
    for idx in np.ndindex(the_input.shape):
        output[idx] = function(the_input[idx])
    return output


def assign_each2(input1, input2, function):
    """A float64 array of ``function(x, y)`` for each pair of elements of two arrays."""
    if function is None:
        return np.array(input1)
    input1, input2 = np.asarray(input1), np.asarray(input2)
    assert input1.shape == input2.shape
    output = np.zeros(input1.shape)
    for idx in np.ndindex(input1.shape):
        output[idx] = function(input1[idx], input2[idx])
    return output


def create_2d_tensor(rows, columns, dtype=np.int64):
    """An NDArray (rows, columns) whose row i holds i (for large-tensor tests)."""
    a = nd.arange(0, rows, dtype=dtype).reshape(rows, 1)
    return nd.broadcast_to(a, shape=(a.shape[0], columns))


def create_vector(size, dtype=np.int64):
    """``nd.arange(size)`` (for large-tensor tests)."""
    return nd.arange(0, size, dtype=dtype)


def get_identity_mat(size):
    """A float32 identity matrix NDArray of ``size``."""
    a = nd.zeros((size, size))
    for i in range(size):
        a[i, i] = 1
    return a


def get_identity_mat_batch(size):
    """Two identity matrices of ``size``, shape (2, size, size)."""
    a = get_identity_mat(size).asnumpy()
    return nd.array([a, a])


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` over ``axis`` (None, an int or a list) one axis at a time with
    ``numpy_reduce_func`` (e.g. ``np.sum``)."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        keepdims_shape = list(dat.shape)
        for i in axis:
            keepdims_shape[i] = 1
        ret = ret.reshape(tuple(keepdims_shape))
    return ret


def collapse_sum_like(a, shape):
    """Sum the numpy array ``a`` over the axes that ``shape`` broadcasts, giving ``shape``."""
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    ndim_diff = len(a.shape) - len(shape)
    axes = list(range(ndim_diff))
    for i, s in enumerate(shape):
        if s != a.shape[i + ndim_diff]:
            assert s == 1
            axes.append(i + ndim_diff)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def new_matrix_with_real_eigvals_2d(n):
    """A well-conditioned (n, n) matrix with real eigenvalues in [-10, 10]."""
    shape = (n, n)
    while True:
        d = np.diag(np.random.uniform(-1.0, 1.0, shape[-1]))
        eye = np.eye(shape[-1]).reshape(shape)
        v = np.random.uniform(-1., 1., shape[-1]).reshape(shape[:-1] + (1,))
        v = v / np.linalg.norm(v, axis=-2, keepdims=True)
        u = eye - 2 * np.matmul(v, np.swapaxes(v, -1, -2))
        q = np.matmul(u, d)
        if np.linalg.cond(q, 2) < 3:
            break
    d = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(np.linalg.inv(q), d), q)


def new_matrix_with_real_eigvals_nd(shape):
    """A stack of ``new_matrix_with_real_eigvals_2d`` of ``shape`` (..., n, n)."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


def new_orthonormal_matrix_2d(n):
    """A random (n, n) orthonormal matrix."""
    x = np.random.randn(n, n)
    return np.linalg.qr(np.matmul(x.T, x))[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    """A random symmetric (n, n) matrix with eigenvalues in [-10, 10]."""
    q = new_orthonormal_matrix_2d(n)
    d = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(q.T, d), q)


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A stack of ``new_sym_matrix_with_real_eigvals_2d`` of ``shape`` (..., n, n)."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1])
                     for _ in range(n)]).reshape(shape)
