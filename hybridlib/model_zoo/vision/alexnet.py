"""AlexNet (``gluon.model_zoo.vision``), as MXNet 1.9.1 builds it."""
import os

from ...context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import data_dir, load_pretrained, pretrained_doc

__all__ = ['AlexNet', 'alexnet']


class AlexNet(HybridBlock):
    r"""AlexNet from `"One weird trick..." <https://arxiv.org/abs/1404.5997>`_.

    Parameters
    ----------
    classes : int, default 1000
        Number of classes.

    Shapes: ``(N, 3, H, W)`` -> ``(N, classes)``, H and W at least 63 (224 for the pretrained
    weights, whose first Dense layer takes 256 * 6 * 6 features).
    """

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            with self.features.name_scope():
                self.features.add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2,
                                            activation='relu'))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Conv2D(192, kernel_size=5, padding=2, activation='relu'))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Conv2D(384, kernel_size=3, padding=1, activation='relu'))
                self.features.add(nn.Conv2D(256, kernel_size=3, padding=1, activation='relu'))
                self.features.add(nn.Conv2D(256, kernel_size=3, padding=1, activation='relu'))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Flatten())
                self.features.add(nn.Dense(4096, activation='relu'))
                self.features.add(nn.Dropout(0.5))
                self.features.add(nn.Dense(4096, activation='relu'))
                self.features.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        x = self.features(x)
        return self.output(x)


@pretrained_doc('AlexNet (``classes``, ``prefix``, ...)')
def alexnet(pretrained=False, ctx=cpu(), root=os.path.join(data_dir(), 'models'), **kwargs):
    r"""AlexNet from `"One weird trick..." <https://arxiv.org/abs/1404.5997>`_.
    """
    net = AlexNet(**kwargs)
    if pretrained:
        load_pretrained(net, 'alexnet', root, ctx)
    return net
