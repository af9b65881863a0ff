"""Load runs: many sessions sharing finite tool and LLM capacity on one virtual clock.

A scenario with ``[load]`` (:mod:`streamrag.simulator.load.workload`) replays a stream of
*sessions*, each asking one question of the population, through the same pipeline code
as a question replayed alone — but the stages now queue for the ``[resources]``
(:mod:`streamrag.engine.resources`), so one session's speculative calls delay the others'
work. The streaming arm and the baseline arm run as **two separate systems**, each on
its own resources, under the same arrivals and the same random draws per session (a
paired comparison); the ``[policy]`` decides whether speculative fires go ahead under
load (:mod:`streamrag.pipeline.policies`).

Outputs (``simulate`` writes them):

- ``sessions.csv`` — one row per session (``load_output.SESSION_COLUMNS_HEAD``): its question, arrival,
  answer latency in both systems and the paired ``saved_ms``, waits per resource, calls
  fired / used / rejected, whether it failed, whether it is counted (after warm-up);
- ``summary.json`` — per system the answer latency's ``mean, median, p90, p99, min,
  max``, failures, calls, waits, and per resource utilization, mean queue length and
  number in system, mean wait, Little's law (L = λ·W), the share of server time spent on
  results nobody used; the paired difference; the same sessions' saving on unlimited
  capacity (``reference``);
- ``trace.jsonl`` — the traced sessions' events, every one of each (both systems, one
  ``qid`` per session, the resources' queue events included): all sessions of a run of up
  to ``load.trace_sessions`` (default 10,000), else every k-th, so the trace stays bounded
  (:meth:`~streamrag.simulator.load.workload.LoadConfig.trace_every`).

Memory stays flat in the number of sessions: each finished session's measures and events
go to temporary files at once (:mod:`~streamrag.simulator.load.measures`), removed when the
outputs are written or the run fails or is interrupted. What a run may ask for is checked
before it starts (:mod:`~streamrag.simulator.load.checks`).

Sessions arriving before ``load.warmup_s`` are simulated but not counted. The run is here;
what a session measures is :mod:`~streamrag.simulator.load.measures`, the files
:mod:`~streamrag.simulator.load.output`.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from streamrag.base.errors import ConfigError
from streamrag.engine.clock import Clock, Priority
from streamrag.engine.loop import run_virtual
from streamrag.engine.resources import Resource, resource_report
from streamrag.engine.trace import Recorder
from streamrag.pipeline.baseline import BaselineArm
from streamrag.pipeline.calls import Services
from streamrag.pipeline.plan import QuestionPlan
from streamrag.pipeline.question import SimQuestion
from streamrag.pipeline.streaming import StreamingArm
from streamrag.simulator.load.checks import check_load, tool_servers
from streamrag.simulator.load.measures import LoadSpool, SessionMeasures, SpooledDraws, TraceSink
from streamrag.simulator.load.workload import (
    ClosedArrivals,
    LoadConfig,
    OpenArrivals,
    draw_questions,
    open_arrivals,
    question_draws,
    session_id,
    think_draws,
)
from streamrag.simulator.scenario import ResolvedScenario

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

SYSTEMS = ("streaming", "baseline")


@dataclass(slots=True)
class SystemRun:
    """One system's run: its measures, resource reports and replayed span."""

    measures: SessionMeasures
    resources: dict[str, dict[str, Any] | None]
    end_us: int
    n_events: int


def _distinct(services: Services) -> dict[str, Resource]:
    out: dict[str, Resource] = {}
    for resource in (services.query_llm, services.tool, services.response_llm):
        out.setdefault(resource.name, resource)
    return out


class _LoadedSystems:
    """Both systems on one virtual clock, each with its own resources.

    Open loop: at each arrival the session's plan is drawn once and both arms start —
    the baseline arm runs on callbacks alone, the streaming arm in a task. Closed loop:
    each system has its own users (their next arrival depends on that system's answers).
    Each finished session is measured, spooled to its system's trace sink and counted.
    """

    def __init__(
        self,
        clock: Clock,
        questions: Sequence[SimQuestion],
        rs: ResolvedScenario,
        load: LoadConfig,
        n: int,
        spool: LoadSpool,
        trace_every: int,
        on_session: Callable[[], None] | None,
    ) -> None:
        import anyio

        from streamrag.simulator.replay.planning import plan_question

        self.clock = clock
        self.questions = questions
        self.rs = rs
        self.load = load
        self.n = n
        self.on_session = on_session
        self.plan_question = plan_question
        sc = rs.scenario
        self.services = {system: sc.resources.build(clock) for system in SYSTEMS}
        table = spool.table(n, sorted(_distinct(self.services["streaming"])), SYSTEMS)
        self.measures = {system: SessionMeasures(table, system) for system in SYSTEMS}
        self.trace_every = trace_every
        """Session i is traced iff ``trace_every`` divides i (0: none is)."""
        self.sinks = {system: spool.sink(system) for system in SYSTEMS} if trace_every else {}
        self.asked = spool.draws("questions", n, question_draws(sc.seed, len(questions)))
        """The question index of each session (one draw shared by both systems)."""
        self.thinks: SpooledDraws | None = None
        if isinstance(load.arrivals, ClosedArrivals):
            self.thinks = spool.draws("think", n, think_draws(sc.seed, load.arrivals.think_s))
        self.last_us = dict.fromkeys(SYSTEMS, 0)
        """When each system's last session finished: the end of its report."""
        self.n_events = 0
        """Events of every finished session, both systems."""
        self.policy = sc.policy.build(clock)
        self.mutating = sc.tool.effects == "mutating"
        """Count each session's unsafe executions (a mutating tool)."""
        self.pending_baselines = 0
        self.drained = anyio.Event()
        """Set when every baseline arm (callbacks, no task) has finished."""

    async def run(self) -> dict[str, SystemRun]:
        import anyio

        async with anyio.create_task_group() as tg:
            arrivals = self.load.arrivals
            if isinstance(arrivals, ClosedArrivals):
                for system in SYSTEMS:
                    for u in range(min(arrivals.users, self.n)):
                        tg.start_soon(self._user, system, u, arrivals.users)
            else:
                await self._open(tg, arrivals)
        if self.pending_baselines:
            await self.drained.wait()
        return {system: self._system_run(system) for system in SYSTEMS}

    async def _open(self, tg: TaskGroup, arrivals: OpenArrivals) -> None:
        """Sessions at the workload's arrival instants, both arms at once."""
        rs = self.rs
        instants = open_arrivals(arrivals, rs.scenario.seed, tool_servers(rs), rs.stages.L.mean_ms)
        for i, at in enumerate(itertools.islice(instants, self.n)):
            await self.clock.sleep_until_us(at, Priority.INPUT)
            q = self.questions[self.asked[i]]
            plan = self.plan_question(q, rs, stream_id=session_id(i))
            self._start_baseline(i, plan, at)
            tg.start_soon(self._streaming, i, q, plan, at)

    async def _user(self, system: str, u: int, users: int) -> None:
        """Closed loop: user ``u`` of ``system`` asks sessions u, u + users, … in turn."""
        assert self.thinks is not None  # drawn for every closed loop
        for i in range(u, self.n, users):
            await self.clock.sleep_us(self.thinks[i], Priority.INPUT)
            q = self.questions[self.asked[i]]
            at = self.clock.now_us()
            plan = self.plan_question(q, self.rs, stream_id=session_id(i))
            if system == "streaming":
                await self._streaming(i, q, plan, at)
            else:
                await self._start_baseline(i, plan, at).finished.wait()

    def _start_baseline(self, i: int, plan: QuestionPlan, at: int) -> BaselineArm:
        self.pending_baselines += 1
        rec = Recorder(session_id(i), self.clock, at)
        return BaselineArm(
            self.clock, rec, plan, self.services["baseline"], on_done=lambda: self._done("baseline", i, at, plan, rec)
        )

    async def _streaming(self, i: int, q: SimQuestion, plan: QuestionPlan, at: int) -> None:
        sc = self.rs.scenario
        rec = Recorder(session_id(i), self.clock, at)
        rec.emit("session", question=q.interaction_id, arrival_us=at)
        arm = StreamingArm(
            self.clock,
            rec,
            plan,
            sc.trigger.build(q),
            sc.reflector.build(q),
            self.rs.arm_rules,
            self.services["streaming"],
            self.policy,
        )
        await arm.run()
        self._done("streaming", i, at, plan, rec, arm.machine.ends.counts())

    def _done(self, system: str, i: int, at: int, plan: QuestionPlan, rec: Recorder, outcomes: tuple[int, ...] = ()) -> None:
        """A session finished in ``system``: measure it, spool its events, count it."""
        if system == "baseline":
            self.pending_baselines -= 1
            if self.pending_baselines == 0:
                self.drained.set()
        sink = self.sinks.get(system) if self.trace_every and i % self.trace_every == 0 else None
        trace = (-1, 0) if sink is None else sink.add(rec.events)
        unsafe = self._unsafe(self.questions[self.asked[i]], rec.events) if system == "streaming" and self.mutating else 0
        self.measures[system].add(
            i, self.asked[i], at, plan.input_end_us, rec.events, trace, unsafe, *([outcomes] if outcomes else [])
        )
        self.n_events += len(rec.events)
        self.last_us[system] = self.clock.now_us()
        if self.on_session is not None:
            self.on_session()

    @staticmethod
    def _unsafe(q: SimQuestion, events: list[dict[str, Any]]) -> int:
        """The session's unsafe executions, counted as a replayed question's are (the arm,
        its rules and the fold are the same: only the shared resources differ)."""
        from streamrag.simulator.replay.fold import fold_trace
        from streamrag.simulator.results import unsafe_executions

        return unsafe_executions(fold_trace(events), q.n_words, None if q.revised is None else q.revised.tolist())

    def _system_run(self, system: str) -> SystemRun:
        end_us = self.last_us[system]
        reports = {name: resource_report(res, end_us) for name, res in _distinct(self.services[system]).items()}
        # The event count is the run's (both systems), carried once: on the streaming system.
        return SystemRun(self.measures[system], reports, end_us, self.n_events if system == "streaming" else 0)


def _run_systems(
    questions: Sequence[SimQuestion],
    rs: ResolvedScenario,
    load: LoadConfig,
    n: int,
    spool: LoadSpool,
    trace_every: int,
    on_session: Callable[[], None] | None,
) -> tuple[dict[str, SystemRun], dict[str, TraceSink]]:
    """Both systems' runs (see :class:`_LoadedSystems`) and their trace spools."""
    sinks: dict[str, TraceSink] = {}

    async def main(clock: Clock) -> dict[str, SystemRun]:
        systems = _LoadedSystems(clock, questions, rs, load, n, spool, trace_every, on_session)
        sinks.update(systems.sinks)
        return await systems.run()

    return run_virtual(main), sinks


@dataclass
class LoadRun:
    """Both systems' runs and the unlimited-capacity reference.

    The per-session measures and traces live in temporary files (``spool``) until
    :meth:`close` (or the end of a ``with`` block) removes them, or the last object
    reading them is garbage-collected."""

    rs: ResolvedScenario
    questions: Sequence[SimQuestion]
    systems: dict[str, SystemRun]
    reference_saved_us: np.ndarray
    """Saved (µs) of the first ``reference_sessions`` sessions on unlimited capacity."""
    reflector_model: str
    traces: dict[str, TraceSink] = field(default_factory=dict)
    spool: LoadSpool = field(default_factory=lambda: LoadSpool(None))

    def close(self) -> None:
        """Remove the run's temporary files (its measures are gone after this)."""
        self.spool.remove()

    def __enter__(self) -> LoadRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
    from streamrag.simulator.replay.planning import plan_question

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
    n_sessions: int | None = None,
) -> LoadRun:
    """Run the scenario's ``[load]`` over ``questions`` (the selected population).

    ``trace_dir``: where the systems' traces (of the sessions ``load.trace_sessions``
    keeps) and measures are spooled while they run (None: no trace, measures in the
    system's temporary folder); the returned run holds them until :meth:`LoadRun.close`.
    ``on_session()`` is called as each session finishes (2 per session: one per system).
    ``n_sessions``: run only the workload's first sessions (checked: the whole workload).
    """
    load = rs.scenario.load
    if load is None:
        raise ConfigError("run_load: the scenario has no [load] section")
    if not questions:
        raise ConfigError("load: no question to draw sessions from")
    n = check_load(rs).n_sessions if n_sessions is None else n_sessions
    spool = LoadSpool(trace_dir)
    try:
        every = 0 if trace_dir is None else load.trace_every(n)
        systems, sinks = _run_systems(questions, rs, load, n, spool, every, on_session)
        spool.close()
        reference = _reference(questions, rs, min(n, load.reference_sessions))
    except BaseException:  # a failure or an interrupt (Ctrl-C, SIGTERM) leaves no temporary file
        spool.remove()
        raise
    return LoadRun(rs, questions, systems, reference, reflector_model, sinks, spool)
