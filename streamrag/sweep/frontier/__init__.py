"""The frontier: a finished policy sweep read as a deployer's decision (``streamrag frontier``).

- :mod:`~streamrag.sweep.frontier.points` — operating points on one frontier, and the optimum;
- :mod:`~streamrag.sweep.frontier.tables` — its three tables, declared;
- :mod:`~streamrag.sweep.frontier.report` — a markdown leaderboard and a one-column figure.
"""
