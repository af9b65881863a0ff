"""The Speculator: speculative tool calls on a partial transcript, for an agent or a run.

One object serves ``streamrag live`` and the agent adapters. Per turn:

- ``hear(text)`` takes the transcript so far (an interim hypothesis is the whole turn's
  text, not a delta). Words that extend what was heard are heard one by one; a text that
  rewrites earlier words is a **revision**: the words after the common prefix are
  withdrawn (a ``revise`` event), calls fired on longer prefixes are *stale* — cancelled
  if in flight (``cancel``, reason ``revised``), never judged if finished — and their
  prefixes may fire again on the new words;
- the scenario's trigger fires calls of the tool on prefixes, under its caps and
  policies (the simulator's :class:`~streamrag.pipeline.streaming.StreamingArm`, which
  the simulator runs on virtual time). Without a known question, a ``learned`` trigger
  reads a local ranking of each prefix heard (``ranker``: the judge or the tool when it
  has ``rank``) and computes its features from the words heard
  (:mod:`streamrag.simulator.heard`), revisions included;
- ``await resolve()`` at end of turn: the reflector judges the finished calls, waits
  for those in flight, and returns the result to use; when nothing is sufficient the
  full query is called and its result returned (``speculative=False``). The calls
  still running are cancelled.

A tool is an async function awaited with JSON-serializable keyword arguments
(``arguments(query)``, default ``{"query": query}``); a retrieval
:class:`~streamrag.pipeline.tools.Tool` (``search(query, k)``) is one case. With
``shadow=True`` the baseline (one call on the full query at end of turn) runs alongside
and the turn's report says what speculation saved; without it, no call is made that the
answer does not need. G (query generation) is 0 unless a generator or drawn delays are
given; F is the agent's own LLM, outside (0 here, or a drawn delay in a measured run).

Every speculative call ends in one terminal outcome (:mod:`streamrag.pipeline.outcomes`):
the turn's report counts them (``outcomes``). ``cancel()`` (a barge-in) ends the calls in
flight as ``cancelled``; ``timeout_s`` bounds each call (``timed_out``). ``effects`` is
the tool's side-effect class: ``idempotent`` serves a call whose arguments were answered
before in this session from a cache; ``mutating`` never starts a speculative call's tool
before the turn is confirmed (``resolve()``): the scenario's ``tool.mutating_policy``
(``deferral`` by default; ``never``, ``after_authorization``) says what may run early.

``tracer``: an OpenTelemetry tracer (the extra ``otel``); each turn, once over, is written
as spans (:mod:`streamrag.speculate.telemetry`: the turn, a span per call with its
outcome, and its G, L and F stages). Without one, OpenTelemetry is never imported.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import anyio
from anyio.abc import TaskGroup

from streamrag.base.errors import ConfigError, StreamragError, ToolError
from streamrag.engine.clock import Clock, RealClock
from streamrag.engine.resources import Job, Unlimited
from streamrag.pipeline.arm import ArmRules
from streamrag.pipeline.baseline import BaselineArm
from streamrag.pipeline.calls import Services
from streamrag.pipeline.outcomes import Effects
from streamrag.pipeline.question import SimQuestion
from streamrag.pipeline.streaming import StreamingArm
from streamrag.pipeline.tools import QueryGenerator, QueryResource, ToolFunction, ToolResource
from streamrag.pipeline.triggers import Trigger
from streamrag.simulator.heard import Ranker, online_trigger
from streamrag.simulator.scenario import ResolvedScenario, load_scenario
from streamrag.speculate.judging import Judge, ReflectorChoice, build_reflector
from streamrag.speculate.scenario_check import check_scenario
from streamrag.speculate.turn import (
    Resolution,
    TurnPlan,
    TurnQuestion,
    TurnRecorder,
    TurnReport,
    TurnState,
    Zeros,
    turn_report,
)

if TYPE_CHECKING:
    from streamrag.speculate.telemetry import TurnSpans

log = logging.getLogger(__name__)


class Speculator:
    """Speculative calls of ``tool`` on a turn's partial transcript (module docstring).

    ``scenario``: a built-in name, a TOML path or a loaded scenario (its trigger,
    reflector, thread cap and policies); ``reflector``: ``"scenario"``, ``"unchanged"``
    or ``accept(full_query, called) -> bool``; ``judge`` re-scores hits for the
    heuristic rule (a tool with a ``judge`` method is its own judge); ``ranker`` ranks
    each prefix heard for a ``learned`` trigger when the question is not known (default:
    the judge, else the tool, when it has ``rank(query, k)``: a BM25Tool); ``replay``: turns
    are known questions replayed (``begin(question=…)``), so triggers that read the
    question are allowed; ``effects``: the tool's side-effect class (None: the scenario's
    ``tool.effects``); ``timeout_s``: a call not answered by then is lost (``timed_out``);
    ``tracer``: an OpenTelemetry tracer that gets each turn's spans once it is over.
    Bad settings raise ConfigError here. Use as
    ``async with Speculator(...) as spec:``; the calls run in its task group."""

    def __init__(
        self,
        tool: ToolFunction | Any,
        scenario: str | ResolvedScenario = "paper_rq3",
        *,
        arguments: Callable[[str], Mapping[str, Any]] | None = None,
        reflector: ReflectorChoice = "scenario",
        judge: Judge | None = None,
        clock: Clock | None = None,
        shadow: bool = False,
        generator: QueryGenerator | None = None,
        sink: Callable[[dict[str, Any]], object] | None = None,
        name: str | None = None,
        replay: bool = False,
        ranker: Ranker | None = None,
        effects: Effects | None = None,
        timeout_s: float | None = None,
        tracer: Any | None = None,
    ) -> None:
        self.rs = scenario if isinstance(scenario, ResolvedScenario) else load_scenario(scenario)
        tool_config = self.rs.scenario.tool
        self.effects: Effects = tool_config.effects if effects is None else effects
        if self.effects not in ("read_only", "idempotent", "mutating"):
            raise ConfigError(f"Speculator: effects is 'read_only', 'idempotent' or 'mutating', got {self.effects!r}")
        mutating = (tool_config.mutating_policy or "deferral") if self.effects == "mutating" else None
        if mutating == "speculative":
            raise ConfigError(
                "tool.mutating_policy: 'speculative' runs a mutating tool on unconfirmed words; it is simulated to measure "
                "that risk, never run live: use 'deferral', 'after_authorization' or 'never'"
            )
        self.rules: ArmRules = dataclasses.replace(self.rs.arm_rules, mutating=mutating)
        if timeout_s is not None and (isinstance(timeout_s, bool) or not math.isfinite(timeout_s) or timeout_s <= 0):
            raise ConfigError(f"Speculator: timeout_s is a number of seconds > 0, got {timeout_s!r}")
        self.timeout_us = None if timeout_s is None else round(timeout_s * 1_000_000)
        self._cache: dict[str, Any] | None = {} if self.effects == "idempotent" else None
        """Results by arguments, for an idempotent tool (the session's)."""
        self.replay = replay
        own_judge = cast("Judge", tool) if callable(getattr(tool, "judge", None)) else None
        self.judge: Judge | None = judge if judge is not None else own_judge
        ranks = [r for r in (ranker, self.judge, tool) if r is not None and callable(getattr(r, "rank", None))]
        self.ranker: Ranker | None = ranker if ranker is not None else cast("Ranker", ranks[0]) if ranks else None
        check_scenario(self.rs, known=replay, ranker=self.ranker)
        search = getattr(tool, "search", None)
        if search is not None:  # a retrieval Tool: search(query, k)
            k = self.rs.scenario.data.k
            self.fn: ToolFunction = search
            self.arguments = arguments or (lambda query: {"query": query, "k": k})
        elif callable(tool):
            self.fn = tool
            self.arguments = arguments or (lambda query: {"query": query})
        else:
            raise ConfigError(f"Speculator: the tool must be an async function or have search(query, k), got {tool!r}")
        self.name: str = str(name or getattr(tool, "name", None) or getattr(tool, "__name__", None) or type(tool).__name__)
        self.reflector = reflector
        self.clock = clock or RealClock()
        self.shadow = shadow
        self.generator = generator
        self.sink = sink
        build_reflector(reflector, self.rs.scenario.reflector, {}, str, self.arguments, self.judge)  # bad settings: now
        self._tasks: TaskGroup | None = None
        self._closed = False
        """The ``async with`` block has ended: no turn may begin."""
        self._turn: TurnState | None = None
        self._n_turns = 0
        self._spans: TurnSpans | None = None
        if tracer is not None:
            from streamrag.speculate.telemetry import TurnSpans

            self._spans = TurnSpans(tracer, self.clock.now_us(), tool=self.name, trigger=self.rs.scenario.trigger.kind)

    async def __aenter__(self) -> Speculator:
        self._tasks = anyio.create_task_group()
        await self._tasks.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        assert self._tasks is not None
        if self._turn is not None and not self._turn.turn_end.is_set():
            self.cancel()  # a turn never resolved: its calls end as cancelled
        self._tasks.cancel_scope.cancel()  # calls nobody awaits any more
        self._closed = True
        try:
            return await self._tasks.__aexit__(*exc)
        except BaseExceptionGroup as group:  # one error of the turn (a tool's, a rule's): raised as itself
            if len(group.exceptions) == 1 and isinstance(group.exceptions[0], Exception):
                raise group.exceptions[0] from None
            raise
        finally:
            if self._turn is not None:
                self._write_spans(self._turn)

    # -- a turn -----------------------------------------------------------------------

    @property
    def words(self) -> list[str]:
        """The current turn's words (empty before the first is heard)."""
        return [] if self._turn is None else self._turn.words

    @property
    def events_origin_us(self) -> int:
        """The current turn's origin on the clock (its events' ``t_us`` count from it)."""
        return 0 if self._turn is None else self._turn.rec.origin_us

    @property
    def events(self) -> list[dict[str, Any]]:
        """The current (or last) turn's trace events."""
        return [] if self._turn is None else self._turn.rec.events

    def begin(
        self,
        qid: str | None = None,
        *,
        question: SimQuestion | None = None,
        g_us: Sequence[int] | None = None,
        f_us: int = 0,
        words: list[str] | None = None,
    ) -> None:
        """Start a turn now (``hear`` starts one when none is open). A measured run
        passes the known ``question`` (triggers that read it), drawn G delays ``g_us``
        and F ``f_us``, and a ``words`` list a viewer reads as it fills."""
        if self._tasks is None:
            raise RuntimeError("Speculator: use it as 'async with Speculator(...) as spec:'")
        if self._closed:
            raise RuntimeError("Speculator: its 'async with' block has ended; a new turn needs a new block")
        if question is not None and not self.replay:
            raise ConfigError("Speculator.begin: a known question needs Speculator(..., replay=True)")
        if self._turn is not None:
            if not self._turn.turn_end.is_set():
                self.cancel()  # a turn never resolved: nobody will use its calls
            self._write_spans(self._turn)
        self._n_turns += 1
        qid = qid or f"turn{self._n_turns}"
        clock, sc = self.clock, self.rs.scenario
        turn = TurnState(qid, TurnRecorder(qid, clock, clock.now_us(), self.sink), [] if words is None else words)
        turn.words.clear()

        def heard(prefix_t: int) -> str:
            return " ".join(turn.words[:prefix_t])

        free = Unlimited(clock)
        generated = None if self.generator is None else QueryResource(clock, self.generator, self._tasks, heard)

        def query_of(job: Job) -> str:
            return heard(job.prefix_t) if generated is None else generated.query_of(job)

        turn.resource = ToolResource(
            clock, self.fn, self._tasks, query_of, self.arguments, name=self.name, timeout_us=self.timeout_us, cache=self._cache
        )
        turn.question = TurnQuestion(qid, turn.resource.results)
        turn.plan = TurnPlan(turn.question, Zeros() if g_us is None else g_us, f_us)
        if question is None and sc.trigger.needs:  # ranks_online (check_scenario): from the words heard
            trigger: Trigger = online_trigger(sc.trigger, turn.words, self.ranker)
        else:
            trigger = sc.trigger.build(question or SimQuestion(qid, n_words=1, t_sc=1, t_suf=None))
        reflector = build_reflector(
            self.reflector, sc.reflector, turn.resource.results, lambda: " ".join(turn.words), self.arguments, self.judge
        )
        services = Services(generated or free, turn.resource, free)
        turn.arm = StreamingArm(clock, turn.rec, turn.plan, trigger, reflector, self.rules, services)  # type: ignore[arg-type]
        if self.shadow:
            turn.baseline = BaselineArm(clock, turn.rec, turn.plan, services, at_turn_end=False)  # type: ignore[arg-type]
        self._turn = turn
        self._tasks.start_soon(self._drive, turn)
        if trigger.tick_us:
            self._tasks.start_soon(self._tick, turn, trigger.tick_us)

    async def _drive(self, turn: TurnState) -> None:
        with turn.scope:
            try:
                await turn.arm.run(turn.turn_end)
            except StreamragError as exc:  # a user's reflector failed: resolve() reports it
                turn.error = exc
        turn.done.set()

    async def _tick(self, turn: TurnState, period_us: int) -> None:
        k = 1
        with turn.tick_scope:  # a scope of its own: one CancelScope serves one 'with' block
            while not turn.turn_end.is_set():
                await self.clock.sleep_until_us(turn.rec.origin_us + k * period_us)
                if not turn.turn_end.is_set():
                    turn.arm.tick()
                k += 1

    def hear(self, text: str, at_us: int | None = None, final: bool = False) -> None:
        """The turn's transcript so far (interim hypotheses may rewrite earlier words;
        see the module docstring); ``final``: input has ended (``resolve`` implies it; a
        ``hear`` after a final one starts a new turn and abandons an unresolved one).
        ``at_us``: when it was heard on the clock (default now), kept as the words' times."""
        if not isinstance(text, str):
            raise TypeError(f"Speculator.hear: text is the transcript so far, a str (got {type(text).__name__})")
        if at_us is not None and (isinstance(at_us, bool) or not isinstance(at_us, int | float) or not math.isfinite(at_us)):
            raise ValueError(f"Speculator.hear: at_us is an instant on the clock in µs, a finite number (got {at_us!r})")
        turn = self._turn
        if turn is not None and turn.final and not (turn.turn_end.is_set() or turn.scope.cancel_called) and turn.words:
            log.warning("Speculator: turn %s ended (final) but was never resolved: its calls are cancelled", turn.qid)
        if turn is None or turn.final:
            self.begin()
            turn = self._turn
            assert turn is not None
        new = text.split()
        words = turn.words
        kept = 0
        for old, now in zip(words, new, strict=False):
            if old != now:
                break
            kept += 1
        if kept < len(words):
            dropped = len(words) - kept
            turn.stale += sum(1 for c in turn.arm.calls if c.prefix_t > kept and (c.done or c.idx in turn.arm.in_flight))
            turn.rec.emit("revise", kept=kept, dropped=dropped)
            turn.arm.revise(kept)
            for t in range(kept + 1, len(words) + 1):
                turn.resource.results.pop(t, None)
            del words[kept:]
            del turn.plan.word_us[kept:]
        at = self.clock.now_us() if at_us is None else round(at_us)
        if final:
            turn.final = True
            turn.question.n_words = len(new)
        for word in new[kept:]:
            words.append(word)
            turn.plan.word_us.append(at - turn.rec.origin_us)
            turn.arm.hear(len(words))
        if final and len(new) == kept and words:
            turn.rec.emit("input_end", n_words=len(words))

    async def resolve(self) -> Resolution:
        """End of turn: the result to answer from (see the module docstring). ToolError
        when the full query's own call failed; ValueError when no word was heard."""
        turn = self._turn
        if turn is None or not turn.words:
            raise ValueError("Speculator.resolve: no word was heard this turn")
        if turn.turn_end.is_set():
            raise RuntimeError("Speculator.resolve: this turn was already resolved")
        if not turn.final:
            self.hear(" ".join(turn.words), final=True)
        start_us = self.clock.now_us()
        turn.turn_end.set()
        if turn.baseline is not None:
            turn.baseline.start()
        await turn.done.wait()
        turn.waited_us = self.clock.now_us() - start_us
        if turn.baseline is None:  # the turn is over (a shadow's baseline still runs: settle() writes it)
            self._write_spans(turn)
        if turn.error is not None:
            raise turn.error
        chosen = turn.arm.chosen
        if chosen is None:
            raise ToolError(f"tool {self.name}: the full query's call failed ({turn.resource.last_error or 'cancelled'})")
        called = turn.resource.results[chosen.prefix_t]
        return Resolution(
            value=called.value,
            query=called.query,
            arguments=dict(called.arguments),
            prefix_t=chosen.prefix_t,
            n_words=len(turn.words),
            speculative=chosen.speculative,
            waited_ms=turn.waited_us / 1000,
        )

    async def settle(self) -> TurnReport:
        """Wait for the shadow baseline (if any) to finish; the turn's report."""
        turn = self._turn
        if turn is not None and turn.baseline is not None and turn.turn_end.is_set():
            await turn.baseline.finished.wait()
            self._write_spans(turn)
        return self.report()

    def _write_spans(self, turn: TurnState) -> None:
        """The turn's spans, once (a tracer given; the turn resolved, settled or abandoned)."""
        if self._spans is None or turn.spans_written or not turn.rec.events:
            return
        turn.spans_written = True
        over = turn.done.is_set() or turn.scope.cancel_called
        waited = None if turn.waited_us is None else turn.waited_us / 1000
        self._spans.emit(turn.qid, turn.rec.origin_us, turn.rec.events, n_words=len(turn.words), over=over, waited_ms=waited)

    def cancel(self) -> None:
        """Abandon the current turn (the user was interrupted, the session moved on):
        every call of the turn still running is cancelled (outcome ``cancelled``)."""
        turn = self._turn
        if turn is None:
            return
        turn.arm.machine.abandon()
        turn.scope.cancel()
        turn.tick_scope.cancel()
        turn.final = True

    def report(self) -> TurnReport:
        """The current (or last) turn's metrics."""
        return turn_report(self._turn, self.effects)
