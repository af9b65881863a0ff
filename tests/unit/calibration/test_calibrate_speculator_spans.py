"""calibrate reads the Speculator's own spans back (extra ``otel``): an OTLP JSON and a
Jaeger JSON export of the same turns give the G, L and F durations of their trace to the
µs, the speculative calls' outcomes as the turns counted them, and the stages cut by a
cancellation counted, not fitted."""

from __future__ import annotations

import asyncio
import json

import pytest

import streamrag

pytest.importorskip("opentelemetry.sdk", reason="the otel extra (opentelemetry-sdk) is not installed")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from stage_durations import stage_durations_ms

from streamrag.calibration.measurements import read_measurements
from streamrag.cli import main
from streamrag.speculate.span_files import spans_document

RULES = ["speculate.generate_query=G", "execute_tool lookup=L", "speculate.respond=F"]
QUESTIONS = [
    ["book a table in paris", "book a table in rome tonight"],
    ["what is the weather in madrid"],
    ["who wrote the book", "who wrote the book about whales"],
    ["how far is the moon from earth"],
]


async def lookup(query):
    await asyncio.sleep(0.012 + 0.004 * (len(query) % 5))
    return {"answer": query.upper()}


@pytest.fixture(scope="module")
def speculated():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    events, reports = [], []

    async def main_():
        scenario = streamrag.load_scenario("paper_rq3", ["trigger.kind=every_word", "pipeline.max_threads=0"])
        async with streamrag.Speculator(
            lookup, scenario, reflector="unchanged", shadow=True, tracer=provider.get_tracer("t"), sink=events.append
        ) as spec:
            for i, hyps in enumerate(QUESTIONS):
                spec.begin(f"q{i}", g_us=[3_000 + 500 * (k % 4) for k in range(12)], f_us=8_000 + 1_000 * i)
                for text in hyps:
                    spec.hear(text)
                    await asyncio.sleep(0.015)
                await spec.resolve()
                reports.append(await spec.settle())

    asyncio.run(main_())
    return exporter.get_finished_spans(), events, reports


@pytest.mark.parametrize("fmt", ["otlp", "jaeger"])
def test_g_l_f_outcomes_and_cut_stages_read_back_as_the_trace_has_them(tmp_path, speculated, fmt):
    spans, events, reports = speculated
    path = tmp_path / f"{fmt}.json"
    path.write_text(json.dumps(spans_document(spans, fmt)), encoding="utf-8")
    meas = read_measurements(path, RULES)
    assert meas.format == fmt
    truth = stage_durations_ms(events)
    for stage in "GLF":
        got = sorted(meas.stages[stage].durations_ms.tolist())
        assert got == pytest.approx(sorted(truth[stage]), abs=1e-9), stage
    outcomes = {}
    for report in reports:
        for outcome, n in report.outcomes.items():
            if n:
                outcomes[outcome] = outcomes.get(outcome, 0) + n
    assert meas.selection["call_outcomes"] == dict(sorted(outcomes.items()))
    assert outcomes.get("revoked") and sum(r.fired for r in reports) == sum(outcomes.values())
    cut = sum(1 for s in spans if s.attributes.get("streamrag.stage.cancelled"))
    excluded = meas.selection["excluded"]
    assert cut > 0 and sum(c["cancelled"] for c in excluded.values()) == cut
    assert all(c["error"] == c["timeout"] == 0 for c in excluded.values())


def test_the_command_prints_the_outcomes_and_the_cut_stages(tmp_path, speculated, capsys):
    spans, _, _ = speculated
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(spans_document(spans, "jaeger")), encoding="utf-8")
    argv = ["calibrate", str(path), "--out", str(tmp_path / "p.toml"), "--min-n", "3", "--no-figure"]
    assert main([*argv, *(a for r in RULES for a in ("--span", r))]) == 0
    printed = capsys.readouterr().out
    assert "speculative calls by outcome: " in printed and "revoked" in printed
    assert "cancelled spans" in printed
    assert "speculate.tool_call" in printed  # the call and turn spans are counted, not fitted
