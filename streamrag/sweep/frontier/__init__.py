"""The frontier: a finished policy sweep read as a deployer's decision (``streamrag frontier``).

- :mod:`~streamrag.sweep.frontier.operating` — operating points on one frontier, and the optimum;
- :mod:`~streamrag.sweep.frontier.tables` — its three tables, declared;
- :mod:`~streamrag.sweep.frontier.leaderboard` — a markdown leaderboard and a one-column figure.
"""
