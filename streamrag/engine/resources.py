"""Resources: the tool backend and the LLM that every call of every session shares.

A *job* is one stage of one call — query generation G or response F on an LLM, the tool
call L on the retrieval backend — with the service it needs (``work_us``: its duration
alone on an idle server). A resource serves jobs; it reacts to arrivals, completions and
cancellations with kernel timers (:meth:`~streamrag.engine.clock.Clock.call_at_us`), so
thousands of sessions share it without a task per job.

Kinds (config ``kind``):

- ``unlimited`` — every job starts at once and takes its work (the per-question replay:
  no queue, no events);
- ``servers`` — ``servers`` identical servers and a queue. ``discipline``: ``fifo``, or
  ``priority`` (confirmed work — a fallback call, response generation, the baseline —
  ahead of speculative calls; FIFO within a class). ``queue_limit``: a job that finds
  that many waiting is rejected (``None``: unbounded). ``cancel``: ``frees`` — a
  cancelled job leaves its server at once; ``completes`` — the server keeps working
  until the job's end and only the result is dropped (an HTTP call cannot be recalled);
- ``batching`` — an LLM serving up to ``max_batch`` requests at once by continuous
  batching: with b requests in service each progresses at rate ``1 / s(b)``,
  ``s(b) = 1 + slowdown · (b − 1)`` — the time per generated token grows linearly with
  the batch (processor sharing with a linear slowdown; see ``calibration/sources.toml``,
  key ``batching``, for where the curve's form and default slope come from); further
  requests wait in a FIFO (or priority) queue.

Every finite resource keeps the integrals a report needs (busy server-time, time-average
queue length and number in system, waits, rejections) and, when the job carries a
recorder, emits ``enqueue`` / ``serve`` / ``finish`` / ``withdraw`` / ``reject`` events into
that session's trace with the server index (one track per server in the Perfetto view).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from streamrag.engine.clock import Clock, Priority, Timer

CONFIRMED = 0
"""Job class of confirmed work: the baseline, a fallback call, response generation."""
SPECULATIVE = 1
"""Job class of speculative calls (fired before the reflector decided)."""

JobState = Literal["new", "queued", "running", "done", "cancelled", "rejected", "detached"]


class JobRecorder(Protocol):
    """Where a resource reports what happened to a job (a session's trace recorder)."""

    def emit(self, kind: str, **fields: Any) -> None: ...


class Job:
    """One stage of one call waiting for or holding a server."""

    __slots__ = (
        "arm",
        "arrived_us",
        "call",
        "finished_us",
        "job_class",
        "on_done",
        "on_reject",
        "on_start",
        "prefix_t",
        "rec",
        "remaining",
        "resource",
        "seq",
        "server",
        "slot",
        "stage",
        "started_us",
        "state",
        "timer",
        "work_us",
    )

    def __init__(
        self,
        work_us: int,
        *,
        job_class: int = CONFIRMED,
        on_done: Callable[[], object] | None = None,
        on_start: Callable[[], object] | None = None,
        on_reject: Callable[[], object] | None = None,
        rec: JobRecorder | None = None,
        stage: str = "",
        call: int = 0,
        arm: str = "",
        prefix_t: int = 0,
    ) -> None:
        self.work_us = work_us
        self.prefix_t = prefix_t
        """The prefix a call's G or L works on; a live resource turns it into its request
        (the words to generate a query from, the query to search)."""
        self.arm = arm
        self.job_class = job_class
        self.on_done = on_done
        self.on_start = on_start
        self.on_reject = on_reject
        self.rec = rec
        self.stage = stage
        self.call = call
        self.state: JobState = "new"
        self.server = -1
        self.arrived_us = self.started_us = self.finished_us = -1
        self.timer: Timer | None = None
        self.resource: Resource | None = None
        self.seq = 0
        self.slot: list[Job] | None = None
        self.remaining = float(work_us)

    @property
    def waited_us(self) -> int:
        return 0 if self.started_us < 0 else self.started_us - self.arrived_us

    def cancel(self) -> None:
        """Withdraw the job (a killed call): out of the queue, or off its server."""
        if self.resource is not None and self.state in ("queued", "running"):
            self.resource.cancel(self)


class Resource(Protocol):
    """Serves jobs; ``name`` is how reports and traces call it."""

    name: str

    def submit(self, job: Job) -> None: ...

    def cancel(self, job: Job) -> None: ...

    def replace(self, waiting: Job, job: Job) -> bool:
        """Put ``job`` in the queue place of ``waiting`` (withdrawn); False if it is not
        waiting in this resource's queue."""
        ...

    def load(self) -> LoadView: ...


@dataclass(frozen=True, slots=True)
class LoadView:
    """What a speculation policy may read of a resource at an instant."""

    servers: int | None
    """Servers (None: unlimited)."""
    busy: int
    queued: int

    @property
    def utilization(self) -> float:
        """Busy servers / servers now (0 for an unlimited resource)."""
        return 0.0 if not self.servers else self.busy / self.servers


# --------------------------------------------------------------------------- accounting


class Usage:
    """Time integrals of one resource over a run (µs-weighted), for its report."""

    __slots__ = (
        "busy_area",
        "cancelled",
        "completed",
        "detached_area",
        "in_system_area",
        "jobs",
        "last_us",
        "queue_area",
        "rejected",
        "sojourn_us",
        "started_us",
        "wait_us",
        "waited",
    )

    def __init__(self) -> None:
        self.busy_area = self.queue_area = self.in_system_area = self.detached_area = 0.0
        self.last_us = self.started_us = -1
        self.jobs = self.completed = self.cancelled = self.rejected = self.waited = 0
        self.wait_us = self.sojourn_us = 0

    def advance(self, now_us: int, busy: float, queued: int, detached: float = 0.0) -> None:
        """Accumulate the areas since the last change (call before every change)."""
        if self.last_us >= 0:
            dt = now_us - self.last_us
            self.busy_area += busy * dt
            self.queue_area += queued * dt
            self.in_system_area += (busy - detached + queued) * dt
            self.detached_area += detached * dt
        else:
            self.started_us = now_us
        self.last_us = now_us

    def report(self, servers: int | None, end_us: int) -> dict[str, Any]:
        """The resource's summary over ``[first event, end_us]`` (see :func:`resource_report`)."""
        span = max(1, end_us - self.started_us) if self.started_us >= 0 else 0
        out: dict[str, Any] = {
            "servers": servers,
            "jobs": self.jobs,
            "completed": self.completed,
            "cancelled": self.cancelled,
            "rejected": self.rejected,
            "span_s": span / 1e6,
            "utilization": None if not servers or not span else self.busy_area / (servers * span),
            "queue_length": {"mean": None if not span else self.queue_area / span},
            "in_system": {"mean": None if not span else self.in_system_area / span},
            "wait_ms": {"mean": None if not self.jobs else self.wait_us / self.jobs / 1000},
            "share_waited": None if not self.jobs else self.waited / self.jobs,
            "busy_s": self.busy_area / 1e6,
            "detached_busy_s": self.detached_area / 1e6,
        }
        # Little's law, L = λ·W, over the jobs that left the system (completed or cancelled
        # after waiting/serving): λ = arrivals / span, W = mean time in system.
        left = self.completed + self.cancelled
        out["littles_law"] = {
            "L": out["in_system"]["mean"],
            "lambda_per_s": None if not span else self.jobs / (span / 1e6),
            "W_s": None if not left else self.sojourn_us / left / 1e6,
        }
        return out


# --------------------------------------------------------------------------- kinds


class Unlimited:
    """Every job starts at once (no queue, no events: the per-question replay)."""

    def __init__(self, clock: Clock, name: str = "unlimited") -> None:
        self.clock = clock
        self.name = name

    def submit(self, job: Job) -> None:
        job.resource = self
        job.state = "running"
        job.arrived_us = job.started_us = self.clock.now_us()
        if job.on_start is not None:
            job.on_start()
        job.timer = self.clock.call_at_us(job.started_us + job.work_us, Priority.COMPLETION, lambda: self._done(job))

    def _done(self, job: Job) -> None:
        job.timer = None  # fired; dropping it breaks the job -> timer -> job cycle
        job.state = "done"
        job.finished_us = self.clock.now_us()
        if job.on_done is not None:
            job.on_done()

    def cancel(self, job: Job) -> None:
        if job.timer is not None:
            job.timer.cancel()
            job.timer = None
        job.state = "cancelled"

    def replace(self, waiting: Job, job: Job) -> bool:
        return False  # nothing ever waits here

    def load(self) -> LoadView:
        return LoadView(None, 0, 0)


class _Queue:
    """FIFO, or two FIFO classes (confirmed first) with lazy removal of cancelled jobs.

    Each entry holds its job in a one-element slot, so a job can take another's place
    (:meth:`replace`) without moving in the heap."""

    __slots__ = ("_heap", "_live", "_seq", "priority")

    def __init__(self, priority: bool) -> None:
        self.priority = priority
        self._heap: list[tuple[int, int, list[Job]]] = []
        self._live = 0
        self._seq = 0

    def __len__(self) -> int:
        return self._live

    def push(self, job: Job) -> None:
        self._seq += 1
        job.seq = self._seq
        job.slot = [job]
        heapq.heappush(self._heap, (job.job_class if self.priority else 0, self._seq, job.slot))
        self._live += 1

    def pop(self) -> Job | None:
        while self._heap:
            job = heapq.heappop(self._heap)[2][0]
            job.slot = None  # out of the queue (and no job -> slot -> job cycle)
            if job.state == "queued":
                self._live -= 1
                return job
        return None

    def replace(self, waiting: Job, job: Job) -> None:
        """``job`` takes the place of ``waiting`` (which leaves the queue)."""
        slot = waiting.slot
        assert slot is not None and slot[0] is waiting  # a caller bug otherwise: only queued jobs get here
        slot[0] = job
        job.slot, job.seq = slot, waiting.seq
        waiting.slot = None

    def removed(self) -> None:
        """A queued job was cancelled (it stays in the heap until popped)."""
        self._live -= 1


class Servers:
    """``servers`` identical servers and a queue (see the module docstring)."""

    def __init__(
        self,
        clock: Clock,
        *,
        name: str,
        servers: int,
        discipline: Literal["fifo", "priority"] = "fifo",
        queue_limit: int | None = None,
        cancel: Literal["frees", "completes"] = "frees",
    ) -> None:
        self.clock = clock
        self.name = name
        self.servers = servers
        self.queue_limit = queue_limit
        self.cancel_frees = cancel == "frees"
        self.queue = _Queue(discipline == "priority")
        self.free = list(range(servers - 1, -1, -1))  # pop() gives the lowest index
        self.busy = 0
        self.detached = 0
        self.usage = Usage()

    def _account(self) -> None:
        self.usage.advance(self.clock.now_us(), self.busy, len(self.queue), self.detached)

    def submit(self, job: Job) -> None:
        now = self.clock.now_us()
        self._account()
        job.resource = self
        job.arrived_us = now
        if self.free:
            self.usage.jobs += 1
            self._start(job, now)
            return
        _queue_or_reject(self, job)

    def _start(self, job: Job, now: int) -> None:
        job.server = self.free.pop()
        self.busy += 1
        job.state = "running"
        job.started_us = now
        self.usage.wait_us += now - job.arrived_us
        if job.rec is not None:
            job.rec.emit("serve", arm=job.arm, resource=self.name, stage=job.stage, call=job.call, server=job.server)
        if job.on_start is not None:
            job.on_start()
        job.timer = self.clock.call_at_us(now + job.work_us, Priority.COMPLETION, lambda: self._done(job))

    def _release(self, server: int) -> None:
        self.busy -= 1
        self.free.append(server)
        self.free.sort(reverse=True)
        nxt = self.queue.pop()
        if nxt is not None:
            self._start(nxt, self.clock.now_us())

    def _done(self, job: Job) -> None:
        job.timer = None  # fired (see Unlimited._done)
        self._account()
        now = self.clock.now_us()
        if job.state == "detached":  # cancelled, but the server worked on to the end
            self.detached -= 1
            self._release(job.server)
            return
        job.state = "done"
        job.finished_us = now
        self.usage.completed += 1
        self.usage.sojourn_us += now - job.arrived_us
        if job.rec is not None:
            job.rec.emit("finish", arm=job.arm, resource=self.name, stage=job.stage, call=job.call, server=job.server)
        self._release(job.server)
        if job.on_done is not None:
            job.on_done()

    def cancel(self, job: Job) -> None:
        self._account()
        if _withdraw(self, job, self.clock.now_us()):
            return
        if self.cancel_frees:
            job.state = "cancelled"
            if job.timer is not None:
                job.timer.cancel()
                job.timer = None
            self._release(job.server)
        else:
            job.state = "detached"
            self.detached += 1

    def replace(self, waiting: Job, job: Job) -> bool:
        return _replace(self, waiting, job)

    def load(self) -> LoadView:
        return LoadView(self.servers, self.busy, len(self.queue))


class Batching:
    """An LLM serving up to ``max_batch`` requests at once, each at rate ``1/s(b)``."""

    def __init__(
        self,
        clock: Clock,
        *,
        name: str,
        max_batch: int,
        slowdown: float,
        discipline: Literal["fifo", "priority"] = "fifo",
        queue_limit: int | None = None,
        cancel: Literal["frees", "completes"] = "frees",
    ) -> None:
        self.clock = clock
        self.name = name
        self.max_batch = max_batch
        self.slowdown = slowdown
        self.queue_limit = queue_limit
        self.cancel_frees = cancel == "frees"
        self.queue = _Queue(discipline == "priority")
        self.active: list[Job] = []
        self.detached = 0
        self.free = list(range(max_batch - 1, -1, -1))
        self.usage = Usage()
        self._last_us = 0
        self._timer: Timer | None = None

    def rate(self, b: int) -> float:
        """Work (µs of solo service) each of b requests gets done per µs."""
        return 1.0 / (1.0 + self.slowdown * (b - 1)) if b else 0.0

    def _progress(self) -> None:
        """Charge every request in service for the time since the last change."""
        now = self.clock.now_us()
        self.usage.advance(now, len(self.active), len(self.queue), self.detached)
        dt = now - self._last_us
        if dt and self.active:
            r = self.rate(len(self.active))
            for job in self.active:
                job.remaining -= dt * r
        self._last_us = now

    def _reschedule(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.active:
            return
        r = self.rate(len(self.active))
        soonest = min(job.remaining for job in self.active)
        at = self.clock.now_us() + max(0, math.ceil(soonest / r - 1e-9))
        self._timer = self.clock.call_at_us(at, Priority.COMPLETION, self._tick)

    def _admit(self, job: Job) -> None:
        now = self.clock.now_us()
        job.server = self.free.pop()
        job.state = "running"
        job.started_us = now
        self.usage.wait_us += now - job.arrived_us
        self.active.append(job)
        if job.rec is not None:
            job.rec.emit("serve", arm=job.arm, resource=self.name, stage=job.stage, call=job.call, server=job.server)
        if job.on_start is not None:
            job.on_start()

    def submit(self, job: Job) -> None:
        self._progress()
        job.resource = self
        job.arrived_us = self.clock.now_us()
        job.remaining = float(job.work_us)
        if len(self.active) < self.max_batch:
            self.usage.jobs += 1
            self._admit(job)
            self._reschedule()
            return
        _queue_or_reject(self, job)

    def _tick(self) -> None:
        self._timer = None
        self._progress()
        now = self.clock.now_us()
        # Requests whose work is done (allowing for the µs rounding of the timer).
        done = [job for job in self.active if job.remaining <= 1e-6 * max(1.0, job.work_us)]
        if not done:  # rounding left a sliver: finish the nearest one
            done = [min(self.active, key=lambda j: j.remaining)]
        for job in done:
            self.active.remove(job)
            self.free.append(job.server)
        self.free.sort(reverse=True)
        finished = []
        for job in done:
            if job.state == "detached":
                self.detached -= 1
                continue
            job.state = "done"
            job.finished_us = now
            self.usage.completed += 1
            self.usage.sojourn_us += now - job.arrived_us
            if job.rec is not None:
                job.rec.emit("finish", arm=job.arm, resource=self.name, stage=job.stage, call=job.call, server=job.server)
            finished.append(job)
        while len(self.active) < self.max_batch and (nxt := self.queue.pop()) is not None:
            self._admit(nxt)
        self._reschedule()
        for job in finished:
            if job.on_done is not None:
                job.on_done()

    def cancel(self, job: Job) -> None:
        self._progress()
        if _withdraw(self, job, self.clock.now_us()):
            return
        if self.cancel_frees:
            job.state = "cancelled"
            self.active.remove(job)
            self.free.append(job.server)
            self.free.sort(reverse=True)
            while len(self.active) < self.max_batch and (nxt := self.queue.pop()) is not None:
                self._admit(nxt)
            self._reschedule()
        else:
            job.state = "detached"
            self.detached += 1

    def replace(self, waiting: Job, job: Job) -> bool:
        return _replace(self, waiting, job)

    def load(self) -> LoadView:
        return LoadView(self.max_batch, len(self.active), len(self.queue))


def _queue_or_reject(resource: Servers | Batching, job: Job) -> None:
    """A job that found no free capacity: rejected by a full bounded queue, else queued."""
    if resource.queue_limit is not None and len(resource.queue) >= resource.queue_limit:
        job.state = "rejected"
        resource.usage.rejected += 1
        if job.rec is not None:
            job.rec.emit("reject", arm=job.arm, resource=resource.name, stage=job.stage, call=job.call)
        if job.on_reject is not None:
            job.on_reject()
        return
    resource.usage.jobs += 1
    resource.usage.waited += 1
    job.state = "queued"
    resource.queue.push(job)
    if job.rec is not None:
        job.rec.emit("enqueue", arm=job.arm, resource=resource.name, stage=job.stage, call=job.call, queued=len(resource.queue))


def _account_withdrawal(resource: Servers | Batching, job: Job, now: int) -> None:
    resource.usage.cancelled += 1
    resource.usage.sojourn_us += now - job.arrived_us
    if job.rec is not None:
        job.rec.emit("withdraw", arm=job.arm, resource=resource.name, stage=job.stage, call=job.call, server=job.server)


def _withdraw(resource: Servers | Batching, job: Job, now: int) -> bool:
    """Account a cancelled job; True when it was only waiting (it just leaves the queue)."""
    _account_withdrawal(resource, job, now)
    if job.state == "queued":
        job.state = "cancelled"
        resource.queue.removed()
        return True
    return False


def _replace(resource: Servers | Batching, waiting: Job, job: Job) -> bool:
    """``job`` takes the queue place of ``waiting``, which is withdrawn (its caller
    hears nothing: it is being replaced)."""
    if waiting.resource is not resource or waiting.state != "queued":
        return False
    now = resource.clock.now_us()
    if isinstance(resource, Servers):
        resource._account()
    else:
        resource._progress()
    _account_withdrawal(resource, waiting, now)  # a queued job: server -1
    waiting.state = "cancelled"
    resource.queue.replace(waiting, job)
    resource.usage.jobs += 1
    resource.usage.waited += 1
    job.resource = resource
    job.arrived_us = now
    job.state = "queued"
    if job.rec is not None:
        job.rec.emit("enqueue", arm=job.arm, resource=resource.name, stage=job.stage, call=job.call, queued=len(resource.queue))
    return True


# --------------------------------------------------------------------------- configs


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class UnlimitedResourceConfig(_Config):
    """No capacity limit: every job starts at once."""

    kind: Literal["unlimited"] = "unlimited"

    def build(self, clock: Clock, name: str) -> Resource:
        return Unlimited(clock, name)


class ServersResourceConfig(_Config):
    """``servers`` identical servers and a queue."""

    kind: Literal["servers"] = "servers"
    servers: int = Field(ge=1)
    discipline: Literal["fifo", "priority"] = "fifo"
    queue_limit: int | None = Field(default=None, ge=0)
    cancel: Literal["frees", "completes"] = "frees"

    def build(self, clock: Clock, name: str) -> Resource:
        return Servers(
            clock, name=name, servers=self.servers, discipline=self.discipline, queue_limit=self.queue_limit, cancel=self.cancel
        )


class BatchingResourceConfig(_Config):
    """An LLM with continuous batching: s(b) = 1 + slowdown·(b − 1)."""

    kind: Literal["batching"] = "batching"
    max_batch: int = Field(ge=1)
    slowdown: float = Field(default=0.048, ge=0, allow_inf_nan=False)
    """Per-token time at batch b is s(b) = 1 + slowdown·(b − 1); 0.048 gives s(64) = 4, the
    latency factor Databricks measured at batch 64 on an A100 (calibration source ``batching``)."""
    discipline: Literal["fifo", "priority"] = "fifo"
    queue_limit: int | None = Field(default=None, ge=0)
    cancel: Literal["frees", "completes"] = "frees"

    def build(self, clock: Clock, name: str) -> Resource:
        return Batching(
            clock, name=name, max_batch=self.max_batch, slowdown=self.slowdown, discipline=self.discipline,
            queue_limit=self.queue_limit, cancel=self.cancel,
        )  # fmt: skip


ResourceConfig = Annotated[
    UnlimitedResourceConfig | ServersResourceConfig | BatchingResourceConfig,
    Field(discriminator="kind"),
]
"""One resource, chosen by ``kind``."""


def resource_report(resource: Resource, end_us: int) -> dict[str, Any] | None:
    """A finite resource's report (utilization, queue, waits, Little's law); None if unlimited."""
    usage = getattr(resource, "usage", None)
    if usage is None:
        return None
    if isinstance(resource, Servers):
        resource._account()
        return usage.report(resource.servers, end_us)
    if isinstance(resource, Batching):
        resource._progress()
        return usage.report(resource.max_batch, end_us)
    return None
