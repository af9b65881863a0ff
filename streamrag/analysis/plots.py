"""Figures of the stabilization study.

Each function draws onto the caller's axes or figure (``ax=`` / ``fig=``) or a new one on
its own Agg canvas — no pyplot, so importing this module or plotting never changes the
caller's backend or leaves figures open in pyplot's registry — and returns the
:class:`~matplotlib.figure.Figure`; :func:`streamrag.base.figures.save_figure` writes it
(:func:`streamrag.analysis.stats.report.write_figures` for the command).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from streamrag.analysis._values import active, bool_column, label_column, num_column
from streamrag.base.errors import ConfigError
from streamrag.base.figures import COLUMN_IN, PAGE_IN, axes_or_new, figure_or_new, finish, legend_columns, paper_style

__all__ = ["plot_phi_histograms", "plot_phi_suf_by_type", "plot_retrievers", "plot_streamable_vs_L"]

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _no_data(ax: Any) -> None:
    ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="0.4")


def plot_phi_histograms(df: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """φ_sc (all questions) beside φ_suf (retrieved-gold questions): 20-bin histograms
    over [0, 1] as the share of each panel's questions, medians marked; two panels on
    ``fig`` (default: a new one, both columns of a paper wide)."""
    q = active(df)
    phi_sc = num_column(q, "phi_sc")
    phi_suf = num_column(q, "phi_suf")[bool_column(q, "retrieved_gold")]
    edges = np.linspace(0.0, 1.0, 21)
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN, 2.6)
        axes = fig.subplots(1, 2, sharey=True)
        panels = (
            (phi_sc, "φ_sc (self-consistency), all", "tab:blue"),
            (phi_suf, "φ_suf (sufficiency), retrieved-gold", "tab:orange"),
        )
        for ax, (values, title, color) in zip(axes, panels, strict=True):
            x = values[~np.isnan(values)]
            ax.set_title(f"{title} (n = {x.size})")
            ax.set_xlabel("φ = t / n (share of the question heard)")
            ax.set_xlim(0, 1)
            if x.size == 0:
                _no_data(ax)
                ax.set_ylim(0, 100)
                continue
            ax.hist(x, bins=edges, weights=np.full(x.size, 100.0 / x.size), color=color, edgecolor="white")
            median = float(np.median(x))
            ax.axvline(median, color="black", linestyle="--", linewidth=1)
            ax.text(median, 0.97, f" median {median:.2f}", transform=ax.get_xaxis_transform(), va="top")
        axes[0].set_ylabel("share of questions (%)")
        fig.suptitle("Where prefix retrieval stabilizes")
        return finish(fig)


def plot_phi_suf_by_type(df: pd.DataFrame, *, by: str = "question_type", ax: Axes | None = None) -> Figure:
    """Box plot of φ_suf of retrieved-gold questions by question type (or ``by``),
    sorted by median (earliest on top), with each group's n in its label."""
    q = active(df)
    rg = bool_column(q, "retrieved_gold")
    phi = num_column(q, "phi_suf")[rg]
    labels = label_column(q, by)[rg]
    names = sorted({lab for lab in labels if lab is not None})
    groups = {g: phi[labels == g] for g in names}
    order = sorted(names, key=lambda g: (float(np.median(groups[g])), g), reverse=True)  # top = earliest
    with paper_style():
        fig, ax = axes_or_new(ax, COLUMN_IN, 1.1 + 0.28 * max(len(order), 2))
        if order:
            style: dict[str, Any] = {
                "widths": 0.6,
                "medianprops": {"color": "tab:orange", "linewidth": 1.5},
                "flierprops": {"markersize": 3},
            }
            try:
                ax.boxplot([groups[g] for g in order], orientation="horizontal", **style)
            except TypeError:  # matplotlib < 3.10 has no `orientation`
                ax.boxplot([groups[g] for g in order], vert=False, **style)
            ax.set_yticks(range(1, len(order) + 1), [f"{g} (n={groups[g].size})" for g in order])
        else:
            _no_data(ax)
        ax.set_xlim(0, 1)
        ax.set_xlabel("φ_suf = t_suf / n (gold enters the top-k)")
        ax.set_title(f"φ_suf by {by.replace('_', ' ')}, retrieved-gold (earliest on top)", wrap=True)
        ax.grid(axis="x", color="0.9")
        return finish(fig)


def _grid_frame(grid: pd.DataFrame | Sequence[dict[str, Any]], theta: float) -> pd.DataFrame:
    """Grid cells (L_ms, delta_wps, theta, streamable_fraction) for one θ."""
    if isinstance(grid, pd.DataFrame) and "n_words" in grid.columns:  # a stabilization table
        from streamrag.analysis.stats.rq import GRID_DELTA_WPS, GRID_L_MS, rq2_grid

        cells = pd.DataFrame(rq2_grid(grid, L_values=GRID_L_MS, delta_values=GRID_DELTA_WPS, theta_values=(theta,)))
    else:
        cells = pd.DataFrame(list(grid) if not isinstance(grid, pd.DataFrame) else grid)
    if cells.empty:
        return cells
    picked = cells[np.isclose(cells["theta"].astype(float), theta)]
    if picked.empty:
        have = ", ".join(f"{t:g}" for t in sorted(cells["theta"].unique()))
        raise ConfigError(f"theta {theta:g} is not in the grid (grid has theta {have})")
    return picked


def plot_streamable_vs_L(
    rq2_grid_or_df: pd.DataFrame | Sequence[dict[str, Any]], *, theta: float = 0.8, ax: Axes | None = None
) -> Figure:
    """Streamable fraction (%) versus tool latency L, one line per cadence δ, at ``theta``.

    Takes the RQ2 grid (``summary["rq2"]["grid"]``, a list of cells or their frame) or a
    stabilization table, from which the L × δ grid at ``theta`` is computed.
    """
    cells = _grid_frame(rq2_grid_or_df, theta)
    with paper_style():
        fig, ax = axes_or_new(ax, COLUMN_IN, 2.8)
        if cells.empty:
            _no_data(ax)
        else:
            # Lines often coincide at small L: distinct markers and dashes keep each visible.
            styles = [("o", "-", 6), ("s", "--", 4.5), ("^", ":", 3.5), ("D", "-.", 2.5)]
            for i, (delta, group) in enumerate(cells.groupby("delta_wps", sort=True)):
                line = group.sort_values("L_ms")
                y = pd.to_numeric(line["streamable_fraction"]).to_numpy(dtype=float, na_value=np.nan) * 100.0
                marker, dash, size = styles[i % len(styles)]
                ax.plot(line["L_ms"], y, marker=marker, linestyle=dash, markersize=size, label=f"δ = {delta:g} words/s")
            ax.set_xticks(sorted(cells["L_ms"].unique()))
            ax.legend(title="cadence")
        ax.set_ylim(0, 100)
        ax.set_xlabel("tool latency L (ms)")
        ax.set_ylabel("streamable questions (%)")
        ax.set_title(f"Questions that hide θ = {theta:g} of L (H ≥ θ·L)")
        ax.grid(color="0.9")
        return finish(fig)


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_DASHES = ("-", "--", ":", "-.")


def plot_retrievers(table: pd.DataFrame, *, delta_wps: float = 3.0, theta: float = 0.8, fig: Figure | None = None) -> Figure:
    """Retrievers side by side, each named in the legend with its retrieved-gold n: the
    cumulative share of retrieved-gold questions by φ_suf (how early gold enters the
    top-k), the streamable fraction against tool latency L at cadence ``delta_wps`` and
    ``theta``, and the median φ_suf by question type. ``table``: stabilization rows with a
    ``retriever`` column (``retrievers.csv``), the retrievers in their order there."""
    from streamrag.analysis.stats.rq import GRID_L_MS, rq2_grid

    q = active(table)
    names = list(dict.fromkeys(str(n) for n in q["retriever"])) if "retriever" in q.columns else []
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN, 3.3)
        axes = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1, 1.15]})
        rg_all = bool_column(q, "retrieved_gold")
        types = sorted({t for t in label_column(q, "question_type")[rg_all] if t is not None})  # a type with a median
        handles: dict[str, Any] = {}
        for i, name in enumerate(names):
            arm = q[q["retriever"] == name]
            marker, dash = _MARKERS[i % len(_MARKERS)], _DASHES[i % len(_DASHES)]
            rg = bool_column(arm, "retrieved_gold")
            phi = np.sort(num_column(arm, "phi_suf")[rg])
            color = f"C{i % 10}"
            if phi.size:
                axes[0].step(np.r_[0.0, phi, 1.0], np.r_[0.0, np.arange(1, phi.size + 1), phi.size] * 100.0 / phi.size,
                             where="post", linestyle=dash, color=color)  # fmt: skip
            cells = rq2_grid(arm, L_values=GRID_L_MS, delta_values=(delta_wps,), theta_values=(theta,))
            y = [np.nan if c["streamable_fraction"] is None else 100.0 * c["streamable_fraction"] for c in cells]
            size = 6 - 1.2 * (i % 4)
            handles[f"{name} (retrieved-gold n = {phi.size})"] = axes[1].plot(
                [c["L_ms"] for c in cells], y, marker=marker, linestyle=dash, markersize=size, color=color
            )[0]
            labels = label_column(arm, "question_type")[rg]
            values = num_column(arm, "phi_suf")[rg]
            medians = [float(np.median(values[labels == t])) if (labels == t).any() else np.nan for t in types]
            offset = (i - (len(names) - 1) / 2) * 0.12
            axes[2].plot(medians, np.arange(len(types)) + offset, marker=marker, linestyle="none", color=color)
        axes[0].set_xlim(0, 1)
        axes[0].set_ylim(0, 100)
        axes[0].set_xlabel("φ_suf = t_suf / n")
        axes[0].set_ylabel("retrieved-gold questions (%)")
        axes[0].set_title("gold in the top-k by φ_suf")
        axes[1].set_ylim(0, 100)
        axes[1].set_xticks(list(GRID_L_MS))
        axes[1].set_xlabel("tool latency L (ms)")
        axes[1].set_ylabel("streamable questions (%)")
        axes[1].set_title(f"H ≥ {theta:g}·L at δ = {delta_wps:g} words/s")
        axes[2].set_yticks(range(len(types)), types)
        axes[2].set_xlim(0, 1)
        axes[2].set_xlabel("median φ_suf (retrieved-gold)")
        axes[2].set_title("by question type")
        for ax in axes:
            ax.grid(color="0.92")
        if not names:
            for ax in axes:
                _no_data(ax)
        else:
            ncol = legend_columns(fig, len(handles), column_in=2.4)
            fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=ncol, frameon=False)
        fig.suptitle(f"Retrievers compared on the same questions: {', '.join(names)}", wrap=True)
        return finish(fig)
