"""Latency models: the distribution of one pipeline stage's duration.

Three stages per call (design §5): ``G`` query generation (LLM), ``L`` the tool call,
``F`` response generation up to the first token (LLM). Each is a ``LatencyModel``
picked by ``kind`` (a pydantic discriminated union):

- ``constant`` — always ``ms``;
- ``lognormal`` — fitted to a published median and 90th percentile:
  ``μ = ln P50``, ``σ = (ln P90 − ln P50) / z₀.₉`` with ``z₀.₉ = Φ⁻¹(0.9) ≈ 1.2816``,
  so the model's P50 and P90 are exactly the published ones;
- ``gamma`` — shape ``k`` (dimensionless) and scale ``θ`` in ms (``scale_ms``): mean
  ``kθ``, coefficient of variation ``1/√k``; what ``streamrag calibrate`` fits by
  maximum likelihood (:mod:`streamrag.calibration`);
- ``weibull`` — shape ``k`` and scale ``λ`` in ms: ``F(x) = 1 − exp(−(x/λ)^k)``, mean
  ``λΓ(1 + 1/k)``; its tail is lighter than exponential for k > 1, heavier for k < 1;
- ``quantiles`` — an empirical distribution given by quantile points ``[q, ms]``
  (``q`` from 0 to 1), sampled by linear interpolation of the inverse CDF; optionally
  with a generalized-Pareto ``tail`` above the last point (``q`` < 1, see
  :class:`ParetoTail`), so the model is not bounded by the largest observation.

Every model gives its CDF and quantiles on arrays (``cdf``, ``ppf``), its ``mean_ms``
and its ``second_moment_ms2`` = E[S²] in ms² (what queueing waits read: the
Pollaczek–Khinchine mean wait is λE[S²] / 2(1 − ρ)).

Samples are integer microseconds (the engine's time unit). ``nominal_ms`` is the value
used for the analytic bounds ``H``/``H_G`` (the constant, else the median).
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, model_validator

from streamrag.base.validation import MAX_MS, SettingsModel

Z90 = 1.2815515655446004
"""Φ⁻¹(0.9): the standard normal 90th percentile."""


class _Model(SettingsModel):
    def cdf(self, x_ms: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """P(S ≤ x) at each ``x_ms``."""
        raise NotImplementedError

    def ppf(self, q: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """The quantiles (ms) at levels ``q``."""
        raise NotImplementedError

    def sample_us(self, rng: np.random.Generator | None, size: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def sample_list_us(self, rng: np.random.Generator | None, size: int) -> list[int]:
        """``sample_us`` as a list of ints (the same values; what a question's plan keeps)."""
        return self.sample_us(rng, size).tolist()


class ConstantLatency(_Model):
    """Always the same duration."""

    kind: Literal["constant"] = "constant"
    ms: float = Field(ge=0, le=MAX_MS, allow_inf_nan=False)
    source: str = ""

    @property
    def needs_rng(self) -> bool:
        return False

    @property
    def nominal_ms(self) -> float:
        return self.ms

    @property
    def mean_ms(self) -> float:
        return self.ms

    @property
    def second_moment_ms2(self) -> float:
        return self.ms**2

    def quantile_ms(self, q: float) -> float:
        return self.ms

    def cdf(self, x_ms: np.ndarray) -> np.ndarray:
        return (np.asarray(x_ms, dtype=np.float64) >= self.ms).astype(np.float64)

    def ppf(self, q: np.ndarray) -> np.ndarray:
        return np.full(np.shape(q), self.ms)

    def sample_us(self, rng: np.random.Generator | None, size: int) -> np.ndarray:
        return np.full(size, round(self.ms * 1000), dtype=np.int64)

    def sample_list_us(self, rng: np.random.Generator | None, size: int) -> list[int]:
        return [round(self.ms * 1000)] * size  # no array for a constant (once per question and stage)


class LogNormalLatency(_Model):
    """Log-normal fitted to a median (P50) and 90th percentile (P90), in ms."""

    kind: Literal["lognormal"] = "lognormal"
    p50_ms: float = Field(gt=0, le=MAX_MS, allow_inf_nan=False)
    p90_ms: float = Field(gt=0, le=MAX_MS, allow_inf_nan=False)
    source: str = ""

    @model_validator(mode="after")
    def _ordered(self) -> LogNormalLatency:
        if not self.p90_ms > self.p50_ms:
            raise ValueError(f"p90_ms ({self.p90_ms}) must be greater than p50_ms ({self.p50_ms})")
        return self

    @property
    def mu(self) -> float:
        """μ of ln(duration in ms)."""
        return math.log(self.p50_ms)

    @property
    def sigma(self) -> float:
        """σ of ln(duration in ms)."""
        return (math.log(self.p90_ms) - math.log(self.p50_ms)) / Z90

    @property
    def needs_rng(self) -> bool:
        return True

    @property
    def nominal_ms(self) -> float:
        return self.p50_ms

    @property
    def mean_ms(self) -> float:
        """exp(μ + σ²/2): above the median, by the right tail."""
        return math.exp(self.mu + self.sigma**2 / 2)

    @property
    def second_moment_ms2(self) -> float:
        """exp(2μ + 2σ²)."""
        return math.exp(2 * self.mu + 2 * self.sigma**2)

    def quantile_ms(self, q: float) -> float:
        from scipy.special import ndtri

        return math.exp(self.mu + self.sigma * float(ndtri(q)))

    def cdf(self, x_ms: np.ndarray) -> np.ndarray:
        from scipy.special import ndtr

        with np.errstate(divide="ignore"):
            return np.asarray(ndtr((np.log(np.asarray(x_ms, dtype=np.float64)) - self.mu) / self.sigma))

    def ppf(self, q: np.ndarray) -> np.ndarray:
        from scipy.special import ndtri

        return np.exp(self.mu + self.sigma * ndtri(np.asarray(q, dtype=np.float64)))

    def sample_us(self, rng: np.random.Generator | None, size: int) -> np.ndarray:
        if rng is None:
            raise ValueError("a log-normal latency needs a random generator")
        ms = rng.lognormal(self.mu, self.sigma, size)
        return np.rint(ms * 1000).astype(np.int64)


class GammaLatency(_Model):
    """Gamma with shape ``k`` and scale ``θ`` (ms): density ∝ x^(k−1)·e^(−x/θ), mean
    ``kθ`` ms, coefficient of variation ``1/√k``. Unlike the log-normal its right tail
    is exponential, not heavy."""

    kind: Literal["gamma"] = "gamma"
    shape: float = Field(gt=0, allow_inf_nan=False)
    """k, dimensionless."""
    scale_ms: float = Field(gt=0, le=MAX_MS, allow_inf_nan=False)
    """θ, in ms."""
    source: str = ""

    @property
    def mean_ms(self) -> float:
        return self.shape * self.scale_ms

    @property
    def cv(self) -> float:
        return 1.0 / math.sqrt(self.shape)

    @property
    def needs_rng(self) -> bool:
        return True

    @property
    def nominal_ms(self) -> float:
        return self.quantile_ms(0.5)

    @property
    def second_moment_ms2(self) -> float:
        """kθ²(k + 1)."""
        return self.shape * self.scale_ms**2 * (self.shape + 1)

    def quantile_ms(self, q: float) -> float:
        from scipy.special import gammaincinv

        return self.scale_ms * float(gammaincinv(self.shape, q))

    def cdf(self, x_ms: np.ndarray) -> np.ndarray:
        from scipy.special import gammainc

        return np.asarray(gammainc(self.shape, np.maximum(np.asarray(x_ms, dtype=np.float64), 0.0) / self.scale_ms))

    def ppf(self, q: np.ndarray) -> np.ndarray:
        from scipy.special import gammaincinv

        return self.scale_ms * np.asarray(gammaincinv(self.shape, np.asarray(q, dtype=np.float64)))

    def sample_us(self, rng: np.random.Generator | None, size: int) -> np.ndarray:
        if rng is None:
            raise ValueError("a gamma latency needs a random generator")
        ms = rng.gamma(self.shape, self.scale_ms, size)
        return np.rint(ms * 1000).astype(np.int64)


class WeibullLatency(_Model):
    """Weibull with shape ``k`` and scale ``λ`` (ms): ``F(x) = 1 − exp(−(x/λ)^k)``, mean
    ``λΓ(1 + 1/k)``, E[S²] ``λ²Γ(1 + 2/k)``."""

    kind: Literal["weibull"] = "weibull"
    shape: float = Field(gt=0, allow_inf_nan=False)
    """k, dimensionless."""
    scale_ms: float = Field(gt=0, le=MAX_MS, allow_inf_nan=False)
    """λ, in ms."""
    source: str = ""

    @property
    def needs_rng(self) -> bool:
        return True

    @property
    def nominal_ms(self) -> float:
        return self.quantile_ms(0.5)

    @property
    def mean_ms(self) -> float:
        return self.scale_ms * math.gamma(1 + 1 / self.shape)

    @property
    def second_moment_ms2(self) -> float:
        return self.scale_ms**2 * math.gamma(1 + 2 / self.shape)

    def quantile_ms(self, q: float) -> float:
        return float(self.ppf(np.asarray(q)))

    def cdf(self, x_ms: np.ndarray) -> np.ndarray:
        x = np.maximum(np.asarray(x_ms, dtype=np.float64), 0.0)
        return -np.expm1(-((x / self.scale_ms) ** self.shape))

    def ppf(self, q: np.ndarray) -> np.ndarray:
        return self.scale_ms * (-np.log1p(-np.asarray(q, dtype=np.float64))) ** (1 / self.shape)

    def sample_us(self, rng: np.random.Generator | None, size: int) -> np.ndarray:
        if rng is None:
            raise ValueError("a Weibull latency needs a random generator")
        return np.rint(rng.weibull(self.shape, size) * self.scale_ms * 1000).astype(np.int64)


class ParetoTail(SettingsModel):
    """A generalized-Pareto tail above quantile ``q``: for a level p > q, the duration is
    ``u + Y`` with ``u`` the last quantile point and ``Y`` the exceedance's quantile at
    ``(p − q)/(1 − q)``: ``Y = β((1 − r)^(−ξ) − 1)/ξ`` (``β(−ln(1 − r))`` when ξ = 0).

    ``shape`` ξ < ½ keeps E[S²] finite (E[Y] = β/(1 − ξ), E[Y²] = 2β²/((1 − ξ)(1 − 2ξ)));
    ξ < 0 bounds the tail at ``u + β/|ξ|``."""

    q: float = Field(gt=0, lt=1, allow_inf_nan=False)
    shape: float = Field(lt=0.5, allow_inf_nan=False)
    """ξ, dimensionless."""
    scale_ms: float = Field(gt=0, le=MAX_MS, allow_inf_nan=False)
    """β, in ms."""

    def exceedance_ppf(self, r: np.ndarray) -> np.ndarray:
        """Y's quantiles (ms) at levels ``r`` of the exceedance distribution."""
        r = np.asarray(r, dtype=np.float64)
        if abs(self.shape) < 1e-12:
            return -self.scale_ms * np.log1p(-r)
        return self.scale_ms * np.expm1(-self.shape * np.log1p(-r)) / self.shape

    def exceedance_cdf(self, y_ms: np.ndarray) -> np.ndarray:
        y = np.maximum(np.asarray(y_ms, dtype=np.float64), 0.0)
        if abs(self.shape) < 1e-12:
            return -np.expm1(-y / self.scale_ms)
        base = np.maximum(1 + self.shape * y / self.scale_ms, 0.0)
        with np.errstate(divide="ignore"):
            return np.asarray(1 - base ** (-1 / self.shape))

    def moments_ms(self) -> tuple[float, float]:
        """E[Y] (ms) and E[Y²] (ms²)."""
        xi, beta = self.shape, self.scale_ms
        return beta / (1 - xi), 2 * beta**2 / ((1 - xi) * (1 - 2 * xi))


class QuantileLatency(_Model):
    """Empirical quantiles ``[[q, ms], …]`` from q = 0 to q = 1, both increasing; or up
    to the ``tail``'s level, a generalized Pareto above it."""

    kind: Literal["quantiles"] = "quantiles"
    points: tuple[tuple[float, float], ...] = Field(min_length=2)
    tail: ParetoTail | None = None
    source: str = ""

    @model_validator(mode="after")
    def _monotone(self) -> QuantileLatency:
        qs = [p[0] for p in self.points]
        ms = [p[1] for p in self.points]
        top = 1.0 if self.tail is None else self.tail.q
        if qs[0] != 0.0 or qs[-1] != top:
            end = "q = 1" if self.tail is None else f"the tail's q = {top}"
            raise ValueError(f"points must start at q = 0 and end at {end}")
        if any(b <= a for a, b in pairwise(qs)):
            raise ValueError("quantile levels q must be strictly increasing")
        if any(b < a for a, b in pairwise(ms)) or ms[0] < 0:
            raise ValueError("durations must be non-negative and non-decreasing in q")
        if not all(math.isfinite(v) and v <= MAX_MS for v in (*qs, *ms)):
            raise ValueError(f"quantile levels and durations must be finite, durations at most {MAX_MS:.0f} ms (a day)")
        return self

    @property
    def needs_rng(self) -> bool:
        return True

    @property
    def nominal_ms(self) -> float:
        return self.quantile_ms(0.5)

    @property
    def mean_ms(self) -> float:
        """∫ x(q) dq: the piecewise-linear body (trapezoids) plus the tail's (1 − q)(u + E[Y])."""
        qs, ms = zip(*self.points, strict=True)
        body = float(np.trapezoid(ms, qs))
        if self.tail is None:
            return body
        return body + (1 - self.tail.q) * (ms[-1] + self.tail.moments_ms()[0])

    @property
    def second_moment_ms2(self) -> float:
        """∫ x(q)² dq: per linear segment (a² + ab + b²)/3 · Δq, plus the tail's
        (1 − q)(u² + 2uE[Y] + E[Y²])."""
        q, x = np.array(self.points, dtype=np.float64).T
        a, b = x[:-1], x[1:]
        body = float(((a * a + a * b + b * b) / 3 * np.diff(q)).sum())
        if self.tail is None:
            return body
        u = float(x[-1])
        ey, ey2 = self.tail.moments_ms()
        return body + (1 - self.tail.q) * (u * u + 2 * u * ey + ey2)

    def quantile_ms(self, q: float) -> float:
        return float(self.ppf(np.asarray(q)))

    def cdf(self, x_ms: np.ndarray) -> np.ndarray:
        qs, ms = zip(*self.points, strict=True)
        x = np.asarray(x_ms, dtype=np.float64)
        if self.tail is None:
            return np.interp(x, ms, qs, left=0.0, right=1.0)
        body = np.interp(x, ms, qs, left=0.0, right=self.tail.q)
        above = self.tail.q + (1 - self.tail.q) * self.tail.exceedance_cdf(x - ms[-1])
        return np.where(x > ms[-1], above, body)

    def ppf(self, q: np.ndarray) -> np.ndarray:
        qs, ms = zip(*self.points, strict=True)
        q = np.asarray(q, dtype=np.float64)
        body = np.interp(q, qs, ms)
        if self.tail is None:
            return body
        r = np.clip((q - self.tail.q) / (1 - self.tail.q), 0.0, 1.0)
        return np.where(q > self.tail.q, ms[-1] + self.tail.exceedance_ppf(r), body)

    def sample_us(self, rng: np.random.Generator | None, size: int) -> np.ndarray:
        if rng is None:
            raise ValueError("an empirical latency needs a random generator")
        if self.tail is None:
            qs, ms = zip(*self.points, strict=True)
            return np.rint(np.interp(rng.random(size), qs, ms) * 1000).astype(np.int64)
        return np.rint(self.ppf(rng.random(size)) * 1000).astype(np.int64)


LatencyModel = Annotated[
    ConstantLatency | LogNormalLatency | GammaLatency | WeibullLatency | QuantileLatency,
    Field(discriminator="kind"),
]
"""One stage's latency distribution, chosen by ``kind``."""

STAGES = ("G", "L", "F")
"""Query generation, tool call, response generation."""


class LatencyStages(_Model):
    """The resolved latency model of each stage."""

    G: LatencyModel
    L: LatencyModel
    F: LatencyModel
