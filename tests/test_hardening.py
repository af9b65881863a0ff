"""The defects of issue 15, each reproduced through the command line, then fixed.

Every test here failed before its fix; the issue's numbering is kept in the names.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from _inputs import files_under, one_error_line, record, run_cli, write_jsonl


def _table_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# 1. Duplicate interaction ids --------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["analyze", "{data}", "--out", "{out}", "--no-cache", "--jobs", "1"],
        ["simulate", "{data}", "--scenario", "paper_rq3", "--out", "{out}"],
        ["ingest", "{data}", "--no-cache", "--jobs", "1"],
        ["analyze", "{data}", "--out", "{out}", "--no-cache", "--jobs", "1", "--skip-bad"],
        ["analyze", "{data}", "--out", "{out}", "--no-cache", "--scope", "global"],
    ],
    ids=["analyze", "simulate", "ingest", "analyze-skip-bad", "analyze-global"],
)
def test_1_duplicate_interaction_id_is_one_line_naming_file_line_and_field(tmp_path, capsys, command) -> None:
    data = write_jsonl(tmp_path / "dup.jsonl", [record(0), record(1), record(0, query="another question on acme")])
    out = tmp_path / "out"
    argv = [a.format(data=data, out=out) for a in command]
    code, _, err = run_cli(argv, capsys)
    assert code == 1
    line = one_error_line(err)
    assert line.startswith(f"{data}:3: field 'interaction_id': 'q0' repeats line 1"), line
    assert files_under(out) == []


# 4. Tables of analyze --skip-bad are readable everywhere -----------------------------


@pytest.fixture
def skip_bad_table(tmp_path, capsys) -> Path:
    """``analyze --skip-bad`` of a file whose second line has no readable id."""
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), '{"query": "x"', record(2), record(3)])
    out = tmp_path / "a"
    code, _, err = run_cli(["analyze", data, "--out", out, "--skip-bad", "--no-cache", "--jobs", "1"], capsys)
    assert code == 0, err
    rows = _table_rows(out / "stabilization.csv")
    assert [r["interaction_id"] for r in rows] == ["q0", "", "q2", "q3"]
    assert rows[1]["skip_reason"].startswith("line 2: not valid JSON")
    return out / "stabilization.csv"


def test_4_skip_bad_table_feeds_stats(tmp_path, capsys, skip_bad_table) -> None:
    code, out, err = run_cli(["stats", skip_bad_table, "--out", tmp_path / "s", "--bootstrap", "100"], capsys)
    assert (code, err) == (0, "")
    assert "3 questions" in out or "4 questions" in out


def test_4_skip_bad_table_feeds_simulate_table(tmp_path, capsys, skip_bad_table) -> None:
    out = tmp_path / "r"
    argv = ["simulate", "--table", skip_bad_table, "--scenario", "paper_rq3", "--out", out, "--set", "select.population=all"]
    code, _, err = run_cli(argv, capsys)
    assert (code, err) == (0, "")
    rows = _table_rows(out / "results.csv")
    assert [r["interaction_id"] for r in rows] == ["q0", "", "q2", "q3"]
    assert rows[1]["skip_reason"].startswith("line 2: not valid JSON")


def test_4_skip_bad_table_feeds_sweep_input(tmp_path, capsys, skip_bad_table) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(
        'name = "g"\nkind = "simulate"\ninput = "demo"\nscenario = "paper_rq3"\n'
        '[base]\n"select.population" = "all"\n[axes]\n"latency.L_ms" = [300, 600]\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(["sweep", grid, "--input", f"table:{skip_bad_table}", "--out", tmp_path / "sw"], capsys)
    assert code == 0, err
    assert len(_table_rows(tmp_path / "sw" / "sweep.csv")) == 2


# 10. --ids: one rule in every command -------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["analyze", "{data}", "--out", "{out}", "--no-cache", "--jobs", "1", "--ids", "{ids}"],
        ["simulate", "{data}", "--scenario", "paper_rq3", "--out", "{out}", "--ids", "{ids}"],
        ["ingest", "{data}", "--no-cache", "--jobs", "1", "--ids", "{ids}"],
    ],
    ids=["analyze", "simulate", "ingest"],
)
def test_10_unknown_id_stops_every_command(tmp_path, capsys, command) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), record(1)])
    ids = tmp_path / "ids.txt"
    ids.write_text("q1  # kept\nnope # not in the file\n", encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run_cli([a.format(data=data, out=out, ids=ids) for a in command], capsys)
    assert code == 1
    assert one_error_line(err).startswith("--ids: question 'nope' not in ")
    assert files_under(out) == []
