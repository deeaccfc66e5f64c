"""``Updater``: the per-index states of an optimizer for a KVStore or a Trainer, and the file
they are saved to (``Trainer.save_states``, ``KVStore.save_optimizer_states``).

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
import json
import warnings

import numpy as np

from . import ndarray as nd
from .base import MXNetError, NotSupportedError
from .lr_scheduler import LRScheduler
from .ndarray import NDArray
from .optimizer_base import Optimizer

__all__ = ['Updater', 'get_updater']


class Updater:
    """Applies an optimizer by index, creating and keeping each index's state.

    ``updater(index, grad, weight)`` (or lists of each) updates the weights in place.
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        if not isinstance(index, (list, tuple)):
            indices, grads, weights = [index], [grad], [weight]
        else:
            indices, grads, weights = list(index), list(grad), list(weight)
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                indices[i] = idx = idx.decode('utf-8')
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx],
                                                           weights[i].context)
                self.states_synced[idx] = True
        step = self.optimizer.aggregate_num
        if not self.aggregate_updates or step <= 0:
            for i, w, g in zip(indices, weights, grads):
                self.optimizer.update_multi_precision(i, w, g, self.states[i])
            return
        # as MXNet: weights grouped by dtype, in batches of aggregate_num
        by_dtype = {}
        for item in zip(indices, weights, grads):
            by_dtype.setdefault(item[1].dtype, []).append(item)
        for items in by_dtype.values():
            for start in range(0, len(items), step):
                idx, ws, gs = zip(*items[start:start + step])
                self.optimizer.update_multi_precision(list(idx), list(ws), list(gs),
                                                      [self.states[i] for i in idx])

    def sync_state_context(self, state, context):
        """``state`` (an NDArray or nested tuples/lists of them) moved to ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def get_states(self, dump_optimizer=False):
        """The states (and with ``dump_optimizer`` the optimizer's attributes) as the bytes of
        an ``nd.save`` file; MXNet writes a pickle. The layout is in the module docstring;
        optimizer attributes that are not numbers, strings, containers, arrays or schedulers
        are left out with a warning."""
        writer = _StateWriter()
        meta = {'format': 1, 'states': writer.encode(self.states, 'state'),
                'optimizer': writer.optimizer(self.optimizer) if dump_optimizer else None}
        return writer.dumps(meta)

    def set_states(self, states):
        """Restore what ``get_states`` returned (bytes). With a saved optimizer, its
        attributes are restored too: into ``self.optimizer`` when it is of the saved class,
        else into a new optimizer of that class."""
        meta, arrays = _read_states(states)
        self.states = _decode(meta['states'], arrays)
        if meta.get('optimizer') is not None:
            self.optimizer = _restore_optimizer(meta['optimizer'], arrays, self.optimizer)
            # (MXNet keeps the old optimizer's setting, and loops forever when that was SGD's
            # and the restored optimizer does not aggregate)
            self.aggregate_updates = self.optimizer.aggregate_num > 0
        self.states_synced = dict.fromkeys(self.states.keys(), False)


def get_updater(optimizer):
    """An ``Updater`` for ``optimizer`` (what a KVStore calls on each push)."""
    return Updater(optimizer)

# -------------------------------------------------------------------------------------------------
# The states file: nd.save format, structure as JSON (no pickle)
# -------------------------------------------------------------------------------------------------

_META = '__hybridlib_states__'
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
    target = current if type(current) is cls else cls.__new__(cls)
    param_dict = getattr(target, 'param_dict', {}) if target is current else {}
    target.__dict__.update(attrs)
    target.param_dict = param_dict
    counts = target.__dict__.get('_all_index_update_counts') or {0: {}}
    target._all_index_update_counts = counts
    target._index_update_count = counts[next(iter(counts))]
    return target
