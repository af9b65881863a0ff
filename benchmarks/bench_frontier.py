"""Benchmark: the whole frontier on 1,371 generated questions, as a user runs it, and the optimum alone.

From a shell, what a user types (each a fresh process, outputs written):

1. ``streamrag generate T.csv --table --questions 1371 --seed S`` (a synthetic table the
   size of CRAG's validation split and its ``prefixes.parquet``);
2. ``streamrag frontier --input table:T.csv --out DIR --jobs J`` — the built-in
   ``frontier`` grid (10 policies over their knobs, 30 points, the shipped learned
   model among them), then the frontier step (bootstrap CIs, operating points, the
   offline optimum of every question, figure and leaderboard), twice into fresh
   folders: the frontier's files must be byte-identical;

then, in this process, the offline optimum alone on the same questions (1 and J
processes), and for each single-fire ``learned`` point the shipped model's analytic
saving (the anchor's rule, ``train-trigger``'s paper evaluation) beside its replayed
one on the same retrieved-gold questions (:func:`streamrag.learn.analytic_vs_replay.compare`).
Reports wall time and CPU seconds (this process and its children: the command and its
workers) of each step, and the machine's load average (on a shared machine other jobs
take cores). The issue's bars: the frontier ≤ 10 min, the optimum ≤ 60 s on this 2-core
machine. Writes ``benchmarks/out/bench_frontier.json``.

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
    from streamrag.simulator.predict.optimum import optima
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


def _learned(run: Path, table: Path) -> list[dict[str, object]]:
    """Analytic vs replayed saving of each single-fire ``learned`` point of ``run``."""
    import csv

    from streamrag.analysis.evidence.prefixes import find_evidence
    from streamrag.analysis.evidence.read import read_evidence
    from streamrag.analysis.features.compute import prefix_features
    from streamrag.analysis.table import read_table_records
    from streamrag.learn.analytic_vs_replay import analytic_fires, compare
    from streamrag.learn.paper import AnalyticParams
    from streamrag.pipeline.learned import feature_matrix, load_model, predict_proba

    records, _ = read_table_records(table)
    gold = {str(r["interaction_id"]) for r in records if r["t_suf"] is not None}
    found = find_evidence(table)
    assert found is not None
    features = {qid: prefix_features(ev) for qid, ev in read_evidence(found).items() if qid in gold}
    model = load_model("frontier")
    probs = {qid: predict_proba(model, feature_matrix(model.columns, f)) for qid, f in features.items()}
    out = []
    with open(run / "sweep.csv", newline="", encoding="utf-8") as fh:
        points = [r for r in csv.DictReader(fh) if r["policy"].startswith("learned=")]
    for point in points:
        tau = float(point["policy"].partition("=")[2])
        with open(run / "points" / point["key"] / "results.csv", newline="", encoding="utf-8") as fh:
            rows = [r for r in csv.DictReader(fh) if r["skip_reason"] == "" and r["interaction_id"] in gold]
        # the frontier scenario's mean L (arora2025) and delta; C_waste = L, as train-trigger
        side = compare(rows, analytic_fires(features, probs, tau), AnalyticParams(600.0, 3.0, 600.0))
        out.append({"tau": tau, **side})
    return out


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
        for stale in (table, root / "T.prefixes.parquet", root / "run1", root / "run2"):
            shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink(missing_ok=True)
        generate = _timed(["generate", str(table), "--table", "--questions", str(args.questions), "--seed", str(args.seed)])
        runs = []
        for name in ("run1", "run2"):
            runs.append(_timed(["frontier", "--input", f"table:{table}", "--out", str(root / name), "--jobs", str(args.jobs)]))
            print(f"frontier {name}: {runs[-1]}")
        identical = all((root / "run1/frontier" / f).read_bytes() == (root / "run2/frontier" / f).read_bytes() for f in FILES)
        leaderboard = (root / "run1/frontier/leaderboard.md").read_text(encoding="utf-8")
        opt = [_optimum(table, 1), _optimum(table, args.jobs)]
        learned = _learned(root / "run1", table)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print(f"generate: {generate}")
    print(f"frontier outputs byte-identical across the two runs: {identical}")
    for o in opt:
        print(f"optimum alone: {o}")
    for side in learned:
        an, rep = side["analytic"], side["replayed"]
        print(f"learned tau {side['tau']}: {side['n_questions']} retrieved-gold questions, analytic {an} / replayed {rep}; "
              f"by reason {side['by_reason']}")  # fmt: skip
    print("\n" + leaderboard)
    path = save(
        "bench_frontier",
        {"questions": args.questions, "seed": args.seed, "jobs": args.jobs, "generate": generate, "frontier_runs": runs,
         "identical_outputs": identical, "optimum": opt, "learned_analytic_vs_replayed": learned,
         "leaderboard": leaderboard},
    )  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
