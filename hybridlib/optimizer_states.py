"""The file the optimizer states are saved to (``Updater.get_states``, ``Trainer.save_states``,
``KVStore.save_optimizer_states``): ``dumps`` and ``loads``.

Differences from MXNet 1.9.1, on purpose:

* ``Updater.get_states``/``set_states`` (and so ``Trainer.save_states``) write MXNet's
  ``nd.save`` format instead of a pickle (below). MXNet's pickled state files are refused with
  a clear error (unpickling runs arbitrary code).

The states file is a dict of NDArrays (``nd.load`` reads it, MXNet's too):
``"__hybridlib_states__"`` is a uint8 array holding UTF-8 JSON
``{"format": 1, "states": ..., "optimizer": ...}`` that describes the structure: ``states``
maps each index to its state, where an array is ``{"ndarray": name}`` (naming an entry of the
file), a tuple ``{"tuple": [...]}``, a dict ``{"dict": [[key, value], ...]}``; ``optimizer``
is null or ``{"class": "module:QualName", "attrs": {...}}`` (an LRScheduler attribute as
``{"object": "module:QualName", "attrs": ...}``). The arrays are named ``state/<index>`` for
an array state and ``state/<index>/<i>`` (``/<j>``, ...) for the elements of tuple states;
arrays held by optimizer attributes are named ``optimizer/<attr>...``. Classes are looked up
among those already defined, never imported.
"""
import copy
import inspect
import json
import warnings

import numpy as np

from . import ndarray as nd
from .base import MXNetError, NotSupportedError
from .lr_scheduler import LRScheduler
from .ndarray import NDArray
from .optimizer_base import Optimizer

__all__ = ['dumps', 'loads', 'load_file']


# -------------------------------------------------------------------------------------------------
# The states file: nd.save format, structure as JSON (no pickle)
# -------------------------------------------------------------------------------------------------

_META = '__hybridlib_states__'


def dumps(states, optimizer=None):
    """The bytes of a states file for ``states`` ({index: state}), and with an ``optimizer``
    its attributes (those that are not numbers, strings, containers, arrays or schedulers are
    left out with a warning)."""
    writer = _StateWriter()
    meta = {'format': 1, 'states': writer.encode(states, 'state'),
            'optimizer': writer.optimizer(optimizer) if optimizer is not None else None}
    return writer.dumps(meta)


def loads(buf, current):
    """(states, optimizer or None) from the bytes of a states file. A saved optimizer's
    attributes go into ``current`` when it is of the saved class, else into a new optimizer
    of that class. A corrupt file is an MXNetError."""
    try:
        meta, arrays = _read_states(buf)
        states = _decode(meta['states'], arrays)
        if not isinstance(states, dict):
            raise MXNetError(f'the states are a {type(states).__name__}, not a dict')
        saved = meta.get('optimizer')
        return states, None if saved is None else _restore_optimizer(saved, arrays, current)
    except MXNetError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as err:
        # what JSON of any shape can make the decoders meet (UnicodeDecodeError and
        # JSONDecodeError are ValueErrors)
        raise MXNetError(f'corrupt optimizer states: {type(err).__name__}: {err}') from None


def load_file(fname, updaters):
    """Give every updater the states in file ``fname``; errors name the file."""
    try:
        with open(fname, 'rb') as f:
            buf = f.read()
    except OSError as err:
        raise MXNetError(f'cannot read optimizer states {fname!r}: {err}') from None
    try:
        for updater in updaters:
            updater.set_states(buf)
    except MXNetError as err:
        raise type(err)(f'{fname}: {err}') from None
_SKIP_ATTRS = ('param_dict', '_index_update_count')   # the Trainer's; an alias of a count dict


class _Unsupported(Exception):
    pass


class _StateWriter:
    def __init__(self):
        self.arrays = {}

    def encode(self, value, path):
        if value is None or isinstance(value, (bool, str, int, float)):
            return value
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, NDArray):
            self.arrays[path] = value
            return {'ndarray': path}
        if isinstance(value, tuple):
            return {'tuple': [self.encode(v, f'{path}/{i}') for i, v in enumerate(value)]}
        if isinstance(value, list):
            return {'list': [self.encode(v, f'{path}/{i}') for i, v in enumerate(value)]}
        if isinstance(value, dict):
            return {'dict': [[self.encode(k, path), self.encode(v, f'{path}/{k}')]
                             for k, v in value.items()]}
        if isinstance(value, LRScheduler):
            return {'object': _class_name(type(value)),
                    'attrs': self.encode(vars(value), path)}
        raise _Unsupported(type(value).__name__)

    def optimizer(self, optimizer):
        attrs = {}
        for key, value in vars(optimizer).items():
            if key in _SKIP_ATTRS:
                continue
            try:
                attrs[key] = self.encode(value, f'optimizer/{key}')
            except _Unsupported as err:
                warnings.warn(f'save_states: optimizer attribute {key!r} ({err}) cannot be '
                              'saved and is left out', stacklevel=4)
        return {'class': _class_name(type(optimizer)), 'attrs': attrs}

    def dumps(self, meta):
        text = json.dumps(meta).encode('utf-8')
        data = {_META: nd.array(np.frombuffer(text, dtype=np.uint8), dtype=np.uint8)}
        data.update(self.arrays)
        return nd.save_to_bytes(data)


def _class_name(cls):
    return f'{cls.__module__}:{cls.__qualname__}'


def _read_states(buf):
    buf = bytes(buf)
    if buf[:1] == b'\x80':
        raise NotSupportedError(
            'this optimizer states file is a Python pickle (written by MXNet\'s '
            'Trainer.save_states or KVStore.save_optimizer_states); hybridlib does not unpickle '
            'files (that runs arbitrary code). Save the states with hybridlib to continue '
            'training here.')
    arrays = nd.load_frombuffer(buf, '<optimizer states>')
    if not isinstance(arrays, dict) or _META not in arrays:
        raise MXNetError('not an optimizer states file written by hybridlib: it has no '
                         f'{_META!r} entry')
    meta = json.loads(arrays.pop(_META).asnumpy().tobytes().decode('utf-8'))
    if meta.get('format') != 1:
        raise MXNetError(f'optimizer states file format {meta.get("format")!r} is not known')
    return meta, arrays


def _decode(value, arrays):
    if not isinstance(value, dict):
        return value
    if 'ndarray' in value:
        return arrays[value['ndarray']]
    if 'tuple' in value:
        return tuple(_decode(v, arrays) for v in value['tuple'])
    if 'list' in value:
        return [_decode(v, arrays) for v in value['list']]
    if 'dict' in value:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in value['dict']}
    if 'object' in value:
        cls = _find_class(value['object'], LRScheduler)
        obj = cls.__new__(cls)
        obj.__dict__.update(_decode(value['attrs'], arrays))
        return obj
    raise MXNetError(f'optimizer states file: unknown entry {sorted(value)}')


def _find_class(name, base):
    """The subclass of ``base`` named ``module:QualName`` among the classes defined so far
    (never imports anything: a states file cannot make us run code)."""
    pending = [base]
    while pending:
        cls = pending.pop()
        if _class_name(cls) == name:
            return cls
        pending.extend(cls.__subclasses__())
    raise MXNetError(f'optimizer states file: class {name} is not defined here (define or '
                     'import it before loading the states)')


def _restore_optimizer(saved, arrays, current):
    cls = _find_class(saved['class'], Optimizer)
    attrs = _decode({'dict': [[k, v] for k, v in saved['attrs'].items()]}, arrays)
    _check_attrs(cls, attrs, current)      # before anything changes: a refused file loses nothing
    target = current if type(current) is cls else cls.__new__(cls)
    param_dict = getattr(target, 'param_dict', {}) if target is current else {}
    target.__dict__.update(attrs)
    target.param_dict = param_dict
    counts = target.__dict__.get('_all_index_update_counts') or {0: {}}
    target._all_index_update_counts = counts
    target._index_update_count = counts[next(iter(counts))]
    return target


def _kind(value):
    if isinstance(value, (bool, int, float, np.number)):
        return 'number'
    if isinstance(value, list):
        return 'tuple'
    return type(value).__name__ if value is not None else 'None'


_COUNTS = ('_all_index_update_counts', '_index_update_count')
_NUMBER_DICTS = ('lr_mult', 'wd_mult')


def _check_attrs(cls, attrs, current):
    """The saved attributes of a ``cls`` optimizer are of the kinds its own are (a number where
    it has a number, ...; where it has None, a number, a scheduler or None), never shadow one
    of its methods, and a saved scheduler runs: a corrupt file is refused at load rather than
    failing in a later ``step``."""
    try:
        reference = vars(cls())
    except Exception:       # noqa: BLE001 - an optimizer with required arguments
        reference = vars(current) if type(current) is cls else {}
    for key, value in attrs.items():
        if not isinstance(key, str) or key.startswith('__') or \
                key not in reference and hasattr(cls, key):
            raise MXNetError(f'the saved optimizer attribute {key!r} is not one an optimizer '
                             'can have')
        if key not in reference:
            continue
        want, got = _kind(reference[key]), _kind(value)
        allowed = {'None', 'number', 'LRScheduler'} if want == 'None' else {want}
        if key == 'lr':     # None when a scheduler gives the rate
            allowed.add('None')
        if got not in allowed and not (want == 'None' and isinstance(value, LRScheduler)):
            has = 'None or a number' if want == 'None' else f'a {want}'
            raise MXNetError(f'the saved optimizer attribute {key!r} is a '
                             f'{type(value).__name__}, where {cls.__name__} has {has}')
    for key in _COUNTS + _NUMBER_DICTS:
        table = attrs.get(key, {})
        tables = table.values() if key == '_all_index_update_counts' else [table]
        if not all(isinstance(t, dict) and all(_kind(v) == 'number' for v in t.values())
                   for t in tables):
            raise MXNetError(f'the saved optimizer attribute {key!r} does not map indices to '
                             'numbers')
    for key in ('num_update', 'begin_num_update'):
        if not isinstance(attrs.get(key, 0), int) or not 0 <= attrs.get(key, 0) < 2 ** 63:
            raise MXNetError(f'the saved optimizer attribute {key!r} is {attrs[key]!r}, not a '
                             'count of updates')
    scheduler = attrs.get('lr_scheduler')
    if isinstance(scheduler, LRScheduler):
        try:
            if type(scheduler).__module__ == LRScheduler.__module__:
                _construct_like(scheduler)
            copy.deepcopy(scheduler)(attrs.get('num_update', 0))
        except Exception as err:    # noqa: BLE001 - any way its attributes can be wrong
            raise MXNetError(f'the saved lr_scheduler ({type(scheduler).__name__}) cannot run: '
                             f'{type(err).__name__}: {err}') from None


def _construct_like(scheduler):
    """A new scheduler of the class of a restored one (made without its constructor), from
    the attributes that name constructor arguments: the constructor's own checks (a step of
    at least 1, a factor of at most 1, ...) applied to what the file gave."""
    cls = type(scheduler)
    params = inspect.signature(cls.__init__).parameters
    return cls(**{k: v for k, v in vars(scheduler).items() if k in params and k != 'self'})
