"""A whole run's trace: every question's events, their text, one Perfetto file for many.

``trace.jsonl`` holds the events of every question a run replayed; the views of
:mod:`streamrag.simulator.views` draw one. Here the run is read once and grouped by
question, the question text is looked up in the run's input when the run read a CRAG
file that is still there (the simulator's files keep only ids; a table-driven run has
no text), and many questions become one trace-event file with one process per question.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from streamrag.base.errors import InputError
from streamrag.engine.trace import read_event
from streamrag.engine.trace_file import event_lines, perfetto_file
from streamrag.simulator.views.perfetto import perfetto, perfetto_pid

__all__ = ["misfire_ids", "question_texts", "run_events", "run_perfetto", "write_run_perfetto"]

_NAME_CHARS = 120  # a process name longer than this is cut (Perfetto shows one line)


def run_events(run_dir: str | os.PathLike[str]) -> dict[str, list[dict[str, Any]]]:
    """Every question's events in ``RUN_DIR/trace.jsonl`` (as dicts, each question's in
    time order), questions in the order of their first event."""
    from streamrag.base.formats import check_run

    check_run(run_dir)  # the manifest versions the folder; the trace's header, the trace
    path = Path(run_dir) / "trace.jsonl"
    if not path.is_file():
        raise InputError(f"{run_dir}: no trace.jsonl (is it the --out folder of 'streamrag simulate'?)")
    by_qid: dict[str, list[dict[str, Any]]] = {}
    for line_no, line in event_lines(path):
        e = read_event(line, line_no, path).model_dump()
        by_qid.setdefault(e["qid"], []).append(e)
    # A load run's session holds both systems' events, each in time order: merge them.
    return {qid: sorted(events, key=lambda e: e["t_us"]) for qid, events in by_qid.items()}


def misfire_ids(run_dir: str | os.PathLike[str]) -> list[str]:
    """The ids whose ``misfire`` is ``True`` in ``RUN_DIR/results.csv``, in file order."""
    path = Path(run_dir) / "results.csv"
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if "misfire" not in (reader.fieldnames or ()):
                raise InputError(f"{path}: line 1: misfire: missing column (is it a simulate run's results.csv?)")
            return [row["interaction_id"] for row in reader if row.get("misfire") == "True"]
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def question_texts(run_dir: str | os.PathLike[str], ids: Iterable[str] | None = None) -> dict[str, str]:
    """The question text by id, from the CRAG file the run read (``manifest.json``'s
    ``input``, when its mode is ``data`` and the file is still there); ``{}`` otherwise.
    Only ``ids`` are kept when given."""
    from streamrag.base.lines import iter_json_objects

    manifest = Path(run_dir) / "manifest.json"
    try:
        source = json.loads(manifest.read_text(encoding="utf-8")).get("input") or {}
    except (OSError, ValueError, AttributeError):
        return {}
    path = Path(source.get("path") or "")
    if source.get("mode") != "data" or not path.is_file():
        return {}
    wanted = None if ids is None else set(ids)
    texts: dict[str, str] = {}
    for _, obj in iter_json_objects(path):
        qid, query = obj.get("interaction_id"), obj.get("query")
        if isinstance(qid, str) and isinstance(query, str) and (wanted is None or qid in wanted):
            texts[qid] = query
    return texts


def process_name(qid: str, text: str | None) -> str:
    """``id: question text`` (cut to one line), or the id alone."""
    if not text:
        return qid
    name = f"{qid}: {' '.join(text.split())}"
    return name if len(name) <= _NAME_CHARS else name[: _NAME_CHARS - 1] + "…"


def run_perfetto(
    events_by_qid: Mapping[str, list[dict[str, Any]]], ids: Sequence[str], texts: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """One trace-event file for the questions ``ids``: a process per question (its
    :func:`~streamrag.simulator.views.perfetto.perfetto_pid`, the next free id on a clash),
    named by id and text, sorted in the order of ``ids``; word markers carry the word."""
    texts = texts or {}
    missing = [qid for qid in ids if qid not in events_by_qid]
    if missing:
        raise InputError(f"trace.jsonl: no events for {len(missing)} question(s), first {missing[0]!r}")
    out: list[dict[str, Any]] = []
    used: set[int] = set()
    for rank, qid in enumerate(ids):
        pid = perfetto_pid(qid)
        while pid in used:
            pid = pid % (2**31 - 1) + 1
        used.add(pid)
        text = texts.get(qid)
        one = perfetto(events_by_qid[qid], pid=pid, name=process_name(qid, text), words=None if text is None else text.split())
        out += one["traceEvents"]
        out.append({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": rank}})
    return perfetto_file(out)


def write_run_perfetto(trace: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write :func:`run_perfetto`'s JSON atomically (compact: a run has many events)."""
    from streamrag.base.atomic import write_text_atomic

    write_text_atomic(path, json.dumps(trace, separators=(",", ":")) + "\n")
    return Path(path)
