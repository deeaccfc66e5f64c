"""The libraries built on MXNet, run on hybridlib through the ``mxnet`` alias.

This tier needs the clients installed (``pip install -e ".[clients]"``: GluonCV 0.10.5,
GluonNLP 0.10.0, GluonTS 0.17 and d2lzh); without them it skips. Each case runs
``python -m hybridlib -c ...`` in a fresh interpreter, as a user would.
"""
import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

def run_with_alias(code, timeout=600):
    env = dict(os.environ, MPLBACKEND='Agg')     # conftest.py puts this checkout on the path
    proc = subprocess.run([sys.executable, '-m', 'hybridlib', '-c', textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


def needs(package):
    return pytest.mark.skipif(importlib.util.find_spec(package) is None,
                              reason=f'{package} is not installed (the "clients" extra)')


@needs('gluoncv')
def test_gluoncv():
    out = run_with_alias('''
        import gluoncv
        from gluoncv import model_zoo
        import mxnet as mx
        assert gluoncv._found_mxnet
        net = model_zoo.get_model('resnet18_v1b', pretrained=False, classes=10)
        net.initialize()
        net.hybridize()
        print(net(mx.nd.ones((1, 3, 32, 32))).shape)
    ''')
    assert out.strip().endswith('(1, 10)')


@needs('gluonnlp')
def test_gluonnlp():
    out = run_with_alias('''
        import gluonnlp as nlp
        import mxnet as mx
        vocab = nlp.Vocab(nlp.data.count_tokens('the cat sat on the mat'.split()))
        model = nlp.model.StandardRNN('lstm', len(vocab), 8, 8, 1, 0.0, False)
        model.initialize()
        model.hybridize()
        hidden = model.begin_state(batch_size=2, func=mx.nd.zeros)
        out, _ = model(mx.nd.array([[1, 2], [3, 4], [5, 6]]), hidden)
        print(len(vocab), out.shape)
    ''')
    assert out.split('\n')[-2] == '9 (3, 2, 9)'   # 5 words and 4 special tokens


@needs('gluonts')
def test_gluonts():
    out = run_with_alias('''
        from gluonts.mx import DeepAREstimator, Trainer
        estimator = DeepAREstimator(freq='H', prediction_length=4,
                                    trainer=Trainer(epochs=1, num_batches_per_epoch=1))
        print(type(estimator).__name__)
    ''')
    assert out.strip().endswith('DeepAREstimator')


@needs('d2lzh')
def test_d2lzh():
    out = run_with_alias('''
        import d2lzh as d2l
        from mxnet import nd
        net = d2l.resnet18(10)
        net.initialize()
        print(net(nd.ones((1, 1, 28, 28))).shape)
    ''')
    assert out.strip().endswith('(1, 10)')
