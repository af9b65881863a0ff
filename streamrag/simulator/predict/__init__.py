"""Analytic answers, without replaying: the predicted saving, the load it stands, the optimum.

- :mod:`~streamrag.simulator.predict.atoms` — latency as a discrete distribution of a few atoms;
- :mod:`~streamrag.simulator.predict.saving` — the saving per question and population,
  its fire schedule from the streaming arm's own machine on the nominal timeline;
- :mod:`~streamrag.simulator.predict.queueing` and :mod:`~streamrag.simulator.predict.queue`
  — queueing formulas, and the streaming arm's tool queue with withdrawn jobs;
- :mod:`~streamrag.simulator.predict.load` — waits of both systems and the break-even load;
- :mod:`~streamrag.simulator.predict.gaining` — who stops gaining at a load, every timeline at once;
- :mod:`~streamrag.simulator.predict.optimum` — the best fire schedule of a question.

``load.py`` is the prediction under load; its namesakes are the advice's load step
(``advice/load.py``) and the load sweeps' figures (``sweep/figures/load.py``).
"""
