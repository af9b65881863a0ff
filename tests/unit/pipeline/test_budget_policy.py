"""The ``budget`` policy: exact decisions on hand-built observations, the cap, determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from streamrag.engine.resources import LoadView
from streamrag.pipeline.budget import BudgetPolicy, BudgetPolicyConfig, next_level

S = 1_000_000
IDLE = LoadView(4, 0, 0)


class _Clock:
    """Only what the controller reads: the time, set by the test."""

    def __init__(self) -> None:
        self.t_us = 0

    def now_us(self) -> int:
        return self.t_us


def _policy(**fields: float) -> tuple[BudgetPolicy, _Clock]:
    settings = {
        "budget_ms": 1000.0,
        "period_s": 10.0,
        "window_s": 10.0,
        "min_samples": 3,
        "levels": 4,
        "step_up": 2,
        "headroom": 0.1,
        "pressure_max": 2.0,
        "words_per_level": 1.0,
        "max_extra_calls": 1.0,
        "max_credit": 5.0,
        **fields,
    }
    clock = _Clock()
    return BudgetPolicyConfig.model_validate(settings).build(clock), clock  # type: ignore[arg-type]


def _answers(policy: BudgetPolicy, clock: _Clock, at_s: float, *response_ms: int) -> None:
    clock.t_us = round(at_s * S)
    for ms in response_ms:
        policy.session_answered(ms * 1000, 0, 0)


def test_the_controller_makes_exactly_the_documented_decisions() -> None:
    policy, clock = _policy()
    for _ in range(10):
        policy.session_started()
    assert policy.credit == 5.0  # 10 sessions x 1 credit, banked up to 5
    _answers(policy, clock, 1, 1200, 1200, 1200)  # over budget
    clock.t_us = 10 * S
    # The first event at 10 s applies the update due: q = 1200 > 1000, two levels up.
    # Level 2: pressure bound 2·(1 − 2/4) = 1.0, fires need ⌈1 + 1·2⌉ = 3 words.
    assert policy.refuse(2, IDLE) == "budget"  # too few words since the last fire
    assert (policy.level, policy.pressure_bound(), policy.min_words()) == (2, 1.0, 3)
    assert policy.refuse(3, LoadView(4, 3, 1)) == "budget"  # pressure (3 + 1)/4 = 1.0
    assert policy.refuse(3, LoadView(4, 3, 0)) is None  # pressure 0.75 < 1.0
    assert policy.credit == 4.0
    _answers(policy, clock, 15, 950, 950, 950)  # in (0.9·B, B]: one level up
    _answers(policy, clock, 25, 700, 700, 700)  # below 0.8·B: one level down
    _answers(policy, clock, 35, 850, 850, 850)  # in [0.8·B, 0.9·B]: hold
    clock.t_us = 60 * S
    policy.session_answered(100_000, 0, 0)  # at the 60 s update: counts from the next one on
    _answers(policy, clock, 61, 100, 100)
    clock.t_us = 70 * S
    policy.refuse(9, IDLE)
    assert policy.updates == [
        (10 * S, 1200.0, 2),
        (20 * S, 950.0, 3),
        (30 * S, 700.0, 2),
        (40 * S, 850.0, 2),
        (50 * S, None, 2),  # nobody answered in [40 s, 50 s): fewer than min_samples, hold
        (60 * S, None, 2),
        (70 * S, 100.0, 1),  # the three answers of [60 s, 70 s), the one at 60 s included
    ]


def test_the_quantile_is_numpys_linear_one_over_the_window() -> None:
    policy, clock = _policy(quantile=0.9, window_s=20.0, min_samples=1)
    _answers(policy, clock, 1, *range(100, 1100, 100))  # out of the window at 30 s
    _answers(policy, clock, 11, 400, 500, 600, 700, 2000)
    clock.t_us = 30 * S
    policy.refuse(1, IDLE)
    read = [q for _, q, _ in policy.updates]
    assert read == [
        float(np.quantile(np.arange(100, 1100, 100), 0.9)),
        float(np.quantile([100 * k for k in range(1, 11)] + [400, 500, 600, 700, 2000], 0.9)),
        float(np.quantile([400, 500, 600, 700, 2000], 0.9)),
    ]


def test_it_tightens_to_silence_over_budget_and_relaxes_one_level_per_update_below() -> None:
    policy, clock = _policy(max_credit=100.0)
    for _ in range(100):
        policy.session_started()
    levels = []
    for k in range(6):  # over budget every period
        _answers(policy, clock, 10 * k + 1, 5000, 5000, 5000)
        clock.t_us = (10 * k + 10) * S
        policy.refuse(99, IDLE)
        levels.append(policy.level)
    assert levels == [2, 4, 4, 4, 4, 4]
    assert policy.pressure_bound() == 0.0
    assert policy.refuse(99, LoadView(4, 0, 0)) == "budget"  # at the top level nothing fires
    for k in range(6, 12):  # well below budget
        _answers(policy, clock, 10 * k + 1, 10, 10, 10)
        clock.t_us = (10 * k + 10) * S
        policy.refuse(1, IDLE)
        levels.append(policy.level)
    assert levels[6:] == [3, 2, 1, 0, 0, 0]
    assert policy.refuse(1, LoadView(4, 4, 3)) is None  # level 0: pressure 1.75 < 2.0


def test_an_answered_session_gets_back_the_fires_that_cost_no_extra_call() -> None:
    policy, _ = _policy(max_credit=10.0)
    policy.session_started()
    policy.session_started()
    assert [policy.refuse(3, IDLE) for _ in range(3)] == [None, None, "spend"]
    # The session fired 2 speculative calls, one was used: calls fired 2, extra calls 1.
    policy.session_answered(1_000_000, 2, 1)
    assert policy.credit == 1.0
    assert policy.refuse(3, IDLE) is None
    policy.session_answered(1_000_000, 0, 0)  # no speculation: the fallback only
    assert policy.credit == 0.0


def test_an_unlimited_tool_has_no_pressure() -> None:
    policy, _ = _policy()
    policy.session_started()
    assert policy.refuse(1, LoadView(None, 0, 0)) is None


@pytest.mark.parametrize("cap", [0.0, 0.3, 1.0, 2.5])
def test_fires_let_through_never_exceed_the_cap_times_sessions_started(cap: float) -> None:
    policy, clock = _policy(max_extra_calls=cap, max_credit=max(1.0, 3 * cap))
    rng = np.random.default_rng(7)
    started = allowed = 0
    for step in range(5000):
        clock.t_us = step * 10_000
        if rng.random() < 0.25:
            policy.session_started()
            started += 1
        else:
            load = LoadView(4, int(rng.integers(0, 5)), int(rng.integers(0, 3)))
            reason = policy.refuse(int(rng.integers(1, 10)), load)
            allowed += reason is None
            assert reason in (None, "budget", "spend")
        assert allowed <= cap * started + 1e-9
    if cap >= 1:
        assert allowed > 0.5 * cap * started  # the ledger binds, it does not starve


def test_next_level_is_the_table() -> None:
    c = BudgetPolicyConfig(budget_ms=1000, levels=8, step_up=3, headroom=0.1)
    assert [next_level(4, q, c) for q in (1000.1, 1000.0, 900.1, 900.0, 800.0, 799.9)] == [7, 5, 5, 4, 4, 3]
    assert next_level(7, 5000, c) == 8
    assert next_level(0, 0, c) == 0


def test_config_errors() -> None:
    with pytest.raises(ValidationError, match="budget_ms"):
        BudgetPolicyConfig.model_validate({"kind": "budget"})
    with pytest.raises(ValidationError, match="max_credit must be at least max_extra_calls"):
        BudgetPolicyConfig(budget_ms=1000, max_extra_calls=3, max_credit=2)


def test_a_budget_load_run_is_deterministic_and_holds_its_cap(tmp_path: Path) -> None:
    from _simhelpers import small_table

    from streamrag.analysis.table import write_table
    from streamrag.cli import main

    table = tmp_path / "t.csv"
    write_table(small_table(30, seed=2), table)
    cap = 0.5
    args = [
        "simulate", "--table", str(table), "--scenario", "load",
        "--set", "policy.kind=budget", "--set", "policy.budget_ms=3000", "--set", f"policy.max_extra_calls={cap}",
        "--set", "policy.period_s=5", "--set", "policy.window_s=20", "--set", "policy.min_samples=5",
        "--set", "load.arrivals.offered_load=0.6", "--set", "load.arrivals.n_sessions=300",
        "--set", "load.warmup_s=0", "--set", "load.reference_sessions=0",
    ]  # fmt: skip
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        assert main([*args, "--out", str(out), "-q"]) == 0
    for name in ("sessions.csv", "summary.json", "trace.jsonl"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    import csv

    with (outs[0] / "sessions.csv").open(encoding="utf-8") as fh:
        fired = np.array([int(row["calls_fired"]) for row in csv.DictReader(fh)])
    assert (fired - 1).mean() <= cap
    from streamrag.engine.trace_events import TRACE_EVENT

    skips = [
        TRACE_EVENT.validate_json(line)
        for line in (outs[0] / "trace.jsonl").read_text(encoding="utf-8").splitlines()
        if '"kind":"skip"' in line
    ]
    assert {e.reason for e in skips} & {"budget", "spend"}  # type: ignore[union-attr]


def test_budget_windows_cut_sessions_by_arrival_and_judge_each_window() -> None:
    from types import SimpleNamespace

    from streamrag.simulator.load.windows import budget_summary, budget_windows

    # the columns a system's measures give (SessionMeasures reads them from its spooled table)
    arrival_us = np.array([0, 5 * S, 9 * S, 10 * S, 12 * S, 31 * S], dtype=np.int64)
    s = SimpleNamespace(
        n=6,
        arrival_us=arrival_us,
        answer_us=np.array([1000_000, 3000_000, 2000_000, 5000_000, -1, 500_000], dtype=np.int64),  # session 4 failed
        fired=np.array([1, 3, 2, 4, 2, 1], dtype=np.int64),
    )
    b = SimpleNamespace(
        n=6,
        arrival_us=arrival_us,
        answer_us=np.array([2000_000, 2000_000, 2000_000, 6000_000, 4000_000, 4000_000], dtype=np.int64),
        fired=np.ones(6, dtype=np.int64),
    )
    rows = budget_windows(s, b, window_s=10, budget_ms=2500, quantile=0.5)  # type: ignore[arg-type]
    assert [(w.start_s, w.n, w.quantile_ms, w.held, w.failed) for w in rows] == [
        (0.0, 3, 2000.0, True, 0),
        (10.0, 2, 5000.0, False, 1),
        (20.0, 0, None, None, 0),  # an empty window is not judged
        (30.0, 1, 500.0, True, 0),
    ]
    assert [w.extra_calls for w in rows] == [1.0, 2.0, None, 0.0]
    assert rows[0].saved_ms == (1000 + -1000 + 0) / 3
    assert rows[1].baseline_quantile_ms == 5000.0
    summary = budget_summary(rows, s, b)  # type: ignore[arg-type]
    assert summary == {
        "windows": 3,
        "windows_held": 2,
        "share_held": 2 / 3,
        "extra_calls_per_session": pytest.approx(7 / 6, rel=1e-12),
        "saved_ms_mean": (1000 - 1000 + 0 + 1000 + 3500) / 5,
        "failed": 1,
    }
