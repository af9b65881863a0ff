"""Runs held against each other: a published latency file, another run, the bound H.

- :mod:`~streamrag.simulator.compare.published` — a run against a published per-question
  latency file (``streamrag compare``);
- :mod:`~streamrag.simulator.compare.runs` — two runs, question by question;
- :mod:`~streamrag.simulator.compare.bound_rank` — does H rank questions by what they save.
"""
