"""``IntervalSampler`` (``gluon.contrib.data.sampler``): indices at a fixed interval."""
from ...base import MXNetAssertionError
from ...data import sampler

__all__ = ['IntervalSampler']


class IntervalSampler(sampler.Sampler):
    """Samples ``0, interval, 2 * interval, ...`` below ``length``; with ``rollover`` then
    ``1, 1 + interval, ...`` and so on until every index is visited once.

    Used to read ``interval`` parallel streams of a long sequence (a language model's batches).

    Parameters
    ----------
    length : int
        Number of indices.
    interval : int
        The step between two samples (at most ``length``).
    rollover : bool, default True
        Whether to start again from the skipped indices after reaching the end; without, only
        the first pass is sampled.

    Examples
    --------
    >>> list(IntervalSampler(13, interval=3))
    [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    >>> list(IntervalSampler(13, interval=3, rollover=False))
    [0, 3, 6, 9, 12]
    """

    def __init__(self, length, interval, rollover=True):
        if not interval <= length:
            raise MXNetAssertionError(
                f'Interval {interval} must be smaller than or equal to length {length}')
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self):
        for start in range(self._interval if self._rollover else 1):
            yield from range(start, self._length, self._interval)

    def __len__(self):
        # as MXNet: the length, even without rollover (which samples fewer)
        return self._length
