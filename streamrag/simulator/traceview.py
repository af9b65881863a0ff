"""Views of one question's trace: terminal timeline, PNG Gantt chart, Perfetto JSON.

All three are built from the same spans and instants, derived from the events:

- spans: per call, ``G`` (thread_start → gen_done, or → cancel) and ``L`` (gen_done →
  tool_done, or → cancel); per arm, ``F`` (respond → answer_ready);
- instants: words, fires, skips, cancels, the reflector's start, checks and decision,
  answers; in live runs with an LLM as G, the generated queries and generation errors.

Lanes: ``input``, ``reflector``, ``call N`` (streaming arm), ``baseline``.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamrag.base.errors import InputError
from streamrag.base.terminal import printable, stdout_console
from streamrag.engine.trace import read_trace
from streamrag.engine.trace_file import perfetto_file

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


@dataclass(frozen=True, slots=True)
class Span:
    lane: str
    name: str  # G, L, F
    start_us: int
    end_us: int
    cancelled: bool = False
    seq: int = 0  # index of the event that opened the span (ties at one instant)


@dataclass(frozen=True, slots=True)
class Instant:
    lane: str
    name: str
    t_us: int
    detail: str = ""
    seq: int = 0  # index of the event (ties at one instant)


def load_question(run_dir: str | os.PathLike[str], qid: str) -> list[dict[str, Any]]:
    """The events of question ``qid`` in ``RUN_DIR/trace.jsonl`` (as dicts)."""
    from streamrag.base.formats import check_run

    check_run(run_dir)  # the manifest versions the folder; read_trace checks the trace's header
    path = Path(run_dir) / "trace.jsonl"
    if not path.is_file():
        raise InputError(f"{run_dir}: no trace.jsonl (is it the --out folder of 'streamrag simulate'?)")
    # A load run's session holds both systems' events, each in time order: merge them.
    events = sorted((e.model_dump() for e in read_trace(path, qid)), key=lambda e: e["t_us"])
    if not events:
        from streamrag.simulator.untraced import skip_reason, untraced_reason

        reason = skip_reason(Path(run_dir) / "results.csv", qid)
        if reason:
            raise InputError(f"{path}: question {qid!r} was not replayed in this run ({reason})")
        untraced = untraced_reason(Path(run_dir), qid)
        if untraced:
            raise InputError(f"{path}: session {qid!r} is not in the trace: {untraced}")
        raise InputError(f"{path}: no question {qid!r} in this run")
    return events


def _lane(e: dict[str, Any]) -> str:
    return "baseline" if e.get("arm") == "baseline" else f"call {e['call']}"


def spans_and_instants(events: list[dict[str, Any]], *, words: Sequence[str] | None = None) -> tuple[list[Span], list[Instant]]:
    """The spans and instants of one question's events (see the module docstring);
    ``words``, the question's words when known, name each word marker (``word 3 'acme'``)."""
    spans: list[Span] = []
    instants: list[Instant] = []
    open_g: dict[str, tuple[int, int]] = {}
    open_l: dict[str, tuple[int, int]] = {}
    open_f: dict[str, tuple[int, int]] = {}
    open_rank: dict[int, tuple[int, int]] = {}
    # Shared resources (load runs): a stage that had to wait starts when served; its
    # wait is a span "W" on the call's lane, its service a span on the server's track.
    waiting: dict[tuple[str, str], tuple[int, int]] = {}
    serving: dict[tuple[str, str], tuple[str, int, int]] = {}

    for seq, e in enumerate(events):
        k, t = e["kind"], e["t_us"]

        def mark(lane: str, name: str, detail: str, t: int = t, seq: int = seq) -> None:
            instants.append(Instant(lane, name, t, detail, seq))

        def close(lane: str, name: str, opened: tuple[int, int], cancelled: bool = False, t: int = t) -> None:
            spans.append(Span(lane, name, opened[0], t, cancelled, opened[1]))

        if k == "session":
            mark("input", "session", f"session asks {e['question']}")
        elif k == "rank":  # a priced ranking of word prefix t (pipeline.ranking): its own lane
            open_rank[e["word"]] = (t, seq)
        elif k == "rank_done":
            close(f"ranking {e['word']}", "R", open_rank.pop(e["word"]), cancelled=e["outcome"] != "in")
        elif k in ("enqueue", "serve", "finish", "withdraw", "reject"):
            lane = _stage_lane(e)
            key = (lane, e["stage"])
            if k == "enqueue":
                waiting[key] = (t, seq)
                mark(lane, "enqueue", f"{e['stage']} waits for {e['resource']} ({e['queued']} waiting)")
            elif k == "serve":
                if key in waiting:
                    close(lane, "W", waiting.pop(key))
                    if e["stage"] == "L":
                        open_l[lane] = (t, seq)
                    elif e["stage"] == "F":
                        open_f[lane] = (t, seq)
                # the two systems of a load run have their own servers
                system = "baseline " if e["arm"] == "baseline" else ""
                serving[key] = (f"{system}{e['resource']} #{e['server']}", t, seq)
            elif k == "reject":
                mark(lane, "reject", f"{e['stage']} rejected: {e['resource']} queue full")
            else:
                if key in waiting:  # withdrawn while waiting
                    close(lane, "W", waiting.pop(key), cancelled=True)
                if key in serving:
                    server, start, s0 = serving.pop(key)
                    spans.append(Span(server, e["stage"], start, t, k == "withdraw", s0))
        elif k == "reaim":
            mark(_lane(e), "reaim", f"waiting call now for prefix {e['prefix_t']} (was {e['was']})")
        elif k == "failed":
            mark("baseline" if e["arm"] == "baseline" else "response", "failed", "a full queue rejected confirmed work")
        elif k == "word":
            n = e["word"]
            mark("input", "word", f"word {n} {words[n - 1]!r}" if words is not None and 0 < n <= len(words) else f"word {n}")
        elif k == "input_end":
            mark("input", "input_end", f"E: last of {e['n_words']} words")
        elif k == "fire":
            mark(_lane(e), "fire", f"prefix {e['prefix_t']} (by {e['by']})")
        elif k == "skip":
            mark("input", "skip", f"prefix {e['prefix_t']} skipped: {e['reason']}")
        elif k == "thread_start":
            open_g[_lane(e)] = (t, seq)
        elif k == "gen_query":
            mark(_lane(e), "gen_query", f"query {e['query']!r} ({e['elapsed_us'] / 1000:.1f} ms)")
        elif k == "gen_error":
            mark(_lane(e), "gen_error", e["error"])
        elif k == "gen_done":
            lane = _lane(e)
            close(lane, "G", open_g.pop(lane))
            open_l[lane] = (t, seq)  # moved to its serve if the tool call has to wait
        elif k == "tool_done":
            lane = _lane(e)
            close(lane, "L", open_l.pop(lane))
            top = "" if e.get("top") is None else f" top {list(e['top'])}"
            mark(lane, "tool_done", f"result of prefix {e['prefix_t']}{top}")
        elif k == "cancel":
            lane = _lane(e)
            if lane in open_g:
                close(lane, "G", open_g.pop(lane), cancelled=True)
            elif lane in open_l:
                close(lane, "L", open_l.pop(lane), cancelled=True)
            mark(lane, "cancel", e["reason"])
        elif k == "reflect":
            mark("reflector", "reflect", f"finished {list(e['finished'])}, in flight {list(e['in_flight'])}")
        elif k == "check":
            extra = "" if e.get("score") is None else f" (score {e['score']:.3g}, coverage {e['coverage']:.2f})"
            verdict = "sufficient" if e["sufficient"] else "insufficient"
            mark("reflector", "check", f"call {e['call']} prefix {e['prefix_t']}: {verdict}{extra}")
        elif k == "decision":
            what = "new call on the full query" if e["call"] is None else f"call {e['call']}"
            mark("reflector", "decision", f"{e['outcome']}: {what} (prefix {e['prefix_t']})")
        elif k == "respond":
            open_f["baseline" if e["arm"] == "baseline" else "response"] = (t, seq)  # or at its serve
        elif k == "answer_ready":
            lane = "baseline" if e["arm"] == "baseline" else "response"
            close(lane, "F", open_f.pop(lane))
            mark(lane, "answer_ready", f"{e['arm']} answer ready")
    return spans, instants


def _stage_lane(e: dict[str, Any]) -> str:
    """The lane of a resource event's stage: its call's, or the response's."""
    if e["stage"] == "F":
        return "baseline" if e["arm"] == "baseline" else "response"
    if e["stage"] == "R":
        return f"ranking {-e['call']}"
    return "baseline" if e["arm"] == "baseline" else f"call {e['call']}"


def lane_order(spans: list[Span], instants: list[Instant]) -> list[str]:
    seen = {s.lane for s in spans} | {i.lane for i in instants}
    calls = sorted((lane for lane in seen if lane.startswith("call ")), key=lambda s: int(s.split()[1]))
    rankings = sorted((lane for lane in seen if lane.startswith("ranking ")), key=lambda s: int(s.split()[1]))
    servers = sorted(lane for lane in seen if " #" in lane)
    order = ["input", *rankings, *calls, "reflector", "response", "baseline", *servers]
    return [lane for lane in order if lane in seen]


def headline(events: list[dict[str, Any]]) -> dict[str, float]:
    """Baseline, streaming and saved ms of one question, from its events (NaN for an arm
    that failed under load)."""
    e_us = next(e["t_us"] for e in events if e["kind"] == "input_end")
    ans = {e["arm"]: e["t_us"] for e in events if e["kind"] == "answer_ready"}
    nan = float("nan")
    baseline = (ans["baseline"] - e_us) / 1000 if "baseline" in ans else nan
    streaming = (ans["streaming"] - e_us) / 1000 if "streaming" in ans else nan
    return {"E_ms": e_us / 1000, "baseline_ms": baseline, "streaming_ms": streaming, "saved_ms": baseline - streaming}


# --- terminal ------------------------------------------------------------------------

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


# --- figure --------------------------------------------------------------------------


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


_PERFETTO_NAMES = {"G": "query generation", "L": "tool call", "F": "response", "W": "queued", "R": "ranking"}
_SPAN_NAMES = {
    "G": "G query generation",
    "L": "L tool call",
    "F": "F response generation",
    "W": "W waiting",
    "R": "R ranking a word prefix",
}


# --- Perfetto / Chrome trace-event JSON ----------------------------------------------


def perfetto_pid(qid: str) -> int:
    """A question's Perfetto process id: the same in every file (CRC-32 of its id, 1 to
    2^31 - 1), so files written apart merge into one trace without clashing processes."""
    return zlib.crc32(qid.encode("utf-8")) % (2**31 - 1) + 1


def perfetto(
    events: list[dict[str, Any]], *, pid: int | None = None, name: str | None = None, words: Sequence[str] | None = None
) -> dict[str, Any]:
    """Chrome/Perfetto trace-event JSON: ``X`` spans and ``i`` instants, ``ts`` in µs; one
    process (``pid``, default :func:`perfetto_pid`; named ``name``, default the id), one
    thread per lane; ``words`` as for :func:`spans_and_instants`; the format version in
    ``metadata`` (:func:`~streamrag.engine.trace_file.perfetto_file`)."""
    spans, instants = spans_and_instants(events, words=words)
    lanes = lane_order(spans, instants)
    tid = {lane: i + 1 for i, lane in enumerate(lanes)}
    qid = events[0]["qid"]
    pid = perfetto_pid(qid) if pid is None else pid
    out: list[dict[str, Any]] = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name or qid}}]
    out += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid[lane], "args": {"name": lane}} for lane in lanes]
    out += [
        {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid[lane], "args": {"sort_index": tid[lane]}}
        for lane in lanes
    ]
    for s in spans:
        out.append(
            {
                "name": _PERFETTO_NAMES[s.name],
                "cat": "queue" if s.name == "W" else "llm" if s.name in ("G", "F") else "tool",
                "ph": "X",
                "ts": s.start_us,
                "dur": s.end_us - s.start_us,
                "pid": pid,
                "tid": tid[s.lane],
                "args": {"cancelled": s.cancelled},
            }
        )
    for i in instants:
        out.append(
            {
                "name": i.name,
                "cat": "event",
                "ph": "i",
                "s": "t",
                "ts": i.t_us,
                "pid": pid,
                "tid": tid[i.lane],
                "args": {"detail": i.detail},
            }
        )
    return perfetto_file(out)


def write_perfetto(
    events: list[dict[str, Any]], path: str | os.PathLike[str], *, name: str | None = None, words: Sequence[str] | None = None
) -> Path:
    from streamrag.base.atomic import write_text_atomic

    write_text_atomic(path, json.dumps(perfetto(events, name=name, words=words), indent=1) + "\n")
    return Path(path)
