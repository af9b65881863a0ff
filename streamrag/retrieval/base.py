"""The ``Retriever`` role and its BM25 implementation.

A retriever owns one corpus (one question's chunks in per-question scope) and answers
the two questions the rest of streamrag asks:

- the analyzer and the simulator: the top-k of every word prefix (:class:`PrefixRankings`);
- the heuristic reflector: how well one chunk matches the *full* query — its retrieval
  score (sufficient iff ≥ 2.0 for BM25) and the share of the query's tokens it contains
  (sufficient iff ≥ 0.4).

A dense retriever satisfies the same protocol (its ``score_chunk`` is then a similarity,
and ``token_coverage`` stays lexical).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from streamrag.retrieval.bm25 import BM25Index, BM25Params
from streamrag.retrieval.prefix import PrefixRankings, prefix_rankings
from streamrag.retrieval.tokenize import Tokenizer

__all__ = ["BM25Retriever", "Retriever"]


@runtime_checkable
class Retriever(Protocol):
    """Role: rank the chunks of one corpus for every prefix of a query."""

    @property
    def n_chunks(self) -> int:
        """N, the number of chunks (ids 0 … N−1)."""
        ...

    def prefix_rankings(self, query: str, *, k: int = 3) -> PrefixRankings:
        """Top-k of every prefix ``q[1:t]``, t = 1 … n (raises ``NothingToRankError`` if n = 0 or N = 0)."""
        ...

    def score_chunk(self, chunk_idx: int, query: str) -> float:
        """Retrieval score of chunk ``chunk_idx`` for the whole ``query``."""
        ...

    def token_coverage(self, chunk_idx: int, query: str) -> float:
        """Share of the query's tokens (with repetition) occurring in chunk ``chunk_idx``, in [0, 1]."""
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

    def prefix_rankings(self, query: str, *, k: int = 3) -> PrefixRankings:
        return prefix_rankings(self.index, query, k=k)

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
