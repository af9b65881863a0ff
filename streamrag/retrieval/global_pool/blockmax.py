"""Block-max prefix ranking: long postings lists are bounded per block, not added (numba).

The pool scorer (:mod:`~streamrag.retrieval.global_pool.kernel`) adds every posting of every
word to its accumulator; at 10⁶ chunks a query's function words alone bring about a
million postings, and adding them is most of its time. This scorer adds only the *short*
lists. A *long* list (df ≥ :attr:`BlockStore.min_df
<streamrag.retrieval.global_pool.blocks.BlockStore>`) is *deferred*: its contribution to a
chunk of block b is bounded by the list's largest impact in that block, ``bm[b]``, and
its postings are read only in the blocks that may hold a top-k chunk. Per prefix t:

1. **A lower bound θ on the k-th best score** — the k chunks ranked at t − 1, rescored
   exactly with the new word (scores only grow: no impact is negative); for the first
   word, a long term's k-th largest impact or the k-th largest sum over the chunks its
   short lists touched. Raised during the scan by the k-th best score found so far.
2. **The blocks that may hold a chunk scoring ≥ θ**: the accumulator's maximum in the
   block plus the deferred lists' block maxima reaches θ. In those, the deferred lists'
   postings are summed into a block-sized buffer and every chunk whose total F reaches θ
   is a candidate. No other chunk can score θ or more (its bound does not reach it).
3. **The exact top-k**: F is the score summed in another order than the query's, so the
   candidates within a rounding slack of the k-th best F are rescored exactly — their
   impacts looked up term by term and summed in query order from 0.0, the float a
   from-scratch sum gives — and ranked by (score descending, chunk id ascending).

When a prefix has more than ``lim`` candidates while lists are deferred (θ too weak
against the bounds), the deferred lists are added after all (*materialised*) and the
scan is redone. The comparisons use the relative slack FLOOR_SLACK, far above the
rounding of any sum here; exactness never rests on a bound being tight.

The kernel returns the number of prefixes it ranked: fewer than the query's words when a
prefix has no positive θ (fewer than k chunks score above 0, the zero-fill regime); the
caller then ranks the query with the pool scorer, which handles it. The accumulator is
left cleared either way. ``tests/parity/test_global_blockmax.py`` checks the rankings and scores
against the pool scorer on corpora built to exercise each path.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit as _njit

from streamrag.retrieval.global_pool.bounds import BLOCK_SHIFT, FLOOR_SLACK, SUPER_SHIFT, TOP_N
from streamrag.retrieval.global_pool.order import sort_best

__all__ = ["Query", "State", "exact_scores", "rank_blocks"]


class State(NamedTuple):
    """A scorer's buffers, zero (False) between queries (numba reads a named tuple's fields)."""

    acc: np.ndarray  # (N,) float64: the added lists' sums (the pool kernel's accumulator)
    acc_max: np.ndarray  # (blocks,) float64: its maximum per block
    sup_max: np.ndarray  # (superblocks,) float64: … per superblock of 2**SUPER_SHIFT blocks
    sup_dsum: np.ndarray  # (superblocks,) float64: the largest dsum of a superblock's blocks
    dsum: np.ndarray  # (blocks,) float64: the deferred lists' block maxima, summed
    seen: np.ndarray  # (blocks,) bool: evaluated, and untouched by an added list since
    fmax: np.ndarray  # (blocks,) float64: … its best total then
    dsum_at: np.ndarray  # (blocks,) float64: … and dsum then
    dpart: np.ndarray  # (N,) float64: the deferred lists' postings summed, in evaluated blocks
    dcount: np.ndarray  # (blocks,) int64: … how many deferred lists each block has summed
    dblocks: np.ndarray  # (blocks,) int64: … which blocks hold such sums
    n_dblocks: np.ndarray  # (1,) int64: … how many
    mark: np.ndarray  # (N,) bool: scratch marks (the pool kernel's)
    cand_ids: np.ndarray  # (N,) int64: candidates (the pool kernel's scratch)
    cand_f: np.ndarray  # (N,) float64: … their totals


class Query(NamedTuple):
    """One query: term ids in order, word boundaries, and each occurrence's block-data row (−1: short list)."""

    terms: np.ndarray
    word_ptr: np.ndarray
    slot: np.ndarray


njit = _njit(cache=True, nogil=True)
BLOCK = 1 << BLOCK_SHIFT


@njit
def find_in(lo, hi, chunk_idx, c):
    """The position of chunk c in chunk_idx[lo:hi] (ascending), or −1."""
    p = lo + np.searchsorted(chunk_idx[lo:hi], c)
    return p if p < hi and chunk_idx[p] == c else -1


@njit
def find_occ(indptr, chunk_idx, terms, slot, bp, j, c):
    """The position of chunk c in occurrence j's postings, or −1 (within c's block for a long list)."""
    s = slot[j]
    if s < 0:
        return find_in(indptr[terms[j]], indptr[terms[j] + 1], chunk_idx, c)
    p0 = indptr[terms[j]]
    b = c >> BLOCK_SHIFT
    return find_in(p0 + bp[s, b], p0 + bp[s, b + 1], chunk_idx, c)


@njit
def exact_score(indptr, chunk_idx, impact, terms, slot, bp, n_occ, c):
    """Σ impact of chunk c over the first n_occ term occurrences, in query order from 0.0."""
    s = 0.0
    for j in range(n_occ):
        p = find_occ(indptr, chunk_idx, terms, slot, bp, j, c)
        if p >= 0:
            s += impact[p]
    return s


@njit
def exact_scores(indptr, chunk_idx, impact, terms, ids, out):
    """out[i] = the full query's score of chunk ids[i], summed as a from-scratch sum is."""
    no_slot = np.full(terms.shape[0], -1, np.int64)
    no_bp = np.zeros((0, 1), np.int32)
    for i in range(ids.shape[0]):
        out[i] = exact_score(indptr, chunk_idx, impact, terms, no_slot, no_bp, terms.shape[0], ids[i])


@njit
def add_list(lo, hi, chunk_idx, impact, state):
    """Add postings [lo, hi) to the accumulator, keeping each block's and superblock's
    maximum; the blocks touched lose their evaluated maximum (``seen``)."""
    acc, acc_max, sup_max, seen = state.acc, state.acc_max, state.sup_max, state.seen
    for p in range(lo, hi):
        c = chunk_idx[p]
        v = acc[c] + impact[p]
        acc[c] = v
        b = c >> BLOCK_SHIFT
        seen[b] = False
        if v > acc_max[b]:
            acc_max[b] = v
            if v > sup_max[b >> SUPER_SHIFT]:
                sup_max[b >> SUPER_SHIFT] = v


@njit
def defer(dsum, sup_dsum, bm_row):
    """Add a deferred list's block maxima to dsum and refresh each superblock's largest."""
    for b in range(dsum.shape[0]):
        dsum[b] += bm_row[b]
    for sb in range(sup_dsum.shape[0]):
        hi = dsum[sb << SUPER_SHIFT : (sb + 1) << SUPER_SHIFT]
        sup_dsum[sb] = hi.max()


@njit
def heap_push(heap, m, k, v):
    """Keep the k largest values seen in a min-heap heap[:m]; returns the new m."""
    if m < k:
        j = m
        m += 1
        while j > 0:
            parent = (j - 1) >> 1
            if heap[parent] <= v:
                break
            heap[j] = heap[parent]
            j = parent
        heap[j] = v
        return m
    if v <= heap[0]:
        return m
    i = 0
    while True:  # replace the root and sift down
        child = 2 * i + 1
        if child >= m:
            break
        if child + 1 < m and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= v:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = v
    return m


@njit
def first_theta(indptr, chunk_idx, acc, mark, terms, j0, j1, slot, top, k, heap):
    """A lower bound on the k-th best score of the first word with postings (−inf: none).

    A long term gives its k-th largest impact (k chunks score at least that, impacts being
    ≥ 0); the short lists, the k-th largest accumulator value over the distinct chunks
    they touched (each at most that chunk's score).
    """
    theta = -np.inf
    m = 0
    for j in range(j0, j1):
        term = terms[j]
        if slot[j] >= 0:
            if k <= TOP_N:
                theta = max(theta, top[slot[j], k - 1])
            continue
        for p in range(indptr[term], indptr[term + 1]):
            c = chunk_idx[p]
            if not mark[c]:
                mark[c] = True
                m = heap_push(heap, m, k, acc[c])
    for j in range(j0, j1):
        if slot[j] < 0:
            term = terms[j]
            for p in range(indptr[term], indptr[term + 1]):
                mark[chunk_idx[p]] = False
    if m == k:
        theta = max(theta, heap[0])
    return theta


@njit
def scan(postings, state, query, bp, active, n_active, theta, k, lim, heap):
    """Step 2: the candidates with F ≥ θ − slack into ``cand_ids`` / ``cand_f``; their count,
    or −1 past ``lim`` while lists are deferred. θ rises with the k-th best F found (step 1)."""
    indptr, chunk_idx, impact = postings
    acc, acc_max, dsum, sup_max, sup_dsum = state.acc, state.acc_max, state.dsum, state.sup_max, state.sup_dsum
    seen, fmax, dsum_at, dpart, dcount = state.seen, state.fmax, state.dsum_at, state.dpart, state.dcount
    cand_ids, cand_f = state.cand_ids, state.cand_f
    terms, slot = query.terms, query.slot
    n_docs, n_blocks = acc.shape[0], acc_max.shape[0]
    n_c = 0
    m = 0
    lo_th = theta - FLOOR_SLACK * (abs(theta) + 1.0)
    for sb in range(sup_max.shape[0]):
        if sup_max[sb] + sup_dsum[sb] < lo_th:  # bounds every block below
            continue
        for b in range(sb << SUPER_SHIFT, min((sb + 1) << SUPER_SHIFT, n_blocks)):
            if acc_max[b] + dsum[b] < lo_th:
                continue
            # Evaluated before and untouched since: its best total then, plus the bounds of
            # the lists deferred since (dsum grew by their sum; the slack covers the subtraction).
            if seen[b] and fmax[b] + (dsum[b] - dsum_at[b]) < lo_th:
                continue
            base = b << BLOCK_SHIFT
            if dcount[b] < n_active:  # the deferred lists' postings in this block, once each
                if dcount[b] == 0:
                    state.dblocks[state.n_dblocks[0]] = b
                    state.n_dblocks[0] += 1
                for a in range(dcount[b], n_active):
                    j = active[a]
                    p0 = indptr[terms[j]]
                    for p in range(p0 + bp[slot[j], b], p0 + bp[slot[j], b + 1]):
                        dpart[chunk_idx[p]] += impact[p]
                dcount[b] = n_active
            best = -np.inf
            for c in range(base, min(base + BLOCK, n_docs)):
                f = acc[c] + dpart[c]
                best = max(best, f)
                if f >= lo_th:
                    cand_ids[n_c] = c
                    cand_f[n_c] = f
                    n_c += 1
                    m = heap_push(heap, m, k, f)
                    if m == k and heap[0] > theta:  # k chunks score ≥ heap[0] − slack
                        raised = heap[0] - 2.0 * FLOOR_SLACK * (abs(heap[0]) + 1.0)
                        if raised > theta:
                            theta = raised
                            lo_th = theta - FLOOR_SLACK * (abs(theta) + 1.0)
            seen[b] = True
            fmax[b] = best
            dsum_at[b] = dsum[b]
            if n_active > 0 and n_c > lim:
                return -1
    return n_c


@njit
def clear_state(state, chunk_idx, added_lo, added_hi, n_added):
    """Zero what a query left: the accumulator (whole when more than N/8 postings were
    added, else posting by posting), block maxima, deferred sums."""
    acc = state.acc
    total = 0
    for i in range(n_added):
        total += added_hi[i] - added_lo[i]
    if 8 * total > acc.shape[0]:
        acc[:] = 0.0
    else:
        for i in range(n_added):
            for p in range(added_lo[i], added_hi[i]):
                acc[chunk_idx[p]] = 0.0
    state.acc_max[:] = 0.0
    state.sup_max[:] = 0.0
    state.dsum[:] = 0.0
    state.sup_dsum[:] = 0.0
    state.seen[:] = False
    clear_deferred(state)


@njit
def clear_deferred(state):
    """Zero the deferred sums of the blocks that hold some."""
    dpart, dcount, dblocks, n_dblocks = state.dpart, state.dcount, state.dblocks, state.n_dblocks
    for i in range(n_dblocks[0]):
        b = dblocks[i]
        dcount[b] = 0
        for c in range(b << BLOCK_SHIFT, min((b + 1) << BLOCK_SHIFT, dpart.shape[0])):
            dpart[c] = 0.0
    n_dblocks[0] = 0


@njit
def rank_blocks(postings, state, query, bm, bp, top, k, lim, topk, top_scores):
    """Fill topk / top_scores for the prefixes of ``terms[word_ptr[t]:word_ptr[t+1]]``; returns
    how many prefixes were ranked (all unless the zero-fill regime was met, see the module).

    ``postings`` = (indptr, chunk_idx, impact); ``query`` = (terms, word_ptr, slot), where
    ``slot[j]`` is occurrence j's row in the block data ``bm`` / ``bp`` / ``top`` (−1: a
    short list, added). ``state`` holds the scorer's buffers (see ``BlockRanker``), zero
    (False) on entry and on return.
    """
    indptr, chunk_idx, impact = postings
    acc, dsum, seen, mark, cand_ids, cand_f = state.acc, state.dsum, state.seen, state.mark, state.cand_ids, state.cand_f
    terms, word_ptr, slot = query.terms, query.word_ptr, query.slot
    n_words = word_ptr.shape[0] - 1
    n_occ = terms.shape[0]
    heap = np.empty(k, np.float64)
    row = np.arange(k)
    row_s = np.zeros(k)
    active = np.empty(n_occ, np.int64)  # the deferred occurrences, in arrival order
    n_active = 0
    added_lo = np.empty(n_occ, np.int64)  # the postings ranges added, for clearing
    added_hi = np.empty(n_occ, np.int64)
    n_added = 0
    ranked_before = False
    done = n_words
    for t in range(n_words):
        j0, j1 = word_ptr[t], word_ptr[t + 1]
        any_postings = False
        for j in range(j0, j1):
            lo, hi = indptr[terms[j]], indptr[terms[j] + 1]
            if lo == hi:
                continue
            any_postings = True
            if slot[j] >= 0:
                active[n_active] = j
                n_active += 1
                defer(dsum, state.sup_dsum, bm[slot[j]])
            else:
                add_list(lo, hi, chunk_idx, impact, state)
                added_lo[n_added], added_hi[n_added] = lo, hi
                n_added += 1
        if not any_postings:  # every score, hence the ranking, is as it was
            for i in range(k):
                topk[t, i] = row[i]
                top_scores[t, i] = row_s[i]
            continue
        if ranked_before:  # step 1: the last top-k, rescored exactly with this word
            theta = np.inf
            for i in range(k):
                v = row_s[i]
                for j in range(j0, j1):
                    p = find_occ(indptr, chunk_idx, terms, slot, bp, j, row[i])
                    if p >= 0:
                        v += impact[p]
                row_s[i] = v
                theta = min(theta, v)
        else:
            theta = first_theta(indptr, chunk_idx, acc, mark, terms, j0, j1, slot, top, k, heap)
        if not theta > 0.0:
            done = t
            break
        n_c = scan(postings, state, query, bp, active, n_active, theta, k, lim, heap)
        if n_c < 0:  # too many candidates: add the deferred lists after all and scan again
            for a in range(n_active):
                lo, hi = indptr[terms[active[a]]], indptr[terms[active[a]] + 1]
                add_list(lo, hi, chunk_idx, impact, state)
                added_lo[n_added], added_hi[n_added] = lo, hi
                n_added += 1
            n_active = 0
            dsum[:] = 0.0
            state.sup_dsum[:] = 0.0
            seen[:] = False
            clear_deferred(state)
            n_c = scan(postings, state, query, bp, active, 0, theta, k, lim, heap)
        if n_c < k:  # θ was a valid bound, so this cannot happen; hand over rather than guess
            done = t
            break
        # Step 3: the candidates within slack of the k-th best F, rescored exactly, ranked.
        m = 0
        for i in range(n_c):
            m = heap_push(heap, m, k, cand_f[i])
        floor = heap[0] - 2.0 * FLOOR_SLACK * (abs(heap[0]) + 1.0)
        m = 0
        for i in range(n_c):
            if cand_f[i] >= floor:
                cand_ids[m] = cand_ids[i]
                m += 1
        for i in range(m):
            cand_f[i] = exact_score(indptr, chunk_idx, impact, terms, slot, bp, j1, cand_ids[i])
        sort_best(cand_ids[:m], cand_f[:m], k, row)
        for i in range(k):
            for q in range(m):  # the exact score just computed (m is k plus near-ties)
                if cand_ids[q] == row[i]:
                    row_s[i] = cand_f[q]
                    break
            topk[t, i] = row[i]
            top_scores[t, i] = row_s[i]
        ranked_before = True
    clear_state(state, chunk_idx, added_lo, added_hi, n_added)
    return done
