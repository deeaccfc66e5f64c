"""Statistical checks of random generators: Pearson's chi-square test over buckets of a
distribution, and checks of the mean and variance. The chi-square p-value is computed here
(no scipy).
"""
import math

import numpy as np

__all__ = ['gen_buckets_probs_with_ppf', 'mean_check', 'var_check', 'chi_square_check',
           'verify_generator']


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` buckets of equal probability from a quantile function ``ppf``.

    Returns
    -------
    buckets : list of (float, float)
    probs : list of float
    """
    assert nbuckets > 0
    probs = [1.0 / nbuckets for _ in range(nbuckets)]
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the mean of ``generator(nsamples)`` lies within mu +- 3 sigma / sqrt(n)."""
    samples = np.array(generator(nsamples))
    sample_mean = samples.mean()
    return bool((sample_mean > mu - 3 * sigma / np.sqrt(nsamples)) and
                (sample_mean < mu + 3 * sigma / np.sqrt(nsamples)))


def var_check(generator, sigma, nsamples=1000000):
    """Whether the variance of ``generator(nsamples)`` lies within
    sigma^2 +- 3 sqrt(2 sigma^4 / (n - 1))."""
    samples = np.array(generator(nsamples))
    sample_var = samples.var(ddof=1)
    half_width = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool((sample_var > sigma ** 2 - half_width) and
                (sample_var < sigma ** 2 + half_width))


def _upper_regularized_gamma(a, x):
    """Q(a, x) = Gamma(a, x) / Gamma(a), by its series (x < a + 1) or continued fraction
    (Numerical Recipes, 6.2)."""
    if x <= 0:
        return 1.0
    log_prefactor = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(10000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefactor))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return math.exp(log_prefactor) * h


def _chisquare(f_obs, f_exp):
    """Pearson's chi-square statistic and its p-value (k - 1 degrees of freedom), as
    ``scipy.stats.chisquare``."""
    f_obs = np.asarray(f_obs, dtype=np.float64)
    f_exp = np.asarray(f_exp, dtype=np.float64)
    stat = float(((f_obs - f_exp) ** 2 / f_exp).sum())
    return stat, _upper_regularized_gamma((len(f_obs) - 1) / 2.0, stat / 2.0)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of ``generator`` (``generator(n)`` draws n samples).

    Parameters
    ----------
    generator : callable
    buckets : list of (low, high) or list of values
        Ranges (ascending, disjoint, covering the distribution) of a continuous distribution,
        or the values of a discrete one.
    probs : list of float
        The probability of each bucket.
    nsamples : int

    Returns
    -------
    p : float
        The p-value (commonly accepted when > 0.05).
    obs_freq : numpy.ndarray
        The observed count of each bucket.
    expected_freq : numpy.ndarray
        The expected count of each bucket.
    """
    assert isinstance(buckets, list)
    samples = generator(nsamples)
    assert len(probs) == len(buckets)
    continuous_dist = isinstance(buckets[0], (list, tuple))
    if continuous_dist:
        buckets_npy = np.zeros((len(buckets) * 2, ), dtype=np.float32)
        for i, _ in enumerate(buckets):
            assert buckets[i][0] <= buckets[i][1]
            if i < len(buckets) - 1:
                assert buckets[i][1] <= buckets[i + 1][0]
            buckets_npy[i * 2] = buckets[i][0]
            buckets_npy[i * 2 + 1] = buckets[i][1]
    expected_freq = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    if continuous_dist:
        sample_bucket_ids = np.searchsorted(buckets_npy, samples, side='right') // 2
    else:
        sample_bucket_ids = np.array(samples)
    obs_freq = np.zeros(shape=len(buckets), dtype=np.int64)
    for i, _ in enumerate(buckets):
        if continuous_dist:
            obs_freq[i] = (sample_bucket_ids == i).sum()
        else:
            obs_freq[i] = (sample_bucket_ids == buckets[i]).sum()
    _, p = _chisquare(obs_freq, expected_freq)
    return p, obs_freq, expected_freq


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Run ``chi_square_check`` ``nrepeat`` times; raise AssertionError unless a fraction
    ``success_rate`` of the p-values exceeds ``alpha``. Returns the p-values."""
    cs_ret_l = []
    obs_freq_l = []
    expected_freq_l = []
    for _ in range(nrepeat):
        cs_ret, obs_freq, expected_freq = chi_square_check(
            generator=generator, buckets=buckets, probs=probs, nsamples=nsamples)
        cs_ret_l.append(cs_ret)
        obs_freq_l.append(obs_freq)
        expected_freq_l.append(expected_freq)
    success_num = (np.array(cs_ret_l) > alpha).sum()
    if success_num < nrepeat * success_rate:
        raise AssertionError('Generator test fails, Chi-square p=%s, obs_freq=%s, '
                             'expected_freq=%s.\nbuckets=%s, probs=%s'
                             % (str(cs_ret_l), str(obs_freq_l), str(expected_freq_l),
                                str(buckets), str(probs)))
    return cs_ret_l
