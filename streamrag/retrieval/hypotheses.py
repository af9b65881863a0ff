"""Rankings of ASR partial hypotheses, incrementally.

BM25 is a sum over query tokens, so a hypothesis' scores are its words' term scores
added in order. Consecutive hypotheses share a prefix of words: the ranker keeps the
score vector after each word of the current hypothesis (a stack), and for the next one
rolls back to the longest shared prefix — taking off exactly the replaced words' terms —
then adds the new words. Each hypothesis costs only the words that changed (a pure
extension costs its one new word, as for word prefixes), and since every vector is built
by adding tokens in word order from zero, each score is the same float as ranking the
hypothesis from scratch (tested), not an approximation after subtractions.

With hypotheses that are the word prefixes (no revisions) the result equals
:func:`~streamrag.retrieval.prefix.prefix_rankings` exactly.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from streamrag.base.errors import EmptyCorpusError, EmptyQueryError
from streamrag.retrieval.bm25 import BM25Index
from streamrag.retrieval.ranking import _topk
from streamrag.retrieval.tokenize import Tokenizer


@dataclass(frozen=True, slots=True, eq=False)
class HypothesisRankings:
    """The top-k of every hypothesis (the :class:`~streamrag.retrieval.base.Rankings`
    protocol, with ``n_words`` = number of hypotheses and row i = hypothesis i + 1);
    the full query is the last hypothesis."""

    n_words: int
    k: int
    topk: np.ndarray
    final_scores: np.ndarray
    final_tokens: tuple[str, ...]
    words_scored: int
    """Words whose terms were added over all hypotheses: the incremental work (n for
    word prefixes; ranking each hypothesis from scratch adds Σ |hypothesis|)."""

    @property
    def top1(self) -> np.ndarray:
        return self.topk[:, 0]

    @property
    def k_eff(self) -> int:
        return int(self.topk.shape[1])


class HypothesisScorer:
    """Scores of a sequence of hypotheses, each from the longest prefix it shares with the last."""

    def __init__(self, index: BM25Index, tokenizer: Tokenizer | None = None) -> None:
        self.index = index
        self.tokenizer = tokenizer if tokenizer is not None else index.tokenizer
        self._tokens: dict[str, list[str]] = {}
        self._words: list[str] = []
        self._sums: list[np.ndarray] = [np.zeros(index.n_docs, dtype=np.float64)]
        self.words_scored = 0

    def tokens(self, word: str) -> list[str]:
        cached = self._tokens.get(word)
        if cached is None:
            cached = self._tokens[word] = self.tokenizer(word)
        return cached

    def scores(self, words: Sequence[str]) -> np.ndarray:
        """Scores of the hypothesis ``words`` (read-only view; valid until the next call)."""
        shared = 0
        for old, new in zip(self._words, words, strict=False):
            if old != new:
                break
            shared += 1
        del self._sums[shared + 1 :]  # roll back: the replaced words' terms are gone
        del self._words[shared:]
        for word in words[shared:]:
            current = self._sums[-1].copy()
            for token in self.tokens(word):
                idx, vals = self.index.postings(token)
                if idx.shape[0]:
                    current[idx] += vals  # ids within one postings list are unique
            self._sums.append(current)
            self._words.append(word)
            self.words_scored += 1
        return self._sums[-1]


def hypothesis_rankings(
    index: BM25Index, hypotheses: Sequence[Sequence[str]], *, k: int = 3, tokenizer: Tokenizer | None = None
) -> HypothesisRankings:
    """Top-k of every hypothesis (word lists, in arrival order), incrementally.

    Ranking as for prefixes: score descending, ties by chunk id ascending.

    Raises:
        EmptyQueryError: no hypothesis, or the last one has no word.
        EmptyCorpusError: the index has no chunk.
        ValueError: k < 1.
    """
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")
    if not hypotheses or not hypotheses[-1]:
        raise EmptyQueryError("the final hypothesis has no words: nothing to rank")
    if index.n_docs == 0:
        raise EmptyCorpusError("the corpus has no chunks: nothing to rank")
    k_eff = min(k, index.n_docs)
    scorer = HypothesisScorer(index, tokenizer)
    topk = np.empty((len(hypotheses), k_eff), dtype=np.int32)
    scores = np.zeros(0)
    for i, words in enumerate(hypotheses):
        scores = scorer.scores(words)
        topk[i] = _topk(scores, k_eff)
    final = scores.copy()
    topk.flags.writeable = False
    final.flags.writeable = False
    final_tokens = tuple(itertools.chain.from_iterable(scorer.tokens(w) for w in hypotheses[-1]))
    return HypothesisRankings(len(hypotheses), k, topk, final, final_tokens, scorer.words_scored)
