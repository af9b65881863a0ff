"""Stabilization metrics on hand-worked cases and their ranges (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from streamrag.analysis import metrics as m


def test_t_sc_and_volatility_by_hand() -> None:
    top1 = [73, 26, 26, 26, 24, 41, 41, 41, 41, 41, 41]
    assert m.t_sc(top1) == 6 and m.volatility(top1) == 0
    # final top-1 (2) first reached at t=2, then left (t=3) and regained (t=4): 2 changes
    assert m.t_sc([1, 2, 1, 2, 2]) == 4 and m.volatility([1, 2, 1, 2, 2]) == 2
    assert m.t_sc([5]) == 1 and m.volatility([5]) == 0


def test_t_suf_first_hit_and_undefined() -> None:
    topk = np.array([[0, 1, 2], [3, 1, 2], [0, 4, 5]])
    assert m.t_suf(topk, {3}) == 2
    assert m.t_suf(topk, {4, 9}) == 3
    assert m.t_suf(topk, {9}) is None  # gold never retrieved
    assert m.t_suf(topk, set()) is None  # not groundable
    assert m.phi(None, 3) is None and m.phi(2, 4) == 0.5


def test_H_family_by_hand() -> None:
    # n=11, t*=1, δ=3 w/s: residual 10/3 s = 3333.3 ms
    assert m.H(11, 1, 600, 3) == 600.0
    assert m.H(11, 10, 600, 3) == 1000 / 3
    assert m.H(11, 11, 600, 3) == 0.0
    assert m.H_G(11, 10, 100, 3, G_ms=200) == 300.0  # G + L < residual
    assert m.H_prime(11, 10, 600, 3, G_ms=590) == 2 * 1000 / 3
    assert m.streamable(480.0, 600, 0.8) and not m.streamable(479.9, 600, 0.8)
    assert m.t_star(5, None) == 5 and m.t_star(5, 2) == 2
    assert m.gold_density(0, 0) is None and m.gold_density(3, 60) == 0.05


@given(st.lists(st.integers(0, 4), min_size=1, max_size=30))
def test_ranges(top1: list[int]) -> None:
    n = len(top1)
    t = m.t_sc(top1)
    assert 1 <= t <= n
    assert all(top1[s] == top1[-1] for s in range(t - 1, n))
    assert t == 1 or top1[t - 2] != top1[-1]
    assert 0 <= m.volatility(top1) <= n - 1


@given(
    st.integers(1, 40).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))),
    st.floats(1, 5000),
    st.floats(0.5, 6),
    st.floats(0, 2000),
)
def test_bounds_are_ordered(nt: tuple[int, int], L: float, delta: float, G: float) -> None:
    n, t = nt
    h, hg, hp = m.H(n, t, L, delta), m.H_G(n, t, L, delta, G), m.H_prime(n, t, L, delta, G)
    assert 0 <= h <= L
    assert h <= hg <= G + L
    assert hg <= hp + 1e-9  # min(G+L, r) ≤ min(L, r) + min(G, r)
    assert np.isclose(m.H_array(np.array([n]), np.array([t]), L, delta)[0], h)
