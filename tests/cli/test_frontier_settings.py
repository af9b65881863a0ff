"""``frontier`` and ``advise`` take scenario settings (``--set``) and a Dask scheduler,
as ``sweep`` and ``simulate`` do: the settings reach every point, the run folder's grid
reruns the run, and a bad setting is one line."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pandas as pd
import pytest

import streamrag
from streamrag.cli import main
from streamrag.sweep.grid import load_grid

GRID = """\
name = "small"
kind = "simulate"
input = "demo"
scenario = "frontier"

[base]
"latency.L_ms" = 800

[axes.policy]
none = { "trigger.kind" = "none" }
interval_words = { "trigger.kind" = "interval", "trigger.words" = [3, 6] }
"""


def _grid(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(GRID, encoding="utf-8")
    return path


def _quiet(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return main(["--quiet", *argv])


def test_a_setting_goes_into_base_over_the_grids_own_and_a_file_it_names_is_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t").mkdir()
    grid = load_grid(_grid(tmp_path), sets=["latency.L_ms=1500", "input.delta_wps=2.5", "latency.profile=t/p.toml"])
    base = dict(grid.base)
    assert base["latency.L_ms"] == 1500 and base["input.delta_wps"] == 2.5  # the flag wins over the file's 800
    assert base["latency.profile"] == str(tmp_path / "t" / "p.toml")
    assert "--set latency.L_ms=1500" in grid.text and grid.text.count("\n[base]\n") == 1
    assert load_grid(_grid(tmp_path)).text == GRID  # no setting: the file's text as it is


def test_frontier_with_settings_reruns_from_its_run_folders_grid(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _quiet(["frontier", str(_grid(tmp_path)), "--set", "latency.L_ms=1500", "--out", str(out)]) == 0
    plain = tmp_path / "plain"
    assert _quiet(["frontier", str(_grid(tmp_path)), "--out", str(plain)]) == 0
    again = tmp_path / "again"
    assert _quiet(["frontier", str(out / "grid.toml"), "--out", str(again)]) == 0
    points = (out / "frontier" / "frontier.csv").read_bytes()
    assert (again / "frontier" / "frontier.csv").read_bytes() == points
    assert (plain / "frontier" / "frontier.csv").read_bytes() != points  # L 1500 ms, not 800: other savings
    assert pd.read_csv(out / "sweep.csv")["L_ms"].eq(1500).all()
    command = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["command"]
    assert command[-2:] == ["--set", "latency.L_ms=1500"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--set", "nope"], "--set 'nope': expected key=value"),
        (["--set", "latency.L_ms=abc"], "latency.L_ms: Input should be a valid number"),
        (["--jobs", "2", "--scheduler", "tcp://127.0.0.1:1"], "--jobs and --scheduler exclude each other"),
    ],
)
def test_a_bad_setting_or_option_is_one_line(argv: list[str], says: str, tmp_path: Path, capsys) -> None:
    assert main(["frontier", str(_grid(tmp_path)), *argv, "--out", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0]


def test_frontier_on_a_dask_scheduler_writes_what_it_writes_alone(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed (pip install -e '.[dask]')")
    from dask.distributed import LocalCluster

    alone = tmp_path / "alone"
    assert _quiet(["frontier", str(_grid(tmp_path)), "--out", str(alone)]) == 0
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        on_dask = tmp_path / "dask"
        assert _quiet(["frontier", str(_grid(tmp_path)), "--scheduler", cluster.scheduler_address, "--out", str(on_dask)]) == 0
    assert (on_dask / "frontier" / "frontier.csv").read_bytes() == (alone / "frontier" / "frontier.csv").read_bytes()
    assert json.loads((on_dask / "manifest.json").read_text(encoding="utf-8"))["executor"]["name"] == "dask"


SITUATION = {
    "tool_p50_ms": 800,
    "tool_p90_ms": 2000,
    "G_ms": 590,
    "F_ms": 2520,
    "input": "demo",
    "turns_per_s": 2,
    "tool_workers": 4,
    "load_sessions": 0,
}


def test_advise_settings_reach_every_point_and_the_scenario_it_writes(tmp_path: Path) -> None:
    situation = {**SITUATION, "settings": ["pipeline.max_threads=1", "input.end_of_turn_ms=200"]}
    advice = streamrag.advise(situation, tmp_path / "a")
    grid = (tmp_path / "a" / "runs" / "given" / "grid.toml").read_text(encoding="utf-8")
    assert "--set pipeline.max_threads=1" in grid
    scenario = (tmp_path / "a" / "scenario.toml").read_text(encoding="utf-8")
    assert "max_threads = 1" in scenario and "end_of_turn_ms = 200.0" in scenario
    data = json.loads((tmp_path / "a" / "advice.json").read_text(encoding="utf-8"))
    assert data["situation"]["settings"] == ["pipeline.max_threads=1", "input.end_of_turn_ms=200"]
    rows = advice.rows.dropna(subset=["baseline_ms.median"])
    assert (rows["baseline_ms.median"] > 590 + 800 + 2520).all()  # the 200 ms end-of-turn delay is in the baseline too


def test_advise_flags_settings_come_after_the_files(tmp_path: Path) -> None:
    from streamrag.advice.situation import read_situation

    path = tmp_path / "s.toml"
    path.write_text('tool_p50_ms = 800\ntool_p90_ms = 2000\nturns_per_s = 2\ntool_workers = 4\nsettings = ["seed=3"]\n')
    assert read_situation(path, {"settings": ["pipeline.max_threads=2"]}).settings == ("seed=3", "pipeline.max_threads=2")
    assert read_situation(path, {"settings": None}).settings == ("seed=3",)


def test_advise_refuses_jobs_with_a_scheduler_and_a_bad_setting_in_one_line(tmp_path: Path, capsys) -> None:
    base = ["advise", "--tool-p50-ms", "800", "--tool-p90-ms", "2000", "--turns-per-s", "2", "--tool-workers", "4"]
    assert main([*base, "--set", "bad", "--out", str(tmp_path / "x")]) == 1
    assert capsys.readouterr().err.strip() == (
        "streamrag: error: situation: settings: 'bad': expected key=value with a dotted key, e.g. latency.L_ms=1000"
    )
    assert main([*base, "--jobs", "2", "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "y")]) == 1
    assert "--jobs and --scheduler exclude each other" in capsys.readouterr().err
