"""Spearman and Pearson in numpy alone agree with scipy (values and two-sided p)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from hypothesis import example, given, settings
from hypothesis import strategies as st

from streamrag.base.correlation import average_ranks, pearson, spearman, t_two_sided_p

pairs = st.integers(3, 60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(-5, 5) | st.floats(-1e3, 1e3, allow_nan=False), min_size=n, max_size=n),
        st.lists(st.integers(-5, 5) | st.floats(-1e3, 1e3, allow_nan=False), min_size=n, max_size=n),
    )
)


@settings(max_examples=300, deadline=None)
@given(pairs)
@example(([1, 0, 0], [1, 6.103515625e-05, 0]))  # r = 1 − 1.4e-9: scipy and we err 8e-8 apart, either side
def test_spearman_and_pearson_agree_with_scipy(xy) -> None:
    x, y = np.array(xy[0], dtype=float), np.array(xy[1], dtype=float)
    s, p = spearman(x, y), pearson(x, y)
    if np.all(x == x[0]) or np.all(y == y[0]):
        assert s == {"rho": None, "p": None, "n": x.size} and p["r"] is None
        return
    ref_s = scipy.stats.spearmanr(x, y)
    assert s["rho"] == pytest.approx(ref_s.statistic, rel=1e-12, abs=1e-12)
    assert s["p"] == pytest.approx(ref_s.pvalue, rel=1e-9, abs=1e-13)
    if p["r"] is None:  # the spread underflows (values ~1e-300 apart): undefined, as scipy's nan
        return
    ref_p = scipy.stats.pearsonr(x, y)
    assert p["r"] == pytest.approx(ref_p.statistic, rel=1e-9, abs=1e-12)
    if abs(p["r"]) < 1 - 1e-12:  # at |r| = 1 a last-bit difference in r decides p = 0 or ~1e-8
        # Near |r| = 1, p depends on 1 − |r|, so a few ulps of r (two ways of summing) move it
        # by ~ε / (1 − |r|) relative: the exact p of the example above lies between the two.
        rel = max(1e-7, 16 * np.finfo(float).eps / (1 - abs(p["r"])))
        assert p["p"] == pytest.approx(ref_p.pvalue, rel=rel, abs=1e-12)


def test_average_ranks_share_ties() -> None:
    assert average_ranks([10, 20, 20, 5, 20]).tolist() == [2.0, 4.0, 4.0, 1.0, 4.0]
    assert np.array_equal(average_ranks([3.0, 1.0, 2.0]), scipy.stats.rankdata([3.0, 1.0, 2.0]))


@pytest.mark.parametrize("df", [1, 2, 5, 30, 1000])
@pytest.mark.parametrize("t", [0.0, 0.3, 1.0, 2.5, 8.0, 40.0])
def test_t_p_values_match_the_t_distribution(t: float, df: int) -> None:
    assert t_two_sided_p(t, df) == pytest.approx(2 * scipy.stats.t.sf(t, df), rel=1e-10, abs=1e-300)


def test_perfect_and_undefined_cases() -> None:
    assert pearson([0.0, 0.0, 5e-324], [1.0, 2.0, 3.0])["r"] is None  # the spread underflows
    assert spearman([1, 2, 3, 4], [2, 4, 6, 8]) == {"rho": 1.0, "p": 0.0, "n": 4}
    assert spearman([1, 2], [2, 1])["rho"] is None  # fewer than 3 pairs
    with pytest.raises(ValueError, match="3 values against 2"):
        spearman([1, 2, 3], [1, 2])
