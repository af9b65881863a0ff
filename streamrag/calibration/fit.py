"""Fit a stage's durations: log-normal, gamma, empirical quantiles; choose by KS distance.

For ``n`` durations ``x`` (ms) of one stage, three candidate models:

- ``lognormal`` — maximum likelihood on the logs: ``μ = mean(ln x)``,
  ``σ = sqrt(mean((ln x − μ)²))`` (the MLE, divisor n), written as the kernel's
  :class:`~streamrag.engine.latency.LogNormalLatency` with ``p50 = e^μ`` and
  ``p90 = e^(μ + z₀.₉σ)`` (so ``mu`` and ``sigma`` are recovered exactly);
- ``gamma`` — maximum likelihood with the location fixed at 0
  (``scipy.stats.gamma.fit(x, floc=0)``, which solves ``ln k − ψ(k) = ln x̄ − mean(ln x)``
  for the shape k, then ``θ = x̄/k``): :class:`~streamrag.engine.latency.GammaLatency`;
- ``quantiles`` — the empirical distribution as 101 quantile points (every percentile,
  ``numpy.quantile``'s linear interpolation, P0 = min, P100 = max, ms rounded to the µs):
  :class:`~streamrag.engine.latency.QuantileLatency`. 101 points keep the tail to 1%
  resolution; it never samples outside the observed [min, max].

Each is scored by its **KS distance** ``D = sup |F_n(x) − F(x)|`` to the data and the
parametric ones also by **AIC** ``= 2·2 − 2 ln L`` (densities in 1/ms). The choice
(``model = "auto"``): the parametric fit with the smaller D (AIC breaks a tie), *if* its
D is within the 5% critical value of the one-sample KS statistic for n
(``scipy.stats.kstwo``); otherwise the empirical quantiles. The empirical model's own D
is reported but never competes: fitted with 101 points to the same data, it would
always win. The critical value ignores that the parameters were estimated (Lilliefors),
which makes it lenient toward the parametric models — deliberately: a two-parameter
model with a smooth, unbounded tail is preferred unless the data clearly reject it.

Degenerate and small samples: fewer than ``min_n`` durations (default 20) is an error
saying how many there are and how many are needed; durations all equal to the µs give
a ``constant`` model, stated as such.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from streamrag.base.errors import InputError
from streamrag.engine.latency import Z90, ConstantLatency, GammaLatency, LatencyModel, LogNormalLatency, QuantileLatency

MIN_N = 20
"""Fewest durations of a stage that are fitted without ``min_n`` lowered."""
ALPHA = 0.05
"""Level of the KS critical value a parametric fit must stay within."""
N_QUANTILE_POINTS = 101
"""Quantile points of the empirical model: every percentile, P0 … P100."""

ModelChoice = Literal["auto", "lognormal", "gamma", "quantiles"]
PARAMETRIC = ("lognormal", "gamma")


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
    """The fitted parameters by name (``mu``, ``sigma``; ``shape``, ``scale_ms``; ``n_points``)."""


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


def cdf(model: LatencyModel, x_ms: np.ndarray) -> np.ndarray:
    """The model's CDF at ``x_ms``."""
    from scipy.special import gammainc, ndtr

    x = np.asarray(x_ms, dtype=np.float64)
    if isinstance(model, LogNormalLatency):
        with np.errstate(divide="ignore"):
            return np.asarray(ndtr((np.log(x) - model.mu) / model.sigma))
    if isinstance(model, GammaLatency):
        return np.asarray(gammainc(model.shape, np.maximum(x, 0.0) / model.scale_ms))
    if isinstance(model, QuantileLatency):
        qs, ms = zip(*model.points, strict=True)
        return np.interp(x, ms, qs, left=0.0, right=1.0)
    return (x >= model.ms).astype(np.float64)


def quantiles_ms(model: LatencyModel, q: np.ndarray) -> np.ndarray:
    """The model's quantiles (ms) at levels ``q``."""
    from scipy.special import gammaincinv, ndtri

    q = np.asarray(q, dtype=np.float64)
    if isinstance(model, LogNormalLatency):
        return np.exp(model.mu + model.sigma * ndtri(q))
    if isinstance(model, GammaLatency):
        return model.scale_ms * np.asarray(gammaincinv(model.shape, q))
    if isinstance(model, QuantileLatency):
        qs, ms = zip(*model.points, strict=True)
        return np.interp(q, qs, ms)
    return np.full(q.shape, model.ms)


def ks_distance(x_ms: np.ndarray, model: LatencyModel) -> float:
    """``sup |F_n − F|`` over the data's ECDF ``F_n`` (exact with ties: the supremum is
    reached at a data point, from the left or the right)."""
    x = np.sort(np.asarray(x_ms, dtype=np.float64))
    n = x.size
    f = cdf(model, x)
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


def _empirical(x: np.ndarray) -> Candidate:
    levels = [i / (N_QUANTILE_POINTS - 1) for i in range(N_QUANTILE_POINTS)]
    ms = np.round(np.quantile(x, levels), 3)
    model = QuantileLatency(points=tuple((q, float(v)) for q, v in zip(levels, ms, strict=True)))
    return Candidate("quantiles", model, ks_distance(x, model), None, {"n_points": N_QUANTILE_POINTS})


def ks_critical(n: int, alpha: float = ALPHA) -> float:
    """The (1 − alpha) quantile of the one-sample KS distance for n observations."""
    from scipy.stats import kstwo

    return float(kstwo.ppf(1 - alpha, n))


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
    candidates = (_lognormal(x), _gamma(x), _empirical(x))
    by_kind = {c.kind: c for c in candidates}
    critical = ks_critical(n)
    ks = ", ".join(f"{c.kind} {c.ks:.4f}" for c in candidates[:2])
    if choice != "auto":
        chosen = by_kind[choice]
        reason = f"{choice}: chosen by the user (KS distance {ks}; 5% critical value {critical:.4f} for n = {n})"
    else:
        best = min(candidates[:2], key=lambda c: (c.ks, c.aic))
        if best.ks <= critical:
            chosen = best
            reason = (
                f"{best.kind}: the smaller KS distance of the parametric fits ({ks}), "
                f"within the 5% critical value {critical:.4f} for n = {n}"
            )
        else:
            chosen = by_kind["quantiles"]
            reason = (
                f"quantiles: both parametric fits exceed the 5% KS critical value {critical:.4f} for n = {n} ({ks}); "
                f"the empirical quantiles never sample outside the observed {x.min():g}–{x.max():g} ms"
            )
    return StageFit(stage, n, chosen.model, chosen.kind, reason, candidates, critical)
