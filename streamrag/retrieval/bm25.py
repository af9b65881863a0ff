"""BM25 index over one corpus: term–document tf matrix, idf, and cached per-token score columns.

For a corpus of N chunks (documents) with lengths dl_d in tokens, avgdl = Σ dl_d / N, and
a token w with document frequency df_w and frequency tf_{w,d} in chunk d:

    term_score(w, d) = idf(w) · tf·(k1 + 1) / (tf + k1·(1 − b + b·dl_d/avgdl))
    score(q_1 … q_m, d) = Σ_i term_score(q_i, d)        (repeated query tokens count again)

idf variants (``BM25Params.idf``):

- ``paper``: ``idf(w) = ln(1 + (N − df + 0.5)/(df + 0.5))`` (always > 0);
- ``okapi``: rank_bm25's ``BM25Okapi``: ``raw(w) = ln(N − df + 0.5) − ln(df + 0.5)``;
  ``average_idf`` = mean of ``raw`` over the whole corpus vocabulary (negative values
  included); every token with ``raw < 0`` gets ``epsilon · average_idf`` instead (which is
  itself negative when most raw idfs are, e.g. N = 1).

Tokens absent from the corpus score 0 in every chunk (both variants). Scores are float64,
computed with rank_bm25's operations in rank_bm25's order (idf with ``math.log``, each
term as ``idf · (tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)))``, terms added in query
order), so ``okapi`` scores equal ``BM25Okapi.get_scores`` bit for bit. That matters for
rankings: float addition is not associative, and mathematically tied sums are ordered
by how they round.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import ConfigDict, Field

from streamrag.base.validation import SettingsModel
from streamrag.retrieval.tokenize import RegexTokenizer, Tokenizer

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["BM25Index", "BM25Params"]

_EMPTY_IDX = np.zeros(0, dtype=np.int32)
_EMPTY_VALS = np.zeros(0, dtype=np.float64)
_EMPTY_IDX.flags.writeable = False
_EMPTY_VALS.flags.writeable = False


class BM25Params(SettingsModel):
    """BM25 parameters. Defaults are the ``paper`` preset (k1 = 1.5, b = 0.75, paper idf).

    ``epsilon`` is only used by the ``okapi`` idf (floor ``epsilon · average_idf``).
    """

    model_config = ConfigDict(allow_inf_nan=False)

    k1: float = Field(1.5, ge=0.0, description="term-frequency saturation")
    b: float = Field(0.75, ge=0.0, le=1.0, description="document-length normalization")
    idf: Literal["paper", "okapi"] = Field("paper", description="idf variant")
    epsilon: float = Field(0.25, description="okapi: negative idfs become epsilon · average_idf")


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


class BM25Index:
    """An immutable BM25 index over N chunks (build it with :meth:`build` or :meth:`from_tokens`).

    Attributes:
        params: the :class:`BM25Params`.
        tokenizer: the tokenizer the chunks were tokenized with (queries must use it too).
        vocabulary: token → term id (row of ``tf``), in first-occurrence order (a dict, or
            a :class:`~streamrag.retrieval.index_cache.SortedTerms` read from the index cache).
        tf: ``scipy.sparse.csr_array`` of shape (V, N), int32 term frequencies; a row is
            the postings list of one term, chunk ids ascending. Made on first use: the
            index itself keeps the three CSR arrays (``tf_indptr``, ``tf_indices``,
            ``tf_data``), so building and scoring never import scipy.
        doc_len: int64 array (N,), chunk lengths in tokens.
        avgdl: mean chunk length in tokens (0.0 for an empty corpus).
        idf: float64 array (V,), idf per term id (after the okapi floor).

    Per-token postings and dense score columns are computed on first use and cached;
    the returned arrays are read-only because they are shared.
    """

    __slots__ = (
        "_columns",
        "_k1_plus_1",
        "_len_norm",
        "_postings",
        "_tf",
        "_tf_float",
        "avgdl",
        "doc_len",
        "idf",
        "params",
        "tf_data",
        "tf_indices",
        "tf_indptr",
        "tokenizer",
        "vocabulary",
    )

    def __init__(
        self,
        *,
        tf_indptr: np.ndarray,
        tf_indices: np.ndarray,
        tf_data: np.ndarray,
        vocabulary: Mapping[str, int],
        doc_len: np.ndarray,
        params: BM25Params,
        tokenizer: Tokenizer,
    ) -> None:
        n_docs = int(doc_len.shape[0])
        self.params = params
        self.tokenizer = tokenizer
        self.vocabulary = vocabulary
        self.tf_indptr = _frozen(tf_indptr)
        self.tf_indices = _frozen(tf_indices)
        self.tf_data = _frozen(tf_data)
        self._tf: sp.csr_array | None = None
        self.doc_len = _frozen(doc_len)
        # Python int / int, like rank_bm25's num_doc / corpus_size.
        self.avgdl = int(doc_len.sum()) / n_docs if n_docs else 0.0
        k1, b = params.k1, params.b
        if self.avgdl > 0:
            # k1·(1 − b + b·dl/avgdl), in rank_bm25's operation order for bit-level parity.
            self._len_norm = _frozen(k1 * (1 - b + b * doc_len / self.avgdl))
        else:  # no token anywhere: no term can match, the value is never used
            self._len_norm = _frozen(np.full(n_docs, k1 * (1 - b)))
        self.idf = _frozen(self._compute_idf(np.diff(tf_indptr), n_docs, params))
        # Hot-path constants for gather(), which runs once per query.
        self._tf_float = tf_data.astype(np.float64)
        self._k1_plus_1 = k1 + 1
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._columns: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------ building

    @classmethod
    def build(
        cls,
        chunks: Sequence[str],
        tokenizer: Tokenizer | None = None,
        params: BM25Params | None = None,
    ) -> BM25Index:
        """Tokenize ``chunks`` (default: the ``paper`` tokenizer) and index them; chunk id = position."""
        tok = tokenizer if tokenizer is not None else RegexTokenizer()
        return cls.from_tokens([tok(c) for c in chunks], tokenizer=tok, params=params)

    @classmethod
    def from_tokens(
        cls,
        tokenized_chunks: Sequence[Sequence[str]],
        *,
        tokenizer: Tokenizer | None = None,
        params: BM25Params | None = None,
    ) -> BM25Index:
        """Index already-tokenized chunks (``tokenizer`` is recorded for tokenizing queries).

        Cost: one dict lookup per corpus token (T of them), then O(T) numpy work: a
        stable radix sort of the term ids (16-bit when V ≤ 65,536) keeps each term's
        chunk ids ascending, and runs of equal (term, chunk) pairs are the tf.
        """
        n_docs = len(tokenized_chunks)
        doc_len = np.fromiter(map(len, tokenized_chunks), dtype=np.int64, count=n_docs)
        flat = list(itertools.chain.from_iterable(tokenized_chunks))
        n_tokens = len(flat)
        # One C-speed hashing pass: each token → position of its first occurrence in the corpus.
        first_seen: dict[str, int] = {}
        first = np.array(
            list(map(first_seen.setdefault, flat, itertools.count())), dtype=np.int64
        )  # (a list first: faster than fromiter)
        # Term ids in first-occurrence order (first_seen iterates in that order).
        n_terms = len(first_seen)
        term_of_first = np.empty(n_tokens, dtype=np.uint16 if n_terms <= 1 << 16 else np.int64)
        term_of_first[np.fromiter(first_seen.values(), dtype=np.int64, count=n_terms)] = np.arange(n_terms)
        term = term_of_first[first]
        order = np.argsort(term, kind="stable")  # radix sort on 16 bits; chunk ids stay ascending per term
        term = term[order]
        doc = np.repeat(np.arange(n_docs, dtype=np.int32), doc_len)[order]
        run_start = np.empty(n_tokens, dtype=bool)
        run_start[:1] = True
        np.not_equal(term[1:], term[:-1], out=run_start[1:])
        run_start[1:] |= doc[1:] != doc[:-1]
        starts = np.flatnonzero(run_start)
        counts = np.diff(starts, append=n_tokens).astype(np.int32)
        cols = doc[starts]
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(term[starts], minlength=n_terms), out=indptr[1:])
        vocabulary = dict(zip(first_seen, range(n_terms), strict=True))
        return cls(
            tf_indptr=indptr,
            tf_indices=cols,
            tf_data=counts,
            vocabulary=vocabulary,
            doc_len=doc_len,
            params=params if params is not None else BM25Params(),
            tokenizer=tokenizer if tokenizer is not None else RegexTokenizer(),
        )

    @staticmethod
    def _compute_idf(df: np.ndarray, n_docs: int, params: BM25Params) -> np.ndarray:
        """idf per term id from the document frequencies ``df`` (int, shape (V,)).

        Logs are taken with ``math.log`` once per *distinct* df (at most N of them): the
        same floats as rank_bm25 and any plain-Python implementation, on every platform.
        numpy's SIMD ``log`` differs from libm in the last ulp for a few arguments (e.g.
        1,403 of the 500,500 paper-idf (N ≤ 1000, df) pairs on AVX-512), which is enough to
        flip the order of two chunks whose scores tie mathematically.
        """
        if df.shape[0] == 0:
            return np.zeros(0, dtype=np.float64)
        distinct, term_to_distinct = np.unique(df, return_inverse=True)
        if params.idf == "paper":
            per_df = [math.log(1 + (n_docs - d + 0.5) / (d + 0.5)) for d in distinct.tolist()]
            return np.array(per_df, dtype=np.float64)[term_to_distinct]
        per_df = [math.log(n_docs - d + 0.5) - math.log(d + 0.5) for d in distinct.tolist()]
        raw = np.array(per_df, dtype=np.float64)[term_to_distinct]
        # rank_bm25: the average is over the raw (un-floored) idfs of the whole vocabulary,
        # summed one by one in first-occurrence order; cumsum is sequential like that loop
        # (np.sum is pairwise and would differ in the last ulp).
        average_idf = float(np.cumsum(raw)[-1]) / raw.shape[0]
        return np.where(raw < 0, params.epsilon * average_idf, raw)

    # ------------------------------------------------------------------ scoring

    @property
    def tf(self) -> sp.csr_array:
        """Term frequencies as a ``scipy.sparse.csr_array`` (V, N), made on first use."""
        if self._tf is None:
            import scipy.sparse as sp

            self._tf = sp.csr_array((self.tf_data, self.tf_indices, self.tf_indptr), shape=(self.n_terms, self.n_docs))
        return self._tf

    @property
    def n_docs(self) -> int:
        """N, the number of chunks."""
        return int(self.doc_len.shape[0])

    @property
    def n_terms(self) -> int:
        """V, the vocabulary size."""
        return len(self.vocabulary)

    def __contains__(self, token: object) -> bool:
        return token in self.vocabulary

    def df(self, token: str) -> int:
        """Number of chunks holding ``token`` (0 when it is absent): its postings' length,
        without computing them."""
        term = self.vocabulary.get(token)
        if term is None:
            return 0
        indptr = self.tf_indptr
        return int(indptr[term + 1] - indptr[term])

    def postings(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """``(chunk_idx, term_score)`` over the chunks containing ``token`` (ids ascending).

        Both arrays are read-only and cached; empty for a token absent from the corpus.
        This is the sparse form of :meth:`term_scores`: adding it costs O(df), not O(N).
        """
        hit = self._postings.get(token)
        if hit is not None:
            return hit
        if token not in self.vocabulary:
            return _EMPTY_IDX, _EMPTY_VALS  # not cached: unknown tokens are unbounded
        self.prefetch((token,))
        return self._postings[token]

    def gather(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Postings of every token occurrence in one vectorized pass, as COO triplets.

        Returns ``(token_pos, chunk_idx, term_score)``: entry e says that ``tokens[token_pos[e]]``
        occurs in chunk ``chunk_idx[e]`` and scores ``term_score[e]`` there. Occurrences
        are in token order, chunk ids ascending within one; unknown tokens have no entry;
        a repeated token has its entries repeated. This is the one place term scores are
        computed (:meth:`postings` and the prefix scorer use it): a fixed number of numpy
        calls instead of a few per token, which dominates for a ~12-token query.
        """
        get = self.vocabulary.get
        term_ids = np.fromiter((get(t, -1) for t in tokens), dtype=np.int64, count=len(tokens))
        token_pos = np.flatnonzero(term_ids >= 0)
        term_ids = term_ids[token_pos]
        indptr = self.tf_indptr
        starts = indptr[term_ids]
        lens = indptr[term_ids + 1] - starts
        ends = np.cumsum(lens)
        n_entries = int(ends[-1]) if ends.shape[0] else 0
        # Flat positions in the CSR arrays: occurrence r covers starts[r] … starts[r] + lens[r] − 1.
        pos = np.arange(n_entries) + np.repeat(starts - (ends - lens), lens)
        docs = self.tf_indices[pos]
        tf = self._tf_float[pos]
        idf = np.repeat(self.idf[term_ids], lens)
        # rank_bm25's expression, element by element: idf · (tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)))
        vals = idf * (tf * self._k1_plus_1 / (tf + self._len_norm[docs]))
        return np.repeat(token_pos, lens), docs, vals

    def prefetch(self, tokens: Iterable[str]) -> None:
        """Compute and cache the :meth:`postings` of all ``tokens`` with one :meth:`gather`."""
        todo = [t for t in dict.fromkeys(tokens) if t not in self._postings and t in self.vocabulary]
        if not todo:
            return
        token_pos, docs, vals = self.gather(todo)
        _frozen(docs)
        _frozen(vals)
        bounds = np.searchsorted(token_pos, np.arange(len(todo) + 1)).tolist()
        for i, token in enumerate(todo):
            self._postings[token] = (docs[bounds[i] : bounds[i + 1]], vals[bounds[i] : bounds[i + 1]])

    def term_scores(self, token: str) -> np.ndarray:
        """Dense score column of ``token``: float64 (N,), ``term_score(token, d)`` per chunk d.

        Zeros for a token absent from the corpus. Read-only and cached per token.
        """
        col = self._columns.get(token)
        if col is None:
            col = np.zeros(self.n_docs, dtype=np.float64)
            idx, vals = self.postings(token)
            col[idx] = vals
            col = _frozen(col)
            if token in self.vocabulary:
                self._columns[token] = col
        return col

    def score(self, tokens: Iterable[str]) -> np.ndarray:
        """BM25 scores of a token list: float64 (N,), ``Σ_i term_score(tokens_i, d)``, summed in order."""
        scores = np.zeros(self.n_docs, dtype=np.float64)
        for token in tokens:
            idx, vals = self.postings(token)
            scores[idx] += vals  # chunk ids within one postings list are unique
        return scores

    def tokens_coverage(self, chunk_idx: int, tokens: Sequence[str]) -> float:
        """Share of ``tokens`` (with repetition) that occur in chunk ``chunk_idx``, in [0, 1].

        ``|{i : tokens_i ∈ chunk}| / len(tokens)``; 0.0 for an empty token list (nothing is
        covered). The heuristic reflector requires ≥ 0.4 of the full query's tokens.
        """
        if not 0 <= chunk_idx < self.n_docs:
            raise IndexError(f"chunk_idx {chunk_idx} out of range for {self.n_docs} chunks")
        if not tokens:
            return 0.0
        hits = 0
        for token in tokens:
            idx, _ = self.postings(token)
            pos = int(np.searchsorted(idx, idx.dtype.type(chunk_idx)))  # as in chunk_coverage
            hits += pos < idx.shape[0] and int(idx[pos]) == chunk_idx
        return hits / len(tokens)

    def clear_cache(self) -> None:
        """Drop the cached postings and columns (memory only; results do not change)."""
        self._postings.clear()
        self._columns.clear()

    def __repr__(self) -> str:
        p = self.params
        return (
            f"BM25Index(n_docs={self.n_docs}, n_terms={self.n_terms}, avgdl={self.avgdl:.1f}, k1={p.k1}, b={p.b}, idf={p.idf!r})"
        )
