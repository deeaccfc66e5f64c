"""Record what MXNet 1.9.1 computes for GluonTS's training networks, for test_gluonts.py.

Run under real MXNet with GluonTS 0.17 installed:

    .oracle/bin/python tests/clients/make_gluonts_fixtures.py

For each case in CASES it builds the estimator's training network, initialises it from a fixed
seed, takes one batch from the estimator's own training data loader and writes
``data/gluonts/<case>.params`` (``save_parameters``) and ``data/gluonts/<case>.npz``: the batch
(``input:<name>``) and what ``network_outputs`` returns for it.

test_gluonts.py imports this module under the ``mxnet`` alias and calls the same
``build_estimator``, ``load_batch`` and ``network_outputs`` on hybridlib, so both sides run one
piece of code.
"""
import collections
import pathlib

import numpy as np
import pandas as pd

import mxnet as mx
from gluonts.dataset.common import ListDataset
from gluonts.mx import DeepAREstimator, SimpleFeedForwardEstimator, Trainer
from gluonts.mx.distribution import GaussianOutput
from gluonts.mx.util import get_hybrid_forward_input_names

DATA = pathlib.Path(__file__).resolve().parent / 'data' / 'gluonts'
FREQ = 'H'
PREDICTION_LENGTH = 4
CONTEXT_LENGTH = 12


def make_dataset(num_series=6, length=120, seed=0, for_prediction=False):
    """Sine-plus-noise series with a static category and one dynamic real feature, which for
    prediction runs on ``PREDICTION_LENGTH`` steps past the target, as GluonTS needs."""
    rng = np.random.RandomState(seed)
    t = np.arange(length + (PREDICTION_LENGTH if for_prediction else 0))
    entries = []
    for i in range(num_series):
        target = 5 + 2 * np.sin(2 * np.pi * t[:length] / 24 + i) + 0.3 * rng.randn(length)
        entries.append({'start': pd.Period('2021-03-01 00:00', freq=FREQ),
                        'target': target.astype(np.float32),
                        'feat_static_cat': [i % 3],
                        'feat_dynamic_real': [np.cos(2 * np.pi * t / 24).astype(np.float32)]})
    return ListDataset(entries, freq=FREQ)


def _trainer():
    return Trainer(epochs=1, num_batches_per_epoch=3, learning_rate=1e-2)


# Each case: the estimator; how to get the distribution its training network predicts (compared
# beside the loss, as mean and stddev, since the loss alone can hide a wrong parameter); and
# whether a training-mode step is deterministic (no dropout), so that it can be compared too
Case = collections.namedtuple('Case', 'estimator distribution deterministic_training')


def _feedforward():
    return SimpleFeedForwardEstimator(
        prediction_length=PREDICTION_LENGTH, context_length=CONTEXT_LENGTH,
        num_hidden_dimensions=[16, 8], batch_normalization=True, batch_size=4,
        num_parallel_samples=20, trainer=_trainer())


def _feedforward_distribution(net, inputs):
    distr_args, loc, scale = net.get_distr_args(mx.nd, inputs['past_target'])
    return net.distr_output.distribution(distr_args, loc=loc, scale=scale)


def _deepar():
    # default lags for 'H' (up to 721 steps back, so most of the history is padding), LSTM
    # cells under ZoneoutCell, Student's t output
    return DeepAREstimator(
        freq=FREQ, prediction_length=PREDICTION_LENGTH, context_length=CONTEXT_LENGTH,
        num_layers=2, num_cells=8, batch_size=4, num_parallel_samples=20, trainer=_trainer())


def _deepar_features():
    # GRU cells under VariationalZoneoutCell, an embedded static category, a dynamic real
    # feature, a Gaussian output
    return DeepAREstimator(
        freq=FREQ, prediction_length=PREDICTION_LENGTH, context_length=CONTEXT_LENGTH,
        num_layers=2, num_cells=8, cell_type='gru', dropoutcell_type='VariationalZoneoutCell',
        use_feat_static_cat=True, cardinality=[3], embedding_dimension=[2],
        use_feat_dynamic_real=True, lags_seq=[1, 2, 24], distr_output=GaussianOutput(),
        batch_size=4, num_parallel_samples=20, trainer=_trainer())


def _deepar_distribution(net, inputs):
    return net.distribution(**inputs)


CASES = {
    'simple_feedforward': Case(_feedforward, _feedforward_distribution, True),
    'deepar': Case(_deepar, _deepar_distribution, False),
    'deepar_features': Case(_deepar_features, _deepar_distribution, False),
}


def build_estimator(case):
    return CASES[case].estimator()


def first_batch(estimator, dataset):
    """The first batch of the estimator's training data loader, as {input name: NDArray}."""
    transformed = estimator.create_transformation().apply(dataset)
    batch = next(iter(estimator.create_training_data_loader(transformed)))
    names = get_hybrid_forward_input_names(type(estimator.create_training_network()))
    return {name: batch[name] for name in names}


def load_batch(npz):
    """The recorded batch as {input name: NDArray}, in the recorded order and dtypes."""
    return {key[len('input:'):]: mx.nd.array(npz[key], dtype=npz[key].dtype)
            for key in npz.files if key.startswith('input:')}


def _first(outputs):
    return outputs[0] if isinstance(outputs, (list, tuple)) else outputs


def _gradients(net, prefix):
    return {f'{prefix}:{name}': param.grad().asnumpy()
            for name, param in net._collect_params_with_prefix().items()
            if param.grad_req != 'null'}


def network_outputs(case, net, inputs):
    """What the training network computes for one batch, as {name: numpy array}.

    In predict mode (dropout and zoneout off, so deterministic): the outputs, the predicted
    distribution's mean and stddev, and the gradients of the summed loss (the first output)
    with respect to every parameter, the backward pass also in predict mode. For a case whose
    training mode is deterministic, then one training-mode step: its loss, gradients and the
    auxiliary states (BatchNorm's moving statistics) after it.
    """
    with mx.autograd.record(train_mode=False):
        outputs = net(*inputs.values())
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    found = {f'output{i}': out.asnumpy() for i, out in enumerate(outputs)}
    # not backward()'s default train_mode=True: after a predict-mode forward, MXNet's BatchNorm
    # then mixes its training formula with the moving statistics, which hybridlib does not copy
    # (hybridlib/ops/norm.py)
    outputs[0].backward(train_mode=False)
    found.update(_gradients(net, 'grad'))
    distr = CASES[case].distribution(net, inputs)
    found['mean'] = distr.mean.asnumpy()
    found['stddev'] = distr.stddev.asnumpy()

    if CASES[case].deterministic_training:
        with mx.autograd.record():
            loss = _first(net(*inputs.values()))
        loss.backward()
        found['train_output0'] = loss.asnumpy()
        found.update(_gradients(net, 'train_grad'))
        found.update({f'train_aux:{name}': param.data().asnumpy()
                      for name, param in net._collect_params_with_prefix().items()
                      if param.grad_req == 'null'})
    return found


def record(case):
    np.random.seed(0)                   # the loader's instance sampler draws from numpy
    mx.random.seed(0)
    estimator = build_estimator(case)
    inputs = first_batch(estimator, make_dataset())
    net = estimator.create_training_network()
    net.initialize(init=estimator.trainer.init)
    net(*inputs.values())               # resolves the deferred shapes
    DATA.mkdir(parents=True, exist_ok=True)
    net.save_parameters(str(DATA / f'{case}.params'))
    found = network_outputs(case, net, inputs)
    arrays = {f'input:{name}': value.asnumpy() for name, value in inputs.items()}
    np.savez_compressed(DATA / f'{case}.npz', **arrays, **found)
    print(case, {name: value.shape for name, value in found.items() if ':' not in name})


if __name__ == '__main__':
    for name in CASES:
        record(name)
