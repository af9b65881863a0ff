"""What a sweep figure shows of its grid: every setting that varied, by colour, marker,
panel or label, and a note naming what it holds at one value.

A sweep table's *settings* are its columns after ``key`` up to its last descriptor
(:data:`~streamrag.sweep.point_kinds.DESCRIPTOR_DTYPES`): the grid's axes, then the kind's
descriptors (:mod:`streamrag.sweep.table` writes them in that order; the metrics follow).
:func:`varied` keeps the settings that take more than one value, less those an earlier one
determines (``trigger_kind`` follows ``trigger``, ``G_ms`` a latency profile).

A figure names the columns it draws within a panel (its colour, its x) and its own panel
columns; :func:`layout` gives every other varied setting a marker or panels while the
figure stays within ``max_panels``, and holds the rest at one value — δ closest to 3 w/s,
θ closest to 0.8, any other at its first value (:func:`reference_rows`) — naming them and
the values left out in :attr:`Layout.note`, which the figure prints under its title.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import pandas as pd

__all__ = [
    "MARKERS",
    "PREFERRED",
    "Layout",
    "determined",
    "fmt",
    "label",
    "layout",
    "model_note",
    "panels_of",
    "reference_rows",
    "setting_columns",
    "values_text",
    "varied",
]

PREFERRED = {"delta_wps": 3.0, "theta": 0.8}
"""Values figures hold an axis at when they cannot show it (the paper's point)."""

MARKERS = "osD^vPXh<>p"
"""Marker shapes in order (no star: the star is the oracle bound)."""

_UNITS = {"L_ms": ("L", " ms"), "G_ms": ("G", " ms"), "F_ms": ("F", " ms"), "delta_wps": ("δ", " w/s"), "theta": ("θ", "")}


def fmt(column: str, value: object) -> str:
    """``L = 600 ms``, ``δ = 3 w/s``, ``retriever = bm25``: one setting as a figure names it."""
    name, unit = _UNITS.get(column, (column, ""))
    return f"{name} = {_value(value)}{unit}"


def values_text(column: str, values: Sequence[Any], *, named: bool = True) -> str:
    """``δ 2, 2.5, 4 w/s`` (``named=False``: ``2, 2.5, 4 w/s``): some values of a setting."""
    name, unit = _UNITS.get(column, (column, ""))
    return f"{name} " * named + f"{', '.join(_value(v) for v in values)}{unit}"


def _value(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return f"{value:g}" if isinstance(value, float) else str(value)


def label(values: dict[str, Any]) -> str:
    """Settings as one label (``L = 600 ms, retriever = bm25``); a trigger by its name alone."""
    return ", ".join(str(v) if c == "trigger" else fmt(c, v) for c, v in values.items())


def model_note(table: pd.DataFrame) -> str:
    """A second title line naming the reflector model(s) and rules the points ran."""
    if "reflector_model" not in table.columns:
        return ""
    models = sorted({str(m) for m in table["reflector_model"].dropna()})
    rules = sorted({str(r) for r in table["rules.preset"].dropna()}) if "rules.preset" in table.columns else []
    return f"\nreflector: {'; '.join(models)}" + (f"; rules: {', '.join(rules)}" if rules else "")


def setting_columns(table: pd.DataFrame) -> list[str]:
    """The settings of a sweep table (module docstring): every column up to its last
    descriptor, ``point`` and ``key`` left out."""
    from streamrag.sweep.point_kinds import DESCRIPTOR_DTYPES

    columns = [str(c) for c in table.columns]
    last = max((i for i, c in enumerate(columns) if c in DESCRIPTOR_DTYPES), default=-1)
    return [c for c in columns[: last + 1] if c not in ("point", "key")]


def determined(table: pd.DataFrame, by: Sequence[str], column: str) -> bool:
    """Each combination of ``by`` has one value of ``column`` (undefined counted as one)."""
    if not by:
        return table[column].nunique(dropna=False) <= 1
    counts = table.groupby(list(by), sort=False, dropna=False)[column].nunique(dropna=False)
    return bool((counts <= 1).all())


def varied(table: pd.DataFrame) -> list[str]:
    """The settings that take more than one value, in table order, less each one an earlier
    of them determines on its own."""
    out: list[str] = []
    for column in setting_columns(table):
        if table[column].nunique(dropna=False) > 1 and not any(determined(table, [c], column) for c in out):
            out.append(column)
    return out


def _values(series: pd.Series) -> list[Any]:
    """Distinct values in order of appearance (undefined once)."""
    return list(dict.fromkeys(None if pd.isna(v) else v for v in series))


def _reference(column: str, values: Sequence[Any]) -> Any:
    if column in PREFERRED and all(isinstance(v, int | float) for v in values):
        return min(values, key=lambda v: (abs(float(v) - PREFERRED[column]), float(v)))
    return values[0]


def _equal(series: pd.Series, value: Any) -> pd.Series:
    return series.isna() if value is None else series == value


def reference_rows(table: pd.DataFrame, keep: Sequence[str]) -> pd.DataFrame:
    """Rows with every varied setting except ``keep`` (and what ``keep`` determines) held at
    one value: δ closest to 3 w/s, θ closest to 0.8, any other at its first value."""
    rows = table
    for column in varied(table):
        if column in keep or (keep and determined(table, [c for c in keep if c in table.columns], column)):
            continue
        rows = rows[_equal(rows[column], _reference(column, _values(rows[column])))]
    return rows


class Layout(NamedTuple):
    """How one figure shows a sweep table (:func:`layout`)."""

    marker: str | None
    """The setting the markers tell apart (None: the figure's own marker rule)."""
    panels: list[tuple[dict[str, Any], pd.DataFrame]]
    """Per panel (or row of panels): the settings that name it and its rows, in order."""
    note: str
    """What is held at one value and which values are left out ("" when every point is drawn)."""

    @property
    def n_drawn(self) -> int:
        return sum(len(rows) for _, rows in self.panels)


def layout(
    table: pd.DataFrame,
    *,
    shown: Sequence[str] = (),
    facets: Sequence[str] = (),
    marker: bool = False,
    per_panel: int = 1,
    max_panels: int = 8,
) -> Layout:
    """Where each varied setting of ``table`` goes in a figure that draws ``shown`` within a
    panel and gives ``facets`` their own panels (each ``per_panel`` axes wide): with
    ``marker``, the other setting with the most values (at most :data:`MARKERS`) takes the marker;
    the rest take panels, in table order, while the panels stay within ``max_panels``, and
    the remainder are held at one value (named in the note, with the values left out)."""
    present = [c for c in facets if c in table.columns]
    within = [c for c in shown if c in table.columns]
    others = [c for c in varied(table) if c not in within and c not in present]
    chosen_marker = None
    if marker:  # the setting with the most values that has shapes enough: the fewest panels
        fits = [c for c in others if not determined(table, within, c) and table[c].nunique(dropna=False) <= len(MARKERS)]
        chosen_marker = max(fits, key=lambda c: table[c].nunique(dropna=False), default=None)
        if chosen_marker is not None:
            within.append(chosen_marker)
    rows = table
    panel_columns: list[str] = []
    held: list[str] = []
    for column in [*present, *others]:
        if column == chosen_marker or (column not in present and determined(rows, [*within, *panel_columns], column)):
            continue
        n = len(rows[[*panel_columns, column]].drop_duplicates())
        if n * per_panel <= max_panels:
            panel_columns.append(column)
            continue
        values = _values(rows[column])
        keep = _reference(column, values)
        rows = rows[_equal(rows[column], keep)]
        held.append(f"{fmt(column, keep)} (left out: {values_text(column, [v for v in values if v != keep], named=False)})")
    note = f"drawn at {' and '.join(held)}; every point is in sweep.csv" if held else ""
    return Layout(chosen_marker, panels_of(rows, panel_columns), note)


def panels_of(rows: pd.DataFrame, columns: Sequence[str]) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """The rows split by ``columns``, ordered by each column's values in order of appearance."""
    if not columns:
        return [({}, rows)]
    order = {c: {v: i for i, v in enumerate(_values(rows[c]))} for c in columns}
    groups = []
    for key, part in rows.groupby(list(columns), sort=False, dropna=False):
        values = dict(zip(columns, key if isinstance(key, tuple) else (key,), strict=True))
        values = {c: None if pd.isna(v) else v for c, v in values.items()}
        groups.append((tuple(order[c][values[c]] for c in columns), values, part))
    groups.sort(key=lambda g: g[0])
    return [(values, part) for _, values, part in groups]
