"""BatchNorm's GPU bodies (hybridlib/ops/norm.py, ``_gpu_*``) on a stand-in for cupy: numpy
with ElementwiseKernel and ReductionKernel evaluated from their source, so that CI without a
GPU checks how the kernels are called against the CPU bodies. On a GPU, tests/ops/harness.py
checks every BatchNorm case there against the CPU too."""
import types

import numpy as np
import pytest

from hybridlib.ops import norm


def _names(params):
    return [p.split()[-1] for p in params.split(',')]


class _ElementwiseKernel:
    def __init__(self, in_params, out_params, operation, name):
        self.inputs, self.output, self.operation = _names(in_params), _names(out_params)[0], \
            operation

    def __call__(self, *args):
        scope = dict(zip(self.inputs, args[:-1]))
        exec(self.operation.replace(f'{self.output} =', '_result ='), {}, scope)  # noqa: S102
        args[-1][...] = scope['_result']
        return args[-1]


class _ReductionKernel:
    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                 name):
        assert (reduce_expr, post_map_expr, identity) == ('a + b', 'y = a', '0')
        self.inputs, self.map_expr = _names(in_params), map_expr

    def __call__(self, *args, axis):
        assert axis == 2, 'the channel sums reduce one axis at a time'
        return eval(self.map_expr, {}, dict(zip(self.inputs, args))).sum(axis=axis)  # noqa: S307


FAKE_CUPY = types.ModuleType('fake_cupy')
FAKE_CUPY.__dict__.update({k: getattr(np, k) for k in dir(np) if not k.startswith('__')})
FAKE_CUPY.ElementwiseKernel, FAKE_CUPY.ReductionKernel = _ElementwiseKernel, _ReductionKernel


@pytest.mark.parametrize('shape, axis', [((4, 3, 5, 6), 1), ((6, 5), 1), ((2, 3, 4), 2),
                                         ((3, 4, 2, 2), 0), ((2, 3, 2, 2, 2), -1)])
@pytest.mark.parametrize('fix_gamma', [True, False])
def test_gpu_bodies_match_the_cpu_bodies(shape, axis, fix_gamma):
    rng = np.random.default_rng(len(shape))
    c = shape[axis]
    x, g = rng.standard_normal(shape) * 3 + 1, rng.standard_normal(shape)
    gamma, beta = rng.standard_normal(c), rng.standard_normal(c)
    moving_mean, moving_var = rng.standard_normal(c), rng.random(c) + 0.5
    attrs = types.SimpleNamespace(axis=axis, eps=1e-3, fix_gamma=fix_gamma, momentum=0.9,
                                  use_global_stats=False)
    f64 = [np.dtype(np.float64)] * 5
    results = []
    for xp in (np, FAKE_CUPY):
        mm, mv = moving_mean.copy(), moving_var.copy()
        forward = norm.BatchNorm.specialise(xp, attrs, [shape] + [(c,)] * 4, f64, True)
        outs = list(forward(x, gamma, beta, mm, mv)) + [mm, mv]
        for train in (True, False):
            backward = norm._backward_BatchNorm.specialise(xp, attrs, [shape, shape] + [(c,)] * 3,
                                                           f64, train)
            outs += backward(g, x, gamma, moving_mean, moving_var)
        results.append(outs)
    for k, (cpu, gpu) in enumerate(zip(*results)):
        np.testing.assert_allclose(gpu, cpu, rtol=1e-12, atol=1e-12, err_msg=f'output {k}')
