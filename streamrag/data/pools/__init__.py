"""Global corpora: one pool of chunks shared by every question.

- :mod:`~streamrag.data.pools.corpus` — the pool, with where each chunk came from;
- :mod:`~streamrag.data.pools.cache` — a chunked corpus file cached on disk;
- :mod:`~streamrag.data.pools.crag_pages` — the real CRAG pages available offline, pooled;
- :mod:`~streamrag.data.pools.beir` — corpora in BEIR layout, gold from relevance judgments.
"""
