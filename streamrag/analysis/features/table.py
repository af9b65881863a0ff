"""The feature table: one row per question × word (:mod:`streamrag.analysis.features.compute`'
columns), written by ``analyze --features``, read back — ours, the anchor's published
``trigger_features.split{0,1}.csv``, or ``table:T.csv``, computed from a stabilization
table's per-prefix evidence — with every cell validated."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.analysis.evidence.prefixes import PrefixEvidence
from streamrag.analysis.features.compute import (
    ANCHOR_COLUMNS,
    CONTEXT_FEATURES,
    EXTRA_COLUMNS,
    QUESTION_WORD_LEVELS,
    TABLE_SOURCE,
    Context,
    prefix_features,
)
from streamrag.analysis.features.schema import FEATURES
from streamrag.base.errors import RecordError, TableError

__all__ = ["FeatureTable", "feature_rows", "read_feature_table", "study_feature_rows", "table_features", "write_feature_table"]


def feature_rows(
    meta: dict[str, Any], ev: PrefixEvidence, t_suf: int | None, t_sc: int, *, context: Context
) -> list[dict[str, Any]]:
    """The feature table's rows of one analyzed question (``meta``: interaction_id,
    question_type, domain), entity and question-word columns by ``context``."""
    f = prefix_features(ev)
    suffix = "" if context == "prefix" else "_full"
    need = [c + suffix for c in CONTEXT_FEATURES]

    def cell(name: str, i: int) -> Any:
        """A context column's value, empty when the evidence cannot give it (no tagger, no words)."""
        values = f.get(name)
        return "" if values is None else values[i] if values.dtype == object else int(values[i])

    n = ev.n_words
    revised = ev.revised
    rows = []
    for i in range(n):
        t = i + 1
        rows.append(
            {
                "interaction_id": meta["interaction_id"],
                "question_type": meta["question_type"],
                "domain": meta["domain"],
                "retrieved_gold": t_suf is not None,
                "n_words": n,
                "t": t,
                "t_suf": "" if t_suf is None else t_suf,
                "t_sc": t_sc,
                "top1_stable_streak": int(f["top1_stable_streak"][i]),
                "top1_changed": int(f["top1_changed"][i]),
                "named_entity_detected": cell(need[0], i),
                "words_since_first_ne": cell(need[1], i),
                "question_word_type": cell(need[2], i),
                "label": "" if t_suf is None else int(t >= t_suf),
                "label_sc": int(t >= t_sc),
                "top1_margin": "" if "top1_margin" not in f else float(f["top1_margin"][i]),
                "top1_coverage_prefix": "" if "top1_coverage_prefix" not in f else float(f["top1_coverage_prefix"][i]),
                "hypothesis_revised": "" if revised is None else int(bool(revised[i])),
                "context": context,
            }
        )
    return rows


def study_feature_rows(analyses: Iterable[Any], *, context: Context) -> Iterator[dict[str, Any]]:
    """The feature table's rows of analyzed questions (skipped ones have none, as in the anchor's)."""
    for a in analyses:
        if a.evidence is None:
            continue
        row = a.row
        yield from feature_rows(row, a.evidence, row["t_suf"], row["t_sc"], context=context)


def write_feature_table(rows: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write the feature table (anchor's columns, then ours) as CSV, atomically."""
    from streamrag.base.atomic import atomic_path

    out = Path(path)
    with atomic_path(out) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=[*ANCHOR_COLUMNS, *EXTRA_COLUMNS], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return out


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
        """Whether column ``name`` has a value on every row (an anchor file lacks our
        extras; a generated table's features lack the entity and question-word columns)."""
        col = self.columns.get(name)
        if col is None:
            return False
        if col.dtype.kind == "f":
            return not np.isnan(col).any()
        return all(v != "" for v in col.tolist())


_OPTIONAL_INT = ("t_suf", "label", "named_entity_detected", "words_since_first_ne")
"""Integers that may be empty: the targets of a question that is not retrieved-gold, and
the entity columns of a table whose evidence has no tagger output."""
_INT_COLUMNS = tuple(c for c in ANCHOR_COLUMNS if FEATURES.columns[c] == "int" and c not in _OPTIONAL_INT)
_FLOAT_EXTRAS = tuple(c for c in EXTRA_COLUMNS if FEATURES.columns[c] != "str")
"""The column types come from the declaration (:data:`~streamrag.analysis.features.schema.FEATURES`)."""


def read_feature_table(path: str | os.PathLike[str]) -> FeatureTable:
    """Read a feature table — ours or the anchor's ``trigger_features.split{0,1}.csv`` as
    published, or ``table:T.csv`` (:func:`table_features`) — validating every cell: a bad
    value is a one-line error naming the file, the line and the column."""
    from streamrag.base.digest import file_sha256

    p = str(path)
    if p.startswith(TABLE_SOURCE):
        return table_features(p.removeprefix(TABLE_SOURCE))
    if not Path(p).is_file():
        raise TableError(f"{p}: no such feature table")
    with open(p, newline="", encoding="utf-8") as fh:
        return _parse_table(p, fh, file_sha256(p))


def table_features(path: str | os.PathLike[str]) -> FeatureTable:
    """The feature table of a stabilization table with its per-prefix evidence beside it
    (``T.prefixes.parquet``: ``generate --table``, ``analyze``), by :func:`feature_rows`
    as ``analyze --features`` writes it (online context; the entity columns are empty
    without the tagger's output, the question word without the words — a generated
    table's synthetic evidence has rankings only). Its ``path`` is ``table:PATH`` and its
    digest the table's (the evidence is bound to it)."""
    from streamrag.analysis.evidence.prefixes import find_evidence
    from streamrag.analysis.evidence.read import read_evidence
    from streamrag.analysis.table import read_table_records
    from streamrag.base.digest import file_sha256

    p = str(path)
    records, _ = read_table_records(p)
    found = find_evidence(p)
    if found is None:
        raise TableError(
            f"{p}: no per-prefix evidence beside it (its .prefixes.parquet, written by generate --table or analyze): "
            "features read each prefix's ranking"
        )
    evidence = read_evidence(found)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=[*ANCHOR_COLUMNS, *EXTRA_COLUMNS], lineterminator="\n")
    w.writeheader()
    for r in records:
        if r.get("skip_reason"):
            continue
        ev = evidence.get(str(r["interaction_id"]))
        if ev is None:
            raise TableError(f"{found}: no evidence for question {r['interaction_id']!r} of {p}")
        w.writerows(feature_rows(r, ev, r["t_suf"], r["t_sc"], context="prefix"))
    buf.seek(0)
    return _parse_table(TABLE_SOURCE + p, buf, file_sha256(p))


def _parse_table(p: str, fh: Iterable[str], sha256: str) -> FeatureTable:
    """The rows of a feature table (its header first), validated cell by cell, as a :class:`FeatureTable`."""
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
        if FEATURES.columns[c] == "str":
            columns[c] = np.array(vals, dtype=object)
        elif c == "retrieved_gold":
            columns[c] = np.array(vals, dtype=bool)
        else:
            columns[c] = np.array(vals, dtype=np.float64)
    return FeatureTable(p, columns, context, sha256)


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
    if qw and qw not in QUESTION_WORD_LEVELS:
        raise RecordError(path, line_no, "question_word_type", f"must be one of {', '.join(QUESTION_WORD_LEVELS)}, got {qw!r}")
    values["question_word_type"].append(qw)
    for c in _FLOAT_EXTRAS:
        v = cell(c)
        try:
            values[c].append(float("nan") if v == "" else float(v))
        except ValueError:
            raise RecordError(path, line_no, c, f"must be a number or empty, got {v!r}") from None
