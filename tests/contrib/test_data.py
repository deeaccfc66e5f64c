"""gluon.contrib.data (hybridlib/contrib/data/): IntervalSampler and the WikiText data sets
against MXNet 1.9.1 (tests/data/contrib_data.json, written by
tests/data/make_contrib_data_files.py), on small token files put where the data sets expect
them, extracted from an archive in place, or downloaded from a local HTTP server."""
import hashlib
import inspect
import io
import json
import os
import re
import zipfile

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import base, gluon
from hybridlib.gluon.contrib import data
from hybridlib.gluon.contrib.data import text
from local_http import server  # noqa: F401  (a fixture)

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, '..', 'data', 'contrib_data.json'), encoding='utf8') as _f:
    FIXTURE = json.load(_f)
TEXTS = FIXTURE['texts']
FILES = {'train': 'wiki.train.tokens', 'validation': 'wiki.valid.tokens',
         'test': 'wiki.test.tokens'}
# which text stands for each segment's file (as in the generator)
CONTENT = {'train': 'train', 'validation': 'valid', 'test': 'train'}


def sha1(blob):
    return hashlib.sha1(blob).hexdigest()


def file_blob(segment):
    return TEXTS[CONTENT[segment]].encode('utf8')


def archive_blob(folder):
    """A zip like MXNet's: the token files in a folder."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as zf:
        zf.writestr(folder + '/', '')
        for segment, name in FILES.items():
            zf.writestr(f'{folder}/{name}', file_blob(segment))
    return buffer.getvalue()


@pytest.fixture
def small_files(monkeypatch):
    """The data sets' file tables with the SHA-1s of the small files (and archives)."""
    archives = {}
    for cls, folder in ((text.WikiText2, 'wikitext-2'), (text.WikiText103, 'wikitext-103')):
        blob = archive_blob(folder)
        archives[cls] = blob
        monkeypatch.setattr(cls, '_archive_file', (cls._archive_file[0], sha1(blob)))
        monkeypatch.setattr(cls, '_data_file', {
            segment: (name, sha1(file_blob(segment))) for segment, (name, _) in
            cls._data_file.items()})
    return archives


def place_files(root):
    os.makedirs(root, exist_ok=True)
    for segment, name in FILES.items():
        with open(os.path.join(root, name), 'wb') as f:
            f.write(file_blob(segment))


# -------------------------------------------------------------------------------------------------
# Names and signatures
# -------------------------------------------------------------------------------------------------

def test_exports_and_signatures_as_mxnet():
    assert text.__all__ == ['WikiText2', 'WikiText103']
    assert data.sampler.__all__ == ['IntervalSampler']
    assert data.IntervalSampler is data.sampler.IntervalSampler
    assert mx.contrib.data is data and gluon.contrib.data.text is text
    signatures = FIXTURE['signatures']
    assert str(inspect.signature(data.IntervalSampler.__init__)) == \
        signatures['IntervalSampler']
    for cls, folder in ((text.WikiText2, 'wikitext-2'), (text.WikiText103, 'wikitext-103')):
        signature = inspect.signature(cls.__init__)
        # the default root is MXNet's data folder of the machine
        assert signature.parameters['root'].default == \
            os.path.join(base.data_dir(), 'datasets', folder)
        assert re.sub("root='[^']*'", 'root=ROOT', str(signature)) == \
            re.sub("root='[^']*'", 'root=ROOT', signatures[cls.__name__])


def test_mxnets_urls_and_hashes():
    assert text.WikiText2._archive_file == ('wikitext-2-v1.zip',
                                            '3c914d17d80b1459be871a5039ac23e752a53cbe')
    assert text.WikiText2._data_file['validation'] == \
        ('wiki.valid.tokens', '0418625c8b4da6e4b5c7a0b9e78d4ae8f7ee5422')
    assert text.WikiText103._archive_file == ('wikitext-103-v1.zip',
                                              '0aec09a7537b58d4bb65362fee27650eeaba625a')
    assert text.WikiText103._data_file['test'] == \
        ('wiki.test.tokens', '8a5befc548865cec54ed4273cf87dbbad60d1e47')


# -------------------------------------------------------------------------------------------------
# IntervalSampler
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('length, interval, rollover, expected, size', FIXTURE['samplers'])
def test_interval_sampler_as_mxnet(length, interval, rollover, expected, size):
    sampler = data.IntervalSampler(length, interval, rollover)
    assert list(sampler) == expected and len(sampler) == size
    assert list(sampler) == expected            # a new pass, the same order


def test_interval_sampler_checks_and_feeds_a_dataloader():
    with pytest.raises(AssertionError, match='Interval 5 must be smaller than or equal to '
                                             'length 4'):
        data.IntervalSampler(4, 5)
    dataset = gluon.data.ArrayDataset(np.arange(6, dtype='float32'))
    loader = gluon.data.DataLoader(dataset, batch_size=3,
                                   sampler=data.IntervalSampler(6, 2))
    assert [b.asnumpy().tolist() for b in loader] == [[0, 2, 4], [1, 3, 5]]


# -------------------------------------------------------------------------------------------------
# WikiText: MXNet's samples, labels, vocabularies and frequencies
# -------------------------------------------------------------------------------------------------

def make(root, name, segment, seq_len, vocab=None):
    return getattr(text, name)(root=root, segment=segment, seq_len=seq_len, vocab=vocab)


@pytest.mark.parametrize('case', sorted(FIXTURE['cases']))
def test_wikitext_from_files_in_place_as_mxnet(case, small_files, tmp_path):
    name, segment, seq_len, vocab_of = FIXTURE['cases'][case]
    expected = FIXTURE['wikitext'][case]
    root = str(tmp_path / 'wikitext')
    place_files(root)
    vocab = make(root, name, vocab_of, seq_len).vocabulary if vocab_of else None
    ds = make(root, name, segment, seq_len, vocab)
    assert len(ds) == expected['len']
    assert ds._data.asnumpy().tolist() == expected['data']
    assert ds._label.asnumpy().tolist() == expected['label']
    sample, label = ds[0]
    assert sample.dtype == np.int32 and label.dtype == np.int32
    assert [sample.asnumpy().tolist(), label.asnumpy().tolist()] == expected['first']
    assert ds.vocabulary.idx_to_token == expected['idx_to_token']
    assert sorted(ds.frequencies.items()) == [tuple(f) for f in expected['frequencies']]
    if vocab is not None:
        assert ds.vocabulary is vocab


def test_wikitext_vocabulary(small_files, tmp_path):
    root = str(tmp_path)
    place_files(root)
    vocab = text.WikiText2(root=root, seq_len=5).vocabulary
    assert vocab.unknown_token == '<unk>' and vocab.reserved_tokens == ['<eos>']
    assert vocab.to_indices(['<unk>', '<eos>', 'Valkyria', 'lobster']) == [0, 1, 3, 0]
    assert vocab.to_indices('=') == 2
    assert vocab.to_tokens([3, 1]) == ['Valkyria', '<eos>'] and vocab.to_tokens(2) == '='
    assert vocab.token_to_idx['Chronicles'] == 5 and len(vocab) == len(vocab.idx_to_token)
    with pytest.raises(ValueError, match='Token index 999'):
        vocab.to_tokens(999)


def test_wikitext_batches_a_dataloader(small_files, tmp_path):
    root = str(tmp_path)
    place_files(root)
    ds = text.WikiText2(root=root, seq_len=4)
    loader = gluon.data.DataLoader(ds, batch_size=2, sampler=data.IntervalSampler(len(ds), 2),
                                   last_batch='discard')
    x, y = next(iter(loader))
    assert x.shape == (2, 4) and y.shape == (2, 4) and x.dtype == np.int32
    # the label is the next token
    np.testing.assert_array_equal(x.asnumpy()[:, 1:], y.asnumpy()[:, :-1])


def test_wikitext_refuses_an_unknown_segment(small_files, tmp_path):
    with pytest.raises(KeyError, match="segment must be one of"):
        text.WikiText2(root=str(tmp_path), segment='dev')


# -------------------------------------------------------------------------------------------------
# WikiText: the archive, in place and downloaded
# -------------------------------------------------------------------------------------------------

def check_train_as_mxnet(ds):
    expected = FIXTURE['wikitext']['train_5']
    assert ds._data.asnumpy().tolist() == expected['data']
    assert ds.vocabulary.idx_to_token == expected['idx_to_token']


def test_wikitext_extracts_its_archive(small_files, tmp_path):
    """Missing token files (or ones with another SHA-1) come from the archive, its folder
    dropped."""
    root = tmp_path / 'wikitext-2'
    root.mkdir()
    (root / 'wikitext-2-v1.zip').write_bytes(small_files[text.WikiText2])
    (root / 'wiki.train.tokens').write_text('stale content\n')
    check_train_as_mxnet(text.WikiText2(root=str(root), seq_len=5))
    assert sorted(os.listdir(root)) == ['wiki.test.tokens', 'wiki.train.tokens',
                                        'wiki.valid.tokens', 'wikitext-2-v1.zip']
    assert (root / 'wiki.train.tokens').read_bytes() == file_blob('train')


@pytest.mark.parametrize('cls, folder', [(text.WikiText2, 'wikitext-2'),
                                         (text.WikiText103, 'wikitext-103')])
def test_wikitext_downloads_from_the_repository(cls, folder, small_files, server,
                                                tmp_path, capsys):
    archive = f'/gluon/dataset/{folder}/{cls._archive_file[0]}'
    server.routes[archive] = small_files[cls]
    root = tmp_path / folder
    ds = cls(root=str(root), seq_len=5)
    check_train_as_mxnet(ds)
    assert server.requests == [archive]
    assert (root / cls._archive_file[0]).read_bytes() == small_files[cls]
    # everything in place: no second download
    cls(root=str(root), segment='validation', seq_len=5)
    assert server.requests == [archive]
    capsys.readouterr()


def test_wikitext_download_with_a_wrong_hash_fails(small_files, server, tmp_path,
                                                   monkeypatch, capsys):
    server.routes['/gluon/dataset/wikitext-2/wikitext-2-v1.zip'] = b'not the archive'
    with pytest.raises(UserWarning, match='SHA-1'):
        text.WikiText2(root=str(tmp_path))
    assert not os.path.exists(tmp_path / 'wikitext-2-v1.zip')
    capsys.readouterr()
