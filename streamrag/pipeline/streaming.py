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
runs one arm per session (:mod:`streamrag.simulator.load.run`).

Common random numbers: a call on prefix t always takes ``plan.g_us[t-1]`` and
``plan.l_us[t-1]`` of work whichever arm fires it, and both arms share ``plan.f_us``; so
trigger ``none`` saves exactly 0 on unlimited capacity and a mis-fire costs exactly the
reflector's waiting.

Waits carry a :class:`~streamrag.engine.clock.Priority` so that same-instant events
follow the engine's rule: completions, then words, then ticks, then end of turn.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import anyio

from streamrag.base.errors import StreamragError
from streamrag.engine.clock import Clock, Priority, Timer
from streamrag.engine.resources import SPECULATIVE, Job
from streamrag.engine.trace import Recorder
from streamrag.pipeline.arm import ArmMachine, ArmRules, input_schedule
from streamrag.pipeline.baseline import BaselineArm
from streamrag.pipeline.calls import Call, Services, launch, respond
from streamrag.pipeline.plan import QuestionPlan
from streamrag.pipeline.policies import AlwaysPolicy, SpeculationPolicy
from streamrag.pipeline.reflectors import Reflector
from streamrag.pipeline.triggers import Trigger


class StreamingArm:
    """The streaming arm of one question (or session): the arm's state machine
    (:class:`~streamrag.pipeline.arm.ArmMachine`) driven on ``clock``, its calls run on
    ``services``, its speculation ``policy`` consulted for every fire."""

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
        self.services = services
        self.policy = policy or AlwaysPolicy()
        self.machine = ArmMachine(
            plan.question,
            trigger,
            reflector,
            rules,
            self,
            rec,
            end_of_turn_us=plan.end_of_turn_us,
            endpoint=plan.endpoint,
            refuse=self._refuse,
            reaim=self._reaim if self.policy.coalesce else None,
        )
        self.input_end_at_us = -1
        """When the last word was heard (clock µs; −1: not yet)."""
        self.failed = False
        self.error: StreamragError | None = None
        """A user's reflector failed while judging: :meth:`run` raises it."""
        self._decided = anyio.Event()
        self._ranks: dict[int, Job | Timer] = {}
        """Rankings still out (``rules.ranking`` tool: a job on the tool; local: a timer)."""
        self._rank_on_tool = rules.ranking == "tool"
        self._deferral = rules.mutating == "deferral" or plan.holds_tools
        self._tool_stages: dict[int, Callable[[], None]] = {}
        """What starts the tool stage of each call that may be deferred (``mutating = "deferral"``,
        or an eager end of turn whose tools wait for the confirmation)."""

    @property
    def calls(self) -> list[Call]:
        return self.machine.calls

    @property
    def in_flight(self) -> dict[int, Call]:
        return self.machine.in_flight

    @property
    def chosen(self) -> Call | None:
        """The call whose result the answer is built from (None: not decided, or the
        fallback call was lost)."""
        return self.machine.chosen

    # -- input ------------------------------------------------------------------------

    async def run(self, turn_end: anyio.Event | None = None) -> None:
        """Hear the words, fire, reflect at end of turn, answer.

        Without ``turn_end`` the words arrive on the plan's schedule (simulation); with
        it (live input) a driver calls :meth:`hear` and :meth:`tick` as words and ticks
        come, and sets ``turn_end`` when the turn is over."""
        try:
            await self._run(turn_end)
        finally:
            self.machine.close()

    async def _run(self, turn_end: anyio.Event | None) -> None:
        clock, rec, plan, machine = self.clock, self.rec, self.plan, self.machine
        origin = rec.origin_us
        self.policy.session_started()
        if turn_end is None:
            # Words and ticks need no waiting, only reacting: timers, in the kernel's order.
            for at_us, priority, word_t in input_schedule(plan.word_us, self.trigger.tick_us):
                clock.call_at_us(origin + at_us, priority, partial(self.hear, word_t) if word_t else self.tick)
            if plan.holds_tools:  # an eager start: tools wait for the confirmation
                clock.call_at_us(origin + plan.confirm_us, Priority.TURN_END, machine.confirmed)
            await clock.sleep_until_us(origin + plan.turn_end_us, Priority.TURN_END)
        else:
            await turn_end.wait()
        machine.reflect()
        if self.reflector.check_us:
            await clock.sleep_us(self.reflector.check_us, Priority.COMPLETION)
        self._guarded(machine.first_look)
        await self._decided.wait()
        if self.error is not None:
            raise self.error
        chosen = self.machine.chosen
        if chosen is None:  # the fallback call was rejected: the session failed
            return
        rec.emit("respond", arm="streaming", call=chosen.idx, prefix_t=chosen.prefix_t)
        answered = anyio.Event()
        respond(self.services, rec, arm="streaming", f_us=plan.f_us, on_ready=answered.set, on_lost=lambda: self._fail(answered))
        await answered.wait()
        if not self.failed and self.input_end_at_us >= 0:
            speculative = sum(1 for call in machine.calls if call.by == "trigger")
            extra = machine.n_tool_calls - 1  # tool calls − 1, as a load run and the frontier count them
            self.policy.session_answered(clock.now_us() - self.input_end_at_us, speculative, extra)

    def hear(self, t: int) -> None:
        """Word t arrived (live input: the plan's question must already say if it is the last)."""
        now_us = self.clock.now_us()
        if t == self.plan.question.n_words:
            self.input_end_at_us = now_us
        self.machine.word(t, now_us)

    def tick(self) -> None:
        """A time-based trigger opportunity (live input)."""
        self.machine.tick(self.clock.now_us())

    def revise(self, kept_t: int) -> None:
        """Live input revised every word after ``kept_t`` (:meth:`ArmMachine.revise`)."""
        self.machine.revise(kept_t)

    # -- the machine's actions --------------------------------------------------------

    def start(self, call: Call) -> None:
        chain = launch(
            call,
            self.services,
            self.rec,
            self.plan,
            on_result=self._on_result,
            on_lost=self.machine.lost,
            submit_tool=self._submit_tool if self.policy.coalesce else None,
            on_generated=self.machine.generated if self._deferral else None,
        )
        if self._deferral:
            self._tool_stages[call.idx] = chain.tool

    def execute(self, call: Call) -> None:
        self._tool_stages.pop(call.idx)()

    def stop(self, call: Call) -> None:
        call.cancel()

    def rank(self, t: int) -> None:
        """Rank prefix t: a search on the tool (speculative work), or the local index's time."""
        work_us = self.plan.rank_us[t - 1]
        if self._rank_on_tool:
            job = Job(
                work_us,
                job_class=SPECULATIVE,
                on_done=partial(self._ranked, t, True),
                on_reject=partial(self._ranked, t, False),
                rec=self.rec,
                stage="R",
                call=-t,
                arm="streaming",
                prefix_t=t,
            )
            self._ranks[t] = job
            self.services.tool.submit(job)
        else:
            done = partial(self._ranked, t, True)
            self._ranks[t] = self.clock.call_at_us(self.clock.now_us() + work_us, Priority.COMPLETION, done)

    def unrank(self, t: int) -> None:
        self._ranks.pop(t).cancel()

    def _ranked(self, t: int, ok: bool) -> None:
        del self._ranks[t]
        self.machine.ranked(t, self.clock.now_us(), ok)

    def answer(self, call: Call) -> None:
        self._decided.set()

    def fail(self) -> None:
        self._fail(self._decided)

    def _fail(self, wake: anyio.Event) -> None:
        self.failed = True
        self.rec.emit("failed", arm="streaming")
        wake.set()

    def _on_result(self, call: Call) -> None:
        self._guarded(self.machine.completed, call, self.clock.now_us())

    def _guarded(self, step: Callable[..., None], *args: Any) -> None:
        """Run a step of the machine that may judge: a user's reflector that fails
        ends the turn with its error (raised by :meth:`run`)."""
        try:
            step(*args)
        except StreamragError as exc:
            self.error = exc
            self._decided.set()

    # -- speculation policies ---------------------------------------------------------

    def _refuse(self, words_since_fire: int) -> str | None:
        return self.policy.refuse(words_since_fire, self.services.tool.load())

    def _reaim(self, t: int) -> bool:
        """``coalesce``: re-aim this session's speculative call still waiting for its G."""
        for waiting in self.machine.in_flight.values():
            job = waiting.job
            if waiting.speculative and not waiting.started and job is not None and job.state == "queued":
                self.rec.emit("reaim", call=waiting.idx, prefix_t=t, was=waiting.prefix_t)
                waiting.prefix_t = t
                job.work_us = self.plan.g_us[t - 1]  # the new prefix's work, in the old place
                return True
        return False

    def _submit_tool(self, call: Call, job: Job) -> None:
        """``coalesce``: the newer speculative call takes the tool-queue place of this
        session's older speculative call still waiting there (superseded)."""
        if call.speculative:
            for older in list(self.machine.in_flight.values()):
                waiting = older.job
                is_candidate = older is not call and older.speculative and waiting is not None and waiting.stage == "L"
                if is_candidate and self.services.tool.replace(waiting, job):  # type: ignore[arg-type]
                    self.machine.withdraw(older, "superseded")
                    return
        self.services.tool.submit(job)


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
