"""The outputs of a load run: ``sessions.csv``, ``summary.json``, ``trace.jsonl`` and the
manifest (see :mod:`streamrag.simulator.load` for what each holds)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.simulator.load import SYSTEMS, LoadRun
from streamrag.simulator.workload import ClosedArrivals, session_id

SESSION_COLUMNS_HEAD: tuple[str, ...] = (
    "session_id",
    "interaction_id",
    "arrival_s",
    "counted",
    "streaming_ms",
    "baseline_ms",
    "saved_ms",
    "streaming_failed",
    "baseline_failed",
    "calls_fired",
    "calls_used",
    "calls_rejected",
    "baseline_calls_rejected",
)
"""``sessions.csv`` starts with these columns, then ``{system}_wait_{resource}_ms`` per
system and resource (the time the session's jobs waited in that resource's queue), and
for closed-loop workloads ``baseline_arrival_s``."""


def _stats(values: np.ndarray) -> dict[str, float | None]:
    if values.size == 0:
        return dict.fromkeys(("mean", "median", "p90", "p99", "min", "max"))
    q = np.quantile(values, [0.5, 0.9, 0.99])
    return {
        "mean": float(values.mean()),
        "median": float(q[0]),
        "p90": float(q[1]),
        "p99": float(q[2]),
        "min": float(values.min()),
        "max": float(values.max()),
    }


def _warmup_us(run: LoadRun) -> int:
    load = run.rs.scenario.load
    return round((load.warmup_s if load else 0.0) * 1e6)


def _counted(run: LoadRun) -> np.ndarray:
    return run.systems["streaming"].measures.arrival_us >= _warmup_us(run)


def load_summary(run: LoadRun, parameters: dict[str, Any]) -> dict[str, Any]:
    """``summary.json`` of a load run (see the module docstring; names follow the rule of
    :mod:`streamrag.simulator.results`: ``COLUMN.STAT``), led by the reflector model and
    the pipeline rules that ran."""
    counted = _counted(run)
    s, b = run.systems["streaming"].measures, run.systems["baseline"].measures
    answer_us = {"streaming": s.answer_us, "baseline": b.answer_us}  # each column read once
    s_us, b_us = answer_us["streaming"], answer_us["baseline"]
    saved = (b_us - s_us)[counted & (s_us >= 0) & (b_us >= 0)] / 1000
    out: dict[str, Any] = {
        "reflector_model": run.reflector_model,
        "rules": run.rs.rules(),
        "mode": "load",
        "sessions": {"n": run.n, "counted": int(counted.sum())},
    }
    for system, m in (("streaming", s), ("baseline", b)):
        ok = answer_us[system] >= 0
        sel = counted & ok
        res = run.systems[system].resources
        busy = sum(m.busy_us.values())
        out[system] = {
            "answer_ms": _stats(answer_us[system][sel] / 1000),
            "failed": {"n": int((counted & ~ok).sum()), "rate": float((counted & ~ok).mean()) if counted.any() else None},
            "calls_fired": {"mean": float(m.fired[counted].mean()) if counted.any() else None},
            "calls_rejected": {"mean": float(m.rejected[counted].mean()) if counted.any() else None},
            "wait_ms": {name: _stats(col[counted] / 1000) for name, col in sorted(m.waits.items())},
            "resources": res,
            "wasted_share": {
                name: (m.wasted_us.get(name, 0) + 1e6 * (rep or {}).get("detached_busy_s", 0.0))
                / max(1.0, m.busy_us.get(name, 0) + 1e6 * (rep or {}).get("detached_busy_s", 0.0))
                for name, rep in sorted(res.items())
                if rep is not None
            },
            "busy_s": busy / 1e6,
        }
    out["saved_ms"] = _stats(saved)
    out["answer_ms_difference"] = {
        stat: (
            None
            if out["streaming"]["answer_ms"][stat] is None or out["baseline"]["answer_ms"][stat] is None
            else out["baseline"]["answer_ms"][stat] - out["streaming"]["answer_ms"][stat]
        )
        for stat in ("mean", "median", "p90", "p99")
    }
    ref_n = run.reference_saved_us.size
    loaded = (b_us[:ref_n] - s_us[:ref_n]) / 1000
    ok_ref = (s_us[:ref_n] >= 0) & (b_us[:ref_n] >= 0)
    out["reference"] = {
        "n": int(ok_ref.sum()),
        "note": "the first sessions replayed alone on unlimited capacity with the same draws",
        "unlimited_saved_ms": _stats(run.reference_saved_us[ok_ref] / 1000),
        "loaded_saved_ms": _stats(loaded[ok_ref]),
    }
    out["parameters"] = parameters
    return out


def session_columns(run: LoadRun) -> list[str]:
    waits = [f"{system}_wait_{name}_ms" for system in SYSTEMS for name in sorted(run.systems[system].measures.waited)]
    closed = isinstance(run.rs.scenario.load.arrivals, ClosedArrivals)  # type: ignore[union-attr]
    return [*SESSION_COLUMNS_HEAD, *waits, *(["baseline_arrival_s"] if closed else [])]


def write_sessions_csv(run: LoadRun, path: str | os.PathLike[str]) -> Path:
    """``sessions.csv``, one row per session, streamed to disk (atomically) from the run's
    session table, a chunk of sessions at a time."""
    from streamrag.base.atomic import atomic_path

    columns = session_columns(run)
    warmup_us = _warmup_us(run)
    table = run.systems["streaming"].measures.table
    waits = {system: sorted(run.systems[system].measures.waited) for system in SYSTEMS}
    out = Path(path)

    def ms(us: int) -> str:
        return "" if us < 0 else repr(us / 1000)

    with atomic_path(out) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        i = 0
        for chunk in table.chunks():
            for rec in chunk:
                s, b = rec["streaming"], rec["baseline"]
                s_us, b_us = int(s["answer_us"]), int(b["answer_us"])
                row: dict[str, Any] = {
                    "session_id": session_id(i),
                    "interaction_id": run.questions[int(rec["question"])].interaction_id,
                    "arrival_s": repr(int(s["arrival_us"]) / 1e6),
                    "counted": "True" if s["arrival_us"] >= warmup_us else "False",
                    "streaming_ms": ms(s_us),
                    "baseline_ms": ms(b_us),
                    "saved_ms": ms(b_us - s_us) if s_us >= 0 and b_us >= 0 else "",
                    "streaming_failed": "True" if s_us < 0 else "False",
                    "baseline_failed": "True" if b_us < 0 else "False",
                    "calls_fired": int(s["fired"]),
                    "calls_used": int(s["used"]),
                    "calls_rejected": int(s["rejected"]),
                    "baseline_calls_rejected": int(b["rejected"]),
                    "baseline_arrival_s": repr(int(b["arrival_us"]) / 1e6),
                }
                for system, names in waits.items():
                    for name in names:
                        k = table.resources.index(name)
                        row[f"{system}_wait_{name}_ms"] = repr(int(rec[system]["wait_us"][k]) / 1000)
                writer.writerow([row.get(c, "") for c in columns])
                i += 1
    return out


def write_load_trace(run: LoadRun, path: str | os.PathLike[str]) -> Path | None:
    """Merge the systems' spooled traces into ``trace.jsonl``, session by session."""
    from streamrag.base.atomic import atomic_path

    if not run.traces:
        return None
    out = Path(path)
    table = run.systems["streaming"].measures.table
    handles = {system: open(sink.path, "rb") for system, sink in run.traces.items()}  # noqa: SIM115
    try:
        with atomic_path(out) as tmp, open(tmp, "wb") as fh:
            for chunk in table.chunks():
                for rec in chunk:
                    for system in SYSTEMS:
                        start, size = rec[system]["trace_at"], rec[system]["trace_size"]
                        if size > 0:
                            src = handles[system]
                            src.seek(int(start))
                            fh.write(src.read(int(size)))
    finally:
        for h in handles.values():
            h.close()
    return out


def summary_bytes(data: dict[str, Any]) -> bytes:
    """``summary.json``'s bytes, its ``format_version`` first (:mod:`streamrag.base.formats`)."""
    from streamrag.base.formats import versioned

    return (json.dumps(versioned(data), indent=2, allow_nan=False) + "\n").encode("utf-8")


def write_load_run(out_dir: str | os.PathLike[str], run: LoadRun, *, parameters: dict[str, Any], manifest: bytes) -> Path:
    """Write ``trace.jsonl`` (when traced), ``sessions.csv``, ``summary.json`` and
    ``manifest.json`` into ``out_dir``, together (an interrupt or a refused write leaves
    the folder as it was)."""
    from streamrag.base.atomic import together, write_bytes_atomic

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with together():
        write_load_trace(run, out / "trace.jsonl")
        write_sessions_csv(run, out / "sessions.csv")
        write_bytes_atomic(out / "summary.json", summary_bytes(load_summary(run, parameters)))
        write_bytes_atomic(out / "manifest.json", manifest)
    return out
