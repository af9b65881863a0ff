"""Retrieval: tokenizer → index → scorer → ranking, and incremental prefix rankings.

- :mod:`~streamrag.retrieval.tokenize`: ``Tokenizer`` role, the ``paper`` ``RegexTokenizer``;
- :mod:`~streamrag.retrieval.bm25`: ``BM25Params``, ``BM25Index`` (tf matrix, idf, score columns);
- :mod:`~streamrag.retrieval.ranking`: ``rank_topk``, ``rank_topk_rows``, ``full_ranking`` (score desc, id asc);
- :mod:`~streamrag.retrieval.prefix`: ``prefix_rankings`` (top-k of every word prefix);
- :mod:`~streamrag.retrieval.base`: the ``Retriever`` role and ``BM25Retriever``.
"""

from streamrag.retrieval.base import BM25Retriever, Retriever
from streamrag.retrieval.bm25 import BM25Index, BM25Params
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

__all__ = [
    "BM25Index",
    "BM25Params",
    "BM25Retriever",
    "EmptyCorpusError",
    "EmptyQueryError",
    "NothingToRankError",
    "PrefixRankings",
    "RegexTokenizer",
    "Retriever",
    "Tokenizer",
    "full_ranking",
    "prefix_rankings",
    "prefix_scores",
    "rank_topk",
    "rank_topk_rows",
    "word_tokens",
]
