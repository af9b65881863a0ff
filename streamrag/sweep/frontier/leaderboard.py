"""The frontier's reader-facing outputs: a short markdown leaderboard and a one-column figure.

Files: :func:`write_frontier` (the CSVs of :mod:`~streamrag.sweep.frontier.operating`, then these two).

- :func:`leaderboard` — per group, one line per policy, ranked by its saving at a budget of
  one extra call per question: saved ms at each budget of
  :data:`~streamrag.sweep.frontier.operating.BUDGETS` (knob value and 95% CI), its share of the
  offline optimum, and its mis-fire / net-negative rates at the savings of
  :data:`~streamrag.sweep.frontier.operating.SAVINGS`; the null, the ceiling and the optimum above.
- :func:`plot_frontier` — mean saved ms versus extra calls per question, one line per
  policy through its knob's points, the envelope of the deployable points as a step,
  ``oracle`` as a bound, the mean offline optimum as a dotted line: 3.4 in wide (one
  column of a two-column paper), vector (PDF or SVG, by the extension), same bytes for
  the same table.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from streamrag.base.figures import agg_figure, finish, save_figure
from streamrag.sweep.frontier.operating import BUDGETS, SAVINGS, Frontier
from streamrag.sweep.frontier.tables import FRONTIER_CSV, OPERATING_CSV, OPTIMUM_CSV

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

WIDTH_IN = 3.4
"""One column of a two-column paper (≤ 3.5 in)."""
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "<", ">", "h")


def _num(value: Any, fmt: str = "{:.0f}") -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "–"
    return fmt.format(value)


def _ci(row: Any, name: str, fmt: str = "{:.0f}") -> str:
    low, high = row.get(f"{name}.ci_low"), row.get(f"{name}.ci_high")
    if low is None or high is None or (isinstance(low, float) and np.isnan(low)):
        return ""
    return f" [{_num(low, fmt)}, {_num(high, fmt)}]"


def _knob(value: Any) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return f" ({value:g})" if isinstance(value, int | float) else f" ({value})"


def _groups(df: pd.DataFrame, skip: set[str]) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    cols = [c for c in df.columns if c not in skip]
    if not cols:
        return [({}, df)]
    return [
        (dict(zip(cols, key if isinstance(key, tuple) else (key,), strict=True)), part)
        for key, part in df.groupby(cols, sort=False, dropna=False)
    ]


def leaderboard(frontier: Frontier, *, title: str = "") -> str:
    """The markdown leaderboard (see the module docstring)."""
    points, ops = frontier.points, frontier.operating
    group_cols = [c for c in points.columns if c not in _POINT_COLUMNS and not c.startswith(_POINT_PREFIXES)]
    lines = [f"# Frontier{': ' + title if title else ''}", ""]
    lines.append(
        f"Operating points per policy; 95% bootstrap CIs over questions ({frontier.n_boot} resamples, seed "
        f"{frontier.seed}); extra calls = calls fired − 1 per question. Ranked by saved ms at ≤ 1 extra call."
    )
    for group, part in _groups(points, set(points.columns) - set(group_cols)):
        gops = ops
        for name, value in group.items():
            gops = gops[gops[name] == value]
        header = ", ".join(f"{k} = {v}" for k, v in group.items())
        first = part.iloc[0]
        lines += ["", f"## {header}" if header else "## All points", ""]
        lines.append(
            f"{int(first['n_questions'])} questions; offline optimum {first['optimum_saved_ms']:.0f} ms saved per "
            "question with no extra call (the best schedule of each question under the same rules and draws)."
        )
        for policy, what in (("none", "null"), ("every_word", "ceiling"), ("oracle", "bound, knows t*")):
            row = part[part["policy"] == policy]
            if len(row):
                r = row.iloc[0]
                lines.append(
                    f"- `{policy}` ({what}): saved {r['saved_ms.mean']:.0f} ms{_ci(r, 'saved_ms')}, "
                    f"{r['extra_calls.mean']:.2f} extra calls, mis-fire {100 * r['misfire.rate']:.1f}%, "
                    f"net-negative {100 * r['negative.rate']:.1f}%"
                )
        budget_cols = " | ".join(f"saved ms @ ≤ {b:g}" for b in BUDGETS)
        saving_cols = " | ".join(f"mis-fire / neg. @ ≥ {s:g} ms" for s in SAVINGS)
        lines += [
            "",
            f"| # | policy | {budget_cols} | % of optimum @ ≤ 1 | {saving_cols} |",
            "|" + "---|" * (3 + len(BUDGETS) + len(SAVINGS)),
        ]
        ranked = []
        for policy in dict.fromkeys(part["policy"]):
            mine = gops[gops["policy"] == policy]
            at1 = mine[(mine["at"] == "budget") & (mine["level"] == 1.0)]
            key = at1["saved_ms.mean"].iloc[0] if len(at1) and at1["saved_ms.mean"].notna().iloc[0] else -np.inf
            ranked.append((-key, policy, mine))
        ranked.sort(key=lambda x: (x[0], x[1]))
        for rank, (_, policy, mine) in enumerate(ranked, start=1):
            cells = []
            for b in BUDGETS:
                r = mine[(mine["at"] == "budget") & (mine["level"] == b)].iloc[0].to_dict()
                cells.append(_num(r["saved_ms.mean"]) + _knob(r["knob_value"]) + _ci(r, "saved_ms"))
            r1 = mine[(mine["at"] == "budget") & (mine["level"] == 1.0)].iloc[0].to_dict()
            cells.append(_num(r1["pct_of_optimal"], "{:.1f}"))
            for s in SAVINGS:
                r = mine[(mine["at"] == "saving") & (mine["level"] == s)].iloc[0].to_dict()
                if r["label"] is None or (isinstance(r["label"], float) and np.isnan(r["label"])):
                    cells.append("not reached")
                else:
                    cells.append(f"{100 * r['misfire.rate']:.1f}% / {100 * r['negative.rate']:.1f}%{_knob(r['knob_value'])}")
            shown = f"`{policy}` (bound)" if bool(part[part["policy"] == policy]["bound"].iloc[0]) else f"`{policy}`"
            lines.append(f"| {rank} | {shown} | " + " | ".join(cells) + " |")
    lines += ["", "Knob values in parentheses; – : no point of the policy within the budget.", ""]
    return "\n".join(lines)


_POINT_COLUMNS = {
    "policy",
    "knob",
    "knob_value",
    "label",
    "trigger",
    "n_questions",
    "optimum_saved_ms",
    "pct_of_optimal",
    "regret_ms",
    "bound",
    "on_frontier",
    "policy_frontier",
}
_POINT_PREFIXES = ("extra_calls.", "saved_ms.", "misfire.", "negative.", "pct_of_optimal.", "regret_ms.")


def plot_frontier(points: pd.DataFrame, *, fig: Figure | None = None) -> Figure:
    """The frontier figure (see the module docstring); one panel per group, stacked, on
    ``fig`` or a new one :data:`WIDTH_IN` wide."""
    import matplotlib as mpl

    group_cols = [c for c in points.columns if c not in _POINT_COLUMNS and not c.startswith(_POINT_PREFIXES)]
    groups = _groups(points, set(points.columns) - set(group_cols))
    with mpl.rc_context(
        {"font.size": 7, "axes.titlesize": 7, "legend.fontsize": 5.5, "svg.hashsalt": "streamrag", "path.simplify": False}
    ):
        fig = agg_figure(WIDTH_IN, 1.2 + 1.7 * len(groups)) if fig is None else fig
        axes = np.atleast_1d(fig.subplots(len(groups), 1, squeeze=False)[:, 0])
        policies = list(dict.fromkeys(points["policy"]))
        style = {p: (f"C{i % 10}", _MARKERS[i % len(_MARKERS)]) for i, p in enumerate(policies)}
        for ax, (group, part) in zip(axes, groups, strict=True):
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
                colour, marker = style[policy]
                bound = bool(mine["bound"].iloc[0])
                ax.plot(
                    mine["extra_calls.mean"],
                    mine["saved_ms.mean"],
                    color=colour,
                    linewidth=0.8,
                    marker="*" if bound else marker,
                    markersize=6 if bound else 3.2,
                    markerfacecolor="none" if bound else colour,
                    zorder=2,
                    label=f"{policy} (bound)" if bound else policy,
                )
            optimum = float(part["optimum_saved_ms"].iloc[0])
            ax.axhline(optimum, color="black", linestyle=":", linewidth=0.8, zorder=1, label="offline optimum")
            ax.axhline(0, color="0.3", linewidth=0.4, zorder=0)
            ax.set_ylabel("mean saved (ms)")
            ax.grid(color="0.93", linewidth=0.4)
            if group:
                ax.set_title(", ".join(f"{k} = {v}" for k, v in group.items()))
        axes[-1].set_xlabel("extra tool calls per question")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=3, frameon=False, handlelength=1.6, columnspacing=0.8)
        return finish(fig)


def _csv_bytes(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False, lineterminator="\n", float_format=lambda v: repr(float(v))).encode("utf-8")


def write_frontier(out_dir: str | os.PathLike[str], frontier: Frontier, *, title: str = "") -> list[Path]:
    """Write ``frontier.csv``, ``operating_points.csv``, ``optimum.csv``, ``leaderboard.md``
    and ``frontier.pdf`` / ``frontier.svg`` (only ``frontier.<format>`` with
    ``--figure-format``) into ``out_dir``, all together (an interrupt leaves the folder
    as it was)."""
    from streamrag.base import figures
    from streamrag.base.atomic import together, write_bytes_atomic

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    with together():
        for name, df in ((FRONTIER_CSV, frontier.points), (OPERATING_CSV, frontier.operating), (OPTIMUM_CSV, frontier.optima)):
            write_bytes_atomic(out / name, _csv_bytes(df))
            files.append(out / name)
        write_bytes_atomic(out / "leaderboard.md", leaderboard(frontier, title=title).encode("utf-8"))
        files.append(out / "leaderboard.md")
        for suffix in (figures.FORMAT,) if figures.FORMAT else ("pdf", "svg"):
            files.append(save_figure(plot_frontier(frontier.points), out / f"frontier.{suffix}"))
    return files
