"""Dense retrieval: cosine similarity of sentence embeddings, behind the ``Retriever`` role.

For a query prefix ``q[1:t]`` (the first t words joined by one space, design §2) and a
chunk c, both embedded as unit vectors by an :class:`~streamrag.retrieval.dense.embed.Embedder`,

    score(q[1:t], c) = cos(e(q[1:t]), e(c)) = e(q[1:t]) · e(c)        ∈ [−1, 1]

and rankings follow §3: score descending, ties by chunk id ascending (``rank_topk``).
Unlike BM25 there is no incremental identity — every prefix is its own embedding — so
``prefix_rankings`` embeds the n prefixes in one batch and ranks an (n, N) score matrix.

**Exact, order-independent scores.** Embeddings are rounded to the grid 2⁻²⁴ before any
product (:func:`to_grid`; the change is ≤ 2⁻²⁵ per component, ≤ 10⁻⁶ on a cosine).
A product of two grid values is a multiple of 2⁻⁴⁸, and every partial sum of a dot
product is bounded by ‖x‖·‖y‖ ≈ 1 (Cauchy–Schwarz), so it is an integer multiple of 2⁻⁴⁸
below 2⁴⁹·2⁻⁴⁸: representable exactly in float64. Hence a score is the same float
whatever the summation order — numpy/BLAS blocking, threads, a matrix product or one
dot, per question or over a global corpus in blocks — and ties (e.g. duplicate chunks)
are exact ties. ``score_chunk`` therefore equals ``final_scores[c]`` bit for bit, and
:func:`exact_topk` over 10⁶ chunks in blocks equals one full product. (Grid values fit
float32 exactly, so a large corpus is stored as float32 at half the memory.)

The lexical side stays lexical: ``token_coverage`` (the heuristic reflector's 40 % rule),
``final_tokens`` and the analyzer's anchors use the ``paper`` tokenizer and a BM25 index
of the same chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from streamrag.retrieval.base import chunk_coverage
from streamrag.retrieval.bm25 import BM25Index
from streamrag.retrieval.dense.embed import Embedder
from streamrag.retrieval.prefix import PrefixRankings
from streamrag.retrieval.ranking import check_rankable, rank_topk_rows
from streamrag.retrieval.tokenize import Tokenizer

__all__ = [
    "GRID_BITS",
    "DenseRetriever",
    "LexicalIndex",
    "cosine_scores",
    "embed_corpus",
    "exact_topk",
    "minilm_embedder",
    "to_grid",
]

GRID_BITS = 24
_GRID = float(1 << GRID_BITS)
# Score-matrix cells per block (float64: 32 MB) and chunk rows converted to float64 at a
# time (16384 × 384 × 8 B = 50 MB): bounded memory at any corpus size.
_BLOCK_CELLS = 1 << 22
_MAX_BLOCK_ROWS = 1 << 14
# Texts per embed call when embedding a corpus: bounds the tokenizer's per-call memory
# (Python lists of word-piece ids) while keeping batches full.
_CORPUS_SLICE = 8192


class LexicalIndex(Protocol):
    """What the dense retriever needs from a lexical index of the same chunks: the
    tokenizer and per-token postings (chunk ids ascending). ``BM25Index`` (per question)
    and the global-scope inverted index both provide it."""

    @property
    def n_docs(self) -> int: ...

    @property
    def tokenizer(self) -> Tokenizer: ...

    def postings(self, token: str) -> tuple[np.ndarray, np.ndarray]: ...


def to_grid(embeddings: np.ndarray) -> np.ndarray:
    """Embeddings rounded to multiples of 2⁻²⁴, as float64 (exact in float32 too)."""
    return np.rint(np.asarray(embeddings, dtype=np.float64) * _GRID) / _GRID


def embed_corpus(texts: Sequence[str], embedder: Embedder, *, progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Grid embeddings of a corpus, float32 (N, d), embedded slice by slice (bounded memory).

    ``progress`` receives the number of texts done. Use a
    :class:`~streamrag.retrieval.dense.embed_cache.CachedEmbedder` to embed each chunk once across runs.
    """
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    for start in range(0, len(texts), _CORPUS_SLICE):
        part = list(texts[start : start + _CORPUS_SLICE])
        out[start : start + len(part)] = to_grid(embedder.embed(part))  # exact in float32
        if progress is not None:
            progress(start + len(part))
    return out


def _block_rows(n_queries: int, k: int) -> int:
    return int(min(_MAX_BLOCK_ROWS, max(k, _BLOCK_CELLS // max(n_queries, 1))))


def cosine_scores(queries: np.ndarray, embeddings: np.ndarray) -> np.ndarray:
    """float64 (m, N): ``queries @ embeddings.T`` for grid values, computed in chunk blocks.

    Exact (see the module docstring), so identical to one unblocked product.
    """
    q = np.asarray(queries, dtype=np.float64)
    n = embeddings.shape[0]
    out = np.empty((q.shape[0], n), dtype=np.float64)
    step = _MAX_BLOCK_ROWS
    for start in range(0, n, step):
        out[:, start : start + step] = q @ np.asarray(embeddings[start : start + step], dtype=np.float64).T
    return out


def exact_topk(queries: np.ndarray, embeddings: np.ndarray, k: int) -> np.ndarray:
    """Top-k chunk ids of every query row by cosine, over any number of chunks: int32 (m, min(k, N)).

    ``queries`` (m, d) and ``embeddings`` (N, d) hold grid values (:func:`to_grid`; the
    embeddings may be float32). Exact brute force in blocks of chunk rows: each block's
    scores are ranked (§3 rule), and the running top-k and the block's are merged by
    (−score, id). Memory is O(m · block), so 10⁵–10⁶ chunks need no index and no
    approximation; cost is O(m · N · d) flops — batch many queries' prefixes into one
    call to read the corpus once.
    """
    q = np.asarray(queries, dtype=np.float64)
    m, n = q.shape[0], embeddings.shape[0]
    k = min(k, n)
    out = np.empty((m, max(k, 0)), dtype=np.int32)
    if k <= 0 or m == 0:
        return out
    step = _block_rows(m, k)
    best_s = np.empty((m, 0), dtype=np.float64)
    best_i = np.empty((m, 0), dtype=np.int64)
    for start in range(0, n, step):
        scores = q @ np.asarray(embeddings[start : start + step], dtype=np.float64).T
        local = rank_topk_rows(scores, k).astype(np.int64)
        cand_s = np.concatenate((best_s, np.take_along_axis(scores, local, axis=1)), axis=1)
        cand_i = np.concatenate((best_i, local + start), axis=1)
        order = np.lexsort((cand_i, -cand_s), axis=1)[:, :k]
        best_s = np.take_along_axis(cand_s, order, axis=1)
        best_i = np.take_along_axis(cand_i, order, axis=1)
    out[:] = best_i
    return out


class DenseRetriever:
    """Cosine retrieval over one corpus (chunk id = position); satisfies :class:`~streamrag.retrieval.base.Retriever`.

    ``DenseRetriever(chunks, embedder)`` embeds the chunks once (through the embedder,
    which may be a :class:`~streamrag.retrieval.dense.embed_cache.CachedEmbedder`) and builds
    the lexical BM25 index of the same chunks unless ``index`` is given. For a large
    corpus whose embeddings are already computed, use :meth:`from_embeddings`.

    Attributes:
        embedder: embeds the query prefixes.
        embeddings: grid values (see :func:`to_grid`) stored as float32 (N, d) — exact,
            and half the memory of float64; products are taken in float64.
        index: a lexical index of the same chunks (coverage, tokens), :class:`LexicalIndex`.
    """

    __slots__ = ("_memo", "embedder", "embeddings", "index")

    index: LexicalIndex

    def __init__(
        self,
        chunks: Sequence[str],
        embedder: Embedder,
        *,
        index: LexicalIndex | None = None,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self.embedder = embedder
        self.index = index if index is not None else BM25Index.build(chunks, tokenizer=tokenizer)
        if self.index.n_docs != len(chunks):
            raise ValueError(f"index has {self.index.n_docs} chunks, {len(chunks)} chunks given")
        self.embeddings = embed_corpus(chunks, embedder)
        self.embeddings.flags.writeable = False
        self._memo: dict[str, np.ndarray] = {}

    @classmethod
    def from_embeddings(cls, embeddings: np.ndarray, embedder: Embedder, index: LexicalIndex) -> DenseRetriever:
        """Wrap precomputed chunk embeddings (rounded to the grid, stored as float32).

        For a global corpus: ``embeddings`` from :func:`embed_corpus` (float32, N × d:
        1.5 kB per chunk at d = 384, 1.5 GB per 10⁶ chunks) and the corpus' lexical index
        (e.g. the global BM25 index, for coverage and tokens).
        """
        if embeddings.ndim != 2 or embeddings.shape[0] != index.n_docs:
            raise ValueError(f"embeddings of shape {embeddings.shape} for an index of {index.n_docs} chunks")
        self = cls.__new__(cls)
        self.embedder = embedder
        self.index = index
        self.embeddings = to_grid(embeddings).astype(np.float32)  # exact: grid values fit float32
        self.embeddings.flags.writeable = False
        self._memo = {}
        return self

    @property
    def n_chunks(self) -> int:
        return int(self.embeddings.shape[0])

    def _embed_grid(self, texts: list[str]) -> np.ndarray:
        return to_grid(self.embedder.embed(texts))

    def rank(self, query: str, *, k: int = 3) -> PrefixRankings:
        """Top-k of every prefix ``q[1:t]`` by cosine; ``final_scores`` = cosines of the full query.

        Raises:
            EmptyQueryError: ``query`` has no word.
            EmptyCorpusError: there is no chunk.
            ValueError: k < 1.
        """
        words = query.split()
        k_eff = check_rankable(query, len(words), self.n_chunks, k)
        prefixes = [" ".join(words[:t]) for t in range(1, len(words) + 1)]
        grid = self._embed_grid(prefixes)
        if self.n_chunks <= _block_rows(len(prefixes), k_eff):
            scores = grid @ np.asarray(self.embeddings, dtype=np.float64).T
            topk = rank_topk_rows(scores, k_eff)
            final = scores[-1].copy()
        else:
            topk = exact_topk(grid, self.embeddings, k_eff)
            final = cosine_scores(grid[-1:], self.embeddings)[0]
        self._memo = {prefixes[-1]: grid[-1]}  # score_chunk of the same query reuses this vector
        topk.flags.writeable = False
        final.flags.writeable = False
        return PrefixRankings(
            n_words=len(words),
            k=k,
            topk=topk,
            final_scores=final,
            final_tokens=tuple(self.index.tokenizer(query)),
        )

    prefix_rankings = rank

    def score_chunk(self, chunk_idx: int, query: str) -> float:
        """Cosine of the full query with chunk ``chunk_idx`` (equals ``final_scores[chunk_idx]``)."""
        if not 0 <= chunk_idx < self.n_chunks:
            raise IndexError(f"chunk_idx {chunk_idx} out of range for {self.n_chunks} chunks")
        text = " ".join(query.split())
        vec = self._memo.get(text)
        if vec is None:
            vec = self._embed_grid([text])[0]
        return float(np.dot(np.asarray(self.embeddings[chunk_idx], dtype=np.float64), vec))

    def token_coverage(self, chunk_idx: int, query: str) -> float:
        """Lexical, as for BM25: ``|{i : token_i of query ∈ chunk}| / #tokens`` (0.0 without tokens)."""
        if not 0 <= chunk_idx < self.n_chunks:
            raise IndexError(f"chunk_idx {chunk_idx} out of range for {self.n_chunks} chunks")
        return float(chunk_coverage(self.index, self.index.tokenizer(query), np.array([chunk_idx], dtype=np.int64))[0])

    def __repr__(self) -> str:
        return f"DenseRetriever(n_chunks={self.n_chunks}, embedder={self.embedder!r})"


def minilm_embedder(cache_dir: str | Path | None = None, *, threads: int | None = None) -> Embedder:
    """all-MiniLM-L6-v2 behind an embedding cache in ``cache_dir`` (None: no disk cache).

    Raises :class:`~streamrag.base.errors.ConfigError` naming the install command when the
    ``dense`` extra is missing. Loads no model yet (that happens on the first embed).
    """
    from streamrag.retrieval.dense.embed_cache import CachedEmbedder, EmbeddingCache
    from streamrag.retrieval.dense.minilm import MiniLMEmbedder, require_dense

    require_dense()
    inner = MiniLMEmbedder(threads=threads)
    cache = None if cache_dir is None else EmbeddingCache(cache_dir, inner.model_id, inner.dim)
    return CachedEmbedder(inner, cache)
