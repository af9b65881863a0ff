"""``streamrag analyze``: analyze a CRAG file and write the §7 outputs.

Writes ``stabilization.csv`` (one row per selected record, skipped ones with a reason),
``prefixes.parquet`` (the per-prefix evidence a table replay needs to equal full mode,
:mod:`streamrag.analysis.evidence.prefixes`),
``summary.json`` (RQ1, RQ2, RQ4, gold density, robustness arms, anchor comparison, the
parameters; with ``compare_retrievers`` also ``retrievers``, BM25 vs dense) and the PNG
figures, every file atomically.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from streamrag.analysis.entry import analyze_input
from streamrag.analysis.evidence.prefixes import EVIDENCE_FILE, evidence_frame, write_evidence
from streamrag.analysis.stabilize import AnalysisSettings, QuestionAnalysis
from streamrag.analysis.table import rows_frame, write_table
from streamrag.base.atomic import together
from streamrag.base.errors import OutputError
from streamrag.base.version import __version__
from streamrag.data.selection import Selection
from streamrag.data.stabilization_row import ASR_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

# What writing the outputs imports (pandas, pyarrow, scipy.special): imported while the
# workers analyze, not before (see streamrag.base.system.processes.import_in_background).
OUTPUT_MODULES = (
    "streamrag.analysis.stats.rq",
    "streamrag.analysis.stats.report",
    "streamrag.analysis.stats.robustness",
    "pyarrow.parquet",
    "scipy.special",
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class StudyResult:
    table: pd.DataFrame
    summary: dict[str, Any]
    analyses: list[QuestionAnalysis]
    files: list[Path]


def table_frame(analyses: list[QuestionAnalysis]) -> pd.DataFrame:
    """The stabilization table: §7 columns, then the extras, one row per analysis.

    Integer columns are nullable integers so an undefined value stays empty, never 0.0.
    """
    return rows_frame([a.row for a in analyses])


def asr_summary(df: pd.DataFrame) -> dict[str, Any]:
    """Stabilization over ASR hypotheses, in time, and how much was revised."""
    import pandas as pd

    out: dict[str, Any] = {}
    for column in ASR_COLUMNS:
        values = pd.to_numeric(df[column], errors="coerce").dropna().to_numpy(dtype=float)
        out[column] = {
            "n": int(values.size),
            "mean": float(values.mean()) if values.size else None,
            "median": float(np.median(values)) if values.size else None,
        }
    return out


def run_study(
    path: str | Path,
    out_dir: str | Path,
    settings: AnalysisSettings = AnalysisSettings(),
    selection: Selection = Selection(),
    *,
    stats_params: dict[str, Any] | None = None,
    figures: bool = True,
    **input_options: Any,
) -> StudyResult:
    """Analyze ``path`` (:func:`~streamrag.analysis.entry.analyze_input`: any input, any
    scope; ``input_options`` are its keyword options) and write the outputs to ``out_dir``."""
    cache = input_options.get("cache")
    analyzed = analyze_input(path, settings, selection, preload=OUTPUT_MODULES, **input_options)
    out = Path(out_dir)
    result = write_study(
        analyzed.analyses,
        out,
        analyzed.parameters,
        stats_params=stats_params,
        figures=figures,
        compare_retrievers=settings.compare_retrievers,
    )
    log.info(
        "analysis written",
        extra={
            "out": str(out),
            "scope": selection.scope,
            "questions": len(analyzed.analyses),
            "skipped": result.summary["n_skipped"],
            "cache_hits": None if cache is None else cache.hits,
            "cache_built": None if cache is None else cache.misses + cache.rebuilt,
        },
    )
    return result


def write_study(
    analyses: list[QuestionAnalysis],
    out_dir: Path,
    analysis_params: dict[str, Any],
    *,
    stats_params: dict[str, Any] | None = None,
    figures: bool = True,
    compare_retrievers: Sequence[Any] = (),
) -> StudyResult:
    """The outputs of any analysis (per-question or pooled): table, summary, figures.

    ``analysis_params`` lands in ``summary["parameters"]["analysis"]`` with the version.
    ``compare_retrievers``: the retrievers compared (their configs), which adds the
    ``retrievers`` section, ``retrievers.csv`` and the ``retrievers`` figure.
    """
    from streamrag.analysis.stats.report import write_analysis_summary, write_figures
    from streamrag.analysis.stats.robustness import robustness_arms
    from streamrag.analysis.stats.rq import resolve_params, summarize

    out_dir.mkdir(parents=True, exist_ok=True)
    df = table_frame(analyses)
    params = resolve_params(stats_params)
    summary = summarize(df, params=params)
    summary["parameters"]["analysis"] = {**analysis_params, "streamrag_version": __version__}
    summary["chunk_cap"]["max_chunks"] = (analysis_params.get("chunks") or {}).get("max_chunks")
    active = [a for a in analyses if a.rankings is not None]
    summary["robustness"] = robustness_arms(active, params)
    if "t_sc_ms" in df.columns:
        summary["asr"] = asr_summary(df[df["skip_reason"] == ""])
    comparison = None
    if compare_retrievers:
        from streamrag.analysis.studies.retrievers import comparison_table, retriever_comparison

        settings = {c.label: c.model_dump(mode="json") for c in compare_retrievers}
        summary["retrievers"] = retriever_comparison(active, params, settings)
        if summary["retrievers"] is not None:
            comparison = comparison_table(analyses, summary["retrievers"])
    evidence = evidence_frame((a.row["interaction_id"], a.evidence) for a in analyses if a.evidence is not None)
    refused: OutputError | None = None
    with together():  # the files appear together: an interrupt leaves the folder as it was
        table = write_table(df, out_dir / "stabilization.csv")
        files = [
            table,
            write_evidence(evidence, out_dir / EVIDENCE_FILE, table=table),  # bound to the table: its digest
            write_analysis_summary(summary, out_dir / "summary.json"),
        ]
        if comparison is not None:
            from streamrag.analysis.studies.retrievers import COMPARISON_FILE

            files.append(write_table(comparison, out_dir / COMPARISON_FILE, lead=("retriever",)))
        if figures:  # a figure that cannot be written loses no table: the figures alone are dropped
            try:
                with together():
                    files += write_figures(df[df["skip_reason"] == ""], summary, out_dir)
                    if comparison is not None:
                        files.append(_comparison_figure(comparison, summary, out_dir))
            except OutputError as exc:
                refused = exc
    if refused is not None:
        raise OutputError(
            f"{refused}; stabilization.csv and summary.json are written (free space and rerun, or pass --no-figures)"
        ) from refused
    return StudyResult(df, summary, analyses, files)


def _comparison_figure(comparison: pd.DataFrame, summary: dict[str, Any], out_dir: Path) -> Path:
    """The retrievers figure (:func:`~streamrag.analysis.plots.plot_retrievers`) at the summary's δ and θ."""
    from streamrag.analysis.plots import plot_retrievers
    from streamrag.analysis.studies.retrievers import COMPARISON_FIGURE
    from streamrag.base.figures import figure_name, save_figure

    p = summary["parameters"]
    fig = plot_retrievers(comparison, delta_wps=float(p["delta_wps"]), theta=float(p["theta"]))
    return save_figure(fig, out_dir / figure_name(COMPARISON_FIGURE))
