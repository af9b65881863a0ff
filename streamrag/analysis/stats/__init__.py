"""The study's statistics from a stabilization table (``streamrag stats``, and ``analyze``).

- :mod:`~streamrag.analysis.stats.rq` — the research questions' statistics, the summary;
- :mod:`~streamrag.analysis.stats.params` — their parameters, declared once;
- :mod:`~streamrag.analysis.stats.streamable` — RQ2, the streamable fraction;
- :mod:`~streamrag.analysis.stats.groups` — RQ4, the sufficiency point by kind of question;
- :mod:`~streamrag.analysis.stats.robustness` — the robustness arms;
- :mod:`~streamrag.analysis.stats.inference` — the few scipy.stats results, without scipy.stats;
- :mod:`~streamrag.analysis.stats.report` — ``summary.json`` and the figures.
"""
