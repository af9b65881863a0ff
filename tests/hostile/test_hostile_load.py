"""Hostile catalogue, part 1 (issue 33): load sizes, memory, interrupts, full disks.

Every case ends in one ``streamrag: error:`` line and exit 1 (or the signal's exit code),
no traceback, nothing half-written: no temporary file, no output folder a run made and
wrote nothing to, and the finished files of a long run kept when a later one fails.
A full disk is simulated by making the write itself fail with ENOSPC.
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _inputs import files_under, one_error_line, run_cli
from _livehelpers import FAST, free_port
from _simhelpers import small_table

import streamrag
from streamrag.analysis.table import write_table
from streamrag.base import atomic

pytestmark = pytest.mark.hostile

ROOT = Path(streamrag.__file__).resolve().parents[1]
"""The checkout whose streamrag runs (subprocesses run the same code as the tests)."""


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "t.csv"
    write_table(small_table(30, seed=1), path)
    return path


def _load(table: Path, out: Path, *sets: str) -> list[str]:
    return ["simulate", "--table", table, "--scenario", "load", *(a for s in sets for a in ("--set", s)), "--out", out]


def _nothing_left(tmp_path: Path, out: Path) -> None:
    assert not out.exists(), files_under(out)
    assert not [p for p in tmp_path.rglob(".*") if p.is_file()]  # no hidden temporary anywhere


# --- sizes refused before anything runs ---------------------------------------------------


@pytest.mark.parametrize(
    ("sets", "expect"),
    [
        (["load.arrivals.n_sessions=1000000000000"],
         "load.arrivals.n_sessions: 1,000,000,000,000 sessions, more than the 10,000,000 a load run takes"),
        (["load.arrivals.n_sessions=50"],
         "load.warmup_s: 120 s is longer than the run: all 50 sessions arrive by 22.2 s, so none would be counted"),
    ],
)  # fmt: skip
def test_a_load_that_cannot_run_is_refused_at_once_and_leaves_nothing(tmp_path, capsys, table, sets, expect) -> None:
    out = tmp_path / "out"
    code, _, err = run_cli(_load(table, out, *sets), capsys)
    assert code == 1, err
    assert one_error_line(err).startswith(expect)
    _nothing_left(tmp_path, out)


def test_a_bad_arrivals_file_leaves_no_output_folder(tmp_path, capsys, table) -> None:
    (tmp_path / "arrivals.csv").write_text("arrival_s\n1.0\nsoon\n", encoding="utf-8")
    scenario = tmp_path / "s.toml"
    text = (ROOT / "sim" / "load.toml").read_text(encoding="utf-8")
    arrivals = f'arrivals = {{ kind = "file", path = "{tmp_path / "arrivals.csv"}" }}'
    text = text.replace('arrivals = { kind = "poisson", offered_load = 0.3, n_sessions = 3000 }', arrivals)
    scenario.write_text(text.replace("warmup_s = 120.0", "warmup_s = 0.0"), encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run_cli(["simulate", "--table", table, "--scenario", scenario, "--out", out], capsys)
    assert code == 1
    assert one_error_line(err).endswith("arrivals.csv:3: arrival_s: 'soon' is not a time in seconds ≥ 0")
    assert not out.exists()


def test_an_offered_load_of_one_or_more_runs_with_a_warning(tmp_path, capsys, table) -> None:
    out = tmp_path / "out"
    code, _, err = run_cli(
        _load(table, out, "load.arrivals.offered_load=1.2", "load.arrivals.n_sessions=40", "load.warmup_s=0"), capsys
    )
    assert code == 0, err
    assert "warning: offered load 1.20 ≥ 1 on the 4 tool servers: the baseline system cannot keep up" in err
    code, _, err = run_cli(_load(table, tmp_path / "o2", "load.arrivals.n_sessions=40", "load.warmup_s=0"), capsys)
    assert code == 0 and "offered load" not in err  # 0.3: no warning


def test_a_billion_servers_cost_no_memory() -> None:
    # The free slots were a list of every index: 10⁹ servers asked for ~36 GB. Run under a
    # 3 GB address-space limit, so that code fails with a MemoryError, not the machine.
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
        "from streamrag.engine.clock import RealClock\n"
        "from streamrag.engine.resources.servers import Servers\n"
        "print(len(Servers(RealClock(), name='tool', servers=10**9).free))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, str(10**9)), done.stderr[-500:]


def test_free_slots_give_the_lowest_index_first() -> None:
    from streamrag.engine.resources.queued import FreeSlots

    free = FreeSlots(5)
    taken = [free.pop() for _ in range(4)]
    free.give_back((2, 0))
    assert (taken, free.pop(), free.pop(), free.pop(), len(free)) == ([0, 1, 2, 3], 0, 2, 4, 0)


def test_a_load_run_holds_no_per_session_array(table) -> None:
    # The measures live in a file: the run object's arrays are the reference only.
    from streamrag.simulator.load.run import run_load
    from streamrag.simulator.question_select import load_selected
    from streamrag.simulator.scenario import load_scenario

    rs = load_scenario("load", ["load.arrivals.n_sessions=300", "load.warmup_s=0", "load.reference_sessions=5"])
    qs = load_selected(rs.scenario, data=None, table=str(table), evidence=False, ids=None, cache=None, jobs=1)
    with run_load(qs.questions, rs) as run:
        held = [v for s in run.systems.values() for v in vars(s.measures).values() if hasattr(v, "nbytes")]
        assert held == []
        assert run.systems["streaming"].measures.answer_us.shape == (300,)
        spooled = run.systems["streaming"].measures.table.path
        assert spooled.stat().st_size == 300 * run.systems["streaming"].measures.table.dtype.itemsize
    assert not spooled.exists()


# --- the load trace: bounded, each traced session whole -----------------------------------


def _lines_of(path: Path, keep: set[str] | None = None) -> bytes:
    """The event lines of sessions ``keep`` (None: every session's) in a trace file."""
    lines = [(line, json.loads(line).get("qid")) for line in path.read_bytes().splitlines(keepends=True)]
    return b"".join(line for line, qid in lines if qid is not None and (keep is None or qid in keep))


def test_a_load_trace_keeps_every_kth_session_whole_and_the_rest_unchanged(tmp_path, capsys, table) -> None:
    base = ["load.arrivals.n_sessions=300", "load.warmup_s=0"]
    full, sampled, again = tmp_path / "all", tmp_path / "some", tmp_path / "again"
    assert run_cli(_load(table, full, *base, "load.trace_sessions=all"), capsys)[0] == 0
    assert run_cli(_load(table, sampled, *base, "load.trace_sessions=100"), capsys)[0] == 0
    assert run_cli(_load(table, again, *base, "load.trace_sessions=100"), capsys)[0] == 0
    kept = {f"s{i:07d}" for i in range(0, 300, 3)}  # every ⌈300 / 100⌉ = 3rd session
    trace = _lines_of(sampled / "trace.jsonl")
    assert {json.loads(line)["qid"] for line in trace.splitlines()} == kept
    assert trace == _lines_of(full / "trace.jsonl", kept)  # each kept session: every event, the same bytes
    assert (sampled / "sessions.csv").read_bytes() == (full / "sessions.csv").read_bytes()
    summary = json.loads((sampled / "summary.json").read_text(encoding="utf-8"))
    assert (summary["trace"]["sessions"], summary["trace"]["every"]) == (100, 3)
    assert {p.name: p.read_bytes() for p in files_under(sampled) if p.name != "manifest.json"} == {
        p.name: p.read_bytes() for p in files_under(again) if p.name != "manifest.json"
    }  # same seed, same bytes


def test_an_untraced_session_is_said_to_be_untraced(tmp_path, capsys, table) -> None:
    out = tmp_path / "some"
    assert run_cli(_load(table, out, "load.arrivals.n_sessions=40", "load.warmup_s=0", "load.trace_sessions=10"), capsys)[0] == 0
    code, _, err = run_cli(["trace", out, "s0000001"], capsys)
    assert code == 1
    assert one_error_line(err) == (
        f"{out}/trace.jsonl: session 's0000001' is not in the trace: this load run traced one session in 4 (10 of them: "
        "s0000000, s0000004, s0000008, …); rerun it with --set load.trace_sessions=all to trace every one"
    )
    none = tmp_path / "none"
    assert run_cli(_load(table, none, "load.arrivals.n_sessions=40", "load.warmup_s=0", "load.trace_sessions=0"), capsys)[0] == 0
    assert not (none / "trace.jsonl").exists() and (none / "sessions.csv").is_file()


def test_the_default_trace_is_bounded_however_long_the_run() -> None:
    from streamrag.simulator.load.workload import DEFAULT_TRACE_SESSIONS, LoadConfig

    load = LoadConfig.model_validate({"arrivals": {"kind": "poisson", "rate_per_s": 1.0, "n_sessions": 10}})
    assert load.trace_sessions == DEFAULT_TRACE_SESSIONS == 10_000
    assert [-(-n // load.trace_every(n)) for n in (3_000, 10_000, 10_001, 10**6, 10**7)] == [3_000, 10_000, 5_001, 10_000, 10_000]


def test_a_load_run_whose_files_cannot_fit_is_refused_before_anything(tmp_path, capsys, table, monkeypatch) -> None:
    # Room for the session table (what the check covered before), not for the trace.
    import collections
    import shutil

    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _path: usage(10**12, 0, 1_500_000))
    out = tmp_path / "out"
    sets = ("load.arrivals.n_sessions=8000", "load.warmup_s=0")  # every session traced (≤ 10,000)
    code, _, err = run_cli(_load(table, out, *sets), capsys)
    assert code == 1
    line = one_error_line(err)
    assert re.fullmatch(
        rf"{re.escape(str(tmp_path))}: the load run \(8,000 sessions, 8,000 traced at ≈ [\d.]+ kB each: trace\.jsonl ≈ "
        r"[\d.]+ MB, its spool ≈ [\d.]+ MB, sessions\.csv ≈ [\d.]+ [kM]B, the session table ≈ [\d.]+ [kM]B\) needs "
        r"[\d.]+ MB, more than the 1\.5 MB free on this file system; trace fewer sessions \(load\.trace_sessions\), "
        r"free space, or write elsewhere",
        line,
    ), line
    _nothing_left(tmp_path, out)


# --- full disks and refused writes -------------------------------------------------------


def _full_disk_after(monkeypatch, n_ok: int, match: str = "") -> None:
    """Every atomic write after the first ``n_ok`` (of targets whose name contains
    ``match``) fails with ENOSPC where a full disk shows last: at the flush before the
    rename, with the bytes already in the temporary file."""
    real = os.fsync
    seen = {"n": 0}

    def fsync(fd: int) -> None:
        if match in os.readlink(f"/proc/self/fd/{fd}"):
            seen["n"] += 1
            if seen["n"] > n_ok:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)


def test_a_full_disk_in_simulate_load_is_one_line_and_leaves_nothing(tmp_path, capsys, table, monkeypatch) -> None:
    _full_disk_after(monkeypatch, 0)
    out = tmp_path / "out"
    code, _, err = run_cli(_load(table, out, "load.arrivals.n_sessions=40", "load.warmup_s=0"), capsys)
    assert code == 1
    assert one_error_line(err) == f"{out}/trace.jsonl: cannot write (No space left on device); nothing of it was written"
    _nothing_left(tmp_path, out)


def test_a_full_disk_in_simulate_is_one_line_and_nothing_half_written(tmp_path, capsys, table, monkeypatch) -> None:
    _full_disk_after(monkeypatch, 1)
    out = tmp_path / "out"
    code, _, err = run_cli(["simulate", "--table", table, "--scenario", "paper_rq3", "--out", out], capsys)
    assert code == 1
    assert "cannot write (No space left on device); nothing of it was written" in one_error_line(err)
    assert not list(tmp_path.rglob("*.tmp"))
    assert all(p.read_bytes() != b"half" for p in files_under(out))


@pytest.mark.lost_work
def test_a_full_disk_at_the_figures_of_analyze_keeps_the_tables(tmp_path, capsys, monkeypatch) -> None:
    from _inputs import record, write_jsonl

    data = write_jsonl(tmp_path / "d.jsonl", [record(0), record(1)])
    _full_disk_after(monkeypatch, 0, match=".png")
    out = tmp_path / "out"
    code, _, err = run_cli(["analyze", data, "--out", out, "--no-cache", "--jobs", "1"], capsys)
    assert code == 1
    line = one_error_line(err)
    assert line.startswith(f"{out}/") and ".png: cannot write (No space left on device)" in line
    assert "stabilization.csv and summary.json are written" in line
    assert {p.name for p in files_under(out)} >= {"stabilization.csv", "summary.json"}
    assert not list(out.rglob("*.png")) and not list(tmp_path.rglob("*.tmp"))


def test_a_full_disk_in_a_sweep_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(
        'name = "g"\nkind = "simulate"\ninput = "generated:10:seed=1"\nscenario = "paper_rq3"\n[axes]\n"latency.L_ms" = [300, 600]\n',
        encoding="utf-8",
    )
    _full_disk_after(monkeypatch, 0)
    code, _, err = run_cli(["sweep", grid, "--out", tmp_path / "out", "--jobs", "1"], capsys)
    assert code == 1
    assert "cannot write (No space left on device)" in one_error_line(err)
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_folder_that_refuses_new_files_is_one_line(tmp_path) -> None:
    from streamrag.base.errors import OutputError

    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who may write anywhere (root): no permission to refuse")
        with pytest.raises(OutputError, match=r"ro/x\.json: cannot write \(Permission denied\)"):
            atomic.write_bytes_atomic(folder / "x.json", b"{}")
    finally:
        folder.chmod(0o700)


def test_a_spool_write_on_a_full_disk_names_the_output(tmp_path, monkeypatch) -> None:
    from streamrag.base.errors import OutputError
    from streamrag.simulator.load import measures as load_measures

    sink = load_measures.TraceSink(tmp_path / ".trace-streaming.jsonl.1-abcdefgh.tmp")

    class Full:
        def write(self, _blob: bytes) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def close(self) -> None:
            pass

    real, sink.fh = sink.fh, Full()
    real.close()
    with pytest.raises(OutputError, match=r"trace\.jsonl: cannot write \(No space left on device\)"):
        sink.add([{"qid": "s0000000", "kind": "word"}])


# --- interrupts ------------------------------------------------------------------------------


def _start(argv: list[str], cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "streamrag", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd
    )


def _wait_for(predicate, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not predicate():
        time.sleep(0.05)
    assert predicate(), "timed out"


@pytest.mark.lost_work
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_an_interrupted_load_run_removes_its_temporaries_and_its_folder(tmp_path, table, sig, code) -> None:
    out = tmp_path / "out"
    proc = _start([str(a) for a in _load(table, out, "load.arrivals.n_sessions=20000", "load.warmup_s=0")], tmp_path)
    _wait_for(lambda: out.is_dir() and any(p.name.startswith(".trace-") and p.stat().st_size > 0 for p in out.iterdir()))
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    name = signal.Signals(sig).name
    assert (
        err.strip().splitlines()[-1] == f"streamrag: interrupted ({name}): nothing was written to {out}/; rerun the same command"
    )
    assert "Traceback" not in err
    _nothing_left(tmp_path, out)


@pytest.mark.lost_work
def test_a_load_run_started_in_the_background_ends_on_sigterm_with_its_line(tmp_path, table) -> None:
    # With SIGINT ignored (a script's `cmd &`, nohup, a batch job) no runner cancels the
    # main task on SIGINT, and a KeyboardInterrupt raised inside the signal handler could
    # land in one of the engine's weakref callbacks, which Python reports as "Exception
    # ignored" and goes on: the run finished and exited 0.
    out = tmp_path / "out"
    argv = [str(a) for a in _load(table, out, "load.arrivals.n_sessions=20000", "load.warmup_s=0")]
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited, as from a shell's `&`
    try:
        proc = _start(argv, tmp_path)
    finally:
        signal.signal(signal.SIGINT, handler)
    _wait_for(lambda: out.is_dir() and any(p.name.startswith(".trace-") and p.stat().st_size > 0 for p in out.iterdir()))
    for _ in range(600):  # signals until it exits: the run, its unwinding and the interpreter's shutdown each get some
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.05)
        if proc.poll() is not None:
            break
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Exception ignored" not in err and "Traceback" not in err, err
    assert (
        err.strip().splitlines()[-1] == f"streamrag: interrupted (SIGTERM): nothing was written to {out}/; rerun the same command"
    )
    _nothing_left(tmp_path, out)


def test_live_stopped_by_sigterm_marks_its_summary_and_says_so(tmp_path) -> None:
    out = tmp_path / "live"
    proc = _start(["live", "--replay", "5", "--out", str(out), "--latency-ms", "20", "--set", "input.delta_wps=4"], tmp_path)
    _wait_for((out / "summary.json").is_file)  # one turn done
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "streamrag: interrupted (SIGTERM)" in err and "Traceback" not in err
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["interrupted"] is True and summary["signal"] == "SIGTERM"


def test_live_against_a_dead_endpoint_fails_before_the_run(tmp_path, capsys) -> None:
    url = f"http://127.0.0.1:{free_port()}/search"  # nothing listens there
    out = tmp_path / "live"
    code, _, err = run_cli(["live", "--replay", "1", "--url", url, "--out", out, *FAST], capsys)
    assert code == 1
    assert one_error_line(err) == f"tool {url}: cannot connect (ClientConnectorError); is the endpoint running?"
    assert not out.exists()
