"""Record what MXNet 1.9.1's mx.io iterators give, for tests/test_io.py.

Run with MXNet's Python (``.oracle/bin/python tests/data/make_io_files.py``). It writes the
input files (``io-*.csv``, ``io-mnist-*``), then runs MXNet's iterators over them and over
small arrays, and records every batch (data, label, pad, index) of a few epochs, and the
``provide_data``/``provide_label`` of each iterator, in ``io-expected.json``; the float32
values MXNet parses from ``io-numbers.csv`` go to ``io-numbers.npz``.
"""
import json
import os
import struct

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def write_inputs():
    """The CSV and idx files the file iterators read."""
    with open(path('io-data.csv'), 'w') as f:
        f.write('1,2,3\n2,3,4\n3,4,5\n4,5,6\n')
    with open(path('io-label.csv'), 'w') as f:
        f.write('10\n20\n30\n40\n')
    # blank lines, CRLF, spaces, exponents, a field without a number, hex and octal integers
    with open(path('io-odd.csv'), 'w', newline='') as f:
        f.write('1.5e1, 2 ,-3\r\n\r\n0x1A,010,+7\n4,,5,6\n99999999999,-2147483649,1e3\n')
    os.makedirs(path('io-csvdir'), exist_ok=True)
    with open(path(os.path.join('io-csvdir', 'a.csv')), 'w') as f:
        f.write('2,2,2\n3,3,3\n')
    with open(path(os.path.join('io-csvdir', 'b.csv')), 'w') as f:
        f.write('1,1,1\n')
    rng = np.random.RandomState(1)
    values = np.concatenate([rng.randn(600) * 10.0 ** rng.randint(-8, 8, 600), rng.rand(200),
                             [3.4028236e38, 1e39, 1e-46, 1.2e-38, 0.1, 1 / 3]])
    with open(path('io-numbers.csv'), 'w') as f:
        for v in values:
            f.write('%r,%.9g,%.3f\n' % (float(v), v, v))
        f.write('inf,-Infinity,nan\n-,+,.\n1f,2F,0.1234567890123456789012\n')
        f.write('12345678901234567890123,1e-45,1E+2\n')
    pixels = rng.randint(0, 256, size=(23, 4, 3)).astype(np.uint8)
    write_idx('io-mnist', pixels, (10 + np.arange(23) * 7 % 256).astype(np.uint8))
    # 1000 images of 2x2 pixels that spell their own index (big-endian), to read shuffles back
    index = np.arange(1000, dtype='>u4').view(np.uint8).reshape(1000, 2, 2)
    write_idx('io-mnist-index', index, (np.arange(1000) % 256).astype(np.uint8))


def write_idx(prefix, images, labels):
    with open(path(prefix + '-images-idx3-ubyte'), 'wb') as f:
        f.write(struct.pack('>IIII', 2051, *images.shape))
        f.write(images.tobytes())
    with open(path(prefix + '-labels-idx1-ubyte'), 'wb') as f:
        f.write(struct.pack('>II', 2049, len(labels)))
        f.write(labels.tobytes())


def describe(descs):
    return [[d.name, list(d.shape), np.dtype(d.dtype).name, d.layout] for d in descs]


def batches(it, epochs, reset='reset'):
    """Every batch of ``epochs`` epochs, calling ``it.<reset>()`` between them; an error ends
    the record with ``{'error': its type}``."""
    out = []
    for epoch in range(epochs):
        if epoch:
            getattr(it, reset)()
        out.append([])
        try:
            for b in it:
                out[-1].append({'data': [d.asnumpy().tolist() for d in b.data],
                                'label': [l.asnumpy().tolist() for l in (b.label or [])],
                                'dtypes': [np.dtype(d.dtype).name
                                           for d in b.data + (b.label or [])],
                                'pad': b.pad,
                                'index': None if b.index is None else b.index.tolist()})
        except mx.MXNetError:
            out[-1].append({'error': 'MXNetError'})
            break
    return out


def arrays(spec):
    """A case's arrays from their JSON spec: {'values', 'dtype', 'nd'} or a list/dict of them."""
    if spec is None:
        return None
    if isinstance(spec, list):
        return [arrays(s) for s in spec]
    if 'values' not in spec:
        return {k: arrays(v) for k, v in spec.items()}
    value = np.array(spec['values'], dtype=spec['dtype'])
    return mx.nd.array(value, dtype=spec['dtype']) if spec.get('nd') else value


def arr(values, dtype='float32', nd=False):
    return {'values': np.asarray(values).tolist(), 'dtype': dtype, 'nd': nd}


NDARRAY_CASES = {
    'pad': dict(data=arr(np.arange(20).reshape(10, 2)), label=arr(np.arange(10)),
                kwargs=dict(batch_size=4), epochs=2),
    'discard': dict(data=arr(np.arange(20).reshape(10, 2)), label=arr(np.arange(10)),
                    kwargs=dict(batch_size=4, last_batch_handle='discard'), epochs=2),
    'roll_over': dict(data=arr(np.arange(20).reshape(10, 2)), label=arr(np.arange(10)),
                      kwargs=dict(batch_size=4, last_batch_handle='roll_over'), epochs=4),
    'roll_over_hard_reset': dict(data=arr(np.arange(10)), label=None,
                                 kwargs=dict(batch_size=4, last_batch_handle='roll_over'),
                                 epochs=3, reset='hard_reset'),
    'pad_tile': dict(data=arr(np.arange(6).reshape(3, 2)), label=arr([7, 8, 9]),
                     kwargs=dict(batch_size=8), epochs=1),
    'pad_tile_rest': dict(data=arr(np.arange(3)), label=None, kwargs=dict(batch_size=7),
                          epochs=1),
    'discard_too_big': dict(data=arr(np.arange(3)), label=None,
                            kwargs=dict(batch_size=5, last_batch_handle='discard'), epochs=2),
    'roll_over_too_big': dict(data=arr(np.arange(3)), label=None,
                              kwargs=dict(batch_size=5, last_batch_handle='roll_over'),
                              epochs=3),
    'dict_and_list': dict(data={'b': arr(np.zeros((5, 2))),
                                'a': arr(np.arange(15).reshape(5, 3), 'int32')},
                          label=[arr(np.arange(5)), arr(np.arange(5) * 2, 'int32', True)],
                          kwargs=dict(batch_size=3), epochs=2),
    'names': dict(data=arr(np.arange(8).reshape(4, 2)), label=arr(np.arange(4)),
                  kwargs=dict(batch_size=2, data_name='x', label_name='y'), epochs=1),
    'ndarray_dtypes': dict(data=arr(np.arange(8).reshape(4, 2), 'float16', True),
                           label=arr(np.arange(4), 'int32', True),
                           kwargs=dict(batch_size=3), epochs=1),
    'layout_tnc': dict(data=arr(np.arange(30).reshape(2, 5, 3)), label=None,
                       kwargs=dict(batch_size=2, layout='TNC'), epochs=1),
    'shuffle': dict(data=arr(np.arange(10)), label=arr(np.arange(10) * 10),
                    kwargs=dict(batch_size=3, shuffle=True), epochs=3, seed=3),
    'shuffle_ndarray_roll_over': dict(
        data=arr(np.arange(14).reshape(7, 2), 'float16', True), label=None,
        kwargs=dict(batch_size=3, shuffle=True, last_batch_handle='roll_over'), epochs=3,
        seed=11),
}


def record_ndarray_iters():
    cases = {}
    for name, case in NDARRAY_CASES.items():
        if 'seed' in case:
            np.random.seed(case['seed'])
        it = mx.io.NDArrayIter(arrays(case['data']), arrays(case['label']), **case['kwargs'])
        record = dict(case, provide_data=describe(it.provide_data),
                      provide_label=describe(it.provide_label))
        record['batches'] = batches(it, case['epochs'], case.get('reset', 'reset'))
        if 'seed' in case:
            record['idx'] = it.idx.tolist()
        cases[name] = record
    return cases


def record_resize_and_prefetch():
    out = {}
    it = mx.io.ResizeIter(mx.io.NDArrayIter(np.arange(10), batch_size=3), 5)
    out['resize'] = dict(size=5, reset_internal=True, batches=batches(it, 2),
                         provide_data=describe(it.provide_data), batch_size=it.batch_size)
    it = mx.io.ResizeIter(mx.io.NDArrayIter(np.arange(10), batch_size=3), 2,
                          reset_internal=False)
    out['resize_no_reset'] = dict(size=2, reset_internal=False, batches=batches(it, 3),
                                  provide_data=describe(it.provide_data),
                                  batch_size=it.batch_size)
    first = mx.io.NDArrayIter({'data': np.arange(10)}, np.arange(10) * 2, batch_size=4)
    second = mx.io.NDArrayIter({'data': np.arange(10) + 100}, batch_size=4)
    it = mx.io.PrefetchingIter([first, second], rename_data=[{'data': 'd1'}, {'data': 'd2'}])
    out['prefetch'] = dict(batches=batches(it, 2), provide_data=describe(it.provide_data),
                           provide_label=describe(it.provide_label), batch_size=it.batch_size)
    return out


CSV_CASES = {
    'round_batch': (dict(data_csv='io-data.csv', data_shape=(3,), batch_size=3), 5),
    'no_round_batch': (dict(data_csv='io-data.csv', data_shape=(3,), batch_size=3,
                            round_batch=False), 2),
    'label': (dict(data_csv='io-data.csv', data_shape=(3,), label_csv='io-label.csv',
                   batch_size=2), 2),
    'int32': (dict(data_csv='io-data.csv', data_shape=(3,), label_csv='io-label.csv',
                   batch_size=3, dtype='int32'), 2),
    'int64': (dict(data_csv='io-data.csv', data_shape=(3,), batch_size=3, dtype='int64'), 1),
    'label_shape': (dict(data_csv='io-data.csv', data_shape=(3, 1), label_csv='io-data.csv',
                         label_shape=(3,), batch_size=3), 1),
    'label_shape_one': (dict(data_csv='io-data.csv', data_shape=(1, 3),
                             label_csv='io-label.csv', label_shape=(1, 1), batch_size=3), 1),
    'batch_6': (dict(data_csv='io-data.csv', data_shape=(3,), batch_size=6), 3),
    'batch_8': (dict(data_csv='io-data.csv', data_shape=(3,), batch_size=8), 3),
    'directory': (dict(data_csv='io-csvdir', data_shape=(3,), batch_size=2), 2),
    'odd_float': (dict(data_csv='io-odd.csv', data_shape=(3,), batch_size=4), 1),
    'odd_int32': (dict(data_csv='io-odd.csv', data_shape=(3,), batch_size=4, dtype='int32'), 1),
    'odd_int64': (dict(data_csv='io-odd.csv', data_shape=(3,), batch_size=4, dtype='int64'), 1),
    'string_values': (dict(data_csv='io-data.csv', data_shape='(3,)', batch_size='2',
                           round_batch='0', prefetch_buffer=1, ctx='cpu'), 1),
}


def record_csv_iters():
    cases = {}
    for name, (kwargs, epochs) in CSV_CASES.items():
        given = {k: path(v) if k.endswith('_csv') else v for k, v in kwargs.items()}
        it = mx.io.CSVIter(**given)
        cases[name] = dict(kwargs=kwargs, epochs=epochs, batches=batches(it, epochs),
                           provide_data=describe(it.provide_data),
                           provide_label=describe(it.provide_label), batch_size=it.batch_size)
    return cases


MNIST_CASES = {
    'plain': (dict(batch_size=5, shuffle=False), 2),
    'flat': (dict(batch_size=5, shuffle=False, flat=True), 1),
    'shuffle': (dict(batch_size=5), 2),
    'seed': (dict(batch_size=4, seed=3), 1),
    'part': (dict(batch_size=3, shuffle=False, num_parts=3, part_index=1), 1),
    'part_shuffle': (dict(batch_size=3, num_parts=3, part_index=2, seed=1), 1),
    'names': (dict(batch_size=6, shuffle=0, silent=1, data_name='img', label_name='lbl',
                   input_shape=(1, 4, 3)), 1),
}


def record_mnist_iters():
    files = dict(image=path('io-mnist-images-idx3-ubyte'),
                 label=path('io-mnist-labels-idx1-ubyte'))
    cases = {}
    for name, (kwargs, epochs) in MNIST_CASES.items():
        it = mx.io.MNISTIter(**files, **kwargs)
        cases[name] = dict(kwargs=kwargs, epochs=epochs, batches=batches(it, epochs),
                           provide_data=describe(it.provide_data),
                           provide_label=describe(it.provide_label), batch_size=it.batch_size)
    orders = {}
    for seed in (0, 7, -5):
        it = mx.io.MNISTIter(image=path('io-mnist-index-images-idx3-ubyte'),
                             label=path('io-mnist-index-labels-idx1-ubyte'),
                             batch_size=1000, seed=seed, silent=True)
        pixels = np.round(it.next().data[0].asnumpy().reshape(1000, 4) * 256).astype(np.int64)
        orders[str(seed)] = (pixels[:, 0] << 24 | pixels[:, 1] << 16 | pixels[:, 2] << 8 |
                             pixels[:, 3]).tolist()
    return cases, orders


def main():
    write_inputs()
    mnist, orders = record_mnist_iters()
    expected = {'ndarray': record_ndarray_iters(), 'wrappers': record_resize_and_prefetch(),
                'csv': record_csv_iters(), 'mnist': mnist, 'mnist_orders': orders}
    with open(path('io-expected.json'), 'w') as f:
        json.dump(expected, f, separators=(',', ':'))
    it = mx.io.CSVIter(data_csv=path('io-numbers.csv'), data_shape=(3,), batch_size=1000,
                       round_batch=False)
    batch = it.next()
    rows = batch.data[0].shape[0] - batch.pad
    np.savez_compressed(path('io-numbers.npz'), values=batch.data[0].asnumpy()[:rows])


if __name__ == '__main__':
    main()
