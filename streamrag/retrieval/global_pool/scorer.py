"""Top-k of every word prefix over a global index, touching only each new word's postings.

Scores follow the incremental identity ``S_t = S_{t−1} + Σ_{w ∈ tok(q_t)} impact(w, ·)``:
one dense float64 accumulator of N chunks (8 MB per million, allocated once per
:class:`PrefixScorer` and reused by every query) receives each token's postings
(``np.add.at``, O(df)), in token order, so every score is the float a from-scratch sum
gets. The ranking rule is the per-question one: score descending, chunk id ascending,
zero-score chunks eligible.

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
against a from-scratch computation.

The per-word loop has a compiled twin, :mod:`~streamrag.retrieval.global_pool.kernel`
(numba, the ``fast`` extra), which :class:`PrefixScorer` runs when numba is installed:
the same steps without the per-word numpy calls, and with the GIL released so threads
rank queries side by side (:mod:`~streamrag.retrieval.ahead`). The code here is the
reference it is tested against.

Adding every posting is itself the floor of this design at 10⁶ chunks (a query's
function words bring about a million). So where it applies — compiled, no negative
impact, at least ``blocks.MIN_DOCS`` chunks — the scorer first runs a second
design, :mod:`~streamrag.retrieval.global_pool.blockmax`: long lists are not added but
bounded per block of 64 chunks and read only where a top-k chunk may be, the top-k
rescored exactly in query order. It hands the rare queries it does not rank (fewer than
k chunks above 0) back to the pool kernel. Rankings and scores are the same floats
either way (tested against the code here).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from streamrag.retrieval.base import chunk_coverage
from streamrag.retrieval.global_pool.bounds import FLOOR_SLACK, THETA_RANK_DIVISOR
from streamrag.retrieval.global_pool.index import GlobalIndex
from streamrag.retrieval.global_pool.rankings import ChunkValues, GlobalPrefixRankings
from streamrag.retrieval.ranking import _topk, best_of_distinct, check_rankable

if TYPE_CHECKING:
    from streamrag.retrieval.global_pool.blocks import BlockRanker

__all__ = ["ChunkValues", "GlobalPrefixRankings", "PrefixScorer", "global_prefix_rankings"]

# Pool sizes that measured best on the benchmark's Zipf corpora at 10⁵ and 10⁶ chunks
# (benchmarks/bench_global.py). The numpy twin pays a few dozen numpy calls per word
# whatever the pool, so a large pool that spares refreshes pays off; the compiled kernel's
# per-word cost is O(pool), and 32–256 were within noise of each other there.
DEFAULT_POOL_SIZE = 4096
COMPILED_POOL_SIZE = 64
# Below this share of N touched postings, the accumulator is cleared posting by posting.
_CLEAR_BY_POSTINGS = 0.125
_NO_TERMS = np.zeros(0, dtype=np.int64)


def _compiled_kernel(*, required: bool) -> Callable[..., None] | None:
    """kernel.rank_words, or None when numba is not installed (an error if ``required``)."""
    try:
        from streamrag.retrieval.global_pool.kernel import rank_words
    except ImportError as exc:
        if required:
            raise ImportError(f"kernel='numba' needs numba: pip install 'streamrag[fast]' ({exc})") from exc
        return None
    _announce_compile()
    return rank_words


@functools.cache
def _announce_compile() -> None:
    """Once per process: if the kernel is not compiled on disk yet, say why the first
    ranking pauses (numba compiling, no progress of its own)."""
    from streamrag.retrieval.global_pool.blockmax import rank_blocks
    from streamrag.retrieval.global_pool.kernel import compiled_on_disk

    if not (compiled_on_disk() and compiled_on_disk(rank_blocks)):
        from streamrag.base.progress import notice

        notice("compiling the global-scope ranking kernels (numba; once for this install, about 15 s)")


def _block_ranker(
    index: GlobalIndex, postings: tuple[np.ndarray, ...], acc: np.ndarray, mark: np.ndarray, scratch: np.ndarray
) -> BlockRanker | None:
    from streamrag.retrieval.global_pool.blocks import BlockRanker, block_store

    store = block_store(index)
    return None if store is None else BlockRanker(store, postings, acc, mark, scratch)


def _read_only(a: np.ndarray, dtype: type) -> np.ndarray:
    """A read-only, C-contiguous view of ``a`` as ``dtype`` (a copy only if it must convert)."""
    view: np.ndarray = np.ascontiguousarray(a, dtype=dtype).view()
    view.flags.writeable = False
    return view


class PrefixScorer:
    """Reusable prefix ranker over one :class:`GlobalIndex` (not thread-safe: it owns an accumulator).

    ``pool_size`` trades per-word work (O(pool)) against how often the pool must be
    refreshed from the touched postings; results never depend on it (None: the kernel's
    best, :data:`DEFAULT_POOL_SIZE` or :data:`COMPILED_POOL_SIZE`). ``kernel`` picks who
    runs :meth:`rank_words`: ``"numba"`` its compiled twin
    (:mod:`~streamrag.retrieval.global_pool.kernel`, the ``fast`` extra), ``"numpy"`` this
    module's code, ``"auto"`` numba when it is installed. The rankings and scores are
    the same either way (tested); only the speed differs. ``blocks=False`` keeps the
    compiled path on the pool kernel alone (no block-max ranking; for comparison).
    """

    def __init__(
        self,
        index: GlobalIndex,
        *,
        pool_size: int | None = None,
        kernel: Literal["auto", "numba", "numpy"] = "auto",
        blocks: bool = True,
    ) -> None:
        if pool_size is not None and pool_size < 1:
            raise ValueError(f"pool_size must be ≥ 1, got {pool_size}")
        if kernel not in ("auto", "numba", "numpy"):
            raise ValueError(f"kernel must be 'auto', 'numba' or 'numpy', got {kernel!r}")
        self._kernel = _compiled_kernel(required=kernel == "numba") if kernel != "numpy" else None
        if pool_size is None:
            pool_size = DEFAULT_POOL_SIZE if self._kernel is None else COMPILED_POOL_SIZE
        self.index = index
        self.pool_size = pool_size
        self._acc = np.zeros(index.n_docs, dtype=np.float64)
        self._mark = np.zeros(index.n_docs, dtype=bool)
        self._nonneg = index.nonnegative
        self._max_up = np.maximum(np.asarray(index.max_impact, dtype=np.float64), 0.0)
        self._touched: list[np.ndarray] = []  # every postings list added since the last clear
        # The compiled kernel's candidate buffer (distinct chunk ids, so N at most).
        self._scratch = np.empty(index.n_docs if self._kernel is not None else 0, dtype=np.int64)
        # The index's arrays as the kernel reads them: always read-only, so that an index built
        # in memory and one memory-mapped from disk share one compiled (and cached) kernel.
        self._postings = (
            ()
            if self._kernel is None
            else tuple(
                _read_only(a, dtype)
                for a, dtype in (
                    (index.indptr, np.int64),
                    (index.chunk_idx, np.int32),
                    (index.impact, np.float64),
                    (self._max_up, np.float64),
                    (index.head_impact, np.float64),
                )
            )
        )
        # The block-max kernel (blockmax) first, where it applies (compiled, no
        # negative impact, a large corpus); the pool kernel then only for what it hands back.
        self._blocks = (
            _block_ranker(index, self._postings[:3], self._acc, self._mark, self._scratch)
            if self._kernel is not None and blocks
            else None
        )
        self._exact_in_acc = True  # False after the block kernel ranked: its accumulator is cleared
        self._last_terms = _NO_TERMS  # … and the query it ranked, for final_scores

    # ------------------------------------------------------------------ ranking

    def rank_words(self, words: Sequence[np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k of every prefix of a query given as term ids per word.

        Returns ``(topk int32 (n, k_eff), topk_scores float64 (n, k_eff))``. The full
        query's scores of any chunks are then :meth:`final_scores` until :meth:`clear`
        (call it before the next query; :meth:`rank` does). The pool kernel and the
        numpy code leave them in the accumulator; the block-max kernel leaves it clear.
        """
        index, acc = self.index, self._acc
        k_eff = min(k, index.n_docs)
        topk = np.empty((len(words), k_eff), dtype=np.int32)
        top_scores = np.empty((len(words), k_eff), dtype=np.float64)
        terms = np.concatenate([np.asarray(w, dtype=np.int64) for w in words]) if words else _NO_TERMS
        n_terms = index.indptr.shape[0] - 1
        if terms.shape[0] and not 0 <= int(terms.min()) <= int(terms.max()) < n_terms:
            bad = terms[(terms < 0) | (terms >= n_terms)][0]
            raise ValueError(f"term id {int(bad)} is not in the index (ids 0 … {n_terms - 1})")
        self._exact_in_acc = True
        if self._kernel is not None and k_eff > 0:
            word_ptr = np.zeros(len(words) + 1, dtype=np.int64)
            np.cumsum([len(w) for w in words], out=word_ptr[1:])
            if self._blocks is not None and self._touched:
                self.clear()  # the block kernel starts from a zero accumulator
            if self._blocks is not None and self._blocks.rank(terms, word_ptr, k_eff, topk, top_scores):
                self._exact_in_acc = False
                self._last_terms = terms
                return topk, top_scores
            indptr = index.indptr
            self._touched.extend(index.chunk_idx[indptr[t] : indptr[t + 1]] for t in terms.tolist())
            self._kernel(
                *self._postings,
                self._nonneg,
                acc,
                self._mark,
                self._scratch,
                terms,
                word_ptr,
                k_eff,
                self.pool_size,
                topk,
                top_scores,
            )
            return topk, top_scores
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
        return topk, top_scores

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

    def final_scores(self, ids: np.ndarray) -> np.ndarray:
        """The last ranked query's full scores of chunks ``ids`` (before :meth:`clear`): read
        from the accumulator, or, after the block kernel, summed exactly as it is summed."""
        ids = np.asarray(ids, dtype=np.int64)
        if self._exact_in_acc:
            return self._acc[ids]
        assert self._blocks is not None
        return self._blocks.exact(self._last_terms, ids)

    def clear(self) -> None:
        """Zero the accumulator for the next query (by postings when few were touched)."""
        touched = self._touched
        if sum(s.shape[0] for s in touched) < _CLEAR_BY_POSTINGS * self._acc.shape[0]:
            for seg in touched:
                self._acc[seg] = 0.0
        else:
            self._acc.fill(0.0)
        self._touched = []

    @property
    def n_chunks(self) -> int:
        return self.index.n_docs

    @property
    def compiled(self) -> bool:
        """True when the compiled kernel ranks (it releases the GIL: threads rank in parallel)."""
        return self._kernel is not None

    def rank(self, query: str, *, k: int = 3) -> GlobalPrefixRankings:
        """:func:`global_prefix_rankings` with this scorer's accumulator."""
        index = self.index
        word_tokens_ = [index.tokenizer(w) for w in query.split()]
        check_rankable(query, len(word_tokens_), index.n_docs, k)
        words = [index.term_ids(tokens) for tokens in word_tokens_]
        try:
            topk, top_scores = self.rank_words(words, k)
            support = np.unique(topk).astype(np.int64)
            final_scores = self.final_scores(support)
        finally:
            self.clear()
        final_tokens = tuple(t for tokens in word_tokens_ for t in tokens)
        coverage = chunk_coverage(index, final_tokens, support)
        for a in (topk, top_scores, support, final_scores, coverage):
            a.flags.writeable = False
        return GlobalPrefixRankings(
            n_words=len(words),
            k=k,
            topk=topk,
            topk_scores=top_scores,
            final_scores=ChunkValues(support, final_scores, index.n_docs),
            final_coverage=ChunkValues(support, coverage, index.n_docs),
            final_tokens=final_tokens,
            n_chunks=index.n_docs,
        )


def global_prefix_rankings(index: GlobalIndex, query: str, *, k: int = 3) -> GlobalPrefixRankings:
    """Top-k of every prefix ``q[1:t]``, t = 1 … n, over a global index.

    Same ranking rule and errors as :func:`~streamrag.retrieval.prefix.prefix_rankings`.
    For many queries, reuse one :class:`PrefixScorer` (this allocates an N-sized
    accumulator per call).
    """
    return PrefixScorer(index).rank(query, k=k)
