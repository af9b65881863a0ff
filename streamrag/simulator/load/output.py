"""The outputs of a load run: ``sessions.csv``, ``summary.json``, ``trace.jsonl`` and the
manifest (see :mod:`streamrag.simulator.load.run` for what each holds)."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from streamrag.base.columns import TableKind
from streamrag.pipeline.outcomes import outcome_counts
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.load.run import SYSTEMS, LoadRun
from streamrag.simulator.load.workload import ClosedArrivals, session_id
from streamrag.simulator.scenario import ResolvedScenario

if TYPE_CHECKING:
    import pandas as pd

SESSIONS = TableKind(
    "sessions",
    {
        "session_id": "str",
        "interaction_id": "str",
        "arrival_s": "float",
        "counted": "bool",
        "streaming_ms": "float",
        "baseline_ms": "float",
        "saved_ms": "float",
        "streaming_failed": "bool",
        "baseline_failed": "bool",
        "calls_fired": "int",
        "calls_used": "int",
        "calls_rejected": "int",
        "baseline_calls_rejected": "int",
        "unsafe_calls": "int",
        "baseline_arrival_s": "float",
    },
    patterns=((rf"({'|'.join(SYSTEMS)})_wait_.+_ms", "float"),),
)
"""``sessions.csv``, declared: its columns and their types (Arrow schema
``SESSIONS.schema(columns)``, frames :func:`read_sessions`). A run writes the columns of
:data:`SESSION_COLUMNS_HEAD`, then ``{system}_wait_{resource}_ms`` per system and resource
(the time the session's jobs waited in that resource's queue), then for closed-loop
workloads ``baseline_arrival_s``; an empty field is undefined (a failed session's latencies)."""

SESSION_COLUMNS_HEAD: tuple[str, ...] = tuple(c for c in SESSIONS.columns if c not in ("unsafe_calls", "baseline_arrival_s"))
"""The columns ``sessions.csv`` starts with, in order (``unsafe_calls`` follows them for a
mutating tool, ``tool.effects = "mutating"``: the session's unsafe executions)."""


def read_sessions(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A ``sessions.csv`` as a frame, every column in its declared dtype whatever the
    values (:data:`SESSIONS`)."""
    return SESSIONS.read_csv(path)


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
    every = run.rs.scenario.load.trace_every(run.n) if run.traces else 0  # type: ignore[union-attr]
    out["trace"] = {
        "sessions": -(-run.n // every) if every else 0,
        "every": every,
        "note": "trace.jsonl holds every event of sessions 0, every, 2·every, … (load.trace_sessions)",
    }
    # how the counted sessions' speculative calls ended, as a replay's summary counts them
    out["call_outcomes"] = outcome_counts(s.outcomes[counted].sum(axis=0).tolist())
    if _mutating(run):  # per 1,000 counted sessions (turns), as a replay's summary counts them
        n_counted = int(counted.sum())
        out["unsafe_per_1000_turns"] = float(1000 * s.unsafe[counted].sum() / n_counted) if n_counted else None
    out["parameters"] = parameters
    return out


def _mutating(run: LoadRun) -> bool:
    return run.rs.scenario.tool.effects == "mutating"


def session_columns(run: LoadRun) -> list[str]:
    waits = [f"{system}_wait_{name}_ms" for system in SYSTEMS for name in sorted(run.systems[system].measures.waited)]
    closed = isinstance(run.rs.scenario.load.arrivals, ClosedArrivals)  # type: ignore[union-attr]
    unsafe = ["unsafe_calls"] if _mutating(run) else []
    return [*SESSION_COLUMNS_HEAD, *unsafe, *waits, *(["baseline_arrival_s"] if closed else [])]


def write_sessions_csv(run: LoadRun, path: str | os.PathLike[str]) -> Path:
    """``sessions.csv``, one row per session, streamed to disk (atomically) from the run's
    session table, a chunk of sessions at a time."""
    from streamrag.base.atomic import atomic_path

    out = Path(path)
    with atomic_path(out) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        _session_rows(run, fh)
    return out


def _session_rows(run: LoadRun, fh: Any) -> None:
    """Write ``sessions.csv``'s header and rows to the text file ``fh``."""
    columns = session_columns(run)
    warmup_us = _warmup_us(run)
    table = run.systems["streaming"].measures.table
    waits = {system: sorted(run.systems[system].measures.waited) for system in SYSTEMS}

    def ms(us: int) -> str:
        """An answer time; −1 marks a failed session (empty)."""
        return "" if us < 0 else repr(us / 1000)

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
                "saved_ms": repr((b_us - s_us) / 1000) if s_us >= 0 and b_us >= 0 else "",  # negative: streaming was slower
                "streaming_failed": "True" if s_us < 0 else "False",
                "baseline_failed": "True" if b_us < 0 else "False",
                "calls_fired": int(s["fired"]),
                "calls_used": int(s["used"]),
                "calls_rejected": int(s["rejected"]),
                "baseline_calls_rejected": int(b["rejected"]),
                "unsafe_calls": int(s["unsafe"]),
                "baseline_arrival_s": repr(int(b["arrival_us"]) / 1e6),
            }
            for system, names in waits.items():
                for name in names:
                    k = table.resources.index(name)
                    row[f"{system}_wait_{name}_ms"] = repr(int(rec[system]["wait_us"][k]) / 1000)
            writer.writerow([row.get(c, "") for c in columns])
            i += 1


def write_load_trace(run: LoadRun, path: str | os.PathLike[str]) -> Path | None:
    """Merge the systems' spooled traces into ``trace.jsonl`` (after its header), session by session."""
    from streamrag.base.atomic import atomic_path
    from streamrag.engine.trace_file import header_bytes

    if not run.traces:
        return None
    out = Path(path)
    table = run.systems["streaming"].measures.table
    handles = {system: open(sink.path, "rb") for system, sink in run.traces.items()}  # noqa: SIM115
    try:
        with atomic_path(out) as tmp, open(tmp, "wb") as fh:
            fh.write(header_bytes())
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
    from streamrag.simulator.run_files import LoadSummary

    data = versioned(data)
    LoadSummary.model_validate(data)  # the file's model (a ValidationError: the writer and the model disagree)
    return (json.dumps(data, indent=2, allow_nan=False) + "\n").encode("utf-8")


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


PILOT_SESSIONS = 64
"""How many of a run's first sessions are run ahead, alone, to size its outputs."""

TRACE_MARGIN = 1.1
"""The pilot's trace bytes per session, scaled: its sessions meet empty queues (at 10⁵
sessions of the built-in scenario the pilot measured 94% of what each traced session took)."""


def check_outputs_fit(questions: Sequence[SimQuestion], rs: ResolvedScenario, out_dir: str | os.PathLike[str]) -> None:
    """Refuse (:class:`~streamrag.base.errors.OutputError`, one line naming each output
    and its size) a load run whose files cannot all fit on ``out_dir``'s file system at
    their peak: the session table and draws spooled while it runs, the trace spool, and
    at the end ``trace.jsonl`` (a copy of the spool, both on disk until the outputs land)
    and ``sessions.csv``.

    Bytes per session are measured, not assumed: the first :data:`PILOT_SESSIONS`
    sessions run as a load run of their own (the same draws) and their outputs are
    sized (the trace's with :data:`TRACE_MARGIN`: their queues start empty)."""
    import io
    import tempfile

    from streamrag.base.system.outputs import check_free_space, human_bytes
    from streamrag.simulator.load.checks import n_sessions
    from streamrag.simulator.load.run import run_load

    load = rs.scenario.load
    assert load is not None  # a load scenario (checked by the caller)
    n = n_sessions(rs)
    k = min(n, PILOT_SESSIONS)
    pilot = load.model_copy(update={"trace_sessions": "all", "reference_sessions": 0})
    pilot_rs = rs.model_copy(update={"scenario": rs.scenario.model_copy(update={"load": pilot})})
    with (
        tempfile.TemporaryDirectory(prefix="streamrag-pilot-") as tmp,
        run_load(questions, pilot_rs, trace_dir=tmp, n_sessions=k) as run,
    ):
        trace_b = TRACE_MARGIN * sum(sink.size for sink in run.traces.values()) / k
        rows = io.StringIO()
        _session_rows(run, rows)
        csv_b = len(rows.getvalue().encode("utf-8")) / k
        spooled_b = run.systems["streaming"].measures.table.dtype.itemsize + 8 * (
            2 if isinstance(load.arrivals, ClosedArrivals) else 1
        )  # the record, the question drawn (and a think time)
    every = load.trace_every(n)
    traced = -(-n // every) if every else 0
    parts = {
        "trace.jsonl": traced * trace_b,
        "its spool": traced * trace_b,
        "sessions.csv": n * csv_b,
        "the session table": n * spooled_b,
    }
    what = ", ".join(f"{name} ≈ {human_bytes(size)}" for name, size in parts.items() if size)
    check_free_space(
        out_dir,
        sum(parts.values()) + 65_536,  # + summary.json and manifest.json
        f"the load run ({n:,} sessions, "
        + (f"{traced:,} traced at ≈ {human_bytes(trace_b)} each" if traced else "none traced")
        + f": {what})",
        hint="trace fewer sessions (load.trace_sessions), free space, or write elsewhere",
    )
