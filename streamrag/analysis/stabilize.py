"""The analyzer: every question → prefix rankings → stabilization row (design §2, §7).

One pass per question ranks every prefix once at ``k_max = max(k, 5)``; the top-1, top-3
and top-5 arms are prefixes of that ranking's columns, so the robustness arms (k ∈ {1, 3,
5} × grounding exact / relaxed) cost no extra retrieval.

``settings.retriever`` picks the ranking by kind (:mod:`streamrag.retrieval.kinds`):
``bm25`` (the paper preset) or ``dense`` (all-MiniLM-L6-v2 cosine; the ``dense`` extra).
Everything else stays lexical in both modes: grounding, ``token_coverage`` (the heuristic
reflector's 40 % rule) and the anchors — ``t_anchor`` (first rare word, a corpus df
property) and ``t_pivot`` (the word adding the most BM25 score to the *active*
retriever's final top-1 chunk). ``settings.compare_retrievers`` names the retrievers to
compare; each question is ranked by every one of them and each one's row is kept in
``QuestionAnalysis.by_retriever`` (summary.json ``retrievers``,
:mod:`streamrag.analysis.studies.retrievers`).

Every ranked question also records ``reference_score``, the full query's BM25 score of
BM25's top-1 chunk: with each retriever's own final-query top-1 score, what a calibrated
reflector threshold is set from (:func:`threshold_sample`, :mod:`streamrag.base.threshold`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import Field, field_validator, model_validator

from streamrag.analysis import metrics
from streamrag.analysis.evidence.prefixes import PrefixEvidence, prefix_evidence
from streamrag.analysis.studies.anchor import DEFAULT_MAX_DF_SHARE, t_anchor, t_pivot
from streamrag.analysis.studies.entity import EntityContext
from streamrag.base.errors import EmptyQueryError, NothingToRankError
from streamrag.base.threshold import ScoreSample
from streamrag.base.validation import SettingsModel
from streamrag.data.chunking import PAPER_CHUNKS, ChunkSettings
from streamrag.data.grounding import GroundingMode, gold_by_mode
from streamrag.data.human.asr import AsrConfig, Hypotheses
from streamrag.data.human.hypotheses_file import question_hypotheses
from streamrag.data.ingest import Question
from streamrag.data.stabilization_row import skipped_row
from streamrag.retrieval.base import Rankings
from streamrag.retrieval.bm25 import BM25Index, BM25Params
from streamrag.retrieval.hypotheses import hypothesis_rankings
from streamrag.retrieval.index_cache import IndexedChunks, index_chunks
from streamrag.retrieval.kinds import BM25RetrieverConfig, RetrieverConfig, RetrieverEnv, Scale
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
    compare_retrievers: tuple[RetrieverConfig, ...] = ()
    """The retrievers to compare (summary.json ``retrievers``), each ranking every question;
    ``retriever`` is always one of them (added first when not named). ``True`` is short for
    BM25 and dense beside ``retriever``; ``False`` or empty: no comparison."""
    asr: AsrConfig | None = None
    """Rank ASR partial hypotheses — drawn by the revision model, or recorded in a file —
    instead of word prefixes (:mod:`streamrag.data.human.asr`): t_sc and t_suf count
    hypotheses, and the row gains ``t_sc_ms``, ``t_suf_ms``, ``revised_share`` and
    ``n_revisions``. BM25 only."""

    @field_validator("compare_retrievers", mode="before")
    @classmethod
    def _short_forms(cls, value: Any) -> Any:
        """``True``: BM25 and dense (:meth:`_arms` puts ``retriever`` first); ``False``: none."""
        if value is True:
            return ("bm25", "dense")
        if value is False or value is None:
            return ()
        return value

    @model_validator(mode="after")
    def _arms(self) -> AnalysisSettings:
        if self.asr is not None and self.retriever.kind != "bm25":
            raise ValueError("asr: partial hypotheses are ranked incrementally with BM25 only (retriever kind 'bm25')")
        if not self.compare_retrievers:
            return self
        if self.asr is not None:
            raise ValueError("compare_retrievers ranks word prefixes; asr hypotheses are ranked with BM25 alone")
        arms = list(self.compare_retrievers)
        labels = [a.label for a in arms]
        twice = sorted({x for x in labels if labels.count(x) > 1})
        if twice:
            raise ValueError(f"compare_retrievers names {twice[0]} twice: give each retriever once")
        if self.retriever.label in labels:  # the analysis' own retriever first: its rows are the table's
            arms.insert(0, arms.pop(labels.index(self.retriever.label)))
        else:
            arms.insert(0, self.retriever)
        if len(arms) < 2:
            raise ValueError(f"compare_retrievers: name a retriever besides {self.retriever.label} to compare it with")
        object.__setattr__(self, "compare_retrievers", tuple(arms))  # validated already; the model is frozen
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
    by_retriever: dict[str, ArmRow] = field(default_factory=dict)  # retriever label → its arm (compare_retrievers)
    scale: Scale = "bm25"  # what rankings.final_scores are: BM25 scores or cosines
    reference_score: float | None = None  # the full query's BM25 score of BM25's top-1 chunk (module docstring)


@dataclass(frozen=True, slots=True)
class ArmRow:
    """One compared retriever's view of a question: its stabilization row, the score the
    reflector reads of its final-query top-1 chunk, and that score's scale."""

    row: dict[str, Any]
    final_score: float | None
    scale: Scale


def final_score(evidence: PrefixEvidence | None) -> float | None:
    """The full query's score of the final prefix's top-1 chunk (what the reflector reads)."""
    return None if evidence is None else float(evidence.top1_score[-1])


def reference_score(evidence: PrefixEvidence, rankings: Rankings, index: Any, lexical: bool) -> float:
    """``b``: the full query's BM25 score of BM25's top-1 chunk, the highest over the
    chunks. ``lexical``: the rankings are BM25's own, so it is their final top-1 score
    (the same number, not recomputed); else ``index`` scores the full query's tokens."""
    if lexical:
        return float(evidence.top1_score[-1])
    scores = index.score(rankings.final_tokens)
    return float(np.max(scores)) if len(scores) else 0.0


def threshold_sample(analyses: Iterable[QuestionAnalysis]) -> ScoreSample:
    """The ranked questions' final-query top-1 scores and reference scores, in order: what a
    calibrated reflector threshold is set from (:mod:`streamrag.base.threshold`)."""
    done = [a for a in analyses if a.evidence is not None and a.reference_score is not None]
    return ScoreSample.of([final_score(a.evidence) for a in done], [a.reference_score for a in done])


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
    elif settings.retriever.kind != "bm25" or len(settings.compare_retrievers):
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
    scale = settings.retriever.scale
    lexical = settings.retriever.kind == "bm25" or hypotheses is not None
    result = QuestionAnalysis(
        row, rankings, gold, evidence, arm_t_suf, arm_groundable, scale=scale,
        reference_score=reference_score(evidence, rankings, index, lexical),
    )  # fmt: skip
    if settings.compare_retrievers:
        arms = {settings.retriever.label: ArmRow(row, final_score(evidence), scale)}
        for arm in settings.compare_retrievers[1:]:
            alt = analyze_question(question, settings.model_copy(update={"retriever": arm, "compare_retrievers": ()}), env=env)
            arms[arm.label] = ArmRow(alt.row, final_score(alt.evidence), arm.scale)
        result.by_retriever = arms
    return result
