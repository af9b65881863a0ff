"""Break-even loads per replication, with the interval across them, on both load axes."""

from __future__ import annotations

import math
import textwrap

import pandas as pd
import pytest
import scipy.stats

from streamrag.base.columns import declared_dtypes
from streamrag.cli import main
from streamrag.sweep.break_even import BREAK_EVEN, break_even_rows, crossing


def _table(crossings: dict[int, float | None]) -> pd.DataFrame:
    """A load table whose median paired difference crosses 0 at the given load per seed
    (None: never on the grid), with realized utilization = 0.9 × nominal."""
    rows = []
    for seed, at in crossings.items():
        for load in (0.2, 0.4, 0.6, 0.8):
            diff = 100.0 if at is None else 500.0 * (at - load)
            rows.append({
                "offered_load": load, "seed": seed, "policy": "always",
                "saved_ms.median": diff, "answer_ms_difference.p90": diff - 50, "answer_ms_difference.p99": diff - 80,
                "baseline.resources.tool.utilization": 0.9 * load,
            })  # fmt: skip
    return pd.DataFrame(rows)


def _row(rows: list[dict], crossing_name: str, axis: str) -> dict:
    return next(r for r in rows if r["crossing"] == crossing_name and r["axis"] == axis)


def test_the_interval_is_the_t_interval_of_the_replications_crossings() -> None:
    at = {0: 0.45, 1: 0.5, 2: 0.55, 3: 0.52, 4: None}
    rows = break_even_rows(_table(at))
    r = _row(rows, "median_saved", "nominal")
    values = [0.45, 0.5, 0.55, 0.52]
    mean = sum(values) / 4
    half = scipy.stats.t.ppf(0.975, 3) * pd.Series(values).std() / math.sqrt(4)
    assert r["n_replications"] == 5 and r["n_not_crossed"] == 1
    assert (
        r["mean"] == pytest.approx(mean)
        and r["ci_low"] == pytest.approx(mean - half)
        and r["ci_high"] == pytest.approx(mean + half)
    )
    # The same crossings on the realized axis sit at 0.9 × the nominal load.
    realized = _row(rows, "median_saved", "realized")
    assert realized["mean"] == pytest.approx(0.9 * mean)
    # The tail crosses earlier: its difference is 50 ms lower at every load.
    assert _row(rows, "p90", "nominal")["mean"] == pytest.approx(mean - 0.1)


def test_one_replication_has_no_interval_and_none_crossing_has_no_mean() -> None:
    assert _row(break_even_rows(_table({0: 0.5})), "median_saved", "nominal")["ci_low"] is None
    r = _row(break_even_rows(_table({0: None, 1: None})), "median_saved", "nominal")
    assert r["mean"] is None and r["n_not_crossed"] == 2


def test_a_crossing_below_the_grid_is_counted_not_averaged() -> None:
    # Seeds 0 and 1 cross inside; seed 2's difference is already negative at the lowest load.
    r = _row(break_even_rows(_table({0: 0.5, 1: 0.6, 2: 0.1})), "median_saved", "nominal")
    assert r["n_below_grid"] == 1 and r["n_not_crossed"] == 0 and r["mean"] == pytest.approx(0.55)


def test_crossing_is_linear_between_grid_points() -> None:
    assert crossing([0.2, 0.4], [100.0, -100.0]) == pytest.approx(0.3)


def test_a_replicated_load_sweep_writes_break_even_csv(tmp_path) -> None:
    grid = tmp_path / "load.toml"
    grid.write_text(
        textwrap.dedent("""
        name = "replicated-load"
        kind = "simulate"
        input = "generated:40:seed=2"
        scenario = "load"
        [base]
        "load.arrivals.n_sessions" = 120
        "load.warmup_s" = 0.0
        "load.reference_sessions" = 20
        [axes]
        "load.arrivals.offered_load" = [0.1, 0.9]
        "seed" = [0, 1]
        """),
        encoding="utf-8",
    )
    out = tmp_path / "run"
    assert main(["sweep", str(grid), "--out", str(out)]) == 0
    table = BREAK_EVEN.read_csv(out / "break_even.csv")
    assert declared_dtypes(table) == BREAK_EVEN.dtypes(table.columns)
    assert set(table["crossing"]) == {"median_saved", "p90", "p99"} and set(table["axis"]) == {"nominal", "realized"}
    assert (table["n_replications"] == 2).all()
    assert (out / "figures" / "load.png").exists()
