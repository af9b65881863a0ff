"""The offline optimum: equal to brute force over every schedule, and above every policy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _simhelpers import full_q
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles import brute_force

from streamrag.base.config.overrides import parse_override
from streamrag.engine.loop import run_virtual
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.predict.optimum import candidates, optimum_chunk, score
from streamrag.simulator.scenario import ResolvedScenario, scenario_from_dict
from streamrag.simulator.simulate import question_output, replay_question


def _question(rng: np.random.Generator, qid: str, n: int) -> SimQuestion:
    """Random per-prefix evidence: top-3 of 6 chunks, scores around the heuristic's 2.0
    threshold and coverages around its 0.4, so results are accepted, rejected, and
    high-scoring rejected ones block accepted ones (the heuristic's mis-fire)."""
    topk = [[int(c) for c in rng.choice(6, 3, replace=False)] for _ in range(n)]
    scores = {c: float(rng.uniform(0.5, 4.0)) for c in range(6)}
    coverage = {c: float(rng.uniform(0.0, 1.0)) for c in range(6)}
    return full_q(qid, topk, gold={int(rng.integers(0, 6))}, scores=scores, coverage=coverage)


def _scenario(rng: np.random.Generator, variant: str) -> ResolvedScenario:
    raw: dict[str, Any] = {
        "name": "t",
        "seed": int(rng.integers(0, 1000)),
        "input": {"kind": "uniform", "delta_wps": float(rng.choice([2.0, 3.0, 4.0]))},
        "trigger": {"kind": "none"},
        "pipeline": {"max_threads": int(rng.choice([1, 2, 4]))},
        "reflector": {"kind": "heuristic"},
        "latency": {"profile": "arora2025"},  # drawn per call: the schedule meets its own draws
    }
    extra: list[str] = []
    if variant == "old_rules":
        extra = ["pipeline.capped_fire=drop", "pipeline.turn_end_order=calls_first", "reflector.rejudge=newest",
                 "reflector.fallback=reuse"]  # fmt: skip
    elif variant == "topk_match":
        raw["reflector"] = {"kind": "topk_match", "check_ms": 150.0}
    elif variant == "gold":
        raw["reflector"] = {"kind": "gold"}
    elif variant == "jitter":
        raw["input"] = {"kind": "jittered", "delta_wps": 3.0, "cv": 0.5, "end_of_turn_ms": 300.0}
        raw["latency"] = {"profile": "paper-rq3", "L_ms": float(rng.choice([300, 1500]))}
    return scenario_from_dict(raw, [[parse_override(o) for o in extra]])


@pytest.mark.parametrize("variant", ["paper", "old_rules", "topk_match", "gold", "jitter"])
def test_the_optimum_equals_brute_force_over_every_schedule(variant: str) -> None:
    rng = np.random.default_rng(["paper", "old_rules", "topk_match", "gold", "jitter"].index(variant))
    for i in range(8):
        q = _question(rng, f"q{i}", int(rng.integers(1, 7)))
        rs = _scenario(rng, variant)
        opt = optimum_chunk([q], rs)[0]
        for lam in (0.0, 400.0):
            best, schedule = brute_force(q, rs, lam)
            assert best == opt.saved_ms, (variant, i, lam, sorted(schedule), opt)
        # The optimum makes at most one call; a single call is only ever on an accepted prefix.
        assert opt.fire_t is None or opt.fire_t in candidates(q, rs)


def test_brute_force_refuses_long_questions() -> None:
    q = _question(np.random.default_rng(0), "long", 12)
    with pytest.raises(ValueError, match="2\\^n"):
        brute_force(q, _scenario(np.random.default_rng(0), "paper"), 0.0)


_POLICIES = st.one_of(
    st.builds(lambda m: {"kind": "interval", "words": m}, st.integers(1, 5)),
    st.builds(lambda s: {"kind": "interval", "seconds": s}, st.sampled_from([0.2, 0.5, 1.0])),
    st.builds(lambda s: {"kind": "replace", "seconds": s}, st.sampled_from([0.2, 0.5])),
    st.builds(lambda m: {"kind": "stable", "words": m}, st.integers(1, 3)),
    st.builds(lambda q: {"kind": "hedge", "quantile": q}, st.sampled_from([0.05, 0.25, 0.5])),
    # the shipped learned model (reads t and the top-1 stability of each prefix), single-fire and
    # re-arming: the optimum's schedule class is every schedule, so it bounds both
    st.builds(
        lambda tau, mode: {"kind": "learned", "model": "frontier", "tau": tau, "mode": mode},
        st.sampled_from([0.0, 0.3, 0.45, 0.6, 0.9]),
        st.sampled_from(["single", "rearm"]),
    ),
    st.just({"kind": "every_word"}),
    st.just({"kind": "oracle"}),
    st.just({"kind": "none"}),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    policy=_POLICIES,
    variant=st.sampled_from(["paper", "old_rules", "topk_match", "gold", "jitter"]),
    seed=st.integers(0, 10_000),
    lam=st.sampled_from([0.0, 100.0, 1000.0]),
)
def test_no_policy_scores_above_the_optimum_on_any_question(policy: dict[str, Any], variant: str, seed: int, lam: float) -> None:
    """Every policy's realized schedule, replayed as ``simulate`` replays it (word-driven
    or time-driven, killing or not), scores at most the optimum of its question at λ."""
    rng = np.random.default_rng(seed)
    questions = [_question(rng, f"p{i}", int(rng.integers(1, 13))) for i in range(6)]
    base = _scenario(rng, variant)
    raw = base.scenario.model_dump(mode="json")
    raw["trigger"] = policy
    rs = scenario_from_dict(raw)
    optima = optimum_chunk(questions, base)  # the optimum does not depend on the trigger

    async def main(clock: Any) -> list[Any]:
        return [question_output(q, await replay_question(clock, q, rs), rs).row for q in questions]

    for q, row, opt in zip(questions, run_virtual(main), optima, strict=True):
        assert score(row, lam) <= opt.saved_ms + 1e-9, (policy, variant, q.interaction_id, row, opt)


def _runs_question(rng: np.random.Generator, qid: str, n: int) -> SimQuestion:
    """As :func:`_question`, but top-1 runs: each prefix keeps the previous ranking with
    probability 0.8, so stability streaks grow and break (what the learned model reads)."""
    rows: list[list[int]] = []
    for _ in range(n):
        keep = rows and rng.random() < 0.8
        rows.append(list(rows[-1]) if keep else [int(c) for c in rng.choice(6, 3, replace=False)])
    scores = {c: float(rng.uniform(0.5, 4.0)) for c in range(6)}
    coverage = {c: float(rng.uniform(0.0, 1.0)) for c in range(6)}
    return full_q(qid, rows, gold={int(rng.integers(0, 6))}, scores=scores, coverage=coverage)


@pytest.mark.parametrize("mode", ["single", "rearm"])
def test_the_shipped_learned_trigger_never_scores_above_the_optimum(mode: str) -> None:
    """The frontier's ``learned`` policies (the shipped model, each τ of the grid) on random
    populations under every rule set: at most the optimum on every question and λ, and
    the schedules are not trivial (it fires; re-arming fires more than once somewhere)."""
    most_fires = 0
    for seed in range(4):
        rng = np.random.default_rng(100 + seed)
        questions = [_runs_question(rng, f"l{i}", int(rng.integers(1, 25))) for i in range(12)]
        variant = ["paper", "old_rules", "topk_match", "jitter"][seed]
        base = _scenario(rng, variant)
        optima = optimum_chunk(questions, base)
        for tau in (0.3, 0.45, 0.6, 0.75):
            raw = base.scenario.model_dump(mode="json")
            raw["trigger"] = {"kind": "learned", "model": "frontier", "tau": tau, "mode": mode}
            rs = scenario_from_dict(raw)

            async def main(clock: Any, rs: ResolvedScenario = rs, questions: list[SimQuestion] = questions) -> list[Any]:
                return [question_output(q, await replay_question(clock, q, rs), rs).row for q in questions]

            for q, row, opt in zip(questions, run_virtual(main), optima, strict=True):
                most_fires = max(most_fires, int(row.calls_fired))  # type: ignore[arg-type]
                for lam in (0.0, 100.0, 1000.0):
                    assert score(row, lam) <= opt.saved_ms + 1e-9, (mode, tau, variant, q.interaction_id, row, opt)
    assert most_fires >= (3 if mode == "rearm" else 2)  # a speculative call and the refire, or more
