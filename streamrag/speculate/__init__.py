"""Speculation for agents: the :class:`~streamrag.speculate.speculator.Speculator` and
its adapters.

- :mod:`~streamrag.speculate.speculator` — hears a turn's partial transcripts (with
  revisions), fires cancellable calls of any async tool under a scenario's trigger and
  caps, and at end of turn returns the result to use or calls the full query;
- :mod:`~streamrag.speculate.scenario_check` — which scenarios a live turn can follow;
- :mod:`~streamrag.speculate.turn` — the parts of one turn, and its report read off its trace;
- :mod:`~streamrag.speculate.judging` — what a call returned and the reflectors that
  judge it (the heuristic rule on retrieval hits, ``unchanged``, any callable);
- :mod:`~streamrag.speculate.livekit` — LiveKit Agents (extra ``livekit``);
- :mod:`~streamrag.speculate.pipecat` — Pipecat (extra ``pipecat``).
- :mod:`~streamrag.speculate.telemetry` — a turn's OpenTelemetry spans (``Speculator(tracer=...)``,
  extra ``otel``), and :mod:`~streamrag.speculate.span_files` — finished spans as OTLP or
  Jaeger JSON, the files ``streamrag calibrate`` reads.

A layer above the simulator (it reads scenarios) and below ``live``, which runs its
measured turns on it. The adapters import their frameworks only when imported.
"""
