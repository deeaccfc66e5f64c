"""Containers and basic layers: Sequential, HybridSequential, Dense, Dropout, BatchNorm,
BatchNormReLU, Embedding, InstanceNorm, LayerNorm, GroupNorm, Flatten, Lambda, HybridLambda (and
``Activation``, from activations.py, as MXNet exports it from here too).

Each layer is thin: its ``hybrid_forward`` calls one registered operator, named ``fwd`` so the
graph node is ``<prefix>fwd`` as in MXNet's exports (LayerNorm and GroupNorm leave their node
unnamed, as MXNet does: ``<prefix>layernorm0``). Parameter names, shapes (0 where
inferred on the first call), defaults and reprs follow Gluon 1.9.1.
"""
import warnings

import numpy as np

from .. import ndarray, symbol
from ..block import Block, HybridBlock, UsageError
from ..block_scope import _indent
from .activations import Activation  # noqa: F401  (public here too, as in MXNet)

__all__ = ['Sequential', 'HybridSequential', 'Dense', 'Dropout', 'Embedding', 'BatchNorm',
           'BatchNormReLU', 'InstanceNorm', 'LayerNorm', 'GroupNorm', 'Activation', 'Flatten',
           'Lambda', 'HybridLambda']


class _SequentialMixin:
    """``add``, indexing, ``len`` and repr shared by Sequential and HybridSequential."""
    _summary_row = False     # summary() lists the layers inside, not the container

    def add(self, *blocks):
        """Append blocks, in order."""
        for block in blocks:
            self.register_child(block)

    def __repr__(self):
        lines = [f'  ({key}): {_indent(repr(block), 2)}' for key, block in self._children.items()]
        return f'{type(self).__name__}(\n' + '\n'.join(lines) + '\n)'

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._children)


class Sequential(_SequentialMixin, Block):
    """Stacks Blocks sequentially.

    Example::

        net = nn.Sequential()
        with net.name_scope():
            net.add(nn.Dense(10, activation='relu'), nn.Dense(20))
    """

    def forward(self, x):
        for block in self._children.values():
            x = block(x)
        return x

    def hybridize(self, active=True, **kwargs):
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          'HybridBlocks. Consider using HybridSequential for the best '
                          'performance.', stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_SequentialMixin, HybridBlock):
    """Stacks HybridBlocks sequentially; can be hybridized as a whole.

    Each child gets the previous child's output as its one argument (a tuple stays one
    argument, as in MXNet 1.9.1).
    """

    def hybrid_forward(self, F, x):
        for block in self._children.values():
            x = block(x)
        return x


class Dense(HybridBlock):
    """A fully connected layer: ``activation(dot(x, weight.T) + bias)``.

    Parameters
    ----------
    units : int
        Output size.
    activation : str, optional
        An ``Activation`` applied to the output (``'relu'``...).
    use_bias : bool, default True
    flatten : bool, default True
        Flatten all but the first input axis; otherwise apply to the last axis only.
    dtype : str, default 'float32'
    weight_initializer, bias_initializer : Initializer or str
    in_units : int, default 0
        Input size; 0 infers it on the first call.

    Shapes: ``(N, in_units)`` -> ``(N, units)``; with ``flatten=False``, ``(x1, ..., xn,
    in_units)`` -> ``(x1, ..., xn, units)``.
    """

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype='float32',
                 weight_initializer=None, bias_initializer='zeros', in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get('weight', shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + '_') if activation else None

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name='fwd')
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self):
        shape = self.weight.shape
        return (f'{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}, '
                f'{self.act if self.act else "linear"})')


class Dropout(HybridBlock):
    """Zeroes a fraction ``rate`` of the values in training mode (scaling the rest by
    ``1/(1-rate)``); the identity in predict mode. ``axes``: drop along these axes together."""

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name='fwd', cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return f'{type(self).__name__}(p = {self._rate}, axes={self._axes})'


class BatchNorm(HybridBlock):
    """Batch normalisation along ``axis`` (the channel axis).

    In training mode the batch statistics normalise and the running statistics move towards
    them with ``momentum``; in predict mode the running statistics normalise.

    Parameters
    ----------
    axis : int, default 1
    momentum : float, default 0.9
    epsilon : float, default 1e-5
    center : bool, default True
        Learn ``beta``.
    scale : bool, default True
        Learn ``gamma`` (False fixes it to 1).
    use_global_stats : bool, default False
        Always normalise with the running statistics.
    in_channels : int, default 0
        Number of channels; 0 infers it on the first call.
    """

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer='zeros', gamma_initializer='ones',
                 running_mean_initializer='zeros', running_variance_initializer='ones',
                 in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'axis': axis, 'eps': epsilon, 'momentum': momentum,
                        'fix_gamma': not scale, 'use_global_stats': use_global_stats}
        self._axis = axis
        if in_channels != 0:
            self.in_channels = in_channels
        self.gamma = self.params.get('gamma', grad_req='write' if scale else 'null',
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True, differentiable=scale)
        self.beta = self.params.get('beta', grad_req='write' if center else 'null',
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True, differentiable=center)
        self.running_mean = self.params.get('running_mean', grad_req='null',
                                            shape=(in_channels,),
                                            init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get('running_var', grad_req='null',
                                           shape=(in_channels,),
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def cast(self, dtype):
        # float16 networks keep float32 statistics, as MXNet's BatchNorm does
        if np.dtype(dtype).name == 'float16':
            dtype = 'float32'
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name='fwd',
                           **self._kwargs)

    def __repr__(self):
        in_channels = self.gamma.shape[0]
        content = ', '.join(f'{k}={v!r}' for k, v in self._kwargs.items())
        return (f'{type(self).__name__}({content}, '
                f'in_channels={in_channels if in_channels else None})')


class BatchNormReLU(BatchNorm):
    """BatchNorm followed by ReLU, as one fused operator (``contrib.BatchNormWithReLU``).

    Takes BatchNorm's arguments, with their defaults, and has its parameters (``gamma``,
    ``beta``, ``running_mean``, ``running_var``); the output is ``max(BatchNorm(x), 0)``, of
    the input's shape.
    """

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.BatchNormWithReLU(x, gamma, beta, running_mean, running_var,
                                           name='fwd', **self._kwargs)


def _warn_dense_gradient(name):
    """The one difference from MXNet's sparse embeddings, said where it happens."""
    warnings.warn(f"{name}: hybridlib has no sparse storage; the weight's gradient is dense "
                  '(the same values) and optimizers update every row, as MXNet does with '
                  'lazy_update=False.', stacklevel=3)


class Embedding(HybridBlock):
    """Turns non-negative integers (token ids) into dense vectors: row ``i`` of ``weight``.

    Parameters
    ----------
    input_dim : int
        Size of the vocabulary (largest id + 1).
    output_dim : int
        Size of each vector.
    dtype : str or numpy dtype, default 'float32'
        Type of the weight and the output.
    weight_initializer : Initializer or str, optional
    sparse_grad : bool, default False
        In MXNet, a 'row_sparse' weight gradient. hybridlib has no sparse storage: the
        gradient is dense (the same values) and optimizers update all rows, as MXNet with
        ``lazy_update=False``; a warning says so. The exported graph keeps the attribute.

    Shapes: ids ``(x1, ..., xn)`` (any dtype; floats are truncated) -> ``(x1, ..., xn,
    output_dim)``. The ids get no gradient (MXNet refuses to compute one; here it is zero).
    """

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim, 'dtype': dtype,
                        'sparse_grad': sparse_grad}
        if sparse_grad:
            _warn_dense_gradient(f'Embedding {self.name} with sparse_grad=True')
        self.weight = self.params.get('weight', shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name='fwd', **self._kwargs)

    def __repr__(self):
        kw = self._kwargs
        return f"{type(self).__name__}({kw['input_dim']} -> {kw['output_dim']}, {kw['dtype']})"


def _norm_repr(block, in_channels=True):
    """MXNet's repr of the normalisation layers: ``Name(eps=..., axis=..., in_channels=N)``."""
    content = ', '.join(f'{k}={v!r}' for k, v in block._kwargs.items())
    if in_channels:
        content += f', in_channels={block.gamma.shape[0]}'
    return f'{type(block).__name__}({content})'


class _AffineNorm(HybridBlock):
    """The ``gamma`` and ``beta`` parameters (``shape``) of InstanceNorm, LayerNorm and
    GroupNorm. Unlike BatchNorm's, they stay differentiable with ``scale``/``center`` False
    (grad_req 'null'), as in MXNet."""

    def _affine_parameters(self, kwargs, shape, beta_initializer, gamma_initializer):
        """``kwargs``: what repr shows (``eps``, ``center``, ``scale``, ...)."""
        self._kwargs = kwargs
        self._epsilon = kwargs['eps']
        self._center = kwargs['center']
        self._scale = kwargs['scale']
        self.gamma = self.params.get('gamma', grad_req='write' if self._scale else 'null',
                                     shape=shape, init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get('beta', grad_req='write' if self._center else 'null',
                                    shape=shape, init=beta_initializer,
                                    allow_deferred_init=True)


class InstanceNorm(_AffineNorm):
    """Instance normalisation: each sample and channel normalised over the other axes, then
    ``* gamma + beta`` per channel.

    ``out = (x - mean(x, C)) / sqrt(var(x, C) + epsilon) * gamma + beta`` with ``C`` every axis
    but the first (the sample) and ``axis`` (the channel).

    Parameters
    ----------
    axis : int, default 1
        The channel axis (3 after an NHWC convolution).
    epsilon : float, default 1e-5
    center : bool, default True
        Learn ``beta`` (otherwise it keeps its initial value, zeros).
    scale : bool, default False
        Learn ``gamma`` (otherwise it keeps its initial value, ones).
    beta_initializer, gamma_initializer : Initializer or str, default 'zeros', 'ones'
    in_channels : int, default 0
        Number of channels; 0 infers it on the first call.

    Shapes: ``(N, ...)`` with at least 3 axes -> the same shape.
    """

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer='zeros', gamma_initializer='ones', in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._axis = axis
        self._affine_parameters({'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale},
                                (in_channels,), beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, x, gamma, beta):
        # the operator normalises per axis 1: another channel axis is swapped there and back
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name='fwd', eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name='fwd',
                              eps=self._epsilon).swapaxes(1, self._axis)

    def __repr__(self):
        return _norm_repr(self)


class LayerNorm(_AffineNorm):
    """Layer normalisation: each position normalised along ``axis``, then ``* gamma + beta``
    (one value per element of that axis).

    ``out = (x - mean(x, axis)) / sqrt(var(x, axis) + epsilon) * gamma + beta``

    Parameters
    ----------
    axis : int, default -1
    epsilon : float, default 1e-5
    center, scale : bool, default True
        Learn ``beta`` / ``gamma``.
    beta_initializer, gamma_initializer : Initializer or str, default 'zeros', 'ones'
    in_channels : int, default 0
        Size of ``axis``; 0 infers it on the first call.

    Shapes: any -> the same shape.
    """

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer='zeros', gamma_initializer='ones', in_channels=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._axis = axis
        self._affine_parameters({'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale},
                                (in_channels,), beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)

    def __repr__(self):
        return _norm_repr(self)


class GroupNorm(_AffineNorm):
    """Group normalisation: the channels (axis 1) split into ``num_groups`` groups, each
    sample's group normalised over its channels and the remaining axes.

    As in MXNet 1.9.1, ``gamma`` and ``beta`` hold one value per *group* (shape
    ``(num_groups,)``), not per channel.

    Parameters
    ----------
    num_groups : int, default 1
        Must divide the number of channels.
    epsilon : float, default 1e-5
    center, scale : bool, default True
        Learn ``beta`` / ``gamma``.
    beta_initializer, gamma_initializer : Initializer or str, default 'zeros', 'ones'

    Shapes: ``(N, C, ...)`` -> the same shape.
    """

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer='zeros', gamma_initializer='ones', prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_groups = num_groups
        self._affine_parameters({'eps': epsilon, 'num_groups': num_groups, 'center': center,
                                 'scale': scale}, (num_groups,), beta_initializer,
                                gamma_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self):
        return _norm_repr(self, in_channels=False)


class Flatten(HybridBlock):
    """Flattens all axes but the first: ``(N, x1, ..., xn)`` -> ``(N, x1 * ... * xn)``."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.Flatten(x)

    def __repr__(self):
        return type(self).__name__


class Lambda(Block):
    """Wraps a function (or the name of an ``nd`` function) as a Block."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(ndarray, function):
                raise UsageError(f'Function name {function} is not found in ndarray.')
            self._func_impl = getattr(ndarray, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError(f'Unrecognized function in lambda: {function} of type '
                             f'{type(function)}')

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return f'{type(self).__name__}({self._func_impl.__name__})'


class HybridLambda(HybridBlock):
    """Wraps ``function(F, x, ...)`` (or the name of an operator) as a HybridBlock."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not (hasattr(ndarray, function) and hasattr(symbol, function)):
                raise UsageError(f'Function name {function} is not found in symbol/ndarray.')
            self._func = lambda F, *args: getattr(F, function)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError(f'Unrecognized function in lambda: {function} of type '
                             f'{type(function)}')

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return f'{type(self).__name__}({self._func_name})'
