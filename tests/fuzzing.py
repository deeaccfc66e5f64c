"""Fuzzing hybridlib's loaders: small valid files of each format, mutated, then loaded the way a
user loads them. Every outcome must be a successful load or one of the library's errors
(``MXNetError`` and its subclasses; ``FileNotFoundError`` where a file a loader looks for is
gone); anything else, or a case still running after ``SLOW`` seconds, is a failure.

Each format has structured mutators, which know its fields (JSON nodes, entries and attribute
strings; the aligned integers of the binary layouts; index lines; the JSON inside a states
file), and shares a seeded random byte mutator (bit flips, bytes set, inserted, deleted,
duplicated, truncation). Case ``i`` of a format is seeded by ``"<format>:<i>"``, so a failure
is reproduced by its number.

``tests/test_fuzz.py`` runs a bounded number of cases in CI. For a longer run::

    python tests/fuzzing.py 20000           # cases per format, then a table of outcomes
    HYBRIDLIB_FUZZ_CASES=20000 pytest tests/test_fuzz.py
"""
import collections
import contextlib
import copy
import gzip
import json
import os
import random
import signal
import struct
import sys
import tempfile
import threading
import time
import warnings

import numpy as np

import hybridlib as mx
from hybridlib import gluon, nd, recordio, sym
from hybridlib.base import MXNetError
from hybridlib.data import vision

SLOW = 10.0      # seconds: a case still running then is stopped and reported as a hang

# -------------------------------------------------------------------------------------------------
# The byte mutator
# -------------------------------------------------------------------------------------------------

INTERESTING_INTS = [0, 1, -1, 2, 7, 8, 16, 32, 33, 255, 256, 2 ** 15, 2 ** 16 - 1, 2 ** 31 - 1,
                    2 ** 31, 2 ** 32 - 1, 2 ** 40, 2 ** 62, 2 ** 63 - 1, -2 ** 63, -2 ** 31]


def mutate_bytes(data, rng, aligned=False):
    """``data`` (bytes) after one to eight random edits; ``aligned`` writes interesting
    integers at 4-byte boundaries (the fields of the binary formats) more often."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        kind = rng.choice(['int', 'int', 'flip', 'set', 'insert', 'delete', 'duplicate',
                           'truncate'] if aligned else
                          ['flip', 'flip', 'set', 'insert', 'delete', 'duplicate', 'truncate',
                           'int'])
        n = len(data)
        at = rng.randrange(n + 1) if n else 0
        if kind == 'flip' and n:
            i = rng.randrange(n)
            data[i] ^= 1 << rng.randrange(8)
        elif kind == 'set' and n:
            data[rng.randrange(n)] = rng.choice([0, 0xff, 0x7f, 0x80, rng.randrange(256)])
        elif kind == 'insert':
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif kind == 'delete' and n:
            del data[at:at + rng.randint(1, 16)]
        elif kind == 'duplicate' and n:
            start = rng.randrange(n)
            data[at:at] = data[start:start + rng.randint(1, 64)]
        elif kind == 'truncate':
            del data[at:]
        elif kind == 'int' and n >= 8:
            i = rng.randrange(0, n - 7, 4 if aligned else 1)
            value = rng.choice(INTERESTING_INTS)
            data[i:i + 8] = (value % 2 ** 64).to_bytes(8, 'little')
            if rng.random() < 0.5:      # a 4-byte field only
                data[i + 4:i + 8] = b'\0\0\0\0' if value >= 0 else b'\xff\xff\xff\xff'
    return bytes(data)


# -------------------------------------------------------------------------------------------------
# Symbol JSON
# -------------------------------------------------------------------------------------------------

def base_graph():
    data = sym.var('data')
    x = sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name='conv')
    x = sym.BatchNorm(x, name='bn')
    x = sym.Activation(x, act_type='relu', name='relu')
    x = sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type='max', name='pool')
    a, b = sym.split(x, num_outputs=2, axis=1, name='split')
    x = sym.Concat(a, b, dim=1, name='concat')
    x = sym.FullyConnected(x, num_hidden=5, name='fc')
    x = sym.broadcast_add(x, sym.zeros((1, 5), name='zeros'), name='add')
    return sym.softmax(sym.Reshape(x, shape=(-1, 5), name='reshape'), name='out')


INTERESTING_ATTRS = ['-5', '0', '1', '2147483648', str(2 ** 40), str(2 ** 64), '1e999', '-1e999',
                     'nan', 'inf', '(' * 40, '[' * 3, '((1, 2)', '(1e999, 1)', '(0, 0)',
                     '(-1, -1)', '(2147483647, 2147483647)', '(1099511627776,)', '', 'None',
                     'True', "'x'", '\x00', '\xff' * 5, '9' * 5000, '2**40', '()', '(1,)',
                     '(3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3)',
                     'float16', 'int8', 'bogus', '(1, None)', '[1, [2, [3]]]', '1.5', '-0',
                     '0x10', '(2, 2)', 'max', 'avg', 'full', 'valid']
INTERESTING_ENTRIES = [[-1, 0, 0], [10 ** 20, 0, 0], [0, -1, 0], [0, 10 ** 9, 0], ['0', 0, 0],
                       [0.5, 0, 0], [0, 0], [0], [], None, 'x', [0, 0, 0, 0], [True, 0, 0],
                       [0, 1, 0], [1, 0, 0], [2, 1, 0], {'a': 1}]
INTERESTING_VALUES = [None, 0, -1, 10 ** 30, 1.5, '', 'x', [], {}, [[]], True, '\udcff']


def _pick(rng, values):
    """A copy of one of ``values`` (they are shared by every case, and edited in place)."""
    return copy.deepcopy(rng.choice(values))


def mutate_graph(doc, rng):
    """Structured edits of a parsed symbol JSON document."""
    for _ in range(rng.randint(1, 4)):
        nodes = doc.get('nodes') if isinstance(doc, dict) else None
        if not isinstance(nodes, list) or not nodes:
            doc = {'nodes': _pick(rng, INTERESTING_VALUES), 'heads': [[0, 0, 0]]}
            continue
        node = rng.choice(nodes)
        kind = rng.choice(['attr', 'attr', 'attr', 'entry', 'entry', 'op', 'key', 'heads',
                           'order', 'top', 'name', 'unknown_attr'])
        if not isinstance(node, dict):
            nodes[nodes.index(node)] = {'op': 'null', 'name': 'x', 'inputs': []}
            continue
        if kind == 'attr' and node.get('attrs'):
            key = rng.choice(sorted(node['attrs']))
            node['attrs'][key] = rng.choice(INTERESTING_ATTRS)
        elif kind == 'unknown_attr':
            node.setdefault('attrs', {})[rng.choice(['num_hidden', 'kernel', 'shape', 'zzz',
                                                     '__shape__', '__dtype__', 'axis'])] = \
                rng.choice(INTERESTING_ATTRS)
        elif kind == 'entry' and node.get('inputs'):
            i = rng.randrange(len(node['inputs']))
            node['inputs'][i] = _pick(rng, INTERESTING_ENTRIES)
        elif kind == 'op':
            node['op'] = rng.choice(['null', 'Convolution', 'FullyConnected', '_zeros', 'split',
                                     'Concat', 'softmax', 'NoSuchOp', 'Custom', '', 7,
                                     'BatchNorm', 'Reshape', 'RNN', '_foreach'])
        elif kind == 'key':
            node.pop(rng.choice(['op', 'name', 'inputs', 'attrs']), None)
        elif kind == 'heads':
            doc['heads'] = _pick(rng, [[], [_pick(rng, INTERESTING_ENTRIES)], 5,
                                       [[len(nodes) - 1, 0, 0]] * 3])
        elif kind == 'order':
            i, j = rng.randrange(len(nodes)), rng.randrange(len(nodes))
            nodes[i], nodes[j] = nodes[j], nodes[i]
        elif kind == 'top':
            doc[rng.choice(['nodes', 'heads', 'arg_nodes', 'node_row_ptr', 'attrs'])] = \
                _pick(rng, INTERESTING_VALUES)
        elif kind == 'name':
            node['name'] = _pick(rng, INTERESTING_VALUES + ['data', 'conv', 'a' * 10000])
    return doc


# -------------------------------------------------------------------------------------------------
# The formats: valid files, mutators, loaders
# -------------------------------------------------------------------------------------------------

class Format:
    """``files()``: {file name: bytes} of the valid case; ``mutate(files, rng)``: the mutated
    copy; ``load(folder)``: what a user does with the files written there."""
    name = None

    def mutate(self, files, rng):
        files = dict(files)
        name = rng.choice(sorted(files))
        if rng.random() < 0.5:
            files[name] = self.structured(name, files[name], rng)
        else:
            files[name] = mutate_bytes(files[name], rng)
        return files

    def structured(self, name, data, rng):
        return mutate_bytes(data, rng, aligned=True)


class SymbolJSON(Format):
    name = 'symbol JSON (sym.load)'

    def files(self):
        return {'net-symbol.json': base_graph().tojson().encode()}

    def structured(self, name, data, rng):
        return json.dumps(mutate_graph(json.loads(data), rng)).encode()

    def load(self, folder):
        graph = sym.load(os.path.join(folder, 'net-symbol.json'))
        graph.infer_shape_partial(data=(1, 2, 8, 8))    # and what loaded is checked


class ParamsFile(Format):
    name = '.params (nd.load)'

    def files(self):
        rng = np.random.default_rng(0)
        arrays = {'arg:w': nd.array(rng.standard_normal((3, 4))),
                  'aux:m': nd.array([1, 2, 3], dtype='int64'),
                  'x': nd.array(rng.standard_normal(()), dtype='float16'),
                  'e': nd.zeros((0, 3), dtype='uint8'), 'b': nd.ones((2, 1, 2), dtype='float64')}
        return {'x.params': nd.save_to_bytes(arrays)}

    def load(self, folder):
        nd.load(os.path.join(folder, 'x.params'))


class ImportedModel(Format):
    """SymbolBlock.imports: the graph with its parameters (mutating either file)."""
    name = 'model (SymbolBlock.imports)'

    def files(self):
        with tempfile.TemporaryDirectory() as d:
            net = gluon.nn.HybridSequential(prefix='m_')
            with net.name_scope():
                net.add(gluon.nn.Conv2D(4, 3, padding=1), gluon.nn.BatchNorm(),
                        gluon.nn.Activation('relu'), gluon.nn.Dense(3))
            net.initialize()
            net.hybridize()
            net(nd.ones((1, 2, 4, 4)))
            net.export(os.path.join(d, 'm'))
            return {name: open(os.path.join(d, name), 'rb').read()
                    for name in ('m-symbol.json', 'm-0000.params')}

    def structured(self, name, data, rng):
        if name.endswith('.json'):
            return json.dumps(mutate_graph(json.loads(data), rng)).encode()
        return mutate_bytes(data, rng, aligned=True)

    def load(self, folder):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            net = gluon.SymbolBlock.imports(os.path.join(folder, 'm-symbol.json'), ['data'],
                                            os.path.join(folder, 'm-0000.params'))
            net(nd.ones((1, 2, 4, 4)))      # and what loaded runs, or says why not


def _trainer():
    net = gluon.nn.Dense(3, in_units=4, prefix='t_')
    net.initialize()
    schedule = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.1)
    trainer = gluon.Trainer(net.collect_params(), 'adam',
                            {'learning_rate': 0.1, 'lr_scheduler': schedule})
    with mx.autograd.record():
        loss = net(nd.ones((2, 4))).sum()
    loss.backward()
    trainer.step(2)
    return trainer


class OptimizerStates(Format):
    """Trainer.load_states; the structured mutator edits the JSON that describes the states."""
    name = 'optimizer states (Trainer.load_states)'

    def files(self):
        with tempfile.TemporaryDirectory() as d:
            _trainer().save_states(os.path.join(d, 's.states'))
            return {'s.states': open(os.path.join(d, 's.states'), 'rb').read()}

    def structured(self, name, data, rng):
        if rng.random() < 0.3:
            return mutate_bytes(data, rng, aligned=True)
        arrays = nd.load_frombuffer(data)
        meta = json.loads(arrays['__hybridlib_states__'].asnumpy().tobytes())
        meta = _mutate_tree(meta, rng)
        text = json.dumps(meta).encode()
        arrays['__hybridlib_states__'] = nd.array(np.frombuffer(text, np.uint8), dtype='uint8')
        if rng.random() < 0.3 and len(arrays) > 1:
            del arrays[rng.choice(sorted(k for k in arrays if k != '__hybridlib_states__'))]
        return nd.save_to_bytes(arrays)

    def load(self, folder):
        self.trainer = getattr(self, 'trainer', None) or _trainer()
        self.trainer.load_states(os.path.join(folder, 's.states'))


def _mutate_tree(value, rng, depth=0):
    """A JSON value with one random part replaced (by another type, or removed)."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(sorted(value))
        if rng.random() < 0.15:
            del value[key]
        else:
            value[key] = _mutate_tree(value[key], rng, depth + 1)
        return value
    if isinstance(value, list) and value and rng.random() < 0.8:
        i = rng.randrange(len(value))
        value[i] = _mutate_tree(value[i], rng, depth + 1)
        return value
    return _pick(rng, INTERESTING_VALUES + [{'ndarray': 'missing'}, {'tuple': 3},
                                            {'dict': [[1]]}, {'object': 'os:system'},
                                            {'class': 'builtins:eval', 'attrs': {}},
                                            {'ndarray': '__hybridlib_states__'}])


class RecordIOFiles(Format):
    """MXIndexedRecordIO opened and every record read and unpacked."""
    name = 'RecordIO (.rec + .idx)'

    def files(self):
        with tempfile.TemporaryDirectory() as d:
            rec = recordio.MXIndexedRecordIO(os.path.join(d, 'r.idx'), os.path.join(d, 'r.rec'),
                                             'w')
            for i in range(4):
                label = float(i) if i % 2 else [float(i), 0.5, 2.0]
                rec.write_idx(i, recordio.pack(recordio.IRHeader(0, label, i, 0),
                                               bytes(range(i * 7 % 256)) * (i + 1)))
            rec.close()
            return {name: open(os.path.join(d, name), 'rb').read()
                    for name in ('r.idx', 'r.rec')}

    def structured(self, name, data, rng):
        if name == 'r.idx':
            lines = data.decode().splitlines()
            i = rng.randrange(len(lines))
            lines[i] = rng.choice(['-1\t0', '0\t-8', f'1\t{2 ** 63}', '2\tx', 'x\t0', '3',
                                   '1\t1\t1', '', '\t', '0\t0', f'{2 ** 70}\t0', '1\t12',
                                   '\x00', '5\t99999999'])
            return '\n'.join(lines).encode('utf-8', 'surrogateescape')
        return mutate_bytes(data, rng, aligned=True)

    def load(self, folder):
        rec = recordio.MXIndexedRecordIO(os.path.join(folder, 'r.idx'),
                                         os.path.join(folder, 'r.rec'), 'r')
        try:
            for key in rec.keys:
                record = rec.read_idx(key)
                if record is not None:
                    recordio.unpack(record)
        finally:
            rec.close()


class MNISTFiles(Format):
    """vision.MNIST over the four gzipped IDX files; the structured mutator edits the
    decompressed file."""
    name = 'MNIST IDX (vision.MNIST)'
    _names = ('train-images-idx3-ubyte.gz', 'train-labels-idx1-ubyte.gz')

    def files(self):
        rng = np.random.RandomState(0)
        images = rng.randint(0, 256, (3, 28, 28)).astype(np.uint8)
        return {self._names[0]: gzip.compress(struct.pack('>IIII', 2051, 3, 28, 28) +
                                              images.tobytes(), mtime=0),
                self._names[1]: gzip.compress(struct.pack('>II', 2049, 3) + bytes([7, 0, 9]),
                                              mtime=0)}

    def structured(self, name, data, rng):
        return gzip.compress(mutate_bytes(gzip.decompress(data), rng, aligned=True), mtime=0)

    def load(self, folder):
        vision.MNIST(folder)


class CIFARFiles(Format):
    name = 'CIFAR-10 binary (vision.CIFAR10)'

    def files(self):
        rng = np.random.RandomState(1)
        record = rng.randint(0, 256, (2, 3073)).astype(np.uint8)
        return {'test_batch.bin': record.tobytes()}

    def load(self, folder):
        vision.CIFAR10(folder, train=False)


FORMATS = [SymbolJSON(), ParamsFile(), ImportedModel(), OptimizerStates(), RecordIOFiles(),
           MNISTFiles(), CIFARFiles()]

# -------------------------------------------------------------------------------------------------
# Running cases
# -------------------------------------------------------------------------------------------------

Outcome = collections.namedtuple('Outcome', 'kind case seconds error')


def run_case(fmt, files, case, folder):
    """The outcome of case ``case`` of format ``fmt`` (valid files ``files``)."""
    rng = random.Random(f'{fmt.name}:{case}')
    _write(folder, fmt.mutate(files, rng))
    start = time.perf_counter()
    try:
        with _deadline(SLOW):
            fmt.load(folder)
        kind, error = 'loaded', None
    except (MXNetError, FileNotFoundError) as err:
        kind, error = type(err).__name__, err
    except _Hang as err:
        kind, error = 'UNCLEAN hang', err
    except Exception as err:            # noqa: BLE001 - what the fuzzing is looking for
        kind, error = f'UNCLEAN {type(err).__name__}', err
    return Outcome(kind, case, time.perf_counter() - start, error)


class _Hang(BaseException):
    """Raised in a case that runs past its deadline (a BaseException, which the library's
    ``except Exception`` clauses let through)."""


@contextlib.contextmanager
def _deadline(seconds):
    """Interrupt the block after ``seconds`` (a timer signal; where there is none, or off the
    main thread, the block runs unbounded)."""
    if not hasattr(signal, 'setitimer') or threading.current_thread() is not \
            threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise _Hang(f'still running after {seconds} s')
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_format(fmt, cases):
    """(Counter of outcome kinds, the unclean outcomes, slowest seconds) of ``cases`` cases."""
    files = fmt.files()
    counts, unclean, slowest = collections.Counter(), [], 0.0
    with tempfile.TemporaryDirectory() as folder:
        fmt.load(_write(folder, files))         # the valid files load
        for case in range(cases):
            outcome = run_case(fmt, files, case, folder)
            counts[outcome.kind] += 1
            slowest = max(slowest, outcome.seconds)
            if outcome.kind.startswith('UNCLEAN'):
                unclean.append(outcome)
    return counts, unclean, slowest


def _write(folder, files):
    for name, data in files.items():
        with open(os.path.join(folder, name), 'wb') as f:
            f.write(data)
    return folder


def main(cases):
    print(f'{cases} cases per format')
    for fmt in FORMATS:
        start = time.perf_counter()
        counts, unclean, slowest = run_format(fmt, cases)
        kinds = ', '.join(f'{k} {n}' for k, n in counts.most_common())
        print(f'{fmt.name}: {kinds}; slowest case {slowest:.3f} s; '
              f'{time.perf_counter() - start:.1f} s', flush=True)
        for outcome in unclean[:10]:
            print(f'    case {outcome.case}: {outcome.kind}: {outcome.error!r}'[:300])


if __name__ == '__main__':
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
