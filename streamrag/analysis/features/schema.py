"""The per-word feature table's columns, declared once with their types.

:data:`FEATURES` gives the table's Arrow schema (``FEATURES.schema()``) and a frame of it
in those dtypes (``FEATURES.read_csv(path)``); the column tuples the writer and the
models' reader use (:mod:`streamrag.analysis.features.compute`,
:mod:`streamrag.analysis.features.table`) are derived from the same declaration.
"""

from __future__ import annotations

from streamrag.base.columns import Dtype, TableKind

__all__ = ["ANCHOR_COLUMNS", "EXTRA_COLUMNS", "FEATURES"]

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
"""The feature table, declared: every column's type."""

ANCHOR_COLUMNS: tuple[str, ...] = tuple(_ANCHOR)
"""The anchor's header, in its order (``trigger_features.split{0,1}.csv``)."""
EXTRA_COLUMNS: tuple[str, ...] = tuple(_EXTRA)
"""Ours, after the anchor's."""
