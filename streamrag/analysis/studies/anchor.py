"""Query-side predictors of stabilization: where the question's *lexical anchor* sits.

The anchor study proposed, but never measured, that a question stabilizes once its
first specific word has been heard. Two positions are defined here, both 1-based word
indices of the query and both computable before any answer is known:

``t_anchor`` — the first *rare* word. A word is rare in its question's corpus when one
of its tokens occurs in at least one chunk and in at most
``max(1, floor(max_df_share · N))`` of the N chunks (default share 0.05, the same 5%
that defines "specifically grounded"). Tokens absent from the corpus do not count: they
cannot move a lexical ranking. ``None`` when no word qualifies.

``t_pivot`` — the word that contributes most to the full query's top-1 chunk: argmax over
words of the summed term scores of the word's tokens for chunk ``top1(n)`` (earliest word
on ties). ``None`` when no word scores on that chunk (the query matches nothing).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np

__all__ = ["DEFAULT_MAX_DF_SHARE", "LexicalIndex", "t_anchor", "t_pivot"]


class LexicalIndex(Protocol):
    """What the anchors read of an index (a per-question ``BM25Index`` or a ``GlobalIndex``)."""

    @property
    def n_docs(self) -> int: ...

    def df(self, token: str) -> int: ...

    def prefetch(self, tokens: Iterable[str]) -> None: ...

    def postings(self, token: str) -> tuple[np.ndarray, np.ndarray]: ...


DEFAULT_MAX_DF_SHARE = 0.05


def t_anchor(index: LexicalIndex, words: Sequence[Sequence[str]], *, max_df_share: float = DEFAULT_MAX_DF_SHARE) -> int | None:
    """Position of the first word holding a token with ``1 ≤ df ≤ max(1, ⌊share·N⌋)``."""
    max_df = max(1, int(max_df_share * index.n_docs))
    for position, tokens in enumerate(words, start=1):
        for token in tokens:
            if 1 <= index.df(token) <= max_df:
                return position
    return None


def t_pivot(index: LexicalIndex, words: Sequence[Sequence[str]], final_top1: int) -> int | None:
    """Position of the word adding the largest score to chunk ``final_top1``."""
    index.prefetch(itertools.chain.from_iterable(words))  # every token's postings in one pass
    best_position: int | None = None
    best_score = 0.0
    for position, tokens in enumerate(words, start=1):
        score = 0.0
        for token in tokens:
            idx, vals = index.postings(token)
            hit = idx.searchsorted(idx.dtype.type(final_top1))  # a key of another dtype would copy idx first
            if hit < idx.shape[0] and idx[hit] == final_top1:
                score += float(vals[hit])
        if score > best_score:
            best_position, best_score = position, score
    return best_position
