"""Logging options before or after the subcommand; progress as plain lines off a terminal;
events below the level cost no structlog import."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from _inputs import record, run_cli, write_jsonl

from streamrag.base import progress
from streamrag.cli import build_parser


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


def _log_in_fresh_interpreter(level: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "from streamrag.base import logs\n"
        f"logs.configure({level!r}, json=False)\n"
        "log = logs.get_logger('t')\n"
        "log.debug('debug event', x=1)\n"
        "log.info('info event', x=2)\n"
        "print('structlog' in sys.modules)\n"
        "log.warning('warning event', x=3)\n"
        "print('structlog' in sys.modules)\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


def test_events_below_the_level_are_dropped_without_importing_structlog() -> None:
    done = _log_in_fresh_interpreter("warning")
    assert done.stdout.split() == ["False", "True"]
    assert "warning event" in done.stderr and "x=3" in done.stderr
    assert "info event" not in done.stderr and "debug event" not in done.stderr


def test_events_at_the_level_are_shown() -> None:
    done = _log_in_fresh_interpreter("info")
    assert done.stdout.split() == ["True", "True"]
    assert "info event" in done.stderr and "warning event" in done.stderr
    assert "debug event" not in done.stderr


def test_error_level_drops_warnings() -> None:
    done = _log_in_fresh_interpreter("error")
    assert done.stdout.split() == ["False", "False"]
    assert done.stderr == ""


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


def test_notice_is_shown_where_progress_is(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = {}
    for mode in ("auto", "lines", "json", "off"):
        for tty in (False, True):
            monkeypatch.setitem(progress._chosen, "mode", mode)
            out = _Stream(tty)
            progress.notice("compiling a kernel", stream=out)
            shown[mode, tty] = out.text
    assert shown["auto", False] == shown["off", False] == shown["off", True] == ""
    assert shown["auto", True] == shown["lines", True] == shown["lines", False] == "streamrag: compiling a kernel\n"
    assert [json.loads(shown["json", tty]) for tty in (False, True)] == [{"event": "notice", "message": "compiling a kernel"}] * 2


def test_a_cold_kernel_cache_is_announced_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numba")
    from streamrag.retrieval import global_kernel, global_prefix

    notices: list[str] = []
    monkeypatch.setattr(progress, "notice", notices.append)
    monkeypatch.setattr(global_kernel, "compiled_on_disk", lambda: False)
    global_prefix._announce_compile.cache_clear()
    try:
        for _ in range(3):  # one scorer per thread: still one line
            assert global_prefix._compiled_kernel(required=True) is global_kernel.rank_words
    finally:
        global_prefix._announce_compile.cache_clear()
    assert len(notices) == 1 and "compiling the global-scope ranking kernel" in notices[0]
    monkeypatch.setattr(global_kernel, "compiled_on_disk", lambda: True)
    global_prefix._compiled_kernel(required=True)
    assert len(notices) == 1


def test_compiled_on_disk_answers_a_bool() -> None:
    pytest.importorskip("numba")
    from streamrag.retrieval import global_kernel

    assert isinstance(global_kernel.compiled_on_disk(), bool)
