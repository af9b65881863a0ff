"""Every plot function of streamrag, in matplotlib's convention.

Each takes its data and ``ax=`` (one panel) or ``fig=`` (several panels): it draws onto
that axes or figure when given, else onto a new figure on its own Agg canvas (no pyplot
state) sized for a paper — one column (3.5 in) for one panel, at most both columns
(7 in), more panels wrapping into rows — and returns the
:class:`~matplotlib.figure.Figure`. :func:`save_figure` writes one atomically, in the
format of the file's extension (``.png``, ``.pdf``, ``.svg``)::

    from streamrag import plots

    fig = plots.plot_pareto(streamrag.read_run("runs/triggers").table)
    plots.save_figure(fig, "pareto.pdf")

The commands write the same figures (``--figure-format png|pdf|svg``, ``--dpi``).
"""

from __future__ import annotations

from streamrag.analysis.plots import plot_phi_histograms, plot_phi_suf_by_type, plot_retrievers, plot_streamable_vs_L
from streamrag.base.figures import COLUMN_IN, PAGE_IN, save_figure
from streamrag.calibration.figure import plot_fits
from streamrag.report.run_figure import plot_saved
from streamrag.simulator.compare.bound_rank import plot_h_vs_saved
from streamrag.simulator.compare.published import plot_comparison
from streamrag.simulator.compare.runs import plot_run_comparison
from streamrag.simulator.views.gantt import plot_trace
from streamrag.sweep.figures import (
    plot_analysis_arms,
    plot_load,
    plot_pareto,
    plot_revisions,
    plot_saved_vs_bounds,
    plot_saved_vs_H_scatter,
    plot_streamable_heatmaps,
    reference_rows,
)
from streamrag.sweep.frontier.figure import plot_frontier

__all__ = [
    "COLUMN_IN",
    "PAGE_IN",
    "plot_analysis_arms",
    "plot_comparison",
    "plot_fits",
    "plot_frontier",
    "plot_h_vs_saved",
    "plot_load",
    "plot_pareto",
    "plot_phi_histograms",
    "plot_phi_suf_by_type",
    "plot_retrievers",
    "plot_revisions",
    "plot_run_comparison",
    "plot_saved",
    "plot_saved_vs_H_scatter",
    "plot_saved_vs_bounds",
    "plot_streamable_heatmaps",
    "plot_streamable_vs_L",
    "plot_trace",
    "reference_rows",
    "save_figure",
]
