"""Hostile catalogue, part 2 (issue 33): interrupted runs say so, and leave nothing that lies.

An interrupted ``simulate`` or ``analyze`` leaves its output folder as it was (its files
land together or not at all, an earlier run's all untouched); an interrupted sweep
keeps its finished points and marks its manifest ``"interrupted": true`` with the
signal; ``frontier`` says the sweep is done and its own step is not. Each ends with one
line, ``streamrag: interrupted (SIGNAL): what is left; what to do``, and the signal's
exit code. Real signals go to real subprocesses, to the parent alone or to its whole
process group (a terminal's Ctrl-C, a batch system's SIGTERM), whose workers must die
quietly with it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _inputs import files_under, record, run_cli, write_jsonl
from _simhelpers import small_table

import streamrag
from streamrag.analysis.table import write_table

pytestmark = pytest.mark.hostile

ROOT = Path(streamrag.__file__).resolve().parents[1]

SLOW_GRID = """\
name = "slow"
kind = "simulate"
input = "generated:100:seed=1"
scenario = "load"
[base]
"load.warmup_s" = 0
"load.arrivals.n_sessions" = 6000
[output]
figures = false
[axes]
"load.arrivals.offered_load" = [0.1, 0.2, 0.3, 0.4]
"""
"""Four load points of a few seconds each (two workers): an interrupt lands mid-sweep."""


def _start(argv: list[str], cwd: Path) -> subprocess.Popen[str]:
    """``streamrag ARGV`` in a process group of its own (so a signal can go to all of it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "streamrag", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )


def _wait_for(predicate, proc: subprocess.Popen[str], timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not predicate():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    assert predicate(), "timed out"


def _group_gone(pgid: int, timeout_s: float = 10.0) -> bool:
    """No process of the group is left (the workers died with their parent)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _last_line(err: str) -> str:
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    lines = [line for line in err.splitlines() if not re.search(r"\(\d+%\)|, ETA ", line)]  # progress lines (a slow machine)
    assert len(lines) == 1, err
    return lines[0]


# --- sweep: finished points kept, the manifest marked, --resume finishes it -------------------


@pytest.mark.lost_work
@pytest.mark.parametrize(
    ("to", "sig", "code"),
    [
        ("group", signal.SIGTERM, 143),
        ("group", signal.SIGINT, 130),
        ("group", signal.SIGHUP, 129),
        ("parent", signal.SIGTERM, 143),
    ],
)
def test_an_interrupted_sweep_ends_its_workers_marks_its_manifest_and_resumes(tmp_path, to, sig, code) -> None:
    grid = tmp_path / "slow.toml"
    grid.write_text(SLOW_GRID, encoding="utf-8")
    out = tmp_path / "run"
    proc = _start(["sweep", str(grid), "--out", str(out), "--jobs", "2"], tmp_path)
    _wait_for(lambda: any(out.glob("points/*/done.json")), proc)
    point_s = min(json.loads(p.read_text())["wall_s"] for p in out.glob("points/*/done.json"))
    sent = time.monotonic()
    os.killpg(proc.pid, sig) if to == "group" else proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    took_s = time.monotonic() - sent
    assert _group_gone(proc.pid), "a worker outlived its interrupted parent"
    assert proc.returncode == code, err
    # The parent did not wait for the points in flight (each takes point_s).
    assert took_s < 0.5 * point_s + 0.5, (took_s, point_s)
    name = signal.Signals(sig).name
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["interrupted"], manifest["signal"], manifest["outputs"]) == (True, name, [])
    status = [p["status"] for p in manifest["points"]]
    finished = {p.parent.name for p in out.glob("points/*/done.json")}
    assert status.count("computed") == len(finished) and status.count("pending") == 4 - len(finished)
    from streamrag.sweep.run_files import SweepManifest

    SweepManifest.model_validate(manifest)  # the shipped schema's model carries the mark
    again = f"streamrag sweep {grid} --out {out} --jobs 2 --resume"
    assert re.fullmatch(
        rf"streamrag: interrupted \({name}\): {len(finished)} of 4 point\(s\) finished in {re.escape(str(out))}/ "
        rf"\(manifest\.json says interrupted\); finish it with: {re.escape(again)}",
        _last_line(err),
    ), err
    if to == "parent":  # one resume is enough: the others stop the same way
        stamps = {k: (out / "points" / k / "done.json").stat().st_mtime_ns for k in finished}
        resumed = subprocess.run(
            [sys.executable, "-m", "streamrag", "-q", "sweep", str(grid), "--out", str(out), "--jobs", "2", "--resume"],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300, check=False,
        )  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr
        done = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert "interrupted" not in done and done["n_reused"] == len(finished) and done["n_computed"] == 4 - len(finished)
        assert {k: (out / "points" / k / "done.json").stat().st_mtime_ns for k in finished} == stamps


@pytest.mark.lost_work
def test_a_sweep_interrupted_in_process_marks_its_manifest(tmp_path, capsys, monkeypatch) -> None:
    from streamrag.sweep import resumable

    grid = tmp_path / "g.toml"
    grid.write_text(
        'name = "g"\nkind = "simulate"\ninput = "generated:10:seed=1"\nscenario = "paper_rq3"\n[output]\nfigures = false\n'
        '[axes]\n"latency.L_ms" = [300, 600, 900]\n',
        encoding="utf-8",
    )
    real = resumable._write_point
    calls = {"n": 0}

    def write_point(*args, **kwargs):  # the signal comes as the second point is written
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        real(*args, **kwargs)

    monkeypatch.setattr(resumable, "_write_point", write_point)
    out = tmp_path / "out"
    code, _, err = run_cli(["sweep", grid, "--out", out, "--jobs", "1"], capsys)
    assert code == 130
    assert _last_line(err).startswith(f"streamrag: interrupted (SIGINT): 1 of 3 point(s) finished in {out}/")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["interrupted"] is True and [p["status"] for p in manifest["points"]].count("pending") == 2
    # Rerun without --resume: refused, saying how to continue.
    code, _, err = run_cli(["sweep", grid, "--out", out, "--jobs", "1"], capsys)
    assert code == 1 and "pass --resume to continue that sweep" in err


def test_frontier_interrupted_after_its_sweep_says_the_sweep_is_done(tmp_path, capsys, monkeypatch) -> None:
    from streamrag.sweep.frontier import operating as frontier

    grid = tmp_path / "f.toml"
    grid.write_text(
        'name = "f"\nkind = "simulate"\ninput = "generated:10:seed=1"\nscenario = "paper_rq3"\n[axes.policy]\n'
        'none = { "trigger.kind" = "none" }\ninterval = { "trigger.kind" = "interval", "trigger.words" = [2, 3] }\n',
        encoding="utf-8",
    )

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(frontier, "compute_frontier", stop)
    out = tmp_path / "out"
    code, _, err = run_cli(["frontier", grid, "--out", out], capsys)
    assert code == 130
    assert _last_line(err) == (
        f"streamrag: interrupted (SIGINT): the sweep in {out}/ is complete, {out / 'frontier'}/ was not written (nor "
        f"changed); draw it with: streamrag frontier {grid} --out {out} --jobs 1 --resume (no point is recomputed)"
    )
    assert "interrupted" not in json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert not (out / "frontier").exists()


# --- simulate and analyze: the outputs land together or not at all ---------------------------


@pytest.mark.lost_work
def test_simulate_interrupted_while_writing_leaves_the_earlier_run_untouched(tmp_path) -> None:
    table = tmp_path / "t.csv"
    write_table(small_table(20000, seed=1), table)
    out = tmp_path / "run"
    argv = ["simulate", "--table", str(table), "--scenario", "paper_rq3", "--set", "select.population=all", "--out", str(out)]
    earlier = subprocess.run(
        [sys.executable, "-m", "streamrag", "-q", *argv, "--set", "latency.L_ms=900"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300, check=False,
    )  # fmt: skip
    assert earlier.returncode == 0, earlier.stderr
    before = {p.name: p.read_bytes() for p in files_under(out)}
    proc = _start(["-q", *argv, "--force"], tmp_path)
    _wait_for(lambda: any(p.name.startswith(".trace.jsonl.") and p.stat().st_size > 0 for p in out.iterdir()), proc)
    os.killpg(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert {p.name: p.read_bytes() for p in files_under(out)} == before
    assert not [p for p in out.iterdir() if p.name.startswith(".")]
    assert _last_line(err) == (
        f"streamrag: interrupted (SIGTERM): nothing was written to {out}/; the earlier run's files there are untouched; "
        "rerun the same command with --force to replace them"
    )


@pytest.mark.lost_work
@pytest.mark.parametrize("at", ["trace.jsonl", "results.csv", "summary.json", "manifest.json"])
def test_simulate_interrupted_between_its_files_writes_none_of_them(tmp_path, capsys, monkeypatch, at) -> None:
    # The signal's KeyboardInterrupt raised once one file of the run is written (trace and
    # results are written as the questions are replayed, the others at the end): before,
    # the files written already were the new run's and the others the earlier run's.
    import contextlib

    from streamrag.base import atomic

    table = tmp_path / "t.csv"
    write_table(small_table(30, seed=1), table)
    out = tmp_path / "run"
    argv = ["simulate", "--table", table, "--scenario", "paper_rq3", "--out", out]
    assert run_cli([*argv, "--set", "latency.L_ms=900"], capsys)[0] == 0
    before = {p.name: p.read_bytes() for p in files_under(out)}
    real = atomic.atomic_path

    @contextlib.contextmanager
    def written(path, **options):
        with real(path, **options) as tmp:
            yield tmp
            if Path(path).name == at:
                assert tmp.stat().st_size > 0
                raise KeyboardInterrupt

    monkeypatch.setattr(atomic, "atomic_path", written)
    code, _, err = run_cli([*argv, "--force"], capsys)
    assert code == 130
    assert {p.name: p.read_bytes() for p in files_under(out)} == before
    assert _last_line(err).endswith(
        "the earlier run's files there are untouched; rerun the same command with --force to replace them"
    )
    monkeypatch.undo()
    code, _, err = run_cli([*argv, "--force"], capsys)  # the rerun the line asks for
    assert code == 0 and {p.name: p.read_bytes() for p in files_under(out)} != before


def test_simulate_interrupted_before_writing_leaves_no_folder(tmp_path, capsys, monkeypatch) -> None:
    # The table replay writes its rows as it goes (the folder is made first): interrupted
    # at the first rows, it leaves no file and no folder behind.
    from streamrag.simulator import table_run

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(table_run, "results_lines", stop)
    table = tmp_path / "t.csv"
    write_table(small_table(30, seed=1), table)
    out = tmp_path / "a" / "run"
    code, _, err = run_cli(["simulate", "--table", table, "--scenario", "paper_rq3", "--out", out], capsys)
    assert code == 130
    assert not (tmp_path / "a").exists()
    assert _last_line(err) == f"streamrag: interrupted (SIGINT): nothing was written to {out}/; rerun the same command"


@pytest.mark.lost_work
def test_analyze_interrupted_as_it_writes_leaves_the_earlier_analysis_untouched(tmp_path, capsys, monkeypatch) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), record(1)])
    out = tmp_path / "a"
    argv = ["analyze", data, "--out", out, "--no-cache", "--jobs", "1"]
    assert run_cli([*argv, "--k", "1"], capsys)[0] == 0
    before = {p.relative_to(out): p.read_bytes() for p in files_under(out)}

    from streamrag.analysis import study

    real = study.write_evidence

    def write_evidence(*args, **kwargs):  # the signal comes once the table and its evidence are written
        real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(study, "write_evidence", write_evidence)
    code, _, err = run_cli([*argv, "--force"], capsys)  # replace the earlier run: interrupted as it writes
    assert code == 130
    assert {p.relative_to(out): p.read_bytes() for p in files_under(out)} == before
    assert _last_line(err) == (
        f"streamrag: interrupted (SIGINT): nothing was written to {out}/; the earlier run's files there are untouched; "
        "rerun the same command with --force to replace them"
    )


def test_analyze_interrupted_after_its_analysis_names_what_is_missing(tmp_path, capsys, monkeypatch) -> None:
    import streamrag.analysis.features.table as features

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(features, "write_feature_table", stop)
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), record(1)])
    out = tmp_path / "a"
    code, _, err = run_cli(["analyze", data, "--out", out, "--no-cache", "--jobs", "1", "--no-figures", "--features"], capsys)
    assert code == 130
    assert _last_line(err) == (
        f"streamrag: interrupted (SIGINT): the outputs in {out}/ are written but for features.csv; "
        "rerun the same command with --force for them"
    )
    assert (out / "summary.json").is_file() and not (out / "features.csv").exists()


def test_report_of_an_interrupted_sweep_says_to_finish_it(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    (out / "points").mkdir(parents=True)
    command = ["streamrag", "sweep", "g.toml", "--out", str(out), "--jobs", "1"]
    (out / "manifest.json").write_text(
        json.dumps({"format_version": 2, "interrupted": True, "signal": "SIGTERM", "command": command}), encoding="utf-8"
    )
    code, _, err = run_cli(["report", out, "--out", tmp_path / "page.html"], capsys)
    assert code == 1
    assert err.strip() == (
        f"streamrag: error: {out}: a sweep interrupted by SIGTERM (manifest.json); finish it first: "
        f"streamrag sweep g.toml --out {out} --jobs 1 --resume"
    )
