"""Load runs: many sessions sharing finite tool and LLM capacity on one virtual clock.

A scenario with ``[load]`` (:mod:`streamrag.simulator.workload`) replays a stream of
*sessions*, each asking one question of the population, through the same pipeline code
as a question replayed alone — but the stages now queue for the ``[resources]``
(:mod:`streamrag.engine.resources`), so one session's speculative calls delay the others'
work. The streaming arm and the baseline arm run as **two separate systems**, each on
its own resources, under the same arrivals and the same random draws per session (a
paired comparison); the ``[policy]`` decides whether speculative fires go ahead under
load (:mod:`streamrag.pipeline.policies`).

Outputs (``simulate`` writes them):

- ``sessions.csv`` — one row per session (:data:`SESSION_COLUMNS`): its question, arrival,
  answer latency in both systems and the paired ``saved_ms``, waits per resource, calls
  fired / used / rejected, whether it failed, whether it is counted (after warm-up);
- ``summary.json`` — per system the answer latency's ``mean, median, p90, p99, min,
  max``, failures, calls, waits, and per resource utilization, mean queue length and
  number in system, mean wait, Little's law (L = λ·W), the share of server time spent on
  results nobody used; the paired difference; the same sessions' saving on unlimited
  capacity (``reference``);
- ``trace.jsonl`` — every session's events (both systems, one ``qid`` per session, the
  resources' queue events included), written as sessions finish: memory stays flat.

Sessions arriving before ``load.warmup_s`` are simulated but not counted.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.base.errors import ConfigError
from streamrag.engine.clock import Clock, Priority
from streamrag.engine.loop import run_virtual
from streamrag.engine.resources import Resource, resource_report
from streamrag.engine.trace import Recorder, dump_events
from streamrag.pipeline.question import SimQuestion
from streamrag.pipeline.streaming import BaselineArm, QuestionPlan, StreamingArm
from streamrag.simulator.scenario import ResolvedScenario
from streamrag.simulator.workload import (
    ClosedArrivals,
    LoadConfig,
    PoissonArrivals,
    draw_questions,
    open_arrivals,
    session_id,
    think_times_us,
)

SYSTEMS = ("streaming", "baseline")

SESSION_COLUMNS_HEAD: tuple[str, ...] = (
    "session_id", "interaction_id", "arrival_s", "counted", "streaming_ms", "baseline_ms", "saved_ms",
    "streaming_failed", "baseline_failed", "calls_fired", "calls_used", "calls_rejected", "baseline_calls_rejected",
)  # fmt: skip
"""``sessions.csv`` starts with these columns, then ``{system}_wait_{resource}_ms`` per
system and resource (the time the session's jobs waited in that resource's queue), and
for closed-loop workloads ``baseline_arrival_s``."""


def _stats(values: np.ndarray) -> dict[str, float | None]:
    if values.size == 0:
        return dict.fromkeys(("mean", "median", "p90", "p99", "min", "max"))
    q = np.quantile(values, [0.5, 0.9, 0.99])
    return {
        "mean": float(values.mean()),
        "median": float(q[0]),
        "p90": float(q[1]),
        "p99": float(q[2]),
        "min": float(values.min()),
        "max": float(values.max()),
    }


@dataclass(slots=True)
class _Measures:
    """Per-session measurements of one system (arrays indexed by session)."""

    n: int
    question: np.ndarray = field(init=False)
    arrival_us: np.ndarray = field(init=False)
    answer_us: np.ndarray = field(init=False)
    """Answer ready − end of input, µs; −1: the session failed."""
    fired: np.ndarray = field(init=False)
    used: np.ndarray = field(init=False)
    rejected: np.ndarray = field(init=False)
    waits: dict[str, np.ndarray] = field(default_factory=dict)
    busy_us: dict[str, int] = field(default_factory=dict)
    wasted_us: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.question = np.full(self.n, -1, dtype=np.int32)
        self.arrival_us = np.full(self.n, -1, dtype=np.int64)
        self.answer_us = np.full(self.n, -1, dtype=np.int64)
        self.fired = np.zeros(self.n, dtype=np.int32)
        self.used = np.zeros(self.n, dtype=np.int32)
        self.rejected = np.zeros(self.n, dtype=np.int32)

    def add(self, i: int, question: int, arrival_us: int, input_end_us: int, events: list[dict[str, Any]]) -> None:
        self.question[i] = question
        self.arrival_us[i] = arrival_us
        fired = rejected = 0
        answer = -1
        used_call = None
        opened: dict[tuple[str, int, str], int] = {}
        queued: dict[tuple[str, int, str], int] = {}
        spans: list[tuple[str, int, int]] = []  # (resource, call, µs of service)
        for e in events:
            kind = e["kind"]
            if kind == "fire":
                fired += 1
            elif kind == "cancel" and e["reason"] == "unstarted":
                fired -= 1
            elif kind == "reject":
                rejected += 1
            elif kind == "respond":
                used_call = e["call"]
            elif kind == "answer_ready":
                answer = e["t_us"] - input_end_us
            elif kind == "enqueue":
                queued[(e["resource"], e["call"], e["stage"])] = e["t_us"]
            elif kind == "serve":
                key = (e["resource"], e["call"], e["stage"])
                since = queued.pop(key, None)
                if since is not None:
                    self._wait(e["resource"], i, e["t_us"] - since)
                opened[key] = e["t_us"]
            elif kind in ("finish", "withdraw"):
                key = (e["resource"], e["call"], e["stage"])
                start = opened.pop(key, None)
                if start is not None:
                    spans.append((e["resource"], e["call"], e["t_us"] - start))
                elif kind == "withdraw":  # withdrawn while waiting
                    since = queued.pop(key, None)
                    if since is not None:
                        self._wait(e["resource"], i, e["t_us"] - since)
        self.answer_us[i] = answer
        self.fired[i] = fired
        self.used[i] = 1 if answer >= 0 else 0
        self.rejected[i] = rejected
        for resource, call, us in spans:
            self.busy_us[resource] = self.busy_us.get(resource, 0) + us
            if call != 0 and call != used_call:  # F jobs are call 0: always used
                self.wasted_us[resource] = self.wasted_us.get(resource, 0) + us

    def _wait(self, resource: str, i: int, us: int) -> None:
        column = self.waits.get(resource)
        if column is None:
            column = self.waits[resource] = np.zeros(self.n, dtype=np.int64)
        column[i] += us


class _TraceSink:
    """Each finished session's events, appended to a temporary file with its offset."""

    def __init__(self, path: Path, n: int) -> None:
        self.path = path
        self.fh = open(path, "wb")  # noqa: SIM115 - closed in close(), after the run
        self.offsets = np.full((n, 2), -1, dtype=np.int64)

    def add(self, i: int, events: list[dict[str, Any]]) -> None:
        blob = dump_events(events)
        self.offsets[i] = (self.fh.tell(), len(blob))
        self.fh.write(blob)

    def close(self) -> None:
        self.fh.close()


@dataclass(slots=True)
class SystemRun:
    """One system's run: its measures, resource reports and replayed span."""

    measures: _Measures
    resources: dict[str, dict[str, Any] | None]
    end_us: int
    n_events: int


def _distinct(services: Any) -> dict[str, Resource]:
    out: dict[str, Resource] = {}
    for resource in (services.query_llm, services.tool, services.response_llm):
        out.setdefault(resource.name, resource)
    return out


def _run_systems(
    questions: Sequence[SimQuestion],
    rs: ResolvedScenario,
    load: LoadConfig,
    n: int,
    sinks: dict[str, _TraceSink],
    on_session: Callable[[], None] | None,
) -> dict[str, SystemRun]:
    """Both systems on one virtual clock, each with its own resources.

    Open loop: at each arrival the session's plan is drawn once and both arms start —
    the baseline arm runs on callbacks alone, the streaming arm in a task. Closed loop:
    each system has its own users (their next arrival depends on that system's answers).
    """
    from streamrag.simulator.simulate import plan_question

    sc = rs.scenario
    asked = draw_questions(sc.seed, n, len(questions))
    measures = {system: _Measures(n) for system in SYSTEMS}
    last_us = dict.fromkeys(SYSTEMS, 0)
    counter = {"events": 0}

    async def main(clock: Clock) -> dict[str, SystemRun]:
        import anyio

        services = {system: sc.resources.build(clock) for system in SYSTEMS}
        policy = sc.policy.build()
        pending = {"baseline": 0}
        drained = anyio.Event()  # every baseline arm (callbacks, no task) has finished

        def done(system: str, i: int, at: int, plan: QuestionPlan, rec: Recorder) -> None:
            if system == "baseline":
                pending["baseline"] -= 1
                if pending["baseline"] == 0:
                    drained.set()
            measures[system].add(i, int(asked[i]), at, plan.input_end_us, rec.events)
            counter["events"] += len(rec.events)
            last_us[system] = clock.now_us()
            sink = sinks.get(system)
            if sink is not None:
                sink.add(i, rec.events)
            if on_session is not None:
                on_session()

        def start_baseline(i: int, q: SimQuestion, plan: QuestionPlan, at: int) -> BaselineArm:
            pending["baseline"] += 1
            rec = Recorder(session_id(i), clock, at)
            return BaselineArm(clock, rec, plan, services["baseline"], on_done=lambda: done("baseline", i, at, plan, rec))

        async def streaming(i: int, q: SimQuestion, plan: QuestionPlan, at: int) -> None:
            rec = Recorder(session_id(i), clock, at)
            rec.emit("session", question=q.interaction_id, arrival_us=at)
            arm = StreamingArm(
                clock, rec, plan, sc.trigger.build(q), sc.reflector.build(q), rs.arm_rules, services["streaming"], policy
            )
            await arm.run()
            done("streaming", i, at, plan, rec)

        async with anyio.create_task_group() as tg:
            arrivals = load.arrivals
            if isinstance(arrivals, ClosedArrivals):
                thinks = think_times_us(sc.seed, n, arrivals.think_s)

                async def user(system: str, u: int) -> None:
                    for i in range(u, n, arrivals.users):
                        await clock.sleep_us(int(thinks[i]), Priority.INPUT)
                        q = questions[int(asked[i])]
                        at = clock.now_us()
                        plan = plan_question(q, rs, stream_id=session_id(i))
                        if system == "streaming":
                            await streaming(i, q, plan, at)
                        else:
                            await start_baseline(i, q, plan, at).finished.wait()

                for system in SYSTEMS:
                    for u in range(min(arrivals.users, n)):
                        tg.start_soon(user, system, u)
            else:
                rate = arrivals.rate(tool_servers(rs), rs.stages.L.mean_ms) if isinstance(arrivals, PoissonArrivals) else 0.0
                for i, at in enumerate(open_arrivals(arrivals, sc.seed, rate)):
                    await clock.sleep_until_us(at, Priority.INPUT)
                    q = questions[int(asked[i])]
                    plan = plan_question(q, rs, stream_id=session_id(i))
                    start_baseline(i, q, plan, at)
                    tg.start_soon(streaming, i, q, plan, at)
        if pending["baseline"]:
            await drained.wait()
        return {
            system: SystemRun(
                measures[system],
                {name: resource_report(res, last_us[system]) for name, res in _distinct(services[system]).items()},
                last_us[system],
                counter["events"] if system == "streaming" else 0,
            )
            for system in SYSTEMS
        }

    return run_virtual(main)


def tool_servers(rs: ResolvedScenario) -> int | None:
    """Servers of the tool backend (None: unlimited)."""
    tool = rs.scenario.resources.tool
    return getattr(tool, "servers", None) or getattr(tool, "max_batch", None)


def n_sessions(load: LoadConfig) -> int:
    """How many sessions the workload holds."""
    from streamrag.simulator.workload import FileArrivals, read_arrival_file

    arrivals = load.arrivals
    if isinstance(arrivals, FileArrivals):
        return len(read_arrival_file(arrivals.path))
    return arrivals.n_sessions


@dataclass(slots=True)
class LoadRun:
    """Both systems' runs and the unlimited-capacity reference."""

    rs: ResolvedScenario
    questions: Sequence[SimQuestion]
    systems: dict[str, SystemRun]
    reference_saved_us: np.ndarray
    """Saved (µs) of the first ``reference_sessions`` sessions on unlimited capacity."""
    reflector_model: str
    traces: dict[str, _TraceSink] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.systems["streaming"].measures.n

    @property
    def n_events(self) -> int:
        return sum(s.n_events for s in self.systems.values())

    @property
    def virtual_us(self) -> int:
        """Replayed time: the span of the longer system."""
        return max(s.end_us for s in self.systems.values())


def _reference(questions: Sequence[SimQuestion], rs: ResolvedScenario, n: int) -> np.ndarray:
    """Saved (µs) of sessions 0..n−1 replayed alone on unlimited capacity (same draws)."""
    from streamrag.pipeline.streaming import simulate_question
    from streamrag.simulator.simulate import plan_question

    sc = rs.scenario
    out = np.zeros(n, dtype=np.int64)

    asked = draw_questions(sc.seed, n, len(questions))

    async def main(clock: Clock) -> None:
        for i in range(n):
            q = questions[int(asked[i])]
            plan = plan_question(q, rs, stream_id=session_id(i))
            rec = Recorder(session_id(i), clock, clock.now_us())
            await simulate_question(clock, plan, sc.trigger.build(q), sc.reflector.build(q), rs.arm_rules, rec)
            ends = {e["arm"]: e["t_us"] for e in rec.events if e["kind"] == "answer_ready"}
            out[i] = ends["baseline"] - ends["streaming"]

    run_virtual(main)
    return out


def run_load(
    questions: Sequence[SimQuestion],
    rs: ResolvedScenario,
    *,
    trace_dir: str | os.PathLike[str] | None = None,
    reflector_model: str = "",
    on_session: Callable[[], None] | None = None,
) -> LoadRun:
    """Run the scenario's ``[load]`` over ``questions`` (the selected population).

    ``trace_dir``: where the systems' traces are spooled while they run (None: no trace).
    ``on_session()`` is called as each session finishes (2 per session: one per system).
    """
    load = rs.scenario.load
    if load is None:
        raise ConfigError("run_load: the scenario has no [load] section")
    if not questions:
        raise ConfigError("load: no question to draw sessions from")
    n = n_sessions(load)
    sinks: dict[str, _TraceSink] = {}
    if trace_dir is not None:
        sinks = {system: _TraceSink(Path(trace_dir) / f".trace-{system}.tmp", n) for system in SYSTEMS}
    try:
        systems = _run_systems(questions, rs, load, n, sinks, on_session)
    finally:
        for sink in sinks.values():
            sink.close()
    reference = _reference(questions, rs, min(n, load.reference_sessions))
    return LoadRun(rs, questions, systems, reference, reflector_model, sinks)


# --------------------------------------------------------------------------- outputs


def _counted(run: LoadRun) -> np.ndarray:
    load = run.rs.scenario.load
    warmup = round((load.warmup_s if load else 0.0) * 1e6)
    return run.systems["streaming"].measures.arrival_us >= warmup


def load_summary(run: LoadRun, parameters: dict[str, Any]) -> dict[str, Any]:
    """``summary.json`` of a load run (see the module docstring; names follow the rule of
    :mod:`streamrag.simulator.results`: ``COLUMN.STAT``), led by the reflector model and
    the pipeline rules that ran."""
    counted = _counted(run)
    s, b = run.systems["streaming"].measures, run.systems["baseline"].measures
    ok_s, ok_b = s.answer_us >= 0, b.answer_us >= 0
    both = counted & ok_s & ok_b
    saved = (b.answer_us - s.answer_us)[both] / 1000
    out: dict[str, Any] = {
        "reflector_model": run.reflector_model,
        "rules": run.rs.rules(),
        "mode": "load",
        "sessions": {"n": run.n, "counted": int(counted.sum())},
    }
    for system, m in (("streaming", s), ("baseline", b)):
        ok = m.answer_us >= 0
        sel = counted & ok
        res = run.systems[system].resources
        busy = sum(m.busy_us.values())
        out[system] = {
            "answer_ms": _stats(m.answer_us[sel] / 1000),
            "failed": {"n": int((counted & ~ok).sum()), "rate": float((counted & ~ok).mean()) if counted.any() else None},
            "calls_fired": {"mean": float(m.fired[counted].mean()) if counted.any() else None},
            "calls_rejected": {"mean": float(m.rejected[counted].mean()) if counted.any() else None},
            "wait_ms": {name: _stats(col[counted] / 1000) for name, col in sorted(m.waits.items())},
            "resources": res,
            "wasted_share": {
                name: (m.wasted_us.get(name, 0) + 1e6 * (rep or {}).get("detached_busy_s", 0.0))
                / max(1.0, m.busy_us.get(name, 0) + 1e6 * (rep or {}).get("detached_busy_s", 0.0))
                for name, rep in sorted(res.items())
                if rep is not None
            },
            "busy_s": busy / 1e6,
        }
    out["saved_ms"] = _stats(saved)
    out["answer_ms_difference"] = {
        stat: (None if out["streaming"]["answer_ms"][stat] is None or out["baseline"]["answer_ms"][stat] is None
               else out["baseline"]["answer_ms"][stat] - out["streaming"]["answer_ms"][stat])
        for stat in ("mean", "median", "p90", "p99")
    }  # fmt: skip
    ref_n = run.reference_saved_us.size
    loaded = (b.answer_us[:ref_n] - s.answer_us[:ref_n]) / 1000
    ok_ref = (s.answer_us[:ref_n] >= 0) & (b.answer_us[:ref_n] >= 0)
    out["reference"] = {
        "n": int(ok_ref.sum()),
        "note": "the first sessions replayed alone on unlimited capacity with the same draws",
        "unlimited_saved_ms": _stats(run.reference_saved_us[ok_ref] / 1000),
        "loaded_saved_ms": _stats(loaded[ok_ref]),
    }
    out["parameters"] = parameters
    return out


def session_columns(run: LoadRun) -> list[str]:
    waits = [f"{system}_wait_{name}_ms" for system in SYSTEMS for name in sorted(run.systems[system].measures.waits)]
    closed = isinstance(run.rs.scenario.load.arrivals, ClosedArrivals)  # type: ignore[union-attr]
    return [*SESSION_COLUMNS_HEAD, *waits, *(["baseline_arrival_s"] if closed else [])]


def write_sessions_csv(run: LoadRun, path: str | os.PathLike[str]) -> Path:
    """``sessions.csv``, one row per session, streamed to disk (atomically)."""
    from streamrag.base.atomic import atomic_path

    s, b = run.systems["streaming"].measures, run.systems["baseline"].measures
    counted = _counted(run)
    columns = session_columns(run)
    out = Path(path)

    def ms(us: int) -> str:
        return "" if us < 0 else repr(us / 1000)

    with atomic_path(out) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        for i in range(run.n):
            row: dict[str, Any] = {
                "session_id": session_id(i),
                "interaction_id": run.questions[int(s.question[i])].interaction_id,
                "arrival_s": repr(int(s.arrival_us[i]) / 1e6),
                "counted": "True" if counted[i] else "False",
                "streaming_ms": ms(int(s.answer_us[i])),
                "baseline_ms": ms(int(b.answer_us[i])),
                "saved_ms": ms(int(b.answer_us[i] - s.answer_us[i])) if s.answer_us[i] >= 0 and b.answer_us[i] >= 0 else "",
                "streaming_failed": "True" if s.answer_us[i] < 0 else "False",
                "baseline_failed": "True" if b.answer_us[i] < 0 else "False",
                "calls_fired": int(s.fired[i]),
                "calls_used": int(s.used[i]),
                "calls_rejected": int(s.rejected[i]),
                "baseline_calls_rejected": int(b.rejected[i]),
                "baseline_arrival_s": repr(int(b.arrival_us[i]) / 1e6),
            }
            for system, m in (("streaming", s), ("baseline", b)):
                for name, col in m.waits.items():
                    row[f"{system}_wait_{name}_ms"] = repr(int(col[i]) / 1000)
            writer.writerow([row.get(c, "") for c in columns])
    return out


def write_load_trace(run: LoadRun, path: str | os.PathLike[str]) -> Path | None:
    """Merge the systems' spooled traces into ``trace.jsonl``, session by session."""
    from streamrag.base.atomic import atomic_path

    if not run.traces:
        return None
    out = Path(path)
    handles = {system: open(sink.path, "rb") for system, sink in run.traces.items()}  # noqa: SIM115
    try:
        with atomic_path(out) as tmp, open(tmp, "wb") as fh:
            for i in range(run.n):
                for system in SYSTEMS:
                    start, size = run.traces[system].offsets[i]
                    if size > 0:
                        src = handles[system]
                        src.seek(int(start))
                        fh.write(src.read(int(size)))
    finally:
        for h in handles.values():
            h.close()
        for sink in run.traces.values():
            sink.path.unlink(missing_ok=True)
    return out


def summary_bytes(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, allow_nan=False) + "\n").encode("utf-8")


def write_load_run(out_dir: str | os.PathLike[str], run: LoadRun, *, parameters: dict[str, Any], manifest: bytes) -> Path:
    """Write ``sessions.csv``, ``summary.json``, ``trace.jsonl`` (when traced) and
    ``manifest.json`` (last) into ``out_dir``, each atomically."""
    from streamrag.base.atomic import write_bytes_atomic

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_load_trace(run, out / "trace.jsonl")
    write_sessions_csv(run, out / "sessions.csv")
    write_bytes_atomic(out / "summary.json", summary_bytes(load_summary(run, parameters)))
    write_bytes_atomic(out / "manifest.json", manifest)
    return out
