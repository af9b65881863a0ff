"""Columns from elsewhere onto a stabilization table, joined by ``interaction_id``.

A *source* is either a question file (JSON lines: its query-side columns are computed,
:mod:`streamrag.analysis.studies.query_side`) or any CSV with an ``interaction_id`` column — a
query table, or a per-question file the anchor study published such as
``grounding_precision.split0.csv`` (its ``gold_density`` and ``gold_size``).

Rules:

- every table row is kept, in order; a row the source lacks gets empty added columns
  and its id is reported (``n_table_unmatched``, ``table_unmatched_ids``), never dropped;
  source rows matching no table row are counted too (``n_source_unmatched``);
- a source column the table lacks is added (renamed by :data:`ALIASES`: the anchor's
  ``gold_size`` is our ``n_gold``); a column both have keeps the table's value and the
  disagreements are counted (``disagreements``: numbers equal within
  :data:`~streamrag.analysis.table.PHI_TOLERANCE`, text equal after stripping);
- the joined rows are written as CSV and read back with
  :func:`~streamrag.analysis.table.read_table`, so joined values are validated by the
  same rules as any table (``t_entity`` within 1..n_words, ``gold_density`` in [0, 1], ...).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamrag.analysis.csvrows import read_rows
from streamrag.analysis.studies.entity import EntityContext
from streamrag.analysis.table import ABSENT_COLUMNS, PHI_TOLERANCE, STABILIZATION_COLUMNS, read_table
from streamrag.base.atomic import atomic_path
from streamrag.base.lines import SUFFIXES

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ALIASES", "MAX_LISTED_IDS", "join_sources", "join_table", "report_lines", "source_rows"]

ALIASES: dict[str, str] = {"gold_size": "n_gold"}
"""Source column names that are another name of one of ours (the anchor's ``gold_size``:
gold chunks of the question, our ``n_gold``)."""

MAX_LISTED_IDS = 20
"""Unmatched or disagreeing ids listed in a report (all are counted)."""


def _is_question_file(path: Path) -> bool:
    return any(path.name.endswith(suffix) for suffix in SUFFIXES)


def source_rows(
    path: str | os.PathLike[str], *, entity: EntityContext | None = None, ids: Sequence[str] | None = None
) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows (text fields, ``""`` when undefined) of a source.

    A question file (``.jsonl``, ``.jsonl.bz2``, ``.jsonl.zst``) gives its query-side
    columns, the entity column of context ``entity`` when given (tagged only for ``ids`` when given); any other
    file is read as CSV with a unique ``interaction_id`` column."""
    source = Path(path)
    if _is_question_file(source):
        from streamrag.analysis.studies.query_side import QUERY_COLUMNS, query_columns

        computed = query_columns(source, entity=entity, entity_ids=set(ids) if ids is not None else None)
        header = [c for c in QUERY_COLUMNS if computed and c in computed[0]]
        rows = [{c: "" if r.get(c) is None else str(r[c]) for c in header} for r in computed]
        return header, rows
    header, csv_rows = read_rows(source, ["interaction_id"])
    return [ALIASES.get(h, h) for h in header], [{ALIASES.get(k, k): v for k, v in r.fields.items()} for r in csv_rows]


def _same(a: str, b: str) -> bool:
    if a.strip() == b.strip():
        return True
    try:
        return abs(float(a) - float(b)) <= PHI_TOLERANCE
    except ValueError:
        return a.strip().lower() == b.strip().lower()  # True/true


def join_sources(
    header: list[str],
    rows: list[dict[str, str]],
    sources: Sequence[str | os.PathLike[str]],
    *,
    entity: EntityContext | None = None,
) -> tuple[list[str], list[dict[str, str]], list[dict[str, Any]]]:
    """Join each source onto ``rows`` (text fields by column) in turn: (header, rows, one report per source)."""
    header, rows = list(header), [dict(r) for r in rows]
    reports: list[dict[str, Any]] = []
    for source in sources:
        ids = [r["interaction_id"] for r in rows if r.get("interaction_id")]
        src_header, src_rows = source_rows(source, entity=entity, ids=ids)
        by_id = {r["interaction_id"]: r for r in src_rows}
        added = [c for c in src_header if c != "interaction_id" and c not in header]
        shared = [c for c in src_header if c != "interaction_id" and c in header]
        disagree: dict[str, list[str]] = {c: [] for c in shared}
        unmatched: list[str] = []
        for row in rows:
            match = by_id.get(row.get("interaction_id", ""))
            if match is None:
                unmatched.append(row.get("interaction_id", ""))
                for c in added:
                    row[c] = ""
                continue
            for c in added:
                row[c] = match[c]
            for c in shared:
                if match[c] != "" and row[c] != "" and not _same(row[c], match[c]):
                    disagree[c].append(row["interaction_id"])
        matched = len(rows) - len(unmatched)
        table_ids = set(ids)
        header += added
        reports.append(
            {
                "source": str(source),
                "n_table": len(rows),
                "n_matched": matched,
                "n_table_unmatched": len(unmatched),
                "table_unmatched_ids": unmatched[:MAX_LISTED_IDS],
                "n_source": len(src_rows),
                "n_source_unmatched": sum(1 for r in src_rows if r["interaction_id"] not in table_ids),
                "added_columns": added,
                "disagreements": {c: {"n": len(v), "ids": v[:MAX_LISTED_IDS]} for c, v in disagree.items()},
            }
        )
    return header, rows, reports


def join_table(
    table: str | os.PathLike[str],
    sources: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    entity: EntityContext | None = None,
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Join ``sources`` onto the stabilization table at ``table``, write the joined table to
    ``out`` (atomically) and return it read back (validated) with the join reports."""
    header, csv_rows = read_rows(table, [c for c in STABILIZATION_COLUMNS if c not in ABSENT_COLUMNS])
    header, rows, reports = join_sources(header, [r.fields for r in csv_rows], sources, entity=entity)
    target = Path(out)
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow([row.get(c, "") for c in header])
    return read_table(target), reports


def report_lines(reports: Sequence[dict[str, Any]]) -> list[str]:
    """One line per source: matched, unmatched on each side, columns added, disagreements."""
    lines = []
    for r in reports:
        differ = ", ".join(f"{c} on {d['n']}" for c, d in r["disagreements"].items() if d["n"])
        lines.append(
            f"  joined {r['source']}: {r['n_matched']} of {r['n_table']} table rows matched"
            f" ({r['n_table_unmatched']} unmatched, kept with empty values), {r['n_source_unmatched']} source rows unused;"
            f" added {', '.join(r['added_columns']) or 'nothing'}" + (f"; disagree (table's kept): {differ}" if differ else "")
        )
    return lines
