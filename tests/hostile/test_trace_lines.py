"""A ``trace.jsonl`` line that is no event stops every reader with one line naming the
file, the line and the field, never a traceback (``trace``, ``trace --all``, ``report``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _inputs import one_error_line, run_cli

from streamrag.base.errors import RecordError
from streamrag.cli import main
from streamrag.engine.trace import read_trace
from streamrag.simulator.views.runtrace import run_events


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("run")
    table = root / "table.csv"
    assert main(["generate", "--questions", "6", "--table", str(table), "-q"]) == 0
    out = root / "sim"
    assert main(["simulate", "--table", str(table), "--scenario", "paper_rq3", "--set", "select.population=all",
                 "--out", str(out), "-q"]) == 0  # fmt: skip
    return out


def _with_line(run: Path, to: Path, line_no: int, line: bytes) -> Path:
    """``run`` copied to ``to`` with line ``line_no`` of its trace replaced by ``line``."""
    to.mkdir()
    for f in run.iterdir():
        (to / f.name).write_bytes(f.read_bytes())
    lines = (run / "trace.jsonl").read_bytes().splitlines(keepends=True)
    lines[line_no - 1] = line + b"\n"
    (to / "trace.jsonl").write_bytes(b"".join(lines))
    return to


BAD = [
    (b'{"qid":"q","t_us":"soon","kind":"word","word":1}', "field 't_us': Input should be a valid integer"),
    (b'{"qid":"q","t_us":1,"kind":"nap"}', "field 'kind': "),
    (b'{"qid":"q","t_us":1,"kind":"word"}', "field 'word': Field required"),
    (b'{"qid":"q","t_us":1,', "Invalid JSON"),
]


@pytest.mark.parametrize(("line", "problem"), BAD)
def test_a_bad_trace_line_is_one_line_naming_file_line_and_field(run, tmp_path, capsys, line, problem) -> None:
    bad = _with_line(run, tmp_path / "bad", 4, line)
    trace = bad / "trace.jsonl"
    for read in (lambda: read_trace(trace), lambda: read_trace(trace, "q"), lambda: run_events(bad)):
        with pytest.raises(RecordError, match=rf"^{trace}:4: .*not a trace event"):
            read()
    qid = next(iter(run_events(run)))
    for argv in (["trace", bad, qid, "--no-text"], ["trace", bad, "--all", "--perfetto", tmp_path / "all.json"],
                 ["report", bad, "--out", tmp_path / "r.html", "--no-text"]):  # fmt: skip
        code, _, err = run_cli(argv, capsys)
        assert code == 1, argv
        message = one_error_line(err)
        assert message.startswith(f"{trace}:4: ") and problem in message, (argv, message)


def test_a_bad_first_line_is_named_too(run, tmp_path) -> None:
    bad = _with_line(run, tmp_path / "bad", 1, b"not json")
    with pytest.raises(RecordError, match=rf"^{bad / 'trace.jsonl'}:1: .*Invalid JSON"):
        run_events(bad)
