"""Running sweeps: identical across executors, resumable, arithmetic RQ2 cells, figures."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from streamrag.analysis.stats.rq import rq2_grid
from streamrag.base.errors import ConfigError
from streamrag.cli import main
from streamrag.data.generated.records import generate_stabilization_table
from streamrag.sweep import SerialExecutor, load_grid, read_point_results, read_sweep, run_sweep

PNG = b"\x89PNG\r\n\x1a\n"

SIM_GRID = """
    name = "small"
    kind = "simulate"
    input = "generated:60:seed=2"
    scenario = "paper_rq3"
    [base]
    "select.population" = "all"
    [output]
    figures = {figures}
    [axes]
    "latency.L_ms" = [{Ls}]
    [axes.trigger]
    interval_3w = {{ "trigger.kind" = "interval", "trigger.words" = 3 }}
    every_word = {{ "trigger.kind" = "every_word" }}
    oracle = {{ "trigger.kind" = "oracle" }}
    none = {{ "trigger.kind" = "none" }}
"""


def _grid(tmp_path: Path, Ls: str = "600, 1000", name: str = "small.toml", figures: bool = False) -> Path:
    path = tmp_path / name
    text = SIM_GRID.format(Ls=Ls, figures="true" if figures else "false")
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _point_files(out: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted((out / "points").rglob("*"))
        if p.is_file() and p.name not in ("done.json",)  # done.json records wall time
    }


def test_jobs_1_jobs_2_and_dask_give_identical_results(tmp_path):
    grid = _grid(tmp_path)
    outs = {}
    for name, extra in (("serial", ["--jobs", "1"]), ("pool", ["--jobs", "2"])):
        outs[name] = tmp_path / name
        assert main(["sweep", str(grid), "--out", str(outs[name]), *extra]) == 0
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        outs["dask"] = tmp_path / "dask"
        assert main(["sweep", str(grid), "--out", str(outs["dask"]), "--scheduler", cluster.scheduler_address]) == 0
    reference = outs["serial"]
    table = read_sweep(reference)
    assert len(table) == 8 and table["n_questions"].eq(60).all()
    for name, out in outs.items():
        assert (out / "sweep.csv").read_bytes() == (reference / "sweep.csv").read_bytes(), name
        pd.testing.assert_frame_equal(read_sweep(out), table)
        assert _point_files(out) == _point_files(reference), name
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["n_computed"] == 8 and manifest["n_reused"] == 0
    executors = {json.loads((o / "manifest.json").read_text())["executor"]["name"] for o in outs.values()}
    assert executors == {"serial", "processes", "dask"}


class CountingExecutor(SerialExecutor):
    """Serial, counting the points it computes."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def run(self, jobs, shared):
        for output in super().run(jobs, shared):
            self.keys.append(output.key)
            yield output


class Crash(Exception):
    pass


def test_killed_sweep_resumes_without_recomputing_finished_points(tmp_path):
    grid = _grid(tmp_path)
    out = tmp_path / "run"

    def crash_after_three(event):
        if event.n_done == 3:
            raise Crash("killed")

    first = CountingExecutor()
    with pytest.raises(Crash):
        run_sweep(grid, out, executor=first, on_point=crash_after_three)
    assert len(first.keys) == 3
    assert not (out / "manifest.json").exists() and not (out / "sweep.csv").exists()
    done = {key: (out / "points" / key / "done.json").stat().st_mtime_ns for key in first.keys}

    with pytest.raises(ConfigError, match="pass --resume"):
        run_sweep(grid, out)  # refuses to overwrite without resume
    second = CountingExecutor()
    result = run_sweep(grid, out, executor=second, resume=True)
    assert sorted(result.reused) == sorted(first.keys)
    assert len(second.keys) == 5 and not set(second.keys) & set(first.keys)
    assert {k: (out / "points" / k / "done.json").stat().st_mtime_ns for k in first.keys} == done

    # The resumed folder holds the same results as an uninterrupted run.
    fresh = tmp_path / "fresh"
    run_sweep(grid, fresh)
    assert (out / "sweep.csv").read_bytes() == (fresh / "sweep.csv").read_bytes()

    # A point whose done marker is missing (killed while writing) is recomputed.
    (out / "points" / first.keys[0] / "done.json").unlink()
    third = CountingExecutor()
    run_sweep(grid, out, executor=third, resume=True)
    assert third.keys == [first.keys[0]]

    # Extending an axis computes only the new points, into the same folder.
    fourth = CountingExecutor()
    extended = run_sweep(_grid(tmp_path, Ls="600, 1000, 2500", name="bigger.toml"), out, executor=fourth, resume=True)
    assert len(fourth.keys) == 4 and len(extended.reused) == 8
    assert sorted(read_sweep(out)["L_ms"].unique()) == [600.0, 1000.0, 2500.0]
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["n_points"], manifest["n_computed"], manifest["n_reused"]) == (12, 4, 8)


def test_rq2_points_are_the_arithmetic_cells(tmp_path):
    out = tmp_path / "rq2"
    table = generate_stabilization_table(150, seed=5)
    csv = tmp_path / "stabilization.csv"
    table.to_csv(csv, index=False)
    assert main(["sweep", "paper_rq2", "--input", f"table:{csv}", "--out", str(out)]) == 0
    got = read_sweep(out)
    from streamrag.analysis.stats.rq import flatten

    expected = pd.DataFrame([flatten(c) for c in rq2_grid(table, G_ms=590.0)])
    assert len(got) == 36
    for column in ("L_ms", "delta_wps", "theta", "n", "n_streamable", "streamable_fraction", "H_ms.mean", "H_G_ms.mean"):
        assert got[column].tolist() == expected[column].tolist(), column
    cell = json.loads((out / "points" / got["key"][0] / "cell.json").read_text())
    assert cell["streamable_fraction"] == got["streamable_fraction"][0]
    assert (out / "figures" / "streamable_heatmaps.png").read_bytes().startswith(PNG)
    assert json.loads((out / "manifest.json").read_text())["executor"]["name"] == "serial"


def test_simulate_sweep_outputs_table_figures_and_pareto(tmp_path):
    out = tmp_path / "run"
    result = run_sweep(_grid(tmp_path, figures=True), out)
    table = result.table
    expected = ["point", "key", "L_ms", "trigger", "trigger_kind", "reflector", "G_ms"]
    assert list(table.columns[: len(expected)]) == expected
    assert {"saved_ms.mean", "H_ms.mean", "H_G_ms.mean", "wasted_calls.mean", "pareto"} <= set(table.columns)
    none = table[table["trigger"] == "none"]
    assert none["saved_ms.mean"].eq(0).all() and none["wasted_calls.mean"].eq(0).all()
    # every point names the reflector model it ran: a generated table is replayed with
    # synthetic per-prefix evidence, under the anchor's rules
    from streamrag.analysis.evidence.synthetic import MODEL_NAME

    assert set(table["reflector_model"]) == {f"heuristic on {MODEL_NAME}"} and set(table["rules.preset"]) == {"paper"}
    assert json.loads((out / "manifest.json").read_text())["reflector_models"] == [f"heuristic on {MODEL_NAME}"]
    assert not table.loc[table["trigger"] == "oracle", "pareto"].any()  # a bound, not a contender
    assert table.groupby("L_ms")["pareto"].any().all()
    per_q = read_point_results(out, table["key"][0])
    assert len(per_q) == 60 and {"H_ms", "saved_ms"} <= set(per_q.columns)
    assert per_q["saved_ms"].mean() == pytest.approx(table["saved_ms.mean"][0])
    # the column, the summary key and the sweep column are one name
    summary = json.loads((out / "points" / table["key"][0] / "summary.json").read_text())
    assert summary["saved_ms"]["mean"] == table["saved_ms.mean"][0]
    for name in ("saved_vs_bounds.png", "pareto.png", "saved_vs_H_scatter.png"):
        assert (out / "figures" / name).read_bytes().startswith(PNG), name
    assert not list(out.rglob("trace.jsonl"))  # traces are opt-in ([output] traces = true)

    # Whatever the trigger axis is called, the front compares triggers at equal L.
    renamed = tmp_path / "renamed.toml"
    renamed.write_text(_grid(tmp_path).read_text().replace("[axes.trigger]", "[axes.policy]"))
    again = run_sweep(renamed, tmp_path / "renamed").table
    assert again["pareto"].tolist() == table["pareto"].tolist()
    assert again["trigger"].tolist()[:2] == ["interval(words=3)", "every_word"]


def test_full_mode_runs_ranking_policies_and_analyze_points(tmp_path):
    sim = tmp_path / "full.toml"
    sim.write_text(textwrap.dedent("""
        kind = "simulate"
        input = { source = "demo", limit = 6 }
        [base]
        "select.population" = "all"
        [output]
        traces = true
        figures = false
        [axes]
        "data.k" = [1, 3]
        [axes.trigger]
        stable_2w = { "trigger.kind" = "stable", "trigger.words" = 2 }
        replace = { "trigger.kind" = "replace" }
        [axes.reflector]
        topk_match = { "reflector.kind" = "topk_match" }
    """), encoding="utf-8")  # fmt: skip
    result = run_sweep(sim, tmp_path / "sim")
    assert len(result.table) == 4 and result.table["n_questions"].tolist() == [6] * 4
    # Each analysis setting gets its own prefix rankings (top-1 or top-3 per prefix).
    refs = {p.job.input_ref for p in result.plan.points}
    assert len(refs) == 2 and all('"k":' in r for r in refs)
    assert all((tmp_path / "sim" / "points" / k / "trace.jsonl").stat().st_size > 0 for k in result.table["key"])

    topk = tmp_path / "topk.toml"
    topk.write_text(load_grid("topk").text.replace('input = "demo"', 'input = { source = "demo", limit = 10 }'))
    analyzed = run_sweep(topk, tmp_path / "topk")
    t = analyzed.table
    assert len(t) == 6 and t["n_questions"].eq(10).all()
    for _, arm in t.groupby("grounding"):  # a larger k can only find gold sooner
        assert arm.sort_values("k")["n_retrieved_gold"].is_monotonic_increasing
    key = t["key"][0]
    assert (tmp_path / "topk" / "points" / key / "stabilization.csv").is_file()
    assert (tmp_path / "topk" / "figures" / "analysis_arms.png").read_bytes().startswith(PNG)


def test_sweep_runs_inside_a_running_event_loop(tmp_path):
    """A Jupyter kernel runs an asyncio loop in its main thread; sweeps still work there."""
    import asyncio

    async def in_a_kernel():
        return run_sweep(_grid(tmp_path, Ls="600"), tmp_path / "run")

    result = asyncio.run(in_a_kernel())
    assert len(result.computed) == 4


def test_sweep_killed_by_a_signal_resumes(tmp_path):
    """A real kill (SIGKILL, possibly mid-write): finished points are reused, none redone."""
    import os
    import signal
    import subprocess
    import sys
    import time

    grid = tmp_path / "slow.toml"
    grid.write_text(_grid(tmp_path, Ls="300, 600, 1000").read_text().replace("generated:60:seed=2", "generated:200:seed=2"))
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamrag.cli", "sweep", str(grid), "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(list(out.glob("points/*/done.json"))) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finished = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("points/*/done.json")}
    assert 2 <= len(finished) < 12 and not (out / "manifest.json").exists()
    counting = CountingExecutor()
    result = run_sweep(grid, out, executor=counting, resume=True)
    assert set(result.reused) == set(finished) and len(counting.keys) == 12 - len(finished)
    assert {k: (out / "points" / k / "done.json").stat().st_mtime_ns for k in finished} == finished


def test_simulate_points_in_global_scope(tmp_path):
    grid = tmp_path / "scope.toml"
    grid.write_text(textwrap.dedent("""
        kind = "simulate"
        input = { source = "demo", limit = 8 }
        [base]
        "select.population" = "all"
        [output]
        figures = false
        [axes]
        "data.scope" = ["per-question", "global"]
    """), encoding="utf-8")  # fmt: skip
    result = run_sweep(grid, tmp_path / "out")
    refs = {p.job.input_ref for p in result.plan.points}
    # per-question points keep the plain reference; global ones are analyzed against the pool
    assert len(refs) == 2
    assert sum('"scope":"global"' in r for r in refs) == 1 and sum("scope" not in r for r in refs) == 1
    t = result.table
    assert len(t) == 2 and t["n_questions"].tolist() == [8, 8]
    # the pooled corpus ranks differently, so the simulated savings differ
    assert t["H_ms.mean"].nunique() == 2 or t["saved_ms.mean"].nunique() == 2


def test_analysis_arms_figure_with_another_varying_setting(tmp_path):
    import pandas as pd

    from streamrag.base.figures import save_figure
    from streamrag.sweep.figures import plot_analysis_arms

    # retriever × k with one grounding: k alone does not identify a bar (the grid that crashed)
    table = pd.DataFrame(
        [{"retriever": r, "k": k, "grounding": "exact", "share_retrieved_gold": 0.5 + k / 100, "phi_suf.mean": 0.2}
         for r in ("bm25", "dense") for k in (1, 3, 5)]
    )  # fmt: skip
    path = save_figure(plot_analysis_arms(table), tmp_path / "arms.png")
    assert path.read_bytes().startswith(PNG)


LOAD_GRID = """
    name = "small-load"
    kind = "simulate"
    input = "generated:40:seed=2"
    scenario = "load"
    [base]
    "load.arrivals.n_sessions" = 120
    "load.warmup_s" = 0.0
    "load.reference_sessions" = 20
    [axes]
    "load.arrivals.offered_load" = [0.1, 0.9]
    [axes.policy]
    always = { "policy.kind" = "always" }
    coalesce = { "policy.kind" = "coalesce" }
"""


def test_a_load_grid_writes_per_system_columns_and_the_load_figure(tmp_path):
    grid = tmp_path / "load.toml"
    grid.write_text(textwrap.dedent(LOAD_GRID), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["sweep", str(grid), "--out", str(out)]) == 0
    table = read_sweep(out)
    assert sorted(table["offered_load"]) == [0.1, 0.1, 0.9, 0.9]
    assert set(table["policy"]) == {"always", "coalesce"}
    for column in ("streaming.answer_ms.median", "baseline.answer_ms.p90", "answer_ms_difference.median",
                   "streaming.resources.tool.utilization", "reference.unlimited_saved_ms.mean"):  # fmt: skip
        assert table[column].notna().all(), column
    low, high = (table[table["offered_load"] == x] for x in (0.1, 0.9))
    # speculation loads the streaming system's tool far more than the baseline's
    assert (low["streaming.resources.tool.utilization"] > low["baseline.resources.tool.utilization"]).all()
    assert high["baseline.resources.tool.utilization"].mean() > low["baseline.resources.tool.utilization"].mean()
    assert (out / "figures" / "load.png").read_bytes().startswith(PNG)


def test_a_load_grid_over_triggers_ranks_them_by_wasted_tool_time_and_resumes(tmp_path):
    # A trigger axis under load once computed every point and died building the table
    # (KeyError 'wasted_calls.mean': a load point has no replay's wasted calls).
    grid = tmp_path / "load.toml"
    text = LOAD_GRID.replace('coalesce = { "policy.kind" = "coalesce" }', "")
    text = text.replace("[axes.policy]", "[axes.trigger]")
    text = text.replace(
        'always = { "policy.kind" = "always" }',
        'interval = { "trigger.kind" = "interval" }\n    every = { "trigger.kind" = "every_word" }',
    )
    grid.write_text(textwrap.dedent(text), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["sweep", str(grid), "--out", str(out)]) == 0
    table = read_sweep(out)
    assert set(table["trigger"]) == {"interval", "every"} and len(table) == 4
    assert table.groupby("offered_load")["pareto"].any().all()  # one front per load, over the triggers
    cheaper = table.loc[table["streaming.wasted_share.tool"].idxmin()]
    assert bool(cheaper["pareto"])  # the least wasteful point is never dominated
    assert (out / "break_even.csv").is_file() and (out / "figures" / "load.png").read_bytes().startswith(PNG)
    assert main(["sweep", str(grid), "--out", str(out), "--resume"]) == 0


def test_break_even_interpolates_the_first_sign_change() -> None:
    from streamrag.sweep.break_even import crossing as break_even

    assert break_even([0.1, 0.2, 0.3], [300.0, 100.0, -100.0]) == pytest.approx(0.25)
    assert break_even([0.3, 0.1, 0.2], [-100.0, 300.0, 100.0]) == pytest.approx(0.25)  # any order
    assert break_even([0.1, 0.2], [50.0, 10.0]) is None  # streaming pays everywhere
    assert break_even([0.1, 0.2], [-5.0, -10.0]) == pytest.approx(0.1)  # never pays
    assert break_even([0.1, 0.2, 0.3], [100.0, float("nan"), -100.0]) == pytest.approx(0.2)


def test_a_scheduler_without_dask_installed_is_one_line(tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # as if the dask extra were not installed
    code = main(["sweep", str(_grid(tmp_path)), "--out", str(tmp_path / "run"), "--scheduler", "tcp://127.0.0.1:1"])
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'streamrag[dask]'" in err[0]
