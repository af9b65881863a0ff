"""What the simulator knows about one question.

Two modes:

- **evidence** (full mode, or a table replayed with its ``prefixes.parquet``): per
  prefix t, the top-k chunk ids and what the reflectors read — the full query's score of
  the prefix's top chunk, that chunk's token coverage (distinct tokens and occurrences),
  whether a gold chunk is in the top-k. A speculative result *is* that evidence, and the
  reflectors judge it as the real ones would;
- **oracle** (a bare stabilization table): only t* is known, and a result at prefix t
  counts as sufficient iff ``t ≥ t*`` — an oracle reflector, which every output that
  used it says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np

from streamrag.base.threshold import ScoreSample

Need = Literal["rankings", "t_star"]
"""What a trigger or reflector may read of a question besides the words heard, declared
on its config as ``needs``: ``rankings`` (each prefix's evidence, :attr:`SimQuestion.topk`
and the arrays beside it; a bare stabilization table lacks it) or ``t_star`` (the
stabilization point; live input lacks it)."""


def kinds_without(union: Any, *needs: Need) -> tuple[str, ...]:
    """The kinds of a config union (``Annotated[A | B | …, Field(discriminator="kind")]``)
    whose ``needs`` hold none of ``needs`` (none given: the kinds that need nothing), in
    the union's order."""
    excluded = set(needs or get_args(Need))
    members = get_args(get_args(union)[0])
    return tuple(m.model_fields["kind"].default for m in members if not m.needs & excluded)


@dataclass(frozen=True, slots=True, eq=False)
class SimQuestion:
    """One question as the simulator sees it (prefix t at row t − 1 of every array).

    ``topk`` int (n, k): the top-k chunk ids of each prefix, best first;
    ``top_score`` float (n,): the full query's score of the prefix's top chunk;
    ``coverage_distinct`` / ``coverage_occurrences`` float (n,): the share of the full
    query's distinct tokens / token occurrences found in that chunk;
    ``gold_hit`` bool (n,): a gold chunk is in the prefix's top-k.
    All ``None`` when only the table row is known (oracle mode).
    """

    interaction_id: str
    n_words: int
    t_sc: int
    t_suf: int | None
    topk: np.ndarray | None = None
    top_score: np.ndarray | None = None
    coverage_distinct: np.ndarray | None = None
    coverage_occurrences: np.ndarray | None = None
    gold_hit: np.ndarray | None = None
    question_type: str = ""
    scale: Literal["bm25", "cosine"] = "bm25"
    """What ``top_score`` is: a BM25 score, or a cosine in [−1, 1] (dense retrieval)."""
    top_rows: tuple[tuple[int, ...], ...] | None = None
    """``topk`` as tuples of ints, built once (every tool result's trace event carries one)."""
    revised: np.ndarray | None = None
    """bool (n,): with ASR hypotheses, whether hypothesis t is later revised (None: prefixes)."""
    features: dict[str, np.ndarray] | None = None
    """Per-prefix trigger features by name (:func:`streamrag.analysis.features.compute.prefix_features`),
    what a ``learned`` trigger reads (None in oracle mode)."""
    input_us: tuple[int, ...] | None = None
    """Recorded ASR hypotheses: each one's arrival (µs from the start of speech), used in
    place of the cadence's word times (None: the cadence decides)."""
    threshold_sample: ScoreSample | None = None
    """The final-query top-1 scores of every question the analysis ranked, this retriever's
    and BM25's, shared by the run's questions: what ``reflector.threshold = "calibrated"``
    sets the threshold from (:mod:`streamrag.base.threshold`; None: no analysis ran here,
    a table replay)."""

    @property
    def t_star(self) -> int:
        """The stabilization point: ``t_suf`` where defined, else ``t_sc``."""
        return self.t_suf if self.t_suf is not None else self.t_sc

    @property
    def trace_driven(self) -> bool:
        """True when only t* is known (no per-prefix evidence): the oracle reflector."""
        return self.topk is None

    @property
    def retrieved_gold(self) -> bool:
        return self.t_suf is not None

    def top(self, t: int) -> tuple[int, ...] | None:
        """The top-k chunk ids of prefix t (None in oracle mode)."""
        if self.topk is None:
            return None
        if self.top_rows is not None:
            return self.top_rows[t - 1]
        return tuple(int(c) for c in self.topk[t - 1])
