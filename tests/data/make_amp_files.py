"""Write tests/data/amp-bucketing.json: what MXNet 1.9.1's ``contrib.amp.convert_bucketing_module``
makes of a two-bucket ``BucketingModule``.

Run with the MXNet oracle, from the repository root::

    .oracle/bin/python tests/data/make_amp_files.py

``run_convert_bucketing`` is a function of the ``mx`` package: run here with ``mxnet``, and by
tests/contrib/test_amp.py with ``hybridlib`` (the same source, as a drop-in user would run it),
which compares what they return. ``sym_gen(key)`` stacks ``key`` FullyConnected layers that
share one weight and bias, then a softmax (an fp32 operator) and a ``SoftmaxOutput``; the
module is bound for bucket 3 (the default), switched to bucket 2, given its parameters, and
converted without and with ``cast_optional_params``. Recorded per conversion: every bucket's
converted graph (nodes as ``[op, name, inputs]``, arguments, outputs, the ``__dtype__`` of the
parameters), the dtypes of the parameters of the new module and of the original module (MXNet
casts them in place), and what the new module keeps (default bucket, current module, ...).
MXNet computes float16 FullyConnected on GPUs only, so no numbers are compared.
"""
import importlib
import json
import logging
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FACTS = os.path.join(HERE, 'amp-bucketing.json')
BATCH, WIDTH = 4, 5


def sym_gen_of(mx):
    """The bucketing module's ``sym_gen``: ``key`` shared FullyConnected layers with relu."""
    def sym_gen(key):
        data = mx.sym.Variable('data')
        weight, bias = mx.sym.Variable('shared_weight'), mx.sym.Variable('shared_bias')
        net = data
        for i in range(key):
            net = mx.sym.FullyConnected(net, weight=weight, bias=bias, num_hidden=WIDTH,
                                        name='fc%d' % i)
            net = mx.sym.Activation(net, act_type='relu', name='relu%d' % i)
        net = mx.sym.softmax(net, name='probs')
        net = mx.sym.SoftmaxOutput(net, name='softmax')
        return net, ('data',), ('softmax_label',)
    return sym_gen


def _nodes(symbol):
    return [[n['op'], n['name'], [e[:2] for e in n['inputs']]]
            for n in json.loads(symbol.tojson(remove_amp_cast=False))['nodes']]


def bucketing_module(mx, logger):
    """The module of ``sym_gen_of`` with buckets 3 (default, bound first) and 2."""
    mod = mx.mod.BucketingModule(sym_gen_of(mx), default_bucket_key=3, logger=logger,
                                 context=mx.cpu())
    mod.bind(data_shapes=[('data', (BATCH, WIDTH))],
             label_shapes=[('softmax_label', (BATCH,))])
    rng = np.random.RandomState(0)
    mod.init_params(arg_params={
        'shared_weight': mx.nd.array(rng.uniform(-1, 1, (WIDTH, WIDTH)).astype(np.float32)),
        'shared_bias': mx.nd.array(rng.uniform(-1, 1, (WIDTH,)).astype(np.float32))})
    mod.switch_bucket(2, data_shapes=[('data', (BATCH, WIDTH))],
                      label_shapes=[('softmax_label', (BATCH,))])
    return mod


def _dtypes(params):
    return {k: np.dtype(v.dtype).name for k, v in sorted(params.items())}


def run_convert_bucketing(mx):
    """Convert the module without and with ``cast_optional_params``; return the facts.

    As in MXNet, ``convert_bucketing_module`` is in ``contrib.amp.amp`` (``contrib.amp``
    does not export it).
    """
    amp = importlib.import_module(mx.__name__ + '.contrib.amp.amp')
    logger = logging.getLogger('amp-bucketing')
    facts = {}
    for optional in (False, True):
        mod = bucketing_module(mx, logger)
        new = amp.convert_bucketing_module(mod, cast_optional_params=optional)
        buckets = {}
        for key, module in sorted(new._buckets.items()):
            symbol = module.symbol
            attrs = symbol.attr_dict()
            buckets[str(key)] = {
                'nodes': _nodes(symbol), 'arguments': symbol.list_arguments(),
                'outputs': symbol.list_outputs(),
                'declared': {n: attrs.get(n, {}).get('__dtype__') for n in
                             ('shared_weight', 'shared_bias')},
                'data_names': list(module.data_names), 'label_names': module.label_names}
        arg, aux = new._curr_module._arg_params, new._curr_module._aux_params
        facts['optional' if optional else 'plain'] = {
            'type': type(new).__name__, 'buckets': buckets,
            'default_bucket_key': new._default_bucket_key,
            'curr_is_default': new._curr_module is new._buckets[3],
            'binded': new.binded, 'params_initialized': new.params_initialized,
            'curr_params_initialized': new._curr_module.params_initialized,
            'sym_gen_kept': new._sym_gen is mod._sym_gen,
            'logger_kept': new.logger is logger,
            'arg_dtypes': _dtypes(arg), 'aux_dtypes': _dtypes(aux),
            'same_arg_dict': arg is mod._curr_module._arg_params,
            'original_dtypes': _dtypes(mod._curr_module._arg_params)}
    return facts


def main():
    import mxnet as mx
    facts = run_convert_bucketing(mx)
    with open(FACTS, 'w') as f:
        json.dump(facts, f, indent=1, sort_keys=True)
    print('wrote', FACTS)


if __name__ == '__main__':
    main()
