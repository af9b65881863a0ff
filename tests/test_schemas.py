"""Stable schemas: one Arrow schema per table kind, one dtype per column, versioned files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from streamrag.cli import main
from streamrag.simulator.results import RESULT_DTYPES, ResultRow, read_results, results_csv, results_schema
from streamrag.sweep import read_sweep
from streamrag.sweep.table import TABLE_PARQUET, column_dtype

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
    schema = pq.read_schema(busy / TABLE_PARQUET)
    assert schema.metadata[b"streamrag.table"] == b"sweep" and schema.metadata[b"streamrag.format_version"] == b"2"
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
