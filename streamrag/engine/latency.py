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
- ``quantiles`` — an empirical distribution given by quantile points ``[q, ms]``
  (``q`` from 0 to 1), sampled by linear interpolation of the inverse CDF.

Samples are integer microseconds (the engine's time unit). ``nominal_ms`` is the value
used for the analytic bounds ``H``/``H_G`` (the constant, else the median).
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

Z90 = 1.2815515655446004
"""Φ⁻¹(0.9): the standard normal 90th percentile."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def sample_us(self, rng: np.random.Generator | None, size: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def sample_list_us(self, rng: np.random.Generator | None, size: int) -> list[int]:
        """``sample_us`` as a list of ints (the same values; what a question's plan keeps)."""
        return self.sample_us(rng, size).tolist()


class ConstantLatency(_Model):
    """Always the same duration."""

    kind: Literal["constant"] = "constant"
    ms: float = Field(ge=0, allow_inf_nan=False)
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

    def quantile_ms(self, q: float) -> float:
        return self.ms

    def sample_us(self, rng: np.random.Generator | None, size: int) -> np.ndarray:
        return np.full(size, round(self.ms * 1000), dtype=np.int64)

    def sample_list_us(self, rng: np.random.Generator | None, size: int) -> list[int]:
        return [round(self.ms * 1000)] * size  # no array for a constant (once per question and stage)


class LogNormalLatency(_Model):
    """Log-normal fitted to a median (P50) and 90th percentile (P90), in ms."""

    kind: Literal["lognormal"] = "lognormal"
    p50_ms: float = Field(gt=0, allow_inf_nan=False)
    p90_ms: float = Field(gt=0, allow_inf_nan=False)
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

    def quantile_ms(self, q: float) -> float:
        from scipy.special import ndtri

        return math.exp(self.mu + self.sigma * float(ndtri(q)))

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
    scale_ms: float = Field(gt=0, allow_inf_nan=False)
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

    def quantile_ms(self, q: float) -> float:
        from scipy.special import gammaincinv

        return self.scale_ms * float(gammaincinv(self.shape, q))

    def sample_us(self, rng: np.random.Generator | None, size: int) -> np.ndarray:
        if rng is None:
            raise ValueError("a gamma latency needs a random generator")
        ms = rng.gamma(self.shape, self.scale_ms, size)
        return np.rint(ms * 1000).astype(np.int64)


class QuantileLatency(_Model):
    """Empirical quantiles ``[[q, ms], …]`` from q = 0 to q = 1, both increasing."""

    kind: Literal["quantiles"] = "quantiles"
    points: tuple[tuple[float, float], ...] = Field(min_length=2)
    source: str = ""

    @model_validator(mode="after")
    def _monotone(self) -> QuantileLatency:
        qs = [p[0] for p in self.points]
        ms = [p[1] for p in self.points]
        if qs[0] != 0.0 or qs[-1] != 1.0:
            raise ValueError("points must start at q = 0 and end at q = 1")
        if any(b <= a for a, b in pairwise(qs)):
            raise ValueError("quantile levels q must be strictly increasing")
        if any(b < a for a, b in pairwise(ms)) or ms[0] < 0:
            raise ValueError("durations must be non-negative and non-decreasing in q")
        return self

    @property
    def needs_rng(self) -> bool:
        return True

    @property
    def nominal_ms(self) -> float:
        return self.quantile_ms(0.5)

    @property
    def mean_ms(self) -> float:
        """The mean of the piecewise-linear inverse CDF: ∫ x(q) dq (trapezoids)."""
        qs, ms = zip(*self.points, strict=True)
        return float(np.trapezoid(ms, qs))

    def quantile_ms(self, q: float) -> float:
        qs, ms = zip(*self.points, strict=True)
        return float(np.interp(q, qs, ms))

    def sample_us(self, rng: np.random.Generator | None, size: int) -> np.ndarray:
        if rng is None:
            raise ValueError("an empirical latency needs a random generator")
        qs, ms = zip(*self.points, strict=True)
        return np.rint(np.interp(rng.random(size), qs, ms) * 1000).astype(np.int64)


LatencyModel = Annotated[
    ConstantLatency | LogNormalLatency | GammaLatency | QuantileLatency,
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
