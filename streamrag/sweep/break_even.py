"""Break-even load with its uncertainty: where speculation stops paying, per replication.

A load sweep runs each offered load under several seeds (``"seed" = [0, 1, …]`` among the
grid's axes: independent replications — each seed draws its own arrivals, questions and
latencies). For every combination of the other axes and every seed, the **crossing** of a
difference d(ρ) is the smallest load at which d turns ≤ 0, by linear interpolation between
grid points (:func:`crossing`); three differences are crossed:

- ``median_saved``: the median over sessions of the paired difference, baseline − streaming
  answer latency of the same session (``saved_ms.median``) — "the typical user stops
  gaining";
- ``p90`` / ``p99``: baseline p90 (p99) − streaming p90 (p99) answer latency
  (``answer_ms_difference.p90``) — "the tail stops gaining" (a tail has no paired
  per-session meaning, so these compare the two systems' quantiles).

Each crossing is located on two axes: the **nominal** offered load the grid set
(``offered_load``) and the **realized** utilization of the baseline's tool servers
(``baseline.resources.tool.utilization``, measured in the run: a short run's arrivals can
sit a few percent off nominal). Across replications: the mean crossing and its 95%
t-interval, mean ± t₀.₉₇₅,ₙ₋₁·s/√n, over the replications that cross inside the grid. A
replication whose difference is already ≤ 0 at the grid's lowest load crosses *below*
the grid (``n_below_grid``: the break-even is under that load, not at it) and one whose
difference stays > 0 never crosses on it (``n_not_crossed``); both are counted and left
out of the interval, so a row with either says the grid should reach further.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from streamrag.base.columns import TableKind

CROSSINGS: dict[str, tuple[str, str]] = {
    "median_saved": ("saved_ms.median", "median per-session paired difference, baseline − streaming (ms)"),
    "p90": ("answer_ms_difference.p90", "baseline p90 − streaming p90 answer latency (ms)"),
    "p99": ("answer_ms_difference.p99", "baseline p99 − streaming p99 answer latency (ms)"),
}
AXES: dict[str, str] = {"nominal": "offered_load", "realized": "baseline.resources.tool.utilization"}
REPLICATE = "seed"
CONFIDENCE = 0.95
TABLE_CSV = "break_even.csv"

BREAK_EVEN = TableKind(
    "break_even",
    {
        "crossing": "str",
        "axis": "str",
        "x": "str",
        "difference": "str",
        "meaning": "str",
        "n_replications": "int",
        "n_below_grid": "int",
        "n_not_crossed": "int",
        "mean": "float",
        "ci_low": "float",
        "ci_high": "float",
        "confidence": "float",
        "min": "float",
        "max": "float",
    },
)
"""``break_even.csv``, declared: after the other axes (typed as in the sweep table), one
row per crossing and axis."""


def crossing(x: Sequence[float], difference: Sequence[float]) -> float | None:
    """The smallest x at which ``difference`` first crosses from > 0 to ≤ 0 (linear
    interpolation between grid points, in the order of x); the first x if it starts ≤ 0;
    None if it never does on the grid. Undefined points (NaN) are left out."""
    points = sorted((float(a), float(b)) for a, b in zip(x, difference, strict=True) if not (pd.isna(a) or pd.isna(b)))
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if y0 > 0 >= y1:
            return x0 + (x1 - x0) * y0 / (y0 - y1)
    if points and points[0][1] <= 0:
        return points[0][0]
    return None


def _located(x: Sequence[float], difference: Sequence[float]) -> tuple[float | None, str]:
    """:func:`crossing` with where it fell: ``"inside"``, ``"below"`` the grid (≤ 0 at its
    first point) or ``"never"`` (> 0 throughout)."""
    points = sorted((float(a), float(b)) for a, b in zip(x, difference, strict=True) if not (pd.isna(a) or pd.isna(b)))
    if points and points[0][1] <= 0:
        return None, "below"
    found = crossing(x, difference)
    return found, "never" if found is None else "inside"


def is_load_table(table: pd.DataFrame) -> bool:
    return "offered_load" in table.columns and table["offered_load"].nunique() > 1


def _group_columns(table: pd.DataFrame) -> list[str]:
    """The other axes: what varies in the table besides load and seed (metrics excluded)."""
    candidates = ("profile", "policy", "tool_servers", "llm_servers", "trigger", "reflector", "L_ms", "delta_wps", "max_threads")
    return [c for c in candidates if c in table.columns and table[c].nunique() > 1]


def _interval(values: list[float]) -> tuple[float | None, float | None, float | None]:
    """Mean and the two-sided t-interval at :data:`CONFIDENCE` (None where undefined)."""
    if not values:
        return None, None, None
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None, None
    from scipy.stats import t

    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    half = float(t.ppf(0.5 + CONFIDENCE / 2, len(values) - 1)) * sd / math.sqrt(len(values))
    return mean, mean - half, mean + half


def break_even_rows(table: pd.DataFrame) -> list[dict[str, Any]]:
    """One row per (other axes, crossing, axis): replications, crossings, mean and interval."""
    others = _group_columns(table)
    groups = list(table.groupby(others, sort=False, dropna=False)) if others else [((), table)]
    rows: list[dict[str, Any]] = []
    for key, group in groups:
        labels = dict(zip(others, key if isinstance(key, tuple) else (key,), strict=True))
        replicates = list(group.groupby(REPLICATE, sort=True)) if REPLICATE in group.columns else [(None, group)]
        for name, (column, meaning) in CROSSINGS.items():
            if column not in group.columns:
                continue
            for axis, x_column in AXES.items():
                if x_column not in group.columns:
                    continue
                found = [
                    _located(pd.to_numeric(rep[x_column]).tolist(), pd.to_numeric(rep[column]).tolist()) for _, rep in replicates
                ]
                values = [v for v, where in found if where == "inside" and v is not None]
                mean, low, high = _interval(values)
                rows.append(
                    {
                        **labels,
                        "crossing": name,
                        "axis": axis,
                        "x": x_column,
                        "difference": column,
                        "meaning": meaning,
                        "n_replications": len(found),
                        "n_below_grid": sum(where == "below" for _, where in found),
                        "n_not_crossed": sum(where == "never" for _, where in found),
                        "mean": mean,
                        "ci_low": low,
                        "ci_high": high,
                        "confidence": CONFIDENCE,
                        "min": min(values) if values else None,
                        "max": max(values) if values else None,
                    }
                )
    return rows


def write_break_even(out_dir: str | os.PathLike[str], table: pd.DataFrame) -> list[Path]:
    """``break_even.csv`` beside the sweep table (atomically); nothing for a table without loads."""
    from streamrag.base.atomic import write_text_atomic

    if not is_load_table(table):
        return []
    from streamrag.base.columns import declared_dtypes

    others = _group_columns(table)
    frame = BREAK_EVEN.frame(break_even_rows(table), [*others, *BREAK_EVEN.columns], declared_dtypes(table[others]))
    path = Path(out_dir) / TABLE_CSV
    write_text_atomic(path, frame.to_csv(index=False, lineterminator="\n"))
    return [path]
