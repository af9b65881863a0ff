"""Dense retrieval over a pool shared by every question (global scope)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from streamrag.retrieval.base import chunk_coverage
from streamrag.retrieval.dense.embed import Embedder
from streamrag.retrieval.dense.retriever import DenseRetriever, embed_corpus, to_grid
from streamrag.retrieval.global_pool.index import GlobalIndex
from streamrag.retrieval.global_pool.rankings import ChunkValues, GlobalPrefixRankings

__all__ = ["DensePoolScorer"]


class DensePoolScorer:
    """Global-scope ranking by cosine, with :class:`PrefixScorer`'s interface (``index``, ``rank``).

    The pool's chunks are embedded once (``embed_corpus``; through a cached embedder,
    once across runs) and every prefix is ranked by an exact blocked product
    (:class:`~streamrag.retrieval.dense.retriever.DenseRetriever`). Like the BM25 path, a question
    keeps only the scores and lexical coverage of the chunks its rankings returned.
    """

    def __init__(self, index: GlobalIndex, chunks: Sequence[str], embedder: Embedder) -> None:
        self.index = index
        self.retriever = DenseRetriever.from_embeddings(embed_corpus(chunks, embedder), embedder, index)

    @property
    def n_chunks(self) -> int:
        return self.index.n_docs

    def rank(self, query: str, *, k: int = 3) -> GlobalPrefixRankings:
        """Top-k of every prefix by cosine over the pool (cosines of the returned chunks kept)."""
        ranked = self.retriever.prefix_rankings(query, k=k)
        support = np.unique(ranked.topk).astype(np.int64)
        n = self.index.n_docs
        # Cosine of each prefix with its own top-k chunks (the dense analogue of BM25's topk_scores).
        prefixes = [" ".join(query.split()[:t]) for t in range(1, ranked.n_words + 1)]
        grid = to_grid(self.retriever.embedder.embed(prefixes))
        chunk_vecs = np.asarray(self.retriever.embeddings, dtype=np.float64)[ranked.topk]
        topk_scores = np.einsum("nkd,nd->nk", chunk_vecs, grid)
        arrays = (support, ranked.final_scores[support], chunk_coverage(self.index, ranked.final_tokens, support), topk_scores)
        for a in arrays:
            a.flags.writeable = False
        return GlobalPrefixRankings(
            n_words=ranked.n_words,
            k=k,
            topk=ranked.topk,
            topk_scores=topk_scores,
            final_scores=ChunkValues(support, arrays[1], n),
            final_coverage=ChunkValues(support, arrays[2], n),
            final_tokens=ranked.final_tokens,
            n_chunks=n,
        )
