"""NDArray semantics as in MXNet 1.9.1 (values seen with the real MXNet are quoted literally)."""
import pickle

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd
from hybridlib.base import MXNetError


def test_array_dtypes_follow_mxnet():
    assert nd.array([1, 2]).dtype == np.float32
    assert nd.array(np.array([1, 2], dtype=np.int64)).dtype == np.float32   # float32 by default
    assert nd.array(np.array([1, 2]), dtype='int32').dtype == np.int32
    src = nd.array([1, 2], dtype='float16')
    assert nd.array(src).dtype == np.float16                                # kept from an NDArray
    assert nd.array(3).shape == ()
    assert isinstance(nd.array([1.0]).dtype, type)


def test_attributes():
    x = nd.array(np.arange(6).reshape(2, 3))
    assert x.shape == (2, 3) and x.size == 6 and x.ndim == 2
    assert x.context == mx.cpu() and x.ctx == mx.cpu(0)
    assert x.T.shape == (3, 2) and x.stype == 'default'
    assert x.grad is None
    np.testing.assert_array_equal(x.T.asnumpy(), np.arange(6).reshape(2, 3).T)


def test_asnumpy_is_a_copy_and_asscalar():
    x = nd.array([1, 2, 3])
    a = x.asnumpy()
    a[0] = 100
    assert x.asnumpy()[0] == 1
    assert nd.array([2.5]).asscalar() == np.float32(2.5)
    assert isinstance(nd.array([2.5]).asscalar(), np.float32)
    with pytest.raises(ValueError, match='size 1'):
        nd.array([1, 2]).asscalar()


def test_astype_copy_and_contexts():
    x = nd.array([1.5, 2.5])
    assert x.astype('int32').dtype == np.int32
    assert x.astype('float32', copy=False) is x
    assert x.astype('float32') is not x
    y = x.copy()
    y[:] = 0
    assert x.asnumpy().tolist() == [1.5, 2.5]
    z = nd.zeros((2,))
    assert x.copyto(z) is z and z.asnumpy().tolist() == [1.5, 2.5]
    assert x.as_in_context(mx.cpu()) is x
    assert x.copyto(mx.cpu()).asnumpy().tolist() == [1.5, 2.5]
    with pytest.raises(MXNetError, match='shape'):
        x.copyto(nd.zeros((3,)))


def test_repr_like_mxnet():
    x = nd.array([[0, 1, 2], [3, 4, 5]])
    assert repr(x) == '\n[[0. 1. 2.]\n [3. 4. 5.]]\n<NDArray 2x3 @cpu(0)>'
    assert repr(nd.array(3)).endswith('<NDArray  @cpu(0)>')
    assert str(x) == repr(x)


@pytest.mark.parametrize('shape, code, reverse', [
    ((2, 3, 4), (0, -1), False), ((2, 3, 4), (-2,), False), ((2, 3, 4), (-3, 4), False),
    ((2, 3, 4), (-4, 1, 2, -2), False), ((2, 3, 4), (2, -4, -1, 3, -2), False),
    ((2, 3, 4), (0, 0, -1), False), ((2, 3, 4), (-1, 0), True),
])
def test_reshape_special_codes(shape, code, reverse):
    # expected shapes printed by MXNet 1.9.1
    expected = {(0, -1): (2, 12), (-2,): (2, 3, 4), (-3, 4): (6, 4), (-4, 1, 2, -2): (1, 2, 3, 4),
                (2, -4, -1, 3, -2): (2, 1, 3, 4), (0, 0, -1): (2, 3, 4), (-1, 0): (6, 4)}[code]
    x = nd.array(np.arange(24).reshape(shape))
    y = x.reshape(code, reverse=reverse)
    assert y.shape == expected
    np.testing.assert_array_equal(y.asnumpy().ravel(), np.arange(24))
    assert x.reshape(*code, reverse=reverse).shape == expected
    assert x.reshape(shape=code, reverse=reverse).shape == expected


def test_basic_indexing_like_mxnet():
    x = nd.array(np.arange(24).reshape(2, 3, 4))
    ref = np.arange(24).reshape(2, 3, 4)
    assert x[1].shape == (3, 4) and x[:, 1].shape == (2, 4) and x[1, :, 2].shape == (3,)
    assert x[..., 1].shape == (2, 3) and x[None].shape == (1, 2, 3, 4)
    assert x[-1, -1].shape == (4,)
    assert x[0, 0, 0].shape == (1,)                  # MXNet: a scalar result has shape (1,)
    assert nd.array([1, 2, 3])[0].shape == (1,)
    np.testing.assert_array_equal(x[1:, ::2].asnumpy(), ref[1:, ::2])
    np.testing.assert_array_equal(x[:, -2:, 1:3].asnumpy(), ref[:, -2:, 1:3])


def test_slices_share_memory_on_the_first_axis():
    y = nd.array(np.arange(6).reshape(2, 3))
    z = y[1:2]
    z[:] = 9
    assert y.asnumpy().tolist() == [[0, 1, 2], [9, 9, 9]]


def test_a_scalar_element_is_a_view_as_in_mxnet():
    # MXNet code updates elements in place: ``for g in bias: g -= d`` (SVRGModule does)
    v = nd.array([1., 2., 3.])
    for element in v:
        element -= 1
    v[2] += 5
    assert v.asnumpy().tolist() == [0., 1., 7.]
    x = nd.zeros((2, 2))
    corner = x[1, 1]
    corner += 4
    x[..., 0, 1][:] = 2
    assert corner.shape == (1,) and x.asnumpy().tolist() == [[0., 2.], [0., 4.]]


def test_advanced_indexing():
    x = nd.array(np.arange(24).reshape(2, 3, 4))
    ref = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(x[nd.array([1, 0])].asnumpy(), ref[[1, 0]])
    np.testing.assert_array_equal(x[[0, 1], :, [1, 2]].asnumpy(), ref[[0, 1], :, [1, 2]])
    np.testing.assert_array_equal(x[:, [0, 2]].asnumpy(), ref[:, [0, 2]])
    np.testing.assert_array_equal(x[nd.array([0, 1]), nd.array([1, 2])].asnumpy(),
                                  ref[[0, 1], [1, 2]])


def test_slice_assignment():
    y = nd.zeros((2, 3))
    y[0] = 1
    y[:, 1] = nd.array([5, 6])
    y[1, 2] = 7
    assert y.asnumpy().tolist() == [[1, 5, 1], [0, 6, 7]]           # as MXNet printed it
    y[:] = np.arange(3)
    assert y.asnumpy().tolist() == [[0, 1, 2], [0, 1, 2]]
    y[nd.array([1])] = 4
    assert y.asnumpy().tolist() == [[0, 1, 2], [4, 4, 4]]


def test_indexing_is_differentiable_when_recorded():
    x = nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    x.attach_grad()
    with autograd.record():
        y = x[1:, 2] * 2 + x[0, 1:3].sum() + x[[0, 2]].sum()
    y.backward()
    expected = np.zeros((3, 4))
    expected[1:, 2] += 2
    expected[0, 1:3] += 2
    expected[[0, 2]] += 2
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)


def test_arithmetic_and_comparisons_match_numpy():
    a = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=np.float32)
    b = np.array([0.5, 2.0, -1.0], dtype=np.float32)
    x, y = nd.array(a), nd.array(b)
    for got, want in [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b),
                      (x ** 2, a ** 2), (2 ** y, 2 ** b), (3 - x, 3 - a), (3 / y, 3 / b),
                      (-x, -a), (abs(x), abs(a)), (x % 2, np.mod(a, 2)),
                      (x > y, a > b), (x <= 1, a <= 1), (x == y, a == b), (1 < x, 1 < a),
                      (x + np.float32(2), a + 2), (np.float32(2) * x, 2 * a), (x + b, a + b)]:
        np.testing.assert_allclose(got.asnumpy(), np.asarray(want, dtype=np.float32), 1e-6)
        assert got.dtype == np.float32


def test_integer_arrays_keep_their_dtype():
    # values printed by MXNet 1.9.1: the scalar is cast to the array's dtype first
    i = nd.array([1, 2, -3], dtype='int32')
    assert (i * 2.5).asnumpy().tolist() == [2, 4, -6]
    assert (i / 2).asnumpy().tolist() == [0, 1, -1]
    assert (i % 2).asnumpy().tolist() == [1, 0, 1]
    assert nd.exp(i).asnumpy().tolist()[:2] == [2, 7]
    assert (i > 1).dtype == np.int32
    assert (nd.array([1, 0], dtype='uint8') + 300).asnumpy().tolist() == [45, 44]


def test_inplace_operators():
    x = nd.array([1.0, 2.0])
    buf = x._data
    x += 1
    x *= nd.array([2.0, 3.0])
    x -= 1
    x /= 2
    assert x.asnumpy().tolist() == [1.5, 4.0] and x._data is buf


def test_inplace_on_a_recorded_array_is_an_error():
    a = nd.ones((2, 3))
    a.attach_grad()
    with autograd.record():
        b = a * 2
        with pytest.raises(MXNetError, match='computational graph'):
            b[:] = 3
        with pytest.raises(MXNetError, match='computational graph'):
            b += 1


def test_python_protocols():
    assert float(nd.array([2.5])) == 2.5 and int(nd.array([2.5])) == 2
    assert bool(nd.array([1])) and not bool(nd.array([0]))
    with pytest.raises(ValueError, match='ambiguous'):
        bool(nd.ones((2,)))
    assert len(nd.ones((4, 2))) == 4
    assert [t.shape for t in nd.ones((3, 2))] == [(2,), (2,), (2,)]
    np.testing.assert_array_equal(np.asarray(nd.array([1, 2])), [1, 2])
    x = nd.array([[1, 2], [3, 4]], dtype='float16')
    y = pickle.loads(pickle.dumps(x))
    assert y.dtype == np.float16 and y.asnumpy().tolist() == [[1, 2], [3, 4]]
    assert hash(x) != hash(y)


def test_wait_and_waitall():
    x = nd.ones((2,))
    x.wait_to_read()
    nd.waitall()


def test_creation_functions():
    assert nd.zeros((2, 3)).asnumpy().sum() == 0 and nd.zeros((2, 3)).dtype == np.float32
    assert nd.ones(3, dtype='int32').dtype == np.int32
    assert nd.full((2, 2), 7).asnumpy().tolist() == [[7, 7], [7, 7]]
    assert nd.empty((2, 4)).shape == (2, 4)
    with mx.cpu(0):
        assert nd.zeros((1,)).context == mx.cpu(0)


def test_operator_errors_name_the_operator_and_shapes():
    with pytest.raises(MXNetError, match=r'broadcast_add.*\(2, 3\).*\(3, 2\)|\(3, 2\).*\(2, 3\)'):
        nd.broadcast_add(nd.ones((2, 3)), nd.ones((3, 2)))
    with pytest.raises(MXNetError, match='elemwise_add'):
        nd.elemwise_add(nd.ones((2, 3)), nd.ones((3,)))
    with pytest.raises(TypeError, match="'rhs' must be an NDArray"):
        nd.broadcast_add(nd.ones((2,)), 2)
    with pytest.raises(MXNetError, match="has no attribute 'foo'|unexpected argument 'foo'"):
        nd.clip(nd.ones((2,)), a_min=0, a_max=1, foo=2)
    with pytest.raises(MXNetError, match="attribute 'a_min' expects float"):
        nd.clip(nd.ones((2,)), a_min='abc', a_max=1)
    with pytest.raises(MXNetError, match='required attribute'):
        nd.clip(nd.ones((2,)), a_min=0)
    with pytest.raises(MXNetError, match='same dtype'):
        nd.ones((2,)) + nd.ones((2,), dtype='float64')


def test_generated_functions_have_real_signatures():
    import inspect
    sig = inspect.signature(nd.clip)
    assert list(sig.parameters)[:3] == ['data', 'a_min', 'a_max']
    assert 'out' in sig.parameters
    assert 'a_min' in nd.clip.__doc__
    out = nd.zeros((3,))
    assert nd.clip(nd.array([-2, 0.5, 2]), -1, 1, out=out) is out
    assert out.asnumpy().tolist() == [-1, 0.5, 1]


def test_out_may_be_a_strided_view():
    # bodies write through reshaped views of out: a strided out= is computed aside and copied
    rng = np.random.default_rng(0)
    x, w, b = (nd.array(rng.random(s)) for s in ((2, 4), (3, 4), (3,)))
    target = nd.zeros((2, 3, 2))
    nd.FullyConnected(x, w, b, num_hidden=3, out=target[:, :, 1])
    np.testing.assert_allclose(target.asnumpy()[:, :, 1],
                               x.asnumpy() @ w.asnumpy().T + b.asnumpy(), rtol=1e-6)
    assert not target.asnumpy()[:, :, 0].any()
    img, k = nd.array(rng.random((1, 2, 5, 5))), nd.array(rng.random((3, 2, 3, 3)))
    conv = nd.Convolution(img, k, kernel=(3, 3), num_filter=3, no_bias=True)
    target = nd.zeros((1, 3, 3, 6))
    nd.Convolution(img, k, kernel=(3, 3), num_filter=3, no_bias=True, out=target[:, :, :, ::2])
    np.testing.assert_allclose(target.asnumpy()[..., ::2], conv.asnumpy(), rtol=1e-6)
    assert not target.asnumpy()[..., 1::2].any()
