"""``mx.random``: seeding and sampling.

``seed`` seeds the per-device generators that random operators draw from (``ops/rng.py``);
the sampling functions (``mx.random.uniform`` ...) are the generated ``nd.random`` functions.
"""
from .ndarray import random as _nd
from .ops.rng import generator, seed

__all__ = ['seed', 'generator', 'uniform', 'normal', 'randint', 'poisson', 'exponential',
           'gamma', 'multinomial', 'negative_binomial', 'generalized_negative_binomial',
           'shuffle', 'randn']

uniform = _nd.uniform
normal = _nd.normal
randint = _nd.randint
poisson = _nd.poisson
exponential = _nd.exponential
gamma = _nd.gamma
multinomial = _nd.multinomial
negative_binomial = _nd.negative_binomial
generalized_negative_binomial = _nd.generalized_negative_binomial
shuffle = _nd.shuffle
randn = _nd.randn
