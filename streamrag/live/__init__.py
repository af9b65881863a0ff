"""Live mode: the simulator's pipeline on the wall clock, with real tools and real words.

- :mod:`~streamrag.live.backends` — in-process BM25 over a corpus, and an HTTP tool calling
  a retrieval endpoint (both :class:`~streamrag.pipeline.tools.Tool` s);
- :mod:`~streamrag.live.server` — ``streamrag serve``: a corpus's BM25 over HTTP (aiohttp);
- :mod:`~streamrag.live.words` — where words come from: stdin as typed, a timestamped
  transcript, a known question replayed at its cadence;
- :mod:`~streamrag.live.session` — one turn through both arms on a real clock, traced
  exactly as a simulated question is (a :class:`~streamrag.speculate.speculator.Speculator`
  turn in shadow mode);
- :mod:`~streamrag.live.display` — the terminal view, event by event;
- :mod:`~streamrag.live.fidelity` — the simulator against the live runs of the same questions.
- :mod:`~streamrag.live.span_tracer` — ``live --spans``: the run's OpenTelemetry spans, kept in
  memory and written as one OTLP or Jaeger JSON file (extra ``otel``).

A layer of its own above the simulator and the Speculator (it builds questions and
profiles the simulator defines); nothing below imports it. Nothing is imported at import time.
"""
