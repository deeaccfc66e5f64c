"""Writes the MXNet 1.9.1 fixtures of the contrib operator, BatchNormReLU and contrib.text
tests (tests/ops/test_contrib_misc.py, tests/nn/test_batchnorm_relu.py,
tests/contrib/test_text.py).

Run with the MXNet oracle's Python, from the repository root::

    .oracle/bin/python tests/data/make_contrib_misc_files.py

It writes, under tests/data/:

* ``contrib_misc-numbers.npz``: per case ``CASE/in0, in1, ...`` (the inputs), ``CASE/out0,
  ...`` (the outputs), ``CASE/cot0, ...`` (the head gradients), ``CASE/grad0, ...`` (the
  gradients of the inputs the case differentiates, in that order) and ``CASE/aux0, ...`` (the
  auxiliary inputs after the call). The inputs are float32 unless a name says otherwise.
* ``contrib_misc-facts.json``: what is not an array: allclose results, the control-flow
  results' structure, BatchNormReLU's repr, parameter names and exported graph, and
  contrib.text's vocabularies, embeddings, file tables and URLs.
"""
import collections
import hashlib
import json
import os
import tempfile
import warnings

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd, sym
from mxnet.contrib import text

OUT = os.path.dirname(os.path.abspath(__file__))
NUMBERS = {}
FACTS = {}


def as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def record(case, fn, inputs, grad=(), train=True, backward_train=None, aux=(), cots=None):
    """Runs ``fn(*inputs)`` recorded, backward with seeded head gradients; stores it all."""
    rng = np.random.RandomState(len(NUMBERS) + 1)
    arrays = [nd.array(x, dtype=x.dtype) for x in inputs]
    for i in grad:
        arrays[i].attach_grad()
    with autograd.record(train_mode=train):
        outs = as_list(fn(*arrays))
    if cots is None:
        cots = [rng.uniform(-1, 1, o.shape).astype(o.dtype) for o in outs]
    if grad:
        autograd.backward(outs, [nd.array(c, dtype=c.dtype) for c in cots],
                          train_mode=train if backward_train is None else backward_train)
    for i, x in enumerate(inputs):
        NUMBERS[f'{case}/in{i}'] = x
    for i, o in enumerate(outs):
        NUMBERS[f'{case}/out{i}'] = o.asnumpy()
        NUMBERS[f'{case}/cot{i}'] = cots[i]
    for k, i in enumerate(grad):
        NUMBERS[f'{case}/grad{k}'] = arrays[i].grad.asnumpy()
    for k, i in enumerate(aux):
        NUMBERS[f'{case}/aux{k}'] = arrays[i].asnumpy()


def f32(rng, *shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(np.float32)


# -------------------------------------------------------------------------------------------------
# operators
# -------------------------------------------------------------------------------------------------

def batch_norms():
    rng = np.random.RandomState(0)
    x = f32(rng, 3, 2, 4) * 2
    params = [f32(rng, 2, low=0.5, high=1.5), f32(rng, 2), f32(rng, 2, low=-0.3, high=0.3),
              f32(rng, 2, low=0.5, high=1.5)]
    bn = [x] + params
    record('sync_bn_train', lambda *a: nd.contrib.SyncBatchNorm(
        *a, key='k', fix_gamma=False, output_mean_var=True, momentum=0.8),
           bn, grad=(0, 1, 2), aux=(3, 4), cots=None)
    record('sync_bn_predict', lambda *a: nd.contrib.SyncBatchNorm(*a, key='k', eps=0.01),
           bn, train=False)
    x4 = f32(rng, 2, 3, 2, 2) * 2
    p4 = [f32(rng, 3, low=0.5, high=1.5), f32(rng, 3), f32(rng, 3, low=-0.3, high=0.3),
          f32(rng, 3, low=0.5, high=1.5)]
    bn4 = [x4] + p4
    for case, attrs, train, backward_train in (
            ('bn_relu_train', dict(fix_gamma=False), True, True),
            ('bn_relu_train_fix_gamma', {}, True, True),
            ('bn_relu_train_backward_predict', dict(fix_gamma=False), True, False),
            ('bn_relu_global_stats', dict(fix_gamma=False, use_global_stats=True), True,
             True)):
        # (MXNet's CPU kernel is MKL-DNN's, which takes the channel axis 1 only)
        record(case, lambda *a, attrs=attrs: nd.contrib.BatchNormWithReLU(*a, **attrs),
               bn4, grad=(0, 1, 2), train=train, backward_train=backward_train, aux=(3, 4))
    record('bn_relu_predict', lambda *a: nd.contrib.BatchNormWithReLU(
        *a, fix_gamma=False, output_mean_var=True), bn4, train=False)


def indexing():
    rng = np.random.RandomState(1)
    weight = f32(rng, 5, 3)
    # the weight's gradient is row_sparse in MXNet: stored dense
    index = np.array([[0, 4], [2, 4], [1, 0]], np.float32)
    w = nd.array(weight)
    w.attach_grad(stype='row_sparse')
    with autograd.record():
        out = nd.contrib.SparseEmbedding(nd.array(index), w, input_dim=5, output_dim=3)
    cot = f32(rng, *out.shape)
    out.backward(nd.array(cot))
    NUMBERS.update({'sparse_embedding/in0': index, 'sparse_embedding/in1': weight,
                    'sparse_embedding/out0': out.asnumpy(), 'sparse_embedding/cot0': cot,
                    'sparse_embedding/grad0': w.grad.tostype('default').asnumpy()})
    data = f32(rng, 4, 3)
    record('boolean_mask', nd.contrib.boolean_mask,
           [data, np.array([1, 0, 1, 1], np.float32)], grad=(0,))
    record('index_array', lambda x: nd.contrib.index_array(x, axes=(-1, 0)),
           [np.zeros((2, 3, 2), np.float32)])
    record('index_copy', nd.contrib.index_copy,
           [f32(rng, 5, 2), np.array([3, 0, 3], np.float32), f32(rng, 3, 2)], grad=(0, 2))


def hawkes():
    n, t, k = 3, 5, 2
    rng = np.random.RandomState(2)
    inputs = [f32(rng, n, k, low=0.5, high=1.5), np.array([0.3, 0.6], np.float32),
              np.array([1.0, 2.5], np.float32), f32(rng, n, k, low=0.0, high=0.5),
              f32(rng, n, t, low=0.1, high=1.0), rng.randint(0, k, (n, t)).astype(np.int32),
              np.array([5, 2, 3], np.float32), np.array([6.0, 4.0, 5.0], np.float32)]
    record('hawkesll', nd.contrib.hawkesll, inputs, grad=(0, 1, 2))
    wide = [x.astype(np.float64) if x.dtype == np.float32 else x for x in inputs]
    record('hawkesll_float64', nd.contrib.hawkesll, wide, train=False)


def elementwise():
    rng = np.random.RandomState(3)
    record('quadratic', lambda x: nd.contrib.quadratic(x, a=0.7, b=-1.3, c=0.2),
           [f32(rng, 2, 3)], grad=(0,))
    record('quadratic_int', lambda x: nd.contrib.quadratic(x, a=1.5, b=2, c=-3),
           [np.array([[1, 2], [-3, 4]], np.int32)], train=False)
    record('gradientmultiplier', lambda x: nd.contrib.gradientmultiplier(x, scalar=-0.25),
           [f32(rng, 4)], grad=(0,))
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -1.2, 1.7, 0.0], np.float32)
    record('round_ste', nd.contrib.round_ste, [halves], grad=(0,))
    record('sign_ste', nd.contrib.sign_ste, [halves], grad=(0,))
    special = np.array([np.inf, -np.inf, np.nan, -1.0, 0.0, 3.5], np.float32)
    record('isinf', nd.contrib.isinf, [special], train=False)
    record('isfinite', nd.contrib.isfinite, [special], train=False)
    record('isnan', nd.contrib.isnan, [special], train=False)
    close = {}
    for name, a, b, attrs, dtype in (
            ('doc_false', [1e10, 1e-7], [1.00001e10, 1e-8], {}, 'float32'),
            ('doc_true', [1e10, 1e-8], [1.00001e10, 1e-9], {}, 'float32'),
            ('doc_true_float64', [1e10, 1e-8], [1.00001e10, 1e-9], {}, 'float64'),
            ('nan_equal', [np.nan, 1.0], [np.nan, 1.0], {}, 'float32'),
            ('nan_not_equal', [np.nan, 1.0], [np.nan, 1.0], dict(equal_nan=False), 'float32'),
            ('nan_one_side', [np.nan, 1.0], [2.0, 1.0], {}, 'float32'),
            ('inf', [np.inf, 1.0], [np.inf, 1.0], {}, 'float32'),
            ('loose', [1.0, 2.0], [1.1, 2.2], dict(rtol=0.1, atol=0.0), 'float32'),
            ('tight', [1.0, 2.0], [1.1, 2.3], dict(rtol=0.1, atol=0.0), 'float32'),
            ('int', [3, 5], [3, 6], dict(atol=1), 'int32')):
        out = nd.contrib.allclose(nd.array(a, dtype=dtype), nd.array(b, dtype=dtype), **attrs)
        close[name] = [a, b, attrs, dtype, int(out.asscalar()), str(out.dtype.__name__),
                       list(out.shape)]
    FACTS['allclose'] = close
    counts = nd.contrib.rand_zipfian(nd.array([0, 3, 7]), 6, 10)
    FACTS['rand_zipfian'] = {'samples_dtype': counts[0].dtype.__name__,
                             'expected_count_true': counts[1].asnumpy().tolist(),
                             'count_dtype': counts[1].dtype.__name__,
                             'samples': counts[0].asnumpy().tolist(),
                             'expected_count_sample': counts[2].asnumpy().tolist()}


# -------------------------------------------------------------------------------------------------
# control flow (float64, so that the imperative and the symbolic forms agree to rounding)
# -------------------------------------------------------------------------------------------------

def rnn_step(F, x, states, wx, wh, b):
    h = F.tanh(F.broadcast_add(F.dot(x, wx) + F.dot(states[0], wh), b))
    return [h, h * 2], [h]


def control_flow():
    rng = np.random.RandomState(4)
    seq = rng.uniform(-1, 1, (4, 2, 3))
    h0 = rng.uniform(-1, 1, (2, 5))
    wx, wh = rng.uniform(-0.5, 0.5, (3, 5)), rng.uniform(-0.5, 0.5, (5, 5))
    b = rng.uniform(-0.5, 0.5, (5,))

    def foreach(x, h, wx, wh, b):
        outs, states = nd.contrib.foreach(lambda xt, s: rnn_step(nd, xt, s, wx, wh, b), x,
                                           [h])
        return outs + states
    record('foreach_rnn', foreach, [seq, h0, wx, wh, b], grad=(0, 1, 2, 3, 4))
    # MXNet's symbolic _foreach gives the same numbers
    names = ['x', 'h', 'wx', 'wh', 'b']
    v = [sym.var(n) for n in names]
    outs, states = sym.contrib.foreach(lambda xt, s: rnn_step(sym, xt, s, v[2], v[3], v[4]),
                                       v[0], [v[1]])
    got = sym.Group(outs + states).eval(**{n: nd.array(a, dtype='float64') for n, a in zip(
        names, [seq, h0, wx, wh, b])})
    for i, o in enumerate(got):
        assert np.allclose(o.asnumpy(), NUMBERS[f'foreach_rnn/out{i}'], rtol=1e-12)

    # while_loop: (i, s, x) -> step output s * x; (i + 1, s + x * x, x * 0.9) while i < limit
    def while_inputs(limit):
        return [np.array([0.0]), np.array([1.0, -0.5]), rng.uniform(-1, 1, (2,)),
                np.array([limit], np.float64)]

    def while_loop(i, s, x, limit):
        outs, final = nd.contrib.while_loop(
            lambda i, s, x: i < limit,
            lambda i, s, x: ([s * x, i * 1], [i + 1, s + x * x, x * 0.9]),
            [i, s, x], max_iterations=6)
        return outs + final

    def differentiable(i, s, x, limit):
        outs = while_loop(i, s, x, limit)       # the counter i is not differentiated
        return [outs[0], outs[3], outs[4]]
    for case, limit in (('while_loop_stops', 4.0), ('while_loop_max', 10.0)):
        inputs = while_inputs(limit)
        steps = int(min(limit, 6))
        cots = [np.random.RandomState(9).uniform(-1, 1, (6, 2)),
                np.random.RandomState(8).uniform(-1, 1, (2,)),
                np.random.RandomState(7).uniform(-1, 1, (2,))]
        cots[0][steps:] = 0        # MXNet's padding rows are uninitialised memory
        record(case, differentiable, inputs, grad=(1, 2), cots=cots)
        NUMBERS[f'{case}/out0'][steps:] = 0
        counter = while_loop(*[nd.array(a, dtype='float64') for a in inputs])
        FACTS[case] = {'steps': steps, 'counter': counter[1].asnumpy()[:steps].tolist(),
                       'final_counter': counter[2].asnumpy().tolist(),
                       'num_outputs': len(counter)}

    x = rng.uniform(-1, 1, (2, 3))

    def cond(x, w):
        return nd.contrib.cond((x * w).sum() > 0, lambda: [x * w * 2, nd.exp(x)],
                               lambda: [x * x * w, x - 1])
    record('cond_then', cond, [x, np.array([0.5, 1.0, 2.0])], grad=(0, 1))
    record('cond_else', cond, [x, np.array([-3.0, -1.0, -2.0])], grad=(0, 1))


# -------------------------------------------------------------------------------------------------
# gluon.nn.BatchNormReLU
# -------------------------------------------------------------------------------------------------

def batch_norm_relu():
    rng = np.random.RandomState(5)
    facts = {}
    for case, kwargs in (('default', {}),
                         ('options', dict(momentum=0.7, epsilon=1e-3, scale=False,
                                          in_channels=3))):
        with mx.name.NameManager():
            net = gluon.nn.BatchNormReLU(**kwargs)
        net.initialize()
        x = f32(rng, 2, 3, 2, 2) if case == 'default' else f32(rng, 3, 3, 1, 2)
        net(nd.array(x))
        params = net.collect_params()
        values = {k: f32(rng, *p.shape, low=0.5, high=1.5) if k.endswith(('gamma', 'var'))
                  else f32(rng, *p.shape, low=-0.5, high=0.5) for k, p in params.items()}
        for k, p in params.items():
            p.set_data(nd.array(values[k]))
        cot = f32(rng, *x.shape)
        xa = nd.array(x)
        xa.attach_grad()
        with autograd.record():
            y = net(xa)
        y.backward(nd.array(cot))
        NUMBERS[f'bn_relu_block_{case}/x'] = x
        NUMBERS[f'bn_relu_block_{case}/cot'] = cot
        NUMBERS[f'bn_relu_block_{case}/out'] = y.asnumpy()
        NUMBERS[f'bn_relu_block_{case}/x_grad'] = xa.grad.asnumpy()
        names = [k for k in params]
        for i, k in enumerate(names):
            NUMBERS[f'bn_relu_block_{case}/param{i}'] = values[k]
            NUMBERS[f'bn_relu_block_{case}/param{i}_after'] = params[k].data().asnumpy()
            if params[k].grad_req != 'null':
                NUMBERS[f'bn_relu_block_{case}/param{i}_grad'] = params[k].grad().asnumpy()
        NUMBERS[f'bn_relu_block_{case}/predict'] = net(nd.array(x)).asnumpy()
        # the exported graph of a fresh block, hybridized before its first call
        with mx.name.NameManager():
            net = gluon.nn.BatchNormReLU(**kwargs)
        net.initialize()
        net.hybridize()
        net(nd.array(x))
        with tempfile.TemporaryDirectory() as folder:
            net.export(os.path.join(folder, 'net'))
            with open(os.path.join(folder, 'net-symbol.json')) as f:
                graph = json.load(f)
        facts[case] = {'kwargs': kwargs, 'repr': repr(net), 'params': names,
                       'grad_req': [params[k].grad_req for k in names], 'graph': graph}
    FACTS['bn_relu_block'] = facts


# -------------------------------------------------------------------------------------------------
# contrib.text
# -------------------------------------------------------------------------------------------------

EMBEDDING_FILE = ('<unk> 0.5 0.5 0.5\n'
                  'the 0.1 0.2 0.3\n'
                  'The 1.1 1.2 1.3\n'
                  'hello -1 0 1\n'
                  'header 7\n'
                  'the 9 9 9\n'
                  'world 2 3 4\n')
EMBEDDING_FILE_NO_UNK = 'a,1,2\nb,3,4\nc,5,6\n'
TEXT = ' Life is great ! \n life is good . \n Good good great !\n'


def digest(table):
    """[number of entries, SHA-1 of the table as sorted JSON]: a large table in a few bytes."""
    text_form = json.dumps(table, sort_keys=True)
    return [len(table), hashlib.sha1(text_form.encode()).hexdigest()]


def vocab_facts(v):
    return {'idx_to_token': v.idx_to_token, 'token_to_idx': v.token_to_idx,
            'unknown_token': v.unknown_token, 'reserved_tokens': v.reserved_tokens,
            'len': len(v)}


def embedding_facts(e):
    facts = vocab_facts(e)
    facts.update(vec_len=e.vec_len, idx_to_vec=e.idx_to_vec.asnumpy().tolist())
    return facts


def contrib_text():
    facts = {'text': TEXT, 'embedding_file': EMBEDDING_FILE,
             'embedding_file_no_unk': EMBEDDING_FILE_NO_UNK}
    utils = text.utils
    facts['count'] = dict(utils.count_tokens_from_str(TEXT))
    facts['count_lower'] = dict(utils.count_tokens_from_str(TEXT, to_lower=True))
    facts['count_regex'] = dict(utils.count_tokens_from_str('*a*b*\n*b*c*\n', '\\*', '\\n'))
    counter = collections.Counter(utils.count_tokens_from_str(TEXT, to_lower=True))
    facts['update'] = dict(utils.count_tokens_from_str('is x', counter_to_update=counter))
    counter = utils.count_tokens_from_str(TEXT)
    vocabs = {}
    for name, kwargs in (('default', {}),
                         ('most_freq', dict(most_freq_count=3)),
                         ('min_freq', dict(min_freq=2)),
                         ('reserved', dict(reserved_tokens=['<pad>', '<bos>'],
                                           unknown_token='<UNK>')),
                         ('reserved_in_counter', dict(reserved_tokens=['good', '!'],
                                                      most_freq_count=2)),
                         ('none', dict(counter=None))):
        args = dict(kwargs)
        args.setdefault('counter', counter)
        v = text.vocab.Vocabulary(**args)
        entry = vocab_facts(v)
        entry['kwargs'] = {k: a for k, a in kwargs.items() if k != 'counter'}
        entry['with_counter'] = args['counter'] is not None
        entry['to_indices'] = v.to_indices(['good', 'missing', 'Life'])
        entry['to_index'] = v.to_indices('great')
        entry['to_tokens'] = v.to_tokens([0, len(v) - 1])
        entry['to_token'] = v.to_tokens(0)
        vocabs[name] = entry
    facts['vocab'] = vocabs
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, 'embed.txt')
        with open(path, 'w') as f:
            f.write(EMBEDDING_FILE)
        path_no_unk = os.path.join(folder, 'embed.csv')
        with open(path_no_unk, 'w') as f:
            f.write(EMBEDDING_FILE_NO_UNK)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            e = text.embedding.CustomEmbedding(path)
        facts['custom_warnings'] = [str(w.message) for w in caught]
        facts['custom'] = embedding_facts(e)
        facts['custom_vecs'] = e.get_vecs_by_tokens(['hello', 'THE', 'nope']).asnumpy().tolist()
        facts['custom_vecs_lower'] = e.get_vecs_by_tokens(
            ['hello', 'THE', 'World'], lower_case_backup=True).asnumpy().tolist()
        facts['custom_vec'] = e.get_vecs_by_tokens('world').asnumpy().tolist()
        e.update_token_vectors('hello', nd.array([7, 8, 9]))
        e.update_token_vectors(['<unk>', 'world'], nd.array([[0, 0, 1], [1, 0, 0]]))
        facts['custom_updated'] = e.idx_to_vec.asnumpy().tolist()
        try:
            e.update_token_vectors('nope', nd.array([1, 2, 3]))
        except ValueError as err:
            facts['update_unknown_error'] = str(err)
        e2 = text.embedding.CustomEmbedding(path_no_unk, elem_delim=',',
                                            init_unknown_vec=nd.ones)
        facts['custom_no_unk'] = embedding_facts(e2)
        v = text.vocab.Vocabulary(collections.Counter(['world', 'hello', 'hello', 'zzz', 'c']),
                                  reserved_tokens=['<pad>'])
        e3 = text.embedding.CustomEmbedding(path, vocabulary=v)
        facts['custom_vocab'] = embedding_facts(e3)
        composite = text.embedding.CompositeEmbedding(v, [e3, e2])
        facts['composite'] = embedding_facts(composite)
        composite1 = text.embedding.CompositeEmbedding(v, e2)
        facts['composite_single'] = embedding_facts(composite1)
    names = text.embedding.get_pretrained_file_names()
    facts['pretrained'] = digest({k: sorted(v) for k, v in names.items()})
    facts['pretrained_glove'] = text.embedding.get_pretrained_file_names('glove')
    facts['pretrained_fasttext_count'] = len(names['fasttext'])
    facts['glove_url'] = text.embedding.GloVe._get_pretrained_file_url('glove.6B.50d.txt')
    facts['glove_twitter_url'] = text.embedding.GloVe._get_pretrained_file_url(
        'glove.twitter.27B.25d.txt')
    facts['fasttext_url'] = text.embedding.FastText._get_pretrained_file_url('wiki.simple.vec')
    facts['glove_archive_sha1'] = text.embedding.GloVe.pretrained_archive_name_sha1
    facts['glove_file_sha1'] = text.embedding.GloVe.pretrained_file_name_sha1
    facts['fasttext_archive_sha1'] = digest(text.embedding.FastText.pretrained_archive_name_sha1)
    facts['fasttext_file_sha1'] = digest(text.embedding.FastText.pretrained_file_name_sha1)
    facts['fasttext_file_sha1_sample'] = {
        k: text.embedding.FastText.pretrained_file_name_sha1[k]
        for k in ('wiki.simple.vec', 'wiki.en.vec', 'crawl-300d-2M.vec', 'wiki.zh.vec')}
    try:
        text.embedding.create('glove', pretrained_file_name='nope.txt')
    except KeyError as err:
        facts['bad_file_error'] = str(err)
    FACTS['text'] = facts


def main():
    mx.random.seed(0)
    batch_norms()
    indexing()
    hawkes()
    elementwise()
    control_flow()
    batch_norm_relu()
    contrib_text()
    np.savez_compressed(os.path.join(OUT, 'contrib_misc-numbers.npz'), **NUMBERS)
    with open(os.path.join(OUT, 'contrib_misc-facts.json'), 'w') as f:
        json.dump(FACTS, f, indent=1, sort_keys=True)


if __name__ == '__main__':
    main()
