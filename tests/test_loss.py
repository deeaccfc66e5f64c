"""gluon.loss (hybridlib/loss.py): every loss against MXNet 1.9.1's values and gradients
(tests/data/loss.json, written by tests/data/make_loss_files.py), against numpy references
written independently in float64 (values, and gradients by finite differences), imperative vs
hybridized (both flag sets), MXNet's signatures and reprs, and the errors."""
import inspect
import json
import os

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, gluon, nd, sym
from hybridlib.base import MXNetError, ShapeError
from hybridlib.block import UsageError
from hybridlib.gluon.loss import _reshape_like
from nn.hybrid_check import check_hybrid
from test_loss_ops import ctc_reference

L = gluon.loss

with open(os.path.join(os.path.dirname(__file__), 'data', 'loss.json')) as _f:
    MXNET_CASES = json.load(_f)['cases']


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.name.NameManager():
        yield


# -------------------------------------------------------------------------------------------------
# numpy references (float64), written from the formulas in MXNet's documentation
# -------------------------------------------------------------------------------------------------

def _per_sample(loss, batch_axis, reduce=np.mean):
    axes = tuple(i for i in range(loss.ndim) if i != batch_axis % loss.ndim)
    return reduce(loss, axis=axes)


def _weighted(loss, weight=None, sample_weight=None):
    if sample_weight is not None:
        loss = loss * sample_weight
    return loss if weight is None else loss * weight


def _log_softmax(x, axis):
    top = x.max(axis=axis, keepdims=True)
    return x - top - np.log(np.exp(x - top).sum(axis=axis, keepdims=True))


def l2_ref(pred, label, sample_weight=None, weight=1., batch_axis=0):
    loss = 0.5 * (label.reshape(pred.shape) - pred) ** 2
    return _per_sample(_weighted(loss, weight, sample_weight), batch_axis)


def l1_ref(pred, label, sample_weight=None, weight=None, batch_axis=0):
    loss = np.abs(label.reshape(pred.shape) - pred)
    return _per_sample(_weighted(loss, weight, sample_weight), batch_axis)


def bce_ref(pred, label, sample_weight=None, pos_weight=None, from_sigmoid=False, weight=None,
            batch_axis=0):
    pos_weight = 1.0 if pos_weight is None else pos_weight
    if from_sigmoid:
        eps = 1e-12
        loss = -(pos_weight * label * np.log(pred + eps) + (1 - label) * np.log(1 - pred + eps))
    else:
        p = 1 / (1 + np.exp(-pred))
        loss = -(pos_weight * label * np.log(p) + (1 - label) * np.log(1 - p))
    return _per_sample(_weighted(loss, weight, sample_weight), batch_axis)


def softmax_ce_ref(pred, label, sample_weight=None, axis=-1, sparse_label=True,
                   from_logits=False, weight=None, batch_axis=0):
    logp = pred if from_logits else _log_softmax(pred, axis)
    if sparse_label:
        index = np.expand_dims(label.astype(np.int64), axis)
        loss = -np.take_along_axis(logp, index, axis=axis)
    else:
        loss = -(logp * label).sum(axis=axis, keepdims=True)
    return _per_sample(_weighted(loss, weight, sample_weight), batch_axis)


def kldiv_ref(pred, label, sample_weight=None, from_logits=True, axis=-1, weight=None,
              batch_axis=0):
    logp = pred if from_logits else _log_softmax(pred, axis)
    loss = label * (np.log(label + 1e-12) - logp)
    return _per_sample(_weighted(loss, weight, sample_weight), batch_axis, np.sum)


def ctc_ref(pred, label, pred_lengths=None, label_lengths=None, sample_weight=None,
            layout='NTC', label_layout='NT', weight=None):
    data = pred.transpose(1, 0, 2) if layout == 'NTC' else pred
    label = label if label_layout == 'NT' else label.T
    lengths = [x for x in (pred_lengths, label_lengths) if x is not None]
    loss = ctc_reference(data, label, *lengths, use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label='last')
    return _weighted(loss, weight, sample_weight)


def huber_ref(pred, label, sample_weight=None, rho=1, weight=None, batch_axis=0):
    d = np.abs(label.reshape(pred.shape) - pred)
    loss = np.where(d > rho, d - rho / 2, d ** 2 / (2 * rho))
    return _per_sample(_weighted(loss, weight, sample_weight), batch_axis)


def hinge_ref(pred, label, sample_weight=None, margin=1, weight=None, batch_axis=0, power=1):
    loss = np.maximum(0, margin - pred * label.reshape(pred.shape)) ** power
    return _per_sample(_weighted(loss, weight, sample_weight), batch_axis)


def squared_hinge_ref(*args, **kwargs):
    return hinge_ref(*args, power=2, **kwargs)


def logistic_ref(pred, label, sample_weight=None, weight=None, batch_axis=0,
                 label_format='signed'):
    signed = label if label_format == 'signed' else 2 * label - 1
    loss = np.log1p(np.exp(-pred * signed.reshape(pred.shape)))
    return _per_sample(_weighted(loss, weight, sample_weight), batch_axis)


def triplet_ref(pred, positive, negative, margin=1, weight=None, batch_axis=0):
    gap = _per_sample((positive - pred) ** 2 - (negative - pred) ** 2, batch_axis, np.sum)
    return _weighted(np.maximum(gap + margin, 0), weight)


def poisson_ref(pred, target, sample_weight=None, weight=None, from_logits=True, batch_axis=0,
                compute_full=False):
    loss = np.exp(pred) - target * pred if from_logits else pred - target * np.log(pred + 1e-8)
    if compute_full:
        t = np.where(target > 1, target, 1.0)
        loss = loss + np.where(target > 1, t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t), 0)
    return np.array([np.mean(_weighted(loss, weight, sample_weight))])


def cosine_ref(input1, input2, label, sample_weight=None, weight=None, batch_axis=0, margin=0):
    x = input1.reshape(input2.shape)
    cos = (x * input2).sum(-1) / np.maximum(
        np.linalg.norm(x, axis=-1) * np.linalg.norm(input2, axis=-1), 1e-12)
    loss = np.where(label == 1, 1 - cos, np.where(label == -1, np.maximum(cos - margin, 0), 0))
    return _weighted(loss.reshape(-1, 1), weight, sample_weight)


def sdml_ref(x1, x2, smoothing_parameter=0.3, weight=1., batch_axis=0):
    n = x1.shape[0]
    dist = ((x1[:, None, :] - x2[None, :, :]) ** 2).sum(-1)
    target = np.where(np.eye(n) > 0, 1 - smoothing_parameter, smoothing_parameter / (n - 1))
    return _weighted(kldiv_ref(_log_softmax(-dist, 1), target), weight)


REFERENCES = {
    'L2Loss': l2_ref, 'L1Loss': l1_ref, 'SigmoidBinaryCrossEntropyLoss': bce_ref,
    'SigmoidBCELoss': bce_ref, 'SoftmaxCrossEntropyLoss': softmax_ce_ref,
    'SoftmaxCELoss': softmax_ce_ref, 'KLDivLoss': kldiv_ref, 'CTCLoss': ctc_ref,
    'HuberLoss': huber_ref, 'HingeLoss': hinge_ref, 'SquaredHingeLoss': squared_hinge_ref,
    'LogisticLoss': logistic_ref, 'TripletLoss': triplet_ref, 'PoissonNLLLoss': poisson_ref,
    'CosineEmbeddingLoss': cosine_ref, 'SDMLLoss': sdml_ref,
}


# -------------------------------------------------------------------------------------------------
# Running a case of tests/data/loss.json
# -------------------------------------------------------------------------------------------------

def _inputs(case, dtype):
    return [None if x is None else np.array(x, dtype=dtype) for x in case['inputs']]


def _head(shape):
    return np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64).reshape(shape)


def _run(case, dtype, record=True):
    """(output, gradients of case['diff']) of hybridlib's loss, head gradient 1, 2, 3, ..."""
    block = getattr(L, case['cls'])(**case['kwargs'])
    arrays = [None if x is None else nd.array(x, dtype=dtype) for x in _inputs(case, dtype)]
    for i in case['diff']:
        arrays[i].attach_grad()
    with autograd.record():
        out = block(*arrays)
    out.backward(nd.array(_head(out.shape), dtype=dtype))
    return out.asnumpy(), [arrays[i].grad.asnumpy() for i in case['diff']]


def _reference(case, values):
    return REFERENCES[case['cls']](*values, **case['kwargs'])


def _case_id(case):
    return case['name']


@pytest.mark.parametrize('case', MXNET_CASES, ids=_case_id)
def test_against_mxnet(case):
    out, grads = _run(case, np.float32)
    assert out.dtype == np.float32
    # atol: float32 rounding of sums that cancel (SDMLLoss's KL divergence)
    np.testing.assert_allclose(out, case['output'], rtol=1e-5, atol=1e-5)
    for i, g, expected in zip(case['diff'], grads, case['grads'] or []):
        np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-5,
                                   err_msg=f'gradient of input {i}')


@pytest.mark.parametrize('case', MXNET_CASES, ids=_case_id)
def test_against_numpy(case):
    """float64 values and gradients: the reference, and its central finite differences."""
    values = _inputs(case, np.float64)
    out, grads = _run(case, np.float64)
    expected = _reference(case, values)
    assert out.dtype == np.float64 and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)
    head, eps = _head(out.shape), 1e-6
    for i, g in zip(case['diff'], grads):
        numeric = np.zeros_like(values[i])
        for j in range(values[i].size):
            shifted = []
            for sign in (1, -1):
                moved = [None if v is None else v.copy() for v in values]
                moved[i].reshape(-1)[j] += sign * eps
                shifted.append(np.sum(_reference(case, moved) * head))
            numeric.reshape(-1)[j] = (shifted[0] - shifted[1]) / (2 * eps)
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-6,
                                   err_msg=f'gradient of input {i}')


@pytest.mark.parametrize('case', MXNET_CASES, ids=_case_id)
def test_hybridize(case):
    """Imperative vs hybridized with and without static_alloc: outputs, every input's grad."""
    block = getattr(L, case['cls'])(**case['kwargs'])
    inputs = [None if x is None else nd.array(x) for x in _inputs(case, np.float32)]
    check_hybrid(block, inputs)


# -------------------------------------------------------------------------------------------------
# MXNet's surface
# -------------------------------------------------------------------------------------------------

# inspect.signature(cls.__init__) and of hybrid_forward, in MXNet 1.9.1
SIGNATURES = {
    'Loss': ('(self, weight, batch_axis, **kwargs)', '(self, F, x, *args, **kwargs)'),
    'L2Loss': ('(self, weight=1.0, batch_axis=0, **kwargs)',
               '(self, F, pred, label, sample_weight=None)'),
    'L1Loss': ('(self, weight=None, batch_axis=0, **kwargs)',
               '(self, F, pred, label, sample_weight=None)'),
    'SigmoidBinaryCrossEntropyLoss': (
        '(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs)',
        '(self, F, pred, label, sample_weight=None, pos_weight=None)'),
    'SoftmaxCrossEntropyLoss': (
        '(self, axis=-1, sparse_label=True, from_logits=False, weight=None, batch_axis=0, '
        '**kwargs)', '(self, F, pred, label, sample_weight=None)'),
    'KLDivLoss': ('(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs)',
                  '(self, F, pred, label, sample_weight=None)'),
    'CTCLoss': ("(self, layout='NTC', label_layout='NT', weight=None, **kwargs)",
                '(self, F, pred, label, pred_lengths=None, label_lengths=None, '
                'sample_weight=None)'),
    'HuberLoss': ('(self, rho=1, weight=None, batch_axis=0, **kwargs)',
                  '(self, F, pred, label, sample_weight=None)'),
    'HingeLoss': ('(self, margin=1, weight=None, batch_axis=0, **kwargs)',
                  '(self, F, pred, label, sample_weight=None)'),
    'SquaredHingeLoss': ('(self, margin=1, weight=None, batch_axis=0, **kwargs)',
                         '(self, F, pred, label, sample_weight=None)'),
    'LogisticLoss': ("(self, weight=None, batch_axis=0, label_format='signed', **kwargs)",
                     '(self, F, pred, label, sample_weight=None)'),
    'TripletLoss': ('(self, margin=1, weight=None, batch_axis=0, **kwargs)',
                    '(self, F, pred, positive, negative)'),
    'PoissonNLLLoss': (
        '(self, weight=None, from_logits=True, batch_axis=0, compute_full=False, **kwargs)',
        '(self, F, pred, target, sample_weight=None, epsilon=1e-08)'),
    'CosineEmbeddingLoss': ('(self, weight=None, batch_axis=0, margin=0, **kwargs)',
                            '(self, F, input1, input2, label, sample_weight=None)'),
    'SDMLLoss': ('(self, smoothing_parameter=0.3, weight=1.0, batch_axis=0, **kwargs)',
                 '(self, F, x1, x2)'),
}


def test_names_and_signatures():
    assert L.__all__ == [
        'Loss', 'L2Loss', 'L1Loss', 'SigmoidBinaryCrossEntropyLoss', 'SigmoidBCELoss',
        'SoftmaxCrossEntropyLoss', 'SoftmaxCELoss', 'KLDivLoss', 'CTCLoss', 'HuberLoss',
        'HingeLoss', 'SquaredHingeLoss', 'LogisticLoss', 'TripletLoss', 'PoissonNLLLoss',
        'CosineEmbeddingLoss', 'SDMLLoss']
    assert L.SigmoidBCELoss is L.SigmoidBinaryCrossEntropyLoss
    assert L.SoftmaxCELoss is L.SoftmaxCrossEntropyLoss
    for name, (init, forward) in SIGNATURES.items():
        cls = getattr(L, name)
        assert issubclass(cls, gluon.HybridBlock) and issubclass(cls, L.Loss)
        assert str(inspect.signature(cls.__init__)) == init, name
        assert str(inspect.signature(cls.hybrid_forward)) == forward, name


def test_repr_and_names():
    """As printed by MXNet 1.9.1 in a fresh process."""
    made = [L.L2Loss(), L.L1Loss(), L.SigmoidBCELoss(), L.SoftmaxCELoss(), L.KLDivLoss(),
            L.CTCLoss(), L.PoissonNLLLoss(), L.SDMLLoss()]
    assert [repr(b) for b in made] == [
        'L2Loss(batch_axis=0, w=1.0)', 'L1Loss(batch_axis=0, w=None)',
        'SigmoidBinaryCrossEntropyLoss(batch_axis=0, w=None)',
        'SoftmaxCrossEntropyLoss(batch_axis=0, w=None)', 'KLDivLoss(batch_axis=0, w=None)',
        'CTCLoss(batch_axis=0, w=None)', 'PoissonNLLLoss(batch_axis=0, w=None)',
        'SDMLLoss(batch_axis=0, w=1.0)']
    assert [b.name for b in made[:3]] == ['l2loss0', 'l1loss0', 'sigmoidbinarycrossentropyloss0']
    assert made[0].prefix == 'l2loss0_' and not made[0].collect_params()
    assert L.CTCLoss(layout='TNC', label_layout='TN')._batch_axis == 1


def test_base_loss_needs_hybrid_forward():
    with pytest.raises(NotImplementedError):
        L.Loss(None, 0)(nd.ones((2, 3)))


def test_builtin_losses_start_compiled_until_shapes_keep_changing():
    """A built-in loss is compiled from the start (the numbers are the imperative ones:
    test_hybridize); after more input shapes than it keeps graphs for it runs imperatively,
    and a subclass with its own hybrid_forward or the user's hybridize(False) stays
    imperative."""
    loss = L.SoftmaxCrossEntropyLoss()
    assert loss._active
    for n in range(1, L._AUTO_SHAPES + 1):
        loss(nd.ones((n, 3)), nd.zeros(n))
    assert loss._active and loss._cached_graph
    loss(nd.ones((L._AUTO_SHAPES + 1, 3)), nd.zeros(L._AUTO_SHAPES + 1))
    assert not loss._active

    class Custom(L.L2Loss):
        def hybrid_forward(self, F, pred, label, sample_weight=None):
            return F.mean(F.abs(pred - label), axis=self._batch_axis, exclude=True)
    assert not Custom()._active
    loss = L.L1Loss()
    loss.hybridize(False)
    loss(nd.ones((2, 3)), nd.zeros((2, 3)))
    assert not loss._active and loss._auto_shapes is None


def test_symbol_inputs_compose_a_graph():
    out = L.SoftmaxCELoss()(sym.var('pred'), sym.var('label'))
    assert isinstance(out, sym.Symbol)
    assert out.list_arguments() == ['pred', 'label']
    assert out.infer_shape(pred=(4, 5), label=(4,))[1] == [(4,)]
    out = L.CTCLoss()(sym.var('pred'), sym.var('label'), None, sym.var('label_lengths'))
    assert out.list_arguments() == ['pred', 'label', 'label_lengths']
    assert out.infer_shape(pred=(2, 6, 5), label=(2, 3), label_lengths=(2,))[1] == [(2,)]


# -------------------------------------------------------------------------------------------------
# Where hybridlib is better than MXNet (same values wherever MXNet has values)
# -------------------------------------------------------------------------------------------------

def test_poisson_full_with_zero_targets_is_finite():
    """MXNet 1.9.1 returns NaN (0 * log(0)) for a target of 0, and its in-place ``*=`` fails
    under autograd.record; here the Stirling term of targets <= 1 is 0 and it trains."""
    pred = nd.array(np.sin(np.arange(6.0)).reshape(2, 3), dtype=np.float64)
    target = np.array([[0., 1., 2.], [3., 0., 5.]])
    pred.attach_grad()
    with autograd.record():
        out = L.PoissonNLLLoss(compute_full=True)(pred, nd.array(target, dtype=np.float64))
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), poisson_ref(pred.asnumpy(), target,
                                                          compute_full=True), rtol=1e-12)
    np.testing.assert_allclose(pred.grad.asnumpy(), (np.exp(pred.asnumpy()) - target) / 6,
                               rtol=1e-12)


@pytest.mark.parametrize('make, label', [
    (L.SigmoidBCELoss, [[0., 1., 0.25]]),
    (L.LogisticLoss, [[-1., 1., 1.]]),
])
def test_logistic_gradient_at_zero_logits(make, label):
    """The derivative of log(1 + exp(x)) - x * z at x = 0 is 1/2 - z. MXNet 1.9.1 returns -z
    there (relu and |x| differentiated as 0 at 0): here it is right, as elsewhere."""
    pred = nd.zeros((1, 3), dtype=np.float64)
    pred.attach_grad()
    label = np.array(label)
    with autograd.record():
        make()(pred, nd.array(label, dtype=np.float64)).backward()
    z = label if make is L.SigmoidBCELoss else (label + 1) / 2
    np.testing.assert_allclose(pred.grad.asnumpy(), (0.5 - z) / 3, rtol=1e-12)


def test_l2_weight_none_is_one():
    pred, label = nd.array([[1., 2.], [3., 5.]]), nd.zeros((2, 2))
    np.testing.assert_allclose(L.L2Loss(weight=None)(pred, label).asnumpy(),
                               L.L2Loss()(pred, label).asnumpy())


def test_sdml_weight_applies():
    """MXNet 1.9.1 ignores SDMLLoss's weight; here it scales the loss like every other."""
    x1, x2 = nd.array(np.sin(np.arange(6.0)).reshape(3, 2)), nd.ones((3, 2))
    np.testing.assert_allclose(L.SDMLLoss(weight=3.0)(x1, x2).asnumpy(),
                               3 * L.SDMLLoss()(x1, x2).asnumpy(), rtol=1e-6)


def test_ctc_impossible_label_costs_zero():
    """MXNet's convention: 4 equal labels need 7 frames; with 5 the loss and gradient are 0."""
    pred = nd.array(np.sin(np.arange(40.0)).reshape(2, 5, 4))
    pred.attach_grad()
    with autograd.record():
        out = L.CTCLoss()(pred, nd.array([[1, 1, 1, 1], [0, 1, -1, -1]]))
    out.backward()
    assert out.asnumpy()[0] == 0 and out.asnumpy()[1] > 0
    assert not pred.grad.asnumpy()[0].any() and pred.grad.asnumpy()[1].any()


# -------------------------------------------------------------------------------------------------
# Errors
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('hybridize', [False, True])
@pytest.mark.parametrize('make, inputs, shapes', [
    (L.L2Loss, [(2, 3), (2, 4)], ['(2, 4)', '(2, 3)']),
    (L.L1Loss, [(2, 3), (2, 3), (3, 1)], ['(2, 3)', '(3, 1)']),
    (L.SoftmaxCELoss, [(2, 5), (3,)], ['(2, 5)', '(3,)']),
    (L.SigmoidBCELoss, [(2, 3), (2, 3), None, (1, 4)], ['(1, 4)']),
    (L.TripletLoss, [(2, 3), (2, 3), (3, 3)], ['(3, 3)', '(2, 3)']),
    (L.CosineEmbeddingLoss, [(2, 3), (2, 3), (3,)], ['(3, 1)']),
    (L.CTCLoss, [(2, 5, 4), (3, 2)], ['(5, 2, 4)', '(3, 2)']),
])
def test_shape_errors(make, inputs, shapes, hybridize):
    """A wrong shape raises ShapeError (an MXNetError, as MXNet's) naming the shapes."""
    block = make()
    block.hybridize(hybridize)
    arrays = [None if s is None else nd.ones(s) for s in inputs]
    with pytest.raises(ShapeError) as err:
        block(*arrays).asnumpy()
    assert isinstance(err.value, MXNetError)
    for s in shapes:
        assert s in str(err.value)
    if hybridize:
        assert block.name in str(err.value)


def test_argument_errors():
    with pytest.raises(ValueError, match='label_format can only be signed or binary, '
                                         'recieved x.'):
        L.LogisticLoss(label_format='x')
    with pytest.raises(AssertionError, match="Only 'NTC' and 'TNC' layouts for pred are "
                                             "supported. Got: NCT"):
        L.CTCLoss(layout='NCT')
    with pytest.raises(AssertionError, match="Only 'NT' and 'TN' layouts for label"):
        L.CTCLoss(label_layout='N')
    with pytest.raises(AssertionError, match='weight must be a number'):
        L.L1Loss(weight='2')(nd.ones((2, 2)), nd.ones((2, 2)))
    with pytest.raises(UsageError, match=r'x1 and x2 must have the same shape, got \(3, 2\) '
                                         r'and \(3, 4\)'):
        L.SDMLLoss()(nd.ones((3, 2)), nd.ones((3, 4)))
    with pytest.raises(MXNetError, match=r'labels must be in \[0, 2\]'):
        L.CTCLoss()(nd.ones((2, 5, 4)), nd.array([[1, 3], [0, 0]]))


@pytest.mark.skipif(mx.num_gpus() == 0, reason='needs a GPU')
def test_gpu_matches_cpu():
    for case in MXNET_CASES:
        block = getattr(L, case['cls'])(**case['kwargs'])
        block.hybridize()
        values = _inputs(case, np.float64)
        cpu = block(*[None if v is None else nd.array(v, dtype=v.dtype) for v in values])
        gpu = block(*[None if v is None else nd.array(v, ctx=mx.gpu(0), dtype=v.dtype)
                      for v in values])
        assert gpu.context == mx.gpu(0)
        np.testing.assert_allclose(gpu.asnumpy(), cpu.asnumpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=case['name'])


def test_reshape_like_helper_as_mxnet():
    # GluonCV's and GluonNLP's losses import it from gluon.loss
    x, y = nd.arange(6), nd.zeros((2, 3))
    out = _reshape_like(nd, x, y)
    assert out.shape == (2, 3) and out.asnumpy().ravel().tolist() == list(range(6))
    s = _reshape_like(sym, sym.var('x'), sym.var('y'))
    assert json.loads(s.tojson())['nodes'][-1]['op'] == 'reshape_like'
    assert s.infer_shape(x=(6,), y=(3, 2))[1] == [(3, 2)]
