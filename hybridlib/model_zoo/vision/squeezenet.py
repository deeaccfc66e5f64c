"""SqueezeNet 1.0 and 1.1 (``gluon.model_zoo.vision``), as MXNet 1.9.1 builds them."""
import os

from ...context import cpu
from ...block import HybridBlock
from ... import nn
from ...contrib.nn import HybridConcurrent
from ..model_store import constructor, data_dir, load_pretrained, pretrained_doc

__all__ = ['SqueezeNet', 'squeezenet1_0', 'squeezenet1_1']


def _make_fire(squeeze_channels, expand1x1_channels, expand3x3_channels):
    """A fire module: a 1x1 squeeze, then 1x1 and 3x3 expansions concatenated."""
    out = nn.HybridSequential(prefix='')
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = HybridConcurrent(axis=1, prefix='')
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


def _make_fire_conv(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation('relu'))
    return out


# the feature layers after the stem: ('pool',) or fire (squeeze, expand 1x1, expand 3x3)
_FIRES = {'1.0': [(16, 64, 64), (16, 64, 64), (32, 128, 128), ('pool',), (32, 128, 128),
                  (48, 192, 192), (48, 192, 192), (64, 256, 256), ('pool',), (64, 256, 256)],
          '1.1': [(16, 64, 64), (16, 64, 64), ('pool',), (32, 128, 128), (32, 128, 128),
                  ('pool',), (48, 192, 192), (48, 192, 192), (64, 256, 256), (64, 256, 256)]}


class SqueezeNet(HybridBlock):
    r"""SqueezeNet from `"SqueezeNet: AlexNet-level accuracy with 50x fewer parameters and <0.5MB
    model size" <https://arxiv.org/abs/1602.07360>`_; version 1.1 from the `official SqueezeNet
    repo <https://github.com/DeepScale/SqueezeNet/tree/master/SqueezeNet_v1.1>`_ (2.4x less
    computation, slightly fewer parameters, the same accuracy).

    Parameters
    ----------
    version : str
        '1.0' or '1.1'.
    classes : int, default 1000
        Number of classes.

    Shapes: ``(N, 3, H, W)`` -> ``(N, classes)``; the final 13x13 average pooling needs H and W
    of at least 224 (1.0: 221).
    """

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        assert version in ['1.0', '1.1'], (f'Unsupported SqueezeNet version {version}:'
                                           '1.0 or 1.1 expected')
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            if version == '1.0':
                self.features.add(nn.Conv2D(96, kernel_size=7, strides=2))
            else:
                self.features.add(nn.Conv2D(64, kernel_size=3, strides=2))
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
            for layer in _FIRES[version]:
                if layer == ('pool',):
                    self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                else:
                    self.features.add(_make_fire(*layer))
            self.features.add(nn.Dropout(0.5))

            self.output = nn.HybridSequential(prefix='')
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation('relu'))
            self.output.add(nn.AvgPool2D(13))
            self.output.add(nn.Flatten())

    def hybrid_forward(self, F, x):
        x = self.features(x)
        return self.output(x)


@pretrained_doc('SqueezeNet (``classes``, ``prefix``, ...)')
def get_squeezenet(version, pretrained=False, ctx=cpu(),
                   root=os.path.join(data_dir(), 'models'), **kwargs):
    r"""SqueezeNet 1.0 or 1.1 (see SqueezeNet).

    Parameters
    ----------
    version : str
        '1.0' or '1.1'.
    """
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        load_pretrained(net, f'squeezenet{version}', root, ctx)
    return net


squeezenet1_0 = constructor(
    'squeezenet1_0', 'SqueezeNet 1.0 model from the `"SqueezeNet: AlexNet-level accuracy with '
    '50x fewer parameters and <0.5MB model size" <https://arxiv.org/abs/1602.07360>`_ paper.',
    get_squeezenet, '1.0')
squeezenet1_1 = constructor(
    'squeezenet1_1', 'SqueezeNet 1.1 model from the `official SqueezeNet repo '
    '<https://github.com/DeepScale/SqueezeNet/tree/master/SqueezeNet_v1.1>`_.',
    get_squeezenet, '1.1')
