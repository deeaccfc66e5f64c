"""Comparisons: ``assert_almost_equal`` and friends, with MXNet's default tolerances per
dtype and its error message, which names the location of the largest violation.
"""
import json

import numpy as np

from ..ndarray import NDArray
from .tolerances import get_atol, get_etol, get_rtol, get_tols

__all__ = ['same', 'checkShapes', 'almost_equal', 'locationError', 'assert_almost_equal',
           'assert_allclose', 'assert_almost_equal_with_err', 'assert_almost_equal_ignore_nan',
           'almost_equal_ignore_nan', 'same_array', 'assert_exception', 'compare_ndarray_tuple',
           'same_symbol_structure']


def _build_err_msg(arrays, err_msg, header='Items are not equal:',
                   names=('ACTUAL', 'DESIRED'), precision=8):
    """numpy.testing's ``build_err_msg`` (the format of MXNet's messages), without importing
    numpy.testing."""
    msg = ['\n' + header]
    err_msg = str(err_msg)
    if err_msg:
        if err_msg.find('\n') == -1 and len(err_msg) < 79 - len(header):
            msg = [msg[0] + ' ' + err_msg]
        else:
            msg.append(err_msg)
    for i, a in enumerate(arrays):
        if isinstance(a, np.ndarray):
            r = np.array_repr(a, precision=precision)
        else:
            r = repr(a)
        if r.count('\n') > 3:
            r = '\n'.join(r.splitlines()[:3]) + '...'
        msg.append(' %s: %s' % (names[i], r))
    return '\n'.join(msg)


def _find_max_violation(a, b, rtol, atol):
    """The index (tuple of ints) and size of the largest violation of the tolerance."""
    with np.errstate(invalid='ignore', over='ignore', divide='ignore'):
        # equal infinities are no violation (as in np.allclose)
        absdiff = np.where(np.equal(a, b), 0, np.abs(a - b))
        tol = atol + rtol * np.abs(b)
        violation = absdiff / (tol + 1e-20)
    loc = np.argmax(violation)
    idx = tuple(int(i) for i in np.unravel_index(loc, violation.shape))
    return idx, np.max(violation)


def same(a, b):
    """Whether two arrays have the same shape and elements."""
    return np.array_equal(a, b)


def checkShapes(a, b):
    """Raise AssertionError unless ``a`` and ``b`` have the same shape."""
    if a.shape != b.shape:
        msg = _build_err_msg([a, b], err_msg='a.shape = {} and b.shape = {} are not equal'
                             .format(str(a.shape), str(b.shape)))
        raise AssertionError(msg)


def _python_tol(tol):
    # a Python number keeps float32 data in float32 under numpy 2, as numpy 1 did for any scalar
    return tol.item() if isinstance(tol, np.generic) else tol


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (``np.allclose``; default
    tolerances of float64)."""
    if not use_broadcast:
        checkShapes(a, b)
    return bool(np.allclose(a, b, rtol=_python_tol(get_rtol(rtol)),
                            atol=_python_tol(get_atol(atol)), equal_nan=equal_nan))


def _allclose_on_device(a, b, rtol, atol, equal_nan):
    """``allclose`` of two NDArrays of one dtype, shape and context, computed where they are
    and in their dtype, as MXNet's ``contrib.allclose``: the tolerances are float32, float16
    data rounds each step to float16, integers compare in float32."""
    xp = a.context.array_module
    x, y = a._data, b._data
    rtol32, atol32 = np.float32(rtol), np.float32(atol)
    with np.errstate(invalid='ignore', over='ignore'):
        if x.dtype == np.float16:
            diff = xp.abs(x - y)
            tol = (rtol32 * xp.abs(y).astype(np.float32)).astype(np.float16)
            tol = (atol32 + tol.astype(np.float32)).astype(np.float16)
        elif x.dtype.kind == 'f':
            work = x.dtype.type
            diff = xp.abs(x - y)
            tol = work(atol32) + work(rtol32) * xp.abs(y)
        else:
            wide = np.int64 if x.dtype.kind in 'ib' else np.uint64
            xw, yw = x.astype(wide), y.astype(wide)
            diff = xp.where(xw > yw, xw - yw, yw - xw).astype(np.float32)
            tol = atol32 + rtol32 * xp.abs(y.astype(np.float32))
        close = (x == y) | (diff <= tol)
        if x.dtype.kind == 'f':
            nan_x, nan_y = xp.isnan(x), xp.isnan(y)
            close = xp.where(nan_x | nan_y, bool(equal_nan) & nan_x & nan_y, close)
    return bool(xp.all(close))


def _on_host(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, (list, tuple)):
        return np.asarray(x)
    if not isinstance(x, np.ndarray) and hasattr(x, 'get') and hasattr(x, 'dtype'):
        return x.get()      # a cupy array
    return x


def _violation_message(a, b, rtol, atol, names, equal_nan, mismatches):
    """MXNet's report of a failed comparison; prints the largest violations to stdout."""
    with np.errstate(invalid='ignore'):
        index, rel = _find_max_violation(a, b, rtol, atol)
    if index == ():
        err = 'Error %f exceeds tolerance rtol=%e, atol=%e.\n' % (rel, rtol, atol)
    else:
        # the violation index is in the broadcast shape: report on broadcast copies
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        a_tmp = np.array(np.broadcast_to(a, shape))
        b_tmp = np.array(np.broadcast_to(b, shape))
        a_full, b_full = a_tmp.copy(), b_tmp.copy()
        index_err, rel_err = index, rel
        print('\n*** Maximum errors for vector of size {}:  rtol={}, atol={}\n'.format(
            a_tmp.size, rtol, atol))
        i = 1
        while i <= a_tmp.size:
            if i <= mismatches[0]:
                print('%3d: Error %f  %s' % (i, rel, locationError(a_full, b_full, index, names)))
            a_tmp[index] = b_tmp[index] = 0
            if almost_equal(a_tmp, b_tmp, rtol, atol, equal_nan=equal_nan):
                break
            i += 1
            if i <= mismatches[1] or mismatches[1] <= 0:
                index, rel = _find_max_violation(a_tmp, b_tmp, rtol, atol)
            else:
                break
        degree = 'at least ' if mismatches[1] > 0 and i > mismatches[1] else ''
        err = 'Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %s%f%%).\n%s' % (
            rel_err, rtol, atol, degree, 100 * i / a_tmp.size,
            locationError(a_full, b_full, index_err, names, maxError=True))
    # legacy='1.25': no 'shape=' in summarised reprs (numpy >= 2.2), as MXNet's numpy printed
    with np.printoptions(threshold=4, suppress=True, legacy='1.25'):
        return _build_err_msg([a, b], err_msg=err)


def locationError(a, b, index, names, maxError=False):
    """The text naming the elements of ``a`` and ``b`` at ``index``."""
    maximum = 'maximum ' if maxError else ''
    return 'Location of %serror: %s, %s=%.8f, %s=%.8f' % (
        maximum, str(index), names[0], a[index], names[1], b[index])


def assert_almost_equal(a, b, rtol=None, atol=None, names=('a', 'b'), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise AssertionError unless ``|a - b| <= atol + rtol * |b|`` everywhere.

    Parameters
    ----------
    a, b : NDArray, numpy array or number
        Broadcast against each other unless ``use_broadcast`` is False (then the shapes must
        be equal). Two NDArrays of one dtype and context are compared where they live.
    rtol, atol : None, float or dict of numpy dtype -> float
        The tolerances; by default the larger of the defaults of the two dtypes
        (``default_rtols``, ``default_atols``).
    names : tuple of two str
        The names of ``a`` and ``b`` in the message.
    equal_nan : bool
        Whether NaN equals NaN.
    mismatches : tuple of two int
        How many of the largest violations to print (to stdout), and to count (the message
        gives the mismatch percentage, "at least" when counting stopped).
    """
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = map(_python_tol, get_tols(a, b, rtol, atol))
    if (isinstance(a, NDArray) and isinstance(b, NDArray) and a.context == b.context
            and a.dtype == b.dtype and a.shape == b.shape and a.dtype != np.bool_):
        if _allclose_on_device(a, b, rtol, atol, equal_nan):
            return
        a, b = a.asnumpy(), b.asnumpy()
    else:
        a, b = _on_host(a), _on_host(b)
        if getattr(a, 'dtype', None) == np.bool_ and getattr(b, 'dtype', None) == np.bool_:
            import numpy.testing   # only here: importing it costs a tenth of a second
            numpy.testing.assert_equal(a, b)
            return
        if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
            return
    raise AssertionError(_violation_message(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """``assert_almost_equal`` with numpy's ``assert_allclose`` defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=('a', 'b'),
                                 equal_nan=False, mismatches=(10, 10)):
    """``assert_almost_equal`` that allows a fraction ``etol`` of the elements to differ."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        return
    rtol, atol = map(_python_tol, get_tols(a, b, rtol, atol))
    a, b = _on_host(a), _on_host(b)
    equals = np.isclose(a, b, rtol=rtol, atol=atol)
    err = 1 - np.count_nonzero(equals) / equals.size
    if err > etol:
        raise AssertionError(_violation_message(a, b, rtol, atol, names, equal_nan,
                                                mismatches))


def _nan_to_zero_copies(a, b):
    a, b = np.array(_on_host(a)), np.array(_on_host(b))
    a, b = np.broadcast_arrays(a, b)
    a, b = a.copy(), b.copy()
    nan_mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan_mask] = 0
    b[nan_mask] = 0
    return a, b


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=('a', 'b')):
    """``assert_almost_equal`` after setting both arrays to 0 where either is NaN."""
    a, b = _nan_to_zero_copies(a, b)
    assert_almost_equal(a, b, rtol, atol, names)


def almost_equal_ignore_nan(a, b, rtol=None, atol=None):
    """``almost_equal`` after setting both arrays to 0 where either is NaN."""
    a, b = _nan_to_zero_copies(a, b)
    return almost_equal(a, b, rtol, atol)


def same_array(array1, array2):
    """Whether two NDArrays share memory (checked by writing to ``array1`` and undoing it)."""
    array1[:] += 1
    if not same(array1.asnumpy(), array2.asnumpy()):
        array1[:] -= 1
        return False
    array1[:] -= 1
    return same(array1.asnumpy(), array2.asnumpy())


def assert_exception(f, exception_type, *args, **kwargs):
    """Raise AssertionError unless ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    # outside the try: an expected AssertionError must not be satisfied by our own
    raise AssertionError('%s did not raise %s' % (getattr(f, '__name__', repr(f)),
                                                  getattr(exception_type, '__name__',
                                                          exception_type)))


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """``assert_almost_equal`` on arrays or nested tuples of arrays (None matches anything)."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def same_symbol_structure(sym1, sym2):
    """Whether two symbols have the same operator at each node position."""
    nodes = json.loads(sym1.tojson())['nodes']
    nodes2 = json.loads(sym2.tojson())['nodes']
    return all(n1['op'] == n2['op'] for n1, n2 in zip(nodes, nodes2))
