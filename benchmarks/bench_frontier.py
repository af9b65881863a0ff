"""Benchmark: the whole frontier on 1,371 generated questions, as a user runs it, and the optimum alone.

From a shell, what a user types (each a fresh process, outputs written):

1. ``streamrag generate T.csv --table --questions 1371 --seed S`` (a synthetic table the
   size of CRAG's validation split and its ``prefixes.parquet``);
2. ``streamrag frontier --input table:T.csv --out DIR --jobs J`` — the built-in
   ``frontier`` grid (8 policies over their knobs, 22 points), then the frontier step
   (bootstrap CIs, operating points, the offline optimum of every question, figure and
   leaderboard), twice into fresh folders: the frontier's files must be byte-identical;

then, in this process, the offline optimum alone on the same questions (1 and J
processes). Reports wall time and CPU seconds (this process and its children: the
command and its workers) of each step, and the machine's load average (on a shared
machine other jobs take cores). The issue's bars: the frontier ≤ 10 min, the optimum
≤ 60 s on this 2-core machine. Writes ``benchmarks/out/bench_frontier.json``.

Usage: ``python benchmarks/bench_frontier.py [--questions 1371] [--seed 0] [--jobs 2] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import save

ROOT = Path(__file__).resolve().parents[1]
FILES = ("frontier.csv", "operating_points.csv", "optimum.csv", "leaderboard.md", "frontier.pdf", "frontier.svg")


def _cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(argv: list[str]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    load = os.getloadavg()[0]
    cpu0, t0 = _cpu_s(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "streamrag", *argv], check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    return {"wall_s": round(wall, 2), "cpu_s": round(_cpu_s() - cpu0, 2), "load_avg_1min_before": round(load, 2)}


def _optimum(table: Path, jobs: int) -> dict[str, float]:
    from streamrag.simulator.optimum import optima
    from streamrag.simulator.questions import questions_from_table
    from streamrag.simulator.scenario import load_scenario

    load = os.getloadavg()[0]
    cpu0, t0 = _cpu_s(), time.perf_counter()
    questions = questions_from_table(table).questions
    found = optima(questions, load_scenario("frontier"), jobs=jobs)
    wall = time.perf_counter() - t0
    mean = sum(o.saved_ms for o in found) / len(found)
    return {"jobs": jobs, "n_questions": len(found), "wall_s": round(wall, 2), "cpu_s": round(_cpu_s() - cpu0, 2),
            "optimum_saved_ms_mean": round(mean, 3), "load_avg_1min_before": round(load, 2)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1371)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="keep the run folders under this folder")
    args = parser.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-frontier-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        table = root / "T.csv"
        for stale in (table, root / "prefixes.parquet", root / "run1", root / "run2"):
            shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink(missing_ok=True)
        generate = _timed(["generate", str(table), "--table", "--questions", str(args.questions), "--seed", str(args.seed)])
        runs = []
        for name in ("run1", "run2"):
            runs.append(_timed(["frontier", "--input", f"table:{table}", "--out", str(root / name), "--jobs", str(args.jobs)]))
            print(f"frontier {name}: {runs[-1]}")
        identical = all((root / "run1/frontier" / f).read_bytes() == (root / "run2/frontier" / f).read_bytes() for f in FILES)
        leaderboard = (root / "run1/frontier/leaderboard.md").read_text(encoding="utf-8")
        opt = [_optimum(table, 1), _optimum(table, args.jobs)]
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print(f"generate: {generate}")
    print(f"frontier outputs byte-identical across the two runs: {identical}")
    for o in opt:
        print(f"optimum alone: {o}")
    print("\n" + leaderboard)
    path = save(
        "bench_frontier",
        {"questions": args.questions, "seed": args.seed, "jobs": args.jobs, "generate": generate, "frontier_runs": runs,
         "identical_outputs": identical, "optimum": opt, "leaderboard": leaderboard},
    )  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
