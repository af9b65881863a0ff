"""G, L and F durations read straight from trace events, written independently of the span
builder (streamrag/speculate/telemetry.py) so that a span export read back by calibrate
can be compared with the trace it came from.

Per (question, arm, call): G = ``thread_start`` → ``gen_done`` (or ``defer``); L =
``gen_done`` (or ``execute``) → ``tool_done``; per (question, arm): F = ``respond`` →
``answer_ready``. A stage that did not reach its end event (cancelled, failed) is left out.
Durations in ms, as calibrate's CSV takes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def stage_durations_ms(events: Iterable[dict[str, Any]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"G": [], "L": [], "F": []}
    g_start: dict[tuple, int] = {}
    l_start: dict[tuple, int] = {}
    f_start: dict[tuple, int] = {}
    for e in events:
        arm = e.get("arm", "streaming")
        kind, t = e["kind"], e["t_us"]
        key = (e["qid"], arm, e.get("call"))
        if kind == "thread_start":
            g_start[key] = t
        elif kind in ("gen_done", "defer") and key in g_start:
            out["G"].append((t - g_start.pop(key)) / 1000)
            if kind == "gen_done":
                l_start[key] = t
        elif kind == "execute":
            l_start[key] = t
        elif kind == "tool_done" and key in l_start:
            out["L"].append((t - l_start.pop(key)) / 1000)
        elif kind == "respond":
            f_start[(e["qid"], arm)] = t
        elif kind == "answer_ready" and (e["qid"], arm) in f_start:
            out["F"].append((t - f_start.pop((e["qid"], arm))) / 1000)
    return out


def durations_csv(durations: dict[str, list[float]]) -> str:
    """``stage,duration_ms`` rows (0 ms durations dropped: calibrate refuses them, as a
    span of 0 µs is refused)."""
    rows = ["stage,duration_ms"]
    rows += [f"{stage},{ms!r}" for stage, values in durations.items() for ms in values if ms > 0]
    return "\n".join(rows) + "\n"
