"""Figures of simulate and streamable sweeps (re-exported by :mod:`streamrag.sweep.figures`).

Each shows every setting the grid varied (:mod:`~streamrag.sweep.figures.encoding`): a
trigger by colour, another setting by marker or by panel, and says under its title which
values it left out when the panels would not fit.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from streamrag.base.figures import PAGE_IN, figure_or_new, finish, legend_columns, paper_style
from streamrag.sweep.figures.encoding import MARKERS, Layout, fmt, label, layout, model_note, varied
from streamrag.sweep.table import pareto_front, read_point_results

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_pareto", "plot_saved_vs_H_scatter", "plot_saved_vs_bounds", "plot_streamable_heatmaps"]

_LEGEND_ROW_IN = 0.17
"""Height of one legend row below the panels (7 pt text): a figure made here grows by it."""


def _grid_shape(n: int, max_cols: int) -> tuple[int, int]:
    cols = max(1, min(n, max_cols))
    return -(-max(n, 1) // cols), cols


def _title(text: str, table: pd.DataFrame, lay: Layout) -> str:
    return text + model_note(table) + (f"\n{lay.note}" if lay.note else "")


def plot_streamable_heatmaps(table: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """Streamable fraction (%, ``H ≥ θ·L`` over all questions) as an L × δ heatmap, one
    panel per θ and per value of any other varied setting (k, grounding, …; at most 12
    panels, the rest named in a note), as many a row as fit both columns of a paper."""
    lay = layout(table, shown=("L_ms", "delta_wps"), facets=("theta",), max_panels=12)
    Ls = sorted(table["L_ms"].unique())
    deltas = sorted(table["delta_wps"].unique())
    panel_in = 0.38 * len(deltas) + 0.45  # a panel's width that keeps its numbers apart
    n = len(lay.panels)
    n_rows, n_cols = _grid_shape(n, max(1, int((PAGE_IN - 1.0) // panel_in)))
    with paper_style():
        fig = figure_or_new(fig, min(PAGE_IN, panel_in * n_cols + 1.0), n_rows * (0.2 * len(Ls) + 1.1) + 0.6)
        n_rows, n_cols = _grid_shape(n, max(1, int((fig.get_size_inches()[0] - 1.0) // panel_in)))  # a given figure's
        axes = fig.subplots(n_rows, n_cols, sharey=True, squeeze=False).ravel()
        for ax in axes[n:]:
            ax.set_visible(False)
        image = None
        for ax, (values, cells) in zip(axes, lay.panels, strict=False):
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
            ax.set_title(label(values), wrap=True)
        for ax in axes[::n_cols]:
            ax.set_ylabel("tool latency L (ms)")
        if image is not None:  # a panel per θ, so there is one when the table has rows
            fig.colorbar(image, ax=list(axes[:n]), label="streamable (%)", shrink=0.9)
        note = f"\n{lay.note}" if lay.note else ""
        fig.suptitle(f"Streamable fraction: share of questions with H ≥ θ·L (%){note}", wrap=True)
        return finish(fig)


class _Style(NamedTuple):
    """A trigger's colour, marker, marker size (points²) and whether it is a bound (``oracle``)."""

    colour: str
    marker: str
    size: float
    bound: bool


def _trigger_styles(table: pd.DataFrame) -> dict[str, _Style]:
    """Per trigger its :class:`_Style` — earlier triggers larger, so a trigger that
    coincides with another (every 3 words = every 1 s at δ = 3) still shows around it."""
    triggers = list(dict.fromkeys(table["trigger"].astype(str))) if "trigger" in table.columns else [""]
    oracle = _is_oracle(table)
    bounds = set(table.loc[oracle, "trigger"].astype(str)) if "trigger" in table.columns else set()
    return {
        t: _Style(f"C{i % 10}", MARKERS[i % len(MARKERS)], max(80 * 0.78**i, 12.0), t in bounds) for i, t in enumerate(triggers)
    }


def _is_oracle(rows: pd.DataFrame) -> pd.Series:
    if "trigger_kind" in rows.columns:
        return rows["trigger_kind"].astype(str) == "oracle"
    return pd.Series(False, index=rows.index)


def _markers(table: pd.DataFrame, column: str | None) -> dict[Any, str]:
    """The marker of each value of the layout's marker setting, in order of appearance."""
    if column is None:
        return {}
    values = dict.fromkeys(None if pd.isna(v) else v for v in table[column])
    return {v: MARKERS[i % len(MARKERS)] for i, v in enumerate(values)}


def _scatter_triggers(
    ax: Axes,
    rows: pd.DataFrame,
    x: str,
    styles: dict[str, _Style],
    *,
    filled: bool = False,
    marker_of: tuple[str, dict[Any, str]] | None = None,
) -> None:
    """One marker per point in its trigger's colour, open (``filled``: a translucent fill,
    so a marker under another still shows its outline); its shape the trigger's, or with
    ``marker_of`` = (setting, shapes) the shape of the point's value of that setting. A
    bound's points are drawn on top, filled: a star, or the setting's shape with a black edge."""
    from matplotlib.colors import to_rgba

    for trig, style in styles.items():
        mine = rows[rows["trigger"].astype(str) == trig] if trig else rows
        groups: Iterable[tuple[Any, pd.DataFrame]] = [(None, mine)]
        if marker_of is not None:
            column, shapes = marker_of
            groups = [(v, mine[mine[column].isna() if v is None else mine[column] == v]) for v in shapes]
        for value, part in groups:
            if not len(part):
                continue
            shape = "*" if style.bound and marker_of is None else style.marker if marker_of is None else marker_of[1][value]
            face = style.colour if style.bound else to_rgba(style.colour, 0.4) if filled else "none"
            name = f"{trig} (bound)" if style.bound else (trig or "point")
            ax.scatter(
                part[x],
                part["saved_ms.mean"],
                s=110 if style.bound and marker_of is None else style.size,
                marker=shape,
                facecolors=face,
                edgecolors="black" if style.bound else style.colour,
                linewidths=0.5 if style.bound else 1.1,
                zorder=5 if style.bound else 4 if filled else 3,
                label=name if marker_of is None else f"{name}, {fmt(marker_of[0], value)}",
                gid="points",
            )


def _G_values(rows: pd.DataFrame) -> list[float]:
    if "G_ms" not in rows.columns:
        return []
    return sorted({float(g) for g in pd.to_numeric(rows["G_ms"], errors="coerce").dropna()})


def _reference_lines(ax: Axes, lo: float, hi: float, G_values: Sequence[float], *, name: str = "H") -> None:
    """The lines saved = H and, per query-generation latency G, saved = H + G: a call
    fired early overlaps G as well as the tool's latency, so savings reach above H."""
    text = f"saved = {name}" + (" = min(G + L, residual)" if name == "H_G" else "")
    ax.plot([lo, hi], [lo, hi], color="0.35", linestyle="--", linewidth=0.9, zorder=2, label=text)
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


def _legend_below(
    fig: Figure,
    axes: Iterable[Axes],
    ncol: int = 3,
    *,
    triggers: dict[str, _Style] | None = None,
    marker_of: tuple[str, dict[Any, str]] | None = None,
    grow: bool = False,
) -> None:
    """One legend for every panel, below them (a label once); with ``triggers``, their
    markers as drawn after the lines (with ``marker_of``, a colour patch per trigger and a
    grey shape per value of that setting). ``grow``: the figure (made here) grows by the
    legend's rows, so nothing is cut off."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    unique: dict[str, Any] = {}
    for ax in axes:
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            if triggers is None or isinstance(handle, Line2D):
                unique.setdefault(name, handle)
    for trig, style in (triggers or {}).items():
        name = f"{trig} (bound)" if style.bound else trig
        if marker_of is not None:
            unique[name] = Patch(facecolor=style.colour, edgecolor="black" if style.bound else style.colour)
            continue
        unique[name] = Line2D(
            [],
            [],
            linestyle="none",
            marker="*" if style.bound else style.marker,
            markersize=9 if style.bound else 6,
            markerfacecolor=style.colour if style.bound else "none",
            markeredgecolor="black" if style.bound else style.colour,
            markeredgewidth=0.5 if style.bound else 1.0,
        )
    if marker_of is not None:
        column, shapes = marker_of
        for value, shape in shapes.items():
            unique[fmt(column, value)] = Line2D(
                [], [], linestyle="none", marker=shape, markersize=6, markerfacecolor="none", markeredgecolor="0.3"
            )
    if unique:
        n_cols = legend_columns(fig, ncol)
        if grow:
            width, height = fig.get_size_inches()
            fig.set_size_inches(width, height + _LEGEND_ROW_IN * -(-len(unique) // n_cols))
        fig.legend(list(unique.values()), list(unique), loc="outside lower center", ncol=n_cols, frameon=False)


def plot_saved_vs_bounds(table: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """Mean saved ms against the mean bounds H (with saved = H and saved = H + G, G the
    query-generation latency a speculative call also overlaps) and H_G (saved = H_G); each
    marker a grid point, its colour the trigger (open; ``oracle`` filled, on top). Another
    varied setting (L, δ, a retriever, …) takes the marker shape, the next ones a row of
    panels each (at most four rows; the rest named in a note under the title)."""
    styles = _trigger_styles(table)
    lay = layout(table, shown=("trigger",), marker=True, per_panel=2, max_panels=8)
    marker_of = (lay.marker, _markers(table, lay.marker)) if lay.marker is not None else None
    owned = fig is None
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN, 2.6 * len(lay.panels) + 0.9)
        grid_axes = fig.subplots(len(lay.panels), 2, sharey=True, squeeze=False)
        lo = min(0.0, float(pd.to_numeric(table["saved_ms.mean"]).min()))
        for (values, rows), pair in zip(lay.panels, grid_axes, strict=True):
            for ax, bound, name, xlabel, G in (
                (pair[0], "H_ms.mean", "H", "mean H (ms)", _G_values(table)),
                (pair[1], "H_G_ms.mean", "H_G", "mean H_G (ms)", []),
            ):
                hi = float(np.nanmax(table[[bound, "saved_ms.mean"]].to_numpy(dtype=float)))
                _reference_lines(ax, lo, hi, G, name=name)
                _scatter_triggers(ax, rows, bound, styles, marker_of=marker_of)
                ax.axhline(0, color="0.3", linewidth=0.6)
                ax.set_xlabel(xlabel)
                ax.set_title(label(values))
                ax.grid(color="0.92")
            pair[0].set_ylabel("mean saved (ms)")
        _legend_below(fig, grid_axes.ravel(), ncol=3, triggers=styles, marker_of=marker_of, grow=owned)
        text = "Saved against the hideable-latency bounds (a marker per grid point)"
        fig.suptitle(_title(text, table, lay), wrap=True)
        return finish(fig)


def plot_pareto(table: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """Mean saved ms versus wasted calls per question across triggers: one panel per L
    and per value of every other varied setting (two a row, at most eight; the rest named
    in a note under the title, δ held closest to 3 w/s); the Pareto front (more saved,
    fewer wasted) joined and its points filled, the others open. The ``oracle`` trigger is
    a bound (a star drawn on top), not part of the front. Triggers that coincide stay
    visible: each has its own marker, earlier ones larger."""
    lay = layout(table, shown=("trigger",), facets=("L_ms",), max_panels=8)
    styles = _trigger_styles(table)
    n_rows, n_cols = _grid_shape(len(lay.panels), 2)
    owned = fig is None
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN if n_cols > 1 else 3.5, 2.3 * n_rows + 1.3)
        axes = fig.subplots(n_rows, n_cols, sharey=True, squeeze=False).ravel()
        for ax in axes[len(lay.panels) :]:
            ax.set_visible(False)
        for ax, (values, panel) in zip(axes, lay.panels, strict=False):
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
            ax.set_title(label(values))
            ax.grid(color="0.92")
        for ax in axes[::n_cols]:
            ax.set_ylabel("mean saved (ms)")
        _legend_below(fig, axes[: len(lay.panels)], ncol=4, triggers=styles, grow=owned)
        one_delta = "delta_wps" in table.columns and table["delta_wps"].nunique() == 1 and len(table)
        delta = f", {fmt('delta_wps', table['delta_wps'].iloc[0])}" if one_delta else ""
        fig.suptitle(_title(f"Latency saved versus wasted tool calls across triggers{delta}", table, lay), wrap=True)
        return finish(fig)


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
    generation latency G, which an early call overlaps too), each panel titled with every
    varied setting of its point. Points: ``keys``, else every point when at most
    ``max_panels``, else one per L and per value of the other varied settings while they
    fit, the rest held at one value (named in a note under the title). Negative savings are red."""
    if keys is not None:
        rows = table[table["key"].isin(keys)]
        note = ""
    else:
        lay = layout(table, facets=("L_ms",), max_panels=max_panels)
        rows, note = pd.concat([part for _, part in lay.panels]), lay.note
    named = [c for c in ("trigger", "L_ms", "delta_wps") if c in table.columns]
    named += [c for c in varied(table) if c not in named]
    n_rows, n_cols = _grid_shape(len(rows), 2)
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN if n_cols > 1 else 3.5, 2.6 * n_rows + 1.2)
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
            ax.set_title(
                f"{label({c: point[c] for c in named})}\nmean saved {point['saved_ms.mean']:.0f}, "
                f"H {point['H_ms.mean']:.0f} ms; {rho_text}; {int(neg.sum())} negative",
                wrap=True,
            )
            ax.set_xlabel("H (ms); both axes jittered")
            ax.grid(color="0.92")
        for ax in axes[::n_cols]:
            ax.set_ylabel("saved (ms)")
        _legend_below(fig, axes[: max(len(rows), 1)], ncol=4)
        title = "Per-question saving versus the bound H (a dot per question)" + model_note(table)
        fig.suptitle(title + (f"\n{note}" if note else ""), wrap=True)
        return finish(fig)
