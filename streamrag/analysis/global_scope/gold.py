"""Which chunks of a global pool are gold for a question.

Three rules (``GoldRule``), the first the default:

- ``answer``: every chunk of the pool holding an answer under the §3 grounding (exact or
  relaxed), wherever it came from. This is what the anchor's later global-corpus work
  measured — answer-bearing evidence anywhere in the pool — and it is what a retriever
  over a shared corpus is judged by: a chunk with the answer serves whichever page it
  was taken from. It also makes common answers (numbers, "yes") gold in many chunks;
  ``gold_density`` shows it.
- ``own``: the same grounding, restricted to the question's own pages (the per-question
  definition of gold, ranked against the whole pool).
- ``labeled``: every chunk of the documents a dataset labels as the question's evidence
  (BEIR qrels, curated supporting pages); no string matching.

Grounding a question against the whole pool must not scan every chunk (2,706 questions
× millions of chunks), so :class:`PoolGrounder` narrows candidates with the inverted
index and verifies only those. It returns exactly what
:func:`~streamrag.data.grounding.gold_in_normalized` returns over all chunks, because the
normalized chunk is its tokens joined by single spaces (``[a-z0-9]+`` after lowercasing):

- a one-token candidate matches at a word boundary iff it is a token of the chunk;
- a candidate ``w_1 … w_m`` (m ≥ 2) is a substring only if the chunk has a token ending
  with ``w_1``, the tokens ``w_2 … w_{m−1}`` and a token starting with ``w_m``: the
  smallest of those postings sets is verified by substring search;
- relaxed: all content tokens present, i.e. the intersection of their postings.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

import numpy as np

from streamrag.data.grounding import GroundingMode, _content_tokens, answer_candidates, normalize
from streamrag.data.pools.corpus import ChunkPool, PoolQuestion
from streamrag.retrieval.global_pool.index import GlobalIndex

__all__ = ["GOLD_RULES", "GoldRule", "PoolGrounder", "question_gold"]

GoldRule = Literal["answer", "own", "labeled"]
GOLD_RULES: tuple[str, ...] = ("answer", "own", "labeled")

_EMPTY = np.zeros(0, dtype=np.int64)


class PoolGrounder:
    """Answer grounding over every chunk of a pool, through its :class:`GlobalIndex`.

    ``chunk_text(i)`` returns chunk i's text (for verifying multi-token candidates). The
    index must use the paper tokenizer (its normalized text is the joined tokens).
    """

    def __init__(self, index: GlobalIndex, chunk_text: Callable[[int], str] | Sequence[str]) -> None:
        self.index = index
        self._text = chunk_text if callable(chunk_text) else chunk_text.__getitem__
        self._by_prefix: list[str] | None = None
        self._by_suffix: list[str] | None = None

    def _ids(self, token: str) -> np.ndarray:
        return np.asarray(self.index.postings(token)[0], dtype=np.int64)

    def _sorted_terms(self) -> tuple[list[str], list[str]]:
        if self._by_prefix is None or self._by_suffix is None:
            self._by_prefix = sorted(self.index.terms)
            self._by_suffix = sorted(t[::-1] for t in self.index.terms)
        return self._by_prefix, self._by_suffix

    def _terms_starting(self, prefix: str, table: list[str]) -> list[str]:
        lo = bisect.bisect_left(table, prefix)
        hi = bisect.bisect_left(table, prefix + "\U0010ffff")
        return table[lo:hi]

    def _union(self, terms: Iterable[str]) -> tuple[np.ndarray, int]:
        parts = [self._ids(t) for t in terms]
        size = sum(p.shape[0] for p in parts)
        return (np.unique(np.concatenate(parts)) if parts else _EMPTY), size

    def _multi(self, candidate: str) -> np.ndarray:
        """Chunks whose normalized text contains the multi-token ``candidate``."""
        words = candidate.split()
        sets: list[np.ndarray] = [self._ids(w) for w in words[1:-1]]
        if not sets or min(s.shape[0] for s in sets) > 64:
            # Without a selective interior token, bound by the edge tokens too.
            by_prefix, by_suffix = self._sorted_terms()
            first = [t[::-1] for t in self._terms_starting(words[0][::-1], by_suffix)]
            last = self._terms_starting(words[-1], by_prefix)
            sizes = [sum(self.index.df(t) for t in first), sum(self.index.df(t) for t in last)]
            sets.append(self._union(first if sizes[0] <= sizes[1] else last)[0])
        sets.sort(key=lambda s: s.shape[0])
        cand = sets[0]
        for s in sets[1:]:
            if not cand.shape[0]:
                break
            cand = np.intersect1d(cand, s, assume_unique=True)
        hits = [c for c in cand.tolist() if candidate in normalize(self._text(c))]
        return np.array(hits, dtype=np.int64)

    def gold(self, answers: Iterable[str], mode: GroundingMode = "exact") -> frozenset[int]:
        """Ids of the pool's chunks holding an answer (= ``gold_in_normalized`` over all chunks)."""
        if mode not in ("exact", "relaxed"):
            raise ValueError(f"unknown grounding mode {mode!r}; use 'exact' or 'relaxed'")
        found: list[np.ndarray] = []
        for candidate in answer_candidates(answers):
            words = candidate.split()
            if len(words) == 1:
                found.append(self._ids(words[0]))
                continue
            found.append(self._multi(candidate))
            content = _content_tokens(candidate) if mode == "relaxed" else []
            if len(content) >= 2:
                both = self._ids(content[0])
                for token in content[1:]:
                    both = np.intersect1d(both, self._ids(token))
                found.append(both)
        if not found:
            return frozenset()
        return frozenset(np.unique(np.concatenate(found)).tolist())


def question_gold(
    question: PoolQuestion,
    rule: GoldRule,
    mode: GroundingMode,
    *,
    pool: ChunkPool,
    grounder: PoolGrounder | None,
) -> frozenset[int]:
    """Gold chunk ids of ``question`` under ``rule`` (see the module docstring)."""
    if rule == "labeled":
        return frozenset(pool.chunk_ids(question.labeled_docs).tolist())
    if grounder is None:
        raise ValueError(f"gold rule {rule!r} needs a PoolGrounder")
    gold = grounder.gold(question.record.answers, mode)
    if rule == "answer":
        return gold
    if rule == "own":
        own = set(pool.chunk_ids(question.own_docs).tolist())
        return frozenset(c for c in gold if c in own)
    raise ValueError(f"unknown gold rule {rule!r}; use one of {', '.join(GOLD_RULES)}")
