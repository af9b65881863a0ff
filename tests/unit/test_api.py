"""The curated Python API: pinned names, lazy imports, one line per step, the CLI's numbers."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
from _inputs import record, run_cli, write_jsonl

import streamrag

API = [
    "ChunkScorer",
    "Speculator",
    "StreamragError",
    "__version__",
    "advise",
    "analyze",
    "compare_runs",
    "demo_path",
    "list_scenarios",
    "load_scenario",
    "read_run",
    "read_table",
    "simulate",
]


def test_the_public_names_are_pinned() -> None:
    assert sorted(streamrag.__all__) == API
    for name in API:
        assert getattr(streamrag, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = streamrag.nope  # type: ignore[attr-defined]


def test_the_api_sub_modules_are_attributes_imported_on_first_use() -> None:
    code = (
        "import sys, streamrag; before = 'streamrag.plots' in sys.modules; "
        "print(before, callable(streamrag.plots.plot_pareto), callable(streamrag.sweep.load_grid), 'plots' in dir(streamrag))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "True", "True"]


def test_import_streamrag_stays_light() -> None:
    code = "import sys, streamrag; print(sorted(m for m in ('numpy', 'pandas', 'pydantic', 'structlog') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


@pytest.fixture
def data(tmp_path):
    return write_jsonl(tmp_path / "d.jsonl", [record(i, query=q) for i, q in enumerate(
        ["who founded acme robotics in boston", "where was acme robotics founded by jane doe", "what robots are built in boston"]
    )])  # fmt: skip


def test_analyze_then_simulate_then_read_run_equal_the_cli(tmp_path, capsys, data) -> None:
    table = streamrag.analyze(data)
    assert isinstance(table, pd.DataFrame) and list(table["interaction_id"]) == ["q0", "q1", "q2"]
    assert table.attrs["summary"]["n_questions"] == 3
    assert [p.name for p in tmp_path.iterdir()] == ["d.jsonl"]  # no out: nothing written

    written = streamrag.analyze(data, out=tmp_path / "api", figures=False)
    assert run_cli(["analyze", data, "--out", tmp_path / "cli", "--no-cache", "--jobs", "1", "--no-figures"], capsys)[0] == 0
    for name in ("stabilization.csv", "prefixes.parquet"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    pd.testing.assert_frame_equal(written, table, check_like=False)

    csv = tmp_path / "api" / "stabilization.csv"
    results = streamrag.simulate(csv, "paper_rq3", set=["select.population=all"], out=tmp_path / "sim-api")
    argv = [
        "simulate",
        "--table",
        csv,
        "--scenario",
        "paper_rq3",
        "--out",
        tmp_path / "sim-cli",
        "--set",
        "select.population=all",
    ]
    assert run_cli(argv, capsys)[0] == 0
    for name in ("results.csv", "trace.jsonl", "summary.json"):
        assert (tmp_path / "sim-api" / name).read_bytes() == (tmp_path / "sim-cli" / name).read_bytes(), name
    assert results.attrs["summary"] == json.loads((tmp_path / "sim-cli" / "summary.json").read_text(encoding="utf-8"))

    again = streamrag.read_run(tmp_path / "sim-cli")
    assert again.attrs["kind"] == "simulation" and again.attrs["manifest"]["input"]["mode"] == "table"
    pd.testing.assert_frame_equal(again, results)
    analysis = streamrag.read_run(tmp_path / "cli")
    assert analysis.attrs["kind"] == "analysis" and list(analysis["interaction_id"]) == ["q0", "q1", "q2"]


def test_simulate_takes_a_scenario_object_and_data(tmp_path, data) -> None:
    rs = streamrag.load_scenario("paper_rq3", ["select.population=all", "latency.L_ms=1000"])
    from_data = streamrag.simulate(data, rs)
    assert list(from_data["interaction_id"]) == ["q0", "q1", "q2"]
    assert from_data.attrs["summary"]["parameters"]["scenario"]["latency"]["L_ms"] == 1000
    with pytest.raises(streamrag.StreamragError, match="set= and seed= apply to a scenario given by name"):
        streamrag.simulate(data, rs, seed=3)


def test_read_run_of_a_folder_that_is_no_run(tmp_path) -> None:
    with pytest.raises(streamrag.StreamragError, match="not a run folder"):
        streamrag.read_run(tmp_path)


def test_demo_path_is_public_and_analyze_says_which_split_it_kept() -> None:
    assert streamrag.demo_path().name == "demo_questions.jsonl" and streamrag.demo_path().is_file()
    with pytest.warns(UserWarning, match=r"kept split 0: 24 of 32 rows \(split=None keeps all\)"):
        table = streamrag.analyze(streamrag.demo_path(), ids=None)
    assert len(table) == 24 and table.attrs["selection"] == {"split": 0, "kept": 24, "of": 32}


def test_simulate_takes_the_frame_analyze_returns(tmp_path, data) -> None:
    bare = streamrag.simulate(streamrag.analyze(data), "paper_rq3", set=["select.population=all"])
    assert list(bare["interaction_id"]) == ["q0", "q1", "q2"]
    assert bare.attrs["summary"]["reflector_model"].startswith("oracle")  # no evidence without out
    table = streamrag.analyze(data, out=tmp_path / "a", figures=False)
    from_frame = streamrag.simulate(table, "paper_rq3", set=["select.population=all"])
    from_csv = streamrag.simulate(tmp_path / "a" / "stabilization.csv", "paper_rq3", set=["select.population=all"])
    pd.testing.assert_frame_equal(from_frame, from_csv)  # the evidence it wrote is used
    assert from_frame.attrs["summary"]["reflector_model"] == "heuristic on per-prefix evidence"


def test_compare_runs_pairs_the_questions(tmp_path, data, capsys) -> None:
    csv = (
        streamrag.analyze(data, out=tmp_path / "a", figures=False)
        .attrs["evidence"]
        .replace("prefixes.parquet", "stabilization.csv")
    )
    streamrag.simulate(csv, "paper_rq3", set=["select.population=all"], out=tmp_path / "A")
    streamrag.simulate(csv, "paper_rq3", set=["select.population=all", "latency.L_ms=100"], out=tmp_path / "B")
    deltas = streamrag.compare_runs(tmp_path / "A", tmp_path / "B")
    a, b = streamrag.read_run(tmp_path / "A"), streamrag.read_run(tmp_path / "B")
    assert list(deltas["interaction_id"]) == ["q0", "q1", "q2"]
    assert deltas["delta_saved_ms"].tolist() == pytest.approx((b["saved_ms"] - a["saved_ms"]).tolist())
    summary = deltas.attrs["summary"]
    assert summary["n_matched"] == 3 and summary["wilcoxon"]["n_nonzero"] == int((deltas["delta_saved_ms"] != 0).sum())
    code, out, _ = run_cli(["compare", tmp_path / "A", tmp_path / "B", "--out", tmp_path / "cmp"], capsys)
    assert code == 0 and "Wilcoxon signed-rank" in out
    assert json.loads((tmp_path / "cmp" / "comparison.json").read_text(encoding="utf-8")) == summary
    assert (tmp_path / "cmp" / "comparison.png").read_bytes().startswith(b"\x89PNG")
    from streamrag.base.columns import declared_dtypes
    from streamrag.simulator.compare.runs import RUN_COMPARISON

    per_question = RUN_COMPARISON.read_csv(tmp_path / "cmp" / "per_question.csv")
    assert declared_dtypes(per_question) == RUN_COMPARISON.dtypes(per_question.columns)
    assert str(per_question["misfire_a"].dtype) == "boolean" and str(per_question["calls_fired_b"].dtype) == "Int64"
