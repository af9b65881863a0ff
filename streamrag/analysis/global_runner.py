"""The analyzer in global scope: every question ranked against one shared pool (design §3 "Scope").

Same rows as per-question scope (:mod:`streamrag.analysis.runner`), computed with the
same metric functions, with three differences:

- rankings come from one :class:`~streamrag.retrieval.global_index.GlobalIndex` over the
  whole pool (IDF and avgdl of the pool), through a reused
  :class:`~streamrag.retrieval.global_prefix.PrefixScorer`;
- gold follows a :data:`~streamrag.analysis.global_gold.GoldRule` (default ``answer``:
  answer-bearing chunks anywhere in the pool);
- ``n_passages`` is the pool's size N, so ``gold_density`` = gold chunks / N.

:func:`analyze_pool_per_question` runs the per-question analyzer on the same questions,
each against its own pages in the pool, for side-by-side comparisons.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from streamrag.analysis.global_gold import GoldRule, PoolGrounder, question_gold
from streamrag.analysis.runner import (
    GROUNDING_MODES,
    ROBUSTNESS_K,
    AnalysisSettings,
    QuestionAnalysis,
    analyze_question,
    skipped_row,
    stabilization_row,
    to_sim_question,
)
from streamrag.data.crag import SkippedRecord
from streamrag.data.ingest import Question
from streamrag.data.pool import PoolQuestion, PoolSource
from streamrag.errors import ConfigError, NothingToRankError
from streamrag.retrieval.dense import to_grid
from streamrag.retrieval.global_index import GlobalIndex
from streamrag.retrieval.global_prefix import DEFAULT_POOL_SIZE, ChunkValues, GlobalPrefixRankings, PrefixScorer, chunk_coverage
from streamrag.retrieval.tokenize import RegexTokenizer

if TYPE_CHECKING:
    from streamrag.pipeline.question import SimQuestion
    from streamrag.retrieval.embed import Embedder

__all__ = ["analyze_pool", "analyze_pool_per_question", "global_sim_questions", "pool_index"]


def _meta(record: object) -> dict[str, object]:
    return {name: getattr(record, name) for name in ("interaction_id", "domain", "question_type", "static_or_dynamic")}


def index_key(source: PoolSource, settings: AnalysisSettings) -> str:
    """Content key of a pool's index: the chunks, document boundaries, BM25 parameters, tokenizer."""
    tokenizer = RegexTokenizer()
    blob = json.dumps({"pool": source.pool.content_key(), "bm25": settings.bm25.model_dump(), "pattern": tokenizer.pattern})
    return hashlib.sha256(blob.encode()).hexdigest()


def pool_index(source: PoolSource, settings: AnalysisSettings = AnalysisSettings(), *, index_dir: str | Path | None = None) -> GlobalIndex:
    """The pool's index: memory-mapped from ``index_dir`` when it holds this pool's index
    (same content key), else built (and saved there when ``index_dir`` is given)."""
    from streamrag.retrieval.global_store import load_index, read_key, save_index

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


class DensePoolScorer:
    """Global-scope ranking by cosine, with :class:`PrefixScorer`'s interface (``index``, ``rank``).

    The pool's chunks are embedded once (``embed_corpus``; through a cached embedder,
    once across runs) and every prefix is ranked by an exact blocked product
    (:class:`~streamrag.retrieval.dense.DenseRetriever`). Like the BM25 path, a question
    keeps only the scores and lexical coverage of the chunks its rankings returned.
    """

    def __init__(self, index: GlobalIndex, chunks: Sequence[str], embedder: Embedder) -> None:
        from streamrag.retrieval.dense import DenseRetriever, embed_corpus

        self.index = index
        self.retriever = DenseRetriever.from_embeddings(embed_corpus(chunks, embedder), embedder, index)

    def rank(self, query: str, *, k: int = 3) -> GlobalPrefixRankings:
        ranked = self.retriever.prefix_rankings(query, k=k)
        support = np.unique(ranked.topk).astype(np.int64)
        n = self.index.n_docs
        # Cosine of each prefix with its own top-k chunks (the dense analogue of BM25's topk_scores).
        prefixes = [" ".join(query.split()[:t]) for t in range(1, ranked.n_words + 1)]
        grid = to_grid(self.retriever.embedder.embed(prefixes))
        chunk_vecs = np.asarray(self.retriever.embeddings, dtype=np.float64)[ranked.topk]
        topk_scores = np.einsum("nkd,nd->nk", chunk_vecs, grid)
        arrays = (support, ranked.final_scores[support], chunk_coverage(self.index, ranked.final_tokens, support), topk_scores)
        for a in arrays:
            a.flags.writeable = False
        return GlobalPrefixRankings(
            n_words=ranked.n_words, k=k, topk=ranked.topk, topk_scores=topk_scores,
            final_scores=ChunkValues(support, arrays[1], n), final_coverage=ChunkValues(support, arrays[2], n),
            final_tokens=ranked.final_tokens, n_chunks=n,
        )  # fmt: skip


def analyze_pool_question(
    question: PoolQuestion,
    scorer: PrefixScorer,
    settings: AnalysisSettings,
    *,
    source: PoolSource,
    gold_rule: GoldRule,
    grounder: PoolGrounder | None,
) -> QuestionAnalysis:
    """One question's row against the whole pool (never raises for a question-level problem)."""
    record, index = question.record, scorer.index
    meta = _meta(record)
    try:
        rankings = scorer.rank(record.query, k=max(settings.k, *ROBUSTNESS_K))
    except NothingToRankError as exc:
        return QuestionAnalysis(skipped_row(record.interaction_id, exc.reason, meta))
    golds = {
        mode: question_gold(question, gold_rule, mode, pool=source.pool, grounder=grounder) for mode in GROUNDING_MODES
    }
    row, arm_t_suf, arm_groundable = stabilization_row(meta, record.query, rankings, golds, index, index.n_docs, settings)
    gold = golds[settings.grounding]
    return QuestionAnalysis(row, rankings, gold, rankings.final_coverage, arm_t_suf, arm_groundable, retriever=settings.retriever)  # type: ignore[arg-type]


def analyze_pool(
    source: PoolSource,
    settings: AnalysisSettings = AnalysisSettings(),
    *,
    gold: GoldRule = "answer",
    index: GlobalIndex | None = None,
    index_dir: str | Path | None = None,
    pool_size: int = DEFAULT_POOL_SIZE,
    progress: Callable[[int], None] | None = None,
    embedder: Embedder | None = None,
) -> Iterator[QuestionAnalysis]:
    """Global scope: every item of ``source`` ranked against the whole pool, in order.

    ``progress`` receives the number of items done. Gold rules ``answer`` / ``own`` need
    the paper tokenizer (grounding reads the index's tokens).
    """
    _check(settings)
    index = index if index is not None else pool_index(source, settings, index_dir=index_dir)
    if settings.retriever == "dense":
        if embedder is None:
            from streamrag.retrieval.dense import minilm_embedder

            embedder = minilm_embedder(None)
        scorer: PrefixScorer | DensePoolScorer = DensePoolScorer(index, source.pool.chunks, embedder)
    else:
        scorer = PrefixScorer(index, pool_size=pool_size)
    grounder = None if gold == "labeled" else PoolGrounder(index, source.pool.chunks)
    for done, item in enumerate(source.items, start=1):
        if isinstance(item, SkippedRecord):
            yield QuestionAnalysis(skipped_row(item.interaction_id, item.reason))
        else:
            yield analyze_pool_question(item, scorer, settings, source=source, gold_rule=gold, grounder=grounder)
        if progress is not None:
            progress(done)


def analyze_pool_per_question(
    source: PoolSource, settings: AnalysisSettings = AnalysisSettings(), *, embedder: Embedder | None = None
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
        yield analyze_question(Question(item.record, chunks), settings, embedder=embedder)


def global_sim_questions(
    source: PoolSource,
    *,
    k: int = 3,
    grounding: str = "exact",
    gold: GoldRule = "answer",
    index: GlobalIndex | None = None,
    index_dir: str | Path | None = None,
    retriever: str = "bm25",
    embedder: Embedder | None = None,
) -> tuple[list[SimQuestion], int]:
    """The simulator's questions in global scope, and the number that could not be ranked.

    ``final_scores`` / ``final_coverage`` of each :class:`SimQuestion` are
    :class:`~streamrag.retrieval.global_prefix.ChunkValues` (indexable by the chunk ids
    of its ``topk``, which is all the heuristic reflector reads), so a question stays
    O(n·k) in memory and pickles small for worker processes.
    """
    settings = AnalysisSettings(k=k, grounding=grounding, retriever=retriever)  # type: ignore[arg-type]
    questions: list[SimQuestion] = []
    n_skipped = 0
    for analysis in analyze_pool(source, settings, gold=gold, index=index, index_dir=index_dir, embedder=embedder):
        question = to_sim_question(analysis, k)
        if question is None:
            n_skipped += 1
        else:
            questions.append(question)
    return questions, n_skipped
