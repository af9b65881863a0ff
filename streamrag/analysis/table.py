"""The stabilization table (design §7): one row per question, read and written as CSV.

The row is declared once, in :mod:`streamrag.data.stabilization_row` (the generator
writes the same table); the column lists and types here are read off it.

Columns, in contract order (:data:`STABILIZATION_COLUMNS`)::

    interaction_id, domain, question_type, static_or_dynamic, n_words, n_passages,
    groundable, retrieved_gold, t_sc, phi_sc, t_suf, phi_suf, volatility, gold_density

Optional columns streamrag writes (:data:`OPTIONAL_COLUMNS`): ``skip_reason`` (non-empty →
the question was skipped: it is kept in the table, counted, and excluded from statistics),
``t_anchor`` and ``t_pivot`` (1-based word positions, see :mod:`streamrag.analysis.studies.anchor`),
``n_gold`` (gold chunks), ``n_pages_unread`` and ``n_chunks_cut`` (what the chunk cap
dropped, :mod:`streamrag.data.chunking`) and ``no_overlap`` (no query word occurs in any chunk: t_sc = 1
is a tie-break, and the statistics count the question as never streamable). Any other column is kept as text. Booleans are written
``True``/``False``; an undefined value is an empty field, never 0.

Tables published by the anchor study load as they are: they have no ``gold_density``
column (:data:`ABSENT_COLUMNS`; the frame then has none either, and the statistics that
need it say so) and give φ rounded to 4 decimals (accepted within
:data:`PHI_TOLERANCE` of t/n_words and replaced by the exact t/n_words).

:func:`read_table` validates every row and raises :class:`~streamrag.base.errors.TableError`
with a one-line message naming file, line and column, e.g.
``table.csv:12: column 't_suf': 'abc' is not an integer``.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from streamrag.analysis.csvrows import RowError, iter_rows, parse_float, parse_int
from streamrag.base.atomic import atomic_path
from streamrag.base.columns import PANDAS_DTYPES, arrow_schema
from streamrag.base.errors import TableError
from streamrag.data.crag import MAX_QUERY_WORDS
from streamrag.data.stabilization_row import (
    ABSENT_COLUMNS,
    COLUMNS,
    DTYPES,
    OPTIONAL_COLUMNS,
    REQUIRED_VALUES,
    STABILIZATION_COLUMNS,
    WRITTEN_EXTRA_COLUMNS,
    columns_of,
)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "ABSENT_COLUMNS",
    "OPTIONAL_COLUMNS",
    "PHI_TOLERANCE",
    "STABILIZATION_COLUMNS",
    "iter_table_records",
    "read_table",
    "read_table_records",
    "rows_frame",
    "stabilization_schema",
    "write_table",
]

PHI_TOLERANCE = 5e-5
"""Largest accepted ``|phi − t/n_words|``: half a unit of the 4th decimal, so φ rounded to
4 decimals (as the anchor study publishes it) is accepted; the value read is then the
exact ``t/n_words``, so a rounded copy gives the same statistics as the exact one."""

# The binary value of a decimal such as 0.0313 may sit a hair beyond 5e-5 from t/n (here
# 1/32 = 0.03125): rounding is judged on the decimal, so allow for the representation.
_PHI_SLACK = 1e-12

_INT_COLUMNS = columns_of("int")
_FLOAT_COLUMNS = columns_of("float")
_BOOL_COLUMNS = columns_of("bool")

_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})


def _parse_bool(column: str, raw: str) -> bool | None:
    if raw == "":
        return None
    low = raw.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise RowError(column, f"{raw!r} is not a boolean (expected True/False, true/false or 1/0)")


def _parse_values(raw: Mapping[str, str], columns: tuple[str, ...]) -> dict[str, Any]:
    """Parse the known columns of one row by type; an empty field becomes ``None``."""
    out: dict[str, Any] = {}
    for col in columns:
        value = raw[col]
        if col in _INT_COLUMNS:
            out[col] = parse_int(col, value)
        elif col in _FLOAT_COLUMNS:
            out[col] = parse_float(col, value)
        elif col in _BOOL_COLUMNS:
            out[col] = _parse_bool(col, value)
        else:
            out[col] = value if value != "" else None
    return out


def _exact_phi(column: str, phi: float, t_column: str, t: int, n_words: int, n_name: str = "n_words") -> float:
    """``t/n`` when ``phi`` is within :data:`PHI_TOLERANCE` of it, else a row error."""
    expected = t / n_words
    if abs(phi - expected) > PHI_TOLERANCE + _PHI_SLACK:
        raise RowError(
            column,
            f"{phi!r} is inconsistent with {t_column}/{n_name} = {t}/{n_words} = {expected:.6g} (tolerance {PHI_TOLERANCE:g})",
        )
    return expected


def _check_t(column: str, t: int, n_words: int, n_name: str = "n_words") -> None:
    if not 1 <= t <= n_words:
        raise RowError(column, f"{t} is outside 1..{n_name} = 1..{n_words}")


def _check_row(v: dict[str, Any]) -> None:
    """Consistency of a row that is not skipped (types are already parsed); φ values
    within tolerance are replaced by the exact ``t/n_words``."""
    for col in REQUIRED_VALUES:
        if v[col] is None:
            raise RowError(col, "empty, but a value is required")
    n = v["n_words"]
    if n < 1:
        raise RowError("n_words", f"{n} is not a positive word count")
    if n > MAX_QUERY_WORDS:
        raise RowError("n_words", f"{n} is more than the {MAX_QUERY_WORDS:,} words streamrag takes (MAX_QUERY_WORDS)")
    if v["n_passages"] is not None and v["n_passages"] < 0:
        raise RowError("n_passages", f"{v['n_passages']} is negative")
    # t_sc, t_suf, their φ and the volatility count input events: the hypotheses of an
    # ASR table (n_hypotheses), else the words.
    n_events, events = (v["n_hypotheses"], "n_hypotheses") if v.get("n_hypotheses") is not None else (n, "n_words")
    if n_events < 1:
        raise RowError("n_hypotheses", f"{n_events} is not a positive count of hypotheses")
    _check_t("t_sc", v["t_sc"], n_events, events)
    v["phi_sc"] = _exact_phi("phi_sc", v["phi_sc"], "t_sc", v["t_sc"], n_events, events)

    t_suf, phi_suf, rg = v["t_suf"], v["phi_suf"], v["retrieved_gold"]
    if rg and not v["groundable"]:
        raise RowError("retrieved_gold", "True, but groundable is False (retrieved-gold questions are groundable)")
    if rg and t_suf is None:
        raise RowError("t_suf", "empty, but retrieved_gold is True (t_suf is defined exactly for retrieved-gold questions)")
    if not rg and t_suf is not None:
        raise RowError("t_suf", f"{t_suf}, but retrieved_gold is False (leave t_suf empty when gold is never retrieved)")
    if t_suf is None:
        if phi_suf is not None:
            raise RowError("phi_suf", f"{phi_suf!r}, but t_suf is empty (phi_suf = t_suf/{events})")
    else:
        _check_t("t_suf", t_suf, n_events, events)
        if phi_suf is None:
            raise RowError("phi_suf", f"empty, but t_suf is {t_suf} (phi_suf = t_suf/{events})")
        v["phi_suf"] = _exact_phi("phi_suf", phi_suf, "t_suf", t_suf, n_events, events)

    vol = v["volatility"]
    if vol is not None and not 0 <= vol <= n_events - 1:
        raise RowError("volatility", f"{vol} is outside 0..{events}-1 = 0..{n_events - 1}")
    dens = v.get("gold_density")
    if dens is not None and not 0.0 <= dens <= 1.0:
        raise RowError("gold_density", f"{dens!r} is outside [0, 1]")
    for column in ("t_anchor", "t_pivot", "t_entity", "t_entity_full"):
        if v.get(column) is not None:
            _check_t(column, v[column], n)
    for column in ("n_pages_unread", "n_chunks_cut"):
        if v.get(column) is not None and v[column] < 0:
            raise RowError(column, f"{v[column]} is negative")
    n_gold, n_passages = v.get("n_gold"), v["n_passages"]
    if n_gold is not None and n_gold < 0:
        raise RowError("n_gold", f"{n_gold} is negative")
    if n_gold is not None and n_passages is not None and n_gold > n_passages:
        raise RowError("n_gold", f"{n_gold} is more than n_passages = {n_passages}")


def _frame(records: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    """Typed frame: each known column in its declared dtype (:mod:`streamrag.base.columns`:
    nullable ``Int64`` / ``boolean``, ``float64`` with NaN, text ``str``); others as text."""
    import pandas as pd

    data: dict[str, Any] = {}
    for col in columns:
        values = [r[col] for r in records]
        if col in _FLOAT_COLUMNS:
            values = [np.nan if x is None else x for x in values]
        data[col] = pd.array(values, dtype=PANDAS_DTYPES[DTYPES.get(col, "str")])
    return pd.DataFrame(data, columns=columns)


def stabilization_schema(columns: Iterable[str] | None = None) -> pa.Schema:
    """The stabilization table's Arrow schema: its known columns (``columns``, default
    every known one) typed by the row declaration, other columns text."""
    names = list(COLUMNS) if columns is None else list(columns)
    return arrow_schema({name: DTYPES.get(name, "str") for name in names}, "stabilization")


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and validate a stabilization table into a typed frame (:func:`read_table_records`'s rows).

    Returns one row per table row, skipped rows included, columns in contract order
    (:data:`STABILIZATION_COLUMNS` — without those of :data:`ABSENT_COLUMNS` the file
    lacks —, then those of :data:`OPTIONAL_COLUMNS` present, then any others as text).
    Types: counts and positions ``Int64`` (``<NA>`` when undefined),
    ``groundable``/``retrieved_gold`` ``boolean``, ``phi_*``/``gold_density`` ``float64``
    (NaN when undefined), text ``str`` (NaN when empty): the dtypes of
    :mod:`streamrag.base.columns`, as every reader gives them.

    Rows with a non-empty ``skip_reason`` are only type-checked (any field may be empty);
    every other row must be consistent: ``1 ≤ t ≤ n_words``, ``phi = t/n_words`` within
    :data:`PHI_TOLERANCE` (the frame holds the exact ``t/n_words``), ``t_suf`` defined
    exactly when ``retrieved_gold``, and so on.

    Raises :class:`~streamrag.base.errors.TableError` (``file:line: column 'c': problem``) on a
    bad header or value, :class:`~streamrag.base.errors.DataFileError` when the file cannot be
    read at all.
    """
    records, columns = read_table_records(path)
    return _frame(records, columns)


def read_table_records(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """:func:`read_table` without pandas: the validated rows as dicts of Python values
    (``int``/``bool``/``float``/``str``, ``None`` when undefined) and the column order.
    Replays read tables this way: importing pandas costs more than replaying a table."""
    records, columns = iter_table_records(path)
    return list(records), columns


def iter_table_records(path: str | os.PathLike[str]) -> tuple[Iterator[dict[str, Any]], list[str]]:
    """:func:`read_table_records` one row at a time (the header is read and checked now,
    each row as the iterator reaches it): a replay holds one row, not the table."""
    name = str(path)
    header, rows = iter_rows(path, [c for c in STABILIZATION_COLUMNS if c not in ABSENT_COLUMNS])
    known = tuple(c for c in STABILIZATION_COLUMNS + OPTIONAL_COLUMNS if c in header)
    extra = [c for c in header if c not in known]

    def records() -> Iterator[dict[str, Any]]:
        for line, raw in rows:
            try:
                values = _parse_values(raw, known)
                if values.get("skip_reason") is None:
                    _check_row(values)
            except RowError as exc:
                raise TableError(f"{name}:{line}: {exc}") from None
            for col in extra:
                values[col] = raw[col]
            yield values

    return records(), list(known) + extra


def _format(value: Any) -> str:
    """One CSV field: undefined → empty, booleans True/False, floats in shortest round-trip form."""
    if value is None or _is_missing(value):
        return ""
    if isinstance(value, bool | np.bool_):
        return "True" if value else "False"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return "" if math.isnan(value) else repr(float(value))
    return str(value)


def _is_missing(value: Any) -> bool:
    """pandas' ``NA`` or ``NaT`` (recognized without importing pandas: a frame has it loaded)."""
    return type(value).__name__ in ("NAType", "NaTType")


def rows_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Stabilization rows as a table: §7 columns, then the extras written (every one
    declared always, the others when a row has them); integer columns nullable, so an
    undefined value stays empty, never 0.0 (:func:`~streamrag.analysis.study.table_frame`)."""
    import pandas as pd

    extra = [c for c in WRITTEN_EXTRA_COLUMNS if COLUMNS[c].when is None or any(c in row for row in rows)]
    df = pd.DataFrame(rows, columns=[*STABILIZATION_COLUMNS, *extra])
    for column in columns_of("int"):
        if column in df.columns:
            df[column] = df[column].astype("Int64")
    for column in columns_of("bool"):
        df[column] = df[column].astype("boolean")
    return df


def write_table(df: pd.DataFrame, path: str | os.PathLike[str], *, lead: Sequence[str] = ()) -> Path:
    """Write a stabilization table atomically (temporary file + ``os.replace``).

    Columns: ``lead`` (a key a table of several tables is sorted by, e.g. ``retriever``),
    :data:`STABILIZATION_COLUMNS`, then the others in frame order.
    Booleans as ``True``/``False``, undefined (None/NaN/NA) as an empty field, floats in
    their shortest round-trip form. Raises ``ValueError`` when a contract column is
    missing (a programming error, not bad user input).
    """
    missing = [c for c in STABILIZATION_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"write_table: frame lacks column(s) {', '.join(missing)}")
    first = [*lead, *STABILIZATION_COLUMNS]
    columns = first + [c for c in df.columns if c not in first]
    target = Path(path)
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        for row in df[columns].itertuples(index=False, name=None):
            writer.writerow([_format(v) for v in row])
    return target
