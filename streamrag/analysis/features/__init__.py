"""Per-word trigger features: one row per question × word.

- :mod:`~streamrag.analysis.features.compute` — the features of each word heard;
- :mod:`~streamrag.analysis.features.schema` — the feature table's columns and types;
- :mod:`~streamrag.analysis.features.table` — the feature table, written and read.

``table.py`` is the feature table, as ``analysis/table.py`` is the stabilization table
and ``sweep/table.py`` the sweep table: each folder's table, written and read.
"""
