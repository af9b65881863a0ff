"""Who stops gaining under load (streamrag.simulator.predict.gaining): the batched sums
against a brute-force enumeration of every joint draw of the calls' latencies and waits."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from streamrag.simulator.predict.atoms import Atoms, add
from streamrag.simulator.predict.gaining import LineBatch
from streamrag.simulator.predict.saving import Timeline


def brute_force(line: Timeline, x: Atoms, vb: Atoms, vs: Atoms) -> float:
    """P(baseline − streaming answer latency ≤ 0), every joint draw enumerated: the
    baseline waits V_b then X; each speculative call j waits its own V_j and takes its own
    X_j, ready d_j before the turn end would have it, except the call on the full query,
    whose X is the baseline's; a mis-fire refires the full query (its X the baseline's, its
    wait V_f)."""
    n = len(line.fired_t)
    full = next((j for j, t in enumerate(line.fired_t) if t == line.n_words), None)
    pairs = list(zip(x.values_ms, x.probs, strict=True))
    waits = list(zip(vs.values_ms, vs.probs, strict=True))
    total = 0.0
    for (xb, pxb), (wb, pwb) in itertools.product(pairs, zip(vb.values_ms, vb.probs, strict=True)):
        baseline = xb + wb
        for draws in itertools.product(pairs, repeat=n):
            for own_waits in itertools.product(waits, repeat=n + 1):  # the last one: the refire's
                p = pxb * pwb * float(np.prod([d[1] for d in draws])) * float(np.prod([w[1] for w in own_waits]))
                ready = [
                    (xb if j == full and line.deciding[j] else draws[j][0]) + own_waits[j][0] - line.offsets_ms[j]
                    for j in range(n)
                ]
                if line.deciding.any():
                    streaming = max(line.check_ms, min(r for r, d in zip(ready, line.deciding, strict=True) if d))
                    total += p * (baseline <= streaming + 1e-9)
                else:
                    wait_all = max([line.check_ms, 0.0, *ready])
                    total += p * (baseline <= wait_all + xb + own_waits[n][0] + 1e-9)
    return total


def random_line(rng: np.random.Generator) -> Timeline:
    n_calls = int(rng.integers(1, 4))
    n_words = 12
    fired = sorted(rng.choice(np.arange(2, n_words + 1), size=n_calls, replace=False).tolist())
    held = np.array([t == n_words and rng.random() < 0.5 for t in fired])
    offsets = np.where(held, 0.0, np.round(rng.uniform(0, 2500, n_calls), 1) + 0.37)
    deciding = rng.random(n_calls) < 0.5
    return Timeline(tuple(fired), offsets, deciding, deciding.copy(), held, 4000.0, float(rng.choice([0.0, 151.3])), n_words)


def atoms(rng: np.random.Generator, k: int, scale: float, zero: bool = False) -> Atoms:
    values = np.sort(np.round(rng.uniform(0, scale, k), 1) + 0.13)
    if zero:
        values[0] = 0.0
    probs = rng.dirichlet(np.ones(k))
    return Atoms(values, probs)


@pytest.mark.parametrize("seed", range(6))
def test_every_kind_of_timeline_matches_the_enumeration_of_every_joint_draw(seed: int) -> None:
    rng = np.random.default_rng(seed)
    lines = [random_line(rng) for _ in range(8)]
    x, vb, vs = atoms(rng, 2, 3000.0), atoms(rng, 2, 1500.0, zero=True), atoms(rng, 2, 1500.0, zero=True)
    batch = LineBatch([*lines, *lines[:3]])  # repeated timelines are computed once
    assert batch.n == len({line.key for line in lines})
    got = batch.p_not_gaining(x, vb, vs, add(x, vs), add(x, vb))
    kinds = {int(i) for i in batch.others} | {int(i) for i in batch.last} | {int(i) for i in batch.misfire}
    assert kinds == set(range(batch.n))
    expected = [brute_force(line, x, vb, vs) for line in lines]
    for line, want in zip(lines, expected, strict=True):
        assert got[batch.inverse[lines.index(line)]] == pytest.approx(want, abs=1e-12)
    assert batch.share(got) == pytest.approx(np.mean([*expected, *expected[:3]]), abs=1e-12)


def test_the_three_kinds_are_each_exercised_by_the_random_timelines() -> None:
    seen = {"others": 0, "last": 0, "misfire": 0}
    for seed in range(6):
        rng = np.random.default_rng(seed)
        batch = LineBatch([random_line(rng) for _ in range(8)])
        for kind in seen:
            seen[kind] += len(getattr(batch, kind))
    assert all(count > 0 for count in seen.values()), seen
