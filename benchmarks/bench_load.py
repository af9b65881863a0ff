"""Benchmark: a load run of 10⁵ sessions, from a shell, on one core.

What a user runs first: ``streamrag simulate --table gen.csv --scenario load --set
load.arrivals.n_sessions=N --out DIR`` (the paper_rq3 pipeline, Poisson sessions sharing
a 4-server tool backend at the offered load that puts the *streaming* system's tool
servers at ρ ≈ 0.8 (0.79 measured); both systems, the unlimited-capacity reference of the first 2,000
sessions, sessions.csv, summary.json, trace.jsonl). Measured per N: wall time of the
command, its peak RSS (memory must stay flat as N grows: traces stream to disk, a
session keeps ~50 bytes of numbers), trace events per second and µs per event, and the
ratio of replayed time (the run's virtual span) to wall time — the peer of a simulator is
the clock it replaces (design §8). Events are counted in the trace, so the command runs
twice per N: with every session traced (``load.trace_sessions = N``: the events and µs per
event) and as a user runs it, with the default bounded trace (``load.trace_sessions``
sessions, 10,000), whose ``sessions.csv`` must be the traced run's byte for byte (the same
events): its wall and CPU time per session and per event.

The command runs pinned to one core (``taskset -c 0``) so the figure is a one-core one.

Usage: ``python benchmarks/bench_load.py [--sessions 25000 50000 100000] [--offered-load 0.32]``
Writes ``benchmarks/out/bench_load.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_average, save

STREAMRAG = Path(sys.executable).with_name("streamrag")


def _run(cmd: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s of the child, peak RSS MiB of the child) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[25_000, 50_000, 100_000])
    parser.add_argument("--offered-load", type=float, default=0.32)
    args = parser.parse_args()
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        table = Path(tmp) / "gen.csv"
        subprocess.run([str(STREAMRAG), "generate", str(table), "--questions", "1371", "--table"], check=True,
                       stderr=subprocess.DEVNULL)  # fmt: skip
        for n in args.sessions:
            cmd = [*pin, str(STREAMRAG), "simulate", "--table", str(table), "--scenario", "load",
                   "--set", f"load.arrivals.offered_load={args.offered_load}",
                   "--set", f"load.arrivals.n_sessions={n}"]  # fmt: skip
            load_before = load_average()
            default = Path(tmp) / f"default-{n}"
            default_wall, default_cpu, default_rss = _run([*cmd, "--out", str(default)])
            out = Path(tmp) / f"run-{n}"
            wall, cpu, rss = _run([*cmd, "--set", f"load.trace_sessions={n}", "--out", str(out)])
            summary = json.loads((out / "summary.json").read_text())
            if summary["trace"]["sessions"] != n:
                raise SystemExit(f"bench_load: the traced run kept {summary['trace']['sessions']} of {n} sessions' traces")
            if (default / "sessions.csv").read_bytes() != (out / "sessions.csv").read_bytes():
                raise SystemExit("bench_load: the two runs' sessions.csv differ: not the same events")
            shutil.rmtree(default)
            with (out / "trace.jsonl").open("rb") as fh:
                n_events = sum(1 for _ in fh) - 1  # the first line is the header
            span_s = max(s["resources"]["tool"]["span_s"] for s in (summary["streaming"], summary["baseline"]))
            row = {
                "sessions": n,
                "wall_s": wall,
                "cpu_s": cpu,
                "peak_rss_mib": rss,
                "trace_events": n_events,
                "events_per_s": n_events / wall,
                "us_per_event": wall / n_events * 1e6,
                "cpu_us_per_event": cpu / n_events * 1e6,
                "load_average_before": load_before,
                "default_trace": {
                    "wall_s": default_wall,
                    "cpu_s": default_cpu,
                    "peak_rss_mib": default_rss,
                    "cpu_us_per_session": default_cpu / n * 1e6,
                },
                "replayed_s": span_s,
                "replayed_over_wall": span_s / wall,
                "streaming_tool_utilization": summary["streaming"]["resources"]["tool"]["utilization"],
                "baseline_tool_utilization": summary["baseline"]["resources"]["tool"]["utilization"],
                "streaming_p50_ms": summary["streaming"]["answer_ms"]["median"],
                "baseline_p50_ms": summary["baseline"]["answer_ms"]["median"],
            }
            rows.append(row)
            print(
                f"{n:>7} sessions, every one traced: {wall:6.1f} s wall ({cpu:.1f} s CPU, one core), peak RSS {rss:6.0f} MiB, "
                f"{n_events:>9} events, {row['events_per_s']:,.0f} events/s = {row['us_per_event']:.2f} µs/event wall, "
                f"{row['cpu_us_per_event']:.2f} µs/event CPU (load average before {load_before}), "
                f"replayed {span_s:,.0f} s = {row['replayed_over_wall']:,.0f}x wall; tool utilization streaming "
                f"{row['streaming_tool_utilization']:.2f}, baseline {row['baseline_tool_utilization']:.2f}"
            )
            print(
                f"{'':>7}  default trace (10,000 sessions kept): {default_wall:6.1f} s wall ({default_cpu:.1f} s CPU), "
                f"peak RSS {default_rss:6.0f} MiB, {default_cpu / n * 1e6:.0f} µs of CPU per session, "
                f"{default_cpu / n_events * 1e6:.2f} µs of CPU per event (the same events: sessions.csv identical), "
                f"{span_s / default_wall:,.0f}x wall"
            )
    path = save("bench_load", {"benchmark": "load", "offered_load": args.offered_load, "pinned": bool(pin), "runs": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
