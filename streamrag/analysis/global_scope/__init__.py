"""Global scope: every question ranked against one shared pool of chunks.

- :mod:`~streamrag.analysis.global_scope.analyze` — the analyzer over the pool;
- :mod:`~streamrag.analysis.global_scope.gold` — which chunks of the pool are gold.
"""
