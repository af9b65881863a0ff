"""OpenTelemetry spans of a Speculator turn, built from its trace events.

``Speculator(tracer=...)`` takes any OpenTelemetry tracer (``opentelemetry.trace.Tracer``;
the extra ``otel`` installs the SDK). When a turn is over its events become spans, each
with the instants the trace recorded (so a span's duration is the stage's, to the µs, and
``streamrag calibrate`` reads G, L and F back from an export of them):

===========================  ==============================================================
``speculate.turn``           the turn, from its start to its last event (the root span)
``speculate.tool_call``      one per call of the tool (speculative, fallback, baseline):
                             from its fire to its end; ``streamrag.call.outcome`` is the
                             speculative call's terminal outcome (:mod:`~streamrag.pipeline.outcomes`)
``speculate.generate_query`` G, the call's query generation (``thread_start`` → ``gen_done``)
``execute_tool {tool}``      L, the tool stage (``gen_done`` or a deferred call's ``execute``
                             → ``tool_done``), named and tagged after the GenAI semantic
                             conventions' execute-tool span
``speculate.respond``        F, an arm's answer (``respond`` → ``answer_ready``)
===========================  ==============================================================

A stage that took no time on the clock (G with no generator and no drawn delay, a cached
call's L) has no span. A stage cut by a cancellation ends at the cancel, with
``streamrag.stage.cancelled`` true (calibrate counts it, never fits it); a failed tool stage has status ERROR and
``error.type`` (``timeout`` when it timed out). The attribute names are :data:`ATTRIBUTES`
(docs/telemetry.md tabulates them). Nothing here imports OpenTelemetry at module level:
the Speculator imports this module only when given a tracer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from streamrag.engine.clock import unix_offset_ns
from streamrag.simulator.replay.fold import fold_trace

TURN_SPAN = "speculate.turn"
CALL_SPAN = "speculate.tool_call"
G_SPAN = "speculate.generate_query"
F_SPAN = "speculate.respond"


def tool_span_name(tool: str) -> str:
    """The L span's name: the GenAI conventions' ``execute_tool {gen_ai.tool.name}``."""
    return f"execute_tool {tool}"


ATTRIBUTES: dict[str, str] = {
    "streamrag.turn.id": "the turn's id (every span of the turn)",
    "streamrag.turn.n_words": "turn: words heard",
    "streamrag.turn.decision": "turn: speculative (a speculative result answered) or fallback",
    "streamrag.turn.revisions": "turn: times the transcript rewrote words heard",
    "streamrag.turn.waited_ms": "turn: from resolve() to the result (Speculator turns)",
    "streamrag.turn.saved_ms": "turn: shadow mode, the baseline's answer time minus the streaming arm's",
    "streamrag.trigger.kind": "turn and calls: the scenario's trigger kind",
    "streamrag.arm": "calls and F: streaming or baseline",
    "streamrag.call.prefix_words": "call: the words its query was fired on",
    "streamrag.call.fired_by": "call: trigger (speculative), reflector (the full query) or baseline",
    "streamrag.call.speculative": "call: fired by the trigger",
    "streamrag.call.outcome": "speculative call: used, used_after_wait, superseded, revoked, expired, timed_out, cancelled, failed",
    "streamrag.call.cancel_reason": "call: the trace's cancel reason, when it was cancelled",
    "streamrag.call.waited_ms": "the answer's call: how long the answer waited for its result after the turn ended",
    "streamrag.call.saved_ms": "the answer's call, shadow mode: the turn's saved_ms",
    "streamrag.stage": "stage spans: G, L or F",
    "streamrag.stage.cancelled": "stage spans: cut short by a cancellation (not a duration of the stage)",
    "gen_ai.operation.name": "L and calls: execute_tool",
    "gen_ai.tool.name": "L and calls: the tool's name up to its first space (streamrag's BM25 tool: bm25, HTTP tool: http)",
    "gen_ai.tool.call.id": "L and calls: TURN/ARM/CALL, unique in a run",
    "gen_ai.tool.type": "L: function",
    "error.type": "a failed L: timeout or tool_error",
}
"""Every attribute these spans carry (name → meaning)."""


@dataclass(slots=True)
class _Call:
    arm: str
    call: int
    fired_us: int
    prefix_t: int
    by: str
    g: list[int | None] = field(default_factory=lambda: [None, None])
    l: list[int | None] = field(default_factory=lambda: [None, None])  # noqa: E741 - the stage's name
    end_us: int | None = None
    cancel_reason: str | None = None
    error: str | None = None
    timed_out: bool = False
    done_us: int | None = None


def _calls(events: Sequence[dict[str, Any]]) -> dict[tuple[str, int], _Call]:
    """Each call's stage instants (µs from the turn's origin), read from the trace."""
    calls: dict[tuple[str, int], _Call] = {}
    for e in events:
        kind = e["kind"]
        if "call" not in e or e.get("call") is None:
            continue
        key = (e.get("arm", "streaming"), e["call"])
        t = e["t_us"]
        if kind == "fire":
            calls[key] = _Call(key[0], key[1], t, e["prefix_t"], e["by"])
            continue
        c = calls.get(key)
        if c is None:
            continue
        if kind == "reaim":
            c.prefix_t = e["prefix_t"]
        elif kind == "thread_start":
            c.g[0] = t
        elif kind in ("gen_done", "defer") and c.g[0] is not None and c.g[1] is None:
            c.g[1] = t
            if kind == "gen_done":
                c.l[0] = t
        elif kind == "execute":
            c.l[0] = t
        elif kind == "tool_done":
            c.l[1] = c.done_us = c.end_us = t
        elif kind in ("tool_error", "reject"):
            c.l[1] = c.end_us = t
            c.error = str(e.get("error") or kind)
            c.timed_out = bool(e.get("timed_out"))
        elif kind == "cancel" and c.end_us is None:
            c.end_us = t
            c.cancel_reason = e["reason"]
    return calls


class TurnSpans:
    """Writes one turn's spans to ``tracer`` (see the module docstring).

    ``clock_now_us`` is the clock the events were timed on; an instant on it becomes Unix
    nanoseconds by the offset between it and the wall clock, taken once here (so every
    span of a run shares one offset and durations are the clock's)."""

    def __init__(self, tracer: Any, clock_now_us: int, *, tool: str, trigger: str) -> None:
        self.tracer = tracer
        self.offset_ns = unix_offset_ns(clock_now_us)
        self.tool = tool.split()[0] if tool.split() else "tool"  # "bm25 demo", "http URL": bm25, http
        self.trigger = trigger

    def emit(
        self,
        qid: str,
        origin_us: int,
        events: Sequence[dict[str, Any]],
        *,
        n_words: int,
        over: bool,
        waited_ms: float | None = None,
    ) -> None:
        """The turn's spans, ended at the instants its events give."""
        from opentelemetry import trace as otel
        from opentelemetry.trace import Status, StatusCode

        def ns(t_us: int) -> int:
            return self.offset_ns + (origin_us + t_us) * 1000

        last_us = max((e["t_us"] for e in events), default=0)
        tally = fold_trace(events, over=over)
        decision = next((e for e in events if e["kind"] == "decision"), None)
        ready = {e["arm"]: e["t_us"] for e in events if e["kind"] == "answer_ready"}
        saved_ms = (ready["baseline"] - ready["streaming"]) / 1000 if {"baseline", "streaming"} <= ready.keys() else None
        input_end = tally.input_end_us
        turn_attrs: dict[str, Any] = {
            "streamrag.turn.id": qid,
            "streamrag.turn.n_words": n_words,
            "streamrag.turn.revisions": sum(1 for e in events if e["kind"] == "revise"),
            "streamrag.trigger.kind": self.trigger,
        }
        if decision is not None:
            turn_attrs["streamrag.turn.decision"] = decision["outcome"]
        if waited_ms is not None:
            turn_attrs["streamrag.turn.waited_ms"] = waited_ms
        if saved_ms is not None:
            turn_attrs["streamrag.turn.saved_ms"] = saved_ms
        root = self.tracer.start_span(TURN_SPAN, start_time=ns(0), attributes=turn_attrs)
        in_turn = otel.set_span_in_context(root)
        for c in _calls(events).values():
            speculative = c.by == "trigger"
            call_id = f"{qid}/{c.arm}/{c.call}"
            attrs: dict[str, Any] = {
                "streamrag.turn.id": qid,
                "streamrag.arm": c.arm,
                "streamrag.trigger.kind": self.trigger,
                "streamrag.call.prefix_words": c.prefix_t,
                "streamrag.call.fired_by": c.by,
                "streamrag.call.speculative": speculative,
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": self.tool,
                "gen_ai.tool.call.id": call_id,
            }
            outcome = tally.ends.outcome.get(c.call) if speculative and c.arm == "streaming" else None
            if outcome is not None:
                attrs["streamrag.call.outcome"] = outcome
            if c.cancel_reason is not None:
                attrs["streamrag.call.cancel_reason"] = c.cancel_reason
            answered = c.arm == "streaming" and decision is not None and decision["call"] == c.call
            if answered:  # the call the answer was built from (speculative, or the fallback)
                if c.done_us is not None and input_end is not None:
                    attrs["streamrag.call.waited_ms"] = max(0, c.done_us - input_end) / 1000
                if saved_ms is not None and c.arm == "streaming":
                    attrs["streamrag.call.saved_ms"] = saved_ms
            end_us = c.end_us if c.end_us is not None else last_us
            span = self.tracer.start_span(CALL_SPAN, context=in_turn, start_time=ns(c.fired_us), attributes=attrs)
            in_call = otel.set_span_in_context(span)
            stage_base = {"streamrag.turn.id": qid, "streamrag.arm": c.arm}
            for stage, (start, end) in (("G", c.g), ("L", c.l)):
                stop = end_us if end is None else end
                if start is None or stop <= start:  # a stage that took no time (G without a generator): no span
                    continue
                cut = end is None
                stage_attrs: dict[str, Any] = {**stage_base, "streamrag.stage": stage}
                if stage == "L":
                    stage_attrs.update(
                        {
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": self.tool,
                            "gen_ai.tool.call.id": call_id,
                            "gen_ai.tool.type": "function",
                        }
                    )
                if cut:
                    stage_attrs["streamrag.stage.cancelled"] = True
                name = G_SPAN if stage == "G" else tool_span_name(self.tool)
                s = self.tracer.start_span(name, context=in_call, start_time=ns(start), attributes=stage_attrs)
                if stage == "L" and c.error is not None:
                    s.set_attribute("error.type", "timeout" if c.timed_out else "tool_error")
                    s.set_status(Status(StatusCode.ERROR, ("timed out: " if c.timed_out else "") + c.error))
                s.end(end_time=ns(stop))
            span.end(end_time=ns(end_us))
        responds = {e["arm"]: e["t_us"] for e in events if e["kind"] == "respond"}
        for arm, start in responds.items():
            cut = arm not in ready
            stop = ready.get(arm, last_us)
            if stop <= start:  # F took no time (a Speculator without a drawn F)
                continue
            attrs = {"streamrag.turn.id": qid, "streamrag.arm": arm, "streamrag.stage": "F"}
            if cut:
                attrs["streamrag.stage.cancelled"] = True
            s = self.tracer.start_span(F_SPAN, context=in_turn, start_time=ns(start), attributes=attrs)
            s.end(end_time=ns(stop))
        root.end(end_time=ns(last_us))
