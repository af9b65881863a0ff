"""Per-word trigger features: one row per question × word.

- :mod:`~streamrag.analysis.features.compute` — the features of each word heard;
- :mod:`~streamrag.analysis.features.schema` — the feature table's columns and types;
- :mod:`~streamrag.analysis.features.table` — the feature table, written and read.
"""
