"""A question's trace folded into what its result row needs: one small handler per event
kind updating a :class:`Tally` (used by :func:`~streamrag.simulator.results.derive_result`).

The handlers are keyed by the kinds of the trace models (:mod:`streamrag.engine.trace_events`),
named here as strings so that folding a trace builds no model; a test checks every name
is a model's kind, so a renamed kind fails there, not as a silently ignored event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from streamrag.pipeline.outcomes import CallEnds

Event = dict[str, Any]
"""A trace event as ``trace.jsonl`` holds it (a :mod:`streamrag.engine.trace_events` model, dumped)."""


@dataclass(slots=True)
class Tally:
    """What the fold over one question's events has gathered so far (µs, counts)."""

    input_end_us: int | None = None
    streaming_answer_us: int | None = None
    baseline_answer_us: int | None = None
    respond_us: int = 0
    fired: int = 0
    """Calls started (a call cancelled before it started is taken back)."""
    speculative: int = 0
    cancelled: int = 0
    skipped: int = 0
    fallback: bool = False
    used_prefix_t: int = 0
    gen_started_us: dict[int, int] = field(default_factory=dict)
    """Call → start of its query generation, while it runs."""
    tool_started_us: dict[int, int] = field(default_factory=dict)
    """Call → start of its tool call, while it runs."""
    gen_us: int = 0
    tool_us: int = 0
    response_us: int = 0
    fired_on: dict[int, int] = field(default_factory=dict)
    """Streaming call → the prefix (hypothesis) it carries."""
    rankings: int = 0
    """Rankings of word prefixes started (``pipeline.ranking`` tool or local)."""
    ranking_us: int = 0
    """Their time: the tool's (searches) or the agent's (a local index), until in, lost or cancelled."""
    rank_started_us: dict[int, int] = field(default_factory=dict)
    ends: CallEnds = field(default_factory=CallEnds)
    """How each speculative call ended (:mod:`~streamrag.pipeline.outcomes`)."""
    executed: list[tuple[int, int]] = field(default_factory=list)
    """``(call, prefix_t)`` of every streaming call whose tool stage started (a mutating
    tool's side effect), in order."""
    used_call: int = 0
    """The call whose result the streaming answer used."""
    endpoint: tuple[int, int, int, int, int, int, int, int] | None = None
    """The endpointer's ``(start_us, confirm_us, false cut-offs, eager restarts, their LLM
    calls, their tool calls, replies spoken to a partial turn, words their LLM calls read)``;
    None: a fixed end of turn (no ``endpoint`` event)."""
    spans: dict[int, list[int]] = field(default_factory=dict)
    """Streaming call → ``[G start, G end, L start, L end]`` (−1: not reached)."""
    baseline_marks: list[int] = field(default_factory=lambda: [-1] * 5)
    """The baseline call's G start, G end, L start, L end and F start."""


def _on_input_end(t: Tally, e: Event) -> None:
    t.input_end_us = e["t_us"]


def _on_fire(t: Tally, e: Event) -> None:
    t.fired += 1
    t.fired_on[e["call"]] = e["prefix_t"]
    if e["by"] == "trigger":
        t.speculative += 1
        t.ends.fired(e["call"], e["prefix_t"])


def _on_reaim(t: Tally, e: Event) -> None:
    t.fired_on[e["call"]] = e["prefix_t"]


def _on_thread_start(t: Tally, e: Event) -> None:
    t.gen_started_us[e["call"]] = e["t_us"]


def _on_gen_done(t: Tally, e: Event) -> None:
    at, call = e["t_us"], e["call"]
    started = t.gen_started_us.pop(call)
    t.gen_us += at - started
    t.tool_started_us[call] = at
    t.executed.append((call, t.fired_on[call]))
    t.spans[call] = [started, at, at, -1]


def _on_defer(t: Tally, e: Event) -> None:
    at, call = e["t_us"], e["call"]
    started = t.gen_started_us.pop(call)
    t.gen_us += at - started
    t.spans[call] = [started, at, -1, -1]


def _on_execute(t: Tally, e: Event) -> None:
    t.tool_started_us[e["call"]] = e["t_us"]
    t.executed.append((e["call"], e["prefix_t"]))
    t.spans[e["call"]][2] = e["t_us"]


def _on_tool_done(t: Tally, e: Event) -> None:
    t.tool_us += e["t_us"] - t.tool_started_us.pop(e["call"])
    t.ends.completed(e["call"])
    t.spans[e["call"]][3] = e["t_us"]


def endpoint_tally(e: Event) -> tuple[int, int, int, int, int, int, int, int]:
    """:attr:`Tally.endpoint` of an ``endpoint`` event's fields (the trace's, or
    :meth:`~streamrag.engine.endpoint.EndpointTurn.event_fields` in a closed-form replay)."""
    return (
        e["start_us"],
        e["confirm_us"],
        len(e["cutoffs"]),
        len(e["restarts"]),
        e["llm_calls"],
        e["tool_calls"],
        e["answered_partial"],
        e["words_in"],
    )


def _on_endpoint(t: Tally, e: Event) -> None:
    t.endpoint = endpoint_tally(e)


def _on_tool_error(t: Tally, e: Event) -> None:
    t.ends.lost(e["call"], e.get("timed_out", False))


def _on_reject(t: Tally, e: Event) -> None:
    t.ends.lost(e["call"])


def _on_revise(t: Tally, e: Event) -> None:
    t.ends.revised(e["kept"])


def _on_reflect(t: Tally, e: Event) -> None:
    t.ends.turn_ended()


def _on_cancel(t: Tally, e: Event) -> None:
    call = e["call"]
    t.ends.cancelled(call, e["reason"])
    if e["reason"] == "unstarted":  # never started: not fired, not cancelled in flight
        t.fired -= 1
        t.fired_on.pop(call, None)
        return
    t.cancelled += 1  # in flight: its stage's time counts up to the cancel
    if call in t.gen_started_us:
        t.gen_us += e["t_us"] - t.gen_started_us.pop(call)
    elif call in t.tool_started_us:
        t.tool_us += e["t_us"] - t.tool_started_us.pop(call)


def _on_rank(t: Tally, e: Event) -> None:
    t.rankings += 1
    t.rank_started_us[e["word"]] = e["t_us"]


def _on_rank_done(t: Tally, e: Event) -> None:
    t.ranking_us += e["t_us"] - t.rank_started_us.pop(e["word"])


def _on_skip(t: Tally, e: Event) -> None:
    t.skipped += 1


def _on_decision(t: Tally, e: Event) -> None:
    t.fallback = e["outcome"] == "fallback"
    if e["call"] is not None:
        t.ends.used(e["call"])


def _on_respond(t: Tally, e: Event) -> None:
    t.used_prefix_t = e["prefix_t"]
    t.used_call = e["call"]
    t.respond_us = e["t_us"]


def _on_answer_ready(t: Tally, e: Event) -> None:
    t.streaming_answer_us = e["t_us"]
    t.response_us = e["t_us"] - t.respond_us


def _on_baseline_answer_ready(t: Tally, e: Event) -> None:
    t.baseline_answer_us = e["t_us"]


def _on_baseline_mark(t: Tally, e: Event) -> None:
    for i in _MARKS[e["kind"]]:
        t.baseline_marks[i] = e["t_us"]


Handler = Callable[[Tally, Event], None]
_STREAMING: dict[str, Handler] = {
    "input_end": _on_input_end,
    "endpoint": _on_endpoint,
    "rank": _on_rank,
    "rank_done": _on_rank_done,
    "fire": _on_fire,
    "reaim": _on_reaim,
    "thread_start": _on_thread_start,
    "gen_done": _on_gen_done,
    "defer": _on_defer,
    "execute": _on_execute,
    "tool_done": _on_tool_done,
    "tool_error": _on_tool_error,
    "reject": _on_reject,
    "revise": _on_revise,
    "reflect": _on_reflect,
    "cancel": _on_cancel,
    "skip": _on_skip,
    "decision": _on_decision,
    "respond": _on_respond,
    "answer_ready": _on_answer_ready,
}
"""The handler of each event kind of the streaming arm (and the arm-less ``input_end``,
``skip``, ``revise``, ``reflect``); every other kind (words, checks, most resource events)
changes no result."""
_MARKS: dict[str, tuple[int, ...]] = {
    "thread_start": (0,),
    "gen_done": (1, 2),
    "defer": (1,),
    "execute": (2,),
    "tool_done": (3,),
    "respond": (4,),
}
"""Which of the baseline's marks an event of its sets (:attr:`Tally.baseline_marks`)."""
_BASELINE: dict[str, Handler] = {
    "answer_ready": _on_baseline_answer_ready,
    **dict.fromkeys(_MARKS, _on_baseline_mark),
}
"""Of the baseline arm its answer counts, and when its stages ended (the parts of its latency)."""


def fold_trace(events: Sequence[Event], *, over: bool = True) -> Tally:
    """The :class:`Tally` of one question's events, in trace order; ``over``: the turn is
    over (its speculative calls with no end yet end with it, :meth:`CallEnds.close`)."""
    t = Tally()
    for e in events:
        handler = (_BASELINE if e.get("arm") == "baseline" else _STREAMING).get(e["kind"])
        if handler is not None:
            handler(t, e)
    if over:
        t.ends.close()
    return t
