"""What a row of the learned trigger's feature table may hold, declared once.

The feature table's reader (:func:`~streamrag.analysis.features.table.read_feature_table`)
checks each cell's type; a typed cell can still be absurd — a word ``t = -4``, a target
``t_suf = 0`` or beyond the question, a label that is not 1[t ≥ t_suf], an infinite
margin — and would be fitted on and evaluated as if it were data. :data:`PLAUSIBLE`
declares each number's range, :data:`LABELS` the targets' definitions and
:data:`PER_QUESTION` what every row of a question shares; :func:`read_training_table` reads
a table for ``train-trigger`` and refuses the first row that breaks one of them, as the
reader refuses a bad cell: strict, one line naming the file, the line and the column
(``f.csv:3: field 't': -4 is outside 1..n_words = 1..12``). Nothing is skipped: the reader
skips nothing either, and a training table with rows silently left out would train
another model than the one its provenance names.

A line is the reader's: the header is line 1, row i (0-based) line i + 2.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from streamrag.analysis.csvrows import not_utf8
from streamrag.analysis.features.compute import TABLE_SOURCE
from streamrag.analysis.features.schema import FEATURES
from streamrag.analysis.features.table import FeatureTable, read_feature_table
from streamrag.analysis.table import MAX_QUERY_WORDS
from streamrag.base.errors import InputError, RecordError, TableError

__all__ = ["LABELS", "PER_QUESTION", "PLAUSIBLE", "Range", "check_plausible", "read_training_table"]


@dataclass(frozen=True, slots=True)
class Range:
    """``low ≤ column ≤ high`` and finite on every row; a bound is a number or the name of
    another column (that row's value); ``empty``: the cell may be empty (NaN in the table)."""

    column: str
    low: float | str
    high: float | str
    empty: bool = False


PLAUSIBLE: tuple[Range, ...] = (
    Range("n_words", 1, MAX_QUERY_WORDS),
    Range("t", 1, "n_words"),
    Range("t_suf", 1, "n_words", empty=True),
    Range("t_sc", 1, "n_words"),
    Range("top1_stable_streak", 1, "t"),
    Range("top1_changed", 0, 1),
    Range("named_entity_detected", 0, 1, empty=True),
    Range("words_since_first_ne", 0, "t", empty=True),
    Range("label", 0, 1, empty=True),
    Range("label_sc", 0, 1),
    Range("top1_margin", -math.inf, math.inf, empty=True),
    Range("top1_coverage_prefix", 0, 1, empty=True),
    Range("hypothesis_revised", 0, 1, empty=True),
)
"""Every number a row gives, in the reader's column order; the n_words cap is the
stabilization table's (MAX_QUERY_WORDS), a float column's range ±∞ means finite only."""

LABELS: dict[str, str] = {"label": "t_suf", "label_sc": "t_sc"}
"""A target column is 1[t ≥ its point] (empty exactly when the point is: the model is
fitted on the label and evaluated on the point, so the two must be one definition)."""

PER_QUESTION = ("n_words", "t_suf", "t_sc")
"""What every row of a question repeats (the evaluation reads them off its first row);
``t`` is distinct within a question."""


def _num(v: float) -> str:
    return str(int(v)) if math.isfinite(v) and v == int(v) else repr(float(v))


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise equality where two empty cells (NaN) are the same."""
    return (a == b) | (np.isnan(a) & np.isnan(b))


def _out_of_range(r: Range, c: dict[str, np.ndarray]) -> tuple[np.ndarray, Callable[[int], str]]:
    v = c[r.column]
    lo, hi = (c[b] if isinstance(b, str) else b for b in (r.low, r.high))
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(v) & (v >= lo) & (v <= hi)
    if r.empty:
        ok |= np.isnan(v)

    def problem(i: int) -> str:
        if math.isnan(v[i]):
            return "empty, but a number is required"
        if r.low == -math.inf and r.high == math.inf:
            return f"{_num(v[i])} is not a finite number"
        names = "..".join(b if isinstance(b, str) else _num(b) for b in (r.low, r.high))
        values = "..".join(_num(c[b][i] if isinstance(b, str) else b) for b in (r.low, r.high))
        return f"{_num(v[i])} is outside {names}" + (f" = {values}" if values != names else "")

    return ~ok, problem


def _not_its_definition(label: str, point: str, c: dict[str, np.ndarray]) -> tuple[np.ndarray, Callable[[int], str]]:
    t, at, got = c["t"], c[point], c[label]
    want = np.where(np.isnan(at), np.nan, (t >= at).astype(np.float64))

    def problem(i: int) -> str:
        if math.isnan(want[i]):
            return f"{_num(got[i])}, but {point} is empty (then {label} is empty: it is 1[t ≥ {point}])"
        shown = "empty" if math.isnan(got[i]) else _num(got[i])
        return f"{shown}, but 1[t ≥ {point}] = 1[{_num(t[i])} ≥ {_num(at[i])}] = {_num(want[i])}"

    return ~_same(got, want), problem


def _per_question(c: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray, Callable[[int], str]]]:
    ids, t = c["interaction_id"], c["t"]
    _, first_row, group = np.unique(ids, return_index=True, return_inverse=True)
    lead = first_row[group]  # each row's question's first row

    def differs(column: str) -> tuple[str, np.ndarray, Callable[[int], str]]:
        v = c[column]

        def problem(i: int) -> str:
            return (
                f"{_num(v[i])}, but line {lead[i] + 2} of question {ids[i]!r} gives {_num(v[lead[i]])} "
                "(every row of a question gives the same)"
            )

        return column, ~_same(v, v[lead]), problem

    by = np.lexsort((np.arange(t.size), t, group))  # a question's rows by t, in file order on a tie
    repeats = np.zeros(t.size, dtype=bool)
    repeats[by[1:]] = (group[by[1:]] == group[by[:-1]]) & (t[by[1:]] == t[by[:-1]])
    earlier = np.zeros(t.size, dtype=np.int64)
    earlier[by[1:]] = by[:-1]

    def repeated(i: int) -> str:
        return f"{_num(t[i])} repeats line {earlier[i] + 2} of question {ids[i]!r}"

    return [*(differs(column) for column in PER_QUESTION), ("t", repeats, repeated)]


def check_plausible(table: FeatureTable) -> FeatureTable:
    """``table`` when every row is plausible (:data:`PLAUSIBLE`, :data:`LABELS`,
    :data:`PER_QUESTION`); RecordError naming the first line that is not (on that line,
    the first check declared)."""
    c = table.columns
    if not table.n_rows:
        return table
    checks = [(r.column, *_out_of_range(r, c)) for r in PLAUSIBLE]
    checks += [(label, *_not_its_definition(label, point, c)) for label, point in LABELS.items()]
    checks += _per_question(c)
    worst: tuple[int, int] | None = None  # (row, check)
    for k, (_, bad, _) in enumerate(checks):
        rows = np.flatnonzero(bad)
        if rows.size and (worst is None or (int(rows[0]), k) < worst):
            worst = (int(rows[0]), k)
    if worst is not None:
        i, k = worst
        column, _, problem = checks[k]
        raise RecordError(table.path, i + 2, column, problem(i))
    return table


_INT_COLUMNS = tuple(name for name, dtype in FEATURES.columns.items() if dtype == "int")


def read_training_table(path: str | os.PathLike[str]) -> FeatureTable:
    """A feature table as ``train-trigger`` reads it: :func:`read_feature_table`, every
    error one line (a file that is not UTF-8 text, malformed CSV, an integer beyond any
    float), then :func:`check_plausible`."""
    p = os.fspath(path)
    try:
        table = read_feature_table(p)
    except UnicodeDecodeError as exc:
        raise _not_text(p, exc) from None
    except (csv.Error, OverflowError) as exc:
        raise _unreadable(p, exc) from None
    return check_plausible(table)


def _not_text(p: str, exc: UnicodeDecodeError) -> TableError:
    """Where the first byte that is not UTF-8 is (:func:`~streamrag.analysis.csvrows.not_utf8`)."""
    if p.startswith(TABLE_SOURCE):
        return TableError(f"{p}: not UTF-8 text ({exc.reason})")
    return TableError(f"{not_utf8(p)}: a feature table is CSV")


def _unreadable(p: str, exc: Exception) -> InputError:
    """Where the reader failed below its own checks: the first record the csv module
    refuses (a field beyond its size limit), or the first integer cell too large for the
    table's float64 columns."""
    if p.startswith(TABLE_SOURCE):
        return TableError(f"{p}: unreadable feature table: {exc}")
    with open(p, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader, [])
            ints = [(i, name) for i, name in enumerate(header) if name in _INT_COLUMNS]
            for row in reader:
                for i, name in ints:
                    if i < len(row) and _beyond_float(row[i]):
                        return RecordError(
                            p, reader.line_num, name, f"{row[i][:12]}… ({len(row[i])} digits) is beyond any plausible number"
                        )
        except csv.Error as found:
            return TableError(f"{p}:{reader.line_num}: malformed CSV: {found}")
    return TableError(f"{p}: unreadable feature table: {exc}")


def _beyond_float(text: str) -> bool:
    """Whether ``text`` is an integer too large for a float64 (the reader takes it, numpy cannot)."""
    try:
        float(int(text))
    except OverflowError:
        return True
    except ValueError:
        return False
    return False
