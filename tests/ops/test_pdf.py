"""Cases for hybridlib/ops/pdf.py: the densities random_pdf_* (nd.random.pdf_*).

The references evaluate each density elementwise with Python's math module; MXNet's values
and gradients (discrete samples, is_log, vector-valued Dirichlet samples) come from
tests/data/linalg.json (tests/data/make_linalg_files.py).
"""
import json
import math

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import nd, sym
from hybridlib.base import DTypeError, ShapeError

from harness import Case, check_case, uniform
from test_linalg import _load, check_recorded

lgamma = np.vectorize(math.lgamma)


def spread(sample, *params):
    """The parameters (shape P) broadcast against the samples (P + S)."""
    return [p.reshape(p.shape + (1,) * (sample.ndim - p.ndim)) for p in params]


def density(logpdf):
    def ref(sample, *params, is_log=False):
        lp = np.broadcast_to(logpdf(sample, *spread(sample, *params)), sample.shape)
        return lp if is_log else np.exp(lp)
    return ref


ref_uniform = density(lambda x, low, high: -np.log(high - low))
ref_normal = density(lambda x, mu, sigma: -(x - mu) ** 2 / (2 * sigma ** 2) -
                     np.log(sigma * math.sqrt(2 * math.pi)))
ref_gamma = density(lambda x, alpha, beta: alpha * np.log(beta) + (alpha - 1) * np.log(x) -
                    beta * x - lgamma(alpha))
ref_exponential = density(lambda x, lam: np.log(lam) - lam * x)
ref_poisson = density(lambda x, lam: x * np.log(lam) - lam - lgamma(x + 1))


def nbinom_logpdf(x, k, p):
    return lgamma(x + k) - lgamma(k) - lgamma(x + 1) + k * np.log(p) + x * np.log(1 - p)


ref_negative_binomial = density(nbinom_logpdf)
ref_generalized_negative_binomial = density(
    lambda x, mu, alpha: nbinom_logpdf(x, 1 / alpha, 1 / (1 + mu * alpha)))


def ref_dirichlet(sample, alpha, is_log=False):
    a = alpha.reshape(alpha.shape[:-1] + (1,) * (sample.ndim - alpha.ndim) + alpha.shape[-1:])
    lp = ((a - 1) * np.log(sample)).sum(-1) + lgamma(a.sum(-1)) - lgamma(a).sum(-1)
    lp = lp.reshape(1) if sample.ndim == 1 else lp
    return lp if is_log else np.exp(lp)


def counts(shape, high):
    """Integer-valued float samples of a discrete distribution."""
    return lambda rng: rng.integers(0, high, size=shape).astype(np.float64)


def simplex(shape):
    def make(rng):
        x = rng.uniform(0.2, 1, size=shape)
        return x / x.sum(-1, keepdims=True)
    return make


S, P = (2, 3, 4), (2,)
CASES = []
for _log in (False, True):
    _tag = 'log' if _log else 'pdf'
    CASES += [
        Case('_random_pdf_uniform', [uniform(S, -1, 3), uniform(P, -2, -1), uniform(P, 3.5, 5)],
             dict(is_log=_log), ref_uniform, name=_tag),
        Case('random_pdf_normal', [uniform(S, -2, 2), uniform(P), uniform(P, 0.5, 2)],
             dict(is_log=_log), ref_normal, name=_tag),
        Case('_random_pdf_gamma', [uniform(S, 0.2, 4), uniform(P, 0.5, 3), uniform(P, 0.5, 2)],
             dict(is_log=_log), ref_gamma, name=_tag),
        Case('random_pdf_exponential', [uniform(S, 0.1, 3), uniform((2, 3), 0.5, 2)],
             dict(is_log=_log), ref_exponential, name=_tag),
        # discrete samples get no gradient (MXNet's convention)
        Case('_random_pdf_poisson', [counts(S, 7), uniform(P, 0.5, 4)], dict(is_log=_log),
             ref_poisson, name=_tag, grad_inputs=[1]),
        Case('random_pdf_negative_binomial', [counts(S, 7), uniform(P, 1, 5),
                                              uniform(P, 0.2, 0.8)],
             dict(is_log=_log), ref_negative_binomial, name=_tag, grad_inputs=[2, 1]),
        Case('_random_pdf_generalized_negative_binomial', [counts(S, 7), uniform(P, 0.5, 4),
                                                            uniform(P, 0.2, 2)],
             dict(is_log=_log), ref_generalized_negative_binomial, name=_tag,
             grad_inputs=[1, 2]),
        Case('_random_pdf_dirichlet', [simplex((2, 3, 4)), uniform((2, 4), 0.5, 3)],
             dict(is_log=_log), ref_dirichlet, name=_tag),
    ]
CASES += [
    Case('random_pdf_normal', [(2, 3), (2, 3), uniform((2, 3), 0.5, 1.5)], {}, ref_normal,
         name='same_shape'),
    Case('random_pdf_normal', [uniform((4, 3), -2, 2), uniform(()), uniform((), 0.5, 2)], {},
         ref_normal, name='scalar_parameters'),
    Case('random_pdf_dirichlet', [simplex((3,)), uniform((3,), 0.5, 3)], {}, ref_dirichlet,
         name='single'),
    Case('random_pdf_dirichlet', [simplex((2, 3)), uniform((2, 3), 0.5, 3)], {}, ref_dirichlet,
         name='one_per_distribution'),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_pdf(case):
    check_case(case)


@pytest.mark.parametrize('spec', _load('pdf'), ids=lambda s: s['name'])
def test_mxnet_values(spec):
    check_recorded(spec)


def test_exposure_and_json():
    for name in ('uniform', 'normal', 'gamma', 'exponential', 'poisson', 'negative_binomial',
                 'generalized_negative_binomial', 'dirichlet'):
        assert getattr(nd.random, f'pdf_{name}').op.name == f'_random_pdf_{name}'
        assert getattr(nd, f'random_pdf_{name}').op.name == f'_random_pdf_{name}'
        assert hasattr(sym.random, f'pdf_{name}')
    with mx.name.NameManager():
        s = sym.random_pdf_normal(sym.var('s'), sym.var('m'), sym.var('v'), is_log=True)
        node = json.loads(s.tojson())['nodes'][-1]
    assert (node['op'], node['name'], node['attrs']) == \
        ('_random_pdf_normal', 'random_pdf_normal0', {'is_log': 'True'})


def test_documented_values():
    # the examples of MXNet's documentation
    out = nd.random_pdf_generalized_negative_binomial(
        sample=nd.array([[1, 2, 3, 4], [1, 2, 3, 4]]), mu=nd.array([1, 1.5]),
        alpha=nd.array([1, 0.6666]))
    np.testing.assert_allclose(out.asnumpy(), [[0.25, 0.125, 0.0625, 0.03125],
                                               [0.26517063, 0.16573331, 0.09667706,
                                                0.05437994]], rtol=1e-5)
    out = nd.random.pdf_dirichlet(sample=nd.array([[1, 2], [2, 3], [3, 4]]),
                                  alpha=nd.array([2.5, 2.5]))
    np.testing.assert_allclose(out.asnumpy(), [38.413498, 199.60245, 564.56085], rtol=1e-5)


@pytest.mark.parametrize('call, error', [
    (lambda: nd.random_pdf_normal(nd.ones((2, 3)), nd.ones((3,)), nd.ones((3,))), ShapeError),
    (lambda: nd.random_pdf_normal(nd.ones((2,)), nd.ones((2, 3)), nd.ones((2, 3))), ShapeError),
    (lambda: nd.random_pdf_normal(nd.ones((2, 3)), nd.ones((2,)), nd.ones((3,))), ShapeError),
    (lambda: nd.random_pdf_dirichlet(nd.ones((2, 3)), nd.ones((2, 4))), ShapeError),
    (lambda: nd.random_pdf_poisson(nd.ones((2,), dtype='int32'), nd.ones((2,), dtype='int32')),
     DTypeError),
    (lambda: nd.random_pdf_exponential(nd.ones((2,)), nd.ones((2,), dtype='float64')),
     DTypeError),
])
def test_errors(call, error):
    with pytest.raises(error):
        call().asnumpy()


def test_hybridized_block_gradients():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, mu, sigma):
            logp = F.random.pdf_normal(x, mu, sigma, is_log=True)
            rows = F.cumsum(logp, axis=1)
            return F.sum(F.khatri_rao(rows, rows)) + \
                F.sum(F.random_pdf_dirichlet(F.softmax(x), F.exp(x)))

    rng = np.random.default_rng(0)
    args = [nd.array(v, dtype='float64') for v in
            (rng.normal(size=(2, 3)), rng.normal(size=(2,)), [1.0, 2.0])]
    results = []
    for hybrid in (False, True):
        net = Net()
        if hybrid:
            net.hybridize(static_alloc=True)
        for a in args:
            a.attach_grad()
        with mx.autograd.record():
            y = net(*args)
        y.backward()
        results.append([y.asnumpy()] + [a.grad.asnumpy() for a in args])
    for imperative, hybridized in zip(*results):
        np.testing.assert_allclose(hybridized, imperative, rtol=1e-10)
