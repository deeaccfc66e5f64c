"""The random generators: one per device, seeded by ``mx.random.seed``.

Operators that draw random numbers (``_random_uniform``, Dropout, ...) call ``generator(xp)``
for the generator of their array module, so the same body draws on numpy or cupy.
``hybridlib.random`` is the public face (``seed`` and the sampling functions).
"""
import numpy as np

__all__ = ['seed', 'generator']

_generators = {}
_seed = None


def seed(seed_state, ctx='all'):
    """Seed the generators of every device (``ctx='all'``) or of one context."""
    global _seed
    if not isinstance(seed_state, (int, np.integer)):
        raise ValueError(f'seed must be an integer, got {seed_state!r}')
    seed_state = int(seed_state)
    if ctx == 'all':
        _seed = seed_state
        _generators.clear()
        return
    xp = ctx.array_module
    _generators[_key(xp, ctx.device_id)] = _make(xp, seed_state)


def _key(xp, device_id=0):
    return (xp.__name__, device_id if xp is not np else 0)


def _make(xp, seed_state):
    if xp is np:
        return np.random.default_rng(seed_state)
    return xp.random.default_rng(seed_state)


def generator(xp):
    """The random generator for the current device of array module ``xp``."""
    device = 0 if xp is np else xp.cuda.Device().id
    key = _key(xp, device)
    gen = _generators.get(key)
    if gen is None:
        gen = _generators[key] = _make(xp, None if _seed is None else _seed + device)
    return gen

