"""Contexts: cpu/gpu, the current-context stack, array modules, errors without a GPU."""
import numpy as np
import pytest

import hybridlib as mx
from hybridlib.base import MXNetError


def test_equality_and_repr():
    assert mx.cpu() == mx.cpu(0) and mx.cpu(1) != mx.cpu(0)
    assert mx.gpu(0) != mx.cpu(0)
    assert repr(mx.cpu()) == 'cpu(0)' and str(mx.gpu(1)) == 'gpu(1)'
    assert mx.cpu().device_type == 'cpu' and mx.gpu(2).device_id == 2
    assert mx.cpu().device_typeid == 1 and mx.gpu().device_typeid == 2
    assert len({mx.cpu(), mx.cpu(0), mx.gpu()}) == 2
    assert mx.Context('gpu', 3) == mx.gpu(3) and mx.Context(mx.cpu(2)) == mx.cpu(2)
    with pytest.raises(MXNetError, match='unknown device type'):
        mx.Context('tpu')


def test_with_sets_the_current_context():
    assert mx.current_context() == mx.cpu(0)
    with mx.cpu(1):
        assert mx.current_context() == mx.cpu(1)
        with mx.cpu(2):
            assert mx.current_context() == mx.cpu(2)
        assert mx.current_context() == mx.cpu(1)
        assert mx.nd.zeros((1,)).context == mx.cpu(1)
    assert mx.current_context() == mx.cpu(0)
    assert mx.context.current_context() == mx.cpu(0)


def test_array_modules():
    assert mx.cpu().array_module is np
    assert mx.cpu_pinned().array_module is np


@pytest.mark.skipif(mx.num_gpus() > 0, reason='checks the behaviour without a usable GPU')
def test_gpu_without_cupy_or_device_is_a_clear_error():
    with pytest.raises(MXNetError, match='cupy|GPU'):
        mx.gpu(0).array_module
    with pytest.raises(MXNetError, match='cupy|GPU'):
        mx.nd.zeros((2,), ctx=mx.gpu(0))
    assert mx.num_gpus() == 0


@pytest.mark.skipif(mx.num_gpus() == 0, reason='needs a GPU and cupy')
def test_gpu_arrays_round_trip():
    x = mx.nd.array([1, 2, 3], ctx=mx.gpu(0))
    assert x.context == mx.gpu(0)
    assert (x * 2).asnumpy().tolist() == [2, 4, 6]
    assert x.as_in_context(mx.cpu()).context == mx.cpu()
    assert x.copyto(mx.cpu()).asnumpy().tolist() == [1, 2, 3]
