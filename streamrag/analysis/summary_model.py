"""``summary.json`` of ``analyze`` and ``stats``, declared: the model its writer validates with.

:func:`~streamrag.analysis.stats.rq.summarize` builds the data (its sections are described
there and in the modules that compute them); :func:`check_summary` validates it against
:class:`AnalyzeSummary` before it is written, so the model cannot drift from what is
written, and its JSON Schema (``streamrag schema analyze-summary``) describes every file.
The data is written as built (key order, floats): validating changes no byte.

A statistic that is undefined is ``null``; a section a table cannot give (no entity
column, no gold density) is ``null`` or absent as the section's own docstring says.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from streamrag.base.formats import FORMAT_VERSION

__all__ = ["AnalyzeSummary", "check_summary"]

Num = float | None
"""A statistic (``null``: undefined)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Histogram(_Frozen):
    edges: list[float]
    counts: list[int]


class Describe(_Frozen):
    """φ over questions: quartiles, skewness and a histogram over [0, 1]."""

    n: int
    mean: Num
    median: Num
    q1: Num
    q3: Num
    skewness: Num
    histogram: Histogram


class Volatility(_Frozen):
    n: int
    mean: Num
    n_positive: int
    share_positive: Num


class RQ1(_Frozen):
    """Where stabilization happens."""

    n_questions: int
    n_groundable: int
    share_groundable: Num
    n_retrieved_gold: int
    share_retrieved_gold: Num
    phi_sc: Describe
    phi_suf: Describe
    n_t_suf_1: int
    share_t_suf_1: Num
    volatility: Volatility


class Mean(_Frozen):
    mean: Num


class StreamableSlice(_Frozen):
    n: int
    n_streamable: int
    streamable_fraction: Num


class StreamableCell(_Frozen):
    """The streamable fraction (H ≥ θ·L) at one (L, δ, θ), with mean H, H_G, H'."""

    L_ms: float
    delta_wps: float
    theta: float
    n: int
    n_streamable: int
    streamable_fraction: Num
    H_ms: Mean
    H_G_ms: Mean
    H_prime_ms: Mean
    retrieved_gold: StreamableSlice
    fallback: StreamableSlice


class RQ2(_Frozen):
    """How much latency stabilization can hide: the configured point and the grid."""

    point: StreamableCell
    grid: list[StreamableCell]


class GroupCell(_Frozen):
    n: int
    mean: Num
    median: Num
    median_ci95: list[Num] | None


class DunnPair(_Frozen):
    a: str
    b: str
    p_adj: Num


class DunnHolm(_Frozen):
    pairs: list[DunnPair]
    min_pair: DunnPair | None


class KruskalWallis(_Frozen):
    min_group_n: int | None = Field(None, description="kruskal_wallis_min_n only: the groups' least size")
    groups: list[str]
    n_groups: int
    n: int
    H: Num
    df: int
    p: Num
    epsilon2: Num
    epsilon2_adjusted: Num
    dunn_holm: DunnHolm


class Grouping(_Frozen):
    """φ_suf of retrieved-gold questions by one label (question type, domain, …)."""

    n: int
    n_unlabeled: int
    groups: dict[str, GroupCell]
    kruskal_wallis_all: KruskalWallis | None
    kruskal_wallis_min_n: KruskalWallis | None


class Spearman(_Frozen):
    n: int
    rho: Num
    p: Num


class RQ4(_Frozen):
    """Does stabilization depend on the question."""

    question_type: Grouping
    domain: Grouping
    static_or_dynamic: Grouping
    spearman_t_anchor_t_suf: Spearman | None
    spearman_phi_anchor_phi_suf: Spearman | None


class PhiSlice(_Frozen):
    n: int
    mean_phi_suf: Num
    median_phi_suf: Num
    n_t_suf_1: int
    share_t_suf_1: Num


class GoldDensity(_Frozen):
    density_cap: float
    retrieved_gold: PhiSlice
    specifically_grounded: PhiSlice | None
    n_density_undefined: int | None
    undefined_reason: str | None = Field(None, description="Why the slice is undefined (a table without gold_density)")


class TypeBaseline(_Frozen):
    mae_t_suf: Num
    eta2_phi_suf: Num


class Predictor(_Frozen):
    """A word position as a predictor of t_suf (the statistics only from 3 questions on)."""

    what: str
    n: int
    coverage: float
    spearman_rho: Num = None
    spearman_p: Num = None
    mae_t_suf: Num = None
    mae_t_suf_type_baseline: Num = None
    r2_phi_suf: Num = None


class Anchor(_Frozen):
    n: int
    question_type: TypeBaseline | None = None
    t_entity: Predictor | None = None
    t_entity_full: Predictor | None = None
    t_anchor: Predictor | None = None
    t_pivot: Predictor | None = None


class Correlation(_Frozen):
    rho: Num
    p: Num
    n: int


class EntityByType(_Frozen):
    n: int
    rho: Num
    p: Num
    mean_t_entity: Num
    mean_t_suf: Num


class EntityBlock(_Frozen):
    n: int
    spearman: Correlation
    mae_t_entity_words: Num
    mae_question_type_words: Num
    r2_t_entity: Num
    r2_question_type: Num
    by_type: dict[str, EntityByType]


class EntityPosition(_Frozen):
    predictor: str
    what: str
    n_retrieved_gold: int
    n_without_entity: int
    all: EntityBlock
    t_suf_gt_1: EntityBlock
    verdict: Literal["supported", "not supported", "undefined"]
    verdict_rule: str


class PrecisionCell(_Frozen):
    n: int
    mean_phi_suf: Num
    median_phi_suf: Num
    share_t_suf_1: Num
    median_t_suf: Num


class GroundingPrecision(_Frozen):
    all: PrecisionCell
    n_density_undefined: int | None = None
    by_density_cap: dict[str, PrecisionCell] | None = None
    n_gold_size_undefined: int | None = None
    by_gold_size_cap: dict[str, PrecisionCell] | None = None


class Addition(_Frozen):
    name: str
    note: str


class MeanMedian(_Frozen):
    mean: Num
    median: Num


class RobustnessArm(_Frozen):
    k: int
    grounding: str
    n_questions: int
    n_groundable: int
    share_groundable: Num
    n_retrieved_gold: int
    share_retrieved_gold: Num
    phi_suf: MeanMedian
    streamable_fraction: Num


class NoOverlap(_Frozen):
    n: int | None
    note: str


class ChunkCap(_Frozen):
    max_chunks: int | None
    n_questions_capped: int | None
    n_pages_unread: int | None
    n_chunks_cut: int | None


class Grid(_Frozen):
    L_ms: list[float]
    delta_wps: list[float]
    theta: list[float]


class Parameters(_Frozen):
    """The statistics' parameters (:mod:`streamrag.analysis.stats.params`), the RQ2 grid,
    the methods, and (``analyze``) the analysis settings."""

    table: str | None = Field(None, description="stats: the table read")
    L_ms: float
    delta_wps: float
    theta: float
    G_ms: float
    density_cap: float
    n_resamples: int
    seed: int
    bootstrap_streams: Literal["paper", "per-group"] = Field(
        "per-group", description="absent in summaries written before the choice existed, which drew per group"
    )
    grid: Grid
    histogram_bins: int
    min_group_n: int
    methods: dict[str, str]
    analysis: dict[str, Any] | None = Field(None, description="analyze: the analysis settings and streamrag's version")


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
