"""scripts/real_input_compare.py: the three-way table on the questions common to all three
inputs, the mis-heard-gold questions apart, and the spoken files made when absent."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compare() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_input_compare", ROOT / "scripts" / "real_input_compare.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _results(saved: dict[str, float], revised: dict[str, int] | None = None) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "interaction_id": list(saved),
            "saved_ms": list(saved.values()),
            "misfire": [s < 1000 for s in saved.values()],
            "calls_fired": [4] * len(saved),
        }
    )
    if revised is not None:
        frame["calls_on_revised"] = [revised[q] for q in saved]
    return frame.set_index("interaction_id")


def test_the_table_is_over_common_questions_and_mis_heard_gold_is_apart(compare: ModuleType) -> None:
    run = compare.InputRun
    # q4 is skipped under speech: the common questions are q1, q2, q3.
    # Gold under the true text: q1, q2 (and q4, not common); under the transcript: q1, q3.
    every = {"q1": 1190.0, "q2": 1190.0, "q3": 500.0, "q4": 1190.0}
    runs = {
        "uniform": run(pd.Series({"q1": 600.0, "q2": 600.0, "q3": 300.0, "q4": 600.0}), frozenset({"q1", "q2", "q4"}), _results(every)),
        "typed": run(pd.Series({"q1": 600.0, "q2": 500.0, "q3": 400.0, "q4": 600.0}), frozenset({"q1", "q2", "q4"}), _results(every, dict.fromkeys(every, 1))),
        "spoken": run(pd.Series({"q1": 450.0, "q2": 100.0, "q3": 600.0}), frozenset({"q1", "q3"}),
                      _results({"q1": 700.0, "q2": 0.0, "q3": 1190.0}, {"q1": 3, "q2": 4, "q3": 2})),
    }  # fmt: skip
    rows, misheard = compare.fair_tables("p", runs)
    by_input = {r["input"]: r for r in rows}
    assert {r["n_common"] for r in rows} == {3} and {r["n_common_gold"] for r in rows} == {1}  # q1 only
    # streamable: H ≥ 0.8 × 600 = 480 ms over q1, q2, q3
    assert [by_input[k]["streamable_share"] for k in ("uniform", "typed", "spoken")] == [2 / 3, 2 / 3, 1 / 3]
    assert by_input["spoken"]["H_mean_ms"] == (450 + 100 + 600) / 3
    assert (by_input["uniform"]["saved_mean_ms"], by_input["spoken"]["saved_mean_ms"]) == (1190.0, 700.0)  # q1
    assert by_input["uniform"]["calls_on_revised_share"] is None  # nothing to revise
    assert by_input["spoken"]["calls_on_revised_share"] == 3 / 4
    groups = {(r["group"], r["input"]): r for r in misheard}
    gained, lost = groups[("gold only when mis-heard", "spoken")], groups[("gold lost when mis-heard", "spoken")]
    assert (gained["n_questions"], gained["saved_mean_ms"]) == (1, 1190.0)  # q3
    assert (lost["n_questions"], lost["saved_mean_ms"], lost["misfire_rate"]) == (1, 0.0, 1.0)  # q2
    assert groups[("gold lost when mis-heard", "uniform")]["saved_mean_ms"] == 1190.0
    text = compare.compare_markdown(rows, misheard)
    assert "- p: 1 gold only when mis-heard, 1 gold lost when mis-heard" in text


def test_the_spoken_file_is_made_when_absent_and_reused_when_finished(
    compare: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamrag.data.human.speech as speech
    from streamrag.data.human.spoken import SpeechCost, SpokenQuestion

    calls: list[str] = []

    class Fake:
        def __init__(self, **_: object) -> None:
            pass

        def speak(self, qid: str, query: str) -> SpokenQuestion:
            calls.append(qid)
            shown = ((300.0, query.split()[0].lower()), (900.0, query.lower()))
            return SpokenQuestion(qid, query, shown, 1000.0, 0, len(query.split()), (320.0, 950.0), SpeechCost(0, 0, 0.1, 0.1))

    monkeypatch.setattr(speech, "Speaker", Fake)
    monkeypatch.setattr(speech, "speech_available", lambda: None)
    out = tmp_path / "spoken" / "demo.jsonl"
    assert compare.ensure_spoken(out, "demo", "0", 3, 1) == out
    assert len(calls) == 3 and compare.has_available_times(out)
    assert compare.ensure_spoken(out, "demo", "0", 3, 1) == out and len(calls) == 3  # finished: not spoken again
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"interaction_id": "x", "hypotheses": [{"t_ms": 1, "text": "a"}]}) + "\n")
    assert not compare.has_available_times(plain)  # an older file: its spoken-available row is left out
