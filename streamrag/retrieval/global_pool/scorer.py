"""Top-k of every word prefix over a global index, touching only each new word's postings.

Scores follow the incremental identity ``S_t = S_{t−1} + Σ_{w ∈ tok(q_t)} impact(w, ·)``:
one dense float64 accumulator of N chunks (8 MB per million, allocated once per
:class:`PrefixScorer` and reused by every query) receives each token's postings
(``np.add.at``, O(df)), in token order, so every score is the float a from-scratch sum
gets. The ranking rule is the per-question one: score descending, chunk id ascending,
zero-score chunks eligible.

Selecting the top-k never sorts N scores: the scorer keeps a *pool* P of up to
``pool_size`` chunks and a bound τ with ``S(c) ≤ τ`` for every chunk outside P, certifies
the top-k from P when it can, and otherwise refreshes P from the postings touched since
(MaxScore) or, last, selects over the accumulator. The steps, and their numpy code, are
:mod:`~streamrag.retrieval.global_pool.numpy_pool`; each returns exactly the ranking of a
full sort, which the parity tests check against a from-scratch computation.

The per-word loop has a compiled twin, :mod:`~streamrag.retrieval.global_pool.kernel`
(numba, the ``fast`` extra), which :class:`PrefixScorer` runs when numba is installed:
the same steps without the per-word numpy calls, and with the GIL released so threads
rank queries side by side (:mod:`~streamrag.retrieval.ahead`). The numpy code is the
reference it is tested against.

Adding every posting is itself the floor of this design at 10⁶ chunks (a query's
function words bring about a million). So where it applies — compiled, no negative
impact, at least ``blocks.MIN_DOCS`` chunks — the scorer first runs a second
design, :mod:`~streamrag.retrieval.global_pool.blockmax`: long lists are not added but
bounded per block of 64 chunks and read only where a top-k chunk may be, the top-k
rescored exactly in query order. It hands the rare queries it does not rank (fewer than
k chunks above 0) back to the pool kernel. Rankings and scores are the same floats
either way (tested against the numpy code).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from streamrag.retrieval.base import chunk_coverage
from streamrag.retrieval.global_pool.index import GlobalIndex
from streamrag.retrieval.global_pool.numpy_pool import NumpyPool
from streamrag.retrieval.global_pool.rankings import ChunkValues, GlobalPrefixRankings
from streamrag.retrieval.ranking import check_rankable

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


class PrefixScorer(NumpyPool):
    """Reusable prefix ranker over one :class:`GlobalIndex` (not thread-safe: it owns an accumulator).

    ``pool_size`` trades per-word work (O(pool)) against how often the pool must be
    refreshed from the touched postings; results never depend on it (None: the kernel's
    best, :data:`DEFAULT_POOL_SIZE` or :data:`COMPILED_POOL_SIZE`). ``kernel`` picks who
    runs :meth:`rank_words`: ``"numba"`` its compiled twin
    (:mod:`~streamrag.retrieval.global_pool.kernel`, the ``fast`` extra), ``"numpy"`` the numpy
    code (:class:`~streamrag.retrieval.global_pool.numpy_pool.NumpyPool`), ``"auto"`` numba when it is installed. The rankings and scores are
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
        index = self.index
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
                self._acc,
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
        self._rank_numpy(words, k_eff, topk, top_scores)
        return topk, top_scores

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
