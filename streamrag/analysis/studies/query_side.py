"""Query-side columns of a question file: what can be known from the question alone.

A question file is JSON lines with, per object, a unique ``interaction_id`` and a
``query`` string (``question_type``, ``domain`` and ``static_or_dynamic`` are copied when
present). It needs no pages: the CRAG v4 question list (2,706 questions) is one. Columns
(:data:`QUERY_COLUMNS`, one row per question, file order):

- ``n_words`` — ``len(query.split())`` (design §2);
- ``question_word`` — the query's first token (lowercase ``[a-z0-9]+``, the paper
  tokenizer) when it is a question word of :data:`QUESTION_WORDS`, else ``other``;
- ``t_entity`` (``entity="prefix"``: the first named entity heard, the tagger on each
  prefix) or ``t_entity_full`` (``entity="full"``: the whole question tagged, the anchor's
  rule) — :func:`streamrag.analysis.studies.entity.entity_columns`, exactly as ``analyze
  --entity-predictor [--entity-context full]`` computes it (empty when no entity is found).

- ``t_anchor`` — with ``anchor_index`` (an index over a corpus, e.g. the global pool of
  ``--corpus DIR``): :func:`streamrag.analysis.studies.anchor.t_anchor`, the first rare word of that
  corpus; it needs the corpus' document frequencies, so without one it is absent (a
  per-question table written by ``analyze`` carries its own).

These columns join onto any stabilization table by ``interaction_id``
(:mod:`streamrag.analysis.join`).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from streamrag.analysis.studies.anchor import LexicalIndex, t_anchor
from streamrag.analysis.studies.entity import EntityContext
from streamrag.base.atomic import atomic_path
from streamrag.base.columns import TableKind
from streamrag.base.errors import RecordError
from streamrag.base.lines import iter_question_objects
from streamrag.data.stabilization_row import DTYPES
from streamrag.retrieval.tokenize import word_tokens

__all__ = ["QUERIES", "QUERY_COLUMNS", "QUESTION_WORDS", "query_columns", "question_word", "write_query_table"]

QUESTION_WORDS: frozenset[str] = frozenset(
    [
        "what",
        "who",
        "whom",
        "whose",
        "which",
        "when",
        "where",
        "why",
        "how",
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "will",
        "would",
        "has",
        "have",
        "had",
        "should",
        "shall",
        "may",
    ]
)
"""First words that open a question: the wh-words and the auxiliaries of yes/no questions."""

QUERY_COLUMNS: tuple[str, ...] = (
    "interaction_id",
    "question_type",
    "domain",
    "static_or_dynamic",
    "n_words",
    "question_word",
    "t_entity",
    "t_entity_full",
    "t_anchor",
)
"""Columns of a query table, in the order written (the entity column and ``t_anchor`` only when computed)."""

QUERIES = TableKind("queries", {name: DTYPES.get(name, "str") for name in QUERY_COLUMNS})
"""``queries.csv``, declared: the stabilization row's types (:mod:`streamrag.data.stabilization_row`),
``question_word`` text."""

_COPIED = ("question_type", "domain", "static_or_dynamic")


def question_word(query: str) -> str:
    """The first token of ``query`` when it is in :data:`QUESTION_WORDS`, else ``"other"``."""
    for tokens in word_tokens(query):
        if tokens:
            return tokens[0] if tokens[0] in QUESTION_WORDS else "other"
    return "other"


def query_columns(
    path: str | os.PathLike[str],
    *,
    entity: EntityContext | None = None,
    entity_ids: Collection[str] | None = None,
    progress: Callable[[int], None] | None = None,
    anchor_index: LexicalIndex | None = None,
) -> list[dict[str, Any]]:
    """One dict per question of the file at ``path`` (:data:`QUERY_COLUMNS`).

    ``entity`` computes the entity column of that context (needs the ``ner`` extra);
    ``entity_ids`` limits the tagging to those questions (the others get it empty), so a join tags only
    the questions of its table. Raises :class:`~streamrag.base.errors.RecordError`
    naming file, line and field for a missing or empty ``query``.
    """
    if entity is not None:
        from streamrag.analysis.studies.entity import ENTITY_COLUMNS, entity_columns

    source = Path(path)
    rows: list[dict[str, Any]] = []
    for line_no, qid, obj in iter_question_objects(source):
        query = obj.get("query")
        if not isinstance(query, str) or not query.split():
            raise RecordError(str(source), line_no, "query", "missing or empty (a question needs at least one word)")
        row: dict[str, Any] = {"interaction_id": qid}
        for column in _COPIED:
            value = obj.get(column)
            row[column] = value if isinstance(value, str) else None
        row["n_words"] = len(query.split())
        row["question_word"] = question_word(query)
        if entity is not None:
            wanted = entity_ids is None or qid in entity_ids
            row.update(entity_columns(query, entity) if wanted else {ENTITY_COLUMNS[entity]: None})
        if anchor_index is not None:
            row["t_anchor"] = t_anchor(anchor_index, word_tokens(query))
        rows.append(row)
        if progress is not None:
            progress(1)
    return rows


def write_query_table(rows: list[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write ``rows`` as CSV atomically: :data:`QUERY_COLUMNS` present in the rows, empty for None."""
    columns = [c for c in QUERY_COLUMNS if rows and c in rows[0]] or ["interaction_id"]
    target = Path(path)
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if row.get(c) is None else row[c] for c in columns])
    return target
