"""Benchmark: the ``triggers`` sweep on a generated 1,371-question population, 1 vs N workers.

Runs ``sim/grids/triggers.toml`` (every trigger policy × L ∈ {300, 600, 1000, 2500} ms ×
δ ∈ {2, 2.5, 3, 4} w/s, the paper_rq3 pipeline, all questions) on
``generated:1371:seed=0`` — a synthetic table the size of CRAG's validation split with its
synthetic per-prefix evidence, so all 112 points run (``replace`` and ``stable`` included)
— once per worker count, each into a fresh run folder. Reports:

- wall time per worker count and the speed-up over one worker (the peer is the same
  sweep on one worker, in the same session);
- the sum of the points' own wall times (work) and work / (wall × workers) (how busy
  the pool kept its workers), and the CPU seconds the sweep's processes used over wall
  time (``cores_obtained``: on a shared machine, less than the workers asked for);
- that the sweep tables are byte-identical across worker counts;
- the Pareto front of mean saved ms vs wasted calls per question at δ = 3 w/s per L,
  and how often each trigger is on the front over all 16 (L, δ) cells.

The machine's load average is recorded: on a shared machine other jobs take cores.
Writes ``benchmarks/out/bench_sweep.json``.

Usage: ``python benchmarks/bench_sweep.py [--jobs 1 2] [--input generated:1371:seed=0] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd
from _common import save

from streamrag.sweep import load_grid, run_sweep
from streamrag.sweep.figures import reference_rows


def _cpu_s() -> float:
    """CPU seconds used by this process and its finished children (the pool's workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _run(grid_name: str, source: str, jobs: int, out: Path) -> dict:
    grid = load_grid(grid_name, input=source)
    load_before = os.getloadavg()[0]
    cpu0 = _cpu_s()
    t0 = time.perf_counter()
    result = run_sweep(grid, out, jobs=jobs)
    wall_s = time.perf_counter() - t0
    cpu_s = _cpu_s() - cpu0
    manifest = json.loads((out / "manifest.json").read_text())
    work_s = sum(p.get("wall_s", 0.0) for p in manifest["points"])
    return {
        "jobs": jobs,
        "points_run": len(result.computed),
        "points_skipped": len(result.plan.skipped),
        "wall_s": round(wall_s, 2),
        "work_s": round(work_s, 2),
        "efficiency": round(work_s / (wall_s * jobs), 3),
        "cpu_s": round(cpu_s, 2),
        "cores_obtained": round(cpu_s / wall_s, 2),
        "load_avg_1min_before": round(load_before, 2),
        "load_avg_1min_after": round(os.getloadavg()[0], 2),
    }


def _front(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    at_delta = reference_rows(table, keep=("trigger", "L_ms"))
    cols = ["L_ms", "delta_wps", "trigger", "saved_ms.mean", "H_ms.mean", "wasted_calls.mean", "misfire.rate"]
    front = at_delta[at_delta["pareto"]].sort_values(["L_ms", "wasted_calls.mean"])[cols]
    counts = table.groupby("trigger", sort=False)["pareto"].sum()
    return front, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="triggers")
    parser.add_argument("--input", default="generated:1371:seed=0")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--keep", type=Path, help="keep the run folders under this folder")
    args = parser.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    runs = []
    tables = {}
    try:
        for jobs in args.jobs:
            out = root / f"{args.grid}-jobs{jobs}"
            if out.exists():
                shutil.rmtree(out)
            runs.append(_run(args.grid, args.input, jobs, out))
            tables[jobs] = (out / "sweep.csv").read_bytes()
            print(f"jobs {jobs}: {runs[-1]}")
        first = tables[args.jobs[0]]
        identical = all(t == first for t in tables.values())
        table = pd.read_parquet(root / f"{args.grid}-jobs{args.jobs[0]}" / "sweep.parquet")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)

    base = runs[0]["wall_s"]
    for r in runs:
        r["speedup_vs_first"] = round(base / r["wall_s"], 2)
    front, counts = _front(table)
    print(f"\n{args.grid} on {args.input}: {runs[0]['points_run']} points run, {runs[0]['points_skipped']} skipped")
    print(pd.DataFrame(runs).to_string(index=False))
    print(f"sweep tables identical across worker counts: {identical}")
    print("\nPareto front (mean saved ms vs wasted calls per question), δ = 3 w/s, oracle excluded (a bound):")
    print(front.round(3).to_string(index=False))
    print(f"\ncells (L, δ) where each trigger is on the front, of {table.groupby(['L_ms', 'delta_wps']).ngroups}:")
    print(counts.to_string())
    path = save(
        "bench_sweep",
        {
            "grid": args.grid,
            "input": args.input,
            "runs": runs,
            "identical_tables": identical,
            "pareto_front_delta3": json.loads(front.to_json(orient="records")),
            "front_counts": {k: int(v) for k, v in counts.items()},
        },
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
