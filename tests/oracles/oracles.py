"""Reference computations the tests check the package against, and only the tests use:
the slow, obviously right way of what the package computes fast."""

from __future__ import annotations

import itertools
import math

import numpy as np

from streamrag.engine.clock import Clock
from streamrag.engine.loop import run_virtual
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.predict.optimum import replay_schedule, score
from streamrag.simulator.replay.planning import plan_question
from streamrag.simulator.scenario import ResolvedScenario


def brute_force(q: SimQuestion, rs: ResolvedScenario, lam_ms: float, *, max_words: int = 10) -> tuple[float, frozenset[int]]:
    """The best score over **all** 2ⁿ schedules, each replayed through the arm (the
    reference the dominance search is checked against; n ≤ ``max_words``)."""
    if q.n_words > max_words:
        raise ValueError(f"brute_force: {q.n_words} words is more than max_words = {max_words} (2^n replays)")

    async def main(clock: Clock) -> tuple[float, frozenset[int]]:
        plan = plan_question(q, rs)
        best: tuple[float, frozenset[int]] | None = None
        for size in range(q.n_words + 1):
            for combo in itertools.combinations(range(1, q.n_words + 1), size):
                schedule = frozenset(combo)
                value = score(await replay_schedule(clock, plan, schedule, rs), lam_ms)
                if best is None or value > best[0]:
                    best = (value, schedule)
        assert best is not None  # the empty schedule is always tried
        return best

    return run_virtual(main)


def erlang_a(servers: int, lam: float, mu: float, theta: float) -> tuple[float, float]:
    """Erlang A (M/M/c+M, exponential patience of rate ``theta``): ``(P(wait), P(abandon))``
    by the closed form in Mandelbaum & Zeltyn's summary of M/M/n+G performance measures:
    with x = cμ/θ, y = λ/θ and Γ_low the lower incomplete gamma function,
    ``J = e^y·y^{−x}·Γ_low(x, y)/θ``, ``P(wait) = λJ·E₁⁻¹`` where
    ``E₁ = Σ_{j<c} aʲ/j!·(c−1)!/a^{c−1} + λJ``, and ``P(abandon) = (1 + (λ − cμ)·J)·P(wait)/(λJ)``."""
    from scipy.special import gammainc, gammaln

    x, y = servers * mu / theta, lam / theta
    log_j = y - x * math.log(y) + math.log(gammainc(x, y)) + gammaln(x) - math.log(theta)
    a = lam / mu
    log_e = np.logaddexp.reduce([j * math.log(a) - math.lgamma(j + 1) for j in range(servers)])
    log_term = (servers - 1) * math.log(a) - math.lgamma(servers)
    log_wait = math.log(lam) + log_j + log_term
    p_wait = math.exp(log_wait - np.logaddexp(log_e, log_wait))
    lam_j = math.exp(math.log(lam) + log_j)
    return p_wait, (1 + (lam - servers * mu) * math.exp(log_j)) * p_wait / lam_j


def withdrawal_chain(servers: int, lam: float, mu: float, theta: float, cap: int = 4000) -> tuple[float, float]:
    """Erlang A's ``(P(wait), P(abandon))`` from its birth–death chain — births λ, deaths
    ``min(k, c)·μ + max(k − c, 0)·θ`` in state k (truncated at ``cap``): the independent check
    of :func:`erlang_a` and :func:`impatient_queue`. An arrival waits when it finds k ≥ c
    (PASTA); abandonments happen at rate θ·E[queue], so ``P(abandon) = θ·E[queue]/λ``."""
    logs = [0.0]
    for k in range(1, cap):
        logs.append(logs[-1] + math.log(lam) - math.log(min(k, servers) * mu + max(k - servers, 0) * theta))
    p = np.exp(np.array(logs) - max(logs))
    p /= p.sum()
    states = np.arange(cap)
    return float(p[servers:].sum()), float(theta * (np.maximum(states - servers, 0) @ p) / lam)
