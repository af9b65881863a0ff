"""A live demo run's spans (``live --spans``), read back by ``calibrate``, give the same G,
L and F as the run's own trace: the issue's round trip, on the real clock, for a Jaeger
export and an OTLP one. The run's trace is read by an oracle written apart from the span
builder (tests/oracles/stage_durations.py) and calibrated from a CSV of its durations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _livehelpers import FAST
from stage_durations import durations_csv, stage_durations_ms

from streamrag.calibration.calibrate import calibrate
from streamrag.cli import main
from streamrag.engine.trace import read_trace

pytest.importorskip("opentelemetry.sdk", reason="the otel extra (opentelemetry-sdk) is not installed")

RULES = ["speculate.generate_query=G", "execute_tool bm25=L", "speculate.respond=F"]


def _summary(result) -> dict[str, tuple[int, float, float, float]]:
    """Per stage: n, mean of the durations, and the fitted model's P50 and P90 (ms)."""
    means = {s.stage: float(s.durations_ms.mean()) for s in result.measurements.stages.values()}
    return {f.stage: (f.n, means[f.stage], f.model.quantile_ms(0.5), f.model.quantile_ms(0.9)) for f in result.fits}


@pytest.mark.parametrize("fmt", ["jaeger", "otlp"])
def test_a_live_runs_span_export_calibrates_to_the_g_l_f_of_its_trace_within_one_percent(tmp_path: Path, fmt: str) -> None:
    out, spans = tmp_path / "run", tmp_path / f"spans.{fmt}.json"
    argv = ["live", "--replay", "12", "--out", str(out), "--spans", str(spans), "--latency-ms", "8", "--quiet", *FAST]
    assert main([*argv, "--spans-format", fmt]) == 0
    doc = json.loads(spans.read_text(encoding="utf-8"))
    assert ("data" if fmt == "jaeger" else "resourceSpans") in doc
    from_spans = calibrate(spans, tmp_path / "spans.toml", spans=RULES, min_n=3)
    events = [e.model_dump() for e in read_trace(out / "trace.jsonl")]
    (tmp_path / "trace.csv").write_text(durations_csv(stage_durations_ms(events)), encoding="utf-8")
    from_trace = calibrate(tmp_path / "trace.csv", tmp_path / "trace.toml", min_n=3)
    got, truth = _summary(from_spans), _summary(from_trace)
    assert set(got) == set(truth) == {"G", "L", "F"}
    for stage, (n, *values) in truth.items():
        assert got[stage][0] == n > 0, stage
        assert got[stage][1:] == pytest.approx(values, rel=0.01), (stage, got[stage], truth[stage])
    assert from_spans.measurements.stages["F"].n == 24  # both arms of the 12 turns
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    counted = {k: n for k, n in summary["call_outcomes"].items() if n}
    assert from_spans.measurements.selection["call_outcomes"] == dict(sorted(counted.items()))
    print(f"{fmt}: spans {got} trace {truth}")  # the numbers the report quotes (pytest -s)


def test_spans_format_without_spans_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["live", "--replay", "1", "--out", str(tmp_path / "r"), "--spans-format", "jaeger"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--spans-format applies to --spans" in err[0]
    assert not (tmp_path / "r").exists()


def test_spans_naming_a_folder_is_refused_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["live", "--replay", "1", "--out", str(tmp_path / "r"), "--spans", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--spans" in err[0] and "is a folder" in err[0]
    assert not (tmp_path / "r").exists()
