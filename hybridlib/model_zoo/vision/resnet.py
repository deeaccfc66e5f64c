"""ResNet V1 and V2 (``gluon.model_zoo.vision``): residual blocks, networks and constructors.

Blocks, children, prefixes and parameter names are MXNet 1.9.1's, so MXNet's weights files load
(``resnetv10_stage1_conv0_weight``, ``features.4.0.body.0.weight``, ...). As in MXNet,
BottleneckV1's two 1x1 convolutions of the body have a bias.
"""
import os

from ...context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import constructor, data_dir, load_pretrained, pretrained_doc

__all__ = ['ResNetV1', 'ResNetV2',
           'BasicBlockV1', 'BasicBlockV2',
           'BottleneckV1', 'BottleneckV2',
           'resnet18_v1', 'resnet34_v1', 'resnet50_v1', 'resnet101_v1', 'resnet152_v1',
           'resnet18_v2', 'resnet34_v2', 'resnet50_v2', 'resnet101_v2', 'resnet152_v2',
           'get_resnet']


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _downsample_v1(channels, stride, in_channels):
    """The projection shortcut of the V1 blocks: 1x1 convolution and BatchNorm."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                      in_channels=in_channels))
    out.add(nn.BatchNorm())
    return out


class _ResidualV1(HybridBlock):
    """``relu(body(x) + shortcut(x))``, the shortcut projecting x when downsampling."""
    # the order of the sum, as MXNet writes it (it shows in the exported graph):
    # residual + body in BasicBlockV1, body + residual in BottleneckV1
    _body_first = False

    def hybrid_forward(self, F, x):
        residual = x
        x = self.body(x)
        if self.downsample:
            residual = self.downsample(residual)
        return F.Activation(x + residual if self._body_first else residual + x,
                            act_type='relu')


class BasicBlockV1(_ResidualV1):
    r"""BasicBlock V1 from `"Deep Residual Learning for Image Recognition"
    <http://arxiv.org/abs/1512.03385>`_: two 3x3 convolutions with BatchNorm. Used by
    ResNet-18 and -34 V1.

    Parameters
    ----------
    channels : int
        Number of output channels.
    stride : int
        Stride of the first convolution (and of the shortcut).
    downsample : bool, default False
        Whether the shortcut is a projection (1x1 convolution and BatchNorm).
    in_channels : int, default 0
        Number of input channels; 0 infers them from the first input.

    Shapes: ``(N, in_channels, H, W)`` -> ``(N, channels, ceil(H / stride), ceil(W /
    stride))``.
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix='')
        self.body.add(_conv3x3(channels, stride, in_channels))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(_conv3x3(channels, 1, channels))
        self.body.add(nn.BatchNorm())
        self.downsample = _downsample_v1(channels, stride, in_channels) if downsample else None


class BottleneckV1(_ResidualV1):
    r"""Bottleneck V1 from `"Deep Residual Learning for Image Recognition"
    <http://arxiv.org/abs/1512.03385>`_: 1x1, 3x3 and 1x1 convolutions with BatchNorm, the
    middle one on ``channels // 4``. Used by ResNet-50, -101 and -152 V1.

    Parameters and shapes are BasicBlockV1's (the stride is on the first 1x1 convolution).
    """
    _body_first = True

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix='')
        # MXNet's 1x1 convolutions keep their default bias here: so must the parameter names
        self.body.add(nn.Conv2D(channels // 4, kernel_size=1, strides=stride))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(_conv3x3(channels // 4, 1, channels // 4))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(nn.Conv2D(channels, kernel_size=1, strides=1))
        self.body.add(nn.BatchNorm())
        self.downsample = _downsample_v1(channels, stride, in_channels) if downsample else None


def _projection_v2(channels, stride, in_channels, downsample):
    """The projection shortcut of the V2 blocks (a 1x1 convolution), None without
    ``downsample``."""
    if not downsample:
        return None
    return nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)


class _ResidualV2(HybridBlock):
    """Pre-activation residual: (BatchNorm, relu, convolution) for each pair of ``_layers()``,
    plus the input (projected from the first activation when downsampling)."""

    def hybrid_forward(self, F, x):
        residual = x
        for i, (bn, conv) in enumerate(self._layers()):
            x = F.Activation(bn(x), act_type='relu')
            if i == 0 and self.downsample:
                residual = self.downsample(x)
            x = conv(x)
        return x + residual


class BasicBlockV2(_ResidualV2):
    r"""BasicBlock V2 from `"Identity Mappings in Deep Residual Networks"
    <https://arxiv.org/abs/1603.05027>`_: pre-activation (BatchNorm, relu, 3x3 convolution)
    twice. Used by ResNet-18 and -34 V2.

    Parameters and shapes are BasicBlockV1's; the projection shortcut is a 1x1 convolution of
    the pre-activated input.
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = _projection_v2(channels, stride, in_channels, downsample)

    def _layers(self):
        return [(self.bn1, self.conv1), (self.bn2, self.conv2)]


class BottleneckV2(_ResidualV2):
    r"""Bottleneck V2 from `"Identity Mappings in Deep Residual Networks"
    <https://arxiv.org/abs/1603.05027>`_: pre-activated 1x1, 3x3 (stride) and 1x1
    convolutions, the middle one on ``channels // 4``. Used by ResNet-50, -101 and -152 V2.

    Parameters and shapes are BasicBlockV1's.
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = _projection_v2(channels, stride, in_channels, downsample)

    def _layers(self):
        return [(self.bn1, self.conv1), (self.bn2, self.conv2), (self.bn3, self.conv3)]


class _ResNet(HybridBlock):
    """``output(features(x))``; the stages named ``stage1_``, ``stage2_``, ..."""

    @staticmethod
    def _make_layer(block, layers, channels, stride, stage_index, in_channels=0):
        layer = nn.HybridSequential(prefix=f'stage{stage_index}_')
        with layer.name_scope():
            layer.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                            prefix=''))
            for _ in range(layers - 1):
                layer.add(block(channels, 1, False, in_channels=channels, prefix=''))
        return layer

    def _add_stem(self, channels, thumbnail):
        if thumbnail:
            self.features.add(_conv3x3(channels, 1, 0))
        else:
            self.features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False))
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.MaxPool2D(3, 2, 1))

    def hybrid_forward(self, F, x):
        x = self.features(x)
        return self.output(x)


class ResNetV1(_ResNet):
    r"""ResNet V1 from `"Deep Residual Learning for Image Recognition"
    <http://arxiv.org/abs/1512.03385>`_.

    Parameters
    ----------
    block : HybridBlock class
        The residual block: BasicBlockV1 or BottleneckV1.
    layers : list of int
        Number of blocks in each stage.
    channels : list of int
        Channels of the stem, then of each stage (one more entry than ``layers``).
    classes : int, default 1000
        Number of classes.
    thumbnail : bool, default False
        A single 3x3 convolution as the stem (for small images such as CIFAR's) instead of the
        7x7 stride 2 convolution and the max pooling.

    Shapes: ``(N, 3, H, W)`` -> ``(N, classes)``.
    """

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self._add_stem(channels[0], thumbnail)
            for i, num_layer in enumerate(layers):
                stride = 1 if i == 0 else 2
                self.features.add(self._make_layer(block, num_layer, channels[i + 1], stride,
                                                   i + 1, in_channels=channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])


class ResNetV2(_ResNet):
    r"""ResNet V2 from `"Identity Mappings in Deep Residual Networks"
    <https://arxiv.org/abs/1603.05027>`_.

    Parameters and shapes are ResNetV1's, with ``block`` BasicBlockV2 or BottleneckV2. The
    input is first normalised by a BatchNorm without scale and shift.
    """

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.BatchNorm(scale=False, center=False))
            self._add_stem(channels[0], thumbnail)
            in_channels = channels[0]
            for i, num_layer in enumerate(layers):
                stride = 1 if i == 0 else 2
                self.features.add(self._make_layer(block, num_layer, channels[i + 1], stride,
                                                   i + 1, in_channels=in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)


resnet_spec = {18: ('basic_block', [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ('basic_block', [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ('bottle_neck', [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ('bottle_neck', [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ('bottle_neck', [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}

resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{'basic_block': BasicBlockV1, 'bottle_neck': BottleneckV1},
                         {'basic_block': BasicBlockV2, 'bottle_neck': BottleneckV2}]


@pretrained_doc('ResNetV1 or ResNetV2 (``classes``, ``thumbnail``, ``prefix``, ...)')
def get_resnet(version, num_layers, pretrained=False, ctx=cpu(),
               root=os.path.join(data_dir(), 'models'), **kwargs):
    r"""ResNet V1 (`"Deep Residual Learning for Image Recognition"
    <http://arxiv.org/abs/1512.03385>`_) or V2 (`"Identity Mappings in Deep Residual
    Networks" <https://arxiv.org/abs/1603.05027>`_).

    Parameters
    ----------
    version : int
        1 or 2.
    num_layers : int
        18, 34, 50, 101 or 152.
    """
    assert num_layers in resnet_spec, \
        f'Invalid number of layers: {num_layers}. Options are {list(resnet_spec)}'
    block_type, layers, channels = resnet_spec[num_layers]
    assert 1 <= version <= 2, f'Invalid resnet version: {version}. Options are 1 and 2.'
    resnet_class = resnet_net_versions[version - 1]
    block_class = resnet_block_versions[version - 1][block_type]
    net = resnet_class(block_class, layers, channels, **kwargs)
    if pretrained:
        load_pretrained(net, f'resnet{num_layers}_v{version}', root, ctx)
    return net


_PAPERS = {1: '`"Deep Residual Learning for Image Recognition" '
              '<http://arxiv.org/abs/1512.03385>`_',
           2: '`"Identity Mappings in Deep Residual Networks" '
              '<https://arxiv.org/abs/1603.05027>`_'}


def _resnet(version, num_layers):
    return constructor(f'resnet{num_layers}_v{version}',
                       f'ResNet-{num_layers} V{version} model from {_PAPERS[version]}.',
                       get_resnet, version, num_layers,
                       passed_to=f'ResNetV{version} (``classes``, ``thumbnail``, ...)')


resnet18_v1 = _resnet(1, 18)
resnet34_v1 = _resnet(1, 34)
resnet50_v1 = _resnet(1, 50)
resnet101_v1 = _resnet(1, 101)
resnet152_v1 = _resnet(1, 152)
resnet18_v2 = _resnet(2, 18)
resnet34_v2 = _resnet(2, 34)
resnet50_v2 = _resnet(2, 50)
resnet101_v2 = _resnet(2, 101)
resnet152_v2 = _resnet(2, 152)
