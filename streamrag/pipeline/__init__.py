"""The speculative pipeline: Trigger → tool threads → Reflector → response (design §5).

- :mod:`~streamrag.pipeline.question` — ``SimQuestion``, what the simulator knows;
- :mod:`~streamrag.pipeline.triggers` — when to fire (plain decision objects + configs);
- :mod:`~streamrag.pipeline.reflectors` — which result to answer from (plain functions
  + configs);
- :mod:`~streamrag.pipeline.streaming` — the async components (input, threads,
  reflector shell, baseline arm) on a passed-in ``Clock``: the same code runs in
  virtual time and live.
"""
