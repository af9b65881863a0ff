"""One question's trace as spans and instants on lanes: what every view of it draws.

Derived from the events:

- spans: per call, ``G`` (thread_start → gen_done, or → cancel) and ``L`` (gen_done →
  tool_done, or → cancel); per arm, ``F`` (respond → answer_ready);
- instants: words, fires, skips, cancels, the reflector's start, checks and decision,
  answers; in live runs with an LLM as G, the generated queries and generation errors.

Lanes: ``input``, ``reflector``, ``call N`` (streaming arm), ``baseline``. The views built
from them live in :mod:`streamrag.simulator.views` (terminal timeline, Gantt figure,
Perfetto JSON); :mod:`streamrag.report.build` draws them in the run's page.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamrag.base.errors import InputError
from streamrag.engine.trace import read_trace


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
        from streamrag.simulator.views.untraced import skip_reason, untraced_reason

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
        elif k == "endpoint":
            eager = f"starts {e['start_us'] / 1000:g} ms, " if e["start_us"] != e["confirm_us"] else ""
            what = f"{eager}confirmed {e['confirm_us'] / 1000:g} ms after E; {len(e['cutoffs'])} false cut-off(s)"
            mark("input", "endpoint", f"end of turn {what}, {len(e['restarts'])} eager restart(s)")
            for name, breaks in (("cutoff", e["cutoffs"]), ("restart", e["restarts"])):
                for prefix_t, at_us, resume_us in breaks:
                    mark("input", name, f"{name} after word {prefix_t}; resumed at {resume_us / 1000:g} ms", t=at_us)
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
        elif k == "defer":  # a mutating call's tool stage waits for the confirmed turn
            lane = _lane(e)
            close(lane, "G", open_g.pop(lane))
            mark(lane, "defer", "tool stage held for the confirmed turn")
        elif k == "execute":
            open_l[_lane(e)] = (t, seq)
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
