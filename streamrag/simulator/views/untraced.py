"""Why a run's ``trace.jsonl`` has no events for an id that names a question or session
of the run: a question skipped by the selection (``results.csv``'s ``skip_reason``), or a
load run's session its bounded trace did not keep (``summary.json``'s ``trace``)."""

from __future__ import annotations

import csv
import json
from pathlib import Path


def skip_reason(results: Path, qid: str) -> str | None:
    """Why ``qid`` has a row in ``results.csv`` but no events, if it has one."""
    try:
        with open(results, newline="", encoding="utf-8") as fh:
            return next((row.get("skip_reason") for row in csv.DictReader(fh) if row.get("interaction_id") == qid), None)
    except OSError:
        return None


def untraced_reason(run_dir: Path, qid: str) -> str | None:
    """Why a load run's session ``qid`` has no events: its trace keeps every k-th session
    (``summary.json``'s ``trace``), and which ones, if so."""
    from streamrag.simulator.load.workload import session_id

    try:
        trace = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))["trace"]
        every, n = int(trace["every"]), int(trace["sessions"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not (qid.startswith("s") and qid[1:].isdecimal()):
        return None
    if every == 0:
        return "this load run traced no session (load.trace_sessions = 0)"
    if every == 1:
        return None
    shown = ", ".join(session_id(i * every) for i in range(min(n, 3)))
    return (
        f"this load run traced one session in {every} ({n:,} of them: {shown}, …); "
        "rerun it with --set load.trace_sessions=all to trace every one"
    )
