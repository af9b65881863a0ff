"""Figures of a sweep, drawn from its table (and per-question results), saved as PNG.

- :func:`plot_streamable_heatmaps` — streamable fraction (%) over L × δ, one panel per θ;
- :func:`plot_saved_vs_bounds` — mean saved ms against mean H and mean H_G, per trigger;
- :func:`plot_pareto` — mean saved ms versus wasted calls per question across triggers,
  one panel per L at one cadence, the non-dominated points joined;
- :func:`plot_saved_vs_H_scatter` — per-question saved ms versus H (the anchor's RQ3
  figure), one panel per chosen point;
- :func:`plot_analysis_arms` — retrieved-gold share and mean φ_suf per analysis setting.

Like :mod:`streamrag.analysis.plots`, every figure gets its own Agg canvas (no pyplot
state) and is written atomically.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from streamrag.base.figures import agg_figure, save_figure
from streamrag.sweep.table import pareto_front, read_point_results

if TYPE_CHECKING:
    from streamrag.sweep.grid import Grid

__all__ = [
    "plot_analysis_arms",
    "plot_pareto",
    "plot_saved_vs_H_scatter",
    "plot_saved_vs_bounds",
    "plot_streamable_heatmaps",
    "reference_rows",
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


def plot_streamable_heatmaps(table: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Streamable fraction (%, ``H ≥ θ·L`` over all questions) as an L × δ heatmap per θ."""
    thetas = sorted(table["theta"].unique())
    Ls = sorted(table["L_ms"].unique())
    deltas = sorted(table["delta_wps"].unique())
    fig = agg_figure(3.2 * len(thetas) + 1.2, 0.5 * len(Ls) + 2.2)
    axes = np.atleast_1d(fig.subplots(1, len(thetas), sharey=True))
    image = None
    for ax, theta in zip(axes, thetas, strict=True):
        cells = table[table["theta"] == theta]
        grid = np.full((len(Ls), len(deltas)), np.nan)
        for _, c in cells.iterrows():
            grid[Ls.index(c["L_ms"]), deltas.index(c["delta_wps"])] = float(c["streamable_fraction"]) * 100.0
        image = ax.imshow(grid, origin="lower", cmap="viridis", vmin=0, vmax=100, aspect="auto")
        for i in range(len(Ls)):
            for j in range(len(deltas)):
                if not np.isnan(grid[i, j]):
                    ax.text(
                        j,
                        i,
                        f"{grid[i, j]:.1f}",
                        ha="center",
                        va="center",
                        fontsize=8,
                        color="white" if grid[i, j] < 55 else "black",
                    )
        ax.set_xticks(range(len(deltas)), [f"{d:g}" for d in deltas])
        ax.set_yticks(range(len(Ls)), [f"{L:g}" for L in Ls])
        ax.set_xlabel("cadence δ (words/s)")
        ax.set_title(f"θ = {theta:g}", fontsize=10)
    axes[0].set_ylabel("tool latency L (ms)")
    if image is not None:  # one panel per θ, so there is one when the table has rows
        fig.colorbar(image, ax=list(axes), label="streamable questions (%)", shrink=0.9)
    fig.suptitle("Streamable fraction: share of questions with H ≥ θ·L", fontsize=11)
    return save_figure(fig, path)


def plot_saved_vs_bounds(table: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Mean saved ms against the mean bounds H and H_G, one colour per trigger; each
    marker is a grid point. Points on the diagonal reach the bound."""
    fig = agg_figure(10.0, 4.4)
    axes = fig.subplots(1, 2, sharey=True)
    lo = min(0.0, float(pd.to_numeric(table["saved_ms.mean"]).min()))
    for ax, bound, label in ((axes[0], "H_ms.mean", "mean H (ms)"), (axes[1], "H_G_ms.mean", "mean H_G (ms)")):
        hi = float(np.nanmax(table[[bound, "saved_ms.mean"]].to_numpy(dtype=float)))
        ax.plot([lo, hi], [lo, hi], color="0.6", linestyle="--", linewidth=1, label="saved = bound")
        for trig in _triggers(table):
            rows = table[table["trigger"].astype(str) == trig] if trig else table
            ax.scatter(rows[bound], rows["saved_ms.mean"], s=22, alpha=0.85, label=trig or None)
        ax.axhline(0, color="0.3", linewidth=0.6)
        ax.set_xlabel(label)
        ax.grid(color="0.92")
    axes[0].set_ylabel("mean saved (ms)")
    axes[1].legend(title="trigger", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(
        "What each trigger saves against the hideable-latency bounds (each marker: one grid point)" + _model_note(table),
        fontsize=11,
    )
    return save_figure(fig, path)


_MARKERS = "osD^vP*Xh<>"


def plot_pareto(table: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Mean saved ms versus wasted calls per question across triggers: one panel per L
    (δ fixed closest to 3 w/s), the Pareto front (more saved, fewer wasted) joined. The
    ``oracle`` trigger is drawn as a reference bound (a star), not part of the front.
    Triggers that coincide (every 3 words = every 1 s at δ = 3) stay visible: each has
    its own marker, earlier ones larger."""
    rows = reference_rows(table, keep=("trigger", "L_ms"))
    Ls = sorted(rows["L_ms"].unique()) if "L_ms" in rows.columns else [None]
    fig = agg_figure(min(4.2 * len(Ls), 17.0) + 1.8, 4.2)
    axes = np.atleast_1d(fig.subplots(1, len(Ls), sharey=True))
    triggers = _triggers(table)
    style = {
        t: (f"C{i % 10}", _MARKERS[i % len(_MARKERS)], 90 - 55 * i / max(len(triggers) - 1, 1)) for i, t in enumerate(triggers)
    }
    for ax, L in zip(axes, Ls, strict=True):
        panel = rows if L is None else rows[rows["L_ms"] == L]
        oracle = panel["trigger_kind"] == "oracle" if "trigger_kind" in panel.columns else pd.Series(False, index=panel.index)
        on_front = pareto_front(panel[~oracle]).reindex(panel.index, fill_value=False)
        front = panel[on_front].sort_values("wasted_calls.mean")
        ax.plot(
            front["wasted_calls.mean"],
            front["saved_ms.mean"],
            color="0.5",
            linewidth=1,
            zorder=1,
            drawstyle="steps-post",
            label="Pareto front",
        )
        for idx, r in panel.iterrows():
            trig = str(r.get("trigger", ""))
            colour, marker, size = style.get(trig, ("C0", "o", 40))
            if oracle[idx]:
                marker, size, trig = "*", 160, f"{trig} (bound)"
            ax.scatter(
                r["wasted_calls.mean"],
                r["saved_ms.mean"],
                s=size,
                color=colour,
                marker=marker,
                edgecolor="black" if on_front[idx] else "none",
                linewidth=1.2,
                zorder=2,
                label=trig,
            )
        ax.axhline(0, color="0.3", linewidth=0.6)
        ax.set_xlabel("wasted calls per question")
        ax.set_title("" if L is None else f"L = {L:g} ms", fontsize=10)
        ax.grid(color="0.92")
    axes[0].set_ylabel("mean saved (ms)")
    handles, labels = axes[-1].get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    axes[-1].legend(unique.values(), unique.keys(), fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    delta = f", δ = {rows['delta_wps'].iloc[0]:g} w/s" if "delta_wps" in rows.columns and len(rows) else ""
    fig.suptitle(
        f"Latency saved versus wasted tool calls across triggers{delta} (outlined: on the Pareto front)" + _model_note(table),
        fontsize=11,
    )
    return save_figure(fig, path)


def _fmt(column: str, value: object) -> str:
    units = {"L_ms": ("L", " ms"), "delta_wps": ("δ", " w/s")}
    name, unit = units.get(column, (column, ""))
    shown = f"{value:g}" if isinstance(value, float) else str(value)
    return f"{name} = {shown}{unit}"


def _scatter_points(table: pd.DataFrame, max_panels: int) -> pd.DataFrame:
    rows = table if len(table) <= max_panels else reference_rows(table, keep=("L_ms",))
    return rows.head(max_panels)


def plot_saved_vs_H_scatter(
    run_dir: str | os.PathLike[str],
    table: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    keys: Sequence[str] | None = None,
    max_panels: int = 4,
) -> Path:
    """Per question, saved ms against H (ms), one panel per point — the anchor's RQ3
    figure. Points: ``keys``, else all when there are at most ``max_panels``, else one
    per L at the reference values of the other axes. Negative savings are red."""
    rows = table[table["key"].isin(keys)] if keys is not None else _scatter_points(table, max_panels)
    fig = agg_figure(4.0 * max(len(rows), 1) + 0.4, 4.0)
    axes = np.atleast_1d(fig.subplots(1, max(len(rows), 1), sharey=True))
    for ax, (_, point) in zip(axes, rows.iterrows(), strict=False):
        res = read_point_results(run_dir, point["key"])
        if "skip_reason" in res.columns:
            res = res[res["skip_reason"].isna()]  # questions the point did not replay
        h, saved = res["H_ms"].to_numpy(float), res["saved_ms"].to_numpy(float)
        neg = saved < 0
        # Word arrivals quantize H and saved (multiples of 1/δ), so many questions share a
        # spot: jitter both a little (seeded: the figure is reproducible).
        rng = np.random.default_rng(0)
        h = h + rng.uniform(-0.02, 0.02, h.size) * max(float(np.ptp(h)), 1.0)
        saved_j = saved + rng.uniform(-0.02, 0.02, saved.size) * max(float(np.ptp(saved)), 1.0)
        ax.scatter(h[~neg], saved_j[~neg], s=10, alpha=0.4, color="tab:blue", label="saved ≥ 0")
        ax.scatter(h[neg], saved_j[neg], s=14, alpha=0.9, color="tab:red", label=f"saved < 0 ({int(neg.sum())})")
        top = float(max(h.max(initial=0.0), 1.0))
        ax.plot([0, top], [0, top], color="0.5", linestyle="--", linewidth=1, label="saved = H")
        ax.axhline(0, color="0.3", linewidth=0.6)
        rho = point.get("spearman_H_saved.rho")
        rho_text = "ρ undefined" if rho is None or pd.isna(rho) else f"ρ = {rho:+.2f}"
        title = ", ".join(_fmt(c, point[c]) for c in ("trigger", "L_ms", "delta_wps") if c in point.index)
        ax.set_title(
            f"{title}\nmean saved {point['saved_ms.mean']:.0f} ms vs H {point['H_ms.mean']:.0f} ms, {rho_text}", fontsize=9
        )
        ax.set_xlabel("H (ms); both axes jittered")
        ax.grid(color="0.92")
    axes[0].set_ylabel("saved (ms)")
    axes[0].legend(fontsize=8, loc="upper left")
    fig.suptitle(
        "Per-question latency saved versus the hideable-latency bound H (one dot per question)" + _model_note(table), fontsize=11
    )
    return save_figure(fig, path)


def plot_analysis_arms(table: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Retrieved-gold share (%) and mean φ_suf by top-k, one bar per arm.

    An arm is each combination of the analysis settings that vary besides k (grounding,
    retriever, …); points that differ only in other settings are averaged.
    """
    fig = agg_figure(9.0, 3.8)
    axes = fig.subplots(1, 2)
    ks = sorted(table["k"].unique())
    varying = [c for c in _ARM_COLUMNS if c in table.columns and table[c].nunique() > 1] or ["grounding"]
    labels = table[varying].astype(str).agg(", ".join, axis=1)
    arms = list(dict.fromkeys(labels))
    width = 0.8 / max(len(arms), 1)
    for ax, column, label, scale in (
        (axes[0], "share_retrieved_gold", "retrieved-gold questions (%)", 100.0),
        (axes[1], "phi_suf.mean", "mean φ_suf (retrieved-gold)", 1.0),
    ):
        values_by_k = pd.to_numeric(table[column]).groupby([labels, table["k"]]).mean()
        for i, arm in enumerate(arms):
            values = values_by_k.loc[arm].reindex(ks).to_numpy(dtype=float) * scale
            ax.bar(np.arange(len(ks)) + (i - (len(arms) - 1) / 2) * width, values, width, label=arm)
        ax.set_xticks(range(len(ks)), [f"k = {k}" for k in ks])
        ax.set_ylabel(label)
        ax.grid(axis="y", color="0.92")
    axes[0].legend(title=", ".join(varying), fontsize=8, loc="lower right", framealpha=0.95)
    fig.suptitle(f"Robustness arms: top-k × {' × '.join(varying)}", fontsize=11)
    return save_figure(fig, path)


def _model_note(table: pd.DataFrame) -> str:
    """A second title line naming the reflector model(s) and rules the points ran."""
    if "reflector_model" not in table.columns:
        return ""
    models = sorted({str(m) for m in table["reflector_model"].dropna()})
    rules = sorted({str(r) for r in table["rules.preset"].dropna()}) if "rules.preset" in table.columns else []
    return f"\nreflector: {'; '.join(models)}" + (f"; rules: {', '.join(rules)}" if rules else "")


_ARM_COLUMNS = ("retriever", "grounding", "idf", "parser")


def plot_load(table: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Median and p90 answer latency against offered load, both systems, one panel per
    combination of the other varying settings (the mean over replications where the grid
    has a ``seed`` axis); the break-even load of the median paired difference marked, with
    its 95% interval over replications as a band (:mod:`streamrag.sweep.break_even`)."""
    from streamrag.sweep.break_even import REPLICATE, _group_columns, break_even_rows

    others = _group_columns(table)
    groups = list(table.groupby(others, sort=False, dropna=False)) if others else [((), table)]
    crossings = {
        tuple(r[c] for c in others): r
        for r in break_even_rows(table)
        if r["crossing"] == "median_saved" and r["axis"] == "nominal"
    }
    n_cols = min(3, len(groups))
    n_rows = -(-len(groups) // n_cols)
    fig = agg_figure(5.0 * n_cols + 1.4, 3.9 * n_rows + 0.6)
    grid_axes = np.atleast_2d(fig.subplots(n_rows, n_cols, sharey=False, squeeze=False))
    axes = grid_axes.ravel()
    for ax in axes[len(groups) :]:
        ax.set_visible(False)
    n_reps = table[REPLICATE].nunique() if REPLICATE in table.columns else 1
    for ax, (key, group) in zip(axes, groups, strict=False):
        columns = [f"{s}.answer_ms.{stat}" for s in ("streaming", "baseline") for stat in ("median", "p90")]
        numeric = group[["offered_load", *columns]].apply(pd.to_numeric, errors="coerce")
        rows = numeric.groupby("offered_load", sort=True).mean().reset_index()
        x = rows["offered_load"].to_numpy(dtype=float)
        for system, colour in (("streaming", "tab:blue"), ("baseline", "tab:orange")):
            for stat, style in (("median", "-"), ("p90", "--")):
                y = rows[f"{system}.answer_ms.{stat}"].to_numpy(dtype=float)
                ax.plot(
                    x, y, style, color=colour, marker="o", markersize=3, label=f"{system} {'p50' if stat == 'median' else stat}"
                )
        keys = key if isinstance(key, tuple) else (key,)
        found = crossings.get(tuple(keys) if others else ())
        if found is not None and found["mean"] is not None:
            be = found["mean"]
            ax.axvline(be, color="red", linewidth=1)
            if found["ci_low"] is not None:
                ax.axvspan(found["ci_low"], found["ci_high"], color="red", alpha=0.12, linewidth=0)
                note = f" break-even ρ = {be:.2f} [{found['ci_low']:.2f}, {found['ci_high']:.2f}]"
            else:
                note = f" break-even ρ = {be:.2f}"
            ax.text(be, ax.get_ylim()[1], note, color="red", fontsize=8, va="top")
        label = ", ".join(_fmt(c, v) for c, v in zip(others, keys, strict=False))
        ax.set_title(label or "all points", fontsize=9)
        ax.set_xlabel("offered tool load ρ = λ·E[L]/c (baseline)")
        ax.set_yscale("log")
        ax.grid(color="0.92")
    for ax in grid_axes[:, 0]:
        ax.set_ylabel("answer latency after the last word (ms)")
    axes[min(n_cols, len(groups)) - 1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    reps = f"; mean of {n_reps} replications, 95% band" if n_reps > 1 else ""
    fig.suptitle(
        "When does speculation stop paying? Answer latency under shared capacity" + reps + _model_note(table), fontsize=11
    )
    return save_figure(fig, path)


def plot_revisions(table: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Stabilization and saved time against the ASR revision probability p, one line per
    rewrite window r: t* in ms from speech start, mean saved, and the share of fired
    calls that carried a hypothesis a later one revised."""
    panels = (
        ("t* (ms from speech start)", lambda rows: rows["t_star.mean"] * 1000 / rows["delta_wps"]),
        ("mean saved (ms)", lambda rows: rows["saved_ms.mean"]),
        ("calls fired on a revised hypothesis (share)", lambda rows: rows["calls_on_revised_share"]),
    )
    fig = agg_figure(4.6 * len(panels) + 1.2, 3.8)
    axes = fig.subplots(1, len(panels))
    lines = list(table.groupby("r", sort=True)) if "r" in table.columns else [("", table)]
    for ax, (label, value) in zip(axes, panels, strict=True):
        for r, group in lines:
            rows = group.sort_values("p")
            y = pd.to_numeric(value(rows), errors="coerce").to_numpy(dtype=float)
            ax.plot(rows["p"].to_numpy(dtype=float), y, marker="o", markersize=3, label=f"r = {r}" if r != "" else None)
        ax.set_xlabel("revision probability p per word")
        ax.set_title(label, fontsize=9)
        ax.grid(color="0.92")
    if len(lines) > 1:
        axes[-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("Streaming on ASR partial hypotheses: what revisions cost" + _model_note(table), fontsize=11)
    return save_figure(fig, path)


def write_figures(out_dir: str | os.PathLike[str], table: pd.DataFrame, grid: Grid) -> list[Path]:
    """The figures that fit the grid's kind and axes, into ``out_dir/figures/``."""
    folder = Path(out_dir) / "figures"
    paths: list[Path] = []
    if table.empty:
        return paths
    if grid.kind == "streamable":
        paths.append(plot_streamable_heatmaps(table, folder / "streamable_heatmaps.png"))
    elif grid.kind == "simulate" and "calls_on_revised_share" in table.columns and "p" in table.columns:
        if table["p"].nunique() > 1:
            paths.append(plot_revisions(table, folder / "revisions.png"))
    elif grid.kind == "simulate" and "offered_load" in table.columns:
        if table["offered_load"].nunique() > 1:
            paths.append(plot_load(table, folder / "load.png"))
    elif grid.kind == "simulate":
        paths.append(plot_saved_vs_bounds(table, folder / "saved_vs_bounds.png"))
        if "trigger" in table.columns and table["trigger"].nunique() > 1:
            paths.append(plot_pareto(table, folder / "pareto.png"))
        paths.append(plot_saved_vs_H_scatter(out_dir, table, folder / "saved_vs_H_scatter.png"))
    elif grid.kind == "analyze" and "k" in table.columns:
        paths.append(plot_analysis_arms(table, folder / "analysis_arms.png"))
    return paths
