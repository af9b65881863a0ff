"""The LiveKit and Pipecat adapters against the real packages (extras ``livekit`` and
``pipecat``), in process, no network: the README's examples are what runs."""

from __future__ import annotations

import asyncio
import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str) -> dict:
    return asyncio.run(runpy.run_path(str(EXAMPLES / name))["main"]())


def test_livekit_interim_transcripts_fire_and_the_result_is_in_the_reply_context(capsys) -> None:
    pytest.importorskip("livekit.agents", reason="the livekit extra is not installed (pip install -e '.[livekit]')")
    out = run_example("livekit_agent.py")
    answer, report, requests = out["answer"], out["report"], out["requests"]
    # one LLM request, LiveKit's preemptive one (started on the final transcript), kept
    assert requests == [
        [
            ("system", "Answer from the information given."),
            ("assistant", "Information relevant to the user's message:\nMadrid is the capital of Spain."),
            ("user", "what is the capital of spain please"),
        ]
    ]
    assert out["kept"] == 1
    # heard from the STT's stream: fired before the turn ended, "capitol" revised
    assert answer.speculative and (answer.prefix_t, answer.n_words) == (6, 7)
    assert report.revisions == 1 and report.stale == 1 and report.fired >= 6
    assert 25 < report.saved_ms < 120  # shadow mode: the 50 ms call was not waited for
    assert "speculative=True prefix=6/7" in capsys.readouterr().out


def test_pipecat_frames_through_the_real_aggregator_get_the_result_in_the_llm_context(capsys) -> None:
    pytest.importorskip("pipecat", reason="the pipecat extra is not installed (pip install -e '.[pipecat]')")
    out = run_example("pipecat_pipeline.py")
    answer, report, messages = out["answer"], out["report"], out["messages"]
    assert messages == [
        {"role": "user", "content": "what is the capital of spain please"},
        {"role": "system", "content": "Information relevant to the user's message:\nMadrid is the capital of Spain."},
    ]
    assert answer.speculative and (answer.prefix_t, answer.n_words) == (6, 7)
    assert report.revisions == 1 and report.stale == 1
    assert 25 < report.saved_ms < 120
    assert "speculative=True prefix=6/7" in capsys.readouterr().out
