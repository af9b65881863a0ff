"""``piecewise`` arrivals: a Poisson process whose rate moves, segment by segment."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from streamrag.base.config.overrides import parse_override
from streamrag.base.errors import ConfigError
from streamrag.simulator.load.checks import n_sessions
from streamrag.simulator.load.workload import (
    PiecewiseArrivals,
    PoissonArrivals,
    count_open_arrivals,
    open_arrivals,
)
from streamrag.simulator.scenario import scenario_from_dict

US = 1_000_000


def _piecewise(*segments: tuple[float, float]) -> PiecewiseArrivals:
    return PiecewiseArrivals.model_validate({"segments": [{"duration_s": d, "rate_per_s": r} for d, r in segments]})


def test_one_segment_gives_exactly_the_poisson_arrivals_inside_it() -> None:
    for seed in range(5):
        plain = list(open_arrivals(PoissonArrivals(rate_per_s=2.0, n_sessions=400), seed))
        inside = [t for t in plain if t < 100 * US]
        assert len(inside) < len(plain)  # the Poisson run outlasts the segment
        assert list(open_arrivals(_piecewise((100.0, 2.0)), seed)) == inside


def test_segment_counts_match_their_rates_over_seeds() -> None:
    # Expected counts 100, 400, 50; each is Poisson, so over n seeds the mean count of a
    # segment lies within 4 standard errors sqrt(m / n) of m, and its variance near m.
    segments = ((100.0, 1.0), (50.0, 8.0), (100.0, 0.5))
    expected = np.array([r * d for d, r in segments])
    edges = np.cumsum([0.0, *(d for d, _ in segments)]) * US
    n = 300
    counts = np.array([np.histogram(list(open_arrivals(_piecewise(*segments), seed)), bins=edges)[0] for seed in range(n)])
    assert np.all(np.abs(counts.mean(axis=0) - expected) < 4 * np.sqrt(expected / n))
    # var of a sample variance of Poisson(m) ≈ 2m²/(n − 1) (+ m/n); a 4σ band
    assert np.all(np.abs(counts.var(axis=0, ddof=1) - expected) < 4 * np.sqrt(2 * expected**2 / (n - 1) + expected / n))


def test_arrivals_stay_inside_the_profile_and_never_decrease() -> None:
    times = list(open_arrivals(_piecewise((10.0, 5.0), (10.0, 0.1), (10.0, 20.0)), 3))
    assert times == sorted(times)
    assert times[0] > 0 and times[-1] < 30 * US
    assert count_open_arrivals(_piecewise((10.0, 5.0), (10.0, 0.1), (10.0, 20.0)), 3) == len(times)


def test_a_quiet_segment_between_busy_ones_restarts_the_gaps_at_its_end() -> None:
    # At 1e-9 per second nothing arrives in the middle 50 s: the crossing gap is dropped
    # and the last segment draws from 60 s on.
    times = np.array(list(open_arrivals(_piecewise((10.0, 3.0), (50.0, 1e-9), (10.0, 3.0)), 1)))
    assert not np.any((times >= 10 * US) & (times < 60 * US))
    assert np.any(times < 10 * US) and np.any(times >= 60 * US)


BASE: dict[str, Any] = {
    "latency": {"profile": "paper-rq3"},
    "resources": {"tool": {"kind": "servers", "servers": 4}},
    "load": {
        "arrivals": {
            "kind": "piecewise",
            "segments": [{"duration_s": 600, "offered_load": 0.2}, {"duration_s": 600, "offered_load": 0.9}],
        }
    },
}


def test_offered_load_per_segment_is_rho_c_over_mean_l() -> None:
    rs = scenario_from_dict(BASE, [])
    arrivals = rs.scenario.load.arrivals
    rates = [seg.rate(4, rs.stages.L.mean_ms) for seg in arrivals.segments]
    assert rates == pytest.approx([0.2 * 4 / 0.6, 0.9 * 4 / 0.6])
    n = n_sessions(rs)
    assert n == count_open_arrivals(arrivals, rs.scenario.seed, 4, rs.stages.L.mean_ms)
    assert abs(n - 600 * sum(rates)) < 4 * np.sqrt(600 * sum(rates))


def test_bad_segments_are_one_line_errors() -> None:
    bad = {**BASE, "load": {"arrivals": {"kind": "piecewise", "segments": [{"duration_s": 60}]}}}
    with pytest.raises(ConfigError, match=r"load\.arrivals\.segments: item \[0\]") as err:
        scenario_from_dict(bad, [])
    assert "exactly one of 'rate_per_s' and 'offered_load'" in str(err.value)
    assert "\n" not in str(err.value)
    empty = {**BASE, "load": {"arrivals": {"kind": "piecewise", "segments": []}}}
    with pytest.raises(ConfigError, match="segments"):
        scenario_from_dict(empty, [])
    unlimited = scenario_from_dict(BASE, [[parse_override("resources.tool.kind=unlimited")]])
    with pytest.raises(ConfigError, match="offered_load needs a tool backend with servers"):
        n_sessions(unlimited)
