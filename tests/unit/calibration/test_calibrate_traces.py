"""Calibration from agent traces: span rules by name, attributes and position in a turn,
per-tool stages, de-duplication, failed spans, and Jaeger's JSON next to OTLP."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from streamrag.base.errors import ConfigError, RecordError
from streamrag.calibration.calibrate import calibrate
from streamrag.calibration.measurements import read_measurements
from streamrag.calibration.spans import parse_rule
from streamrag.cli import main

ROOT = Path(__file__).resolve().parents[3]
LIVEKIT_RULES = ["llm_request:last=F", "llm_request:first=G", "function_tool=L.{lk.function_tool.name}"]
PIPECAT_RULES = [
    "llm:last=F", "llm:first=G", "execute_tool search_docs=L.{gen_ai.tool.name}", "execute_tool get_weather=L.{gen_ai.tool.name}",
]  # fmt: skip


def _generator():
    spec = importlib.util.spec_from_file_location("agent_traces", ROOT / "scripts" / "agent_traces.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict[str, Path]:
    gen = _generator()
    out = tmp_path_factory.mktemp("traces")
    (out / "livekit.json").write_text(json.dumps(gen.livekit_otlp(1000, 7)), encoding="utf-8")
    (out / "pipecat.json").write_text(json.dumps(gen.pipecat_jaeger(1000, 7)), encoding="utf-8")
    return {"livekit": out / "livekit.json", "pipecat": out / "pipecat.json", "truth": gen.TRUE_MEDIANS_MS}


def _failures(doc: dict, kind: str) -> int:
    if kind == "livekit":
        spans = [s for r in doc["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]
        return sum(
            s["status"].get("code") == 2 or {"key": "lk.function_tool.is_error", "value": {"boolValue": True}} in s["attributes"]
            for s in spans
        )
    spans = [s for t in doc["data"] for s in t["spans"]]
    return sum(any(t["key"] in ("error", "otel.status_code") for t in s["tags"]) for s in spans)


@pytest.mark.parametrize(
    ("kind", "rules", "turn"), [("livekit", LIVEKIT_RULES, "span:agent_turn"), ("pipecat", PIPECAT_RULES, "span:turn")]
)
def test_g_l_and_f_are_recovered_from_an_agents_export(tmp_path, exports, kind, rules, turn):
    result = calibrate(exports[kind], tmp_path / "p.toml", spans=rules, turn=turn)
    meas = result.measurements
    assert meas.format == ("otlp" if kind == "livekit" else "jaeger")
    medians = {f.stage: f.model.quantile_ms(0.5) for f in result.fits}
    assert set(medians) == set(exports["truth"])
    for stage, truth in exports["truth"].items():
        assert medians[stage] == pytest.approx(truth, rel=0.05), (stage, medians[stage], truth)
    # every turn has one answer; the duplicated spans are dropped; failed tool calls counted, not fitted
    assert meas.stages["F"].n == 1000 and meas.selection["n_turns"] == 1000
    assert meas.selection["duplicate_spans"] > 0
    excluded = meas.selection["excluded"]
    doc = json.loads(exports[kind].read_text())
    assert sum(c["error"] + c["timeout"] for c in excluded.values()) == _failures(doc, kind) > 0
    assert all(c["timeout"] > 0 for c in excluded.values())


def test_by_name_alone_g_is_the_mixture_of_both_llm_calls(tmp_path, exports):
    result = calibrate(exports["livekit"], tmp_path / "p.toml", spans={"llm_request": "G", "function_tool": "L"})
    g = next(f for f in result.fits if f.stage == "G")
    assert g.n > 1000 and g.model.quantile_ms(0.5) > 1.5 * exports["truth"]["G"]  # the 1,187 ms for ~590


def test_a_turn_by_attribute_or_trace_groups_the_same_way(exports):
    by_span = read_measurements(exports["livekit"], LIVEKIT_RULES, turn="span:agent_turn")
    by_attr = read_measurements(exports["livekit"], LIVEKIT_RULES, turn="attr:lk.speech_id")
    for stage, data in by_span.stages.items():
        assert (data.durations_ms == by_attr.stages[stage].durations_ms).all()
    # one trace per session of 20 turns: "first of the trace" is a different, smaller selection
    by_trace = read_measurements(exports["livekit"], LIVEKIT_RULES, turn="trace")
    assert by_trace.selection["n_turns"] == 50 and by_trace.stages["F"].n == 50


def test_rules_are_parsed_and_an_order_needs_a_turn(exports):
    rule = parse_rule("llm_request[gen_ai.request.model=gpt-4o-mini,lk.retry=false]:-2=G")
    assert (rule.name, rule.where, rule.order, rule.stage) == (
        "llm_request", (("gen_ai.request.model", "gpt-4o-mini"), ("lk.retry", "false")), -2, "G",
    )  # fmt: skip
    assert parse_rule("execute_tool search_docs=L").name == "execute_tool search_docs"
    with pytest.raises(ValueError, match=r"expected NAME\[KEY=VALUE,…\]"):
        parse_rule("llm_request:second=G")
    with pytest.raises(ConfigError, match=r"--span llm_request:first=G: a position in a turn needs --turn"):
        read_measurements(exports["livekit"], ["llm_request:first=G"])
    # an attribute filter selects the calls that produced a tool call
    only_g = read_measurements(exports["livekit"], ["llm_request[lk.response.function_calls=search_docs]=G"])
    assert 0 < only_g.stages["G"].n < 1000


def test_the_cli_prints_what_the_rules_left_out(tmp_path, exports, capsys):
    out = tmp_path / "agent.toml"
    rules = [a for r in LIVEKIT_RULES for a in ("--span", r)]
    assert (
        main(["calibrate", str(exports["livekit"]), "--turn", "span:agent_turn", *rules, "--out", str(out), "--no-figure"]) == 0
    )
    printed = capsys.readouterr().out
    assert "turns: 1000" in printed and "spans exported twice" in printed
    assert "stage L.search_docs: not fitted" in printed and "timed-out spans" in printed
    import tomllib

    prov = tomllib.loads(out.read_text(encoding="utf-8"))["provenance"]
    assert prov["input_format"] == "otlp" and prov["turn"] == "span:agent_turn"
    assert prov["spans"]["llm_request:first"] == "G" and prov["selection"]["duplicate_spans"] > 0


def test_a_bad_jaeger_span_is_one_line_naming_file_line_and_field(tmp_path, capsys):
    doc = {"data": [{"traceID": "t1", "spans": [{"traceID": "t1", "spanID": "abc123", "operationName": "llm", "startTime": 5}]}]}
    bad = tmp_path / "jaeger.json"
    bad.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    with pytest.raises(RecordError, match=r"jaeger\.json:\d+: field 'data\[0\]\.spans\[0\]\.duration': missing"):
        read_measurements(bad, ["llm=G"])
    assert main(["calibrate", str(bad), "--span", "llm=G", "--out", str(tmp_path / "x.toml")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "duration" in err[0]


def test_a_per_tool_profile_simulates_the_tool_it_is_asked_for(tmp_path, exports):
    from streamrag.simulator.scenario import load_scenario

    out = tmp_path / "agent.toml"
    calibrate(exports["livekit"], out, spans=LIVEKIT_RULES, turn="span:agent_turn")
    scenario = tmp_path / "s.toml"
    scenario.write_text('[latency]\nprofile = "agent.toml"\nL_stage = "L.get_weather"\n', encoding="utf-8")
    rs = load_scenario(str(scenario))
    assert rs.stages.L.quantile_ms(0.5) == pytest.approx(exports["truth"]["L.get_weather"], rel=0.05)
    assert rs.stages.G.quantile_ms(0.5) == pytest.approx(exports["truth"]["G"], rel=0.05)
    with pytest.raises(ConfigError, match=r"latency\.L_stage: .* has no stage 'L\.search'"):
        load_scenario(str(scenario), ["latency.L_stage=L.search"])


@pytest.mark.parametrize(("kind", "field", "value"), [("otlp", "endTimeUnixNano", str(10**40)), ("jaeger", "duration", 10**40)])
def test_a_span_longer_than_a_day_is_refused_naming_its_line_and_field(tmp_path, kind, field, value):
    gen = _generator()
    doc = gen.livekit_otlp(30, 3) if kind == "otlp" else gen.pipecat_jaeger(30, 3)
    spans = (
        [s for r in doc["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]
        if kind == "otlp"
        else doc["data"][0]["spans"]
    )
    name_key = "name" if kind == "otlp" else "operationName"
    span = next(s for s in spans if s[name_key].startswith(("function_tool", "execute_tool")))
    span[field] = value
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    rules = LIVEKIT_RULES if kind == "otlp" else PIPECAT_RULES
    with pytest.raises(RecordError, match=f"{field}.*more than a day"):
        read_measurements(path, rules, turn="span:agent_turn" if kind == "otlp" else "span:turn")
