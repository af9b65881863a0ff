"""Textbook queueing formulas: Erlang C and the Allen–Cunneen M/G/c approximation.

One copy of each, used by the predictor (:mod:`streamrag.simulator.predict_load`) and
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
