"""Per-term block data for the block-max scorer (:mod:`~streamrag.retrieval.global_pool.blockmax`).

The chunks are cut into blocks of ``2**BLOCK_SHIFT`` consecutive ids. For a *long*
postings list (df ≥ ``min_df``), the scorer does not add the postings to its
accumulator when the word is heard; it bounds what they can add, per block, by the
list's largest impact in that block, and reads the postings of just the blocks that may
hold a top-k chunk. For that it needs, per long term:

- ``bm`` float32 (n_blocks,): the largest impact in each block (0 where the term is
  absent), rounded *up* to float32, so it still bounds every float64 impact;
- ``bp`` int32 (n_blocks + 1,): offsets of each block's postings within the term's list
  (chunk ids ascend in a list, so a block's postings are contiguous);
- ``top`` float64 (TOP_N,): the term's TOP_N largest impacts, descending (a lower bound
  on the k-th best score of a prefix whose first word holds the term).

Built on first use of each term and kept for the index's lifetime (one store per index,
shared by the scorers of every thread; a lock guards its growth). ~8 bytes per block per
long term seen: 125 KB per term at 10⁶ chunks.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from streamrag.retrieval.global_pool.bounds import BLOCK_SHIFT, SUPER_SHIFT, TOP_N
from streamrag.retrieval.global_pool.index import GlobalIndex

__all__ = ["BlockRanker", "BlockStore", "block_store"]

# A list is long from this share of the chunks on (never below TOP_N postings). On the
# benchmark's corpora at 10⁶ chunks 1/8 ranked fastest of 1/64, 1/16, 1/8 and 1/4 (the
# figures: benchmarks/RESULTS.md): a list much shorter puts a high block maximum in most blocks.
LONG_SHARE = 1 / 8
# From this many chunks on. On the benchmark's corpora the block kernel ranked faster
# than the pool kernel at every size tried, from 3,000 chunks to 10⁶; below, the
# difference is immaterial and the pool kernel ranks.
MIN_DOCS = 1 << 11
# More candidates than this in one prefix while lists are deferred: add them after all.
CANDIDATE_LIMIT = 4096


class BlockStore:
    """The block data of an index's long terms, by slot (see the module docstring)."""

    def __init__(self, index: GlobalIndex, *, min_df: int | None = None) -> None:
        n_docs = index.n_docs
        self.index = index
        self.n_blocks = (n_docs + (1 << BLOCK_SHIFT) - 1) >> BLOCK_SHIFT
        self.min_df = max(TOP_N, int(n_docs * LONG_SHARE) if min_df is None else min_df)
        self._slot: dict[int, int] = {}
        self._bm = np.zeros((0, self.n_blocks), dtype=np.float32)
        self._bp = np.zeros((0, self.n_blocks + 1), dtype=np.int32)
        self._top = np.zeros((0, TOP_N), dtype=np.float64)
        self._lock = threading.Lock()

    @property
    def n_terms(self) -> int:
        """How many long terms have their block data built."""
        return len(self._slot)

    def slots(self, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(slot per term occurrence (−1: short list), bm, bp, top)`` — the arrays as of this
        call, holding every slot returned (later growth replaces them, never changes them)."""
        indptr = self.index.indptr
        df = indptr[terms + 1] - indptr[terms]
        slot = np.full(terms.shape[0], -1, dtype=np.int64)
        with self._lock:
            for i in np.flatnonzero(df >= self.min_df).tolist():
                term = int(terms[i])
                found = self._slot.get(term)
                slot[i] = self._add(term) if found is None else found
            return slot, self._bm, self._bp, self._top

    def _add(self, term: int) -> int:
        index = self.index
        lo, hi = int(index.indptr[term]), int(index.indptr[term + 1])
        ids, vals = index.chunk_idx[lo:hi], index.impact[lo:hi]
        bp = np.searchsorted(ids >> BLOCK_SHIFT, np.arange(self.n_blocks + 1), side="left").astype(np.int32)
        bm64 = np.zeros(self.n_blocks, dtype=np.float64)
        present = bp[:-1] < bp[1:]
        bm64[present] = np.maximum.reduceat(vals, bp[:-1][present])
        bm = bm64.astype(np.float32)
        low = bm.astype(np.float64) < bm64  # rounded down: one float32 step up bounds it again
        bm[low] = np.nextafter(bm[low], np.float32(np.inf))
        top = -np.sort(-np.partition(vals, vals.shape[0] - TOP_N)[vals.shape[0] - TOP_N :])
        slot = len(self._slot)
        if slot == self._bm.shape[0]:  # grow by doubling (copies; the old arrays stay valid)
            cap = max(8, 2 * slot)
            self._bm = _grown(self._bm, cap)
            self._bp = _grown(self._bp, cap)
            self._top = _grown(self._top, cap)
        self._bm[slot], self._bp[slot], self._top[slot] = bm, bp, top
        self._slot[term] = slot
        return slot


def _grown(a: np.ndarray, rows: int) -> np.ndarray:
    out = np.zeros((rows, a.shape[1]), dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


_STORES_LOCK = threading.Lock()


def block_store(index: GlobalIndex) -> BlockStore | None:
    """The index's one :class:`BlockStore` (made on first call), or None where block-max
    ranking does not apply: negative impacts (okapi) or fewer than MIN_DOCS chunks."""
    if index.n_docs < MIN_DOCS or not index.nonnegative:
        return None
    with _STORES_LOCK:
        found = index.derived.get("blocks")
        if isinstance(found, BlockStore):
            return found
        store = index.derived["blocks"] = BlockStore(index)
        return store


class BlockRanker:
    """One scorer's buffers for :func:`~streamrag.retrieval.global_pool.blockmax.rank_blocks`
    over a shared :class:`BlockStore` (not thread-safe: one per scorer, as its accumulator)."""

    def __init__(
        self, store: BlockStore, postings: tuple[np.ndarray, ...], acc: np.ndarray, mark: np.ndarray, scratch: np.ndarray
    ) -> None:
        from streamrag.retrieval.global_pool import blockmax

        self._kernel: Any = blockmax  # numba dispatchers (untyped)
        self.store = store
        index = store.index
        self._postings = postings  # (indptr, chunk_idx, impact), read-only views as the pool kernel reads them
        n_blocks = store.n_blocks
        # The accumulator, marks and candidate ids are the scorer's own (the pool kernel's).
        n_docs = index.n_docs
        n_super = (n_blocks + (1 << SUPER_SHIFT) - 1) >> SUPER_SHIFT
        self._state = blockmax.State(
            acc=acc,
            acc_max=np.zeros(n_blocks, dtype=np.float64),
            sup_max=np.zeros(n_super, dtype=np.float64),
            sup_dsum=np.zeros(n_super, dtype=np.float64),
            dsum=np.zeros(n_blocks, dtype=np.float64),
            seen=np.zeros(n_blocks, dtype=np.bool_),
            fmax=np.zeros(n_blocks, dtype=np.float64),
            dsum_at=np.zeros(n_blocks, dtype=np.float64),
            dpart=np.zeros(n_docs, dtype=np.float64),
            dcount=np.zeros(n_blocks, dtype=np.int64),
            dblocks=np.zeros(n_blocks, dtype=np.int64),
            n_dblocks=np.zeros(1, dtype=np.int64),
            mark=mark,
            cand_ids=scratch,
            cand_f=np.empty(n_docs, dtype=np.float64),
        )

    def rank(self, terms: np.ndarray, word_ptr: np.ndarray, k: int, topk: np.ndarray, top_scores: np.ndarray) -> bool:
        """Fill every prefix's top-k; False when the query needs the pool scorer (zero-fill regime)."""
        slot, bm, bp, top = self.store.slots(terms)
        done = self._kernel.rank_blocks(
            self._postings,
            self._state,
            self._kernel.Query(terms, word_ptr, slot),
            bm,
            bp,
            top,
            k,
            CANDIDATE_LIMIT,
            topk,
            top_scores,
        )
        return bool(done == word_ptr.shape[0] - 1)

    def exact(self, terms: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """The full query's scores of chunks ``ids``, summed in query order as a from-scratch sum is."""
        out = np.empty(ids.shape[0], dtype=np.float64)
        self._kernel.exact_scores(*self._postings, terms, ids, out)
        return out
