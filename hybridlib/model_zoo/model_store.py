"""Where the pretrained weights of the model zoo live (``gluon.model_zoo.model_store``).

MXNet publishes the weights of each zoo model as ``gluon/models/<name>-<short sha1>.zip`` in
its repository ($MXNET_GLUON_REPO). ``get_model_file`` downloads and unpacks the
``<name>-<short sha1>.params`` file inside into ``$MXNET_HOME/models`` (``~/.mxnet/models`` by
default) the first time, checks its SHA-1, and then finds it there: a folder filled by MXNet
works as it is.
"""
import logging
import os
import shutil
import tempfile
import uuid
import zipfile

from ..base import data_dir
from ..utils import _file_sha1, _get_repo_url, check_sha1, download, replace_file
from ..utils import apache_repo_url  # noqa: F401  (public here, as in MXNet)

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

_url_format = '{repo_url}gluon/models/{file_name}.zip'


def short_hash(name):
    """The first 8 characters of the sha1 of a model's published weights."""
    if name not in _model_sha1:
        raise ValueError(f'Pretrained model for {name} is not available.')
    return _model_sha1[name][:8]


def get_model_file(name, root=os.path.join(data_dir(), 'models')):
    """The path of the pretrained weights of model ``name``, downloaded if needed.

    The file is ``root/<name>-<short sha1>.params``. When it is missing, or its SHA-1 is not the
    published one, ``<name>-<short sha1>.zip`` is downloaded from the Gluon repository
    (``$MXNET_GLUON_REPO``, by default MXNet's), the file is unpacked, checked and moved into
    place atomically, and the zip is removed. Several processes may do this at once.

    Parameters
    ----------
    name : str
        Name of the model in the model store ('resnet18_v1', 'mobilenet0.25', ...).
    root : str, default $MXNET_HOME/models
        Folder for the weights files (created if needed).

    Returns
    -------
    str
        Path to the requested pretrained model file.

    Raises
    ------
    ValueError
        For a name the store does not know, or when the downloaded file is not the one
        published (SHA-1 mismatch); nothing is left in ``root`` then.
    """
    file_name = f'{name}-{short_hash(name)}'
    root = os.path.expanduser(root)
    file_path = os.path.join(root, file_name + '.params')
    sha1_hash = _model_sha1[name]
    if os.path.exists(file_path):
        if check_sha1(file_path, sha1_hash):
            return file_path
        logging.warning('Mismatch in the content of model file detected. Downloading again.')
    else:
        logging.info('Model file not found. Downloading to %s.', file_path)
    os.makedirs(root, exist_ok=True)
    url = _url_format.format(repo_url=_get_repo_url(), file_name=file_name)
    # this process's own zip and folder, so that concurrent downloads do not meet
    zip_path = os.path.join(root, f'{file_name}.zip{uuid.uuid4()}')
    temp_dir = None
    try:
        download(url, path=zip_path, overwrite=True)
        temp_dir = tempfile.mkdtemp(dir=root)
        with zipfile.ZipFile(zip_path) as zf:
            if file_name + '.params' not in zf.namelist():
                raise ValueError(f'{url} does not hold {file_name}.params (it holds '
                                 f'{", ".join(zf.namelist()) or "nothing"})')
            temp_file = zf.extract(file_name + '.params', temp_dir)
        # checked before it replaces anything
        got = _file_sha1(temp_file)
        if got != sha1_hash:
            raise ValueError(
                f'Downloaded file has different hash. Please try again. {file_name}.params in '
                f'{url} has SHA-1 {got}, but the published weights of {name!r} have '
                f'{sha1_hash}; {file_path} was left as it was.')
        replace_file(temp_file, file_path)
    finally:
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)
        if os.path.exists(zip_path):
            os.remove(zip_path)
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
        Load MXNet's pretrained weights (downloaded into ``root`` the first time).
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
