"""Each row schema is declared once; the column lists, readers and flags follow from it."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io

import pytest

from streamrag.analysis.stats.params import DEFAULT_PARAMS, StatsParams, add_arguments, resolve_params
from streamrag.analysis.table import read_table_records
from streamrag.base.errors import ConfigError
from streamrag.data.stabilization_row import (
    ABSENT_COLUMNS,
    COLUMNS,
    OPTIONAL_COLUMNS,
    REQUIRED_VALUES,
    STABILIZATION_COLUMNS,
    columns_of,
    skipped_row,
)
from streamrag.simulator.results import BOOL_COLUMNS, NUMERIC_COLUMNS, RESULT_COLUMNS, ResultRow
from streamrag.simulator.run_output import results_csv, summarize
from streamrag.simulator.turn_parts import ENDPOINT_COLUMNS


def test_stabilization_columns_are_the_declared_fields() -> None:
    assert (*STABILIZATION_COLUMNS, *[c for c in COLUMNS if c not in STABILIZATION_COLUMNS]) == tuple(COLUMNS)
    assert set(OPTIONAL_COLUMNS) == set(COLUMNS) - set(STABILIZATION_COLUMNS)
    assert set(ABSENT_COLUMNS) <= set(STABILIZATION_COLUMNS)
    assert set(REQUIRED_VALUES) <= set(STABILIZATION_COLUMNS)
    by_type = [c for dtype in ("str", "int", "float", "bool") for c in columns_of(dtype)]  # type: ignore[arg-type]
    assert sorted(by_type) == sorted(COLUMNS)  # every column has exactly one type


def test_skipped_row_reads_back_as_skipped(tmp_path) -> None:
    row = skipped_row("q1", "no_chunks", {"domain": "music", "n_words": 7})
    assert row["domain"] == "music" and row["n_words"] is None  # values are undefined, metadata kept
    assert all(row[c] is None for c in COLUMNS if c in row and COLUMNS[c].dtype != "str")
    path = tmp_path / "t.csv"
    columns = [c for c in COLUMNS if c in row]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        w.writerow(["" if row[c] is None else row[c] for c in columns])
    (read,), header = read_table_records(path)
    assert read["skip_reason"] == "no_chunks" and read["t_sc"] is None
    assert sorted(header) == sorted(columns)


def test_result_columns_are_the_row_fields() -> None:  # call_outcomes: summary only
    optional = {"calls_on_revised", "rankings", "ranking_busy_ms", "unsafe_calls", "call_outcomes", *ENDPOINT_COLUMNS}
    assert tuple(f.name for f in dataclasses.fields(ResultRow) if f.name not in optional) == RESULT_COLUMNS
    assert set(NUMERIC_COLUMNS) | set(BOOL_COLUMNS) < set(RESULT_COLUMNS)
    assert not set(NUMERIC_COLUMNS) & set(BOOL_COLUMNS)
    assert NUMERIC_COLUMNS.index("H_prime_ms") == NUMERIC_COLUMNS.index("H_G_ms") + 1  # summarized beside the bounds
    row = ResultRow(interaction_id="q", n_words=3, saved_ms=1.5, misfire=True, negative=False)
    assert results_csv([row]).decode().splitlines()[0].split(",") == list(RESULT_COLUMNS)
    summary = summarize([row], {})
    assert [k for k in summary if k in NUMERIC_COLUMNS or k in BOOL_COLUMNS] == [*NUMERIC_COLUMNS, *BOOL_COLUMNS]
    assert summary["misfire"] == {"n": 1, "rate": 1.0}


def test_stats_flags_and_defaults_come_from_the_declaration() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = vars(parser.parse_args([]))
    assert args == DEFAULT_PARAMS == {f: getattr(StatsParams(), f) for f in StatsParams.__dataclass_fields__}
    assert resolve_params({}) == DEFAULT_PARAMS
    assert vars(parser.parse_args(["--L-ms", "300", "--bootstrap", "7"]))["n_resamples"] == 7
    out = io.StringIO()
    parser.print_help(out)
    assert "--density-cap CAP" in out.getvalue() and "10,000" in out.getvalue()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"L_ms": 0}, "L_ms: 0 must be a finite number > 0"),
        ({"theta": -1}, "theta: -1 must be a finite number ≥ 0"),
        ({"density_cap": 1.5}, r"density_cap: 1.5 must be in \[0, 1\]"),
        ({"n_resamples": 0}, "n_resamples: 0 must be an integer ≥ 1"),
        ({"seed": 1.5}, "seed: 1.5 must be an integer ≥ 0"),
        ({"bogus": 1}, "unknown parameter"),
    ],
)
def test_stats_params_are_validated(params, message) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_params(params)
