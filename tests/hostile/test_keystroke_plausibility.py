"""Plausibility of keystroke logs (issue 43): one malformed or absurd row in one
participant's log is one line naming file, line and field, or is skipped, counted and
shown — never a silent change of other sentences' timings, never a fit from absurd times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamrag.base.errors import RecordError
from streamrag.cli import main
from streamrag.data.demo import demo_path
from streamrag.data.human.keystrokes import FIELDS, MAX_GAP_MS, read_keystrokes

START_MS = 1_473_275_876_010  # a press time of the shared logs' era
SENTENCES = {"s1": "the cat is here", "s2": "a dog ran far", "s3": "we go home now"}
BAD_SECTION, BAD_KEY = "s2", 5  # the damaged key: the sixth of sentence s2
TEN_HOURS_MS = 10 * 3600 * 1000


def _rows(pid: str, step_ms: int = 120) -> list[list[str]]:
    """Each sentence of ``SENTENCES`` typed key by key, a SHIFT before each, as fields."""
    rows, t = [], START_MS
    for section, text in SENTENCES.items():
        rows.append([pid, section, text, text, "1", str(t), str(t + 60), "SHIFT", "16"])
        for ch in text:
            t += step_ms
            code = 32 if ch == " " else ord(ch.upper())
            rows.append([pid, section, text, text, "1", str(t), str(t + 80), ch, str(code)])
        t += 5000
    return rows


def _index(rows: list[list[str]], section: str, key: int) -> int:
    """Row index of the ``key``-th row of ``section``."""
    return [i for i, r in enumerate(rows) if r[1] == section][key]


def _write(folder: Path, pid: str, rows: list[list[str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{pid}_keystrokes.txt"
    lines = ["\t".join(FIELDS), *("\t".join(r) for r in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _damaged(kind: str, rows: list[list[str]]) -> tuple[list[list[str]], list[list[str]], str]:
    """``(damaged rows, the clean rows without what a skip leaves out, damaged field)``."""
    rows = [list(r) for r in rows]
    i = _index(rows, BAD_SECTION, BAD_KEY)
    without_row = rows[:i] + rows[i + 1 :]
    if kind == "gap":  # every press from the damaged key on, ten hours later: monotone, implausible
        for r in rows[i:]:
            if r[1] == BAD_SECTION:
                r[5] = str(int(r[5]) + TEN_HOURS_MS)
        return rows, [r for r in rows if r[1] != BAD_SECTION], "PRESS_TIME"
    if kind == "short":
        rows[i] = rows[i][:5]
        return rows, without_row, "row"
    if kind == "participant":  # a stray id would otherwise be another participant
        rows[i][0] = "99"
        return rows, without_row, "PARTICIPANT_ID"
    if kind == "keycode":
        rows[i][8] = "70000"
        return rows, without_row, "KEYCODE"
    rows[i][5] = {"abc": "abc", "1e40": "1" + "0" * 40, "negative": "-5", "superscript": "²"}[kind]
    return rows, without_row, "PRESS_TIME"


KINDS = ["abc", "1e40", "negative", "superscript", "short", "keycode", "participant", "gap"]


@pytest.mark.parametrize("kind", KINDS)
def test_raise_mode_names_file_line_and_field_of_the_damaged_row(tmp_path: Path, kind: str) -> None:
    rows, _, field = _damaged(kind, _rows("7"))
    path = _write(tmp_path / "k", "7", rows)
    line = _index(rows, BAD_SECTION, BAD_KEY) + 2  # 1-based, after the header
    with pytest.raises(RecordError) as caught:
        read_keystrokes(tmp_path / "k")
    err = caught.value
    assert (err.path, err.line_no, err.field) == (str(path), line, field)
    assert str(err).startswith(f"{path}:{line}: field '{field}': ")


@pytest.mark.parametrize("kind", KINDS)
def test_skip_mode_skips_exactly_that_row_or_sentence_and_counts_it(tmp_path: Path, kind: str) -> None:
    clean = _rows("7")
    rows, reference, field = _damaged(kind, clean)
    path = _write(tmp_path / "bad", "7", rows)
    _write(tmp_path / "ref", "7", reference)
    logs = read_keystrokes(tmp_path / "bad", on_error="skip")
    expected = read_keystrokes(tmp_path / "ref")
    untouched = read_keystrokes(_write(tmp_path / "clean", "7", clean).parent)
    assert logs.participants == expected.participants  # as if the row (the sentence) were not there
    others = [s for s in logs.participants["7"] if s.section != BAD_SECTION]
    assert others == [s for s in untouched.participants["7"] if s.section != BAD_SECTION]
    line = _index(rows, BAD_SECTION, BAD_KEY) + 2
    (reason,) = logs.skipped
    assert reason.startswith(f"{path}:{line}: field '{field}': ")
    n_sentence_rows = sum(1 for r in clean if r[1] == BAD_SECTION)
    left_out = logs.left_out
    assert (left_out.n_rows, left_out.n_sentences) == ((n_sentence_rows, 1) if kind == "gap" else (1, 0))


def test_the_gap_cap_is_on_consecutive_presses_not_on_the_sentence(tmp_path: Path) -> None:
    # A slow typist: every gap at the cap, the sentence far longer than it.
    rows = _rows("7", step_ms=MAX_GAP_MS)
    logs = read_keystrokes(_write(tmp_path / "k", "7", rows).parent)
    assert len(logs.participants["7"]) == 3 and logs.skipped == ()


def test_a_time_out_of_line_with_its_sentence_names_both_presses_and_skips_the_sentence(tmp_path: Path) -> None:
    # "5" is a plausible clock reading on its own (a logger counting from 0), not beside 1.47e12.
    rows = _rows("7")
    i = _index(rows, BAD_SECTION, BAD_KEY)
    rows[i][5] = "5"
    path = _write(tmp_path / "k", "7", rows)
    with pytest.raises(RecordError) as caught:
        read_keystrokes(path.parent)
    assert caught.value.field == "PRESS_TIME" and f"(line {i + 2})" in str(caught.value)
    logs = read_keystrokes(path.parent, on_error="skip")
    assert [s.section for s in logs.participants["7"]] == ["s1", "s3"] and logs.left_out.n_sentences == 1


def _participants(folder: Path, damaged: list[list[str]] | None = None, n: int = 6) -> Path:
    for pid in range(n):
        rows = _rows(str(pid), step_ms=100 + 20 * pid)
        _write(folder, str(pid), damaged if (pid == 0 and damaged is not None) else rows)
    return folder


def _one_line(err: str) -> str:
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    return line


@pytest.mark.parametrize("kind", ["abc", "1e40", "negative", "short", "gap"])
def test_fit_input_refuses_a_damaged_row_in_one_line_and_skips_it_when_asked(tmp_path: Path, capsys, kind: str) -> None:
    rows, reference, field = _damaged(kind, _rows("0", step_ms=100))
    bad = _participants(tmp_path / "bad", rows)
    out = tmp_path / "fit.json"
    assert main(["fit-input", "--keystrokes", str(bad), "--held-out-share", "0.34", "--out", str(out)]) == 1
    line = _index(rows, BAD_SECTION, BAD_KEY) + 2
    assert f"0_keystrokes.txt:{line}: field '{field}'" in _one_line(capsys.readouterr().err)
    assert not out.exists()

    argv = ["fit-input", "--skip-bad", "--held-out-share", "0.34", "--out"]
    assert main([*argv, str(out), "--keystrokes", str(bad)]) == 0
    said = capsys.readouterr()
    assert f"0_keystrokes.txt:{line}: field '{field}'" in _one_line(said.err) and "skipped" in said.err
    typed = json.loads(out.read_text())["typed"]
    assert typed["n_skipped_rows"] == len(rows) - len(reference)
    assert typed["skipped"][0].startswith(str(bad / "0_keystrokes.txt") + f":{line}: field '{field}'")
    # The fit is the fit of the logs without the skipped row (or sentence): never δ = 0 from 10⁴⁰.
    ref_out = tmp_path / "ref.json"
    assert main([*argv, str(ref_out), "--keystrokes", str(_participants(tmp_path / "ref", reference))]) == 0
    ref = json.loads(ref_out.read_text())["typed"]
    assert typed["fit"] == ref["fit"] and typed["held_out_logged"] == ref["held_out_logged"]
    assert typed["fit"]["delta_wps"]["value"] > 1.0


@pytest.mark.parametrize("kind", ["1e40", "negative", "abc", "gap"])
def test_analyze_typed_reports_the_skip_and_only_its_sentence_changes(tmp_path: Path, capsys, kind: str) -> None:
    rows, reference, field = _damaged(kind, _rows("0", step_ms=100))
    bad, ref = _participants(tmp_path / "bad", rows), _participants(tmp_path / "ref", reference)
    common = [str(demo_path()), "--limit", "8", "--no-figures", "--typed"]
    assert main(["analyze", *common, str(ref), "--out", str(tmp_path / "a_ref")]) == 0
    capsys.readouterr()
    assert main(["analyze", *common, str(bad), "--out", str(tmp_path / "a_bad")]) == 0
    err = capsys.readouterr().err
    line = _index(rows, BAD_SECTION, BAD_KEY) + 2
    said = [s for s in err.splitlines() if "skipped" in s and "keystroke" in s]
    assert len(said) == 1 and f"0_keystrokes.txt:{line}: field '{field}'" in said[0]
    # The damaged row (sentence) is as if absent: every question's timings are the reference's.
    table = (tmp_path / "a_bad" / "stabilization.csv").read_bytes()
    assert table == (tmp_path / "a_ref" / "stabilization.csv").read_bytes()
    summary = json.loads((tmp_path / "a_bad" / "summary.json").read_text())
    typed = summary["parameters"]["analysis"]["typed_input"]
    assert typed["n_skipped_rows"] == len(rows) - len(reference)
    assert typed["n_skipped_sentences"] == (1 if kind == "gap" else 0)
    assert f":{line}: field '{field}'" in typed["skipped"][0]
    clean = json.loads((tmp_path / "a_ref" / "summary.json").read_text())["parameters"]["analysis"]
    assert clean["typed_input"]["n_skipped_rows"] == 0 and clean["typed_input"]["skipped"] == []
