"""Helpers shared by the benchmark scripts: where outputs go, how results are saved.

Each run writes its full output to ``benchmarks/out/`` (git-ignored) and a result record
to ``benchmarks/results/NAME.json`` (committed: the current figure of each benchmark,
older runs in git history): the command, the commit, the date, the CPU model and cores,
the numbers and the peers. ``scripts/bench_results.py`` writes ``benchmarks/RESULTS.md``
from the records; no other page states a timing.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parent / "out"
RESULTS_DIR = Path(__file__).resolve().parent / "results"
PEERS: dict[str, list[str]] = {
    "analysis": ["rank_bm25 BM25Okapi per prefix"],
    "ingest": ["bzip2 -dc", "zstd -dc"],
    "parsers": ["html.parser (BeautifulSoup)"],
    "bench_prefix": ["rank_bm25 BM25Okapi(tokenized).get_scores per prefix"],
    "bench_simulate": ["the event engine (--engine)", "the wall-clock duration replayed"],
    "bench_global": ["bm25s (numba backend)", "rank_bm25"],
    "bench_global_analyze": ["the numpy kernel (without the fast extra)"],
    "dense": ["BM25 on the same data"],
    "bench_load_simpy": ["a same-shape SimPy model fed streamrag's inputs (benchmarks/_load_simpy_peer.py)"],
}
"""The peer each benchmark runs beside streamrag, by record name (others: none, or in its numbers)."""
CRAG_DIR = Path(os.environ.get("STREAMRAG_CRAG_DIR", Path(__file__).resolve().parents[2] / "shared" / "data" / "crag"))

# The commands a benchmark runs are timed as a user's install runs them: modules' bytecode
# cached (Python's default, and what ``pip install`` precompiles). An environment that sets
# PYTHONDONTWRITEBYTECODE makes every child compile streamrag from source on every start.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def run_child(cmd: list[str]) -> tuple[float, float, str]:
    """Run ``cmd`` to its end: (CPU s of it and the processes it waited for — user + sys,
    ``getrusage(RUSAGE_CHILDREN)`` deltas —, its wall s, its stdout stripped)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, done.stdout.strip()


def load_average() -> float | None:
    """The 1-minute load average (this machine is shared: every result says what it ran beside)."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine(),
        "load_average_at_save": load_average(),
    }  # fmt: skip


def save(name: str, result: dict[str, Any]) -> Path:
    """Write ``benchmarks/out/NAME.json`` (results plus a machine description) and the
    result record ``benchmarks/results/NAME.json``."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **result}, indent=2) + "\n")
    record(name, result)
    return path


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True, cwd=RESULTS_DIR.parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def record(name: str, numbers: dict[str, Any], peers: list[str] | None = None) -> Path:
    """Write the result record ``benchmarks/results/NAME.json`` (atomically): what ran,
    on which commit and machine, when, the numbers and the peers."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    commit = _git("rev-parse", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    doc = {
        "benchmark": name,
        "command": " ".join(["python", *(Path(a).as_posix() if i == 0 else a for i, a in enumerate(sys.argv))]),
        "commit": commit + ("-dirty" if dirty and commit else ""),
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": load_average(),
        "peers": peers if peers is not None else PEERS.get(name, []),
        "numbers": numbers,
    }
    path = RESULTS_DIR / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(path)
    return path
