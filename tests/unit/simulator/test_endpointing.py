"""An endpointer in the simulated turn (issue 46): both arms start at its end of turn, its
false cut-offs are counted and priced, each arm's latency is given in parts that sum to it,
and compute sits beside the saving."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from streamrag.base.errors import ConfigError
from streamrag.cli import main
from streamrag.data.demo import demo_path
from streamrag.simulator.scenario import load_scenario

DEMO = str(demo_path())
PAUSED = ["input.kind=uniform", "input.delta_wps=2.5", "input.pause_prob=1", "input.pause_ms=500"]
"""Every gap 400 ms of a word plus a 500 ms pause: a 500 ms silence before every word but the first."""


def _simulate(out: Path, *sets: str) -> tuple[dict[str, Any], pd.DataFrame, list[dict[str, Any]]]:
    args = ["simulate", DEMO, "--scenario", "paper_rq3", "--out", str(out), "-q"]
    for s in sets:
        args += ["--set", s]
    assert main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    results = pd.read_csv(out / "results.csv")
    results = results[results["skip_reason"].isna()]
    events = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines() if '"kind"' in line]
    return summary, results, events


@pytest.mark.parametrize(("timeout", "cut"), [("500.001", False), ("500", True), ("499.999", True)])
def test_a_pause_one_us_shorter_than_the_timeout_is_no_cut_off_and_one_as_long_is(tmp_path, timeout: str, cut: bool) -> None:
    summary, results, events = _simulate(tmp_path / "r", *PAUSED, "endpoint.kind=silence", f"endpoint.silence_ms={timeout}")
    pauses = results["n_words"] - 1
    assert (results["false_cutoffs"] == (pauses if cut else 0)).all()
    assert (results["endpoint_ms"] == float(timeout)).all()
    ends = [e for e in events if e["kind"] == "endpoint"]
    assert len(ends) == len(results) and all(e["confirm_us"] == e["start_us"] == round(float(timeout) * 1000) for e in ends)
    if cut:  # each cut-off at the pause's start + the timeout; the user resumes when the pause ends
        for e in ends:
            for _prefix_t, cut_us, resume_us in e["cutoffs"]:
                assert resume_us - cut_us == 500_000 - round(float(timeout) * 1000)
    assert summary["endpoint"]["false_cutoffs_per_100_turns"] == pytest.approx(100 * pauses.mean() if cut else 0.0)


def test_a_long_pause_is_answered_as_a_partial_question_and_costs_both_arms_its_reply(tmp_path) -> None:
    long_pause = [*PAUSED[:3], "input.pause_ms=20000"]
    summary, results, _ = _simulate(tmp_path / "r", *long_pause, "endpoint.kind=silence", "endpoint.silence_ms=300")
    pauses = results["n_words"] - 1
    # G + L + F (590 + 600 + 2,520 ms) fit in the 19.7 s the user is silent: every reply is spoken
    assert (results["answered_partial"] == pauses).all()
    assert (results["baseline_llm_calls"] == 2 + 2 * pauses).all() and (results["baseline_tool_calls"] == 1 + pauses).all()
    assert (results["llm_calls"] - results["baseline_llm_calls"] == results["calls_fired"] - 1).all()
    assert summary["endpoint"]["answered_partial_per_100_turns"] == pytest.approx(100 * pauses.mean())


def test_each_arms_latency_is_the_sum_of_its_parts_and_a_longer_endpoint_hides_more(tmp_path) -> None:
    saved = {}
    for timeout in ("200", "800"):
        summary, results, _ = _simulate(
            tmp_path / timeout, "latency.L_ms=3000", "endpoint.kind=silence", f"endpoint.silence_ms={timeout}"
        )
        for arm in ("streaming", "baseline"):
            parts = results["endpoint_ms"] + sum(results[f"{arm}_{p}_ms"] for p in ("g", "l", "other", "f", "confirm"))
            assert (abs(parts - results[f"{arm}_ms"]) < 1e-6).all()
        assert (results["baseline_g_ms"] == 590.0).all() and (results["baseline_l_ms"] == 3000.0).all()
        assert (results["streaming_l_ms"] <= results["baseline_l_ms"]).all()
        saved[timeout] = summary["saved_ms"]["mean"]
        assert summary["endpoint"]["extra_llm_calls_per_turn"] == pytest.approx(
            (results["llm_calls"] - results["baseline_llm_calls"]).mean()
        )
    assert saved["800"] > saved["200"]  # the endpointer's delay is time a call fired mid-turn can hide in


def test_the_studys_fixed_end_of_turn_writes_no_endpoint_columns_or_events(tmp_path) -> None:
    summary, results, events = _simulate(tmp_path / "r")
    assert "endpoint_ms" not in results.columns and "endpoint" not in summary
    assert not any(e["kind"] == "endpoint" for e in events)


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        (["input.end_of_turn_ms=300"], "input.end_of_turn_ms: the endpointer"),
        (["data.asr.kind=file", "data.asr.path=h.jsonl"], "not modelled yet"),
    ],
)
def test_what_would_end_the_turn_twice_or_is_not_modelled_is_refused(sets: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_scenario("paper_rq3", ["endpoint.kind=silence", "endpoint.silence_ms=300", *sets])


def test_load_runs_and_predict_refuse_an_endpointer_in_one_line(tmp_path, capsys) -> None:
    endpointer = ["--set", "endpoint.kind=detector", "--set", "endpoint.delay_ms=500"]
    assert main(["simulate", DEMO, "--scenario", "load", *endpointer, "--out", str(tmp_path / "l")]) == 1
    assert "endpoint (kind 'detector') does not apply to a load run" in capsys.readouterr().err
    assert not (tmp_path / "l").exists()
    table = tmp_path / "t"
    assert main(["analyze", DEMO, "--out", str(table), "-q"]) == 0
    assert main(["predict", "--table", str(table / "stabilization.csv"), "--scenario", "paper_rq3", *endpointer]) == 1
    err = capsys.readouterr().err
    assert "endpoint.kind: predict's model ends every turn" in err and "Traceback" not in err


DETECTOR = [
    "input.kind=uniform",
    "input.delta_wps=2.5",
    "endpoint.kind=detector",
    "endpoint.delay_ms=1000",
    "endpoint.eager_ms=0",
]
"""Unbroken speech, a detector confirming 1 s after the last word, an eager start at the last word."""


@pytest.mark.parametrize(("tools", "baseline_ms", "held_ms"), [("true", 3710.0, 0.0), ("false", 4120.0, 410.0)])
def test_an_eager_start_gains_the_wait_for_confirmation_and_held_tools_give_part_back(
    tmp_path, tools: str, baseline_ms: float, held_ms: float
) -> None:
    _summary, results, events = _simulate(tmp_path / "r", *DETECTOR, f"endpoint.eager_tools={tools}")
    # the baseline: G (590 ms) from the last word, its tool call (600 ms) at once or after the
    # confirmation (1,000 ms), then F (2,520 ms)
    assert (results["baseline_ms"] == baseline_ms).all() and (results["baseline_other_ms"] == held_ms).all()
    assert (results["endpoint_ms"] == 0.0).all() and (results["confirm_ms"] == 1000.0).all()
    held = [e for e in events if e["kind"] == "defer" and e["arm"] == "baseline"]
    assert len(held) == (len(results) if tools == "false" else 0)
    fixed, _, _ = _simulate(tmp_path / "fixed", *DETECTOR[:-1])
    assert fixed["baseline_ms"]["mean"] == 1000.0 + 3710.0  # without the eager start, G waits for the detector


def test_an_answer_ready_before_the_confirmation_is_heard_at_it(tmp_path) -> None:
    quick = ["latency.G_ms=100", "latency.L_ms=100", "latency.F_ms=100"]
    _, results, _ = _simulate(tmp_path / "r", *DETECTOR, *quick)
    assert (results["baseline_ms"] == 1000.0).all() and (results["baseline_confirm_ms"] == 700.0).all()
    assert (results["streaming_ms"] == 1000.0).all() and (results["saved_ms"] == 0.0).all()
    for arm in ("streaming", "baseline"):
        parts = results["endpoint_ms"] + sum(results[f"{arm}_{p}_ms"] for p in ("g", "l", "other", "f", "confirm"))
        assert (abs(parts - results[f"{arm}_ms"]) < 1e-6).all()
