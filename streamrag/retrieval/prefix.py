"""Incremental prefix rankings: the top-k of every word prefix ``q[1:t]``, t = 1 … n.

With a word-local tokenizer, the tokens of ``q[1:t]`` are those of ``q[1:t−1]`` followed
by the tokens of word t, and BM25 is a sum over query tokens, so

    score(q[1:t]) = score(q[1:t−1]) + Σ_{w ∈ tok(q_t)} term_score(w, ·)

No prefix is ever re-scored. Two strategies apply the identity, with bit-identical
results (every score is the float rank_bm25 gets by adding the tokens one at a time):

- dense (per-question corpora): one (T + 1) × N matrix of the T query tokens' term
  scores, a cumulative sum down the token axis, the rows at word ends, and a row-wise
  top-k — a fixed number of numpy calls per question;
- sparse (when T·N exceeds ~2 M cells, e.g. a global corpus): a loop over words adding
  each token's postings, O(df) per token, and ranking the prefixes whose scores changed.

A word without tokens (``"?"``) or with only tokens absent from the corpus leaves the
scores, hence the ranking, unchanged.

Questions that cannot be ranked raise a :class:`NothingToRankError` whose ``reason`` is
meant for the "skipped" column of a results table: :class:`EmptyCorpusError` (the
question has no chunks, N = 0) and :class:`EmptyQueryError` (0 whitespace words).
A query whose words all lack tokens is *not* an error: all scores are 0 and the top-k of
every prefix is ``[0, 1, …, k−1]``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from streamrag.base.errors import EmptyCorpusError, EmptyQueryError, NothingToRankError
from streamrag.retrieval.bm25 import BM25Index
from streamrag.retrieval.ranking import _topk, check_rankable, rank_topk_rows
from streamrag.retrieval.tokenize import Tokenizer, word_tokens

__all__ = [
    "EmptyCorpusError",
    "EmptyQueryError",
    "NothingToRankError",
    "PrefixRankings",
    "prefix_rankings",
    "prefix_scores",
]


@dataclass(frozen=True, slots=True, eq=False)  # arrays have no truth value: no field-wise ==
class PrefixRankings:
    """The top-k chunk ids of every prefix of one query over one corpus.

    Attributes:
        n_words: n = ``len(query.split())`` (≥ 1).
        k: the requested k.
        topk: int32 (n, k_eff), k_eff = min(k, N); row t−1 is ``topk(t)``, best first.
        final_scores: float64 (N,), scores of the full query ``q[1:n]``.
        final_tokens: the full query's tokens, in order, with repetitions.

    The arrays are read-only.
    """

    n_words: int
    k: int
    topk: np.ndarray
    final_scores: np.ndarray
    final_tokens: tuple[str, ...]

    @property
    def top1(self) -> np.ndarray:
        """int32 (n,): ``top1(t)`` at index t−1."""
        return self.topk[:, 0]

    @property
    def k_eff(self) -> int:
        """Columns of ``topk``: min(k, N)."""
        return int(self.topk.shape[1])

    @property
    def n_chunks(self) -> int:
        """N, the number of ranked chunks."""
        return int(self.final_scores.shape[0])


# The dense strategy materializes a (tokens + 1) × N matrix; above this many cells
# (16 MB of float64, e.g. a global corpus) the sparse per-word loop is used instead.
_DENSE_MAX_CELLS = 1 << 21


def _dense_prefix_scores(index: BM25Index, words: list[list[str]]) -> np.ndarray:
    """All prefix scores at once: float64 (n, N).

    Row j of a (T + 1) × N matrix holds the term scores of query token j (row 0: none);
    a cumulative sum down the token axis applies the incremental identity token by token
    (``np.cumsum`` adds sequentially, so every score is the same float as adding the
    tokens one by one, as rank_bm25 does), and the row after each word's last token is
    that prefix's score vector.
    """
    tokens = list(itertools.chain.from_iterable(words))
    m = np.zeros((len(tokens) + 1, index.n_docs), dtype=np.float64)
    token_pos, chunk_idx, vals = index.gather(tokens)
    m[token_pos + 1, chunk_idx] = vals  # one token's chunk ids are unique
    np.cumsum(m, axis=0, out=m)
    return m[np.cumsum([len(w) for w in words])]


def _sparse_prefix_steps(index: BM25Index, words: list[list[str]], scores: np.ndarray) -> Iterator[bool]:
    """Add each word's postings into ``scores`` in place (O(df) per token); yield after each word.

    Yields False when the word added no postings (no token, or only unknown ones), so
    the previous ranking still holds.
    """
    index.prefetch(itertools.chain.from_iterable(words))
    for tokens in words:
        changed = False
        for token in tokens:
            idx, vals = index.postings(token)
            if idx.shape[0]:
                scores[idx] += vals  # ids within one postings list are unique
                changed = True
        yield changed


def _use_dense(index: BM25Index, words: list[list[str]]) -> bool:
    return (sum(map(len, words)) + 1) * index.n_docs <= _DENSE_MAX_CELLS


def prefix_scores(index: BM25Index, query: str, *, tokenizer: Tokenizer | None = None) -> np.ndarray:
    """Scores of every prefix: float64 (n, N), row t−1 = ``score(q[1:t])``.

    Computed with the incremental identity (the same arithmetic as :func:`prefix_rankings`).
    No error for n = 0 or N = 0: the matrix is then simply empty along that axis.
    ``tokenizer`` defaults to the index's tokenizer.
    """
    words = word_tokens(query, tokenizer if tokenizer is not None else index.tokenizer)
    if _use_dense(index, words):
        return _dense_prefix_scores(index, words)
    out = np.empty((len(words), index.n_docs), dtype=np.float64)
    scores = np.zeros(index.n_docs, dtype=np.float64)
    for t, _ in enumerate(_sparse_prefix_steps(index, words, scores)):
        out[t] = scores
    return out


def prefix_rankings(index: BM25Index, query: str, *, k: int = 3, tokenizer: Tokenizer | None = None) -> PrefixRankings:
    """Top-k of every prefix ``q[1:t]``, t = 1 … n, by the incremental identity.

    Ranking: score descending, ties by chunk id ascending, zero-score chunks eligible
    (see :func:`~streamrag.retrieval.ranking.rank_topk`). ``tokenizer`` defaults to the
    index's tokenizer (queries must be tokenized like the chunks).

    Two strategies give identical results: for a per-question corpus, all prefixes at
    once (a cumulative sum over a tokens × N matrix, then a row-wise top-k); for a large
    corpus, a per-word loop adding sparse postings (O(df) per token) and ranking the
    prefixes whose scores changed.

    Raises:
        EmptyQueryError: ``query`` has no word.
        EmptyCorpusError: the index has no chunk.
        ValueError: k < 1.
    """
    words = word_tokens(query, tokenizer if tokenizer is not None else index.tokenizer)
    k_eff = check_rankable(query, len(words), index.n_docs, k)
    if _use_dense(index, words):
        all_scores = _dense_prefix_scores(index, words)
        topk = rank_topk_rows(all_scores, k_eff)
        scores = all_scores[-1].copy()
    else:
        topk = np.empty((len(words), k_eff), dtype=np.int32)
        scores = np.zeros(index.n_docs, dtype=np.float64)
        row: np.ndarray | None = None
        for t, changed in enumerate(_sparse_prefix_steps(index, words, scores)):
            if changed or row is None:
                row = _topk(scores, k_eff)  # checked: 1 ≤ k_eff ≤ N
            topk[t] = row
    topk.flags.writeable = False
    scores.flags.writeable = False
    return PrefixRankings(
        n_words=len(words),
        k=k,
        topk=topk,
        final_scores=scores,
        final_tokens=tuple(itertools.chain.from_iterable(words)),
    )
