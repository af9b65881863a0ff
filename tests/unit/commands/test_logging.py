"""Logging options before or after the subcommand; progress as plain lines off a terminal;
the library logs on stdlib loggers and leaves a host's setup alone; the CLI renders with
structlog, imported only when an event is shown; under --log-json every stderr line is a
JSON object with level and timestamp."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _inputs import record, run_cli, write_jsonl

from streamrag.base import progress
from streamrag.cli import build_parser

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["list"], ("warning", False, False, False)),
        (["--log-level", "DEBUG", "list"], ("debug", False, False, False)),
        (["list", "--log-level", "error"], ("error", False, False, False)),
        (["--quiet", "list"], ("warning", True, False, False)),
        (["list", "-q", "--log-json"], ("warning", True, True, False)),
        (["--log-json", "list", "-v"], ("warning", False, True, True)),
        (["--log-level", "debug", "list", "--log-level", "info"], ("info", False, False, False)),  # the later wins
    ],
)
def test_logging_options_before_or_after_the_subcommand(argv, expected) -> None:
    args = build_parser().parse_args(argv)
    assert (args.log_level, args.quiet, args.log_json, args.verbose) == expected


@pytest.fixture
def data(tmp_path):
    return write_jsonl(tmp_path / "d.jsonl", [record(i) for i in range(3)])


def test_log_json_writes_json_events_with_level_and_time(tmp_path, capsys, data) -> None:
    argv = ["analyze", data, "--out", tmp_path / "a", "--no-cache", "--jobs", "1", "--no-figures"]
    code, _, err = run_cli(["--log-json", *argv, "--log-level", "info"], capsys)
    assert code == 0
    events = [json.loads(line) for line in err.splitlines()]
    written = [e for e in events if e["event"] == "analysis written"]
    assert len(written) == 1 and written[0]["level"] == "info" and written[0]["questions"] == 3
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT.*Z", written[0]["timestamp"])
    code, _, err = run_cli([*argv[:3], tmp_path / "b", *argv[4:]], capsys)  # default level: warnings only
    assert (code, err) == (0, "")


def test_progress_is_plain_periodic_lines_off_a_terminal(tmp_path, capsys, monkeypatch, data) -> None:
    monkeypatch.setattr(progress, "LINE_EVERY_S", 0.0)  # every update prints: the run is short
    argv = ["analyze", data, "--out", tmp_path / "a", "--no-cache", "--jobs", "1", "--no-figures"]
    code, _, err = run_cli(argv, capsys)
    assert code == 0
    lines = err.splitlines()
    assert lines, "no progress line"
    pattern = r"streamrag: analyzing d\.jsonl: \d+\.\d MB/\d+\.\d MB \(\d+%\), \d+\.\d MB/s, ETA (\d+:\d\d|\?)"
    assert all(re.fullmatch(pattern, line) for line in lines), lines
    assert lines[-1].split(": ")[2].startswith(f"{data.stat().st_size / 1e6:.1f} MB/")  # the last line: all read
    code, _, err = run_cli(["--log-json", *argv[:3], tmp_path / "b", *argv[4:]], capsys)
    events = [json.loads(line) for line in err.splitlines()]
    assert code == 0 and events and all(e["event"] == "progress" and e["unit"] == "bytes" for e in events)
    assert events[-1]["done"] == events[-1]["total"] == data.stat().st_size
    code, _, err = run_cli([*argv[:3], tmp_path / "c", *argv[4:], "--quiet"], capsys)
    assert (code, err) == (0, "")


def test_progress_lines_say_done_total_rate_and_eta() -> None:
    import io

    now = [100.0]
    out = io.StringIO()
    lines = progress.ProgressLines("simulating", 400, "items", every_s=10, stream=out, clock=lambda: now[0])
    for done, t in ((50, 105.0), (100, 110.0), (300, 130.0)):
        now[0] = t
        lines(done)
    lines.finish()
    assert out.getvalue().splitlines() == [
        "streamrag: simulating: 100/400 (25%), 10.0/s, ETA 0:30",
        "streamrag: simulating: 300/400 (75%), 10.0/s, ETA 0:10",
        "streamrag: simulating: 300/400 (75%), 10.0/s, ETA 0:10",
    ]


def _fresh_interpreter(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)


def test_the_library_logs_on_stdlib_loggers_and_leaves_the_host_setup_alone(tmp_path) -> None:
    """A host application's structlog and logging setup stay as it made them, and the
    library's events reach the host's handler (the host renders them, not streamrag)."""
    pytest.importorskip("structlog")
    data = write_jsonl(tmp_path / "d.jsonl", [record(i) for i in range(2)])
    code = (
        "import json, logging, sys\n"
        "import structlog\n"
        "def host(logger, name, event): event['host'] = True; return event\n"
        "structlog.configure(processors=[host, structlog.processors.JSONRenderer()], cache_logger_on_first_use=False)\n"
        "class Host(logging.Handler):\n"
        "    def emit(self, r): print('HOST', r.name, r.getMessage(), getattr(r, 'questions', None))\n"
        "logging.basicConfig(level=logging.INFO, handlers=[Host()])\n"
        "before = (dict(structlog.get_config()), list(logging.getLogger().handlers), logging.getLogger().level)\n"
        "import streamrag, streamrag.api\n"
        "from streamrag.analysis.study import run_study\n"
        f"run_study({str(data)!r}, {str(tmp_path / 'out')!r}, figures=False)\n"
        "after = (dict(structlog.get_config()), list(logging.getLogger().handlers), logging.getLogger().level)\n"
        "print('same setup', before == after)\n"
        "print('library handlers', logging.getLogger('streamrag').handlers)\n"
    )
    done = _fresh_interpreter(code)
    assert "HOST streamrag.analysis.study analysis written 2" in done.stdout.splitlines()
    assert "same setup True" in done.stdout and "library handlers []" in done.stdout
    assert done.stderr == ""


def test_the_library_never_imports_structlog_and_a_quiet_command_neither() -> None:
    """structlog is the CLI's renderer, imported at the first event it shows."""
    code = (
        "import sys, logging\n"
        "logging.basicConfig(level=logging.DEBUG)\n"
        "from streamrag.base import progress\n"
        "progress.configure('json')\n"
        "progress.notice('hello')\n"  # a library event on the host's handler
        "print('imported', 'structlog' in sys.modules)\n"
        "from streamrag.cli import main\n"
        "main(['list', '--log-json'])\n"
        "print('imported', 'structlog' in sys.modules)\n"
        "main(['--log-level', 'debug', 'list', '--log-json'])\n"
        "print('imported', 'structlog' in sys.modules)\n"
    )
    done = _fresh_interpreter(code)
    said = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("imported ")]
    assert said == ["False", "False", "False"]
    assert "INFO:streamrag.base.progress:notice" in done.stderr


def test_events_below_the_level_are_dropped_and_those_at_it_shown(tmp_path, capsys, data) -> None:
    argv = ["analyze", data, "--no-cache", "--jobs", "1", "--no-figures", "--out"]
    shown = {}
    for level in ("debug", "info", "warning", "error"):
        code, _, err = run_cli([*argv, tmp_path / level, "--log-level", level], capsys)
        assert code == 0
        shown[level] = "analysis written" in err
    assert shown == {"debug": True, "info": True, "warning": False, "error": False}
    code, _, err = run_cli([*argv, tmp_path / "v", "-v"], capsys)
    assert code == 0 and re.search(r"\[info\s*\] analysis written .*questions=3", err), err


def test_every_stderr_line_under_log_json_is_an_object_with_level_and_time(tmp_path, capsys, monkeypatch, data) -> None:
    """Progress, log events and the command's own messages (a sweep's "reflector: …",
    "skipped …", an error): each line parses, and says its level and its UTC time."""
    monkeypatch.setattr(progress, "LINE_EVERY_S", 0.0)  # every update prints: the run is short
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'name = "g"\nkind = "simulate"\ninput = "generated:6:seed=2"\nscenario = "paper_rq3"\n'
        '[output]\nfigures = false\n[axes]\n"latency.L_ms" = [300, 600]\n',
        encoding="utf-8",
    )
    runs = [
        ["generate", tmp_path / "table.csv", "--table", "--questions", "6", "--log-json"],
        ["sweep", grid, "--out", tmp_path / "s", "--jobs", "1", "--log-json", "-v"],
        ["--log-json", "analyze", data, "--out", tmp_path / "a", "--no-cache", "--jobs", "1", "--no-figures", "-v"],
        ["--log-json", "simulate", data, "--scenario", tmp_path / "missing.toml", "--out", tmp_path / "m"],  # an error
    ]
    events = []
    for argv in runs:
        _, _, err = run_cli(argv, capsys)
        assert err.strip(), argv
        for line in err.splitlines():
            event = json.loads(line)  # every line is one JSON object
            assert isinstance(event, dict) and event["level"] in {"debug", "info", "warning", "error"}, line
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z", event["timestamp"]), line
            events.append(event)
    kinds = {e["event"] for e in events}
    assert {"table written", "progress", "reflector", "analysis written"} <= kinds, kinds
    assert any(e["level"] == "error" and "missing.toml" in e["event"] for e in events)
    progress_events = [e for e in events if e["event"] == "progress"]
    assert all(e["level"] == "info" and e["logger"] == "streamrag.base.progress" for e in progress_events)


class _Stream:
    """A text stream that says whether it is a terminal."""

    def __init__(self, tty: bool) -> None:
        self.tty, self.text = tty, ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


def test_notice_is_shown_where_progress_is(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="streamrag.base.progress")
    shown = {}
    for mode in ("auto", "lines", "json", "off"):
        for tty in (False, True):
            monkeypatch.setitem(progress._chosen, "mode", mode)
            out = _Stream(tty)
            progress.notice("compiling a kernel", stream=out)
            shown[mode, tty] = out.text
    assert shown["auto", False] == shown["off", False] == shown["off", True] == ""
    assert shown["auto", True] == shown["lines", True] == shown["lines", False] == "streamrag: compiling a kernel\n"
    assert shown["json", False] == shown["json", True] == ""  # a log event instead, once per call
    notices = [(r.name, r.levelname, r.getMessage(), r.text) for r in caplog.records]  # type: ignore[attr-defined]
    assert notices == [("streamrag.base.progress", "INFO", "notice", "compiling a kernel")] * 2


def test_a_cold_kernel_cache_is_announced_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numba")
    from streamrag.retrieval.global_pool import kernel as global_kernel
    from streamrag.retrieval.global_pool import scorer as global_prefix

    notices: list[str] = []
    monkeypatch.setattr(progress, "notice", notices.append)
    monkeypatch.setattr(global_kernel, "compiled_on_disk", lambda kernel=None: False)
    global_prefix._announce_compile.cache_clear()
    try:
        for _ in range(3):  # one scorer per thread: still one line
            assert global_prefix._compiled_kernel(required=True) is global_kernel.rank_words
    finally:
        global_prefix._announce_compile.cache_clear()
    assert len(notices) == 1 and "compiling the global-scope ranking kernel" in notices[0]
    monkeypatch.setattr(global_kernel, "compiled_on_disk", lambda kernel=None: True)
    global_prefix._compiled_kernel(required=True)
    assert len(notices) == 1


def test_compiled_on_disk_answers_a_bool() -> None:
    pytest.importorskip("numba")
    from streamrag.retrieval.global_pool import kernel as global_kernel

    assert isinstance(global_kernel.compiled_on_disk(), bool)
