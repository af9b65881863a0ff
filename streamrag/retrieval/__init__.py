"""Retrieval: tokenizer → index → scorer → ranking, and incremental prefix rankings.

- :mod:`~streamrag.retrieval.tokenize`: ``Tokenizer`` role, the ``paper`` ``RegexTokenizer``;
- :mod:`~streamrag.retrieval.bm25`: ``BM25Params``, ``BM25Index`` (tf matrix, idf, score columns);
- :mod:`~streamrag.retrieval.ranking`: ``rank_topk``, ``rank_topk_rows``, ``full_ranking`` (score desc, id asc);
- :mod:`~streamrag.retrieval.prefix`: ``prefix_rankings`` (top-k of every word prefix);
- :mod:`~streamrag.retrieval.base`: the ``Retriever`` role and ``BM25Retriever``;
- :mod:`~streamrag.retrieval.plugin`: the ``ChunkScorer`` role (a user's own retriever class,
  ``--retriever path/to/file.py:Class``; public as ``streamrag.ChunkScorer``) and ``PythonRetriever``,
  which ranks every prefix with it;
- :mod:`~streamrag.retrieval.dense.retriever`: ``DenseRetriever`` (cosine of embeddings), ``exact_topk``
  (blocked brute force at any corpus size); :mod:`~streamrag.retrieval.dense.embed`: the
  ``Embedder`` role and ``HashingEmbedder``; :mod:`~streamrag.retrieval.dense.minilm`:
  all-MiniLM-L6-v2 (the ``dense`` extra, loaded lazily); :mod:`~streamrag.retrieval.dense.embed_cache`:
  ``EmbeddingCache``, ``CachedEmbedder``;
- :mod:`~streamrag.retrieval.global_pool.index`: ``GlobalIndex`` (postings with precomputed
  impacts, for one corpus shared by all questions); :mod:`~streamrag.retrieval.global_pool.scorer`:
  ``PrefixScorer``, ``global_prefix_rankings`` (top-k of every prefix without sorting N
  scores; its numpy code in ``numpy_pool``, compiled kernels in ``kernel`` and ``blockmax``
  with their ranking order in ``order``, the latter's per-term block data in ``blocks``); :mod:`~streamrag.retrieval.global_pool.store`:
  ``save_index``, ``load_index`` (memory-mapped).

``base.py`` holds the roles the rest of this package builds on, the name Python packages
give such a module; ``engine/resources/base.py`` is the resources' own, as in SimPy.
"""

import importlib
from typing import TYPE_CHECKING, Any

# Names load on first use (PEP 562): importing one submodule — the retriever registry for
# a scenario, say — does not import the whole package (scipy.sparse, the dense code).
_HOME = {
    "BM25Retriever": "base",
    "Retriever": "base",
    "BM25Index": "bm25",
    "BM25Params": "bm25",
    "DenseRetriever": "dense.retriever",
    "exact_topk": "dense.retriever",
    "Embedder": "dense.embed",
    "HashingEmbedder": "dense.embed",
    "GlobalIndex": "global_pool.index",
    "ChunkValues": "global_pool.scorer",
    "GlobalPrefixRankings": "global_pool.scorer",
    "PrefixScorer": "global_pool.scorer",
    "global_prefix_rankings": "global_pool.scorer",
    "load_index": "global_pool.store",
    "save_index": "global_pool.store",
    "EmptyCorpusError": "prefix",
    "EmptyQueryError": "prefix",
    "NothingToRankError": "prefix",
    "PrefixRankings": "prefix",
    "prefix_rankings": "prefix",
    "prefix_scores": "prefix",
    "full_ranking": "ranking",
    "rank_topk": "ranking",
    "rank_topk_rows": "ranking",
    "RegexTokenizer": "tokenize",
    "Tokenizer": "tokenize",
    "word_tokens": "tokenize",
}

if TYPE_CHECKING:
    from streamrag.retrieval.base import BM25Retriever, Retriever
    from streamrag.retrieval.bm25 import BM25Index, BM25Params
    from streamrag.retrieval.dense.embed import Embedder, HashingEmbedder
    from streamrag.retrieval.dense.retriever import DenseRetriever, exact_topk
    from streamrag.retrieval.global_pool.index import GlobalIndex
    from streamrag.retrieval.global_pool.scorer import ChunkValues, GlobalPrefixRankings, PrefixScorer, global_prefix_rankings
    from streamrag.retrieval.global_pool.store import load_index, save_index
    from streamrag.retrieval.prefix import (
        EmptyCorpusError,
        EmptyQueryError,
        NothingToRankError,
        PrefixRankings,
        prefix_rankings,
        prefix_scores,
    )
    from streamrag.retrieval.ranking import full_ranking, rank_topk, rank_topk_rows
    from streamrag.retrieval.tokenize import RegexTokenizer, Tokenizer, word_tokens


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'streamrag.retrieval' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"streamrag.retrieval.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BM25Index",
    "BM25Params",
    "BM25Retriever",
    "ChunkValues",
    "DenseRetriever",
    "Embedder",
    "EmptyCorpusError",
    "EmptyQueryError",
    "GlobalIndex",
    "GlobalPrefixRankings",
    "HashingEmbedder",
    "NothingToRankError",
    "PrefixRankings",
    "PrefixScorer",
    "RegexTokenizer",
    "Retriever",
    "Tokenizer",
    "exact_topk",
    "full_ranking",
    "global_prefix_rankings",
    "load_index",
    "prefix_rankings",
    "prefix_scores",
    "rank_topk",
    "rank_topk_rows",
    "save_index",
    "word_tokens",
]
