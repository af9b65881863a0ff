"""What the simulator knows about one question.

Two modes:

- **full** — built from the analyzer's prefix rankings (``topk``, ``gold``,
  ``final_scores``, ``final_coverage`` set): a speculative result *is* the top-k of its
  prefix and reflectors judge it as the real ones would;
- **trace-driven** — built from a stabilization table (``topk`` and ``gold`` are
  ``None``): a speculative result at prefix t counts as sufficient iff ``t ≥ t*``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np


class ChunkLookup(Protocol):
    """Per-chunk values read by chunk id: an array over all N chunks (per-question scope),
    or the values of the ranked chunks only (global scope). The retrieval layer's
    ``ChunkScores`` has this shape; the pipeline cannot import it (layers go one way)."""

    def __getitem__(self, chunk_idx: int, /) -> Any: ...


@dataclass(frozen=True, slots=True)
class SimQuestion:
    """One question as the simulator sees it.

    ``topk[t-1]`` is the top-k chunk ids of prefix t (shape ``(n_words, k)``);
    ``final_scores[c]`` is chunk c's retrieval score for the full query and
    ``final_coverage[c]`` the share of the full query's tokens that occur in chunk c
    (both used by the heuristic reflector).
    """

    interaction_id: str
    n_words: int
    t_sc: int
    t_suf: int | None
    topk: np.ndarray | None
    gold: frozenset[int] | None
    final_scores: ChunkLookup | None
    final_coverage: ChunkLookup | None
    question_type: str = ""
    scale: Literal["bm25", "cosine"] = "bm25"
    """What ``final_scores`` are: BM25 scores, or cosines in [−1, 1] (dense retrieval)."""

    @property
    def t_star(self) -> int:
        """The stabilization point: ``t_suf`` where defined, else ``t_sc``."""
        return self.t_suf if self.t_suf is not None else self.t_sc

    @property
    def trace_driven(self) -> bool:
        """True when only t* is known (no prefix rankings)."""
        return self.topk is None

    @property
    def retrieved_gold(self) -> bool:
        return self.t_suf is not None
