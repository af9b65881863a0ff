"""The baseline arm: no streaming; at end of turn one call on the full query, then F."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from streamrag.engine.clock import Clock, Priority
from streamrag.engine.trace import Recorder
from streamrag.pipeline.calls import Call, Services, launch, respond
from streamrag.pipeline.plan import QuestionPlan


class BaselineArm:
    """The non-streaming arm: at end of turn, G + L on the full query, then F.

    Driven by timers and the resources' callbacks; :attr:`finished` is set when its
    answer is ready (or the session failed: a confirmed stage was rejected). It starts
    at the plan's end of turn, or, with ``at_turn_end=False`` (live input, whose end is
    not known in advance), when the driver calls :meth:`start`."""

    def __init__(
        self,
        clock: Clock,
        rec: Recorder,
        plan: QuestionPlan,
        services: Services,
        on_done: Callable[[], object] | None = None,
        *,
        at_turn_end: bool = True,
    ) -> None:
        self.clock = clock
        self.rec = rec
        self.plan = plan
        self.services = services
        self.finished = anyio.Event()
        self._on_done = on_done
        self._tool: Callable[[], None] | None = None
        self._held: Callable[[], None] | None = None
        """The call's tool stage, held for the confirmed end of turn (``plan.holds_tools``)."""
        self._confirmed = not plan.holds_tools
        if at_turn_end:
            clock.call_at_us(rec.origin_us + plan.turn_end_us, Priority.TURN_END, self.start)
            if plan.holds_tools:
                clock.call_at_us(rec.origin_us + plan.confirm_us, Priority.TURN_END, self._confirm)

    def start(self) -> None:
        """End of turn: the call on the full query."""
        n = self.plan.question.n_words
        call = Call(1, n, "baseline", "baseline")
        self.rec.emit("fire", arm="baseline", call=1, prefix_t=n, by="baseline")
        chain = launch(
            call,
            self.services,
            self.rec,
            self.plan,
            on_result=self._respond,
            on_lost=lambda _call: self._fail(),
            on_generated=None if self._confirmed else self._generated,
        )
        if not self._confirmed:  # kept only while it may be held (a chain → arm → chain cycle until then)
            self._tool = chain.tool

    def _generated(self, call: Call) -> bool:
        """G ended: the tool stage waits for the confirmed end of turn (an eager start whose tools wait)."""
        if self._confirmed:
            return True
        self.rec.emit("defer", arm="baseline", call=1, prefix_t=call.prefix_t)
        self._held, self._tool = self._tool, None
        return False

    def _confirm(self) -> None:
        self._confirmed = True
        self._tool = None
        held, self._held = self._held, None
        if held is not None:
            self.rec.emit("execute", arm="baseline", call=1, prefix_t=self.plan.question.n_words)
            held()

    def _respond(self, call: Call) -> None:
        self.rec.emit("respond", arm="baseline", call=1, prefix_t=call.prefix_t)
        respond(self.services, self.rec, arm="baseline", f_us=self.plan.f_us, on_ready=self._finish, on_lost=self._fail)

    def _fail(self) -> None:
        self.rec.emit("failed", arm="baseline")
        self._finish()

    def _finish(self) -> None:
        self.finished.set()
        if self._on_done is not None:
            self._on_done()
