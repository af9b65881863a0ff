"""The ``Retriever`` and ``Rankings`` roles, and the BM25 retriever of one question.

A retriever owns one corpus — one question's chunks (per-question scope) or a pool shared
by every question (global scope) — and ranks it for every word prefix of a query:
``rank(query, k=k)`` returns :class:`Rankings`. Every retriever in both scopes goes
through this seam: :class:`BM25Retriever` and
:class:`~streamrag.retrieval.dense.retriever.DenseRetriever` per question,
:class:`~streamrag.retrieval.global_pool.scorer.PrefixScorer` and
:class:`~streamrag.retrieval.dense.pooled.DensePoolScorer` over a pool. Which one runs is
chosen by kind in :mod:`streamrag.retrieval.kinds`, the one registry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from streamrag.retrieval.bm25 import BM25Index, BM25Params
from streamrag.retrieval.prefix import PrefixRankings, prefix_rankings
from streamrag.retrieval.tokenize import Tokenizer

__all__ = ["BM25Retriever", "ChunkScores", "Postings", "Rankings", "Retriever", "chunk_coverage"]


class Postings(Protocol):
    """An index that lists, per token, the chunks holding it (ids ascending)."""

    def postings(self, token: str) -> tuple[np.ndarray, np.ndarray]: ...


def chunk_coverage(index: Postings, tokens: Sequence[str], chunks: np.ndarray) -> np.ndarray:
    """Per chunk of ``chunks``: ``|{i : tokens_i ∈ chunk}| / len(tokens)``, float64 (0.0
    without tokens). Pass the distinct tokens for the share of distinct tokens."""
    hits = np.zeros(chunks.shape[0], dtype=np.float64)
    if not tokens:
        return hits
    for token in tokens:
        ids, _ = index.postings(token)
        if ids.shape[0]:
            # Search with the postings' dtype (int32): with int64 keys numpy would first
            # copy the whole postings list to int64, O(df) per token instead of O(log df).
            keys = chunks.astype(ids.dtype, copy=False)
            pos = np.minimum(np.searchsorted(ids, keys), ids.shape[0] - 1)
            hits += ids[pos] == keys
    return hits / len(tokens)


class ChunkScores(Protocol):
    """Per-chunk values indexable by chunk id: a float64 array (N,) per question, or
    :class:`~streamrag.retrieval.global_pool.rankings.ChunkValues` (the returned chunks only)
    over a pool."""

    def __getitem__(self, chunk_idx: int, /) -> Any: ...


@runtime_checkable
class Rankings(Protocol):
    """The top-k of every prefix ``q[1:t]`` of one query, in either scope.

    ``topk[t-1]`` is the int32 row of ``topk(t)`` (best first); ``final_scores[c]`` the
    score of the *full* query for chunk c (BM25 score, or cosine for dense retrievers),
    defined at least for every chunk in ``topk``; ``final_tokens`` the full query's
    lexical tokens with repetitions.
    """

    @property
    def n_words(self) -> int: ...

    @property
    def k(self) -> int: ...

    @property
    def topk(self) -> np.ndarray: ...

    @property
    def top1(self) -> np.ndarray: ...

    @property
    def final_scores(self) -> ChunkScores: ...

    @property
    def final_tokens(self) -> tuple[str, ...]: ...


@runtime_checkable
class Retriever(Protocol):
    """Role: rank the chunks of one corpus for every prefix of a query."""

    @property
    def n_chunks(self) -> int:
        """N, the number of chunks (ids 0 … N−1)."""
        ...

    def rank(self, query: str, *, k: int = 3) -> Rankings:
        """Top-k of every prefix ``q[1:t]``, t = 1 … n (raises ``NothingToRankError`` if n = 0 or N = 0)."""
        ...


class BM25Retriever:
    """BM25 over a list of chunks (chunk id = position); satisfies :class:`Retriever`.

    ``BM25Retriever(chunks)`` uses the ``paper`` preset (regex tokenizer, k1 = 1.5,
    b = 0.75, paper idf). The underlying :class:`BM25Index` is ``self.index``.
    """

    __slots__ = ("index",)

    def __init__(
        self,
        chunks: Sequence[str],
        params: BM25Params | None = None,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self.index = BM25Index.build(chunks, tokenizer=tokenizer, params=params)

    @classmethod
    def from_index(cls, index: BM25Index) -> BM25Retriever:
        """Wrap an existing index (e.g. one loaded from a cache)."""
        self = cls.__new__(cls)
        self.index = index
        return self

    @property
    def n_chunks(self) -> int:
        return self.index.n_docs

    def rank(self, query: str, *, k: int = 3) -> PrefixRankings:
        return prefix_rankings(self.index, query, k=k)

    prefix_rankings = rank

    def score_chunk(self, chunk_idx: int, query: str) -> float:
        """BM25 score of the full query for one chunk (equals ``final_scores[chunk_idx]``)."""
        if not 0 <= chunk_idx < self.index.n_docs:
            raise IndexError(f"chunk_idx {chunk_idx} out of range for {self.index.n_docs} chunks")
        return float(self.index.score(self.index.tokenizer(query))[chunk_idx])

    def token_coverage(self, chunk_idx: int, query: str) -> float:
        """``|{i : token_i of query ∈ chunk}| / #tokens``; 0.0 when the query has no token."""
        return self.index.tokens_coverage(chunk_idx, self.index.tokenizer(query))

    def __repr__(self) -> str:
        return f"BM25Retriever({self.index!r})"
