"""A mutating tool in simulation: unsafe executions per 1,000 turns beside the saving for
each policy, and the call outcomes every run's summary and report carry (issue 45)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from streamrag.cli import main
from streamrag.data.demo import demo_path

DEMO = str(demo_path())


def _simulate(out: Path, *sets: str) -> tuple[dict[str, Any], pd.DataFrame, list[dict[str, Any]]]:
    args = ["simulate", DEMO, "--scenario", "paper_rq3", "--set", "select.population=all", "--out", str(out), "-q"]
    for s in sets:
        args += ["--set", s]
    assert main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    results = pd.read_csv(out / "results.csv", dtype=str, keep_default_na=False)
    lines = (out / "trace.jsonl").read_text().splitlines()
    return summary, results, [json.loads(line) for line in lines if '"kind"' in line]


def _speculative_fires(trace: list[dict[str, Any]]) -> int:
    return sum(1 for e in trace if e["kind"] == "fire" and e["arm"] == "streaming" and e["by"] == "trigger")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], pd.DataFrame, list[dict[str, Any]]]]:
    root = tmp_path_factory.mktemp("mutating")
    eot = "input.end_of_turn_ms=500"  # an endpointer: the turn is confirmed 500 ms after the last word
    out = {"read_only": _simulate(root / "read_only", eot)}
    for policy in ("never", "after_authorization", "deferral", "speculative"):
        out[policy] = _simulate(root / policy, eot, "tool.effects=mutating", f"tool.mutating_policy={policy}")
    return out


def test_every_runs_summary_counts_how_its_speculative_calls_ended(runs) -> None:
    for name, (summary, _, trace) in runs.items():
        counts = summary["call_outcomes"]
        assert sum(counts.values()) == _speculative_fires(trace), name  # each call once, none without an outcome
    summary, results, _ = runs["read_only"]
    assert summary["call_outcomes"]["used"] > 0 and summary["call_outcomes"]["expired"] > 0
    assert "unsafe_calls" not in results.columns and "unsafe_per_1000_turns" not in summary
    assert "call_outcomes" not in results.columns  # summed in the summary, not a column


def test_unsafe_executions_per_1000_turns_beside_the_saving_for_each_policy(runs) -> None:
    saved = {name: s["saved_ms"]["mean"] for name, (s, _, _) in runs.items()}
    unsafe = {name: s.get("unsafe_per_1000_turns") for name, (s, _, _) in runs.items()}
    assert unsafe["never"] == unsafe["after_authorization"] == unsafe["deferral"] == 0.0
    assert unsafe["speculative"] > 1000  # no guard: more than one call per turn ran on a partial question
    assert saved["speculative"] == saved["read_only"] > 0  # the risk buys the read-only saving
    assert saved["never"] == saved["after_authorization"] == 0.0  # nothing starts before the turn: the baseline
    assert 0 < saved["deferral"] < saved["read_only"]  # G hidden behind the endpointer, the tool after it
    never_trace = runs["never"][2]
    assert _speculative_fires(never_trace) == 0
    assert {e["reason"] for e in never_trace if e["kind"] == "skip"} == {"mutating"}
    # deferral: the speculative calls' tool stages start once the turn is confirmed, on its final words
    trace = runs["deferral"][2]
    ends = {e["qid"]: e["t_us"] for e in trace if e["kind"] == "reflect"}
    n_words = {e["qid"]: e["n_words"] for e in trace if e["kind"] == "input_end"}
    prefix = {(e["qid"], e["call"]): e["prefix_t"] for e in trace if e["kind"] == "fire" and e["by"] == "trigger"}
    tool_starts = [
        (e["qid"], e["t_us"], prefix[e["qid"], e["call"]])
        for e in trace
        if e["kind"] in ("gen_done", "execute") and e["arm"] == "streaming" and (e["qid"], e["call"]) in prefix
    ]
    assert tool_starts and all(t >= ends[q] and p == n_words[q] for q, t, p in tool_starts)
    assert any(e["kind"] == "defer" for e in trace)  # calls on earlier prefixes waited, then expired


def test_revised_hypotheses_make_calls_unsafe_and_the_guarded_policies_run_none(tmp_path: Path) -> None:
    asr = ["data.asr.p=0.5", "data.asr.r=3", "tool.effects=mutating"]
    summary, results, _ = _simulate(tmp_path / "spec", *asr, "tool.mutating_policy=speculative")
    unsafe = results["unsafe_calls"].astype(int)
    assert (unsafe <= results["calls_fired"].astype(int)).all() and summary["unsafe_per_1000_turns"] > 0
    guarded, results, _ = _simulate(tmp_path / "deferral", *asr)  # deferral: the mutating tool's default
    assert guarded["unsafe_per_1000_turns"] == 0.0 and (results["unsafe_calls"] == "0").all()
    assert guarded["parameters"]["scenario"]["tool"] == {"effects": "mutating", "mutating_policy": None}


def test_the_report_shows_the_outcomes_and_predict_refuses_the_setting(runs, tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    _simulate(run, "tool.effects=mutating", "tool.mutating_policy=speculative")
    assert main(["report", str(run), "-q"]) == 0
    html = (run / "report.html").read_text()
    assert "Speculative call outcomes" in html and "unsafe executions per 1,000 turns" in html
    capsys.readouterr()
    rc = main(["predict", DEMO, "--scenario", "paper_rq3", "--set", "tool.effects=mutating"])
    assert rc == 1 and "simulate it instead" in capsys.readouterr().err


LOAD = ["load.arrivals.n_sessions=120", "load.warmup_s=0", "load.reference_sessions=5", "select.population=all"]
"""A small load run on the built-in ``load`` scenario."""


def _load(out: Path, *sets: str) -> tuple[dict[str, Any], pd.DataFrame]:
    args = ["simulate", DEMO, "--scenario", "load", "--out", str(out), "-q"]
    for s in (*LOAD, *sets):
        args += ["--set", s]
    assert main(args) == 0
    return json.loads((out / "summary.json").read_text()), pd.read_csv(out / "sessions.csv")


def test_a_load_run_counts_unsafe_executions_by_the_arms_own_rules(tmp_path: Path) -> None:
    """Sessions share the tool and the LLM; the arm, its mutating policy and the count are
    the replay's. Unguarded, calls run on partial questions; every guarded policy runs none."""
    plain, sessions = _load(tmp_path / "read_only")
    assert "unsafe_per_1000_turns" not in plain and "unsafe_calls" not in sessions.columns
    unsafe = {}
    for policy in ("never", "after_authorization", "deferral", "speculative"):
        summary, sessions = _load(tmp_path / policy, "tool.effects=mutating", f"tool.mutating_policy={policy}")
        counted = sessions[sessions["counted"]]
        assert summary["unsafe_per_1000_turns"] == pytest.approx(1000 * counted["unsafe_calls"].sum() / len(counted))
        assert (sessions["unsafe_calls"] <= sessions["calls_fired"]).all()
        unsafe[policy] = summary["unsafe_per_1000_turns"]
    assert unsafe["never"] == unsafe["after_authorization"] == unsafe["deferral"] == 0.0
    assert unsafe["speculative"] > 1000  # more than one call per turn ran on a partial question
