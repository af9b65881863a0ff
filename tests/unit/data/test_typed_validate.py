"""The typed model's backspace-run structure, and ``fit-input --validate``: on synthetic logs
written in the real 136M Keystrokes format, and on the shared logs when present."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from streamrag.base.errors import InputError
from streamrag.cli import main
from streamrag.data.human.backspace_runs import RunPools, logged_runs, plan_runs, run_pools
from streamrag.data.human.input_fit import read_fit
from streamrag.data.human.keystrokes import FIELDS, read_keystrokes
from streamrag.data.human.typed import clean_word_times, type_keys, typists_of
from streamrag.data.human.typed_validate import STATISTICS

ROOT = Path(__file__).resolve().parents[3]
KEYSTROKES = ROOT.parent / "shared" / "data" / "keystrokes"
SENTENCES = (
    "the cat sat on the mat",
    "we went home after the game",
    "a small dog ran down the road",
    "please call me back tomorrow",
    "she reads a book every night",
)


def _keys(text: str, rng: np.random.Generator, across_share: float) -> str:
    """``text`` typed with a run after half the words (the last one aside): one that
    deletes a wrong last letter and the space after it (across a space) with
    ``across_share``, else one that deletes a wrong letter mid-word. ``<`` is a backspace."""
    words = text.split(" ")
    out = []
    for i, word in enumerate(words):
        u = rng.random()
        if i == len(words) - 1 or len(word) < 2 or u >= 0.5:
            out.append(word + ("" if i == len(words) - 1 else " "))
        elif u < 0.5 * across_share:
            out.append(word[:-1] + "x " + "<<" + word[-1] + " ")
        else:
            out.append(word[:1] + "q<" + word[1:] + " ")
    return "".join(out)


def _write_logs(folder: Path, pids: list[str], across_share: float, *, seed: int = 0, n_sentences: int = 10) -> Path:
    """One ``<id>_keystrokes.txt`` per participant, in the real format (header, nine
    tab-separated fields, ``BKSP`` with key code 8)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for pid in pids:
        rows, t = ["\t".join(FIELDS)], 1_473_275_876_010
        for n in range(n_sentences):
            text = SENTENCES[n % len(SENTENCES)]
            for ch in _keys(text, rng, across_share):
                t += int(rng.gamma(2.0, 110.0)) + (int(rng.exponential(2000)) if rng.random() < 0.05 else 0)
                letter, code = ("BKSP", 8) if ch == "<" else (ch, 32 if ch == " " else ord(ch.upper()))
                rows.append("\t".join([pid, f"{pid}{n:03d}", text, text, "1", str(t), str(t + 80), letter, str(code)]))
            t += 5000
        (folder / f"{pid}_keystrokes.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def _across(chars_list: list[str]) -> float:
    runs = [r for chars in chars_list for r in logged_runs(chars)]
    return sum(r.across_space for r in runs) / len(runs)


@pytest.mark.parametrize("across_share", [0.5, 0.2])
def test_the_fitted_model_reaches_across_a_space_as_often_as_the_logs(tmp_path: Path, across_share: float) -> None:
    logs = read_keystrokes(_write_logs(tmp_path / "k", [str(p) for p in range(101, 111)], across_share))
    logged = _across([s.chars for ss in logs.participants.values() for s in ss])
    assert abs(logged - across_share) < 0.08
    pool = typists_of(logs)
    rng = np.random.default_rng(1)
    typed = [type_keys(text, pool, rng)[1] for _ in range(60) for text in SENTENCES]
    assert abs(_across(typed) - logged) < 0.05


def test_a_logged_run_is_described_by_its_start_reach_and_retyping() -> None:
    # "the cax " ⌫⌫ "t ": after a space, reaches back 2 across it, retyped differently;
    # "ab" ⌫ "b": mid-word (2 in), 1 back, retyped the same.
    first, second = logged_runs("the cax \b\bt ab\bb")
    assert (first.start, first.n_deleted, first.across_space, first.retyped_same) == ("s", 2, True, False)
    assert (second.start, second.n_deleted, second.across_space, second.retyped_same) == ("2", 1, False, True)


def test_a_logged_run_keeps_its_timing_and_the_model_types_it_with_its_own() -> None:
    # "ab" at 0, 100; ⌫ ⌫ at 700, 800 (a 600 ms pause before the run, 100 ms in it);
    # "cd" at 1,500 (700 ms before typing resumes), 1,600
    (run,) = logged_runs("ab\b\bcd", [0, 100, 700, 800, 1500, 1600])
    assert run.timing_ms == (600.0, 100.0, 700.0, 100.0)  # and 100 ms from "c" to "d": the retyping
    (last,) = logged_runs("ab\b", [0, 100, 400])
    assert last.timing_ms is not None and last.timing_ms[:2] == (300.0, 0.0)
    assert all(v != v for v in last.timing_ms[2:])  # the sentence ends on it: no resuming, no retyping
    pools = run_pools([("cd", "ab\b\bcd", [0, 100, 700, 800, 1500, 1600])])
    assert pools.draws["2"].tolist() == [[2.0, 0.0, 600.0, 100.0, 700.0, 100.0]]  # reach, retyped, and its timing together
    planned = plan_runs(
        "cd",
        RunPools({"s": 0.0, "1": 0.0, "2": 1.0, "3": 0.0, "4+": 0.0}, pools.draws),
        np.random.default_rng(0),
        lambda ch, rng: "x",
    )
    assert [(p.resume, p.keys, p.timing_ms) for p in planned.values()] == [(0, "xd", (600.0, 100.0, 700.0, 100.0))]


def test_the_keys_typed_again_after_a_run_take_the_logged_runs_own_retyping_time() -> None:
    # "abcd efgh" typed "abxy⌫⌫cd efgh": a run 4 characters in, 2 back; "c" then "d" typed
    # again, "d" 3,000 ms after "c" (a long pause inside the retyping) in one sentence and
    # 200 ms in the other. The profile keeps it with the run; the model's retyped keys take it.
    from streamrag.data.human.keystrokes import TypedSentence
    from streamrag.data.human.typed import typed_keys, typist_profile

    chars = "abxy\b\bcd efgh"

    def sentence(retype_ms: int) -> TypedSentence:
        steps = [0, 100, 100, 100, 600, 100, 700, retype_ms, 100, 100, 100, 100, 100]
        return TypedSentence("p", "s", "abcd efgh", tuple(int(t) for t in np.cumsum(steps)), chars)

    profile = typist_profile("p", [sentence(3000), sentence(200)])
    assert profile.runs.draws["4+"][:, 5].tolist() == [3000.0, 200.0]
    retypes = []
    for seed in range(40):
        times, keys = typed_keys("abcd efgh", profile, np.random.default_rng(seed))
        retypes += [run.timing_ms[3] for run in logged_runs(keys, times) if run.timing_ms is not None]
    assert len(retypes) > 20  # a run at "d" and at "h", each at the logged rate of 1 in 2
    assert all(r == pytest.approx(3000.0) or r == pytest.approx(200.0) for r in retypes)  # each run its own logged time
    assert np.mean(retypes) == pytest.approx(1600.0, rel=0.25)  # the two drawn alike


def test_a_words_later_runs_are_counted_against_its_keys_after_its_first() -> None:
    # "abcd ef" typed "ax⌫bcy⌫d ef": a run two characters into "abcd", then a second one four
    # in; the second counts against the word's two keys after the first run (c, d)
    chars = "ax\bbcy\bd ef"
    pools = run_pools([("abcd ef", chars, [100.0 * i for i in range(len(chars))])])
    assert pools.again_rate == 0.5
    assert pools.rate == {"s": 0.0, "1": 0.0, "2": 0.5, "3": 0.0, "4+": 0.0}  # c and d: no chance of a first run
    # planned: a first run at each word's first key (class 1 at rate 1), then the word's keys
    # draw at again_rate (1) where the typist logged runs of their class (1, 2 and 4+, not 3)
    clustered = RunPools({"s": 0.0, "1": 1.0, "2": 0.0, "3": 0.0, "4+": 0.0}, pools.draws | {"1": pools.draws["2"]}, 1.0)
    planned = plan_runs("abcd ef", clustered, np.random.default_rng(0), lambda ch, rng: "x")
    assert sorted(planned) == [0, 1, 3, 5, 6]  # a, then b and d again (c: class 3, none logged); e, then f again


def test_a_words_clean_time_leaves_its_runs_out_and_the_sentences_edges_apart() -> None:
    # (a word a run touched is "revised": its time, runs out, sets the typist's slowdown on hard words)
    # "go fas⌫t now" reads "go fat now": the retyped "t" takes the interval of the "s" it replaced (100 ms),
    # not its own 900 ms after the run; the first word from the first key, the last to the end
    chars = "go fas\bt now"
    times = [0, 100, 200, 300, 400, 500, 800, 1700, 1800, 1900, 2000, 2100]
    assert clean_word_times(chars, times) == [("first", 2, 200.0), ("revised", 3, 400.0), ("last", 3, 300.0)]
    untouched = times[:5] + times[7:]  # "go fat now" typed straight: t comes 1,300 ms after a
    assert clean_word_times("go fat now", untouched) == [("first", 2, 200.0), ("middle", 3, 1600.0), ("last", 3, 300.0)]
    assert clean_word_times("one", [0, 100, 200]) == []  # a one-word sentence: no space to time from
    assert clean_word_times("a b ", [0, 100, 200, 300]) == [("first", 1, 100.0), ("last", 1, 100.0)]  # a trailing space dropped


def _validate(tmp_path: Path, fit: Path, val: Path, *extra: str) -> tuple[int, Path]:
    out = tmp_path / "v.json"
    return main(["--quiet", "fit-input", "--keystrokes", str(fit), "--validate", str(val), "--out", str(out), *extra]), out


def test_validate_reports_every_statistic_for_logs_and_model_with_cis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fit = _write_logs(tmp_path / "fit", [str(p) for p in range(101, 113)], 0.3)
    val = _write_logs(tmp_path / "val", [str(p) for p in range(201, 213)], 0.3, seed=1)
    code, out = _validate(tmp_path, fit, val)
    assert code == 0
    data = read_fit(out)
    assert list(data)[:2] == ["format_version", "format"]
    result = data["validate"]
    assert (result["n_fit_participants"], result["n_validate_participants"], result["n_validate_sentences"]) == (12, 12, 120)
    assert list(result["statistics"]) == list(STATISTICS)
    for row in result["statistics"].values():
        for side in ("logs", "model"):
            assert row[side]["lo"] <= row[side]["value"] <= row[side]["hi"]
        assert row["inside"] == (row["logs"]["lo"] <= row["model"]["value"] <= row["logs"]["hi"])
    assert result["outside"] == [k for k, row in result["statistics"].items() if not row["inside"]]
    assert set(data["typed"]["backspace_runs"]["by_start"]) == {"s", "1", "2", "3", "4+"}
    printed = capsys.readouterr().out
    assert all(name in printed for name in STATISTICS)
    again, out_again = _validate(tmp_path / "again", fit, val)
    assert again == 0 and out_again.read_bytes() == out.read_bytes()  # seeded: same bytes


def test_more_typings_keep_the_first_and_narrow_the_models_ci(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fit = _write_logs(tmp_path / "fit", [str(p) for p in range(101, 113)], 0.3)
    val = _write_logs(tmp_path / "val", [str(p) for p in range(201, 213)], 0.3, seed=1)
    once = json.loads(_validate(tmp_path / "once", fit, val)[1].read_text())["validate"]
    many = json.loads(_validate(tmp_path / "many", fit, val, "--typings", "6")[1].read_text())["validate"]
    assert (once["typings"], many["typings"]) == (1, 6)
    assert many["n_validate_sentences"] == once["n_validate_sentences"]  # the logs' side is the same
    for name in STATISTICS:
        assert many["statistics"][name]["logs"] == once["statistics"][name]["logs"]
    width = {k: r["model"]["hi"] - r["model"]["lo"] for k, r in once["statistics"].items()}
    narrower = [k for k, r in many["statistics"].items() if r["model"]["hi"] - r["model"]["lo"] < width[k]]
    assert len(narrower) >= len(STATISTICS) - 2, narrower  # six draws per sentence: the model's own noise shrinks
    capsys.readouterr()
    assert _validate(tmp_path / "zero", fit, val, "--typings", "0")[0] == 1
    assert "--typings" in _error_line(capsys)
    assert main(["fit-input", "--keystrokes", str(fit), "--typings", "3", "--out", str(tmp_path / "o.json")]) == 1
    assert "--typings applies with --validate" in _error_line(capsys)


def test_strict_exits_1_naming_what_falls_outside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fit = _write_logs(tmp_path / "fit", [str(p) for p in range(101, 113)], 0.0)
    val = _write_logs(tmp_path / "val", [str(p) for p in range(201, 213)], 1.0, seed=1)
    assert _validate(tmp_path, fit, val)[0] == 0  # measured, not judged
    capsys.readouterr()
    code, out = _validate(tmp_path, fit, val, "--strict")
    assert code == 1
    outside = json.loads(out.read_text())["validate"]["outside"]
    assert "runs_across_space_share" in outside
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "outside the logs' CIs" in line and "runs_across_space_share" in line


def test_strict_exits_0_when_every_statistic_is_inside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Judged on the revision statistics alone (the declared list is what --strict judges):
    # those the run structure carries, which these logs' model reproduces (seeded: every run).
    import streamrag.data.human.typed_validate as typed_validate

    judged = ("revisions_per_session", "revised_hypotheses_share", "runs_across_space_share", "p")
    monkeypatch.setattr(typed_validate, "STATISTICS", {k: STATISTICS[k] for k in judged})
    fit = _write_logs(tmp_path / "fit", [str(p) for p in range(101, 121)], 0.4, n_sentences=15)
    val = _write_logs(tmp_path / "val", [str(p) for p in range(201, 221)], 0.4, n_sentences=15)
    code, out = _validate(tmp_path, fit, val, "--strict")
    result = json.loads(out.read_text())["validate"]
    assert list(result["statistics"]) == list(judged)
    assert code == 0 and result["outside"] == []


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("streamrag: error:") and "Traceback" not in line
    return line


def test_participants_in_both_folders_are_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fit = _write_logs(tmp_path / "fit", ["101", "102", "103"], 0.3)
    val = _write_logs(tmp_path / "val", ["102", "103", "201"], 0.3)
    assert _validate(tmp_path, fit, val)[0] == 1
    assert "share 2 participants (102, 103)" in _error_line(capsys)
    assert _validate(tmp_path, fit, fit)[0] == 1  # one folder, not split
    assert "share 3 participants" in _error_line(capsys)
    assert _validate(tmp_path, fit, val, "--split-participants", "halves")[0] == 1
    assert "--split-participants splits one folder" in _error_line(capsys)


def test_split_participants_fits_one_half_and_validates_the_other(tmp_path: Path) -> None:
    logs = _write_logs(tmp_path / "k", [str(p) for p in range(101, 111)], 0.3)
    code, out = _validate(tmp_path, logs, logs, "--split-participants", "halves")
    assert code == 0
    data = json.loads(out.read_text())
    assert (data["typed"]["n_fit_participants"], data["validate"]["n_validate_participants"]) == (5, 5)
    assert data["validate"]["split_participants"] == "halves"


def test_a_bad_row_of_the_validation_logs_is_one_line_naming_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fit = _write_logs(tmp_path / "fit", ["101", "102"], 0.3)
    val = _write_logs(tmp_path / "val", ["201", "202"], 0.3)
    path = val / "202_keystrokes.txt"
    lines = path.read_text().splitlines()
    fields = lines[4].split("\t")
    fields[FIELDS.index("PRESS_TIME")] = "soon"
    lines[4] = "\t".join(fields)
    path.write_text("\n".join(lines) + "\n")
    assert _validate(tmp_path, fit, val)[0] == 1
    line = _error_line(capsys)
    assert f"{path}:5:" in line and "PRESS_TIME" in line


def test_usage_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fit = _write_logs(tmp_path / "fit", ["101", "102"], 0.3)
    out = str(tmp_path / "o.json")
    assert main(["fit-input", "--keystrokes", str(fit), "--strict", "--out", out]) == 1
    assert "--strict applies with --validate" in _error_line(capsys)
    assert main(["fit-input", "--keystrokes", str(fit), "--validate", str(fit), "--held-out-share", "0.3", "--out", out]) == 1
    assert "--held-out-share applies without --validate" in _error_line(capsys)


def test_an_older_fit_file_without_the_run_structure_is_refused_in_one_line(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"typed": {"source": "logs", "fit": {}}}))
    with pytest.raises(InputError, match=r"old.json: a typed fit of format version 1 has no backspace-run structure") as raised:
        read_fit(old)
    assert "\n" not in str(raised.value)
    spoken_only = tmp_path / "spoken.json"
    spoken_only.write_text(json.dumps({"spoken": {"source": "h.jsonl", "fit": {}}}))
    assert read_fit(spoken_only)["spoken"]["source"] == "h.jsonl"
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"format_version": 99, "format": "streamrag.input_fit"}))
    with pytest.raises(InputError, match="format version 99"):
        read_fit(newer)


def test_fit_input_without_validate_writes_a_readable_versioned_file(tmp_path: Path) -> None:
    logs = _write_logs(tmp_path / "k", [str(p) for p in range(101, 111)], 0.3)
    out = tmp_path / "fit.json"
    assert main(["--quiet", "fit-input", "--keystrokes", str(logs), "--out", str(out)]) == 0
    typed = read_fit(out)["typed"]
    assert typed["backspace_runs"]["n_runs"] > 0
    assert typed["held_out_model"]["typed_model"]["runs_across_space_share"]["within_logged_ci"] is not None


@pytest.mark.skipif(not KEYSTROKES.is_dir(), reason=f"keystroke logs not found at {KEYSTROKES}")
def test_on_the_shared_logs_runs_across_a_space_and_revisions_fall_inside_the_held_out_cis(tmp_path: Path) -> None:
    code, out = _validate(tmp_path, KEYSTROKES, KEYSTROKES, "--split-participants", "alternate")
    assert code == 0
    stats = json.loads(out.read_text())["validate"]["statistics"]
    for name in ("runs_across_space_share", "revisions_per_session", "sessions_revised_share", "revised_hypotheses_share"):
        assert stats[name]["inside"], (name, stats[name])


def test_a_word_the_typist_will_correct_is_typed_at_their_revised_words_pace() -> None:
    # a participant whose revised words took twice as long per key as their other words
    # (runs taken out): a word the model plans a run in gets its drawn time doubled
    from streamrag.data.human.keystrokes import TypedSentence
    from streamrag.data.human.typed import _clean_intervals, typist_profile

    def sentence(chars: str, step: list[int]) -> TypedSentence:
        return TypedSentence("p", "s", "ab cd ef", tuple(int(t) for t in np.cumsum(step)), chars)

    plain = [sentence("ab cd ef", [0, 100, 100, 100, 100, 100, 100, 100]) for _ in range(3)]
    slow = [sentence("ab cx\bd ef", [0, 100, 100, 200, 200, 100, 200, 200, 100, 100]) for _ in range(3)]
    profile = typist_profile("p", plain + slow)
    assert profile.revised_slowdown == 2.0  # cd: 600 ms over 3 keys, runs out (x⌫ gone), against 300
    assert typist_profile("p", plain).revised_slowdown == 1.0  # no revised word: no slowdown
    # the middle word "cd" drawn from the same pool: with a run planned in it, twice as long
    text = "ab cd ef"
    as_planned = [_clean_intervals(text, profile, np.random.default_rng(s), frozenset({1}))[3:6] for s in range(5)]
    unplanned = [_clean_intervals(text, profile, np.random.default_rng(s))[3:6] for s in range(5)]
    assert [sum(a) for a in as_planned] == [2 * sum(b) for b in unplanned]
