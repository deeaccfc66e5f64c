"""``gluon.contrib.nn``: Concurrent, HybridConcurrent, Identity, SparseEmbedding,
SyncBatchNorm, PixelShuffle1D, PixelShuffle2D, PixelShuffle3D (MXNet 1.9.1's names, arguments,
parameters and reprs).

Two layers are single-device versions of MXNet's, with the same surface:

* ``SparseEmbedding`` keeps its weight and gradient dense (hybridlib has no sparse storage);
* ``SyncBatchNorm`` is BatchNorm over the channel axis 1 with statistics of the batch on its
  own device, which is what MXNet computes on one device; across several devices the
  statistics are not synchronised (a warning says so).
"""
import warnings

from .. import context
from .. import ndarray as nd
from ..block import Block, HybridBlock, UsageError
from ..nn import BatchNorm, HybridSequential, Sequential
from ..nn.basic_layers import _warn_dense_gradient

__all__ = ['Concurrent', 'HybridConcurrent', 'Identity', 'SparseEmbedding', 'SyncBatchNorm',
           'PixelShuffle1D', 'PixelShuffle2D', 'PixelShuffle3D']


class _ConcurrentMixin:
    """``axis`` and slicing shared by Concurrent and HybridConcurrent."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def __getitem__(self, key):
        # MXNet's slice of a Concurrent forgets ``axis`` (it concatenates along -1): keep it
        part = super().__getitem__(key)
        if isinstance(part, type(self)):
            part.axis = self.axis
        return part


class Concurrent(_ConcurrentMixin, Sequential):
    """Feeds its input to every child and concatenates their outputs along ``axis``.

    Example::

        net = Concurrent()
        with net.name_scope():
            net.add(nn.Dense(10, activation='relu'), nn.Dense(20), Identity())

    Parameters
    ----------
    axis : int, default -1
        The axis along which the children's outputs are concatenated.
    """

    def forward(self, x):
        out = [block(x) for block in self._children.values()]
        return nd.concat(*out, dim=self.axis)


class HybridConcurrent(_ConcurrentMixin, HybridSequential):
    """Feeds its input to every child and concatenates their outputs along ``axis``; can be
    hybridized as a whole.

    Parameters
    ----------
    axis : int, default -1
        The axis along which the children's outputs are concatenated.
    """

    def hybrid_forward(self, F, x):
        out = [block(x) for block in self._children.values()]
        return F.concat(*out, dim=self.axis)


class Identity(HybridBlock):
    """Passes its input through (a residual branch in a HybridConcurrent)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        return x


class SparseEmbedding(Block):
    """Embedding meant for very large vocabularies: row ``i`` of ``weight`` for each id.

    In MXNet its weight and gradient are 'row_sparse' arrays. hybridlib has no sparse
    storage: both are dense (the same values) and optimizers update every row, as MXNet with
    ``lazy_update=False``; a warning says so at construction. Arguments and shapes: as
    ``nn.Embedding`` (without ``sparse_grad``).
    """

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim, 'dtype': dtype,
                        'sparse_grad': True}
        _warn_dense_gradient(f'SparseEmbedding {self.name}')
        self.weight = self.params.get('weight', shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype)

    def forward(self, x):
        return nd.Embedding(x, self.weight.data(x.context), name='fwd', **self._kwargs)

    def __repr__(self):
        kw = self._kwargs
        return f"{type(self).__name__}({kw['input_dim']} -> {kw['output_dim']}, {kw['dtype']})"


class SyncBatchNorm(BatchNorm):
    """Batch normalisation over axis 1 whose batch statistics MXNet gathers from all devices.

    hybridlib computes the statistics of the batch on the block's own device: the same as
    MXNet on one device; the graph exports MXNet's ``_contrib_SyncBatchNorm`` node. With
    ``num_devices`` > 1 each device normalises with its own batch's statistics; a warning says
    so.

    Parameters
    ----------
    in_channels : int, default 0
        Number of channels; 0 infers it on the first call.
    num_devices : int, optional
        Shown as ``ndev``; default: the number of GPUs (at least 1), with MXNet's warning.
    momentum, epsilon, center, scale, use_global_stats, beta_initializer, gamma_initializer,
    running_mean_initializer, running_variance_initializer : as ``nn.BatchNorm``

    Shapes: ``(N, C, ...)`` -> the same shape.
    """

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer='zeros',
                 gamma_initializer='ones', running_mean_initializer='zeros',
                 running_variance_initializer='ones', **kwargs):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                         use_global_stats=use_global_stats, beta_initializer=beta_initializer,
                         gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)
        if num_devices is None:
            num_devices = self._get_num_devices()
        if num_devices > 1:
            warnings.warn(f'SyncBatchNorm {self.name}: hybridlib does not synchronise batch '
                          'statistics across devices; each device normalises with the '
                          'statistics of its own part of the batch.', stacklevel=2)
        self._kwargs = {'eps': epsilon, 'momentum': momentum, 'fix_gamma': not scale,
                        'use_global_stats': use_global_stats, 'ndev': num_devices,
                        'key': self.prefix}

    def _get_num_devices(self):
        warnings.warn('Caution using SyncBatchNorm: if not using all the GPUs, please mannually '
                      'set num_devices', UserWarning, stacklevel=3)
        return max(context.num_gpus(), 1)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var, name='fwd',
                                       **self._kwargs)


def _factors(factor, n):
    """``factor`` (an int or n ints) as a tuple of n ints."""
    try:
        return (int(factor),) * n
    except TypeError:
        factors = tuple(int(f) for f in factor)
        if len(factors) != n:
            raise UsageError(f'wrong length {len(factors)}') from None
        return factors


class PixelShuffle1D(HybridBlock):
    """Moves groups of ``factor`` channels into the width: ``(N, f*C, W)`` -> ``(N, C, W*f)``.

    Parameters
    ----------
    factor : int
    """

    def __init__(self, factor):
        super().__init__()
        self._factor = int(factor)

    def hybrid_forward(self, F, x):
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))     # (N, C, f, W)
        x = F.transpose(x, (0, 1, 3, 2))        # (N, C, W, f)
        return F.reshape(x, (0, 0, -3))         # (N, C, W*f)

    def __repr__(self):
        return f'{type(self).__name__}({self._factor})'


class PixelShuffle2D(HybridBlock):
    """Moves blocks of ``f1*f2`` channels into the height and width (sub-pixel convolution,
    Shi et al., 2016): ``(N, f1*f2*C, H, W)`` -> ``(N, C, H*f1, W*f2)``.

    Parameters
    ----------
    factor : int or 2 ints
        ``(f1, f2)``, the factors of H and W.
    """

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 2)

    def hybrid_forward(self, F, x):
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))    # (N, C, f1*f2, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))      # (N, C, f1, f2, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))          # (N, C, H, f1, W, f2)
        return F.reshape(x, (0, 0, -3, -3))             # (N, C, H*f1, W*f2)

    def __repr__(self):
        return f'{type(self).__name__}({self._factors})'


class PixelShuffle3D(HybridBlock):
    """Moves blocks of ``f1*f2*f3`` channels into depth, height and width:
    ``(N, f1*f2*f3*C, D, H, W)`` -> ``(N, C, D*f1, H*f2, W*f3)``.

    Parameters
    ----------
    factor : int or 3 ints
        ``(f1, f2, f3)``, the factors of D, H and W.
    """

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 3)

    def hybrid_forward(self, F, x):
        # MXNet's sequence of operators (it avoids an 8-axis transpose); kept so that the
        # exported graph is the same
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))  # (N, C, f1*f2*f3, D, H, W)
        x = F.swapaxes(x, 2, 3)                               # (N, C, D, f1*f2*f3, H, W)
        x = F.reshape(x, (0, 0, 0, -4, f1, f2 * f3, 0, 0))    # (N, C, D, f1, f2*f3, H, W)
        x = F.reshape(x, (0, 0, -3, 0, 0, 0))                 # (N, C, D*f1, f2*f3, H, W)
        x = F.swapaxes(x, 3, 4)                               # (N, C, D*f1, H, f2*f3, W)
        x = F.reshape(x, (0, 0, 0, 0, -4, f2, f3, 0))         # (N, C, D*f1, H, f2, f3, W)
        x = F.reshape(x, (0, 0, 0, -3, 0, 0))                 # (N, C, D*f1, H*f2, f3, W)
        x = F.swapaxes(x, 4, 5)                               # (N, C, D*f1, H*f2, W, f3)
        return F.reshape(x, (0, 0, 0, 0, -3))                 # (N, C, D*f1, H*f2, W*f3)

    def __repr__(self):
        return f'{type(self).__name__}({self._factors})'
