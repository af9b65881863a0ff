"""BM25 over one pool of chunks shared by every question (global scope).

- :mod:`~streamrag.retrieval.global_pool.index` — ``GlobalIndex``: postings with
  precomputed impacts; :mod:`~streamrag.retrieval.global_pool.store` — saved, memory-mapped;
- :mod:`~streamrag.retrieval.global_pool.scorer` — ``PrefixScorer``: the top-k of every
  prefix without sorting N scores; its numpy code :mod:`~streamrag.retrieval.global_pool.numpy_pool`
  and compiled twin :mod:`~streamrag.retrieval.global_pool.kernel` (numba), the block-max
  kernel :mod:`~streamrag.retrieval.global_pool.blockmax` with its per-term block data
  :mod:`~streamrag.retrieval.global_pool.blocks`, the compiled ranking order both kernels
  share :mod:`~streamrag.retrieval.global_pool.order`, their constants
  :mod:`~streamrag.retrieval.global_pool.bounds`;
- :mod:`~streamrag.retrieval.global_pool.rankings` — what a ranking over the pool returns.
"""
