"""``summary.json`` of ``analyze`` and ``stats``, declared: the model its writer validates with.

:func:`~streamrag.analysis.stats.rq.summarize` builds the data (its sections are described
there and in the modules that compute them, their models in
:mod:`~streamrag.analysis.summary_parts`); :func:`check_summary` validates it against
:class:`AnalyzeSummary` before it is written, so the model cannot drift from what is
written, and its JSON Schema (``streamrag schema analyze-summary``) describes every file.
The data is written as built (key order, floats): validating changes no byte.

A statistic that is undefined is ``null``; a section a table cannot give (no entity
column, no gold density) is ``null`` or absent as the section's own docstring says.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from streamrag.analysis.summary_parts import (
    RQ1,
    RQ2,
    RQ4,
    Addition,
    Anchor,
    ChunkCap,
    EntityPosition,
    GoldDensity,
    GroundingPrecision,
    Mean,
    MeanMedian,
    NoOverlap,
    Num,
    Parameters,
    RobustnessArm,
    Spearman,
    _Frozen,
)
from streamrag.base.formats import FORMAT_VERSION

__all__ = ["AnalyzeSummary", "check_summary"]


class NMeanMedian(_Frozen):
    n: int
    mean: Num
    median: Num


class FixedThreshold(_Frozen):
    """The anchor's threshold for the arm's scale, and the final-query top-1 results it accepts."""

    rule: Literal["fixed"]
    threshold: float
    n_accepted: int
    share_accepted: Num


class CalibratedThreshold(_Frozen):
    """The arm's calibrated threshold and what set it (:mod:`streamrag.base.threshold`)."""

    rule: Literal["calibrated"]
    threshold: float = Field(description="τ: the arm's c-th highest final-query top-1 score (τ_B for BM25 itself)")
    reference_threshold: float = Field(description="τ_B: the anchor's threshold on the reference BM25 scores")
    n_questions: int = Field(description="m: the analyzed questions")
    n_reference_accepted: int = Field(description="c: questions whose reference score clears τ_B")
    n_accepted: int = Field(description="questions whose own score clears τ (c, more on ties)")
    share_accepted: Num


class ArmReflector(_Frozen):
    """The heuristic reflector's threshold for one retriever under both rules."""

    scale: Literal["bm25", "cosine"] = Field(description="what the score the reflector reads is on")
    fixed: FixedThreshold
    calibrated: CalibratedThreshold | None = Field(description="null: no question to calibrate on")


class TypeMedian(_Frozen):
    n: int
    median_phi_suf: Num


class RetrieverArm(_Frozen):
    """One compared retriever: its settings, the headline, RQ1, RQ2, RQ4 and its reflector threshold."""

    retriever: dict[str, Any] = Field(description="its settings (kind; a class's target and file SHA-256)")
    n_questions: int
    n_groundable: int
    share_groundable: Num
    n_retrieved_gold: int
    share_retrieved_gold: Num
    phi_sc: MeanMedian
    phi_suf: MeanMedian
    share_t_suf_1: Num
    volatility: Mean
    streamable_fraction: Num
    by_type: dict[str, TypeMedian]
    rq1: RQ1
    rq2: RQ2
    rq4: RQ4
    reflector: ArmReflector


class TypeOrder(_Frozen):
    n: int
    rho: Num
    p: Num
    types: list[str]
    min_n: int


class Agreement(_Frozen):
    n_questions: int
    n_retrieved_gold_both: int
    n_retrieved_gold_a_only: int
    n_retrieved_gold_b_only: int
    share_retrieved_gold_both: Num
    phi_sc_spearman: Spearman
    phi_suf_spearman: Spearman


class RetrieverPair(_Frozen):
    """Two arms: how alike they order the question types, and agree per question."""

    a: str
    b: str
    type_order: TypeOrder
    type_order_min_n: TypeOrder
    agreement: Agreement


class ThresholdReference(_Frozen):
    what: str = Field(description="the reference score a calibrated threshold is matched against, per question")
    threshold: float = Field(description="τ_B: the anchor's threshold on it (reflector.score_threshold's default)")


class RetrieverComparison(_Frozen):
    """``retrievers``: the compared retrievers by name (:mod:`streamrag.analysis.studies.retrievers`)."""

    retrievers: list[str] = Field(description="the arms' names, the analysis' own retriever first")
    reference: ThresholdReference = Field(description="what every arm's calibrated threshold is set against")
    arms: dict[str, RetrieverArm] = Field(description="each retriever by name: settings, headline, RQ1, RQ2, RQ4, reflector")
    pairs: list[RetrieverPair] = Field(description="each arm against each later one: type order and per-question agreement")


class AnalyzeSummary(_Frozen):
    """``summary.json`` of ``analyze`` (and of ``stats``, without the analysis' sections)."""

    model_config = ConfigDict(frozen=True, extra="forbid", title="streamrag summary.json (analyze, stats)")

    format_version: int = Field(description="The file's format version (streamrag.base.formats)", ge=1, le=FORMAT_VERSION)
    parameters: Parameters
    n_questions: int = Field(description="Questions in the statistics (skipped ones excluded)")
    n_skipped: int
    skip_reasons: dict[str, int]
    no_overlap: NoOverlap
    chunk_cap: ChunkCap
    rq1: RQ1
    rq2: RQ2
    rq4: RQ4
    gold_density: GoldDensity
    anchor: Anchor
    entity_position: EntityPosition | None = Field(description="null: the table has no entity column")
    grounding_precision: GroundingPrecision | None = Field(description="null: no gold_density or n_gold column")
    additions: list[Addition] = Field(description="Results the anchor study did not report")
    robustness: list[RobustnessArm] | None = Field(None, description="analyze: top-k × grounding arms")
    asr: dict[str, NMeanMedian] | None = Field(None, description="analyze over ASR hypotheses: its columns' statistics")
    retrievers: RetrieverComparison | None = Field(None, description="analyze --compare-retrievers: the retrievers compared")
    join: list[dict[str, Any]] | None = Field(None, description="stats --join: what each joined source added")


def check_summary(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (``summary.json``'s, ``format_version`` included), validated against
    :class:`AnalyzeSummary` (a ValidationError is a programming error: the writer and the
    model disagree); returned unchanged."""
    AnalyzeSummary.model_validate(data)
    return data
