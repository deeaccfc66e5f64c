"""Writes tests/data/loss.json: MXNet 1.9.1's values and gradients of every gluon.loss.

Run with the MXNet oracle, from the repository root::

    .oracle/bin/python tests/data/make_loss_files.py

Each case names a loss class, its constructor arguments and its inputs (None for an optional
input that is skipped); the file holds the inputs (float32 values), MXNet's output (imperative)
and the gradients of the differentiable inputs (``diff``) for a head gradient of 1, 2, 3, ...
(null where MXNet cannot differentiate the loss).
tests/test_loss.py reads it.
"""
import contextlib
import json
import os

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd


def wave(shape, offset=0.0, low=-1.0, high=1.0, step=1.3):
    """Distinct smooth values in [low, high] of ``shape``."""
    n = int(np.prod(shape))
    unit = (np.sin(np.arange(n) * step + offset) + 1) / 2
    return (low + (high - low) * unit).reshape(shape)


def distribution(shape, offset=0.0, axis=-1):
    e = np.exp(wave(shape, offset, -2, 2))
    return e / e.sum(axis=axis, keepdims=True)


def signs(shape, offset=0.0):
    return np.where(wave(shape, offset) >= 0, 1.0, -1.0)


def log_probs(shape, offset=0.0):
    return np.log(distribution(shape, offset))


def case(name, cls, kwargs, inputs, diff, mxnet_grads=True):
    return dict(name=name, cls=cls, kwargs=kwargs, inputs=inputs, diff=diff,
                mxnet_grads=mxnet_grads)


P, L = wave((3, 4)), wave((3, 4), 2.0)
# logits of the logistic losses avoid 0, where MXNet's gradient is wrong (see hybridlib/loss.py)
Z = wave((3, 4), 0.25)
W = wave((3, 1), 0.5, 0.5, 2.0)
CASES = [
    case('l2', 'L2Loss', {}, [P, L], [0, 1]),
    case('l2_weighted', 'L2Loss', dict(weight=3.0), [P, L.reshape(12), W], [0, 1, 2]),
    case('l2_batch_axis1', 'L2Loss', dict(batch_axis=1), [P.T, L.T, wave((1, 3), 1.0)],
         [0, 1, 2]),
    case('l1', 'L1Loss', {}, [P, L], [0, 1]),
    case('l1_weighted', 'L1Loss', dict(weight=0.5), [wave((3, 2, 2)), wave((3, 2, 2), 2.),
                                                     wave((3, 1, 2), 0.3)], [0, 1, 2]),
    case('bce', 'SigmoidBCELoss', {}, [Z * 3, wave((3, 4), 1.0, 0, 1)], [0, 1]),
    case('bce_pos_weight', 'SigmoidBinaryCrossEntropyLoss', {},
         [Z * 3, wave((3, 4), 1.0, 0, 1), W, wave((1, 4), 0.2, 0.5, 3.0)], [0, 1, 2, 3]),
    case('bce_from_sigmoid', 'SigmoidBCELoss', dict(from_sigmoid=True, weight=2.0),
         [wave((3, 4), 0.0, 0.05, 0.95), wave((3, 4), 1.0, 0, 1)], [0, 1]),
    case('bce_from_sigmoid_pos_weight', 'SigmoidBCELoss', dict(from_sigmoid=True),
         [wave((3, 4), 0.0, 0.05, 0.95), wave((3, 4), 1.0, 0, 1), None,
          wave((1, 4), 0.2, 0.5, 3.0)], [0, 1, 3]),
    case('bce_batch_axis1', 'SigmoidBCELoss', dict(batch_axis=1),
         [Z.T * 2, wave((4, 3), 1.0, 0, 1)], [0, 1]),
    case('softmax_ce', 'SoftmaxCrossEntropyLoss', {},
         [wave((3, 5)) * 2, np.array([0., 4., 2.])], [0]),
    case('softmax_ce_axis1', 'SoftmaxCELoss', dict(axis=1, weight=0.5),
         [wave((3, 4, 2)) * 2, np.array([[0., 3.], [1., 1.], [2., 0.]]), wave((3, 1, 2), 1.)],
         [0, 2]),
    case('softmax_ce_dense', 'SoftmaxCELoss', dict(sparse_label=False),
         [wave((3, 5)) * 2, distribution((3, 5), 1.0)], [0, 1]),
    case('softmax_ce_from_logits', 'SoftmaxCELoss', dict(from_logits=True),
         [log_probs((3, 5)), np.array([1., 0., 4.]), W], [0, 2]),
    case('softmax_ce_batch_axis1', 'SoftmaxCELoss', dict(axis=0, batch_axis=1),
         [wave((5, 3)) * 2, np.array([4., 0., 2.])], [0]),
    case('kldiv', 'KLDivLoss', {}, [log_probs((3, 4)), distribution((3, 4), 1.0)], [0, 1]),
    case('kldiv_softmax', 'KLDivLoss', dict(from_logits=False, axis=1, weight=2.0),
         [wave((3, 4, 2)), distribution((3, 4, 2), 1.0, axis=1), wave((3, 1, 1), .3)],
         [0, 1, 2]),
    case('ctc', 'CTCLoss', {}, [wave((2, 5, 4), 0, -2, 2), np.array([[1., 0., -1.],
                                                                     [2., 2., 1.]])], [0]),
    case('ctc_tnc_lengths', 'CTCLoss', dict(layout='TNC', label_layout='TN', weight=2.0),
         [wave((5, 3, 3), 0, -2, 2), np.array([[1., 0., 1.], [1., 1., 0.], [0., 0., 0.]]),
          np.array([5., 4., 3.]), np.array([2., 2., 1.]), np.array([1., 0.5, 2.])], [0, 4]),
    case('ctc_label_lengths', 'CTCLoss', {},
         [wave((2, 4, 3), 1, -2, 2), np.array([[0., 1.], [1., 0.]]), None,
          np.array([2., 1.])], [0]),
    case('huber', 'HuberLoss', {}, [P * 2, L * 2], [0, 1]),
    case('huber_rho', 'HuberLoss', dict(rho=0.5, weight=2.0), [P, L, W], [0, 1, 2]),
    case('hinge', 'HingeLoss', {}, [P * 2, signs((3, 4), 1.0)], [0]),
    case('hinge_margin', 'HingeLoss', dict(margin=0.5, batch_axis=1),
         [P.T * 2, signs((4, 3), 1.0), wave((1, 3), 1.0)], [0, 2]),
    case('squared_hinge', 'SquaredHingeLoss', dict(weight=2.0), [P * 2, signs((3, 4), 1.0)],
         [0]),
    case('squared_hinge_margin', 'SquaredHingeLoss', dict(margin=2),
         [P, signs((3, 4), 1.0), W], [0, 2]),
    case('logistic', 'LogisticLoss', {}, [Z * 3, signs((3, 4), 1.0)], [0]),
    case('logistic_binary', 'LogisticLoss', dict(label_format='binary', weight=0.5),
         [Z * 3, (signs((3, 4), 1.0) + 1) / 2, W], [0, 2]),
    case('triplet', 'TripletLoss', {}, [P, L, wave((3, 4), 4.0)], [0, 1, 2]),
    case('triplet_margin', 'TripletLoss', dict(margin=0.5, weight=2.0, batch_axis=1),
         [P.T, L.T, wave((4, 3), 4.0)], [0, 1, 2]),
    case('poisson', 'PoissonNLLLoss', {}, [P, np.array([[0., 1, 2, 3], [4, 0, 1, 2],
                                                        [3, 4, 0, 1]])], [0, 1]),
    case('poisson_rate', 'PoissonNLLLoss', dict(from_logits=False, weight=2.0),
         [wave((3, 4), 0, 0.5, 3), np.array([[0., 1, 2, 3], [4, 0, 1, 2], [3, 4, 0, 1]]), W],
         [0, 1, 2]),
    # MXNet's compute_full works in place (``*=``), which autograd refuses: values only. Not
    # differentiated for the target: the Stirling term jumps at 1
    case('poisson_full', 'PoissonNLLLoss', dict(compute_full=True),
         [P, np.array([[1., 2, 3, 4], [0.5, 1, 2, 5], [3, 4, 1, 1.5]])], [0],
         mxnet_grads=False),
    case('cosine', 'CosineEmbeddingLoss', {},
         [P, wave((3, 4), 0.7), np.array([1., -1., 1.])], [0, 1]),
    case('cosine_margin', 'CosineEmbeddingLoss', dict(margin=0.1, weight=2.0),
         [P, wave((3, 4), 0.3), np.array([-1., -1., 1.]), W], [0, 1, 3]),
    case('sdml', 'SDMLLoss', {}, [P, wave((3, 4), 0.3)], [0, 1]),
    case('sdml_smoothing', 'SDMLLoss', dict(smoothing_parameter=0.1),
         [wave((4, 3)), wave((4, 3), 0.5)], [0, 1]),
]


def run(spec):
    block = getattr(gluon.loss, spec['cls'])(**spec['kwargs'])
    arrays = [None if x is None else nd.array(x) for x in spec['inputs']]
    record = spec.pop('mxnet_grads')
    for i in spec['diff']:
        arrays[i].attach_grad()
    with autograd.record() if record else contextlib.nullcontext():
        out = block(*arrays)
    if record:
        out.backward(nd.array(np.arange(1, out.size + 1).reshape(out.shape)))
    grads = [short(arrays[i].grad) for i in spec['diff']] if record else None
    return dict(spec, inputs=[None if a is None else short(a) for a in arrays],
                output=short(out), grads=grads)


def short(array):
    """float32 values as the shortest decimals that read back as the same float32."""
    values = array.asnumpy().astype(np.float32)
    decimals = [float(str(v)) for v in values.reshape(-1)]
    return np.array(decimals).reshape(values.shape).tolist()


def main():
    results = [run(spec) for spec in CASES]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'loss.json')
    with open(path, 'w') as f:
        json.dump(dict(mxnet=mx.__version__, cases=results), f, separators=(',', ':'))
        f.write('\n')
    print(f'wrote {len(results)} cases to {path}')


if __name__ == '__main__':
    main()
