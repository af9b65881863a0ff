"""Benchmark: a load run against a same-shape SimPy model, CPU per session, from a shell.

What a user runs: ``streamrag simulate --table gen.csv --scenario load --set
load.arrivals.n_sessions=N --out DIR`` (the paper_rq3 pipeline under load: Poisson sessions,
both systems on their own 4 tool servers, the unlimited-capacity reference of the first
2,000 sessions, sessions.csv, summary.json and the default trace). Its peer is
``benchmarks/_load_simpy_peer.py``: the same sessions modelled in SimPy as SimPy is meant
to be used (an ``Environment``, a ``Resource`` of 4 FIFO servers per system, a process per
session and per call, interrupts to withdraw calls), fed exactly streamrag's inputs (the
arrivals, the questions asked, each session's plan, each prefix's verdict), which it
prepares with streamrag's functions before it simulates: its setup and its simulation are
timed apart. Beside them the floor every command pays, ``python -c "import numpy, pandas,
pyarrow"``, and the load run without its trace (``load.trace_sessions = 0``), so the
trace's share shows. The arms run interleaved (floor, streamrag, streamrag untraced, peer;
again), each a fresh process; the best of ``--repeat`` runs is kept (CPU = user + sys of
the child).

Checked, not assumed: the peer's per-session answer latencies (both systems, µs) and calls
fired against streamrag's ``sessions.csv`` session by session, and p50 / p90 / mean answer
latency and tool utilization per system against its ``summary.json``.

Usage: ``python benchmarks/bench_load_simpy.py [--sessions 1000 10000] [--repeat 3]``
Writes ``benchmarks/out/bench_load_simpy.json`` and the record ``benchmarks/results/bench_load_simpy.json``.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_average, run_child, save

STREAMRAG = Path(sys.executable).with_name("streamrag")
PEER = Path(__file__).resolve().parent / "_load_simpy_peer.py"
ARMS = ("floor", "streamrag", "streamrag_untraced", "simpy")


def _sessions_csv(path: Path) -> dict[str, np.ndarray]:
    """streamrag's per-session answers (µs; −1: failed) and calls fired."""
    cols: dict[str, list[int]] = {"arrival_us": [], "streaming_us": [], "baseline_us": [], "fired": []}
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            cols["arrival_us"].append(round(float(row["arrival_s"]) * 1e6))
            for system in ("streaming", "baseline"):
                ms = row[f"{system}_ms"]
                cols[f"{system}_us"].append(round(float(ms) * 1000) if ms else -1)
            cols["fired"].append(int(row["calls_fired"]))
    return {name: np.array(values, dtype=np.int64) for name, values in cols.items()}


def _agreement(run_dir: Path, peer_npz: Path, peer: dict[str, Any]) -> dict[str, Any]:
    """The peer against streamrag: sessions identical to the µs, and the summary statistics."""
    ours = _sessions_csv(run_dir / "sessions.csv")
    theirs = np.load(peer_npz)
    same = {name: ours[name] == theirs[name] for name in ours}
    identical = same["streaming_us"] & same["baseline_us"] & same["fired"]
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    stats: dict[str, Any] = {}
    for system in ("streaming", "baseline"):
        s = summary[system]
        stats[system] = {
            "p50_ms": {"streamrag": s["answer_ms"]["median"], "simpy": peer[system]["answer_ms"]["median"]},
            "p90_ms": {"streamrag": s["answer_ms"]["p90"], "simpy": peer[system]["answer_ms"]["p90"]},
            "mean_ms": {"streamrag": s["answer_ms"]["mean"], "simpy": peer[system]["answer_ms"]["mean"]},
            "tool_utilization": {"streamrag": s["resources"]["tool"]["utilization"], "simpy": peer[system]["tool_utilization"]},
            "calls_fired_mean": {"streamrag": s["calls_fired"]["mean"], "simpy": peer[system]["calls_fired"]["mean"]},
        }
    return {
        "sessions": int(identical.size),
        "identical_sessions": int(identical.sum()),
        "same_arrival": int(same["arrival_us"].sum()),
        "same_streaming_answer_us": int(same["streaming_us"].sum()),
        "same_baseline_answer_us": int(same["baseline_us"].sum()),
        "same_calls_fired": int(same["fired"].sum()),
        "first_differing": [int(i) for i in np.flatnonzero(~identical)[:10]],
        "counted": {"streamrag": summary["sessions"]["counted"], "simpy": peer["counted"]},
        "summary": stats,
    }


def _measure(table: Path, n: int, repeat: int, tmp: Path) -> dict[str, Any]:
    out = tmp / f"run-{n}"
    untraced = tmp / f"untraced-{n}"
    peer_npz = tmp / f"peer-{n}.npz"
    load = [str(STREAMRAG), "simulate", "--table", str(table), "--scenario", "load", "--set", f"load.arrivals.n_sessions={n}"]
    cmds = {
        "floor": [sys.executable, "-c", "import numpy, pandas, pyarrow"],
        "streamrag": [*load, "--out", str(out)],
        "streamrag_untraced": [*load, "--set", "load.trace_sessions=0", "--out", str(untraced)],
        "simpy": [sys.executable, str(PEER), str(table), "--sessions", str(n), "--out", str(peer_npz)],
    }
    for cmd in cmds.values():  # once untimed: caches warm, bytecode compiled
        subprocess.run(cmd, check=True, capture_output=True)
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(untraced, ignore_errors=True)
    measured: dict[str, list[tuple[float, float, str]]] = {arm: [] for arm in ARMS}
    loads = []
    for r in range(repeat):  # the arms interleaved
        for arm in ARMS:
            if r and arm.startswith("streamrag"):
                shutil.rmtree(out if arm == "streamrag" else untraced)
            loads.append(load_average())
            measured[arm].append(run_child(cmds[arm]))
    if (out / "sessions.csv").read_bytes() != (untraced / "sessions.csv").read_bytes():
        raise SystemExit("bench_load_simpy: the untraced run's sessions.csv differs: not the same events")
    peers = [json.loads(stdout) for _, _, stdout in measured["simpy"]]
    best = {arm: min(cpu for cpu, _, _ in runs) for arm, runs in measured.items()}
    wall = {arm: min(w for _, w, _ in runs) for arm, runs in measured.items()}
    sim_cpu = min(p["sim_cpu_s"] for p in peers)
    setup_cpu = min(p["setup_cpu_s"] for p in peers)

    def per_session(cpu_s: float) -> float:
        return cpu_s / n * 1e6

    row: dict[str, Any] = {
        "sessions": n,
        "load_average": {"min": min(x for x in loads if x is not None), "max": max(x for x in loads if x is not None)},
        "floor": {"cpu_s": best["floor"], "wall_s": wall["floor"]},
        "streamrag": {
            "cpu_s": best["streamrag"],
            "wall_s": wall["streamrag"],
            "cpu_us_per_session": per_session(best["streamrag"]),
            "cpu_us_per_session_above_floor": per_session(best["streamrag"] - best["floor"]),
        },
        "streamrag_untraced": {
            "cpu_s": best["streamrag_untraced"],
            "wall_s": wall["streamrag_untraced"],
            "cpu_us_per_session": per_session(best["streamrag_untraced"]),
            "trace_share_of_cpu": 1 - best["streamrag_untraced"] / best["streamrag"],
        },
        "simpy": {
            "cpu_s": best["simpy"],
            "wall_s": wall["simpy"],
            "cpu_us_per_session": per_session(best["simpy"]),
            "setup_cpu_s": setup_cpu,
            "sim_cpu_s": sim_cpu,
            "sim_cpu_us_per_session": per_session(sim_cpu),
            "simpy_version": peers[-1]["simpy"],
        },
        "ratio": {
            "streamrag_over_simpy_sim": best["streamrag"] / sim_cpu,
            "streamrag_over_simpy_process": best["streamrag"] / best["simpy"],
            "streamrag_untraced_over_simpy_sim": best["streamrag_untraced"] / sim_cpu,
        },
        "agreement": _agreement(out, peer_npz, peers[-1]),
    }
    return row


def _marginal(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """CPU per extra session between the smallest and the largest N (fixed costs cancel:
    start, imports, the table, the inputs' setup)."""
    if len(rows) < 2:
        return None
    lo, hi = rows[0], rows[-1]
    dn = hi["sessions"] - lo["sessions"]

    def slope(arm: str, key: str = "cpu_s") -> float:
        return (hi[arm][key] - lo[arm][key]) / dn * 1e6

    out = {
        "between": [lo["sessions"], hi["sessions"]],
        "streamrag_cpu_us_per_session": slope("streamrag"),
        "streamrag_untraced_cpu_us_per_session": slope("streamrag_untraced"),
        "simpy_process_cpu_us_per_session": slope("simpy"),
        "simpy_sim_cpu_us_per_session": slope("simpy", "sim_cpu_s"),
    }
    out["streamrag_over_simpy_sim"] = out["streamrag_cpu_us_per_session"] / out["simpy_sim_cpu_us_per_session"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[1000, 10_000])
    ap.add_argument("--repeat", type=int, default=3, help="runs per arm (the best is kept)")
    ap.add_argument("--questions", type=int, default=1371)
    args = ap.parse_args()
    if importlib.util.find_spec("simpy") is None:
        raise SystemExit("bench_load_simpy: the peer needs simpy: pip install -e '.[bench]' (make setup installs it)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-load-simpy-") as tmp:
        table = Path(tmp) / "gen.csv"
        subprocess.run(
            [str(STREAMRAG), "generate", str(table), "--table", "--questions", str(args.questions), "--seed", "0"],
            check=True,
            capture_output=True,
        )
        for n in sorted(args.sessions):
            row = _measure(table, n, args.repeat, Path(tmp))
            rows.append(row)
            s, u, p, a = row["streamrag"], row["streamrag_untraced"], row["simpy"], row["agreement"]
            print(
                f"{n:>7} sessions: streamrag {s['cpu_us_per_session']:.0f} µs CPU/session ({s['cpu_s']:.2f} s, wall {s['wall_s']:.2f} s; "
                f"untraced {u['cpu_us_per_session']:.0f}, the trace {u['trace_share_of_cpu']:.0%}), "
                f"SimPy {p['sim_cpu_us_per_session']:.0f} µs/session simulating ({p['sim_cpu_s']:.2f} s) + setup {p['setup_cpu_s']:.2f} s "
                f"= {p['cpu_us_per_session']:.0f} µs/session as a process; floor {row['floor']['cpu_s']:.2f} s; "
                f"streamrag / SimPy simulation {row['ratio']['streamrag_over_simpy_sim']:.2f}x; "
                f"sessions identical {a['identical_sessions']}/{a['sessions']} (load average {row['load_average']})"
            )
    marginal = _marginal(rows)
    if marginal is not None:
        print(
            f"per extra session ({marginal['between'][0]}→{marginal['between'][1]}): streamrag "
            f"{marginal['streamrag_cpu_us_per_session']:.0f} µs (untraced {marginal['streamrag_untraced_cpu_us_per_session']:.0f}), "
            f"SimPy simulation {marginal['simpy_sim_cpu_us_per_session']:.0f} µs: {marginal['streamrag_over_simpy_sim']:.2f}x"
        )
    path = save(
        "bench_load_simpy",
        {"benchmark": "load_simpy", "questions": args.questions, "repeat": args.repeat, "runs": rows, "marginal": marginal},
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
