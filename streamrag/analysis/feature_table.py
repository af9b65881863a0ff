"""The per-word feature table, declared, and its reader (:mod:`streamrag.analysis.features`
computes and writes it; the columns are described there).

:data:`FEATURES` declares every column's type once: its Arrow schema is
``FEATURES.schema()``, ``FEATURES.read_csv(path)`` a frame of it in those dtypes, and
:func:`read_feature_table` — the models' reader, which validates every cell — gives the
numeric columns as float64 arrays (NaN where undefined) whatever the values.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.analysis.entity import EntityContext
from streamrag.base.columns import Dtype, TableKind
from streamrag.base.errors import RecordError, TableError

__all__ = [
    "ANCHOR_COLUMNS",
    "EXTRA_COLUMNS",
    "FEATURES",
    "FEATURE_FILE",
    "QUESTION_WORDS",
    "QUESTION_WORD_LEVELS",
    "Context",
    "FeatureTable",
    "read_feature_table",
]

Context = EntityContext
"""Which words the entity and question-word columns see (one rule with ``t_entity``'s)."""

FEATURE_FILE = "features.csv"
"""The feature table's name in an ``analyze --out`` folder."""

QUESTION_WORDS = ("who", "what", "when", "where", "which", "why", "how")
"""The anchor's question words; ``other`` when none of the first three words is one."""
QUESTION_WORD_LEVELS = (*QUESTION_WORDS, "other")

_ANCHOR: dict[str, Dtype] = {
    "interaction_id": "str",
    "question_type": "str",
    "domain": "str",
    "retrieved_gold": "bool",
    "n_words": "int",
    "t": "int",
    "t_suf": "int",
    "t_sc": "int",
    "top1_stable_streak": "int",
    "top1_changed": "int",
    "named_entity_detected": "int",
    "words_since_first_ne": "int",
    "question_word_type": "str",
    "label": "int",
    "label_sc": "int",
}
_EXTRA: dict[str, Dtype] = {
    "top1_margin": "float",
    "top1_coverage_prefix": "float",
    "hypothesis_revised": "int",
    "context": "str",
}
FEATURES = TableKind("features", {**_ANCHOR, **_EXTRA})
"""The feature table, declared: every column's type (its Arrow schema ``FEATURES.schema()``;
``FEATURES.read_csv`` a frame of it). :func:`read_feature_table` reads the numbers as
float64 arrays for the models, NaN where undefined."""

ANCHOR_COLUMNS: tuple[str, ...] = tuple(_ANCHOR)
"""The anchor's header, in its order (``trigger_features.split{0,1}.csv``)."""
EXTRA_COLUMNS: tuple[str, ...] = tuple(_EXTRA)
"""Ours, after the anchor's."""


@dataclass(frozen=True, slots=True, eq=False)
class FeatureTable:
    """A feature table in memory: one entry per row, in file order.

    ``columns`` holds float64 arrays for the numeric columns (NaN where empty: ``t_suf``,
    ``label``, and our extras in an anchor file), str arrays for ids, types and the
    question word; ``context`` says whether the entity and question-word columns read
    the prefix or the full query; ``sha256`` is the file's digest (model provenance)."""

    path: str
    columns: dict[str, np.ndarray]
    context: Context
    sha256: str

    @property
    def n_rows(self) -> int:
        return int(self.columns["t"].shape[0])

    def has(self, name: str) -> bool:
        col = self.columns.get(name)
        return col is not None and not (col.dtype.kind == "f" and np.isnan(col).all())


_OPTIONAL_INT = ("t_suf", "label")
"""The anchor's integer columns that may be empty (undefined)."""
_INT_COLUMNS = tuple(c for c, dtype in _ANCHOR.items() if dtype == "int" and c not in _OPTIONAL_INT)
_FLOAT_EXTRAS = tuple(c for c, dtype in _EXTRA.items() if dtype != "str")
_TEXT_COLUMNS = tuple(c for c, dtype in _ANCHOR.items() if dtype == "str")


def read_feature_table(path: str | os.PathLike[str]) -> FeatureTable:
    """Read a feature table — ours or the anchor's ``trigger_features.split{0,1}.csv`` as
    published — validating every cell: a bad value is a one-line error naming the file,
    the line and the column."""
    from streamrag.base.digest import file_sha256

    p = str(path)
    if not Path(p).is_file():
        raise TableError(f"{p}: no such feature table")
    with open(p, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise TableError(f"{p}: empty file (a feature table has the header {','.join(ANCHOR_COLUMNS)})")
        missing = [c for c in ANCHOR_COLUMNS if c not in header]
        if missing:
            raise TableError(f"{p}: column {missing[0]!r} missing (a feature table has {', '.join(ANCHOR_COLUMNS)})")
        pos = {c: header.index(c) for c in header}
        values: dict[str, list[Any]] = {c: [] for c in (*ANCHOR_COLUMNS, *_FLOAT_EXTRAS)}
        contexts: set[str] = set()
        for line_no, row in enumerate(reader, start=2):
            if len(row) != len(header):
                raise RecordError(p, line_no, "", f"{len(row)} fields, the header has {len(header)}")
            _parse_row(p, line_no, row, pos, values)
            if "context" in pos:
                contexts.add(row[pos["context"]])
    if len(contexts) > 1 or (contexts and not contexts <= {"prefix", "full"}):
        raise TableError(f"{p}: column 'context' must be one of prefix, full on every row, got {sorted(contexts)}")
    context: Context = "prefix" if contexts == {"prefix"} else "full"
    columns: dict[str, np.ndarray] = {}
    for c, vals in values.items():
        if c in _TEXT_COLUMNS:
            columns[c] = np.array(vals, dtype=object)
        elif c == "retrieved_gold":
            columns[c] = np.array(vals, dtype=bool)
        else:
            columns[c] = np.array(vals, dtype=np.float64)
    return FeatureTable(p, columns, context, file_sha256(p))


def _parse_row(path: str, line_no: int, row: list[str], pos: dict[str, int], values: dict[str, list[Any]]) -> None:
    def cell(c: str) -> str:
        return row[pos[c]] if c in pos else ""

    for c in ("interaction_id", "question_type", "domain"):
        values[c].append(cell(c))
    if not cell("interaction_id"):
        raise RecordError(path, line_no, "interaction_id", "empty")
    rg = cell("retrieved_gold")
    if rg not in ("True", "False"):
        raise RecordError(path, line_no, "retrieved_gold", f"must be True or False, got {rg!r}")
    values["retrieved_gold"].append(rg == "True")
    for c in _INT_COLUMNS:
        try:
            values[c].append(int(cell(c)))
        except ValueError:
            raise RecordError(path, line_no, c, f"must be an integer, got {cell(c)!r}") from None
    for c in _OPTIONAL_INT:
        v = cell(c)
        try:
            values[c].append(float("nan") if v == "" else int(v))
        except ValueError:
            raise RecordError(path, line_no, c, f"must be an integer or empty, got {v!r}") from None
    if (values["t_suf"][-1] == values["t_suf"][-1]) != (rg == "True"):
        raise RecordError(path, line_no, "t_suf", "must be set exactly when retrieved_gold is True")
    qw = cell("question_word_type")
    if qw not in QUESTION_WORD_LEVELS:
        raise RecordError(path, line_no, "question_word_type", f"must be one of {', '.join(QUESTION_WORD_LEVELS)}, got {qw!r}")
    values["question_word_type"].append(qw)
    for c in _FLOAT_EXTRAS:
        v = cell(c)
        try:
            values[c].append(float("nan") if v == "" else float(v))
        except ValueError:
            raise RecordError(path, line_no, c, f"must be a number or empty, got {v!r}") from None
