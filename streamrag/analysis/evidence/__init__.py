"""Per-prefix evidence: what triggers and reflectors read of each prefix's ranking.

- :mod:`~streamrag.analysis.evidence.prefixes` — the evidence of analyzed questions and
  its file, ``prefixes.parquet``;
- :mod:`~streamrag.analysis.evidence.read` — reading it back, whole or a question at a time;
- :mod:`~streamrag.analysis.evidence.synthetic` — evidence for a generated table,
  consistent with its rows.
"""
