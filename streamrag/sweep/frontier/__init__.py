"""The frontier: a finished policy sweep read as a deployer's decision (``streamrag frontier``).

- :mod:`~streamrag.sweep.frontier.operating` — operating points on one frontier, and the optimum;
- :mod:`~streamrag.sweep.frontier.tables` — its three tables, declared;
- :mod:`~streamrag.sweep.frontier.leaderboard` — the leaderboard (markdown, and rows for a page) and the files;
- :mod:`~streamrag.sweep.frontier.figure` — the one-column figure, its legend grouped by policy kind.

``figure.py`` is the frontier's one figure, as ``calibration/figure.py`` is the
calibration's: each folder says whose figure it is.
"""
