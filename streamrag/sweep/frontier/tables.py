"""The frontier's three tables, declared (:mod:`streamrag.sweep.frontier.operating` computes them).

Each starts with the group columns (the grid's axes other than ``policy``), typed as in
the sweep table, then its declared columns, each of one type whatever the values:
``frontier.csv`` (:data:`FRONTIER_POINTS`), ``operating_points.csv``
(:data:`OPERATING_POINTS`), ``optimum.csv`` (:data:`OPTIMA`). :func:`read_frontier`
reads the three back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from streamrag.base.columns import Dtype, TableKind

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FRONTIER_CSV",
    "FRONTIER_POINTS",
    "OPERATING_CSV",
    "OPERATING_POINTS",
    "OPTIMA",
    "OPTIMUM_CSV",
    "group_columns",
    "groups",
    "read_frontier",
]

FRONTIER_CSV = "frontier.csv"
OPERATING_CSV = "operating_points.csv"
OPTIMUM_CSV = "optimum.csv"


def _with_ci(name: str, stat: str) -> dict[str, Dtype]:
    return {f"{name}.{stat}" if stat else name: "float", f"{name}.ci_low": "float", f"{name}.ci_high": "float"}


FRONTIER_POINTS = TableKind(
    "frontier",
    {
        "policy": "str",
        "knob": "str",
        "knob_value": "float",
        "label": "str",
        "trigger": "str",
        "n_questions": "int",
        **_with_ci("extra_calls", "mean"),
        **_with_ci("saved_ms", "mean"),
        **_with_ci("misfire", "rate"),
        **_with_ci("negative", "rate"),
        "optimum_saved_ms": "float",
        **_with_ci("pct_of_optimal", ""),
        **_with_ci("regret_ms", ""),
        "bound": "bool",
        "on_frontier": "bool",
        "policy_frontier": "bool",
    },
)
"""``frontier.csv``: one row per point (after the group columns)."""

OPERATING_POINTS = TableKind(
    "operating_points",
    {
        "policy": "str",
        "at": "str",
        "level": "float",
        "label": "str",
        "knob_value": "float",
        "extra_calls.mean": "float",
        "saved_ms.mean": "float",
        "misfire.rate": "float",
        "negative.rate": "float",
        "saved_ms.ci_low": "float",
        "saved_ms.ci_high": "float",
        **_with_ci("pct_of_optimal", ""),
        "regret_ms": "float",
        "misfire.ci_low": "float",
        "misfire.ci_high": "float",
        "negative.ci_low": "float",
        "negative.ci_high": "float",
    },
)
"""``operating_points.csv``: per policy, one row per budget and per saving (``at``,
``level``); a budget's row leaves the risk CIs empty, a saving's the saving's."""

OPTIMA = TableKind(
    "optimum",
    {"interaction_id": "str", "optimum_saved_ms": "float", "optimum_fire_t": "int", "n_candidates": "int"},
)
"""``optimum.csv``: each question's offline optimum (after the group columns)."""


class FrontierTables(NamedTuple):
    points: pd.DataFrame
    operating: pd.DataFrame
    optima: pd.DataFrame


def read_frontier(folder: str | os.PathLike[str]) -> FrontierTables:
    """The three tables of a frontier folder (``--out/frontier``), every column in its
    declared dtype; the group columns typed by the sweep table beside the folder
    (``--out/sweep.parquet``), as pandas infers them without it."""
    from streamrag.sweep.table import table_dtypes

    out = Path(folder)
    extra = table_dtypes(out.parent)
    return FrontierTables(
        FRONTIER_POINTS.read_csv(out / FRONTIER_CSV, extra),
        OPERATING_POINTS.read_csv(out / OPERATING_CSV, extra),
        OPTIMA.read_csv(out / OPTIMUM_CSV, extra),
    )


def group_columns(frame: pd.DataFrame, kind: TableKind = FRONTIER_POINTS) -> list[str]:
    """The group columns of a frontier table: the ones ``kind`` does not declare."""
    return [str(c) for c in frame.columns if kind.dtype(str(c)) is None]


def groups(frame: pd.DataFrame, kind: TableKind = FRONTIER_POINTS) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """``frame`` split by its group columns (:func:`group_columns`), in order: each group's
    values by column, and its rows (one group, ``{}``, without group columns)."""
    columns = group_columns(frame, kind)
    if not columns:
        return [({}, frame)]
    return [
        (dict(zip(columns, key if isinstance(key, tuple) else (key,), strict=True)), part)
        for key, part in frame.groupby(columns, sort=False, dropna=False)
    ]
