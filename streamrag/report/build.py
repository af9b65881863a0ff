"""``streamrag report``: one run folder → one self-contained HTML page (+ its Perfetto file).

The page (:mod:`streamrag.report.page`) holds the run's settings and provenance
(``manifest.json``, the summary's parameters), its summary tables, its figures as SVG,
the per-question (per-session, per-point) table, sortable and filterable, and — for runs
with a ``trace.jsonl`` — every question's timeline, mis-fires first, drawn in the browser
when opened from the spans and instants of :func:`streamrag.simulator.views.traceview.spans_and_instants`.
The whole run's Perfetto file is written beside the page and linked from it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from streamrag.base.version import __version__
from streamrag.report import page
from streamrag.report.sections import Run, read_report_run, summary_parts

__all__ = ["Report", "perfetto_path", "timeline_data", "write_report"]

_LEGEND = (
    '<p class="legend muted"><span style="background:#9467bd"></span>G query generation'
    '<span style="background:#17becf"></span>L tool call<span style="background:#2ca02c"></span>F response'
    '<span style="background:#cccccc"></span>W queued (load runs); dashed outline: cancelled. '
    "Marks: | word, ▶ fire, × cancel or skip, ● decision, ◆ answer ready, dashed line E: end of input; "
    "hover for details.</p>"
)
_OPEN_AT_LOAD = 5  # mis-fires whose timeline is drawn when the page opens (the rest on click)


@dataclass(frozen=True)
class Report:
    html: Path
    perfetto: Path | None
    n_rows: int
    n_timelines: int


def perfetto_path(html: Path) -> Path:
    """The whole run's Perfetto file beside the page: ``report.html`` → ``report.perfetto.json``."""
    return html.with_name(f"{html.stem}.perfetto.json")


def timeline_data(events: list[dict[str, Any]], title: str, words: list[str] | None) -> dict[str, Any]:
    """One question's timeline for the page: lanes, spans ``[lane, name, start_us, end_us,
    cancelled]``, marks ``[lane, name, t_us, detail]``, ``E`` (end of input, µs)."""
    from streamrag.simulator.views.traceview import lane_order, spans_and_instants

    spans, instants = spans_and_instants(events, words=words)
    lanes = lane_order(spans, instants)
    idx = {lane: i for i, lane in enumerate(lanes)}
    end = next((e["t_us"] for e in events if e["kind"] == "input_end"), None)
    return {
        "title": title,
        "lanes": lanes,
        "spans": [[idx[s.lane], s.name, s.start_us, s.end_us, int(s.cancelled)] for s in spans],
        "marks": [[idx[i.lane], i.name, i.t_us, i.detail] for i in instants],
        "E": end,
    }


class _Timelines(NamedTuple):
    ids: list[str]  # page order: mis-fires (failed sessions) first
    data: dict[str, Any]  # timeline_data by id, for the ids kept
    events: dict[str, list[dict[str, Any]]]  # every question's events
    n_bad: int
    note: str


def _timelines(run: Run, max_timelines: int | None) -> _Timelines:
    """The ids in page order, their timeline data and events, and a note on what was kept."""
    from streamrag.simulator.views.runtrace import process_name, run_events

    if not (run.path / "trace.jsonl").is_file():
        return _Timelines([], {}, {}, 0, "")
    events = run_events(run.path)
    col = {c: j for j, c in enumerate(run.columns)}
    by_id = {str(row[col[run.id_column]]): row for row in run.rows}

    def flag(row: list[Any], name: str) -> bool:
        return name in col and row[col[name]] is True

    def bad(qid: str) -> bool:
        row = by_id.get(qid)
        return row is not None and any(flag(row, c) for c in ("misfire", "streaming_failed", "baseline_failed"))

    ids = [q for q in events if bad(q)] + [q for q in events if not bad(q)]
    kept = ids if max_timelines is None else ids[:max_timelines]
    data = {}
    for qid in kept:
        row = by_id.get(qid)
        text = None
        facts = []
        if row is not None:
            iid = row[col["interaction_id"]] if "interaction_id" in col else qid
            text = run.texts.get(str(iid))
            if "saved_ms" in col and row[col["saved_ms"]] is not None:
                facts.append(f"saved {row[col['saved_ms']]:.0f} ms")
            facts += [name.replace("_", " ") for name in ("misfire", "streaming_failed", "baseline_failed") if flag(row, name)]
        title = " · ".join([process_name(qid, text), *facts])
        data[qid] = timeline_data(events[qid], title, None if text is None else text.split())
    n_bad = sum(bad(q) for q in ids)
    note = f"{len(kept)} of {len(ids)} timelines ({n_bad} mis-fire(s) or failure(s) first); click one to draw it."
    if len(kept) < len(ids):
        note += f" Capped at {len(kept)} (--max-timelines); the Perfetto file holds every question."
    return _Timelines(kept, data, {q: events[q] for q in ids}, n_bad, note)


def _settings(run: Run) -> str:
    parts = []
    if run.manifest is not None:
        parts.append("<h3>manifest.json</h3>" + page.key_value_table(list(page.flatten(run.manifest))))
    if run.summary is not None:
        _, _, provenance = summary_parts(run.summary)
        for key in provenance:
            parts.append(f"<h3>summary.json: {page.esc(key)}</h3>" + page.key_value_table(list(page.flatten(run.summary[key]))))
    return "".join(parts) or '<p class="muted">no manifest.json or parameters in this folder</p>'


def _summary(summary: Mapping[str, Any] | None, kind: str) -> str:
    if summary is None:
        if kind == "sweep":  # a sweep's summary is its table: one row of statistics per point
            note = "a sweep summarizes each point in its table (Per point: the .mean columns; sweep.csv has every statistic)"
            return f'<p class="muted">{note}</p>'
        return '<p class="muted">no summary.json in this folder</p>'
    metrics, scalars, _ = summary_parts(summary)
    return (page.key_value_table(scalars) if scalars else "") + (page.metric_table(metrics) if metrics else "")


def _outcomes(summary: Mapping[str, Any] | None) -> str | None:
    """How the run's speculative calls ended (``call_outcomes``, :mod:`streamrag.pipeline.outcomes`)
    and, for a mutating tool, its unsafe executions per 1,000 turns; None without them."""
    counts = None if summary is None else summary.get("call_outcomes")
    if not isinstance(counts, Mapping):
        return None
    total = sum(v for v in counts.values() if isinstance(v, int))
    rows = [(name, f"{n} ({n / total:.0%})" if total and isinstance(n, int) else n) for name, n in counts.items()]
    rows.append(("speculative calls", total))
    if summary is not None and summary.get("unsafe_per_1000_turns") is not None:
        rows.append(("unsafe executions per 1,000 turns", f"{summary['unsafe_per_1000_turns']:.1f}"))
    note = (
        '<p class="muted">Every speculative call ends in one outcome: used (its result was in at end of turn), used '
        "after waiting, superseded by a later prefix, revoked by a revision, expired at turn end, timed out, "
        "cancelled with its turn, failed.</p>"
    )
    return note + page.key_value_table(rows)


def _leaderboard(boards: list[Any]) -> str:
    """A frontier run's leaderboard (:func:`streamrag.sweep.frontier.leaderboard.boards`):
    per group, the null, ceiling and bound, then one row per policy."""
    from streamrag.sweep.frontier.leaderboard import BOARD_COLUMNS

    parts = [
        '<p class="muted">Operating points per policy (frontier/leaderboard.md), ranked by saved ms at ≤ 1 extra '
        "call per question; knob values in parentheses, 95% bootstrap CIs over questions in brackets; – : no point "
        "of the policy within the budget.</p>"
    ]
    for board in boards:
        if board.group:
            parts.append(f"<h3>{page.esc(', '.join(f'{k} = {v}' for k, v in board.group.items()))}</h3>")
        parts.append(
            f"<p>{board.n_questions} questions; offline optimum {board.optimum_saved_ms:.0f} ms saved per question "
            "with no extra call.</p>"
        )
        refs = "".join(
            f"<li><code>{page.esc(policy)}</code> ({page.esc(role)}): {page.esc(numbers)}</li>"
            for policy, role, numbers in board.references
        )
        parts.append(f"<ul>{refs}</ul>" if refs else "")
        head = "".join(f"<th>{page.esc(c)}</th>" for c in BOARD_COLUMNS)
        body = "".join(
            f"<tr><td>{row.rank}</td><td><code>{page.esc(row.policy)}</code>{' (bound)' if row.bound else ''}</td>"
            + "".join(f"<td>{page.esc(cell)}</td>" for cell in row.cells)
            + "</tr>"
            for row in board.rows
        )
        parts.append(f'<table class="metrics leaderboard"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')
    return "".join(parts)


def write_report(
    run_dir: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    max_timelines: int | None = None,
    figures: bool = True,
    texts: bool = True,
) -> Report:
    """Write the page of ``run_dir`` to ``out`` (default ``RUN_DIR/report.html``) and, for a
    run with a trace, the whole run's Perfetto file beside it; both atomically. ``texts``:
    look the question texts up in the run's CRAG input (one more read of that file)."""
    from streamrag.base.atomic import write_text_atomic
    from streamrag.simulator.views.runtrace import run_perfetto, write_run_perfetto

    run = read_report_run(run_dir, figures=figures, texts=texts)
    html_path = Path(out) if out is not None else run.path / "report.html"
    ids, timelines, events, n_bad, note = _timelines(run, max_timelines)
    perfetto = None
    if events:
        perfetto = perfetto_path(html_path)
        by_id: dict[str, str] = {}
        if "interaction_id" in run.columns:
            j, k = run.columns.index(run.id_column), run.columns.index("interaction_id")
            by_id = {str(r[j]): run.texts[str(r[k])] for r in run.rows if str(r[k]) in run.texts}
        html_path.parent.mkdir(parents=True, exist_ok=True)
        write_run_perfetto(run_perfetto(events, list(events), by_id), perfetto)

    body = [
        page.section("Settings and provenance", _settings(run), open_=False),
        page.section("Summary", _summary(run.summary, run.kind)),
    ]
    outcomes = _outcomes(run.summary)
    if outcomes is not None:
        body.append(page.section("Speculative call outcomes", outcomes))
    if run.boards:
        body.append(page.section("Leaderboard", _leaderboard(run.boards)))
    if run.figures:
        body.append(page.section("Figures", "".join(page.figure(c, b, m) for c, b, m in run.figures)))
    unit = {"load": "session", "sweep": "point"}.get(run.kind, "question")
    body.append(page.section(f"Per {unit}", page.rows_table(misfires="misfire" in run.columns)))
    if timelines:
        link = (
            f'<p><a href="{page.esc(perfetto.name)}" download>Perfetto trace of the whole run</a> (open in ui.perfetto.dev; one process per {unit})</p>'
            if perfetto
            else ""
        )
        body.append(page.section("Timelines", link + _LEGEND + '<div id="timelines"></div>'))
    data = {
        "table": {"columns": run.columns, "rows": run.rows, "id_column": run.id_column},
        "timelines": timelines,
        "timeline_order": ids,
        "timeline_note": note,
        "open_timelines": min(len(ids), max(1, min(_OPEN_AT_LOAD, n_bad))),
    }
    subtitle = f"{run.kind} run {run.path} · {len(run.rows)} {unit}s · streamrag {__version__}"
    document = page.page(f"streamrag report: {run.path.name}", subtitle, body, data)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(html_path, document)
    return Report(html_path, perfetto, len(run.rows), len(timelines))
