"""``streamrag calibrate``: fits recover known parameters, choose the right model, and the
profile works wherever a built-in one does; bad input is one line naming file, line, field.

Tolerances of the round trips are 4 asymptotic standard errors of the maximum-likelihood
estimates (from the Fisher information, n = 5000): a random seed would fail with
probability < 1e-4 per parameter; the seeds are fixed, so the tests are deterministic.
"""

from __future__ import annotations

import csv
import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest
from _simhelpers import small_table

from streamrag.analysis.table import write_table
from streamrag.base.errors import ConfigError, InputError
from streamrag.calibration.fit import fit_stage, ks_distance
from streamrag.calibration.measurements import read_measurements
from streamrag.cli import main
from streamrag.engine.latency import GammaLatency, LogNormalLatency
from streamrag.engine.profiles import load_profile
from streamrag.simulator.scenario import load_scenario

N = 5000


def _write_csv(path: Path, rows: list[tuple[str, float]], *, header: str = "timestamp,stage,duration_ms") -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        fh.write(header + "\n")
        writer = csv.writer(fh)
        for i, (stage, ms) in enumerate(rows):
            writer.writerow([f"2025-03-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z", stage, ms])
    return path


def test_lognormal_round_trip_recovers_mu_and_sigma():
    mu, sigma = math.log(600.0), 0.4
    x = np.random.default_rng(20250301).lognormal(mu, sigma, N)
    fit = fit_stage("L", x, origin="t")
    params = {c.kind: c.params for c in fit.candidates}["lognormal"]
    # SE(μ̂) = σ/√n ≈ 0.0057, SE(σ̂) = σ/√(2n) ≈ 0.0040
    assert abs(params["mu"] - mu) < 4 * sigma / math.sqrt(N)
    assert abs(params["sigma"] - sigma) < 4 * sigma / math.sqrt(2 * N)
    assert fit.chosen == "lognormal" and isinstance(fit.model, LogNormalLatency)
    # the kernel's model carries exactly the fitted μ and σ (as P50 and P90)
    assert math.isclose(fit.model.mu, params["mu"], rel_tol=1e-12)
    assert math.isclose(fit.model.sigma, params["sigma"], rel_tol=1e-12)


def test_gamma_round_trip_recovers_shape_and_scale():
    from scipy.special import polygamma

    k, theta = 2.0, 300.0
    x = np.random.default_rng(20250302).gamma(k, theta, N)
    fit = fit_stage("L", x, origin="t")
    params = {c.kind: c.params for c in fit.candidates}["gamma"]
    # Fisher information per draw [[ψ'(k), 1/θ], [1/θ, k/θ²]]:
    # var(k̂) = k / (n(kψ'(k) − 1)), var(θ̂) = θ²ψ'(k) / (n(kψ'(k) − 1))
    trigamma = float(polygamma(1, k))
    det = N * (k * trigamma - 1)
    assert abs(params["shape"] - k) < 4 * math.sqrt(k / det)  # SE ≈ 0.038
    assert abs(params["scale_ms"] - theta) < 4 * math.sqrt(theta**2 * trigamma / det)  # SE ≈ 6.2 ms
    assert fit.chosen == "gamma" and isinstance(fit.model, GammaLatency)
    assert (fit.model.shape, fit.model.scale_ms) == (params["shape"], params["scale_ms"])


def test_a_mixture_no_parametric_model_fits_gets_the_empirical_quantiles():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(200, 20, 600), rng.normal(900, 50, 600)])
    fit = fit_stage("F", x, origin="t")
    assert fit.chosen == "quantiles" and fit.model.kind == "quantiles"
    # every percentile to P90, then the fitted tail (120 of the 1,200 durations exceed P90)
    assert len(fit.model.points) == 91 and fit.model.points[0] == (0.0, round(x.min(), 3))
    assert fit.model.points[-1] == (0.9, round(float(np.quantile(x, 0.9)), 3)) and fit.model.tail.q == 0.9
    assert fit.candidate("quantiles").params["n_exceedances"] == 120
    assert "with a generalized-Pareto tail above P90: the smallest-AIC parametric fit" in fit.reason
    assert all(c.ks > fit.ks_critical for c in fit.candidates if c.kind != "quantiles")


def test_ks_distance_is_scipys_statistic_ties_included():
    from scipy.stats import kstest, lognorm

    x = np.round(np.random.default_rng(4).lognormal(6, 0.5, 300))  # rounded: many ties
    model = LogNormalLatency(p50_ms=400, p90_ms=700)
    expected = kstest(x, lognorm(model.sigma, scale=model.p50_ms).cdf).statistic
    assert math.isclose(ks_distance(x, model), expected, rel_tol=1e-9)


def test_equal_durations_are_a_constant_and_too_few_are_refused():
    fit = fit_stage("G", np.full(25, 35.0), origin="t")
    assert (fit.chosen, fit.model.kind, fit.model.ms, fit.candidates) == ("constant", "constant", 35.0, ())
    assert "all 25 durations are equal (35 ms)" in fit.reason
    with pytest.raises(InputError, match=r"m\.csv: stage 'G': 12 durations, at least 20 are needed"):
        fit_stage("G", np.arange(1.0, 13.0), origin="m.csv")
    assert fit_stage("G", np.arange(1.0, 13.0), origin="m.csv", min_n=10).n == 12


@pytest.fixture(scope="module")
def measurements(tmp_path_factory) -> Path:
    rng = np.random.default_rng(11)
    rows = [("G", float(v)) for v in np.round(rng.lognormal(math.log(590), 0.3, 400), 3)]
    rows += [("L", float(v)) for v in np.round(rng.gamma(3.0, 200.0, 400), 3)]
    rows += [("F", 2520.0)] * 30
    return _write_csv(tmp_path_factory.mktemp("m") / "m.csv", rows)


def test_cli_end_to_end_profile_figure_and_a_simulation(tmp_path, measurements, capsys):
    out = tmp_path / "profiles" / "mine.toml"
    assert main(["calibrate", str(measurements), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].split()[:3] == ["stage", "n", "chosen"]
    assert f"wrote {out} and {out.with_suffix('.png')}" in printed
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    raw = tomllib.loads(out.read_text(encoding="utf-8"))
    assert (raw["name"], raw["source"]) == ("mine", "m.csv")
    prov = raw["provenance"]
    import hashlib

    assert prov["input_sha256"] == hashlib.sha256(measurements.read_bytes()).hexdigest()
    assert {s: (p["n"], p["chosen"]) for s, p in prov["stages"].items()} == {
        "G": (400, "lognormal"), "L": (400, "gamma"), "F": (30, "constant"),
    }  # fmt: skip
    assert set(prov["stages"]["G"]["candidates"]) == {"lognormal", "gamma", "weibull", "quantiles"}
    assert "400 durations measure quantiles up to P97 only" in prov["stages"]["G"]["warning"]  # not P99
    assert {"ks", "aic", "mu", "sigma"} == set(prov["stages"]["G"]["candidates"]["lognormal"])
    assert prov["stages"]["G"]["first_timestamp"] == "2025-03-01T10:00:00Z"

    profile = load_profile(str(out))
    assert [profile.stages[s].kind for s in "GLF"] == ["lognormal", "gamma", "constant"]
    # the profile works where a built-in one does: a scenario, then a simulation
    scenario = tmp_path / "s.toml"
    scenario.write_text('[trigger]\nkind = "every_word"\n[latency]\nprofile = "profiles/mine.toml"\n', encoding="utf-8")
    rs = load_scenario(str(scenario))
    assert (rs.stages.L.kind, rs.stages.F.ms) == ("gamma", 2520.0)
    table = tmp_path / "t.csv"
    write_table(small_table(20, seed=2), table)
    run = tmp_path / "run"
    assert main(["simulate", "--table", str(table), "--scenario", str(scenario), "--out", str(run)]) == 0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["scenario"]["latency_stages"]["L"]["kind"] == "gamma"
    assert manifest["scenario"]["scenario"]["latency"]["profile"] == str(out)


def test_set_a_calibrated_profile_on_paper_rq3_changes_h_and_the_saving(tmp_path, measurements, monkeypatch):
    # paper_rq3 sets latency.L_ms = 600, which wins over its profile; `--set latency.profile`
    # changes the profile, so it drops the scenario's constant and the fitted L is simulated
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    assert main(["calibrate", str(measurements), "--out", "mine.toml", "--no-figure"]) == 0
    write_table(small_table(20, seed=2), tmp_path / "t.csv")
    runs = {}
    for name, extra in (("constant", []), ("calibrated", ["--set", "latency.profile=mine.toml"])):
        argv = ["simulate", "--table", "t.csv", "--scenario", "paper_rq3", "--out", name, *extra]
        assert main(argv) == 0
        stages = json.loads((tmp_path / name / "manifest.json").read_text())["scenario"]["latency_stages"]
        runs[name] = (stages["L"]["kind"], pd.read_csv(tmp_path / name / "results.csv").dropna(subset=["H_ms"]))
    assert (runs["constant"][0], runs["calibrated"][0]) == ("constant", "gamma")
    constant, calibrated = runs["constant"][1], runs["calibrated"][1]
    assert len(constant) == len(calibrated) > 0
    assert constant["H_ms"].mean() != calibrated["H_ms"].mean()
    assert constant["saved_ms"].mean() != calibrated["saved_ms"].mean()
    # typed with the constant too, the constant wins: overrides never drop each other
    rs = load_scenario("paper_rq3", ["latency.profile=mine.toml", "latency.L_ms=600"])
    assert (rs.stages.G.kind, rs.stages.L.kind, rs.L_ms) == ("lognormal", "constant", 600.0)


def test_same_measurements_same_profile_bytes(tmp_path, measurements):
    a, b = tmp_path / "a" / "p.toml", tmp_path / "b" / "p.toml"
    assert main(["calibrate", str(measurements), "--out", str(a), "--no-figure"]) == 0
    assert main(["calibrate", str(measurements), "--out", str(b), "--no-figure"]) == 0
    assert a.read_bytes() == b.read_bytes() and not a.with_suffix(".png").exists()


def test_jsonl_rows_and_a_forced_model(tmp_path, capsys):
    path = tmp_path / "m.jsonl"
    rng = np.random.default_rng(5)
    path.write_text("".join(json.dumps({"stage": "L", "duration_ms": float(v)}) + "\n" for v in rng.gamma(2, 100, 50)))
    out = tmp_path / "p.toml"
    assert main(["calibrate", str(path), "--out", str(out), "--model", "quantiles", "--no-figure"]) == 0
    raw = tomllib.loads(out.read_text())
    assert raw["stages"]["L"]["kind"] == "quantiles" and raw["provenance"]["input_format"] == "jsonl"
    assert raw["provenance"]["stages"]["L"]["reason"].startswith("quantiles: chosen by the user")


def test_too_few_durations_exit_1_unless_min_n_is_lowered(tmp_path, capsys):
    path = _write_csv(tmp_path / "few.csv", [("L", 100.0 + i) for i in range(12)])
    out = tmp_path / "p.toml"
    assert main(["calibrate", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert (
        err
        == f"streamrag: error: {path}: stage 'L': 12 durations, at least 20 are needed to fit a distribution (measure more, or lower --min-n knowingly)\n"
    )
    assert not out.exists()
    assert main(["calibrate", str(path), "--out", str(out), "--min-n", "10", "--no-figure"]) == 0
    assert "warning: stage 'L' fitted to only 12 durations" in capsys.readouterr().err
    assert "min_n lowered" in tomllib.loads(out.read_text())["provenance"]["stages"]["L"]["warning"]
    assert main(["calibrate", str(path), "--out", str(out), "--min-n", "2"]) == 2


def _otlp(spans: list[dict]) -> dict:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "app"}, "spans": spans}]}]}


def _span(name: str, start_ns: int, dur_ns: int, span_id: str) -> dict:
    return {"traceId": "ab" * 16, "spanId": span_id, "name": name,
            "startTimeUnixNano": str(start_ns), "endTimeUnixNano": str(start_ns + dur_ns)}  # fmt: skip


def test_opentelemetry_spans_mapped_to_stages(tmp_path, capsys):
    rng = np.random.default_rng(9)
    t0 = 1_740_000_000_000_000_000
    spans = [_span("retrieve", t0 + i * 10**9, int(v * 1e6), f"{i:016x}") for i, v in enumerate(rng.lognormal(6.5, 0.4, 60))]
    spans += [
        _span("llm.generate", t0 + i * 10**9, int(v * 1e6), f"{1000 + i:016x}") for i, v in enumerate(rng.gamma(4, 150, 60))
    ]
    spans += [_span("http GET", t0, 5_000_000, f"{5000 + i:016x}") for i in range(7)]
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(_otlp(spans), indent=2))
    out = tmp_path / "otel.toml"
    assert main(["calibrate", str(path), "--span", "retrieve=L", "--span", "llm.generate=G", "--out", str(out)]) == 0
    assert "ignored 7 spans of 1 unmapped names: http GET" in capsys.readouterr().out
    raw = tomllib.loads(out.read_text())
    assert list(raw["stages"]) == ["L", "G"]
    assert raw["provenance"]["spans"] == {"retrieve": "L", "llm.generate": "G"}
    assert raw["provenance"]["ignored_spans"] == {"http GET": 7}
    assert raw["provenance"]["stages"]["L"]["first_timestamp"] == "2025-02-19T21:20:00Z"
    meas = read_measurements(path, {"retrieve": "L"})
    expected = np.array([(int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])) / 1e6 for s in spans[:60]])
    assert np.array_equal(meas.stages["L"].durations_ms, expected)
    # one export per line (the collector's file exporter) reads the same
    lines = tmp_path / "traces.jsonl"
    lines.write_text(json.dumps(_otlp(spans[:30])) + "\n" + json.dumps(_otlp(spans[30:])) + "\n")
    assert np.array_equal(read_measurements(lines, {"retrieve": "L"}).stages["L"].durations_ms, expected)
    with pytest.raises(
        ConfigError,
        match=r"is a trace export: map spans to stages with --span NAME=STAGE, or NAME:first=G with --turn \(span names: llm\.generate \(60\), retrieve \(60\), http GET \(7\)\)",
    ):
        read_measurements(path)
    with pytest.raises(ConfigError, match=r"--span retrieval=L: no span named 'retrieval'"):
        read_measurements(path, {"retrieval": "L"})


def _bad_otlp_end(tmp_path: Path) -> Path:
    spans = [_span("retrieve", 10**18, 10**6, f"{i:016x}") for i in range(3)]
    spans[2]["endTimeUnixNano"] = spans[2]["startTimeUnixNano"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_otlp(spans), indent=2))
    return path


@pytest.mark.hostile
@pytest.mark.parametrize(
    ("content", "suffix", "expected"),
    [
        ("stage,duration_ms\nL,100\nL,-5\n", ".csv", "bad.csv:3: field 'duration_ms': must be > 0 ms, got '-5'"),
        ("stage,duration_ms\nL,100\nL,0\n", ".csv", "bad.csv:3: field 'duration_ms': must be > 0 ms, got '0'"),
        ("stage,duration_ms\nL,fast\n", ".csv", "bad.csv:2: field 'duration_ms': not a number: 'fast'"),
        ("stage,duration_ms\nL,nan\n", ".csv", "bad.csv:2: field 'duration_ms': not a finite number: 'nan'"),
        ("stage,duration_ms\n,100\n", ".csv", "bad.csv:2: field 'stage': empty"),
        ("stage,latency_s\nL,0.1\n", ".csv", "bad.csv:1: field 'duration_ms': missing column (columns: stage, latency_s; durations are in milliseconds)"),
        ('{"stage": "L", "duration_ms": 5}\n{"stage": "L", "duration_ms": "7"}\n', ".jsonl",
         "bad.jsonl:2: field 'duration_ms': expected a number of ms, got str '7'"),
        ('{"stage": "L", "duration_ms": 5}\n{"stage": "L"\n', ".jsonl", "bad.jsonl:2: not valid JSON"),
        ('{"stage": "L"}\n', ".jsonl", "bad.jsonl:1: field 'duration_ms': missing"),
        (None, ".json", "bad.json:27: field 'resourceSpans[0].scopeSpans[0].spans[2].endTimeUnixNano': span 'retrieve' does not end after its start (0 ns)"),
    ],
)  # fmt: skip
def test_hostile_input_is_exit_1_and_one_line_naming_file_line_field(tmp_path, capsys, content, suffix, expected):
    if content is None:
        path = _bad_otlp_end(tmp_path)
        args = ["--span", "retrieve=L"]
    else:
        path = tmp_path / f"bad{suffix}"
        path.write_text(content, encoding="utf-8")
        args = []
    assert main(["calibrate", str(path), "--out", str(tmp_path / "p.toml"), *args]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"streamrag: error: {tmp_path}/") and expected in err, err
    assert not (tmp_path / "p.toml").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--out", "p.json"], "a profile file name ends in .toml"),
        (["--out", "p.toml", "--span", "retrieve=L"], "--span applies to trace exports (OTLP or Jaeger JSON)"),
        (["--out", "p.toml", "--turn", "trace"], "--turn applies to trace exports (OTLP or Jaeger JSON)"),
    ],
)
def test_bad_options_are_one_line(tmp_path, measurements, capsys, args, expected):
    args = [a if not a.startswith("p.") else str(tmp_path / a) for a in args]
    assert main(["calibrate", str(measurements), *args]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err
    assert main(["calibrate", str(measurements), "--out", str(tmp_path / "p.toml"), "--span", "noequals"]) == 2
