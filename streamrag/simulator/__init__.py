"""The simulator: what assembles runs from the kernel and the pipeline (design §5, §7).

Above :mod:`streamrag.pipeline` and :mod:`streamrag.analysis`; below sweeps and the CLI.

- :mod:`~streamrag.simulator.scenario` — scenarios (TOML, built-in names) and overrides
  (the one rule of :mod:`streamrag.base.overrides`), resolved latency stages;
- :mod:`~streamrag.simulator.questions` — the simulator's questions, from data (through
  the analyzer, any scope) or from a stabilization table, and the population selection;
- :mod:`~streamrag.simulator.simulate` — plan each question, replay it in virtual time
  (1..N processes), write the run's outputs;
- :mod:`~streamrag.simulator.results` — per-question results derived from traces, the
  run summary;
- :mod:`~streamrag.simulator.traceview` — terminal, PNG and Perfetto views of a trace.

This package imports nothing at import time.
"""
