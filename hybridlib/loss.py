"""Gluon's losses (``gluon.loss``), as MXNet 1.9.1 defines them.

Every loss is a ``HybridBlock`` whose ``hybrid_forward`` calls registered operators only, so
it runs imperatively, hybridizes and differentiates. A loss takes a global scalar ``weight``
and, in ``forward``, an optional ``sample_weight`` broadcast against the element-wise loss
before the reduction; the result has one value per sample: the mean (or sum, where MXNet sums)
over every axis but ``batch_axis``.

The losses defined here are compiled from the start (``hybridize()`` in ``Loss.__init__``):
called on NDArrays, a training step then pays for one compiled graph instead of one
imperative call per operator, with the same numbers. One whose input shapes keep changing
(more than ``_AUTO_SHAPES`` of them) goes back to imperative; ``hybridize(...)`` called by the
user decides from then on, and a subclass with its own ``hybrid_forward`` starts imperative,
as in MXNet.

Deliberate differences from MXNet, where MXNet has an obvious bug (same values otherwise):

* ``L2Loss(weight=None)`` means weight 1 (MXNet fails computing ``None / 2``);
* ``PoissonNLLLoss(compute_full=True)`` gives targets of 0 a Stirling term of 0 (MXNet
  computes ``0 * log(0)`` and returns NaN for the whole batch);
* ``SigmoidBinaryCrossEntropyLoss`` and ``LogisticLoss`` differentiate correctly at logits
  of exactly 0 (MXNet's gradient there misses sigmoid(0) = 1/2: see ``_softplus``);
* ``PoissonNLLLoss(compute_full=True)`` trains (MXNet's in-place ``*=`` fails under
  ``autograd.record``);
* ``SDMLLoss`` hybridizes (MXNet reads ``x.shape`` of a Symbol and fails), works in float64
  (MXNet's labels are always float32) and applies its ``weight`` (MXNet ignores it);
* ``CosineEmbeddingLoss`` works on any context (MXNet builds its constants on the CPU).
"""
import math

from .base import numeric_types
from .block import HybridBlock, UsageError
from .ndarray import NDArray

__all__ = ['Loss', 'L2Loss', 'L1Loss', 'SigmoidBinaryCrossEntropyLoss', 'SigmoidBCELoss',
           'SoftmaxCrossEntropyLoss', 'SoftmaxCELoss', 'KLDivLoss', 'CTCLoss', 'HuberLoss',
           'HingeLoss', 'SquaredHingeLoss', 'LogisticLoss', 'TripletLoss', 'PoissonNLLLoss',
           'CosineEmbeddingLoss', 'SDMLLoss']

# docstring parts that most losses share
_DOC = dict(weighting="""
    weight : float or None
        Global scalar weight for the loss.
    batch_axis : int, default 0
        The axis that represents the mini-batch.""", pair_io="""    Inputs:
        - **pred**: prediction, any shape.
        - **label**: target with as many elements as pred (reshaped to pred's shape).
        - **sample_weight**: element-wise weights broadcastable to pred's shape, e.g. (N, 1)
          for pred (N, 10) to weigh each sample.

    Outputs:
        - **loss**: shape (batch_size,).""")


def _documented(cls):
    """Fills the shared parts (``%(weighting)s``, ``%(pair_io)s``) into a class docstring."""
    cls.__doc__ = cls.__doc__ % _DOC
    return cls


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """``loss * sample_weight * weight``; ``sample_weight`` broadcasts against ``loss``."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        loss = loss * _check_weight(weight)
    return loss


def _reshape_like(F, x, y):
    """``x`` reshaped to ``y``'s shape (MXNet's helper, which losses of other libraries use)."""
    return F.reshape_like(x, y)


def _check_weight(weight):
    if not isinstance(weight, numeric_types):
        raise UsageError(f'weight must be a number, got {weight!r}')
    return weight


# input shapes a built-in loss keeps compiled graphs for, unless hybridized by the user: past
# them it runs imperatively
_AUTO_SHAPES = 16


class Loss(HybridBlock):
    """Base class for losses.

    Parameters
    ----------
    weight : float or None
        Global scalar weight for the loss.
    batch_axis : int
        The axis that represents the mini-batch.
    """

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis
        self._auto_shapes = None
        if type(self).hybrid_forward.__module__ == __name__:
            # the losses of this module are pure graphs of operators: compiled from the start,
            # they give the imperative numbers at a fraction of the per-operator cost of a
            # training step (a subclass with its own hybrid_forward stays imperative)
            HybridBlock.hybridize(self)
            self._auto_shapes = set()

    def hybridize(self, *args, **kwargs):
        self._auto_shapes = None        # the user's choice from now on
        super().hybridize(*args, **kwargs)

    def forward(self, x, *args):
        seen = self._auto_shapes
        if seen is not None and self._active and isinstance(x, NDArray):
            key = tuple(getattr(a, 'shape', None) for a in (x,) + args)
            if key not in seen:
                seen.add(key)
                if len(seen) > _AUTO_SHAPES:    # shapes keep changing: each costs a new plan
                    self._auto_shapes = None
                    HybridBlock.hybridize(self, active=False)
        return super().forward(x, *args)

    def __repr__(self):
        return f'{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})'

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Override to compute the loss of ``x`` (and further inputs) with ``F``."""
        raise NotImplementedError(f'{type(self).__name__} must implement hybrid_forward')

    def _mean_per_sample(self, F, loss):
        """The mean over every axis but ``batch_axis``: shape (batch_size,)."""
        return F.mean(loss, axis=self._batch_axis, exclude=True)


@_documented
class L2Loss(Loss):
    r"""Half the mean squared error: ``L = 1/2 * mean_i (label_i - pred_i)^2`` per sample.

    Parameters
    ----------
    weight : float or None, default 1.
        Global scalar weight for the loss (None: 1).
    batch_axis : int, default 0
        The axis that represents the mini-batch.

%(pair_io)s
    """

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = F.reshape_like(label, pred)
        loss = F.square(label - pred)
        weight = 1. if self._weight is None else _check_weight(self._weight)
        loss = _apply_weighting(F, loss, weight / 2, sample_weight)
        return self._mean_per_sample(F, loss)


@_documented
class L1Loss(Loss):
    r"""Mean absolute error: ``L = mean_i |label_i - pred_i|`` per sample.

    Parameters
    ----------%(weighting)s

%(pair_io)s
    """

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = F.reshape_like(label, pred)
        loss = _apply_weighting(F, F.abs(label - pred), self._weight, sample_weight)
        return self._mean_per_sample(F, loss)


def _softplus(F, x):
    """``log(1 + exp(x))``, stable for large ``|x|``.

    MXNet writes it ``relu(x) + log(1 + exp(-|x|))``: the same values, but at x = 0 the
    derivatives of relu and |x| (both taken as 0) make its gradient 0 instead of 1/2, so
    MXNet's logistic losses get a wrong gradient for logits that are exactly 0 (a
    zero-initialised output layer). ``softrelu``'s gradient is sigmoid(x) everywhere.
    """
    return F.Activation(x, act_type='softrelu')


@_documented
class SigmoidBinaryCrossEntropyLoss(Loss):
    r"""Binary cross-entropy (alias ``SigmoidBCELoss``).

    With ``from_sigmoid=False`` (default) ``pred`` are logits and
    ``L = -mean_i [pos_weight * label_i * log(sigmoid(pred_i))
    + (1 - label_i) * log(1 - sigmoid(pred_i))]``, computed stably; with ``from_sigmoid=True``
    ``pred`` are probabilities (1e-12 is added inside the logarithms).

    Parameters
    ----------
    from_sigmoid : bool, default False
        Whether ``pred`` is already the output of a sigmoid.%(weighting)s

    Inputs:
        - **pred**: prediction, any shape.
        - **label**: targets in [0, 1] with as many elements as pred.
        - **sample_weight**: element-wise weights broadcastable to pred's shape.
        - **pos_weight**: weights of the positive term, broadcastable to pred's shape,
          e.g. (1, C) for pred (N, C).

    Outputs:
        - **loss**: shape (batch_size,).
    """

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = F.reshape_like(label, pred)
        if not self._from_sigmoid:
            if pos_weight is None:
                # log(1 + exp(x)) - x * z
                loss = _softplus(F, pred) - pred * label
            else:
                # x - x * z + (1 + z * (pos_weight - 1)) * log(1 + exp(-x))
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * _softplus(F, -pred)
        else:
            eps = 1e-12
            positive = F.log(pred + eps) * label
            if pos_weight is not None:
                positive = F.broadcast_mul(positive, pos_weight)
            loss = -(positive + F.log(1. - pred + eps) * (1. - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_per_sample(F, loss)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


@_documented
class SoftmaxCrossEntropyLoss(Loss):
    r"""Softmax cross-entropy (alias ``SoftmaxCELoss``): ``L = -sum_j label_j * log p_j`` with
    ``p = softmax(pred)`` along ``axis``, averaged over the other non-batch axes.

    Parameters
    ----------
    axis : int, default -1
        The class axis of ``pred``.
    sparse_label : bool, default True
        Whether ``label`` holds class indices (else probability distributions).
    from_logits : bool, default False
        Whether ``pred`` already holds log probabilities (from ``log_softmax``).%(weighting)s

    Inputs:
        - **pred**: prediction; ``batch_axis`` ranges over the batch, ``axis`` over classes.
        - **label**: class indices of pred's shape without ``axis`` (e.g. pred (1, 2, 3, 4)
          with axis=2: label (1, 2, 4)) if ``sparse_label``, else a distribution of pred's
          shape.
        - **sample_weight**: weights broadcastable to pred's shape with ``axis`` of size 1.

    Outputs:
        - **loss**: shape (batch_size,).
    """

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = F.reshape_like(label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_per_sample(F, loss)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


@_documented
class KLDivLoss(Loss):
    r"""Kullback-Leibler divergence: ``L = sum_i label_i * (log(label_i) - pred_i)`` over the
    non-batch axes, with ``pred`` log probabilities (``from_logits=True``, default) or
    unnormalised scores turned into them by ``log_softmax`` along ``axis``. 1e-12 is added
    inside ``log(label)``.

    Parameters
    ----------
    from_logits : bool, default True
        Whether ``pred`` already holds log probabilities.
    axis : int, default -1
        The axis of the softmax (``from_logits=False`` only).%(weighting)s

    Inputs:
        - **pred**: prediction, any shape.
        - **label**: target distribution of pred's shape.
        - **sample_weight**: element-wise weights broadcastable to pred's shape.

    Outputs:
        - **loss**: shape (batch_size,): a sum over the other axes, as in MXNet 1.9.1.
    """

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    r"""Connectionist Temporal Classification loss (Graves et al., 2006).

    The blank is the last class: ``pred``'s alphabet size is the number of labels plus one,
    labels are 0-based and padded with -1 (vocabulary ``[a, b, c]``: a=0, b=1, c=2, blank=3;
    'ba', 'cbb' and 'abac' are ``[[1, 0, -1, -1], [2, 1, 1, -1], [0, 1, 0, 2]]``).

    Parameters
    ----------
    layout : str, default 'NTC'
        Layout of ``pred``: 'NTC' or 'TNC' (batch N, sequence length T, alphabet size C).
    label_layout : str, default 'NT'
        Layout of ``label``: 'NT' or 'TN'. Its N is the batch axis.
    weight : float or None
        Global scalar weight for the loss.

    Inputs:
        - **pred**: unnormalised scores (before softmax) in ``layout``.
        - **label**: class indices in ``label_layout``, padded with -1.
        - **pred_lengths**: optional (batch_size,): the number of valid frames of each
          sequence.
        - **label_lengths**: optional (batch_size,): the length of each label sequence
          (padding is then not looked for).
        - **sample_weight**: optional weights broadcastable to (batch_size,).

    Outputs:
        - **loss**: shape (batch_size,); 0 for a label that no alignment can produce.
    """

    def __init__(self, layout='NTC', label_layout='NT', weight=None, **kwargs):
        if layout not in ('NTC', 'TNC'):
            raise UsageError(f"Only 'NTC' and 'TNC' layouts for pred are supported. "
                             f"Got: {layout}")
        if label_layout not in ('NT', 'TN'):
            raise UsageError(f"Only 'NT' and 'TN' layouts for label are supported. "
                             f"Got: {label_layout}")
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find('N'), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,
                       sample_weight=None):
        if self._layout == 'NTC':
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        loss = F.CTCLoss(pred, label, pred_lengths, label_lengths,
                         use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None,
                         blank_label='last')
        return _apply_weighting(F, loss, self._weight, sample_weight)


@_documented
class HuberLoss(Loss):
    r"""Smoothed L1 loss: per element ``0.5 / rho * d^2`` where ``d = |label - pred| <= rho``,
    else ``d - 0.5 * rho``; averaged per sample.

    Parameters
    ----------
    rho : float, default 1
        The threshold between the quadratic and the linear part.%(weighting)s

%(pair_io)s
    """

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = F.reshape_like(label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho,
                       (0.5 / self._rho) * F.square(loss))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_per_sample(F, loss)


class _Hinge(Loss):
    """HingeLoss and SquaredHingeLoss: max(0, margin - pred * label), squared or not."""
    _squared = False

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = F.reshape_like(label, pred)
        loss = F.relu(self._margin - pred * label)
        if self._squared:
            loss = F.square(loss)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_per_sample(F, loss)


@_documented
class HingeLoss(_Hinge):
    r"""Hinge loss of SVMs: ``L = mean_i max(0, margin - pred_i * label_i)``, labels -1 or 1.

    Parameters
    ----------
    margin : float, default 1
        The margin.%(weighting)s

%(pair_io)s
    """


@_documented
class SquaredHingeLoss(_Hinge):
    r"""Soft-margin loss of SVMs: ``L = mean_i max(0, margin - pred_i * label_i)^2``, labels
    -1 or 1.

    Parameters
    ----------
    margin : float, default 1
        The margin.%(weighting)s

%(pair_io)s
    """
    _squared = True


@_documented
class LogisticLoss(Loss):
    r"""Logistic loss: ``L = mean_i log(1 + exp(-pred_i * label_i))`` with labels -1 or 1
    (``label_format='signed'``) or 0 or 1 (``'binary'``), computed stably.

    Parameters
    ----------%(weighting)s
    label_format : str, default 'signed'
        'signed' (labels -1/1) or 'binary' (labels 0/1).

%(pair_io)s
    """

    def __init__(self, weight=None, batch_axis=0, label_format='signed', **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if self._label_format not in ['signed', 'binary']:
            raise ValueError('label_format can only be signed or binary, recieved %s.'
                             % label_format)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = F.reshape_like(label, pred)
        if self._label_format == 'signed':
            label = (label + 1.0) / 2.0        # to 0 or 1
        loss = _softplus(F, pred) - pred * label
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean_per_sample(F, loss)


@_documented
class TripletLoss(Loss):
    r"""Triplet loss: ``L = max(sum_i (positive_i - pred_i)^2 - (negative_i - pred_i)^2
    + margin, 0)`` per sample, the sum over the non-batch axes.

    Parameters
    ----------
    margin : float, default 1
        The margin of separation between the positive and the negative pair.%(weighting)s

    Inputs:
        - **pred**: prediction, any shape.
        - **positive**: positive example, as many elements as pred.
        - **negative**: negative example, as many elements as pred.

    Outputs:
        - **loss**: shape (batch_size,).
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative):
        positive = F.reshape_like(positive, pred)
        negative = F.reshape_like(negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, None)


@_documented
class PoissonNLLLoss(Loss):
    r"""Negative log likelihood of a Poisson target, averaged over all elements.

    ``L = mean(exp(pred) - target * pred)`` with ``from_logits=True`` (pred is the log rate),
    else ``mean(pred - target * log(pred + epsilon))``. ``compute_full`` adds Stirling's
    approximation of ``log(target!)``, ``target * log(target) - target +
    0.5 * log(2 * pi * target)``, for targets above 1.

    Parameters
    ----------%(weighting)s
    from_logits : bool, default True
        Whether ``pred`` is the log of the rate.
    compute_full : bool, default False
        Whether to add the Stirling term.

    Inputs:
        - **pred**: predicted rate (or its log), any shape.
        - **target**: counts, as many elements as pred.
        - **sample_weight**: element-wise weights broadcastable to pred's shape.
        - **epsilon**: float, default 1e-08: keeps ``log`` finite (``from_logits=False``).

    Outputs:
        - **loss**: shape (1,): the mean over every element, as in MXNet 1.9.1 (not one value
          per sample).
    """

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = F.reshape_like(target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            # MXNet evaluates the term everywhere and masks it, so a target of 0 gives
            # 0 * log(0) = NaN; evaluating it at 1 where it is masked keeps values and
            # gradients finite
            above = target > 1
            safe = F.where(above, target, F.ones_like(target))
            stirling = safe * F.log(safe) - safe + 0.5 * F.log(2 * safe * math.pi)
            loss = loss + stirling * above
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


@_documented
class CosineEmbeddingLoss(Loss):
    r"""Cosine embedding loss: per sample ``1 - cos(input1, input2)`` for label 1 and
    ``max(0, cos(input1, input2) - margin)`` for label -1, the cosine taken over the last axis.

    Parameters
    ----------%(weighting)s
    margin : float, default 0
        The margin for dissimilar pairs.

    Inputs:
        - **input1**: (batch_size, dim), reshaped to input2's shape.
        - **input2**: (batch_size, dim).
        - **label**: (batch_size,) of 1 or -1.
        - **sample_weight**: weights broadcastable to (batch_size, 1).

    Outputs:
        - **loss**: shape (batch_size, 1), as MXNet 1.9.1 returns it.
    """

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = F.reshape_like(input1, input2)
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        similar = 1 - cos_sim
        dissimilar = F.relu(F.broadcast_mul(label == -1, cos_sim - self._margin))
        loss = F.broadcast_mul(label == 1, similar) + dissimilar
        return _apply_weighting(F, loss, self._weight, sample_weight)

    def _cosine_similarity(self, F, x, y, axis=-1):
        """(batch, 1) cosine similarity along ``axis``; norms below 1e-12 count as 1e-12."""
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        x_dot_y = F.sum(x * y, axis=axis).reshape((-1, 1))
        return x_dot_y / F.maximum(x_norm * y_norm, 1e-12)


class SDMLLoss(Loss):
    r"""Batch-wise Smoothed Deep Metric Learning loss (Bonadiman et al., 2019,
    arXiv:1905.12786).

    ``x1[i]`` and ``x2[i]`` form a positive pair and every other row of the batch serves as a
    negative: the loss is the KL divergence between ``log_softmax(-distances, axis=1)`` of the
    squared Euclidean distances between rows and the smoothed identity (``1 -
    smoothing_parameter`` on the diagonal, ``smoothing_parameter / (batch_size - 1)``
    elsewhere).

    Parameters
    ----------
    smoothing_parameter : float, default 0.3
        Probability mass spread over the negatives. Must be < 1.
    weight : float or None, default 1.
        Global scalar weight for the loss (MXNet 1.9.1 ignores it; see the module docstring).
    batch_axis : int, default 0
        The axis that represents the mini-batch.

    Inputs:
        - **x1**: (batch_size, dim).
        - **x2**: (batch_size, dim), aligned with x1.

    Outputs:
        - **loss**: shape (batch_size,).
    """

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _compute_distances(self, x1, x2):
        """(batch, batch) squared Euclidean distances between the rows of x1 and of x2."""
        if x1.shape != x2.shape:
            raise UsageError(f'SDMLLoss: x1 and x2 must have the same shape, got {x1.shape} '
                             f'and {x2.shape}')
        batch_size, dim = x1.shape
        x1_ = x1.expand_dims(1).broadcast_to((batch_size, batch_size, dim))
        x2_ = x2.expand_dims(0).broadcast_to((batch_size, batch_size, dim))
        return (x1_ - x2_).square().sum(axis=2)

    def _compute_labels(self, F, batch_size, dtype):
        """The smoothed (batch, batch) identity (on the current context: the inputs')."""
        gold = F.eye(batch_size, dtype=dtype)
        return gold * (1 - self.smoothing_parameter) + \
            (1 - gold) * self.smoothing_parameter / (batch_size - 1)

    def _loss(self, F, x1, x2):
        distances = self._compute_distances(x1, x2)
        labels = self._compute_labels(F, x1.shape[0], x1.dtype)
        log_probabilities = F.log_softmax(-distances, axis=1)
        return self.kl_loss(log_probabilities, labels)

    def hybrid_forward(self, F, x1, x2):
        return _apply_weighting(F, self._loss(F, x1, x2), self._weight)
