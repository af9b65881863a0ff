"""The p50 and p90 user's answer latency and gain: quantiles of each arm's answer latency.

A *user's* latency is a quantile of one arm's answer latency over sessions (design §11:
"the p50/p90 user"), not a quantile of per-question savings: the p90 user's **gain** is
``baseline p90 − streaming p90`` (``answer_ms_difference.p90``, the name load runs and
``sweep``'s break-even use), which has no per-session pairing.

Both arms' answer latencies after the turn end are mixtures over the questions:

- **baseline** ``V_b + X + F`` — the tool queue's wait (0 without load), X = G + L, then F;
- **streaming** ``W + F`` with, per question's timeline (:class:`~streamrag.simulator.predict.saving.Timeline`)
  and Y = X + V per call (V the streaming queue's wait):
  a hit waits ``W = max(check, min_{j∈O} (Y_j − d_j))``, so
  ``P(W ≤ a) = 1[a ≥ check]·(1 − Π_{j∈O} P(Y > a + d_j))``;
  a mis-fire waits for every call, then refires: ``W = R + Y_f``,
  ``P(R ≤ r) = 1[r ≥ max(check, 0)]·Π_j P(Y ≤ r + d_j)``.

F is the same draw in both arms, so it shifts both mixtures alike; it is summed over its
atoms. The population's streaming CDF is the mean of the questions'; a quantile is the
smallest a with CDF ≥ p (bisection). Every question is computed at once on padded arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from streamrag.simulator.predict.atoms import Atoms
from streamrag.simulator.predict.saving import Timeline

LATENCY_ATOMS = 24
"""Atoms of X and F for the users' latencies (the load model's resolution)."""
QUANTILES = {"median": 0.5, "p90": 0.9}
"""The users reported, by the statistic's name in ``summary.json`` (``answer_ms.median`` …)."""
_TIE_MS = 1e-6


class Packed:
    """A population's timelines as padded arrays: each distinct timeline once, with its
    number of questions (``weight``)."""

    __slots__ = ("check", "hit", "hit_offsets", "miss_check", "miss_offsets", "n", "weight")

    def __init__(self, lines: Sequence[Timeline]) -> None:
        counts: dict[tuple[object, ...], int] = {}
        first: dict[tuple[object, ...], Timeline] = {}
        for ln in lines:
            counts[ln.key] = counts.get(ln.key, 0) + 1
            first.setdefault(ln.key, ln)
        unique = list(first.values())
        weight = np.array([counts[ln.key] for ln in unique], dtype=np.float64)
        hit = np.array([bool(ln.deciding.any()) for ln in unique], dtype=bool)
        checks = np.array([ln.check_ms for ln in unique])
        self.n = len(lines)
        self.hit, self.weight = hit, weight
        self.check, self.miss_check = checks[hit], checks[~hit]
        self.hit_offsets = _pad([ln.offsets_ms[ln.deciding] for ln, h in zip(unique, hit, strict=True) if h], -np.inf)
        self.miss_offsets = _pad([ln.offsets_ms for ln, h in zip(unique, hit, strict=True) if not h], np.inf)


def _pad(rows: list[np.ndarray], fill: float) -> np.ndarray:
    """Rows of unequal length as one array; ``fill`` is neutral in the products below
    (−inf: P(Y > a + d) = 1; +inf: P(Y ≤ r + d) = 1)."""
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), max(width, 1)), fill)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def streaming_cdf(packed: Packed, y: Atoms, a_ms: np.ndarray) -> np.ndarray:
    """Sum over questions of P(W ≤ a) at each a (``a_ms`` any shape), calls' latency Y."""
    w_hit, w_miss = packed.weight[packed.hit], packed.weight[~packed.hit]
    a = np.asarray(a_ms, dtype=np.float64)
    total = np.zeros(a.shape)
    if packed.hit.any():
        pts = a[..., None, None] + packed.hit_offsets  # (..., questions, calls)
        none_done = np.prod(y.greater(pts), axis=-1)
        total += ((a[..., None] >= packed.check - _TIE_MS) * (1.0 - none_done)) @ w_hit
    if (~packed.hit).any():  # over the refire's own Y too (last axis but one)
        r = a[..., None] - y.values_ms
        pts = r[..., None, None] + packed.miss_offsets  # (..., refire atoms, questions, calls)
        all_done = np.prod(1.0 - y.greater(pts), axis=-1)
        ready = r[..., None] >= np.maximum(packed.miss_check, 0.0) - _TIE_MS
        total += ((ready * all_done) @ w_miss) @ y.probs
    return total


def population_cdf(packed: Packed, ys: Sequence[tuple[float, Atoms]], f: Atoms, b_ms: np.ndarray) -> np.ndarray:
    """P(W + F ≤ b) over the population at each b, W's calls' latency a mixture of
    ``(probability, Y)`` (one Y: independent waits; several: one shared wait per session)."""
    b = np.asarray(b_ms, dtype=np.float64)
    points = b[..., None] - f.values_ms  # (..., F atoms)
    total = sum(p * streaming_cdf(packed, y, points) for p, y in ys)
    return np.asarray(total @ f.probs) / packed.n


def quantile(cdf: Callable[[np.ndarray], np.ndarray], q: float, lo: float, hi: float, tol_ms: float = 0.01) -> float:
    """The smallest a in [lo, hi] with ``cdf(a) ≥ q`` (``hi`` grows until it holds), by
    bisection to ``tol_ms``."""
    while cdf(np.array(hi)) < q:
        lo, hi = hi, 2 * hi + 1.0
    if cdf(np.array(lo)) >= q:
        return lo
    while hi - lo > tol_ms:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if cdf(np.array(mid)) >= q else (mid, hi)
    return hi


def user_latencies(packed: Packed, x: Atoms, f: Atoms, end_of_turn_ms: float) -> dict[str, dict[str, float]]:
    """Without load: each arm's answer latency (ms after the last word) of the p50 and p90
    user, and the gain ``baseline − streaming`` (``answer_ms_difference``)."""
    base = f.values_ms[:, None] + x.values_ms[None, :]
    base_atoms = Atoms(*_sorted(base.ravel(), (f.probs[:, None] * x.probs[None, :]).ravel()))
    ys = [(1.0, x)]
    hi = float(base_atoms.values_ms[-1]) * 4 + 1.0
    out: dict[str, dict[str, float]] = {"baseline_ms": {}, "streaming_ms": {}, "answer_ms_difference": {}}
    for name, q in QUANTILES.items():
        b = base_atoms.quantile_ms(q)
        s = quantile(lambda a: population_cdf(packed, ys, f, a), q, 0.0, hi)
        out["baseline_ms"][name] = round(b + end_of_turn_ms, 2)  # the bisection's tolerance
        out["streaming_ms"][name] = round(s + end_of_turn_ms, 2)
        out["answer_ms_difference"][name] = round(b - s, 2)
    return out


def _sorted(values: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(values, kind="stable")
    return values[order], probs[order] / probs.sum()
