"""WikiText language modelling data sets (``gluon.contrib.data.text``), as MXNet 1.9.1's.

A data set reads one segment's token file (``wiki.train.tokens``, ...), appends ``<eos>`` to
every non-empty line, indexes the tokens with a vocabulary (its own, built from the file, or
one given, such as the training segment's) and cuts the stream into samples of ``seq_len``
tokens: ``(data[i], label[i])``, the label being the data shifted by one token. The token files
come from MXNet's data repository (``$MXNET_GLUON_REPO``) as one zip archive per data set.
"""
import os
import shutil
import zipfile

import numpy as np

from ... import base, ndarray as nd
from ...data import dataset
from ...utils import _get_repo_file_url, check_sha1, download
from ..text.utils import count_tokens_from_str
from ..text.vocab import Vocabulary

__all__ = ['WikiText2', 'WikiText103']

EOS_TOKEN = '<eos>'


class _LanguageModelDataset(dataset._DownloadedDataset):
    """A data set of token indices with a vocabulary and the token frequencies."""

    def __init__(self, root, namespace, vocabulary):
        self._vocab = vocabulary
        self._counter = None
        self._namespace = namespace
        super().__init__(root, None)

    @property
    def vocabulary(self):
        """The vocabulary of the token indices (``idx_to_token``, ``to_indices``, ...)."""
        return self._vocab

    @property
    def frequencies(self):
        """collections.Counter: the tokens of this segment's file and how often they occur."""
        return self._counter

    def _build_vocab(self, content):
        if not self._counter:
            self._counter = count_tokens_from_str(content)
        if not self._vocab:
            self._vocab = Vocabulary(counter=self.frequencies, reserved_tokens=[EOS_TOKEN])


class _WikiText(_LanguageModelDataset):
    """The WikiText reading; subclasses name the archive and the segments' files
    (``_archive_file``, ``_data_file``: ``(file name, SHA-1)``)."""

    def __init__(self, root, namespace, segment, vocab, seq_len):
        if segment not in self._data_file:
            raise KeyError(f"{type(self).__name__}: segment must be one of "
                           f"{sorted(self._data_file)}, got {segment!r}")
        self._segment = segment
        self._seq_len = seq_len
        super().__init__(root, namespace, vocab)

    def _read_batch(self, filename):
        with open(filename, 'r', encoding='utf8') as fin:
            content = fin.read()
        self._build_vocab(content)
        lines = [line for line in (x.strip().split() for x in content.splitlines()) if line]
        tokens = [token for line in lines for token in line + [EOS_TOKEN]]
        indices = self.vocabulary.to_indices(tokens)
        return (np.array(indices[:-1], dtype=np.int32),
                np.array(indices[1:], dtype=np.int32))

    def _get_data(self):
        archive_file_name, archive_hash = self._archive_file
        data_file_name, data_hash = self._data_file[self._segment]
        path = os.path.join(self._root, data_file_name)
        if not os.path.exists(path) or not check_sha1(path, data_hash):
            url = _get_repo_file_url('gluon/dataset/' + self._namespace, archive_file_name)
            archive = download(url, path=self._root, sha1_hash=archive_hash)
            # the archive's files, without its folders, into root
            with zipfile.ZipFile(archive, 'r') as zf:
                for member in zf.namelist():
                    filename = os.path.basename(member)
                    if filename:
                        with zf.open(member) as source, \
                                open(os.path.join(self._root, filename), 'wb') as target:
                            shutil.copyfileobj(source, target)
        data, label = self._read_batch(path)
        # whole samples only: the tokens past the last multiple of seq_len are dropped
        usable = len(data) // self._seq_len * self._seq_len
        self._data = nd.array(data[:usable], dtype=data.dtype).reshape((-1, self._seq_len))
        self._label = nd.array(label[:usable], dtype=label.dtype).reshape((-1, self._seq_len))

    def __getitem__(self, idx):
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)


_DOC = """
    From https://blog.einstein.ai/the-wikitext-long-term-dependency-language-modeling-dataset/
    (license: Creative Commons Attribution-ShareAlike).

    Each sample is ``(data, label)``, two int32 vectors of ``seq_len`` token indices, the
    label being the next token of each; every line of text ends with the token '<eos>'.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/{name}
        The folder of the data files (downloaded there when missing).
    segment : str, default 'train'
        'train', 'validation' or 'test'.
    vocab : Vocabulary, optional
        The vocabulary that indexes the tokens (usually the training segment's
        ``vocabulary``); by default one is built from this segment: '<unk>' (0), '<eos>' (1),
        then the tokens from the most to the least frequent.
    seq_len : int, default 35
        The number of tokens of a sample, regardless of sentence boundaries.
"""


class WikiText2(_WikiText):
    """WikiText-2 word-level data set for language modelling, from Salesforce research."""
    __doc__ += _DOC.format(name='wikitext-2')

    _archive_file = ('wikitext-2-v1.zip', '3c914d17d80b1459be871a5039ac23e752a53cbe')
    _data_file = {'train': ('wiki.train.tokens', '863f29c46ef9d167fff4940ec821195882fe29d1'),
                  'validation': ('wiki.valid.tokens',
                                 '0418625c8b4da6e4b5c7a0b9e78d4ae8f7ee5422'),
                  'test': ('wiki.test.tokens', 'c7b8ce0aa086fb34dab808c5c49224211eb2b172')}

    def __init__(self, root=os.path.join(base.data_dir(), 'datasets', 'wikitext-2'),
                 segment='train', vocab=None, seq_len=35):
        super().__init__(root, 'wikitext-2', segment, vocab, seq_len)


class WikiText103(_WikiText):
    """WikiText-103 word-level data set for language modelling, from Salesforce research."""
    __doc__ += _DOC.format(name='wikitext-103')

    _archive_file = ('wikitext-103-v1.zip', '0aec09a7537b58d4bb65362fee27650eeaba625a')
    _data_file = {'train': ('wiki.train.tokens', 'b7497e2dfe77e72cfef5e3dbc61b7b53712ac211'),
                  'validation': ('wiki.valid.tokens',
                                 'c326ac59dc587676d58c422eb8a03e119582f92b'),
                  'test': ('wiki.test.tokens', '8a5befc548865cec54ed4273cf87dbbad60d1e47')}

    def __init__(self, root=os.path.join(base.data_dir(), 'datasets', 'wikitext-103'),
                 segment='train', vocab=None, seq_len=35):
        super().__init__(root, 'wikitext-103', segment, vocab, seq_len)
