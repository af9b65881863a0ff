"""Real input: keystroke logs read and typed onto questions, spoken questions recognized
offline, and the columns that keep one meaning over hypotheses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from streamrag.base.errors import RecordError
from streamrag.cli import main
from streamrag.data.demo import demo_path
from streamrag.data.human.asr import TypedInput, hypotheses_of
from streamrag.data.human.hypotheses_file import question_hypotheses
from streamrag.data.human.keystrokes import FIELDS, heard, read_keystrokes
from streamrag.data.human.speech import speech_available
from streamrag.data.human.spoken import MAX_UTTERANCE_WORDS, SpokenQuestion, unspeakable, word_error_rate
from streamrag.data.human.typed import typed_keys, typist_profile

ROOT = Path(__file__).resolve().parents[2]
KEYSTROKES = ROOT.parent / "shared" / "data" / "keystrokes"
DEMO = str(demo_path())
TOKYO = "東京はどこ\uff1f"  # "where is Tokyo?": no word an English recognizer writes


def _row(section: str, sentence: str, press: int, letter: str, code: int) -> str:
    return "\t".join(["7", section, sentence, sentence, "1", str(press), str(press + 80), letter, str(code)])


def _log(folder: Path, rows: list[str], name: str = "7_keystrokes.txt") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("\t".join(FIELDS) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return folder


def _typed(text: str, start: int = 1000, step: int = 100) -> list[str]:
    """``text`` as key rows, one press every ``step`` ms (``<`` is a backspace)."""
    rows = []
    for i, ch in enumerate(text):
        letter, code = ("BKSP", 8) if ch == "<" else (ch, 32 if ch == " " else ord(ch.upper()))
        rows.append(_row("s1", "the car", start + i * step, letter, code))
    return rows


def test_a_backspace_into_a_heard_word_revises_it_at_exact_key_times(tmp_path: Path) -> None:
    # "the cat " is heard word by word; two backspaces reach back into "cat"; "r " retypes it.
    rows = _typed("the cat <<r car")
    rows.insert(1, _row("s1", "the car", 1050, "SHIFT", 16))  # a modifier types nothing
    logs = read_keystrokes(_log(tmp_path / "k", rows))
    (sentence,) = logs.participants["7"]
    got = heard(sentence.press_ms, sentence.chars)
    assert got is not None
    shown, times = got
    assert shown == [("the",), ("the", "cat"), ("the", "car"), ("the", "car", "car")]
    assert times == [300.0, 700.0, 1100.0, 1400.0]
    h = hypotheses_of(shown, times)
    assert h.revised == (False, True, False, False) and h.n_revisions == 1


def test_a_malformed_row_names_file_line_and_field_and_is_skipped_only_when_asked(tmp_path: Path) -> None:
    rows = _typed("ab")
    rows.insert(1, "7\ts1\tab\tab\t1\tsoon\t5\ta\t65")
    folder = _log(tmp_path / "k", rows)
    with pytest.raises(RecordError, match=r"7_keystrokes.txt:3: field 'PRESS_TIME'"):
        read_keystrokes(folder)
    logs = read_keystrokes(folder, on_error="skip")
    assert len(logs.skipped) == 1 and "7_keystrokes.txt:3" in logs.skipped[0]
    rows[1] = "7\ts1\tab"
    with pytest.raises(RecordError, match=r":3: field 'row': expected 9 tab-separated fields, got 3"):
        read_keystrokes(_log(tmp_path / "k2", rows))


def test_typing_another_text_is_seeded_and_always_ends_on_that_text(tmp_path: Path) -> None:
    logs = read_keystrokes(_log(tmp_path / "k", _typed("the cat <<<r car is here <<<<ere")))
    profile = typist_profile("7", logs.participants["7"])
    assert profile.runs.rate["s"] > 0  # both runs begin right after a space
    text = "who directed the movie inception in 2010?"
    a = typed_keys(text, profile, np.random.default_rng(3))
    assert a == typed_keys(text, profile, np.random.default_rng(3))
    buffer: list[str] = []
    for ch in a[1]:
        if ch == "\b":
            buffer.pop()
        else:
            buffer.append(ch)
    assert "".join(buffer) == text and a[0] == sorted(a[0])


@pytest.mark.skipif(not KEYSTROKES.is_dir(), reason=f"keystroke logs not found at {KEYSTROKES}")
def test_typed_input_of_real_participants_through_the_analyzer(tmp_path: Path) -> None:
    asr = TypedInput(path=str(KEYSTROKES))
    h = question_hypotheses(asr, "q-1", "what is the capital of france")
    assert h.words[-1] == ("what", "is", "the", "capital", "of", "france") and h.times_ms is not None
    assert h == question_hypotheses(asr, "q-1", "what is the capital of france")
    out = tmp_path / "an"
    assert main(["analyze", DEMO, "--typed", str(KEYSTROKES), "--limit", "4", "--out", str(out), "--no-figures"]) == 0
    table = pd.read_csv(out / "stabilization.csv")
    n_words = [len(q.split()) for q in _demo_queries()[: len(table)]]
    assert table["n_words"].tolist() == n_words
    assert (table["n_hypotheses"] >= table["n_words"]).all()


def _demo_queries() -> list[str]:
    lines = [json.loads(line) for line in Path(DEMO).read_text(encoding="utf-8").splitlines()]
    return [obj["query"] for obj in lines if obj.get("split") == 0]


def test_n_words_counts_the_question_and_hypotheses_have_their_own_column(tmp_path: Path) -> None:
    first = json.loads(Path(DEMO).read_text(encoding="utf-8").splitlines()[0])
    words = first["query"].split()
    steps = [" ".join(words[:1]), "zz", *(" ".join(words[:t]) for t in range(2, len(words) + 1))]
    hyps = tmp_path / "h.jsonl"
    items = [{"t_ms": 100.0 * (i + 1), "text": text} for i, text in enumerate(steps)]
    hyps.write_text(json.dumps({"interaction_id": first["interaction_id"], "hypotheses": items}) + "\n", encoding="utf-8")
    out = tmp_path / "an"
    assert main(["analyze", DEMO, "--ids", str(_ids(tmp_path, first["interaction_id"])), "--asr-hypotheses", str(hyps),
                 "--out", str(out), "--no-figures"]) == 0  # fmt: skip
    row = pd.read_csv(out / "stabilization.csv").iloc[0]
    assert row["n_words"] == len(words) and row["n_hypotheses"] == len(steps)
    assert row["t_sc_ms"] == 100.0 * row["t_sc"]
    assert row["t_sc_words"] == len(steps[int(row["t_sc"]) - 1].split())


def _ids(tmp_path: Path, qid: str) -> Path:
    path = tmp_path / "ids.txt"
    path.write_text(qid + "\n", encoding="utf-8")
    return path


def test_word_error_rate_counts_edits_on_normalized_words() -> None:
    assert word_error_rate("Who won in 2023?", "who won in two thousand twenty three") == (4, 4)
    assert word_error_rate("the cat sat", "the cat sat") == (0, 3)
    assert word_error_rate("the cat sat", "a cat") == (2, 3)


@pytest.mark.skipif(speech_available() is not None, reason=str(speech_available()))
def test_a_spoken_question_becomes_timed_hypotheses_the_analyzer_reads(tmp_path: Path) -> None:
    out = tmp_path / "spoken.jsonl"
    assert main(["--quiet", "speak", DEMO, "--limit", "2", "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2
    for line in lines:
        times = [h["t_ms"] for h in line["hypotheses"]]
        assert times == sorted(times) and times[-1] <= line["audio_ms"] + 1e-6
        assert line["hypotheses"][-1]["text"] == line["final"]
        assert line["word_edits"] == word_error_rate(line["query"], line["final"])[0]
    summary = json.loads((tmp_path / "spoken.jsonl.summary.json").read_text())
    assert summary["n_questions"] == 2 and summary["cpu_s"] > 0
    an = tmp_path / "an"
    assert main(["analyze", DEMO, "--limit", "2", "--asr-hypotheses", str(out), "--out", str(an), "--no-figures"]) == 0
    assert pd.read_csv(an / "stabilization.csv")["n_words"].tolist() == [len(q.split()) for q in _demo_queries()[:2]]


def test_fit_input_fits_the_logged_revisions_and_checks_held_out_participants(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "k"
    for pid in range(6):
        rows = [r.replace("7\t", f"{pid}\t", 1) for r in _typed("the cat <<r car is here", step=100 + 20 * pid)]
        _log(folder, rows, name=f"{pid}_keystrokes.txt")
    out = tmp_path / "fit.json"
    assert main(["fit-input", "--keystrokes", str(folder), "--held-out-share", "0.34", "--out", str(out)]) == 0
    fit = json.loads(out.read_text())["typed"]
    assert (fit["n_fit_participants"], fit["n_held_out_participants"]) == (4, 2)
    # Each sentence: 5 words, 1 revision event over 4 later word arrivals, rewriting 1 word.
    assert fit["fit"]["p"]["value"] == pytest.approx(0.25) and fit["fit"]["r_mean"]["value"] == 1.0
    assert fit["held_out_logged"]["revisions_per_session"]["value"] == 1.0
    assert "typed model" in capsys.readouterr().out


@pytest.mark.skipif(speech_available() is not None, reason=str(speech_available()))
def test_deterministic_speech_gives_the_same_hypotheses_every_run(tmp_path: Path) -> None:
    # Piper draws noise inside its voice model from a generator that runs on from call to
    # call: unseeded, the same text sounds different each time; seeded, it is a function of
    # text and seed, in any voice and after any other text. --deterministic (noise scales 0)
    # gives the same file too.
    from streamrag.data.human.speech import Speaker

    text = "which company had more employees at the end of 2022"
    noisy = Speaker()
    assert not np.array_equal(noisy.audio(text), noisy.audio(text))
    seeded = noisy.audio(text, noise_seed=7)
    assert np.array_equal(Speaker().audio(text, noise_seed=7), seeded)
    assert not np.array_equal(noisy.audio(text, noise_seed=8), seeded)
    runs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        assert main(["--quiet", "speak", DEMO, "--limit", "1", "--deterministic", "--out", str(out)]) == 0
        runs.append(_heard(out))
    assert runs[0] == runs[1]


@pytest.mark.skipif(not KEYSTROKES.is_dir(), reason=f"keystroke logs not found at {KEYSTROKES}")
def test_every_planned_backspace_run_is_typed_so_runs_per_key_match_the_log() -> None:
    # Runs drawn close together overlap; each must still happen (a second slip while
    # retyping), not be dropped: the model then starts as many runs per key as the
    # participants' logs say (dropping the overlaps gave 0.938 of the logged rate).
    # Runs per key are the logged ones: each class's runs (first in a word or later, as the
    # model draws them) over its opportunities in the participant's shown sentences.
    from streamrag.data.human.backspace_runs import START_CLASSES, logged_runs, opportunities
    from streamrag.data.human.keystrokes import read_keystrokes
    from streamrag.data.human.typed import split_participants, typist_profile

    text = "what was the closing price of halvorsen energy stock on march 1 2024"
    rng = np.random.default_rng(0)
    logs = read_keystrokes(KEYSTROKES, on_error="skip")
    fit, _ = split_participants(sorted(logs.participants), 0.2, 0)
    expected = typed = 0.0
    for pid in fit:
        sentences = logs.participants[pid]
        chances, runs = dict.fromkeys(START_CLASSES, 0), dict.fromkeys(START_CLASSES, 0)
        for s in sentences:
            for cls, n in opportunities(" ".join(s.sentence.split())).items():
                chances[cls] += n
            for run in logged_runs(s.chars):
                runs[run.start] += 1
        rates = sum(min(1.0, runs[c] / chances[c]) * n for c, n in opportunities(text).items() if chances[c])
        profile = typist_profile(pid, sentences)
        for _ in range(20):
            _, keys = typed_keys(text, profile, rng)
            typed += sum(1 for i, ch in enumerate(keys) if ch == "\b" and keys[i - 1] != "\b")
            expected += rates
    assert 0.97 < typed / expected < 1.03


class _FakeSpeaker:
    """A stand-in voice and recognizer: hears each question as it was asked, at times
    that do not round to a tenth of a ms (so a resume that rounded them would show)."""

    calls = 0
    stop_at: int | None = None
    deaf = False
    """Hears nothing: no hypothesis at all (a recognizer that heard only noise)."""

    def __init__(self, **_: object) -> None:
        pass

    def speak(self, qid: str, query: str) -> SpokenQuestion:
        type(self).calls += 1
        if type(self).stop_at is not None and type(self).calls == type(self).stop_at:
            raise KeyboardInterrupt
        words = query.lower().split()
        if type(self).deaf:
            return SpokenQuestion(qid, query, (), 1234.5678, len(words), len(words))
        return SpokenQuestion(qid, query, ((100 / 3, words[0]), (1000 / 7, " ".join(words))), 1234.5678, 0, len(words))


@pytest.fixture
def fake_speech(monkeypatch: pytest.MonkeyPatch) -> type[_FakeSpeaker]:
    import multiprocessing

    import streamrag.base.system.processes as processes
    import streamrag.data.human.speech as speech

    _FakeSpeaker.calls, _FakeSpeaker.stop_at, _FakeSpeaker.deaf = 0, None, False
    monkeypatch.setattr(speech, "Speaker", _FakeSpeaker)
    monkeypatch.setattr(speech, "speech_available", lambda: None)
    # The stand-in lives in this process only: ``speak --jobs N`` must fork its workers,
    # which it does only while no other thread runs; a thread an earlier test on this
    # worker left behind would make it spawn workers that load the real recognizer.
    monkeypatch.setattr(processes, "mp_context", lambda: multiprocessing.get_context("fork"))
    return _FakeSpeaker


def _summary_without_cost(out: Path) -> dict:
    """The summary without what this machine measured (CPU seconds, compute delays)."""
    summary = json.loads(out.with_name(out.name + ".summary.json").read_text())
    return {k: v for k, v in summary.items() if not k.startswith("cpu_s") and k != "compute"}


def _heard(out: Path) -> list[dict]:
    """The hypotheses file without the available times (measured: they differ run to run)."""
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        for h in line["hypotheses"]:
            assert h.pop("available_ms") >= h["t_ms"]
    return lines


def test_an_interrupted_speak_resumes_to_the_file_an_uninterrupted_run_writes(tmp_path: Path, fake_speech, capsys) -> None:
    whole = tmp_path / "whole.jsonl"
    assert main(["--quiet", "speak", DEMO, "--limit", "5", "--out", str(whole)]) == 0
    assert not (tmp_path / "whole.jsonl.partial").exists()  # a finished run leaves no progress file

    out = tmp_path / "cut.jsonl"
    fake_speech.calls, fake_speech.stop_at = 0, 4  # Ctrl-C (or SIGTERM) while speaking the 4th
    assert main(["--quiet", "speak", DEMO, "--limit", "5", "--out", str(out)]) != 0
    assert not out.exists()
    assert "3 of 5 questions are kept" in capsys.readouterr().err
    partial = tmp_path / "cut.jsonl.partial"
    kept = [json.loads(line) for line in partial.read_text().splitlines()]
    assert "speak_progress" in kept[0]  # the header: the settings a resume must match
    assert sum("interaction_id" in line for line in kept) == 3  # the 3 questions heard

    # A rerun without --resume would throw them away: refused, the file kept.
    assert main(["--quiet", "speak", DEMO, "--limit", "5", "--out", str(out)]) == 1
    assert "--resume continues it" in capsys.readouterr().err and partial.exists()
    # Other settings than the unfinished run's: refused.
    assert main(["--quiet", "speak", DEMO, "--limit", "5", "--chunk-ms", "50", "--out", str(out), "--resume"]) == 1
    assert "--chunk-ms" in capsys.readouterr().err
    assert main(["--quiet", "speak", DEMO, "--limit", "6", "--out", str(out), "--resume"]) == 1
    assert "the selected questions" in capsys.readouterr().err

    # kill -9 mid-write leaves a cut last line: dropped, that question spoken again.
    with partial.open("a") as f:
        f.write('{"interaction_id": "x", "hyp')
    fake_speech.calls, fake_speech.stop_at = 0, None
    assert main(["--quiet", "speak", DEMO, "--limit", "5", "--out", str(out), "--resume"]) == 0
    assert fake_speech.calls == 2  # only the questions after the 3 kept
    assert out.read_bytes() == whole.read_bytes()
    assert _summary_without_cost(out) == _summary_without_cost(whole)
    assert not partial.exists()


def test_a_damaged_progress_file_is_one_line_naming_its_line(tmp_path: Path, fake_speech, capsys) -> None:
    out = tmp_path / "h.jsonl"
    fake_speech.stop_at = 3
    assert main(["--quiet", "speak", DEMO, "--limit", "4", "--out", str(out)]) != 0
    partial = tmp_path / "h.jsonl.partial"
    lines = partial.read_text().splitlines()
    partial.write_text("\n".join([lines[0], "not json", *lines[2:]]) + "\n")
    capsys.readouterr()
    assert main(["--quiet", "speak", DEMO, "--limit", "4", "--out", str(out), "--resume"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "h.jsonl.partial:2:" in err and "not JSON" in err


def test_speak_in_two_processes_writes_what_one_writes(tmp_path: Path, fake_speech) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main(["--quiet", "speak", DEMO, "--limit", "6", "--out", str(one)]) == 0
    assert main(["--quiet", "speak", DEMO, "--limit", "6", "--jobs", "2", "--out", str(two)]) == 0
    assert one.read_bytes() == two.read_bytes()
    assert _summary_without_cost(one) == _summary_without_cost(two)


def _questions_jsonl(path: Path, queries: list[str]) -> Path:
    path.write_text("".join(json.dumps({"interaction_id": f"q{i}", "query": q}) + "\n" for i, q in enumerate(queries)))
    return path


def test_unspeakable_and_overlong_questions_are_skipped_counted_and_the_run_ends_clean(
    tmp_path: Path, fake_speech, capsys
) -> None:
    # Questions without a word the recognizer can write crashed the summary (WER of no
    # reference words) after the work, leaving OUT.partial; now each is skipped and counted.
    long = " ".join(["word"] * (MAX_UTTERANCE_WORDS + 1))
    queries = ["who wrote hamlet", TOKYO, "?!", "😀 😀", long, "when did rome fall", "what is the capital"]
    questions = _questions_jsonl(tmp_path / "q.jsonl", queries)
    out = tmp_path / "h.jsonl"
    assert main(["--quiet", "speak", str(questions), "--limit", "6", "--out", str(out)]) == 0
    assert fake_speech.calls == 2  # the skipped ones count towards --limit, as analyze reads the first 6
    said = capsys.readouterr()
    assert said.err.splitlines() == [
        f"{questions}: skipped 3 questions whose field 'query' has no speakable words (lines 2, 3, 4)",
        f"{questions}: skipped 1 question whose field 'query' has over {MAX_UTTERANCE_WORDS} words (line 5)",
    ]
    assert "2 questions," in said.out and "; 4 skipped →" in said.out
    assert [json.loads(line)["interaction_id"] for line in out.read_text().splitlines()] == ["q0", "q5"]
    summary = json.loads((tmp_path / "h.jsonl.summary.json").read_text())
    assert (summary["n_questions"], summary["n_skipped"], summary["wer"]) == (2, 4, 0.0)
    assert [(s["line"], s["interaction_id"], s["reason"]) for s in summary["skipped"]] == [
        (2, "q1", "no speakable words"),
        (3, "q2", "no speakable words"),
        (4, "q3", "no speakable words"),
        (5, "q4", f"over {MAX_UTTERANCE_WORDS} words"),
    ]
    assert not (tmp_path / "h.jsonl.partial").exists()

    # Nothing left to speak: refused in one line naming file, lines and field; nothing written.
    only = _questions_jsonl(tmp_path / "only.jsonl", [TOKYO])
    assert main(["--quiet", "speak", str(only), "--out", str(tmp_path / "o.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"streamrag: error: {only}: no selected question can be spoken (field 'query': no speakable words on line 1)"
    assert not list(tmp_path.glob("o.jsonl*"))


def test_what_is_spoken_is_a_question_of_1_to_max_utterance_words() -> None:
    assert unspeakable(" ".join(["word"] * MAX_UTTERANCE_WORDS)) is None
    assert unspeakable(" ".join(["word"] * (MAX_UTTERANCE_WORDS + 1))) == f"over {MAX_UTTERANCE_WORDS} words"
    for query in ("", "  ", "?!", "'", "😀", TOKYO, "— …"):
        assert unspeakable(query) == "no speakable words", query
    assert unspeakable("Who is 習近平?") is None  # words the recognizer can write: spoken
    from streamrag.commands.speak import EPILOG

    assert f"over {MAX_UTTERANCE_WORDS} words" in " ".join(EPILOG.split())  # --help says the declared cap


def test_a_run_that_heard_nothing_summarizes_without_a_denominator(tmp_path: Path, fake_speech, capsys) -> None:
    fake_speech.deaf = True
    out = tmp_path / "h.jsonl"
    assert main(["--quiet", "speak", DEMO, "--limit", "2", "--out", str(out)]) == 0
    assert "0 hypotheses, n/a revised; 2 heard nothing" in capsys.readouterr().out
    summary = json.loads((tmp_path / "h.jsonl.summary.json").read_text())
    assert (summary["n_hypotheses"], summary["revised_share"], summary["revisions_per_question"]) == (0, None, None)
    assert summary["wer"] == 1.0 and out.read_text() == ""
    assert not (tmp_path / "h.jsonl.partial").exists()


def test_a_finished_output_is_kept_unless_forced_and_resuming_it_is_done_or_refused(tmp_path: Path, fake_speech, capsys) -> None:
    # --resume on a finished output used to speak every question again and overwrite it,
    # whatever the settings; a rerun without --resume overwrote it too.
    out = tmp_path / "h.jsonl"
    summary = tmp_path / "h.jsonl.summary.json"
    argv = ["--quiet", "speak", DEMO, "--limit", "3", "--out", str(out)]
    assert main(argv) == 0
    finished = (out.read_bytes(), summary.read_bytes())
    capsys.readouterr()

    def refused(*extra: str) -> str:
        fake_speech.calls = 0
        assert main([*argv, *extra]) == 1
        assert fake_speech.calls == 0 and (out.read_bytes(), summary.read_bytes()) == finished
        assert not (tmp_path / "h.jsonl.partial").exists()
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1
        return err

    assert "a finished speak output is here: --force replaces it" in refused()
    assert "other settings (--chunk-ms: 100.0, now 50.0)" in refused("--resume", "--chunk-ms", "50")
    assert "other settings (--seed: 0, now 1)" in refused("--resume", "--seed", "1")
    assert "the selected questions" in refused("--resume", "--limit", "4")

    fake_speech.calls = 0
    assert main([*argv, "--resume"]) == 0  # the same settings: nothing left to do
    assert fake_speech.calls == 0 and (out.read_bytes(), summary.read_bytes()) == finished
    assert "done (3 questions spoken with these settings); nothing to resume" in capsys.readouterr().out

    assert main([*argv, "--force", "--chunk-ms", "50"]) == 0  # --force replaces it
    assert fake_speech.calls == 3 and json.loads(summary.read_text())["settings"]["chunk_ms"] == 50.0
    summary.unlink()  # a finished output whose settings are not recorded: --resume cannot tell
    replaced = out.read_bytes()
    assert main([*argv, "--resume", "--chunk-ms", "50"]) == 1
    assert "does not record" in capsys.readouterr().err and out.read_bytes() == replaced


@pytest.mark.skipif(speech_available() is not None, reason=str(speech_available()))
def test_real_speech_in_two_processes_writes_the_hypotheses_one_process_writes(tmp_path: Path) -> None:
    # Piper draws its voice's noise in its ONNX graph, from a generator onnxruntime seeds
    # once per loaded graph: the audio of a question depended on the process and the
    # questions it spoke before, so --jobs 2 (and every rerun) wrote other hypotheses.
    # Seeded per question (--seed and its id), the voice keeps its noise and the file its bytes.
    questions = _questions_jsonl(tmp_path / "q.jsonl", ["who wrote hamlet", "when did rome fall", "how tall is everest"])
    files = {}
    for name, extra in (("one", []), ("two", ["--jobs", "2"]), ("seed1", ["--seed", "1"])):
        files[name] = tmp_path / f"{name}.jsonl"
        assert main(["--quiet", "speak", str(questions), *extra, "--out", str(files[name])]) == 0
    assert _heard(files["one"]) == _heard(files["two"])  # the speech segments too
    assert all(line["speech_ms"] for line in _heard(files["one"]))
    assert _summary_without_cost(files["one"]) == _summary_without_cost(files["two"])
    assert _heard(files["seed1"]) != _heard(files["one"])  # the noise is there, drawn from the seed


@pytest.mark.skipif(speech_available() is not None, reason=str(speech_available()))
def test_a_question_is_heard_the_same_whatever_the_recognizer_heard_before() -> None:
    # PocketSphinx adapts its features over every utterance; each question must start
    # afresh, or its hypotheses depend on its position (and resumed or parallel runs differ).
    from streamrag.data.human.speech import Speaker

    queries = _demo_queries()[:4]
    speaker = Speaker(deterministic=True)
    audio = [speaker.audio(q) for q in queries]
    in_order = [speaker.recognize(pcm).hypotheses for pcm in audio]
    for pcm, first_heard in zip(audio, in_order, strict=True):
        assert Speaker(deterministic=True).recognize(pcm).hypotheses == first_heard


@pytest.mark.skipif(speech_available() is not None, reason=str(speech_available()))
def test_the_voice_activity_detector_finds_the_speech_and_the_silence_a_pause_leaves() -> None:
    # Silero VAD on Piper's audio: one question's speech ends within the audio, and the
    # pause Piper's voice makes at a comma is a silence between segments.
    from streamrag.data.human.speech import Speaker
    from streamrag.data.human.voice_activity import MIN_SILENCE_MS

    speaker = Speaker(deterministic=True)
    one = speaker.speak("q", "who directed the movie inception")
    assert one.speech_ms is not None and len(one.speech_ms) == 1
    ((start, end),) = one.speech_ms
    assert 0 <= start < 300 and one.audio_ms - 300 < end <= one.audio_ms
    two = speaker.speak("q2", "who directed inception, and when was it released")
    assert two.speech_ms is not None and len(two.speech_ms) == 2
    silence = two.speech_ms[1][0] - two.speech_ms[0][1]
    assert silence >= MIN_SILENCE_MS
    assert speaker.speak("q2", "who directed inception, and when was it released").speech_ms == two.speech_ms
