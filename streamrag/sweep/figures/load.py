"""Figures of load, ASR-revision and analysis sweeps (re-exported by :mod:`streamrag.sweep.figures`).

- :func:`plot_load` — median and p90 answer latency against offered load, break-even marked;
- :func:`plot_revisions` — t*, saved ms and calls on revised hypotheses against the
  revision probability;
- :func:`plot_analysis_arms` — retrieved-gold share and mean φ_suf per analysis setting.

Each draws onto ``fig=`` or a new figure on its own Agg canvas, at most both columns of a
paper wide (panels wrap into rows), and returns it; each names every setting the grid
varied (:func:`~streamrag.sweep.figures.encoding.varied`) in a legend, a panel title or its title.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from streamrag.base.figures import PAGE_IN, figure_or_new, finish, legend_columns, paper_style
from streamrag.sweep.figures.encoding import determined, label, model_note, panels_of, values_text, varied

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_analysis_arms", "plot_load", "plot_revisions"]


def plot_load(table: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """Median and p90 answer latency against offered load, both systems, one panel per
    combination of the other varying settings (two a row; the mean over replications
    where the grid has a ``seed`` axis); the break-even load of the median paired
    difference marked, with its 95% interval over replications as a band
    (:mod:`streamrag.sweep.break_even`). A varied setting that takes more than one value
    at a point of a line (one the break-even groups do not split by) is averaged over,
    and named in the title with its values."""
    from streamrag.sweep.break_even import REPLICATE, _group_columns, break_even_rows

    others = _group_columns(table)
    cell = [c for c in (*others, "offered_load", REPLICATE) if c in table.columns]  # a point of a line
    averaged: list[str] = []
    for c in varied(table):
        if c not in cell and not determined(table, [*cell, *averaged], c):
            averaged.append(c)
    groups = list(table.groupby(others, sort=False, dropna=False)) if others else [((), table)]
    crossings = {
        tuple(r[c] for c in others): r
        for r in break_even_rows(table)
        if r["crossing"] == "median_saved" and r["axis"] == "nominal"
    }
    n_cols = min(2, len(groups))
    n_rows = -(-len(groups) // n_cols)
    n_reps = table[REPLICATE].nunique() if REPLICATE in table.columns else 1
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN if n_cols > 1 else 3.5, 2.4 * n_rows + 1.1)
        grid_axes = fig.subplots(n_rows, n_cols, sharey=False, squeeze=False)
        axes = grid_axes.ravel()
        for ax in axes[len(groups) :]:
            ax.set_visible(False)
        for ax, (key, group) in zip(axes, groups, strict=False):
            columns = [f"{s}.answer_ms.{stat}" for s in ("streaming", "baseline") for stat in ("median", "p90")]
            numeric = group[["offered_load", *columns]].apply(pd.to_numeric, errors="coerce")
            rows = numeric.groupby("offered_load", sort=True).mean().reset_index()
            x = rows["offered_load"].to_numpy(dtype=float)
            for system, colour in (("streaming", "tab:blue"), ("baseline", "tab:orange")):
                for stat, style in (("median", "-"), ("p90", "--")):
                    y = rows[f"{system}.answer_ms.{stat}"].to_numpy(dtype=float)
                    name = f"{system} {'p50' if stat == 'median' else stat}"
                    ax.plot(x, y, style, color=colour, marker="o", markersize=2.5, label=name)
            keys = key if isinstance(key, tuple) else (key,)
            found = crossings.get(tuple(keys) if others else ())
            if found is not None and found["mean"] is not None:
                be = found["mean"]
                if found["ci_low"] is not None:
                    ax.axvspan(found["ci_low"], found["ci_high"], color="red", alpha=0.12, linewidth=0)
                    note = f"break-even ρ = {be:.2f} [{found['ci_low']:.2f}, {found['ci_high']:.2f}]"
                else:
                    note = f"break-even ρ = {be:.2f}"
                ax.axvline(be, color="red", linewidth=1, label="break-even (95% band)" if n_reps > 1 else "break-even")
                right = be > sum(ax.get_xlim()) / 2  # the note on the side with room
                ax.text(be, ax.get_ylim()[1], f" {note} ", color="red", fontsize=7, va="top", ha="right" if right else "left")
            ax.set_title(label(dict(zip(others, keys, strict=False))) or "all points")
            ax.set_xlabel("offered tool load ρ = λ·E[L]/c (baseline)")
            ax.set_yscale("log")
            ax.grid(color="0.92")
        for ax in grid_axes[:, 0]:
            ax.set_ylabel("answer latency after E (ms)")
        handles: dict[str, Any] = {}
        for ax in axes[: len(groups)]:
            for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
                handles.setdefault(name, handle)
        fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=legend_columns(fig, 3), frameon=False)
        reps = f"; mean of {n_reps} replications" if n_reps > 1 else ""
        for c in averaged:
            reps += f"; mean over {values_text(c, list(dict.fromkeys(table[c])))}"
        fig.suptitle(
            "When does speculation stop paying? Answer latency under shared capacity" + reps + model_note(table), wrap=True
        )
        return finish(fig)


def plot_revisions(table: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """Stabilization and saved time against the ASR revision probability p, one line per
    rewrite window r and per value of any other varied setting: t* in ms from speech
    start, mean saved, and the share of fired calls that carried a hypothesis a later one
    revised (three panels in a row)."""
    panels = (
        ("t* (ms from speech start)", lambda rows: rows["t_star.mean"] * 1000 / rows["delta_wps"]),
        ("mean saved (ms)", lambda rows: rows["saved_ms.mean"]),
        ("calls on a revised hypothesis (share)", lambda rows: rows["calls_on_revised_share"]),
    )
    by = [c for c in ("r", *varied(table)) if c in table.columns and c != "p"]
    by = [c for i, c in enumerate(by) if c not in by[:i] and not determined(table, by[:i], c)] if by else []
    lines = [(label(values), rows) for values, rows in panels_of(table, by)]
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN, 2.6)
        n_cols = max(1, min(len(panels), int(fig.get_size_inches()[0] // 2.1)))  # as many a row as fit
        axes = fig.subplots(-(-len(panels) // n_cols), n_cols, squeeze=False).ravel()
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        for ax, (title, value) in zip(axes, panels, strict=False):
            for name, group in lines:
                rows = group.sort_values("p")
                y = pd.to_numeric(value(rows), errors="coerce").to_numpy(dtype=float)
                ax.plot(rows["p"].to_numpy(dtype=float), y, marker="o", markersize=2.5, label=name or None)
            ax.set_xlabel("revision probability p per word")
            ax.set_title(title)
            ax.grid(color="0.92")
        if len(lines) > 1:
            handles, names = axes[0].get_legend_handles_labels()
            heading = "rewrite window" if by == ["r"] else None
            fig.legend(handles, names, title=heading, loc="outside right upper", frameon=False)
        fig.suptitle("Streaming on ASR partial hypotheses: what revisions cost" + model_note(table), wrap=True)
        return finish(fig)


def plot_analysis_arms(table: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """Retrieved-gold share (%) and mean φ_suf by top-k, one bar per arm.

    An arm is each combination of the settings that vary besides k (grounding, retriever,
    chunking, …: :func:`~streamrag.sweep.figures.encoding.varied`), named in the legend.
    """
    ks = sorted(table["k"].unique())
    varying = [c for c in varied(table) if c != "k"] or ["grounding"]
    labels = table[varying].astype(str).agg(", ".join, axis=1)
    arms = list(dict.fromkeys(labels))
    width = 0.8 / max(len(arms), 1)
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN, 2.9)
        axes = fig.subplots(1, 2)
        for ax, column, ylabel, scale in (
            (axes[0], "share_retrieved_gold", "retrieved-gold questions (%)", 100.0),
            (axes[1], "phi_suf.mean", "mean φ_suf (retrieved-gold)", 1.0),
        ):
            values_by_k = pd.to_numeric(table[column]).groupby([labels, table["k"]]).mean()
            for i, arm in enumerate(arms):
                values = values_by_k.loc[arm].reindex(ks).to_numpy(dtype=float) * scale
                ax.bar(np.arange(len(ks)) + (i - (len(arms) - 1) / 2) * width, values, width, label=arm)
            ax.set_xticks(range(len(ks)), [f"k = {k}" for k in ks])
            ax.set_ylabel(ylabel)
            ax.grid(axis="y", color="0.92")
        axes[0].legend(title=", ".join(varying), loc="lower right", framealpha=0.95)
        fig.suptitle(f"Robustness arms: top-k × {' × '.join(varying)}")
        return finish(fig)
