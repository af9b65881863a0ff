"""The anchor study's published stabilization tables load and run as they are.

Their format: the §7 columns without ``gold_density`` (and without streamrag's optional
columns), φ rounded to 4 decimals. ``stats`` and ``simulate --table`` take them and give
the numbers of the same table with exact φ.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from streamrag.analysis.stats import rq as stats
from streamrag.analysis.table import STABILIZATION_COLUMNS, read_table, write_table
from streamrag.cli import main
from streamrag.data.generated.synthetic_table import generate_stabilization_table

ANCHOR_COLUMNS = [c for c in STABILIZATION_COLUMNS if c != "gold_density"]


def _anchor_text(df: pd.DataFrame) -> str:
    """``df`` as the anchor publishes it: no gold_density, φ to 4 decimals, empty when undefined."""

    def cell(column: str, value: object) -> str:
        if pd.isna(value):
            return ""
        if column.startswith("phi_"):
            return f"{value:.4f}"
        return str(value)

    lines = [",".join(ANCHOR_COLUMNS)]
    for row in df[ANCHOR_COLUMNS].itertuples(index=False):
        lines.append(",".join(cell(c, v) for c, v in zip(ANCHOR_COLUMNS, row, strict=True)))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(exact table, the same table in the anchor's format)."""
    folder = tmp_path_factory.mktemp("anchor")
    df = generate_stabilization_table(400, seed=11)
    exact = write_table(df, folder / "exact.csv")
    anchor = folder / "anchor.csv"
    anchor.write_text(_anchor_text(df), encoding="utf-8")
    return exact, anchor


def test_rounded_copy_differs_from_the_exact_table(tables: tuple[Path, Path]) -> None:
    exact, anchor = tables
    raw = pd.read_csv(anchor)
    assert "gold_density" not in raw.columns
    assert (raw["phi_sc"] != pd.read_csv(exact)["phi_sc"]).any()  # the rounding is real
    pd.testing.assert_frame_equal(read_table(anchor), read_table(exact).drop(columns="gold_density"))


def test_stats_numbers_equal_the_exact_table(tables: tuple[Path, Path]) -> None:
    exact, anchor = tables
    params = {"n_resamples": 200}
    a = stats.summarize(read_table(anchor), params=params)
    e = stats.summarize(read_table(exact), params=params)
    for section in ("rq1", "rq2", "rq4", "anchor"):
        assert a[section] == e[section], section
    assert a["rq4"]["question_type"]["kruskal_wallis_min_n"] is not None  # the test is exercised
    density = a["gold_density"]
    assert density["specifically_grounded"] is None and density["n_density_undefined"] is None
    assert "no gold_density column" in density["undefined_reason"]
    assert density["retrieved_gold"] == e["gold_density"]["retrieved_gold"]  # needs no density
    assert "undefined_reason" not in e["gold_density"]


def test_stats_command_on_the_anchor_format(
    tables: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, anchor = tables
    assert main(["stats", str(anchor), "--out", str(tmp_path / "out"), "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["gold_density"]["specifically_grounded"] is None
    assert "gold density: undefined, the table has no gold_density column" in out
    assert (tmp_path / "out" / "phi_histograms.png").is_file()


def test_simulate_table_on_the_anchor_format(
    tables: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exact, anchor = tables
    for name, table in (("exact", exact), ("anchor", anchor)):
        argv = ["simulate", "--table", str(table), "--scenario", "paper_rq3", "--out", str(tmp_path / name)]
        assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    results = [(tmp_path / name / "results.csv").read_bytes() for name in ("exact", "anchor")]
    assert results[0] == results[1] and results[0].count(b"\n") == 401
