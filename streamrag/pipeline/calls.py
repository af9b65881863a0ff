"""Calls as chains of jobs on shared resources: G on an LLM, then L on the tool; F after.

A tool call (a "thread" in the anchor's words) is query generation G on the query LLM,
then the tool call L on the retrieval backend; its result is the top-k of its prefix.
Response generation F runs on the response LLM. Each stage is a
:class:`~streamrag.engine.resources.Job`: it may wait in a queue, be rejected by a full
queue, or be cancelled. The chain is driven by the resources' callbacks — no task per
call — so the same code serves one question on unlimited capacity (the per-question
replay) and 10⁵ sessions sharing a few servers (load runs).

Trace events of a call, in order: ``thread_start`` (G begins), ``gen_done`` (G ends, L
submitted), ``tool_done`` (the result is in); with finite resources also the resource's
``enqueue`` / ``serve`` / ``finish`` / ``cancel`` / ``reject``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from streamrag.engine.clock import Clock
from streamrag.engine.resources import CONFIRMED, SPECULATIVE, Job, Resource, Unlimited
from streamrag.engine.trace import Recorder
from streamrag.pipeline.question import SimQuestion


class StagePlan(Protocol):
    """The drawn work of a question's stages (a :class:`~streamrag.pipeline.streaming.QuestionPlan`)."""

    @property
    def question(self) -> SimQuestion: ...

    @property
    def g_us(self) -> Sequence[int]: ...

    @property
    def l_us(self) -> Sequence[int]: ...


@dataclass(frozen=True, slots=True)
class Services:
    """What one session's stages run on (one object may serve several roles)."""

    query_llm: Resource
    """Query generation G."""
    tool: Resource
    """The tool call L (retrieval)."""
    response_llm: Resource
    """Response generation F."""

    @staticmethod
    def unlimited(clock: Clock) -> Services:
        """No capacity limit anywhere: every stage starts at once."""
        free = Unlimited(clock)
        return Services(free, free, free)


class Call:
    """One tool call on ``prefix_t`` by one arm."""

    __slots__ = (
        "arm",
        "by",
        "done",
        "gen_end_us",
        "idx",
        "job",
        "lost",
        "prefix_t",
        "stage",
        "started",
        "started_us",
        "timed_out",
        "tool_at_us",
    )

    def __init__(self, idx: int, prefix_t: int, arm: str, by: str) -> None:
        self.idx = idx
        self.prefix_t = prefix_t
        self.arm = arm
        self.by = by
        self.job: Job | None = None
        self.started = False
        self.done = False
        self.lost = False
        self.timed_out = False
        """Lost because the tool did not answer in time (outcome ``timed_out``)."""
        self.stage = 0
        """Where the call is, for a driver that tracks stages itself (the closed form)."""
        self.started_us = 0
        """When its query generation started, for such a driver."""
        self.gen_end_us = 0
        """When its query generation ended, for such a driver."""
        self.tool_at_us = 0
        """When its tool stage started, for such a driver."""

    @property
    def speculative(self) -> bool:
        return self.by == "trigger"

    def cancel(self) -> None:
        """Withdraw whatever stage the call is in (queued or in service)."""
        if self.job is not None:
            self.job.cancel()
            self.job = None


def launch(
    call: Call,
    services: Services,
    rec: Recorder,
    plan: StagePlan,
    *,
    on_result: Callable[[Call], object],
    on_lost: Callable[[Call], object],
    submit_tool: Callable[[Call, Job], object] | None = None,
    on_generated: Callable[[Call], bool] | None = None,
) -> _Chain:
    """Start ``call``: G, then L; ``on_result(call)`` when its result is in,
    ``on_lost(call)`` when a full queue rejected one of its stages; ``submit_tool``
    (default: the tool's ``submit``) places the L job; ``on_generated(call)`` (a mutating
    tool's deferral) says at the end of G whether L starts now — if not, the chain's
    :meth:`~_Chain.tool` starts it later, or the call was dropped.

    Each stage's work is read from ``plan`` for the call's prefix *when the stage is
    submitted*, so a call re-aimed while it waits (``coalesce``) does its new prefix's work.
    """
    chain = _Chain(call, services, rec, plan, on_result, on_lost, submit_tool, on_generated)
    chain.start()
    return chain


class _Chain:
    """The stages of one call, advanced by the resources' callbacks."""

    __slots__ = ("call", "job_class", "on_generated", "on_lost", "on_result", "plan", "rec", "services", "submit_tool")

    def __init__(
        self,
        call: Call,
        services: Services,
        rec: Recorder,
        plan: StagePlan,
        on_result: Callable[[Call], object],
        on_lost: Callable[[Call], object],
        submit_tool: Callable[[Call, Job], object] | None,
        on_generated: Callable[[Call], bool] | None = None,
    ) -> None:
        self.call = call
        self.on_generated = on_generated
        self.services = services
        self.rec = rec
        self.plan = plan
        self.on_result = on_result
        self.on_lost = on_lost
        self.submit_tool = submit_tool
        self.job_class = SPECULATIVE if call.speculative else CONFIRMED

    def start(self) -> None:
        call = self.call
        call.job = Job(
            self.plan.g_us[call.prefix_t - 1],
            job_class=self.job_class,
            on_start=self.gen_start,
            on_done=self.gen_done,
            on_reject=self.lost,
            rec=self.rec,
            stage="G",
            call=call.idx,
            arm=call.arm,
            prefix_t=call.prefix_t,
        )
        self.services.query_llm.submit(call.job)

    def gen_start(self) -> None:
        self.call.started = True
        self.rec.emit("thread_start", arm=self.call.arm, call=self.call.idx)

    def gen_done(self) -> None:
        call = self.call
        if self.on_generated is not None and not self.on_generated(call):
            return  # deferred until the turn is confirmed (tool() then), or dropped
        self.rec.emit("gen_done", arm=call.arm, call=call.idx)
        self.tool()

    def tool(self) -> None:
        """Submit the tool stage L."""
        call = self.call
        call.job = Job(
            self.plan.l_us[call.prefix_t - 1],
            job_class=self.job_class,
            on_done=self.tool_done,
            on_reject=self.lost,
            rec=self.rec,
            stage="L",
            call=call.idx,
            arm=call.arm,
            prefix_t=call.prefix_t,
        )
        if self.submit_tool is None:
            self.services.tool.submit(call.job)
        else:
            self.submit_tool(call, call.job)

    def tool_done(self) -> None:
        call = self.call
        call.done = True
        call.job = None  # finished: dropping it breaks the call -> job -> chain -> call cycle
        self.rec.emit("tool_done", arm=call.arm, call=call.idx, prefix_t=call.prefix_t, top=self.plan.question.top(call.prefix_t))
        self.on_result(call)

    def lost(self) -> None:
        call = self.call
        call.timed_out = call.job is not None and call.job.timed_out
        call.job = None
        call.lost = True
        self.on_lost(call)


def respond(
    services: Services,
    rec: Recorder,
    *,
    arm: str,
    f_us: int,
    on_ready: Callable[[], object],
    on_lost: Callable[[], object],
) -> Job:
    """Response generation F (confirmed work): ``answer_ready`` when it ends."""

    def ready() -> None:
        rec.emit("answer_ready", arm=arm)
        on_ready()

    job = Job(f_us, job_class=CONFIRMED, on_done=ready, on_reject=on_lost, rec=rec, stage="F", arm=arm)
    services.response_llm.submit(job)
    return job
