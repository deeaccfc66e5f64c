r"""Pre-defined vision models (``gluon.model_zoo.vision``), as in MXNet 1.9.1.

-  `AlexNet <https://arxiv.org/abs/1404.5997>`_: ``alexnet``
-  `DenseNet <https://arxiv.org/abs/1608.06993>`_: ``densenet121/161/169/201``
-  `Inception V3 <http://arxiv.org/abs/1512.00567>`_: ``inception_v3``
-  `ResNet V1 <https://arxiv.org/abs/1512.03385>`_: ``resnet18_v1`` ... ``resnet152_v1``
-  `ResNet V2 <https://arxiv.org/abs/1603.05027>`_: ``resnet18_v2`` ... ``resnet152_v2``
-  `SqueezeNet <https://arxiv.org/abs/1602.07360>`_: ``squeezenet1_0``, ``squeezenet1_1``
-  `VGG <https://arxiv.org/abs/1409.1556>`_: ``vgg11`` ... ``vgg19``, ``vgg11_bn`` ...
-  `MobileNet <https://arxiv.org/abs/1704.04861>`_: ``mobilenet1_0`` ... ``mobilenet0_25``
-  `MobileNetV2 <https://arxiv.org/abs/1801.04381>`_: ``mobilenet_v2_1_0`` ...

A constructor gives a model with random weights::

    from hybridlib.gluon.model_zoo import vision
    resnet18 = vision.resnet18_v1()

Blocks, prefixes and parameter names are MXNet's, so MXNet's weights files load.
``pretrained=True`` loads MXNet's published weights from ``root`` (default
``$MXNET_HOME/models``, i.e. ``~/.mxnet/models``), downloading them there from the Gluon
repository (``$MXNET_GLUON_REPO``) the first time, as MXNet does. The pretrained models expect
RGB images in [0, 1] normalised with mean ``[0.485, 0.456, 0.406]`` and std
``[0.229, 0.224, 0.225]``, at least 224x224 (299x299 for Inception V3).
"""
# the modules under private names: ``alexnet`` is the constructor, as in MXNet
from . import alexnet as _alexnet, densenet as _densenet, inception as _inception
from . import resnet as _resnet, squeezenet as _squeezenet, vgg as _vgg, mobilenet as _mobilenet
from .alexnet import *       # noqa: F401,F403
from .densenet import *      # noqa: F401,F403
from .inception import *     # noqa: F401,F403
from .resnet import *        # noqa: F401,F403
from .squeezenet import *    # noqa: F401,F403
from .vgg import *           # noqa: F401,F403
from .mobilenet import *     # noqa: F401,F403

__all__ = (_alexnet.__all__ + _densenet.__all__ + _inception.__all__ + _resnet.__all__
           + _squeezenet.__all__ + _vgg.__all__ + _mobilenet.__all__ + ['get_model'])

_MODELS = {'resnet18_v1': _resnet.resnet18_v1, 'resnet34_v1': _resnet.resnet34_v1,
           'resnet50_v1': _resnet.resnet50_v1, 'resnet101_v1': _resnet.resnet101_v1,
           'resnet152_v1': _resnet.resnet152_v1, 'resnet18_v2': _resnet.resnet18_v2,
           'resnet34_v2': _resnet.resnet34_v2, 'resnet50_v2': _resnet.resnet50_v2,
           'resnet101_v2': _resnet.resnet101_v2, 'resnet152_v2': _resnet.resnet152_v2,
           'vgg11': _vgg.vgg11, 'vgg13': _vgg.vgg13, 'vgg16': _vgg.vgg16, 'vgg19': _vgg.vgg19,
           'vgg11_bn': _vgg.vgg11_bn, 'vgg13_bn': _vgg.vgg13_bn, 'vgg16_bn': _vgg.vgg16_bn,
           'vgg19_bn': _vgg.vgg19_bn, 'alexnet': _alexnet.alexnet,
           'densenet121': _densenet.densenet121, 'densenet161': _densenet.densenet161,
           'densenet169': _densenet.densenet169, 'densenet201': _densenet.densenet201,
           'squeezenet1.0': _squeezenet.squeezenet1_0, 'squeezenet1.1': _squeezenet.squeezenet1_1,
           'inceptionv3': _inception.inception_v3, 'mobilenet1.0': _mobilenet.mobilenet1_0,
           'mobilenet0.75': _mobilenet.mobilenet0_75, 'mobilenet0.5': _mobilenet.mobilenet0_5,
           'mobilenet0.25': _mobilenet.mobilenet0_25,
           'mobilenetv2_1.0': _mobilenet.mobilenet_v2_1_0,
           'mobilenetv2_0.75': _mobilenet.mobilenet_v2_0_75,
           'mobilenetv2_0.5': _mobilenet.mobilenet_v2_0_5,
           'mobilenetv2_0.25': _mobilenet.mobilenet_v2_0_25}


def get_model(name, **kwargs):
    """A pre-defined model by name.

    Parameters
    ----------
    name : str
        Name of the model (case-insensitive): 'resnet18_v1', 'vgg16_bn', 'squeezenet1.1',
        'inceptionv3', 'mobilenet0.25', 'mobilenetv2_1.0', ...
    pretrained : bool
        Load MXNet's pretrained weights (downloaded into ``root`` the first time).
    classes : int
        Number of classes of the output layer.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default '$MXNET_HOME/models'
        Folder of the pretrained weights.

    Returns
    -------
    HybridBlock
        The model.
    """
    name = name.lower()
    if name not in _MODELS:
        raise ValueError('Model %s is not supported. Available options are\n\t%s' % (
            name, '\n\t'.join(sorted(_MODELS))))
    return _MODELS[name](**kwargs)
