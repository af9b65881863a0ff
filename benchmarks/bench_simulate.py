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

The shell figure is set beside two floors: the command's own imports, and ``python -c
"import numpy, pandas, pyarrow"`` (issue 42's floor: ``cpu_over_numpy_floor``).

Arms (issue 28): the closed-form replay (the default wherever it applies:
:mod:`streamrag.simulator.replay.closed_form`) against the event engine (``--engine``), interleaved,
wall and CPU time, their ``results.csv`` and ``trace.jsonl`` bytes checked identical —
in process (rows only; rows, then the trace replayed for it, as ``simulate`` records a
closed-form trace when asked; rows and trace from one traced replay, what ``simulate
--table`` runs per block) and from a shell. ``--memory 1000,10000,100000`` also measures the
maximum resident set of the shell command (``/usr/bin/time -v``) on tables of those
sizes, closed form and engine, beside the import floor (``--memory-only``: that alone).

Also prints the paper_rq3 results (retrieved-gold slice, L = 600 and 1000 ms) on the same
table. Writes ``benchmarks/out/bench_simulate.json``.

Usage: ``python benchmarks/bench_simulate.py [--repeat 3] [--seed 0] [--memory 1000,10000,100000] [--memory-only]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from _common import load_average, record

from streamrag.data.generated.records import generate_stabilization_table
from streamrag.simulator.question_select import select_for
from streamrag.simulator.questions import questions_from_frame
from streamrag.simulator.run_output import summarize
from streamrag.simulator.scenario import load_scenario
from streamrag.simulator.simulate import simulate

OUT = Path(__file__).resolve().parent / "out"


def _arms(questions, rs, repeat: int) -> tuple[list[dict], dict]:
    """The in-process arms, interleaved, best wall of ``repeat`` (CPU of that run beside)."""
    from streamrag.simulator.run_output import results_csv
    from streamrag.simulator.simulate import closed_form_traced

    arms = {
        "engine, 1 process": lambda: simulate(questions, rs, engine=True),
        "engine, 2 processes": lambda: simulate(questions, rs, jobs=2, engine=True),
        "closed form (rows)": lambda: simulate(questions, rs),
        "closed form (rows + trace)": lambda: _traced(simulate(questions, rs)),
        "closed form (traced, one replay)": lambda: _one_replay(closed_form_traced(questions, rs)),
    }
    best: dict[str, tuple[float, float, object]] = {}
    for _ in range(repeat):
        for name, fn in arms.items():
            t0, c0 = time.perf_counter(), time.process_time()
            run = fn()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if name not in best or wall < best[name][0]:
                best[name] = (wall, cpu, run)
    engine, closed = best["engine, 1 process"][2], best["closed form (rows)"][2]
    same = {
        "results.csv": results_csv(engine.all_rows) == results_csv(closed.all_rows),
        "trace.jsonl": engine.trace_bytes() == closed.trace_bytes(),
    }
    one = best["closed form (traced, one replay)"][2]
    same["one replay"] = results_csv(one.all_rows) == results_csv(engine.all_rows) and one.trace_bytes() == engine.trace_bytes()
    if not all(same.values()):
        raise SystemExit(f"closed form and engine differ: {same}")
    out = []
    for name, (wall, cpu, run) in best.items():
        replayed_s = run.virtual_us / 1e6
        out.append({
            "arm": name, "replay": run.replay, "questions": len(questions), "wall_s": wall, "cpu_s": cpu,
            "replayed_s": replayed_s, "speedup": replayed_s / wall, "us_per_question": wall / len(questions) * 1e6,
            "cpu_us_per_question": cpu / len(questions) * 1e6,
        })  # fmt: skip
    return out, same


def _traced(run):
    run.trace_bytes()
    return run


def _one_replay(traced):
    """What ``simulate --table`` runs per block: rows and trace lines from one traced
    replay of each question (``closed_form_traced``), as a run to compare."""
    from streamrag.simulator.simulate import SimulationRun

    outputs, trace = traced
    return SimulationRun(outputs, [o.row for o in outputs], replay="closed_form", deferred_trace=lambda: iter([trace]))


def _shell(n: int, seed: int, repeat: int) -> dict:
    """The end-to-end command on a generated table with its evidence, from a shell: the
    closed form (default) and ``--engine``, interleaved, best of ``repeat``.

    Python as a user runs it: modules' bytecode cached (Python's default, and what ``pip
    install`` precompiles), after one untimed round that writes it. An environment that
    sets ``PYTHONDONTWRITEBYTECODE`` on a fresh checkout compiles every module of
    streamrag from source on every start (0.06 s more here); the benchmark unsets
    it for its commands."""
    import shutil
    import subprocess
    import sys
    import tempfile

    from streamrag.simulator.questions import questions_from_table

    streamrag = str(Path(sys.executable).with_name("streamrag"))
    floor_cmd = [
        sys.executable,
        "-c",
        "import streamrag.cli, streamrag.commands.simulate, streamrag.simulator.simulate, streamrag.simulator.questions",
    ]
    numpy_floor_cmd = [sys.executable, "-c", "import numpy, pandas, pyarrow"]  # issue 42's floor
    with tempfile.TemporaryDirectory(prefix="bench-simulate-") as tmp:
        table = Path(tmp) / "gen.csv"
        subprocess.run([streamrag, "generate", str(table), "--questions", str(n), "--seed", str(seed), "--table"],
                       check=True, capture_output=True)  # fmt: skip
        rs = load_scenario("paper_rq3", ["select.population=all"])
        run = simulate(select_for(questions_from_table(table), rs.scenario.selection()), rs)
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        walls: dict[str, list[float]] = {"closed_form": [], "engine": [], "import floor": [], "numpy floor": []}
        cpus: dict[str, list[float]] = {arm: [] for arm in walls}
        outputs: dict[str, dict[str, bytes]] = {}
        arms = (("closed_form", []), ("engine", ["--engine"]))
        for i in range(-1, repeat):  # round -1 writes the bytecode, untimed
            for arm, extra in arms if i % 2 else arms[::-1]:
                out = Path(tmp) / f"{arm}{i}"
                t0, c0 = time.perf_counter(), _children_cpu()
                subprocess.run([streamrag, "simulate", "--table", str(table), "--scenario", "paper_rq3", "--set",
                                "select.population=all", "--out", str(out), *extra], check=True, capture_output=True, env=cached)  # fmt: skip
                if i >= 0:
                    walls[arm].append(time.perf_counter() - t0)
                    cpus[arm].append(_children_cpu() - c0)
                outputs[arm] = {name: (out / name).read_bytes() for name in ("results.csv", "trace.jsonl")}
                assert json.loads((out / "manifest.json").read_text())["replay"] == arm
                shutil.rmtree(out)
            for floor, cmd in (("import floor", floor_cmd), ("numpy floor", numpy_floor_cmd)):
                t0, c0 = time.perf_counter(), _children_cpu()
                subprocess.run(cmd, check=True, capture_output=True, env=cached)
                if i >= 0:
                    walls[floor].append(time.perf_counter() - t0)
                    cpus[floor].append(_children_cpu() - c0)
    if outputs["closed_form"] != outputs["engine"]:
        raise SystemExit("from a shell, the closed form's outputs differ from the engine's")
    replayed_s = run.virtual_us / 1e6

    def best(arm: str) -> dict[str, float]:  # the best wall, and the CPU (user + sys) of that run
        i = min(range(len(walls[arm])), key=walls[arm].__getitem__)
        return {"wall_s": walls[arm][i], "cpu_s": cpus[arm][i], "speedup": replayed_s / walls[arm][i]}

    arms = {arm: best(arm) for arm in walls if not arm.endswith("floor")}
    floor, numpy_floor = best("import floor"), best("numpy floor")
    return {"questions": n, "replayed_s": replayed_s, "import_floor_s": floor["wall_s"], "import_floor_cpu_s": floor["cpu_s"],
            "numpy_floor_s": numpy_floor["wall_s"], "numpy_floor_cpu_s": numpy_floor["cpu_s"],
            "cpu_over_numpy_floor": arms["closed_form"]["cpu_s"] / numpy_floor["cpu_s"], "identical": True, **arms}  # fmt: skip


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _memory(sizes: list[int], seed: int) -> dict:
    """Maximum resident set (``/usr/bin/time -v``) of ``streamrag simulate --table`` on
    generated tables of each size with their evidence, on the closed form (default) and
    ``--engine``, beside the import floor (the command's modules imported, nothing run)."""
    import re
    import subprocess
    import sys
    import tempfile

    streamrag = str(Path(sys.executable).with_name("streamrag"))

    def max_rss_mib(cmd: list[str]) -> tuple[float, float, float]:
        t0 = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-v", *cmd], check=True, capture_output=True, text=True)
        kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
        cpu = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", done.stderr).group(1)) for k in ("User", "System"))
        return kib / 1024, time.perf_counter() - t0, cpu

    floor_cmd = [sys.executable, "-c", "import streamrag.cli, streamrag.commands.simulate, streamrag.simulator.table_run, "
                 "streamrag.simulator.simulate, pyarrow.parquet"]  # fmt: skip
    load_before = load_average()
    floor, _, _ = max_rss_mib(floor_cmd)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-simulate-memory-") as tmp:
        for n in sizes:
            table = Path(tmp) / f"gen{n}.csv"
            subprocess.run([streamrag, "generate", str(table), "--questions", str(n), "--seed", str(seed), "--table"],
                           check=True, capture_output=True)  # fmt: skip
            outputs = {}
            for arm, extra in (("closed_form", []), ("engine", ["--engine"])):
                out = Path(tmp) / f"run-{arm}-{n}"
                rss, wall, cpu = max_rss_mib([streamrag, "simulate", "--table", str(table), "--scenario", "paper_rq3",
                                              "--set", "select.population=all", "--out", str(out), *extra])  # fmt: skip
                outputs[arm] = {name: (out / name).read_bytes() for name in ("results.csv", "trace.jsonl")}
                rows.append({"rows": n, "arm": arm, "max_rss_mib": rss, "wall_s": wall, "cpu_s": cpu})
            if outputs["closed_form"] != outputs["engine"]:
                raise SystemExit(f"{n} rows: the closed form's outputs differ from the engine's")
    return {"import_floor_mib": floor, "runs": rows, "load_average": [load_before, load_average()]}


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


def _print_memory(memory: dict) -> None:
    print(
        f"\nsimulate --table, max RSS (load average {memory['load_average'][0]} → {memory['load_average'][1]}); import floor {memory['import_floor_mib']:.0f} MiB"
    )
    print(f"{'rows':>8} {'arm':>12} {'max RSS MiB':>12} {'wall s':>8} {'cpu s':>7}")
    for r in memory["runs"]:
        print(f"{r['rows']:>8} {r['arm']:>12} {r['max_rss_mib']:>12.0f} {r['wall_s']:>8.1f} {r['cpu_s']:>7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated table")
    parser.add_argument("--n", type=int, default=1371)
    parser.add_argument(
        "--memory", default="", metavar="N,N,…", help="also measure max RSS on tables of these sizes (e.g. 1000,10000,100000)"
    )
    parser.add_argument("--memory-only", action="store_true", help="measure --memory only (no speed arms, no RQ3 table)")
    args = parser.parse_args()
    sizes = [int(n) for n in args.memory.split(",") if n]
    if args.memory_only:
        memory = _memory(sizes, args.seed)
        _print_memory(memory)
        OUT.mkdir(parents=True, exist_ok=True)
        path = OUT / "bench_simulate_memory.json"
        path.write_text(json.dumps({"benchmark": "simulate memory", "memory": memory}, indent=2) + "\n")
        record("bench_simulate_memory", {"memory": memory})
        print(f"\nwrote {path}")
        return

    load_before = load_average()
    print(f"load average {load_before} (1 minute) before the arms")
    shell = _shell(args.n, args.seed, args.repeat)
    print(
        f"from a shell: streamrag simulate --table ({shell['questions']} questions with per-prefix evidence, paper_rq3), "
        f"{shell['replayed_s']:.0f} s replayed; import floor {shell['import_floor_s']:.2f} s "
        f"({shell['import_floor_cpu_s']:.2f} s CPU); floor `import numpy, pandas, pyarrow` {shell['numpy_floor_s']:.2f} s "
        f"({shell['numpy_floor_cpu_s']:.2f} s CPU; the closed form's CPU {shell['cpu_over_numpy_floor']:.2f}× it); outputs identical"
    )
    for arm in ("closed_form", "engine"):
        a = shell[arm]
        print(f"  {arm:>12}: {a['wall_s']:.2f} s ({a['cpu_s']:.2f} s CPU) = {a['speedup']:.0f}× real time")

    questions = questions_from_frame(generate_stabilization_table(args.n, seed=args.seed))
    rs = load_scenario("paper_rq3", ["select.population=all"])
    population = select_for(questions, rs.scenario.selection()).questions
    simulate(population[:50], rs)  # warm-up (imports, caches)
    simulate(population[:50], rs, engine=True)

    speed, identical = _arms(population, rs, args.repeat)
    print(f"\npaper_rq3 trace-driven, {len(population)} generated questions (table seed {args.seed}), L = 600 ms, all questions")
    print(f"outputs of the closed form and the engine identical: {identical}")
    print(f"{'arm':>32} {'wall s':>8} {'cpu s':>7} {'speed-up':>10} {'µs/q':>8} {'cpu µs/q':>9}")
    for r in speed:
        print(
            f"{r['arm']:>32} {r['wall_s']:>8.3f} {r['cpu_s']:>7.3f} {r['speedup']:>9.0f}× "
            f"{r['us_per_question']:>8.1f} {r['cpu_us_per_question']:>9.1f}"
        )
    memory = _memory(sizes, args.seed) if sizes else None
    if memory:
        _print_memory(memory)

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
        "table": {
            "generator": "streamrag.data.generated.synthetic_table.generate_stabilization_table",
            "n": args.n,
            "seed": args.seed,
        },
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average": [load_before, load_average()],
        },
        "shell": shell,
        "speed": speed,
        "identical": identical,
        "memory": memory,
        "paper_rq3_retrieved_gold": rq3,
    }
    path = OUT / "bench_simulate.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    record("bench_simulate", doc)
    print(f"\nwrote {path} (load average {load_before} → {doc['machine']['load_average'][1]})")


if __name__ == "__main__":
    main()
