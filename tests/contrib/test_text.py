"""mx.contrib.text (hybridlib/contrib/text): token counting, Vocabulary, the token embeddings
(CustomEmbedding, CompositeEmbedding, and GloVe/FastText downloaded from a local HTTP server on
127.0.0.1), registration and creation, against MXNet 1.9.1's results
(tests/data/make_contrib_misc_files.py). Nothing is written outside ``tmp_path``."""
import collections
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import warnings
import zipfile

import numpy as np
import pytest

import hybridlib as mx
from hybridlib import nd
from hybridlib.contrib import text
from local_http import server  # noqa: F401  (a fixture)

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data')
with open(os.path.join(DATA, 'contrib_misc-facts.json')) as _f:
    FACTS = json.load(_f)['text']


def sha1(data):
    return hashlib.sha1(data).hexdigest()


def digest(table):
    return [len(table), sha1(json.dumps(table, sort_keys=True).encode())]


def zipped(name, content):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as zf:
        zf.writestr(name, content)
    return buffer.getvalue()


def tarred(name, content):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode='w:gz') as tar:
        info = tarfile.TarInfo(name)
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def check_embedding(embedding, facts):
    assert embedding.idx_to_token == facts['idx_to_token']
    assert embedding.token_to_idx == facts['token_to_idx']
    assert embedding.unknown_token == facts['unknown_token']
    assert embedding.reserved_tokens == facts['reserved_tokens']
    assert len(embedding) == facts['len']
    assert embedding.vec_len == facts['vec_len']
    assert isinstance(embedding.idx_to_vec, nd.NDArray)
    assert embedding.idx_to_vec.dtype == np.float32
    np.testing.assert_array_equal(embedding.idx_to_vec.asnumpy(),
                                  np.array(facts['idx_to_vec'], np.float32))


# -- utils, Vocabulary ---------------------------------------------------------------------------

def test_count_tokens_as_mxnet():
    count = text.utils.count_tokens_from_str
    source = FACTS['text']
    assert count(source) == collections.Counter(FACTS['count'])
    assert count(source, to_lower=True) == collections.Counter(FACTS['count_lower'])
    assert count('*a*b*\n*b*c*\n', '\\*', '\\n') == collections.Counter(FACTS['count_regex'])
    counter = collections.Counter(count(source, to_lower=True))
    assert count('is x', counter_to_update=counter) is counter
    assert counter == collections.Counter(FACTS['update'])


@pytest.mark.parametrize('name', sorted(FACTS['vocab']))
def test_vocabulary_as_mxnet(name):
    facts = FACTS['vocab'][name]
    counter = text.utils.count_tokens_from_str(FACTS['text']) if facts['with_counter'] else None
    kwargs = dict(facts['kwargs'])
    kwargs.pop('counter', None)
    v = text.vocab.Vocabulary(counter, **kwargs)
    assert v.idx_to_token == facts['idx_to_token']
    assert v.token_to_idx == facts['token_to_idx']
    assert v.unknown_token == facts['unknown_token']
    assert v.reserved_tokens == facts['reserved_tokens']
    assert len(v) == facts['len']
    assert v.to_indices(['good', 'missing', 'Life']) == facts['to_indices']
    assert v.to_indices('great') == facts['to_index']
    assert v.to_tokens([0, len(v) - 1]) == facts['to_tokens']
    assert v.to_tokens(0) == facts['to_token']


def test_vocabulary_errors():
    with pytest.raises(AssertionError, match='min_freq'):
        text.vocab.Vocabulary(min_freq=0)
    with pytest.raises(AssertionError, match='unknown_token'):
        text.vocab.Vocabulary(reserved_tokens=['<unk>'])
    with pytest.raises(AssertionError, match='duplicate'):
        text.vocab.Vocabulary(reserved_tokens=['a', 'a'])
    with pytest.raises(AssertionError, match='collections.Counter'):
        text.vocab.Vocabulary({'a': 1})
    with pytest.raises(ValueError, match='Token index 5 .* is invalid'):
        text.vocab.Vocabulary().to_tokens(5)
    # tokens of any hashable type, a tuple being one token
    v = text.vocab.Vocabulary(collections.Counter([(1, 2), (1, 2), (3,)]), unknown_token=())
    assert v.idx_to_token == [(), (1, 2), (3,)] and v.to_indices((3,)) == 2


# -- embeddings from files -----------------------------------------------------------------------

@pytest.fixture
def files(tmp_path):
    path = tmp_path / 'embed.txt'
    path.write_text(FACTS['embedding_file'])
    csv = tmp_path / 'embed.csv'
    csv.write_text(FACTS['embedding_file_no_unk'])
    return str(path), str(csv)


def test_custom_embedding_as_mxnet(files):
    path, _ = files
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        e = text.embedding.CustomEmbedding(path)
    # the header-like line and the repeated token, as MXNet words them
    assert [str(w.message) for w in caught] == FACTS['custom_warnings']
    check_embedding(e, FACTS['custom'])
    np.testing.assert_array_equal(e.get_vecs_by_tokens(['hello', 'THE', 'nope']).asnumpy(),
                                  FACTS['custom_vecs'])
    np.testing.assert_array_equal(
        e.get_vecs_by_tokens(['hello', 'THE', 'World'], lower_case_backup=True).asnumpy(),
        FACTS['custom_vecs_lower'])
    vec = e.get_vecs_by_tokens('world')
    assert vec.shape == (3,)
    np.testing.assert_array_equal(vec.asnumpy(), FACTS['custom_vec'])
    before = e.idx_to_vec
    e.update_token_vectors('hello', nd.array([7, 8, 9]))
    e.update_token_vectors(['<unk>', 'world'], nd.array([[0, 0, 1], [1, 0, 0]]))
    assert e.idx_to_vec is before                      # updated in place
    np.testing.assert_array_equal(e.idx_to_vec.asnumpy(), FACTS['custom_updated'])
    with pytest.raises(ValueError) as err:
        e.update_token_vectors('nope', nd.array([1, 2, 3]))
    assert str(err.value) == FACTS['update_unknown_error']
    with pytest.raises(AssertionError, match='must be equal'):
        e.update_token_vectors(['hello', 'world'], nd.ones((2, 4)))
    with pytest.raises(AssertionError, match='2-D NDArray'):
        e.update_token_vectors(['hello', 'world'], nd.ones((6,)))


def test_custom_embedding_options_as_mxnet(files):
    path, csv = files
    e = text.embedding.CustomEmbedding(csv, elem_delim=',', init_unknown_vec=nd.ones)
    check_embedding(e, FACTS['custom_no_unk'])
    v = text.vocab.Vocabulary(collections.Counter(['world', 'hello', 'hello', 'zzz', 'c']),
                              reserved_tokens=['<pad>'])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        e3 = text.embedding.CustomEmbedding(path, vocabulary=v)
    check_embedding(e3, FACTS['custom_vocab'])
    check_embedding(text.embedding.CompositeEmbedding(v, [e3, e]), FACTS['composite'])
    check_embedding(text.embedding.CompositeEmbedding(v, e), FACTS['composite_single'])
    with pytest.raises(ValueError, match='valid path'):
        text.embedding.CustomEmbedding(path + '.missing')
    with pytest.raises(AssertionError, match='Vocabulary'):
        text.embedding.CompositeEmbedding(['a'], e)


def test_custom_embedding_file_errors(tmp_path):
    bad = tmp_path / 'bad.txt'
    bad.write_text('a 1 2\nb 1 2 3\n')
    with pytest.raises(AssertionError, match='dimension of token b is 3'):
        text.embedding.CustomEmbedding(str(bad))
    bad.write_text('a 1 2\nlonely\n')
    with pytest.raises(AssertionError, match='At line 2 .* unexpected'):
        text.embedding.CustomEmbedding(str(bad))


def test_tokens_indexed_before_the_file_keep_their_rows(tmp_path):
    # MXNet gives reserved tokens no rows, so every vector after them lands one token off
    path = tmp_path / 'e.txt'
    path.write_text('a 1 2\nb 3 4\n')
    e = text.embedding.CustomEmbedding(str(path), reserved_tokens=['<pad>'],
                                       init_unknown_vec=nd.ones)
    assert e.idx_to_token == ['<unk>', '<pad>', 'a', 'b']
    np.testing.assert_array_equal(e.idx_to_vec.asnumpy(), [[1, 1], [1, 1], [1, 2], [3, 4]])
    np.testing.assert_array_equal(e.get_vecs_by_tokens('b').asnumpy(), [3, 4])


# -- pre-trained files ---------------------------------------------------------------------------

def test_pretrained_tables_as_mxnet(monkeypatch):
    names = text.embedding.get_pretrained_file_names()
    assert digest({k: sorted(names[k]) for k in ('glove', 'fasttext')}) == FACTS['pretrained']
    assert text.embedding.get_pretrained_file_names('glove') == FACTS['pretrained_glove']
    assert len(names['fasttext']) == FACTS['pretrained_fasttext_count']
    GloVe, FastText = text.embedding.GloVe, text.embedding.FastText
    assert GloVe.pretrained_archive_name_sha1 == FACTS['glove_archive_sha1']
    assert GloVe.pretrained_file_name_sha1 == FACTS['glove_file_sha1']
    assert digest(FastText.pretrained_archive_name_sha1) == FACTS['fasttext_archive_sha1']
    assert digest(FastText.pretrained_file_name_sha1) == FACTS['fasttext_file_sha1']
    for name, value in FACTS['fasttext_file_sha1_sample'].items():
        assert FastText.pretrained_file_name_sha1[name] == value
    monkeypatch.delenv('MXNET_GLUON_REPO', raising=False)
    assert GloVe._get_pretrained_file_url('glove.6B.50d.txt') == FACTS['glove_url']
    assert GloVe._get_pretrained_file_url('glove.twitter.27B.25d.txt') == \
        FACTS['glove_twitter_url']
    assert FastText._get_pretrained_file_url('wiki.simple.vec') == FACTS['fasttext_url']
    with pytest.raises(KeyError) as err:
        text.embedding.create('glove', pretrained_file_name='nope.txt')
    assert str(err.value) == FACTS['bad_file_error']
    with pytest.raises(KeyError, match='Cannot find `embedding_name` GloVe'):
        text.embedding.get_pretrained_file_names('GloVe')
    with pytest.raises(AssertionError, match='not registered'):
        text.embedding.create('word2vec')


GLOVE_TEXT = b'the 0.5 -1 2\n, 1 1 1\n<unk> 9 9 9\nworld 0 0 1\n'


def serve_glove(server, monkeypatch):
    """glove.6B.zip on the server, with tables of its (made-up) hashes."""
    archive = zipped('glove.6B.50d.txt', GLOVE_TEXT)
    server.routes['/gluon/embeddings/glove/glove.6B.zip'] = archive
    GloVe = text.embedding.GloVe
    monkeypatch.setitem(GloVe.pretrained_archive_name_sha1, 'glove.6B.zip', sha1(archive))
    monkeypatch.setitem(GloVe.pretrained_file_name_sha1, 'glove.6B.50d.txt', sha1(GLOVE_TEXT))
    return archive


def test_glove_downloads_extracts_and_loads(server, monkeypatch, tmp_path):
    serve_glove(server, monkeypatch)
    e = text.embedding.create('glove', pretrained_file_name='glove.6B.50d.txt')
    assert isinstance(e, text.embedding.GloVe)
    folder = tmp_path / 'mxnet_home' / 'embeddings' / 'glove'
    assert sorted(os.listdir(folder)) == ['glove.6B.50d.txt', 'glove.6B.zip']
    assert e.idx_to_token == ['<unk>', 'the', ',', 'world'] and e.vec_len == 3
    np.testing.assert_array_equal(e.idx_to_vec.asnumpy(),
                                  [[9, 9, 9], [0.5, -1, 2], [1, 1, 1], [0, 0, 1]])
    # a good copy is not downloaded again; a damaged one is extracted again from the archive,
    # and a damaged archive is downloaded again
    text.embedding.GloVe('glove.6B.50d.txt')
    assert server.hits['/gluon/embeddings/glove/glove.6B.zip'] == 1
    (folder / 'glove.6B.50d.txt').write_bytes(b'the 1 1 1\n')
    text.embedding.GloVe('glove.6B.50d.txt')
    assert server.hits['/gluon/embeddings/glove/glove.6B.zip'] == 1
    assert (folder / 'glove.6B.50d.txt').read_bytes() == GLOVE_TEXT
    (folder / 'glove.6B.50d.txt').write_bytes(b'the 1 1 1\n')
    (folder / 'glove.6B.zip').write_bytes(b'not a zip')
    v = text.vocab.Vocabulary(collections.Counter(['world', 'new']))
    e = text.embedding.GloVe('glove.6B.50d.txt', vocabulary=v)
    assert server.hits['/gluon/embeddings/glove/glove.6B.zip'] == 2
    assert e.idx_to_token == ['<unk>', 'new', 'world']
    np.testing.assert_array_equal(e.idx_to_vec.asnumpy(), [[9, 9, 9], [9, 9, 9], [0, 0, 1]])


def test_glove_root_and_failed_download(server, monkeypatch, tmp_path):
    archive = serve_glove(server, monkeypatch)
    root = tmp_path / 'elsewhere'
    text.embedding.GloVe('glove.6B.50d.txt', embedding_root=str(root))
    assert (root / 'glove' / 'glove.6B.50d.txt').read_bytes() == GLOVE_TEXT
    # a corrupt archive is refused after the retries, and nothing is kept
    server.routes['/gluon/embeddings/glove/glove.6B.zip'] = archive[:-1] + b'!'
    with pytest.raises(UserWarning, match='glove.6B.zip'):
        text.embedding.GloVe('glove.6B.50d.txt', embedding_root=str(tmp_path / 'other'))
    assert not (tmp_path / 'other' / 'glove' / 'glove.6B.zip').exists()


def test_fasttext_skips_its_header(server, monkeypatch):
    content = b'3 4\nhello 1 2 3 4\nworld 5 6 7 8\n</s> 0 0 0 1\n'
    archive = zipped('wiki.simple.vec', content)
    server.routes['/gluon/embeddings/fasttext/wiki.simple.zip'] = archive
    FastText = text.embedding.FastText
    monkeypatch.setitem(FastText.pretrained_archive_name_sha1, 'wiki.simple.zip', sha1(archive))
    monkeypatch.setitem(FastText.pretrained_file_name_sha1, 'wiki.simple.vec', sha1(content))
    with pytest.warns(UserWarning, match='token 3 with 1-dimensional vector .* header'):
        e = text.embedding.create('FastText', init_unknown_vec=nd.ones)
    assert e.idx_to_token == ['<unk>', 'hello', 'world', '</s>']
    np.testing.assert_array_equal(e.get_vecs_by_tokens(['<unk>', 'world']).asnumpy(),
                                  [[1, 1, 1, 1], [5, 6, 7, 8]])


def test_registered_embedding_from_a_tar_archive(server, monkeypatch):
    content = b'x 1 0\ny 0 1\n'
    archive = tarred('tiny.txt', content)

    @text.embedding.register
    class TinyEmbed(text.embedding._TokenEmbedding):
        pretrained_archive_name_sha1 = {'tiny.tar.gz': sha1(archive)}
        pretrained_file_name_sha1 = {'tiny.txt': sha1(content)}

        @classmethod
        def _get_download_file_name(cls, pretrained_file_name):
            return 'tiny.tar.gz'

        def __init__(self, pretrained_file_name='tiny.txt', embedding_root=None, **kwargs):
            super().__init__(**kwargs)
            root = embedding_root or os.path.join(mx.base.data_dir(), 'embeddings')
            self._load_embedding(self._get_pretrained_file(root, pretrained_file_name), ' ',
                                 nd.zeros)

    server.routes['/gluon/embeddings/tinyembed/tiny.tar.gz'] = archive
    assert 'tiny.txt' in text.embedding.get_pretrained_file_names()['tinyembed']
    e = text.embedding.create('tinyembed')
    assert isinstance(e, TinyEmbed) and e.idx_to_token == ['<unk>', 'x', 'y']
    np.testing.assert_array_equal(e.idx_to_vec.asnumpy(), [[0, 0], [1, 0], [0, 1]])


def test_d2l_style_script_under_the_mxnet_alias(tmp_path):
    """Dive into Deep Learning's ``from mxnet.contrib import text`` usage, run unchanged."""
    (tmp_path / 'vec.txt').write_text('good 1 2\nbad -1 -2\n')
    script = tmp_path / 'script.py'
    script.write_text(
        'import collections\n'
        'from mxnet import nd\n'
        'from mxnet.contrib import text\n'
        'counter = collections.Counter(["good", "good", "movie", "bad"])\n'
        'vocab = text.vocab.Vocabulary(counter, min_freq=1, reserved_tokens=["<pad>"])\n'
        'embed = text.embedding.CustomEmbedding("vec.txt", vocabulary=vocab)\n'
        'print(type(embed).__module__, vocab.idx_to_token)\n'
        'print(embed.get_vecs_by_tokens(["good", "movie", "bad"]).asnumpy().tolist())\n')
    result = subprocess.run([sys.executable, '-m', 'hybridlib', str(script)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == ["hybridlib.contrib.text.embedding ['<unk>', '<pad>', 'good', 'bad', "
                     "'movie']", '[[1.0, 2.0], [0.0, 0.0], [-1.0, -2.0]]']
