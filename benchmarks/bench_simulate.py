"""Benchmark: virtual-time simulation vs the wall-clock duration of what it replays.

First the figure a user sees: ``streamrag simulate --table gen.csv --scenario paper_rq3
--set select.population=all`` run from a shell (interpreter start, imports, reading the
table and its per-prefix evidence, the replay with the real reflector, writing every
output), best of ``--repeat``, against the replayed time of the same run. Then the
in-process arms below (the replay alone).

Replays the ``paper_rq3`` scenario trace-driven on a generated 1,371-question
stabilization table (the size of CRAG's validation split) at one grid point (L = 600 ms),
over the whole population (``select.population=all``), with 1 and 2 worker processes.

- *replayed time* = Σ over questions of (streaming answer ready − first word): the
  wall-clock time a live harness would need to replay them one after another (the
  anchor's harness ran ≈ 8 s per question per arm);
- *speed-up* = replayed time / wall time of the simulation (target ≥ 10,000×);
- *events/s* = trace events produced per wall second.

Also prints the paper_rq3 results (retrieved-gold slice, L = 600 and 1000 ms) on the same
table. Writes ``benchmarks/out/bench_simulate.json``.

Usage: ``python benchmarks/bench_simulate.py [--repeat 3] [--seed 0]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from streamrag.data.generate import generate_stabilization_table
from streamrag.simulator.questions import questions_from_frame, select_for
from streamrag.simulator.results import summarize
from streamrag.simulator.scenario import load_scenario
from streamrag.simulator.simulate import simulate

OUT = Path(__file__).resolve().parent / "out"


def _timed(questions, rs, jobs: int, repeat: int) -> dict:
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        run = simulate(questions, rs, jobs=jobs)
        wall = time.perf_counter() - t0
        if best is None or wall < best[0]:
            best = (wall, run)
    wall, run = best
    replayed_s = run.virtual_us / 1e6
    return {
        "jobs": jobs,
        "questions": len(questions),
        "wall_s": wall,
        "replayed_s": replayed_s,
        "speedup": replayed_s / wall,
        "events": run.n_events,
        "events_per_s": run.n_events / wall,
        "us_per_question": wall / len(questions) * 1e6,
    }


def _shell(n: int, seed: int, repeat: int) -> dict:
    """The end-to-end command on a generated table with its evidence, from a shell."""
    import shutil
    import subprocess
    import sys
    import tempfile

    from streamrag.simulator.questions import questions_from_table

    streamrag = str(Path(sys.executable).with_name("streamrag"))
    with tempfile.TemporaryDirectory(prefix="bench-simulate-") as tmp:
        table = Path(tmp) / "gen.csv"
        subprocess.run([streamrag, "generate", str(table), "--questions", str(n), "--seed", str(seed), "--table"],
                       check=True, capture_output=True)  # fmt: skip
        rs = load_scenario("paper_rq3", ["select.population=all"])
        run = simulate(select_for(questions_from_table(table), rs.scenario.selection()), rs)
        walls = []
        for i in range(repeat):
            out = Path(tmp) / f"run{i}"
            t0 = time.perf_counter()
            subprocess.run([streamrag, "simulate", "--table", str(table), "--scenario", "paper_rq3",
                            "--set", "select.population=all", "--out", str(out)], check=True, capture_output=True)  # fmt: skip
            walls.append(time.perf_counter() - t0)
            shutil.rmtree(out)
    wall = min(walls)
    return {"questions": n, "wall_s": wall, "replayed_s": run.virtual_us / 1e6, "speedup": run.virtual_us / 1e6 / wall}


def _rq3(questions, L_ms: int) -> dict:
    rs = load_scenario("paper_rq3", [f"latency.L_ms={L_ms}"])
    selected = select_for(questions, rs.scenario.selection())
    run = simulate(selected, rs)
    s = summarize(run.rows, {}, selected.counts)
    return {
        "L_ms": L_ms,
        "n": s["n_questions"],
        "saved_mean_ms": s["saved_ms"]["mean"],
        "saved_median_ms": s["saved_ms"]["median"],
        "H_mean_ms": s["H_ms"]["mean"],
        "H_G_mean_ms": s["H_G_ms"]["mean"],
        "rho_H_saved": s["spearman_H_saved"]["rho"],
        "p_H_saved": s["spearman_H_saved"]["p"],
        "rho_H_G_saved": s["spearman_H_G_saved"]["rho"],
        "p_H_G_saved": s["spearman_H_G_saved"]["p"],
        "negative_rate": s["negative"]["rate"],
        "n_negative": s["negative"]["n"],
        "misfire_rate": s["misfire"]["rate"],
        "calls_fired_per_q": s["calls_fired"]["mean"],
        "calls_used_per_q": s["calls_used"]["mean"],
        "calls_wasted_per_q": s["wasted_calls"]["mean"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated table")
    parser.add_argument("--n", type=int, default=1371)
    args = parser.parse_args()

    shell = _shell(args.n, args.seed, args.repeat)
    print(
        f"from a shell: streamrag simulate --table ({shell['questions']} questions with per-prefix evidence, paper_rq3): "
        f"{shell['wall_s']:.2f} s for {shell['replayed_s']:.0f} s replayed = {shell['speedup']:.0f}× real time"
    )

    questions = questions_from_frame(generate_stabilization_table(args.n, seed=args.seed))
    rs = load_scenario("paper_rq3", ["select.population=all"])
    population = select_for(questions, rs.scenario.selection()).questions
    simulate(population[:50], rs)  # warm-up (imports, caches)

    speed = [_timed(population, rs, jobs, args.repeat) for jobs in (1, 2)]
    print(f"paper_rq3 trace-driven, {len(population)} generated questions (table seed {args.seed}), L = 600 ms, all questions")
    print(f"{'jobs':>4} {'wall s':>8} {'replayed s':>11} {'speed-up':>10} {'events':>8} {'events/s':>10} {'µs/question':>12}")
    for r in speed:
        print(
            f"{r['jobs']:>4} {r['wall_s']:>8.3f} {r['replayed_s']:>11.1f} {r['speedup']:>9.0f}× "
            f"{r['events']:>8} {r['events_per_s']:>10.0f} {r['us_per_question']:>12.1f}"
        )

    rq3 = [_rq3(questions, L) for L in (600, 1000)]
    print("\npaper_rq3 (retrieved-gold slice) on the same table:")
    print(
        f"{'L ms':>5} {'n':>4} {'saved':>8} {'H':>7} {'H_G':>7} {'ρ(H,s)':>7} {'ρ(H_G,s)':>9} {'neg':>6} {'fired/q':>8} {'used/q':>7}"
    )
    for r in rq3:
        print(
            f"{r['L_ms']:>5} {r['n']:>4} {r['saved_mean_ms']:>8.1f} {r['H_mean_ms']:>7.1f} {r['H_G_mean_ms']:>7.1f} "
            f"{r['rho_H_saved']:>7.3f} {r['rho_H_G_saved']:>9.3f} {r['negative_rate']:>6.3f} "
            f"{r['calls_fired_per_q']:>8.2f} {r['calls_used_per_q']:>7.2f}"
        )

    OUT.mkdir(parents=True, exist_ok=True)
    doc = {
        "benchmark": "simulate",
        "scenario": "paper_rq3 (select.population=all), L = 600 ms",
        "table": {"generator": "streamrag.data.generate.generate_stabilization_table", "n": args.n, "seed": args.seed},
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "shell": shell,
        "speed": speed,
        "paper_rq3_retrieved_gold": rq3,
    }
    path = OUT / "bench_simulate.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
