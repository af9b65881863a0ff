"""The analysis' statistics without scipy.stats: the same numbers as scipy's, to the last bit."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.stats

from streamrag.analysis.stats import inference


# φ-like samples: fractions k/n with many ties (what the analysis feeds these), and continuous ones.
def _samples(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for n in (2, 3, 5, 11, 40, 97):
        out.append(rng.integers(1, 12, n) / rng.integers(12, 20, n))
        out.append(rng.normal(0.4, 0.2, n))
        out.append(np.round(rng.uniform(0, 1, n), 1))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bootstrap_median_ci_is_scipy_bootstrap_percentile(seed: int) -> None:
    for i, x in enumerate(_samples(seed)):
        ours = inference.bootstrap_median_ci(x, n_resamples=2_000, rng=np.random.default_rng([seed, i]))
        res = scipy.stats.bootstrap(
            (x,), np.median, n_resamples=2_000, confidence_level=0.95, method="percentile", vectorized=True,
            rng=np.random.default_rng([seed, i]),
        )  # fmt: skip
        assert ours == (float(res.confidence_interval.low), float(res.confidence_interval.high))


def test_bootstrap_consumes_the_stream_as_scipy_does() -> None:
    # What comes next from the generator is the same: the draws were the same.
    x = np.arange(7.0)
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    inference.bootstrap_median_ci(x, n_resamples=300, rng=a)
    scipy.stats.bootstrap((x,), np.median, n_resamples=300, method="percentile", vectorized=True, rng=b)
    assert a.integers(0, 2**62) == b.integers(0, 2**62)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_kruskal_is_scipy_kruskal(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for k in (2, 3, 7):
        groups = [np.round(rng.uniform(0, 1, rng.integers(1, 30)), rng.integers(1, 3)) for _ in range(k)]
        if np.ptp(np.concatenate(groups)) == 0:
            continue
        expected = scipy.stats.kruskal(*groups)
        assert inference.kruskal(*groups) == (float(expected.statistic), float(expected.pvalue))


def test_kruskal_needs_two_groups() -> None:
    with pytest.raises(ValueError, match="two groups"):
        inference.kruskal(np.arange(3.0))


def test_skewness_and_line_r2_are_scipys() -> None:
    for x in _samples(7):
        if np.ptp(x) > 0:
            assert inference.skewness(x) == float(scipy.stats.skew(x, bias=True))
    for x, y in zip(_samples(8), _samples(9), strict=True):
        if x.size >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
            assert inference.line_r2(x, y) == float(scipy.stats.linregress(x, y).rvalue ** 2)
    assert np.isnan(inference.skewness(np.full(4, 0.3)))
    assert inference.line_r2(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.0])) == 1.0


def test_the_analysis_statistics_do_not_import_scipy_stats() -> None:
    code = (
        "import sys\n"
        "import streamrag.analysis.stats.rq, streamrag.analysis.stats.robustness, streamrag.analysis.stats.report\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
