"""``streamrag analyze``: analyze a CRAG file and write the §7 outputs.

Writes ``stabilization.csv`` (one row per selected record, skipped ones with a reason),
``summary.json`` (RQ1, RQ2, RQ4, gold density, robustness arms, anchor comparison, the
parameters; with ``compare_retrievers`` also ``retrievers``, BM25 vs dense) and the PNG
figures, every file atomically.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import structlog

from streamrag import __version__
from streamrag.analysis.report import write_figures, write_summary
from streamrag.analysis.robustness import robustness_arms
from streamrag.analysis.runner import AnalysisSettings, QuestionAnalysis, analyze_file
from streamrag.analysis.stats import resolve_params, summarize
from streamrag.analysis.table import STABILIZATION_COLUMNS, write_table
from streamrag.cache import ChunkCache
from streamrag.data.crag import OnError
from streamrag.errors import EmptySelectionError

if TYPE_CHECKING:
    from streamrag.retrieval.embed import Embedder

log = structlog.get_logger(__name__)

EXTRA_COLUMNS = ("n_gold", "t_anchor", "t_pivot", "skip_reason")
INT_COLUMNS = ("n_words", "n_passages", "t_sc", "t_suf", "volatility", "n_gold", "t_anchor", "t_pivot")


@dataclass(frozen=True, slots=True)
class StudyResult:
    table: pd.DataFrame
    summary: dict[str, Any]
    analyses: list[QuestionAnalysis]
    files: list[Path]


def _split_counts(path: Path) -> Counter[Any]:
    from streamrag.data.lines import iter_lines

    counts: Counter[Any] = Counter()
    for _, raw in iter_lines(path):
        try:
            counts[json.loads(raw).get("split")] += 1
        except (ValueError, AttributeError):
            continue
    return counts


def _empty_selection(path: Path, split: int | None, ids: Collection[str] | None) -> EmptySelectionError:
    if ids is not None:
        return EmptySelectionError(f"{path}: none of the {len(ids)} requested interaction ids is in the file")
    if split is not None:
        counts = _split_counts(path)
        present = ", ".join(f"split {s}: {n}" for s, n in sorted(counts.items(), key=lambda kv: str(kv[0])))
        return EmptySelectionError(
            f"{path}: no record has split {split} ({present or 'no records'}); "
            "choose another with --split 0, --split 1 or --split all"
        )
    return EmptySelectionError(f"{path}: the file holds no record")


def table_frame(analyses: list[QuestionAnalysis]) -> pd.DataFrame:
    """The stabilization table: §7 columns, then the extras, one row per analysis.

    Integer columns are nullable integers so an undefined value stays empty, never 0.0.
    """
    df = pd.DataFrame([a.row for a in analyses], columns=[*STABILIZATION_COLUMNS, *EXTRA_COLUMNS])
    for column in INT_COLUMNS:
        df[column] = df[column].astype("Int64")
    for column in ("groundable", "retrieved_gold"):
        df[column] = df[column].astype("boolean")
    return df


def run_study(
    path: str | Path,
    out_dir: str | Path,
    settings: AnalysisSettings = AnalysisSettings(),
    *,
    split: int | None = 0,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    on_error: OnError = "raise",
    parallel_decompression: bool = False,
    stats_params: dict[str, Any] | None = None,
    figures: bool = True,
    progress: Callable[[int], None] | None = None,
    embedder: Embedder | None = None,
) -> StudyResult:
    """Analyze ``path`` and write the outputs to ``out_dir`` (``embedder``: for dense retrieval, see ``analyze_file``)."""
    path, out = Path(path), Path(out_dir)
    analyses = list(
        analyze_file(
            path, settings, split=split, limit=limit, ids=ids, cache=cache, jobs=jobs, on_error=on_error,
            parallel_decompression=parallel_decompression, progress=progress, embedder=embedder,
        )  # fmt: skip
    )
    if not analyses:
        raise _empty_selection(path, split, ids)
    analysis_params = {
        "data": str(path),
        "split": "all" if split is None else split,
        "limit": limit,
        **json.loads(settings.model_dump_json()),
    }
    result = write_study(analyses, out, analysis_params, stats_params=stats_params, figures=figures,
                         compare_retrievers=settings.compare_retrievers)  # fmt: skip
    summary = result.summary
    log.info(
        "analysis written", out=str(out), questions=len(analyses), skipped=summary["n_skipped"],
        cache_hits=None if cache is None else cache.hits, cache_built=None if cache is None else cache.misses + cache.rebuilt,
    )  # fmt: skip
    return result


def write_study(
    analyses: list[QuestionAnalysis],
    out_dir: Path,
    analysis_params: dict[str, Any],
    *,
    stats_params: dict[str, Any] | None = None,
    figures: bool = True,
    compare_retrievers: bool = False,
) -> StudyResult:
    """The outputs of any analysis (per-question or pooled): table, summary, figures.

    ``analysis_params`` lands in ``summary["parameters"]["analysis"]`` with the version.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    df = table_frame(analyses)
    params = resolve_params(stats_params)
    summary = summarize(df, params=params)
    summary["parameters"]["analysis"] = {**analysis_params, "streamrag_version": __version__}
    active = [a for a in analyses if a.rankings is not None]
    summary["robustness"] = robustness_arms(active, params)
    if compare_retrievers:
        from streamrag.analysis.compare import retriever_comparison

        summary["retrievers"] = retriever_comparison(active, params)
    files = [write_table(df, out_dir / "stabilization.csv"), write_summary(summary, out_dir / "summary.json")]
    if figures:
        files += write_figures(df[df["skip_reason"] == ""], summary, out_dir)
    return StudyResult(df, summary, analyses, files)
