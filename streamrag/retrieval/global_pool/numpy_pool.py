"""The pool algorithm in numpy: the per-word loop of :class:`PrefixScorer
<streamrag.retrieval.global_pool.scorer.PrefixScorer>` and the upkeep of its pool.

Selecting the top-k never sorts N scores. The scorer keeps a *pool* P of up to
``pool_size`` chunks and a bound τ with ``S(c) ≤ τ`` for every chunk outside P:

1. After word t, every outsider grew by at most the sum of the word's per-term maximum
   impacts (positive part), so ``bound = τ + Σ max impacts since the last refresh``
   (accumulated in float64 term by term; rounding is monotone, so the bound holds for
   the floats too). Pool members with ``S > bound`` beat every outsider; when there are
   at least k of them, the top-k is theirs — O(|P|) work.
2. Otherwise *refresh* at a threshold θ ≥ τ (the pool's score at rank |P|/16, or for
   a common first word its precomputed ``head_impact``): the outsiders touched since the
   last refresh that may now exceed θ are read back from the accumulator and join P, and
   τ becomes θ. Which postings may matter follows MaxScore: the longest postings lists
   whose maximum impacts sum below θ − τ cannot lift a chunk past θ on their own and are
   skipped; the others are filtered by impact before any accumulator read. P is cut back
   to ``pool_size`` (whole tie groups kept; τ rises to the best excluded score). If that
   certifies fewer than k members, the refresh is redone at θ = τ (every touched
   outsider read). O(postings passing the filters) — far fewer than the touched ones
   once a rare word has been heard.
3. If fewer than k members are above τ even then: when no impact is negative and τ = 0,
   every outsider scores exactly 0, and the top-k is the positive members followed by
   the smallest other ids; else an exact O(N) selection over the accumulator, and P is
   rebuilt from it (needed for okapi's negative idfs, or ties straddling τ).

Each step returns exactly the ranking of a full sort, which the parity tests check
against a from-scratch computation. This is the reference the compiled twin, :mod:`~streamrag.retrieval.global_pool.kernel`,
is tested against; :class:`NumpyPool` is a base of ``PrefixScorer``, which owns the
accumulator and the index these methods read.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from streamrag.retrieval.global_pool.bounds import FLOOR_SLACK, THETA_RANK_DIVISOR
from streamrag.retrieval.global_pool.index import GlobalIndex
from streamrag.retrieval.ranking import _topk, best_of_distinct

__all__ = ["NumpyPool"]


class NumpyPool:
    """The numpy code of the pool algorithm, over the state of a :class:`PrefixScorer
    <streamrag.retrieval.global_pool.scorer.PrefixScorer>` (set by its ``__init__``)."""

    index: GlobalIndex
    pool_size: int
    _acc: np.ndarray  # (N,) float64: the scores of the words added so far
    _mark: np.ndarray  # (N,) bool: scratch marks, False between calls
    _nonneg: bool  # no impact is negative
    _max_up: np.ndarray  # per term: its largest impact, positive part
    _touched: list[np.ndarray]  # every postings list added since the last clear

    def _rank_numpy(self, words: Sequence[np.ndarray], k_eff: int, topk: np.ndarray, top_scores: np.ndarray) -> None:
        """Fill ``topk`` and ``top_scores`` (n, k_eff) for ``words`` (term ids per word):
        steps 1–3 above, word by word."""
        index, acc = self.index, self._acc
        row = np.arange(k_eff, dtype=np.int64)  # S_0 = 0 everywhere: ids 0 … k−1
        pool = np.zeros(0, dtype=np.int64)
        tau = 0.0  # every chunk outside the pool scores ≤ tau
        bound = tau  # … and ≤ bound after the words added since the last refresh
        pending: list[tuple[int, int, int]] = []  # (term, lo, hi) added since the last refresh
        indptr, chunk_idx, impact, max_up = index.indptr, index.chunk_idx, index.impact, self._max_up
        for t, term_ids in enumerate(words):
            added = False
            for term in term_ids.tolist():
                lo, hi = int(indptr[term]), int(indptr[term + 1])
                if lo == hi:
                    continue
                ids = chunk_idx[lo:hi]
                self._touched.append(ids)  # before adding, so clear() is exact even after an error
                np.add.at(acc, ids, impact[lo:hi])
                bound += float(max_up[term])
                pending.append((term, lo, hi))
                added = True
            if added:  # a word adding nothing leaves every score, hence the ranking, as it was
                selected = self._select(pool, bound, k_eff)
                if selected is None:
                    row, pool, tau = self._refresh(pool, tau, bound, pending, k_eff)
                    pending = []
                    bound = tau
                else:
                    row = selected
            topk[t] = row
            top_scores[t] = acc[row]

    def _select(self, pool: np.ndarray, bound: float, k: int) -> np.ndarray | None:
        """Top-k of the pool members strictly above ``bound``; None if fewer than k are."""
        if pool.shape[0] < k:
            return None
        scores = self._acc[pool]
        sure = scores > bound
        if int(np.count_nonzero(sure)) < k:
            return None
        ids = pool[sure]
        return ids[best_of_distinct(ids, scores[sure], k)]

    # ------------------------------------------------------------------ pool upkeep

    def _refresh(
        self, pool: np.ndarray, tau: float, bound: float, pending: list[tuple[int, int, int]], k: int
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """New (row, pool, τ) after the words in ``pending``, when the pool alone cannot certify.

        First with a raised threshold θ ≥ τ (cheap: postings whose impact cannot lift an
        outsider above θ are skipped without reading the accumulator), then with θ = τ
        (every touched outsider read), then the exact fallback.
        """
        theta = self._threshold(pool, tau, pending, k)
        for level in (theta, tau) if theta > tau else (tau,):
            cand = self._candidates(pool, level, tau, bound, pending)
            new_pool, new_tau = self._cut(cand, level)
            row = self._select(new_pool, new_tau, k)
            if row is not None:
                return row, new_pool, new_tau
        return self._fallback(new_pool, new_tau, k)

    def _threshold(self, pool: np.ndarray, tau: float, pending: list[tuple[int, int, int]], k: int) -> float:
        """θ ≥ τ: the pool's score at rank max(k + 1, |pool|/16), or a lone first term's ``head_impact``.

        A high θ skips more postings now but leaves a narrower margin above τ for the next
        words; rank |pool|/16 measured best on Zipf corpora of 10⁵–10⁶ chunks (±20%).
        """
        if pool.shape[0] > k:
            scores = self._acc[pool]
            r = pool.shape[0] - max(k + 1, pool.shape[0] // THETA_RANK_DIVISOR)
            return max(tau, float(np.partition(scores, r)[r]))
        if pool.shape[0] == 0 and tau == 0.0 and len(pending) == 1 and self._nonneg:
            # The accumulator held zeros: the scores are this term's impacts, whose
            # HEAD_RANK-th largest value was precomputed.
            return max(tau, float(self.index.head_impact[pending[0][0]]))
        return tau

    def _candidates(
        self, pool: np.ndarray, theta: float, tau: float, bound: float, pending: list[tuple[int, int, int]]
    ) -> np.ndarray:
        """Pool ∪ {touched outsiders with S > θ}, without duplicates, reading few postings.

        An outsider c scored ≤ τ at the last refresh and gained δ_j(c) ≤ max_j from each
        pending term j, so S(c) > θ needs Σ_j δ_j(c) > θ − τ. As in MaxScore, the largest
        postings lists whose maxima sum below θ − τ are *non-essential*: such a c must
        also gain more than R = θ − τ − Σ non-essential maxima from the essential lists,
        hence more than R / (number of essential lists) from one of them, and more than
        ``θ − (bound − max_j)`` from list j itself. Only essential postings passing those
        impact floors (minus a relative 1e-9 slack covering float rounding) are read back
        from the accumulator. Exactness does not depend on the floors being tight.
        """
        index, acc, mark = self.index, self._acc, self._mark
        chunk_idx, impact, max_up = index.chunk_idx, index.impact, self._max_up
        slack = FLOOR_SLACK * (abs(theta) + abs(bound) + 1.0)
        gap = theta - tau
        essential = pending
        share = -np.inf
        if gap > 0.0:
            by_size = sorted(pending, key=lambda p: p[1] - p[2])  # longest postings first
            skipped = 0.0
            n_skip = 0
            for term, _, _ in by_size:
                if skipped + float(max_up[term]) >= gap - slack:
                    break
                skipped += float(max_up[term])
                n_skip += 1
            essential = by_size[n_skip:]
            if essential:
                share = (gap - skipped) / len(essential)
        mark[pool] = True
        parts = [pool]
        for term, lo, hi in essential:
            ids = chunk_idx[lo:hi]
            floor = max(theta - (bound - float(max_up[term])), share) - slack
            if floor > 0.0 or not self._nonneg:
                ids = ids[impact[lo:hi] >= floor]
            hit = ids[acc[ids] > theta]
            hit = hit[~mark[hit]]  # ids within one postings list are distinct
            mark[hit] = True
            parts.append(hit)
        cand = np.concatenate(parts) if len(parts) > 1 else pool
        mark[cand] = False
        return cand.astype(np.int64, copy=False)

    def _cut(self, ids: np.ndarray, tau: float) -> tuple[np.ndarray, float]:
        """Keep the best ``pool_size`` candidates (a large tie group at the cut whole); return (pool, τ')."""
        if ids.shape[0] <= self.pool_size:
            return ids, tau
        scores = self._acc[ids]
        cut = float(np.partition(scores, ids.shape[0] - self.pool_size - 1)[ids.shape[0] - self.pool_size - 1])
        keep = scores > cut  # the (pool_size+1)-th best score and below go
        if int(np.count_nonzero(keep)) < self.pool_size // 2:
            keep = scores >= cut
            below = scores[~keep]
            return ids[keep], max(tau, float(below.max())) if below.shape[0] else tau
        return ids[keep], max(tau, cut)

    def _fallback(self, pool: np.ndarray, tau: float, k: int) -> tuple[np.ndarray, np.ndarray, float]:
        """Fewer than k certain members: zero-fill (τ = 0, no negative impact) or O(N) exact."""
        acc = self._acc
        if self._nonneg and tau == 0.0:
            members = pool[acc[pool] > 0.0]
            return self._zero_fill(members, k), members, 0.0
        row = _topk(acc, k)
        # Rebuild the pool from every chunk: the bound is then the best excluded score.
        everything = np.arange(acc.shape[0], dtype=np.int64)
        if acc.shape[0] <= self.pool_size:
            return row, everything, -np.inf
        new_pool, new_tau = self._cut(everything, -np.inf)
        return row, new_pool, new_tau

    def _zero_fill(self, members: np.ndarray, k: int) -> np.ndarray:
        """Top-k when exactly ``members`` (fewer than k) score > 0 and every other chunk 0."""
        order = np.lexsort((members, -self._acc[members]))
        taken = set(members.tolist())
        fill = [c for c in range(k + len(taken)) if c not in taken][: k - members.shape[0]]
        return np.concatenate((members[order], np.array(fill, dtype=np.int64)))
