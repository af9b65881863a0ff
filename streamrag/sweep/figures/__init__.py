"""Figures of a sweep, drawn from its table (and per-question results).

- :func:`plot_streamable_heatmaps` — streamable fraction (%) over L × δ, one panel per θ;
- :func:`plot_saved_vs_bounds` — mean saved ms against mean H (with the lines saved = H
  and saved = H + G) and mean H_G, coloured by trigger;
- :func:`plot_pareto` — mean saved ms versus wasted calls per question across triggers,
  one panel per L (two panels a row), the non-dominated points filled;
- :func:`plot_saved_vs_H_scatter` — per-question saved ms versus H (the anchor's RQ3
  figure), one panel per chosen point (:mod:`~streamrag.sweep.figures.simulate`);
- :func:`plot_analysis_arms`, :func:`plot_load` and :func:`plot_revisions`
  (:mod:`~streamrag.sweep.figures.load`).

Every figure shows every setting the grid varied — by colour, marker, panel or label,
named in a legend or a title — and says under its title which values it left out when
they would not fit (:mod:`~streamrag.sweep.figures.encoding`). Like
:mod:`streamrag.analysis.plots`, each draws onto ``fig=`` or a new figure on its own Agg
canvas (no pyplot state), at most both columns of a paper wide, and returns it;
:func:`sweep_figures` picks the ones that fit a sweep, :func:`write_figures` writes them,
atomically.

``load.py`` and ``simulate.py`` are named after the sweeps whose figures they draw (load
and simulate points), as the point kinds are; the modules that run those are
``simulator/load/`` and ``simulator/simulate.py``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamrag.base.figures import figure_name, save_figure
from streamrag.sweep.figures.encoding import PREFERRED, reference_rows
from streamrag.sweep.figures.load import plot_analysis_arms, plot_load, plot_revisions
from streamrag.sweep.figures.simulate import (
    plot_pareto,
    plot_saved_vs_bounds,
    plot_saved_vs_H_scatter,
    plot_streamable_heatmaps,
)

if TYPE_CHECKING:
    import pandas as pd

    from streamrag.sweep.grid import Grid

__all__ = [
    "PREFERRED",
    "plot_analysis_arms",
    "plot_load",
    "plot_pareto",
    "plot_revisions",
    "plot_saved_vs_H_scatter",
    "plot_saved_vs_bounds",
    "plot_streamable_heatmaps",
    "reference_rows",
    "sweep_figures",
    "write_figures",
]


def sweep_figures(run_dir: str | os.PathLike[str], table: pd.DataFrame, kind: str) -> list[tuple[str, Any]]:
    """The figures that fit a sweep of grid kind ``kind`` and its table, as ``(file stem,
    draw)`` pairs in order, ``draw()`` returning the :class:`Figure` (the per-question
    scatter reads the points' results in ``run_dir``). The one rule of which figures a
    sweep has: :func:`write_figures` writes them, ``streamrag report`` draws them."""
    wanted: list[tuple[str, Any]] = []
    if table.empty:
        return []
    if kind == "streamable":
        wanted.append(("streamable_heatmaps", lambda: plot_streamable_heatmaps(table)))
    elif kind == "simulate" and "calls_on_revised_share" in table.columns and "p" in table.columns:
        if table["p"].nunique() > 1:
            wanted.append(("revisions", lambda: plot_revisions(table)))
    elif kind == "simulate" and "offered_load" in table.columns:
        if table["offered_load"].nunique() > 1:
            wanted.append(("load", lambda: plot_load(table)))
    elif kind == "simulate":
        wanted.append(("saved_vs_bounds", lambda: plot_saved_vs_bounds(table)))
        if "trigger" in table.columns and table["trigger"].nunique() > 1:
            wanted.append(("pareto", lambda: plot_pareto(table)))
        wanted.append(("saved_vs_H_scatter", lambda: plot_saved_vs_H_scatter(run_dir, table)))
    elif kind == "analyze" and "k" in table.columns:
        wanted.append(("analysis_arms", lambda: plot_analysis_arms(table)))
    return wanted


def write_figures(out_dir: str | os.PathLike[str], table: pd.DataFrame, grid: Grid) -> list[Path]:
    """The figures that fit the grid's kind and axes (:func:`sweep_figures`), into
    ``out_dir/figures/``, in the format of ``--figure-format``
    (:func:`~streamrag.base.figures.figure_name`)."""
    folder = Path(out_dir) / "figures"
    return [save_figure(draw(), folder / figure_name(stem)) for stem, draw in sweep_figures(out_dir, table, grid.kind)]
