"""The frontier figure: mean saved ms versus extra calls per question, every policy over its knob.

One line per policy through its knob's points, each point labelled with its knob value;
one colour per policy *kind* (the trigger kind: ``interval_words`` and
``interval_seconds`` are both ``interval``), the policies of a kind told apart by marker
and line style, and the legend grouped by kind under a bold heading where a kind has
more than one policy. The envelope of the deployable points is a grey step, ``oracle`` a
bound (a star), the mean offline optimum a dotted line. The x axis is linear up to 0.1
extra call and logarithmic above, so the policies that fire about once (0.05 to 0.2 extra
calls) and the budgets that decide (0.25 to 2) are not crowded against zero. 3.4 in wide (one column of a two-column paper), one panel per group,
stacked; a figure made here grows with its legend, so no entry is cut off. Vector (PDF
or SVG, by the extension), same bytes for the same table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from streamrag.base.figures import agg_figure, finish
from streamrag.sweep.frontier.tables import groups

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["WIDTH_IN", "plot_frontier", "policy_kind"]

WIDTH_IN = 3.4
"""One column of a two-column paper (≤ 3.5 in)."""
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "<", ">", "h")
_LINES = ("-", "--", ":", "-.")
_PANEL_IN = 1.9
_LEGEND_ROW_IN = 0.13  # one legend row at 5.5 pt
_LINTHRESH = 0.1  # extra calls: linear below, logarithmic above


def policy_kind(trigger: str) -> str:
    """A policy's kind from its trigger's one-line name (``interval(words=3)`` → ``interval``;
    the name is :func:`streamrag.sweep.point_kinds._policy`'s ``kind(fields)``)."""
    return str(trigger).split("(", 1)[0]


def _knob(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return None
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def plot_frontier(points: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """The frontier figure (see the module docstring) of ``frontier.csv``'s rows, on
    ``fig`` or a new one :data:`WIDTH_IN` wide."""
    import matplotlib as mpl
    from matplotlib.lines import Line2D

    parts = groups(points)
    policies = list(dict.fromkeys(points["policy"]))
    first = points.drop_duplicates("policy").set_index("policy")
    kind_of = {p: policy_kind(first.loc[p, "trigger"]) for p in policies}
    kinds = list(dict.fromkeys(kind_of.values()))
    members = {k: [p for p in policies if kind_of[p] == k] for k in kinds}
    style = {}
    for i, kind in enumerate(kinds):
        for j, p in enumerate(members[kind]):
            style[p] = (f"C{i % 10}", _MARKERS[j % len(_MARKERS)], _LINES[j % len(_LINES)])
    owned = fig is None
    with mpl.rc_context(
        {"font.size": 7, "axes.titlesize": 7, "legend.fontsize": 5.5, "svg.hashsalt": "streamrag", "path.simplify": False}
    ):
        fig = agg_figure(WIDTH_IN, 0.5 + _PANEL_IN * len(parts)) if fig is None else fig
        axes = np.atleast_1d(fig.subplots(len(parts), 1, squeeze=False)[:, 0])
        top = max(1.0, float(np.nanmax(points["extra_calls.mean"].to_numpy(dtype=float), initial=0.0)))
        for ax, (group, part) in zip(axes, parts, strict=True):
            deployable = part[~part["bound"].astype(bool)]
            front = deployable[deployable["on_frontier"].astype(bool)].sort_values("extra_calls.mean")
            ax.plot(
                front["extra_calls.mean"],
                front["saved_ms.mean"],
                color="0.6",
                linewidth=2.2,
                alpha=0.5,
                drawstyle="steps-post",
                zorder=1,
                label="envelope",
            )
            for policy in policies:
                mine = part[part["policy"] == policy].sort_values("extra_calls.mean")
                if not len(mine):
                    continue
                colour, marker, line = style[policy]
                bound = bool(mine["bound"].iloc[0])
                x, y = mine["extra_calls.mean"].to_numpy(dtype=float), mine["saved_ms.mean"].to_numpy(dtype=float)
                ax.plot(
                    x,
                    y,
                    color=colour,
                    linewidth=0.8,
                    linestyle=line,
                    marker="*" if bound else marker,
                    markersize=6 if bound else 3.2,
                    markerfacecolor="none" if bound else colour,
                    zorder=2,
                    label=policy,
                    gid="policy",
                )
                for xi, yi, value in zip(x, y, mine["knob_value"], strict=True):
                    text = _knob(value)
                    if text is not None:
                        ax.annotate(text, (xi, yi), xytext=(2.5, 1.5), textcoords="offset points", fontsize=5.5, color=colour)
            optimum = float(part["optimum_saved_ms"].iloc[0])
            ax.axhline(optimum, color="black", linestyle=":", linewidth=0.8, zorder=1, label="offline optimum")
            ax.axhline(0, color="0.3", linewidth=0.4, zorder=0)
            ax.set_xscale("symlog", linthresh=_LINTHRESH, linscale=0.6)
            ticks = [t for t in (0, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64) if t <= top * 1.05]
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
            ax.set_xlim(-0.05, top * 1.15)
            ax.set_ylabel("mean saved (ms)")
            ax.grid(color="0.93", linewidth=0.4)
            if group:
                ax.set_title(", ".join(f"{k} = {v}" for k, v in group.items()))
        axes[-1].set_xlabel("extra tool calls per question (labels: knob values)")
        handles: list[Any] = []
        names: list[str] = []
        headings: list[int] = []
        by_label = {name: handle for ax in axes for handle, name in zip(*ax.get_legend_handles_labels(), strict=True)}
        for name in ("envelope", "offline optimum"):
            handles.append(by_label[name])
            names.append(name)
        for kind in kinds:
            if len(members[kind]) > 1 or members[kind][0] != kind:
                headings.append(len(names))
                handles.append(Line2D([], [], linestyle="none"))
                names.append(kind)
            for p in members[kind]:
                if p not in by_label:
                    continue
                knob = first.loc[p, "knob"]
                bound = bool(first.loc[p, "bound"])
                handles.append(by_label[p])
                names.append(p + (f" ({knob})" if isinstance(knob, str) and knob else "") + (" (bound)" if bound else ""))
        n_cols = 2
        if owned:
            fig.set_size_inches(WIDTH_IN, 0.5 + _PANEL_IN * len(parts) + _LEGEND_ROW_IN * -(-len(names) // n_cols))
        legend = fig.legend(
            handles, names, loc="outside lower center", ncol=n_cols, frameon=False, handlelength=2.2, columnspacing=1.0
        )
        for i in headings:
            legend.get_texts()[i].set_fontweight("bold")
        return finish(fig)
