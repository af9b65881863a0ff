"""Load runs: many sessions sharing finite capacity on one virtual clock.

- :mod:`~streamrag.simulator.load.workload` — when sessions arrive, which question each asks;
- :mod:`~streamrag.simulator.load.checks` — what a load run may ask for, checked first;
- :mod:`~streamrag.simulator.load.run` — the run: both systems, their sessions and resources;
- :mod:`~streamrag.simulator.load.measures` — what each session measured, read off its events;
- :mod:`~streamrag.simulator.load.windows` — the run in fixed windows of arrival time;
- :mod:`~streamrag.simulator.load.output` — ``sessions.csv``, ``summary.json``, ``trace.jsonl``.

``run.py`` and ``output.py`` are the load run and its files, named as the advice's
(``advice/run.py``, ``advice/output.py``): one step, the same name in every folder.
"""
