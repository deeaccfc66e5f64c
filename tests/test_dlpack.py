"""DLPack: nd.from_dlpack, nd.to_dlpack_for_read/write and NDArray.__dlpack__ share memory.

MXNet 1.9.1's ``to_dlpack_for_read``/``to_dlpack_for_write`` return PyCapsules named
"dltensor" that ``from_dlpack`` consumes once (a second use fails with "DLTensor capsules can
be consumed only once"); hybridlib's ``from_dlpack`` also takes any object with ``__dlpack__``.
"""
import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd
from hybridlib.base import MXNetError


def test_from_numpy_array_shares_memory_both_ways():
    source = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = nd.from_dlpack(source)
    assert x.shape == (2, 3) and x.dtype == np.float32 and x.context == mx.cpu(0)
    x[:] += 1                                   # writes through the NDArray ...
    np.testing.assert_array_equal(source, np.arange(1, 7).reshape(2, 3))
    source[0, 0] = -5                           # ... and through the numpy array
    assert x.asnumpy()[0, 0] == -5


def test_numpy_views_an_ndarray_without_a_copy():
    x = nd.array([[1, 2], [3, 4]])
    view = np.from_dlpack(x)
    assert view.dtype == np.float32 and view.shape == (2, 2)
    view[1, 1] = 40
    assert x.asnumpy()[1, 1] == 40
    x[0, 0] = 10
    assert view[0, 0] == 10
    assert x.__dlpack_device__() == (1, 0)      # kDLCPU, device 0


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64', 'uint8', 'int8', 'int32',
                                   'int64', 'bool'])
def test_dtype_and_shape_preserved(dtype):
    source = (np.arange(24) % 3).astype(dtype).reshape(2, 3, 4)
    x = nd.from_dlpack(source)
    assert x.dtype == np.dtype(dtype).type and x.shape == (2, 3, 4)
    back = nd.from_dlpack(nd.to_dlpack_for_read(x))
    assert back.dtype == x.dtype
    np.testing.assert_array_equal(back.asnumpy(), source)
    assert nd.from_dlpack(np.array(2.5)).shape == ()


def test_capsules_as_mxnet():
    x = nd.ones((2, 3))
    capsule = nd.to_dlpack_for_write(x)
    assert type(capsule).__name__ == 'PyCapsule' and 'dltensor' in repr(capsule)
    u = nd.from_dlpack(capsule)
    u += 1
    np.testing.assert_array_equal(x.asnumpy(), np.full((2, 3), 2.0))
    with pytest.raises(AssertionError, match='consumed only once'):
        nd.from_dlpack(capsule)
    read = x.to_dlpack_for_read()              # the methods, as in MXNet
    assert 'dltensor' in repr(read) and 'dltensor' in repr(x.to_dlpack_for_write())
    np.testing.assert_array_equal(nd.from_dlpack(read).asnumpy(), x.asnumpy())


def test_capsules_from_other_libraries():
    source = np.arange(4.0)
    legacy = nd.from_dlpack(source.__dlpack__())                        # "dltensor"
    versioned = nd.from_dlpack(source.__dlpack__(max_version=(1, 0)))   # "dltensor_versioned"
    legacy[0] = 7
    assert source[0] == 7 and versioned.asnumpy()[0] == 7
    del source
    assert legacy.asnumpy().tolist() == [7, 1, 2, 3]     # the import keeps the memory alive


def test_strided_sources_are_viewed_like_numpy():
    source = np.arange(12, dtype=np.float32).reshape(3, 4)
    for view in (source[:, ::2], source[::-1], source.T):
        x = nd.from_dlpack(view)
        expected = np.from_dlpack(view)
        assert x.shape == expected.shape and x._data.strides == expected.strides
        np.testing.assert_array_equal(x.asnumpy(), view)
        assert np.shares_memory(x._data, source)
    x = nd.from_dlpack(source[:, 1])
    x[:] = 0                                    # the view writes into the right elements
    assert source[:, 1].tolist() == [0, 0, 0] and source[0].tolist() == [0, 0, 2, 3]
    capsule_view = nd.from_dlpack(source[::2, ::-1].__dlpack__())
    assert capsule_view._data.strides == source[::2, ::-1].strides
    capsule_view[0, 0] = -1                     # legacy capsules import writable
    assert source[0, 3] == -1
    # and an NDArray holding a strided view exports it with its strides
    y = nd.array(np.arange(6).reshape(2, 3))[:, 1]
    np.testing.assert_array_equal(np.from_dlpack(y), [1, 4])


def test_imported_arrays_work_with_autograd():
    source = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    x = nd.from_dlpack(source)
    x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 4, 6])


def test_errors():
    with pytest.raises(TypeError, match='__dlpack__'):
        nd.from_dlpack([1, 2, 3])
    with pytest.raises(TypeError, match='not a DLPack tensor'):
        import datetime                         # any other capsule
        nd.from_dlpack(datetime.datetime_CAPI)

    class TPUArray:
        def __dlpack__(self, **kwargs):
            raise AssertionError('not reached')

        def __dlpack_device__(self):
            return (9, 0)
    with pytest.raises(MXNetError, match='device type 9'):
        nd.from_dlpack(TPUArray())


def test_torch_interop():
    torch = pytest.importorskip('torch')
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    x = nd.from_dlpack(t)
    x[0, 0] = 100
    assert t[0, 0].item() == 100
    back = torch.from_dlpack(x)
    back[1, 2] = -1
    assert x.asnumpy()[1, 2] == -1
    legacy = torch.utils.dlpack.from_dlpack(nd.to_dlpack_for_read(x))
    assert legacy.data_ptr() == t.data_ptr()


@pytest.mark.skipif(mx.num_gpus() == 0, reason='needs a GPU')
def test_gpu_arrays_keep_their_device():
    import cupy
    x = nd.array([[1, 2], [3, 4]], ctx=mx.gpu(0))
    view = cupy.from_dlpack(x)
    view[0, 0] = 10
    assert x.asnumpy()[0, 0] == 10
    y = nd.from_dlpack(view)
    assert y.context == mx.gpu(0)
    assert nd.from_dlpack(nd.to_dlpack_for_read(x)).context == mx.gpu(0)
