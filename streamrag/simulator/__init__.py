"""The simulator: what assembles runs from the kernel and the pipeline (design §5, §7).

Above :mod:`streamrag.pipeline` and :mod:`streamrag.analysis`; below sweeps and the CLI.

- :mod:`~streamrag.simulator.scenario` — scenarios (TOML, built-in names) and overrides
  (the one rule of :mod:`streamrag.base.config.overrides`), resolved latency stages;
- :mod:`~streamrag.simulator.questions` — the simulator's questions, from data (through
  the analyzer, any scope) or from a stabilization table, and the population selection;
- :mod:`~streamrag.simulator.simulate` — plan each question, replay it in virtual time
  (1..N processes);
- :mod:`~streamrag.simulator.results` — per-question results derived from traces;
  :mod:`~streamrag.simulator.run_output` — the run's files written from them
  (``results.csv``, ``summary.json``, ``manifest.json``);
- :mod:`~streamrag.simulator.applies` — where each setting applies (refused elsewhere);
- :mod:`~streamrag.simulator.table_run` — a table replayed as a stream;
- sub-packages: :mod:`~streamrag.simulator.replay` (question plans, the closed form and the
  trace fold),
  :mod:`~streamrag.simulator.load` (sessions sharing capacity),
  :mod:`~streamrag.simulator.predict` (analytic answers),
  :mod:`~streamrag.simulator.compare` (runs held against each other) and
  :mod:`~streamrag.simulator.views` (a finished trace read back and drawn: lanes, terminal,
  PNG, Perfetto, a whole run's trace).

This package imports nothing at import time.

``run_files.py`` (a run folder's JSON files, as ``sweep/run_files.py`` is a sweep
folder's), ``sections.py`` (a scenario's sections; ``report/sections.py`` is a report's)
and ``simulate.py`` (the runner; ``sweep/figures/simulate.py`` draws simulate sweeps)
share their names with modules that do the same step elsewhere.
"""
