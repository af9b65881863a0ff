"""Studies beside the research questions, each answering one question about the benchmark.

- :mod:`~streamrag.analysis.studies.entity` and
  :mod:`~streamrag.analysis.studies.entity_position` — the anchor study's entity predictor,
  and its conclusion put to the test;
- :mod:`~streamrag.analysis.studies.anchor` and :mod:`~streamrag.analysis.studies.query_side`
  — query-side predictors of stabilization;
- :mod:`~streamrag.analysis.studies.dual_gold` and
  :mod:`~streamrag.analysis.studies.grounding_precision` — how the gold rule moves the results;
- :mod:`~streamrag.analysis.studies.label_audit` — a sample for a human to judge the gold label;
- :mod:`~streamrag.analysis.studies.retrievers` — BM25 against dense retrieval.
"""
