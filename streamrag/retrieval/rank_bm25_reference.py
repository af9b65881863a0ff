"""The reference rankings: every prefix re-scored from scratch by rank_bm25's ``BM25Okapi``.

:class:`RankBM25Retriever` (retriever kind ``rank_bm25``) shares no scoring code with
:mod:`streamrag.retrieval.bm25` or :mod:`streamrag.retrieval.prefix`: for each prefix
``q[1:t]`` it tokenizes the joined words afresh and asks ``BM25Okapi.get_scores`` for the
scores of every chunk, then ranks them (score descending, ties by chunk id ascending,
zero scores eligible) with one ``lexsort``. It is the oracle the parity tests hold the
incremental scorer to, and a run of ``analyze --retriever rank_bm25`` is the whole study
recomputed by the reference implementation.

Its scores are rank_bm25's, whose idf is not the ``paper`` preset's:
``raw(w) = ln(N − df + 0.5) − ln(df + 0.5)``, and a token with ``raw < 0`` (in more than
half the chunks) gets ``epsilon · mean(raw)`` instead. They equal, to the last bit, those
of the incremental BM25 with ``idf = "okapi"`` (``analyze --idf okapi``), so the two give
identical tables; against the paper preset they differ wherever a frequent token's idf
does. k1, b and epsilon follow the analysis' ``bm25`` settings.

Cost: O(t·N) per prefix, O(n²·N) per question where the incremental scorer is O(n·N).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from streamrag.retrieval.bm25 import BM25Params
from streamrag.retrieval.prefix import PrefixRankings
from streamrag.retrieval.ranking import check_rankable
from streamrag.retrieval.tokenize import RegexTokenizer, Tokenizer

__all__ = ["RankBM25Retriever"]


class RankBM25Retriever:
    """rank_bm25's ``BM25Okapi`` over ``chunks`` (chunk id = position), queried once per
    prefix; satisfies :class:`~streamrag.retrieval.base.Retriever`.

    ``params`` gives k1, b and epsilon (its ``idf`` is ignored: the idf is rank_bm25's);
    ``tokenizer`` tokenizes chunks and prefixes (default: the ``paper`` regex tokenizer).
    """

    __slots__ = ("_okapi", "_tokenizer", "n_chunks")

    def __init__(self, chunks: Sequence[str], params: BM25Params | None = None, tokenizer: Tokenizer | None = None) -> None:
        from rank_bm25 import BM25Okapi

        p = params or BM25Params()
        self._tokenizer = tokenizer if tokenizer is not None else RegexTokenizer()
        self.n_chunks = len(chunks)
        docs = [self._tokenizer(chunk) for chunk in chunks]
        # BM25Okapi divides by the mean length and averages the vocabulary's idfs: a corpus
        # without a single token (or without chunks) scores 0 everywhere, as ours does.
        self._okapi = BM25Okapi(docs, k1=p.k1, b=p.b, epsilon=p.epsilon) if any(docs) else None

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """``BM25Okapi.get_scores(tokens)``: float64 (N,)."""
        if self._okapi is None:
            return np.zeros(self.n_chunks, dtype=np.float64)
        return np.asarray(self._okapi.get_scores(list(tokens)), dtype=np.float64)

    def rank(self, query: str, *, k: int = 3) -> PrefixRankings:
        """Top-k of every prefix ``q[1:t]``, each scored from scratch."""
        words = query.split()
        k_eff = check_rankable(query, len(words), self.n_chunks, k)
        ids = np.arange(self.n_chunks)
        topk = np.empty((len(words), k_eff), dtype=np.int32)
        scores = np.zeros(self.n_chunks, dtype=np.float64)
        tokens: list[str] = []
        for t in range(1, len(words) + 1):
            tokens = self._tokenizer(" ".join(words[:t]))
            scores = self.scores(tokens)
            topk[t - 1] = np.lexsort((ids, -scores))[:k_eff]
        topk.flags.writeable = False
        scores.flags.writeable = False
        return PrefixRankings(n_words=len(words), k=k, topk=topk, final_scores=scores, final_tokens=tuple(tokens))

    def __repr__(self) -> str:
        return f"RankBM25Retriever(n_chunks={self.n_chunks})"
