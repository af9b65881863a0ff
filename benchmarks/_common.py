"""Helpers shared by the benchmark scripts: where outputs go, how results are saved."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parent / "out"
CRAG_DIR = Path(os.environ.get("STREAMRAG_CRAG_DIR", Path(__file__).resolve().parents[2] / "shared" / "data" / "crag"))


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
    """Write ``benchmarks/out/NAME.json`` (results plus a machine description)."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **result}, indent=2) + "\n")
    return path
