"""One question through the pipeline: input → Trigger → tool calls → Reflector → F.

Async components on anyio that only *wait* here (for words, for results); every
decision is delegated to plain functions (:mod:`~streamrag.pipeline.triggers`,
:mod:`~streamrag.pipeline.reflectors`, :mod:`~streamrag.pipeline.policies`), and the
calls themselves are chains of jobs on shared resources (:mod:`~streamrag.pipeline.calls`).
Everything takes a :class:`~streamrag.engine.clock.Clock`, so the same code runs in
virtual time (simulation) and on the wall clock (live mode).

Two arms (the streaming one here; the baseline in :mod:`~streamrag.pipeline.baseline`;
what both are given, :class:`~streamrag.pipeline.plan.QuestionPlan`):

- **streaming** — words arrive at ``plan.word_us``; the trigger fires speculative calls
  (each G then L); at end of turn the reflector picks a result, cancels the calls still
  in flight, and response generation F runs from it;
- **baseline** — at end of turn, one call on the full query (G + L), then F.

A question replayed alone runs both (:func:`simulate_question`); under load each system
runs one arm per session (:mod:`streamrag.simulator.load`).

Common random numbers: a call on prefix t always takes ``plan.g_us[t-1]`` and
``plan.l_us[t-1]`` of work whichever arm fires it, and both arms share ``plan.f_us``; so
trigger ``none`` saves exactly 0 on unlimited capacity and a mis-fire costs exactly the
reflector's waiting.

Waits carry a :class:`~streamrag.engine.clock.Priority` so that same-instant events
follow the engine's rule: completions, then words, then ticks, then end of turn.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import Literal

import anyio

from streamrag.engine.clock import Clock, Priority
from streamrag.engine.resources import Job
from streamrag.engine.trace import Recorder
from streamrag.pipeline.baseline import BaselineArm
from streamrag.pipeline.calls import Call, Services, launch, respond
from streamrag.pipeline.plan import QuestionPlan
from streamrag.pipeline.policies import AlwaysPolicy, SpeculationPolicy
from streamrag.pipeline.reflectors import Fallback, Reflector, Rejudge
from streamrag.pipeline.triggers import Trigger

CappedFire = Literal["defer", "drop"]
TurnEndOrder = Literal["reflector_first", "calls_first"]
SlotRelease = Literal["after_words", "at_completion"]


@dataclass(frozen=True, slots=True)
class ArmRules:
    """The rules of the streaming arm that the anchor's code fixes and streamrag makes
    selectable (see :mod:`~streamrag.pipeline.triggers` and
    :mod:`~streamrag.pipeline.reflectors`; the first value of each is the anchor's).

    - ``max_threads``: cap on calls in flight (None: no cap);
    - ``capped_fire``: ``defer`` | ``drop`` a fire blocked by the cap;
    - ``turn_end_order``: ``reflector_first`` — when the reflector starts at the instant
      of the last word (no end-of-turn delay), it looks before the calls fired on that
      word start; if it decides at once they are cancelled unstarted and not counted as
      fired; ``calls_first`` — those calls start first;
    - ``slot_release``: ``after_words`` — a call completing at the instant a word arrives
      still counts against the cap for that word (in the anchor's asyncio harness the
      slot is freed by a done-callback, one loop turn after the words of that instant are
      heard); ``at_completion`` — completions come first (the engine's order), so that
      word sees the freed slot;
    - ``rejudge``: ``best_of_completed`` | ``newest`` (what is judged after a completion);
    - ``fallback``: ``refire`` | ``reuse`` (a call on the full query) when nothing is
      sufficient.
    """

    max_threads: int | None = 4
    capped_fire: CappedFire = "defer"
    turn_end_order: TurnEndOrder = "reflector_first"
    slot_release: SlotRelease = "after_words"
    rejudge: Rejudge = "best_of_completed"
    fallback: Fallback = "refire"


def input_schedule(plan: QuestionPlan, tick_us: int | None) -> list[tuple[int, int, int]]:
    """Input instants ``(at_us, priority, word_t)``; ``word_t = 0`` marks a tick.

    Ticks fall at k·tick_us (k ≥ 1) up to the last word; a tick at the same µs as a
    word comes after it (priority rule), so it sees that word.
    """
    events = [(at, int(Priority.INPUT), t) for t, at in enumerate(plan.word_us, start=1)]
    if tick_us:
        last = plan.word_us[-1]
        events += [(k * tick_us, int(Priority.TICK), 0) for k in range(1, last // tick_us + 1)]
        events.sort()
    return events


class _Inbox:
    """Finished calls, in completion order, for the reflector to await one at a time.

    A deque and, while the reflector waits, one event: the callbacks that deliver results
    need no task, and a question that never waits never builds a channel."""

    __slots__ = ("items", "waiter")

    def __init__(self) -> None:
        self.items: deque[Call] = deque()
        self.waiter: anyio.Event | None = None

    def put(self, call: Call) -> None:
        self.items.append(call)
        if self.waiter is not None:
            self.waiter.set()

    def clear(self) -> None:
        self.items.clear()

    async def get(self) -> Call:
        while not self.items:
            self.waiter = anyio.Event()
            await self.waiter.wait()
            self.waiter = None
        return self.items.popleft()


class StreamingArm:
    """The streaming arm of one question (or session)."""

    def __init__(
        self,
        clock: Clock,
        rec: Recorder,
        plan: QuestionPlan,
        trigger: Trigger,
        reflector: Reflector,
        rules: ArmRules,
        services: Services,
        policy: SpeculationPolicy | None = None,
    ) -> None:
        self.clock = clock
        self.rec = rec
        self.plan = plan
        self.trigger = trigger
        self.reflector = reflector
        self.rules = rules
        self.services = services
        self.policy = policy or AlwaysPolicy()
        self.calls: list[Call] = []
        self.in_flight: dict[int, Call] = {}
        self.fired_prefixes: set[int] = set()
        self.finished: list[Call] = []  # completion order
        self.verdicts: dict[int, bool] = {}
        self.deferred = False
        """A fire blocked by the cap waits for a later word (``capped_fire = "defer"``)."""
        self.held: list[Call] = []
        """Calls fired on the last word, not started until the reflector's first look."""
        self.hold_at_turn_end = rules.turn_end_order == "reflector_first" and plan.end_of_turn_us == 0
        self.last_fire_t = 0
        self.heard = 0
        """Words heard so far."""
        self.input_end_at_us = -1
        """When the last word was heard (clock µs; −1: not yet)."""
        self.n_unstarted = 0
        """Calls cancelled before they started: fired but not counted as fired."""
        self.failed = False
        self.chosen: Call | None = None
        """The call whose result the answer is built from, once the reflector decided."""
        self._completions = _Inbox()
        self._freed: tuple[int, int] = (-1, 0)
        """(instant in µs, slots freed then) — ``slot_release = "after_words"``."""

    # -- input and trigger ------------------------------------------------------------

    async def run(self, turn_end: anyio.Event | None = None) -> None:
        """Hear the words, fire, reflect at end of turn, answer.

        Without ``turn_end`` the words arrive on the plan's schedule (simulation); with
        it (live input) a driver calls :meth:`hear` and :meth:`tick` as words and ticks
        come, and sets ``turn_end`` when the turn is over."""
        await self._run(turn_end)

    def hear(self, t: int) -> None:
        """Word t arrived (live input; the plan's question must already say if it is the last)."""
        self._on_word(t)

    def tick(self) -> None:
        """A time-based trigger opportunity (live input)."""
        self._on_tick()

    def revise(self, kept_t: int) -> None:
        """Live input revised every word after ``kept_t``: calls on longer prefixes asked
        a question nobody asks any more. Those in flight (or held) are cancelled
        (``revised``), finished ones are never judged, and their prefixes may fire again
        on the new words. Trigger state is not rewound: it counts words, and the new
        words after ``kept_t`` are heard as words ``kept_t + 1``, … again."""
        for call in list(self.in_flight.values()):
            if call.prefix_t > kept_t:
                self._cancel(call, "revised")
        self.held = [c for c in self.held if c.prefix_t <= kept_t]
        self.finished = [c for c in self.finished if c.prefix_t <= kept_t]
        self.fired_prefixes = {t for t in self.fired_prefixes if t <= kept_t}
        self.heard = min(self.heard, kept_t)
        self.last_fire_t = min(self.last_fire_t, kept_t)

    async def _run(self, turn_end: anyio.Event | None = None) -> None:
        clock, rec, plan = self.clock, self.rec, self.plan
        origin = rec.origin_us
        self.policy.session_started()
        if turn_end is None:
            # Words and ticks need no waiting, only reacting: timers, in the kernel's order.
            for at_us, priority, word_t in input_schedule(plan, self.trigger.tick_us):
                clock.call_at_us(origin + at_us, priority, partial(self._on_word, word_t) if word_t else self._on_tick)
            await clock.sleep_until_us(origin + plan.turn_end_us, Priority.TURN_END)
        else:
            await turn_end.wait()
        chosen = self.chosen = await self._reflect()
        if chosen is None:  # the fallback call was rejected: the session failed
            return
        rec.emit("respond", arm="streaming", call=chosen.idx, prefix_t=chosen.prefix_t)
        answered = anyio.Event()
        respond(self.services, rec, arm="streaming", f_us=plan.f_us, on_ready=answered.set, on_lost=lambda: self._fail(answered))
        await answered.wait()
        if not self.failed and self.input_end_at_us >= 0:
            speculative = sum(1 for call in self.calls if call.by == "trigger")
            extra = len(self.calls) - self.n_unstarted - 1  # calls fired − 1, as a load run counts them
            self.policy.session_answered(clock.now_us() - self.input_end_at_us, speculative, extra)

    def _on_word(self, t: int) -> None:
        self.heard = t
        self.rec.emit("word", word=t)
        n = self.plan.question.n_words
        if t == n:
            self.input_end_at_us = self.clock.now_us()
            self.rec.emit("input_end", n_words=n)
        if self.trigger.on_word(t) or self.deferred:
            self._opportunity(t)

    def _on_tick(self) -> None:
        if self.trigger.on_tick(self.heard):
            self._opportunity(self.heard)

    def _opportunity(self, t: int) -> None:
        if t < 1 or t in self.fired_prefixes:
            self.deferred = False
            return
        if self.trigger.kills_in_flight:
            for call in list(self.in_flight.values()):
                self._cancel(call, "replaced")
        elif self.rules.max_threads is not None and self._occupied() >= self.rules.max_threads:
            if self.rules.capped_fire == "defer":
                self.deferred = True
                self.rec.emit("skip", prefix_t=t, reason="deferred")
            else:
                self.rec.emit("skip", prefix_t=t, reason="cap")
                self.trigger.fired(t)  # drop: the interval restarts as if it had fired
            return
        refused = self.policy.refuse(t - self.last_fire_t, self.services.tool.load())
        if refused is not None:
            self.deferred = False
            self.rec.emit("skip", prefix_t=t, reason=refused)
            self.trigger.fired(t)
            return
        self.deferred = False
        if self.policy.coalesce and self._reaim(t):
            self.trigger.fired(t)
            return
        self._fire(t, "trigger")
        self.trigger.fired(t)

    def _occupied(self) -> int:
        """Slots taken for a fire now: calls in flight, plus (``after_words``) the calls
        that completed at this very instant, whose slots are freed only after it."""
        at_us, n_freed = self._freed
        return len(self.in_flight) + (n_freed if at_us == self.clock.now_us() else 0)

    def _reaim(self, t: int) -> bool:
        """``coalesce``: re-aim this session's speculative call still waiting for its G."""
        for waiting in self.in_flight.values():
            job = waiting.job
            if waiting.speculative and not waiting.started and job is not None and job.state == "queued":
                self.rec.emit("reaim", call=waiting.idx, prefix_t=t, was=waiting.prefix_t)
                waiting.prefix_t = t
                job.work_us = self.plan.g_us[t - 1]  # the new prefix's work, in the old place
                self.fired_prefixes.add(t)
                self.last_fire_t = t
                return True
        return False

    def _fire(self, t: int, by: str) -> Call:
        call = Call(len(self.calls) + 1, t, "streaming", by)
        self.calls.append(call)
        self.in_flight[call.idx] = call
        self.fired_prefixes.add(t)
        if by == "trigger":
            self.last_fire_t = t
        self.rec.emit("fire", arm="streaming", call=call.idx, prefix_t=t, by=by)
        if by == "trigger" and self.hold_at_turn_end and t == self.plan.question.n_words:
            self.held.append(call)  # the reflector looks first (the anchor's order)
        else:
            self._start(call)
        return call

    def _start(self, call: Call) -> None:
        launch(
            call,
            self.services,
            self.rec,
            self.plan,
            on_result=self._on_result,
            on_lost=self._on_lost,
            submit_tool=self._submit_tool if self.policy.coalesce else None,
        )

    def _submit_tool(self, call: Call, job: Job) -> None:
        """``coalesce``: the newer speculative call takes the tool-queue place of this
        session's older speculative call still waiting there (superseded)."""
        if call.speculative:
            for older in list(self.in_flight.values()):
                waiting = older.job
                is_candidate = older is not call and older.speculative and waiting is not None and waiting.stage == "L"
                if is_candidate and self.services.tool.replace(waiting, job):  # type: ignore[arg-type]
                    del self.in_flight[older.idx]
                    self.rec.emit("cancel", arm="streaming", call=older.idx, reason="superseded")
                    return
        self.services.tool.submit(job)

    def _on_result(self, call: Call) -> None:
        del self.in_flight[call.idx]
        if self.rules.slot_release == "after_words":
            now_us = self.clock.now_us()
            at_us, n_freed = self._freed
            self._freed = (now_us, n_freed + 1 if at_us == now_us else 1)
        self.finished.append(call)
        self._completions.put(call)

    def _on_lost(self, call: Call) -> None:
        """A full queue rejected a stage of the call: speculative, the call is lost;
        the fallback call on the full query, the session fails."""
        self.in_flight.pop(call.idx, None)
        self._completions.put(call)  # wakes a reflector waiting on it

    def _cancel(self, call: Call, reason: str) -> None:
        call.cancel()
        del self.in_flight[call.idx]
        self.rec.emit("cancel", arm="streaming", call=call.idx, reason=reason)

    def _fail(self, answered: anyio.Event | None = None) -> None:
        self.failed = True
        self.rec.emit("failed", arm="streaming")
        if answered is not None:
            answered.set()

    # -- reflector --------------------------------------------------------------------

    def _judge(self, candidates: list[Call]) -> Call | None:
        """The first sufficient call among the policy's pick of ``candidates``."""
        by_idx = {c.idx: c for c in candidates}
        for idx, t in self.reflector.pick([(c.idx, c.prefix_t) for c in candidates]):
            known = self.verdicts.get(idx)
            if known is None:
                verdict = self.reflector.judge(t)
                known = self.verdicts[idx] = verdict.sufficient
                self.rec.emit(
                    "check",
                    call=idx,
                    prefix_t=t,
                    sufficient=verdict.sufficient,
                    score=verdict.score,
                    coverage=verdict.coverage,
                )
            if known:
                return by_idx[idx]
        return None

    def _decide(self, call: Call, outcome: str) -> Call:
        self.rec.emit("decision", outcome=outcome, call=call.idx, prefix_t=call.prefix_t)
        for held in self.held:
            self._cancel(held, "unstarted")
            self.n_unstarted += 1
        self.held = []
        for other in list(self.in_flight.values()):
            self._cancel(other, "reflector")
        return call

    async def _reflect(self) -> Call | None:
        rec, reflector = self.rec, self.reflector
        rec.emit("reflect", finished=tuple(c.idx for c in self.finished), in_flight=tuple(self.in_flight))
        if reflector.check_us:
            await self.clock.sleep_us(reflector.check_us, Priority.COMPLETION)
        self._completions.clear()  # the results in so far are judged now, from self.finished
        chosen = self._judge(list(self.finished))
        if chosen is not None:
            return self._decide(chosen, "speculative")
        for call in self.held:  # the reflector waits: the calls fired on the last word start
            self._start(call)
        self.held = []
        while self.in_flight:
            call = await self._completions.get()
            if call.lost:
                continue
            candidates = list(self.finished) if self.rules.rejudge == "best_of_completed" else [call]
            chosen = self._judge(candidates)
            if chosen is not None:
                return self._decide(chosen, "speculative")
        # Mis-fire: no speculative result is sufficient; answer from the full query.
        n = self.plan.question.n_words
        if self.rules.fallback == "reuse":
            full = next((c for c in self.finished if c.prefix_t == n), None)
            if full is not None:
                return self._decide(full, "fallback")
        rec.emit("decision", outcome="fallback", call=None, prefix_t=n)
        call = self._fire(n, "reflector")
        while (done := await self._completions.get()) is not call:  # pragma: no cover - only call in flight
            pass
        if done.lost:
            self._fail()
            return None
        return done


async def simulate_question(
    clock: Clock,
    plan: QuestionPlan,
    trigger: Trigger,
    reflector: Reflector,
    rules: ArmRules,
    rec: Recorder,
    services: Services | None = None,
) -> None:
    """Run both arms of one question; its events land in ``rec``.

    The question arrives at ``rec.origin_us`` on ``clock``; ``services`` default to
    unlimited capacity.
    """
    services = services or Services.unlimited(clock)
    baseline = BaselineArm(clock, rec, plan, services)
    await StreamingArm(clock, rec, plan, trigger, reflector, rules, services).run()
    await baseline.finished.wait()
