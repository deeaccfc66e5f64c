"""``Updater``: the per-index states of an optimizer for a KVStore or a Trainer.

It applies the optimizer by index, creating each index's state on first use, and saves and
restores the states (``Trainer.save_states``, ``KVStore.save_optimizer_states``) in the file
format of ``optimizer_states.py``.
"""
from . import optimizer_states
from .ndarray import NDArray

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
        an ``nd.save`` file; MXNet writes a pickle. The layout is in ``optimizer_states.py``;
        optimizer attributes that are not numbers, strings, containers, arrays or schedulers
        are left out with a warning."""
        return optimizer_states.dumps(self.states, self.optimizer if dump_optimizer else None)

    def set_states(self, states):
        """Restore what ``get_states`` returned (bytes). With a saved optimizer, its
        attributes are restored too: into ``self.optimizer`` when it is of the saved class,
        else into a new optimizer of that class."""
        self.states, optimizer = optimizer_states.loads(states, self.optimizer)
        if optimizer is not None:
            self.optimizer = optimizer
            # (MXNet keeps the old optimizer's setting, and loops forever when that was SGD's
            # and the restored optimizer does not aggregate)
            self.aggregate_updates = self.optimizer.aggregate_num > 0
        self.states_synced = dict.fromkeys(self.states.keys(), False)


def get_updater(optimizer):
    """An ``Updater`` for ``optimizer`` (what a KVStore calls on each push)."""
    return Updater(optimizer)
