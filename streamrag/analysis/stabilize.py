"""The analyzer: every question → prefix rankings → stabilization row (design §2, §7).

One pass per question ranks every prefix once at ``k_max = max(k, 5)``; the top-1, top-3
and top-5 arms are prefixes of that ranking's columns, so the robustness arms (k ∈ {1, 3,
5} × grounding exact / relaxed) cost no extra retrieval.

``settings.retriever`` picks the ranking by kind (:mod:`streamrag.retrieval.kinds`):
``bm25`` (the paper preset) or ``dense`` (all-MiniLM-L6-v2 cosine; the ``dense`` extra).
Everything else stays lexical in both modes: grounding, ``token_coverage`` (the heuristic
reflector's 40 % rule) and the anchors — ``t_anchor`` (first rare word, a corpus df
property) and ``t_pivot`` (the word adding the most BM25 score to the *active*
retriever's final top-1 chunk). ``settings.compare_retrievers`` also ranks with the other
retriever and keeps its row in ``QuestionAnalysis.by_retriever`` (summary.json
``retrievers``, :mod:`streamrag.analysis.studies.retrievers`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, model_validator

from streamrag.analysis import metrics
from streamrag.analysis.evidence.prefixes import PrefixEvidence, prefix_evidence
from streamrag.analysis.studies.anchor import DEFAULT_MAX_DF_SHARE, t_anchor, t_pivot
from streamrag.analysis.studies.entity import EntityContext
from streamrag.base.errors import EmptyQueryError, NothingToRankError
from streamrag.base.validation import SettingsModel
from streamrag.data.chunking import PAPER_CHUNKS, ChunkSettings
from streamrag.data.grounding import GroundingMode, gold_by_mode
from streamrag.data.human.asr import AsrConfig, Hypotheses, question_hypotheses
from streamrag.data.ingest import Question
from streamrag.data.stabilization_row import skipped_row
from streamrag.retrieval.base import Rankings
from streamrag.retrieval.bm25 import BM25Index, BM25Params
from streamrag.retrieval.hypotheses import hypothesis_rankings
from streamrag.retrieval.index_cache import IndexedChunks, index_chunks
from streamrag.retrieval.kinds import BM25RetrieverConfig, RetrieverConfig, RetrieverEnv, Scale, retriever_config
from streamrag.retrieval.tokenize import word_tokens

ROBUSTNESS_K = (1, 3, 5)
GROUNDING_MODES: tuple[GroundingMode, ...] = ("exact", "relaxed")


class AnalysisSettings(SettingsModel):
    """Everything that decides an analysis' numbers. Defaults: the paper preset, k = 3."""

    chunks: ChunkSettings = PAPER_CHUNKS
    bm25: BM25Params = BM25Params()
    k: int = Field(3, ge=1)
    grounding: GroundingMode = "exact"
    anchor_max_df_share: float = Field(DEFAULT_MAX_DF_SHARE, gt=0.0, le=1.0)
    retriever: RetrieverConfig = BM25RetrieverConfig()
    entity_predictor: bool = False
    """Also compute the first named entity's word position (the ``ner`` extra;
    :mod:`streamrag.analysis.studies.entity`): ``t_entity`` or, by ``entity_context``, ``t_entity_full``."""
    entity_context: EntityContext = "prefix"
    """``prefix``: tag the words heard so far (online, ``t_entity``); ``full``: the whole
    question (the anchor's rule, ``t_entity_full``)."""
    compare_retrievers: bool = False
    """Also rank with the other retriever (BM25 ↔ dense) for summary.json ``retrievers``."""
    asr: AsrConfig | None = None
    """Rank ASR partial hypotheses — drawn by the revision model, or recorded in a file —
    instead of word prefixes (:mod:`streamrag.data.human.asr`): t_sc and t_suf count
    hypotheses, and the row gains ``t_sc_ms``, ``t_suf_ms``, ``revised_share`` and
    ``n_revisions``. BM25 only."""

    @model_validator(mode="after")
    def _asr_needs_bm25(self) -> AnalysisSettings:
        if self.asr is not None and self.retriever.kind != "bm25":
            raise ValueError("asr: partial hypotheses are ranked incrementally with BM25 only (retriever kind 'bm25')")
        if self.compare_retrievers and self.retriever.kind not in ("bm25", "dense"):
            raise ValueError(f"compare_retrievers compares bm25 with dense; retriever kind {self.retriever.kind!r} is neither")
        return self


@dataclass(slots=True)
class QuestionAnalysis:
    """One question's row (§7 columns and extras) and, for the simulator, its rankings."""

    row: dict[str, Any]
    rankings: Rankings | None = None
    gold: frozenset[int] = frozenset()
    evidence: PrefixEvidence | None = None  # per-prefix evidence (simulator, prefixes.parquet)
    arm_t_suf: dict[tuple[int, GroundingMode], int | None] = field(default_factory=dict)  # (k, grounding) → t_suf
    arm_groundable: dict[GroundingMode, bool] = field(default_factory=dict)  # grounding → groundable
    by_retriever: dict[str, dict[str, Any]] = field(default_factory=dict)  # retriever kind → row (compare_retrievers)
    scale: Scale = "bm25"  # what rankings.final_scores are: BM25 scores or cosines


def _meta(record: Any) -> dict[str, Any]:
    return {
        "interaction_id": record.interaction_id,
        "domain": record.domain,
        "question_type": record.question_type,
        "static_or_dynamic": record.static_or_dynamic,
    }


def rank_question(question: Question, index: BM25Index, retriever: RetrieverConfig, k: int, env: RetrieverEnv) -> Rankings:
    """Prefix rankings of one question's chunks by the configured retriever."""
    if not question.record.query.split():  # before a dense retriever embeds the chunks for nothing
        raise EmptyQueryError(f"query {question.record.query!r} has no words: nothing to rank")
    return retriever.retriever(question.chunks, index, env).rank(question.record.query, k=k)


def stabilization_row(
    meta: dict[str, Any],
    query: str,
    rankings: Any,
    golds: dict[GroundingMode, frozenset[int]],
    index: Any,
    n_passages: int,
    settings: AnalysisSettings,
    entity: dict[str, int | None] | None = None,
) -> tuple[dict[str, Any], dict[tuple[int, GroundingMode], int | None], dict[GroundingMode, bool]]:
    """The §7 row of one ranked question (any scope), its robustness-arm t_suf values and
    groundable flags. ``rankings`` ranks at ``k ≥ 5``; ``golds`` maps each grounding mode to
    gold chunk ids; ``index`` is the lexical index the anchors read; ``n_passages`` is N;
    ``entity``: the entity column already read off the per-prefix tagging (else tagged here)."""
    n_words = rankings.n_words
    top1 = rankings.top1.tolist()
    arm_t_suf = {(k, mode): metrics.t_suf(rankings.topk[:, :k], golds[mode]) for k in ROBUSTNESS_K for mode in GROUNDING_MODES}
    arm_groundable = {mode: metrics.groundable(g) for mode, g in golds.items()}
    gold = golds[settings.grounding]
    t_suf = metrics.t_suf(rankings.topk[:, : settings.k], gold)
    t_sc = metrics.t_sc(top1)
    words = word_tokens(query, index.tokenizer)
    row = {
        **meta,
        "n_words": n_words,
        "n_passages": n_passages,
        "groundable": metrics.groundable(gold),
        "retrieved_gold": metrics.retrieved_gold(t_suf),
        "t_sc": t_sc,
        "phi_sc": metrics.phi(t_sc, n_words),
        "t_suf": t_suf,
        "phi_suf": metrics.phi(t_suf, n_words),
        "volatility": metrics.volatility(top1),
        "gold_density": metrics.gold_density(len(gold), n_passages),
        "n_gold": len(gold),
        "t_anchor": t_anchor(index, words, max_df_share=settings.anchor_max_df_share),
        "t_pivot": t_pivot(index, words, top1[-1]),
        "no_overlap": metrics.no_overlap(words, index),
        "skip_reason": "",
    }
    if settings.entity_predictor:
        from streamrag.analysis.studies.entity import entity_columns

        row.update(entity if entity is not None else entity_columns(query, settings.entity_context))
    return row, arm_t_suf, arm_groundable


def asr_columns(row: dict[str, Any], hypotheses: Hypotheses, asr: Any, query: str) -> dict[str, Any]:
    """One meaning per column over hypotheses: ``n_words`` is the question's words,
    ``n_hypotheses`` the input events (hypotheses); ``t_sc`` / ``t_suf`` (and ``phi_*``)
    count hypotheses, ``t_*_words`` the words hypothesis t showed and ``t_*_ms`` its time
    from the start of input (a recorded or typed hypothesis at its time; the model's
    hypothesis t with word t, at t/δ s). With word prefixes all counts are words.
    Recorded hypotheses are not word prefixes, so the word-position anchors do not apply."""
    times = hypotheses.times_ms

    def at(t: int | None) -> float | None:
        if t is None:
            return None
        return times[t - 1] if times is not None else t / asr.delta_wps * 1000

    def words(t: int | None) -> int | None:
        return None if t is None else len(hypotheses.words[t - 1])

    out: dict[str, Any] = {
        "n_words": len(query.split()),
        "n_hypotheses": len(hypotheses.words),
        "t_sc_words": words(row["t_sc"]),
        "t_suf_words": words(row["t_suf"]),
        "t_sc_ms": at(row["t_sc"]),
        "t_suf_ms": at(row["t_suf"]),
        "revised_share": hypotheses.revised_share,
        "n_revisions": hypotheses.n_revisions,
    }
    if times is not None:
        out.update(t_anchor=None, t_pivot=None)
    return out


def analyze_question(
    question: Question,
    settings: AnalysisSettings = AnalysisSettings(),
    *,
    env: RetrieverEnv | None = None,
    indexed: IndexedChunks | None = None,
) -> QuestionAnalysis:
    """Stabilization of one chunked question (never raises for a question-level problem).

    ``env`` holds what retrievers share (embedding cache, model); default: no disk cache.
    ``indexed``: the question's chunks already indexed (:mod:`streamrag.retrieval.index_cache`);
    BM25 then reads nothing else of them, and ``question.chunks`` may be empty.
    """
    record = question.record
    meta = _meta(record)
    if indexed is None:
        index, normalized = index_chunks(question.chunks, settings.bm25)
        n_pages_unread, n_chunks_cut = question.n_pages_unread, question.n_chunks_cut
    elif settings.retriever.kind != "bm25" or settings.compare_retrievers:
        raise ValueError("analyze_question: indexed chunks serve BM25 alone (a dense retriever embeds the chunks)")
    else:
        index, normalized = indexed.index, indexed.normalized
        n_pages_unread, n_chunks_cut = indexed.n_pages_unread, indexed.n_chunks_cut
    k_max = max(settings.k, *ROBUSTNESS_K)
    asr = settings.asr
    hypotheses = None if asr is None else question_hypotheses(asr, record.interaction_id, record.query)
    try:
        if hypotheses is None:
            rankings: Rankings = rank_question(question, index, settings.retriever, k_max, env or RetrieverEnv())
        else:
            rankings = hypothesis_rankings(index, hypotheses.words, k=k_max)
    except NothingToRankError as exc:
        return QuestionAnalysis(skipped_row(record.interaction_id, exc.reason, meta))

    golds = gold_by_mode(normalized, record.answers, GROUNDING_MODES)
    gold = golds[settings.grounding]
    evidence = prefix_evidence(rankings, index, gold, settings.retriever.scale, hypotheses)
    entity = None
    if hypotheses is None:  # what a learned trigger reads (online: the words heard so far)
        from streamrag.analysis.features.compute import entity_columns_of, online_evidence

        evidence = online_evidence(
            evidence, record.query, index, word_tokens(record.query, index.tokenizer),
            bm25=settings.retriever.kind == "bm25", entities=settings.entity_predictor,
        )  # fmt: skip
        if settings.entity_predictor:  # the prefixes are tagged once, for the evidence
            entity = entity_columns_of(evidence, settings.entity_context)
    row, arm_t_suf, arm_groundable = stabilization_row(
        meta, record.query, rankings, golds, index, len(normalized), settings, entity
    )
    if hypotheses is not None:
        row.update(asr_columns(row, hypotheses, asr, record.query))
    row.update(n_pages_unread=n_pages_unread, n_chunks_cut=n_chunks_cut)
    result = QuestionAnalysis(row, rankings, gold, evidence, arm_t_suf, arm_groundable, scale=settings.retriever.scale)
    if settings.compare_retrievers:
        kind = settings.retriever.kind
        other = "dense" if kind == "bm25" else "bm25"
        alt_settings = settings.model_copy(update={"retriever": retriever_config(other), "compare_retrievers": False})
        alt = analyze_question(question, alt_settings, env=env)
        result.by_retriever = {kind: row, other: alt.row}
    return result
