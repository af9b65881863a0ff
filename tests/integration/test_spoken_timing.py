"""Spoken timing as a user hears it: a hypothesis is available when the recognizer, fed at
real-time pace, has produced it (streamrag.data.human.speech.available_times); the file
records both times, and ``data.asr.timing`` / ``analyze --asr-timing`` pick one."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from streamrag.cli import main
from streamrag.data.demo import demo_path
from streamrag.data.human.asr import HypothesesFile
from streamrag.data.human.hypotheses_file import question_hypotheses, read_hypotheses
from streamrag.data.human.speech import available_times, speech_available
from streamrag.data.human.spoken import SpeechCost, SpokenQuestion
from streamrag.simulator.applies import refusals
from streamrag.simulator.scenario import load_scenario

DEMO = str(demo_path())


def test_a_step_is_decoded_once_it_has_arrived_and_the_step_before_is_done() -> None:
    # arrivals 100, 200, 300, 400 ms; costs 30, 150, 20, 5 ms:
    # e0 = 100 + 30 = 130; e1 = max(200, 130) + 150 = 350 (it kept up);
    # e2 = max(300, 350) + 20 = 370 (it waits for step 1: behind); e3 = max(400, 370) + 5 = 405.
    assert available_times([100, 200, 300, 400], [30, 150, 20, 5]) == [130, 350, 370, 405]
    assert available_times([], []) == []


def _ticking(step_s: float) -> Callable[[], float]:
    """A clock that advances ``step_s`` at every reading: each recognizer step costs exactly
    that (a power of two, so the differences are exact)."""
    now = [0.0]

    def clock() -> float:
        now[0] += step_s
        return now[0]

    return clock


def test_the_recognizer_times_each_hypothesis_with_the_injected_step_costs() -> None:
    pytest.importorskip("pocketsphinx", reason="the speech extra is not installed")
    pytest.importorskip("piper", reason="the speech extra is not installed")
    from streamrag.data.human.speech import Speaker

    # The final transcript comes 50 ms after the audio ends (when it differs from the last partial).
    fast = Speaker(deterministic=True, final_delay_ms=50.0, step_clock=_ticking(0.03125))
    pcm = fast.audio("which company had more employees at the end of the year")
    n_chunks = math.ceil(len(pcm) / 1600)  # 100 ms chunks of 16 kHz audio
    end_ms = len(pcm) / 16
    heard = fast.recognize(pcm)
    assert heard.decode_thread_cpu_s == (n_chunks + 1) * 0.03125  # every chunk and closing the utterance
    # 31.25 ms a step keeps up with 100 ms chunks: every hypothesis is 31.25 ms late, the
    # final too (its step arrives 50 ms after the last chunk's, which was done 31.25 ms after it).
    assert len(heard.hypotheses) > 3 and heard.available_ms is not None
    assert [a - t for (t, _), a in zip(heard.hypotheses, heard.available_ms, strict=True)] == [31.25] * len(heard.hypotheses)

    slow = Speaker(deterministic=True, final_delay_ms=50.0, step_clock=_ticking(0.25))
    timed = slow.recognize(pcm)
    assert timed.hypotheses == heard.hypotheses and timed.available_ms is not None  # the costs move no audio time
    # 250 ms a step falls behind: chunk k (ending at 100 (k + 1) ms) is done at 100 + 250 (k + 1),
    # closing the utterance one step after the last chunk.
    for (t, _), a in zip(timed.hypotheses, timed.available_ms, strict=True):
        assert a == (100 + 250 * (n_chunks + 1) if t > end_ms else 100 + 250 * math.ceil(t / 100))

    # Without clocks the data layer measures nothing (it reads no clock of its own).
    unmeasured = Speaker(deterministic=True, final_delay_ms=50.0)
    assert unmeasured.recognize(pcm) == (heard.hypotheses, None, None)
    spoken = unmeasured.speak("q", "which company had more employees at the end of the year")
    assert (spoken.available_ms, spoken.cost) == (None, None) and "available_ms" not in spoken.record()["hypotheses"][0]


def _demo_questions() -> list[dict]:
    return [json.loads(line) for line in Path(DEMO).read_text(encoding="utf-8").splitlines()]


def _hypotheses_file(path: Path, delay_ms: float | None) -> Path:
    """Every demo question's word prefixes, word t at 250 (t + 1) ms, available ``delay_ms``
    later (None: no available times, a file written before they were recorded)."""
    with path.open("w", encoding="utf-8") as fh:
        for record in _demo_questions():
            words = record["query"].split()
            hyps = []
            for t in range(len(words)):
                h: dict = {"t_ms": 250.0 * (t + 1), "text": " ".join(words[: t + 1])}
                if delay_ms is not None:
                    h["available_ms"] = h["t_ms"] + delay_ms
                hyps.append(h)
            fh.write(json.dumps({"interaction_id": record["interaction_id"], "hypotheses": hyps}) + "\n")
    return path


def test_the_reader_keeps_both_times_and_a_file_without_available_times_reads_as_before(tmp_path: Path) -> None:
    timed = read_hypotheses(_hypotheses_file(tmp_path / "timed.jsonl", 400.0))
    plain = read_hypotheses(_hypotheses_file(tmp_path / "plain.jsonl", None))
    qid, h = next(iter(timed.questions.items()))
    assert h.times_ms is not None and h.available_ms == tuple(t + 400.0 for t in h.times_ms)
    assert plain.questions[qid].available_ms is None and plain.questions[qid].times_ms == h.times_ms
    query = _demo_questions()[0]["query"]
    available = question_hypotheses(HypothesesFile(path=str(tmp_path / "timed.jsonl"), timing="available"), qid, query)
    assert available.times_ms == h.available_ms
    audio = question_hypotheses(HypothesesFile(path=str(tmp_path / "timed.jsonl")), qid, query)
    assert audio.times_ms == h.times_ms  # the default: audio times, as before


def _analyze(out: Path, *extra: str) -> pd.DataFrame:
    assert main(["analyze", DEMO, "--limit", "6", "--out", str(out), "--no-figures", "-q", *extra]) == 0
    table = pd.read_csv(out / "stabilization.csv")
    return table[table["skip_reason"].isna()]


def test_available_timing_moves_every_event_by_the_recorded_delay(tmp_path: Path, capsys) -> None:
    hyps = str(_hypotheses_file(tmp_path / "h.jsonl", 400.0))
    audio = _analyze(tmp_path / "audio", "--asr-hypotheses", hyps)
    available = _analyze(tmp_path / "available", "--asr-hypotheses", hyps, "--asr-timing", "available")
    assert (audio["t_sc_ms"] == audio["t_sc"] * 250.0).all()
    assert (available["t_sc_ms"] == available["t_sc"] * 250.0 + 400.0).all()
    assert available["t_sc"].tolist() == audio["t_sc"].tolist()  # the same hypotheses, later

    sim = tmp_path / "sim"
    argv = ["simulate", DEMO, "--scenario", "paper_rq3", "--set", "select.population=all", "--out", str(sim), "-q"]
    sets = ["--set", "data.asr.kind=file", "--set", f"data.asr.path={hyps}", "--set", "data.asr.timing=available"]
    assert main([*argv, *sets]) == 0
    words = [json.loads(line) for line in (sim / "trace.jsonl").read_text().splitlines() if '"kind":"word"' in line]
    assert [e["t_us"] for e in words[:3]] == [650_000, 900_000, 1_150_000]

    # A file without available times: refused where they are asked for, in one line.
    plain = str(_hypotheses_file(tmp_path / "plain.jsonl", None))
    capsys.readouterr()
    rc = main(
        ["analyze", DEMO, "--limit", "2", "--out", str(tmp_path / "o"), "--asr-hypotheses", plain, "--asr-timing", "available"]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "has no available_ms" in err[0] and "data.asr.timing = 'audio'" in err[0]


def test_the_timing_setting_is_refused_where_it_does_not_apply(tmp_path: Path, capsys) -> None:
    hyps = str(_hypotheses_file(tmp_path / "h.jsonl", 400.0))
    assert main(["analyze", DEMO, "--out", str(tmp_path / "a"), "--asr-timing", "available"]) == 1
    assert "--asr-timing applies to recorded hypotheses" in capsys.readouterr().err
    assert main(["analyze", DEMO, "--out", str(tmp_path / "b"), "--asr-revisions", "0.2", "--asr-timing", "audio"]) == 1
    assert "--asr-timing applies to recorded hypotheses" in capsys.readouterr().err
    # another kind of input has no such setting
    sim = ["simulate", DEMO, "--scenario", "paper_rq3", "--out", str(tmp_path / "c"), "-q"]
    assert main([*sim, "--set", "data.asr.p=0.2", "--set", "data.asr.timing=available"]) == 1
    assert "data.asr.timing" in capsys.readouterr().err
    # and, like all of data, it does not apply to a table (analyzed already)
    rs = load_scenario("paper_rq3", ["data.asr.kind=file", f"data.asr.path={hyps}", "data.asr.timing=available"])
    assert rs.scenario.data.asr is not None and rs.scenario.data.asr.timing == "available"  # type: ignore[union-attr]
    (line,) = refusals(rs, "table")
    assert line.startswith("data.asr") and "does not apply to a replay of a table" in line
    assert refusals(rs, "data") == []


@pytest.mark.parametrize(
    ("hypotheses", "field", "problem"),
    [
        ([{"t_ms": 100, "available_ms": 90, "text": "a"}], "hypotheses[0].available_ms", "before its t_ms"),
        (
            [{"t_ms": 100, "available_ms": 300, "text": "a"}, {"t_ms": 200, "available_ms": 250, "text": "a b"}],
            "hypotheses[1].available_ms",
            "before hypotheses[0].available_ms",
        ),
        (
            [{"t_ms": 100, "available_ms": 130, "text": "a"}, {"t_ms": 200, "text": "a b"}],
            "hypotheses[1].available_ms",
            "missing",
        ),
        ([{"t_ms": 100, "text": "a"}, {"t_ms": 200, "available_ms": 230, "text": "a b"}], "hypotheses[1].available_ms", "given"),
        ([{"t_ms": 100, "available_ms": "soon", "text": "a"}], "hypotheses[0].available_ms", "finite number"),
    ],
)
def test_bad_available_times_are_one_line_naming_file_line_and_field(
    tmp_path: Path, hypotheses: list, field: str, problem: str, capsys
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"interaction_id": "ok", "hypotheses": [{"t_ms": 1, "text": "a"}]}\n'
        + json.dumps({"interaction_id": "x", "hypotheses": hypotheses})
        + "\n"
    )
    assert main(["analyze", DEMO, "--out", str(tmp_path / "o"), "--asr-hypotheses", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}:2" in err[0] and field in err[0] and problem in err[0], err


class _TimedSpeaker:
    """A stand-in voice and recognizer with made-up measurements: every question is 2 s of
    audio, heard as its first word at 500 ms then whole at 2000 ms, each available 40 ms and
    then 90 ms later; its phases cost 0.2, 0.3, 0.5 s of CPU (0.4 s of it the decoder's)."""

    def __init__(self, **_: object) -> None:
        pass

    def speak(self, qid: str, query: str) -> SpokenQuestion:
        words = query.lower().split()
        shown = ((500.0, words[0]), (2000.0, " ".join(words)))
        return SpokenQuestion(qid, query, shown, 2000.0, 0, len(words), (540.0, 2090.0), SpeechCost(0.2, 0.3, 0.5, 0.4))


def test_speak_records_available_times_and_the_cpu_per_audio_second_by_phase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import streamrag.data.human.speech as speech

    monkeypatch.setattr(speech, "Speaker", _TimedSpeaker)
    monkeypatch.setattr(speech, "speech_available", lambda: None)
    out = tmp_path / "h.jsonl"
    assert main(["--quiet", "speak", DEMO, "--out", str(out)]) == 0  # every demo question (analyzed below)
    n = len(_demo_questions())
    line = json.loads(out.read_text().splitlines()[0])
    assert [(h["t_ms"], h["available_ms"]) for h in line["hypotheses"]] == [(500.0, 540.0), (2000.0, 2090.0)]
    summary = json.loads((tmp_path / "h.jsonl.summary.json").read_text())
    compute = summary["compute"]
    assert (compute["n_measured"], compute["audio_s"]) == (n, 2.0 * n)
    # per question 0.2 + 0.3 + 0.5 s of CPU over 2 s of audio
    assert (compute["voice_cpu_s_per_audio_s"], compute["synthesis_cpu_s_per_audio_s"]) == (0.1, 0.15)
    assert (compute["decode_cpu_s_per_audio_s"], compute["decode_thread_cpu_s_per_audio_s"]) == (0.25, 0.2)
    assert compute["cpu_s_per_audio_s"] == 0.5
    # delays 40 and 90 ms, n times each: median 65, p90 90 (numpy's linear percentile)
    assert (compute["delay_ms_median"], compute["delay_ms_p90"], compute["delay_ms_max"]) == (65.0, 90.0, 90.0)
    assert (summary["first_partial_ms_median"], compute["first_partial_available_ms_median"]) == (500.0, 540.0)
    # the first word is kept, the rest added: no revoke, every position but the first settles at the end
    assert (summary["n_revokes"], summary["revokes_per_s"], summary["edit_overhead"]) == (0, 0.0, 0.0)
    assert "compute delay median 65 ms)" in capsys.readouterr().out
    an = tmp_path / "an"
    table = _analyze(an, "--asr-hypotheses", str(out), "--asr-timing", "available")
    assert set(table["t_suf_ms"].dropna()) <= {540.0, 2090.0}


@pytest.mark.skipif(speech_available() is not None, reason=str(speech_available()))
def test_a_real_speak_run_records_available_times_no_earlier_than_audio_times(tmp_path: Path) -> None:
    out = tmp_path / "h.jsonl"
    assert main(["--quiet", "speak", DEMO, "--limit", "1", "--deterministic", "--out", str(out)]) == 0
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    t = [h["t_ms"] for h in line["hypotheses"]]
    a = [h["available_ms"] for h in line["hypotheses"]]
    assert all(x <= y for x, y in zip(t, a, strict=True)) and a == sorted(a)
    compute = json.loads((tmp_path / "h.jsonl.summary.json").read_text())["compute"]
    assert (
        compute["n_measured"] == 1 and compute["decode_cpu_s"] > 0 and compute["voice_cpu_s"] == 0.0
    )  # deterministic: no graph to seed
