"""Finished OpenTelemetry spans written as the two JSON files ``streamrag calibrate`` reads.

- :func:`otlp_json` — OTLP JSON, the shape of the collector's file exporter and of the
  OTLP/HTTP JSON encoding: ``resourceSpans[] → scopeSpans[] → spans[]``, ids in hex,
  times as decimal strings of Unix nanoseconds, typed attribute values;
- :func:`jaeger_json` — Jaeger's JSON (its UI's "Download JSON", its query API's
  ``/api/traces``): ``data[]`` of one object per trace with ``spans`` (``operationName``,
  ``references`` CHILD_OF, ``startTime`` and ``duration`` in µs, typed ``tags``) and
  ``processes`` (the service).

The spans are the SDK's finished spans (``ReadableSpan``: what an
``InMemorySpanExporter`` holds); nothing here imports OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

FORMATS = ("otlp", "jaeger")


def _hex(value: int, width: int) -> str:
    return format(value, f"0{width}x")


def _otlp_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_otlp_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _otlp_attributes(attributes: Any) -> list[dict[str, Any]]:
    return [{"key": k, "value": _otlp_value(v)} for k, v in dict(attributes or {}).items()]


def otlp_json(spans: Sequence[Any]) -> dict[str, Any]:
    """``spans`` as one OTLP JSON document (grouped by resource, then by scope)."""
    resources: dict[int, tuple[Any, dict[tuple[str, str], list[dict[str, Any]]]]] = {}
    for s in spans:
        _, scopes = resources.setdefault(id(s.resource), (s.resource, {}))
        scope = s.instrumentation_scope
        key = (scope.name, scope.version or "") if scope is not None else ("", "")
        ctx = s.context
        out: dict[str, Any] = {
            "traceId": _hex(ctx.trace_id, 32),
            "spanId": _hex(ctx.span_id, 16),
            "parentSpanId": _hex(s.parent.span_id, 16) if s.parent is not None else "",
            "name": s.name,
            "kind": int(s.kind.value) + 1,  # OTLP numbers SPAN_KIND_UNSPECIFIED 0, INTERNAL 1, …
            "startTimeUnixNano": str(s.start_time),
            "endTimeUnixNano": str(s.end_time),
            "attributes": _otlp_attributes(s.attributes),
            "status": {
                "code": int(s.status.status_code.value),
                **({"message": s.status.description} if s.status.description else {}),
            },
        }
        scopes.setdefault(key, []).append(out)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _otlp_attributes(resource.attributes)},
                "scopeSpans": [
                    {"scope": {"name": name, **({"version": version} if version else {})}, "spans": members}
                    for (name, version), members in scopes.items()
                ],
            }
            for resource, scopes in resources.values()
        ]
    }


def _jaeger_tag(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "type": "bool", "value": value}
    if isinstance(value, int):
        return {"key": key, "type": "int64", "value": value}
    if isinstance(value, float):
        return {"key": key, "type": "float64", "value": value}
    return {"key": key, "type": "string", "value": value if isinstance(value, str) else str(list(value))}


def jaeger_json(spans: Sequence[Any], service: str = "streamrag") -> dict[str, Any]:
    """``spans`` as Jaeger's JSON: one entry per trace, times in µs (the span's
    nanoseconds floored: a µs clock's spans keep their durations exactly)."""
    traces: dict[int, list[dict[str, Any]]] = {}
    for s in spans:
        ctx = s.context
        trace_id = _hex(ctx.trace_id, 32)
        tags = [_jaeger_tag(k, v) for k, v in dict(s.attributes or {}).items()]
        tags.append({"key": "span.kind", "type": "string", "value": s.kind.name.lower()})
        code = s.status.status_code.name
        if code != "UNSET":
            tags.append({"key": "otel.status_code", "type": "string", "value": code})
        if code == "ERROR":
            tags.append({"key": "error", "type": "bool", "value": True})
            if s.status.description:
                tags.append({"key": "otel.status_description", "type": "string", "value": s.status.description})
        start_us = s.start_time // 1000
        references = (
            [{"refType": "CHILD_OF", "traceID": trace_id, "spanID": _hex(s.parent.span_id, 16)}] if s.parent is not None else []
        )
        traces.setdefault(ctx.trace_id, []).append(
            {
                "traceID": trace_id,
                "spanID": _hex(ctx.span_id, 16),
                "operationName": s.name,
                "references": references,
                "startTime": start_us,
                "duration": s.end_time // 1000 - start_us,
                "tags": tags,
                "logs": [],
                "processID": "p1",
                "warnings": None,
            }
        )
    process = {"serviceName": service, "tags": []}
    return {
        "data": [
            {"traceID": _hex(tid, 32), "spans": members, "processes": {"p1": process}, "warnings": None}
            for tid, members in traces.items()
        ],
        "total": 0,
        "limit": 0,
        "offset": 0,
        "errors": None,
    }


def spans_document(spans: Sequence[Any], fmt: str, service: str = "streamrag") -> dict[str, Any]:
    """``spans`` in ``fmt`` (:data:`FORMATS`); ``service``: Jaeger's process name (OTLP
    takes the spans' own resource)."""
    if fmt == "otlp":
        return otlp_json(spans)
    if fmt == "jaeger":
        return jaeger_json(spans, service)
    raise ValueError(f"span file format: one of {', '.join(FORMATS)}, got {fmt!r}")
