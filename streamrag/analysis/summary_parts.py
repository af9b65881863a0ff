"""The sections of ``analyze``'s ``summary.json`` (RQ1, RQ2, RQ4, the predictors, the
robustness arms, the parameters), each a frozen model: the parts
:class:`~streamrag.analysis.summary_model.AnalyzeSummary` is made of.

A statistic that is undefined is ``null``; a section a table cannot give (no entity
column, no gold density) is ``null`` or absent as the section's own docstring says.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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
