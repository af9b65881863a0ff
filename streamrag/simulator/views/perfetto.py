"""One question's trace as Chrome/Perfetto trace-event JSON (ui.perfetto.dev): a process
per question, a thread per lane, ``X`` spans and ``i`` instants."""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from streamrag.engine.trace_file import perfetto_file
from streamrag.simulator.views.traceview import lane_order, spans_and_instants

_PERFETTO_NAMES = {"G": "query generation", "L": "tool call", "F": "response", "W": "queued", "R": "ranking"}


def perfetto_pid(qid: str) -> int:
    """A question's Perfetto process id: the same in every file (CRC-32 of its id, 1 to
    2^31 - 1), so files written apart merge into one trace without clashing processes."""
    return zlib.crc32(qid.encode("utf-8")) % (2**31 - 1) + 1


def perfetto(
    events: list[dict[str, Any]], *, pid: int | None = None, name: str | None = None, words: Sequence[str] | None = None
) -> dict[str, Any]:
    """Chrome/Perfetto trace-event JSON: ``X`` spans and ``i`` instants, ``ts`` in µs; one
    process (``pid``, default :func:`perfetto_pid`; named ``name``, default the id), one
    thread per lane; ``words`` as for :func:`~streamrag.simulator.views.traceview.spans_and_instants`; the format version in
    ``metadata`` (:func:`~streamrag.engine.trace_file.perfetto_file`)."""
    spans, instants = spans_and_instants(events, words=words)
    lanes = lane_order(spans, instants)
    tid = {lane: i + 1 for i, lane in enumerate(lanes)}
    qid = events[0]["qid"]
    pid = perfetto_pid(qid) if pid is None else pid
    out: list[dict[str, Any]] = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name or qid}}]
    out += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid[lane], "args": {"name": lane}} for lane in lanes]
    out += [
        {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid[lane], "args": {"sort_index": tid[lane]}}
        for lane in lanes
    ]
    for s in spans:
        out.append(
            {
                "name": _PERFETTO_NAMES[s.name],
                "cat": "queue" if s.name == "W" else "llm" if s.name in ("G", "F") else "tool",
                "ph": "X",
                "ts": s.start_us,
                "dur": s.end_us - s.start_us,
                "pid": pid,
                "tid": tid[s.lane],
                "args": {"cancelled": s.cancelled},
            }
        )
    for i in instants:
        out.append(
            {
                "name": i.name,
                "cat": "event",
                "ph": "i",
                "s": "t",
                "ts": i.t_us,
                "pid": pid,
                "tid": tid[i.lane],
                "args": {"detail": i.detail},
            }
        )
    return perfetto_file(out)


def write_perfetto(
    events: list[dict[str, Any]], path: str | os.PathLike[str], *, name: str | None = None, words: Sequence[str] | None = None
) -> Path:
    from streamrag.base.atomic import write_text_atomic

    write_text_atomic(path, json.dumps(perfetto(events, name=name, words=words), indent=1) + "\n")
    return Path(path)
