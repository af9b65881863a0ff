"""The analyzer in global scope: every question ranked against one shared pool (design §3 "Scope").

Same rows as per-question scope (:mod:`streamrag.analysis.stabilize`), computed with the
same metric functions, with three differences:

- rankings come from one :class:`~streamrag.retrieval.global_pool.index.GlobalIndex` over the
  whole pool (IDF and avgdl of the pool), through a reused
  :class:`~streamrag.retrieval.global_pool.scorer.PrefixScorer`;
- gold follows a :data:`~streamrag.analysis.global_scope.gold.GoldRule` (default ``answer``:
  answer-bearing chunks anywhere in the pool);
- ``n_passages`` is the pool's size N, so ``gold_density`` = gold chunks / N.

:func:`analyze_pool_per_question` runs the per-question analyzer on the same questions,
each against its own pages in the pool, for side-by-side comparisons.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from streamrag.analysis.evidence.prefixes import prefix_evidence
from streamrag.analysis.global_scope.gold import GoldRule, PoolGrounder, question_gold
from streamrag.analysis.stabilize import (
    GROUNDING_MODES,
    ROBUSTNESS_K,
    AnalysisSettings,
    QuestionAnalysis,
    analyze_question,
    reference_score,
    stabilization_row,
)
from streamrag.base.errors import ConfigError, NothingToRankError
from streamrag.data.crag import SkippedRecord
from streamrag.data.ingest import Question
from streamrag.data.pools.corpus import PoolQuestion, PoolSource
from streamrag.data.stabilization_row import skipped_row
from streamrag.retrieval.ahead import ranked_in_order
from streamrag.retrieval.base import Rankings
from streamrag.retrieval.global_pool.index import GlobalIndex
from streamrag.retrieval.global_pool.scorer import PrefixScorer
from streamrag.retrieval.kinds import RetrieverEnv
from streamrag.retrieval.tokenize import RegexTokenizer

__all__ = ["analyze_pool", "analyze_pool_per_question", "pool_index"]


def _meta(record: object) -> dict[str, object]:
    return {name: getattr(record, name) for name in ("interaction_id", "domain", "question_type", "static_or_dynamic")}


def index_key(source: PoolSource, settings: AnalysisSettings) -> str:
    """Content key of a pool's index: the chunks, document boundaries, BM25 parameters, tokenizer."""
    tokenizer = RegexTokenizer()
    blob = json.dumps({"pool": source.pool.content_key(), "bm25": settings.bm25.model_dump(), "pattern": tokenizer.pattern})
    return hashlib.sha256(blob.encode()).hexdigest()


def pool_index(
    source: PoolSource, settings: AnalysisSettings = AnalysisSettings(), *, index_dir: str | Path | None = None
) -> GlobalIndex:
    """The pool's index: memory-mapped from ``index_dir`` when it holds this pool's index
    (same content key), else built (and saved there when ``index_dir`` is given)."""
    from streamrag.retrieval.global_pool.store import load_index, read_key, save_index

    key = index_key(source, settings)
    if index_dir is not None and read_key(index_dir) == key:
        return load_index(index_dir)
    index = GlobalIndex.build(source.pool.chunks, params=settings.bm25)
    if index_dir is not None:
        save_index(index, index_dir, key=key)
    return index


def _check(settings: AnalysisSettings) -> None:
    if settings.compare_retrievers:
        raise ConfigError("--compare-retrievers is per-question scope; in global scope run --retriever bm25 and dense separately")
    if settings.asr is not None:  # global scope ranks each question's words: the hypotheses were ignored, silently
        raise ConfigError(
            "partial hypotheses (--typed, --asr-hypotheses, --asr-revisions; data.asr) are ranked in per-question scope "
            "only: in global scope run word prefixes, or analyze per question"
        )


def analyze_pool_question(
    question: PoolQuestion,
    rank: Callable[[], Rankings],
    settings: AnalysisSettings,
    *,
    source: PoolSource,
    gold_rule: GoldRule,
    grounder: PoolGrounder | None,
    index: GlobalIndex,
) -> QuestionAnalysis:
    """One question's row against the whole pool (never raises for a question-level problem).

    ``rank()`` returns its rankings (from :func:`~streamrag.retrieval.ahead.ranked_in_order`).
    """
    record = question.record
    meta = _meta(record)
    try:
        rankings = rank()
    except NothingToRankError as exc:
        return QuestionAnalysis(skipped_row(record.interaction_id, exc.reason, meta))
    golds = {mode: question_gold(question, gold_rule, mode, pool=source.pool, grounder=grounder) for mode in GROUNDING_MODES}
    row, arm_t_suf, arm_groundable = stabilization_row(meta, record.query, rankings, golds, index, index.n_docs, settings)
    row.update(n_pages_unread=question.n_pages_unread, n_chunks_cut=question.n_chunks_cut)
    gold = golds[settings.grounding]
    evidence = prefix_evidence(rankings, index, gold, settings.retriever.scale)
    reference = reference_score(evidence, rankings, index, lexical=settings.retriever.kind == "bm25")
    return QuestionAnalysis(
        row, rankings, gold, evidence, arm_t_suf, arm_groundable, scale=settings.retriever.scale, reference_score=reference
    )


def analyze_pool(
    source: PoolSource,
    settings: AnalysisSettings = AnalysisSettings(),
    *,
    gold: GoldRule = "answer",
    index: GlobalIndex | None = None,
    index_dir: str | Path | None = None,
    pool_size: int | None = None,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
    env: RetrieverEnv | None = None,
) -> Iterator[QuestionAnalysis]:
    """Global scope: every item of ``source`` ranked against the whole pool, in order.

    ``progress`` receives the number of items done. Gold rules ``answer`` / ``own`` need
    the paper tokenizer (grounding reads the index's tokens). With ``jobs`` > 1 and a
    scorer that ranks without the GIL (BM25 with the compiled kernel), ``jobs`` threads
    rank the next questions while this one is analysed; the rows are the same.
    """
    _check(settings)
    index = index if index is not None else pool_index(source, settings, index_dir=index_dir)
    env = env or RetrieverEnv()
    scorers = [settings.retriever.pool_retriever(index, source.pool.chunks, env, pool_size=pool_size)]
    if jobs > 1 and isinstance(scorers[0], PrefixScorer) and scorers[0].compiled:
        index.vocabulary  # noqa: B018  (built once here, not by two threads at once)
        scorers += [
            settings.retriever.pool_retriever(index, source.pool.chunks, env, pool_size=pool_size) for _ in range(jobs - 1)
        ]
    grounder = None if gold == "labeled" else PoolGrounder(index, source.pool.chunks)
    queries = (None if isinstance(item, SkippedRecord) else item.record.query for item in source.items)
    ranked = ranked_in_order(queries, scorers, k=max(settings.k, *ROBUSTNESS_K))
    for done, (item, rank) in enumerate(zip(source.items, ranked, strict=True), start=1):
        if isinstance(item, SkippedRecord):
            yield QuestionAnalysis(skipped_row(item.interaction_id, item.reason))
        elif rank is not None:  # always, for a question (its query is not None)
            yield analyze_pool_question(item, rank, settings, source=source, gold_rule=gold, grounder=grounder, index=index)
        if progress is not None:
            progress(done)


def analyze_pool_per_question(
    source: PoolSource, settings: AnalysisSettings = AnalysisSettings(), *, env: RetrieverEnv | None = None
) -> Iterator[QuestionAnalysis]:
    """Per-question scope on a pool's questions: each ranked against its own pages only
    (``own_docs``, chunks in pool order), with the per-question analyzer. A question
    without own pages in the pool gets the skip reason "no chunks"."""
    pool = source.pool
    for item in source.items:
        if isinstance(item, SkippedRecord):
            yield QuestionAnalysis(skipped_row(item.interaction_id, item.reason))
            continue
        chunks = [pool.chunks[i] for i in pool.chunk_ids(item.own_docs).tolist()]
        yield analyze_question(Question(item.record, chunks), settings, env=env)
