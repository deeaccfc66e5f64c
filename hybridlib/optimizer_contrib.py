"""``mx.optimizer.contrib``: MXNet 1.9.1's contributed optimizers (``GroupAdaGrad``).

``hybridlib.optimizer`` serves this module as its ``contrib`` attribute (and as
``hybridlib.optimizer.contrib``); its optimizers are registered with ``mx.optimizer.create``
like the others.
"""
from . import ndarray as nd
from .optimizer import Optimizer, register

__all__ = ['GroupAdaGrad']


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning rate per row of a 2-d weight (Duchi et al.), through the fused
    ``contrib.group_adagrad_update``::

        g = clip(grad * rescale_grad);  history += mean(g^2, axis=1, keepdims=True)
        weight -= lr * g / sqrt(history + eps)

    The state is the (rows, 1) float32 history. Weight decay is not supported.

    Parameters
    ----------
    eps : float, default 1e-5
        Added to the history under the square root.
    """

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        assert len(weight.shape) == 2
        return nd.zeros((weight.shape[0], 1), weight.context)

    def update(self, index, weight, grad, state):
        lr, wd = self._count_and_rates(index)
        assert wd == 0, 'Weight decay is not supported for GroupAdaGrad'
        # MXNet's dense path clips whenever clip_gradient is not None (0 included)
        clip = -1.0 if self.clip_gradient is None else self.clip_gradient
        nd.contrib.group_adagrad_update(weight, grad, state, out=weight, lr=lr,
                                        epsilon=self.float_stable_eps,
                                        rescale_grad=self.rescale_grad, clip_gradient=clip)
