"""The terminal view of one question's trace: its headline, a Gantt strip per lane and
the event table, printed with rich (``streamrag trace``, ``streamrag demo``)."""

from __future__ import annotations

from typing import Any

from streamrag.base.system.terminal import printable, stdout_console
from streamrag.simulator.views.traceview import headline, lane_order, spans_and_instants

_SPAN_STYLE = {"G": "magenta", "L": "cyan", "F": "green", "W": "yellow", "R": "blue"}
_SPAN_CHAR = {"G": "g", "L": "L", "F": "F", "W": ".", "R": "r"}
_MARKS = {"word": "|", "fire": ">", "cancel": "x", "decision": "*", "skip": "-", "input_end": "E"}
_LEGEND = "g = query generation  L = tool call  F = response  r = ranking  . queued  > fire  x cancel  * decision  E end of input"


def render_terminal(events: list[dict[str, Any]], *, console: Any = None, width: int = 64) -> None:
    """Print a Gantt strip per lane and the event table of one question (rich)."""
    from rich.table import Table
    from rich.text import Text

    console = console or stdout_console()
    spans, instants = spans_and_instants(events)
    head = headline(events)
    qid = printable(events[0]["qid"])
    console.print(
        Text.assemble(
            (f"{qid}", "bold"),
            f"  E = {head['E_ms']:.1f} ms   baseline {head['baseline_ms']:.1f} ms   streaming {head['streaming_ms']:.1f} ms   ",
            ("saved ", "bold"),
            (f"{head['saved_ms']:.1f} ms", "bold red" if head["saved_ms"] < 0 else "bold green"),
        )
    )
    end_us = max([s.end_us for s in spans] + [i.t_us for i in instants]) or 1
    scale = (width - 1) / end_us
    gantt = Table(show_header=False, box=None, pad_edge=False)
    gantt.add_column("lane", style="bold", no_wrap=True)
    gantt.add_column("timeline", no_wrap=True)
    for lane in lane_order(spans, instants):
        cells = [(" ", "")] * width
        for s in spans:
            if s.lane == lane:
                for x in range(round(s.start_us * scale), max(round(s.start_us * scale) + 1, round(s.end_us * scale))):
                    style = _SPAN_STYLE[s.name] + (" strike" if s.cancelled else "")
                    cells[min(x, width - 1)] = (_SPAN_CHAR[s.name], style)
        for i in instants:
            if i.lane == lane:
                mark = _MARKS.get(i.name)
                if mark:
                    cells[min(round(i.t_us * scale), width - 1)] = (mark, "bold yellow" if mark != "|" else "dim")
        gantt.add_row(lane, Text.assemble(*cells))
    gantt.add_row("", Text(f"0{'':{width - 12}}{end_us / 1000:>10.0f}ms", style="dim"))
    console.print(gantt)
    console.print(Text(_LEGEND, style="dim"))

    table = Table(title=None, show_lines=False)
    table.add_column("t (ms)", justify="right")
    table.add_column("lane")
    table.add_column("event")
    table.add_column("detail")
    rows = [(i.t_us, i.seq, i.lane, i.name, i.detail) for i in instants]
    for s in spans:
        took = f"{(s.end_us - s.start_us) / 1000:.1f} ms" + (" (cancelled)" if s.cancelled else "")
        rows.append((s.start_us, s.seq, s.lane, f"{s.name} start", took))
    for t, _, lane, name, detail in sorted(rows, key=lambda r: (r[0], r[1])):
        style = "red" if name in ("cancel", "skip") else ("bold" if name in ("decision", "answer_ready") else "")
        table.add_row(f"{t / 1000:.3f}", lane, name, detail, style=style)
    console.print(table)
