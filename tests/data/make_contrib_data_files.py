"""Writes contrib_data.json: what MXNet 1.9.1's ``gluon.contrib.data`` gives for small inputs
(tests/contrib/test_data.py).

Run with the MXNet oracle's Python, from the repository root::

    .oracle/bin/python tests/data/make_contrib_data_files.py

* ``samplers``: ``[length, interval, rollover, list(IntervalSampler(...)), len(...)]``;
* ``texts``: two small token files in WikiText's style (``train``, ``valid``);
* ``wikitext``: per case, the data set ``WikiText2`` / ``WikiText103`` made from these files
  (put in place of the real ones, whose SHA-1 check is bypassed here): its length, samples,
  labels, vocabulary (``idx_to_token``) and token frequencies, for a segment, a ``seq_len``
  and a vocabulary (its own, or the training segment's);
* ``signatures``: of the public classes' ``__init__``.
"""
import inspect
import json
import os
import tempfile

from mxnet.gluon.contrib import data
from mxnet.gluon.contrib.data import text

OUT = os.path.dirname(os.path.abspath(__file__))

TEXTS = {
    'train': ' \n = Valkyria Chronicles III = \n \n Senjō no Valkyria 3 : <unk> Chronicles '
             '( Japanese : 戦場のヴァルキュリア3 ) is a tactical role @-@ playing video game . \n'
             ' The game began development in 2010 , carrying over a large portion of the work '
             'done on Valkyria Chronicles II . \n\n = = Gameplay = = \n It is the third game '
             'in the Valkyria series . \n',
    'valid': ' \n = Homarus gammarus = \n \n Homarus gammarus is a species of clawed lobster '
             'from the eastern Atlantic Ocean . \n It is the third game , a   large lobster '
             '.\n',
}
SAMPLERS = [(13, 3, True), (13, 3, False), (10, 1, True), (7, 7, True), (9, 4, True),
            (9, 4, False)]
# name: (class, segment, seq_len, vocabulary: None or the segment whose vocabulary is used)
CASES = {
    'train_5': ('WikiText2', 'train', 5, None),
    'train_7_103': ('WikiText103', 'train', 7, None),
    'valid_4_own': ('WikiText2', 'validation', 4, None),
    'valid_3_train_vocab': ('WikiText2', 'validation', 3, 'train'),
    'test_35': ('WikiText103', 'test', 35, None),
}
FILES = {'train': 'wiki.train.tokens', 'validation': 'wiki.valid.tokens',
         'test': 'wiki.test.tokens'}
CONTENT = {'train': 'train', 'validation': 'valid', 'test': 'train'}


def wikitext(root, name, segment, seq_len, vocab=None):
    return getattr(data.text, name)(root=root, segment=segment, seq_len=seq_len, vocab=vocab)


def main():
    # the files stand in for the real ones: their SHA-1 is taken as right
    text.check_sha1 = lambda filename, sha1_hash: True
    out = {'texts': TEXTS,
           'samplers': [[n, k, r, list(data.IntervalSampler(n, k, r)),
                         len(data.IntervalSampler(n, k, r))] for n, k, r in SAMPLERS],
           'signatures': {name: str(inspect.signature(cls.__init__)) for name, cls in
                          [('IntervalSampler', data.IntervalSampler),
                           ('WikiText2', data.text.WikiText2),
                           ('WikiText103', data.text.WikiText103)]},
           'cases': CASES, 'wikitext': {}}
    with tempfile.TemporaryDirectory() as root:
        for segment, name in FILES.items():
            with open(os.path.join(root, name), 'w', encoding='utf8') as f:
                f.write(TEXTS[CONTENT[segment]])
        for case, (name, segment, seq_len, vocab_of) in CASES.items():
            vocab = None
            if vocab_of:
                vocab = wikitext(root, name, vocab_of, seq_len).vocabulary
            ds = wikitext(root, name, segment, seq_len, vocab)
            out['wikitext'][case] = {
                'len': len(ds),
                'data': ds._data.asnumpy().tolist(), 'label': ds._label.asnumpy().tolist(),
                'dtype': str(ds[0][0].dtype.__name__) if len(ds) else None,
                'first': [ds[0][0].asnumpy().tolist(), ds[0][1].asnumpy().tolist()]
                if len(ds) else None,
                'idx_to_token': ds.vocabulary.idx_to_token,
                'frequencies': sorted(ds.frequencies.items()),
            }
    with open(os.path.join(OUT, 'contrib_data.json'), 'w', encoding='utf8') as f:
        json.dump(out, f, indent=1, ensure_ascii=False)


if __name__ == '__main__':
    main()
