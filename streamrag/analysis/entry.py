"""From an input to analyzed questions: the one entry every command and sweep goes through.

:func:`analyze_input` takes a path, :class:`~streamrag.analysis.stabilize.AnalysisSettings`
and a :class:`~streamrag.data.selection.Selection` and routes by input and scope:

==========================================  ===========================================
input                                       scope
==========================================  ===========================================
CRAG file (``.jsonl``, ``.jsonl.bz2``)      per-question (the paper): each record's own
                                            chunks; global: every selected record's
                                            pages pooled
CRAG data folder (``crag_v4_questions``)    per-question: each question's own pages in
                                            the pool; global: the whole pool
BEIR folder (``corpus.jsonl``)              global only (qrels are the gold)
==========================================  ===========================================

The gold rule in global scope defaults to ``labeled`` for a BEIR folder (it has no
answer strings) and ``answer`` otherwise. ``analyze`` writes what this returns
(:func:`~streamrag.analysis.study.write_study`); the simulator turns it into its
questions (:mod:`streamrag.simulator.questions`); sweeps do both.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamrag.analysis.execution import analyze_file
from streamrag.analysis.global_scope.analyze import analyze_pool, analyze_pool_per_question
from streamrag.analysis.global_scope.gold import GoldRule
from streamrag.analysis.stabilize import AnalysisSettings, QuestionAnalysis
from streamrag.base.errors import ConfigError, DataFileError, EmptySelectionError
from streamrag.data.chunk_cache import ChunkCache
from streamrag.data.crag import OnError
from streamrag.data.pools.corpus import PoolSource, pool_from_crag
from streamrag.data.selection import IdList, Selection, check_ids_found
from streamrag.retrieval.kinds import RetrieverEnv

__all__ = ["AnalyzedInput", "analyze_input", "input_kind", "open_source"]


@dataclass(frozen=True, slots=True)
class AnalyzedInput:
    """Every selected question of an input, analyzed, in input order, and what ran."""

    analyses: list[QuestionAnalysis]
    parameters: dict[str, Any]
    """``summary.json`` → ``parameters.analysis``: the input, selection, scope and settings."""


def input_kind(path: str | Path) -> str:
    """``beir`` (a folder with ``corpus.jsonl``), ``crag-folder`` (with
    ``crag_v4_questions.jsonl``), ``folder`` (neither) or ``file``."""
    path = Path(path)
    if not path.is_dir():
        return "file"
    if (path / "corpus.jsonl").exists():
        return "beir"
    if (path / "crag_v4_questions.jsonl").exists():
        return "crag-folder"
    return "folder"


def default_gold(path: str | Path, gold: GoldRule | None) -> GoldRule:
    """The gold rule of a global-scope analysis: ``gold`` if given, else by input kind."""
    return gold or ("labeled" if input_kind(path) == "beir" else "answer")


def split_counts(path: Path) -> Counter[Any]:
    from streamrag.base.lines import iter_lines

    counts: Counter[Any] = Counter()
    for _, raw in iter_lines(path):
        try:
            counts[json.loads(raw).get("split")] += 1
        except (ValueError, AttributeError):
            continue
    return counts


def _empty_selection(path: Path, selection: Selection) -> EmptySelectionError:
    if isinstance(selection.ids, IdList):
        return EmptySelectionError(f"{selection.ids.path}: none of its {len(selection.ids)} interaction ids is in {path}")
    if selection.ids is not None:
        return EmptySelectionError(f"{path}: none of the {len(selection.ids)} requested interaction ids is in the input")
    if selection.split is not None and input_kind(path) == "file":
        counts = split_counts(path)
        present = ", ".join(f"split {s}: {n}" for s, n in sorted(counts.items(), key=lambda kv: str(kv[0])))
        return EmptySelectionError(
            f"{path}: no record has split {selection.split} ({present or 'no records'}); "
            "choose another with --split 0, --split 1 or --split all"
        )
    return EmptySelectionError(f"{path}: the input holds no selected question")


def open_source(
    path: str | Path,
    settings: AnalysisSettings = AnalysisSettings(),
    selection: Selection = Selection(),
    *,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    on_error: OnError = "raise",
    qrels_split: str = "test",
    distractors: int | None = None,
    seed: int = 0,
) -> PoolSource:
    """A :class:`PoolSource` from a CRAG file, the real CRAG folder or a BEIR folder.

    The selection's split / ids / limit choose the questions (and, for a CRAG file, the
    pooled records); ``qrels_split`` / ``distractors`` / ``seed`` apply to BEIR folders.
    """
    path = Path(path)
    split, limit, ids = selection.split, selection.limit, selection.ids
    if path.is_dir() and (path / "corpus.jsonl").exists():
        from streamrag.data.pools.beir import read_beir

        source = read_beir(
            path,
            split=qrels_split,
            distractors=distractors,
            seed=seed,
            limit=limit,
            settings=settings.chunks,
            cache_root=None if cache is None else cache.root,
        )
        return _select_ids(source, ids)
    if distractors is not None:
        raise ConfigError("--distractors applies to BEIR folders (corpus.jsonl, queries.jsonl, qrels/)")
    if path.is_dir() and (path / "crag_v4_questions.jsonl").exists():
        from streamrag.data.pools.crag_pages import load_crag_pool

        source = _select_ids(load_crag_pool(path, settings=settings.chunks, split=split, cache=cache), ids)
        if limit is not None:
            source = PoolSource(source.pool, source.items[:limit], source.name, source.parameters)
        return source
    if path.is_dir():
        raise DataFileError(f"{path}: neither a BEIR folder (corpus.jsonl) nor the CRAG data folder (crag_v4_questions.jsonl)")
    from streamrag.data.ingest import ingest

    items = ingest(
        path,
        settings=settings.chunks,
        cache=cache,
        jobs=jobs,
        split=split,
        limit=limit,
        ids=ids,
        on_error=on_error,
    )
    source = pool_from_crag(items, name=path)
    source.parameters.update({"data": str(path), "split": "all" if split is None else split, "limit": limit})
    return source


def _select_ids(source: PoolSource, ids: Collection[str] | None) -> PoolSource:
    if ids is None:
        return source
    wanted = set(ids)
    items = [q for q in source.items if q.interaction_id in wanted]
    return PoolSource(source.pool, items, source.name, source.parameters)


def _check_route(path: Path, kind: str, selection: Selection, gold: GoldRule | None, index_dir: Any) -> None:
    if kind == "folder":
        raise DataFileError(f"{path}: neither a BEIR folder (corpus.jsonl) nor the CRAG data folder (crag_v4_questions.jsonl)")
    if kind == "beir":
        if gold not in (None, "labeled"):
            raise ConfigError(f"gold {gold!r}: a BEIR corpus has no answer strings; its gold is the qrels (labeled)")
        if selection.scope != "global":
            raise ConfigError('a BEIR corpus is analyzed in global scope (--scope global, or data.scope = "global")')
    if selection.scope == "per-question" and gold not in (None, "answer"):
        raise ConfigError(
            "per-question scope grounds answers in each question's own pages; the gold rule applies to global scope"
        )
    if index_dir is not None and selection.scope != "global":
        raise ConfigError("--index-dir applies to global scope")


def analyze_input(
    path: str | os.PathLike[str],
    settings: AnalysisSettings = AnalysisSettings(),
    selection: Selection = Selection(),
    *,
    gold: GoldRule | None = None,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    on_error: OnError = "raise",
    parallel_decompression: bool = False,
    index_dir: str | Path | None = None,
    qrels_split: str = "test",
    distractors: int | None = None,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    env: RetrieverEnv | None = None,
    preload: Sequence[str] = (),
) -> AnalyzedInput:
    """Analyze every selected question of ``path`` (see the module docstring for the routes).

    ``progress`` receives bytes read (CRAG files, per-question scope); ``env`` the
    retrievers' shared resources (default: embeddings cached next to the chunks);
    ``preload`` modules to import while workers analyze a CRAG file (:func:`analyze_file`).
    Raises EmptySelectionError when nothing is selected, InputError for a requested id
    that is not in the input.
    """
    path = Path(path)
    kind = input_kind(path)
    _check_route(path, kind, selection, gold, index_dir)
    if settings.entity_predictor:  # before any work: the predictor needs an optional extra
        from streamrag.analysis.studies.entity import ner_unavailable_reason

        if (reason := ner_unavailable_reason()) is not None:
            raise ConfigError(reason)
    env = env or RetrieverEnv(None if cache is None else cache.root)
    typed_input = _typed_input(settings)
    if kind == "file" and selection.scope == "per-question":
        analyses = list(
            analyze_file(
                path,
                settings,
                split=selection.split,
                limit=selection.limit,
                ids=selection.ids,
                cache=cache,
                jobs=jobs,
                on_error=on_error,
                parallel_decompression=parallel_decompression,
                progress=progress,
                env=env,
                preload=preload,
            )
        )
        parameters: dict[str, Any] = {"data": str(path), "split": selection.split_label, "limit": selection.limit}
    else:
        source = open_source(
            path,
            settings,
            selection,
            cache=cache,
            jobs=jobs,
            on_error=on_error,
            qrels_split=qrels_split,
            distractors=distractors,
            seed=seed,
        )
        if selection.scope == "global":
            rule = default_gold(path, gold)
            analyses = list(analyze_pool(source, settings, gold=rule, index_dir=index_dir, jobs=jobs, env=env))
        else:
            rule = "answer"
            analyses = list(analyze_pool_per_question(source, settings, env=env))
        parameters = {
            "data": source.name,
            "scope": selection.scope,
            "gold": rule if selection.scope == "global" else "answer (own pages)",
            "pool_chunks": source.pool.n_chunks,
            "pool_documents": source.pool.n_docs,
            "source": source.parameters,
        }
    if not analyses:
        raise _empty_selection(path, selection)
    check_ids_found(selection.ids, {a.row["interaction_id"] for a in analyses}, path)
    parameters.update(json.loads(settings.model_dump_json()))
    if typed_input is not None:
        parameters["typed_input"] = typed_input
    return AnalyzedInput(analyses, parameters)


def _typed_input(settings: AnalysisSettings) -> dict[str, Any] | None:
    """What the typed input's folder gave (:meth:`~streamrag.data.human.typed.Typists.report`:
    rows and sentences left out as implausible), read before any question so a folder
    without sentences stops the run first and the worker processes inherit the read."""
    from streamrag.data.human.asr import TypedInput

    asr = settings.asr
    if not isinstance(asr, TypedInput):
        return None
    from streamrag.data.human.typed import typists

    return typists(asr.path, asr.participants, asr.held_out_share, asr.split_seed).report()
