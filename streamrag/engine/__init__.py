"""The simulation kernel: virtual time, randomness, latency and cadence models, traces.

The bottom layer of the simulator, below :mod:`streamrag.pipeline`; it imports nothing
from the pipeline, the simulator, analysis or retrieval (a test keeps it so).

- :mod:`~streamrag.engine.clock` — the narrow ``Clock`` protocol (``now_us``,
  ``sleep_us``, ``sleep_until_us``), ``VirtualClock``, ``RealClock``, ``Priority``; the
  only module that reads the wall clock;
- :mod:`~streamrag.engine.loop` — ``VirtualEventLoop`` (asyncio on virtual time,
  deterministic same-instant order, deadlock detection), ``run_virtual``, ``run_real``;
- :mod:`~streamrag.engine.rng` — one random stream per (question, component);
- :mod:`~streamrag.engine.latency` / :mod:`~streamrag.engine.profiles` — per-stage
  latency models and the calibration profiles (built-in ones in ``calibration/``, or
  profile files such as ``streamrag calibrate`` writes);
- :mod:`~streamrag.engine.cadence` / :mod:`~streamrag.engine.timings` — when words
  arrive (modelled, or real word times per question from a file);
- :mod:`~streamrag.engine.trace_events` — trace events, one model per kind;
  :mod:`~streamrag.engine.trace` — their recorder and readers;
  :mod:`~streamrag.engine.trace_file` — the ``trace.jsonl`` file.

The simulator that assembles runs (scenarios, inputs, runner, results, trace views)
is :mod:`streamrag.simulator`, above the pipeline. This package imports nothing at
import time.
"""
