"""The sweep table: one tidy row per point, as CSV and Parquet.

Columns, in order: ``point`` (index in the grid's expansion), ``key``, one column per
axis (its value, or a variant's label), the kind's descriptor columns not already given
by an axis (simulate: ``trigger``, ``trigger_kind``, ``reflector``, ``L_ms``, ``G_ms``,
``F_ms``, ``delta_wps``, ``max_threads``, ``profile``, ``population``, ``seed``;
streamable: ``L_ms``, ``delta_wps``, ``theta``, ``G_ms``; analyze: ``k``,
``grounding``), then the metrics of :mod:`streamrag.sweep.work`. Simulate sweeps whose
``trigger`` column varies get ``pareto``: the point is on the front of mean saved ms
(higher is better) versus wasted calls per question (lower is better) among the points
that share every other axis value; ``oracle`` points (they know t*) are a bound, never
on the front. Skipped points have no row. Undefined values are empty (CSV) / null.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from streamrag.sweep.grid import Axis
    from streamrag.sweep.points import Point

TABLE_CSV = "sweep.csv"
TABLE_PARQUET = "sweep.parquet"


def pareto_front(
    df: pd.DataFrame,
    *,
    x: str = "wasted_calls.mean",
    y: str = "saved_ms.mean",
    by: Sequence[str] = (),
) -> pd.Series:
    """Boolean Series: the row is not dominated within its ``by`` group.

    A row is dominated when another row of the group has ``x' ≤ x`` and ``y' ≥ y`` with
    one of them strict (low x and high y are better). Rows with an undefined x or y are
    never on the front.
    """
    import numpy as np
    import pandas as pd

    out = pd.Series(False, index=df.index, name="pareto")
    groups = df.groupby(list(by), sort=False, dropna=False) if by else [((), df)]
    for _, group in groups:
        xs = pd.to_numeric(group[x], errors="coerce").to_numpy(dtype=float)
        ys = pd.to_numeric(group[y], errors="coerce").to_numpy(dtype=float)
        ok = ~(np.isnan(xs) | np.isnan(ys))
        for i, idx in enumerate(group.index):
            if not ok[i]:
                continue
            dominated = ok & (xs <= xs[i]) & (ys >= ys[i]) & ((xs < xs[i]) | (ys > ys[i]))
            out.at[idx] = not dominated.any()
    return out


def _sets_trigger(axis: Axis) -> bool:
    return axis.name == "trigger" or any(path.startswith("trigger.") for v in axis.values for path, _ in v.overrides)


def build_table(points: Sequence[Point], metrics: Mapping[str, dict[str, Any]], axes: Sequence[Axis]) -> pd.DataFrame:
    """The sweep table from the points (grid order), each point's metrics by key, and the
    grid's axes (the Pareto front compares triggers among points equal on the others)."""
    import pandas as pd

    rows = []
    for p in points:
        row: dict[str, Any] = {"point": p.index, "key": p.key}
        row.update(p.values)
        for name, value in p.descriptors.items():
            row.setdefault(name, value)
        row.update(metrics[p.key])
        rows.append(row)
    df = pd.DataFrame(rows)
    if "trigger" in df.columns and "saved_ms.mean" in df.columns and df["trigger"].nunique() > 1:
        others = [a.name for a in axes if not _sets_trigger(a)]
        # The oracle trigger knows t*: it is a bound to compare with, not a competitor.
        contenders = df["trigger_kind"] != "oracle" if "trigger_kind" in df.columns else df["trigger"].notna()
        df["pareto"] = pareto_front(df[contenders], by=others).reindex(df.index, fill_value=False)
    return df


def write_table(df: pd.DataFrame, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``sweep.csv`` and ``sweep.parquet`` into ``out_dir``, atomically."""
    from streamrag.base.atomic import atomic_path

    out = Path(out_dir)
    csv_path, parquet_path = out / TABLE_CSV, out / TABLE_PARQUET
    with atomic_path(csv_path) as tmp:
        df.to_csv(tmp, index=False, lineterminator="\n")
    with atomic_path(parquet_path) as tmp:
        df.to_parquet(tmp, index=False, engine="pyarrow")
    return [csv_path, parquet_path]


def read_sweep(run_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """The sweep table of a finished run folder (Parquet, else CSV)."""
    import pandas as pd

    from streamrag.base.errors import InputError

    run = Path(run_dir)
    if (run / TABLE_PARQUET).is_file():
        return pd.read_parquet(run / TABLE_PARQUET)
    if (run / TABLE_CSV).is_file():
        return pd.read_csv(run / TABLE_CSV)
    raise InputError(f"{run}: no {TABLE_PARQUET} or {TABLE_CSV}: not a finished sweep folder (resume it with --resume)")


def read_point_results(run_dir: str | os.PathLike[str], key: str) -> pd.DataFrame:
    """A simulate point's per-question ``results.csv`` (one row per question)."""
    import pandas as pd

    from streamrag.base.errors import InputError

    path = Path(run_dir) / "points" / key / "results.csv"
    if not path.is_file():
        raise InputError(f"{path}: no such file (is {key!r} a simulate point of this sweep?)")
    return pd.read_csv(path, keep_default_na=False, na_values=[""])
