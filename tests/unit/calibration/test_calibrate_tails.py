"""Profiles that hold their tails: AIC choice, Weibull, the empirical model's fitted tail,
the small-sample warning, and the moments a calibrated profile keeps (seeded)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from streamrag.calibration.fit import fit_stage, ks_distance, tail_level
from streamrag.engine.latency import ParetoTail, QuantileLatency, WeibullLatency

N = 2000


def draws(family: str, seed: int, n: int = N) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if family == "lognormal":
        return rng.lognormal(math.log(600), 0.45, n)
    if family == "gamma":
        return rng.gamma(4.0, 150.0, n)
    if family == "weibull":
        return 500.0 * rng.weibull(1.5, n)
    return 200.0 * (1 + rng.pareto(1.5, n))  # Pareto, x_m = 200 ms, shape 1.5: infinite variance


def percentiles_only(x: np.ndarray) -> QuantileLatency:
    """The model the tail replaces: 101 percentiles, P100 = the sample maximum."""
    levels = [i / 100 for i in range(101)]
    return QuantileLatency(points=tuple(zip(levels, np.round(np.quantile(x, levels), 3).tolist(), strict=True)))


@pytest.mark.parametrize(
    ("family", "chosen"), [("lognormal", "lognormal"), ("gamma", "gamma"), ("weibull", "weibull"), ("pareto", "quantiles")]
)
def test_a_calibrated_profile_keeps_the_samples_mean_and_second_moment(family, chosen):
    x = draws(family, seed=7)
    fit = fit_stage("L", x, origin="t")
    assert fit.chosen == chosen, fit.reason
    mean, second = float(x.mean()), float(np.mean(x * x))
    assert fit.model.mean_ms == pytest.approx(mean, rel=0.05)
    assert fit.model.second_moment_ms2 == pytest.approx(second, rel=0.10)  # E[S²], what queueing waits read
    drawn = fit.model.sample_us(np.random.default_rng(1), 200_000) / 1000  # what a simulation draws
    assert drawn.mean() == pytest.approx(mean, rel=0.05)
    if family != "pareto":  # a tail of shape ξ ≈ 0.43 has no fourth moment: drawn E[S²] converges from below
        assert np.mean(drawn * drawn) == pytest.approx(second, rel=0.10)
    if family == "pareto":  # the percentiles alone hang on the largest observation
        old = percentiles_only(x)
        assert old.second_moment_ms2 / second > 1.5 and old.mean_ms / mean > 1.05


def test_the_tail_is_fitted_above_p90_by_the_moments_of_the_exceedances():
    x = draws("pareto", seed=3)
    fit = fit_stage("L", x, origin="t")
    model = fit.model
    assert isinstance(model, QuantileLatency) and model.tail is not None
    u = model.points[-1][1]
    assert (model.tail.q, u) == (0.9, round(float(np.quantile(x, 0.9)), 3))
    y = x[x > u] - u
    ey, ey2 = model.tail.moments_ms()
    assert (ey, ey2) == (pytest.approx(y.mean(), rel=1e-9), pytest.approx(np.mean(y * y), rel=1e-9))
    assert 0 < model.tail.shape < 0.5
    # unbounded: it draws beyond the sample maximum, at the tail's rate
    assert model.quantile_ms(0.9999) > x.max() or model.cdf(np.array([x.max()]))[0] < 1
    # CDF and quantiles invert each other through the body and the tail
    q = np.array([0.05, 0.5, 0.89, 0.91, 0.99, 0.999])
    assert np.allclose(model.cdf(model.ppf(q)), q, atol=1e-9)
    assert ks_distance(x, model) < fit.ks_critical


def test_a_pareto_tail_by_hand():
    tail = ParetoTail(q=0.9, shape=0.25, scale_ms=100.0)
    # Y at r: β((1 − r)^−ξ − 1)/ξ; E[Y] = β/(1 − ξ), E[Y²] = 2β²/((1 − ξ)(1 − 2ξ))
    assert float(tail.exceedance_ppf(np.array(0.5))) == pytest.approx(100 * (0.5**-0.25 - 1) / 0.25)
    assert tail.moments_ms() == (pytest.approx(100 / 0.75), pytest.approx(2 * 100**2 / (0.75 * 0.5)))
    exponential = ParetoTail(q=0.5, shape=0.0, scale_ms=50.0)
    assert float(exponential.exceedance_ppf(np.array(0.5))) == pytest.approx(50 * math.log(2))
    model = QuantileLatency(points=((0.0, 0.0), (0.5, 100.0)), tail=exponential)
    # body: uniform on [0, 100] over half the mass; tail: 100 + Exp(50)
    assert model.mean_ms == pytest.approx(0.5 * 50 + 0.5 * 150)
    assert model.second_moment_ms2 == pytest.approx(0.5 * 100**2 / 3 + 0.5 * (100**2 + 2 * 100 * 50 + 2 * 50**2))
    with pytest.raises(ValueError, match=r"end at the tail's q = 0\.5"):
        QuantileLatency(points=((0.0, 0.0), (1.0, 100.0)), tail=exponential)


def test_weibull_round_trip_recovers_shape_and_scale():
    x = draws("weibull", seed=5)
    fit = fit_stage("L", x, origin="t")
    assert fit.chosen == "weibull"
    assert isinstance(fit.model, WeibullLatency)
    assert fit.model.shape == pytest.approx(1.5, rel=0.05) and fit.model.scale_ms == pytest.approx(500, rel=0.03)
    assert fit.model.mean_ms == pytest.approx(500 * math.gamma(1 + 1 / 1.5), rel=0.03)
    assert fit.model.quantile_ms(0.5) == pytest.approx(fit.model.scale_ms * math.log(2) ** (1 / fit.model.shape))


def test_the_smallest_aic_is_chosen_and_ks_only_tests_it():
    for family, seed in (("lognormal", 2), ("gamma", 3), ("weibull", 4)):
        fit = fit_stage("L", draws(family, seed, n=300), origin="t")
        parametric = [c for c in fit.candidates if c.aic is not None]
        best = min(parametric, key=lambda c: c.aic)
        assert best.ks <= fit.ks_critical and fit.chosen == best.kind, fit.reason
        assert "the smallest AIC of the parametric fits" in fit.reason
    # gamma data: a log-normal fit can have the smaller KS distance and still lose on AIC
    fit = fit_stage("L", draws("gamma", 0, n=300), origin="t")
    assert fit.chosen == min((c for c in fit.candidates if c.aic is not None), key=lambda c: c.aic).kind


def test_a_sample_too_small_for_its_tail_is_warned_about():
    fit = fit_stage("L", draws("lognormal", 1, n=50), origin="t")
    assert fit.warning is not None
    assert "50 durations measure quantiles up to P80 only" in fit.warning and "P99 included" in fit.warning
    assert fit_stage("L", draws("lognormal", 1, n=1000), origin="t").warning is None
    # the tail threshold leaves 20 durations above it, down to P50
    assert (tail_level(2000), tail_level(100), tail_level(50), tail_level(39)) == (0.9, 0.8, 0.6, None)
