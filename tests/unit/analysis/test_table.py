"""The stabilization table: reading with row-by-row validation, atomic writing."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from stats_tables import HEADER, ROWS, TABLE, write

from streamrag.analysis.table import (
    ABSENT_COLUMNS,
    OPTIONAL_COLUMNS,
    PHI_TOLERANCE,
    STABILIZATION_COLUMNS,
    read_table,
    write_table,
)
from streamrag.base.errors import DataFileError, TableError

CORE_HEADER = ",".join(STABILIZATION_COLUMNS)
# A valid row of the core columns: n = 3, t_sc = 2 (phi 2/3), t_suf = 1 (phi 1/3).
GOOD = "a,finance,simple,static,3,7,True,True,2,0.6666666666666666,1,0.3333333333333333,0,0.25"


def _core(*rows: str) -> str:
    return "\n".join([CORE_HEADER, *rows]) + "\n"


def _replace(row: str, column: str, value: str) -> str:
    fields = row.split(",")
    fields[STABILIZATION_COLUMNS.index(column)] = value
    return ",".join(fields)


def test_columns_contract():
    assert STABILIZATION_COLUMNS == (
        "interaction_id", "domain", "question_type", "static_or_dynamic", "n_words", "n_passages",
        "groundable", "retrieved_gold", "t_sc", "phi_sc", "t_suf", "phi_suf", "volatility", "gold_density",
    )  # fmt: skip
    assert OPTIONAL_COLUMNS == (
        "skip_reason", "t_anchor", "n_gold", "t_pivot", "t_entity", "no_overlap", "n_pages_unread", "n_chunks_cut",
        "t_sc_ms", "t_suf_ms", "revised_share", "n_revisions", "n_hypotheses", "t_sc_words", "t_suf_words", "t_entity_full",
    )  # fmt: skip
    assert ABSENT_COLUMNS == ("gold_density",)


def test_read_types_and_values(tmp_path):
    df = read_table(write(tmp_path))
    assert list(df.columns) == [*STABILIZATION_COLUMNS, "skip_reason", "t_anchor"]
    assert len(df) == 9  # skipped rows are kept (and excluded later by the statistics)
    assert str(df["t_suf"].dtype) == "Int64" and str(df["retrieved_gold"].dtype) == "boolean"
    assert df["phi_sc"].dtype == float
    q6 = df.iloc[5]
    assert q6["t_suf"] is pd.NA and math.isnan(q6["phi_suf"])  # undefined, not 0
    assert q6["groundable"] and not q6["retrieved_gold"]
    assert df.iloc[6]["t_anchor"] is pd.NA
    assert df.iloc[8]["skip_reason"] == "empty query" and df.iloc[8]["n_words"] is pd.NA
    assert pd.isna(df.iloc[0]["skip_reason"]) and str(df["skip_reason"].dtype) == "str"  # text: pandas' str dtype
    assert df["t_sc"].tolist() == [5, 10, 2, 5, 4, 3, 3, 6, pd.NA]


def test_optional_columns_absent_and_extra_columns_kept(tmp_path):
    df = read_table(write(tmp_path, "\n".join([CORE_HEADER + ",model", GOOD + ",bm25"]) + "\n"))
    assert list(df.columns) == [*STABILIZATION_COLUMNS, "model"]
    assert df.iloc[0]["model"] == "bm25"


def test_lenient_spellings(tmp_path):
    # BOM, CRLF, booleans true/1, an integer written as a float (pandas does that for
    # integer columns with NaN), blank trailing lines.
    row = _replace(_replace(_replace(GOOD, "groundable", "true"), "retrieved_gold", "1"), "t_suf", "1.0")
    text = "\ufeff" + CORE_HEADER + "\r\n" + row + "\r\n" + _replace(row, "interaction_id", "b") + "\r\n\r\n"
    df = read_table(write(tmp_path, text))
    assert df["t_suf"].tolist() == [1, 1] and df["groundable"].tolist() == [True, True]
    # phi may differ from t/n by up to 5e-5 (rounded to 4 decimals); the frame holds t/n
    df = read_table(write(tmp_path, _core(_replace(_replace(GOOD, "phi_suf", "0.3333"), "phi_sc", "0.6667"))))
    assert (df.iloc[0]["phi_suf"], df.iloc[0]["phi_sc"]) == (1 / 3, 2 / 3)


def test_anchor_format_without_gold_density_and_rounded_phi(tmp_path):
    # The anchor study's published tables: no gold_density, no optional columns, φ to 4 decimals.
    header = ",".join(c for c in STABILIZATION_COLUMNS if c != "gold_density")
    rows = [
        "a,finance,simple,static,3,7,True,True,2,0.6667,1,0.3333,0",
        "b,music,set,static,7,9,True,False,5,0.7143,,,1",
        "c,movie,simple,static,32,9,True,True,3,0.0938,1,0.0312,0",  # 3/32 = .09375, 1/32 = .03125: ties
        "d,movie,simple,static,32,9,True,True,3,0.0937,1,0.0313,0",  # rounded the other way
    ]
    df = read_table(write(tmp_path, "\n".join([header, *rows]) + "\n"))
    assert list(df.columns) == [c for c in STABILIZATION_COLUMNS if c != "gold_density"]
    assert df["phi_sc"].tolist() == [2 / 3, 5 / 7, 3 / 32, 3 / 32]
    assert df["phi_suf"].tolist()[::2] == [1 / 3, 1 / 32] and math.isnan(df["phi_suf"][1])
    assert write_table(df.assign(gold_density=float("nan")), tmp_path / "w.csv").read_text().splitlines()[1] == (
        "a,finance,simple,static,3,7,True,True,2,0.6666666666666666,1,0.3333333333333333,0,"
    )


@pytest.mark.parametrize(("value", "ok"), [(1 / 3 + PHI_TOLERANCE, True), ("0.33338", True), ("0.33339", False), ("0.3334", False),
                                           (1 / 3 - 0.000051, False), ("0.333", False)])  # fmt: skip
def test_phi_tolerance_is_half_the_fourth_decimal(tmp_path, value, ok):
    path = write(tmp_path, _core(_replace(GOOD, "phi_suf", str(value))))
    if ok:
        assert read_table(path).iloc[0]["phi_suf"] == 1 / 3
    else:
        with pytest.raises(TableError, match=r"t\.csv:2: column 'phi_suf': .* is inconsistent with t_suf/n_words = 1/3 "):
            read_table(path)


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("t_suf", "abc", "t.csv:3: column 't_suf': 'abc' is not an integer"),
        ("t_sc", "2.5", "t.csv:3: column 't_sc': '2.5' is not an integer"),
        ("t_sc", "0", "t.csv:3: column 't_sc': 0 is outside 1..n_words = 1..3"),
        ("t_suf", "4", "t.csv:3: column 't_suf': 4 is outside 1..n_words = 1..3"),
        ("n_words", "", "t.csv:3: column 'n_words': empty, but a value is required"),
        ("n_words", "0", "t.csv:3: column 'n_words': 0 is not a positive word count"),
        ("phi_sc", "0.67", "t.csv:3: column 'phi_sc': 0.67 is inconsistent with t_sc/n_words = 2/3"),
        ("phi_sc", "nan", "t.csv:3: column 'phi_sc': 'nan' is not a finite number"),
        ("phi_sc", "x", "t.csv:3: column 'phi_sc': 'x' is not a number"),
        ("t_suf", "", "t.csv:3: column 't_suf': empty, but retrieved_gold is True"),
        ("phi_suf", "", "t.csv:3: column 'phi_suf': empty, but t_suf is 1"),
        ("groundable", "yes", "t.csv:3: column 'groundable': 'yes' is not a boolean"),
        ("groundable", "False", "t.csv:3: column 'retrieved_gold': True, but groundable is False"),
        ("volatility", "-1", "t.csv:3: column 'volatility': -1 is outside 0..n_words-1 = 0..2"),
        ("gold_density", "1.5", "t.csv:3: column 'gold_density': 1.5 is outside [0, 1]"),
        ("interaction_id", "", "t.csv:3: column 'interaction_id': empty, but a value is required"),
    ],
)
def test_bad_value_names_file_line_and_column(tmp_path, column, value, message):
    path = write(tmp_path, _core(_replace(GOOD, "interaction_id", "ok"), _replace(GOOD, column, value)))
    with pytest.raises(TableError) as exc:
        read_table(path)
    assert str(exc.value).startswith(f"{tmp_path / message}")
    assert "\n" not in str(exc.value)


def test_t_suf_without_retrieved_gold(tmp_path):
    row = _replace(GOOD, "retrieved_gold", "False")
    with pytest.raises(TableError, match=r"t\.csv:2: column 't_suf': 1, but retrieved_gold is False"):
        read_table(write(tmp_path, _core(row)))
    row = _replace(_replace(row, "t_suf", ""), "phi_suf", "0.5")
    with pytest.raises(TableError, match=r"t\.csv:2: column 'phi_suf': 0\.5, but t_suf is empty"):
        read_table(write(tmp_path, _core(row)))


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("t_anchor", "9", r"column 't_anchor': 9 is outside 1\.\.n_words = 1\.\.3"),
        ("t_pivot", "0", r"column 't_pivot': 0 is outside 1\.\.n_words = 1\.\.3"),
        ("n_gold", "8", r"column 'n_gold': 8 is more than n_passages = 7"),
        ("n_gold", "-1", r"column 'n_gold': -1 is negative"),
        ("n_gold", "x", r"column 'n_gold': 'x' is not an integer"),
    ],
)
def test_optional_columns_checked(tmp_path, column, value, message):
    text = "\n".join([f"{CORE_HEADER},{column}", f"{GOOD},{value}"]) + "\n"
    with pytest.raises(TableError, match=rf"t\.csv:2: {message}"):
        read_table(write(tmp_path, text))


def test_optional_columns_typed(tmp_path):
    text = "\n".join([CORE_HEADER + ",t_pivot,n_gold", GOOD + ",2,7"]) + "\n"
    df = read_table(write(tmp_path, text))
    assert str(df["t_pivot"].dtype) == str(df["n_gold"].dtype) == "Int64"
    assert (df["t_pivot"][0], df["n_gold"][0]) == (2, 7)


def test_missing_column(tmp_path):
    header = CORE_HEADER.replace(",phi_suf", "")
    with pytest.raises(TableError, match=r"t\.csv:1: missing column 'phi_suf'$"):
        read_table(write(tmp_path, header + "\n"))
    header = CORE_HEADER.replace(",phi_suf", "").replace(",gold_density", "")
    with pytest.raises(TableError, match=r"t\.csv:1: missing column 'phi_suf'$"):  # gold_density may be absent
        read_table(write(tmp_path, header + "\n"))


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("", r"t\.csv:1: empty file"),
        (CORE_HEADER + ",t_sc\n", r"t\.csv:1: duplicate column 't_sc'"),
        (_core(GOOD, GOOD), r"t\.csv:3: column 'interaction_id': 'a' repeats line 2"),
        (_core(GOOD, "a,b"), r"t\.csv:3: expected 14 fields as in the header, found 2"),
    ],
)
def test_bad_structure(tmp_path, text, pattern):
    with pytest.raises(TableError, match=pattern):
        read_table(write(tmp_path, text))


def test_missing_file_is_a_data_file_error(tmp_path):
    with pytest.raises(DataFileError, match="no such file"):
        read_table(tmp_path / "absent.csv")


def test_skipped_rows_are_only_type_checked(tmp_path):
    header = CORE_HEADER + ",skip_reason"
    empty = "s" + "," * len(STABILIZATION_COLUMNS) + "no pages"
    df = read_table(write(tmp_path, "\n".join([header, empty]) + "\n"))
    assert df.iloc[0]["skip_reason"] == "no pages"
    bad = "s,,,,x" + "," * (len(STABILIZATION_COLUMNS) - 4) + "no pages"
    with pytest.raises(TableError, match=r"t\.csv:2: column 'n_words': 'x' is not an integer"):
        read_table(write(tmp_path, "\n".join([header, bad]) + "\n"))


def test_write_round_trip_is_byte_identical(tmp_path):
    src = write(tmp_path)
    out = tmp_path / "out.csv"
    assert write_table(read_table(src), out) == out
    assert out.read_text(encoding="utf-8") == TABLE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "t.csv"]  # no temporary file left


def test_write_orders_columns_and_formats_values(tmp_path):
    df = pd.DataFrame(
        {
            "extra": ["x"],
            **{c: [None] for c in STABILIZATION_COLUMNS},
        }
    )
    df["interaction_id"] = ["a"]
    df["groundable"] = [True]
    df["retrieved_gold"] = pd.array([False], dtype="boolean")
    df["n_words"] = [3]
    df["t_sc"] = pd.array([2], dtype="Int64")
    df["phi_sc"] = [2 / 3]
    df["t_suf"] = pd.array([pd.NA], dtype="Int64")
    df["phi_suf"] = [float("nan")]
    out = write_table(df, tmp_path / "w.csv")
    header, row = out.read_text(encoding="utf-8").splitlines()
    assert header == CORE_HEADER + ",extra"
    assert row == "a,,,,3,,True,False,2,0.6666666666666666,,,,,x"


def test_write_requires_contract_columns(tmp_path):
    with pytest.raises(ValueError, match="phi_sc"):
        write_table(pd.DataFrame({c: [] for c in STABILIZATION_COLUMNS if c != "phi_sc"}), tmp_path / "w.csv")
    assert not list(tmp_path.iterdir())


def test_fixture_rows_match_header():
    assert all(len(r.split(",")) == len(HEADER.split(",")) for r in ROWS)
