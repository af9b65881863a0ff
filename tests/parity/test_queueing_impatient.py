"""The M/M/c+G queue (queueing.impatient_queue) against closed forms, a birth–death chain
and an exact FIFO recursion."""

from __future__ import annotations

import heapq
import math

import numpy as np
import pytest
from oracles import erlang_a, withdrawal_chain

from streamrag.simulator.predict.queueing import erlang_c, erlang_c_wait_s, impatient_queue

ALWAYS = (np.array([np.inf]), np.array([1.0]))


def exponential_patience(theta: float, n: int = 20_000) -> tuple[np.ndarray, np.ndarray]:
    u = (np.arange(n) + 0.5) / n
    return -np.log1p(-u) / theta, np.full(n, 1.0 / n)


def erlang_b(servers: int, offered: float) -> float:
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    return b


@pytest.mark.parametrize(("c", "lam", "mu", "theta"), [(1, 0.9, 1.0, 0.3), (4, 3.8, 1.0, 0.5), (10, 12.0, 1.0, 2.0)])
def test_erlang_a_closed_form_matches_its_birth_death_chain(c, lam, mu, theta) -> None:
    p_wait, p_ab = erlang_a(c, lam, mu, theta)
    chain_wait, chain_ab = withdrawal_chain(c, lam, mu, theta)
    assert p_wait == pytest.approx(chain_wait, rel=1e-9) and p_ab == pytest.approx(chain_ab, rel=1e-9)
    assert 0 < p_ab < p_wait < 1


@pytest.mark.parametrize(("c", "lam", "theta"), [(1, 0.9, 0.3), (4, 3.8, 0.5), (4, 5.0, 1.0)])
def test_exponential_patience_is_erlang_a(c, lam, theta) -> None:
    # an overloaded case (λ > cμ) included: impatience alone keeps it stable
    q = impatient_queue(c, lam, 1.0, *exponential_patience(theta))
    p_wait, p_ab = erlang_a(c, lam, 1.0, theta)
    assert q is not None
    assert q.p_wait == pytest.approx(p_wait, rel=2e-3) and q.p_abandon == pytest.approx(p_ab, rel=2e-3)


def test_erlang_a_agrees_with_a_closed_form_value() -> None:
    # M/M/1+M with λ = μ = θ = 1: the death rate in state k is μ + (k − 1)θ = k, so the
    # chain is Poisson(1): P(wait) = P(K ≥ 1) = 1 − e⁻¹ and
    # P(abandon) = θ·E[(K − 1)⁺]/λ = E[K] − P(K ≥ 1) = e⁻¹.
    p_wait, p_ab = erlang_a(1, 1.0, 1.0, 1.0)
    assert p_wait == pytest.approx(1 - math.exp(-1), rel=1e-10)
    assert p_ab == pytest.approx(math.exp(-1), rel=1e-10)


@pytest.mark.parametrize(("c", "lam"), [(1, 0.7), (4, 3.0), (8, 7.5)])
def test_infinite_patience_is_erlang_c(c, lam) -> None:
    q = impatient_queue(c, lam, 1.0, *ALWAYS)
    assert q is not None and q.p_abandon == 0.0
    assert q.p_wait == pytest.approx(erlang_c(c, lam), rel=1e-12)
    assert q.mean_wait_s == pytest.approx(erlang_c_wait_s(c, lam, 1.0), rel=1e-10)
    x = np.array([0.0, 0.3, 2.0])
    assert q.survival(x) == pytest.approx(erlang_c(c, lam) * np.exp(-(c - lam) * x), rel=1e-10)
    stretched = impatient_queue(c, lam, 1.0, *ALWAYS, scale=0.5)  # M/D/c's Allen–Cunneen factor
    assert stretched is not None and stretched.p_wait == pytest.approx(q.p_wait)
    assert stretched.mean_wait_s == pytest.approx(0.5 * q.mean_wait_s, rel=1e-10)


def test_zero_patience_is_the_erlang_loss_system() -> None:
    # Everyone who would wait leaves at once: M/M/c/c, P(wait) = P(abandon) = Erlang B.
    q = impatient_queue(4, 3.0, 1.0, np.array([0.0]), np.array([1.0]))
    assert q is not None
    assert q.p_wait == pytest.approx(erlang_b(4, 3.0), rel=1e-9)
    assert q.p_abandon == pytest.approx(erlang_b(4, 3.0), rel=1e-9)


def test_saturation_by_the_patient_customers_has_no_steady_state() -> None:
    assert impatient_queue(2, 2.5, 1.0, np.array([1.0, np.inf]), np.array([0.2, 0.8])) is None
    assert impatient_queue(2, 2.5, 1.0, np.array([1.0, np.inf]), np.array([0.3, 0.7])) is not None


def test_longer_patience_moves_monotonically_toward_erlang_c() -> None:
    waits, leaves = [], []
    for d in (0.0, 0.1, 0.5, 2.0, 10.0, 60.0):
        q = impatient_queue(4, 3.6, 1.0, np.array([d]), np.array([1.0]))
        assert q is not None
        waits.append(q.p_wait)
        leaves.append(q.p_abandon)
    assert waits == sorted(waits) and leaves == sorted(leaves, reverse=True)
    assert waits[-1] == pytest.approx(erlang_c(4, 3.6), rel=1e-6) and leaves[-1] < 1e-6


def fifo_with_patience(c: int, lam: float, mu: float, patience: np.ndarray, n: int, seed: int) -> tuple[float, float, float]:
    """Exact FIFO M/M/c+G by recursion: a customer's virtual wait is the earliest time a
    server frees from the customers served before it; it is served iff that is ≤ its
    patience. Returns (P(wait), P(abandon), E[V])."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1 / lam, n))
    services = rng.exponential(1 / mu, n)
    free = [0.0] * c
    waited = left = 0
    total_v = 0.0
    for t, s, tau in zip(arrivals, services, rng.choice(patience, n), strict=True):
        v = max(0.0, free[0] - t)
        total_v += v
        waited += v > 0
        if v > tau:
            left += 1
            continue
        heapq.heapreplace(free, t + v + s)
    return waited / n, left / n, total_v / n


@pytest.mark.parametrize(("c", "lam", "d"), [(1, 0.95, 1.0), (4, 4.4, 0.5)])
def test_deterministic_patience_against_an_exact_fifo_recursion(c, lam, d) -> None:
    q = impatient_queue(c, lam, 1.0, np.array([d]), np.array([1.0]))
    assert q is not None
    runs = np.array([fifo_with_patience(c, lam, 1.0, np.array([d]), 60_000, seed) for seed in range(4)])
    mean, half = runs.mean(axis=0), 4 * runs.std(axis=0, ddof=1) / 2 + 2e-3  # 4 s.e. (4 runs) + burn-in slack
    assert abs(q.p_wait - mean[0]) < half[0]
    assert abs(q.p_abandon - mean[1]) < half[1]
    assert abs(q.mean_wait_s - mean[2]) < half[2] + 0.01 * mean[2]


def test_a_patience_mixture_against_the_recursion() -> None:
    # the shape the predictor feeds it: some never leave, some leave at once, some later
    tau = np.array([0.0, 0.4, 1.5, np.inf])
    probs = np.array([0.2, 0.2, 0.2, 0.4])
    q = impatient_queue(4, 5.0, 1.0, tau, probs)
    assert q is not None
    pool = np.repeat(tau, (probs * 10).astype(int))
    runs = np.array([fifo_with_patience(4, 5.0, 1.0, pool, 60_000, seed) for seed in range(4)])
    mean, half = runs.mean(axis=0), 4 * runs.std(axis=0, ddof=1) / 2 + 2e-3
    assert abs(q.p_wait - mean[0]) < half[0] and abs(q.p_abandon - mean[1]) < half[1]
    assert q.quantiles_s(np.array([0.999]))[0] > 0 and q.survival(q.quantiles_s(np.array([0.9])))[0] == pytest.approx(
        0.1, abs=1e-6
    )
