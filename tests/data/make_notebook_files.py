"""Write tests/data/notebook-facts.json: what MXNet 1.9.1's ``notebook.callback.PandasLogger``
records over a ``Module.fit`` run.

Run with the MXNet oracle, from the repository root, with pandas importable (the oracle has
none; MXNet 1.9.1 runs with numpy 1.23, so pandas 1.5)::

    .oracle/bin/python -m pip install --target /tmp/oracle_pandas --no-deps \\
        pandas==1.5.3 python-dateutil pytz six
    PYTHONPATH=/tmp/oracle_pandas .oracle/bin/python tests/data/make_notebook_files.py

``run_pandas_logger`` is a function of the ``mx`` package: run here with ``mxnet``, and by
tests/test_notebook.py with ``hybridlib`` (the same source, as a drop-in user would run it),
which compares what they return. A softmax classifier trains for 2 epochs of 6 batches with
validation data; the logger's ``train_cb`` (every 2 batches), ``eval_cb`` and ``epoch_cb``
are installed. Times and speeds change from run to run: of those only the columns, the
types and ``batches_per_sec / records_per_sec`` (the batch size) are recorded; the metric
values, batch counts and epochs are recorded as they are, and so are ``fit``'s log lines
(the logger resets the metrics it reads, which shows in them).

MXNet's ``epoch_cb`` takes no argument, so ``fit(**logger.callback_args())`` fails with a
TypeError after the first epoch; the scenario passes a lambda instead.
"""
import importlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_module_files import capture_logger  # noqa: E402
FACTS = os.path.join(HERE, 'notebook-facts.json')
BATCH = 8


def notebook_callback(mx):
    """``<package>.notebook.callback`` of ``mx`` (mxnet or hybridlib)."""
    return importlib.import_module(mx.__name__ + '.notebook.callback')


def classification_data(seed, samples):
    """4 features in [-1, 1] and 3 classes by the sign pattern of two of them (float32)."""
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (samples, 4)).astype(np.float32)
    y = ((x[:, 0] > 0).astype(int) + (x[:, 1] > 0.3).astype(int)).astype(np.float32)
    return x, y


def _frame(df, batch_size):
    """What is deterministic in a PandasLogger DataFrame."""
    out = {'columns': sorted(df.columns), 'rows': len(df)}
    for col in sorted(df.columns):
        values = list(df[col])
        if col in ('elapsed', 'epoch_time'):
            out[col] = sorted({type(v).__name__ for v in values})
        elif col == 'batches_per_sec':
            ratios = np.array(values, float) / np.array(df['records_per_sec'], float)
            out['batches_per_sec/records_per_sec'] = sorted(set(np.round(ratios, 6)))
        elif col != 'records_per_sec':
            out[col] = [float(v) if isinstance(v, (float, np.floating)) else int(v)
                        for v in values]
    return out


def run_pandas_logger(mx):
    """Module.fit with a PandasLogger; return the facts."""
    x, y = classification_data(0, 6 * BATCH)
    vx, vy = classification_data(1, 2 * BATCH)
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=3, name='fc')
    net = mx.sym.SoftmaxOutput(net, name='softmax')
    rng = np.random.RandomState(2)
    args = {'fc_weight': mx.nd.array(rng.uniform(-0.5, 0.5, (3, 4)).astype(np.float32)),
            'fc_bias': mx.nd.array(rng.uniform(-0.1, 0.1, (3,)).astype(np.float32))}
    log = capture_logger('notebook-fit')
    mod = mx.mod.Module(net, logger=log)
    logger = notebook_callback(mx).PandasLogger(batch_size=BATCH, frequent=2)
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=BATCH),
            eval_data=mx.io.NDArrayIter(vx, vy, batch_size=BATCH), eval_metric=['acc', 'ce'],
            optimizer='sgd', optimizer_params={'learning_rate': 0.5}, arg_params=args,
            num_epoch=2, batch_end_callback=logger.train_cb, eval_end_callback=logger.eval_cb,
            epoch_end_callback=lambda *fit_args: logger.epoch_cb())
    facts = {name: _frame(df, BATCH) for name, df in sorted(logger.all_dataframes.items())}
    facts['log'] = [line for line in log.handlers[0].lines if 'Time cost' not in line]
    facts['same_frames'] = [logger.train_df is logger.all_dataframes['train'],
                            logger.eval_df is logger.all_dataframes['eval'],
                            logger.epoch_df is logger.all_dataframes['epoch']]
    facts['callback_args'] = sorted(logger.callback_args())
    return facts


def main():
    import mxnet as mx
    facts = {'pandas_logger': run_pandas_logger(mx)}
    with open(FACTS, 'w') as f:
        json.dump(facts, f, indent=1, sort_keys=True)
    print('wrote', FACTS)


if __name__ == '__main__':
    main()
