"""``BatchProcessor``: what the Estimator does with one batch, in training and validation."""
from ... import autograd
from ...utils import split_and_load

__all__ = ['BatchProcessor']


class BatchProcessor:
    """The per-batch steps of an Estimator: ``fit_batch`` (forward and backward of a training
    batch) and ``evaluate_batch`` (forward of a validation batch). Subclass it and pass an
    instance as ``Estimator(batch_processor=...)`` to change them (several inputs or labels,
    another loss computation...).

    A batch is ``(data, label)``; each is split along ``batch_axis`` over the estimator's
    contexts (``gluon.utils.split_and_load``).
    """

    def __init__(self):
        pass

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Predict, compute the loss and back-propagate a training batch with
        ``estimator.net`` and ``estimator.loss`` (the update is ``GradientUpdateHandler``'s).

        Parameters
        ----------
        estimator : Estimator
        train_batch : tuple
            ``(data, label)`` from the training DataLoader.
        batch_axis : int, default 0
            The axis split over the contexts.

        Returns
        -------
        data, label, pred, loss : list of NDArray
            One entry per context.
        """
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for l in loss:
            l.backward()
        return data, label, pred, loss

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Predict and compute the loss of a validation batch with ``estimator.val_net`` and
        ``estimator.val_loss``: ``fit_batch`` without recording and back-propagation, with
        its parameters (``val_batch`` from the validation DataLoader) and results."""
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss
