"""Write the outputs of ``streamrag stats``: ``summary.json`` and the figures."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from streamrag.base.atomic import write_text_atomic
from streamrag.base.formats import versioned

__all__ = ["FIGURES", "write_analysis_summary", "write_figures", "write_summary"]

FIGURES: tuple[str, ...] = ("phi_histograms.png", "phi_suf_by_type.png", "streamable_vs_L.png")
"""File names of the figures :func:`write_figures` writes, in order."""


def write_summary(summary: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``summary`` as JSON atomically: indent 2, keys in insertion order, and no
    NaN/Infinity (``allow_nan=False`` raises ``ValueError`` on one: undefined is null);
    ``format_version`` first (:mod:`streamrag.base.formats`)."""
    text = json.dumps(versioned(summary), indent=2, sort_keys=False, allow_nan=False, ensure_ascii=False) + "\n"
    target = Path(path)
    write_text_atomic(target, text)
    return target


def write_analysis_summary(summary: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """``summary.json`` of ``analyze`` or ``stats``: validated against its model
    (:class:`~streamrag.analysis.summary_model.AnalyzeSummary`), then :func:`write_summary`."""
    from streamrag.analysis.summary_model import check_summary

    check_summary(versioned(summary))
    return write_summary(summary, path)


def write_figures(
    df: pd.DataFrame, summary: dict[str, Any], out_dir: str | os.PathLike[str], *, suffix: str | None = None
) -> list[Path]:
    """Write the three figures of :data:`FIGURES` into ``out_dir`` (created if absent), in
    the format ``suffix`` names (``.png``, ``.pdf``, ``.svg``; default: ``--figure-format``'s,
    :func:`~streamrag.base.figures.figure_name`).

    The streamable-vs-L figure is drawn at the summary's θ: from its RQ2 grid when θ is
    a grid value (so the figure shows exactly the JSON's numbers), else recomputed from
    the table at that θ.
    """
    from streamrag.analysis import plots
    from streamrag.base.figures import figure_name, save_figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    theta = float(summary.get("parameters", {}).get("theta", 0.8))
    grid = summary.get("rq2", {}).get("grid") or []
    in_grid = any(abs(cell["theta"] - theta) < 1e-9 for cell in grid)
    names = [Path(name).stem + suffix if suffix else figure_name(Path(name).stem) for name in FIGURES]
    return [
        save_figure(plots.plot_phi_histograms(df), out / names[0]),
        save_figure(plots.plot_phi_suf_by_type(df), out / names[1]),
        save_figure(plots.plot_streamable_vs_L(grid if in_grid else df, theta=theta), out / names[2]),
    ]
