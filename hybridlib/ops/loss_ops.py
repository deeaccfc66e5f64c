"""Loss operators: ``CTCLoss``, ``softmax_cross_entropy``, the ``*RegressionOutput`` operators
and ``MakeLoss`` (``SoftmaxOutput`` stays with the softmax family in nn.py).

The regression outputs and MakeLoss keep MXNet's convention for loss layers: their gradient is
the loss gradient itself, the head gradient ignored.

``CTCLoss`` is Connectionist Temporal Classification (Graves et al., 2006) by the
forward-backward algorithm in log space, vectorised over the batch with a loop over time steps.
Like MXNet's, it returns the gradient as a hidden second output, computed in the same pass, and
its registered gradient scales that by the head gradient.
"""
import numpy as np

from ..base import DTypeError, MXNetError, NotSupportedError, ShapeError
from .attrs import Bool, Float, Str
from .nn import _ACTIVATIONS, _prod
from .softmax import _class_index, softmax_forward
from .registry import BackwardNode, OpDef, known, merge_shape, register, register_op

__all__ = []

_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


# -------------------------------------------------------------------------------------------------
# CTCLoss
# -------------------------------------------------------------------------------------------------

def _ctc_inputs(attrs):
    names = ['data', 'label']
    if attrs.use_data_lengths:
        names.append('data_lengths')
    if attrs.use_label_lengths:
        names.append('label_lengths')
    return tuple(names)


def _ctc_lengths(attrs, lengths):
    """(data_lengths, label_lengths) from the optional inputs, None where not used."""
    lengths = list(lengths)
    data_lengths = lengths.pop(0) if attrs.use_data_lengths else None
    label_lengths = lengths.pop(0) if attrs.use_label_lengths else None
    return data_lengths, label_lengths


def _merge_batch(size, shape, axis, message):
    """Merge the batch size ``size`` (0: unknown) with ``shape[axis]``; ShapeError on conflict."""
    if shape is None or not shape[axis]:
        return size
    if size and size != shape[axis]:
        raise ShapeError(f'{message} ({size} vs. {shape[axis]})')
    return shape[axis]


def _ctc_shape(attrs, data, label, *lengths):
    data_lengths, label_lengths = _ctc_lengths(attrs, lengths)
    if data is not None and len(data) != 3:
        raise ShapeError(f'The number of dimensions of data array must be 3 (sequence_length, '
                         f'batch_size, alphabet_size), got {tuple(data)}.')
    if label is not None and len(label) != 2:
        raise ShapeError(f'The number of dimensions of labels array must be 2 (batch_size, '
                         f'label_sequence_length), got {tuple(label)}.')
    for name, shape in (('Data', data_lengths), ('Label', label_lengths)):
        if shape is not None and len(shape) != 1:
            raise ShapeError(f'{name} length array must be a vector, got {tuple(shape)}.')
    n = _merge_batch(0, data, 1, 'The batch size for the labels and data arrays must be the same')
    n = _merge_batch(n, label, 0, 'The batch size for the labels and data arrays must be the same')
    if attrs.use_data_lengths:
        n = _merge_batch(n, data_lengths, 0,
                         'The batch size for the data and data lengths must be the same')
    if attrs.use_label_lengths:
        n = _merge_batch(n, label_lengths, 0,
                         'The batch size for the labels and label lengths must be the same')
    data = None if data is None else (data[0], n, data[2])
    label = None if label is None else (n, label[1])
    ins = [data, label]
    if attrs.use_data_lengths:
        ins.append((n,))
    if attrs.use_label_lengths:
        ins.append((n,))
    return ins, [(n,), data]


def _ctc_type(attrs, data, label, *lengths):
    if data is not None and data not in _FLOATS:
        raise DTypeError(f'data must be float16, float32 or float64, got {data.name}')
    return [data, label] + list(lengths), [data, data]


def _ctc_label_lengths(xp, attrs, label, label_lengths):
    """The length of each label sequence: given, or up to the first padding value (0 with
    ``blank_label='first'``, -1 with 'last'), as MXNet finds it."""
    n, lmax = label.shape
    if label_lengths is not None:
        lengths = label_lengths.astype(np.int64)
        if bool(xp.any((lengths < 0) | (lengths > lmax))):
            raise MXNetError(f'CTCLoss: label_lengths must be in [0, {lmax}] (the label '
                             f'sequence length), got {lengths.tolist()}')
        return lengths
    is_pad = label == (0 if attrs.blank_label == 'first' else -1)
    return xp.where(is_pad.any(axis=1), is_pad.argmax(axis=1), lmax).astype(np.int64)


def _ctc_extended(xp, attrs, label, lengths, num_classes):
    """(N, 2L+1) label sequences with blanks around every label (blank-padded past each
    sequence's end), and which of their states may be entered by skipping the blank before."""
    n, lmax = label.shape
    if attrs.blank_label == 'first':
        blank, low, high = 0, 1, num_classes - 1
    else:
        blank, low, high = num_classes - 1, 0, num_classes - 2
    used = xp.arange(lmax).reshape(1, lmax) < lengths.reshape(n, 1)
    bad = used & ((label < low) | (label > high))
    if bool(xp.any(bad)):
        raise MXNetError(f'CTCLoss: labels must be in [{low}, {high}] with alphabet_size='
                         f'{num_classes} and blank_label={attrs.blank_label!r} (the blank is '
                         f'{blank}), got {label[bad].tolist()}')
    ext = xp.full((n, 2 * lmax + 1), blank, dtype=np.int64)
    ext[:, 1::2] = xp.where(used, label, blank)
    skip = xp.zeros(ext.shape, dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, skip


def _logsumexp(xp, *terms):
    """Elementwise log(sum(exp(terms))), -inf where every term is -inf."""
    top = terms[0]
    for t in terms[1:]:
        top = xp.maximum(top, t)
    safe = xp.where(xp.isfinite(top), top, 0)
    total = xp.exp(terms[0] - safe)
    for t in terms[1:]:
        total += xp.exp(t - safe)
    return xp.log(total) + safe


def _shift(xp, x, k):
    """x moved k places along the last axis (k > 0: to higher indices), -inf filled."""
    out = xp.full(x.shape, -np.inf, dtype=x.dtype)
    if k > 0:
        out[..., k:] = x[..., :-k]
    else:
        out[..., :k] = x[..., -k:]
    return out


def _ctc_forward_backward(xp, logp, ext, skip, seq_lengths, label_lengths):
    """Log-space alpha and beta (T, N, S) and the log likelihood (N,) of each sequence."""
    t_max, n, _ = logp.shape
    s_max = ext.shape[1]
    lpe = xp.take_along_axis(logp, xp.broadcast_to(ext[None], (t_max,) + ext.shape), axis=2)
    s_len = (2 * label_lengths + 1).reshape(n, 1)
    steps = xp.arange(s_max).reshape(1, s_max)
    in_seq = steps < s_len
    ninf = xp.asarray(-np.inf, dtype=logp.dtype)

    alpha = xp.full(lpe.shape, -np.inf, dtype=logp.dtype)
    alpha[0] = xp.where(in_seq & (steps < 2), lpe[0], ninf)
    for t in range(1, t_max):
        prev = alpha[t - 1]
        step = _logsumexp(xp, prev, _shift(xp, prev, 1), xp.where(skip, _shift(xp, prev, 2), ninf))
        alpha[t] = xp.where(in_seq, step + lpe[t], ninf)

    last = seq_lengths.reshape(n, 1) - 1           # the last frame of each sequence
    ends = in_seq & (steps >= s_len - 2)           # the two states a path may end in
    beta = xp.full(lpe.shape, -np.inf, dtype=logp.dtype)
    skip_next = xp.zeros(skip.shape, dtype=bool)
    skip_next[:, :-2] = skip[:, 2:]                # s -> s+2 allowed
    for t in range(t_max - 1, -1, -1):
        if t + 1 < t_max:
            nxt = beta[t + 1]
            step = _logsumexp(xp, nxt, _shift(xp, nxt, -1),
                              xp.where(skip_next, _shift(xp, nxt, -2), ninf)) + lpe[t]
        else:
            step = ninf
        start = xp.where(ends, lpe[t], ninf)
        beta[t] = xp.where(in_seq & (t < last), step, xp.where(t == last, start, ninf))

    final = xp.take_along_axis(alpha, xp.maximum(last, 0).reshape(1, n, 1), axis=0)[0]
    loglik = _logsumexp(xp, *[xp.take_along_axis(final, xp.maximum(s_len - k, 0), axis=1)[:, 0]
                              for k in (1, 2)])
    # a one-state sequence (empty label) ends only in state 0: drop the duplicate term
    loglik = xp.where(label_lengths == 0, final[:, 0], loglik)
    # no frames: probability 1 for an empty label, 0 otherwise
    loglik = xp.where(seq_lengths == 0, xp.where(label_lengths == 0, 0.0, -np.inf), loglik)
    return lpe, alpha, beta, loglik


def ctc_loss(xp, attrs, data, label, data_lengths=None, label_lengths=None):
    """(loss (N,), gradient with respect to ``data`` (T, N, C)) of CTC on activations."""
    t_max, n, num_classes = data.shape
    work = np.float64 if data.dtype == np.float64 else np.float32
    label = label.astype(np.int64)             # MXNet truncates float labels
    if data_lengths is not None:
        seq_lengths = data_lengths.astype(np.int64)
        if bool(xp.any((seq_lengths < 0) | (seq_lengths > t_max))):
            raise MXNetError(f'CTCLoss: data_lengths must be in [0, {t_max}] (the sequence '
                             f'length of data), got {seq_lengths.tolist()}')
    else:
        seq_lengths = xp.full((n,), t_max, dtype=np.int64)
    lab_lengths = _ctc_label_lengths(xp, attrs, label, label_lengths)
    ext, skip = _ctc_extended(xp, attrs, label, lab_lengths, num_classes)
    x = data.astype(work, copy=False)
    with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
        logp = softmax_forward(xp, x, 2, log=True)
        lpe, alpha, beta, loglik = _ctc_forward_backward(xp, logp, ext, skip, seq_lengths,
                                                         lab_lengths)
        # MXNet's convention: a label that no alignment can produce costs 0, with no gradient
        possible = xp.isfinite(loglik)
        safe = xp.where(possible, loglik, 0).reshape(1, n, 1)
        post = xp.exp(alpha + beta - lpe - safe)                       # (T, N, S)
    post = xp.where(xp.isfinite(post), post, 0)
    onehot = (ext[:, :, None] == xp.arange(num_classes).reshape(1, 1, num_classes)).astype(work)
    occupancy = xp.matmul(post.transpose(1, 0, 2), onehot).transpose(1, 0, 2)   # (T, N, C)
    frames = xp.arange(t_max).reshape(t_max, 1) < seq_lengths.reshape(1, n)
    keep = (frames & possible.reshape(1, n))[:, :, None]
    grad = xp.where(keep, xp.exp(logp) - occupancy, 0)
    loss = xp.where(possible, -loglik, 0)
    return loss.astype(data.dtype, copy=False), grad.astype(data.dtype, copy=False)


@register('CTCLoss', aliases=('_contrib_CTCLoss', '_contrib_ctc_loss', 'ctc_loss'))
class CTCLoss:
    """Connectionist Temporal Classification loss of unnormalised activations.

    data (T, N, C): activations (softmax is applied inside) of T frames, batch N, alphabet C
    including the blank; label (N, L): class indices, padded to L. With
    ``blank_label='first'`` the blank is 0, labels are 1..C-1 and 0 pads; with ``'last'`` the
    blank is C-1, labels are 0..C-2 and -1 pads. Without ``use_label_lengths`` a sequence ends
    at its first padding value; with it, ``label_lengths`` (N,) gives the lengths.
    ``use_data_lengths`` takes ``data_lengths`` (N,): frames past them are ignored. Output: the
    negative log likelihood (N,), 0 for a label no alignment can produce (MXNet's convention),
    and a hidden gradient (T, N, C). Labels outside the alphabet raise MXNetError (MXNet reads
    out of bounds). MXNet 1.9.1 takes float32 data only; float16 and float64 work here.
    """
    inputs = ('data', 'label', 'data_lengths', 'label_lengths')
    list_inputs = _ctc_inputs
    attrs = dict(use_data_lengths=Bool(False), use_label_lengths=Bool(False),
                 blank_label=Str('first', choices=('first', 'last')))
    num_outputs = 2
    num_visible_outputs = 1
    infer_shape = _ctc_shape
    infer_type = _ctc_type

    def output_names(attrs):
        # MXNet names the two outputs output0/output1 and lists the first
        return ['output0']

    def compute(xp, attrs, data, label, *lengths):
        data_lengths, label_lengths = _ctc_lengths(attrs, lengths)
        return ctc_loss(xp, attrs, data, label, data_lengths, label_lengths)

    def gradient(F, attrs, inputs, outputs, ograds):
        if ograds[1] is not None:
            raise NotSupportedError('CTCLoss: second-order gradients (through its gradient) '
                                    'are not implemented')
        g = ograds[0]
        grad = None if g is None else F.broadcast_mul(outputs[1], F.reshape(g, shape=(1, -1, 1)))
        return [grad] + [None] * (len(inputs) - 1)


# -------------------------------------------------------------------------------------------------
# softmax_cross_entropy, the regression outputs, MakeLoss
# -------------------------------------------------------------------------------------------------

@register('softmax_cross_entropy')
class softmax_cross_entropy:
    """``sum_i -log(softmax(data[i])[label[i]])``: data (N, C), label (N,) class indices
    (truncated); output (1,). An out-of-range label adds nothing (MXNet reads out of bounds)."""
    inputs = ('data', 'label')

    def compute(xp, attrs, data, label):
        top = data.max(axis=1, keepdims=True)
        lse = xp.log(xp.exp(data - top).sum(axis=1)) + top[:, 0]
        idx = _class_index(xp, label)
        valid = (idx >= 0) & (idx < data.shape[1])
        picked = xp.take_along_axis(data, xp.where(valid, idx, 0)[:, None], axis=1)[:, 0]
        loss = xp.where(valid, lse - picked, 0).sum()
        return loss.reshape(1).astype(data.dtype, copy=False)

    def infer_shape(attrs, data, label):
        if data is not None and len(data) != 2:
            raise ShapeError(f'softmax_cross_entropy takes 2-D data (N, C), got {data}')
        if label is not None and len(label) != 1:
            raise ShapeError(f'softmax_cross_entropy takes a 1-D label (N,), got {label}')
        if data is not None:
            n = merge_shape(data[:1], label, 'label (N,) and data (N, C)')
            data = n + tuple(data[1:])
            label = n
        return [data, label], [(1,)]

    def gradient(F, attrs, inputs, outputs, ograds):
        x, label = inputs
        onehot = F.one_hot(label, depth=x.shape[1], dtype=np.dtype(x.dtype).name)
        return [(F.softmax(x) - onehot) * ograds[0], None]


def _regression_shape(attrs, data, label):
    if data is None:
        return [data, label], [None]
    if label is None:
        label = (data[0],) if len(data) == 2 and data[1] == 1 else data
    else:
        if label[0] and data[0] and label[0] != data[0]:
            raise ShapeError(f'label {tuple(label)} and data {tuple(data)} differ in their '
                             'first axis')
        if known(label) and known(data) and _prod(label) != _prod(data):
            raise ShapeError(f'label {tuple(label)} and data {tuple(data)} differ in size')
        label = (label[0] or data[0],) + tuple(label[1:])
    return [data, label], [data]


def _regression_op(name, forward, backward, doc):
    def compute(xp, attrs, data, label):
        return forward(xp, attrs, data).astype(data.dtype, copy=False)

    def gradient(F, attrs, inputs, outputs, ograds):
        y, label = outputs[0], inputs[1]
        if label.shape != y.shape:
            label = F.reshape_like(label, y)
        per_row = _prod(inputs[1].shape[1:]) if inputs[1].ndim > 1 else 1
        return [backward(F, y - label) * (attrs.grad_scale / per_row), None]

    register_op(OpDef(name, inputs=('data', 'label'), attrs=dict(grad_scale=Float(1.0)),
                      compute=compute, infer_shape=_regression_shape, gradient=gradient,
                      backward_node=BackwardNode(('in1', 'out0')), doc=doc))


_REGRESSION_DOC = """{what}

data: any shape (N, ...); label: N rows of data's size per row ((N,) for data (N, 1)). The
gradient is ``{grad} * grad_scale / (label.size / N)``, the head gradient ignored (MXNet's
convention for loss layers).
"""
_regression_op('LinearRegressionOutput', lambda xp, attrs, x: x.copy(), lambda F, d: d,
               _REGRESSION_DOC.format(what='The identity, with the gradient of squared loss.',
                                      grad='(out - label)'))
_regression_op('LogisticRegressionOutput', _ACTIVATIONS['sigmoid'].compute, lambda F, d: d,
               _REGRESSION_DOC.format(what='sigmoid(data), with the gradient of logistic loss.',
                                      grad='(out - label)'))
_regression_op('MAERegressionOutput', lambda xp, attrs, x: x.copy(), lambda F, d: F.sign(d),
               _REGRESSION_DOC.format(what='The identity, with the gradient of absolute loss.',
                                      grad='sign(out - label)'))


@register('MakeLoss')
class MakeLoss:
    """Marks a loss: the identity forward; the gradient is ``grad_scale`` everywhere, divided
    by N (``normalization='batch'``) or by the count of elements > valid_thresh (at least 1,
    ``'valid'``), whatever the head gradient."""
    inputs = ('data',)
    attrs = dict(grad_scale=Float(1.0), valid_thresh=Float(0.0),
                 normalization=Str('null', choices=('batch', 'null', 'valid')))
    backward_node = BackwardNode((), output_names=('data',))     # (legacy) no head gradient

    def compute(xp, attrs, data):
        return data.copy()

    def gradient(F, attrs, inputs, outputs, ograds):
        x = inputs[0]
        ones = F.ones_like(x)
        if attrs.normalization == 'batch':
            return [ones * (attrs.grad_scale / x.shape[0])]
        if attrs.normalization == 'valid':
            count = F.sum(x > attrs.valid_thresh)
            return [ones * attrs.grad_scale / F._maximum_scalar(count, scalar=1)]
        return [ones * attrs.grad_scale]
