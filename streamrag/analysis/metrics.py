"""Stabilization metrics: pure functions, one canonical name each (design §2).

Conventions: prefixes are 1-based (``t = 1 … n``, there is no t = 0); latencies are in
milliseconds, cadence ``delta_wps`` in words per second. A metric that is undefined for a
question returns ``None``, never 0.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Sequence
from typing import overload

import numpy as np


def t_sc(top1: Sequence[int]) -> int:
    """Self-consistency point: smallest t with ``top1(s) == top1(n)`` for every s ≥ t.

    ``top1[t-1]`` is the top-1 chunk id of prefix t. Always defined, ``1 ≤ t_sc ≤ n``.
    """
    n = len(top1)
    if n == 0:
        raise ValueError("t_sc needs at least one prefix")
    final = top1[-1]
    t = n
    while t > 1 and top1[t - 2] == final:
        t -= 1
    return t


def t_suf(topk: np.ndarray | Sequence[Sequence[int]], gold: Collection[int]) -> int | None:
    """Sufficiency point: smallest t such that a gold chunk is in ``topk(t)``.

    First hit; gold need not stay. ``None`` when there is no gold chunk or gold never
    enters the top-k of any prefix.
    """
    if not gold:
        return None
    for t_idx, row in enumerate(topk):
        if any(int(c) in gold for c in row):
            return t_idx + 1
    return None


def phi(t: int | None, n_words: int) -> float | None:
    """φ = t / n (``phi_sc`` for t_sc, ``phi_suf`` for t_suf); ``None`` when t is undefined."""
    if t is None:
        return None
    return t / n_words


def volatility(top1: Sequence[int]) -> int:
    """V: number of top-1 changes *after* ``top1(n)`` is first reached."""
    final = top1[-1]
    first = next(i for i, c in enumerate(top1) if c == final)
    return sum(1 for i in range(first + 1, len(top1)) if top1[i] != top1[i - 1])


def no_overlap(words: Sequence[Sequence[str]], vocabulary: Container[str]) -> bool:
    """No token of the query occurs in any chunk: every chunk scores 0 for every prefix.

    Such a query's top-1 is a tie-break (chunk 0) from the first word on, so t_sc = 1
    measures the tie-break, not an intent that settled. ``words`` are the query's tokens
    per word, ``vocabulary`` the lexical index (``token in index``). The table keeps t_sc
    as measured and sets ``no_overlap``; the statistics take t* = n for such questions,
    which makes them never streamable (:mod:`streamrag.analysis.stats.rq`, RQ2).
    """
    return not any(token in vocabulary for word in words for token in word)


def groundable(gold: Collection[int]) -> bool:
    """Some chunk contains a gold answer."""
    return len(gold) > 0


def retrieved_gold(t_suf_value: int | None) -> bool:
    """Groundable and gold in ``topk(t)`` for some t (the "favorable slice")."""
    return t_suf_value is not None


def gold_density(n_gold: int, n_passages: int) -> float | None:
    """Gold chunks / chunks; ``None`` for a question without chunks."""
    if n_passages == 0:
        return None
    return n_gold / n_passages


def t_star(t_sc_value: int, t_suf_value: int | None) -> int:
    """The stabilization point used by H: ``t_suf`` where defined, else ``t_sc``."""
    return t_suf_value if t_suf_value is not None else t_sc_value


def residual_ms(n_words: int, t_star_value: int, delta_wps: float) -> float:
    """Input still to come after t*: ``max(0, (n − t*)/δ) · 1000`` ms."""
    return max(0.0, (n_words - t_star_value) / delta_wps) * 1000.0


def H(n_words: int, t_star_value: int, L_ms: float, delta_wps: float) -> float:
    """Hideable latency bound ``H = min(L, max(0, (n − t*)/δ))`` in ms."""
    return min(float(L_ms), residual_ms(n_words, t_star_value, delta_wps))


def H_G(n_words: int, t_star_value: int, L_ms: float, delta_wps: float, G_ms: float) -> float:
    """Tighter bound with query generation: ``min(G + L, residual)`` in ms."""
    return min(float(G_ms) + float(L_ms), residual_ms(n_words, t_star_value, delta_wps))


def H_prime(n_words: int, t_star_value: int, L_ms: float, delta_wps: float, G_ms: float) -> float:
    """The anchor study's ``H' = min(L, r) + min(G, r)`` in ms (r = residual)."""
    r = residual_ms(n_words, t_star_value, delta_wps)
    return min(float(L_ms), r) + min(float(G_ms), r)


@overload
def streamable(H_ms: float, L_ms: float, theta: float) -> bool: ...


@overload
def streamable(H_ms: np.ndarray, L_ms: float, theta: float) -> np.ndarray: ...


def streamable(H_ms: float | np.ndarray, L_ms: float, theta: float) -> bool | np.ndarray:
    """Streamable at (L, δ, θ): ``H ≥ θ·L`` (elementwise, a boolean array, for an array of H)."""
    return H_ms >= theta * L_ms


def H_array(n_words: np.ndarray, t_star_values: np.ndarray, L_ms: float, delta_wps: float) -> np.ndarray:
    """Vectorized :func:`H` over questions (ms)."""
    residual = np.maximum(0.0, (n_words - t_star_values) / delta_wps) * 1000.0
    return np.minimum(float(L_ms), residual)
