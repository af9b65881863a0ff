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
        (["data.asr.kind=file", "data.asr.path=h.jsonl", "endpoint.voiced_ms=300"], "silences are the voice-activity"),
        (["data.asr.kind=file", "data.asr.path=h.jsonl", "endpoint.silence_ms=99"], "shorter than the shortest silence"),
    ],
)
def test_what_would_end_the_turn_twice_or_is_not_modelled_is_refused(sets: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_scenario("paper_rq3", ["endpoint.kind=silence", "endpoint.silence_ms=300", *sets])


def _spoken_file(path: Path, *, speech: bool = True) -> None:
    """Hypotheses for every demo question: word prefixes every 400 ms, the final one 100 ms
    after the speech ends; the speech one segment with a 600 ms silence after word 3."""
    lines = []
    for line in Path(DEMO).read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        words = q["query"].split()
        times = [400 * (j + 1) + (600 if j >= 3 else 0) for j in range(len(words))]
        hyps = [{"t_ms": t, "text": " ".join(words[: j + 1])} for j, t in enumerate(times)]
        obj = {"interaction_id": q["interaction_id"], "hypotheses": hyps}
        if speech:
            last = times[-1] - 100
            obj["speech_ms"] = [[0, 1200], [1800, last]] if len(words) > 4 else [[0, last]]
        lines.append(json.dumps(obj))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_spoken_input_ends_as_its_speech_ends_and_is_cut_off_at_its_silences(tmp_path) -> None:
    h = tmp_path / "h.jsonl"
    _spoken_file(h)
    spoken = ["data.asr.kind=file", f"data.asr.path={h}", "endpoint.kind=silence"]
    _, results, events = _simulate(tmp_path / "r", *spoken, "endpoint.silence_ms=600")
    # confirmed 600 ms after the end of speech, which is 100 ms before the final transcript
    assert (results["endpoint_ms"] == 500.0).all() and (results["confirm_ms"] == 500.0).all()
    long = results["n_words"] > 4
    assert (results.loc[long, "false_cutoffs"] == 1).all() and (results.loc[~long, "false_cutoffs"] == 0).all()
    cuts = [e["cutoffs"] for e in events if e["kind"] == "endpoint" and e["cutoffs"]]
    assert cuts and all(c == [[3, 1_800_000, 1_800_000]] for c in cuts)  # at 1.2 s + 600 ms, on the 3 words heard
    _, shorter, _ = _simulate(tmp_path / "s", *spoken, "endpoint.silence_ms=600.001")
    assert (shorter["false_cutoffs"] == 0).all()  # a silence 1 µs shorter than the timeout ends nothing
    for arm in ("streaming", "baseline"):
        parts = results["endpoint_ms"] + sum(results[f"{arm}_{p}_ms"] for p in ("g", "l", "other", "f", "confirm"))
        assert (abs(parts - results[f"{arm}_ms"]) < 1e-6).all()
    engine = tmp_path / "e"
    assert main(["simulate", DEMO, "--scenario", "paper_rq3", "--engine", "--out", str(engine), "-q",
                 *[a for s in [*spoken, "endpoint.silence_ms=600"] for a in ("--set", s)]]) == 0  # fmt: skip
    assert (engine / "results.csv").read_bytes() == (tmp_path / "r" / "results.csv").read_bytes()


def test_an_endpointer_on_hypotheses_without_speech_segments_is_refused_in_one_line(tmp_path, capsys) -> None:
    h = tmp_path / "h.jsonl"
    _spoken_file(h, speech=False)
    args = ["simulate", DEMO, "--scenario", "paper_rq3", "--out", str(tmp_path / "r"), "-q"]
    sets = ["data.asr.kind=file", f"data.asr.path={h}", "endpoint.kind=detector", "endpoint.delay_ms=500"]
    assert main([*args, *[a for s in sets for a in ("--set", s)]]) == 1
    err = capsys.readouterr().err
    assert "has no speech_ms" in err and "streamrag speak records them" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


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


ANCHOR = ["endpoint.kind=detector", "endpoint.delay_ms=0"]
"""The study's end of turn as an endpointer: the compute columns, counted alike."""


def test_tokens_in_count_each_llm_call_its_prompt_its_words_and_the_responses_evidence(tmp_path) -> None:
    _, calls, _ = _simulate(tmp_path / "calls", *ANCHOR, "compute.prompt_tokens=1", "compute.tokens_per_word=0")
    assert (calls["llm_tokens_in"] == calls["llm_calls"]).all()  # one prompt per call, nothing else
    assert (calls["baseline_llm_tokens_in"] == calls["baseline_llm_calls"]).all()
    _, words, _ = _simulate(tmp_path / "words", *ANCHOR, "compute.tokens_per_word=1", "compute.evidence_tokens=100")
    # the baseline: G reads the question, F the question and the tool's result
    assert (words["baseline_llm_tokens_in"] == 2 * words["n_words"] + 100).all()
    # the streaming arm: each query generation its call's prefix (at least one word), F the question
    extra = words["llm_tokens_in"] - words["n_words"] - 100
    assert (extra >= words["calls_fired"]).all() and (extra <= words["calls_fired"] * words["n_words"]).all()
    _, alone, _ = _simulate(tmp_path / "alone", *ANCHOR, "trigger.kind=none", "compute.prompt_tokens=900")
    assert (alone["llm_tokens_in"] == alone["baseline_llm_tokens_in"]).all()  # no speculation, no extra tokens
    summary, paused, _ = _simulate(
        tmp_path / "paused", *PAUSED[:3], "input.pause_ms=20000", "endpoint.kind=silence", "endpoint.silence_ms=300",
        "compute.prompt_tokens=0", "compute.tokens_per_word=1",
    )  # fmt: skip
    # every pause is cut off and its reply spoken: G and F each read the words heard, in both arms
    pauses = paused["n_words"] - 1
    assert (paused["baseline_llm_tokens_in"] == 2 * paused["n_words"] + pauses * paused["n_words"]).all()
    assert summary["endpoint"]["extra_llm_tokens_in_per_turn"] == pytest.approx(
        (paused["llm_tokens_in"] - paused["baseline_llm_tokens_in"]).mean()
    )


def test_compute_settings_without_an_endpointer_are_refused() -> None:
    with pytest.raises(ConfigError, match="compute: the compute columns"):
        load_scenario("paper_rq3", ["compute.prompt_tokens=500"])
