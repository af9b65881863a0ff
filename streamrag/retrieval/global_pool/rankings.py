"""What ranking a query's prefixes over a global corpus returns: the top-k of every
prefix and the full query's values of just the chunks those hold (O(n·k), not O(N)).

Made by :class:`~streamrag.retrieval.global_pool.scorer.PrefixScorer` (lexical) and
:mod:`~streamrag.retrieval.dense.pooled` (dense over a pool).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True, eq=False)
class ChunkValues:
    """Read-only values of some chunks of a large corpus: ``values[chunk_idx] → float``.

    Holds only the chunks a question's rankings returned (the heuristic reflector looks up
    nothing else), so a question costs O(n·k), not O(N). Looking up any other chunk raises
    ``KeyError``. ``ids`` int64 sorted, ``values`` float64 aligned, ``n_chunks`` = N.
    """

    ids: np.ndarray
    values: np.ndarray
    n_chunks: int

    def __getitem__(self, chunk_idx: int) -> float:
        c = int(chunk_idx)
        pos = int(np.searchsorted(self.ids, c))
        if pos >= self.ids.shape[0] or int(self.ids[pos]) != c:
            raise KeyError(f"chunk {c} is not among the chunks ranked for this question")
        return float(self.values[pos])

    def __contains__(self, chunk_idx: object) -> bool:
        if not isinstance(chunk_idx, (int, np.integer)):
            return False
        pos = int(np.searchsorted(self.ids, int(chunk_idx)))
        return pos < self.ids.shape[0] and int(self.ids[pos]) == int(chunk_idx)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def as_dict(self) -> dict[int, float]:
        return dict(zip(self.ids.tolist(), self.values.tolist(), strict=True))


@dataclass(frozen=True, slots=True, eq=False)
class GlobalPrefixRankings:
    """Top-k of every prefix of one query over a global corpus (the arrays are read-only).

    Attributes:
        n_words: n = ``len(query.split())``.
        k: the requested k.
        topk: int32 (n, min(k, N)); row t−1 is ``topk(t)``, best first.
        topk_scores: float64, same shape: the scores of those chunks at that prefix.
        final_scores: full-query score of every chunk appearing in ``topk``.
        final_coverage: share of the full query's tokens (with repetition) occurring in
            each of those chunks.
        final_tokens: the full query's tokens (all of them, known to the corpus or not).
        n_chunks: N.
    """

    n_words: int
    k: int
    topk: np.ndarray
    topk_scores: np.ndarray
    final_scores: ChunkValues
    final_coverage: ChunkValues
    final_tokens: tuple[str, ...]
    n_chunks: int

    @property
    def top1(self) -> np.ndarray:
        return self.topk[:, 0]

    @property
    def k_eff(self) -> int:
        return int(self.topk.shape[1])
