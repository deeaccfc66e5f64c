"""VGG (``gluon.model_zoo.vision``): the network and its constructors, with and without
BatchNorm, as MXNet 1.9.1 builds them (names, initializers and parameter layout)."""
import os

from ...context import cpu
from ...block import HybridBlock
from ...initializer import Xavier
from ... import nn
from ..model_store import constructor, data_dir, load_pretrained, pretrained_doc

__all__ = ['VGG',
           'vgg11', 'vgg13', 'vgg16', 'vgg19',
           'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn',
           'get_vgg']


class VGG(HybridBlock):
    r"""VGG from `"Very Deep Convolutional Networks for Large-Scale Image Recognition"
    <https://arxiv.org/abs/1409.1556>`_.

    Parameters
    ----------
    layers : list of int
        Number of 3x3 convolutions in each block (a max pooling ends each block).
    filters : list of int
        Channels of each block (as many entries as ``layers``).
    classes : int, default 1000
        Number of classes.
    batch_norm : bool, default False
        BatchNorm after every convolution.

    Shapes: ``(N, 3, H, W)`` -> ``(N, classes)``; the two 4096-wide Dense layers (with
    Dropout 0.5) take the flattened features, so their input size follows H and W.
    """

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(filters)
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation='relu', weight_initializer='normal',
                                           bias_initializer='zeros'))
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer='normal',
                                   bias_initializer='zeros')

    @staticmethod
    def _make_features(layers, filters, batch_norm):
        featurizer = nn.HybridSequential(prefix='')
        for i, num in enumerate(layers):
            for _ in range(num):
                featurizer.add(nn.Conv2D(filters[i], kernel_size=3, padding=1,
                                         weight_initializer=Xavier(rnd_type='gaussian',
                                                                   factor_type='out',
                                                                   magnitude=2),
                                         bias_initializer='zeros'))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation('relu'))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def hybrid_forward(self, F, x):
        x = self.features(x)
        return self.output(x)


vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


@pretrained_doc('VGG (``classes``, ``batch_norm``, ``prefix``, ...)')
def get_vgg(num_layers, pretrained=False, ctx=cpu(),
            root=os.path.join(data_dir(), 'models'), **kwargs):
    r"""VGG from `"Very Deep Convolutional Networks for Large-Scale Image Recognition"
    <https://arxiv.org/abs/1409.1556>`_.

    Parameters
    ----------
    num_layers : int
        11, 13, 16 or 19.
    """
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        suffix = '_bn' if kwargs.get('batch_norm') else ''
        load_pretrained(net, f'vgg{num_layers}{suffix}', root, ctx)
    return net


def _get_vgg_bn(num_layers, **kwargs):
    kwargs['batch_norm'] = True
    return get_vgg(num_layers, **kwargs)


def _vgg(num_layers, batch_norm):
    paper = ('`"Very Deep Convolutional Networks for Large-Scale Image Recognition" '
             '<https://arxiv.org/abs/1409.1556>`_')
    if batch_norm:
        return constructor(f'vgg{num_layers}_bn', f'VGG-{num_layers} model with batch '
                           f'normalization from {paper}.', _get_vgg_bn, num_layers)
    return constructor(f'vgg{num_layers}', f'VGG-{num_layers} model from {paper}.', get_vgg,
                       num_layers)


vgg11 = _vgg(11, False)
vgg13 = _vgg(13, False)
vgg16 = _vgg(16, False)
vgg19 = _vgg(19, False)
vgg11_bn = _vgg(11, True)
vgg13_bn = _vgg(13, True)
vgg16_bn = _vgg(16, True)
vgg19_bn = _vgg(19, True)
