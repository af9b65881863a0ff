"""CRAG reader: both formats, selection, and one clear error per kind of bad input."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

import pytest

from streamrag.base.errors import DataFileError, RecordError
from streamrag.cli import main
from streamrag.data.crag import CragRecord, SkippedRecord, read_records


def _record(i: int = 0, **over) -> dict:
    rec = {
        "interaction_id": f"q{i}",
        "query": "who founded acme robotics",
        "answer": "jane doe",
        "alt_ans": ["j. doe"],
        "domain": "finance",
        "question_type": "simple",
        "static_or_dynamic": "static",
        "split": 0,
        "search_results": [{"page_name": "p", "page_url": "u", "page_snippet": "s", "page_result": "<p>jane doe</p>"}],
    }
    rec.update(over)
    return rec


def _write(path: Path, lines: list[str]) -> Path:
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(bz2.compress(data) if path.suffix == ".bz2" else data)
    return path


def test_real_sample_reads_ten_records_in_the_older_format(crag_sample: Path) -> None:
    records = list(read_records(crag_sample))
    assert len(records) == 10
    assert all(isinstance(r, CragRecord) for r in records)
    assert {r.split for r in records} == {1}
    first = records[1]
    assert first.interaction_id == "55b219e5-ba31-4318-a73d-551f0fb9c546"
    assert first.answers == ("salesforce",)
    assert len(first.search_results) == 5


def test_real_question_file_has_1371_validation_questions(crag_dir: Path) -> None:
    records = list(read_records(crag_dir / "crag_v4_questions.jsonl", split=0))
    assert len(records) == 1371
    assert all(r.search_results == () for r in records)


def test_v4_and_older_alt_answer_formats(tmp_path: Path) -> None:
    v4 = _record(0, alt_ans=["a", "b"])
    old = _record(1)
    del old["alt_ans"]
    old["alternative_answers"] = "['c', 'd']"
    path = _write(tmp_path / "x.jsonl", [json.dumps(v4), json.dumps(old)])
    r0, r1 = read_records(path)
    assert r0.alt_ans == ("a", "b")
    assert r1.alt_ans == ("c", "d")


def test_numeric_and_list_answers_become_text(tmp_path: Path) -> None:
    lines = [
        json.dumps(_record(0, answer=3696)),
        json.dumps(_record(1, answer=2.0)),
        json.dumps(_record(2, answer=["x", "y"], alt_ans=["z"])),
    ]
    r0, r1, r2 = read_records(_write(tmp_path / "a.jsonl", lines))
    assert r0.answer == "3696"
    assert r1.answer == "2"
    assert (r2.answer, r2.alt_ans) == ("x", ("y", "z"))


def test_split_limit_and_id_selection(tmp_path: Path) -> None:
    lines = [json.dumps(_record(i, split=i % 2)) for i in range(10)]
    path = _write(tmp_path / "s.jsonl.bz2", lines)
    assert [r.interaction_id for r in read_records(path, split=1)] == ["q1", "q3", "q5", "q7", "q9"]
    assert [r.interaction_id for r in read_records(path, limit=3)] == ["q0", "q1", "q2"]
    assert [r.interaction_id for r in read_records(path, ids={"q4", "q8"})] == ["q4", "q8"]


def test_malformed_json_line_in_the_middle_names_file_and_line(tmp_path: Path) -> None:
    lines = [json.dumps(_record(0)), '{"interaction_id": "q1", "query": ', json.dumps(_record(2))]
    path = _write(tmp_path / "bad.jsonl", lines)
    with pytest.raises(RecordError) as err:
        list(read_records(path))
    assert str(err.value).startswith(f"{path}:2: not valid JSON")
    items = list(read_records(path, on_error="skip"))
    assert [type(i) for i in items] == [CragRecord, SkippedRecord, CragRecord]
    assert items[1].line_no == 2 and "not valid JSON" in items[1].reason


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        (lambda r: r.pop("query"), "query", "missing"),
        (lambda r: r.update(query="   "), "query", "empty query"),
        (lambda r: r.update(search_results="not a list"), "search_results", "expected a list of pages, got str"),
        (lambda r: r.update(search_results=[{"page_result": 5}]), "search_results.0.page_result", "string"),
        (lambda r: r.pop("interaction_id"), "interaction_id", "missing"),
    ],
)
def test_bad_fields_name_file_line_and_field(tmp_path: Path, change, field: str, problem: str) -> None:
    bad = _record(1)
    change(bad)
    path = _write(tmp_path / "f.jsonl", [json.dumps(_record(0)), json.dumps(bad)])
    with pytest.raises(RecordError) as err:
        list(read_records(path))
    assert err.value.line_no == 2
    assert err.value.field == field
    assert problem in str(err.value)
    assert str(err.value).startswith(f"{path}:2: field '{field}'")


def test_non_utf8_bytes_are_a_record_error(tmp_path: Path) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes(
        json.dumps(_record(0)).encode() + b"\n" + json.dumps(_record(1)).replace("jane", "jan\xe9").encode("latin-1") + b"\n"
    )
    with pytest.raises(RecordError, match=r"latin.jsonl:2: not valid UTF-8"):
        list(read_records(path))


def test_truncated_bz2_is_a_data_file_error(tmp_path: Path) -> None:
    full = bz2.compress(("\n".join(json.dumps(_record(i)) for i in range(10000)) + "\n").encode())
    path = tmp_path / "cut.jsonl.bz2"
    path.write_bytes(full[: len(full) // 2])
    with pytest.raises(
        DataFileError, match=r"cut.jsonl.bz2: compressed data is truncated or corrupt after line \d+ \(Compressed file ended"
    ):
        list(read_records(path))
    # The parallel decoder reads ahead, so it may notice before yielding any line.
    with pytest.raises(
        DataFileError,
        match=r"cut.jsonl.bz2: compressed data is truncated or corrupt (after line \d+|before the first line) \(bzip2 stream is cut short or damaged\)",
    ):
        list(read_records(path, parallel_decompression=True))


def test_missing_file_and_fake_bz2(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="no such file"):
        list(read_records(tmp_path / "none.jsonl"))
    fake = tmp_path / "fake.jsonl.bz2"
    fake.write_text("{}\n")
    with pytest.raises(DataFileError, match="not a bzip2 file"):
        list(read_records(fake))


def test_cli_reports_a_bad_record_as_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "bad.jsonl", [json.dumps(_record(0)), "{oops"])
    code = main(["analyze", str(path), "--out", str(tmp_path / "out"), "--no-cache", "--jobs", "1"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("streamrag: error: ") and "bad.jsonl:2:" in err
    assert not (tmp_path / "out" / "stabilization.csv").exists()


def test_cli_skip_bad_turns_bad_lines_into_rows(tmp_path: Path) -> None:
    lines = [json.dumps(_record(0)), "{oops", json.dumps(_record(2, query=""))]
    path = _write(tmp_path / "bad.jsonl", lines)
    out = tmp_path / "out"
    assert main(["analyze", str(path), "--out", str(out), "--no-cache", "--jobs", "1", "--skip-bad", "--no-figures"]) == 0
    rows = (out / "stabilization.csv").read_text().splitlines()
    assert len(rows) == 4
    assert rows[2].endswith("line 2: not valid JSON (Expecting property name enclosed in double quotes at column 2)")
    assert rows[3].startswith("q2,") and "query: empty query" in rows[3]
