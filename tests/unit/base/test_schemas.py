"""Stable schemas: one Arrow schema per table kind, one dtype per column, versioned files."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from streamrag.analysis.evidence.read import read_evidence
from streamrag.analysis.table import read_table, stabilization_schema
from streamrag.api import read_run
from streamrag.base.columns import TableKind, arrow_type, declared_dtypes, to_arrow
from streamrag.base.errors import InputError, TableError
from streamrag.base.formats import FORMAT_VERSION, check_version
from streamrag.cli import main
from streamrag.commands.schema import KINDS, SCHEMAS_DIR, schema_text
from streamrag.data.stabilization_row import DTYPES
from streamrag.engine.trace import read_trace
from streamrag.simulator.results import RESULT_DTYPES, ResultRow, read_results, results_schema
from streamrag.simulator.run_output import results_csv
from streamrag.simulator.views.runtrace import run_events
from streamrag.sweep import load_grid, read_sweep
from streamrag.sweep.inputs import PreparedInputs
from streamrag.sweep.points import plan
from streamrag.sweep.table import TABLE_PARQUET, column_dtype, sweep_dtypes

GRID = """
    name = "{name}"
    kind = "simulate"
    input = "generated:12:seed=3"
    scenario = "paper_rq3"
    [base]
    "select.population" = "all"
    [output]
    figures = false
    [axes]
    "latency.L_ms" = [600]
    "trigger.kind" = [{triggers}]
"""


def _sweep(tmp_path: Path, name: str, triggers: str) -> Path:
    grid = tmp_path / f"{name}.toml"
    grid.write_text(textwrap.dedent(GRID.format(name=name, triggers=triggers)), encoding="utf-8")
    out = tmp_path / name
    assert main(["sweep", str(grid), "--out", str(out), "--jobs", "1"]) == 0
    return out


@pytest.fixture(scope="module")
def two_sweeps(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("sweeps")
    # Trigger "none" never fires: the Spearman ρ of saved ms is undefined at every point.
    return _sweep(tmp, "idle", '"none"'), _sweep(tmp, "busy", '"every_word", "none"')


def test_two_sweeps_with_an_all_undefined_column_combine_with_pyarrow_dataset(two_sweeps) -> None:
    idle, busy = two_sweeps
    assert read_sweep(idle)["spearman_H_saved.rho"].isna().all()
    assert read_sweep(busy)["spearman_H_saved.rho"].notna().any()
    combined = ds.dataset([str(idle / TABLE_PARQUET), str(busy / TABLE_PARQUET)], format="parquet").to_table()
    assert combined.num_rows == 3
    assert combined.schema.field("spearman_H_saved.rho").type == pa.float64()
    rho = combined.column("spearman_H_saved.rho").to_pylist()
    assert rho[0] is None and any(v is not None for v in rho[1:])
    # The columns both have are typed alike: by their declaration, not by their values.
    idle_schema, busy_schema = (pq.read_schema(p / TABLE_PARQUET) for p in two_sweeps)
    assert all(f.type == busy_schema.field(f.name).type for f in idle_schema)


def test_sweep_columns_have_their_declared_types(two_sweeps) -> None:
    _, busy = two_sweeps
    manifest = json.loads((busy / "manifest.json").read_text(encoding="utf-8"))
    assert next(iter(manifest)) == "format_version" and manifest["format_version"] == FORMAT_VERSION
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(manifest, json.loads((SCHEMAS_DIR / "sweep-manifest.schema.json").read_text(encoding="utf-8")))
    schema = pq.read_schema(busy / TABLE_PARQUET)
    assert (
        schema.metadata[b"streamrag.table"] == b"sweep"
        and schema.metadata[b"streamrag.format_version"] == str(FORMAT_VERSION).encode()
    )
    types = {f.name: f.type for f in schema}
    assert types["point"] == pa.int64() and types["key"] == pa.string() and types["pareto"] == pa.bool_()
    assert types["n_questions"] == pa.int64() and types["reflector_model"] == pa.string()
    assert types["L_ms"] == pa.float64() and types["kind"] == pa.string()  # a value axis: its field's type
    # The declared type of every metric and descriptor agrees with the values a point has.
    python = {"str": str, "int": int, "float": float, "bool": bool}
    for name, value in read_sweep(busy).iloc[0].items():
        if name != "kind" and not pd.isna(value):
            assert isinstance(value.item() if hasattr(value, "item") else value, python[column_dtype(str(name))]), name


def test_a_version_1_sweep_table_reads_with_declared_types(two_sweeps, tmp_path) -> None:
    idle, _ = two_sweeps
    old = tmp_path / "old"
    old.mkdir()
    # What streamrag wrote before the schema was declared: pandas' inferred types, so the
    # all-undefined ρ column is Arrow null, and no format version.
    frame = read_sweep(idle).astype({"spearman_H_saved.rho": object, "n_questions": "int64"})
    frame["spearman_H_saved.rho"] = None
    frame.to_parquet(old / TABLE_PARQUET, index=False)
    assert pq.read_schema(old / TABLE_PARQUET).field("spearman_H_saved.rho").type == pa.null()
    table = read_sweep(old)
    pd.testing.assert_frame_equal(table, read_sweep(idle))


def test_results_columns_have_one_dtype_whatever_the_values(tmp_path) -> None:
    rows = [ResultRow(interaction_id="q1", n_words=4, saved_ms=1.5, misfire=False, negative=False)]
    path = tmp_path / "results.csv"
    path.write_bytes(results_csv(rows))
    df = read_results(path)
    assert str(df["skip_reason"].dtype) == "str" and str(df["question_type"].dtype) == "str"  # nothing skipped
    assert str(df["t_star"].dtype) == "Int64" and str(df["calls_fired"].dtype) == "Int64"  # all undefined
    assert df["saved_ms"].dtype == float and str(df["misfire"].dtype) == "boolean"
    assert RESULT_DTYPES["interaction_id"] == "str" and RESULT_DTYPES["H_ms"] == "float"
    schema = results_schema()
    assert schema.field("calls_fired").type == pa.int64() and schema.field("misfire").type == pa.bool_()


# --- format versions and JSON Schemas ----------------------------------------------------


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("sim")
    table = tmp / "table.csv"
    assert main(["generate", "--questions", "15", "--table", str(table), "-q"]) == 0
    out = tmp / "run"
    assert main(["simulate", "--table", str(table), "--scenario", "paper_rq3", "--set", "select.population=all",
                 "--out", str(out), "-q"]) == 0  # fmt: skip
    return out


def _copy_run(run: Path, to: Path, edit, *, trace_header: bytes | None = None) -> Path:
    """``run`` copied to ``to``, each JSON file's data edited by ``edit``; ``trace_header``:
    the trace's first line replaced by it (``b""``: removed, as before version 3)."""
    to.mkdir()
    for f in run.iterdir():
        if f.name.endswith(".json"):
            data = json.loads(f.read_text(encoding="utf-8"))
            edit(data)
            (to / f.name).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        elif f.name == "trace.jsonl" and trace_header is not None:
            header, rest = f.read_bytes().split(b"\n", 1)
            assert json.loads(header) == {"format_version": FORMAT_VERSION, "format": "streamrag.trace"}
            (to / f.name).write_bytes(trace_header + rest)
        else:
            (to / f.name).write_bytes(f.read_bytes())
    return to


@pytest.mark.parametrize("kind", KINDS)
def test_the_shipped_json_schemas_are_what_the_models_generate(kind: str, tmp_path) -> None:
    shipped = SCHEMAS_DIR / f"{kind}.schema.json"
    assert shipped.read_text(encoding="utf-8") == schema_text(kind), f"regenerate: streamrag schema {kind} --out {shipped}"
    assert main(["schema", kind, "--out", str(tmp_path / "s.json")]) == 0
    assert (tmp_path / "s.json").read_bytes() == shipped.read_bytes()


def test_a_run_validates_against_the_shipped_schemas(sim_run) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    summary = json.loads((sim_run / "summary.json").read_text(encoding="utf-8"))
    manifest = json.loads((sim_run / "manifest.json").read_text(encoding="utf-8"))
    assert next(iter(summary)) == next(iter(manifest)) == "format_version"
    assert summary["format_version"] == manifest["format_version"] == FORMAT_VERSION
    for kind, data in (("summary", summary), ("manifest", manifest)):
        jsonschema.validate(data, json.loads((SCHEMAS_DIR / f"{kind}.schema.json").read_text(encoding="utf-8")))
    event_schema = json.loads((SCHEMAS_DIR / "trace-event.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(event_schema)
    header, *lines = (sim_run / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines and all(validator.is_valid(json.loads(line)) for line in lines)
    # The trace says its format and version itself, in its first line.
    header_schema = json.loads((SCHEMAS_DIR / "trace-header.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(header), header_schema)
    assert json.loads(header) == {"format_version": FORMAT_VERSION, "format": "streamrag.trace"}
    assert not validator.is_valid(json.loads(header)) and not jsonschema.Draft202012Validator(header_schema).is_valid(
        json.loads(lines[0])
    )
    bad = {**summary, "saved_ms": {"mean": "fast"}}
    assert not jsonschema.Draft202012Validator(json.loads((SCHEMAS_DIR / "summary.schema.json").read_text())).is_valid(bad)


def test_a_version_1_run_reads(sim_run, tmp_path) -> None:
    old = _copy_run(sim_run, tmp_path / "old", lambda d: d.pop("format_version"), trace_header=b"")
    assert "format_version" not in (old / "manifest.json").read_text(encoding="utf-8")
    table = read_run(old)
    pd.testing.assert_frame_equal(table, read_run(sim_run))
    assert table.attrs["manifest"]["seed"] == 0
    assert run_events(old) == run_events(sim_run)
    assert main(["report", str(old), "--out", str(tmp_path / "old.html"), "--no-text", "-q"]) == 0


def test_a_run_of_a_newer_version_is_a_one_line_error_naming_file_and_version(sim_run, tmp_path, capsys) -> None:
    new = _copy_run(sim_run, tmp_path / "new", lambda d: d.update(format_version=FORMAT_VERSION + 1))
    with pytest.raises(InputError, match=rf"manifest.json: written in format version {FORMAT_VERSION + 1}; .*reads version"):
        read_run(new)
    commands = (["report", str(new), "--no-text"], ["trace", str(new), "q1", "--no-text"],
                ["compare", str(sim_run), str(new), "--out", str(tmp_path / "cmp")],
                ["compare", str(new), str(sim_run.parent / "table.csv"), "--out", str(tmp_path / "pub")])  # fmt: skip
    for argv in commands:
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{new / 'manifest.json'}: written in format version {FORMAT_VERSION + 1}" in err
        assert f"install a streamrag that reads version {FORMAT_VERSION + 1}" in err


def test_a_version_2_trace_without_its_header_reads(sim_run, tmp_path, capsys) -> None:
    old = _copy_run(sim_run, tmp_path / "v2", lambda d: d.update(format_version=2), trace_header=b"")
    assert (old / "trace.jsonl").read_bytes().startswith(b'{"qid":')
    assert run_events(old) == run_events(sim_run)
    assert read_trace(old / "trace.jsonl") == read_trace(sim_run / "trace.jsonl")
    assert main(["trace", str(old), next(iter(run_events(old))), "--no-text"]) == 0
    assert main(["report", str(old), "--out", str(tmp_path / "v2.html"), "--no-text", "-q"]) == 0


def test_a_trace_of_a_newer_version_is_refused_by_its_own_header(sim_run, tmp_path, capsys) -> None:
    """The manifest reads; the trace's header alone names the version it needs."""
    newer = b'{"format_version":%d,"format":"streamrag.trace"}\n' % (FORMAT_VERSION + 1)
    new = _copy_run(sim_run, tmp_path / "new", lambda d: None, trace_header=newer)
    trace = new / "trace.jsonl"
    message = rf"{trace}: written in format version {FORMAT_VERSION + 1}; .* install a streamrag that reads version"
    with pytest.raises(InputError, match=message):
        read_trace(trace)
    with pytest.raises(InputError, match=message):
        run_events(new)
    qid = next(iter(run_events(sim_run)))
    for argv in (["report", str(new), "--no-text"], ["trace", str(new), qid, "--no-text"],
                 ["trace", str(new), "--all", "--perfetto", str(tmp_path / "p.json")]):  # fmt: skip
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{trace}: written in format version {FORMAT_VERSION + 1}" in err, argv
    other = _copy_run(sim_run, tmp_path / "other", lambda d: None, trace_header=b'{"format_version":3,"format":"x"}\n')
    with pytest.raises(InputError, match=r"trace.jsonl: line 1: format 'x' is not a streamrag trace"):
        read_trace(other / "trace.jsonl")


def test_perfetto_files_carry_their_format_version(sim_run, tmp_path) -> None:
    qid = next(iter(run_events(sim_run)))
    assert main(["trace", str(sim_run), qid, "--no-text", "--perfetto", str(tmp_path / "one.json")]) == 0
    assert main(["trace", str(sim_run), "--all", "--no-text", "--perfetto", str(tmp_path / "all.json")]) == 0
    for name in ("one.json", "all.json"):
        data = json.loads((tmp_path / name).read_text(encoding="utf-8"))
        assert data["metadata"] == {"format": "streamrag.perfetto", "format_version": FORMAT_VERSION}
        assert data["traceEvents"] and data["displayTimeUnit"] == "ms"


def test_a_table_of_a_newer_version_names_the_version(two_sweeps, tmp_path) -> None:
    idle, _ = two_sweeps
    table = pq.read_table(idle / TABLE_PARQUET)
    newer = table.replace_schema_metadata({**table.schema.metadata, b"streamrag.format_version": b"99"})
    (tmp_path / "s").mkdir()
    pq.write_table(newer, tmp_path / "s" / TABLE_PARQUET)
    with pytest.raises(
        InputError, match=rf"sweep.parquet: written in format version 99; .* reads format versions 1-{FORMAT_VERSION}"
    ):
        read_sweep(tmp_path / "s")
    evidence = tmp_path / "prefixes.parquet"
    newer = str(FORMAT_VERSION + 1).encode()
    pq.write_table(pa.table({"interaction_id": ["q"]}).replace_schema_metadata({b"streamrag.format_version": newer}), evidence)
    with pytest.raises(InputError, match=rf"prefixes.parquet: written in format version {FORMAT_VERSION + 1}"):
        read_evidence(evidence)


def test_check_version_accepts_the_readable_versions_only() -> None:
    assert check_version(None, "f.json") == 1 and check_version(2, "f.json") == 2 and check_version(b"3", "f") == 3
    for bad, message in ((0, "version 0; .*rewrite it"), (True, "not an integer"), ("two", "not an integer")):
        with pytest.raises(InputError, match=message):
            check_version(bad, "f.json")


def test_a_value_axis_has_its_settings_field_type(tmp_path) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(
        'kind = "simulate"\ninput = "generated:5:seed=1"\nscenario = "paper_rq3"\n'
        '[axes]\n"reflector.score_threshold" = [2, 3]\n"trigger.words" = [2, 3]\n',
        encoding="utf-8",
    )
    g = load_grid(grid)
    points = plan(g, PreparedInputs(g.input)).points
    assert [p.values["score_threshold"] for p in points[::2]] == [2.0, 3.0]  # a float field given integers
    assert all(type(p.values["words"]) is int for p in points)  # an int field stays int
    dtypes = sweep_dtypes(["point", "score_threshold", "words", "saved_ms.mean", "n_questions"], points, g.axes)
    assert dtypes == {"point": "int", "score_threshold": "float", "words": "int", "saved_ms.mean": "float", "n_questions": "int"}


def test_readers_give_the_declared_dtypes_and_frames_convert_to_the_schema(sim_run) -> None:
    results = read_results(sim_run / "results.csv")
    assert declared_dtypes(results) == {c: RESULT_DTYPES[c] for c in results.columns}
    assert to_arrow(results, results_schema(list(results.columns))).schema.field("skip_reason").type == pa.string()
    stabilization = read_table(sim_run.parent / "table.csv")
    assert declared_dtypes(stabilization) == {c: DTYPES[c] for c in stabilization.columns}
    table = to_arrow(stabilization, stabilization_schema(stabilization.columns))
    assert table.schema.metadata[b"streamrag.table"] == b"stabilization"
    assert table.column("t_suf").type == pa.int64() and table.column("groundable").type == pa.bool_()


def test_the_csv_of_a_sweep_reads_as_its_parquet(two_sweeps, tmp_path) -> None:
    _, busy = two_sweeps
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "sweep.csv").write_bytes((busy / "sweep.csv").read_bytes())
    pd.testing.assert_frame_equal(read_sweep(tmp_path / "csv"), read_sweep(busy))


# --- every table kind declared once ------------------------------------------------------


def _table_kinds() -> dict[str, tuple[TableKind, dict[str, str]]]:
    """Every declared table kind, with the columns a table of it may have beyond its
    declared ones (named by a rule, or typed by the sweep it came from)."""
    from streamrag.analysis.features.schema import FEATURES
    from streamrag.analysis.studies.dual_gold import DUAL
    from streamrag.analysis.studies.label_audit import AUDIT
    from streamrag.analysis.studies.query_side import QUERIES
    from streamrag.learn.train import TRIGGER_FRONTIER
    from streamrag.live.fidelity import REPLAY
    from streamrag.simulator.compare.runs import RUN_COMPARISON
    from streamrag.simulator.load.output import SESSIONS
    from streamrag.sweep.break_even import BREAK_EVEN
    from streamrag.sweep.frontier.tables import FRONTIER_POINTS, OPERATING_POINTS, OPTIMA

    by_rule = {"streaming_wait_tool_ms": "float", "baseline_wait_llm_ms": "float"}
    kinds = (SESSIONS, FRONTIER_POINTS, OPERATING_POINTS, OPTIMA, FEATURES, AUDIT, QUERIES, DUAL, RUN_COMPARISON,
             BREAK_EVEN, REPLAY, TRIGGER_FRONTIER)  # fmt: skip
    return {k.name: (k, by_rule if k is SESSIONS else {}) for k in kinds}


@pytest.mark.parametrize("name", sorted(_table_kinds()))
def test_a_table_whose_columns_are_all_undefined_keeps_its_declared_types(name: str, tmp_path) -> None:
    kind, more = _table_kinds()[name]
    declared = {**kind.columns, **more}
    extra = {"L_ms": "float"}  # a sweep axis the table is grouped by (frontier, break-even)
    columns = ["L_ms", *declared]
    frame = kind.frame([dict.fromkeys(columns), dict.fromkeys(columns)], columns, extra)
    assert declared_dtypes(frame) == {"L_ms": "float", **declared}
    arrow = to_arrow(frame, kind.schema(columns, extra))
    assert {f.name: f.type for f in arrow.schema} == {c: arrow_type(t) for c, t in {"L_ms": "float", **declared}.items()}
    assert arrow.schema.metadata[b"streamrag.table"] == name.encode() and pa.types.is_null(arrow.schema[0].type) is False
    # The CSV of it reads back in the same dtypes (never pandas' guess from empty fields).
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    pd.testing.assert_frame_equal(kind.read_csv(path, extra), frame)
    with pytest.raises(ValueError, match="has no declared type"):
        kind.schema(["not_a_column"])


def test_a_value_that_does_not_fit_its_declared_type_names_file_and_column(tmp_path) -> None:
    from streamrag.simulator.load.output import SESSIONS, read_sessions

    path = tmp_path / "sessions.csv"
    path.write_text("session_id,calls_fired\ns1,many\n", encoding="utf-8")
    with pytest.raises(TableError, match=r"sessions.csv: a column does not hold its declared type"):
        read_sessions(path)
    with pytest.raises(ValueError, match=r"table 'sessions': column 'calls_fired'"):
        SESSIONS.frame([{"calls_fired": "many"}])


@pytest.fixture(scope="module")
def load_run(sim_run) -> Path:
    out = sim_run.parent / "load"
    assert main(["simulate", "--table", str(sim_run.parent / "table.csv"), "--scenario", "load", "--out", str(out),
                 "--set", "load.arrivals.n_sessions=30", "--set", "load.warmup_s=1", "-q"]) == 0  # fmt: skip
    return out


def test_a_load_run_reads_in_its_declared_types(load_run) -> None:
    from streamrag.simulator.load.output import SESSION_COLUMNS_HEAD, SESSIONS, read_sessions

    sessions = read_sessions(load_run / "sessions.csv")
    assert tuple(sessions.columns[: len(SESSION_COLUMNS_HEAD)]) == SESSION_COLUMNS_HEAD
    assert declared_dtypes(sessions) == SESSIONS.dtypes(sessions.columns)
    assert any(c.endswith("_wait_tool_ms") for c in sessions.columns)  # named by the rule, typed by it
    assert str(sessions["session_id"].dtype) == "str" and str(sessions["counted"].dtype) == "boolean"
    assert not sessions["counted"].all()  # the warm-up's sessions are there, not counted
    table = read_run(load_run)
    assert table.attrs["kind"] == "load"
    pd.testing.assert_frame_equal(table, sessions, check_flags=False)
    assert to_arrow(sessions, SESSIONS.schema(sessions.columns)).schema.field("calls_fired").type == pa.int64()


def test_the_feature_table_reads_in_its_declared_types(demo_features_analysis) -> None:
    from streamrag.analysis.features.schema import FEATURES
    from streamrag.analysis.features.table import read_feature_table

    out = demo_features_analysis  # skipped without the entity tagger (the ner extra)
    frame = FEATURES.read_csv(out / "features.csv")
    assert declared_dtypes(frame) == dict(FEATURES.columns)
    # No ASR hypotheses: hypothesis_revised is undefined on every row, and still an integer.
    assert frame["hypothesis_revised"].isna().all() and str(frame["hypothesis_revised"].dtype) == "Int64"
    assert frame["t_suf"].isna().any() and frame["t_suf"].notna().any()
    arrow = to_arrow(frame, FEATURES.schema(frame.columns))
    assert arrow.schema.field("hypothesis_revised").type == pa.int64() and arrow.schema.field("label").type == pa.int64()
    table = read_feature_table(out / "features.csv")
    assert table.n_rows == len(frame) and table.columns["hypothesis_revised"].dtype == float


def test_a_load_run_summary_validates_against_its_shipped_schema(load_run) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    summary = json.loads((load_run / "summary.json").read_text(encoding="utf-8"))
    assert next(iter(summary)) == "format_version" and summary["mode"] == "load"
    schema = json.loads((SCHEMAS_DIR / "load-summary.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(summary, schema)
    bad = {**summary, "streaming": {**summary["streaming"], "answer_ms": {"mean": "slow"}}}
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)
    assert not jsonschema.Draft202012Validator(schema).is_valid({**summary, "surprise": 1})


def test_an_analyze_and_a_stats_summary_validate_against_their_shipped_schema(sim_run, demo_analysis, tmp_path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS_DIR / "analyze-summary.schema.json").read_text(encoding="utf-8"))
    analysis, stats = demo_analysis, tmp_path / "stats"
    assert main(["stats", str(sim_run.parent / "table.csv"), "--out", str(stats), "-q"]) == 0
    for folder in (analysis, stats):
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        assert next(iter(summary)) == "format_version"
        jsonschema.validate(summary, schema)
    assert "robustness" in json.loads((analysis / "summary.json").read_text(encoding="utf-8"))
    bad = {**summary, "rq1": {**summary["rq1"], "n_questions": "many"}}
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)
