"""The closed-form replay against the event engine, its reference (issue 28).

Random questions and plans — random lengths, per-prefix evidence around the reflectors'
thresholds, latencies on the word grid so that completions, words, ticks and end of turn
tie — through the engine and both modes of the closed form (recording the trace, and
the rows alone without one), for every trigger kind and every pipeline rule variant:
identical trace bytes, identical rows, identical ``results.csv``.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from _simhelpers import full_q, small_table, table_q

from streamrag.analysis.table import write_table
from streamrag.cli import main
from streamrag.engine.endpoint import Break, EndOfTurn, EndpointConfig, EndpointTurn
from streamrag.engine.loop import run_virtual
from streamrag.engine.trace import Recorder, dump_events
from streamrag.engine.trace_events import TRACE_EVENT
from streamrag.pipeline.plan import QuestionPlan
from streamrag.pipeline.question import SimQuestion
from streamrag.pipeline.streaming import simulate_question
from streamrag.simulator.replay.closed import replay
from streamrag.simulator.replay.closed_form import CLOSED_FORM, ENGINE, engine_reason, replay_events
from streamrag.simulator.results import derive_result, tally_result
from streamrag.simulator.run_output import results_csv
from streamrag.simulator.scenario import ResolvedScenario, scenario_from_dict
from streamrag.simulator.simulate import closed_form_outputs, closed_form_trace, closed_form_traced, replay_of, simulate

U = 250_000
"""The grid (µs) words, ticks and most latencies fall on, so that they tie."""

TRIGGERS: list[dict[str, Any]] = [
    {"kind": "interval", "words": 1},
    {"kind": "interval", "words": 3},
    {"kind": "interval", "seconds": 0.25},
    {"kind": "interval", "seconds": 0.75},
    {"kind": "replace", "seconds": 0.5},
    {"kind": "stable", "words": 1},
    {"kind": "stable", "words": 2},
    {"kind": "every_word"},
    {"kind": "oracle"},
    {"kind": "none"},
    {"kind": "hedge", "lengths": {3: 1, 6: 2, 10: 1}},
]
NEEDS_RANKINGS = {"replace", "stable"}


MUTATING = [None, None, "never", "after_authorization", "deferral", "deferral", "speculative"]
"""A mutating tool's policies (None: read-only), drawn from their own stream."""


def _scenario(
    trigger: dict[str, Any], r: random.Random, evidence: bool, rank_r: random.Random, tool_r: random.Random | None = None
) -> ResolvedScenario:
    kinds = ["heuristic", "gold", "topk_match"] if evidence else ["heuristic", "gold"]
    reflector: dict[str, Any] = {
        "kind": r.choice(kinds),
        "rejudge": r.choice(["best_of_completed", "newest"]),
        "fallback": r.choice(["refire", "reuse"]),
    }
    if reflector["kind"] == "topk_match":
        reflector["check_ms"] = r.choice([0.0, 250.0, 100.0])
    if reflector["kind"] == "heuristic":
        reflector["coverage"] = r.choice(["distinct", "occurrences"])
    pipeline: dict[str, Any] = {
        "capped_fire": r.choice(["defer", "drop"]),
        "turn_end_order": r.choice(["reflector_first", "calls_first"]),
        "slot_release": r.choice(["after_words", "at_completion"]),
    }
    cap = r.choice([None, 1, 2, 4])
    if cap is not None:
        pipeline["max_threads"] = cap
    if trigger["kind"] in NEEDS_RANKINGS or trigger["kind"] == "learned":  # rankings that cost something
        pipeline["ranking"] = rank_r.choice(["free", "tool", "local"])
    raw = {
        "name": "closed",
        "trigger": trigger,
        "pipeline": pipeline,
        "reflector": reflector,
        "latency": {"profile": "paper-rq3", "G_ms": 250.0, "L_ms": 500.0, "F_ms": 250.0},
    }
    policy = None if tool_r is None else tool_r.choice(MUTATING)
    if policy is not None:
        raw["tool"] = {"effects": "mutating", "mutating_policy": policy}
    return scenario_from_dict(raw)


def _question(qid: str, r: random.Random, evidence: bool) -> SimQuestion:
    n = r.randint(1, 10)
    if not evidence:
        return table_q(qid, n, t_sc=r.randint(1, n), t_suf=r.choice([None, r.randint(1, n)]))
    chunks = range(4)
    topk = [r.sample(chunks, 2) for _ in range(n)]
    if r.random() < 0.5:  # long stable runs, so stable/replace/topk_match see repeats
        topk = [topk[0] if r.random() < 0.7 else row for row in topk]
    scores = {c: r.choice([1.0, 2.0, 2.0, 3.5]) for c in chunks}
    coverage = {c: r.choice([0.2, 0.4, 0.9]) for c in chunks}
    occurrences = {c: r.choice([0.3, 0.5]) for c in chunks}
    gold = {c for c in chunks if r.random() < 0.3}
    return full_q(qid, topk, gold=gold, scores=scores, coverage=coverage, occurrences=occurrences)


def _latency(r: random.Random) -> int:
    on_grid = r.choice([0, U, U, 2 * U, 3 * U, 6 * U])
    return on_grid if r.random() < 0.8 else on_grid + r.randint(1, U)


def _endpoint(words: list[int], start_us: int, g_us: tuple[int, ...], l_us: tuple[int, ...], f_us: int, ep_r: random.Random):
    """An endpointer's decision (half the plans): a confirmation at or after the start (an
    eager start, its tools held or not), false cut-offs and eager restarts at random pauses,
    priced."""
    if ep_r.random() < 0.5:
        return None
    breaks: list[list[Break]] = [[], []]
    for i in range(len(words) - 1):
        if ep_r.random() < 0.3:
            cut = words[i] + ep_r.choice([0, U // 2, U])
            breaks[ep_r.random() < 0.5].append(Break(i + 1, cut, cut + ep_r.choice([0, U, 4 * U, 20 * U])))
    confirm_us = start_us + ep_r.choice([0, U, 2 * U, 3 * U + 7])
    end = EndOfTurn(start_us, confirm_us, tuple(breaks[0]), tuple(breaks[1]))
    hold = confirm_us > start_us and ep_r.random() < 0.6
    config = EndpointConfig(kind="silence", silence_ms=(confirm_us + 1) / 1000, eager_ms=start_us / 1000, eager_tools=not hold)
    return EndpointTurn.priced(end, config, g_us, l_us, f_us)


def _plan(
    q: SimQuestion, r: random.Random, rs: ResolvedScenario, rank_r: random.Random, ep_r: random.Random | None = None
) -> QuestionPlan:
    words, at = [], 0
    for i in range(q.n_words):
        at += r.choice([U, U, 2 * U]) if i == 0 or r.random() > 0.1 else 0  # now and then two words at once
        words.append(at)
    n = q.n_words
    delay_us = r.choice([0, 0, U, 100_000])  # the turn's start: an endpointer's eager start, or its end
    g_us, l_us = tuple(_latency(r) for _ in range(n)), tuple(_latency(r) for _ in range(n))
    f_us = r.choice([0, U, 123_456])
    return QuestionPlan(
        question=q,
        word_us=tuple(words),
        end_of_turn_us=delay_us,
        g_us=g_us,
        l_us=l_us,
        f_us=f_us,
        rank_us=() if rs.arm_rules.ranking == "free" else tuple(_latency(rank_r) for _ in range(n)),
        endpoint=None if ep_r is None else _endpoint(words, delay_us, g_us, l_us, f_us, ep_r),
    )


def _engine_events(plan: QuestionPlan, rs: ResolvedScenario) -> list[dict[str, Any]]:
    q, sc = plan.question, rs.scenario

    async def main(clock):
        rec = Recorder(q.interaction_id, clock, clock.now_us(), validate=True)
        await simulate_question(clock, plan, sc.trigger.build(q), sc.reflector.build(q), rs.arm_rules, rec)
        return rec.events

    return run_virtual(main)


def _row(
    q: SimQuestion,
    rs: ResolvedScenario,
    *,
    events: list[dict[str, Any]] | None = None,
    plan: QuestionPlan | None = None,
    traced: bool = False,
):
    context: dict[str, Any] = {
        "n_words": q.n_words,
        "t_star": q.t_star,
        "L_ms": rs.L_ms,
        "G_ms": rs.G_ms,
        "delta_wps": rs.delta_wps,
        "mutating": rs.arm_rules.mutating is not None,
        "ranked_on_tool": rs.arm_rules.ranking == "tool",
    }
    if events is not None:
        return derive_result(events, **context)
    assert plan is not None
    sc = rs.scenario
    tally = replay(plan, sc.trigger.build(q), sc.reflector.build(q), rs.arm_rules, [] if traced else None)
    return tally_result(tally, q.interaction_id, **context)


@pytest.mark.parametrize("trigger", TRIGGERS, ids=lambda t: "-".join(str(v) for v in t.values()))
def test_random_questions_replay_identically_on_the_closed_form_and_the_engine(trigger: dict[str, Any]) -> None:
    _check_population(trigger)


@pytest.mark.parametrize("mode", ["single", "rearm"])
def test_the_learned_trigger_replays_identically_on_the_closed_form_and_the_engine(tmp_path, mode: str) -> None:
    from streamrag.pipeline.learned import LogRegParams, TriggerModel, save_model

    logreg = LogRegParams(mean=[0.0, 0.0], scale=[1.0, 1.0], coef=[0.6, -1.5], intercept=-1.5)
    model = save_model(
        TriggerModel(kind="logreg", columns=["t", "top1_changed"], context="prefix", logreg=logreg), tmp_path / "m.json"
    )
    for tau in (0.3, 0.6):
        _check_population({"kind": "learned", "model": str(model), "tau": tau, "mode": mode}, evidence_only=True)


def _check_population(trigger: dict[str, Any], *, evidence_only: bool = False) -> None:
    r = random.Random(f"closed-form {trigger}")
    rank_r = random.Random(f"rankings {trigger}")  # its own stream: the other draws stay as they were
    tool_r = random.Random(f"tool {trigger}")
    ep_r = random.Random(f"endpoint {trigger}")
    rows_engine, rows_closed, n_misfires, n_skips, n_ranked, n_cut, n_held = [], [], 0, 0, 0, 0, 0
    policies: set[str | None] = set()
    for i in range(60):
        evidence = evidence_only or trigger["kind"] in NEEDS_RANKINGS or r.random() < 0.7
        rs = _scenario(trigger, r, evidence, rank_r, tool_r)
        policies.add(rs.arm_rules.mutating)
        q = _question(f"q{i}", r, evidence)
        plan = _plan(q, r, rs, rank_r, ep_r)
        reference = _engine_events(plan, rs)
        traced = replay_events(plan, rs)
        assert dump_events(traced) == dump_events(reference), (i, rs.scenario)
        assert [
            TRACE_EVENT.validate_python(e).model_dump() for e in traced
        ] == traced  # every event is its model, fields in order
        row = _row(q, rs, events=reference)
        speculative = sum(1 for e in reference if e["kind"] == "fire" and e["by"] == "trigger")
        assert row.call_outcomes is not None and sum(row.call_outcomes) == speculative  # every call ends, once
        assert _row(q, rs, plan=plan) == row, (i, rs.scenario)
        assert _row(q, rs, plan=plan, traced=True) == row, (i, rs.scenario)  # a traced replay tallies the same
        rows_engine.append(row)
        rows_closed.append(_row(q, rs, plan=plan))
        n_misfires += bool(row.misfire)
        n_skips += bool(row.skipped_fires)
        n_ranked += bool(row.rankings)
        if row.endpoint_ms is not None:  # the parts of each arm's latency sum to it
            n_cut += bool(row.false_cutoffs)
            n_held += bool(plan.holds_tools and row.baseline_other_ms)
            parts = ("endpoint_ms", "g_ms", "l_ms", "other_ms", "f_ms", "confirm_ms")
            for arm in ("streaming", "baseline"):
                total = sum(getattr(row, p if p == "endpoint_ms" else f"{arm}_{p}") for p in parts)
                assert abs(total - getattr(row, f"{arm}_ms")) < 1e-6, (i, arm, row)
    assert results_csv(rows_closed) == results_csv(rows_engine)
    assert n_cut > 0  # false cut-offs were priced on both routes
    assert n_held > 0  # tools held for the confirmation delayed a baseline
    assert len(policies) >= 4  # read-only and most of a mutating tool's policies were crossed
    assert (n_ranked > 0) == (trigger["kind"] in NEEDS_RANKINGS or trigger["kind"] == "learned")
    if trigger["kind"] != "none":  # the population exercised what the rules are about
        assert n_misfires > 0
        assert n_skips > 0 or trigger["kind"] in ("oracle", "replace", "hedge", "learned")


def test_simulate_picks_the_closed_form_and_its_outputs_are_the_engines_bytes() -> None:
    r = random.Random(7)
    questions = [_question(f"e{i}", r, True) for i in range(25)] + [_question(f"t{i}", r, False) for i in range(5)]
    raw = {
        "trigger": {"kind": "interval", "words": 2},
        "pipeline": {"max_threads": 2},
        "reflector": {"kind": "gold"},
        "latency": {"profile": "arora2025"},  # log-normal draws: no two plans alike
        "input": {"kind": "jittered", "delta_wps": 3.0, "cv": 0.5},
    }
    rs = scenario_from_dict(raw)
    closed, engine = simulate(questions, rs), simulate(questions, rs, engine=True)
    assert (closed.replay, engine.replay) == (CLOSED_FORM, ENGINE)
    assert results_csv(closed.all_rows) == results_csv(engine.all_rows)
    assert closed.trace_bytes() == engine.trace_bytes()
    assert closed.virtual_us == engine.virtual_us
    assert simulate(questions[:6], rs, jobs=2).trace_bytes() == simulate(questions[:6], rs, engine=True).trace_bytes()
    # A run that writes its trace as it goes replays each question once for both.
    outputs, trace = closed_form_traced(questions, rs)
    assert [o.row for o in outputs] == [o.row for o in closed_form_outputs(questions, rs)] == engine.rows
    assert trace == closed_form_trace(questions, rs) == engine.trace_bytes()


@pytest.mark.parametrize(
    ("setting", "reason"),
    [
        ({"resources": {"tool": {"kind": "servers", "servers": 2}}}, "finite resources"),
        ({"policy": {"kind": "admission"}}, "policy.kind"),
        ({"load": {"arrivals": {"kind": "poisson", "rate_per_s": 1.0, "n_sessions": 5}}}, "shared capacity"),
    ],
)
def test_what_has_no_closed_form_stays_on_the_engine(setting: dict[str, Any], reason: str) -> None:
    rs = scenario_from_dict(setting)
    assert reason in (engine_reason(rs) or "")
    assert replay_of(rs) == ENGINE
    if "load" not in setting:
        assert simulate([table_q("q", 6, 3)], rs).replay == ENGINE
    assert engine_reason(scenario_from_dict({})) is None


def test_the_manifest_and_summary_say_which_replay_ran(tmp_path) -> None:
    table = tmp_path / "stabilization.csv"
    df = small_table(40, seed=3)
    df["skip_reason"] = ""
    write_table(df, table)
    outs = {}
    for name, extra in (("closed", []), ("engine", ["--engine"])):
        out = tmp_path / name
        assert main(["simulate", "--table", str(table), "--scenario", "paper_rq3", "--out", str(out), *extra]) == 0
        outs[name] = out
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["replay"] == ("engine" if extra else "closed_form")
        assert json.loads((out / "summary.json").read_text())["replay"] == manifest["replay"]
        assert ("--engine" in manifest["command"]) == bool(extra)
    for name in ("results.csv", "trace.jsonl"):
        assert (outs["closed"] / name).read_bytes() == (outs["engine"] / name).read_bytes()
    finite = tmp_path / "finite"
    args = ["--set", "resources.tool.kind=servers", "--set", "resources.tool.servers=1"]
    assert main(["simulate", "--table", str(table), "--scenario", "paper_rq3", "--out", str(finite), *args]) == 0
    assert json.loads((finite / "manifest.json").read_text())["replay"] == "engine"
