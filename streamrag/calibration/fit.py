"""Fit a stage's durations: log-normal, gamma, Weibull, empirical quantiles with a
fitted tail; choose by AIC, test by KS.

For ``n`` durations ``x`` (ms) of one stage, four candidate models:

- ``lognormal`` — maximum likelihood on the logs: ``μ = mean(ln x)``,
  ``σ = sqrt(mean((ln x − μ)²))`` (the MLE, divisor n), written as the kernel's
  :class:`~streamrag.engine.latency.LogNormalLatency` with ``p50 = e^μ`` and
  ``p90 = e^(μ + z₀.₉σ)`` (so ``mu`` and ``sigma`` are recovered exactly);
- ``gamma`` — maximum likelihood with the location fixed at 0
  (``scipy.stats.gamma.fit(x, floc=0)``, which solves ``ln k − ψ(k) = ln x̄ − mean(ln x)``
  for the shape k, then ``θ = x̄/k``): :class:`~streamrag.engine.latency.GammaLatency`;
- ``weibull`` — maximum likelihood with the location fixed at 0
  (``scipy.stats.weibull_min.fit(x, floc=0)``): :class:`~streamrag.engine.latency.WeibullLatency`;
- ``quantiles`` — the empirical quantile function up to the tail threshold
  ``q_u`` (every percentile, ``numpy.quantile``'s linear interpolation, ms rounded to
  the µs), and above it a generalized-Pareto tail fitted to the exceedances
  ``y = x − u`` over ``u = x(q_u)`` (:class:`~streamrag.engine.latency.ParetoTail`).
  ``q_u`` = P90, or lower for small samples so that at least 20 durations exceed it
  (``q_u = ⌊100(1 − 20/n)⌋/100``; no tail below P50, i.e. n < 40: the percentiles then
  run to the maximum, as before).

Why this tail. The 101-point model it replaces interpolated linearly from P99 to the
sample maximum: 1% of the draws fell on a segment ending at the single largest
observation, which made the simulated mean 1.22× and E[S²] 3× the sample's on Pareto
data (n = 2,000). The tail is fitted by the method of moments (Hosking & Wallis,
Technometrics 29(3), 1987): with ``m = mean(y)`` and ``v = mean(y²) − m²``,
``ξ = ½(1 − m²/v)`` and ``β = ½m(1 + m²/v)``, so E[Y] and E[Y²] are the exceedances'
own. Every observation above ``u`` then weighs 1/n in the model's mean and E[S²], as
it does in the sample — E[S²] is what queueing waits read (Pollaczek–Khinchine) — and
the tail is smooth and unbounded instead of ending at the maximum. The moment estimate
always has ξ < ½, a finite E[S²]; maximum likelihood (which estimates ξ with less bias
on Pareto data) can return ξ ≥ ½ on 2,000 Pareto draws of shape 3, an infinite E[S²] that
would make a simulated queue's waits diverge, and its E[S²] ranged 1.0–1.46× the
sample's over eight seeds (measured while choosing).

Each parametric model is scored by **AIC** ``= 2·2 − 2 ln L`` (densities in 1/ms) and
every model by its **KS distance** ``D = sup |F_n(x) − F(x)|`` to the data. The choice
(``model = "auto"``): the parametric fit with the smallest AIC — likelihood weighs every
observation, where KS reads the single largest gap between CDFs (which labelled
log-normal samples gamma 24–40% of the time at n ≤ 200) — *if* its D is within the 5%
critical value of the one-sample KS statistic for n (``scipy.stats.kstwo``); otherwise
the empirical quantiles and their tail. The critical value ignores that the parameters
were estimated (Lilliefors), which makes the test lenient toward the parametric models —
deliberately: a two-parameter model is preferred unless the data clearly reject it.

Small samples: fewer than ``min_n`` durations (default 20) is an error saying how many
there are and how many are needed; durations all equal to the µs give a ``constant``
model, stated as such. A sample too small for its tail gets a **warning**: quantile q
is measured only where at least 10 durations lie above it (``n(1 − q) ≥ 10``); when
that stops short of P99 (n < 1,000), the fit says up to which percentile the data
reach and that P99 is the model's extrapolation (a 50-duration fit reaches P80).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from streamrag.base.errors import InputError
from streamrag.engine.latency import (
    Z90,
    ConstantLatency,
    GammaLatency,
    LatencyModel,
    LogNormalLatency,
    ParetoTail,
    QuantileLatency,
    WeibullLatency,
)

MIN_N = 20
"""Fewest durations of a stage that are fitted without ``min_n`` lowered."""
ALPHA = 0.05
"""Level of the KS critical value a parametric fit must stay within."""
TAIL_Q = 0.9
"""Level above which the empirical model's tail is fitted (lowered for small samples)."""
TAIL_MIN_EXCEEDANCES = 20
"""Fewest durations above the tail threshold."""
SUPPORT_MIN_ABOVE = 10
"""A quantile q is measured when at least this many durations lie above it."""

ModelChoice = Literal["auto", "lognormal", "gamma", "weibull", "quantiles"]
PARAMETRIC = ("lognormal", "gamma", "weibull")


@dataclass(frozen=True, slots=True)
class Candidate:
    """One fitted model and how well it fits."""

    kind: str
    model: LatencyModel
    ks: float
    """KS distance to the data."""
    aic: float | None
    """Akaike information criterion (parametric models only)."""
    params: dict[str, float | int]
    """The fitted parameters by name (``mu``, ``sigma``; ``shape``, ``scale_ms``;
    ``n_points``, ``tail_q``, ``tail_shape``, ``tail_scale_ms``, ``n_exceedances``)."""


@dataclass(frozen=True, slots=True)
class StageFit:
    """A stage's candidates and the chosen model."""

    stage: str
    n: int
    model: LatencyModel
    chosen: str
    reason: str
    candidates: tuple[Candidate, ...]
    ks_critical: float | None
    """The 5% critical value of the KS distance for n (``None`` for a constant)."""
    warning: str | None = None
    """Set when the sample is too small for its tail (see the module docstring)."""
    unit_warning: str | None = None
    """Set when the durations look like a mix of units (:func:`unit_warning`)."""

    def candidate(self, kind: str) -> Candidate | None:
        return next((c for c in self.candidates if c.kind == kind), None)


def ks_distance(x_ms: np.ndarray, model: LatencyModel) -> float:
    """``sup |F_n − F|`` over the data's ECDF ``F_n`` (exact with ties: the supremum is
    reached at a data point, from the left or the right)."""
    x = np.sort(np.asarray(x_ms, dtype=np.float64))
    n = x.size
    f = model.cdf(x)
    above = np.arange(1, n + 1) / n - f
    below = f - np.arange(0, n) / n
    return float(max(above.max(), below.max()))


def _lognormal(x: np.ndarray) -> Candidate:
    from scipy.stats import lognorm

    logs = np.log(x)
    mu, sigma = float(logs.mean()), float(logs.std())
    model = LogNormalLatency(p50_ms=math.exp(mu), p90_ms=math.exp(mu + Z90 * sigma))
    log_l = float(lognorm.logpdf(x, model.sigma, scale=math.exp(model.mu)).sum())
    return Candidate("lognormal", model, ks_distance(x, model), 4 - 2 * log_l, {"mu": mu, "sigma": sigma})


def _gamma(x: np.ndarray) -> Candidate:
    from scipy.stats import gamma

    shape, _, scale = gamma.fit(x, floc=0)
    model = GammaLatency(shape=float(shape), scale_ms=float(scale))
    log_l = float(gamma.logpdf(x, model.shape, scale=model.scale_ms).sum())
    params = {"shape": model.shape, "scale_ms": model.scale_ms}
    return Candidate("gamma", model, ks_distance(x, model), 4 - 2 * log_l, params)


def _weibull(x: np.ndarray) -> Candidate:
    from scipy.stats import weibull_min

    shape, _, scale = weibull_min.fit(x, floc=0)
    model = WeibullLatency(shape=float(shape), scale_ms=float(scale))
    log_l = float(weibull_min.logpdf(x, model.shape, scale=model.scale_ms).sum())
    params = {"shape": model.shape, "scale_ms": model.scale_ms}
    return Candidate("weibull", model, ks_distance(x, model), 4 - 2 * log_l, params)


def tail_level(n: int) -> float | None:
    """``q_u`` for n durations: P90, or lower so that 20 exceed it; ``None`` below P50."""
    q = min(TAIL_Q, math.floor(100 * (1 - TAIL_MIN_EXCEEDANCES / n)) / 100)
    return q if q >= 0.5 else None


def pareto_tail(x: np.ndarray, q: float) -> tuple[ParetoTail, float, int] | None:
    """The generalized-Pareto tail above ``u = x(q)`` by the method of moments (see the
    module docstring), ``u`` (ms, to the µs) and the number of exceedances; ``None`` when
    fewer than two exceed ``u`` or they are all equal."""
    u = round(float(np.quantile(x, q)), 3)
    y = x[x > u] - u
    if y.size < 2:
        return None
    m = float(y.mean())
    v = float(np.mean(y * y)) - m * m
    if v <= 0:
        return None
    ratio = m * m / v
    return ParetoTail(q=q, shape=0.5 * (1 - ratio), scale_ms=0.5 * m * (1 + ratio)), u, int(y.size)


def _empirical(x: np.ndarray) -> Candidate:
    n = x.size
    q_u = tail_level(n)
    fitted = None if q_u is None else pareto_tail(x, q_u)
    top = 100 if fitted is None else round(100 * fitted[0].q)
    levels = [i / 100 for i in range(top + 1)]
    ms = np.round(np.quantile(x, levels), 3)
    points = tuple((q, float(v)) for q, v in zip(levels, ms, strict=True))
    params: dict[str, float | int] = {"n_points": len(points)}
    if fitted is None:
        model = QuantileLatency(points=points)
    else:
        tail, u, n_exc = fitted
        model = QuantileLatency(points=(*points[:-1], (tail.q, u)), tail=tail)
        params |= {"tail_q": tail.q, "tail_shape": tail.shape, "tail_scale_ms": tail.scale_ms, "n_exceedances": n_exc}
    return Candidate("quantiles", model, ks_distance(x, model), None, params)


def ks_critical(n: int, alpha: float = ALPHA) -> float:
    """The (1 − alpha) quantile of the one-sample KS distance for n observations."""
    from scipy.stats import kstwo

    return float(kstwo.ppf(1 - alpha, n))


def tail_warning(stage: str, n: int, chosen: str) -> str | None:
    """The small-sample warning (see the module docstring), or ``None`` when P99 is measured."""
    reach = math.floor(100 * (1 - SUPPORT_MIN_ABOVE / n))
    if reach >= 99:
        return None
    reached = f"P{reach}" if reach > 0 else "no percentile"
    return (
        f"stage {stage!r}: {n} durations measure quantiles up to {reached} only (P99 needs ≥ {100 * SUPPORT_MIN_ABOVE}, "
        f"{SUPPORT_MIN_ABOVE} above it); the tail beyond, P99 included, is the {chosen} model's extrapolation"
    )


UNIT_GAP = 100.0
"""Two groups of durations this many times apart, none between, look like mixed units."""


def unit_warning(stage: str, durations_ms: np.ndarray) -> str | None:
    """The mixed-units warning, or ``None``: when the sorted durations have a gap of
    ≥ :data:`UNIT_GAP`× between neighbours with at least 5% (and 3) of them on each side,
    some were likely written in seconds (or µs) — a latency distribution has no such
    hole. The fit still runs (the data may be right: a cache hit beside a miss)."""
    x = np.sort(np.asarray(durations_ms, dtype=np.float64))
    n = int(x.size)
    side = max(3, math.ceil(0.05 * n))
    if n < 2 * side:
        return None
    ratios = x[side : n - side + 1] / x[side - 1 : n - side]
    i = int(np.argmax(ratios))
    if ratios[i] < UNIT_GAP:
        return None
    cut = side + i  # x[:cut] below the gap, x[cut:] above
    return (
        f"stage {stage!r}: the durations form two groups {ratios[i]:.0f}× apart ({cut} of {x[0]:g}–{x[cut - 1]:g} ms, "
        f"{n - cut} of {x[cut]:g}–{x[-1]:g} ms, none between): a mix of seconds and milliseconds? duration_ms takes "
        "milliseconds only; the fit treats them as one distribution"
    )


def fit_stage(stage: str, durations_ms: np.ndarray, *, origin: str, min_n: int = MIN_N, choice: ModelChoice = "auto") -> StageFit:
    """Fit one stage's durations (see the module docstring); ``origin`` names the file
    in messages. Raises :class:`~streamrag.base.errors.InputError` for too few durations."""
    x = np.asarray(durations_ms, dtype=np.float64)
    n = int(x.size)
    if n < min_n:
        raise InputError(
            f"{origin}: stage {stage!r}: {n} duration{'s' if n != 1 else ''}, at least {min_n} are needed to fit a "
            "distribution (measure more, or lower --min-n knowingly)"
        )
    if float(x.max() - x.min()) < 0.001:  # equal to the µs, the engine's resolution
        value = float(np.median(x))
        reason = f"constant: all {n} durations are equal ({value:g} ms); there is no distribution to fit"
        return StageFit(stage, n, ConstantLatency(ms=value), "constant", reason, (), None)
    parametric = (_lognormal(x), _gamma(x), _weibull(x))
    candidates = (*parametric, _empirical(x))
    by_kind = {c.kind: c for c in candidates}
    critical = ks_critical(n)
    scores = ", ".join(f"{c.kind} AIC {c.aic:.1f} KS {c.ks:.4f}" for c in parametric)
    if choice != "auto":
        chosen = by_kind[choice]
        reason = f"{choice}: chosen by the user ({scores}; 5% KS critical value {critical:.4f} for n = {n})"
    else:
        best = min(parametric, key=lambda c: (c.aic, c.ks))
        if best.ks <= critical:
            chosen = best
            reason = f"{best.kind}: the smallest AIC of the parametric fits ({scores}), its KS distance within the 5% critical value {critical:.4f} for n = {n}"
        else:
            chosen = by_kind["quantiles"]
            fitted_tail = chosen.model.tail if isinstance(chosen.model, QuantileLatency) else None
            tail = "" if fitted_tail is None else f" with a generalized-Pareto tail above P{round(100 * fitted_tail.q)}"
            reason = (
                f"quantiles{tail}: the smallest-AIC parametric fit, {best.kind}, exceeds the 5% KS critical value "
                f"{critical:.4f} for n = {n} ({scores})"
            )
    warning = tail_warning(stage, n, chosen.kind)
    return StageFit(stage, n, chosen.model, chosen.kind, reason, candidates, critical, warning, unit_warning(stage, x))
