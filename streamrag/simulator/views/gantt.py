"""The Gantt-like figure of one question's trace: a lane per thread, spans as bars,
instants as markers, the end of input as a dashed line, a legend below (matplotlib)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamrag.base.system.terminal import printable
from streamrag.simulator.views.traceview import headline, lane_order, spans_and_instants

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_SPAN_NAMES = {
    "G": "G query generation",
    "L": "L tool call",
    "F": "F response generation",
    "W": "W waiting",
    "R": "R ranking a word prefix",
}


def write_figure(events: list[dict[str, Any]], path: str | os.PathLike[str], *, dpi: float | None = None) -> Path:
    """:func:`plot_trace` written to ``path``; the format follows its extension (``.png``,
    ``.pdf``, ``.svg``), ``dpi`` applies to PNG."""
    from streamrag.base.figures import save_figure

    return save_figure(plot_trace(events), path, dpi=dpi)


def plot_trace(events: list[dict[str, Any]], *, ax: Axes | None = None) -> Figure:
    """A Gantt-like figure of one question, a lane per thread, with a legend below."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from streamrag.base.figures import PAGE_IN, axes_or_new, finish, legend_columns, paper_style

    spans, instants = spans_and_instants(events)
    lanes = lane_order(spans, instants)
    y = {lane: len(lanes) - 1 - i for i, lane in enumerate(lanes)}
    colors = {"G": "#9467bd", "L": "#17becf", "F": "#2ca02c", "W": "#dddddd", "R": "#1f77b4"}
    with paper_style():
        fig, ax = axes_or_new(ax, PAGE_IN, 0.32 * len(lanes) + 1.7)
        for s in spans:
            ax.broken_barh(
                [(s.start_us / 1000, (s.end_us - s.start_us) / 1000)],
                (y[s.lane] - 0.35, 0.7),
                facecolors=colors[s.name],
                alpha=0.45 if s.cancelled else 0.9,
                hatch="//" if s.cancelled else None,
                edgecolor="black",
                linewidth=0.4,
            )
            ax.text((s.start_us + s.end_us) / 2000, y[s.lane], s.name, ha="center", va="center", fontsize=6.5)
        markers = {
            "word": ("|", "grey"),
            "fire": (">", "black"),
            "cancel": ("x", "red"),
            "decision": ("*", "orange"),
            "skip": ("_", "red"),
            "check": (".", "black"),
            "answer_ready": ("D", "green"),
        }
        for i in instants:
            if i.name in markers:
                m, c = markers[i.name]
                ax.plot(i.t_us / 1000, y[i.lane], marker=m, color=c, markersize=5 if m != "|" else 8, linestyle="none")
        head = headline(events)
        ax.axvline(head["E_ms"], color="black", linestyle="--", linewidth=0.8)
        ax.set_yticks(range(len(lanes)), list(reversed(lanes)))
        ax.set_xlabel("virtual time since arrival (ms)")
        ax.set_title(
            f"{printable(events[0]['qid'])}: baseline {head['baseline_ms']:.0f} ms, streaming {head['streaming_ms']:.0f} ms, "
            f"saved {head['saved_ms']:.0f} ms",
            wrap=True,
        )
        ax.grid(axis="x", alpha=0.3)
        shown_spans = {s.name for s in spans}
        shown_marks = {i.name for i in instants if i.name in markers}
        handles: list[Any] = [
            Patch(facecolor=colors[n], edgecolor="black", linewidth=0.4, label=_SPAN_NAMES[n]) for n in colors if n in shown_spans
        ]
        if any(s.cancelled for s in spans):
            handles.append(Patch(facecolor="white", edgecolor="black", hatch="//", linewidth=0.4, label="cancelled"))
        handles += [
            Line2D([], [], marker=markers[n][0], color=markers[n][1], linestyle="none", label=n.replace("_", " "))
            for n in markers
            if n in shown_marks
        ]
        handles.append(Line2D([], [], color="black", linestyle="--", linewidth=0.8, label="E (end of input)"))
        fig.legend(
            handles=handles, loc="outside lower center", ncol=legend_columns(fig, len(handles), column_in=1.35), frameon=False
        )
        return finish(fig)
