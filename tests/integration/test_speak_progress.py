"""A long ``speak`` run seen from outside: its progress file read while it runs, and a
real run stopped by SIGTERM then resumed to the hypotheses of an uninterrupted one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from streamrag.base.errors import RecordError
from streamrag.data.human.hypotheses_file import read_hypotheses
from streamrag.data.human.speech import speech_available
from streamrag.data.human.speech_progress import SpeakProgress, is_progress_file, read_spoken, run_settings
from streamrag.data.human.spoken import SpeechCost, SpokenQuestion

ROOT = Path(__file__).resolve().parents[2]


def _spoken(i: int) -> SpokenQuestion:
    """Question i; an odd one with its measurements (available times, CPU by phase), an
    even one without (a line written before they were recorded)."""
    words = ["who", "wrote", f"play{i}"]
    hyps = ((100 / 3, "who"), (1000 / 7, "who rode"), (2000 / 7 + i, " ".join(words)))
    if i % 2 == 0:
        return SpokenQuestion(f"q{i}", " ".join(words), hyps, 1234.5678, 1, 3)
    available = tuple(t + 100 / 9 for t, _ in hyps)
    speech = ((30.0, 400 / 3), (2000 / 9, 1200.25))  # the voice-activity detector's segments
    return SpokenQuestion(
        f"q{i}", " ".join(words), hyps, 1234.5678, 1, 3, available, SpeechCost(0.1, 0.2, 1 / 3, 0.3, 0.05), speech
    )


def test_a_progress_file_is_read_while_its_run_goes_on_as_its_output_will_be(tmp_path: Path) -> None:
    out = tmp_path / "h.jsonl"
    spoken = [_spoken(i) for i in range(3)]
    questions = [(s.interaction_id, s.query) for s in spoken]
    settings = run_settings(questions, chunk_ms=100.0, final_delay_ms=0.0, deterministic=False, seed=0)
    progress = SpeakProgress.open(out, settings, questions, resume=False)
    progress.loaded(0.5)
    for s in spoken[:2]:
        progress.add(s, 1.0)
    partial = progress.path
    with partial.open("a") as f:  # the next line half written
        f.write('{"interaction_id": "q2", "hyp')
    before = partial.read_bytes()
    assert is_progress_file(partial) and read_spoken(partial) == spoken[:2]
    assert partial.read_bytes() == before  # read only: the running writer's file untouched

    out.write_text("".join(json.dumps(s.record()) + "\n" for s in spoken))  # what the run will write
    assert not is_progress_file(out)
    assert [s.heard() for s in spoken] == list(read_hypotheses(out).questions.values())
    assert [s.heard().available_ms is None for s in spoken] == [True, False, True]
    assert [s.heard().speech_ms for s in spoken] == [None, ((30.0, 133.3), (222.2, 1200.2)), None]  # as written: 0.1 ms

    partial.write_text(before.decode().replace('"audio_ms"', '"audio"', 1))
    with pytest.raises(RecordError, match=r"h\.jsonl\.partial:3"):
        read_spoken(partial)
    progress.close()


def _questions_file(path: Path) -> Path:
    short = ["who wrote hamlet", "what is the capital of france", "how tall is mount everest", "when did rome fall"]
    path.write_text("".join(json.dumps({"interaction_id": f"q{i}", "query": q}) + "\n" for i, q in enumerate(short)))
    return path


@pytest.mark.skipif(speech_available() is not None, reason=str(speech_available()))
def test_sigterm_in_a_real_run_then_resume_gives_the_uninterrupted_hypotheses(tmp_path: Path) -> None:
    questions = _questions_file(tmp_path / "q.jsonl")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def speak(out: Path, *extra: str) -> list[str]:
        command = ["speak", str(questions), "--out", str(out), *extra]  # the voice's noise is seeded per question
        return [sys.executable, "-m", "streamrag", "--quiet", *command]

    whole = tmp_path / "whole.jsonl"
    subprocess.run(speak(whole), env=env, check=True, capture_output=True)
    out = tmp_path / "cut.jsonl"
    partial = tmp_path / "cut.jsonl.partial"
    proc = subprocess.Popen(speak(out), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:  # until 2 questions are kept
        if partial.exists() and partial.read_text().count('"interaction_id"') >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "--resume continues" in err and "interrupted (SIGTERM)" in err
    assert not out.exists()
    kept = read_spoken(partial)
    assert 2 <= len(kept) < 4
    subprocess.run(speak(out, "--resume"), env=env, check=True, capture_output=True)
    resumed, uninterrupted = _lines(out), _lines(whole)
    # the kept questions keep the available times measured before the kill
    for s, line in zip(kept, resumed, strict=False):
        assert s.available_ms is not None and [h["available_ms"] for h in line["hypotheses"]] == [
            round(a, 1) for a in s.available_ms
        ]
    assert _without_available(resumed) == _without_available(uninterrupted)  # the same hypotheses and audio times
    assert not partial.exists()


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _without_available(lines: list[dict]) -> list[dict]:
    """The lines without the available times, measured (they differ run to run)."""
    return [
        line | {"hypotheses": [{k: v for k, v in h.items() if k != "available_ms"} for h in line["hypotheses"]]} for line in lines
    ]
