"""Figures of a sweep, drawn from its table (and per-question results).

- :func:`plot_streamable_heatmaps` — streamable fraction (%) over L × δ, one panel per θ;
- :func:`plot_saved_vs_bounds` — mean saved ms against mean H (with the lines saved = H
  and saved = H + G) and mean H_G, per trigger;
- :func:`plot_pareto` — mean saved ms versus wasted calls per question across triggers,
  one panel per L at one cadence (two panels a row), the non-dominated points filled;
- :func:`plot_saved_vs_H_scatter` — per-question saved ms versus H (the anchor's RQ3
  figure), one panel per chosen point;
- :func:`plot_analysis_arms`, :func:`plot_load` and :func:`plot_revisions`
  (:mod:`streamrag.sweep.figures_load`).

Like :mod:`streamrag.analysis.plots`, each draws onto ``fig=`` or a new figure on its own
Agg canvas (no pyplot state), at most both columns of a paper wide, and returns it;
:func:`sweep_figures` picks the ones that fit a sweep, :func:`write_figures` writes them, atomically.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from streamrag.base.figures import PAGE_IN, figure_name, figure_or_new, finish, legend_columns, paper_style, save_figure
from streamrag.sweep.figures_load import _fmt, _model_note, plot_analysis_arms, plot_load, plot_revisions
from streamrag.sweep.table import pareto_front, read_point_results

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from streamrag.sweep.grid import Grid

__all__ = [
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

PREFERRED = {"delta_wps": 3.0, "theta": 0.8}
"""Values figures fix an axis at when they cannot show it (the paper's point)."""


def _closest(values: Sequence[float], target: float) -> float:
    return min(values, key=lambda v: (abs(float(v) - target), float(v)))


def reference_rows(table: pd.DataFrame, keep: Sequence[str]) -> pd.DataFrame:
    """Rows with every varying column except ``keep`` fixed at one value: δ at the value
    closest to 3 w/s, θ closest to 0.8, anything else at its first value."""
    fixed = [
        c
        for c in ("delta_wps", "theta", "trigger", "reflector", "max_threads", "profile", "population")
        if c in table.columns and c not in keep and table[c].nunique() > 1
    ]
    rows = table
    for column in fixed:
        values = list(dict.fromkeys(rows[column]))
        want = _closest(values, PREFERRED[column]) if column in PREFERRED else values[0]
        rows = rows[rows[column] == want]
    return rows


def _triggers(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table["trigger"].astype(str))) if "trigger" in table.columns else [""]


def _grid_shape(n: int, max_cols: int) -> tuple[int, int]:
    cols = max(1, min(n, max_cols))
    return -(-max(n, 1) // cols), cols


def plot_streamable_heatmaps(table: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """Streamable fraction (%, ``H ≥ θ·L`` over all questions) as an L × δ heatmap per θ,
    as many panels a row as fit both columns of a paper."""
    thetas = sorted(table["theta"].unique())
    Ls = sorted(table["L_ms"].unique())
    deltas = sorted(table["delta_wps"].unique())
    panel_in = 0.38 * len(deltas) + 0.45  # a panel's width that keeps its numbers apart
    n_rows, n_cols = _grid_shape(len(thetas), max(1, int((PAGE_IN - 1.0) // panel_in)))
    with paper_style():
        fig = figure_or_new(fig, min(PAGE_IN, panel_in * n_cols + 1.0), n_rows * (0.2 * len(Ls) + 1.1) + 0.4)
        n_rows, n_cols = _grid_shape(len(thetas), max(1, int((fig.get_size_inches()[0] - 1.0) // panel_in)))  # a given figure's
        axes = fig.subplots(n_rows, n_cols, sharey=True, squeeze=False).ravel()
        for ax in axes[len(thetas) :]:
            ax.set_visible(False)
        image = None
        for ax, theta in zip(axes, thetas, strict=False):
            cells = table[table["theta"] == theta]
            grid = np.full((len(Ls), len(deltas)), np.nan)
            for _, c in cells.iterrows():
                grid[Ls.index(c["L_ms"]), deltas.index(c["delta_wps"])] = float(c["streamable_fraction"]) * 100.0
            image = ax.imshow(grid, origin="lower", cmap="viridis", vmin=0, vmax=100, aspect="auto")
            for i in range(len(Ls)):
                for j in range(len(deltas)):
                    if not np.isnan(grid[i, j]):
                        colour = "white" if grid[i, j] < 55 else "black"
                        ax.text(j, i, f"{grid[i, j]:.1f}", ha="center", va="center", fontsize=7, color=colour)
            ax.set_xticks(range(len(deltas)), [f"{d:g}" for d in deltas])
            ax.set_yticks(range(len(Ls)), [f"{L:g}" for L in Ls])
            ax.set_xlabel("cadence δ (words/s)")
            ax.set_title(f"θ = {theta:g}")
        for ax in axes[::n_cols]:
            ax.set_ylabel("tool latency L (ms)")
        if image is not None:  # one panel per θ, so there is one when the table has rows
            fig.colorbar(image, ax=list(axes[: len(thetas)]), label="streamable (%)", shrink=0.9)
        fig.suptitle("Streamable fraction: share of questions with H ≥ θ·L (%)", wrap=True)
        return finish(fig)


_MARKERS = "osD^vPXh<>p"  # no star: the star is the oracle bound


_Style = tuple[str, str, float, bool]
"""A trigger's colour, marker, marker size (points²) and whether it is a bound (``oracle``)."""


def _trigger_styles(table: pd.DataFrame) -> dict[str, _Style]:
    """Per trigger its :data:`_Style` — earlier triggers larger, so a trigger that
    coincides with another (every 3 words = every 1 s at δ = 3) still shows around it."""
    triggers = _triggers(table)
    oracle = _is_oracle(table)
    bounds = set(table.loc[oracle, "trigger"].astype(str)) if "trigger" in table.columns else set()
    return {t: (f"C{i % 10}", _MARKERS[i % len(_MARKERS)], max(80 * 0.78**i, 12.0), t in bounds) for i, t in enumerate(triggers)}


def _is_oracle(rows: pd.DataFrame) -> pd.Series:
    if "trigger_kind" in rows.columns:
        return rows["trigger_kind"].astype(str) == "oracle"
    return pd.Series(False, index=rows.index)


def _scatter_triggers(ax: Axes, rows: pd.DataFrame, x: str, styles: dict[str, _Style], *, filled: bool = False) -> None:
    """One marker per point in its trigger's colour and shape, open (``filled``: a
    translucent fill, so a marker under another still shows its outline); a bound's
    points a filled star on top, labelled ``(bound)``."""
    from matplotlib.colors import to_rgba

    for trig, (colour, marker, size, bound) in styles.items():
        mine = rows[rows["trigger"].astype(str) == trig] if trig else rows
        if not len(mine):
            continue
        face = colour if bound else to_rgba(colour, 0.4) if filled else "none"
        ax.scatter(
            mine[x],
            mine["saved_ms.mean"],
            s=110 if bound else size,
            marker="*" if bound else marker,
            facecolors=face,
            edgecolors="black" if bound else colour,
            linewidths=0.5 if bound else 1.1,
            zorder=5 if bound else 4 if filled else 3,
            label=f"{trig} (bound)" if bound else (trig or None),
        )


def _G_values(rows: pd.DataFrame) -> list[float]:
    if "G_ms" not in rows.columns:
        return []
    return sorted({float(g) for g in pd.to_numeric(rows["G_ms"], errors="coerce").dropna()})


def _reference_lines(ax: Axes, lo: float, hi: float, G_values: Sequence[float], *, name: str = "H") -> None:
    """The lines saved = H and, per query-generation latency G, saved = H + G: a call
    fired early overlaps G as well as the tool's latency, so savings reach above H."""
    label = f"saved = {name}" + (" = min(G + L, residual)" if name == "H_G" else "")
    ax.plot([lo, hi], [lo, hi], color="0.35", linestyle="--", linewidth=0.9, zorder=2, label=label)
    for i, g in enumerate(G_values):
        ax.plot(
            [lo, hi],
            [lo + g, hi + g],
            color="0.35",
            linestyle=(0, (1, 1.5 + i)),
            linewidth=0.9,
            zorder=2,
            label=f"saved = {name} + G (G = {g:g} ms)",
        )


def _legend_below(fig: Figure, axes: Iterable[Axes], ncol: int = 3, *, triggers: dict[str, _Style] | None = None) -> None:
    """One legend for every panel, below them (a label once); with ``triggers``, their
    markers as drawn (open; the bound a star) after the lines, whichever panel has them."""
    from matplotlib.lines import Line2D

    unique: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if triggers is None or isinstance(handle, Line2D):
                unique.setdefault(label, handle)
    for trig, (colour, marker, _, bound) in (triggers or {}).items():
        name = f"{trig} (bound)" if bound else trig
        unique[name] = Line2D(
            [],
            [],
            linestyle="none",
            marker="*" if bound else marker,
            markersize=9 if bound else 6,
            markerfacecolor=colour if bound else "none",
            markeredgecolor="black" if bound else colour,
            markeredgewidth=0.5 if bound else 1.0,
        )
    if unique:
        fig.legend(list(unique.values()), list(unique), loc="outside lower center", ncol=legend_columns(fig, ncol), frameon=False)


def plot_saved_vs_bounds(table: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """Mean saved ms against the mean bounds H (with saved = H and saved = H + G, G the
    query-generation latency a speculative call also overlaps) and H_G (saved = H_G),
    one marker and colour per trigger (open; ``oracle`` a star on top); each marker is a
    grid point."""
    styles = _trigger_styles(table)
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN, 3.4)
        axes = fig.subplots(1, 2, sharey=True)
        lo = min(0.0, float(pd.to_numeric(table["saved_ms.mean"]).min()))
        for ax, bound, name, label, G in (
            (axes[0], "H_ms.mean", "H", "mean H (ms)", _G_values(table)),
            (axes[1], "H_G_ms.mean", "H_G", "mean H_G (ms)", []),
        ):
            hi = float(np.nanmax(table[[bound, "saved_ms.mean"]].to_numpy(dtype=float)))
            _reference_lines(ax, lo, hi, G, name=name)
            _scatter_triggers(ax, table, bound, styles)
            ax.axhline(0, color="0.3", linewidth=0.6)
            ax.set_xlabel(label)
            ax.grid(color="0.92")
        axes[0].set_ylabel("mean saved (ms)")
        _legend_below(fig, axes, ncol=3, triggers=styles)
        fig.suptitle("Saved against the hideable-latency bounds (a marker per grid point)" + _model_note(table), wrap=True)
        return finish(fig)


def plot_pareto(table: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """Mean saved ms versus wasted calls per question across triggers: one panel per L
    (δ fixed closest to 3 w/s), two a row; the Pareto front (more saved, fewer wasted)
    joined and its points filled, the others open. The ``oracle`` trigger is a bound (a
    star drawn on top), not part of the front. Triggers that coincide stay visible:
    each has its own marker, earlier ones larger."""
    rows = reference_rows(table, keep=("trigger", "L_ms"))
    Ls = sorted(rows["L_ms"].unique()) if "L_ms" in rows.columns else [None]
    styles = _trigger_styles(table)
    n_rows, n_cols = _grid_shape(len(Ls), 2)
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN if n_cols > 1 else 3.5, 2.3 * n_rows + 1.3)
        axes = fig.subplots(n_rows, n_cols, sharey=True, squeeze=False).ravel()
        for ax in axes[len(Ls) :]:
            ax.set_visible(False)
        for ax, L in zip(axes, Ls, strict=False):
            panel = rows if L is None else rows[rows["L_ms"] == L]
            oracle = _is_oracle(panel)
            on_front = pareto_front(panel[~oracle]).reindex(panel.index, fill_value=False)
            front = panel[on_front].sort_values("wasted_calls.mean")
            ax.plot(
                front["wasted_calls.mean"],
                front["saved_ms.mean"],
                color="0.5",
                linewidth=1,
                zorder=1,
                drawstyle="steps-post",
                label="Pareto front (filled markers)",
            )
            _scatter_triggers(ax, panel[~on_front], "wasted_calls.mean", styles)
            _scatter_triggers(ax, panel[on_front], "wasted_calls.mean", styles, filled=True)
            ax.axhline(0, color="0.3", linewidth=0.6)
            ax.set_xlabel("wasted calls per question")
            ax.set_title("" if L is None else f"L = {L:g} ms")
            ax.grid(color="0.92")
        for ax in axes[::n_cols]:
            ax.set_ylabel("mean saved (ms)")
        _legend_below(fig, axes[: len(Ls)], ncol=4, triggers=styles)
        delta = f", δ = {rows['delta_wps'].iloc[0]:g} w/s" if "delta_wps" in rows.columns and len(rows) else ""
        fig.suptitle(f"Latency saved versus wasted tool calls across triggers{delta}" + _model_note(table), wrap=True)
        return finish(fig)


def _scatter_points(table: pd.DataFrame, max_panels: int) -> pd.DataFrame:
    rows = table if len(table) <= max_panels else reference_rows(table, keep=("L_ms",))
    return rows.head(max_panels)


def plot_saved_vs_H_scatter(
    run_dir: str | os.PathLike[str],
    table: pd.DataFrame,
    *,
    keys: Sequence[str] | None = None,
    max_panels: int = 4,
    fig: Figure | None = None,
) -> Figure:
    """Per question, saved ms against H (ms), one panel per point (two a row) — the
    anchor's RQ3 figure — with the lines saved = H and saved = H + G (the point's query
    generation latency G, which an early call overlaps too). Points: ``keys``, else all
    when there are at most ``max_panels``, else one per L at the reference values of the
    other axes. Negative savings are red."""
    rows = table[table["key"].isin(keys)] if keys is not None else _scatter_points(table, max_panels)
    n_rows, n_cols = _grid_shape(len(rows), 2)
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN if n_cols > 1 else 3.5, 2.5 * n_rows + 1.1)
        axes = fig.subplots(n_rows, n_cols, sharey=True, squeeze=False).ravel()
        for ax in axes[max(len(rows), 1) :]:
            ax.set_visible(False)
        for ax, (_, point) in zip(axes, rows.iterrows(), strict=False):
            res = read_point_results(run_dir, point["key"])
            if "skip_reason" in res.columns:
                res = res[res["skip_reason"].isna()]  # questions the point did not replay
            h, saved = res["H_ms"].to_numpy(float), res["saved_ms"].to_numpy(float)
            neg = saved < 0
            # Word arrivals quantize H and saved (multiples of 1/δ), so many questions share a
            # spot: jitter both a little (seeded: the figure is reproducible).
            rng = np.random.default_rng(0)
            h = h + rng.uniform(-0.02, 0.02, h.size) * max(float(np.ptp(h)) if h.size else 0.0, 1.0)
            saved_j = saved + rng.uniform(-0.02, 0.02, saved.size) * max(float(np.ptp(saved)) if saved.size else 0.0, 1.0)
            ax.scatter(h[~neg], saved_j[~neg], s=6, alpha=0.4, color="tab:blue", linewidths=0, label="saved ≥ 0")
            ax.scatter(h[neg], saved_j[neg], s=9, alpha=0.9, color="tab:red", linewidths=0, label="saved < 0")
            _reference_lines(ax, 0.0, float(max(h.max(initial=0.0), 1.0)), _G_values(pd.DataFrame([point])))
            ax.axhline(0, color="0.3", linewidth=0.6)
            rho = point.get("spearman_H_saved.rho")
            rho_text = "ρ undefined" if rho is None or pd.isna(rho) else f"ρ = {rho:+.2f}"
            title = ", ".join(
                str(point[c]) if c == "trigger" else _fmt(c, point[c])
                for c in ("trigger", "L_ms", "delta_wps")
                if c in point.index
            )
            ax.set_title(
                f"{title}\nmean saved {point['saved_ms.mean']:.0f}, H {point['H_ms.mean']:.0f} ms; {rho_text}; "
                f"{int(neg.sum())} negative"
            )
            ax.set_xlabel("H (ms); both axes jittered")
            ax.grid(color="0.92")
        for ax in axes[::n_cols]:
            ax.set_ylabel("saved (ms)")
        _legend_below(fig, axes[: max(len(rows), 1)], ncol=4)
        fig.suptitle("Per-question saving versus the bound H (a dot per question)" + _model_note(table), wrap=True)
        return finish(fig)


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
