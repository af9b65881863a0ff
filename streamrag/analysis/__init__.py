"""Analysis: the stabilization study of a set of questions, from prefix rankings to statistics.

- :mod:`~streamrag.analysis.entry` — from an input to analyzed questions, the one entry;
  :mod:`~streamrag.analysis.execution` — how the rule runs over them (1..N processes);
- :mod:`~streamrag.analysis.stabilize` and :mod:`~streamrag.analysis.metrics` — the rule and
  its metrics; :mod:`~streamrag.analysis.table` — the stabilization table, read and written;
- :mod:`~streamrag.analysis.study` — ``streamrag analyze``'s outputs,
  :mod:`~streamrag.analysis.summary_model` its ``summary.json``,
  :mod:`~streamrag.analysis.console` its terminal report, :mod:`~streamrag.analysis.plots`
  its figures; :mod:`~streamrag.analysis.join` and :mod:`~streamrag.analysis.csvrows` —
  columns joined from elsewhere, CSV read row by row;
- sub-packages: :mod:`~streamrag.analysis.stats` (the research questions' statistics),
  :mod:`~streamrag.analysis.studies`, :mod:`~streamrag.analysis.evidence` (per-prefix
  evidence), :mod:`~streamrag.analysis.features` (per-word trigger features) and
  :mod:`~streamrag.analysis.global_scope` (one shared pool).

``table.py`` is the stabilization table, as ``analysis/features/table.py`` is the feature
table and ``sweep/table.py`` the sweep table: each folder's table, written and read.
``plots.py`` draws the study's figures; ``streamrag/plots.py`` is the public module that
re-exports them with every other plot function.
"""
