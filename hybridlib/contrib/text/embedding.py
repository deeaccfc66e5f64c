"""Token embeddings: ``GloVe`` and ``FastText`` (pre-trained files downloaded from MXNet's
repository, ``$MXNET_GLUON_REPO``), ``CustomEmbedding`` (a file of one's own) and
``CompositeEmbedding`` (several embeddings concatenated for one vocabulary), with ``register``,
``create`` and ``get_pretrained_file_names``, as MXNet 1.9.1's.

An embedding is a ``Vocabulary`` whose tokens each have a vector: ``idx_to_vec`` (an NDArray,
one row per index). A file has one token per line followed by its vector's elements; the
first vector read for a token is kept (later ones are skipped with a warning), a line with a
single number is taken for a header and skipped. The unknown token (index 0) gets its vector
from the file when the file has one, else ``init_unknown_vec(shape=vec_len)``.

Where MXNet misaligns rows and tokens, this does not: tokens indexed before the file is read
(reserved tokens, a counter given to the constructor) get rows of ``init_unknown_vec`` here,
where MXNet left them without rows, so that the file's vectors went to the wrong tokens. A file
is read into float32 rows as it goes (MXNet collects every number in a Python list first).
"""
import logging
import os
import warnings
import zipfile

import numpy as np

from ... import ndarray as nd
from ... import registry
from ...base import MXNetAssertionError, data_dir
from ...utils import _extract_tar, _get_repo_file_url, check_sha1, download
from . import _constants as C
from . import vocab

__all__ = ['register', 'create', 'get_pretrained_file_names', 'GloVe', 'FastText',
           'CustomEmbedding', 'CompositeEmbedding']


def register(embedding_cls):
    """Registers a token embedding class (a subclass of ``_TokenEmbedding``) under its
    lower-cased name, for ``create``.

    Examples
    --------
    >>> @register
    ... class MyTextEmbed(_TokenEmbedding):
    ...     def __init__(self, pretrained_file_name='my_pretrain_file'):
    ...         pass
    >>> embed = create('MyTextEmbed')
    """
    register_text_embedding = registry.get_register_func(_TokenEmbedding, 'token embedding')
    return register_text_embedding(embedding_cls)


def create(embedding_name, **kwargs):
    """An instance of the token embedding registered as ``embedding_name`` (case-insensitive),
    e.g. ``create('glove', pretrained_file_name='glove.6B.50d.txt')``; see
    ``get_pretrained_file_names`` for the files each embedding knows."""
    create_text_embedding = registry.get_create_func(_TokenEmbedding, 'token embedding')
    return create_text_embedding(embedding_name, **kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The pre-trained file names (``pretrained_file_name``) of the registered embedding
    ``embedding_name``, or a dict of them for every registered embedding when None.

    Raises KeyError for a name that is not registered.
    """
    text_embedding_reg = registry.get_registry(_TokenEmbedding)
    if embedding_name is not None:
        if embedding_name not in text_embedding_reg:
            raise KeyError(f'Cannot find `embedding_name` {embedding_name}. Use '
                           '`get_pretrained_file_names(embedding_name=None).keys()` to get all '
                           'the valid embedding names.')
        return list(text_embedding_reg[embedding_name].pretrained_file_name_sha1.keys())
    return {name: list(cls.pretrained_file_name_sha1.keys())
            for name, cls in text_embedding_reg.items()}


class _TokenEmbedding(vocab.Vocabulary):
    """The base class of token embeddings: a ``Vocabulary`` with a vector per token.

    Attributes
    ----------
    token_to_idx, idx_to_token, unknown_token, reserved_tokens
        As ``Vocabulary``'s.
    vec_len : int
        The length of each token's vector.
    idx_to_vec : NDArray
        (number of tokens, vec_len): row i is the vector of token i.
    """

    # -- pre-trained files ------------------------------------------------------------------
    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file_url(cls, pretrained_file_name):
        return _get_repo_file_url('gluon/embeddings/' + cls.__name__.lower(),
                                  cls._get_download_file_name(pretrained_file_name))

    @classmethod
    def _get_pretrained_file(cls, embedding_root, pretrained_file_name):
        """The path of the pre-trained file under ``embedding_root``/<class name>, downloaded
        (and extracted from its archive) unless a copy with the right SHA-1 is there."""
        embedding_cls = cls.__name__.lower()
        embedding_root = os.path.expanduser(embedding_root)
        url = cls._get_pretrained_file_url(pretrained_file_name)
        embedding_dir = os.path.join(embedding_root, embedding_cls)
        pretrained_file_path = os.path.join(embedding_dir, pretrained_file_name)
        downloaded_file = os.path.basename(url)
        downloaded_file_path = os.path.join(embedding_dir, downloaded_file)
        expected_file_hash = cls.pretrained_file_name_sha1[pretrained_file_name]
        if hasattr(cls, 'pretrained_archive_name_sha1'):
            expected_downloaded_hash = cls.pretrained_archive_name_sha1[downloaded_file]
        else:
            expected_downloaded_hash = expected_file_hash
        if not os.path.exists(pretrained_file_path) \
                or not check_sha1(pretrained_file_path, expected_file_hash):
            download(url, downloaded_file_path, sha1_hash=expected_downloaded_hash)
            ext = os.path.splitext(downloaded_file)[1]
            if ext == '.zip':
                with zipfile.ZipFile(downloaded_file_path, 'r') as zf:
                    zf.extractall(embedding_dir)
            elif ext == '.gz':
                _extract_tar(downloaded_file_path, embedding_dir)
        return pretrained_file_path

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name):
        """KeyError unless the class knows ``pretrained_file_name``."""
        embedding_name = cls.__name__.lower()
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            raise KeyError(f'Cannot find pretrained file {pretrained_file_name} for token '
                           f'embedding {embedding_name}. Valid pretrained files for embedding '
                           f'{embedding_name}: '
                           f'{", ".join(cls.pretrained_file_name_sha1.keys())}')

    # -- loading ----------------------------------------------------------------------------
    def _load_embedding(self, pretrained_file_path, elem_delim, init_unknown_vec,
                        encoding='utf8'):
        """Index the tokens of a pre-trained file and read their vectors (see the module
        docstring for the rules)."""
        pretrained_file_path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(pretrained_file_path):
            raise ValueError('`pretrained_file_path` must be a valid path to the pre-trained '
                             'token embedding file.')
        logging.info('Loading pre-trained token embedding vectors from %s',
                     pretrained_file_path)
        indexed_before = len(self._idx_to_token)
        vec_len = None
        rows = []
        tokens = set()
        loaded_unknown_vec = None
        with open(pretrained_file_path, 'r', encoding=encoding) as f:
            for line_num, line in enumerate(f, 1):
                elems = line.rstrip().split(elem_delim)
                if len(elems) <= 1:
                    raise MXNetAssertionError(
                        f'At line {line_num} of the pre-trained text embedding file: the data '
                        f'format of the pre-trained token embedding file {pretrained_file_path} '
                        'is unexpected.')
                token = elems[0]
                # float() of each element, then float32: the rounding MXNet's nd.array applies
                floats = [float(i) for i in elems[1:]]
                values = np.array(floats, np.float32)
                if token == self.unknown_token and loaded_unknown_vec is None:
                    loaded_unknown_vec = values
                    tokens.add(self.unknown_token)
                elif token in tokens:
                    warnings.warn(f'At line {line_num} of the pre-trained token embedding file: '
                                  f'the embedding vector for token {token} has been loaded and a '
                                  'duplicate embedding for the  same token is seen and skipped.')
                elif values.size == 1:
                    warnings.warn(f'At line {line_num} of the pre-trained text embedding file: '
                                  f'token {token} with 1-dimensional vector {floats} is '
                                  'likely a header and is skipped.')
                else:
                    if vec_len is None:
                        vec_len = values.size
                    elif values.size != vec_len:
                        raise MXNetAssertionError(
                            f'At line {line_num} of the pre-trained token embedding file: the '
                            f'dimension of token {token} is {values.size} but the dimension of '
                            f'previous tokens is {vec_len}. Dimensions of all the tokens must '
                            'be the same.')
                    rows.append(values)
                    self._idx_to_token.append(token)
                    self._token_to_idx[token] = len(self._idx_to_token) - 1
                    tokens.add(token)
        if vec_len is None and loaded_unknown_vec is not None:
            vec_len = loaded_unknown_vec.size
        if vec_len is None:
            raise MXNetAssertionError(f'The pre-trained token embedding file '
                                      f'{pretrained_file_path} holds no embedding vectors.')
        if loaded_unknown_vec is not None and loaded_unknown_vec.size != vec_len:
            raise MXNetAssertionError(
                f'The vector of the unknown token {self.unknown_token} has '
                f'{loaded_unknown_vec.size} elements in {pretrained_file_path}, the other '
                f'tokens {vec_len}.')
        self._vec_len = vec_len
        # the unknown token and every token indexed before the file: init_unknown_vec (called
        # only when one of them needs it, as it may draw random numbers)
        table = np.empty((len(self._idx_to_token), vec_len), np.float32)
        if loaded_unknown_vec is None or indexed_before > 1:
            table[:indexed_before] = _as_numpy(init_unknown_vec(shape=vec_len))
        if rows:
            table[indexed_before:] = np.stack(rows)
        if loaded_unknown_vec is not None:
            table[C.UNKNOWN_IDX] = loaded_unknown_vec
        self._idx_to_vec = nd.array(table)

    def _index_tokens_from_vocabulary(self, vocabulary):
        self._token_to_idx = vocabulary.token_to_idx.copy()
        self._idx_to_token = vocabulary.idx_to_token[:]
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = vocabulary.reserved_tokens[:] \
            if vocabulary.reserved_tokens is not None else None

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len, vocab_idx_to_token):
        """``idx_to_vec`` for the tokens of a vocabulary: each embedding's vectors of them,
        concatenated (the unknown token's row: each embedding's unknown vector)."""
        new_vec_len = sum(embed.vec_len for embed in token_embeddings)
        table = np.zeros((vocab_len, new_vec_len), np.float32)
        col_start = 0
        for embed in token_embeddings:
            col_end = col_start + embed.vec_len
            table[0, col_start:col_end] = embed.idx_to_vec[0].asnumpy()
            if vocab_len > 1:
                table[1:, col_start:col_end] = \
                    embed.get_vecs_by_tokens(vocab_idx_to_token[1:]).asnumpy()
            col_start = col_end
        self._vec_len = new_vec_len
        self._idx_to_vec = nd.array(table)

    def _build_embedding_for_vocabulary(self, vocabulary):
        if vocabulary is not None:
            if not isinstance(vocabulary, vocab.Vocabulary):
                raise MXNetAssertionError('The argument `vocabulary` must be an instance of '
                                          'mxnet.contrib.text.vocab.Vocabulary.')
            self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
            self._index_tokens_from_vocabulary(vocabulary)

    # -- the vectors ------------------------------------------------------------------------
    @property
    def vec_len(self):
        return self._vec_len

    @property
    def idx_to_vec(self):
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """The vector of a token (1-d NDArray, ``vec_len``), or of each token of a list
        ((len(tokens), vec_len)); unknown tokens get the unknown token's vector.

        With ``lower_case_backup``, a token not indexed as given is looked up in lower case.
        """
        single = not isinstance(tokens, list)
        tokens = [tokens] if single else tokens
        if not lower_case_backup:
            indices = [self.token_to_idx.get(token, C.UNKNOWN_IDX) for token in tokens]
        else:
            indices = [self.token_to_idx[token] if token in self.token_to_idx
                       else self.token_to_idx.get(token.lower(), C.UNKNOWN_IDX)
                       for token in tokens]
        vecs = nd.Embedding(nd.array(indices), self.idx_to_vec, self.idx_to_vec.shape[0],
                            self.idx_to_vec.shape[1])
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Sets the vectors of indexed tokens, in place.

        Parameters
        ----------
        tokens : str or list of str
            Indexed tokens (the unknown token only by its name: any other token not indexed
            raises ValueError, so that no vector is changed by mistake).
        new_vectors : NDArray
            (len(tokens), vec_len), or (vec_len,) for one token.
        """
        if self.idx_to_vec is None:
            raise MXNetAssertionError('The property `idx_to_vec` has not been properly set.')
        if not isinstance(tokens, list) or len(tokens) == 1:
            if not (isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) in (1, 2)):
                raise MXNetAssertionError('`new_vectors` must be a 1-D or 2-D NDArray if '
                                          '`tokens` is a singleton.')
            if not isinstance(tokens, list):
                tokens = [tokens]
            if len(new_vectors.shape) == 1:
                new_vectors = nd.expand_dims(new_vectors, axis=0)
        elif not (isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) == 2):
            raise MXNetAssertionError('`new_vectors` must be a 2-D NDArray if `tokens` is a '
                                      'list of multiple strings.')
        if new_vectors.shape != (len(tokens), self.vec_len):
            raise MXNetAssertionError(
                'The length of new_vectors must be equal to the number of tokens and the width '
                'of new_vectors must be equal to the dimension of embeddings of the glossary.')
        indices = []
        for token in tokens:
            if token not in self.token_to_idx:
                raise ValueError(f'Token {token} is unknown. To update the embedding vector for '
                                 'an unknown token, please specify it explicitly as the '
                                 f'`unknown_token` {self.idx_to_token[C.UNKNOWN_IDX]} in '
                                 '`tokens`. This is to avoid unintended updates.')
            indices.append(self.token_to_idx[token])
        self._idx_to_vec[nd.array(indices)] = new_vectors


def _as_numpy(value):
    return value.asnumpy() if hasattr(value, 'asnumpy') else np.asarray(value)


def _embedding_root(embedding_root):
    return os.path.join(data_dir(), 'embeddings') if embedding_root is None else embedding_root


@register
class GloVe(_TokenEmbedding):
    """The GloVe word embedding (https://nlp.stanford.edu/projects/glove/): vectors learnt
    from global word-word co-occurrence statistics (Pennington, Socher and Manning, 2014).
    The pre-trained files are under the PDDL licence
    (https://fedoraproject.org/wiki/Licensing/PDDL).

    Parameters
    ----------
    pretrained_file_name : str, default 'glove.840B.300d.txt'
        One of ``get_pretrained_file_names('glove')``; it is downloaded inside its archive.
    embedding_root : str, default $MXNET_HOME/embeddings
        Where the files are kept (read when the call is made).
    init_unknown_vec : callable, default nd.zeros
        ``init_unknown_vec(shape=vec_len)``: the vector of the unknown token when the file has
        none (and of tokens indexed from ``kwargs``).
    vocabulary : Vocabulary, default None
        Index its tokens (with the file's vectors for them) instead of the file's tokens.
    """

    # archives and their SHA-1s; the files in them and theirs (MXNet's crossed names)
    pretrained_archive_name_sha1 = C.GLOVE_PRETRAINED_FILE_SHA1
    pretrained_file_name_sha1 = C.GLOVE_PRETRAINED_ARCHIVE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        # glove.6B.50d.txt is in glove.6B.zip: the archive named by the second part
        src_archive = {archive.split('.')[1]: archive
                       for archive in GloVe.pretrained_archive_name_sha1.keys()}
        return src_archive[pretrained_file_name.split('.')[1]]

    def __init__(self, pretrained_file_name='glove.840B.300d.txt', embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        GloVe._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = GloVe._get_pretrained_file(_embedding_root(embedding_root), pretrained_file_name)
        self._load_embedding(path, ' ', init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


@register
class FastText(_TokenEmbedding):
    """The fastText word embedding (https://fasttext.cc/): vectors with subword information
    (Bojanowski, Grave, Joulin and Mikolov, 2016), for Wikipedia in many languages
    (``wiki.<lang>.vec``) and Common Crawl. The pre-trained files are under CC BY-SA 3.0
    (https://creativecommons.org/licenses/by-sa/3.0/).

    Parameters
    ----------
    pretrained_file_name : str, default 'wiki.simple.vec'
        One of ``get_pretrained_file_names('fasttext')``; it is downloaded as a zip archive.
    embedding_root : str, default $MXNET_HOME/embeddings
        Where the files are kept (read when the call is made).
    init_unknown_vec : callable, default nd.zeros
        ``init_unknown_vec(shape=vec_len)``: the vector of the unknown token when the file has
        none.
    vocabulary : Vocabulary, default None
        Index its tokens (with the file's vectors for them) instead of the file's tokens.
    """

    pretrained_archive_name_sha1 = C.FAST_TEXT_ARCHIVE_SHA1
    pretrained_file_name_sha1 = C.FAST_TEXT_FILE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        # wiki.en.vec is in wiki.en.zip
        return '.'.join(pretrained_file_name.split('.')[:-1]) + '.zip'

    def __init__(self, pretrained_file_name='wiki.simple.vec', embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        FastText._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = FastText._get_pretrained_file(_embedding_root(embedding_root),
                                             pretrained_file_name)
        self._load_embedding(path, ' ', init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """An embedding read from a file of one's own:
    ``token<ed>v1<ed>v2...<ed>vk`` per line, ``<ed>`` being ``elem_delim``.

    Parameters
    ----------
    pretrained_file_path : str
        The file.
    elem_delim : str, default ' '
        What separates the token and the elements on a line.
    encoding : str, default 'utf8'
        The file's encoding.
    init_unknown_vec : callable, default nd.zeros
        ``init_unknown_vec(shape=vec_len)``: the vector of the unknown token when the file has
        none.
    vocabulary : Vocabulary, default None
        Index its tokens (with the file's vectors for them) instead of the file's tokens.
    """

    def __init__(self, pretrained_file_path, elem_delim=' ', encoding='utf8',
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of ``vocabulary``, each with the vectors of ``token_embeddings`` (one
    embedding or a list) concatenated in order.

    Parameters
    ----------
    vocabulary : Vocabulary
        The tokens to index.
    token_embeddings : _TokenEmbedding or list of them
        The embeddings whose vectors are concatenated (unknown tokens get each embedding's
        unknown vector).
    """

    def __init__(self, vocabulary, token_embeddings):
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise MXNetAssertionError('The argument `vocabulary` must be an instance of '
                                      'mxnet.contrib.text.indexer.Vocabulary.')
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for embed in token_embeddings:
            if not isinstance(embed, _TokenEmbedding):
                raise MXNetAssertionError(
                    'The argument `token_embeddings` must be an instance or a list of instances '
                    'of `mxnet.contrib.text.embedding.TextEmbedding` whose embedding vectors '
                    'will be loaded or concatenated-then-loaded to map to the indexed tokens.')
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)
