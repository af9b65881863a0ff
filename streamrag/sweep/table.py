"""The sweep table: one tidy row per point, as CSV and Parquet.

Columns, in order: ``point`` (index in the grid's expansion), ``key``, one column per
axis (its value, or a variant's label), the kind's descriptor columns not already given
by an axis (simulate: ``trigger``, ``trigger_kind``, ``reflector``, ``L_ms``, ``G_ms``,
``F_ms``, ``delta_wps``, ``max_threads``, ``profile``, ``population``, ``seed``;
streamable: ``L_ms``, ``delta_wps``, ``theta``, ``G_ms``; analyze: ``k``,
``grounding``), then the metrics of :mod:`streamrag.sweep.work`. Simulate sweeps whose
``trigger`` column varies get ``pareto``: the point is on the front of mean saved ms
(higher is better) versus its cost (lower is better: wasted calls per question, or under
load the tool's time spent on wasted calls, :data:`FRONT_COSTS`) among the points that
share every other axis value; ``oracle`` points (they know t*) are a bound, never
on the front. Skipped points have no row. Undefined values are empty (CSV) / null.

Column types never depend on the values (:func:`sweep_dtypes`): ``point`` an integer,
``key`` text, ``pareto`` a boolean, descriptors as :data:`~streamrag.sweep.point_kinds.DESCRIPTOR_DTYPES`
declares them, metrics by :func:`~streamrag.sweep.work.metric_dtype`, a variants axis
text (its labels) and a value axis the type of its settings field (the resolved values:
``L_ms = 600`` is 600.0). ``sweep.parquet`` has exactly that Arrow schema, so two sweeps
combine with ``pyarrow.dataset`` even where one has a metric undefined at every point.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamrag.base.columns import Dtype

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

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


FRONT_COSTS = ("wasted_calls.mean", "streaming.wasted_share.tool")
"""The cost axis of the Pareto front (lower is better), the first a table has: wasted calls
per question (a replay on unlimited capacity), or the share of the tool's busy time spent
on wasted calls (a load run)."""


def front_cost(df: pd.DataFrame) -> str | None:
    """The table's cost column for the Pareto front (:data:`FRONT_COSTS`), None if none."""
    return next((c for c in FRONT_COSTS if c in df.columns), None)


def _sets_trigger(axis: Axis) -> bool:
    return axis.name == "trigger" or any(path.startswith("trigger.") for v in axis.values for path, _ in v.overrides)


FIXED_DTYPES: dict[str, Dtype] = {"point": "int", "key": "str", "pareto": "bool"}


def column_dtype(name: str) -> Dtype:
    """The type of a sweep column that is not an axis (see the module docstring)."""
    from streamrag.sweep.point_kinds import DESCRIPTOR_DTYPES
    from streamrag.sweep.work import metric_dtype

    return FIXED_DTYPES.get(name) or DESCRIPTOR_DTYPES.get(name) or metric_dtype(name)


def _value_dtype(values: Sequence[Any]) -> Dtype:
    """A value axis's type from its (resolved) values: the settings field's type."""
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "float"
    return "str"


def sweep_dtypes(columns: Sequence[str], points: Sequence[Point], axes: Sequence[Axis]) -> dict[str, Dtype]:
    """Every column's type (module docstring): axes from the grid, the rest by name."""
    by_axis = {a.name: a for a in axes}
    out: dict[str, Dtype] = {}
    for name in columns:
        axis = by_axis.get(name)
        if axis is None or name in FIXED_DTYPES:
            out[name] = column_dtype(name)
        elif axis.path is None:
            out[name] = "str"
        else:
            from streamrag.sweep.point_kinds import DESCRIPTOR_DTYPES

            out[name] = DESCRIPTOR_DTYPES.get(name) or _value_dtype([p.values[name] for p in points])
    return out


def build_table(points: Sequence[Point], metrics: Mapping[str, dict[str, Any]], axes: Sequence[Axis]) -> pd.DataFrame:
    """The sweep table from the points (grid order), each point's metrics by key, and the
    grid's axes (the Pareto front compares triggers among points equal on the others),
    every column in its declared dtype (:func:`sweep_dtypes`)."""
    import pandas as pd

    from streamrag.base.columns import typed_frame

    rows = []
    for p in points:
        row: dict[str, Any] = {"point": p.index, "key": p.key}
        row.update(p.values)
        for name, value in p.descriptors.items():
            row.setdefault(name, value)
        row.update(metrics[p.key])
        rows.append(row)
    df = pd.DataFrame(rows)
    dtypes = sweep_dtypes(list(df.columns), points, axes)
    for name, dtype in dtypes.items():  # a text axis of mixed values shows each as written
        if dtype == "str" and df[name].dtype == object:
            df[name] = [None if v is None else str(v) for v in df[name]]
    df = typed_frame(df, dtypes)
    cost = front_cost(df)
    if "trigger" in df.columns and "saved_ms.mean" in df.columns and cost is not None and df["trigger"].nunique() > 1:
        others = [a.name for a in axes if not _sets_trigger(a)]
        # The oracle trigger knows t*: it is a bound to compare with, not a competitor.
        contenders = df["trigger_kind"] != "oracle" if "trigger_kind" in df.columns else df["trigger"].notna()
        front = pareto_front(df[contenders], x=cost, by=others)
        df["pareto"] = front.reindex(df.index, fill_value=False).astype("boolean")
    return df


def sweep_schema(df: pd.DataFrame) -> pa.Schema:
    """The Arrow schema of a sweep table built by :func:`build_table` (its declared types)."""
    from streamrag.base.columns import arrow_schema, declared_dtypes

    return arrow_schema(declared_dtypes(df), "sweep")


def write_table(df: pd.DataFrame, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``sweep.csv`` and ``sweep.parquet`` (Arrow schema :func:`sweep_schema`) into
    ``out_dir``, atomically."""
    from streamrag.base.atomic import atomic_path
    from streamrag.base.columns import write_parquet

    out = Path(out_dir)
    csv_path, parquet_path = out / TABLE_CSV, out / TABLE_PARQUET
    schema = sweep_schema(df)
    with atomic_path(csv_path) as tmp:
        df.to_csv(tmp, index=False, lineterminator="\n")
    write_parquet(df, parquet_path, schema)
    return [csv_path, parquet_path]


def read_sweep(run_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """The sweep table of a finished run folder (Parquet, else CSV), every column in its
    declared dtype. A version-1 table (written before the schema was declared) reads
    too: its all-undefined columns, of Arrow type ``null``, take their declared type."""
    import pyarrow.lib
    import pyarrow.parquet as pq

    from streamrag.base.columns import read_csv, read_parquet
    from streamrag.base.errors import InputError, TableError

    run = Path(run_dir)
    if (run / TABLE_PARQUET).is_file():
        path = run / TABLE_PARQUET
        try:
            schema = pq.read_schema(path)
        except (OSError, pyarrow.lib.ArrowException) as exc:
            raise TableError(f"{path}: cannot read the sweep table: {exc}") from None
        return read_parquet(path, _known_dtypes(schema.names, schema))
    if (run / TABLE_CSV).is_file():
        import pandas as pd

        path = run / TABLE_CSV
        header = list(pd.read_csv(path, nrows=0).columns)
        return read_csv(path, _known_dtypes(header, None))
    raise InputError(f"{run}: no {TABLE_PARQUET} or {TABLE_CSV}: not a finished sweep folder (resume it with --resume)")


def _known_dtypes(columns: Sequence[str], schema: pa.Schema | None) -> dict[str, Dtype]:
    """Types of a table read back without its grid: a column declared by name (fixed,
    descriptor, text or count metric) takes its declared type; any other (an axis, a
    float metric) the Parquet file's type, :func:`column_dtype` where the file has none
    (a ``null`` column is all undefined, so never an axis), pandas' reading in a CSV."""
    from streamrag.base.columns import dtype_of_arrow
    from streamrag.sweep.point_kinds import DESCRIPTOR_DTYPES

    out: dict[str, Dtype] = {}
    for name in columns:
        if name in FIXED_DTYPES or name in DESCRIPTOR_DTYPES or column_dtype(name) != "float":
            out[name] = column_dtype(name)
        elif schema is not None:
            out[name] = dtype_of_arrow(schema.field(name).type) or column_dtype(name)
    return out


def table_dtypes(run_dir: str | os.PathLike[str]) -> dict[str, Dtype]:
    """The type of every column of a finished sweep's table, read off its Parquet schema
    (``{}`` without one): what a table derived from the sweep (its frontier, its
    break-even) types the sweep's axes by."""
    import pyarrow.lib
    import pyarrow.parquet as pq

    path = Path(run_dir) / TABLE_PARQUET
    try:
        schema = pq.read_schema(path)
    except (OSError, pyarrow.lib.ArrowException):
        return {}
    return _known_dtypes(schema.names, schema)


def read_point_results(run_dir: str | os.PathLike[str], key: str) -> pd.DataFrame:
    """A simulate point's per-question ``results.csv`` (one row per question)."""
    from streamrag.base.errors import InputError
    from streamrag.simulator.results import read_results

    path = Path(run_dir) / "points" / key / "results.csv"
    if not path.is_file():
        raise InputError(f"{path}: no such file (is {key!r} a simulate point of this sweep?)")
    return read_results(path)
