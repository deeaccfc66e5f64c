"""Cases for hybridlib/ops/loss_ops.py: CTCLoss.

The reference sums the probabilities of every alignment (all C**T paths, collapsed), which is
independent of the forward-backward algorithm of the implementation. The literals in the plain
tests were read from MXNet 1.9.1.
"""
import itertools

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import autograd, nd, sym
from hybridlib.base import MXNetError, NotSupportedError, ShapeError

from harness import Case, check_case, normal


# -------------------------------------------------------------------------------------------------
# Reference: brute force over all alignments
# -------------------------------------------------------------------------------------------------

def _collapse(path, blank):
    out, prev = [], None
    for k in path:
        if k != prev and k != blank:
            out.append(k)
        prev = k
    return tuple(out)


def ctc_reference(data, label, *lengths, use_data_lengths=False, use_label_lengths=False,
                  blank_label='first'):
    lengths = list(lengths)
    data_lengths = lengths.pop(0) if use_data_lengths else None
    label_lengths = lengths.pop(0) if use_label_lengths else None
    t_max, n, c = data.shape
    blank, pad = (0, 0) if blank_label == 'first' else (c - 1, -1)
    logp = data - np.log(np.exp(data).sum(axis=2, keepdims=True))
    loss = np.zeros(n)
    for b in range(n):
        row = [int(v) for v in label[b]]
        if label_lengths is not None:
            row = row[:int(label_lengths[b])]
        elif pad in row:
            row = row[:row.index(pad)]
        frames = t_max if data_lengths is None else int(data_lengths[b])
        total = 0.0
        for path in itertools.product(range(c), repeat=frames):
            if _collapse(path, blank) == tuple(row):
                total += np.exp(sum(logp[t, b, k] for t, k in enumerate(path)))
        loss[b] = -np.log(total) if total > 0 else 0.0      # MXNet: impossible costs 0
    return loss


def _lengths(*values):
    return np.array(values, dtype=np.int32)


# second_order=False: the gradient of CTCLoss is its hidden output, which (as in MXNet) has no
# derivative of its own
CASES = [
    Case('CTCLoss', [normal((4, 2, 3)), np.array([[1., 2.], [2., 0.]])], {}, ctc_reference,
         name='blank_first', grad_inputs=[0], second_order=False),
    Case('CTCLoss', [normal((5, 2, 4)), np.array([[0., 0., -1.], [1., 2., 0.]])],
         dict(blank_label='last'), ctc_reference, name='blank_last_repeats', grad_inputs=[0],
         second_order=False),
    Case('ctc_loss', [normal((5, 3, 3)), np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]], np.int32),
                      _lengths(5, 3, 4), _lengths(2, 1, 3)],
         dict(use_data_lengths=True, use_label_lengths=True, blank_label='last'), ctc_reference,
         name='lengths', grad_inputs=[0], second_order=False),
    Case('_contrib_CTCLoss', [normal((4, 2, 3)), np.array([[2., 1.], [1., 1.]]),
                              _lengths(1, 2)],
         dict(use_label_lengths=True), ctc_reference, name='label_lengths_only', grad_inputs=[0],
         second_order=False),
    # the first label needs 5 frames: MXNet's loss and gradient are 0 there
    Case('_contrib_ctc_loss', [normal((4, 2, 3)), np.array([[1., 1., 1.], [0., -1., -1.]]),
                               _lengths(4, 3)],
         dict(use_data_lengths=True, blank_label='last'), ctc_reference, name='impossible',
         grad_inputs=[0], second_order=False),
    # no frames with an empty label (probability 1) and with a label (impossible); an empty
    # label over frames (all blanks)
    Case('CTCLoss', [normal((3, 3, 3)), np.array([[-1., -1.], [0., 1.], [-1., -1.]]),
                     _lengths(0, 0, 2)],
         dict(use_data_lengths=True, blank_label='last'), ctc_reference, name='empty',
         grad_inputs=[0], second_order=False),
]


@pytest.mark.parametrize('case', CASES, ids=repr)
def test_loss_ops(case):
    check_case(case)


# -------------------------------------------------------------------------------------------------
# MXNet's numbers and conventions
# -------------------------------------------------------------------------------------------------

# np.random.seed(0); np.random.randn(5, 2, 4), the input of the values read from MXNet
_X = np.array([
    [[1.764052345967664, 0.4001572083672233, 0.9787379841057392, 2.240893199201458],
     [1.8675579901499675, -0.977277879876411, 0.9500884175255894, -0.1513572082976979]],
    [[-0.10321885179355784, 0.41059850193837233, 0.144043571160878, 1.454273506962975],
     [0.7610377251469934, 0.12167501649282841, 0.44386323274542566, 0.33367432737426683]],
    [[1.4940790731576061, -0.20515826376580087, 0.31306770165090136, -0.8540957393017248],
     [-2.5529898158340787, 0.6536185954403606, 0.8644361988595057, -0.7421650204064419]],
    [[2.2697546239876076, -1.4543656745987648, 0.04575851730144607, -0.1871838500258336],
     [1.5327792143584575, 1.469358769900285, 0.1549474256969163, 0.37816251960217356]],
    [[-0.8877857476301128, -1.980796468223927, -0.3479121493261526, 0.15634896910398005],
     [1.2302906807277207, 1.2023798487844113, -0.3873268174079523, -0.30230275057533557]]])


def test_x_literal_is_the_seeded_draw():
    np.testing.assert_allclose(_X, np.random.RandomState(0).randn(5, 2, 4), rtol=1e-15)


@pytest.mark.parametrize('label, kwargs, expected', [
    ([[1, 2, 0], [0, -1, -1]], dict(blank_label='last'), [3.7818494, 6.3142896]),
    ([[2, 3, 1], [1, 0, 0]], {}, [5.4134192, 2.7232506]),
    # blank_label='first': 0 pads, so [2, 0, 1] is the sequence [2]
    ([[2, 0, 1], [1, 0, 0]], {}, [4.0967355, 2.7232506]),
    ([[1, -1, 0], [0, -1, -1]], dict(blank_label='last'), [6.0087976, 6.3142896]),
    ([[1, 1, 1], [0, 0, -1]], dict(blank_label='last'), [10.851155, 4.565263]),
    ([[-1, -1, -1], [0, 0, -1]], dict(blank_label='last'), [7.5222106, 4.565263]),
])
def test_ctc_values_from_mxnet(label, kwargs, expected):
    out = nd.CTCLoss(nd.array(_X), nd.array(label), **kwargs)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-6)


def test_ctc_lengths_from_mxnet():
    out = nd.CTCLoss(nd.array(_X), nd.array([[1, 2, 0], [0, 5, 7]]), nd.array([3, 1]),
                     use_label_lengths=True, blank_label='last')
    np.testing.assert_allclose(out.asnumpy(), [3.7818494, 6.3142896], rtol=1e-6)
    out = nd.CTCLoss(nd.array(_X), nd.array([[1, 2, 0], [0, -1, -1]]), nd.array([5, 3]),
                     use_data_lengths=True, blank_label='last')
    np.testing.assert_allclose(out.asnumpy(), [3.7818494, 3.1673489], rtol=1e-6)


def test_ctc_gradient_from_mxnet():
    """MXNet scales each sample's gradient by its head gradient; an impossible label (3 equal
    labels in 4 frames) costs 0 with a zero gradient; frames past data_lengths get 0."""
    x = nd.array(_X)
    x.attach_grad()
    with autograd.record():
        out = nd.CTCLoss(x, nd.array([[1, 2, 0], [0, -1, -1]]), blank_label='last')
    out.backward(nd.array([1.0, 2.0]))
    np.testing.assert_allclose(x.grad.asnumpy()[:, 1], [
        [-0.00655055, 0.07311518, 0.5024028, -0.5689672],
        [-0.54699343, 0.36287338, 0.5008177, -0.3166978],
        [-0.9716348, 0.79276377, 0.97881526, -0.7999432],
        [-0.56528866, 0.74908566, 0.20122865, -0.38502547],
        [-0.39034373, 0.8148707, 0.16622177, -0.59074795]], rtol=1e-5, atol=1e-6)
    with autograd.record():
        out = nd.CTCLoss(x, nd.array([[1, 1, 1], [0, -1, -1]]), nd.array([4, 3]),
                         use_data_lengths=True, blank_label='last')
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), [0.0, 3.1673489], rtol=1e-6)
    np.testing.assert_array_equal(x.grad.asnumpy()[:, 0], 0)
    np.testing.assert_allclose(x.grad.asnumpy()[:, 1], [
        [-0.28625494, 0.03655759, 0.2512014, -0.00150412],
        [-0.32031783, 0.18143669, 0.25040886, -0.11152785],
        [-0.0844305, 0.39638188, 0.48940763, -0.80135906],
        [0, 0, 0, 0], [0, 0, 0, 0]], rtol=1e-5, atol=1e-6)


def test_ctc_symbol_surface():
    """MXNet: two outputs (node_row_ptr), the first listed as output0; inputs by the flags."""
    d, l, dl, ll = (sym.var(n) for n in ('d', 'l', 'dl', 'll'))
    s = sym.CTCLoss(d, l, name='ctc')
    assert s.list_arguments() == ['d', 'l']
    assert s.list_outputs() == ['ctc_output0']
    assert s.infer_shape(d=(5, 2, 4), l=(2, 3))[1] == [(2,)]
    s = sym.CTCLoss(d, l, label_lengths=ll, use_label_lengths=True)
    assert s.list_arguments() == ['d', 'l', 'll']
    s = sym.CTCLoss(d, l, dl, ll, use_data_lengths=True, use_label_lengths=True)
    assert s.list_arguments() == ['d', 'l', 'dl', 'll']
    node = [n for n in __import__('json').loads(s.tojson())['nodes'] if n['op'] == 'CTCLoss'][0]
    assert node['attrs'] == {'use_data_lengths': 'True', 'use_label_lengths': 'True'}
    assert s.infer_shape(d=(5, 2, 4), l=(2, 3))[0] == [(5, 2, 4), (2, 3), (2,), (2,)]
    _, out_types, _ = s.infer_type(d=np.float64, l=np.int32, dl=np.int32, ll=np.float32)
    assert out_types == [np.float64]


@pytest.mark.parametrize('data, label, lengths, message', [
    ((5, 2, 4), (2,), {}, 'The number of dimensions of labels array must be 2'),
    ((5, 2, 4), (3, 3), {}, 'The batch size for the labels and data arrays must be the same'),
    ((5, 2), (2, 3), {}, 'The number of dimensions of data array must be 3'),
    ((5, 2, 4), (2, 3), dict(data_lengths=(3,), use_data_lengths=True),
     'The batch size for the data and data lengths must be the same'),
    ((5, 2, 4), (2, 3), dict(label_lengths=(3,), use_label_lengths=True),
     'The batch size for the labels and label lengths must be the same'),
])
def test_ctc_shape_errors(data, label, lengths, message):
    kwargs = {k: nd.ones(v) if isinstance(v, tuple) else v for k, v in lengths.items()}
    with pytest.raises(ShapeError, match=message) as err:
        nd.CTCLoss(nd.zeros(data), nd.zeros(label), **kwargs)
    assert 'CTCLoss' in str(err.value) and str(data) in str(err.value)


@pytest.mark.parametrize('label, kwargs, message', [
    ([[1, 4, -1]], dict(blank_label='last'), r'labels must be in \[0, 2\]'),
    ([[1, 3, -1]], dict(blank_label='last'), r'\(the blank is 3\)'),
    ([[-2, 1, 0]], {}, r'labels must be in \[1, 3\]'),
    ([[1, 2, 0]], dict(label_lengths=nd.array([4]), use_label_lengths=True),
     r'label_lengths must be in \[0, 3\]'),
    ([[1, 2, 0]], dict(data_lengths=nd.array([6]), use_data_lengths=True),
     r'data_lengths must be in \[0, 5\]'),
])
def test_ctc_value_errors(label, kwargs, message):
    with pytest.raises(MXNetError, match=message):
        nd.CTCLoss(nd.zeros((5, 1, 4)), nd.array(label), **kwargs)


def test_ctc_second_order_is_not_supported():
    x = nd.array(_X)
    x.attach_grad()
    with autograd.record():
        out = nd.CTCLoss(x, nd.array([[1, 2, 0], [0, -1, -1]]))
        g = autograd.grad(out, [x], create_graph=True)[0]
    with pytest.raises(NotSupportedError, match='second-order'):
        g.backward()


def test_ctc_float16_and_gpu_agree():
    label = nd.array([[1, 2, 0], [0, -1, -1]])
    ref = nd.CTCLoss(nd.array(_X, dtype=np.float64), label, blank_label='last').asnumpy()
    half = nd.CTCLoss(nd.array(_X, dtype=np.float16), label, blank_label='last')
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.asnumpy(), ref, rtol=2e-3)
    if mx.num_gpus() > 0:
        out = nd.CTCLoss(nd.array(_X, ctx=mx.gpu(0), dtype=np.float64),
                         label.as_in_context(mx.gpu(0)), blank_label='last')
        np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-12)
