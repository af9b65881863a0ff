"""Latency models, calibration profiles and their provenance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

from streamrag.base.errors import ConfigError
from streamrag.engine import profiles
from streamrag.engine.latency import Z90, ConstantLatency, LogNormalLatency, QuantileLatency

# Stream RAG (Arora et al., arXiv 2510.02044), Table 3, ms
ARORA = {"G": (590, 850), "L": (2780, 4900), "F": (2520, 3250)}


@pytest.mark.parametrize("stage", ["G", "L", "F"])
def test_lognormal_fit_reproduces_p50_p90_analytically(stage):
    p50, p90 = ARORA[stage]
    m = LogNormalLatency(p50_ms=p50, p90_ms=p90)
    assert m.mu == math.log(p50)
    assert math.isclose(math.exp(m.mu + Z90 * m.sigma), p90, rel_tol=1e-12)
    assert math.isclose(m.quantile_ms(0.5), p50, rel_tol=1e-12)
    assert math.isclose(m.quantile_ms(0.9), p90, rel_tol=1e-12)
    from scipy.stats import norm

    assert math.isclose(Z90, norm.ppf(0.9), rel_tol=1e-15)


@pytest.mark.parametrize("stage", ["G", "L", "F"])
def test_lognormal_samples_have_the_published_percentiles(stage):
    p50, p90 = ARORA[stage]
    m = LogNormalLatency(p50_ms=p50, p90_ms=p90)
    draws_ms = m.sample_us(np.random.default_rng(20251002), 200_000) / 1000
    assert draws_ms.dtype == np.float64
    assert abs(np.quantile(draws_ms, 0.5) / p50 - 1) < 0.01
    assert abs(np.quantile(draws_ms, 0.9) / p90 - 1) < 0.01


def test_lognormal_rejects_p90_not_above_p50():
    with pytest.raises(ValidationError, match="p90_ms"):
        LogNormalLatency(p50_ms=500, p90_ms=500)


def test_constant_and_quantile_models():
    assert ConstantLatency(ms=590).sample_us(None, 3).tolist() == [590_000] * 3
    assert ConstantLatency(ms=590.0004).sample_list_us(None, 3) == [590_000] * 3  # no array for a constant
    assert ConstantLatency(ms=0.0015).sample_list_us(None, 2) == ConstantLatency(ms=0.0015).sample_us(None, 2).tolist()
    q = QuantileLatency(points=((0.0, 100.0), (0.5, 200.0), (1.0, 1000.0)))
    assert q.nominal_ms == 200.0
    assert q.quantile_ms(0.75) == 600.0
    assert q.sample_list_us(np.random.default_rng(2), 9) == q.sample_us(np.random.default_rng(2), 9).tolist()
    s = q.sample_us(np.random.default_rng(1), 50_000) / 1000
    assert s.min() >= 100 and s.max() <= 1000
    assert abs(np.median(s) - 200) < 5
    with pytest.raises(ValidationError):
        QuantileLatency(points=((0.1, 100.0), (1.0, 200.0)))


def test_named_profiles_load_with_provenance():
    assert {"paper-rq3", "arora2025"} <= set(profiles.list_profiles())
    rq3 = profiles.load_profile("paper-rq3")
    assert (rq3.stages["G"].kind, rq3.stages["G"].ms, rq3.stages["F"].ms) == ("constant", 590, 2520)
    arora = profiles.load_profile("arora2025")
    for stage, (p50, p90) in ARORA.items():
        model = arora.stages[stage]
        assert (model.kind, model.p50_ms, model.p90_ms) == ("lognormal", p50, p90)
        assert "arora2025" in model.source
    sources = profiles.load_sources()
    assert "2510.02044" in sources["arora2025"]["citation"]
    assert sources["arora2025"]["tool_results_s"] == {"p50": 2.78, "p90": 4.90}
    assert sources["typing_desktop"]["wpm"] == 52 and sources["typing_mobile"]["wpm"] == 36
    assert sources["speech"]["wpm"] == 150
    assert arora.source in sources and rq3.source in sources


def test_profiles_are_read_as_package_resources():
    # importlib.resources Traversables (the installed data package, or the checkout's
    # top-level folders in development)
    from streamrag.base.config.bundled import calibration_dir, scenarios_dir

    root = calibration_dir()
    assert (root / "profiles" / "paper-rq3.toml").is_file()
    assert (scenarios_dir() / "paper_rq3.toml").is_file()


def test_unknown_profile_is_a_config_error_listing_the_known_ones():
    with pytest.raises(ConfigError, match=r"latency.profile: unknown profile 'nope' \(available: .*arora2025"):
        profiles.load_profile("nope")
