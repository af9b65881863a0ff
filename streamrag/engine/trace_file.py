"""The ``trace.jsonl`` file: a header line naming its format and version, then one event a line.

::

    {"format_version":3,"format":"streamrag.trace"}
    {"qid":"q1","t_us":0,"kind":"word","word":1}
    …

The header (:class:`TraceHeader`) lets a trace say what it is by itself, copied out of its
run folder, without the manifest; the event lines stay each event's own JSON
(:func:`~streamrag.engine.trace.dump_events`), so a run's trace is the header and the bytes
its models serialize. Files written before format version 3 have no header: their first
line is an event and they read as the version their run's manifest records. A header of
a version this streamrag does not read is the one-line error of
:func:`~streamrag.base.formats.check_version`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from streamrag.base.errors import InputError
from streamrag.base.formats import FIELD, FORMAT_VERSION, check_version

__all__ = ["PERFETTO_FORMAT", "TRACE_FORMAT", "TraceHeader", "event_lines", "header_bytes", "header_version", "perfetto_file"]

TRACE_FORMAT = "streamrag.trace"
"""The ``format`` of a trace file's header."""
PERFETTO_FORMAT = "streamrag.perfetto"
"""The ``metadata.format`` of a Perfetto file streamrag writes."""


class TraceHeader(BaseModel):
    """The first line of ``trace.jsonl`` (format version 3 on)."""

    model_config = ConfigDict(frozen=True, extra="forbid", title="streamrag trace.jsonl header (its first line)")

    format_version: int = Field(description="The file's format version (streamrag.base.formats)", ge=1, le=FORMAT_VERSION)
    format: Literal["streamrag.trace"]


def header_bytes() -> bytes:
    """The header line this streamrag writes (with its line break)."""
    return TraceHeader(format_version=FORMAT_VERSION, format=TRACE_FORMAT).model_dump_json().encode("utf-8") + b"\n"


def header_version(line: bytes, path: str | os.PathLike[str]) -> int | None:
    """The format version the first line of trace file ``path`` records, if it is a header
    (checked: an InputError naming the file for a version this streamrag does not read or
    a header of another format); ``None`` when the line is an event (no header)."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None  # not a header: the event reader says what is wrong with the line
    if not isinstance(data, dict) or FIELD not in data or "qid" in data:
        return None
    version = check_version(data[FIELD], path)
    if data.get("format") != TRACE_FORMAT:
        raise InputError(f"{path}: line 1: format {data.get('format')!r} is not a streamrag trace ({TRACE_FORMAT!r})")
    return version


def perfetto_file(trace_events: list[dict[str, Any]]) -> dict[str, Any]:
    """A Perfetto (Trace Event Format, JSON object form) file of ``trace_events``, its
    format and version in ``metadata`` (the object form's free key-value section)."""
    return {
        "traceEvents": trace_events,
        "displayTimeUnit": "ms",
        "metadata": {"format": PERFETTO_FORMAT, FIELD: FORMAT_VERSION},
    }


def event_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes]]:
    """The event lines of trace file ``path`` with their 1-based line numbers (blank lines
    skipped), its header, when it has one, checked (:func:`header_version`) and left out."""
    with open(path, "rb") as fh:
        for line_no, line in enumerate(fh, 1):
            if line_no == 1 and header_version(line, path) is not None:
                continue
            if line.strip():
                yield line_no, line
