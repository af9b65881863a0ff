"""The Speculator's OpenTelemetry spans (extra ``otel``), read with the SDK's in-memory exporter:
a span per call with its terminal outcome, the turn, and G, L, F stages timed as the trace."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

import streamrag

pytest.importorskip("opentelemetry.sdk", reason="the otel extra (opentelemetry-sdk) is not installed")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from streamrag.pipeline.outcomes import OUTCOMES

EVERY_WORD = ["trigger.kind=every_word", "pipeline.max_threads=0"]


def tracer_and_exporter():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("test"), exporter


async def lookup(query):
    await asyncio.sleep(0.03)
    if "fail" in query:
        raise RuntimeError("backend down")
    return {"answer": query.upper()}


def run_turns(texts, *, shadow=False, tool=lookup, overrides=EVERY_WORD, **kwargs):
    tracer, exporter = tracer_and_exporter()

    async def main():
        reports = []
        async with streamrag.Speculator(
            tool, streamrag.load_scenario("paper_rq3", overrides), reflector="unchanged", shadow=shadow, tracer=tracer, **kwargs
        ) as spec:
            for hyps in texts:
                for text in hyps:
                    spec.hear(text)
                    await asyncio.sleep(0.02)
                await spec.resolve()
                reports.append(await spec.settle())
                events = list(spec.events)
        return reports, events

    reports, events = asyncio.run(main())
    return reports, events, exporter.get_finished_spans()


def by_name(spans, name):
    return [s for s in spans if s.name == name]


def test_a_span_per_call_with_its_terminal_outcome_and_the_turns_counts() -> None:
    reports, _, spans = run_turns([["book a table in paris", "book a table in rome"], ["what time is it"]])
    calls = by_name(spans, "speculate.tool_call")
    turns = by_name(spans, "speculate.turn")
    assert [t.attributes["streamrag.turn.id"] for t in turns] == ["turn1", "turn2"]
    for report in reports:
        mine = [
            c for c in calls if c.attributes["streamrag.turn.id"] == report.qid and c.attributes["streamrag.call.speculative"]
        ]
        counted = {o: sum(1 for c in mine if c.attributes["streamrag.call.outcome"] == o) for o in OUTCOMES}
        assert counted == report.outcomes and sum(counted.values()) == report.fired
    revoked = [c for c in calls if c.attributes.get("streamrag.call.outcome") == "revoked"]
    assert revoked and all(c.attributes["streamrag.call.cancel_reason"] == "revised" for c in revoked if c.end_time)
    used = [c for c in calls if c.attributes.get("streamrag.call.outcome") in ("used", "used_after_wait")]
    assert len(used) == 2 and all("streamrag.call.waited_ms" in c.attributes for c in used)
    for c in calls:  # GenAI conventions: the tool's name and a call id unique in the run
        assert c.attributes["gen_ai.tool.name"] == "lookup" and c.attributes["gen_ai.operation.name"] == "execute_tool"
        assert c.attributes["streamrag.trigger.kind"] == "every_word"
        assert c.parent.span_id in {t.context.span_id for t in turns}
    assert len({c.attributes["gen_ai.tool.call.id"] for c in calls}) == len(calls)


def test_stage_spans_are_timed_as_the_trace_to_the_microsecond() -> None:
    _, events, spans = run_turns([["what is the capital of spain"]], shadow=True)
    turn = by_name(spans, "speculate.turn")[0]
    origin_ns = turn.start_time
    calls = {(c.attributes["streamrag.arm"], c.context.span_id): c for c in by_name(spans, "speculate.tool_call")}
    tools = by_name(spans, "execute_tool lookup")
    assert tools and all(t.attributes["gen_ai.tool.type"] == "function" for t in tools)
    done = {(e.get("arm", "streaming"), e["call"]): e["t_us"] for e in events if e["kind"] == "tool_done"}
    finished = sorted(
        (t.attributes["streamrag.arm"], (t.end_time - origin_ns) // 1000)
        for t in tools
        if not t.attributes.get("streamrag.stage.cancelled")
    )
    assert finished == sorted((arm, t) for (arm, _), t in done.items())
    f = {s.attributes["streamrag.arm"]: (s.end_time - s.start_time) // 1000 for s in by_name(spans, "speculate.respond")}
    respond = {e["arm"]: e["t_us"] for e in events if e["kind"] == "respond"}
    ready = {e["arm"]: e["t_us"] for e in events if e["kind"] == "answer_ready"}
    assert f == {arm: ready[arm] - respond[arm] for arm in ready}
    assert turn.attributes["streamrag.turn.saved_ms"] == (ready["baseline"] - ready["streaming"]) / 1000
    assert {arm for arm, _ in calls} == {"streaming", "baseline"}


def test_a_failed_call_is_an_error_span_and_a_barge_in_cuts_the_stages() -> None:
    tracer, exporter = tracer_and_exporter()

    async def main():
        async with streamrag.Speculator(
            lookup, streamrag.load_scenario("paper_rq3", EVERY_WORD), reflector="unchanged", tracer=tracer
        ) as spec:
            spec.hear("please fail now")
            await asyncio.sleep(0.05)
            spec.hear("please fail now and then keep")
            await asyncio.sleep(0.01)
            spec.cancel()  # a barge-in: the calls in flight end as cancelled

    asyncio.run(main())
    spans = exporter.get_finished_spans()
    failed = [s for s in spans if s.status.status_code is StatusCode.ERROR]
    assert failed and all(s.name == "execute_tool lookup" and s.attributes["error.type"] == "tool_error" for s in failed)
    calls = by_name(spans, "speculate.tool_call")
    assert {c.attributes["streamrag.call.outcome"] for c in calls} >= {"failed", "cancelled"}
    cut = [s for s in spans if s.attributes.get("streamrag.stage.cancelled")]
    assert cut and all(s.end_time >= s.start_time for s in spans)
    assert len(by_name(spans, "speculate.turn")) == 1  # written once, when the turn was abandoned


def test_without_a_tracer_opentelemetry_is_never_imported() -> None:
    code = (
        "import asyncio, sys, streamrag\n"
        "async def tool(query):\n    return {'a': query}\n"
        "async def main():\n"
        "    async with streamrag.Speculator(tool, 'paper_rq3', reflector='unchanged') as spec:\n"
        "        spec.hear('hello there world')\n        await spec.resolve()\n"
        "asyncio.run(main())\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')], 'imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_a_span_file_without_the_sdk_is_refused_in_one_line(monkeypatch) -> None:
    from streamrag.base.errors import ConfigError
    from streamrag.live.span_tracer import SpanCollector

    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # as if the otel extra were not installed
    with pytest.raises(ConfigError, match=r"pip install 'streamrag\[otel\]'"):
        SpanCollector()
