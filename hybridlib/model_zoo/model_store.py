"""Where the pretrained weights of the model zoo live (``gluon.model_zoo.model_store``).

MXNet downloads ``<name>-<short sha1>.params`` from its model repository into
``$MXNET_HOME/models`` (``~/.mxnet/models`` by default). hybridlib does not download: it loads
the same file when it is there (so a directory filled by MXNet works as it is), and otherwise
raises an error that names the file, the folder and the address to fetch it from.
"""
import hashlib
import logging
import os
import warnings

__all__ = ['get_model_file', 'purge']

# MXNet 1.9.1's published weights: model name -> sha1 of the .params file
_model_sha1 = {name: checksum for checksum, name in [
    ('44335d1f0046b328243b32a26a4fbd62d9057b45', 'alexnet'),
    ('f27dbf2dbd5ce9a80b102d89c7483342cd33cb31', 'densenet121'),
    ('b6c8a95717e3e761bd88d145f4d0a214aaa515dc', 'densenet161'),
    ('2603f878403c6aa5a71a124c4a3307143d6820e9', 'densenet169'),
    ('1cdbc116bc3a1b65832b18cf53e1cb8e7da017eb', 'densenet201'),
    ('ed47ec45a937b656fcc94dabde85495bbef5ba1f', 'inceptionv3'),
    ('9f83e440996887baf91a6aff1cccc1c903a64274', 'mobilenet0.25'),
    ('8e9d539cc66aa5efa71c4b6af983b936ab8701c3', 'mobilenet0.5'),
    ('529b2c7f4934e6cb851155b22c96c9ab0a7c4dc2', 'mobilenet0.75'),
    ('6b8c5106c730e8750bcd82ceb75220a3351157cd', 'mobilenet1.0'),
    ('36da4ff1867abccd32b29592d79fc753bca5a215', 'mobilenetv2_1.0'),
    ('e2be7b72a79fe4a750d1dd415afedf01c3ea818d', 'mobilenetv2_0.75'),
    ('aabd26cd335379fcb72ae6c8fac45a70eab11785', 'mobilenetv2_0.5'),
    ('ae8f9392789b04822cbb1d98c27283fc5f8aa0a7', 'mobilenetv2_0.25'),
    ('a0666292f0a30ff61f857b0b66efc0228eb6a54b', 'resnet18_v1'),
    ('48216ba99a8b1005d75c0f3a0c422301a0473233', 'resnet34_v1'),
    ('0aee57f96768c0a2d5b23a6ec91eb08dfb0a45ce', 'resnet50_v1'),
    ('d988c13d6159779e907140a638c56f229634cb02', 'resnet101_v1'),
    ('671c637a14387ab9e2654eafd0d493d86b1c8579', 'resnet152_v1'),
    ('a81db45fd7b7a2d12ab97cd88ef0a5ac48b8f657', 'resnet18_v2'),
    ('9d6b80bbc35169de6b6edecffdd6047c56fdd322', 'resnet34_v2'),
    ('ecdde35339c1aadbec4f547857078e734a76fb49', 'resnet50_v2'),
    ('18e93e4f48947e002547f50eabbcc9c83e516aa6', 'resnet101_v2'),
    ('f2695542de38cf7e71ed58f02893d82bb409415e', 'resnet152_v2'),
    ('264ba4970a0cc87a4f15c96e25246a1307caf523', 'squeezenet1.0'),
    ('33ba0f93753c83d86e1eb397f38a667eaf2e9376', 'squeezenet1.1'),
    ('dd221b160977f36a53f464cb54648d227c707a05', 'vgg11'),
    ('ee79a8098a91fbe05b7a973fed2017a6117723a8', 'vgg11_bn'),
    ('6bc5de58a05a5e2e7f493e2d75a580d83efde38c', 'vgg13'),
    ('7d97a06c3c7a1aecc88b6e7385c2b373a249e95e', 'vgg13_bn'),
    ('e660d4569ccb679ec68f1fd3cce07a387252a90a', 'vgg16'),
    ('7f01cf050d357127a73826045c245041b0df7363', 'vgg16_bn'),
    ('ad2f660d101905472b83590b59708b71ea22b2e5', 'vgg19'),
    ('f360b758e856f1074a85abd5fd873ed1d98297c3', 'vgg19_bn')]}

_REPO_URL = 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/'
_URL_FORMAT = '{repo_url}gluon/models/{file_name}.zip'


def data_dir():
    """MXNet's data folder: ``$MXNET_HOME``, by default ``~/.mxnet`` (``%APPDATA%/mxnet`` on
    Windows)."""
    if os.name == 'nt':
        default = os.path.join(os.environ.get('APPDATA', '~'), 'mxnet')
    else:
        default = os.path.join(os.path.expanduser('~'), '.mxnet')
    return os.getenv('MXNET_HOME', default)


def short_hash(name):
    """The first 8 characters of the sha1 of a model's published weights."""
    if name not in _model_sha1:
        raise ValueError(f'Pretrained model for {name} is not available.')
    return _model_sha1[name][:8]


def _sha1(path):
    digest = hashlib.sha1()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            digest.update(chunk)
    return digest.hexdigest()


def get_model_file(name, root=os.path.join(data_dir(), 'models')):
    """The path of the pretrained weights of model ``name`` (MXNet's model-zoo file).

    Parameters
    ----------
    name : str
        Name of the model in the model store ('resnet18_v1', 'mobilenet0.25', ...).
    root : str, default $MXNET_HOME/models
        Folder that holds the weights files.

    Returns
    -------
    str
        ``root/<name>-<short sha1>.params``.

    Raises
    ------
    FileNotFoundError
        When the file is not in ``root``: unlike MXNet, hybridlib does not download it. The
        message names the file and the address of MXNet's archive that holds it.
    """
    file_name = f'{name}-{short_hash(name)}'
    root = os.path.expanduser(root)
    file_path = os.path.join(root, file_name + '.params')
    if not os.path.exists(file_path):
        repo_url = os.environ.get('MXNET_GLUON_REPO', _REPO_URL)
        if not repo_url.endswith('/'):
            repo_url += '/'
        url = _URL_FORMAT.format(repo_url=repo_url, file_name=file_name)
        raise FileNotFoundError(
            f'The pretrained weights of {name!r} are not available: hybridlib does not '
            f'download them. Put MXNet\'s model-zoo file {file_name}.params into {root} (or '
            f'pass root= the folder that holds it); it is inside {url} (a zip archive), and '
            'MXNet keeps it in $MXNET_HOME/models (~/.mxnet/models) once downloaded.')
    if _sha1(file_path) != _model_sha1[name]:
        # MXNet would download the file again; here it is the user's file, so use it
        warnings.warn(f'{file_path} is not the file MXNet publishes for {name!r} (its sha1 '
                      f'differs from {_model_sha1[name]}); loading it anyway.', stacklevel=3)
    else:
        logging.debug('Using the pretrained weights in %s', file_path)
    return file_path


def purge(root=os.path.join(data_dir(), 'models')):
    """Removes every ``.params`` file from the folder of pretrained weights.

    Parameters
    ----------
    root : str, default $MXNET_HOME/models
        Folder that holds the weights files.
    """
    root = os.path.expanduser(root)
    for name in os.listdir(root):
        if name.endswith('.params'):
            os.remove(os.path.join(root, name))


def load_pretrained(net, name, root, ctx):
    """Loads MXNet's pretrained weights of model ``name`` from ``root`` into ``net``."""
    net.load_parameters(get_model_file(name, root=root), ctx=ctx)


# the parameters every constructor of the zoo documents
_PRETRAINED_PARAMETERS = """
    pretrained : bool, default False
        Load MXNet's pretrained weights from ``root`` (they are not downloaded).
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default $MXNET_HOME/models
        Folder of the pretrained weights."""


def pretrained_doc(passed_to=None):
    """Decorator: completes a zoo constructor's docstring with ``pretrained``, ``ctx`` and
    ``root`` (and ``**kwargs``, "Passed to ``passed_to``.")."""
    def wrap(fn):
        doc = fn.__doc__.rstrip()
        if 'Parameters\n' not in doc:
            doc += '\n\n    Parameters\n    ----------'
        doc += _PRETRAINED_PARAMETERS
        if passed_to:
            doc += f'\n    **kwargs\n        Passed to {passed_to}.'

        fn.__doc__ = doc + '\n    '
        return fn
    return wrap


def constructor(name, summary, getter, *args, passed_to=None):
    """A named constructor ``name(**kwargs)`` that returns ``getter(*args, **kwargs)``
    (``resnet18_v1`` is ``get_resnet(1, 18)``), documented by ``summary``."""
    def make(**kwargs):
        return getter(*args, **kwargs)
    make.__name__ = make.__qualname__ = name
    make.__module__ = getter.__module__
    make.__doc__ = summary
    return pretrained_doc(passed_to)(make)
