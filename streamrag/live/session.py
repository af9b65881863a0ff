"""One live turn through both arms, on a real clock, traced as a simulated question is.

The arms are the simulator's own (:class:`~streamrag.pipeline.streaming.StreamingArm`,
:class:`~streamrag.pipeline.streaming.BaselineArm`); what differs is only what feeds them:

- words come from a :class:`~streamrag.live.words.WordSource` and are pushed into the
  arm as they are heard (``hear``), ticks by a timer task, the turn's end by an event;
- the L stage is a :class:`~streamrag.pipeline.tools.ToolResource`: each tool call is a
  real awaited call on the words heard up to its prefix;
- the reflector is the simulator's heuristic rule
  (:class:`~streamrag.pipeline.reflectors.HeuristicReflector`) reading real results
  (:class:`ResultEvidence`): the full query's BM25 score of a result's top chunk and its
  token coverage, re-scored by the judge with the analyzer's arithmetic;
- G and F are delays on the clock (drawn as in the simulator, or given by a plan); G
  may instead be a real LLM call (a :class:`~streamrag.pipeline.tools.QueryGenerator`)
  whose query is the one searched.

Events go to a :class:`LiveRecorder`, which hands each one on as it happens (the
terminal view, and ``trace.jsonl`` line by line so an interrupted run leaves a readable
partial trace).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import numpy as np

from streamrag.base.errors import ConfigError
from streamrag.engine.clock import Clock
from streamrag.engine.latency import LatencyModel
from streamrag.engine.resources import Job, Unlimited
from streamrag.engine.trace import Recorder
from streamrag.live.words import WordSource
from streamrag.pipeline.calls import Services
from streamrag.pipeline.question import SimQuestion, kinds_without
from streamrag.pipeline.reflectors import Coverage, HeuristicReflectorConfig
from streamrag.pipeline.streaming import BaselineArm, StreamingArm
from streamrag.pipeline.tools import QueryGenerator, QueryResource, Tool, ToolResource, ToolResult
from streamrag.pipeline.triggers import TriggerConfig
from streamrag.simulator.scenario import ResolvedScenario


class Judge(Protocol):
    """Scores a chunk of the tool's corpus under the full query: ``(score, coverage)``,
    coverage counting the full query's distinct tokens or their occurrences."""

    def judge(self, full_query: str, chunk_id: int, coverage: Coverage = "distinct") -> tuple[float, float]: ...


class LiveRecorder(Recorder):
    """A :class:`Recorder` that passes each event to ``sink`` as it is emitted."""

    __slots__ = ("sink",)

    def __init__(self, qid: str, clock: Clock, origin_us: int, sink: Callable[[dict[str, Any]], object]) -> None:
        super().__init__(qid, clock, origin_us, validate=True)
        self.sink = sink

    def emit(self, kind: str, **fields: Any) -> None:
        super().emit(kind, **fields)
        self.sink(self.events[-1])


class LiveQuestion:
    """What the arms read of the question: its id, its length once the turn has ended,
    and the top-k of the call on each prefix (the real results)."""

    def __init__(self, interaction_id: str, results: dict[int, ToolResult]) -> None:
        self.interaction_id = interaction_id
        self.n_words = 0
        """0 until the last word is heard."""
        self.results = results

    def top(self, t: int) -> tuple[int, ...] | None:
        result = self.results.get(t)
        return None if result is None else result.top


class _Draws:
    """Stage latencies of prefixes 1, 2, … drawn when first read (the length is unknown)."""

    def __init__(self, model: LatencyModel, rng: np.random.Generator | None) -> None:
        self.model = model
        self.rng = rng
        self.values: list[int] = []

    def __getitem__(self, i: int) -> int:
        while len(self.values) <= i:
            self.values.append(int(self.model.sample_us(self.rng, 1)[0]))
        return self.values[i]

    def __len__(self) -> int:
        return len(self.values)


@dataclass(slots=True)
class LivePlan:
    """A :class:`~streamrag.pipeline.streaming.QuestionPlan` filled in as the turn goes."""

    question: LiveQuestion
    g_us: Sequence[int] | _Draws
    l_us: Sequence[int] | _Draws
    f_us: int
    word_us: list[int] = field(default_factory=list)
    end_of_turn_us: int = 0

    @property
    def turn_end_us(self) -> int:
        return self.word_us[-1] if self.word_us else 0


class ResultEvidence:
    """The heuristic rule's evidence on real results: the full query's score of a
    result's top chunk and its coverage, re-scored by the judge (``None``: no hits)."""

    def __init__(self, results: dict[int, ToolResult], judge: Judge, words: list[str], coverage: Coverage) -> None:
        self.results = results
        self.judge = judge
        self.words = words
        self.coverage = coverage

    def top_chunk(self, prefix_t: int) -> tuple[float, float] | None:
        result = self.results.get(prefix_t)
        if result is None or not result.hits:
            return None
        return self.judge.judge(" ".join(self.words), result.hits[0].chunk_id, self.coverage)


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn to run: its id, its words, and (replays) the known question and its draws."""

    qid: str
    source: WordSource
    question: SimQuestion | None = None
    g_us: Sequence[int] | None = None
    f_us: int | None = None


@dataclass(slots=True)
class TurnOutcome:
    """What a turn left: its events and words (``n_words == 0``: nothing was heard)."""

    events: list[dict[str, Any]]
    words: list[str]


def _check_live(rs: ResolvedScenario, known: bool) -> HeuristicReflectorConfig:
    """The scenario's reflector rule, once the scenario is one a live run can follow."""
    sc = rs.scenario
    if not known and sc.trigger.needs:
        raise ConfigError(
            f"trigger.kind: {sc.trigger.kind!r} needs the question in advance ({', '.join(sorted(sc.trigger.needs))}); "
            f"live input takes {', '.join(kinds_without(TriggerConfig))}"
        )
    if not isinstance(sc.reflector, HeuristicReflectorConfig):
        raise ConfigError(f"reflector.kind: {sc.reflector.kind!r} is not available live (heuristic only)")
    if sc.resources.limited or sc.load is not None:
        raise ConfigError("live runs replay one turn at a time on unlimited capacity: remove [resources] and [load]")
    return sc.reflector


async def run_turn(
    clock: Clock,
    turn: Turn,
    tool: Tool,
    judge: Judge,
    rs: ResolvedScenario,
    sink: Callable[[dict[str, Any]], object],
    *,
    rng: Callable[[str], np.random.Generator | None] | None = None,
    words: list[str] | None = None,
    generator: QueryGenerator | None = None,
) -> TurnOutcome:
    """Run one turn through both arms on ``clock`` (the turn starts now).

    ``rng(stage)`` gives the random stream of a drawn G or F (typed turns; a replay
    brings its plan's draws); ``sink`` gets every event as it happens; ``words`` (filled
    as they are heard) lets a viewer read them; ``generator``, when given, is G: each
    call's query is generated from its prefix words (else G is a delay and the query is
    the prefix words)."""
    rule = _check_live(rs, turn.question is not None)
    sc = rs.scenario
    rec = LiveRecorder(turn.qid, clock, clock.now_us(), sink)
    words = [] if words is None else words

    def draws(stage: str) -> _Draws:
        model = getattr(rs.stages, stage)
        return _Draws(model, rng(stage) if rng is not None and model.needs_rng else None)

    def heard(prefix_t: int) -> str:
        return " ".join(words[:prefix_t])

    async with anyio.create_task_group() as tasks:
        free = Unlimited(clock)
        generated = None if generator is None else QueryResource(clock, generator, tasks, heard)

        def query_of(job: Job) -> str:
            return heard(job.prefix_t) if generated is None else generated.query_of(job)

        resource = ToolResource(clock, tool, tasks, query_of, k=sc.data.k)
        question = LiveQuestion(turn.qid, resource.results)
        f_us = turn.f_us if turn.f_us is not None else draws("F")[0]
        plan = LivePlan(question, turn.g_us if turn.g_us is not None else draws("G"), _Draws(rs.stages.L, None), f_us)
        known = turn.question or SimQuestion(turn.qid, n_words=1, t_sc=1, t_suf=None)
        trigger = sc.trigger.build(known)
        reflector = rule.on(ResultEvidence(resource.results, judge, words, rule.coverage))
        services = Services(generated or free, resource, free)
        arm = StreamingArm(clock, rec, plan, trigger, reflector, rs.arm_rules, services)  # type: ignore[arg-type]
        baseline = BaselineArm(clock, rec, plan, services, at_turn_end=False)  # type: ignore[arg-type]
        turn_end = anyio.Event()

        async def listen() -> None:
            async for heard in turn.source.words(clock, rec.origin_us):
                if heard.text:
                    words.append(heard.text)
                    plan.word_us.append(rec.now_us())
                    if heard.last:
                        question.n_words = len(words)
                    arm.hear(len(words))
                elif words:  # the turn ended after the last word heard
                    question.n_words = len(words)
                    rec.emit("input_end", n_words=len(words))
                if heard.last:
                    break
            if not words:
                tasks.cancel_scope.cancel()
                return
            turn_end.set()
            baseline.start()

        async def tick(period_us: int) -> None:
            k = 1
            while not turn_end.is_set():
                await clock.sleep_until_us(rec.origin_us + k * period_us)
                if not turn_end.is_set():
                    arm.tick()
                k += 1

        tasks.start_soon(listen)
        if trigger.tick_us:
            tasks.start_soon(tick, trigger.tick_us)
        await arm.run(turn_end)
        await baseline.finished.wait()
        tasks.cancel_scope.cancel()  # calls the reflector cancelled, the ticker
    return TurnOutcome(rec.events, words)
