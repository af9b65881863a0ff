"""``streamrag analyze`` on a pool: global scope (or per-question scope on a pool's questions).

Produces the same outputs as :func:`~streamrag.analysis.study.run_study` — the §7
``stabilization.csv``, ``summary.json`` from the same statistics code, the figures — with
``parameters.analysis`` recording the scope, the gold rule and the pool's size.

Sources (:func:`open_source`): a CRAG file (every selected record's pages pooled), the
real CRAG folder (``crag_v4_questions.jsonl`` present: :mod:`streamrag.data.crag_pool`)
or a BEIR folder (``corpus.jsonl`` present: :mod:`streamrag.data.beir`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import structlog

from streamrag.analysis.global_gold import GoldRule
from streamrag.analysis.global_runner import analyze_pool, analyze_pool_per_question
from streamrag.analysis.runner import AnalysisSettings, dense_embedder
from streamrag.analysis.study import StudyResult, write_study
from streamrag.cache import ChunkCache
from streamrag.data.crag import OnError
from streamrag.data.pool import PoolSource, pool_from_crag
from streamrag.errors import ConfigError, DataFileError, EmptySelectionError

__all__ = ["Scope", "open_source", "pool_sim_questions", "run_pool_study"]

if TYPE_CHECKING:
    from streamrag.retrieval.embed import Embedder

log = structlog.get_logger(__name__)

Scope = Literal["per-question", "global"]


def open_source(
    path: str | Path,
    settings: AnalysisSettings = AnalysisSettings(),
    *,
    split: int | None = 0,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    on_error: OnError = "raise",
    qrels_split: str = "test",
    distractors: int | None = None,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> PoolSource:
    """A :class:`PoolSource` from a CRAG file, the real CRAG folder or a BEIR folder.

    ``split`` / ``ids`` / ``limit`` select the questions (and, for a CRAG file, the pooled
    records); ``qrels_split`` / ``distractors`` / ``seed`` apply to BEIR folders.
    """
    path = Path(path)
    if path.is_dir() and (path / "corpus.jsonl").exists():
        from streamrag.data.beir import read_beir

        source = read_beir(path, split=qrels_split, distractors=distractors, seed=seed, limit=limit, settings=settings.chunks)
        return _select_ids(source, ids)
    if distractors is not None:
        raise ConfigError("--distractors applies to BEIR folders (corpus.jsonl, queries.jsonl, qrels/)")
    if path.is_dir() and (path / "crag_v4_questions.jsonl").exists():
        from streamrag.data.crag_pool import load_crag_pool

        source = _select_ids(load_crag_pool(path, settings=settings.chunks, split=split, cache=cache), ids)
        if limit is not None:
            source = PoolSource(source.pool, source.items[:limit], source.name, source.parameters)
        return source
    if path.is_dir():
        raise DataFileError(f"{path}: neither a BEIR folder (corpus.jsonl) nor the CRAG data folder (crag_v4_questions.jsonl)")
    from streamrag.data.ingest import ingest

    items = ingest(
        path, settings=settings.chunks, cache=cache, jobs=jobs, split=split, limit=limit, ids=ids,
        on_error=on_error, progress=progress,
    )  # fmt: skip
    source = pool_from_crag(items, name=path)
    source.parameters.update({"data": str(path), "split": "all" if split is None else split, "limit": limit})
    return source


def _select_ids(source: PoolSource, ids: Collection[str] | None) -> PoolSource:
    if ids is None:
        return source
    wanted = set(ids)
    items = [q for q in source.items if q.interaction_id in wanted]
    return PoolSource(source.pool, items, source.name, source.parameters)


def run_pool_study(
    source: PoolSource,
    out_dir: str | Path,
    settings: AnalysisSettings = AnalysisSettings(),
    *,
    scope: Scope = "global",
    gold: GoldRule = "answer",
    index_dir: str | Path | None = None,
    stats_params: dict[str, Any] | None = None,
    figures: bool = True,
    progress: Callable[[int], None] | None = None,
    embedder: Embedder | None = None,
) -> StudyResult:
    """Analyze ``source`` in ``scope`` and write the outputs to ``out_dir`` (``embedder``: for
    ``settings.retriever == "dense"``, default all-MiniLM-L6-v2)."""
    if not source.items:
        raise EmptySelectionError(f"{source.name}: no question selected")
    if scope == "global":
        analyses = list(analyze_pool(source, settings, gold=gold, index_dir=index_dir, progress=progress, embedder=embedder))
    elif scope == "per-question":
        if gold != "answer":
            raise ConfigError("per-question scope grounds answers in each question's own pages; --gold applies to global scope")
        analyses = list(analyze_pool_per_question(source, settings, embedder=embedder))
    else:
        raise ConfigError(f"unknown scope {scope!r}; use per-question or global")
    out = Path(out_dir)
    analysis_params = {
        "data": source.name,
        "scope": scope,
        "gold": gold if scope == "global" else "answer (own pages)",
        "pool_chunks": source.pool.n_chunks,
        "pool_documents": source.pool.n_docs,
        "source": source.parameters,
        **json.loads(settings.model_dump_json()),
    }
    result = write_study(analyses, out, analysis_params, stats_params=stats_params, figures=figures)
    summary = result.summary
    log.info("analysis written", out=str(out), scope=scope, questions=len(analyses), skipped=summary["n_skipped"])
    return result



def pool_sim_questions(
    path: str | Path,
    *,
    scope: Scope = "global",
    gold: GoldRule | None = None,
    k: int = 3,
    grounding: str = "exact",
    split: int | None = 0,
    ids: Collection[str] | None = None,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    retriever: str = "bm25",
    index_dir: str | Path | None = None,
) -> tuple[list[Any], int]:
    """The simulator's questions from a CRAG file or corpus folder in ``scope``, and the
    number that could not be ranked (what ``simulate`` and sweeps call for global scope)."""
    from streamrag.analysis.global_runner import global_sim_questions
    from streamrag.analysis.runner import to_sim_question

    embedder = dense_embedder(AnalysisSettings(retriever=retriever), cache, None)  # type: ignore[arg-type]
    path = Path(path)
    is_beir = path.is_dir() and (path / "corpus.jsonl").exists()
    source = open_source(path, AnalysisSettings(), split=split, ids=ids, cache=cache, jobs=jobs)
    if scope == "global":
        rule: GoldRule = gold or ("labeled" if is_beir else "answer")
        return global_sim_questions(
            source, k=k, grounding=grounding, gold=rule, index_dir=index_dir, retriever=retriever, embedder=embedder
        )
    if is_beir or gold not in (None, "answer"):
        raise ConfigError("per-question scope on a corpus folder needs the CRAG data folder and gold 'answer'")
    questions, n_skipped = [], 0
    settings = AnalysisSettings(k=k, grounding=grounding, retriever=retriever)  # type: ignore[arg-type]
    for analysis in analyze_pool_per_question(source, settings, embedder=embedder):
        question = to_sim_question(analysis, k)
        if question is None:
            n_skipped += 1
        else:
            questions.append(question)
    return questions, n_skipped
