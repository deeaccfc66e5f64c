"""Sentence data for the legacy RNN API (``mx.rnn.io``), as MXNet 1.9.1's: ``encode_sentences``
turns token lists into integer lists with a vocabulary, and ``BucketSentenceIter`` serves them
in batches of sentences padded to a few lengths (buckets), for language models whose label is
the next token.

``BucketSentenceIter`` shuffles as MXNet's does, with Python's ``random`` (the order of the
batches) and NumPy's global generator (the sentences within a bucket), so seeding both gives
MXNet's batches.
"""
import bisect
import random

import numpy as np

from .. import ndarray
from ..base import MXNetAssertionError
from ..io import DataBatch, DataDesc, DataIter

__all__ = ['encode_sentences', 'BucketSentenceIter']


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key='\n', start_label=0,
                     unknown_token=None):
    """Encode sentences as lists of integers, adding unknown tokens to the vocabulary.

    Parameters
    ----------
    sentences : list of list of str
        The sentences, each a list of tokens.
    vocab : dict of str to int, optional
        The vocabulary to start from; a new one (``{invalid_key: invalid_label}``) when None.
        A given vocabulary grows only by ``unknown_token``.
    invalid_label : int, default -1
        The index of the invalid token (end of sentence); new indices skip it.
    invalid_key : str, default '\\n'
        The invalid token, in a new vocabulary.
    start_label : int, default 0
        The first index given to a new token.
    unknown_token : str, optional
        What a token missing from a given vocabulary becomes; without it such a token is an
        error.

    Returns
    -------
    result : list of list of int
        The encoded sentences.
    vocab : dict of str to int
        The vocabulary (``vocab`` itself when given).
    """
    idx = start_label
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    res = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise MXNetAssertionError(f'Unknown token {word}: it is not in the given '
                                         'vocabulary; pass unknown_token to map such tokens '
                                         'to one entry')
                if idx == invalid_label:
                    idx += 1
                if unknown_token:
                    word = unknown_token
                vocab[word] = idx
                idx += 1
            coded.append(vocab[word])
        res.append(coded)
    return res, vocab


class BucketSentenceIter(DataIter):
    """Batches of encoded sentences, grouped by length into buckets; the label at each step
    is the next token (``invalid_label`` after the last).

    Each sentence goes to the smallest bucket that holds it, padded with ``invalid_label``;
    longer sentences are discarded (with a printed warning, as MXNet's). A batch comes from
    one bucket; its ``bucket_key`` is the bucket's length. Sentences that do not fill a whole
    batch of their bucket are left out. ``reset()`` shuffles the batches and the sentences of
    each bucket.

    Parameters
    ----------
    sentences : list of list of int
        Encoded sentences (``encode_sentences``).
    batch_size : int
        Sentences per batch.
    buckets : list of int, optional
        The bucket lengths (sorted in place). By default every length that at least
        ``batch_size`` sentences have.
    invalid_label : int, default -1
        The padding and the label after a sentence's end.
    data_name : str, default 'data'
    label_name : str, default 'softmax_label'
    dtype : str, default 'float32'
        The data type of the arrays.
    layout : {'NT', 'TN'}, default 'NT'
        Batches as (batch_size, length) or (length, batch_size).
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1, data_name='data',
                 label_name='softmax_label', dtype='float32', layout='NT'):
        super().__init__()
        if not buckets:
            buckets = [i for i, j in enumerate(np.bincount([len(s) for s in sentences]))
                       if j >= batch_size]
        buckets.sort()

        ndiscard = 0
        self.data = [[] for _ in buckets]
        used = [False] * len(buckets)
        for sent in sentences:
            buck = bisect.bisect_left(buckets, len(sent))
            if buck == len(buckets):
                ndiscard += 1
                continue
            used[buck] = True
            buff = np.full((buckets[buck],), invalid_label, dtype=dtype)
            buff[:len(sent)] = sent
            self.data[buck].append(buff)
        buckets = [length for length, u in zip(buckets, used) if u]
        self.data = [np.asarray(i, dtype=dtype) for i in self.data if i]

        print('WARNING: discarded %d sentences longer than the largest bucket.' % ndiscard)

        self.batch_size = batch_size
        self.buckets = buckets
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.nddata = []
        self.ndlabel = []
        self.major_axis = layout.find('N')
        self.layout = layout
        if not buckets:
            raise ValueError('BucketSentenceIter: no sentence fits a bucket; give buckets as '
                             'long as the sentences, or a batch_size that some length has')
        self.default_bucket_key = max(buckets)

        if self.major_axis == 0:
            shape = (batch_size, self.default_bucket_key)
        elif self.major_axis == 1:
            shape = (self.default_bucket_key, batch_size)
        else:
            raise ValueError(f'Invalid layout {layout}: Must by NT (batch major) or TN (time '
                             'major)')
        self.provide_data = [DataDesc(name=self.data_name, shape=shape, layout=self.layout)]
        self.provide_label = [DataDesc(name=self.label_name, shape=shape, layout=self.layout)]

        self.idx = []
        for i, buck in enumerate(self.data):
            self.idx.extend([(i, j) for j in range(0, len(buck) - batch_size + 1, batch_size)])
        self.curr_idx = 0
        self.reset()

    def reset(self):
        """Back to the first batch, with the batches and each bucket's sentences shuffled."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for buck in self.data:
            np.random.shuffle(buck)
        self.nddata = []
        self.ndlabel = []
        for buck in self.data:
            label = np.empty_like(buck)
            label[:, :-1] = buck[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(buck, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        """The next batch; StopIteration after the last."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape,
                                                 layout=self.layout)])
