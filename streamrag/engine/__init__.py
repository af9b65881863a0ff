"""The simulation engine: virtual time, latency and cadence models, runner, traces.

Layers (each usable alone):

- :mod:`~streamrag.engine.clock` — the ``Clock`` protocol (``now_us``, ``sleep_us``,
  ``sleep_until_us`` and float-second variants), ``VirtualClock``, ``RealClock``,
  ``Priority``;
- :mod:`~streamrag.engine.loop` — ``VirtualEventLoop`` (asyncio on virtual time,
  deterministic same-instant order, deadlock detection), ``run_virtual``, ``run_real``;
- :mod:`~streamrag.engine.latency` / :mod:`~streamrag.engine.profiles` — per-stage
  latency models and the calibration profiles of ``calibration/``;
- :mod:`~streamrag.engine.cadence` — when words arrive;
- :mod:`~streamrag.engine.rng` — one random stream per (question, component);
- :mod:`~streamrag.engine.scenario` — scenarios (TOML + ``--set`` overrides);
- :mod:`~streamrag.engine.trace` — trace events and their recorder;
- :mod:`~streamrag.engine.runner` / :mod:`~streamrag.engine.results` — replay
  questions (1..N processes), derive results from traces, write the run's outputs;
- :mod:`~streamrag.engine.inputs` — questions from a stabilization table, selection;
- :mod:`~streamrag.engine.traceview` — terminal, PNG and Perfetto views of a trace.

The pipeline components themselves live in :mod:`streamrag.pipeline`. This package
imports nothing at import time.
"""
