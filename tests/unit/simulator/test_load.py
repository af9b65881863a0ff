"""Load runs: sessions sharing resources on one clock; paired systems; policies; outputs."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _simhelpers import small_table

from streamrag.analysis.table import write_table
from streamrag.base.config.overrides import parse_override
from streamrag.cli import main
from streamrag.engine.trace import read_trace
from streamrag.simulator.load.run import run_load
from streamrag.simulator.load.workload import draw_questions, session_id
from streamrag.simulator.questions import questions_from_frame
from streamrag.simulator.scenario import scenario_from_dict
from streamrag.simulator.simulate import simulate

BASE: dict[str, Any] = {
    "name": "load-test",
    "seed": 3,
    "input": {"kind": "uniform", "delta_wps": 3.0},
    "trigger": {"kind": "interval", "words": 3},
    "pipeline": {"max_threads": 4},
    "reflector": {"kind": "heuristic"},
    "latency": {"profile": "paper-rq3", "L_ms": 600.0},
    "select": {"population": "all"},
    "resources": {"tool": {"kind": "servers", "servers": 2}, "llm": {"kind": "servers", "servers": 3}},
    "load": {"arrivals": {"kind": "poisson", "rate_per_s": 1.0, "n_sessions": 150}},
}


def _rs(*overrides: str, load: bool = True):
    raw = BASE if load else {k: v for k, v in BASE.items() if k != "load"}
    return scenario_from_dict(raw, [[parse_override(o) for o in overrides]])


@pytest.fixture(scope="module")
def questions():
    return questions_from_frame(small_table(40, seed=5)).questions


def test_on_unlimited_capacity_every_session_is_the_question_replayed_alone(questions) -> None:
    # Constant latencies: a session's draws equal its question's, so each session's
    # answer latencies are exactly what the per-question replay gives for its question.
    unlimited = ("resources.tool.kind=unlimited", "resources.llm.kind=unlimited")
    run = run_load(questions, _rs(*unlimited))
    alone = {r.interaction_id: r for r in simulate(questions, _rs(*unlimited, load=False)).rows}
    s, b = run.systems["streaming"].measures, run.systems["baseline"].measures
    asked = draw_questions(3, run.n, len(questions))
    for i in range(run.n):
        row = alone[questions[int(asked[i])].interaction_id]
        assert (s.answer_us[i] / 1000, b.answer_us[i] / 1000) == (row.streaming_ms, row.baseline_ms)
    assert np.array_equal(run.reference_saved_us, (b.answer_us - s.answer_us)[: run.reference_saved_us.size])


def test_every_sessions_speculative_calls_end_once_and_the_summary_counts_them(tmp_path: Path) -> None:
    from streamrag.pipeline.outcomes import OUTCOMES

    table = tmp_path / "t.csv"
    write_table(small_table(40, seed=5), table)
    scenario = tmp_path / "load.toml"
    scenario.write_text(_toml({**BASE, "load": {**BASE["load"], "warmup_s": 0.0}}), encoding="utf-8")  # all counted
    out = tmp_path / "o"
    assert main(["simulate", "--table", str(table), "--scenario", str(scenario), "--out", str(out), "-q"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sessions"]["counted"] == 150 and list(summary["call_outcomes"]) == list(OUTCOMES)
    fired = sum(1 for e in read_trace(out / "trace.jsonl") if e.kind == "fire" and e.arm == "streaming" and e.by == "trigger")
    assert sum(summary["call_outcomes"].values()) == fired > 0  # each speculative call ends in exactly one outcome
    assert summary["call_outcomes"]["used"] > 0


def test_littles_law_holds_for_every_resource_of_every_system(questions) -> None:
    run = run_load(questions, _rs())
    for system in run.systems.values():
        for name, report in system.resources.items():
            assert report is not None, name
            law = report["littles_law"]
            assert law["L"] == pytest.approx(law["lambda_per_s"] * law["W_s"], rel=1e-9), name


def test_speculation_adds_load_the_baseline_does_not(questions) -> None:
    run = run_load(questions, _rs())
    s, b = run.systems["streaming"], run.systems["baseline"]
    assert s.resources["tool"]["jobs"] > 2 * b.resources["tool"]["jobs"]  # type: ignore[index]
    assert b.resources["tool"]["jobs"] == run.n  # type: ignore[index]  # one tool call per session


def test_a_full_queue_loses_speculative_calls_and_fails_confirmed_work(questions) -> None:
    rs = _rs(
        "resources.tool.servers=1", "resources.tool.queue_limit=0", "load.arrivals.rate_per_s=3.0",
        "resources.llm.kind=unlimited",
    )  # fmt: skip
    run = run_load(questions, rs)
    s, b = run.systems["streaming"].measures, run.systems["baseline"].measures
    assert s.rejected.sum() > 0 and b.rejected.sum() > 0
    # a rejected baseline call fails its session; a rejected speculative call is only lost
    assert (b.answer_us[b.rejected > 0] == -1).all()
    lost_only = (s.rejected > 0) & (s.answer_us >= 0)
    assert lost_only.any()


def test_admission_control_refuses_speculation_under_load(questions) -> None:
    busy = ["load.arrivals.rate_per_s=2.5", "resources.tool.servers=1"]
    always = run_load(questions, _rs(*busy)).systems["streaming"].measures
    admission = (
        run_load(questions, _rs(*busy, "policy.kind=admission", "policy.max_queue=1", "policy.max_utilization=1.0"))
        .systems["streaming"]
        .measures
    )
    assert admission.fired.sum() < always.fired.sum()


def test_coalesce_reaims_a_waiting_call_instead_of_queueing_another(questions, tmp_path: Path) -> None:
    rs = _rs("load.arrivals.rate_per_s=2.5", "resources.tool.servers=1", "resources.llm.servers=1", "policy.kind=coalesce")
    run = run_load(questions, rs, trace_dir=tmp_path)
    events = [json.loads(line) for line in run.traces["streaming"].path.read_bytes().splitlines()]
    reaims = [e for e in events if e["kind"] == "reaim"]
    assert reaims and all(e["prefix_t"] > e["was"] for e in reaims)
    always = run_load(questions, _rs("load.arrivals.rate_per_s=2.5", "resources.tool.servers=1", "resources.llm.servers=1"))
    assert run.systems["streaming"].resources["llm"]["jobs"] < always.systems["streaming"].resources["llm"]["jobs"]  # type: ignore[index]


def test_coalesce_lets_a_newer_call_take_an_older_ones_place_in_the_tool_queue(questions, tmp_path: Path) -> None:
    busy = ("load.arrivals.rate_per_s=2.5", "resources.tool.servers=1", "resources.llm.kind=unlimited")
    run = run_load(questions, _rs(*busy, "policy.kind=coalesce"), trace_dir=tmp_path)
    events = [json.loads(line) for line in run.traces["streaming"].path.read_bytes().splitlines()]
    superseded = [e for e in events if e["kind"] == "cancel" and e["reason"] == "superseded"]
    assert superseded
    # the older call left the queue (withdrawn while waiting) the instant the newer one entered it
    by_session = {(e["qid"], e["call"]): e["t_us"] for e in events if e["kind"] == "withdraw" and e["server"] == -1}
    assert all(by_session.get((e["qid"], e["call"])) == e["t_us"] for e in superseded)
    always = run_load(questions, _rs(*busy))

    def tool(r: Any) -> Any:
        return r.systems["streaming"].resources["tool"]

    assert tool(run)["busy_s"] < tool(always)["busy_s"]  # stale prefixes no longer use the server


def test_simulate_writes_sessions_summary_trace_and_manifest(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    write_table(small_table(40, seed=5), table)
    scenario = tmp_path / "load.toml"
    scenario.write_text(_toml(BASE), encoding="utf-8")
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert main(["simulate", "--table", str(table), "--scenario", str(scenario), "--out", str(out)]) == 0
        outs.append(out)
    for file in ("sessions.csv", "summary.json", "trace.jsonl"):
        assert (outs[0] / file).read_bytes() == (outs[1] / file).read_bytes(), file
    rows = list(csv.DictReader((outs[0] / "sessions.csv").read_text(encoding="utf-8").splitlines()))
    assert [r["session_id"] for r in rows] == [session_id(i) for i in range(150)]
    summary = json.loads((outs[0] / "summary.json").read_text())
    assert summary["mode"] == "load" and summary["rules"]["preset"] == "paper"
    assert json.loads((outs[0] / "manifest.json").read_text())["replay"] == "engine"  # shared capacity: no closed form
    assert {"median", "p90", "p99"} <= set(summary["streaming"]["answer_ms"])
    trace_ids = {e.qid for e in read_trace(outs[0] / "trace.jsonl")}
    assert trace_ids == {r["session_id"] for r in rows}
    assert not list(outs[0].glob(".*"))  # spool files are gone


def test_sessions_csv_keeps_negative_savings_and_agrees_with_the_summary(tmp_path: Path) -> None:
    # Every negative saved_ms was once written empty (read as a failure), which moved the
    # column's mean far from the summary's.
    table = tmp_path / "t.csv"
    write_table(small_table(40, seed=5), table)
    scenario = tmp_path / "load.toml"
    busy = {**BASE, "trigger": {"kind": "every_word"}, "resources": {"tool": {"kind": "servers", "servers": 1}}}
    scenario.write_text(_toml(busy), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["simulate", "--table", str(table), "--scenario", str(scenario), "--out", str(out), "-q"]) == 0
    rows = list(csv.DictReader((out / "sessions.csv").read_text(encoding="utf-8").splitlines()))
    answered = [r for r in rows if r["streaming_ms"] and r["baseline_ms"]]
    assert all(r["saved_ms"] for r in answered)
    assert all(float(r["saved_ms"]) == pytest.approx(float(r["baseline_ms"]) - float(r["streaming_ms"])) for r in answered)
    assert any(float(r["saved_ms"]) < 0 for r in answered)  # the case the formatter dropped
    counted = [float(r["saved_ms"]) for r in answered if r["counted"] == "True"]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert np.mean(counted) == pytest.approx(summary["saved_ms"]["mean"])


def _toml(data: dict[str, Any], prefix: str = "") -> str:
    """A tiny TOML writer for the nested test scenario (tables and inline scalars)."""
    scalars = {k: v for k, v in data.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    out = "".join(f"{k} = {json.dumps(v)}\n" for k, v in scalars.items())
    for k, v in tables.items():
        name = f"{prefix}{k}"
        inner = {kk: vv for kk, vv in v.items() if not isinstance(vv, dict)}
        sub = {kk: vv for kk, vv in v.items() if isinstance(vv, dict)}
        out += f"\n[{name}]\n" + "".join(f"{kk} = {json.dumps(vv)}\n" for kk, vv in inner.items())
        for kk, vv in sub.items():
            out += f"{kk} = {{ " + ", ".join(f"{a} = {json.dumps(b)}" for a, b in vv.items()) + " }\n"
    return out


@pytest.mark.parametrize("policy", ["always", "coalesce"])
@pytest.mark.parametrize("cancel", ["frees", "completes"])
def test_finished_sessions_are_freed_without_the_cycle_collector(questions, policy: str, cancel: str) -> None:
    # Jobs, calls and arms form no reference cycles, so memory is returned as sessions
    # end (a cycle left here cost a third of a long run's CPU in collections).
    import gc

    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run_load(questions, _rs(f"policy.kind={policy}", f"resources.tool.cancel={cancel}", "trigger.kind=interval"))
        gc.collect()
        left = {type(o).__name__ for o in gc.garbage}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not left & {"Job", "Call", "_Chain", "StreamingArm", "BaselineArm", "Recorder", "KernelTimer"}


def test_a_closed_loop_whose_sessions_all_fall_in_the_warm_up_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Every session arrives within the warm-up: nothing is counted. An open loop is refused
    # before it runs (tests/hostile/test_hostile_load.py); a closed loop's arrivals are known only
    # once it ran, so its files are written, the console line must not crash on undefined
    # percentiles and a warning says what to change (it was a TypeError traceback).
    table = tmp_path / "t.csv"
    write_table(small_table(30, seed=1), table)
    closed = {**BASE, "load": {"arrivals": {"kind": "closed", "users": 2, "think_s": 1.0, "n_sessions": 20}, "warmup_s": 1e4}}
    scenario = tmp_path / "closed.toml"
    scenario.write_text(_toml(closed), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["simulate", "--table", str(table), "--scenario", str(scenario), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "(0 counted); answer p50 streaming - ms vs baseline - ms" in captured.out
    assert "warning: no session was counted: all 20 arrived within the 10000 s warm-up" in captured.err
    assert json.loads((out / "summary.json").read_text())["sessions"]["counted"] == 0
