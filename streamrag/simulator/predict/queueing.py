"""Textbook queueing formulas: Erlang C and the Allen–Cunneen M/G/c approximation.

One copy of each, used by the predictor (:mod:`streamrag.simulator.predict.load`) and
by the tests that check the load engine against queueing theory.

- **Erlang C** (M/M/c): with offered load a = λ/μ on c servers (a < c), the probability
  that an arrival waits is ``C(c, a) = (aᶜ/c!)·c/(c − a) / (Σₖ₌₀^{c−1} aᵏ/k! + (aᶜ/c!)·c/(c − a))``
  and the mean wait in queue ``W_q = C(c, a)/(cμ − λ)``; the wait of a waiting arrival
  is exponential with mean ``1/(cμ − λ)``.
- **Allen–Cunneen** (G/G/c): ``W_q ≈ W_q(M/M/c) · (c_a² + c_s²)/2`` with c_a², c_s² the
  squared coefficients of variation of inter-arrival and service times (Kingman's
  heavy-traffic factor; exact for M/M/c, within a few percent for M/D/c at moderate load).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def erlang_c(servers: int, offered: float) -> float:
    """Probability of waiting in an M/M/c queue, ``C(c, a)`` (1.0 when a ≥ c)."""
    if offered >= servers:
        return 1.0
    if offered <= 0:
        return 0.0
    term, total = 1.0, 1.0  # aᵏ/k! for k = 0, summed up to c − 1
    for k in range(1, servers):
        term *= offered / k
        total += term
    tail = term * offered / servers * servers / (servers - offered)
    return tail / (total + tail)


def erlang_c_wait_s(servers: int, lam: float, mu: float) -> float:
    """Mean wait in queue (s) of an M/M/c queue with arrival rate ``lam`` and service
    rate ``mu`` per server (per s); infinite at or past saturation."""
    if lam >= servers * mu:
        return math.inf
    return erlang_c(servers, lam / mu) / (servers * mu - lam)


def allen_cunneen_wait_s(servers: int, lam: float, mean_service_s: float, cs2: float, ca2: float = 1.0) -> float:
    """Allen–Cunneen's mean wait in queue (s) of a G/G/c queue: Erlang C's scaled by
    ``(ca2 + cs2)/2`` (Poisson arrivals: ``ca2 = 1``)."""
    if lam <= 0 or mean_service_s <= 0:
        return 0.0
    return erlang_c_wait_s(servers, lam, 1.0 / mean_service_s) * (ca2 + cs2) / 2.0


# --- impatient customers: M/M/c+G (Erlang A with a general patience) ---------------------


@dataclass(frozen=True, slots=True)
class ImpatientQueue:
    """The steady state of an M/M/c+G queue (FIFO; a waiting customer leaves unserved
    once its patience runs out), in the *virtual wait* V — the wait of a customer who
    never leaves (Baccelli & Hébuterne 1981; Zeltyn & Mandelbaum 2005, §2):

    - ``P(V = 0) = 1 − p_wait``; on (0, ∞) V has density ``λ·π_{c−1}·exp(e(x))`` with
      ``e(x) = λ·∫₀ˣ Ḡ(u) du − cμ·x`` (Ḡ the patience survival), ``π_{c−1}`` the
      probability of c − 1 busy servers, ``π_j = π₀·aʲ/j!`` (j < c, a = λ/μ) and
      ``π₀ = 1/(Σ_{j<c} aʲ/j! + λ·J·a^{c−1}/(c−1)!)``, ``J = ∫₀^∞ exp(e(x)) dx``;
    - a customer of patience τ is served iff V ≤ τ, so ``P(abandon) = E[P(V > τ)]``.

    e is piecewise linear between the patience atoms, so every integral is exact.
    ``scale`` stretches the waiting part's time axis (Allen–Cunneen's ``(1 + c_s²)/2``
    for non-exponential service: the approximation the predictor uses; 1 = exact M/M/c+G).
    """

    p_wait: float
    p_abandon: float
    breaks_s: np.ndarray
    """Segment starts of e (s), ascending from 0; the last segment runs to ∞."""
    slopes: np.ndarray
    """e's slope on each segment (per s; the last one < 0)."""
    log_levels: np.ndarray
    """e at each segment start, less a common constant (log scale)."""
    tail_mass: np.ndarray
    """P(V > breaks_s[i])."""

    norm: float
    """The density's factor: V's density on segment i is ``norm·exp(log_levels[i] + slopes[i]·(x − breaks_s[i]))``."""

    def survival(self, x_s: np.ndarray | float) -> np.ndarray:
        """P(V > x) at each x ≥ 0 (s)."""
        x = np.maximum(np.atleast_1d(np.asarray(x_s, dtype=np.float64)), 0.0)
        i = np.clip(np.searchsorted(self.breaks_s, x, side="right") - 1, 0, len(self.breaks_s) - 1)
        inside = _segment_mass(self.log_levels[i], self.slopes[i], x - self.breaks_s[i])
        return np.clip(self.tail_mass[i] - self.norm * inside, 0.0, 1.0)

    @property
    def mean_wait_s(self) -> float:
        """E[V] (s): ∫ x·(V's density) dx."""
        widths = _widths(self.breaks_s)
        return float(self.norm * np.sum(_segment_first_moment(self.log_levels, self.slopes, widths, self.breaks_s)))

    def quantiles_s(self, probs: np.ndarray) -> np.ndarray:
        """V's quantiles at ``probs`` (0 below 1 − p_wait), by bisection on the survival."""
        # Every quantile bisected at once (element by element the same steps as one at a time).
        target = 1.0 - np.asarray(probs, dtype=np.float64)
        todo = target < self.p_wait
        lo, hi = np.zeros(len(target)), np.ones(len(target))
        grow = todo & (self.survival(hi) > target)
        while grow.any():
            hi = np.where(grow, hi * 2.0, hi)
            grow &= self.survival(hi) > target
        for _ in range(60):
            mid = (lo + hi) / 2
            above = self.survival(mid) > target
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        return np.where(todo, (lo + hi) / 2, 0.0)


def _widths(breaks: np.ndarray) -> np.ndarray:
    return np.append(np.diff(breaks), np.inf)


def _segment_mass(log_start: np.ndarray, slope: np.ndarray, width: np.ndarray) -> np.ndarray:
    """∫₀^w exp(l + r·u) du for each segment (the last, infinite one needs r < 0)."""
    log_start, slope, width = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (log_start, slope, width)))
    finite = np.isfinite(width)
    w = np.where(finite, width, 0.0)
    flat = np.abs(slope) < 1e-12
    r = np.where(flat, 1.0, slope)
    with np.errstate(over="ignore", invalid="ignore"):
        rising = (np.exp(log_start + r * w) - np.exp(log_start)) / r  # no expm1 overflow times a tiny exp
        falling = np.exp(log_start) * np.expm1(r * w) / r
        bounded = np.where(flat, np.exp(log_start) * w, np.where(r > 0, rising, falling))
        endless = np.exp(log_start) / -r
    return np.where(width == 0, 0.0, np.where(finite, bounded, endless))


def _segment_first_moment(log_start: np.ndarray, slope: np.ndarray, width: np.ndarray, start: np.ndarray) -> np.ndarray:
    """∫ x·exp(e(x)) dx over each segment, e linear from ``start`` (E[V]'s parts)."""
    flat = np.abs(slope) < 1e-12
    endless = ~np.isfinite(width)
    r = np.where(flat, 1.0, slope)
    w = np.where(endless, 0.0, width)
    with np.errstate(over="ignore", invalid="ignore"):
        grown = np.exp(r * w)
        bounded = ((start + w) * grown / r - start / r - (grown - 1) / r**2) * np.exp(log_start)
        open_ended = (-start / r + 1 / r**2) * np.exp(log_start)  # ∫₀^∞ (s + u)·e^{ru} du, r < 0
        level = np.exp(log_start) * (start * w + w * w / 2)
    out = np.where(endless, open_ended, np.where(flat, level, bounded))
    return np.where(width == 0, 0.0, out)


def impatient_queue(
    servers: int,
    lam: float,
    mu: float,
    patience_s: np.ndarray,
    patience_probs: np.ndarray,
    scale: float = 1.0,
) -> ImpatientQueue | None:
    """The M/M/c+G steady state (:class:`ImpatientQueue`) with arrival rate ``lam``,
    service rate ``mu`` per server (per s) and a discrete patience distribution
    (``patience_s`` may hold ``inf``: customers who never leave); None when the
    never-leaving customers alone saturate the servers (no steady state)."""
    tau = np.asarray(patience_s, dtype=np.float64)
    prob = np.asarray(patience_probs, dtype=np.float64)
    prob = prob / prob.sum()
    patient = float(prob[~np.isfinite(tau)].sum())
    if lam * patient >= servers * mu * (1 - 1e-12):
        return None
    finite = np.isfinite(tau)
    cuts, at = np.unique(np.maximum(tau[finite], 0.0), return_inverse=True)
    drop = np.bincount(at, weights=prob[finite], minlength=len(cuts)) if cuts.size else np.zeros(0)
    immediate = float(drop[0]) if cuts.size and cuts[0] == 0.0 else 0.0  # patience 0: leave if they must wait
    if cuts.size and cuts[0] == 0.0:
        cuts, drop = cuts[1:], drop[1:]
    breaks = np.concatenate([[0.0], cuts])
    staying = 1.0 - immediate - np.concatenate([[0.0], np.cumsum(drop)])  # Ḡ on each segment
    slopes_exp = lam * np.clip(staying, 0.0, 1.0) - servers * mu
    logs_exp = np.concatenate([[0.0], np.cumsum(slopes_exp[:-1] * np.diff(breaks))])
    top = float(logs_exp.max())
    log_j = math.log(float(np.sum(_segment_mass(logs_exp - top, slopes_exp, _widths(breaks))))) + top
    a = lam / mu
    log_term = (servers - 1) * math.log(a) - math.lgamma(servers) if a > 0 else (0.0 if servers == 1 else -math.inf)
    log_e = np.logaddexp.reduce([j * math.log(a) - math.lgamma(j + 1) for j in range(servers)]) if a > 0 else 0.0
    log_wait = math.log(lam) + log_j + log_term if lam > 0 else -math.inf
    p_wait = float(math.exp(log_wait - np.logaddexp(log_e, log_wait))) if np.isfinite(log_wait) else 0.0
    # The waiting part's shape: e's slopes divided by ``scale`` (the same patience breaks).
    slopes_k = slopes_exp / scale
    logs_k = np.concatenate([[0.0], np.cumsum(slopes_k[:-1] * np.diff(breaks))])
    logs_k -= logs_k.max()
    masses = _segment_mass(logs_k, slopes_k, _widths(breaks))
    total = float(masses.sum())
    norm = p_wait / total if total > 0 else 0.0
    tail = p_wait - norm * np.concatenate([[0.0], np.cumsum(masses[:-1])])
    q = ImpatientQueue(p_wait, 0.0, breaks, slopes_k, logs_k, np.clip(tail, 0.0, 1.0), norm)
    # a customer of patience τ leaves iff V > τ (τ = 0: iff V > 0)
    p_ab = immediate * p_wait + (float(drop @ q.survival(cuts)) if cuts.size else 0.0)
    return ImpatientQueue(p_wait, p_ab, breaks, slopes_k, logs_k, q.tail_mass, norm)
