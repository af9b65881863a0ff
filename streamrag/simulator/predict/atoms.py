"""Discrete distributions of latency: a stage's, or a call's G + L, as a few atoms.

The analytic predictor (:mod:`~streamrag.simulator.predict.saving`) and the load model
(:mod:`~streamrag.simulator.predict.load`) compute with these instead of sampling: a
stage's latency model becomes at most :data:`N_ATOMS` equal-mass atoms (one if constant),
sums of independent stages are convolved and compressed again, and the tail integrals
of a minimum or maximum over calls are exact sums over the steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from streamrag.engine.latency import ConstantLatency, LatencyModel

N_ATOMS = 64
"""Atoms of a random stage's discrete distribution (equal-mass bins of a fine quantile grid)."""
_FINE = 4096
TIE_MS = 1e-6
"""Two instants closer than this (1 ns) are the same instant."""


@dataclass(frozen=True, slots=True)
class Atoms:
    """A discrete distribution: sorted ``values_ms`` with probabilities ``probs``."""

    values_ms: np.ndarray
    probs: np.ndarray
    tail: np.ndarray = field(init=False, repr=False, compare=False)
    """P(X ≥ values_ms[i]) at each i, then 0 (what :meth:`at_least` and :meth:`greater` read)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "tail", np.concatenate([np.cumsum(self.probs[::-1])[::-1], [0.0]]))

    @property
    def mean_ms(self) -> float:
        return float(self.values_ms @ self.probs)

    @property
    def var_ms2(self) -> float:
        return max(0.0, float((self.values_ms**2) @ self.probs) - self.mean_ms**2)

    def at_least(self, x_ms: np.ndarray) -> np.ndarray:
        """P(X ≥ x) at each x (ties within :data:`TIE_MS` count as equal)."""
        idx = np.searchsorted(self.values_ms, np.asarray(x_ms) - TIE_MS, side="left")
        return self.tail[idx]

    def greater(self, x_ms: np.ndarray) -> np.ndarray:
        """P(X > x) at each x (right-continuous in x)."""
        idx = np.searchsorted(self.values_ms, np.asarray(x_ms) + TIE_MS, side="right")
        return self.tail[idx]

    def quantile_ms(self, q: float) -> float:
        return float(self.values_ms[min(len(self.values_ms) - 1, int(np.searchsorted(np.cumsum(self.probs), q - 1e-12)))])


def point(value_ms: float) -> Atoms:
    return Atoms(np.array([float(value_ms)]), np.array([1.0]))


def compress(values: np.ndarray, probs: np.ndarray, k: int = N_ATOMS) -> Atoms:
    """At most ``k`` atoms: equal-mass bins of the sorted values, each at its bin's mean
    (the mean is kept exactly)."""
    order = np.argsort(values, kind="stable")
    values, probs = values[order], probs[order]
    if len(values) <= k:
        return Atoms(values, probs / probs.sum())
    cum = np.cumsum(probs) / probs.sum()
    bins = np.minimum((cum * k - 1e-9).astype(np.int64), k - 1)
    mass = np.bincount(bins, weights=probs, minlength=k)
    moment = np.bincount(bins, weights=probs * values, minlength=k)
    keep = mass > 0
    return Atoms(moment[keep] / mass[keep], mass[keep] / mass[keep].sum())


def stage_atoms(model: LatencyModel, k: int = N_ATOMS) -> Atoms:
    """A stage's latency as a discrete distribution (ms): one atom if constant."""
    if isinstance(model, ConstantLatency):
        return point(model.ms)
    fine = np.asarray(model.ppf((np.arange(_FINE) + 0.5) / _FINE), dtype=np.float64)
    return compress(fine, np.full(_FINE, 1.0 / _FINE), k)


def add(a: Atoms, b: Atoms, k: int = N_ATOMS) -> Atoms:
    """The distribution of A + B for independent A, B."""
    values = (a.values_ms[:, None] + b.values_ms[None, :]).ravel()
    probs = (a.probs[:, None] * b.probs[None, :]).ravel()
    return compress(values, probs, k)


def tail_moments(x: Atoms, offsets: np.ndarray, lo: float, how: str) -> tuple[float, float]:
    """``(∫_lo^∞ P(Y > w) dw, ∫_lo^∞ 2w·P(Y > w) dw)`` for Y = min (``how="min"``) or max
    (``"max"``) over j of ``X_j − offsets_j``, the X_j independent copies of ``x``: the
    tail parts of E[max(lo, Y)] and E[max(lo, Y)²]. Exact: the integrand is a step function."""
    if offsets.size == 0:
        return (np.inf, np.inf) if how == "min" else (0.0, 0.0)
    breaks = (x.values_ms[None, :] - offsets[:, None]).ravel()
    breaks = np.unique(np.concatenate([[lo], breaks[breaks > lo]]))
    at = breaks[:-1]
    if how == "min":
        level = np.prod(x.greater(at[:, None] + offsets[None, :]), axis=1)
    else:
        level = 1.0 - np.prod(1.0 - x.greater(at[:, None] + offsets[None, :]), axis=1)
    right = breaks[1:]
    return float(level @ (right - at)), float(level @ (right**2 - at**2))
