"""The analyzer: every question → prefix rankings → stabilization row (design §2, §7).

One pass per question ranks every prefix once at ``k_max = max(k, 5)``; the top-1, top-3
and top-5 arms are prefixes of that ranking's columns, so the robustness arms (k ∈ {1, 3,
5} × grounding exact / relaxed) cost no extra retrieval.

``settings.retriever`` picks the ranking: ``bm25`` (the paper preset) or ``dense``
(all-MiniLM-L6-v2 cosine, :mod:`streamrag.retrieval.dense`; needs the ``dense`` extra).
Everything else stays lexical in both modes: grounding, ``token_coverage`` (the heuristic
reflector's 40 % rule) and the anchors — ``t_anchor`` (first rare word, a corpus df
property) and ``t_pivot`` (the word adding the most BM25 score to the *active*
retriever's final top-1 chunk). ``settings.compare_retrievers`` also ranks with the other
retriever and keeps its row in ``QuestionAnalysis.by_retriever`` (summary.json
``retrievers``, :mod:`streamrag.analysis.compare`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from streamrag.analysis import metrics
from streamrag.analysis.anchor import DEFAULT_MAX_DF_SHARE, t_anchor, t_pivot
from streamrag.cache import ChunkCache
from streamrag.chunking import PAPER_CHUNKS, ChunkSettings
from streamrag.data.crag import OnError, SkippedRecord
from streamrag.data.ingest import Question, ingest
from streamrag.errors import EmptyQueryError, NothingToRankError
from streamrag.grounding import GroundingMode, gold_in_normalized
from streamrag.retrieval.bm25 import BM25Index, BM25Params
from streamrag.retrieval.prefix import PrefixRankings, prefix_rankings
from streamrag.retrieval.tokenize import RegexTokenizer, word_tokens

if TYPE_CHECKING:
    from streamrag.pipeline.question import SimQuestion
    from streamrag.retrieval.embed import Embedder

RetrieverKind = Literal["bm25", "dense"]

ROBUSTNESS_K = (1, 3, 5)
GROUNDING_MODES: tuple[GroundingMode, ...] = ("exact", "relaxed")


class AnalysisSettings(BaseModel):
    """Everything that decides an analysis' numbers. Defaults: the paper preset, k = 3."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chunks: ChunkSettings = PAPER_CHUNKS
    bm25: BM25Params = BM25Params()
    k: int = Field(3, ge=1)
    grounding: GroundingMode = "exact"
    anchor_max_df_share: float = Field(DEFAULT_MAX_DF_SHARE, gt=0.0, le=1.0)
    retriever: RetrieverKind = "bm25"
    compare_retrievers: bool = False
    """Also rank with the other retriever (BM25 ↔ dense) for summary.json ``retrievers``."""


@dataclass(slots=True)
class QuestionAnalysis:
    """One question's row (§7 columns and extras) and, for the simulator, its rankings."""

    row: dict[str, Any]
    rankings: PrefixRankings | None = None
    gold: frozenset[int] = frozenset()
    coverage: np.ndarray | None = None
    arm_t_suf: dict[tuple[int, str], int | None] = field(default_factory=dict)  # (k, grounding) → t_suf
    arm_groundable: dict[str, bool] = field(default_factory=dict)  # grounding → groundable
    by_retriever: dict[str, dict[str, Any]] = field(default_factory=dict)  # retriever → row (compare_retrievers)
    retriever: RetrieverKind = "bm25"  # whose scores rankings.final_scores are


def _meta(record: Any) -> dict[str, Any]:
    return {
        "interaction_id": record.interaction_id,
        "domain": record.domain,
        "question_type": record.question_type,
        "static_or_dynamic": record.static_or_dynamic,
    }


def skipped_row(interaction_id: str | None, reason: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A row for a question that could not be analyzed: metadata if known, the reason."""
    row: dict[str, Any] = {"interaction_id": interaction_id or "", "domain": "", "question_type": "", "static_or_dynamic": ""}
    row.update(meta or {})
    row.update(
        n_words=None, n_passages=None, groundable=None, retrieved_gold=None, t_sc=None, phi_sc=None,
        t_suf=None, phi_suf=None, volatility=None, gold_density=None, n_gold=None,
        t_anchor=None, t_pivot=None, skip_reason=reason,
    )  # fmt: skip
    return row


def token_coverage(index: BM25Index, tokens: tuple[str, ...]) -> np.ndarray:
    """Per chunk, the share of ``tokens`` (with repetition) occurring in it: float64 (N,)."""
    hits = np.zeros(index.n_docs, dtype=np.float64)
    if not tokens:
        return hits
    for token in tokens:
        hits[index.postings(token)[0]] += 1.0
    return hits / len(tokens)


def dense_embedder(settings: AnalysisSettings, cache: ChunkCache | None, embedder: Embedder | None) -> Embedder | None:
    """The embedder a dense analysis needs: ``embedder`` if given, else all-MiniLM-L6-v2
    with its cache in ``CACHE/embeddings`` (memory only without a chunk cache)."""
    if embedder is not None or (settings.retriever != "dense" and not settings.compare_retrievers):
        return embedder
    from streamrag.retrieval.dense import minilm_embedder

    return minilm_embedder(None if cache is None else cache.root / "embeddings")


def _rankings(question: Question, index: BM25Index, kind: str, k: int, embedder: Embedder | None) -> PrefixRankings:
    if kind == "bm25":
        return prefix_rankings(index, question.record.query, k=k)
    from streamrag.retrieval.dense import DenseRetriever, minilm_embedder

    if not question.record.query.split():  # before embedding the chunks for nothing
        raise EmptyQueryError(f"query {question.record.query!r} has no words: nothing to rank")
    if embedder is None:
        embedder = minilm_embedder(None)  # the weights load once per process; vectors are not kept
    return DenseRetriever(question.chunks, embedder, index=index).prefix_rankings(question.record.query, k=k)


def stabilization_row(
    meta: dict[str, Any],
    query: str,
    rankings: Any,
    golds: dict[GroundingMode, frozenset[int]],
    index: Any,
    n_passages: int,
    settings: AnalysisSettings,
) -> tuple[dict[str, Any], dict[tuple[int, str], int | None], dict[str, bool]]:
    """The §7 row of one ranked question (any scope), its robustness-arm t_suf values and
    groundable flags. ``rankings`` ranks at ``k ≥ 5``; ``golds`` maps each grounding mode to
    gold chunk ids; ``index`` is the lexical index the anchors read; ``n_passages`` is N."""
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
        "skip_reason": "",
    }
    return row, arm_t_suf, arm_groundable


def analyze_question(
    question: Question, settings: AnalysisSettings = AnalysisSettings(), *, embedder: Embedder | None = None
) -> QuestionAnalysis:
    """Stabilization of one chunked question (never raises for a question-level problem).

    ``embedder`` serves ``retriever="dense"`` (default: all-MiniLM-L6-v2 without disk cache).
    """
    record = question.record
    meta = _meta(record)
    tokenizer = RegexTokenizer()
    tokens = [tokenizer(chunk) for chunk in question.chunks]
    index = BM25Index.from_tokens(tokens, tokenizer=tokenizer, params=settings.bm25)
    k_max = max(settings.k, *ROBUSTNESS_K)
    try:
        rankings = _rankings(question, index, settings.retriever, k_max, embedder)
    except NothingToRankError as exc:
        return QuestionAnalysis(skipped_row(record.interaction_id, exc.reason, meta))

    normalized = [" ".join(t) for t in tokens]  # == grounding.normalize(chunk) for this tokenizer
    golds = {mode: gold_in_normalized(normalized, record.answers, mode) for mode in GROUNDING_MODES}
    row, arm_t_suf, arm_groundable = stabilization_row(meta, record.query, rankings, golds, index, len(question.chunks), settings)
    gold = golds[settings.grounding]
    coverage = token_coverage(index, rankings.final_tokens)
    result = QuestionAnalysis(row, rankings, gold, coverage, arm_t_suf, arm_groundable, retriever=settings.retriever)
    if settings.compare_retrievers:
        other = "dense" if settings.retriever == "bm25" else "bm25"
        alt = analyze_question(question, settings.model_copy(update={"retriever": other, "compare_retrievers": False}), embedder=embedder)
        result.by_retriever = {settings.retriever: row, other: alt.row}
    return result


def analyze_file(
    path: str | Path,
    settings: AnalysisSettings = AnalysisSettings(),
    *,
    split: int | None = 0,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    on_error: OnError = "raise",
    parallel_decompression: bool = False,
    progress: Callable[[int], None] | None = None,
    embedder: Embedder | None = None,
) -> Iterator[QuestionAnalysis]:
    """Analyze every selected record of a CRAG file, in file order, one result per record.

    Dense retrieval uses ``embedder``, by default all-MiniLM-L6-v2 caching its
    embeddings next to the chunks (``CACHE/embeddings``).
    """
    embedder = dense_embedder(settings, cache, embedder)
    for item in ingest(
        path, settings=settings.chunks, cache=cache, jobs=jobs, split=split, limit=limit,
        ids=ids, on_error=on_error, parallel_decompression=parallel_decompression, progress=progress,
    ):  # fmt: skip
        if isinstance(item, SkippedRecord):
            yield QuestionAnalysis(skipped_row(item.interaction_id, item.reason))
        else:
            yield analyze_question(item, settings, embedder=embedder)


def to_sim_question(analysis: QuestionAnalysis, k: int) -> SimQuestion | None:
    """The simulator's view of an analyzed question (full mode); None if it was skipped."""
    from streamrag.pipeline.question import SimQuestion

    if analysis.rankings is None:
        return None
    row = analysis.row
    return SimQuestion(
        interaction_id=row["interaction_id"],
        n_words=row["n_words"],
        t_sc=row["t_sc"],
        t_suf=metrics.t_suf(analysis.rankings.topk[:, :k], analysis.gold),
        topk=analysis.rankings.topk[:, :k],
        gold=analysis.gold,
        final_scores=analysis.rankings.final_scores,
        final_coverage=analysis.coverage,
        question_type=row["question_type"],
        retriever=analysis.retriever,
    )


def sim_questions(
    data_path: str | Path,
    *,
    split: int | None = 0,
    k: int = 3,
    grounding: GroundingMode = "exact",
    limit: int | None = None,
    ids: Collection[str] | None = None,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    retriever: RetrieverKind = "bm25",
    embedder: Embedder | None = None,
) -> tuple[list[SimQuestion], int]:
    """Analyze a CRAG file for the simulator: the analyzable questions as
    :class:`SimQuestion` (file order) and the number of records that could not be ranked.

    With ``retriever="dense"``, ``final_scores`` are cosines (the heuristic reflector's
    threshold is then on the cosine scale) and ``final_coverage`` stays lexical."""
    settings = AnalysisSettings(k=k, grounding=grounding, retriever=retriever)
    questions: list[SimQuestion] = []
    n_skipped = 0
    for analysis in analyze_file(data_path, settings, split=split, limit=limit, ids=ids, cache=cache, jobs=jobs, embedder=embedder):
        question = to_sim_question(analysis, k)
        if question is None:
            n_skipped += 1
        else:
            questions.append(question)
    return questions, n_skipped
