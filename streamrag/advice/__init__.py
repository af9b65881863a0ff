"""``streamrag advise``: a deployer's situation in, one row per policy and a recommendation out.

- :mod:`~streamrag.advice.situation` — the situation, stated once (flags or TOML), and the G/F ends;
- :mod:`~streamrag.advice.sweep_end` — one end through the frontier (its grid, sweep and frontier);
- :mod:`~streamrag.advice.needs` — what a policy needs at run time (its trigger's declaration,
  the Speculator's check);
- :mod:`~streamrag.advice.rows` — per policy, its best operating point within the budget and its users;
- :mod:`~streamrag.advice.load` — ``predict``'s break-even and a load simulation at the stated rate;
- :mod:`~streamrag.advice.recommend` — the recommendation, why each other lost, robustness;
- :mod:`~streamrag.advice.output` — the files and the console table;
- :mod:`~streamrag.advice.run` — :func:`~streamrag.advice.run.advise`, the whole.

``load.py``, ``output.py``, ``page.py`` and ``run.py`` are the advice's own part of what their
namesakes are elsewhere (``simulator/predict/load.py``, ``simulator/load/output.py`` and
``run.py``, ``report/page.py``); the folder says whose they are, and the names keep the step
each does the same in every folder.
"""
