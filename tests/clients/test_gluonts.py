"""GluonTS 0.17's MXNet estimators on hybridlib, through the ``mxnet`` alias.

Each case of make_gluonts_fixtures.py (SimpleFeedForward, DeepAR with LSTM cells, DeepAR with
GRU cells and features) is checked two ways:

- its training network, loaded with the parameters MXNet 1.9.1 initialised, computes MXNet's
  outputs, distribution and gradients for the recorded batch, imperatively and hybridized;
- the estimator trains for an epoch of a few batches and its predictor forecasts.

The fixtures in data/gluonts/ are MXNet's, written by make_gluonts_fixtures.py run with the MXNet
oracle (``.oracle/bin/python tests/clients/make_gluonts_fixtures.py``).
"""
import pathlib

import numpy as np
import pytest

from test_client_imports import needs, run_with_alias

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE / 'data' / 'gluonts'
CASES = ['simple_feedforward', 'deepar', 'deepar_features']
# float32 throughout; the atol is relative to each array's largest magnitude
RTOL, ATOL = 1e-4, 1e-5


@needs('gluonts')
@pytest.mark.parametrize('case', CASES)
def test_training_network_matches_mxnet(case, tmp_path):
    run_with_alias(f'''
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import numpy as np
        import make_gluonts_fixtures as fixtures

        recorded = np.load({str(DATA / f'{case}.npz')!r})
        inputs = fixtures.load_batch(recorded)
        estimator = fixtures.build_estimator({case!r})
        for mode in ('imperative', 'hybridized'):
            net = estimator.create_training_network()
            net.load_parameters({str(DATA / f'{case}.params')!r})
            if mode == 'hybridized':
                net.hybridize()
            found = fixtures.network_outputs({case!r}, net, inputs)
            np.savez({str(tmp_path)!r} + '/' + mode + '.npz', **found)
    ''')
    recorded = np.load(DATA / f'{case}.npz')
    wanted = [name for name in recorded.files if not name.startswith('input:')]
    for mode in ('imperative', 'hybridized'):
        found = np.load(tmp_path / f'{mode}.npz')
        assert sorted(found.files) == sorted(wanted), mode
        for name in wanted:
            want = recorded[name]
            np.testing.assert_allclose(found[name], want, rtol=RTOL,
                                       atol=ATOL * max(1.0, np.abs(want).max()),
                                       err_msg=f'{case} {mode} {name}')


@needs('gluonts')
@pytest.mark.parametrize('case', CASES)
def test_estimator_trains_and_predicts(case):
    out = run_with_alias(f'''
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import numpy as np
        import make_gluonts_fixtures as fixtures

        estimator = fixtures.build_estimator({case!r})
        predictor = estimator.train(fixtures.make_dataset())
        forecasts = list(predictor.predict(fixtures.make_dataset(for_prediction=True)))
        samples = np.stack([forecast.samples for forecast in forecasts])
        print(samples.shape, bool(np.isfinite(samples).all()))
    ''')
    # 6 series, 20 sample paths each, 4 steps ahead
    assert out.strip().split('\n')[-1] == '(6, 20, 4) True'
