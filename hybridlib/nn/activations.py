"""Activation layers: Activation (``relu``, ``sigmoid``, ``tanh``, ...), and those with
parameters or options: LeakyReLU, PReLU, ELU, SELU, GELU, Swish.

Activation is one ``Activation`` operator; Swish is ``x * sigmoid(beta * x)`` composed of
operators, as in MXNet; the others are one ``LeakyReLU`` operator with MXNet 1.9.1's
``act_type``. Graph node names follow MXNet's
exports (ELU's node is unnamed: ``<prefix>leakyrelu0``; the others' are ``<prefix>fwd``).
"""
from .. import initializer
from ..block import HybridBlock, UsageError

__all__ = ['Activation', 'LeakyReLU', 'PReLU', 'ELU', 'SELU', 'Swish', 'GELU']


class Activation(HybridBlock):
    """An activation function: ``'relu'``, ``'sigmoid'``, ``'tanh'``, ``'softrelu'`` or
    ``'softsign'`` (any shape)."""

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name='fwd')

    def __repr__(self):
        return f'{type(self).__name__}({self._act_type})'


class LeakyReLU(HybridBlock):
    """Leaky ReLU: ``x`` for ``x >= 0``, ``alpha * x`` below.

    Parameters
    ----------
    alpha : float
        Slope of the negative half axis (>= 0).

    Shapes: any -> the same shape.
    """

    def __init__(self, alpha, **kwargs):
        if not alpha >= 0:
            raise UsageError('Slope coefficient for LeakyReLU must be no less than 0.')
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='leaky', slope=self._alpha, name='fwd')

    def __repr__(self):
        return f'{type(self).__name__}({self._alpha})'


class PReLU(HybridBlock):
    """Parametric ReLU: ``x`` for ``x >= 0``, ``alpha * x`` below, with ``alpha`` learned.

    Parameters
    ----------
    alpha_initializer : Initializer or str, default Constant(0.25)
    in_channels : int, default 1
        Number of slopes: 1 (shared) or the size of the input's axis 1 (one per channel).
        Not inferred: as in MXNet, the shape is fixed at construction.

    Shapes: any (with ``in_channels`` > 1: ``(N, in_channels, ...)``) -> the same shape.
    """

    def __init__(self, alpha_initializer=initializer.Constant(0.25), in_channels=1, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get('alpha', shape=(in_channels,), init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, gamma=alpha, act_type='prelu', name='fwd')


class ELU(HybridBlock):
    """Exponential linear unit (Clevert et al., 2016): ``x`` for ``x > 0``,
    ``alpha * (exp(x) - 1)`` otherwise.

    Parameters
    ----------
    alpha : float, default 1.0

    Shapes: any -> the same shape.
    """

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='elu', slope=self._alpha)


class SELU(HybridBlock):
    """Scaled exponential linear unit (Klambauer et al., 2017):
    ``lambda * (x if x > 0 else alpha * (exp(x) - 1))`` with the paper's constants.

    Shapes: any -> the same shape.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='selu', name='fwd')


class GELU(HybridBlock):
    """Gaussian error linear unit (Hendrycks et al., 2016): ``x * Phi(x)``, ``Phi`` the
    standard normal distribution function (the exact erf form, as MXNet 1.9.1).

    Shapes: any -> the same shape.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='gelu', name='fwd')


class Swish(HybridBlock):
    """Swish (Ramachandran et al., 2017): ``x * sigmoid(beta * x)``.

    Parameters
    ----------
    beta : float, default 1.0

    Shapes: any -> the same shape.
    """

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x, name='fwd')
