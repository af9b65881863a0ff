"""Closed-form replay: a question on unlimited capacity, without the event loop.

A question replayed alone on unlimited capacity needs no event loop: every call starts
when it is fired and ends ``g + l`` later, and nothing waits for a server. What the
virtual loop does for it — resolve one wake-up at a time in ``(t_us, priority, seq)``
order (:mod:`streamrag.engine.loop`), and run the arm's task right after the callback
that woke it — is restated here as a plain heap drained in a loop
(:class:`SyncKernel`). The *rules* are not restated: the same
:class:`~streamrag.pipeline.streaming.StreamingArm`,
:class:`~streamrag.pipeline.baseline.BaselineArm`, triggers, reflectors, calls and
:class:`~streamrag.engine.resources.Unlimited` resources run on it, and only the arm's
two waits (end of turn, the reflector waiting for a completion) become continuations
(:class:`_Reflecting`). So the trace is the engine's, event for event and byte for byte
(tested on random populations), and ``results.csv`` is derived from it as before.

What has no closed form stays on the engine (:func:`engine_reason`): shared capacity
(``[load]``), finite resources, a speculation policy other than ``always`` (they read
the resources' load), live input. ``manifest.json`` and ``summary.json`` say which ran
(``"replay": "closed_form" | "engine"``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from heapq import heappop, heappush
from typing import Any

from streamrag.engine.clock import Priority
from streamrag.engine.loop import KernelTimer
from streamrag.engine.trace import Recorder
from streamrag.pipeline.baseline import BaselineArm
from streamrag.pipeline.calls import Call, Services
from streamrag.pipeline.plan import QuestionPlan
from streamrag.pipeline.streaming import Inbox, StreamingArm
from streamrag.simulator.scenario import ResolvedScenario

CLOSED_FORM = "closed_form"
ENGINE = "engine"


def engine_reason(rs: ResolvedScenario) -> str | None:
    """Why ``rs`` must run on the event engine, or None when the closed form replays it."""
    sc = rs.scenario
    if sc.load is not None:
        return "shared capacity ([load])"
    if sc.resources.limited:
        return "finite resources ([resources])"
    if sc.policy.kind != "always":
        return f"policy.kind {sc.policy.kind!r} reads the resources' load"
    return None


class SyncKernel:
    """The virtual loop's ordering for one question, without asyncio: a heap of timers
    ``(t_us, priority, seq)`` resolved one at a time; after each, the continuation it
    woke (:attr:`resume`) runs before the next — as the loop runs a woken task before
    it resolves the next wake-up. A :class:`~streamrag.engine.clock.Clock` for code that
    only reacts (timers); nothing may *wait* on it."""

    __slots__ = ("_heap", "_now_us", "_seq", "resume")

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, int, KernelTimer]] = []
        self._now_us = 0
        self._seq = 0
        self.resume: Callable[[], object] | None = None

    def now_us(self) -> int:
        return self._now_us

    def call_at_us(self, at_us: int, priority: int, callback: Callable[[], object]) -> KernelTimer:
        timer = KernelTimer(callback)
        self._seq += 1
        heappush(self._heap, (at_us if at_us > self._now_us else self._now_us, priority, self._seq, timer))
        return timer

    async def sleep_us(self, duration_us: int, priority: int = Priority.DEFAULT) -> None:
        raise TypeError("SyncKernel: nothing waits on a synchronous replay; schedule a continuation (call_at_us)")

    async def sleep_until_us(self, at_us: int, priority: int = Priority.DEFAULT) -> None:
        raise TypeError("SyncKernel: nothing waits on a synchronous replay; schedule a continuation (call_at_us)")

    def run(self) -> None:
        """Resolve every timer, in order."""
        heap = self._heap
        while heap:
            at_us, _, _, timer = heappop(heap)
            if timer.cancelled:
                continue
            self._now_us = at_us
            timer.callback()
            while self.resume is not None:
                resume, self.resume = self.resume, None
                resume()


class _Handoff(Inbox):
    """The arm's inbox of finished calls, handing each straight to a waiting reflector
    (the engine's reflector always waits on an empty inbox: a completion wakes it, and
    it judges before the next one lands)."""

    __slots__ = ("kernel", "then")

    def __init__(self, kernel: SyncKernel) -> None:
        super().__init__()
        self.kernel = kernel
        self.then: Callable[[Call], object] | None = None

    def put(self, call: Call) -> None:
        if self.then is not None:
            then, self.then = self.then, None
            self.kernel.resume = partial(then, call)

    def clear(self) -> None:
        return None  # nothing is kept: a completion nobody waits for is in arm.finished


class _Reflecting:
    """The streaming arm's ``_run``/``_reflect`` as continuations: the same steps
    (:meth:`StreamingArm.first_look`, ``look_again``, ``fall_back``, ``respond``), each
    resumed where the async version awaits."""

    __slots__ = ("arm", "inbox", "kernel")

    def __init__(self, kernel: SyncKernel, arm: StreamingArm) -> None:
        self.kernel = kernel
        self.arm = arm
        self.inbox = arm._completions = _Handoff(kernel)

    def start(self) -> None:
        arm = self.arm
        arm.schedule_input()
        self.kernel.call_at_us(arm.rec.origin_us + arm.plan.turn_end_us, Priority.TURN_END, self._turn_end)

    def _turn_end(self) -> None:
        arm = self.arm
        arm.reflect_start()
        check_us = arm.reflector.check_us
        if check_us:
            self.kernel.call_at_us(self.kernel.now_us() + check_us, Priority.COMPLETION, self._first_look)
        else:
            self._first_look()

    def _first_look(self) -> None:
        chosen = self.arm.first_look()
        if chosen is None:
            self._wait()
        else:
            self._answer(chosen)

    def _wait(self) -> None:
        if self.arm.in_flight:
            self.inbox.then = self._completed
            return
        call, reused = self.arm.fall_back()
        if reused:
            self._answer(call)
        else:
            self.inbox.then = self._answer  # the fallback call: the only one in flight

    def _completed(self, call: Call) -> None:
        chosen = self.arm.look_again(call)
        if chosen is None:
            self._wait()
        else:
            self._answer(chosen)

    def _answer(self, chosen: Call) -> None:
        arm = self.arm
        arm.chosen = chosen
        arm.respond(chosen, on_ready=_ready, on_lost=arm._fail)


def _ready() -> None:
    return None  # the answer is in the trace; nothing waits for it


def replay_events(plan: QuestionPlan, rs: ResolvedScenario, *, validate: bool = False) -> list[dict[str, Any]]:
    """Both arms of one planned question on unlimited capacity: its trace events, as
    :func:`~streamrag.simulator.simulate.replay_question` records them on the engine."""
    q = plan.question
    kernel = SyncKernel()
    rec = Recorder(q.interaction_id, kernel, 0, validate=validate)
    services = Services.unlimited(kernel)
    BaselineArm(kernel, rec, plan, services)
    sc = rs.scenario
    arm = StreamingArm(kernel, rec, plan, sc.trigger.build(q), sc.reflector.build(q), rs.arm_rules, services)
    _Reflecting(kernel, arm).start()
    kernel.run()
    return rec.events
