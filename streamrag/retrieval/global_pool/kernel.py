"""Compiled twin of :meth:`PrefixScorer.rank_words <streamrag.retrieval.global_pool.scorer.PrefixScorer.rank_words>` (numba, the ``fast`` extra).

The algorithm is the numpy code's (:mod:`~streamrag.retrieval.global_pool.numpy_pool`):
the same accumulator additions in the same order (so every score is the same float), the
same bound, pool, MaxScore refresh and fallbacks, with one change in the order of work
(candidates collected during the add, see :func:`rank_words`) and plain loops where numpy
calls were (numba compiles them faster than its ``partition`` and ``argsort``; the
ranking order's are :mod:`~streamrag.retrieval.global_pool.order`). What compiling removes
is the per-word Python and numpy call overhead and the temporaries of the refresh's filters. Rankings follow
the exact ranking rule (score descending, chunk id ascending), so they cannot depend on
which twin ran; ``tests/parity/test_global_kernel.py`` compares the two on random corpora with
ties and negative impacts.

Importing this module imports numba (0.2–0.5 s); the first call compiles (about 10 s,
once per machine: numba caches the result on disk). On large corpora without negative
impacts the scorer runs :mod:`~streamrag.retrieval.global_pool.blockmax` first and this
kernel only for the queries it hands back. The scorer imports it only when
numba is installed and the compiled kernel is asked for (see ``PrefixScorer``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit as _njit

# The scorer's constants (numba reads module globals as compile-time constants).
from streamrag.retrieval.global_pool.bounds import FLOOR_SLACK, THETA_RANK_DIVISOR
from streamrag.retrieval.global_pool.order import gather, kth_smallest, sort_best

__all__ = ["compiled_on_disk", "rank_words"]

# Compiled on first call and cached on disk (numba writes next to this file, or to a
# per-user cache when that is read-only); nogil lets threads rank concurrently.
njit = _njit(cache=True, nogil=True)


@njit
def select(pool: np.ndarray, acc: np.ndarray, bound: float, k: int, row: np.ndarray) -> bool:
    """row = top-k of the pool members strictly above ``bound``; False (row untouched) if fewer than k are."""
    if pool.shape[0] < k:
        return False
    n_sure = 0
    for c in pool:
        if acc[c] > bound:
            n_sure += 1
    if n_sure < k:
        return False
    ids = np.empty(n_sure, np.int64)
    scores = np.empty(n_sure, np.float64)
    j = 0
    for c in pool:
        s = acc[c]
        if s > bound:
            ids[j] = c
            scores[j] = s
            j += 1
    sort_best(ids, scores, k, row)
    return True


@njit
def pool_rank_score(pool, acc, k):
    """The pool's score at rank max(k + 1, |pool| / THETA_RANK_DIVISOR) from the top; |pool| > k."""
    n = pool.shape[0]
    r = n - max(k + 1, n // THETA_RANK_DIVISOR)
    return kth_smallest(gather(pool, acc), r)


@njit
def threshold(pool, acc, tau, pend_term, n_pend, k, nonneg, head_impact):
    n = pool.shape[0]
    if n > k:
        return max(tau, pool_rank_score(pool, acc, k))
    if n == 0 and tau == 0.0 and n_pend == 1 and nonneg:
        return max(tau, head_impact[pend_term[0]])
    return tau


@njit
def candidates(pool, acc, mark, theta, tau, bound, pend_term, pend_lo, pend_hi, n_pend, chunk_idx, impact, max_up, nonneg):
    slack = FLOOR_SLACK * (abs(theta) + abs(bound) + 1.0)
    gap = theta - tau
    order = np.arange(n_pend)
    start = 0
    share = -np.inf
    if gap > 0.0:
        for i in range(1, n_pend):  # longest postings first, stable (insertion sort: few terms)
            j = i
            while j > 0 and pend_hi[order[j]] - pend_lo[order[j]] > pend_hi[order[j - 1]] - pend_lo[order[j - 1]]:
                order[j], order[j - 1] = order[j - 1], order[j]
                j -= 1
        skipped = 0.0
        for i in order:
            up = max_up[pend_term[i]]
            if skipped + up >= gap - slack:
                break
            skipped += up
            start += 1
        if start < n_pend:
            share = (gap - skipped) / (n_pend - start)
    size = pool.shape[0]
    for i in order[start:]:
        size += pend_hi[i] - pend_lo[i]
    cand = np.empty(size, np.int64)
    m = 0
    for c in pool:
        mark[c] = True
        cand[m] = c
        m += 1
    for i in order[start:]:
        floor = max(theta - (bound - max_up[pend_term[i]]), share) - slack
        filtered = floor > 0.0 or not nonneg
        for p in range(pend_lo[i], pend_hi[i]):
            if filtered and not impact[p] >= floor:
                continue
            c = chunk_idx[p]
            if acc[c] > theta and not mark[c]:
                mark[c] = True
                cand[m] = c
                m += 1
    for i in range(m):
        mark[cand[i]] = False
    return cand[:m]


@njit
def cut(ids, acc, tau, pool_size):
    """NumpyPool._cut: the best ``pool_size`` of ``ids`` (a large tie group at the cut whole), and τ'."""
    n = ids.shape[0]
    if n <= pool_size:
        return ids, tau
    scores = gather(ids, acc)
    at = kth_smallest(scores.copy(), n - pool_size - 1)
    n_above = 0
    for s in scores:
        if s > at:
            n_above += 1
    whole_tie = n_above < pool_size // 2  # keep the tie group at the cut too
    n_keep = n_above
    below = -np.inf
    if whole_tie:
        n_keep = 0
        for s in scores:
            if s >= at:
                n_keep += 1
            else:
                below = max(below, s)
    kept = np.empty(n_keep, np.int64)
    j = 0
    for i in range(n):
        if scores[i] > at or (whole_tie and scores[i] == at):
            kept[j] = ids[i]
            j += 1
    if not whole_tie:
        return kept, max(tau, at)
    return kept, (max(tau, below) if n_keep < n else tau)


@njit
def fallback(pool, acc, mark, tau, k, nonneg, pool_size, row):
    """NumpyPool._fallback: zero-fill when τ = 0 and no impact is negative, else exact O(N)."""
    n_docs = acc.shape[0]
    if nonneg and tau == 0.0:  # every outsider scores exactly 0: positive members, then the smallest other ids
        m = 0
        for c in pool:
            if acc[c] > 0.0:
                m += 1
        members = np.empty(m, np.int64)
        m = 0
        for c in pool:
            if acc[c] > 0.0:
                members[m] = c
                mark[c] = True
                m += 1
        sort_best(members, gather(members, acc), m, row)
        c = 0
        while m < k:
            if not mark[c]:
                row[m] = c
                m += 1
            c += 1
        for c in members:
            mark[c] = False
        return members, 0.0
    everything = np.arange(n_docs)
    sort_best(everything, acc, k, row)  # exact O(N); the pool is rebuilt from every chunk
    if n_docs <= pool_size:
        return everything, -np.inf
    return cut(everything, acc, -np.inf, pool_size)


@njit
def add_collecting(lo, hi, chunk_idx, impact, acc, mark, pool, floor, theta, scratch):
    """Add postings [lo, hi) and collect, on the way, the candidates a refresh at θ reads back.

    The word's only term is the only pending one, so these are the pool and the outsiders
    whose new score exceeds θ with an impact ≥ ``floor`` — what :func:`candidates` would
    find by a second pass over the same postings. Returns their count in ``scratch``.
    """
    m = 0
    for c in pool:
        mark[c] = True
        scratch[m] = c
        m += 1
    for p in range(lo, hi):
        c = chunk_idx[p]
        v = acc[c] + impact[p]
        acc[c] = v
        if v > theta and impact[p] >= floor and not mark[c]:
            mark[c] = True
            scratch[m] = c
            m += 1
    for i in range(m):
        mark[scratch[i]] = False
    return m


@njit
def fused_threshold(pool, acc, tau, term, k, head_impact):
    """θ for a refresh after adding ``term``, known *before* adding it (−inf: do not fuse).

    :func:`threshold` reads the pool after the add; its scores can only grow (no negative
    impact), so the same rank read before is a valid, slightly lower, θ.
    """
    if pool.shape[0] > k:
        return max(tau, pool_rank_score(pool, acc, k))
    if pool.shape[0] == 0 and tau == 0.0:
        return head_impact[term]
    return -np.inf


@njit
def rank_words(
    indptr,
    chunk_idx,
    impact,
    max_up,
    head_impact,
    nonneg,
    acc,
    mark,
    scratch,
    terms,
    word_ptr,
    k,
    pool_size,
    topk,
    top_scores,
):
    """Fill topk / top_scores (n, k) for the words ``terms[word_ptr[t]:word_ptr[t+1]]``, t = 0 … n−1.

    ``scratch`` is int64 (N,). One departure from the numpy twin's order of work, not its
    results: when a word has one term with postings, none is pending and no impact is
    negative, the refresh's first candidates are collected while the postings are added
    (:func:`add_collecting`) at a θ read before the add, instead of a second pass.
    """
    row = np.arange(k)  # S_0 = 0 everywhere: ids 0 … k−1
    trial = np.empty(k, np.int64)
    pool = np.zeros(0, np.int64)
    tau = 0.0
    bound = tau
    pend_term = np.empty(terms.shape[0], np.int64)
    pend_lo = np.empty(terms.shape[0], np.int64)
    pend_hi = np.empty(terms.shape[0], np.int64)
    n_pend = 0
    term = -1
    for t in range(word_ptr.shape[0] - 1):
        n_nonempty = 0
        for j in range(word_ptr[t], word_ptr[t + 1]):
            if indptr[terms[j]] < indptr[terms[j] + 1]:
                n_nonempty += 1
                term = terms[j]
        if n_nonempty == 0:  # the word adds nothing: every score, hence the ranking, is as it was
            for j in range(k):
                topk[t, j] = row[j]
                top_scores[t, j] = acc[row[j]]
            continue
        theta = -np.inf
        if nonneg and n_pend == 0 and n_nonempty == 1:
            theta = fused_threshold(pool, acc, tau, term, k, head_impact)
        n_collected = -1
        if theta > tau:
            lo, hi = indptr[term], indptr[term + 1]
            up = max_up[term]
            slack = FLOOR_SLACK * (abs(theta) + abs(bound + up) + 1.0)
            # candidates(): the lone term is essential unless its maximum cannot bridge θ − τ
            floor = theta - tau - slack if up >= theta - tau - slack else np.inf
            n_collected = add_collecting(lo, hi, chunk_idx, impact, acc, mark, pool, floor, theta, scratch)
            bound += up
            pend_term[0], pend_lo[0], pend_hi[0] = term, lo, hi
            n_pend = 1
        else:
            for j in range(word_ptr[t], word_ptr[t + 1]):
                term = terms[j]
                lo, hi = indptr[term], indptr[term + 1]
                if lo == hi:
                    continue
                for p in range(lo, hi):
                    acc[chunk_idx[p]] += impact[p]
                bound += max_up[term]
                pend_term[n_pend], pend_lo[n_pend], pend_hi[n_pend] = term, lo, hi
                n_pend += 1
        if select(pool, acc, bound, k, trial):
            row[:] = trial
        else:
            # NumpyPool._refresh: at θ ≥ τ, then at τ, then the exact fallback
            level = theta if n_collected >= 0 else threshold(pool, acc, tau, pend_term, n_pend, k, nonneg, head_impact)
            while True:
                if n_collected >= 0:
                    cand = scratch[:n_collected].copy()
                    n_collected = -1
                else:
                    cand = candidates(
                        pool, acc, mark, level, tau, bound, pend_term, pend_lo, pend_hi, n_pend, chunk_idx, impact, max_up, nonneg
                    )
                new_pool, new_tau = cut(cand, acc, level, pool_size)
                if select(new_pool, acc, new_tau, k, trial):
                    row[:] = trial
                    break
                if level <= tau:
                    new_pool, new_tau = fallback(new_pool, acc, mark, new_tau, k, nonneg, pool_size, row)
                    break
                level = tau
            pool, tau = new_pool, new_tau
            n_pend = 0
            bound = tau
        for j in range(k):
            topk[t, j] = row[j]
            top_scores[t, j] = acc[row[j]]


def compiled_on_disk(kernel: object = None) -> bool:
    """Whether numba's on-disk cache holds a compiled ``kernel`` (default :func:`rank_words`)
    for this source (False: the first call compiles it, seconds). Reads numba's cache index
    through its private attributes; if they change, the answer is True (nothing is announced)."""
    dispatcher: Any = rank_words if kernel is None else kernel  # private attributes, untyped
    try:
        return bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # a numba internals change must not break ranking
        return True
