"""Trace exports read into :class:`~streamrag.calibration.spans.Span` records.

Two JSON shapes, told apart by their top-level key:

- **OTLP JSON** (``resourceSpans``) — what the OpenTelemetry collector's file exporter
  and the SDKs' OTLP/JSON encoders write: ``resourceSpans[] → scopeSpans[] → spans[]``
  (``instrumentationLibrarySpans`` before OTLP 1.0), each span with ``traceId``,
  ``spanId``, ``parentSpanId``, ``name``, ``startTimeUnixNano`` / ``endTimeUnixNano``
  (uint64 as decimal strings, or numbers), ``attributes`` as
  ``[{key, value: {stringValue | intValue | doubleValue | boolValue | arrayValue}}]``
  and ``status: {code, message}`` (code 2 or ``STATUS_CODE_ERROR`` is an error);
- **Jaeger JSON** (``data``) — what the Jaeger UI's "Download JSON" and its query API
  (``/api/traces``) return, where Pipecat's tracing docs lead (a local Jaeger
  all-in-one as collector): ``data[] → {traceID, spans[], processes}``, each span with
  ``traceID``, ``spanID``, ``operationName``, ``references: [{refType: CHILD_OF,
  spanID}]``, ``startTime`` and ``duration`` in **microseconds**, ``tags: [{key, type,
  value}]`` (an error: ``error = true`` or ``otel.status_code = ERROR``, message in
  ``otel.status_description``).

Only the spans whose name a rule names have their times checked: a bad or missing
time, or a span that does not end after its start or lasts more than a day
(:data:`MAX_DURATION_MS`), is a :class:`~streamrag.base.errors.RecordError` naming the
file, the line of the span (where its id appears) and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from streamrag.base.errors import RecordError
from streamrag.calibration.spans import CANCELLED_ATTRIBUTE, ERROR_ATTRIBUTES, Span

MAX_DURATION_MS = 86_400_000.0
"""A day: the longest duration a stage may have (a measured row's or a selected span's)."""
_TIMEOUT_WORDS = ("timeout", "timed out", "deadline")
_CANCEL_WORDS = ("cancel",)


def export_kind(doc: dict[str, Any]) -> str | None:
    """``otlp``, ``jaeger`` or ``None`` (not a span export)."""
    if "resourceSpans" in doc:
        return "otlp"
    data = doc.get("data")
    if isinstance(data, list) and all(isinstance(t, dict) and "spans" in t for t in data):
        return "jaeger"
    return None


def _list(path: Path, line_no: int, where: str, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError(str(path), line_no, where, f"expected a list, got {type(value).__name__}")
    return value


def _uint(value: Any) -> int | None:
    """OTLP JSON writes uint64 as decimal strings; some exporters, and Jaeger, as numbers."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _line_of(path: Path, line_no: int, span_id: Any) -> int:
    """The line of a span in a one-document export: where its id appears (the JSON
    parser keeps no positions); ``line_no`` otherwise. Called for errors only."""
    if line_no != 1 or path.suffix.lower() != ".json" or not isinstance(span_id, str) or not span_id:
        return line_no
    text = path.read_text(encoding="utf-8")
    at = text.find(json.dumps(span_id))
    return line_no if at < 0 else text.count("\n", 0, at) + 1


def _true(attributes: dict[str, Any], key: str) -> bool:
    return attributes.get(key) is True or str(attributes.get(key)).lower() == "true"


def _error(failed: bool, attributes: dict[str, Any], message: str) -> str | None:
    """Why a span is not fitted (:data:`~streamrag.calibration.spans.EXCLUDED_KINDS`), or None."""
    if _true(attributes, CANCELLED_ATTRIBUTE):
        return "cancelled"
    if not (failed or any(_true(attributes, k) for k in ERROR_ATTRIBUTES)):
        return None
    said = " ".join(str(v) for v in (message, attributes.get("error.type", ""), attributes.get("exception.type", ""))).lower()
    if any(w in said for w in _TIMEOUT_WORDS):
        return "timeout"
    return "cancelled" if any(w in said for w in _CANCEL_WORDS) else "error"


def _otlp_value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        number = value["intValue"]
        return int(number) if isinstance(number, str) and number.lstrip("-").isdigit() else number
    if "arrayValue" in value:
        return [_otlp_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    return None


def otlp_spans(path: Path, line_no: int, doc: dict[str, Any], names: set[str]) -> Iterator[Span]:
    """The spans of one OTLP JSON document."""
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
                span_id = span.get("spanId") if isinstance(span, dict) else None
                if not isinstance(span, dict) or not isinstance(span.get("name"), str):
                    raise RecordError(
                        str(path), _line_of(path, line_no, span_id), f"{where}.name", "missing (a span needs a name)"
                    )
                name = span["name"]
                start, end = _uint(span.get("startTimeUnixNano")), _uint(span.get("endTimeUnixNano"))
                if name in names:
                    _check_times(path, line_no, span_id, where, name, span, start, end)
                attrs = {
                    a["key"]: _otlp_value(a.get("value"))
                    for a in _list(path, line_no, f"{where}.attributes", span.get("attributes"))
                    if isinstance(a, dict) and isinstance(a.get("key"), str)
                }
                given = span.get("status")
                status: dict[str, Any] = given if isinstance(given, dict) else {}
                failed = status.get("code") in (2, "2", "STATUS_CODE_ERROR")
                yield Span(
                    str(span.get("traceId") or ""),
                    str(span_id or ""),
                    str(span.get("parentSpanId") or ""),
                    name,
                    start or 0,
                    end or 0,
                    attrs,
                    _error(failed, attrs, str(status.get("message") or "")),
                )


def jaeger_spans(path: Path, line_no: int, doc: dict[str, Any], names: set[str]) -> Iterator[Span]:
    """The spans of one Jaeger JSON document (µs converted to ns)."""
    for i, trace in enumerate(doc["data"]):
        for k, span in enumerate(_list(path, line_no, f"data[{i}].spans", trace.get("spans"))):
            where = f"data[{i}].spans[{k}]"
            span_id = span.get("spanID") if isinstance(span, dict) else None
            if not isinstance(span, dict) or not isinstance(span.get("operationName"), str):
                line = _line_of(path, line_no, span_id)
                raise RecordError(str(path), line, f"{where}.operationName", "missing (a span needs a name)")
            name = span["operationName"]
            start, duration = _uint(span.get("startTime")), _uint(span.get("duration"))
            if name in names:
                _check_times(path, line_no, span_id, where, name, span, start, duration, jaeger=True)
            tags = {
                t["key"]: t.get("value")
                for t in _list(path, line_no, f"{where}.tags", span.get("tags"))
                if isinstance(t, dict) and isinstance(t.get("key"), str)
            }
            parent = next(
                (
                    r.get("spanID")
                    for r in _list(path, line_no, f"{where}.references", span.get("references"))
                    if isinstance(r, dict) and r.get("refType") == "CHILD_OF"
                ),
                "",
            )
            failed = str(tags.get("otel.status_code", "")).upper() == "ERROR"
            start_ns = (start or 0) * 1000
            yield Span(
                str(span.get("traceID") or trace.get("traceID") or ""),
                str(span_id or ""),
                str(parent or ""),
                name,
                start_ns,
                start_ns + (duration or 0) * 1000,
                tags,
                _error(failed, tags, str(tags.get("otel.status_description", ""))),
            )


def _check_times(
    path: Path,
    line_no: int,
    span_id: Any,
    where: str,
    name: str,
    span: dict[str, Any],
    start: int | None,
    end: int | None,
    *,
    jaeger: bool = False,
) -> None:
    """The span's times are integers and it ends after its start (OTLP: start and end in
    ns; Jaeger: start and duration in µs); the error names the span's line."""
    fields = ("startTime", "duration") if jaeger else ("startTimeUnixNano", "endTimeUnixNano")
    unit = "µs (a number)" if jaeger else "Unix nanoseconds (a decimal string)"
    for field_name, value in zip(fields, (start, end), strict=True):
        if value is None:
            given = span.get(field_name)
            problem = "missing" if given is None else f"expected {unit}, got {given!r}"
            raise RecordError(str(path), _line_of(path, line_no, span_id), f"{where}.{field_name}", problem)
    length_ns = (end or 0) * 1000 if jaeger else (end or 0) - (start or 0)
    if length_ns <= 0:
        line = _line_of(path, line_no, span_id)
        raise RecordError(str(path), line, f"{where}.{fields[1]}", f"span {name!r} does not end after its start ({length_ns} ns)")
    if length_ns > MAX_DURATION_MS * 1_000_000:
        line = _line_of(path, line_no, span_id)
        problem = f"span {name!r} lasts {length_ns} ns, more than a day: no stage latency (check the unit)"
        raise RecordError(str(path), line, f"{where}.{fields[1]}", problem)
