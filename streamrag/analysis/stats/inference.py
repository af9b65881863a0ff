"""The few scipy.stats results the analysis reports, computed without importing scipy.stats.

``import scipy.stats`` is slow (its distributions build their docstrings at import):
more than the statistics themselves, and a large share of a cached ``analyze``. The analysis needs four of its results; each is computed here with scipy
1.17's own arithmetic, step for step, so the numbers are the same to the last bit
(``tests/parity/test_inference.py`` compares them with scipy's):

- :func:`bootstrap_median_ci` — ``scipy.stats.bootstrap((x,), np.median,
  method="percentile", vectorized=True, rng=rng)``: the same draws from ``rng``
  (``rng.integers(0, n, (n_resamples, n))``), the median of each resample, and the
  interval's ends by Hyndman–Fan type 7 (``scipy.stats.quantile``'s ``linear``);
- :func:`kruskal` — ``scipy.stats.kruskal``: H with the tie correction, and its p from
  the χ² survival function (``scipy.special.chdtrc``; scipy.special alone imports in a
  third of the time);
- :func:`skewness` — ``scipy.stats.skew(bias=True)``;
- :func:`line_r2` — ``scipy.stats.linregress(x, y).rvalue ** 2``.
"""

from __future__ import annotations

import numpy as np

from streamrag.base.correlation import average_ranks

__all__ = ["bootstrap_median_ci", "kruskal", "line_r2", "skewness", "tie_sum"]


def bootstrap_median_ci(
    x: np.ndarray, *, n_resamples: int, rng: np.random.Generator, confidence_level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval ``(low, high)`` of the median of ``x`` (n ≥ 1)."""
    sample = np.asarray(x, dtype=np.float64)
    n = sample.shape[-1]
    draws = rng.integers(0, n, (n_resamples, n))
    medians = np.median(sample[..., draws], axis=-1)
    alpha = np.float64((1 - confidence_level) / 2)
    ordered = np.sort(medians)
    low, high = (_type7(ordered, p) for p in (alpha, 1 - alpha))
    return low, high


def _type7(ordered: np.ndarray, p: np.float64) -> float:
    """Quantile ``p`` of sorted values, linear interpolation (``scipy.stats.quantile``)."""
    n = ordered.shape[-1]
    jg = p * n + (1 - p)
    j = jg // 1 - 1
    g = jg % 1
    if j < 0:
        g = np.float64(0.0)
    lo = int(min(max(j, 0.0), n - 1))
    hi = int(min(max(j + 1, 0.0), n - 1))
    return float((1 - g) * ordered[lo] + g * ordered[hi])


def tie_sum(values: np.ndarray) -> float:
    """``Σ (t³ − t)`` over the groups of t equal values: the tie term of rank tests
    (Kruskal–Wallis' correction, Dunn's variance)."""
    _, counts = np.unique(values, return_counts=True)
    t = counts.astype(np.float64)
    return float(np.sum(t**3 - t))


def kruskal(*samples: np.ndarray) -> tuple[float, float]:
    """Kruskal–Wallis ``(H, p)`` over two or more non-empty samples, tie-corrected."""
    from scipy.special import chdtrc

    if len(samples) < 2:
        raise ValueError("Kruskal-Wallis needs at least two groups")
    groups = [np.asarray(s, dtype=np.float64) for s in samples]
    sizes = [g.shape[-1] for g in groups]
    total = sum(sizes)
    values = np.concatenate(groups)
    ranked = average_ranks(values)
    correction = 1 - tie_sum(values) / (total**3 - total)
    bounds = [0, *np.cumsum(sizes).tolist()]
    ssbn = sum(np.sum(ranked[bounds[i] : bounds[i + 1]]) ** 2 / sizes[i] for i in range(len(groups)))
    h = 12.0 / (total * (total + 1)) * ssbn - 3 * (total + 1)
    h /= correction
    return float(h), float(chdtrc(np.float64(len(groups) - 1), h))


def skewness(x: np.ndarray) -> float:
    """Biased moment coefficient ``g1 = m3 / m2^1.5``; nan when the values are (nearly) constant."""
    a = np.asarray(x, dtype=np.float64)
    mean = np.mean(a, keepdims=True)
    d = a - mean
    m2 = np.mean(d**2)
    m3 = np.mean(d**2 * d)
    if m2 <= (np.finfo(np.float64).eps * mean[0]) ** 2:
        return float("nan")
    return float(m3 / m2**1.5)


def line_r2(x: np.ndarray, y: np.ndarray) -> float:
    """Squared Pearson r of a least-squares line (x not constant)."""
    ssxm, ssxym, _, ssym = np.cov(x, y, bias=True).flat
    if ssxm == 0.0 or ssym == 0.0:
        return float("nan") if ssxym == 0 else 0.0
    return float(min(1.0, max(-1.0, ssxym / np.sqrt(ssxm * ssym))) ** 2)
