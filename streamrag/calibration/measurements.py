"""Measured durations, per stage, from a CSV, JSON lines or an OpenTelemetry span export.

Formats, told apart by the file name and content:

- ``*.csv`` — a header row with the columns ``stage`` and ``duration_ms`` (other columns
  are ignored; an optional ``timestamp`` column is kept for provenance);
- JSON lines (``*.jsonl``, ``*.jsonl.bz2``, …) — one object per line with the same
  fields: ``{"stage": "L", "duration_ms": 412.5, "timestamp": "…"}``;
- a trace export: OpenTelemetry's OTLP JSON or Jaeger's JSON (:mod:`~streamrag.calibration.exports`),
  one document (``*.json``) or one export per line (what the collector's file exporter
  writes). Spans become stages only through explicit rules (``--span retrieve=L``,
  ``--span llm_request:first=G`` with ``--turn span:agent_turn``;
  :mod:`~streamrag.calibration.spans`): by name, attributes and position within a turn,
  each span once (duplicates dropped and counted), failed spans counted per stage and
  not fitted. A span's duration is ``end − start``, its timestamp the start. Spans no
  rule selects are counted by name and reported, never fitted.

Every duration must be a finite number of milliseconds > 0 (log-normal and gamma models
live on positive durations; a 0 ms measurement is a clock too coarse for the stage) and at
most a day (:data:`MAX_DURATION_MS`: a longer one is no stage latency, and values near the
float limit overflow every fit). A
bad value is a :class:`~streamrag.base.errors.RecordError` naming the file, the line and the
field.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from streamrag.base.digest import file_sha256
from streamrag.base.errors import ConfigError, DataFileError, RecordError
from streamrag.base.lines import iter_json_objects
from streamrag.calibration.exports import MAX_DURATION_MS, export_kind, jaeger_spans, otlp_spans
from streamrag.calibration.spans import Selection, Span, SpanRule, TurnKey, parse_rule, parse_turn, select

Format = Literal["csv", "jsonl", "otlp", "jaeger"]
SPAN_EXPORTS = ("otlp", "jaeger")


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
    """Span exports: each rule's text → its stage (``NAME=STAGE`` for a plain mapping)."""
    ignored_spans: dict[str, int] = field(default_factory=dict)
    """Span exports: spans no rule selected, counted by name."""
    turn: str | None = None
    """Span exports: how spans were grouped into turns (``span:NAME``, ``attr:KEY``, ``trace``)."""
    selection: dict[str, Any] = field(default_factory=dict)
    """Span exports: ``duplicate_spans``, ``excluded`` (stage → error/timeout/cancelled
    counts), ``missing_attribute``, ``outside_turns``, ``call_outcomes`` (speculative calls
    per terminal outcome, when the export has them), ``n_turns``."""


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


def read_measurements(
    path: str | os.PathLike[str], spans: Mapping[str, str] | Sequence[str] | None = None, *, turn: str | None = None
) -> Measurements:
    """Read ``path`` (see the module docstring). ``spans`` — rules (``NAME[…][:ORDER]=STAGE``)
    or a mapping of span names to stages — and ``turn`` are required for, and only
    allowed with, a trace export."""
    path = Path(path)
    if not path.exists():
        raise DataFileError(f"{path}: no such file")
    if path.is_dir():
        raise DataFileError(f"{path}: is a folder, expected a .csv, .jsonl or .json file of durations")
    rules = _rules(spans)
    turn_key = _turn(turn)
    sha = file_sha256(path)
    if path.suffix.lower() == ".csv":
        fmt: Format = "csv"
        stages = _read_csv(path)
        ignored: dict[str, int] = {}
        chosen: Selection | None = None
    else:
        fmt, stages, ignored, chosen = _read_json(path, rules, turn_key)
    if fmt not in SPAN_EXPORTS and (rules or turn_key):
        option = "--span" if rules else "--turn"
        raise ConfigError(
            f"{option} applies to trace exports (OTLP or Jaeger JSON); {path} is a {fmt.upper()} of durations (its stage column names the stages)"
        )
    if not stages:
        raise DataFileError(f"{path}: no measurements (expected rows of stage, duration_ms)")
    if chosen is None:
        return Measurements(path, sha, fmt, stages)
    selection = {
        "duplicate_spans": chosen.duplicates,
        "excluded": chosen.excluded,
        "missing_attribute": chosen.missing_attribute,
        "outside_turns": chosen.outside_turns,
        **({"call_outcomes": dict(sorted(chosen.outcomes.items()))} if chosen.outcomes else {}),
        **({"n_turns": chosen.n_turns} if chosen.n_turns is not None else {}),
    }
    mapping = {r.text.rpartition("=")[0]: r.stage for r in rules}
    return Measurements(path, sha, fmt, stages, mapping, ignored, turn_key.text if turn_key else None, selection)


def _rules(spans: Mapping[str, str] | Sequence[str] | None) -> list[SpanRule]:
    if spans is None:
        return []
    texts = [f"{name}={stage}" for name, stage in spans.items()] if isinstance(spans, Mapping) else list(spans)
    try:
        return [parse_rule(t) for t in texts]
    except ValueError as exc:
        raise ConfigError(f"--span: {exc}") from None


def _turn(turn: str | None) -> TurnKey | None:
    if turn is None:
        return None
    try:
        return parse_turn(turn)
    except ValueError as exc:
        raise ConfigError(f"--turn: {exc}") from None


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
    if ms > MAX_DURATION_MS:
        raise RecordError(
            str(path),
            line_no,
            where,
            f"{value!r} ms is more than a day (86,400,000 ms): no stage latency; check the unit (milliseconds)",
        )
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
        except RecursionError:
            raise RecordError(str(path), 1, "", "not valid JSON (nested too deeply)") from None
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


def _read_json(
    path: Path, rules: list[SpanRule], turn: TurnKey | None
) -> tuple[Format, dict[str, StageDurations], dict[str, int], Selection | None]:
    out = _Collector()
    fmt: Format | None = None
    names = {r.name for r in rules}
    spans: list[Span] = []
    for line_no, obj in _json_documents(path):
        kind: Format = cast(Format, export_kind(obj) or "jsonl")
        if fmt is not None and kind != fmt:
            what = "a duration row" if kind == "jsonl" else f"an {kind.upper()} trace export"
            raise RecordError(str(path), line_no, "", f"{what} among lines of another kind")
        fmt = kind
        if kind == "otlp":
            spans.extend(otlp_spans(path, line_no, obj, names))
            continue
        if kind == "jaeger":
            spans.extend(jaeger_spans(path, line_no, obj, names))
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
    if fmt not in SPAN_EXPORTS:
        return fmt or "jsonl", out.stages(), {}, None
    chosen = select(spans, rules, turn)
    selected = {r.name for r in rules}
    ignored = {name: n for name, n in chosen.span_counts.items() if name not in selected}
    _check_rules(path, rules, chosen.span_counts, ignored)
    for stage, durations in chosen.durations.items():
        for ms, start_ns in durations:
            stamp = datetime.fromtimestamp(start_ns // 1_000_000_000, tz=UTC).isoformat().replace("+00:00", "Z")
            out.add(stage, ms, stamp)
    return fmt, out.stages(), ignored, chosen


def _check_rules(path: Path, rules: list[SpanRule], span_counts: dict[str, int], ignored: dict[str, int]) -> None:
    names = ", ".join(f"{n} ({c})" for n, c in sorted(ignored.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"
    if not rules:
        raise ConfigError(
            f"{path} is a trace export: map spans to stages with --span NAME=STAGE, or NAME:first=G with --turn "
            f"(span names: {names})"
        )
    for rule in rules:
        if rule.name not in span_counts:
            raise ConfigError(f"--span {rule.text}: no span named {rule.name!r} in {path} (unmapped span names: {names})")
