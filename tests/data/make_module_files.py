"""Write tests/data/module-*: MXNet 1.9.1's numbers for the ``mx.mod`` tests.

Run with the MXNet oracle, from the repository root::

    .oracle/bin/python tests/data/make_module_files.py

The scenarios are functions of the ``mx`` module: run here with ``mxnet``, and by
tests/test_module.py with ``hybridlib`` (the same source, as a drop-in user would run it),
which compares what they return. Every input comes from ``numpy.random.RandomState`` with a
fixed seed (its streams are frozen across numpy versions), so both sides start from the same
data and parameters. Scenarios:

* ``run_mlp_fit``: MXNet's MNIST MLP (784-128-64-10, SoftmaxOutput) trained by ``Module.fit``
  for 3 epochs on 512 synthetic samples (``NDArrayIter``, batch 32, sgd with momentum and wd),
  with validation data; the final parameters, ``score`` (accuracy, cross-entropy),
  ``predict`` and the log lines of ``fit`` (without the time);
* ``run_multi_context_fit``: a small MLP trained on two contexts (``cpu(0)``, ``cpu(1)``,
  work loads 1:2) through the ``local`` KVStore;
* ``run_convbn_predict`` / ``run_convbn_finetune``: a conv net with BatchNorm saved by MXNet's
  ``save_checkpoint`` (``module-convbn-symbol.json``, ``module-convbn-0000.params``), loaded
  with ``Module.load`` and run by ``predict`` over a padded last batch, then trained for two
  batches (parameters and BatchNorm moving statistics);
* ``run_bucketing`` / ``run_bucketing_fit``: a ``BucketingModule`` of a small recurrent net
  (shared weights unrolled over the bucket's length), trained batch by batch over buckets
  6, 3, 6, 4, 3 (outputs of each forward, final parameters, a forward of a new bucket), and
  by ``fit`` over an iterator of bucketed batches;
* ``run_monitor``: what a ``Monitor`` installed on a Module collects over one
  ``forward_backward`` (MXNet's test_monitor network).

Files: ``module-numbers.npz`` (arrays, keys ``<scenario>/<name>``), ``module-facts.json``
(log lines, metric values, shapes) and the checkpoint.
"""
import json
import logging
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CONVBN_PREFIX = os.path.join(HERE, 'module-convbn')
NUMBERS = os.path.join(HERE, 'module-numbers.npz')
FACTS = os.path.join(HERE, 'module-facts.json')
# a random projection of fc1_weight (784 wide) is recorded instead of the whole array
FC1_COLUMNS = slice(None, None, 8)


class _Lines(logging.Handler):
    """Keeps the messages logged to a logger."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def capture_logger(name):
    """A logger that keeps its messages (in ``logger.handlers[0].lines``) and prints none."""
    logger = logging.getLogger(name)
    logger.handlers = [_Lines()]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger


def _params(mod):
    arg, aux = mod.get_params()
    out = {'arg:' + k: v.asnumpy() for k, v in arg.items()}
    out.update({'aux:' + k: v.asnumpy() for k, v in aux.items()})
    return out


# -------------------------------------------------------------------------------------------------
# MNIST MLP through Module.fit
# -------------------------------------------------------------------------------------------------

def mlp_symbol(mx, hidden=(128, 64), classes=10):
    """MXNet's MNIST MLP: FullyConnected-relu layers and a SoftmaxOutput."""
    net = mx.sym.Variable('data')
    for i, num_hidden in enumerate(hidden):
        net = mx.sym.FullyConnected(net, name='fc%d' % (i + 1), num_hidden=num_hidden)
        net = mx.sym.Activation(net, name='relu%d' % (i + 1), act_type='relu')
    net = mx.sym.FullyConnected(net, name='fc%d' % (len(hidden) + 1), num_hidden=classes)
    return mx.sym.SoftmaxOutput(net, name='softmax')


def classification_data(seed, samples, features, classes):
    """Features in [0, 1]: 30% a class prototype (the same for every seed), 70% noise; and
    the classes (float32)."""
    centers = np.random.RandomState(100).uniform(0, 1, (classes, features))
    rng = np.random.RandomState(seed)
    y = rng.randint(0, classes, samples)
    x = 0.3 * centers[y] + 0.7 * rng.uniform(0, 1, (samples, features))
    return x.astype(np.float32), y.astype(np.float32)


def init_params(seed, shapes):
    """Glorot-uniform weights and small uniform biases, by name (numpy float32)."""
    rng = np.random.RandomState(seed)
    out = {}
    for name in sorted(shapes):
        shape = shapes[name]
        if name.endswith('_weight'):
            fan_out, fan_in = shape[0], int(np.prod(shape[1:]))
            scale = np.sqrt(6.0 / (fan_in + fan_out))
        else:
            scale = 0.05
        out[name] = rng.uniform(-scale, scale, shape).astype(np.float32)
    return out


def param_shapes(symbol, **input_shapes):
    """``{parameter name: shape}`` of the arguments that are not inputs."""
    arg_shapes, _, _ = symbol.infer_shape(**input_shapes)
    return {n: s for n, s in zip(symbol.list_arguments(), arg_shapes)
            if n not in input_shapes and not n.endswith('label')}


def run_mlp_fit(mx):
    """Train the MNIST MLP with ``fit``; return (arrays, facts)."""
    x, y = classification_data(0, 512, 784, 10)
    vx, vy = classification_data(5, 128, 784, 10)
    symbol = mlp_symbol(mx)
    init = init_params(1, param_shapes(symbol, data=(32, 784)))
    logger = capture_logger('module-mlp')
    mod = mx.mod.Module(symbol, logger=logger)
    train = mx.io.NDArrayIter(x, y, batch_size=32)
    val = mx.io.NDArrayIter(vx, vy, batch_size=32)
    mod.fit(train, eval_data=val, eval_metric='acc', optimizer='sgd',
            optimizer_params={'learning_rate': 0.02, 'momentum': 0.9, 'wd': 1e-4},
            arg_params={k: mx.nd.array(v) for k, v in init.items()}, num_epoch=3)
    arrays = {}
    for name, value in _params(mod).items():
        if name == 'arg:fc1_weight':
            projection = np.random.RandomState(9).normal(0, 1, (784, 4)).astype(np.float32)
            arrays[name + '[:,::8]'] = value[:, FC1_COLUMNS]
            arrays[name + '@P'] = value @ projection
        else:
            arrays[name] = value
    arrays['predict'] = mod.predict(val).asnumpy()
    score = mod.score(val, ['acc', 'ce'])
    lines = [line for line in logger.handlers[0].lines if 'Time cost' not in line]
    facts = {'log': lines, 'score': [[n, float(v)] for n, v in score],
             'output_shapes': [[n, list(s)] for n, s in mod.output_shapes],
             'data_shapes': [[d.name, list(d.shape)] for d in mod.data_shapes]}
    return arrays, facts


def run_multi_context_fit(mx):
    """A small MLP on cpu(0) and cpu(1) with work loads 1:2, through the local KVStore."""
    x, y = classification_data(2, 96, 20, 4)
    symbol = mlp_symbol(mx, hidden=(16,), classes=4)
    init = init_params(3, param_shapes(symbol, data=(24, 20)))
    logger = capture_logger('module-multi')
    mod = mx.mod.Module(symbol, logger=logger, context=[mx.cpu(0), mx.cpu(1)],
                        work_load_list=[1, 2])
    train = mx.io.NDArrayIter(x, y, batch_size=24)
    mod.fit(train, eval_metric='acc', kvstore='local', optimizer='sgd',
            optimizer_params={'learning_rate': 0.2, 'momentum': 0.9},
            arg_params={k: mx.nd.array(v) for k, v in init.items()}, num_epoch=2)
    arrays = _params(mod)
    outputs = mod.get_outputs(merge_multi_context=False)[0]
    facts = {'log': [line for line in logger.handlers[0].lines if 'Time cost' not in line],
             'slice_shapes': [list(o.shape) for o in outputs],
             'kvstore': type(mod._kvstore).__name__ if mod._kvstore is not None else None,
             'update_on_kvstore': bool(mod._update_on_kvstore)}
    return arrays, facts


# -------------------------------------------------------------------------------------------------
# A conv net with BatchNorm from a checkpoint
# -------------------------------------------------------------------------------------------------

def convbn_symbol(mx):
    """conv-BN-relu-pool, conv-BN-relu-global pool, FullyConnected, SoftmaxOutput."""
    net = mx.sym.Variable('data')
    net = mx.sym.Convolution(net, name='conv1', num_filter=6, kernel=(3, 3), pad=(1, 1))
    net = mx.sym.BatchNorm(net, name='bn1')
    net = mx.sym.Activation(net, name='relu1', act_type='relu')
    net = mx.sym.Pooling(net, name='pool1', kernel=(2, 2), stride=(2, 2), pool_type='max')
    net = mx.sym.Convolution(net, name='conv2', num_filter=8, kernel=(3, 3), pad=(1, 1))
    net = mx.sym.BatchNorm(net, name='bn2', fix_gamma=False)
    net = mx.sym.Activation(net, name='relu2', act_type='relu')
    net = mx.sym.Pooling(net, name='pool2', kernel=(1, 1), global_pool=True, pool_type='avg')
    net = mx.sym.Flatten(net, name='flatten')
    net = mx.sym.FullyConnected(net, name='fc', num_hidden=5)
    return mx.sym.SoftmaxOutput(net, name='softmax')


def convbn_data(seed, samples):
    rng = np.random.RandomState(seed)
    x = rng.normal(0, 1, (samples, 3, 8, 8)).astype(np.float32)
    y = rng.randint(0, 5, samples).astype(np.float32)
    return x, y


def convbn_params(mx, symbol):
    """Random parameters and moving statistics (numpy), by name."""
    arg = init_params(6, param_shapes(symbol, data=(16, 3, 8, 8)))
    _, _, aux_shapes = symbol.infer_shape(data=(16, 3, 8, 8))
    rng = np.random.RandomState(7)
    aux = {}
    for name, shape in zip(symbol.list_auxiliary_states(), aux_shapes):
        if name.endswith('moving_var'):
            aux[name] = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        else:
            aux[name] = rng.normal(0, 0.2, shape).astype(np.float32)
    # bn1 has fix_gamma=True: its gamma stays 1 (MXNet's training forward writes 1 into it)
    arg['bn1_gamma'] = np.ones_like(arg['bn1_gamma'])
    arg['bn2_gamma'] = rng.uniform(0.5, 1.5, arg['bn2_gamma'].shape).astype(np.float32)
    return arg, aux


def write_convbn_checkpoint(mx, prefix):
    """Save the conv net with its random parameters as epoch 0 (MXNet's save_checkpoint)."""
    symbol = convbn_symbol(mx)
    arg, aux = convbn_params(mx, symbol)
    mx.model.save_checkpoint(prefix, 0, symbol, {k: mx.nd.array(v) for k, v in arg.items()},
                             {k: mx.nd.array(v) for k, v in aux.items()})


def run_convbn_predict(mx, prefix):
    """``Module.load`` the checkpoint and ``predict`` 50 samples in batches of 16 (the last
    one padded); also ``iter_predict``'s batch sizes."""
    x, y = convbn_data(8, 50)
    mod = mx.mod.Module.load(prefix, 0)
    it = mx.io.NDArrayIter(x, y, batch_size=16)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label, for_training=False)
    arrays = {'predict': mod.predict(it).asnumpy()}
    sizes = [[out[0].shape[0], batch.pad] for out, _, batch in mod.iter_predict(it)]
    return arrays, {'iter_predict': sizes}


def run_convbn_finetune(mx, prefix):
    """Train the loaded conv net for two batches (BatchNorm in training mode)."""
    x, y = convbn_data(10, 32)
    mod = mx.mod.Module.load(prefix, 0)
    it = mx.io.NDArrayIter(x, y, batch_size=16)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_optimizer(optimizer='sgd',
                       optimizer_params={'learning_rate': 0.05, 'momentum': 0.9})
    arrays = {}
    for i, batch in enumerate(it):
        mod.forward_backward(batch)
        arrays['output%d' % i] = mod.get_outputs()[0].asnumpy()
        mod.update()
    arrays.update(_params(mod))
    return arrays, {}


# -------------------------------------------------------------------------------------------------
# BucketingModule
# -------------------------------------------------------------------------------------------------

VOCAB, EMBED, HIDDEN, CLASSES, BATCH = 20, 8, 12, 5, 8


def make_sym_gen(mx):
    """``sym_gen(seq_len)``: an embedding and a tanh RNN unrolled over ``seq_len`` steps with
    shared weights, classifying each sequence from its last state."""
    def sym_gen(seq_len):
        data = mx.sym.Variable('data')
        label = mx.sym.Variable('softmax_label')
        i2h_weight = mx.sym.Variable('rnn_i2h_weight')
        h2h_weight = mx.sym.Variable('rnn_h2h_weight')
        h2h_bias = mx.sym.Variable('rnn_h2h_bias')
        embed = mx.sym.Embedding(data, input_dim=VOCAB, output_dim=EMBED, name='embed')
        steps = mx.sym.SliceChannel(embed, num_outputs=seq_len, axis=1, squeeze_axis=True)
        state = None
        for t in range(seq_len):
            i2h = mx.sym.FullyConnected(steps[t], weight=i2h_weight, no_bias=True,
                                        num_hidden=HIDDEN, name='t%d_i2h' % t)
            if state is not None:
                i2h = i2h + mx.sym.FullyConnected(state, weight=h2h_weight, bias=h2h_bias,
                                                  num_hidden=HIDDEN, name='t%d_h2h' % t)
            state = mx.sym.Activation(i2h, act_type='tanh', name='t%d_state' % t)
        fc = mx.sym.FullyConnected(state, num_hidden=CLASSES, name='cls')
        return mx.sym.SoftmaxOutput(fc, label, name='softmax'), ('data',), ('softmax_label',)
    return sym_gen


def bucket_batch(mx, seed, key):
    """A DataBatch of bucket ``key``: BATCH sequences of ``key`` tokens and their labels."""
    rng = np.random.RandomState(seed)
    data = rng.randint(0, VOCAB, (BATCH, key)).astype(np.float32)
    label = rng.randint(0, CLASSES, BATCH).astype(np.float32)
    return mx.io.DataBatch(
        [mx.nd.array(data)], [mx.nd.array(label)], bucket_key=key,
        provide_data=[mx.io.DataDesc('data', (BATCH, key))],
        provide_label=[mx.io.DataDesc('softmax_label', (BATCH,))])


def bucketing_init(mx):
    symbol, _, _ = make_sym_gen(mx)(6)
    return init_params(11, param_shapes(symbol, data=(BATCH, 6)))


def run_bucketing(mx):
    """Train over buckets 6, 3, 6, 4, 3 batch by batch, then run a new bucket (5)."""
    mod = mx.mod.BucketingModule(make_sym_gen(mx), default_bucket_key=6)
    mod.bind(data_shapes=[mx.io.DataDesc('data', (BATCH, 6))],
             label_shapes=[mx.io.DataDesc('softmax_label', (BATCH,))])
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in bucketing_init(mx).items()})
    mod.init_optimizer(optimizer='sgd',
                       optimizer_params={'learning_rate': 0.2, 'momentum': 0.9})
    arrays = {}
    for i, key in enumerate([6, 3, 6, 4, 3]):
        mod.forward(bucket_batch(mx, 20 + i, key), is_train=True)
        arrays['output%d' % i] = mod.get_outputs()[0].asnumpy()
        mod.backward()
        mod.update()
    arrays.update(_params(mod))
    mod.forward(bucket_batch(mx, 30, 5), is_train=False)
    arrays['predict5'] = mod.get_outputs()[0].asnumpy()
    facts = {'buckets': sorted(int(k) for k in mod._buckets)}
    return arrays, facts


class BucketIter:
    """An iterator over precomputed bucketed batches (fit needs provide_data/label)."""

    def __init__(self, mx, keys, seed):
        self.batches = [bucket_batch(mx, seed + i, key) for i, key in enumerate(keys)]
        self.default_bucket_key = max(keys)
        self.provide_data = [mx.io.DataDesc('data', (BATCH, self.default_bucket_key))]
        self.provide_label = [mx.io.DataDesc('softmax_label', (BATCH,))]
        self._pos = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._pos == len(self.batches):
            raise StopIteration
        self._pos += 1
        return self.batches[self._pos - 1]

    next = __next__

    def reset(self):
        self._pos = 0


def run_bucketing_fit(mx):
    """``fit`` a BucketingModule for 2 epochs over batches of buckets 6, 3, 4, 3."""
    logger = capture_logger('module-bucket-fit')
    mod = mx.mod.BucketingModule(make_sym_gen(mx), default_bucket_key=6, logger=logger)
    train = BucketIter(mx, [6, 3, 4, 3], 40)
    mod.fit(train, eval_metric='acc', optimizer='sgd',
            optimizer_params={'learning_rate': 0.2, 'momentum': 0.9},
            arg_params={k: mx.nd.array(v) for k, v in bucketing_init(mx).items()}, num_epoch=2)
    facts = {'log': [line for line in logger.handlers[0].lines if 'Time cost' not in line]}
    return _params(mod), facts


# -------------------------------------------------------------------------------------------------
# A Monitor installed on a Module
# -------------------------------------------------------------------------------------------------

def run_monitor(mx):
    """MXNet's test_monitor network: the statistics a Monitor collects over one
    forward_backward, as ``[name, value]`` (the value as the Monitor's text)."""
    train_data = mx.io.NDArrayIter(mx.nd.array([[0.05, .10]]), mx.nd.array([[.01, 0.99]]),
                                   batch_size=1)
    x = mx.symbol.Variable('data')
    x = mx.symbol.FullyConnected(name='fc_0', data=x, num_hidden=2)
    x = mx.symbol.Activation(name='act_0', data=x, act_type='sigmoid')
    x = mx.symbol.FullyConnected(name='fc_1', data=x, num_hidden=2)
    x = mx.symbol.Activation(name='act_1', data=x, act_type='sigmoid')
    x = mx.symbol.LinearRegressionOutput(data=x, name='softmax', grad_scale=2)

    def mean_abs(x):
        return mx.nd.sum(mx.nd.abs(x)) / x.size
    mon = mx.mon.Monitor(1, stat_func=mean_abs, pattern='.*', sort=True)
    mod = mx.mod.Module(x, context=[mx.cpu()])
    mod.bind(train_data.provide_data, label_shapes=train_data.provide_label)
    mod.install_monitor(mon)
    mod.init_params(arg_params={'fc_0_weight': mx.nd.array([[.15, .20], [.25, .30]]),
                                'fc_0_bias': mx.nd.array([.35, .35]),
                                'fc_1_weight': mx.nd.array([[.40, .45], [.50, .55]]),
                                'fc_1_bias': mx.nd.array([.60, .60])})
    mon.tic()
    mod.forward_backward(next(iter(train_data)))
    # MXNet's gradient of the label is memory it never writes: its statistics are noise, so
    # the values of the backward entries are left out (their names are kept)
    return {}, {'stats': [[name, None if '_backward_' in name else value]
                          for _, name, value in mon.toc()]}


def scenarios(mx, convbn_prefix):
    """``{name: (arrays, facts)}`` of every scenario."""
    return {
        'mlp_fit': run_mlp_fit(mx),
        'multi_context_fit': run_multi_context_fit(mx),
        'convbn_predict': run_convbn_predict(mx, convbn_prefix),
        'convbn_finetune': run_convbn_finetune(mx, convbn_prefix),
        'bucketing': run_bucketing(mx),
        'bucketing_fit': run_bucketing_fit(mx),
        'monitor': run_monitor(mx),
    }


def main():
    import mxnet as mx  # pylint: disable=import-outside-toplevel
    write_convbn_checkpoint(mx, CONVBN_PREFIX)
    arrays, facts = {}, {'mxnet_version': mx.__version__}
    for name, (scenario_arrays, scenario_facts) in scenarios(mx, CONVBN_PREFIX).items():
        arrays.update({'%s/%s' % (name, k): v for k, v in scenario_arrays.items()})
        facts[name] = scenario_facts
    np.savez_compressed(NUMBERS, **arrays)
    with open(FACTS, 'w') as f:
        json.dump(facts, f, indent=1, sort_keys=True)
        f.write('\n')


if __name__ == '__main__':
    main()
