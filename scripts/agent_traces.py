"""Write a LiveKit-shaped OTLP export and a Pipecat-shaped Jaeger export with known G, L, F.

    python scripts/agent_traces.py --out DIR [--turns 1000] [--seed 7]

writes ``DIR/livekit.json`` (OTLP JSON) and ``DIR/pipecat.json`` (Jaeger JSON, what the
Jaeger UI's "Download JSON" gives) and prints the generating medians. Spans are named
and attributed as the frameworks do, read from their sources:

- LiveKit Agents: ``agent_session`` → ``user_turn`` (``lk.user_transcript``) and
  ``agent_turn`` (``lk.speech_id``) → ``llm_node`` → ``llm_request`` (each LLM call:
  ``livekit/agents/llm/llm.py``, ``tracer.start_span("llm_request")``, with
  ``gen_ai.*`` attributes), ``function_tool`` (``voice/generation.py``,
  ``@tracer.start_as_current_span("function_tool")`` with ``lk.function_tool.name``,
  ``lk.function_tool.arguments``, ``lk.function_tool.is_error``:
  ``telemetry/trace_types.py``) and ``tts_node``. In a turn that calls a tool the first
  ``llm_request`` generates the call (G) and the last one the answer (F);
- Pipecat: ``conversation`` (``conversation.id``) → ``turn`` (``turn.number``,
  ``turn.type``: ``utils/tracing/turn_trace_observer.py``) → ``stt``, ``llm``, ``tts``
  (``utils/tracing/service_decorators.py``). Pipecat does not span tool calls; the
  ``execute_tool NAME`` spans with ``gen_ai.tool.name`` are what an application adds by
  the OpenTelemetry GenAI conventions.

Both have turns without a tool call (one LLM call: the answer), failed and timed-out
tool calls (``is_error`` / an error status), and spans exported twice. The truth: G
log-normal median 590 ms, F log-normal median 1,400 ms, the tools ``search_docs``
gamma (shape 4, scale 60 ms) and ``get_weather`` log-normal median 120 ms (σ = 0.35).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

G_MEDIAN_MS = 590.0
F_MEDIAN_MS = 1400.0
WEATHER_MEDIAN_MS = 120.0
SEARCH_SHAPE, SEARCH_SCALE_MS = 4.0, 60.0
TRUE_MEDIANS_MS = {
    "G": G_MEDIAN_MS,
    "F": F_MEDIAN_MS,
    "L.search_docs": SEARCH_SCALE_MS * 3.672060748850897,  # gamma(4) median: 3.6721 θ
    "L.get_weather": WEATHER_MEDIAN_MS,
}
P_NO_TOOL, P_ERROR, P_TIMEOUT, P_DUPLICATE = 0.15, 0.04, 0.02, 0.03


class _Turns:
    """Draws one turn's durations (ms) and its tool, from one seeded stream."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.n = 0

    def next(self) -> dict[str, Any]:
        rng = self.rng
        self.n += 1
        tool = None if rng.random() < P_NO_TOOL else ("search_docs" if rng.random() < 0.6 else "get_weather")
        if tool == "search_docs":
            tool_ms = float(rng.gamma(SEARCH_SHAPE, SEARCH_SCALE_MS))
        else:
            tool_ms = float(rng.lognormal(math.log(WEATHER_MEDIAN_MS), 0.35))
        u = rng.random()
        failure = "timeout" if u < P_TIMEOUT else "error" if u < P_TIMEOUT + P_ERROR else None
        return {
            "tool": tool,
            "G": float(rng.lognormal(math.log(G_MEDIAN_MS), 0.3)),
            "L": tool_ms if failure is None else 3000.0 if failure == "timeout" else float(rng.uniform(5, 40)),
            "F": float(rng.lognormal(math.log(F_MEDIAN_MS), 0.25)),
            "failure": failure,
            "user_ms": float(rng.uniform(800, 2500)),
            "duplicate": rng.random() < P_DUPLICATE,
        }


def _ids(rng: np.random.Generator, width: int) -> str:
    return "".join(f"{b:02x}" for b in rng.integers(0, 256, width // 2, dtype=np.uint8))


def _otlp_attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def livekit_otlp(n_turns: int, seed: int, turns_per_session: int = 20) -> dict[str, Any]:
    """A LiveKit Agents-shaped OTLP JSON document of ``n_turns`` turns."""
    draws, rng = _Turns(seed), np.random.default_rng(seed + 1)
    spans: list[dict[str, Any]] = []

    def span(trace: str, parent: str, name: str, start_ns: int, end_ns: int, attrs: dict[str, Any], error: str = "") -> str:
        span_id = _ids(rng, 16)
        record = {
            "traceId": trace, "spanId": span_id, "parentSpanId": parent, "name": name, "kind": 1,
            "startTimeUnixNano": str(start_ns), "endTimeUnixNano": str(end_ns),
            "attributes": [_otlp_attr(k, v) for k, v in attrs.items()],
            "status": {"code": 2, "message": error} if error else {},
        }  # fmt: skip
        spans.append(record)
        return span_id

    t = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z in ns
    for s in range(math.ceil(n_turns / turns_per_session)):
        trace = _ids(rng, 32)
        session_start = t
        session = _ids(rng, 16)
        for _ in range(min(turns_per_session, n_turns - s * turns_per_session)):
            d = draws.next()
            ms = 1_000_000
            user_end = t + int(d["user_ms"] * ms)
            span(trace, session, "user_turn", t, user_end, {"lk.user_transcript": "…", "lk.participant_identity": "user"})
            start = user_end + int(rng.uniform(200, 600) * ms)
            turn = span(
                trace, session, "agent_turn", start, start + 1, {"lk.speech_id": f"speech_{draws.n}", "lk.agent_name": "agent"}
            )
            at = start
            model = {"gen_ai.request.model": "gpt-4o-mini", "gen_ai.operation.name": "chat"}
            if d["tool"] is not None:
                node = span(trace, turn, "llm_node", at, at + int(d["G"] * ms) + 1, {})
                span(trace, node, "llm_request", at, at + int(d["G"] * ms), {**model, "lk.response.function_calls": d["tool"]})
                at += int(d["G"] * ms)
                attrs = {"lk.function_tool.name": d["tool"], "lk.function_tool.arguments": '{"query": "…"}'}
                attrs["lk.function_tool.is_error"] = d["failure"] == "error"
                error = "TimeoutError: the tool call timed out" if d["failure"] == "timeout" else ""
                span(trace, turn, "function_tool", at, at + int(d["L"] * ms), attrs, error)
                at += int(d["L"] * ms)
            node = span(trace, turn, "llm_node", at, at + int(d["F"] * ms) + 1, {})
            span(trace, node, "llm_request", at, at + int(d["F"] * ms), {**model, "lk.response.text": "…"})
            at += int(d["F"] * ms)
            span(trace, turn, "tts_node", at, at + int(rng.uniform(150, 400) * ms), {"lk.tts.streaming": True})
            if d["duplicate"]:
                spans.append(dict(spans[-2]))  # an exporter retry: the answer's llm_request again
            t = at + int(rng.uniform(1000, 3000) * ms)
        spans.append({
            "traceId": trace, "spanId": session, "parentSpanId": "", "name": "agent_session", "kind": 1,
            "startTimeUnixNano": str(session_start), "endTimeUnixNano": str(t), "attributes": [], "status": {},
        })  # fmt: skip
    resource = {"attributes": [_otlp_attr("service.name", "livekit-agent")]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "livekit-agents"}, "spans": spans}]}]}


def pipecat_jaeger(n_turns: int, seed: int, turns_per_conversation: int = 20) -> dict[str, Any]:
    """A Pipecat-shaped Jaeger JSON document (µs) of ``n_turns`` turns."""
    draws, rng = _Turns(seed + 100), np.random.default_rng(seed + 2)
    data = []
    t = 1_767_225_600_000_000  # µs
    for c in range(math.ceil(n_turns / turns_per_conversation)):
        trace = _ids(rng, 32)
        spans: list[dict[str, Any]] = []

        span = partial(_jaeger_span, spans, rng, trace)
        conversation = span("", "conversation", t, 1, {"conversation.id": f"conv-{c}", "conversation.type": "voice"})
        for number in range(1, min(turns_per_conversation, n_turns - c * turns_per_conversation) + 1):
            d = draws.next()
            turn = span(conversation, "turn", t, 1, {"turn.number": number, "turn.type": "conversation"})
            at = t + int(d["user_ms"] * 1000)
            span(turn, "stt", at - 300_000, 300_000, {"gen_ai.operation.name": "stt", "transcript": "…", "is_final": True})
            model = {"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.operation.name": "chat"}
            if d["tool"] is not None:
                span(turn, "llm", at, int(d["G"] * 1000), model)
                at += int(d["G"] * 1000)
                tags: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": d["tool"]}
                if d["failure"] == "error":
                    tags["error"] = True
                elif d["failure"] == "timeout":
                    tags |= {"otel.status_code": "ERROR", "otel.status_description": "tool call timed out"}
                span(turn, f"execute_tool {d['tool']}", at, int(d["L"] * 1000), tags)
                at += int(d["L"] * 1000)
            span(turn, "llm", at, int(d["F"] * 1000), model)
            if d["duplicate"]:
                spans.append(dict(spans[-1]))
            at += int(d["F"] * 1000)
            span(turn, "tts", at, int(rng.uniform(150, 400) * 1000), {"gen_ai.operation.name": "tts"})
            t = at + int(rng.uniform(1000, 3000) * 1000)
        data.append({"traceID": trace, "spans": spans, "processes": {"p1": {"serviceName": "my-voice-app", "tags": []}}})
    return {"data": data, "total": 0, "limit": 0, "offset": 0, "errors": None}


def _jaeger_span(
    spans: list[dict[str, Any]], rng: np.random.Generator, trace: str, parent: str, name: str, start_us: int, dur_us: int,
    tags: dict[str, Any],
) -> str:  # fmt: skip
    span_id = _ids(rng, 16)
    refs = [{"refType": "CHILD_OF", "traceID": trace, "spanID": parent}] if parent else []
    typed = [{"key": k, "type": "bool" if isinstance(v, bool) else "string", "value": v} for k, v in tags.items()]
    spans.append({
        "traceID": trace, "spanID": span_id, "operationName": name, "references": refs, "flags": 1,
        "startTime": start_us, "duration": dur_us, "tags": typed, "logs": [], "processID": "p1", "warnings": None,
    })  # fmt: skip
    return span_id


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder to write livekit.json and pipecat.json into")
    p.add_argument("--turns", type=int, default=1000)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "livekit.json").write_text(json.dumps(livekit_otlp(args.turns, args.seed)), encoding="utf-8")
    (out / "pipecat.json").write_text(json.dumps(pipecat_jaeger(args.turns, args.seed)), encoding="utf-8")
    truth = ", ".join(f"{k} {v:.1f} ms" for k, v in TRUE_MEDIANS_MS.items())
    print(f"wrote {out}/livekit.json and {out}/pipecat.json ({args.turns} turns each); generating medians: {truth}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
