"""A BM25 inverted index for one global corpus (up to millions of chunks).

Per-question corpora are small enough for :class:`~streamrag.retrieval.bm25.BM25Index`
(a tf matrix whose score columns are computed per query). A global corpus is indexed
once and queried by thousands of questions, so every posting carries its precomputed
*impact*, the BM25 term score of that term in that chunk:

    impact(w, d) = idf(w) · (tf·(k1 + 1) / (tf + k1·(1 − b + b·dl_d/avgdl)))

with dl and avgdl in tokens and idf the ``paper`` or ``okapi`` variant of
:class:`~streamrag.retrieval.bm25.BM25Params`. Scoring a query is then a sum of
postings: ``score(q_1 … q_m, d) = Σ_i impact(q_i, d)`` (repeated tokens count again).

Storage, for V terms, N chunks and P postings (term–chunk pairs):

- ``indptr`` int64 (V + 1,): the postings of term id w are ``[indptr[w], indptr[w+1])``;
- ``chunk_idx`` int32 (P,): chunk ids, ascending within a term (N < 2³¹);
- ``impact`` float64 (P,): 8 bytes per posting. float32 would halve that, but it rounds
  scores differently from a from-scratch float64 computation, and rounding decides the
  order of (mathematically) tied chunks — rankings would no longer be identical to the
  per-question scorer, rank_bm25 or bm25s in float64. At 120-token chunks P ≈ 70 per
  chunk: about 0.85 GB of postings per million chunks.
- ``doc_len`` int32 (N,), ``terms`` (V strings), and per term float64 (V,): ``idf``,
  ``max_impact`` (the largest impact, a bound the prefix scorer uses) and ``head_impact``
  (the :data:`HEAD_RANK`-th largest impact, −inf for df < HEAD_RANK: where the scorer can
  cut a common first word's postings without sorting them).

Impacts are computed with the same numpy operations, in the same order, as
``BM25Index.gather`` (rank_bm25's expression), and idf with the same per-df ``math.log``,
so a global index over one question's chunks gives bit-identical scores to the
per-question index. Term ids are in first-occurrence order when built from text (the
order rank_bm25 sums okapi's average idf in).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence

import numpy as np

from streamrag.retrieval.bm25 import BM25Index, BM25Params
from streamrag.retrieval.tokenize import RegexTokenizer, Tokenizer, word_tokens

__all__ = ["HEAD_RANK", "GlobalIndex"]

#: Rank of ``head_impact``: the scorer's first candidate pool for a common word.
HEAD_RANK = 1024

_EMPTY_IDX = np.zeros(0, dtype=np.int32)
_EMPTY_VALS = np.zeros(0, dtype=np.float64)
# Impacts are computed in blocks of about this many postings to bound temporary memory.
_IMPACT_BLOCK = 1 << 22


class GlobalIndex:
    """Immutable inverted index with precomputed impacts (see the module docstring).

    Build with :meth:`build` (texts), :meth:`from_tokens` (token lists) or
    :meth:`from_token_ids` (integer arrays, the fast path for generated corpora); save
    and memory-map with :func:`streamrag.retrieval.global_pool.store.save_index` /
    ``load_index``. Arrays may be read-only memory maps.
    """

    __slots__ = (
        "_vocabulary",
        "avgdl",
        "chunk_idx",
        "derived",
        "doc_len",
        "head_impact",
        "idf",
        "impact",
        "indptr",
        "max_impact",
        "params",
        "terms",
        "tokenizer",
    )

    def __init__(
        self,
        *,
        indptr: np.ndarray,
        chunk_idx: np.ndarray,
        impact: np.ndarray,
        doc_len: np.ndarray,
        idf: np.ndarray,
        max_impact: np.ndarray,
        head_impact: np.ndarray,
        terms: Sequence[str],
        params: BM25Params,
        tokenizer: Tokenizer,
    ) -> None:
        self.indptr = indptr
        self.chunk_idx = chunk_idx
        self.impact = impact
        self.doc_len = doc_len
        self.idf = idf
        self.max_impact = max_impact
        self.head_impact = head_impact
        self.terms = terms
        self.params = params
        self.tokenizer = tokenizer
        n_docs = int(doc_len.shape[0])
        # Python int / int, as BM25Index and rank_bm25 compute it.
        self.avgdl = int(doc_len.sum(dtype=np.int64)) / n_docs if n_docs else 0.0
        self._vocabulary: dict[str, int] | None = None
        # Data the scorers derive from the index on first use, kept with it (blocks).
        self.derived: dict[str, object] = {}

    # ------------------------------------------------------------------ building

    @classmethod
    def build(cls, chunks: Iterable[str], *, tokenizer: Tokenizer | None = None, params: BM25Params | None = None) -> GlobalIndex:
        """Tokenize ``chunks`` (streamed; default: the ``paper`` tokenizer) and index them; id = position."""
        tok = tokenizer if tokenizer is not None else RegexTokenizer()
        return cls.from_tokens(map(tok, chunks), tokenizer=tok, params=params)

    @classmethod
    def from_tokens(
        cls,
        tokenized_chunks: Iterable[Sequence[str]],
        *,
        tokenizer: Tokenizer | None = None,
        params: BM25Params | None = None,
    ) -> GlobalIndex:
        """Index token lists (streamed). Memory while building: 4 bytes per corpus token."""
        vocabulary: dict[str, int] = {}
        setdefault = vocabulary.setdefault
        flat = array("i")
        doc_len = array("q")
        for tokens in tokenized_chunks:
            # len(vocabulary) is evaluated before the insertion: new tokens get the next id,
            # so ids are contiguous and in first-occurrence order.
            flat.extend([setdefault(t, len(vocabulary)) for t in tokens])
            doc_len.append(len(tokens))
        return cls.from_token_ids(
            np.frombuffer(flat, dtype=np.int32),
            np.frombuffer(doc_len, dtype=np.int64),
            list(vocabulary),
            tokenizer=tokenizer,
            params=params,
        )

    @classmethod
    def from_token_ids(
        cls,
        token_ids: np.ndarray,
        doc_len: np.ndarray,
        terms: Sequence[str],
        *,
        tokenizer: Tokenizer | None = None,
        params: BM25Params | None = None,
    ) -> GlobalIndex:
        """Index a corpus given as term ids.

        Args:
            token_ids: int (T,), the tokens of chunk 0, then chunk 1, …, as term ids in [0, V).
            doc_len: int (N,), tokens per chunk (sums to T).
            terms: V strings, the token of each term id (a term that never occurs gets df 0).

        The okapi idf sums its average over term ids in id order; rank_bm25 sums in
        first-occurrence order, so give ids in that order for bit-level okapi parity.
        Cost: O(T log L) for T tokens in chunks of L tokens (per-chunk sort, then a counting-sort CSR → CSC).
        """
        params = params if params is not None else BM25Params()
        tokenizer = tokenizer if tokenizer is not None else RegexTokenizer()
        token_ids = np.asarray(token_ids)
        doc_len = np.asarray(doc_len, dtype=np.int64)
        n_docs, n_terms = int(doc_len.shape[0]), len(terms)
        if int(doc_len.sum()) != token_ids.shape[0]:
            raise ValueError(f"doc_len sums to {int(doc_len.sum())} tokens but token_ids holds {token_ids.shape[0]}")
        if token_ids.shape[0] and (int(token_ids.min()) < 0 or int(token_ids.max()) >= n_terms):
            raise ValueError(f"token ids must lie in [0, {n_terms}) (the number of terms)")
        if n_docs >= 2**31:
            raise ValueError("at most 2³¹ − 1 chunks (chunk ids are int32)")
        row_ptr = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(doc_len, out=row_ptr[1:])
        import scipy.sparse as sp  # here, not at the top: per-question analyses import this module

        # chunks × terms counts; copy the ids because sum_duplicates sorts them in place.
        counts = sp.csr_array(
            (np.ones(token_ids.shape[0], dtype=np.int32), token_ids.astype(np.int32, copy=True), row_ptr),
            shape=(n_docs, n_terms),
        )
        counts.sum_duplicates()
        by_term = counts.tocsc()  # rows (chunk ids) come out ascending within each column
        del counts
        if not by_term.has_sorted_indices:
            by_term.sort_indices()
        indptr = by_term.indptr.astype(np.int64)
        chunk_idx = by_term.indices.astype(np.int32, copy=False)
        tf = by_term.data
        del by_term
        df = np.diff(indptr)
        idf = BM25Index._compute_idf(df, n_docs, params)
        impact, max_impact = _impacts(indptr, chunk_idx, tf, idf, doc_len, params)
        return cls(
            indptr=indptr,
            chunk_idx=chunk_idx,
            impact=impact,
            doc_len=doc_len.astype(np.int32),
            idf=idf,
            max_impact=max_impact,
            head_impact=_head_impacts(indptr, impact),
            terms=list(terms),
            params=params,
            tokenizer=tokenizer,
        )

    # ------------------------------------------------------------------ lookups

    @property
    def n_docs(self) -> int:
        """N, the number of chunks."""
        return int(self.doc_len.shape[0])

    @property
    def n_terms(self) -> int:
        """V, the vocabulary size."""
        return len(self.terms)

    @property
    def n_postings(self) -> int:
        """P, the number of (term, chunk) pairs."""
        return int(self.chunk_idx.shape[0])

    @property
    def nonnegative(self) -> bool:
        """True when every impact is ≥ 0 (always for the paper idf; okapi can go below)."""
        return bool(self.idf.shape[0] == 0 or float(self.idf.min()) >= 0.0)

    @property
    def vocabulary(self) -> dict[str, int]:
        """token → term id (built on first use after a load)."""
        if self._vocabulary is None:
            self._vocabulary = {t: i for i, t in enumerate(self.terms)}
        return self._vocabulary

    def __contains__(self, token: object) -> bool:
        return token in self.vocabulary

    def term_ids(self, tokens: Iterable[str]) -> np.ndarray:
        """Term ids of the tokens present in the corpus, in order (int64; unknown tokens dropped)."""
        get = self.vocabulary.get
        ids = (get(t, -1) for t in tokens)
        return np.array([i for i in ids if i >= 0], dtype=np.int64)

    def word_term_ids(self, query: str) -> list[np.ndarray]:
        """Term ids of each whitespace word of ``query`` (tokens absent from the corpus dropped)."""
        return [self.term_ids(tokens) for tokens in word_tokens(query, self.tokenizer)]

    def term_postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        """``(chunk_idx, impact)`` of one term id: views into the index arrays (no copy)."""
        lo, hi = int(self.indptr[term_id]), int(self.indptr[term_id + 1])
        return self.chunk_idx[lo:hi], self.impact[lo:hi]

    def postings(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """``(chunk_idx, term_score)`` of a token (ids ascending); empty when absent.

        Same contract as :meth:`BM25Index.postings`, so the anchor predictors accept both.
        """
        term_id = self.vocabulary.get(token)
        if term_id is None:
            return _EMPTY_IDX, _EMPTY_VALS
        return self.term_postings(term_id)

    def prefetch(self, tokens: Iterable[str]) -> None:
        """Nothing to do: a global index's postings are slices of arrays built in advance
        (the per-question index computes them on first use)."""

    def df(self, token: str) -> int:
        """Number of chunks containing ``token``."""
        term_id = self.vocabulary.get(token)
        return 0 if term_id is None else int(self.indptr[term_id + 1] - self.indptr[term_id])

    def score(self, tokens: Iterable[str]) -> np.ndarray:
        """From-scratch BM25 scores of a token list: float64 (N,), terms added in token order."""
        scores = np.zeros(self.n_docs, dtype=np.float64)
        for term_id in self.term_ids(tokens).tolist():
            idx, vals = self.term_postings(term_id)
            scores[idx] += vals  # chunk ids within one postings list are unique
        return scores

    def __repr__(self) -> str:
        p = self.params
        return (
            f"GlobalIndex(n_docs={self.n_docs}, n_terms={self.n_terms}, n_postings={self.n_postings}, "
            f"avgdl={self.avgdl:.1f}, k1={p.k1}, b={p.b}, idf={p.idf!r})"
        )


def _impacts(
    indptr: np.ndarray, chunk_idx: np.ndarray, tf: np.ndarray, idf: np.ndarray, doc_len: np.ndarray, params: BM25Params
) -> tuple[np.ndarray, np.ndarray]:
    """Impact of every posting and the maximum impact per term (−inf for a term with df 0).

    The expression and its operation order are ``BM25Index``'s (see the module docstring),
    evaluated over blocks of whole terms so temporaries stay near ``_IMPACT_BLOCK`` postings.
    """
    n_docs = doc_len.shape[0]
    k1, b = params.k1, params.b
    avgdl = int(doc_len.sum()) / n_docs if n_docs else 0.0
    len_norm = k1 * (1 - b + b * doc_len / avgdl) if avgdl > 0 else np.full(n_docs, k1 * (1 - b))
    k1_plus_1 = k1 + 1
    impact = np.empty(chunk_idx.shape[0], dtype=np.float64)
    n_terms = idf.shape[0]
    df = np.diff(indptr)
    lo_t = 0
    while lo_t < n_terms:
        lo = int(indptr[lo_t])
        # The last term boundary within _IMPACT_BLOCK postings (at least one term per block).
        hi_t = max(int(np.searchsorted(indptr, lo + _IMPACT_BLOCK, side="right")) - 1, lo_t + 1)
        hi = int(indptr[hi_t])
        tf_block = tf[lo:hi].astype(np.float64)
        idf_block = np.repeat(idf[lo_t:hi_t], df[lo_t:hi_t])
        impact[lo:hi] = idf_block * (tf_block * k1_plus_1 / (tf_block + len_norm[chunk_idx[lo:hi]]))
        lo_t = hi_t
    max_impact = np.full(n_terms, -np.inf)
    present = df > 0
    if impact.shape[0]:
        max_impact[present] = np.maximum.reduceat(impact, indptr[:-1][present])
    return impact, max_impact


def _head_impacts(indptr: np.ndarray, impact: np.ndarray) -> np.ndarray:
    """The :data:`HEAD_RANK`-th largest impact of each term with df ≥ HEAD_RANK, else −inf."""
    head = np.full(indptr.shape[0] - 1, -np.inf)
    df = np.diff(indptr)
    for term in np.flatnonzero(df >= HEAD_RANK).tolist():
        lo, hi = int(indptr[term]), int(indptr[term + 1])
        head[term] = np.partition(impact[lo:hi], hi - lo - HEAD_RANK)[hi - lo - HEAD_RANK]
    return head
