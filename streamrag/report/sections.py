"""A run folder read into the report's parts: kind, provenance, summary, figures, rows,
timelines. Each reader takes the folder's own files; nothing is recomputed but figures.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamrag.base.errors import InputError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from streamrag.sweep.frontier.leaderboard import Board

__all__ = ["KINDS", "Run", "json_value", "read_report_run", "run_kind", "run_table", "svg_of"]

KINDS = ("analysis", "simulation", "sweep", "load")

# Columns shown first, in this order, when the run has them; the others follow.
_FIRST = {
    "simulation": (
        "interaction_id",
        "question",
        "question_type",
        "n_words",
        "t_star",
        "H_ms",
        "H_G_ms",
        "saved_ms",
        "misfire",
        "negative",
        "calls_fired",
        "calls_used",
        "wasted_calls",
        "skip_reason",
    ),
    "analysis": (
        "interaction_id",
        "question",
        "domain",
        "question_type",
        "n_words",
        "groundable",
        "retrieved_gold",
        "t_sc",
        "phi_sc",
        "t_suf",
        "phi_suf",
        "skip_reason",
    ),
    "sweep": ("key",),
}
# A load run's: sessions.csv's first columns (its declaration), the question text after the id.
_LOAD_FIRST = ("session_id", "interaction_id", "question")
_ID = {"simulation": "interaction_id", "analysis": "interaction_id", "load": "session_id", "sweep": "key"}
_PROVENANCE = ("format_version", "parameters", "rules", "selection")  # summary.json keys shown as settings, not results


@dataclass
class Run:
    """What the page shows of one run folder."""

    kind: str
    path: Path
    manifest: dict[str, Any] | None
    summary: dict[str, Any] | None
    columns: list[str]
    rows: list[list[Any]]
    id_column: str
    figures: list[tuple[str, bytes, str]] = field(default_factory=list)  # (caption, bytes, mime)
    texts: dict[str, str] = field(default_factory=dict)  # question text by interaction id
    boards: list[Board] = field(default_factory=list)  # a frontier run's leaderboard, per group


def run_kind(run: Path) -> str:
    """What kind of run ``run`` holds, by its files (a load run also has a trace)."""
    if (run / "sweep.parquet").is_file() or (run / "sweep.csv").is_file():
        return "sweep"
    if (run / "sessions.csv").is_file():
        return "load"
    if (run / "results.csv").is_file():
        return "simulation"
    if (run / "stabilization.csv").is_file():
        return "analysis"
    raise InputError(f"{run}: not a run folder (no sweep.parquet, sessions.csv, results.csv or stabilization.csv)")


def _json(path: Path) -> dict[str, Any] | None:
    """A run's JSON file, its format version checked (:func:`~streamrag.base.formats.read_json`)."""
    from streamrag.base.formats import read_json

    data = read_json(path) if path.is_file() else None
    return data if isinstance(data, dict) else None


def run_table(run: Path, kind: str | None = None) -> tuple[str, pd.DataFrame]:
    """The kind of run folder ``run`` (:func:`run_kind` unless given) and its table, read
    by the table's own reader: every column in its declared type (``streamrag.read_run``)."""
    kind = kind or run_kind(run)
    if kind == "sweep":
        from streamrag.sweep.table import read_sweep

        return kind, read_sweep(run)
    if kind == "load":
        from streamrag.simulator.load.output import read_sessions

        return kind, read_sessions(run / "sessions.csv")
    if kind == "simulation":
        from streamrag.simulator.results import read_results

        return kind, read_results(run / "results.csv")
    from streamrag.analysis.table import read_table

    return kind, read_table(run / "stabilization.csv")


def _rows(run: Path, kind: str) -> tuple[list[str], list[dict[str, Any]]]:
    """The run's table (:func:`run_table`) as columns and records of JSON values; of a
    sweep's statistics only the means (the rest stays in the file)."""
    _, table = run_table(run, kind)
    if kind == "sweep":
        table = table[[c for c in table.columns if "." not in c or c.endswith(".mean")]]
    columns = [str(c) for c in table.columns]
    return columns, [{c: json_value(v) for c, v in zip(columns, row, strict=True)} for row in table.itertuples(index=False)]


def _order(kind: str, columns: Sequence[str]) -> list[str]:
    if kind == "load":
        from streamrag.simulator.load.output import SESSION_COLUMNS_HEAD

        wanted: Sequence[str] = (*_LOAD_FIRST, *(c for c in SESSION_COLUMNS_HEAD if c not in _LOAD_FIRST))
    else:
        wanted = _FIRST[kind]
    first = [c for c in wanted if c in columns]
    return first + [c for c in columns if c not in first]


def json_value(value: Any) -> Any:
    """A pandas/numpy cell as a JSON value (undefined → None)."""
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str | int | float | bool):
        return value
    try:
        import pandas as pd

        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


def read_report_run(run_dir: str | os.PathLike[str], *, figures: bool = True, texts: bool = True) -> Run:
    """The parts of the page for ``run_dir``; ``figures=False`` skips drawing them,
    ``texts=False`` reading the run's input for the question texts."""
    from streamrag.simulator.views.runtrace import question_texts

    run = Path(run_dir)
    if not run.is_dir():
        raise InputError(f"{run}: no such run folder")
    manifest = _json(run / "manifest.json")
    if manifest is not None and manifest.get("interrupted") and (run / "points").is_dir():
        import shlex

        command = manifest.get("command")
        again = (
            shlex.join([*command, *([] if "--resume" in command else ["--resume"])]) if command else "its command and --resume"
        )
        raise InputError(f"{run}: a sweep interrupted by {manifest.get('signal')} (manifest.json); finish it first: {again}")
    kind = run_kind(run)
    manifest, summary = _json(run / "manifest.json"), _json(run / "summary.json")
    columns, records = _rows(run, kind)
    found = question_texts(run) if texts and kind != "sweep" else {}
    if found and "interaction_id" in columns:
        columns = [*columns, "question"]
        for rec in records:
            rec["question"] = found.get(str(rec.get("interaction_id")))
    columns = _order(kind, columns)
    rows = [[rec.get(c) for c in columns] for rec in records]
    out = Run(kind, run, manifest, summary, columns, rows, _ID[kind], texts=found)
    if kind == "sweep" and (run / "frontier" / "frontier.csv").is_file():
        from streamrag.sweep.frontier.leaderboard import boards
        from streamrag.sweep.frontier.tables import read_frontier

        tables = read_frontier(run / "frontier")
        out.boards = boards(tables.points, tables.operating)
    if figures:
        out.figures = _FIGURES[kind](run, out)
    return out


# --- figures -------------------------------------------------------------------------


def svg_of(fig: Figure) -> bytes:
    """A figure as SVG bytes (written atomically in a scratch folder, as every figure)."""
    from streamrag.base.figures import save_figure

    with tempfile.TemporaryDirectory(prefix="streamrag-report-") as tmp:
        return save_figure(fig, Path(tmp) / "figure.svg").read_bytes()


def _analysis_figures(run: Path, parts: Run) -> list[tuple[str, bytes, str]]:
    from streamrag.analysis.stats.report import FIGURES, write_figures
    from streamrag.analysis.table import read_table

    table = read_table(run / "stabilization.csv")
    table = table[table["skip_reason"].fillna("") == ""]  # as analyze draws them: analyzed questions only
    with tempfile.TemporaryDirectory(prefix="streamrag-report-") as tmp:
        paths = write_figures(table, parts.summary or {}, tmp, suffix=".svg")
        return [
            (Path(name).stem.replace("_", " "), p.read_bytes(), "image/svg+xml") for name, p in zip(FIGURES, paths, strict=True)
        ]


def _column(parts: Run, name: str) -> list[Any]:
    j = parts.columns.index(name) if name in parts.columns else None
    return [] if j is None else [row[j] for row in parts.rows]


def _simulation_figures(run: Path, parts: Run) -> list[tuple[str, bytes, str]]:
    from streamrag.report.run_figure import plot_saved

    saved = _column(parts, "saved_ms")
    bound = _column(parts, "H_G_ms") if "H_G_ms" in parts.columns else None  # without it: the distribution only
    misfire = _column(parts, "misfire") if "misfire" in parts.columns else None
    return [("saved vs bound", svg_of(plot_saved(saved, bound, misfire)), "image/svg+xml")]


def _load_figures(run: Path, parts: Run) -> list[tuple[str, bytes, str]]:
    from streamrag.report.run_figure import plot_saved

    counted = _column(parts, "counted")
    saved = [s for s, c in zip(_column(parts, "saved_ms"), counted, strict=True) if c is True]
    return [("saved per counted session", svg_of(plot_saved(saved, None, None)), "image/svg+xml")]


def _sweep_figures(run: Path, parts: Run) -> list[tuple[str, bytes, str]]:
    """The sweep's figures drawn again as SVG from its own table (the figures it wrote may
    be PDF, which a page cannot show, or absent); a frontier run's, its frontier figure
    alone (``streamrag frontier`` turns the sweep's own off: they would repeat it, a
    legend entry per policy point); a folder without a manifest (no grid kind) shows the
    SVG or PNG files it holds."""
    from streamrag.sweep.figures import sweep_figures
    from streamrag.sweep.table import read_sweep

    frontier = run / "frontier"
    if (frontier / "frontier.csv").is_file():
        from streamrag.sweep.frontier.figure import plot_frontier
        from streamrag.sweep.frontier.tables import read_frontier

        return [("frontier", svg_of(plot_frontier(read_frontier(frontier).points)), "image/svg+xml")]
    kind = ((parts.manifest or {}).get("grid") or {}).get("kind")
    if kind is None:
        mimes = {".svg": "image/svg+xml", ".png": "image/png"}
        folder = run / "figures"
        found = sorted(p for p in folder.iterdir() if p.suffix in mimes) if folder.is_dir() else []
        return [(p.stem.replace("_", " "), p.read_bytes(), mimes[p.suffix]) for p in found]
    drawn = [(stem, draw()) for stem, draw in sweep_figures(run, read_sweep(run), kind)]
    return [(stem.replace("_", " "), svg_of(fig), "image/svg+xml") for stem, fig in drawn]


_FIGURES: Mapping[str, Callable[[Path, Run], list[tuple[str, bytes, str]]]] = {
    "analysis": _analysis_figures,
    "simulation": _simulation_figures,
    "load": _load_figures,
    "sweep": _sweep_figures,
}


# --- summary -------------------------------------------------------------------------


def summary_parts(summary: Mapping[str, Any]) -> tuple[list[tuple[str, Mapping[str, Any]]], list[tuple[str, Any]], list[str]]:
    """``summary.json`` split for display: metric rows (every dict of scalars, by its
    dotted path), the remaining scalars, and the provenance keys present."""
    metrics: list[tuple[str, Mapping[str, Any]]] = []
    scalars: list[tuple[str, Any]] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, Mapping):
            if value and all(not isinstance(v, Mapping | list) for v in value.values()) and path:
                metrics.append((path, value))
                return
            for k, v in value.items():
                walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(value, list) and any(isinstance(v, Mapping) for v in value):
            for i, v in enumerate(value):
                walk(v, f"{path}[{i}]")
        else:
            scalars.append((path, value))

    walk({k: v for k, v in summary.items() if k not in _PROVENANCE}, "")
    return metrics, scalars, [k for k in _PROVENANCE if k in summary]
