"""Measured durations, per stage, from a CSV, JSON lines or an OpenTelemetry span export.

Formats, told apart by the file name and content:

- ``*.csv`` — a header row with the columns ``stage`` and ``duration_ms`` (other columns
  are ignored; an optional ``timestamp`` column is kept for provenance);
- JSON lines (``*.jsonl``, ``*.jsonl.bz2``, …) — one object per line with the same
  fields: ``{"stage": "L", "duration_ms": 412.5, "timestamp": "…"}``;
- an OpenTelemetry span export in the OTLP JSON shape — ``resourceSpans[] →
  scopeSpans[] → spans[]`` with ``name``, ``startTimeUnixNano``, ``endTimeUnixNano``
  (decimal strings or integers): one document (``*.json``) or one export per line (what
  the collector's file exporter writes). Span names become stages only through an
  explicit mapping (``--span retrieve=L``); a span's duration is ``end − start``, its
  timestamp the start. Spans of other names are counted and reported, never fitted.

Every duration must be a finite number of milliseconds > 0 (log-normal and gamma models
live on positive durations; a 0 ms measurement is a clock too coarse for the stage). A
bad value is a :class:`~streamrag.base.errors.RecordError` naming the file, the line and the
field.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from streamrag.base.digest import file_sha256
from streamrag.base.errors import ConfigError, DataFileError, RecordError
from streamrag.base.lines import iter_json_objects

Format = Literal["csv", "jsonl", "otlp"]


@dataclass(frozen=True, slots=True)
class StageDurations:
    """One stage's measured durations, in file order."""

    stage: str
    durations_ms: np.ndarray
    """float64, ms, all > 0."""
    first_timestamp: str | None = None
    """Earliest timestamp given (numbers compare as numbers), for provenance only."""
    last_timestamp: str | None = None

    @property
    def n(self) -> int:
        return int(self.durations_ms.size)


@dataclass(frozen=True, slots=True)
class Measurements:
    """A measurement file read into per-stage durations."""

    path: Path
    sha256: str
    """SHA-256 of the file's bytes."""
    format: Format
    stages: dict[str, StageDurations]
    """Stage → durations, stages in order of first appearance."""
    spans: dict[str, str] = field(default_factory=dict)
    """OTLP: the span name → stage mapping used."""
    ignored_spans: dict[str, int] = field(default_factory=dict)
    """OTLP: spans of unmapped names, counted by name."""


class _Collector:
    def __init__(self) -> None:
        self.durations: dict[str, list[float]] = {}
        self.timestamps: dict[str, list[str]] = {}

    def add(self, stage: str, duration_ms: float, timestamp: str | None) -> None:
        self.durations.setdefault(stage, []).append(duration_ms)
        stamps = self.timestamps.setdefault(stage, [])
        if timestamp:
            stamps.append(timestamp)

    def stages(self) -> dict[str, StageDurations]:
        out = {}
        for stage, values in self.durations.items():
            stamps = sorted(self.timestamps[stage], key=_timestamp_order)
            first, last = (stamps[0], stamps[-1]) if stamps else (None, None)
            out[stage] = StageDurations(stage, np.asarray(values, dtype=np.float64), first, last)
        return out


def _timestamp_order(text: str) -> tuple[float, str]:
    try:
        return (float(text), text)  # epoch seconds or ms: numerically
    except ValueError:
        return (math.inf, text)  # ISO 8601 text: lexically, after numbers


def read_measurements(path: str | os.PathLike[str], spans: Mapping[str, str] | None = None) -> Measurements:
    """Read ``path`` (see the module docstring); ``spans`` maps span names to stages and
    is required for, and only allowed with, an OpenTelemetry export."""
    path = Path(path)
    if not path.exists():
        raise DataFileError(f"{path}: no such file")
    if path.is_dir():
        raise DataFileError(f"{path}: is a folder, expected a .csv, .jsonl or .json file of durations")
    spans = dict(spans or {})
    sha = file_sha256(path)
    if path.suffix.lower() == ".csv":
        fmt: Format = "csv"
        stages = _read_csv(path)
        ignored: dict[str, int] = {}
    else:
        fmt, stages, ignored = _read_json(path, spans)
    if fmt != "otlp" and spans:
        raise ConfigError(
            f"--span applies to OpenTelemetry span exports; {path} is a {fmt.upper()} of durations (its stage column names the stages)"
        )
    if not stages:
        raise DataFileError(f"{path}: no measurements (expected rows of stage, duration_ms)")
    return Measurements(path, sha, fmt, stages, spans if fmt == "otlp" else {}, ignored)


# ------------------------------------------------------------------------ durations


def _duration(path: Path, line_no: int, value: Any, *, from_text: bool) -> float:
    where = "duration_ms"
    if from_text:
        try:
            ms = float(str(value).strip())
        except ValueError:
            raise RecordError(str(path), line_no, where, f"not a number: {value!r}") from None
    else:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RecordError(str(path), line_no, where, f"expected a number of ms, got {type(value).__name__} {value!r}")
        ms = float(value)
    if not math.isfinite(ms):
        raise RecordError(str(path), line_no, where, f"not a finite number: {value!r}")
    if ms <= 0:
        raise RecordError(str(path), line_no, where, f"must be > 0 ms, got {value!r}")
    return ms


def _stage(path: Path, line_no: int, value: Any) -> str:
    if not isinstance(value, str):
        raise RecordError(str(path), line_no, "stage", f"expected a name, got {type(value).__name__} {value!r}")
    stage = value.strip()
    if not stage:
        raise RecordError(str(path), line_no, "stage", "empty")
    return stage


def _read_csv(path: Path) -> dict[str, StageDurations]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFileError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    columns = [c.strip() for c in reader.fieldnames or []]
    for needed in ("stage", "duration_ms"):
        if needed not in columns:
            found = ", ".join(columns) or "none"
            raise RecordError(str(path), 1, needed, f"missing column (columns: {found}; durations are in milliseconds)")
    reader.fieldnames = columns
    out = _Collector()
    for row in reader:
        line_no = reader.line_num
        if row.get("duration_ms") is None:
            raise RecordError(str(path), line_no, "duration_ms", "missing (the row has fewer fields than the header)")
        stage = _stage(path, line_no, row["stage"])
        ms = _duration(path, line_no, row["duration_ms"], from_text=True)
        out.add(stage, ms, (row.get("timestamp") or "").strip() or None)
    return out.stages()


# ------------------------------------------------------------------------ JSON


def _json_documents(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, object)``: the one document of a ``*.json`` file, else one per line."""
    if path.suffix.lower() == ".json":
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise DataFileError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                raise RecordError(str(path), exc.lineno, "", f"not valid JSON ({exc.msg}, column {exc.colno})") from None
            doc = None  # several documents: one per line
        if doc is not None:
            if not isinstance(doc, dict):
                raise RecordError(str(path), 1, "", f"expected a JSON object, got {type(doc).__name__}")
            yield 1, doc
            return
    yield from iter_json_objects(path)


def _read_json(path: Path, spans: dict[str, str]) -> tuple[Format, dict[str, StageDurations], dict[str, int]]:
    out = _Collector()
    fmt: Format | None = None
    span_counts: dict[str, int] = {}
    for line_no, obj in _json_documents(path):
        kind: Format = "otlp" if "resourceSpans" in obj else "jsonl"
        if fmt is not None and kind != fmt:
            what = "an OpenTelemetry export" if kind == "otlp" else "a duration row"
            raise RecordError(str(path), line_no, "", f"{what} among lines of the other kind")
        fmt = kind
        if kind == "otlp":
            _read_otlp(path, line_no, obj, spans, out, span_counts)
            continue
        for name in ("stage", "duration_ms"):
            if name not in obj:
                raise RecordError(str(path), line_no, name, "missing")
        stamp = obj.get("timestamp")
        out.add(
            _stage(path, line_no, obj["stage"]),
            _duration(path, line_no, obj["duration_ms"], from_text=False),
            None if stamp is None else str(stamp),
        )
    ignored = {name: n for name, n in span_counts.items() if name not in spans}
    if fmt == "otlp":
        _check_mapping(path, spans, span_counts, ignored)
    return fmt or "jsonl", out.stages(), ignored


def _list(path: Path, line_no: int, where: str, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError(str(path), line_no, where, f"expected a list, got {type(value).__name__}")
    return value


def _nanos(value: Any) -> int | None:
    """OTLP JSON writes uint64 nanoseconds as decimal strings; some exporters as numbers."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _read_otlp(
    path: Path, line_no: int, doc: dict[str, Any], spans: dict[str, str], out: _Collector, span_counts: dict[str, int]
) -> None:
    from datetime import UTC, datetime

    def bad(span: Any, where: str, problem: str) -> RecordError:
        return RecordError(str(path), _line_of(path, line_no, span), where, problem)

    for i, resource in enumerate(_list(path, line_no, "resourceSpans", doc.get("resourceSpans"))):
        where_r = f"resourceSpans[{i}]"
        if not isinstance(resource, dict):
            raise RecordError(str(path), line_no, where_r, "expected an object")
        # OTLP before 1.0 named this level instrumentationLibrarySpans
        key = "scopeSpans" if "scopeSpans" in resource else "instrumentationLibrarySpans"
        for j, scope in enumerate(_list(path, line_no, f"{where_r}.{key}", resource.get(key))):
            where_s = f"{where_r}.{key}[{j}]"
            if not isinstance(scope, dict):
                raise RecordError(str(path), line_no, where_s, "expected an object")
            for k, span in enumerate(_list(path, line_no, f"{where_s}.spans", scope.get("spans"))):
                where = f"{where_s}.spans[{k}]"
                if not isinstance(span, dict) or not isinstance(span.get("name"), str):
                    raise bad(span, f"{where}.name", "missing (a span needs a name)")
                name = span["name"]
                span_counts[name] = span_counts.get(name, 0) + 1
                stage = spans.get(name)
                if stage is None:
                    continue
                start, end = _nanos(span.get("startTimeUnixNano")), _nanos(span.get("endTimeUnixNano"))
                if start is None or end is None:
                    field_name = "startTimeUnixNano" if start is None else "endTimeUnixNano"
                    given = span.get(field_name)
                    problem = "missing" if given is None else f"expected Unix nanoseconds (a decimal string), got {given!r}"
                    raise bad(span, f"{where}.{field_name}", problem)
                if end <= start:
                    raise bad(span, f"{where}.endTimeUnixNano", f"span {name!r} does not end after its start ({end - start} ns)")
                stamp = datetime.fromtimestamp(start // 1_000_000_000, tz=UTC).isoformat().replace("+00:00", "Z")
                out.add(stage, (end - start) / 1e6, stamp)


def _line_of(path: Path, line_no: int, span: Any) -> int:
    """The line of a span in a one-document export: where its ``spanId`` appears (the
    JSON parser keeps no positions); ``line_no`` otherwise. Called for errors only."""
    span_id = span.get("spanId") if isinstance(span, dict) else None
    if line_no != 1 or path.suffix.lower() != ".json" or not isinstance(span_id, str) or not span_id:
        return line_no
    text = path.read_text(encoding="utf-8")
    at = text.find(json.dumps(span_id))
    return line_no if at < 0 else text.count("\n", 0, at) + 1


def _check_mapping(path: Path, spans: dict[str, str], span_counts: dict[str, int], ignored: dict[str, int]) -> None:
    names = ", ".join(f"{n} ({c})" for n, c in sorted(ignored.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"
    if not spans:
        raise ConfigError(
            f"{path} is an OpenTelemetry span export: map span names to stages with --span NAME=STAGE (span names: {names})"
        )
    for name, stage in spans.items():
        if name not in span_counts:
            raise ConfigError(f"--span {name}={stage}: no span named {name!r} in {path} (unmapped span names: {names})")
